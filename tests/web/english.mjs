// Whether a sample reads as English, for the page test and bench/first-click.mjs: how many of
// its words (of two letters or more: "a" and "I" are too easy to hit) are words of Pride and
// Prejudice, counted from the bundled text (the 2,970 that occur at least 3 times).
// `node bench/studies/english-measure.mjs 1` (and 2): micro samples (120 characters, temperature
// 0.8, seeds 1-6, model seeds 1 and 2):
// at steps 0-200 at most 0.42 of their words are known; at 1,600 and 2,800 steps (the default
// minute makes 1,600-2,800) at least 0.68. Counting only the novel's 200 most frequent words,
// as this did first, let a good sample fail ("since", "entreat", "conversation" were unknown).
import { readFileSync } from 'node:fs';

const novel = readFileSync(new URL('../../data/austen/pride_and_prejudice.txt', import.meta.url), 'utf8').toLowerCase();
const counts = new Map();
for (const w of novel.match(/[a-z]{2,}/g)) counts.set(w, (counts.get(w) ?? 0) + 1);
export const VOCABULARY = new Set([...counts].filter(([, n]) => n >= 3).map(([w]) => w));

/** The words of a sample (letters only, lower case, two or more letters), how many are words
 * of the novel, and how many different ones. */
export function english(sample) {
  const words = sample.toLowerCase().match(/[a-z]{2,}/g) ?? [];
  const known = words.filter((w) => VOCABULARY.has(w));
  return { words: words.length, known: known.length, distinct: new Set(known).size };
}
