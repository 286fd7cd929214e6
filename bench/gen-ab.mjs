// A/B of wasm builds in one Node process, the builds taking turns round after round so that
// a busy machine slows them alike. Prints each build's median and its ratio to the first
// build, and the median of the per-round ratios.
//   node bench/gen-ab.mjs DIR_A DIR_B ... [--rounds N] [--train A|B] [--cpu] [--relaxed] [--json]
// Default: generation, config A, 128 new tokens from a 16-token prompt (bench/wasm.mjs's
// generation), overall and decode only. --train A|B: training steps of that config instead.
// --cpu: time with the process's CPU time instead of the wall clock, which on a machine
// shared with other jobs counts only the time this process ran (single-thread builds).
// --relaxed: load each DIR's wasmformer-relaxed.mjs/.wasm (Node 20: run with
// --experimental-wasm-relaxed-simd); DIR#relaxed does so for that DIR alone, so
// `gen-ab.mjs dist dist#relaxed --train B --cpu` sets relaxed SIMD against SIMD128.
// Each DIR holds single-thread wasmformer.mjs + wasmformer.wasm, e.g. a copy of dist/ made
// before a change:  cp -r dist /tmp/before && <change> && ./build.sh &&
//   node bench/gen-ab.mjs /tmp/before dist
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchWasm } from './wasm.mjs';
import { median } from './configs.mjs';

const args = process.argv.slice(2);
const flag = (name) => (args.includes(name) ? (args.splice(args.indexOf(name), 1), true) : false);
const value = (name, def) => (args.includes(name) ? args.splice(args.indexOf(name), 2)[1] : def);
const json = flag('--json'), cpu = flag('--cpu'), relaxed = flag('--relaxed');
const rounds = Number(value('--rounds', '15'));
const train = value('--train', null);
if (args.length === 0 || !(rounds > 0) || (train && !['A', 'B'].includes(train))) {
  console.error('usage: node bench/gen-ab.mjs DIR_A DIR_B ... [--rounds N] [--train A|B] [--cpu] [--relaxed] [--json]');
  process.exit(2);
}
const now = cpu ? () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; } : () => performance.now() / 1000;
const builds = [];
for (const dir of args) {
  const name = relaxed || dir.endsWith('#relaxed') ? 'wasmformer-relaxed' : 'wasmformer';
  const base = pathToFileURL(resolve(dir.replace(/#relaxed$/, '')) + '/');
  const create = (await import(new URL(`${name}.mjs`, base).href)).default;
  builds.push({ dir, M: await create({ wasmBinary: await readFile(new URL(`${name}.wasm`, base)) }), gen: [], decode: [] });
}
for (let r = 0; r < rounds; r++)
  for (const b of r % 2 ? [...builds].reverse() : builds) {
    const res = train
      ? await benchWasm(b.M, train, { steps: train === 'A' ? 5 : 2, warmup: 1, now })
      : await benchWasm(b.M, 'A', { steps: 0, warmup: 0, gen: 5, now });
    b.gen.push(train ? res.train_tok_s : res.gen_tok_s);
    b.decode.push(res.decode_tok_s);
  }
const what = train ? `training ${train}` : 'generation';
const ratios = (b, k) => b[k].map((x, i) => x / builds[0][k][i]);
if (json) {
  console.log(JSON.stringify({ rounds, what, clock: cpu ? 'cpu' : 'wall', builds: builds.map((b) => ({
    dir: b.dir, gen: median(b.gen), decode: train ? null : median(b.decode),
    ratio: median(ratios(b, 'gen')), decode_ratio: train ? null : median(ratios(b, 'decode')),
  })) }));
  process.exit(0);
}
const [g0, d0] = [median(builds[0].gen), median(builds[0].decode)];
for (const b of builds) {
  const [g, d] = [median(b.gen), median(b.decode)];
  console.log(`${b.dir}: ${what} ${g.toFixed(0)} tok/s (x${(g / g0).toFixed(3)}; per round x${median(ratios(b, 'gen')).toFixed(3)})` +
    (train ? '' : `, decode only ${d.toFixed(0)} tok/s (x${(d / d0).toFixed(3)}; per round x${median(ratios(b, 'decode')).toFixed(3)})`) +
    `, median of ${rounds} rounds, ${cpu ? 'CPU time' : 'wall clock'}`);
}
