// The seq2seq demonstration (bench/studies/reverse.mjs) in the wasm build through the Seq2Seq
// class: an encoder-decoder learns to reverse strings in a few seconds; greedy and beam
// decoding on held-out strings, the cross-attention map, abort and errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSeq2Seq, loadModel, saveModel, Seq2Seq } from '../../src/js/node.js';
import { LETTERS, REVERSE_CONFIG, reverseData } from '../../bench/studies/reverse.mjs';

// Seq2Seq.from refuses a model of another architecture.
const decoderLike = () => ({ config: { arch: 'decoder' } });

test('an encoder-decoder learns to reverse strings: greedy and beam exact match on held-out strings', async () => {
  const { train, test: heldOut } = reverseData();
  const s2s = await createSeq2Seq(REVERSE_CONFIG, { texts: [LETTERS] });
  assert.equal(s2s.config.vocabSize, LETTERS.length + 1 + 2); // <unk>, the letters, bos, eos
  assert.equal(s2s.config.nEncLayer, 1);
  const before = (await s2s.evaluate(heldOut)).loss;
  const summary = await s2s.train(train, { steps: 800, lr: 5e-3, batchSize: 32 });
  const after = (await s2s.evaluate(heldOut)).loss;
  const greedy = await s2s.accuracy(heldOut), beam = await s2s.accuracy(heldOut, { beam: 4 });
  console.log(`reverse: held-out loss ${before.toFixed(3)} -> ${after.toFixed(3)} in ${summary.elapsed.toFixed(1)} s; ` +
    `exact match greedy ${(100 * greedy).toFixed(1)}%, beam 4 ${(100 * beam).toFixed(1)}%`);
  assert.ok(greedy >= 0.9, `greedy ${greedy}`);
  assert.ok(beam >= 0.9, `beam ${beam}`);
  assert.equal(await s2s.translate('abcdefg'), 'gfedcba');
  // decoding stops at maxTokens without eos
  const cut = await s2s.decodeIds('abcdef', { maxTokens: 3 });
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
  const loaded = await loadModel(saveModel(s2s.model));
  const again = Seq2Seq.from(loaded);
  assert.equal(again.config.nEncLayer, 1);
  assert.equal(await again.translate('hgfedcba', { beam: 4 }), await s2s.translate('hgfedcba', { beam: 4 }));
  assert.deepEqual(again.forward(heldOut.slice(0, 4)).logits, s2s.forward(heldOut.slice(0, 4)).logits);
  assert.throws(() => Seq2Seq.from(decoderLike()), (e) => e.code === 'WF_ERR_STATE');
  // a view made by from() leaves the caller's model alone; one made by createSeq2Seq owns its model
  again.dispose();
  assert.throws(() => again.config, (e) => e.code === 'WF_ERR_DISPOSED', 'the view is ended');
  assert.equal(loaded.config.nEncLayer, 1, 'the caller\'s model is not');
  assert.equal(await Seq2Seq.from(loaded).translate('hgfedcba'), await s2s.translate('hgfedcba'));
  loaded.dispose();
  const model = s2s.model;
  s2s.dispose();
  assert.throws(() => model.config, (e) => e.code === 'WF_ERR_DISPOSED', 'createSeq2Seq\'s model goes with it');
});

