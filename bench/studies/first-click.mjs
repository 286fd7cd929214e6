// What a newcomer's first click on the page gives (issue 16): the page built and served as
// npm start serves it (isolated: the threaded build), or with --plain as bare static files
// (no COOP/COEP: one thread), Train pressed with every default, and when training ends, its
// wall time, the threads and kernels the worker used, the samples written at each validation
// and their share of the training time, and how many of the last sample's words are words of
// the novel (the page test's measure). Prints the date, the machine and its load first.
// Needs Debian's chromium and the repository's playwright-core. bench/first-click.mjs (the
// page's first click over seeds, issue 27) imports its parts: machine(), servePage(),
// launchChromium(), clickTrain().
//   node bench/studies/first-click.mjs [--plain]
import { cpus, loadavg, tmpdir } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildWeb } from '../../scripts/build-web.mjs';
import { startServer } from '../../scripts/serve.mjs';
import { english } from '../../tests/web/english.mjs';

/** The date, the machine and its load, in one line. */
export const machine = () => `${new Date().toISOString()} | ${cpus().length} x ${cpus()[0].model} | load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`;

/** The page built into a temporary folder and served, isolated (COOP/COEP) or, plain, as bare
 * static files: {origin, close()}. */
export async function servePage({ plain = false } = {}) {
  const site = mkdtempSync(join(tmpdir(), 'wf-site-'));
  buildWeb(site);
  const server = await startServer({ folder: site, port: 0, isolation: !plain, plain });
  return {
    origin: server.origin,
    async close() {
      await server.close?.();
      rmSync(site, { recursive: true, force: true });
    },
  };
}

/** Debian's headless Chromium through the repository's playwright-core. */
export async function launchChromium() {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}

/** Opens the page at origin, presses Train with every default and waits until the run is
 * done: resolves to the wall time (s) from the click. */
export async function clickTrain(page, origin) {
  await page.goto(`${origin}/`);
  await page.waitForSelector('body[data-ready=true]');
  const t0 = Date.now();
  await page.click('#train-start');
  await page.waitForFunction(() => /^Done/.test(document.querySelector('#train-status').textContent), null, { timeout: 600_000 });
  return (Date.now() - t0) / 1000;
}

async function main() {
  const plain = process.argv.includes('--plain');
  console.log(`${machine()} | ${plain ? 'bare static files (one thread)' : 'isolated (COOP/COEP)'}`);
  const server = await servePage({ plain });
  const b = await launchChromium();
  const page = await b.newPage();
  const wall = await clickTrain(page, server.origin);
  const env = await page.$eval('#env-status', (e) => `${e.dataset.threads} thread(s), ${e.dataset.kernels} kernels`);
  console.log('wall', wall.toFixed(1), 's |', await page.$eval('#train-status', (e) => e.textContent), '|', env,
    '| validation', await page.$eval('#stat-val', (e) => e.textContent));
  console.log(await page.$eval('#samples-cost', (e) => e.textContent));
  // the timeline, newest first (the page lists it oldest first since issue 27)
  const samples = (await page.$$eval('#samples li:not(.skipped)', (l) => l.map((li) => [li.querySelector('.at').textContent, li.querySelector('pre').textContent]))).reverse();
  for (const [at, t] of samples) console.log(at, '::', JSON.stringify(t.slice(0, 90)));
  const e = english(samples[0][1]);
  console.log(`last sample: ${e.known} of ${e.words} words are common words of the novel (${e.distinct} distinct)`);
  console.log(`load after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  await b.close();
  await server.close();
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await main();
