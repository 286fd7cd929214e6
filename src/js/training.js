// Training and evaluation loops over a ModelHandle: the loop every kind of model trains
// with (runTraining: schedule, abort, progress, validation, yields), a decoder's training
// and evaluation on text (Model.train, Model.evaluate), and the option checks they share.
import { WfError, throwIfAborted } from './errors.js';
import { OPTIM_FIELDS, optimOf } from './config.js';
import { checkKeys, float32Plain, show } from './options.js';
import { HeapBatch } from './batch.js';
import { MEMORY_BUDGET } from './runtime.js';

/** The defaults of train()'s own options (the optimizer's are OPTIM_DEFAULTS). */
export const TRAIN_DEFAULTS = Object.freeze({ steps: 1000, valFraction: 0.1, evalInterval: 100, evalBatches: 4, evalMode: 'sample', yieldMs: 30 });

export const yieldToEventLoop = typeof setImmediate === 'function'
  ? () => new Promise((resolve) => setImmediate(resolve))
  : () => new Promise((resolve) => setTimeout(resolve, 0));

/** The keys of train()'s options: its own, the optimizer settings (start aside: where a
 * schedule starts is train()'s to say), and those of how it reads text. */
export const TRAIN_KEYS = new Set(['steps', 'batchSize', 'context', 'tokenizer', 'valFraction', 'evalInterval', 'evalBatches',
  'evalMode', 'keepSchedule', 'seed', 'signal', 'onProgress', 'onWarning', 'onDivergence', 'yieldMs', 'seconds', 'secondsDone', 'warmupFraction', ...OPTIM_FIELDS.map((f) => f.name).filter((n) => n !== 'start')]);

/** The keys of evaluate()'s options. */
export const EVALUATE_KEYS = new Set(['maxTokens', 'batchSize', 'signal', 'onWarning', 'yieldMs']);

/** Text or token ids as train() and evaluate() take them; anything else is a TypeError
 * that says what came instead. */
export function checkData(data, what) {
  const ok = typeof data === 'string' || ArrayBuffer.isView(data) || Array.isArray(data);
  if (!ok) throw new TypeError(`${what}() takes a text (a string) or token ids (an array or Int32Array), not ${show(data)}`);
  return data;
}

export function positiveInt(name, v) {
  if (!Number.isInteger(v) || v < 1) throw new WfError('WF_ERR_ARG', `${name} must be an integer >= 1, not ${show(v)}`);
  return v;
}

function nonNegativeInt(name, v) {
  if (!Number.isInteger(v) || v < 0) throw new WfError('WF_ERR_ARG', `${name} must be an integer >= 0, not ${show(v)}`);
  return v;
}

/**
 * The learning-rate factor of a time budget at p = training seconds so far / the budget: the
 * step schedule's shape with time in place of steps. A linear warmup over the first
 * `warmup` of the budget (from 1 % of the peak, so the first step learns), then a cosine from
 * the peak down to minLrRatio of it, reached as the budget ends. Validation time is not on the
 * clock, so the same budget gives the same schedule however often a run validates.
 */
export function budgetFactor(p, warmup, minLrRatio) {
  if (p < warmup) return Math.max(p / warmup, 0.01);
  const q = Math.min(1, (p - warmup) / Math.max(1e-12, 1 - warmup));
  return minLrRatio + (1 - minLrRatio) * 0.5 * (1 + Math.cos(Math.PI * q));
}

/** A time budget's options: {seconds, done, warmup} or null without `seconds`. */
function budgetOf(opts) {
  if (opts.seconds === undefined) {
    for (const k of ['secondsDone', 'warmupFraction']) if (opts[k] !== undefined) throw new WfError('WF_ERR_ARG', `${k} goes with seconds (a time budget)`);
    return null;
  }
  const seconds = opts.seconds, done = opts.secondsDone ?? 0, warmup = opts.warmupFraction ?? 0.05;
  if (typeof seconds !== 'number' || !(seconds > 0) || seconds === Infinity) throw new WfError('WF_ERR_ARG', `seconds must be a finite number > 0, not ${show(seconds)}`);
  if (typeof done !== 'number' || !(done >= 0 && done < seconds)) throw new WfError('WF_ERR_ARG', `secondsDone must be a number in [0, seconds = ${seconds}), not ${show(done)}`);
  if (typeof warmup !== 'number' || !(warmup >= 0 && warmup < 1)) throw new WfError('WF_ERR_ARG', `warmupFraction must be a number in [0, 1), not ${show(warmup)}`);
  return { seconds, done, warmup };
}

