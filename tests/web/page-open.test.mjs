// Issue 27, points 6, 7 and 8, the layout and the time-aware size: the page tells the truth
// about the model loaded (a .wf continues as it was trained; a pretrained model fine-tunes with
// LoRA, said in one line, never "trained for 0 steps"; the left-hand figures are the loaded
// model's; a new model's bad setting speaks the form's words and does not stop the loaded one),
// fine-tuning has its own place and the destructive button stands apart, Train is in a phone's
// first screen and the bar at 1024x768 leaves the chart whole, and 'auto' picks the size for
// the time from this machine's measured speed without holding up the first click. axe-core is
// clean in each state reached.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { haveChromium } from '../js/pack.js';
import { axeClean, open as openAt, root, serveSite, text, waitText } from './harness.mjs';

let site, wf, gguf;
before(async () => {
  site = await serveSite();
  // a model trained 3 steps on a text of 35 characters (a vocabulary of 36), saved as the page saves
  const { createModel } = await import('../../src/js/node.js');
  const words = 'the quick brown fox jumps over a lazy dog, 0123456789. ';
  const corpus = words.repeat(200);
  const m = await createModel('micro', { text: corpus, threads: 1 });
  await m.train(m.tokenizer.encode(corpus), { steps: 3, batchSize: 4, evalInterval: 0, valFraction: 0 });
  wf = { bytes: Buffer.from(m.save()), vocab: m.config.vocabSize, params: m.info().paramCount };
  m.dispose();
  // a pretrained model as llama.cpp's file: a small Llama-shaped model over the GPT-2 tokenizer fixture
  const { loadTokenizer } = await import('../../src/js/node.js');
  const tok = await loadTokenizer(readFileSync(join(root, 'tests/fixtures/tokenizers/gpt2.json')));
  const llama = await createModel({ arch: 'decoder', vocabSize: tok.vocabSize, context: 32, nLayer: 1, nHead: 2, dModel: 16, dFF: 32,
    norm: 'rmsnorm', activation: 'swiglu', positions: 'rope', bias: false }, { tokenizer: tok, threads: 1 });
  gguf = Buffer.from(llama.save({ format: 'gguf', optimizer: false }));
  llama.dispose();
});
after(async () => { await site?.close(); });

const open = (viewport, answer) => openAt(site.origin, viewport, answer);
const box = (page, sel) => page.$eval(sel, (el) => { const r = el.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, height: r.height }; });

test('6, 8: a .wf continues as trained, a pretrained folder or GGUF fine-tunes with LoRA; the left figures are the loaded model\'s', async (t) => {
  if (!haveChromium(t)) return;
  const b = await open();
  const { page } = b;
  try {
    await page.setInputFiles('#model-open', { name: 'small.wf', mimeType: 'application/octet-stream', buffer: wf.bytes });
    await waitText(page, '#train-status', /^Opened small\.wf/);
    // 6: a checkpoint of this page's is continued, not fine-tuned with adapters
    assert.equal(await page.isHidden('#finetune-row'), true, 'a saved .wf is not offered LoRA: it continues as it was trained');
    assert.match(await text(page, '#loaded-what'), /^small\.wf: trained for 3 steps; training it more continues its training as it was/);
    // 8: the figures on the left describe it, and say so
    assert.equal(await text(page, '#stat-vocab-label'), 'Vocabulary of the loaded model');
    assert.match(await text(page, '#stat-vocab'), new RegExp(`^${wf.vocab} `), `the loaded model's ${wf.vocab}, not the novel's`);
    assert.equal(await text(page, '#loaded-params'), wf.params.toLocaleString('en-US'));
    // 8: a new model's impossible shape speaks the form's words and leaves the loaded model trainable
    await page.click('#advanced summary');
    await page.fill('#cfg-nHead', '6');
    await page.fill('#cfg-dModel', '4000');
    await waitText(page, '#model-problem', /4000/);
    const problem = await text(page, '#model-problem');
    assert.match(problem, /Attention heads 6 does not divide Width \(d_model\) 4000/);
    assert.doesNotMatch(problem, /nHead|dModel/, 'no code names');
    assert.equal(await page.isDisabled('#train-start'), true, 'no new model of these settings');
    assert.equal(await page.isEnabled('#train-more'), true, 'the loaded model still trains more');
    await axeClean(page, 'a .wf opened, a bad new-model setting');
    await page.selectOption('#tr-for', 'steps');
    await page.fill('#tr-steps', '5');
    await page.click('#train-more');
    await waitText(page, '#train-status', /^Done: 8 steps/, 120_000);
    assert.doesNotMatch(await text(page, '#finetune-status'), /LoRA/, 'no adapters: all its weights trained');
    assert.match(await text(page, '#loaded-what'), /^small\.wf: trained for 8 steps; training it more continues/);
    // 6: a pretrained model (a folder of Hugging Face-style files) fine-tunes with LoRA by default, said in one line
    await page.setInputFiles('#folder-open', join(root, 'tests/fixtures/wf_export_llama'));
    await waitText(page, '#train-status', /^Opened wf_export_llama/);
    const status = await text(page, '#train-status');
    assert.match(status, /pretrained/);
    assert.doesNotMatch(status, /0 steps/);
    assert.match(await text(page, '#loaded-what'), /^wf_export_llama: a pretrained model\. Training it more fine-tunes it with LoRA, the default here/);
    assert.equal(await page.isVisible('#finetune-row'), true);
    assert.equal(await page.isChecked('#finetune-lora'), true);
    await axeClean(page, 'a pretrained folder opened');
    // and a GGUF file: pretrained too
    await page.setInputFiles('#model-open', { name: 'small.gguf', mimeType: 'application/octet-stream', buffer: gguf });
    await waitText(page, '#train-status', /^Opened small\.gguf/);
    assert.match(await text(page, '#train-status'), /^Opened small\.gguf: [\d,]+ parameters, pretrained\.$/);
    assert.match(await text(page, '#loaded-what'), /^small\.gguf: a pretrained model\. Training it more fine-tunes it with LoRA/);
    assert.equal(await page.isVisible('#finetune-row'), true);
    assert.deepEqual(b.problems, []);
  } finally {
    await b.close();
  }
});

