/* The integer half of the SIMD vocabulary (simd.h picks the backend; this file only speaks
 * its integer instructions): dot products of a quantized weight row with a quantized
 * activation row, for quant.c's generation path.
 *
 * Files hold ggml's blocks (an fp16 scale d, then 32 weights: Q8_0 int8 q, w = d q; Q4_0 16
 * bytes of nibbles, w[j] = d ((qs[j] & 15) - 8), w[j + 16] = d ((qs[j] >> 4) - 8)). The model
 * holds each row of nb blocks packed for the kernels (quant.c converts at the file boundary;
 * the bytes per row are the same):
 *   quants   nb QB bytes first (QB = 32 for Q8_0, 16 for Q4_0): blocks in groups of four,
 *            each group's four blocks interleaved four bytes at a time (byte j of block k of
 *            the group at (4 (j / 4) + k) 4 + j % 4); of the nb % 4 blocks left, two as a
 *            pair interleaved the same way ((2 (j / 4) + k) 4 + j % 4), a last one as it is
 *   scales   then the nb fp16 scales, in block order
 * so that a vector of 16 bytes holds four bytes of each of a group's blocks, and a dot's
 * int32 lane k (a sum of four adjacent products) belongs to block k: a group's four block
 * sums come out in the lanes, with no transpose, and its four scales in one load (a pair's
 * in lanes 0, 1 and again 2, 3, folded once). The
 * activation row comes as int8 values x, packed the same way (a Q4_0 byte j pairs with x's
 * bytes j and j + 16 of its block), with a float scale xd[b] and the block's sum xs[b] in
 * block order (quant.c's quantize_acts).
 *
 *   s = (a[0] + a[1]) + (a[2] + a[3]),  a[k] = sum over blocks b = k (mod 4), in order, of
 *       float(q(b) . x(b)) * (d(b) * xd[b])
 *
 * Each block's integer dot is exact on every backend (|products| <= 128 * 127, 32 terms),
 * and the float part runs in that order, a multiply then an add (no fused multiply-add), so
 * every backend gives the scalar reference's bits (quant.c's qdot_scalar,
 * wf_qlinear_forward_scalar; tests/test_quant.c compares them with memcmp):
 *   wasm simd128   v128.load8x8_s (one pmovsxbw each) of weights and activations, then
 *                  i32x4.dot_i16x8_s (pmaddwd)
 *   wasm relaxed   i16x8.relaxed_dot_i8x16_i7x16_s, exact on every engine for a second operand
 *                  in [0, 127]: Q4_0's nibbles as they are (the -8 folded in as -8 xs[b]);
 *                  Q8_0's weights against the activations split in x+ and x- (below)
 *   avx2           the sign trick: |q| (u8) times sign(q) x (i8), vpmaddubsw then vpmaddwd
 *                  (pairs of products: at most 2 * 128 * 127, no saturation)
 *   avx512 + VNNI  vpdpbusd on the same operands (256 bits)
 *   scalar         plain loops (SSE2, the double build, other CPUs) */
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

/* Where byte j (< qb, the quant bytes of a block) of block b of a packed row of nb blocks lies;
 * the row's scales start at nb qb. */
static inline size_t wf_qpos(size_t nb, size_t b, size_t j, size_t qb) {
    const size_t g = nb & ~(size_t)3;
    if (b < g) return (b & ~(size_t)3) * qb + (4 * (j / 4) + (b & 3)) * 4 + j % 4;
    if (b < g + 2 && nb - g >= 2) return g * qb + (2 * (j / 4) + (b - g)) * 4 + j % 4;
    return b * qb + j;
}

/* The reference's float part for the blocks after the last group (a[b % 4] += ...), given
 * their integer sums, then its final sum. */
static inline float wf_q_finish(float a[4], const int32_t *sums, const uint8_t *scales, const float *xd, int b, int nb) {
    for (; b < nb; b++, sums++) a[b & 3] += (float)*sums * (wf_f16_to_f32(wf_q_scale_bits(scales + 2 * b)) * xd[b]);
    return (a[0] + a[1]) + (a[2] + a[3]);
}

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

/* A packed group's four blocks dequantized (x [128], d: their four scales): each 16 bytes
 * hold four of every block's values, widened and scaled a block at a time (QLoRA and
 * evaluation dequantize every row per product: the scalar loop's strided pieces cost it 5 %
 * of a step) */
