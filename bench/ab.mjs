// Two checkouts of wasmformer, row by row, in turns: the quick bench's rows (native SIMD and
// wasm SIMD, 1 and 2 threads, configs A and B, generation of A) run from checkout X and from
// checkout Y alternately, the order swapped every round, so a drift in the machine's speed
// falls on both. Prints each row's medians and the median of the per-round ratios Y / X
// (above 1: Y is faster). Each checkout runs its own bench/wasm.mjs and bench_wasmformer
// against its own build, so the two may differ in API and struct layouts.
//   node bench/ab.mjs DIR_X DIR_Y [--rounds N] [--rows native1,native2,wasm1,wasm2] [--configs A,B]
// Build both first: in each, `cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release &&
// cmake --build build/native --target bench_wasmformer` and `./build.sh`.
// e.g. the refactor of issue 12: git worktree add /tmp/before 65bf35f; git worktree add
// /tmp/after 4ab6402; build both; node bench/ab.mjs /tmp/before /tmp/after --rounds 5
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { median } from './configs.mjs';

const argv = process.argv.slice(2);
const dirs = argv.filter((a, i) => !a.startsWith('--') && !(argv[i - 1] ?? '').startsWith('--')).map((d) => resolve(d));
const opt = (name, def) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : def; };
if (dirs.length !== 2) {
  console.error('usage: node bench/ab.mjs DIR_X DIR_Y [--rounds N] [--rows native1,native2,wasm1,wasm2] [--configs A,B]');
  process.exit(2);
}
const rounds = Number(opt('rounds', '5'));
const rowKeys = opt('rows', 'native1,native2,wasm1,wasm2').split(',');
const configs = opt('configs', 'A,B').split(',');

// the quick bench's step counts (bench/run.mjs --quick)
const STEPS = { A: ['--steps', '5', '--warmup', '2', '--gen', '3'], B: ['--steps', '2', '--warmup', '1'] };
const ROWS = {
  native1: { name: 'native SIMD, 1 thread', cmd: (d, w) => [`${d}/build/native/bench_wasmformer`, [w, ...STEPS[w]]] },
  native2: { name: 'native SIMD, 2 threads', cmd: (d, w) => [`${d}/build/native/bench_wasmformer`, [w, ...STEPS[w], '--threads', '2']] },
  wasm1: { name: 'wasm SIMD, 1 thread, Node', cmd: (d, w) => [process.execPath, [`${d}/bench/wasm.mjs`, 'simd', w, ...STEPS[w]]] },
  wasm2: { name: 'wasm SIMD, 2 threads, Node', cmd: (d, w) => [process.execPath, [`${d}/bench/wasm.mjs`, 'mt', w, ...STEPS[w], '--threads', '2']] },
};
for (const d of dirs) {
  for (const need of ['build/native/bench_wasmformer', 'dist/wasmformer.wasm', 'dist/wasmformer-mt.wasm']) {
    if (!existsSync(`${d}/${need}`)) { console.error(`bench/ab: ${d}/${need} is missing: build that checkout first`); process.exit(1); }
  }
}

function run(dir, row, which) {
  const [cmd, args] = ROWS[row].cmd(dir, which);
  const r = spawnSync(cmd, args, { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`bench/ab: ${cmd} ${args.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

const lines = [];
const load = (await import('node:os')).loadavg()[0].toFixed(2);
lines.push(`bench/ab: X = ${dirs[0]}, Y = ${dirs[1]}; ${rounds} rounds, order swapped each round; load average at start ${load}`);
lines.push('', '| row | config | X tok/s | Y tok/s | Y / X (median of rounds, min-max) |', '|---|---|---:|---:|---|');
for (const which of configs) {
  for (const row of rowKeys) {
    const got = { train: [[], []], gen: [[], []] }, ratio = { train: [], gen: [] };
    for (let k = 0; k < rounds; k++) {
      const order = k % 2 ? [1, 0] : [0, 1], res = [];
      for (const i of order) res[i] = run(dirs[i], row, which);
      for (const f of ['train', 'gen']) {
        const key = f === 'train' ? 'train_tok_s' : 'gen_tok_s';
        if (!res[0][key]) continue;
        got[f][0].push(res[0][key]); got[f][1].push(res[1][key]);
        ratio[f].push(res[1][key] / res[0][key]);
      }
    }
    for (const f of ['train', 'gen']) {
      if (!ratio[f].length) continue;
      const r = ratio[f];
      lines.push(`| ${ROWS[row].name}${f === 'gen' ? ', generation' : ''} | ${which} | ${median(got[f][0]).toFixed(0)} | ` +
        `${median(got[f][1]).toFixed(0)} | ${median(r).toFixed(3)} (${Math.min(...r).toFixed(3)}-${Math.max(...r).toFixed(3)}) |`);
    }
    console.error(`bench/ab: ${which} ${ROWS[row].name} done`);
  }
}
console.log(lines.join('\n'));
