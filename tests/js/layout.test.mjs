// The core's layout rules (issue 12, docs/DESIGN.md), measured by scripts/layout.mjs: no
// #include cycle among src/*.c and src/*.h, also counting x.c and x.h as one module; no core
// file over 600 lines; the public header under 250; one source list naming exactly the sources.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  HEADER, MAX_CORE_LINES, MAX_HEADER_LINES, coreFiles, cycles, includeGraph, lineCounts, listedSources, moduleGraph,
} from '../../scripts/layout.mjs';

test('no include cycle among the core\'s files, nor among its modules (x.c with x.h)', () => {
  const g = includeGraph();
  assert.ok(g.size > 40 && [...g.values()].some((inc) => inc.includes('internal.h')), 'the include graph was read');
  assert.deepEqual(cycles(g), []);
  assert.deepEqual(cycles(moduleGraph(g)), []);
});

test('the cycle finder finds cycles, of files and of modules', () => {
  const g = new Map([['a.h', ['b.h']], ['b.h', ['c.h']], ['c.h', ['a.h']], ['d.c', ['a.h']]]);
  assert.deepEqual(cycles(g), ['a.h -> b.h -> c.h -> a.h']);
  const m = moduleGraph(new Map([['block.c', ['model.h']], ['model.h', ['block.h']], ['block.h', []]]));
  assert.deepEqual(cycles(m), ['block -> model -> block']);
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
