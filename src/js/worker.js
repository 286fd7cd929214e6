// The Web Worker behind createWorkerModel (index.js): one model, served over messages.
import * as api from './index.js';
import { serveModel } from './worker-host.js';

serveModel(api, {
  post: (msg, transfer) => self.postMessage(msg, transfer),
  listen: (fn) => self.addEventListener('message', (e) => fn(e.data)),
});
