#!/usr/bin/env node
// The core's layout, measured (issue 12): the #include graph of src/*.c and src/*.h, the calls
// between the .c files, and their cycles; the import graph of the JS package (src/js/*.js) and
// its cycles; line counts, and the source list against the sources. tests/js/layout.test.mjs
// holds the rules: no include cycle, no module cycle counting calls (x.c and x.h one module, a
// call an edge to the module whose .c defines the function), no import cycle, no core file
// over MAX_CORE_LINES, the public header under MAX_HEADER_LINES, src/sources.txt naming
// exactly the .c files.
//
// Usage: node scripts/layout.mjs                 the checks and every file's lines
//        node scripts/layout.mjs --before REV    the same files' lines at git revision REV beside today's
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const MAX_CORE_LINES = 600;
// 250 until issue 24 put the training loop in the core (wf_run, wf_model_run: about 20 lines of
// public API) beside the other branches of the same week (one-crossing generation, origins,
// quantized weights): the header holds the API with a comment per declaration, not packed
// two to a line to stay under a number.
export const MAX_HEADER_LINES = 275;
export const HEADER = 'include/wasmformer.h';

const read = (path) => readFileSync(`${ROOT}/${path}`, 'utf8');
const lines = (text) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

/** The core's C files: src/*.c and src/*.h, by name. */
export function coreFiles() {
  return readdirSync(`${ROOT}/src`).filter((f) => /\.[ch]$/.test(f)).sort();
}

/** file -> the core files it #includes ("..." includes of files in src/). */
export function includeGraph(files = coreFiles()) {
  const g = new Map();
  for (const f of files) {
    const inc = [...read(`src/${f}`).matchAll(/^\s*#\s*include\s+"([^"]+)"/gm)].map((m) => m[1]);
    g.set(f, inc.filter((i) => files.includes(i)));
  }
  return g;
}

/** The same graph over modules: x.c and x.h are one node "x", so that a header including
 * the header of a file that includes it back (block.c -> model.h -> block.h) is a cycle too. */
export function moduleGraph(g) {
  const mod = (f) => f.replace(/\.[ch]$/, '');
  const m = new Map();
  for (const [f, inc] of g) {
    const a = mod(f);
    if (!m.has(a)) m.set(a, []);
    for (const i of inc) if (mod(i) !== a && !m.get(a).includes(mod(i))) m.get(a).push(mod(i));
  }
  return m;
}

/** C text without its comments, string and character literals (so that a call named in a
 * comment or a message is not a call). */
function codeOf(text) {
  return text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/g, (m) => (m.startsWith('/') ? m.replace(/[^\n]/g, ' ') : '""'));
}

/** file -> the other .c files whose functions it calls: a function defined at file scope
 * (not static: its line starts with the type, and its parameters are followed by `{`) in one
 * .c file, named with a `(` after it in another. */
export function callGraph(files = coreFiles()) {
  const sources = files.filter((f) => f.endsWith('.c'));
  const code = new Map(sources.map((f) => [f, codeOf(read(`src/${f}`))]));
  const definer = new Map();
  for (const [f, text] of code) {
    for (const m of text.matchAll(/^(?!static\b|typedef\b|extern\b)[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*\(/gm)) {
      const rest = text.slice(m.index + m[0].length);
      let depth = 1, i = 0;
      while (i < rest.length && depth > 0) depth += rest[i] === '(' ? 1 : rest[i] === ')' ? -1 : 0, i++;
      if (/^\s*\{/.test(rest.slice(i))) definer.set(m[1], f);
    }
  }
  const g = new Map();
  for (const [f, text] of code) {
    const called = new Set();
    for (const m of text.matchAll(/\b([A-Za-z_]\w*)\s*\(/g)) {
      const d = definer.get(m[1]);
      if (d && d !== f) called.add(d);
    }
    g.set(f, [...called].sort());
  }
  return g;
}

/** The module graph of moduleGraph with the calls of callGraph added. */
export function dependencyGraph(g = includeGraph(), calls = callGraph()) {
  const m = moduleGraph(g);
  const mod = (f) => f.replace(/\.[ch]$/, '');
  for (const [f, called] of calls) {
    const a = mod(f);
    if (!m.has(a)) m.set(a, []);
    for (const c of called) if (mod(c) !== a && !m.get(a).includes(mod(c))) m.get(a).push(mod(c));
  }
  return m;
}

/** file -> the JS package's files it imports (src/js/*.js): static imports, re-exports and
 * import() of a relative literal; comments are left out (JSDoc's import('./x.js') types). */
export function importGraph(dir = 'src/js') {
  const files = readdirSync(`${ROOT}/${dir}`).filter((f) => f.endsWith('.js')).sort();
  const g = new Map();
  for (const f of files) {
    const text = read(`${dir}/${f}`).replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, '');
    const deps = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)'\.\/([^']+)'/gm)].map((m) => m[1]);
    g.set(f, [...new Set(deps.filter((d) => files.includes(d)))]);
  }
  return g;
}

/** Every cycle a depth-first walk meets, each as its nodes "a -> b -> a". */
export function cycles(g) {
  const out = [], state = new Map(), stack = [];
  const visit = (n) => {
    state.set(n, 1);
    stack.push(n);
    for (const m of g.get(n) ?? []) {
      if (state.get(m) === 1) out.push([...stack.slice(stack.indexOf(m)), m].join(' -> '));
      else if (!state.has(m)) visit(m);
    }
    stack.pop();
    state.set(n, 2);
  };
  for (const n of g.keys()) if (!state.has(n)) visit(n);
  return out;
}

/** Lines of each core file and of the public header, today or (rev) at a git revision. */
export function lineCounts(rev) {
  const out = new Map();
  if (!rev) {
    for (const f of coreFiles()) out.set(`src/${f}`, lines(read(`src/${f}`)));
    out.set(HEADER, lines(read(HEADER)));
    return out;
  }
  const git = (...args) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 });
  const names = git('ls-tree', '--name-only', rev, 'src/').split('\n').filter((f) => /^src\/[^/]+\.[ch]$/.test(f));
  for (const f of [...names, HEADER]) out.set(f, lines(git('show', `${rev}:${f}`)));
  return out;
}

