#!/usr/bin/env node
// npm run build:web: the web page as a folder of static files that any static host can
// serve (default build/web/): the page (web/), the package's browser JavaScript and wasm
// builds under pkg/, and the bundled novels under data/, the layout scripts/serve.mjs
// serves from the repository. Builds the wasm first when it is missing or stale.
//
//   node scripts/build-web.mjs [--out build/web]
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Copies the page into out (emptied first); returns {files, bytes}. */
export function buildWeb(out = join(root, 'build/web')) {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  let files = 0, bytes = 0;
  const copy = (from, to, keep) => {
    for (const name of readdirSync(from)) {
      const src = join(from, name);
      if (!statSync(src).isFile() || !keep(name)) continue;
      mkdirSync(to, { recursive: true });
      cpSync(src, join(to, name));
      files++;
      bytes += statSync(src).size;
    }
  };
  copy(join(root, 'web'), out, () => true);
  copy(join(root, 'src/js'), join(out, 'pkg/src/js'), (n) => n.endsWith('.js') && !n.startsWith('node'));
  // both wasm builds where they exist (the threaded one runs when the page is crossOriginIsolated)
  copy(join(root, 'dist'), join(out, 'pkg/dist'), (n) => /\.(mjs|wasm)$|\.worker\.js$/.test(n));
  copy(join(root, 'data/austen'), join(out, 'data'), (n) => n.endsWith('.txt') || n === 'README.md');
  return { files, bytes };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--out');
  const out = resolve(i > 0 ? process.argv[i + 1] : join(root, 'build/web'));
  const build = spawnSync(join(root, 'build.sh'), [], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status || 1);
  if (!existsSync(join(root, 'dist/wasmformer.wasm'))) {
    console.error('build:web: dist/wasmformer.wasm is missing after ./build.sh');
    process.exit(1);
  }
  const { files, bytes } = buildWeb(out);
  console.log(`build:web: ${files} files (${(bytes / 1e6).toFixed(1)} MB) in ${out}; serve it with any static host, ` +
    `or: node scripts/serve.mjs ${out}`);
}
