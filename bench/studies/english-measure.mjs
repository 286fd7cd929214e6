// How tests/web/english.mjs separates a model that writes words from one that does not: a micro
// model trained on Pride and Prejudice (as the page's default minute trains it), sampled as the
// page samples (120 characters, temperature 0.8) with seeds 1-6 at steps 0 to 2,800; for each
// sample the share of its words that are words of the novel, and how many different ones.
//   node bench/studies/english-measure.mjs [model seed, 1]      (about a minute on 2 threads)
import { readFileSync } from 'node:fs';
import { createModel } from '../../src/js/node.js';
import { english } from '../../tests/web/english.mjs';

const text = readFileSync(new URL('../../data/austen/pride_and_prejudice.txt', import.meta.url), 'utf8');
const seed = Number(process.argv[2] ?? 1);
const model = await createModel({ preset: 'micro', seed }, { text });
model.startRun(text, { steps: 2800 });
console.log(`model seed ${seed}; per sample seed 1-6: known share / distinct known words`);
let done = 0;
for (const at of [0, 50, 100, 200, 400, 800, 1600, 2800]) {
  if (at > done) { await model.continueRun({ steps: at - done }); done = at; }
  const row = [];
  for (let s = 1; s <= 6; s++) {
    const e = english(await model.generateText('', { maxTokens: 120, temperature: 0.8, seed: s }));
    row.push(`${(e.known / Math.max(1, e.words)).toFixed(2)}/${e.distinct}`.padStart(8));
  }
  console.log(`step ${String(at).padStart(5)} ${row.join(' ')}`);
}
