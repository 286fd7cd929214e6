// Generation on 1 and 2 threads through the package (createModel's `threads`), the way the
// CLI and the page generate: the presets they start from, a model of each on each thread
// count, all in one process taking turns round after round (order reversed every other
// round), wall clock (threads run beside the caller, so the process's CPU time cannot show
// them). With --baseline DIR, a built checkout's package (its src/js/ and dist/) takes the
// same turns: its figures, and this build's over them, per preset and thread count.
// --browser: the same in headless Chromium (Debian's, through playwright-core), in a
// cross-origin isolated page (the threaded build loads only there), each model in a Web
// Worker as the page's are (createWorkerModel).
//   node bench/gen-threads.mjs [--baseline DIR] [--browser] [--presets micro,tiny] [--rounds N] [--tokens N] [--json]
// e.g. the fix that kept a decoded token's few-row products on the caller:
//   git worktree add /tmp/gt-before 42bbf4f && (cd /tmp/gt-before && ./build.sh) &&
//   node bench/gen-threads.mjs --baseline /tmp/gt-before --browser
// Each model is a fresh one of the preset (random weights) with a char tokenizer from the
// bundled novel; the prompt is the novel's first 16 characters; every round generates
// --tokens tokens (default 2000: micro's and tiny's 64-token context slides, re-reading its
// last 32 tokens, every 32, as the page's long generations do) at temperature 0.8 from one
// seed, so every model does the same work each round.
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { measureGeneration } from './gen-threads-core.mjs';

const here = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const flag = (name) => (args.includes(name) ? (args.splice(args.indexOf(name), 1), true) : false);
const value = (name, def) => (args.includes(name) ? args.splice(args.indexOf(name), 2)[1] : def);
const json = flag('--json'), browser = flag('--browser');
const baseline = value('--baseline', null);
const presets = value('--presets', 'micro,tiny').split(',');
const rounds = Number(value('--rounds', '9'));
const tokens = Number(value('--tokens', '2000'));
if (args.length || !(rounds > 0) || !(tokens > 0)) {
  console.error('usage: node bench/gen-threads.mjs [--baseline DIR] [--browser] [--presets micro,tiny] [--rounds N] [--tokens N] [--json]');
  process.exit(2);
}
const dirs = [...(baseline ? [['baseline', resolve(baseline)]] : []), ['this', here]];
const TEXT = 'data/austen/pride_and_prejudice.txt';
const progress = (r) => { if (!json) process.stdout.write(`\rround ${r} / ${rounds}`); };

/** The rows in headless Chromium: each DIR served under /NAME/, COOP + COEP on every file. */
async function inBrowser() {
  const { chromium } = await import('playwright-core');
  const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm' };
  const page = '<!doctype html><meta charset="utf-8"><title>gen-threads</title><script type="module">'
    + "import { measureGeneration } from '/this/bench/gen-threads-core.mjs';"
    + 'window.run = async (o) => measureGeneration(await Promise.all(o.builds.map(async (name) => ({ name, pkg: await import(`/${name}/src/js/index.js`) }))),'
    + ` { ...o, text: await (await fetch('/this/${TEXT}')).text(), worker: true, onRound: (r) => console.log('round', r) });`
    + 'window.ready = true;</script>';
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    const headers = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp', 'Cache-Control': 'no-store' };
    if (path === '/') return res.writeHead(200, { ...headers, 'Content-Type': 'text/html' }).end(page);
    const [, name, ...rest] = path.split('/');
    const root = dirs.find(([n]) => n === name)?.[1];
    const file = root && join(root, ...rest);
    try {
      if (!file || !file.startsWith(root) || !statSync(file).isFile()) throw new Error('not a file');
      res.writeHead(200, { ...headers, 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const profile = mkdtempSync(join(tmpdir(), 'wf-gen-threads-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update'],
  });
  try {
    const tab = ctx.pages()[0] ?? await ctx.newPage();
    const errors = [];
    tab.on('pageerror', (e) => errors.push(String(e)));
    tab.on('console', (m) => { const r = /^round (\d+)$/.exec(m.text()); if (r) progress(Number(r[1])); });
    await tab.goto(`http://127.0.0.1:${server.address().port}/`);
    await tab.waitForFunction(() => window.ready === true && crossOriginIsolated, null, { timeout: 60_000 });
    const rows = await tab.evaluate((o) => window.run(o), { builds: dirs.map(([n]) => n), presets, rounds, tokens });
    if (errors.length) throw new Error(errors.join('\n'));
    return { rows, engine: await tab.evaluate(() => navigator.userAgent) };
  } finally {
    await ctx.close();
    server.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

async function inNode() {
  const builds = [];
  for (const [name, dir] of dirs) builds.push({ name, pkg: await import(pathToFileURL(join(dir, 'src/js/node.js')).href) });
  const text = readFileSync(join(here, TEXT), 'utf8');
  return { rows: await measureGeneration(builds, { text, presets, rounds, tokens, onRound: progress }), engine: `Node ${process.version}` };
}

const started = `${new Date().toISOString()} | ${cpus().length} x ${cpus()[0].model} | load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`;
const { rows, engine } = browser ? await inBrowser() : await inNode();
if (json) {
  console.log(JSON.stringify({ started, engine, rounds, tokens, baseline, rows }, null, 2));
} else {
  process.stdout.write('\n');
  console.log(`${started} | ${engine}${browser ? ', cross-origin isolated page, models in Web Workers' : ''}`);
  console.log(`generation, ${tokens} tokens a round, median of ${rounds} rounds, wall clock${baseline ? `; baseline ${baseline}` : ''}`);
  console.log('| build | preset | threads | tokens/s | over 1 thread | over the baseline |');
  console.log('|---|---|---|---|---|---|');
  const x = (v) => (v === null ? '' : `${v.toFixed(2)}x`);
  for (const r of rows) {
    const t = r.threads_running === r.threads ? r.threads : `${r.threads} (ran ${r.threads_running})`;
    console.log(`| ${r.build} | ${r.preset} | ${t} | ${r.tok_s.toFixed(0)} | ${x(r.over_1_thread)} | ${x(r.over_baseline)} |`);
  }
}
process.exit(0);
