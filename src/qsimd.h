/* The integer half of the SIMD vocabulary (simd.h picks the backend; this file only speaks
 * its integer instructions): dot products of quantized weight blocks with a quantized
 * activation row, for quant.c's generation path. A block is ggml's: an fp16 scale d, then
 * 32 weights (Q8_0: int8 q, w = d q; Q4_0: 16 bytes of nibbles, w[j] = d ((qs[j] & 15) - 8)
 * and w[j + 16] = d ((qs[j] >> 4) - 8)). The activation row comes as int8 values x[32 b + j]
 * with a float scale xd[b] and the block's sum xs[b] (quant.c's quantize_acts).
 *
 *   s[r] = sum over blocks b of  float(q(r, b) . x(b)) * (d(r, b) * xd[b])   for four rows r
 *
 * Each block's integer dot is exact on every backend (|products| <= 128 * 127, 32 terms),
 * and the float part runs row by row in block order, a multiply then an add (no fused
 * multiply-add), so every backend gives the scalar reference's bits (quant.c's qdot_scalar,
 * wf_qlinear_forward_scalar; tests/test_quant.c compares them with memcmp):
 *   wasm simd128   v128.load8x8_s (one pmovsxbw each) of weights and activations, then
 *                  i32x4.dot_i16x8_s (pmaddwd)
 *   wasm relaxed   i16x8.relaxed_dot_i8x16_i7x16_s, exact on every engine for a second operand
 *                  in [0, 127]: Q4_0's nibbles as they are (the -8 folded in as -8 xs[b]);
 *                  Q8_0's weights against the activations split in x+ and x- (below)
 *   avx2           the sign trick: |q| (u8) times sign(q) x (i8), vpmaddubsw then vpmaddwd
 *                  (pairs of products: at most 2 * 128 * 127, no saturation)
 *   avx512 + VNNI  vpdpbusd on the same operands (256 bits: a block is a ymm register)
 *   scalar         plain loops (SSE2, the double build, other CPUs)
 * Block sums are gathered four to a vector (a transpose of partial sums): four rows' (x86,
 * wasm Q4_0) or four blocks' of one row (wasm Q8_0), so the scales multiply in one go. */
#ifndef WF_QSIMD_H
#define WF_QSIMD_H

#include "simd.h"

#define WF_QK 32       /* weights per block */
#define WF_Q8_BYTES 34 /* fp16 scale, 32 int8 */
#define WF_Q4_BYTES 18 /* fp16 scale, 16 bytes of nibbles */

/* fp16 bits to float, exactly (normal and subnormal; the loaders refuse inf and NaN): the
 * magnitude's bits shifted into a float's place read as 2^-112 times the value. */
static inline float wf_f16_to_f32(uint16_t h) {
    const uint32_t u = (uint32_t)(h & 0x7fff) << 13;
    float f;
    memcpy(&f, &u, 4);
    f *= 0x1p112f;
    return h & 0x8000 ? -f : f;
}

static inline uint16_t wf_q_scale_bits(const uint8_t *block) { return (uint16_t)(block[0] | block[1] << 8); }

/* ---------------------------------------------------------------- wasm simd128 */
#if defined(WF_SIMD_WASM)
/* quant.c's quantize_acts, bit for bit, a block's 32 values in eight vectors (the scalar one
 * costs a libc roundf a value: a tenth of Q4_0's decoding). amax through pmax, which keeps
 * its first operand against a NaN as fmaxf does; roundf's halves away from zero as the
 * truncation plus one where the dropped fraction (exact) is >= 1/2; NaN lanes give 0. */
