// docs/ERRORS.md, row by row, through the JavaScript API (tests/test_errors.c walks the same
// rows in C): every class of bad input throws a WfError with its code and a message that
// says what is wrong, and leaves the model as it was: its checkpoint bytes (config,
// weights, AdamW moments, step, schedule, sampler state, tokenizer) do not change.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadModel,
  checkConfig, createModel, createSeq2Seq, createTokenizer, createWorkerModel, estimateMemory, exportPeftDir, exportSafetensorsDir,
  importSafetensorsDir, load, loadModelFile, saveModelFile, WfError,
} from '../../src/js/node.js';
import { modelHandle } from '../../src/js/model.js';

const SMALL = { nLayer: 2, nHead: 2, dModel: 16, dFF: 32, context: 16, vocabSize: 40, batchSize: 4 };
const TEXT = 'the cat sat on the mat. '.repeat(100);

async function trained(extra = {}) {
  const model = await createModel({ ...SMALL, ...extra });
  await model.train(TEXT, { steps: 3, evalInterval: 0 });
  return model;
}

const same = (a, b) => a.length === b.length && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;

/** Runs fn, which must throw (or reject with) code and a message matching re, and checks
 * the model's checkpoint bytes are the same afterwards. */
async function refuses(model, fn, code, re) {
  const before = model.save();
  await assert.rejects(async () => fn(), (e) => {
    assert.ok(e instanceof WfError, `a WfError, not ${e}`);
    assert.equal(e.code, code, e.message);
    assert.match(e.message, re);
    return true;
  });
  assert.ok(same(model.save(), before), `${re}: the model changed`);
}

test('E1: zero or negative sizes', async () => {
  const model = await trained();
  for (const [field, name, value] of [['vocabSize', 'vocab_size', 0], ['vocabSize', 'vocab_size', -5], ['nLayer', 'n_layer', 0],
    ['nLayer', 'n_layer', -1], ['nHead', 'n_head', 0], ['dModel', 'd_model', -16], ['dFF', 'd_ff', 0], ['dFF', 'd_ff', -32]]) {
    const re = new RegExp(`${field} ${value} is outside`);
    const checked = await checkConfig({ ...SMALL, [field]: value });
    assert.equal(checked.code, 'WF_ERR_CONFIG');
    assert.match(checked.message, re);
    await refuses(model, () => createModel({ ...SMALL, [field]: value }), 'WF_ERR_CONFIG', re);
    await refuses(model, () => createWorkerModel({ ...SMALL, [field]: value }), 'WF_ERR_CONFIG', re);
  }
  model.dispose();
});

test('E2: heads that do not divide the width', async () => {
  assert.match((await checkConfig({ ...SMALL, nHead: 3 })).message, /nHead 3 does not divide dModel 16/);
  await assert.rejects(createModel({ ...SMALL, nHead: 3 }), (e) => e.code === 'WF_ERR_CONFIG' && /does not divide/.test(e.message));
  await assert.rejects(createModel({ ...SMALL, nHead: 32 }), (e) => e.code === 'WF_ERR_CONFIG' && /nHead 32 is outside \[1, dModel = 16\]/.test(e.message));
  await assert.rejects(createModel({ ...SMALL, positions: 'rope', nHead: 16 }), (e) => e.code === 'WF_ERR_CONFIG' && /must be even/.test(e.message));
});

test('E3: context 0', async () => {
  await assert.rejects(createModel({ ...SMALL, context: 0 }), (e) => e.code === 'WF_ERR_CONFIG' && /context 0 is outside \[1, 65536\]/.test(e.message));
  await assert.rejects(createModel({ ...SMALL, context: -64 }), (e) => e.code === 'WF_ERR_CONFIG' && /context -64 is outside/.test(e.message));
});

test('E4: absurd sizes and choices that do not exist', async () => {
  const cases = [
    [{ vocabSize: 2 ** 30 }, 'WF_ERR_CONFIG', /vocabSize 1073741824 is outside \[2, 16777216\]/],
    [{ nLayer: 100000 }, 'WF_ERR_CONFIG', /nLayer 100000 is outside/],
    [{ dModel: 2 ** 20, nHead: 1, nLayer: 1000 }, 'WF_ERR_CONFIG', /parameters; at most 2\^31 - 1/],
    [{ activation: 'tanh' }, 'WF_ERR_CONFIG', /activation must be one of "gelu", "relu", "swiglu", "relu2", "gelu_exact", not "tanh" \(a string\)/],
    [{ nLayer: 1.5 }, 'WF_ERR_CONFIG', /nLayer must be an integer, not 1.5/],
    [{ dModel: '16' }, 'WF_ERR_CONFIG', /dModel must be an integer/],
    [{ normEps: NaN }, 'WF_ERR_CONFIG', /normEps must be in \(0, 1\)/],
    [{ dropout: 1 }, 'WF_ERR_CONFIG', /dropout must be in \[0, 1\)/],
    [{ preset: 'huge' }, 'WF_ERR_CONFIG', /unknown preset "huge"/],
  ];
  for (const [cfg, code, re] of cases) {
    await assert.rejects(createModel({ ...SMALL, ...cfg }), (e) => e instanceof WfError && e.code === code && re.test(e.message), String(re));
  }
  await assert.rejects(createModel(null), (e) => e.code === 'WF_ERR_CONFIG' && /preset name or an object/.test(e.message));
});

