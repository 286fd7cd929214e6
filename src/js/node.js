// wasmformer for Node: the wasm bytes are read from the package with fs (Emscripten
// 3.1.6's glue cannot fetch them in Node).
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { makeApi } from './loader.js';
import { saveModel, loadModel as loadModelWith } from './checkpoint.js';
import { Tokenizer } from './tokenizer.js';

export { WfError } from './runtime.js';
export { Model, PRESETS, resolveConfig } from './model.js';
export { Tokenizer };
export { saveModel };

const api = makeApi(() => readFile(new URL('../../dist/wasmformer.wasm', import.meta.url)));
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
