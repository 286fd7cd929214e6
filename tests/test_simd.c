#define _GNU_SOURCE /* nanosleep (test_pool_gives_up), pthread_getattr_np (test_worker_stack) */
/* The fast kernels against their plain scalar references (the *_scalar functions in src/), on shapes
 * that hit every edge: sizes that are not multiples of the vector width or the register
 * tile, sums deeper than one KC block, transposed operands, the causal triangle, padding,
 * cross-attention and single-row decoding. Then threads: every threaded op must give
 * bit-for-bit the single-thread result.
 *
 * Tolerance: |fast - ref| <= 2e-5 * max|ref| over each tensor (plus a 1e-6 floor for
 * tensors near zero). The kernels sum in another order (blocked partial sums, vector lanes,
 * FMA) and use a polynomial exp, so float rounding differs by a few ulps times the number
 * of terms; 2e-5 is ~150 ulps of the tensor's scale, far below any real indexing error,
 * which shows up as O(1). */
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "model.h"

#if defined(WF_DOUBLE)
#error "test_simd compares the float build's kernels"
#endif

#define TOL 2e-5

static wf_rng rng;

static float *randv(size_t n, double scale) {
    float *x = wf_alloc(n ? n : 1, sizeof(float));
    for (size_t i = 0; i < n; i++) x[i] = (float)(scale * wf_rng_normal(&rng));
    return x;
}

static float *copyv(const float *x, size_t n) {
    float *y = wf_alloc(n ? n : 1, sizeof(float));
    memcpy(y, x, n * sizeof(float));
    return y;
}

static double worst_seen = 0;

static void compare(const char *what, const float *fast, const float *ref, size_t n) {
    double scale = 0, worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(ref[i]));
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)fast[i] - ref[i]);
        if (!(e <= worst)) {
            worst = e;
            at = i;
        }
    }
    double rel = worst / fmax(scale, 1e-6);
    if (rel > worst_seen) worst_seen = rel;
    CHECK(rel <= TOL, "%s: element %zu fast %.9g ref %.9g (error %.3g of max %.3g)", what, at, fast[at], ref[at],
          worst, scale);
}

static void same(const char *what, const float *a, const float *b, size_t n) {
    CHECK(memcmp(a, b, n * sizeof(float)) == 0, "%s: the threaded result differs from the single-thread one", what);
}

/* ---- linear: forward, then backward accumulating onto non-zero gradients ---- */
static void test_linear(int N, int C, int OC, int bias, wf_pool *pool) {
    char name[96];
    float *x = randv((size_t)N * C, 1), *w = randv((size_t)OC * C, 0.2), *b = bias ? randv(OC, 1) : NULL;
    float *dout = randv((size_t)N * OC, 1);
    float *out = randv((size_t)N * OC, 1), *out_ref = randv((size_t)N * OC, 1);
    wf_linear_forward(out, x, w, b, N, C, OC, NULL);
    wf_linear_forward_scalar(out_ref, x, w, b, N, C, OC);
    snprintf(name, sizeof name, "linear fwd N=%d C=%d OC=%d", N, C, OC);
    compare(name, out, out_ref, (size_t)N * OC);

    float *dx = randv((size_t)N * C, 1), *dw = randv((size_t)OC * C, 1), *db = randv(OC, 1);
    float *dx_ref = copyv(dx, (size_t)N * C), *dw_ref = copyv(dw, (size_t)OC * C), *db_ref = copyv(db, OC);
    float *dx_t = copyv(dx, (size_t)N * C), *dw_t = copyv(dw, (size_t)OC * C), *db_t = copyv(db, OC);
    wf_linear_backward(dx, dw, db, dout, x, w, N, C, OC, NULL);
    wf_linear_backward_scalar(dx_ref, dw_ref, db_ref, dout, x, w, N, C, OC);
    snprintf(name, sizeof name, "linear bwd dinp N=%d C=%d OC=%d", N, C, OC);
    compare(name, dx, dx_ref, (size_t)N * C);
    snprintf(name, sizeof name, "linear bwd dw N=%d C=%d OC=%d", N, C, OC);
    compare(name, dw, dw_ref, (size_t)OC * C);
    snprintf(name, sizeof name, "linear bwd db N=%d C=%d OC=%d", N, C, OC);
    compare(name, db, db_ref, OC);
    if (pool) {
        float *out_t = randv((size_t)N * OC, 1);
        wf_linear_forward(out_t, x, w, b, N, C, OC, pool);
        wf_linear_backward(dx_t, dw_t, db_t, dout, x, w, N, C, OC, pool);
        snprintf(name, sizeof name, "linear threads N=%d C=%d OC=%d", N, C, OC);
        same(name, out_t, out, (size_t)N * OC);
        same(name, dx_t, dx, (size_t)N * C);
        same(name, dw_t, dw, (size_t)OC * C);
        same(name, db_t, db, OC);
        wf_free(out_t);
    }
    wf_free(x); wf_free(w); wf_free(b); wf_free(dout); wf_free(out); wf_free(out_ref);
    wf_free(dx); wf_free(dw); wf_free(db); wf_free(dx_ref); wf_free(dw_ref); wf_free(db_ref);
    wf_free(dx_t); wf_free(dw_t); wf_free(db_t);
}

