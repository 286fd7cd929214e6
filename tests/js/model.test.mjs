// The JavaScript API over the wasm build: training lowers the loss, generation streams
// and is deterministic per seed, abort, dispose, busy, config choices, loading options,
// and errors as WfError with codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  createModel, createTokenizer, checkConfig, estimateMemory, load, resolveConfig, PRESETS, WfError, Model,
} from '../../src/js/node.js';
import { modelHandle } from '../../src/js/model.js';

// A small model that learns a short periodic text in a few seconds.
const SMALL = { nLayer: 2, nHead: 2, dModel: 32, dFF: 64, context: 32, vocabSize: 16, batchSize: 8 };
const TEXT = 'the cat sat on the mat. '.repeat(200);

test('a short training run lowers the loss and reports progress', async () => {
  const model = await createModel(SMALL, { text: TEXT }); // the tokenizer first: evaluate needs it
  const before = (await model.evaluate(TEXT, { maxTokens: 2000 })).loss;
  const progress = [];
  const summary = await model.train(TEXT, { steps: 120, lr: 3e-3, evalInterval: 40, onProgress: (p) => progress.push(p) });
  const after = await model.evaluate(TEXT, { maxTokens: 2000 });
  console.log(`loss ${before.toFixed(3)} -> ${after.loss.toFixed(3)}; ${summary.tokensPerSecond.toFixed(0)} tok/s`);
  assert.ok(after.loss < 0.5 * before, `loss ${before} -> ${after.loss}`);
  assert.ok(Math.abs(after.perplexity - Math.exp(after.loss)) < 1e-9);
  assert.equal(after.tokens, 62 * 32, 'whole windows of the first 2000 tokens');
  assert.equal(summary.step, 120);
  assert.equal(summary.steps, 120);
  assert.equal(summary.tokens, 120 * 8 * 32);
  assert.equal(model.step, 120);
  const evals = progress.filter((p) => p.validated);
  assert.deepEqual(evals.map((p) => p.step), [40, 80, 120]);
  assert.equal(summary.valLoss, evals[2].valLoss);
  assert.equal(progress.at(-1).step, 120);
  assert.equal(progress.at(-1).eta, 0);
  for (const p of progress) {
    assert.ok(p.tokensPerSecond > 0 && p.eta >= 0 && Number.isFinite(p.loss) && p.steps === 120);
    assert.ok(p.step < 40 ? p.valLoss === null : Number.isFinite(p.valLoss), 'valLoss is the latest validation');
  }
  model.dispose();
});

test('training yields to the event loop', async () => {
  const model = await createModel(SMALL);
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  await model.train(TEXT, { steps: 200, evalInterval: 0, yieldMs: 5 });
  clearInterval(timer);
  assert.ok(ticks >= 2, `the timer ran ${ticks} times while training`);
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
  assert.equal(a.length, 40, 'one character per token');
  assert.equal(await model.generateText('the ', opts), a, 'same seed, same text');
  assert.notEqual(await model.generateText('the ', { ...opts, seed: 124 }), a);
  // onToken sees exactly the pieces the iterator yields, with a running token count
  const seen = [];
  const text = await model.generateText('the ', { ...opts, onToken: (p, n) => seen.push([p, n]) });
  assert.equal(seen.map(([p]) => p).join(''), text);
  assert.equal(seen.at(-1)[1], 40);
  // stop strings: cut the greedy text at the first occurrence of a piece of itself
  const greedy = await model.generateText('the c', { maxTokens: 30, temperature: 0 });
  const stop = greedy.slice(12, 15);
  const cut = [];
  const stopped = await model.generateText('the c', { maxTokens: 30, temperature: 0, stop: ['#never#', stop], onToken: (p) => cut.push(p) });
  assert.equal(stopped, greedy.slice(0, greedy.indexOf(stop)));
  assert.equal(cut.join(''), stopped, 'onToken never sees the stop string');
  assert.equal(await model.generateText('the c', { maxTokens: 30, temperature: 0, stop: '#never#' }), greedy);
  assert.equal(await model.generateText('the c', { maxTokens: 0 }), '');
  // a prompt longer than the context slides the window
  assert.equal((await model.generateText(TEXT.slice(0, 500), { maxTokens: 5, temperature: 0 })).length, 5);
  model.dispose();
});