#define WF_QACTS_SIMD 1
static inline void wf_quantize_acts(int8_t *q, float *d, int32_t *s, const float *x, int K) {
    for (int b = 0; b < K / WF_QK; b++, x += WF_QK, q += WF_QK) {
        v128_t m = wasm_f32x4_splat(0), v[8];
        for (int j = 0; j < 8; j++) m = wasm_f32x4_pmax(m, wasm_f32x4_abs(v[j] = wasm_v128_load(x + 4 * j)));
        const float m01 = fmaxf(wasm_f32x4_extract_lane(m, 0), wasm_f32x4_extract_lane(m, 1));
        const float amax = fmaxf(m01, fmaxf(wasm_f32x4_extract_lane(m, 2), wasm_f32x4_extract_lane(m, 3)));
        const float scale = amax / 127, inv = scale != 0 ? 1 / scale : 0;
        v128_t sum = wasm_i32x4_splat(0);
        for (int j = 0; j < 8; j++) {
            const v128_t c = wasm_f32x4_pmax(wasm_f32x4_pmin(wasm_f32x4_mul(v[j], wasm_f32x4_splat(inv)), wasm_f32x4_splat(127)),
                                             wasm_f32x4_splat(-127));
            const v128_t a = wasm_f32x4_abs(c), t = wasm_f32x4_trunc(a);
            const v128_t r = wasm_f32x4_add(t, wasm_v128_and(wasm_f32x4_ge(wasm_f32x4_sub(a, t), wasm_f32x4_splat(0.5f)),
                                                             wasm_f32x4_splat(1)));
            /* r in [0, 127]: r + 2^23 holds it in its low mantissa bits */
            const v128_t n = wasm_i32x4_sub(wasm_f32x4_add(r, wasm_f32x4_splat(0x1p23f)), wasm_f32x4_splat(0x1p23f));
            const v128_t sign = wasm_i32x4_shr(c, 31);
            v[j] = wasm_v128_and(wasm_i32x4_sub(wasm_v128_xor(n, sign), sign), wasm_f32x4_eq(c, c));
            sum = wasm_i32x4_add(sum, v[j]);
        }
        const v128_t lo = wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(v[0], v[1]), wasm_i16x8_narrow_i32x4(v[2], v[3]));
        const v128_t hi = wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(v[4], v[5]), wasm_i16x8_narrow_i32x4(v[6], v[7]));
        wasm_v128_store(q, lo);
        wasm_v128_store(q + 16, hi);
        d[b] = scale;
        s[b] = (wasm_i32x4_extract_lane(sum, 0) + wasm_i32x4_extract_lane(sum, 1)) +
               (wasm_i32x4_extract_lane(sum, 2) + wasm_i32x4_extract_lane(sum, 3));
    }
}

/* Q8_0: one row at a time, four blocks at once (V8 decodes about half as fast with four rows'
 * blocks interleaved: simd128 1.9x, bench/studies/decode-ab.mjs); the four blocks' integer sums come
 * out of one transpose and their scales out of one conversion, then the products are added to
 * the row's sum one by one, in block order, as the reference adds them. */

/* The fp16 scales of four blocks (p0..p3) as float lanes, exactly (wf_f16_to_f32's bits). */
WF_INLINE v128_t q_f16x4(const uint8_t *p0, const uint8_t *p1, const uint8_t *p2, const uint8_t *p3) {
    v128_t h = wasm_v128_load16_lane(p0, wasm_i32x4_splat(0), 0); /* the low half of each i32 lane */
    h = wasm_v128_load16_lane(p1, h, 2);
    h = wasm_v128_load16_lane(p2, h, 4);
    h = wasm_v128_load16_lane(p3, h, 6);
    const v128_t mag = wasm_f32x4_mul(wasm_i32x4_shl(wasm_v128_and(h, wasm_i32x4_splat(0x7fff)), 13),
                                      wasm_f32x4_splat(0x1p112f));
    return wasm_v128_or(mag, wasm_i32x4_shl(wasm_v128_and(h, wasm_i32x4_splat(0x8000)), 16));
}

/* [sum of a's lanes, of b's, of c's, of d's] */
WF_INLINE v128_t q_hsum4(v128_t a, v128_t b, v128_t c, v128_t d) {
    const v128_t ab = wasm_i32x4_add(wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), wasm_i32x4_shuffle(a, b, 2, 6, 3, 7));
    const v128_t cd = wasm_i32x4_add(wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), wasm_i32x4_shuffle(c, d, 2, 6, 3, 7));
    return wasm_i32x4_add(wasm_i32x4_shuffle(ab, cd, 0, 1, 4, 5), wasm_i32x4_shuffle(ab, cd, 2, 3, 6, 7));
}

