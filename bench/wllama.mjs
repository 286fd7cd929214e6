#!/usr/bin/env node
// wasmformer against wllama (llama.cpp compiled to wasm, @wllama/wllama in bench/package.json)
// on the same GGUF files (issue 29's anchor): the SmolLM-135M shape (bench/configs.mjs, random
// weights, seed 7) written by wasmformer as float32, Q8_0 and Q4_0 GGUF (bench/infer-memory.mjs
// makes them in the git-ignored bench/models/), each engine in its own headless Chromium (a
// fresh browser and profile per row), greedy. Rows take turns: every round runs each (file,
// threads) pair for both engines, the engine order swapped every round. 1 thread: a page
// without cross-origin isolation (each engine's single-thread path); 2 threads: a
// crossOriginIsolated page (COOP/COEP; no CSP, since wllama starts its workers from blob: URLs),
// wasmformer's threaded build and wllama's pthreads.
// Each engine loads the file as its docs say to load a hosted file: wasmformer
// loadModel(await fetch(url)), which streams the response into the weights (before
// 2026-11-28's streamed load: fetch() + loadModel(bytes)); wllama loadModelFromUrl (into the origin's private file system, then its
// heap). Reported per row: decode tokens/s (wasmformer: between its first and last token's
// onToken; wllama: llama.cpp's own timings.predicted_ms, which leave out its worker's
// messages), the prompt's time (llama.cpp's prompt_ms), load time, and the renderer's peak
// resident memory (VmHWM of the browser's largest renderer process: the page, its workers and
// their wasm memories). Medians over the rounds with their range (min-max), the ratios issue
// 29 asks for, and each file's greedy continuations compared between the engines.
//   node bench/wllama.mjs [--rounds 3] [--types f32,q8_0,q4_0] [--threads 1,2] [--decode 64] [--json FILE]
//   node bench/wllama.mjs --from FILE   (the tables again, from an earlier run's --json)
// Needs the bench's own dependencies (`npm ci` in bench/); without @wllama/wllama it says so
// and exits 0. `npm run bench -- --wllama` runs it after the suite.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../scripts/serve.mjs';
import { median } from './configs.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
// --from FILE: the tables of an earlier run's --json, nothing run
const saved = arg('from', null) && JSON.parse(readFileSync(arg('from', null), 'utf8'));
const ROUNDS = saved ? saved.rounds : Number(arg('rounds', 3));
const TYPES = saved ? [...new Set(saved.results.map((r) => r.type))] : arg('types', 'f32,q8_0,q4_0').split(',');
const THREADS = saved ? [...new Set(saved.results.map((r) => r.threads))] : arg('threads', '1,2').split(',').map(Number);
const DECODE = saved ? saved.decode : Number(arg('decode', 64));
const JSON_OUT = arg('json', null);
const MiB = (x) => (x / 2 ** 20).toFixed(0);

if (!saved && !existsSync(join(here, 'node_modules', '@wllama', 'wllama', 'esm', 'index.js')) ||
    !existsSync(join(here, 'node_modules', 'playwright-core'))) {
  console.log('bench/wllama.mjs: skipped: @wllama/wllama (or playwright-core) is not installed; run `npm ci` in bench/ first');
  process.exit(0);
}
if (!saved && !existsSync('/usr/bin/chromium')) {
  console.log('bench/wllama.mjs: skipped: no /usr/bin/chromium');
  process.exit(0);
}
const WLLAMA_VERSION = saved ? saved.wllama :
  JSON.parse(readFileSync(join(here, 'node_modules', '@wllama', 'wllama', 'package.json'), 'utf8')).version;

// the files, made by wasmformer once
const DIR = join(here, 'models', 'smollm-135m');
const missing = saved ? [] : TYPES.filter((t) => !existsSync(join(DIR, `${t}.gguf`)));
if (missing.length) {
  const r = spawnSync(process.execPath, [join(here, 'infer-memory.mjs'), '--role', 'make', '--rows',
    missing.map((t) => `gguf-${t}`).join(',')], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(1);
}

/** Every process below pid (the browser), by /proc's parent links. */
function descendants(pid) {
  const parent = new Map();
  for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      parent.set(Number(p), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch { /* gone */ }
  }
  const out = [];
  const walk = (p) => { for (const [c, pp] of parent) if (pp === p) { out.push(c); walk(c); } };
  walk(pid);
  return out;
}

/** The renderer processes' peak resident memory (VmHWM), in bytes, largest first. */
function rendererPeaks(browserPid) {
  const peaks = [];
  for (const p of descendants(browserPid)) {
    try {
      if (!readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('--type=renderer')) continue;
      const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      if (hwm) peaks.push(Number(hwm[1]) * 1024);
    } catch { /* gone */ }
  }
  return peaks.sort((a, b) => b - a);
}

/** The browser process of a persistent context: the chromium whose command line names its profile. */
function findBrowserPid(profile) {
  for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
      if (cmd.includes(profile) && !cmd.includes('--type=')) return Number(p);
    } catch { /* gone */ }
  }
  throw new Error('the browser process was not found');
}