/** A number of milliseconds between yields to the event loop: >= 0 (Infinity: never). */
export function yieldInterval(v) {
  if (typeof v !== 'number' || !(v >= 0)) throw new WfError('WF_ERR_ARG', `yieldMs must be a number >= 0, not ${show(v)}`);
  return v;
}

/** The clock of a loop that yields to the event loop every yieldMs: `if (clock.due) await
 * clock.yield()` (a loop that is not due awaits nothing, not even a resolved promise). */
export function yielder(yieldMs) {
  let last = performance.now();
  return {
    get due() { return performance.now() - last >= yieldMs; },
    async yield() {
      await yieldToEventLoop();
      last = performance.now();
    },
  };
}

/** A decoder's config, or a WF_ERR_STATE naming the class an encoder or encoder-decoder
 * wants: train, evaluate and generate work on text through the next-token objective. */
export function decoderConfig(core, what) {
  const cfg = core.config;
  if (cfg.arch !== 'decoder') {
    const use = cfg.arch === 'encoder' ? 'Encoder.from(model)' : 'Seq2Seq.from(model)';
    throw new WfError('WF_ERR_STATE', `${what}() works on decoders; this model is an ${cfg.arch}: use ${use}`);
  }
  return cfg;
}

/**
 * The training loop of every kind of model (Model.train, Seq2Seq.train): sets this call's
 * optimizer settings and schedule from opts, then takes opts.steps steps of source.step()
 * (which returns a step info and the tokens it trained on) with abort, progress,
 * validation (source.validate() at multiples of source.validateEvery, counting earlier
 * steps, and at the end) and yields to the event loop. With source.lossBound, each step's
 * loss and, after the last step, source.lossAfter() (the last batch's loss with the last
 * update applied) must stay under it, and the losses must not climb above the call's best
 * (spikeWatch), else the call diverged. source.prepare() runs first and may throw;
 * source.cleanup() runs last, whatever happened. Everything up to the first step is undone
 * if it fails: the optimizer settings are restored.
 */
