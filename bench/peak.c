/* What f32x4 mul + add can issue in this wasm engine: ACC independent chains of
 * acc = acc * a + b (no relaxed SIMD, so no fused multiply-add), 8 FLOP per chain step.
 * Too few chains wait on the mul -> add latency; too many spill registers. bench/peak.mjs
 * builds it for several ACC and reports the best: the peak the "% of what f32x4
 * mul+add can issue" is measured against. */
#include <wasm_simd128.h>

__attribute__((export_name("peak"))) float peak(int iters) {
    v128_t a = wasm_f32x4_splat(0.999f), b = wasm_f32x4_splat(0.001f), acc[ACC];
    for (int i = 0; i < ACC; i++) acc[i] = wasm_f32x4_splat((float)i);
    for (int n = 0; n < iters; n++)
        for (int i = 0; i < ACC; i++) acc[i] = wasm_f32x4_add(wasm_f32x4_mul(acc[i], a), b);
    v128_t s = acc[0];
    for (int i = 1; i < ACC; i++) s = wasm_f32x4_add(s, acc[i]);
    return wasm_f32x4_extract_lane(s, 0); /* used, so the loop is kept */
}
