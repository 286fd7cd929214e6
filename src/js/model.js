// A model handle (wf_model) with its tokenizer: training loop, evaluation and streaming
// generation over the C API. One Model per handle; dispose() frees its wasm memory.
import { CONFIG_BYTES, MEMORY_LIMIT, WfError, abortError } from './runtime.js';
import { Tokenizer } from './tokenizer.js';
import { BATCH_BYTES, readStepInfo, withBatch, writeIdsBatch } from './batch.js';

const ENUMS = {
  arch: ['decoder', 'encoder', 'encoder-decoder'],
  norm: ['layernorm', 'rmsnorm'],
  block: ['pre_ln', 'post_ln'],
  activation: ['gelu', 'relu', 'swiglu'],
  positions: ['learned', 'sinusoidal', 'rope'],
};

/** Named configs. tiny and baby are the speed issue's benchmark configs A and B. batchSize
 * and lr are training defaults that come with them, not part of the model. */
export const PRESETS = {
  tiny: { nLayer: 4, nHead: 4, dModel: 128, dFF: 512, context: 64, vocabSize: 96, batchSize: 8, lr: 2e-3 },
  baby: { nLayer: 6, nHead: 6, dModel: 384, dFF: 1536, context: 256, vocabSize: 96, batchSize: 4, lr: 1e-3 },
};

const FRIENDLY_DEFAULTS = {
  arch: 'decoder', norm: 'layernorm', block: 'pre_ln', activation: 'gelu', positions: 'learned',
  tiedHead: true, bias: true, normEps: 1e-5, seed: 1337, dropout: 0, maxBeam: 4,
};

/** A full config in JavaScript form (strings and booleans) from a preset name or a partial
 * config, filling the rest from the tiny preset. `batchSize` and `lr` are training defaults,
 * not part of the model. */
export function resolveConfig(config = 'tiny') {
  let base = config;
  if (typeof config === 'string') {
    base = PRESETS[config];
    if (!base) throw new WfError('WF_ERR_CONFIG', `unknown preset "${config}"; presets: ${Object.keys(PRESETS).join(', ')}`);
  } else if (config === null || typeof config !== 'object') {
    throw new WfError('WF_ERR_CONFIG', 'config must be a preset name or an object');
  } else if (config.preset !== undefined) {
    const preset = PRESETS[config.preset];
    if (!preset) throw new WfError('WF_ERR_CONFIG', `unknown preset "${config.preset}"`);
    base = { ...preset, ...config };
    delete base.preset;
  }
  const out = { ...FRIENDLY_DEFAULTS, ...PRESETS.tiny, ...base };
  for (const [k, names] of Object.entries(ENUMS)) {
    if (typeof out[k] === 'number') out[k] = names[out[k]] ?? out[k];
  }
  // an encoder-decoder's encoder is as deep as its decoder unless told otherwise
  if (out.nEncLayer === undefined) out.nEncLayer = out.arch === 'encoder-decoder' ? out.nLayer : 0;
  return out;
}

/** The C struct's numeric form of a resolved config. */
export function toNative(cfg) {
  const out = {};
  for (const [k, names] of Object.entries(ENUMS)) {
    const v = cfg[k];
    const i = typeof v === 'number' ? v : names.indexOf(v);
    if (i < 0) throw new WfError('WF_ERR_CONFIG', `${k} "${v}" is not one of ${names.join(', ')}`);
    out[k] = i;
  }
  for (const k of ['vocabSize', 'context', 'nLayer', 'nHead', 'dModel', 'dFF', 'nEncLayer', 'maxBeam']) {
    const v = cfg[k];
    if (!Number.isInteger(v)) throw new WfError('WF_ERR_CONFIG', `${k} must be an integer, not ${v}`);
    out[k] = v;
  }
  out.tiedHead = cfg.tiedHead ? 1 : 0;
  out.bias = cfg.bias ? 1 : 0;
  out.normEps = cfg.normEps;
  out.dropout = cfg.dropout;
  out.seed = cfg.seed >>> 0;
  return out;
}

