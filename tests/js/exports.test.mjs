// The exported-function list (src/exports.txt) against the public header: every WF_API
// function is exported, and nothing else is (apart from the allocator); and the package
// calls them from one file, src/js/runtime.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';

const EXTRA = new Set(['malloc', 'free']);

test('src/exports.txt lists exactly the WF_API functions of include/wasmformer.h', () => {
  const header = readFileSync('include/wasmformer.h', 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
  const declared = new Set();
  for (const m of header.matchAll(/WF_API\s+[^;(]*?\b(wf_\w+)\s*\(/g)) declared.add(m[1]);
  const exported = readFileSync('src/exports.txt', 'utf8').split('\n').map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  assert.ok(declared.size > 20, `parsed only ${declared.size} declarations from the header`);
  const missing = [...declared].filter((f) => !exported.includes(f));
  const extra = exported.filter((f) => !declared.has(f) && !EXTRA.has(f));
  assert.deepEqual(missing, [], 'declared in the header but not exported');
  assert.deepEqual(extra, [], 'exported but not declared in the header');
  assert.equal(new Set(exported).size, exported.length, 'duplicates in src/exports.txt');
});

test('the package calls the module\'s exports from src/js/runtime.js only, and each one it calls exists', () => {
  const exported = new Set(readFileSync('src/exports.txt', 'utf8').split('\n').map((l) => l.trim()));
  const callers = [];
  for (const f of readdirSync('src/js').filter((n) => n.endsWith('.js'))) {
    const calls = [...readFileSync(`src/js/${f}`, 'utf8').matchAll(/\bM\._(\w+)\(/g)].map((m) => m[1]);
    if (calls.length && f !== 'runtime.js') callers.push(`${f}: ${[...new Set(calls)].join(', ')}`);
    for (const c of calls) assert.ok(exported.has(c), `${f} calls _${c}, which src/exports.txt does not export`);
  }
  assert.deepEqual(callers, [], 'files other than runtime.js that call into the module');
});
