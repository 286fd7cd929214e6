// Types of the Node entry (node.js): everything of the browser entry (index.d.ts). In Node,
// wasmUrl may also be a path or a file: URL, and createWorkerModel uses a worker thread.
export * from './index.js';
