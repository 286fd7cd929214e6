// What the page tests share (truth.test.mjs, page-open.test.mjs): a fresh static build served
// with COOP/COEP, a fresh Chromium profile on it with its errors collected, waiting for a text,
// and axe-core's check.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWeb } from '../../scripts/build-web.mjs';
import { startServer } from '../../scripts/serve.mjs';
import { CHROMIUM } from '../js/pack.js';

export const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
export const ARTIFACTS = join(root, 'test-artifacts');
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** The page built into a temporary folder and served (cross-origin isolated); close() ends both. */
export async function serveSite() {
  const folder = mkdtempSync(join(tmpdir(), 'wf-site-'));
  buildWeb(folder);
  mkdirSync(ARTIFACTS, { recursive: true });
  const server = await startServer({ folder, port: 0, isolation: true });
  return {
    origin: server.origin,
    async close() {
      await server?.close?.();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** A fresh browser profile on the page at `origin`, its errors collected; dialogs answered
 * `answer`; resolves once the page is ready and has its first figures. */
export async function open(origin, viewport = { width: 1280, height: 800 }, answer = true) {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'wf-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: ARGS, viewport, acceptDownloads: true });
  const problems = [];
  const page = context.pages()[0] ?? await context.newPage();
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console ${m.type()}: ${m.text()}`); });
  page.on('dialog', (d) => (answer ? d.accept() : d.dismiss()));
  await page.goto(`${origin}/`);
  await page.waitForSelector('body[data-ready=true]', { timeout: 60_000 });
  await waitText(page, '#stat-params', /\d/);
  return {
    page, problems, context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export const text = (page, sel) => page.$eval(sel, (el) => el.textContent);

export function waitText(page, sel, re, timeout = 60_000) {
  return page.waitForFunction(([s, src, flags]) => new RegExp(src, flags).test(document.querySelector(s)?.textContent ?? ''),
    [sel, re.source, re.flags], { timeout });
}

/** axe-core's serious and critical violations in the page as it is. */
export async function axeClean(page, state) {
  await page.evaluate(readFileSync(join(root, 'node_modules/axe-core/axe.min.js'), 'utf8'));
  const found = await page.evaluate(async () => (await globalThis.axe.run(document)).violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`));
  assert.deepEqual(found, [], `axe-core ${state}`);
}

/** Trains a new model of the form's settings for `steps` steps, validating every `every`, and
 * waits until it is done. */
export async function trainSteps(page, steps, every, { more = false } = {}) {
  await page.selectOption('#tr-for', 'steps');
  await page.fill('#tr-steps', String(steps));
  if (!(await page.isVisible('#tr-evalInterval'))) await page.click('#advanced summary');
  await page.fill('#tr-evalInterval', String(every));
  await page.click(more ? '#train-more' : '#train-start');
  await waitText(page, '#train-status', /^(Done|Training stopped|Stopped)/, 120_000);
}