test('7, layout, auto: fine-tuning near the top, forgetting apart; the 1024x768 bar; auto picks for the time without delay', async (t) => {
  if (!haveChromium(t)) return;
  const b = await open({ width: 1024, height: 768 });
  const { page } = b;
  try {
    // 7: nothing saved, no forget button; it is styled apart from the others; opening a model sits above the new-model form
    assert.equal(await page.isHidden('#autosave-forget'), true, 'nothing is saved on a fresh profile');
    const colour = (sel) => page.$eval(sel, (el) => getComputedStyle(el).backgroundColor);
    assert.notEqual(await colour('#autosave-forget'), await colour('#model-open-button'), 'the destructive button is not one of the blue ones');
    const [open, preset] = [await box(page, '#folder-open-button'), await box(page, '#preset')];
    assert.ok(open.bottom < preset.top, 'opening a model comes before the new model\'s size');
    assert.equal(await page.$eval('#folder-open-button', (el) => !!el.closest('section')?.querySelector('#model-title')), true, 'in the model section');
    // auto: the default; the first click, at once, waits at most a couple of seconds for the measurement
    assert.equal(await page.inputValue('#preset'), 'auto');
    await page.click('#train-start');
    await page.waitForFunction(() => document.querySelector('#preset-why').dataset.clickWaitedMs !== undefined, null, { timeout: 60_000 });
    const waited = Number(await page.$eval('#preset-why', (el) => el.dataset.clickWaitedMs));
    const why = await text(page, '#preset-why'), chosen = await page.$eval('#preset-why', (el) => el.dataset.preset);
    console.log(`  [auto] first click waited ${waited} ms: ${why}`);
    assert.ok(waited <= 2500, `the first click waited ${waited} ms for the measurement`);
    assert.match(why, /^(micro|tiny|baby): in 1 minute it makes [\d,]+ steps here and reaches a lower expected loss \([\d.]+\) than /);
    for (const other of ['micro', 'tiny', 'baby'].filter((p) => p !== chosen)) assert.match(why, new RegExp(`\\b${other}\\b`), `says why not ${other}`);
    await waitText(page, '#train-status', /^Training: /);
    const layers = { micro: 2, tiny: 4, baby: 6 }[chosen];
    assert.match(await text(page, '#loaded-what'), new RegExp(`^Made here: ${layers} layers`), 'the model made is the one chosen');
    await page.waitForTimeout(1500);
    // layout: the bar at most ~120 px while training, the chart wholly below it and on screen
    const bar = await box(page, '.train-bar'), chart = await box(page, '#loss-chart');
    console.log(`  [1024x768] bar ${bar.height.toFixed(0)} px, chart ${chart.top.toFixed(0)}..${chart.bottom.toFixed(0)}`);
    assert.ok(bar.height <= 120, `the bar is ${bar.height.toFixed(0)} px`);
    assert.ok(chart.top >= bar.bottom && chart.bottom <= 768, 'the chart is whole, below the bar');
    await axeClean(page, 'training the auto-chosen model at 1024x768');
    await page.click('#train-stop');
    await waitText(page, '#train-status', /^Stopped at step/, 60_000);
    await waitText(page, '#keep-status', /^Autosaved/, 30_000);
    assert.equal(await page.isVisible('#autosave-forget'), true, 'something is saved now');
    assert.deepEqual(b.problems, []);
  } finally {
    await b.close();
  }
});

test('layout: on a phone (390x844) Train is in the first screen', async (t) => {
  if (!haveChromium(t)) return;
  const b = await open({ width: 390, height: 844 });
  const { page } = b;
  try {
    const train = await box(page, '#train-start');
    console.log(`  [390x844] Train at ${train.top.toFixed(0)}..${train.bottom.toFixed(0)} px`);
    assert.ok(train.top >= 0 && train.bottom <= 844, `Train is at ${train.top.toFixed(0)} px`);
    const onTop = await page.$eval('#train-start', (el) => {
      const r = el.getBoundingClientRect();
      return document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) === el;
    });
    assert.equal(onTop, true, 'nothing covers it');
    await axeClean(page, 'a phone\'s first screen');
    // auto fills only what a preset owns: the run's length and validation stay as the user set them
    await page.selectOption('#preset', 'tiny');
    await page.selectOption('#tr-for', 'steps');
    await page.fill('#tr-steps', '77');
    await page.click('#advanced summary');
    await page.fill('#tr-evalInterval', '33');
    await page.selectOption('#preset', 'auto');
    await waitText(page, '#preset-why', /^auto: micro, the quickest to write words \(auto chooses for a time/);
    assert.equal(await page.inputValue('#tr-steps'), '77');
    assert.equal(await page.inputValue('#tr-evalInterval'), '33');
    assert.equal(await page.inputValue('#cfg-nLayer'), '2', 'micro\'s shape back');
    assert.deepEqual(b.problems, []);
  } finally {
    await b.close();
  }
});