test('same seeds, same text, same model: training and generation are reproducible', async () => {
  async function run(seed) {
    const model = await createModel({ ...SMALL, seed: 3 });
    const losses = [];
    await model.train(TEXT, { steps: 30, seed, evalInterval: 10, onProgress: (p) => p.validated && losses.push(p.valLoss) });
    const text = await model.generateText('the ', { maxTokens: 30, temperature: 0.8, seed: 9 });
    const weights = model.getTensor('wte');
    model.dispose();
    return { losses, text, weights };
  }
  const a = await run(11), b = await run(11), c = await run(12);
  assert.deepEqual(a.losses, b.losses);
  assert.equal(a.text, b.text);
  assert.deepEqual(a.weights, b.weights);
  assert.notDeepEqual(a.weights, c.weights, 'another sampler seed draws other batches');
});

test('abort stops training, evaluation and generation and leaves a usable model', async () => {
  const model = await createModel(SMALL);
  const ac = new AbortController();
  let seen = 0;
  await assert.rejects(
    model.train(TEXT, { steps: 10000, yieldMs: 0, signal: ac.signal, onProgress: () => { if (++seen === 5) ac.abort(); } }),
    (e) => e.name === 'AbortError');
  const step = model.step;
  assert.ok(step >= 5 && step < 10000, `stopped at step ${step}`);
  // an already aborted signal does nothing
  await assert.rejects(model.train(TEXT, { steps: 5, signal: AbortSignal.abort() }), (e) => e.name === 'AbortError');
  assert.equal(model.step, step);
  await assert.rejects(model.evaluate(TEXT, { signal: AbortSignal.abort() }), (e) => e.name === 'AbortError');
  const gen = new AbortController();
  const pieces = [];
  await assert.rejects((async () => {
    for await (const p of model.generate('the', { maxTokens: 1000, signal: gen.signal, yieldMs: 0 })) {
      pieces.push(p);
      if (pieces.length === 3) gen.abort();
    }
  })(), (e) => e.name === 'AbortError');
  assert.equal(pieces.length, 3);
  // the reason given to abort() is what rejects, when it is an AbortError
  const custom = new AbortController();
  custom.abort(new DOMException('stop now', 'AbortError'));
  await assert.rejects(model.generateText('the', { signal: custom.signal }), (e) => e.message === 'stop now');
  // breaking out of the iterator ends the generation too
  for await (const p of model.generate('the', { maxTokens: 1000 })) { assert.ok(p); break; }
  // still usable
  await model.train(TEXT, { steps: 2, evalInterval: 0 });
  assert.equal(model.step, step + 2);
  model.dispose();
});

test('every config choice of the core builds and trains, or is refused as unsupported', async () => {
  const choices = {
    arch: ['decoder', 'encoder', 'encoder-decoder'], norm: ['layernorm', 'rmsnorm'], block: ['pre_ln', 'post_ln'],
    activation: ['gelu', 'relu', 'swiglu'], positions: ['learned', 'sinusoidal', 'rope'], tiedHead: [true, false], bias: [true, false],
  };
  const built = [];
  for (const [key, values] of Object.entries(choices)) {
    for (const value of values) {
      const problem = await checkConfig({ ...SMALL, [key]: value });
      if (problem) {
        assert.equal(problem.code, 'WF_ERR_UNSUPPORTED', `${key}=${value}: ${problem.message}`);
        await assert.rejects(createModel({ ...SMALL, [key]: value }), (e) => e.code === 'WF_ERR_UNSUPPORTED');
        continue;
      }
      const model = await createModel({ ...SMALL, [key]: value });
      assert.equal(model.config[key], value);
      if (model.config.arch === 'decoder') {
        const s = await model.train(TEXT, { steps: 2, evalInterval: 0 });
        assert.ok(Number.isFinite(s.loss));
        assert.equal((await model.generateText('the', { maxTokens: 3 })).length, 3);
      } else {
        // text training is a decoder's; encoders and encoder-decoders have their own classes
        const use = new RegExp(`${value}: use ${value === 'encoder' ? 'Encoder' : 'Seq2Seq'}\\.from`);
        await assert.rejects(model.train(TEXT, { steps: 2 }), (e) => e.code === 'WF_ERR_STATE' && use.test(e.message));
        await assert.rejects(model.generateText('the'), (e) => e.code === 'WF_ERR_STATE');
        await assert.rejects(model.evaluate(TEXT), (e) => e.code === 'WF_ERR_STATE');
      }
      model.dispose();
      built.push(`${key}=${value}`);
    }
  }
  for (const c of ['arch=decoder', 'activation=gelu', 'activation=relu', 'positions=learned', 'positions=sinusoidal',
    'tiedHead=true', 'tiedHead=false', 'bias=true', 'bias=false']) assert.ok(built.includes(c), `${c} builds`);
  // the numeric form of the enums is accepted too
  assert.equal(resolveConfig({ activation: 1 }).activation, 'relu');
});

