// An encoder-decoder (arch 'encoder-decoder'): teacher-forced training on (source, target)
// pairs, greedy and beam-search decoding over the core's caches, and the cross-attention
// map of a decoded output. Pairs are strings (a char tokenizer shared by both sides) or
// arrays of ids. The two highest ids of the vocabulary are reserved: bos = vocabSize - 2
// starts every decoder input, eos = vocabSize - 1 ends every target.
import { WfError } from './runtime.js';
import { Model } from './model.js';
import { Tokenizer } from './tokenizer.js';
import { readStepInfo, withBatch } from './batch.js';

/** Seq2seq defaults under the caller's config: small enough to train in seconds. */
export const SEQ2SEQ_DEFAULTS = { nLayer: 2, nHead: 4, dModel: 64, dFF: 128, context: 32, maxBeam: 8 };
// The optimizer settings a new Seq2Seq starts with; train() changes only those it is given.
const TRAINING_DEFAULTS = { lr: 3e-3, weightDecay: 0.01, gradClip: 1 };

/** A small seeded generator (mulberry32) for batch sampling. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Seq2Seq {
  /** @internal use createSeq2Seq */
  constructor(model) {
    /** The underlying Model: tensors(), getTensor(), setTensor(), memory(), optimizer. */
    this.model = model;
  }

  /**
   * @internal use createSeq2Seq. With `texts`, a char tokenizer is built from them and
   * vocabSize defaults to its size + 2 (bos, eos). A tokenizer given is copied: the caller
   * keeps (and disposes) theirs.
   * @param {import('./runtime.js').Runtime} rt
   * @param {object} config a partial config over SEQ2SEQ_DEFAULTS; arch is 'encoder-decoder'
   * @param {{texts?: string[], tokenizer?: Tokenizer}} [opts]
   */
  static create(rt, config = {}, opts = {}) {
    // the model copies the tokenizer (Model.create); one built here from texts is freed after
    const built = !opts.tokenizer && opts.texts ? Tokenizer.fromText(rt, opts.texts.join('')) : null;
    try {
      const tokenizer = opts.tokenizer ?? built;
      const full = { ...SEQ2SEQ_DEFAULTS, ...config, arch: 'encoder-decoder' };
      if (full.vocabSize === undefined) {
        if (!tokenizer) {
          throw new WfError('WF_ERR_CONFIG', 'give vocabSize, or texts to build a tokenizer from (vocabSize = its size + 2)');
        }
        full.vocabSize = tokenizer.vocabSize + 2;
      }
      if (tokenizer && tokenizer.vocabSize + 2 > full.vocabSize) {
        const n = tokenizer.vocabSize;
        throw new WfError('WF_ERR_CONFIG', `the tokenizer has ${n} tokens; with bos and eos the vocabulary needs ${n + 2}, not ${full.vocabSize}`);
      }
      const model = Model.create(rt, full, { tokenizer });
      try {
        model.setOptimizerNow(TRAINING_DEFAULTS);
      } catch (e) {
        model.dispose();
        throw e;
      }
      return new Seq2Seq(model);
    } finally {
      built?.dispose();
    }
  }

  /**
   * Wraps a Model whose arch is 'encoder-decoder', e.g. one loaded from a checkpoint.
   * @example const s2s = Seq2Seq.from(await loadModel(bytes));
   */
  static from(model) {
    if (model.config.arch !== 'encoder-decoder') {
      throw new WfError('WF_ERR_STATE', `Seq2Seq needs an encoder-decoder; this model is a ${model.config.arch}`);
    }
    return new Seq2Seq(model);
  }

  get rt() { return this.model.rt; }
  get handle() { return this.model.handle; }
  /** The model's config (strings and booleans). */
  get config() { return this.model.config; }
  get step() { return this.model.step; }
  get paramCount() { return this.model.paramCount; }
  /** The char tokenizer shared by sources and targets, or null (ids only). */
  get tokenizer() { return this.model.tokenizer; }
  /** Id that starts every decoder input: vocabSize - 2. */
  get bos() { return this.config.vocabSize - 2; }
  /** Id that ends every target: vocabSize - 1. */
  get eos() { return this.config.vocabSize - 1; }

  /**
   * Changes optimizer settings; the rest stay (see Model.setOptimizer).
   * @example s2s.setOptimizer({ lr: 1e-3, gradClip: 0.5 });
   */
  setOptimizer(settings) { this.model.setOptimizer(settings); }

  /** Ids of a string (through the tokenizer) or a copy of an id array. */
  ids(x) {
    this.model.call();
    if (typeof x !== 'string') return Int32Array.from(x);
    if (!this.tokenizer) throw new WfError('WF_ERR_STATE', 'this model has no tokenizer: create it with texts, or pass ids');
    return this.tokenizer.encode(x);
  }

  /**
   * A teacher-forced batch from [source, target] pairs: src = source ids, inputs = bos +
   * target, targets = target + eos; both sides padded to their longest, with lengths.
   * @param {Array<[string|number[], string|number[]]>} pairs
   * @returns {import('./batch.js').Batch}
   * @example const batch = s2s.makeBatch([['abc', 'cba'], ['hello', 'olleh']]);
   */
  makeBatch(pairs) {
    if (!pairs.length) throw new WfError('WF_ERR_ARG', 'no pairs');
    const ctx = this.config.context;
    const enc = pairs.map(([s, t]) => [this.ids(s), this.ids(t)]);
    const S = Math.max(...enc.map(([s]) => s.length));
    const T = Math.max(...enc.map(([, t]) => t.length)) + 1;
    if (S < 1) throw new WfError('WF_ERR_ARG', 'every source is empty');
    if (S > ctx || T > ctx) {
      throw new WfError('WF_ERR_ARG', `the longest source has ${S} tokens and the longest target ${T - 1} (+ eos); the context is ${ctx}`);
    }
    const B = pairs.length;
    const src = new Int32Array(B * S), srcLengths = new Int32Array(B);
    const inputs = new Int32Array(B * T), targets = new Int32Array(B * T).fill(-1), lengths = new Int32Array(B);
    enc.forEach(([s, t], b) => {
      if (!s.length) throw new WfError('WF_ERR_ARG', `pair ${b} has an empty source`);
      src.set(s, b * S);
      srcLengths[b] = s.length;
      inputs[b * T] = this.bos;
      inputs.set(t, b * T + 1);
      targets.set(t, b * T);
      targets[b * T + t.length] = this.eos;
      lengths[b] = t.length + 1;
    });
    return { src, srcLengths, inputs, targets, lengths, B, T, S };
  }

  /**
   * One optimizer step on a batch ({src, srcLengths?, inputs, targets, lengths?, B, T, S})
   * or on [source, target] pairs. Returns {loss, gradNorm, lr, step}.
   * @example s2s.trainStep([['abc', 'cba'], ['hello', 'olleh']]);
   */
  trainStep(batchOrPairs) {
    this.model.idle();
    const batch = Array.isArray(batchOrPairs) ? this.makeBatch(batchOrPairs) : batchOrPairs;
    const rt = this.rt;
    return withBatch(rt, batch, this.config.dModel, (pb) => rt.withBuffer(16, (info) => {
      this.model.call(rt.M._wf_model_step(this.handle, pb, info));
      return readStepInfo(rt, info);
    }));
  }

  /**
   * Evaluation forward (no dropout) of a batch or pairs: {loss (null without targets),
   * logits: Float32Array [B*T*vocabSize]}.
   * @example const { loss, logits } = s2s.forward([['abc', 'cba']]);
   */
  forward(batchOrPairs) {
    this.model.idle();
    const batch = Array.isArray(batchOrPairs) ? this.makeBatch(batchOrPairs) : batchOrPairs;
    const rt = this.rt, V = this.config.vocabSize;
    return withBatch(rt, batch, this.config.dModel, (pb) => rt.withBuffer(4, (lossp) => {
      this.model.call(rt.M._wf_model_forward(this.handle, pb, lossp));
      const lp = rt.M._wf_model_logits(this.handle) >>> 2;
      return { loss: batch.targets ? rt.f32[lossp >>> 2] : null, logits: rt.f32.slice(lp, lp + batch.B * batch.T * V) };
    }));
  }

  /**
   * Trains on [source, target] pairs, sampling batches with a seeded generator, through
   * Model's training loop. Options: steps (1000), batchSize (32), and the optimizer settings
   * lr, weightDecay, gradClip, minLrRatio, beta1, beta2, eps (each given one changes the
   * model's; the others stay: a new Seq2Seq starts at lr 3e-3, weightDecay 0.01, gradClip
   * 1), warmup (steps/10, at most 100), decaySteps (the rest: cosine), keepSchedule, seed,
   * signal (AbortSignal), onProgress({step, steps, loss, lr, gradNorm, tokensPerSecond,
   * elapsed, eta}), yieldMs (30). Resolves to {steps, step, loss, tokens, seconds,
   * tokensPerSecond}; an abort rejects with an AbortError and keeps the steps done. A call
   * refused before its first step leaves the optimizer settings as they were.
   * @example
   * const pairs = words.map((w) => [w, [...w].reverse().join('')]);
   * const s2s = await createSeq2Seq({ dModel: 32 }, { texts: words });
   * await s2s.train(pairs, { steps: 400, onProgress: (p) => console.log(p.step, p.loss) });
   */
  async train(pairs, opts = {}) {
    this.model.idle();
    if (!pairs?.length) throw new WfError('WF_ERR_ARG', 'no pairs to train on');
    const B = opts.batchSize ?? 32;
    if (!Number.isInteger(B) || B < 1) throw new WfError('WF_ERR_ARG', `batchSize must be an integer >= 1, not ${B}`);
    const rt = this.rt;
    let encoded = null, next = null;
    return this.model.runTraining(opts, {
      prepare: () => {
        encoded = pairs.map(([s, t]) => [this.ids(s), this.ids(t)]); // ids once, then batches of random pairs
        next = rng(opts.seed ?? 1);
      },
      step: () => {
        const chosen = [];
        for (let i = 0; i < B; i++) chosen.push(encoded[Math.floor(next() * encoded.length)]);
        const batch = this.makeBatch(chosen);
        const info = withBatch(rt, batch, this.config.dModel, (pb) => rt.withBuffer(16, (p) => {
          this.model.call(rt.M._wf_model_step(this.handle, pb, p));
          return readStepInfo(rt, p);
        }));
        return { ...info, tokens: batch.B * batch.T };
      },
    });
  }

  /**
   * Mean cross-entropy per target token (eos included) over pairs: {loss, tokens}.
   * @example const { loss } = s2s.evaluate(heldOut);
   */
  evaluate(pairs, { batchSize = 32 } = {}) {
    let total = 0, tokens = 0;
    for (let i = 0; i < pairs.length; i += batchSize) {
      const batch = this.makeBatch(pairs.slice(i, i + batchSize));
      const n = batch.lengths.reduce((a, b) => a + b, 0);
      total += this.forward(batch).loss * n;
      tokens += n;
    }
    return { loss: total / tokens, tokens };
  }

  /**
   * Decodes one source (string or ids): greedy (beam 1) or beam search of width beam (at
   * most config.maxBeam), up to maxTokens (default: the context) new tokens. Returns
   * {ids: Int32Array without eos, finished: whether eos ended it}.
   * @example const { ids } = s2s.decodeIds([5, 6, 7], { beam: 4 });
   */
  decodeIds(source, { beam = 1, maxTokens } = {}) {
    this.model.idle();
    const rt = this.rt, cfg = this.config;
    const src = this.ids(source);
    const maxNew = maxTokens ?? cfg.context;
    const psrc = rt.putInt32(src);
    try {
      return rt.withBuffer(maxNew * 4 + 4, (out) => {
        this.model.call(rt.M._wf_model_beam_search(this.handle, psrc, src.length, this.bos, this.eos, beam, maxNew, out, out + maxNew * 4));
        const n = rt.i32[(out + maxNew * 4) >>> 2];
        const ids = rt.i32.slice(out >>> 2, (out >>> 2) + n);
        const finished = n > 0 && ids[n - 1] === this.eos;
        return { ids: finished ? ids.subarray(0, n - 1) : ids, finished };
      });
    } finally {
      rt.free(psrc);
    }
  }

  /**
   * Decodes a string to a string (needs the tokenizer). Options as decodeIds.
   * @example s2s.translate('stressed', { beam: 4 }); // 'desserts' once trained to reverse
   */
  translate(text, opts = {}) {
    this.model.call(); // a disposed model says so before anything else
    if (!this.tokenizer) throw new WfError('WF_ERR_STATE', 'this model has no tokenizer: use decodeIds');
    const { ids } = this.decodeIds(text, opts);
    // ids the tokenizer does not know (bos, unused ids) are dropped
    return this.tokenizer.decode(ids.filter((id) => id < this.tokenizer.vocabSize));
  }

  /**
   * Exact-match accuracy of decoding every source against its target, in [0, 1].
   * @example const acc = s2s.accuracy(heldOut, { beam: 4 });
   */
  accuracy(pairs, opts = {}) {
    let good = 0;
    for (const [s, t] of pairs) {
      const { ids, finished } = this.decodeIds(s, opts);
      const want = this.ids(t);
      good += finished && ids.length === want.length && ids.every((v, i) => v === want[i]) ? 1 : 0;
    }
    return good / pairs.length;
  }

  /**
   * The cross-attention weights of a decoded (or any) output over its source, from a
   * teacher-forced forward: rows are the output tokens then eos, columns the source tokens.
   * Returns {nHead, T, S, layers: Float32Array[]} with each layer [nHead * T * S].
   * @example const map = s2s.crossAttention('stressed', 'desserts').layers[1];
   */
  crossAttention(source, output) {
    const src = this.ids(source), out = this.ids(output);
    const T = out.length + 1, S = src.length, cfg = this.config;
    const inputs = new Int32Array(T);
    inputs[0] = this.bos;
    inputs.set(out, 1);
    this.forward({ src, inputs, B: 1, T, S });
    const rt = this.rt, layers = [], n = cfg.nHead * T * S;
    for (let l = 0; l < cfg.nLayer; l++) {
      const p = rt.M._wf_model_attention(this.handle, l, 1) >>> 2;
      layers.push(rt.f32.slice(p, p + n));
    }
    return { nHead: cfg.nHead, T, S, layers };
  }

  /** Frees the wasm memory (and the tokenizer's). Using the model afterwards throws. */
  dispose() { this.model.dispose(); }
}
