// What a newcomer's first click on the page gives (issue 16): the page built and served as
// npm start serves it (isolated), Train pressed with every default, and when training ends,
// its wall time, the kernels the worker used, the samples written at each validation and
// their share of the training time. Needs Debian's chromium and bench/'s playwright-core.
//   node bench/first-click.mjs
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWeb } from '../scripts/build-web.mjs';
import { startServer } from '../scripts/serve.mjs';
const site = mkdtempSync(join(tmpdir(), 'wf-site-'));
buildWeb(site);
const server = await startServer({ folder: site, port: 0 });
const { chromium } = await import('playwright-core');
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
const page = await b.newPage();
await page.goto(server.origin + '/');
await page.waitForSelector('body[data-ready=true]');
const t0 = Date.now();
await page.click('#train-start');
await page.waitForFunction(() => /^Done/.test(document.querySelector('#train-status').textContent), null, { timeout: 600_000 });
console.log('wall', ((Date.now() - t0) / 1000).toFixed(1), 's |', await page.$eval('#train-status', (e) => e.textContent), '|', await page.$eval('#env-status', (e) => e.textContent));
console.log(await page.$eval('#samples-cost', (e) => e.textContent));
for (const [at, t] of await page.$$eval('#samples li', (l) => l.map((li) => [li.querySelector('.at').textContent, li.querySelector('pre').textContent]))) console.log(at, '::', JSON.stringify(t.slice(0, 90)));
await b.close(); process.exit(0);
