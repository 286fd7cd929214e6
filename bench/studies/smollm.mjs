// A SmolLM-135M-shaped model in the wasm build (issue 15, "scale"): HuggingFaceTB's
// SmolLM-135M config (Llama layout: 30 layers, width 576, 9 query heads over 3 key/value
// heads, feed-forward 1536, vocabulary 49,152, tied embeddings, RoPE base 1e5, RMSNorm eps
// 1e-5, context 2048) with random weights, since no weights can be downloaded here. It
// measures what a user would meet: the memory the model takes, generation tokens/s (a
// 16-token prompt, then new tokens over the KV cache), full training steps (every weight,
// AdamW) at batch 1, and the Hugging Face round trip a pretrained model would take
// (export to safetensors + config.json, free, import), all in the one 4 GB wasm heap. LoRA
// (issue 15 item 4): the same model with adapters of rank 8 (on every linear, then on q and v
// alone; the base frozen) beside the full one, their training steps interleaved so that both
// meet the same machine load; then adapters added to the imported model, as a pretrained
// SmolLM would be fine-tuned. Each step's CPU time (this process, every thread) is reported
// beside its wall time: other work on the machine changes the second more than the first.
//   node bench/studies/smollm.mjs [--threads 2] [--tokens 64] [--steps 3] [--T 128]
// The same model's generation in ONNX Runtime Web, the anchor: bench/studies/smollm-anchor.mjs.
import { createModel, importSafetensors, exportSafetensors } from '../../src/js/node.js';
import { modelHandle } from '../../src/js/model.js';
import { SMOLLM_135M } from '../configs.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const threads = arg('threads', 2), nTokens = arg('tokens', 64), steps = arg('steps', 3), T = arg('T', 128);

const mb = (x) => `${(x / 2 ** 20).toFixed(0)} MB`;
const now = () => performance.now() / 1000;

let t0 = now();
let model = await createModel(SMOLLM_135M, { threads });
const mem = model.memory();
console.log(`created in ${(now() - t0).toFixed(1)} s: ${model.paramCount.toLocaleString('en-US')} parameters; ` +
  `weights ${mb(mem.params)}, gradients ${mb(mem.grads)}, optimizer ${mb(mem.optimizer)}, inference (KV cache etc.) ${mb(mem.inference)}; ` +
  `${threads} thread(s), ${model.info().threads} offered`);

// generation over the KV cache, through the C API (the model has no tokenizer: ids in, ids out)
const core = modelHandle(model), rt = core.rt, h = core.live();
let seed = 7;
const rnd = (n) => Array.from({ length: n }, () => { seed = (seed * 1103515245 + 12345) >>> 0; return (seed >>> 8) % SMOLLM_135M.vocabSize; });
const prompt = rnd(16);
const ps = rt.putSampling({ temperature: 0.8, topK: 0, topP: 1, nVocab: 0, noUnk: 0 });
t0 = now();
rt.genStart(h, prompt, 1);
const tPrompt = now() - t0;
t0 = now();
for (let i = 0; i < nTokens; i++) rt.genNext(h, ps);
const genS = now() - t0;
rt.free(ps);
console.log(`generation: prompt of 16 read in ${tPrompt.toFixed(2)} s; ${nTokens} new tokens at ${(nTokens / genS).toFixed(1)} tok/s`);

// full training steps at batch 1 (every weight, AdamW)
const ids = rnd(T + 1);
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
/** One training step of m: {wall, cpu} seconds and the loss. */
function timedStep(m) {
  const w = now(), c = cpu();
  const loss = m.trainStep(ids.slice(0, T), ids.slice(1), 1, T).loss;
  return { wall: now() - w, cpu: cpu() - c, loss };
}
const state = (m) => m.params + m.grads + m.optimizer;
const fullRuns = [];
const describe = (runs) => `median ${median(runs.map((r) => r.wall)).toFixed(2)} s a step (CPU ${median(runs.map((r) => r.cpu)).toFixed(2)} s) = ` +
  `${(T / median(runs.map((r) => r.wall))).toFixed(0)} tok/s, loss ${runs.at(-1).loss.toFixed(3)}`;
