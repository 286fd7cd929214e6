/* The one place that knows which SIMD instruction set exists. Kernels speak this small
 * vocabulary over wf_v, a vector of WF_VL wf_reals, and finish every loop with a scalar
 * tail. The backend is chosen at compile time, first match wins:
 *   scalar   WF_DOUBLE (the gradient-check build) or WF_NO_SIMD: WF_VL = 1, plain C
 *   wasm     __wasm_simd128__ (emcc -msimd128): f32x4; mul then add, or with relaxed SIMD
 *            (clang-19 -mrelaxed-simd, the relaxed builds) one f32x4.relaxed_madd
 *   avx512   __AVX512F__ and __FMA__ (gcc -march=native on a CPU with AVX-512: Zen 4 and 5,
 *            Intel's server cores): f32x16 with fused multiply-add
 *   avx2     __AVX2__ and __FMA__ (gcc -march=native on other x86-64 of the last decade, or
 *            -mavx2 -mfma): f32x8 with fused multiply-add, which rounds once where mul then
 *            add rounds twice
 *   sse      __SSE2__ (every x86-64): f32x4, mul then add
 *   scalar   anything else
 * WF_MR x WF_NR is the register tile of the matrix-multiply microkernel (matmul.c): WF_MR
 * rows of A broadcast against WF_NR = WF_NV vectors of B, WF_MR * WF_NV accumulators, sized
 * to stay inside the vector registers (x86-64 has 16 xmm/ymm, 32 zmm with AVX-512; V8
 * allocates 15 xmm to wasm, and holds all of a loop body's loads at once: see the wasm
 * backend). */
#ifndef WF_SIMD_H
#define WF_SIMD_H

#include "internal.h"

#if defined(WF_DOUBLE) || defined(WF_NO_SIMD)
#define WF_SIMD_SCALAR 1
#elif defined(__wasm_simd128__)
#define WF_SIMD_WASM 1
#include <wasm_simd128.h>
#elif defined(__AVX512F__) && defined(__FMA__)
#define WF_SIMD_AVX512 1
#include <immintrin.h>
#elif defined(__AVX2__) && defined(__FMA__)
#define WF_SIMD_AVX2 1
#include <immintrin.h>
#elif defined(__SSE2__)
#define WF_SIMD_SSE 1
#include <emmintrin.h>
#else
#define WF_SIMD_SCALAR 1
#endif

#define WF_INLINE static inline __attribute__((always_inline))

#if defined(WF_SIMD_AVX512) || defined(WF_SIMD_AVX2) || defined(WF_SIMD_SSE)
/* What every x86 backend does in 128 bits: four vectors' sums as one (each backend first
 * folds its wider vectors down to 128 bits), and a 4x4 transpose (the packing of a
 * transposed operand in matmul.c). */
WF_INLINE __m128 wf_sum4_sse(__m128 a, __m128 b, __m128 c, __m128 d) {
    __m128 ab = _mm_add_ps(_mm_unpacklo_ps(a, b), _mm_unpackhi_ps(a, b));
    __m128 cd = _mm_add_ps(_mm_unpacklo_ps(c, d), _mm_unpackhi_ps(c, d));
    return _mm_add_ps(_mm_movelh_ps(ab, cd), _mm_movehl_ps(cd, ab));
}
WF_INLINE void wf_transpose4(float *d, size_t ds, const float *s, size_t ss) {
    __m128 r0 = _mm_loadu_ps(s), r1 = _mm_loadu_ps(s + ss), r2 = _mm_loadu_ps(s + 2 * ss), r3 = _mm_loadu_ps(s + 3 * ss);
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    _mm_storeu_ps(d, r0), _mm_storeu_ps(d + ds, r1), _mm_storeu_ps(d + 2 * ds, r2), _mm_storeu_ps(d + 3 * ds, r3);
}
#endif

