#!/usr/bin/env node
// The core's layout, measured (issue 12): the #include graph of src/*.c and src/*.h and its
// cycles, line counts, and the source list against the sources. tests/js/layout.test.mjs holds
// the rules: no include cycle, no core file over MAX_CORE_LINES, the public header under
// MAX_HEADER_LINES, src/sources.txt naming exactly the .c files.
//
// Usage: node scripts/layout.mjs                 the checks and every file's lines
//        node scripts/layout.mjs --before REV    the same files' lines at git revision REV beside today's
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const MAX_CORE_LINES = 600;
export const MAX_HEADER_LINES = 250;
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
    ...cycles(moduleGraph(g)).map((c) => `module cycle: ${c}`),
    ...[...now].filter(([f, n]) => f !== HEADER && n > MAX_CORE_LINES).map(([f, n]) => `${f}: ${n} lines (at most ${MAX_CORE_LINES})`),
    ...(now.get(HEADER) >= MAX_HEADER_LINES ? [`${HEADER}: ${now.get(HEADER)} lines (under ${MAX_HEADER_LINES})`] : []),
  ];
  const edges = [...g.values()].reduce((n, e) => n + e.length, 0);
  console.log(`\n${g.size} files, ${edges} includes among them; ${bad.length ? bad.join('\n') : 'no include cycle (files or modules), no core file over 600 lines, header under 250'}`);
  process.exit(bad.length ? 1 : 0);
}
