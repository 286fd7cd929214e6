// A JavaScript developer's first hour (issue 17): each test here failed before its fix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkConfig, createEncoder, createModel, createTokenizer, createWorkerModel, estimateMemory, exportPeftDir, exportSafetensors,
  GENERATE_DEFAULTS, importSafetensors, saveModelFile } from '../../src/js/node.js';
import { nearest, show, float32Plain } from '../../src/js/options.js';
import { modelHandle } from '../../src/js/model.js';

const SMALL = { nLayer: 1, nHead: 2, dModel: 16, dFF: 32, context: 8 };
const TEXT = 'It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife. '.repeat(8);

/** What createModel says of a config it refuses ({code, message}), or null when it builds it. */
async function refusal(config) {
  try {
    (await createModel(config, { threads: 1 })).dispose();
    return null;
  } catch (e) {
    return { code: e.code, message: e.message };
  }
}

test('1: a misspelled key in a config or options object is an error naming the nearest known key', async () => {
  await assert.rejects(createModel({ nlayer: 2, dmodel: 64 }, { threads: 1 }),
    (e) => e.code === 'WF_ERR_CONFIG' && /unknown key "nlayer" in the config; did you mean "nLayer"\?/.test(e.message));
  const model = await createModel(SMALL, { threads: 1 });
  await assert.rejects(model.train(TEXT, { stpes: 3, lerningRate: 0.1 }),
    (e) => e.code === 'WF_ERR_ARG' && /unknown key "stpes" in train\(\) options; did you mean "steps"\?/.test(e.message));
  assert.equal(model.step, 0, 'nothing trained');
  await assert.rejects(model.evaluate(TEXT, { maxToken: 10 }), /did you mean "maxTokens"/);
  await assert.rejects(model.generateText('a', { temprature: 0 }), /unknown key "temprature".*did you mean "temperature"/);
  assert.throws(() => model.setOptimizer({ learningRate: 1 }), /unknown key "learningRate" in the optimizer settings/);
  await assert.rejects(createModel('tiny', { thread: 1 }), /unknown key "thread" in createModel\(\) options; did you mean "threads"\?/);
  assert.deepEqual(await checkConfig({ nlayer: 2 }), await refusal({ nlayer: 2 }), 'checkConfig says what createModel says');
  assert.match((await checkConfig({ nlayer: 2 })).message, /did you mean "nLayer"/);
  // every options object: save's, exportPeft's, a tokenizer given as {kind, vocabSize}, a batch
  assert.throws(() => model.save({ optimiser: false }), /unknown key "optimiser" in save\(\) options; did you mean "optimizer"\?/);
  assert.throws(() => model.save({ optimizer: 'no' }), /optimizer must be true or false, not "no" \(a string\)/);
  const dir = mkdtempSync(join(tmpdir(), 'wf-dx-'));
  await assert.rejects(saveModelFile(model, join(dir, 'm.wf'), { optimiser: false }), /unknown key "optimiser" in save\(\) options/);
  await assert.rejects(createModel(SMALL, { threads: 1, text: TEXT, tokenizer: { kind: 'bpe', vocabsize: 300 } }),
    /unknown key "vocabsize" in the tokenizer options; did you mean "vocabSize"\?/);
  await assert.rejects(model.train(TEXT, { steps: 1, tokenizer: { knd: 'bpe' } }), /unknown key "knd" in the tokenizer option; did you mean "kind"\?/);
  await assert.rejects(createTokenizer(TEXT, { kind: 'bpe', vocabsize: 300 }), /unknown key "vocabsize" in createTokenizer\(\) options; did you mean "vocabSize"\?/);
  const enc = await createEncoder({ nLayer: 1, nHead: 2, dModel: 16, dFF: 32, context: 8, vocabSize: 8 }, { threads: 1 });
  assert.throws(() => enc.trainStep({ inputs: [1, 2], target: [2, 3], B: 1, T: 2 }), /unknown key "target" in the batch; did you mean "targets"\?/);
  assert.throws(() => enc.forward({ inputs: [1, 2], lenghts: [2], B: 1, T: 2 }), /unknown key "lenghts" in the batch; did you mean "lengths"\?/);
  enc.dispose();
  const lora = await createModel({ ...SMALL, loraRank: 2, loraTargets: 1 }, { threads: 1 });
  assert.throws(() => lora.exportPeft({ baseModle: 'gpt2' }), /unknown key "baseModle" in exportPeft\(\) options; did you mean "baseModel"\?/);
  assert.throws(() => lora.exportPeft({ baseModel: 5 }), /baseModel must be a string .*, not 5/);
  await assert.rejects(exportPeftDir(lora, join(dir, 'peft'), { basemodel: 'gpt2' }), /did you mean "baseModel"/);
  lora.dispose();
  rmSync(dir, { recursive: true, force: true });
  assert.equal(nearest('n_layer', ['nLayer', 'nHead']), 'nLayer', 'a C name finds its JS key');
  assert.equal(nearest('zzzz', ['nLayer', 'nHead']), null, 'nothing close: no suggestion');
  model.dispose();
});

