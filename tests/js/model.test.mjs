// The JavaScript API over the wasm build: training lowers the loss, generation streams
// and is deterministic per seed, abort, dispose, and errors as WfError with codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createModel, createTokenizer, checkConfig, estimateMemory, WfError } from '../../src/js/node.js';

// A small model that learns a short periodic text in a few seconds.
const SMALL = { nLayer: 2, nHead: 2, dModel: 32, dFF: 64, context: 32, vocabSize: 16, batchSize: 8 };
const TEXT = 'the cat sat on the mat. '.repeat(200);

test('a short training run lowers the loss', async () => {
  const model = await createModel(SMALL);
  const before = model.evaluate(TEXT, { maxTokens: 2000 }).loss;
  const progress = [];
  const summary = await model.train(TEXT, { steps: 120, lr: 3e-3, evalInterval: 40, onProgress: (p) => progress.push(p) });
  const after = model.evaluate(TEXT, { maxTokens: 2000 }).loss;
  console.log(`loss ${before.toFixed(3)} -> ${after.toFixed(3)}; ${summary.tokensPerSecond.toFixed(0)} tok/s`);
  assert.ok(after < 0.5 * before, `loss ${before} -> ${after}`);
  assert.equal(summary.step, 120);
  assert.equal(model.step, 120);
  const evals = progress.filter((p) => p.valLoss !== null);
  assert.deepEqual(evals.map((p) => p.step), [40, 80, 120]);
  for (const p of progress) assert.ok(p.tokensPerSecond > 0 && p.eta >= 0 && Number.isFinite(p.loss));
  model.dispose();
});

test('generation streams pieces, is deterministic per seed, and honours stop strings', async () => {
  const model = await createModel({ ...SMALL, seed: 7 });
  await model.train(TEXT, { steps: 60, lr: 3e-3, evalInterval: 0 });
  const opts = { maxTokens: 40, temperature: 0.9, seed: 123 };
  const pieces = [];
  for await (const piece of model.generate('the ', opts)) pieces.push(piece);
  assert.ok(pieces.length > 1, 'streamed in pieces');
  const a = pieces.join('');
  assert.equal(await model.generateText('the ', opts), a, 'same seed, same text');
  assert.notEqual(await model.generateText('the ', { ...opts, seed: 124 }), a);
  const tokens = [];
  await model.generateText('the ', { ...opts, onToken: (p, id) => tokens.push(id) });
  assert.equal(tokens.length, 40);
  // stop strings: cut the greedy text at the first occurrence of a piece of itself
  const greedy = await model.generateText('the c', { maxTokens: 30, temperature: 0 });
  const stop = greedy.slice(12, 15);
  const stopped = await model.generateText('the c', { maxTokens: 30, temperature: 0, stop: ['#never#', stop] });
  assert.equal(stopped, greedy.slice(0, greedy.indexOf(stop)));
  assert.equal(await model.generateText('the c', { maxTokens: 30, temperature: 0, stop: ['#never#'] }), greedy);
  // a prompt longer than the context slides the window
  assert.equal((await model.generateText(TEXT.slice(0, 500), { maxTokens: 5, temperature: 0 })).length, 5);
  model.dispose();
});

test('abort stops training and generation and leaves a usable model', async () => {
  const model = await createModel(SMALL);
  const ac = new AbortController();
  let seen = 0;
  await assert.rejects(
    model.train(TEXT, { steps: 10000, yieldMs: 0, signal: ac.signal, onProgress: () => { if (++seen === 5) ac.abort(); } }),
    (e) => e.name === 'AbortError');
  const step = model.step;
  assert.ok(step >= 5 && step < 10000, `stopped at step ${step}`);
  const gen = new AbortController();
  const pieces = [];
  await assert.rejects((async () => {
    for await (const p of model.generate('the', { maxTokens: 1000, signal: gen.signal, yieldMs: 0 })) {
      pieces.push(p);
      if (pieces.length === 3) gen.abort();
    }
  })(), (e) => e.name === 'AbortError');
  assert.equal(pieces.length, 3);
  // still usable
  await model.train(TEXT, { steps: 2, evalInterval: 0 });
  assert.equal(model.step, step + 2);
  model.dispose();
});

test('errors are WfError with the core status and message', async () => {
  const bad = await checkConfig({ ...SMALL, nHead: 3 });
  assert.equal(bad.code, 'WF_ERR_CONFIG');
  assert.match(bad.message, /does not divide/);
  assert.equal(await checkConfig('tiny'), null);
  await assert.rejects(createModel({ ...SMALL, nHead: 3 }), (e) => e instanceof WfError && e.code === 'WF_ERR_CONFIG' && /does not divide/.test(e.message));
  await assert.rejects(createModel({ ...SMALL, nEncLayer: 2 }), (e) => e.code === 'WF_ERR_CONFIG' && /n_enc_layer/.test(e.message));
  await assert.rejects(createModel({ ...SMALL, dropout: 1 }), (e) => e.code === 'WF_ERR_CONFIG' && /dropout/.test(e.message));
  await assert.rejects(createModel('huge'), (e) => e.code === 'WF_ERR_CONFIG' && /preset/.test(e.message));
  await assert.rejects(createModel({ ...SMALL, activation: 'tanh' }), (e) => e.code === 'WF_ERR_CONFIG');

  const model = await createModel(SMALL);
  await assert.rejects(model.train('x'.repeat(10), { steps: 1 }), (e) => e.code === 'WF_ERR_ARG' && /split/.test(e.message));
  await assert.rejects(model.train(TEXT, { steps: 0 }), (e) => e.code === 'WF_ERR_ARG');
  await assert.rejects(model.train(TEXT, { steps: 2, lr: NaN }), (e) => e.code === 'WF_ERR_ARG' && /learning rate/.test(e.message));
  assert.throws(() => model.forward(new Int32Array([1, 99]), null, 1, 2), (e) => e.code === 'WF_ERR_TOKEN');
  // a text with more characters than the vocabulary
  const wide = await createModel({ ...SMALL, vocabSize: 4 });
  await assert.rejects(wide.train(TEXT, { steps: 1 }), (e) => e.code === 'WF_ERR_CONFIG' && /distinct characters/.test(e.message));
  wide.dispose();
  // one call at a time
  const running = model.train(TEXT, { steps: 30, yieldMs: 0, evalInterval: 0 });
  assert.throws(() => model.evaluate(TEXT), (e) => e.code === 'WF_ERR_BUSY');
  await running;
  model.dispose();
  assert.throws(() => model.step, (e) => e.code === 'WF_ERR_DISPOSED');
  await assert.rejects(model.train(TEXT, { steps: 1 }), (e) => e.code === 'WF_ERR_DISPOSED');
  model.dispose(); // twice is fine
});

test('tokenizer round trip and memory estimates', async () => {
  const tok = await createTokenizer('héllo wörld ✓ 😀');
  const ids = tok.encode('wörld 😀?');
  assert.equal(ids[ids.length - 1], 0, 'unknown character is id 0');
  assert.equal(tok.decode(ids), 'wörld 😀\uFFFD');
  tok.dispose();
  const est = await estimateMemory('tiny', 8, 64);
  const model = await createModel('tiny');
  assert.equal(model.paramCount, 813824);
  assert.equal(est.params, model.memory().params);
  assert.ok(est.activations > 0 && est.total > est.params * 4);
  model.dispose();
});
