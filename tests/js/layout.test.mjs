// The core's layout rules (issue 12, docs/DESIGN.md), measured by scripts/layout.mjs: no
// #include cycle among src/*.c and src/*.h, also counting x.c and x.h as one module and a call
// as an edge to the module that defines it; no import cycle in the JS package; no core file
// over 600 lines; the public header under MAX_HEADER_LINES (scripts/layout.mjs); one source list naming exactly the sources.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  HEADER, MAX_CORE_LINES, MAX_HEADER_LINES, callGraph, coreFiles, cycles, dependencyGraph, importGraph, includeGraph,
  lineCounts, listedSources, moduleGraph,
} from '../../scripts/layout.mjs';

test('no include cycle among the core\'s files, nor among its modules (x.c with x.h)', () => {
  const g = includeGraph();
  assert.ok(g.size > 40 && [...g.values()].some((inc) => inc.includes('internal.h')), 'the include graph was read');
  assert.deepEqual(cycles(g), []);
  assert.deepEqual(cycles(moduleGraph(g)), []);
});

test('no cycle among the core\'s modules counting calls, nor among the JS package\'s imports', () => {
  const calls = callGraph();
  // the call graph was read: the handle's file calls the BPE, a file format the model's init
  assert.ok(calls.get('tokenizer.c').includes('bpe.c') && calls.get('checkpoint.c').includes('model.c'));
  assert.ok(!calls.get('bpe.c').includes('tokenizer.c'), 'bpe.c calls nothing of the handle');
  assert.deepEqual(cycles(dependencyGraph()), []);
  const js = importGraph();
  assert.ok(js.get('handle.js').includes('finetune.js') && js.get('api.js').includes('model.js'), 'the import graph was read');
  assert.deepEqual(cycles(js), []);
});

test('the cycle finder finds cycles, of files and of modules', () => {
  const g = new Map([['a.h', ['b.h']], ['b.h', ['c.h']], ['c.h', ['a.h']], ['d.c', ['a.h']]]);
  assert.deepEqual(cycles(g), ['a.h -> b.h -> c.h -> a.h']);
  const m = moduleGraph(new Map([['block.c', ['model.h']], ['model.h', ['block.h']], ['block.h', []]]));
  assert.deepEqual(cycles(m), ['block -> model -> block']);
  // a header shared by the files it declares, one of which calls back: a module cycle by calls
  const d = dependencyGraph(new Map([['tok.c', ['tok.h']], ['tok.h', []], ['bpe.c', ['tok.h']]]), new Map([['tok.c', ['bpe.c']], ['bpe.c', []]]));
  assert.deepEqual(cycles(d), ['tok -> bpe -> tok']);
});

test(`no core source file over ${MAX_CORE_LINES} lines; the public header under ${MAX_HEADER_LINES}`, () => {
  const n = lineCounts();
  const long = [...n].filter(([f, k]) => f !== HEADER && k > MAX_CORE_LINES).map(([f, k]) => `${f}: ${k}`);
  assert.deepEqual(long, []);
  assert.ok(n.get(HEADER) < MAX_HEADER_LINES, `${HEADER} has ${n.get(HEADER)} lines`);
  assert.ok(n.get('src/model.c') > 100, 'the files were counted');
});

test('src/sources.txt (CMakeLists.txt and build.sh read it) lists exactly the .c files of src/', () => {
  const listed = listedSources(), present = coreFiles().filter((f) => f.endsWith('.c'));
  assert.deepEqual([...listed].sort(), present);
  assert.equal(new Set(listed).size, listed.length, 'a file listed twice');
});
