// The seq2seq demonstration (bench/reverse.mjs) in the wasm build through the Seq2Seq
// class: an encoder-decoder learns to reverse strings in a few seconds; greedy and beam
// decoding on held-out strings, the cross-attention map, abort and errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSeq2Seq, loadModel, saveModel, Seq2Seq } from '../../src/js/node.js';
import { LETTERS, REVERSE_CONFIG, reverseData } from '../../bench/reverse.mjs';

// Seq2Seq.from refuses a model of another architecture.
const decoderLike = () => ({ config: { arch: 'decoder' } });

test('an encoder-decoder learns to reverse strings: greedy and beam exact match on held-out strings', async () => {
  const { train, test: heldOut } = reverseData();
  const s2s = await createSeq2Seq(REVERSE_CONFIG, { texts: [LETTERS] });
  assert.equal(s2s.config.vocabSize, LETTERS.length + 1 + 2); // <unk>, the letters, bos, eos
  assert.equal(s2s.config.nEncLayer, 1);
  const before = s2s.evaluate(heldOut).loss;
  const summary = await s2s.train(train, { steps: 800, lr: 5e-3, batchSize: 32 });
  const after = s2s.evaluate(heldOut).loss;
  const greedy = s2s.accuracy(heldOut), beam = s2s.accuracy(heldOut, { beam: 4 });
  console.log(`reverse: held-out loss ${before.toFixed(3)} -> ${after.toFixed(3)} in ${summary.seconds.toFixed(1)} s; ` +
    `exact match greedy ${(100 * greedy).toFixed(1)}%, beam 4 ${(100 * beam).toFixed(1)}%`);
  assert.ok(greedy >= 0.9, `greedy ${greedy}`);
  assert.ok(beam >= 0.9, `beam ${beam}`);
  assert.equal(s2s.translate('abcdefg'), 'gfedcba');
  // decoding stops at maxTokens without eos
  const cut = s2s.decodeIds('abcdef', { maxTokens: 3 });
  assert.equal(cut.finished, false);
  assert.equal(cut.ids.length, 3);
  // the cross-attention map: rows are distributions over the source; reversing reads the
  // source back to front, so the first output letter looks mostly at the last source letter
  const map = s2s.crossAttention('abcd', 'dcba');
  assert.equal(map.T, 5);
  assert.equal(map.S, 4);
  const last = map.layers[map.layers.length - 1];
  for (let r = 0; r < map.nHead * map.T; r++) {
    const row = last.subarray(r * map.S, (r + 1) * map.S);
    assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-5);
  }
  let mean = [0, 0, 0, 0];
  for (let h = 0; h < map.nHead; h++) mean = mean.map((v, j) => v + last[h * map.T * map.S + j] / map.nHead);
  assert.equal(mean.indexOf(Math.max(...mean)), 3, `first output row attends ${mean}`);
  // a checkpoint brings back the same translator, tokenizer included
  const again = Seq2Seq.from(await loadModel(saveModel(s2s.model)));
  assert.equal(again.config.nEncLayer, 1);
  assert.equal(again.translate('hgfedcba', { beam: 4 }), s2s.translate('hgfedcba', { beam: 4 }));
  assert.deepEqual(again.forward(heldOut.slice(0, 4)).logits, s2s.forward(heldOut.slice(0, 4)).logits);
  assert.throws(() => Seq2Seq.from(decoderLike()), (e) => e.code === 'WF_ERR_STATE');
  again.dispose();
  s2s.dispose();
});

test('Seq2Seq errors, busy and abort', async () => {
  const s2s = await createSeq2Seq({ dModel: 16, dFF: 32, nLayer: 1, nHead: 2, context: 6, maxBeam: 2 }, { texts: ['abc'] });
  assert.throws(() => s2s.decodeIds('abc', { beam: 3 }), (e) => e.code === 'WF_ERR_ARG' && /max_beam/.test(e.message));
  assert.throws(() => s2s.trainStep([['abcabcabc', 'a']]), (e) => e.code === 'WF_ERR_ARG' && /context/.test(e.message));
  assert.throws(() => s2s.trainStep([['', 'a']]), (e) => e.code === 'WF_ERR_ARG');
  const ac = new AbortController();
  let seen = 0;
  const pairs = [['abc', 'cba'], ['ab', 'ba']];
  const running = s2s.train(pairs, { steps: 5000, yieldMs: 0, signal: ac.signal, onProgress: () => { if (++seen === 3) ac.abort(); } });
  assert.throws(() => s2s.decodeIds('ab'), (e) => e.code === 'WF_ERR_BUSY');
  await assert.rejects(running, (e) => e.name === 'AbortError');
  assert.ok(s2s.step >= 3 && s2s.step < 5000);
  assert.equal(typeof s2s.translate('abc'), 'string');
  s2s.dispose();
  assert.throws(() => s2s.translate('abc'), (e) => e.code === 'WF_ERR_DISPOSED');
});
