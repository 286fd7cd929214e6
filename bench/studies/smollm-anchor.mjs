// The anchor for bench/studies/smollm.mjs (issue 15, "scale"): the SmolLM-135M-shaped model's
// generation speed in wasmformer and in ONNX Runtime Web (npm onnxruntime-web, its wasm
// backend, SIMD, in Node) on the same machine in the same run, with the same weights.
//
// The weights: wasmformer makes the random-weight model (configs.mjs's SMOLLM_135M, seed 7)
// and exports it as Llama-layout safetensors into bench/studies/onnx/smollm-135m/ (git-ignored);
// bench/studies/smollm_onnx.py (PyTorch) turns those into model.onnx, a decoding step over a KV
// cache (past keys and values in, present out). Both are made once and reused while
// anchor.json there matches. Then, for each thread count, each engine in a process of its
// own (ORT reads its thread count once per process): a warm-up, then a 16-token prompt and
// 64 new tokens, greedy; rounds alternate which engine goes first. Checked: the prompt's
// logits agree between the engines (max abs diff printed; it must be under 1e-3), and how
// many of the greedy tokens agree is shown.
//
//   node bench/studies/smollm-anchor.mjs [--threads 1,2] [--tokens 64] [--prompt 16] [--rounds 2]
// Needs /usr/bin/python3 with torch to make model.onnx the first time, and `npm ci` in bench/.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SMOLLM_135M, median } from '../configs.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const DIR = join(here, 'onnx', 'smollm-135m');
const SEED = 7;
const PYTHON = '/usr/bin/python3';
const LOGIT_TOL = 1e-3; // float32 through 30 layers, two engines' kernels: ~1e-5 expected

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const role = arg('role', 'main');
const threads = Number(arg('n', 1));
const nTokens = Number(arg('tokens', 64)), nPrompt = Number(arg('prompt', 16));

/** The prompt: nPrompt ids from smollm.mjs's generator. */
function promptIds() {
  let seed = 7;
  return Array.from({ length: nPrompt }, () => { seed = (seed * 1103515245 + 12345) >>> 0; return (seed >>> 8) % SMOLLM_135M.vocabSize; });
}

const now = () => performance.now();
/** CPU milliseconds (user + system, every thread of the process) of a process.cpuUsage() difference. */
const cpuMs = (u) => (u.user + u.system) / 1000;

// ---- children: one engine, one thread count ----

/** Makes the model and its Hugging Face files in DIR. */
async function makeWeights() {
  const { createModel, exportSafetensorsDir } = await import('../../src/js/node.js');
  const model = await createModel({ ...SMOLLM_135M, seed: SEED }, { threads: 2 });
  await exportSafetensorsDir(model, DIR);
  model.dispose();
}

/** wasmformer: the exported files imported (the weights the ONNX file has), greedy over
 * the KV cache through the C API, as smollm.mjs generates. */
async function runWasmformer() {
  const { importSafetensorsDir } = await import('../../src/js/node.js');
  const { modelHandle } = await import('../../src/js/model.js');
  const model = await importSafetensorsDir(DIR, { threads });
  const prompt = promptIds();
  writeFileSync(join(DIR, `logits-wasmformer-${threads}.bin`), model.forward(prompt, null, 1, prompt.length).logits);
  const core = modelHandle(model), rt = core.rt, h = core.live();
  const ps = rt.putSampling({ temperature: 0, topK: 0, topP: 1, nVocab: 0, noUnk: 0 });
  const generate = (n) => {
    const t0 = now();
    rt.genStart(h, prompt, 1);
    const t1 = now(), c1 = process.cpuUsage();
    const tokens = [];
    for (let i = 0; i < n; i++) tokens.push(rt.genNext(h, ps));
    return { promptMs: t1 - t0, decodeMs: now() - t1, decodeCpuMs: cpuMs(process.cpuUsage(c1)), tokens };
  };
  generate(8); // warm-up: V8 tiers the hot functions up
  const r = generate(nTokens);
  rt.free(ps);
  const info = model.info();
  model.dispose();
  return { ...r, threads: info.threads, heapMB: rt.M.HEAPU8.buffer.byteLength / 2 ** 20 };
}