/* ---- the matrix product's own paths: a B larger than the pool's scratch (packed chunk by
 * chunk, each by all threads), and several products as one job (wf_matmul_many) ---- */
static void matmul_ref(float *c, const float *a, const float *b, int M, int N, int K, int accumulate) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float s = 0;
            for (int k = 0; k < K; k++) s += a[(size_t)i * K + k] * b[(size_t)k * N + j];
            c[(size_t)i * N + j] = accumulate ? c[(size_t)i * N + j] + s : s;
        }
}

static void test_matmul(wf_pool *pool) {
    size_t bytes = 0;
    (void)wf_pool_scratch(pool, &bytes);
    /* B rows of 1030 columns, deep enough not to fit the scratch: K x 1030 floats > bytes */
    const int M = 13, N = 1030, K = (int)(bytes / sizeof(float) / 1024) + 300;
    float *a = randv((size_t)M * K, 1), *b = randv((size_t)K * N, 1);
    float *c = randv((size_t)M * N, 1), *c_ref = copyv(c, (size_t)M * N), *c_t = copyv(c, (size_t)M * N);
    wf_matmul(c, (size_t)N, a, (size_t)K, 1, b, (size_t)N, 1, M, N, K, 1, NULL);
    matmul_ref(c_ref, a, b, M, N, K, 1);
    compare("matmul K=deep", c, c_ref, (size_t)M * N);
    if (pool) {
        wf_matmul(c_t, (size_t)N, a, (size_t)K, 1, b, (size_t)N, 1, M, N, K, 1, pool);
        same("matmul chunked by the pool", c_t, c, (size_t)M * N);
    }
    /* three products as one job: a regular one, a transposed one, a few-row one */
    const int m = 70, n = 90, k = 300;
    float *x = randv((size_t)m * k, 1), *y = randv((size_t)k * n, 1);
    float *o[3], *o_one[3];
    for (int i = 0; i < 3; i++) o[i] = randv((size_t)m * n, 1), o_one[i] = copyv(o[i], (size_t)m * n);
    const wf_mm p[3] = {
        {.c = o[0], .ldc = (size_t)n, .a = x, .ars = (size_t)k, .acs = 1, .b = y, .brs = (size_t)n, .bcs = 1, .M = m, .N = n, .K = k},
        {.c = o[1], .ldc = (size_t)m, .a = x, .ars = (size_t)k, .acs = 1, .b = x, .brs = 1, .bcs = (size_t)k, .M = m, .N = m, .K = k,
         .accumulate = 1},
        {.c = o[2], .ldc = (size_t)n, .a = x, .ars = (size_t)k, .acs = 1, .b = y, .brs = (size_t)n, .bcs = 1, .M = 3, .N = n, .K = k}};
    wf_matmul_many(p, 3, pool);
    for (int i = 0; i < 3; i++)
        wf_matmul(o_one[i], p[i].ldc, p[i].a, p[i].ars, p[i].acs, p[i].b, p[i].brs, p[i].bcs, p[i].M, p[i].N, p[i].K,
                  p[i].accumulate, NULL);
    for (int i = 0; i < 3; i++) CHECK(memcmp(o[i], o_one[i], (size_t)m * n * sizeof(float)) == 0, "matmul_many: product %d differs from wf_matmul alone", i);
    wf_free(a); wf_free(b); wf_free(c); wf_free(c_ref); wf_free(c_t); wf_free(x); wf_free(y);
    for (int i = 0; i < 3; i++) wf_free(o[i]), wf_free(o_one[i]);
}

/* ---- a symmetric product (.upper, Newton-Schulz's X X^T): the tiles that reach the
 * diagonal or above give those elements bit for bit as the full product, and the mirror of
 * them is the full product's lower triangle (the same pairs multiplied in the same order) */
static void test_matmul_upper(wf_pool *pool) {
    const int shapes[][2] = {{64, 64}, {64, 256}, {40, 72}, {13, 5}, {37, 300}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int r = shapes[s][0], k = shapes[s][1];
        float *x = randv((size_t)r * k, 1), *full = randv((size_t)r * r, 1), *up = copyv(full, (size_t)r * r);
        wf_matmul(full, (size_t)r, x, (size_t)k, 1, x, 1, (size_t)k, r, r, k, 0, pool);
        const wf_mm p = {.c = up, .ldc = (size_t)r, .a = x, .ars = (size_t)k, .acs = 1, .b = x, .brs = 1, .bcs = (size_t)k,
                         .M = r, .N = r, .K = k, .upper = 1};
        wf_matmul_many(&p, 1, pool);
        int upper_same = 1, mirror_same = 1;
        for (int i = 0; i < r; i++)
            for (int j = 0; j < r; j++) {
                if (j >= i) upper_same &= memcmp(&up[i * r + j], &full[i * r + j], sizeof(float)) == 0;
                else mirror_same &= memcmp(&up[j * r + i], &full[i * r + j], sizeof(float)) == 0;
            }
        CHECK(upper_same, "matmul upper %dx%d (K %d, %s): an element on or above the diagonal differs from the full "
              "product", r, r, k, pool ? "pool" : "one thread");
        CHECK(mirror_same, "matmul upper %dx%d (K %d): the full product is not symmetric bit for bit", r, r, k);
        wf_free(x); wf_free(full); wf_free(up);
    }
}

