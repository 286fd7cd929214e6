// The README's Node examples run as written, against the package as users install it (npm
// pack, the tarball installed into a scratch project: a file an example reads must ship),
// browser examples left to package.test.mjs, with their step and token counts cut down so
// that the whole file takes seconds (the only change made to them).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, installInto, pack } from './pack.js';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const blocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
// 'wasmformer' and 'wasmformer/node' (the Node-only helpers, as TypeScript's bundler resolution wants them)
const IMPORT = /from 'wasmformer(\/node)?'/;
const runnable = blocks.filter((b) => IMPORT.test(b) && !/\b(document|window|fetch|Worker)\b/.test(b));

const packed = pack();
after(() => rmSync(packed.dir, { recursive: true, force: true }));
const project = installInto(packed.dir, 'readme', packed.tarball);

function shorten(code) {
  return code.replace(/\bsteps: \d+/g, 'steps: 3').replace(/\bmaxTokens: \d+/g, 'maxTokens: 12')
    .replace(/\bevalInterval: \d+/g, 'evalInterval: 2');
}

test('the README has Node examples for training, checkpoints, workers and errors', () => {
  assert.ok(runnable.length >= 4, `found ${runnable.length} runnable examples`);
  for (const name of ['createModel', 'saveModelFile', 'createWorkerModel', 'WfError']) {
    assert.ok(runnable.some((b) => b.includes(name)), `an example uses ${name}`);
  }
});

runnable.forEach((code, i) => {
  test(`README example ${i + 1} runs: ${code.split('\n').find((l) => IMPORT.test(l)).trim()}`, () => {
    const file = join(project, `example${i + 1}.mjs`);
    writeFileSync(file, shorten(code));
    const out = execFileSync(process.execPath, [file], { cwd: project, encoding: 'utf8', timeout: 120_000 });
    assert.ok(out.length > 0, 'it printed something');
  });
});
