// Issue 14's non-English check, read from its runs: PyTorch's nanoGPT recipe (reference.py)
// and wasmformer's default recipe (the native curve, build/native/ttq_curve: the wasm build's
// batches and, to rounding, its losses) trained on the Spanish Reina-Valera 1909
// (data/rv1909/), seeds 1-3. Prints the steps the default needs to reach the median final
// validation loss of PyTorch's 2,000 iterations, and both sides' final losses, as a table.
//   sh bench/ttq/queue.sh bench/ttq/jobs-rv1909.txt bench/ttq/runs/rv1909   # the runs
//   node bench/ttq/rv1909.mjs [DIR]
import { readFileSync } from 'node:fs';
import { crossing, median } from './core.mjs';

const dir = process.argv[2] ?? new URL('runs/rv1909/', import.meta.url).pathname;
const SEEDS = [1, 2, 3];
const read = (name) => readFileSync(`${dir}/${name}.jsonl`, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const summary = (rows) => rows.find((r) => r.kind === 'summary');
const curve = (rows) => rows.filter((r) => r.kind === undefined && r.val_loss !== undefined);

const ref = SEEDS.map((s) => read(`ref-rv-s${s}`));
const ours = SEEDS.map((s) => read(`nat-rv-default-s${s}`));
const target = median(ref.map((r) => summary(r).val_loss));
const steps = ours.map((r) => crossing(curve(r), target, 'step'));
const fmt = (x, d = 4) => (x === null ? '–' : x.toFixed(d));

console.log(`Target: ${fmt(target)}, PyTorch's median final validation loss after 2,000 iterations on data/rv1909/ (seeds ${SEEDS.join(', ')}).\n`);
console.log('| seed | PyTorch: final val loss (2,000 its x 12) | default: steps to the target | default: val loss after 1,500 steps x 16 |');
console.log('|---|---:|---:|---:|');
SEEDS.forEach((s, i) => console.log(`| ${s} | ${fmt(summary(ref[i]).val_loss)} | ${fmt(steps[i], 0)} | ${fmt(summary(ours[i]).val_loss)} |`));
console.log(`| median | ${fmt(target)} | ${fmt(median(steps), 0)} | ${fmt(median(ours.map((r) => summary(r).val_loss)))} |`);
