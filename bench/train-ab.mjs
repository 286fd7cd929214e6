#!/usr/bin/env node
// Training steps of two checkouts' packages in one process, taking turns (the order swapped
// every round), through the public API with a preset's recipe (micro: RoPE and Muon; tiny:
// Muon): each checkout's src/js/node.js loads its own dist/. Prints each side's median ms per
// step and the median (and range) of the per-round ratios X / Y (above 1: Y is faster).
// One thread: the process's CPU time (on a machine other jobs load, the time a turn waited
// for a core is left out); more: the wall clock (read the load average it prints).
//   node bench/train-ab.mjs DIR_X DIR_Y [--preset micro] [--batch 16] [--threads 1]
//        [--simd relaxed|simd128] [--rounds 30] [--steps 5]
// e.g. a checkout of the commit before and this one:
//   git worktree add /tmp/before HEAD~1 && (cd /tmp/before && npm ci && ./build.sh)
//   node bench/train-ab.mjs /tmp/before . --preset tiny --batch 8
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values: o, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    preset: { type: 'string', default: 'micro' }, batch: { type: 'string', default: '16' },
    threads: { type: 'string', default: '1' }, simd: { type: 'string' }, rounds: { type: 'string', default: '30' },
    steps: { type: 'string', default: '5' }, json: { type: 'boolean', default: false },
  },
});
if (positionals.length !== 2) {
  console.error('usage: node bench/train-ab.mjs DIR_X DIR_Y [--preset micro] [--batch 16] [--threads 1] [--simd relaxed|simd128] [--rounds 30] [--steps 5]');
  process.exit(2);
}
const text = readFileSync(new URL('../data/austen/pride_and_prejudice.txt', import.meta.url), 'utf8');
const threads = Number(o.threads), B = Number(o.batch), K = Number(o.steps);
const median = (v) => { const s = [...v].sort((a, b) => a - b), n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };

async function side(dir) {
  const wf = await import(`${resolve(dir)}/src/js/node.js`);
  const model = await wf.createModel({ preset: o.preset, seed: 1 }, { text, tokenizer: 'char', threads, ...(o.simd ? { simd: o.simd } : {}) });
  const ids = model.tokenizer.encode(text), T = model.config.context;
  const x = new Int32Array(B * T), y = new Int32Array(B * T);
  let seed = 7; // the same windows on both sides
  return {
    dir, info: model.info(),
    run() {
      const c0 = process.cpuUsage(), t0 = performance.now();
      for (let s = 0; s < K; s++) {
        for (let b = 0; b < B; b++) {
          seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
          const at = seed % (ids.length - T - 1);
          x.set(ids.subarray(at, at + T), b * T);
          y.set(ids.subarray(at + 1, at + T + 1), b * T);
        }
        model.trainStep(x, y, B, T);
      }
      const c = process.cpuUsage(c0);
      return (threads > 1 ? performance.now() - t0 : (c.user + c.system) / 1000) / K;
    },
  };
}

const sides = [await side(positionals[0]), await side(positionals[1])];
const load0 = loadavg()[0];
sides.forEach((s) => s.run()); // warm-up
const times = [[], []], ratios = [];
for (let r = 0; r < Number(o.rounds); r++) {
  const t = [];
  for (const i of r % 2 ? [1, 0] : [0, 1]) t[i] = sides[i].run();
  times[0].push(t[0]); times[1].push(t[1]); ratios.push(t[0] / t[1]);
}
const out = {
  preset: o.preset, batch: B, threads, simd: sides[0].info.simd, clock: threads > 1 ? 'wall' : 'cpu', rounds: Number(o.rounds),
  steps: K, node: process.version, loadavg: [load0, loadavg()[0]],
  x: { dir: sides[0].dir, ms_per_step: median(times[0]) }, y: { dir: sides[1].dir, ms_per_step: median(times[1]) },
  ratio: median(ratios), ratio_min: Math.min(...ratios), ratio_max: Math.max(...ratios),
};
if (o.json) console.log(JSON.stringify(out));
else {
  console.log(`${o.preset} batch ${B}, ${threads} thread(s), ${out.simd}, ${out.clock} time, ${out.rounds} rounds of ${K} steps, `
    + `${process.version}, load ${load0.toFixed(1)} -> ${out.loadavg[1].toFixed(1)}: X ${out.x.ms_per_step.toFixed(2)} ms/step, `
    + `Y ${out.y.ms_per_step.toFixed(2)} ms/step, X / Y x${out.ratio.toFixed(3)} (${out.ratio_min.toFixed(3)}-${out.ratio_max.toFixed(3)})`);
}
process.exit(0);
