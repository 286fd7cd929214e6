#!/usr/bin/env node
// Loss at equal seconds, whatever the machine's load (issue 28): a time budget of S seconds
// at a steady step time t is N = S / t steps, each at the lr train({seconds}) would give it
// after (k - 1) t of S (budgetFactor: warmup over 5 %, cosine to 0.1), and loss against steps
// does not depend on the clock. So each side runs by steps (--budget-steps N: reference.py
// on wasmformer's recipe, and wasmformer_run.mjs in this Node) with N from its tokens/s in
// bench/ttq/speed.mjs's paired, CPU-timed run on this machine, and the final losses are the
// losses both would reach in S seconds of one thread. (bench/ttq/run.mjs --same --seconds S
// runs the budgets for real, on the wall clock.)
//   node bench/ttq/equal.mjs --speed /tmp/ttq-speed/speed.json [--seconds 30,120] [--seeds 1,2,3]
//        [--long 600] [--long-seeds 1] [--text data/austen/pride_and_prejudice.txt] [--other ...] [--out DIR]
// Writes DIR/<side>-<S>s-s<seed>.jsonl (resumable), DIR/table.md, DIR/summary.json.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { median } from './core.mjs';

const here = new URL('.', import.meta.url).pathname, root = new URL('../../', import.meta.url).pathname;
const { values: o } = parseArgs({
  options: {
    speed: { type: 'string' }, seconds: { type: 'string', default: '30,120' }, seeds: { type: 'string', default: '1,2,3' },
    long: { type: 'string', default: '600' }, 'long-seeds': { type: 'string', default: '1' },
    text: { type: 'string', default: 'data/austen/pride_and_prejudice.txt' }, other: { type: 'string', default: 'data/austen/emma.txt' },
    out: { type: 'string', default: '/tmp/ttq-equal' }, node: { type: 'string', default: '' },
  },
});
if (!o.speed) { console.error('give --speed FILE (bench/ttq/speed.mjs writes speed.json)'); process.exit(2); }
const speed = JSON.parse(readFileSync(o.speed, 'utf8'));
const run0 = speed.find((r) => r.node === (o.node || process.version)) ?? speed[0];
const B = 16, T = 64;
// tokens/s of one thread: PyTorch, and wasmformer with the kernels this Node picks (relaxed
// where it has them)
const tokS = { torch: (B * T) / (run0.torch_ms / 1000), wasm: (B * T) / (run0.relaxed_ms / 1000) };
mkdirSync(o.out, { recursive: true });
const texts = ['--text', `${root}${o.text}`, '--other', `${root}${o.other}`];
const budgets = [
  ...o.seconds.split(',').map(Number).map((s) => [s, o.seeds.split(',').map(Number)]),
  ...(o.long ? o.long.split(',').map(Number).map((s) => [s, o['long-seeds'].split(',').map(Number)]) : []),
];

function command(side, steps, seed) {
  if (side === 'torch') {
    return ['/usr/bin/python3', [`${here}reference.py`, '--micro', '--seed', String(seed), '--budget-steps', String(steps), '--eval-every', '0', ...texts],
      { LD_LIBRARY_PATH: '/usr/lib/x86_64-linux-gnu/openblas-openmp', OMP_NUM_THREADS: '1' }];
  }
  return [process.execPath, [`${here}wasmformer_run.mjs`, '--preset', 'micro', '--batch', '16', '--lr', '3e-3', '--beta2', '0.99', '--muon', '1',
    '--seed', String(seed), '--budget-steps', String(steps), '--eval-every', '0', '--other-at', 'end', '--simd', 'relaxed', ...texts], {}];
}

function run(side, steps, seed, file) {
  const [cmd, args, env] = command(side, steps, seed);
  process.stderr.write(`${side} ${steps} steps seed ${seed}: ${cmd} ${args.join(' ')}\n`);
  return new Promise((resolve, reject) => {
    const out = [];
    const child = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (d) => out.push(d));
    child.on('close', (code) => (code ? reject(new Error(`${side} exited with ${code}`)) : (writeFileSync(file, Buffer.concat(out)), resolve())));
  });
}

const rows = [];
for (const [S, seeds] of budgets) {
  const steps = { torch: Math.round((S * tokS.torch) / (B * T)), wasm: Math.round((S * tokS.wasm) / (B * T)) };
  const each = [];
  for (const seed of seeds) {
    const got = {};
    for (const side of ['torch', 'wasm']) {
      const file = `${o.out}/${side}-${S}s-s${seed}.jsonl`;
      if (!existsSync(file)) await run(side, steps[side], seed, file);
      const summary = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).find((l) => l.kind === 'summary');
      got[side] = summary.val_loss;
    }
    each.push({ seed, torch: got.torch, wasm: got.wasm, diff: got.wasm - got.torch });
  }
  rows.push({ seconds: S, steps, each, torch: median(each.map((e) => e.torch)), wasm: median(each.map((e) => e.wasm)) });
}
const f = (x, d = 4) => x.toFixed(d);
const table = [
  `Loss at equal seconds of one thread, from ${run0.node}'s paired CPU-timed speed (bench/ttq/speed.mjs: PyTorch ${f(tokS.torch, 0)} `
  + `tokens/s, wasmformer relaxed ${f(tokS.wasm, 0)} tokens/s, load ${f(run0.loadavg[0], 1)}); text ${o.text} (its last 10 % held out); `
  + `micro, wasmformer's recipe on both sides; load average now ${f(loadavg()[0], 1)}.`, '',
  '| seconds | PyTorch steps | wasmformer steps | seed | PyTorch val loss | wasmformer val loss | difference | wasmformer <= PyTorch |',
  '|---:|---:|---:|---:|---:|---:|---:|---|',
  ...rows.flatMap((r) => r.each.map((e) => `| ${r.seconds} | ${r.steps.torch} | ${r.steps.wasm} | ${e.seed} | ${f(e.torch)} | ${f(e.wasm)} | `
    + `${e.diff > 0 ? '+' : ''}${f(e.diff)} | ${e.diff <= 0 ? 'yes' : 'no'} |`)),
].join('\n');
console.log(table);
writeFileSync(`${o.out}/table.md`, `${table}\n`);
writeFileSync(`${o.out}/summary.json`, `${JSON.stringify({ text: o.text, speed: run0, tokens_per_s: tokS, rows }, null, 1)}\n`);
