// The Web Worker script behind createWorkerModel (worker.js): it serves one model over
// messages and exports nothing. Import it only to bundle it, or pass its URL to new Worker().
export {};
