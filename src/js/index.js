// wasmformer for browsers and bundlers: the wasm file is found next to the glue module
// through new URL(..., import.meta.url), or passed as wasmUrl / wasmBinary. The threaded
// build needs SharedArrayBuffer, which browsers give only to crossOriginIsolated pages
// (COOP + COEP headers); elsewhere the single-thread build loads.
import { makeApi } from './loader.js';
import { saveModel, loadModel as loadModelWith } from './checkpoint.js';
import { exportSafetensors, importSafetensors as importSafetensorsWith } from './safetensors.js';
import { Tokenizer } from './tokenizer.js';

export { WfError } from './runtime.js';
export { Model, PRESETS, resolveConfig } from './model.js';
export { Tokenizer };
export { Encoder, ENCODER_DEFAULTS } from './encoder.js';
export { Seq2Seq, SEQ2SEQ_DEFAULTS } from './seq2seq.js';
export { saveModel, exportSafetensors };

const api = makeApi({
  threads: () => (globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function'
    ? (globalThis.navigator?.hardwareConcurrency ?? 1) : 1),
  binary: null,
});
export const { load, createModel, createEncoder, createSeq2Seq, createTokenizer, checkConfig, estimateMemory } = api;

/** A model from checkpoint bytes (Uint8Array, ArrayBuffer or Buffer), with its tokenizer.
 * Options are load()'s. @example const model = await loadModel(bytes); */
export async function loadModel(bytes, opts = {}) {
  const rt = await load(opts);
  return api.useThreads(rt, loadModelWith(rt, bytes));
}

/** A model from Hugging Face files {'config.json', 'model.safetensors', ['tokenizer.wft']}.
 * @example const model = await importSafetensors({ 'config.json': text, 'model.safetensors': bytes }); */
export async function importSafetensors(files, opts = {}) {
  const rt = await load(opts);
  return api.useThreads(rt, importSafetensorsWith(rt, files));
}

/** A tokenizer from the bytes of a tokenizer file. @example const tok = await loadTokenizer(bytes); */
export async function loadTokenizer(bytes, opts = {}) {
  return Tokenizer.load(await load(opts), bytes);
}
