// Training is one run in the core (issue 24): startRun, continueRun and endRun drive it from
// JavaScript as train() does; a run paused between calls is the run that never paused; a
// model meeting a new text is judged from where its run started, not diverged for starting
// high, while a real blow-up is still caught and rolled back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEncoder, createModel, loadModel } from '../../src/js/node.js';

const SMALL = { nLayer: 1, nHead: 2, dModel: 32, dFF: 64, context: 16 };
const TEXT = 'It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife. '.repeat(30);

test('a model trained on one text fine-tunes on another without a false divergence; lr 1e6 after 150 good steps is still caught and rolled back (issue 24, defect 3)', async () => {
  // a model sure of its text (the alphabet, counting up) meets a new one (counting down):
  // its first losses are far above 1.5 ln V + 1, the absolute bound that refused it before
  const up = 'abcdefghijklmnopqrstuvwxyz '.repeat(150), down = [...up].reverse().join('');
  const model = await createModel(SMALL, { threads: 1, text: up });
  const trained = await model.train(up, { steps: 150, lr: 1e-2, evalInterval: 0 });
  assert.ok(trained.loss < 0.1, `sure of its text: loss ${trained.loss}`);
  const seen = [];
  const tuned = await model.train(down, { steps: 60, lr: 3e-4, evalInterval: 0, yieldMs: 0, onProgress: (p) => seen.push(p.loss) });
  const old = 1.5 * Math.log(model.config.vocabSize) + 1;
  assert.ok(seen[0] > old, `the new text starts at ${seen[0].toFixed(2)}, above the ${old.toFixed(2)} an absolute bound allowed`);
  assert.ok(tuned.steps === 60 && tuned.loss < seen[0], `60 steps, the loss falling: ${seen[0].toFixed(2)} -> ${tuned.loss.toFixed(2)}`);
  // a real blow-up: caught, and the model back where the call found it
  const saved = model.save();
  await assert.rejects(model.train(down, { steps: 20, lr: 1e6, evalInterval: 0 }), (e) => e.code === 'WF_ERR_DIVERGED'
    && e.facts.backup === 210 && e.facts.at > 210 && /the model went back to step 210/.test(e.message));
  assert.equal(model.step, 210);
  assert.deepEqual(model.save(), saved, 'rolled back: the whole state as it was');
  model.dispose();
});

test('startRun, continueRun, endRun: the text crosses once; a run paused between calls and saved is the run that never paused', async () => {
  const opts = { steps: 24, batchSize: 4, evalInterval: 8, seed: 3, lr: 3e-3 };
  const one = await createModel({ ...SMALL, seed: 5 }, { threads: 1, text: TEXT });
  const info = one.startRun(TEXT, opts);
  assert.ok(info.steps === 0 && info.lastSteps === 24 && info.batchSize === 4 && info.evalInterval === 8 && !info.finished);
  const whole = [];
  const summary = await one.continueRun({ yieldMs: 0, onProgress: (p) => whole.push([p.step, p.loss, p.lr, p.valLoss]) });
  assert.ok(summary.finished && summary.steps === 24 && one.run.finished && one.run.valStep === 24);
  // the same run in pieces: steps, a save and a load between them
  let m = await createModel({ ...SMALL, seed: 5 }, { threads: 1, text: TEXT });
  m.startRun(TEXT, opts);
  const pieces = [];
  const onProgress = (p) => pieces.push([p.step, p.loss, p.lr, p.valLoss]);
  await m.continueRun({ steps: 5, yieldMs: 0, onProgress });
  await m.continueRun({ steps: 6, yieldMs: 0, onProgress });
  const moved = await loadModel(m.save());
  m.dispose();
  m = moved;
  assert.equal(m.run.steps, 11);
  await assert.rejects(m.continueRun(), (e) => e.code === 'WF_ERR_STATE' && /without its \d+ tokens/.test(e.message));
  m.startRun(TEXT, { keepSchedule: true }); // a loaded run takes its text again
  await m.continueRun({ yieldMs: 0, onProgress });
  assert.deepEqual(pieces, whole, 'every step\'s loss and lr, every validation, as the run that never paused');
  const { seconds: _a, backup: _b, ...ra } = one.run, { seconds: _c, backup: _d, ...rb } = m.run;
  assert.deepEqual(rb, ra);
  one.endRun();
  m.endRun();
  assert.deepEqual(m.save(), one.save(), 'weights, moments, step, settings and sampler, bit for bit');
  assert.equal(m.run, null);
  await assert.rejects(m.continueRun(), (e) => e.code === 'WF_ERR_STATE' && /no training run/.test(e.message));
  // a run's settings are checked before anything changes
  const before = m.optimizer;
  assert.throws(() => m.startRun(TEXT, { steps: 0, lr: 5 }), (e) => e.code === 'WF_ERR_ARG' && /steps must be an integer >= 1/.test(e.message));
  assert.throws(() => m.startRun(TEXT, { batchSize: 4, context: 999 }), (e) => /sequence length 999 exceeds the model's context of 16/.test(e.message));
  assert.throws(() => m.startRun(TEXT, { stepz: 3 }), /unknown key "stepz" in startRun\(\) options; did you mean "steps"/);
  assert.throws(() => m.startRun(TEXT, { seed: 2 ** 31 }), /seed must be an integer in \[0, 2147483647\]/);
  assert.deepEqual(m.optimizer, before);
  assert.equal(m.run, null);
  one.dispose();
  m.dispose();
  const encoder = await createEncoder(SMALL, { threads: 1 });
  assert.throws(() => encoder.model.startRun(TEXT), (e) => e.code === 'WF_ERR_STATE' && /works on decoders/.test(e.message));
  encoder.dispose();
});