function fromNative(n) {
  const out = { ...n, tiedHead: n.tiedHead === 1, bias: n.bias === 1 };
  for (const [k, names] of Object.entries(ENUMS)) out[k] = names[n[k]];
  return out;
}

const yieldToEventLoop = typeof setImmediate === 'function'
  ? () => new Promise((resolve) => setImmediate(resolve))
  : () => new Promise((resolve) => setTimeout(resolve, 0));

function positiveInt(name, v) {
  if (!Number.isInteger(v) || v < 1) throw new WfError('WF_ERR_ARG', `${name} must be an integer >= 1, not ${v}`);
  return v;
}

/** A number of milliseconds between yields to the event loop: >= 0 (Infinity: never). */
function yieldInterval(v) {
  if (typeof v !== 'number' || !(v >= 0)) throw new WfError('WF_ERR_ARG', `yieldMs must be a number >= 0, not ${v}`);
  return v;
}

function nonNegativeInt(name, v) {
  if (!Number.isInteger(v) || v < 0) throw new WfError('WF_ERR_ARG', `${name} must be an integer >= 0, not ${v}`);
  return v;
}

/** The batch size of the preset a config has the shape of (a loaded tiny or baby model
 * trains with its preset's batch), else 8. */
function presetBatchSize(cfg) {
  const keys = ['nLayer', 'nHead', 'dModel', 'dFF', 'context'];
  const preset = Object.values(PRESETS).find((p) => keys.every((k) => p[k] === cfg[k]));
  return preset?.batchSize ?? 8;
}

export class Model {
  /** @internal use createModel */
  constructor(rt, handle, tokenizer, batchSize) {
    this.rt = rt;
    this.handle = handle;
    this.tokenizer = tokenizer ?? null;
    this.defaultBatchSize = batchSize ?? presetBatchSize(this.config);
    this.busy = null;
    this.weightsOnly = false; // loaded from a file without optimizer state (see info())
  }

  /**
   * Builds a model with fresh weights: config is a preset name or a partial config. With
   * `text`, a tokenizer is learned from it as `tokenizer` says ('char' (default), 'bpe' or
   * {kind, vocabSize}: Tokenizer.fromText); a Tokenizer given instead is copied into this
   * model's runtime (it may come from another module instance); the caller keeps theirs.
   * When the config does not set vocabSize, a model with a tokenizer is sized to it (else
   * the preset's vocabSize applies).
   */
  static create(rt, config, { tokenizer, text } = {}) {
    const friendly = resolveConfig(config);
    toNative(friendly); // choices that do not exist are refused before anything is built
    const vocabGiven = typeof config === 'object' && config.vocabSize !== undefined;
    if (tokenizer instanceof Tokenizer) tokenizer.call(0); // a disposed tokenizer says so before anything is built
    else if (text === undefined && tokenizer != null) {
      throw new WfError('WF_ERR_ARG', 'the tokenizer option is a Tokenizer, or a kind to learn from the text option');
    }
    let tok = null;
    try {
      if (tokenizer instanceof Tokenizer) tok = Tokenizer.load(rt, tokenizer.save());
      else if (text !== undefined) tok = Tokenizer.fromText(rt, text, typeof tokenizer === 'string' ? { kind: tokenizer } : tokenizer);
      if (tok && !vocabGiven) friendly.vocabSize = tok.vocabSize;
      if (tok && tok.vocabSize > friendly.vocabSize) {
        throw new WfError('WF_ERR_CONFIG', `the tokenizer has ${tok.vocabSize} tokens but vocabSize is ${friendly.vocabSize}`);
      }
    } catch (e) {
      tok?.dispose();
      throw e;
    }
    const h = rt.M._wf_model_create() >>> 0;
    if (!h) {
      tok?.dispose();
      throw new WfError('WF_ERR_NOMEM', 'could not allocate a model handle');
    }
    const model = new Model(rt, h, tok, friendly.batchSize);
    try {
      const native = toNative(friendly);
      rt.withBuffer(CONFIG_BYTES, (p) => {
        rt.writeConfig(p, native);
        model.call(rt.M._wf_model_init(h, p));
      });
      if (friendly.lr !== undefined) model.setOptimizerNow({ lr: friendly.lr });
    } catch (e) {
      model.dispose(); // and its tokenizer: a copy or one built here
      throw e;
    }
    return model;
  }

