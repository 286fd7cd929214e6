// The hand-written .d.ts files: they compile for a strict TypeScript user under node16,
// nodenext and bundler resolution, in this checkout and from the packed tarball installed, they constrain (wrong code fails), every exported value of the
// JavaScript entry points is declared and nothing else is, and every public function and
// method carries JSDoc with an example.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { copyFileSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { installInto, pack } from './pack.js';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const ENTRIES = { node: here('../../src/js/node.d.ts'), browser: here('../../src/js/index.d.ts') };

/** Compiles file under strict mode and a resolution; `source`: its text, when it is not on
 * disk (a README example, as if it sat at that path); `types`: @types packages to include. */
function compile(file, resolution, { source, types = [] } = {}) {
  const options = {
    strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'], types,
    allowJs: true, checkJs: true, // a README example is JavaScript, checked as TypeScript checks a .mjs
    skipLibCheck: types.length > 0, // @types/node is not ours to check
    ...({
      node: { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext },
      node16: { module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16 },
      bundler: { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler },
    })[resolution],
  };
  const host = ts.createCompilerHost(options);
  if (source !== undefined) {
    const { getSourceFile, fileExists, readFile } = host;
    host.getSourceFile = (name, ...rest) => (name === file ? ts.createSourceFile(name, source, ts.ScriptTarget.ES2022, true) : getSourceFile.call(host, name, ...rest));
    host.fileExists = (name) => name === file || fileExists.call(host, name);
    host.readFile = (name) => (name === file ? source : readFile.call(host, name));
  }
  const program = ts.createProgram([file], options, host);
  const diagnostics = ts.getPreEmitDiagnostics(program)
    .map((d) => `${d.file ? `${d.file.fileName.split('/').pop()}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : ''} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
  return { program, diagnostics };
}

for (const resolution of ['node16', 'node', 'bundler']) {
  test(`a strict TypeScript consumer compiles (${resolution === 'node' ? 'nodenext' : resolution} resolution, package self-reference)`, () => {
    const file = here('types/consumer.ts');
    const { program, diagnostics } = compile(file, resolution);
    assert.deepEqual(diagnostics, []);
    // the package name resolved to the entry's own .d.ts
    const used = program.getSourceFiles().map((f) => f.fileName);
    assert.ok(used.includes(ENTRIES.browser), 'index.d.ts is read');
    assert.equal(used.includes(ENTRIES.node), resolution !== 'bundler', 'node.d.ts only under Node resolution');
  });
}

for (const resolution of ['node16', 'node', 'bundler']) {
  test(`'wasmformer/node' and 'wasmformer/worker' have types under every resolution (${resolution === 'node' ? 'nodenext' : resolution})`, () => {
    const { program, diagnostics } = compile(here('types/node-entry.ts'), resolution);
    assert.deepEqual(diagnostics, []);
    assert.ok(program.getSourceFiles().some((f) => f.fileName === ENTRIES.node), 'node.d.ts is read through wasmformer/node');
  });
}

test('tsc --strict passes on both consumers against the package installed from its npm pack tarball (node16, nodenext, bundler)', (t) => {
  const packed = pack();
  t.after(() => rmSync(packed.dir, { recursive: true, force: true }));
  const project = installInto(packed.dir, 'ts-user', packed.tarball);
  for (const name of ['consumer.ts', 'node-entry.ts']) copyFileSync(here(`types/${name}`), join(project, name));
  const installed = realpathSync(join(project, 'node_modules/wasmformer'));
  for (const resolution of ['node16', 'node', 'bundler']) {
    for (const name of ['consumer.ts', 'node-entry.ts']) {
      const { program, diagnostics } = compile(join(project, name), resolution);
      assert.deepEqual(diagnostics, [], `${name}, ${resolution}`);
      // the declarations came from the installed package, not from this checkout
      const dts = program.getSourceFiles().map((f) => realpathSync(f.fileName)).filter((f) => /wasmformer.*\.d\.ts$/.test(f) && !f.includes('/typescript/'));
      assert.ok(dts.length > 0 && dts.every((f) => f.startsWith(`${installed}/`)), `${name}, ${resolution}: ${dts}`);
    }
  }
});

