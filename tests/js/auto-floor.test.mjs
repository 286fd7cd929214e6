// preset 'auto' on the page (issue 27): a preset that cannot win for the time is not measured
// (baby's steps take seconds here, and the page measures before the first click). The rule is
// exact against the bench's curves: a preset's expected loss never goes below its floor.
import test from 'node:test';
import assert from 'node:assert/strict';
import { AUTO_PRESETS, choosePreset, expectedLoss, lossFloor, mayWin } from '../../src/js/index.js';
import { AUTO_CURVES } from '../../src/js/auto-curves.js';

test('lossFloor is the lowest loss expectedLoss gives a preset at any steps', () => {
  for (const p of AUTO_PRESETS) {
    const floor = lossFloor(p);
    assert.equal(floor, AUTO_CURVES[p].at(-1)[1]);
    for (const steps of [1, 10, 100, 1e3, 1e4, 1e5, 1e7]) assert.ok(expectedLoss(p, steps) >= floor, `${p} at ${steps}`);
  }
  assert.throws(() => lossFloor('huge'), (e) => e.code === 'WF_ERR_ARG');
});

test('mayWin leaves out only presets choosePreset could not pick, at any speed of theirs', () => {
  // a minute at micro's speed on this project's machine: baby's floor is above micro's loss
  assert.equal(mayWin('baby', { seconds: 60, stepsPerSecond: { micro: 40, tiny: 10 } }), false);
  assert.equal(mayWin('tiny', { seconds: 60, stepsPerSecond: { micro: 40 } }), true, 'tiny can still win a minute');
  assert.equal(mayWin('baby', { seconds: 5, stepsPerSecond: { micro: 20 } }), true, 'micro makes too few steps in 5 s');
  assert.equal(mayWin('micro', { seconds: 60, stepsPerSecond: {} }), true, 'nothing measured yet');
  // never wrong: whenever mayWin says no, choosePreset does not pick it, however fast it is
  for (const seconds of [2, 5, 30, 60, 300, 3600]) {
    for (const micro of [2, 10, 40, 200]) {
      for (const tiny of [0.5, 3, 10, 50]) {
        const measured = { micro, tiny };
        if (mayWin('baby', { seconds, stepsPerSecond: measured })) continue;
        for (const baby of [0.01, 1, 100, 1e4]) {
          assert.notEqual(choosePreset({ seconds, stepsPerSecond: { ...measured, baby } }).preset, 'baby', `${seconds} s, ${micro}/${tiny}/${baby}`);
        }
      }
    }
  }
});
