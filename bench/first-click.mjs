// The page's first click, as issue 27's done-when asks: the page built and served as npm start
// serves it (cross-origin isolated), in headless Chromium, Train pressed with every default
// (the default text, size and minute), once per seed (the model's seed, set in the config
// the page sends its worker, so the page's own choices stay as they are). For each seed, after
// the minute: the steps, the last validation loss, whether the overfitting note ever showed
// (it must not: on the default run it would be false), whether the attention map is of the
// last validation's weights (its data-step), and whether "then and now" shows the first and
// the last sample of the timeline. Prints a table and writes it as JSON.
//   node bench/first-click.mjs [--seeds 5] [--out bench/results/first-click.json] [--plain]
// Takes about 70 s a seed. Needs Debian's chromium and the repository's playwright-core.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { loadavg } from 'node:os';
import { clickTrain, launchChromium, machine, servePage } from './studies/first-click.mjs';
import { english } from '../tests/web/english.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
};
const seeds = Number(arg('--seeds', 5));
if (!(Number.isInteger(seeds) && seeds >= 1)) throw new Error(`--seeds ${arg('--seeds')}: give a whole number of at least 1`);
const out = resolve(arg('--out', 'bench/results/first-click.json'));
const plain = process.argv.includes('--plain');

/** Before the page's scripts: the seed goes into the config of the model the page creates,
 * and the overfitting note's showing is remembered (it may show and go again). */
function watch(seed) {
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (msg, ...rest) {
    if (msg?.op === 'start' && msg.args?.[0] === 'create' && msg.args[1] && typeof msg.args[1] === 'object') {
      msg.args[1] = { ...msg.args[1], seed };
      window.__created = msg.args[1];
    }
    return post.call(this, msg, ...rest);
  };
  window.__overfitShown = 0;
  document.addEventListener('DOMContentLoaded', () => {
    const note = document.querySelector('#overfit-note');
    new MutationObserver(() => { if (!note.hidden) window.__overfitShown++; }).observe(note, { attributes: true, attributeFilter: ['hidden'] });
  });
}

/** What the page shows once the minute is done (the attention map's redraw of the last
 * validation may come a moment after "Done": waited for up to 20 s). */
async function read(page) {
  const lastVal = () => page.$eval('#loss-chart', (el) => Number(el.getAttribute('aria-label').match(/validation loss [\d.]+ at step (\d+)/)?.[1]));
  const mapStep = () => page.$eval('#att-map', (el) => Number(el.dataset.step));
  const t0 = Date.now();
  while (Date.now() - t0 < 20_000 && (await mapStep()) !== (await lastVal())) await page.waitForTimeout(250);
  return page.evaluate(() => {
    const $ = (s) => document.querySelector(s);
    const samples = [...document.querySelectorAll('#samples li:not(.skipped)')].map((li) => ({
      step: Number(li.querySelector('.at').textContent.match(/^step ([\d,]+)/)[1].replace(/,/g, '')), text: li.querySelector('pre').textContent,
    }));
    const side = (id) => ({ step: Number($(id).dataset.step), text: $(id).querySelector('pre').textContent });
    return {
      status: $('#train-status').textContent, val: Number($('#stat-val').textContent),
      lastValStep: Number($('#loss-chart').getAttribute('aria-label').match(/validation loss [\d.]+ at step (\d+)/)?.[1]),
      mapStep: Number($('#att-map').dataset.step), overfitShown: window.__overfitShown, overfitNow: !$('#overfit-note').hidden,
      samples, then: side('#sample-then'), now: side('#sample-now'), config: window.__created,
      threads: $('#env-status').dataset.threads, kernels: $('#env-status').dataset.kernels, cost: $('#samples-cost').textContent,
    };
  });
}

console.log(`${machine()} | ${plain ? 'bare static files (one thread)' : 'isolated (COOP/COEP)'} | ${seeds} seed(s)`);
const server = await servePage({ plain });
const browser = await launchChromium();
const rows = [];
try {
  for (let seed = 1; seed <= seeds; seed++) {
    const context = await browser.newContext(); // a fresh profile: no autosave offer from the seed before
    await context.addInitScript(watch, seed);
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const wall = await clickTrain(page, server.origin);
    const r = await read(page);
    await context.close();
    const first = r.samples[0], last = r.samples.at(-1);
    const steps = Number(r.status.match(/^Done: ([\d,]+) steps/)?.[1].replace(/,/g, ''));
    const words = last ? english(last.text) : null;
    const row = {
      seed, preset: `${r.config?.nLayer} x ${r.config?.dModel}`, steps, wall: +wall.toFixed(1), validation: r.val, lastValStep: r.lastValStep,
      overfitWarning: r.overfitShown > 0 || r.overfitNow, mapStep: r.mapStep, mapIsLastValidation: r.mapStep === r.lastValStep,
      samples: r.samples.length, firstSampleStep: first?.step ?? null, lastSampleStep: last?.step ?? null,
      thenStep: r.then.step, nowStep: r.now.step,
      thenNowShowsFirstAndLast: !!first && r.then.step === first.step && r.then.text === first.text && r.now.step === last.step && r.now.text === last.text,
      lastSample: last?.text.slice(0, 100) ?? null, lastSampleWords: words && `${words.known} of ${words.words} words of the novel`,
      threads: Number(r.threads), kernels: r.kernels, samplesCost: r.cost, pageErrors: errors,
    };
    rows.push(row);
    console.log(`seed ${seed}: ${r.status} validation ${r.val}; map at step ${r.mapStep}, last validation at ${r.lastValStep}; `
      + `then ${r.then.step}, now ${r.now.step}; overfitting note ${row.overfitWarning ? 'SHOWN' : 'not shown'}`);
  }
} finally {
  await browser.close();
  await server.close();
}

const yes = (b) => (b ? 'yes' : 'NO');
console.log('\n| seed | model | steps | validation | overfitting warning | map step = last validation | then & now = first & last sample |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(`| ${r.seed} | ${r.preset} | ${r.steps.toLocaleString('en-US')} | ${r.validation.toFixed(3)} | ${r.overfitWarning ? 'FIRED (false)' : 'none'} `
    + `| ${yes(r.mapIsLastValidation)} (${r.mapStep} / ${r.lastValStep}) | ${yes(r.thenNowShowsFirstAndLast)} (${r.thenStep}, ${r.nowStep}) |`);
}
const ok = rows.every((r) => !r.overfitWarning && r.mapIsLastValidation && r.thenNowShowsFirstAndLast && !r.pageErrors.length);
console.log(`\n${ok ? 'done-when met' : 'done-when NOT met'} over ${rows.length} seed(s) | load after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), plain, ok, rows }, null, 2)}\n`);
console.log(`written ${out}`);
process.exitCode = ok ? 0 : 1;
