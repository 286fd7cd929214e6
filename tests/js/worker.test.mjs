// createWorkerModel in Node (worker_threads; browsers run the same client and host over
// a Web Worker, tested in package.test.mjs): the Model API across a thread boundary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createModel, createWorkerModel, exportPeftDir, importPeftDir, loadModel, loadModelFile, loadWorkerModel, saveModelFile, Model, WorkerModel, WfError,
} from '../../src/js/node.js';
import { workerPort } from '../../src/js/worker-client.js';

const SMALL = { nLayer: 2, nHead: 2, dModel: 32, dFF: 64, context: 32, vocabSize: 16, batchSize: 8 };
const TEXT = 'the cat sat on the mat. '.repeat(200);

test('a worker model trains, evaluates and generates exactly like one in this thread', async () => {
  const wm = await createWorkerModel({ ...SMALL, seed: 5 });
  const local = await createModel({ ...SMALL, seed: 5 });
  assert.ok(wm instanceof WorkerModel);
  assert.deepEqual(wm.config, local.config);
  assert.equal(wm.paramCount, local.paramCount);
  assert.equal(wm.step, 0);

  const progress = [];
  const opts = { steps: 80, lr: 3e-3, evalInterval: 40, seed: 2 };
  const summary = await wm.train(TEXT, { ...opts, onProgress: (p) => progress.push(p) });
  const localSummary = await local.train(TEXT, opts);
  assert.equal(summary.step, 80);
  assert.equal(wm.step, 80);
  assert.equal(summary.loss, localSummary.loss, 'same seeds, same loss');
  assert.equal(summary.valLoss, localSummary.valLoss);
  assert.deepEqual(progress.filter((p) => p.validated).map((p) => p.step), [40, 80]);
  assert.deepEqual(await wm.evaluate(TEXT, { maxTokens: 1000 }), await local.evaluate(TEXT, { maxTokens: 1000 }));

  const gen = { maxTokens: 40, temperature: 0.8, seed: 4 };
  const pieces = [], seen = [];
  for await (const p of wm.generate('the ', { ...gen, onToken: (piece) => seen.push(piece) })) pieces.push(p);
  assert.ok(pieces.length > 1, 'streamed in pieces');
  assert.deepEqual(seen, pieces);
  assert.equal(pieces.join(''), await local.generateText('the ', gen));
  // a fast model's pieces gather in the worker: the same text in far fewer messages than
  // tokens, each with the token count so far
  const many = { maxTokens: 2000, temperature: 0.8, seed: 5 };
  const gathered = [], counts = [];
  for await (const p of wm.generate('the ', { ...many, onToken: (_, n) => counts.push(n) })) gathered.push(p);
  assert.equal(gathered.join(''), await local.generateText('the ', many));
  assert.equal(counts.length, gathered.length);
  assert.equal(counts.at(-1), 2000);
  assert.ok(counts.every((n, i) => i === 0 || n > counts[i - 1]), 'the count grows');
  assert.ok(4 * gathered.length <= 2000, `2000 tokens in ${gathered.length} messages`);
  assert.equal(await wm.generateText('the c', { maxTokens: 30, temperature: 0, stop: 'mat' }),
    await local.generateText('the c', { maxTokens: 30, temperature: 0, stop: 'mat' }));
  assert.deepEqual(await wm.getTensor('wte'), local.getTensor('wte'));
  assert.deepEqual(await wm.encode('the'), local.tokenizer.encode('the'));
  assert.equal(await wm.decode([1, 2, 3]), local.tokenizer.decode([1, 2, 3]));
  assert.deepEqual((await wm.tensors()).map((t) => t.name), local.tensors().map((t) => t.name));
  await wm.setTensor('wte', new Float32Array(local.getTensor('wte').length).fill(0.5));
  assert.equal((await wm.getTensor('wte'))[7], 0.5);
  assert.equal((await wm.setOptimizer({ gradClip: 0.25 })).gradClip, 0.25);
  const info = await wm.info();
  assert.equal(info.step, 80);
  assert.equal(info.tokenizer.kind, 'char');
  wm.dispose();
  local.dispose();
});