test('presets are the benchmark configs A and B', async () => {
  assert.deepEqual(
    Object.fromEntries(['nLayer', 'nHead', 'dModel', 'dFF', 'context', 'vocabSize', 'batchSize'].map((k) => [k, PRESETS.tiny[k]])),
    { nLayer: 4, nHead: 4, dModel: 128, dFF: 512, context: 64, vocabSize: 96, batchSize: 8 });
  assert.deepEqual(
    Object.fromEntries(['nLayer', 'nHead', 'dModel', 'dFF', 'context', 'vocabSize', 'batchSize'].map((k) => [k, PRESETS.baby[k]])),
    { nLayer: 6, nHead: 6, dModel: 384, dFF: 1536, context: 256, vocabSize: 96, batchSize: 4 });
  const tiny = await createModel('tiny');
  const c = tiny.config;
  // the recipe comes with the named preset (bench/ttq/RESULTS.md): Muon, beta2 0.99
  assert.deepEqual([c.arch, c.block, c.norm, c.positions, c.activation, c.tiedHead], ['decoder', 'pre_ln', 'layernorm', 'learned', 'gelu', true]);
  assert.equal(tiny.paramCount, 813824);
  assert.equal(tiny.optimizer.lr, PRESETS.tiny.lr, 'the preset lr is the model\'s');
  assert.deepEqual([tiny.optimizer.beta2, tiny.optimizer.muon], [0.99, 1]);
  // a config without a preset keeps the tables' defaults for the recipe's fields
  const plain = await createModel({ nLayer: 1, dModel: 16, nHead: 2, dFF: 32, context: 8 });
  assert.deepEqual([plain.optimizer.beta2, plain.optimizer.muon], [0.95, 0]);
  plain.dispose();
  const micro = await createModel('micro');
  assert.deepEqual([micro.config.nLayer, micro.config.dModel, micro.config.positions, micro.optimizer.lr, micro.optimizer.beta2, micro.optimizer.muon, micro.defaultBatchSize],
    [2, 64, 'rope', 0.003, 0.99, 1, 16]);
  micro.dispose();
  const info = tiny.info();
  assert.equal(info.paramCount, 813824);
  assert.equal(info.step, 0);
  assert.equal(info.tokenizer, null);
  assert.equal(info.busy, null);
  tiny.dispose();
  const baby = await createModel({ preset: 'baby', seed: 5 });
  assert.equal(baby.config.nLayer, 6);
  assert.equal(baby.config.seed, 5);
  assert.equal(baby.defaultBatchSize, 4);
  baby.dispose();
});