/* ---- how threads share out a product (matmul.c's plan): every element in exactly one
 * task; row shares that differ by at most one block, so no thread waits on a long last task
 * (1024 rows in 32-row blocks over 6 tasks: 6 6 5 5 5 5, not 6 6 6 6 6 2); column ranges
 * that start on a 64-byte line, so two threads never write one line of C at once ---- */
static void test_matmul_plan(void) {
    static const int shapes[][2] = {{1024, 384}, {1024, 1536}, {384, 1024}, {1536, 384}, {96, 1000},
                                    {13, 1030}, {4096, 64}, {64, 4096}, {512, 96}, {1000, 8}};
    enum { MAXT = 256 };
    static int r[MAXT][4];
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int threads = 2; threads <= 16; threads++) {
            const int M = shapes[s][0], N = shapes[s][1];
            const wf_mm p = {.M = M, .N = N, .K = 300};
            int block = 0;
            const int tasks = wf_matmul_tasks(&p, threads, r, MAXT, &block);
            CHECK(tasks >= 1 && tasks <= MAXT, "plan %dx%d, %d threads: %d tasks", M, N, threads, tasks);
            if (tasks < 1 || tasks > MAXT) continue;
            double area = 0;
            int least = 1 << 30, most = 0, ok = 1;
            for (int t = 0; t < tasks; t++) {
                const int *a = r[t];
                ok &= a[0] >= 0 && a[0] < a[1] && a[1] <= M && a[2] >= 0 && a[2] < a[3] && a[3] <= N;
                ok &= a[2] % (64 / (int)sizeof(float)) == 0 && (a[3] == N || a[3] % (64 / (int)sizeof(float)) == 0);
                area += (double)(a[1] - a[0]) * (a[3] - a[2]);
                const int blocks = (a[1] - a[0] + block - 1) / block;
                least = blocks < least ? blocks : least;
                most = blocks > most ? blocks : most;
                for (int u = 0; u < t; u++) /* no two tasks share an element */
                    ok &= a[1] <= r[u][0] || r[u][1] <= a[0] || a[3] <= r[u][2] || r[u][3] <= a[2];
            }
            CHECK(ok && area == (double)M * N, "plan %dx%d, %d threads: the tasks do not cover C once, or a column "
                  "range starts inside a 64-byte line", M, N, threads);
            CHECK(most - least <= 1, "plan %dx%d, %d threads: row shares of %d to %d blocks of %d rows", M, N, threads,
                  least, most, block);
        }
}

/* ---- RoPE over N rows of 4 heads (C wide) at positions 0..N-1, forward then backward, in
 * place: the vector pairs and the scalar tail against the plain rotation, and threads ---- */
static void test_rope(int N, int C, wf_pool *pool) {
    const int HS = C / 4, h = HS / 2;
    const size_t n = (size_t)N * C;
    float *cs = randv((size_t)N * h, 1), *sn = randv((size_t)N * h, 1), *x = randv(n, 1);
    float *r1 = copyv(x, n), *r2 = copyv(x, n), *ref = copyv(x, n);
    for (int r = 0; r < N; r++)
        for (int hd = 0; hd < 4; hd++)
            for (int i = 0; i < h; i++) {
                float *lo = ref + (size_t)r * C + hd * HS, a = lo[i], e = lo[i + h];
                lo[i] = a * cs[r * h + i] - e * sn[r * h + i];
                lo[i + h] = e * cs[r * h + i] + a * sn[r * h + i];
            }
    wf_rope_forward(r1, cs, sn, 1, N, 4, HS, C, 0, NULL);
    CHECK(!memcmp(r1, ref, n * sizeof(float)), "rope N=%d C=%d: differs from the plain rotation", N, C);
    wf_rope_forward(r2, cs, sn, 1, N, 4, HS, C, 0, pool);
    same("rope threads", r2, r1, n);
    wf_rope_backward(r1, cs, sn, 1, N, 4, HS, C, 0, NULL);
    wf_rope_backward(r2, cs, sn, 1, N, 4, HS, C, 0, pool);
    same("rope backward threads", r2, r1, n);
    wf_free(cs), wf_free(sn), wf_free(x), wf_free(r1), wf_free(r2), wf_free(ref);
}

