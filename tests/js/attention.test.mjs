// What the web page reads from models, in Node: self-attention maps (Model.selfAttention,
// over the core's wf_model_attention), and an encoder-decoder in a worker (WorkerSeq2Seq),
// which must train, decode and map attention exactly like a Seq2Seq in this thread.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createModel, createSeq2Seq, createWorkerModel, createWorkerSeq2Seq, loadWorkerSeq2Seq, WorkerSeq2Seq,
} from '../../src/js/node.js';
import { workerPort } from '../../src/js/worker-client.js';
import { LETTERS, REVERSE_CONFIG, reverseData } from '../../bench/studies/reverse.mjs';

const SMALL = { nLayer: 2, nHead: 2, dModel: 32, dFF: 64, context: 16, vocabSize: 16, batchSize: 8, seed: 9 };
const TEXT = 'the cat sat on the mat. '.repeat(100);

test('selfAttention: one map per layer, rows are distributions over earlier tokens, the worker agrees', async () => {
  const model = await createModel(SMALL);
  assert.throws(() => model.selfAttention('the'), (e) => e.code === 'WF_ERR_STATE', 'no tokenizer yet');
  await model.train(TEXT, { steps: 30, evalInterval: 0 });
  const maps = model.selfAttention('the cat');
  assert.equal(maps.T, 7);
  assert.equal(maps.nHead, 2);
  assert.deepEqual(maps.tokens, [...'the cat']);
  assert.deepEqual(maps.ids, model.tokenizer.encode('the cat'));
  assert.equal(maps.layers.length, 2);
  for (const layer of maps.layers) {
    assert.equal(layer.length, 2 * 7 * 7);
    for (let r = 0; r < 2 * 7; r++) {
      const i = r % 7, row = layer.subarray(r * 7, r * 7 + 7);
      assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-5, `row ${r} sums to 1`);
      assert.ok(row.subarray(i + 1).every((v) => v === 0), `row ${r}: nothing after query ${i}`);
    }
  }
  // the first query sees only itself; a longer text keeps its last `context` tokens
  assert.ok(Math.abs(maps.layers[1][0] - 1) < 1e-6);
  const long = model.selfAttention('the cat sat on the mat');
  assert.equal(long.T, 16);
  assert.equal(long.tokens.join(''), 'the cat sat on the mat'.slice(-16));
  // maps depend on the weights: a different training step changes them
  await model.train(TEXT, { steps: 5, evalInterval: 0 });
  assert.notDeepEqual(model.selfAttention('the cat').layers[1], maps.layers[1]);
  assert.throws(() => model.selfAttention(''), (e) => e.code === 'WF_ERR_ARG');

  const wm = await createWorkerModel(SMALL);
  await wm.load(model.save());
  const there = await wm.selfAttention('the cat');
  assert.deepEqual(there, model.selfAttention('the cat'));
  wm.dispose();
  model.dispose();
});

test('a worker encoder-decoder reverses strings exactly like one in this thread', async () => {
  const { train, test: heldOut } = reverseData();
  const local = await createSeq2Seq(REVERSE_CONFIG, { texts: [LETTERS] });
  const ws = await createWorkerSeq2Seq(REVERSE_CONFIG, { texts: [LETTERS] });
  assert.ok(ws instanceof WorkerSeq2Seq);
  assert.deepEqual(ws.config, local.config);
  const progress = [];
  const opts = { steps: 300, lr: 5e-3, batchSize: 32, seed: 4 };
  const result = await ws.train(train, { ...opts, onProgress: (p) => progress.push(p) });
  const localResult = await local.train(train, opts);
  assert.equal(result.step, 300);
  assert.equal(ws.step, 300);
  assert.equal(result.loss, localResult.loss, 'same seeds, same loss');
  assert.ok(progress.length > 0 && progress.at(-1).step === 300);
  assert.deepEqual(await ws.evaluate(heldOut), await local.evaluate(heldOut));
  assert.equal(await ws.translate('abcdefg', { beam: 2 }), await local.translate('abcdefg', { beam: 2 }));
  assert.deepEqual(await ws.decodeIds('abc'), await local.decodeIds('abc'));
  assert.equal(await ws.accuracy(heldOut.slice(0, 20)), await local.accuracy(heldOut.slice(0, 20)));
  assert.deepEqual(await ws.crossAttention('abcd', 'dcba'), local.crossAttention('abcd', 'dcba'));

  // checkpoints: a saved worker model reloads in a new worker; a decoder's file is refused
  const bytes = await ws.save();
  const again = await loadWorkerSeq2Seq(bytes);
  assert.equal(await again.translate('hgfe'), await ws.translate('hgfe'));
  const gpt = await createModel(SMALL);
  await gpt.train(TEXT, { steps: 2, evalInterval: 0 });
  const decoderFile = gpt.save();
  await assert.rejects(loadWorkerSeq2Seq(decoderFile), (e) => e.code === 'WF_ERR_STATE' && /decoder/.test(e.message));
  await assert.rejects(again.load(decoderFile), (e) => e.code === 'WF_ERR_STATE');
  assert.equal(await again.translate('hgfe'), await ws.translate('hgfe'), 'a refused load changes nothing');
  assert.equal(again.config.arch, 'encoder-decoder');
  await again.load(bytes);
  // a decoder in a worker has no seq2seq calls; an encoder-decoder none of a decoder's: not
  // as methods, and not in the worker, which refuses an operation its kind does not have
  const wm = await createWorkerModel(SMALL);
  assert.equal(wm.translate, undefined);
  assert.equal(again.selfAttention, undefined);
  for (const [w, op, args] of [[wm, 'translate', ['abc', {}]], [again, 'selfAttention', ['abc']]]) {
    const port = workerPort(w);
    const reply = new Promise((resolve) => port.listen((m) => { if (m.id === -1) resolve(m); }));
    port.ref(); // keeps the process up until the worker answers
    port.post({ id: -1, op, args });
    const m = await reply;
    port.unref();
    assert.ok(m.kind === 'error' && m.error.code === 'WF_ERR_ARG' && /unknown operation/.test(m.error.message), `${op}: ${JSON.stringify(m)}`);
  }
  const ac = new AbortController();
  await assert.rejects(again.train(train, { steps: 100000, signal: ac.signal, onProgress: (p) => { if (p.step > 310) ac.abort(); } }),
    (e) => e.name === 'AbortError');
  assert.ok((await again.info()).step > 310);
  for (const m of [wm, again, ws, local, gpt]) m.dispose();
  await assert.rejects(ws.translate('abc'), (e) => e.code === 'WF_ERR_DISPOSED');
});