test('Seq2Seq errors, busy and abort', async () => {
  const s2s = await createSeq2Seq({ dModel: 16, dFF: 32, nLayer: 1, nHead: 2, context: 6, maxBeam: 2 }, { texts: ['abc'] });
  await assert.rejects(s2s.decodeIds('abc', { beam: 3 }), (e) => e.code === 'WF_ERR_ARG' && /maxBeam/.test(e.message));
  assert.throws(() => s2s.trainStep([['abcabcabc', 'a']]), (e) => e.code === 'WF_ERR_ARG' && /context/.test(e.message));
  assert.throws(() => s2s.trainStep([['', 'a']]), (e) => e.code === 'WF_ERR_ARG');
  const ac = new AbortController();
  let seen = 0;
  const pairs = [['abc', 'cba'], ['ab', 'ba']];
  const running = s2s.train(pairs, { steps: 5000, yieldMs: 0, signal: ac.signal, onProgress: () => { if (++seen === 3) ac.abort(); } });
  for (const call of [() => s2s.decodeIds('ab'), () => s2s.translate('ab'), () => s2s.accuracy(pairs), () => s2s.evaluate(pairs)]) {
    await assert.rejects(call(), (e) => e.code === 'WF_ERR_BUSY');
  }
  await assert.rejects(running, (e) => e.name === 'AbortError');
  assert.ok(s2s.step >= 3 && s2s.step < 5000);
  assert.equal(typeof await s2s.translate('abc'), 'string');
  // the long calls take a signal and yield: an abort stops them between pairs
  const many = Array.from({ length: 400 }, () => ['abc', 'cba']);
  for (const call of [(signal) => s2s.accuracy(many, { signal, yieldMs: 0 }), (signal) => s2s.evaluate(many, { signal, yieldMs: 0, batchSize: 2 })]) {
    const stop = new AbortController();
    const p = call(stop.signal);
    setTimeout(() => stop.abort(), 0);
    await assert.rejects(p, (e) => e.name === 'AbortError');
    assert.equal(s2s.model.busy, null);
  }
  await assert.rejects(s2s.decodeIds('abc', { signal: AbortSignal.abort() }), (e) => e.name === 'AbortError');
  s2s.dispose();
  await assert.rejects(s2s.translate('abc'), (e) => e.code === 'WF_ERR_DISPOSED');
});

test('Seq2Seq.train runs Model\'s training loop: the caller\'s optimizer settings stay, batchSize is checked, a refused call changes nothing', async () => {
  const { train } = reverseData();
  const s2s = await createSeq2Seq({ nLayer: 1, dModel: 16, dFF: 32 }, { texts: [LETTERS] });
  assert.deepEqual([s2s.model.optimizer.lr, s2s.model.optimizer.weightDecay, s2s.model.optimizer.gradClip].map((x) => Math.fround(x)),
    [3e-3, 0.01, 1].map((x) => Math.fround(x)), 'a new Seq2Seq starts with its training defaults');
  s2s.setOptimizer({ lr: 1e-4, weightDecay: 0, gradClip: 0.5 });
  const progress = [];
  const r = await s2s.train(train, { steps: 12, batchSize: 4, yieldMs: 0, onProgress: (p) => progress.push(p) });
  const o = s2s.model.optimizer;
  assert.equal(o.lr, 1e-4, 'the lr set before stays');
  assert.equal(o.weightDecay, 0);
  assert.equal(o.gradClip, 0.5);
  assert.equal(o.warmup, 1, 'the schedule is this call\'s');
  assert.ok(progress.every((p) => p.lr <= 1e-4 + 1e-9), 'no step ran above the caller\'s peak lr');
  assert.equal(progress.at(-1).step, 12);
  assert.ok(progress.every((p) => p.tokensPerSecond > 0 && p.valLoss === null && p.validated === false));
  assert.equal(r.step, 12);
  assert.ok(r.tokens > 0 && r.tokensPerSecond > 0);
  for (const batchSize of [0, -1, 1.5, '4']) {
    await assert.rejects(s2s.train(train, { steps: 1, batchSize }), (e) => e.code === 'WF_ERR_ARG' && /batchSize must be an integer >= 1/.test(e.message));
  }
  // refused at the first step (an empty source): the settings given to the call are undone
  const before = s2s.model.optimizer;
  await assert.rejects(s2s.train([['', 'x']], { steps: 3, lr: 5e-2, weightDecay: 0.3 }), (e) => e.code === 'WF_ERR_ARG' && /every source is empty/.test(e.message));
  assert.deepEqual(s2s.model.optimizer, before);
  assert.equal(s2s.step, 12);
  assert.equal(s2s.model.busy, null);
  s2s.dispose();
});