test('10: C names become JS keys only in messages about the caller\'s own settings: a file\'s keys stay as the file has them', async () => {
  const model = await createModel(SMALL, { threads: 1, text: TEXT });
  const files = exportSafetensors(model);
  const config = JSON.parse(files['config.json']);
  delete config.n_layer;
  await assert.rejects(importSafetensors({ ...files, 'config.json': JSON.stringify(config) }, { threads: 1 }),
    (e) => e.code === 'WF_ERR_FORMAT' && e.message === 'config.json: "n_layer" is missing');
  model.addLora({ rank: 2 });
  const peft = model.exportPeft();
  const adapter = { ...JSON.parse(peft['adapter_config.json']), lora_alpha: -1 };
  assert.throws(() => model.importPeft({ ...peft, 'adapter_config.json': JSON.stringify(adapter) }),
    (e) => e.message === 'adapter_config.json: "lora_alpha" must be a positive number');
  // the caller's own settings: their JS names
  await assert.rejects(model.generateText('a', { topK: -1 }), /^WfError: topK must be >= 0/);
  assert.throws(() => model.setOptimizer({ weightDecay: -1 }), /^WfError: weightDecay must be/);
  model.dispose();
});

test('2: a worker model whose callback throws rejects the call with that error, and stops', async () => {
  const wm = await createWorkerModel(SMALL, { threads: 1 });
  await wm.train(TEXT, { steps: 3, evalInterval: 0 });
  const boom = new Error('boom');
  let calls = 0;
  await assert.rejects(wm.train(TEXT, { steps: 200, evalInterval: 0, yieldMs: 0, onProgress: () => { calls++; throw boom; } }), (e) => e === boom);
  assert.equal(calls, 1, 'the callback is not called again after it threw');
  const info = await wm.info();
  assert.ok(info.step < 203, `the work stopped (step ${info.step})`);
  assert.equal(wm.step, info.step, 'step is in sync with info() after the failed call');
  let tokens = 0;
  await assert.rejects(wm.generateText('It', { maxTokens: 50, onToken: () => { tokens++; throw boom; } }), (e) => e === boom);
  assert.equal(tokens, 1);
  // the model is still usable
  assert.equal(typeof (await wm.generateText('It', { maxTokens: 3 })), 'string');
  // an aborted call leaves step in sync too
  const ac = new AbortController();
  const run = wm.train(TEXT, { steps: 100000, evalInterval: 0, yieldMs: 0, signal: ac.signal, onProgress: (p) => { if (p.stepsDone >= 5) ac.abort(); } });
  await assert.rejects(run, { name: 'AbortError' });
  assert.equal(wm.step, (await wm.info()).step);
  wm.dispose();
});

test('3: a diverging call goes back to where it started and says so, from the run\'s facts; with onDivergence "stop" it says where the model is', async () => {
  const model = await createModel(SMALL, { threads: 1, text: TEXT });
  await model.train(TEXT, { steps: 30, evalInterval: 0 });
  const weights = model.getTensor('wte'), optimizer = model.optimizer, saved = model.save();
  await assert.rejects(model.train(TEXT, { steps: 5, lr: 1e6, evalInterval: 0 }), (e) => e.code === 'WF_ERR_DIVERGED'
    && /^training diverged: the loss reached [\d.e+]+ at step 3\d, past the [\d.]+ this run allows .*; the model went back to step 30, where this run last stood sound; try a lower lr \(or a smaller gradClip\)$/.test(e.message)
    && e.facts.diverged === 4 && e.facts.backup === 30 && e.facts.step === 30);
  assert.equal(model.step, 30);
  assert.deepEqual(model.getTensor('wte'), weights, 'weights as they were');
  assert.deepEqual(model.optimizer, optimizer, 'optimizer settings as they were');
  assert.deepEqual(model.save(), saved, 'the whole state as it was, byte for byte');
  assert.ok((await model.evaluate(TEXT)).loss < 4, 'the model still works');
  await assert.rejects(model.train(TEXT, { steps: 5, lr: 1e6, evalInterval: 0, onDivergence: 'stop' }), (e) => {
    const m = e.message.match(/; no roll-back copy \(onDivergence 'stop', or no room\): the model is at step (\d+); try a lower lr/);
    return e.code === 'WF_ERR_DIVERGED' && m && Number(m[1]) === model.step && model.step > 30 && e.facts.backup === -1;
  });
  await assert.rejects(model.train(TEXT, { steps: 1, onDivergence: 'ignore' }), /onDivergence must be "rollback" or "stop", not "ignore"/);
  model.dispose();
});

