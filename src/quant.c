/* Quantized weights (ops.h): ggml's Q8_0 and Q4_0 blocks (qsimd.h spells the layout), the
 * rows' quantization, and the linear layer and embedding on them. Quantized weights never
 * train, so the op has no weight gradient:
 *   out = inp w^T + b;  dinp += dout w        w [OC, C] in blocks along C, b [OC] (may be NULL)
 * The model holds the rows packed for the kernels (qsimd.h spells both layouts); files hold
 * ggml's blocks, converted here at the boundary (wf_quant_pack_row, wf_quant_block_ggml).
 * Two ways to the product, both reading the blocks in place (no f32 copy of w is kept):
 *   exact  (training, evaluation, any number of rows) rows of w dequantized, QCHUNK at a time,
 *          into a scratch, then the float matrix multiply (wf_matmul) on them: the result is
 *          the float model's holding the dequantized values, up to the order of the sums;
 *   fast   (generation: a prompt's passes of up to 32 rows and each new token) each input
 *          row quantized as ggml quantizes activations (int8, a float scale per block of 32),
 *          then integer dot products per block (qsimd.h), a weight row at a time against
 *          every input row while it sits in L1. wf_qlinear_forward_scalar is its reference. */
#include "ops.h"
#include "qsimd.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
/* Weight rows dequantized per product of the exact path: the matrix multiply's depth, so that
 * backward's chunks of the sum over w's rows are its own KC slices (each output adds the same
 * partial sums in the same order as the float layer's product: bit for bit its results) */
#define QCHUNK WF_KC
#define FAST_ROWS 32 /* the most input rows of the fast path (a prompt pass, WF_GEN_ROWS) */

/* ---- fp16 ---- */

/* float to fp16, rounding to nearest even: subnormal results through a float addition (the
 * FPU rounds), normal ones by rebiasing the exponent and rounding the 13 dropped bits. */
uint16_t wf_f32_to_f16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    const uint32_t sign = (u >> 16) & 0x8000u;
    u &= 0x7fffffffu;
    if (u >= 0x47800000u) return (uint16_t)(sign | (u > 0x7f800000u ? 0x7e00u : 0x7c00u)); /* >= 65536, inf, NaN */
    if (u < 0x38800000u) { /* below 2^-14: a subnormal fp16; 0.5 + x puts x's 2^-24 units in the low bits */
        float x, magic = 0.5f;
        memcpy(&x, &u, 4);
        x += magic;
        uint32_t r;
        memcpy(&r, &x, 4);
        return (uint16_t)(sign | (r - 0x3f000000u));
    }
    const uint32_t odd = (u >> 13) & 1u; /* ties go to the even mantissa */
    u += 0xc8000fffu + odd;              /* exponent 127 -> 15 bias, plus half a unit less one */
    return (uint16_t)(sign | (u >> 13));
}

/* ---- rows ---- */

size_t wf_quant_block_bytes(int type) { return type == WF_QUANT_Q8_0 ? WF_Q8_BYTES : WF_Q4_BYTES; }
size_t wf_quant_row_bytes(int type, size_t n) {
    return type == WF_QUANT_F32 ? n * 4 : n / WF_QK * wf_quant_block_bytes(type);
}

/* Block b of a packed row of nb blocks (qsimd.h's wf_qpos): its quant bytes come four at a
 * time, step bytes apart (16 inside a group of four blocks, 8 in the pair after them, 4 in a
 * last block). */
static size_t block_at(size_t nb, size_t b, size_t qb, size_t *step) {
    const size_t g = nb & ~(size_t)3;
    *step = b < g ? 16 : b < g + 2 && nb - g >= 2 ? 8 : 4;
    return *step == 16 ? (b & ~(size_t)3) * qb + (b & 3) * 4 : *step == 8 ? g * qb + (b - g) * 4 : b * qb;
}

