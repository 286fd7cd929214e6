/* AdamW, the learning-rate schedule and the global gradient norm.
 * AdamW exactly as torch.optim.AdamW (decoupled decay, bias correction), per tensor:
 *   p -= lr * wd * p   (only tensors marked decay: matrices and embeddings)
 *   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
 *   p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
 * g is the raw gradient times grad_scale, the clipping factor.
 * wf_adamw_check runs before any update of a step: it redoes the update's arithmetic in
 * double, without writing, so a step that would overflow is refused with nothing changed. */
#include <float.h>

#include "ops.h"
#include "simd.h"

/* Linear warmup to lr, then cosine decay to lr * min_lr_ratio over decay_steps, then
 * constant, all counted from the schedule's start step (steps before it run as its first).
 * step counts from 0 (the step about to be taken). */
float wf_lr_at(const wf_optim *o, int32_t step) {
    const int32_t s = step > o->start ? step - o->start : 0;
    if (o->warmup > 0 && s < o->warmup) return o->lr * (float)(s + 1) / (float)o->warmup;
    if (o->decay_steps <= 0) return o->lr;
    double progress = (double)(s - o->warmup) / (double)o->decay_steps;
    if (progress > 1) progress = 1;
    double min_lr = (double)o->lr * o->min_lr_ratio;
    double coeff = 0.5 * (1.0 + cos(3.14159265358979323846 * progress));
    return (float)(min_lr + coeff * ((double)o->lr - min_lr));
}

/* In double: a float sum over millions of squares loses the small ones. In blocks whose
 * size depends on n alone (at least SQ_BLOCK elements, at most SQ_PARTS blocks), each summed
 * in order, then the blocks' sums in order: the same result whoever sums which block. */
#define SQ_BLOCK (1 << 16)
#define SQ_PARTS 1024

typedef struct {
    const wf_real *x;
    size_t n, block;
    double *part;
} sq_job;

static void sq_blocks(void *ctx, size_t b0, size_t b1) {
    const sq_job *j = ctx;
    for (size_t b = b0; b < b1; b++) {
        const size_t end = (b + 1) * j->block < j->n ? (b + 1) * j->block : j->n;
        double s = 0;
        for (size_t i = b * j->block; i < end; i++) s += (double)j->x[i] * (double)j->x[i];
        j->part[b] = s;
    }
}

double wf_sum_squares(const wf_real *x, size_t n, wf_pool *pool) {
    double part[SQ_PARTS];
    size_t block = (n + SQ_PARTS - 1) / SQ_PARTS;
    if (block < SQ_BLOCK) block = SQ_BLOCK;
    sq_job j = {.x = x, .n = n, .block = block, .part = part};
    const size_t blocks = (n + block - 1) / block;
    wf_pool_for(pool, blocks, 1, 1, sq_blocks, &j);
    double s = 0;
    for (size_t b = 0; b < blocks; b++) s += part[b];
    return s;
}

void wf_adamw_update_scalar(wf_real *p, wf_real *m, wf_real *v, const wf_real *g, size_t n,
                            wf_real grad_scale, const wf_optim *o, float lr, int decay, int32_t t) {
    const wf_real b1 = o->beta1, b2 = o->beta2;
    const wf_real bc1 = 1 - (wf_real)pow(o->beta1, t);
    const wf_real bc2_sqrt = WF_SQRT(1 - (wf_real)pow(o->beta2, t));
    const wf_real step_size = lr / bc1;
    const wf_real shrink = decay ? 1 - lr * o->weight_decay : 1;
    for (size_t i = 0; i < n; i++) {
        wf_real gi = g[i] * grad_scale;
        m[i] = b1 * m[i] + (1 - b1) * gi;
        v[i] = b2 * v[i] + (1 - b2) * gi * gi;
        wf_real denom = WF_SQRT(v[i]) / bc2_sqrt + (wf_real)o->eps;
        p[i] = p[i] * shrink - step_size * m[i] / denom;
    }
}