test('3: the last update of a run is checked too: one step at lr 1e6 after good ones is rolled back (decoder, with and without a final validation; seq2seq)', async () => {
  const model = await createModel(SMALL, { threads: 1, text: TEXT });
  await model.train(TEXT, { steps: 30, evalInterval: 0 });
  const saved = model.save();
  for (const evalInterval of [0, 1]) {
    await assert.rejects(model.train(TEXT, { steps: 1, lr: 1e6, evalInterval }), (e) => e.code === 'WF_ERR_DIVERGED'
      && /^training diverged: the loss reached .* at step 31, .*; the model went back to step 30/.test(e.message));
    assert.equal(model.step, 30);
    assert.deepEqual(model.save(), saved, `evalInterval ${evalInterval}: the whole state as it was, byte for byte`);
  }
  // a validation loss past the bound is a model learning its text by heart, not divergence:
  // the check after the last step reads the training batch
  const byHeart = await createModel(SMALL, { threads: 1 });
  const text = 'abcd '.repeat(120) + 'zyxwvu tsrq '.repeat(6);
  const { valLoss } = await byHeart.train(text, { steps: 150, lr: 0.01, evalInterval: 150, valFraction: 0.1 });
  assert.ok(valLoss > 1.5 * Math.log(byHeart.config.vocabSize) + 1, `validation ${valLoss} beyond the bound, and the call resolved`);
  byHeart.dispose();
  // 'stop' keeps the step and says so
  await assert.rejects(model.train(TEXT, { steps: 1, lr: 1e6, evalInterval: 0, onDivergence: 'stop' }),
    /at step 31, .*; no roll-back copy \(onDivergence 'stop', or no room\): the model is at step 31;/);
  model.dispose();
  const { createSeq2Seq, saveModel } = await import('../../src/js/node.js');
  const words = ['abc', 'bca', 'cab', 'acb', 'bac', 'cba'];
  const s2s = await createSeq2Seq({ dModel: 16, nHead: 2, dFF: 32, nLayer: 1, context: 8 }, { texts: words, threads: 1 });
  const pairs = words.map((w) => [w, [...w].reverse().join('')]);
  await s2s.train(pairs, { steps: 20 });
  const before = saveModel(s2s.model);
  await assert.rejects(s2s.train(pairs, { steps: 1, lr: 1e6 }), /at step 21, .*the model went back to step 20/);
  assert.deepEqual(saveModel(s2s.model), before, 'seq2seq: the state as it was');
  s2s.dispose();
});

test('3: a divergence in the middle of a call, after 150 good steps, is rolled back to the call\'s start, and the message says what happened', async () => {
  const model = await createModel(SMALL, { threads: 1, text: TEXT });
  await model.train(TEXT, { steps: 150, evalInterval: 0 });
  const saved = model.save();
  // the reproduction: the first update at lr 1e6 is applied, the next step's loss is far past the bound
  await assert.rejects(model.train(TEXT, { steps: 5, lr: 1e6, evalInterval: 0 }), (e) => e.code === 'WF_ERR_DIVERGED'
    && e.facts.at > 150 && e.facts.at <= 153 && new RegExp(`at step ${e.facts.at}, .*; the model went back to step 150,`).test(e.message));
  assert.equal(model.step, 150);
  assert.deepEqual(model.save(), saved, 'the whole state as the call found it, byte for byte');
  // a step the core refuses (a non-finite loss) in the middle of a call: a weight poisoned after the run's third step
  const core = modelHandle(model), lnf = core.tensorInfo('lnfw');
  const poison = (p) => { if (p.stepsDone === 3) core.rt.modelWriteParams(core.h, lnf.offset, [Infinity]); };
  await assert.rejects(model.train(TEXT, { steps: 10, evalInterval: 0, yieldMs: 0, onProgress: poison }), (e) => e.code === 'WF_ERR_NUMERIC'
    && /^training diverged: step 154 was refused: its loss was not finite at lr [\d.e-]+ \(that step changed nothing\); the model went back to step 150, where this run last stood sound; try a lower lr/.test(e.message)
    && e.facts.refused === 1);
  assert.equal(model.step, 150);
  assert.deepEqual(model.save(), saved, 'the poisoned weight is gone with the call\'s steps');
  // without a roll-back ('stop'), the refused step changed nothing: the model stands after the third
  await assert.rejects(model.train(TEXT, { steps: 10, evalInterval: 0, yieldMs: 0, onProgress: poison, onDivergence: 'stop' }),
    /^WfError: training diverged: step 154 was refused: .*; no roll-back copy \(onDivergence 'stop', or no room\): the model is at step 153;/);
  model.dispose();
});

