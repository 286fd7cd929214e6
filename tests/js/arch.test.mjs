// The architectures in the wasm build: the new fixtures against PyTorch and against the
// native build through the batch API, the Encoder class, and errors as WfError.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createModel, createEncoder, createSeq2Seq, Encoder, WfError } from '../../src/js/node.js';
import { readFixture, fixtureConfig, maxAbs, readF32, withNativeDump } from './fixture.js';
import { modelHandle } from '../../src/js/model.js';

const CASES = ['encdec_post_ln', 'llama_decoder', 'encoder_mse', 'recipe_options', 'recipe_muon', 'recipe_gelu_exact'];
const NATIVE = 'build/native/test_fixture';

// The fixture's batch through the Model's handle (the batch path every model kind takes):
// logits, or the final states for an MSE.
async function wasmForward(name) {
  const fx = readFixture(`tests/fixtures/${name}.bin`);
  const model = await createModel(fixtureConfig(fx));
  for (const t of model.tensors()) model.setTensor(t.name, fx[`param.${t.name}`].data);
  const get = (k) => fx[k]?.data;
  const dims = (fx.inputs ?? fx.input_vecs).dims;
  const batch = {
    inputs: get('inputs'), inputVecs: get('input_vecs'), targets: get('targets'), targetVecs: get('target_vecs'),
    lengths: get('lengths'), src: get('src'), srcLengths: get('src_lengths'), B: dims[0], T: dims[1], S: fx.src?.dims[1],
  };
  const mse = !fx.logits;
  const r = modelHandle(model).forwardBatch(batch, { logits: !mse, hidden: mse });
  model.dispose();
  return { loss: r.loss, out: mse ? r.hidden : r.logits, ref: mse ? fx.hidden.data : fx.logits.data };
}

for (const name of CASES) {
  test(`wasm matches PyTorch on ${name}`, async () => {
    const { loss, out, ref } = await wasmForward(name);
    const fx = readFixture(`tests/fixtures/${name}.bin`);
    const err = maxAbs(out, ref), lossErr = Math.abs(loss - fx.loss.data[0]);
    console.log(`${name}: wasm vs PyTorch outputs max abs err ${err.toExponential(2)}, loss err ${lossErr.toExponential(2)}`);
    assert.ok(err < 1e-5, `outputs differ by ${err}`);
    assert.ok(lossErr < 1e-5, `loss differs by ${lossErr}`);
  });
}

test('wasm matches the native build on the architecture fixtures', async (t) => {
  await withNativeDump(t, NATIVE, async (dir) => {
    for (const name of CASES) {
      const { out, loss } = await wasmForward(name);
      const native = readF32(join(dir, `${name}.logits.f32`));
      const nativeLoss = readF32(join(dir, `${name}.loss.f32`))[0];
      const err = maxAbs(out, native);
      console.log(`${name}: wasm vs native max abs err ${err.toExponential(2)}, loss ${loss} vs ${nativeLoss}`);
      assert.ok(err < 1e-6, `wasm and native differ by ${err}`);
      assert.ok(Math.abs(loss - nativeLoss) < 1e-6);
    }
  });
});

