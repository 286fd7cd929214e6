// Checkpoints in the wasm build: round trips, exact resume, hostile bytes that must leave a
// model untouched, in-place load, atomic files, and tokenizer files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withNativeDump } from './fixture.js';
import {
  createModel, createTokenizer, load, loadModel, loadModelFile, loadTokenizer, saveModel, saveModelFile, WfError,
} from '../../src/js/node.js';

const SMALL = { nLayer: 2, nHead: 2, dModel: 32, dFF: 64, context: 32, vocabSize: 16, batchSize: 8 };
const TEXT = 'the cat sat on the mat. '.repeat(200);

function sameBytes(a, b) {
  return a.length === b.length && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;
}

function allWeights(model) {
  return model.tensors().map((t) => [t.name, model.getTensor(t.name)]);
}

test('save and load: config, weights, step, tokenizer and generation survive', async () => {
  const model = await createModel({ ...SMALL, tiedHead: false });
  await model.train(TEXT, { steps: 20, lr: 3e-3, evalInterval: 0 });
  const bytes = model.save();
  assert.ok(bytes instanceof Uint8Array && bytes.length > 4 * 3 * model.paramCount);
  const copy = await loadModel(bytes);
  assert.deepEqual(copy.config, model.config);
  assert.equal(copy.step, 20);
  assert.deepEqual(copy.optimizer, model.optimizer);
  assert.equal(copy.tokenizer.kind, 'char');
  assert.equal(copy.tokenizer.vocabSize, model.tokenizer.vocabSize);
  assert.deepEqual(allWeights(copy), allWeights(model));
  const opts = { maxTokens: 30, temperature: 0.8, seed: 5 };
  assert.equal(await copy.generateText('the ', opts), await model.generateText('the ', opts));
  assert.ok(sameBytes(copy.save(), bytes), 'save(load(x)) == x');
  // weights only: smaller, step 0, default optimizer
  const light = saveModel(model, { optimizer: false });
  assert.ok(light.length < bytes.length / 2);
  const fresh = await loadModel(light.buffer);
  assert.equal(fresh.step, 0);
  assert.deepEqual(allWeights(fresh), allWeights(model));
  for (const m of [model, copy, fresh]) m.dispose();
});

test('exact resume in wasm: N steps, save, load, M steps == N + M steps, bit for bit', async () => {
  const N = 6, M = 7;
  const opts = { lr: 3e-3, warmup: 0, decaySteps: 0, evalInterval: 0, batchSize: 4 };
  // through model.train: constant learning rate, so both runs see the same schedule
  const straight = await createModel({ ...SMALL, seed: 3 });
  await straight.train(TEXT, { ...opts, steps: N + M });
  const first = await createModel({ ...SMALL, seed: 3 });
  await first.train(TEXT, { ...opts, steps: N });
  const resumed = await loadModel(first.save());
  first.dispose();
  await resumed.train(TEXT, { ...opts, steps: M });
  resumed.setOptimizer({ start: straight.optimizer.start }); // train() starts its schedule at its first step
  assert.equal(resumed.step, N + M);
  assert.ok(sameBytes(resumed.save(), straight.save()), 'weights, moments, step and sampler streams identical');

  // a run of the core's, with warmup and cosine decay spanning the save and validations on both
  // sides: paused after N steps, saved with its run, loaded, and gone on with
  const run = { steps: N + M, warmup: 4, decaySteps: 10, lr: 5e-3, gradClip: 0.5, batchSize: 3, context: 16, evalInterval: 5, seed: 9 };
  const a = await createModel({ ...SMALL, seed: 4 });
  a.startRun(TEXT, run);
  await a.continueRun();
  const b = await createModel({ ...SMALL, seed: 4 });
  b.startRun(TEXT, run);
  await b.continueRun({ steps: N });
  const c = await loadModel(b.save());
  assert.equal(c.run.steps, N, 'the file holds the run');
  c.startRun(TEXT, { keepSchedule: true });
  await c.continueRun();
  const { seconds: _a, ...ra } = a.run, { seconds: _c, ...rc } = c.run; // seconds: the wall clock's
  assert.deepEqual(rc, ra, 'the resumed run is the run that never paused: its steps, last loss, validation');
  a.endRun();
  c.endRun();
  assert.ok(sameBytes(c.save(), a.save()), 'resume across warmup and decay is exact');
  // the control: resuming from weights only must not match, or this test proves nothing
  const d = await loadModel(b.save({ optimizer: false }));
  d.startRun(TEXT, { ...run, steps: M });
  await d.continueRun();
  assert.notDeepEqual(allWeights(d), allWeights(a));
  for (const m of [straight, resumed, a, b, c, d]) m.dispose();
});