/* ---------------------------------------------------------------- wasm simd128 */
#if defined(WF_SIMD_WASM)
#if defined(__wasm_relaxed_simd__)
#define WF_SIMD_NAME "wasm-relaxed-simd"
#else
#define WF_SIMD_NAME "wasm-simd128"
#endif
#define WF_VL 4
/* 4 x 8: V8's TurboFan schedules every load of a loop body ahead of its arithmetic, so the k
 * step's 2 B vectors and 4 broadcasts are all live with the 8 accumulators and the product's
 * temporary: 15 of the 15 xmm registers it allocates on x64 (--print-wasm-code). 6 x 8, the
 * tile before, spilled four accumulators every step; relaxed SIMD (no temporary) fits 3 x 12
 * too, measured no faster (bench/README.md) */
#define WF_MR 4
#define WF_NV 2
typedef v128_t wf_v;
WF_INLINE wf_v wf_vzero(void) { return wasm_f32x4_splat(0.0f); }
WF_INLINE wf_v wf_vset1(float x) { return wasm_f32x4_splat(x); }
WF_INLINE wf_v wf_vload(const float *p) { return wasm_v128_load(p); }
WF_INLINE wf_v wf_vbroadcast(const float *p) { return wasm_v128_load32_splat(p); }
WF_INLINE void wf_vstore(float *p, wf_v x) { wasm_v128_store(p, x); }
WF_INLINE wf_v wf_vadd(wf_v a, wf_v b) { return wasm_f32x4_add(a, b); }
WF_INLINE wf_v wf_vsub(wf_v a, wf_v b) { return wasm_f32x4_sub(a, b); }
WF_INLINE wf_v wf_vmul(wf_v a, wf_v b) { return wasm_f32x4_mul(a, b); }
WF_INLINE wf_v wf_vdiv(wf_v a, wf_v b) { return wasm_f32x4_div(a, b); }
/* the pseudo-min/max, one x86 instruction each where f32x4.max/min (which order -0 < +0
 * and return any NaN) take about seven in V8; like the x86 backends below, a NaN in the
 * first operand passes through */
WF_INLINE wf_v wf_vmax(wf_v a, wf_v b) { return wasm_f32x4_pmax(a, b); }
WF_INLINE wf_v wf_vmin(wf_v a, wf_v b) { return wasm_f32x4_pmin(a, b); }
WF_INLINE wf_v wf_vsqrt(wf_v a) { return wasm_f32x4_sqrt(a); }
/* relaxed SIMD (clang-19 -mrelaxed-simd): one f32x4.relaxed_madd, which the engine may fuse
 * (one rounding, x86 FMA3 / arm64 fmla) or not (mul then add): results may differ in the
 * last bits between machines, never within one */
