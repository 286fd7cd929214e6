// The web page in headless Chromium (Debian's chromium, driven by playwright-core), served
// from a fresh static build (scripts/build-web.mjs) by scripts/serve.mjs twice: once with
// COOP/COEP (cross-origin isolated), once as a bare static host (no headers at all, so
// only the page's <meta> Content-Security-Policy applies). Each run trains a language
// model and watches the loss fall, pauses and resumes, streams and stops generation,
// restores the autosave after a reload, downloads and re-opens the model file, draws the
// attention map, trains and decodes the seq2seq task, and shows errors in words; with no
// console error, no CSP violation, and no request to anything but the local server.
// Screenshots land in test-artifacts/ (git-ignored); the pictures of docs/screenshots/ are
// refreshed with WF_SCREENSHOTS=docs/screenshots node --test tests/web/ (that folder's README).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWeb } from '../../scripts/build-web.mjs';
import { startServer } from '../../scripts/serve.mjs';
import { english } from './english.mjs';
import { CHROMIUM, haveChromium } from '../js/pack.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const ARTIFACTS = join(root, 'test-artifacts');
// the pictures the docs show (wide, compare-runs, narrow, the isolated run's): into
// test-artifacts/ too, unless WF_SCREENSHOTS names the folder to refresh (docs/screenshots)
const SHOTS = process.env.WF_SCREENSHOTS ? resolve(root, process.env.WF_SCREENSHOTS) : ARTIFACTS;
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

let site;
before(() => {
  site = mkdtempSync(join(tmpdir(), 'wf-site-'));
  const { files, bytes } = buildWeb(site);
  console.log(`static build: ${files} files, ${(bytes / 1e6).toFixed(1)} MB`);
  mkdirSync(ARTIFACTS, { recursive: true });
  mkdirSync(SHOTS, { recursive: true });
});
after(() => rmSync(site, { recursive: true, force: true }));

/** A browser on a fresh profile, watching every request, console message and CSP report. */
async function browse(origin, viewport = { width: 1100, height: 900 }) {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'wf-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: ARGS, viewport, acceptDownloads: true });
  const seen = [], problems = [];
  context.on('request', (r) => seen.push(r.url()));
  // anything not on the local server is refused and remembered, so a leak cannot hide
  await context.route((url) => !url.href.startsWith(`${origin}/`), (route) => {
    seen.push(route.request().url());
    return route.abort();
  });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`));
    // what the page asks of its models' workers: the calls by operation, and each message that
    // carries a text (a string of more than 10,000 characters), counted
    const post = Worker.prototype.postMessage;
    window.__sent = { ops: {}, texts: 0 };
    Worker.prototype.postMessage = function (msg, ...rest) {
      if (msg && typeof msg === 'object' && typeof msg.op === 'string') {
        window.__sent.ops[msg.op] = (window.__sent.ops[msg.op] ?? 0) + 1;
        window.__sent.texts += (msg.args ?? []).some((a) => typeof a === 'string' && a.length > 10_000);
      }
      return post.call(this, msg, ...rest);
    };
  });
  const page = context.pages()[0] ?? await context.newPage();
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
  page.on('worker', (w) => w.on('console', (m) => { if (m.type() === 'error') problems.push(`worker console: ${m.text()}`); }));
  return {
    context, page, seen, problems,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const text = (page, sel) => page.$eval(sel, (el) => el.textContent);

/** axe-core (npm devDependency) over the page as it is: the serious and critical violations,
 * each as "rule: the first elements". Evaluated through the debugging protocol, which the
 * page's CSP does not govern. */
async function accessibility(page) {
  await page.evaluate(readFileSync(join(root, 'node_modules/axe-core/axe.min.js'), 'utf8'));
  const found = await page.evaluate(async () => (await globalThis.axe.run(document)).violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`));
  return found;
}
const number = async (page, sel) => Number((await text(page, sel)).replace(/,/g, '').split('/')[0]);

/** [r, g, b] (0-255) of hsl(h, s, l) with s, l in [0, 1]: the colours the page draws with. */
function hslRgb(h, s, l) {
  const a = s * Math.min(l, 1 - l);
  const f = (n) => { const k = (n + h / 30) % 12; return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1)))); };
  return [f(0), f(8), f(4)];
}

/** The controls shown (enabled, visible, focusable; a radio group's checked button: the arrow
 * keys move within it) that the Tab key never reaches from the top of the page, going round. */
async function tabMisses(page) {
  await page.evaluate(() => { document.activeElement?.blur(); window.scrollTo(0, 0); });
  const controls = await page.$$eval('input, select, textarea, button, [tabindex="0"], summary', (els) => els
    .filter((el) => !el.disabled && el.checkVisibility() && el.tabIndex >= 0 && !(el.type === 'radio' && !el.checked))
    .map((el) => el.id || el.textContent.trim().slice(0, 30)));
  const reached = new Set();
  for (let i = 0; i < 2 * controls.length + 40 && controls.some((c) => !reached.has(c)); i++) {
    await page.keyboard.press('Tab');
    reached.add(await page.evaluate(() => document.activeElement.id || document.activeElement.textContent.trim().slice(0, 30)));
  }
  await page.evaluate(() => { document.activeElement?.blur(); window.scrollTo(0, 0); });
  return controls.filter((c) => !reached.has(c));
}

/** axe-core and the Tab key in the page's present state (named in the messages). */
async function accessibleNow(page, state) {
  assert.deepEqual(await accessibility(page), [], `axe-core ${state}: serious or critical violations`);
  assert.deepEqual(await tabMisses(page), [], `controls the Tab key never reaches ${state}`);
}

/** A narrow screen's layout: nothing wider than the screen, and one column (the settings
 * above the training view, at the same left edge). */
async function fitsNarrow(page, state) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `${state}: the page is ${overflow} px wider than the screen`);
  const wide = await page.$$eval('body *', (els) => els.filter((el) => el.checkVisibility() && el.getBoundingClientRect().right > innerWidth + 1)
    .map((el) => el.id || el.className || el.tagName));
  assert.deepEqual(wide, [], `${state}: elements sticking out`);
  // (on a phone the view column lays its parts out in the page's column, its training bar
  // sticking to the screen's foot: its first section stands for it)
  const [settings, view] = await page.$$eval('.settings-col, .view-col > section', (els) => els.map((el) => {
    const r = el.getBoundingClientRect();
    return { left: r.left, top: r.top, bottom: r.bottom };
  }));
  assert.ok(Math.abs(view.left - settings.left) < 1 && view.top >= settings.bottom - 1, `${state}: one column (${JSON.stringify([settings, view])})`);
}

/** The samples' cost against their budget, from the numbers the page shows them by: the
 * samples before the costliest one stayed within the budget (the page writes one only when
 * one more at their average cost fits), whatever this machine's speed. */
async function sampleBudgetHeld(page) {
  const d = await page.$eval('#samples-cost', (el) => ({ ...el.dataset, text: el.textContent }));
  const [spent, trained, longest, budget] = [d.spent, d.trained, d.longest, d.budget].map(Number);
  assert.match(d.text, /^Writing these samples took [\d.]+ % of the training time, the restarts they force included/);
  assert.ok(Math.abs(Number(d.text.match(/took ([\d.]+) %/)[1]) - 100 * spent / trained) < 0.1, `the shown share is spent / trained: ${JSON.stringify(d)}`);
  assert.ok(spent - longest <= budget * trained + 1, `the samples keep to their budget: ${JSON.stringify(d)}`);
  return d;
}

