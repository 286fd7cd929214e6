// Training over a ModelHandle, driven by the core's training run (src/run.c owns the batches,
// the schedule, validation, the divergence rules and the roll-back copy): startRun begins one
// on text (the text crosses once), continueRun drives it in calls that yield to the event loop
// and reports its facts, train() is both (and ends the run it completed). And evaluation
// (Model.evaluate) and the option checks they share.
import { WfError, throwIfAborted } from './errors.js';
import { OPTIM_FIELDS, RUN_DEFAULTS, optimOf } from './config.js';
import { checkKeys, float32Plain, show } from './options.js';
import { HeapBatch } from './batch.js';

/** The defaults of train()'s own options: the core's run defaults (RUN_DEFAULTS), and how
 * often a call yields to the event loop. */
export const TRAIN_DEFAULTS = Object.freeze({ steps: RUN_DEFAULTS.steps, valFraction: RUN_DEFAULTS.valFraction,
  evalInterval: RUN_DEFAULTS.evalInterval, evalBatches: RUN_DEFAULTS.evalBatches, evalMode: 'sample', yieldMs: 30 });

export const yieldToEventLoop = typeof setImmediate === 'function'
  ? () => new Promise((resolve) => setImmediate(resolve))
  : () => new Promise((resolve) => setTimeout(resolve, 0));

const OPTIM_KEYS = OPTIM_FIELDS.map((f) => f.name).filter((n) => n !== 'start'); // where a schedule starts is the run's
/** The keys of startRun()'s options: the run's, the optimizer settings, how it reads text. */
export const START_KEYS = new Set(['steps', 'seconds', 'warmupFraction', 'batchSize', 'context', 'tokenizer', 'valFraction',
  'evalInterval', 'evalBatches', 'evalMode', 'keepSchedule', 'seed', 'onWarning', 'onDivergence', ...OPTIM_KEYS]);
/** The keys of continueRun()'s options: how much more (caps), and how the call behaves. */
export const CONTINUE_KEYS = new Set(['steps', 'seconds', 'signal', 'onProgress', 'yieldMs']);
/** The keys of train()'s options: both. */
export const TRAIN_KEYS = new Set([...START_KEYS, ...CONTINUE_KEYS]);

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

