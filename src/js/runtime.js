// The C/JS boundary: one instance of the wasm module, its heap, and every call into it.
// This is the only file that calls the module's exports (M._wf_*): each C function has one
// method here that copies its arguments into the heap, calls it, turns a failed status into
// a thrown WfError with the handle's message, and copies the results out. Everything above
// speaks JavaScript values and handles (numbers); struct layouts are structs.js's. Heap
// views are re-read on every access because memory growth replaces them.
import { WfError } from './errors.js';
import { show } from './options.js';
import { STRUCTS, readStruct, writeStruct } from './structs.js';
import { CONFIG_TABLE, CONSTANTS, OPTIM_TABLE, STATUS_TABLE } from './config-table.js';
import { PIECE } from './source.js';

// The core's messages about a config, optimizer settings or sampling options name their C
// fields (n_head, weight_decay, top_k); a JavaScript caller knows them as the package's keys
// (nHead, weightDecay, topK). Only the calls whose subject is such settings (the caller's,
// or the model's config) rewrite their messages (checkSettings): a file's messages keep the
// names the file uses (config.json: "n_layer" is missing), and no_unk and n_vocab, which the
// package sets itself, keep theirs.
const JS_NAMES = new Map([...[...CONFIG_TABLE, ...OPTIM_TABLE].filter((r) => r.name !== r.js).map((r) => [r.name, r.js]),
  ...STRUCTS.run.fields.filter((f) => f.c !== f.name).map((f) => [f.c, f.name]), ['top_k', 'topK'], ['top_p', 'topP']]);
const C_NAME = new RegExp(`\\b(${[...JS_NAMES.keys()].join('|')})\\b`, 'g');

/** A core message about settings the caller gave, in the package's words: their C field
 * names become JavaScript keys. */
export function jsMessage(message) {
  return message.replace(C_NAME, (name) => JS_NAMES.get(name));
}

/** Names of wf_status values, by number (include/wasmformer.h's WF_STATUSES). */
export const STATUS = STATUS_TABLE.map((s) => s.name);
const { WF_SAVE_OPTIMIZER: SAVE_OPTIMIZER, WF_SAVE_JSON: SAVE_JSON, WF_SAVE_GGUF: SAVE_GGUF, WF_TOKENIZER_CHAR: TOKENIZER_CHAR, WF_TOKENIZER_BPE: TOKENIZER_BPE } = CONSTANTS;
/** wf_quant by number: how a tensor's weights are stored. */
export const QUANT = ['f32', 'q8_0', 'q4_0'];
// The wasm memory's ceiling (build.sh: -sMAXIMUM_MEMORY=4GB). What one model or one batch's
// activations may take within it is the core's to say (wf_memory.budget, memoryFit).
export const MEMORY_LIMIT = 4294967296;
// The largest buffer alloc() asks malloc for: below the 32-bit size_t of wasm32 with room for
// malloc's own header and alignment.
const MAX_ALLOC = MEMORY_LIMIT - 64;
const MESSAGE_BYTES = 256; // wf_config_check's message buffer
const SCRATCH_BYTES = 256; // Runtime.scratch: a wf_step_info, a loss, a wf_model_info, a wf_run_facts or a wf_tokenizer_info
const GEN_FIELDS = 4; // putSampling's words after the wf_sampling: token, text length, text room, tokenizer

// The module's exports that free memory: after a trap they do nothing (a dead module's memory
// is dropped whole), so that a finally block or a dispose() does not replace the error that
// reported the trap.
const FREES = new Set(['_free', '_wf_buffer_free', '_wf_model_free', '_wf_tokenizer_free']);

/** M with every export (M._*) guarded: a call into a dead module throws WF_ERR_MODULE at once,
 * and anything a call throws out of the module (a trap: RuntimeError "memory access out of
 * bounds", "unreachable"; a stack overflow) kills it. The core never throws into JavaScript
 * on purpose (it returns statuses and calls no JavaScript), so whatever comes out of it left
 * its heap half-written: every model, tokenizer and buffer in the module may be corrupt, and
 * calling in again has been seen to corrupt more or spin for ever (issue 25). */
function guarded(M, rt) {
  const wrappers = new Map();
  return new Proxy(M, {
    get(target, key) {
      const f = target[key];
      if (typeof f !== 'function' || typeof key !== 'string' || !key.startsWith('_')) return f;
      let w = wrappers.get(key);
      if (!w) {
        w = (...args) => {
          if (rt.dead) {
            if (FREES.has(key)) return undefined;
            throw rt.deadError();
          }
          try {
            return f(...args);
          } catch (e) {
            rt.kill(e, key);
            throw rt.deadError();
          }
        };
        wrappers.set(key, w);
      }
      return w;
    },
  });
}