test('abort, early break, busy and dispose across the thread boundary', async () => {
  const wm = await createWorkerModel(SMALL);
  const ac = new AbortController();
  await assert.rejects(
    wm.train(TEXT, { steps: 100000, signal: ac.signal, onProgress: (p) => { if (p.step >= 20) ac.abort(); } }),
    (e) => e.name === 'AbortError');
  const step = (await wm.info()).step;
  assert.ok(step >= 20 && step < 100000, `stopped at step ${step}`);
  await assert.rejects(wm.train(TEXT, { signal: AbortSignal.abort() }), (e) => e.name === 'AbortError');

  const gen = new AbortController();
  const pieces = [];
  await assert.rejects((async () => {
    for await (const p of wm.generate('the', { maxTokens: 100000, signal: gen.signal })) {
      pieces.push(p);
      if (pieces.length === 3) gen.abort();
    }
  })(), (e) => e.name === 'AbortError');
  assert.ok(pieces.length >= 3);
  // leaving the loop early stops the worker's generation before the next call
  for await (const p of wm.generate('the', { maxTokens: 100000 })) { assert.ok(p); break; }
  assert.equal((await wm.evaluate(TEXT, { maxTokens: 100 })).tokens, 96);

  const running = wm.train(TEXT, { steps: 200, evalInterval: 0 });
  await assert.rejects(wm.evaluate(TEXT), (e) => e instanceof WfError && e.code === 'WF_ERR_BUSY');
  await running;

  const pending = wm.train(TEXT, { steps: 100000 });
  wm.dispose();
  await assert.rejects(pending, (e) => e.code === 'WF_ERR_DISPOSED');
  await assert.rejects(wm.info(), (e) => e.code === 'WF_ERR_DISPOSED');
  await assert.rejects(wm.generateText('the'), (e) => e.code === 'WF_ERR_DISPOSED');
  assert.throws(() => wm.step, (e) => e.code === 'WF_ERR_DISPOSED');
  wm.dispose();
});

test('a worker that dies rejects its pending calls and every later one at once with WF_ERR_WORKER', async () => {
  const wm = await createWorkerModel(SMALL);
  await wm.train(TEXT, { steps: 2, evalInterval: 0 });
  let started;
  const running = wm.train(TEXT, { steps: 100000, evalInterval: 0, onProgress: () => started?.() });
  await new Promise((resolve) => { started = resolve; });
  workerPort(wm).terminate(); // the thread ends under the model, as a crash or an out-of-memory kill would end it
  const dead = (e) => e instanceof WfError && e.code === 'WF_ERR_WORKER' && /the model's worker failed: the worker thread exited/.test(e.message);
  await assert.rejects(running, dead);
  // later calls settle at once instead of waiting for a worker that will never answer
  for (const call of [() => wm.info(), () => wm.evaluate(TEXT), () => wm.generateText('the'), () => wm.save()]) {
    let timer;
    const never = new Promise((resolve) => { timer = setTimeout(resolve, 5000, 'no answer in 5 s'); });
    const outcome = await Promise.race([call().then(() => 'resolved', (e) => e), never]);
    clearTimeout(timer);
    assert.ok(dead(outcome), `rejected with WF_ERR_WORKER, not ${outcome}`);
  }
  wm.dispose();
  await assert.rejects(wm.info(), (e) => e.code === 'WF_ERR_DISPOSED');
});

test('errors in the worker arrive as WfError with the core code and message', async () => {
  await assert.rejects(createWorkerModel({ ...SMALL, nHead: 3 }),
    (e) => e instanceof WfError && e.code === 'WF_ERR_CONFIG' && /does not divide/.test(e.message));
  await assert.rejects(createWorkerModel(SMALL, { wasmUrl: '/nonexistent.wasm' }), (e) => e.code === 'WF_ERR_LOAD');
  const wm = await createWorkerModel(SMALL);
  await assert.rejects(wm.generateText('x'), (e) => e.code === 'WF_ERR_STATE');
  await assert.rejects(wm.train('x', { steps: 1 }), (e) => e.code === 'WF_ERR_ARG' && /split/.test(e.message));
  await assert.rejects(wm.getTensor('nope'), (e) => e.code === 'WF_ERR_ARG');
  wm.dispose();
});

