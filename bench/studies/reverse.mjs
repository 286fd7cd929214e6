#!/usr/bin/env node
// The seq2seq demonstration: an encoder-decoder learns to reverse strings of 3 to 8 letters
// over 'abcdefgh', then decodes 200 held-out strings (never in training) greedily and with
// a beam; prints the loss, the exact-match accuracies, a few translations and how long it
// took. tests/js/seq2seq.test.mjs runs the same setup with a threshold.
//
// Usage: node bench/studies/reverse.mjs [--steps 800] [--beam 4] [--seed 1337]
import { fileURLToPath } from 'node:url';
import { createSeq2Seq } from '../../src/js/node.js';

export const LETTERS = 'abcdefgh';
export const REVERSE_CONFIG = { dModel: 24, dFF: 48, nLayer: 1, nHead: 4, context: 9 };

/** 20000 training pairs and 200 held-out ones (disjoint) from a seeded generator. */
export function reverseData(seed = 7) {
  let s = seed >>> 0;
  const rnd = () => { s = (Math.imul(s, 1103515245) + 12345) >>> 0; return s / 2 ** 32; };
  const word = () => {
    const n = 3 + Math.floor(rnd() * 6);
    let w = '';
    for (let i = 0; i < n; i++) w += LETTERS[Math.floor(rnd() * LETTERS.length)];
    return w;
  };
  const rev = (w) => [...w].reverse().join('');
  const held = new Set();
  while (held.size < 200) held.add(word());
  const train = [];
  while (train.length < 20000) {
    const w = word();
    if (!held.has(w)) train.push([w, rev(w)]);
  }
  return { train, test: [...held].map((w) => [w, rev(w)]) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? Number(process.argv[i + 1]) : fallback;
  };
  const steps = arg('steps', 800), beam = arg('beam', 4), seed = arg('seed', 1337);
  const { train, test } = reverseData();
  const s2s = await createSeq2Seq({ ...REVERSE_CONFIG, seed }, { texts: [LETTERS] });
  console.log(`reverse strings: encoder-decoder, ${s2s.paramCount} parameters, ${steps} steps of 32 pairs`);
  const r = await s2s.train(train, { steps, lr: 5e-3, batchSize: 32, yieldMs: 0, onProgress: (p) => {
    if (p.step % 100 === 0) console.log(`step ${p.step}  loss ${p.loss.toFixed(4)}`);
  } });
  const t0 = performance.now();
  const greedy = await s2s.accuracy(test), wide = await s2s.accuracy(test, { beam });
  const ms = (performance.now() - t0) / (2 * test.length);
  console.log(`trained in ${r.elapsed.toFixed(1)} s; held-out loss ${(await s2s.evaluate(test)).loss.toFixed(4)}`);
  console.log(`held-out exact match (${test.length} strings): greedy ${(100 * greedy).toFixed(1)}%, ` +
    `beam ${beam} ${(100 * wide).toFixed(1)}%  (${ms.toFixed(2)} ms per decode)`);
  for (const w of ['abcdefgh', 'hgfe', 'badcafe']) console.log(`  ${w} -> ${await s2s.translate(w, { beam })}`);
  s2s.dispose();
}
