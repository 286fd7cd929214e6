#!/usr/bin/env node
// Issue 28's speed goals in one command: wasmformer against PyTorch running wasmformer's own
// recipe (reference.py --micro), and two threads against one, each a paired run of
// paired.mjs (the variants taking turns in one process, PyTorch's as its child):
//   1. one thread, CPU time (--cpu): PyTorch, wasm relaxed SIMD, wasm SIMD128, micro batch 16;
//      tokens/s of each over PyTorch's (goals: relaxed >= 1.5x, SIMD128 >= 1.2x)
//   2. wall clock: one thread against two, micro batch 16 and tiny batch 8, wasm (the
//      engine's pick of kernels) and PyTorch (goal: wasm 2 threads >= 1.8x one, both presets)
// for each Node given (each runs its own paired.mjs: Node 20 has no relaxed SIMD without a
// flag, so its relaxed row runs with --experimental-wasm-relaxed-simd).
//   node bench/ttq/speed.mjs [--nodes /opt/node22/node_modules/node/bin/node,...] [--rounds 16] [--steps 5] [--out DIR]
// Prints a table per Node and the goals met or not; writes DIR/speed.json and DIR/speed.md.
// Beside the 2-thread rows, what the machine gives two threads at that moment: two workers
// spinning on integer arithmetic against one (the ceiling any 2-thread ratio of the run can
// reach; on Linux with autogroup, another session's nice 19 job still takes a whole core).
import { spawnSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg, cpus } from 'node:os';
import { parseArgs } from 'node:util';

const here = new URL('.', import.meta.url).pathname;
const { values: o } = parseArgs({
  options: {
    nodes: { type: 'string', default: process.execPath }, rounds: { type: 'string', default: '16' },
    steps: { type: 'string', default: '5' }, out: { type: 'string', default: '/tmp/ttq-speed' },
  },
});
mkdirSync(o.out, { recursive: true });

function paired(node, variants, extra = []) {
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const flags = version.startsWith('v20.') ? ['--experimental-wasm-relaxed-simd'] : [];
  const args = [...flags, `${here}paired.mjs`, '--rounds', o.rounds, '--steps', o.steps, ...extra,
    ...variants.flatMap((v) => ['--variant', v]), '--json', `${o.out}/last.json`];
  process.stderr.write(`${node} ${args.join(' ')}\n`);
  const r = spawnSync(node, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`paired.mjs failed (${r.status})`);
  const run = JSON.parse(r.stdout.trim().split('\n').pop());
  // the same recipe on both sides, or the ratios mean nothing (the rows before 2026-11-28
  // 15:30 timed the wasm side without Muon against PyTorch with it)
  for (const x of run.variants) if (x.muon !== 1) throw new Error(`variant ${x.name} ran without Muon: not the same recipe`);
  return { version, ...run };
}

// the presets' own recipes: Muon on the blocks' matrices (paired.mjs's default is AdamW
// alone), as reference.py --micro runs it
// Two threads' worth of this machine now: the median over rounds of 2 x (one worker's time
// for a fixed loop) / (two workers' time for the same loop each, side by side).
async function machineTwoThreads(rounds = 7, n = 2e8) {
  const src = `const { parentPort } = require('node:worker_threads');
    parentPort.on('message', (n) => { let x = 1; for (let i = 0; i < n; i++) x = Math.imul(x, 1103515245) + 12345 | 0; parentPort.postMessage(x); });`;
  const workers = [0, 1].map(() => new Worker(src, { eval: true }));
  const turn = (ws) => { const t0 = performance.now(); return Promise.all(ws.map((w) => new Promise((ok) => { w.once('message', ok); w.postMessage(n); }))).then(() => performance.now() - t0); };
  await turn(workers); // warm-up: both compiled
  const ratios = [];
  for (let r = 0; r < rounds; r++) {
    const one = await turn([workers[r % 2]]), two = await turn(workers);
    ratios.push((2 * one) / two);
  }
  await Promise.all(workers.map((w) => w.terminate()));
  ratios.sort((a, b) => a - b);
  return ratios[rounds >> 1];
}

