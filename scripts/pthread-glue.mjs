#!/usr/bin/env node
// build.sh runs this on each threaded build's glue (dist/wasmformer-mt.mjs,
// dist/wasmformer-relaxed-mt.mjs) right after emcc: in browsers, the glue becomes its own
// pthread worker, a module worker, as later emscripten releases make it.
//
// Emscripten 3.1.6 starts each pthread as a classic worker on a separate script
// (<name>.worker.js) that import()s the glue. That script breaks wherever a JavaScript project
// is built: Vite inlines it as a data: URL (2.9 KB, under its 4 KB limit; a data: worker is
// not cross-origin isolated and cannot import the glue), and Vite's dev server rewrites its
// import() into a static import, which a classic script cannot hold ("Cannot use import
// statement outside a module"). The glue itself is a module every bundler copies as one file
// (src/js/loader.js names it by new URL(..., import.meta.url)); started as a worker named
// "wasmformer-pthread", it runs the worker script's message loop, with the import() replaced
// by its own factory. Node keeps 3.1.6's way: worker_threads on the CommonJS .worker.js.
//
// Every rewrite must match exactly once, so that a new emscripten fails the build here.
// Usage: node scripts/pthread-glue.mjs dist/wasmformer-mt.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';

const glueFile = process.argv[2];
const name = basename(glueFile, '.mjs');
const workerFile = glueFile.replace(/\.mjs$/, '.worker.js');
const escaped = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const WORKER_NAME = 'wasmformer-pthread';

function once(text, pattern, replace, what) {
  const n = (text.match(pattern) ?? []).length;
  if (n !== 1) {
    console.error(`scripts/pthread-glue.mjs: ${what} appears ${n} times in ${pattern.source === undefined ? pattern : pattern.source}, not once: is this emscripten 3.1.6's glue (build.sh)?`);
    process.exit(1);
  }
  return text.replace(pattern, replace);
}

let glue = readFileSync(glueFile, 'utf8');
if (glue.includes(WORKER_NAME)) {
  console.error(`scripts/pthread-glue.mjs: ${glueFile} is rewritten already`);
  process.exit(1);
}
// where the glue starts a pthread's worker: in browsers, on itself
for (const [pattern, what] of [
  [/new Worker\(pthreadMainJs\)/g, `${glueFile}: new Worker(pthreadMainJs)`],
  [new RegExp(`new Worker\\(new URL\\("${escaped(name)}\\.worker\\.js", ?import\\.meta\\.url\\)\\)`, 'g'), `${glueFile}: new Worker(new URL("${name}.worker.js", ...))`],
]) {
  glue = once(glue, pattern, (m) => `(ENVIRONMENT_IS_NODE ? ${m} : new Worker(import.meta.url, { type: "module", name: "${WORKER_NAME}" }))`, what);
}

// the worker script's message loop, with the glue's own factory for its import(), and
// without its Node set-up (worker_threads, and an importScripts made of eval): in the glue
// it runs in browsers only
let loop = readFileSync(workerFile, 'utf8').trim();
for (const spec of ['e.data.urlOrBlob', `"./${name}.mjs"`]) {
  loop = once(loop, new RegExp(`import\\(\\s*${escaped(spec)}\\s*\\)`, 'g'), 'Promise.resolve({ default: createWasmformerModule })', `${workerFile}: import(${spec})`);
}
loop = once(loop, /if\s*\(ENVIRONMENT_IS_NODE\)\s*\{\s*var nodeWorkerThreads\b[\s\S]*?(?=function threadPrintErr\b)/g, '',
  `${workerFile}: its Node set-up`);
glue += `
// scripts/pthread-glue.mjs: in a browser, this module is also each pthread's worker
if (typeof WorkerGlobalScope != "undefined" && self.name == "${WORKER_NAME}") (function () {
${loop}
})();
`;
writeFileSync(glueFile, glue);
