#!/usr/bin/env node
// wasmformer's side of the time-to-quality bench in headless Chromium: bench/ttq/core.mjs run
// by bench/ttq/page.html, served from the repository on 127.0.0.1 with cross-origin
// isolation (COOP + COEP: SharedArrayBuffer, so --threads 2 gets the threaded build), in
// Debian's /usr/bin/chromium through playwright-core. Same flags and JSON lines as
// wasmformer_run.mjs (text paths relative to the repository):
//   node bench/ttq/chromium.mjs --seed 1 --threads 1 --seconds 60 --eval-every 10s
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { dirname, extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { OPTIONS } from './core.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const kebab = (k) => k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const options = Object.fromEntries(Object.entries(OPTIONS).map(([k, v]) => [kebab(k), { type: 'string', default: v }]));
options.nanogpt = { type: 'boolean', default: false };
const { values } = parseArgs({
  options: {
    ...options,
    text: { type: 'string', default: 'data/austen/pride_and_prejudice.txt' },
    other: { type: 'string', default: 'data/austen/emma.txt' },
    'other-chars': { type: 'string', default: '50000' },
  },
});
const opts = Object.fromEntries(Object.keys(OPTIONS).map((k) => [k, String(values[kebab(k)])]));
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.txt': 'text/plain; charset=utf-8' };

const server = createServer((req, res) => {
  const file = join(root, normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname)));
  let body;
  try {
    if (!file.startsWith(root) || !statSync(file).isFile()) throw new Error('not a file');
    body = readFileSync(file);
  } catch {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, {
    'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-store',
    'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp', 'Cross-Origin-Resource-Policy': 'same-origin',
  }).end(body);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const { chromium } = createRequire(import.meta.url)('playwright-core');
const dir = mkdtempSync(join(tmpdir(), 'wf-ttq-chromium-'));
const ctx = await chromium.launchPersistentContext(dir, {
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-background-timer-throttling', '--disable-renderer-backgrounding'],
});
let code = 0;
try {
  const page = ctx.pages()[0] ?? await ctx.newPage();
  page.on('pageerror', (e) => process.stderr.write(`page error: ${e}\n`));
  page.on('console', (m) => process.stderr.write(`console: ${m.text()}\n`));
  const ua = await page.evaluate(() => navigator.userAgent);
  await page.exposeFunction('ttqEmit', (x) => {
    const line = x.kind === 'summary' ? { ...x, side: 'chromium', userAgent: ua, loadavg: loadavg() } : x;
    process.stdout.write(`${JSON.stringify(line)}\n`);
  });
  await page.goto(`http://127.0.0.1:${server.address().port}/bench/ttq/page.html`);
  await page.waitForFunction(() => window.ttqReady === true, null, { timeout: 60000 });
  if (!(await page.evaluate(() => globalThis.crossOriginIsolated))) throw new Error('the page is not crossOriginIsolated');
  await page.evaluate((a) => window.ttq(a), { opts, text: values.text, other: values.other, otherChars: Number(values['other-chars']) });
} catch (e) {
  process.stderr.write(`${e.stack ?? e}\n`);
  code = 1;
} finally {
  await ctx.close();
  server.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
