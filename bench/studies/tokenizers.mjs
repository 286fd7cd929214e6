#!/usr/bin/env node
// Encoding speed of the tokenizer.json and tokenizer.bin fixtures (tests/fixtures/tokenizers/)
// and of wasmformer's BPE, in the wasm build, beside @huggingface/tokenizers (the JavaScript
// port, a devDependency) on the same text in the same run. A SentencePiece-style tokenizer
// has no pre-tokenizer: the whole text is one word, which is what the heap merge is for.
// Usage: node bench/studies/tokenizers.mjs [bytes of Pride and Prejudice, default 200000]; RUNS=3.
import { readFileSync } from 'node:fs';
import { Tokenizer as Reference } from '@huggingface/tokenizers';
import { createTokenizer, loadTokenizer } from '../../src/js/node.js';

const bytes = Number(process.argv[2] ?? 200_000);
const runs = Number(process.env.RUNS ?? 3);
const text = readFileSync(new URL('../../data/austen/pride_and_prejudice.txt', import.meta.url), 'utf8').slice(0, bytes);
const fixture = (name) => readFileSync(new URL(`../../tests/fixtures/tokenizers/${name}`, import.meta.url));
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const time = (fn) => {
  const ms = [];
  let out;
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    out = fn();
    ms.push(performance.now() - t0);
  }
  return { ms: median(ms), out };
};

const n = Buffer.byteLength(text);
console.log(`encoding the first ${n} bytes of Pride and Prejudice, median of ${runs} runs (the reference: one run)`);
console.log('tokenizer                 ids      wasmformer (wasm)   @huggingface/tokenizers   same ids');
const row = (name, ids, ours, ref) => console.log(`${name.padEnd(24)}${String(ids).padStart(7)}   ${ours.toFixed(1).padStart(9)} ms ${(n / ours / 1e3).toFixed(1).padStart(5)} MB/s   ${ref === null ? '' : `${ref.ms.toFixed(0).padStart(9)} ms ${(n / ref.ms / 1e3).toFixed(2).padStart(6)} MB/s`}${ref === null ? '' : `   ${ref.same}`}`);

for (const name of ['gpt2.json', 'smollm.json', 'llama.json', 'llama_meta.json']) {
  const tok = await loadTokenizer(fixture(name));
  const ours = time(() => tok.encode(text));
  const reference = new Reference(JSON.parse(fixture(name).toString()), {});
  const t0 = performance.now();
  const refIds = reference.encode(text, { add_special_tokens: false }).ids;
  const ref = { ms: performance.now() - t0, same: refIds.length === ours.out.length && refIds.every((v, i) => v === ours.out[i]) };
  row(name, ours.out.length, ours.ms, ref);
  tok.dispose();
}
const l2c = await loadTokenizer(fixture('llama2c_tok.bin'));
const l2cTime = time(() => l2c.encode(text));
row('llama2c_tok.bin', l2cTime.out.length, l2cTime.ms, null);
const bpe = await createTokenizer(text, { kind: 'bpe', vocabSize: 4096 });
const bpeTime = time(() => bpe.encode(text));
const bpeRef = new Reference(JSON.parse(bpe.saveJSON()), {});
const t0 = performance.now();
const bpeIds = bpeRef.encode(text, { add_special_tokens: false }).ids;
row('wasmformer BPE (4096)', bpeTime.out.length, bpeTime.ms,
  { ms: performance.now() - t0, same: bpeIds.length === bpeTime.out.length && bpeIds.every((v, i) => v === bpeTime.out[i]) });
