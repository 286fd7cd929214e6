/* The matrix multiply every product of the model runs on (ops.h: wf_matmul): linear layers
 * forward and backward, attention's scores, weighted sums and their gradients. Operands are
 * read through strides, so a transpose costs nothing but the packing.
 *
 * Blocking (BLIS's loops): B is packed in chunks, each some KC-deep slices of the sum over a
 * range of columns, into NR-wide panels; then tasks of MC-row blocks (and, when rows are
 * few, column ranges) pack their rows of A into MR-row panels and run the microkernel, which
 * keeps an MR x NR tile of C in registers while a B panel (KC x NR) stays in L1. With a pool
 * the chunk is the pool's scratch (wf_pool_scratch: usually all of B), packed once by all
 * threads together, so neither operand is packed twice; without one it is KC x NC_STACK on
 * the stack (512 KB), and A is packed once per NC_STACK columns. The A block (MC x KC)
 * lives on the stack of whoever runs the task (the pool's workers get WF_POOL_STACK,
 * pool.h; the wasm main thread 2 MB, build.sh).
 * Every output element sums its K terms in order, in KC-long partial sums, whoever runs
 * the task: results do not depend on the thread count or the tile. */
#include "ops.h"
#include "simd.h"

#define KC WF_KC
#define MC (8 * WF_MR)
/* columns of a B chunk on the stack: 512 KB of it (512 floats, 256 doubles) */
#define NC_STACK ((512 << 10) / (KC * (int)sizeof(wf_real)) / WF_NR * WF_NR)

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* A panels: ap[p][k * MR + r] = A(p * MR + r, k), zero rows past m. */
static void pack_a(wf_real *ap, const wf_real *a, size_t ars, size_t acs, int m, int kc) {
    for (int i0 = 0; i0 < m; i0 += WF_MR, ap += (size_t)kc * WF_MR) {
        const int mr = MIN(WF_MR, m - i0);
        const wf_real *src = a + (size_t)i0 * ars;
        int r = 0;
        if (acs == 1) {
            /* rows contiguous along k: 4 x 4 transposes, then what is left one by one */
            for (; r + 4 <= mr; r += 4) {
                int k = 0;
                for (; k + 4 <= kc; k += 4) wf_transpose4(ap + k * WF_MR + r, WF_MR, src + r * ars + k, ars);
                for (; k < kc; k++)
                    for (int q = r; q < r + 4; q++) ap[k * WF_MR + q] = src[q * ars + k];
            }
            for (; r < mr; r++)
                for (int k = 0; k < kc; k++) ap[k * WF_MR + r] = src[r * ars + k];
        } else if (ars == 1 && mr == WF_MR && WF_MR % WF_VL == 0) {
            /* columns contiguous (a transposed operand): MR floats per k, as vectors */
            for (int k = 0; k < kc; k++)
                for (int v = 0; v < WF_MR; v += WF_VL) wf_vstore(ap + k * WF_MR + v, wf_vload(src + k * acs + v));
            r = mr;
        } else {
            for (int k = 0; k < kc; k++)
                for (int q = 0; q < mr; q++) ap[k * WF_MR + q] = src[k * acs + q * ars];
            r = mr;
        }
        for (; r < WF_MR; r++)
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
        } else if (brs == 1 && nr == WF_NR) {
            /* B's columns contiguous along k (a linear layer's weights, forward): 4 x 4
             * transposes (NR is a multiple of 4 on every backend) */
            int k = 0;
            for (; k + 4 <= kc; k += 4)
                for (int j = 0; j < WF_NR; j += 4) wf_transpose4(bp + k * WF_NR + j, WF_NR, src + j * bcs + k, bcs);
            for (; k < kc; k++)
                for (int j = 0; j < WF_NR; j++) bp[k * WF_NR + j] = src[j * bcs + k];
        } else {
            for (int j = 0; j < nr; j++)
                for (int k = 0; k < kc; k++) bp[k * WF_NR + j] = src[j * bcs + k * brs];
            for (int j = nr; j < WF_NR; j++)
                for (int k = 0; k < kc; k++) bp[k * WF_NR + j] = 0;
        }
    }
}

/* c[MR x NR] (+)= ap . bp over kc: MR * NV accumulators stay in registers. add (when not
 * acc): a row of NR added to each row of the tile as it is stored (a linear layer's bias). */
static void micro(int kc, const wf_real *ap, const wf_real *bp, wf_real *c, size_t ldc, int acc, const wf_real *add) {
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
            const wf_real *base = acc ? cp : add ? add + v * WF_VL : NULL;
            wf_vstore(cp, base ? wf_vadd(wf_vload(base), t[r][v]) : t[r][v]);
        }
}