export async function runTraining(core, opts, source) {
  const budget = budgetOf(opts);
  // with a time budget, steps (if given) only caps the call
  const steps = budget && opts.steps === undefined ? Infinity : positiveInt('steps', opts.steps ?? TRAIN_DEFAULTS.steps);
  const onDivergence = opts.onDivergence ?? 'rollback';
  if (onDivergence !== 'rollback' && onDivergence !== 'stop') {
    throw new WfError('WF_ERR_ARG', `onDivergence must be "rollback" or "stop", not ${show(onDivergence)}`);
  }
  const yieldMs = yieldInterval(opts.yieldMs ?? TRAIN_DEFAULTS.yieldMs);
  const signal = opts.signal;
  const start = core.step;
  const before = core.optimizer;
  let last = null, valLoss = null, tokens = 0, snapshot = null, s = 0, trained = 0, peak = null;
  try {
    throwIfAborted(signal);
    core.idle();
    // refused before the batch sampler moves, so that the model is exactly as it was
    if (core.trainable().trainable === 0) {
      throw new WfError('WF_ERR_STATE', "every tensor is frozen: nothing to train (make some trainable first: unfreeze('all'), addLora())");
    }
    core.rt.modelTrainState(core.live()); // gradients and moments, if the model never trained: the roll-back copy counts them
    // the state this call started from, taken before the call's buffers are allocated (so
    // that the snapshot's transient buffer is the same heap block call after call): a
    // diverged call goes back to it (see diverged()). A model whose copy would not fit in
    // the wasm heap trains without one, and is told so.
    if (onDivergence === 'rollback') {
      snapshot = core.snapshot();
      if (!snapshot) {
        const gb = (x) => (x / 1e9).toFixed(2);
        (opts.onWarning ?? console.warn)(`this model's roll-back copy does not fit in the wasm heap (taking it and putting it back `
          + `would need ${gb(core.rollbackBytes())} GB beside the ${gb(core.rt.heapInUse())} GB in use; at most ${gb(MEMORY_BUDGET)} GB): `
          + "if this call diverges, it stops there and says how many of its steps stay applied (onDivergence 'stop' does so without this warning)");
      }
    }
    const spiked = source.lossBound === undefined ? null : spikeWatch();
    source.prepare();
    const schedule = optimOf(opts);
    if (budget) {
      // the schedule follows the clock: each step's lr is set from the budget's progress
      peak = schedule.lr ?? before.lr;
      Object.assign(schedule, { start, warmup: 0, decaySteps: 0 });
    } else if (!opts.keepSchedule) {
      // a schedule for this call: warmup over its first steps, cosine decay to its last
      const warmup = opts.warmup ?? Math.min(100, Math.floor(steps / 10));
      schedule.start = start;
      schedule.warmup = warmup;
      schedule.decaySteps = opts.decaySteps ?? Math.max(0, steps - warmup);
    }
    core.idle();
    core.setOptimizer(schedule);
    core.busy = 'training';
    const t0 = performance.now();
    let lastYield = t0;
    const minLr = schedule.minLrRatio ?? before.minLrRatio;
    let lastValidated = 0;
    for (s = 1; s <= steps; s++) {
      throwIfAborted(signal);
      if (budget) {
        const p = (budget.done + trained) / budget.seconds;
        if (p >= 1) { s--; break; }
        core.setOptimizer({ lr: peak * budgetFactor(p, budget.warmup, minLr) });
      }
      const t = performance.now();
      last = source.step();
      trained += (performance.now() - t) / 1000;
      if (source.lossBound !== undefined && !(last.loss <= source.lossBound)) {
        throw new WfError('WF_ERR_DIVERGED', `training diverged: the loss of step ${last.step} is ${last.loss.toPrecision(4)}, `
          + `worse than the ${source.lossBound.toPrecision(3)} that marks a model far below random guessing (lr ${float32Plain(last.lr)})`);
      }
      const spike = spiked?.(last.loss);
      if (spike?.diverged) {
        throw new WfError('WF_ERR_DIVERGED', `training diverged: the mean loss of steps ${last.step - SPIKE.window + 1}-${last.step} is `
          + `${spike.mean.toFixed(3)}, ${(spike.mean - spike.best).toFixed(3)} above the lowest this call had reached (${spike.best.toFixed(3)}), `
          + `more than the ${spike.allowed.toFixed(3)} that noise explains (lr ${float32Plain(last.lr)})`);
      }
      tokens += last.tokens;
      const every = source.validateEvery ?? 0;
      const validated = every > 0 && ((start + s) % every === 0 || s === steps);
      if (validated) {
        valLoss = source.validate();
        lastValidated = s;
      }
      const now = performance.now();
      if (opts.onProgress && (validated || now - lastYield >= yieldMs || s === steps)) opts.onProgress(progress(validated));
      
      if (now - lastYield >= yieldMs) {
        await yieldToEventLoop();
        lastYield = performance.now();
      }
    }
    s = Math.min(s, steps); // the steps taken: the loop's index ran one past the last
    if (!last) throw new WfError('WF_ERR_ARG', `the time budget was already spent (secondsDone ${budget.done} of ${budget.seconds}): nothing to train`);
    if (budget) {
      // a budget ends on the clock, not at a known step: its last validation happens here
      if ((source.validateEvery ?? 0) > 0 && lastValidated !== s) valLoss = source.validate();
      opts.onProgress?.(progress(lastValidated !== s && (source.validateEvery ?? 0) > 0));
    }
    // Each step's loss is taken before its update, so the loop never saw the last update's
    // effect: the loss on the last training batch after it is held to the same bound (not
    // the validation loss, which a model learning its text by heart may take past it).
    if (source.lossBound !== undefined && source.lossAfter) {
      const after = source.lossAfter();
      if (!(after <= source.lossBound)) {
        throw new WfError('WF_ERR_DIVERGED', `training diverged: after the call's last step (step ${core.step}) the loss is ${after.toPrecision(4)}, `
          + `worse than the ${source.lossBound.toPrecision(3)} that marks a model far below random guessing (lr ${float32Plain(last.lr)})`);
      }
    }
    // `seconds` means a time budget, in the options, the progress and here; the call's
    // wall-clock time is `elapsed`, as in the progress
    const elapsed = (performance.now() - t0) / 1000;
    return {
      steps: s, step: core.step, loss: last.loss, valLoss, valBpc: source.valBpc ?? null, tokens, elapsed, tokensPerSecond: tokens / elapsed,
      trainSeconds: trained, ...(budget ? { seconds: budget.seconds, secondsDone: budget.done + trained } : {}),
    };

    function progress(validated) {
      const elapsed = (performance.now() - t0) / 1000;
      return {
        step: last.step, stepsDone: s, steps: Number.isFinite(steps) ? steps : null, lastStep: budget ? null : start + steps, loss: last.loss,
        valLoss, valBpc: source.valBpc ?? null, validated, lr: last.lr, gradNorm: last.gradNorm, tokensPerSecond: tokens / elapsed, elapsed,
        eta: budget ? Math.max(0, budget.seconds - budget.done - trained) : (elapsed / s) * (steps - s),
        ...(budget ? { secondsDone: budget.done + trained, seconds: budget.seconds } : {}),
      };
    }
  } catch (e) {
    if (core.h && core.step === start) {
      peak = null; // nothing trained: the settings go back as they were
      core.setOptimizer(before);
    } else if (core.h && (e.code === 'WF_ERR_DIVERGED' || e.code === 'WF_ERR_NUMERIC')) {
      const { error, restored } = diverged(core, e, onDivergence, snapshot, start, source);
      if (restored) peak = null; // rolled back with the rest of the state
      throw error;
    }
    throw e;
  } finally {
    // a budget's per-step lr is put back to its peak: the model's settings say what was asked
    if (budget && peak !== null && core.h) core.setOptimizer({ lr: peak });
    source.cleanup?.();
    core.busy = null;
  }
}

