/* Token and position embeddings.
 * Shapes: inp [B,T] ids, wte [V,C], pos [T,C] (learned wpe or the fixed sinusoid table),
 * out [B,T,C]. Forward saves nothing: backward needs only the ids.
 *   out[b,t,:] = wte[inp[b,t],:] + pos[t,:]
 *   dwte[inp[b,t],:] += dout[b,t,:];  dpos[t,:] += dout[b,t,:]
 * A lookup is a one-hot row times wte, so its gradient scatters dout back into the rows
 * that were read (seed 001, 2.1); repeated ids accumulate. */
#include "ops.h"

void wf_embed_forward(wf_real *out, const int32_t *inp, const wf_real *wte, const wf_real *pos,
                      int B, int T, int C) {
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < T; t++) {
            wf_real *o = out + ((size_t)b * T + t) * C;
            const wf_real *e = wte + (size_t)inp[b * T + t] * C;
            if (pos) {
                const wf_real *p = pos + (size_t)t * C;
                for (int i = 0; i < C; i++) o[i] = e[i] + p[i];
            } else {
                for (int i = 0; i < C; i++) o[i] = e[i];
            }
        }
    }
}

void wf_embed_backward(wf_real *dwte, wf_real *dpos, const wf_real *dout, const int32_t *inp,
                       int B, int T, int C) {
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < T; t++) {
            const wf_real *d = dout + ((size_t)b * T + t) * C;
            if (dwte) {
                /* out = wte[id] + pos[t] */
                wf_real *dw = dwte + (size_t)inp[b * T + t] * C;
                for (int i = 0; i < C; i++) dw[i] += d[i];
            }
            if (dpos) {
                wf_real *dp = dpos + (size_t)t * C;
                for (int i = 0; i < C; i++) dp[i] += d[i];
            }
        }
    }
}

/* Fixed sinusoidal positions (seed 000, 1.7): pe[t,2i] = sin(t / 10000^(2i/C)),
 * pe[t,2i+1] = cos(t / 10000^(2i/C)). Computed in double so the float table is exact to
 * the last bit whatever the platform's float libm does. */
void wf_sinusoid_table(wf_real *pe, int T, int C) {
    for (int t = 0; t < T; t++) {
        for (int i = 0; i < C; i += 2) {
            double angle = (double)t / pow(10000.0, (double)i / (double)C);
            pe[(size_t)t * C + i] = (wf_real)sin(angle);
            if (i + 1 < C) pe[(size_t)t * C + i + 1] = (wf_real)cos(angle);
        }
    }
}

/* An encoder over vectors instead of ids (seed 002: the input is X in R^{B x T x C}):
 *   out[b,t,:] = inp[b,t,:] + pos[t,:];  dpos[t,:] += dout[b,t,:]
 * The vectors are data, so no gradient flows to them. pos may be NULL. */
void wf_embed_vec_forward(wf_real *out, const wf_real *inp, const wf_real *pos, int B, int T, int C) {
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < T; t++) {
            const size_t row = ((size_t)b * T + t) * C;
            for (int i = 0; i < C; i++) out[row + i] = inp[row + i] + (pos ? pos[(size_t)t * C + i] : 0);
        }
    }
}

void wf_embed_vec_backward(wf_real *dpos, const wf_real *dout, int B, int T, int C) {
    if (!dpos) return;
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < T; t++) {
            /* out = inp + pos[t] */
            const wf_real *d = dout + ((size_t)b * T + t) * C;
            for (int i = 0; i < C; i++) dpos[(size_t)t * C + i] += d[i];
        }
    }
}
