#!/usr/bin/env node
// npm run bench [-- --quick] [-- --browser] [-- --cpu] [-- --wllama] [-- --baseline DIR]: configs A and B for native
// scalar, native SIMD, wasm scalar, wasm SIMD and relaxed SIMD with 1 and 2 threads (Node),
// TF.js's wasm backend and PyTorch, in one run, each in a process of its own (so peak memory
// is its own); the wasm engine's peaks (bench/peak.mjs) and the native backend's
// (bench_peak, bench/peak_native.c) measured in the same run; the CLI on nanoGPT's CPU recipe
// against PyTorch. Prints one table, then each goal of issue 13 with its ratio, and writes
// bench/results/latest.{json,md} and speed.md (the same run as a block for docs/SPEED.md's
// suite section, to paste as it is).
//   --quick    fewer steps, and B without the scalar and TF.js rows
//   --browser  also the browser variant (bench/browser.mjs): headless Chromium, with and
//              without cross-origin isolation, each row labelled with the kernels it ran
//              (Chromium has relaxed SIMD: the default rows are relaxed), plus forced SIMD128
//   --cpu      the 1-thread rows (native, wasm in Node, PyTorch) timed by the process's CPU
//              time instead of the wall clock: on a machine shared with other jobs it counts
//              only the time the row ran (threaded rows keep the wall clock)
//   --wllama   also issue 29's anchor (bench/wllama.mjs): wasmformer against wllama (llama.cpp
//              in wasm) in headless Chromium on the SmolLM-135M shape's GGUF files (float32,
//              Q8_0, Q4_0), 1 and 2 threads: decode, prompt, renderer peak, and the issue's ratios
//   --baseline DIR  generation A against an earlier build, both in one process taking turns,
//              CPU time (bench/gen-ab.mjs): DIR is a copy of an earlier dist/ or a built
//              checkout (its own bench/wasm.mjs drives it: e.g. issue 13's baseline,
//              git worktree add /tmp/e0 e0a21eb, built there with ./build.sh)
// Builds what is missing first: the native library (cmake), the wasm builds (./build.sh,
// ./build.sh ref) and the bench's own npm dependencies (TF.js, playwright-core).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { CONFIGS, trainFlopsPerToken } from './configs.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const browser = args.includes('--browser');
const cpu = args.includes('--cpu');
const wllama = args.includes('--wllama');
const baseline = args.includes('--baseline') ? args[args.indexOf('--baseline') + 1] : null;

function sh(cmd, argv, opts = {}) {
  const r = spawnSync(cmd, argv, { encoding: 'utf8', maxBuffer: 1 << 26, ...opts });
  if (r.status !== 0) {
    process.stderr.write(r.stdout || '');
    process.stderr.write(r.stderr || '');
    throw new Error(`bench: ${cmd} ${argv.join(' ')} failed (exit ${r.status})`);
  }
  return r.stdout;
}

function step(title, cmd, argv, opts) {
  console.log(`bench: ${title}`);
  return sh(cmd, argv, { stdio: ['ignore', 'pipe', 'inherit'], ...opts });
}

// ---- build ----
step('native build', 'cmake', ['-S', '.', '-B', 'build/native', '-DCMAKE_BUILD_TYPE=Release']);
step('native build', 'cmake', ['--build', 'build/native', '-j', '2', '--target', 'bench_wasmformer', 'bench_wasmformer_ref', 'bench_peak']);
step('wasm builds', './build.sh', []);
step('wasm reference build', './build.sh', ['ref']);
if (!existsSync('bench/node_modules/@tensorflow/tfjs-backend-wasm')) {
  step('bench dependencies (npm ci in bench/)', 'npm', ['ci', '--no-audit', '--no-fund'], { cwd: 'bench' });
}