test('save and load move checkpoints in and out of the worker', async () => {
  const wm = await createWorkerModel({ ...SMALL, seed: 8 });
  await wm.train(TEXT, { steps: 30, lr: 3e-3, evalInterval: 0 });
  const bytes = await wm.save();
  assert.ok(bytes instanceof Uint8Array && bytes.length > 3 * 4 * wm.paramCount);
  assert.equal(bytes.buffer.byteLength, bytes.length, 'the transferred buffer holds exactly the checkpoint');
  const local = await loadModel(bytes);
  assert.equal(local.step, 30);
  const gen = { maxTokens: 30, temperature: 0.7, seed: 2 };
  assert.equal(await wm.generateText('the ', gen), await local.generateText('the ', gen));
  // both resume to the same weights: the checkpoint holds the optimizer and sampler state
  await wm.train(TEXT, { steps: 5, keepSchedule: true, evalInterval: 0 });
  await local.train(TEXT, { steps: 5, keepSchedule: true, evalInterval: 0 });
  assert.deepEqual(await wm.getTensor('wte'), local.getTensor('wte'));

  // load in place; the caller's bytes stay usable (a copy is transferred)
  const other = await createModel({ ...SMALL, nLayer: 1, seed: 9 });
  await other.train(TEXT, { steps: 3, evalInterval: 0 });
  const otherBytes = other.save();
  await wm.load(otherBytes);
  assert.equal(otherBytes.length > 0 && otherBytes.byteLength, otherBytes.length, 'not detached');
  assert.equal(wm.config.nLayer, 1);
  assert.equal(wm.step, 3);
  assert.equal(await wm.generateText('the ', gen), await other.generateText('the ', gen));
  // a damaged checkpoint changes nothing
  const bad = otherBytes.slice();
  bad[bad.length - 10] ^= 0xff;
  await assert.rejects(wm.load(bad), (e) => e instanceof WfError && e.code === 'WF_ERR_FORMAT');
  assert.equal((await wm.info()).config.nLayer, 1);

  // a worker model straight from bytes (an ArrayBuffer here)
  const fromBytes = await loadWorkerModel(bytes.buffer.slice(0));
  assert.equal(fromBytes.step, 30);
  await assert.rejects(loadWorkerModel(new Uint8Array(100)), (e) => e.code === 'WF_ERR_FORMAT');
  for (const m of [wm, local, other, fromBytes]) m.dispose();
});

test('saveModelFile and exportPeftDir take a worker model as they take a Model', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wf-worker-files-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const wm = await createWorkerModel({ ...SMALL, norm: 'rmsnorm', activation: 'swiglu', positions: 'rope', bias: false, seed: 8 });
  await wm.train(TEXT, { steps: 5, evalInterval: 0 });
  const bytes = await saveModelFile(wm, join(dir, 'w.wf'));
  const back = await loadModelFile(join(dir, 'w.wf'));
  assert.equal(bytes, (await wm.save()).length);
  assert.equal(back.step, 5);
  assert.deepEqual(back.getTensor('qkvw'), await wm.getTensor('qkvw'));
  await wm.addLora({ rank: 2, alpha: 4 });
  await wm.train(TEXT, { steps: 3, lr: 1e-2, evalInterval: 0 });
  assert.deepEqual((await exportPeftDir(wm, join(dir, 'adapter'))).sort(), ['adapter_config.json', 'adapter_model.safetensors']);
  await importPeftDir(back, join(dir, 'adapter'));
  const gen = { maxTokens: 20, temperature: 0.8, seed: 1 };
  assert.equal(await back.generateText('the ', gen), await wm.generateText('the ', gen), 'the adapters came across');
  wm.dispose();
  back.dispose();
});

test('a worker call rejects with its signal\'s reason: abort(reason), AbortSignal.abort(reason), AbortSignal.timeout', async () => {
  const wm = await createWorkerModel(SMALL);
  const why = new Error('the user closed the panel');
  await assert.rejects(wm.train(TEXT, { steps: 5, signal: AbortSignal.abort(why) }), (e) => e === why, 'aborted before the call');
  const ac = new AbortController();
  await assert.rejects(wm.train(TEXT, { steps: 100000, evalInterval: 0, signal: ac.signal, onProgress: (p) => { if (p.stepsDone >= 3) ac.abort(why); } }),
    (e) => e === why, 'aborted during the call');
  await assert.rejects(wm.train(TEXT, { steps: 100000, evalInterval: 0, signal: AbortSignal.timeout(50) }), (e) => e.name === 'TimeoutError');
  await assert.rejects(wm.generateText('the ', { maxTokens: 100000, signal: AbortSignal.timeout(50) }), (e) => e.name === 'TimeoutError');
  assert.equal(wm.step, (await wm.info()).step, 'step in sync after the aborts');
  wm.dispose();
});