export function nonNegativeInt(name, v) {
  if (!Number.isInteger(v) || v < 0) throw new WfError('WF_ERR_ARG', `${name} must be an integer >= 0, not ${show(v)}`);
  return v;
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

/** A number of seconds > 0 (finite), or a WF_ERR_ARG. */
function positiveSeconds(name, v) {
  if (typeof v !== 'number' || !(v > 0) || v === Infinity) throw new WfError('WF_ERR_ARG', `${name} must be a finite number > 0, not ${show(v)}`);
  return v;
}

// ---- beginning a run ----

/**
 * The core's run settings (wf_run, by the package's names) of startRun's options, checked:
 * the run's length (steps, or a time budget in seconds), its schedule (warmup, decaySteps:
 * the optimizer's keys, which a new run takes for itself; warmupFraction), batches,
 * validation (evalMode 'windows' is evalBatches 0), roll-back (onDivergence) and seed.
 */
function runSettings(core, opts) {
  const out = { ...RUN_DEFAULTS, batchSize: core.batchSize };
  if (opts.seconds !== undefined) out.seconds = positiveSeconds('seconds', opts.seconds);
  else if (opts.warmupFraction !== undefined) throw new WfError('WF_ERR_ARG', 'warmupFraction goes with seconds (a time budget)');
  if (opts.steps !== undefined) out.steps = positiveInt('steps', opts.steps);
  if (opts.warmupFraction !== undefined) {
    const w = opts.warmupFraction;
    if (typeof w !== 'number' || !(w >= 0 && w < 1)) throw new WfError('WF_ERR_ARG', `warmupFraction must be a number in [0, 1), not ${show(w)}`);
    out.warmupFraction = w;
  }
  if (!opts.keepSchedule) {
    if (opts.warmup !== undefined) out.warmup = nonNegativeInt('warmup', opts.warmup);
    if (opts.decaySteps !== undefined) out.decaySteps = nonNegativeInt('decaySteps', opts.decaySteps);
  }
  if (opts.batchSize !== undefined) out.batchSize = positiveInt('batchSize', opts.batchSize);
  if (opts.context !== undefined) out.context = positiveInt('context', opts.context);
  const v = opts.valFraction ?? RUN_DEFAULTS.valFraction;
  if (typeof v !== 'number' || !(v >= 0 && v < 1)) {
    throw new WfError('WF_ERR_ARG', `valFraction (the validation split) must be a number in [0, 1), not ${show(v)}`);
  }
  out.valFraction = v;
  out.evalInterval = nonNegativeInt('evalInterval', opts.evalInterval ?? RUN_DEFAULTS.evalInterval);
  const mode = opts.evalMode ?? TRAIN_DEFAULTS.evalMode;
  if (mode !== 'sample' && mode !== 'windows') throw new WfError('WF_ERR_ARG', `evalMode must be "sample" or "windows", not ${show(mode)}`);
  out.evalBatches = mode === 'windows' ? 0 : positiveInt('evalBatches', opts.evalBatches ?? RUN_DEFAULTS.evalBatches);
  const onDivergence = opts.onDivergence ?? 'rollback';
  if (onDivergence !== 'rollback' && onDivergence !== 'stop') {
    throw new WfError('WF_ERR_ARG', `onDivergence must be "rollback" or "stop", not ${show(onDivergence)}`);
  }
  out.rollback = onDivergence === 'rollback' ? 1 : 0;
  if (opts.seed !== undefined) {
    if (!Number.isInteger(opts.seed) || opts.seed < 0 || opts.seed > 2147483647) {
      throw new WfError('WF_ERR_ARG', `seed must be an integer in [0, 2147483647], not ${show(opts.seed)}`);
    }
    out.seed = opts.seed;
  }
  return out;
}

/**
 * Begins a run on a decoder's text or ids (Model.startRun; train() begins with it), or, with
 * keepSchedule, goes on with the model's run (a loaded one takes its text again) or, when it
 * has none, begins one on the optimizer's schedule as it stands. The optimizer settings given
 * are set first; refused, everything is as it was. Returns the run's facts.
 */
export function startRun(core, data, opts = {}) {
  checkData(data, 'startRun');
  checkKeys(opts, START_KEYS, 'startRun() options');
  const h = core.idle();
  const cfg = decoderConfig(core, 'train');
  const settings = runSettings(core, opts);
  core.assertBatchFits(settings.batchSize, settings.context || cfg.context); // before the text is in the heap
  const { tokens, built } = core.tokensOf(data, opts.tokenizer);
  try {
    if (!built && typeof data === 'string') warnUnknown(core.tokenizer, data, tokens, opts.onWarning);
    beginRun(core, opts, settings, () => {
      const p = core.rt.putInt32(tokens); // the core copies them
      try { core.rt.runBegin(h, settings, !!opts.keepSchedule, p, tokens.length); } finally { core.rt.free(p); }
    });
  } catch (e) {
    built?.dispose();
    throw e;
  }
  if (built) core.tokenizer = built; // a tokenizer learned from the text joins the model with its run
  // bits per character of a whole-split validation: the held-out text's characters, counted once
  const f = core.rt.runFacts(h);
  core.runText = f.run.evalBatches === 0 && core.tokenizer ? heldOutChars(core.tokenizer, tokens, f.run) : null;
  return f;
}

/** Sets the optimizer settings opts gives (a new run takes warmup and decaySteps for itself),
 * then begin(); if that throws, the settings go back as they were, and a roll-back copy that
 * did not fit is said (onWarning). */
export function beginRun(core, opts, settings, begin) {
  const before = core.optimizer, optim = optimOf(opts);
  if (!opts.keepSchedule) delete optim.warmup, delete optim.decaySteps;
  core.setOptimizer(optim);
  try {
    begin();
  } catch (e) {
    core.setOptimizer(before);
    throw e;
  }
  const f = core.rt.runFacts(core.live());
  if (settings.rollback && f.backup < 0) {
    (opts.onWarning ?? console.warn)("this model's roll-back copy does not fit in the wasm heap: if this run diverges, it stops "
      + "there, its steps applied (onDivergence 'stop' does so without this warning)");
  }
}

/** The characters of the held-out tokens a whole-split validation predicts, for its bits per
 * character (a char tokenizer's: one a token). */
function heldOutChars(tokenizer, tokens, run) {
  const held = tokens.subarray(tokens.length - Math.floor(tokens.length * run.valFraction));
  const counted = Math.floor((held.length - 1) / run.context) * run.context;
  let chars = 0;
  for (const _ of tokenizer.decode(held.subarray(1, counted + 1))) chars++; // code points, not UTF-16 units
  return { chars, counted };
}

// ---- driving a run ----

const WHY = {
  1: 'its loss was not finite', 2: 'its gradient norm was not finite', 3: 'its update would overflow a weight or AdamW moment',
};

/** The error a diverged run rejects with, worded from its facts (the error's `facts`): what the
 * rule found, where the model is now, and the advice, once. */
export function divergedError(f) {
  const n = (x) => (Number.isFinite(x) ? x.toPrecision(4) : String(x));
  const lr = float32Plain(f.lr);
  const what = f.refused ? `step ${f.at} was refused: ${WHY[f.diverged]} at lr ${lr} (that step changed nothing)`
    : f.diverged === 4 ? `the loss reached ${n(f.measured)} at step ${f.at}, past the ${n(f.limit)} this run allows `
      + `(1.5 x the larger of ln V and its first loss, plus 1; lr ${lr})`
      : `the mean loss of steps ${f.at - 19}-${f.at} is ${n(f.measured)}, above the ${n(f.limit)} that this run's best and `
      + `its noise allow (lr ${lr})`;
  const where = f.backup >= 0 ? `the model went back to step ${f.backup}, where this run last stood sound`
    : `no roll-back copy (onDivergence 'stop', or no room): the model is at step ${f.step}`;
  const e = new WfError(f.refused ? 'WF_ERR_NUMERIC' : 'WF_ERR_DIVERGED', `training diverged: ${what}; ${where}; try a lower lr (or a smaller gradClip)`);
  e.facts = f;
  return e;
}

/** A progress report from a run's facts: where it stands (the model's step; the run's steps
 * and, for a time budget, seconds, of its length), the last step, the last validation. */
function progressOf(core, f, since, validated) {
  const elapsed = (performance.now() - since.t0) / 1000, run = f.run;
  const valLoss = f.valStep > 0 ? f.valLoss : null, text = core.runText;
  return {
    step: f.step, stepsDone: f.steps, steps: run.steps || null, lastStep: run.steps ? f.step - f.steps + run.steps : null,
    loss: f.loss, valLoss, validated, lr: float32Plain(f.lr), gradNorm: f.gradNorm, finished: f.finished === 1,
    valBpc: valLoss !== null && text && f.valTokens === text.counted ? (valLoss * text.counted) / text.chars / Math.LN2 : null,
    tokensPerSecond: since.tokens / elapsed, elapsed,
    eta: run.seconds ? Math.max(0, run.seconds - f.seconds)
      : Math.max(0, (elapsed / Math.max(f.steps - since.steps, 1)) * (run.steps - f.steps)),
    ...(run.seconds ? { seconds: float32Plain(run.seconds), secondsDone: f.seconds } : {}),
  };
}

/**
 * Drives the model's run (Model.continueRun; train() and Seq2Seq.train): calls of at most
 * yieldMs of training (0: a step; a validation ends a call, so each is reported), each
 * followed by onProgress, until the run ends, or `steps` or `seconds` more are done (caps: a
 * run past its end trains on at its last rate), an abort, or a divergence (rejects with
 * divergedError). nextBatch (Seq2Seq): each step's batch, the caller's. Resolves to a summary.
 */
export async function continueRun(core, opts = {}, nextBatch = null) {
  checkKeys(opts, CONTINUE_KEYS, 'continueRun() options');
  const rt = core.rt, signal = opts.signal;
  let f = rt.runFacts(core.idle());
  if (!f) throw new WfError('WF_ERR_STATE', 'the model has no training run: begin one (startRun, or train)');
  const maxSteps = opts.steps === undefined ? Infinity : positiveInt('steps', opts.steps);
  const maxSeconds = opts.seconds === undefined ? Infinity : positiveSeconds('seconds', opts.seconds);
  const yieldMs = yieldInterval(opts.yieldMs ?? TRAIN_DEFAULTS.yieldMs), open = maxSteps < Infinity || maxSeconds < Infinity;
  throwIfAborted(signal);
  const since = { t0: performance.now(), steps: f.steps, seconds: f.seconds, tokens: 0 };
  return core.busyWith('training', async () => {
    let yielded = performance.now();
    while (open || !f.finished) {
      const steps = maxSteps - (f.steps - since.steps), ms = (maxSeconds - (f.seconds - since.seconds)) * 1000;
      if (steps <= 0 || ms <= 0) break;
      throwIfAborted(signal);
      const { valStep, finished, steps: before } = f;
      if (nextBatch) {
        const hb = HeapBatch.copy(rt, nextBatch(), core.native.dModel);
        try { f = rt.run(core.live(), hb.ptr, 1, 0); } finally { hb.free(); }
        since.tokens += hb.B * hb.T;
      } else {
        const cap = Math.min(ms, yieldMs || Infinity); // ms of training this call (0: no cap)
        f = rt.run(core.live(), 0, yieldMs > 0 ? Math.min(steps, 2 ** 30) : 1, cap === Infinity ? 0 : cap);
        since.tokens += (f.steps - before) * f.run.batchSize * f.run.context;
      }
      if (f.diverged) throw divergedError(f);
      if (opts.onProgress) {
        // the callback runs between two steps: there the model may be saved (a checkpoint of
        // that step) and its metadata set, though the call holds it busy
        core.betweenSteps = true;
        try {
          opts.onProgress(progressOf(core, f, since, f.valStep !== valStep && f.valStep === f.step));
        } finally {
          core.betweenSteps = false;
        }
      }
      if (!finished && f.finished && !open) break;
      if (performance.now() - yielded >= yieldMs) {
        await yieldToEventLoop();
        yielded = performance.now();
      }
    }
    const p = progressOf(core, f, since, false), done = f.steps - since.steps;
    return {
      steps: done, step: f.step, loss: f.loss, valLoss: p.valLoss, valBpc: p.valBpc, finished: p.finished, tokens: since.tokens,
      elapsed: p.elapsed, tokensPerSecond: p.tokensPerSecond, trainSeconds: f.seconds - since.seconds,
      ...(f.run.seconds ? { seconds: float32Plain(f.run.seconds), secondsDone: f.seconds } : {}),
    };
  });
}

/**
 * A whole run, train()'s and Seq2Seq.train's: begun (begin()), driven (drive()) and, once it
 * reached its end, ended, its schedule left in the optimizer settings. A divergence that goes
 * back to where the call began leaves the model as the call found it: its settings, and no
 * run of the call's.
 */
export async function wholeRun(core, opts, begin, drive) {
  const before = core.optimizer, step0 = core.step, tokenizer = core.tokenizer;
  const had = opts.keepSchedule && core.rt.runFacts(core.live()) !== null;
  begin();
  try {
    const summary = await drive();
    if (summary.finished) core.rt.runEnd(core.live());
    return summary;
  } catch (e) {
    if (e.facts && e.facts.backup === step0 && core.h) {
      core.setOptimizer(before);
      if (!had) core.rt.runEnd(core.live());
      if (core.tokenizer !== tokenizer) { // one the call learned from its text goes with it
        core.tokenizer.dispose();
        core.tokenizer = tokenizer;
      }
    }
    throw e;
  }
}

/**
 * Model.train: a run begun (startRun, or with keepSchedule the model's run going on), driven
 * to its end (continueRun) and ended. steps and seconds are the run's length; with
 * keepSchedule, or beside seconds, steps caps the call (a call stopped early leaves the run
 * in the model, to go on with keepSchedule).
 */
export async function trainDecoder(core, data, opts = {}) {
  checkData(data, 'train');
  checkKeys(opts, TRAIN_KEYS, 'train() options');
  throwIfAborted(opts.signal);
  const { signal, onProgress, yieldMs, ...start } = opts;
  yieldInterval(yieldMs ?? TRAIN_DEFAULTS.yieldMs); // checked before anything begins
  const had = opts.keepSchedule ? core.rt.runFacts(core.live()) : null;
  // more of a run that goes on: `steps` (or `seconds`) more, else what is left of it (a run at
  // its end: the default steps more); a new time budget: steps caps it
  const caps = {};
  if (had) {
    if (opts.seconds !== undefined && opts.steps === undefined) caps.seconds = opts.seconds;
    else if (opts.steps !== undefined || had.finished) caps.steps = opts.steps ?? TRAIN_DEFAULTS.steps;
  } else if (opts.seconds !== undefined && opts.steps !== undefined) {
    caps.steps = opts.steps;
  }
  return wholeRun(core, opts, () => startRun(core, data, start), () => continueRun(core, { ...caps, signal, onProgress, yieldMs }));
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
