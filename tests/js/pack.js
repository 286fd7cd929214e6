// Helpers for the package-level tests: pack the package as npm would publish it, install
// the tarball offline into a scratch project, serve a folder on localhost.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CHROMIUM = '/usr/bin/chromium';

/** Why the browser tests cannot run here, with what enables them, or null: Debian's
 * Chromium, and Node.js 20 or later (playwright-core refuses older ones; Debian 12's own
 * nodejs is 18). */
export function browserMissing() {
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} not installed (apt-get install -y chromium)`;
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 20) return `playwright-core needs Node.js 20 or later, this is ${process.version} (run the tests with Node.js 20)`;
  return null;
}

/** Whether a browser test can run: when it cannot, it fails in CI (which installs Chromium)
 * and skips elsewhere, saying why. */
export function haveChromium(t) {
  const missing = browserMissing();
  if (!missing) return true;
  if (process.env.CI) assert.fail(missing);
  t.skip(missing);
  return false;
}

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** npm pack into a fresh folder: {dir, tarball, files: [{path, size}]} */
export function pack() {
  const dir = mkdtempSync(join(tmpdir(), 'wf-pack-'));
  const out = execFileSync(NPM, ['pack', '--json', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const [info] = JSON.parse(out);
  return { dir, tarball: join(dir, info.filename), files: info.files };
}

/** A scratch project in dir/name with the tarball installed, without the network. */
export function installInto(dir, name, tarball, files = {}) {
  const project = join(dir, name);
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }, null, 2));
  for (const [file, text] of Object.entries(files)) writeFileSync(join(project, file), text);
  execFileSync(NPM, ['install', '--offline', '--no-audit', '--no-fund', '--no-package-lock', tarball],
    { cwd: project, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return project;
}

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css' };

/** Serves folder on 127.0.0.1 (a free port), each response with `headers` (e.g. COOP/COEP):
 * {origin, requests: [path], close()} */
export async function serve(folder, headers = {}) {
  const requests = [];
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    requests.push(path);
    const file = normalize(join(folder, path === '/' ? 'index.html' : path));
    let ok = file.startsWith(folder);
    try { ok = ok && statSync(file).isFile(); } catch { ok = false; }
    if (!ok) {
      res.writeHead(404, headers).end('not found');
      return;
    }
    res.writeHead(200, { ...headers, 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    requests,
    // a browser may hold a kept-alive connection for minutes: close them too
    close: () => new Promise((resolve) => { server.close(resolve); server.closeAllConnections(); }),
  };
}