test('learning-rate schedule: per call by default, kept on request', async () => {
  const model = await createModel(SMALL);
  await model.train(TEXT, { steps: 20, warmup: 5, lr: 1e-3, evalInterval: 0 });
  assert.deepEqual([model.optimizer.warmup, model.optimizer.decaySteps], [5, 15]);
  model.setOptimizer({ warmup: 3, decaySteps: 100 });
  await model.train(TEXT, { steps: 10, keepSchedule: true, evalInterval: 0 });
  assert.deepEqual([model.optimizer.warmup, model.optimizer.decaySteps], [3, 100]);
  await model.train(TEXT, { steps: 10, evalInterval: 0 });
  assert.deepEqual([model.optimizer.start, model.optimizer.warmup, model.optimizer.decaySteps], [30, 1, 9],
    'a new schedule from step 30');
  const clip = await model.train(TEXT, { steps: 1, gradClip: 0.5, weightDecay: 0, evalInterval: 0 });
  assert.equal(clip.step, 41);
  assert.equal(model.optimizer.gradClip, 0.5);
  assert.equal(model.optimizer.weightDecay, 0);
  model.dispose();
});

test('training on token ids; a model without a tokenizer cannot generate', async () => {
  const model = await createModel(SMALL);
  const ids = Int32Array.from({ length: 2000 }, (_, i) => (i * 7) % 16);
  const s = await model.train(ids, { steps: 5, evalInterval: 0 });
  assert.equal(s.step, 5);
  assert.equal(model.tokenizer, null);
  await assert.rejects(model.generateText('x'), (e) => e.code === 'WF_ERR_STATE' && /tokenizer/.test(e.message));
  const bad = ids.map((v, i) => (i % 10 === 0 ? 99 : v)); // every window holds a 99
  await assert.rejects(model.train(bad, { steps: 1, evalInterval: 0 }), (e) => e.code === 'WF_ERR_TOKEN');
  assert.equal(model.step, 5);
  model.dispose();
});

test('errors are WfError with the core status and message', async () => {
  const bad = await checkConfig({ ...SMALL, nHead: 3 });
  assert.equal(bad.code, 'WF_ERR_CONFIG');
  assert.match(bad.message, /does not divide/);
  assert.equal(await checkConfig('tiny'), null);
  await assert.rejects(createModel({ ...SMALL, nHead: 3 }), (e) => e instanceof WfError && e.code === 'WF_ERR_CONFIG' && /does not divide/.test(e.message));
  await assert.rejects(createModel({ ...SMALL, nEncLayer: 2 }), (e) => e.code === 'WF_ERR_CONFIG' && /nEncLayer/.test(e.message));
  await assert.rejects(createModel({ ...SMALL, dropout: 1 }), (e) => e.code === 'WF_ERR_CONFIG' && /dropout/.test(e.message));
  await assert.rejects(createModel('huge'), (e) => e.code === 'WF_ERR_CONFIG' && /preset/.test(e.message));
  await assert.rejects(createModel({ preset: 'huge' }), (e) => e.code === 'WF_ERR_CONFIG' && /preset/.test(e.message));
  await assert.rejects(createModel(42), (e) => e.code === 'WF_ERR_CONFIG');
  await assert.rejects(createModel({ ...SMALL, activation: 'tanh' }), (e) => e.code === 'WF_ERR_CONFIG' && /tanh/.test(e.message));
  await assert.rejects(createModel({ ...SMALL, nLayer: 1.5 }), (e) => e.code === 'WF_ERR_CONFIG' && /integer/.test(e.message));

  const model = await createModel(SMALL);
  const lr = model.optimizer.lr;
  await assert.rejects(model.train('x'.repeat(10), { steps: 1 }), (e) => e.code === 'WF_ERR_ARG' && /training split/.test(e.message));
  await assert.rejects(model.train(TEXT.slice(0, 300), { steps: 1, lr: 0.5 }), (e) => e.code === 'WF_ERR_ARG' && /validation split/.test(e.message));
  assert.equal(model.optimizer.lr, lr, 'a refused run changes no setting');
  assert.equal(model.step, 0);
  await model.train(TEXT.slice(0, 300), { steps: 1, valFraction: 0 }); // no validation, no problem
  for (const [opts, re] of [[{ steps: 0 }, /steps/], [{ steps: 1.5 }, /steps/], [{ batchSize: 0 }, /batchSize/],
    [{ evalInterval: -1 }, /evalInterval/], [{ steps: 2, lr: NaN }, /lr must be/], [{ steps: 2, valFraction: 1 }, /val_fraction|split/]]) {
    await assert.rejects(model.train(TEXT, opts), (e) => e.code === 'WF_ERR_ARG' && re.test(e.message), JSON.stringify(opts));
  }
  await assert.rejects(model.evaluate('the cat'), (e) => e.code === 'WF_ERR_ARG' && /at least 33 tokens/.test(e.message));
  await assert.rejects(model.generateText('the', { maxTokens: -1 }), (e) => e.code === 'WF_ERR_ARG');
  await assert.rejects(model.generateText('the', { temperature: -1 }), (e) => e instanceof WfError && e.code === 'WF_ERR_ARG');
  assert.throws(() => model.forward(new Int32Array([1, 99]), null, 1, 2), (e) => e.code === 'WF_ERR_TOKEN');
  assert.throws(() => model.getTensor('nope'), (e) => e.code === 'WF_ERR_ARG' && /nope/.test(e.message));
  assert.throws(() => model.setTensor('wte', [1, 2]), (e) => e.code === 'WF_ERR_ARG');
  // a text with more characters than the vocabulary
  const narrow = await createModel({ ...SMALL, vocabSize: 4 });
  await assert.rejects(narrow.train(TEXT, { steps: 1 }), (e) => e.code === 'WF_ERR_CONFIG' && /distinct characters/.test(e.message));
  narrow.dispose();
  model.dispose();
});