/* The same operations in the same order, WF_VL parameters at a time. */
void wf_adamw_update(wf_real *p, wf_real *m, wf_real *v, const wf_real *g, size_t n,
                     wf_real grad_scale, const wf_optim *o, float lr, int decay, int32_t t) {
#if defined(WF_REFERENCE_KERNELS)
    wf_adamw_update_scalar(p, m, v, g, n, grad_scale, o, lr, decay, t);
#else
    const wf_real bc1 = 1 - (wf_real)pow(o->beta1, t);
    const wf_real bc2_sqrt = WF_SQRT(1 - (wf_real)pow(o->beta2, t));
    const wf_v b1 = wf_vset1(o->beta1), b2 = wf_vset1(o->beta2);
    const wf_v c1 = wf_vset1(1 - (wf_real)o->beta1), c2 = wf_vset1(1 - (wf_real)o->beta2);
    const wf_v gs = wf_vset1(grad_scale), bc2 = wf_vset1(bc2_sqrt), eps = wf_vset1((wf_real)o->eps);
    const wf_v step_size = wf_vset1(lr / bc1), shrink = wf_vset1(decay ? 1 - lr * o->weight_decay : 1);
    size_t i = 0;
    for (; i + WF_VL <= n; i += WF_VL) {
        wf_v gi = wf_vmul(wf_vload(g + i), gs);
        wf_v mi = wf_vadd(wf_vmul(b1, wf_vload(m + i)), wf_vmul(c1, gi));
        wf_v vi = wf_vadd(wf_vmul(b2, wf_vload(v + i)), wf_vmul(wf_vmul(c2, gi), gi));
        wf_v denom = wf_vadd(wf_vdiv(wf_vsqrt(vi), bc2), eps);
        wf_vstore(m + i, mi);
        wf_vstore(v + i, vi);
        wf_vstore(p + i, wf_vsub(wf_vmul(wf_vload(p + i), shrink), wf_vdiv(wf_vmul(step_size, mi), denom)));
    }
    wf_adamw_update_scalar(p + i, m + i, v + i, g + i, n - i, grad_scale, o, lr, decay, t);
#endif
}

/* Every intermediate and result of the update above, in double, must stay within half of
 * the largest float: then the float update, in this order or any other (the SIMD kernel's),
 * rounds to finite values, since rounding moves a value by far less than a factor of 2.
 * Returns the first element that fails, or n when none does. */
/* Whether every element passes, from the largest magnitudes alone: each element's terms in the
 * check below are at most the same terms of the largest |g|, |m|, v and |p| (IEEE rounding is
 * monotonic and symmetric), and its denominator at least eps (v >= 0), so when these pass
 * every element does. One cheap pass where the check costs a square root and two divisions
 * per element; 0 (check each) for a negative v or anything not finite. */
static int adamw_bounds_pass(const wf_real *p, const wf_real *m, const wf_real *v, const wf_real *g, size_t n,
                             double grad_scale, double b1, double b2, double step_size, double shrink, double eps,
                             double limit) {
    wf_real gm = 0, mm = 0, vm = 0, vmin = 0, pm = 0, odd = 0;
    size_t i = 0;
#if !defined(WF_REFERENCE_KERNELS)
    const wf_v zero = wf_vzero();
    wf_v gv = zero, mv = zero, vv = zero, vlo = zero, pv = zero, ov = zero;
    for (; i + WF_VL <= n; i += WF_VL) {
        const wf_v gi = wf_vload(g + i), mi = wf_vload(m + i), vi = wf_vload(v + i), pi = wf_vload(p + i);
        gv = wf_vmax(gv, wf_vmax(gi, wf_vsub(zero, gi)));
        mv = wf_vmax(mv, wf_vmax(mi, wf_vsub(zero, mi)));
        vv = wf_vmax(vv, vi);
        vlo = wf_vmin(vlo, vi);
        pv = wf_vmax(pv, wf_vmax(pi, wf_vsub(zero, pi)));
        /* x * 0 is 0, or NaN for a NaN or an infinity: their sum says whether all are finite */
        ov = wf_vadd(ov, wf_vadd(wf_vadd(wf_vmul(gi, zero), wf_vmul(mi, zero)), wf_vadd(wf_vmul(vi, zero), wf_vmul(pi, zero))));
    }
    gm = wf_vhmax(gv), mm = wf_vhmax(mv), vm = wf_vhmax(vv), pm = wf_vhmax(pv), odd = wf_vsum(ov);
    vmin = -wf_vhmax(wf_vsub(zero, vlo));
#endif
    for (; i < n; i++) {
        gm = WF_FABS(g[i]) > gm ? WF_FABS(g[i]) : gm;
        mm = WF_FABS(m[i]) > mm ? WF_FABS(m[i]) : mm;
        vm = v[i] > vm ? v[i] : vm;
        vmin = v[i] < vmin ? v[i] : vmin;
        pm = WF_FABS(p[i]) > pm ? WF_FABS(p[i]) : pm;
        odd += g[i] * 0 + m[i] * 0 + v[i] * 0 + p[i] * 0;
    }
    if (odd != 0 || !(vmin >= 0) || !(gm <= FLT_MAX && mm <= FLT_MAX && vm <= FLT_MAX && pm <= FLT_MAX)) return 0;
    const double gi = (double)gm * fabs(grad_scale);
    const double mi = b1 * mm + (1 - b1) * gi;
    const double vi = b2 * vm + (1 - b2) * gi * gi;
    const double step_mi = fabs(step_size) * mi;
    return vi <= limit && (gi <= 1 || gi * gi <= limit) && mi <= limit && step_mi <= limit && mi / eps <= limit &&
           step_mi / eps + (double)pm * fabs(shrink) <= limit;
}