/* The same for a partial tile (m < MR or n < NR), through a tile on the stack. */
static void micro_edge(int kc, const wf_real *ap, const wf_real *bp, wf_real *c, size_t ldc, int acc,
                       const wf_real *add, int m, int n) {
    wf_real tile[WF_MR * WF_NR];
    micro(kc, ap, bp, tile, WF_NR, 0, NULL);
    for (int r = 0; r < m; r++)
        for (int j = 0; j < n; j++)
            c[r * ldc + j] = (acc ? c[r * ldc + j] : add ? add[j] : 0) + tile[r * WF_NR + j];
}

typedef struct {
    wf_real *c;
    size_t ldc;
    const wf_real *a, *b;
    size_t ars, acs, brs, bcs;
    int M, N, K, accumulate, upper;
    const wf_real *bias;
    /* the chunk of B: columns [n0, n0 + nc), sums [k0, k0 + kn), in bp slice after slice
     * (slice k at bp + (k - k0) * ncp, ncp = nc rounded up to NR), each of NR-wide panels */
    wf_real *bp;
    int n0, nc, ncp, k0, kn;
    int panels, pack_tasks;             /* packing: the chunk's NR-wide panels, shared out */
    int row_blocks, row_tasks;          /* products: MC-row blocks, shared out by row_tasks */
    int col_units, col_tasks;           /* x column ranges: COL_UNIT-wide units, shared out */
    int product_tasks;
} mm_job;

/* Column ranges that split a product among tasks are whole multiples of this many columns,
 * 64 bytes (a cache line) or more and whole panels: two threads then never write one line of
 * C at the same time, where NR = 8 floats (32 bytes, wasm and SSE) would let them. */
#define COL_UNIT (WF_NR >= WF_LINE_REALS ? WF_NR : (WF_LINE_REALS + WF_NR - 1) / WF_NR * WF_NR)

/* The task-th of `tasks` shares of n units, [*begin, *end): the shares differ by at most one
 * unit, the larger first, so whichever task a thread claims last is never a long one. */
static void share(int n, int tasks, int task, int *begin, int *end) {
    const int q = n / tasks, r = n % tasks;
    *begin = task * q + MIN(task, r);
    *end = *begin + q + (task < r);
}

static void pack_task(const mm_job *j, int task) {
    int pb, pe;
    share(j->panels, j->pack_tasks, task, &pb, &pe);
    const int p0 = pb, n = MIN(j->nc - p0 * WF_NR, (pe - pb) * WF_NR);
    if (n <= 0) return;
    for (int k = j->k0; k < j->k0 + j->kn; k += KC) {
        const int kc = MIN(KC, j->k0 + j->kn - k);
        pack_b(j->bp + (size_t)(k - j->k0) * j->ncp + (size_t)p0 * kc * WF_NR,
               j->b + (size_t)k * j->brs + (size_t)(j->n0 + p0 * WF_NR) * j->bcs, j->brs, j->bcs, n, kc);
    }
}

/* A product task's rows [r[0], r[1]) and the chunk's columns [r[2], r[3]). */
static void task_ranges(const mm_job *j, int task, int r[4]) {
    int rb, re, cb, ce;
    share(j->row_blocks, j->row_tasks, task % j->row_tasks, &rb, &re);
    share(j->col_units, j->col_tasks, task / j->row_tasks, &cb, &ce);
    r[0] = rb * MC, r[1] = MIN(j->M, re * MC);
    r[2] = cb * COL_UNIT, r[3] = MIN(j->nc, ce * COL_UNIT);
}

