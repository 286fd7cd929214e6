// WorkerModel and WorkerSeq2Seq: the Model and Seq2Seq APIs with the model living in a Web
// Worker (or a Node worker thread), so training never blocks the page. Every method is
// async; results, progress and generated pieces come back as messages (protocol in
// worker-host.js). Saved bytes move between the threads as transferred buffers, not copies.
import { WfError, abortError } from './runtime.js';

function rebuildError(e) {
  if (e.name === 'AbortError') return new DOMException(e.message, 'AbortError');
  if (e.code) return new WfError(e.code, e.message);
  return new WfError('WF_ERR_WORKER', e.message);
}

/** What both worker-backed kinds share: the calls, the snapshot, checkpoints, tensors. */
class WorkerHandle {
  /** @internal use createWorkerModel / createWorkerSeq2Seq / loadWorker* */
  constructor(port) {
    this.port = port;
    this.calls = new Map(); // id -> {resolve, reject, onMessage}
    this.nextId = 1;
    this.disposed = false;
    this.failure = null; // why the worker failed, once it has
    this.snapshot = null;
    port.listen((msg) => {
      const call = this.calls.get(msg.id);
      if (!call) return;
      if (msg.kind === 'progress' || msg.kind === 'piece') {
        call.onMessage?.(msg);
        return;
      }
      this.calls.delete(msg.id);
      if (this.calls.size === 0) port.unref?.();
      if (msg.kind === 'done') call.resolve(msg.value);
      else call.reject(rebuildError(msg.error));
    });
    port.onError((e) => {
      if (this.disposed || this.failure) return;
      // a worker that failed is ended: its calls, and every later one, reject with why
      this.failure = `the model's worker failed: ${e?.message ?? e}`;
      this.fail(new WfError('WF_ERR_WORKER', this.failure));
      port.terminate();
    });
  }

  /** @internal starts a worker-side model with op 'create', 'createSeq2Seq' or 'load' */
  static async start(port, op, args, transfer = []) {
    const wm = new this(port);
    try {
      wm.snapshot = await wm.request(op, args, { transfer });
    } catch (e) {
      wm.dispose();
      throw e;
    }
    return wm;
  }

  fail(error) {
    for (const call of this.calls.values()) call.reject(error);
    this.calls.clear();
  }

  /** @internal posts one call; resolves with its result */
  request(op, args = [], { transfer = [], onMessage, signal } = {}) {
    if (this.disposed) return Promise.reject(new WfError('WF_ERR_DISPOSED', 'this model has been disposed'));
    if (this.failure) return Promise.reject(new WfError('WF_ERR_WORKER', this.failure));
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const id = this.nextId++;
    const done = new Promise((resolve, reject) => this.calls.set(id, { resolve, reject, onMessage }));
    done.id = id;
    this.port.ref?.();
    this.port.post({ id, op, args }, transfer);
    if (signal) {
      // the worker stops at its next step and answers with an AbortError
      const onAbort = () => { if (!this.disposed) this.port.post({ op: 'abort', target: id }); };
      signal.addEventListener('abort', onAbort, { once: true });
      done.then(() => signal.removeEventListener('abort', onAbort), () => signal.removeEventListener('abort', onAbort));
    }
    return done;
  }

  /** The config when the model was created or loaded (strings and booleans). */
  get config() { return this.live().config; }
  /** Number of weights. */
  get paramCount() { return this.live().paramCount; }
  /** Optimizer steps taken, as of the last call that returned (or progress report). */
  get step() { return this.live().step; }

  live() {
    if (this.disposed) throw new WfError('WF_ERR_DISPOSED', 'this model has been disposed');
    return this.snapshot;
  }

  /** Everything about the model, read now in the worker (see Model.info). */
  async info() {
    this.snapshot = await this.request('info');
    return this.snapshot;
  }

  /** The parameter tensors: [{name, shape, size, offset, decay}]. */
  tensors() { return this.request('tensors'); }
  /** A copy of one parameter tensor's weights (Float32Array). */
  getTensor(name) { return this.request('getTensor', [name]); }
  /** Overwrites one parameter tensor's weights. */
  setTensor(name, values) { return this.request('setTensor', [name, values]); }
  /** Changes some optimizer settings; resolves to all of them. */
  setOptimizer(settings) { return this.request('setOptimizer', [settings]); }

  /** A checkpoint of the model (Uint8Array, see saveModel), moved out of the worker
   * without a copy. */
  save(opts = {}) { return this.request('save', [opts]); }

