#!/usr/bin/env node
// Is reference.py's --micro the recipe wasmformer trains? (issue 28: PyTorch running
// wasmformer's own recipe.) Both sides start from the same weights and see the same batches
// (reference.py ports wasmformer's generator, init order and sampler), so their batch losses
// must agree step by step up to float rounding: the first step's loss checks the model (RoPE,
// biases, tanh GELU, tied head), each later one the previous update (Muon on the blocks'
// matrices, AdamW on the rest, clipping, the schedule). Two runs: the recipe as trained (its
// warmup: lr 3e-5 at step 1), and lr 3e-3 from the first step, where a wrong Muon would show
// at once (an optimizer that forgot to zero Muon's gradients drifted by 6.5e-4 at step 3).
// Exits 1 when any step's losses differ by more than --tol (1e-5 nats).
//   node bench/ttq/check.mjs [--steps 6] [--tol 1e-5] [--seed 1] [--simd simd128|relaxed]
// Needs /usr/bin/python3 with torch (and OpenBLAS, as the bench runs it).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import * as wf from '../../src/js/node.js';

const root = new URL('../../', import.meta.url);
const { values: o } = parseArgs({
  options: {
    steps: { type: 'string', default: '6' }, tol: { type: 'string', default: '1e-5' }, seed: { type: 'string', default: '1' },
    simd: { type: 'string' },
  },
});
const steps = Number(o.steps), tol = Number(o.tol), seed = Number(o.seed);
const textPath = new URL('data/austen/pride_and_prejudice.txt', root).pathname;
const text = readFileSync(textPath, 'utf8');

/** PyTorch's batch losses: reference.py --serve trains `steps` steps and answers with them. */
function torchLosses(warmup) {
  const r = spawnSync('/usr/bin/python3', [new URL('bench/ttq/reference.py', root).pathname, '--micro', '--serve', '--seed', String(seed),
    '--steps', '3000', '--warmup', String(warmup), '--text', textPath], {
    input: `${steps}\n`, encoding: 'utf8',
    env: { ...process.env, LD_LIBRARY_PATH: '/usr/lib/x86_64-linux-gnu/openblas-openmp', OMP_NUM_THREADS: '1' },
  });
  if (r.status !== 0) throw new Error(`reference.py failed (${r.status}): ${r.stderr}`);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  return { settings: lines[0], losses: lines[1].losses };
}

/** wasmformer's: the package's train() with the micro preset's recipe, by steps. */
async function wasmLosses(warmup) {
  const model = await wf.createModel({ preset: 'micro', seed }, { text, tokenizer: 'char', threads: 1, ...(o.simd ? { simd: o.simd } : {}) });
  const ids = model.tokenizer.encode(text);
  model.setOptimizer({ lr: 3e-3, beta2: 0.99, muon: 1, warmup, decaySteps: 3000 - warmup, start: 0, minLrRatio: 0.1, gradClip: 1, weightDecay: 0.1 });
  const losses = [];
  // yieldMs 0: a progress call (and its loss) after every step
  await model.train(ids, { steps, batchSize: 16, evalInterval: 0, valFraction: 0.1, keepSchedule: true, yieldMs: 0, onProgress: (p) => losses.push(p.loss) });
  const simd = model.info().simd;
  model.dispose();
  return { simd, losses };
}

let worst = 0;
for (const [name, warmup] of [['the recipe (warmup 100)', 100], ['lr 3e-3 from step 1 (warmup 1)', 1]]) {
  const t = torchLosses(warmup), w = await wasmLosses(warmup);
  console.log(`${name}: PyTorch ${t.settings.torch} (${t.settings.params} parameters) against wasmformer (${w.simd}), seed ${seed}`);
  console.log('| step | PyTorch loss | wasmformer loss | difference |\n|---:|---:|---:|---:|');
  for (let i = 0; i < steps; i++) {
    const d = w.losses[i] - t.losses[i];
    worst = Math.max(worst, Math.abs(d));
    console.log(`| ${i + 1} | ${t.losses[i].toFixed(7)} | ${w.losses[i].toFixed(7)} | ${d.toExponential(1)} |`);
  }
  console.log('');
}
console.log(`largest difference ${worst.toExponential(2)} nats (tolerance ${tol}): ${worst <= tol ? 'the same recipe' : 'MISMATCH'}`);
process.exit(worst <= tol ? 0 : 1);