test('Encoder: cross-entropy with padding, MSE on vectors, hidden states', async () => {
  const enc = await createEncoder({ nLayer: 2, nHead: 2, dModel: 16, dFF: 32, context: 8, vocabSize: 10, seed: 3 });
  assert.equal(enc.config.arch, 'encoder');
  const B = 2, T = 8, C = 16;
  const inputs = Int32Array.from({ length: B * T }, (_, i) => (i * 7) % 10);
  const targets = Int32Array.from({ length: B * T }, (_, i) => (i * 3 + 1) % 10);
  const lengths = [8, 5];
  const a = enc.forward({ inputs, targets, lengths, B, T });
  assert.equal(a.logits.length, B * T * 10);
  assert.equal(a.hidden.length, B * T * C);
  // what sits in the padding changes nothing
  const garbage = inputs.slice();
  for (let t = 5; t < T; t++) garbage[T + t] = 9;
  const b = enc.forward({ inputs: garbage, targets, lengths, B, T });
  assert.equal(b.loss, a.loss);
  assert.deepEqual(b.hidden.subarray(0, (T + 5) * C), a.hidden.subarray(0, (T + 5) * C));
  // bidirectional: a later token changes an earlier state
  const later = inputs.slice();
  later[7] = (later[7] + 1) % 10;
  const c = enc.forward({ inputs: later, B, T });
  assert.notDeepEqual(c.hidden.subarray(0, C), a.hidden.subarray(0, C));
  assert.equal(c.loss, null);
  let first = null, last = null;
  enc.setOptimizer({ lr: 3e-3 });
  for (let s = 0; s < 40; s++) {
    const info = enc.trainStep({ inputs, targets, lengths, B, T });
    first ??= info.loss;
    last = info.loss;
  }
  assert.ok(last < 0.5 * first, `cross-entropy ${first} -> ${last}`);
  // MSE against vectors, with vectors in
  const inputVecs = Float32Array.from({ length: B * T * C }, (_, i) => Math.sin(i));
  const targetVecs = Float32Array.from({ length: B * T * C }, (_, i) => 0.3 * Math.cos(i));
  const m0 = enc.forward({ inputVecs, targetVecs, B, T });
  assert.equal(m0.logits, null);
  let mse = m0.loss;
  for (let s = 0; s < 40; s++) mse = enc.trainStep({ inputVecs, targetVecs, B, T }).loss;
  console.log(`encoder: cross-entropy ${first.toFixed(3)} -> ${last.toFixed(3)}, MSE ${m0.loss.toFixed(3)} -> ${mse.toFixed(3)}`);
  assert.ok(mse < 0.5 * m0.loss);
  assert.throws(() => enc.trainStep({ inputVecs: new Float32Array(3), targetVecs, B, T }),
    (e) => e instanceof WfError && e.code === 'WF_ERR_ARG' && /inputVecs/.test(e.message));
  assert.throws(() => enc.trainStep({ inputs, targets, lengths: [9, 1], B, T }),
    (e) => e.code === 'WF_ERR_ARG' && /lengths/.test(e.message));
  assert.throws(() => enc.trainStep({ inputs, targets, targetVecs, B, T }), (e) => e.code === 'WF_ERR_ARG');
  // a view of a caller's model (Encoder.from) leaves it alone when it ends (by dispose or
  // Symbol.dispose, which `using` calls); the encoder createEncoder made takes its model with it
  const model = enc.model;
  const view = Encoder.from(model);
  assert.deepEqual(view.forward({ inputs, B, T }).hidden, enc.forward({ inputs, B, T }).hidden);
  view.dispose();
  assert.throws(() => view.forward({ inputs, B, T }), (e) => e.code === 'WF_ERR_DISPOSED');
  assert.equal(enc.forward({ inputs, B, T }).hidden.length, B * T * C, 'the model is still there');
  const scoped = Encoder.from(model);
  scoped[Symbol.dispose]();
  assert.throws(() => scoped.config, (e) => e.code === 'WF_ERR_DISPOSED');
  assert.equal(model.config.arch, 'encoder', 'Symbol.dispose on a view ends the view only');
  assert.throws(() => Encoder.from(createModelLike('decoder')), (e) => e.code === 'WF_ERR_STATE');
  enc.dispose();
  assert.throws(() => enc.forward({ inputs, B, T }), (e) => e.code === 'WF_ERR_DISPOSED');
  assert.throws(() => model.config, (e) => e.code === 'WF_ERR_DISPOSED', 'createEncoder\'s model goes with it');
});

/** Enough of a Model for from() to refuse it. */
function createModelLike(arch) {
  return { config: { arch } };
}

test('config errors of the new fields', async () => {
  await assert.rejects(createSeq2Seq({ nLayer: 1, nEncLayer: 0, vocabSize: 8 }), (e) => e.code === 'WF_ERR_CONFIG' && /nEncLayer/.test(e.message));
  await assert.rejects(createSeq2Seq({ vocabSize: 8, maxBeam: 0 }), (e) => e.code === 'WF_ERR_CONFIG' && /maxBeam/.test(e.message));
  await assert.rejects(createEncoder({ positions: 'rope', dModel: 12, nHead: 4 }), (e) => e.code === 'WF_ERR_CONFIG' && /even/.test(e.message));
  await assert.rejects(createSeq2Seq({}), (e) => e.code === 'WF_ERR_CONFIG' && /vocabSize/.test(e.message));
  await assert.rejects(createSeq2Seq({ vocabSize: 4 }, { texts: ['abcdef'] }), (e) => e.code === 'WF_ERR_CONFIG' && /bos and eos/.test(e.message));
});
