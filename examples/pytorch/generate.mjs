#!/usr/bin/env node
// Step 3 of 3 (README.md here): the model PyTorch trained, back in wasmformer. Imports the
// folder train_ddp.py wrote (config.json, model.safetensors, tokenizer.wft) and generates.
// With --check, first compares wasmformer's logits with PyTorch's on the ids of
// probe.safetensors and exits 1 when they differ by more than --tolerance.
// --save writes a .wf model file, which the page (web/, "Open model") and the CLI open.
//
//   node examples/pytorch/generate.mjs run/pytorch [--check] [--tolerance 1e-4]
//        [--prompt TEXT] [--tokens 200] [--temperature 0.8] [--seed N] [--save model.wf]
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { importSafetensorsDir, saveModelFile } from '../../src/js/node.js';

/** {name: {dtype, shape, data}} of a safetensors file's F32 and I32 tensors. */
export function readSafetensors(buf) {
  const bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength); // a Buffer's slice() would not copy
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const out = {};
  for (const [name, e] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const kind = { F32: Float32Array, I32: Int32Array }[e.dtype];
    if (!kind) throw new Error(`${name}: dtype ${e.dtype}; this reader takes F32 and I32`);
    const raw = bytes.slice(8 + n + e.data_offsets[0], 8 + n + e.data_offsets[1]); // a copy: aligned
    out[name] = { dtype: e.dtype, shape: e.shape, data: new kind(raw.buffer) };
  }
  return out;
}

/** The largest |wasmformer - PyTorch| over the logits of probe.safetensors' ids. */
export async function checkLogits(model, dir) {
  const probe = readSafetensors(await readFile(join(dir, 'probe.safetensors')));
  const [B, T] = probe.input_ids.shape;
  const ours = model.forward(probe.input_ids.data, null, B, T).logits;
  let worst = 0;
  for (let i = 0; i < ours.length; i++) worst = Math.max(worst, Math.abs(ours[i] - probe.logits.data[i]));
  return { worst, B, T, V: probe.logits.shape[2] };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values: o, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      check: { type: 'boolean' }, tolerance: { type: 'string', default: '1e-4' },
      prompt: { type: 'string', default: '' }, tokens: { type: 'string', default: '200' },
      temperature: { type: 'string', default: '0.8' }, seed: { type: 'string' }, save: { type: 'string' },
    },
  });
  if (positionals.length !== 1) {
    console.error('usage: node examples/pytorch/generate.mjs DIR [--check] [--tolerance X] [--prompt TEXT] [--tokens N] [--temperature X] [--seed N] [--save model.wf]');
    process.exit(2);
  }
  const dir = positionals[0];
  const model = await importSafetensorsDir(dir);
  console.log(`${dir}: ${model.paramCount.toLocaleString('en-US')} parameters imported`);
  if (o.check) {
    const { worst, B, T, V } = await checkLogits(model, dir);
    const tol = Number(o.tolerance);
    console.log(`logits [${B}, ${T}, ${V}] against PyTorch's: max abs diff ${worst.toExponential(2)} (tolerance ${tol})`);
    if (!(worst <= tol)) process.exit(1);
  }
  if (o.save) console.log(`${o.save}: ${(await saveModelFile(model, o.save)).toLocaleString('en-US')} bytes`);
  const opts = { maxTokens: Number(o.tokens), temperature: Number(o.temperature), ...(o.seed === undefined ? {} : { seed: Number(o.seed) }) };
  process.stdout.write(o.prompt);
  for await (const piece of model.generate(o.prompt, opts)) process.stdout.write(piece);
  process.stdout.write('\n');
  model.dispose();
}