/** The tooltip of #att-map with the pointer at (fx, fy) of the map (fractions of its box):
 * its box, and the pointer's position. */
async function tipAt(page, fx, fy) {
  const box = await page.$eval('#att-map', (el) => { el.scrollIntoView({ block: 'center' }); const r = el.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
  const at = { x: box.x + fx * box.w, y: box.y + fy * box.h };
  await page.mouse.move(at.x, at.y);
  await page.waitForSelector('#att-tip', { state: 'visible' });
  const tip = await page.$eval('#att-tip', (el) => { const r = el.getBoundingClientRect(); return { left: r.left, top: r.top, right: r.right, bottom: r.bottom, vw: document.documentElement.clientWidth, vh: innerHeight }; });
  return { tip, at };
}

/** The tip inside the viewport and next to the pointer: its nearest corner within 32 px. */
function tipNearPointer({ tip, at }, state) {
  assert.ok(tip.left >= 0 && tip.top >= 0 && tip.right <= tip.vw && tip.bottom <= tip.vh, `${state}: the tooltip is inside the viewport: ${JSON.stringify(tip)}`);
  const dx = Math.min(Math.abs(tip.left - at.x), Math.abs(tip.right - at.x)), dy = Math.min(Math.abs(tip.top - at.y), Math.abs(tip.bottom - at.y));
  assert.ok(dx <= 32 && dy <= 32, `${state}: the tooltip sits at the pointer ${JSON.stringify(at)}: ${JSON.stringify(tip)}`);
}

/** Waits until the text of sel matches re. */
function waitText(page, sel, re, timeout = 60_000) {
  return page.waitForFunction(([s, src, flags]) => new RegExp(src, flags).test(document.querySelector(s)?.textContent ?? ''),
    [sel, re.source, re.flags], { timeout });
}

async function ready(page) {
  await page.waitForSelector('body[data-ready=true]', { timeout: 60_000 });
  await waitText(page, '#stat-params', /\d/);
}

/** Generates with the form's settings and seed; resolves to the generated text (the prompt excluded). */
async function generate(page, { seed, maxTokens }) {
  await page.fill('#gen-seed', String(seed));
  await page.fill('#gen-max', String(maxTokens));
  await page.click('#gen-start');
  await waitText(page, '#gen-status', new RegExp(`^Generated ${maxTokens} tokens with seed ${seed}\\.`));
  return page.$eval('#gen-output', (el) => el.textContent.slice(el.querySelector('.prompt').textContent.length));
}

for (const mode of ['isolated', 'plain']) {
  test(`the page in Chromium, ${mode === 'isolated' ? 'cross-origin isolated (COOP/COEP)' : 'as bare static files (no headers)'}`, async (t) => {
    if (!haveChromium(t)) return;
    const server = await startServer({ folder: site, port: 0, isolation: mode === 'isolated', plain: mode === 'plain' });
    const b = await browse(server.origin);
    const { page } = b;
    const shot = (name) => page.screenshot({ path: join(mode === 'isolated' ? SHOTS : ARTIFACTS, `page-${mode}-${name}.png`), fullPage: true });
    let passed = false;
    const t0 = Date.now();
    const lap = (what) => console.log(`  [${mode}] ${what}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    try {
      // ---- loads: the novel, its stats, the model estimate; isolation as served ----
      const res = await page.goto(`${server.origin}/`);
      assert.equal(res.headers()['content-security-policy'] !== undefined, mode === 'isolated');
      await ready(page);
      assert.equal(await page.evaluate(() => crossOriginIsolated), mode === 'isolated');
      // the line under the title in plain words; the technical facts in data attributes
      assert.equal(await page.getAttribute('#env-status', 'data-isolated'), String(mode === 'isolated'));
      assert.match(await text(page, '#env-status'), mode === 'isolated' ? /^Ready\.$/ : /^Ready\. Training runs on one core: this site is served without the settings that let a page use more\.$/);
      // the tips: what the loss, the sampling settings and an attention map are
      assert.match(await text(page, '#loss-help'), /^Bits per character .*random guessing \(dashed\); earlier runs of this tab faded\. Lower is better; every bit less halves/);
      assert.match(await text(page, '#gen-help'), /Temperature sharpens them .*top-k keeps only the k likeliest, top-p the\s+fewest .* The same seed and settings give the same text\./s);
      assert.match(await text(page, '#att-help'), /each row is a\s+token, and its weights over the tokens before it add up to 1/);
      assert.match(await text(page, '#att-help'), /Heads learn different habits/);
      assert.equal(await text(page, '#stat-chars'), '684,768', 'Pride and Prejudice is preloaded');
      assert.match(await text(page, '#stat-vocab'), /^76 /);
      assert.equal(await text(page, '#stat-split'), '616,292 / 68,476 tokens');
      assert.equal(await page.inputValue('#preset'), 'auto', 'the size for the time is the default (micro until it has measured)');
      assert.equal(await text(page, '#stat-params'), '104,960', 'the micro preset (RoPE: no position table) on a 76-token vocabulary');
      lap('loaded');

      // ---- usable: every control has a label, nothing uses inline style ----
      const unlabelled = await page.$$eval('input, select, textarea, button', (els) => els
        .filter((el) => !(el.labels?.length || el.getAttribute('aria-label') || (el.tagName === 'BUTTON' && el.textContent.trim())))
        .map((el) => el.id || el.outerHTML.slice(0, 60)));
      assert.deepEqual(unlabelled, [], 'controls without a label');
      assert.equal(await page.$$eval('[style]', (els) => els.length), 0, 'no style attributes');

      // ---- errors in words: a model too big to fit, an empty text ----
      await page.click('#advanced summary');
      await page.fill('#cfg-dModel', '2048');
      await page.fill('#cfg-nLayer', '48');
      await waitText(page, '#model-problem', /would need [\d.]+ GB to train/);
      assert.equal(await page.isDisabled('#train-start'), true, 'a model that does not fit cannot start');
      await page.fill('#cfg-nHead', '5');
      await waitText(page, '#model-problem', /do not make a model: .*divide/);
      await page.selectOption('#preset', 'micro');
      await page.waitForSelector('#model-problem', { state: 'hidden' });
      await page.selectOption('#corpus-source', 'paste');
      await waitText(page, '#stat-chars', /^0$/);
      // text problems are said at the text box, in the page's words, and nothing trains
      await waitText(page, '#corpus-problem', /^There is no text yet: pick a novel, paste some text or open a file\.$/);
      assert.equal(await page.isDisabled('#train-start'), true, 'no text: nothing to train');
      await page.fill('#corpus-paste', 'It is a truth.');
      await waitText(page, '#corpus-problem', /^This text is too short to learn from: it has 14 characters, and with 10 % held out for validation it needs at least 30\./);
      assert.doesNotMatch(await text(page, '#corpus-problem'), /valFraction|context/, 'no API names');
      // a short text: the context shrinks to what the held-out part can fill
      await page.fill('#corpus-paste', 'It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife. '.repeat(4));
      await waitText(page, '#corpus-note', /^The text is short, so the model reads 46 characters at a time instead of 64\.$/);
      await page.waitForSelector('#corpus-problem', { state: 'hidden' });
      assert.equal(await page.isDisabled('#train-start'), false, 'a short text trains, with a shorter context');
      await page.selectOption('#corpus-source', 'pride_and_prejudice');
      await waitText(page, '#stat-chars', /684,768/);
      lap('errors shown');

      // ---- training: the shown loss falls; the chart and the stats move ----
      assert.equal(await page.inputValue('#tr-for'), '60', 'a minute of training is the default');
      await page.selectOption('#tr-for', 'steps');
      await page.fill('#tr-steps', '400');
      await page.fill('#tr-evalInterval', '20');
      // this run looks at the samples themselves, one at (nearly) every validation: a budget
      // of half the training time (the default's 3 % is the wide and narrow tests')
      await page.$eval('#samples', (el) => { el.dataset.budget = '0.5'; });
      await page.click('#train-start');
      await waitText(page, '#stat-step', /^[1-9]/);
      const first = Number(await text(page, '#stat-loss'));
      // a number of steps: the status counts them down
      await waitText(page, '#train-status', /^Training: [\d,]+ steps to go\.$/);
      const toGo = async () => Number((await text(page, '#train-status')).match(/^Training: ([\d,]+) steps/)?.[1].replace(/,/g, '') ?? NaN);
      const before = await toGo();
      await page.waitForFunction((n) => { const m = document.querySelector('#train-status').textContent.match(/^Training: ([\d,]+) steps to go/); return m && Number(m[1].replace(/,/g, '')) < n; }, before);
      assert.ok(await toGo() < before && before <= 400, `counts down from ${before} to ${await toGo()}`);
      await page.waitForFunction(() => Number(document.querySelector('#stat-step').textContent.split('/')[0].replace(/,/g, '')) >= 50, null, { timeout: 120_000 });
      await waitText(page, '#stat-val', /\d\.\d{3}/);
      const later = Number(await text(page, '#stat-loss'));
      console.log(`  [${mode}] shown loss ${first} -> ${later} at step ${await text(page, '#stat-step')}, ${await text(page, '#stat-speed')} tokens/s`);
      // the first reading may come many steps in (the threaded build is fast): the loss has
      // fallen from it, or lies far below random guessing, ln V
      const lnV = Math.log(Number((await text(page, '#stat-vocab')).replace(/,/g, '')));
      assert.ok(later < first - 0.5 || (later < first && later < lnV - 1), `the shown loss falls: ${first} -> ${later} (ln V ${lnV.toFixed(2)})`);
      assert.match(await page.getAttribute('#loss-chart', 'aria-label'), /step \d+ of 400, training loss/);
      assert.match(await text(page, '#stat-eta'), /\d (s|min|h)/);
      // the page answers while the worker trains: a click is handled at once, typing too
      const lag = await page.evaluate(() => new Promise((resolve) => {
        const t = performance.now();
        setTimeout(() => resolve(performance.now() - t), 0);
      }));
      await page.fill('#gen-prompt', 'Elizabeth ');
      console.log(`  [${mode}] main thread answered a timer in ${lag.toFixed(1)} ms while training`);
      await page.waitForFunction(() => Number(document.querySelector('#stat-step').textContent.split('/')[0].replace(/,/g, '')) >= 120, null, { timeout: 120_000 });
      // samples while training: one per validation, oldest first, each from the same start and
      // seed, with what writing them cost
      await page.waitForFunction(() => document.querySelectorAll('#samples li:not(.skipped)').length >= 3, null, { timeout: 60_000 });
      const samples = await page.$$eval('#samples li:not(.skipped)', (lis) => lis.map((li) => [li.querySelector('.at').textContent, li.querySelector('pre').textContent]));
      const steps = samples.map(([at]) => Number(at.match(/^step ([\d,]+)/)[1].replace(/,/g, '')));
      assert.ok(steps.every((s, i) => i === 0 || s > steps[i - 1]), `oldest first: ${steps}`);
      assert.ok(samples.every(([, t]) => t.length > 0), 'every sample has text');
      const cost = await text(page, '#samples-cost');
      assert.match(cost, /took [\d.]+ % of the training time/);
      await sampleBudgetHeld(page);
      console.log(`  [${mode}] ${samples.length} samples by step ${steps.at(-1)}; ${cost}; newest: ${JSON.stringify(samples.at(-1)[1].slice(0, 60))}`);
      await shot('training');
      assert.deepEqual(await accessibility(page), [], 'axe-core while training: serious or critical violations');
      lap('trained');
      // Chromium has relaxed SIMD: the worker runs the relaxed build (src/js/loader.js's probe);
      // the line says how many cores, in words
      await page.waitForSelector('#env-status[data-kernels=relaxed]');
      const threads = Number(await page.getAttribute('#env-status', 'data-threads'));
      assert.equal(threads > 1, mode === 'isolated', `${threads} threads`);
      assert.match(await text(page, '#env-status'), /Training uses (one core|\d cores) of this computer\.$/);
      assert.doesNotMatch(await text(page, '#env-status'), /SIMD|kernel|thread|cross-origin|isolat|build/i, 'no developer jargon');

      // ---- pause: the step stands still; resume moves it; pausing autosaves ----
      await page.click('#train-pause');
      await waitText(page, '#train-status', /^Paused at step/);
      await waitText(page, '#keep-status', /^Autosaved in this browser at step/);
      const paused = await number(page, '#stat-step');
      await page.waitForTimeout(700);
      assert.equal(await number(page, '#stat-step'), paused, 'paused: no steps');
      assert.equal(await text(page, '#train-pause'), 'Resume');
      await page.click('#train-pause');
      await page.waitForFunction((s) => Number(document.querySelector('#stat-step').textContent.split('/')[0].replace(/,/g, '')) > s + 3, paused);
      await page.click('#train-pause');
      await waitText(page, '#train-status', /^Paused at step/);
      const pausedAt = await number(page, '#stat-step');
      await waitText(page, '#keep-status', new RegExp(`^Autosaved in this browser at step ${pausedAt.toLocaleString('en-US')} `));
      assert.match(await page.getAttribute('#loss-chart', 'aria-label'), /random guessing scores 4\.33/, 'the chart has the ln V line');
      // "Train more" says what it will do, in the form's terms
      assert.equal(await text(page, '#train-more'), 'Train this model 400 more steps');
      await page.selectOption('#tr-for', '60');
      assert.equal(await text(page, '#train-more'), 'Train this model 1 minute more');
      assert.match(await page.$eval('#train-more', (el) => el.getAttribute('aria-describedby')), /train-more-help/);
      await page.selectOption('#tr-for', 'steps');
      lap('paused and resumed');

      // ---- a trained model is replaced only after a yes: "no" keeps it, step and status as they were ----
      const asked = new Promise((resolve) => page.once('dialog', async (d) => { const m = d.message(); await d.dismiss(); resolve(m); }));
      await page.click('#train-start');
      assert.match(await asked, new RegExp(`^Replace the model trained for ${pausedAt.toLocaleString('en-US')} steps`));
      await page.waitForTimeout(300);
      assert.equal(await number(page, '#stat-step'), pausedAt, 'declined: the model stays');
      assert.match(await text(page, '#train-status'), /^Paused at step/);

      // ---- generation during the pause ----
      const sample = await generate(page, { seed: 11, maxTokens: 300 });
      assert.ok(sample.length >= 250, `300 tokens of text: ${JSON.stringify(sample)}`);
      assert.equal(await generate(page, { seed: 11, maxTokens: 300 }), sample, 'the same seed gives the same text');
      await shot('generated');

      // a long generation: the text shows while it runs, in gathered pieces (one update per
      // token would flood the page: the Stop button went unanswered), and the button ends
      // it early, leaving the model free again
      await page.evaluate(() => {
        window.__updates = 0;
        new MutationObserver((ms) => { window.__updates += ms.filter((m) => m.type === 'characterData').length; })
          .observe(document.querySelector('#gen-output'), { characterData: true, subtree: true });
      });
      await page.fill('#gen-max', '100000');
      await page.click('#gen-start');
      await page.waitForFunction(() => document.querySelector('#gen-output').textContent.length > 40);
      assert.match(await text(page, '#gen-status'), /^Generating with seed/, 'the text shows before the end');
      await page.click('#gen-stop');
      await waitText(page, '#gen-status', /^Stopped after [\d,]+ tokens/);
      const stoppedAt = Number((await text(page, '#gen-status')).match(/after ([\d,]+)/)[1].replace(/,/g, ''));
      const updates = await page.evaluate(() => window.__updates);
      assert.ok(stoppedAt < 100000, `stopped after ${stoppedAt} tokens`);
      assert.ok(updates >= 1 && 4 * updates <= stoppedAt, `${stoppedAt} tokens arrived in ${updates} updates: gathered, not one by one`);
      console.log(`  [${mode}] stopped after ${stoppedAt.toLocaleString('en-US')} tokens, shown in ${updates} updates`);
      assert.equal(await page.isEnabled('#gen-start'), true);
      lap('generated and stopped');

      // ---- the attention map: drawn since training started, one head, a legend; then by keyboard ----
      assert.match(await page.getAttribute('#att-map', 'aria-label'), /^Attention map: layer 2, head 1, \d+ rows/, 'drawn without a click, one head');
      assert.match(await text(page, '#att-legend-max'), /^\d\.\d\d$/);
      // the legend's scale has the cells' colours: lightness falls as the square root of the
      // weight over the largest (a straight gradient would be 80 % lightness at a quarter)
      const scale = await page.$eval('#att-legend', (c) => {
        const row = c.getContext('2d').getImageData(0, c.height >> 1, c.width, 1).data; // one read: Chromium warns of several
        return [0, 0.25, 0.5, 1].map((f) => { const x = 4 * Math.round(f * (c.width - 1)); return [row[x], row[x + 1], row[x + 2]]; });
      });
      [0, 0.25, 0.5, 1].forEach((f, i) => {
        const want = hslRgb(216, 0.7, (98 - 70 * Math.sqrt(f)) / 100);
        assert.ok(want.every((v, k) => Math.abs(v - scale[i][k]) <= 4), `the legend at ${f}: ${scale[i]}, the cells' colour ${want}`);
      });
      tipNearPointer(await tipAt(page, 0.2, 0.9), 'lower left');
      assert.match(await text(page, '#att-tip'), /^“.+” → “.+”: \d\.\d{3}$/, 'a tooltip at the pointer');
      tipNearPointer(await tipAt(page, 0.98, 0.98), 'lower right corner');
      await page.fill('#att-text', 'Mr. Darcy');
      await page.click('#att-show');
      await waitText(page, '#att-status', /^9 tokens/);
      await page.mouse.move(0, 0);
      await page.focus('#att-map');
      await page.keyboard.press('PageUp');
      await page.keyboard.press('Home');
      assert.match(await text(page, '#att-readout'), /query 1 “M” → key 1 “M”: weight 1\.000/);
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowDown');
      assert.match(await text(page, '#att-readout'), /query 3 “\.” → key 1 “M”: weight 0\.\d{3}/);
      await page.selectOption('#att-head', '1');
      assert.match(await page.getAttribute('#att-map', 'aria-label'), /layer 2, head 2, 9 rows by 9 columns/);
      lap('attention');

      // ---- keep: download the file ----
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#model-download')]);
      const file = join(ARTIFACTS, `page-${mode}-model.wf`);
      await download.saveAs(file);
      assert.equal(readFileSync(file).subarray(0, 4).toString('latin1'), 'WFCK', 'a wasmformer checkpoint');

      // ---- a reload offers the autosaved model; restoring gives the same text for the same seed ----
      await page.reload();
      await ready(page);
      await page.waitForSelector('#restore', { state: 'visible' });
      // the offer stays on screen wherever the page is scrolled, and covers nothing: at the
      // end of the page, the footer is above it
      await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
      const bar = await page.$eval('#restore', (el) => { const r = el.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, h: innerHeight }; });
      assert.ok(bar.top >= 0 && bar.bottom <= bar.h, `the restore offer is in the viewport after scrolling: ${JSON.stringify(bar)}`);
      const end = await page.$eval('footer', (el) => el.getBoundingClientRect().bottom);
      assert.ok(end <= bar.top + 1, `the page's end (${end}) is above the bar (${bar.top})`);
      // "Discard it" asks first: "no" keeps the offer (and the autosave)
      const askedDiscard = new Promise((resolve) => page.once('dialog', async (d) => { const m = d.message(); await d.dismiss(); resolve(m); }));
      await page.click('#restore-no');
      assert.match(await askedDiscard, new RegExp(`^Delete the autosaved language model \\(Pride and Prejudice, trained for .*\\(${pausedAt.toLocaleString('en-US')} steps\\)`));
      assert.equal(await page.isVisible('#restore'), true, 'declined: the offer stays');
      if (mode === 'isolated') await accessibleNow(page, 'with the restore offer showing');
      assert.match(await text(page, '#restore-text'), new RegExp(`paused at step ${pausedAt.toLocaleString('en-US')} of 400`));
      // the offer taken over a trained model asks first: open the downloaded file, then decline, then accept
      await page.setInputFiles('#model-open', file);
      await waitText(page, '#keep-status', /^Opened page-.*-model\.wf/); // nothing to replace: no question
      const askedRestore = new Promise((resolve) => page.once('dialog', async (d) => { const m = d.message(); await d.dismiss(); resolve(m); }));
      await page.click('#restore-yes');
      assert.match(await askedRestore, new RegExp(`^Replace the model trained for ${pausedAt.toLocaleString('en-US')} steps with the autosaved one\\?`));
      await page.waitForTimeout(300);
      assert.match(await text(page, '#train-status'), /^Opened page-/, 'declined: the opened model stays');
      assert.equal(await page.isVisible('#restore'), true, 'and the offer stays');
      page.once('dialog', (d) => d.accept());
      await page.click('#restore-yes');
      await waitText(page, '#train-status', /^Restored at step/);
      assert.equal(await number(page, '#stat-step'), pausedAt);
      assert.match(await page.getAttribute('#loss-chart', 'aria-label'), /training loss/, 'the chart came back');
      assert.equal(await generate(page, { seed: 11, maxTokens: 300 }), sample, 'the restored model writes the same text');
      lap('restored after reload');

      // ---- training on changes the text; opening the downloaded file brings it back ----
      await page.click('#train-pause'); // Resume
      await page.waitForFunction((s) => Number(document.querySelector('#stat-step').textContent.split('/')[0].replace(/,/g, '')) > s + 10, pausedAt);
      await page.click('#train-stop');
      await waitText(page, '#train-status', /^Stopped at step/);
      assert.notEqual(await generate(page, { seed: 11, maxTokens: 300 }), sample, 'more training changed the model');
      // opening a file over a trained model asks first; "no" keeps the model
      const trainedOn = await number(page, '#stat-step');
      const askedOpen = new Promise((resolve) => page.once('dialog', async (d) => { const m = d.message(); await d.dismiss(); resolve(m); }));
      await page.setInputFiles('#model-open', file);
      assert.match(await askedOpen, new RegExp(`^Replace the model trained for ${trainedOn.toLocaleString('en-US')} steps with page-${mode}-model\\.wf\\?`));
      await waitText(page, '#keep-status', /was not opened: the model you have stays\.$/);
      assert.equal(await number(page, '#stat-step'), trainedOn, 'declined: the model stays');
      page.once('dialog', (d) => d.accept());
      await page.setInputFiles('#model-open', file);
      await waitText(page, '#keep-status', /^Opened page-.*-model\.wf/);
      assert.equal(await number(page, '#stat-step'), pausedAt);
      assert.match(await page.getAttribute('#loss-chart', 'aria-label'), new RegExp(`step ${pausedAt} of \\d+, training loss`), 'the file brought its loss curve');
      assert.equal(await generate(page, { seed: 11, maxTokens: 300 }), sample, 'the opened file writes the same text');
      // a file that is not a model: an error in words, the model stays
      await page.setInputFiles('#model-open', { name: 'notes.wf', mimeType: 'application/octet-stream', buffer: Buffer.from('not a model at all') });
      await waitText(page, '#errors', /Could not open notes\.wf: this is not a wasmformer model file, or it is damaged/);
      assert.equal(await generate(page, { seed: 11, maxTokens: 300 }), sample, 'the model is still there');
      if (mode === 'isolated') await accessibleNow(page, 'with an error showing');
      lap('downloaded and opened');

      // ---- seq2seq: train in seconds, type an input, see the output and the cross-attention ----
      await page.check('#mode-s2s');
      await page.click('#s2s-train');
      await waitText(page, '#s2s-accuracy', /% of 200 words never seen in training/, 120_000);
      const accuracy = parseFloat(await text(page, '#s2s-accuracy'));
      console.log(`  [${mode}] seq2seq: ${await text(page, '#s2s-status')} Held-out exact match ${accuracy}%`);
      assert.ok(accuracy >= 80, `held-out exact match ${accuracy}%`);
      await page.fill('#s2s-input', 'hgabcd');
      await page.press('#s2s-input', 'Enter'); // keyboard: Enter decodes
      await waitText(page, '#s2s-decode-status', /^Decoded “hgabcd” greedily/);
      assert.equal(await text(page, '#s2s-output'), 'dcbagh');
      assert.match(await text(page, '#s2s-verdict'), /correct/);
      assert.match(await text(page, '#s2s-readout'), /^output 1 “d” → input 1 “h”: weight 0\.\d{3}/);
      await page.focus('#s2s-map');
      await page.keyboard.press('End');
      const toLast = Number((await text(page, '#s2s-readout')).match(/weight ([\d.]+)/)[1]);
      assert.ok(toLast > 0.3, `reversing: the first output letter reads the last input letter (weight ${toLast})`);
      if (mode === 'isolated') await accessibleNow(page, 'in seq2seq mode');
      // training again over the trained model asks first; "no" keeps it
      const [s2sStep, s2sScore] = [await text(page, '#s2s-step'), await text(page, '#s2s-accuracy')];
      const askedS2s = new Promise((resolve) => page.once('dialog', async (d) => { const m = d.message(); await d.dismiss(); resolve(m); }));
      await page.click('#s2s-train');
      assert.match(await askedS2s, new RegExp(`^Replace the seq2seq model trained for ${s2sStep} steps with a new one\\?`));
      await waitText(page, '#s2s-status', /Not replaced: the model you have stays\.$/);
      assert.equal(await text(page, '#s2s-step'), s2sStep);
      assert.equal(await text(page, '#s2s-accuracy'), s2sScore, 'declined: the model and its score stay');
      await page.fill('#s2s-input', 'abz');
      await page.click('#s2s-decode');
      await waitText(page, '#s2s-decode-status', /Cannot decode “abz”: the model knows only the letters/);
      assert.equal(await text(page, '#s2s-verdict'), '', 'no old "correct" beside the new error');
      await shot('seq2seq');
      lap('seq2seq');

      assert.deepEqual(b.problems, [], 'console errors, page errors or CSP violations');
      passed = true;
    } finally {
      // what the page showed, should a step above have failed before the checks of the end
      if (!passed) console.log(`  [${mode}] on the page: ${JSON.stringify(await text(page, '#errors').catch(() => ''))}; ${JSON.stringify(b.problems)}`);
      await b.close();
      await server.close();
    }
    const foreign = b.seen.filter((u) => !u.startsWith(`${server.origin}/`) && !u.startsWith(`blob:${server.origin}/`));
    assert.deepEqual(foreign, [], 'requests that left the local server');
    // Chromium has relaxed SIMD: the relaxed build's wasm (threaded where isolated), from the local server
    assert.ok(server.requests.some((r) => /^\/pkg\/dist\/wasmformer-relaxed(-mt)?\.wasm$/.test(r)), `the wasm came from the local server: ${server.requests.filter((r) => r.endsWith('.wasm'))}`);
    assert.ok(server.requests.includes('/data/pride_and_prejudice.txt'), 'and the novel');
    assert.ok(server.requests.includes('/pkg/src/js/worker.js'), 'and the worker');
    console.log(`  [${mode}] ${b.seen.length} requests, all to ${server.origin}`);
  });
}

