#!/usr/bin/env node
// npm start: does whatever set-up is missing (npm dependencies, the wasm build), then
// serves the web page on http://localhost:8080 with the headers that let the threaded
// build run (cross-origin isolation). The page trains and generates in the browser tab;
// this process only serves files.
//
//   npm start [-- --port 8081] [-- --no-isolation] [-- --host 0.0.0.0]     (or PORT=8081 npm start)
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseServeArgs, startServer, SERVE_USAGE } from './serve.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);

let opts;
try {
  opts = parseServeArgs(process.argv.slice(2));
} catch (e) {
  console.error(`npm start: ${e.message}\n${SERVE_USAGE}`);
  process.exit(2);
}
if (opts.help) {
  console.log(`Usage: npm start [-- options]\n${SERVE_USAGE}\nTraining in Node instead: npm run demo`);
  process.exit(0);
}

function step(title, cmd, args) {
  console.log(`npm start: ${title}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.error || r.status !== 0) {
    console.error(`npm start: ${title} failed${r.error ? `: ${r.error.message}` : ` (exit ${r.status})`}`);
    process.exit(r.status || 1);
  }
}

// the dev tools the tests use; the page and the server need none of them
if (existsSync('package-lock.json') && !existsSync('node_modules')) step('installing npm dependencies (npm ci)', 'npm', ['ci']);
step('building the wasm module if needed (./build.sh)', './build.sh', []);

const server = await startServer(opts).catch((e) => {
  const hint = e.code === 'EADDRINUSE' ? ` (in use: try --port ${opts.port + 1} or PORT=${opts.port + 1})` : '';
  console.error(`npm start: could not listen on ${opts.host}:${opts.port}: ${e.message}${hint}`);
  process.exit(1);
});
const where = opts.host === '127.0.0.1' ? server.origin.replace('127.0.0.1', 'localhost') : server.origin;
console.log(`\nwasmformer: open ${where}/ in a browser`);
console.log(opts.isolation
  ? '  cross-origin isolated (COOP/COEP headers): the threaded build runs where the browser allows it'
  : '  not cross-origin isolated: the single-thread build runs');
console.log('  Ctrl-C stops the server. Static files for any host: npm run build:web');
process.on('SIGINT', async () => {
  await server.close();
  process.exit(0);
});
