// One time-to-quality run of wasmformer, the same in Node (bench/ttq/wasmformer_run.mjs) and
// in a page (bench/ttq/page.html): trains through the package's API and scores the model at
// every evaluation with the shared, deterministic evaluation of bench/ttq/README.md
// (model.evaluate on the held-out ids and on the second text: non-overlapping windows, mean
// nats, bits per character). The clock stops while evaluating.
//
// Two schedules: by steps (--steps N: warmup then a cosine to minLrRatio at step N, as
// nanoGPT) or by time (--seconds S: train()'s time budget, the cosine reaches its floor as
// the S seconds end, whatever the speed). Options of a run (all strings, as on a command
// line; see OPTIONS):
//   seed threads steps seconds evalEvery ('250' steps or '30s') batch lr warmup minLrRatio
//   beta1 beta2 weightDecay clip muon config (JSON over the preset) preset tokenizer
//   ('char' or 'bpe:N') simd ('relaxed' or 'simd128': the kernels; '' the engine's pick) otherAt ('all' evaluations, or only at the 'end': the second text
//   costs as much again) sample (a prompt: the summary then holds 400 characters sampled
//   after it, temperature 0.8, seed 1) nanogpt (nanoGPT's whole recipe: beta2 0.99, no biases, exact GELU,
//   its warmup (i+1)/(W+1), as matched in GAP.md) budgetSteps (N: a time budget's schedule as N
//   steps of equal time see it, the core's time schedule (budgetFactor below) at (k - 1) / N for step k, then stop: the
//   loss at equal seconds from a measured step time, whatever the machine's load; bench/ttq/equal.mjs)

/**
 * A time budget's learning-rate factor at p = seconds so far / the budget, as the core's run
 * schedules it (src/run.c run_lr): a linear warm-up over the first `warmup` of the budget from
 * 1 % of the peak, then a cosine down to minLrRatio as the budget ends.
 */
function budgetFactor(p, warmup, minLrRatio) {
  if (p < warmup) return Math.max(p / warmup, 0.01);
  const q = Math.min(1, (p - warmup) / Math.max(1e-12, 1 - warmup));
  return minLrRatio + (1 - minLrRatio) * 0.5 * (1 + Math.cos(Math.PI * q));
}

export const OPTIONS = {
  seed: '1', threads: '1', steps: '2000', seconds: '0', evalEvery: '250', batch: '12', lr: '1e-3', warmup: '100',
  minLrRatio: '0.1', beta1: '0.9', beta2: '0.95', weightDecay: '0.1', clip: '1', muon: '0', config: '{}', preset: 'tiny',
  tokenizer: 'char', nanogpt: 'false', maxSteps: '0', otherAt: 'all', sample: '', budgetSteps: '0', simd: '',
};

/** The first crossing of `target` by a curve's val_loss, interpolated linearly in `key`
 * ('elapsed' or 'step') between the two evaluations around it; null if it never gets there. */
export function crossing(points, target, key) {
  if (points.length && points[0].val_loss <= target) return points[0][key];
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1], b = points[i];
    if (b.val_loss <= target) return a[key] + ((a.val_loss - target) / (a.val_loss - b.val_loss)) * (b[key] - a[key]);
  }
  return null;
}

/** The median of the finite values; null when fewer than half of them are (most runs never
 * reached the target, say). */
export function median(xs) {
  const s = xs.filter((x) => x !== null && Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length || s.length < xs.length / 2) return null;
  const k = s.length >> 1;
  return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2;
}

const round = (x, d) => (x === null ? null : Math.round(x * 10 ** d) / 10 ** d);

/** A config over the preset: JSON, or key=value pairs split by commas (nLayer=2,bias=false;
 * numbers and booleans as such), which needs no quotes in a job file. */
export function parseConfig(s) {
  if (s.trim().startsWith('{')) return JSON.parse(s);
  const value = (v) => (v === 'true' ? true : v === 'false' ? false : Number.isFinite(Number(v)) ? Number(v) : v);
  return Object.fromEntries(s.split(',').filter(Boolean).map((kv) => kv.split('=')).map(([k, v]) => [k, value(v)]));
}

