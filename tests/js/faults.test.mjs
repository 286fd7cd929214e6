// Faults in the wasm build (docs/ERRORS.md, rows F1 to F6, F10 and F12; tests/test_faults.c has the
// native side): non-finite steps refused with nothing changed, allocations failing on the
// JavaScript side, the wasm memory running out while other models live in the module, abort
// in the middle of training and generation, a crash in the middle of saving a model file,
// generation from logits that are not finite, and a trap in the module (F12).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createModel, createWorkerModel, exportSafetensors, importSafetensors, loadModel, loadModelFile, loadTokenizer, saveModelFile,
  WfError,
} from '../../src/js/node.js';
import { modelHandle } from '../../src/js/model.js';
import { Runtime } from '../../src/js/runtime.js';

const SMALL = { nLayer: 2, nHead: 2, dModel: 16, dFF: 32, context: 16, vocabSize: 40, batchSize: 4, seed: 4 };
const TEXT = 'the cat sat on the mat. '.repeat(100);
const WASM = readFileSync(fileURLToPath(new URL('../../dist/wasmformer.wasm', import.meta.url)));

const same = (a, b) => a.length === b.length && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;
const numeric = (re) => (e) => e instanceof WfError && e.code === 'WF_ERR_NUMERIC' && re.test(e.message)
  && /weights and optimizer state are unchanged/.test(e.message) && /try a lower learning rate/.test(e.message);

test('F1: a step with a non-finite loss, gradient or update is refused, nothing changes, training goes on', async () => {
  const model = await createModel(SMALL);
  await model.train(TEXT, { steps: 3, evalInterval: 0 });
  const ids = model.tokenizer.encode(TEXT).subarray(0, 33);
  const [inputs, targets] = [ids.subarray(0, 32), ids.subarray(1, 33)];
  const fcb = model.getTensor('fcb'), lnfw = model.getTensor('lnfw');
  model.setOptimizer({ gradClip: 0 });
  const cases = [ // what the core says, and the run's reason (WF_DIVERGED_*: 1 loss, 2 gradient norm, 3 update)
    ['a NaN loss', () => model.setTensor('lnfw', lnfw.map(() => 3e38)), /the loss is (NaN|infinite)/, 1],
    ['a non-finite gradient norm', () => model.setTensor('fcb', fcb.map(() => 1e26)), /the gradient norm is not finite/, 2],
    ['an update whose squares overflow', () => model.setTensor('lnfw', lnfw.map((x) => x * 1e26)), /would overflow "wte"/, 3],
    ['an absurd learning rate', () => model.setOptimizer({ lr: 1e38, warmup: 0, decaySteps: 0 }), /the update at learning rate 1e\+38 would overflow/, 3],
  ];
  for (const [what, poison, re, reason] of cases) {
    poison();
    const before = model.save();
    assert.throws(() => model.trainStep(inputs, targets, 2, 16), numeric(re), what);
    assert.ok(same(model.save(), before), `${what}: the refused step changed the model`);
    // train() refuses at its first step: its run goes back to its copy (the sampler too), and
    // the call leaves the model as it found it; the facts say why
    await assert.rejects(model.train(TEXT, { steps: 5, evalInterval: 0, keepSchedule: true }), (e) => e.code === 'WF_ERR_NUMERIC'
      && e.facts.refused === 1 && e.facts.diverged === reason && /^training diverged: step 4 was refused: .*\(that step changed nothing\)/.test(e.message), what);
    assert.ok(same(model.save(), before), `${what}: train() changed the model`);
    // the cause removed, training continues
    model.setTensor('fcb', fcb);
    model.setTensor('lnfw', lnfw);
    model.setOptimizer({ lr: 2e-3 });
    const info = model.trainStep(inputs, targets, 2, 16);
    assert.ok(Number.isFinite(info.loss) && info.step === 4, what);
    model.load(before); // back to the state the next case poisons
    model.setTensor('fcb', fcb);
    model.setTensor('lnfw', lnfw);
    model.setOptimizer({ lr: 2e-3 });
  }
  model.dispose();
});