test('the page on a wide screen: the training view (bar, figures, chart, samples, attention) in one 1280x800 view', async (t) => {
  if (!haveChromium(t)) return;
  const server = await startServer({ folder: site, port: 0 });
  const b = await browse(server.origin, { width: 1280, height: 800 });
  try {
    await b.page.goto(`${server.origin}/`);
    await ready(b.page);
    // every control shown is reachable with the Tab key, in the page's order (a radio group is
    // one stop, its checked button; the arrow keys move within it)
    assert.deepEqual(await tabMisses(b.page), [], 'controls the Tab key never reaches');
    // the attention map: drawn when training starts, before the first validation; live, it is
    // drawn again at each validation (the draws only: a new model's empty map is not one)
    await b.page.check('#att-live');
    await b.page.evaluate(() => {
      window.__draws = [];
      const map = document.querySelector('#att-map');
      new MutationObserver(() => {
        if (map.getAttribute('aria-label').startsWith('Attention map: layer')) window.__draws.push(document.querySelector('#stat-val').textContent);
      }).observe(map, { attributes: true, attributeFilter: ['aria-label'] });
      // what a screen reader hears while it trains: every change of a live region's words
      window.__said = [];
      for (const el of document.querySelectorAll('[role=status], [role=alert], [role=log], [aria-live]')) {
        if (el.getAttribute('aria-live') === 'off') continue;
        let last = el.textContent;
        new MutationObserver(() => {
          if (el.textContent !== last) window.__said.push([el.id, (last = el.textContent)]);
        }).observe(el, { childList: true, characterData: true, subtree: true });
      }
    });
    // the default click (micro, a minute): at least three samples appear
    await b.page.click('#train-start');
    await b.page.waitForFunction(() => document.querySelectorAll('#samples li:not(.skipped)').length >= 3, null, { timeout: 60_000 });
    // a validation's draw asked while the one before is still drawn comes after it: wait for
    // the third rather than count at the third sample
    await b.page.waitForFunction(() => window.__draws.length >= 3, null, { timeout: 30_000 });
    const draws = await b.page.evaluate(() => window.__draws);
    assert.equal(draws[0], '–', `the map was first drawn before any validation: ${JSON.stringify(draws)}`);
    assert.ok(draws.slice(1).every((v) => v !== '–'), `live: drawn again at the validations (${JSON.stringify(draws)})`);
    assert.match(await b.page.getAttribute('#att-map', 'aria-label'), /^Attention map: layer 2, head 1, \d+ rows/);
    // a screen reader hears the run start and each validation, not every step of the countdown
    // (a report every ~30 ms) nor each sample's text
    const said = await b.page.evaluate(() => window.__said);
    const validations = said.filter(([id, t]) => id === 'train-said' && /^Validation loss \d\.\d{3} at step/.test(t)).length;
    assert.ok(validations >= 2, `the validations are said: ${JSON.stringify(said)}`);
    assert.ok(said.length <= 2 * validations + 6, `${said.length} announcements for ${validations} validations: ${JSON.stringify(said.slice(0, 20))}`);
    assert.equal(await b.page.$eval('#samples', (el) => el.getAttribute('aria-live')), null, 'the samples are read on request, not announced');
    const inView = await b.page.evaluate(() => ['train-start', 'train-pause', 'train-status', 'stat-step', 'stat-val', 'loss-chart', 'samples', 'att-map']
      .map((id) => [id, document.getElementById(id).getBoundingClientRect()])
      .filter(([, r]) => !(r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth))
      .map(([id, r]) => `${id} at ${Math.round(r.left)},${Math.round(r.top)}-${Math.round(r.right)},${Math.round(r.bottom)}`));
    assert.deepEqual(inView, [], 'outside the 1280x800 view at load');
    // the settings sit beside the view, not above it
    const [settings, view] = await b.page.$$eval('.settings-col, .view-col', (els) => els.map((el) => el.getBoundingClientRect().left));
    assert.ok(view > settings + 200, `two columns: ${settings}, ${view}`);
    await b.page.screenshot({ path: join(SHOTS, 'page-wide-training.png') });
    // a pause and a resume in the minute (a pause autosaves): the run waits, then goes on
    await b.page.click('#train-pause');
    await waitText(b.page, '#train-status', /^Paused at step/);
    const pausedAt = await number(b.page, '#stat-step');
    await b.page.click('#train-pause');
    await b.page.waitForFunction((s) => Number(document.querySelector('#stat-step').textContent.split('/')[0].replace(/,/g, '')) > s, pausedAt);
    // axe-core on the two-column layout too, while it trains
    assert.deepEqual(await accessibility(b.page), [], 'axe-core at 1280x800: serious or critical violations');
    // the bar stays in view when the view scrolls
    await b.page.evaluate(() => window.scrollTo(0, 900));
    const bar = await b.page.$eval('#train-pause', (el) => el.getBoundingClientRect().top);
    assert.ok(bar >= 0 && bar < 200, `the Pause button is still on screen after scrolling (top ${bar})`);
    await b.page.evaluate(() => window.scrollTo(0, 0));
    // the minute ends; its last sample is recognisable English (words of the novel, not a fixed string)
    await waitText(b.page, '#train-status', /^Done: [\d,]+ steps in/, 90_000);
    const last = await b.page.$eval('#sample-now pre', (el) => el.textContent);
    // the samples of the default minute kept to their budget (3 % of the training time)
    const cost = await sampleBudgetHeld(b.page);
    assert.equal(cost.budget, '0.03');
    console.log(`  [wide] ${cost.text} (${cost.spent} ms of ${cost.trained} ms; the costliest ${cost.longest} ms)`);
    // the default minute was ONE run of the model's: begun once, its text sent once; its samples,
    // attention draws, pause and autosaves went between calls of it, which nothing restarted
    const sent = await b.page.evaluate(() => window.__sent);
    console.log(`  [wide] the minute's messages to the worker: ${JSON.stringify(sent)}`);
    assert.equal(sent.ops.startRun, 1, 'one run begun');
    assert.equal(sent.ops.train ?? 0, 0, 'no train() call: nothing begun again');
    assert.equal(sent.texts, 1, 'the text crossed to the worker once');
    assert.ok(sent.ops.continueRun >= 5, `the run went on after each break: ${sent.ops.continueRun} calls`);
    const e = english(last);
    console.log(`  [wide] after the default minute (${await text(b.page, '#train-status')}): ${e.known} of ${e.words} words of the novel, ${e.distinct} distinct: ${JSON.stringify(last.slice(0, 120))}`);
    assert.ok(e.distinct >= 8 && e.known >= 0.55 * e.words, `recognisable words after a minute: ${e.known} of ${e.words} (${e.distinct} distinct) in ${JSON.stringify(last)}`);
    // compare runs: a second model (after a yes) keeps the first run on the chart, faded, named
    // by its settings and what it trained
    b.page.once('dialog', (d) => d.accept());
    await b.page.selectOption('#preset', 'tiny');
    await b.page.click('#train-start');
    await b.page.waitForFunction(() => /earlier run/.test(document.querySelector('#loss-chart').getAttribute('aria-label')));
    assert.match(await b.page.getAttribute('#loss-chart', 'aria-label'),
      /; 1 earlier run of this tab: \w+ \(\d x \d+, [\d,]+ parameters\), Pride and Prejudice, characters: [\d,]+ steps in 1 min \d\d s, validation \d\.\d\d bits a character$/);
    // and in the legend under the chart, whole: not cut to the plot's width
    const past = (await b.page.$$eval('#chart-past li', (lis) => lis.map((li) => {
      const r = li.getBoundingClientRect();
      return { text: li.textContent, shown: li.checkVisibility(), cut: li.scrollWidth > li.clientWidth, right: r.right, box: li.parentElement.getBoundingClientRect().right };
    }))).filter((r) => r.text.startsWith('earlier: '));
    assert.equal(past.length, 1, JSON.stringify(past));
    assert.match(past[0].text, /^earlier: \w+ \(\d x \d+, [\d,]+ parameters\), Pride and Prejudice, characters: [\d,]+ steps in 1 min \d\d s, validation \d\.\d\d bits a character$/);
    assert.ok(past[0].shown && !past[0].cut && past[0].right <= past[0].box + 1, `the whole label shows: ${JSON.stringify(past[0])}`);
    await b.page.waitForFunction(() => document.querySelectorAll('#samples li:not(.skipped)').length >= 1, null, { timeout: 60_000 });
    await b.page.screenshot({ path: join(SHOTS, 'page-compare-runs.png') });
    await b.page.click('#train-stop');
    await waitText(b.page, '#train-status', /^Stopped at step/);
    // nothing lost: the newest model is autosaved, the first one kept beside it
    await waitText(b.page, '#keep-status', /^Autosaved in this browser at step [\d,]+ .* The earlier model is kept too: Pride and Prejudice, trained for 1 min/);
    assert.deepEqual(b.problems, []);
  } finally {
    await b.close();
    await server.close();
  }
});