size_t wf_adamw_check(const wf_real *p, const wf_real *m, const wf_real *v, const wf_real *g, size_t n,
                      wf_real grad_scale, const wf_optim *o, float lr, int decay, int32_t t) {
    const double limit = 0.5 * FLT_MAX;
    const double b1 = o->beta1, b2 = o->beta2;
    const double bc1 = 1 - pow(b1, t), bc2_sqrt = sqrt(1 - pow(b2, t));
    const double step_size = lr / bc1, shrink = decay ? 1 - (double)lr * o->weight_decay : 1;
    if (!(fabs(step_size) <= limit) || !(fabs(shrink) <= limit)) return 0;
    if (adamw_bounds_pass(p, m, v, g, n, grad_scale, b1, b2, step_size, shrink, o->eps, limit)) return n;
    for (size_t i = 0; i < n; i++) {
        double gi = (double)g[i] * grad_scale;
        double mi = b1 * m[i] + (1 - b1) * gi;
        double vi = b2 * v[i] + (1 - b2) * gi * gi;
        double denom = sqrt(vi) / bc2_sqrt + o->eps;
        /* the largest magnitudes any order of the float operations can pass through; a NaN
         * fails every comparison */
        int ok = vi <= limit && (fabs(gi) <= 1 || gi * gi <= limit) && fabs(mi) <= limit &&
                 fabs(step_size * mi) <= limit && fabs(mi) / denom <= limit &&
                 fabs(step_size * mi) / denom + fabs(p[i] * shrink) <= limit;
        if (!ok) return i;
    }
    return n;
}

/* Muon (Jordan et al. 2024, "Muon: an optimizer for hidden layers"), for the blocks' weight
 * matrices W [R, C]; its momentum lives in the model's m block, its v block stays unused.
 *   buf = mu buf + (1 - mu) g;  u = (1 - mu) g + mu buf          (Nesterov, EMA form)
 *   O = NS5(u / ||u||_F);  W = W (1 - lr wd) - lr * 0.2 sqrt(max(R, C)) * O
 * Newton-Schulz: with u = U S V^T, X X^T X = U S^3 V^T, so X <- a X + (b A + c A^2) X with
 * A = X X^T maps every singular value s to phi(s) = a s + b s^3 + c s^5 and keeps U, V:
 * the iteration pushes S toward the identity, i.e. O toward the nearest semi-orthogonal
 * matrix U V^T, without an SVD and with matrix products only. Dividing by the Frobenius
 * norm puts every s in [0, 1]. The coefficients (3.4445, -4.7750, 2.0315; Keller Jordan's,
 * modded-nanogpt) buy speed over exactness: the slope phi'(0) = a = 3.4445 (the classic
 * cubic's is 1.5) multiplies a small s by ~480 in 5 steps, and phi is fitted so that its
 * iterates stay in a band around 1 instead of converging to it: after 5 steps every
 * s >= 3e-3 lies in [0.68, 1.21] (phi(1) = 0.701: 1 is not a fixed point). An update needs
 * only the directions U V^T, not exact unit singular values.
 * Scale: an R x C matrix with unit singular values has an RMS of 1/sqrt(max(R, C)); times
 * 0.2 sqrt(max(R, C)) its RMS is 0.2, about that of AdamW's updates (Liu et al. 2025,
 * "Muon is scalable"), so Muon shares AdamW's learning rate, schedule and weight decay
 * rather than needing its own (the sqrt(max(1, R/C)) rule of modded-nanogpt does). */
#define NS_A ((wf_real)3.4445)
#define NS_B ((wf_real)-4.7750)
#define NS_C ((wf_real)2.0315)
#define NS_STEPS 5
#define MUON_RMS 0.2

