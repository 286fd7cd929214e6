/* The matrix multiply every product of the model runs on (ops.h: wf_matmul): linear layers
 * forward and backward, attention's scores, weighted sums and their gradients. Operands are
 * read through strides, so a transpose costs nothing but the packing.
 *
 * Blocking (BLIS's loop order, sized for 32-48 KB of L1 and 1 MB of L2 per core): a task
 * owns a range of rows and of at most NC columns. For each KC-deep slice of the sum it
 * packs its columns of B (KC x NC, 128-256 KB, kept in L2) into NR-wide panels, then for each
 * MC-row block packs A (MC x KC) into MR-row panels and runs the microkernel, which keeps
 * an MR x NR tile of C in registers. The packing buffers live on the stack (180-310 KB: the
 * pool's workers get WF_POOL_STACK, pool.h; the wasm main thread 2 MB, build.sh).
 * Every output element sums its K terms in order, in KC-long partial sums, whoever runs
 * the task: results do not depend on the thread count. */
#include "ops.h"
#include "simd.h"

#define KC 256
#define MC (8 * WF_MR)
#define NC (16 * WF_NR) /* 256 columns (AVX2), 128 (4-lane backends) */

#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* A panels: ap[p][k * MR + r] = A(p * MR + r, k), zero rows past m. */
static void pack_a(wf_real *ap, const wf_real *a, size_t ars, size_t acs, int m, int kc) {
    for (int i0 = 0; i0 < m; i0 += WF_MR, ap += (size_t)kc * WF_MR) {
        const int mr = MIN(WF_MR, m - i0);
        const wf_real *src = a + (size_t)i0 * ars;
        if (acs == 1) {
            for (int r = 0; r < mr; r++)
                for (int k = 0; k < kc; k++) ap[k * WF_MR + r] = src[r * ars + k];
        } else {
            for (int k = 0; k < kc; k++)
                for (int r = 0; r < mr; r++) ap[k * WF_MR + r] = src[k * acs + r * ars];
        }
        for (int r = mr; r < WF_MR; r++)
            for (int k = 0; k < kc; k++) ap[k * WF_MR + r] = 0;
    }
}

/* B panels: bp[p][k * NR + j] = B(k, p * NR + j), zero columns past n. */
static void pack_b(wf_real *bp, const wf_real *b, size_t brs, size_t bcs, int n, int kc) {
    for (int j0 = 0; j0 < n; j0 += WF_NR, bp += (size_t)kc * WF_NR) {
        const int nr = MIN(WF_NR, n - j0);
        const wf_real *src = b + (size_t)j0 * bcs;
        if (bcs == 1 && nr == WF_NR) {
            /* whole vectors: a compiler's memcpy for NR floats costs more than the copy */
            for (int k = 0; k < kc; k++)
                for (int v = 0; v < WF_NV; v++) wf_vstore(bp + k * WF_NR + v * WF_VL, wf_vload(src + k * brs + v * WF_VL));
        } else if (bcs == 1) {
            for (int k = 0; k < kc; k++) {
                int j = 0;
                for (; j < nr; j++) bp[k * WF_NR + j] = src[k * brs + j];
                for (; j < WF_NR; j++) bp[k * WF_NR + j] = 0;
            }
        } else {
            for (int j = 0; j < nr; j++)
                for (int k = 0; k < kc; k++) bp[k * WF_NR + j] = src[j * bcs + k * brs];
            for (int j = nr; j < WF_NR; j++)
                for (int k = 0; k < kc; k++) bp[k * WF_NR + j] = 0;
        }
    }
}

/* c[MR x NR] (+)= ap . bp over kc: MR * NV accumulators stay in registers. */
static void micro(int kc, const wf_real *ap, const wf_real *bp, wf_real *c, size_t ldc, int acc) {
    wf_v t[WF_MR][WF_NV];
    for (int r = 0; r < WF_MR; r++)
        for (int v = 0; v < WF_NV; v++) t[r][v] = wf_vzero();
    for (int k = 0; k < kc; k++, ap += WF_MR, bp += WF_NR) {
        wf_v bv[WF_NV];
        for (int v = 0; v < WF_NV; v++) bv[v] = wf_vload(bp + v * WF_VL);
        for (int r = 0; r < WF_MR; r++) {
            wf_v a = wf_vbroadcast(ap + r);
            for (int v = 0; v < WF_NV; v++) t[r][v] = wf_vmadd(a, bv[v], t[r][v]);
        }
    }
    for (int r = 0; r < WF_MR; r++)
        for (int v = 0; v < WF_NV; v++) {
            wf_real *cp = c + r * ldc + v * WF_VL;
            wf_vstore(cp, acc ? wf_vadd(wf_vload(cp), t[r][v]) : t[r][v]);
        }
}

