/* LayerNorm over the channels of each row.
 * Shapes: inp, out [N,C]; w, b [C] (b may be NULL); saves mean, rstd [N].
 *   xhat = (x - mean) * rstd, rstd = 1/sqrt(var + eps);  out = xhat * w + b
 *   dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),  g = dout * w
 * (seed 002's derivation with its mean and variance terms collected; seed 004, 5.5:
 * the Jacobian is (w/sigma)(I - 11^T/C - xhat xhat^T/C)). */
#include "ops.h"
#include "simd.h"

void wf_layernorm_forward_scalar(wf_real *out, wf_real *mean, wf_real *rstd, const wf_real *inp,
                                 const wf_real *w, const wf_real *b, int N, int C, wf_real eps) {
    for (int n = 0; n < N; n++) {
        const wf_real *x = inp + (size_t)n * C;
        wf_real *o = out + (size_t)n * C;
        wf_real m = 0;
        for (int i = 0; i < C; i++) m += x[i];
        m /= C;
        /* two passes: the variance of the centred values, not E[x^2] - m^2, which cancels */
        wf_real var = 0;
        for (int i = 0; i < C; i++) {
            wf_real d = x[i] - m;
            var += d * d;
        }
        var /= C;
        wf_real s = 1 / WF_SQRT(var + eps);
        for (int i = 0; i < C; i++) {
            wf_real xhat = (x[i] - m) * s;
            o[i] = xhat * w[i] + (b ? b[i] : 0);
        }
        mean[n] = m;
        rstd[n] = s;
    }
}

void wf_layernorm_backward_scalar(wf_real *dinp, wf_real *dw, wf_real *db, const wf_real *dout,
                                  const wf_real *inp, const wf_real *mean, const wf_real *rstd,
                                  const wf_real *w, int N, int C) {
    for (int n = 0; n < N; n++) {
        const wf_real *x = inp + (size_t)n * C;
        const wf_real *d = dout + (size_t)n * C;
        wf_real m = mean[n], s = rstd[n];
        /* the two row means of the formula above */
        wf_real g_mean = 0, gx_mean = 0;
        for (int i = 0; i < C; i++) {
            wf_real xhat = (x[i] - m) * s;
            wf_real g = d[i] * w[i];
            g_mean += g;
            gx_mean += g * xhat;
        }
        g_mean /= C;
        gx_mean /= C;
        wf_real *dx = dinp + (size_t)n * C;
        for (int i = 0; i < C; i++) {
            wf_real xhat = (x[i] - m) * s;
            /* out = xhat * w + b */
            if (dw) dw[i] += d[i] * xhat;
            if (db) db[i] += d[i];
            dx[i] += s * (d[i] * w[i] - g_mean - xhat * gx_mean);
        }
    }
}

/* ---- the vector path: the same passes over each row, WF_VL channels at a time ----
 * With a pool, rows are shared out, and in backward the parameters' gradients are split by
 * channel instead (each channel still sums its rows in order, in the same vector or tail
 * arithmetic: ranges are whole vectors), so results do not depend on the thread count. */

#define PAR_MIN (1 << 13) /* elements below which the caller does it alone: a run costs a few us */

typedef struct {
    wf_real *out, *mean, *rstd, *dinp, *dw, *db;
    const wf_real *inp, *w, *b, *dout, *smean, *srstd;
    int N, C;
    wf_real eps;
} norm_job;

/* The weight gradients' passes split the channels by whole cache lines (WF_LINE_REALS): when
 * C is a multiple of a line and rows start on one, no line of the rows they read is fetched
 * by two threads. */

/* rows per range: at least PAR_MIN elements */
static size_t rows_min(int C) { return (size_t)(PAR_MIN / (C > 0 ? C : 1) + 1); }

#if !defined(WF_REFERENCE_KERNELS)
static wf_real row_sum(const wf_real *x, int C) {
    wf_v s = wf_vzero();
    int i = 0;
    for (; i + WF_VL <= C; i += WF_VL) s = wf_vadd(s, wf_vload(x + i));
    wf_real r = wf_vsum(s);
    for (; i < C; i++) r += x[i];
    return r;
}

