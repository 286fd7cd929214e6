// Regression tests for the C-side findings of the code review (REVIEW.md), run in wasm
// where they bit: each test names its finding.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createModel, estimateMemory, load } from '../../src/js/node.js';

test('review #1: a KV cache beyond 4 GB is counted and refused, not wrapped around 32 bits', async () => {
  const rt = await load();
  // small weights (1024 thin layers) but 2 x 1024 x 65536 x 64 floats of keys and values
  const cfg = { nLayer: 1024, nHead: 1, dModel: 64, dFF: 1, context: 65536, vocabSize: 40 };
  const cache = 2 * 1024 * 65536 * 64 * 4;
  const est = await estimateMemory(cfg);
  assert.ok(est.inference >= cache && est.inference < cache * 1.01, `inference ${est.inference}, want about ${cache}`);
  const heapSize = rt.M.HEAP8.length, inUse = rt.M._wf_heap_in_use();
  const want = `the model needs ${(est.total / 1e9).toFixed(2)} GB before activations; this build addresses at most 4.29 GB`;
  await assert.rejects(createModel(cfg), (e) => e.code === 'WF_ERR_NOMEM' && e.message === want, want);
  assert.equal(rt.M.HEAP8.length, heapSize, 'the wasm memory did not grow');
  assert.equal(rt.M._wf_heap_in_use(), inUse, 'nothing was allocated (or everything was freed)');
});
