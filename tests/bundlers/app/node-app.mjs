// The Node app esbuild bundles (--platform=node): a model in a worker thread trains a few
// steps. Bundled into one file, the package's files are where the app says (distUrl, and a
// worker bundled from 'wasmformer/worker'); left external, node_modules has them.
import { Worker } from 'node:worker_threads';
import { createWorkerModel } from 'wasmformer';

const bundled = process.argv[2] === 'bundled';
const opts = bundled ? { distUrl: new URL('./wasmformer/', import.meta.url), worker: new Worker(new URL('./worker.mjs', import.meta.url)) } : {};
const wm = await createWorkerModel('micro', { threads: 2, ...opts });
const summary = await wm.train('the cat sat on the mat. '.repeat(300), { steps: 5, evalInterval: 0 });
const { threads, simd } = await wm.info();
wm.dispose();
console.log(JSON.stringify({ threads, simd, step: summary.step, loss: summary.loss }));