static void product_task(const mm_job *j, int task) {
    int r[4];
    task_ranges(j, task, r);
    const int i_begin = r[0], i_end = r[1], c_begin = r[2], c_end = r[3];
    if (i_begin >= i_end || c_begin >= c_end) return;
    wf_real ap[MC * KC] __attribute__((aligned(64)));
    for (int k = j->k0; k < j->k0 + j->kn; k += KC) {
        const int kc = MIN(KC, j->k0 + j->kn - k);
        const int acc = j->accumulate || k > 0;
        const wf_real *bias = !acc && j->bias ? j->bias + j->n0 : NULL; /* the first sums only */
        const wf_real *slice = j->bp + (size_t)(k - j->k0) * j->ncp;
        for (int i0 = i_begin; i0 < i_end; i0 += MC) {
            const int m = MIN(MC, i_end - i0);
            pack_a(ap, j->a + (size_t)i0 * j->ars + (size_t)k * j->acs, j->ars, j->acs, m, kc);
            for (int j0 = c_begin; j0 < c_end; j0 += WF_NR) {
                const int nr = MIN(WF_NR, c_end - j0);
                const wf_real *bpanel = slice + (size_t)j0 * kc;
                for (int r0 = 0; r0 < m; r0 += WF_MR) {
                    /* a symmetric C: tiles wholly below the diagonal are the mirror's */
                    if (j->upper && j->n0 + j0 + WF_NR <= i0 + r0) continue;
                    wf_real *c = j->c + (size_t)(i0 + r0) * j->ldc + j->n0 + j0;
                    const int mr = MIN(WF_MR, m - r0);
                    const wf_real *add = bias ? bias + j0 : NULL;
                    if (mr == WF_MR && nr == WF_NR)
                        micro(kc, ap + (size_t)r0 * kc, bpanel, c, j->ldc, acc, add);
                    else
                        micro_edge(kc, ap + (size_t)r0 * kc, bpanel, c, j->ldc, acc, add, mr, nr);
                }
            }
        }
    }
}

/* Columns [n0, n0 + nc) of B, sums [k0, k0 + kn), packed at bp: the tasks for `threads`.
 * Products: MC-row blocks, a few tasks per thread, each task a share of the blocks that
 * differs from the others by at most one block (so no thread is left with a long last
 * task); when rows are few, column ranges too (each extra column range packs its rows of A
 * again). Packing: panels, two shares per thread. */
static void plan_chunk(mm_job *j, wf_real *bp, int n0, int nc, int k0, int kn, int threads) {
    j->bp = bp;
    j->n0 = n0, j->nc = nc, j->k0 = k0, j->kn = kn;
    j->ncp = (nc + WF_NR - 1) / WF_NR * WF_NR;
    j->panels = j->ncp / WF_NR;
    const int want = threads > 1 ? 3 * threads : 1;
    j->row_blocks = (j->M + MC - 1) / MC;
    j->col_units = (nc + COL_UNIT - 1) / COL_UNIT;
    j->row_tasks = MIN(j->row_blocks, want);
    j->col_tasks = j->row_tasks < want ? MIN(j->col_units, (want + j->row_tasks - 1) / j->row_tasks) : 1;
    j->product_tasks = j->row_tasks * j->col_tasks;
    j->pack_tasks = MIN(j->panels, 2 * threads);
}

/* Several products' tasks as one run: task t goes to the first job whose count it is under. */
typedef struct {
    mm_job *jobs;
    int n;
} mm_batch;

static void batch_pack(void *ctx, int task) {
    const mm_batch *b = ctx;
    for (int i = 0; i < b->n; task -= b->jobs[i++].pack_tasks)
        if (task < b->jobs[i].pack_tasks) {
            pack_task(&b->jobs[i], task);
            return;
        }
}

static void batch_product(void *ctx, int task) {
    const mm_batch *b = ctx;
    for (int i = 0; i < b->n; task -= b->jobs[i++].product_tasks)
        if (task < b->jobs[i].product_tasks) {
            product_task(&b->jobs[i], task);
            return;
        }
}

/* One chunk (of each job): packed, then multiplied, by the pool's threads (two runs) or by
 * the caller when pool is NULL. */
static void run_chunks(mm_job *jobs, int n, wf_pool *pool) {
    mm_batch b = {.jobs = jobs, .n = n};
    int packs = 0, products = 0;
    for (int i = 0; i < n; i++) packs += jobs[i].pack_tasks, products += jobs[i].product_tasks;
    wf_pool_run(pool, packs, batch_pack, &b);
    wf_pool_run(pool, products, batch_product, &b);
}

/* One product through a buffer of cap reals: chunks in order of columns, then of sums (each
 * element still adds its KC slices in order). Without a pool the chunk is KC x NC_STACK; with
 * one, as much of B as fits (usually all of it). */
static void mm_chunked(mm_job *j, wf_real *buf, size_t cap, wf_pool *pool) {
    const int threads = wf_pool_threads(pool), npad = (j->N + WF_NR - 1) / WF_NR * WF_NR;
    const int nc = MIN(npad, MAX(WF_NR, (int)(cap / (size_t)MIN(j->K, KC)) / WF_NR * WF_NR));
    const int kn = MIN(j->K, MAX(KC, (int)(cap / (size_t)nc) / KC * KC));
    for (int n0 = 0; n0 < j->N; n0 += nc)
        for (int k0 = 0; k0 < j->K; k0 += kn) {
            plan_chunk(j, buf, n0, MIN(nc, j->N - n0), k0, MIN(kn, j->K - k0), threads);
            run_chunks(j, 1, pool);
        }
}