test('F2: every JavaScript-side allocation of a call failing in turn: WF_ERR_NOMEM, nothing changed, leaked or left busy', async () => {
  const model = await createModel(SMALL);
  await model.train(TEXT, { steps: 2, evalInterval: 0 });
  const rt = modelHandle(model).rt, good = model.save(), hf = exportSafetensors(model);
  const ids = Array.from({ length: 16 }, (_, i) => i % 40);
  const calls = {
    train: () => model.train(TEXT, { steps: 2, evalInterval: 0 }),
    'train on a fresh model (builds a tokenizer)': async () => { const m = await createModel(SMALL); try { await m.train(TEXT, { steps: 1, evalInterval: 0 }); } finally { m.dispose(); } },
    evaluate: () => model.evaluate(TEXT, { maxTokens: 200 }),
    generate: () => model.generateText('the ', { maxTokens: 5, seed: 1 }),
    trainStep: () => model.trainStep(ids, ids, 1, 16),
    forward: () => model.forward(ids, ids, 1, 16),
    save: () => model.save(),
    load: () => model.load(good),
    loadModel: async () => (await loadModel(good)).dispose(),
    createModel: async () => (await createModel(SMALL)).dispose(),
    setOptimizer: () => model.setOptimizer({ lr: 1e-3 }),
    'tokenizer encode and decode': () => model.tokenizer.decode(model.tokenizer.encode('the cat')),
    exportSafetensors: () => exportSafetensors(model),
    importSafetensors: async () => (await importSafetensors(hf)).dispose(),
  };
  let injected = 0;
  for (const [name, call] of Object.entries(calls)) {
    for (let k = 0; ; k++) {
      const before = model.save(), inUse = rt.heapInUse();
      let n = 0;
      // the k-th allocation of the call fails, as malloc returning 0 would
      rt.alloc = function failing(bytes) {
        if (n++ === k) throw new WfError('WF_ERR_NOMEM', `could not allocate ${bytes} bytes in the wasm heap`);
        return Runtime.prototype.alloc.call(this, bytes);
      };
      let error = null;
      try { await call(); } catch (e) { error = e; } finally { delete rt.alloc; }
      if (n <= k) {
        assert.equal(error, null, `${name} without failures`);
        break;
      }
      injected++;
      assert.equal(error?.code, 'WF_ERR_NOMEM', `${name}, allocation ${k}: ${error}`);
      assert.equal(rt.heapInUse(), inUse, `${name}, allocation ${k}: leaked`);
      assert.ok(same(model.save(), before), `${name}, allocation ${k}: the model changed`);
      assert.equal(model.busy, null, `${name}, allocation ${k}: left busy`);
    }
  }
  console.log(`# ${injected} JavaScript-side allocations failed in turn`);
  assert.ok(injected > 30, `${injected} allocations failed in turn`);
  await model.train(TEXT, { steps: 1, evalInterval: 0 }); // and the model works
  model.dispose();
});

