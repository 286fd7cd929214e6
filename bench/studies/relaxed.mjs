#!/usr/bin/env node
// Relaxed SIMD against SIMD128 (issue 13), paired: node bench/studies/relaxed.mjs [--rounds N] [--configs A,B]
// Each round runs both builds once per config, in alternating order, each in its own Node
// process, on Node 20 started with --experimental-wasm-relaxed-simd (both builds, so the flag
// is not what differs; Node 22 and later have relaxed SIMD on and refuse the flag), one thread, through bench/wasm.mjs. Prints each build's median training
// tokens/s and the median of the per-round ratios relaxed / simd128, which a shared, noisy
// machine disturbs less than either median alone.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from '../configs.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const args = process.argv.slice(2);
const arg = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const rounds = Number(arg('--rounds', '5'));
const configs = arg('--configs', 'A,B').split(',');
const STEPS = { A: 20, B: 3 };
// the flag where this Node takes it (Node 20)
const FLAGS = ['--experimental-wasm-relaxed-simd'].filter((f) => spawnSync(process.execPath, [f, '-e', ''], { stdio: 'ignore' }).status === 0);

function run(build, which) {
  const r = spawnSync(process.execPath, [...FLAGS, join(root, 'bench/wasm.mjs'), build, which,
    '--steps', String(STEPS[which]), '--warmup', '2'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`bench/studies/relaxed: ${build} ${which} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

console.log(`relaxed SIMD vs SIMD128, wasm in Node ${process.version}${FLAGS.length ? ` (${FLAGS.join(' ')})` : ''}, 1 thread, ${rounds} paired rounds`);
for (const which of configs) {
  const tok = { relaxed: [], simd: [] }, ratios = [];
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 ? ['relaxed', 'simd'] : ['simd', 'relaxed'];
    const got = {};
    for (const b of order) got[b] = run(b, which).train_tok_s;
    tok.relaxed.push(got.relaxed);
    tok.simd.push(got.simd);
    ratios.push(got.relaxed / got.simd);
  }
  console.log(`config ${which}: simd128 ${Math.round(median(tok.simd))} tok/s, relaxed ${Math.round(median(tok.relaxed))} tok/s, `
    + `relaxed/simd128 ${median(ratios).toFixed(3)} (per round: ${ratios.map((r) => r.toFixed(2)).join(' ')})`);
}
