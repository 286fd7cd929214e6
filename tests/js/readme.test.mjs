// The Node examples of the README and of docs/API.md (where the README's depth went) run as
// written, against this checkout installed as node_modules/wasmformer of a scratch project
// (browser examples are left to package.test.mjs), with their step and token counts cut down
// so that the whole file takes seconds (the only change made to them).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './pack.js';

const DOCS = ['README.md', 'docs/API.md'];
const text = Object.fromEntries(DOCS.map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]));
// 'wasmformer' and 'wasmformer/node' (the Node-only helpers, as TypeScript's bundler resolution wants them)
const IMPORT = /from 'wasmformer(\/node)?'/;
/** A file's Node examples: its js blocks that import the package and touch no browser global. */
const runnableIn = (f) => [...text[f].matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1])
  .filter((b) => IMPORT.test(b) && !/\b(document|window|fetch|Worker)\b/.test(b));
const runnable = DOCS.flatMap((f) => runnableIn(f).map((code, i) => ({ file: f, i, code })));

const project = mkdtempSync(join(tmpdir(), 'wf-readme-'));
after(() => rmSync(project, { recursive: true, force: true }));
mkdirSync(join(project, 'node_modules'));
symlinkSync(ROOT, join(project, 'node_modules/wasmformer'), 'dir');
writeFileSync(join(project, 'package.json'), '{"type":"module","private":true}');

function shorten(code) {
  return code.replace(/\bsteps: \d+/g, 'steps: 3').replace(/\bmaxTokens: \d+/g, 'maxTokens: 12')
    .replace(/\bevalInterval: \d+/g, 'evalInterval: 2');
}

test('the README has a first model and a checkpoint in Node; docs/API.md examples for training, checkpoints, workers, fine-tuning and errors', () => {
  const has = (f, name) => runnableIn(f).some((b) => b.includes(name));
  for (const name of ['createModel', 'saveModelFile']) assert.ok(has('README.md', name), `a README example uses ${name}`);
  assert.ok(runnableIn('docs/API.md').length >= 5, `found ${runnableIn('docs/API.md').length} runnable examples in docs/API.md`);
  for (const name of ['createModel', 'saveModelFile', 'createWorkerModel', 'addLora', 'WfError', 'createSeq2Seq']) {
    assert.ok(has('docs/API.md', name), `a docs/API.md example uses ${name}`);
  }
});

runnable.forEach(({ file: doc, i, code }) => {
  test(`${doc} example ${i + 1} runs: ${code.split('\n').find((l) => IMPORT.test(l)).trim()}`, () => {
    const file = join(project, `${doc.replace(/\W/g, '-')}-${i + 1}.mjs`);
    writeFileSync(file, shorten(code));
    const out = execFileSync(process.execPath, [file], { cwd: project, encoding: 'utf8', timeout: 120_000 });
    assert.ok(out.length > 0, 'it printed something');
  });
});

test('the README and docs/API.md import Node\'s file helpers from \'wasmformer/node\': TypeScript\'s bundler resolution finds them only there', () => {
  const nodeOnly = [...readFileSync(join(ROOT, 'src/js/node.d.ts'), 'utf8').matchAll(/^export function (\w+)/gm)].map((m) => m[1]);
  assert.ok(nodeOnly.includes('saveModelFile') && nodeOnly.includes('exportPeftDir'), nodeOnly.join(', '));
  for (const m of DOCS.flatMap((f) => [...text[f].matchAll(/import \{([^}]*)\} from 'wasmformer'/g)])) {
    const names = m[1].split(',').map((s) => s.trim());
    assert.deepEqual(names.filter((n) => nodeOnly.includes(n)), [], m[0]);
  }
});
