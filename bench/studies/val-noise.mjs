// The noise of one validation (the page's overfitting rule, web/judge.js, is judged with it):
// a run's validation is the mean loss of evalBatches random batches of held-out windows
// (src/run.c: validate), so two validations of the SAME weights differ by chance alone. This
// trains the page's first click (micro, the bundled novel, the default recipe) for a number
// of steps, scores every context window of the held-out tenth once (evaluate), then draws
// many validations of the default size (evalBatches 4 x batch 16 windows) from those scores
// and prints their spread: the standard deviation of one validation at these weights.
//   node bench/studies/val-noise.mjs [--steps 600] [--draws 2000] [--seed 1]
import { readFileSync } from 'node:fs';
import { createModel } from '../../src/js/node.js';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const steps = arg('steps', 600), draws = arg('draws', 2000), seed = arg('seed', 1);
const text = readFileSync(new URL('../../data/austen/pride_and_prejudice.txt', import.meta.url), 'utf8');
const held = text.slice(Math.floor(text.length * 0.9)); // the run's valFraction 0.1: the text's last tenth

/** A small seeded generator (mulberry32), so a draw can be repeated. */
function rng(s) {
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const model = await createModel({ preset: 'micro', seed }, { threads: 1, text });
const T = model.config.context, B = 16, K = 4;
for (const at of [steps]) {
  await model.train(text, { steps: at, seed, evalInterval: 0, yieldMs: 0 });
  // every window of T + 1 characters of the held-out text, scored once
  const scores = [];
  for (let w = 0; (w + 1) * T + 1 <= held.length; w++) {
    scores.push((await model.evaluate(held.slice(w * T, (w + 1) * T + 1))).loss);
  }
  const random = rng(seed), n = K * B, means = [];
  for (let d = 0; d < draws; d++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += scores[Math.floor(random() * scores.length)];
    means.push(sum / n);
  }
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = (xs) => { const m = mean(xs); return Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1)); };
  console.log(`micro seed ${seed}, ${at} steps: ${scores.length} held-out windows of ${T}, loss ${mean(scores).toFixed(3)} `
    + `(window sd ${sd(scores).toFixed(3)}); one validation (${K} x ${B} windows) sd ${sd(means).toFixed(4)} nats over ${draws} draws`);
}
model.dispose();
