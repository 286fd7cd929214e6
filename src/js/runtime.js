// The C/JS boundary: one instance of the wasm module, its heap, its structs and its
// status codes. Everything above this file speaks JavaScript values; nothing below it
// knows about models. Heap views are re-read on every access because memory growth
// replaces them.

/** Names of wf_status values, by number (include/wasmformer.h). */
export const STATUS = ['WF_OK', 'WF_ERR_ARG', 'WF_ERR_CONFIG', 'WF_ERR_UNSUPPORTED', 'WF_ERR_NOMEM',
  'WF_ERR_TOKEN', 'WF_ERR_NUMERIC', 'WF_ERR_STATE', 'WF_ERR_FORMAT', 'WF_ERR_THREADS'];

/** An error from wasmformer: `code` is a status name such as 'WF_ERR_CONFIG' (or one of the
 * JavaScript side's: 'WF_ERR_DISPOSED', 'WF_ERR_BUSY', 'WF_ERR_LOAD', 'WF_ERR_WORKER');
 * `message` is the core's message. */
export class WfError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'WfError';
    this.code = code;
  }
}

/** The error a cancelled operation throws: a DOMException named 'AbortError'. */
export function abortError(signal) {
  const reason = signal?.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  return new DOMException(typeof reason === 'string' ? reason : 'The operation was aborted', 'AbortError');
}

// wf_config: 13 int32 fields, a float, a uint32, then the appended int32, float, int32
// (all 4 bytes, in this order).
export const CONFIG_FIELDS = ['arch', 'norm', 'block', 'activation', 'positions', 'tiedHead', 'bias',
  'vocabSize', 'context', 'nLayer', 'nHead', 'dModel', 'dFF', 'normEps', 'seed', 'nEncLayer', 'dropout', 'maxBeam'];
const CONFIG_FLOAT = new Set(['normEps', 'dropout']);
export const CONFIG_BYTES = CONFIG_FIELDS.length * 4;
// wf_optim: lr, beta1, beta2, eps, weight_decay (float), warmup, decay_steps (int32),
// min_lr_ratio, grad_clip (float), start (int32).
export const OPTIM_FIELDS = ['lr', 'beta1', 'beta2', 'eps', 'weightDecay', 'warmup', 'decaySteps',
  'minLrRatio', 'gradClip', 'start'];
const OPTIM_INT = new Set(['warmup', 'decaySteps', 'start']);
const MEMORY_FIELDS = ['params', 'grads', 'optimizer', 'activations', 'inference', 'total', 'count'];
export const MEMORY_BYTES = MEMORY_FIELDS.length * 8; // sizeof(wf_memory): doubles only
// wf_model_info: a wf_memory, then n_tensors, step (int32), lr (float), threads (int32).
export const MODEL_INFO_BYTES = MEMORY_BYTES + 16;
// The wasm memory's ceiling (build.sh: -sMAXIMUM_MEMORY=4GB). The core refuses a model or
// a batch that needs more than 95% of it (address_limit in model.c).
export const MEMORY_LIMIT = 4294967296;
// The largest buffer alloc() asks malloc for: below the 32-bit size_t of wasm32 with room for
// malloc's own header and alignment.
const MAX_ALLOC = MEMORY_LIMIT - 64;

export class Runtime {
  /** @param {object} M an instantiated Emscripten module */
  constructor(M) {
    this.M = M;
    this.encoder = new TextEncoder();
    // the info getters' struct, allocated once: reading a model's step or a tokenizer's
    // size never allocates, so it cannot fail halfway through a call
    this.infoBuffer = M._malloc(MODEL_INFO_BYTES) >>> 0;
    if (!this.infoBuffer) throw new WfError('WF_ERR_NOMEM', 'could not allocate the runtime\'s info buffer');
  }

  get u8() { return this.M.HEAPU8; }
  get i32() { return this.M.HEAP32; }
  get u32() { return this.M.HEAPU32; }
  get f32() { return this.M.HEAPF32; }
  get f64() { return this.M.HEAPF64; }

  /** malloc that throws instead of returning 0, and instead of passing malloc a size its
   * 32-bit argument would truncate (2 ** 35 bytes would become malloc(0)). */
  alloc(bytes) {
    if (!Number.isSafeInteger(bytes) || bytes < 0 || bytes > MAX_ALLOC) {
      throw new WfError('WF_ERR_NOMEM', `could not allocate ${bytes} bytes in the wasm heap: at most ${MAX_ALLOC} fit in one buffer`);
    }
    const p = this.M._malloc(Math.max(bytes, 1)) >>> 0;
    if (!p) throw new WfError('WF_ERR_NOMEM', `could not allocate ${bytes} bytes in the wasm heap`);
    return p;
  }

  free(p) { if (p) this.M._free(p); }

  /** Several buffers: all of them, or none (those already taken are freed) and a throw. */
  allocMany(sizes) {
    const out = [];
    try {
      for (const bytes of sizes) out.push(this.alloc(bytes));
    } catch (e) {
      out.forEach((p) => this.free(p));
      throw e;
    }
    return out;
  }

  /** Runs fn(ptr) with a temporary buffer of `bytes`, freed afterwards. */
  withBuffer(bytes, fn) {
    const p = this.alloc(bytes);
    try { return fn(p); } finally { this.free(p); }
  }

  cstring(p) {
    p >>>= 0;
    if (!p) return '';
    const u8 = this.u8;
    let end = p;
    while (u8[end]) end++;
    // a copy: browsers' TextDecoder refuses views of shared memory (the threaded build's heap)
    return new TextDecoder().decode(u8.slice(p, end));
  }

