/* Pointwise ops: GELU (tanh approximation, GPT-2's), ReLU and the residual add.
 * Shapes: inp, out [N]; each saves nothing beyond its input.
 *   gelu(x) = x/2 (1 + tanh u),  u = k (x + 0.044715 x^3),  k = sqrt(2/pi)
 *   gelu'(x) = (1 + tanh u)/2 + x/2 sech^2(u) k (1 + 3 * 0.044715 x^2)
 *   relu'(x) = [x > 0];  residual: out = a + b passes dout to both. */
#include "ops.h"

#define GELU_K 0.7978845608028654 /* sqrt(2/pi) */
#define GELU_A 0.044715

void wf_gelu_forward(wf_real *out, const wf_real *inp, int N) {
    for (int i = 0; i < N; i++) {
        wf_real x = inp[i];
        wf_real u = (wf_real)GELU_K * (x + (wf_real)GELU_A * x * x * x);
        out[i] = (wf_real)0.5 * x * (1 + WF_TANH(u));
    }
}

void wf_gelu_backward(wf_real *dinp, const wf_real *dout, const wf_real *inp, int N) {
    for (int i = 0; i < N; i++) {
        /* out = x/2 (1 + tanh u) */
        wf_real x = inp[i];
        wf_real u = (wf_real)GELU_K * (x + (wf_real)GELU_A * x * x * x);
        wf_real th = WF_TANH(u);
        wf_real sech2 = 1 - th * th; /* not 1/cosh^2: cosh overflows for large |u| */
        wf_real du = (wf_real)GELU_K * (1 + (wf_real)(3 * GELU_A) * x * x);
        dinp[i] += dout[i] * ((wf_real)0.5 * (1 + th) + (wf_real)0.5 * x * sech2 * du);
    }
}

void wf_relu_forward(wf_real *out, const wf_real *inp, int N) {
    for (int i = 0; i < N; i++) out[i] = inp[i] > 0 ? inp[i] : 0;
}

void wf_relu_backward(wf_real *dinp, const wf_real *dout, const wf_real *inp, int N) {
    for (int i = 0; i < N; i++) {
        /* out = max(x, 0) */
        if (inp[i] > 0) dinp[i] += dout[i];
    }
}

void wf_residual_forward(wf_real *out, const wf_real *a, const wf_real *b, int N) {
    for (int i = 0; i < N; i++) out[i] = a[i] + b[i];
}

void wf_residual_backward(wf_real *da, wf_real *db, const wf_real *dout, int N) {
    for (int i = 0; i < N; i++) {
        /* out = a + b */
        if (da) da[i] += dout[i];
        if (db) db[i] += dout[i];
    }
}
