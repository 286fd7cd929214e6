// wf_batch in the heap: one batch for any architecture, the struct and the arrays it points
// to owned together. Every step and forward of every model kind goes through one
// (ModelHandle.step, ModelHandle.forward); training loops keep one and refill it.
import { WfError } from './errors.js';
import { checkKeys } from './options.js';
import { int32Ids } from './runtime.js';
import { STRUCTS, writeStruct } from './structs.js';

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

const ARRAYS = STRUCTS.batch.fields.filter((f) => f.type === 'ptr').map((f) => f.name);
/** The keys a batch object may have: the struct's fields (its arrays and B, T, S). */
const BATCH_KEYS = new Set(STRUCTS.batch.fields.map((f) => f.name));
const FLOATS = new Set(['inputVecs', 'targetVecs']);

/** Elements array `name` of batch b has, for a model of width dModel. */
function expected(name, b, dModel) {
  switch (name) {
    case 'inputs': case 'targets': return b.B * b.T;
    case 'inputVecs': case 'targetVecs': return b.B * b.T * dModel;
    case 'lengths': case 'srcLengths': return b.B;
    default: return b.B * (b.S ?? 0); // src
  }
}

function checkShape(B, T) {
  // the core's words for the same refusal (model.c check_batch)
  if (!Number.isInteger(B) || !Number.isInteger(T)) throw new WfError('WF_ERR_ARG', `batch shape ${B} x ${T}: both must be integers`);
  if (B < 1 || T < 1) throw new WfError('WF_ERR_ARG', `batch shape ${B} x ${T}: both must be >= 1`);
}

export class HeapBatch {
  #rt;
  #owned = [];
  #fields = { B: 0, T: 0, S: 0 }; // what the struct holds: pointers and shape
  /** The wf_batch's address. */
  ptr = 0;

  /** @internal use HeapBatch.copy or HeapBatch.ids */
  constructor(rt) { this.#rt = rt; }

  /**
   * A batch copied into the heap from JavaScript arrays (each array's length checked
   * against B, T, S and dModel; ids and lengths must be int32 integers (int32Ids); their
   * range, and the vectors' values, are the core's to check).
   * @param {import('./runtime.js').Runtime} rt
   * @param {Batch} batch
   * @param {number} dModel the model's width (for vector inputs and targets)
   */
  static copy(rt, batch, dModel) {
    checkKeys(batch, BATCH_KEYS, 'the batch');
    if (!batch) throw new WfError('WF_ERR_ARG', `the batch must be an object ({inputs, targets, B, T, ...}), not ${batch}`);
    checkShape(batch.B, batch.T);
    const hb = new HeapBatch(rt);
    try {
      for (const k of ARRAYS) {
        const v = batch[k];
        if (v === undefined || v === null) continue;
        const n = expected(k, batch, dModel);
        if (v.length !== n) throw new WfError('WF_ERR_ARG', `batch.${k} has ${v.length} values; B, T, S and dModel make it ${n}`);
        const ints = FLOATS.has(k) ? null : int32Ids(v, `batch.${k} value`, k.endsWith('engths') ? 'WF_ERR_ARG' : 'WF_ERR_TOKEN');
        const p = hb.#take(n * 4);
        if (ints) rt.i32.set(ints, p >>> 2); else rt.f32.set(v, p >>> 2);
        hb.#fields[k] = p;
      }
      hb.#place({ B: batch.B, T: batch.T, S: batch.S ?? 0 });
    } catch (e) {
      hb.free();
      throw e;
    }
    return hb;
  }

  /** Room for B x T input and target ids (the `inputs` and `targets` addresses), filled by
   * the caller before each use: a training or evaluation loop's batch. */
  static ids(rt, B, T) {
    const hb = new HeapBatch(rt);
    try {
      hb.#fields.inputs = hb.#take(B * T * 4);
      hb.#fields.targets = hb.#take(B * T * 4);
      hb.#place({ B, T, S: 0 });
    } catch (e) {
      hb.free();
      throw e;
    }
    return hb;
  }

  /** The addresses of the input and target ids (0 for none). */
  get inputs() { return this.#fields.inputs ?? 0; }
  get targets() { return this.#fields.targets ?? 0; }
  /** The shape the struct holds. */
  get B() { return this.#fields.B; }
  get T() { return this.#fields.T; }

  /** Sets B and T (within the room the batch was made with). */
  shape(B, T) { this.#place({ B, T }); }

  #take(bytes) {
    const p = this.#rt.alloc(bytes);
    this.#owned.push(p);
    return p;
  }

  #place(values) {
    Object.assign(this.#fields, values);
    if (!this.ptr) this.ptr = this.#take(STRUCTS.batch.size);
    writeStruct(this.#rt, STRUCTS.batch, this.ptr, this.#fields);
  }

  /** Frees the struct and every array it owns. */
  free() {
    for (const p of this.#owned) this.#rt.free(p);
    this.#owned = [];
    this.ptr = 0;
  }
}
