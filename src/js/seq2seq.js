// An encoder-decoder (arch 'encoder-decoder'): teacher-forced training on (source, target)
// pairs, greedy and beam-search decoding over the core's caches, and the cross-attention
// map of a decoded output. Pairs are strings (a char tokenizer shared by both sides) or
// arrays of ids. The two highest ids of the vocabulary are reserved: bos = vocabSize - 2
// starts every decoder input, eos = vocabSize - 1 ends every target. A view of a Model
// (view.js); its long calls (train, evaluate, decodeIds, translate, accuracy) are async.
import { WfError, throwIfAborted } from './errors.js';
import { Model } from './model.js';
import { Tokenizer } from './tokenizer.js';
import { ModelView } from './view.js';
import { checkKeys } from './options.js';
import { int32Ids } from './runtime.js';
import { OPTIM_FIELDS } from './config.js';
import { RUN_DEFAULTS } from './config.js';
import { TRAIN_DEFAULTS, beginRun, continueRun, nonNegativeInt, positiveInt, wholeRun, yielder, yieldInterval } from './training.js';

/** Seq2seq defaults under the caller's config: small enough to train in seconds. */
export const SEQ2SEQ_DEFAULTS = { nLayer: 2, nHead: 4, dModel: 64, dFF: 128, context: 32, maxBeam: 8 };
// The optimizer settings a new Seq2Seq starts with; train() changes only those it is given.
const TRAINING_DEFAULTS = { lr: 3e-3, weightDecay: 0.01, gradClip: 1 };
const BATCH_SIZE = 32; // pairs per step of train() and per forward of evaluate()

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

/** The keys of Seq2Seq.train()'s options. */
const SEQ2SEQ_TRAIN_KEYS = new Set(['steps', 'batchSize', 'seed', 'signal', 'onProgress', 'onWarning', 'onDivergence', 'keepSchedule',
  'yieldMs', ...OPTIM_FIELDS.map((f) => f.name).filter((n) => n !== 'start')]);
/** The keys of decodeIds()/translate() options, and of accuracy()'s and evaluate()'s. */
const DECODE_KEYS = new Set(['beam', 'maxTokens', 'signal']);
const ACCURACY_KEYS = new Set([...DECODE_KEYS, 'yieldMs']);
const EVALUATE_KEYS = new Set(['batchSize', 'signal', 'yieldMs']);