/* The same for a partial tile (m < MR or n < NR), through a tile on the stack. */
static void micro_edge(int kc, const wf_real *ap, const wf_real *bp, wf_real *c, size_t ldc, int acc, int m, int n) {
    wf_real tile[WF_MR * WF_NR];
    micro(kc, ap, bp, tile, WF_NR, 0);
    for (int r = 0; r < m; r++)
        for (int j = 0; j < n; j++) c[r * ldc + j] = (acc ? c[r * ldc + j] : 0) + tile[r * WF_NR + j];
}

typedef struct {
    wf_real *c;
    size_t ldc;
    const wf_real *a, *b;
    size_t ars, acs, brs, bcs;
    int M, N, K, accumulate;
    int row_tasks, row_width; /* rows cut into row_tasks ranges of row_width (a multiple of MC) */
    int col_width;            /* columns cut into ranges of col_width <= NC (a multiple of NR) */
} mm_job;

static void mm_block(const mm_job *j, int i_begin, int i_end, int j_begin, int j_end) {
    wf_real ap[MC * KC] __attribute__((aligned(64)));
    wf_real bp[KC * NC] __attribute__((aligned(64)));
    const int n = j_end - j_begin;
    for (int p0 = 0; p0 < j->K; p0 += KC) {
        const int kc = MIN(KC, j->K - p0);
        const int acc = j->accumulate || p0 > 0;
        pack_b(bp, j->b + (size_t)p0 * j->brs + (size_t)j_begin * j->bcs, j->brs, j->bcs, n, kc);
        for (int i0 = i_begin; i0 < i_end; i0 += MC) {
            const int m = MIN(MC, i_end - i0);
            pack_a(ap, j->a + (size_t)i0 * j->ars + (size_t)p0 * j->acs, j->ars, j->acs, m, kc);
            for (int j0 = 0; j0 < n; j0 += WF_NR) {
                const int nr = MIN(WF_NR, n - j0);
                const wf_real *bpanel = bp + (size_t)j0 * kc;
                for (int r0 = 0; r0 < m; r0 += WF_MR) {
                    wf_real *c = j->c + (size_t)(i0 + r0) * j->ldc + j_begin + j0;
                    const int mr = MIN(WF_MR, m - r0);
                    if (mr == WF_MR && nr == WF_NR)
                        micro(kc, ap + (size_t)r0 * kc, bpanel, c, j->ldc, acc);
                    else
                        micro_edge(kc, ap + (size_t)r0 * kc, bpanel, c, j->ldc, acc, mr, nr);
                }
            }
        }
    }
}

static void mm_task(void *ctx, int task) {
    const mm_job *j = ctx;
    const int rt = task % j->row_tasks, ct = task / j->row_tasks;
    const int i_begin = rt * j->row_width, i_end = MIN(j->M, i_begin + j->row_width);
    const int j_begin = ct * j->col_width, j_end = MIN(j->N, j_begin + j->col_width);
    if (i_begin < i_end && j_begin < j_end) mm_block(j, i_begin, i_end, j_begin, j_end);
}

/* A few rows (matrix-vector products, as in decoding one token): packing B would cost as
 * much as the product, so read it in place. */