test('E5: sizes beyond the 4 GB wasm memory are refused before allocating, with the estimate', async () => {
  const rt = await load();
  const big = { ...SMALL, vocabSize: 50000, dModel: 4096, nHead: 32, dFF: 16384, nLayer: 8, context: 2048 };
  const est = await estimateMemory(big);
  assert.ok(est.total > 4294967296);
  const heapSize = rt.heapSize, inUse = rt.heapInUse();
  const want = `the model needs ${(est.total / 1e9).toFixed(2)} GB before activations; this build addresses at most 4.29 GB`;
  await assert.rejects(createModel(big), (e) => e.code === 'WF_ERR_NOMEM' && e.message === want, want);
  // checkConfig reads the core's verdict (wf_config_memory), not a copy of its bound
  assert.deepEqual(await checkConfig(big), { code: 'WF_ERR_NOMEM', message: want });
  assert.equal(est.budget, 0.95 * 2 ** 32, "the core's budget: 95% of the 4 GB a wasm module addresses");
  assert.equal(rt.heapSize, heapSize, 'the wasm memory did not grow');
  assert.equal(rt.heapInUse(), inUse, 'nothing was allocated (or everything was freed)');

  // a batch whose activations do not fit, on a model that does: train and evaluate refuse it
  // before copying a single id into the heap
  const model = await trained();
  const B = 2 ** 22;
  const need = (await estimateMemory(SMALL, B, 16)).activations;
  const batchMsg = `a batch of ${B} x 16 needs ${(need / 1e9).toFixed(2)} GB of activations; this build allows at most 4.08 GB`;
  await refuses(model, () => model.train(TEXT, { steps: 1, batchSize: B }), 'WF_ERR_NOMEM', new RegExp(batchMsg));
  assert.equal(rt.heapSize, heapSize, 'the wasm memory did not grow');
  // a batch size past int32 would wrap to 0 in C's estimate: refused on its ids' size
  await refuses(model, () => model.train(TEXT, { steps: 1, batchSize: 2 ** 32 }), 'WF_ERR_NOMEM',
    /a batch of 4294967296 x 16 needs 274.88 GB for its ids alone/);
  assert.equal(rt.heapSize, heapSize, 'the wasm memory did not grow');
  model.dispose();

  // one buffer beyond malloc's 32-bit size would wrap (2 ** 35 bytes to malloc(0)) and be
  // written past: the JavaScript side refuses it, and sizes that are not integers
  const mrt = modelHandle(model).rt;
  for (const bytes of [2 ** 35, 2 ** 32, 2 ** 32 - 63, 2 ** 53, NaN, Infinity, 1.5]) {
    assert.throws(() => mrt.alloc(bytes), (e) => e.code === 'WF_ERR_NOMEM' && /could not allocate .* bytes in the wasm heap/.test(e.message), String(bytes));
  }
  assert.equal(mrt.heapSize, heapSize, 'the wasm memory did not grow');
});

test('E6: token ids out of range', async () => {
  const model = await trained();
  const ids = Array.from({ length: 16 }, (_, i) => i % 40);
  await refuses(model, () => model.trainStep([...ids.slice(0, 5), 40, ...ids.slice(6)], ids, 1, 16), 'WF_ERR_TOKEN',
    /input token 40 at position 5 is outside \[0, 40\)/);
  await refuses(model, () => model.trainStep(ids, [...ids.slice(0, 15), 1000], 1, 16), 'WF_ERR_TOKEN', /target token 1000 at position 15/);
  await refuses(model, () => model.forward([-3, 1], null, 1, 2), 'WF_ERR_TOKEN', /input token -3 at position 0/);
  await refuses(model, () => model.train(Int32Array.from({ length: 400 }, (_, i) => (i % 7 ? i % 40 : 77)), { steps: 1 }),
    'WF_ERR_TOKEN', /token 77/);
  assert.throws(() => model.tokenizer.decode([0, 999]), (e) => e.code === 'WF_ERR_TOKEN');
  model.dispose();
});