test('F3: the wasm memory running out refuses one model and leaves the others in the module working', async () => {
  // each model is ~1.4 GB, almost all of it the KV cache of a 65536-token context, so the
  // test fills the 4 GB memory while writing only ~100 MB of it
  const big = { ...SMALL, context: 65536, nLayer: 42, nHead: 4, dModel: 64, dFF: 64, positions: 'sinusoidal', vocabSize: 40 };
  // a module of its own (the wasm at a path of its own), so other tests' heaps do not count
  const dir = mkdtempSync(join(tmpdir(), 'wf-oom-'));
  writeFileSync(join(dir, 'wasmformer.wasm'), WASM);
  const opts = { wasmUrl: join(dir, 'wasmformer.wasm') };
  const a = await createModel(big, opts);
  const b = await createModel(big, opts);
  const rt = modelHandle(a).rt;
  assert.equal(modelHandle(b).rt, rt, 'one module');
  assert.ok(rt.heapSize > 2.8e9, `two models fill ${rt.heapSize} bytes`);
  for (const m of [a, b]) await m.train(TEXT, { steps: 2, context: 16, evalInterval: 0 });
  const savedA = a.save(), savedB = b.save();
  const textA = await a.generateText('the ', { maxTokens: 20, seed: 1 });
  const inUse = rt.heapInUse();

  // a third passes the size check (it alone would fit) but its memory cannot grow
  await assert.rejects(createModel(big, opts), (e) => e instanceof WfError && e.code === 'WF_ERR_NOMEM'
    && /could not allocate \d+\.\d MB for the model/.test(e.message));
  assert.equal(rt.heapInUse(), inUse, 'the failed model freed what it had allocated');
  // the others are untouched and still work, at addresses above 2 GB
  assert.ok(same(a.save(), savedA) && same(b.save(), savedB), 'the live models are unchanged');
  assert.equal(await a.generateText('the ', { maxTokens: 20, seed: 1 }), textA);
  await b.train(TEXT, { steps: 1, context: 16, evalInterval: 0 });
  // smaller allocations still succeed, and freeing a model makes room for the big one
  const small = await createModel(SMALL, opts);
  await small.train(TEXT, { steps: 2, evalInterval: 0 });
  b.dispose();
  const c = await createModel(big, opts);
  await c.train(TEXT, { steps: 1, context: 16, evalInterval: 0 });
  for (const m of [a, c, small]) m.dispose();
  assert.ok(rt.heapInUse() < 1e6, 'everything freed');
  rmSync(dir, { recursive: true, force: true });
});

test('F4: abort during training leaves the model an uninterrupted run of as many steps would', async () => {
  const schedule = { warmup: 10, decaySteps: 90, evalInterval: 0 }; // explicit: the same for both runs
  const ac = new AbortController();
  const aborted = await createModel(SMALL);
  await assert.rejects(aborted.train(TEXT, { ...schedule, steps: 100, onProgress: (p) => { if (p.step >= 17) ac.abort(); }, signal: ac.signal, yieldMs: 0 }),
    (e) => e.name === 'AbortError');
  const steps = aborted.step;
  assert.ok(steps >= 17 && steps < 100, `stopped at ${steps}`);
  const straight = await createModel(SMALL);
  await straight.train(TEXT, { ...schedule, steps });
  // an aborted train() leaves its run in the model (to go on with); ended, the model is the other's
  const bytes = aborted.save();
  assert.equal(aborted.run.steps, steps);
  const ended = await loadModel(bytes);
  ended.endRun();
  assert.ok(same(ended.save(), straight.save()), 'the aborted model is the model of an uninterrupted run');

  // and it saves, loads and goes on like any other: its run, from the file
  const loaded = await loadModel(bytes);
  await aborted.train(TEXT, { steps: 5, keepSchedule: true });
  await loaded.train(TEXT, { steps: 5, keepSchedule: true });
  assert.equal(loaded.run.steps, steps + 5);
  aborted.endRun();
  loaded.endRun();
  assert.ok(same(aborted.save(), loaded.save()), 'continued after abort == continued after save and load');

  // the same across the worker boundary
  const wm = await createWorkerModel(SMALL);
  const wac = new AbortController();
  // (yieldMs 0: the worker reports every step and sees the abort message between steps)
  await assert.rejects(wm.train(TEXT, { ...schedule, steps: 100000, yieldMs: 0, signal: wac.signal, onProgress: (p) => { if (p.step >= 9) wac.abort(); } }),
    (e) => e.name === 'AbortError');
  const wsteps = (await wm.info()).step;
  assert.ok(wsteps >= 9 && wsteps < 100000, `the worker stopped at step ${wsteps}`);
  const ref = await createModel(SMALL);
  await ref.train(TEXT, { ...schedule, steps: wsteps });
  await wm.endRun();
  assert.ok(same(await wm.save(), ref.save()), `the worker's model after abort at step ${wsteps}`);
  for (const m of [aborted, straight, ended, loaded, wm, ref]) m.dispose();
});

