// A tokenizer handle (wf_tokenizer) over one Runtime.
import { DISPOSE, WfError } from './errors.js';
import { checkKeys, show } from './options.js';
import { CONSTANTS } from './config-table.js';

/** wf_tokenizer_kind's names by value: WF_TOKENIZER_CHAR is 'char' (NONE: null). */
const KINDS = [];
for (const [name, v] of Object.entries(CONSTANTS)) {
  if (name.startsWith('WF_TOKENIZER_')) KINDS[v] = name === 'WF_TOKENIZER_NONE' ? null : name.slice(13).toLowerCase();
}

function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** tok, or a thrown WF_ERR_CONFIG (tok disposed) when it has more ids than V. */
function checkFits(tok, V, what) {
  const n = tok.vocabSize;
  if (n <= V) return tok;
  tok.dispose();
  if (what === 'chars') {
    throw new WfError('WF_ERR_CONFIG', `the text has ${n - 1} distinct characters (+1 unknown) but the model's vocabSize is ${V}; create the model with vocabSize >= ${n} or use a BPE tokenizer`);
  }
  throw new WfError('WF_ERR_CONFIG', `${what} has ${n} tokens but the model's vocabSize is ${V}`);
}

/** The keys of a tokenizer's options (Tokenizer.fromText, createTokenizer, and the
 * tokenizer option of createModel and train as an object). */
export const TOKENIZER_KEYS = Object.freeze(['kind', 'vocabSize']);

/** The options a tokenizer option stands for: a kind ('char', 'bpe') or {kind, vocabSize},
 * whose keys are checked. */
function specOptions(spec) {
  if (typeof spec === 'string') return { kind: spec };
  checkKeys(spec, TOKENIZER_KEYS, 'the tokenizer option');
  return { ...(spec ?? {}) };
}

let handleOf; // Tokenizer's own: the package's modules reach a tokenizer's handle through tokenizerHandle

/** @internal The runtime and wasm handle of a live tokenizer: {rt, handle}. */
export function tokenizerHandle(tok) { return handleOf(tok); }

export class Tokenizer {
  #rt;
  #h;

