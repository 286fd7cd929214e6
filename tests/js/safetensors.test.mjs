// safetensors in the wasm build: Hugging Face GPT-2 and Llama files written by PyTorch
// import with PyTorch's logits, export/import round trips, and the round trip wasmformer ->
// PyTorch -> wasmformer for a GPT-2 style and a Llama-style model, with the logits compared
// at each step (where /usr/bin/python3 has torch).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createModel, exportSafetensors, exportSafetensorsDir, importPeftDir, importSafetensors, importSafetensorsDir, WfError,
} from '../../src/js/node.js';
import { maxAbs, readFixture } from './fixture.js';
import { encodeSafetensors, readTensor } from '../pytorch/make_export_fixture.mjs';

const FIXTURES = ['hf_gpt2_tied', 'hf_gpt2_untied_relu_f16', 'hf_gpt2_model_bf16', 'hf_llama_untied', 'hf_llama_tied_bf16'];
const LLAMA = { norm: 'rmsnorm', activation: 'swiglu', positions: 'rope', tiedHead: false, bias: false, normEps: 1e-6 };
const TEXT = readFileSync(new URL('../../data/austen/pride_and_prejudice.txt', import.meta.url), 'utf8').slice(0, 40000);
const PYTHON = '/usr/bin/python3';

test('Hugging Face GPT-2 and Llama files written by PyTorch import with the logits PyTorch computed', async () => {
  for (const name of FIXTURES) {
    const model = await importSafetensorsDir(`tests/fixtures/${name}`);
    const fx = readFixture(`tests/fixtures/${name}/expected.bin`);
    const [B, T] = fx.inputs.dims;
    const { logits } = model.forward(fx.inputs.data, null, B, T);
    const err = maxAbs(logits, fx.logits.data);
    const arch = JSON.parse(readFileSync(`tests/fixtures/${name}/config.json`, 'utf8')).architectures[0];
    console.log(`${name}: wasm import vs PyTorch ${arch} logits max abs err ${err.toExponential(2)}`);
    assert.ok(err < 1e-5, `${name}: ${err}`);
    model.dispose();
  }
});

test('export and import round-trip: weights, config and tokenizer', async () => {
  const base = { nLayer: 2, nHead: 2, dModel: 32, dFF: 64, context: 32, vocabSize: 96 };
  for (const [config, modelType] of [
    [base, 'gpt2'],
    [{ ...base, ...LLAMA }, 'llama'],
    [{ ...base, ...LLAMA, tiedHead: true }, 'llama'],
    [{ ...base, ...LLAMA, nHead: 4, nKvHead: 2, ropeTheta: 1e5 }, 'llama'], // grouped-query, SmolLM's base
    [{ ...base, positions: 'rope' }, 'gpt_neox'], // micro's shape
    [{ ...base, positions: 'rope', activation: 'relu2', tiedHead: false, dropout: 0.1, ropeTheta: 500 }, 'gpt_neox'],
    [{ ...base, nHead: 4, nKvHead: 1 }, 'wasmformer'], // GPT-2's class has no grouped-query attention
    [{ ...base, bias: false, positions: 'sinusoidal' }, 'wasmformer'],
  ]) {
    const model = await createModel(config);
    await model.train(TEXT, { steps: 5, evalInterval: 0, batchSize: 2 });
    const files = exportSafetensors(model);
    const cfg = JSON.parse(files['config.json']);
    assert.equal(cfg.model_type, modelType);
    if (modelType === 'llama') {
      assert.equal(cfg.num_key_value_heads, config.nKvHead || config.nHead);
      assert.equal(cfg.rope_theta, config.ropeTheta ?? 10000);
    }
    if (modelType === 'gpt_neox') {
      assert.deepEqual([cfg.use_parallel_residual, cfg.rotary_pct, cfg.rotary_emb_base, cfg.hidden_dropout], [false, 1, config.ropeTheta ?? 10000, config.dropout ?? 0]);
      assert.ok(files['tokenizer.json'], 'the char tokenizer goes as a tokenizer.json too');
    }
    const back = await importSafetensors(files);
    assert.deepEqual(back.config, model.config, 'the config comes back');
    for (const t of model.tensors()) assert.deepEqual(back.getTensor(t.name), model.getTensor(t.name), t.name);
    assert.equal(back.tokenizer.vocabSize, model.tokenizer.vocabSize);
    const opts = { maxTokens: 20, temperature: 0.7, seed: 9 };
    assert.equal(await back.generateText('It is ', opts), await model.generateText('It is ', opts));
    model.dispose();
    back.dispose();
  }
  await assert.rejects(importSafetensors({}), (e) => e instanceof WfError && e.code === 'WF_ERR_ARG');
  const files = exportSafetensors(await createModel({ nLayer: 1, nHead: 2, dModel: 8, dFF: 16, context: 8, vocabSize: 16 }));
  await assert.rejects(importSafetensors({ ...files, 'config.json': files['config.json'].replace('"n_head": 2', '"n_head": 3') }),
    (e) => e.code === 'WF_ERR_FORMAT' && /does not divide/.test(e.message));
  await assert.rejects(importSafetensors({ ...files, 'model.safetensors': files['model.safetensors'].subarray(0, 100) }),
    (e) => e.code === 'WF_ERR_FORMAT');
});

