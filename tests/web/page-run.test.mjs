// Issue 27, points 3, 4 and 10: a run that goes wrong is said once, in words, at the step it
// reached, and leaves no trace on the chart; autosave keeps the newest model and the one
// before it, each named; nothing on the page is left over from the model before (Generate's
// text and seed, "Ready to generate." while it cannot, an attention text the model cannot
// read, the restore offer during a new run). Headless Chromium against a fresh static build,
// axe-core clean in each state the checks reach.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { haveChromium } from '../js/pack.js';
import { axeClean, open, serveSite, text, trainSteps, waitText } from './harness.mjs';

let site;
before(async () => { site = await serveSite(); });
after(async () => { await site?.close(); });

/** A text of another kind than the novel: lower-case words, digits, no capitals or full stops. */
const OTHER = Array.from({ length: 400 }, (_, i) => `the quick brown fox jumps over the lazy dog ${i % 10}`).join('\n');

async function pasteText(page, body) {
  await page.selectOption('#corpus-source', 'paste');
  await page.fill('#corpus-paste', body);
  await waitText(page, '#corpus-stats', /\d/);
  await page.waitForTimeout(600); // the form's debounced check
}

async function setLr(page, lr) {
  if (!(await page.isVisible('#tr-lr'))) await page.click('#advanced summary');
  await page.fill('#tr-lr', String(lr));
  await page.waitForTimeout(600);
}

/** What the page says in its status line and error boxes. */
const said = (page) => page.evaluate(() => ({
  status: document.querySelector('#train-status').textContent,
  errors: [...document.querySelectorAll('#errors p')].map((p) => p.textContent),
  step: document.querySelector('#stat-step').textContent,
  chart: document.querySelector('#loss-chart').getAttribute('aria-label'),
  past: document.querySelector('#chart-past').textContent,
}));

// 3. Continuing on another text trains on (the core judges divergence from where the run
// started); a run that does go wrong (a huge learning rate) is told once, in plain words, at
// the step it reached, and its undone steps leave the chart (no "0 steps" run, no stretched axis).
test('3: a run that goes wrong is said once, in words, and leaves no trace on the chart', async (t) => {
  if (!haveChromium(t)) return;
  const b = await open(site.origin);
  try {
    await trainSteps(b.page, 60, 30);
    await pasteText(b.page, OTHER);
    await trainSteps(b.page, 40, 20, { more: true });
    // the status may still say the first run's "Done" when trainSteps returns: wait for this run's end
    await waitText(b.page, '#train-status', /^(Done: 100 steps|Training stopped|Stopped)/, 120_000);
    let s = await said(b.page);
    assert.match(s.status, /^Done: 100 steps/, 'continuing on another text is not refused');
    assert.deepEqual(s.errors, []);

    await setLr(b.page, 1);
    await trainSteps(b.page, 200, 50);
    s = await said(b.page);
    const reached = Number(/^Training stopped at step ([\d,]+)/.exec(s.status)?.[1].replace(/,/g, ''));
    assert.ok(reached >= 1, `the status names the step the run reached: "${s.status}"`);
    const back = /went back to step ([\d,]*\d)/.exec(s.status)?.[1];
    assert.equal(s.step, back, `the step figure is where the model is now: "${s.status}"`);
    assert.deepEqual(s.errors, [], 'said once, by the buttons, not again in an error box');
    assert.doesNotMatch(s.status, /diverg|gradient|lr\b|NaN/i, 'no jargon');
    assert.equal(s.status.match(/learning rate/g)?.length, 1, 'the advice once');
    assert.match(s.chart, /no training yet|step 0,/, `the steps undone leave the chart: ${s.chart}`);
    await axeClean(b.page, 'after a run went wrong');

    await setLr(b.page, 0.003);
    await trainSteps(b.page, 20, 10);
    s = await said(b.page);
    assert.doesNotMatch(s.past, /\b0 steps/, `the failed run is no earlier run of the chart: ${s.past}`);
    assert.deepEqual(b.problems, []);
  } finally {
    await b.close();
  }
});

/** The page's autosave slots as they are in IndexedDB: {key: {modelId, step, corpus}}. */
const slots = (page) => page.evaluate(() => new Promise((resolve, reject) => {
  const req = indexedDB.open('wasmformer');
  req.onerror = () => reject(req.error);
  req.onsuccess = () => {
    const out = {}, tx = req.result.transaction('autosave', 'readonly'), store = tx.objectStore('autosave');
    const keys = store.getAllKeys();
    keys.onsuccess = () => {
      for (const k of keys.result) {
        store.get(k).onsuccess = (e) => { const r = e.target.result; out[k] = { modelId: r.modelId, step: r.step, corpus: r.corpus?.name }; };
      }
    };
    tx.oncomplete = () => resolve(out);
  };
}));

