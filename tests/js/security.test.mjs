// The security rows of docs/ERRORS.md (S1 to S4) that a reading of the shipped code can
// prove: every JavaScript file the package or the page ships (src/js/, bin/, web/ when it
// exists, and Emscripten's glue dist/wasmformer.mjs) is parsed with TypeScript's parser and
// its syntax tree searched, so comments and strings cannot hide or fake a finding.
//   S1 no code from strings: no eval, no Function constructor, no string given to
//      setTimeout or setInterval, so a strict CSP without 'unsafe-eval' holds;
//   S2 the page's CSP is strict: everything from 'self', no inline or eval'd script;
//   S3 no request of its own: network APIs appear only where the wasm file is fetched from
//      the URL the page or the caller gives (the browser tests check the requests made);
//   S4 model files are parsed only by the C loaders: no JSON.parse, DataView or byte
//      decoding of file contents in JavaScript, so every byte of a checkpoint, tokenizer
//      or safetensors file goes through the fuzzed code in src/checkpoint.c, src/safetensors.c.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('../..', import.meta.url));

function jsFiles(dir) {
  const abs = join(root, dir);
  if (!existsSync(abs)) return [];
  if (statSync(abs).isFile()) return [abs];
  return readdirSync(abs).flatMap((name) => {
    const p = join(abs, name);
    // dist/bench: the benchmark's reference build (build.sh ref), not in the package's files
    const skip = name === 'node_modules' || relative(root, p) === join('dist', 'bench');
    if (statSync(p).isDirectory()) return skip ? [] : jsFiles(relative(root, p));
    return /\.(m?js|html)$/.test(name) ? [p] : [];
  });
}

/** The scripts of a file: the file itself, or an HTML page's inline <script> bodies. */
function scripts(file) {
  const text = readFileSync(file, 'utf8');
  if (!file.endsWith('.html')) return [text];
  return [...text.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/gi)].map((m) => m[1]);
}

/** Every node of every script of the shipped files, with where it is. */
function* nodes(dirs) {
  for (const file of dirs.flatMap(jsFiles)) {
    for (const source of scripts(file)) {
      const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
      const stack = [sf];
      while (stack.length) {
        const node = stack.pop();
        yield { node, where: `${relative(root, file)}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}` };
        node.forEachChild((c) => { stack.push(c); });
      }
    }
  }
}

const SHIPPED = ['src/js', 'bin', 'web', 'dist']; // dist: Emscripten's glue and its pthread worker
/** The function a call calls, through parentheses and comma expressions ((0, eval)(x)). */
function callee(node) {
  let e = node.expression;
  for (;;) {
    if (ts.isParenthesizedExpression(e)) e = e.expression;
    else if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.CommaToken) e = e.right;
    else return e;
  }
}
const calleeName = (node) => {
  const e = callee(node);
  if (ts.isIdentifier(e)) return e.text;
  if (ts.isPropertyAccessExpression(e)) return ts.isIdentifier(e.expression) && e.expression.text === 'WebAssembly' ? null : e.name.text;
  return null;
};

/** Whether node sits in the then-branch of `if (ENVIRONMENT_IS_NODE)`: code that runs only
 * under Node, where no Content-Security-Policy applies. */
function nodeOnly(node) {
  for (let n = node; n.parent; n = n.parent) {
    if (ts.isIfStatement(n.parent) && n.parent.thenStatement === n && n.parent.expression.getText() === 'ENVIRONMENT_IS_NODE') return true;
  }
  return false;
}