/* acc + the four blocks' float(sums) (d xd), added lane after lane: the reference's order */
WF_INLINE float q_acc4(float acc, v128_t sums, v128_t d, const float *xd) {
    const v128_t t = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(sums), wasm_f32x4_mul(d, wasm_v128_load(xd)));
    acc += wasm_f32x4_extract_lane(t, 0);
    acc += wasm_f32x4_extract_lane(t, 1);
    acc += wasm_f32x4_extract_lane(t, 2);
    return acc + wasm_f32x4_extract_lane(t, 3);
}

/* acc + one block's float(sum of v's lanes + add) (d xd): the blocks after the last four */
WF_INLINE float q_acc1(float acc, v128_t v, int32_t add, const uint8_t *p, float xd) {
    const int32_t sum = (wasm_i32x4_extract_lane(v, 0) + wasm_i32x4_extract_lane(v, 1)) +
                        (wasm_i32x4_extract_lane(v, 2) + wasm_i32x4_extract_lane(v, 3)) + add;
    return acc + (float)sum * (wf_f16_to_f32(wf_q_scale_bits(p)) * xd);
}

#if defined(__wasm_relaxed_simd__)
/* Relaxed SIMD's integer dot (i16x8.relaxed_dot_i8x16_i7x16_s) is exact on every engine only
 * for a second operand in [0, 127], where int8 weights (-128..127) do not fit; the activations
 * (-127..127, quant.c) are split instead, once per row for all weight rows:
 *   x+ = max(x, 0), x- = max(-x, 0), both in [0, 127];  q . x = q . x+ - q . x-
 * Each pair sum of either dot is at most 2 * 128 * 127 in magnitude (no saturation in x86's
 * pmaddubsw), and so is their difference, the pair sum of q . x: it is taken in int16. */
#define WF_Q8_SPLIT 1

/* xpm [2 K]: per block of 32, its 32 x+ then its 32 x- */
static inline void wf_q8_split(int8_t *xpm, const int8_t *x, int K) {
    const v128_t zero = wasm_i8x16_splat(0);
    for (int b = 0; b < K / WF_QK; b++, x += WF_QK, xpm += 2 * WF_QK)
        for (int h = 0; h < WF_QK; h += 16) {
            const v128_t v = wasm_v128_load(x + h);
            wasm_v128_store(xpm + h, wasm_i8x16_max(v, zero));
            wasm_v128_store(xpm + WF_QK + h, wasm_i8x16_max(wasm_i8x16_neg(v), zero));
        }
}

/* q . x of one Q8_0 block as four int32 lanes, from the block's x+ and x- (xpm) */
WF_INLINE v128_t q8_dot(const uint8_t *p, const int8_t *xpm) {
    const v128_t qa = wasm_v128_load(p + 2), qb = wasm_v128_load(p + 18);
    const v128_t da = wasm_i16x8_sub(wasm_i16x8_relaxed_dot_i8x16_i7x16(qa, wasm_v128_load(xpm)),
                                     wasm_i16x8_relaxed_dot_i8x16_i7x16(qa, wasm_v128_load(xpm + 32)));
    const v128_t db = wasm_i16x8_sub(wasm_i16x8_relaxed_dot_i8x16_i7x16(qb, wasm_v128_load(xpm + 16)),
                                     wasm_i16x8_relaxed_dot_i8x16_i7x16(qb, wasm_v128_load(xpm + 48)));
    return wasm_i32x4_add(wasm_i32x4_extadd_pairwise_i16x8(da), wasm_i32x4_extadd_pairwise_i16x8(db));
}
#define Q8_X(x, xpm) (xpm) /* what q8_dot reads, and its bytes a block: */
#define Q8_XB (2 * WF_QK)
#else
/* q . x of one Q8_0 block as four int32 lanes: v128.load8x8_s (pmovsxbw) then i32x4.dot_i16x8_s */
WF_INLINE v128_t q8_dot(const uint8_t *p, const int8_t *x) {
    const v128_t s0 = wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(p + 2), wasm_i16x8_load8x8(x)),
                                     wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(p + 10), wasm_i16x8_load8x8(x + 8)));
    const v128_t s1 = wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(p + 18), wasm_i16x8_load8x8(x + 16)),
                                     wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(p + 26), wasm_i16x8_load8x8(x + 24)));
    return wasm_i32x4_add(s0, s1);
}
#define Q8_X(x, xpm) (x)
#define Q8_XB WF_QK
#endif