size_t wf_muon_scratch(int R, int C) {
    const size_t r = (size_t)(R < C ? R : C), c = (size_t)(R < C ? C : R);
    return 2 * r * c + 2 * r * r;
}

/* The symmetric products of an iteration (A = X X^T; A A, A symmetric), [r, r]: the upper
 * triangle's register tiles, then its mirror. C(j, i) multiplies the same pairs as C(i, j)
 * (X(j,k) X(i,k), or A(j,k) A(k,i) = A(k,j) A(i,k)) and adds them in the same order, so the
 * mirror holds what the full product would compute, for about half of its work. */
static void ns_symmetric(wf_real *c, const wf_real *a, size_t ars, size_t acs, const wf_real *b, size_t brs,
                         size_t bcs, int r, int k, wf_pool *pool) {
    const wf_mm p = {.c = c, .ldc = (size_t)r, .a = a, .ars = ars, .acs = acs, .b = b, .brs = brs, .bcs = bcs,
                     .M = r, .N = r, .K = k, .upper = 1};
    wf_matmul_many(&p, 1, pool);
    for (int i = 1; i < r; i++)
        for (int j = 0; j < i; j++) c[(size_t)i * r + j] = c[(size_t)j * r + i];
}

/* y = s x + t y over n elements; with s = 0 and t = 1 untouched: y += t x is axpy(1, ...).
 * Separate multiplies and an add, never wf_vmadd: the same roundings as the scalar tail in
 * every build, relaxed included. */
static void scale_add(wf_real *y, wf_real sy, const wf_real *x, wf_real sx, size_t n) {
    size_t i = 0;
#if !defined(WF_REFERENCE_KERNELS)
    const wf_v vy = wf_vset1(sy), vx = wf_vset1(sx);
    for (; i + WF_VL <= n; i += WF_VL) wf_vstore(y + i, wf_vadd(wf_vmul(vy, wf_vload(y + i)), wf_vmul(vx, wf_vload(x + i))));
#endif
    for (; i < n; i++) y[i] = sy * y[i] + sx * x[i];
}

void wf_newton_schulz(wf_real *x, int r, int c, wf_real *scratch, wf_pool *pool) {
    const size_t n = (size_t)r * c;
    const double norm = sqrt(wf_sum_squares(x, n, pool));
    const wf_real inv = (wf_real)(1 / (norm + 1e-7));
    for (size_t i = 0; i < n; i++) x[i] *= inv;
    wf_real *X = x, *Xn = scratch, *A = scratch + n, *AA = A + (size_t)r * r;
    for (int it = 0; it < NS_STEPS; it++) {
        /* A = X X^T [r, r], then AA = b A + c A A */
        ns_symmetric(A, X, (size_t)c, 1, X, 1, (size_t)c, r, c, pool);
        ns_symmetric(AA, A, (size_t)r, 1, A, (size_t)r, 1, r, r, pool);
        scale_add(AA, NS_C, A, NS_B, (size_t)r * r);
        /* Xn = a X + AA X */
        wf_matmul(Xn, (size_t)c, AA, (size_t)r, 1, X, (size_t)c, 1, r, c, r, 0, pool);
        scale_add(Xn, 1, X, NS_A, n);
        wf_real *t = X;
        X = Xn;
        Xn = t;
    }
    if (X != x) memcpy(x, X, n * sizeof(wf_real));
}

/* t [cols, rows] = s [rows, cols]: 4 x 4 blocks, then the edges one by one */
static void transpose(wf_real *t, const wf_real *s, int rows, int cols) {
    int i = 0;
    for (; i + 4 <= rows; i += 4) {
        int j = 0;
        for (; j + 4 <= cols; j += 4) wf_transpose4(t + (size_t)j * rows + i, (size_t)rows, s + (size_t)i * cols + j, (size_t)cols);
        for (; j < cols; j++)
            for (int q = i; q < i + 4; q++) t[(size_t)j * rows + q] = s[(size_t)q * cols + j];
    }
    for (; i < rows; i++)
        for (int j = 0; j < cols; j++) t[(size_t)j * rows + i] = s[(size_t)i * cols + j];
}

