// What this machine's wasm engine can issue, to set the training GFLOP/s of `npm run bench`
// against:  node bench/peak.mjs [--json] [--cpu]
// bench/peak.c for 6 to 14 independent chains, twice: f32x4 mul + add (SIMD128, built with
// emcc -O3 -msimd128) and f32x4.relaxed_madd (relaxed SIMD, built with Debian's clang-19,
// as build.sh's relaxed builds; skipped when clang-19 or the engine's relaxed SIMD is
// missing). Each is a bare module with no imports; each chain count's median GFLOP/s over
// 7 timed runs of about 0.3 s, and the best of each kind is its peak. Node 20 runs relaxed
// SIMD only with --experimental-wasm-relaxed-simd: this script restarts itself with it.
// --cpu: time with the process's CPU time (as bench/gen-ab.mjs --cpu, on a busy machine).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './configs.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'build', 'bench-peak');
const FLAG = '--experimental-wasm-relaxed-simd';
const CHAINS = [6, 8, 10, 12, 14];
const clock = process.argv.includes('--cpu') ? () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; } : () => performance.now();

/** The 37-byte probe src/js/loader.js validates: does this engine run relaxed SIMD? */
export async function engineHasRelaxed() {
  const { hasRelaxedSimd } = await import('../src/js/loader.js');
  return hasRelaxedSimd();
}

function build(kind, acc) {
  const wasm = join(out, `peak-${kind}${acc}.wasm`);
  if (kind === 'simd128') {
    // --no-entry -sSTANDALONE_WASM: a bare module exporting peak(), instantiated with no glue
    execFileSync('emcc', ['-O3', '-msimd128', `-DACC=${acc}`, '--no-entry', '-sSTANDALONE_WASM',
      join(root, 'bench', 'peak.c'), '-o', wasm],
    { env: { ...process.env, NODE_PATH: '/usr/share/nodejs' }, stdio: ['ignore', 'ignore', 'inherit'] });
  } else {
    // no libc needed: clang-19 and wasm-ld-19 alone (emcc 3.1.6's LLVM 14 emits pre-standard
    // opcodes); compiled and linked apart, since clang's link step would run binaryen's
    // wasm-opt, which cannot read the standard relaxed opcodes
    const obj = wasm.replace(/\.wasm$/, '.o');
    execFileSync('clang-19', ['--target=wasm32', '-O3', '-msimd128', '-mrelaxed-simd', '-DRELAXED', `-DACC=${acc}`,
      '-c', join(root, 'bench', 'peak.c'), '-o', obj], { stdio: ['ignore', 'ignore', 'inherit'] });
    execFileSync('wasm-ld-19', ['--no-entry', '--export=peak', obj, '-o', wasm], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  return wasm;
}

async function measure(kind) {
  const rows = [];
  for (const acc of CHAINS) {
    const { instance } = await WebAssembly.instantiate(readFileSync(build(kind, acc)), {});
    const peak = instance.exports.peak;
    peak(1e6); // compiled by V8's optimizing tier before timing
    let iters = 1e6;
    for (;;) { // about 0.3 s per run
      const t0 = clock();
      peak(iters);
      const ms = clock() - t0;
      if (ms > 300) break;
      iters = Math.ceil(iters * Math.min(10, 330 / Math.max(ms, 1)));
    }
    const rates = [];
    for (let r = 0; r < 7; r++) {
      const t0 = clock();
      peak(iters);
      rates.push((iters * acc * 8) / ((clock() - t0) / 1000) / 1e9);
    }
    rows.push({ chains: acc, gflops: median(rates) });
  }
  return { rows, peak: rows.reduce((a, b) => (b.gflops > a.gflops ? b : a)) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const only = process.argv.includes('--relaxed-only');
  mkdirSync(out, { recursive: true });
  const res = {};
  if (!only) res.simd128 = await measure('simd128');
  const clang = ['clang-19', 'wasm-ld-19'].every((t) => spawnSync(t, ['--version'], { stdio: 'ignore' }).status === 0);
  if (!clang) res.relaxed = { skipped: 'clang-19 is not installed (sudo apt-get install -y clang-19 lld-19)' };
  else if (await engineHasRelaxed()) res.relaxed = await measure('relaxed');
  else if (!process.execArgv.includes(FLAG)) {
    // Node 20: the same script with relaxed SIMD on, for that half only
    const r = spawnSync(process.execPath, [FLAG, fileURLToPath(import.meta.url), '--json', '--relaxed-only',
      ...(process.argv.includes('--cpu') ? ['--cpu'] : [])], { encoding: 'utf8' });
    res.relaxed = r.status === 0 ? JSON.parse(r.stdout.trim().split('\n').pop()).relaxed : { skipped: `failed: ${r.stderr.trim()}` };
  } else res.relaxed = { skipped: `this engine (Node ${process.version}) has no relaxed SIMD` };
  if (process.argv.includes('--json')) console.log(JSON.stringify(res));
  else {
    for (const [kind, r] of Object.entries(res)) {
      if (r.skipped) {
        console.log(`${kind}: skipped: ${r.skipped}`);
        continue;
      }
      for (const row of r.rows) console.log(`${kind} ${String(row.chains).padStart(2)} chains: ${row.gflops.toFixed(1)} GFLOP/s`);
      console.log(`${kind} peak: ${r.peak.gflops.toFixed(1)} GFLOP/s (${kind === 'relaxed' ? 'f32x4.relaxed_madd' : 'f32x4 mul + add'}, ` +
        `${r.peak.chains} chains, Node ${process.version})`);
    }
  }
}
