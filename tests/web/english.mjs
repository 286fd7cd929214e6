// Whether a sample reads as English, for the page test and bench/studies/first-click.mjs: how many of
// its words are among the 200 most frequent words of Pride and Prejudice (of two letters or
// more: "a" and "I" are too easy to hit), counted from the bundled text. Gibberish hits a few
// short ones ("as", "he", "an"); text a reader recognises is mostly made of them.
import { readFileSync } from 'node:fs';

const novel = readFileSync(new URL('../../data/austen/pride_and_prejudice.txt', import.meta.url), 'utf8').toLowerCase();
const counts = new Map();
for (const w of novel.match(/[a-z]{2,}/g)) counts.set(w, (counts.get(w) ?? 0) + 1);
export const COMMON = new Set([...counts].sort((a, b) => b[1] - a[1]).slice(0, 200).map(([w]) => w));

/** The words of a sample (letters only, lower case), how many are common words of the
 * novel, and how many different common words. */
export function english(sample) {
  const words = sample.toLowerCase().match(/[a-z]+/g) ?? [];
  const known = words.filter((w) => COMMON.has(w));
  return { words: words.length, known: known.length, distinct: new Set(known).size };
}
