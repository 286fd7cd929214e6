/* Quantized weights (src/quant.c, src/qsimd.h): fp16 conversion, ggml's Q8_0 and Q4_0
 * quantizers, the rows packed for the kernels (qsimd.h's layout, byte for byte, and back to
 * ggml's blocks), and the linear layer on blocks: the fast (generation) path's SIMD kernels
 * against their scalar reference, bit for bit, and across thread counts; the exact path against
 * the float linear layer on the dequantized weights (bit for bit); and the fast path's activation
 * quantization against the exact product. Built for every backend: natively (AVX-512 with
 * VNNI where the CPU has it, test_quant_avx2 the AVX2 one, test_quant_portable the scalar
 * one) and in wasm (./build.sh tests: simd128; relaxed-tests: relaxed SIMD's integer dot).
 * The exact path's tolerance against the scalar float layer is tests/test_simd.c's: 2e-5 of
 * the largest value between two orders of the same sums. */
#include <stdlib.h>

#include "check.h"
#include "model.h"
#include "qsimd.h"

#if defined(WF_DOUBLE)
#error "test_quant compares the float build's kernels"
#endif

#define TOL 2e-5

static wf_rng rng;
static double worst_seen = 0;

static float *randv(size_t n, double scale) {
    float *x = wf_alloc(n ? n : 1, sizeof(float));
    for (size_t i = 0; i < n; i++) x[i] = (float)(scale * wf_rng_normal(&rng));
    return x;
}

static double rel_error(const float *a, const float *ref, size_t n, size_t *at) {
    double scale = 0, worst = 0;
    for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(ref[i]));
    for (size_t i = 0; i < n; i++) {
        const double e = fabs((double)a[i] - ref[i]);
        if (!(e <= worst)) worst = e, *at = i;
    }
    return worst / fmax(scale, 1e-6);
}

static void compare(const char *what, const float *fast, const float *ref, size_t n, double tol) {
    size_t at = 0;
    const double rel = rel_error(fast, ref, n, &at);
    if (tol == TOL && rel > worst_seen) worst_seen = rel;
    CHECK(rel <= tol, "%s: element %zu %.9g, reference %.9g (relative error %.3g)", what, at, fast[at], ref[at], rel);
}

/* ---- fp16: every value round-trips; halfway points go to the even neighbour ---- */
static void test_f16(void) {
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7c00) == 0x7c00) continue; /* inf, NaN */
        const float f = wf_f16_to_f32((uint16_t)h);
        bad += wf_f32_to_f16(f) != h;
        /* the next fp16 up (same sign): the midpoint is exact in float and rounds to even */
        const uint32_t up = h + 1;
        if ((up & 0x7fff) == 0 || (up & 0x7c00) == 0x7c00) continue;
        const float g = wf_f16_to_f32((uint16_t)up), mid = (f + g) / 2;
        bad += wf_f32_to_f16(mid) != ((h & 1) ? up : h);
        bad += wf_f32_to_f16(nextafterf(mid, g)) != up || wf_f32_to_f16(nextafterf(mid, f)) != h;
    }
    CHECK(bad == 0, "fp16: %d conversions wrong", bad);
    CHECK(wf_f16_to_f32(0x3c00) == 1.0f && wf_f16_to_f32(0xc000) == -2.0f && wf_f16_to_f32(0x0001) == 0x1p-24f &&
              wf_f16_to_f32(0x7bff) == 65504.0f,
          "fp16 constants");
    CHECK(wf_f32_to_f16(65519.0f) == 0x7bff && wf_f32_to_f16(65520.0f) == 0x7c00 && wf_f32_to_f16(-1e9f) == 0xfc00 &&
              wf_f32_to_f16(1e-9f) == 0 && wf_f32_to_f16(INFINITY) == 0x7c00,
          "fp16 overflow and underflow");
}