/**
 * The error a diverged call rejects with, saying exactly what state the model is in, and
 * whether the model was restored: with a snapshot (onDivergence 'rollback', the default), the
 * model is put back as it was when the call started, tokenizer aside (a tokenizer the call
 * learned is dropped with its steps); without one ('stop', or a model whose copy did not fit),
 * or when putting it back fails, the steps before the diverged one stay applied, and it says
 * how many. A step the core refused (a non-finite loss or update) changed nothing itself: the
 * message says so rather than the core's "weights and optimizer state are unchanged", which
 * holds for that step only.
 */
function diverged(core, e, onDivergence, snapshot, start, source) {
  const applied = core.step - start, advice = 'try a lower lr (or a smaller gradClip)';
  const steps = (n, word = '') => `${n} ${word}step${n === 1 ? '' : 's'}`;
  const refused = e.code === 'WF_ERR_NUMERIC' && /; the step was rejected and weights and optimizer state are unchanged/.test(e.message);
  const what = refused ? `step ${core.step + 1} was refused: ${e.message.replace(/; the step was rejected .*$/, '')} (that step changed nothing)` : e.message;
  const earlier = refused ? 'earlier ' : '';
  let why = onDivergence === 'stop' ? "onDivergence 'stop'" : 'no roll-back copy fitted in the wasm heap';
  if (snapshot) {
    try {
      core.restore(snapshot);
      source.rolledBack?.();
      return {
        restored: true,
        error: new WfError(e.code, `${what}; this call's ${steps(applied, `applied ${earlier}`)} ${applied === 1 ? 'was' : 'were'} rolled back: `
          + `the model is as it was at step ${start}, where the call started; ${advice}`),
      };
    } catch (failure) {
      why = `the roll-back failed: ${failure.message}`;
    }
  }
  return {
    restored: false,
    error: new WfError(e.code, `${what}; this call's ${steps(applied, earlier)} ${applied === 1 ? 'stays' : 'stay'} applied `
      + `(${why}: the model is at step ${core.step}); ${advice}`),
  };
}

/** What unknown characters become, by the call that reads them (warnUnknown). */
const UNKNOWN_USE = {
  train: { what: "the text's", then: 'they all train as <unk>. A new model learns its vocabulary from its first text.' },
  evaluate: { what: "the text's", then: 'the model reads them all as <unk>, and the loss counts its guesses of <unk> for them.' },
  prompt: { what: "the prompt's", then: 'the model reads them all as <unk>.' },
};