test('option typos on worker models and on Seq2Seq (main thread and worker) name the key they meant', async () => {
  const { createSeq2Seq, createWorkerSeq2Seq } = await import('../../src/js/node.js');
  await assert.rejects(createWorkerModel({ ...SMALL, nlayer: 2 }), /unknown key "nlayer" in the config; did you mean "nLayer"\?/);
  // a bad option rejects the promise (it used to throw before returning one)
  await assert.rejects(createWorkerModel(SMALL, { thread: 1 }), /unknown key "thread" in createWorkerModel\(\) options; did you mean "threads"\?/);
  await assert.rejects(loadWorkerModel(new Uint8Array(8), { thread: 1 }), /did you mean "threads"\?/);
  const wm = await createWorkerModel(SMALL);
  await assert.rejects(wm.train(TEXT, { stpes: 3 }), (e) => e instanceof WfError && e.code === 'WF_ERR_ARG' && /unknown key "stpes" in train\(\) options; did you mean "steps"\?/.test(e.message));
  await assert.rejects(wm.evaluate(TEXT, { maxToken: 10 }), /did you mean "maxTokens"/);
  await assert.rejects(wm.generateText('the', { temprature: 0 }), /unknown key "temprature".*did you mean "temperature"/);
  await assert.rejects(wm.setOptimizer({ learningRate: 1 }), /unknown key "learningRate" in the optimizer settings/);
  assert.equal((await wm.info()).step, 0, 'nothing trained');
  wm.dispose();
  const words = ['abc', 'bca', 'cab', 'acb', 'bac', 'cba'], pairs = words.map((w) => [w, [...w].reverse().join('')]);
  const config = { dModel: 16, nHead: 2, dFF: 32, nLayer: 1, context: 8 };
  await assert.rejects(createSeq2Seq({ ...config, dmodel: 16 }, { texts: words }), /unknown key "dmodel" in the config; did you mean "dModel"\?/);
  await assert.rejects(createWorkerSeq2Seq({ ...config, dmodel: 16 }, { texts: words }), /unknown key "dmodel" in the config; did you mean "dModel"\?/);
  for (const s2s of [await createSeq2Seq(config, { texts: words }), await createWorkerSeq2Seq(config, { texts: words })]) {
    await assert.rejects(s2s.train(pairs, { stpes: 3 }), /unknown key "stpes" in Seq2Seq train\(\) options; did you mean "steps"\?/);
    await s2s.train(pairs, { steps: 2 });
    await assert.rejects(s2s.translate('abc', { bem: 2 }), /unknown key "bem" in Seq2Seq decode options; did you mean "beam"\?/);
    await assert.rejects(s2s.decodeIds([1, 2], { maxToken: 2 }), /did you mean "maxTokens"\?/);
    await assert.rejects(s2s.accuracy(pairs, { beams: 2 }), /unknown key "beams" in Seq2Seq accuracy\(\) options; did you mean "beam"\?/);
    await assert.rejects(s2s.evaluate(pairs, { batchsize: 2 }), /unknown key "batchsize" in Seq2Seq evaluate\(\) options; did you mean "batchSize"\?/);
    s2s.dispose();
  }
});

/** The public members of a class: its own and inherited methods and getters, by name. */
function members(cls) {
  const out = new Set();
  for (let p = cls.prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const k of Object.getOwnPropertyNames(p)) if (k !== 'constructor') out.add(k);
  }
  return out;
}

test('WorkerModel has every public member of Model; the exceptions are deliberate', () => {
  const model = members(Model), worker = members(WorkerModel);
  assert.deepEqual([...model].filter((k) => !worker.has(k)).sort(), [], 'Model members a WorkerModel lacks');
  // the Tokenizer stays in the worker (tokenizer is its {kind, vocabSize}): encode and decode
  // reach it; snapshot is the last info() the worker sent
  assert.deepEqual([...worker].filter((k) => !model.has(k)).sort(), ['decode', 'encode', 'snapshot']);
});

