// What generating from a pretrained model costs in wasm memory (issue 29): the SmolLM-135M
// shape (configs.mjs, random weights, seed 7) made once by wasmformer and written to
// bench/models/ (git-ignored), then, in a fresh Node process per row, the file loaded as a
// user would load it and 16 + 64 tokens generated (greedy). Reported: the weights' bytes
// (memory().params), the wasm heap in use after loading and after generating
// (wf_heap_in_use: what the model holds), the heap in use over the weights (the issue's
// target: ~1.2x), and the wasm memory's size (its peak, since wasm memory never shrinks: for
// safetensors the file's bytes crossed the heap while it loaded; a GGUF file streams through
// a 4 MB staging buffer since 2026-11-28, the file never whole in the heap).
// Rows: the float32 safetensors (imported), and GGUF files in float32, Q8_0 and Q4_0
// (loadModelFile, which streams; before 2026-11-28: loadModel of the file's bytes).
//   node bench/infer-memory.mjs [--rows safetensors,gguf-f32,gguf-q8_0,gguf-q4_0]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SMOLLM_135M } from './configs.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const DIR = join(here, 'models', 'smollm-135m');
const SEED = 7;
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const role = arg('role', 'main');
const MiB = (x) => (x / 2 ** 20).toFixed(0);

/** The rows: how each file is made (from the f32 model `model`) and loaded. */
const ggufRow = (type) => ({
  file: `${type}.gguf`,
  async make(api) { /* from the same weights each time (seed 7): quantized once, from float32 */
    const m = await api.createModel({ ...SMOLLM_135M, seed: SEED }, { threads: 2 });
    if (type !== 'f32') m.quantize(type);
    await api.saveModelFile(m, join(DIR, `${type}.gguf`), { format: 'gguf' });
    m.dispose();
  },
  load: async (api, opts) => api.loadModelFile(join(DIR, `${type}.gguf`), opts),
});
const ROWS = {
  safetensors: {
    file: 'model.safetensors',
    async make(api, model) { await api.exportSafetensorsDir(model, DIR); },
    load: (api, opts) => api.importSafetensorsDir(DIR, opts),
  },
  'gguf-f32': ggufRow('f32'),
  'gguf-q8_0': ggufRow('q8_0'),
  'gguf-q4_0': ggufRow('q4_0'),
};

if (role === 'make') {
  const api = await import('../src/js/node.js');
  const model = await api.createModel({ ...SMOLLM_135M, seed: SEED }, { threads: 2 });
  mkdirSync(DIR, { recursive: true });
  for (const name of arg('rows').split(',')) await ROWS[name].make(api, model);
  model.dispose();
  process.exit(0);
}

if (role === 'measure') {
  const api = await import('../src/js/node.js');
  const { modelHandle } = await import('../src/js/model.js');
  const row = ROWS[arg('row')];
  const model = await row.load(api, { threads: 1 });
  const core = modelHandle(model), rt = core.rt, h = core.live();
  const loaded = rt.heapInUse();
  let seed = 7;
  const prompt = Array.from({ length: 16 }, () => { seed = (seed * 1103515245 + 12345) >>> 0; return (seed >>> 8) % SMOLLM_135M.vocabSize; });
  const ps = rt.putSampling({ temperature: 0, topK: 0, topP: 1, nVocab: 0, noUnk: 0 });
  rt.genStart(h, prompt, 1);
  for (let i = 0; i < 64; i++) rt.genNext(h, ps);
  rt.free(ps);
  const mem = model.memory();
  const result = { params: mem.params, grads: mem.grads, optimizer: mem.optimizer, loaded, generating: rt.heapInUse(),
    heapSize: rt.heapSize, file: readFileSync(join(DIR, row.file)).byteLength };
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
  process.exit(0);
}

const child = (args) => {
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
};
const rows = arg('rows', Object.keys(ROWS).join(',')).split(',');
const stampFile = join(DIR, 'stamp.json'), stamp = JSON.stringify({ config: SMOLLM_135M, seed: SEED });
const have = existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp;
const missing = rows.filter((r) => !have || !existsSync(join(DIR, ROWS[r].file)));
if (missing.length) {
  child(['--role', 'make', '--rows', missing.join(',')]);
  writeFileSync(stampFile, stamp);
}
console.log(`SmolLM-135M shape (random weights, seed ${SEED}), loaded in a fresh Node ${process.version} process per row, ` +
  `single-thread wasm build, 16-token prompt + 64 greedy tokens; ${os.cpus()[0].model.trim()}, load average ` +
  `${os.loadavg()[0].toFixed(2)}`);
console.log('| file | file MiB | weights MiB | gradients + optimizer MiB | heap in use, loaded MiB | heap in use, generating MiB | in use / weights | wasm memory MiB |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const name of rows) {
  const line = child(['--role', 'measure', '--row', name]).split('\n').find((l) => l.startsWith('RESULT '));
  const r = JSON.parse(line.slice(7));
  console.log(`| ${ROWS[name].file} | ${MiB(r.file)} | ${MiB(r.params)} | ${MiB(r.grads + r.optimizer)} | ${MiB(r.loaded)} | ` +
    `${MiB(r.generating)} | ${(r.generating / r.params).toFixed(3)}x | ${MiB(r.heapSize)} |`);
}