export class Seq2Seq extends ModelView {
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
        model.setOptimizer(TRAINING_DEFAULTS);
      } catch (e) {
        model.dispose();
        throw e;
      }
      return new Seq2Seq(model, true);
    } finally {
      built?.dispose();
    }
  }

  /**
   * A view of a Model whose arch is 'encoder-decoder', e.g. one loaded from a checkpoint.
   * The model stays the caller's: the view's dispose() leaves it alone.
   * @example const s2s = Seq2Seq.from(await loadModel(bytes));
   */
  static from(model) {
    return new Seq2Seq(ModelView.checkArch(model, 'encoder-decoder', 'Seq2Seq'), false);
  }

  /** The char tokenizer shared by sources and targets, or null (ids only). */
  get tokenizer() { return this.model.tokenizer; }
  /** Id that starts every decoder input: vocabSize - 2. */
  get bos() { return this.config.vocabSize - 2; }
  /** Id that ends every target: vocabSize - 1. */
  get eos() { return this.config.vocabSize - 1; }

  /** Ids of a string (through the tokenizer) or a copy of an id array. */
  ids(x) {
    this.core.live();
    if (typeof x !== 'string') return x instanceof Int32Array ? x.slice() : int32Ids(x);
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
    const ctx = this.config.context, bos = this.bos, eos = this.eos;
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
      inputs[b * T] = bos;
      inputs.set(t, b * T + 1);
      targets.set(t, b * T);
      targets[b * T + t.length] = eos;
      lengths[b] = t.length + 1;
    });
    return { src, srcLengths, inputs, targets, lengths, B, T, S };
  }

  /** A batch, or pairs made into one. */
  #batch(batchOrPairs) {
    return Array.isArray(batchOrPairs) ? this.makeBatch(batchOrPairs) : batchOrPairs;
  }

  /**
   * One optimizer step on a batch ({src, srcLengths?, inputs, targets, lengths?, B, T, S})
   * or on [source, target] pairs. Returns {loss, gradNorm, lr, step}.
   * @example s2s.trainStep([['abc', 'cba'], ['hello', 'olleh']]);
   */
  trainStep(batchOrPairs) {
    const core = this.core;
    core.idle();
    return core.stepBatch(this.#batch(batchOrPairs));
  }

  /**
   * Evaluation forward (no dropout) of a batch or pairs: {loss (null without targets),
   * logits: Float32Array [B*T*vocabSize]}.
   * @example const { loss, logits } = s2s.forward([['abc', 'cba']]);
   */
  forward(batchOrPairs) {
    const core = this.core;
    core.idle();
    return core.forwardBatch(this.#batch(batchOrPairs));
  }

  /**
   * Trains on [source, target] pairs, sampling batches with a seeded generator: a run of the
   * core's on these batches (its schedule, divergence rules and roll-back copy, as a text's),
   * driven to its end and ended. Options: steps (1000), batchSize (32), and
   * the optimizer settings lr, weightDecay, gradClip, minLrRatio, beta1, beta2, eps (each
   * given one changes the model's; the others stay: a new Seq2Seq starts at lr 3e-3,
   * weightDecay 0.01, gradClip 1), warmup (steps/10, at most 100), decaySteps (the rest:
   * cosine), keepSchedule, seed, signal (AbortSignal), onProgress({step, steps, loss, lr,
   * gradNorm, tokensPerSecond, elapsed, eta}), onDivergence ('rollback' or 'stop'), yieldMs
   * (30). Resolves to {steps, step, loss, tokens, elapsed, tokensPerSecond}; an abort rejects
   * with the signal's reason (an AbortError unless abort(reason) gave one) and keeps the steps
   * done. A call refused before its first step leaves the optimizer settings as they were.
   * @example
   * const pairs = words.map((w) => [w, [...w].reverse().join('')]);
   * const s2s = await createSeq2Seq({ dModel: 32 }, { texts: words });
   * await s2s.train(pairs, { steps: 400, onProgress: (p) => console.log(p.step, p.loss) });
   */
  async train(pairs, opts = {}) {
    checkKeys(opts, SEQ2SEQ_TRAIN_KEYS, 'Seq2Seq train() options');
    const core = this.core, h = core.idle();
    if (!pairs?.length) throw new WfError('WF_ERR_ARG', 'no pairs to train on');
    const B = positiveInt('batchSize', opts.batchSize ?? BATCH_SIZE);
    const steps = positiveInt('steps', opts.steps ?? TRAIN_DEFAULTS.steps);
    const encoded = pairs.map(([s, t]) => [this.ids(s), this.ids(t)]); // ids once, then batches of random pairs
    for (const pair of encoded) this.makeBatch([pair]); // every pair makes a batch: refused before anything begins
    if (opts.onDivergence !== undefined && opts.onDivergence !== 'rollback' && opts.onDivergence !== 'stop') {
      throw new WfError('WF_ERR_ARG', `onDivergence must be "rollback" or "stop", not ${JSON.stringify(opts.onDivergence)}`);
    }
    // the core's run on the caller's batches: its schedule, bound, spike rule and roll-back
    const settings = { ...RUN_DEFAULTS, steps, batchSize: B, evalInterval: 0, rollback: opts.onDivergence === 'stop' ? 0 : 1,
      ...(opts.keepSchedule ? {} : { warmup: opts.warmup ?? -1, decaySteps: opts.decaySteps ?? -1 }) };
    for (const k of ['warmup', 'decaySteps']) if (settings[k] !== -1) nonNegativeInt(k, settings[k]);
    const next = rng(opts.seed ?? 1);
    return wholeRun(core, opts, () => beginRun(core, opts, settings, () => core.rt.runBegin(h, settings, !!opts.keepSchedule, 0, 0)),
      () => continueRun(core, { signal: opts.signal, onProgress: opts.onProgress, yieldMs: opts.yieldMs }, () => {
        const chosen = [];
        for (let i = 0; i < B; i++) chosen.push(encoded[Math.floor(next() * encoded.length)]);
        return this.makeBatch(chosen);
      }));
  }

  /**
   * Mean cross-entropy per target token (eos included) over pairs: resolves to {loss,
   * tokens}. Options: batchSize (32), signal, yieldMs (30).
   * @example const { loss } = await s2s.evaluate(heldOut);
   */
  async evaluate(pairs, opts = {}) {
    checkKeys(opts, EVALUATE_KEYS, 'Seq2Seq evaluate() options');
    const { batchSize = BATCH_SIZE, signal, yieldMs = TRAIN_DEFAULTS.yieldMs } = opts;
    const core = this.core;
    core.idle();
    positiveInt('batchSize', batchSize);
    const clock = yielder(yieldInterval(yieldMs));
    throwIfAborted(signal);
    return core.busyWith('evaluation', async () => {
      let total = 0, tokens = 0;
      for (let i = 0; i < pairs.length; i += batchSize) {
        throwIfAborted(signal);
        const batch = this.makeBatch(pairs.slice(i, i + batchSize));
        const n = batch.lengths.reduce((a, b) => a + b, 0);
        total += core.forwardBatch(batch, { logits: false }).loss * n;
        tokens += n;
        if (clock.due) await clock.yield();
      }
      return { loss: total / tokens, tokens };
    });
  }

  /** One decode, the model held by the caller: {ids without eos, finished}. */
  #decode(source, { beam = 1, maxTokens } = {}) {
    const core = this.core, src = this.ids(source), eos = this.eos;
    const ids = core.rt.beamSearch(core.live(), src, this.bos, eos, beam, maxTokens ?? this.config.context);
    const finished = ids.length > 0 && ids[ids.length - 1] === eos;
    return { ids: finished ? ids.subarray(0, ids.length - 1) : ids, finished };
  }

  /**
   * Decodes one source (string or ids): greedy (beam 1) or beam search of width beam (at
   * most config.maxBeam), up to maxTokens (default: the context) new tokens. Resolves to
   * {ids: Int32Array without eos, finished: whether eos ended it}. Options also: signal.
   * @example const { ids } = await s2s.decodeIds([5, 6, 7], { beam: 4 });
   */
  async decodeIds(source, opts = {}) {
    checkKeys(opts, DECODE_KEYS, 'Seq2Seq decode options');
    this.core.idle();
    throwIfAborted(opts.signal);
    return this.#decode(source, opts);
  }

  /**
   * Decodes a string to a string (needs the tokenizer). Options as decodeIds.
   * @example await s2s.translate('stressed', { beam: 4 }); // 'desserts' once trained to reverse
   */
  async translate(text, opts = {}) {
    this.core.live(); // a disposed model says so before anything else
    if (!this.tokenizer) throw new WfError('WF_ERR_STATE', 'this model has no tokenizer: use decodeIds');
    const { ids } = await this.decodeIds(text, opts);
    // ids the tokenizer does not know (bos, unused ids) are dropped
    return this.tokenizer.decode(ids.filter((id) => id < this.tokenizer.vocabSize));
  }

  /**
   * Exact-match accuracy of decoding every source against its target, in [0, 1]. Options:
   * beam, maxTokens (as decodeIds), signal, yieldMs (30).
   * @example const acc = await s2s.accuracy(heldOut, { beam: 4 });
   */
  async accuracy(pairs, opts = {}) {
    checkKeys(opts, ACCURACY_KEYS, 'Seq2Seq accuracy() options');
    const core = this.core;
    core.idle();
    const clock = yielder(yieldInterval(opts.yieldMs ?? TRAIN_DEFAULTS.yieldMs));
    throwIfAborted(opts.signal);
    return core.busyWith('decoding', async () => {
      let good = 0;
      for (const [s, t] of pairs) {
        throwIfAborted(opts.signal);
        const { ids, finished } = this.#decode(s, opts);
        const want = this.ids(t);
        good += finished && ids.length === want.length && ids.every((v, i) => v === want[i]) ? 1 : 0;
        if (clock.due) await clock.yield();
      }
      return good / pairs.length;
    });
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
    const core = this.core, layers = [], n = cfg.nHead * T * S;
    for (let l = 0; l < cfg.nLayer; l++) layers.push(core.rt.crossAttention(core.live(), l, n));
    return { nHead: cfg.nHead, T, S, layers };
  }
}