/** Tells (through onWarning, else console.warn) what share of a text's tokens a char
 * tokenizer does not know: they all become <unk>, id 0, and say nothing of the text. `use`
 * is the call that reads them: 'train', 'evaluate' or 'prompt' (generation). The words are
 * worked out once per token array and use (the handle keeps a text's ids across calls) and
 * said at every call. */
export function warnUnknown(tokenizer, text, tokens, onWarning, use = 'train') {
  if (tokenizer?.kind !== 'char' || tokens.length === 0) return;
  if (!unknownNotes.has(tokens)) unknownNotes.set(tokens, new Map());
  const notes = unknownNotes.get(tokens);
  if (!notes.has(use)) notes.set(use, unknownNote(tokenizer, text, tokens, use));
  const message = notes.get(use);
  if (message) (onWarning ?? console.warn)(message);
}
// token array -> use -> its note, or null when every character is known
const unknownNotes = new WeakMap();

function unknownNote(tokenizer, text, tokens, use) {
  let unknown = 0;
  for (const id of tokens) unknown += id === 0;
  if (unknown === 0) return null;
  const seen = new Set();
  for (const ch of text) {
    if (seen.size >= 5) break;
    if (tokenizer.encode(ch)[0] === 0) seen.add(ch);
  }
  const share = (100 * unknown) / tokens.length;
  const { what, then } = UNKNOWN_USE[use];
  return `${share < 0.1 ? share.toPrecision(2) : share.toFixed(1)}% of ${what} tokens (${unknown} of ${tokens.length}) are `
    + `characters the model's tokenizer does not know (${[...seen].map((c) => JSON.stringify(c)).join(', ')}${unknown > seen.size ? ', …' : ''}); `
    + then;
}

/** The cross-entropy beyond which a model over V tokens has diverged: random guessing
 * scores ln V, a fresh model about that; 1.5 ln V + 1 is far worse than guessing, where a
 * sound run never goes. */
export function lossBound(V) {
  return 1.5 * Math.log(V) + 1;
}

/** The loss-spike check (spikeWatch): its window in steps, the least rise it calls a
 * divergence (nats), and that rise in units of the losses' step-to-step noise. */
export const SPIKE = Object.freeze({ window: 20, margin: 1, noise: 4 });

/**
 * Watches one call's training losses for a climb that no noise explains: a run that diverges
 * without a non-finite value and below lossBound, its loss climbing from 1.3 back towards
 * ln V. Returns a function of each step's loss: null while its first window fills, then
 * {mean, best, allowed, diverged}. From step SPIKE.window on, the mean of the last SPIKE.window losses is held
 * against the lowest of the call's first loss (the model as the call found it) and every
 * earlier such mean; the call diverged when it is more than max(SPIKE.margin, SPIKE.noise x
 * the median change between consecutive losses of the window) above it.
 * Why these: a batch's loss varies around the model's true loss with some deviation s; the
 * median |change| between two batches is about s (0.95 s for a normal), and a mean of 20
 * varies by s / 4.5, so the allowance stands 4 s above the noisiest baseline (the first
 * loss, one batch). 1 nat is the floor: the model giving the text it predicts e^-1 = 0.37
 * of the probability it gave before. bench/loss-noise.mjs measures both: sound runs of the
 * micro and tiny presets (batch 16 down to 1, a second call's new warmup) rose at most 0.11
 * nats above their best (11 % of the allowance); a trained micro pushed to lr 0.03 and 0.1
 * rose 1.38 and 1.95 in its first 20 steps.
 */
export function spikeWatch() {
  const recent = []; // the last SPIKE.window losses
  let best = Infinity;
  return (loss) => {
    if (best === Infinity) best = loss;
    recent.push(loss);
    if (recent.length > SPIKE.window) recent.shift();
    if (recent.length < SPIKE.window) return null;
    const mean = recent.reduce((a, b) => a + b, 0) / recent.length;
    const changes = recent.slice(1).map((x, i) => Math.abs(x - recent[i])).sort((a, b) => a - b);
    const allowed = Math.max(SPIKE.margin, SPIKE.noise * changes[changes.length >> 1]);
    const reading = { mean, best, allowed, diverged: mean - best > allowed };
    best = Math.min(best, mean);
    return reading;
  };
}

