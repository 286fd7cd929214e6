#!/usr/bin/env node
// npm test: everything, from a fresh clone. Native library + C tests (ctest), the wasm
// build, the Node tests of the wasm build, then the web page in headless Chromium. Each
// stage says what it runs; the first failure stops the run with a non-zero exit code.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);

function run(title, cmd, args, opts = {}) {
  console.log(`\n== ${title}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
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

// npm dependencies (dev tools for the browser, package and bench tests)
if (existsSync('package-lock.json') && !existsSync('node_modules')) run('npm dependencies', 'npm', ['ci']);

for (const tool of ['cmake', 'cc']) {
  if (!have(tool)) {
    console.error(`npm test: ${tool} is missing. On Debian 12: sudo apt-get install -y build-essential cmake`);
    process.exit(1);
  }
}
const jobs = String(Math.max(1, Math.min(4, (await import('node:os')).availableParallelism?.() ?? 2)));
run('configure native build', 'cmake', ['-S', '.', '-B', 'build/native', '-DCMAKE_BUILD_TYPE=Release']);
run('build native library and tests', 'cmake', ['--build', 'build/native', '-j', jobs]);
run('C tests', 'ctest', ['--test-dir', 'build/native', '--output-on-failure']);
run('wasm build', './build.sh', []);
run('Node tests of the wasm build', process.execPath, ['--test', 'tests/js/']);
run('the web page in headless Chromium', process.execPath, ['--test', 'tests/web/']);
console.log('\nnpm test: all passed');