/* ---- the quantizers: ggml's rules, checked on their own terms ---- */
static void test_quantize(int type, size_t blocks) {
    const char *name = type == WF_QUANT_Q8_0 ? "Q8_0" : "Q4_0";
    const size_t n = 32 * blocks; /* groups of four, then a last block or a pair (qsimd.h) */
    float *x = randv(n, 1), *y = wf_alloc(n, sizeof(float)), *z = wf_alloc(n, sizeof(float));
    for (int j = 0; j < 32; j++) x[32 + j] = 0;       /* an all-zero block: d = 0 */
    x[64 + 5] = 1e4f;                                 /* one block ruled by a single value */
    uint8_t *q = wf_alloc(wf_quant_row_bytes(type, n), 1), *q8 = wf_alloc(wf_quant_row_bytes(WF_QUANT_Q8_0, n), 1);
    CHECK(wf_quant_row_bytes(type, n) == n / 32 * (type == WF_QUANT_Q8_0 ? 34u : 18u), "%s: block bytes", name);
    wf_quantize_row(q, x, n, type);
    wf_dequantize_row(y, q, n, type);
    const size_t bytes = wf_quant_block_bytes(type);
    uint8_t *g = wf_alloc(wf_quant_row_bytes(type, n), 1); /* the row as ggml's blocks, in order */
    for (size_t b = 0; b < n / 32; b++) wf_quant_block_ggml(g + b * bytes, q, n, b, type);
    int bad = 0;
    for (size_t b = 0; b < n / 32; b++) {
        const float *xb = x + 32 * b;
        float amax = 0, m = 0;
        for (int j = 0; j < 32; j++)
            if (fabsf(xb[j]) > amax) amax = fabsf(xb[j]), m = xb[j];
        const float d = type == WF_QUANT_Q8_0 ? amax / 127 : m / -8;
        const uint16_t h = wf_q_scale_bits(g + b * bytes);
        bad += h != wf_f32_to_f16(d); /* the scale, rounded to fp16 */
        const float dq = wf_f16_to_f32(h);
        for (int j = 0; j < 32; j++) {
            /* Q8_0 rounds to the nearest step; Q4_0 too, but for the far end of the range
             * (-m: 8 steps up, clamped to 7): at most a step. Plus the scale's fp16 rounding
             * times the level (127 or 8 steps of 2^-11). */
            const double err = fabs((double)xb[j] - y[32 * b + j]);
            const double bound = type == WF_QUANT_Q8_0 ? 0.5 * fabs(d) + 127 * fabs(d - dq) : fabs(d) + 8 * fabs(d - dq);
            bad += !(err <= bound * (1 + 1e-6) + 1e-30);
        }
        if (type == WF_QUANT_Q4_0 && amax > 0) /* the value of largest magnitude is the range's end, -8 d */
            for (int j = 0; j < 32; j++) bad += xb[j] == m && y[32 * b + j] != -8 * dq;
    }
    CHECK(bad == 0, "%s: %d blocks or values off", name, bad);
    CHECK(y[32] == 0 && y[63] == 0, "%s: a zero block stays zero", name);
    /* the packed row is qsimd.h's layout, byte for byte, and packs back from ggml's blocks */
    const size_t qb = bytes - 2, nb = n / 32;
    for (size_t b = 0; b < nb; b++) {
        bad += q[nb * qb + 2 * b] != g[b * bytes] || q[nb * qb + 2 * b + 1] != g[b * bytes + 1];
        for (size_t j = 0; j < qb; j++) bad += q[wf_qpos(nb, b, j, qb)] != g[b * bytes + 2 + j];
    }
    CHECK(bad == 0, "%s: %d bytes not where qsimd.h's wf_qpos puts them", name, bad);
    uint8_t *back = wf_alloc(wf_quant_row_bytes(type, n), 1);
    wf_quant_pack_row(back, type, g, type, n);
    CHECK(!memcmp(back, q, wf_quant_row_bytes(type, n)), "%s: ggml's blocks pack to the same row", name);
    wf_dequantize_blocks(z, g, n, type);
    CHECK(!memcmp(y, z, n * sizeof(float)), "%s: ggml's blocks hold the same values", name);
    wf_free(back);
    if (type == WF_QUANT_Q4_0) { /* Q4_0 to Q8_0 is exact */
        wf_q4_to_q8_row(q8, q, n);
        wf_dequantize_row(z, q8, n, WF_QUANT_Q8_0);
        CHECK(!memcmp(y, z, n * sizeof(float)), "Q4_0 as Q8_0: the same values");
    }
    CHECK(wf_quant_check_row(g, n, type) == -1, "%s: finite scales pass", name);
    const uint8_t kept = g[bytes * 3 + 1];
    g[bytes * 3 + 1] = 0x7c; /* block 3's scale: inf */
    CHECK(wf_quant_check_row(g, n, type) == 3, "%s: an inf scale is found", name);
    if (type == WF_QUANT_Q4_0) { /* a file's Q4_0 blocks packed as Q8_0: the same values */
        g[bytes * 3 + 1] = kept;
        wf_quant_pack_row(q8, WF_QUANT_Q8_0, g, WF_QUANT_Q4_0, n);
        wf_dequantize_row(z, q8, n, WF_QUANT_Q8_0);
        wf_dequantize_row(y, q, n, type);
        CHECK(!memcmp(y, z, n * sizeof(float)), "Q4_0 blocks packed as Q8_0: the same values");
    }
    wf_free(x), wf_free(y), wf_free(z), wf_free(q), wf_free(q8), wf_free(g);
}