/* ---- attention ---- */
static void test_attention(const char *name, wf_attn_dims d, int packed, wf_pool *pool) {
    char what[96];
    const size_t C = (size_t)d.NH * d.HS, KC = (size_t)(d.KV ? d.KV : d.NH) * d.HS; /* k, v: KC wide */
    const size_t qn = (size_t)d.B * d.Tq * d.q_stride, kn = (size_t)d.B * d.Tk * d.kv_stride;
    const size_t on = (size_t)d.B * d.Tq * C, an = (size_t)d.B * d.NH * d.Tq * d.Tk;
    float *qbuf = randv(qn, 1), *kvbuf = packed ? qbuf : randv(kn, 1);
    const float *q = qbuf, *k = kvbuf + (packed ? C : 0), *v = kvbuf + (packed ? C + KC : KC);
    float *out = randv(on, 1), *out_ref = randv(on, 1), *att = randv(an, 1), *att_ref = randv(an, 1);
    wf_attention_forward(out, att, q, k, v, &d, NULL);
    wf_attention_forward_scalar(out_ref, att_ref, q, k, v, &d);
    snprintf(what, sizeof what, "%s out", name);
    compare(what, out, out_ref, on);
    snprintf(what, sizeof what, "%s att", name);
    compare(what, att, att_ref, an);

    float *dout = randv(on, 1);
    float *dq = randv(qn, 1), *dkv = packed ? dq : randv(kn, 1);
    float *dq_ref = copyv(dq, qn), *dkv_ref = packed ? dq_ref : copyv(dkv, kn);
    float *dq_t = copyv(dq, qn), *dkv_t = packed ? dq_t : copyv(dkv, kn);
    const size_t ko = packed ? C : 0, vo = packed ? C + KC : KC;
    wf_attention_backward(dq, dkv + ko, dkv + vo, dout, out_ref, att_ref, q, k, v, &d, NULL);
    wf_attention_backward_scalar(dq_ref, dkv_ref + ko, dkv_ref + vo, dout, out_ref, att_ref, q, k, v, &d);
    snprintf(what, sizeof what, "%s dq", name);
    compare(what, dq, dq_ref, qn);
    if (!packed) {
        snprintf(what, sizeof what, "%s dkv", name);
        compare(what, dkv, dkv_ref, kn);
    }
    if (pool) {
        float *out_t = randv(on, 1), *att_t = randv(an, 1);
        wf_attention_forward(out_t, att_t, q, k, v, &d, pool);
        wf_attention_backward(dq_t, dkv_t + ko, dkv_t + vo, dout, out_ref, att_ref, q, k, v, &d, pool);
        snprintf(what, sizeof what, "%s threads", name);
        same(what, out_t, out, on);
        same(what, att_t, att, an);
        same(what, dq_t, dq, qn);
        if (!packed) same(what, dkv_t, dkv, kn);
        wf_free(out_t); wf_free(att_t);
    }
    wf_free(qbuf); wf_free(out); wf_free(out_ref); wf_free(att); wf_free(att_ref); wf_free(dout);
    wf_free(dq); wf_free(dq_ref); wf_free(dq_t);
    if (!packed) {
        wf_free(kvbuf); wf_free(dkv); wf_free(dkv_ref); wf_free(dkv_t);
    }
}

