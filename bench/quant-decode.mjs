// Generation from the SmolLM-135M shape (configs.mjs, random weights, seed 7) with float32,
// Q8_0 and Q4_0 weights in one Node process (issue 29): a 16-token prompt, then 32 greedy
// tokens, rounds interleaved across the three, medians. The CPU time of the process per
// token is printed beside the wall time: on a shared machine the first moves less. The
// anchor against llama.cpp's wasm (wllama) in Chromium is bench/wllama.mjs.
//   node [--experimental-wasm-relaxed-simd] bench/quant-decode.mjs [--simd relaxed|simd128] [--rounds 3] [--threads 1]
import os from 'node:os';
import { createModel } from '../src/js/node.js';
import { modelHandle } from '../src/js/model.js';
import { SMOLLM_135M, median } from './configs.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const simd = arg('simd', 'simd128'), rounds = Number(arg('rounds', 3)), threads = Number(arg('threads', 1));
const TYPES = ['f32', 'q8_0', 'q4_0'];
const models = {};
for (const t of TYPES) {
  // a context of 256: the KV cache of 2048 positions would triple the heap for nothing here
  const m = await createModel({ ...SMOLLM_135M, seed: 7, context: 256 }, { threads, simd });
  if (t !== 'f32') m.quantize(t);
  models[t] = m;
}
let seed = 7;
const prompt = Array.from({ length: 16 }, () => { seed = (seed * 1103515245 + 12345) >>> 0; return (seed >>> 8) % SMOLLM_135M.vocabSize; });
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const runs = Object.fromEntries(TYPES.map((t) => [t, []]));
for (let r = 0; r < rounds; r++) {
  for (const t of TYPES) {
    const core = modelHandle(models[t]), rt = core.rt, h = core.live();
    const ps = rt.putSampling({ temperature: 0, topK: 0, topP: 1, nVocab: 0, noUnk: 0 });
    const c0 = cpu(), t0 = performance.now();
    rt.genStart(h, prompt, 1);
    const c1 = cpu(), t1 = performance.now();
    for (let i = 0; i < 32; i++) rt.genNext(h, ps);
    runs[t].push({ promptMs: t1 - t0, promptCpu: c1 - c0, tokMs: (performance.now() - t1) / 32, tokCpu: (cpu() - c1) / 32 });
    rt.free(ps);
  }
}
console.log(`SmolLM-135M shape, ${simd}, ${threads} thread(s), Node ${process.version}, ${os.cpus()[0].model.trim()}, ` +
  `load average ${os.loadavg()[0].toFixed(2)}; medians of ${rounds} interleaved rounds`);
console.log('| weights | MiB | prompt ms (CPU ms) | decode ms/token (CPU ms) | decode tok/s |');
console.log('|---|---:|---:|---:|---:|');
for (const t of TYPES) {
  const m = (k) => median(runs[t].map((x) => x[k]));
  console.log(`| ${t} | ${(models[t].memory().params / 2 ** 20).toFixed(0)} | ${m('promptMs').toFixed(0)} (${m('promptCpu').toFixed(0)}) | ` +
    `${m('tokMs').toFixed(1)} (${m('tokCpu').toFixed(1)}) | ${(1000 / m('tokMs')).toFixed(1)} |`);
}
for (const t of TYPES) models[t].dispose();