/* ---- the linear layer on blocks ---- */
static void test_qlinear(int type, int N, int C, int OC, int bias, wf_pool *pool) {
    char what[128];
    const char *name = type == WF_QUANT_Q8_0 ? "Q8_0" : "Q4_0";
    float *wf = randv((size_t)OC * C, 0.2), *x = randv((size_t)N * C, 1), *b = bias ? randv(OC, 1) : NULL;
    const size_t rb = wf_quant_row_bytes(type, (size_t)C);
    uint8_t *w = wf_alloc(rb, (size_t)OC);
    for (int o = 0; o < OC; o++) wf_quantize_row(w + o * rb, wf + (size_t)o * C, (size_t)C, type);
    for (int o = 0; o < OC; o++) wf_dequantize_row(wf + (size_t)o * C, w + o * rb, (size_t)C, type); /* the values held */
    void *scratch = wf_alloc(wf_qlinear_scratch(C), 1);
    float *fast = randv((size_t)N * OC, 1), *ref = randv((size_t)N * OC, 1), *exact = randv((size_t)N * OC, 1);
    float *flt = randv((size_t)N * OC, 1), *threaded = randv((size_t)N * OC, 1);

    /* the fast path: SIMD against scalar, then threads against one */
    if (N <= 32) {
        wf_qlinear_forward(fast, x, w, type, b, N, C, OC, 1, scratch, NULL);
        wf_qlinear_forward_scalar(ref, x, w, type, b, N, C, OC, scratch);
        snprintf(what, sizeof what, "%s fast N=%d C=%d OC=%d", name, N, C, OC);
        CHECK(!memcmp(fast, ref, (size_t)N * OC * sizeof(float)), "%s: not the scalar reference's bits", what);
        wf_qlinear_forward(threaded, x, w, type, b, N, C, OC, 1, scratch, pool);
        CHECK(!memcmp(threaded, fast, (size_t)N * OC * sizeof(float)), "%s: threads change the result", what);
    }
    /* the exact path: the float layer on the dequantized weights, bit for bit (the same
     * kernels on chunks of w's rows), and close to the scalar reference */
    wf_qlinear_forward(exact, x, w, type, b, N, C, OC, 0, scratch, pool);
    wf_linear_forward(flt, x, wf, b, N, C, OC, pool);
    snprintf(what, sizeof what, "%s exact N=%d C=%d OC=%d", name, N, C, OC);
    CHECK(!memcmp(exact, flt, (size_t)N * OC * sizeof(float)), "%s: not the float layer's bits", what);
    wf_linear_forward_scalar(flt, x, wf, b, N, C, OC);
    compare(what, exact, flt, (size_t)N * OC, TOL);
    /* the fast path quantizes its activations to 8 bits: close to exact, not equal */
    if (N <= 32) {
        snprintf(what, sizeof what, "%s fast vs exact N=%d C=%d OC=%d", name, N, C, OC);
        compare(what, fast, exact, (size_t)N * OC, 0.03);
    }
    /* backward: dinp += dout w, onto a non-zero gradient */
    float *dout = randv((size_t)N * OC, 1), *dx = randv((size_t)N * C, 1), *dx_ref = wf_alloc((size_t)N * C, sizeof(float));
    memcpy(dx_ref, dx, (size_t)N * C * sizeof(float));
    float *dx_flt = wf_alloc((size_t)N * C, sizeof(float));
    memcpy(dx_flt, dx, (size_t)N * C * sizeof(float));
    wf_qlinear_backward(dx, dout, w, type, N, C, OC, scratch, pool);
    wf_linear_backward(dx_flt, NULL, NULL, dout, x, wf, N, C, OC, pool);
    snprintf(what, sizeof what, "%s backward N=%d C=%d OC=%d", name, N, C, OC);
    CHECK(!memcmp(dx, dx_flt, (size_t)N * C * sizeof(float)), "%s: not the float layer's bits", what);
    wf_linear_backward_scalar(dx_ref, NULL, NULL, dout, x, wf, N, C, OC);
    compare(what, dx, dx_ref, (size_t)N * C, TOL);
    wf_free(dx_flt);
    wf_free(wf), wf_free(x), wf_free(b), wf_free(w), wf_free(scratch), wf_free(fast), wf_free(ref), wf_free(exact);
    wf_free(flt), wf_free(threaded), wf_free(dout), wf_free(dx), wf_free(dx_ref);
}