/* Without a pool: the chunk on this thread's stack. */
static __attribute__((noinline)) void mm_alone(mm_job *j) {
    wf_real bp[KC * NC_STACK] __attribute__((aligned(64)));
    mm_chunked(j, bp, sizeof bp / sizeof bp[0], NULL);
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

/* What stays on the caller: no product, or no sum (C = 0, the bias, or unchanged); a few
 * rows (the bias first, then added to). */
static int mm_trivial(const wf_mm *p) {
    if (p->M <= 0 || p->N <= 0) return 1;
    if (p->K <= 0 || p->M < 4) {
        if (!p->accumulate)
            for (int i = 0; i < p->M; i++) {
                wf_real *c = p->c + (size_t)i * p->ldc;
                if (p->bias) memcpy(c, p->bias, (size_t)p->N * sizeof(wf_real));
                else if (p->K <= 0) memset(c, 0, (size_t)p->N * sizeof(wf_real));
            }
        if (p->K <= 0) return 1;
        const mm_job j = {.c = p->c, .ldc = p->ldc, .a = p->a, .ars = p->ars, .acs = p->acs, .b = p->b, .brs = p->brs,
                          .bcs = p->bcs, .M = p->M, .N = p->N, .K = p->K, .accumulate = p->accumulate || p->bias};
        mm_rows(&j);
        return 1;
    }
    return 0;
}

void wf_matmul_many(const wf_mm *p, int n, wf_pool *pool) {
    mm_job jobs[WF_MM_MAX];
    int count = 0;
    double flops = 0;
    for (int i = 0; i < n && i < WF_MM_MAX; i++) {
        if (mm_trivial(&p[i])) continue;
        jobs[count++] = (mm_job){.c = p[i].c, .ldc = p[i].ldc, .a = p[i].a, .b = p[i].b, .ars = p[i].ars,
                                 .acs = p[i].acs, .brs = p[i].brs, .bcs = p[i].bcs, .M = p[i].M, .N = p[i].N,
                                 .K = p[i].K, .accumulate = p[i].accumulate, .upper = p[i].upper,
                                 .bias = p[i].accumulate ? NULL : p[i].bias};
        flops += (double)p[i].M * p[i].N * p[i].K;
    }
    if (count == 0) return;
    if (flops < (1 << 19)) pool = NULL; /* below ~1 MFLOP waking workers costs more */
    size_t bytes = 0;
    wf_real *scratch = pool ? wf_pool_scratch(pool, &bytes) : NULL;
    const size_t cap = bytes / sizeof(wf_real);
    if (!scratch || cap < (size_t)KC * NC_STACK) {
        for (int i = 0; i < count; i++) mm_alone(&jobs[i]);
        return;
    }
    /* every B whole in the scratch: one packing run and one product run for all of them */
    size_t need = 0;
    for (int i = 0; i < count; i++) need += (size_t)jobs[i].K * ((jobs[i].N + WF_NR - 1) / WF_NR * WF_NR);
    if (need <= cap) {
        wf_real *bp = scratch;
        for (int i = 0; i < count; i++) {
            plan_chunk(&jobs[i], bp, 0, jobs[i].N, 0, jobs[i].K, wf_pool_threads(pool));
            bp += (size_t)jobs[i].K * jobs[i].ncp;
        }
        run_chunks(jobs, count, pool);
    } else {
        for (int i = 0; i < count; i++) mm_chunked(&jobs[i], scratch, cap, pool);
    }
}

int wf_matmul_tasks(const wf_mm *p, int threads, int (*r)[4], int max, int *block) {
    mm_job j = {.M = p->M, .N = p->N, .K = p->K};
    plan_chunk(&j, NULL, 0, p->N, 0, p->K, threads);
    for (int t = 0; t < j.product_tasks && t < max; t++) task_ranges(&j, t, r[t]);
    *block = MC;
    return j.product_tasks;
}

void wf_matmul(wf_real *c, size_t ldc, const wf_real *a, size_t ars, size_t acs, const wf_real *b, size_t brs,
               size_t bcs, int M, int N, int K, int accumulate, wf_pool *pool) {
    const wf_mm p = {.c = c, .ldc = ldc, .a = a, .ars = ars, .acs = acs, .b = b, .brs = brs, .bcs = bcs, .M = M, .N = N,
                     .K = K, .accumulate = accumulate};
    wf_matmul_many(&p, 1, pool);
}

const char *wf_simd_name(void) {
#if defined(WF_REFERENCE_KERNELS)
    return "reference";
#else
    return WF_SIMD_NAME;
#endif
}
