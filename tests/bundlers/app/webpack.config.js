// wasmformer under webpack 5 (docs/BUNDLERS.md): webpack follows new URL(..., import.meta.url)
// and new Worker(new URL(...)) by itself; nothing to configure but the entry and the output.
// The server that hosts the output sends COOP/COEP for threads.
import { fileURLToPath } from 'node:url';

export default {
  mode: 'production',
  entry: './main.js',
  output: { path: fileURLToPath(new URL('./webpack-out', import.meta.url)), clean: true },
};
