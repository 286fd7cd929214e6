// Checkpoints over the C API (format: docs/FORMATS.md): a model's weights, tokenizer and,
// optionally, optimizer state as bytes, and back. Importing this file also gives every
// Model a save() and an in-place load().
import { WfError } from './runtime.js';
import { Model } from './model.js';
import { Tokenizer } from './tokenizer.js';

const SAVE_OPTIMIZER = 1; // WF_SAVE_OPTIMIZER

/** Runs a C function that returns a new buffer through (uint8_t **out, int32_t *n), after
 * the given arguments; returns a copy of the bytes and frees the C buffer. */
export function takeBuffer(rt, fn, ...args) {
  return rt.withBuffer(8, (p) => {
    rt.u32[p >>> 2] = 0;
    rt.i32[(p >>> 2) + 1] = 0;
    const status = fn(...args, p, p + 4);
    const ptr = rt.u32[p >>> 2] >>> 0, n = rt.i32[(p >>> 2) + 1];
    try {
      return { status, bytes: status === 0 ? rt.u8.slice(ptr, ptr + n) : null };
    } finally {
      rt.M._wf_buffer_free(ptr);
    }
  });
}

/**
 * The model as checkpoint bytes: config, tokenizer (if any), weights and, with
 * `optimizer: true` (the default), the AdamW moments, optimizer settings, step and the
 * batch sampler's RNG streams, so that training resumes exactly.
 * @example const bytes = saveModel(model); // Uint8Array
 */
export function saveModel(model, { optimizer = true } = {}) {
  model.idle();
  const rt = model.rt;
  const tok = model.tokenizer?.handle ?? 0;
  const { status, bytes } = takeBuffer(rt, rt.M._wf_model_save, model.handle, tok, optimizer ? SAVE_OPTIMIZER : 0);
  model.call(status);
  return bytes;
}

/** Loads into handle h and tokenizer handle th; throws with the core's message. Returns
 * whether the file held the optimizer state: flag bit 0 of its header (docs/FORMATS.md),
 * read once wf_model_load has checked the whole file. */
function loadInto(rt, h, th, bytes) {
  const [p, n] = rt.putBytes(bytes, 'the checkpoint', false);
  try {
    const status = rt.M._wf_model_load(h, th, p, n);
    if (status !== 0) rt.check(status, rt.cstring(rt.M._wf_model_error(h)));
    return (rt.u8[p + 8] & SAVE_OPTIMIZER) !== 0;
  } finally {
    rt.free(p);
  }
}

/**
 * A new Model from checkpoint bytes, with the file's tokenizer when it has one. Every part
 * of the file is checked first; a bad file throws a WfError (code WF_ERR_FORMAT or
 * WF_ERR_UNSUPPORTED) saying what is wrong.
 * @example const model = loadModel(rt, bytes);
 */
export function loadModel(rt, bytes) {
  const h = rt.M._wf_model_create() >>> 0;
  if (!h) throw new WfError('WF_ERR_NOMEM', 'could not allocate a model handle');
  const th = rt.M._wf_tokenizer_create() >>> 0;
  try {
    if (!th) throw new WfError('WF_ERR_NOMEM', 'could not allocate a tokenizer handle');
    const withOptimizer = loadInto(rt, h, th, bytes);
    const hasTokenizer = rt.tokenizerInfo(th).kind !== 0;
    const model = new Model(rt, h, hasTokenizer ? new Tokenizer(rt, th) : null); // reads the config: can fail
    if (!hasTokenizer) rt.M._wf_tokenizer_free(th);
    model.weightsOnly = !withOptimizer;
    return model;
  } catch (e) {
    rt.M._wf_model_free(h);
    if (th) rt.M._wf_tokenizer_free(th);
    throw e;
  }
}

/** This model as checkpoint bytes; see saveModel.
 * @example writeFileSync('model.wf', model.save()); */
Model.prototype.save = function save(opts) {
  return saveModel(this, opts);
};

/**
 * Replaces this model's whole state (config, weights, optimizer state, tokenizer) with a
 * checkpoint's, in place. A file without a tokenizer leaves the model without one. On any
 * error the model is unchanged.
 * @example model.load(readFileSync('model.wf'));
 */
Model.prototype.load = function load(bytes) {
  this.idle();
  const rt = this.rt;
  const th = rt.M._wf_tokenizer_create() >>> 0;
  if (!th) throw new WfError('WF_ERR_NOMEM', 'could not allocate a tokenizer handle');
  try {
    this.weightsOnly = !loadInto(rt, this.handle, th, bytes);
  } catch (e) {
    rt.M._wf_tokenizer_free(th);
    throw e;
  }
  this.tokenizer?.dispose();
  this.tokenizer = rt.tokenizerInfo(th).kind !== 0 ? new Tokenizer(rt, th) : null;
  if (!this.tokenizer) rt.M._wf_tokenizer_free(th);
  return this;
};