// ---- the rows ----
const S = quick ? { A: [5, 2], B: [2, 1], genA: 3 } : { A: [15, 3], B: [5, 1], genA: 7 };
const native = (lib) => (which, opt) => ['build/native/' + lib, [which, ...opt]];
const node = (script, build, flags = []) => (which, opt) => [process.execPath, [...flags, script, ...(build ? [build] : []), which, ...opt]];
// relaxed SIMD: Node 22+ has it; Node 20 only with this flag (the rows are left out without it)
const RELAXED = relaxedFlags();
const PYTHON = '/usr/bin/python3', OPENBLAS = '/usr/lib/x86_64-linux-gnu/openblas-openmp';
const HAS_TORCH = spawnSync(PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0 && existsSync(OPENBLAS);
const torchEnv = (threads) => ({ ...process.env, LD_LIBRARY_PATH: OPENBLAS, OMP_NUM_THREADS: String(threads) });
const ROWS = [
  // cpu: the row takes --cpu (bench.c, bench/wasm.mjs, torch_ref.py); profile: bench.c's per-op
  // profile (with threads, each op also on one thread, taking turns)
  { name: 'native scalar (reference kernels)', key: 'native_ref', platform: 'native', run: native('bench_wasmformer_ref'), skipB: quick, cpu: true },
  { name: 'native SIMD, 1 thread', key: 'native_simd', platform: 'native', peak: 'native', run: native('bench_wasmformer'), profile: true, cpu: true },
  { name: 'native SIMD, 2 threads', key: 'native_simd2', platform: 'native', run: native('bench_wasmformer'), threads: 2, profile: true },
  { name: 'wasm scalar (reference kernels), Node', key: 'wasm_ref', platform: 'wasm', run: node('bench/wasm.mjs', 'ref'), skipB: quick, cpu: true },
  { name: 'wasm SIMD, 1 thread, Node', key: 'wasm_simd', platform: 'wasm', peak: 'simd128', run: node('bench/wasm.mjs', 'simd'), cpu: true },
  { name: 'wasm SIMD, 2 threads, Node', key: 'wasm_simd2', platform: 'wasm', run: node('bench/wasm.mjs', 'mt'), threads: 2 },
  ...(RELAXED ? [
    { name: 'wasm relaxed SIMD, 1 thread, Node', key: 'wasm_relaxed', platform: 'wasm', peak: 'relaxed',
      run: node('bench/wasm.mjs', 'relaxed', RELAXED), cpu: true },
    { name: 'wasm relaxed SIMD, 2 threads, Node', key: 'wasm_relaxed2', platform: 'wasm', peak: 'relaxed',
      run: node('bench/wasm.mjs', 'relaxed-mt', RELAXED), threads: 2 },
  ] : []),
  { name: 'TF.js 4.22 wasm backend, Node', key: 'tfjs', platform: 'wasm', run: node('bench/tfjs.mjs'), skipB: quick },
  ...torchRows(),
];

/** The node flags under which this Node runs relaxed SIMD ([] when it needs none), or null. */
function relaxedFlags() {
  const probe = "import { hasRelaxedSimd } from './src/js/loader.js'; process.exit(hasRelaxedSimd() ? 0 : 1);";
  for (const flags of [[], ['--experimental-wasm-relaxed-simd']]) {
    if (spawnSync(process.execPath, [...flags, '--input-type=module', '-e', probe], { stdio: 'ignore' }).status === 0) return flags;
  }
  console.log(`bench: relaxed SIMD rows skipped (Node ${process.version} has no relaxed SIMD)`);
  return null;
}

/** PyTorch's rows (bench/torch_ref.py) when Debian's python3-torch is there, on OpenBLAS
 * (the default reference BLAS is ~16x slower: no fair peer). */
function torchRows() {
  if (!HAS_TORCH) {
    console.log('bench: PyTorch rows skipped (they need: sudo apt-get install -y python3-torch libopenblas0-openmp)');
    return [];
  }
  const row = (threads) => ({
    name: `PyTorch ${torchVersion(PYTHON)} + OpenBLAS, ${threads} thread${threads > 1 ? 's' : ''}`, key: `torch${threads}`,
    platform: 'torch', threads, pairless: true, cpu: threads === 1,
    run: (which, opt) => [PYTHON, ['bench/torch_ref.py', which, ...opt]],
    env: torchEnv(threads),
  });
  return [row(1), row(2)];
}

function torchVersion(python) {
  const r = spawnSync(python, ['-c', 'import torch; print(torch.__version__.split("a")[0])'], { encoding: 'utf8' });
  return r.stdout.trim() || '?';
}

function runRow(row, which) {
  const [steps, warmup] = S[which];
  // the reference kernels and TF.js are 10-40x slower: fewer steps keep the run short
  const slow = row.key.endsWith('_ref') || row.key === 'tfjs';
  const opt = ['--steps', String(slow && which === 'B' ? 2 : steps), '--warmup', String(slow && which === 'B' ? 1 : warmup)];
  if (row.threads) opt.push('--threads', String(row.threads));
  if (which === 'A') opt.push('--gen', String(row.key === 'tfjs' ? 2 : S.genA));
  if (row.profile) opt.push('--profile');
  if (cpu && row.cpu) opt.push('--cpu');
  const [cmd, argv] = row.run(which, opt);
  const r = JSON.parse(sh(cmd, argv, { env: row.env }).trim().split('\n').pop());
  if (cpu && row.cpu) r.clock = 'cpu';
  if (row.threads && !row.pairless) {
    // the thread speed-up, steadier than two rows on a shared machine: a second process
    // alternates steps of a threaded and a single-thread model on the same batch (enough
    // steps that one slow step moves the sum little)
    const pairOpt = ['--steps', String(which === 'B' ? 10 : 24), '--warmup', '1', '--threads', String(row.threads), '--pair', '1'];
    const [pc, pa] = row.run(which, pairOpt);
    r.pair_speedup = JSON.parse(sh(pc, pa).trim().split('\n').pop()).pair_speedup;
  }
  return r;
}

const results = { date: new Date().toISOString(), quick, machine: machine(), rows: {} };
// what the engine can issue, measured in this run (bench/peak.mjs): the wasm rows' % of peak
console.log('bench: the wasm engine\'s peaks (bench/peak.mjs) ...');
results.peak = JSON.parse(sh(process.execPath, ['bench/peak.mjs', '--json', ...(cpu ? ['--cpu'] : [])]).trim().split('\n').pop());
// and what the native backend issues (bench/peak_native.c): the native rows' % of peak
console.log('bench: the native backend\'s peak (bench_peak) ...');
const nativePeak = JSON.parse(sh('build/native/bench_peak', cpu ? ['--cpu'] : []).trim().split('\n').pop());
results.peak.native = { peak: nativePeak.backend.peak, rows: nativePeak.backend.rows, simd: nativePeak.simd };
for (const which of ['A', 'B']) {
  for (const row of ROWS) {
    if (which === 'B' && row.skipB) continue;
    process.stdout.write(`bench: ${which} ${row.name} ... `);
    const r = runRow(row, which);
    results.rows[`${row.key}_${which}`] = r;
    console.log(`${r.train_tok_s.toFixed(0)} tok/s${r.gen_tok_s ? `, generation ${r.gen_tok_s.toFixed(0)} tok/s` : ''}`);
  }
}

// ---- the CLI on nanoGPT's CPU recipe (config A's shape, batch 12) against PyTorch ----
results.cli = cliRow();

// ---- generation against an earlier build, in one process ----
if (baseline) {
  console.log(`bench: generation A against ${baseline} (bench/gen-ab.mjs) ...`);
  const out = sh(process.execPath, ['bench/gen-ab.mjs', baseline, 'dist', '--rounds', quick ? '5' : '15', '--cpu', '--json']);
  results.gen_baseline = { dir: baseline, ...JSON.parse(out.trim().split('\n').pop()) };
}

/** `wasmformer train` as a user runs it (Node's default kernels and threads) on the bundled
 * text, at nanoGPT's CPU recipe (L4 H4 C128 T64 = the tiny preset, batch 12), no validation;
 * its printed tokens/s against PyTorch's same model and batch at 1 and 2 threads. */
function cliRow() {
  const steps = quick ? 60 : 200, out = 'build/bench-cli.wf';
  // the shape by name (the CLI's default preset is micro) and AdamW (named presets bring Muon),
  // so both sides train the same model with the same optimizer
  const flags = ['--preset', 'tiny', '--muon', '0', '--batch', '12', '--steps', String(steps), '--eval-interval', '0'];
  process.stdout.write(`bench: wasmformer train ${flags.join(' ')} ... `);
  const text = sh(process.execPath, ['bin/wasmformer.js', 'train', ...flags, '--out', out, '--force']);
  const m = text.match(/done: .*?, ([\d.]+)(k?) tok\/s/);
  if (!m) throw new Error(`bench: no tokens/s in the CLI's output: ${text}`);
  const info = JSON.parse(sh(process.execPath, ['bin/wasmformer.js', 'info', out, '--json']));
  const cli = {
    tok_s: Number(m[1]) * (m[2] ? 1000 : 1), steps, batch: 12, vocab: info.config?.vocabSize ?? info.vocabSize,
    threads: Math.min(os.availableParallelism?.() ?? os.cpus().length, 4), relaxed: RELAXED?.length === 0,
  };
  console.log(`${cli.tok_s} tok/s (${cli.threads} threads)`);
  if (HAS_TORCH) {
    for (const threads of [1, 2]) {
      const r = JSON.parse(sh(PYTHON, ['bench/torch_ref.py', 'A', '--batch', '12', '--vocab', String(cli.vocab),
        '--steps', quick ? '10' : '30', '--warmup', '3', '--threads', String(threads)], { env: torchEnv(threads) }).trim().split('\n').pop());
      cli[`torch${threads}_tok_s`] = r.train_tok_s;
    }
  }
  return cli;
}

// ---- size and memory ----
const wasmBytes = readFileSync('dist/wasmformer.wasm');
const mtBytes = readFileSync('dist/wasmformer-mt.wasm');
results.size = {
  wasm: wasmBytes.length, wasm_gzip: gzipSync(wasmBytes, { level: 9 }).length,
  wasm_mt: mtBytes.length, wasm_mt_gzip: gzipSync(mtBytes, { level: 9 }).length,
};
const b = results.rows.wasm_simd_B;
// the issue's bound: 1.25 x (16 bytes per parameter + the activations backward needs),
// the latter being everything the model plans for a batch (WF_ACTS, incl. backward scratch)
results.memory_B = {
  params: b.params, act_bytes: b.act_bytes, heap_bytes: b.heap_bytes,
  bound_bytes: 1.25 * (16 * b.params + b.act_bytes), ratio: b.heap_bytes / (16 * b.params + b.act_bytes),
};

if (browser) {
  const out = sh(process.execPath, ['bench/browser.mjs', ...(quick ? ['--quick'] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
  results.browser = JSON.parse(out.trim().split('\n').pop());
}

// ---- issue 29's anchor: wllama on the same GGUF files (opt-in; its own tables) ----
let wllamaTables = '';
if (wllama) {
  console.log('bench: wasmformer against wllama on GGUF files (bench/wllama.mjs) ...');
  const json = 'build/bench-wllama.json';
  rmSync(json, { force: true }); // a skipped run (no @wllama/wllama) writes none
  wllamaTables = sh(process.execPath, ['bench/wllama.mjs', '--rounds', quick ? '1' : '3', '--json', json],
    { stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  if (existsSync(json)) {
    const { wllama: version, started, summary, goals } = JSON.parse(readFileSync(json, 'utf8'));
    results.wllama = { version, started, summary, goals };
  }
}

// ---- the table ----
const md = table(results) + (wllamaTables ? `\n\n${wllamaTables}` : '');
console.log('\n' + md);
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/latest.json', JSON.stringify(results, null, 2) + '\n');
writeFileSync('bench/results/latest.md', md + '\n');
// the block docs/SPEED.md's suite section is: this run, with the command that made it
const command = `npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}`;
writeFileSync('bench/results/speed.md', `The latest run (\`${command}\`, ${results.date.slice(0, 16).replace('T', ' ')} UTC; ` +
  'every row of one invocation on one machine: compare rows, not runs):\n\n' + md + '\n');
console.log('bench: wrote bench/results/latest.json, latest.md and speed.md (docs/SPEED.md\'s table)');

function machine() {
  const cpus = os.cpus();
  return `${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} vCPU, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ` +
    `Node ${process.version}, load average at start ${os.loadavg()[0].toFixed(2)}`;
}

function table(res) {
  const f = (x, d = 0) => (x === undefined || x === null || !Number.isFinite(x) ? '–' : x.toFixed(d));
  const mb = (x) => (x ? (x / 2 ** 20).toFixed(0) : '–');
  const gflops = (r, w) => r && r.train_tok_s * trainFlopsPerToken(CONFIGS[w]) / 1e9;
  const peakOf = (kind) => res.peak?.[kind]?.peak?.gflops;
  const pct = (r, w, kind) => (r && kind && peakOf(kind) ? `${f(100 * gflops(r, w) / peakOf(kind))}%` : '–');
  const lines = [];
  lines.push(`wasmformer benchmark, ${res.date.slice(0, 10)}${res.quick ? ' (quick)' : ''}: ${res.machine}.`);
  lines.push('Medians after warm-up; every row ran in this one invocation, one process each, on a shared machine.');
  lines.push('GFLOP/s = train tok/s x (6 (12 L C^2 + V C) + 6 L T C) FLOP/token (bench/configs.mjs). ' +
    'Peak memory: max RSS of the process (native, Node); for wasm rows also the wasm heap.');
  const peaks = ['simd128', 'relaxed'].map((k) => (peakOf(k) ? `${k === 'simd128' ? 'f32x4 mul + add' : 'f32x4.relaxed_madd'} ` +
    `${f(peakOf(k), 1)} GFLOP/s (${res.peak[k].peak.chains} chains)` : `${k}: ${res.peak?.[k]?.skipped ?? 'not measured'}`));
  const nat = res.peak?.native;
  lines.push(`What this wasm engine issues on one thread, measured in this run (bench/peak.mjs): ${peaks.join('; ')}` +
    (nat ? `; natively (bench_peak) the ${nat.simd} backend's multiply-add ${f(nat.peak.gflops, 1)} GFLOP/s` : '') +
    '. "% of peak": a 1-thread row\'s GFLOP/s over its kind\'s peak.' +
    (Object.values(res.rows).some((r) => r.clock === 'cpu') ? ' 1-thread rows timed by the process\'s CPU time (--cpu).' : ''));
  lines.push('');
  lines.push('| build | A tok/s | A GFLOP/s | A gen tok/s (decode only) | B tok/s | B GFLOP/s | A, B % of peak | B peak MB (heap) | A, B ×TF.js | A, B ×scalar |');
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of ROWS) {
    const a = res.rows[`${row.key}_A`], bb = res.rows[`${row.key}_B`];
    const ref = { native: 'native_ref', wasm: 'wasm_ref' }[row.platform] ?? 'none';
    const ratio = (r, w, base) => {
      const x = res.rows[`${base}_${w}`];
      return r && x && x.train_tok_s ? (r.train_tok_s / x.train_tok_s).toFixed(1) : '–';
    };
    const peak = bb ? `${mb(bb.max_rss_bytes ?? bb.peak_rss_bytes)}${bb.heap_bytes ? ` (${mb(bb.heap_bytes)})` : ''}` : '–';
    const ofPeak = row.peak && !row.threads ? `${pct(a, 'A', row.peak)}, ${pct(bb, 'B', row.peak)}` : '–';
    lines.push(`| ${row.name} | ${f(a?.train_tok_s)} | ${f(gflops(a, 'A'), 1)} | ` +
      `${f(a?.gen_tok_s)}${a?.decode_tok_s ? ` (${f(a.decode_tok_s)})` : ''} | ${f(bb?.train_tok_s)} | ${f(gflops(bb, 'B'), 1)} | ` +
      `${ofPeak} | ${peak} | ${ratio(a, 'A', 'tfjs')}, ${ratio(bb, 'B', 'tfjs')} | ${ratio(a, 'A', ref)}, ${ratio(bb, 'B', ref)} |`);
  }
  const ratio = (r, base) => (r?.train_tok_s && base?.train_tok_s ? (r.train_tok_s / base.train_tok_s).toFixed(1) : '–');
  if (res.browser) {
    // each row named by the kernels it ran (the package's default, 'auto', is relaxed SIMD in
    // a Chromium that has it; simd128 and simd128_2 force SIMD128)
    const kind = (r) => (r?.kernels === 'relaxed' ? 'wasm relaxed SIMD' : 'wasm SIMD');
    const names = { simd: (r) => `${kind(r)}, 1 thread`, simd128: () => 'wasm SIMD (simd128 forced), 1 thread',
      simd2: (r) => `${kind(r)}, 2 threads`, simd128_2: () => 'wasm SIMD (simd128 forced), 2 threads', tfjs: () => 'TF.js 4.22 wasm backend' };
    for (const [iso, rows] of Object.entries(res.browser)) {
      for (const [k, r] of Object.entries(rows).filter(([key]) => names[key]).map(([key, v]) => [names[key](v), v])) {
        if (!r || r.error) {
          lines.push(`| Chromium, ${iso}: ${k} | ${r?.error ?? 'not run'} | | | | | | | | |`);
          continue;
        }
        lines.push(`| Chromium, ${iso}: ${k} | ${f(r.A?.train_tok_s)} | ${f(gflops(r.A, 'A'), 1)} | ` +
          `${f(r.A?.gen_tok_s)}${r.A?.decode_tok_s ? ` (${f(r.A.decode_tok_s)})` : ''} | ${f(r.B?.train_tok_s)} | ${f(gflops(r.B, 'B'), 1)} | – | ` +
          `${r.B?.heap_bytes ? `(${mb(r.B.heap_bytes)})` : '–'} | ${ratio(r.A, rows.tfjs?.A)}, ${ratio(r.B, rows.tfjs?.B)} | |`);
      }
    }
  }
  lines.push('');
  const vsTorch = [['native SIMD', 'native_simd', 1], ['native SIMD', 'native_simd2', 2], ['wasm SIMD, Node', 'wasm_simd', 1],
    ['wasm SIMD, Node', 'wasm_simd2', 2], ['wasm relaxed SIMD, Node', 'wasm_relaxed', 1], ['wasm relaxed SIMD, Node', 'wasm_relaxed2', 2]]
    .filter(([, key]) => res.rows[`${key}_A`]).map(([name, key, n]) => {
      const r = (w, k) => res.rows[`${k}_${w}`], t = (w) => r(w, `torch${n}`);
      const x = (w, field) => (r(w, key)?.[field] && t(w)?.[field] ? (r(w, key)[field] / t(w)[field]).toFixed(2) : '–');
      return t('A') ? `${name} ${n}t: train A ${x('A', 'train_tok_s')}x, B ${x('B', 'train_tok_s')}x, generation A ${x('A', 'gen_tok_s')}x` : null;
    }).filter(Boolean);
  if (vsTorch.length) lines.push(`wasmformer / PyTorch at the same thread count (tokens/s ratios, this run): ${vsTorch.join('; ')}.`);
  const pairs = ['native_simd2', 'wasm_simd2', 'wasm_relaxed2'].flatMap((k) => ['A', 'B'].map((w) => [k, w, res.rows[`${k}_${w}`]?.pair_speedup]))
    .filter(([, , x]) => x).map(([k, w, x]) => `${{ native_simd2: 'native', wasm_simd2: 'wasm', wasm_relaxed2: 'wasm relaxed' }[k]} ${w} ${x.toFixed(2)}x`);
  const iso = res.browser?.isolated;
  for (const key of ['simd2', 'simd128_2']) {
    const label = key === 'simd128_2' ? 'Chromium (isolated, simd128)' : `Chromium (isolated${iso?.[key]?.kernels === 'relaxed' ? ', relaxed' : ''})`;
    for (const w of ['A', 'B']) if (iso?.[key]?.[w]?.pair_speedup) pairs.push(`${label} ${w} ${iso[key][w].pair_speedup.toFixed(2)}x`);
  }
  if (pairs.length) lines.push(`2 threads / 1 thread, from a 2-thread and a 1-thread model alternating steps in one process: ${pairs.join(', ')}.`);
  const c = res.cli;
  if (c) {
    const t = [1, 2].filter((n) => c[`torch${n}_tok_s`]).map((n) => `PyTorch ${n} thread${n > 1 ? 's' : ''} ${f(c[`torch${n}_tok_s`])} tok/s ` +
      `(CLI ${(c.tok_s / c[`torch${n}_tok_s`]).toFixed(2)}x)`);
    lines.push(`CLI, nanoGPT's CPU recipe (wasmformer train --preset tiny --muon 0 --batch 12 --steps ${c.steps} --eval-interval 0: L4 H4 C128 T64, AdamW, ` +
      `the bundled text's ${c.vocab} characters; ${c.threads} threads, ${c.relaxed ? 'relaxed SIMD' : 'SIMD128'} as Node picks): ` +
      `${f(c.tok_s)} tok/s${t.length ? `; the same model and batch in ${t.join(', ')}` : ''}.`);
  }
  if (res.gen_baseline) {
    const g = res.gen_baseline, [lo, hi] = g.builds[1].ratio_range ?? [];
    lines.push(`Generation A, wasm SIMD 1 thread, against ${g.dir} in one process taking turns (bench/gen-ab.mjs, ${g.rounds} rounds, ` +
      `${g.clock === 'cpu' ? 'CPU time' : 'wall clock'}): ${f(g.builds[1].gen)} vs ${f(g.builds[0].gen)} tok/s, per round ` +
      `${g.builds[1].ratio.toFixed(2)}x${lo ? ` (${lo.toFixed(2)}-${hi.toFixed(2)})` : ''}; decode only ${f(g.builds[1].decode)} vs ` +
      `${f(g.builds[0].decode)}, per round ${g.builds[1].decode_ratio.toFixed(2)}x.`);
  }
  lines.push(`wasm module: ${res.size.wasm} bytes, ${res.size.wasm_gzip} gzipped; threaded: ${res.size.wasm_mt} bytes, ` +
    `${res.size.wasm_mt_gzip} gzipped.`);
  const m = res.memory_B;
  lines.push(`Training B in wasm: heap ${mb(m.heap_bytes)} MB for ${m.params} parameters (16 B each: ${mb(16 * m.params)} MB) ` +
    `+ ${mb(m.act_bytes)} MB planned activations = ${m.ratio.toFixed(2)}x that sum (bound: 1.25x).`);
  const p = res.rows.native_simd_B?.profile;
  if (p) {
    const total = p.sum;
    const parts = Object.entries(p).filter(([k]) => k !== 'sum').sort((x, y) => y[1] - x[1])
      .map(([k, v]) => `${k} ${(100 * v / total).toFixed(1)}%`);
    lines.push(`Profile of a B step (native SIMD, 1 thread, each op timed alone on the step's shapes; ` +
      `sum ${(total * 1000).toFixed(0)} ms vs measured step ${(res.rows.native_simd_B.step_s * 1000).toFixed(0)} ms): ${parts.join(', ')}.`);
  }
  const p2 = res.rows.native_simd2_B;
  if (p2?.profile && p2.profile_1t) {
    // each op on 2 threads against 1, the two taking turns: where the threads lose
    const ops = Object.keys(p2.profile).filter((k) => k !== 'sum' && p2.profile_1t[k] > 0.002 * p2.profile_1t.sum)
      .sort((x, y) => p2.profile_1t[y] - p2.profile_1t[x])
      .map((k) => `${k} ${(p2.profile_1t[k] / p2.profile[k]).toFixed(2)}x (${(100 * p2.profile_1t[k] / p2.profile_1t.sum).toFixed(0)}%)`);
    lines.push(`The same ops on 2 threads against 1 (native, each op alone, the two taking turns; speed-up and share of the ` +
      `1-thread sum): all ${(p2.profile_1t.sum / p2.profile.sum).toFixed(2)}x; ${ops.join(', ')}.`);
  }
  lines.push('', ...goals(res));
  return lines.join('\n');
}

/** Issue 13's goals, each with its ratio from this run and whether it is met. */
function goals(res) {
  const r = (k, w) => res.rows[`${k}_${w}`];
  const peakOf = (kind) => res.peak?.[kind]?.peak?.gflops;
  const share = (k, w, kind) => (r(k, w) && peakOf(kind) ? r(k, w).train_tok_s * trainFlopsPerToken(CONFIGS[w]) / 1e9 / peakOf(kind) : null);
  const out = ['| goal (issue 13) | this run | goal | met |', '|---|---:|---:|---|'];
  const row = (name, x, goal, fmt) => out.push(`| ${name} | ${x === null || x === undefined ? '–' : fmt(x)} | ${fmt(goal)} | ` +
    `${x === null || x === undefined ? 'not measured' : x >= goal ? 'yes' : 'no'} |`);
  const pc = (x) => `${(100 * x).toFixed(0)} %`, times = (x) => `${x.toFixed(2)}x`;
  row('wasm SIMD128, 1 thread, B: % of the f32x4 mul + add peak', share('wasm_simd', 'B', 'simd128'), 0.70, pc);
  row('wasm SIMD128, 1 thread, A: % of that peak', share('wasm_simd', 'A', 'simd128'), 0.60, pc);
  row('wasm relaxed SIMD, 1 thread, B: % of the relaxed_madd peak', share('wasm_relaxed', 'B', 'relaxed'), 0.70, pc);
  row('wasm relaxed SIMD, 1 thread, A: % of that peak', share('wasm_relaxed', 'A', 'relaxed'), 0.60, pc);
  const vs = (k, w, t) => (r(k, w)?.train_tok_s && r(t, w)?.train_tok_s ? r(k, w).train_tok_s / r(t, w).train_tok_s : null);
  row('native SIMD, 1 thread, B: tok/s over PyTorch 1 thread', vs('native_simd', 'B', 'torch1'), 1.25, times);
  const c = res.cli;
  if (c) row(`CLI (nanoGPT's recipe, ${c.threads} threads): tok/s over PyTorch ${c.threads} thread${c.threads > 1 ? 's' : ''}`,
    c[`torch${c.threads}_tok_s`] ? c.tok_s / c[`torch${c.threads}_tok_s`] : null, 1, times);
  row('wasm SIMD, B: 2 threads / 1 thread, Node (paired)', r('wasm_simd2', 'B')?.pair_speedup, 1.85, times);
  row('wasm relaxed SIMD, B: 2 threads / 1 thread, Node (paired)', r('wasm_relaxed2', 'B')?.pair_speedup, 1.85, times);
  // Chromium loads relaxed SIMD by default: the goal's row is SIMD128 (forced), when the default was not
  const iso = res.browser?.isolated, chromium = iso?.simd128_2 ?? iso?.simd2;
  row(`wasm SIMD${chromium?.kernels === 'relaxed' ? ' (relaxed)' : ''}, B: 2 threads / 1 thread, Chromium (paired; --browser)`,
    chromium?.B?.pair_speedup, 1.85, times);
  if (iso?.simd128_2) row('wasm relaxed SIMD, B: 2 threads / 1 thread, Chromium (paired; --browser)', iso.simd2?.B?.pair_speedup, 1.85, times);
  const g = res.gen_baseline;
  row('generation A, wasm 1 thread: over the baseline build (--baseline)', g ? g.builds[1].gen / g.builds[0].gen : null, 2, times);
  return out;
}
