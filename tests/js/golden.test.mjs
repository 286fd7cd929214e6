// The wasm build against its golden record (tests/golden/README.md): every architecture
// trained 50 steps, generated from, decoded and saved through the package's public API
// (tests/golden/record.mjs) must give tests/golden/wasm.json exactly, field by field: the
// losses, gradient norms, learning rates, texts and the SHA-256 of every file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { format, record } from '../golden/record.mjs';
import { describe, firstDifference } from '../golden/compare.mjs';

test('the wasm build reproduces tests/golden/wasm.json exactly', async () => {
  const want = JSON.parse(readFileSync(new URL('../golden/wasm.json', import.meta.url), 'utf8'));
  const got = JSON.parse(format(await record())); // through JSON, as the file went
  const d = firstDifference(want, got);
  assert.ok(!d, d && `${describe(d)}\nA change meant to keep behaviour must not change the record; one that `
    + 'changes numerics on purpose re-records in the same commit: node tests/golden/record.mjs > tests/golden/wasm.json '
    + '(tests/golden/README.md)');
});
