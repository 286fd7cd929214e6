// One model handle (wf_model) and what hangs off it: its runtime, its tokenizer, what it is
// busy with, whether it holds optimizer state. Model, Encoder and Seq2Seq are views of one;
// the training loop and generation work on one. Not exported by the package: its fields
// are the package's own.
import { WfError, throwIfAborted } from './errors.js';
import { PIECE, concat, openSource } from './source.js';
import { OPTIM_FIELDS, RUN_DEFAULTS, fromNative } from './config.js';
import { checkKeys, float32Plain, show } from './options.js';
import { HeapBatch } from './batch.js';
import { MEMORY_LIMIT, QUANT, asBytes, int32Ids } from './runtime.js';
import { STRUCTS, roundTrip } from './structs.js';
import { CONSTANTS } from './config-table.js';
import { Tokenizer, tokenizerHandle } from './tokenizer.js';
import { selectSlices, targetBits, targetNames, trainableCount } from './finetune.js';

/** wf_origin's values by number, in the package's words: WF_ORIGIN_SAFETENSORS -> 'safetensors'. */
const ORIGINS = Object.fromEntries(Object.entries(CONSTANTS).filter(([k]) => k.startsWith('WF_ORIGIN_'))
  .map(([k, v]) => [v, k.slice('WF_ORIGIN_'.length).toLowerCase()]));

const OPTIM_KEYS = new Set(OPTIM_FIELDS.map((f) => f.name));
const SAVE_KEYS = ['optimizer', 'format'];

/** Optimizer settings as the package shows them: float32 values as their shortest decimal. */
function plainOptim(o) {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, float32Plain(v)]));
}

/** The deepest nesting of metadata (arrays and objects inside each other) a model keeps:
 * far beyond any record an application writes, and far below what the engines' recursive
 * structured clone and JSON.stringify can walk. */
export const METADATA_DEPTH = 64;

/** The deepest nesting of arrays and objects in JSON text (brackets outside strings),
 * counted without building anything. */
function jsonDepth(text) {
  let depth = 0, deepest = 0, inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/** value as the JSON text setMetadata saves; WF_ERR_ARG for what JSON cannot hold (a
 * function or undefined at the top, a cycle, a BigInt) or nests deeper than METADATA_DEPTH.
 * The depth is walked first, without recursion, so a 200,000-deep array is refused by name
 * rather than by a stack overflow inside JSON.stringify. */
function metadataJson(value) {
  const path = new Set(); // the objects from the top down to the one being walked
  const walk = [{ v: value, depth: 1 }];
  while (walk.length) {
    const { v, depth, leave } = walk.pop();
    if (leave) { path.delete(v); continue; }
    if (typeof v === 'bigint') throw new WfError('WF_ERR_ARG', `metadata must be a JSON value: it holds a BigInt (${v}n), which JSON has no form for`);
    if (v === null || typeof v !== 'object' || typeof v.toJSON === 'function') continue;
    if (path.has(v)) throw new WfError('WF_ERR_ARG', 'metadata must be a JSON value: it contains a cycle (an object inside itself)');
    if (depth > METADATA_DEPTH) throw new WfError('WF_ERR_ARG', `metadata nests arrays and objects more than ${METADATA_DEPTH} levels deep`);
    path.add(v);
    walk.push({ v, leave: true });
    for (const k of Object.keys(v)) walk.push({ v: v[k], depth: depth + 1 });
  }
  let text;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    throw new WfError('WF_ERR_ARG', `metadata must be a JSON value: ${e.message}`);
  }
  if (text === undefined) throw new WfError('WF_ERR_ARG', 'metadata must be a JSON value (an object, array, string, number or boolean)');
  return text;
}

/** Why a run diverged (wf_run_facts.diverged), in the package's words. */
const DIVERGED = [null, 'loss', 'gradNorm', 'update', 'bound', 'spike'];

/** A run's facts (wf_run_facts) as the package shows them: what it has done, how long it
 * lasts (steps or seconds; null: not that way), its settings, and why it stopped. */