export class Runtime {
  /** @param {object} M an instantiated Emscripten module */
  constructor(M, threads = 1, simd = 'simd128') {
    /** What killed the module ({ error, call }), or null while it lives. */
    this.dead = null;
    this.deathListeners = [];
    this.M = guarded(M, this);
    /** Threads the loaded build offers (1: the single-thread build). */
    this.threads = threads;
    /** The kernel set of the loaded build: 'simd128' or 'relaxed' (loader.js). */
    this.simd = simd;
    this.encoder = new TextEncoder();
    // where calls write their small results (a step info, a loss, a handle's info): taken
    // once here, so that no step and no getter allocates (and so none can fail to)
    this.scratch = M._malloc(SCRATCH_BYTES) >>> 0;
    if (!this.scratch) throw new WfError('WF_ERR_NOMEM', 'could not allocate the runtime\'s scratch buffer');
  }

  // ---- the module's life ----

  /** Marks the module dead after `error` came out of the export `call`; the listeners
   * (loader.js: forget this module, so the next model gets a new one) run once. */
  kill(error, call) {
    if (this.dead) return;
    this.dead = { error, call: call.replace(/^_/, '') };
    for (const f of this.deathListeners.splice(0)) f();
  }

  /** Runs f when the module dies (at once if it is dead). */
  whenDead(f) {
    if (this.dead) f();
    else this.deathListeners.push(f);
  }

  /** The WfError every call into a dead module gets. */
  deadError() {
    const { error, call } = this.dead;
    const what = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return new WfError('WF_ERR_MODULE', `the wasm module failed in ${call} (${what}) and was closed: its memory can no longer be `
      + 'trusted, so every model and tokenizer in it is gone; create them again (a new module is loaded)');
  }

  // ---- the heap ----

  get u8() { return this.M.HEAPU8; }
  get i32() { return this.M.HEAP32; }
  get u32() { return this.M.HEAPU32; }
  get f32() { return this.M.HEAPF32; }
  get f64() { return this.M.HEAPF64; }
  /** Bytes of the wasm memory, grown or not. */
  get heapSize() { return this.M.HEAP8.length; }
  /** Bytes malloc'ed and not yet freed in this module (wf_heap_in_use). */
  heapInUse() { return this.M._wf_heap_in_use(); }

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

  /** Runs fn(ptr) with a temporary struct (a structs.js layout), written from `values`
   * first when given; returns what fn returns. */
  withStruct(s, values, fn) {
    return this.withBuffer(s.size, (p) => {
      if (values) writeStruct(this, s, p, values);
      return fn(p);
    });
  }

