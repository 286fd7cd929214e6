// Quantized weights through the package (issue 29): model.quantize('q8_0' | 'q4_0' | 'f32'),
// the quantize option of the loads and imports, QLoRA (adapters over a quantized base),
// checkpoints, the refusals, and the same calls through a worker. The C tests
// (tests/test_quant.c, tests/test_qmodel.c) hold the kernels and the exactness; this holds
// the package's surface over the wasm build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createModel, createWorkerModel, exportSafetensors, importSafetensors, loadModel, WfError,
} from '../../src/js/node.js';
import { modelHandle } from '../../src/js/model.js';

const LLAMA = { norm: 'rmsnorm', activation: 'swiglu', positions: 'rope', tiedHead: true, bias: false };
const SMALL = { nLayer: 2, nHead: 4, nKvHead: 2, dModel: 64, dFF: 96, context: 32, vocabSize: 96, seed: 3, ...LLAMA };
const ids = Int32Array.from({ length: 65 }, (_, i) => (i * 37 + 11) % 96);
const lossOf = (m) => m.forward(ids.subarray(0, 64), ids.subarray(1), 2, 32).loss;

/** n greedy tokens after prompt, through the runtime (the models have no tokenizer). */
function greedy(model, prompt, n) {
  const core = modelHandle(model), rt = core.rt, h = core.live();
  const ps = rt.putSampling({ temperature: 0, topK: 0, topP: 1, nVocab: 0, noUnk: 0 });
  try {
    rt.genStart(h, prompt, 1);
    return Array.from({ length: n }, () => rt.genNext(h, ps));
  } finally {
    rt.free(ps);
  }
}

test('quantize: q8_0 and q4_0 shrink the weights, evaluate as the dequantized floats, generate, and go back exactly', async () => {
  for (const type of ['q8_0', 'q4_0']) {
    const model = await createModel(SMALL);
    const f32 = model.memory().params;
    assert.equal(model.quantization, 'f32');
    model.quantize(type);
    assert.equal(model.quantization, type);
    assert.equal(model.info().quantization, type);
    const mem = model.memory();
    assert.ok(mem.params < f32 / (type === 'q8_0' ? 3 : 5), `${type}: weights ${mem.params} of ${f32} bytes`);
    assert.ok(mem.grads === 0 && mem.optimizer === 0, 'no training state yet');
    const t = model.tensors();
    assert.equal(t.find((x) => x.name === 'qkvw').dtype, type);
    assert.equal(t.find((x) => x.name === 'qkvw').offset, -1);
    assert.equal(t.find((x) => x.name === 'ln1w').dtype, 'f32');
    assert.throws(() => model.getTensor('qkvw'), (e) => e instanceof WfError && e.code === 'WF_ERR_STATE' && /quantized \(q/.test(e.message));
    assert.throws(() => model.setTensor('wte', new Float32Array(96 * 64)), (e) => e.code === 'WF_ERR_STATE');
    // the floats it holds: back to float32 is exact, so the losses match bit for bit
    const q = lossOf(model);
    const copy = await loadModel(model.save());
    assert.equal(copy.quantization, type, 'a checkpoint keeps the blocks');
    assert.equal(lossOf(copy), q);
    copy.quantize('f32');
    assert.equal(copy.quantization, 'f32');
    assert.equal(lossOf(copy), q, 'dequantized: the same loss');
    // generation runs on the blocks (8-bit activations): close to the float model's
    const prompt = Array.from(ids.subarray(0, 5));
    const a = greedy(model, prompt, 8), b = greedy(copy, prompt, 8);
    assert.ok(a.every((x) => x >= 0 && x < 96) && b.length === 8);
    model.dispose();
    copy.dispose();
  }
});

test('QLoRA: adapters train over a q4_0 base as over its float values; the base stays frozen', async () => {
  const q = await createModel(SMALL), f = await createModel(SMALL);
  q.quantize('q4_0');
  f.quantize('q4_0');
  f.quantize('f32'); // the float model holding the same values
  for (const m of [q, f]) m.addLora({ rank: 4, targets: ['q', 'v'] });
  assert.equal(q.trainable().trainable, f.trainable().trainable);
  for (let s = 0; s < 3; s++) {
    assert.deepEqual(q.trainStep(ids.subarray(0, 64), ids.subarray(1), 2, 32), f.trainStep(ids.subarray(0, 64), ids.subarray(1), 2, 32));
  }
  assert.throws(() => q.unfreeze('qkvw'), (e) => e.code === 'WF_ERR_STATE' && /quantized/.test(e.message));
  assert.throws(() => q.mergeLora(), (e) => e.code === 'WF_ERR_STATE' && /cannot be merged/.test(e.message));
  assert.equal(q.lora.rank, 4, 'unchanged by the refusal');
  q.removeLora();
  q.dispose();
  f.dispose();
});

test('the quantize option of loadModel and importSafetensors; bad values and shapes are refused', async () => {
  const model = await createModel(SMALL);
  const files = exportSafetensors(model);
  const imported = await importSafetensors(files, { quantize: 'q8_0' });
  assert.equal(imported.quantization, 'q8_0');
  const loaded = await loadModel(model.save(), { quantize: 'q4_0' });
  assert.equal(loaded.quantization, 'q4_0');
  await assert.rejects(loadModel(model.save(), { quantize: 'q5' }), (e) => e.code === 'WF_ERR_ARG' && /'q8_0', 'q4_0' or 'f32'/.test(e.message));
  await assert.rejects(loadModel(model.save(), { quantise: 'q8_0' }), (e) => e.code === 'WF_ERR_ARG' && /quantize/.test(e.message));
  assert.throws(() => model.quantize('int8'), (e) => e.code === 'WF_ERR_ARG');
  const odd = await createModel({ ...SMALL, dModel: 48 });
  assert.throws(() => odd.quantize('q8_0'), (e) => e.code === 'WF_ERR_UNSUPPORTED' && /blocks of 32/.test(e.message));
  assert.equal(odd.quantization, 'f32');
  for (const m of [model, imported, loaded, odd]) m.dispose();
});

test('quantize in a worker', async () => {
  const wm = await createWorkerModel(SMALL);
  await wm.quantize('q8_0');
  assert.equal((await wm.info()).quantization, 'q8_0');
  await assert.rejects(wm.quantize('q3'), (e) => e.code === 'WF_ERR_ARG');
  wm.dispose();
});
