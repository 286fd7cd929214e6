/* Linear layer, PyTorch's orientation: w is [OC, C], one row per output channel.
 * Shapes: inp [N,C], w [OC,C], b [OC] (may be NULL), out [N,OC]. Saves nothing extra:
 * backward needs inp, which the caller keeps.
 *   out = inp w^T + b
 *   dinp += dout w;  dw += dout^T inp;  db += sum over rows of dout  (seed 000, eq. 12-13)
 * (wf_linear_backward_set: dinp = dout w, for a buffer the layer would otherwise zero first) */
#include "ops.h"
#include "simd.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* ---- the op ----
 * All three products run on the packed matrix multiply (wf_matmul, matmul.c), which reads
 * its operands through strides: the transposes cost nothing. A few rows forward (decoding,
 * short prompts) take the dot-product kernel at the end of this file instead. */


void wf_linear_forward(wf_real *out, const wf_real *inp, const wf_real *w, const wf_real *b,
                       int N, int C, int OC, wf_pool *pool) {
#if defined(WF_REFERENCE_KERNELS)
    (void)pool;
    wf_linear_forward_scalar(out, inp, w, b, N, C, OC);
#else
    if (N <= WF_ROWS_MAX) {
        wf_linear_rows(out, (size_t)OC, inp, w, b, N, C, OC, pool);
        return;
    }
    /* A(n,i) = inp[n,i];  B(i,j) = w[j,i]: w read transposed; the bias added as each tile is
     * stored (as out = b, then out += inp w^T: the same sums) */
    const wf_mm p = {.c = out, .ldc = (size_t)OC, .a = inp, .ars = (size_t)C, .acs = 1, .b = w, .brs = 1, .bcs = (size_t)C,
                     .M = N, .N = OC, .K = C, .bias = b};
    wf_matmul_many(&p, 1, pool);
#endif
}

#if !defined(WF_REFERENCE_KERNELS)
/* db += the rows of dout, over columns [j0, j1) (whole vectors but at the row's end): each
 * column adds its rows in order, whoever sums it */
typedef struct {
    wf_real *db;
    const wf_real *dout;
    int N, OC;
} bias_job;

static void bias_grad_cols(void *ctx, size_t j0, size_t j1) {
    const bias_job *b = ctx;
    for (int n = 0; n < b->N; n++) {
        const wf_real *d = b->dout + (size_t)n * b->OC;
        size_t j = j0;
        for (; j + WF_VL <= j1; j += WF_VL) wf_vstore(b->db + j, wf_vadd(wf_vload(b->db + j), wf_vload(d + j)));
        for (; j < j1; j++) b->db[j] += d[j];
    }
}
#endif

/* dinp's product added to it (acc) or written over it */
static void linear_backward(wf_real *dinp, int acc, wf_real *dw, wf_real *db, const wf_real *dout, const wf_real *inp,
                            const wf_real *w, int N, int C, int OC, wf_pool *pool) {
#if defined(WF_REFERENCE_KERNELS)
    (void)pool;
    if (dinp && !acc) memset(dinp, 0, (size_t)N * C * sizeof(wf_real));
    wf_linear_backward_scalar(dinp, dw, db, dout, inp, w, N, C, OC);
#else
    /* out = inp w^T + b: dinp (+)= dout w and dw += dout^T inp (A(j,n) = dout[n,j]: dout read
     * transposed), one job for the pool */
    wf_mm p[2];
    int n = 0;
    if (dinp)
        p[n++] = (wf_mm){.c = dinp, .ldc = (size_t)C, .a = dout, .ars = (size_t)OC, .acs = 1, .b = w, .brs = (size_t)C,
                         .bcs = 1, .M = N, .N = C, .K = OC, .accumulate = acc};
    if (dw)
        p[n++] = (wf_mm){.c = dw, .ldc = (size_t)C, .a = dout, .ars = 1, .acs = (size_t)OC, .b = inp, .brs = (size_t)C,
                         .bcs = 1, .M = OC, .N = C, .K = N, .accumulate = 1};
    wf_matmul_many(p, n, pool);
    if (db) {
        bias_job j = {.db = db, .dout = dout, .N = N, .OC = OC};
        wf_pool_for(pool, (size_t)OC, WF_VL, (size_t)(1 << 15) / (size_t)(N > 0 ? N : 1) + WF_VL, bias_grad_cols, &j);
    }
#endif
}