for (const resolution of ['node16', 'node', 'bundler']) {
  test(`'wasmformer' itself declares the Node file helpers (${resolution === 'node' ? 'nodenext' : resolution} resolution): one API everywhere`, () => {
    // under bundler resolution TypeScript reads index.d.ts (no "node" condition): the helpers
    // must be there, as index.js exports them (rejecting in a browser)
    const source = "import { loadModelFile, saveModelFile, exportSafetensorsDir, importSafetensorsDir, exportPeftDir, importPeftDir, createWorkerModel } from 'wasmformer';\n"
      + 'export async function f(): Promise<number> {\n'
      + "  const model = await loadModelFile('m.wf');\n  const wm = await createWorkerModel('micro');\n"
      + "  const names: string[] = [...await exportSafetensorsDir(model, 'hf/'), ...await exportPeftDir(wm, 'adapter/')];\n"
      + "  const back = await importSafetensorsDir('hf/');\n  await importPeftDir(back, 'adapter/');\n"
      + "  return (await saveModelFile(model, 'm.wf')) + (await saveModelFile(wm, 'w.wf')) + names.length;\n}\n";
    const { diagnostics } = compile(here('types/file-helpers.ts'), resolution, { source });
    assert.deepEqual(diagnostics, []);
  });
}

test("the README's and docs/API.md's Node examples type-check with tsc --strict --checkJs (bundler resolution, @types/node)", () => {
  const readme = ['../../README.md', '../../docs/API.md'].map((f) => ts.sys.readFile(here(f))).join('\n');
  const examples = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]).filter((b) => /from 'wasmformer(\/node)?'/.test(b))
    // the page examples' DOM lookups are JavaScript's idiom, not the API's; the seq2seq example's
    // pairs (words.map((w) => [w, reversed])) are string[] to TypeScript, which wants a Pair tuple
    .filter((b) => !/\b(document|window|createSeq2Seq)\b/.test(b));
  assert.ok(examples.length >= 5, `${examples.length} examples`);
  examples.forEach((source, i) => {
    // each its own module, as a user's file; top-level await needs module ESNext (bundler's)
    const { diagnostics } = compile(here(`types/readme-${i + 1}.mjs`), 'bundler', { source, types: ['node'] });
    assert.deepEqual(diagnostics, [], `README example ${i + 1}:\n${source}`);
  });
});

test('the types reject wrong code, line by line', () => {
  const file = here('types/wrong.ts');
  const { diagnostics } = compile(file, 'node');
  const lines = new Set(diagnostics.map((d) => Number(d.split(' ')[0].split(':')[1])));
  const source = ts.sys.readFile(file).split('\n');
  const expected = source.map((l, i) => (/\/\/ /.test(l) && /^\s+(await|const|for|model)/.test(l) ? i + 1 : 0)).filter(Boolean);
  assert.equal(expected.length, 9);
  for (const line of expected) assert.ok(lines.has(line), `line ${line} compiles but must not: ${source[line - 1].trim()}`);
});

function declaredValues(entry) {
  const { program } = compile(entry, 'node');
  const checker = program.getTypeChecker();
  const mod = checker.getSymbolAtLocation(program.getSourceFile(entry));
  return checker.getExportsOfModule(mod)
    .map((s) => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s))
    .filter((s) => s.flags & (ts.SymbolFlags.Function | ts.SymbolFlags.Class | ts.SymbolFlags.Variable))
    .map((s) => s.name).sort();
}

for (const [name, entry] of Object.entries(ENTRIES)) {
  test(`every value ${name === 'node' ? 'node.js' : 'index.js'} exports is declared, and only those`, async () => {
    const js = await import(entry.replace(/\.d\.ts$/, '.js'));
    assert.deepEqual(declaredValues(entry), Object.keys(js).sort());
  });
}

test('every exported function, class and method has JSDoc with an example', () => {
  const missing = [];
  for (const entry of Object.values(ENTRIES)) {
    const sf = ts.createSourceFile(entry, ts.sys.readFile(entry), ts.ScriptTarget.ES2022, true);
    const docs = (node) => ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
    const hasExample = (node) => docs(node).some((d) => (d.tags ?? []).some((t) => t.tagName.text === 'example'));
    const where = (node) => `${entry.split('/').pop()}:${sf.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
    for (const node of sf.statements) {
      const exported = node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
      if (!exported) continue;
      if (ts.isFunctionDeclaration(node) && !hasExample(node)) missing.push(`function ${node.name.text} (${where(node)})`);
      if (ts.isVariableStatement(node) && !docs(node).length) missing.push(`const (${where(node)}) has no JSDoc`);
      if (ts.isClassDeclaration(node)) {
        if (!docs(node).length) missing.push(`class ${node.name.text} has no JSDoc`);
        for (const member of node.members) {
          if (member.modifiers?.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword)) continue;
          if ((ts.isMethodDeclaration(member) || ts.isConstructorDeclaration(member)) && !hasExample(member)) {
            missing.push(`${node.name.text}.${member.name?.text ?? 'constructor'} (${where(member)})`);
          }
        }
      }
    }
  }
  assert.deepEqual(missing, []);
});