export function runInfo(f) {
  if (!f) return null;
  const r = f.run;
  return {
    steps: f.steps, seconds: f.seconds, lastSteps: r.steps || null, lastSeconds: r.seconds ? float32Plain(r.seconds) : null,
    finished: f.finished === 1, loss: f.steps ? f.loss : null, lr: f.steps ? float32Plain(f.lr) : null,
    valStep: f.valStep || null, valLoss: f.valStep ? f.valLoss : null,
    diverged: DIVERGED[f.diverged] ?? null, refused: f.refused === 1, at: f.diverged ? f.at : null, backup: f.backup >= 0 ? f.backup : null,
    batchSize: r.batchSize, context: r.context, valFraction: float32Plain(r.valFraction), evalInterval: r.evalInterval,
    evalMode: r.evalBatches === 0 ? 'windows' : 'sample', evalBatches: r.evalBatches,
  };
}

export class ModelHandle {
  /** The held-out text's characters and the tokens a whole-split validation scores, for its
   * bits per character: {chars, counted}, set by startRun; null without. */
  runText = null;

  /**
   * @param {import('./runtime.js').Runtime} rt
   * @param {number} h a wf_model with a model in it, owned from here on
   * @param {Tokenizer|null} tokenizer owned from here on
   */
  constructor(rt, h, tokenizer, { batchSize, weightsOnly = false } = {}) {
    this.rt = rt;
    this.h = h;
    this.tokenizer = tokenizer ?? null;
    this.busy = null; // what runs: 'training', 'evaluation', 'generation', 'decoding', or null
    this.betweenSteps = false; // inside a training call's onProgress: save() and setMetadata() may run
    this.weightsOnly = weightsOnly; // loaded without optimizer state (see info())
    this.autoChoice = null; // createModel('auto', ...)'s choice (auto.js resolveAuto)
    // the batch size of its preset (createModel), else its run's (a file keeps its run), else the default
    this.batchSize = batchSize ?? rt.runFacts(h)?.run.batchSize ?? RUN_DEFAULTS.batchSize;
  }

  /** The handle, or a WF_ERR_DISPOSED. */
  live() {
    if (!this.h) throw new WfError('WF_ERR_DISPOSED', 'this model has been disposed');
    return this.h;
  }

  /** The handle, or a WF_ERR_DISPOSED or WF_ERR_BUSY. */
  idle() {
    this.live();
    if (this.busy) throw new WfError('WF_ERR_BUSY', `the model is busy with ${this.busy}; wait for it or abort it first`);
    return this.h;
  }

  /** The handle for save() and setMetadata(): idle(), or a training call paused between two
   * steps for its onProgress callback (the state is then that step's: a checkpoint). */
  idleOrBetweenSteps() {
    return this.betweenSteps ? this.live() : this.idle();
  }

  /** Runs the async fn() with the model marked busy with `what` (the caller checked idle()). */
  async busyWith(what, fn) {
    this.busy = what;
    try {
      return await fn();
    } finally {
      if (this.h) this.busy = null;
    }
  }

  // ---- state ----

  /** The config in the C struct's numeric form. */
  get native() { return this.rt.modelConfig(this.live()); }
  /** The config in JavaScript form (strings and booleans). */
  get config() { return fromNative(this.native); }
  get paramCount() { return this.rt.modelInfo(this.live()).memory.count; }
  get step() { return this.rt.modelInfo(this.live()).step; }
  get lr() { return float32Plain(this.rt.modelInfo(this.live()).lr); }
  get optimizer() { return plainOptim(this.rt.modelGetOptim(this.live())); }
  memory() { return this.rt.modelInfo(this.live()).memory; }

  /** Changes the optimizer settings given; the rest stay. Returns all of them. */
  setOptimizer(settings) {
    checkKeys(settings, OPTIM_KEYS, 'the optimizer settings');
    const next = { ...this.optimizer, ...settings };
    this.rt.modelSetOptim(this.live(), next);
    return plainOptim(roundTrip(STRUCTS.optim, next)); // what the core now holds, without another call that could fail
  }

