#!/usr/bin/env node
// Where a whole training step's time goes in wasm (issue 28): V8's sampling profiler
// (node --cpu-prof) over --steps steps of a preset's own recipe through the package, one
// thread, and each sample put in a row by its call stack: the phase (forward, backward, the
// Muon pass, the rest of wf_model_step, or JavaScript outside the core), the op (the first
// frame below the phase that is not a layer or stack loop, the pool or the matrix multiply),
// and whether the time was inside wf_matmul (products: packing and the microkernel) or the
// op's own loops. Prints the table (share of the timed steps) and the step's time.
//   node bench/ttq/step-profile.mjs [--preset micro] [--batch 16] [--steps 300] [--simd relaxed|simd128]
//        [--dist DIR (a folder holding another build's dist/: its src/js/node.js is loaded)] [--json out.json]
// Node 22 picks the relaxed build by default; sampling every 100 us costs a few percent.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: o } = parseArgs({
  options: {
    preset: { type: 'string', default: 'micro' }, batch: { type: 'string', default: '16' },
    steps: { type: 'string', default: '300' }, simd: { type: 'string' }, dist: { type: 'string' },
    json: { type: 'string' }, child: { type: 'boolean', default: false },
  },
});
const root = o.dist ?? new URL('../../', import.meta.url).pathname;

if (o.child) {
  // the timed steps, as paired.mjs's wasm variants take them, with the preset's whole recipe
  const wf = await import(join(root, 'src/js/node.js'));
  const text = readFileSync(new URL('../../data/austen/pride_and_prejudice.txt', import.meta.url), 'utf8');
  const model = await wf.createModel({ preset: o.preset, seed: 1 },
    { text, tokenizer: 'char', threads: 1, ...(o.simd ? { simd: o.simd } : {}) });
  const B = Number(o.batch), T = model.config.context, steps = Number(o.steps);
  const ids = model.tokenizer.encode(text), span = Math.floor(ids.length * 0.9) - T - 1;
  const x = new Int32Array(B * T), y = new Int32Array(B * T);
  let seed = 7;
  const rnd = () => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed; };
  const c0 = process.cpuUsage();
  for (let s = 0; s < steps; s++) {
    for (let b = 0; b < B; b++) {
      const at = rnd() % span;
      x.set(ids.subarray(at, at + T), b * T);
      y.set(ids.subarray(at + 1, at + T + 1), b * T);
    }
    model.trainStep(x, y, B, T);
  }
  const c = process.cpuUsage(c0);
  console.log(JSON.stringify({ kernels: model.info().simd, ms_cpu: (c.user + c.system) / 1000 / steps }));
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), 'wf-step-profile-'));
const args = ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '100', new URL(import.meta.url).pathname, '--child',
  '--preset', o.preset, '--batch', o.batch, '--steps', o.steps, ...(o.simd ? ['--simd', o.simd] : []), ...(o.dist ? ['--dist', o.dist] : [])];
const load0 = loadavg()[0];
const r = spawnSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
if (r.status !== 0) throw new Error(`the profiled run failed (${r.status})`);
const run = JSON.parse(r.stdout.trim().split('\n').pop());
const prof = JSON.parse(readFileSync(join(dir, readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))), 'utf8'));

// each node's self time, and its parent
const byId = new Map(prof.nodes.map((n) => [n.id, n])), parent = new Map(), self = new Map();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
prof.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)));

