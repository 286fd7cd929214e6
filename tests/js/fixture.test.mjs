// The wasm build against PyTorch's fixtures and against the native build on the same
// fixtures: logits and loss.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createModel } from '../../src/js/node.js';
import { readFixture, fixtureConfig, maxAbs, readF32, withNativeDump } from './fixture.js';

const CASES = ['gpt2_tied', 'gpt_untied_relu'];
const NATIVE = 'build/native/test_fixture';

async function wasmForward(name) {
  const fx = readFixture(`tests/fixtures/${name}.bin`);
  const model = await createModel(fixtureConfig(fx));
  for (const t of model.tensors()) model.setTensor(t.name, fx[`param.${t.name}`].data);
  const [B, T] = fx.inputs.dims;
  const out = model.forward(fx.inputs.data, fx.targets.data, B, T);
  model.dispose();
  return { fx, out };
}

for (const name of CASES) {
  test(`wasm matches PyTorch on ${name}`, async () => {
    const { fx, out } = await wasmForward(name);
    const logitErr = maxAbs(out.logits, fx.logits.data);
    const lossErr = Math.abs(out.loss - fx.loss.data[0]);
    console.log(`${name}: wasm vs PyTorch logits max abs err ${logitErr.toExponential(2)}, loss err ${lossErr.toExponential(2)}`);
    assert.ok(logitErr < 1e-5, `logits differ by ${logitErr}`);
    assert.ok(lossErr < 1e-5, `loss differs by ${lossErr}`);
  });
}

test('wasm matches the native build on the fixtures', async (t) => {
  await withNativeDump(t, NATIVE, async (dir) => {
    for (const name of CASES) {
      const { out } = await wasmForward(name);
      const native = readF32(join(dir, `${name}.logits.f32`));
      const nativeLoss = readF32(join(dir, `${name}.loss.f32`))[0];
      const err = maxAbs(out.logits, native);
      console.log(`${name}: wasm vs native logits max abs err ${err.toExponential(2)}, loss ${out.loss} vs ${nativeLoss}`);
      assert.ok(err < 1e-6, `wasm and native logits differ by ${err}`);
      assert.ok(Math.abs(out.loss - nativeLoss) < 1e-6);
    }
  });
});
