// Decoding speed of this checkout's build against a baseline checkout's (issue 29's kernels):
// the SmolLM-135M shape's GGUF files of bench/wllama.mjs (random weights; float32, Q8_0, Q4_0),
// each loaded by both builds in one Node process, then a 16-token prompt and greedy tokens,
// the builds taking turns round after round (order swapped each round). Reported per file:
// decode tokens/s from the process's CPU time on one thread (steadier than the wall clock on
// a shared machine), from the wall clock with --threads 2 or more (the CPU time would add the
// threads' up), medians of the rounds, the ratio, and whether both builds drew the same tokens.
// Node 22 and later pick the relaxed-SIMD build, Node 20 simd128 (--simd chooses).
//   node bench/studies/decode-ab.mjs --baseline DIR [--types f32,q8_0,q4_0] [--rounds 4] [--tokens 24]
//                                    [--simd relaxed|simd128] [--threads 1]
// DIR is a checkout with its dist/ built (./build.sh). The files are made on first use.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const value = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const baseline = value('baseline', null);
if (!baseline) {
  console.error('usage: node bench/studies/decode-ab.mjs --baseline DIR [--types f32,q8_0,q4_0] [--rounds 4] [--tokens 24] [--simd relaxed|simd128]');
  process.exit(2);
}
const types = value('types', 'f32,q8_0,q4_0').split(','), rounds = Number(value('rounds', 4));
const tokens = Number(value('tokens', 24)), simd = value('simd', 'auto'), threads = Number(value('threads', 1));
const DIR = join(here, 'bench', 'models', 'smollm-135m');
const missing = types.filter((t) => !existsSync(join(DIR, `${t}.gguf`)));
if (missing.length && spawnSync(process.execPath, [join(here, 'bench', 'infer-memory.mjs'), '--role', 'make', '--rows',
  missing.map((t) => `gguf-${t}`).join(',')], { stdio: 'inherit' }).status !== 0) process.exit(1);

const clockMs = threads > 1 ? () => performance.now() : () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const median = (a) => { const s = [...a].sort((x, y) => x - y), h = s.length >> 1; return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2; };
const builds = {};
for (const [name, dir] of [['baseline', resolve(baseline)], ['this', here]]) {
  builds[name] = {
    api: await import(pathToFileURL(join(dir, 'src/js/node.js')).href),
    modelHandle: (await import(pathToFileURL(join(dir, 'src/js/model.js')).href)).modelHandle,
  };
}
let seed = 7;
const prompt = Array.from({ length: 16 }, () => { seed = (seed * 1103515245 + 12345) >>> 0; return (seed >>> 8) % 49152; });
console.log(`decode tokens/s (${threads > 1 ? 'wall clock' : 'CPU time'}), ${threads} thread(s), ${tokens} tokens after a 16-token prompt, medians of ${rounds} rounds; ` +
  `Node ${process.version}; baseline ${resolve(baseline)}`);
console.log('| file | kernels | baseline | this | this / baseline | same tokens |');
console.log('|---|---|---:|---:|---:|---|');
for (const t of types) {
  const bytes = readFileSync(join(DIR, `${t}.gguf`));
  const models = {}, rates = { baseline: [], this: [] }, drawn = {};
  for (const b of ['baseline', 'this']) models[b] = await builds[b].api.loadModel(new Uint8Array(bytes), { threads, simd });
  for (let r = 0; r < rounds; r++) {
    for (const b of r % 2 ? ['this', 'baseline'] : ['baseline', 'this']) {
      const core = builds[b].modelHandle(models[b]), rt = core.rt, h = core.live();
      const ps = rt.putSampling({ temperature: 0, topK: 0, topP: 1, nVocab: 0, noUnk: 0 });
      rt.genStart(h, prompt, 1);
      const out = [], c0 = clockMs();
      for (let i = 0; i < tokens; i++) out.push(rt.genNext(h, ps));
      rates[b].push(tokens / ((clockMs() - c0) / 1000));
      drawn[b] = out.join(',');
      rt.free(ps);
    }
  }
  const a = median(rates.baseline), b = median(rates.this);
  console.log(`| ${t} | ${models.this.info().simd} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${(b / a).toFixed(2)}x | ${drawn.baseline === drawn.this ? 'yes' : 'no'} |`);
  for (const m of Object.values(models)) m.dispose();
}
