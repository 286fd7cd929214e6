// The fixed benchmark configs and the FLOP count the table uses.
// A "tiny": decoder, Pre-LN, learned positions, GELU MLP x4, tied head, V=96, L=4, NH=4,
// C=128, T=64, batch 8, AdamW. B "baby": the same with L=6, NH=6, C=384, T=256, batch 4.
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

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b), n = s.length;
  return n === 0 ? 0 : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}