/* Block b of a packed row as ggml's block, and back */
static void get_block(uint8_t *blk, const uint8_t *row, size_t nb, size_t b, int type) {
    const size_t qb = wf_quant_block_bytes(type) - 2;
    size_t step;
    const uint8_t *p = row + block_at(nb, b, qb, &step);
    blk[0] = row[nb * qb + 2 * b], blk[1] = row[nb * qb + 2 * b + 1];
    for (size_t c = 0; c < qb / 4; c++) memcpy(blk + 2 + 4 * c, p + c * step, 4);
}
static void put_block(uint8_t *row, size_t nb, size_t b, int type, const uint8_t *blk) {
    const size_t qb = wf_quant_block_bytes(type) - 2;
    size_t step;
    uint8_t *p = row + block_at(nb, b, qb, &step);
    row[nb * qb + 2 * b] = blk[0], row[nb * qb + 2 * b + 1] = blk[1];
    for (size_t c = 0; c < qb / 4; c++) memcpy(p + c * step, blk + 2 + 4 * c, 4);
}

void wf_quant_block_ggml(uint8_t *blk, const uint8_t *row, size_t n, size_t b, int type) { get_block(blk, row, n / WF_QK, b, type); }

/* ggml's Q4_0 block as the Q8_0 block of the same values: the same scale */
static void q4_to_q8(uint8_t *q8, const uint8_t *q4) {
    q8[0] = q4[0], q8[1] = q4[1];
    for (int j = 0; j < 16; j++) {
        q8[2 + j] = (uint8_t)(int8_t)((q4[2 + j] & 15) - 8);
        q8[18 + j] = (uint8_t)(int8_t)((q4[2 + j] >> 4) - 8);
    }
}

void wf_quant_pack_row(uint8_t *dst, int type, const uint8_t *ggml, int from, size_t n) {
    uint8_t q8[WF_Q8_BYTES];
    for (size_t b = 0; b < n / WF_QK; b++, ggml += wf_quant_block_bytes(from)) {
        if (from != type) q4_to_q8(q8, ggml); /* the one conversion the loaders make: Q4_0 parts of a Q8_0 tensor */
        put_block(dst, n / WF_QK, b, type, from != type ? q8 : ggml);
    }
}

static void put_scale(uint8_t *block, float d) {
    const uint16_t h = wf_f32_to_f16(d);
    block[0] = (uint8_t)h, block[1] = (uint8_t)(h >> 8);
}

/* ggml's reference quantizers. Q8_0: d = max|x| / 127, q = round(x / d). Q4_0: d = m / -8
 * for the value m of largest magnitude (so m itself is -8 d, the end of the range with the
 * extra step), q = min(15, trunc(x / d + 8.5)). Both divide by the unrounded d and store
 * it as fp16, as ggml does. Each block is made in ggml's form, then placed. */
void wf_quantize_row(uint8_t *row, const wf_real *x, size_t n, int type) {
    uint8_t q[WF_Q8_BYTES];
    for (size_t b = 0; b < n / WF_QK; b++, x += WF_QK) {
        if (type == WF_QUANT_Q8_0) {
            float amax = 0;
            for (int j = 0; j < WF_QK; j++) amax = fmaxf(amax, fabsf((float)x[j]));
            const float d = amax / 127, id = d != 0 ? 1 / d : 0;
            put_scale(q, d);
            for (int j = 0; j < WF_QK; j++) q[2 + j] = (uint8_t)(int8_t)roundf((float)x[j] * id);
        } else {
            float amax = 0, m = 0;
            for (int j = 0; j < WF_QK; j++)
                if (fabsf((float)x[j]) > amax) amax = fabsf((float)x[j]), m = (float)x[j];
            const float d = m / -8, id = d != 0 ? 1 / d : 0;
            put_scale(q, d);
            for (int j = 0; j < 16; j++) {
                const int lo = (int)((float)x[j] * id + 8.5f), hi = (int)((float)x[j + 16] * id + 8.5f);
                q[2 + j] = (uint8_t)(MIN(15, lo) | MIN(15, hi) << 4);
            }
        }
        put_block(row, n / WF_QK, b, type, q);
    }
}

