// Training for a time budget (issue 14, item 4; issue 24): train({ seconds }) and the CLI's
// --time, a run of the core's whose learning-rate schedule follows the clock. The run keeps
// what it has spent, in the model and its file, so that it goes on exactly; a budget that
// ended leaves its decayed rate in the optimizer settings, where keepSchedule goes on from it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createModel, loadModel } from '../../src/js/node.js';

const SMALL = { nLayer: 1, nHead: 2, dModel: 16, dFF: 32, context: 8 };
const TEXT = 'It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife. '.repeat(20);

test('train({ seconds }) stops when the budget is spent, its schedule warming up from 1 % and decaying to its end', async () => {
  const model = await createModel(SMALL, { threads: 1, text: TEXT });
  const seen = [];
  const s = await model.train(TEXT, { seconds: 0.5, lr: 1e-2, minLrRatio: 0.1, evalInterval: 0, yieldMs: 0, onProgress: (p) => seen.push(p) });
  assert.ok(s.steps > 5 && s.step === s.steps && s.finished, `${s.steps} steps`);
  assert.ok(s.secondsDone >= 0.5 && s.trainSeconds === s.secondsDone, `spent ${s.secondsDone} s`);
  assert.equal(seen[0].lr, 1e-4, `the first step at 1 % of lr (${seen[0].lr})`);
  const end = seen.at(-1);
  assert.ok(end.lr < 1e-2 * 0.15, `the last step is at the end of the decay (lr ${end.lr})`);
  assert.ok(end.steps === null && end.seconds === 0.5 && end.finished);
  assert.equal(model.optimizer.lr, 1e-2, 'the settings keep the peak lr');
  await assert.rejects(model.train(TEXT, { seconds: 0 }), /seconds must be a finite number > 0, not 0/);
  await assert.rejects(model.train(TEXT, { seconds: 1, secondsDone: 0.5 }), /unknown key "secondsDone"/);
  await assert.rejects(model.train(TEXT, { warmupFraction: 0.1 }), /warmupFraction goes with seconds/);
  model.dispose();
});

test('keepSchedule after a budget goes on at its decayed rate, not back at the peak (issue 24, defect 2)', async () => {
  const model = await createModel(SMALL, { threads: 1, text: TEXT });
  await model.train(TEXT, { seconds: 0.3, lr: 3e-3, minLrRatio: 0.1, evalInterval: 0 });
  const step = model.step, seen = [];
  await model.train(TEXT, { keepSchedule: true, steps: 5, evalInterval: 0, yieldMs: 0, onProgress: (p) => seen.push(p.lr) });
  assert.equal(seen.length, 5);
  assert.ok(seen.every((lr) => Math.abs(lr - 3e-4) < 1e-9), `5 more steps at 3e-4, not 3e-3: ${seen}`);
  assert.equal(model.run, null, 'train() ended the run it completed');
  assert.ok(Math.abs(model.lr - 3e-4) < 1e-9, `the next step's lr is the decayed one: ${model.lr}`);
  const o = model.optimizer;
  assert.ok(o.lr === 3e-3 && o.warmup === 0 && o.decaySteps === 1 && o.start === step - 1,
    `the settings keep the peak and say the decay ended at step ${step}: ${JSON.stringify(o)}`);
  // and seconds more: the same rate
  const more = [];
  await model.train(TEXT, { keepSchedule: true, seconds: 0.1, evalInterval: 0, yieldMs: 0, onProgress: (p) => more.push(p.lr) });
  assert.ok(more.length > 0 && more.every((lr) => Math.abs(lr - 3e-4) < 1e-9), `0.1 s more at 3e-4: ${more}`);
  model.dispose();
});

test('a budget stopped early stays in the model and its file; keepSchedule goes on with it where it stood', async () => {
  const model = await createModel(SMALL, { threads: 1, text: TEXT });
  const first = await model.train(TEXT, { seconds: 30, steps: 4, lr: 1e-2, evalInterval: 0 });
  assert.ok(!first.finished && first.steps === 4 && first.seconds === 30);
  const run = model.run;
  assert.ok(run.steps === 4 && run.lastSeconds === 30 && run.seconds > 0 && !run.finished, JSON.stringify(run));
  // saved with its run: a loaded model knows the budget and what it spent
  const loaded = await loadModel(model.save());
  assert.deepEqual({ ...loaded.run, backup: 0 }, model.run, 'the same run (its roll-back copy is taken when it goes on)');
  assert.equal(loaded.defaultBatchSize, run.batchSize);
  // going on: the same run, its clock where it was, its lr in its warm-up (not a new run's)
  const seen = [];
  await loaded.train(TEXT, { keepSchedule: true, steps: 3, evalInterval: 0, yieldMs: 0, onProgress: (p) => seen.push(p) });
  assert.deepEqual(seen.map((p) => p.stepsDone), [5, 6, 7], 'the run counts on');
  assert.ok(seen[0].secondsDone > run.seconds && seen.every((p) => p.seconds === 30));
  assert.ok(seen.every((p) => p.lr < 1e-3), `still in its warm-up (1.5 s of 30): ${seen.map((p) => p.lr)}`);
  // a run goes on only on its own text
  await assert.rejects(loaded.train(`${TEXT}x`, { keepSchedule: true, steps: 1 }), (e) => e.code === 'WF_ERR_STATE' && /tokens it began with/.test(e.message));
  model.dispose();
  loaded.dispose();
});
