/* Finite-difference gradient checks in double precision (built against wasmformer_f64):
 * every op's backward, then whole small GPTs through the public API.
 *
 * Each op's scalar loss is L = sum(out * R) for a fixed random R, so dout = R. A numeric
 * gradient is the five-point central difference
 *   (8 (L(x+h) - L(x-h)) - (L(x+2h) - L(x-2h))) / 12h,   h = 1e-4,
 * whose truncation error is O(h^4) ~ 1e-16 and rounding error ~ eps * L / h ~ 1e-12. The error
 * of one element is |a - n| / max(|a|, |n|, 1e-3 * max|n| over the tensor): relative for
 * every element that matters, and not divided by ~0 for entries a thousand times smaller
 * than the tensor's largest. Every tensor must stay below 1e-6. */
#include <stdlib.h>

#include "check.h"
#include "model.h"

#if !defined(WF_DOUBLE)
#error "test_gradcheck needs the double build (WF_DOUBLE)"
#endif

#define H 1e-4
#define TOL 1e-6

static double worst_overall = 0;

static void fill(wf_rng *r, double *x, size_t n, double scale) {
    for (size_t i = 0; i < n; i++) x[i] = scale * wf_rng_normal(r);
}

static double *alloc_d(size_t n) { return calloc(n, sizeof(double)); }

typedef double (*loss_fn)(void *ctx);

/* Compares analytic[0, n) with central differences of loss over x[0, n). */
static void check_tensor(const char *op, const char *what, loss_fn loss, void *ctx, double *x,
                         const double *analytic, size_t n) {
    double *num = alloc_d(n);
    double scale = 0;
    for (size_t i = 0; i < n; i++) {
        double saved = x[i];
        x[i] = saved + H;
        double lp = loss(ctx);
        x[i] = saved - H;
        double lm = loss(ctx);
        x[i] = saved + 2 * H;
        double lp2 = loss(ctx);
        x[i] = saved - 2 * H;
        double lm2 = loss(ctx);
        x[i] = saved;
        num[i] = (8 * (lp - lm) - (lp2 - lm2)) / (12 * H);
        if (fabs(num[i]) > scale) scale = fabs(num[i]);
    }
    double worst = 0;
    size_t worst_i = 0;
    for (size_t i = 0; i < n; i++) {
        double den = fmax(fmax(fabs(analytic[i]), fabs(num[i])), 1e-3 * scale);
        double err = den > 0 ? fabs(analytic[i] - num[i]) / den : 0;
        if (err > worst) {
            worst = err;
            worst_i = i;
        }
    }
    if (worst > worst_overall) worst_overall = worst;
    printf("  %-12s %-10s n=%-6zu max rel err %.2e\n", op, what, n, worst);
    CHECK(worst < TOL, "%s d%s[%zu]: analytic %.10g numeric %.10g (rel err %.3g)", op, what, worst_i,
          analytic[worst_i], num[worst_i], worst);
    CHECK(scale > 0, "%s d%s: the gradient is identically zero, so the check proves nothing", op, what);
    free(num);
}

