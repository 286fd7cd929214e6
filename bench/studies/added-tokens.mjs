// Issue 25's added-token file through the package (loadTokenizer, encode), in one process:
// 2,000 added tokens of 994 bytes that share a 990-byte prefix, and texts of units of 495
// x's and one whole token (the kind the old per-position scan of every token made quadratic).
// With --baseline DIR, a built checkout's package (its src/js/ and dist/) takes the same
// turns, alternating with this build's round after round: its load and encode times, and
// this build's over them. Wall clock of the call, the median of the rounds; wasm heap in use
// after the load (the tokenizer's tables), its growth over the empty module.
//   node bench/studies/added-tokens.mjs [--baseline DIR] [--rounds N] [--chars 4000,16000]
// e.g. against the commit before the matcher (docs/FORMATS.md):
//   mkdir /tmp/base && git archive 6655a24 | tar -x -C /tmp/base && (cd /tmp/base && ./build.sh) &&
//   node bench/studies/added-tokens.mjs --baseline /tmp/base
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const args = process.argv.slice(2);
const value = (name, def) => (args.includes(name) ? args.splice(args.indexOf(name), 2)[1] : def);
const baseline = value('--baseline', null);
const rounds = Number(value('--rounds', '5'));
const sizes = value('--chars', '4000,16000').split(',').map(Number);
if (args.length || !(rounds > 0) || !sizes.every((n) => n > 0)) {
  console.error('usage: node bench/studies/added-tokens.mjs [--baseline DIR] [--rounds N] [--chars 4000,16000]');
  process.exit(2);
}

const added = Array.from({ length: 2000 }, (_, i) => ({ id: 1 + i, content: `${'x'.repeat(990)}${String(i).padStart(4, '0')}`, special: true }));
const file = new TextEncoder().encode(JSON.stringify({ model: { type: 'BPE', vocab: { x: 0 }, merges: [] }, added_tokens: added }));
const textOf = (chars) => {
  let t = '';
  for (let j = 0; t.length < chars; j++) t += `${'x'.repeat(495)}${added[j % 2000].content}`;
  return t.slice(0, chars);
};
const texts = sizes.map(textOf);

const builds = [];
for (const [name, dir] of [...(baseline ? [['baseline', resolve(baseline)]] : []), ['this', here]]) {
  const api = await import(pathToFileURL(`${dir}/src/js/node.js`).href);
  const rt = await api.load({ threads: 1, simd: 'simd128' });
  builds.push({ name, api, rt, empty: rt.heapInUse(), load: [], heap: 0, encode: sizes.map(() => []), ids: null });
}

const ms = (f) => {
  const t0 = performance.now();
  const r = f();
  return [performance.now() - t0, r];
};
for (let r = 0; r < rounds; r++) {
  for (const b of r % 2 ? [...builds].reverse() : builds) {
    const t0 = performance.now();
    const tok = await b.api.loadTokenizer(file, { threads: 1, simd: 'simd128' });
    b.load.push(performance.now() - t0);
    b.heap = b.rt.heapInUse() - b.empty;
    texts.forEach((text, k) => {
      const [t, ids] = ms(() => tok.encode(text));
      b.encode[k].push(t);
      if (k === texts.length - 1) b.ids = ids.length;
    });
    tok.dispose();
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const f = (x) => (x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toFixed(3));
console.log(`added tokens: ${file.length} bytes of tokenizer.json, ${rounds} rounds, median ms (wasm, one thread, simd128)`);
for (const b of builds) {
  console.log(`${b.name.padEnd(9)} load ${f(median(b.load)).padStart(7)} ms, heap ${(b.heap / 1e6).toFixed(1)} MB;`
    + sizes.map((n, k) => ` encode ${n} chars ${f(median(b.encode[k]))} ms`).join(';') + ` (${b.ids} ids)`);
}
if (builds.length === 2) {
  const [a, b] = builds;
  console.log(`this / baseline: load ${(median(b.load) / median(a.load)).toFixed(2)}x, heap ${(b.heap / a.heap).toFixed(2)}x;`
    + sizes.map((n, k) => ` encode ${n} chars ${(median(b.encode[k]) / median(a.encode[k])).toFixed(4)}x`).join(';'));
}