test('3: a loss that climbs back towards ln V without a non-finite value or passing the bound is caught (the spike rule, src/run.c), and the call rolled back', async () => {
  // trained, then pushed to a learning rate far too high; the loss climbs back up
  const model = await createModel(SMALL, { threads: 1, text: TEXT });
  await model.train(TEXT, { steps: 300, evalInterval: 0 });
  const saved = model.save(), bound = 1.5 * Math.log(model.config.vocabSize) + 1;
  const seen = [];
  await assert.rejects(model.train(TEXT, { steps: 200, lr: 0.1, muon: 0, warmup: 0, evalInterval: 0, yieldMs: 0, onProgress: (p) => seen.push(p.loss) }), (e) => e.code === 'WF_ERR_DIVERGED'
    && /^training diverged: the mean loss of steps 301-320 is [\d.]+, above the [\d.]+ that this run's best and its noise allow \(lr [\d.]+\); the model went back to step 300/.test(e.message)
    && e.facts.diverged === 5 && e.facts.measured > e.facts.limit);
  assert.ok(seen.every((l) => Number.isFinite(l) && l < bound), `no loss was non-finite or past the bound ${bound.toFixed(2)}: ${Math.max(...seen).toFixed(2)}`);
  assert.deepEqual(model.save(), saved);
  model.dispose();
});

test('7: progress says the model\'s step, this call\'s steps done and its total, and the last step; the summary counts this call', async () => {
  const model = await createModel(SMALL, { threads: 1, text: TEXT });
  await model.train(TEXT, { steps: 4, evalInterval: 0 });
  const seen = [];
  const summary = await model.train(TEXT, { steps: 3, evalInterval: 0, yieldMs: 0, onProgress: (p) => seen.push(p) });
  assert.deepEqual(seen.map((p) => [p.step, p.stepsDone, p.steps, p.lastStep]), [[5, 1, 3, 7], [6, 2, 3, 7], [7, 3, 3, 7]]);
  assert.equal(summary.steps, 3);
  assert.equal(summary.step, 7);
  model.dispose();
});

