#!/usr/bin/env node
// npm test: everything, from a fresh clone. Native library + C tests (ctest), the native
// golden record, the C tests again under AddressSanitizer + UndefinedBehaviorSanitizer, the
// pool under ThreadSanitizer, a short native run under valgrind, the wasm build, the C
// kernel tests in wasm, the Node tests of the wasm build, the web page in headless
// Chromium, a minute of fuzzing per loader, and a memory soak. Each
// stage says what it runs; the first failure stops the run with a non-zero exit code.
// Every tool a stage or a test needs (a C compiler and cmake, valgrind, Chromium, clang,
// script) is checked before the first stage: a missing one is installed when this runs as
// root without a terminal on Debian (as build.sh installs Emscripten); otherwise what needs
// it is skipped. The last lines list every skipped stage, and every test that skipped in each
// stage that ran it (a tool or PyTorch missing, the native golden record on another machine's
// fingerprint), with the command that enables it. Without the native build's tools nothing
// runs, and in CI (CI=true) any missing tool fails the run: both list every command that
// enables what is missing, then stop. node_modules is installed (npm ci) when it is missing,
// lacks a dependency or is older than package-lock.json.
//
// Usage: node scripts/test.mjs [--only REGEX]   (--only: the stages whose title matches;
// the tools are checked all the same)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { neverRan } from './skip-reporter.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt > 0 ? new RegExp(process.argv[onlyAt + 1], 'i') : null;
const leftOut = []; // the stages --only left out
// the tests' own reports of what they skipped (skip-reporter.mjs, tests/golden/check-native.mjs)
const SKIPS = mkdtempSync(join(tmpdir(), 'wf-test-skips-'));
process.on('exit', () => rmSync(SKIPS, { recursive: true, force: true }));

const timings = []; // [title, seconds]: printed at the end, to keep an eye on CI's time

function run(title, cmd, args, { always = false, ...opts } = {}) {
  if (only && !always && !only.test(title)) {
    console.log(`== ${title}: left out (--only)`);
    leftOut.push(title);
    return;
  }
  console.log(`\n== ${title}: ${cmd} ${args.join(' ')}`);
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  timings.push([title, (performance.now() - t0) / 1000]);
  if (r.error) {
    console.error(`npm test: could not run ${cmd}: ${r.error.message}`);
    process.exit(1);
  }
  if (r.status !== 0) {
    console.error(`npm test: "${title}" failed (exit ${r.status})`);
    process.exit(r.status || 1);
  }
}

