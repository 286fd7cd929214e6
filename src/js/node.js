// wasmformer for Node: the wasm bytes are read from the package with fs (Emscripten
// 3.1.6's glue cannot fetch them in Node). createWorkerModel runs the model in a
// worker_threads Worker, as the browser entry does in a Web Worker.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { makeApi } from './loader.js';
import { WorkerModel } from './worker-client.js';

export { WfError } from './runtime.js';
export { Model, PRESETS, resolveConfig } from './model.js';
export { Tokenizer } from './tokenizer.js';
export { WorkerModel } from './worker-client.js';

// wasmUrl may be a path, a file: URL, or an http(s) URL the caller chose.
async function readWasm(url) {
  if (/^https?:/.test(url)) {
    const res = await fetch(url);
    if (!res.ok) throw new Error(`HTTP ${res.status} for ${url}`);
    return new Uint8Array(await res.arrayBuffer());
  }
  return readFile(url.startsWith('file:') ? fileURLToPath(url) : url);
}

const api = makeApi({ wasmUrl: new URL('../../dist/wasmformer.wasm', import.meta.url), readWasm });
export const { load, createModel, createTokenizer, checkConfig, estimateMemory } = api;

// A port over a worker_threads Worker (see worker-host.js for the protocol). The worker
// keeps the process alive only while a call is pending.
function workerPort(worker) {
  worker.unref();
  return {
    post: (msg, transfer) => worker.postMessage(msg, transfer),
    listen: (fn) => worker.on('message', fn),
    onError: (fn) => {
      worker.on('error', fn);
      worker.on('exit', (code) => fn(new Error(`the worker thread exited (code ${code})`)));
    },
    terminate: () => { worker.terminate(); },
    ref: () => worker.ref(),
    unref: () => worker.unref(),
  };
}

function workerLoadOpts(opts) {
  const out = { ...opts };
  if (out.wasmUrl instanceof URL) out.wasmUrl = out.wasmUrl.href;
  return out;
}

const startWorker = () => new Worker(new URL('./node-worker.js', import.meta.url));

/** createModel in a worker thread: same API, every method async. */
export function createWorkerModel(config = 'tiny', opts = {}) {
  return WorkerModel.start(workerPort(startWorker()), 'create', [config, workerLoadOpts(opts)]);
}
