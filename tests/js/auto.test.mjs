// preset: 'auto' (issue 28): the choice among micro, tiny and baby from injected speeds and the
// bench's curves (src/js/auto-curves.js). No timing here: speeds are given, so the rule is tested.
import test from 'node:test';
import assert from 'node:assert/strict';
import { AUTO_PRESETS, choosePreset, expectedLoss, mayWin } from '../../src/js/auto.js';
import { AUTO_CURVES } from '../../src/js/auto-curves.js';

test('expectedLoss follows the curve: its points exactly, falling with steps, flat past the end', () => {
  for (const p of AUTO_PRESETS) {
    const c = AUTO_CURVES[p];
    for (const [s, l] of c) assert.ok(Math.abs(expectedLoss(p, s) - l) < 1e-12, `${p} at ${s}`);
    for (let i = 1; i < c.length; i++) {
      const mid = Math.round(Math.sqrt(c[i - 1][0] * c[i][0]));
      const l = expectedLoss(p, mid);
      assert.ok(l <= Math.max(c[i - 1][1], c[i][1]) && l >= Math.min(c[i - 1][1], c[i][1]), `${p} at ${mid}`);
    }
    assert.equal(expectedLoss(p, 10 * c[c.length - 1][0]), c[c.length - 1][1]);
    assert.ok(expectedLoss(p, c[0][0] / 2) > c[0][1], 'fewer steps than measured: a higher loss');
    assert.equal(expectedLoss(p, 0), Infinity);
  }
});

test('choosePreset picks the lowest expected loss, and says why', () => {
  const speeds = { micro: 45, tiny: 10, baby: 0.6 };
  const short = choosePreset({ seconds: 30, stepsPerSecond: speeds });
  assert.equal(short.preset, 'micro');
  assert.equal(short.steps, 1350);
  assert.match(short.why, /micro 1350 steps -> [\d.]+, tiny 300 steps -> [\d.]+, baby 18 steps/);
  // long enough that micro is past its last point and tiny's 4000-step loss is lower
  assert.equal(choosePreset({ seconds: 1800, stepsPerSecond: speeds }).preset, 'tiny');
  // the same budget on a machine where tiny is slow: micro again
  assert.equal(choosePreset({ seconds: 1800, stepsPerSecond: { micro: 45, tiny: 0.5, baby: 0.05 } }).preset, 'micro');
  // every option's loss is at least the chosen one's
  for (const seconds of [10, 60, 300, 1800, 7200]) {
    const pick = choosePreset({ seconds, stepsPerSecond: speeds });
    for (const p of AUTO_PRESETS) assert.ok(pick.loss <= expectedLoss(p, Math.floor(seconds * speeds[p])), `${seconds} s: ${p}`);
  }
  // only the presets with a speed are candidates; a tie goes to the smaller
  assert.equal(choosePreset({ seconds: 1800, stepsPerSecond: { baby: 1 } }).preset, 'baby');
  assert.equal(choosePreset({ seconds: 1e6, stepsPerSecond: { micro: 1e3, tiny: 1e3 } }).preset, 'tiny');
});

test('choosePreset refuses what it cannot use', () => {
  for (const bad of [{}, { seconds: 0, stepsPerSecond: { micro: 1 } }, { seconds: NaN, stepsPerSecond: { micro: 1 } },
    { seconds: 10 }, { seconds: 10, stepsPerSecond: { micro: 0 } }]) {
    assert.throws(() => choosePreset(bad), (e) => e.code === 'WF_ERR_ARG', JSON.stringify(bad));
  }
});

// createModel('auto', {text, seconds}): the choice made from speeds measured here (so which
// preset wins is the machine's business; that the model IS the chosen preset, and that the
// choice is the lowest expected loss for the measured speeds, are the library's).
test('createModel(\'auto\', {text, seconds}) builds the preset chosen for the time, and says why', async () => {
  const { createModel, PRESETS } = await import('../../src/js/node.js');
  const text = 'It is a truth universally acknowledged, that a single man in possession of a good fortune. '.repeat(40);
  const model = await createModel('auto', { text, seconds: 20, threads: 1 });
  try {
    const c = model.autoChoice;
    assert.ok(AUTO_PRESETS.includes(c.preset), c.preset);
    for (const p of AUTO_PRESETS) {
      // measured, or left out because it could not win against the smaller ones measured
      const smaller = Object.fromEntries(AUTO_PRESETS.slice(0, AUTO_PRESETS.indexOf(p)).map((q) => [q, c.stepsPerSecond[q]]));
      assert.ok(c.stepsPerSecond[p] > 0 || !mayWin(p, { seconds: 20, stepsPerSecond: smaller }), `${p}: ${c.stepsPerSecond[p]}`);
    }
    assert.ok(c.stepsPerSecond.micro > 0, 'the smallest is always measured');
    assert.deepEqual(c, { ...choosePreset({ seconds: 20, stepsPerSecond: c.stepsPerSecond }), stepsPerSecond: c.stepsPerSecond });
    for (const k of ['nLayer', 'nHead', 'dModel', 'dFF', 'context']) assert.equal(model.config[k], PRESETS[c.preset][k], k);
    assert.equal(model.defaultBatchSize, PRESETS[c.preset].batchSize);
    assert.deepEqual(model.info().autoChoice, c);
  } finally {
    model.dispose();
  }
  // the other fields of a config object stay over the chosen preset
  const seeded = await createModel({ preset: 'auto', seed: 7 }, { text, seconds: 5, threads: 1 });
  assert.equal(seeded.config.seed, 7);
  assert.ok(AUTO_PRESETS.includes(seeded.autoChoice.preset));
  seeded.dispose();
  const plain = await createModel('micro', { text });
  assert.equal(plain.autoChoice, null, 'a named preset was not chosen');
  plain.dispose();
});

test('createModel(\'auto\') needs the text and the seconds; seconds goes with auto only', async () => {
  const { createModel } = await import('../../src/js/node.js');
  const text = 'abc abd abe '.repeat(50);
  for (const [config, opts, re] of [
    ['auto', { text }, /give seconds/],
    ['auto', { seconds: 10 }, /text option/],
    ['auto', { text, seconds: -1 }, /give seconds/],
    ['micro', { text, seconds: 10 }, /goes with the preset 'auto'/],
  ]) {
    await assert.rejects(createModel(config, opts), (e) => e.code === 'WF_ERR_ARG' && re.test(e.message), `${config} ${JSON.stringify(Object.keys(opts))}`);
  }
});