#define WF_Q_DEQUANT_SIMD 1
WF_INLINE void q_dequant4(float *x, v128_t v, const float *d) { /* v: int8 values, four of each block */
    const v128_t lo = wasm_i16x8_extend_low_i8x16(v), hi = wasm_i16x8_extend_high_i8x16(v);
    wasm_v128_store(x, wasm_f32x4_mul(wasm_v128_load32_splat(d), wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(lo))));
    wasm_v128_store(x + 32, wasm_f32x4_mul(wasm_v128_load32_splat(d + 1), wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(lo))));
    wasm_v128_store(x + 64, wasm_f32x4_mul(wasm_v128_load32_splat(d + 2), wasm_f32x4_convert_i32x4(wasm_i32x4_extend_low_i16x8(hi))));
    wasm_v128_store(x + 96, wasm_f32x4_mul(wasm_v128_load32_splat(d + 3), wasm_f32x4_convert_i32x4(wasm_i32x4_extend_high_i16x8(hi))));
}
static inline void wf_q_dequant_group(float *x, const uint8_t *p, const float *d, int q8) {
    if (q8) {
        for (int c = 0; c < 8; c++) q_dequant4(x + 4 * c, wasm_v128_load(p + 16 * c), d);
        return;
    }
    for (int c = 0; c < 4; c++) { /* the nibbles less 8: the low ones values 4c.., the high ones 16 + 4c.. */
        const v128_t q = wasm_v128_load(p + 16 * c), eight = wasm_i8x16_splat(8);
        q_dequant4(x + 4 * c, wasm_i8x16_sub(wasm_v128_and(q, wasm_i8x16_splat(15)), eight), d);
        q_dequant4(x + 16 + 4 * c, wasm_i8x16_sub(wasm_u8x16_shr(q, 4), eight), d);
    }
}

/* A row at a time (V8 decodes about half as fast with four rows' blocks interleaved:
 * bench/studies/decode-ab.mjs), a group of four blocks a step: their integer sums in the
 * lanes of one vector, their four fp16 scales in one load. */

/* fp16 bits (the low half of each int32 lane) as float lanes, exactly (wf_f16_to_f32's bits):
 * shifted up 16 then arithmetically down 3, the sign stays on top and the magnitude lands in
 * a float's bits 27..13; the three copies of the sign between are masked off. Four blocks'
 * scales (s: 8 bytes) in one load. */
WF_INLINE v128_t q_f16_lanes(v128_t h) {
    return wasm_f32x4_mul(wasm_v128_and(wasm_i32x4_shr(wasm_i32x4_shl(h, 16), 3), wasm_i32x4_splat((int32_t)0x8fffe000)),
                          wasm_f32x4_splat(0x1p112f));
}
WF_INLINE v128_t q_f16x4(const uint8_t *s) { return q_f16_lanes(wasm_u32x4_load16x4(s)); }

/* acc + float(a group's sums) (d xd), lane k for block k */
WF_INLINE v128_t q_acc(v128_t acc, v128_t sums, const uint8_t *scales, const float *xd) {
    return wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(sums), wasm_f32x4_mul(q_f16x4(scales), wasm_v128_load(xd))));
}

/* The same for a pair, whose sums (in lanes 0, 1 and again 2, 3) fold once; lanes 2, 3 add
 * float(sum) (0 * 0), a zero, which leaves them as they were (a lane that starts at +0 never
 * holds -0, so adding either zero changes no bits) */
WF_INLINE v128_t q_acc2(v128_t acc, v128_t sums, const uint8_t *scales, const float *xd) {
    const v128_t d = q_f16_lanes(wasm_u32x4_extend_low_u16x8(wasm_v128_load32_zero(scales)));
    sums = wasm_i32x4_add(sums, wasm_i32x4_shuffle(sums, sums, 2, 3, 0, 1));
    return wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(sums), wasm_f32x4_mul(d, wasm_v128_load64_zero(xd))));
}

WF_INLINE int32_t q_hsum(v128_t v) {
    return (wasm_i32x4_extract_lane(v, 0) + wasm_i32x4_extract_lane(v, 1)) +
           (wasm_i32x4_extract_lane(v, 2) + wasm_i32x4_extract_lane(v, 3));
}

/* the group's lanes in a[], then the blocks after it and the final sum */
WF_INLINE float q_row_end(v128_t acc, const int32_t *tail, const uint8_t *scales, const float *xd, int b, int nb) {
    float a[4];
    wasm_v128_store(a, acc);
    return wf_q_finish(a, tail, scales, xd, b, nb);
}

