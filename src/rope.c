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

/* Rotates every head of rows [r0, r1) (row r at position pos0 + r % T) by +angle (dir = 1)
 * or -angle (dir = -1). */
typedef struct {
    wf_real *x;
    const wf_real *cos_t, *sin_t;
    int T, NH, HS, stride, pos0;
    wf_real dir;
} rope_job;

static void rotate_rows(void *ctx, size_t r0, size_t r1) {
    const rope_job *j = ctx;
    const int h = j->HS / 2;
    for (size_t r = r0; r < r1; r++) {
        const int t = (int)(r % (size_t)j->T);
        const wf_real *c = j->cos_t + (size_t)(j->pos0 + t) * h, *s = j->sin_t + (size_t)(j->pos0 + t) * h;
        wf_real *row = j->x + r * (size_t)j->stride;
        for (int head = 0; head < j->NH; head++) {
            wf_real *lo = row + head * j->HS, *hi = lo + h;
            int i = 0;
#if !defined(WF_REFERENCE_KERNELS)
            /* the same products and differences, WF_VL pairs at a time */
            const wf_v vd = wf_vset1(j->dir);
            for (; i + WF_VL <= h; i += WF_VL) {
                const wf_v a = wf_vload(lo + i), e = wf_vload(hi + i), cv = wf_vload(c + i);
                const wf_v sn = wf_vmul(vd, wf_vload(s + i));
                wf_vstore(lo + i, wf_vsub(wf_vmul(a, cv), wf_vmul(e, sn)));
                wf_vstore(hi + i, wf_vadd(wf_vmul(e, cv), wf_vmul(a, sn)));
            }
#endif
            for (; i < h; i++) {
                wf_real a = lo[i], e = hi[i], sn = j->dir * s[i];
                lo[i] = a * c[i] - e * sn;
                hi[i] = e * c[i] + a * sn;
            }
        }
    }
}

/* Rows are shared out by the pool (each row rotated the same whoever does it), at least
 * ~16K values a range. */
static void rotate(wf_real *x, const wf_real *cos_t, const wf_real *sin_t, int B, int T, int NH, int HS, int stride,
                   int pos0, wf_real dir, wf_pool *pool) {
    rope_job j = {.x = x, .cos_t = cos_t, .sin_t = sin_t, .T = T, .NH = NH, .HS = HS, .stride = stride, .pos0 = pos0,
                  .dir = dir};
    const size_t per_row = (size_t)NH * HS > 0 ? (size_t)NH * HS : 1;
    wf_pool_for(pool, (size_t)B * T, 1, (size_t)(1 << 14) / per_row + 1, rotate_rows, &j);
}

void wf_rope_forward(wf_real *x, const wf_real *cos_t, const wf_real *sin_t, int B, int T, int NH, int HS,
                     int stride, int pos0, wf_pool *pool) {
    rotate(x, cos_t, sin_t, B, T, NH, HS, stride, pos0, 1, pool);
}

void wf_rope_backward(wf_real *dx, const wf_real *cos_t, const wf_real *sin_t, int B, int T, int NH, int HS,
                      int stride, int pos0, wf_pool *pool) {
    /* out = R x, R orthogonal: dx = R^T dout, the rotation by -angle */
    rotate(dx, cos_t, sin_t, B, T, NH, HS, stride, pos0, -1, pool);
}
