// The worker thread behind createWorkerModel in Node (node.js): one model, served over
// messages, exactly as worker.js does in browsers.
import { parentPort } from 'node:worker_threads';
import * as api from './node.js';
import { serveModel } from './worker-host.js';

serveModel(api, {
  post: (msg, transfer) => parentPort.postMessage(msg, transfer),
  listen: (fn) => parentPort.on('message', fn),
});
