// WorkerModel and WorkerSeq2Seq: the Model and Seq2Seq APIs with the model living in a Web
// Worker (or a Node worker thread), so training never blocks the page. Every method is
// async; results, progress and generated pieces come back as messages. The methods come
// from the table of operations (worker-ops.js, which also states the protocol); this file
// adds what is not one call: starting, replacing and ending the model, and the snapshot.
// Saved bytes move between the threads as transferred buffers, not copies.
import { DISPOSE, WfError, abortError } from './errors.js';
import { WORKER_OPS } from './worker-ops.js';

function rebuildError(e) {
  if (e.name === 'AbortError') return new DOMException(e.message, 'AbortError');
  if (e.code) return Object.assign(new WfError(e.code, e.message), e.facts ? { facts: e.facts } : {}); // a divergence's facts
  return new WfError('WF_ERR_WORKER', e.message);
}

let portOf; // WorkerHandle's own, for workerPort

/** @internal The port of a worker-backed model (tests end its thread through it). */
export function workerPort(wm) { return portOf(wm); }

/** What both worker-backed kinds share: the calls, the snapshot, checkpoints. */
class WorkerHandle {
  #port;
  #calls = new Map(); // id -> {resolve, reject, onEvent, thrown}
  #nextId = 1;
  #disposed = false;
  #failure = null; // why the worker failed, once it has
  #snapshot = null;
  #busy = new Map(); // call id -> what a pending long call keeps the model busy with

  static {
    portOf = (wm) => wm.#port;
  }