test('a worker model\'s memory(), trainStep(), forward(), lr, optimizer, tokenizer, lora, busy and defaultBatchSize are the Model\'s', async () => {
  const wm = await createWorkerModel({ ...SMALL, seed: 9 }, { threads: 1, text: TEXT });
  const local = await createModel({ ...SMALL, seed: 9 }, { threads: 1, text: TEXT });
  assert.deepEqual(await wm.memory(), local.memory());
  assert.deepEqual(wm.tokenizer, { kind: local.tokenizer.kind, vocabSize: local.tokenizer.vocabSize });
  assert.equal(wm.defaultBatchSize, local.defaultBatchSize);
  assert.equal(wm.defaultBatchSize, 8);
  const ids = Array.from({ length: 2 * 16 }, (_, i) => (i * 7) % 12);
  const targets = ids.map((x) => (x + 1) % 12);
  assert.deepEqual(await wm.trainStep(ids, targets, 2, 16), local.trainStep(ids, targets, 2, 16));
  assert.equal(wm.step, 1);
  assert.equal(wm.lr, local.lr);
  assert.deepEqual(wm.optimizer, local.optimizer);
  assert.deepEqual(await wm.setOptimizer({ lr: 0.01 }), local.setOptimizer({ lr: 0.01 }));
  assert.equal(wm.lr, 0.01, 'refreshed by the call');
  assert.deepEqual(await wm.forward(ids, targets, 2, 16), local.forward(ids, targets, 2, 16));
  assert.deepEqual(await wm.memory(), local.memory(), 'with the activations of a batch');
  assert.equal(wm.lora, null);
  assert.deepEqual(await wm.addLora({ rank: 2, targets: ['q'] }), local.addLora({ rank: 2, targets: ['q'] }));
  assert.deepEqual(wm.lora, local.lora);
  // busy: while a long call is pending, and after it
  assert.equal(wm.busy, null);
  const run = wm.train(TEXT, { steps: 3, evalInterval: 0 });
  assert.equal(wm.busy, 'training');
  await run;
  assert.equal(wm.busy, null);
  // two pending calls (the second may be refused as busy, or run after the first): the first's word
  const both = Promise.allSettled([wm.evaluate(TEXT), wm.train(TEXT, { steps: 1, evalInterval: 0 })]);
  assert.equal(wm.busy, 'evaluation', 'the first pending call');
  await both;
  assert.equal(wm.busy, null);
  wm.dispose();
  local.dispose();
});

test('a worker model\'s run: begun once (the text crosses once), paused for a sample and gone on with, as one in this thread; a divergence\'s facts cross too', async () => {
  const wm = await createWorkerModel({ ...SMALL, seed: 6 });
  const local = await createModel({ ...SMALL, seed: 6 });
  const opts = { steps: 30, lr: 3e-3, evalInterval: 10, seed: 2 };
  const info = await wm.startRun(TEXT, opts);
  assert.ok(info.lastSteps === 30 && info.steps === 0 && wm.run.lastSteps === 30);
  const losses = [];
  const onProgress = (p) => losses.push(p.loss);
  await wm.continueRun({ steps: 12, yieldMs: 0, onProgress });
  const sample = await wm.generateText('the', { maxTokens: 10, seed: 1 }); // between two calls of the run
  assert.equal(typeof sample, 'string');
  await wm.continueRun({ yieldMs: 0, onProgress });
  assert.ok(wm.run.finished && wm.step === 30);
  local.startRun(TEXT, opts);
  const want = [];
  await local.continueRun({ yieldMs: 0, onProgress: (p) => want.push(p.loss) });
  assert.deepEqual(losses, want, 'the same steps as the run that never paused');
  await wm.endRun();
  local.endRun();
  assert.deepEqual(await wm.save(), local.save());
  // a divergence's facts, through the worker: the page words its message from them
  await assert.rejects(wm.train(TEXT, { steps: 3, lr: 1e6, evalInterval: 0 }), (e) => e instanceof WfError && e.code === 'WF_ERR_DIVERGED'
    && e.facts?.backup === 30 && e.facts.at > 30);
  wm.dispose();
  local.dispose();
});
