// The Node examples of the README and of docs/API.md (where the README's depth went) run as
// written, against the package as users install it (npm pack, the tarball installed into a
// scratch project: a file an example reads must ship), browser examples left to
// package.test.mjs, with their step and token counts cut down so that the whole file takes
// seconds (the only change made to them).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, installInto, pack } from './pack.js';

const DOCS = ['README.md', 'docs/API.md'];
const text = Object.fromEntries(DOCS.map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]));
// 'wasmformer' and 'wasmformer/node' (the Node-only helpers, as TypeScript's bundler resolution wants them)
const IMPORT = /from 'wasmformer(\/node)?'/;
/** A file's Node examples: its js blocks that import the package and touch no browser global. */
const runnableIn = (f) => [...text[f].matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1])
  .filter((b) => IMPORT.test(b) && !/\b(document|window|fetch|Worker)\b/.test(b));
const runnable = DOCS.flatMap((f) => runnableIn(f).map((code, i) => ({ file: f, i, code })));

const packed = pack();
after(() => rmSync(packed.dir, { recursive: true, force: true }));
const project = installInto(packed.dir, 'readme', packed.tarball);

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
