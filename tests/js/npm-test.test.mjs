// npm test itself (scripts/test.mjs): every tool is checked before the first stage, and the
// last lines list what skipped, stages and single tests alike, with what enables each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { neverRan } from '../../scripts/skip-reporter.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

test('a machine without Chromium, valgrind, clang or script: each is checked (and missing) before the first stage, and listed at the end', (t) => {
  // a PATH with node, sh, cmake and cc only (no apt-get either, so nothing is installed)
  const bin = mkdtempSync(join(tmpdir(), 'wf-path-'));
  t.after(() => rmSync(bin, { recursive: true, force: true }));
  for (const cmd of ['sh', 'cmake', 'cc']) symlinkSync(execFileSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim(), join(bin, cmd));
  symlinkSync(process.execPath, join(bin, 'node'));
  const env = { ...process.env, PATH: bin };
  delete env.CI;
  const r = spawnSync(process.execPath, ['scripts/test.mjs', '--only', '^$'], { cwd: ROOT, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.split('\n');
  const at = (re) => lines.findIndex((l) => re.test(l));
  const firstStage = at(/^== .*: left out \(--only\)$/);
  assert.ok(firstStage > 0, r.stdout);
  for (const re of [/^== valgrind: .*: SKIPPED/, /^== the web page in headless Chromium: SKIPPED/, /^== fuzz: .*: SKIPPED/, /^== the CLI on a terminal \(script\): missing/]) {
    const i = at(re);
    assert.ok(i >= 0 && i < firstStage, `${re} before the first stage (line ${i}, first stage ${firstStage})`);
  }
  assert.ok(at(/^== Node tests of the wasm build: left out/) > at(/Chromium: SKIPPED/), 'Chromium is checked before the Node tests (package.test.mjs needs it)');
  const list = r.stdout.slice(r.stdout.lastIndexOf('npm test: 3 skipped; to run them:'));
  assert.match(list, /^ {2}the web page in headless Chromium: sudo apt-get install -y chromium$/m);
  assert.match(list, /^ {2}valgrind: a short native training and generation: sudo apt-get install -y valgrind$/m);
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