#if defined(__wasm_relaxed_simd__)
WF_INLINE wf_v wf_vmadd(wf_v a, wf_v b, wf_v c) { return wasm_f32x4_relaxed_madd(a, b, c); }
#else
WF_INLINE wf_v wf_vmadd(wf_v a, wf_v b, wf_v c) { return wasm_f32x4_add(wasm_f32x4_mul(a, b), c); }
#endif
WF_INLINE float wf_vsum(wf_v a) {
    return (wasm_f32x4_extract_lane(a, 0) + wasm_f32x4_extract_lane(a, 1)) +
           (wasm_f32x4_extract_lane(a, 2) + wasm_f32x4_extract_lane(a, 3));
}
WF_INLINE float wf_vhmax(wf_v a) {
    float x = wasm_f32x4_extract_lane(a, 0), y = wasm_f32x4_extract_lane(a, 1);
    float z = wasm_f32x4_extract_lane(a, 2), w = wasm_f32x4_extract_lane(a, 3);
    x = x > y ? x : y;
    z = z > w ? z : w;
    return x > z ? x : z;
}
/* out[r] = the sum of the lanes of the r-th vector, four sums by one transpose */
WF_INLINE void wf_vsum4(float *out, wf_v a, wf_v b, wf_v c, wf_v d) {
    wf_v ab = wasm_f32x4_add(wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), wasm_i32x4_shuffle(a, b, 2, 6, 3, 7));
    wf_v cd = wasm_f32x4_add(wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), wasm_i32x4_shuffle(c, d, 2, 6, 3, 7));
    wasm_v128_store(out, wasm_f32x4_add(wasm_i32x4_shuffle(ab, cd, 0, 1, 4, 5), wasm_i32x4_shuffle(ab, cd, 2, 3, 6, 7)));
}
/* d[i ds + j] = s[j ss + i] for a 4 x 4 block: the packing's transposes (matmul.c) */
WF_INLINE void wf_transpose4(float *d, size_t ds, const float *s, size_t ss) {
    const wf_v r0 = wasm_v128_load(s), r1 = wasm_v128_load(s + ss), r2 = wasm_v128_load(s + 2 * ss), r3 = wasm_v128_load(s + 3 * ss);
    const wf_v t0 = wasm_i32x4_shuffle(r0, r1, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(r0, r1, 2, 6, 3, 7);
    const wf_v t2 = wasm_i32x4_shuffle(r2, r3, 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(r2, r3, 2, 6, 3, 7);
    wasm_v128_store(d, wasm_i32x4_shuffle(t0, t2, 0, 1, 4, 5));
    wasm_v128_store(d + ds, wasm_i32x4_shuffle(t0, t2, 2, 3, 6, 7));
    wasm_v128_store(d + 2 * ds, wasm_i32x4_shuffle(t1, t3, 0, 1, 4, 5));
    wasm_v128_store(d + 3 * ds, wasm_i32x4_shuffle(t1, t3, 2, 3, 6, 7));
}
/* exp's building blocks: round to nearest, and 2^n for integral n in [-126, 127] */
WF_INLINE wf_v wf_vround(wf_v a) { return wasm_f32x4_nearest(a); }
/* n + 1.5 2^23 is exact and holds n in its low mantissa bits, so its bit pattern minus
 * that of 1.5 2^23 is n: two integer operations where V8 spends about eight on trunc_sat */
WF_INLINE wf_v wf_vpow2i(wf_v n) {
    const wf_v bits = wasm_f32x4_add(n, wasm_f32x4_splat(12582912.0f));
    return wasm_i32x4_shl(wasm_i32x4_sub(bits, wasm_i32x4_splat(0x4B400000 - 127)), 23);
}

/* ---------------------------------------------------------------- AVX-512 */
#elif defined(WF_SIMD_AVX512)
#define WF_SIMD_NAME "avx512"
#define WF_VL 16
/* 6 x 64: 24 accumulators, the k step's 4 B vectors and a broadcast in 29 of the 32 zmm,
 * and the fewest loads per multiply-add (10 per 24); 12 x 32, 14 x 32 and 8 x 48 trained no
 * faster on Zen 5 (the commit that added this backend) */
#define WF_MR 6
#define WF_NV 4
typedef __m512 wf_v;
WF_INLINE wf_v wf_vzero(void) { return _mm512_setzero_ps(); }
WF_INLINE wf_v wf_vset1(float x) { return _mm512_set1_ps(x); }
WF_INLINE wf_v wf_vload(const float *p) { return _mm512_loadu_ps(p); }
WF_INLINE wf_v wf_vbroadcast(const float *p) { return _mm512_set1_ps(*p); }
WF_INLINE void wf_vstore(float *p, wf_v x) { _mm512_storeu_ps(p, x); }
WF_INLINE wf_v wf_vadd(wf_v a, wf_v b) { return _mm512_add_ps(a, b); }
WF_INLINE wf_v wf_vsub(wf_v a, wf_v b) { return _mm512_sub_ps(a, b); }
WF_INLINE wf_v wf_vmul(wf_v a, wf_v b) { return _mm512_mul_ps(a, b); }
WF_INLINE wf_v wf_vdiv(wf_v a, wf_v b) { return _mm512_div_ps(a, b); }
/* as AVX2: max/min return the second operand when either is NaN, so the data goes second */
WF_INLINE wf_v wf_vmax(wf_v a, wf_v b) { return _mm512_max_ps(b, a); }
WF_INLINE wf_v wf_vmin(wf_v a, wf_v b) { return _mm512_min_ps(b, a); }
WF_INLINE wf_v wf_vsqrt(wf_v a) { return _mm512_sqrt_ps(a); }
WF_INLINE wf_v wf_vmadd(wf_v a, wf_v b, wf_v c) { return _mm512_fmadd_ps(a, b, c); }
/* halves down to 128 bits, then as SSE: a fixed order, whatever the compiler's reduce does */
WF_INLINE __m128 wf_quarter_sum(wf_v a) {
    const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(a), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)));
    return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}
