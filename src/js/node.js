// wasmformer for Node: the wasm bytes are read from the package with fs (Emscripten
// 3.1.6's glue cannot fetch them in Node). Checkpoints and safetensors go to and from
// files atomically. createWorkerModel runs the model in a worker_threads Worker, as the
// browser entry does in a Web Worker.
import { createHash } from 'node:crypto';
import { lstat, mkdir, open, readFile, readlink, rename, stat, unlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { WfError } from './errors.js';
import { makeApi } from './loader.js';
import { exportSafetensors } from './safetensors.js';
import { PIECE } from './source.js';

export * from './api.js';

// wasmUrl may be a path, a file: URL, or an http(s) URL the caller chose.
async function readWasm(url) {
  if (/^https?:/.test(url)) {
    const res = await fetch(url);
    if (!res.ok) throw new Error(`HTTP ${res.status} for ${url}`);
    return new Uint8Array(await res.arrayBuffer());
  }
  return readFile(url.startsWith('file:') ? fileURLToPath(url) : url);
}

/** The threaded glue of Emscripten 3.1.6 is CommonJS-minded: it looks for `require` and
 * `__dirname` as globals while it instantiates, and registers process-wide handlers for
 * uncaught exceptions and rejections that rethrow. Lend it the globals for the duration,
 * then take back exactly what it added. Its Web Workers are unref'd so that they do not
 * keep the process alive (they sleep between jobs; wf_model_free joins the threads). */
async function aroundThreadedLoad(create, glueUrl) {
  const lent = {};
  if (typeof globalThis.require === 'undefined') lent.require = createRequire(glueUrl);
  if (typeof globalThis.__dirname === 'undefined') lent.__dirname = fileURLToPath(new URL('.', glueUrl));
  const events = ['uncaughtException', 'unhandledRejection'];
  const before = Object.fromEntries(events.map((e) => [e, process.listeners(e)]));
  Object.assign(globalThis, lent);
  try {
    const M = await create();
    for (const w of [...M.PThread.unusedWorkers, ...M.PThread.runningWorkers]) w.unref?.();
    return M;
  } finally {
    for (const k of Object.keys(lent)) delete globalThis[k];
    for (const e of events) for (const l of process.listeners(e)) if (!before[e].includes(l)) process.removeListener(e, l);
  }
}

// A port over a worker_threads Worker (see worker-host.js for the protocol): opts.worker (one
// started on 'wasmformer/worker', e.g. from a bundle), or a new one. The worker keeps the
// process alive only while a call is pending.
function workerPort(opts) {
  const worker = opts.worker ?? new Worker(new URL('./node-worker.js', import.meta.url));
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

// Worker options cross a thread: URLs become strings.
function workerLoadOpts(opts) {
  const out = { ...opts };
  delete out.worker;
  for (const k of ['wasmUrl', 'distUrl']) if (out[k] instanceof URL) out[k] = out[k].href;
  return out;
}

// distUrl: a folder, as a path (relative to the working directory) or a file: URL
const folderUrl = (dir) => (dir instanceof URL || /^[a-z][a-z0-9+.-]+:\/\//i.test(dir)
  ? new URL(String(dir).replace(/\/?$/, '/')) : pathToFileURL(`${resolve(dir)}/`));

// Node always has threads: the threaded build is the default (threads: 1 picks the other).
export const {
  load, createModel, createEncoder, createSeq2Seq, createTokenizer, checkConfig, estimateMemory, loadModel,
  importSafetensors, importLlama2c, loadTokenizer, createWorkerModel, loadWorkerModel, importWorkerSafetensors, createWorkerSeq2Seq,
  loadWorkerSeq2Seq,
} = makeApi({
  readWasm,
  // WASMFORMER_SIMD=simd128 (or relaxed) picks the kernel set for a whole program (the CLI)
  simd: () => process.env.WASMFORMER_SIMD || undefined,
  threads: () => (os.availableParallelism ? os.availableParallelism() : os.cpus().length),
  aroundThreadedLoad,
  workerPort,
  workerLoadOpts,
  folderUrl,
});

/**
 * Writes the model's checkpoint to path atomically: into a temporary file in the same
 * directory, fsync'ed, then renamed over path, so a crash leaves the old file or the new
 * one, never half of one. A path that is a symbolic link writes the file it points to (the
 * link stays). Options are saveModel's ({optimizer = true}). Resolves to the number of
 * bytes written. A failure is Node's error (code ENOENT, EACCES, EROFS, ENOSPC...) with a
 * message naming path.
 * @example await saveModelFile(model, 'model.wf');
 */
export async function saveModelFile(model, path, opts = {}) {
  // a Model saves synchronously (the state of this moment); a WorkerModel's save() resolves
  const bytes = await model.save(opts);
  await writeAtomic(path, bytes);
  return bytes.length;
}

/** What a file-system error code means, in words (the rest keep Node's message). */
const FS_REASONS = {
  ENOENT: 'its folder does not exist', EACCES: 'permission denied', EPERM: 'operation not permitted',
  EROFS: 'the file system is read-only', ENOSPC: 'no space left on the device', EDQUOT: 'the disk quota is exhausted',
  EISDIR: 'it is a folder', ENOTDIR: 'a part of the path is a file, not a folder', ELOOP: 'too many levels of symbolic links',
};

/** Node's error e about a file the caller did not name (a temporary file, a link's
 * target) as one about `path`: the same code, errno and syscall, the original as its cause. */
function aboutPath(e, path, verb = 'write') {
  const reason = FS_REASONS[e.code] ?? e.message;
  return Object.assign(new Error(`cannot ${verb} ${path}: ${reason}${FS_REASONS[e.code] ? ` (${e.code})` : ''}`, { cause: e }),
    { code: e.code, errno: e.errno, syscall: e.syscall, path });
}

/** The file a path writes: path itself, or, for a symbolic link (a chain of them), the
 * file at its end, which need not exist yet. */
async function linkTarget(path) {
  let at = path;
  for (let hops = 0; hops < 40; hops++) {
    let st;
    try {
      st = await lstat(at);
    } catch (e) {
      if (e.code === 'ENOENT') return at;
      throw e;
    }
    if (!st.isSymbolicLink()) return at;
    at = resolve(dirname(at), await readlink(at));
  }
  throw Object.assign(new Error(`${path}: too many levels of symbolic links`), { code: 'ELOOP' });
}

/** Writes bytes to path through a temporary file in the same directory as the file it
 * names (a link's target), fsync and rename: the old file or the new one, never half. */
async function writeAtomic(path, bytes) {
  let target, fh, tmp;
  try {
    target = await linkTarget(path);
    tmp = join(dirname(target), `.${basename(target)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
    fh = await open(tmp, 'wx');
  } catch (e) {
    throw aboutPath(e, path);
  }
  const dir = dirname(target);
  try {
    try {
      await fh.writeFile(bytes);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, target);
  } catch (e) {
    await unlink(tmp).catch(() => {});
    throw aboutPath(e, path);
  }
  // make the rename itself durable; some platforms cannot open a directory, which is fine
  try {
    const d = await open(dir, 'r');
    try { await d.sync(); } finally { await d.close(); }
  } catch { /* best effort */ }
}

/**
 * Makes the folder dir and any missing parents, one at a time: mkdir's recursive mode loops
 * forever where a parent exists but refuses new entries with ENOENT (procfs: /proc/exp).
 * A folder that cannot be made is a WF_ERR_ARG naming it, with Node's error as its cause.
 */
async function makeDir(dir) {
  const missing = [];
  const refuse = (e, at, reason = `${FS_REASONS[e.code] ?? e.message}${FS_REASONS[e.code] ? ` (${e.code})` : ''}`) => Object.assign(
    new WfError('WF_ERR_ARG', `cannot create the folder ${dir}: ${at === resolve(dir) ? '' : `${at}: `}${reason}`), e ? { cause: e } : {});
  for (let at = resolve(dir); ; at = dirname(at)) {
    let st = null;
    try {
      st = await stat(at);
    } catch (e) {
      if (e.code !== 'ENOENT') throw refuse(e, at);
    }
    if (st) {
      if (!st.isDirectory()) throw refuse(null, at, 'it is a file, not a folder');
      break;
    }
    missing.push(at);
    if (dirname(at) === at) break;
  }
  for (const at of missing.reverse()) {
    try {
      await mkdir(at);
    } catch (e) {
      // made by someone else meanwhile: as good
      if (e.code === 'EEXIST' && (await stat(at).catch(() => null))?.isDirectory()) continue;
      // its parent exists (just made, or found), yet says it does not: a folder that takes
      // no new entries, as /proc
      if (e.code === 'ENOENT') throw refuse(e, at, `${dirname(at)} takes no new folders (mkdir: ENOENT)`);
      throw refuse(e, at);
    }
  }
}

// The record an export leaves in its folder: every file it wrote with its SHA-256, in the
// format of sha256sum (`sha256sum -c wasmformer.sha256` checks the folder). Import reads its
// tokenizer lines: a folder's tokenizer joins the weights only if this export wrote it.
const MANIFEST = 'wasmformer.sha256';
const TOKENIZER_FILES = ['tokenizer.wft', 'tokenizer.json'];
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

/**
 * Writes the model as Hugging Face files into dir (created if missing): model.safetensors,
 * config.json and, with a tokenizer, tokenizer.wft (and tokenizer.json for char, BPE and
 * tokenizer.json tokenizers); each written atomically; then wasmformer.sha256, the SHA-256
 * of each. A tokenizer file already in dir is removed first, so that a model without a
 * tokenizer never lands beside an earlier export's. PyTorch loads them as a
 * GPT2LMHeadModel, GPTNeoXForCausalLM or LlamaForCausalLM state dict
 * (tests/pytorch/hf_reference.py shows how without the transformers package). Resolves to
 * the file names.
 * @example await exportSafetensorsDir(model, 'out/');
 */
export async function exportSafetensorsDir(model, dir) {
  const files = exportSafetensors(model);
  await makeDir(dir);
  // the old record and tokenizers go first, the new record comes last: a crash in between
  // leaves no tokenizer paired with weights it was not exported with
  for (const name of [MANIFEST, ...TOKENIZER_FILES]) {
    await unlink(join(dir, name)).catch((e) => { if (e.code !== 'ENOENT') throw aboutPath(e, join(dir, name), 'replace'); });
  }
  for (const [name, data] of Object.entries(files)) await writeAtomic(join(dir, name), data);
  const record = Object.entries(files).map(([name, data]) => `${sha256(typeof data === 'string' ? Buffer.from(data) : data)}  ${name}\n`).join('');
  await writeAtomic(join(dir, MANIFEST), record);
  return [...Object.keys(files), MANIFEST];
}

/** A model from a directory of Hugging Face files (config.json, model.safetensors and, if
 * present, tokenizer.wft or else tokenizer.json). In a folder exportSafetensorsDir wrote
 * (it has wasmformer.sha256), the tokenizer must be the one that export wrote: another is
 * a WF_ERR_FORMAT, never paired with the weights. @example const model = await importSafetensorsDir('out/'); */
export async function importSafetensorsDir(dir, opts = {}) {
  const files = {
    'config.json': await readFolderFile(dir, 'config.json', 'a Hugging Face model folder holds config.json and model.safetensors'),
    'model.safetensors': await readFolderFile(dir, 'model.safetensors', 'a Hugging Face model folder holds config.json and model.safetensors'),
  };
  const record = await readFile(join(dir, MANIFEST), 'utf8').catch((e) => { if (e.code === 'ENOENT') return null; throw e; });
  for (const name of TOKENIZER_FILES) {
    const path = join(dir, name);
    if (await stat(path).then(() => true, () => false)) {
      files[name] = await readFile(path);
      if (record !== null) checkExported(record, dir, name, files[name]);
      break;
    }
  }
  return importSafetensors(files, opts);
}

/** Refuses a tokenizer file that the export whose record (wasmformer.sha256) is in dir did
 * not write: an earlier export's, or one put there since. */
function checkExported(record, dir, name, bytes) {
  const listed = record.split('\n').map((line) => /^([0-9a-f]{64}) [ *](.+)$/.exec(line)).find((m) => m?.[2] === name);
  if (listed && listed[1] === sha256(bytes)) return;
  throw new WfError('WF_ERR_FORMAT', `${join(dir, name)} is not the tokenizer exported with these weights: ${join(dir, MANIFEST)}, `
    + `the export's record, ${listed ? `gives it another SHA-256 (${listed[1].slice(0, 12)}…)` : `lists no ${name}`}. `
    + `Remove ${name} to import the weights alone, or remove ${MANIFEST} to pair them anyway`);
}

/**
 * Writes the model's LoRA adapters in PEFT's layout into dir (created if missing):
 * adapter_model.safetensors and adapter_config.json, each atomically; options as
 * Model.exportPeft. Resolves to the file names.
 * @example await exportPeftDir(model, 'adapter/', { baseModel: 'gpt2' });
 */
export async function exportPeftDir(model, dir, opts) {
  const files = await model.exportPeft(opts); // a WorkerModel's resolves
  await makeDir(dir);
  for (const [name, data] of Object.entries(files)) await writeAtomic(join(dir, name), data);
  return Object.keys(files);
}

/** Puts the PEFT LoRA adapters of a directory (adapter_config.json,
 * adapter_model.safetensors) on the model. @example await importPeftDir(model, 'adapter/'); */
export async function importPeftDir(model, dir) {
  const why = 'a PEFT adapter folder holds adapter_config.json and adapter_model.safetensors';
  return model.importPeft({
    'adapter_config.json': await readFolderFile(dir, 'adapter_config.json', why),
    'adapter_model.safetensors': await readFolderFile(dir, 'adapter_model.safetensors', why),
  });
}

/** A file of a folder the caller named; a folder or file that is not there is a WfError
 * (WF_ERR_ARG) saying which, not fs's ENOENT. */
async function readFolderFile(dir, name, why) {
  const info = await stat(dir).catch(() => null);
  if (!info) throw new WfError('WF_ERR_ARG', `${dir} does not exist (${why})`);
  if (!info.isDirectory()) throw new WfError('WF_ERR_ARG', `${dir} is not a folder (${why})`);
  try {
    return await readFile(join(dir, name));
  } catch (e) {
    if (e.code === 'ENOENT') throw new WfError('WF_ERR_ARG', `${dir} has no ${name} (${why})`);
    throw e;
  }
}

/** The file at path read in pieces of PIECE bytes, each a new Buffer (a piece may be kept
 * while the next is read): an async iterable with the file's size, for loadModel. */
function filePieces(handle, size) {
  return {
    size,
    async* [Symbol.asyncIterator]() {
      for (let at = 0; at < size;) {
        const piece = Buffer.allocUnsafe(Math.min(PIECE, size - at));
        const { bytesRead } = await handle.read(piece, 0, piece.length, at);
        if (bytesRead === 0) return; // the file shrank while it was read: the loader says what is missing
        at += bytesRead;
        yield piece.subarray(0, bytesRead);
      }
    },
  };
}

/** A model from a file (a checkpoint, GGUF or llama2.c file), read in pieces: a GGUF file is
 * never whole in memory. Options are loadModel's (quantize, onProgress, signal...).
 * @example const model = await loadModelFile('smollm-135m-q8_0.gguf'); */
export async function loadModelFile(path, opts = {}) {
  const handle = await open(path, 'r');
  try {
    return await loadModel(filePieces(handle, (await handle.stat()).size), opts);
  } finally {
    await handle.close();
  }
}
