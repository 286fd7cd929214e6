#!/usr/bin/env node
// The time-to-quality bench (issue 14): PyTorch's nanoGPT recipe against wasmformer's recipe,
// each run scored by the shared evaluation (bench/ttq/README.md) at regular steps, the clock
// stopped while evaluating. Runs every side for every seed, one process at a time (resumable:
// a run whose file exists is read, not run again), then prints and writes the table, the
// time to reach the target loss and the plot.
//
//   node bench/ttq/run.mjs                                  # all sides, seeds 1-3: an hour or more
//   node bench/ttq/run.mjs --sides torch1,node1 --seeds 1   # a subset
//   node bench/ttq/run.mjs --recipe nanogpt                 # item 2: the identical recipe on both sides
//   node bench/ttq/run.mjs --report-only --out DIR          # the table and plot of runs already made
//   node bench/ttq/run.mjs --text data/rv1909/rv1909.txt --other data/austen/emma.txt   # another text
//   node bench/ttq/run.mjs --same --seconds 120             # issue 28: PyTorch running wasmformer's own recipe,
//                                                           # every side on a 120-second time budget
//   node bench/ttq/run.mjs --same --seconds 120 --sides torch1+node1   # the two at the same time
//
// Sides: torchN (reference.py, nanoGPT's recipe, N threads of OpenBLAS), nodeN
// (wasmformer_run.mjs: the wasm build in Node, N threads), chromiumN (chromium.mjs: the same
// in headless Chromium). The target is the median over seeds of the reference's final val
// loss (after its --torch-steps iterations), unless --target is given. --same: PyTorch runs
// wasmformer's own recipe (reference.py --micro: the micro preset's model, Muon, RoPE) instead
// of nanoGPT's, so the two sides differ by the engine only. --seconds S: every side trains on
// an S-second time budget (wasmformer's train({seconds}); reference.py --budget: the same lr
// against the clock), so the final losses are the losses at equal seconds. Time to target: the
// training seconds at which a run's val loss first reaches the target, interpolated
// linearly between the two evaluations around it. Figures are medians over seeds.
// Writes OUT/<side>-s<seed>.jsonl, OUT/summary.json, OUT/table.md, OUT/curves.svg.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { lineChart } from './svg.mjs';
import { crossing, median } from './core.mjs';

const here = new URL('.', import.meta.url).pathname;
const root = new URL('../../', import.meta.url).pathname;
/** wasmformer's recipes by name: nanogpt matches reference.py's defaults (GAP.md); default is
 * the recipe of `wasmformer train` with no flags (the micro preset's). */
export const RECIPES = {
  nanogpt: '--nanogpt --batch 12 --lr 1e-3 --warmup 100 --steps 2000',
  // the micro preset's recipe, its schedule as the curves of RESULTS.md (3,000 steps), stopped
  // at 1,500 (past the target)
  default: '--preset micro --config positions=rope --batch 16 --lr 3e-3 --beta2 0.99 --muon 1 --warmup 100 --steps 3000 --max-steps 1500',
};
const { values: o } = parseArgs({
  options: {
    sides: { type: 'string', default: 'torch1,node1,node2,chromium1,chromium2' },
    seeds: { type: 'string', default: '1,2,3' },
    recipe: { type: 'string', default: 'default' },
    torch: { type: 'string', default: '' }, // more reference.py flags
    'torch-steps': { type: 'string', default: '2000' },
    'eval-every': { type: 'string' }, // default 125 steps, or a sixth of --seconds
    'torch-eval-every': { type: 'string' }, // default 250 steps (its curve only draws; its final loss is the target)
    same: { type: 'boolean', default: false },
    seconds: { type: 'string' },
    target: { type: 'string' },
    out: { type: 'string', default: '/tmp/ttq-bench' },
    'report-only': { type: 'boolean', default: false },
    title: { type: 'string', default: '' },
    // the training text (its last 10 % held out) and the second held-out text, on every side
    text: { type: 'string', default: 'data/austen/pride_and_prejudice.txt' },
    other: { type: 'string', default: 'data/austen/emma.txt' },
  },
});
let recipe = (RECIPES[o.recipe] ?? o.recipe).split(/\s+/).filter(Boolean);
// the torch side's recipe flags: wasmformer's own (--same) or nanoGPT's (reference.py's default)
let torchRecipe = o.same ? ['--micro', ...(o.recipe === 'default' ? ['--steps', '3000', '--max-steps', '1500', '--warmup', '100'] : [])] : [];
if (o.seconds) {
  // a time budget replaces the schedule by steps on every side
  const drop = new Set(['--steps', '--max-steps', '--warmup']);
  const strip = (args) => args.filter((a, i) => !drop.has(a) && !drop.has(args[i - 1]));
  recipe = [...strip(recipe), '--seconds', o.seconds];
  torchRecipe = [...strip(torchRecipe), '--budget', '--seconds', o.seconds];
}
const every = o['eval-every'] ?? (o.seconds ? `${Number(o.seconds) / 6}s` : '125');
const torchEvery = o['torch-eval-every'] ?? (o.seconds ? every : '250');
const seeds = o.seeds.split(',').map(Number);
// groups of sides joined by + (torch1+node1) run at the same time, one group after another:
// on a machine other jobs load, the sides of a group share whatever the others leave
const groups = o.sides.split(',').map((g) => g.split('+'));
const sides = groups.flat();
mkdirSync(o.out, { recursive: true });

