// The struct layouts of src/js/structs.js against include/wasmformer.h as the wasm build
// compiles it: a small C program, written from the layouts, is compiled with emcc (the
// build's compiler and target) and prints each field's offset, size and type with
// offsetof, sizeof and _Generic, and each struct's size; any difference fails. A field the
// C struct has and the layout does not shows as a size difference.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { STRUCTS } from '../../src/js/structs.js';
import { ROOT } from './pack.js';

const SIZE = { i32: 4, u32: 4, f32: 4, f64: 8, ptr: 4 };
const sizeOf = (f) => (typeof f.type === 'string' ? SIZE[f.type] : f.type.size) * f.count;
const typeOf = (f) => (typeof f.type === 'string' ? f.type : 'struct');

/** Every field of a layout with its C path from the outer struct ('memory.params') and its
 * offset there: a struct inside the struct, and then each of its fields. */
function flat(s, prefix = '', base = 0) {
  return s.fields.flatMap((f) => {
    const row = { ...f, path: `${prefix}${f.c}`, offset: base + f.offset };
    return typeof f.type === 'string' ? [row] : [row, ...flat(f.type, `${row.path}.`, row.offset)];
  });
}

/** The C program: one JSON object {"wf_config": {"size": n, "fields": {"arch": [offset, size, type]}}}. */
function program() {
  const lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "wasmformer.h"',
    // the type of a field as the layouts name it; anything not listed is a pointer
    '#define TAG(x) _Generic((x), float: "f32", double: "f64", int: "i32", unsigned: "u32", \\',
    '    char: "other", signed char: "other", unsigned char: "other", short: "other", unsigned short: "other", \\',
    '    long: "other", unsigned long: "other", long long: "other", unsigned long long: "other", default: "ptr")',
    'int main(void) {', '  printf("{");'];
  Object.values(STRUCTS).forEach((s, i) => {
    lines.push(`  { ${s.c} x; (void)x; printf("%s\\"${s.c}\\": {\\"size\\": %zu, \\"fields\\": {", ${i ? '","' : '""'}, sizeof x);`);
    flat(s).forEach((f, j) => {
      const el = f.count > 1 ? `x.${f.path}[0]` : `x.${f.path}`;
      const tag = typeof f.type === 'string' ? `TAG(${el})` : '"struct"';
      lines.push(`    printf("%s\\"${f.path}\\": [%zu, %zu, \\"%s\\"]", ${j ? '","' : '""'}, offsetof(${s.c}, ${f.path}), sizeof x.${f.path}, ${tag});`);
    });
    lines.push('    printf("}}"); }');
  });
  lines.push('  printf("}\\n");', '  return 0;', '}');
  return `${lines.join('\n')}\n`;
}

test('the JavaScript struct layouts are the C header\'s, as emcc compiles it for wasm32', (t) => {
  if (spawnSync('sh', ['-c', 'command -v emcc'], { stdio: 'ignore' }).status !== 0) {
    if (process.env.CI) assert.fail('emcc is missing: the wasm build needs it too');
    t.skip('emcc not installed (apt-get install -y emscripten)');
    return;
  }
  const dir = join(ROOT, 'build', 'structs');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'layout.c'), program());
  execFileSync('emcc', ['-O0', '-std=c11', '-Wall', '-Werror', `-I${join(ROOT, 'include')}`, '-sENVIRONMENT=node', '-sSINGLE_FILE', 'layout.c', '-o', 'layout.cjs'],
    { cwd: dir, stdio: 'pipe' });
  const c = JSON.parse(execFileSync(process.execPath, [join(dir, 'layout.cjs')], { encoding: 'utf8' }));
  for (const s of Object.values(STRUCTS)) {
    const got = c[s.c];
    assert.ok(got, `${s.c} is not in the header`);
    for (const f of flat(s)) {
      assert.deepEqual(got.fields[f.path], [f.offset, sizeOf(f), typeOf(f)], `${s.c}.${f.path}: [offset, size, type]`);
    }
    assert.equal(got.size, s.size, `sizeof(${s.c}): a field the layout does not know, or one it has too many`);
  }
});

test('the layouts are well formed: fields in order, none overlapping, the struct covering them', () => {
  for (const s of Object.values(STRUCTS)) {
    let end = 0;
    for (const f of s.fields) {
      const align = typeof f.type === 'string' ? SIZE[f.type] : f.type.align;
      assert.ok(f.offset >= end && f.offset % align === 0, `${s.c}.${f.c} at ${f.offset}`);
      end = f.offset + sizeOf(f);
    }
    assert.ok(s.size >= end && s.size % s.align === 0, `${s.c}: size ${s.size}`);
  }
});
