// Model: a transformer in this thread's wasm memory (one wf_model handle and its
// tokenizer): training, evaluation, streaming generation, checkpoints and weights. The
// handle and everything hanging off it are private (handle.js); training.js and
// generation.js hold the long calls.
import { DISPOSE, WfError } from './errors.js';
import { show } from './options.js';
import { CONFIG_OPTIM_KEYS, resolveConfig, toNative } from './config.js';
import { ModelHandle } from './handle.js';
import { Tokenizer, tokenizerHandle } from './tokenizer.js';
import { continueRun, evaluateDecoder, positiveInt, startRun, trainDecoder } from './training.js';
import { generate } from './generation.js';
import { asBytes, int32Ids } from './runtime.js';

/** The optimizer settings a resolved config carries as training defaults (lr; a preset's
 * beta2, muon). */
function configOptim(friendly) {
  return Object.fromEntries(CONFIG_OPTIM_KEYS.filter((k) => friendly[k] !== undefined).map((k) => [k, friendly[k]]));
}

let coreOf; // Model's own: the package's modules reach a model's handle through modelHandle

/** @internal The ModelHandle of a live or disposed Model (Encoder, Seq2Seq, the loader,
 * safetensors and tests use it; the package does not export it). */
export function modelHandle(model) { return coreOf(model); }

export class Model {
  #core;

  static {
    coreOf = (model) => model.#core;
  }

  /** @internal use createModel, loadModel or importSafetensors */
  constructor(core) {
    this.#core = core;
  }

  /**
   * @internal use createModel. Builds a model with fresh weights: config is a preset name
   * or a partial config. With `text`, a tokenizer is learned from it as `tokenizer` says
   * ('char' (default), 'bpe' or {kind, vocabSize}: Tokenizer.fromText); a Tokenizer given
   * instead is copied into this model's runtime (it may come from another module
   * instance); the caller keeps theirs. When the config does not set vocabSize, a model
   * with a tokenizer is sized to it (else the preset's vocabSize applies).
   */
  static create(rt, config, { tokenizer, text } = {}) {
    const friendly = resolveConfig(config);
    Model.check(rt, friendly); // refused before anything is built
    const vocabGiven = typeof config === 'object' && config.vocabSize !== undefined;
    if (tokenizer instanceof Tokenizer) tokenizerHandle(tokenizer); // a disposed tokenizer says so before anything is built
    else if (text === undefined && tokenizer != null) {
      throw new WfError('WF_ERR_ARG', 'the tokenizer option is a Tokenizer, or a kind to learn from the text option');
    }
    let tok = null;
    try {
      if (tokenizer instanceof Tokenizer) tok = Tokenizer.copy(rt, tokenizer);
      else if (text !== undefined) tok = Tokenizer.fromText(rt, text, typeof tokenizer === 'string' ? { kind: tokenizer } : tokenizer);
      if (tok && !vocabGiven) friendly.vocabSize = tok.vocabSize;
      if (tok && tok.vocabSize > friendly.vocabSize) {
        throw new WfError('WF_ERR_CONFIG', `the tokenizer has ${tok.vocabSize} tokens but vocabSize is ${friendly.vocabSize}`);
      }
    } catch (e) {
      tok?.dispose();
      throw e;
    }
    let h = 0;
    try {
      h = rt.modelCreate();
      rt.modelInit(h, toNative(friendly));
    } catch (e) {
      if (h) rt.modelFree(h);
      tok?.dispose(); // a copy or one built here
      throw e;
    }
    const core = ModelHandle.adopt(rt, h, tok, { batchSize: friendly.batchSize });
    const optim = configOptim(friendly);
    if (Object.keys(optim).length) {
      try {
        core.setOptimizer(optim);
      } catch (e) {
        core.free();
        throw e;
      }
    }
    return new Model(core);
  }

  /**
   * @internal The checks of a resolved config that need no model, shared by create and
   * checkConfig: the core's (wf_config_check, through toNative's types and choices), and the
   * training defaults a config carries: batchSize as train() takes it, lr (and a preset's
   * beta2, muon) as the optimizer takes them (wf_optim_check). Returns the native config;
   * throws a WfError.
   */
  static check(rt, friendly) {
    const native = toNative(friendly);
    const refused = rt.configCheck(native);
    if (refused) throw new WfError(refused.code, refused.message);
    if (friendly.batchSize !== undefined) positiveInt('batchSize', friendly.batchSize);
    const optim = configOptim(friendly);
    for (const [k, v] of Object.entries(optim)) {
      if (typeof v !== 'number') throw new WfError('WF_ERR_ARG', `${k} must be a number, not ${show(v)}`);
    }
    if (Object.keys(optim).length) rt.optimCheck({ ...rt.optimDefault(), ...optim });
    return native;
  }

