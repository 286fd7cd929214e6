// The package as users get it: `npm pack`, then the tarball installed offline into
// scratch projects. A plain Node ESM script imports it by name, trains and generates; a
// browser page imports it through a real bundler (Vite), runs in headless Chromium on
// localhost, finds the wasm and generates text, on the main thread and in a Web Worker,
// without one request to any other host.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { tmpdir } from 'node:os';
import { CHROMIUM, haveChromium, pack, installInto, serve } from './pack.js';

const packed = pack();
after(() => rmSync(packed.dir, { recursive: true, force: true }));

test('the tarball holds the package files and nothing else', () => {
  const files = packed.files.map((f) => f.path).sort();
  for (const needed of ['package.json', 'README.md', 'bin/wasmformer.js', 'dist/wasmformer.mjs', 'dist/wasmformer.wasm',
    'src/js/index.js', 'src/js/node.js', 'src/js/index.d.ts', 'src/js/node.d.ts', 'src/js/worker.js',
    'src/js/node-worker.js', 'data/austen/pride_and_prejudice.txt']) {
    assert.ok(files.includes(needed), `${needed} is in the tarball`);
  }
  // dist/: the single-thread build, and the threaded one where the build makes it
  const allowed = /^(package\.json|README\.md|CHANGELOG\.md|LICENSE|docs\/[A-Z][A-Z-]*\.md|docs\/ttq\/[\w-]+\.svg|bin\/[\w-]+\.js|dist\/(wasmformer(-relaxed)?(-mt)?\.(mjs|wasm)|wasmformer(-relaxed)?-mt\.worker\.js|package\.json)|src\/js\/[\w-]+\.(js|d\.ts)|data\/austen\/(pride_and_prejudice\.txt|README\.md))$/;
  assert.deepEqual(files.filter((f) => !allowed.test(f)), [], 'unexpected files in the tarball');
  const size = packed.files.reduce((s, f) => s + f.size, 0);
  console.log(`${files.length} files, ${(size / 1e6).toFixed(2)} MB unpacked`);
});