const PHASES = { wf_model_forward_batch: 'forward', wf_model_backward_batch: 'backward', muon_pass: 'Muon (Newton-Schulz, update)' };
// frames that only carry an op: the layer and stack loops, the pool, the products' plumbing
const PLUMBING = /^(wf_block_(forward|backward)|wf_stack_forward|stack_backward|wf_pool_(run|for)|run|range_task|wf_lin_(forward|backward)|wf_norm_(forward|backward)|act_(forward|backward)|muon_task|muon_update_matrix|wf_muon_update)$/;
// what a row's frame does where its name does not say (inlined loops, memory.fill)
const LABEL = {
  wf_block_backward: 'wf_block_backward (zeroing activation gradients)', run: 'train.c run (zeroing the gradients)',
  wf_muon_update: 'wf_muon_update (momentum, transposes, the update)',
};
const PRODUCT = /^(wf_matmul|wf_matmul_many|mm_alone|mm_chunked|batch_product|batch_pack|mm_rows)$/;
const rows = new Map();
let inStep = 0, total = 0;
for (const n of prof.nodes) {
  const t = self.get(n.id);
  if (!t) continue;
  const chain = []; // root first
  for (let id = n.id; id !== undefined; id = parent.get(id)) chain.unshift(byId.get(id).callFrame.functionName);
  const step = chain.indexOf('wf_model_step_lr');
  const train = chain.includes('trainStep');
  if (!train) continue; // model creation, module compilation: not a step
  total += t;
  let phase = 'JavaScript and the call (batch copy, info)', op = '', kind = '';
  if (step >= 0) {
    inStep += t;
    let at = chain.findIndex((f, i) => i > step && PHASES[f]);
    phase = at >= 0 ? PHASES[chain[at]] : 'rest of the step (loss, grad norm, clip, AdamW, zeroing)';
    if (at < 0) at = step;
    const below = chain.slice(at + 1);
    op = below.find((f) => !PLUMBING.test(f) && !PRODUCT.test(f)) ?? (below.length ? below[below.length - 1] : chain[at]);
    if (PRODUCT.test(op) || below.some((f) => PRODUCT.test(f))) kind = 'products';
    if (below.findIndex((f) => PRODUCT.test(f)) >= 0 && below.indexOf(op) > below.findIndex((f) => PRODUCT.test(f))) op = '(in the products)';
  }
  const key = `${phase}\t${op}\t${kind}`;
  rows.set(key, (rows.get(key) ?? 0) + t);
}
if (!inStep) {
  // emcc 3.1.6's -O3 builds (SIMD128) drop the name section; the relaxed builds (clang-19) keep it
  console.error(`no wasm function names in the ${run.kernels} build's profile: profile the relaxed build (Node 22, --simd relaxed)`);
  process.exit(1);
}
const sorted = [...rows].sort((a, b) => b[1] - a[1]);
const pct = (t) => (100 * t / total).toFixed(1);
const lines = [
  `${o.preset}, batch ${o.batch}, ${o.steps} steps, one thread, ${run.kernels}, Node ${process.version}: ${run.ms_cpu.toFixed(1)} ms CPU per step under the profiler (load average ${load0.toFixed(1)})`, '',
  '| phase | op | inside wf_matmul | share of the steps |', '|---|---|---|---:|',
  ...sorted.filter(([, t]) => t / total >= 0.002).map(([k, t]) => { const [p, op, kind] = k.split('\t'); return `| ${p} | ${LABEL[op] ?? op} | ${kind ? 'yes' : ''} | ${pct(t)} % |`; }),
];
const phaseSum = new Map(), kindSum = new Map();
for (const [k, t] of rows) {
  const [p, , kind] = k.split('\t');
  phaseSum.set(p, (phaseSum.get(p) ?? 0) + t);
  kindSum.set(kind || 'other', (kindSum.get(kind || 'other') ?? 0) + t);
}
lines.push('', `by phase: ${[...phaseSum].sort((a, b) => b[1] - a[1]).map(([p, t]) => `${p} ${pct(t)} %`).join('; ')}`,
  `inside wf_matmul (packing and microkernel) ${pct(kindSum.get('products') ?? 0)} %, everything else ${pct(kindSum.get('other') ?? 0)} %; inside wf_model_step ${pct(inStep)} %`);
console.log(lines.join('\n'));
if (o.json) writeFileSync(o.json, `${JSON.stringify({ ...run, node: process.version, loadavg: load0, rows: Object.fromEntries(sorted.map(([k, t]) => [k, t / total])) }, null, 1)}\n`);
