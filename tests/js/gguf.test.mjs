// GGUF through the package and the CLI (issue 29): model.save({ format: 'gguf' }) and
// loadModel on float32, Q8_0 and Q4_0 models with their tokenizer; the CLI's export --format
// gguf, import and generate of a .gguf; refusals. The format itself: tests/test_gguf.c and
// tests/fuzz/fuzz_gguf.c; against llama.cpp: bench/wllama.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createModel, loadModel, loadTokenizer, loadWorkerModel, saveModelFile } from '../../src/js/node.js';

const LLAMA = { norm: 'rmsnorm', activation: 'swiglu', positions: 'rope', tiedHead: true, bias: false };

async function smollmShaped() {
  const tokenizer = await loadTokenizer(readFileSync('tests/fixtures/tokenizers/smollm.json'));
  return createModel({ ...LLAMA, nLayer: 2, nHead: 4, nKvHead: 2, dModel: 64, dFF: 96, context: 64, vocabSize: tokenizer.vocabSize, seed: 4 },
    { tokenizer });
}

test('a Llama-shaped model as GGUF and back: the same loss and tokenizer, in float32, Q8_0 and Q4_0', async () => {
  const text = 'It is a truth universally acknowledged, that 12 men in 1813';
  for (const type of ['f32', 'q8_0', 'q4_0']) {
    const model = await smollmShaped();
    if (type !== 'f32') model.quantize(type);
    const ids = model.tokenizer.encode(text);
    const bytes = model.save({ format: 'gguf' });
    assert.equal(new TextDecoder().decode(bytes.subarray(0, 4)), 'GGUF');
    const back = await loadModel(bytes);
    assert.equal(back.quantization, type);
    assert.deepEqual(Array.from(back.tokenizer.encode(text)), Array.from(ids), 'the tokenizer encodes alike');
    assert.equal(back.info().optimizerState, false, 'a GGUF file carries no optimizer state');
    const a = model.forward(ids.subarray(0, 12), ids.subarray(1, 13), 1, 12).loss;
    const b = back.forward(ids.subarray(0, 12), ids.subarray(1, 13), 1, 12).loss;
    assert.equal(a, b, `${type}: the same loss`);
    if (type === 'f32') {
      const q = await loadModel(bytes, { quantize: 'q4_0' });
      assert.equal(q.quantization, 'q4_0');
      q.dispose();
    }
    model.dispose();
    back.dispose();
  }
});

test('a GGUF file in a worker (the page opens one this way)', async () => {
  const model = await smollmShaped();
  model.quantize('q4_0');
  const wm = await loadWorkerModel(model.save({ format: 'gguf' }));
  assert.equal((await wm.info()).quantization, 'q4_0');
  assert.equal(typeof (await wm.generateText('It is', { maxTokens: 4, temperature: 0 })), 'string');
  wm.dispose();
  model.dispose();
});

test('GGUF refusals: the wrong shape of model, optimizer state, an unknown format', async () => {
  const gpt = await createModel({ nLayer: 1, nHead: 2, dModel: 32, dFF: 64, context: 16, vocabSize: 40 });
  assert.throws(() => gpt.save({ format: 'gguf' }), (e) => e.code === 'WF_ERR_UNSUPPORTED' && /Llama-shaped/.test(e.message));
  assert.throws(() => gpt.save({ format: 'gguf', optimizer: true }), (e) => e.code === 'WF_ERR_ARG' && /no optimizer state/.test(e.message));
  assert.throws(() => gpt.save({ format: 'onnx' }), (e) => e.code === 'WF_ERR_ARG' && /'wf' or 'gguf'/.test(e.message));
  const cut = (await smollmShaped()).save({ format: 'gguf' }).subarray(0, 1000);
  await assert.rejects(loadModel(cut), (e) => e.code === 'WF_ERR_FORMAT' && /GGUF/.test(e.message));
  gpt.dispose();
});

test('the CLI: export --format gguf --quantize, import a .gguf, generate from one', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wf-gguf-'));
  try {
    const model = await smollmShaped();
    await saveModelFile(model, join(dir, 'm.wf'));
    const cli = (...args) => spawnSync(process.execPath, ['bin/wasmformer.js', ...args], { encoding: 'utf8' });
    let r = cli('export', join(dir, 'm.wf'), '--format', 'gguf', '--quantize', 'q8_0', '--out', join(dir, 'm.gguf'));
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /Q8_0 weights/);
    r = cli('info', join(dir, 'm.gguf'));
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /weights +Q8_0 weights/);
    r = cli('import', join(dir, 'm.gguf'), '--quantize', 'q4_0', '--out', join(dir, 'm4.wf'));
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /Q4_0 weights/);
    r = cli('generate', join(dir, 'm.gguf'), '--prompt', 'It is', '--tokens', '5', '--temperature', '0');
    assert.equal(r.status, 0, r.stderr);
    assert.ok(r.stdout.startsWith('It is'));
    r = cli('export', join(dir, 'm.wf'), '--format', 'safetensors', '--quantize', 'q8_0', '--out', join(dir, 'hf'));
    assert.equal(r.status, 2);
    writeFileSync(join(dir, 'bad.gguf'), Buffer.from('GGUF\x03\x00\x00\x00'));
    r = cli('generate', join(dir, 'bad.gguf'));
    assert.equal(r.status, 1);
    assert.match(r.stderr, /GGUF/);
    model.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