/** ONNX Runtime Web's wasm backend in Node: model.onnx, the cache fed back each step. */
async function runOrt() {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.simd = true;
  const session = await ort.InferenceSession.create(readFileSync(join(DIR, 'model.onnx')), {
    executionProviders: ['wasm'], graphOptimizationLevel: 'all',
  });
  const { nLayer: L, nKvHead: NKV, dModel, nHead, vocabSize: V } = SMOLLM_135M;
  const HS = dModel / nHead;
  const prompt = promptIds();
  const ids = (a) => new ort.Tensor('int64', BigInt64Array.from(a.map(BigInt)), [1, a.length]);
  const argmaxLast = (logits) => {
    const d = logits.data, off = d.length - V;
    let best = 0;
    for (let j = 1; j < V; j++) if (d[off + j] > d[off + best]) best = j;
    return best;
  };
  const step = async (input, cache) => {
    const feeds = { input_ids: ids(input) };
    for (let i = 0; i < L; i++) {
      feeds[`past_key_${i}`] = cache?.[`present_key_${i}`] ?? new ort.Tensor('float32', new Float32Array(0), [1, NKV, 0, HS]);
      feeds[`past_value_${i}`] = cache?.[`present_value_${i}`] ?? new ort.Tensor('float32', new Float32Array(0), [1, NKV, 0, HS]);
    }
    return session.run(feeds);
  };
  const generate = async (n, keepLogits) => {
    const t0 = now();
    let out = await step(prompt);
    const t1 = now(), c1 = process.cpuUsage();
    if (keepLogits) writeFileSync(join(DIR, `logits-ort-${threads}.bin`), out.logits.data);
    const tokens = [];
    for (let i = 0; i < n; i++) { // as wasmformer's genNext: pick a token, then read it
      tokens.push(argmaxLast(out.logits));
      out = await step([tokens[i]], out);
    }
    return { promptMs: t1 - t0, decodeMs: now() - t1, decodeCpuMs: cpuMs(process.cpuUsage(c1)), tokens };
  };
  await generate(8, false); // warm-up
  return { ...(await generate(nTokens, true)), threads: ort.env.wasm.numThreads };
}

if (role !== 'main') {
  const result = role === 'make' ? await makeWeights() : role === 'wasmformer' ? await runWasmformer() : await runOrt();
  process.stdout.write(`RESULT ${JSON.stringify(result ?? {})}\n`);
  process.exit(0);
}

// ---- the driver ----

function child(r, n) {
  const res = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--role', r, '--n', String(n), '--tokens', String(nTokens), '--prompt', String(nPrompt)],
    { encoding: 'utf8', maxBuffer: 1 << 26 });
  const line = res.stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (res.status !== 0 || !line) throw new Error(`${r} (${n} thread(s)) failed:\n${res.stdout}\n${res.stderr}`);
  return JSON.parse(line.slice(7));
}

