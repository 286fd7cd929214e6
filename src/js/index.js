// wasmformer for browsers and bundlers: the wasm file is found next to the glue module
// through new URL(..., import.meta.url), or passed as wasmUrl / wasmBinary.
import { makeApi } from './loader.js';

export { WfError } from './runtime.js';
export { Model, PRESETS, resolveConfig } from './model.js';
export { Tokenizer } from './tokenizer.js';
export { Encoder, ENCODER_DEFAULTS } from './encoder.js';
export { Seq2Seq, SEQ2SEQ_DEFAULTS } from './seq2seq.js';

const api = makeApi(null);
export const { load, createModel, createEncoder, createSeq2Seq, createTokenizer, checkConfig, estimateMemory } = api;
