// npm test itself (scripts/test.mjs): every tool is checked before the first stage, and the
// last lines list what skipped, stages and single tests alike, with what enables each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { neverRan } from '../../scripts/skip-reporter.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

test('a machine without Chromium, valgrind, clang, script, 32-bit libraries or Node 24: each is checked (and missing) before the first stage, and listed at the end', (t) => {
  // a PATH with node, sh, cmake and cc only (no apt-get either, so nothing is installed), and no Node 24 where WF_NODE24 says
  const bin = mkdtempSync(join(tmpdir(), 'wf-path-'));
  t.after(() => rmSync(bin, { recursive: true, force: true }));
  for (const cmd of ['sh', 'cmake', 'cc']) symlinkSync(execFileSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim(), join(bin, cmd));
  symlinkSync(process.execPath, join(bin, 'node'));
  const env = { ...process.env, PATH: bin, WF_NODE24: join(bin, 'node24') };
  delete env.CI;
  const r = spawnSync(process.execPath, ['scripts/test.mjs', '--only', '^$'], { cwd: ROOT, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.split('\n');
  const at = (re) => lines.findIndex((l) => re.test(l));
  const firstStage = at(/^== .*: left out \(--only\)$/);
  assert.ok(firstStage > 0, r.stdout);
  for (const re of [/^== valgrind: .*: SKIPPED/, /^== the web page in headless Chromium: SKIPPED/, /^== Node tests of the wasm build under Node 24: SKIPPED/,
    /^== fuzz: .*: SKIPPED/, /^== the CLI on a terminal \(script\): missing/]) {
    const i = at(re);
    assert.ok(i >= 0 && i < firstStage, `${re} before the first stage (line ${i}, first stage ${firstStage})`);
  }
  assert.ok(at(/^== Node tests of the wasm build: left out/) > at(/Chromium: SKIPPED/), 'Chromium is checked before the Node tests (package.test.mjs needs it)');
  const list = r.stdout.slice(r.stdout.lastIndexOf('npm test: 5 skipped; to run them:'));
  assert.match(list, /^ {2}the web page in headless Chromium: sudo apt-get install -y chromium$/m);
  assert.match(list, /^ {2}32-bit build \(-m32\) with ASan \+ UBSan: C tests and fuzz replays: sudo apt-get install -y gcc-multilib$/m);
  assert.match(list, /^ {2}valgrind: a short native training and generation: sudo apt-get install -y valgrind$/m);
  assert.match(list, /^ {2}Node tests of the wasm build under Node 24: sudo npm install --prefix \/opt\/node24 node@24 \(or WF_NODE24=.*\)$/m);
  assert.match(list, /npm test: all passed \(the 0 stages --only chose\)\n$/);
});

test('the skip reporter: a test that skipped in every stage is listed with its reason, once; one that another stage ran is not', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wf-skips-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'a.test.mjs'), `import { test } from 'node:test';
test('needs a browser', (t) => { t.skip('/usr/bin/chromium not installed (apt-get install -y chromium)'); });
test('needs a flag', { skip: !process.env.FLAG && 'needs FLAG=1' }, () => {});
test('runs', () => {});
`);
  const report = (n, more = {}) => {
    const out = join(dir, `${n}.jsonl`);
    const env = { ...process.env, ...more };
    delete env.NODE_TEST_CONTEXT; // a node --test run inside this one would report to it, not to its reporters
    execFileSync(process.execPath, ['--test', '--test-reporter', 'tap', '--test-reporter-destination', 'stdout', '--test-reporter',
      join(ROOT, 'scripts/skip-reporter.mjs'), '--test-reporter-destination', out, join(dir, 'a.test.mjs')], { env, stdio: 'ignore' });
    return readFileSync(out, 'utf8').split('\n');
  };
  const first = report(1), second = report(2, { FLAG: '1' });
  assert.deepEqual(neverRan(first).map((s) => [s.name, s.skip]), [['needs a browser', '/usr/bin/chromium not installed (apt-get install -y chromium)'], ['needs a flag', 'needs FLAG=1']]);
  assert.deepEqual(neverRan([...first, ...second]).map((s) => s.name), ['needs a browser'], 'the flag\'s test ran in the second stage');
  assert.equal(neverRan(first)[0].file, join(dir, 'a.test.mjs'));
});

/** A folder for a PATH of its own: links to the real commands named, and scripts (name ->
 * bash body) standing in for others. */
