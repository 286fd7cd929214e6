#!/usr/bin/env node
// wasmformer's side of bench/ttq/reference.py: the same recipe as far as today's package
// API allows, scored by the same evaluation (bench/ttq/README.md), printing the same JSON
// lines, through the package's API (createModel, setOptimizer, train with keepSchedule,
// evaluate on ids).
//
//   node bench/ttq/wasmformer_run.mjs --seed 1                  # wasmformer's defaults
//   node bench/ttq/wasmformer_run.mjs --seed 1 --nanogpt        # nanoGPT's recipe where it can
//
// Defaults are `wasmformer train --steps 2000 --batch 12 --lr 1e-3`'s: biases on, beta2 0.95,
// warmup 100 (lr (i+1)/100), cosine to 0.1 lr over the remaining steps, tanh GELU.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadavg } from 'node:os';
import * as wf from '../../src/js/node.js';

const root = new URL('../../', import.meta.url);
const { values: o } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    threads: { type: 'string', default: '1' },
    steps: { type: 'string', default: '2000' },
    seconds: { type: 'string', default: '0' },
    'eval-every': { type: 'string', default: '250' },
    batch: { type: 'string', default: '12' },
    lr: { type: 'string', default: '1e-3' },
    warmup: { type: 'string', default: '100' },
    'min-lr-ratio': { type: 'string', default: '0.1' },
    beta2: { type: 'string', default: '0.95' },
    bias: { type: 'string', default: 'true' },
    nanogpt: { type: 'boolean', default: false }, // beta2 0.99, no biases: all today's API can match
    text: { type: 'string', default: new URL('data/austen/pride_and_prejudice.txt', root).pathname },
    other: { type: 'string', default: new URL('data/austen/emma.txt', root).pathname },
    'other-chars': { type: 'string', default: '50000' },
  },
});
if (o.nanogpt) Object.assign(o, { beta2: '0.99', bias: 'false' });
const seed = Number(o.seed), steps = Number(o.steps), B = Number(o.batch), warmup = Number(o.warmup);
const seconds = Number(o.seconds);
const [everySteps, everySecs] = o['eval-every'].endsWith('s') ? [0, Number(o['eval-every'].slice(0, -1))] : [Number(o['eval-every']), 0];
const emit = (x) => process.stdout.write(`${JSON.stringify(x)}\n`);
const round = (x, d) => Math.round(x * 10 ** d) / 10 ** d;

const text = readFileSync(o.text, 'utf8');
const other = Array.from(readFileSync(o.other, 'utf8')).slice(0, Number(o['other-chars'])).join(''); // code points
const t0 = performance.now();
const model = await wf.createModel({ preset: 'tiny', bias: o.bias === 'true', seed },
  { text, tokenizer: 'char', threads: Number(o.threads) });
const ids = model.tokenizer.encode(text);
const nVal = Math.floor(ids.length * 0.1);
const valIds = ids.subarray(ids.length - nVal), otherIds = model.tokenizer.encode(other);
const T = model.config.context;
// one schedule for the whole run, as `wasmformer train` sets it for its one call
model.setOptimizer({ lr: Number(o.lr), beta1: 0.9, beta2: Number(o.beta2), eps: 1e-8, weightDecay: 0.1, gradClip: 1,
  warmup, decaySteps: Math.max(0, steps - warmup), minLrRatio: Number(o['min-lr-ratio']), start: 0 });
emit({ kind: 'settings', ...o, seed, steps, vocab: model.config.vocabSize, train_tokens: ids.length - nVal, val_tokens: nVal,
  other_tokens: otherIds.length, params: model.paramCount, threads: model.info().threads, optimizer: model.optimizer,
  setup_seconds: round((performance.now() - t0) / 1000, 3) });

let evalSeconds = 0, val = null, emma = null;
async function report(step, elapsed, lr, trainLoss) {
  const e0 = performance.now();
  val = (await model.evaluate(valIds, { batchSize: 64, yieldMs: Infinity })).loss;
  emma = (await model.evaluate(otherIds, { batchSize: 64, yieldMs: Infinity })).loss;
  evalSeconds += (performance.now() - e0) / 1000;
  emit({ elapsed: round(elapsed, 3), step, tokens: step * B * T, lr, train_loss: trainLoss, val_loss: round(val, 5),
    val_bpc: round(val / Math.LN2, 5), emma_loss: round(emma, 5), emma_bpc: round(emma / Math.LN2, 5) });
}

if (everySteps || everySecs) await report(0, 0, model.lr, null);
let step = 0, elapsed = 0, lastEval = 0;
while (step < steps) {
  // train up to the next evaluation: a whole chunk when evaluating by steps, else one step at a time
  const chunk = everySteps ? Math.min(everySteps - (step % everySteps), steps - step) : everySecs || seconds ? 1 : steps;
  const t = performance.now();
  let sum = 0, n = 0, lr = 0;
  const r = await model.train(ids, { steps: chunk, batchSize: B, keepSchedule: true, evalInterval: 0, valFraction: 0.1,
    yieldMs: 0, onProgress: (p) => { sum += p.loss; n++; lr = p.lr; } }); // yieldMs 0: a progress call per step
  elapsed += (performance.now() - t) / 1000;
  step += chunk;
  const done = step >= steps || (seconds > 0 && elapsed >= seconds);
  if (done || (everySteps && step % everySteps === 0) || (everySecs && elapsed - lastEval >= everySecs)) {
    await report(step, elapsed, lr, n ? sum / n : r.loss);
    lastEval = elapsed;
  }
  if (done) break;
}
emit({ kind: 'summary', seed, steps: step, train_seconds: round(elapsed, 3), eval_seconds: round(evalSeconds, 3),
  val_loss: round(val, 5), emma_loss: round(emma, 5), ms_per_step: round((1000 * elapsed) / step, 3), loadavg: loadavg() });
model.dispose();