static void test_qembed(int type) {
    const int V = 50, C = 64, B = 2, T = 5;
    float *wte = randv((size_t)V * C, 1), *pos = randv((size_t)T * C, 1);
    const size_t rb = wf_quant_row_bytes(type, C);
    uint8_t *q = wf_alloc(rb, (size_t)V);
    for (int v = 0; v < V; v++) wf_quantize_row(q + v * rb, wte + (size_t)v * C, C, type);
    for (int v = 0; v < V; v++) wf_dequantize_row(wte + (size_t)v * C, q + v * rb, C, type);
    int32_t ids[10];
    for (int i = 0; i < B * T; i++) ids[i] = (i * 17 + 3) % V;
    float out[10 * 64], ref[10 * 64];
    wf_qembed_forward(out, ids, q, type, pos, B, T, C);
    wf_embed_forward(ref, ids, wte, pos, B, T, C);
    CHECK(!memcmp(out, ref, sizeof out), "embedding on blocks: the float embedding of the dequantized rows");
    wf_free(wte), wf_free(pos), wf_free(q);
}

/* The integer dots' extremes: Q8_0 weights of -128 and 127 (ggml's quantizer never writes
 * -128; a file may hold it) against activations at +-127, so every pair of products sits at
 * the int16 limits of the SIMD dots (x86's pmaddubsw saturates beyond them): the fast path
 * must still give the scalar reference's bits, on blocks four at a time and one by one; and
 * activations on rounding's ties, which the SIMD quantizers must round as roundf does. */
