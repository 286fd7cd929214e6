// One model handle (wf_model) and what hangs off it: its runtime, its tokenizer, what it is
// busy with, whether it holds optimizer state. Model, Encoder and Seq2Seq are views of one;
// the training loop and generation work on one. Not exported by the package: its fields
// are the package's own.
import { WfError } from './errors.js';
import { OPTIM_FIELDS, fromNative, presetBatchSize } from './config.js';
import { checkKeys, float32Plain, show } from './options.js';
import { HeapBatch } from './batch.js';
import { MEMORY_BUDGET, MEMORY_LIMIT, QUANT } from './runtime.js';
import { STRUCTS, roundTrip } from './structs.js';
import { Tokenizer, tokenizerHandle } from './tokenizer.js';
import { selectSlices, targetBits, targetNames, trainableCount } from './finetune.js';

const OPTIM_KEYS = new Set(OPTIM_FIELDS.map((f) => f.name));
const SAVE_KEYS = ['optimizer', 'format'];

/** Optimizer settings as the package shows them: float32 values as their shortest decimal. */
function plainOptim(o) {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, float32Plain(v)]));
}

export class ModelHandle {
  /** The last text tokensOf encoded: {text, tokenizer, tokens}. A run of several train calls
   * over one text (the page ends a call for each sample and autosave, then starts the next)
   * encodes it once, not once a call. */
  #encoded = null;

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
    this.weightsOnly = weightsOnly; // loaded without optimizer state (see info())
    this.batchSize = batchSize ?? presetBatchSize(this.config);
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

  /** The metadata saved with the model (any JSON value), or null. */
  get metadata() {
    const bytes = this.rt.modelGetNote(this.live());
    if (bytes.length === 0) return null;
    try {
      return JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      return null; // a note some other program wrote, not JSON: not ours to read
    }
  }

  /** Replaces the metadata (a JSON-serialisable value; null: none). */
  setMetadata(value) {
    const h = this.live();
    const text = value === null || value === undefined ? '' : JSON.stringify(value);
    if (text === undefined) throw new WfError('WF_ERR_ARG', 'metadata must be a JSON value (an object, array, string, number or boolean)');
    const bytes = new TextEncoder().encode(text);
    if (bytes.length > 1 << 20) throw new WfError('WF_ERR_ARG', `metadata is ${bytes.length} bytes as JSON; at most ${1 << 20} are saved with a model`);
    this.rt.modelSetNote(h, bytes);
  }