test('the page on a narrow screen: one column, nothing wider than the viewport', async (t) => {
  if (!haveChromium(t)) return;
  const server = await startServer({ folder: site, port: 0 });
  const b = await browse(server.origin, { width: 390, height: 844 });
  try {
    await b.page.goto(`${server.origin}/`);
    await ready(b.page);
    await fitsNarrow(b.page, 'on arrival');
    assert.deepEqual(await accessibility(b.page), [], 'axe-core: serious or critical accessibility violations');
    await b.page.screenshot({ path: join(SHOTS, 'page-narrow.png'), fullPage: true }); // as a phone shows it on arrival
    const legend = () => b.page.getAttribute('#loss-chart', 'aria-label');
    // the default click: a minute of training on the clock, which counts down; stop ends it
    await b.page.click('#train-start');
    await waitText(b.page, '#train-status', /^Training: (\d+ s|1 min 00 s) to go \(step [1-9]/);
    const early = await text(b.page, '#train-status');
    await b.page.waitForFunction((s) => document.querySelector('#train-status').textContent !== s
      && /to go/.test(document.querySelector('#train-status').textContent), early, { timeout: 30_000 });
    await b.page.click('#train-stop');
    await waitText(b.page, '#train-status', /^Stopped at step [\d,]+\.$/);
    // after training, the map's tooltip at its right edge stays on the screen, at the pointer,
    // and nothing is wider than the screen
    await b.page.waitForFunction(() => document.querySelector('#att-map').getAttribute('aria-label').startsWith('Attention map: layer'));
    const tip = await tipAt(b.page, 0.98, 0.5);
    tipNearPointer(tip, 'narrow, at the right edge');
    await fitsNarrow(b.page, 'after training, with the attention tooltip shown');
    await b.page.mouse.move(0, 0);
    // a short text learned by heart: validation rises as training falls, and the page says so
    await b.page.selectOption('#corpus-source', 'paste');
    await b.page.fill('#corpus-paste', (await b.page.evaluate(() => fetch('./data/pride_and_prejudice.txt').then((r) => r.text()))).slice(5000, 8000));
    await b.page.selectOption('#tr-for', 'steps');
    await b.page.fill('#tr-steps', '1500');
    await b.page.click('#advanced summary');
    await b.page.fill('#tr-evalInterval', '25');
    // a budget too small for any sample but a run's first: every later validation goes
    // without one, and the timeline says so in one line
    await b.page.$eval('#samples', (el) => { el.dataset.budget = '0.0001'; });
    b.page.once('dialog', (d) => d.accept());
    await b.page.click('#train-start');
    // the minute stopped early is named on the chart by the time it trained, not the minute asked for
    await b.page.waitForFunction(() => /earlier run/.test(document.querySelector('#loss-chart').getAttribute('aria-label')));
    const named = (await legend()).match(/1 earlier run of this tab: \w+ \(\d x \d+, [\d,]+ parameters\), Pride and Prejudice, characters: [\d,]+ steps in (\d+) s(, validation \d\.\d\d bits a character)?$/);
    assert.ok(named && Number(named[1]) < 50, `the stopped run's time: ${await legend()}`);
    await b.page.waitForSelector('#overfit-note', { state: 'visible', timeout: 120_000 });
    // its advice is one the page can follow: stop now (the page keeps no "best" model)
    assert.match(await text(b.page, '#overfit-note'), /Stop here \(the page keeps the model as it is now, not its best moment\)/);
    assert.doesNotMatch(await text(b.page, '#overfit-note'), /the best model was/);
    const timeline = await b.page.$$eval('#samples li', (lis) => lis.map((li) => [li.className, li.textContent]));
    assert.equal(timeline.filter(([c]) => c !== 'skipped').length, 1, `one sample, the run's first: ${JSON.stringify(timeline)}`);
    assert.equal(timeline.length, 2, `one line for the validations without a sample: ${JSON.stringify(timeline)}`);
    assert.match(timeline[1][1], /^steps 50 to [\d,]+: no sample at these \d+ validations, to keep the samples near 0\.01 % of the training time$/);
    assert.match(await text(b.page, '#samples-cost'), /; \d+ skipped to keep them near 0\.01 %\.$/);
    await sampleBudgetHeld(b.page);
    const [trainLoss, valLoss] = [await number(b.page, '#stat-loss'), await number(b.page, '#stat-val')];
    console.log(`  [narrow] overfitting noted at step ${await text(b.page, '#stat-step')}: training ${trainLoss}, validation ${valLoss}`);
    await b.page.click('#train-stop');
    await waitText(b.page, '#train-status', /^Stopped at step/);
    // a learning rate that blows up: said once, by the buttons, in words, its advice once
    await b.page.fill('#tr-lr', '1000');
    b.page.once('dialog', (d) => d.accept());
    await b.page.click('#train-start');
    await waitText(b.page, '#train-status', /^Training stopped at step [\d,]+: /, 60_000);
    const message = await text(b.page, '#train-status');
    assert.equal(message.match(/learning rate/g)?.length, 1, `the advice once: ${message}`);
    assert.equal(await text(b.page, '#errors'), '', 'not said again in an error box');
    // the figures say where the model is, as the message does (the run's facts)
    const backAt = message.match(/The model went back to step ([\d,]+), as it was before the trouble\./)?.[1];
    assert.ok(backAt !== undefined, message);
    assert.equal(await text(b.page, '#stat-step'), backAt, 'the figures say the same step');
    console.log(`  [narrow] diverged: ${message.slice(0, 160)}`);
    // the note about the model before is gone with it
    assert.equal(await b.page.isHidden('#overfit-note'), true, 'no overfitting note for a model that has not validated');
    await fitsNarrow(b.page, 'after the diverged error');
    await b.page.screenshot({ path: join(ARTIFACTS, 'page-narrow-diverged.png'), fullPage: true });
    assert.deepEqual(b.problems, []);
  } finally {
    await b.close();
    await server.close();
  }
});

/** A dialog's message, answered yes (accept) or no; resolves once it has been answered. */
function answer(page, accept) {
  return new Promise((resolve) => page.once('dialog', async (d) => {
    const m = d.message();
    await (accept ? d.accept() : d.dismiss());
    resolve(m);
  }));
}

test('the page opens a model folder (Hugging Face files) and fine-tunes it with LoRA; nothing opened or trained is replaced or forgotten without a yes', async (t) => {
  if (!haveChromium(t)) return;
  // a folder as a Hugging Face GPT-2 comes: config.json, model.safetensors, tokenizer.json (no
  // tokenizer.wft), written by the package from a small model over the GPT-2 tokenizer fixture
  const folders = mkdtempSync(join(tmpdir(), 'wf-folders-'));
  const hf = join(folders, 'hf_gpt2_json');
  mkdirSync(hf);
  const { createModel, exportSafetensors, loadTokenizer } = await import('../../src/js/node.js');
  const gpt2 = await loadTokenizer(readFileSync(join(root, 'tests/fixtures/tokenizers/gpt2.json')));
  const small = await createModel({ arch: 'decoder', vocabSize: gpt2.vocabSize, context: 32, nLayer: 1, nHead: 2, dModel: 16, dFF: 32 }, { tokenizer: gpt2, threads: 1 });
  const files = exportSafetensors(small);
  small.dispose();
  assert.ok(files['tokenizer.json'], 'the export has a tokenizer.json');
  for (const name of ['config.json', 'model.safetensors', 'tokenizer.json']) writeFileSync(join(hf, name), files[name]);
  const server = await startServer({ folder: site, port: 0 });
  const b = await browse(server.origin);
  const { page } = b;
  try {
    await page.goto(`${server.origin}/`);
    await ready(page);
    assert.equal(await page.isHidden('#finetune-row'), true, 'nothing to fine-tune before a model is opened');
    // the Hugging Face folder opens with its tokenizer.json, and writes with it
    await page.setInputFiles('#folder-open', hf);
    await waitText(page, '#keep-status', /^Opened hf_gpt2_json: 1 layers, [\d,]+ parameters\. Pick a text/);
    assert.match(await text(page, '#train-status'), /^Opened hf_gpt2_json: [\d,]+ parameters, pretrained\.$/);
    assert.ok((await generate(page, { seed: 1, maxTokens: 10 })).length > 0, 'the opened model writes');
    // an opened model has no steps, and still is not replaced without a yes: a new model...
    const askedNew = answer(page, false);
    await page.click('#train-start');
    assert.match(await askedNew, /^Replace the model opened from hf_gpt2_json with a new one\?/);
    await page.waitForTimeout(300);
    assert.match(await text(page, '#train-status'), /^Opened hf_gpt2_json/, 'declined: the opened model stays');
    // ...or another folder (opened after a yes)
    const askedFolder = answer(page, true);
    // wasmformer's export of a small Llama-shaped model: config.json, model.safetensors, tokenizer.wft
    await page.setInputFiles('#folder-open', join(root, 'tests/fixtures/wf_export_llama'));
    assert.match(await askedFolder, /^Replace the model opened from hf_gpt2_json with wf_export_llama\?/);
    await waitText(page, '#keep-status', /^Opened wf_export_llama: 2 layers, [\d,]+ parameters\. Pick a text/);
    assert.equal(await page.isVisible('#finetune-row'), true);
    assert.equal(await page.isChecked('#finetune-lora'), true, 'LoRA is the default way to fine-tune an opened model');
    await page.selectOption('#tr-for', 'steps');
    await page.fill('#tr-steps', '60');
    await page.click('#train-more');
    await waitText(page, '#train-status', /^Done: 60 steps in/, 120_000);
    const status = await text(page, '#finetune-status');
    console.log(`  [folder] ${status} Loss ${await text(page, '#stat-loss')}`);
    assert.match(status, /^LoRA adapters \(rank 8\) on q, k, v, o, fc, up, down: [\d,]+ of [\d,]+ parameters train \([\d.]+ %\)/);
    assert.match(status, /Note: 0\.014% of the text's tokens .* the model's tokenizer does not know/, 'the text has characters the opened tokenizer lacks');
    assert.equal(await page.isHidden('#finetune-row'), true, 'adapters added once');
    assert.ok((await generate(page, { seed: 3, maxTokens: 40 })).length > 0, 'the fine-tuned model writes');
    await waitText(page, '#keep-status', /^Autosaved in this browser at step 60 /);
    // a folder over the fine-tuned model: asked, and "no" keeps it
    const askedOver = answer(page, false);
    await page.setInputFiles('#folder-open', hf);
    assert.match(await askedOver, /^Replace the model trained for 60 steps with hf_gpt2_json\?/);
    await waitText(page, '#keep-status', /^hf_gpt2_json was not opened: the model you have stays\.$/);
    assert.match(await text(page, '#finetune-status'), /^LoRA adapters/);
    // a folder without a tokenizer: an error that says what a folder holds, the model stays
    await page.setInputFiles('#folder-open', join(root, 'tests/fixtures/hf_llama_untied'));
    await waitText(page, '#errors', /Could not open the model folder: hf_llama_untied has no tokenizer\.json: a model folder holds config\.json, model\.safetensors and tokenizer\.json \(or the tokenizer\.wft wasmformer export writes\)/);
    assert.match(await text(page, '#finetune-status'), /^LoRA adapters/);
    // forgetting the autosave asks first: "no" keeps it (a reload offers it), "yes" deletes it
    const askedForget = answer(page, false);
    await page.click('#autosave-forget');
    assert.match(await askedForget, /^Delete the autosaved language model \(Pride and Prejudice, trained for (.* \()?60 steps/);
    await page.reload();
    await ready(page);
    await page.waitForSelector('#restore', { state: 'visible' });
    const forgotten = answer(page, true);
    await page.click('#restore-no');
    assert.match(await forgotten, /^Delete the autosaved language model \(Pride and Prejudice, trained for (.* \()?60 steps/);
    await waitText(page, '#keep-status', /^Discarded the autosaved model\.$/);
    assert.equal(await page.isHidden('#restore'), true);
    await page.reload();
    await ready(page);
    await page.waitForTimeout(300);
    assert.equal(await page.isHidden('#restore'), true, 'deleted: no offer after a reload');
    assert.deepEqual(b.problems, []);
  } finally {
    await b.close();
    await server.close();
    rmSync(folders, { recursive: true, force: true });
  }
});

test('the page at 1024x768, in each state: two columns that fit; axe-core and the Tab key with the advanced settings open', async (t) => {
  if (!haveChromium(t)) return;
  const server = await startServer({ folder: site, port: 0 });
  const b = await browse(server.origin, { width: 1024, height: 768 });
  const { page } = b;
  try {
    await page.goto(`${server.origin}/`);
    await ready(page);
    // two columns from 64rem: settings beside the training view, nothing wider than the screen
    const [settings, view] = await page.$$eval('.settings-col, .view-col', (els) => els.map((el) => el.getBoundingClientRect().left));
    assert.ok(view > settings + 200, `two columns at 1024 px: ${settings}, ${view}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page is ${overflow} px wider than the screen`);
    const inView = await page.evaluate(() => ['train-start', 'train-status', 'loss-chart', 'samples']
      .map((id) => [id, document.getElementById(id).getBoundingClientRect()])
      .filter(([, r]) => !(r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth)).map(([id]) => id));
    assert.deepEqual(inView, [], 'the bar, the chart and the samples in the first 1024x768 view');
    await page.click('#advanced summary');
    await page.waitForSelector('#cfg-nLayer', { state: 'visible' });
    await accessibleNow(page, 'with the advanced settings open');
    assert.deepEqual(b.problems, []);
  } finally {
    await b.close();
    await server.close();
  }
});