  /** @internal use createWorkerModel / createWorkerSeq2Seq / loadWorker* */
  constructor(port) {
    this.#port = port;
    port.listen((msg) => {
      const call = this.#calls.get(msg.id);
      if (!call) return;
      if (msg.kind === 'event') {
        if (call.thrown) return;
        try {
          call.onEvent?.(msg.name, msg.args);
        } catch (e) {
          // the caller's callback threw: the call stops and rejects with that error
          call.thrown = { error: e };
          this.#abort(msg.id);
        }
        return;
      }
      this.#calls.delete(msg.id);
      this.#busy.delete(msg.id);
      if (this.#calls.size === 0) port.unref?.();
      if (msg.info) this.#snapshot = msg.info;
      if (call.thrown) call.reject(call.thrown.error);
      else if (msg.kind === 'done') call.resolve(msg.value);
      else if (msg.error.name === 'AbortError' && call.signal?.aborted) call.reject(abortError(call.signal)); // the caller's reason
      else call.reject(rebuildError(msg.error));
    });
    port.onError((e) => {
      if (this.#disposed || this.#failure) return;
      // a worker that failed is ended: its calls, and every later one, reject with why
      this.#failure = `the model's worker failed: ${e?.message ?? e}`;
      this.#fail(new WfError('WF_ERR_WORKER', this.#failure));
      port.terminate();
    });
  }

  /** @internal starts a worker-side model: how is 'create', 'createSeq2Seq', 'load' or 'safetensors' (see
   * worker-host.js) */
  static async start(port, how, args, transfer = [], { onProgress, signal } = {}) {
    const wm = new this(port);
    try {
      const onEvent = onProgress && ((name, a) => name === 'onProgress' && onProgress(...a)); // a load's progress
      await wm.#request('start', [how, ...args], { transfer, onEvent, signal });
    } catch (e) {
      wm.dispose();
      throw e;
    }
    return wm;
  }

  /** @internal gives cls one method per operation of ops (worker-ops.js) */
  static defineOps(cls, ops) {
    for (const [op, spec] of Object.entries(ops)) {
      Object.defineProperty(cls.prototype, op, {
        value: spec.stream ? function (...args) { return this.#stream(op, spec, args); } : function (...args) { return this.#call(op, spec, args); },
        writable: true, configurable: true,
      });
    }
  }

  #fail(error) {
    for (const call of this.#calls.values()) call.reject(error);
    this.#calls.clear();
    this.#busy.clear();
  }

  /** Posts one call; resolves with its result. `busy`: what the model is busy with while it runs. */
  #request(op, args = [], { transfer = [], onEvent, signal, busy } = {}) {
    if (this.#disposed) return Promise.reject(new WfError('WF_ERR_DISPOSED', 'this model has been disposed'));
    if (this.#failure) return Promise.reject(new WfError('WF_ERR_WORKER', this.#failure));
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const id = this.#nextId++;
    const done = new Promise((resolve, reject) => this.#calls.set(id, { resolve, reject, onEvent, signal }));
    done.id = id;
    if (busy) this.#busy.set(id, busy);
    this.#port.ref?.();
    this.#port.post({ id, op, args }, transfer);
    if (signal) {
      // the worker stops at its next step and answers with an AbortError
      const onAbort = () => this.#abort(id);
      signal.addEventListener('abort', onAbort, { once: true });
      done.then(() => signal.removeEventListener('abort', onAbort), () => signal.removeEventListener('abort', onAbort));
    }
    return done;
  }

  #abort(id) {
    if (!this.#disposed) this.#port.post({ op: 'abort', target: id });
  }

  /** The arguments as they cross: the options' signal kept here, each event callback
   * replaced by `true` (the worker sends its calls back); callbacks: name -> function. */
  #crossing(spec, args) {
    args = [...args];
    let signal;
    const callbacks = {};
    if (spec.opts !== undefined) {
      const given = args[spec.opts] ?? {};
      if (typeof given !== 'object') return { args, signal, callbacks }; // the worker's method says what is wrong
      const opts = { ...given };
      if (spec.signal) {
        signal = opts.signal;
        delete opts.signal;
      }
      for (const [i, name] of (spec.events ?? []).entries()) {
        if (typeof opts[name] === 'function') callbacks[name] = opts[name];
        if (opts[name] === undefined && !(spec.stream && i === 0)) continue;
        opts[name] = typeof opts[name] === 'function' || opts[name] === undefined ? true : opts[name];
      }
      args[spec.opts] = opts;
    }
    return { args, signal, callbacks };
  }

  /** One operation of the table that resolves to a value. */
  #call(op, spec, args) {
    const { args: wire, signal, callbacks } = this.#crossing(spec, args);
    return this.#request(op, wire, {
      signal,
      busy: spec.busy,
      onEvent: (name, a) => {
        if (name === 'onProgress') this.#snapshot = { ...this.#snapshot, step: a[0].step };
        callbacks[name]?.(...a);
      },
    });
  }

  /** One operation of the table that streams: an async iterator of its events' first
   * argument. Leaving the loop early stops the worker too. */
  async* #stream(op, spec, args) {
    const { args: wire, signal, callbacks } = this.#crossing(spec, args);
    const queue = [];
    let wake = null, finished = false, failure = null;
    const done = this.#request(op, wire, {
      signal,
      busy: spec.busy,
      onEvent: (name, a) => {
        callbacks[name]?.(...a);
        if (name === spec.events[0]) queue.push(a[0]);
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
        this.#abort(done.id);
        await done.catch(() => {});
      }
    }
  }

  /** The last Model.info() the worker sent: refreshed after each call and by progress. */
  get snapshot() { return this.#live(); }
  /** The config when the model was created or loaded (strings and booleans). */
  get config() { return this.#live().config; }
  /** Number of weights. */
  get paramCount() { return this.#live().paramCount; }
  /** Optimizer steps taken, as of the last call that returned (or progress report). */
  get step() { return this.#live().step; }
  /** The learning rate of the next step, as of the last call that returned. */
  get lr() { return this.#live().lr; }
  /** The optimizer settings, as of the last call that returned. */
  get optimizer() { return this.#live().optimizer; }
  /** The model's tokenizer as {kind, vocabSize}, or null: the Tokenizer itself stays in the
   * worker (encode and decode reach it). */
  get tokenizer() { return this.#live().tokenizer; }
  /** The metadata saved with the model, as of the last call that returned. */
  get metadata() { return this.#live().metadata; }
  /** The LoRA adapters' settings ({rank, alpha, targets}) or null, as of the last call that returned. */
  get lora() { return this.#live().lora; }
  /** The batch size train() and evaluate() use unless told otherwise. */
  get defaultBatchSize() { return this.#live().defaultBatchSize; }
  /** How createWorkerModel('auto', {text, seconds}) chose the preset (Model.autoChoice), or null. */
  get autoChoice() { return this.#live().autoChoice; }
  /** The model's training run (Model.run), as of the last call that returned. */
  get run() { return this.#live().run; }
  /** How the linears' and embeddings' weights are stored (Model.quantization), as of the last call that returned. */
  get quantization() { return this.#live().quantization; }
  /** What the model is busy with as far as this thread knows: the kind of the first long call
   * still pending ('training', 'evaluation', 'generation', 'decoding'), or null. */
  get busy() {
    this.#live();
    return this.#busy.values().next().value ?? null;
  }

  #live() {
    if (this.#disposed) throw new WfError('WF_ERR_DISPOSED', 'this model has been disposed');
    return this.#snapshot;
  }

  /** Replaces the model with a checkpoint's of the same kind, in place (unchanged on
   * failure). The bytes are copied once, then transferred. */
  async load(bytes) {
    const copy = bytes instanceof ArrayBuffer ? new Uint8Array(bytes.slice(0)) : new Uint8Array(bytes);
    await this.#request('replace', [copy], { transfer: [copy.buffer] });
  }

  /** Ends the worker and frees all its memory. Pending calls reject with WF_ERR_DISPOSED. */
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#fail(new WfError('WF_ERR_DISPOSED', 'this model has been disposed'));
    this.#port.terminate();
  }

  [DISPOSE]() { this.dispose(); }
}

/** A decoder (GPT) in a worker: the Model API, every method async. */
export class WorkerModel extends WorkerHandle {
  /** Generates and returns the whole text. Same options as generate. */
  async generateText(prompt = '', opts = {}) {
    let text = '';
    for await (const piece of this.generate(prompt, opts)) text += piece;
    return text;
  }
}

/** An encoder-decoder in a worker: the Seq2Seq API, every method async. */
export class WorkerSeq2Seq extends WorkerHandle {}

WorkerHandle.defineOps(WorkerModel, WORKER_OPS.model);
WorkerHandle.defineOps(WorkerSeq2Seq, WORKER_OPS.seq2seq);