test('one call at a time; dispose frees and later use throws a clear error', async () => {
  const model = await createModel(SMALL);
  const running = model.train(TEXT, { steps: 30, yieldMs: 0, evalInterval: 0 });
  await assert.rejects(model.evaluate(TEXT), (e) => e.code === 'WF_ERR_BUSY' && /busy with training/.test(e.message));
  await assert.rejects(model.train(TEXT), (e) => e.code === 'WF_ERR_BUSY');
  await assert.rejects(model.generateText('the'), (e) => e.code === 'WF_ERR_BUSY');
  assert.throws(() => model.setOptimizer({ lr: 1 }), (e) => e.code === 'WF_ERR_BUSY');
  assert.equal(model.info().busy, 'training');
  await running;
  const gen = model.generate('the', { maxTokens: 200, yieldMs: 0 });
  await gen.next();
  await assert.rejects(model.train(TEXT, { steps: 1 }), (e) => e.code === 'WF_ERR_BUSY' && /generation/.test(e.message));
  await gen.return();
  await model.train(TEXT, { steps: 1, evalInterval: 0 }); // idle again

  // dispose while training: the run stops with WF_ERR_DISPOSED
  const doomed = model.train(TEXT, { steps: 10000, yieldMs: 0, evalInterval: 0 });
  await new Promise((resolve) => setTimeout(resolve, 20));
  model.dispose();
  await assert.rejects(doomed, (e) => e.code === 'WF_ERR_DISPOSED');
  for (const use of [() => model.step, () => model.config, () => model.info(), () => model.tensors(), () => model.paramCount]) {
    assert.throws(use, (e) => e instanceof WfError && e.code === 'WF_ERR_DISPOSED' && /disposed/.test(e.message));
  }
  await assert.rejects(model.train(TEXT, { steps: 1 }), (e) => e.code === 'WF_ERR_DISPOSED');
  await assert.rejects(model.evaluate(TEXT), (e) => e.code === 'WF_ERR_DISPOSED');
  await assert.rejects(model.generateText('the'), (e) => e.code === 'WF_ERR_DISPOSED');
  model.dispose(); // twice is fine
});