#if defined(__wasm_relaxed_simd__)
/* Relaxed SIMD's integer dot (i16x8.relaxed_dot_i8x16_i7x16_s) is exact on every engine only
 * for a second operand in [0, 127], where int8 weights (-128..127) do not fit; the activations
 * (-127..127, quant.c) are split instead, once per row for all weight rows:
 *   x+ = max(x, 0), x- = max(-x, 0), both in [0, 127];  q . x = q . x+ - q . x-
 * Each pair sum of either dot is at most 2 * 128 * 127 in magnitude (no saturation in x86's
 * pmaddubsw), and so is their difference, the pair sum of q . x: it is taken in int16. */
#define WF_Q8_SPLIT 1

/* xpm [2 K]: for each 16 bytes of the packed x, their x+ then their x- */
static inline void wf_q8_split(int8_t *xpm, const int8_t *x, int K) {
    const v128_t zero = wasm_i8x16_splat(0);
    for (int i = 0; i < K; i += 16, xpm += 32) {
        const v128_t v = wasm_v128_load(x + i);
        wasm_v128_store(xpm, wasm_i8x16_max(v, zero));
        wasm_v128_store(xpm + 16, wasm_i8x16_max(wasm_i8x16_neg(v), zero));
    }
}

/* 16 weights' products in four int32 lanes (each the sum of four adjacent ones) */
WF_INLINE v128_t q8_part(const uint8_t *p, const int8_t *xpm) {
    const v128_t q = wasm_v128_load(p);
    return wasm_i32x4_extadd_pairwise_i16x8(wasm_i16x8_sub(wasm_i16x8_relaxed_dot_i8x16_i7x16(q, wasm_v128_load(xpm)),
                                                           wasm_i16x8_relaxed_dot_i8x16_i7x16(q, wasm_v128_load(xpm + 16))));
}
#define Q8_XB 64 /* bytes of xpm a block */
WF_INLINE v128_t q8_group(const uint8_t *p, const int8_t *xpm) {
    v128_t s0 = q8_part(p, xpm), s1 = q8_part(p + 16, xpm + 32);
#pragma clang loop unroll(disable)
    for (int c = 2; c < 8; c += 2) s0 = wasm_i32x4_add(s0, q8_part(p + 16 * c, xpm + 32 * c)), s1 = wasm_i32x4_add(s1, q8_part(p + 16 * c + 16, xpm + 32 * c + 32));
    return wasm_i32x4_add(s0, s1);
}
WF_INLINE v128_t q8_pair(const uint8_t *p, const int8_t *xpm) { /* lanes: blocks 0, 1, 0, 1 */
    return wasm_i32x4_add(wasm_i32x4_add(q8_part(p, xpm), q8_part(p + 16, xpm + 32)), wasm_i32x4_add(q8_part(p + 32, xpm + 64), q8_part(p + 48, xpm + 96)));
}
WF_INLINE int32_t q8_block(const uint8_t *p, const int8_t *xpm) { return q_hsum(wasm_i32x4_add(q8_part(p, xpm), q8_part(p + 16, xpm + 32))); }
#else
/* v128.load8x8_s (pmovsxbw) of weights and activations, then i32x4.dot_i16x8_s, whose lanes
 * hold pairs: the vectors' first 8 bytes (blocks 0, 1 of a group) and last 8 (2, 3) summed
 * apart, then lanes 0 + 1, 2 + 3 of each (a shuffle) */