const micro = '--preset micro --batch 16 --muon 1', tiny = '--preset tiny --batch 8 --muon 1';
const report = [], json = [];
const f = (x, d = 2) => x.toFixed(d);
for (const node of o.nodes.split(',')) {
  const one = paired(node, [`torch1 --torch --micro`, `relaxed1 ${micro} --simd relaxed`, `simd1 ${micro} --simd simd128`], ['--cpu']);
  const threads = paired(node, [`micro1 ${micro}`, `micro2 ${micro} --threads 2`, `tiny1 ${tiny}`, `tiny2 ${tiny} --threads 2`]);
  const torchThreads = paired(node, ['torch1 --torch --micro', 'torch2 --torch --micro --threads 2']);
  const ceiling = await machineTwoThreads();
  const v = (run, name) => run.variants.find((x) => x.name === name);
  // paired.mjs's ratio is each variant's time over its neighbouring turns of the first one
  const speed = (run, name) => 1 / v(run, name).ratio;
  // micro2 / micro1 and tiny2 / tiny1: both against micro1's turns, so divide the ratios
  const micro2 = v(threads, 'micro1').ratio / v(threads, 'micro2').ratio;
  const tiny2 = v(threads, 'tiny1').ratio / v(threads, 'tiny2').ratio;
  const res = {
    node: one.version, loadavg: [one.loadavg[0], torchThreads.loadavg[1]], kernels: v(threads, 'micro1').kernels,
    torch_ms: v(one, 'torch1').ms_per_step, relaxed_ms: v(one, 'relaxed1').ms_per_step, simd_ms: v(one, 'simd1').ms_per_step,
    relaxed_vs_torch: speed(one, 'relaxed1'), simd_vs_torch: speed(one, 'simd1'),
    micro_2t: micro2, tiny_2t: tiny2, torch_2t: speed(torchThreads, 'torch2'), machine_2t: ceiling,
    micro_ms: [v(threads, 'micro1').ms_per_step, v(threads, 'micro2').ms_per_step],
    tiny_ms: [v(threads, 'tiny1').ms_per_step, v(threads, 'tiny2').ms_per_step],
    runs: { one, threads, torchThreads },
  };
  json.push(res);
  const tok = (ms, B) => f((B * 64) / (ms / 1000), 0);
  report.push(
    `### ${res.node} (${new Date().toISOString().slice(0, 16)} UTC, ${cpus().length} x ${cpus()[0].model}, load average ${f(res.loadavg[0], 1)} -> ${f(res.loadavg[1], 1)}; ${o.rounds} rounds of ${o.steps} steps)`, '',
    '| micro, batch 16, one thread (CPU time) | ms/step | tokens/s | over PyTorch | goal |', '|---|---:|---:|---:|---|',
    `| PyTorch (reference.py --micro, OpenBLAS) | ${f(res.torch_ms, 1)} | ${tok(res.torch_ms, 16)} | 1.00x | |`,
    `| wasm relaxed SIMD | ${f(res.relaxed_ms, 1)} | ${tok(res.relaxed_ms, 16)} | ${f(res.relaxed_vs_torch)}x | >= 1.5x: ${res.relaxed_vs_torch >= 1.5 ? 'met' : 'not met'} |`,
    `| wasm SIMD128 | ${f(res.simd_ms, 1)} | ${tok(res.simd_ms, 16)} | ${f(res.simd_vs_torch)}x | >= 1.2x: ${res.simd_vs_torch >= 1.2 ? 'met' : 'not met'} |`,
    '', `| two threads over one (wall clock) | 1 thread ms/step | 2 threads ms/step | speed-up | goal |`, '|---|---:|---:|---:|---|',
    `| wasm micro, batch 16 (${res.kernels}) | ${f(res.micro_ms[0], 1)} | ${f(res.micro_ms[1], 1)} | ${f(res.micro_2t)}x | >= 1.8x: ${res.micro_2t >= 1.8 ? 'met' : 'not met'} |`,
    `| wasm tiny, batch 8 (${res.kernels}) | ${f(res.tiny_ms[0], 1)} | ${f(res.tiny_ms[1], 1)} | ${f(res.tiny_2t)}x | >= 1.8x: ${res.tiny_2t >= 1.8 ? 'met' : 'not met'} |`,
    `| PyTorch micro, batch 16 | ${f(v(torchThreads, 'torch1').ms_per_step, 1)} | ${f(v(torchThreads, 'torch2').ms_per_step, 1)} | ${f(res.torch_2t)}x | |`,
    `| this machine now: two spinning workers over one (the ceiling of the rows above) | | | ${f(res.machine_2t)}x | ${res.machine_2t < 1.8 ? 'below 1.8x: the 2-thread goal cannot be judged in this run' : ''} |`, '');
}
const md = report.join('\n');
console.log(md);
writeFileSync(`${o.out}/speed.md`, `${md}\n`);
writeFileSync(`${o.out}/speed.json`, `${JSON.stringify(json, null, 1)}\n`);