  /** Throws for a disposed or busy model, or for a failed status with the core's message. */
  call(status = 0) {
    if (!this.handle) throw new WfError('WF_ERR_DISPOSED', 'this model has been disposed');
    if (status !== 0) this.rt.check(status, this.rt.cstring(this.rt.M._wf_model_error(this.handle)));
  }

  idle() {
    this.call();
    if (this.busy) throw new WfError('WF_ERR_BUSY', `the model is busy with ${this.busy}; wait for it or abort it first`);
  }

  /** The config, when the model is a decoder: train, evaluate and generate work on text
   * through a decoder's next-token objective. */
  decoderConfig(what) {
    const cfg = this.config;
    if (cfg.arch !== 'decoder') {
      const use = cfg.arch === 'encoder' ? 'Encoder.from(model)' : 'Seq2Seq.from(model)';
      throw new WfError('WF_ERR_STATE', `${what}() works on decoders; this model is an ${cfg.arch}: use ${use}`);
    }
    return cfg;
  }

  /** The model's config (strings and booleans). */
  get config() {
    this.call();
    return this.rt.withBuffer(CONFIG_BYTES, (p) => {
      this.call(this.rt.M._wf_model_get_config(this.handle, p));
      return fromNative(this.rt.readConfig(p));
    });
  }

  get paramCount() { this.call(); return this.rt.modelInfo(this.handle).memory.count; }
  get step() { this.call(); return this.rt.modelInfo(this.handle).step; }
  get lr() { this.call(); return this.rt.modelInfo(this.handle).lr; }

  /** Bytes of weights, gradients, optimizer state, activations and inference buffers. */
  memory() {
    this.call();
    return this.rt.modelInfo(this.handle).memory;
  }

  /** Everything about the model in one plain object: config, paramCount, step, lr,
   * optimizer, optimizerState (whether it holds AdamW state that training can resume from:
   * false after loading weights only, until its first step), memory, tokenizer ({kind,
   * vocabSize} or null), busy (what runs, or null) and threads (how many the loaded wasm
   * build offers: 1 for the single-thread build). */
  info() {
    this.call();
    const tok = this.tokenizer, step = this.step;
    return {
      config: this.config, paramCount: this.paramCount, step, lr: this.lr,
      optimizer: this.optimizer, optimizerState: !this.weightsOnly || step > 0, memory: this.memory(),
      tokenizer: tok ? { kind: tok.kind, vocabSize: tok.vocabSize } : null, busy: this.busy,
      threads: this.rt.threads ?? 1,
    };
  }

  get optimizer() {
    this.call();
    return this.rt.withBuffer(64, (p) => {
      this.call(this.rt.M._wf_model_get_optim(this.handle, p));
      return this.rt.readOptim(p);
    });
  }

  /** Changes some optimizer settings (lr, beta1, beta2, eps, weightDecay, warmup,
   * decaySteps, minLrRatio, gradClip); the rest stay. */
  setOptimizer(settings) {
    this.idle();
    this.setOptimizerNow(settings);
  }

  setOptimizerNow(settings) {
    const next = { ...this.optimizer, ...settings };
    this.rt.withBuffer(64, (p) => {
      this.rt.writeOptim(p, next);
      this.call(this.rt.M._wf_model_set_optim(this.handle, p));
    });
  }

  /** One optimizer step on a [B, T] batch of ids (inputs and targets of B * T each);
   * returns {loss, gradNorm, lr, step}. */
  trainStep(inputs, targets, B, T) {
    this.idle();
    const rt = this.rt;
    return withBatch(rt, { inputs, targets, B, T }, 0, (pb) => rt.withBuffer(16, (info) => {
      this.call(rt.M._wf_model_step(this.handle, pb, info));
      return readStepInfo(rt, info);
    }));
  }