/* ---- pointwise, norm, loss, optimizer ---- */
static void test_rowwise(int N, int C, wf_pool *pool) {
    char what[96];
    const size_t n = (size_t)N * C;
    float *x = randv(n, 3), *w = randv(C, 1), *b = randv(C, 1), *dout = randv(n, 1);
    float *o = randv(n, 1), *o_ref = randv(n, 1), *mean = randv(N, 1), *rstd = randv(N, 1), *mean_ref = randv(N, 1),
          *rstd_ref = randv(N, 1);
    wf_layernorm_forward(o, mean, rstd, x, w, b, N, C, 1e-5f, NULL);
    wf_layernorm_forward_scalar(o_ref, mean_ref, rstd_ref, x, w, b, N, C, 1e-5f);
    snprintf(what, sizeof what, "layernorm fwd C=%d", C);
    compare(what, o, o_ref, n);
    compare(what, rstd, rstd_ref, N);
    float *dx = randv(n, 1), *dw = randv(C, 1), *db = randv(C, 1);
    float *dx_ref = copyv(dx, n), *dw_ref = copyv(dw, C), *db_ref = copyv(db, C);
    float *dx_t = copyv(dx, n), *dw_t = copyv(dw, C), *db_t = copyv(db, C);
    wf_layernorm_backward(dx, dw, db, dout, x, mean_ref, rstd_ref, w, N, C, NULL);
    wf_layernorm_backward_scalar(dx_ref, dw_ref, db_ref, dout, x, mean_ref, rstd_ref, w, N, C);
    snprintf(what, sizeof what, "layernorm bwd C=%d", C);
    compare(what, dx, dx_ref, n);
    compare(what, dw, dw_ref, C);
    compare(what, db, db_ref, C);
    if (pool) {
        /* threaded: rows shared out, the parameters' gradients by channel */
        float *o_t = randv(n, 1), *mean_t = randv(N, 1), *rstd_t = randv(N, 1);
        wf_layernorm_forward(o_t, mean_t, rstd_t, x, w, b, N, C, 1e-5f, pool);
        wf_layernorm_backward(dx_t, dw_t, db_t, dout, x, mean_ref, rstd_ref, w, N, C, pool);
        snprintf(what, sizeof what, "layernorm threads N=%d C=%d", N, C);
        same(what, o_t, o, n);
        same(what, rstd_t, rstd, N);
        same(what, dx_t, dx, n);
        same(what, dw_t, dw, C);
        same(what, db_t, db, C);
        /* RMSNorm (scalar loops only): threaded against the caller alone */
        float *r1 = randv(n, 1), *r2 = randv(n, 1), *s1 = randv(N, 1), *s2 = randv(N, 1);
        float *g1 = copyv(dx, n), *g2 = copyv(dx, n), *w1 = copyv(dw, C), *w2 = copyv(dw, C);
        wf_rmsnorm_forward(r1, s1, x, w, N, C, 1e-5f, NULL);
        wf_rmsnorm_forward(r2, s2, x, w, N, C, 1e-5f, pool);
        wf_rmsnorm_backward(g1, w1, dout, x, s1, w, N, C, NULL);
        wf_rmsnorm_backward(g2, w2, dout, x, s1, w, N, C, pool);
        snprintf(what, sizeof what, "rmsnorm threads N=%d C=%d", N, C);
        same(what, r2, r1, n);
        same(what, s2, s1, N);
        same(what, g2, g1, n);
        same(what, w2, w1, C);
        /* the residual add */
        wf_residual_forward(r1, x, dout, (int)n, NULL);
        wf_residual_forward(r2, x, dout, (int)n, pool);
        same("residual threads", r2, r1, n);
        wf_free(o_t); wf_free(mean_t); wf_free(rstd_t);
        wf_free(r1); wf_free(r2); wf_free(s1); wf_free(s2); wf_free(g1); wf_free(g2); wf_free(w1); wf_free(w2);
    }
    wf_free(dx_t); wf_free(dw_t); wf_free(db_t);

    /* GELU over a wide range, including where tanh saturates */
    wf_gelu_forward(o, x, (int)n, NULL);
    wf_gelu_forward_scalar(o_ref, x, (int)n);
    snprintf(what, sizeof what, "gelu fwd n=%zu", n);
    compare(what, o, o_ref, n);
    memcpy(dx_ref, dx, n * sizeof(float));
    wf_gelu_backward(dx, dout, x, (int)n, NULL);
    wf_gelu_backward_scalar(dx_ref, dout, x, (int)n);
    snprintf(what, sizeof what, "gelu bwd n=%zu", n);
    compare(what, dx, dx_ref, n);

    /* cross-entropy, one ignored row */
    int32_t *targets = malloc((size_t)N * sizeof(int32_t));
    for (int i = 0; i < N; i++) targets[i] = (int32_t)(wf_rng_u32(&rng) % (uint32_t)C);
    targets[N / 2] = -1;
    float *losses = randv(N, 1), *losses_ref = randv(N, 1);
    int count = 0, count_ref = 0;
    double total = wf_crossentropy_forward(losses, &count, o, x, targets, N, C, NULL);
    double total_ref = wf_crossentropy_forward_scalar(losses_ref, &count_ref, o_ref, x, targets, N, C);
    snprintf(what, sizeof what, "crossentropy V=%d", C);
    compare(what, o, o_ref, n);
    compare(what, losses, losses_ref, N);
    CHECK(count == count_ref && fabs(total - total_ref) <= TOL * fabs(total_ref), "%s: total %.9g vs %.9g", what,
          total, total_ref);
    if (pool) {
        float *losses_t = randv(N, 1), *o_t = randv(n, 1);
        int count_t = 0;
        double total_t = wf_crossentropy_forward(losses_t, &count_t, o_t, x, targets, N, C, pool);
        snprintf(what, sizeof what, "crossentropy threads V=%d", C);
        same(what, o_t, o, n);
        same(what, losses_t, losses, N);
        CHECK(total_t == total && count_t == count, "%s: total %.17g vs %.17g", what, total_t, total);
        wf_crossentropy_backward(o_t, 0.25f, o_t, targets, N, C, pool);
        wf_crossentropy_backward(o, 0.25f, o, targets, N, C, NULL);
        same(what, o_t, o, n);
        wf_free(losses_t); wf_free(o_t);
    }

    /* AdamW: the same parameters and moments through a few steps */
    wf_optim opt;
    wf_optim_default(&opt);
    opt.lr = 1e-2f;
    float *p = copyv(x, n), *p_ref = copyv(x, n), *m = randv(n, 0), *m_ref = randv(n, 0), *v = randv(n, 0),
          *v_ref = randv(n, 0);
    memset(m, 0, n * sizeof(float)); memset(m_ref, 0, n * sizeof(float));
    memset(v, 0, n * sizeof(float)); memset(v_ref, 0, n * sizeof(float));
    for (int t = 1; t <= 3; t++) {
        wf_adamw_update(p, m, v, dout, n, 0.5f, &opt, opt.lr, 1, t);
        wf_adamw_update_scalar(p_ref, m_ref, v_ref, dout, n, 0.5f, &opt, opt.lr, 1, t);
    }
    snprintf(what, sizeof what, "adamw n=%zu", n);
    compare(what, p, p_ref, n);
    compare(what, m, m_ref, n);
    compare(what, v, v_ref, n);
    /* the check: its shortcut from the largest magnitudes passes these; an element whose update
     * would overflow, or a negative v that its bound cannot cover, is found one by one */
    const size_t at = n / 3;
    CHECK(wf_adamw_check(p, m, v, dout, n, 0.5f, &opt, opt.lr, 1, 4) == n, "adamw check: a sane step fails");
    const float keep = p[at];
    p[at] = 3e38f;
    CHECK(wf_adamw_check(p, m, v, dout, n, 0.5f, &opt, -1e3f, 1, 4) == at, "adamw check: the overflowing element %zu is not found", at);
    p[at] = keep;
    const float keep_v = v[at];
    v[at] = -1;
    CHECK(wf_adamw_check(p, m, v, dout, n, 0.5f, &opt, opt.lr, 1, 4) == at, "adamw check: a negative v at %zu passes", at);
    v[at] = keep_v;

    wf_free(x); wf_free(w); wf_free(b); wf_free(dout); wf_free(o); wf_free(o_ref); wf_free(mean); wf_free(rstd);
    wf_free(mean_ref); wf_free(rstd_ref); wf_free(dx); wf_free(dw); wf_free(db); wf_free(dx_ref); wf_free(dw_ref);
    wf_free(db_ref); wf_free(losses); wf_free(losses_ref); wf_free(p); wf_free(p_ref); wf_free(m); wf_free(m_ref);
    wf_free(v); wf_free(v_ref); free(targets);
}

