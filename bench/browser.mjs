#!/usr/bin/env node
// The browser variant: serves the repository on 127.0.0.1 and runs bench/browser.html in
// headless Chromium (Debian's /usr/bin/chromium through playwright-core), once as a plain
// page and once crossOriginIsolated (COOP + COEP headers), where the threaded build loads.
// Prints one JSON object: {isolated: {...}, plain: {...}}.   node bench/browser.mjs [--quick]
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const quick = process.argv.includes('--quick');
const { chromium } = createRequire(import.meta.url)('playwright-core');
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm',
  '.json': 'application/json' };

function serve(isolated) {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    const file = join(root, path);
    let body;
    try {
      if (!file.startsWith(root) || !statSync(file).isFile()) throw new Error('not a file');
      body = readFileSync(file);
    } catch {
      res.writeHead(404).end();
      return;
    }
    const headers = { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-store' };
    if (isolated) {
      headers['Cross-Origin-Opener-Policy'] = 'same-origin';
      headers['Cross-Origin-Embedder-Policy'] = 'require-corp';
      headers['Cross-Origin-Resource-Policy'] = 'same-origin';
    }
    res.writeHead(200, headers).end(body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function run(isolated) {
  const server = await serve(isolated);
  const dir = mkdtempSync(join(tmpdir(), 'wf-bench-chromium-'));
  const ctx = await chromium.launchPersistentContext(dir, {
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = ctx.pages()[0] ?? await ctx.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`http://127.0.0.1:${server.address().port}/bench/browser.html`);
    await page.waitForFunction(() => window.benchReady === true, null, { timeout: 60000 });
    const r = await page.evaluate((q) => window.runBench({ quick: q }), quick);
    r.userAgent = await page.evaluate(() => navigator.userAgent);
    if (errors.length) r.pageErrors = errors;
    return r;
  } finally {
    await ctx.close();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const out = { plain: await run(false), isolated: await run(true) };
console.log(JSON.stringify(out));
