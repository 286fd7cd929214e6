// Fine-tuning through the package (issue 15 item 4): trainOnly/freeze/unfreeze, LoRA's
// adapters (addLora, mergeLora, removeLora), PEFT's layout (exportPeft, importPeft) against
// PyTorch: live where /usr/bin/python3 has torch, and on the committed fixtures
// (tests/pytorch/make_peft_fixture.mjs) everywhere; the LoRA fixtures from PyTorch
// (gen_lora_fixture.py) in the wasm build; the same calls through a worker.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createModel, createWorkerModel, exportSafetensors, importPeftDir, importSafetensors, importSafetensorsDir, loadModel,
  WfError,
} from '../../src/js/node.js';
import { readTensor } from '../pytorch/make_export_fixture.mjs';
import { tunedModel, writeCase } from '../pytorch/make_peft_fixture.mjs';
import { fixtureConfig, maxAbs, readFixture } from './fixture.js';

const PYTHON = '/usr/bin/python3';
const TEXT = readFileSync('data/austen/pride_and_prejudice.txt', 'utf8').slice(0, 30000);
const LLAMA = { norm: 'rmsnorm', activation: 'swiglu', positions: 'rope', tiedHead: false, bias: false };
const SMALL = { nLayer: 2, nHead: 4, nKvHead: 2, dModel: 32, dFF: 64, context: 32, vocabSize: 96, seed: 3, ...LLAMA };

