// Seed 002's exact setup (bench/studies/seed002.mjs) for its first 60 of 500 steps: the loss starts
// where a final LayerNorm at init puts it (unit-variance rows against targets of RMS 0.02,
// so MSE ~ 1), falls at every step logged, and Adam without weight decay leaves the unused
// token table untouched. The full run and its comparison with the seed: docs/SEEDS.md.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSeed002 } from '../../bench/studies/seed002.mjs';

test('seed 002: the first 60 steps of the exact setup', async () => {
  const losses = [];
  const r = await runSeed002({ steps: 60, every: 10, onStep: (s, loss) => losses.push(loss) });
  const wte0 = r.encoder.model.getTensor('wte');
  console.log(`seed 002: MSE ${r.curve.map((p) => `${p.step}: ${p.loss.toFixed(4)}`).join(', ')}; after 60 steps ${r.final.toFixed(4)}`);
  assert.ok(Math.abs(r.first - 1) < 0.01, `initial MSE ${r.first}, want ~1 (LayerNorm output against near-zero targets)`);
  assert.ok(r.targetMeanSquare > 3e-4 && r.targetMeanSquare < 5e-4, `targets drawn with std 0.02: mean square ${r.targetMeanSquare}`);
  for (let i = 1; i < losses.length; i++) assert.ok(losses[i] < losses[i - 1], `the loss rose at step ${i + 1}`);
  assert.ok(r.final < r.first - 0.03, `MSE ${r.first} -> ${r.final}`);
  // vectors in: the token table gets no gradient, and without weight decay Adam leaves it be
  const again = await runSeed002({ steps: 1 });
  assert.deepEqual(r.encoder.model.getTensor('wte'), wte0);
  assert.deepEqual(again.encoder.model.getTensor('wte'), wte0, 'same seed, same init');
  assert.equal(again.first, r.first, 'the run is deterministic');
  r.encoder.dispose();
  again.encoder.dispose();
});
