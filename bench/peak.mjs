// The f32x4 mul + add peak of this machine's V8 (bench/peak.c), to set the training
// GFLOP/s of `npm run bench` against:  node bench/peak.mjs [--json]
// Builds bench/peak.c with emcc (-O3 -msimd128, a standalone module with no imports) into
// build/bench-peak/ for 6 to 14 independent chains and prints each one's median GFLOP/s
// over 7 timed runs of about 0.3 s; the best is the peak.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './configs.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'build', 'bench-peak');
mkdirSync(out, { recursive: true });
const env = { ...process.env, NODE_PATH: '/usr/share/nodejs' }; // emcc's optimizer needs acorn (Debian)

const rows = [];
for (const acc of [6, 8, 10, 12, 14]) {
  const wasm = join(out, `peak${acc}.wasm`);
  // --no-entry -sSTANDALONE_WASM: a bare module exporting peak(), instantiated with no glue
  execFileSync('emcc', ['-O3', '-msimd128', `-DACC=${acc}`, '--no-entry', '-sSTANDALONE_WASM',
    join(root, 'bench', 'peak.c'), '-o', wasm], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const { instance } = await WebAssembly.instantiate(readFileSync(wasm), {});
  const peak = instance.exports.peak;
  peak(1e6); // compiled by V8's optimizing tier before timing
  let iters = 1e6;
  for (;;) { // about 0.3 s per run
    const t0 = performance.now();
    peak(iters);
    const ms = performance.now() - t0;
    if (ms > 300) break;
    iters = Math.ceil(iters * Math.min(10, 330 / Math.max(ms, 1)));
  }
  const rates = [];
  for (let r = 0; r < 7; r++) {
    const t0 = performance.now();
    peak(iters);
    rates.push((iters * acc * 8) / ((performance.now() - t0) / 1000) / 1e9);
  }
  rows.push({ chains: acc, gflops: median(rates) });
}
const best = rows.reduce((a, b) => (b.gflops > a.gflops ? b : a));
if (process.argv.includes('--json')) console.log(JSON.stringify({ rows, peak: best }));
else {
  for (const r of rows) console.log(`${String(r.chains).padStart(2)} chains: ${r.gflops.toFixed(1)} GFLOP/s`);
  console.log(`peak: ${best.gflops.toFixed(1)} GFLOP/s (f32x4 mul + add, ${best.chains} chains, Node ${process.version})`);
}
