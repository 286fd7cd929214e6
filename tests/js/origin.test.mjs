// info().origin: what made a model, in the core's words (wf_model_info.origin), so a caller
// (the page) can tell a checkpoint to continue from a pretrained model to fine-tune without
// guessing from the file's name or its step count (issue 27, point 6).
import test from 'node:test';
import assert from 'node:assert/strict';
import { createModel, exportSafetensors, importSafetensors, loadModel } from '../../src/js/node.js';

test('info().origin names what made the model, and training keeps it', async () => {
  const text = 'a small text to train on, a small text to train on. '.repeat(20);
  const m = await createModel({ preset: 'micro', context: 16 }, { text, threads: 1 });
  assert.equal(m.info().origin, 'init');
  await m.train(m.tokenizer.encode(text), { steps: 2, batchSize: 2, evalInterval: 0, valFraction: 0 });
  const full = await loadModel(m.save(), { threads: 1 });
  assert.equal(full.info().origin, 'optimizer', 'a .wf with its optimizer state');
  assert.equal(full.info().step, 2);
  const weights = await loadModel(m.save({ optimizer: false }), { threads: 1 });
  assert.equal(weights.info().origin, 'weights');
  const hf = await importSafetensors(exportSafetensors(m), { threads: 1 });
  assert.equal(hf.info().origin, 'safetensors');
  await hf.train(hf.tokenizer.encode(text), { steps: 1, batchSize: 2, evalInterval: 0, valFraction: 0 });
  assert.equal(hf.info().origin, 'safetensors', 'training does not change where it came from');
  for (const x of [m, full, weights, hf]) x.dispose();
});