  /** @internal use loadModel. A Model from checkpoint bytes, with the file's tokenizer. */
  static fromCheckpoint(rt, bytes) {
    return new Model(ModelHandle.fromCheckpoint(rt, bytes));
  }

  /** @internal use loadModel. A Model from a model source (source.js), streamed. */
  static async fromSource(rt, source, opts) {
    return new Model(await ModelHandle.fromSource(rt, source, opts));
  }

  // ---- state ----

  /** The model's config (strings and booleans). */
  get config() { return this.#core.config; }
  /** Number of weights. */
  get paramCount() { return this.#core.paramCount; }
  /** Optimizer steps taken. */
  get step() { return this.#core.step; }
  /** Learning rate the next step will use. */
  get lr() { return this.#core.lr; }
  /** The optimizer settings. */
  get optimizer() { return this.#core.optimizer; }
  /** The model's tokenizer: null until it is trained on text or given one. */
  get tokenizer() { return this.#core.tokenizer; }
  /** What the model is busy with ('training', 'evaluation', 'generation'), or null. */
  get busy() { return this.#core.busy; }
  /** The batch size train() and evaluate() use unless told otherwise: the preset's (16 for
   * micro, 8 for tiny, 4 for baby) or the config's batchSize; a loaded model's run's. */
  get defaultBatchSize() { return this.#core.batchSize; }
  /** How createModel('auto', {text, seconds}) chose this model's preset: {preset, steps,
   * loss (expected held-out loss), why, stepsPerSecond (measured here)}; null otherwise. */
  get autoChoice() { return this.#core.autoChoice; }
  /** The model's training run, or null: {steps, seconds (done), lastSteps or lastSeconds
   * (its length), finished, loss, lr, valStep, valLoss, diverged ('loss', 'gradNorm',
   * 'update', 'bound', 'spike' or null), refused, at, backup (the step its roll-back copy
   * holds), and its settings: batchSize, context, valFraction, evalInterval, evalMode,
   * evalBatches}. A run lives in the model and its file (saved with the optimizer state). */
  get run() { return this.#core.run; }

  /** What the application saved with the model (setMetadata): a JSON value, or null. The
   * CLI keeps its run plan here ({run: {text, batchSize, ...}}); a page may keep its loss
   * history. */
  get metadata() { return this.#core.metadata; }

  /** Replaces the metadata saved with the model: any JSON-serialisable value up to 1 MiB
   * as JSON; null removes it. It travels in save()/load() and the model file. */
  setMetadata(value) {
    this.#core.idleOrBetweenSteps();
    this.#core.setMetadata(value);
  }

  /** Bytes of weights, gradients, optimizer state, activations and inference buffers. */
  memory() { return this.#core.memory(); }

  /** Everything about the model in one plain object: config, paramCount, step, lr,
   * optimizer, optimizerState (whether it holds AdamW state that training can resume from:
   * false after loading weights only, until its first step), memory, tokenizer ({kind,
   * vocabSize} or null), busy (what runs, or null), threads (the model's own, the
   * caller's included: 1 on the single-thread build), simd, metadata, trainable, lora and
   * defaultBatchSize. */
  info() { return this.#core.info(); }

  /** Changes some optimizer settings (lr, beta1, beta2, eps, weightDecay, warmup,
   * decaySteps, minLrRatio, gradClip); the rest stay. Returns all of them. */
  setOptimizer(settings) {
    this.#core.idle();
    return this.#core.setOptimizer(settings);
  }

  // ---- steps and passes ----

  /** One optimizer step on a [B, T] batch of ids (inputs and targets of B * T each);
   * returns {loss, gradNorm, lr, step}. */
  trainStep(inputs, targets, B, T) {
    this.#core.idle();
    return this.#core.stepBatch({ inputs, targets, B, T });
  }

  /** Forward pass on a [B, T] batch (targets may be null): {loss (null without targets),
   * logits: Float32Array [B*T*V]}. */
  forward(inputs, targets, B, T) {
    this.#core.idle();
    return this.#core.forwardBatch({ inputs, targets, B, T });
  }

  /**
   * The self-attention weights of a text (or ids): one forward pass, then every layer's
   * map. A text longer than the context keeps its end. Returns {nHead, T, ids, tokens (each
   * id's text, for labels), layers: Float32Array[] each [nHead * T * T]}: row i is query i,
   * column j key j, and a decoder's row i is 0 past column i.
   * @example const { layers, tokens } = model.selfAttention('Mr. Darcy'); // layers[0][(h * T + i) * T + j]
   */
  selfAttention(data) {
    const core = this.#core, h = core.idle(), cfg = core.config;
    if (cfg.arch === 'encoder-decoder') {
      throw new WfError('WF_ERR_STATE', 'selfAttention() reads one stack; for an encoder-decoder use Seq2Seq.from(model).crossAttention');
    }
    let ids = typeof data === 'string' ? core.textIds(data) : int32Ids(data);
    if (ids.length > cfg.context) ids = ids.subarray(ids.length - cfg.context);
    if (ids.length < 1) throw new WfError('WF_ERR_ARG', 'selfAttention needs at least one token');
    const T = ids.length, n = cfg.nHead * T * T;
    core.forwardBatch({ inputs: ids, B: 1, T }, { logits: false });
    const layers = [];
    for (let l = 0; l < cfg.nLayer; l++) layers.push(core.rt.selfAttention(h, l, n));
    const tok = core.tokenizer;
    const tokens = tok ? Array.from(ids, (id) => tok.decode([id])) : Array.from(ids, String);
    return { nHead: cfg.nHead, T, ids, tokens, layers };
  }

  // ---- long calls ----

  /**
   * Trains on text (or token ids): one run (the core's: docs/DESIGN.md, "Training runs"),
   * begun, driven to its end and ended. Options: tokenizer (used when the model has none yet:
   * 'char' (default), 'bpe', {kind: 'bpe', vocabSize} (default the model's vocabSize), or a
   * Tokenizer to copy), steps (default 1000), batchSize, lr, warmup, decaySteps,
   * minLrRatio, weightDecay, gradClip, beta1, beta2, eps, keepSchedule (go on with the
   * model's run, or its learning-rate schedule, instead of a new one: `steps` or `seconds`
   * more, e.g. after load; the rate never jumps back up), seed (restarts the batch sampler),
   * valFraction (0.1), evalInterval (100: validate at its multiples, counting earlier steps,
   * and at the end), evalBatches (4), evalMode, seconds (a time budget instead of a step count,
   * its schedule on the clock; warmupFraction; steps beside it caps the call), signal
   * (AbortSignal), onProgress({step, stepsDone, steps, loss, valLoss, validated, lr, gradNorm,
   * tokensPerSecond, elapsed, eta}), onWarning (warnings about the text; default
   * console.warn), onDivergence ('rollback' (default) or 'stop': what a diverging run
   * leaves), yieldMs (how often to yield to the event loop, default 30). Resolves to a
   * summary; an abort rejects with the signal's reason (an AbortError unless abort(reason)
   * gave one) and leaves the model with the steps completed so far, and its run, which
   * keepSchedule goes on with exactly.
   */
  train(data, opts = {}) { return trainDecoder(this.#core, data, opts); }

  /**
   * Begins a training run on text (or ids) without taking a step: the text crosses into the
   * model once, and the run (its batches, schedule, validation, roll-back copy) lives in the
   * model, and in its file, until another begins or endRun(). Options: train()'s but signal,
   * onProgress and yieldMs (steps or seconds: its length). With keepSchedule the model's run
   * goes on instead (a loaded run takes its text again; it must be the same), or, when it has
   * none, a run begins on the optimizer's schedule as it stands. Returns model.run.
   * @example model.startRun(text, { seconds: 60 }); await model.continueRun({ signal });
   */
  startRun(data, opts = {}) {
    startRun(this.#core, data, opts);
    return this.run;
  }

  /**
   * Trains the model's run until it ends, or for `steps` or `seconds` more (past its end it
   * trains on at its last learning rate), yielding to the event loop every yieldMs (30).
   * Options: steps, seconds, signal (an abort keeps the steps taken: continueRun() goes on
   * exactly), onProgress (train()'s reports), yieldMs. Resolves to a summary as train()'s; a
   * diverging run rejects with a WfError whose `facts` say why (the run's copy is back).
   * @example await model.continueRun({ seconds: 10, onProgress: (p) => console.log(p.step, p.loss) });
   */
  continueRun(opts = {}) { return continueRun(this.#core, opts); }

  /** Ends the model's run: its learning-rate schedule goes on in the optimizer settings at
   * the rate it reached (train() ends the runs it completes). */
  endRun() { this.#core.rt.runEnd(this.#core.idle()); }

  /** Mean cross-entropy of the model on text (or ids), over non-overlapping windows of the
   * context: resolves to {loss, perplexity, tokens}. A text needs the model's tokenizer
   * (WF_ERR_STATE without one). Options: maxTokens (limits the work on long texts),
   * batchSize, signal, yieldMs (30). */
  evaluate(data, opts = {}) { return evaluateDecoder(this.#core, data, opts); }

  /**
   * Streams generated text as an async iterator of pieces. Options: maxTokens (100),
   * temperature (0.8; 0 = greedy), topK (0 = off), topP (1 = off), seed, stop (strings that
   * end the text, not included), signal, onToken(piece, tokens) (called with each piece the
   * iterator yields and the number of tokens generated so far), allowUnknown (false: a char
   * tokenizer's <unk> is never sampled), yieldMs (16). The prompt is not part of the text.
   */
  generate(prompt = '', opts = {}) { return generate(this.#core, prompt, opts); }

  /** Generates and returns the whole text. Same options as generate. */
  async generateText(prompt = '', opts = {}) {
    let text = '';
    for await (const piece of this.generate(prompt, opts)) text += piece;
    return text;
  }

  // ---- fine-tuning ----

  /**
   * Trains only the tensors `spec` names; the rest are frozen: no gradients, no optimizer
   * state (their memory is given back) and no weight-gradient work. spec is a name or an
   * array of names: a tensor ('lm_head', 'qkvw', see tensors()), or a group: 'all',
   * 'layers' (every per-layer tensor), 'embed', 'norm', 'attn', 'mlp', 'cross', 'head' (the
   * output head: the token embedding when tied), 'lora' (the adapters); a per-layer one may
   * take layers after '@': 'layers@-2' (the last two), 'attn@0-3', 'mlp@4-' (from 4 on),
   * 'qkvw@5'. Returns trainable(). The choice is saved with the model.
   * @example model.trainOnly(['head', 'norm', 'layers@-2']);
   */
  trainOnly(spec) { return this.#core.setTrainable(spec, 'only'); }

  /** Freezes what `spec` names (see trainOnly), the rest as it was; returns trainable().
   * @example model.freeze('embed'); */
  freeze(spec) { return this.#core.setTrainable(spec, 'freeze'); }

  /** Makes what `spec` names train too (see trainOnly); returns trainable().
   * @example model.unfreeze('head'); */
  unfreeze(spec) { return this.#core.setTrainable(spec, 'unfreeze'); }

  /** What trains: {trainable (parameters), total, tensors: {name: true (all of it) or the
   * layers of it that train}}.
   * @example model.trainable(); // {trainable: 4096, total: 813824, tensors: {lm_head: true}} */
  trainable() { return this.#core.trainable(); }

  /** The LoRA adapters' settings ({rank, alpha, targets}), or null without adapters. */
  get lora() { return this.#core.lora; }

  /**
   * Adds LoRA adapters beside the attention and feed-forward linears: each adds
   * (alpha / rank) x A^T B^T to its layer's output, A random, B zero (so the model is
   * unchanged until it trains). Options: rank (8), alpha (2 * rank), targets: names among
   * 'q', 'k', 'v', 'o', 'fc' (the first feed-forward matrix; SwiGLU's gate), 'up'
   * (SwiGLU's), 'down', or 'attn', 'mlp', 'all' (the default). A model's first adapters
   * train alone: the base is frozen. Returns the settings.
   * @example model.addLora({ rank: 8, alpha: 16, targets: ['q', 'v'] });
   */
  addLora(opts) { return this.#core.addLora(opts); }

  /** Folds the adapters into their weights (W += alpha/rank B A) and removes them: a plain
   * model, exportable as one. What trained stays as it was (a LoRA-tuned base: frozen).
   * @example model.mergeLora(); const files = exportSafetensors(model); */
  mergeLora() { this.#core.dropLora(true); }

  /** Removes the adapters without merging them: the base model again. */
  removeLora() { this.#core.dropLora(false); }

  /**
   * The LoRA adapters in PEFT's layout, for PeftModel.from_pretrained(base, dir):
   * {'adapter_model.safetensors': Uint8Array, 'adapter_config.json': string}. The base is
   * what exportSafetensors writes before addLora or after removeLora (it refuses a model with
   * adapters); GPT-2-, GPT-NeoX- and Llama-shaped models only (docs/FORMATS.md). Options: baseModel (the config's
   * base_model_name_or_path, e.g. 'HuggingFaceTB/SmolLM-135M').
   * @example const files = model.exportPeft({ baseModel: 'gpt2' });
   */
  exportPeft(opts) { return this.#core.exportPeft(opts); }

  /**
   * Puts PEFT LoRA adapters on this model (its base must be theirs), replacing any it has:
   * files {'adapter_config.json': string or bytes, 'adapter_model.safetensors': bytes}.
   * @example model.importPeft({ 'adapter_config.json': cfg, 'adapter_model.safetensors': bytes });
   */
  importPeft(files) {
    if (!files || files['adapter_config.json'] === undefined || files['adapter_model.safetensors'] === undefined) {
      throw new WfError('WF_ERR_ARG', "importPeft needs files['adapter_config.json'] and files['adapter_model.safetensors']");
    }
    this.#core.importPeft(asBytes(files['adapter_config.json'], "files['adapter_config.json']"),
      asBytes(files['adapter_model.safetensors'], "files['adapter_model.safetensors']"));
    return this.lora;
  }

  /**
   * Stores the linears' and token embeddings' weights as ggml's blocks of 32 with an fp16
   * scale: 'q8_0' (8-bit, 3.8x smaller) or 'q4_0' (4-bit, 7x smaller), or back as float32
   * ('f32', exactly: every block value is a float). Quantized weights are frozen: LoRA
   * adapters train over them (QLoRA); generation reads them with 8-bit integer dot products.
   * Needs d_model and d_ff multiples of 32.
   * @example model.quantize('q4_0'); model.addLora({ rank: 8, targets: ['q', 'v'] });
   */
  quantize(type) { this.#core.quantize(type); }

  /** 'f32', 'q8_0', 'q4_0' or 'mixed': how the linears' and embeddings' weights are stored. */
  get quantization() { return this.#core.quantization; }

  // ---- weights and files ----

  /** The parameter tensors: [{name, offset, size, shape, decay, layers (its slices: one per
   * layer, or 1), gradOffset (where its gradients start; -1: frozen), slice0}] in table order
   * (absent ones skipped). */
  tensors() { return this.#core.tensors(); }

  /** A copy of one parameter tensor's weights (Float32Array). */
  getTensor(name) { return this.#core.getTensor(name); }

  /** Overwrites one parameter tensor's weights with `values` (same number of elements). */
  setTensor(name, values) { this.#core.setTensor(name, values); }

  /**
   * The model as checkpoint bytes: config, tokenizer (if any), weights and, with
   * `optimizer: true` (the default), the AdamW moments, optimizer settings, step and the
   * batch sampler's RNG streams, so that training resumes exactly.
   * @example writeFileSync('model.wf', model.save());
   */
  save(opts) { return this.#core.save(opts); }

  /**
   * Replaces this model's whole state (config, weights, optimizer state, tokenizer) with a
   * checkpoint's, in place. A file without a tokenizer leaves the model without one. On any
   * error the model is unchanged.
   * @example model.load(readFileSync('model.wf'));
   */
  load(bytes) {
    this.#core.load(bytes);
    return this;
  }

  /** Frees the model's wasm memory (and its tokenizer's). Using it afterwards throws. */
  dispose() { this.#core.free(); }

  [DISPOSE]() { this.dispose(); }
}

/**
 * The model as checkpoint bytes; the same as model.save(opts).
 * @example const bytes = saveModel(model); // Uint8Array
 */
export function saveModel(model, opts) {
  return model.save(opts);
}
