// Generation on 1 and 2 threads through the package (createModel's `threads`), the way the
// page's worker and the CLI generate: the presets the page and the CLI start from, a model
// of each on each thread count, all in one Node process taking turns round after round
// (order reversed every other round), wall clock (threads run beside the caller, so the
// process's CPU time cannot show them). With --baseline DIR, a built checkout's package
// (DIR/src/js/node.js and DIR/dist/) takes the same turns: its figures, and this build's
// over them, per preset and thread count.
//   node bench/gen-threads.mjs [--baseline DIR] [--presets micro,tiny] [--rounds N] [--tokens N] [--json]
// e.g. the fix that kept a decoded token's few-row products on the caller:
//   git worktree add /tmp/gt-before 42bbf4f && (cd /tmp/gt-before && ./build.sh) &&
//   node bench/gen-threads.mjs --baseline /tmp/gt-before
// Each model is a fresh one of the preset (random weights) with a char tokenizer from the
// bundled novel; the prompt is that novel's first 16 characters; every round generates
// --tokens tokens (default 400, within micro's and tiny's 64-token context only with
// slides, as the page's long generations run) at temperature 0.8 from the same seed, so
// every model writes the same amount of work each round.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median } from './configs.mjs';

const here = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const flag = (name) => (args.includes(name) ? (args.splice(args.indexOf(name), 1), true) : false);
const value = (name, def) => (args.includes(name) ? args.splice(args.indexOf(name), 2)[1] : def);
const json = flag('--json');
const baseline = value('--baseline', null);
const presets = value('--presets', 'micro,tiny').split(',');
const rounds = Number(value('--rounds', '9'));
const tokens = Number(value('--tokens', '400'));
if (args.length || !(rounds > 0) || !(tokens > 0)) {
  console.error('usage: node bench/gen-threads.mjs [--baseline DIR] [--presets micro,tiny] [--rounds N] [--tokens N] [--json]');
  process.exit(2);
}

const text = readFileSync(join(here, 'data/austen/pride_and_prejudice.txt'), 'utf8');
const prompt = text.slice(0, 16);
const builds = [];
if (baseline) builds.push({ name: 'baseline', dir: resolve(baseline) });
builds.push({ name: 'this', dir: here });

const cases = [];
for (const b of builds) {
  const pkg = await import(pathToFileURL(join(b.dir, 'src/js/node.js')).href);
  for (const preset of presets) {
    for (const threads of [1, 2]) {
      const model = await pkg.createModel(preset, { threads, text });
      const got = model.info().threads ?? threads;
      cases.push({ build: b.name, preset, threads, got, model, times: [] });
    }
  }
}
const short = cases.find((c) => c.got !== c.threads);
if (short) console.log(`note: ${short.build} ${short.preset} asked for ${short.threads} threads and got ${short.got}`);

const opts = { maxTokens: tokens, temperature: 0.8, seed: 7 };
for (const c of cases) await c.model.generateText(prompt, opts); // warm up: compile, fill the caches
for (let r = 0; r < rounds; r++) {
  for (const c of r % 2 ? [...cases].reverse() : cases) {
    const t0 = performance.now();
    await c.model.generateText(prompt, opts);
    c.times.push((performance.now() - t0) / 1000);
  }
  if (!json) process.stdout.write(`\rround ${r + 1} / ${rounds}`);
}
if (!json) process.stdout.write('\n');

const rate = (c) => tokens / median(c.times);
const find = (build, preset, threads) => cases.find((c) => c.build === build && c.preset === preset && c.threads === threads);
const rows = cases.map((c) => {
  const one = find(c.build, c.preset, 1), base = baseline && c.build === 'this' ? find('baseline', c.preset, c.threads) : null;
  return {
    build: c.build, preset: c.preset, threads: c.threads, tok_s: rate(c),
    over_1_thread: c.threads > 1 ? rate(c) / rate(one) : null,
    over_baseline: base ? rate(c) / rate(base) : null,
  };
});
for (const c of cases) c.model.dispose();
if (json) {
  console.log(JSON.stringify({ rounds, tokens, baseline, rows }, null, 2));
} else {
  console.log(`generation, ${tokens} tokens a round, median of ${rounds} rounds, wall clock${baseline ? `; baseline ${baseline}` : ''}`);
  console.log('| build | preset | threads | tokens/s | over 1 thread | over the baseline |');
  console.log('|---|---|---|---|---|---|');
  const x = (v) => (v === null ? '' : `${v.toFixed(2)}x`);
  for (const r of rows) console.log(`| ${r.build} | ${r.preset} | ${r.threads} | ${r.tok_s.toFixed(0)} | ${x(r.over_1_thread)} | ${x(r.over_baseline)} |`);
}
process.exit(0);
