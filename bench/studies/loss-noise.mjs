// The margin of a training run's loss-spike rule (src/run.c: spiked; restated below for the
// replay, its constants SPIKE_WINDOW, SPIKE_MARGIN, SPIKE_NOISE): how far
// sound runs' training loss rises above the call's best, which ordinary small-batch noise
// must never take past the check's allowance, and how a run pushed to a learning rate far
// too high ends. Each row trains a preset on the bundled novel from fresh weights with the
// default recipe (one thread), records every step's loss and replays the check over them:
// the largest rise of the window's mean above the call's best, the largest share of the
// allowance that rise took, and the noise (the median step-to-step change) beside it. The
// "then" rows look at a second call on the same model, as the check does (it watches one
// call): a new schedule (its warmup takes the lr back up to the peak), or a learning rate
// far too high, where the check (or the absolute bound 1.5 ln V + 1) ends the call.
//   node bench/studies/loss-noise.mjs [--steps 400] [--quick]
import { readFileSync } from 'node:fs';
import { createModel } from '../../src/js/node.js';

/** The core's spike rule (src/run.c), restated to replay it over recorded losses: from the
 * window's first fill, the mean of the last 20 losses against the lowest of the first loss
 * and every earlier such mean, allowed max(1, 4 x the median change between consecutive
 * losses of the window). Returns a function of each loss: null, then {mean, best, allowed}. */
function spikeWatch() {
  const recent = [];
  let best = Infinity;
  return (loss) => {
    if (best === Infinity) best = loss;
    recent.push(loss);
    if (recent.length > 20) recent.shift();
    if (recent.length < 20) return null;
    const mean = recent.reduce((a, b) => a + b, 0) / recent.length;
    const changes = recent.slice(1).map((x, i) => Math.abs(x - recent[i])).sort((a, b) => a - b);
    const reading = { mean, best, allowed: Math.max(1, 4 * changes[changes.length >> 1]) };
    best = Math.min(best, mean);
    return reading;
  };
}

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const quick = process.argv.includes('--quick');
const steps = arg('steps', quick ? 200 : 400);
const text = readFileSync(new URL('../../data/austen/pride_and_prejudice.txt', import.meta.url), 'utf8');

/** Every step's loss of one train() call, and how it ended. */
async function call(model, opts) {
  const losses = [];
  let end = 'resolved';
  try {
    await model.train(text, { evalInterval: 0, yieldMs: 0, ...opts, onProgress: (p) => losses.push(p.loss) });
  } catch (e) {
    end = `rejected: ${e.message.split('; the model')[0].split('; no roll-back')[0]}`;
  }
  return { losses, end };
}

/** The check replayed over a call's losses: the largest rise of the window's mean above the
 * call's best, and the largest share of the allowance a rise took. */
function replay(losses) {
  const watch = spikeWatch();
  let rise = 0, share = 0;
  for (const loss of losses) {
    const r = watch(loss);
    if (!r) continue;
    rise = Math.max(rise, r.mean - r.best);
    share = Math.max(share, (r.mean - r.best) / r.allowed);
  }
  return { rise, share };
}

async function row(name, preset, seed, first, then) {
  const model = await createModel({ preset, seed }, { threads: 1, text });
  let r = await call(model, { steps, seed, ...first });
  if (then) r = await call(model, then);
  const l = r.losses, lnV = Math.log(model.config.vocabSize);
  model.dispose();
  const changes = l.slice(1).map((x, i) => Math.abs(x - l[i])).sort((a, b) => a - b);
  const { rise, share } = replay(l);
  console.log(`${name.padEnd(42)} seed ${seed}  ${String(l.length).padStart(4)} steps  loss ${l[0].toFixed(2)} -> ${l.at(-1).toFixed(2)} `
    + `(min ${Math.min(...l).toFixed(2)}, ln V ${lnV.toFixed(2)})  median step-to-step change ${changes[changes.length >> 1].toFixed(3)}  `
    + `largest rise ${rise.toFixed(3)} (${(100 * share).toFixed(0)}% of the allowance)\n    ${r.end}`);
}

const seeds = quick ? [1] : [1, 2];
for (const seed of seeds) await row('micro (batch 16, lr 3e-3, Muon)', 'micro', seed, {});
await row('micro, batch 1', 'micro', 1, { batchSize: 1 });
await row('micro, AdamW (muon 0), lr 1e-2', 'micro', 1, { muon: 0, lr: 1e-2 });
if (!quick) await row('tiny (batch 8, lr 2e-3, Muon), half the steps', 'tiny', 1, { steps: Math.round(steps / 2) });
await row('micro, then a second call (new schedule)', 'micro', 1, {}, { steps: Math.round(steps / 2) });
for (const lr of [0.03, 0.1]) await row(`micro, then lr ${lr} (AdamW, no warmup)`, 'micro', 1, {}, { steps: 200, lr, muon: 0, warmup: 0 });