// what the files depend on: the config, the seed, and the two scripts that write the ONNX file
const exporter = createHash('sha256');
for (const f of ['smollm_onnx.py', '../../examples/pytorch/hf_model.py']) exporter.update(readFileSync(join(here, f)));
const stamp = { config: SMOLLM_135M, seed: SEED, exporter: exporter.digest('hex') };
const stampFile = join(DIR, 'anchor.json');
const fresh = existsSync(stampFile) && existsSync(join(DIR, 'model.onnx')) && readFileSync(stampFile, 'utf8') === JSON.stringify(stamp);
if (!fresh) {
  if (spawnSync(PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status !== 0) {
    console.log(`ONNX Runtime rows: SKIPPED (${PYTHON} cannot import torch to write the ONNX file: sudo apt-get install -y python3-torch)`);
    process.exit(0);
  }
  mkdirSync(DIR, { recursive: true });
  let t0 = now();
  child('make', 2);
  console.log(`weights: wasmformer's random SmolLM-135M shape (seed ${SEED}) exported to ${DIR} in ${((now() - t0) / 1000).toFixed(1)} s`);
  t0 = now();
  const py = spawnSync(PYTHON, [join(here, 'smollm_onnx.py'), DIR], { encoding: 'utf8' });
  if (py.status !== 0) throw new Error(`smollm_onnx.py failed:\n${py.stdout}\n${py.stderr}`);
  console.log(py.stdout.trim());
  writeFileSync(stampFile, JSON.stringify(stamp));
}
try {
  await import('onnxruntime-web');
} catch {
  console.log('ONNX Runtime rows: SKIPPED (onnxruntime-web is missing: cd bench && npm ci)');
  process.exit(0);
}

const threadList = String(arg('threads', '1,2')).split(',').map(Number);
const rounds = Number(arg('rounds', 2));
const load = os.loadavg()[0];
const runs = {}; // "engine/threads" -> results
for (let round = 0; round < rounds; round++) {
  for (const n of threadList) {
    const order = round % 2 ? ['ort', 'wasmformer'] : ['wasmformer', 'ort'];
    for (const engine of order) (runs[`${engine}/${n}`] ??= []).push(child(engine, n));
  }
}

const readF32 = (f) => { const b = readFileSync(join(DIR, f)); return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4); };
const sizeMB = (f) => statSync(join(DIR, f)).size / 2 ** 20;
console.log(`\nSmolLM-135M shape, random weights (the same in both), ${nPrompt}-token prompt then ${nTokens} new tokens, greedy; ` +
  `median of ${rounds} round(s); Node ${process.version}, ${os.cpus()[0].model.trim()}, load average ${load.toFixed(2)} at start; ` +
  `model.safetensors ${sizeMB('model.safetensors').toFixed(0)} MB, model.onnx ${sizeMB('model.onnx').toFixed(0)} MB`);
console.log('| engine | threads | prompt (ms) | decode tok/s (range) | decode tok per CPU-second | greedy tokens equal to wasmformer\'s | prompt logits vs wasmformer (max abs) |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
let worstLogits = 0;
for (const n of threadList) {
  const wf = runs[`wasmformer/${n}`], ox = runs[`ort/${n}`];
  const lw = readF32(`logits-wasmformer-${n}.bin`), lo = readF32(`logits-ort-${n}.bin`);
  let d = 0;
  for (let i = 0; i < lw.length; i++) d = Math.max(d, Math.abs(lw[i] - lo[i]));
  worstLogits = Math.max(worstLogits, d);
  const same = (a, b) => { let k = 0; while (k < a.length && a[k] === b[k]) k++; return k; };
  const rates = (rs) => rs.map((r) => nTokens / (r.decodeMs / 1000));
  const rate = (rs) => `${median(rates(rs)).toFixed(1)} (${Math.min(...rates(rs)).toFixed(1)}–${Math.max(...rates(rs)).toFixed(1)})`;
  const perCpu = (rs) => median(rs.map((r) => nTokens / (r.decodeCpuMs / 1000))).toFixed(1);
  const promptMs = (rs) => median(rs.map((r) => r.promptMs)).toFixed(0);
  console.log(`| wasmformer (wasm SIMD${n > 1 ? ' + threads' : ''}) | ${wf[0].threads} | ${promptMs(wf)} | ${rate(wf)} | ${perCpu(wf)} | ${nTokens} | – |`);
  console.log(`| ONNX Runtime Web 1.30 (wasm, SIMD) | ${ox[0].threads} | ${promptMs(ox)} | ${rate(ox)} | ${perCpu(ox)} | ${same(wf[0].tokens, ox[0].tokens)} of ${nTokens} | ${d.toExponential(1)} |`);
}
const ratios = threadList.map((n) => {
  const r = (e) => median(runs[`${e}/${n}`].map((x) => nTokens / (x.decodeMs / 1000)));
  return `${n} thread(s) ${(r('wasmformer') / r('ort')).toFixed(2)}x`;
});
console.log(`wasmformer / ONNX Runtime Web, decode tok/s (medians): ${ratios.join(', ')}`);
if (!(worstLogits < LOGIT_TOL)) {
  console.error(`the engines' prompt logits differ by ${worstLogits} (more than ${LOGIT_TOL}): not the same model`);
  process.exit(1);
}
