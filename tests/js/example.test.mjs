// The C example (examples/c/train.c) built for wasm (./build.sh example) takes the same
// steps as the package: the same preset, text, seed and run give bit-identical losses and
// learning rates from C and from JavaScript, since both drive the core's run (issue 24).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createModel } from '../../src/js/node.js';
import { ROOT } from './pack.js';

const EXAMPLE = join(ROOT, 'build/wasm-tests/example_train.js');
const TEXT_FILE = join(ROOT, 'data/austen/pride_and_prejudice.txt');

test('the same steps from C (the example in wasm) and from JavaScript give bit-identical losses', async (t) => {
  if (!existsSync(EXAMPLE)) {
    if (process.env.CI) assert.fail(`${EXAMPLE} is missing: ./build.sh example`);
    t.skip('build/wasm-tests/example_train.js is not built (./build.sh example; npm test builds it)');
    return;
  }
  const steps = 12, seed = 3, evalInterval = 5;
  const out = execFileSync(process.execPath, [EXAMPLE, TEXT_FILE, '--steps', String(steps), '--seed', String(seed),
    '--eval', String(evalInterval), '--losses'], { cwd: ROOT, encoding: 'utf8' });
  const fromC = out.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(fromC.length, steps);
  const text = readFileSync(TEXT_FILE, 'utf8');
  const model = await createModel('micro', { text, threads: 1 });
  const fromJs = [];
  await model.train(text, { steps, seed, evalInterval, yieldMs: 0, onProgress: (p) => fromJs.push(p) });
  model.dispose();
  assert.deepEqual(fromJs.map((p) => [p.step, Math.fround(p.loss), Math.fround(p.lr)]),
    fromC.map((c) => [c.step, Math.fround(c.loss), Math.fround(c.lr)]), 'every step\'s loss and learning rate, bit for bit');
});