static void dequantize_block(wf_real *x, const uint8_t *q, int type) {
    const float d = wf_f16_to_f32(wf_q_scale_bits(q));
    if (type == WF_QUANT_Q8_0) {
        const int8_t *v = (const int8_t *)(const void *)(q + 2);
        for (int j = 0; j < WF_QK; j++) x[j] = d * (float)v[j];
    } else {
        for (int j = 0; j < 16; j++) {
            x[j] = d * (float)((q[2 + j] & 15) - 8);
            x[j + 16] = d * (float)((q[2 + j] >> 4) - 8);
        }
    }
}

/* read in place (QLoRA and evaluation dequantize every row of a chunk per product) */
void wf_dequantize_row(wf_real *x, const uint8_t *row, size_t n, int type) {
    const size_t nb = n / WF_QK, qb = wf_quant_block_bytes(type) - 2;
    size_t b = 0;
#if defined(WF_Q_DEQUANT_SIMD) /* qsimd.h's, the same values */
    for (; b + 4 <= nb; b += 4, x += 4 * WF_QK) {
        float d[4];
        for (int k = 0; k < 4; k++) d[k] = wf_f16_to_f32(wf_q_scale_bits(row + nb * qb + 2 * (b + k)));
        wf_q_dequant_group(x, row + b * qb, d, type == WF_QUANT_Q8_0);
    }
#endif
    for (size_t step; b < nb; b++, x += WF_QK) {
        const uint8_t *p = row + block_at(nb, b, qb, &step);
        const float d = wf_f16_to_f32(wf_q_scale_bits(row + nb * qb + 2 * b));
        if (type == WF_QUANT_Q8_0) {
            for (int c = 0; c < 8; c++, p += step)
                for (int i = 0; i < 4; i++) x[4 * c + i] = d * (float)(int8_t)p[i];
        } else {
            for (int c = 0; c < 4; c++, p += step)
                for (int i = 0; i < 4; i++) x[4 * c + i] = d * (float)((p[i] & 15) - 8), x[4 * c + i + 16] = d * (float)((p[i] >> 4) - 8);
        }
    }
}

void wf_dequantize_blocks(wf_real *x, const uint8_t *q, size_t n, int type) {
    for (size_t b = 0; b < n / WF_QK; b++, x += WF_QK, q += wf_quant_block_bytes(type)) dequantize_block(x, q, type);
}

void wf_q4_to_q8_row(uint8_t *q8, const uint8_t *q4, size_t n) {
    uint8_t a[WF_Q4_BYTES], b8[WF_Q8_BYTES];
    for (size_t b = 0; b < n / WF_QK; b++) {
        get_block(a, q4, n / WF_QK, b, WF_QUANT_Q4_0);
        q4_to_q8(b8, a);
        put_block(q8, n / WF_QK, b, WF_QUANT_Q8_0, b8);
    }
}

int64_t wf_quant_check_row(const uint8_t *q, size_t n, int type) {
    const size_t bytes = wf_quant_block_bytes(type);
    for (size_t b = 0; b < n / WF_QK; b++, q += bytes)
        if ((wf_q_scale_bits(q) & 0x7c00) == 0x7c00) return (int64_t)b;
    return -1;
}

/* ---- the fast path: quantized activations ---- */

/* Row x [K] as int8 q [K], a scale d and the values' sum s per block of 32: d = max|x| / 127,
 * q = round(x / d), so that x ~ d q. */
