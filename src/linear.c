/* Linear layer, PyTorch's orientation: w is [OC, C], one row per output channel.
 * Shapes: inp [N,C], w [OC,C], b [OC] (may be NULL), out [N,OC]. Saves nothing extra:
 * backward needs inp, which the caller keeps.
 *   out = inp w^T + b
 *   dinp += dout w;  dw += dout^T inp;  db += sum over rows of dout  (seed 000, eq. 12-13)
 * Plain loops: the scalar reference for the speed work's blocked kernels. */
#include "ops.h"

void wf_linear_forward(wf_real *out, const wf_real *inp, const wf_real *w, const wf_real *b,
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

void wf_linear_backward(wf_real *dinp, wf_real *dw, wf_real *db, const wf_real *dout,
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
