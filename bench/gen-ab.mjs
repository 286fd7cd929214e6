// A/B of wasm builds in one Node process, the builds taking turns round after round so that
// a busy machine slows them alike. Prints each build's median and its ratio to the first
// build, and the median and range of the per-round ratios.
//   node bench/gen-ab.mjs DIR_A DIR_B ... [--rounds N] [--train A|B] [--threads N] [--cpu] [--relaxed] [--json]
// Default: generation, config A, 128 new tokens from a 16-token prompt (bench/wasm.mjs's
// generation), overall and decode only. --train A|B: training steps of that config instead.
// --threads N (with --train): each DIR's threaded build (wasmformer-mt), an N-thread model
// and a single-thread one alternating steps on the same batch (bench/wasm.mjs --pair): the
// figure is their speed-up, N threads over 1, per build (wall clock: CPU time cannot show it).
// --cpu: time with the process's CPU time instead of the wall clock, which on a machine
// shared with other jobs counts only the time this process ran (single-thread builds).
// --relaxed: load each DIR's wasmformer-relaxed.mjs/.wasm (Node 20: run with
// --experimental-wasm-relaxed-simd); DIR#relaxed does so for that DIR alone, so
// `gen-ab.mjs dist dist#relaxed --train B --cpu` sets relaxed SIMD against SIMD128.
// Each DIR holds single-thread wasmformer.mjs + wasmformer.wasm, e.g. a copy of dist/ made
// before a change:  cp -r dist /tmp/before && <change> && ./build.sh &&
//   node bench/gen-ab.mjs /tmp/before dist
// or is a built checkout (DIR/bench/wasm.mjs and DIR/dist/): its own bench/wasm.mjs then
// drives its own build, so a checkout whose exports and structs differ from this one's can be
// measured too, still in this process, e.g. issue 13's baseline for generation:
//   git worktree add /tmp/e0 e0a21eb && (cd /tmp/e0 && ./build.sh) &&
//   node bench/gen-ab.mjs /tmp/e0 dist --cpu
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchWasm } from './wasm.mjs';
import { median } from './configs.mjs';

const args = process.argv.slice(2);
const flag = (name) => (args.includes(name) ? (args.splice(args.indexOf(name), 1), true) : false);
const value = (name, def) => (args.includes(name) ? args.splice(args.indexOf(name), 2)[1] : def);
const json = flag('--json'), cpu = flag('--cpu'), relaxed = flag('--relaxed');
const rounds = Number(value('--rounds', '15'));
const train = value('--train', null);
const threads = Number(value('--threads', '1'));
if (args.length === 0 || !(rounds > 0) || (train && !['A', 'B'].includes(train)) || !(threads >= 1) || (threads > 1 && (!train || cpu))) {
  console.error('usage: node bench/gen-ab.mjs DIR_A DIR_B ... [--rounds N] [--train A|B] [--threads N (with --train, wall clock)] ' +
    '[--cpu] [--relaxed] [--json]');
  process.exit(2);
}
const now = cpu ? () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; } : () => performance.now() / 1000;

/** The threaded glue wants Node's require and __dirname (src/js/node.js lends them the same
 * way); its workers must not keep the process alive. */
async function createThreaded(create, dir, opts) {
  Object.assign(globalThis, { require: createRequire(import.meta.url), __dirname: dir + '/' });
  try {
    const M = await create({ ...opts, wfWorkers: threads });
    for (const w of [...M.PThread.unusedWorkers, ...M.PThread.runningWorkers]) w.unref?.();
    return M;
  } finally {
    delete globalThis.require;
    delete globalThis.__dirname;
  }
}

const builds = [];
for (const dir of args) {
  const name = (relaxed || dir.endsWith('#relaxed') ? 'wasmformer-relaxed' : 'wasmformer') + (threads > 1 ? '-mt' : '');
  const path = resolve(dir.replace(/#relaxed$/, ''));
  const checkout = existsSync(join(path, 'bench', 'wasm.mjs')) && existsSync(join(path, 'dist', `${name}.wasm`));
  const wasmDir = join(path, checkout ? 'dist' : '.');
  const base = pathToFileURL(wasmDir + '/');
  const create = (await import(new URL(`${name}.mjs`, base).href)).default;
  const bench = checkout ? (await import(pathToFileURL(join(path, 'bench', 'wasm.mjs')).href)).benchWasm : benchWasm;
  const opts = { wasmBinary: await readFile(new URL(`${name}.wasm`, base)) };
  const M = threads > 1 ? await createThreaded(create, wasmDir, opts) : await create(opts);
  builds.push({ dir, bench, M, gen: [], decode: [] });
}
for (let r = 0; r < rounds; r++)
  for (const b of r % 2 ? [...builds].reverse() : builds) {
    const res = train
      ? await b.bench(b.M, train, { steps: train === 'A' ? 5 : 2, warmup: 1, now, ...(threads > 1 ? { threads, pair: 1 } : {}) })
      : await b.bench(b.M, 'A', { steps: 0, warmup: 0, gen: 5, now });
    b.gen.push(train ? res.train_tok_s : res.gen_tok_s);
    b.decode.push(threads > 1 ? res.pair_speedup : res.decode_tok_s);
  }
// decode: decoding alone (generation), or the N-thread speed-up (--threads)
const what = train ? `training ${train}${threads > 1 ? `, ${threads} threads` : ''}` : 'generation';
const second = threads > 1 ? `speed-up over 1 thread` : train ? null : 'decode only';
const ratios = (b, k) => b[k].map((x, i) => x / builds[0][k][i]);
const range = (xs) => [Math.min(...xs), Math.max(...xs)];
if (json) {
  console.log(JSON.stringify({ rounds, what, threads, clock: cpu ? 'cpu' : 'wall', builds: builds.map((b) => ({
    dir: b.dir, gen: median(b.gen), ratio: median(ratios(b, 'gen')), ratio_range: range(ratios(b, 'gen')),
    ...(threads > 1 ? { speedup: median(b.decode), speedup_range: range(b.decode), speedup_ratio: median(ratios(b, 'decode')) }
      : { decode: train ? null : median(b.decode), decode_ratio: train ? null : median(ratios(b, 'decode')) }),
  })) }));
  process.exit(0);
}
const [g0, d0] = [median(builds[0].gen), median(builds[0].decode)];
// the per-round ratios' median and range
const perRound = (b, k) => {
  const [lo, hi] = range(ratios(b, k));
  return `per round x${median(ratios(b, k)).toFixed(3)}, ${lo.toFixed(3)}-${hi.toFixed(3)}`;
};
for (const b of builds) {
  const [g, d] = [median(b.gen), median(b.decode)];
  const [lo, hi] = range(b.decode);
  console.log(`${b.dir}: ${what} ${g.toFixed(0)} tok/s (x${(g / g0).toFixed(3)}; ${perRound(b, 'gen')})` +
    (threads > 1 ? `, ${second} ${d.toFixed(3)}x (${lo.toFixed(3)}-${hi.toFixed(3)}; over the first build's per round x${median(ratios(b, 'decode')).toFixed(3)})`
      : second ? `, ${second} ${d.toFixed(0)} tok/s (x${(d / d0).toFixed(3)}; ${perRound(b, 'decode')})` : '') +
    `, median of ${rounds} rounds, ${cpu ? 'CPU time' : 'wall clock'}`);
}
