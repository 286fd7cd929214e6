#!/usr/bin/env node
// Step 1 of 3 (README.md here): a wasmformer model out to PyTorch. Writes into --out:
//   wasmformer/   the model as Hugging Face files: config.json, model.safetensors (GPT-2,
//                 GPT-NeoX or Llama layout) and tokenizer.wft (wasmformer's tokenizer, carried along)
//   train.bin, val.bin   the text as token ids of that tokenizer (int32, little-endian), so
//                 PyTorch trains on exactly the ids wasmformer would: no tokenizer in Python
//   export.json   wasmformer's validation loss on val.bin (PyTorch's before its first step
//                 must be the same), its training loss and the model's size
// The model is --model (a .wf file, e.g. from `wasmformer train`), or a new one (--layout,
// --config) trained for --steps in wasm first, as it would be on a laptop.
//
//   node examples/pytorch/export.mjs --out run [--model model.wf] [--text file.txt]
//        [--layout llama|gpt2|gpt_neox] [--config JSON] [--steps N] [--val-fraction F]
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createModel, exportSafetensorsDir, loadModelFile } from '../../src/js/node.js';

const LAYOUTS = {
  // a Llama-style decoder (docs/ARCHITECTURES.md): RMSNorm, SwiGLU, RoPE, no biases
  llama: { norm: 'rmsnorm', activation: 'swiglu', positions: 'rope', bias: false, tiedHead: false, normEps: 1e-6 },
  gpt2: {}, // the defaults: LayerNorm, GELU, learned positions, biases, tied head
  gpt_neox: { positions: 'rope' }, // the same with RoPE: micro's shape, `wasmformer train`'s default
};
const USAGE = 'usage: node examples/pytorch/export.mjs --out DIR [--model model.wf] [--text file.txt] ' +
  '[--layout llama|gpt2|gpt_neox] [--config JSON] [--steps N] [--val-fraction F] [--seed N]';

/** The options, checked; throws an Error whose message is the problem and the usage. */
export function parseOptions(argv) {
  const { values: o } = parseArgs({
    args: argv,
    strict: true,
    options: {
      out: { type: 'string' },
      model: { type: 'string' },
      text: { type: 'string', default: fileURLToPath(new URL('../../data/austen/pride_and_prejudice.txt', import.meta.url)) },
      layout: { type: 'string', default: 'llama' },
      config: { type: 'string', default: '{}' },
      steps: { type: 'string', default: '200' },
      'val-fraction': { type: 'string', default: '0.1' },
      seed: { type: 'string', default: '1' },
    },
  });
  const fail = (msg) => { throw new Error(`${msg}\n${USAGE}`); };
  if (!o.out) fail('--out is required');
  if (!Object.hasOwn(LAYOUTS, o.layout)) fail(`--layout must be llama, gpt2 or gpt_neox, not "${o.layout}"`);
  const steps = Number(o.steps), valFraction = Number(o['val-fraction']), seed = Number(o.seed);
  if (!Number.isInteger(steps) || steps < 0) fail(`--steps must be an integer >= 0, not "${o.steps}"`);
  if (!(valFraction > 0 && valFraction < 1)) fail(`--val-fraction must be in (0, 1), not "${o['val-fraction']}"`);
  if (!Number.isInteger(seed)) fail(`--seed must be an integer, not "${o.seed}"`);
  let config;
  try { config = JSON.parse(o.config); } catch (e) { fail(`--config is not JSON: ${e.message}`); }
  return { out: o.out, model: o.model, text: o.text, layout: o.layout, config, steps, valFraction, seed };
}

/** Runs step 1; resolves to what export.json says. */
export async function exportForPyTorch(opts) {
  const text = await readFile(opts.text, 'utf8');
  let model, trainLoss = null;
  if (opts.model) {
    model = await loadModelFile(opts.model);
  } else {
    model = await createModel({ nLayer: 2, nHead: 4, dModel: 64, dFF: 256, context: 64, ...LAYOUTS[opts.layout], seed: opts.seed, ...opts.config });
    if (opts.steps > 0) trainLoss = (await model.train(text, { steps: opts.steps, evalInterval: 0, valFraction: opts.valFraction, seed: opts.seed })).loss;
  }
  const ids = Int32Array.from(model.tokenizer.encode(text));
  const nVal = Math.max(model.config.context + 1, Math.floor(ids.length * opts.valFraction));
  if (ids.length < 2 * nVal) throw new Error(`${opts.text}: ${ids.length} tokens, too few for a context of ${model.config.context} and --val-fraction ${opts.valFraction}`);
  // the same split as wasmformer's training: validation is the end of the text
  const train = ids.subarray(0, ids.length - nVal), val = ids.subarray(ids.length - nVal);
  const valLoss = (await model.evaluate(val)).loss;
  await mkdir(opts.out, { recursive: true });
  const files = await exportSafetensorsDir(model, join(opts.out, 'wasmformer'));
  const bytes = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength); // little-endian, as every wasm host
  await writeFile(join(opts.out, 'train.bin'), bytes(train));
  await writeFile(join(opts.out, 'val.bin'), bytes(val));
  const info = { params: model.paramCount, steps: model.step, trainLoss, valLoss, train: train.length, val: val.length, files };
  await writeFile(join(opts.out, 'export.json'), `${JSON.stringify(info, null, 2)}\n`);
  model.dispose();
  return info;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let opts;
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (e) {
    console.error(e.message);
    process.exit(2);
  }
  const info = await exportForPyTorch(opts);
  const arch = JSON.parse(await readFile(join(opts.out, 'wasmformer', 'config.json'), 'utf8')).architectures[0];
  console.log(`${join(opts.out, 'wasmformer')}/: ${info.files.join(', ')} (${arch}, ${info.params.toLocaleString('en-US')} parameters)`);
  console.log(`${join(opts.out, 'train.bin')}: ${info.train.toLocaleString('en-US')} token ids, val.bin: ${info.val.toLocaleString('en-US')} (int32 little-endian); ` +
    `validation loss in wasmformer ${info.valLoss.toFixed(4)}`);
  console.log(`next: torchrun --standalone --nproc_per_node 2 examples/pytorch/train_ddp.py --data ${opts.out} --steps 200`);
}
