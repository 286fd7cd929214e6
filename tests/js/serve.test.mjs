// The web page's server (scripts/serve.mjs), `npm start` (scripts/start.mjs) and the
// static build (scripts/build-web.mjs), without a browser (tests/web/ runs the page in
// Chromium): headers, paths that must not escape, the same files in both layouts.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { buildWeb } from '../../scripts/build-web.mjs';
import { CSP, parseServeArgs, startServer } from '../../scripts/serve.mjs';
import { ROOT } from './pack.js';

const out = mkdtempSync(join(tmpdir(), 'wf-web-'));
after(() => rmSync(out, { recursive: true, force: true }));

/** A raw request (fetch would normalize the path). */
function get(origin, path, method = 'GET') {
  return new Promise((resolve, reject) => {
    const req = request(`${origin}${path}`, { method }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.path = path;
    req.end();
  });
}

function files(dir) {
  return readdirSync(dir, { recursive: true }).filter((f) => statSync(join(dir, f)).isFile()).map((f) => relative(dir, join(dir, f)));
}

test('the static build holds the page, the browser package, the wasm and the six novels', () => {
  const { files: n } = buildWeb(out);
  const list = files(out).sort();
  assert.equal(list.length, n);
  for (const f of ['index.html', 'app.js', 'style.css', 'pkg/src/js/index.js', 'pkg/src/js/worker.js', 'pkg/dist/wasmformer.mjs',
    'pkg/dist/wasmformer.wasm', 'data/pride_and_prejudice.txt', 'data/emma.txt', 'data/persuasion.txt']) {
    assert.ok(list.includes(f), `${f} is in the build`);
  }
  assert.deepEqual(list.filter((f) => /node|\.d\.ts$|\.c$|\.h$/.test(f)), [], 'nothing Node-only or from the C sources');
});

test('the server: the repository layout equals the static build, with the page\'s headers', async () => {
  const repo = await startServer({ port: 0 });
  const built = await startServer({ folder: out, port: 0, isolation: false });
  const plain = await startServer({ folder: out, port: 0, plain: true });
  const noCsp = await startServer({ folder: out, port: 0, csp: false });
  try {
    for (const f of files(out)) {
      const a = await get(repo.origin, `/${f}`), b = await get(built.origin, `/${f}`);
      assert.equal(a.status, 200, `/${f} from the repository`);
      assert.ok(a.body.equals(b.body), `/${f}: the same bytes in both layouts`);
    }
    const page = await get(repo.origin, '/');
    assert.equal(page.status, 200);
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(page.headers['content-security-policy'], CSP);
    assert.equal(page.headers['cross-origin-opener-policy'], 'same-origin');
    assert.equal(page.headers['cross-origin-embedder-policy'], 'require-corp');
    // the <meta> policy is the header's, less what only a header can say
    const meta = page.body.toString().match(/http-equiv="Content-Security-Policy" content="([^"]+)"/)[1];
    assert.equal(meta, CSP.replace("; frame-ancestors 'none'", ''));
    assert.match(CSP, /script-src 'self' 'wasm-unsafe-eval';/);
    assert.doesNotMatch(CSP, /'unsafe-inline'|'unsafe-eval'|\*/);
    assert.equal((await get(repo.origin, '/pkg/dist/wasmformer.wasm')).headers['content-type'], 'application/wasm');
    assert.equal((await get(repo.origin, '/pkg/src/js/index.js')).headers['content-type'], 'text/javascript; charset=utf-8');

    const noIso = await get(built.origin, '/index.html');
    assert.equal(noIso.headers['cross-origin-opener-policy'], undefined);
    assert.equal(noIso.headers['content-security-policy'], CSP);
    const bare = await get(plain.origin, '/');
    assert.equal(bare.status, 200);
    assert.equal(bare.headers['content-security-policy'], undefined);
    // csp: false (bench/wllama.html, whose third-party workers start from blob: URLs): isolated, no policy
    const isoOnly = await get(noCsp.origin, '/index.html');
    assert.equal(isoOnly.headers['content-security-policy'], undefined);
    assert.equal(isoOnly.headers['cross-origin-embedder-policy'], 'require-corp');
    assert.equal(isoOnly.headers['x-content-type-options'], 'nosniff');

    // nothing outside the mounts, whatever the spelling; only GET and HEAD
    for (const path of ['/../package.json', '/pkg/src/js/../../../package.json', '/%2e%2e/package.json',
      '/pkg/dist/%2e%2e/%2e%2e/package.json', '/data/..%2f..%2fpackage.json', '/pkg/src/js/index.d.ts/x', '/nope.html']) {
      const r = await get(repo.origin, path);
      assert.equal(r.status, 404, `${path} -> ${r.status}`);
      assert.doesNotMatch(r.body.toString(), /"name": "wasmformer"/);
    }
    assert.equal((await get(repo.origin, '/%zz')).status, 400);
    assert.equal((await get(repo.origin, '/', 'POST')).status, 405);
    const head = await get(repo.origin, '/data/emma.txt', 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(Number(head.headers['content-length']), statSync(join(ROOT, 'data/austen/emma.txt')).size);
    assert.equal(head.body.length, 0);
    assert.ok(repo.requests.includes('/data/emma.txt'));
  } finally {
    await Promise.all([repo.close(), built.close(), plain.close(), noCsp.close()]);
  }
});

test('serve options: folder, --port, PORT, --host, --no-isolation; bad ones fail', () => {
  assert.deepEqual(parseServeArgs(['site', '--port', '9000', '--no-isolation']),
    { port: 9000, host: '127.0.0.1', isolation: false, folder: 'site' });
  assert.equal(parseServeArgs(['--port=0']).port, 0);
  assert.equal(parseServeArgs(['--host', '0.0.0.0']).host, '0.0.0.0');
  const saved = process.env.PORT;
  process.env.PORT = '8123';
  try {
    assert.equal(parseServeArgs([]).port, 8123);
  } finally {
    if (saved === undefined) delete process.env.PORT;
    else process.env.PORT = saved;
  }
  assert.throws(() => parseServeArgs(['--port', 'x']), /--port must be/);
  assert.throws(() => parseServeArgs(['--port']), /needs a value/);
  assert.throws(() => parseServeArgs(['--frobnicate']), /unknown argument/);
});

test('npm start builds what is missing, serves the page and prints its address', async () => {
  const child = spawn(process.execPath, [join(ROOT, 'scripts/start.mjs'), '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  try {
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no address printed in 120 s:\n${output}`)), 120_000);
      child.stdout.on('data', () => {
        const m = output.match(/open (http:\/\/localhost:\d+\/) in a browser/);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      child.on('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${output}`)));
    });
    const page = await get(url.replace('localhost', '127.0.0.1').replace(/\/$/, ''), '/');
    assert.equal(page.status, 200);
    assert.match(page.body.toString(), /<title>wasmformer/);
    assert.equal(page.headers['cross-origin-embedder-policy'], 'require-corp');
    assert.match(output, /cross-origin isolated/);
  } finally {
    child.kill('SIGINT');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  assert.ok(readFileSync(join(ROOT, 'dist/wasmformer.wasm')).length > 0);
});