  /** The metadata saved with the model (any JSON value nested at most METADATA_DEPTH
   * levels), or null. */
  get metadata() {
    const bytes = this.rt.modelGetNote(this.live());
    if (bytes.length === 0) return null;
    const text = new TextDecoder().decode(bytes);
    // JSON.parse would build a value of any depth, which structured clone (a worker's
    // reply) and JSON.stringify then overflow the stack on: a note nested deeper than
    // setMetadata allows was not written by it, so it is not read
    if (jsonDepth(text) > METADATA_DEPTH) return null;
    try {
      return JSON.parse(text);
    } catch {
      return null; // a note some other program wrote, not JSON: not ours to read
    }
  }

  /** Replaces the metadata (a JSON-serialisable value nested at most METADATA_DEPTH levels;
   * null: none). Anything else is a WF_ERR_ARG and changes nothing. */
  setMetadata(value) {
    const h = this.live();
    const text = value === null || value === undefined ? '' : metadataJson(value);
    const bytes = new TextEncoder().encode(text);
    if (bytes.length > CONSTANTS.WF_NOTE_MAX) throw new WfError('WF_ERR_ARG', `metadata is ${bytes.length} bytes as JSON; at most ${CONSTANTS.WF_NOTE_MAX} are saved with a model`);
    this.rt.modelSetNote(h, bytes);
  }

  /** Everything about the model in one plain object (Model.info). */
  info() {
    const tok = this.tokenizer, { memory, step, lr, threads, origin } = this.rt.modelInfo(this.live());
    return {
      config: this.config, paramCount: memory.count, step, lr: float32Plain(lr), origin: ORIGINS[origin],
      optimizer: this.optimizer, optimizerState: !this.weightsOnly || step > 0, memory,
      tokenizer: tok ? { kind: tok.kind, vocabSize: tok.vocabSize } : null, busy: this.busy,
      threads, simd: this.rt.simd ?? 'simd128', metadata: this.metadata,
      trainable: this.trainable().trainable, lora: this.lora, defaultBatchSize: this.batchSize, run: this.run,
      quantization: this.quantization, autoChoice: this.autoChoice,
    };
  }

  /** The model's training run (runInfo), or null. */
  get run() { return runInfo(this.rt.runFacts(this.live())); }

  /** How the linears' and embeddings' weights are stored: 'f32', 'q8_0', 'q4_0', or 'mixed'
   * (a GGUF file may mix them). */
  get quantization() {
    const types = new Set(this.tensors().filter((t) => t.dtype !== 'f32').map((t) => t.dtype));
    return types.size === 0 ? 'f32' : types.size === 1 ? [...types][0] : 'mixed';
  }

  /** The linears and token embeddings to `type` ('q8_0', 'q4_0', or 'f32': back, exactly). */
  quantize(type) {
    const h = this.idle(), at = QUANT.indexOf(type);
    if (at < 0) throw new WfError('WF_ERR_ARG', `quantize takes 'q8_0', 'q4_0' or 'f32', not ${show(type)}`);
    this.rt.modelQuantize(h, at);
  }

  // ---- fine-tuning: the trainable mask and LoRA ----