  /** A copy of `n` floats at pointer p (null for a null pointer). */
  floats(p, n) {
    p >>>= 0;
    return p ? this.f32.slice(p >>> 2, (p >>> 2) + n) : null;
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

  /** Copies token ids (an Int32Array, or an array checked by int32Ids) into the heap;
   * caller frees. */
  putInt32(values, what) {
    const ids = int32Ids(values, what);
    const p = this.alloc(ids.length * 4);
    this.i32.set(ids, p >>> 2);
    return p;
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

  /** Runs fn(ptr, length) with bytes in the heap (see putBytes), freed afterwards. */
  withBytes(x, what, text, fn) {
    const [p, n] = this.putBytes(x, what, text);
    try { return fn(p, n); } finally { this.free(p); }
  }

  /** Runs fn(outPtr, lenPtr) for a C function that returns a new buffer through (uint8_t
   * **out, int32_t *n); returns [status, a copy of the bytes (null on failure)] and frees
   * the C buffer. */
  takeBuffer(fn) {
    return this.withBuffer(8, (p) => {
      this.u32[p >>> 2] = 0;
      this.i32[(p >>> 2) + 1] = 0;
      const status = fn(p, p + 4);
      const ptr = this.u32[p >>> 2] >>> 0, n = this.i32[(p >>> 2) + 1];
      try {
        return [status, status === 0 ? this.u8.slice(ptr, ptr + n) : null];
      } finally {
        this.M._wf_buffer_free(ptr);
      }
    });
  }

  // ---- statuses ----

  /** Throws a WfError for a failed status, with the given message (or the status name); with
   * `own`, the message is about settings the caller gave and speaks the package's names
   * (jsMessage). */
  check(status, message, own = false) {
    if (status === 0) return;
    const code = STATUS[status] ?? `WF_STATUS_${status}`;
    const text = message || this.cstring(this.M._wf_status_string(status));
    throw new WfError(code, own ? jsMessage(text) : text);
  }

  /** check() with model handle h's message. */
  checkModel(h, status) {
    if (status !== 0) this.check(status, this.cstring(this.M._wf_model_error(h)));
  }

  /** checkModel() for a call whose subject is settings the caller gave (a config, optimizer
   * settings, sampling options) or the model's config as the package shows it (an export):
   * its message in the package's names. */
  checkSettings(h, status) {
    if (status !== 0) this.check(status, this.cstring(this.M._wf_model_error(h)), true);
  }

  /** check() with tokenizer handle t's message (in the package's names when `own`: a
   * vocabSize the caller gave). */
  checkTokenizer(t, status, own = false) {
    if (status !== 0) this.check(status, this.cstring(this.M._wf_tokenizer_error(t)), own);
  }

  // ---- configs (native form: numbers, see config.js) ----

  configDefault() {
    return this.withStruct(STRUCTS.config, null, (p) => { this.M._wf_config_default(p); return readStruct(this, STRUCTS.config, p); });
  }

  optimDefault() {
    return this.withStruct(STRUCTS.optim, null, (p) => { this.M._wf_optim_default(p); return readStruct(this, STRUCTS.optim, p); });
  }

  /** Validates a native config: null, or {code, message}. */
  configCheck(native) {
    return this.withBuffer(STRUCTS.config.size + MESSAGE_BYTES, (p) => {
      writeStruct(this, STRUCTS.config, p, native);
      const s = this.M._wf_config_check(p, p + STRUCTS.config.size, MESSAGE_BYTES);
      return s === 0 ? null : { code: STATUS[s], message: jsMessage(this.cstring(p + STRUCTS.config.size)) };
    });
  }

  /** Validates optimizer settings (the native struct's numbers): throws a WfError in the
   * package's names when the core refuses them (wf_optim_check). */
  optimCheck(optim) {
    this.withBuffer(STRUCTS.optim.size + MESSAGE_BYTES, (p) => {
      writeStruct(this, STRUCTS.optim, p, optim);
      const s = this.M._wf_optim_check(p, p + STRUCTS.optim.size, MESSAGE_BYTES);
      this.check(s, s === 0 ? '' : this.cstring(p + STRUCTS.optim.size), true);
    });
  }

  /** Bytes a native config needs, trained at batch B and length T (wf_memory; its budget:
   * what this build lets one model, or one batch's activations, take), whether or not they
   * fit (memoryFit says). */
  memoryEstimate(native, B, T) { return this.#configMemory(native, B, T).memory; }

  /** Whether a model of the native config, and a batch of B x T (0, 0: no batch) for it, fit
   * the core's budget: null, or the core's {code: 'WF_ERR_NOMEM', message}. */
  memoryFit(native, B, T) { return this.#configMemory(native, B, T).refused; }

  /** wf_config_memory: {memory, refused: null or {code, message}} (WF_ERR_NOMEM fills the
   * memory all the same); any other failure throws. */
  #configMemory(native, B, T) {
    const at = Math.ceil(STRUCTS.config.size / 8) * 8; // after the config, 8-byte aligned for the doubles
    const msg = at + STRUCTS.memory.size;
    return this.withBuffer(msg + MESSAGE_BYTES, (p) => {
      writeStruct(this, STRUCTS.config, p, native);
      const s = this.M._wf_config_memory(p, B, T, p + at, p + msg, MESSAGE_BYTES);
      const refused = STATUS[s] === 'WF_ERR_NOMEM' ? { code: STATUS[s], message: this.cstring(p + msg) } : null;
      if (!refused) this.check(s, s === 0 ? '' : this.cstring(p + msg), true);
      return { memory: readStruct(this, STRUCTS.memory, p + at), refused };
    });
  }

  /** What this build lets one model, or one batch's activations, take, in bytes (the
   * core's wf_memory.budget). */
  get memoryBudget() {
    this.budget ??= this.memoryEstimate(this.configDefault(), 0, 0).budget;
    return this.budget;
  }

  // ---- model handles ----

  /** A new empty model handle. */
  modelCreate() {
    const h = this.M._wf_model_create() >>> 0;
    if (!h) throw new WfError('WF_ERR_NOMEM', 'could not allocate a model handle');
    return h;
  }

  modelFree(h) { this.M._wf_model_free(h); }

  modelInit(h, native) {
    this.withStruct(STRUCTS.config, native, (p) => this.checkSettings(h, this.M._wf_model_init(h, p)));
  }

  /** The native config of h. */
  modelConfig(h) {
    return this.withStruct(STRUCTS.config, null, (p) => {
      this.checkModel(h, this.M._wf_model_get_config(h, p));
      return readStruct(this, STRUCTS.config, p);
    });
  }

  /** Threads for h's training and prompt reading; returns the status (a model that cannot
   * get them keeps one thread). */
  modelSetThreads(h, n) { return this.M._wf_model_set_threads(h, n); }

  /** h's memory use (memory.count: its parameters), tensor rows, steps taken, the next
   * step's learning rate, thread setting and what made it (a wf_origin):
   * {memory, nTensors, step, lr, threads, origin}. */
  modelInfo(h) {
    this.checkModel(h, this.M._wf_model_get_info(h, this.scratch));
    return readStruct(this, STRUCTS.modelInfo, this.scratch);
  }

  modelGetOptim(h) {
    return this.withStruct(STRUCTS.optim, null, (p) => {
      this.checkModel(h, this.M._wf_model_get_optim(h, p));
      return readStruct(this, STRUCTS.optim, p);
    });
  }

  modelSetOptim(h, optim) {
    this.withStruct(STRUCTS.optim, optim, (p) => this.checkSettings(h, this.M._wf_model_set_optim(h, p)));
  }

  /** h's parameter tensors with elements: [{name, offset (-1: quantized), size, shape, decay,
   * dtype (QUANT's name), layers (its slices in the trainable mask), gradOffset (-1: frozen)}],
   * each with `slice0`, where its slices start in the mask. */
  modelTensors(h) {
    const out = [], n = this.modelInfo(h).nTensors;
    let slice0 = 0;
    this.withStruct(STRUCTS.tensorInfo, null, (p) => {
      for (let i = 0; i < n; i++) {
        this.checkModel(h, this.M._wf_model_get_tensor(h, i, p));
        const t = readStruct(this, STRUCTS.tensorInfo, p);
        if (t.size) {
          out.push({ name: this.cstring(t.name), offset: t.offset, size: t.size, shape: t.shape.slice(0, t.ndim),
            decay: t.decay === 1, dtype: QUANT[t.dtype], layers: t.layers, gradOffset: t.gradOffset, slice0 });
        }
        slice0 += t.layers;
      }
    });
    return out;
  }

  /** h's trainable mask (a byte per slice, wf_model_trainable), after applying `set` when
   * given (a Uint8Array of the same length). */
  modelTrainable(h, set, n) {
    return this.withBuffer(2 * n, (p) => {
      if (set) this.u8.set(set, p);
      this.checkModel(h, this.M._wf_model_trainable(h, set ? p : 0, p + n, n));
      return this.u8.slice(p + n, p + 2 * n);
    });
  }

  /** Replaces h's config by a native one that differs in LoRA's fields and dropout only;
   * merge folds the adapters it drops into their weights. */
  modelSetConfig(h, native, merge) {
    this.withStruct(STRUCTS.config, native, (p) => this.checkSettings(h, this.M._wf_model_set_config(h, p, merge ? 1 : 0)));
  }

  /** h's linears and token embeddings quantized to QUANT[type] in place (0: back to float32). */
  modelQuantize(h, type) { this.checkModel(h, this.M._wf_model_quantize(h, type)); }

  /** A copy of `size` weights from element `offset` of h's flat parameter block. */
  modelReadParams(h, offset, size) { return this.floats(this.M._wf_model_params(h) + offset * 4, size); }

  /** Overwrites weights from element `offset` of h's flat parameter block. */
  modelWriteParams(h, offset, values) { this.f32.set(values, (this.M._wf_model_params(h) >>> 2) + offset); }

  // ---- batches (a wf_batch at pointer pb: batch.js) ----

  /** One optimizer step on the batch at pb: {loss, gradNorm, lr, step}. */
  batchStep(h, pb) {
    this.checkModel(h, this.M._wf_model_step(h, pb, this.scratch));
    return readStruct(this, STRUCTS.stepInfo, this.scratch);
  }

  /** A forward pass on the batch at pb: its loss (meaningless without targets). */
  batchForward(h, pb) {
    this.checkModel(h, this.M._wf_model_forward(h, pb, this.scratch));
    return this.f32[this.scratch >>> 2];
  }

  /** Copies of the last forward's results, or null where it has none: logits (n floats),
   * final states (n), a layer's self- or cross-attention (n). */
  logits(h, n) { return this.floats(this.M._wf_model_logits(h), n); }

  hidden(h, n) { return this.floats(this.M._wf_model_hidden(h), n); }
  selfAttention(h, layer, n) { return this.floats(this.M._wf_model_attention(h, layer, 0), n); }
  crossAttention(h, layer, n) { return this.floats(this.M._wf_model_attention(h, layer, 1), n); }

  // ---- training runs (src/run.c) ----

  /** Preset `name`'s config, optimizer settings and run (null: the defaults), native forms;
   * null for a name the core does not know. */
  preset(name) {
    const { config, optim, run } = STRUCTS, size = config.size + optim.size + run.size;
    const bytes = name == null ? null : this.encoder.encode(`${name}\0`);
    return this.withBuffer(size + (bytes?.length ?? 0), (p) => {
      if (bytes) this.u8.set(bytes, p + size);
      if (this.M._wf_preset(bytes ? p + size : 0, p, p + config.size, p + config.size + optim.size) !== 0) return null;
      return { config: readStruct(this, config, p), optim: readStruct(this, optim, p + config.size), run: readStruct(this, run, p + config.size + optim.size) };
    });
  }

  /** Begins a run on h (settings: a wf_run by the package's names) on the n tokens at ptok
   * (0, 0: the caller's batches), or with keep goes on with h's run. */
  runBegin(h, settings, keep, ptok, n) {
    this.withStruct(STRUCTS.run, settings, (p) => this.checkSettings(h, this.M._wf_model_run_begin(h, p, keep ? 1 : 0, ptok, n)));
  }

  /** Ends h's run: its schedule goes on in the optimizer settings. */
  runEnd(h) { this.checkModel(h, this.M._wf_model_run_begin(h, 0, 0, 0, 0)); }

  /** Trains h's run: one step on the batch at pb, or (pb 0) at most `steps` in at most `ms` of
   * training; its facts (wf_run_facts). A divergence is a fact (facts.diverged), not a throw:
   * the caller words it. */
  run(h, pb, steps, ms) {
    this.u8.fill(0, this.scratch, this.scratch + STRUCTS.runFacts.size);
    const s = this.M._wf_model_run(h, pb, steps, ms, this.scratch);
    const facts = readStruct(this, STRUCTS.runFacts, this.scratch);
    if (s !== 0 && !(STATUS[s] === 'WF_ERR_NUMERIC' && facts.diverged)) this.checkModel(h, s);
    return facts;
  }

  /** The facts of h's run, or null when it has none. */
  runFacts(h) {
    const s = this.M._wf_model_run(h, 0, 0, 0, this.scratch);
    if (STATUS[s] === 'WF_ERR_STATE') return null;
    this.checkModel(h, s);
    return readStruct(this, STRUCTS.runFacts, this.scratch);
  }

  // ---- generation ----

  /** Starts a generation from the prompt ids with its own RNG seeded by seed. */
  genStart(h, ids, seed) {
    const p = this.putInt32(ids, 'prompt token');
    try { this.checkModel(h, this.M._wf_model_gen_start(h, p, ids.length, seed >>> 0)); } finally { this.free(p); }
  }

  /** A generation's block in the heap for genNext: the wf_sampling, then the token, its
   * text's length, the text's room and tokenizer t (0: none: tokens alone), then that room
   * (2 x t's maxBytes, enough for any token's text); caller frees. */
  putSampling(sampling, t = 0) {
    const cap = t ? 2 * this.tokenizerInfo(t).maxBytes : 0;
    const p = this.alloc(STRUCTS.sampling.size + GEN_FIELDS * 4 + cap);
    writeStruct(this, STRUCTS.sampling, p, sampling);
    const at = (p + STRUCTS.sampling.size) >>> 2;
    this.i32.set([0, 0, cap], at);
    this.u32[at + 3] = t;
    return p;
  }

  /** The next token of h's generation, sampled with the block at ps (putSampling); with a
   * tokenizer, its text too (genText): one call into the module a token. */
  genNext(h, ps) {
    const tok = ps + STRUCTS.sampling.size, at = tok >>> 2, t = this.u32[at + 3];
    const text = tok + GEN_FIELDS * 4;
    this.checkSettings(h, this.M._wf_model_gen_next(h, ps, t, tok, t ? text : 0, this.i32[at + 2], tok + 4));
    return this.i32[at];
  }

  /** A copy of the bytes the last genNext's token added to the text (its tokenizer's). */
  genText(ps) {
    const tok = ps + STRUCTS.sampling.size, text = tok + GEN_FIELDS * 4;
    return this.u8.slice(text, text + this.i32[(tok + 4) >>> 2]);
  }

  /** Encoder-decoder: the best hypothesis from bos for the source ids (Int32Array, eos
   * included when reached); beam 1 is greedy. */
  beamSearch(h, src, bos, eos, beam, maxNew) {
    const ps = this.putInt32(src, 'source token');
    try {
      return this.withBuffer(maxNew * 4 + 4, (out) => {
        this.checkSettings(h, this.M._wf_model_beam_search(h, ps, src.length, bos, eos, beam, maxNew, out, out + maxNew * 4));
        const n = this.i32[(out + maxNew * 4) >>> 2];
        return this.i32.slice(out >>> 2, (out >>> 2) + n);
      });
    } finally {
      this.free(ps);
    }
  }

  // ---- files ----

  /** Checkpoint bytes of h (and tokenizer t, or 0), with the optimizer state when asked. */
  modelSave(h, t, optimizer, gguf = false) {
    const flags = gguf ? SAVE_GGUF : optimizer ? SAVE_OPTIMIZER : 0;
    const [status, bytes] = this.takeBuffer((out, n) => this.M._wf_model_save(h, t, flags, out, n));
    this.checkModel(h, status);
    return bytes;
  }

  /** Loads a checkpoint's bytes (or a GGUF or llama2.c model file's; a GGUF file streamed in
   * PIECE-byte pieces, never copied whole into the heap) into h and tokenizer t;
   * returns what the core says the file was (modelInfo's origin: WF_ORIGIN_OPTIMIZER, a
   * checkpoint with the optimizer state; WF_ORIGIN_WEIGHTS, one without; WF_ORIGIN_LLAMA2C,
   * WF_ORIGIN_GGUF). */
  modelLoad(h, t, bytes) {
    const b = bytes instanceof ArrayBuffer || ArrayBuffer.isView(bytes) ? asBytes(bytes) : null;
    if (b && b.length >= 4 && b[0] === 0x47 && b[1] === 0x47 && b[2] === 0x55 && b[3] === 0x46) {
      // a GGUF file: streamed from the caller's bytes, never copied whole into the heap
      const stream = this.modelLoadStream(h, t, PIECE);
      try {
        for (let at = 0; at < b.length; at += PIECE) stream.feed(b.subarray(at, at + PIECE));
        return stream.end();
      } catch (e) {
        stream.abandon();
        throw e;
      }
    }
    this.withBytes(bytes, 'the checkpoint', false, (p, n) => this.checkModel(h, this.M._wf_model_load(h, t, p, n)));
    return this.modelInfo(h).origin;
  }

  /** A streamed GGUF load into h and tokenizer t (wf_model_load_begin): {feed(bytes), end(),
   * abandon()}. Pieces pass through one staging buffer of `staging` bytes in the heap, fed
   * to the core each time it fills; end() feeds the rest and swaps the model in (its origin
   * returned as modelLoad's); a failed feed or end leaves h as it was, and abandon() (safe
   * after either) ends a load the caller gives up. */
  modelLoadStream(h, t, staging) {
    this.checkModel(h, this.M._wf_model_load_begin(h, t));
    let p = 0, used = 0;
    try {
      p = this.alloc(staging);
    } catch (e) {
      this.M._wf_model_load_end(h, 0);
      throw e;
    }
    const flush = () => {
      const n = used;
      used = 0;
      if (n) this.checkModel(h, this.M._wf_model_load_feed(h, p, n));
    };
    const release = () => {
      if (p) this.free(p);
      p = 0;
    };
    return {
      feed: (bytes) => {
        for (let at = 0; at < bytes.length;) {
          const k = Math.min(staging - used, bytes.length - at);
          this.u8.set(bytes.subarray(at, at + k), p + used); // (the heap view re-read: a feed can grow memory)
          used += k;
          at += k;
          if (used === staging) flush();
        }
      },
      end: () => {
        try {
          flush();
        } finally {
          release();
        }
        this.checkModel(h, this.M._wf_model_load_end(h, 1));
        return this.modelInfo(h).origin;
      },
      abandon: () => {
        release();
        this.M._wf_model_load_end(h, 0); // WF_ERR_STATE when the core ended it already
      },
    };
  }

  /** Sets h's note (bytes saved with the model; empty: none). */
  modelSetNote(h, bytes) {
    this.withBytes(bytes, 'the note', true, (p, n) => this.checkModel(h, this.M._wf_model_set_note(h, p, n)));
  }

  /** h's note: a copy of its bytes (empty: none). */
  modelGetNote(h) {
    const p = this.M._wf_model_get_note(h, this.scratch) >>> 0, n = this.i32[this.scratch >>> 2];
    return p ? this.u8.slice(p, p + n) : new Uint8Array(0);
  }

  /** h as Hugging Face files: {st: safetensors bytes, config: config.json text}. */
  modelExportSafetensors(h) { return this.#exportPair(h, (...out) => this.M._wf_model_export_safetensors(h, ...out)); }

  /** h's LoRA adapters in PEFT's layout: {st: adapter_model.safetensors bytes, config:
   * adapter_config.json text, its base_model_name_or_path the string base, or null}. */
  modelExportPeft(h, base) {
    if (base === undefined || base === null) return this.#exportPair(h, (...out) => this.M._wf_model_export_peft(h, 0, ...out));
    return this.withBytes(`${base}\0`, 'the base model', true, (pb) => this.#exportPair(h, (...out) => this.M._wf_model_export_peft(h, pb, ...out)));
  }

  /** Replaces h by the model of a config.json and a safetensors file (bytes). */
  modelImportSafetensors(h, config, st) {
    this.#importPair(h, config, st, (...files) => this.M._wf_model_import_safetensors(h, ...files));
  }

  /** Puts PEFT LoRA adapters (adapter_config.json and adapter_model.safetensors bytes) on h. */
  modelImportPeft(h, config, st) { this.#importPair(h, config, st, (...files) => this.M._wf_model_import_peft(h, ...files)); }

  /** What an export call f(&st, &n_st, &json, &n_json) on h wrote, copied out (the heap may
   * be shared, which TextDecoder refuses) and freed. */
  #exportPair(h, f) {
    return this.withBuffer(16, (p) => {
      this.u32.fill(0, p >>> 2, (p >>> 2) + 4);
      const status = f(p, p + 4, p + 8, p + 12);
      const b = p >>> 2, st = this.u32[b] >>> 0, stLen = this.i32[b + 1], cfg = this.u32[b + 2] >>> 0, cfgLen = this.i32[b + 3];
      try {
        this.checkSettings(h, status);
        return { st: this.u8.slice(st, st + stLen), config: new TextDecoder().decode(this.u8.slice(cfg, cfg + cfgLen)) };
      } finally {
        this.M._wf_buffer_free(st);
        this.M._wf_buffer_free(cfg);
      }
    });
  }

  /** An import call f(json, n_json, st, n_st) on h, given the two files' bytes. */
  #importPair(h, config, st, f) {
    const [pc, ps] = this.allocMany([config.length, st.length]);
    try {
      this.u8.set(config, pc);
      this.u8.set(st, ps);
      this.checkModel(h, f(pc, config.length, ps, st.length));
    } finally {
      this.free(pc);
      this.free(ps);
    }
  }

  /** Replaces h by the model of a llama2.c model file (bytes; wf_model_load reads them). */
  llama2cImport(h, bytes) {
    const p = this.alloc(bytes.length);
    try {
      this.u8.set(bytes, p);
      this.checkModel(h, this.M._wf_model_load(h, 0, p, bytes.length));
    } finally {
      this.free(p);
    }
  }

  // ---- tokenizer handles ----

  /** A new empty tokenizer handle. */
  tokenizerCreate() {
    const t = this.M._wf_tokenizer_create() >>> 0;
    if (!t) throw new WfError('WF_ERR_NOMEM', 'could not allocate a tokenizer handle');
    return t;
  }

  tokenizerFree(t) { this.M._wf_tokenizer_free(t); }

  /** Fills t from data (bytes, or a string as UTF-8): a char vocabulary learned from it, a
   * BPE one of vocabSize tokens (kind 'bpe'), or a tokenizer file of any kind wf_tokenizer_load
   * reads (kind 'file': .wft, tokenizer.json, llama2.c's tokenizer.bin). */
  tokenizerFill(t, kind, data, what, vocabSize) {
    this.withBytes(data, what, true, (p, n) => {
      const M = this.M;
      this.checkTokenizer(t, kind === 'bpe' ? M._wf_tokenizer_train(t, TOKENIZER_BPE, p, n, vocabSize)
        : kind === 'file' ? M._wf_tokenizer_load(t, p, n) : M._wf_tokenizer_train(t, TOKENIZER_CHAR, p, n, 0), kind === 'bpe');
    });
  }

  /** t's kind (0 empty, 1 char, 2 bpe, 3 hf, 4 llama2c: wf_tokenizer_kind), the ids it knows,
   * the most bytes one id decodes to and the id a prompt starts with (-1: none):
   * {kind, vocabSize, maxBytes, bos}. */
  tokenizerInfo(t) {
    this.checkTokenizer(t, this.M._wf_tokenizer_get_info(t, this.scratch));
    return readStruct(this, STRUCTS.tokenizerInfo, this.scratch);
  }

  /** Token ids (Int32Array) of text: a string (UTF-8) or bytes. Room for one id per byte and
   * a few more (a SentencePiece-style ▁ in front); a text that needs more is encoded again
   * with the count the first call reported. */
  tokenizerEncode(t, text) {
    return this.withBytes(text, 'the text', true, (p, n) => {
      const attempt = (cap) => this.withBuffer(cap * 4 + 4, (out) => {
        const count = out + cap * 4;
        const status = this.M._wf_tokenizer_encode(t, p, n, out, cap, count);
        const need = this.i32[count >>> 2];
        if (STATUS[status] === 'WF_ERR_ARG' && need > cap) return need;
        this.checkTokenizer(t, status);
        return this.i32.slice(out >>> 2, (out >>> 2) + need);
      });
      const first = attempt(n + 8);
      return typeof first === 'number' ? attempt(first) : first;
    });
  }

  /** The UTF-8 bytes of ids. */
  tokenizerDecode(t, ids) {
    const p = this.putInt32(ids);
    try {
      const cap = ids.length * this.tokenizerInfo(t).maxBytes;
      const at = (cap + 3) & ~3; // the byte count, 4-byte aligned after the text
      return this.withBuffer(at + 4, (out) => {
        this.checkTokenizer(t, this.M._wf_tokenizer_decode(t, p, ids.length, out, cap, out + at));
        return this.u8.slice(out, out + this.i32[(out + at) >>> 2]);
      });
    } finally {
      this.free(p);
    }
  }

  /** t as the bytes of a tokenizer file. */
  tokenizerSave(t) {
    const [status, bytes] = this.takeBuffer((out, n) => this.M._wf_tokenizer_save(t, 0, out, n));
    this.checkTokenizer(t, status);
    return bytes;
  }

  /** t as the text of a tokenizer.json. */
  tokenizerSaveJson(t) {
    const [status, bytes] = this.takeBuffer((out, n) => this.M._wf_tokenizer_save(t, SAVE_JSON, out, n));
    this.checkTokenizer(t, status);
    return new TextDecoder().decode(bytes);
  }
}

/**
 * Token ids as the core reads them, an Int32Array: one as it is, any other array or view
 * value by value. Every id that enters the module comes through here, so that nothing is
 * converted silently: 2 ** 32 + 1 would wrap to 1, 2.5 truncate to 2, NaN and '7' become 0
 * and 7. Each value must be a number that is an integer within int32's range; otherwise
 * `code` (WF_ERR_TOKEN) with the value as given. What an id means (inside the vocabulary,
 * -1 for an ignored target) is the core's to check.
 * @param {ArrayLike<unknown>} values
 * @param {string} what names a value in the message ('token', 'batch.targets value')
 */
export function int32Ids(values, what = 'token', code = 'WF_ERR_TOKEN') {
  if (values instanceof Int32Array) return values;
  const n = values?.length;
  if (!Number.isInteger(n)) throw new WfError('WF_ERR_ARG', `token ids must be an array or Int32Array, not ${show(values)}`);
  const ids = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (!Number.isInteger(v) || v < -0x80000000 || v > 0x7fffffff) {
      const why = Number.isInteger(v) ? 'beyond 32 bits (ids are int32)' : typeof v === 'number' ? 'not an integer' : 'not a number';
      throw new WfError(code, `${what} ${show(v)} at position ${i} is ${why}`);
    }
    ids[i] = v;
  }
  return ids;
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
