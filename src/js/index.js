// wasmformer for browsers and bundlers. The wasm file is found next to the glue module
// through new URL(..., import.meta.url), which bundlers (Vite, webpack, Rollup) follow and
// copy; pass wasmUrl or wasmBinary to load it from elsewhere. Nothing is fetched from any
// other host.
import { makeApi } from './loader.js';

export * from './api.js';

// A port over a Web Worker (see worker-host.js for the protocol): opts.worker, or a new one.
function workerPort(opts) {
  // one literal expression, so that bundlers see the worker and bundle it
  const worker = opts.worker ?? new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
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

export const {
  load, createModel, createEncoder, createSeq2Seq, createTokenizer, checkConfig, estimateMemory, loadModel,
  importSafetensors, importLlama2c, loadTokenizer, createWorkerModel, loadWorkerModel, importWorkerSafetensors, createWorkerSeq2Seq,
  loadWorkerSeq2Seq,
} = makeApi({
  readWasm: async () => undefined, // the glue fetches it
  // the threaded build needs SharedArrayBuffer: only crossOriginIsolated pages (COOP + COEP)
  threads: () => (globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function'
    ? (globalThis.navigator?.hardwareConcurrency ?? 1) : 1),
  workerPort,
  workerLoadOpts,
});
