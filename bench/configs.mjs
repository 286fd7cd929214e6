// The fixed benchmark configs and the FLOP count the table uses.
// A "tiny": decoder, Pre-LN, learned positions, GELU MLP x4, tied head, V=96, L=4, NH=4,
// C=128, T=64, batch 8, AdamW. B "baby": the same with L=6, NH=6, C=384, T=256, batch 4.
import { STRUCTS, readStruct, writeStruct } from '../src/js/structs.js';

export const CONFIGS = {
  A: { V: 96, L: 4, NH: 4, C: 128, T: 64, B: 8 },
  B: { V: 96, L: 6, NH: 6, C: 384, T: 256, B: 4 },
};

/** Training FLOPs per token: 6 per weight of every matrix product (2 forward, 4 backward:
 * 12*L*C^2 in the blocks plus V*C for the tied head) and causal attention's 6*L*T*C
 * (QK^T and PV, 2*T*C each forward over the half of the T x T square a causal row sees
 * on average, times 3 for forward + backward). Embedding lookups, norms, GELU and AdamW
 * are not counted. */
export function trainFlopsPerToken({ V, L, C, T }) {
  return 6 * (12 * L * C * C + V * C) + 6 * L * T * C;
}

/** HuggingFaceTB's SmolLM-135M config (Llama layout: 30 layers, width 576, 9 query heads over
 * 3 key/value heads, feed-forward 1536, vocabulary 49,152, tied embeddings, RoPE base 1e5,
 * RMSNorm eps 1e-5, context 2048) as a wasmformer config: bench/studies/smollm.mjs and
 * bench/studies/smollm-anchor.mjs build it with random weights (none can be downloaded here). */
export const SMOLLM_135M = {
  norm: 'rmsnorm', activation: 'swiglu', positions: 'rope', bias: false, tiedHead: true,
  vocabSize: 49152, context: 2048, nLayer: 30, nHead: 9, nKvHead: 3, dModel: 576, dFF: 1536,
  ropeTheta: 100000, normEps: 1e-5,
};

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b), n = s.length;
  return n === 0 ? 0 : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/** The C structs of a raw module M, laid out by the package's src/js/structs.js (which a
 * test holds against the header), so the bench never writes a field by its offset. */
export function cStructs(M) {
  const heap = {
    get i32() { return M.HEAP32; }, get u32() { return M.HEAPU32; },
    get f32() { return M.HEAPF32; }, get f64() { return M.HEAPF64; },
  };
  const alloc = (s) => M._malloc(Math.max(8, s.size));
  return {
    /** A wf_config in the heap: the defaults with a bench config's shape. */
    config(c) {
      const p = alloc(STRUCTS.config);
      M._wf_config_default(p);
      writeStruct(heap, STRUCTS.config, p, { ...readStruct(heap, STRUCTS.config, p),
        context: c.T, nLayer: c.L, nHead: c.NH, dModel: c.C, dFF: 4 * c.C });
      return p;
    },
    /** A new struct s (a STRUCTS entry) in the heap holding values. */
    put(s, values) { const p = alloc(s); writeStruct(heap, s, p, values); return p; },
    get: (s, p) => readStruct(heap, s, p),
    set: (s, p, values) => writeStruct(heap, s, p, { ...readStruct(heap, s, p), ...values }),
    alloc,
  };
}