WF_INLINE float wf_vsum(wf_v a) {
    __m128 s = wf_quarter_sum(a);
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}
WF_INLINE float wf_vhmax(wf_v a) {
    const __m256 h = _mm256_max_ps(_mm512_castps512_ps256(a), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)));
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}
WF_INLINE void wf_vsum4(float *out, wf_v a, wf_v b, wf_v c, wf_v d) {
    _mm_storeu_ps(out, wf_sum4_sse(wf_quarter_sum(a), wf_quarter_sum(b), wf_quarter_sum(c), wf_quarter_sum(d)));
}
WF_INLINE wf_v wf_vround(wf_v a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
WF_INLINE wf_v wf_vpow2i(wf_v n) {
    __m512i i = _mm512_add_epi32(_mm512_cvttps_epi32(n), _mm512_set1_epi32(127));
    return _mm512_castsi512_ps(_mm512_slli_epi32(i, 23));
}

/* ---------------------------------------------------------------- AVX2 + FMA */
#elif defined(WF_SIMD_AVX2)
#define WF_SIMD_NAME "avx2-fma"
#define WF_VL 8
#define WF_MR 6
#define WF_NV 2
typedef __m256 wf_v;
WF_INLINE wf_v wf_vzero(void) { return _mm256_setzero_ps(); }
WF_INLINE wf_v wf_vset1(float x) { return _mm256_set1_ps(x); }
WF_INLINE wf_v wf_vload(const float *p) { return _mm256_loadu_ps(p); }
WF_INLINE wf_v wf_vbroadcast(const float *p) { return _mm256_broadcast_ss(p); }
WF_INLINE void wf_vstore(float *p, wf_v x) { _mm256_storeu_ps(p, x); }
WF_INLINE wf_v wf_vadd(wf_v a, wf_v b) { return _mm256_add_ps(a, b); }
WF_INLINE wf_v wf_vsub(wf_v a, wf_v b) { return _mm256_sub_ps(a, b); }
WF_INLINE wf_v wf_vmul(wf_v a, wf_v b) { return _mm256_mul_ps(a, b); }
WF_INLINE wf_v wf_vdiv(wf_v a, wf_v b) { return _mm256_div_ps(a, b); }
/* x86 max/min return the second operand when either is NaN: put the data second so a
 * NaN passes through */
WF_INLINE wf_v wf_vmax(wf_v a, wf_v b) { return _mm256_max_ps(b, a); }
WF_INLINE wf_v wf_vmin(wf_v a, wf_v b) { return _mm256_min_ps(b, a); }
WF_INLINE wf_v wf_vsqrt(wf_v a) { return _mm256_sqrt_ps(a); }
WF_INLINE wf_v wf_vmadd(wf_v a, wf_v b, wf_v c) { return _mm256_fmadd_ps(a, b, c); }
WF_INLINE float wf_vsum(wf_v a) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}
WF_INLINE float wf_vhmax(wf_v a) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}
WF_INLINE __m128 wf_half_sum(wf_v a) { return _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1)); }
WF_INLINE void wf_vsum4(float *out, wf_v a, wf_v b, wf_v c, wf_v d) {
    _mm_storeu_ps(out, wf_sum4_sse(wf_half_sum(a), wf_half_sum(b), wf_half_sum(c), wf_half_sum(d)));
}
WF_INLINE wf_v wf_vround(wf_v a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
WF_INLINE wf_v wf_vpow2i(wf_v n) {
    __m256i i = _mm256_add_epi32(_mm256_cvttps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(i, 23));
}

/* ---------------------------------------------------------------- SSE2 */
#elif defined(WF_SIMD_SSE)
#define WF_SIMD_NAME "sse2"
#define WF_VL 4
#define WF_MR 6
#define WF_NV 2
typedef __m128 wf_v;
WF_INLINE wf_v wf_vzero(void) { return _mm_setzero_ps(); }
WF_INLINE wf_v wf_vset1(float x) { return _mm_set1_ps(x); }
WF_INLINE wf_v wf_vload(const float *p) { return _mm_loadu_ps(p); }
WF_INLINE wf_v wf_vbroadcast(const float *p) { return _mm_load1_ps(p); }
WF_INLINE void wf_vstore(float *p, wf_v x) { _mm_storeu_ps(p, x); }
WF_INLINE wf_v wf_vadd(wf_v a, wf_v b) { return _mm_add_ps(a, b); }
WF_INLINE wf_v wf_vsub(wf_v a, wf_v b) { return _mm_sub_ps(a, b); }
WF_INLINE wf_v wf_vmul(wf_v a, wf_v b) { return _mm_mul_ps(a, b); }
WF_INLINE wf_v wf_vdiv(wf_v a, wf_v b) { return _mm_div_ps(a, b); }
WF_INLINE wf_v wf_vmax(wf_v a, wf_v b) { return _mm_max_ps(b, a); }
WF_INLINE wf_v wf_vmin(wf_v a, wf_v b) { return _mm_min_ps(b, a); }
WF_INLINE wf_v wf_vsqrt(wf_v a) { return _mm_sqrt_ps(a); }
WF_INLINE wf_v wf_vmadd(wf_v a, wf_v b, wf_v c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
WF_INLINE float wf_vsum(wf_v a) {
    __m128 s = _mm_add_ps(a, _mm_movehl_ps(a, a));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}
WF_INLINE float wf_vhmax(wf_v a) {
    __m128 s = _mm_max_ps(a, _mm_movehl_ps(a, a));
    s = _mm_max_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}
WF_INLINE void wf_vsum4(float *out, wf_v a, wf_v b, wf_v c, wf_v d) { _mm_storeu_ps(out, wf_sum4_sse(a, b, c, d)); }
/* SSE2 has no round instruction; the default MXCSR mode is round-to-nearest-even */
WF_INLINE wf_v wf_vround(wf_v a) { return _mm_cvtepi32_ps(_mm_cvtps_epi32(a)); }
WF_INLINE wf_v wf_vpow2i(wf_v n) {
    __m128i i = _mm_add_epi32(_mm_cvttps_epi32(n), _mm_set1_epi32(127));
    return _mm_castsi128_ps(_mm_slli_epi32(i, 23));
}

/* ---------------------------------------------------------------- scalar */
#else
#define WF_SIMD_NAME "scalar"
#define WF_VL 1
#define WF_MR 4
#define WF_NV 4
typedef wf_real wf_v;
WF_INLINE wf_v wf_vzero(void) { return 0; }
WF_INLINE wf_v wf_vset1(wf_real x) { return x; }
WF_INLINE wf_v wf_vload(const wf_real *p) { return *p; }
WF_INLINE wf_v wf_vbroadcast(const wf_real *p) { return *p; }
WF_INLINE void wf_vstore(wf_real *p, wf_v x) { *p = x; }
WF_INLINE wf_v wf_vadd(wf_v a, wf_v b) { return a + b; }
WF_INLINE wf_v wf_vsub(wf_v a, wf_v b) { return a - b; }
WF_INLINE wf_v wf_vmul(wf_v a, wf_v b) { return a * b; }
WF_INLINE wf_v wf_vdiv(wf_v a, wf_v b) { return a / b; }
WF_INLINE wf_v wf_vmax(wf_v a, wf_v b) { return a > b ? a : b; }
WF_INLINE wf_v wf_vmin(wf_v a, wf_v b) { return a < b ? a : b; }
WF_INLINE wf_v wf_vsqrt(wf_v a) { return WF_SQRT(a); }
WF_INLINE wf_v wf_vmadd(wf_v a, wf_v b, wf_v c) { return a * b + c; }
WF_INLINE wf_real wf_vsum(wf_v a) { return a; }
WF_INLINE wf_real wf_vhmax(wf_v a) { return a; }
WF_INLINE void wf_vsum4(wf_real *out, wf_v a, wf_v b, wf_v c, wf_v d) { out[0] = a, out[1] = b, out[2] = c, out[3] = d; }
WF_INLINE void wf_transpose4(wf_real *d, size_t ds, const wf_real *s, size_t ss) {
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) d[i * ds + j] = s[j * ss + i];
}
#endif

#define WF_NR (WF_NV * WF_VL)

/* x . y over n values: one vector accumulator, its lanes summed (wf_vsum), then the scalar
 * tail. Every plain dot product of the kernels is this one, so they all round alike. */
WF_INLINE wf_real wf_dot(const wf_real *x, const wf_real *y, int n) {
    wf_v s = wf_vzero();
    int i = 0;
    for (; i + WF_VL <= n; i += WF_VL) s = wf_vmadd(wf_vload(x + i), wf_vload(y + i), s);
    wf_real r = wf_vsum(s);
    for (; i < n; i++) r += x[i] * y[i];
    return r;
}

/* The vector lanes of x . y over n / WF_VL whole vectors. Relaxed SIMD's fused multiply-add
 * (x86 FMA: four cycles) waits on the one before it, so there two chains, one per vector of
 * a pair (float32 decoding 1.25x, bench/studies/decode-ab.mjs); simd128's add (three cycles)
 * keeps one chain, as the golden records' bits were made. */
WF_INLINE wf_v wf_vdot(const wf_real *x, const wf_real *y, int n) {
    wf_v s = wf_vzero();
    int i = 0;
#if defined(__wasm_relaxed_simd__)
    wf_v t = wf_vzero();
    for (; i + 2 * WF_VL <= n; i += 2 * WF_VL) {
        s = wf_vmadd(wf_vload(x + i), wf_vload(y + i), s);
        t = wf_vmadd(wf_vload(x + i + WF_VL), wf_vload(y + i + WF_VL), t);
    }
    s = wf_vadd(s, t);
#endif
    for (; i + WF_VL <= n; i += WF_VL) s = wf_vmadd(wf_vload(x + i), wf_vload(y + i), s);
    return s;
}

/* s[r] = x . y_r for the four rows y_r = y + r ys, each of n values (decoding's matrix-vector
 * products and attention scores). One row after the other: one stream of loads at a time,
 * which V8 (and the CPU's prefetchers) serve much faster than four rows interleaved (float32
 * decoding 1.7x, bench/studies/decode-ab.mjs); the four rows' lanes summed by one transpose. */
WF_INLINE void wf_dot4(wf_real *s, const wf_real *x, const wf_real *y, size_t ys, int n) {
    const wf_real *y0 = y, *y1 = y0 + ys, *y2 = y1 + ys, *y3 = y2 + ys;
    const wf_v s0 = wf_vdot(x, y0, n), s1 = wf_vdot(x, y1, n), s2 = wf_vdot(x, y2, n), s3 = wf_vdot(x, y3, n);
    int i = n / WF_VL * WF_VL;
    wf_vsum4(s, s0, s1, s2, s3);
    for (; i < n; i++) {
        s[0] += x[i] * y0[i];
        s[1] += x[i] * y1[i];
        s[2] += x[i] * y2[i];
        s[3] += x[i] * y3[i];
    }
}

/* e^x lane by lane. Vector backends: x = n ln2 + r with |r| <= ln2/2 (ln2 split in two so
 * n ln2 is exact), e^r = 1 + r + r^2 P(r) with the degree-5 minimax P of the Cephes
 * library's expf (about 1 ulp), times 2^n built in the exponent bits. Inputs are clamped
 * to [-87.3, 88.3] so that 2^n stays a normal float: below, the result is ~1e-38 instead
 * of a denormal or 0 (callers feed softmax x <= 0, where such terms vanish in the sum);
 * above, it stays finite. The scalar backend is the C library's exp. */
#if defined(WF_SIMD_SCALAR)
WF_INLINE wf_v wf_vexp(wf_v x) { return WF_EXP(x); }
#else
WF_INLINE wf_v wf_vexp(wf_v x) {
    x = wf_vmin(wf_vmax(x, wf_vset1(-87.3f)), wf_vset1(88.3f));
    wf_v n = wf_vround(wf_vmul(x, wf_vset1(1.44269504088896341f)));
    wf_v r = wf_vsub(x, wf_vmul(n, wf_vset1(0.693359375f))); /* ln2, high 8 bits */
    r = wf_vsub(r, wf_vmul(n, wf_vset1(-2.12194440e-4f)));    /* ln2, the rest */
    wf_v p = wf_vset1(1.9875691500e-4f);
    p = wf_vmadd(p, r, wf_vset1(1.3981999507e-3f));
    p = wf_vmadd(p, r, wf_vset1(8.3334519073e-3f));
    p = wf_vmadd(p, r, wf_vset1(4.1665795894e-2f));
    p = wf_vmadd(p, r, wf_vset1(1.6666665459e-1f));
    p = wf_vmadd(p, r, wf_vset1(5.0000001201e-1f));
    p = wf_vadd(wf_vmadd(wf_vmul(p, r), r, r), wf_vset1(1.0f));
    return wf_vmul(p, wf_vpow2i(n));
}
#endif

/* A softmax's exponentials over the whole vectors of x[0, n): p = e^((x - m) s), and their
 * lane sums added in order into *sum; returns the elements done. Four vectors' exponentials
 * side by side: V8 runs one chain of dependent operations at a time as written, and an
 * exponential is some twenty (attention's and the loss's softmax). The same arithmetic for
 * each element, and the same order of the sums, as one vector at a time. */
WF_INLINE int wf_vexp_sum(wf_real *p, const wf_real *x, int n, wf_real m, wf_real s, wf_v *sum) {
    const wf_v vm = wf_vset1(m), vs = wf_vset1(s);
    wf_v sv = *sum;
    int i = 0;
    for (; i + 4 * WF_VL <= n; i += 4 * WF_VL) {
        wf_v e[4];
        for (int q = 0; q < 4; q++) e[q] = wf_vexp(wf_vmul(wf_vsub(wf_vload(x + i + q * WF_VL), vm), vs));
        for (int q = 0; q < 4; q++) {
            wf_vstore(p + i + q * WF_VL, e[q]);
            sv = wf_vadd(sv, e[q]);
        }
    }
    for (; i + WF_VL <= n; i += WF_VL) {
        const wf_v e = wf_vexp(wf_vmul(wf_vsub(wf_vload(x + i), vm), vs));
        wf_vstore(p + i, e);
        sv = wf_vadd(sv, e);
    }
    *sum = sv;
    return i;
}

#endif /* WF_SIMD_H */