/** Model.train: a decoder on text or ids, batches drawn by the core's sampler. */
export async function trainDecoder(core, data, opts = {}) {
  checkData(data, 'train');
  checkKeys(opts, TRAIN_KEYS, 'train() options');
  core.idle();
  const rt = core.rt;
  const cfg = decoderConfig(core, 'train');
  const B = positiveInt('batchSize', opts.batchSize ?? core.batchSize);
  const T = positiveInt('context', opts.context ?? cfg.context);
  const valFraction = opts.valFraction ?? TRAIN_DEFAULTS.valFraction;
  if (typeof valFraction !== 'number' || !(valFraction >= 0 && valFraction < 1)) {
    throw new WfError('WF_ERR_ARG', `valFraction (the validation split) must be a number in [0, 1), not ${show(valFraction)}`);
  }
  const evalInterval = nonNegativeInt('evalInterval', opts.evalInterval ?? TRAIN_DEFAULTS.evalInterval);
  const evalBatches = positiveInt('evalBatches', opts.evalBatches ?? TRAIN_DEFAULTS.evalBatches);
  const evalMode = opts.evalMode ?? TRAIN_DEFAULTS.evalMode;
  if (evalMode !== 'sample' && evalMode !== 'windows') throw new WfError('WF_ERR_ARG', `evalMode must be "sample" or "windows", not ${show(evalMode)}`);
  throwIfAborted(opts.signal);
  core.assertBatchFits(B, T);
  let tokens = null, built = null, ptok = 0, hb = null, hv = null; // hv: validation's batch, so hb keeps the last training one
  return runTraining(core, opts, {
    valBpc: null,
    validateEvery: valFraction > 0 ? evalInterval : 0,
    lossBound: lossBound(core.native.vocabSize),
    rolledBack: () => { if (built && core.tokenizer === built) core.tokenizer = null; },
    // a tokenizer this call builds joins the model only with its first step; nothing is
    // allocated before the checks
    prepare: () => {
      ({ tokens, built } = core.tokensOf(data, opts.tokenizer));
      if (!built && typeof data === 'string') warnUnknown(core.tokenizer, data, tokens, opts.onWarning);
      // the sampler checks this too, but only when it first draws from a split: a validation
      // split too short to validate would otherwise fail evalInterval steps into the run
      const nVal = Math.floor(tokens.length * valFraction);
      for (const [name, n, used] of [['training', tokens.length - nVal, true], ['validation', nVal, evalInterval > 0 && valFraction > 0]]) {
        if (used && n < T + 1) {
          throw new WfError('WF_ERR_ARG', `the ${name} split has ${n} tokens; a window of T = ${T} needs at least ${T + 1} (use a longer text${name === 'validation' ? ', a larger valFraction, or valFraction 0' : ' or a smaller valFraction'})`);
        }
      }
      ptok = rt.putInt32(tokens);
      hb = HeapBatch.ids(rt, B, T);
      if (evalInterval > 0 && valFraction > 0) hv = HeapBatch.ids(rt, B, T);
      if (opts.seed !== undefined) rt.sampleSeed(core.live(), opts.seed);
    },
    step: () => {
      rt.sampleBatch(core.live(), ptok, tokens.length, valFraction, 0, B, T, hb.inputs, hb.targets);
      const info = core.stepBatch(hb);
      if (built && !core.tokenizer) core.tokenizer = built;
      return { ...info, tokens: B * T };
    },
    lossAfter: () => core.forwardBatch(hb, { logits: false }).loss, // hb: the last training batch
    validate() {
      if (evalMode === 'windows') {
        // the held-out split in consecutive windows, as evaluate() scores it: no sampling noise
        const held = tokens.subarray(tokens.length - Math.floor(tokens.length * valFraction));
        const r = scoreWindows(core, hv, held, T, B);
        this.valBpc = bitsPerChar(core.tokenizer, held, r.tokens, r.loss).bitsPerChar;
        hv.shape(B, T);
        return r.loss;
      }
      let sum = 0;
      for (let i = 0; i < evalBatches; i++) {
        rt.sampleBatch(core.live(), ptok, tokens.length, valFraction, 1, B, T, hv.inputs, hv.targets);
        sum += core.forwardBatch(hv, { logits: false }).loss;
      }
      return sum / evalBatches;
    },
    cleanup: () => {
      if (built && core.tokenizer !== built) built.dispose();
      rt.free(ptok);
      hb?.free();
      hv?.free();
    },
  });
}