#if defined(WF_THREADS)
/* The whole model: a training step with 2 threads equals the single-thread step bit for bit. */
static void test_model_threads(void) {
    wf_config cfg;
    wf_config_default(&cfg);
    cfg.n_layer = 2;
    wf_model *m1 = wf_model_create(), *m2 = wf_model_create();
    CHECK_OK(wf_model_init(m1, &cfg), m1);
    CHECK_OK(wf_model_set_threads(m2, 2), m2);
    CHECK_OK(wf_model_init(m2, &cfg), m2);
    int32_t in[4 * 64], tg[4 * 64];
    for (int i = 0; i < 4 * 64; i++) {
        in[i] = (int32_t)(wf_rng_u32(&rng) % 96);
        tg[i] = (int32_t)(wf_rng_u32(&rng) % 96);
    }
    for (int s = 0; s < 2; s++) {
        CHECK_OK(step_ids(m1, in, tg, 4, 64, NULL), m1);
        CHECK_OK(step_ids(m2, in, tg, 4, 64, NULL), m2);
    }
    same("model step threads", wf_model_params(m2), wf_model_params(m1), (size_t)param_count(m1));
    CHECK_OK(wf_model_set_threads(m2, 1), m2);
    wf_model_free(m1);
    wf_model_free(m2);
}
#endif

#if defined(WF_THREADS)
/* Decoding one token is too little work to share: a 2-thread tiny model's gen_next never
 * wakes its pool. A wake costs the caller a wait for every worker to check in; when the
 * few-row linear split its one thread's work into three tasks, every token woke the pool
 * six times a layer and a 2-thread model generated about 10x slower than a 1-thread one. */
static void test_decode_stays_on_caller(void) {
    wf_config cfg;
    wf_config_default(&cfg);
    wf_model *m = wf_model_create();
    CHECK_OK(wf_model_set_threads(m, 2), m);
    CHECK_OK(wf_model_init(m, &cfg), m);
    const int32_t prompt[8] = {5, 17, 3, 40, 2, 9, 33, 11};
    CHECK_OK(wf_model_gen_start(m, prompt, 8, 3), m);
    const wf_sampling s = {.temperature = 1, .top_k = 0, .top_p = 1};
    const unsigned before = wf_pool_jobs(m->pool);
    int32_t token = 0;
    for (int i = 0; i < 40 && i + 8 < cfg.context; i++) CHECK_OK(wf_model_gen_next(m, &s, NULL, &token, NULL, 0, NULL), m);
    CHECK(m->pool && wf_pool_jobs(m->pool) == before, "decoding 40 tokens woke the pool %u times",
          wf_pool_jobs(m->pool) - before);
    wf_model_free(m);
}
#endif

#if defined(WF_THREADS)
#include <pthread.h>

/* Every task of every job runs exactly once, on a pool of 4 whose workers join each job when
 * they happen to wake: jobs of 2 to 7 tasks back to back, so a worker late from one job
 * meets the next (a claim against a finished job must fail, not take a task of the next),
 * and the caller returns only when the tasks claimed are done (each task's count is read
 * as soon as its job returns). The caller's tasks are the job's first ones, as many as the
 * pool counted for it (it claims from the front, the workers from the back: pool.c). */
typedef struct {
    _Atomic int runs[8];
    _Atomic int by_caller[8];
    pthread_t caller;
} claim_job;

/* a microsecond or so of work, for the workers to join in */
static void claim_task(void *ctx, int task) {
    claim_job *j = ctx;
    volatile unsigned x = (unsigned)task;
    for (int i = 0; i < 500; i++) x = x * 1664525u + 1013904223u;
    if (pthread_equal(pthread_self(), j->caller)) atomic_store(&j->by_caller[task], 1);
    atomic_fetch_add(&j->runs[task], 1);
}

