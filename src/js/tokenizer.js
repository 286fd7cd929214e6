// A tokenizer handle (wf_tokenizer) over one Runtime.
import { WfError } from './runtime.js';

const KINDS = [null, 'char', 'bpe']; // wf_tokenizer_kind

export class Tokenizer {
  /** @internal use Tokenizer.fromText or Tokenizer.load */
  constructor(rt, handle) {
    this.rt = rt;
    this.handle = handle;
  }

  /** A char-level vocabulary from text: id 0 is <unk>, then every distinct code point. */
  static fromText(rt, text) {
    const h = rt.M._wf_tokenizer_create() >>> 0;
    if (!h) throw new WfError('WF_ERR_NOMEM', 'could not allocate a tokenizer');
    const tok = new Tokenizer(rt, h);
    try {
      const [p, n] = rt.putUtf8(text);
      try { tok.call(rt.M._wf_tokenizer_train_char(h, p, n)); } finally { rt.free(p); }
    } catch (e) {
      tok.dispose();
      throw e;
    }
    return tok;
  }

  call(status) {
    if (!this.handle) throw new WfError('WF_ERR_DISPOSED', 'this tokenizer has been disposed');
    if (status !== 0) this.rt.check(status, this.rt.cstring(this.rt.M._wf_tokenizer_error(this.handle)));
  }

  /** 'char' or 'bpe'. */
  get kind() {
    this.call(0);
    return KINDS[this.rt.M._wf_tokenizer_get_kind(this.handle)];
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
    const h = rt.M._wf_tokenizer_create() >>> 0;
    if (!h) throw new WfError('WF_ERR_NOMEM', 'could not allocate a tokenizer');
    const tok = new Tokenizer(rt, h);
    try {
      const data = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
      const p = rt.alloc(data.length);
      try {
        rt.u8.set(data, p);
        tok.call(rt.M._wf_tokenizer_load(h, p, data.length));
      } finally {
        rt.free(p);
      }
    } catch (e) {
      tok.dispose();
      throw e;
    }
    return tok;
  }

  get vocabSize() {
    this.call(0);
    return this.rt.M._wf_tokenizer_vocab_size(this.handle);
  }

  /** UTF-8 text to token ids (an Int32Array). */
  encode(text) {
    this.call(0);
    const rt = this.rt;
    const [p, n] = rt.putUtf8(text);
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
      const cap = ids.length * 4;
      return rt.withBuffer(cap + 4, (out) => {
        this.call(rt.M._wf_tokenizer_decode(this.handle, p, ids.length, out, cap, out + cap));
        const len = rt.i32[(out + cap) >>> 2];
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