  /** Replaces the model with a checkpoint's of the same kind, in place (unchanged on
   * failure). The bytes are copied once, then transferred. */
  async load(bytes) {
    const copy = bytes instanceof ArrayBuffer ? new Uint8Array(bytes.slice(0)) : new Uint8Array(bytes);
    this.snapshot = await this.request('loadInto', [copy, this.kind], { transfer: [copy.buffer] });
  }

  /** Ends the worker and frees all its memory. Pending calls reject with WF_ERR_DISPOSED. */
  dispose() {
    if (this.disposed) return;
    this.disposed = true;
    this.fail(new WfError('WF_ERR_DISPOSED', 'this model has been disposed'));
    this.port.terminate();
  }
}

/** A decoder (GPT) in a worker: the Model API, every method async. */
export class WorkerModel extends WorkerHandle {
  get kind() { return 'model'; }

  /** Trains in the worker; same options and summary as Model.train. */
  async train(data, opts = {}) {
    const { signal, onProgress, ...rest } = opts;
    const { summary, info } = await this.request('train', [data, { ...rest, progress: !!onProgress }], {
      signal,
      onMessage: (msg) => {
        this.snapshot = { ...this.snapshot, step: msg.value.step };
        onProgress?.(msg.value);
      },
    });
    this.snapshot = info;
    return summary;
  }

  /** Mean loss and perplexity on text, computed in the worker (see Model.evaluate). */
  evaluate(data, opts = {}) {
    const { signal, ...rest } = opts;
    return this.request('evaluate', [data, rest], { signal });
  }

  /** Streams generated text from the worker; same options as Model.generate. */
  async *generate(prompt = '', opts = {}) {
    const { signal, onToken, ...rest } = opts;
    const queue = [];
    let wake = null, finished = false, failure = null;
    const done = this.request('generate', [prompt, rest], {
      signal,
      onMessage: (msg) => {
        onToken?.(msg.value, msg.tokens);
        queue.push(msg.value);
        wake?.();
      },
    });
    done.then(() => { finished = true; wake?.(); }, (e) => { finished = true; failure = e; wake?.(); });
    try {
      for (;;) {
        if (queue.length) { yield queue.shift(); continue; }
        if (finished) break;
        await new Promise((resolve) => { wake = resolve; });
        wake = null;
      }
      if (failure) throw failure;
    } finally {
      if (!finished) {
        // the consumer stopped early: stop the worker too, and wait so the next call finds it idle
        if (!this.disposed) this.port.post({ op: 'abort', target: done.id });
        await done.catch(() => {});
      }
    }
  }

  /** Generates and returns the whole text. Same options as generate. */
  async generateText(prompt = '', opts = {}) {
    let text = '';
    for await (const piece of this.generate(prompt, opts)) text += piece;
    return text;
  }

  /** Token ids of text with the model's tokenizer (Int32Array). */
  encode(text) { return this.request('encode', [text]); }
  /** Text of token ids with the model's tokenizer. */
  decode(ids) { return this.request('decode', [ids]); }

  /** Every layer's self-attention map of a text, computed in the worker (see
   * Model.selfAttention); the maps move out without a copy. */
  selfAttention(data) { return this.request('selfAttention', [data]); }
}

/** An encoder-decoder in a worker: the Seq2Seq API, every method async. */
export class WorkerSeq2Seq extends WorkerHandle {
  get kind() { return 'seq2seq'; }

  /** Trains on [source, target] pairs in the worker; same options and result as
   * Seq2Seq.train, onProgress called in this thread. */
  async train(pairs, opts = {}) {
    const { signal, onProgress, ...rest } = opts;
    const { result, info } = await this.request('trainPairs', [pairs, { ...rest, progress: !!onProgress }], {
      signal,
      onMessage: (msg) => {
        this.snapshot = { ...this.snapshot, step: msg.value.step };
        onProgress?.(msg.value);
      },
    });
    this.snapshot = info;
    return result;
  }

  /** Mean cross-entropy per target token over pairs (see Seq2Seq.evaluate). */
  evaluate(pairs, opts = {}) { return this.request('evaluatePairs', [pairs, opts]); }
  /** Decodes one source to ids (see Seq2Seq.decodeIds). */
  decodeIds(source, opts = {}) { return this.request('decodeIds', [source, opts]); }
  /** Decodes a string to a string (see Seq2Seq.translate). */
  translate(text, opts = {}) { return this.request('translate', [text, opts]); }
  /** Exact-match accuracy over pairs, in [0, 1] (see Seq2Seq.accuracy). */
  accuracy(pairs, opts = {}) { return this.request('accuracy', [pairs, opts]); }
  /** Cross-attention maps of an output over its source (see Seq2Seq.crossAttention). */
  crossAttention(source, output) { return this.request('crossAttention', [source, output]); }
}