void wf_muon_update(wf_real *p, wf_real *buf, const wf_real *g, int R, int C, wf_real grad_scale,
                    const wf_optim *o, float lr, int decay, wf_real *scratch, wf_pool *pool) {
    const int tr = R > C; /* work on the wide form: A = X X^T is then the smaller square */
    const int r = tr ? C : R, c = tr ? R : C;
    const size_t n = (size_t)R * C;
    const wf_real mu = o->muon_momentum, nu = 1 - mu;
    /* X in W's layout first (into the half of scratch Newton-Schulz leaves to X when W is
     * already wide), then turned to the wide form */
    wf_real *X = scratch, *rows = tr ? scratch + n : X;
    size_t i = 0;
#if !defined(WF_REFERENCE_KERNELS)
    const wf_v vmu = wf_vset1(mu), vnu = wf_vset1(nu), gs = wf_vset1(grad_scale);
    for (; i + WF_VL <= n; i += WF_VL) {
        const wf_v gi = wf_vmul(wf_vload(g + i), gs);
        const wf_v bi = wf_vadd(wf_vmul(vmu, wf_vload(buf + i)), wf_vmul(vnu, gi));
        wf_vstore(buf + i, bi);
        wf_vstore(rows + i, wf_vadd(wf_vmul(vnu, gi), wf_vmul(vmu, bi)));
    }
#endif
    for (; i < n; i++) {
        const wf_real gi = g[i] * grad_scale;
        buf[i] = mu * buf[i] + nu * gi;
        rows[i] = nu * gi + mu * buf[i];
    }
    if (tr) transpose(X, rows, R, C);
    wf_newton_schulz(X, r, c, scratch + (size_t)r * c, pool);
    if (tr) transpose(rows, X, C, R); /* back to W's layout, where Newton-Schulz's scratch was */
    const wf_real step = (wf_real)(lr * MUON_RMS * sqrt((double)c));
    const wf_real shrink = decay ? 1 - lr * o->weight_decay : 1;
    /* p = p shrink - step u */
    scale_add(p, shrink, rows, -step, n);
}

/* The largest |x[i]|, or infinity when any x[i] is not finite. */
static double max_magnitude(const wf_real *x, size_t n) {
    wf_real mx = 0, odd = 0;
    size_t i = 0;
#if !defined(WF_REFERENCE_KERNELS)
    const wf_v zero = wf_vzero();
    wf_v mv = zero, ov = zero;
    for (; i + WF_VL <= n; i += WF_VL) {
        const wf_v xi = wf_vload(x + i);
        mv = wf_vmax(mv, wf_vmax(xi, wf_vsub(zero, xi)));
        ov = wf_vadd(ov, wf_vmul(xi, zero)); /* 0, or NaN for a NaN or an infinity */
    }
    mx = wf_vhmax(mv), odd = wf_vsum(ov);
#endif
    for (; i < n; i++) {
        mx = WF_FABS(x[i]) > mx ? WF_FABS(x[i]) : mx;
        odd += x[i] * 0;
    }
    return odd == 0 && mx <= FLT_MAX ? (double)mx : INFINITY;
}

/* As wf_adamw_check, for wf_muon_update: the momentum in double, and the weight's update
 * bounded by |p shrink| + step * 2, since no element of NS5's result exceeds its largest
 * singular value, which stays below 1.21 (above). */
size_t wf_muon_check(const wf_real *p, const wf_real *buf, const wf_real *g, int R, int C, wf_real grad_scale,
                     const wf_optim *o, float lr, int decay) {
    const double limit = 0.5 * FLT_MAX, mu = o->muon_momentum;
    const double step = lr * MUON_RMS * sqrt((double)(R > C ? R : C));
    const double shrink = decay ? 1 - (double)lr * o->weight_decay : 1;
    if (!(step <= limit) || !(fabs(shrink) <= limit)) return 0;
    const size_t n = (size_t)R * C;
    /* from the largest magnitudes first (each element's terms are at most theirs), so that
     * only a matrix that may fail is checked element by element */
    const double gm = max_magnitude(g, n) * fabs((double)grad_scale), bm = max_magnitude(buf, n);
    if (gm <= limit && mu * bm + (1 - mu) * gm <= limit && max_magnitude(p, n) * fabs(shrink) + 2 * step <= limit)
        return n;
    for (size_t i = 0; i < n; i++) {
        double gi = (double)g[i] * grad_scale;
        double bi = mu * buf[i] + (1 - mu) * gi;
        int ok = fabs(gi) <= limit && fabs(bi) <= limit && fabs(p[i] * shrink) + 2 * step <= limit;
        if (!ok) return i;
    }
    return n;
}
