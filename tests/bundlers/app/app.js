// The app every bundler builds (tests/bundlers/bundlers.test.mjs): a model in a worker trains
// a few steps, and the page reports what it ran on. opts are createWorkerModel's (esbuild's
// entry passes distUrl and its own worker).
import { createWorkerModel } from 'wasmformer';

export async function run(opts = {}) {
  const wm = await createWorkerModel('micro', { threads: 2, ...opts });
  try {
    const summary = await wm.train('the cat sat on the mat. '.repeat(300), { steps: 5, evalInterval: 0 });
    const { threads, simd } = await wm.info();
    return { isolated: globalThis.crossOriginIsolated === true, threads, simd, step: summary.step, loss: summary.loss };
  } finally {
    wm.dispose();
  }
}

/** Where the test reads the outcome. */
export function report(promise) {
  promise.then((r) => { globalThis.__result = r; }, (e) => { globalThis.__result = { error: String(e?.stack ?? e) }; });
}