  /** Forward pass on a [B, T] batch (targets may be null): {loss (null without targets),
   * logits: Float32Array [B*T*V]}. */
  forward(inputs, targets, B, T) {
    this.idle();
    const rt = this.rt;
    return withBatch(rt, { inputs, targets, B, T }, 0, (pb) => rt.withBuffer(4, (lossp) => {
      this.call(rt.M._wf_model_forward(this.handle, pb, lossp));
      const V = this.config.vocabSize;
      const logits = rt.M._wf_model_logits(this.handle) >>> 2;
      return { loss: targets ? rt.f32[lossp >>> 2] : null, logits: rt.f32.slice(logits, logits + B * T * V) };
    }));
  }

  /** Throws, before the batch's buffers are allocated, when a [B, T] batch does not fit:
   * T beyond the context, or activations beyond the wasm memory. The core refuses both too,
   * but only once the ids are in the heap, which would have grown for nothing (wasm memory
   * never shrinks). */
  assertBatchFits(B, T) {
    const rt = this.rt;
    const native = rt.withBuffer(CONFIG_BYTES, (p) => {
      this.call(rt.M._wf_model_get_config(this.handle, p));
      return rt.readConfig(p);
    });
    if (T > native.context) throw new WfError('WF_ERR_ARG', `sequence length ${T} exceeds the model's context of ${native.context}`);
    // B and T cross into C as int32: a size past this bound would wrap there
    if (B * T * 4 > MEMORY_LIMIT) {
      throw new WfError('WF_ERR_NOMEM', `a batch of ${B} x ${T} needs ${(B * T * 4 / 1e9).toFixed(2)} GB for its ids alone; `
        + `this build addresses at most ${(MEMORY_LIMIT / 1e9).toFixed(2)} GB (use a smaller batchSize)`);
    }
    const need = rt.memoryEstimate(native, B, T).activations;
    if (need > 0.95 * MEMORY_LIMIT) {
      throw new WfError('WF_ERR_NOMEM', `a batch of ${B} x ${T} needs ${(need / 1e9).toFixed(2)} GB of activations; `
        + `this build addresses at most ${(MEMORY_LIMIT / 1e9).toFixed(2)} GB (use a smaller batchSize)`);
    }
  }