static void ln_forward_rows(void *ctx, size_t n0, size_t n1) {
    const norm_job *j = ctx;
    const int C = j->C;
    const wf_real *w = j->w, *b = j->b;
    for (size_t n = n0; n < n1; n++) {
        const wf_real *x = j->inp + n * C;
        wf_real *o = j->out + n * C;
        const wf_real m = row_sum(x, C) / C;
        const wf_v mv = wf_vset1(m);
        wf_v vv = wf_vzero();
        int i = 0;
        for (; i + WF_VL <= C; i += WF_VL) {
            wf_v dx = wf_vsub(wf_vload(x + i), mv);
            vv = wf_vmadd(dx, dx, vv);
        }
        wf_real var = wf_vsum(vv);
        for (; i < C; i++) var += (x[i] - m) * (x[i] - m);
        var /= C;
        const wf_real s = 1 / WF_SQRT(var + j->eps);
        const wf_v sv = wf_vset1(s);
        for (i = 0; i + WF_VL <= C; i += WF_VL) {
            wf_v y = wf_vmul(wf_vmul(wf_vsub(wf_vload(x + i), mv), sv), wf_vload(w + i));
            wf_vstore(o + i, b ? wf_vadd(y, wf_vload(b + i)) : y);
        }
        for (; i < C; i++) o[i] = (x[i] - m) * s * w[i] + (b ? b[i] : 0);
        j->mean[n] = m;
        j->rstd[n] = s;
    }
}

/* dinp over rows [n0, n1), and dw, db too unless the job is split (they are NULL then) */
static void ln_backward_rows(const norm_job *j, size_t n0, size_t n1, wf_real *dw, wf_real *db) {
    const int C = j->C;
    const wf_real *w = j->w;
    for (size_t n = n0; n < n1; n++) {
        const wf_real *x = j->inp + n * C, *d = j->dout + n * C;
        wf_real *dx = j->dinp + n * C;
        const wf_real m = j->smean[n], s = j->srstd[n];
        const wf_v mv = wf_vset1(m), sv = wf_vset1(s);
        /* the two row means of the formula above */
        wf_v gv = wf_vzero(), gxv = wf_vzero();
        int i = 0;
        for (; i + WF_VL <= C; i += WF_VL) {
            wf_v xhat = wf_vmul(wf_vsub(wf_vload(x + i), mv), sv);
            wf_v g = wf_vmul(wf_vload(d + i), wf_vload(w + i));
            gv = wf_vadd(gv, g);
            gxv = wf_vmadd(g, xhat, gxv);
        }
        wf_real g_mean = wf_vsum(gv), gx_mean = wf_vsum(gxv);
        for (; i < C; i++) {
            wf_real xhat = (x[i] - m) * s, g = d[i] * w[i];
            g_mean += g;
            gx_mean += g * xhat;
        }
        g_mean /= C;
        gx_mean /= C;
        const wf_v gmv = wf_vset1(g_mean), gxmv = wf_vset1(gx_mean);
        for (i = 0; i + WF_VL <= C; i += WF_VL) {
            wf_v xhat = wf_vmul(wf_vsub(wf_vload(x + i), mv), sv);
            wf_v di = wf_vload(d + i);
            /* out = xhat * w + b */
            if (dw) wf_vstore(dw + i, wf_vmadd(di, xhat, wf_vload(dw + i)));
            if (db) wf_vstore(db + i, wf_vadd(wf_vload(db + i), di));
            wf_v t = wf_vsub(wf_vsub(wf_vmul(di, wf_vload(w + i)), gmv), wf_vmul(xhat, gxmv));
            wf_vstore(dx + i, wf_vmadd(sv, t, wf_vload(dx + i)));
        }
        for (; i < C; i++) {
            wf_real xhat = (x[i] - m) * s;
            if (dw) dw[i] += d[i] * xhat;
            if (db) db[i] += d[i];
            dx[i] += s * (d[i] * w[i] - g_mean - xhat * gx_mean);
        }
    }
}

static void ln_backward_rows_task(void *ctx, size_t n0, size_t n1) { ln_backward_rows(ctx, n0, n1, NULL, NULL); }