/* s = the row's dot: blocks four at a time, then one by one */
WF_INLINE float q8_row(const uint8_t *p, const int8_t *x, const float *xd, int nb) {
    enum { B = WF_Q8_BYTES, XB = Q8_XB };
    float acc = 0;
    int b = 0;
    for (; b + 4 <= nb; b += 4, p += 4 * B, x += 4 * XB)
        acc = q_acc4(acc, q_hsum4(q8_dot(p, x), q8_dot(p + B, x + XB), q8_dot(p + 2 * B, x + 2 * XB), q8_dot(p + 3 * B, x + 3 * XB)),
                     q_f16x4(p, p + B, p + 2 * B, p + 3 * B), xd + b);
    for (; b < nb; b++, p += B, x += XB) acc = q_acc1(acc, q8_dot(p, x), 0, p, xd[b]);
    return acc;
}

static inline void wf_q8_dot4(float *s, const uint8_t *w, size_t rb, const int8_t *x, const int8_t *xpm,
                              const float *xd, const int32_t *xs, int nb) {
    (void)xs, (void)xpm, (void)x;
    for (int r = 0; r < 4; r++) s[r] = q8_row(w + (size_t)r * rb, Q8_X(x, xpm), xd, nb);
}
#undef Q8_X
#undef Q8_XB

/* Q4_0 keeps four rows at a time, which decodes faster than a row at a time (the same study:
 * one row's 18-byte blocks cost more in conversions than its loads), the four rows sharing
 * each block's activations */
WF_INLINE v128_t q_scales4(const uint8_t *p0, const uint8_t *p1, const uint8_t *p2, const uint8_t *p3, float dx) {
    return wasm_f32x4_mul(q_f16x4(p0, p1, p2, p3), wasm_f32x4_splat(dx));
}

#if defined(__wasm_relaxed_simd__)
/* q . x + 8 xs of a Q4_0 block: the nibbles (0..15, unsigned as they are) times x in the
 * relaxed dot, which every engine computes exactly for a second operand in [0, 127]; the
 * two halves' pair sums (|.| <= 4 * 15 * 127) added as int16, then widened */
WF_INLINE v128_t q4_dot(const uint8_t *p, v128_t xa, v128_t xb) {
    const v128_t q = wasm_v128_load(p + 2);
    const v128_t lo = wasm_v128_and(q, wasm_i8x16_splat(15)), hi = wasm_u8x16_shr(q, 4);
    return wasm_i32x4_extadd_pairwise_i16x8(
        wasm_i16x8_add(wasm_i16x8_relaxed_dot_i8x16_i7x16(xa, lo), wasm_i16x8_relaxed_dot_i8x16_i7x16(xb, hi)));
}
#define Q4_X const v128_t xa = wasm_v128_load(x), xb = wasm_v128_load(x + 16)
#define Q4_DOT(p) q4_dot(p, xa, xb)
#else
/* q . x + 8 xs of a Q4_0 block in simd128: the nibbles widened to int16 (0..15), times x */
WF_INLINE v128_t q4_dot(const uint8_t *p, v128_t x0, v128_t x1, v128_t x2, v128_t x3) {
    const v128_t q = wasm_v128_load(p + 2);
    const v128_t lo = wasm_v128_and(q, wasm_i8x16_splat(15)), hi = wasm_u8x16_shr(q, 4);
    const v128_t s0 = wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_u16x8_extend_low_u8x16(lo), x0),
                                     wasm_i32x4_dot_i16x8(wasm_u16x8_extend_high_u8x16(lo), x1));
    const v128_t s1 = wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_u16x8_extend_low_u8x16(hi), x2),
                                     wasm_i32x4_dot_i16x8(wasm_u16x8_extend_high_u8x16(hi), x3));
    return wasm_i32x4_add(s0, s1);
}
#define Q4_X                                                                                    \
    const v128_t x0 = wasm_i16x8_load8x8(x), x1 = wasm_i16x8_load8x8(x + 8);                    \
    const v128_t x2 = wasm_i16x8_load8x8(x + 16), x3 = wasm_i16x8_load8x8(x + 24)
