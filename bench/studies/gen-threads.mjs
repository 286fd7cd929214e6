// Generation on 1 and 2 threads through the package (createModel's `threads`), the way the
// CLI and the page generate: the presets they start from, a model of each on each thread
// count, all in one process taking turns round after round (order reversed every other
// round), wall clock (threads run beside the caller, so the process's CPU time cannot show
// them). With --baseline DIR, a built checkout's package (its src/js/ and dist/) takes the
// same turns: its figures, and this build's over them, per preset and thread count.
// --browser: the same in headless Chromium (Debian's, through playwright-core), in a
// cross-origin isolated page (the threaded build loads only there), each model in a Web
// Worker as the page's are (createWorkerModel).
//   node bench/studies/gen-threads.mjs [--baseline DIR] [--browser] [--presets micro,tiny] [--rounds N] [--tokens N] [--json]
// e.g. the fix that kept a decoded token's few-row products on the caller:
//   git worktree add /tmp/gt-before 42bbf4f && (cd /tmp/gt-before && ./build.sh) &&
//   node bench/studies/gen-threads.mjs --baseline /tmp/gt-before --browser
// Each model is a fresh one of the preset (random weights) with a char tokenizer from the
// bundled novel; the prompt is the novel's first 16 characters; every round generates
// --tokens tokens (default 2000: micro's and tiny's 64-token context slides, re-reading its
// last 32 tokens, every 32, as the page's long generations do) at temperature 0.8 from one
// seed, so every model does the same work each round.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startServer } from '../../scripts/serve.mjs';
import { measureGeneration } from './gen-threads-core.mjs';

const here = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const args = process.argv.slice(2);
const flag = (name) => (args.includes(name) ? (args.splice(args.indexOf(name), 1), true) : false);
const value = (name, def) => (args.includes(name) ? args.splice(args.indexOf(name), 2)[1] : def);
const json = flag('--json'), browser = flag('--browser');
const baseline = value('--baseline', null);
const presets = value('--presets', 'micro,tiny').split(',');
const rounds = Number(value('--rounds', '9'));
const tokens = Number(value('--tokens', '2000'));
if (args.length || !(rounds > 0) || !(tokens > 0)) {
  console.error('usage: node bench/studies/gen-threads.mjs [--baseline DIR] [--browser] [--presets micro,tiny] [--rounds N] [--tokens N] [--json]');
  process.exit(2);
}
const dirs = [...(baseline ? [['baseline', resolve(baseline)]] : []), ['this', here]];
const TEXT = 'data/austen/pride_and_prejudice.txt';
const progress = (r) => { if (!json) process.stdout.write(`\rround ${r} / ${rounds}`); };

/** The rows in headless Chromium: each DIR mounted at /NAME/ on the page's own server
 * (scripts/serve.mjs: its policy and the COOP/COEP headers), measured from gen-threads.html. */
async function inBrowser() {
  const { chromium } = await import('playwright-core');
  const server = await startServer({ mounts: Object.fromEntries(dirs.map(([name, dir]) => [`/${name}/`, dir])), port: 0 });
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
    await tab.goto(`${server.origin}/this/bench/studies/gen-threads.html`);
    if (!await tab.evaluate(() => crossOriginIsolated)) throw new Error('the page is not cross-origin isolated: no threads');
    const rows = await tab.evaluate(async (o) => {
      const { measureGeneration } = await import('/this/bench/studies/gen-threads-core.mjs');
      const builds = await Promise.all(o.builds.map(async (name) => ({ name, pkg: await import(`/${name}/src/js/index.js`) })));
      const text = await (await fetch(`/this/${o.text}`)).text();
      return measureGeneration(builds, { ...o, text, worker: true, onRound: (r) => console.log('round', r) });
    }, { builds: dirs.map(([n]) => n), presets, rounds, tokens, text: TEXT });
    if (errors.length) throw new Error(errors.join('\n'));
    return { rows, engine: await tab.evaluate(() => navigator.userAgent) };
  } finally {
    await ctx.close();
    await server.close();
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