/** The .c files src/sources.txt lists (the one source list CMakeLists.txt and build.sh read). */
export function listedSources() {
  return read('src/sources.txt').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--before');
  const before = at > 0 ? lineCounts(process.argv[at + 1]) : null;
  const now = lineCounts();
  const names = [...new Set([...(before?.keys() ?? []), ...now.keys()])].sort();
  console.log(before ? `| file | ${process.argv[at + 1]} | now |\n|---|---:|---:|` : '| file | lines |\n|---|---:|');
  for (const f of names) console.log(`| ${f} | ${before ? `${before.get(f) ?? '-'} | ` : ''}${now.get(f) ?? '-'} |`);
  const g = includeGraph();
  const bad = [
    ...cycles(g).map((c) => `include cycle: ${c}`),
    ...cycles(dependencyGraph(g)).map((c) => `module cycle (includes and calls): ${c}`),
    ...cycles(importGraph()).map((c) => `import cycle: src/js/${c}`),
    ...[...now].filter(([f, n]) => f !== HEADER && n > MAX_CORE_LINES).map(([f, n]) => `${f}: ${n} lines (at most ${MAX_CORE_LINES})`),
    ...(now.get(HEADER) >= MAX_HEADER_LINES ? [`${HEADER}: ${now.get(HEADER)} lines (under ${MAX_HEADER_LINES})`] : []),
  ];
  const edges = [...g.values()].reduce((n, e) => n + e.length, 0);
  const calls = [...callGraph().values()].reduce((n, e) => n + e.length, 0), js = importGraph();
  const imports = [...js.values()].reduce((n, e) => n + e.length, 0);
  console.log(`\n${g.size} files, ${edges} includes and ${calls} file-to-file calls among them; ${js.size} JS files, ${imports} imports; ` +
    `${bad.length ? bad.join('\n') : `no include, module or import cycle, no core file over ${MAX_CORE_LINES} lines, header under ${MAX_HEADER_LINES}`}`);
  process.exit(bad.length ? 1 : 0);
}
