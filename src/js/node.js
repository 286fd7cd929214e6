// wasmformer for Node: the wasm bytes are read from the package with fs (Emscripten
// 3.1.6's glue cannot fetch them in Node). Checkpoints go to and from files atomically.
// createWorkerModel runs the model in a worker_threads Worker, as the browser entry does
// in a Web Worker.
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { makeApi } from './loader.js';
import { saveModel, loadModel as loadModelWith } from './checkpoint.js';
import { Tokenizer } from './tokenizer.js';
import { WorkerModel } from './worker-client.js';

export { WfError } from './runtime.js';
export { Model, PRESETS, resolveConfig } from './model.js';
export { Tokenizer };
export { saveModel };
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

/** A model from checkpoint bytes (Uint8Array, ArrayBuffer or Buffer), with its tokenizer.
 * Options are load()'s. @example const model = await loadModel(bytes); */
export async function loadModel(bytes, opts = {}) {
  return loadModelWith(await load(opts), bytes);
}

/** A tokenizer from the bytes of a tokenizer file. @example const tok = await loadTokenizer(bytes); */
export async function loadTokenizer(bytes, opts = {}) {
  return Tokenizer.load(await load(opts), bytes);
}

/**
 * Writes the model's checkpoint to path atomically: into a temporary file in the same
 * directory, fsync'ed, then renamed over path, so a crash leaves the old file or the new
 * one, never half of one. Options are saveModel's ({optimizer = true}). Resolves to the
 * number of bytes written.
 * @example await saveModelFile(model, 'model.wf');
 */
export async function saveModelFile(model, path, opts = {}) {
  const bytes = saveModel(model, opts); // synchronous: the state of this moment
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
  const fh = await open(tmp, 'wx');
  try {
    try {
      await fh.writeFile(bytes);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (e) {
    await unlink(tmp).catch(() => {});
    throw e;
  }
  // make the rename itself durable; some platforms cannot open a directory, which is fine
  try {
    const d = await open(dir, 'r');
    try { await d.sync(); } finally { await d.close(); }
  } catch { /* best effort */ }
  return bytes.length;
}

/** A model from a checkpoint file. @example const model = await loadModelFile('model.wf'); */
export async function loadModelFile(path, opts = {}) {
  return loadModel(await readFile(path), opts);
}

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

/** loadModel in a worker thread. The bytes are copied once, then transferred. */
export function loadWorkerModel(bytes, opts = {}) {
  const copy = bytes instanceof ArrayBuffer ? new Uint8Array(bytes.slice(0)) : new Uint8Array(bytes);
  return WorkerModel.start(workerPort(startWorker()), 'load', [copy, workerLoadOpts(opts)], [copy.buffer]);
}
