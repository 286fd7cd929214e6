#!/usr/bin/env node
// The time of a training step of each recipe variant, measured so that the ratio holds on a
// loaded machine: the variants live side by side (wasm models in this process; PyTorch's
// reference as a child process, `reference.py --serve`) and take turns, `--steps` steps each
// per turn, on the same windows of the text: every turn of a variant sits between two turns of
// the first variant (the baseline), the others' order rotated every round. Prints each
// variant's median ms per step and the median over rounds of its time / the mean of the two
// baseline turns around it (the figure to read: a slowdown of the machine falls on both sides).
// Each variant's JSON says whether it ran Muon (wasm: --muon, default 0, AdamW alone).
// --cpu times every turn by its process's CPU time instead of the wall clock (Node's
// process.cpuUsage, Python's process_time): on a machine other jobs load, a one-thread turn's
// CPU time leaves out the time it waited for a core. Only for one-thread variants (a
// threaded turn's CPU time adds up its threads).
//
//   node bench/ttq/paired.mjs --rounds 12 --steps 4 \
//     --variant 'base --batch 8' --variant 'relu2 --batch 8 --config activation=relu2' \
//     --variant 'torch --torch --batch 12' [--threads 1] [--json out.json]
//
// A variant is a name, then wasmformer_run.mjs's flags that shape a step (--batch, --config,
// --preset, --muon, --threads, --tokenizer is not supported: char only) and --simd (simd128 or
// relaxed: the kernels, as createModel's option; default the engine's pick) and --root DIR
// (another checkout's build, for an A/B of two builds in one process); `--torch` makes it
// reference.py's model instead (its flags: --batch --layers --heads --width --context --bias
// --gelu --positions --muon, --micro for wasmformer's own recipe, and --threads for
// torch.set_num_threads and OpenBLAS's threads).
// wasmformer's recipe against PyTorch running it (issue 28), both kernel sets, 1 and 2 threads:
//   /opt/node22/node_modules/node/bin/node bench/ttq/paired.mjs --rounds 16 \
//     --variant 'torch1 --torch --micro' --variant 'relaxed1 --preset micro --muon 1 --batch 16 --simd relaxed' \
//     --variant 'simd1 --preset micro --muon 1 --batch 16 --simd simd128' --variant 'torch2 --torch --micro --threads 2' \
//     --variant 'relaxed2 --preset micro --muon 1 --batch 16 --simd relaxed --threads 2'
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { writeFileSync } from 'node:fs';
import * as wf from '../../src/js/node.js';
import { parseConfig } from './core.mjs';

const root = new URL('../../', import.meta.url);
const { values: o } = parseArgs({
  options: {
    variant: { type: 'string', multiple: true },
    rounds: { type: 'string', default: '12' },
    steps: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '1' },
    threads: { type: 'string', default: '1' },
    cpu: { type: 'boolean', default: false },
    json: { type: 'string' },
    text: { type: 'string', default: new URL('data/austen/pride_and_prejudice.txt', root).pathname },
  },
});
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const text = readFileSync(o.text, 'utf8');
const K = Number(o.steps);

function parseVariant(spec) {
  const [name, ...words] = spec.trim().split(/\s+/);
  const flags = {};
  for (let i = 0; i < words.length; i++) {
    const k = words[i].replace(/^--/, '');
    if (k === 'torch' || k === 'bias' || k === 'micro') flags[k] = true;
    else flags[k] = words[++i];
  }
  return { name, flags };
}

// the windows every variant trains on: K * rounds batches from a fixed generator
let seed = 7;
const rnd = () => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed; };

async function wasmVariant({ name, flags }) {
  const config = { preset: flags.preset ?? 'tiny', seed: 1, ...parseConfig(flags.config ?? '{}') };
  const threads = Number(flags.threads ?? o.threads);
  // --root DIR: the variant runs another checkout's build (its src/js/node.js and dist/)
  const lib = flags.root ? await import(pathToFileURL(`${flags.root}/src/js/node.js`).href) : wf;
  const model = await lib.createModel(config, { text, tokenizer: 'char', threads, ...(flags.simd ? { simd: flags.simd } : {}) });
  const muon = Number(flags.muon ?? 0); // AdamW alone unless asked: the earlier studies' variants
  model.setOptimizer({ lr: 1e-3, muon, beta2: 0.99 });
  const B = Number(flags.batch ?? 12), T = model.config.context;
  const ids = model.tokenizer.encode(text);
  const span = Math.floor(ids.length * 0.9) - T - 1;
  const x = new Int32Array(B * T), y = new Int32Array(B * T);
  return {
    name, B, T, threads, muon, kernels: model.info().simd, root: flags.root ?? null,
    async run(k) {
      const t0 = performance.now(), c0 = process.cpuUsage();
      for (let s = 0; s < k; s++) {
        for (let b = 0; b < B; b++) {
          const at = rnd() % span;
          x.set(ids.subarray(at, at + T), b * T);
          y.set(ids.subarray(at + 1, at + T + 1), b * T);
        }
        model.trainStep(x, y, B, T);
      }
      if (o.cpu) { const c = process.cpuUsage(c0); return (c.user + c.system) / 1e6; }
      return (performance.now() - t0) / 1000;
    },
    close() { model.dispose(); },
  };
}

