#!/usr/bin/env node
// wasmformer against wllama (llama.cpp compiled to wasm, @wllama/wllama in bench/package.json)
// on the same GGUF files (issue 29): the SmolLM-135M shape (bench/configs.mjs, random
// weights, seed 7) written by wasmformer as float32 and Q8_0 GGUF (bench/infer-memory.mjs
// makes them in the git-ignored bench/models/), each engine in its own headless Chromium
// (a fresh browser per row, rows taking turns), one thread each (no cross-origin isolation:
// wllama picks its single-thread path, wasmformer its single-thread build), greedy.
// Reported per row: decode tokens/s (wasmformer: between its first and last token's
// onToken; wllama: llama.cpp's own timings.predicted_ms), the prompt's time, load time, and
// the renderer process's peak resident memory (VmHWM of the browser's renderer processes:
// the page, its workers and their wasm memories; the file's fetched bytes count in both).
//   node bench/studies/wllama.mjs [--rounds N] [--types f32,q8_0] [--decode 64]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../scripts/serve.mjs';
import { median } from '../configs.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const ROUNDS = Number(arg('rounds', 2));
const TYPES = arg('types', 'f32,q8_0').split(',');
const DECODE = Number(arg('decode', 64));
const { chromium } = createRequire(join(root, 'bench', 'package.json'))('playwright-core');
const MiB = (x) => (x / 2 ** 20).toFixed(0);

// the files, made by wasmformer once
const DIR = join(root, 'bench', 'models', 'smollm-135m');
const missing = TYPES.filter((t) => !existsSync(join(DIR, `${t}.gguf`)));
if (missing.length) {
  const r = spawnSync(process.execPath, [join(root, 'bench', 'infer-memory.mjs'), '--role', 'make', '--rows',
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

async function row(server, engine, type) {
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
    await page.goto(`${server.origin}/bench/studies/wllama.html?engine=${engine}&decode=${DECODE}` +
      `&file=/bench/models/smollm-135m/${type}.gguf`);
    await page.waitForFunction(() => window.benchReady === true, null, { timeout: 60000 });
    const r = await page.evaluate(() => window.runBench());
    if (errors.length) r.pageErrors = errors;
    r.type = type;
    r.rendererPeak = rendererPeaks(browserPid)[0];
    return r;
  } finally {
    await ctx.close();
    rmSync(profile, { recursive: true, force: true });
  }
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

const server = await startServer({ folder: root, port: 0, isolation: false, plain: true }); // no COOP/COEP: one thread each
const results = [];
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const type of TYPES) {
      const order = round % 2 ? ['wllama', 'wasmformer'] : ['wasmformer', 'wllama'];
      for (const engine of order) {
        const r = await row(server, engine, type);
        results.push(r);
        console.error(`round ${round + 1} ${type} ${engine}: ${r.tokensPerSecond.toFixed(1)} tokens/s decoding (${r.decoded}), prompt ` +
          `${r.promptMs.toFixed(0)} ms (${r.promptTokens} tokens), load ${r.loadMs.toFixed(0)} ms, renderer peak ${MiB(r.rendererPeak)} MiB${r.simd ? `, ${r.simd}` : ''}` +
          `${r.pageErrors ? ` (page errors: ${r.pageErrors.join('; ')})` : ''}`);
      }
    }
  }
} finally {
  await server.close();
}

console.log(`SmolLM-135M shape, ${DECODE} tokens decoded greedily after a 16-token prompt, one thread, headless Chromium ` +
  `(${ROUNDS} rounds, medians; the second pass of each page):`);
console.log('file        engine       decode tokens/s   prompt ms   load ms   renderer peak MiB');
for (const type of TYPES) {
  for (const engine of ['wasmformer', 'wllama']) {
    const rs = results.filter((r) => r.type === type && r.engine === engine);
    const m = (f) => median(rs.map(f));
    console.log(`${`${type}.gguf`.padEnd(11)} ${engine.padEnd(12)} ${m((r) => r.tokensPerSecond).toFixed(1).padStart(15)}   ` +
      `${m((r) => r.promptMs).toFixed(0).padStart(9)}   ${m((r) => r.loadMs).toFixed(0).padStart(7)}   ${MiB(m((r) => r.rendererPeak)).padStart(17)}`);
  }
  const rate = (e) => median(results.filter((r) => r.type === type && r.engine === e).map((r) => r.tokensPerSecond));
  // the same weights read by two implementations: their greedy continuations, compared
  const text = (e) => results.find((r) => r.type === type && r.engine === e).text;
  const [a, b] = [[...text('wasmformer')], [...text('wllama')]];
  let same = 0;
  while (same < a.length && same < b.length && a[same] === b[same]) same++;
  console.log(`${`${type}.gguf`.padEnd(11)} wasmformer / wllama decode rate: ${(rate('wasmformer') / rate('wllama')).toFixed(2)}x; ` +
    `greedy continuations agree on their first ${same} of ${a.length} and ${b.length} characters`);
}
