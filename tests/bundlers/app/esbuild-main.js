// esbuild follows neither new URL(..., import.meta.url) nor new Worker(new URL(...)): the page
// says where it put the package's dist/ files and its worker (docs/BUNDLERS.md).
import { report, run } from './app.js';

report(run({ distUrl: '/wasmformer/', worker: new Worker('/worker.js', { type: 'module' }) }));