async function torchVariant({ name, flags }) {
  if (flags.root) throw new Error(`variant ${name}: --root is for wasm variants (a checkout's build)`);
  const args = [new URL('bench/ttq/reference.py', root).pathname, '--serve'];
  for (const [k, v] of Object.entries(flags)) if (k !== 'torch') args.push(`--${k}`, ...(v === true ? [] : [v]));
  if (!flags.threads) args.push('--threads', o.threads);
  const env = { ...process.env, LD_LIBRARY_PATH: '/usr/lib/x86_64-linux-gnu/openblas-openmp', OMP_NUM_THREADS: flags.threads ?? o.threads };
  const child = spawn('/usr/bin/python3', args, { env, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => JSON.parse((await lines.next()).value);
  const hello = await next(); // the settings line, once the model is built
  return {
    name, B: hello.batch, T: hello.context, threads: hello.threads, muon: hello.muon,
    async run(k) {
      child.stdin.write(`${k}\n`);
      const r = await next(); // timed inside the child: the pipe's latency is left out
      return o.cpu ? r.cpu_seconds : r.seconds;
    },
    close() { child.stdin.end(); },
  };
}

const variants = [];
for (const spec of o.variant ?? []) {
  const v = parseVariant(spec);
  variants.push(v.flags.torch ? await torchVariant(v) : await wasmVariant(v));
}
if (variants.length < 2) throw new Error('give at least two --variant');
if (o.cpu && variants.some((v) => v.threads > 1)) throw new Error('--cpu times one-thread variants only');
const times = variants.map(() => []), ratios = variants.map(() => []);
const rounds = Number(o.rounds), warm = Number(o.warmup);
const load0 = loadavg()[0];
// A round: the first variant, then each other one followed by the first again (in an order
// rotated every round), so that each turn sits between two of the first variant's; its ratio
// is its time over the mean of those two.
const others = variants.map((_, i) => i).slice(1);
for (let r = 0; r < warm + rounds; r++) {
  const order = others.map((_, j) => others[(j + r) % others.length]);
  let before = (await variants[0].run(K)) / K;
  const t = new Array(variants.length), ratio = new Array(variants.length);
  t[0] = before;
  ratio[0] = 1;
  for (const i of order) {
    t[i] = (await variants[i].run(K)) / K;
    const after = (await variants[0].run(K)) / K;
    ratio[i] = t[i] / ((before + after) / 2);
    before = after;
  }
  if (r < warm) continue;
  t.forEach((x, i) => { times[i].push(x); ratios[i].push(ratio[i]); });
}
for (const v of variants) v.close();
const out = {
  rounds, steps: K, clock: o.cpu ? 'cpu' : 'wall', loadavg: [load0, loadavg()[0]], node: process.version, date: new Date().toISOString(),
  variants: variants.map((v, i) => ({
    name: v.name, batch: v.B, context: v.T, threads: v.threads, muon: v.muon, kernels: v.kernels ?? 'torch', ...(v.root ? { root: v.root } : {}), ms_per_step: 1000 * median(times[i]),
    ratio: median(ratios[i]), ratio_min: Math.min(...ratios[i]), ratio_max: Math.max(...ratios[i]),
  })),
};
for (const v of out.variants) {
  console.log(`${v.name.padEnd(14)} batch ${String(v.batch).padStart(3)}  ${v.ms_per_step.toFixed(1).padStart(8)} ms/step  `
    + `x${v.ratio.toFixed(3)} of ${out.variants[0].name} (rounds ${v.ratio_min.toFixed(3)}..${v.ratio_max.toFixed(3)})`);
}
console.log(JSON.stringify(out));
if (o.json) writeFileSync(o.json, `${JSON.stringify(out, null, 1)}\n`);
process.exit(0);