/** The settings nanoGPT's recipe changes over wasmformer_run's defaults (GAP.md). */
export const NANOGPT = { beta2: '0.99', config: '{"bias":false,"activation":"gelu_exact"}', warmupStyle: 'nanogpt' };

/**
 * Runs one training run and returns its summary; emit(obj) receives the JSON lines (settings,
 * one per evaluation, summary). wf: the package (node.js or index.js); texts: {text, other}
 * (other already cut to its length); opts: OPTIONS-shaped strings.
 */
export async function runTtq(wf, texts, opts, emit, now = () => performance.now()) {
  const o = { ...OPTIONS, ...opts };
  let warmupStyle = 'wasmformer';
  if (o.nanogpt === 'true') {
    o.beta2 = NANOGPT.beta2;
    o.config = JSON.stringify({ ...JSON.parse(NANOGPT.config), ...parseConfig(o.config) });
    warmupStyle = NANOGPT.warmupStyle;
  }
  const seed = Number(o.seed), steps = Number(o.steps), B = Number(o.batch), W = Number(o.warmup);
  const seconds = Number(o.seconds), budgetSteps = Number(o.budgetSteps);
  const maxSteps = Number(o.maxSteps) || budgetSteps || Infinity;
  const [everySteps, everySecs] = o.evalEvery.endsWith('s') ? [0, Number(o.evalEvery.slice(0, -1))] : [Number(o.evalEvery), 0];
  const t0 = now();
  const config = { preset: o.preset, seed, ...parseConfig(o.config) };
  let tokenizer = 'char';
  if (o.tokenizer.startsWith('bpe:')) {
    // a BPE tokenizer learned from the training part of the text only (setup time, not training)
    const n = texts.text.length, cut = n - Math.floor(n * 0.1);
    tokenizer = await wf.createTokenizer(texts.text.slice(0, cut), { kind: 'bpe', vocabSize: Number(o.tokenizer.slice(4)) });
    config.vocabSize = tokenizer.vocabSize;
  }
  const model = await wf.createModel(config, { text: texts.text, tokenizer, threads: Number(o.threads), ...(o.simd ? { simd: o.simd } : {}) });
  const ids = model.tokenizer.encode(texts.text);
  const nVal = Math.floor(ids.length * 0.1);
  const valIds = ids.subarray(ids.length - nVal), otherIds = model.tokenizer.encode(texts.other);
  const T = model.config.context;
  const optim = {
    lr: Number(o.lr), beta1: Number(o.beta1), beta2: Number(o.beta2), eps: 1e-8, weightDecay: Number(o.weightDecay),
    gradClip: Number(o.clip), minLrRatio: Number(o.minLrRatio), muon: Number(o.muon),
  };
  if (budgetSteps) {
    // a constant lr that the loop below sets before each step
    Object.assign(optim, { warmup: 0, decaySteps: 0, start: 0 });
  } else if (!seconds) {
    // nanoGPT's warmup lr (i+1)/(W+1) for i < W, then lr at i = W, is wasmformer's (i+1)/W' with
    // W' = W + 1; its cosine then runs one step later (lr(i) = nanoGPT's lr(i - 1) past the
    // warmup: at most 0.08 % of the peak apart over 2,000 steps)
    const w = warmupStyle === 'nanogpt' ? W + 1 : W;
    Object.assign(optim, { warmup: w, decaySteps: Math.max(0, steps - W), start: 0 });
  }
  model.setOptimizer(optim);
  emit({
    kind: 'settings', ...o, warmupStyle, seed, steps, vocab: model.config.vocabSize, train_tokens: ids.length - nVal,
    val_tokens: nVal, other_tokens: otherIds.length, params: model.paramCount, threads: model.info().threads, kernels: model.info().simd,
    optimizer: model.optimizer, setup_seconds: round((now() - t0) / 1000, 3),
  });

  let evalSeconds = 0, val = null, other = null;
  async function report(step, elapsed, lr, trainLoss, last = false) {
    const e0 = now();
    val = await model.evaluate(valIds, { batchSize: 64, yieldMs: Infinity });
    if (o.otherAt === 'all' || last) other = await model.evaluate(otherIds, { batchSize: 64, yieldMs: Infinity });
    evalSeconds += (now() - e0) / 1000;
    emit({
      elapsed: round(elapsed, 3), step, tokens: step * B * T, lr, train_loss: trainLoss, val_loss: round(val.loss, 5),
      val_bpc: round(val.bitsPerChar, 5), emma_loss: round(other?.loss ?? null, 5), emma_bpc: round(other?.bitsPerChar ?? null, 5),
    });
  }

  if (everySteps || everySecs) await report(0, 0, model.lr, null);
  let step = 0, elapsed = 0, lastEval = 0;
  const budgetWarmup = 0.05;
  for (;;) {
    // train up to the next evaluation: a whole chunk when evaluating by steps, else a few steps
    const left = Math.min(seconds || budgetSteps ? Infinity : steps - step, maxSteps - step);
    if (left <= 0) break;
    const chunk = Math.min(left, everySteps ? everySteps - (step % everySteps) : 5);
    const t = now();
    let sum = 0, n = 0, lr = 0;
    const common = { batchSize: B, evalInterval: 0, valFraction: 0.1, yieldMs: 0, onProgress: (p) => { sum += p.loss; n++; lr = p.lr; } };
    let r = { steps: 0, loss: null };
    if (budgetSteps) {
      // one step a call, its lr where a time budget would have it after step - 1 of budgetSteps
      // equal steps
      for (let k = 0; k < chunk; k++) {
        model.setOptimizer({ lr: optim.lr * budgetFactor((step + k) / budgetSteps, budgetWarmup, optim.minLrRatio) });
        const one = await model.train(ids, { ...common, steps: 1, keepSchedule: true, onDivergence: 'stop' });
        r = { steps: r.steps + one.steps, loss: one.loss };
      }
    } else if (seconds) {
      // one run on the time budget (its schedule on the run's own clock, which the
      // evaluations between calls do not advance), a few steps a call
      if (step === 0) model.startRun(ids, { batchSize: B, evalInterval: 0, valFraction: 0.1, seconds, warmupFraction: budgetWarmup });
      const c = await model.continueRun({ steps: chunk, yieldMs: 0, onProgress: common.onProgress });
      r = { steps: c.steps, loss: c.loss, finished: c.finished };
    } else {
      r = await model.train(ids, { ...common, steps: chunk, keepSchedule: true });
    }
    elapsed += (now() - t) / 1000;
    step += r.steps;
    const done = budgetSteps ? step >= budgetSteps : seconds ? r.finished || elapsed >= seconds : step >= steps;
    if (done || step >= maxSteps || (everySteps && step % everySteps === 0) || (everySecs && elapsed - lastEval >= everySecs)) {
      await report(step, elapsed, lr, n ? sum / n : r.loss, done || step >= maxSteps);
      lastEval = elapsed;
    }
    if (done) break;
  }
  const summary = {
    kind: 'summary', seed, steps: step, train_seconds: round(elapsed, 3), eval_seconds: round(evalSeconds, 3),
    val_loss: round(val.loss, 5), val_bpc: round(val.bitsPerChar, 5), emma_loss: round(other.loss, 5),
    emma_bpc: round(other.bitsPerChar, 5), ms_per_step: round((1000 * elapsed) / step, 3),
  };
  if (o.sample) {
    summary.sample = o.sample + await model.generateText(o.sample, { maxTokens: 400, temperature: 0.8, seed: 1, yieldMs: Infinity });
  }
  emit(summary);
  model.dispose();
  if (typeof tokenizer !== 'string') tokenizer.dispose?.();
  return summary;
}
