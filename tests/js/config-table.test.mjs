// src/js/config-table.js against the tables of include/wasmformer.h it is generated from
// (scripts/gen-config.mjs compiles scripts/config_table.c with the system's C compiler).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { TABLE_FILE, cTables, generate } from '../../scripts/gen-config.mjs';
import { CONFIG_TABLE, OPTIM_TABLE } from '../../src/js/config-table.js';

test('the committed src/js/config-table.js is what the header generates', () => {
  assert.equal(readFileSync(TABLE_FILE, 'utf8'), generate(),
    'include/wasmformer.h changed: run node scripts/gen-config.mjs (or ./build.sh) and commit src/js/config-table.js');
});

test('every row has a distinct C and JavaScript name, a type and a meaning', () => {
  const c = cTables();
  assert.equal(CONFIG_TABLE.length, c.config.length);
  assert.equal(OPTIM_TABLE.length, c.optim.length);
  for (const table of [CONFIG_TABLE, OPTIM_TABLE]) {
    assert.equal(new Set(table.map((r) => r.name)).size, table.length);
    assert.equal(new Set(table.map((r) => r.js)).size, table.length);
    for (const r of table) {
      assert.match(r.name, /^[a-z][a-z0-9_]*$/);
      assert.match(r.js, /^[a-z][A-Za-z0-9]*$/);
      assert.ok(['enum', 'bool', 'int', 'real', 'seed'].includes(r.type), r.name);
      assert.ok(r.doc.length > 0, r.name);
      if (r.type === 'enum') assert.ok(r.default >= 0 && r.default < r.names.length, r.name);
      if (r.type === 'int') assert.ok(r.min <= r.max, r.name);
    }
  }
});