test('S1: no code is made from strings (eval, Function, string timers) in anything shipped', () => {
  assert.ok(existsSync(join(root, 'dist/wasmformer.mjs')), 'the glue is built (./build.sh)');
  const found = [], nodeOnlyUses = [];
  let calls = 0;
  for (const { node, where } of nodes(SHIPPED)) {
    // eval referenced in any way (called, or taken as a value: (0, eval)), but not as a
    // property's name (obj.eval, { eval: ... })
    const isName = (n) => (ts.isPropertyAccessExpression(n.parent) || ts.isPropertyAssignment(n.parent)
      || ts.isMethodDeclaration(n.parent)) && n.parent.name === n;
    if (ts.isIdentifier(node) && node.text === 'eval' && !isName(node)) {
      (nodeOnly(node) ? nodeOnlyUses : found).push(`${where}: eval`);
    }
    if (!ts.isCallExpression(node) && !ts.isNewExpression(node)) continue;
    calls++;
    const name = calleeName(node);
    if (name === 'Function') found.push(`${where}: Function`);
    if ((name === 'setTimeout' || name === 'setInterval') && node.arguments?.[0]
      && (ts.isStringLiteral(node.arguments[0]) || ts.isTemplateExpression(node.arguments[0]) || ts.isNoSubstitutionTemplateLiteral(node.arguments[0]))) {
      found.push(`${where}: ${name} with a string`);
    }
  }
  assert.ok(calls > 500, `the scan saw ${calls} calls: it reads the files`);
  assert.deepEqual(found, []);
  // Emscripten's pthread worker gives Node's worker_threads an importScripts made of eval,
  // inside if (ENVIRONMENT_IS_NODE); browsers never run it (and the page's CSP would refuse
  // it: tests/web/page.test.mjs runs the threaded build with no CSP violation)
  assert.ok(nodeOnlyUses.every((w) => /^dist\/wasmformer(-relaxed)?-mt\.worker\.js:/.test(w)), nodeOnlyUses.join(', '));
});

