// What train()'s roll-back copy costs (src/js/handle.js: snapshot, rollbackBytes): each call
// with onDivergence 'rollback' (the default) saves the model's whole training state before
// its first step, and a diverged call loads it back. Per model: the copy's bytes, the heap it
// needs beside what is in use (the copy, and a second model's blocks while the load builds
// it), whether it fits the 4 GB wasm heap (else train() goes without, and warns), and the
// process's CPU seconds to take it and to put it back (CPU time: on a machine shared with
// other jobs the wall clock says more about them). SmolLM-135M's shape with random weights
// (bench/configs.mjs), fully trained and with LoRA adapters of rank 8 on every linear.
//   node bench/rollback.mjs [--skip-smollm]
import { createModel } from '../src/js/node.js';
import { modelHandle } from '../src/js/model.js';
import { SMOLLM_135M } from './configs.mjs';

const gb = (x) => `${(x / 1e9).toFixed(3)} GB`;
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };

async function row(name, config) {
  const model = await createModel(config, { threads: 1 });
  const V = model.config.vocabSize, T = Math.min(32, model.config.context);
  const ids = Array.from({ length: T + 1 }, (_, i) => (i * 7919) % V);
  model.trainStep(ids.slice(0, T), ids.slice(1), 1, T); // the moments and the activations exist, as in a call
  const core = modelHandle(model), inUse = core.rt.heapInUse(), need = core.rollbackBytes();
  let line = `${name.padEnd(28)} ${model.paramCount.toLocaleString('en-US').padStart(12)} parameters, ${gb(inUse)} in use; the copy and its load need ${gb(need)}: `;
  let c = cpu();
  const snap = core.snapshot();
  if (!snap) {
    line += `${gb(inUse + need)} > ${gb(core.rt.memoryBudget)}, no copy (train() warns; a divergence stops and says what stays applied)`;
  } else {
    const took = cpu() - c;
    model.trainStep(ids.slice(0, T), ids.slice(1), 1, T);
    c = cpu();
    core.restore(snap);
    line += `a copy of ${gb(snap.bytes.length)}, taken in ${took.toFixed(2)} s of CPU, put back in ${(cpu() - c).toFixed(2)} s (step ${model.step} again)`;
  }
  console.log(line);
  model.dispose();
}

await row('micro', 'micro');
await row('tiny', 'tiny');
await row('baby', 'baby');
if (!process.argv.includes('--skip-smollm')) {
  await row('SmolLM-135M, LoRA rank 8', { ...SMOLLM_135M, loraRank: 8, loraAlpha: 16, loraTargets: 127 });
  await row('SmolLM-135M, every weight', SMOLLM_135M);
}
