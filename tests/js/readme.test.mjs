// The README's Node examples run as written, against this checkout installed as
// node_modules/wasmformer of a scratch project (browser examples are left to
// package.test.mjs), with their step and token counts cut down
// so that the whole file takes seconds (the only change made to them).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './pack.js';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const blocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
// 'wasmformer' and 'wasmformer/node' (the Node-only helpers, as TypeScript's bundler resolution wants them)
const IMPORT = /from 'wasmformer(\/node)?'/;
const runnable = blocks.filter((b) => IMPORT.test(b) && !/\b(document|window|fetch|Worker)\b/.test(b));

const project = mkdtempSync(join(tmpdir(), 'wf-readme-'));
after(() => rmSync(project, { recursive: true, force: true }));
mkdirSync(join(project, 'node_modules'));
symlinkSync(ROOT, join(project, 'node_modules/wasmformer'), 'dir');
writeFileSync(join(project, 'package.json'), '{"type":"module","private":true}');

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

test('the README imports Node\'s file helpers from \'wasmformer/node\': TypeScript\'s bundler resolution finds them only there', () => {
  const nodeOnly = [...readFileSync(join(ROOT, 'src/js/node.d.ts'), 'utf8').matchAll(/^export function (\w+)/gm)].map((m) => m[1]);
  assert.ok(nodeOnly.includes('saveModelFile') && nodeOnly.includes('exportPeftDir'), nodeOnly.join(', '));
  for (const m of readme.matchAll(/import \{([^}]*)\} from 'wasmformer'/g)) {
    const names = m[1].split(',').map((s) => s.trim());
    assert.deepEqual(names.filter((n) => nodeOnly.includes(n)), [], m[0]);
  }
});
