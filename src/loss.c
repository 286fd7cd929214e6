/* Losses: fused softmax + cross-entropy over the vocabulary, and (below) mean squared error.
 * Shapes: logits, probs [N,V]; targets [N] (negative: ignored, e.g. padding); losses [N].
 *   p = softmax(z),  loss_n = -log p[y_n] = logsumexp(z) - z[y_n]
 *   dz = dloss * (p - onehot(y))
 * Fusing skips the V x V softmax Jacobian: (diag(p) - pp^T)(-e_y/p_y) = p - e_y.
 * Exception to "backward accumulates": dlogits is written (=), so that it may alias probs;
 * logits have exactly one consumer, and this saves an [N,V] buffer. */
#include "ops.h"
#include "simd.h"

/* Softmax of one row z into p; returns the row's log-sum-exp, log(sum) + max. */
static wf_real softmax_row_scalar(wf_real *p, const wf_real *z, int V) {
    wf_real maxz = z[0];
    for (int i = 1; i < V; i++)
        if (z[i] > maxz) maxz = z[i];
    wf_real sum = 0;
    for (int i = 0; i < V; i++) {
        p[i] = WF_EXP(z[i] - maxz);
        sum += p[i];
    }
    wf_real inv = 1 / sum;
    for (int i = 0; i < V; i++) p[i] *= inv;
    return WF_LOG(sum) + maxz;
}

#if !defined(WF_REFERENCE_KERNELS) && !defined(WF_SIMD_SCALAR)
/* The same, WF_VL logits at a time. */
static wf_real softmax_row_simd(wf_real *p, const wf_real *z, int V) {
    wf_v mv = wf_vset1(z[0]);
    int i = 0;
    for (; i + WF_VL <= V; i += WF_VL) mv = wf_vmax(mv, wf_vload(z + i));
    wf_real maxz = wf_vhmax(mv);
    for (; i < V; i++) maxz = z[i] > maxz ? z[i] : maxz;
    wf_v sv = wf_vzero();
    i = wf_vexp_sum(p, z, V, maxz, 1, &sv); /* (z - max) 1 is z - max exactly */
    wf_real sum = wf_vsum(sv);
    for (; i < V; i++) {
        p[i] = WF_EXP(z[i] - maxz);
        sum += p[i];
    }
    const wf_real inv = 1 / sum;
    const wf_v iv = wf_vset1(inv);
    for (i = 0; i + WF_VL <= V; i += WF_VL) wf_vstore(p + i, wf_vmul(wf_vload(p + i), iv));
    for (; i < V; i++) p[i] *= inv;
    return WF_LOG(sum) + maxz;
}
#endif

typedef struct {
    wf_real *losses, *probs, *dlogits;
    const wf_real *logits;
    const int32_t *targets;
    int V;
    wf_real dloss;
    wf_real (*softmax_row)(wf_real *, const wf_real *, int);
} ce_job;

/* rows per range: a pool's run costs a few us, so at least ~32K logits */
static size_t ce_rows_min(int V) { return (size_t)(1 << 15) / (size_t)(V > 0 ? V : 1) + 1; }

static void ce_forward_rows(void *ctx, size_t n0, size_t n1) {
    const ce_job *j = ctx;
    for (size_t n = n0; n < n1; n++) {
        const wf_real *z = j->logits + n * j->V;
        const wf_real lse = j->softmax_row(j->probs + n * j->V, z, j->V);
        /* from the log-sum-exp, not log(p): exact even when p[y] underflows */
        j->losses[n] = j->targets && j->targets[n] >= 0 ? lse - z[j->targets[n]] : 0;
    }
}

/* Returns the sum of the losses of the counted rows (in row order, whoever computed them);
 * *count gets their number. Rows are shared out when there is a pool. */
