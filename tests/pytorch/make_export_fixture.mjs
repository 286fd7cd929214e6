// Writes the committed export fixtures: models exported by wasmformer, with the logits
// PyTorch computes from the exported files, so that CI (which has no PyTorch) still checks
// the export direction of the round trip (tests/js/review_c.test.mjs). Needs the wasm build
// and Debian's PyTorch at /usr/bin/python3.
//
// Usage: node tests/pytorch/make_export_fixture.mjs   (from the repository root)
//
// For each case, tests/fixtures/wf_export_<case>/ gets wasmformer's export (config.json,
// model.safetensors, tokenizer.wft) of a small model trained 20 steps on the bundled novel,
// and expected.safetensors: input_ids [B, T] and torch_logits [B, T, V], the logits of
// tests/pytorch/check_export.py (GPT2LMHeadModel's, LlamaForCausalLM's or
// GPTNeoXForCausalLM's forward in plain PyTorch), which also checks them against wasmformer's
// to 1e-5 before anything is kept. Usage: [case...] to write only those.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createModel, exportSafetensorsDir } from '../../src/js/node.js';

const PYTHON = '/usr/bin/python3';
const TEXT = readFileSync('data/austen/pride_and_prejudice.txt', 'utf8').slice(0, 40000);
const LLAMA = { norm: 'rmsnorm', activation: 'swiglu', positions: 'rope', tiedHead: false, bias: false, normEps: 1e-6 };
const BASE = { nLayer: 2, nHead: 4, dModel: 32, context: 32, vocabSize: 96, seed: 11 };
export const CASES = {
  gpt2: { ...BASE, dFF: 128 },
  llama: { ...BASE, dFF: 88, ...LLAMA },
  gpt_neox: { ...BASE, dFF: 128, positions: 'rope' }, // micro's shape: the CLI's and the page's default
};

/** A safetensors file of a few tensors ({name: [dtype, shape, TypedArray]}). */
export function encodeSafetensors(tensors) {
  const header = {};
  const parts = [];
  let offset = 0;
  for (const [name, [dtype, shape, data]] of Object.entries(tensors)) {
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes.length] };
    parts.push(bytes);
    offset += bytes.length;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + json.length) % 8)) % 8);
  const out = new Uint8Array(8 + json.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(new TextEncoder().encode(json), 8);
  let at = 8 + json.length;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

/** A tensor of a safetensors file: {dtype, shape, data}, data a typed array (F32 or I32). */
export function readTensor(path, name) {
  const buf = readFileSync(path);
  const n = Number(buf.readBigUInt64LE(0));
  const e = JSON.parse(buf.toString('utf8', 8, 8 + n))[name];
  const bytes = new Uint8Array(buf.subarray(8 + n + e.data_offsets[0], 8 + n + e.data_offsets[1]));
  return { dtype: e.dtype, shape: e.shape, data: e.dtype === 'I32' ? new Int32Array(bytes.buffer) : new Float32Array(bytes.buffer) };
}

async function main() {
  const only = process.argv.slice(2);
  for (const [name, config] of Object.entries(CASES)) {
    if (only.length && !only.includes(name)) continue;
    const out = `tests/fixtures/wf_export_${name}`;
    const work = mkdtempSync(join(tmpdir(), 'wf-export-'));
    try {
      const model = await createModel(config, { threads: 1 });
      await model.train(TEXT, { steps: 20, lr: 3e-3, evalInterval: 0, batchSize: 4, seed: 3 });
      const B = 2, T = config.context;
      const ids = Int32Array.from(model.tokenizer.encode(TEXT.slice(2000, 2000 + B * T)).slice(0, B * T));
      const ours = model.forward(ids, null, B, T).logits;
      await exportSafetensorsDir(model, work);
      writeFileSync(join(work, 'expected.safetensors'), encodeSafetensors({
        input_ids: ['I32', [B, T], ids], logits: ['F32', [B, T, config.vocabSize], ours],
      }));
      const r = spawnSync(PYTHON, ['tests/pytorch/check_export.py', work, '1e-5'], { encoding: 'utf8' });
      process.stdout.write(r.stdout);
      if (r.status !== 0) throw new Error(`PyTorch disagrees with wasmformer on ${name}:\n${r.stdout}${r.stderr}`);
      const torchLogits = readTensor(join(work, 'torch', 'logits.safetensors'), 'logits').data;
      mkdirSync(out, { recursive: true });
      for (const f of ['config.json', 'model.safetensors', 'tokenizer.wft']) copyFileSync(join(work, f), join(out, f));
      writeFileSync(join(out, 'expected.safetensors'), encodeSafetensors({
        input_ids: ['I32', [B, T], ids], torch_logits: ['F32', [B, T, config.vocabSize], torchLogits],
      }));
      console.log(`${out}: written`);
      model.dispose();
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