test('S3: network APIs only fetch the wasm from where the page or the caller says, and the page\'s own files', () => {
  const NET = new Set(['fetch', 'XMLHttpRequest', 'WebSocket', 'EventSource', 'sendBeacon', 'importScripts', 'RTCPeerConnection']);
  // each allowed use, by file and callee, with why it is there
  const allowed = new Map([
    ['src/js/node.js fetch', 'readWasm: an http(s) wasmUrl the caller passed'],
    ['dist/wasmformer.mjs fetch', "Emscripten's glue fetches the .wasm from locateFile/wasmUrl"],
    ['dist/wasmformer.mjs XMLHttpRequest', "the glue's synchronous fallback for the same .wasm"],
    ['dist/wasmformer.mjs importScripts', "the glue's check for a worker environment (typeof only)"],
    ['dist/wasmformer-mt.mjs fetch', 'the threaded glue: the same .wasm'],
    ['dist/wasmformer-mt.mjs XMLHttpRequest', 'the threaded glue: the same fallback'],
    ['dist/wasmformer-mt.mjs importScripts', 'the threaded glue: the same check'],
    ['dist/wasmformer-mt.worker.js importScripts', 'the pthread worker loads the glue beside it'],
    ['dist/wasmformer-relaxed.mjs fetch', 'the relaxed-SIMD glue: its own .wasm'],
    ['dist/wasmformer-relaxed.mjs XMLHttpRequest', 'the relaxed-SIMD glue: the same fallback'],
    ['dist/wasmformer-relaxed.mjs importScripts', 'the relaxed-SIMD glue: the same check'],
    ['dist/wasmformer-relaxed-mt.mjs fetch', 'the threaded relaxed-SIMD glue: its own .wasm'],
    ['dist/wasmformer-relaxed-mt.mjs XMLHttpRequest', 'the threaded relaxed-SIMD glue: the same fallback'],
    ['dist/wasmformer-relaxed-mt.mjs importScripts', 'the threaded relaxed-SIMD glue: the same check'],
    ['dist/wasmformer-relaxed-mt.worker.js importScripts', 'its pthread worker loads the glue beside it'],
    ['web/corpus.js fetch', 'the bundled novels, at a path relative to the page (checked below)'],
  ]);
  const found = new Set();
  for (const { node, where } of nodes(SHIPPED)) {
    const name = ts.isIdentifier(node) ? node.text : null;
    if (!name || !NET.has(name)) continue;
    const key = `${where.split(':')[0]} ${name}`;
    assert.ok(allowed.has(key), `${where}: ${name} is not an allowed use of the network`);
    found.add(key);
    if (key.startsWith('web/') && ts.isCallExpression(node.parent)) {
      const url = node.parent.arguments[0]?.getText() ?? '';
      assert.match(url, /^[`'"]\.\//, `${where}: the page fetches only paths relative to itself, not ${url}`);
    }
  }
  assert.deepEqual([...found].sort(), [...allowed.keys()].sort(), 'every allowance is still needed');
});

test('S2: the page declares a strict Content-Security-Policy, and its server sends the same', async () => {
  const html = join(root, 'web/index.html');
  if (!existsSync(html)) return; // the page is not in this tree
  const meta = readFileSync(html, 'utf8').match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)"/);
  assert.ok(meta, 'web/index.html has a CSP <meta>');
  const policy = Object.fromEntries(meta[1].split(';').map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k, v]));
  assert.deepEqual(policy['default-src'], ["'self'"]);
  assert.deepEqual(policy['object-src'], ["'none'"]);
  assert.deepEqual(policy['base-uri'], ["'none'"]);
  for (const [directive, sources] of Object.entries(policy)) {
    for (const src of sources) {
      assert.ok(!["'unsafe-inline'", "'unsafe-eval'", '*'].includes(src) && !/^(https?:|wss?:)/.test(src),
        `${directive} allows ${src}`);
    }
  }
  assert.ok(policy['script-src'].every((src) => ["'self'", "'wasm-unsafe-eval'"].includes(src)), 'scripts: this site and wasm only');
  assert.doesNotMatch(readFileSync(html, 'utf8'), /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
  // the server's header: the same policy plus frame-ancestors, which a <meta> cannot carry
  const { CSP } = await import('../../scripts/serve.mjs');
  assert.equal(CSP, `${meta[1]}; frame-ancestors 'none'`, 'scripts/serve.mjs sends the page\'s policy');
});

test('S4: model files reach only the C loaders; JavaScript parses none of their bytes', () => {
  const PARSERS = new Set(['DataView', 'getUint32', 'getInt32', 'getFloat32', 'getFloat64', 'getBigUint64']);
  const found = [];
  for (const { node, where } of nodes(['src/js', 'web'])) {
    if (ts.isIdentifier(node) && PARSERS.has(node.text)) found.push(`${where}: ${node.text}`);
    if ((ts.isCallExpression(node)) && ts.isPropertyAccessExpression(node.expression)
      && node.expression.name.text === 'parse' && ts.isIdentifier(node.expression.expression) && node.expression.expression.text === 'JSON') {
      found.push(`${where}: JSON.parse`);
    }
  }
  // one exception: the application's metadata (a checkpoint's NOTE section, whose bytes the
  // C loader has bounded and checksummed) is JSON by the package's convention, read with
  // JSON.parse, which builds plain data and runs nothing; its readers check its fields
  // (bin/wasmformer.js resumePlan)
  assert.deepEqual(found.filter((f) => !/^src\/js\/handle\.js:\d+: JSON\.parse$/.test(f)), []);
  assert.ok(found.length <= 1, found.join(', '));
  // and the bytes of each kind of file go to the loader that checks them (runtime.js makes
  // every call into the module: tests/js/exports.test.mjs)
  const sources = jsFiles('src/js').map((f) => readFileSync(f, 'utf8')).join('\n');
  for (const loader of ['_wf_model_load', '_wf_tokenizer_load', '_wf_model_import_safetensors']) {
    assert.ok(sources.includes(`M.${loader}(`), `${loader} is how JavaScript reads that kind of file`);
  }
});