test('5: unknown characters are reported with their share, and <unk> is never sampled unless asked', async () => {
  const model = await createModel(SMALL, { threads: 1, text: 'abc abd abe ' });
  const warnings = [];
  await model.train('日本語のテキスト abc', { steps: 1, evalInterval: 0, valFraction: 0, onWarning: (w) => warnings.push(w) });
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /^\d+(\.\d+)?% of the text's tokens \(8 of 12\) are characters the model's tokenizer does not know \("日", "本", "語", "の", "テ", …\)/);
  const clean = [];
  await model.train('abc abd abe '.repeat(2), { steps: 1, evalInterval: 0, valFraction: 0, onWarning: (w) => clean.push(w) });
  assert.equal(clean.length, 0, 'a text the tokenizer knows: no warning');
  // evaluate() and a generation's prompt say it too, in their words
  const said = [];
  await model.evaluate('日本語 abc abd abe abc abd abe', { onWarning: (w) => said.push(w) });
  await model.evaluate('abc abd abe abc abd abe abc', { onWarning: (w) => said.push(w) });
  await model.generateText('日本 ab', { maxTokens: 2, onWarning: (w) => said.push(w) });
  await model.generateText('ab', { maxTokens: 2, onWarning: (w) => said.push(w) });
  assert.equal(said.length, 2, said.join('\n'));
  assert.match(said[0], /^\d+(\.\d+)?% of the text's tokens \(3 of 27\) are characters the model's tokenizer does not know \("日", "本", "語"\); the model reads them all as <unk>, and the loss counts/);
  assert.match(said[1], /^\d+(\.\d+)?% of the prompt's tokens \(2 of 5\) are characters the model's tokenizer does not know \("日", "本"\); the model reads them all as <unk>\.$/);
  const wm = await createWorkerModel(SMALL, { threads: 1, text: 'abc abd abe ' });
  const inWorker = [];
  await wm.evaluate('日本語 abc abd abe abc abd abe', { onWarning: (w) => inWorker.push(w) });
  await wm.generateText('日本 ab', { maxTokens: 2, onWarning: (w) => inWorker.push(w) });
  assert.deepEqual(inWorker, said, 'a worker model sends them back');
  wm.dispose();
  // an untrained model puts real mass on <unk>; by default it is never drawn
  const text = await model.generateText('a', { maxTokens: 300, temperature: 2, seed: 3 });
  assert.ok(!text.includes('\uFFFD'), 'no U+FFFD by default');
  const allowed = await model.generateText('a', { maxTokens: 300, temperature: 2, seed: 3, allowUnknown: true });
  assert.ok(allowed.includes('\uFFFD'), 'allowUnknown: <unk> can be drawn (the check above can fail)');
  model.dispose();
});

test('6: checkConfig returns {code, message} for every bad config, never throws, and knows the memory limit', async () => {
  for (const [config, re] of [[{ nLayer: '2' }, /nLayer must be an integer, not "2" \(a string\)/],
    [{ activation: 'silu' }, /activation must be one of .* not "silu"/], [{ preset: 'small' }, /unknown preset "small"/],
    [5, /the config must be a preset name or an object, not 5/], [null, /not null/]]) {
    const r = await checkConfig(config);
    assert.equal(r.code, 'WF_ERR_CONFIG', JSON.stringify(config));
    assert.match(r.message, re);
  }
  const big = await checkConfig({ nLayer: 24, dModel: 2048, nHead: 16, dFF: 8192, vocabSize: 32000 });
  assert.equal(big.code, 'WF_ERR_NOMEM');
  assert.match(big.message, /needs \d+\.\d\d GB .* at most 4\.29 GB/);
  assert.equal(await checkConfig('tiny'), null);
});

test('6: checkConfig runs createModel\'s checks: the training defaults a config carries (batchSize, lr), and the core\'s memory bound', async () => {
  for (const [config, code, message] of [
    [{ lr: -1 }, 'WF_ERR_ARG', 'lr must be >= 0 and finite, not -1'],
    [{ lr: 'x' }, 'WF_ERR_ARG', 'lr must be a number, not "x" (a string)'],
    [{ batchSize: 'x' }, 'WF_ERR_ARG', 'batchSize must be an integer >= 1, not "x" (a string)'],
    [{ batchSize: 0 }, 'WF_ERR_ARG', 'batchSize must be an integer >= 1, not 0'],
  ]) {
    assert.deepEqual(await checkConfig(config), { code, message }, JSON.stringify(config));
    assert.deepEqual(await refusal(config), { code, message }, `createModel(${JSON.stringify(config)}) says the same`);
  }
  assert.equal(await checkConfig({ lr: 1e-3, batchSize: 4 }), null);
  // a model between 95 % of the 4 GB address space (where the core refuses) and all of it
  const limit = 4294967296;
  let gap = null;
  for (let nLayer = 1; nLayer <= 64 && !gap; nLayer++) {
    const config = { nLayer, nHead: 8, dModel: 1024, dFF: 4096, context: 64, vocabSize: 96 };
    const { total } = await estimateMemory(config);
    if (total > 0.95 * limit && total <= limit) gap = config;
  }
  assert.ok(gap, 'a config in the gap');
  const refused = await refusal(gap);
  assert.equal(refused.code, 'WF_ERR_NOMEM');
  assert.deepEqual(await checkConfig(gap), refused, 'checkConfig refuses what createModel refuses, in its words');
});

