// The package in the settings a JavaScript project builds in (docs/BUNDLERS.md): the packed
// tarball installed into a scratch project, the app of tests/bundlers/app/ built by Vite (a
// build, and its dev server), webpack 5 and esbuild (for browsers, and for Node with
// --platform=node, bundled into one file and with the package left external), and served as
// plain <script type=module> with an import map. Each browser build runs in headless
// Chromium twice: cross-origin isolated (COOP/COEP), where its worker model must train on 2
// threads with relaxed SIMD, and on a bare host, where the same app trains on 1 thread; with
// no failed request, no console error, and no request to anything but the local server.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHROMIUM, haveChromium, installInto, pack, serve } from '../js/pack.js';

const APP = fileURLToPath(new URL('./app/', import.meta.url));
const ISOLATION = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };
const HTML = (script) => `<!doctype html>\n<html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body>${script}</body></html>\n`;

const packed = pack();
after(() => rmSync(packed.dir, { recursive: true, force: true }));
const project = installInto(packed.dir, 'app', packed.tarball);
cpSync(APP, project, { recursive: true });
const dist = join(project, 'node_modules/wasmformer/dist');

// ---- the builds, each a folder a static host serves (or, for Vite's dev server, a server) ----

async function viteBuild() {
  const { build } = await import('vite');
  await build({ root: project, configFile: join(project, 'vite.config.js'), logLevel: 'warn', build: { outDir: 'vite-out', emptyOutDir: true } });
  return join(project, 'vite-out');
}

async function webpackBuild() {
  const { default: webpack } = await import('webpack');
  const { default: config } = await import(join(project, 'webpack.config.js'));
  const stats = await new Promise((resolve, reject) => webpack({ ...config, context: project }, (e, s) => (e ? reject(e) : resolve(s))));
  assert.ok(!stats.hasErrors(), stats.toString('errors-only'));
  writeFileSync(join(config.output.path, 'index.html'), HTML('<script src="./main.js"></script>'));
  return config.output.path;
}

async function esbuildBrowser() {
  const esbuild = await import('esbuild');
  const out = join(project, 'esbuild-out');
  await esbuild.build({
    absWorkingDir: project, bundle: true, format: 'esm', outdir: out, logLevel: 'warning',
    entryPoints: { main: 'esbuild-main.js', worker: 'esbuild-worker.js' },
  });
  cpSync(dist, join(out, 'wasmformer'), { recursive: true }); // the distUrl the page passes
  writeFileSync(join(out, 'index.html'), HTML('<script type="module" src="/main.js"></script>'));
  return out;
}

// ---- Chromium ----

async function browser() {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'wf-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  return { context, close: async () => { await context.close(); rmSync(profile, { recursive: true, force: true }); } };
}

/** Opens url and waits for the app's result: {result, problems (failed requests, console
 * errors), requests}. */
async function runPage(context, url) {
  const page = await context.newPage();
  const problems = [], requests = [];
  const watch = (where) => (m) => { if (m.type() === 'error') problems.push(`${where} console: ${m.text()}`); };
  page.on('console', watch('page'));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('worker', (w) => w.on('console', watch(`worker ${w.url().split('/').pop()}`)));
  page.on('request', (r) => requests.push(r.url()));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
  await page.goto(url);
  await page.waitForFunction(() => globalThis.__result !== undefined, null, { timeout: 120_000 });
  const result = await page.evaluate(() => globalThis.__result);
  await page.close();
  return { result, problems, requests };
}

/** The app's outcome where it must train on 2 threads with relaxed SIMD (isolated) or on 1. */
function check(name, { result, problems, requests }, origin, isolated) {
  console.log(`${name}, ${isolated ? 'cross-origin isolated' : 'bare host'}:`, result);
  assert.equal(result.error, undefined, `${name}: ${result.error}`);
  assert.equal(result.isolated, isolated, `${name}: crossOriginIsolated`);
  assert.equal(result.threads, isolated ? 2 : 1, `${name}: the worker model's threads`);
  assert.equal(result.simd, 'relaxed', `${name}: Chromium validates relaxed SIMD, so the package picks it`);
  assert.equal(result.step, 5);
  assert.ok(Number.isFinite(result.loss), `${name}: loss ${result.loss}`);
  assert.deepEqual(problems, [], `${name}: failed requests or console errors`);
  assert.deepEqual(requests.filter((u) => !u.startsWith(origin) && !u.startsWith('data:')), [], `${name}: requests beyond the local server`);
}