function command(side, seed) {
  const m = /^(torch|node|chromium)(\d+)$/.exec(side);
  if (!m) throw new Error(`unknown side ${side}: torchN, nodeN or chromiumN`);
  const [, kind, threads] = m;
  const texts = ['--text', `${root}${o.text}`, '--other', `${root}${o.other}`];
  if (kind === 'torch') {
    return ['/usr/bin/python3', [`${here}reference.py`, '--seed', String(seed), '--threads', threads, '--steps', o['torch-steps'],
      '--eval-every', torchEvery, ...texts, ...torchRecipe, ...o.torch.split(/\s+/).filter(Boolean)],
    { LD_LIBRARY_PATH: '/usr/lib/x86_64-linux-gnu/openblas-openmp', OMP_NUM_THREADS: threads }];
  }
  const script = kind === 'node' ? 'wasmformer_run.mjs' : 'chromium.mjs';
  // chromium.mjs serves the repository and takes paths relative to it
  const pageTexts = kind === 'node' ? texts : ['--text', o.text, '--other', o.other];
  return [process.execPath, [`${here}${script}`, '--seed', String(seed), '--threads', threads, '--eval-every', every, ...pageTexts, ...recipe], {}];
}

function runOne(side, seed, file) {
  const [cmd, args, env] = command(side, seed);
  process.stderr.write(`run ${side} seed ${seed}: ${cmd} ${args.join(' ')}\n`);
  return new Promise((resolve, reject) => {
    const chunks = [];
    const child = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (d) => chunks.push(d));
    child.on('close', (code) => {
      if (code !== 0) { reject(new Error(`${side} seed ${seed} exited with ${code}`)); return; }
      writeFileSync(file, Buffer.concat(chunks));
      resolve();
    });
  });
}

const readRun = (file) => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));


if (!o['report-only']) {
  // sides in turns, the order reversed every other seed, so that a machine whose load drifts
  // slows each side alike
  for (const [k, seed] of seeds.entries()) {
    for (const group of k % 2 ? [...groups].reverse() : groups) {
      const todo = group.filter((side) => !existsSync(`${o.out}/${side}-s${seed}.jsonl`));
      await Promise.all(todo.map((side) => runOne(side, seed, `${o.out}/${side}-s${seed}.jsonl`)));
    }
  }
}