void wf_linear_backward(wf_real *dinp, wf_real *dw, wf_real *db, const wf_real *dout,
                        const wf_real *inp, const wf_real *w, int N, int C, int OC, wf_pool *pool) {
    linear_backward(dinp, 1, dw, db, dout, inp, w, N, C, OC, pool);
}

void wf_linear_backward_set(wf_real *dinp, wf_real *dw, wf_real *db, const wf_real *dout,
                            const wf_real *inp, const wf_real *w, int N, int C, int OC, wf_pool *pool) {
    linear_backward(dinp, 0, dw, db, dout, inp, w, N, C, OC, pool);
}

/* ---- the reference: plain loops the fast path is tested against ---- */

void wf_linear_forward_scalar(wf_real *out, const wf_real *inp, const wf_real *w, const wf_real *b,
                              int N, int C, int OC) {
    for (int n = 0; n < N; n++) {
        const wf_real *x = inp + (size_t)n * C;
        wf_real *o = out + (size_t)n * OC;
        for (int j = 0; j < OC; j++) {
            const wf_real *wr = w + (size_t)j * C;
            wf_real acc = b ? b[j] : 0;
            for (int i = 0; i < C; i++) acc += x[i] * wr[i];
            o[j] = acc;
        }
    }
}

void wf_linear_backward_scalar(wf_real *dinp, wf_real *dw, wf_real *db, const wf_real *dout,
                               const wf_real *inp, const wf_real *w, int N, int C, int OC) {
    for (int n = 0; n < N; n++) {
        const wf_real *d = dout + (size_t)n * OC;
        const wf_real *x = inp + (size_t)n * C;
        for (int j = 0; j < OC; j++) {
            /* out[n,j] = b[j] + sum_i inp[n,i] w[j,i] */
            wf_real dj = d[j];
            if (dinp) {
                const wf_real *wr = w + (size_t)j * C;
                wf_real *dx = dinp + (size_t)n * C;
                for (int i = 0; i < C; i++) dx[i] += dj * wr[i];
            }
            if (dw) {
                wf_real *dwr = dw + (size_t)j * C;
                for (int i = 0; i < C; i++) dwr[i] += dj * x[i];
            }
            if (db) db[j] += dj;
        }
    }
}

/* ---- a few rows (decoding and short prompts): dot products, nothing packed ----
 * out[n,j] = b[j] + inp[n,:] . w[j,:] with both operands read along C in place: four
 * weight rows at a time (4 C floats, which stay in L1) against every input row, two rows
 * at a time, one vector accumulator per dot product; the four sums of a tile come out of
 * one transpose (wf_vsum4). Each output sums its vector lanes, then the scalar tail, then
 * adds the bias, whatever the tile or thread: results do not depend on the thread count.
 * Few live vectors matter more than many independent additions here: in V8 a single row
 * with eight accumulators (two per dot product) or eight weight rows decodes 20-25 %
 * slower than four (bench A/B in the commit messages). */
#if !defined(WF_REFERENCE_KERNELS) /* the reference build runs wf_linear_forward_scalar */

