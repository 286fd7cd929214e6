#!/usr/bin/env node
// Steps per second of each preset with its recipe at its batch size, on one and two threads,
// through the package (issue 28: what a model size chosen for the time needs to know about
// this machine): every (preset, threads) model lives in this process and they take turns,
// a few steps each, the order rotated every round, wall clock; medians over rounds.
//   node bench/ttq/presets.mjs [--presets micro,tiny,baby] [--threads 1,2] [--rounds 8] [--seconds 1] [--out FILE]
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import * as wf from '../../src/js/node.js';

const { values: o } = parseArgs({
  options: {
    presets: { type: 'string', default: 'micro,tiny,baby' }, threads: { type: 'string', default: '1,2' },
    rounds: { type: 'string', default: '8' }, seconds: { type: 'string', default: '1' }, out: { type: 'string' },
  },
});
const text = readFileSync(new URL('../../data/austen/pride_and_prejudice.txt', import.meta.url), 'utf8');
const median = (v) => { const s = [...v].sort((a, b) => a - b), n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const sides = [];
for (const preset of o.presets.split(',')) {
  for (const threads of o.threads.split(',').map(Number)) {
    const model = await wf.createModel({ preset, seed: 1 }, { text, tokenizer: 'char', threads });
    const ids = model.tokenizer.encode(text), T = model.config.context, B = wf.PRESETS[preset].batchSize;
    sides.push({ preset, threads, model, ids, T, B, rates: [] });
  }
}
const load0 = loadavg()[0];
for (let r = 0; r < Number(o.rounds); r++) {
  for (let k = 0; k < sides.length; k++) {
    const s = sides[(k + r) % sides.length];
    const t0 = performance.now();
    let steps = 0;
    while (performance.now() - t0 < 1000 * Number(o.seconds)) {
      steps += (await s.model.train(s.ids, { steps: 2, batchSize: s.B, evalInterval: 0, valFraction: 0.1, yieldMs: Infinity })).steps;
    }
    if (r > 0) s.rates.push(steps / ((performance.now() - t0) / 1000)); // round 0 warms up
  }
}
const rows = sides.map((s) => ({
  preset: s.preset, threads: s.threads, kernels: s.model.info().simd, batch: s.B, context: s.T, params: s.model.paramCount,
  steps_per_s: median(s.rates), tokens_per_s: median(s.rates) * s.B * s.T,
}));
for (const r of rows) {
  const one = rows.find((x) => x.preset === r.preset && x.threads === 1);
  r.vs_one_thread = one ? r.steps_per_s / one.steps_per_s : null;
}
const out = { date: new Date().toISOString(), node: process.version, cpu: `${cpus().length} x ${cpus()[0].model}`, loadavg: [load0, loadavg()[0]], rounds: Number(o.rounds), rows };
console.log(`${out.date} ${out.node} ${out.cpu}, load average ${load0.toFixed(1)} -> ${out.loadavg[1].toFixed(1)}\n`);
console.log('| preset | batch x context | parameters | threads | kernels | steps/s | tokens/s | over 1 thread |\n|---|---|---:|---:|---|---:|---:|---:|');
for (const r of rows) {
  console.log(`| ${r.preset} | ${r.batch} x ${r.context} | ${r.params} | ${r.threads} | ${r.kernels} | ${r.steps_per_s.toFixed(1)} | ${r.tokens_per_s.toFixed(0)} | ${r.vs_one_thread.toFixed(2)}x |`);
}
if (o.out) writeFileSync(o.out, `${JSON.stringify(out, null, 1)}\n`);
for (const s of sides) s.model.dispose();
process.exit(0);