static void mm_rows(const mm_job *j) {
    for (int i = 0; i < j->M; i++) {
        wf_real *c = j->c + (size_t)i * j->ldc;
        const wf_real *a = j->a + (size_t)i * j->ars;
        if (j->brs == 1 && j->acs == 1) {
            /* B's columns are contiguous: one dot product per output, four at a time, each
             * over two accumulators so the additions do not wait on each other */
            int n = 0;
            for (; n + 4 <= j->N; n += 4) {
                const wf_real *b0 = j->b + (size_t)n * j->bcs, *b1 = b0 + j->bcs, *b2 = b1 + j->bcs, *b3 = b2 + j->bcs;
                wf_v s0 = wf_vzero(), s1 = wf_vzero(), s2 = wf_vzero(), s3 = wf_vzero();
                wf_v t0 = wf_vzero(), t1 = wf_vzero(), t2 = wf_vzero(), t3 = wf_vzero();
                int k = 0;
                for (; k + 2 * WF_VL <= j->K; k += 2 * WF_VL) {
                    wf_v x = wf_vload(a + k), y = wf_vload(a + k + WF_VL);
                    s0 = wf_vmadd(x, wf_vload(b0 + k), s0);
                    s1 = wf_vmadd(x, wf_vload(b1 + k), s1);
                    s2 = wf_vmadd(x, wf_vload(b2 + k), s2);
                    s3 = wf_vmadd(x, wf_vload(b3 + k), s3);
                    t0 = wf_vmadd(y, wf_vload(b0 + k + WF_VL), t0);
                    t1 = wf_vmadd(y, wf_vload(b1 + k + WF_VL), t1);
                    t2 = wf_vmadd(y, wf_vload(b2 + k + WF_VL), t2);
                    t3 = wf_vmadd(y, wf_vload(b3 + k + WF_VL), t3);
                }
                for (; k + WF_VL <= j->K; k += WF_VL) {
                    wf_v x = wf_vload(a + k);
                    s0 = wf_vmadd(x, wf_vload(b0 + k), s0);
                    s1 = wf_vmadd(x, wf_vload(b1 + k), s1);
                    s2 = wf_vmadd(x, wf_vload(b2 + k), s2);
                    s3 = wf_vmadd(x, wf_vload(b3 + k), s3);
                }
                wf_real d0 = wf_vsum(wf_vadd(s0, t0)), d1 = wf_vsum(wf_vadd(s1, t1));
                wf_real d2 = wf_vsum(wf_vadd(s2, t2)), d3 = wf_vsum(wf_vadd(s3, t3));
                for (; k < j->K; k++) {
                    d0 += a[k] * b0[k];
                    d1 += a[k] * b1[k];
                    d2 += a[k] * b2[k];
                    d3 += a[k] * b3[k];
                }
                if (j->accumulate) {
                    c[n] += d0, c[n + 1] += d1, c[n + 2] += d2, c[n + 3] += d3;
                } else {
                    c[n] = d0, c[n + 1] = d1, c[n + 2] = d2, c[n + 3] = d3;
                }
            }
            for (; n < j->N; n++) c[n] = (j->accumulate ? c[n] : 0) + wf_dot(a, j->b + (size_t)n * j->bcs, j->K);
        } else if (j->bcs == 1) {
            /* B's rows are contiguous: c_i += A(i,k) B(k,:) */
            if (!j->accumulate) memset(c, 0, (size_t)j->N * sizeof(wf_real));
            for (int k = 0; k < j->K; k++) {
                const wf_v x = wf_vset1(a[k * j->acs]);
                const wf_real *b = j->b + (size_t)k * j->brs;
                int n = 0;
                for (; n + WF_VL <= j->N; n += WF_VL) wf_vstore(c + n, wf_vmadd(x, wf_vload(b + n), wf_vload(c + n)));
                for (; n < j->N; n++) c[n] += a[k * j->acs] * b[n];
            }
        } else {
            for (int n = 0; n < j->N; n++) {
                wf_real d = 0;
                for (int k = 0; k < j->K; k++) d += a[k * j->acs] * j->b[k * j->brs + n * j->bcs];
                c[n] = (j->accumulate ? c[n] : 0) + d;
            }
        }
    }
}

void wf_matmul(wf_real *c, size_t ldc, const wf_real *a, size_t ars, size_t acs, const wf_real *b, size_t brs,
               size_t bcs, int M, int N, int K, int accumulate, wf_pool *pool) {
    if (M <= 0 || N <= 0) return;
    mm_job j = {.c = c, .ldc = ldc, .a = a, .b = b, .ars = ars, .acs = acs, .brs = brs, .bcs = bcs, .M = M, .N = N,
                .K = K, .accumulate = accumulate, .row_tasks = 1, .row_width = M, .col_width = N};
    if (K <= 0) {
        if (!accumulate)
            for (int i = 0; i < M; i++) memset(c + (size_t)i * ldc, 0, (size_t)N * sizeof(wf_real));
        return;
    }
    if (M < 4) {
        mm_rows(&j);
        return;
    }
    /* Tasks: column ranges of at most NC (one task per range without threads). With
     * threads, cut further until there are a few tasks per thread, along the dimension
     * whose cut repacks less: every extra column range packs all of A again (M*K), every
     * extra row range all of B (K*N). */
    if ((double)M * N * K < (1 << 19)) pool = NULL; /* below ~1 MFLOP waking workers costs more */
    const int threads = wf_pool_threads(pool), want = threads > 1 ? 3 * threads : 1;
    const int panels = (N + WF_NR - 1) / WF_NR, nc_panels = NC / WF_NR, row_blocks = (M + MC - 1) / MC;
    int col_tasks = (panels + nc_panels - 1) / nc_panels, row_tasks = 1;
    if (col_tasks < want) {
        if (M >= N)
            row_tasks = MIN(row_blocks, (want + col_tasks - 1) / col_tasks);
        else
            col_tasks = MIN(panels, want);
    }
    j.col_width = (panels + col_tasks - 1) / col_tasks * WF_NR;
    col_tasks = (N + j.col_width - 1) / j.col_width;
    j.row_width = (row_blocks + row_tasks - 1) / row_tasks * MC;
    j.row_tasks = (M + j.row_width - 1) / j.row_width;
    wf_pool_run(pool, j.row_tasks * col_tasks, mm_task, &j);
}

const char *wf_simd_name(void) {
#if defined(WF_REFERENCE_KERNELS)
    return "reference";
#else
    return WF_SIMD_NAME;
#endif
}