/* s[r] = x . w_r and s[4 + r] = y . w_r: two input rows share every weight load. */
static void dot_4x2(wf_real *s, const wf_real *x, const wf_real *y, const wf_real *w, int C) {
    const wf_real *w0 = w, *w1 = w0 + C, *w2 = w1 + C, *w3 = w2 + C;
    wf_v s0 = wf_vzero(), s1 = wf_vzero(), s2 = wf_vzero(), s3 = wf_vzero();
    wf_v t0 = wf_vzero(), t1 = wf_vzero(), t2 = wf_vzero(), t3 = wf_vzero();
    int k = 0;
    for (; k + WF_VL <= C; k += WF_VL) {
        const wf_v x0 = wf_vload(x + k), y0 = wf_vload(y + k);
        wf_v wv = wf_vload(w0 + k);
        s0 = wf_vmadd(x0, wv, s0), t0 = wf_vmadd(y0, wv, t0);
        wv = wf_vload(w1 + k);
        s1 = wf_vmadd(x0, wv, s1), t1 = wf_vmadd(y0, wv, t1);
        wv = wf_vload(w2 + k);
        s2 = wf_vmadd(x0, wv, s2), t2 = wf_vmadd(y0, wv, t2);
        wv = wf_vload(w3 + k);
        s3 = wf_vmadd(x0, wv, s3), t3 = wf_vmadd(y0, wv, t3);
    }
    wf_vsum4(s, s0, s1, s2, s3);
    wf_vsum4(s + 4, t0, t1, t2, t3);
    for (; k < C; k++) {
        for (int r = 0; r < 4; r++) {
            s[r] += x[k] * w[(size_t)r * C + k];
            s[4 + r] += y[k] * w[(size_t)r * C + k];
        }
    }
}

typedef struct {
    wf_real *out;
    size_t ldo;
    const wf_real *inp, *w, *b;
    int N, C, OC, tiles_per_task;
} rows_job;

/* Output columns [4 tiles_per_task task, ...) for every row; a last column that is not
 * part of a four-row tile is one dot product per row. */
static void rows_task(void *ctx, int task) {
    const rows_job *j = ctx;
    const int C = j->C, OC = j->OC;
    const int j_begin = 4 * task * j->tiles_per_task, j_end = MIN(OC, j_begin + 4 * j->tiles_per_task);
    int o = j_begin;
    for (; o + 4 <= j_end; o += 4) {
        const wf_real *w = j->w + (size_t)o * C;
        int n = 0;
        wf_real s[8];
        for (; n + 2 <= j->N; n += 2) {
            dot_4x2(s, j->inp + (size_t)n * C, j->inp + (size_t)(n + 1) * C, w, C);
            wf_real *y0 = j->out + (size_t)n * j->ldo + o, *y1 = y0 + j->ldo;
            for (int r = 0; r < 4; r++) {
                y0[r] = j->b ? j->b[o + r] + s[r] : s[r];
                y1[r] = j->b ? j->b[o + r] + s[4 + r] : s[4 + r];
            }
        }
        if (n < j->N) {
            wf_dot4(s, j->inp + (size_t)n * C, w, (size_t)C, C);
            wf_real *y0 = j->out + (size_t)n * j->ldo + o;
            for (int r = 0; r < 4; r++) y0[r] = j->b ? j->b[o + r] + s[r] : s[r];
        }
    }
    for (; o < j_end; o++) {
        const wf_real *w = j->w + (size_t)o * C;
        for (int n = 0; n < j->N; n++) {
            const wf_real d = wf_dot(j->inp + (size_t)n * C, w, C);
            j->out[(size_t)n * j->ldo + o] = j->b ? j->b[o] + d : d;
        }
    }
}

void wf_linear_rows(wf_real *out, size_t ldo, const wf_real *inp, const wf_real *w, const wf_real *b, int N, int C,
                    int OC, wf_pool *pool) {
    const int tiles = (OC + 3) / 4;
    /* below ~1 MFLOP waking workers costs more than it saves (as in wf_matmul) */
    const int threads = (double)N * C * OC < (1 << 19) ? 1 : wf_pool_threads(pool);
    /* three tasks per thread even out their finishing times; on one thread, one task: the
     * caller runs it without waking the pool (whose workers all check in before it returns) */
    rows_job j = {.out = out, .ldo = ldo, .inp = inp, .w = w, .b = b, .N = N, .C = C, .OC = OC,
                  .tiles_per_task = threads == 1 ? tiles : (tiles + 3 * threads - 1) / (3 * threads)};
    const int tasks = (tiles + j.tiles_per_task - 1) / j.tiles_per_task;
    if (tasks == 1)
        rows_task(&j, 0);
    else
        wf_pool_run(pool, tasks, rows_task, &j);
}
#endif
