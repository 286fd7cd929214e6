#!/usr/bin/env node
// A small static file server on node:http for the web page, with no dependencies.
//
//   node scripts/serve.mjs [folder] [--port 8080] [--host 127.0.0.1] [--no-isolation]
//
// Without a folder it serves the page straight from the repository (web/ at /, the
// package's src/js/ and dist/ under /pkg/, the bundled novels under /data/), the layout
// `npm run build:web` copies into build/web/. Every response carries the page's
// Content-Security-Policy and, unless --no-isolation, the COOP/COEP headers that make the
// page crossOriginIsolated, so the threaded wasm build can run. Only GET and HEAD; paths
// never leave the mounted folders.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** URL prefix -> folder: the page in the repository, laid out as build/web/ is. */
export const REPO_MOUNTS = {
  '/pkg/src/js/': join(root, 'src/js'),
  '/pkg/dist/': join(root, 'dist'),
  '/data/': join(root, 'data/austen'),
  '/': join(root, 'web'),
};

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.md': 'text/plain; charset=utf-8',
};

/** The page's policy; web/index.html carries the same in a <meta> tag for other hosts
 * (which cannot carry frame-ancestors). */
export const CSP = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "connect-src 'self'",
  "worker-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Starts the server. options: folder (serve one folder at /) or mounts (prefix -> folder,
 * default REPO_MOUNTS), port (0: any free one), host, isolation (default true), plain (no
 * policy headers at all, like a bare static host; tests use it), csp (default true; false
 * leaves the Content-Security-Policy out, for a page running a third party's workers from
 * blob: URLs, as bench/wllama.html does), log
 * (called with each request's method, path and status). Resolves to {origin, port,
 * requests (paths served), close()}.
 */
export async function startServer({ folder, mounts, port = 8080, host = '127.0.0.1', isolation = true, plain = false, csp = true, log } = {}) {
  const table = Object.entries(folder ? { '/': resolve(folder) } : (mounts ?? REPO_MOUNTS))
    .sort((a, b) => b[0].length - a[0].length); // longest prefix first
  const requests = [];

  async function fileFor(pathname) {
    for (const [prefix, dir] of table) {
      if (!pathname.startsWith(prefix)) continue;
      const rest = pathname.slice(prefix.length);
      const file = resolve(dir, `.${sep}${rest}`);
      if (file !== dir && !file.startsWith(dir + sep)) return null; // outside the mount
      let info = await stat(file).catch(() => null);
      if (info?.isDirectory()) {
        const index = join(file, 'index.html');
        info = await stat(index).catch(() => null);
        return info?.isFile() ? { file: index, info } : null;
      }
      return info?.isFile() ? { file, info } : null;
    }
    return null;
  }

  const server = createServer(async (req, res) => {
    // plain: what a bare static host sends (the page's <meta> policy still applies)
    const headers = plain ? {} : {
      ...(csp ? { 'Content-Security-Policy': CSP } : {}),
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'no-cache',
      ...(isolation ? { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' } : {}),
    };
    const done = (status, body, type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { ...headers, 'Content-Type': type });
      res.end(req.method === 'HEAD' ? undefined : body);
      log?.(req.method, req.url, status);
    };
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    } catch {
      return done(400, 'bad request\n');
    }
    requests.push(pathname);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      headers.Allow = 'GET, HEAD';
      return done(405, 'method not allowed\n');
    }
    if (pathname.includes('\0')) return done(400, 'bad request\n');
    const found = await fileFor(pathname);
    if (!found) return done(404, 'not found\n');
    res.writeHead(200, {
      ...headers,
      'Content-Type': TYPES[extname(found.file).toLowerCase()] ?? 'application/octet-stream',
      'Content-Length': found.info.size,
    });
    log?.(req.method, req.url, 200);
    if (req.method === 'HEAD') return res.end();
    createReadStream(found.file).on('error', () => res.destroy()).pipe(res);
  });

  await new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      ok();
    });
  });
  const actual = server.address().port;
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return {
    origin: `http://${shown}:${actual}`,
    port: actual,
    requests,
    close: () => new Promise((ok) => {
      server.close(() => ok());
      server.closeAllConnections?.();
    }),
  };
}

/** Command-line options shared with scripts/start.mjs: [folder] --port --host --no-isolation. */
export function parseServeArgs(argv) {
  const out = { port: Number(process.env.PORT || 8080), host: '127.0.0.1', isolation: true, folder: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--port' || a.startsWith('--port=')) out.port = Number(value());
    else if (a === '--host' || a.startsWith('--host=')) out.host = value();
    else if (a === '--no-isolation') out.isolation = false;
    else if (a === '--help' || a === '-h') out.help = true;
    else if (!a.startsWith('-') && out.folder === undefined) out.folder = a;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!Number.isInteger(out.port) || out.port < 0 || out.port > 65535) throw new Error(`--port must be 0..65535, not ${out.port}`);
  return out;
}

export const SERVE_USAGE = `options: [folder] (default: the page from the repository) --port N (default 8080, or $PORT)
         --host H (default 127.0.0.1) --no-isolation (no COOP/COEP headers: the single-thread build)`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let opts;
  try {
    opts = parseServeArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`serve: ${e.message}\n${SERVE_USAGE}`);
    process.exit(2);
  }
  if (opts.help) {
    console.log(`Usage: node scripts/serve.mjs ${SERVE_USAGE}`);
    process.exit(0);
  }
  const server = await startServer(opts).catch((e) => {
    console.error(`serve: could not listen on ${opts.host}:${opts.port}: ${e.message}`);
    process.exit(1);
  });
  console.log(`wasmformer page: ${server.origin}/  (${opts.isolation ? 'cross-origin isolated' : 'not isolated: one thread'}; Ctrl-C stops)`);
}