static void test_pool_claims(void) {
    wf_pool *p;
    CHECK(wf_pool_start(&p, 4, WF_POOL_WAIT) == WF_OK, "could not start a pool of 4 threads");
    if (!p) return;
    const unsigned jobs0 = wf_pool_jobs(p);
    unsigned busy0, tasks0, caller0, busy1, tasks1, caller1;
    wf_pool_counts(p, &busy0, &tasks0, &caller0);
    int bad = 0, jobs = 0, tasks = 0, caller_max = 0, not_first = 0, shared = 0;
    for (int i = 0; i < 10000; i++) {
        claim_job j = {.caller = pthread_self()};
        for (int t = 0; t < 8; t++) {
            atomic_init(&j.runs[t], 0);
            atomic_init(&j.by_caller[t], 0);
        }
        const int n = 2 + i % 6;
        unsigned before, after, x, y;
        wf_pool_counts(p, &x, &y, &before);
        wf_pool_run(p, n, claim_task, &j);
        wf_pool_counts(p, &x, &y, &after);
        if ((int)(after - before) > caller_max) caller_max = (int)(after - before);
        jobs++;
        tasks += n;
        for (int t = 0; t < 8; t++) bad += atomic_load(&j.runs[t]) != (t < n);
        const int mine = (int)(after - before);
        for (int t = 0; t < n; t++) not_first += atomic_load(&j.by_caller[t]) != (t < mine);
        shared += mine < n;
    }
    CHECK(bad == 0, "%d tasks ran other than once over %d jobs", bad, jobs);
    CHECK(not_first == 0, "%d tasks over %d jobs were not where the caller's front claims put them", not_first, jobs);
    printf("pool claims: the workers took part in %d of %d jobs\n", shared, jobs);
    CHECK(wf_pool_jobs(p) - jobs0 == (unsigned)jobs, "the pool counted %u jobs, not %d", wf_pool_jobs(p) - jobs0, jobs);
    wf_pool_counts(p, &busy1, &tasks1, &caller1);
    CHECK(tasks1 - tasks0 == (unsigned)tasks, "the pool counted %u tasks, not %d", tasks1 - tasks0, tasks);
    CHECK(caller1 - caller0 <= (unsigned)tasks && caller_max <= 7, "the caller ran %u of %d tasks, %d in one job of at most 7",
          caller1 - caller0, tasks, caller_max);
    CHECK(busy1 - busy0 <= (unsigned)jobs, "%u busy jobs of %d", busy1 - busy0, jobs);
    wf_pool_free(p);
}
#endif

#if defined(WF_THREADS)
/* A pool whose workers do not check in within its wait gives up (review #14): the workers
 * are detached and told to stop, and the last of them to let go frees the pool. The
 * sanitizer build (WF_SANITIZE, leak check on) fails if a pool is lost or freed under a
 * late worker. */
static void test_pool_gives_up(void) {
    int gave_up = 0;
    for (int i = 0; i < 20; i++) {
        wf_pool *p;
        /* no time at all: gives up unless the 3 workers win the race; or, every other try,
         * gives up whatever they did (a race ThreadSanitizer's slow thread creation loses) */
        const double wait = i % 2 ? 0.0 : -1.0;
        const wf_status s = wf_pool_start(&p, 4, wait);
        CHECK(s == WF_OK || (s == WF_ERR_THREADS && !p), "a pool that gave up: status %s", wf_status_string(s));
        CHECK(wait >= 0 || s == WF_ERR_THREADS, "a pool told to give up started: %s", wf_status_string(s));
        gave_up += s == WF_ERR_THREADS;
        wf_pool_free(p);
    }
    CHECK(gave_up >= 10, "only %d of 20 pools gave up", gave_up);
    /* the late workers exit on their own: give them time to let go before the leak check */
    struct timespec nap = {0, 200 * 1000 * 1000};
    nanosleep(&nap, NULL);
    printf("pool start timeout: %d of 20 pools gave up\n", gave_up);
}
#endif

#if defined(WF_THREADS)
/* Each worker has the stack WF_POOL_STACK sets, and the deepest task (a matrix product's
 * ~560 KB) fits below where a task starts with room: the pool's tasks that run on a worker
 * read their stack's size and how much of it lies below them, and use KERNEL_STACK of it.
 * A worker with the platform's default (8 MB with glibc) would show that the size was not
 * set; one with too little would report it, or crash on the deep frame natively. */
#define KERNEL_STACK (640 << 10)

typedef struct {
    pthread_t caller;
    atomic_int on_workers;
    atomic_llong smallest, largest, least_free; /* bytes */
} stack_probe;

static __attribute__((noinline)) int deep_frame(int seed) {
    volatile char frame[KERNEL_STACK];
    for (size_t i = 0; i < sizeof frame; i += 4096) frame[i] = (char)(seed + i);
    frame[sizeof frame - 1] = (char)seed;
    return frame[0] + frame[sizeof frame - 1];
}

static void at_most(atomic_llong *x, long long v) {
    long long seen = atomic_load(x);
    while (v < seen && !atomic_compare_exchange_weak(x, &seen, v)) {
    }
}

static void probe_task(void *ctx, int task) {
    stack_probe *p = ctx;
    struct timespec nap = {0, 200 * 1000}; /* long enough for the workers to take some tasks */
    nanosleep(&nap, NULL);
    if (pthread_equal(pthread_self(), p->caller)) return;
    pthread_attr_t a;
    void *low = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        pthread_attr_getstack(&a, &low, &size);
        pthread_attr_destroy(&a);
    }
    char here;
    at_most(&p->smallest, (long long)size);
    at_most(&p->least_free, (long long)(&here - (char *)low));
    long long seen = atomic_load(&p->largest);
    while ((long long)size > seen && !atomic_compare_exchange_weak(&p->largest, &seen, (long long)size)) {
    }
    if (&here - (char *)low > KERNEL_STACK + (64 << 10)) (void)deep_frame(task);
    atomic_fetch_add(&p->on_workers, 1);
}

