// wasmformer for browsers and bundlers: the wasm file is found next to the glue module
// through new URL(..., import.meta.url), or passed as wasmUrl / wasmBinary. The threaded
// build needs SharedArrayBuffer, which browsers give only to crossOriginIsolated pages
// (COOP + COEP headers); elsewhere the single-thread build loads.
import { makeApi } from './loader.js';

export { WfError } from './runtime.js';
export { Model, PRESETS, resolveConfig } from './model.js';
export { Tokenizer } from './tokenizer.js';

const api = makeApi({
  threads: () => (globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function'
    ? (globalThis.navigator?.hardwareConcurrency ?? 1) : 1),
  binary: null,
});
export const { load, createModel, createTokenizer, checkConfig, estimateMemory } = api;