#define Q8_XB WF_QK
WF_INLINE v128_t q8_dot8(const uint8_t *p, const int8_t *x) { return wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(p), wasm_i16x8_load8x8(x)); }
WF_INLINE v128_t q8_group(const uint8_t *p, const int8_t *x) {
    v128_t lo = q8_dot8(p, x), hi = q8_dot8(p + 8, x + 8);
    for (int c = 16; c < 4 * WF_QK; c += 16) lo = wasm_i32x4_add(lo, q8_dot8(p + c, x + c)), hi = wasm_i32x4_add(hi, q8_dot8(p + c + 8, x + c + 8));
    return wasm_i32x4_add(wasm_i32x4_shuffle(lo, hi, 0, 2, 4, 6), wasm_i32x4_shuffle(lo, hi, 1, 3, 5, 7));
}
WF_INLINE v128_t q8_pair(const uint8_t *p, const int8_t *x) { /* lanes: blocks 0, 0, 1, 1 as pairs, reordered 0, 1, 0, 1 */
    v128_t v = wasm_i32x4_add(q8_dot8(p, x), q8_dot8(p + 8, x + 8));
    for (int c = 16; c < 2 * WF_QK; c += 16) v = wasm_i32x4_add(v, wasm_i32x4_add(q8_dot8(p + c, x + c), q8_dot8(p + c + 8, x + c + 8)));
    return wasm_i32x4_shuffle(v, v, 0, 2, 1, 3);
}
WF_INLINE int32_t q8_block(const uint8_t *p, const int8_t *x) {
    return q_hsum(wasm_i32x4_add(wasm_i32x4_add(q8_dot8(p, x), q8_dot8(p + 8, x + 8)), wasm_i32x4_add(q8_dot8(p + 16, x + 16), q8_dot8(p + 24, x + 24))));
}
#endif

/* s = the row's dot (x: the packed activations, or their split xpm) */
static inline float wf_q8_row(const uint8_t *w, const int8_t *x, const float *xd, const int32_t *xs, int nb) {
    (void)xs;
    const uint8_t *scales = w + (size_t)nb * WF_QK;
    v128_t acc = wasm_f32x4_splat(0);
    int b = 0;
    /* the groups' integer sums first, eight at a time, then their float part: V8 keeps the
     * float accumulator in a register only when the integer work is out of its loop */
    for (; b + 4 <= nb;) {
        v128_t sums[8];
        int g = 0;
        for (; g < 8 && b + 4 * g + 4 <= nb; g++, w += 4 * WF_QK, x += 4 * Q8_XB) sums[g] = q8_group(w, x);
        for (int k = 0; k < g; k++, b += 4) acc = q_acc(acc, sums[k], scales + 2 * b, xd + b);
    }
    if (nb - b >= 2) acc = q_acc2(acc, q8_pair(w, x), scales + 2 * b, xd + b), b += 2, w += 2 * WF_QK, x += 2 * Q8_XB;
    const int32_t last = b < nb ? q8_block(w, x) : 0;
    return q_row_end(acc, &last, scales, xd, b, nb);
}
#undef Q8_XB

#if defined(__wasm_relaxed_simd__)
/* n . x of the nibbles n of 16 bytes against their two x vectors (the low nibbles' and the high
 * ones'), in int16 pair sums (each |.| <= 2 * 15 * 127, so eight such sums still fit): the
 * nibbles (0..15, unsigned as they are) are the relaxed dot's exact second operand */
WF_INLINE v128_t q4_part(const uint8_t *p, const int8_t *xl, const int8_t *xh) {
    const v128_t q = wasm_v128_load(p), m = wasm_i8x16_splat(15);
    return wasm_i16x8_add(wasm_i16x8_relaxed_dot_i8x16_i7x16(wasm_v128_load(xl), wasm_v128_and(q, m)),
                          wasm_i16x8_relaxed_dot_i8x16_i7x16(wasm_v128_load(xh), wasm_v128_and(wasm_u16x8_shr(q, 4), m)));
}
WF_INLINE v128_t q4_group(const uint8_t *p, const int8_t *x) { /* x: 128 bytes, the low nibbles' then the high ones' */
    const v128_t s = wasm_i16x8_add(wasm_i16x8_add(q4_part(p, x, x + 64), q4_part(p + 16, x + 16, x + 80)),
                                    wasm_i16x8_add(q4_part(p + 32, x + 32, x + 96), q4_part(p + 48, x + 48, x + 112)));
    return wasm_i32x4_extadd_pairwise_i16x8(s);
}
WF_INLINE v128_t q4_pair(const uint8_t *p, const int8_t *x) { /* x: 64 bytes, the low nibbles' then the high ones' */
    return wasm_i32x4_extadd_pairwise_i16x8(wasm_i16x8_add(q4_part(p, x, x + 32), q4_part(p + 16, x + 16, x + 48)));
}
WF_INLINE int32_t q4_block(const uint8_t *p, const int8_t *x) { return q_hsum(wasm_i32x4_extadd_pairwise_i16x8(q4_part(p, x, x + 16))); }
#else
/* the same in simd128: nibbles widened to int16 (0..15), i32x4.dot_i16x8_s against x, lanes of
 * pairs (as q8_part) */
