// A/B of generation speed between wasm builds, in one Node process: config A, 128 new
// tokens from a 16-token prompt (bench/wasm.mjs's generation), the builds taking turns
// round after round so that a busy machine slows them alike. Prints each build's median
// tok/s (overall and decode only) and its ratio to the first build.
//   node bench/gen-ab.mjs DIR_A DIR_B ... [--rounds N]
// Each DIR holds a single-thread wasmformer.mjs + wasmformer.wasm, e.g. a copy of dist/
// made before a change:  cp -r dist /tmp/before && <change> && ./build.sh &&
//   node bench/gen-ab.mjs /tmp/before dist
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchWasm } from './wasm.mjs';
import { median } from './configs.mjs';

const args = process.argv.slice(2);
const at = args.indexOf('--rounds');
const rounds = at >= 0 ? Number(args.splice(at, 2)[1]) : 15;
if (args.length === 0 || !(rounds > 0)) {
  console.error('usage: node bench/gen-ab.mjs DIR_A DIR_B ... [--rounds N]');
  process.exit(2);
}
const builds = [];
for (const dir of args) {
  const base = pathToFileURL(resolve(dir) + '/');
  const create = (await import(new URL('wasmformer.mjs', base).href)).default;
  builds.push({ dir, M: await create({ wasmBinary: await readFile(new URL('wasmformer.wasm', base)) }), gen: [], decode: [] });
}
for (let r = 0; r < rounds; r++)
  for (const b of builds) {
    const res = await benchWasm(b.M, 'A', { steps: 0, warmup: 0, gen: 5 });
    b.gen.push(res.gen_tok_s);
    b.decode.push(res.decode_tok_s);
  }
const [g0, d0] = [median(builds[0].gen), median(builds[0].decode)];
for (const b of builds) {
  const [g, d] = [median(b.gen), median(b.decode)];
  console.log(`${b.dir}: generation ${g.toFixed(0)} tok/s (x${(g / g0).toFixed(3)}), ` +
    `decode only ${d.toFixed(0)} tok/s (x${(d / d0).toFixed(3)}), median of ${rounds} rounds`);
}