static void test_worker_stack(wf_pool *pool) {
    stack_probe p = {.caller = pthread_self(), .smallest = (long long)1 << 40, .least_free = (long long)1 << 40};
    wf_pool_run(pool, 64, probe_task, &p);
    const int n = atomic_load(&p.on_workers);
    const long long least = atomic_load(&p.smallest), most = atomic_load(&p.largest), room = atomic_load(&p.least_free);
    printf("worker stacks: %d of 64 tasks ran on a worker, stacks of %lld to %lld KB (WF_POOL_STACK %d KB), at least "
           "%lld KB free below a task\n", n, least / 1024, most / 1024, WF_POOL_STACK / 1024, room / 1024);
    CHECK(n > 0, "no task ran on a worker");
    CHECK(least >= WF_POOL_STACK, "a worker's stack is %lld bytes, below WF_POOL_STACK %d", least, WF_POOL_STACK);
    CHECK(most < 2 * WF_POOL_STACK, "a worker's stack is %lld bytes: the platform's default, not WF_POOL_STACK", most);
    CHECK(room > KERNEL_STACK + (64 << 10), "only %lld bytes of a worker's stack are free below a task", room);
}
#endif

int main(void) {
    wf_rng_seed(&rng, 7);
    printf("test_simd: kernels built for %s\n", wf_simd_name());
    wf_pool *pool = NULL;
#if defined(WF_THREADS)
    CHECK(wf_pool_start(&pool, 2, WF_POOL_WAIT) == WF_OK, "could not start a pool of 2 threads");
#endif
    static const int shapes[][3] = {{1, 7, 5},   {2, 33, 17},  {3, 64, 96},   {5, 130, 70}, {50, 130, 70},
                                    {64, 128, 384}, {97, 300, 97}, {33, 520, 41}, {256, 96, 128}, {8, 1, 3},
                                    /* the few-row kernel: decoding, odd rows, the widest batch, odd columns */
                                    {1, 128, 96}, {1, 130, 387}, {17, 512, 128}, {32, 128, 384}, {31, 6, 11},
                                    /* enough rows for the pool to share out the bias gradient's columns */
                                    {600, 20, 203}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        test_linear(shapes[i][0], shapes[i][1], shapes[i][2], (int)(i % 2 == 0), pool);

    test_matmul(pool);
    test_matmul_upper(pool);
    test_matmul_plan();

    static const int32_t lens[3] = {70, 13, 0};
    /* B, NH, HS, Tq, Tk, q and kv strides, then causal, key lengths and by rows where set */
#define DIMS(b, nh, hs, tq, tk, qs, kvs, ...) \
    (wf_attn_dims){.B = b, .NH = nh, .HS = hs, .Tq = tq, .Tk = tk, .q_stride = qs, .kv_stride = kvs, __VA_ARGS__}
    test_attention("attn causal", DIMS(2, 3, 16, 100, 100, 144, 144, .causal = 1), 1, pool);
    test_attention("attn causal hs64", DIMS(1, 2, 64, 130, 130, 384, 384, .causal = 1), 1, pool);
    test_attention("attn padded", DIMS(3, 2, 8, 70, 70, 48, 48, .key_len = lens), 1, pool);
    test_attention("attn cross", DIMS(2, 2, 12, 37, 61, 30, 56, .causal = 0), 0, pool);
    test_attention("attn decode", DIMS(1, 4, 32, 1, 50, 384, 256, .causal = 1), 0, pool);
    test_attention("attn cached", DIMS(1, 2, 6, 2, 9, 12, 24, .causal = 1), 0, pool);
    test_attention("attn prefill", DIMS(1, 4, 32, 16, 40, 384, 256, .causal = 1), 0, pool);
    test_attention("attn prefill by rows", DIMS(1, 4, 32, 17, 33, 384, 256, .causal = 1, .by_rows = 1), 0, pool);
    test_attention("attn by rows, odd head", DIMS(1, 3, 22, 9, 9, 66, 132, .causal = 1, .by_rows = 1), 0, pool);
    /* grouped-query: 6 query heads over 2 key/value heads (packed rows C + 2 KC), multi-query
     * with padding, and decoding over a GQA cache */
    test_attention("attn gqa", DIMS(2, 6, 16, 100, 100, 160, 160, .causal = 1, .KV = 2), 1, pool);
    test_attention("attn mqa padded", DIMS(3, 4, 8, 70, 70, 48, 48, .key_len = lens, .KV = 1), 1, pool);
    test_attention("attn gqa decode", DIMS(1, 8, 16, 1, 50, 256, 64, .causal = 1, .KV = 2), 0, pool);
#undef DIMS

    test_rowwise(9, 128, pool);
    test_rowwise(5, 97, pool);
    test_rowwise(3, 3, pool);
    test_rowwise(600, 130, pool); /* big enough for the pool: rows and channels shared out */
    test_rope(600, 128, pool);

#if defined(WF_THREADS)
    test_worker_stack(pool);
    test_model_threads();
    test_decode_stays_on_caller();
    test_pool_claims();
    test_pool_gives_up();
#endif
    wf_pool_free(pool);
    printf("test_simd: worst relative difference %.2e (tolerance %.0e)\n", worst_seen, TOL);
    return check_summary("test_simd");
}