for (const [name, config] of [
  ['GPT-2 style', { nLayer: 2, nHead: 4, dModel: 64, dFF: 256, context: 64, vocabSize: 96, seed: 5 }],
  ['Llama-style', { nLayer: 2, nHead: 4, dModel: 64, dFF: 172, context: 64, vocabSize: 96, seed: 5, ...LLAMA }],
  ['GPT-NeoX, micro\'s shape (the default)', { nLayer: 2, nHead: 4, dModel: 64, dFF: 256, context: 64, vocabSize: 96, seed: 5, positions: 'rope' }],
  ['Llama-style, grouped-query 4 over 2, rope_theta 1e5',
    { nLayer: 2, nHead: 4, nKvHead: 2, ropeTheta: 1e5, dModel: 64, dFF: 172, context: 64, vocabSize: 96, seed: 5, ...LLAMA }],
]) test(`wasmformer (${name}) -> PyTorch -> wasmformer: the logits agree at every step`, async (t) => {
  const probe = spawnSync(PYTHON, ['-c', 'import torch'], { stdio: 'ignore' });
  if (probe.status !== 0) {
    t.skip(`${PYTHON} cannot import torch (apt-get install python3-torch): the PyTorch side of the round trip is skipped`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'wf-torch-'));
  try {
    const model = await createModel(config);
    await model.train(TEXT, { steps: 30, lr: 3e-3, evalInterval: 0, batchSize: 4 });
    const B = 2, T = 64;
    const ids = model.tokenizer.encode(TEXT.slice(1000, 1000 + B * T));
    const ours = model.forward(ids, null, B, T).logits;
    await exportSafetensorsDir(model, dir);
    writeFileSync(join(dir, 'expected.safetensors'), encodeSafetensors({
      input_ids: ['I32', [B, T], ids], logits: ['F32', [B, T, 96], ours],
    }));
    const r = spawnSync(PYTHON, ['tests/pytorch/check_export.py', dir, '1e-5'], { encoding: 'utf8' });
    console.log(r.stdout.trim());
    assert.equal(r.status, 0, `PyTorch disagrees with wasmformer:\n${r.stdout}${r.stderr}`);
    // back: the state dict PyTorch saved, imported into wasm
    const back = await importSafetensorsDir(join(dir, 'torch'));
    const again = back.forward(ids, null, B, T).logits;
    const torchTensor = readTensor(join(dir, 'torch', 'logits.safetensors'), 'logits');
    assert.equal(torchTensor.dtype, 'F32');
    const torchLogits = torchTensor.data;
    const dBack = maxAbs(again, ours), dTorch = maxAbs(again, torchLogits);
    console.log(`wasmformer (${name}) -> PyTorch -> wasmformer: logits max abs diff ${dBack.toExponential(2)} against the original, ${dTorch.toExponential(2)} against PyTorch's`);
    assert.ok(dBack === 0, 'the weights came back bit for bit');
    assert.ok(dTorch <= 1e-5);
    model.dispose();
    back.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a folder that is not there, or lacks a file, is a WfError that says which (not fs\'s ENOENT)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wf-missing-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const model = await createModel({ ...LLAMA, nLayer: 1, dModel: 32, nHead: 2, dFF: 64, context: 16 });
  const missing = join(dir, 'does-not-exist');
  const is = (pattern) => (e) => e instanceof WfError && e.code === 'WF_ERR_ARG' && pattern.test(e.message);
  await assert.rejects(importSafetensorsDir(missing), is(/does-not-exist does not exist \(a Hugging Face model folder holds config.json and model.safetensors\)/));
  await assert.rejects(importPeftDir(model, missing), is(/does-not-exist does not exist \(a PEFT adapter folder/));
  writeFileSync(join(dir, 'config.json'), '{}');
  await assert.rejects(importSafetensorsDir(dir), is(/has no model.safetensors/));
  await assert.rejects(importSafetensorsDir(join(dir, 'config.json')), is(/config.json is not a folder/));
  model.dispose();
});
