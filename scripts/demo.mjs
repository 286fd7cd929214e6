#!/usr/bin/env node
// npm run demo: builds the wasm module if needed, then trains the tiny GPT on the bundled
// Pride and Prejudice in Node and prints samples as it learns.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const build = spawnSync(join(root, 'build.sh'), [], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status || 1);

const { createModel } = await import('../src/js/node.js');
const steps = Number(process.env.STEPS || 2000);
const text = readFileSync(join(root, 'data/austen/pride_and_prejudice.txt'), 'utf8');
const model = await createModel('tiny');
console.log(`wasmformer: training the tiny GPT (${model.paramCount.toLocaleString()} parameters) on Pride and Prejudice ` +
  `(${text.length.toLocaleString()} characters) for ${steps} steps. Ctrl-C stops.`);
const ac = new AbortController();
process.on('SIGINT', () => ac.abort());
try {
  await model.train(text, {
    steps, lr: 2e-3, evalInterval: 250, signal: ac.signal,
    onProgress: (p) => {
      if (!p.validated) return;
      console.log(`step ${p.step}/${p.steps}  loss ${p.loss.toFixed(3)}  val ${p.valLoss.toFixed(3)}  ` +
        `${Math.round(p.tokensPerSecond)} tok/s  eta ${Math.round(p.eta)} s`);
    },
  });
} catch (e) {
  if (e.name !== 'AbortError') throw e;
  console.log(`stopped at step ${model.step}`);
}
console.log('\n--- sample (temperature 0.8) ---');
for await (const piece of model.generate('Elizabeth ', { maxTokens: 400, temperature: 0.8, seed: 1 })) process.stdout.write(piece);
console.log();
model.dispose();
