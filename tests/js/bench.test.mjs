// The benchmark's harnesses run on the current API: one step and one generation of config A
// through bench/wasm.mjs (the C API by raw offsets, which a new struct field can break
// without any other test noticing). Figures are not checked here: speed lives in bench/.
import test from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../src/js/node.js';
import { benchWasm } from '../../bench/wasm.mjs';

test('bench/wasm.mjs trains and generates on config A through the C API', async () => {
  const { M } = await load({ threads: 1, simd: 'simd128' });
  const r = await benchWasm(M, 'A', { steps: 1, warmup: 0, gen: 1 });
  assert.ok(Number.isFinite(r.loss) && r.loss > 0, `a finite loss, not ${r.loss}`);
  assert.ok(r.train_tok_s > 0 && r.gen_tok_s > 0 && r.decode_tok_s > 0, JSON.stringify(r));
  assert.equal(r.params, 813824, 'config A as bench/configs.mjs and bench/torch_ref.py count it');
});