test('trainOnly, freeze and unfreeze: by names, groups and layers; the memory follows', async () => {
  const model = await createModel({ nLayer: 3, nHead: 2, dModel: 16, dFF: 32, context: 16, vocabSize: 96, tiedHead: false });
  const full = model.memory();
  let t = model.trainOnly(['head', 'layers@-1']);
  assert.deepEqual(Object.keys(t.tensors).sort(), ['attprojb', 'attprojw', 'fcb', 'fcprojb', 'fcprojw', 'fcw', 'lm_head',
    'ln1b', 'ln1w', 'ln2b', 'ln2w', 'qkvb', 'qkvw'].sort());
  assert.deepEqual(t.tensors.qkvw, [2]);
  assert.equal(t.tensors.lm_head, true);
  const some = model.memory();
  assert.ok(some.grads < full.grads / 2 && some.optimizer < full.optimizer, 'frozen tensors give their memory back');
  assert.equal(model.info().trainable, t.trainable);
  t = model.freeze('lm_head');
  assert.equal(t.tensors.lm_head, undefined);
  t = model.unfreeze(['embed', 'attn@0-1']);
  assert.equal(t.tensors.wte, true);
  assert.equal(t.tensors.qkvw, true, 'layers 0-1 and the last: all of them');
  assert.deepEqual(t.tensors.fcw, [2]);
  for (const [spec, re] of [['foo', /no tensor or group is named "foo".*groups: all, layers/],
    ['layers@3', /layers 3 to 3 are outside the model's 0 to 2/], ['lm_head@0', /one tensor, not one per layer/],
    ['attn@x', /a number, a range/], [[3], /a name or an array of names/], [3, /a name or an array/]]) {
    assert.throws(() => model.trainOnly(spec), (e) => e instanceof WfError && e.code === 'WF_ERR_ARG' && re.test(e.message), String(spec));
  }
  // frozen weights do not move when training
  model.trainOnly('head');
  const wte = model.getTensor('wte'), head = model.getTensor('lm_head');
  await model.train(TEXT, { steps: 5, evalInterval: 0 });
  assert.deepEqual(model.getTensor('wte'), wte);
  assert.notDeepEqual(model.getTensor('lm_head'), head);
  // the choice travels with the model, and training resumes exactly
  const bytes = model.save();
  const copy = await loadModel(bytes);
  assert.deepEqual(copy.trainable(), model.trainable());
  const ids = model.tokenizer.encode(TEXT.slice(500, 500 + 64));
  for (let s = 0; s < 3; s++) {
    assert.deepEqual(copy.trainStep(ids.subarray(0, 32), ids.subarray(1, 33), 2, 16),
      model.trainStep(ids.subarray(0, 32), ids.subarray(1, 33), 2, 16));
  }
  assert.equal(model.trainOnly([]).trainable, 0, 'nothing trains: an inference-only model');
  assert.equal(model.memory().grads, 0);
  await assert.rejects(model.train(TEXT, { steps: 1 }), /every tensor is frozen/);
});

test('LoRA: added, trained with the base frozen, saved, merged, removed', async () => {
  const model = await createModel(SMALL);
  await model.train(TEXT, { steps: 20, evalInterval: 0 });
  const ids = model.tokenizer.encode(TEXT.slice(2000, 2000 + 64));
  const base = model.forward(ids, null, 2, 32).logits;
  const params = model.memory().params;
  assert.deepEqual(model.addLora({ rank: 4 }), { rank: 4, alpha: 8, targets: ['q', 'k', 'v', 'o', 'fc', 'up', 'down'] });
  assert.deepEqual(model.forward(ids, null, 2, 32).logits, base, 'B = 0: nothing changes until it trains');
  const mem = model.memory(), info = model.info();
  assert.equal(info.lora.rank, 4);
  assert.ok(mem.grads < 0.3 * params && mem.grads === info.trainable * 4, `gradients of the adapters alone: ${mem.grads} B`);
  assert.deepEqual(Object.keys(model.trainable().tensors).every((n) => n.startsWith('lora_')), true);
  assert.throws(() => model.addLora(), /has LoRA adapters already/);
  const gelu = await createModel({ ...SMALL, activation: 'gelu' });
  assert.throws(() => gelu.addLora({ targets: 'up' }), /'up' is SwiGLU's up rows/);
  assert.deepEqual(gelu.addLora({ targets: 'mlp' }).targets, ['fc', 'down'], "a group leaves out 'up' where there is none");
  gelu.dispose();
  const wte = model.getTensor('wte');
  const summary = await model.train(TEXT, { steps: 20, lr: 1e-2, evalInterval: 0 });
  assert.deepEqual(model.getTensor('wte'), wte, 'the base did not move');
  const tuned = model.forward(ids, null, 2, 32).logits;
  assert.ok(maxAbs(tuned, base) > 1e-3, 'the adapters trained');
  const copy = await loadModel(model.save());
  assert.deepEqual(copy.lora, model.lora);
  assert.deepEqual(copy.forward(ids, null, 2, 32).logits, tuned);
  copy.mergeLora();
  assert.equal(copy.lora, null);
  assert.equal(copy.memory().params, params);
  const merged = copy.forward(ids, null, 2, 32).logits;
  console.log(`LoRA rank 4 on ${SMALL.nLayer} layers: loss ${summary.loss.toFixed(3)} after 20 steps; merged logits within `
    + `${maxAbs(merged, tuned).toExponential(2)} of the adapters'`);
  assert.ok(maxAbs(merged, tuned) < 1e-5);
  model.removeLora();
  assert.deepEqual(model.forward(ids, null, 2, 32).logits, base, 'removed: the base exactly');
  assert.throws(() => model.removeLora(), /no LoRA adapters/);
  assert.throws(() => model.addLora({ rank: 4, ranks: 2 }), /unknown key "ranks"/);
  assert.throws(() => model.addLora({ targets: ['q', 'x'] }), /LoRA target "x"/);
});

test('the LoRA fixtures from PyTorch in the wasm build: logits and loss', async () => {
  for (const name of ['lora_llama', 'lora_gpt2']) {
    const fx = readFixture(`tests/fixtures/${name}.bin`);
    const model = await createModel(fixtureConfig(fx));
    for (const t of model.tensors()) model.setTensor(t.name, fx[`param.${t.name}`].data);
    const [B, T] = fx.inputs.dims;
    const lengths = fx.lengths?.data;
    if (lengths) { // padding: compare the rows that are real
      const out = model.forward(fx.inputs.data, null, B, T).logits, V = model.config.vocabSize;
      let err = 0;
      for (let b = 0; b < B; b++) {
        for (let i = 0; i < lengths[b] * V; i++) err = Math.max(err, Math.abs(out[b * T * V + i] - fx.logits.data[b * T * V + i]));
      }
      console.log(`${name}: wasm vs PyTorch logits (real rows) max abs err ${err.toExponential(2)}`);
      assert.ok(err < 1e-5);
    } else {
      const out = model.forward(fx.inputs.data, fx.targets.data, B, T);
      const err = maxAbs(out.logits, fx.logits.data);
      console.log(`${name}: wasm vs PyTorch logits max abs err ${err.toExponential(2)}, loss ${out.loss} vs ${fx.loss.data[0]}`);
      assert.ok(err < 1e-5 && Math.abs(out.loss - fx.loss.data[0]) < 1e-5);
    }
    model.dispose();
  }
});

test("PEFT: PyTorch's logits for wasmformer's committed adapters, compared without PyTorch", async () => {
  for (const name of ['gpt2', 'llama', 'gpt_neox']) {
    const dir = `tests/fixtures/wf_peft_${name}`;
    const model = await importSafetensorsDir(dir);
    const lora = await importPeftDir(model, dir);
    const ids = readTensor(`${dir}/expected.safetensors`, 'input_ids');
    const torch = readTensor(`${dir}/expected.safetensors`, 'torch_logits').data;
    const [B, T] = ids.shape;
    const err = maxAbs(model.forward(ids.data, null, B, T).logits, torch);
    console.log(`wf_peft_${name}: adapters rank ${lora.rank} on ${lora.targets.join(', ')}: wasm vs PyTorch logits max abs err ${err.toExponential(2)}`);
    assert.ok(err <= 1e-5, `${name}: ${err}`);
    { // the exporter writes exactly the files PyTorch read (a fused c_attn's or query_key_value's too: read back at its rank)
      const files = model.exportPeft();
      assert.ok(Buffer.from(files['adapter_model.safetensors']).equals(readFileSync(`${dir}/adapter_model.safetensors`)));
      assert.equal(files['adapter_config.json'], readFileSync(`${dir}/adapter_config.json`, 'utf8'));
    }
    model.mergeLora(); // merged: a plain model of the same outputs, exported whole
    const merged = await importSafetensors(exportSafetensors(model));
    assert.ok(maxAbs(merged.forward(ids.data, null, B, T).logits, torch) <= 1e-5);
    model.dispose();
    merged.dispose();
  }
});

for (const name of ['gpt2', 'llama', 'gpt_neox']) {
  test(`PEFT (${name}): adapters trained in wasmformer reproduce its logits in PyTorch`, async (t) => {
    if (spawnSync(PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status !== 0) {
      t.skip(`${PYTHON} cannot import torch (apt-get install python3-torch): the live PyTorch check is skipped; the committed fixtures stand in`);
      return;
    }
    const dir = mkdtempSync(join(tmpdir(), 'wf-peft-'));
    try {
      const tuned = await tunedModel(name);
      const r = await writeCase(name, dir, tuned);
      console.log(r.stdout.trim());
      assert.equal(r.status, 0, `PyTorch disagrees:\n${r.stdout}${r.stderr}`);
      tuned.model.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('a fused module\'s adapters come back at the rank and alpha they were trained with (GPT-2\'s c_attn, GPT-NeoX\'s query_key_value)', async () => {
  for (const positions of ['learned', 'rope']) {
    const model = await createModel({ nLayer: 2, nHead: 4, dModel: 32, dFF: 64, context: 32, vocabSize: 96, positions, seed: 4 }, { text: TEXT });
    const base = exportSafetensors(model);
    model.addLora({ rank: 8, alpha: 16, targets: ['q', 'k', 'v', 'o'] });
    await model.train(TEXT, { steps: 5, lr: 1e-2, evalInterval: 0 });
    const files = model.exportPeft();
    const fused = positions === 'rope' ? 'query_key_value' : 'c_attn';
    assert.equal(JSON.parse(files['adapter_config.json']).rank_pattern[fused], 24, 'in the file: one adapter of rank 3 x 8');
    const back = await importSafetensors(base);
    assert.deepEqual(back.importPeft(files), { rank: 8, alpha: 16, targets: ['q', 'k', 'v', 'o'] }, `${fused}: what was trained`);
    const ids = model.tokenizer.encode(TEXT.slice(500, 532));
    assert.deepEqual(back.forward(ids, null, 1, 32).logits, model.forward(ids, null, 1, 32).logits, 'the same adapters, bit for bit');
    model.dispose();
    back.dispose();
  }
});

test('exportSafetensors never drops LoRA adapters: a Hugging Face layout refuses them; merged, the model exports whole', async () => {
  for (const [positions, type] of [['learned', 'gpt2'], ['rope', 'gpt_neox'], ['sinusoidal', 'wasmformer']]) {
    const model = await createModel({ nLayer: 1, nHead: 2, dModel: 16, dFF: 32, context: 16, vocabSize: 96, positions }, { text: TEXT });
    model.addLora({ rank: 2, targets: 'attn' });
    await model.train(TEXT, { steps: 3, lr: 1e-2, evalInterval: 0 });
    const ids = model.tokenizer.encode(TEXT.slice(0, 16));
    const tuned = model.forward(ids, null, 1, 16).logits;
    if (type === 'wasmformer') { // its own layout keeps them: the reloaded model is the fine-tuned one
      const back = await importSafetensors(exportSafetensors(model));
      assert.deepEqual(back.lora, model.lora);
      assert.deepEqual(back.forward(ids, null, 1, 16).logits, tuned);
      back.dispose();
    } else {
      assert.throws(() => exportSafetensors(model), (e) => e instanceof WfError && e.code === 'WF_ERR_STATE'
        && new RegExp(`LoRA adapters, which a ${type} file has no place for: merge them`).test(e.message));
      model.mergeLora();
      const back = await importSafetensors(exportSafetensors(model));
      assert.equal(JSON.parse(exportSafetensors(back)['config.json']).model_type, type);
      assert.ok(maxAbs(back.forward(ids, null, 1, 16).logits, tuned) < 1e-5, 'the merged export is the fine-tuned model');
      back.dispose();
    }
    model.dispose();
  }
});

test('fine-tuning through a worker: addLora, trainOnly, train, exportPeft, mergeLora', async () => {
  const wm = await createWorkerModel(SMALL);
  try {
    await wm.train(TEXT, { steps: 5, evalInterval: 0 });
    assert.equal((await wm.addLora({ rank: 2, targets: 'attn' })).rank, 2);
    const t = await wm.trainable();
    assert.ok(Object.keys(t.tensors).every((n) => n.startsWith('lora_')));
    assert.equal((await wm.info()).lora.rank, 2);
    await wm.train(TEXT, { steps: 5, evalInterval: 0 });
    const files = await wm.exportPeft({ baseModel: 'mine' });
    assert.match(files['adapter_config.json'], /"base_model_name_or_path": "mine"/);
    assert.ok(files['adapter_model.safetensors'].length > 1000);
    await wm.unfreeze('head');
    await assert.rejects(wm.exportPeft(), /trains besides the adapters/);
    await wm.mergeLora();
    assert.equal((await wm.info()).lora, null);
  } finally {
    await wm.dispose();
  }
});

test("PEFT: the base model's name is the core's to write into adapter_config.json", async () => {
  const model = await createModel(SMALL);
  await model.train(TEXT, { steps: 2, evalInterval: 0 });
  model.addLora({ rank: 2, targets: 'attn' });
  const tricky = 'org/"name"\\\n\u0001 é 😀';
  for (const base of [undefined, 'meta-llama/Llama-3.2-1B', tricky]) {
    const text = model.exportPeft(base === undefined ? {} : { baseModel: base })['adapter_config.json'];
    assert.equal(JSON.parse(text).base_model_name_or_path, base ?? null, String(base));
    if (base !== undefined) assert.ok(text.includes(`"base_model_name_or_path": ${JSON.stringify(base)},\n`), 'written as JSON.stringify writes it');
  }
  assert.throws(() => model.exportPeft({ baseModel: 'a\0b' }), (e) => e.code === 'WF_ERR_ARG' && /without NUL/.test(e.message));
  model.dispose();
});