function fakePath(t, real, scripts = {}) {
  const bin = mkdtempSync(join(tmpdir(), 'wf-path-'));
  t.after(() => rmSync(bin, { recursive: true, force: true }));
  for (const cmd of real) symlinkSync(execFileSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim(), join(bin, cmd));
  for (const [name, body] of Object.entries(scripts)) writeFileSync(join(bin, name), `#!/bin/bash\n${body}\n`, { mode: 0o755 });
  return bin;
}

test('a machine without a C compiler or cmake: nothing runs, and every command that enables something is listed', (t) => {
  const bin = fakePath(t, ['sh']);
  symlinkSync(process.execPath, join(bin, 'node'));
  const env = { ...process.env, PATH: bin };
  delete env.CI;
  const r = spawnSync(process.execPath, ['scripts/test.mjs', '--only', '^$'], { cwd: ROOT, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  assert.equal(r.status, 1, r.stdout);
  assert.doesNotMatch(r.stdout, /left out \(--only\)/, 'no stage began');
  assert.match(r.stderr, /^npm test: nothing runs without the native build; missing: the native build \(a C compiler\); the native build \(cmake\)\. To run every stage:$/m);
  for (const line of ['the native build (a C compiler): sudo apt-get install -y build-essential', 'the native build (cmake): sudo apt-get install -y cmake',
    'the web page in headless Chromium: sudo apt-get install -y chromium', 'valgrind: a short native training and generation: sudo apt-get install -y valgrind',
    'fuzz: libFuzzer, 60 s per loader: sudo apt-get install -y clang-14 libclang-rt-14-dev']) {
    assert.ok(r.stderr.includes(`\n  ${line}\n`), `${line} in\n${r.stderr}`);
  }
});

test('as root without a terminal, a missing C compiler and cmake are installed with apt-get, and the run goes on', { skip: process.getuid?.() !== 0 && 'runs as root only (it checks the path npm test takes as root: sudo node --test tests/js/npm-test.test.mjs)' }, (t) => {
  // apt-get here links the real cc and cmake into the PATH when asked for their packages
  const log = join(mkdtempSync(join(tmpdir(), 'wf-apt-')), 'apt.log');
  const [cc, cmake, ln] = ['cc', 'cmake', 'ln'].map((c) => execFileSync('sh', ['-c', `command -v ${c}`], { encoding: 'utf8' }).trim());
  const bin = fakePath(t, ['sh'], {
    'apt-get': `echo "$*" >> ${log}
case "$*" in *build-essential*) ${ln} -sf ${cc} "\${0%/*}/cc";; esac
case "$*" in *" cmake"*) ${ln} -sf ${cmake} "\${0%/*}/cmake";; esac`,
  });
  symlinkSync(process.execPath, join(bin, 'node'));
  const env = { ...process.env, PATH: bin };
  delete env.CI;
  const r = spawnSync(process.execPath, ['scripts/test.mjs', '--only', '^$'], { cwd: ROOT, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  const asked = readFileSync(log, 'utf8');
  assert.match(asked, /^install -y -q --no-install-recommends build-essential$/m);
  assert.match(asked, /^install -y -q --no-install-recommends cmake$/m);
  assert.match(r.stdout, /== the native build \(a C compiler\): installing build-essential \(apt-get, as root without a terminal\)/);
  assert.match(r.stdout, /npm test: all passed/);
});

test('node_modules without a dependency of package.json, or older than package-lock.json: npm ci first', (t) => {
  // a copy of the script and the package files; npm here only says what it was asked
  const root = mkdtempSync(join(tmpdir(), 'wf-deps-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'scripts'));
  for (const f of ['scripts/test.mjs', 'scripts/skip-reporter.mjs', 'package.json', 'package-lock.json']) writeFileSync(join(root, f), readFileSync(join(ROOT, f)));
  const deps = Object.keys(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).devDependencies);
  assert.ok(deps.includes('axe-core'), deps.join());
  for (const d of deps.filter((x) => x !== 'axe-core')) {
    mkdirSync(join(root, 'node_modules', d), { recursive: true });
    writeFileSync(join(root, 'node_modules', d, 'package.json'), '{}');
  }
  writeFileSync(join(root, 'node_modules', '.package-lock.json'), '{}');
  const log = join(root, 'npm.log');
  const bin = fakePath(t, ['sh', 'cc', 'cmake'], { npm: `echo "$*" >> ${log}` });
  symlinkSync(process.execPath, join(bin, 'node'));
  const env = { ...process.env, PATH: bin };
  delete env.CI;
  const go = () => spawnSync(process.execPath, ['scripts/test.mjs', '--only', '^$'], { cwd: root, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  let r = go();
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^== npm dependencies \(node_modules lacks axe-core\): npm ci$/m);
  assert.equal(readFileSync(log, 'utf8'), 'ci\n');
  // all there, and installed after the lock changed: nothing to do
  mkdirSync(join(root, 'node_modules', 'axe-core'));
  writeFileSync(join(root, 'node_modules', 'axe-core', 'package.json'), '{}');
  utimesSync(join(root, 'package-lock.json'), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
  r = go();
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /npm dependencies/);
  // the lock changed after the last install (a pull brought new dependencies): npm ci
  utimesSync(join(root, 'package-lock.json'), new Date(), new Date(Date.now() + 60_000));
  r = go();
  assert.match(r.stdout, /^== npm dependencies \(package-lock\.json changed after the last install\): npm ci$/m);
  assert.equal(readFileSync(log, 'utf8'), 'ci\nci\n');
});

test('.ci/run with Debian 12\'s Node.js 18 or with Node.js 20: Node.js 22 from the npm registry into a private prefix before npm test, or a clear refusal; Node.js 24 too', (t) => {
  for (const [from, installs] of [[18, true], [20, true], [18, false]]) {
    // a copy of .ci/run, whose npm test must not run this repository's
    const root = mkdtempSync(join(tmpdir(), 'wf-ci-'));
    t.after(() => rmSync(root, { recursive: true, force: true }));
    mkdirSync(join(root, '.ci'));
    writeFileSync(join(root, '.ci/run'), readFileSync(join(ROOT, '.ci/run')), { mode: 0o755 });
    const log = join(root, 'log');
    const stub = `echo "$(basename "$0") $*" >> ${log}; echo 1.0`;
    // the machine's node is ${from}; "npm install --prefix P node@22" (when it works) puts a
    // Node.js 22 at P/node_modules/node/bin/node, as the registry's package does. Never -g:
    // where the machine's node sits in npm's global prefix, npm refuses to overwrite it.
    const node22 = '#!/bin/bash\ncase "$1" in -p) echo 22;; --version) echo v22.0.0;; esac\n';
    const bin = fakePath(t, ['bash', 'dirname', 'head', 'basename', 'grep', 'env', 'mkdir', 'chmod'], {
      'apt-get': stub, emcc: stub, cmake: stub, chromium: stub, valgrind: stub, 'clang-14': stub,
      node: `case "$1" in -p) echo ${from};; --version) echo v${from}.0.0;; esac`,
      npm: `echo "npm $*" >> ${log}
case "$*" in *"install -g"*) exit 1;; *node@22*) ${installs ? `mkdir -p "$3/node_modules/node/bin" && printf '${node22}' > "$3/node_modules/node/bin/node" && chmod +x "$3/node_modules/node/bin/node"` : 'exit 1'};; esac
env | grep '^WF_NODE24=' >> ${log}; true`,
    });
    const prefix = join(root, 'node24'), prefix22 = join(root, 'node22');
    const r = spawnSync(join(root, '.ci/run'), [], { cwd: root, env: { PATH: bin, WF_NODE24_PREFIX: prefix, WF_NODE22_PREFIX: prefix22 }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    const lines = readFileSync(log, 'utf8').split('\n');
    const npm = lines.filter((l) => l.startsWith('npm '));
    if (installs) {
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(npm, [`npm install --prefix ${prefix22} --no-audit --no-fund node@22`, `npm install --prefix ${prefix} --no-audit --no-fund node@24`, 'npm test']);
      assert.match(r.stdout, /^v22\.0\.0$/m, 'node --version says 22 before npm test');
      // npm test is told where Node 24 is (scripts/test.mjs: WF_NODE24)
      assert.equal(lines[lines.indexOf('npm test') + 1], `WF_NODE24=${prefix}/node_modules/node/bin/node`);
    } else {
      assert.equal(r.status, 1, r.stdout);
      assert.deepEqual(npm, [`npm install --prefix ${prefix22} --no-audit --no-fund node@22`], 'npm test never runs on an older Node.js');
      assert.match(r.stderr, /^\.ci\/run: CI runs npm test on Node\.js 22 and found v18\.0\.0 at .*node; installing node@22 from the npm registry did not give one: install Node\.js 22 and run \.ci\/run again$/m);
    }
  }
});
