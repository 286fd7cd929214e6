// The page tells the truth about the model in front of it (issue 27): each statement it makes
// about the model (overfitting, divergence, what is saved, the step a figure shows, what the
// left-hand figures describe) checked in headless Chromium against a fresh static build, with
// axe-core clean in each state the checks reach. Most checks feed the page's own modules the
// runs they need (a noisy default run, an overfitting one) instead of training for minutes;
// those that need a model train one for a few seconds.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { haveChromium } from '../js/pack.js';
import { axeClean, open as openAt, serveSite, text, trainSteps, waitText } from './harness.mjs';

let site;
before(async () => { site = await serveSite(); });
after(async () => { await site?.close(); });

/** A fresh browser profile on the page (harness.mjs). */
const open = (viewport, answer) => openAt(site.origin, viewport, answer);

/** A run's chart points: training loss every step falling from 2.6 to `end`, validations every
 * 100 steps as given. */
function run(vals, end = 1.2) {
  const steps = vals.length * 100;
  const train = Array.from({ length: steps }, (_, i) => [i + 1, 2.6 - (2.6 - end) * Math.sqrt((i + 1) / steps)]);
  return { train, val: vals.map((v, i) => [(i + 1) * 100, v]) };
}

// 1. The default minute's validations (micro, the novel: 1.375 -> 1.400 -> 1.410 at its end)
// are noise; a 1 KB text's climb to 5.6 is not; and the note, when real, is by the chart.
test('1: the overfitting note is judged with the validation noise, and sits by the chart', async (t) => {
  if (!haveChromium(t)) return;
  const b = await open();
  try {
    const judge = (points) => b.page.evaluate(async (pts) => {
      const { TrainingController } = await import('./trainer.js');
      const fake = { chart: pts, train: { train: { evalBatches: 4, batchSize: 16 }, config: { context: 64 } } };
      return TrainingController.prototype.overfitting.call(fake);
    }, points);
    const noisy = run([2.52, 1.93, 1.71, 1.58, 1.50, 1.45, 1.41, 1.39, 1.375, 1.400, 1.410]);
    assert.equal(await judge(noisy), false, 'the default run\'s last validations rise by noise alone');
    const memorised = run([3.1, 2.7, 2.6, 2.9, 3.6, 4.4, 5.0, 5.6], 0.3);
    assert.equal(await judge(memorised), true, 'a run whose validation climbs 3 nats overfits');
    assert.match(await text(b.page, '#overfit-figures'), /above its best \(2\.600\)/);
    await b.page.$eval('#overfit-note', (el) => { el.hidden = false; });
    const gap = await b.page.evaluate(() => {
      const note = document.querySelector('#overfit-note').getBoundingClientRect(), chart = document.querySelector('#loss-chart').getBoundingClientRect();
      return Math.max(note.top - chart.bottom, chart.top - note.bottom);
    });
    assert.ok(gap < 80, `the note is by the chart (${gap.toFixed(0)} px away)`);
    await axeClean(b.page, 'with the overfitting note shown');
    assert.deepEqual(b.problems, []);
  } finally {
    await b.close();
  }
});

// 2. The attention map follows the model: redrawn at each validation by default, and it says
// which step's weights it shows (the last validation's at the end of a run).
test('2: the attention map is redrawn live by default and names its step', async (t) => {
  if (!haveChromium(t)) return;
  const b = await open();
  try {
    assert.equal(await b.page.isChecked('#att-live'), true, 'live by default');
    await trainSteps(b.page, 120, 40);
    const step = () => b.page.$eval('#att-map', (el) => el.dataset.step);
    await b.page.waitForFunction(() => document.querySelector('#att-map').dataset.step === '120', null, { timeout: 20_000 }).catch(() => {});
    assert.equal(await step(), '120', 'at the end of the run the map is of the last validation\'s weights');
    assert.match(await text(b.page, '#att-at'), /^The model at step 120:$/);
    await axeClean(b.page, 'after a run, the map labelled');
    assert.deepEqual(b.problems, []);
  } finally {
    await b.close();
  }
});