// ---- the report ----
const runs = {};
for (const side of sides) {
  for (const seed of seeds) {
    const file = `${o.out}/${side}-s${seed}.jsonl`;
    if (!existsSync(file)) continue;
    const lines = readRun(file);
    const summary = lines.find((l) => l.kind === 'summary'), settings = lines.find((l) => l.kind === 'settings');
    if (!summary) continue;
    (runs[side] ??= []).push({ seed, settings, summary, points: lines.filter((l) => l.val_loss !== undefined && !l.kind) });
  }
}
const torchSide = sides.find((s) => s.startsWith('torch') && runs[s]);
const target = o.target !== undefined ? Number(o.target) : torchSide ? median(runs[torchSide].map((r) => r.summary.val_loss)) : null;
const rows = Object.entries(runs).map(([side, rs]) => {
  const each = rs.map((r) => ({
    seed: r.seed, final_val: r.summary.val_loss, final_bpc: r.summary.val_bpc ?? r.summary.val_loss / Math.LN2,
    emma: r.summary.emma_loss, steps: r.summary.steps, train_seconds: r.summary.train_seconds, ms_per_step: r.summary.ms_per_step,
    seconds_to_target: target === null ? null : crossing(r.points, target, 'elapsed'),
    steps_to_target: target === null ? null : crossing(r.points, target, 'step'),
    loadavg: r.summary.loadavg?.[0] ?? null,
    tokens_per_s: r.points.length ? r.points[r.points.length - 1].tokens / r.summary.train_seconds : null,
  }));
  const med = (k) => median(each.map((e) => e[k]));
  return {
    side, seeds: each.map((e) => e.seed), final_val: med('final_val'), final_bpc: med('final_bpc'), emma: med('emma'),
    steps: med('steps'), train_seconds: med('train_seconds'), ms_per_step: med('ms_per_step'),
    seconds_to_target: med('seconds_to_target'), steps_to_target: med('steps_to_target'), tokens_per_s: med('tokens_per_s'), runs: each,
  };
});
const torchRow = rows.find((r) => r.side === torchSide);
for (const r of rows) {
  r.vs_torch_time = torchRow && r.seconds_to_target !== null ? r.seconds_to_target / torchRow.train_seconds : null;
  // the final val loss against the torch side's on the same seed (same init and batches)
  r.vs_torch_loss = torchRow ? r.runs.map((e) => {
    const t = torchRow.runs.find((x) => x.seed === e.seed);
    return t ? e.final_val - t.final_val : null;
  }) : [];
}
const f = (x, d = 3) => (x === null || x === undefined ? '–' : x.toFixed(d));
const table = [
  `Target: val loss ${f(target, 4)} (${torchSide ? `median final val loss of ${torchSide}, ${o.seconds ? `${o.seconds} s` : `${o['torch-steps']} iterations`}` : '--target'}); `
  + `text: ${o.text} (second text: ${o.other}); recipe: ${recipe.join(' ')}; PyTorch: ${o.same ? `wasmformer's recipe (reference.py ${torchRecipe.join(' ')})` : "nanoGPT's recipe"}; `
  + `${process.version}; load average at the end ${loadavg()[0].toFixed(1)}, during the runs ${f(median(rows.flatMap((r) => r.runs.map((e) => e.loadavg))), 1)} (median)`,
  '',
  '| side | seeds | final val loss | − PyTorch\'s, per seed | bpc | 2nd text | steps | training s | ms/step | tokens/s | steps to target | s to target | time / PyTorch\'s |',
  '|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...rows.map((r) => `| ${r.side} | ${r.seeds.join(',')} | ${f(r.final_val, 4)} | ${r.vs_torch_loss.map((x) => (x === null ? '–' : `${x > 0 ? '+' : ''}${x.toFixed(4)}`)).join(' ')} | `
    + `${f(r.final_bpc)} | ${f(r.emma, 4)} | ${f(r.steps, 0)} | `
    + `${f(r.train_seconds, 1)} | ${f(r.ms_per_step, 1)} | ${f(r.tokens_per_s, 0)} | ${f(r.steps_to_target, 0)} | ${f(r.seconds_to_target, 1)} | ${f(r.vs_torch_time, 3)} |`),
  '',
  'Medians over seeds; "− PyTorch\'s": each seed\'s final val loss minus the PyTorch side\'s on that seed (the same initial weights and batches); "s to target": training seconds (evaluations off the clock) until the val loss reaches the target; "time / PyTorch\'s": that over PyTorch\'s training seconds for its whole run.',
].join('\n');
console.log(table);
writeFileSync(`${o.out}/table.md`, `${table}\n`);
writeFileSync(`${o.out}/summary.json`, `${JSON.stringify({ target, recipe: recipe.join(' '), torch: o.same ? torchRecipe.join(' ') : 'nanogpt', seconds: o.seconds ? Number(o.seconds) : null, node: process.version, rows }, null, 1)}\n`);
const COLORS = { torch1: '#d62728', torch2: '#ff9896', node1: '#1f77b4', node2: '#aec7e8', chromium1: '#2ca02c', chromium2: '#98df8a' };
const series = Object.entries(runs).flatMap(([side, rs]) => rs.map((r, i) => ({
  label: i === 0 ? `${side.replace(/(\d+)$/, ' $1 thr.')}${side.startsWith('torch') ? ' (PyTorch)' : ''}` : null,
  color: COLORS[side] ?? '#777', points: r.points.map((p) => [p.elapsed, p.val_loss]),
})));
if (series.length) {
  writeFileSync(`${o.out}/curves.svg`, lineChart({
    series, hlines: target === null ? [] : [{ y: target, label: `target ${target.toFixed(3)}` }],
    title: o.title || `Validation loss against training time (${o.text.replace(/^.*\//, '')}, held-out 10 %)`,
    xLabel: 'training seconds (evaluation not counted)', yLabel: 'val loss (nats/char)', yMin: Math.max(0, Math.min(target ?? Infinity, ...series.flatMap((s) => s.points.map((p) => p[1]))) - 0.05), yMax: 2.6,
  }));
}
