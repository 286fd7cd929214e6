// Every C struct that crosses the boundary, as JavaScript sees it in the wasm32 heap: its
// fields in order with their C name and type (a scalar, or a struct inside it); offsets and
// sizes follow from the C rules (natural alignment, 4-byte pointers). wf_config and wf_optim come from the config table.
// tests/js/structs.test.mjs compiles a C program from these layouts with emcc and holds
// every offset, size and type against include/wasmformer.h.
import { CONFIG_TABLE, OPTIM_TABLE } from './config-table.js';

const SIZE = { i32: 4, u32: 4, f32: 4, f64: 8, ptr: 4 };
const STORAGE = { enum: 'i32', bool: 'i32', int: 'i32', seed: 'u32', real: 'f32' }; // config-table.js's types

/** A layout from [jsName, cName, type, count = 1] rows, type a scalar's name or a layout
 * (a struct inside the struct): {c, fields: [{name, c, type, count, offset}], size, align}. */
function layout(c, rows) {
  let offset = 0, align = 1;
  const fields = rows.map(([name, cName, type, count = 1]) => {
    const size = typeof type === 'string' ? SIZE[type] : type.size, a = typeof type === 'string' ? size : type.align;
    offset = Math.ceil(offset / a) * a;
    align = Math.max(align, a);
    const f = { name, c: cName, type, count, offset };
    offset += size * count;
    return f;
  });
  return { c, fields, size: Math.ceil(offset / align) * align, align };
}

const fromTable = (table) => table.map((r) => [r.js, r.name, STORAGE[r.type]]);

const memory = layout('wf_memory', ['params', 'grads', 'optimizer', 'activations', 'inference', 'total', 'count', 'budget'].map((k) => [k, k, 'f64']));
const run = layout('wf_run', [['steps', 'steps', 'i32'], ['seconds', 'seconds', 'f32'], ['warmup', 'warmup', 'i32'],
  ['decaySteps', 'decay_steps', 'i32'], ['warmupFraction', 'warmup_fraction', 'f32'], ['valFraction', 'val_fraction', 'f32'],
  ['evalInterval', 'eval_interval', 'i32'], ['evalBatches', 'eval_batches', 'i32'], ['batchSize', 'batch_size', 'i32'],
  ['context', 'context', 'i32'], ['rollback', 'rollback', 'i32'], ['seed', 'seed', 'i32']]);

export const STRUCTS = {
  config: layout('wf_config', fromTable(CONFIG_TABLE)),
  optim: layout('wf_optim', fromTable(OPTIM_TABLE)),
  stepInfo: layout('wf_step_info', [['loss', 'loss', 'f32'], ['gradNorm', 'grad_norm', 'f32'], ['lr', 'lr', 'f32'], ['step', 'step', 'i32']]),
  sampling: layout('wf_sampling', [['temperature', 'temperature', 'f32'], ['topK', 'top_k', 'i32'], ['topP', 'top_p', 'f32'], ['nVocab', 'n_vocab', 'i32'], ['noUnk', 'no_unk', 'i32']]),
  memory,
  run,
  runFacts: layout('wf_run_facts', [['step', 'step', 'i32'], ['steps', 'steps', 'i32'], ['seconds', 'seconds', 'f64'], ['run', 'run', run],
    ['loss', 'loss', 'f32'], ['gradNorm', 'grad_norm', 'f32'], ['lr', 'lr', 'f32'], ['valStep', 'val_step', 'i32'],
    ['valTokens', 'val_tokens', 'i32'], ['valLoss', 'val_loss', 'f64'], ['finished', 'finished', 'i32'], ['diverged', 'diverged', 'i32'],
    ['refused', 'refused', 'i32'], ['at', 'at', 'i32'], ['measured', 'measured', 'f32'], ['limit', 'limit', 'f32'], ['backup', 'backup', 'i32']]),
  modelInfo: layout('wf_model_info', [['memory', 'memory', memory], ['nTensors', 'n_tensors', 'i32'], ['step', 'step', 'i32'],
    ['lr', 'lr', 'f32'], ['threads', 'threads', 'i32'], ['origin', 'origin', 'i32']]),
  tokenizerInfo: layout('wf_tokenizer_info', [['kind', 'kind', 'i32'], ['vocabSize', 'vocab_size', 'i32'], ['maxBytes', 'max_bytes', 'i32'], ['bos', 'bos', 'i32']]),
  batch: layout('wf_batch', [
    ['inputs', 'inputs', 'ptr'], ['inputVecs', 'input_vecs', 'ptr'], ['lengths', 'lengths', 'ptr'],
    ['targets', 'targets', 'ptr'], ['targetVecs', 'target_vecs', 'ptr'], ['src', 'src', 'ptr'],
    ['srcLengths', 'src_lengths', 'ptr'], ['B', 'B', 'i32'], ['T', 'T', 'i32'], ['S', 'S', 'i32'],
  ]),
  tensorInfo: layout('wf_tensor_info', [['name', 'name', 'ptr'], ['offset', 'offset', 'i32'], ['size', 'size', 'i32'],
    ['ndim', 'ndim', 'i32'], ['shape', 'shape', 'i32', 4], ['decay', 'decay', 'i32'], ['layers', 'layers', 'i32'],
    ['gradOffset', 'grad_offset', 'i32']]),
};

/** The heap view of a field type: one of i32, u32, f32, f64 (pointers are u32). */
function view(heap, type) {
  return type === 'ptr' ? heap.u32 : heap[type];
}

/** The struct at p as a plain object (numbers; arrays for fields of count > 1). heap has
 * the views i32, u32, f32, f64 of the wasm memory. */
export function readStruct(heap, s, p) {
  const out = {};
  for (const f of s.fields) {
    if (typeof f.type === 'object') {
      out[f.name] = readStruct(heap, f.type, p + f.offset);
      continue;
    }
    const v = view(heap, f.type), i = (p + f.offset) / (f.type === 'f64' ? 8 : 4);
    out[f.name] = f.count === 1 ? v[i] : Array.from(v.subarray(i, i + f.count));
  }
  return out;
}

/** Writes values (by JS name; a missing one is 0) into the struct at p. */
export function writeStruct(heap, s, p, values) {
  for (const f of s.fields) {
    if (typeof f.type === 'object') {
      writeStruct(heap, f.type, p + f.offset, values[f.name] ?? {});
      continue;
    }
    const v = view(heap, f.type), i = (p + f.offset) / (f.type === 'f64' ? 8 : 4);
    const x = values[f.name] ?? 0;
    if (f.count === 1) v[i] = f.type === 'ptr' || f.type === 'u32' ? x >>> 0 : x;
    else v.set(x, i);
  }
}

/** values as the struct holds them once written (float32 rounding, int32 wrapping), read
 * back without touching the wasm heap. */
export function roundTrip(s, values) {
  const buf = new ArrayBuffer(Math.ceil(s.size / 8) * 8);
  const heap = { i32: new Int32Array(buf), u32: new Uint32Array(buf), f32: new Float32Array(buf), f64: new Float64Array(buf) };
  writeStruct(heap, s, 0, values);
  return readStruct(heap, s, 0);
}