test('the README speaks first to people who installed the package, and every file it names is in the tarball', () => {
  execFileSync('tar', ['-xzf', packed.tarball, '-C', packed.dir, 'package/README.md']);
  const readme = readFileSync(join(packed.dir, 'package', 'README.md'), 'utf8');
  const sections = [...readme.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
  assert.equal(sections[0], 'Install', 'the first section installs and uses the package');
  assert.ok(sections.indexOf('Install') < sections.findIndex((h) => /two commands/i.test(h)), 'contributors\' commands come after');
  const first = readme.slice(0, readme.indexOf('\n## ', readme.indexOf('## Install') + 5));
  assert.doesNotMatch(first, /npm (start|test)/, 'no repository scripts in the first screen');
  // every file of the package's own kinds the README names (docs/, the changelog, src/js types) ships
  const files = new Set(packed.files.map((f) => f.path));
  const named = new Set([...readme.matchAll(/`((?:docs\/[A-Z][A-Z-]*\.md)|CHANGELOG\.md|src\/js\/[\w-]+\.d\.ts)`/g)].map((m) => m[1]));
  assert.ok(named.size >= 3, [...named].join(', '));
  for (const f of named) assert.ok(files.has(f), `${f} is named in the README and shipped`);
  // every path it names or links resolves inside the tarball, or says it is the source
  // repository's (a section headed "(source repository)", a paragraph that says so)
  assert.deepEqual(repositoryPathsUnmarked(readme, files), [], 'paths the package does not have, not marked as the repository\'s');
  // an image shows only if it ships: the README's and the shipped docs' (docs/TTQ.md's plots)
  const shippedDocs = [...files].filter((f) => /^docs\/[^/]+\.md$/.test(f));
  execFileSync('tar', ['-xzf', packed.tarball, '-C', packed.dir, ...shippedDocs.map((f) => `package/${f}`)]);
  const images = [['README.md', readme], ...shippedDocs.map((f) => [f, readFileSync(join(packed.dir, 'package', f), 'utf8')])]
    .flatMap(([f, text]) => [...text.matchAll(/!\[[^\]]*\]\(([^)#\s]+)\)/g)]
      .filter((m) => !/^https?:/.test(m[1])).map((m) => posix.join(posix.dirname(f), m[1])));
  assert.ok(images.length >= 1, 'the README and docs have images');
  assert.deepEqual(images.filter((p) => !files.has(p)), [], 'images not in the tarball');
});

/** The paths (`a/b.js`, `x.md`, [..](a/b)) a README names that are neither in `files` nor
 * marked as the source repository's: each as "path (under heading)". */
function repositoryPathsUnmarked(readme, files) {
  const bad = [];
  let heading = '', fenced = false;
  for (const para of readme.split(/\n\s*\n/)) {
    const h = !fenced && para.match(/^#{1,3} (.+)$/m);
    if (h) heading = h[1];
    if ((para.match(/^```/gm) ?? []).length % 2) fenced = !fenced;
    const marked = /\(source repository\)$/.test(heading) || /source repository/.test(para);
    for (const m of para.matchAll(/`([^`\s]+)`|\]\(([^)#\s]+)\)/g)) {
      const path = (m[1] ?? m[2]).replace(/^\.\//, '');
      if (!/^[\w.-]+\/[\w./*{},-]*$|^[\w-]+\.(md|mjs|js|c|h|py|R|txt|ts)$/.test(path)) continue; // not a path
      const shipped = files.has(path) || (path.endsWith('/') && [...files].some((f) => f.startsWith(path)));
      const installed = /^(node_modules\/)?wasmformer\//.test(path); // the package's own specifiers
      if (!shipped && !installed && !marked) bad.push(`${path} (under "${heading}")`);
    }
  }
  return bad;
}

const CONSUMER = `
import { createModel, createWorkerModel, WfError } from 'wasmformer';
const text = 'It is a truth universally acknowledged. '.repeat(100);
const model = await createModel({ preset: 'tiny', nLayer: 2, dModel: 64, dFF: 256, context: 32, vocabSize: 32 });
const summary = await model.train(text, { steps: 40, evalInterval: 20 });
let out = '';
for await (const piece of model.generate('It is', { maxTokens: 24, temperature: 0 })) out += piece;
const { perplexity } = await model.evaluate(text, { maxTokens: 500 });
model.dispose();
let code = null;
try { model.step; } catch (e) { code = e instanceof WfError ? e.code : 'not a WfError'; }
const wm = await createWorkerModel('tiny');
const inWorker = await wm.info();
wm.dispose();
console.log(JSON.stringify({ step: summary.step, valLoss: summary.valLoss, out, perplexity, code, workerParams: inWorker.paramCount }));
`;

test('a plain Node ESM script imports the installed tarball, trains and generates', () => {
  const project = installInto(packed.dir, 'consumer', packed.tarball, { 'main.mjs': CONSUMER });
  assert.ok(existsSync(join(project, 'node_modules/wasmformer/dist/wasmformer.wasm')));
  const result = JSON.parse(execFileSync(process.execPath, ['main.mjs'], { cwd: project, encoding: 'utf8' }));
  console.log(result);
  assert.equal(result.step, 40);
  assert.ok(Number.isFinite(result.valLoss));
  assert.equal(result.out.length, 24);
  assert.ok(result.perplexity > 1 && result.perplexity < 32, 'learned something');
  assert.equal(result.code, 'WF_ERR_DISPOSED');
  assert.equal(result.workerParams, 813824);
});

// The browser page: the same work on the main thread and in a worker, with the same seeds,
// must give the same text. Built twice: by Vite, which follows new URL(..., import.meta.url)
// to the wasm and new Worker(new URL(...)) to the worker, and by esbuild, which follows
// neither, so the page says where it put them (wasmUrl, worker), as the README tells.
const HTML = '<!doctype html><html><head><link rel="icon" href="data:,"></head><body><pre id="out"></pre><script type="module" src="./main.js"></script></body></html>\n';
const PAGE = {
  'index.html': HTML,
  'page.js': `
import { createModel, createWorkerModel } from 'wasmformer';
const SMALL = { nLayer: 2, nHead: 2, dModel: 32, dFF: 64, context: 32, vocabSize: 16, batchSize: 8, seed: 3 };
const TEXT = 'the cat sat on the mat. '.repeat(200);
export async function run(modelOpts, workerOpts) {
  const model = await createModel(SMALL, { ...modelOpts, text: TEXT }); // evaluate needs the tokenizer
  const before = (await model.evaluate(TEXT, { maxTokens: 1000 })).loss;
  await model.train(TEXT, { steps: 80, lr: 3e-3, evalInterval: 0 });
  const after = (await model.evaluate(TEXT, { maxTokens: 1000 })).loss;
  const main = await model.generateText('the ', { maxTokens: 30, temperature: 0.5, seed: 1 });
  const wm = await createWorkerModel(SMALL, workerOpts);
  let progress = 0;
  await wm.train(TEXT, { steps: 80, lr: 3e-3, evalInterval: 0, onProgress: () => progress++ });
  let worker = '';
  for await (const piece of wm.generate('the ', { maxTokens: 30, temperature: 0.5, seed: 1 })) worker += piece;
  const saved = await wm.save();
  wm.dispose();
  model.load(saved);
  const reloaded = await model.generateText('the ', { maxTokens: 30, temperature: 0.5, seed: 1 });
  return { before, after, main, worker, reloaded, progress };
}
export function report(promise) {
  promise.then((r) => { window.__result = r; }, (e) => { window.__result = { error: String((e && e.stack) || e) }; });
}
`,
  'main.js': `import { run, report } from './page.js';\nreport(run({}, {}));\n`,
  'esbuild-main.js': `import { run, report } from './page.js';
const wasmUrl = '/wasmformer.wasm';
report(run({ wasmUrl }, { wasmUrl, worker: new Worker('/worker.js', { type: 'module' }) }));
`,
  'esbuild-worker.js': `import 'wasmformer/worker';\n`,
};


async function buildWithVite(project) {
  const { build } = await import('vite');
  await build({ root: project, configFile: false, logLevel: 'warn', build: { outDir: 'vite-out', emptyOutDir: true } });
  return join(project, 'vite-out');
}

async function buildWithEsbuild(project) {
  const esbuild = await import('esbuild');
  const out = join(project, 'esbuild-out');
  await esbuild.build({
    absWorkingDir: project, bundle: true, format: 'esm', outdir: out, logLevel: 'warning',
    entryPoints: { main: 'esbuild-main.js', worker: 'esbuild-worker.js' },
  });
  copyFileSync(join(project, 'node_modules/wasmformer/dist/wasmformer.wasm'), join(out, 'wasmformer.wasm'));
  writeFileSync(join(out, 'index.html'), HTML);
  return out;
}

test('pages bundled by Vite and by esbuild run the package in headless Chromium, on localhost only', async (t) => {
  if (!haveChromium(t)) return;
  const project = installInto(packed.dir, 'web', packed.tarball, PAGE);
  const sites = { vite: await buildWithVite(project), esbuild: await buildWithEsbuild(project) };

  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'wf-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const seen = [];
  context.on('request', (r) => seen.push(r.url()));
  const servers = [];
  try {
    for (const [name, folder] of Object.entries(sites)) {
      const server = await serve(folder);
      servers.push(server);
      const errors = [];
      const page = await context.newPage();
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
      page.on('worker', (w) => w.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); }));
      await page.goto(`${server.origin}/`);
      await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 60_000 });
      const result = await page.evaluate(() => window.__result);
      console.log(name, result);
      assert.equal(result.error, undefined, `${name}: ${result.error}`);
      assert.ok(result.after < 0.5 * result.before, `${name}: loss ${result.before} -> ${result.after}`);
      assert.equal(result.main.length, 30);
      assert.equal(result.worker, result.main, `${name}: the worker gives the main thread's text`);
      assert.equal(result.reloaded, result.main, `${name}: the worker's checkpoint loads on the main thread`);
      assert.ok(result.progress > 0);
      assert.deepEqual(errors, [], name);
      assert.ok(server.requests.some((p) => p.endsWith('.wasm')), `${name}: the wasm came from the page's server: ${server.requests.join(', ')}`);
      assert.ok(server.requests.some((p) => /worker.*\.js$/.test(p)), `${name}: the worker script was fetched`);
      await page.close();
    }
  } finally {
    await context.close();
    for (const server of servers) await server.close();
    rmSync(profile, { recursive: true, force: true });
  }
  const local = servers.map((s) => `${s.origin}/`);
  assert.deepEqual(seen.filter((u) => !local.some((o) => u.startsWith(o))), [], 'requests to anything but the local servers');
  assert.ok(seen.length >= 6, `saw ${seen.length} requests`);
});

test('the CLI of the installed tarball trains on its bundled text and generates', () => {
  const project = installInto(packed.dir, 'cli', packed.tarball);
  const bin = join(project, 'node_modules/.bin/wasmformer');
  const run = (...args) => execFileSync(bin, args, { cwd: project, encoding: 'utf8' });
  assert.match(run('--help'), /Usage: wasmformer <command>/);
  const micro = JSON.stringify({ nLayer: 1, nHead: 2, dModel: 32, dFF: 64, context: 32 });
  const trained = run('train', '--config', micro, '--steps', '5', '--eval-interval', '0', '--out', 'm.wf');
  assert.match(trained, /on pride_and_prejudice.txt \(684,768 characters\)/);
  assert.match(trained, /^done: step 5, /m);
  assert.equal(run('generate', 'm.wf', '--prompt', 'Mr', '--tokens', '10', '--seed', '1').length, 'Mr'.length + 10 + 1);
});