function have(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

const skipped = []; // [what, the command that enables it]
const lacking = []; // what nothing can run without: [what, the command that enables it]

/** Whether a stage's tool is there (installed now when running as root without a terminal);
 * outside CI a missing one skips the stage (stage false: a tool some tests need, which skip
 * themselves and are listed from their reports; required: one every stage needs, whose
 * absence ends the run once every tool has been checked). */
function tool(title, cmds, install, { stage = true, required = false } = {}) {
  if (cmds.some(have)) return true;
  const msg = `"${title}" needs ${cmds.join(' or ')}: sudo apt-get install -y ${install}`;
  if (process.getuid?.() === 0 && !process.stdin.isTTY && have('apt-get')) {
    console.log(`\n== ${title}: installing ${install} (apt-get, as root without a terminal)`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const ok = spawnSync('apt-get', ['update', '-q'], { stdio: 'inherit', env }).status === 0 &&
      spawnSync('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...install.split(' ')], { stdio: 'inherit', env }).status === 0;
    if (ok && cmds.some(have)) return true;
  }
  if (required || process.env.CI) {
    console.log(`\n== ${title}: MISSING (${msg})`);
    lacking.push([title, `sudo apt-get install -y ${install}`]);
    return false;
  }
  console.log(`\n== ${title}: ${stage ? 'SKIPPED' : 'missing: the tests that need it will skip'} (${msg})`);
  if (stage) skipped.push([title, `sudo apt-get install -y ${install}`]);
  return false;
}

/** Why node_modules does not match package-lock.json (there is none, a dependency is not in
 * it, or the lock changed after the last install), or null when it does. */
function staleDependencies() {
  if (!existsSync('package-lock.json')) return null;
  if (!existsSync('node_modules')) return 'no node_modules yet';
  const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
  const absent = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).filter((d) => !existsSync(join('node_modules', d, 'package.json')));
  if (absent.length) return `node_modules lacks ${absent.join(', ')}`;
  // npm records each install in node_modules/.package-lock.json
  const record = join('node_modules', '.package-lock.json');
  if (!existsSync(record) || statSync('package-lock.json').mtimeMs > statSync(record).mtimeMs) return 'package-lock.json changed after the last install';
  return null;
}

/** node --test over files, each test's outcome also written for the list of skips at the end. */
let reports = 0;
function nodeTests(title, files, { flags = [], ...opts } = {}) {
  const report = join(SKIPS, `node-${++reports}.jsonl`);
  run(title, process.execPath, [...flags, '--test', '--test-reporter', process.stdout.isTTY ? 'spec' : 'tap', '--test-reporter-destination', 'stdout',
    '--test-reporter', './scripts/skip-reporter.mjs', '--test-reporter-destination', report, ...files], opts);
}

// Every tool first, so that nothing runs before what it needs is there. The native build
// first of all: every stage needs it.
tool('the native build (a C compiler)', ['cc'], 'build-essential', { required: true });
tool('the native build (cmake)', ['cmake'], 'cmake', { required: true });
const hasValgrind = tool('valgrind: a short native training and generation', ['valgrind'], 'valgrind');
// the page's stage, and the browser tests among the Node tests (tests/js/package.test.mjs)
const hasChromium = tool('the web page in headless Chromium', ['chromium'], 'chromium');
// playwright-core, which drives Chromium in the tests, needs Node.js 20 or later (Debian 12's nodejs is 18)
const oldNode = Number(process.versions.node.split('.')[0]) < 20;
if (oldNode) {
  const msg = `the browser tests need Node.js 20 or later (playwright-core), this is ${process.version}`;
  const enable = 'run npm test with Node.js 20 or later (on Debian 12: sudo npm install -g node@20)';
  console.log(`\n== the web page in headless Chromium: ${process.env.CI ? 'MISSING' : 'SKIPPED'} (${msg})`);
  // listed beside Chromium's command when that is missing too: both are needed
  (process.env.CI ? lacking : skipped).push(['the web page in headless Chromium', enable]);
}
const hasClang = tool('fuzz: libFuzzer, 60 s per loader', ['clang-14', 'clang'], 'clang-14 libclang-rt-14-dev');
// the CLI's terminal test (tests/js/cli.test.mjs) runs it under script(1); without it, that test skips (listed at the end)
tool('the CLI on a terminal (script)', ['script'], 'bsdutils', { stage: false });

// Nothing runs without the native build, and in CI nothing may be skipped: with something
// missing, every command that enables what is missing or skipped, then the end.
if (lacking.length) {
  console.error(`\nnpm test: ${process.env.CI ? 'in CI (CI=true) nothing may be missing' : 'nothing runs without the native build'}; `
    + `missing: ${lacking.map(([what]) => what).join('; ')}. To run every stage:`);
  for (const [what, cmd] of [...lacking, ...skipped]) console.error(`  ${what}: ${cmd}`);
  process.exit(1);
}

// npm dependencies (dev tools for the browser, package and bench tests), installed when
// node_modules is missing or out of date: whatever --only chose
const stale = staleDependencies();
if (stale) run(`npm dependencies (${stale})`, 'npm', ['ci'], { always: true });
const jobs = String(Math.max(1, Math.min(4, (await import('node:os')).availableParallelism?.() ?? 2)));
run('configure native build', 'cmake', ['-S', '.', '-B', 'build/native', '-DCMAKE_BUILD_TYPE=Release']);
run('build native library and tests', 'cmake', ['--build', 'build/native', '-j', jobs]);
run('C tests', 'ctest', ['--test-dir', 'build/native', '--output-on-failure']);
// The golden record (tests/golden/README.md): training, generation and file bytes of every
// architecture equal tests/golden/native.json, on a machine with its fingerprint (else skipped).
run('golden record: native', process.execPath, ['tests/golden/check-native.mjs'],
  { env: { ...process.env, WF_TEST_SKIPS: join(SKIPS, 'golden.jsonl') } });

// The same C tests, fuzz regressions included, with every memory error, leak and undefined
// behaviour fatal (the build's -fno-sanitize-recover=all).
run('configure native build with ASan + UBSan', 'cmake', ['-S', '.', '-B', 'build/sanitize', '-DWF_SANITIZE=ON', '-DCMAKE_BUILD_TYPE=RelWithDebInfo']);
run('build with ASan + UBSan', 'cmake', ['--build', 'build/sanitize', '-j', jobs]);
run('C tests under AddressSanitizer + UndefinedBehaviorSanitizer', 'ctest', ['--test-dir', 'build/sanitize', '--output-on-failure'],
  { env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=1', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' } });

// The thread pool and a threaded training step (tests/test_simd.c: every threaded op equals
// the single-thread one, the workers' stacks, the give-up path of a pool whose workers do not
// start) under ThreadSanitizer: any data race is fatal.
run('configure native build with ThreadSanitizer', 'cmake', ['-S', '.', '-B', 'build/tsan', '-DWF_TSAN=ON', '-DCMAKE_BUILD_TYPE=RelWithDebInfo']);
run('build test_simd with ThreadSanitizer', 'cmake', ['--build', 'build/tsan', '-j', jobs, '--target', 'test_simd']);
run('the pool and a threaded step under ThreadSanitizer', 'build/tsan/test_simd', [],
  { env: { ...process.env, TSAN_OPTIONS: 'halt_on_error=1' } });

if (hasValgrind) {
  run('valgrind: a short native training and generation', 'valgrind', ['--error-exitcode=1', '--leak-check=full',
    '--show-leak-kinds=all', '--errors-for-leak-kinds=all', '-q', 'build/native/valgrind_smoke']);
}

run('wasm build', './build.sh', []);
// tests/test_simd.c and tests/test_quant.c built with emcc -msimd128 and run in Node: each kernel's wasm SIMD
// backend against its scalar reference, then (with pthreads) the pool, its workers' stacks
// and a threaded training step in wasm
run('build the C kernel tests for wasm', './build.sh', ['tests']);
for (const t of ['simd', 'quant']) {
  run(`C kernel tests in wasm (test_${t}, SIMD, single thread)`, process.execPath, [`build/wasm-tests/test_${t}.js`]);
  run(`C kernel tests in wasm (test_${t}, SIMD, pthreads)`, process.execPath, [`build/wasm-tests/test_${t}-mt.js`]);
}
nodeTests('Node tests of the wasm build', ['tests/js/']);
// The relaxed-SIMD builds (build.sh: clang-19), which Node 20 runs only behind a flag: the C
// kernels against their scalar references, and the tests that hold for any kernel set (the
// PyTorch fixtures, training, threads, exact resume within one build), with the package told
// to insist on relaxed (WASMFORMER_SIMD). The golden records are simd128's bits: not here.
const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';
// (compiled at -O3 and linked at -O1 as the shipped relaxed modules are: the same objects)
run('build the C kernel tests for wasm relaxed SIMD', './build.sh', ['relaxed-tests']);
for (const t of ['simd', 'quant']) {
  run(`C kernel tests in wasm (test_${t}, relaxed SIMD, single thread)`, process.execPath, [RELAXED_FLAG, `build/wasm-tests/test_${t}-relaxed.js`]);
  run(`C kernel tests in wasm (test_${t}, relaxed SIMD, pthreads)`, process.execPath, [RELAXED_FLAG, `build/wasm-tests/test_${t}-relaxed-mt.js`]);
}
nodeTests('Node tests of the relaxed-SIMD builds', ['relaxed', 'fixture', 'model', 'arch', 'threads', 'checkpoint', 'recipe', 'seq2seq', 'dx',
  'worker'].map((t) => `tests/js/${t}.test.mjs`), { flags: [RELAXED_FLAG], env: { ...process.env, WASMFORMER_SIMD: 'relaxed' } });
if (hasChromium && !oldNode) nodeTests('the web page in headless Chromium', ['tests/web/']);

// libFuzzer on the hostile-input loaders, from the committed seeds (scripts/fuzz.sh;
// the long runs behind docs/ERRORS.md use the same script with more seconds)
if (hasClang) {
  run('fuzz: libFuzzer, 60 s per loader', './scripts/fuzz.sh', ['60']);
}
// memory stays flat over 400 training steps of config A and 100 model lifetimes (the
// full size: node --expose-gc tests/soak.mjs --steps 20000 --cycles 1000)
run('soak: memory stays flat', process.execPath, ['--expose-gc', 'tests/soak.mjs']);
console.log('\nnpm test: seconds per stage');
for (const [title, seconds] of timings) console.log(`${seconds.toFixed(0).padStart(6)}  ${title}`);
// the tests that skipped in every stage that ran them, each with its reason (which names
// the command that enables it: a package to install, or where the test runs)
const lines = readdirSync(SKIPS).flatMap((f) => readFileSync(join(SKIPS, f), 'utf8').split('\n'));
for (const t of neverRan(lines)) skipped.push([`${t.file ? `${relative(root, t.file)}: ` : ''}${t.name}`, t.skip]);
if (leftOut.length) console.log(`\nnpm test: --only left out ${leftOut.length} stage${leftOut.length === 1 ? '' : 's'}: ${leftOut.join('; ')}`);
if (skipped.length) {
  console.log(`\nnpm test: ${skipped.length} skipped; to run ${skipped.length === 1 ? 'it' : 'them'}:`);
  for (const [what, cmd] of skipped) console.log(`  ${what}: ${cmd}`);
}
console.log(leftOut.length ? `\nnpm test: all passed (the ${timings.length} stage${timings.length === 1 ? '' : 's'} --only chose)` : '\nnpm test: all passed');