#define Q4_DOT(p) q4_dot(p, x0, x1, x2, x3)
#endif

/* the four rows' block sums in one vector, the -8 of every nibble folded in as -8 xs[b];
 * acc += float(sums) * scales, lane r = row r, in block order */
static inline void wf_q4_dot4(float *s, const uint8_t *w, size_t rb, const int8_t *x, const float *xd,
                              const int32_t *xs, int nb) {
    const uint8_t *p0 = w, *p1 = p0 + rb, *p2 = p1 + rb, *p3 = p2 + rb;
    v128_t acc = wasm_f32x4_splat(0);
    for (int b = 0; b < nb; b++, x += WF_QK, p0 += WF_Q4_BYTES, p1 += WF_Q4_BYTES, p2 += WF_Q4_BYTES, p3 += WF_Q4_BYTES) {
        Q4_X;
        const v128_t sums = wasm_i32x4_add(q_hsum4(Q4_DOT(p0), Q4_DOT(p1), Q4_DOT(p2), Q4_DOT(p3)),
                                           wasm_i32x4_splat(-8 * xs[b]));
        acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(sums), q_scales4(p0, p1, p2, p3, xd[b])));
    }
    wasm_v128_store(s, acc);
}
#undef Q4_X
#undef Q4_DOT

/* ---------------------------------------------------------------- AVX2 and AVX-512 */
#elif defined(WF_SIMD_AVX2) || defined(WF_SIMD_AVX512)

/* The fp16 scales of one block of four rows, as float lanes (F16C, which every AVX2 CPU
 * has; without it the exact conversion lane by lane), times dx. */
WF_INLINE __m128 q_scales4(const uint8_t *p0, const uint8_t *p1, const uint8_t *p2, const uint8_t *p3, float dx) {
#if defined(__F16C__)
    const __m128i h = _mm_setr_epi16((short)wf_q_scale_bits(p0), (short)wf_q_scale_bits(p1), (short)wf_q_scale_bits(p2),
                                     (short)wf_q_scale_bits(p3), 0, 0, 0, 0);
    return _mm_mul_ps(_mm_cvtph_ps(h), _mm_set1_ps(dx));
#else
    return _mm_mul_ps(_mm_setr_ps(wf_f16_to_f32(wf_q_scale_bits(p0)), wf_f16_to_f32(wf_q_scale_bits(p1)),
                                  wf_f16_to_f32(wf_q_scale_bits(p2)), wf_f16_to_f32(wf_q_scale_bits(p3))),
                      _mm_set1_ps(dx));
#endif
}

/* The 32 products of u (uint8) and v (int8), summed in groups of four into eight int32
 * lanes: one VNNI instruction, or AVX2's pair sums (vpmaddubsw, which cannot saturate here:
 * |u| <= 128, |v| <= 127) widened by vpmaddwd. */
WF_INLINE __m256i q_dpbusd(__m256i u, __m256i v) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, v);
#else
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, v), _mm256_set1_epi16(1));
#endif
}

/* q . x of a Q8_0 block: |q| times sign(q) x */
WF_INLINE __m256i q8_dot(const uint8_t *p, __m256i x) {
    const __m256i q = _mm256_loadu_si256((const __m256i *)(const void *)(p + 2));
    return q_dpbusd(_mm256_sign_epi8(q, q), _mm256_sign_epi8(x, q));
}

/* q . x + 8 xs of a Q4_0 block: the nibbles (0..15) are unsigned as they are; low nibbles
 * are weights 0..15, high ones 16..31 */
WF_INLINE __m256i q4_dot(const uint8_t *p, __m256i x) {
    const __m128i q = _mm_loadu_si128((const __m128i *)(const void *)(p + 2)), m = _mm_set1_epi8(15);
    return q_dpbusd(_mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), m), _mm_and_si128(q, m)), x);
}

/* [sum of a's lanes, of b's, of c's, of d's] */
WF_INLINE __m128i q_hsum4(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i s = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
    return _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
}

#define Q_ACC(acc, sums, scales) acc = _mm_add_ps(acc, _mm_mul_ps(_mm_cvtepi32_ps(sums), scales))

