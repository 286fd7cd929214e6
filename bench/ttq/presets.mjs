#!/usr/bin/env node
// Steps per second of each preset with its recipe at its batch size, on one and two threads,
// through the package (issue 28: what a model size chosen for the time needs to know about
// this machine): every (preset, threads) model lives in this process and they take turns,
// each its own run, about --seconds of steps a turn, the order rotated every round, wall
// clock; medians over rounds.
//   node bench/ttq/presets.mjs [--presets micro,tiny,baby] [--threads 1,2] [--rounds 8] [--seconds 1] [--clock wall|cpu] [--out FILE]
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import * as wf from '../../src/js/node.js';

const { values: o } = parseArgs({
  options: {
    presets: { type: 'string', default: 'micro,tiny,baby' }, threads: { type: 'string', default: '1,2' },
    rounds: { type: 'string', default: '8' }, seconds: { type: 'string', default: '1' }, out: { type: 'string' },
    clock: { type: 'string', default: 'wall' },
  },
});
const text = readFileSync(new URL('../../data/austen/pride_and_prejudice.txt', import.meta.url), 'utf8');
const median = (v) => { const s = [...v].sort((a, b) => a - b), n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
if (o.clock !== 'wall' && o.clock !== 'cpu') throw new Error(`--clock is wall or cpu, not ${o.clock}`);
if (o.clock === 'cpu' && o.threads !== '1') throw new Error('--clock cpu times one thread: add --threads 1');
const sides = [];
for (const preset of o.presets.split(',')) {
  for (const threads of o.threads.split(',').map(Number)) {
    const model = await wf.createModel({ preset, seed: 1 }, { text, tokenizer: 'char', threads });
    const ids = model.tokenizer.encode(text), T = model.config.context, B = wf.PRESETS[preset].batchSize;
    // one run per model, driven in turns: a train() call per turn would begin a run each time
    // (the ids crossing into the module), which costs micro as much as its steps
    model.startRun(ids, { seconds: 36000, batchSize: B, evalInterval: 0, valFraction: 0.1 });
    sides.push({ preset, threads, model, T, B, rates: [] });
  }
}
const load0 = loadavg()[0];
for (let r = 0; r < Number(o.rounds); r++) {
  for (let k = 0; k < sides.length; k++) {
    const s = sides[(k + r) % sides.length];
    const t0 = performance.now(), c0 = process.cpuUsage();
    const { steps } = await s.model.continueRun({ seconds: Number(o.seconds), yieldMs: Infinity });
    const c = process.cpuUsage(c0), cpu = (c.user + c.system) / 1e6;
    // --clock cpu (one thread only): this process's CPU seconds, what a quiet machine's wall
    // clock would show, nearly whatever else runs
    if (r > 0) s.rates.push(steps / (o.clock === 'cpu' ? cpu : (performance.now() - t0) / 1000)); // round 0 warms up
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
const out = { date: new Date().toISOString(), clock: o.clock, node: process.version, cpu: `${cpus().length} x ${cpus()[0].model}`, loadavg: [load0, loadavg()[0]], rounds: Number(o.rounds), rows };
console.log(`${out.date} ${out.node} ${out.cpu}, load average ${load0.toFixed(1)} -> ${out.loadavg[1].toFixed(1)}\n`);
console.log('| preset | batch x context | parameters | threads | kernels | steps/s | tokens/s | over 1 thread |\n|---|---|---:|---:|---|---:|---:|---:|');
for (const r of rows) {
  console.log(`| ${r.preset} | ${r.batch} x ${r.context} | ${r.params} | ${r.threads} | ${r.kernels} | ${r.steps_per_s.toFixed(1)} | ${r.tokens_per_s.toFixed(0)} | ${r.vs_one_thread.toFixed(2)}x |`);
}
if (o.out) writeFileSync(o.out, `${JSON.stringify(out, null, 1)}\n`);
for (const s of sides) s.model.dispose();
process.exit(0);