  /** Everything about the model in one plain object (Model.info). */
  info() {
    const tok = this.tokenizer, { memory, step, lr } = this.rt.modelInfo(this.live());
    return {
      config: this.config, paramCount: memory.count, step, lr: float32Plain(lr),
      optimizer: this.optimizer, optimizerState: !this.weightsOnly || step > 0, memory,
      tokenizer: tok ? { kind: tok.kind, vocabSize: tok.vocabSize } : null, busy: this.busy,
      threads: this.rt.threads ?? 1, simd: this.rt.simd ?? 'simd128', metadata: this.metadata,
      trainable: this.trainable().trainable, lora: this.lora, defaultBatchSize: this.batchSize,
      quantization: this.quantization,
    };
  }

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
    if (baseModel !== undefined && typeof baseModel !== 'string') {
      throw new WfError('WF_ERR_ARG', `baseModel must be a string (a Hugging Face model id or path), not ${show(baseModel)}`);
    }
    const { st, config } = this.rt.modelExportPeft(this.idle());
    const text = baseModel === undefined ? config
      : config.replace('"base_model_name_or_path": null', `"base_model_name_or_path": ${JSON.stringify(baseModel)}`);
    return { 'adapter_model.safetensors': st, 'adapter_config.json': text };
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
    const need = this.rt.memoryEstimate(native, B, T).activations;
    if (need > MEMORY_BUDGET) {
      throw new WfError('WF_ERR_NOMEM', `a batch of ${B} x ${T} needs ${(need / 1e9).toFixed(2)} GB of activations; `
        + `this build allows at most ${(MEMORY_BUDGET / 1e9).toFixed(2)} GB (use a smaller batchSize)`);
    }
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
      const ids = data instanceof Int32Array ? data : Int32Array.from(data);
      const V = this.native.vocabSize;
      const bad = ids.findIndex((id) => id < 0 || id >= V);
      if (bad >= 0) throw new WfError('WF_ERR_TOKEN', `token ${ids[bad]} at position ${bad} is outside [0, ${V})`);
      return { tokens: ids, built: null };
    }
    if (this.tokenizer) {
      if (spec !== undefined) this.tokenizer.assertMatches(spec);
      return { tokens: this.#encode(this.tokenizer, data), built: null };
    }
    const built = Tokenizer.forModel(this.rt, data, spec, this.native.vocabSize);
    try {
      // kept under the built tokenizer: once it joins the model, the next call finds it
      return { tokens: this.#encode(built, data), built };
    } catch (e) {
      built.dispose();
      throw e;
    }
  }

  /** The ids of text with tokenizer, from #encoded when it holds the same text (strings
   * compare by content: a text that came again through a worker's message is the same) and
   * tokenizer. The ids are shared between the calls: their readers do not write to them. */
  #encode(tokenizer, text) {
    const last = this.#encoded;
    if (last && last.tokenizer === tokenizer && last.text === text) return last.tokens;
    const tokens = tokenizer.encode(text);
    this.#encoded = { text, tokenizer, tokens };
    return tokens;
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
    const h = this.idle();
    return this.rt.modelSave(h, this.tokenizer ? tokenizerHandle(this.tokenizer).handle : 0, optimizer, format === 'gguf');
  }

  /** Replaces the whole state with a checkpoint's, in place; unchanged on any error. */
  load(bytes) {
    const h = this.idle(), rt = this.rt;
    const th = rt.tokenizerCreate();
    let withOptimizer;
    try {
      withOptimizer = rt.modelLoad(h, th, bytes);
    } catch (e) {
      rt.tokenizerFree(th);
      throw e;
    }
    this.weightsOnly = !withOptimizer;
    this.tokenizer?.dispose();
    this.tokenizer = ModelHandle.#tokenizerOf(rt, th);
  }

  /** Bytes of the wasm heap that a snapshot() and its restore() take beyond what is in use:
   * the copy (weights and AdamW moments; Muon's buffer counted too, a slight overestimate)
   * while it crosses the heap, then, while restore() loads it, a second model's blocks (a load
   * builds the new model before it frees the old one). */
  rollbackBytes() {
    const m = this.memory();
    return m.params + m.optimizer + (m.params + m.grads + m.optimizer + m.inference);
  }

  /** The whole training state (weights, optimizer state, settings, step, sampler streams,
   * metadata) without the tokenizer, for restore(); null when taking and putting it back
   * would not fit in the wasm heap (rollbackBytes beyond what is in use past MEMORY_BUDGET:
   * a full fine-tune of a 135M-parameter model). A copy that should fit but cannot be
   * allocated is a WF_ERR_NOMEM, as any other allocation of a call that has changed nothing. */
  snapshot() {
    if (this.rt.heapInUse() + this.rollbackBytes() > MEMORY_BUDGET) return null;
    try {
      return { bytes: this.rt.modelSave(this.live(), 0, true), weightsOnly: this.weightsOnly };
    } catch (e) {
      if (e.code !== 'WF_ERR_NOMEM') throw e;
      throw new WfError(e.code, `${e.message} (this call's roll-back copy; onDivergence: 'stop' trains without one)`);
    }
  }

  /** Puts back a snapshot() of this model in place (its tokenizer stays as it is). */
  restore({ bytes, weightsOnly }) {
    this.rt.modelLoad(this.live(), 0, bytes);
    this.weightsOnly = weightsOnly;
  }

  /** A new handle from checkpoint bytes, with the file's tokenizer when it has one. */
  static fromCheckpoint(rt, bytes) {
    const h = rt.modelCreate();
    let th = 0, withOptimizer;
    try {
      th = rt.tokenizerCreate();
      withOptimizer = rt.modelLoad(h, th, bytes);
    } catch (e) {
      rt.modelFree(h);
      if (th) rt.tokenizerFree(th);
      throw e;
    }
    return ModelHandle.adopt(rt, h, ModelHandle.#tokenizerOf(rt, th), { weightsOnly: !withOptimizer });
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
    this.#encoded = null;
  }
}