static inline void wf_q8_dot4(float *s, const uint8_t *w, size_t rb, const int8_t *x, const int8_t *xpm,
                              const float *xd, const int32_t *xs, int nb) {
    (void)xs, (void)xpm;
    const uint8_t *p0 = w, *p1 = p0 + rb, *p2 = p1 + rb, *p3 = p2 + rb;
    __m128 acc = _mm_setzero_ps();
    for (int b = 0; b < nb; b++, x += WF_QK, p0 += WF_Q8_BYTES, p1 += WF_Q8_BYTES, p2 += WF_Q8_BYTES, p3 += WF_Q8_BYTES) {
        const __m256i xv = _mm256_loadu_si256((const __m256i *)(const void *)x);
        const __m128i sums = q_hsum4(q8_dot(p0, xv), q8_dot(p1, xv), q8_dot(p2, xv), q8_dot(p3, xv));
        Q_ACC(acc, sums, q_scales4(p0, p1, p2, p3, xd[b]));
    }
    _mm_storeu_ps(s, acc);
}

static inline void wf_q4_dot4(float *s, const uint8_t *w, size_t rb, const int8_t *x, const float *xd,
                              const int32_t *xs, int nb) {
    const uint8_t *p0 = w, *p1 = p0 + rb, *p2 = p1 + rb, *p3 = p2 + rb;
    __m128 acc = _mm_setzero_ps();
    for (int b = 0; b < nb; b++, x += WF_QK, p0 += WF_Q4_BYTES, p1 += WF_Q4_BYTES, p2 += WF_Q4_BYTES, p3 += WF_Q4_BYTES) {
        const __m256i xv = _mm256_loadu_si256((const __m256i *)(const void *)x);
        const __m128i sums = _mm_add_epi32(q_hsum4(q4_dot(p0, xv), q4_dot(p1, xv), q4_dot(p2, xv), q4_dot(p3, xv)),
                                           _mm_set1_epi32(-8 * xs[b]));
        Q_ACC(acc, sums, q_scales4(p0, p1, p2, p3, xd[b]));
    }
    _mm_storeu_ps(s, acc);
}
#undef Q_ACC

/* ---------------------------------------------------------------- scalar */
#else

/* The reference's loops (quant.c's qdot_scalar), four rows. The int8 weights are read
 * through an int8 pointer (see qdot_scalar). */
static inline void wf_q8_dot4(float *s, const uint8_t *w, size_t rb, const int8_t *x, const int8_t *xpm,
                              const float *xd, const int32_t *xs, int nb) {
    (void)xs, (void)xpm;
    for (int r = 0; r < 4; r++) {
        const uint8_t *p = w + (size_t)r * rb;
        float acc = 0;
        for (int b = 0; b < nb; b++, p += WF_Q8_BYTES) {
            const int8_t *q = (const int8_t *)(const void *)(p + 2), *xb = x + (size_t)b * WF_QK;
            int32_t sum = 0;
            for (int j = 0; j < WF_QK; j++) sum += q[j] * xb[j];
            acc += (float)sum * (wf_f16_to_f32(wf_q_scale_bits(p)) * xd[b]);
        }
        s[r] = acc;
    }
}

static inline void wf_q4_dot4(float *s, const uint8_t *w, size_t rb, const int8_t *x, const float *xd,
                              const int32_t *xs, int nb) {
    (void)xs;
    for (int r = 0; r < 4; r++) {
        const uint8_t *p = w + (size_t)r * rb;
        float acc = 0;
        for (int b = 0; b < nb; b++, p += WF_Q4_BYTES) {
            const int8_t *xb = x + (size_t)b * WF_QK;
            int32_t sum = 0;
            for (int j = 0; j < 16; j++) sum += ((p[2 + j] & 15) - 8) * xb[j] + ((p[2 + j] >> 4) - 8) * xb[j + 16];
            acc += (float)sum * (wf_f16_to_f32(wf_q_scale_bits(p)) * xd[b]);
        }
        s[r] = acc;
    }
}
#endif

#if !defined(WF_Q8_SPLIT) /* the activations as they are */
#define WF_Q8_SPLIT 0
static inline void wf_q8_split(int8_t *xpm, const int8_t *x, int K) { (void)xpm, (void)x, (void)K; }
#endif

#endif /* WF_QSIMD_H */
