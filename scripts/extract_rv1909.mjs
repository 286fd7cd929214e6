#!/usr/bin/env node
// Writes data/rv1909/rv1909.txt: the narrative books from Genesis to 1 Samuel of the Spanish
// Reina-Valera Bible of 1909 (public domain), read from Debian's package sword-text-sparv
// through SWORD's command-line reader. A text in another language than the bundled novels,
// for checking that training recipes are not tuned to English (bench/ttq/RESULTS.md).
// Each book is its title, then one paragraph per chapter (its verses joined, the verse
// references and a few stray Strong's numbers dropped), wrapped at 72 columns like the bundled novels.
//
//   apt-get install diatheke sword-text-sparv
//   node scripts/extract_rv1909.mjs data/rv1909
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const MODULE = 'spaRV1909eb';
// SWORD's (English) book names, and their titles in this Bible
const BOOKS = [
  ['Genesis', 'GÉNESIS'], ['Exodus', 'ÉXODO'], ['Joshua', 'JOSUÉ'], ['Judges', 'JUECES'],
  ['Ruth', 'RUTH'], ['I Samuel', 'PRIMERO DE SAMUEL'],
];

/** Words of a paragraph on lines of at most width characters (code points). */
function wrap(text, width = 72) {
  const lines = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && [...line].length + 1 + [...word].length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines.join('\n');
}

const out = process.argv[2];
if (!out) {
  console.error('usage: node scripts/extract_rv1909.mjs OUT_DIR');
  process.exit(2);
}
const parts = [];
for (const [book, title] of BOOKS) {
  const raw = execFileSync('diatheke', ['-b', MODULE, '-f', 'plain', '-k', book], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const chapters = new Map(); // chapter -> verses
  for (const line of raw.split('\n')) {
    const m = /^(?:I+ )?[A-Za-z ]+ (\d+):(\d+): (.*)$/.exec(line);
    if (!m) continue; // the module's name after the last verse, blank lines
    // a few Strong's numbers (<H0430>) are left in the module's plain text: dropped
    const verse = m[3].replace(/\s*<[GH]\d+[a-z]?>/g, '').trim();
    if (!chapters.has(m[1])) chapters.set(m[1], []);
    if (verse) chapters.get(m[1]).push(verse);
  }
  if (!chapters.size) throw new Error(`${book}: diatheke gave no verses (is sword-text-sparv installed?)`);
  parts.push(`${title}\n\n${[...chapters.values()].map((v) => wrap(v.join(' '))).join('\n\n')}`);
}
mkdirSync(out, { recursive: true });
const text = `${parts.join('\n\n\n')}\n`;
writeFileSync(join(out, 'rv1909.txt'), text);
console.log(`${join(out, 'rv1909.txt')}: ${Buffer.byteLength(text)} bytes, ${[...text].length} characters, ${text.split('\n').length - 1} lines`);