test('E6: ids that are not int32 integers are refused wherever ids enter the module, never converted', async () => {
  // before: 2 ** 32 + 1 trained as id 1, NaN as 0, 2.5 as 2, "7" as 7
  const model = await trained();
  const ids = Array.from({ length: 16 }, (_, i) => i % 40);
  const long = Array.from({ length: 400 }, (_, i) => i % 40);
  const cases = [
    [2 ** 32 + 1, /4294967297 at position 3 is beyond 32 bits \(ids are int32\)/],
    [NaN, /NaN at position 3 is not an integer/],
    [2.5, /2\.5 at position 3 is not an integer/],
    ['7', /"7" \(a string\) at position 3 is not a number/],
    [undefined, /undefined at position 3 is not a number/],
  ];
  for (const [bad, re] of cases) {
    const one = [...ids.slice(0, 3), bad, ...ids.slice(4)], many = [...long.slice(0, 3), bad, ...long.slice(4)];
    await refuses(model, () => model.train(many, { steps: 1 }), 'WF_ERR_TOKEN', new RegExp(`^token ${re.source}`));
    await refuses(model, () => model.evaluate(many), 'WF_ERR_TOKEN', re);
    await refuses(model, () => model.trainStep(one, ids, 1, 16), 'WF_ERR_TOKEN', new RegExp(`^batch.inputs value ${re.source}`));
    await refuses(model, () => model.trainStep(ids, one, 1, 16), 'WF_ERR_TOKEN', new RegExp(`^batch.targets value ${re.source}`));
    await refuses(model, () => model.forward(one, null, 1, 16), 'WF_ERR_TOKEN', re);
    await refuses(model, () => model.selfAttention(one), 'WF_ERR_TOKEN', re);
    assert.throws(() => model.tokenizer.decode(one), (e) => e.code === 'WF_ERR_TOKEN' && re.test(e.message));
  }
  // a Uint32Array's 2 ** 32 - 1 would have been target -1, an ignored position
  const u32 = Uint32Array.from(ids);
  u32[3] = 2 ** 32 - 1;
  await refuses(model, () => model.trainStep(ids, u32, 1, 16), 'WF_ERR_TOKEN', /batch.targets value 4294967295 at position 3 is beyond 32 bits/);
  // lengths are counts, not ids: WF_ERR_ARG
  await refuses(model, () => modelHandle(model).forwardBatch({ inputs: ids, lengths: [2.5], B: 1, T: 16 }),
    'WF_ERR_ARG', /batch.lengths value 2\.5 at position 0 is not an integer/);

  // a worker model checks the same, in the worker
  const wm = await createWorkerModel(SMALL);
  await wm.train(TEXT, { steps: 1, evalInterval: 0 });
  await assert.rejects(wm.train([...long.slice(0, 3), 2.5, ...long.slice(4)], { steps: 1 }),
    (e) => e instanceof WfError && e.code === 'WF_ERR_TOKEN' && /token 2\.5 at position 3 is not an integer/.test(e.message));
  assert.equal((await wm.info()).step, 1);
  wm.dispose();

  // an encoder-decoder's sources and targets
  const s2s = await createSeq2Seq({ nLayer: 1, nEncLayer: 1, nHead: 2, dModel: 16, dFF: 32, context: 16, vocabSize: 12 });
  const before = s2s.model.save();
  await assert.rejects(s2s.decodeIds([1, 2 ** 32 + 1]), (e) => e.code === 'WF_ERR_TOKEN' && /token 4294967297 at position 1/.test(e.message));
  assert.throws(() => s2s.trainStep([[[1, 2], [3, 2.5]]]), (e) => e.code === 'WF_ERR_TOKEN' && /token 2\.5 at position 1/.test(e.message));
  assert.ok(same(s2s.model.save(), before), 'the encoder-decoder is unchanged');
  s2s.dispose();
  model.dispose();
});