WF_INLINE v128_t q4_dot8(v128_t n16, const int8_t *x) { return wasm_i32x4_dot_i16x8(n16, wasm_i16x8_load8x8(x)); }
WF_INLINE v128_t q4_group(const uint8_t *p, const int8_t *x) {
    v128_t lo = wasm_i32x4_splat(0), hi = lo; /* the vectors' first 8 bytes (blocks 0, 1), their last 8 (2, 3) */
    for (int c = 0; c < 4; c++, p += 16, x += 16) {
        const v128_t q = wasm_v128_load(p), l = wasm_v128_and(q, wasm_i8x16_splat(15)), h = wasm_u8x16_shr(q, 4);
        lo = wasm_i32x4_add(lo, wasm_i32x4_add(q4_dot8(wasm_u16x8_extend_low_u8x16(l), x), q4_dot8(wasm_u16x8_extend_low_u8x16(h), x + 64)));
        hi = wasm_i32x4_add(hi, wasm_i32x4_add(q4_dot8(wasm_u16x8_extend_high_u8x16(l), x + 8),
                                               q4_dot8(wasm_u16x8_extend_high_u8x16(h), x + 72)));
    }
    return wasm_i32x4_add(wasm_i32x4_shuffle(lo, hi, 0, 2, 4, 6), wasm_i32x4_shuffle(lo, hi, 1, 3, 5, 7));
}
WF_INLINE v128_t q4_pair(const uint8_t *p, const int8_t *x) {
    v128_t v = wasm_i32x4_splat(0);
    for (int c = 0; c < 2; c++, p += 16, x += 16) {
        const v128_t q = wasm_v128_load(p), l = wasm_v128_and(q, wasm_i8x16_splat(15)), h = wasm_u8x16_shr(q, 4);
        v = wasm_i32x4_add(v, wasm_i32x4_add(wasm_i32x4_add(q4_dot8(wasm_u16x8_extend_low_u8x16(l), x), q4_dot8(wasm_u16x8_extend_high_u8x16(l), x + 8)),
                                             wasm_i32x4_add(q4_dot8(wasm_u16x8_extend_low_u8x16(h), x + 32), q4_dot8(wasm_u16x8_extend_high_u8x16(h), x + 40))));
    }
    return wasm_i32x4_shuffle(v, v, 0, 2, 1, 3);
}
WF_INLINE int32_t q4_block(const uint8_t *p, const int8_t *x) {
    const v128_t q = wasm_v128_load(p), l = wasm_v128_and(q, wasm_i8x16_splat(15)), h = wasm_u8x16_shr(q, 4);
    const v128_t s = wasm_i32x4_add(wasm_i32x4_add(q4_dot8(wasm_u16x8_extend_low_u8x16(l), x), q4_dot8(wasm_u16x8_extend_high_u8x16(l), x + 8)),
                                    wasm_i32x4_add(q4_dot8(wasm_u16x8_extend_low_u8x16(h), x + 16), q4_dot8(wasm_u16x8_extend_high_u8x16(h), x + 24)));
    return q_hsum(s);
}
#endif

/* s = the row's dot: n . x over each block, less 8 xs (the nibbles' -8) */
static inline float wf_q4_row(const uint8_t *w, const int8_t *x, const float *xd, const int32_t *xs, int nb) {
    const uint8_t *scales = w + (size_t)nb * (WF_QK / 2);
    v128_t acc = wasm_f32x4_splat(0);
    int b = 0;
    for (; b + 4 <= nb; b += 4, w += 2 * WF_QK, x += 4 * WF_QK)
        acc = q_acc(acc, wasm_i32x4_sub(q4_group(w, x), wasm_i32x4_shl(wasm_v128_load(xs + b), 3)), scales + 2 * b, xd + b);
    if (nb - b >= 2) { /* the pair's 8 xs in lanes 0, 1 only: its sums fold lanes 2, 3 onto them */
        const v128_t s8 = wasm_i32x4_shl(wasm_v128_load64_zero(xs + b), 3);
        acc = q_acc2(acc, wasm_i32x4_sub(q4_pair(w, x), s8), scales + 2 * b, xd + b), b += 2, w += WF_QK, x += 2 * WF_QK;
    }
    const int32_t last = b < nb ? q4_block(w, x) - 8 * xs[b] : 0;
    return q_row_end(acc, &last, scales, xd, b, nb);
}

