// wasmformer for browsers and bundlers. The wasm file is found next to the glue module
// through new URL(..., import.meta.url), which bundlers (Vite, webpack, Rollup) follow and
// copy; pass wasmUrl or wasmBinary to load it from elsewhere. Nothing is fetched from any
// other host.
import { makeApi } from './loader.js';
import { saveModel, loadModel as loadModelWith } from './checkpoint.js';
import { exportSafetensors, importSafetensors as importSafetensorsWith } from './safetensors.js';
import { Tokenizer } from './tokenizer.js';
import { WorkerModel, WorkerSeq2Seq } from './worker-client.js';

export { WfError } from './runtime.js';
export { Model, PRESETS, resolveConfig } from './model.js';
export { Tokenizer };
export { Encoder, ENCODER_DEFAULTS } from './encoder.js';
export { Seq2Seq, SEQ2SEQ_DEFAULTS } from './seq2seq.js';
export { saveModel, exportSafetensors };
export { WorkerModel, WorkerSeq2Seq } from './worker-client.js';

const api = makeApi({
  wasmUrl: new URL('../../dist/wasmformer.wasm', import.meta.url),
  wasmMtUrl: new URL('../../dist/wasmformer-mt.wasm', import.meta.url),
  readWasm: async () => undefined, // the glue fetches it
  // the threaded build needs SharedArrayBuffer: only crossOriginIsolated pages (COOP + COEP)
  threads: () => (globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function'
    ? (globalThis.navigator?.hardwareConcurrency ?? 1) : 1),
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

// A port over a Web Worker (see worker-host.js for the protocol).
function workerPort(worker) {
  return {
    post: (msg, transfer) => worker.postMessage(msg, transfer),
    listen: (fn) => worker.addEventListener('message', (e) => fn(e.data)),
    onError: (fn) => worker.addEventListener('error', (e) => { e.preventDefault?.(); fn(e.error ?? e); }),
    terminate: () => worker.terminate(),
  };
}

// Worker options cross a thread: URLs become absolute strings.
function workerLoadOpts(opts) {
  const out = { ...opts };
  delete out.worker;
  if (out.wasmUrl) out.wasmUrl = new URL(out.wasmUrl, globalThis.location?.href).href;
  return out;
}

function startWorker(opts) {
  // one literal expression, so that bundlers see the worker and bundle it
  return opts.worker ?? new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
}

/** createModel in a Web Worker: same API, every method async. */
export function createWorkerModel(config = 'tiny', opts = {}) {
  return WorkerModel.start(workerPort(startWorker(opts)), 'create', [config, workerLoadOpts(opts)]);
}

/** loadModel in a Web Worker. The bytes are copied once, then transferred. */
export function loadWorkerModel(bytes, opts = {}) {
  const copy = bytes instanceof ArrayBuffer ? new Uint8Array(bytes.slice(0)) : new Uint8Array(bytes);
  return WorkerModel.start(workerPort(startWorker(opts)), 'load', [copy, workerLoadOpts(opts)], [copy.buffer]);
}

/** createSeq2Seq in a Web Worker: the Seq2Seq API, every method async. */
export function createWorkerSeq2Seq(config = {}, opts = {}) {
  return WorkerSeq2Seq.start(workerPort(startWorker(opts)), 'createSeq2Seq', [config, workerLoadOpts(opts)]);
}

/** An encoder-decoder from checkpoint bytes in a Web Worker. The bytes are copied once, then
 * transferred; a file of another arch fails with WF_ERR_STATE. */
export function loadWorkerSeq2Seq(bytes, opts = {}) {
  const copy = bytes instanceof ArrayBuffer ? new Uint8Array(bytes.slice(0)) : new Uint8Array(bytes);
  return WorkerSeq2Seq.start(workerPort(startWorker(opts)), 'load', [copy, workerLoadOpts(opts), 'seq2seq'], [copy.buffer]);
}
