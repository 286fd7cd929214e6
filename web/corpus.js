// The text to train on: a bundled novel (fetched from this site's data/ folder), pasted
// text, or a local file; and what the page shows about it: characters, vocabulary size,
// tokens and the train/validation split.

export const NOVELS = {
  pride_and_prejudice: 'Pride and Prejudice',
  emma: 'Emma',
  sense_and_sensibility: 'Sense and Sensibility',
  mansfield_park: 'Mansfield Park',
  persuasion: 'Persuasion',
  northanger_abbey: 'Northanger Abbey',
};

const MAX_BYTES = 100e6; // tokens take 4 bytes a character in the wasm heap, in two threads

export class Corpus {
  constructor() {
    this.source = 'pride_and_prejudice';
    this.text = '';
    this.name = NOVELS.pride_and_prejudice;
    this.fileText = null;
    this.fileName = null;
    this.pasted = '';
    this.cache = new Map(); // novel -> text
    this.charStats = null;
  }

  /** Makes source the current text: a novel key, 'paste' or 'file'. Novels are fetched
   * once; throws an Error in words when one cannot be. */
  async select(source) {
    this.source = source;
    if (NOVELS[source]) {
      let text = this.cache.get(source);
      if (text === undefined) {
        const res = await fetch(`./data/${source}.txt`);
        if (!res.ok) throw new Error(`could not load ${NOVELS[source]} from this site (HTTP ${res.status})`);
        text = await res.text();
        this.cache.set(source, text);
      }
      if (this.source !== source) return; // another choice came first
      this.setText(text, NOVELS[source]);
    } else if (source === 'paste') {
      this.setText(this.pasted, 'your text');
    } else {
      this.setText(this.fileText ?? '', this.fileName ?? 'no file chosen');
    }
  }

  setPasted(text) {
    this.pasted = text;
    if (this.source === 'paste') this.setText(text, 'your text');
  }

  /** Reads a File as UTF-8. */
  async setFile(file) {
    if (file.size > MAX_BYTES) {
      throw new Error(`${file.name} has ${(file.size / 1e6).toFixed(0)} MB; this page trains on texts up to ${MAX_BYTES / 1e6} MB`);
    }
    this.fileText = await file.text();
    this.fileName = file.name;
    if (this.source === 'file') this.setText(this.fileText, file.name);
  }

  setText(text, name) {
    this.text = text;
    this.name = name;
    this.charStats = null;
  }

  /** Code points and distinct code points of the text (computed once per text). */
  chars() {
    if (!this.charStats) {
      const seen = new Set();
      let n = 0;
      for (const ch of this.text) {
        seen.add(ch);
        n++;
      }
      this.charStats = { n, distinct: seen.size };
    }
    return this.charStats;
  }

  /** What the stats panel shows, for a tokenizer choice. BPE token counts are known only
   * once the tokenizer is learned: pass them as bpeTokens when they are. */
  stats({ kind, bpeVocab, valFraction, bpeTokens = null }) {
    const { n, distinct } = this.chars();
    const vocab = kind === 'bpe' ? bpeVocab : distinct + 1; // + <unk>
    const tokens = kind === 'bpe' ? bpeTokens : n;
    const val = tokens === null ? null : Math.floor(tokens * valFraction);
    return { chars: n, distinct, vocab, tokens, train: tokens === null ? null : tokens - val, val };
  }
}
