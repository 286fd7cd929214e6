// What a newcomer's first click on the page gives (issue 16): the page built and served as
// npm start serves it (isolated: the threaded build), or with --plain as bare static files
// (no COOP/COEP: one thread), Train pressed with every default, and when training ends, its
// wall time, the threads and kernels the worker used, the samples written at each validation
// and their share of the training time, and how many of the last sample's words are words of
// the novel (the page test's measure). Prints the date, the machine and its load first.
// Needs Debian's chromium and the repository's playwright-core.
//   node bench/studies/first-click.mjs [--plain]
import { cpus, loadavg } from 'node:os';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWeb } from '../../scripts/build-web.mjs';
import { startServer } from '../../scripts/serve.mjs';
import { english } from '../../tests/web/english.mjs';

const plain = process.argv.includes('--plain');
console.log(`${new Date().toISOString()} | ${cpus().length} x ${cpus()[0].model} | load ${loadavg().map((x) => x.toFixed(2)).join(' ')} | ${plain ? 'bare static files (one thread)' : 'isolated (COOP/COEP)'}`);
const site = mkdtempSync(join(tmpdir(), 'wf-site-'));
buildWeb(site);
const server = await startServer({ folder: site, port: 0, isolation: !plain, plain });
const { chromium } = await import('playwright-core');
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
const page = await b.newPage();
await page.goto(server.origin + '/');
await page.waitForSelector('body[data-ready=true]');
const t0 = Date.now();
await page.click('#train-start');
await page.waitForFunction(() => /^Done/.test(document.querySelector('#train-status').textContent), null, { timeout: 600_000 });
const env = await page.$eval('#env-status', (e) => `${e.dataset.threads} thread(s), ${e.dataset.kernels} kernels`);
console.log('wall', ((Date.now() - t0) / 1000).toFixed(1), 's |', await page.$eval('#train-status', (e) => e.textContent), '|', env,
  '| validation', await page.$eval('#stat-val', (e) => e.textContent));
console.log(await page.$eval('#samples-cost', (e) => e.textContent));
const samples = await page.$$eval('#samples li', (l) => l.map((li) => [li.querySelector('.at').textContent, li.querySelector('pre').textContent]));
for (const [at, t] of samples) console.log(at, '::', JSON.stringify(t.slice(0, 90)));
const e = english(samples[0][1]);
console.log(`last sample: ${e.known} of ${e.words} words are common words of the novel (${e.distinct} distinct)`);
console.log(`load after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
await b.close(); process.exit(0);
