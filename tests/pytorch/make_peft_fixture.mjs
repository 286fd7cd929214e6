// Writes the committed PEFT fixtures: LoRA adapters wasmformer trained and exported in
// PEFT's layout beside their base, with the logits PyTorch computes from those files
// (tests/pytorch/check_peft.py: PEFT's LoRA layer written out by hand, beside the base and
// merged), so that CI, which has no PyTorch, still checks the export against PyTorch
// (tests/js/lora.test.mjs). Needs the wasm build and Debian's PyTorch at /usr/bin/python3.
//
// Usage: node tests/pytorch/make_peft_fixture.mjs   (from the repository root)
//
// For each case, tests/fixtures/wf_peft_<case>/ gets the base (config.json,
// model.safetensors: a small model trained 20 steps on the bundled novel), the adapters
// (adapter_model.safetensors, adapter_config.json: rank 4 on every linear but GPT-2's
// mlp.c_proj and on GPT-NeoX's q, v, o, fc and down, trained 20 more steps with the base frozen), and expected.safetensors:
// input_ids [B, T] and torch_logits [B, T, V], which check_peft.py has first checked
// against wasmformer's to 1e-5.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createModel, exportPeftDir, exportSafetensors } from '../../src/js/node.js';
import { CASES, encodeSafetensors, readTensor } from './make_export_fixture.mjs';

const PYTHON = '/usr/bin/python3';
const TEXT = readFileSync('data/austen/pride_and_prejudice.txt', 'utf8').slice(0, 40000);
export const TARGETS = { gpt2: ['q', 'k', 'v', 'o', 'fc'], llama: 'all', gpt_neox: ['q', 'v', 'o', 'fc', 'down'] };

/** The case's model, trained, with trained adapters; its input ids and logits. */
export async function tunedModel(name) {
  const config = CASES[name];
  const model = await createModel(config, { threads: 1 });
  await model.train(TEXT, { steps: 20, lr: 3e-3, evalInterval: 0, batchSize: 4, seed: 3 });
  const base = exportSafetensors(model); // the base, before the adapters (an export refuses them)
  model.addLora({ rank: 4, alpha: 8, targets: TARGETS[name] });
  await model.train(TEXT.slice(20000), { steps: 20, lr: 1e-2, evalInterval: 0, batchSize: 4, seed: 4 });
  const B = 2, T = config.context;
  const ids = Int32Array.from(model.tokenizer.encode(TEXT.slice(3000, 3000 + B * T)).slice(0, B * T));
  return { model, base, ids, B, T, logits: model.forward(ids, null, B, T).logits };
}

/** Writes the base, the adapters and expected.safetensors into dir; runs check_peft.py. */
export async function writeCase(name, dir, t) {
  for (const f of ['config.json', 'model.safetensors']) writeFileSync(join(dir, f), t.base[f]);
  await exportPeftDir(t.model, dir);
  writeFileSync(join(dir, 'expected.safetensors'), encodeSafetensors({
    input_ids: ['I32', [t.B, t.T], t.ids], logits: ['F32', [t.B, t.T, CASES[name].vocabSize], t.logits],
  }));
  return spawnSync(PYTHON, ['tests/pytorch/check_peft.py', dir, '1e-5'], { encoding: 'utf8' });
}

async function main() {
  const only = process.argv.slice(2); // [case...]: write only those
  for (const name of Object.keys(CASES)) {
    if (only.length && !only.includes(name)) continue;
    const out = `tests/fixtures/wf_peft_${name}`;
    const work = mkdtempSync(join(tmpdir(), 'wf-peft-'));
    try {
      const t = await tunedModel(name);
      const r = await writeCase(name, work, t);
      process.stdout.write(r.stdout);
      if (r.status !== 0) throw new Error(`PyTorch disagrees with wasmformer on ${name}:\n${r.stdout}${r.stderr}`);
      const torchLogits = readTensor(join(work, 'torch_logits.safetensors'), 'logits').data;
      mkdirSync(out, { recursive: true });
      for (const f of ['config.json', 'model.safetensors', 'adapter_model.safetensors', 'adapter_config.json']) {
        copyFileSync(join(work, f), join(out, f));
      }
      writeFileSync(join(out, 'expected.safetensors'), encodeSafetensors({
        input_ids: ['I32', [t.B, t.T], t.ids], torch_logits: ['F32', [t.B, t.T, CASES[name].vocabSize], torchLogits],
      }));
      console.log(`${out}: written`);
      t.model.dispose();
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