test('hostile bytes throw WF_ERR_FORMAT and leave the model untouched', async () => {
  const src = await createModel({ ...SMALL, nLayer: 1, dModel: 8, dFF: 16, context: 8 });
  await src.train(TEXT, { steps: 3, evalInterval: 0, batchSize: 2 });
  const good = src.save();
  const victim = await createModel({ ...SMALL, seed: 9 });
  await victim.train('abc abc abd '.repeat(50), { steps: 2, evalInterval: 0 });
  const before = victim.save();
  const tokBefore = victim.tokenizer.save();
  const untouched = (what) => {
    assert.ok(sameBytes(victim.save(), before), `${what}: the model changed`);
    assert.ok(sameBytes(victim.tokenizer.save(), tokBefore), `${what}: the tokenizer changed`);
  };
  // every truncation (a step keeps the test quick; the C test covers every length)
  for (let n = 0; n < good.length; n += 7) {
    assert.throws(() => victim.load(good.subarray(0, n)), (e) => e instanceof WfError && e.code === 'WF_ERR_FORMAT' && e.message.length > 0);
  }
  untouched('truncations');
  for (let i = 0; i < good.length; i += 5) {
    const bad = good.slice();
    bad[i] ^= 0x10;
    assert.throws(() => victim.load(bad), (e) => e.code === 'WF_ERR_FORMAT' || e.code === 'WF_ERR_UNSUPPORTED');
  }
  untouched('flipped bytes');
  const cases = [
    [() => { const b = good.slice(); b[0] = 0x58; return b; }, 'WF_ERR_FORMAT', /not a wasmformer checkpoint/],
    [() => { const b = good.slice(); b[4] = 9; return b; }, 'WF_ERR_UNSUPPORTED', /version 9/],
    [() => { const b = good.slice(); b[16] ^= 1; return b; }, 'WF_ERR_FORMAT', /bytes long/],
    [() => { const b = good.slice(); b[b.length - 2] ^= 1; return b; }, 'WF_ERR_FORMAT', /CRC-32/],
    [() => new Uint8Array(3), 'WF_ERR_FORMAT', /truncated/],
    [() => src.tokenizer.save(), 'WF_ERR_FORMAT', /tokenizer file, not a checkpoint/],
  ];
  for (const [make, code, re] of cases) {
    assert.throws(() => victim.load(make()), (e) => e.code === code && re.test(e.message), String(re));
    await assert.rejects(loadModel(make()), (e) => e.code === code && re.test(e.message));
  }
  untouched('header cases');
  assert.throws(() => victim.load('not bytes'), (e) => e.code === 'WF_ERR_ARG');
  // a good file replaces everything, tokenizer included
  victim.load(good);
  assert.ok(sameBytes(victim.save(), good));
  assert.equal(victim.config.dModel, 8);
  // a busy model refuses
  const running = victim.train(TEXT, { steps: 20, yieldMs: 0, evalInterval: 0 });
  assert.throws(() => victim.load(before), (e) => e.code === 'WF_ERR_BUSY');
  assert.throws(() => victim.save(), (e) => e.code === 'WF_ERR_BUSY');
  await running;
  victim.dispose();
  assert.throws(() => victim.save(), (e) => e.code === 'WF_ERR_DISPOSED');
  src.dispose();
});

test('model files are written atomically and read back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wf-ckpt-'));
  try {
    const model = await createModel(SMALL);
    await model.train(TEXT, { steps: 5, evalInterval: 0 });
    const path = join(dir, 'model.wf');
    const n = await saveModelFile(model, path);
    assert.equal(n, readFileSync(path).length);
    assert.ok(sameBytes(readFileSync(path), model.save()));
    await model.train(TEXT, { steps: 2, evalInterval: 0 });
    await saveModelFile(model, path); // replaces the old file
    const back = await loadModelFile(path);
    assert.equal(back.step, 7);
    assert.deepEqual(allWeights(back), allWeights(model));
    assert.deepEqual(readdirSync(dir), ['model.wf'], 'no temporary files left behind');
    await assert.rejects(saveModelFile(model, join(dir, 'missing', 'model.wf')), (e) => e.code === 'ENOENT');
    writeFileSync(join(dir, 'bad.wf'), readFileSync(path).subarray(0, 100));
    await assert.rejects(loadModelFile(join(dir, 'bad.wf')), (e) => e.code === 'WF_ERR_FORMAT');
    model.dispose();
    back.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('tokenizer files round-trip and reject damage', async () => {
  const text = 'héllo wörld ✓ 😀';
  const tok = await createTokenizer(text);
  const bytes = tok.save();
  const back = await loadTokenizer(bytes);
  assert.equal(back.kind, 'char');
  assert.equal(back.vocabSize, tok.vocabSize);
  assert.deepEqual(back.encode(text), tok.encode(text));
  assert.equal(back.decode(back.encode(text)), text);
  const bad = bytes.slice();
  bad[30] ^= 1;
  await assert.rejects(loadTokenizer(bad), (e) => e.code === 'WF_ERR_FORMAT' && /CRC-32/.test(e.message));
  const rt = await load();
  const model = await createModel(SMALL);
  await assert.rejects(loadTokenizer(model.save()), (e) => /checkpoint, not a tokenizer file/.test(e.message));
  assert.ok(rt);
  for (const x of [tok, back, model]) x.dispose();
});

test('a checkpoint written by the native build loads in wasm and saves back to the same bytes', async (t) => {
  const NATIVE = 'build/native/test_checkpoint';
  await withNativeDump(t, NATIVE, async (dir) => {
    const bytes = readFileSync(join(dir, 'small.wf'));
    const model = await loadModel(bytes);
    assert.equal(model.step, 4);
    assert.equal(model.tokenizer.decode(model.tokenizer.encode('native build')), 'native build');
    assert.ok(sameBytes(model.save(), bytes));
    model.dispose();
  });
});
