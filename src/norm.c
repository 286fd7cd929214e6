/* LayerNorm over the channels of each row.
 * Shapes: inp, out [N,C]; w, b [C] (b may be NULL); saves mean, rstd [N].
 *   xhat = (x - mean) * rstd, rstd = 1/sqrt(var + eps);  out = xhat * w + b
 *   dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),  g = dout * w
 * (seed 002's derivation with its mean and variance terms collected; seed 004, 5.5:
 * the Jacobian is (w/sigma)(I - 11^T/C - xhat xhat^T/C)). */
#include "ops.h"

void wf_layernorm_forward(wf_real *out, wf_real *mean, wf_real *rstd, const wf_real *inp,
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

void wf_layernorm_backward(wf_real *dinp, wf_real *dw, wf_real *db, const wf_real *dout,
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

/* RMSNorm (seed 004, 11.1: "simpler, equally effective"; Llama's, without a bias).
 * Shapes: inp, out [N,C]; w [C]; saves rstd [N].
 *   xhat = x * rstd, rstd = 1/sqrt(mean(x^2) + eps);  out = xhat * w
 *   dx = rstd * (g - xhat * mean(g * xhat)),  g = dout * w
 * LayerNorm's derivative without the mean terms: nothing is centred. */
void wf_rmsnorm_forward(wf_real *out, wf_real *rstd, const wf_real *inp, const wf_real *w,
                        int N, int C, wf_real eps) {
    for (int n = 0; n < N; n++) {
        const wf_real *x = inp + (size_t)n * C;
        wf_real *o = out + (size_t)n * C;
        wf_real ms = 0;
        for (int i = 0; i < C; i++) ms += x[i] * x[i];
        ms /= C;
        wf_real s = 1 / WF_SQRT(ms + eps);
        for (int i = 0; i < C; i++) o[i] = x[i] * s * w[i];
        rstd[n] = s;
    }
}

void wf_rmsnorm_backward(wf_real *dinp, wf_real *dw, const wf_real *dout, const wf_real *inp,
                         const wf_real *rstd, const wf_real *w, int N, int C) {
    for (int n = 0; n < N; n++) {
        const wf_real *x = inp + (size_t)n * C;
        const wf_real *d = dout + (size_t)n * C;
        wf_real s = rstd[n];
        wf_real gx_mean = 0;
        for (int i = 0; i < C; i++) gx_mean += d[i] * w[i] * x[i] * s;
        gx_mean /= C;
        wf_real *dx = dinp + (size_t)n * C;
        for (int i = 0; i < C; i++) {
            wf_real xhat = x[i] * s;
            /* out = xhat * w */
            if (dw) dw[i] += d[i] * xhat;
            dx[i] += s * (d[i] * w[i] - xhat * gx_mean);
        }
    }
}