const builds = { vite: viteBuild, webpack: webpackBuild, esbuild: esbuildBrowser, 'plain <script type=module>': async () => project };
for (const [name, make] of Object.entries(builds)) {
  test(`${name}: a worker model trains on 2 threads with relaxed SIMD when isolated, on 1 when not`, async (t) => {
    if (!haveChromium(t)) return;
    const folder = await make();
    const page = name.startsWith('plain') ? 'plain.html' : '';
    const { context, close } = await browser();
    try {
      for (const isolated of [true, false]) {
        const server = await serve(folder, isolated ? ISOLATION : {});
        try {
          check(name, await runPage(context, `${server.origin}/${page}`), server.origin, isolated);
        } finally {
          await server.close();
        }
      }
    } finally {
      await close();
    }
  });
}

test('Vite\'s dev server: a worker model trains on 2 threads with relaxed SIMD when isolated, on 1 when not; without the recipe, the error names it', async (t) => {
  if (!haveChromium(t)) return;
  const { createServer } = await import('vite');
  for (const isolated of [true, false]) {
    // the recipe's config; the bare run takes the isolation headers away. A browser each: the
    // second server may come back on the first one's port, whose responses the first cached
    const server = await createServer({
      root: project, configFile: join(project, 'vite.config.js'), logLevel: 'warn',
      server: { host: '127.0.0.1', port: 0, hmr: false, ...(isolated ? {} : { headers: { 'Cross-Origin-Opener-Policy': 'unsafe-none', 'Cross-Origin-Embedder-Policy': 'unsafe-none' } }) },
    });
    await server.listen();
    const { context, close } = await browser();
    try {
      const origin = server.resolvedUrls.local[0].replace(/\/$/, '');
      check('vite dev', await runPage(context, `${origin}/`), origin, isolated);
    } finally {
      await close();
      await server.close();
    }
  }
  // without the recipe, Vite pre-bundles the package away from its files: the error says what to add
  const server = await createServer({ root: project, configFile: false, logLevel: 'silent', server: { host: '127.0.0.1', port: 0, hmr: false } });
  await server.listen();
  const { context, close } = await browser();
  try {
    const { result } = await runPage(context, server.resolvedUrls.local[0]);
    assert.match(result.error ?? '', /not where the package expects it.*optimizeDeps: \{ exclude: \['wasmformer'\] \}/, JSON.stringify(result));
  } finally {
    await close();
    await server.close();
  }
});

test('esbuild --platform=node: a worker model trains on 2 threads with relaxed SIMD, bundled into one file or with the package external', async () => {
  const esbuild = await import('esbuild');
  const out = join(project, 'esbuild-node');
  const common = { absWorkingDir: project, bundle: true, platform: 'node', format: 'esm', logLevel: 'warning' };
  // one file: the app says where it copied dist/, and its worker is bundled from 'wasmformer/worker'
  await esbuild.build({ ...common, entryPoints: { app: 'node-app.mjs', worker: 'wasmformer/worker' }, outdir: join(out, 'bundled'), outExtension: { '.js': '.mjs' } });
  cpSync(dist, join(out, 'bundled', 'wasmformer'), { recursive: true });
  // the package external: node_modules has it
  await esbuild.build({ ...common, entryPoints: { app: 'node-app.mjs' }, outdir: join(out, 'external'), outExtension: { '.js': '.mjs' }, packages: 'external' });
  assert.ok(!readdirSync(join(out, 'bundled')).some((f) => f.endsWith('.wasm')), 'the bundle copies no wasm by itself');
  for (const [how, args] of [['bundled', ['bundled/app.mjs', 'bundled']], ['external', ['external/app.mjs']]]) {
    // Node 20 runs relaxed SIMD behind a flag; Node 22 without one, and newer 22s refuse the flag
    const flag = Number(process.versions.node.split('.')[0]) < 22 ? ['--experimental-wasm-relaxed-simd'] : [];
    const result = JSON.parse(execFileSync(process.execPath, [...flag, ...args], { cwd: out, encoding: 'utf8', timeout: 120_000 }));
    console.log(`esbuild --platform=node, ${how}:`, result);
    assert.deepEqual({ threads: result.threads, simd: result.simd, step: result.step }, { threads: 2, simd: 'relaxed', step: 5 }, how);
    assert.ok(Number.isFinite(result.loss));
  }
  // without distUrl, a one-file bundle looks for the wasm beside itself: the error says so
  mkdirSync(join(out, 'lost'), { recursive: true });
  writeFileSync(join(out, 'lost', 'lost.mjs'), "import { createModel } from 'wasmformer';\ncreateModel('micro', { threads: 1 }).then(() => console.log('loaded'), (e) => console.log(e.code, e.message));\n");
  await esbuild.build({ ...common, entryPoints: { lost: join(out, 'lost', 'lost.mjs') }, outdir: join(out, 'lost'), outExtension: { '.js': '.out.mjs' } });
  const lost = execFileSync(process.execPath, [join(out, 'lost', 'lost.out.mjs')], { encoding: 'utf8' });
  assert.match(lost, /^WF_ERR_LOAD .*wasmformer\.wasm.*distUrl/, lost);
});