/* dw, db over channels [c0, c1) (whole vectors but at the row's end), every row in order */
static void ln_backward_cols(void *ctx, size_t c0, size_t c1) {
    const norm_job *j = ctx;
    const int C = j->C;
    for (int n = 0; n < j->N; n++) {
        const wf_real *x = j->inp + (size_t)n * C, *d = j->dout + (size_t)n * C;
        const wf_real m = j->smean[n], s = j->srstd[n];
        const wf_v mv = wf_vset1(m), sv = wf_vset1(s);
        size_t i = c0;
        for (; i + WF_VL <= c1 && i + WF_VL <= (size_t)C; i += WF_VL) {
            wf_v xhat = wf_vmul(wf_vsub(wf_vload(x + i), mv), sv);
            wf_v di = wf_vload(d + i);
            if (j->dw) wf_vstore(j->dw + i, wf_vmadd(di, xhat, wf_vload(j->dw + i)));
            if (j->db) wf_vstore(j->db + i, wf_vadd(wf_vload(j->db + i), di));
        }
        for (; i < c1; i++) {
            wf_real xhat = (x[i] - m) * s;
            if (j->dw) j->dw[i] += d[i] * xhat;
            if (j->db) j->db[i] += d[i];
        }
    }
}
#endif

void wf_layernorm_forward(wf_real *out, wf_real *mean, wf_real *rstd, const wf_real *inp,
                          const wf_real *w, const wf_real *b, int N, int C, wf_real eps, wf_pool *pool) {
#if defined(WF_REFERENCE_KERNELS)
    (void)pool;
    wf_layernorm_forward_scalar(out, mean, rstd, inp, w, b, N, C, eps);
#else
    norm_job j = {.out = out, .mean = mean, .rstd = rstd, .inp = inp, .w = w, .b = b, .N = N, .C = C, .eps = eps};
    wf_pool_for(pool, (size_t)N, 1, rows_min(C), ln_forward_rows, &j);
#endif
}

void wf_layernorm_backward(wf_real *dinp, wf_real *dw, wf_real *db, const wf_real *dout,
                           const wf_real *inp, const wf_real *mean, const wf_real *rstd,
                           const wf_real *w, int N, int C, wf_pool *pool) {
#if defined(WF_REFERENCE_KERNELS)
    (void)pool;
    wf_layernorm_backward_scalar(dinp, dw, db, dout, inp, mean, rstd, w, N, C);
#else
    norm_job j = {.dinp = dinp, .dw = dw, .db = db, .dout = dout, .inp = inp, .smean = mean, .srstd = rstd, .w = w,
                  .N = N, .C = C};
    if (wf_pool_threads(pool) < 2 || (size_t)N * C < 2 * PAR_MIN) {
        ln_backward_rows(&j, 0, (size_t)N, dw, db);
        return;
    }
    wf_pool_for(pool, (size_t)N, 1, rows_min(C), ln_backward_rows_task, &j);
    if (dw || db) wf_pool_for(pool, (size_t)C, WF_LINE_REALS, WF_LINE_REALS, ln_backward_cols, &j);
#endif
}

/* RMSNorm (seed 004, 11.1: "simpler, equally effective"; Llama's, without a bias).
 * Shapes: inp, out [N,C]; w [C]; saves rstd [N].
 *   xhat = x * rstd, rstd = 1/sqrt(mean(x^2) + eps);  out = xhat * w
 *   dx = rstd * (g - xhat * mean(g * xhat)),  g = dout * w
 * LayerNorm's derivative without the mean terms: nothing is centred. */
static void rms_forward_rows(void *ctx, size_t n0, size_t n1) {
    const norm_job *j = ctx;
    const int C = j->C;
    for (size_t n = n0; n < n1; n++) {
        const wf_real *x = j->inp + n * C;
        wf_real *o = j->out + n * C;
        wf_real ms = 0;
        for (int i = 0; i < C; i++) ms += x[i] * x[i];
        ms /= C;
        wf_real s = 1 / WF_SQRT(ms + j->eps);
        for (int i = 0; i < C; i++) o[i] = x[i] * s * j->w[i];
        j->rstd[n] = s;
    }
}

void wf_rmsnorm_forward(wf_real *out, wf_real *rstd, const wf_real *inp, const wf_real *w,
                        int N, int C, wf_real eps, wf_pool *pool) {
    norm_job j = {.out = out, .rstd = rstd, .inp = inp, .w = w, .N = N, .C = C, .eps = eps};
    wf_pool_for(pool, (size_t)N, 1, rows_min(C), rms_forward_rows, &j);
}