static double dot(const double *a, const double *b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* ---- embedding ---- */
typedef struct {
    int B, T, C, V;
    int32_t *ids;
    double *wte, *wpe, *out, *R;
} embed_ctx;

static double embed_loss(void *p) {
    embed_ctx *c = p;
    wf_embed_forward(c->out, c->ids, c->wte, c->wpe, c->B, c->T, c->C);
    return dot(c->out, c->R, (size_t)c->B * c->T * c->C);
}

static void test_embed(wf_rng *r) {
    embed_ctx c = {2, 5, 6, 4, NULL, NULL, NULL, NULL, NULL};
    int32_t ids[] = {0, 3, 3, 1, 0, 2, 2, 2, 1, 3}; /* repeats: gradients must accumulate */
    c.ids = ids;
    size_t N = (size_t)c.B * c.T * c.C;
    c.wte = alloc_d(c.V * c.C); c.wpe = alloc_d(c.T * c.C); c.out = alloc_d(N); c.R = alloc_d(N);
    fill(r, c.wte, c.V * c.C, 1); fill(r, c.wpe, c.T * c.C, 1); fill(r, c.R, N, 1);
    double *dwte = alloc_d(c.V * c.C), *dwpe = alloc_d(c.T * c.C);
    wf_embed_backward(dwte, dwpe, c.R, ids, c.B, c.T, c.C);
    check_tensor("embed", "wte", embed_loss, &c, c.wte, dwte, c.V * c.C);
    check_tensor("embed", "wpe", embed_loss, &c, c.wpe, dwpe, c.T * c.C);
    free(c.wte); free(c.wpe); free(c.out); free(c.R); free(dwte); free(dwpe);
}

/* ---- layernorm ---- */
typedef struct {
    int N, C;
    double *inp, *w, *b, *out, *mean, *rstd, *R;
} ln_ctx;

static double ln_loss(void *p) {
    ln_ctx *c = p;
    wf_layernorm_forward(c->out, c->mean, c->rstd, c->inp, c->w, c->b, c->N, c->C, 1e-5);
    return dot(c->out, c->R, (size_t)c->N * c->C);
}

static void test_layernorm(wf_rng *r) {
    ln_ctx c = {4, 7, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    size_t NC = (size_t)c.N * c.C;
    c.inp = alloc_d(NC); c.w = alloc_d(c.C); c.b = alloc_d(c.C); c.out = alloc_d(NC);
    c.mean = alloc_d(c.N); c.rstd = alloc_d(c.N); c.R = alloc_d(NC);
    fill(r, c.inp, NC, 2); fill(r, c.w, c.C, 1); fill(r, c.b, c.C, 1); fill(r, c.R, NC, 1);
    double *dinp = alloc_d(NC), *dw = alloc_d(c.C), *db = alloc_d(c.C);
    ln_loss(&c);
    wf_layernorm_backward(dinp, dw, db, c.R, c.inp, c.mean, c.rstd, c.w, c.N, c.C);
    check_tensor("layernorm", "inp", ln_loss, &c, c.inp, dinp, NC);
    check_tensor("layernorm", "w", ln_loss, &c, c.w, dw, c.C);
    check_tensor("layernorm", "b", ln_loss, &c, c.b, db, c.C);
    free(c.inp); free(c.w); free(c.b); free(c.out); free(c.mean); free(c.rstd); free(c.R);
    free(dinp); free(dw); free(db);
}

/* ---- linear ---- */
typedef struct {
    int N, C, OC;
    double *inp, *w, *b, *out, *R;
} lin_ctx;

static double lin_loss(void *p) {
    lin_ctx *c = p;
    wf_linear_forward(c->out, c->inp, c->w, c->b, c->N, c->C, c->OC, NULL);
    return dot(c->out, c->R, (size_t)c->N * c->OC);
}

static void test_linear(wf_rng *r) {
    lin_ctx c = {5, 6, 3, NULL, NULL, NULL, NULL, NULL};
    c.inp = alloc_d(c.N * c.C); c.w = alloc_d(c.OC * c.C); c.b = alloc_d(c.OC);
    c.out = alloc_d(c.N * c.OC); c.R = alloc_d(c.N * c.OC);
    fill(r, c.inp, c.N * c.C, 1); fill(r, c.w, c.OC * c.C, 1); fill(r, c.b, c.OC, 1); fill(r, c.R, c.N * c.OC, 1);
    double *dinp = alloc_d(c.N * c.C), *dw = alloc_d(c.OC * c.C), *db = alloc_d(c.OC);
    wf_linear_backward(dinp, dw, db, c.R, c.inp, c.w, c.N, c.C, c.OC, NULL);
    check_tensor("linear", "inp", lin_loss, &c, c.inp, dinp, c.N * c.C);
    check_tensor("linear", "w", lin_loss, &c, c.w, dw, c.OC * c.C);
    check_tensor("linear", "b", lin_loss, &c, c.b, db, c.OC);
    free(c.inp); free(c.w); free(c.b); free(c.out); free(c.R); free(dinp); free(dw); free(db);
}

/* ---- attention: packed causal self-attention, padded bidirectional, and cross ---- */
typedef struct {
    wf_attn_dims d;
    double *q, *k, *v, *out, *att, *R;
} att_ctx;

static double att_loss(void *p) {
    att_ctx *c = p;
    wf_attention_forward(c->out, c->att, c->q, c->k, c->v, &c->d, NULL);
    return dot(c->out, c->R, (size_t)c->d.B * c->d.Tq * c->d.NH * c->d.HS);
}

static void run_attention_case(wf_rng *r, const char *name, wf_attn_dims d, int packed) {
    const size_t C = (size_t)d.NH * d.HS;
    const size_t qn = (size_t)d.B * d.Tq * d.q_stride, kn = (size_t)d.B * d.Tk * d.kv_stride;
    att_ctx c;
    c.d = d;
    double *qbuf = alloc_d(qn), *kvbuf = packed ? qbuf : alloc_d(kn);
    fill(r, qbuf, qn, 1);
    if (!packed) fill(r, kvbuf, kn, 1);
    c.q = qbuf;
    c.k = kvbuf + (packed ? C : 0);
    c.v = kvbuf + (packed ? 2 * C : C);
    c.out = alloc_d((size_t)d.B * d.Tq * C);
    c.att = alloc_d((size_t)d.B * d.NH * d.Tq * d.Tk);
    c.R = alloc_d((size_t)d.B * d.Tq * C);
    fill(r, c.R, (size_t)d.B * d.Tq * C, 1);
    att_loss(&c);

    /* the seeds' properties on the forward: rows are distributions, masked keys get 0 */
    double worst_row = 0, masked_mass = 0;
    for (int b = 0; b < d.B; b++)
        for (int h = 0; h < d.NH; h++)
            for (int i = 0; i < d.Tq; i++) {
                const double *a = c.att + (((size_t)b * d.NH + h) * d.Tq + i) * d.Tk;
                double s = 0;
                for (int j = 0; j < d.Tk; j++) {
                    s += a[j];
                    int visible = (!d.causal || j <= i + d.Tk - d.Tq) && (!d.key_len || j < d.key_len[b]);
                    if (!visible) masked_mass += fabs(a[j]);
                }
                worst_row = fmax(worst_row, fabs(s - 1));
            }
    CHECK(worst_row < 1e-12, "%s: an attention row sums to 1 +- %.3g", name, worst_row);
    CHECK(masked_mass == 0, "%s: masked keys got weight %.3g", name, masked_mass);

    double *dqbuf = alloc_d(qn), *dkvbuf = packed ? dqbuf : alloc_d(kn);
    double *dq = dqbuf, *dk = dkvbuf + (packed ? C : 0), *dv = dkvbuf + (packed ? 2 * C : C);
    wf_attention_backward(dq, dk, dv, c.R, c.out, c.att, c.q, c.k, c.v, &d, NULL);
    /* check q, k and v through the buffers they live in */
    check_tensor(name, packed ? "qkv" : "q", att_loss, &c, qbuf, dqbuf, qn);
    if (!packed) check_tensor(name, "kv", att_loss, &c, kvbuf, dkvbuf, kn);
    free(qbuf); free(dqbuf);
    if (!packed) { free(kvbuf); free(dkvbuf); }
    free(c.out); free(c.att); free(c.R);
}

static void test_attention(wf_rng *r) {
    /* GPT self-attention: q, k, v packed in one [B, T, 3C] buffer, causal */
    run_attention_case(r, "attn causal", (wf_attn_dims){2, 2, 3, 5, 5, 18, 18, 1, NULL}, 1);
    /* encoder: bidirectional with padding (sequence 1 has 3 real keys of 5) */
    static const int32_t lens[2] = {5, 3};
    run_attention_case(r, "attn padded", (wf_attn_dims){2, 2, 3, 5, 5, 18, 18, 0, lens}, 1);
    /* cross-attention: 3 queries over 4 keys from another sequence, separate buffers */
    run_attention_case(r, "attn cross", (wf_attn_dims){2, 2, 2, 3, 4, 4, 8, 0, NULL}, 0);
    /* a KV-cache step: 2 new queries at the end of 6 keys, causal bottom-right */
    run_attention_case(r, "attn cached", (wf_attn_dims){1, 2, 2, 2, 6, 4, 8, 1, NULL}, 0);
}

/* ---- pointwise ---- */
typedef struct {
    int N, which; /* 0 gelu, 1 relu, 2 residual */
    double *a, *b, *out, *R;
} pw_ctx;

static double pw_loss(void *p) {
    pw_ctx *c = p;
    if (c->which == 0) wf_gelu_forward(c->out, c->a, c->N);
    else if (c->which == 1) wf_relu_forward(c->out, c->a, c->N);
    else wf_residual_forward(c->out, c->a, c->b, c->N);
    return dot(c->out, c->R, c->N);
}

static void test_pointwise(wf_rng *r) {
    static const char *names[] = {"gelu", "relu", "residual"};
    for (int which = 0; which < 3; which++) {
        pw_ctx c = {64, which, alloc_d(64), alloc_d(64), alloc_d(64), alloc_d(64)};
        fill(r, c.a, 64, 3); /* wide enough to reach GELU's tails */
        fill(r, c.b, 64, 1);
        fill(r, c.R, 64, 1);
        double *da = alloc_d(64), *db = alloc_d(64);
        if (which == 0) wf_gelu_backward(da, c.R, c.a, c.N);
        else if (which == 1) wf_relu_backward(da, c.R, c.a, c.N);
        else wf_residual_backward(da, db, c.R, c.N);
        check_tensor(names[which], "inp", pw_loss, &c, c.a, da, 64);
        if (which == 2) check_tensor(names[which], "b", pw_loss, &c, c.b, db, 64);
        free(c.a); free(c.b); free(c.out); free(c.R); free(da); free(db);
    }
}

/* ---- softmax + cross-entropy ---- */
typedef struct {
    int N, V;
    double *logits, *probs, *losses;
    int32_t *targets;
} ce_ctx;

static double ce_loss(void *p) {
    ce_ctx *c = p;
    int count;
    return wf_crossentropy_forward(c->losses, c->probs, c->logits, c->targets, c->N, c->V, &count) / count;
}

static void test_crossentropy(wf_rng *r) {
    int32_t targets[] = {2, 0, -1, 4}; /* -1: ignored, like padding */
    ce_ctx c = {4, 5, alloc_d(20), alloc_d(20), alloc_d(4), targets};
    fill(r, c.logits, 20, 2);
    ce_loss(&c);
    double *dlogits = alloc_d(20);
    wf_crossentropy_backward(dlogits, 1.0 / 3, c.probs, targets, c.N, c.V);
    check_tensor("xent", "logits", ce_loss, &c, c.logits, dlogits, 20);
    free(c.logits); free(c.probs); free(c.losses); free(dlogits);
}

/* ---- whole GPTs through the public API ---- */
typedef struct {
    wf_model *m;
    int32_t *in, *tg;
    int B, T;
} gpt_ctx;

static double gpt_loss(void *p) {
    gpt_ctx *c = p;
    wf_real loss = 0;
    wf_status s = wf_forward(c->m, c->in, c->tg, c->B, c->T, &loss);
    CHECK(s == WF_OK, "forward: %s", wf_model_error(c->m));
    return loss;
}

static void test_gpt(const char *name, wf_config cfg) {
    printf(" %s\n", name);
    wf_model *m = wf_model_create();
    CHECK_OK(wf_model_init(m, &cfg), m);
    /* non-trivial norms and biases, so their gradients are not a special case */
    wf_rng r;
    wf_rng_seed(&r, 7);
    for (int i = 0; i < wf_model_tensor_count(m); i++) {
        wf_tensor_info t;
        wf_model_tensor(m, i, &t);
        wf_real *w = wf_model_params(m) + t.offset;
        for (int j = 0; j < t.size; j++) w[j] += 0.1 * wf_rng_normal(&r);
    }
    gpt_ctx c = {m, NULL, NULL, 2, cfg.context};
    int n = c.B * c.T;
    c.in = malloc(n * sizeof(int32_t));
    c.tg = malloc(n * sizeof(int32_t));
    for (int i = 0; i < n; i++) {
        c.in[i] = (int32_t)(wf_rng_u32(&r) % cfg.vocab_size);
        c.tg[i] = (int32_t)(wf_rng_u32(&r) % cfg.vocab_size);
    }
    c.tg[3] = -1; /* one ignored target */
    wf_real loss;
    CHECK_OK(wf_compute_grads(m, c.in, c.tg, c.B, c.T, &loss), m);
    int stride = 0;
    for (int i = 0; i < wf_model_tensor_count(m); i++) {
        wf_tensor_info t;
        wf_model_tensor(m, i, &t);
        stride = t.offset + t.size;
    }
    double *grads = alloc_d(stride);
    memcpy(grads, wf_model_grads(m), stride * sizeof(double));
    for (int i = 0; i < wf_model_tensor_count(m); i++) {
        wf_tensor_info t;
        wf_model_tensor(m, i, &t);
        if (!t.size) continue;
        check_tensor("  gpt", t.name, gpt_loss, &c, wf_model_params(m) + t.offset, grads + t.offset, t.size);
    }
    free(grads);
    free(c.in);
    free(c.tg);
    wf_model_free(m);
}

static wf_config small_gpt(void) {
    wf_config c;
    wf_config_default(&c);
    c.vocab_size = 7;
    c.context = 4;
    c.n_layer = 2;
    c.n_head = 2;
    c.d_model = 6;
    c.d_ff = 10;
    c.seed = 3;
    return c;
}

int main(void) {
    wf_rng r;
    wf_rng_seed(&r, 42);
    printf("ops\n");
    test_embed(&r);
    test_layernorm(&r);
    test_linear(&r);
    test_attention(&r);
    test_pointwise(&r);
    test_crossentropy(&r);

    printf("whole models\n");
    wf_config c = small_gpt();
    test_gpt("gpt: tied head, learned positions, GELU, biases", c);
    c = small_gpt();
    c.tied_head = 0;
    c.activation = WF_ACT_RELU;
    test_gpt("gpt: untied head, ReLU", c);
    c = small_gpt();
    c.positions = WF_POS_SINUSOIDAL;
    c.bias = 0;
    test_gpt("gpt: sinusoidal positions, no biases", c);

    printf("largest relative error over every check: %.2e (tolerance %.0e)\n", worst_overall, TOL);
    return check_summary("test_gradcheck");
}
