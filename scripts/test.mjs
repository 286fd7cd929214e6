#!/usr/bin/env node
// npm test: everything, from a fresh clone. Native library + C tests (ctest), the C example
// (a few seconds of training), the native golden record, the C tests again under
// AddressSanitizer + UndefinedBehaviorSanitizer (and built for 32 bits, -m32, as wasm's
// size_t), the pool under ThreadSanitizer, a short native run under valgrind, the wasm build,
// the C kernel tests in wasm, the C example in wasm, the Node tests of the wasm build (again
// under Node 24), the web page in headless Chromium, a minute of fuzzing per loader (and 15 s
// at 32 bits), and a memory soak. Each stage says what it runs; the first failure stops the
// run with a non-zero exit code.
// Every tool a stage or a test needs (a C compiler and cmake, valgrind, Chromium, clang,
// script, the 32-bit C and C++ libraries, a Node 24 binary) is checked before the first
// stage: a missing one (but Node 24, which .ci/run installs) is installed when this runs as
// root without a terminal on Debian (as build.sh installs Emscripten); otherwise what needs
// it is skipped. The last lines list every skipped stage, and every test that skipped in
// each stage that ran it (a tool or PyTorch missing, the native golden record on another
// machine's fingerprint), with the command that enables it. Without the native build's
// tools nothing runs, and in CI (CI=true) any missing tool fails the run: both list every
// command that enables what is missing, then stop. node_modules is installed (npm ci) when it is missing,
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
function tool(title, cmds, install, { stage = true, required = false, probe = null } = {}) {
  const there = () => cmds.some(have) && (!probe || probe());
  if (there()) return true;
  const msg = `"${title}" needs ${cmds.join(' or ')}: sudo apt-get install -y ${install}`;
  if (process.getuid?.() === 0 && !process.stdin.isTTY && have('apt-get')) {
    console.log(`\n== ${title}: installing ${install} (apt-get, as root without a terminal)`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const ok = spawnSync('apt-get', ['update', '-q'], { stdio: 'inherit', env }).status === 0 &&
      spawnSync('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...install.split(' ')], { stdio: 'inherit', env }).status === 0;
    if (ok && there()) return true;
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

/** A folder's test files, named: Node 22 and later take files and globs after --test, not
 * folders (Node 20 searched a folder). */
const testFiles = (dir) => (existsSync(dir) ? readdirSync(dir) : []).filter((f) => f.endsWith('.test.mjs')).sort().map((f) => join(dir, f));

/** node --test over files, each test's outcome also written for the list of skips at the end
 * (node: the binary, Node 24's for its stage). */
let reports = 0;
function nodeTests(title, files, { flags = [], node = process.execPath, ...opts } = {}) {
  const report = join(SKIPS, `node-${++reports}.jsonl`);
  run(title, node, [...flags, '--test', '--test-reporter', process.stdout.isTTY ? 'spec' : 'tap', '--test-reporter-destination', 'stdout',
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
  const enable = 'run npm test with Node.js 22 or later (on Debian 12: sudo npm install --prefix /opt/node22 node@22, then put /opt/node22/node_modules/node/bin first on the PATH)';
  console.log(`\n== the web page in headless Chromium: ${process.env.CI ? 'MISSING' : 'SKIPPED'} (${msg})`);
  // listed beside Chromium's command when that is missing too: both are needed
  (process.env.CI ? lacking : skipped).push(['the web page in headless Chromium', enable]);
}
// The Node tests run again under Node 24 (CI's Node is 22; 24 is the newer LTS line): a
// private binary, so that the machine's node stays as it is. WF_NODE24 names it, else the
// one `npm install --prefix /opt/node24 node@24` puts there (.ci/run does).
const NODE24_TITLE = 'Node tests of the wasm build under Node 24';
const node24 = (() => {
  const bin = process.env.WF_NODE24 || '/opt/node24/node_modules/node/bin/node';
  const v = existsSync(bin) ? spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout?.trim() : null;
  if (v?.startsWith('v24.')) return bin;
  const msg = `"${NODE24_TITLE}" needs a Node 24 binary at ${bin}${v ? `, which is ${v}` : ''}`;
  const enable = 'sudo npm install --prefix /opt/node24 node@24 (or WF_NODE24=/path/to/node24/bin/node)';
  console.log(`\n== ${NODE24_TITLE}: ${process.env.CI ? 'MISSING' : 'SKIPPED'} (${msg}: ${enable})`);
  (process.env.CI ? lacking : skipped).push([NODE24_TITLE, enable]);
  return null;
})();
const hasClang = tool('fuzz: libFuzzer, 60 s per loader', ['clang-14', 'clang'], 'clang-14 libclang-rt-14-dev');
// 32-bit builds (-m32), where size_t is as narrow as in wasm: the C tests under the sanitizers
// (gcc-multilib: the i386 C library, libasan and libubsan), and libFuzzer's targets (libFuzzer
// is C++: lib32stdc++-12-dev). Each probed by building and running a program: no command tells.
const compiles = (cc, flags, source, args = []) => {
  const dir = mkdtempSync(join(tmpdir(), 'wf-m32-'));
  try {
    return spawnSync(cc, [...flags, '-x', 'c', '-', '-o', join(dir, 'a.out')], { input: source, stdio: ['pipe', 'ignore', 'ignore'] }).status === 0
      && spawnSync(join(dir, 'a.out'), args, { stdio: 'ignore', timeout: 60000, env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=0' } }).status === 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};
// Some kernels run no 32-bit program at all (Exec format error): scripts/binfmt-i386.sh then
// hands them to qemu-user (as root without a terminal, as apt-get installs here; otherwise it
// only says so).
const runs32 = () => compiles('cc', ['-m32', '-fsanitize=address,undefined'], 'int main(void) { return sizeof(void *) == 4 ? 0 : 1; }');
const mayInstall = process.getuid?.() === 0 && !process.stdin.isTTY;
const has32 = tool('32-bit build (-m32) with ASan + UBSan: C tests and fuzz replays', ['cc'], 'gcc-multilib', {
  probe: () => runs32()
    || (spawnSync('bash', ['scripts/binfmt-i386.sh', ...(mayInstall ? [] : ['--check'])], { stdio: 'inherit' }).status === 0 && runs32()),
});
// i386 programs run through qemu-user (scripts/binfmt-i386.sh registered it): qemu emulates
// no AVX-512, and AddressSanitizer under it is slow (test_model took over 3 minutes with it, 25 s
// without), so the 32-bit C tests there are built for plain SSE2 with UndefinedBehaviorSanitizer
// alone, and the 32-bit fuzzing is left out (listed at the end)
const emulated32 = has32 && /^enabled/.test((() => { try { return readFileSync('/proc/sys/fs/binfmt_misc/qemu-i386', 'utf8'); } catch { return ''; } })());
if (emulated32) {
  console.log('\n== 32-bit programs run through qemu-i386 (this kernel runs none itself): the 32-bit C tests with UBSan alone, no 32-bit fuzzing');
  skipped.push(['fuzz at 32 bits: libFuzzer -m32 (32-bit programs run only through qemu-user here)', 'a machine whose kernel runs 32-bit programs']);
}
const hasFuzz32 = hasClang && has32 && !emulated32 && tool('fuzz at 32 bits: libFuzzer -m32, 15 s per loader', ['clang-14', 'clang'], 'lib32stdc++-12-dev', {
  probe: () => compiles(have('clang-14') ? 'clang-14' : 'clang', ['-m32', '-fsanitize=fuzzer,address,undefined'],
    '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }', ['-runs=1']),
});
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
// The C example (examples/c/): a time budget's training run in C, samples and roll-back,
// for a few seconds; again in wasm below
run('the C example: 3 s of training natively', 'build/native/example_train', ['--seconds', '3', '--eval', '40']);
run('golden record: native', process.execPath, ['tests/golden/check-native.mjs'],
  { env: { ...process.env, WF_TEST_SKIPS: join(SKIPS, 'golden.jsonl') } });

// The same C tests, fuzz regressions included, with every memory error, leak and undefined
// behaviour fatal (the build's -fno-sanitize-recover=all).
run('configure native build with ASan + UBSan', 'cmake', ['-S', '.', '-B', 'build/sanitize', '-DWF_SANITIZE=ON', '-DCMAKE_BUILD_TYPE=RelWithDebInfo']);
run('build with ASan + UBSan', 'cmake', ['--build', 'build/sanitize', '-j', jobs]);
run('C tests under AddressSanitizer + UndefinedBehaviorSanitizer', 'ctest', ['--test-dir', 'build/sanitize', '--output-on-failure'],
  { env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=1', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' } });

// The same C tests and fuzz replays built for 32 bits (-m32): size_t is 32 bits there, as in
// wasm, so a count that becomes bytes and wraps at 4 GB wraps here too, under the sanitizers
// (issue 25). test_gradcheck is left to the native builds (CMakeLists.txt: WF_M32).
if (has32) {
  const san = emulated32 ? 'UBSan' : 'ASan + UBSan';
  run(`configure 32-bit build (-m32) with ${san}`, 'cmake', ['-S', '.', '-B', 'build/m32', '-DWF_M32=ON', '-DWF_SANITIZE=ON',
    '-DCMAKE_BUILD_TYPE=RelWithDebInfo', ...(emulated32 ? ['-DWF_SANITIZE_ADDRESS=OFF', '-DWF_NATIVE_ARCH=OFF'] : ['-DWF_SANITIZE_ADDRESS=ON', '-DWF_NATIVE_ARCH=ON'])]);
  run(`build 32-bit with ${san}`, 'cmake', ['--build', 'build/m32', '-j', jobs]);
  run(`C tests at 32 bits under ${emulated32 ? 'UndefinedBehaviorSanitizer, through qemu-i386' : 'AddressSanitizer + UndefinedBehaviorSanitizer'}`, 'ctest', ['--test-dir', 'build/m32', '--output-on-failure', '-j', jobs],
    { env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=1', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' } });
}

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
// examples/c/train.c in wasm, run by Node (tests/js/example.test.mjs holds its losses to the package's)
run('build the C example for wasm', './build.sh', ['example']);
run('the C example in wasm (Node): 3 s of training', process.execPath, ['build/wasm-tests/example_train.js', '--seconds', '3', '--eval', '40']);
// Each test that depends on the kernel set says which it wants (the golden record is
// simd128's bits), so this passes whichever set the engine picks: simd128 on Node 20,
// relaxed on Node 22 and 24.
nodeTests('Node tests of the wasm build', testFiles('tests/js'));
if (node24) nodeTests(NODE24_TITLE, testFiles('tests/js'), { node: node24 });
// The relaxed-SIMD builds (build.sh: clang-19): the C kernels against their scalar
// references, and the tests that hold for any kernel set (the PyTorch fixtures, training,
// threads, exact resume within one build), with the package told to insist on relaxed
// (WASMFORMER_SIMD). Node 20 runs relaxed SIMD only behind a flag, which Node 22 and later
// refuse as a bad option (they have it on). The golden records are simd128's bits: not here.
const RELAXED_FLAG = ['--experimental-wasm-relaxed-simd'].filter((f) => spawnSync(process.execPath, [f, '-e', ''], { stdio: 'ignore' }).status === 0);
// (compiled at -O3 and linked at -O1 as the shipped relaxed modules are: the same objects)
run('build the C kernel tests for wasm relaxed SIMD', './build.sh', ['relaxed-tests']);
for (const t of ['simd', 'quant']) {
  run(`C kernel tests in wasm (test_${t}, relaxed SIMD, single thread)`, process.execPath, [...RELAXED_FLAG, `build/wasm-tests/test_${t}-relaxed.js`]);
  run(`C kernel tests in wasm (test_${t}, relaxed SIMD, pthreads)`, process.execPath, [...RELAXED_FLAG, `build/wasm-tests/test_${t}-relaxed-mt.js`]);
}
nodeTests('Node tests of the relaxed-SIMD builds', ['relaxed', 'fixture', 'model', 'arch', 'threads', 'checkpoint', 'recipe', 'seq2seq', 'dx',
  'worker'].map((t) => `tests/js/${t}.test.mjs`), { flags: RELAXED_FLAG, env: { ...process.env, WASMFORMER_SIMD: 'relaxed' } });
if (hasChromium && !oldNode) nodeTests('the web page in headless Chromium', testFiles('tests/web'));
// the packed package in the settings a JavaScript project builds in (tests/bundlers/): Vite
// (build and dev server), webpack 5, esbuild (browser and --platform=node), plain modules;
// threads and relaxed SIMD in Chromium where the page is cross-origin isolated
if (hasChromium && !oldNode) nodeTests('bundlers: Vite, webpack, esbuild, plain modules, in headless Chromium', testFiles('tests/bundlers'));

// libFuzzer on the hostile-input loaders, from the committed seeds (scripts/fuzz.sh;
// the long runs behind docs/ERRORS.md use the same script with more seconds)
if (hasClang) {
  run('fuzz: libFuzzer, 60 s per loader', './scripts/fuzz.sh', ['60']);
}
// and built for 32 bits, where wasm's size arithmetic is (scripts/fuzz.sh --m32)
if (hasFuzz32) {
  run('fuzz at 32 bits: libFuzzer -m32, 15 s per loader', './scripts/fuzz.sh', ['--m32', '15']);
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