static void rms_backward_rows(const norm_job *j, size_t n0, size_t n1, wf_real *dw) {
    const int C = j->C;
    for (size_t n = n0; n < n1; n++) {
        const wf_real *x = j->inp + n * C;
        const wf_real *d = j->dout + n * C;
        wf_real s = j->srstd[n];
        wf_real gx_mean = 0;
        for (int i = 0; i < C; i++) gx_mean += d[i] * j->w[i] * x[i] * s;
        gx_mean /= C;
        wf_real *dx = j->dinp + n * C;
        for (int i = 0; i < C; i++) {
            wf_real xhat = x[i] * s;
            /* out = xhat * w */
            if (dw) dw[i] += d[i] * xhat;
            dx[i] += s * (d[i] * j->w[i] - xhat * gx_mean);
        }
    }
}

static void rms_backward_rows_task(void *ctx, size_t n0, size_t n1) { rms_backward_rows(ctx, n0, n1, NULL); }

static void rms_backward_cols(void *ctx, size_t c0, size_t c1) {
    const norm_job *j = ctx;
    for (int n = 0; n < j->N; n++) {
        const wf_real *x = j->inp + (size_t)n * j->C, *d = j->dout + (size_t)n * j->C;
        const wf_real s = j->srstd[n];
        for (size_t i = c0; i < c1; i++) j->dw[i] += d[i] * (x[i] * s);
    }
}

void wf_rmsnorm_backward(wf_real *dinp, wf_real *dw, const wf_real *dout, const wf_real *inp,
                         const wf_real *rstd, const wf_real *w, int N, int C, wf_pool *pool) {
    norm_job j = {.dinp = dinp, .dw = dw, .dout = dout, .inp = inp, .srstd = rstd, .w = w, .N = N, .C = C};
    if (wf_pool_threads(pool) < 2 || (size_t)N * C < 2 * PAR_MIN) {
        rms_backward_rows(&j, 0, (size_t)N, dw);
        return;
    }
    wf_pool_for(pool, (size_t)N, 1, rows_min(C), rms_backward_rows_task, &j);
    if (dw) wf_pool_for(pool, (size_t)C, WF_LINE_REALS, WF_LINE_REALS, rms_backward_cols, &j);
}

/* QK-norm (Dehghani et al. 2023; OLMo 2, modded-nanogpt): each head's query and key RMS-
 * normalised, without a gain, so attention scores stay within sqrt(HS) and cannot grow
 * with the weights. In place, like RoPE (which it precedes; a rotation keeps the RMS, so
 * either order gives the same scores). Shapes: x [N rows, stride apart][NH, HS]; saves
 * rstd [N, NH] and leaves y = x * rstd in place of x.
 *   y = x * rstd, rstd = 1/sqrt(mean(x^2) + eps)
 *   dx = rstd * (dy - y * mean(dy * y))   (RMSNorm's with w = 1, written in y)
 * Backward needs only y and dy, and a rotation R keeps both dot products: the gradient may
 * be taken in RoPE's rotated frame (R dx from R dy and R y) before RoPE's backward. */
void wf_headnorm_forward(wf_real *x, wf_real *rstd, int N, int NH, int HS, int stride, wf_real eps) {
    for (int n = 0; n < N; n++)
        for (int h = 0; h < NH; h++) {
            wf_real *v = x + (size_t)n * stride + (size_t)h * HS;
            wf_real ms = 0;
            for (int i = 0; i < HS; i++) ms += v[i] * v[i];
            wf_real s = 1 / WF_SQRT(ms / HS + eps);
            for (int i = 0; i < HS; i++) v[i] *= s;
            rstd[(size_t)n * NH + h] = s;
        }
}

void wf_headnorm_backward(wf_real *dx, const wf_real *y, const wf_real *rstd, int N, int NH, int HS, int stride) {
    for (int n = 0; n < N; n++)
        for (int h = 0; h < NH; h++) {
            const size_t at = (size_t)n * stride + (size_t)h * HS;
            const wf_real *yv = y + at;
            wf_real *d = dx + at;
            /* y = x * rstd */
            wf_real dy_y = 0;
            for (int i = 0; i < HS; i++) dy_y += d[i] * yv[i];
            dy_y /= HS;
            const wf_real s = rstd[(size_t)n * NH + h];
            for (int i = 0; i < HS; i++) d[i] = s * (d[i] - yv[i] * dy_y);
        }
}
