#!/usr/bin/env node
// Step 3 in a browser (README.md here): serves the page in web/ beside the package and a model
// folder, so that the model PyTorch trained generates in a tab. Cross-origin isolated
// (scripts/serve.mjs's COOP/COEP headers), so the threaded wasm build runs.
//
//   node examples/pytorch/browser.mjs run/pytorch [--port 8080]
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startServer } from '../../scripts/serve.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

/** Starts the server for the model folder dir; resolves to scripts/serve.mjs's handle. */
export function serveExample(dir, opts = {}) {
  return startServer({
    ...opts,
    mounts: { '/pkg/src/js/': here('../../src/js'), '/pkg/dist/': here('../../dist'), '/model/': resolve(dir), '/': here('web') },
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values: o, positionals } = parseArgs({ allowPositionals: true, options: { port: { type: 'string', default: '8080' } } });
  if (positionals.length !== 1) {
    console.error('usage: node examples/pytorch/browser.mjs DIR [--port 8080]');
    process.exit(2);
  }
  const site = await serveExample(positionals[0], { port: Number(o.port) });
  console.log(`${site.origin}/ : the model in ${positionals[0]}, generating in the browser (Ctrl-C stops)`);
}
