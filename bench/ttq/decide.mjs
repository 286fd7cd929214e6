#!/usr/bin/env node
// The recipe decisions of issue 14 (item 3), from the two halves the bench measures apart:
// steps to the target (the native curves of jobs-screen.txt: deterministic, any load) times
// the time of a step (paired.mjs: the wasm build in Node, one thread, variants taking turns,
// so the ratios hold on a loaded machine). Time to target, as a share of PyTorch's time for
// its 2,000 iterations: steps_to_target x (step time / PyTorch's step time) / 2000.
//   node bench/ttq/decide.mjs [--runs bench/ttq/runs/screen] [--paired bench/ttq/results/paired-options.json]
//                             [--target 1.5821] [--out bench/ttq/results/decisions]
// Writes OUT.md (the table) and OUT.svg (val loss against steps).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { crossing } from './core.mjs';
import { lineChart } from './svg.mjs';

const { values: o } = parseArgs({
  options: {
    runs: { type: 'string', default: new URL('runs/screen', import.meta.url).pathname },
    paired: { type: 'string', default: new URL('results/paired-options.json', import.meta.url).pathname },
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
];

const paired = JSON.parse(readFileSync(o.paired, 'utf8'));
const ratioOf = Object.fromEntries(paired.variants.map((v) => [v.name, v.ratio]));
const torch = ratioOf.torch;
const curves = {};
for (const [name] of ROWS) {
  const file = `${o.runs}/nat-${name}-s1.jsonl`;
  if (!existsSync(file)) continue;
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  if (!lines.some((l) => l.kind === 'summary')) continue;
  curves[name] = { settings: lines[0], points: lines.filter((l) => !l.kind) };
}
const f = (x, d) => (x === null || x === undefined || Number.isNaN(x) ? '–' : x.toFixed(d));
const results = {};
const rows = [];
for (const [name, what, variant, against] of ROWS) {
  const c = curves[name];
  if (!c) continue;
  const steps = crossing(c.points, target, 'step');
  const ratio = ratioOf[variant] ?? null;
  const rel = steps !== null && ratio !== null && torch ? (steps * (ratio / torch)) / 2000 : null;
  results[name] = rel;
  const last = c.points.at(-1);
  const base = against ? results[against] : null;
  const verdict = against === null ? '' : rel === null ? 'never reached' : base === null ? '' : rel < base ? `**faster** (${f(rel / base, 2)}x)` : `slower (${f(rel / base, 2)}x)`;
  rows.push(`| ${what} | ${last.step} x ${c.settings.batch} | ${f(last.val_loss, 4)} | ${f(steps, 0)} | ${variant} | ${f(ratio, 3)} | ${f(ratio / torch, 2)} | ${f(rel, 2)} | ${against ?? ''} | ${verdict} |`);
}
const md = [
  `Target: val loss ${target} (PyTorch's nanoGPT recipe after 2,000 iterations, median of seeds 1-3). Seed 1. Paired step times: ${paired.rounds} rounds of ${paired.steps} steps, load average ${paired.loadavg.map((x) => x.toFixed(1)).join(' → ')}; PyTorch's step (batch 12, 1 thread) = ${f(torch, 3)} x wasm base's.`,
  '',
  '| recipe | steps x batch | final val | steps to target | step time of | step / base (paired) | step / PyTorch\'s | time to target / PyTorch\'s 2,000 its | against | verdict |',
  '|---|---:|---:|---:|---|---:|---:|---:|---|---|',
  ...rows,
].join('\n');
console.log(md);
writeFileSync(`${o.out}.md`, `${md}\n`);
const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
const picked = Object.entries(curves).filter(([n]) => ['base', 'b99', 'relu2', 'muon', 'b99-muon', 'b99-lr3', 'b99-muon-relu2', 'b99-muon-B16'].includes(n));
writeFileSync(`${o.out}.svg`, lineChart({
  series: picked.map(([n, c], i) => ({ label: n, color: palette[i % palette.length], points: c.points.map((p) => [p.tokens / 1000, p.val_loss]) })),
  hlines: [{ y: target, label: `target ${target}` }],
  title: 'Validation loss against training tokens, seed 1 (native curves)', xLabel: 'training tokens (thousands)',
  yLabel: 'val loss (nats/char)', yMin: 1.45, yMax: 2.6,
}));
