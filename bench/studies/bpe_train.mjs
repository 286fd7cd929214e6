#!/usr/bin/env node
// Byte-level BPE on a novel: training and encoding time in wasm (through the JS API) and
// natively (bench_bpe_train), in the same run, median of RUNS runs each.
// Usage: node bench/studies/bpe_train.mjs [file] (default: Pride and Prejudice); RUNS=5.
// Needs the native build (cmake --build build/native) and the wasm build (./build.sh).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { load } from '../../src/js/node.js';
import { Tokenizer } from '../../src/js/tokenizer.js';

const file = process.argv[2] ?? new URL('../../data/austen/pride_and_prejudice.txt', import.meta.url).pathname;
const runs = Number(process.env.RUNS ?? 5);
const NATIVE = 'build/native/bench_bpe_train';
const text = readFileSync(file, 'utf8');
const bytes = Buffer.byteLength(text);
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const rt = await load();
const native = new Map();
if (existsSync(NATIVE)) {
  for (const line of execFileSync(NATIVE, [file, String(runs)], { encoding: 'utf8' }).trim().split('\n')) {
    const [vocab, train, encode, tokens] = line.split(' ').map(Number);
    native.set(vocab, { train, encode, tokens });
  }
} else {
  console.log(`(${NATIVE} not built: wasm only)`);
}
console.log(`BPE on ${file.split('/').pop()} (${bytes} bytes), median of ${runs} runs`);
console.log('vocab   wasm train   wasm encode   native train   native encode   wasm/native train   tokens/byte');
for (const vocab of [512, 1024, 2048, 4096, 8192]) {
  const train = [], encode = [];
  let n = 0;
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    const tok = Tokenizer.fromText(rt, text, { kind: 'bpe', vocabSize: vocab });
    const t1 = performance.now();
    n = tok.encode(text).length;
    encode.push(performance.now() - t1);
    train.push(t1 - t0);
    tok.dispose();
  }
  const nat = native.get(vocab);
  if (nat && nat.tokens !== n) throw new Error(`wasm and native disagree at vocab ${vocab}: ${n} vs ${nat.tokens} tokens`);
  const f = (x) => (x === undefined ? '-' : `${x.toFixed(1)} ms`).padStart(11);
  console.log(`${String(vocab).padEnd(5)} ${f(median(train))}  ${f(median(encode))}   ${f(nat?.train)}    ${f(nat?.encode)}     ${
    nat ? (median(train) / nat.train).toFixed(2).padStart(10) : '-'.padStart(10)}          ${(n / bytes).toFixed(3)}`);
}
