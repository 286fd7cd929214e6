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

test('the statuses, constants and tensor table are the core\'s, and the package keeps no copy of them', async () => {
  const { STATUS_TABLE, CONSTANTS, TENSOR_TABLE, TENSOR_GROUPS, LORA_TARGETS } = await import('../../src/js/config-table.js');
  const { STATUS } = await import('../../src/js/runtime.js');
  const { load } = await import('../../src/js/node.js');
  const rt = await load({ threads: 1 });
  // the wasm module's wf_status_string is the table's text, value by value
  assert.equal(STATUS_TABLE[0].name, 'WF_OK');
  STATUS_TABLE.forEach((s, i) => assert.equal(rt.cstring(rt.M._wf_status_string(i)), s.text, s.name));
  assert.equal(rt.cstring(rt.M._wf_status_string(STATUS_TABLE.length)), 'unknown status');
  assert.deepEqual(STATUS, STATUS_TABLE.map((s) => s.name));
  // every core status is an ErrorCode of the types
  const dts = readFileSync(new URL('../../src/js/index.d.ts', import.meta.url), 'utf8');
  const codes = /export type ErrorCode =([^;]*);/.exec(dts)[1].match(/'WF_[A-Z_]+'/g).map((c) => c.slice(1, -1));
  for (const s of STATUS_TABLE.slice(1)) assert.ok(codes.includes(s.name), `index.d.ts's ErrorCode lacks ${s.name}`);
  assert.equal(CONSTANTS.WF_SAVE_OPTIMIZER, 1);
  // the tensor table: the names a model reports, each group names some tensor
  const model = await (await import('../../src/js/node.js')).createSeq2Seq({ dModel: 16, nHead: 2, dFF: 32, nLayer: 1, nEncLayer: 1, context: 8, vocabSize: 20 });
  const names = TENSOR_TABLE.map((t) => t.name);
  for (const t of (await import('../../src/js/model.js')).modelHandle(model.model ?? model).tensors()) assert.ok(names.includes(t.name), t.name);
  model.dispose();
  for (const g of TENSOR_GROUPS) assert.ok(TENSOR_TABLE.some((t) => t.groups.includes(g)), g);
  assert.deepEqual(LORA_TARGETS, ['q', 'k', 'v', 'o', 'fc', 'up', 'down']);
  // no hand copy of the lists in the package's sources
  for (const f of ['runtime.js', 'errors.js', 'finetune.js', 'tokenizer.js', 'handle.js']) {
    const src = readFileSync(new URL(`../../src/js/${f}`, import.meta.url), 'utf8');
    assert.doesNotMatch(src, /'WF_ERR_THREADS'|'enc_lnfw'|'attprojw'|'llama2c'\]/, f);
  }
});