/* ---------------------------------------------------------------- AVX2 and AVX-512 */
#elif defined(WF_SIMD_AVX2) || defined(WF_SIMD_AVX512)

/* The fp16 scales of a group's four blocks (s: 8 bytes) as float lanes (F16C, which every
 * AVX2 CPU has; without it the exact conversion lane by lane). */
WF_INLINE __m128 q_f16x4(const uint8_t *s) {
#if defined(__F16C__)
    return _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)(const void *)s));
#else
    return _mm_setr_ps(wf_f16_to_f32(wf_q_scale_bits(s)), wf_f16_to_f32(wf_q_scale_bits(s + 2)),
                       wf_f16_to_f32(wf_q_scale_bits(s + 4)), wf_f16_to_f32(wf_q_scale_bits(s + 6)));
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
WF_INLINE __m256i q_load(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }

/* q . x of 32 int8 weights: |q| times sign(q) x; lane m of a packed group's 32 bytes is block m % 4's */
WF_INLINE __m256i q8_dot(const uint8_t *p, const int8_t *x) {
    const __m256i q = q_load(p);
    return q_dpbusd(_mm256_sign_epi8(q, q), _mm256_sign_epi8(q_load(x), q));
}
/* n . x of a block's 16 bytes of nibbles as they are: the low ones weights 0..15, the high 16..31 */
WF_INLINE __m256i q4_dot(const uint8_t *p, const int8_t *x) {
    const __m128i q = _mm_loadu_si128((const __m128i *)(const void *)p), m = _mm_set1_epi8(15);
    return q_dpbusd(_mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), m), _mm_and_si128(q, m)), q_load(x));
}
/* n . x of 32 bytes of nibbles: the low nibbles against x, the high ones against x + hi (a
 * group's: 32 of its 64 bytes, hi = 64; a pair's: all of its 32, hi = 32) */
WF_INLINE __m256i q4_dot32(const uint8_t *p, const int8_t *x, int hi) {
    const __m256i q = q_load(p), m = _mm256_set1_epi8(15);
    return _mm256_add_epi32(q_dpbusd(_mm256_and_si256(q, m), q_load(x)), q_dpbusd(_mm256_and_si256(_mm256_srli_epi16(q, 4), m), q_load(x + hi)));
}

WF_INLINE __m128i q_fold(__m256i v) { return _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)); }
WF_INLINE int32_t q_hsum(__m256i v) {
    const __m128i s = q_fold(v), t = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    return _mm_cvtsi128_si32(_mm_add_epi32(t, _mm_shuffle_epi32(t, 0xb1)));
}
WF_INLINE __m128 q_acc(__m128 acc, __m128i sums, const uint8_t *scales, const float *xd) {
    return _mm_add_ps(acc, _mm_mul_ps(_mm_cvtepi32_ps(sums), _mm_mul_ps(q_f16x4(scales), _mm_loadu_ps(xd))));
}
/* a pair's: its sums in lanes 0, 1 and 2, 3 folded, lanes 2, 3 adding a zero (the wasm q_acc2) */
WF_INLINE __m128 q_acc2(__m128 acc, __m128i sums, const uint8_t *scales, const float *xd) {
    const __m128 d = _mm_setr_ps(wf_f16_to_f32(wf_q_scale_bits(scales)), wf_f16_to_f32(wf_q_scale_bits(scales + 2)), 0, 0);
    const __m128 x = _mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)(const void *)xd));
    sums = _mm_add_epi32(sums, _mm_shuffle_epi32(sums, 0x4e));
    return _mm_add_ps(acc, _mm_mul_ps(_mm_cvtepi32_ps(sums), _mm_mul_ps(d, x)));
}
WF_INLINE float q_row_end(__m128 acc, const int32_t *tail, const uint8_t *scales, const float *xd, int b, int nb) {
    float a[4];
    _mm_storeu_ps(a, acc);
    return wf_q_finish(a, tail, scales, xd, b, nb);
}

