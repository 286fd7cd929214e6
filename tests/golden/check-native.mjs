#!/usr/bin/env node
// The native golden check (tests/golden/README.md): builds and runs golden_record
// (tests/golden/record.c) in build/native and compares its record with
// tests/golden/native.json field by field, on a machine with the recorded fingerprint
// (compiler, CPU, instruction sets: native numerics depend on them, e.g. on FMA).
// Elsewhere it says so and passes (and, given WF_TEST_SKIPS, appends a line for npm test's
// list of skips). npm test runs it after the C tests.
//
// Usage: node tests/golden/check-native.mjs
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, firstDifference } from './compare.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) {
    console.error(`golden native: ${cmd} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`})`);
    process.exit(1);
  }
  return r.stdout;
}

if (!existsSync(`${root}/build/native/CMakeCache.txt`)) run('cmake', ['-S', '.', '-B', 'build/native', '-DCMAKE_BUILD_TYPE=Release']);
run('cmake', ['--build', 'build/native', '--target', 'golden_record']);
const got = JSON.parse(run('build/native/golden_record', []));
const want = JSON.parse(readFileSync(new URL('native.json', import.meta.url), 'utf8'));
if (got.fingerprint !== want.fingerprint) {
  const why = `recorded on ${want.fingerprint}, this machine is ${got.fingerprint}`;
  console.log(`golden native: skipped: ${why}`);
  // npm test (scripts/test.mjs) lists it among the skipped at the end
  if (process.env.WF_TEST_SKIPS) {
    appendFileSync(process.env.WF_TEST_SKIPS, `${JSON.stringify({ file: null, name: 'golden record: native (tests/golden/check-native.mjs)',
      skip: `${why}: it runs on a machine of that fingerprint (tests/golden/README.md)` })}\n`);
  }
  process.exit(0);
}
const d = firstDifference(want, got);
if (d) {
  console.error(`golden native: differs from tests/golden/native.json at ${describe(d)}`);
  console.error('A change meant to keep behaviour must not change the record; one that changes numerics on purpose '
    + 're-records in the same commit (tests/golden/README.md).');
  process.exit(1);
}
console.log(`golden native: ${got.cases.length} cases equal tests/golden/native.json (${got.fingerprint})`);
