#!/usr/bin/env node
// The recipe decisions of issue 14 (item 3), from the two halves the bench measures apart:
// steps to the target (the native curves of jobs-screen.txt: deterministic, any load) times
// the time of a step (paired.mjs: the wasm build in Node, one thread, variants taking turns,
// so the ratios hold on a loaded machine). Time to target, as a share of PyTorch's time for
// its 2,000 iterations: steps_to_target x (step time / PyTorch's step time) / 2000.
//   node bench/ttq/decide.mjs [--runs bench/ttq/runs/screen] [--paired bench/ttq/results/paired-options.json]
//                             [--target 1.5821] [--out bench/ttq/results/decisions]
// Writes OUT.md (the table) and OUT.svg (val loss against time in units of PyTorch's run).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { crossing } from './core.mjs';
import { lineChart } from './svg.mjs';

const { values: o } = parseArgs({
  options: {
    runs: { type: 'string', default: new URL('runs/screen', import.meta.url).pathname },
    // paired step times: each file's ratios to its PyTorch variant; a later file's win
    paired: { type: 'string', default: ['options', 'finalists', 'qk', 'rope'].map((n) => new URL(`results/paired-${n}.json`, import.meta.url).pathname).join(',') },
    // the reference's final val loss after 2,000 iterations, median of seeds 1-3 (results.json, GAP.md)
    target: { type: 'string', default: '1.5821' },
    out: { type: 'string', default: new URL('results/decisions', import.meta.url).pathname },
  },
});
const target = Number(o.target);

// each row: the curve (jobs-screen.txt's name without -s1), what it changes, the paired
// variant whose step time it has, and the row it is compared with
export const ROWS = [
  ['base', "today's defaults: tiny, batch 8, lr 2e-3, beta2 0.95, GELU (tanh), biases", 'base', null],
  ['b99', 'beta2 0.99', 'base', 'base'],
  ['relu2', 'ReLU²', 'relu2', 'base'],
  ['muon', 'Muon', 'muon', 'base'],
  ['b99-lr3', 'beta2 0.99 + lr 3e-3', 'base', 'b99'],
  ['b99-muon', 'beta2 0.99 + Muon', 'muon', 'b99'],
  ['b99-muon-relu2', 'beta2 0.99 + Muon + ReLU²', 'muon-relu2', 'b99-muon'],
  ['b99-muon-B16', 'beta2 0.99 + Muon, batch 16', 'muon-B16', 'b99-muon'],
  ['b99-muon-lr3', 'beta2 0.99 + Muon + lr 3e-3', 'muon', 'b99-muon'],
  ['b99-L2', 'beta2 0.99, 2 layers', 'L2', 'b99'],
  ['b99-C96', 'beta2 0.99, width 96', 'C96', 'b99'],
  ['b99-B4', 'beta2 0.99, batch 4', 'B4', 'b99'],
  ['b99-rope', 'beta2 0.99 + RoPE', 'rope', 'b99'],
  ['b99-untied', 'beta2 0.99 + untied head', 'untied', 'b99'],
  ['b99-qk', 'beta2 0.99 + QK-norm', 'qk', 'b99'],
  ['b99-nobias', 'beta2 0.99, no biases', 'nobias', 'b99'],
  ['b99-zero', 'beta2 0.99 + zero-init projections', 'base', 'b99'],
  ['b99-cap', 'beta2 0.99 + logit cap 30', 'cap', 'b99'],
  ['b99-rms', 'beta2 0.99 + RMSNorm', 'rms', 'b99'],
  ['micro', "the page's micro shape (2 layers, width 64), batch 16, lr 3e-3, beta2 0.99", 'micro', 'b99'],
  ['micro-muon', 'micro + Muon', 'micro-muon', 'micro'],
  ['L3C96-muon', '3 layers, width 96, batch 16, lr 3e-3, beta2 0.99, Muon', 'L3C96-muon', 'micro-muon'],
  ['mm-base', 'micro + Muon, seed 1, evaluated every 125 steps as the rows below', 'micro-muon', null],
  ['micro-muon-relu2', 'micro + Muon + ReLU²', 'micro-muon-relu2', 'mm-base'],
  ['micro-muon-s2', 'micro + Muon, seed 2', 'micro-muon', null],
  ['micro-muon-s3', 'micro + Muon, seed 3', 'micro-muon', null],
  ['mm-qk', 'micro + Muon + QK-norm', 'micro-muon-qk', 'mm-base'],
  ['mm-untied', 'micro + Muon + untied head', 'untied', 'mm-base', true],
  ['mm-nobias', 'micro + Muon, no biases', 'nobias', 'mm-base', true],
  ['mm-zero', 'micro + Muon + zero-init projections', 'base', 'mm-base', true],
  ['mm-cap', 'micro + Muon + logit cap 30', 'cap', 'mm-base', true],
  ['mm-rope', 'micro + Muon + RoPE', 'micro-muon-rope', 'mm-base'],
  ['mm-rope-s2', 'micro + Muon + RoPE, seed 2', 'micro-muon-rope', 'micro-muon-s2'],
  ['mm-rope-s3', 'micro + Muon + RoPE, seed 3', 'micro-muon-rope', 'micro-muon-s3'],
  ['mm-rms', 'micro + Muon + RMSNorm', 'rms', 'mm-base', true],
  ['mm-b95', 'micro + Muon, beta2 0.95', 'base', 'mm-base', true],
  ['mm-lr5', 'micro + Muon, lr 5e-3', 'base', 'mm-base', true],
];