static inline float wf_q8_row(const uint8_t *w, const int8_t *x, const float *xd, const int32_t *xs, int nb) {
    (void)xs;
    const uint8_t *scales = w + (size_t)nb * WF_QK;
    __m128 acc = _mm_setzero_ps();
    int b = 0;
    for (; b + 4 <= nb; b += 4, w += 4 * WF_QK, x += 4 * WF_QK) {
        const __m256i s = _mm256_add_epi32(_mm256_add_epi32(q8_dot(w, x), q8_dot(w + 32, x + 32)),
                                           _mm256_add_epi32(q8_dot(w + 64, x + 64), q8_dot(w + 96, x + 96)));
        acc = q_acc(acc, q_fold(s), scales + 2 * b, xd + b);
    }
    if (nb - b >= 2) acc = q_acc2(acc, q_fold(_mm256_add_epi32(q8_dot(w, x), q8_dot(w + 32, x + 32))), scales + 2 * b, xd + b), b += 2, w += 2 * WF_QK, x += 2 * WF_QK;
    const int32_t last = b < nb ? q_hsum(q8_dot(w, x)) : 0;
    return q_row_end(acc, &last, scales, xd, b, nb);
}

static inline float wf_q4_row(const uint8_t *w, const int8_t *x, const float *xd, const int32_t *xs, int nb) {
    const uint8_t *scales = w + (size_t)nb * (WF_QK / 2);
    __m128 acc = _mm_setzero_ps();
    int b = 0;
    for (; b + 4 <= nb; b += 4, w += 2 * WF_QK, x += 4 * WF_QK) {
        const __m128i s = q_fold(_mm256_add_epi32(q4_dot32(w, x, 64), q4_dot32(w + 32, x + 32, 64)));
        acc = q_acc(acc, _mm_sub_epi32(s, _mm_slli_epi32(_mm_loadu_si128((const __m128i *)(const void *)(xs + b)), 3)), scales + 2 * b, xd + b);
    }
    if (nb - b >= 2) { /* the pair's 8 xs in lanes 0, 1 only: its sums fold lanes 2, 3 onto them */
        const __m128i s8 = _mm_slli_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(xs + b)), 3);
        acc = q_acc2(acc, _mm_sub_epi32(q_fold(q4_dot32(w, x, 32)), s8), scales + 2 * b, xd + b), b += 2, w += WF_QK, x += 2 * WF_QK;
    }
    const int32_t last = b < nb ? q_hsum(q4_dot(w, x)) - 8 * xs[b] : 0;
    return q_row_end(acc, &last, scales, xd, b, nb);
}

/* ---------------------------------------------------------------- scalar */
#else

/* The reference's loops over the packed layout (quant.c's qdot_scalar reads the blocks back in
 * ggml's form instead). The int8 weights are read through an int8 pointer (see qdot_scalar). */
static inline float wf_q8_row(const uint8_t *w, const int8_t *x, const float *xd, const int32_t *xs, int nb) {
    (void)xs;
    const int8_t *q = (const int8_t *)(const void *)w;
    float a[4] = {0, 0, 0, 0};
    for (int b = 0; b < nb; b++) {
        int32_t sum = 0;
        for (int j = 0; j < WF_QK; j++) {
            const size_t at = wf_qpos((size_t)nb, (size_t)b, (size_t)j, WF_QK);
            sum += q[at] * x[at];
        }
        a[b & 3] += (float)sum * (wf_f16_to_f32(wf_q_scale_bits(w + (size_t)nb * WF_QK + 2 * b)) * xd[b]);
    }
    return (a[0] + a[1]) + (a[2] + a[3]);
}

static inline float wf_q4_row(const uint8_t *w, const int8_t *x, const float *xd, const int32_t *xs, int nb) {
    (void)xs;
    float a[4] = {0, 0, 0, 0};
    for (int b = 0; b < nb; b++) {
        int32_t sum = 0;
        for (int j = 0; j < 16; j++) {
            const uint8_t n = w[wf_qpos((size_t)nb, (size_t)b, (size_t)j, 16)];
            sum += ((n & 15) - 8) * x[wf_qpos((size_t)nb, (size_t)b, (size_t)j, WF_QK)] +
                   ((n >> 4) - 8) * x[wf_qpos((size_t)nb, (size_t)b, (size_t)j + 16, WF_QK)];
        }
        a[b & 3] += (float)sum * (wf_f16_to_f32(wf_q_scale_bits(w + (size_t)nb * 16 + 2 * b)) * xd[b]);
    }
    return (a[0] + a[1]) + (a[2] + a[3]);
}
#endif

#if !defined(WF_Q8_SPLIT) /* the activations as they are */
#define WF_Q8_SPLIT 0
static inline void wf_q8_split(int8_t *xpm, const int8_t *x, int K) { (void)xpm, (void)x, (void)K; }
#endif

#endif /* WF_QSIMD_H */