  /** Throws a WfError for a failed status, with the handle's message (or the status name). */
  check(status, message) {
    if (status === 0) return;
    const code = STATUS[status] ?? `WF_STATUS_${status}`;
    const text = message || this.cstring(this.M._wf_status_string(status));
    throw new WfError(code, text);
  }

  // ---- structs ----
  writeConfig(p, cfg) {
    const i32 = this.i32, f32 = this.f32, u32 = this.u32, base = p >>> 2;
    CONFIG_FIELDS.forEach((k, i) => {
      if (CONFIG_FLOAT.has(k)) f32[base + i] = cfg[k];
      else if (k === 'seed') u32[base + i] = cfg[k] >>> 0;
      else i32[base + i] = cfg[k];
    });
  }

  readConfig(p) {
    const i32 = this.i32, f32 = this.f32, u32 = this.u32, base = p >>> 2, cfg = {};
    CONFIG_FIELDS.forEach((k, i) => {
      cfg[k] = CONFIG_FLOAT.has(k) ? f32[base + i] : k === 'seed' ? u32[base + i] : i32[base + i];
    });
    return cfg;
  }

  defaultConfig() {
    return this.withBuffer(CONFIG_BYTES, (p) => { this.M._wf_config_default(p); return this.readConfig(p); });
  }

  /** Validates a config; returns null or {code, message}. */
  checkConfig(cfg) {
    return this.withBuffer(CONFIG_BYTES + 256, (p) => {
      this.writeConfig(p, cfg);
      const s = this.M._wf_config_check(p, p + CONFIG_BYTES, 256);
      return s === 0 ? null : { code: STATUS[s], message: this.cstring(p + CONFIG_BYTES) };
    });
  }

  memoryEstimate(cfg, B, T) {
    const out = Math.ceil(CONFIG_BYTES / 8) * 8; // after the config, 8-byte aligned for the doubles
    return this.withBuffer(out + MEMORY_BYTES, (p) => {
      this.writeConfig(p, cfg);
      this.check(this.M._wf_config_memory(p, B, T, p + out, 0, 0));
      return this.readMemory(p + out);
    });
  }

  /** wf_model_get_info of a model handle: {memory, nTensors, step, lr, threads}. */
  modelInfo(h) {
    const p = this.infoBuffer, s = this.M._wf_model_get_info(h, p);
    if (s !== 0) this.check(s, this.cstring(this.M._wf_model_error(h)));
    const b = (p + MEMORY_BYTES) >>> 2;
    return { memory: this.readMemory(p), nTensors: this.i32[b], step: this.i32[b + 1], lr: this.f32[b + 2], threads: this.i32[b + 3] };
  }

  /** wf_tokenizer_get_info of a tokenizer handle: {kind (a number), vocabSize, maxBytes}. */
  tokenizerInfo(h) {
    const p = this.infoBuffer, s = this.M._wf_tokenizer_get_info(h, p);
    if (s !== 0) this.check(s, this.cstring(this.M._wf_tokenizer_error(h)));
    const b = p >>> 2;
    return { kind: this.i32[b], vocabSize: this.i32[b + 1], maxBytes: this.i32[b + 2] };
  }

  readMemory(p) {
    const f64 = this.f64, base = p >>> 3, out = {};
    MEMORY_FIELDS.forEach((k, i) => { out[k] = f64[base + i]; });
    return out;
  }

  writeOptim(p, o) {
    const base = p >>> 2;
    OPTIM_FIELDS.forEach((k, i) => {
      if (OPTIM_INT.has(k)) this.i32[base + i] = o[k];
      else this.f32[base + i] = o[k];
    });
  }

  readOptim(p) {
    const base = p >>> 2, o = {};
    OPTIM_FIELDS.forEach((k, i) => { o[k] = OPTIM_INT.has(k) ? this.i32[base + i] : this.f32[base + i]; });
    return o;
  }

  /** Copies an Int32Array (or array of ids) into the heap; caller frees. */
  putInt32(values) {
    const p = this.alloc(values.length * 4);
    this.i32.set(values, p >>> 2);
    return p;
  }

  /** putInt32 for several arrays (null: no buffer, pointer 0): all of them or none. */
  putInt32s(arrays) {
    const ptrs = this.allocMany(arrays.map((a) => (a ? a.length * 4 : 0)));
    arrays.forEach((a, i) => {
      if (a) this.i32.set(a, ptrs[i] >>> 2);
      else { this.free(ptrs[i]); ptrs[i] = 0; }
    });
    return ptrs;
  }

  /** Copies bytes into the heap: a string (as UTF-8, unless `text` is false: files are
   * bytes), a Uint8Array, an ArrayBuffer or any other view (a Buffer, a Float32Array...);
   * returns [ptr, length]; caller frees. `what` names the value in the error for anything
   * else. */
  putBytes(x, what = 'the data', text = true) {
    if (!text && typeof x === 'string') throw new WfError('WF_ERR_ARG', `${what} must be a Uint8Array, ArrayBuffer or Buffer, not a string`);
    const bytes = asBytes(x, what, this.encoder);
    const p = this.alloc(bytes.length);
    this.u8.set(bytes, p);
    return [p, bytes.length];
  }
}

/** The bytes of a string (UTF-8), Uint8Array, ArrayBuffer or other view, without a copy
 * where there are bytes already; a WF_ERR_ARG naming `what` for anything else. */
export function asBytes(x, what = 'the data', encoder = new TextEncoder()) {
  if (typeof x === 'string') return encoder.encode(x);
  if (x instanceof Uint8Array) return x;
  if (x instanceof ArrayBuffer) return new Uint8Array(x);
  if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  throw new WfError('WF_ERR_ARG', `${what} must be a string, Uint8Array, ArrayBuffer or Buffer`);
}