const pairedRuns = o.paired.split(',').map((f) => JSON.parse(readFileSync(f, 'utf8')));
const vsTorch = {}; // a step's time over PyTorch's (nanoGPT's model, batch 12, 1 thread)
for (const p of pairedRuns) {
  const t = p.variants.find((v) => v.name === 'torch').ratio;
  for (const v of p.variants) vsTorch[v.name] = { ratio: v.ratio / t, rounds: p.rounds, loadavg: p.loadavg };
}
const ratioOf = Object.fromEntries(Object.entries(vsTorch).map(([k, v]) => [k, v.ratio]));
const torch = ratioOf.torch / ratioOf.base; // PyTorch's step over wasm base's
const curves = {};
for (const [name] of ROWS) {
  const file = `${o.runs}/nat-${name}${/-s\d+$/.test(name) ? '' : '-s1'}.jsonl`;
  if (!existsSync(file)) continue;
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  // a curve stopped early (once past the target) counts: its crossing is known
  curves[name] = { settings: lines[0], points: lines.filter((l) => !l.kind) };
}
const f = (x, d) => (x === null || x === undefined || Number.isNaN(x) ? '–' : x.toFixed(d));
const results = {};
const rows = [];
for (const [name, what, variant, against, scaled] of ROWS) {
  const c = curves[name];
  if (!c) continue;
  const steps = crossing(c.points, target, 'step');
  // a step's time over wasm base's; `scaled`: the option's cost measured on tiny (its paired
  // ratio to base) applied to micro + Muon's step
  const own = ratioOf[variant] === undefined ? null : ratioOf[variant] / ratioOf.base;
  const ratio = own === null ? null : scaled ? (ratioOf['micro-muon'] / ratioOf.base) * own : own;
  const rel = steps !== null && ratio !== null && torch ? (steps * (ratio / torch)) / 2000 : null;
  results[name] = rel;
  if (ratio !== null && torch) c.vsTorch = ratio / torch;
  const last = c.points.at(-1);
  const base = against ? results[against] : null;
  const stoppedEarly = !c.points.length || c.points.at(-1).step < (c.settings.steps ?? 0) && !c.settings.args?.includes('stop=');
  const verdict = against === null ? '' : rel === null ? (stoppedEarly ? 'stopped before the target' : 'not reached in its run')
    : base === null || base === undefined ? 'reaches it (the other does not in its run)' : rel < base ? `**faster** (${f(rel / base, 2)}x)` : `slower (${f(rel / base, 2)}x)`;
  rows.push(`| ${what} | ${last.step} x ${c.settings.batch} | ${f(last.val_loss, 4)} | ${f(steps, 0)} | ${variant} | ${f(ratio, 3)} | ${f(ratio / torch, 2)} | ${f(rel, 2)} | ${against ?? ''} | ${verdict} |`);
}
const md = [
  `Target: val loss ${target} (PyTorch's nanoGPT recipe after 2,000 iterations, median of seeds 1-3). Seed 1. Paired step times (bench/ttq/paired.mjs, wasm in Node, 1 thread, each variant's median ratio to PyTorch's step in its run: ${pairedRuns.map((p) => `${p.variants.length} variants x ${p.rounds} rounds, load average ${p.loadavg.map((x) => x.toFixed(1)).join(' → ')}`).join('; ')}, the later run's figure where a variant is in both); PyTorch's step (nanoGPT's model, batch 12, 1 thread) = ${f(torch, 3)} x wasm base's (batch 8).`,
  '',
  '| recipe | steps x batch | last val | steps to target | step time of | step / base (paired) | step / PyTorch\'s | time to target / PyTorch\'s 2,000 its | against | verdict |',
  '|---|---:|---:|---:|---|---:|---:|---:|---|---|',
  ...rows,
].join('\n');
console.log(md);
writeFileSync(`${o.out}.md`, `${md}\n`);
const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
// val loss against time, in units of PyTorch's time for its 2,000 iterations (1 = PyTorch's
// whole run): each curve's steps x its paired step time / PyTorch's step / 2,000
const LABELS = { base: "old default: tiny, AdamW, beta2 0.95", b99: 'tiny, AdamW, beta2 0.99', 'b99-muon': 'tiny, Muon, beta2 0.99',
  micro: 'micro, AdamW, beta2 0.99', 'micro-muon': 'micro, Muon, beta2 0.99', 'mm-rope': 'micro, Muon, RoPE (new default)' };
const picked = Object.entries(curves).filter(([n, c]) => n in LABELS && c.vsTorch);
writeFileSync(`${o.out}.svg`, lineChart({
  series: picked.map(([n, c], i) => ({ label: LABELS[n], color: palette[i % palette.length], width: n === 'mm-rope' ? 2.6 : 1.6,
    points: c.points.filter((p) => (p.step * c.vsTorch) / 2000 <= 1.6).map((p) => [(p.step * c.vsTorch) / 2000, p.val_loss]) })),
  hlines: [{ y: target, label: `PyTorch after 2,000 iterations: ${target}` }],
  title: 'wasm, 1 thread: val loss against time (Pride and Prejudice, seed 1)',
  xLabel: "time, as a share of PyTorch's 2,000 iterations on 1 thread (steps x paired step time)",
  yLabel: 'val loss (nats/char)', yMin: 1.3, yMax: 2.6,
}));