test('E7: batch shapes: below 1, beyond the context, every target ignored', async () => {
  const model = await trained();
  const ids = Array.from({ length: 34 }, (_, i) => i % 40);
  await refuses(model, () => model.trainStep(ids, ids, 0, 16), 'WF_ERR_ARG', /batch shape 0 x 16: both must be >= 1/);
  await refuses(model, () => model.trainStep(ids, ids, 2, 17), 'WF_ERR_ARG', /sequence length 17 exceeds the model's context of 16/);
  await refuses(model, () => model.trainStep(ids.slice(0, 32), ids.slice(0, 32).map(() => -1), 2, 16), 'WF_ERR_ARG', /nothing to learn from/);
  // arrays of another length than B x T: the core would read past them
  await refuses(model, () => model.trainStep([1, 2], [2, 3], 1, 16), 'WF_ERR_ARG', /batch.inputs has 2 values; B, T, S and dModel make it 16/);
  await refuses(model, () => model.trainStep(ids.slice(0, 16), [2, 3], 1, 16), 'WF_ERR_ARG', /batch.targets has 2 values; .* make it 16/);
  await refuses(model, () => model.forward(ids.slice(0, 20), null, 1, 16), 'WF_ERR_ARG', /batch.inputs has 20 values; .* make it 16/);
  await refuses(model, () => model.forward(ids.slice(0, 16), [1], 1, 16), 'WF_ERR_ARG', /batch.targets has 1 values/);
  await refuses(model, () => model.trainStep(ids.slice(0, 16), ids.slice(0, 16), 1.5, 16), 'WF_ERR_ARG', /batch shape 1.5 x 16: both must be integers/);
  await refuses(model, () => model.train(TEXT, { steps: 1, context: 17 }), 'WF_ERR_ARG', /sequence length 17 exceeds the model's context of 16/);
  await refuses(model, () => model.train(TEXT, { steps: 1, batchSize: 0 }), 'WF_ERR_ARG', /batchSize must be an integer >= 1, not 0/);
  model.dispose();
});

test('E8: empty and one-character corpora', async () => {
  let model = await createModel(SMALL);
  // evaluate never builds a tokenizer from the text it is asked to measure
  await assert.rejects(model.evaluate(TEXT), (e) => e.code === 'WF_ERR_STATE' && /has no tokenizer yet/.test(e.message));
  assert.equal(model.tokenizer, null, 'evaluate keeps no tokenizer');
  // the tokenizer train builds joins the model with the first step, not before: not while
  // later checks can still refuse the call, nor when the first step itself fails
  await assert.rejects(model.train(TEXT, { steps: 1, lr: NaN }), (e) => e.code === 'WF_ERR_ARG');
  assert.equal(model.tokenizer, null, 'refused by the optimizer settings: no tokenizer');
  await assert.rejects(model.train(TEXT, { steps: 1, valFraction: 0.001 }), (e) => e.code === 'WF_ERR_ARG' && /validation split/.test(e.message));
  assert.equal(model.tokenizer, null, 'refused by the validation split: no tokenizer');
  await assert.rejects(model.train(TEXT, { steps: 1, lr: 1e38, evalInterval: 0 }), (e) => e.code === 'WF_ERR_NUMERIC');
  assert.equal(model.tokenizer, null, 'the first step refused: no tokenizer');
  let seen;
  await model.train(TEXT, { steps: 2, evalInterval: 0, yieldMs: 0, onProgress: () => { seen ??= model.tokenizer; } });
  assert.ok(seen && seen === model.tokenizer, 'attached by the first step');
  model.dispose();
  model = await createModel(SMALL); // without a tokenizer again
  await assert.rejects(model.train('', { steps: 1 }), (e) => e.code === 'WF_ERR_ARG' && /the text is empty/.test(e.message));
  await assert.rejects(model.train('x', { steps: 1 }), (e) => e.code === 'WF_ERR_ARG' && /the training split has 1 tokens; a window of T = 16 needs at least 17/.test(e.message));
  assert.equal(model.tokenizer, null, 'a refused run keeps no tokenizer built from its text');
  await model.train(TEXT, { steps: 1, evalInterval: 0 });
  assert.equal(model.tokenizer.vocabSize, new Set(TEXT).size + 1, 'the next run builds its own');
  await assert.rejects(model.evaluate('y'), (e) => e.code === 'WF_ERR_ARG' && /evaluation needs at least 17 tokens/.test(e.message));
  assert.equal(model.tokenizer.vocabSize, new Set(TEXT).size + 1);
  await assert.rejects(createTokenizer(''), (e) => e.code === 'WF_ERR_ARG' && /the text is empty/.test(e.message));
  await assert.rejects(createTokenizer('', { kind: 'bpe' }), (e) => e.code === 'WF_ERR_ARG' && /empty/.test(e.message));
  assert.equal((await createTokenizer('x')).vocabSize, 2, '<unk> and x');
  assert.equal((await createTokenizer('x', { kind: 'bpe' })).vocabSize, 256, 'the bytes, no merges');
  // one distinct character, repeated, is a corpus: it trains and generates
  const mono = await createModel(SMALL);
  const summary = await mono.train('x'.repeat(500), { steps: 5, evalInterval: 0 });
  assert.ok(Number.isFinite(summary.loss));
  assert.equal(typeof await mono.generateText('x', { maxTokens: 5 }), 'string');
  await refuses(mono, () => mono.evaluate('xx'), 'WF_ERR_ARG', /evaluation needs at least 17 tokens/);
  for (const m of [model, mono]) m.dispose();
});

test('E9: invalid UTF-8 (lone surrogates in JavaScript strings) reads as U+FFFD', async () => {
  const model = await createModel(SMALL);
  const text = 'ab\uD800cd\uDFFFef'.repeat(60);
  await model.train(text, { steps: 2, evalInterval: 0 });
  const tok = model.tokenizer;
  assert.deepEqual(tok.encode('\uD800'), tok.encode('\uFFFD'));
  assert.deepEqual(tok.encode('x\uDFFFy'), tok.encode('x\uFFFDy'));
  assert.equal(tok.decode(tok.encode('ab\uD800')), 'ab\uFFFD');
  assert.equal(typeof await model.generateText('\uD800', { maxTokens: 5 }), 'string');
  const bpe = await createTokenizer(text, { kind: 'bpe', vocabSize: 300 });
  assert.equal(bpe.decode(bpe.encode(text)), text.replace(/[\uD800-\uDFFF]/g, '\uFFFD'));
  model.dispose();
});

test('E10: a prompt longer than the context keeps its end; an empty prompt starts from a newline', async () => {
  const model = await trained();
  const opts = { maxTokens: 30, temperature: 0.9, seed: 3 };
  const long = 'the mat sat on the cat. '.repeat(10);
  const ids = model.tokenizer.encode(long);
  const tail = model.tokenizer.decode(ids.slice(ids.length - 16));
  assert.equal(await model.generateText(long, opts), await model.generateText(tail, opts));
  assert.equal(await model.generateText('', opts), await model.generateText('\n', opts));
  model.dispose();
});

test('E11: zero or negative steps and counts', async () => {
  const model = await trained();
  for (const [opts, re] of [[{ steps: 0 }, /steps must be an integer >= 1, not 0/], [{ steps: -1 }, /steps must be an integer >= 1, not -1/],
    [{ steps: 2.5 }, /steps must be an integer >= 1, not 2.5/], [{ evalInterval: -1 }, /evalInterval must be an integer >= 0/],
    [{ evalBatches: 0 }, /evalBatches must be an integer >= 1/],
    [{ valFraction: -0.1 }, /valFraction \(the validation split\) must be a number in \[0, 1\), not -0.1/], [{ valFraction: 1 }, /valFraction .* not 1$/],
    [{ valFraction: NaN }, /valFraction .* not NaN/], [{ valFraction: '0.1' }, /valFraction .* not "0.1" \(a string\)/],
    [{ yieldMs: -1 }, /yieldMs must be a number >= 0, not -1/], [{ yieldMs: NaN }, /yieldMs .* not NaN/], [{ yieldMs: '5' }, /yieldMs .* not "5" \(a string\)/]]) {
    await refuses(model, () => model.train(TEXT, opts), 'WF_ERR_ARG', re);
  }
  await refuses(model, () => model.evaluate(TEXT, { yieldMs: -5 }), 'WF_ERR_ARG', /yieldMs must be a number >= 0, not -5/);
  await refuses(model, () => model.generateText('the', { yieldMs: NaN }), 'WF_ERR_ARG', /yieldMs must be a number >= 0, not NaN/);
  assert.equal(model.busy, null);
  await refuses(model, () => model.generateText('the', { maxTokens: -1 }), 'WF_ERR_ARG', /maxTokens must be an integer >= 0, not -1/);
  assert.equal(await model.generateText('the', { maxTokens: 0 }), '');
  model.dispose();
});

test('E12: learning rates that are NaN, negative or infinite; other settings out of range', async () => {
  const model = await trained();
  for (const [opts, re] of [
    [{ lr: NaN }, /lr must be >= 0 and finite, not nan/],
    [{ lr: -1e-3 }, /lr must be >= 0 and finite, not -0.001/],
    [{ lr: Infinity }, /lr must be >= 0 and finite, not inf/],
    [{ lr: 1e39 }, /lr must be >= 0 and finite, not inf/], // beyond float32
    [{ beta2: 1 }, /beta2 must be in \[0, 1\)/],
    [{ eps: 0 }, /eps must be > 0/],
    [{ gradClip: -1 }, /gradClip must be >= 0/],
  ]) {
    await refuses(model, () => model.train(TEXT, { steps: 1, ...opts }), 'WF_ERR_ARG', re);
    await refuses(model, () => model.setOptimizer(opts), 'WF_ERR_ARG', re);
  }
  for (const [opts, re] of [[{ temperature: -1 }, /temperature must be a finite number >= 0/], [{ temperature: NaN }, /temperature/],
    [{ topK: -2 }, /topK must be >= 0/], [{ topP: 0 }, /topP must be in \(0, 1\]/], [{ topP: 1.5 }, /topP/],
    // what int32 cannot hold, shown as given (1e12 once read "not -727379968"; 2.5 ran as 2)
    [{ topK: 1e12 }, /^topK must be an integer >= 0 \(0 = off\), not 1000000000000$/], [{ topK: 2.5 }, /^topK must be an integer >= 0 \(0 = off\), not 2\.5$/],
    [{ topK: -1e12 }, /not -1000000000000$/]]) {
    await refuses(model, () => model.generateText('the', opts), 'WF_ERR_ARG', re);
  }
  await refuses(model, () => model.setTensor('lnfw', new Float32Array(16).fill(NaN)), 'WF_ERR_ARG', /value 0 of tensor "lnfw" is NaN/);
  await refuses(model, () => model.setTensor('lnfw', Array(16).fill(1e39)), 'WF_ERR_ARG', /is 1e\+39; weights must be finite/);
  model.dispose();
});

test('E13: calls on a disposed model, a model without a tokenizer, the wrong architecture', async () => {
  const rt = await load();
  const model = await trained();
  const inUse = rt.heapInUse();
  // dispose in the middle of training: the run stops with WF_ERR_DISPOSED and frees everything
  const running = model.train(TEXT, { steps: 100000, yieldMs: 0, evalInterval: 0 });
  await new Promise((resolve) => setTimeout(resolve, 20));
  model.dispose();
  await assert.rejects(running, (e) => e.code === 'WF_ERR_DISPOSED');
  for (const use of [() => model.step, () => model.config, () => model.save(), () => model.trainStep([1], [1], 1, 1),
    () => model.getTensor('wte'), () => model.setOptimizer({ lr: 1 }), () => model.info()]) {
    assert.throws(use, (e) => e instanceof WfError && e.code === 'WF_ERR_DISPOSED' && /this model has been disposed/.test(e.message));
  }
  await assert.rejects(model.train(TEXT), (e) => e.code === 'WF_ERR_DISPOSED');
  await assert.rejects(model.generateText('x'), (e) => e.code === 'WF_ERR_DISPOSED');
  await assert.rejects(model.evaluate(TEXT), (e) => e.code === 'WF_ERR_DISPOSED');
  model.dispose(); // twice is fine
  assert.ok(rt.heapInUse() < inUse - 4 * 3 * 9000, 'the model and the run\'s buffers were freed');

  const wm = await createWorkerModel(SMALL);
  wm.dispose();
  await assert.rejects(wm.train(TEXT), (e) => e.code === 'WF_ERR_DISPOSED');
  assert.throws(() => wm.config, (e) => e.code === 'WF_ERR_DISPOSED');

  const bare = await createModel(SMALL);
  await refuses(bare, () => bare.generateText('x'), 'WF_ERR_STATE', /no tokenizer yet: train it on text first/);
  bare.dispose();
  const enc = await createModel({ ...SMALL, arch: 'encoder' });
  await assert.rejects(enc.train(TEXT, { steps: 1 }), (e) => e.code === 'WF_ERR_STATE' && /use Encoder.from\(model\)/.test(e.message));
  enc.dispose();
});

test('E14: concurrent calls on one model, in this thread and in a worker', async () => {
  const model = await trained();
  const running = model.train(TEXT, { steps: 200, yieldMs: 0, evalInterval: 0 });
  const busy = (e) => e instanceof WfError && e.code === 'WF_ERR_BUSY' && /the model is busy with training; wait for it or abort it first/.test(e.message);
  await assert.rejects(model.train(TEXT, { steps: 1 }), busy);
  await assert.rejects(model.evaluate(TEXT), busy);
  await assert.rejects(model.generateText('the'), busy);
  for (const call of [() => model.save(), () => model.load(new Uint8Array(8)), () => model.trainStep([1], [1], 1, 1),
    () => model.forward([1], null, 1, 1), () => model.setOptimizer({ lr: 1e-3 }), () => model.setTensor('lnfw', new Float32Array(16))]) {
    assert.throws(call, busy);
  }
  const summary = await running;
  assert.equal(summary.steps, 200, 'the running call finished undisturbed');
  const gen = model.generate('the', { maxTokens: 1000 });
  await gen.next();
  await assert.rejects(model.train(TEXT, { steps: 1 }), (e) => e.code === 'WF_ERR_BUSY' && /generation/.test(e.message));
  await gen.return();
  await model.train(TEXT, { steps: 1, evalInterval: 0 }); // free again
  model.dispose();

  const wm = await createWorkerModel(SMALL);
  await wm.train(TEXT, { steps: 2, evalInterval: 0 });
  // a run far longer than the test, stopped at the end (a short one could finish before
  // the worker reads the next message)
  const stop = new AbortController();
  const inWorker = wm.train(TEXT, { steps: 1e6, evalInterval: 0, signal: stop.signal });
  await assert.rejects(wm.train(TEXT, { steps: 1 }), (e) => e.code === 'WF_ERR_BUSY');
  await assert.rejects(wm.generateText('the'), (e) => e.code === 'WF_ERR_BUSY');
  await assert.rejects(wm.save(), (e) => e.code === 'WF_ERR_BUSY');
  await assert.rejects(wm.setOptimizer({ lr: 1 }), (e) => e.code === 'WF_ERR_BUSY');
  stop.abort();
  await assert.rejects(inWorker, (e) => e.name === 'AbortError');
  assert.ok((await wm.info()).step > 2, 'the running call went on undisturbed until stopped');
  wm.dispose();
});

test('E14: inside a training call\'s onProgress, save() and setMetadata() run (a checkpoint of that step); nothing else does', async () => {
  const model = await trained();
  const schedule = { warmup: 5, decaySteps: 35, evalInterval: 0, yieldMs: 0 };
  const checkpoints = new Map();
  const busy = (e) => e instanceof WfError && e.code === 'WF_ERR_BUSY';
  await model.train(TEXT, {
    ...schedule, steps: 40,
    onProgress: (p) => {
      if (p.step % 10 !== 0) return;
      model.setMetadata({ at: p.step });
      checkpoints.set(p.step, model.save());
      for (const call of [() => model.load(new Uint8Array(8)), () => model.setOptimizer({ lr: 1e-3 }), () => model.trainStep([1], [1], 1, 1)]) {
        assert.throws(call, busy);
      }
    },
  });
  assert.deepEqual([...checkpoints.keys()], [10, 20, 30, 40]); // the model's steps (3 before the call)
  // a checkpoint is the model after that step: an identical run stopped there saves the same bytes
  const straight = await trained();
  const ac = new AbortController();
  await assert.rejects(straight.train(TEXT, { ...schedule, steps: 40, signal: ac.signal, onProgress: (p) => { if (p.step === 20) ac.abort(); } }),
    (e) => e.name === 'AbortError');
  straight.setMetadata({ at: 20 });
  // the run in each (src/run.c) counts wall-clock seconds, which no two runs share: the rest
  // of the state, the run ended in both, byte for byte
  const at20 = await loadModel(checkpoints.get(20));
  at20.endRun();
  straight.endRun();
  assert.ok(same(at20.save(), straight.save()), 'the checkpoint of step 20 is the model stopped at step 20');
  at20.dispose();
  // outside the callback the call still holds the model
  const running = model.train(TEXT, { steps: 50, yieldMs: 0, evalInterval: 0 });
  assert.throws(() => model.save(), busy);
  assert.throws(() => model.setMetadata(null), busy);
  await running;
  for (const m of [model, straight]) m.dispose();
});

test('E15: hostile files are refused by the hardened loaders (details: checkpoint, safetensors and fuzz tests)', async () => {
  const model = await trained();
  const good = model.save();
  const damaged = good.slice();
  damaged[100] ^= 0x40;
  await refuses(model, () => model.load(damaged), 'WF_ERR_FORMAT', /the checkpoint is damaged: its bytes have the CRC-32/);
  await refuses(model, () => model.load(good.subarray(0, good.length - 1)), 'WF_ERR_FORMAT', /truncated or padded/);
  await refuses(model, () => model.load(new TextEncoder().encode('{"model_type": "gpt2", "n_layer": 2, "n_head": 2}')), 'WF_ERR_FORMAT', /not a wasmformer checkpoint/);
  model.dispose();
});

test('E17: fine-tuning misuse: masks, names, layers, LoRA settings, a frozen model, adapters that cannot be exported', async () => {
  const model = await trained();
  for (const [fn, code, re] of [
    [() => model.trainOnly('nothing'), 'WF_ERR_ARG', /no tensor or group is named "nothing" \(a string\); groups: all, layers/],
    [() => model.freeze('layers@2'), 'WF_ERR_ARG', /"layers@2" \(a string\): layers 2 to 2 are outside the model's 0 to 1/],
    [() => model.unfreeze('wte@0'), 'WF_ERR_ARG', /wte is one tensor, not one per layer/],
    [() => model.trainOnly('attn@1-x'), 'WF_ERR_ARG', /the layers after @ are a number, a range a-b, a-, or -k/],
    [() => model.addLora({ rank: 0 }), 'WF_ERR_ARG', /rank must be an integer >= 1, not 0/],
    [() => model.addLora({ targets: 'up' }), 'WF_ERR_ARG', /'up' is SwiGLU's up rows; this model's activation has none/],
    [() => model.addLora({ targets: [] }), 'WF_ERR_ARG', /LoRA's targets are names among q, k, v, o, fc, up, down, attn, mlp, all/],
    [() => model.addLora({ rank: 2, alpha: 0 }), 'WF_ERR_CONFIG', /loraAlpha must be > 0 and finite, not 0/],
    [() => model.addLora({ rnak: 2 }), 'WF_ERR_ARG', /unknown key "rnak" in addLora\(\) options; did you mean "rank"\?/],
    [() => model.removeLora(), 'WF_ERR_STATE', /the model has no LoRA adapters/],
    [() => model.exportPeft(), 'WF_ERR_STATE', /the model has no LoRA adapters \(loraRank is 0\)/],
    [() => model.importPeft({ 'adapter_config.json': '{"peft_type": "LORA", "r": 2}', 'adapter_model.safetensors': new Uint8Array(8) }),
      'WF_ERR_FORMAT', /safetensors header/],
  ]) {
    await refuses(model, fn, code, re);
  }
  model.addLora({ rank: 2, targets: 'attn' });
  await refuses(model, () => model.addLora(), 'WF_ERR_STATE', /has LoRA adapters already \(rank 2\): mergeLora\(\) or removeLora\(\) first/);
  model.unfreeze('head');
  await refuses(model, () => model.exportPeft(), 'WF_ERR_STATE', /"wte" trains besides the adapters, and an adapter file holds adapters only/);
  model.trainOnly([]);
  await refuses(model, () => model.train(TEXT, { steps: 1 }), 'WF_ERR_STATE', /every tensor is frozen: nothing to train/);
  model.dispose();
});

test('E20: metadata JSON cannot hold, or nested past 64 levels, is refused with a code; such a note in a file reads as null, in a worker too', async () => {
  const model = await trained();
  model.setMetadata({ run: { steps: 3 } });
  const cycle = { a: [1] };
  cycle.a.push(cycle);
  let deep = [];
  for (let i = 0; i < 200000; i++) deep = [deep];
  const nest = (n) => { let v = 0; for (let i = 0; i < n; i++) v = [v]; return v; };
  for (const [value, re] of [
    [cycle, /^metadata must be a JSON value: it contains a cycle/],
    [{ big: [10n] }, /^metadata must be a JSON value: it holds a BigInt \(10n\)/],
    [deep, /^metadata nests arrays and objects more than 64 levels deep$/],
    [nest(65), /more than 64 levels deep/],
    [() => 1, /^metadata must be a JSON value \(an object, array/],
  ]) await refuses(model, () => model.setMetadata(value), 'WF_ERR_ARG', re);
  assert.deepEqual(model.metadata, { run: { steps: 3 } }, 'the metadata is as it was');
  // 64 levels, and an object shared by two keys (no cycle), are fine
  const shared = { x: 1 };
  model.setMetadata({ a: shared, b: shared, deep: nest(63) });
  assert.deepEqual(model.metadata, { a: { x: 1 }, b: { x: 1 }, deep: nest(63) });

  // a note another program wrote, 500,000 levels deep: a valid file, whose metadata is not
  // read (building it would overflow the stack of a worker's reply and of JSON.stringify)
  const core = modelHandle(model);
  core.rt.modelSetNote(core.h, new TextEncoder().encode(`${'['.repeat(500000)}${']'.repeat(500000)}`));
  assert.equal(model.metadata, null);
  JSON.stringify(model.info());
  const wm = await createWorkerModel(SMALL);
  await wm.load(model.save());
  assert.equal((await wm.info()).metadata, null, 'a worker loads it and answers');
  wm.dispose();
  // brackets inside strings are text, not nesting
  core.rt.modelSetNote(core.h, new TextEncoder().encode(JSON.stringify({ s: '['.repeat(1000) + '\\"[' })));
  assert.deepEqual(model.metadata, { s: `${'['.repeat(1000)}\\"[` });
  model.dispose();
});

test('E21: where files go: a symbolic link is saved through, a folder that cannot be made fails at once, an export never leaves another model\'s tokenizer', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wf-e21-'));
  try {
    const model = await trained();
    // a link to a model file: the file it points to is replaced atomically, the link stays
    mkdirSync(join(dir, 'runs'));
    await saveModelFile(model, join(dir, 'runs', 'a.wf'));
    symlinkSync(join('runs', 'a.wf'), join(dir, 'latest.wf'));
    symlinkSync(join('runs', 'b.wf'), join(dir, 'next.wf')); // a link to a file yet to be
    await model.train(TEXT, { steps: 2, evalInterval: 0 });
    await saveModelFile(model, join(dir, 'latest.wf'));
    await saveModelFile(model, join(dir, 'next.wf'));
    assert.ok(lstatSync(join(dir, 'latest.wf')).isSymbolicLink() && lstatSync(join(dir, 'next.wf')).isSymbolicLink(), 'the links stay links');
    for (const f of ['a.wf', 'b.wf']) assert.equal((await loadModelFile(join(dir, 'runs', f))).step, model.step, `${f} was written`);
    assert.deepEqual(readdirSync(join(dir, 'runs')).sort(), ['a.wf', 'b.wf'], 'no temporary file left');
    symlinkSync('loop2', join(dir, 'loop1'));
    symlinkSync('loop1', join(dir, 'loop2'));
    await assert.rejects(saveModelFile(model, join(dir, 'loop1')), (e) => e.code === 'ELOOP' && e.message.includes(join(dir, 'loop1')));
    // a write that fails names the file asked for, not the temporary file
    await assert.rejects(saveModelFile(model, join(dir, 'missing', 'm.wf')),
      (e) => e.code === 'ENOENT' && e.message === `cannot write ${join(dir, 'missing', 'm.wf')}: its folder does not exist (ENOENT)`);

    // procfs answers mkdir with ENOENT under a folder that exists: recursive mkdir looped
    // forever at 100 % CPU; the exports now fail at once
    const t0 = Date.now();
    await assert.rejects(exportSafetensorsDir(model, '/proc/exp'),
      (e) => e instanceof WfError && e.code === 'WF_ERR_ARG' && /^cannot create the folder \/proc\/exp: \/proc takes no new folders/.test(e.message));
    await assert.rejects(exportSafetensorsDir(model, '/proc/exp/deeper'), (e) => e.code === 'WF_ERR_ARG');
    await assert.rejects(exportSafetensorsDir(model, join(dir, 'latest.wf', 'x')), (e) => e.code === 'WF_ERR_ARG' && /a part of the path is a file, not a folder \(ENOTDIR\)/.test(e.message));
    await assert.rejects(exportSafetensorsDir(model, join(dir, 'runs', 'a.wf')), (e) => e.code === 'WF_ERR_ARG' && /: it is a file, not a folder$/.test(e.message));
    const lora = await trained();
    lora.addLora({ rank: 2, targets: ['q'] });
    await assert.rejects(exportPeftDir(lora, '/proc/exp'), (e) => e.code === 'WF_ERR_ARG');
    lora.dispose();
    assert.ok(Date.now() - t0 < 5000, `the refusals took ${Date.now() - t0} ms`);

    // an export of a model without a tokenizer into an earlier export's folder: the old
    // tokenizer goes, and its import has none
    const out = join(dir, 'hf');
    assert.deepEqual(await exportSafetensorsDir(model, out), ['model.safetensors', 'config.json', 'tokenizer.wft', 'tokenizer.json', 'wasmformer.sha256']);
    const oldTokenizer = readFileSync(join(out, 'tokenizer.wft'));
    const bare = await createModel(SMALL);
    await bare.train(Int32Array.from({ length: 400 }, (_, i) => (i * 7) % 40), { steps: 2, evalInterval: 0 });
    assert.deepEqual(await exportSafetensorsDir(bare, out), ['model.safetensors', 'config.json', 'wasmformer.sha256']);
    assert.deepEqual(readdirSync(out).sort(), ['config.json', 'model.safetensors', 'wasmformer.sha256']);
    const imported = await importSafetensorsDir(out);
    assert.equal(imported.tokenizer, null, 'no tokenizer: the weights were exported without one');
    imported.dispose();
    // one put back from the earlier export is refused by name, not paired with these weights
    writeFileSync(join(out, 'tokenizer.wft'), oldTokenizer);
    await assert.rejects(importSafetensorsDir(out), (e) => e instanceof WfError && e.code === 'WF_ERR_FORMAT'
      && e.message.startsWith(`${join(out, 'tokenizer.wft')} is not the tokenizer exported with these weights: ${join(out, 'wasmformer.sha256')}, the export's record, lists no tokenizer.wft`));
    // another model's export with a tokenizer of its own: its tokenizer, by its hash
    await exportSafetensorsDir(model, out);
    const other = join(dir, 'other');
    const another = await createModel(SMALL);
    await another.train('a different text, other letters: xyz. '.repeat(50), { steps: 2, evalInterval: 0 });
    await exportSafetensorsDir(another, other);
    cpSync(join(other, 'tokenizer.wft'), join(out, 'tokenizer.wft'));
    await assert.rejects(importSafetensorsDir(out), (e) => e.code === 'WF_ERR_FORMAT' && /gives it another SHA-256/.test(e.message));
    // without the record (a folder Hugging Face or PyTorch wrote) a tokenizer is taken as found
    rmSync(join(out, 'wasmformer.sha256'));
    const paired = await importSafetensorsDir(out);
    assert.equal(paired.tokenizer.vocabSize, another.tokenizer.vocabSize);
    for (const m of [paired, another, bare, model]) m.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
