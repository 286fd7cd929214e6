/* Rotary positions (seed 004), Hugging Face Llama's rotate_half convention: in each head,
 * channel i pairs with i + HS/2 and turns by pos * theta^(-2i/HS), theta = cfg.rope_theta
 * (10000 by default; docs/ARCHITECTURES.md).
 * Shapes: B x T rows at positions pos0.., NH heads of HS, row stride `stride`; cos, sin
 * [context, HS/2]. In place; saves nothing (a rotation is its own record).
 *   out_i = x_i cos - x_{i+h} sin,  out_{i+h} = x_{i+h} cos + x_i sin,  h = HS/2
 *   backward: dx = R^T dout, written in place (=, not +=: q and k have one consumer). */
#include "ops.h"
#include "simd.h"

/* Computed in double, so the float table is the same on every platform. */
void wf_rope_table(wf_real *cos_t, wf_real *sin_t, int T, int HS, double theta) {
    const int h = HS / 2;
    for (int t = 0; t < T; t++) {
        for (int i = 0; i < h; i++) {
            double angle = (double)t * pow(theta, -2.0 * i / HS);
            cos_t[(size_t)t * h + i] = (wf_real)cos(angle);
            sin_t[(size_t)t * h + i] = (wf_real)sin(angle);
        }
    }
}

/* Rotates every head of every row by +angle (dir = 1) or -angle (dir = -1). */
static void rotate(wf_real *x, const wf_real *cos_t, const wf_real *sin_t, int B, int T, int NH, int HS,
                   int stride, int pos0, wf_real dir) {
    const int h = HS / 2;
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < T; t++) {
            const wf_real *c = cos_t + (size_t)(pos0 + t) * h, *s = sin_t + (size_t)(pos0 + t) * h;
            wf_real *row = x + ((size_t)b * T + t) * stride;
            for (int head = 0; head < NH; head++) {
                wf_real *lo = row + head * HS, *hi = lo + h;
                int i = 0;
#if !defined(WF_REFERENCE_KERNELS)
                /* the same products and differences, WF_VL pairs at a time */
                const wf_v vd = wf_vset1(dir);
                for (; i + WF_VL <= h; i += WF_VL) {
                    const wf_v a = wf_vload(lo + i), e = wf_vload(hi + i), cv = wf_vload(c + i);
                    const wf_v sn = wf_vmul(vd, wf_vload(s + i));
                    wf_vstore(lo + i, wf_vsub(wf_vmul(a, cv), wf_vmul(e, sn)));
                    wf_vstore(hi + i, wf_vadd(wf_vmul(e, cv), wf_vmul(a, sn)));
                }
#endif
                for (; i < h; i++) {
                    wf_real a = lo[i], e = hi[i], sn = dir * s[i];
                    lo[i] = a * c[i] - e * sn;
                    hi[i] = e * c[i] + a * sn;
                }
            }
        }
    }
}

void wf_rope_forward(wf_real *x, const wf_real *cos_t, const wf_real *sin_t, int B, int T, int NH, int HS,
                     int stride, int pos0) {
    rotate(x, cos_t, sin_t, B, T, NH, HS, stride, pos0, 1);
}

void wf_rope_backward(wf_real *dx, const wf_real *cos_t, const wf_real *sin_t, int B, int T, int NH, int HS,
                      int stride, int pos0) {
    /* out = R x, R orthogonal: dx = R^T dout, the rotation by -angle */
    rotate(dx, cos_t, sin_t, B, T, NH, HS, stride, pos0, -1);
}
