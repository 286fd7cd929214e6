// The kernel sets (src/js/loader.js): relaxed SIMD where the engine has it, simd128
// otherwise or when asked. npm test runs this file in the plain Node tests (on Node 20 no
// relaxed SIMD: the probe says so and simd128 loads; on Node 22 and 24 relaxed is the
// default) and again with WASMFORMER_SIMD=relaxed (and, on Node 20,
// --experimental-wasm-relaxed-simd): the relaxed builds load and train like the simd128 ones.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createModel, load } from '../../src/js/node.js';
import { hasRelaxedSimd } from '../../src/js/loader.js';

const SMALL = { nLayer: 2, nHead: 2, dModel: 32, dFF: 64, context: 16, seed: 5 };
const TEXT = 'It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife. '.repeat(10);

async function losses(opts) {
  const model = await createModel(SMALL, { text: TEXT, ...opts });
  const seen = [];
  await model.train(TEXT, { steps: 20, evalInterval: 0, yieldMs: 0, seed: 1, onProgress: (p) => seen.push(p.loss) });
  const info = model.info();
  const text = await model.generateText('It is', { maxTokens: 20, temperature: 0 });
  model.dispose();
  return { seen, simd: info.simd, threads: info.threads, text };
}

test('the probe decides the kernel set, and simd: "simd128" forces the portable one', async () => {
  const auto = await load({ threads: 1 });
  assert.equal(auto.simd, hasRelaxedSimd() ? 'relaxed' : 'simd128');
  assert.equal((await load({ threads: 1, simd: 'simd128' })).simd, 'simd128');
  await assert.rejects(load({ simd: 'fast' }), /simd must be one of "auto", "relaxed", "simd128", not "fast" \(a string\)/);
  if (!hasRelaxedSimd()) {
    await assert.rejects(load({ simd: 'relaxed' }), (e) => e.code === 'WF_ERR_LOAD' && /--experimental-wasm-relaxed-simd/.test(e.message));
  }
});

test('relaxed builds train and generate as the simd128 ones do, up to the last bits; each is deterministic', { skip: !hasRelaxedSimd() && 'needs relaxed SIMD: Node 22 or later, or Node 20 with --experimental-wasm-relaxed-simd' }, async () => {
  for (const threads of [1, 2]) {
    const relaxed = await losses({ threads });
    const again = await losses({ threads });
    const portable = await losses({ threads, simd: 'simd128' });
    assert.equal(relaxed.simd, 'relaxed');
    assert.equal(portable.simd, 'simd128');
    assert.deepEqual(again.seen, relaxed.seen, 'the same seed, the same losses within one build');
    const worst = Math.max(...relaxed.seen.map((l, i) => Math.abs(l - portable.seen[i])));
    assert.ok(worst < 1e-3, `${threads} thread(s): the losses of the two kernel sets agree to ${worst.toExponential(2)}`);
    console.log(`# ${threads} thread(s): relaxed vs simd128 losses over 20 steps differ by at most ${worst.toExponential(2)}`);
  }
  // one forward in each: the fused multiply-add shows in the logits' last bits (where the CPU has FMA)
  const logits = {};
  for (const simd of ['relaxed', 'simd128']) {
    const model = await createModel({ ...SMALL, vocabSize: 40 }, { threads: 1, simd });
    const ids = Array.from({ length: 16 }, (_, i) => (i * 7) % 40);
    logits[simd] = model.forward(ids, null, 1, 16).logits;
    model.dispose();
  }
  const diff = Math.max(...logits.relaxed.map((x, i) => Math.abs(x - logits.simd128[i])));
  assert.ok(diff < 1e-5, `logits agree to ${diff}`);
  console.log(`# one forward: relaxed vs simd128 logits differ by at most ${diff.toExponential(2)}`);
});
