/* Pointwise ops: GELU (tanh approximation, GPT-2's), ReLU, the residual add; below them
 * SwiGLU and dropout.
 * Shapes: inp, out [N]; each saves nothing beyond its input.
 *   gelu(x) = x/2 (1 + tanh u),  u = k (x + 0.044715 x^3),  k = sqrt(2/pi)
 *   gelu'(x) = (1 + tanh u)/2 + x/2 sech^2(u) k (1 + 3 * 0.044715 x^2)
 *   relu'(x) = [x > 0];  residual: out = a + b passes dout to both. */
#include "ops.h"
#include "simd.h"

#define GELU_K 0.7978845608028654 /* sqrt(2/pi) */
#define GELU_A 0.044715

void wf_gelu_forward_scalar(wf_real *out, const wf_real *inp, int N) {
    for (int i = 0; i < N; i++) {
        wf_real x = inp[i];
        wf_real u = (wf_real)GELU_K * (x + (wf_real)GELU_A * x * x * x);
        out[i] = (wf_real)0.5 * x * (1 + WF_TANH(u));
    }
}

void wf_gelu_backward_scalar(wf_real *dinp, const wf_real *dout, const wf_real *inp, int N) {
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

/* The vector path, through the identity (1 + tanh u)/2 = sigmoid(2u):
 *   gelu(x) = x s,  s = 1 / (1 + e^(-2u));   gelu'(x) = s + 2 x s (1 - s) u'
 * one exponential per element, and exact at both ends (e^(-2u) -> inf gives 0, -> 0 gives x).
 * A pool shares out chunks of GELU_CHUNK elements. */
#define GELU_CHUNK 16384

#if !defined(WF_REFERENCE_KERNELS) && !defined(WF_SIMD_SCALAR)
/* Vectors per iteration: an exponential is a chain of about 20 dependent operations, and V8
 * runs the chains of one vector after another as written; eight side by side keep the
 * core's units busy (bench/README.md: 1.7x forward, 1.2x backward in Node 22). Each element
 * still goes through the same operations. */
#define GELU_UNROLL 8

static void gelu_forward_range(wf_real *out, const wf_real *inp, int N) {
    const wf_v k2 = wf_vset1((wf_real)(-2 * GELU_K)), a = wf_vset1((wf_real)GELU_A), one = wf_vset1(1);
    int i = 0;
    for (; i + GELU_UNROLL * WF_VL <= N; i += GELU_UNROLL * WF_VL) {
        wf_v x[GELU_UNROLL], e[GELU_UNROLL];
        for (int q = 0; q < GELU_UNROLL; q++) {
            x[q] = wf_vload(inp + i + q * WF_VL);
            e[q] = wf_vexp(wf_vmul(k2, wf_vmadd(wf_vmul(a, x[q]), wf_vmul(x[q], x[q]), x[q]))); /* e^(-2u) */
        }
        for (int q = 0; q < GELU_UNROLL; q++) wf_vstore(out + i + q * WF_VL, wf_vdiv(x[q], wf_vadd(one, e[q])));
    }
    for (; i + WF_VL <= N; i += WF_VL) {
        wf_v x = wf_vload(inp + i);
        wf_v u2 = wf_vmul(k2, wf_vmadd(wf_vmul(a, x), wf_vmul(x, x), x)); /* -2u */
        wf_vstore(out + i, wf_vdiv(x, wf_vadd(one, wf_vexp(u2))));
    }
    wf_gelu_forward_scalar(out + i, inp + i, N - i);
}

static void gelu_backward_range(wf_real *dinp, const wf_real *dout, const wf_real *inp, int N) {
    const wf_v k = wf_vset1((wf_real)GELU_K), a = wf_vset1((wf_real)GELU_A), a3 = wf_vset1((wf_real)(3 * GELU_A));
    const wf_v one = wf_vset1(1), two = wf_vset1(2), mtwo = wf_vset1(-2);
    int i = 0;
    for (; i + GELU_UNROLL * WF_VL <= N; i += GELU_UNROLL * WF_VL) {
        wf_v e[GELU_UNROLL];
        for (int q = 0; q < GELU_UNROLL; q++) {
            const wf_v x = wf_vload(inp + i + q * WF_VL);
            e[q] = wf_vexp(wf_vmul(mtwo, wf_vmul(k, wf_vmadd(wf_vmul(a, x), wf_vmul(x, x), x))));
        }
        for (int q = 0; q < GELU_UNROLL; q++) {
            /* out = x s */
            const size_t at = (size_t)i + (size_t)q * WF_VL;
            const wf_v x = wf_vload(inp + at), x2 = wf_vmul(x, x);
            const wf_v s = wf_vdiv(one, wf_vadd(one, e[q]));
            const wf_v du = wf_vmul(k, wf_vmadd(a3, x2, one));
            const wf_v g = wf_vmadd(wf_vmul(wf_vmul(two, x), wf_vmul(s, wf_vsub(one, s))), du, s);
            wf_vstore(dinp + at, wf_vmadd(wf_vload(dout + at), g, wf_vload(dinp + at)));
        }
    }
    for (; i + WF_VL <= N; i += WF_VL) {
        /* out = x s */
        wf_v x = wf_vload(inp + i), x2 = wf_vmul(x, x);
        wf_v u = wf_vmul(k, wf_vmadd(wf_vmul(a, x), x2, x));
        wf_v s = wf_vdiv(one, wf_vadd(one, wf_vexp(wf_vmul(mtwo, u))));
        wf_v du = wf_vmul(k, wf_vmadd(a3, x2, one));
        wf_v g = wf_vmadd(wf_vmul(wf_vmul(two, x), wf_vmul(s, wf_vsub(one, s))), du, s);
        wf_vstore(dinp + i, wf_vmadd(wf_vload(dout + i), g, wf_vload(dinp + i)));
    }
    wf_gelu_backward_scalar(dinp + i, dout + i, inp + i, N - i);
}

typedef struct {
    wf_real *out;
    const wf_real *dout, *inp;
    int N;
} gelu_job;

static void gelu_forward_task(void *ctx, int t) {
    const gelu_job *j = ctx;
    const int i = t * GELU_CHUNK, n = j->N - i < GELU_CHUNK ? j->N - i : GELU_CHUNK;
    gelu_forward_range(j->out + i, j->inp + i, n);
}

static void gelu_backward_task(void *ctx, int t) {
    const gelu_job *j = ctx;
    const int i = t * GELU_CHUNK, n = j->N - i < GELU_CHUNK ? j->N - i : GELU_CHUNK;
    gelu_backward_range(j->out + i, j->dout + i, j->inp + i, n);
}
#endif

void wf_gelu_forward(wf_real *out, const wf_real *inp, int N, wf_pool *pool) {
#if defined(WF_REFERENCE_KERNELS) || defined(WF_SIMD_SCALAR)
    (void)pool;
    wf_gelu_forward_scalar(out, inp, N);
#else
    gelu_job j = {.out = out, .inp = inp, .N = N};
    wf_pool_run(pool, (N + GELU_CHUNK - 1) / GELU_CHUNK, gelu_forward_task, &j);
#endif
}

void wf_gelu_backward(wf_real *dinp, const wf_real *dout, const wf_real *inp, int N, wf_pool *pool) {
#if defined(WF_REFERENCE_KERNELS) || defined(WF_SIMD_SCALAR)
    (void)pool;
    wf_gelu_backward_scalar(dinp, dout, inp, N);
#else
    gelu_job j = {.out = dinp, .dout = dout, .inp = inp, .N = N};
    wf_pool_run(pool, (N + GELU_CHUNK - 1) / GELU_CHUNK, gelu_backward_task, &j);
#endif
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

/* ReLU squared (Primer, So et al. 2021; modded-nanogpt's MLP): a ReLU whose output keeps
 * growing, cheaper than GELU and no worse in small models. Shapes as above.
 *   out = max(x, 0)^2;  d out/dx = 2 max(x, 0) (continuous at 0, so no kink in the loss). */
void wf_relu2_forward(wf_real *out, const wf_real *inp, int N) {
    for (int i = 0; i < N; i++) {
        wf_real r = inp[i] > 0 ? inp[i] : 0;
        out[i] = r * r;
    }
}

void wf_relu2_backward(wf_real *dinp, const wf_real *dout, const wf_real *inp, int N) {
    for (int i = 0; i < N; i++) {
        /* out = max(x, 0)^2 */
        if (inp[i] > 0) dinp[i] += 2 * inp[i] * dout[i];
    }
}

/* GELU as defined, x Phi(x) with the normal CDF through erf (PyTorch's nn.GELU() default,
 * nanoGPT's MLP): the tanh form above differs from it by at most 4.7e-4 (near x = -2.7), so
 * this one is for reproducing such recipes exactly. Shapes as above; saves nothing.
 *   out = x Phi(x),  Phi(x) = (1 + erf(x / sqrt 2)) / 2
 *   d out/dx = Phi(x) + x phi(x),  phi(x) = e^(-x^2/2) / sqrt(2 pi) */
#define SQRT1_2 0.70710678118654752440
#define INV_SQRT_2PI 0.39894228040143267794

void wf_gelu_exact_forward(wf_real *out, const wf_real *inp, int N) {
    for (int i = 0; i < N; i++) out[i] = inp[i] * (wf_real)0.5 * (1 + WF_ERF(inp[i] * (wf_real)SQRT1_2));
}

void wf_gelu_exact_backward(wf_real *dinp, const wf_real *dout, const wf_real *inp, int N) {
    for (int i = 0; i < N; i++) {
        /* out = x Phi(x) */
        const wf_real x = inp[i], cdf = (wf_real)0.5 * (1 + WF_ERF(x * (wf_real)SQRT1_2));
        dinp[i] += dout[i] * (cdf + x * (wf_real)INV_SQRT_2PI * WF_EXP((wf_real)-0.5 * x * x));
    }
}

/* Logit soft-capping (Gemma 2; modded-nanogpt): logits stay inside (-cap, cap), so no
 * token's score runs away early in training. In place over x [N]; saves nothing: the
 * capped value y gives the derivative.
 *   y = cap tanh(z / cap);  dy/dz = 1 - tanh^2(z / cap) = 1 - (y / cap)^2 */
void wf_softcap_forward(wf_real *x, int N, wf_real cap) {
    for (int i = 0; i < N; i++) x[i] = cap * WF_TANH(x[i] / cap);
}

void wf_softcap_backward(wf_real *dx, const wf_real *y, int N, wf_real cap) {
    for (int i = 0; i < N; i++) {
        /* y = cap tanh(z / cap) */
        wf_real t = y[i] / cap;
        dx[i] *= 1 - t * t;
    }
}

typedef struct {
    wf_real *out, *db;
    const wf_real *a, *b;
} residual_job;

static void residual_forward_range(void *ctx, size_t i0, size_t i1) {
    const residual_job *j = ctx;
    for (size_t i = i0; i < i1; i++) j->out[i] = j->a[i] + j->b[i];
}

static void residual_backward_range(void *ctx, size_t i0, size_t i1) {
    const residual_job *j = ctx;
    for (size_t i = i0; i < i1; i++) {
        /* out = a + b */
        if (j->out) j->out[i] += j->b[i];
        if (j->db) j->db[i] += j->b[i];
    }
}

#define RESIDUAL_MIN (1 << 14) /* elements per range at least: a pool's run costs a few us */

void wf_residual_forward(wf_real *out, const wf_real *a, const wf_real *b, int N, wf_pool *pool) {
    residual_job j = {.out = out, .a = a, .b = b};
    wf_pool_for(pool, (size_t)N, 16, RESIDUAL_MIN, residual_forward_range, &j);
}

void wf_residual_backward(wf_real *da, wf_real *db, const wf_real *dout, int N, wf_pool *pool) {
    residual_job j = {.out = da, .db = db, .b = dout};
    wf_pool_for(pool, (size_t)N, 16, RESIDUAL_MIN, residual_backward_range, &j);
}

/* SwiGLU (seed 004, 11.1, "GLU variants"; Llama's MLP). The first feed-forward matrix is
 * fused: its output rows [0, F) are the gate (Llama's gate_proj), [F, 2F) the up
 * projection (up_proj); the second matrix is down_proj.
 * Shapes: inp [N, 2F], out [N, F]; saves nothing beyond its input.
 *   out = silu(g) * u,  silu(g) = g * sigmoid(g)
 *   dg = dout * u * sigmoid(g) (1 + g (1 - sigmoid(g))),  du = dout * silu(g) */
static wf_real sigmoid(wf_real x) { return 1 / (1 + WF_EXP(-x)); } /* exp overflow gives 0, as it should */

void wf_swiglu_forward(wf_real *out, const wf_real *inp, int N, int F) {
    for (int n = 0; n < N; n++) {
        const wf_real *gate = inp + (size_t)n * 2 * F, *up = gate + F;
        wf_real *o = out + (size_t)n * F;
        for (int i = 0; i < F; i++) o[i] = gate[i] * sigmoid(gate[i]) * up[i];
    }
}

void wf_swiglu_backward(wf_real *dinp, const wf_real *dout, const wf_real *inp, int N, int F) {
    for (int n = 0; n < N; n++) {
        const wf_real *gate = inp + (size_t)n * 2 * F, *up = gate + F;
        const wf_real *d = dout + (size_t)n * F;
        wf_real *dgate = dinp + (size_t)n * 2 * F, *dup = dgate + F;
        for (int i = 0; i < F; i++) {
            /* out = g sigmoid(g) u */
            wf_real s = sigmoid(gate[i]);
            dgate[i] += d[i] * up[i] * s * (1 + gate[i] * (1 - s));
            dup[i] += d[i] * gate[i] * s;
        }
    }
}

/* Dropout, training only (Vaswani et al. 5.4: on every sublayer output before the residual
 * add, and on the embeddings). The mask is drawn once per step and saved; it holds the
 * inverted-dropout scale, so evaluation needs no rescaling.
 *   mask_i = 0 with probability p, else 1/(1-p);  out = inp * mask;  dinp += dout * mask
 * Forward may run in place (out == inp). */
void wf_dropout_mask(wf_real *mask, int N, wf_real p, wf_rng *rng) {
    const wf_real keep = 1 / (1 - p);
    for (int i = 0; i < N; i++) mask[i] = wf_rng_uniform(rng) < (double)p ? 0 : keep;
}

void wf_dropout_forward(wf_real *out, const wf_real *inp, const wf_real *mask, int N) {
    for (int i = 0; i < N; i++) out[i] = inp[i] * mask[i];
}

void wf_dropout_backward(wf_real *dinp, const wf_real *dout, const wf_real *mask, int N) {
    for (int i = 0; i < N; i++) {
        /* out = inp * mask */
        dinp[i] += dout[i] * mask[i];
    }
}
