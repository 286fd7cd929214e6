// Regression tests for the C-side findings of the code review (REVIEW.md), run in wasm
// where they bit: each test names its finding.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createModel, estimateMemory, exportSafetensors, importSafetensorsDir, load } from '../../src/js/node.js';
import { modelHandle } from '../../src/js/model.js';
import { CASES as EXPORT_CASES, readTensor } from '../pytorch/make_export_fixture.mjs';
import { fixtureConfig, readFixture } from './fixture.js';

test('review #1: a KV cache beyond 4 GB is counted and refused, not wrapped around 32 bits', async () => {
  const rt = await load();
  // small weights (1024 thin layers) but 2 x 1024 x 65536 x 64 floats of keys and values
  const cfg = { nLayer: 1024, nHead: 1, dModel: 64, dFF: 1, context: 65536, vocabSize: 40 };
  const cache = 2 * 1024 * 65536 * 64 * 4;
  const est = await estimateMemory(cfg);
  assert.ok(est.inference >= cache && est.inference < cache * 1.01, `inference ${est.inference}, want about ${cache}`);
  const heapSize = rt.heapSize, inUse = rt.heapInUse();
  const want = `the model needs ${((est.params + est.inference) / 1e9).toFixed(2)} GB for its weights and KV cache; this build addresses at most 4.29 GB`;
  await assert.rejects(createModel(cfg), (e) => e.code === 'WF_ERR_NOMEM' && e.message === want, want);
  assert.equal(rt.heapSize, heapSize, 'the wasm memory did not grow');
  assert.equal(rt.heapInUse(), inUse, 'nothing was allocated (or everything was freed)');
});

test('review #5: a later train() call warms up from lr / warmup again, from its own first step', async () => {
  const model = await createModel({ nLayer: 1, nHead: 2, dModel: 16, dFF: 32, context: 16, vocabSize: 40, batchSize: 2 });
  const text = 'the cat sat on the mat. '.repeat(40);
  const lrs = async (steps) => {
    const seen = [];
    await model.train(text, { steps, warmup: 10, lr: 1e-3, evalInterval: 0, yieldMs: 0, onProgress: (p) => seen.push(p.lr) });
    return seen;
  };
  const first = await lrs(50);
  const second = await lrs(20);
  assert.equal(model.step, 70);
  assert.equal(model.optimizer.start, 50);
  // progress shows a float32 as its shortest decimal: the same float32
  assert.equal(Math.fround(second[0]), Math.fround(Math.fround(1e-3) / 10), `first lr of the second call: ${second[0]}`);
  assert.deepEqual(second.slice(0, 10), first.slice(0, 10), 'the same warmup as the first call');
  model.dispose();
});

test('review #35: greedy generation in wasm matches PyTorch\'s golden tokens on the GPT fixtures', async () => {
  // tests/fixtures/gen_gpt_fixture.py decodes the fixture's first input tokens by argmax in
  // PyTorch (greedy.prompt -> greedy.tokens); tests/test_fixture.c checks the native build
  for (const name of ['gpt2_tied', 'gpt_untied_relu']) {
    const fx = readFixture(`tests/fixtures/${name}.bin`);
    const model = await createModel(fixtureConfig(fx));
    for (const t of model.tensors()) model.setTensor(t.name, fx[`param.${t.name}`].data);
    const { rt, h } = modelHandle(model), prompt = fx['greedy.prompt'].data, want = Array.from(fx['greedy.tokens'].data);
    assert.ok(want.length > 0);
    const sampling = rt.putSampling({ temperature: 0, topK: 0, topP: 1, nVocab: 0 }); // temperature 0: greedy
    const got = [];
    try {
      rt.genStart(h, prompt, 7);
      for (let i = 0; i < want.length; i++) got.push(rt.genNext(h, sampling));
    } finally {
      rt.free(sampling);
      model.dispose();
    }
    assert.deepEqual(got, want, `${name}: greedy tokens`);
  }
});

test('review #17: PyTorch\'s logits for wasmformer\'s committed exports, compared without PyTorch', async () => {
  // tests/pytorch/make_export_fixture.mjs exported these models and ran them in PyTorch
  // (tests/pytorch/check_export.py); safetensors.test.mjs repeats it live where torch exists
  for (const name of Object.keys(EXPORT_CASES)) {
    const dir = `tests/fixtures/wf_export_${name}`;
    const model = await importSafetensorsDir(dir);
    const ids = readTensor(`${dir}/expected.safetensors`, 'input_ids');
    const torch = readTensor(`${dir}/expected.safetensors`, 'torch_logits').data;
    const [B, T] = ids.shape;
    const { logits } = model.forward(ids.data, null, B, T);
    assert.equal(logits.length, torch.length);
    let err = 0;
    for (let i = 0; i < logits.length; i++) err = Math.max(err, Math.abs(logits[i] - torch[i]));
    console.log(`wf_export_${name}: wasm vs PyTorch logits max abs err ${err.toExponential(2)}`);
    assert.ok(err <= 1e-5, `${name}: logits differ from PyTorch's by ${err}`);
    // the exporter still writes exactly the files PyTorch read
    const files = exportSafetensors(model);
    assert.equal(files['config.json'], readFileSync(`${dir}/config.json`, 'utf8'), `${name}: config.json`);
    assert.ok(Buffer.from(files['model.safetensors']).equals(readFileSync(`${dir}/model.safetensors`)), `${name}: model.safetensors`);
    model.dispose();
  }
});