static void quantize_acts(int8_t *q, float *d, int32_t *s, const wf_real *x, int K) {
    for (int b = 0; b < K / WF_QK; b++, x += WF_QK, q += WF_QK) {
        float amax = 0;
        for (int j = 0; j < WF_QK; j++) amax = fmaxf(amax, fabsf((float)x[j]));
        const float scale = amax / 127, inv = scale != 0 ? 1 / scale : 0;
        int32_t sum = 0;
        for (int j = 0; j < WF_QK; j++) {
            /* clamped (the largest may round to 127.00001); activations that overflowed (inf,
             * NaN: a hostile model's) quantize to 0 beside a non-finite scale: the output is NaN,
             * as the float product's would be */
            const float v = (float)x[j] * inv, c = v > 127 ? 127 : v < -127 ? -127 : v;
            sum += q[j] = (int8_t)(c == c ? roundf(c) : 0);
        }
        d[b] = scale;
        s[b] = sum;
    }
}

/* Where the quantized activations of N rows of K sit in the scratch: q as quantize_acts
 * leaves them, x packed as the weights' quants are (qsimd.h), pm x's split for the Q8_0 kernel
 * where it takes one (qsimd.h's wf_q8_split, [N, 2 K]), each 16-byte aligned. */
typedef struct {
    int8_t *q, *x, *pm;
    float *d;
    int32_t *s;
} qacts;

static qacts acts_in(void *scratch, int N, int K) {
    const size_t NK = (size_t)N * K;
    qacts a = {.q = scratch};
    a.x = a.q + NK;
    a.pm = a.x + NK;
    a.d = (float *)(void *)(a.pm + (WF_Q8_SPLIT ? 2 * NK : 0));
    a.s = (int32_t *)(void *)(a.d + NK / WF_QK);
    return a;
}

/* x [K] in the weights' packed order: each block's bytes where its quants lie in a row */
static void pack_acts(int8_t *x, const int8_t *q, int K) {
    const size_t nb = (size_t)K / WF_QK;
    for (size_t b = 0, step; b < nb; b++) {
        const size_t at = block_at(nb, b, WF_QK, &step);
        for (size_t c = 0; c < WF_QK / 4; c++) memcpy(x + at + c * step, q + WF_QK * b + 4 * c, 4);
    }
}

/* The reference of qsimd.h's row dots, on the blocks read back in ggml's form and x as
 * quantize_acts leaves it: the integer sums exact, their float products added in four
 * lanes by block number mod 4 (a group's blocks, one to a SIMD lane), then the lanes. */
static float qdot_scalar(const uint8_t *w, int type, const int8_t *x, const float *xd, int nb) {
    float a[4] = {0, 0, 0, 0};
    uint8_t blk[WF_Q8_BYTES];
    for (int b = 0; b < nb; b++, x += WF_QK) {
        get_block(blk, w, (size_t)nb, (size_t)b, type);
        int32_t sum = 0;
        /* the weights read as int8 through an int8 pointer: gcc 12.2 at -O3 with AVX-512 VNNI
         * vectorizes (int8_t)w[j] * x[j] on a uint8 w into vpdpbusd as if w were unsigned */
        const int8_t *q = (const int8_t *)(const void *)(blk + 2);
        if (type == WF_QUANT_Q8_0)
            for (int j = 0; j < WF_QK; j++) sum += q[j] * x[j];
        else
            for (int j = 0; j < 16; j++) sum += ((blk[2 + j] & 15) - 8) * x[j] + ((blk[2 + j] >> 4) - 8) * x[j + 16];
        a[b & 3] += (float)sum * (wf_f16_to_f32(wf_q_scale_bits(blk)) * xd[b]);
    }
    return (a[0] + a[1]) + (a[2] + a[3]);
}

typedef struct {
    wf_real *out;
    const uint8_t *w;
    size_t rb;
    const wf_real *b;
    qacts a;
    int type, N, K, OC, rows_per_task;
} fast_job;

/* Output columns [rows_per_task task, ...) for every input row: a weight row at a time (V8
 * streams one row's loads much faster than four interleaved: bench/studies/decode-ab.mjs),
 * against each input row in turn while it sits in L1. */
