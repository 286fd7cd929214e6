// A tokenizer handle (wf_tokenizer) over one Runtime.
import { WfError } from './runtime.js';

const KINDS = [null, 'char', 'bpe']; // wf_tokenizer_kind

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

/** A new tokenizer handle filled by fill(handle, ptr, length) from data's bytes in the heap
 * (a C call returning a status; data a string too when `text`): the Tokenizer, or a throw
 * with nothing left allocated. */
function filled(rt, data, what, fill, text = true) {
  const h = rt.M._wf_tokenizer_create() >>> 0;
  if (!h) throw new WfError('WF_ERR_NOMEM', 'could not allocate a tokenizer');
  const tok = new Tokenizer(rt, h);
  try {
    const [p, n] = rt.putBytes(data, what, text);
    try {
      tok.call(fill(h, p, n));
    } finally {
      rt.free(p);
    }
  } catch (e) {
    tok.dispose();
    throw e;
  }
  return tok;
}

export class Tokenizer {
  /** @internal use Tokenizer.fromText or Tokenizer.load */
  constructor(rt, handle) {
    this.rt = rt;
    this.handle = handle;
  }

  /**
   * A tokenizer learned from text. kind 'char' (default): id 0 is <unk>, then every
   * distinct code point. kind 'bpe': byte-level BPE, ids 0..255 the bytes, then merges
   * until vocabSize tokens (default 512) or until no pair occurs twice; any text
   * round-trips exactly.
   * @example const tok = Tokenizer.fromText(rt, text, { kind: 'bpe', vocabSize: 1024 });
   */
  static fromText(rt, text, { kind = 'char', vocabSize = 512 } = {}) {
    if (kind !== 'char' && kind !== 'bpe') throw new WfError('WF_ERR_ARG', `tokenizer kind must be 'char' or 'bpe', not ${kind}`);
    if (kind === 'bpe' && !Number.isInteger(vocabSize)) throw new WfError('WF_ERR_ARG', `vocabSize must be an integer, not ${vocabSize}`);
    return filled(rt, text, 'the text', (h, p, n) => (kind === 'bpe'
      ? rt.M._wf_tokenizer_train_bpe(h, p, n, vocabSize) : rt.M._wf_tokenizer_train_char(h, p, n)));
  }

  /**
   * The tokenizer a model of vocabulary V trains with, learned from text: spec is
   * undefined or 'char' (char-level), 'bpe' (BPE of V tokens), {kind, vocabSize}, or a
   * Tokenizer, which is copied (the model owns and disposes its own).
   */
  static forModel(rt, text, spec, V) {
    if (spec instanceof Tokenizer) {
      spec.call(0);
      return checkFits(Tokenizer.load(rt, spec.save()), V, 'the tokenizer');
    }
    const opts = typeof spec === 'string' ? { kind: spec } : { ...(spec ?? {}) };
    const kind = opts.kind ?? 'char';
    if (kind === 'bpe') {
      opts.vocabSize ??= V;
      if (opts.vocabSize > V) throw new WfError('WF_ERR_CONFIG', `a BPE vocabulary of ${opts.vocabSize} tokens does not fit the model's vocabSize ${V}`);
    }
    const tok = Tokenizer.fromText(rt, text, { ...opts, kind });
    return checkFits(tok, V, kind === 'char' ? 'chars' : 'the tokenizer');
  }

  /** Throws unless this tokenizer is what spec (as for forModel) asks for. */
  assertMatches(spec) {
    const same = spec instanceof Tokenizer
      ? sameBytes(spec.save(), this.save())
      : (typeof spec === 'string' ? spec : spec.kind ?? 'char') === this.kind;
    if (!same) {
      throw new WfError('WF_ERR_STATE', `the model already has a ${this.kind} tokenizer of ${this.vocabSize} tokens; the tokenizer option only applies to a model without one`);
    }
  }

  call(status) {
    if (!this.handle) throw new WfError('WF_ERR_DISPOSED', 'this tokenizer has been disposed');
    if (status !== 0) this.rt.check(status, this.rt.cstring(this.rt.M._wf_tokenizer_error(this.handle)));
  }

  /** 'char' or 'bpe'. */
  get kind() {
    this.call(0);
    return KINDS[this.rt.tokenizerInfo(this.handle).kind];
  }

  /** The tokenizer as bytes (a tokenizer file, docs/FORMATS.md).
   * @example writeFileSync('tok.wft', tokenizer.save()); */
  save() {
    this.call(0);
    const rt = this.rt;
    return rt.withBuffer(8, (p) => {
      rt.u32[p >>> 2] = 0;
      const status = rt.M._wf_tokenizer_save(this.handle, p, p + 4);
      const ptr = rt.u32[p >>> 2] >>> 0, n = rt.i32[(p >>> 2) + 1];
      try {
        this.call(status);
        return rt.u8.slice(ptr, ptr + n);
      } finally {
        rt.M._wf_buffer_free(ptr);
      }
    });
  }

  /** A tokenizer from the bytes of a tokenizer file; throws a WfError for a bad file.
   * @example const tok = Tokenizer.load(rt, bytes); */
  static load(rt, bytes) {
    return filled(rt, bytes, 'the tokenizer file', (h, p, n) => rt.M._wf_tokenizer_load(h, p, n), false);
  }

  get vocabSize() {
    this.call(0);
    return this.rt.tokenizerInfo(this.handle).vocabSize;
  }

  /** Most bytes one id decodes to (4 for char, the longest token for BPE). */
  get maxBytes() {
    this.call(0);
    return this.rt.tokenizerInfo(this.handle).maxBytes;
  }

  /** Text (a string, as UTF-8, or raw bytes as a Uint8Array) to token ids (an Int32Array). */
  encode(text) {
    this.call(0);
    const rt = this.rt;
    const [p, n] = rt.putBytes(text, 'the text');
    try {
      return rt.withBuffer(n * 4 + 4, (out) => rt.withBuffer(4, (count) => {
        this.call(rt.M._wf_tokenizer_encode(this.handle, p, n, out, n, count));
        const len = rt.i32[count >>> 2];
        return rt.i32.slice(out >>> 2, (out >>> 2) + len);
      }));
    } finally {
      rt.free(p);
    }
  }

  /** Token ids to UTF-8 bytes (a Uint8Array); see decode for text. */
  decodeBytes(ids) {
    this.call(0);
    const rt = this.rt;
    const p = rt.putInt32(ids);
    try {
      const cap = ids.length * this.maxBytes;
      const at = (cap + 3) & ~3; // the byte count, 4-byte aligned after the text
      return rt.withBuffer(at + 4, (out) => {
        this.call(rt.M._wf_tokenizer_decode(this.handle, p, ids.length, out, cap, out + at));
        const len = rt.i32[(out + at) >>> 2];
        return rt.u8.slice(out, out + len);
      });
    } finally {
      rt.free(p);
    }
  }

  /** Token ids to text. */
  decode(ids) {
    return new TextDecoder().decode(this.decodeBytes(ids));
  }

  dispose() {
    if (this.handle) this.rt.M._wf_tokenizer_free(this.handle);
    this.handle = 0;
  }
}
