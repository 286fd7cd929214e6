// A one-off study (issue 24): generation's text from the core in one call a token. Before,
// each generated token crossed into the wasm module 7 times with 2 mallocs (gen_next, then
// a decode with its buffers and the tokenizer's info), twice over for a Hugging Face or
// llama2.c tokenizer (the token decoded after the one before it); now wf_model_gen_next
// samples it and writes its text, once. This measures generate()'s tokens/s through the
// package for the micro and tiny presets with a char tokenizer (the CLI's and the page's)
// and a Hugging Face one (tests/fixtures/tokenizers/llama.json), this checkout against a
// built baseline checkout, in one process, taking turns round after round (order reversed
// every other round), one thread, timed by the process's CPU time (user + system: on one
// thread the work itself, where wall clock on a shared machine also counts the other
// processes' turns); and counts each build's crossings and mallocs
// per token through a wrapped module (as tests/js/gen-text.test.mjs does). Beside them, the
// core's own loop with the char tokenizer (wf_model_gen_next called 2,000 times through the
// runtime, no decoding in JS), in each build without the text and, in this one, with it: what
// the forward pass costs, and what writing the text adds to it.
//   node bench/studies/gen-text.mjs --baseline DIR [--rounds N] [--tokens N] [--json]
// e.g. git archive 6655a24 | tar -x -C /tmp/before && (cd /tmp/before && ./build.sh) &&
//      node bench/studies/gen-text.mjs --baseline /tmp/before
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median } from '../configs.mjs';

const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };

const here = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const args = process.argv.slice(2);
const flag = (name) => (args.includes(name) ? (args.splice(args.indexOf(name), 1), true) : false);
const value = (name, def) => (args.includes(name) ? args.splice(args.indexOf(name), 2)[1] : def);
const json = flag('--json');
const baseline = value('--baseline', null);
const rounds = Number(value('--rounds', '9'));
const tokens = Number(value('--tokens', '2000'));
if (args.length || !baseline || !(rounds > 0) || !(tokens > 0)) {
  console.error('usage: node bench/studies/gen-text.mjs --baseline DIR [--rounds N] [--tokens N] [--json]');
  process.exit(2);
}
const TEXT = readFileSync(join(here, 'data/austen/pride_and_prejudice.txt'), 'utf8');
const HF = readFileSync(join(here, 'tests/fixtures/tokenizers/llama.json'));
const prompt = TEXT.slice(0, 16);

/** Calls into the module (and mallocs) while fn runs, through a wrapped rt.M. */
async function counted(rt, fn) {
  const real = rt.M, n = { crossings: 0, mallocs: 0 };
  rt.M = new Proxy(real, {
    get(target, key) {
      const v = target[key];
      if (typeof key !== 'string' || !key.startsWith('_') || typeof v !== 'function') return v;
      return (...a) => { n.crossings++; if (key === '_malloc') n.mallocs++; return v(...a); };
    },
  });
  try { await fn(); } finally { rt.M = real; }
  return n;
}

const cases = [];
for (const [build, dir] of [['baseline', resolve(baseline)], ['this', here]]) {
  const pkg = await import(pathToFileURL(join(dir, 'src/js/node.js')).href);
  const { modelHandle } = await import(pathToFileURL(join(dir, 'src/js/model.js')).href);
  for (const preset of ['micro', 'tiny']) {
    for (const kind of ['char', 'hf']) {
      let model;
      if (kind === 'char') model = await pkg.createModel(preset, { threads: 1, text: TEXT });
      else {
        const tok = await pkg.loadTokenizer(HF, { threads: 1 });
        model = await pkg.createModel(preset, { threads: 1, tokenizer: tok });
        tok.dispose();
      }
      const core = modelHandle(model), rt = core.rt, opts = { temperature: 0.8, seed: 7, yieldMs: 1e9 };
      const a = await counted(rt, () => model.generateText(prompt, { ...opts, maxTokens: 20 }));
      const b = await counted(rt, () => model.generateText(prompt, { ...opts, maxTokens: 120 }));
      cases.push({ build, preset, kind, model, times: [],
        crossings: (b.crossings - a.crossings) / 100, mallocs: (b.mallocs - a.mallocs) / 100 });
      if (kind !== 'char') continue;
      // the core's loop: this build's runtime takes the tokenizer's handle (its text), the
      // baseline's does not
      const { tokenizerHandle } = await import(pathToFileURL(join(dir, 'src/js/tokenizer.js')).href);
      for (const text of build === 'this' ? [false, true] : [false]) {
        const sampling = { temperature: 0.8, topK: 0, topP: 1, nVocab: 0, noUnk: 1 };
        const loop = () => {
          const ps = text ? rt.putSampling(sampling, tokenizerHandle(model.tokenizer).handle) : rt.putSampling(sampling);
          try {
            rt.genStart(core.live(), model.tokenizer.encode(prompt), 7);
            for (let i = 0; i < tokens; i++) rt.genNext(core.live(), ps);
          } finally {
            rt.free(ps);
          }
        };
        cases.push({ build, preset, kind: text ? 'core loop, with the text' : 'core loop', loop, times: [] });
      }
    }
  }
}
const opts = { maxTokens: tokens, temperature: 0.8, seed: 7 };
const run = (c) => (c.loop ? c.loop() : c.model.generateText(prompt, opts));
for (const c of cases) await run(c); // warm up
for (let r = 0; r < rounds; r++) {
  for (const c of r % 2 ? [...cases].reverse() : cases) {
    const t0 = cpu();
    await run(c);
    c.times.push(cpu() - t0);
  }
  if (!json) process.stdout.write(`\rround ${r + 1} / ${rounds}`);
}
const rate = (c) => tokens / median(c.times);
const rows = cases.map((c) => {
  const base = cases.find((x) => x.build === 'baseline' && x.preset === c.preset && x.kind === c.kind.replace(', with the text', ''));
  const over = c.build === 'baseline' || !base ? null : rate(c) / rate(base);
  return { build: c.build, preset: c.preset, tokenizer: c.kind, tok_s: rate(c), over_baseline: over,
    crossings_per_token: c.crossings ?? null, mallocs_per_token: c.mallocs ?? null };
});
for (const c of cases) c.model?.dispose();
const started = `${new Date().toISOString()} | ${cpus().length} x ${cpus()[0].model} | load ${loadavg().map((x) => x.toFixed(2)).join(' ')} | Node ${process.version}`;
if (json) {
  console.log(JSON.stringify({ started, rounds, tokens, baseline, rows }, null, 2));
} else {
  console.log(`\n${started}\ngeneration, ${tokens} tokens a round, median of ${rounds} rounds, 1 thread, CPU time; baseline ${baseline}`);
  console.log('| build | preset | tokenizer | tokens/s | over the baseline | crossings / token | mallocs / token |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(`| ${r.build} | ${r.preset} | ${r.tokenizer} | ${r.tok_s.toFixed(0)} | ${r.over_baseline === null ? '' : `${r.over_baseline.toFixed(3)}x`} | ${r.crossings_per_token ?? ''} | ${r.mallocs_per_token ?? ''} |`);
  }
}
process.exit(0);