/** Bits per character of an evaluation: the predicted tokens (ids[1 .. counted], one run,
 * since window w predicts ids[wT+1 .. wT+T]) decode to `chars` code points, and the nats of
 * all of them are loss * counted: bpc = loss * counted / chars / ln 2, so that tokenizers
 * compare (a char tokenizer's bpc is loss / ln 2). Null without a tokenizer. */
function bitsPerChar(tokenizer, ids, counted, loss) {
  if (!tokenizer) return { chars: null, bitsPerChar: null };
  let chars = 0;
  for (const _ of tokenizer.decode(ids.subarray(1, counted + 1))) chars++; // code points, not UTF-16 units
  return { chars, bitsPerChar: chars > 0 ? (loss * counted) / chars / Math.LN2 : null };
}

/** The mean cross-entropy of ids over W = floor((n - 1) / T) consecutive windows (window w
 * reads ids[wT .. wT+T-1] and predicts ids[wT+1 .. wT+T]), B windows a forward through hb;
 * no yields (train()'s validation). */
function scoreWindows(core, hb, ids, T, B) {
  const windows = Math.floor((ids.length - 1) / T), rt = core.rt;
  let total = 0;
  for (let w = 0; w < windows; w += B) total += windowBatch(core, rt, hb, ids, w, Math.min(B, windows - w), T);
  return { loss: total / (windows * T), tokens: windows * T };
}

/** Windows w .. w+b-1 of ids into hb, forward: their summed loss. */
function windowBatch(core, rt, hb, ids, w, b, T) {
  const base = hb.inputs >>> 2, tbase = hb.targets >>> 2;
  for (let i = 0; i < b; i++) {
    const off = (w + i) * T;
    rt.i32.set(ids.subarray(off, off + T), base + i * T);
    rt.i32.set(ids.subarray(off + 1, off + T + 1), tbase + i * T);
  }
  hb.shape(b, T);
  return core.forwardBatch(hb, { logits: false }).loss * b * T;
}

/** Model.evaluate: mean cross-entropy over non-overlapping windows of the context. */
export async function evaluateDecoder(core, data, opts = {}) {
  checkData(data, 'evaluate');
  checkKeys(opts, EVALUATE_KEYS, 'evaluate() options');
  const { maxTokens = Infinity, batchSize, signal, yieldMs = TRAIN_DEFAULTS.yieldMs } = opts;
  core.idle();
  yieldInterval(yieldMs);
  throwIfAborted(signal);
  const rt = core.rt;
  const T = decoderConfig(core, 'evaluate').context;
  // a text needs the model's own tokenizer: one learned from the evaluation text would
  // measure nothing the model knows
  let tokens = typeof data === 'string' ? core.textIds(data) : core.tokensOf(data).tokens;
  if (tokens.length > maxTokens + 1) tokens = tokens.subarray(0, maxTokens + 1);
  if (typeof data === 'string') warnUnknown(core.tokenizer, data, tokens, opts.onWarning, 'evaluate');
  const windows = Math.floor((tokens.length - 1) / T);
  if (windows < 1) {
    throw new WfError('WF_ERR_ARG', `evaluation needs at least ${T + 1} tokens (one context window plus its next token); got ${tokens.length}`);
  }
  const B = Math.min(positiveInt('batchSize', batchSize ?? core.batchSize), windows);
  core.assertBatchFits(B, T);
  const hb = HeapBatch.ids(rt, B, T);
  const clock = yielder(yieldMs);
  try {
    return await core.busyWith('evaluation', async () => {
      let total = 0, counted = 0;
      for (let w = 0; w < windows; w += B) {
        throwIfAborted(signal);
        const b = Math.min(B, windows - w);
        total += windowBatch(core, rt, hb, tokens, w, b, T);
        counted += b * T;
        if (clock.due) await clock.yield();
      }
      const loss = total / counted;
      return { loss, perplexity: Math.exp(loss), tokens: counted, ...bitsPerChar(core.tokenizer, tokens, counted, loss) };
    });
  } finally {
    hb.free();
  }
}
