// The threaded build: Node loads it by default, its models run on worker threads, and
// their training steps equal the single-thread build's bit for bit (the kernels' results
// do not depend on the thread count).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load, createModel } from '../../src/js/node.js';

const CONFIG = { nLayer: 2, nHead: 4, dModel: 64, dFF: 256, context: 64, vocabSize: 32, seed: 5 };

function batch(B, T, V, seed) {
  const ids = new Int32Array(B * T);
  for (let i = 0; i < ids.length; i++) ids[i] = (seed = (seed * 1103515245 + 12345) >>> 0) % V;
  return ids;
}

test('Node picks the threaded build; two threads train exactly like one', async () => {
  const mt = await load({ threads: 2 });
  const st = await load({ threads: 1 });
  assert.equal(mt.threads, 2);
  assert.equal(st.threads, 1);
  assert.ok(mt.M.HEAPU8.buffer instanceof SharedArrayBuffer, 'the threaded build shares its memory');
  const a = await createModel(CONFIG, { threads: 2 });
  const b = await createModel(CONFIG, { threads: 1 });
  const inputs = batch(4, 64, 32, 1), targets = batch(4, 64, 32, 2);
  for (let s = 0; s < 3; s++) {
    const ra = a.trainStep(inputs, targets, 4, 64), rb = b.trainStep(inputs, targets, 4, 64);
    assert.equal(ra.loss, rb.loss, `step ${s} loss`);
  }
  for (const name of ['qkvw', 'fcw', 'wte']) assert.deepEqual(a.getTensor(name), b.getTensor(name), name);
  a.dispose();
  b.dispose();
});
