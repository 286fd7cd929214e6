// Muon's cost per training step against AdamW's (issue 14), in the shipped wasm build in
// Node: two models of config A or B (bench/configs.mjs), one with AdamW and one with Muon for
// the blocks' matrices, take turns on the same batch, the order swapped every pair so that
// a drift in the machine's speed falls on both. Prints each optimizer's median step time,
// the median of the per-pair ratios Muon / AdamW and, from the same pairs, Muon's extra
// time per step against what AdamW spends on the whole step.
//   node bench/studies/muon.mjs A|B [--pairs N] [--warmup N] [--threads N] [--batch N]
// threads > 1 runs dist/wasmformer-mt; --batch replaces the config's batch size: Newton-
// Schulz costs the same whatever the batch, forward and backward grow with it.
import { CONFIGS, cStructs, median } from '../configs.mjs';
import { STRUCTS } from '../../src/js/structs.js';
import { load } from '../../src/js/node.js';

const [which = 'A', ...rest] = process.argv.slice(2);
const opt = { pairs: 20, warmup: 2, threads: 1 };
for (let i = 0; i < rest.length; i += 2) opt[rest[i].replace(/^--/, '')] = Number(rest[i + 1]);
const c = CONFIGS[which] && { ...CONFIGS[which], ...(opt.batch ? { B: opt.batch } : {}) };
if (!c) throw new Error('usage: node bench/studies/muon.mjs A|B [--pairs N] [--warmup N] [--threads N] [--batch N]');
const { M } = await load({ threads: opt.threads });
const i32 = () => M.HEAP32;
const now = () => performance.now() / 1000;

const S = cStructs(M);
const cfgp = S.config(c), optp = S.alloc(STRUCTS.optim);
function model(muon) {
  const m = M._wf_model_create();
  if (opt.threads > 1 && M._wf_model_set_threads(m, opt.threads) !== 0) throw new Error('wf_model_set_threads');
  if (M._wf_model_init(m, cfgp) !== 0) throw new Error('wf_model_init');
  M._wf_model_get_optim(m, optp);
  S.set(STRUCTS.optim, optp, { muon });
  if (M._wf_model_set_optim(m, optp) !== 0) throw new Error('wf_model_set_optim');
  return m;
}
const adamw = model(0), muon = model(1);

const N = c.B * c.T;
const pin = M._malloc(N * 4), ptg = M._malloc(N * 4);
let seed = 42;
const rnd = () => { seed = (seed * 1103515245 + 12345) >>> 0; return (seed >>> 8) % 96; };
for (let i = 0; i < N; i++) { i32()[(pin >>> 2) + i] = rnd(); i32()[(ptg >>> 2) + i] = rnd(); }
const batch = S.put(STRUCTS.batch, { inputs: pin, targets: ptg, B: c.B, T: c.T });

function timeStep(m) {
  const t0 = now();
  if (M._wf_model_step(m, batch, 0) !== 0) throw new Error('wf_model_step');
  return now() - t0;
}
const ta = [], tm = [], ratio = [];
for (let p = 0; p < opt.warmup + opt.pairs; p++) {
  let a, b;
  if (p % 2 === 0) { a = timeStep(adamw); b = timeStep(muon); } else { b = timeStep(muon); a = timeStep(adamw); }
  if (p < opt.warmup) continue;
  ta.push(a); tm.push(b); ratio.push(b / a);
}
M._wf_model_free(adamw);
M._wf_model_free(muon);
const r = {
  config: which, batch: c.B, T: c.T, threads: opt.threads, pairs: opt.pairs, adamw_step_s: median(ta), muon_step_s: median(tm),
  ratio_median: median(ratio), ratio_min: Math.min(...ratio), ratio_max: Math.max(...ratio),
  muon_extra_ms: 1000 * (median(tm) - median(ta)),
};
console.log(JSON.stringify(r));
console.log(`config ${which} (batch ${c.B} x ${c.T}), ${opt.threads} thread(s), ${opt.pairs} pairs: AdamW ${(1000 * r.adamw_step_s).toFixed(1)} ms/step, ` +
  `Muon ${(1000 * r.muon_step_s).toFixed(1)} ms/step; Muon / AdamW = ${r.ratio_median.toFixed(3)} ` +
  `(pairs ${r.ratio_min.toFixed(3)}..${r.ratio_max.toFixed(3)})`);
process.exit(0);
