// wf_batch across the boundary: one batch for any architecture, copied into the wasm heap.
// The struct is 7 pointers then B, T, S (int32), every field 4 bytes in wasm32, in the
// order of include/wasmformer.h.
import { WfError } from './runtime.js';

const POINTERS = ['inputs', 'inputVecs', 'lengths', 'targets', 'targetVecs', 'src', 'srcLengths'];
const FLOATS = new Set(['inputVecs', 'targetVecs']);
export const BATCH_BYTES = (POINTERS.length + 3) * 4;

/**
 * @typedef {object} Batch
 * @property {number} B sequences
 * @property {number} T positions per sequence (decoder side for encoder-decoders)
 * @property {number} [S] source positions per sequence (encoder-decoders)
 * @property {Int32Array|number[]} [inputs] [B*T] token ids
 * @property {Float32Array|number[]} [inputVecs] [B*T*dModel] vectors instead of ids (encoders)
 * @property {Int32Array|number[]} [lengths] [B] real positions per sequence (the rest is padding)
 * @property {Int32Array|number[]} [targets] [B*T] ids for cross-entropy; negative = ignored
 * @property {Float32Array|number[]} [targetVecs] [B*T*dModel] targets of a mean squared error (encoders)
 * @property {Int32Array|number[]} [src] [B*S] source ids (encoder-decoders)
 * @property {Int32Array|number[]} [srcLengths] [B] real source tokens
 */

function expected(name, b, dModel) {
  switch (name) {
    case 'inputs': case 'targets': return b.B * b.T;
    case 'inputVecs': case 'targetVecs': return b.B * b.T * dModel;
    case 'lengths': case 'srcLengths': return b.B;
    default: return b.B * (b.S ?? 0); // src
  }
}

/**
 * Copies a batch into the heap. Returns {ptr, free}: ptr is the wf_batch, free() releases it
 * and every array it points to. Array sizes are checked here; values are checked by the core.
 * @param {import('./runtime.js').Runtime} rt
 * @param {Batch} batch
 * @param {number} dModel the model's width (for vector inputs and targets)
 */
export function putBatch(rt, batch, dModel) {
  const { B, T } = batch;
  // the core's words for the same refusal (model.c check_batch)
  if (!Number.isInteger(B) || !Number.isInteger(T)) throw new WfError('WF_ERR_ARG', `batch shape ${B} x ${T}: both must be integers`);
  if (B < 1 || T < 1) throw new WfError('WF_ERR_ARG', `batch shape ${B} x ${T}: both must be >= 1`);
  const owned = [];
  try {
    const ptrs = POINTERS.map((k) => {
      const v = batch[k];
      if (v === undefined || v === null) return 0;
      const n = expected(k, batch, dModel);
      if (v.length !== n) throw new WfError('WF_ERR_ARG', `batch.${k} has ${v.length} values; B, T, S and dModel make it ${n}`);
      const p = rt.alloc(n * 4);
      owned.push(p);
      if (FLOATS.has(k)) rt.f32.set(v, p >>> 2); else rt.i32.set(v, p >>> 2);
      return p;
    });
    const p = rt.alloc(BATCH_BYTES);
    owned.push(p);
    const base = p >>> 2;
    ptrs.forEach((q, i) => { rt.u32[base + i] = q; });
    rt.i32[base + 7] = batch.B;
    rt.i32[base + 8] = batch.T;
    rt.i32[base + 9] = batch.S ?? 0;
    return { ptr: p, free: () => owned.forEach((q) => rt.free(q)) };
  } catch (e) {
    owned.forEach((q) => rt.free(q));
    throw e;
  }
}

/** Writes a wf_batch at p for ids already in the heap (pointers inputs, targets; 0: none). */
export function writeIdsBatch(rt, p, inputs, targets, B, T) {
  const base = p >>> 2;
  for (let i = 0; i < POINTERS.length; i++) rt.u32[base + i] = 0;
  rt.u32[base] = inputs;
  rt.u32[base + 3] = targets;
  rt.i32[base + 7] = B;
  rt.i32[base + 8] = T;
  rt.i32[base + 9] = 0;
}

/** Runs fn(ptr) with the batch in the heap, freed afterwards. */
export function withBatch(rt, batch, dModel, fn) {
  const b = putBatch(rt, batch, dModel);
  try { return fn(b.ptr); } finally { b.free(); }
}

/** Reads a wf_step_info at p. */
export function readStepInfo(rt, p) {
  const b = p >>> 2;
  return { loss: rt.f32[b], gradNorm: rt.f32[b + 1], lr: rt.f32[b + 2], step: rt.i32[b + 3] };
}
