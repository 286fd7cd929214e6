// wasmformer for browsers and bundlers: the wasm file is found next to the glue module
// through new URL(..., import.meta.url), or passed as wasmUrl / wasmBinary.
import { makeApi } from './loader.js';

export { WfError } from './runtime.js';
export { Model, PRESETS, resolveConfig } from './model.js';
export { Tokenizer } from './tokenizer.js';

const api = makeApi(null);
export const { load, createModel, createTokenizer, checkConfig, estimateMemory } = api;
