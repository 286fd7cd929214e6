// Types of the Node entry (node.js): the same API as the browser entry (index.d.ts), where
// the file helpers (loadModelFile, saveModelFile, exportSafetensorsDir, ...) are declared
// too, so that every moduleResolution sees one API. In Node, wasmUrl and distUrl may also
// be paths or file: URLs, and createWorkerModel uses a worker thread.
export * from './index.js';