test('7: generate() samples at temperature 0.8 unless told (what it does, not the constant); the CLI\'s defaults are the API\'s', async () => {
  const model = await createModel(SMALL, { threads: 1, text: TEXT });
  await model.train(TEXT, { steps: 20, evalInterval: 0 });
  const text = (opts) => model.generateText('It', { maxTokens: 60, seed: 11, ...opts });
  const plain = await text({});
  assert.equal(plain, await text({ temperature: 0.8 }));
  assert.notEqual(plain, await text({ temperature: 1 }), 'the check above can fail: temperature changes the text');
  const counts = [];
  await model.generateText('It', { seed: 11, onToken: (piece, n) => counts.push(n) });
  assert.equal(counts.at(-1), GENERATE_DEFAULTS.maxTokens, '100 tokens unless told');
  model.dispose();
});

test('7: "seconds" means a time budget everywhere: a summary\'s wall-clock time is "elapsed"; a budget\'s steps cap is its progress\'s steps', async () => {
  const model = await createModel(SMALL, { threads: 1, text: TEXT });
  const counted = await model.train(TEXT, { steps: 2, evalInterval: 0 });
  assert.ok(counted.elapsed > 0 && !('seconds' in counted) && !('secondsDone' in counted), JSON.stringify(counted));
  const seen = [];
  const timed = await model.train(TEXT, { seconds: 30, steps: 3, evalInterval: 0, yieldMs: 0, onProgress: (p) => seen.push(p) });
  assert.equal(timed.seconds, 30, 'the budget');
  assert.ok(timed.secondsDone > 0 && timed.secondsDone < 30 && timed.elapsed > 0);
  assert.equal(seen.length, 3, 'a time budget with a steps cap: the call takes that many');
  assert.ok(seen.every((p) => p.seconds === 30 && p.steps === null && p.lastStep === null), 'a time budget has no length in steps');
  const open = [];
  await model.train(TEXT, { seconds: 0.05, evalInterval: 0, yieldMs: 0, onProgress: (p) => open.push(p) });
  assert.ok(open.every((p) => p.steps === null && p.seconds === 0.05), 'its length: 0.05 s');
  model.dispose();
});

test('10: messages show values with their type, JS names, and plain float values; TypeErrors for non-text', async () => {
  assert.equal(show('5'), '"5" (a string)');
  assert.equal(show(5), '5');
  assert.equal(float32Plain(Math.fround(1e-5)), 1e-5);
  assert.equal(float32Plain(Math.fround(0.1)), 0.1);
  const model = await createModel({ ...SMALL, normEps: 1e-5 }, { threads: 1 });
  assert.equal(model.config.normEps, 0.00001, 'no float32 noise');
  assert.equal(model.optimizer.beta1, 0.9);
  await assert.rejects(model.train(TEXT, { steps: '5' }), /steps must be an integer >= 1, not "5" \(a string\)/);
  await assert.rejects(model.train(undefined), (e) => e instanceof TypeError && /takes a text .* not undefined/.test(e.message));
  await assert.rejects(model.train(12345), (e) => e instanceof TypeError && /not 12345/.test(e.message));
  await assert.rejects(createModel({ ...SMALL, nHead: 3 }), (e) => /nHead 3 does not divide dModel 16/.test(e.message));
  // values with their type everywhere; a step's lr as the settings show it, without float32 noise
  assert.throws(() => model.addLora({ rank: '4' }), /rank must be an integer >= 1, not "4" \(a string\)/);
  await assert.rejects(createTokenizer(TEXT, { kind: 'wordpiece' }), /tokenizer kind must be "char" or "bpe", not "wordpiece" \(a string\)/);
  await assert.rejects(createTokenizer(TEXT, { kind: 'bpe', vocabSize: '300' }), /vocabSize must be an integer, not "300" \(a string\)/);
  const tiny = await createModel('tiny', { threads: 1, text: TEXT });
  const ids = Array.from({ length: 16 }, (_, i) => i % 8);
  assert.equal(tiny.trainStep(ids, ids, 1, 16).lr, 0.002, 'trainStep().lr');
  const lrs = [];
  await tiny.train(TEXT, { steps: 2, warmup: 0, decaySteps: 0, evalInterval: 0, yieldMs: 0, onProgress: (p) => lrs.push(p.lr) });
  assert.deepEqual(lrs, [0.002, 0.002], 'TrainProgress.lr');
  tiny.dispose();
  // an abort's reason is what the call rejects with
  const why = new Error('user closed the tab');
  await assert.rejects(model.train(TEXT, { steps: 5, signal: AbortSignal.abort(why) }), (e) => e === why);
  await assert.rejects(model.train(TEXT, { steps: 100000, signal: AbortSignal.timeout(30) }), { name: 'TimeoutError' });
  model.dispose();
});
