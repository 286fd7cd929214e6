// Training for a time budget (issue 14, item 4): train({ seconds }) and the CLI's --time,
// with a learning-rate schedule that follows the clock, resumable from what was spent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createModel } from '../../src/js/node.js';
import { budgetFactor } from '../../src/js/training.js';

const SMALL = { nLayer: 1, nHead: 2, dModel: 16, dFF: 32, context: 8 };
const TEXT = 'It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife. '.repeat(20);

test('the budget schedule: warmup from 1 % over the first fraction, then a cosine to minLrRatio at the end', () => {
  assert.equal(budgetFactor(0, 0.05, 0.1), 0.01);
  assert.equal(budgetFactor(0.025, 0.05, 0.1), 0.5);
  assert.equal(budgetFactor(0.05, 0.05, 0.1), 1);
  assert.ok(Math.abs(budgetFactor(0.525, 0.05, 0.1) - 0.55) < 1e-12, 'halfway down the cosine');
  assert.ok(Math.abs(budgetFactor(1, 0.05, 0.1) - 0.1) < 1e-12);
  assert.equal(budgetFactor(0.3, 0, 0), 0.5 * (1 + Math.cos(Math.PI * 0.3)));
});

test('train({ seconds }) stops when the budget is spent, ends its schedule there, and resumes from secondsDone', async () => {
  const model = await createModel(SMALL, { threads: 1, text: TEXT });
  const seen = [];
  const s = await model.train(TEXT, { seconds: 0.5, lr: 1e-2, minLrRatio: 0.1, evalInterval: 0, yieldMs: 0, onProgress: (p) => seen.push(p) });
  assert.ok(s.steps > 5 && s.step === s.steps, `${s.steps} steps`);
  assert.ok(s.secondsDone >= 0.5 && s.trainSeconds === s.secondsDone, `spent ${s.secondsDone} s`);
  assert.equal(seen[0].lr < 2e-3, true, `the first step warms up (lr ${seen[0].lr})`);
  const end = seen.at(-1);
  assert.ok(end.lr < 1e-2 * 0.15, `the last step is at the end of the decay (lr ${end.lr})`);
  assert.equal(end.steps, null);
  assert.equal(end.seconds, 0.5);
  assert.equal(model.optimizer.lr, 1e-2, 'the settings keep the peak lr');
  // resuming late in a budget starts late in its schedule
  const late = [];
  await model.train(TEXT, { seconds: 1, secondsDone: 0.9, lr: 1e-2, evalInterval: 0, yieldMs: 0, onProgress: (p) => late.push(p) });
  assert.ok(late[0].lr < 1e-2 * 0.2, `90 % into a budget the lr is in the tail (${late[0].lr})`);
  // steps caps a budget; the options are checked
  assert.equal((await model.train(TEXT, { seconds: 60, steps: 3, evalInterval: 0 })).steps, 3);
  await assert.rejects(model.train(TEXT, { seconds: 0 }), /seconds must be a finite number > 0, not 0/);
  await assert.rejects(model.train(TEXT, { seconds: 1, secondsDone: 1 }), /secondsDone must be a number in \[0, seconds = 1\)/);
  await assert.rejects(model.train(TEXT, { secondsDone: 1 }), /secondsDone goes with seconds/);
  model.dispose();
});