// 4. Autosave keeps the newest model, and the one before it in a second slot; after a reload
// the offer is the newest, the earlier one can be picked, and "Nothing saved yet." is not said.
test('4: autosave keeps the newest model and the earlier one, each named', async (t) => {
  if (!haveChromium(t)) return;
  const b = await open(site.origin);
  try {
    await trainSteps(b.page, 80, 40); // the novel: 80 steps
    await waitText(b.page, '#keep-status', /step 80/);
    await pasteText(b.page, OTHER);
    await trainSteps(b.page, 30, 15); // a newer model with fewer steps
    await waitText(b.page, '#keep-status', /^Autosaved in this browser at step 30 .* The earlier model is kept too: Pride and Prejudice/);
    const kept = await slots(b.page);
    assert.equal(kept.lm?.step, 30, `the newest model is the autosave: ${JSON.stringify(kept)}`);
    assert.equal(kept['lm-earlier']?.step, 80, `the earlier one is kept beside it: ${JSON.stringify(kept)}`);

    await b.page.reload();
    await b.page.waitForSelector('body[data-ready=true]', { timeout: 60_000 });
    await b.page.waitForSelector('#restore:not([hidden])', { timeout: 20_000 });
    const offer = await text(b.page, '#restore-text');
    assert.match(offer, /your text/i, `the offer is the newest model: ${offer}`);
    assert.match(offer, /validation loss \d\.\d{3}/, `named by its validation loss: ${offer}`);
    assert.match(offer, /trained for \d/, `and its time: ${offer}`);
    assert.ok(await b.page.isVisible('#restore-earlier'), 'the earlier one can be picked');
    assert.match(await text(b.page, '#restore-earlier'), /Pride and Prejudice/);
    assert.doesNotMatch(await text(b.page, '#keep-status'), /Nothing saved yet/);
    await axeClean(b.page, 'with the offer of two models');
    await b.page.click('#restore-earlier');
    await waitText(b.page, '#train-status', /^Restored/);
    assert.equal(await text(b.page, '#stat-step'), '80', 'the earlier model came back');
    assert.deepEqual(b.problems, []);
  } finally {
    await b.close();
  }
});

// 10. Nothing stays from the model before: Generate's text and seed go when a new model trains,
// "Ready to generate." only when Generate can be pressed, an unknown prompt character is said
// on the page, the attention text is one the model can read, and the restore offer leaves when
// a new run starts.
test('10: nothing on the page is left over from the model before', async (t) => {
  if (!haveChromium(t)) return;
  const b = await open(site.origin);
  try {
    await trainSteps(b.page, 40, 20);
    await b.page.fill('#gen-seed', '7');
    await b.page.fill('#gen-max', '20');
    await b.page.click('#gen-start');
    await waitText(b.page, '#gen-status', /^Generated .* seed 7/);

    await pasteText(b.page, OTHER);
    await b.page.selectOption('#tr-for', 'steps');
    await b.page.fill('#tr-steps', '60');
    await b.page.click('#train-start');
    await waitText(b.page, '#train-status', /^Training/);
    const during = await b.page.evaluate(() => ({
      out: document.querySelector('#gen-output').textContent, status: document.querySelector('#gen-status').textContent,
      disabled: document.querySelector('#gen-start').disabled,
    }));
    assert.equal(during.out, '', 'the previous model\'s text is gone');
    assert.doesNotMatch(during.status, /seed 7/, `its seed too: ${during.status}`);
    assert.ok(during.disabled && !/Ready to generate/.test(during.status), `no "Ready" while Generate cannot run: ${during.status}`);
    await waitText(b.page, '#train-status', /^Done/, 120_000);

    // the attention text: the model's own, not the novel's default it cannot read
    await b.page.waitForFunction(() => document.querySelector('#att-map').dataset.step !== undefined, null, { timeout: 20_000 });
    const att = await b.page.$eval('#att-text', (el) => el.value);
    assert.ok(att.length > 0 && [...att].every((ch) => OTHER.includes(ch)), `the attention text fits the model: "${att}"`);
    await b.page.focus('#att-map');
    await b.page.keyboard.press('ArrowRight');
    assert.doesNotMatch(await text(b.page, '#att-readout'), /\uFFFD/, 'the readout names real characters');

    // an unknown prompt character, said on the page
    await b.page.fill('#gen-prompt', 'Zebra');
    await b.page.click('#gen-start');
    await waitText(b.page, '#gen-status', /^Generated/);
    assert.match(await text(b.page, '#gen-status'), /"Z".*not know|not know.*"Z"/, 'the unknown character is told on the page');
    await axeClean(b.page, 'after generating with an unknown character');

    // the restore offer goes when a new run starts
    await b.page.reload();
    await b.page.waitForSelector('body[data-ready=true]', { timeout: 60_000 });
    await b.page.waitForSelector('#restore:not([hidden])', { timeout: 20_000 });
    await b.page.click('#train-start');
    await waitText(b.page, '#train-status', /^Training/);
    assert.equal(await b.page.isVisible('#restore'), false, 'the restore offer is gone once a new run starts');
    await b.page.click('#train-stop');
    await waitText(b.page, '#train-status', /^Stopped/);
    assert.deepEqual(b.problems, []);
  } finally {
    await b.close();
  }
});