static void fast_task(void *ctx, int task) {
    const fast_job *j = ctx;
    const int nb = j->K / WF_QK, begin = task * j->rows_per_task, end = MIN(j->OC, begin + j->rows_per_task);
    for (int o = begin; o < end; o++) {
        const uint8_t *w = j->w + (size_t)o * j->rb;
        for (int n = 0; n < j->N; n++) {
            const float *xd = j->a.d + (size_t)n * nb;
            const int32_t *xs = j->a.s + (size_t)n * nb;
            const float s = j->type == WF_QUANT_Q8_0
                                ? wf_q8_row(w, WF_Q8_SPLIT ? j->a.pm + (size_t)n * 2 * j->K : j->a.x + (size_t)n * j->K, xd, xs, nb)
                                : wf_q4_row(w, j->a.x + (size_t)n * j->K, xd, xs, nb);
            j->out[(size_t)n * j->OC + o] = j->b ? j->b[o] + s : s;
        }
    }
}

static void fast_forward(wf_real *out, const wf_real *inp, const uint8_t *w, int type, const wf_real *b, int N,
                         int C, int OC, void *scratch, wf_pool *pool) {
    const qacts a = acts_in(scratch, N, C);
    for (int n = 0; n < N; n++) {
        int8_t *q = a.q + (size_t)n * C, *x = a.x + (size_t)n * C;
        float *d = a.d + (size_t)n * (C / WF_QK);
        int32_t *s = a.s + (size_t)n * (C / WF_QK);
#if defined(WF_QACTS_SIMD) /* qsimd.h's, the same bits */
        wf_quantize_acts(q, d, s, inp + (size_t)n * C, C);
#else
        quantize_acts(q, d, s, inp + (size_t)n * C, C);
#endif
        pack_acts(x, q, C);
        if (WF_Q8_SPLIT && type == WF_QUANT_Q8_0) wf_q8_split(a.pm + (size_t)n * 2 * C, x, C);
    }
    /* as the float kernel (linear.c): below ~1 MFLOP one task on the caller, else three a thread */
    const int threads = (double)N * C * OC < (1 << 19) ? 1 : wf_pool_threads(pool);
    fast_job j = {.out = out, .w = w, .rb = wf_quant_row_bytes(type, (size_t)C), .b = b, .a = a, .type = type,
                  .N = N, .K = C, .OC = OC, .rows_per_task = threads == 1 ? OC : (OC + 3 * threads - 1) / (3 * threads)};
    const int tasks = (OC + j.rows_per_task - 1) / j.rows_per_task;
    if (tasks == 1)
        fast_task(&j, 0);
    else
        wf_pool_run(pool, tasks, fast_task, &j);
}

void wf_qlinear_forward_scalar(wf_real *out, const wf_real *inp, const uint8_t *w, int type, const wf_real *b,
                               int N, int C, int OC, void *scratch) {
    const qacts a = acts_in(scratch, 1, C);
    const size_t rb = wf_quant_row_bytes(type, (size_t)C);
    for (int n = 0; n < N; n++) {
        quantize_acts(a.q, a.d, a.s, inp + (size_t)n * C, C);
        for (int o = 0; o < OC; o++) {
            const float d = qdot_scalar(w + (size_t)o * rb, type, a.q, a.d, C / WF_QK);
            out[(size_t)n * OC + o] = b ? b[o] + d : d;
        }
    }
}

/* ---- the exact path: rows dequantized, QCHUNK at a time, then wf_matmul ---- */

typedef struct {
    wf_real *dst;
    const uint8_t *w;
    size_t rb;
    int type, K;
} dequant_job;

static void dequant_rows(void *ctx, size_t r0, size_t r1) {
    const dequant_job *j = ctx;
    for (size_t r = r0; r < r1; r++) wf_dequantize_row(j->dst + r * (size_t)j->K, j->w + r * j->rb, (size_t)j->K, j->type);
}

