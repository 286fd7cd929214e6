// What 8- and 4-bit weights cost in quality (issue 29): a model trained here (the "tiny"
// preset, a char tokenizer, on the first 90 % of Pride and Prejudice), then its held-out
// loss on the last 10 % (every window: evaluate()) as float32, Q8_0 and Q4_0, and after a
// round trip through GGUF; and its greedy tokens (64 positions after a held-out prompt) with
// Q8_0 and Q4_0 weights against float32's. Targets: Q8_0 within 0.5 %, Q4_0 within 3 %;
// Q8_0's greedy tokens equal to float32's.
//   node bench/quant-quality.mjs [--steps 1500] [--seed 1]
import { readFileSync } from 'node:fs';
import { createModel, loadModel } from '../src/js/node.js';
import { modelHandle } from '../src/js/model.js';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const steps = arg('steps', 1500), seed = arg('seed', 1);
const text = readFileSync(new URL('../data/austen/pride_and_prejudice.txt', import.meta.url), 'utf8');
const cut = Math.floor(text.length * 0.9);
const train = text.slice(0, cut), held = text.slice(cut);

const t0 = performance.now();
// a vocabulary of 260 ids (the char tokenizer uses the first ~80): what a GGUF file without a
// tokenizer needs for its placeholder vocabulary (the round trip below keeps token ids)
const model = await createModel({ preset: 'tiny', seed, vocabSize: 260, positions: 'rope', norm: 'rmsnorm', activation: 'swiglu', bias: false },
  { text, threads: 2 });
await model.train(train, { steps, evalInterval: 0, valFraction: 0 });
console.log(`trained tiny (Llama-shaped, ${model.paramCount.toLocaleString('en-US')} parameters) for ${steps} steps in ` +
  `${((performance.now() - t0) / 1000).toFixed(0)} s`);

const heldIds = model.tokenizer.encode(held), prompt = Array.from(heldIds.subarray(1000, 1032));
/** The held-out loss (every window) and 64 greedy tokens after the prompt, on token ids. */
async function measure(m) {
  const { loss } = await m.evaluate(heldIds);
  const core = modelHandle(m), rt = core.rt, h = core.live();
  const ps = rt.putSampling({ temperature: 0, topK: 0, topP: 1, nVocab: 0, noUnk: 0 });
  rt.genStart(h, prompt, 1);
  const ids = Array.from({ length: 64 }, () => rt.genNext(h, ps));
  rt.free(ps);
  return { loss, ids };
}
/** m through a GGUF file (without its char tokenizer: a placeholder vocabulary; ids are kept). */
async function viaGguf(m) {
  const core = modelHandle(m);
  return loadModel(core.rt.modelSave(core.live(), 0, false, true), { threads: 2 });
}
const rows = [];
const base = await measure(model);
rows.push(['f32', base]);
for (const type of ['q8_0', 'q4_0']) {
  const q = await loadModel(model.save(), { threads: 2 });
  q.quantize(type);
  rows.push([type, await measure(q)]);
  const g = await viaGguf(q);
  rows.push([`${type} via GGUF`, await measure(g)]);
  q.dispose();
  g.dispose();
}
const same = (a, b) => { let k = 0; while (k < a.length && a[k] === b[k]) k++; return k; };
console.log('| weights | held-out loss | vs float32 | greedy tokens equal to float32\'s (of 64, from the first) |');
console.log('|---|---:|---:|---:|');
for (const [name, r] of rows) {
  console.log(`| ${name} | ${r.loss.toFixed(4)} | ${(100 * (r.loss / base.loss - 1)).toFixed(2)} % | ${same(r.ids, base.ids)} |`);
}
model.dispose();
