// wasmformer for Node: the wasm bytes are read from the package with fs (Emscripten
// 3.1.6's glue cannot fetch them in Node). Node always has threads: the threaded build is
// the default (threads: 1 picks the single-thread one).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { makeApi } from './loader.js';

export { WfError } from './runtime.js';
export { Model, PRESETS, resolveConfig } from './model.js';
export { Tokenizer } from './tokenizer.js';

const dist = new URL('../../dist/', import.meta.url);

/** The threaded glue of Emscripten 3.1.6 is CommonJS-minded: it looks for `require` and
 * `__dirname` as globals while it instantiates, and registers process-wide handlers for
 * uncaught exceptions and rejections that rethrow. Lend it the globals for the duration,
 * then take back exactly what it added. Its Web Workers are unref'd so that they do not
 * keep the process alive (they sleep between jobs; wf_model_free joins the threads). */
async function aroundThreadedLoad(create) {
  const lent = {};
  if (typeof globalThis.require === 'undefined') lent.require = createRequire(import.meta.url);
  if (typeof globalThis.__dirname === 'undefined') lent.__dirname = fileURLToPath(dist);
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

const api = makeApi({
  threads: () => (os.availableParallelism ? os.availableParallelism() : os.cpus().length),
  binary: (file) => readFile(new URL(file, dist)),
  aroundThreadedLoad,
});
export const { load, createModel, createTokenizer, checkConfig, estimateMemory } = api;
