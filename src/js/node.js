// wasmformer for Node: the wasm bytes are read from the package with fs (Emscripten
// 3.1.6's glue cannot fetch them in Node).
import { readFile } from 'node:fs/promises';
import { makeApi } from './loader.js';

export { WfError } from './runtime.js';
export { Model, PRESETS, resolveConfig } from './model.js';
export { Tokenizer } from './tokenizer.js';
export { Encoder, ENCODER_DEFAULTS } from './encoder.js';
export { Seq2Seq, SEQ2SEQ_DEFAULTS } from './seq2seq.js';

const api = makeApi(() => readFile(new URL('../../dist/wasmformer.wasm', import.meta.url)));
export const { load, createModel, createEncoder, createSeq2Seq, createTokenizer, checkConfig, estimateMemory } = api;