  /**
   * The self-attention weights of a text (or ids): one forward pass, then every layer's
   * map. A text longer than the context keeps its end. Returns {nHead, T, ids, tokens (each
   * id's text, for labels), layers: Float32Array[] each [nHead * T * T]}: row i is query i,
   * column j key j, and a decoder's row i is 0 past column i.
   * @example const { layers, tokens } = model.selfAttention('Mr. Darcy'); // layers[0][(h * T + i) * T + j]
   */
  selfAttention(data) {
    this.idle();
    const rt = this.rt, cfg = this.config;
    if (cfg.arch === 'encoder-decoder') {
      throw new WfError('WF_ERR_STATE', 'selfAttention() reads one stack; for an encoder-decoder use Seq2Seq.from(model).crossAttention');
    }
    let ids = typeof data === 'string' ? this.textIds(data) : Int32Array.from(data);
    if (ids.length > cfg.context) ids = ids.subarray(ids.length - cfg.context);
    if (ids.length < 1) throw new WfError('WF_ERR_ARG', 'selfAttention needs at least one token');
    const T = ids.length, n = cfg.nHead * T * T;
    withBatch(rt, { inputs: ids, B: 1, T }, 0, (pb) => this.call(rt.M._wf_model_forward(this.handle, pb, 0)));
    const layers = [];
    for (let l = 0; l < cfg.nLayer; l++) {
      const p = rt.M._wf_model_attention(this.handle, l, 0) >>> 2;
      layers.push(rt.f32.slice(p, p + n));
    }
    const tokens = this.tokenizer ? Array.from(ids, (id) => this.tokenizer.decode([id])) : Array.from(ids, String);
    return { nHead: cfg.nHead, T, ids, tokens, layers };
  }

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
      const V = this.config.vocabSize;
      const bad = ids.findIndex((id) => id < 0 || id >= V);
      if (bad >= 0) throw new WfError('WF_ERR_TOKEN', `token ${ids[bad]} at position ${bad} is outside [0, ${V})`);
      return { tokens: ids, built: null };
    }
    if (this.tokenizer) {
      if (spec !== undefined) this.tokenizer.assertMatches(spec);
      return { tokens: this.tokenizer.encode(data), built: null };
    }
    const built = Tokenizer.forModel(this.rt, data, spec, this.config.vocabSize);
    try {
      return { tokens: built.encode(data), built };
    } catch (e) {
      built.dispose();
      throw e;
    }
  }

  /**
   * Trains on text (or token ids). Options: tokenizer (used when the model has none yet:
   * 'char' (default), 'bpe', {kind: 'bpe', vocabSize} (default the model's vocabSize), or a
   * Tokenizer to copy), steps (default 1000), batchSize, lr, warmup, decaySteps,
   * minLrRatio, weightDecay, gradClip, beta1, beta2, eps, keepSchedule (leave the model's
   * learning-rate schedule as it is, e.g. after load, instead of starting a new one for this
   * call), seed (restarts the batch sampler), valFraction (0.1), evalInterval (100:
   * validate at its multiples, counting earlier steps, and at the end), evalBatches (4),
   * signal (AbortSignal), onProgress({step, steps, loss, valLoss, validated, lr,
   * gradNorm, tokensPerSecond, elapsed, eta}), yieldMs (how often to yield to the event
   * loop, default 30). Resolves to a summary; an abort rejects with an AbortError and
   * leaves the model with the steps completed so far.
   */
  async train(data, opts = {}) {
    this.idle();
    const rt = this.rt;
    const cfg = this.decoderConfig('train');
    const B = positiveInt('batchSize', opts.batchSize ?? this.defaultBatchSize);
    const T = positiveInt('context', opts.context ?? cfg.context);
    const valFraction = opts.valFraction ?? 0.1;
    if (typeof valFraction !== 'number' || !(valFraction >= 0 && valFraction < 1)) {
      throw new WfError('WF_ERR_ARG', `valFraction (the validation split) must be a number in [0, 1), not ${valFraction}`);
    }
    const evalInterval = nonNegativeInt('evalInterval', opts.evalInterval ?? 100);
    const evalBatches = positiveInt('evalBatches', opts.evalBatches ?? 4);
    if (opts.signal?.aborted) throw abortError(opts.signal);
    this.assertBatchFits(B, T);
    let tokens = null, built = null, ptok = 0, pin = 0, ptg = 0, pb = 0, info = 0, lossp = 0;
    return this.runTraining(opts, {
      validateEvery: valFraction > 0 ? evalInterval : 0,
      // a tokenizer this call builds joins the model only with its first step; nothing is
      // allocated before the checks
      prepare: () => {
        ({ tokens, built } = this.tokensOf(data, opts.tokenizer));
        // the sampler checks this too, but only when it first draws from a split: a validation
        // split too short to validate would otherwise fail evalInterval steps into the run
        const nVal = Math.floor(tokens.length * valFraction);
        for (const [name, n, used] of [['training', tokens.length - nVal, true], ['validation', nVal, evalInterval > 0 && valFraction > 0]]) {
          if (used && n < T + 1) {
            throw new WfError('WF_ERR_ARG', `the ${name} split has ${n} tokens; a window of T = ${T} needs at least ${T + 1} (use a longer text${name === 'validation' ? ', a larger valFraction, or valFraction 0' : ' or a smaller valFraction'})`);
          }
        }
        [ptok, pin, ptg, pb, info, lossp] = rt.allocMany([tokens.length * 4, B * T * 4, B * T * 4, BATCH_BYTES, 16, 4]);
        rt.i32.set(tokens, ptok >>> 2);
        writeIdsBatch(rt, pb, pin, ptg, B, T);
        if (opts.seed !== undefined) this.call(rt.M._wf_model_sample_seed(this.handle, opts.seed >>> 0));
      },
      step: () => {
        this.call(rt.M._wf_model_sample_batch(this.handle, ptok, tokens.length, valFraction, 0, B, T, pin, ptg));
        this.call(rt.M._wf_model_step(this.handle, pb, info));
        if (built && !this.tokenizer) this.tokenizer = built;
        return { ...readStepInfo(rt, info), tokens: B * T };
      },
      validate: () => {
        let sum = 0;
        for (let i = 0; i < evalBatches; i++) {
          this.call(rt.M._wf_model_sample_batch(this.handle, ptok, tokens.length, valFraction, 1, B, T, pin, ptg));
          this.call(rt.M._wf_model_forward(this.handle, pb, lossp));
          sum += rt.f32[lossp >>> 2];
        }
        return sum / evalBatches;
      },
      cleanup: () => {
        if (built && this.tokenizer !== built) built.dispose();
        for (const p of [ptok, pin, ptg, pb, info, lossp]) rt.free(p);
      },
    });
  }

  /**
   * @internal The training loop of every kind of model (train() here, Seq2Seq.train): sets
   * this call's optimizer settings and schedule from opts, then takes opts.steps steps of
   * source.step() (which returns a step info and the tokens it trained on) with abort,
   * progress, validation (source.validate() at multiples of source.validateEvery, counting
   * earlier steps, and at the end) and yields to the event loop. source.prepare() runs
   * first and may throw; source.cleanup() runs last, whatever happened. Everything up to
   * the first step is undone if it fails: the optimizer settings are restored.
   */
  async runTraining(opts, source) {
    const steps = positiveInt('steps', opts.steps ?? 1000);
    const yieldMs = yieldInterval(opts.yieldMs ?? 30);
    const signal = opts.signal;
    const start = this.step;
    const before = this.optimizer;
    let last = null, valLoss = null, tokens = 0;
    try {
      if (signal?.aborted) throw abortError(signal);
      source.prepare();
      const schedule = {};
      for (const k of ['lr', 'weightDecay', 'gradClip', 'minLrRatio', 'beta1', 'beta2', 'eps', 'warmup', 'decaySteps']) {
        if (opts[k] !== undefined) schedule[k] = opts[k];
      }
      if (!opts.keepSchedule) {
        // a schedule for this call: warmup over its first steps, cosine decay to its last
        const warmup = opts.warmup ?? Math.min(100, Math.floor(steps / 10));
        schedule.start = start;
        schedule.warmup = warmup;
        schedule.decaySteps = opts.decaySteps ?? Math.max(0, steps - warmup);
      }
      this.setOptimizer(schedule);
      this.busy = 'training';
      const t0 = performance.now();
      let lastYield = t0;
      for (let s = 1; s <= steps; s++) {
        if (signal?.aborted) throw abortError(signal);
        last = source.step();
        tokens += last.tokens;
        const every = source.validateEvery ?? 0;
        const validated = every > 0 && ((start + s) % every === 0 || s === steps);
        if (validated) valLoss = source.validate();
        const now = performance.now();
        const elapsed = (now - t0) / 1000;
        if (opts.onProgress && (validated || now - lastYield >= yieldMs || s === steps)) {
          opts.onProgress({
            step: last.step, steps: start + steps, loss: last.loss, valLoss, validated,
            lr: last.lr, gradNorm: last.gradNorm, tokensPerSecond: tokens / elapsed, elapsed,
            eta: (elapsed / s) * (steps - s),
          });
        }
        if (now - lastYield >= yieldMs) {
          await yieldToEventLoop();
          lastYield = performance.now();
        }
      }
      const seconds = (performance.now() - t0) / 1000;
      return { steps, step: this.step, loss: last.loss, valLoss, tokens, seconds, tokensPerSecond: tokens / seconds };
    } catch (e) {
      if (this.handle && this.step === start) this.setOptimizerNow(before);
      throw e;
    } finally {
      source.cleanup?.();
      this.busy = null;
    }
  }

  /** Mean cross-entropy of the model on text (or ids), over non-overlapping windows of the
   * context: resolves to {loss, perplexity, tokens}. A text needs the model's tokenizer
   * (WF_ERR_STATE without one). Options: maxTokens (limits the work on long texts),
   * batchSize, signal, yieldMs (30). */
  async evaluate(data, { maxTokens = Infinity, batchSize, signal, yieldMs = 30 } = {}) {
    this.idle();
    yieldInterval(yieldMs);
    if (signal?.aborted) throw abortError(signal);
    const rt = this.rt;
    const T = this.decoderConfig('evaluate').context;
    // a text needs the model's own tokenizer: one learned from the evaluation text would
    // measure nothing the model knows
    let tokens = typeof data === 'string' ? this.textIds(data) : this.tokensOf(data).tokens;
    if (tokens.length > maxTokens + 1) tokens = tokens.subarray(0, maxTokens + 1);
    const windows = Math.floor((tokens.length - 1) / T);
    if (windows < 1) {
      throw new WfError('WF_ERR_ARG', `evaluation needs at least ${T + 1} tokens (one context window plus its next token); got ${tokens.length}`);
    }
    const B = Math.min(positiveInt('batchSize', batchSize ?? this.defaultBatchSize), windows);
    this.assertBatchFits(B, T);
    const [pin, ptg, pb, lossp] = rt.allocMany([B * T * 4, B * T * 4, BATCH_BYTES, 4]);
    this.busy = 'evaluation';
    try {
      let total = 0, counted = 0, lastYield = performance.now();
      for (let w = 0; w < windows; w += B) {
        if (signal?.aborted) throw abortError(signal);
        const b = Math.min(B, windows - w);
        const base = pin >>> 2, tbase = ptg >>> 2;
        for (let i = 0; i < b; i++) {
          const off = (w + i) * T;
          rt.i32.set(tokens.subarray(off, off + T), base + i * T);
          rt.i32.set(tokens.subarray(off + 1, off + T + 1), tbase + i * T);
        }
        writeIdsBatch(rt, pb, pin, ptg, b, T);
        this.call(rt.M._wf_model_forward(this.handle, pb, lossp));
        total += rt.f32[lossp >>> 2] * b * T;
        counted += b * T;
        if (performance.now() - lastYield >= yieldMs) {
          await yieldToEventLoop();
          lastYield = performance.now();
        }
      }
      const loss = total / counted;
      return { loss, perplexity: Math.exp(loss), tokens: counted };
    } finally {
      for (const p of [pin, ptg, pb, lossp]) rt.free(p);
      this.busy = null;
    }
  }

  /**
   * Streams generated text as an async iterator of pieces. Options: maxTokens (100),
   * temperature (1; 0 = greedy), topK (0 = off), topP (1 = off), seed, stop (strings that
   * end the text, not included), signal, onToken(piece, tokens) (called with each piece the
   * iterator yields and the number of tokens generated so far), yieldMs (16).
   */
  async *generate(prompt = '', opts = {}) {
    this.idle();
    this.decoderConfig('generate');
    const rt = this.rt;
    if (!this.tokenizer) throw new WfError('WF_ERR_STATE', 'the model has no tokenizer yet: train it on text first');
    const maxTokens = opts.maxTokens ?? 100;
    if (!Number.isInteger(maxTokens) || maxTokens < 0) throw new WfError('WF_ERR_ARG', `maxTokens must be an integer >= 0, not ${maxTokens}`);
    const stops = [].concat(opts.stop ?? []).filter((s) => s.length > 0);
    const signal = opts.signal;
    const yieldMs = yieldInterval(opts.yieldMs ?? 16);
    if (signal?.aborted) throw abortError(signal);
    let ids = this.tokenizer.encode(prompt.length ? prompt : '\n');
    const [sampling, tokp] = rt.allocMany([16, 4]);
    const base = sampling >>> 2;
    rt.f32[base] = opts.temperature ?? 1;
    rt.i32[base + 1] = opts.topK ?? 0;
    rt.f32[base + 2] = opts.topP ?? 1;
    rt.i32[base + 3] = this.tokenizer.vocabSize; // never ids the tokenizer cannot decode
    const seed = (opts.seed ?? Math.floor(Math.random() * 2 ** 32)) >>> 0;
    const decoder = new TextDecoder();
    this.busy = 'generation';
    let pending = ''; // text held back while it could still become a stop string
    const emit = (piece, count) => { opts.onToken?.(piece, count); return piece; };
    try {
      const pids = rt.putInt32(ids);
      try { this.call(rt.M._wf_model_gen_start(this.handle, pids, ids.length, seed)); } finally { rt.free(pids); }
      let lastYield = performance.now();
      for (let i = 0; i < maxTokens; i++) {
        if (signal?.aborted) throw abortError(signal);
        this.call(rt.M._wf_model_gen_next(this.handle, sampling, tokp));
        const id = rt.i32[tokp >>> 2];
        pending += decoder.decode(this.tokenizer.decodeBytes([id]), { stream: true });
        const hit = stops.map((s) => pending.indexOf(s)).filter((k) => k >= 0);
        if (hit.length) {
          const cut = Math.min(...hit);
          if (cut > 0) yield emit(pending.slice(0, cut), i + 1);
          pending = '';
          return;
        }
        // release all but the longest suffix that starts some stop string
        let keep = 0;
        for (const s of stops) {
          for (let k = Math.min(s.length - 1, pending.length); k > keep; k--) {
            if (s.startsWith(pending.slice(pending.length - k))) { keep = k; break; }
          }
        }
        if (pending.length > keep) {
          const out = pending.slice(0, pending.length - keep);
          pending = pending.slice(pending.length - keep);
          yield emit(out, i + 1);
        }
        if (performance.now() - lastYield >= yieldMs) {
          await yieldToEventLoop();
          lastYield = performance.now();
        }
      }
      pending += decoder.decode();
      if (pending) yield emit(pending, maxTokens);
    } finally {
      rt.free(sampling);
      rt.free(tokp);
      if (this.handle) this.busy = null;
    }
  }

  /** Generates and returns the whole text. Same options as generate. */
  async generateText(prompt = '', opts = {}) {
    let text = '';
    for await (const piece of this.generate(prompt, opts)) text += piece;
    return text;
  }

  /** The parameter tensors: [{name, shape, size, decay}] in table order (absent ones skipped). */
  tensors() {
    this.call();
    const rt = this.rt, out = [];
    const n = rt.modelInfo(this.handle).nTensors;
    rt.withBuffer(40, (p) => {
      for (let i = 0; i < n; i++) {
        this.call(rt.M._wf_model_get_tensor(this.handle, i, p));
        const b = p >>> 2;
        const size = rt.i32[b + 2], ndim = rt.i32[b + 3];
        if (!size) continue;
        out.push({
          name: rt.cstring(rt.u32[b]), offset: rt.i32[b + 1], size,
          shape: Array.from(rt.i32.subarray(b + 4, b + 4 + ndim)), decay: rt.i32[b + 8] === 1,
        });
      }
    });
    return out;
  }

  tensorInfo(name) {
    const t = this.tensors().find((x) => x.name === name);
    if (!t) throw new WfError('WF_ERR_ARG', `the model has no tensor "${name}"`);
    return t;
  }

  /** A copy of one parameter tensor's weights (Float32Array). */
  getTensor(name) {
    const t = this.tensorInfo(name);
    const base = (this.rt.M._wf_model_params(this.handle) >>> 2) + t.offset;
    return this.rt.f32.slice(base, base + t.size);
  }

  /** Overwrites one parameter tensor's weights with `values` (same number of elements). */
  setTensor(name, values) {
    this.idle();
    const t = this.tensorInfo(name);
    if (values.length !== t.size) throw new WfError('WF_ERR_ARG', `tensor "${name}" has ${t.size} elements, not ${values.length}`);
    const bad = Array.prototype.findIndex.call(values, (x) => !Number.isFinite(Math.fround(x)));
    if (bad >= 0) throw new WfError('WF_ERR_ARG', `value ${bad} of tensor "${name}" is ${values[bad]}; weights must be finite float32 numbers`);
    this.rt.f32.set(values, (this.rt.M._wf_model_params(this.handle) >>> 2) + t.offset);
  }

  /** Frees the model's wasm memory (and its tokenizer's). Using it afterwards throws. */
  dispose() {
    if (this.handle) this.rt.M._wf_model_free(this.handle);
    this.handle = 0;
    this.tokenizer?.dispose();
    this.tokenizer = null;
  }
}