test('the wasm is found by default, and wasmBinary / wasmUrl override it', async () => {
  const wasmPath = new URL('../../dist/wasmformer.wasm', import.meta.url);
  const a = await load(), b = await load();
  assert.equal(a, b, 'one instance for the default location');
  const own = await load({ wasmBinary: readFileSync(wasmPath) });
  assert.notEqual(own, a, 'a wasmBinary makes its own instance');
  const fromUrl = await createModel(SMALL, { wasmUrl: wasmPath });
  const fromPath = await createModel(SMALL, { wasmUrl: wasmPath.pathname });
  assert.equal(modelHandle(fromUrl).rt, a, 'the default location given explicitly: the same instance');
  assert.notEqual(modelHandle(fromPath).rt, a, 'another location, another instance');
  assert.ok(fromUrl instanceof Model);
  // two models on two instances of one build (a file path and bytes name the SIMD128 one)
  // train independently to the same weights
  const other = await createModel(SMALL, { wasmBinary: readFileSync(wasmPath) });
  await fromPath.train(TEXT, { steps: 3, evalInterval: 0 });
  await other.train(TEXT, { steps: 3, evalInterval: 0 });
  assert.deepEqual(fromPath.getTensor('wte'), other.getTensor('wte'));
  for (const m of [fromUrl, fromPath, other]) m.dispose();
  await assert.rejects(createModel(SMALL, { wasmUrl: '/nonexistent/wasmformer.wasm' }),
    (e) => e.code === 'WF_ERR_LOAD' && /nonexistent/.test(e.message));
  await assert.rejects(load({ wasmBinary: new Uint8Array([0, 97, 115, 109, 9, 9, 9, 9]) }), (e) => e.code === 'WF_ERR_LOAD');
});

test('tokenizer round trip and memory estimates', async () => {
  const tok = await createTokenizer('héllo wörld ✓ 😀');
  const ids = tok.encode('wörld 😀?');
  assert.equal(ids[ids.length - 1], 0, 'unknown character is id 0');
  assert.equal(tok.decode(ids), 'wörld 😀\uFFFD');
  tok.dispose();
  assert.throws(() => tok.encode('x'), (e) => e.code === 'WF_ERR_DISPOSED');
  const est = await estimateMemory('tiny', 8, 64);
  const model = await createModel('tiny');
  assert.equal(est.params, model.memory().params);
  assert.ok(est.activations > 0 && est.total > est.params * 4);
  assert.equal(est.count, model.paramCount);
  model.dispose();
  // a width of 30 pads rows to 4 floats: the count leaves the padding out, the bytes do not
  const odd = { nLayer: 1, nHead: 3, dModel: 30, dFF: 60, context: 16, vocabSize: 11 };
  const oddEst = await estimateMemory(odd);
  const oddModel = await createModel(odd);
  assert.equal(oddEst.count, oddModel.paramCount);
  assert.equal(oddModel.memory().count, oddModel.paramCount);
  assert.ok(oddEst.params > 4 * oddEst.count, `${oddEst.params} bytes hold ${oddEst.count} parameters and padding`);
  oddModel.dispose();
});

test('a run takes its text once: paused and gone on with, it trains on the core\'s copy, and keeps to that text', async () => {
  const model = await createModel({ ...SMALL, vocabSize: 20 }, { threads: 1 });
  const warnings = [];
  model.startRun(`${TEXT}é`, { steps: 6, evalInterval: 0, seed: 3, onWarning: (w) => warnings.push(w) }); // learns the tokenizer
  let encoded = 0;
  const tok = model.tokenizer, encode = tok.encode.bind(tok);
  tok.encode = (t) => { encoded += t.length > 1; return encode(t); }; // texts, not the unknown-character check's single characters
  for (let i = 0; i < 3; i++) await model.continueRun({ steps: 1 }); // paused after each step
  assert.equal(encoded, 0, 'continueRun takes no text: the run has its tokens');
  assert.equal(model.run.steps, 3);
  // going on with another text is refused, and the run is as it was
  await assert.rejects(model.train(TEXT, { keepSchedule: true }), (e) => e.code === 'WF_ERR_STATE' && /tokens it began with/.test(e.message));
  assert.equal(model.run.steps, 3);
  await model.train(`${TEXT}é`, { keepSchedule: true, onWarning: (w) => warnings.push(w) }); // the same text: to the run's end
  assert.equal(model.step, 6);
  assert.equal(model.run, null, 'train() ended the run it completed');
  // characters the tokenizer lacks are said at every call that reads the text
  assert.equal(warnings.length, 0, 'the first text built the tokenizer: nothing unknown');
  await model.train(`${TEXT}é`.replace(/[a-d]/g, 'Z'), { steps: 1, evalInterval: 0, onWarning: (w) => warnings.push(w) });
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /are characters the model's tokenizer does not know \("Z", …\)/);
  model.dispose();
});