test('F5: abort during generation leaves the model as it was', async () => {
  const model = await createModel(SMALL);
  await model.train(TEXT, { steps: 20, evalInterval: 0 });
  const before = model.save();
  const expected = await model.generateText('the ', { maxTokens: 40, seed: 2 });
  const ac = new AbortController();
  const pieces = [];
  await assert.rejects((async () => {
    for await (const p of model.generate('the ', { maxTokens: 100000, signal: ac.signal, seed: 9 })) {
      pieces.push(p);
      if (pieces.length === 5) ac.abort();
    }
  })(), (e) => e.name === 'AbortError');
  assert.ok(same(model.save(), before), 'generation changed nothing');
  assert.equal(await model.generateText('the ', { maxTokens: 40, seed: 2 }), expected, 'the next generation is unaffected');
  const loaded = await loadModel(model.save());
  assert.equal(await loaded.generateText('the ', { maxTokens: 40, seed: 2 }), expected);
  await model.train(TEXT, { steps: 2, evalInterval: 0 });
  for (const m of [model, loaded]) m.dispose();
});

test('F10: generation from weights whose logits are NaN or infinite is WF_ERR_NUMERIC, the model as it was', async () => {
  // finite weights of 3e38 load and forward to NaN; generation used to sample "\n\n…" from them
  const model = await createModel(SMALL);
  await model.train(TEXT, { steps: 3, evalInterval: 0 });
  model.setTensor('wte', new Float32Array(modelHandle(model).tensorInfo('wte').size).fill(3e38));
  const before = model.save();
  for (const opts of [{}, { temperature: 0 }, { topK: 3, topP: 0.9 }, { allowUnknown: true }]) {
    await assert.rejects(model.generateText('the ', { maxTokens: 5, ...opts }),
      (e) => e instanceof WfError && e.code === 'WF_ERR_NUMERIC' && /^the logits are not finite \(token \d+'s is NaN\)/.test(e.message), JSON.stringify(opts));
    assert.equal(model.busy, null);
  }
  assert.ok(same(model.save(), before), 'the model is as it was');
  // the same from a worker, and from the file
  const wm = await createWorkerModel(SMALL);
  await wm.load(before);
  await assert.rejects(wm.generateText('the ', { maxTokens: 5 }), (e) => e.code === 'WF_ERR_NUMERIC');
  wm.dispose();
  model.dispose();
});

test('F6: a failure while writing a model file leaves the old file and no temporary file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wf-faults-'));
  try {
    const path = join(dir, 'model.wf');
    const model = await createModel(SMALL);
    await model.train(TEXT, { steps: 2, evalInterval: 0 });
    await saveModelFile(model, path);
    const good = readFileSync(path);
    await model.train(TEXT, { steps: 2, evalInterval: 0 });
    // the disk fills up half way through the write
    const probe = await open(join(dir, 'probe'), 'w');
    const FileHandle = Object.getPrototypeOf(probe);
    await probe.close();
    const writeFile = FileHandle.writeFile;
    FileHandle.writeFile = async function half(bytes) {
      await writeFile.call(this, bytes.subarray(0, bytes.length >> 1));
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    };
    try {
      await assert.rejects(saveModelFile(model, path), (e) => e.code === 'ENOSPC');
    } finally {
      FileHandle.writeFile = writeFile;
    }
    assert.ok(same(readFileSync(path), good), 'the old file is intact');
    assert.deepEqual(readdirSync(dir).sort(), ['model.wf', 'probe'], 'the temporary file was removed');
    assert.equal((await loadModelFile(path)).step, 2);
    model.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('F6: a process killed while saving never leaves a half-written model file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wf-kill-'));
  try {
    const path = join(dir, 'model.wf');
    // a child that saves a ~40 MB model over and over, training a step between saves so that
    // every file differs; it is killed (SIGKILL: no cleanup) while a save is under way
    const script = join(dir, 'saver.mjs');
    writeFileSync(script, `
      import { createModel, saveModelFile } from ${JSON.stringify(new URL('../../src/js/node.js', import.meta.url).href)};
      const model = await createModel({ nLayer: 4, nHead: 4, dModel: 256, dFF: 1024, context: 16, vocabSize: 40, batchSize: 1 });
      const text = 'the cat sat on the mat. '.repeat(20);
      for (let i = 0; ; i++) {
        await model.train(text, { steps: 1, evalInterval: 0 });
        await saveModelFile(model, process.argv[2]);
        if (i === 0) process.stdout.write('saved\\n');
      }`);
    let midWrite = 0;
    const kills = 6;
    for (let k = 0; k < kills; k++) {
      const child = spawn(process.execPath, [script, path], { stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise((resolve) => child.stdout.once('data', resolve)); // one good file exists
      // kill when the next save has created its temporary file, or up to 30 ms later
      const watcher = watch(dir);
      await new Promise((resolve) => watcher.on('change', (type, name) => { if (String(name).endsWith('.tmp')) resolve(); }));
      watcher.close();
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 30));
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      const leftovers = readdirSync(dir).filter((f) => f.endsWith('.tmp'));
      midWrite += leftovers.length > 0;
      for (const f of leftovers) rmSync(join(dir, f));
      // whatever moment it died at, model.wf is a whole checkpoint: its length and CRC-32 check
      const loaded = await loadModelFile(path);
      assert.ok(loaded.step >= 1, `after kill ${k + 1}: a complete model of step ${loaded.step}`);
      loaded.dispose();
    }
    console.log(`# ${midWrite} of ${kills} kills left a half-written temporary file behind`);
    assert.ok(midWrite > 0, 'no kill landed while a file was being written: the test did not test a crash mid-save');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('F12: a trap closes the module: every call on its models and tokenizers rejects at once with WF_ERR_MODULE; the next model gets a new module', async () => {
  const a = await createModel(SMALL), b = await createModel(SMALL);
  await a.train(TEXT, { steps: 2, evalInterval: 0 });
  const tok = await loadTokenizer(readFileSync(fileURLToPath(new URL('../fixtures/tokenizers/gpt2.json', import.meta.url))));
  const rt = modelHandle(a).rt;
  assert.ok(modelHandle(b).rt === rt, 'both models live in one module');
  // a trap, made on purpose: an export handed an address past the end of the wasm memory (the
  // core's own calls never do; issue 25's wrapped sizes did, with "memory access out of bounds")
  const closed = (e) => e instanceof WfError && e.code === 'WF_ERR_MODULE' && /failed in wf_model_get_config/.test(e.message)
    && /RuntimeError: memory access out of bounds/.test(e.message) && /create them again/.test(e.message);
  assert.throws(() => rt.M._wf_model_get_config(modelHandle(a).h, 0xFFFFFFF0), closed, 'the trap itself');
  // every later call on anything of that module: at once, with the code (no call reaches the module)
  const t0 = performance.now();
  await assert.rejects(a.train(TEXT, { steps: 1, evalInterval: 0 }), closed, 'train');
  await assert.rejects(b.generateText('the', { maxTokens: 4 }), closed, 'generate on the other model');
  assert.throws(() => b.save(), closed, 'save');
  assert.throws(() => tok.encode('hello'), closed, 'a tokenizer of the module');
  assert.throws(() => a.step, closed, 'a getter');
  a.dispose();
  b.dispose();
  tok.dispose(); // disposing frees nothing in a dead module, and throws nothing
  assert.ok(performance.now() - t0 < 5000, 'the refusals took seconds');
  // the next model loads a new module, and works
  const c = await createModel(SMALL);
  assert.ok(modelHandle(c).rt !== rt, 'a new module');
  await c.train(TEXT, { steps: 2, evalInterval: 0 });
  assert.equal(c.step, 2);
  assert.equal(typeof (await c.generateText('the', { maxTokens: 4, seed: 1 })), 'string');
  c.dispose();
});
