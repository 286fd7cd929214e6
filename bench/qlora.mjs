// QLoRA on the SmolLM-135M shape (issue 29): LoRA adapters of rank 8 on q and v over a
// float32 base and over the same base quantized to Q4_0, each in a fresh Node process (the
// wasm heap is the process's), processes alternating: the wasm heap in use after the first
// training step (the target: under 600 MB with the Q4_0 base), the wasm memory's size, and
// the median step time and CPU time at batch 1 x 128 tokens, and the Q4_0 / float32 ratio of
// each round's pair (median and range: issue 29's goal is steps at least as fast).
//   node bench/qlora.mjs [--rounds 2] [--steps 4] [--threads 1]
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { SMOLLM_135M, median } from './configs.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const rounds = Number(arg('rounds', 2)), steps = Number(arg('steps', 4)), threads = Number(arg('threads', 1));

if (arg('role', 'main') !== 'main') {
  const { createModel } = await import('../src/js/node.js');
  const { modelHandle } = await import('../src/js/model.js');
  const model = await createModel({ ...SMOLLM_135M, seed: 7, context: 256 }, { threads });
  if (arg('role') === 'q4_0') model.quantize('q4_0');
  model.addLora({ rank: 8, targets: ['q', 'v'] });
  let seed = 7;
  const ids = Int32Array.from({ length: 129 }, () => { seed = (seed * 1103515245 + 12345) >>> 0; return (seed >>> 8) % SMOLLM_135M.vocabSize; });
  const rt = modelHandle(model).rt;
  const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
  const times = [], cpus = [];
  let loss = 0;
  for (let s = 0; s < steps; s++) {
    const t0 = performance.now(), c0 = cpu();
    loss = model.trainStep(ids.subarray(0, 128), ids.subarray(1), 1, 128).loss;
    times.push(performance.now() - t0);
    cpus.push(cpu() - c0);
  }
  const mem = model.memory();
  process.stdout.write(`RESULT ${JSON.stringify({ heap: rt.heapInUse(), heapSize: rt.heapSize, params: mem.params,
    training: mem.grads + mem.optimizer, stepMs: median(times.slice(1)), stepCpu: median(cpus.slice(1)), loss })}\n`);
  process.exit(0);
}

const runs = { f32: [], q4_0: [] };
for (let r = 0; r < rounds; r++) {
  for (const base of r % 2 ? ['q4_0', 'f32'] : ['f32', 'q4_0']) {
    const res = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--role', base, '--steps', String(steps), '--threads', String(threads)],
      { encoding: 'utf8', maxBuffer: 1 << 24 });
    const line = res.stdout.split('\n').find((l) => l.startsWith('RESULT '));
    if (res.status !== 0 || !line) throw new Error(`${base} failed:\n${res.stdout}\n${res.stderr}`);
    runs[base].push(JSON.parse(line.slice(7)));
  }
}
const MiB = (x) => (x / 2 ** 20).toFixed(0);
console.log(`SmolLM-135M shape, LoRA rank 8 on q and v, batch 1 x 128, ${threads} thread(s), ${steps} steps (the first not timed), ` +
  `${rounds} round(s) alternating; Node ${process.version}, ${os.cpus()[0].model.trim()}, load average ${os.loadavg()[0].toFixed(2)}`);
console.log('| base | weights MiB | gradients + optimizer MiB | wasm heap in use MiB | wasm memory MiB | step ms (median) | step CPU ms |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const base of ['f32', 'q4_0']) {
  const rs = runs[base], m = (k) => median(rs.map((x) => x[k]));
  console.log(`| ${base} | ${MiB(m('params'))} | ${MiB(m('training'))} | ${MiB(m('heap'))} | ${MiB(m('heapSize'))} | ${m('stepMs').toFixed(0)} | ${m('stepCpu').toFixed(0)} |`);
}
// the pair of each round ran back to back: its ratio cancels a load that moves between rounds
const pairs = (k) => runs.q4_0.map((q, r) => q[k] / runs.f32[r][k]);
const spread = (v) => `${median(v).toFixed(2)}x (${Math.min(...v).toFixed(2)}-${Math.max(...v).toFixed(2)})`;
console.log(`Q4_0 base / float32 base, per-round ratios, median (min-max): step time ${spread(pairs('stepMs'))}, ` +
  `step CPU time ${spread(pairs('stepCpu'))} (issue 29's goal: steps at least as fast, <= 1.00x)`);
