// wasmformer for browsers and bundlers. The wasm files, the threaded builds' glue and their
// pthread workers are found through new URL(..., import.meta.url), which bundlers (Vite,
// webpack, Parcel) follow and copy; pass distUrl (a folder holding dist/'s files), wasmUrl or
// wasmBinary to load them from elsewhere (docs/BUNDLERS.md). Nothing is fetched from any
// other host.
import { WfError } from './errors.js';
import { bundlerHint, makeApi } from './loader.js';

export * from './api.js';

// A port over a Web Worker (see worker-host.js for the protocol): opts.worker, or a new one.
function workerPort(opts) {
  const hint = !opts.worker && bundlerHint(false);
  if (hint) throw new WfError('WF_ERR_LOAD', `the model's worker script is not where the package expects it${hint}`);
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
  for (const k of ['wasmUrl', 'distUrl']) if (out[k]) out[k] = new URL(out[k], globalThis.location?.href).href;
  return out;
}

// distUrl: a folder, relative to the page
const folderUrl = (dir) => new URL(String(dir).replace(/\/?$/, '/'), globalThis.location?.href);

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
  folderUrl,
});

// The Node file helpers, declared for both entries (one API under every TypeScript
// resolution, index.d.ts): in a browser they reject, naming what does the same with bytes.
const nodeOnly = (name, instead) => async () => {
  throw new WfError('WF_ERR_UNSUPPORTED', `${name} reads and writes files with Node's fs, which a browser does not have; here, ${instead}`);
};
export const saveModelFile = nodeOnly('saveModelFile', 'model.save() gives the checkpoint\'s bytes');
export const loadModelFile = nodeOnly('loadModelFile', 'loadModel(bytes) reads them (from fetch() or a file input)');
export const exportSafetensorsDir = nodeOnly('exportSafetensorsDir', 'exportSafetensors(model) gives the files\' bytes');
export const importSafetensorsDir = nodeOnly('importSafetensorsDir', 'importSafetensors(files) reads them');
export const exportPeftDir = nodeOnly('exportPeftDir', 'model.exportPeft() gives the files\' bytes');
export const importPeftDir = nodeOnly('importPeftDir', 'model.importPeft(files) reads them');