const fullMem = model.memory();
// LoRA models of the same shape and seed (so the same base), their steps interleaved with
// the full model's: warm-up steps first, then `steps` of each in turn
const loraResults = [];
for (const targets of [127, 1 | 4]) { // every linear; q and v (the config's bits: docs/ARCHITECTURES.md)
  // made with its adapters: the base is frozen from the start, so no full training state is allocated
  const lora = await createModel({ ...SMOLLM_135M, loraRank: 8, loraAlpha: 16, loraTargets: targets }, { threads });
  timedStep(lora);
  if (fullRuns.length === 0) timedStep(model);
  const runs = [];
  for (let s = 0; s < steps; s++) {
    fullRuns.push(timedStep(model));
    runs.push(timedStep(lora));
  }
  loraResults.push({ lora: lora.lora, runs, mem: lora.memory(), trainable: lora.trainable().trainable });
  lora.dispose();
}
console.log(`training: batch 1 x ${T}; full (every weight, AdamW): ${describe(fullRuns)}; weights, gradients and moments ` +
  `${mb(state(fullMem))} (${mb(fullMem.params)} + ${mb(fullMem.grads)} + ${mb(fullMem.optimizer)}), activations ${mb(model.memory().activations)}`);
for (const r of loraResults) {
  const w = median(r.runs.map((x) => x.wall)), c = median(r.runs.map((x) => x.cpu));
  const fw = median(fullRuns.map((x) => x.wall)), fc = median(fullRuns.map((x) => x.cpu));
  console.log(`LoRA rank ${r.lora.rank} on ${r.lora.targets.join(', ')}: ${r.trainable.toLocaleString('en-US')} trainable ` +
    `parameters (${(100 * r.trainable / model.paramCount).toFixed(2)} %); weights, gradients and moments ${mb(state(r.mem))} ` +
    `(${mb(r.mem.params)} + ${mb(r.mem.grads)} + ${mb(r.mem.optimizer)}: ${(100 * state(r.mem) / state(fullMem)).toFixed(0)} % of ` +
    `full training's); ${describe(r.runs)}: ${(fw / w).toFixed(2)}x full training's speed (CPU time ${(fc / c).toFixed(2)}x)`);
}
console.log(`wasm heap after training: ${mb(rt.M.HEAPU8.buffer.byteLength)}`);

// the Hugging Face round trip a pretrained SmolLM takes: Llama layout out, and back in
t0 = now();
const files = exportSafetensors(model);
const exportS = now() - t0;
const cfg = JSON.parse(files['config.json']);
const logitsBefore = model.forward(ids.slice(0, 8), null, 1, 8).logits.slice(0, 16);
model.dispose();
t0 = now();
model = await importSafetensors(files, { threads });
const importS = now() - t0;
const logitsAfter = model.forward(ids.slice(0, 8), null, 1, 8).logits.slice(0, 16);
const same = logitsBefore.every((v, i) => v === logitsAfter[i]);
console.log(`Hugging Face files: ${cfg.architectures[0]}, num_key_value_heads ${cfg.num_key_value_heads}, rope_theta ${cfg.rope_theta}; ` +
  `safetensors ${mb(files['model.safetensors'].length)} written in ${exportS.toFixed(1)} s, imported in ${importS.toFixed(1)} s; ` +
  `logits after the round trip ${same ? 'identical' : 'DIFFERENT'}`);
// a pretrained model's fine-tuning: adapters added to the imported model, the base frozen
t0 = now();
model.addLora({ rank: 8, alpha: 16 });
const addS = now() - t0, tuned = [timedStep(model), timedStep(model)], tm = model.memory();
console.log(`the imported model: LoRA rank 8 on every linear added in ${addS.toFixed(1)} s; training state ` +
  `${mb(state(tm))} (was ${mb(state(fullMem))}); 2 steps: losses ${tuned.map((r) => r.loss.toFixed(3)).join(', ')}`);
console.log(`wasm heap at the end: ${mb(rt.M.HEAPU8.buffer.byteLength)} (the 4 GB limit: 4096 MB)`);
model.dispose();
if (!same) process.exit(1);
