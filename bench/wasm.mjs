// Times one wasm build in this Node process (or, imported, in a browser page): config A or B,
// training steps and generation, through the C API. Used by bench/run.mjs; prints JSON.
//   node bench/wasm.mjs simd|mt|relaxed|relaxed-mt|ref A|B [--steps N] [--warmup N] [--threads N] [--gen N] [--pair 1] [--cpu]
// --pair 1 (with threads > 1): a second, single-thread model alternates steps with the first
// on the same batch; pair_speedup = their summed step times' ratio (steadier on a busy machine).
// --cpu: the process's CPU time as the clock (single-thread builds on a busy machine).
// simd and mt load the package's builds the way users get them (src/js/node.js); ref is
// the reference-kernel build that `./build.sh ref` makes for the benchmark only.
import { CONFIGS, cStructs, median } from './configs.mjs';
import { STRUCTS } from '../src/js/structs.js';

/** M: an instantiated wasmformer module. */
export async function benchWasm(M, which, opts = {}) {
  const { steps = 5, warmup = 2, threads = 1, gen = 0, pair = 0, now = () => performance.now() / 1000 } = opts;
  const c = CONFIGS[which];
  const S = cStructs(M);
  const i32 = () => M.HEAP32;
  const cfgp = S.config(c);
  const m = M._wf_model_create();
  const fail = (what) => { throw new Error(`${what}: ${readString(M, M._wf_model_error(m))}`); };
  if (threads > 1 && M._wf_model_set_threads(m, threads) !== 0) fail('wf_model_set_threads');
  if (M._wf_model_init(m, cfgp) !== 0) fail('wf_model_init');
  const N = c.B * c.T;
  const pin = M._malloc(N * 4), ptg = M._malloc(N * 4), info = S.alloc(STRUCTS.stepInfo);
  let seed = 42;
  const rnd = () => { seed = (seed * 1103515245 + 12345) >>> 0; return (seed >>> 8) % 96; };
  for (let i = 0; i < N; i++) { i32()[(pin >>> 2) + i] = rnd(); i32()[(ptg >>> 2) + i] = rnd(); }
  const batch = S.put(STRUCTS.batch, { inputs: pin, targets: ptg, B: c.B, T: c.T });
  const single = pair && threads > 1 ? M._wf_model_create() : 0;
  if (single && M._wf_model_init(single, cfgp) !== 0) fail('wf_model_init (single)');
  const times = [], pairTime = [0, 0];
  for (let s = 0; s < warmup + steps; s++) {
    const t0 = now();
    if (M._wf_model_step(m, batch, info) !== 0) fail('wf_model_step');
    const t1 = now();
    if (s >= warmup) times.push(t1 - t0);
    if (single) {
      M._wf_model_step(single, batch, 0);
      if (s >= warmup) { pairTime[0] += t1 - t0; pairTime[1] += now() - t1; }
    }
  }
  if (single) M._wf_model_free(single);
  const loss = S.get(STRUCTS.stepInfo, info).loss;
  const step = steps > 0 ? median(times) : 0;
  let genTps = 0, decodeTps = 0;
  if (gen > 0) {
    const prompt = M._malloc(16 * 4), out = M._malloc(128 * 4);
    for (let i = 0; i < 16; i++) i32()[(prompt >>> 2) + i] = rnd();
    const smp = S.put(STRUCTS.sampling, { temperature: 0.8, topK: 0, topP: 1 });
    const g = [];
    for (let i = 0; i <= gen; i++) {
      const t0 = now();
      if (M._wf_model_gen_start(m, prompt, 16, i) !== 0) fail('wf_model_gen_start');
      for (let k = 0; k < 128; k++) if (M._wf_model_gen_next(m, smp, 0, out + 4 * k, 0, 0, 0) !== 0) fail('wf_model_gen_next');
      if (i > 0) g.push(128 / (now() - t0));
    }
    genTps = median(g);
    // decoding alone: 48 tokens after the prompt fill the window without a slide
    const tok = M._malloc(4), d = [];
    for (let i = 0; i <= gen; i++) {
      if (M._wf_model_gen_start(m, prompt, 16, i) !== 0) fail('wf_model_gen_start');
      const t0 = now();
      for (let k = 0; k < c.T - 16; k++) if (M._wf_model_gen_next(m, smp, 0, tok, 0, 0, 0) !== 0) fail('wf_model_gen_next');
      if (i > 0) d.push((c.T - 16) / (now() - t0));
    }
    decodeTps = median(d);
  }
  const memp = S.alloc(STRUCTS.modelInfo);
  M._wf_model_get_info(m, memp);
  const mem = S.get(STRUCTS.modelInfo, memp).memory;
  const result = {
    config: which, threads, step_s: step, train_tok_s: step > 0 ? N / step : 0, gen_tok_s: genTps,
    decode_tok_s: decodeTps,
    heap_bytes: M.HEAPU8.buffer.byteLength, params: mem.count,
    model_bytes: mem.params + mem.grads + mem.optimizer, act_bytes: mem.activations, loss,
  };
  if (pairTime[0] > 0) result.pair_speedup = pairTime[1] / pairTime[0];
  M._wf_model_free(m); // joins the workers, so a Node process can exit
  return result;
}

function readString(M, p) {
  let s = '';
  for (let i = p >>> 0; M.HEAPU8[i]; i++) s += String.fromCharCode(M.HEAPU8[i]);
  return s;
}

if (typeof process !== 'undefined' && import.meta.url === `file://${process.argv[1]}`) {
  const [build, which, ...rest] = process.argv.slice(2);
  const opt = {};
  if (rest.includes('--cpu')) {
    rest.splice(rest.indexOf('--cpu'), 1);
    opt.now = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
  }
  for (let i = 0; i < rest.length; i += 2) opt[rest[i].replace(/^--/, '')] = Number(rest[i + 1]);
  let M;
  if (build === 'ref') {
    const { readFile } = await import('node:fs/promises');
    const glue = new URL('../dist/bench/wasmformer-ref.mjs', import.meta.url);
    M = await (await import(glue.href)).default({ wasmBinary: await readFile(new URL('wasmformer-ref.wasm', glue)) });
  } else {
    const { load } = await import('../src/js/node.js');
    // simd, mt: SIMD128; relaxed, relaxed-mt: the relaxed-SIMD builds (Node 20 needs
    // --experimental-wasm-relaxed-simd: bench/studies/relaxed.mjs passes it)
    const threads = build.endsWith('mt') ? opt.threads || 2 : 1;
    M = (await load({ threads, simd: build.startsWith('relaxed') ? 'relaxed' : 'simd128' })).M;
  }
  const r = await benchWasm(M, which, opt);
  r.max_rss_bytes = process.resourceUsage().maxRSS * 1024;
  console.log(JSON.stringify(r));
  process.exit(0);
}
