/* What the wasm engine can issue: ACC independent chains of acc = acc * a + b, 8 FLOP per
 * chain step (a 4-lane multiply and add), as f32x4 mul then add (SIMD128), or with -DRELAXED
 * as one f32x4.relaxed_madd (relaxed SIMD: a fused multiply-add where the CPU has one).
 * Too few chains wait on the latency; too many spill registers. bench/peak.mjs builds it
 * for several ACC and reports the best of each: the peaks the training GFLOP/s of
 * `npm run bench` are set against. */
#include <wasm_simd128.h>

__attribute__((export_name("peak"))) float peak(int iters) {
    v128_t a = wasm_f32x4_splat(0.999f), b = wasm_f32x4_splat(0.001f), acc[ACC];
    for (int i = 0; i < ACC; i++) acc[i] = wasm_f32x4_splat((float)i);
    for (int n = 0; n < iters; n++)
        for (int i = 0; i < ACC; i++)
#if defined(RELAXED)
            acc[i] = wasm_f32x4_relaxed_madd(acc[i], a, b);
#else
            acc[i] = wasm_f32x4_add(wasm_f32x4_mul(acc[i], a), b);
#endif
    v128_t s = acc[0];
    for (int i = 1; i < ACC; i++) s = wasm_f32x4_add(s, acc[i]);
    return wasm_f32x4_extract_lane(s, 0); /* used, so the loop is kept */
}
