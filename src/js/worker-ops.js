// The worker protocol, declared once. WorkerModel and WorkerSeq2Seq (worker-client.js) get
// one method per operation of their kind from this table, and the worker (worker-host.js)
// answers each by calling the method of the same name on the object the row names:
//   on        'main' (default): the host's Model (WorkerModel) or Seq2Seq (WorkerSeq2Seq);
//             'model': the Model under either; 'tokenizer': the model's tokenizer
//   opts      the index of the options argument, for a row with either of:
//   signal    the call takes opts.signal: aborting it stops the work in the worker
//   events    the names of the callback options (onProgress, onToken, onWarning) whose
//             calls come back as messages; with `stream`, the method is an async iterator
//             of the first one's first argument (generate), whose calls the worker
//             gathers: one message per 16 ms at most, the pieces joined with the latest
//             count (worker-host.js, STREAM_GATHER_MS). A callback that throws stops
//             the call: the worker is told to abort it, and the call rejects with that error
//   busy      what the model is busy with while the call runs (Model.busy's word): the
//             client's `busy` says it while such a call is pending
//
// Messages, both directions plain structured-clone objects:
//   client -> worker  {id, op, args}          one call; op 'start' and 'replace' make and
//                                             swap the model; {op: 'abort', target} cancels one
//   worker -> client  {id, kind: 'event', name, args}   callback `name`'s arguments
//                     {id, kind: 'done', value, info}  the result and Model.info() after it
//                     {id, kind: 'error', error, info}  why it failed, and Model.info() after it
// Calls run as they arrive, as on a Model in the main thread: a second call while one runs
// fails with WF_ERR_BUSY from the Model itself.

/** What both kinds have, on the Model. */
const COMMON = {
  info: { on: 'model' },
  memory: { on: 'model' },
  tensors: { on: 'model' },
  getTensor: { on: 'model' },
  setTensor: { on: 'model' },
  setOptimizer: { on: 'model' },
  setMetadata: { on: 'model' },
  save: { on: 'model' },
};

/** Fine-tuning, on the Model (WorkerModel only). */
const FINETUNE = {
  trainOnly: {}, freeze: {}, unfreeze: {}, trainable: {}, addLora: {}, mergeLora: {}, removeLora: {}, exportPeft: {},
  importPeft: {},
};

export const WORKER_OPS = {
  model: {
    ...COMMON,
    ...FINETUNE,
    train: { opts: 1, signal: true, events: ['onProgress', 'onWarning'], busy: 'training' },
    startRun: { opts: 1, events: ['onWarning'] },
    continueRun: { opts: 0, signal: true, events: ['onProgress'], busy: 'training' },
    endRun: {},
    evaluate: { opts: 1, signal: true, events: ['onWarning'], busy: 'evaluation' },
    generate: { opts: 1, signal: true, events: ['onToken', 'onWarning'], stream: true, busy: 'generation' },
    selfAttention: {},
    trainStep: {},
    forward: {},
    encode: { on: 'tokenizer' },
    decode: { on: 'tokenizer' },
  },
  seq2seq: {
    ...COMMON,
    train: { opts: 1, signal: true, events: ['onProgress'], busy: 'training' },
    evaluate: { opts: 1, signal: true, busy: 'evaluation' },
    decodeIds: { opts: 1, signal: true, busy: 'decoding' },
    translate: { opts: 1, signal: true, busy: 'decoding' },
    accuracy: { opts: 1, signal: true, busy: 'decoding' },
    crossAttention: {},
    trainStep: {},
    forward: {},
  },
};
