// Issue 14's recipe options from JavaScript (wasm): every option on at once (QK-norm with
// RoPE, ReLU², zero-initialised projections, logit soft-capping, Muon) trains, and the
// config and optimizer settings survive a checkpoint, an exact resume and a safetensors
// round trip. The CLI's flags for them come from the config table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createModel, exportSafetensors, importSafetensors, loadModel, WfError } from '../../src/js/node.js';

const TEXT = 'the cat sat on the mat; the dog sat on the log. '.repeat(100);
const ALL_ON = {
  nLayer: 2, nHead: 2, dModel: 32, dFF: 64, context: 32, vocabSize: 24, batchSize: 8, norm: 'rmsnorm',
  positions: 'rope', bias: false, tiedHead: false, activation: 'relu2', qkNorm: true, zeroProj: true, logitCap: 15,
};

test('every recipe option on: the model trains with Muon and its output projections start at zero', async () => {
  const model = await createModel(ALL_ON);
  assert.equal(model.config.qkNorm, true);
  assert.equal(model.config.zeroProj, true);
  assert.equal(model.config.logitCap, 15);
  assert.equal(model.config.activation, 'relu2');
  for (const name of ['attprojw', 'fcprojw']) assert.ok(model.getTensor(name).every((x) => x === 0), `${name} starts at 0`);
  assert.ok(model.getTensor('qkvw').some((x) => x !== 0));
  const losses = [];
  await model.train(TEXT, {
    steps: 40, lr: 2e-2, muon: 1, muonMomentum: 0.9, warmup: 5, evalInterval: 0,
    onProgress: (p) => losses.push(p.loss),
  });
  assert.equal(model.optimizer.muon, 1);
  assert.equal(model.optimizer.muonMomentum, 0.9);
  const first = losses[0], last = losses[losses.length - 1];
  console.log(`all options on, Muon: loss ${first.toFixed(3)} -> ${last.toFixed(3)} in 40 steps`);
  assert.ok(last < 0.6 * first, `the loss fell from ${first} to ${last}`);
  for (const name of ['attprojw', 'fcprojw']) assert.ok(model.getTensor(name).some((x) => x !== 0), `${name} moved`);
  const text = await model.generateText('the ', { maxTokens: 20, temperature: 0 });
  assert.equal(typeof text, 'string');
  model.dispose();
});

test('recipe options: a checkpoint resumes Muon exactly; safetensors keeps the options', async () => {
  const straight = await createModel(ALL_ON);
  const opts = { lr: 2e-2, muon: 1, evalInterval: 0, seed: 3 };
  await straight.train(TEXT, { ...opts, steps: 10 });
  const copy = await loadModel(straight.save());
  assert.deepEqual(copy.config, straight.config);
  assert.deepEqual(copy.optimizer, straight.optimizer);
  await straight.train(TEXT, { ...opts, steps: 10, keepSchedule: true, seed: 4 });
  await copy.train(TEXT, { ...opts, steps: 10, keepSchedule: true, seed: 4 });
  for (const t of straight.tensors()) assert.deepEqual(copy.getTensor(t.name), straight.getTensor(t.name), t.name);

  const files = exportSafetensors(straight);
  const json = JSON.parse(files['config.json']);
  assert.equal(json.model_type, 'wasmformer', 'no Hugging Face class has QK-norm or a logit cap');
  const back = await importSafetensors(files);
  for (const k of ['qkNorm', 'zeroProj', 'logitCap', 'activation']) assert.equal(back.config[k], straight.config[k], k);
  const a = await straight.evaluate(TEXT.slice(0, 500)), b = await back.evaluate(TEXT.slice(0, 500));
  assert.equal(b.loss, a.loss);
  for (const m of [straight, copy, back]) m.dispose();
});

test('recipe options: out-of-range values are refused with the field named', async () => {
  await assert.rejects(createModel({ ...ALL_ON, logitCap: -1 }), (e) => e instanceof WfError && /logitCap|logit_cap/.test(e.message));
  await assert.rejects(createModel({ ...ALL_ON, activation: 'relu3' }), (e) => e instanceof WfError && /relu2/.test(e.message));
  const model = await createModel(ALL_ON);
  assert.throws(() => model.setOptimizer({ muon: 2 }), (e) => e instanceof WfError && /muon/.test(e.message));
  assert.throws(() => model.setOptimizer({ muonMomentum: 1 }), (e) => e instanceof WfError && /muonMomentum|muon_momentum/.test(e.message));
  model.dispose();
});