/* Rows [j0, j0 + R) of w [., K] as floats into scratch [R, K], shared out by the pool. */
static const wf_real *dequant_chunk(void *scratch, const uint8_t *w, int type, int K, int j0, int R, wf_pool *pool) {
    const size_t rb = wf_quant_row_bytes(type, (size_t)K);
    dequant_job j = {.dst = scratch, .w = w + (size_t)j0 * rb, .rb = rb, .type = type, .K = K};
    wf_pool_for(pool, (size_t)R, 1, (size_t)(1 << 14) / (size_t)K + 1, dequant_rows, &j);
    return j.dst;
}

void wf_qlinear_forward(wf_real *out, const wf_real *inp, const uint8_t *w, int type, const wf_real *b, int N, int C,
                        int OC, int fast, void *scratch, wf_pool *pool) {
    if (fast && N <= FAST_ROWS) {
        fast_forward(out, inp, w, type, b, N, C, OC, scratch, pool);
        return;
    }
    /* the float layer's kernels on each chunk of w's rows (linear.c: the few-row one, or the
     * matrix multiply with the bias written first): each output comes out as there */
#if !defined(WF_REFERENCE_KERNELS)
    const int rows_kernel = N <= WF_ROWS_MAX;
#else
    const int rows_kernel = 0;
#endif
    if (b && !rows_kernel)
        for (int n = 0; n < N; n++) memcpy(out + (size_t)n * OC, b, (size_t)OC * sizeof(wf_real));
    for (int j0 = 0; j0 < OC; j0 += QCHUNK) {
        const int R = MIN(QCHUNK, OC - j0);
        const wf_real *wc = dequant_chunk(scratch, w, type, C, j0, R, pool);
#if !defined(WF_REFERENCE_KERNELS)
        if (rows_kernel) {
            wf_linear_rows(out + j0, (size_t)OC, inp, wc, b ? b + j0 : NULL, N, C, R, pool);
            continue;
        }
#endif
        /* out[:, j0 + j] (+)= sum_i inp[n, i] wc[j, i]: wc read transposed */
        wf_matmul(out + j0, (size_t)OC, inp, (size_t)C, 1, wc, 1, (size_t)C, N, R, C, b != NULL, pool);
    }
}

void wf_qlinear_backward(wf_real *dinp, const wf_real *dout, const uint8_t *w, int type, int N, int C, int OC,
                         void *scratch, wf_pool *pool) {
    /* out = inp w^T: dinp += dout w, over w's rows a chunk at a time (each chunk a part of the sum) */
    for (int j0 = 0; j0 < OC; j0 += QCHUNK) {
        const int R = MIN(QCHUNK, OC - j0);
        const wf_real *wc = dequant_chunk(scratch, w, type, C, j0, R, pool);
        wf_matmul(dinp, (size_t)C, dout + j0, (size_t)OC, 1, wc, (size_t)C, 1, N, C, R, 1, pool);
    }
}

size_t wf_qlinear_scratch(int K) {
    const size_t exact = (size_t)QCHUNK * (size_t)K * sizeof(wf_real);
    const size_t per_row = (size_t)K * (WF_Q8_SPLIT ? 4 : 2) + (size_t)K / WF_QK * (sizeof(float) + sizeof(int32_t));
    const size_t fast = (size_t)FAST_ROWS * per_row;
    return exact > fast ? exact : fast;
}

/* ---- the embedding ---- */

void wf_qembed_forward(wf_real *out, const int32_t *inp, const uint8_t *wte, int type, const wf_real *pos, int B,
                       int T, int C) {
    const size_t rb = wf_quant_row_bytes(type, (size_t)C);
    for (size_t r = 0; r < (size_t)B * T; r++) {
        wf_real *o = out + r * C;
        wf_dequantize_row(o, wte + (size_t)inp[r] * rb, (size_t)C, type);
        if (pos)
            for (int i = 0; i < C; i++) o[i] += pos[(r % (size_t)T) * C + i];
    }
}