  static {
    handleOf = (tok) => ({ rt: tok.#rt, handle: tok.#live() });
  }

  /** @internal use Tokenizer.fromText or Tokenizer.load */
  constructor(rt, handle) {
    this.#rt = rt;
    this.#h = handle;
  }

  /** A new tokenizer handle filled by rt.tokenizerFill(kind, data): the Tokenizer, or a
   * throw with nothing left allocated. */
  static #filled(rt, kind, data, what, vocabSize) {
    const tok = new Tokenizer(rt, rt.tokenizerCreate());
    try {
      rt.tokenizerFill(tok.#h, kind, data, what, vocabSize);
    } catch (e) {
      tok.dispose();
      throw e;
    }
    return tok;
  }

  /**
   * A tokenizer learned from text. kind 'char' (default): id 0 is <unk>, then every
   * distinct code point. kind 'bpe': byte-level BPE, ids 0..255 the bytes, then merges
   * until vocabSize tokens (default 512) or until no pair occurs twice; any text
   * round-trips exactly.
   * @example const tok = Tokenizer.fromText(rt, text, { kind: 'bpe', vocabSize: 1024 });
   */
  static fromText(rt, text, opts = {}) {
    checkKeys(opts, TOKENIZER_KEYS, 'the tokenizer options');
    const { kind = 'char', vocabSize = 512 } = opts ?? {};
    if (kind !== 'char' && kind !== 'bpe') throw new WfError('WF_ERR_ARG', `tokenizer kind must be "char" or "bpe", not ${show(kind)}`);
    if (kind === 'bpe' && !Number.isInteger(vocabSize)) throw new WfError('WF_ERR_ARG', `vocabSize must be an integer, not ${show(vocabSize)}`);
    return Tokenizer.#filled(rt, kind, text, 'the text', vocabSize);
  }

  /** A tokenizer from the bytes of a tokenizer file: wasmformer's own (.wft), a Hugging Face
   * tokenizer.json (string or bytes) or llama2.c's tokenizer.bin, told apart by the core from
   * their first bytes. Throws a WfError for a bad file.
   * @example const tok = Tokenizer.load(rt, bytes); */
  static load(rt, bytes) {
    return Tokenizer.#filled(rt, 'file', bytes, 'the tokenizer file');
  }

  /** @internal A copy of tok in runtime rt (through its file bytes: it may live in another
   * module instance). */
  static copy(rt, tok) {
    return Tokenizer.load(rt, tok.save());
  }

  /**
   * @internal The tokenizer a model of vocabulary V trains with, learned from text: spec is
   * undefined or 'char' (char-level), 'bpe' (BPE of V tokens), {kind, vocabSize}, or a
   * Tokenizer, which is copied (the model owns and disposes its own).
   */
  static forModel(rt, text, spec, V) {
    if (spec instanceof Tokenizer) return checkFits(Tokenizer.copy(rt, spec), V, 'the tokenizer');
    const opts = specOptions(spec);
    const kind = opts.kind ?? 'char';
    if (kind === 'bpe') {
      opts.vocabSize ??= V;
      if (opts.vocabSize > V) throw new WfError('WF_ERR_CONFIG', `a BPE vocabulary of ${opts.vocabSize} tokens does not fit the model's vocabSize ${V}`);
    }
    const tok = Tokenizer.fromText(rt, text, { ...opts, kind });
    return checkFits(tok, V, kind === 'char' ? 'chars' : 'the tokenizer');
  }

  /** @internal Throws unless this tokenizer is what spec (as for forModel) asks for. */
  assertMatches(spec) {
    const same = spec instanceof Tokenizer
      ? sameBytes(spec.save(), this.save())
      : (specOptions(spec).kind ?? 'char') === this.kind;
    if (!same) {
      throw new WfError('WF_ERR_STATE', `the model already has a ${this.kind} tokenizer of ${this.vocabSize} tokens; the tokenizer option only applies to a model without one`);
    }
  }

  #live() {
    if (!this.#h) throw new WfError('WF_ERR_DISPOSED', 'this tokenizer has been disposed');
    return this.#h;
  }

  /** 'char', 'bpe', 'hf' (a Hugging Face tokenizer.json) or 'llama2c' (a tokenizer.bin). */
  get kind() { return KINDS[this.#rt.tokenizerInfo(this.#live()).kind]; }

  /** The id a prompt starts with (llama2.c's BOS, 1; a tokenizer.json's template's leading
   * special token, such as Llama's <s>), or null. generate() puts it first. */
  get bos() {
    const b = this.#rt.tokenizerInfo(this.#live()).bos;
    return b >= 0 ? b : null;
  }

  /** Number of ids, <unk> and special tokens included. */
  get vocabSize() { return this.#rt.tokenizerInfo(this.#live()).vocabSize; }

  /** Most bytes one id decodes to (4 for char, the longest token for BPE). */
  get maxBytes() { return this.#rt.tokenizerInfo(this.#live()).maxBytes; }

  /** The tokenizer as bytes (a tokenizer file, docs/FORMATS.md).
   * @example writeFileSync('tok.wft', tokenizer.save()); */
  save() { return this.#rt.tokenizerSave(this.#live()); }

  /** Text (a string, as UTF-8, or raw bytes as a Uint8Array) to token ids (an Int32Array). */
  encode(text) { return this.#rt.tokenizerEncode(this.#live(), text); }

  /** The tokenizer as the text of a Hugging Face tokenizer.json: a BPE one that the Hugging
   * Face libraries encode alike (docs/FORMATS.md), or the file an 'hf' one came from. Char and
   * llama2.c tokenizers have none (WF_ERR_UNSUPPORTED): save() keeps them.
   * @example writeFileSync('tokenizer.json', tokenizer.saveJSON()); */
  saveJSON() { return this.#rt.tokenizerSaveJson(this.#live()); }

  /** Token ids to UTF-8 bytes (a Uint8Array); see decode for text. */
  decodeBytes(ids) { return this.#rt.tokenizerDecode(this.#live(), ids); }

  /** Token ids to text (a byte order mark at its start is kept). */
  decode(ids) {
    return new TextDecoder('utf-8', { ignoreBOM: true }).decode(this.decodeBytes(ids));
  }

  /** Frees the tokenizer's wasm memory; using it afterwards throws WF_ERR_DISPOSED. */
  dispose() {
    if (this.#h) this.#rt.tokenizerFree(this.#h);
    this.#h = 0;
  }

  [DISPOSE]() { this.dispose(); }
}