async function row(server, engine, type, threads) {
  const { chromium } = createRequire(join(here, 'package.json'))('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'wf-wllama-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const browserPid = ctx.browser()?.process?.()?.pid ?? findBrowserPid(profile);
    const page = ctx.pages()[0] ?? await ctx.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${server.origin}/bench/wllama.html?engine=${engine}&decode=${DECODE}&threads=${threads}` +
      `&file=/bench/models/smollm-135m/${type}.gguf`);
    await page.waitForFunction(() => window.benchReady === true, null, { timeout: 60000 });
    const r = await page.evaluate(() => window.runBench());
    if (r.threads !== threads) throw new Error(`${engine} ran on ${r.threads} threads, not ${threads} (crossOriginIsolated: ${r.isolated})`);
    if (errors.length) r.pageErrors = errors;
    return { ...r, type, rendererPeak: rendererPeaks(browserPid)[0], load: loadavg()[0] };
  } finally {
    await ctx.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

/** Every row, rounds taking turns. 1 thread: no isolation (as a plain static host); 2+:
 * COOP/COEP without a CSP. */
async function measure() {
  const servers = {
    plain: await startServer({ folder: root, port: 0, isolation: false, plain: true }),
    isolated: await startServer({ folder: root, port: 0, isolation: true, csp: false }),
  };
  const results = [];
  const started = { at: new Date().toISOString(), load: loadavg() };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const threads of THREADS) {
        for (const type of TYPES) {
          const order = round % 2 ? ['wllama', 'wasmformer'] : ['wasmformer', 'wllama'];
          for (const engine of order) {
            const r = await row(threads > 1 ? servers.isolated : servers.plain, engine, type, threads);
            results.push({ ...r, round });
            console.error(`round ${round + 1} ${type} ${threads}T ${engine}: ${r.tokensPerSecond.toFixed(1)} tokens/s decoding (${r.decoded}), prompt ` +
              `${r.promptMs.toFixed(0)} ms (${r.promptTokens} tokens), load ${r.loadMs.toFixed(0)} ms, renderer peak ${MiB(r.rendererPeak)} MiB` +
              `${r.simd ? `, ${r.simd}` : ''}, load average ${r.load.toFixed(2)}${r.pageErrors ? ` (page errors: ${r.pageErrors.join('; ')})` : ''}`);
          }
        }
      }
    }
  } finally {
    await servers.plain.close();
    await servers.isolated.close();
  }
  return { started, ended: { at: new Date().toISOString(), load: loadavg() }, results };
}
const { started, ended, results } = saved ?? await measure();

const of = (engine, type, threads) => results.filter((r) => r.engine === engine && r.type === type && r.threads === threads);
const stat = (rs, f) => { const v = rs.map(f); return { median: median(v), min: Math.min(...v), max: Math.max(...v) }; };
const summary = [];
for (const threads of THREADS) {
  for (const type of TYPES) {
    for (const engine of ['wasmformer', 'wllama']) {
      const rs = of(engine, type, threads);
      summary.push({ engine, type, threads, rounds: rs.length, simd: rs[0].simd,
        decode: stat(rs, (r) => r.tokensPerSecond), prompt: stat(rs, (r) => r.promptMs), promptTokens: rs[0].promptTokens,
        load: stat(rs, (r) => r.loadMs), peak: stat(rs, (r) => r.rendererPeak) });
    }
  }
}
const cell = (engine, type, threads) => summary.find((s) => s.engine === engine && s.type === type && s.threads === threads);
const range = (s, f, d = 0) => `${f(s.median).toFixed(d)} (${f(s.min).toFixed(d)}-${f(s.max).toFixed(d)})`;

console.log(`SmolLM-135M shape (random weights, seed 7), ${DECODE} tokens decoded greedily after a 16-letter prompt, headless Chromium, ` +
  `wllama ${WLLAMA_VERSION}; ${ROUNDS} rounds, medians (min-max); load average ${started.load.map((x) => x.toFixed(2)).join(' ')} at the start, ` +
  `${ended.load.map((x) => x.toFixed(2)).join(' ')} at the end (${started.at.slice(0, 16)}-${ended.at.slice(11, 16)} UTC)`);
console.log('');
console.log('| file | threads | engine | decode tok/s | prompt ms (tokens) | load ms | renderer peak MiB |');
console.log('|---|---:|---|---:|---:|---:|---:|');
for (const s of summary) {
  console.log(`| ${s.type}.gguf | ${s.threads} | ${s.engine === 'wllama' ? `wllama ${WLLAMA_VERSION}` : `wasmformer (${s.simd})`} | ` +
    `${range(s.decode, (x) => x, 1)} | ${range(s.prompt, (x) => x)} (${s.promptTokens}) | ${range(s.load, (x) => x)} | ${range(s.peak, (x) => x / 2 ** 20)} |`);
}

// issue 29's goals, each as a ratio of medians from this run
console.log('');
// The ratio of the medians, and beside it the median (and range) of the ratios within each
// round: a round's rows ran minutes apart at most, so a load that moves between rounds
// cancels in them.
console.log('| goal (issue 29) | threads | ratio of medians | per-round ratios: median (min-max) | goal | met |');
console.log('|---|---:|---:|---:|---:|---|');
const goals = [];
const goal = (name, threads, x, target, perRound, higher = true) => {
  const met = higher ? x >= target : x <= target;
  const pr = stat(perRound, (v) => v);
  goals.push({ name, threads, ratio: x, perRound: pr, target, met });
  console.log(`| ${name} | ${threads} | ${x.toFixed(2)}x | ${pr.median.toFixed(2)}x (${pr.min.toFixed(2)}-${pr.max.toFixed(2)}) | ` +
    `${higher ? '≥' : '≤'} ${target}x | ${met ? 'yes' : 'no'} |`);
};
/** f(row of engine a on type ta) / f(row of engine b on type tb), round by round. */
const rounds = (ta, tb, threads, f, a = 'wasmformer', b = 'wllama') => Array.from({ length: ROUNDS }, (_, round) => {
  const [x, y] = [of(a, ta, threads).find((r) => r.round === round), of(b, tb, threads).find((r) => r.round === round)];
  return f(x) / f(y);
});
const has = (t) => TYPES.includes(t);
for (const threads of THREADS) {
  const wl32 = has('f32') ? cell('wllama', 'f32', threads) : null;
  const decodeVs = (type) => cell('wasmformer', type, threads).decode.median / wl32.decode.median;
  if (wl32) {
    const tps = (r) => r.tokensPerSecond;
    goal('decode: wasmformer f32 / wllama f32', threads, decodeVs('f32'), 1.0, rounds('f32', 'f32', threads, tps));
    if (has('q8_0')) goal('decode: wasmformer Q8_0 / wllama f32', threads, decodeVs('q8_0'), 2.0, rounds('q8_0', 'f32', threads, tps));
    if (has('q4_0')) goal('decode: wasmformer Q4_0 / wllama f32', threads, decodeVs('q4_0'), 2.5, rounds('q4_0', 'f32', threads, tps));
  }
  for (const type of TYPES) {
    const [a, b] = [cell('wasmformer', type, threads), cell('wllama', type, threads)];
    goal(`prompt ms: wasmformer / wllama, ${type}`, threads, a.prompt.median / b.prompt.median, 1.0,
      rounds(type, type, threads, (r) => r.promptMs), false);
    goal(`renderer peak: wasmformer / wllama, ${type}`, threads, a.peak.median / b.peak.median, type === 'f32' ? 1.2 : 1.0,
      rounds(type, type, threads, (r) => r.rendererPeak), false);
  }
}

// the same weights read by two implementations: their greedy continuations, compared
console.log('');
for (const threads of THREADS) {
  for (const type of TYPES) {
    const text = (e) => of(e, type, threads)[0].text;
    const [a, b] = [[...text('wasmformer')], [...text('wllama')]];
    let same = 0;
    while (same < a.length && same < b.length && a[same] === b[same]) same++;
    const rate = (e) => cell(e, type, threads).decode.median;
    console.log(`${type}.gguf, ${threads} thread${threads > 1 ? 's' : ''}: wasmformer / wllama decode rate on the same file ` +
      `${(rate('wasmformer') / rate('wllama')).toFixed(2)}x; greedy continuations agree on their first ${same} of ${a.length} and ${b.length} characters`);
  }
}
if (JSON_OUT) writeFileSync(JSON_OUT, JSON.stringify({ started, ended, wllama: WLLAMA_VERSION, decode: DECODE, rounds: ROUNDS, summary, goals, results }, null, 1));
