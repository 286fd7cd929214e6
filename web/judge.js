// What the page says about the model on screen is judged here, with the noise the project
// has measured, or not said. Pure functions of the chart's points (no DOM), so a test can
// feed them the runs it needs.

/** The spread (standard deviation, nats) of the loss of ONE window of held-out text around
 * the model's mean, at context 64: 0.226 for micro on Pride and Prejudice after 600 steps
 * (`node bench/studies/val-noise.mjs`: 1,069 windows). A validation averages evalBatches x
 * batchSize random windows of `context` tokens, so its own noise is this over their root. */
export const WINDOW_SD = 0.226;
const WINDOW_CONTEXT = 64;

/** The noise (sd, nats) of one validation of a run with these settings: the measured spread
 * of a window, scaled by the windows a validation averages (and their length). */
export function validationNoise({ evalBatches = 4, batchSize = 16, context = 64 } = {}) {
  const windows = Math.max(1, evalBatches) * Math.max(1, batchSize);
  return WINDOW_SD * Math.sqrt(WINDOW_CONTEXT / Math.max(1, context)) / Math.sqrt(windows);
}

/** How far above its best the validation loss must stand before the page calls it
 * overfitting: the mean of the last three validations against the lowest before them, a
 * difference of two noisy figures (the lowest of many is also biased low by chance), so
 * 4 noise widths: a rise of 3 % (1.375 -> 1.410 in the default run, 1.3 widths) is noise. */
export const OVERFIT_WIDTHS = 4;

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Whether the run overfits: its last three validations (val: [[step, loss]]) stand, on
 * average, more than OVERFIT_WIDTHS x noise above the lowest validation before them, while
 * the training loss (train: [[step, loss]]) is lower over those three than before them.
 * Returns null (no) or {rise, noise, best, now}: the figures the note states. */
export function overfitting(val, train, noise) {
  if (val.length < 5 || !(noise > 0)) return null;
  const last = val.slice(-3), before = val.slice(0, -3);
  const best = Math.min(...before.map(([, v]) => v)), now = mean(last.map(([, v]) => v));
  const rise = now - best;
  if (!(rise > OVERFIT_WIDTHS * noise)) return null;
  const at = before.find(([, v]) => v === best)[0];
  const trainMean = (from, to) => {
    const xs = train.filter(([s]) => s > from && s <= to).map(([, v]) => v);
    return xs.length ? mean(xs) : NaN;
  };
  // the training loss near the best validation against the training loss now
  const span = last.at(-1)[0] - last[0][0];
  if (!(trainMean(last[0][0], last.at(-1)[0]) < trainMean(at - span, at))) return null;
  return { rise, noise, best, now };
}