  /** The trainable mask's length and the tensor rows it covers. */
  #slices() {
    const tensors = this.tensors();
    return { tensors, n: tensors.reduce((n, t) => Math.max(n, t.slice0 + t.layers), 0) };
  }

  /** Which parameters train: {trainable, total, tensors: {name: true (every slice) or the
   * layers that train}} (frozen tensors left out). */
  trainable() {
    const { tensors, n } = this.#slices(), mask = this.rt.modelTrainable(this.live(), null, n);
    const out = { ...trainableCount(tensors, mask), tensors: {} };
    for (const t of tensors) {
      const on = [];
      for (let l = 0; l < t.layers; l++) if (mask[t.slice0 + l]) on.push(l);
      if (on.length) out.tensors[t.name] = on.length === t.layers ? true : on;
    }
    return out;
  }

  /** Trains exactly what spec selects ('only'), or freezes or unfreezes it besides the rest
   * (finetune.js: selectSlices); returns trainable(). */
  setTrainable(spec, mode) {
    const h = this.idle(), { tensors, n } = this.#slices();
    const sel = selectSlices(spec, tensors, n, this.native.tiedHead === 1);
    const cur = this.rt.modelTrainable(h, null, n);
    const next = sel.map((x, k) => (mode === 'only' ? x : mode === 'freeze' ? cur[k] & (1 - x) : cur[k] | x));
    this.rt.modelTrainable(h, next, n);
    return this.trainable();
  }

  /** The model's LoRA settings ({rank, alpha, targets}), or null without adapters. */
  get lora() {
    const c = this.native;
    return c.loraRank ? { rank: c.loraRank, alpha: float32Plain(c.loraAlpha), targets: targetNames(c.loraTargets) } : null;
  }

  /** Adds LoRA adapters (rank 8, alpha 2 * rank, every linear the model has by default). */
  addLora(opts = {}) {
    checkKeys(opts, ['rank', 'alpha', 'targets'], 'addLora() options');
    const h = this.idle(), native = this.native;
    if (native.loraRank) {
      throw new WfError('WF_ERR_STATE', `the model has LoRA adapters already (rank ${native.loraRank}): mergeLora() or removeLora() first`);
    }
    const rank = opts.rank ?? 8;
    if (!Number.isInteger(rank) || rank < 1) throw new WfError('WF_ERR_ARG', `rank must be an integer >= 1, not ${show(rank)}`);
    const targets = targetBits(opts.targets ?? 'all', native.activation === 2);
    this.rt.modelSetConfig(h, { ...native, loraRank: rank, loraAlpha: opts.alpha ?? 2 * rank, loraTargets: targets }, false);
    return this.lora;
  }

  /** Drops the adapters: merged into their weights first (merge), or discarded. */
  dropLora(merge) {
    const h = this.idle(), native = this.native;
    if (!native.loraRank) throw new WfError('WF_ERR_STATE', 'the model has no LoRA adapters');
    this.rt.modelSetConfig(h, { ...native, loraRank: 0, loraTargets: 0 }, merge);
  }

  /** The adapters in PEFT's layout: adapter_model.safetensors and adapter_config.json (with
   * base_model_name_or_path when given). */
  exportPeft(opts = {}) {
    checkKeys(opts, ['baseModel'], 'exportPeft() options');
    const baseModel = opts?.baseModel;
    if (baseModel !== undefined && (typeof baseModel !== 'string' || baseModel.includes('\0'))) {
      throw new WfError('WF_ERR_ARG', `baseModel must be a string (a Hugging Face model id or path) without NUL, not ${show(baseModel)}`);
    }
    const { st, config } = this.rt.modelExportPeft(this.idle(), baseModel);
    return { 'adapter_model.safetensors': st, 'adapter_config.json': config };
  }

  /** PEFT LoRA adapters onto the model (replacing any it has). */
  importPeft(config, st) { this.rt.modelImportPeft(this.idle(), config, st); }

  // ---- the batch path: every step and forward of every kind of model ----
  // A batch is a JavaScript one (batch.js: copied into the heap for the call) or a
  // HeapBatch a loop keeps. The caller has checked idle() or holds the model busy.

  /** One optimizer step: {loss, gradNorm, lr, step}; lr as the settings show it (the
   * shortest decimal of the core's float, not 0.0020000000949949026). */
  stepBatch(batch) {
    const info = this.#inHeap(batch, (hb) => this.rt.batchStep(this.live(), hb.ptr));
    return { ...info, lr: float32Plain(info.lr) };
  }

  /** A forward pass (no dropout): {loss (null without targets), logits (with `logits`,
   * default on: null where the model has none), hidden (with `hidden`: the final states)}. */
  forwardBatch(batch, { logits = true, hidden = false } = {}) {
    return this.#inHeap(batch, (hb) => {
      const h = this.live();
      const loss = this.rt.batchForward(h, hb.ptr);
      const targets = batch instanceof HeapBatch ? hb.targets !== 0 : batch.targets != null || batch.targetVecs != null;
      const out = { loss: targets ? loss : null };
      if (logits || hidden) {
        const cfg = this.native, n = hb.B * hb.T;
        if (logits) out.logits = this.rt.logits(h, n * cfg.vocabSize);
        if (hidden) out.hidden = this.rt.hidden(h, n * cfg.dModel);
      }
      return out;
    });
  }

  /** Runs fn(hb) with the batch in the heap: batch itself, or a copy freed afterwards. */
  #inHeap(batch, fn) {
    if (batch instanceof HeapBatch) return fn(batch);
    const hb = HeapBatch.copy(this.rt, batch, this.native.dModel);
    try { return fn(hb); } finally { hb.free(); }
  }

  /** Throws, before the batch's buffers are allocated, when a [B, T] batch does not fit:
   * T beyond the context, or activations beyond the wasm memory. The core refuses both too,
   * but only once the ids are in the heap, which would have grown for nothing (wasm memory
   * never shrinks). */
  assertBatchFits(B, T) {
    const native = this.native;
    if (T > native.context) throw new WfError('WF_ERR_ARG', `sequence length ${T} exceeds the model's context of ${native.context}`);
    // B and T cross into C as int32: a size past this bound would wrap there
    if (B * T * 4 > MEMORY_LIMIT) {
      throw new WfError('WF_ERR_NOMEM', `a batch of ${B} x ${T} needs ${(B * T * 4 / 1e9).toFixed(2)} GB for its ids alone; `
        + `this build addresses at most ${(MEMORY_LIMIT / 1e9).toFixed(2)} GB (use a smaller batchSize)`);
    }
    const refused = this.rt.memoryFit(native, B, T);
    if (refused) throw new WfError(refused.code, `${refused.message} (use a smaller batchSize)`);
  }

  // ---- tokens ----

  /** Token ids of a text with the model's tokenizer, which must exist. */
  textIds(text) {
    if (!this.tokenizer) throw new WfError('WF_ERR_STATE', 'the model has no tokenizer yet: train it on text first');
    return this.tokenizer.encode(text);
  }

  /** Token ids of data (a text, or ids checked against the vocabulary) and `built`: when
   * the model has no tokenizer yet, the one learned from the text as `spec` says
   * (Tokenizer.forModel: char by default), not attached to the model: the caller decides. */
  tokensOf(data, spec) {
    if (typeof data !== 'string') {
      // checked here, so a bad id fails before the batch sampler or the optimizer moves
      const ids = int32Ids(data);
      const V = this.native.vocabSize;
      const bad = ids.findIndex((id) => id < 0 || id >= V);
      if (bad >= 0) throw new WfError('WF_ERR_TOKEN', `token ${ids[bad]} at position ${bad} is outside [0, ${V})`);
      return { tokens: ids, built: null };
    }
    if (this.tokenizer) {
      if (spec !== undefined) this.tokenizer.assertMatches(spec);
      return { tokens: this.tokenizer.encode(data), built: null };
    }
    const built = Tokenizer.forModel(this.rt, data, spec, this.native.vocabSize);
    try {
      return { tokens: built.encode(data), built };
    } catch (e) {
      built.dispose();
      throw e;
    }
  }

  // ---- weights ----

  /** The parameter tensors: [{name, offset, size, shape, decay}] in table order. */
  tensors() { return this.rt.modelTensors(this.live()); }

  tensorInfo(name) {
    const t = this.tensors().find((x) => x.name === name);
    if (!t) throw new WfError('WF_ERR_ARG', `the model has no tensor "${name}"`);
    return t;
  }

  getTensor(name) {
    const t = this.tensorInfo(name);
    ModelHandle.#notQuantized(t);
    return this.rt.modelReadParams(this.h, t.offset, t.size);
  }

  /** Quantized weights are blocks, not floats: getTensor and setTensor refuse them. */
  static #notQuantized(t) {
    if (t.dtype !== 'f32') {
      throw new WfError('WF_ERR_STATE', `tensor "${t.name}" is quantized (${t.dtype}): its weights are blocks, not floats; quantize('f32') turns them back`);
    }
  }

  setTensor(name, values) {
    this.idle();
    const t = this.tensorInfo(name);
    ModelHandle.#notQuantized(t);
    if (values.length !== t.size) throw new WfError('WF_ERR_ARG', `tensor "${name}" has ${t.size} elements, not ${values.length}`);
    const bad = Array.prototype.findIndex.call(values, (x) => !Number.isFinite(Math.fround(x)));
    if (bad >= 0) throw new WfError('WF_ERR_ARG', `value ${bad} of tensor "${name}" is ${values[bad]}; weights must be finite float32 numbers`);
    this.rt.modelWriteParams(this.h, t.offset, values);
  }

  // ---- checkpoints ----

  /** Checkpoint bytes: config, tokenizer, weights and, with `optimizer` (default true), its state. */
  save(opts = {}) {
    checkKeys(opts, SAVE_KEYS, 'save() options');
    const format = opts?.format ?? 'wf';
    if (format !== 'wf' && format !== 'gguf') throw new WfError('WF_ERR_ARG', `format must be 'wf' or 'gguf', not ${show(format)}`);
    const optimizer = opts?.optimizer ?? format === 'wf';
    if (typeof optimizer !== 'boolean') throw new WfError('WF_ERR_ARG', `optimizer must be true or false, not ${show(optimizer)}`);
    if (format === 'gguf' && optimizer) throw new WfError('WF_ERR_ARG', 'a GGUF file holds no optimizer state (format: \'gguf\' goes with optimizer: false)');
    const h = this.idleOrBetweenSteps();
    return this.rt.modelSave(h, this.tokenizer ? tokenizerHandle(this.tokenizer).handle : 0, optimizer, format === 'gguf');
  }

  /** Replaces the whole state with a checkpoint's, in place; unchanged on any error. */
  load(bytes) {
    const h = this.idle(), rt = this.rt;
    const th = rt.tokenizerCreate();
    let origin;
    try {
      origin = rt.modelLoad(h, th, bytes);
    } catch (e) {
      rt.tokenizerFree(th);
      throw e;
    }
    this.weightsOnly = origin !== CONSTANTS.WF_ORIGIN_OPTIMIZER;
    this.runText = null;
    this.batchSize = rt.runFacts(h)?.run.batchSize ?? this.batchSize; // a file keeps its batch size with its run
    this.tokenizer?.dispose();
    this.tokenizer = ModelHandle.#tokenizerOf(rt, th);
  }

  /** A new handle from checkpoint bytes, with the file's tokenizer when it has one. */
  static fromCheckpoint(rt, bytes) {
    const h = rt.modelCreate();
    let th = 0, origin;
    try {
      th = rt.tokenizerCreate();
      origin = rt.modelLoad(h, th, bytes);
    } catch (e) {
      rt.modelFree(h);
      if (th) rt.tokenizerFree(th);
      throw e;
    }
    return ModelHandle.adopt(rt, h, ModelHandle.#tokenizerOf(rt, th), { weightsOnly: origin !== CONSTANTS.WF_ORIGIN_OPTIMIZER });
  }

  /**
   * A new handle from a model source (source.js: bytes, a Response, a ReadableStream, a Blob,
   * an async iterable of bytes). A GGUF file goes into the core piece by piece, never whole in
   * memory (wf_model_load_feed); other files are gathered, then loaded as bytes.
   * onProgress({loaded, total}) after each piece (total: null when unknown); signal aborts,
   * rejecting with its reason. A failure or an abort frees everything it made.
   */
  static async fromSource(rt, source, { onProgress, signal } = {}) {
    throwIfAborted(signal);
    const bytes = source instanceof ArrayBuffer || ArrayBuffer.isView(source) ? asBytes(source) : null;
    if (bytes && !(bytes.length >= 4 && String.fromCharCode(...bytes.subarray(0, 4)) === 'GGUF')) {
      const made = ModelHandle.fromCheckpoint(rt, bytes); // in memory already: loaded as it is
      try {
        onProgress?.({ loaded: bytes.length, total: bytes.length });
      } catch (e) {
        made.free();
        throw e;
      }
      return made;
    }
    const src = openSource(source, 'the model file');
    const pieces = [];
    let loaded = 0, h = 0, th = 0, stream = null;
    const progress = (n) => {
      loaded += n;
      onProgress?.({ loaded, total: src.total });
    };
    const stop = () => src.cancel(); // a read waiting for the network ends at once
    const keep = (piece) => (src.reused ? piece.slice() : piece);
    signal?.addEventListener('abort', stop, { once: true });
    try {
      // enough of the start to tell a GGUF file (its magic) from the others
      while (loaded < 4) {
        const { value, done } = await src.next();
        if (done) break;
        pieces.push(keep(value));
        progress(value.length);
        throwIfAborted(signal);
      }
      const start = concat(pieces, null);
      if (start.length < 4 || String.fromCharCode(...start.subarray(0, 4)) !== 'GGUF') {
        for (let r = await src.next(); !r.done; r = await src.next()) {
          pieces.push(keep(r.value));
          progress(r.value.length);
          throwIfAborted(signal);
        }
        throwIfAborted(signal);
        return ModelHandle.fromCheckpoint(rt, concat(pieces, src.total));
      }
      h = rt.modelCreate();
      th = rt.tokenizerCreate();
      stream = rt.modelLoadStream(h, th, PIECE);
      stream.feed(start);
      for (let r = await src.next(); !r.done; r = await src.next()) {
        throwIfAborted(signal);
        stream.feed(r.value);
        progress(r.value.length);
      }
      throwIfAborted(signal);
      const origin = stream.end();
      stream = null;
      const tok = ModelHandle.#tokenizerOf(rt, th), model = h;
      th = h = 0;
      return ModelHandle.adopt(rt, model, tok, { weightsOnly: origin !== CONSTANTS.WF_ORIGIN_OPTIMIZER }); // frees both if it fails
    } catch (e) {
      src.cancel();
      stream?.abandon();
      if (h) rt.modelFree(h);
      if (th) rt.tokenizerFree(th);
      throw e;
    } finally {
      signal?.removeEventListener('abort', stop);
    }
  }

  /** A new handle from Hugging Face files (bytes), with a tokenizer file if given. */
  static fromSafetensors(rt, config, st, tokenizer) {
    const h = rt.modelCreate();
    let tok = null;
    try {
      rt.modelImportSafetensors(h, config, st);
      if (tokenizer !== undefined) tok = ModelHandle.#fitting(rt, h, tokenizer.bytes, tokenizer.name);
    } catch (e) {
      tok?.dispose();
      rt.modelFree(h);
      throw e;
    }
    return ModelHandle.adopt(rt, h, tok, { weightsOnly: true }); // safetensors hold no optimizer state
  }

  /** A handle over the model of a llama2.c model file, with the tokenizer of tokenizer.bin
   * bytes when given (llama2.c keeps it in a file of its own). */
  static fromLlama2c(rt, bytes, tokenizerBin) {
    const h = rt.modelCreate();
    let tok = null;
    try {
      rt.llama2cImport(h, bytes);
      if (tokenizerBin !== undefined) tok = ModelHandle.#fitting(rt, h, tokenizerBin, 'tokenizer.bin');
    } catch (e) {
      tok?.dispose();
      rt.modelFree(h);
      throw e;
    }
    return ModelHandle.adopt(rt, h, tok, { weightsOnly: true }); // no optimizer state in the file
  }

  /** The Tokenizer of a file, refused (WF_ERR_FORMAT) when it has more ids than model h. */
  static #fitting(rt, h, bytes, name) {
    const tok = Tokenizer.load(rt, bytes);
    try {
      const V = rt.modelConfig(h).vocabSize;
      if (tok.vocabSize > V) throw new WfError('WF_ERR_FORMAT', `${name} has ${tok.vocabSize} tokens but the model's vocabulary only ${V}`);
    } catch (e) {
      tok.dispose();
      throw e;
    }
    return tok;
  }

  /** A handle over wasm handle h (and tokenizer tok), both freed if that fails. */
  static adopt(rt, h, tok, opts) {
    try {
      return new ModelHandle(rt, h, tok, opts); // reads the config: can fail
    } catch (e) {
      tok?.dispose();
      rt.modelFree(h);
      throw e;
    }
  }

  /** The Tokenizer of a filled tokenizer handle, or null (the handle freed) when empty. */
  static #tokenizerOf(rt, th) {
    if (rt.tokenizerInfo(th).kind !== 0) return new Tokenizer(rt, th);
    rt.tokenizerFree(th);
    return null;
  }

  /** Frees the model's wasm memory and its tokenizer's. */
  free() {
    if (this.h) this.rt.modelFree(this.h);
    this.h = 0;
    this.tokenizer?.dispose();
    this.tokenizer = null;
  }
}