static double crossentropy(wf_real *losses, int *count, wf_real *probs, const wf_real *logits,
                           const int32_t *targets, int N, int V, wf_real (*softmax_row)(wf_real *, const wf_real *, int),
                           wf_pool *pool) {
    ce_job j = {.losses = losses, .probs = probs, .logits = logits, .targets = targets, .V = V, .softmax_row = softmax_row};
    wf_pool_for(pool, (size_t)N, 1, ce_rows_min(V), ce_forward_rows, &j);
    double total = 0;
    int counted = 0;
    for (int n = 0; n < N; n++)
        if (targets && targets[n] >= 0) {
            total += losses[n];
            counted++;
        }
    if (count) *count = counted;
    return total;
}

double wf_crossentropy_forward_scalar(wf_real *losses, int *count, wf_real *probs, const wf_real *logits,
                                      const int32_t *targets, int N, int V) {
    return crossentropy(losses, count, probs, logits, targets, N, V, softmax_row_scalar, NULL);
}

double wf_crossentropy_forward(wf_real *losses, int *count, wf_real *probs, const wf_real *logits,
                               const int32_t *targets, int N, int V, wf_pool *pool) {
#if defined(WF_REFERENCE_KERNELS) || defined(WF_SIMD_SCALAR)
    return crossentropy(losses, count, probs, logits, targets, N, V, softmax_row_scalar, pool);
#else
    return crossentropy(losses, count, probs, logits, targets, N, V, softmax_row_simd, pool);
#endif
}

static void ce_backward_rows(void *ctx, size_t n0, size_t n1) {
    const ce_job *j = ctx;
    const int V = j->V;
    for (size_t n = n0; n < n1; n++) {
        const wf_real *p = j->probs + n * V;
        wf_real *dz = j->dlogits + n * V;
        int y = j->targets[n];
        if (y < 0) {
            for (int i = 0; i < V; i++) dz[i] = 0;
            continue;
        }
        /* loss = logsumexp(z) - z[y] */
        for (int i = 0; i < V; i++) dz[i] = j->dloss * (p[i] - (i == y ? 1 : 0));
    }
}

void wf_crossentropy_backward(wf_real *dlogits, wf_real dloss, const wf_real *probs,
                              const int32_t *targets, int N, int V, wf_pool *pool) {
    ce_job j = {.dlogits = dlogits, .probs = (wf_real *)probs, .targets = targets, .V = V, .dloss = dloss};
    wf_pool_for(pool, (size_t)N, 1, ce_rows_min(V), ce_backward_rows, &j);
}

/* Mean squared error of final states against target vectors (seed 002's objective), over
 * real positions only. Shapes: y, target [B,T,C]; lengths [B] or NULL (rows t >= lengths[b]
 * are padding and count nowhere).
 *   loss = sum over real rows and channels of (y - target)^2 / count,  count = real rows * C
 *   dy += dloss * 2 (y - target) on real rows
 * Returns the sum of squares; *count gets the number of terms. Summed in double. */
static int real_rows(const int32_t *lengths, int b, int T) { return lengths && lengths[b] < T ? lengths[b] : T; }

double wf_mse_forward(double *count, const wf_real *y, const wf_real *target, const int32_t *lengths, int B, int T,
                      int C) {
    double total = 0, n = 0;
    for (int b = 0; b < B; b++) {
        int rows = real_rows(lengths, b, T);
        const size_t base = (size_t)b * T * C;
        for (size_t i = 0; i < (size_t)rows * C; i++) {
            double d = (double)y[base + i] - (double)target[base + i];
            total += d * d;
        }
        n += (double)rows * C;
    }
    if (count) *count = n;
    return total;
}

void wf_mse_backward(wf_real *dy, wf_real dloss, const wf_real *y, const wf_real *target,
                     const int32_t *lengths, int B, int T, int C) {
    for (int b = 0; b < B; b++) {
        int rows = real_rows(lengths, b, T);
        const size_t base = (size_t)b * T * C;
        for (size_t i = 0; i < (size_t)rows * C; i++) {
            /* loss = sum (y - target)^2 / count */
            dy[base + i] += dloss * 2 * (y[base + i] - target[base + i]);
        }
    }
}
