// llama2.c model files (issue 15): files written by tests/pytorch/make_llama2c_fixture.py from
// a PyTorch model of llama2.c's architecture (adjacent-pair RoPE, grouped-query attention, a
// shared or separate classifier) load with PyTorch's logits, train on ids, and hostile files
// are refused with the model left as it was.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { importLlama2c, WfError } from '../../src/js/node.js';

const fixture = (name) => ({
  bin: new Uint8Array(readFileSync(new URL(`../fixtures/llama2c_${name}.bin`, import.meta.url))),
  ref: JSON.parse(readFileSync(new URL(`../fixtures/llama2c_${name}.json`, import.meta.url), 'utf8')),
});

for (const name of ['gqa', 'mha']) {
  test(`llama2.c file (${name}): the config it describes and PyTorch's logits`, async () => {
    const { bin, ref } = fixture(name);
    const c = ref.config;
    const model = await importLlama2c(bin, { threads: 1 });
    const cfg = model.config;
    assert.deepEqual(
      [cfg.dModel, cfg.dFF, cfg.nLayer, cfg.nHead, cfg.nKvHead || cfg.nHead, cfg.vocabSize, cfg.context, cfg.tiedHead],
      [c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size, c.seq_len, c.shared]);
    assert.deepEqual([cfg.norm, cfg.activation, cfg.positions, cfg.bias, cfg.ropeTheta], ['rmsnorm', 'swiglu', 'rope', false, 10000]);
    assert.equal(model.tokenizer, null, 'llama2.c keeps its tokenizer in a file of its own');
    const T = ref.ids.length, V = c.vocab_size;
    const { logits } = model.forward(ref.ids, null, 1, T);
    let worst = 0, top = 0;
    for (let t = 0; t < T; t++) {
      for (let v = 0; v < V; v++) {
        worst = Math.max(worst, Math.abs(logits[t * V + v] - ref.logits[t][v]));
        top = Math.max(top, Math.abs(ref.logits[t][v]));
      }
    }
    console.log(`llama2c_${name}: logits max abs err against PyTorch ${worst.toExponential(2)} (${T} x ${V}, largest |logit| ${top.toFixed(2)})`);
    // float32 through the layers against PyTorch's float64: a few ulps of the largest logit
    assert.ok(worst < 2e-6 * Math.max(1, top), `logits differ from PyTorch's by ${worst}`);
    // it trains on ids: a few steps on one batch lower its loss
    const ids = ref.ids, targets = [...ids.slice(1), ids[0]];
    const first = model.trainStep(ids, targets, 1, T).loss;
    let last = first;
    for (let i = 0; i < 10; i++) last = model.trainStep(ids, targets, 1, T).loss;
    assert.ok(last < first, `loss ${first} -> ${last}`);
    model.dispose();
  });
}

test('llama2.c: hostile and unsupported files are refused with a reason', async () => {
  const { bin } = fixture('gqa');
  const bad = (edit) => { const b = bin.slice(); edit(new DataView(b.buffer)); return b; };
  const cases = [
    [bin.subarray(0, 20), 'WF_ERR_FORMAT', /shorter than the 28-byte header/],
    [bin.subarray(0, bin.length - 4), 'WF_ERR_FORMAT', /needs 93852 bytes; the file has 93848/],
    [bad((d) => d.setInt32(12, 3, true)), 'WF_ERR_FORMAT', /nKvHead 2 does not divide nHead 3|does not divide/],
    [bad((d) => d.setInt32(0, -32, true)), 'WF_ERR_FORMAT', /header dim is -32/],
    [bad((d) => d.setInt32(24, 0, true)), 'WF_ERR_FORMAT', /seq_len is 0/],
    [bad((d) => d.setInt32(8, 1 << 30, true)), 'WF_ERR_FORMAT', /needs \d+ bytes|no model wasmformer has/],
    [bad((d) => d.setUint32(28 + 4 * 7, 0x7fc00000, true)), 'WF_ERR_FORMAT', /NaN/],
    [bad((d) => { d.setUint32(0, 0x616b3432, true); d.setInt32(4, 1, true); }), 'WF_ERR_UNSUPPORTED', /version 1 export/],
  ];
  for (const [bytes, code, re] of cases) {
    await assert.rejects(importLlama2c(bytes, { threads: 1 }), (e) => e instanceof WfError && e.code === code && re.test(e.message),
      `${code} ${re}`);
  }
});

/** A llama2.c model file (export.py's legacy layout: the 7-int32 header, then the float32
 * tensors, the RoPE tables among them) of dim 8, L layers, 2 heads, 10 tokens, 4 positions,
 * the classifier shared; every weight 0.01. */
function llama2cFile(L) {
  const dim = 8, hidden = 16, heads = 2, V = 10, seq = 4, hs = dim / heads;
  const floats = V * dim + L * (dim + 4 * dim * dim + dim + 3 * hidden * dim) + dim + seq * hs;
  const b = new DataView(new ArrayBuffer(28 + 4 * floats));
  [dim, hidden, L, heads, heads, V, seq].forEach((x, i) => b.setInt32(4 * i, x, true));
  for (let i = 0; i < floats; i++) b.setFloat32(28 + 4 * i, 0.01, true);
  return new Uint8Array(b.buffer);
}

test('loadModel on llama2.c files: the core says what the file was, whatever its byte 8 (its layer count)', async () => {
  const { loadModel } = await import('../../src/js/node.js');
  for (const L of [1, 2, 3]) {
    const model = await loadModel(llama2cFile(L), { threads: 1 });
    const info = model.info();
    assert.equal(info.config.nLayer, L);
    assert.equal(info.optimizerState, false, `${L} layers: a llama2.c file has no optimizer state`);
    model.dispose();
  }
});
