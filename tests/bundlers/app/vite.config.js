// wasmformer under Vite (docs/BUNDLERS.md): the package's worker, wasm and threaded glue are
// found by new URL(..., import.meta.url), which Vite follows in a build; its dev server must
// serve the package as it is rather than pre-bundle it, and both servers send the headers
// that make the page cross-origin isolated (threads).
const isolation = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

export default {
  optimizeDeps: { exclude: ['wasmformer'] },
  server: { headers: isolation },
  preview: { headers: isolation },
};