static void test_q8_extremes(void) {
    const int N = 2, C = 7 * WF_QK, OC = 6;
    const size_t rb = wf_quant_row_bytes(WF_QUANT_Q8_0, C);
    uint8_t *w = wf_alloc(rb, OC), *g = wf_alloc(rb, 1);
    float *x = randv((size_t)N * C, 1), *fast = randv((size_t)N * OC, 1), *ref = randv((size_t)N * OC, 1);
    for (int o = 0; o < OC; o++)
        for (int b = 0; b < C / WF_QK; b++) {
            uint8_t *blk = g + b * WF_Q8_BYTES; /* ggml's blocks, packed below */
            blk[0] = 0x00, blk[1] = (uint8_t)(0x3c ^ (o & 1) << 7); /* scale +-1 */
            for (int j = 0; j < WF_QK; j++) blk[2 + j] = (uint8_t)((o + b + j / 2) % 3 ? -128 : 127);
            if (b == C / WF_QK - 1) wf_quant_pack_row(w + o * rb, WF_QUANT_Q8_0, g, WF_QUANT_Q8_0, C);
        }
    /* row 0: +-1, which quantize to +-127; row 1: blocks of scale 1 (127 first) whose values
     * are halves, roundf's ties (away from zero), and 0.5 less an ulp on either side */
    for (int i = 0; i < C; i++) {
        const int j = i % WF_QK;
        x[i] = (i / 2) % 2 ? 1.0f : -1.0f;
        x[C + i] = j == 0 ? 127.0f : j == 1 ? 0.49999997f : j == 2 ? -0.49999997f : (float)(j - 16) + 0.5f;
    }
    void *scratch = wf_alloc(wf_qlinear_scratch(C), 1);
    wf_qlinear_forward(fast, x, w, WF_QUANT_Q8_0, NULL, N, C, OC, 1, scratch, NULL);
    wf_qlinear_forward_scalar(ref, x, w, WF_QUANT_Q8_0, NULL, N, C, OC, scratch);
    CHECK(!memcmp(fast, ref, (size_t)N * OC * sizeof(float)), "Q8_0 extremes: not the scalar reference's bits");
    float big = 0;
    for (int i = 0; i < N * OC; i++) big = fmaxf(big, fabsf(ref[i]));
    CHECK(big > 100, "Q8_0 extremes: the sums are large (%g)", (double)big);
    wf_free(w), wf_free(g), wf_free(x), wf_free(fast), wf_free(ref), wf_free(scratch);
}

int main(void) {
    wf_rng_seed(&rng, 11);
    printf("test_quant: kernels built for %s\n", wf_simd_name());
    wf_pool *pool = NULL;
#if defined(WF_THREADS)
    CHECK(wf_pool_start(&pool, 2, WF_POOL_WAIT) == WF_OK, "could not start a pool of 2 threads");
#endif
    test_f16();
    test_q8_extremes();
    /* decoding (N = 1) over a tile and its tail, a prompt pass (up to 32 rows), the SmolLM
     * shape's widths (576, 1536) and a vocabulary's worth of rows; beyond 32 rows the exact
     * path alone, over several QCHUNKs */
    static const int shapes[][3] = {{1, 32, 4},   {1, 64, 7},     {1, 576, 9},   {2, 96, 5},   {3, 160, 13},
                                    {17, 64, 35}, {32, 576, 192}, {1, 1536, 576}, {5, 576, 3000}, {1, 576, 49},
                                    {40, 96, 300}, {300, 64, 130}, {2, 224, 6}};
    for (int type = WF_QUANT_Q8_0; type <= WF_QUANT_Q4_0; type++) {
        test_quantize(type, 37), test_quantize(type, 38);
        test_qembed(type);
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            test_qlinear(type, shapes[i][0], shapes[i][1], shapes[i][2], (int)(i % 2), pool);
    }
    wf_pool_free(pool);
    printf("test_quant: worst relative difference %.2e (tolerance %.0e)\n", worst_seen, TOL);
    return check_summary("test_quant");
}
