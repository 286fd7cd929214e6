/* Finite-difference gradient checks in double precision (built against wasmformer_f64):
 * every op's backward, the softmax Jacobian, then whole small models through the public API.
 *
 * Each op's scalar loss is L = sum(out * R) for a fixed random R, so dout = R. A numeric
 * gradient is the five-point central difference
 *   (8 (L(x+h) - L(x-h)) - (L(x+2h) - L(x-2h))) / 12h,   h = 1e-4,
 * whose truncation error is O(h^4) ~ 1e-16 and rounding error ~ eps * L / h ~ 1e-12. The error
 * of one element is |a - n| / max(|a|, |n|, 1e-3 * max|n| over the tensor): relative for
 * every element that matters, and not divided by ~0 for entries a thousand times smaller
 * than the tensor's largest. Every tensor must stay below 1e-6.
 * Whole models: every architecture (decoder, encoder, encoder-decoder) with the block
 * variants that change the backward pass (Pre/Post-LN, LayerNorm/RMSNorm, GELU/ReLU/SwiGLU,
 * learned/sinusoidal/rotary positions, tied/untied, biases, padding, dropout, MSE). */
#include <stdlib.h>

#include "check.h"
#include "model.h"

#if !defined(WF_DOUBLE)
#error "test_gradcheck needs the double build (WF_DOUBLE)"
#endif

#define H 1e-4
#define TOL 1e-6
/* Whole models are checked at weights of a trained net's scale (about 1/sqrt(C), C = 8),
 * not at init: there, paths through several layers (an encoder seen through
 * cross-attention) carry gradients a thousand times below the largest, down at the
 * differences' rounding floor (~1e-12 absolute for a loss ~2). */
#define PERTURB 0.3

static double worst_overall = 0;
static size_t kinks_overall = 0;

static void fill(wf_rng *r, double *x, size_t n, double scale) {
    for (size_t i = 0; i < n; i++) x[i] = scale * wf_rng_normal(r);
}

static double *alloc_d(size_t n) { return calloc(n, sizeof(double)); }

typedef double (*loss_fn)(void *ctx);

/* Compares analytic[0, n) with central differences of loss over x[0, n). */
static void check_tensor(const char *op, const char *what, loss_fn loss, void *ctx, double *x,
                         const double *analytic, size_t n) {
    double *num = alloc_d(n), *num3 = alloc_d(n);
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
        num3[i] = (lp - lm) / (2 * H);
        if (fabs(num[i]) > scale) scale = fabs(num[i]);
    }
    double worst = 0;
    size_t worst_i = 0, kinks = 0;
    for (size_t i = 0; i < n; i++) {
        double den = fmax(fmax(fabs(analytic[i]), fabs(num[i])), 1e-3 * scale);
        /* A ReLU kink inside [x - 2h, x + 2h]: the loss has no derivative there to compare
         * with. Smooth, the 3- and 5-point estimates agree to h^2 f'''/6 (seen up to 6e-5
         * relative); across a kink they differ by the jump in slope. Decided from the
         * finite differences alone, so it cannot excuse a wrong analytic gradient. */
        if (fabs(num[i] - num3[i]) > 1e-3 * den) {
            kinks++;
            continue;
        }
        double err = den > 0 ? fabs(analytic[i] - num[i]) / den : 0;
        if (err > worst) {
            worst = err;
            worst_i = i;
        }
    }
    if (worst > worst_overall) worst_overall = worst;
    kinks_overall += kinks;
    printf("  %-12s %-10s n=%-6zu max rel err %.2e%s\n", op, what, n, worst, kinks ? " (kinks skipped)" : "");
    CHECK(kinks <= 2 + n / 20, "%s d%s: %zu of %zu elements sit on a kink: too many to call it chance", op, what, kinks, n);
    CHECK(worst < TOL, "%s d%s[%zu]: analytic %.10g numeric %.10g (rel err %.3g)", op, what, worst_i,
          analytic[worst_i], num[worst_i], worst);
    CHECK(scale > 0, "%s d%s: the gradient is identically zero, so the check proves nothing", op, what);
    free(num);
    free(num3);
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
    wf_layernorm_forward(c->out, c->mean, c->rstd, c->inp, c->w, c->b, c->N, c->C, 1e-5, NULL);
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
    wf_layernorm_backward(dinp, dw, db, c.R, c.inp, c.mean, c.rstd, c.w, c.N, c.C, NULL);
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

/* ---- LoRA: a rank-R update of OC columns in a wider output (a packed qkv's part) ---- */
typedef struct {
    int N, C, OC, R, ldo;
    double s;
    double *inp, *a, *b, *u, *base, *out, *R_;
} lora_ctx;

static double lora_loss(void *p) {
    lora_ctx *c = p;
    memcpy(c->out, c->base, (size_t)c->N * c->ldo * sizeof(double)); /* the linear's output, then the update */
    wf_lora_forward(c->out + 2, c->u, c->inp, c->a, c->b, c->s, c->N, c->C, c->OC, c->R, c->ldo, NULL);
    return dot(c->out, c->R_, (size_t)c->N * c->ldo);
}

static void test_lora(wf_rng *r) {
    lora_ctx c = {.N = 5, .C = 6, .OC = 4, .R = 3, .ldo = 9, .s = 16.0 / 3};
    const size_t NO = (size_t)c.N * c.ldo;
    c.inp = alloc_d(c.N * c.C); c.a = alloc_d(c.R * c.C); c.b = alloc_d(c.OC * c.R); c.u = alloc_d(c.N * c.R);
    c.base = alloc_d(NO); c.out = alloc_d(NO); c.R_ = alloc_d(NO);
    fill(r, c.inp, c.N * c.C, 1); fill(r, c.a, c.R * c.C, 1); fill(r, c.b, c.OC * c.R, 1);
    fill(r, c.base, NO, 1); fill(r, c.R_, NO, 1);
    double *dinp = alloc_d(c.N * c.C), *da = alloc_d(c.R * c.C), *db = alloc_d(c.OC * c.R), *g = alloc_d(c.N * c.R);
    lora_loss(&c); /* u as forward saves it */
    wf_lora_backward(dinp, da, db, c.R_ + 2, c.u, c.inp, c.a, c.b, g, c.s, c.N, c.C, c.OC, c.R, c.ldo, NULL);
    check_tensor("lora", "inp", lora_loss, &c, c.inp, dinp, c.N * c.C);
    check_tensor("lora", "A", lora_loss, &c, c.a, da, c.R * c.C);
    check_tensor("lora", "B", lora_loss, &c, c.b, db, c.OC * c.R);
    /* merged: W + s B A gives the same product as W plus the update */
    double w[4 * 6], y_merged = 0, y_lora = 0, sb[4 * 3];
    fill(r, w, 24, 1);
    double x[6], wx[4] = {0}, u[3] = {0};
    fill(r, x, 6, 1);
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 6; i++) wx[j] += w[j * 6 + i] * x[i];
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 6; i++) u[k] += c.a[k * 6 + i] * x[i];
    wf_lora_merge(w, c.a, c.b, c.s, 6, 4, 3, sb);
    double worst = 0;
    for (int j = 0; j < 4; j++) {
        y_merged = 0;
        for (int i = 0; i < 6; i++) y_merged += w[j * 6 + i] * x[i];
        y_lora = wx[j];
        for (int k = 0; k < 3; k++) y_lora += c.s * c.b[j * 3 + k] * u[k];
        worst = fmax(worst, fabs(y_merged - y_lora));
    }
    printf("  lora merge: |(W + s B A) x - (W x + s B A x)| %.1e\n", worst);
    CHECK(worst < 1e-12, "the merged weights differ from the adapter's sum by %g", worst);
    free(c.inp); free(c.a); free(c.b); free(c.u); free(c.base); free(c.out); free(c.R_);
    free(dinp); free(da); free(db); free(g);
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
    const size_t C = (size_t)d.NH * d.HS, KC = (size_t)(d.KV ? d.KV : d.NH) * d.HS; /* k, v: KC wide */
    const size_t qn = (size_t)d.B * d.Tq * d.q_stride, kn = (size_t)d.B * d.Tk * d.kv_stride;
    att_ctx c;
    c.d = d;
    double *qbuf = alloc_d(qn), *kvbuf = packed ? qbuf : alloc_d(kn);
    fill(r, qbuf, qn, 1);
    if (!packed) fill(r, kvbuf, kn, 1);
    c.q = qbuf;
    c.k = kvbuf + (packed ? C : 0);
    c.v = kvbuf + (packed ? C + KC : KC);
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
    double *dq = dqbuf, *dk = dkvbuf + (packed ? C : 0), *dv = dkvbuf + (packed ? C + KC : KC);
    wf_attention_backward(dq, dk, dv, c.R, c.out, c.att, c.q, c.k, c.v, &d, NULL);
    /* check q, k and v through the buffers they live in */
    check_tensor(name, packed ? "qkv" : "q", att_loss, &c, qbuf, dqbuf, qn);
    if (!packed) check_tensor(name, "kv", att_loss, &c, kvbuf, dkvbuf, kn);
    free(qbuf); free(dqbuf);
    if (!packed) { free(kvbuf); free(dkvbuf); }
    free(c.out); free(c.att); free(c.R);
}

static void test_attention(wf_rng *r) {
#define ATT(...) (wf_attn_dims){__VA_ARGS__}
    /* GPT self-attention: q, k, v packed in one [B, T, 3C] buffer, causal */
    run_attention_case(r, "attn causal", ATT(.B = 2, .NH = 2, .HS = 3, .Tq = 5, .Tk = 5, .q_stride = 18, .kv_stride = 18,
                                             .causal = 1), 1);
    /* encoder: bidirectional with padding (sequence 1 has 3 real keys of 5) */
    static const int32_t lens[2] = {5, 3};
    run_attention_case(r, "attn padded", ATT(.B = 2, .NH = 2, .HS = 3, .Tq = 5, .Tk = 5, .q_stride = 18, .kv_stride = 18,
                                             .key_len = lens), 1);
    /* cross-attention: 3 queries over 4 keys from another sequence, separate buffers */
    run_attention_case(r, "attn cross", ATT(.B = 2, .NH = 2, .HS = 2, .Tq = 3, .Tk = 4, .q_stride = 4, .kv_stride = 8), 0);
    /* a KV-cache step: 2 new queries at the end of 6 keys, causal bottom-right */
    run_attention_case(r, "attn cached", ATT(.B = 1, .NH = 2, .HS = 2, .Tq = 2, .Tk = 6, .q_stride = 4, .kv_stride = 8,
                                             .causal = 1), 0);
    /* grouped-query: 4 query heads over 2 key/value heads, packed [B, T, C + 2 KC], causal;
     * and multi-query (1 key/value head) with padding */
    run_attention_case(r, "attn gqa", ATT(.B = 2, .NH = 4, .KV = 2, .HS = 3, .Tq = 5, .Tk = 5, .q_stride = 24,
                                          .kv_stride = 24, .causal = 1), 1);
    run_attention_case(r, "attn mqa", ATT(.B = 2, .NH = 3, .KV = 1, .HS = 2, .Tq = 5, .Tk = 5, .q_stride = 10,
                                          .kv_stride = 10, .key_len = lens), 1);
#undef ATT
}

/* ---- pointwise ---- */
typedef struct {
    int N, which; /* 0 gelu, 1 relu, 2 residual */
    double *a, *b, *out, *R;
} pw_ctx;

static double pw_loss(void *p) {
    pw_ctx *c = p;
    if (c->which == 0) wf_gelu_forward(c->out, c->a, c->N, NULL);
    else if (c->which == 1) wf_relu_forward(c->out, c->a, c->N);
    else if (c->which == 2) wf_residual_forward(c->out, c->a, c->b, c->N, NULL);
    else if (c->which == 3) wf_relu2_forward(c->out, c->a, c->N);
    else if (c->which == 5) wf_gelu_exact_forward(c->out, c->a, c->N);
    else {
        memcpy(c->out, c->a, c->N * sizeof(double)); /* soft-capping works in place */
        wf_softcap_forward(c->out, c->N, 2.5);
    }
    return dot(c->out, c->R, c->N);
}

static void test_pointwise(wf_rng *r) {
    static const char *names[] = {"gelu", "relu", "residual", "relu2", "softcap 2.5", "gelu_exact"};
    for (int which = 0; which < 6; which++) {
        pw_ctx c = {64, which, alloc_d(64), alloc_d(64), alloc_d(64), alloc_d(64)};
        fill(r, c.a, 64, 3); /* wide enough to reach GELU's tails */
        fill(r, c.b, 64, 1);
        fill(r, c.R, 64, 1);
        double *da = alloc_d(64), *db = alloc_d(64);
        if (which == 0) wf_gelu_backward(da, c.R, c.a, c.N, NULL);
        else if (which == 1) wf_relu_backward(da, c.R, c.a, c.N);
        else if (which == 2) wf_residual_backward(da, db, c.R, c.N, NULL);
        else if (which == 3) wf_relu2_backward(da, c.R, c.a, c.N);
        else if (which == 5) wf_gelu_exact_backward(da, c.R, c.a, c.N);
        else {
            /* backward scales dL/dy in place, at the capped values (|z| up to ~9: deep in tanh's tails) */
            pw_loss(&c);
            memcpy(da, c.R, 64 * sizeof(double));
            wf_softcap_backward(da, c.out, c.N, 2.5);
        }
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
    return wf_crossentropy_forward(c->losses, &count, c->probs, c->logits, c->targets, c->N, c->V, NULL) / count;
}

static void test_crossentropy(wf_rng *r) {
    int32_t targets[] = {2, 0, -1, 4}; /* -1: ignored, like padding */
    ce_ctx c = {4, 5, alloc_d(20), alloc_d(20), alloc_d(4), targets};
    fill(r, c.logits, 20, 2);
    ce_loss(&c);
    double *dlogits = alloc_d(20);
    wf_crossentropy_backward(dlogits, 1.0 / 3, c.probs, targets, c.N, c.V, NULL);
    check_tensor("xent", "logits", ce_loss, &c, c.logits, dlogits, 20);
    free(c.logits); free(c.probs); free(c.losses); free(dlogits);
}

/* ---- rmsnorm ---- */
static double rms_loss(void *p) {
    ln_ctx *c = p;
    wf_rmsnorm_forward(c->out, c->rstd, c->inp, c->w, c->N, c->C, 1e-5, NULL);
    return dot(c->out, c->R, (size_t)c->N * c->C);
}

static void test_rmsnorm(wf_rng *r) {
    ln_ctx c = {4, 7, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    size_t NC = (size_t)c.N * c.C;
    c.inp = alloc_d(NC); c.w = alloc_d(c.C); c.out = alloc_d(NC); c.rstd = alloc_d(c.N); c.R = alloc_d(NC);
    fill(r, c.inp, NC, 2); fill(r, c.w, c.C, 1); fill(r, c.R, NC, 1);
    double *dinp = alloc_d(NC), *dw = alloc_d(c.C);
    rms_loss(&c);
    wf_rmsnorm_backward(dinp, dw, c.R, c.inp, c.rstd, c.w, c.N, c.C, NULL);
    check_tensor("rmsnorm", "inp", rms_loss, &c, c.inp, dinp, NC);
    check_tensor("rmsnorm", "w", rms_loss, &c, c.w, dw, c.C);
    free(c.inp); free(c.w); free(c.out); free(c.rstd); free(c.R); free(dinp); free(dw);
}

/* ---- swiglu, dropout (a fixed mask), positions added to vectors ---- */
typedef struct {
    int N, F, which; /* 0 swiglu [N,2F] -> [N,F]; 1 dropout [N*F]; 2 embed_vec pos [F] over N rows */
    double *inp, *mask, *out, *R;
} misc_ctx;

static double misc_loss(void *p) {
    misc_ctx *c = p;
    if (c->which == 0) wf_swiglu_forward(c->out, c->inp, c->N, c->F);
    else if (c->which == 1) wf_dropout_forward(c->out, c->inp, c->mask, c->N * c->F);
    else wf_embed_vec_forward(c->out, c->R, c->inp, 1, c->N, c->F); /* the vectors are data; pos is checked */
    return dot(c->out, c->R, (size_t)c->N * c->F);
}

static void test_misc_pointwise(wf_rng *r) {
    /* swiglu: gates wide enough to reach sigmoid's tails */
    misc_ctx c = {5, 6, 0, alloc_d(60), NULL, alloc_d(30), alloc_d(30)};
    fill(r, c.inp, 60, 3);
    fill(r, c.R, 30, 1);
    double *dinp = alloc_d(60);
    wf_swiglu_backward(dinp, c.R, c.inp, c.N, c.F);
    check_tensor("swiglu", "inp", misc_loss, &c, c.inp, dinp, 60);
    free(c.inp); free(c.out); free(c.R); free(dinp);

    /* dropout: a mask from the op's own sampler, p = 0.3 */
    misc_ctx d = {5, 6, 1, alloc_d(30), alloc_d(30), alloc_d(30), alloc_d(30)};
    wf_rng mr;
    wf_rng_seed(&mr, 11);
    wf_dropout_mask(d.mask, 30, 0.3, &mr);
    int zeros = 0;
    for (int i = 0; i < 30; i++) {
        CHECK(d.mask[i] == 0 || fabs(d.mask[i] - 1 / 0.7) < 1e-15, "dropout mask value %g", d.mask[i]);
        zeros += d.mask[i] == 0;
    }
    CHECK(zeros > 0 && zeros < 30, "dropout dropped %d of 30", zeros);
    fill(r, d.inp, 30, 1);
    fill(r, d.R, 30, 1);
    double *ddrop = alloc_d(30);
    wf_dropout_backward(ddrop, d.R, d.mask, 30);
    check_tensor("dropout", "inp", misc_loss, &d, d.inp, ddrop, 30);
    free(d.inp); free(d.mask); free(d.out); free(d.R); free(ddrop);

    /* vectors plus positions: only pos gets a gradient */
    misc_ctx e = {4, 5, 2, alloc_d(20), NULL, alloc_d(20), alloc_d(20)};
    fill(r, e.inp, 20, 1);
    fill(r, e.R, 20, 1);
    double *dpos = alloc_d(20);
    wf_embed_vec_backward(dpos, e.R, 1, e.N, e.F);
    check_tensor("embed_vec", "pos", misc_loss, &e, e.inp, dpos, 20);
    free(e.inp); free(e.out); free(e.R); free(dpos);
}

/* ---- rope: q and k inside a packed qkv buffer, at a position offset ---- */
typedef struct {
    int B, T, NH, HS, stride, pos0;
    double *x, *work, *cos, *sin, *R;
} rope_ctx;

static double rope_loss(void *p) {
    rope_ctx *c = p;
    size_t n = (size_t)c->B * c->T * c->stride;
    memcpy(c->work, c->x, n * sizeof(double));
    wf_rope_forward(c->work, c->cos, c->sin, c->B, c->T, c->NH, c->HS, c->stride, c->pos0, NULL);
    return dot(c->work, c->R, n);
}

static void test_rope(wf_rng *r) {
    rope_ctx c = {2, 3, 2, 4, 3 * 8, 2, NULL, NULL, NULL, NULL, NULL};
    const size_t n = (size_t)c.B * c.T * c.stride;
    const int ctx = 8;
    c.x = alloc_d(n); c.work = alloc_d(n); c.R = alloc_d(n);
    c.cos = alloc_d(ctx * c.HS / 2); c.sin = alloc_d(ctx * c.HS / 2);
    wf_rope_table(c.cos, c.sin, ctx, c.HS, 10000.0);
    /* the convention: position t, pair i turns by t * 10000^(-2i/HS) */
    CHECK(fabs(c.cos[5 * 2 + 1] - cos(5 * pow(10000.0, -2.0 / 4))) < 1e-15, "rope table angle");
    fill(r, c.x, n, 1);
    fill(r, c.R, n, 1);
    /* only the channels rope touches (the first of each row's C) carry R; the rest pass */
    double *dx = alloc_d(n);
    memcpy(dx, c.R, n * sizeof(double));
    wf_rope_backward(dx, c.cos, c.sin, c.B, c.T, c.NH, c.HS, c.stride, c.pos0, NULL);
    check_tensor("rope", "x", rope_loss, &c, c.x, dx, n);
    /* a rotation keeps each pair's length */
    rope_loss(&c);
    double worst = 0;
    for (size_t row = 0; row < (size_t)c.B * c.T; row++)
        for (int h = 0; h < c.NH; h++)
            for (int i = 0; i < c.HS / 2; i++) {
                const double *a = c.x + row * c.stride + h * c.HS, *b = c.work + row * c.stride + h * c.HS;
                double before = a[i] * a[i] + a[i + 2] * a[i + 2], after = b[i] * b[i] + b[i + 2] * b[i + 2];
                worst = fmax(worst, fabs(before - after));
            }
    CHECK(worst < 1e-12, "rope changed a pair's length by %g", worst);
    free(c.x); free(c.work); free(c.R); free(c.cos); free(c.sin); free(dx);
}

/* ---- QK-norm: per-head RMS of q and k inside a packed qkv buffer, in place ---- */
typedef struct {
    int N, NH, HS, stride;
    double *x, *work, *rstd, *R;
} headnorm_ctx;

static double headnorm_loss(void *p) {
    headnorm_ctx *c = p;
    size_t n = (size_t)c->N * c->stride;
    memcpy(c->work, c->x, n * sizeof(double));
    wf_headnorm_forward(c->work, c->rstd, c->N, c->NH, c->HS, c->stride, 1e-5);
    return dot(c->work, c->R, n);
}

static void test_headnorm(wf_rng *r) {
    headnorm_ctx c = {5, 2, 4, 3 * 8, NULL, NULL, NULL, NULL};
    const size_t n = (size_t)c.N * c.stride;
    c.x = alloc_d(n); c.work = alloc_d(n); c.R = alloc_d(n); c.rstd = alloc_d((size_t)c.N * c.NH);
    fill(r, c.x, n, 2);
    fill(r, c.R, n, 1);
    headnorm_loss(&c);
    /* the channels it touches (the first C of each row) get dL/dx; the rest pass dL/dy */
    double *dx = alloc_d(n);
    memcpy(dx, c.R, n * sizeof(double));
    wf_headnorm_backward(dx, c.work, c.rstd, c.N, c.NH, c.HS, c.stride);
    check_tensor("headnorm", "x", headnorm_loss, &c, c.x, dx, n);
    /* every head comes out with a mean square of 1 (up to eps) */
    double worst = 0;
    for (int row = 0; row < c.N; row++)
        for (int h = 0; h < c.NH; h++) {
            const double *y = c.work + (size_t)row * c.stride + h * c.HS;
            double ms = 0;
            for (int i = 0; i < c.HS; i++) ms += y[i] * y[i];
            worst = fmax(worst, fabs(ms / c.HS - 1));
        }
    CHECK(worst < 1e-4, "headnorm: a head's mean square is off 1 by %g", worst);
    free(c.x); free(c.work); free(c.R); free(c.rstd); free(dx);
}

/* ---- Muon's Newton-Schulz: what it does to singular values ---- */

/* Orthonormal columns: Gram-Schmidt, twice for double's accuracy, on a random [n, k]. */
static void orthonormal(wf_rng *r, double *q, int n, int k) {
    fill(r, q, (size_t)n * k, 1);
    for (int pass = 0; pass < 2; pass++)
        for (int j = 0; j < k; j++) {
            for (int i = 0; i < j; i++) {
                double d = 0;
                for (int t = 0; t < n; t++) d += q[t * k + i] * q[t * k + j];
                for (int t = 0; t < n; t++) q[t * k + j] -= d * q[t * k + i];
            }
            double nn = 0;
            for (int t = 0; t < n; t++) nn += q[t * k + j] * q[t * k + j];
            for (int t = 0; t < n; t++) q[t * k + j] /= sqrt(nn);
        }
}

/* G = U diag(s) V^T with known U [r, r], V [c, r] and singular values s spread over two
 * decades: NS5 must return U diag(phi^5(s / |s|)) V^T with phi(x) = a x + b x^3 + c x^5
 * (optim.c), so it keeps the singular vectors and only moves the values, and every value
 * must land in [0.68, 1.21]: the orthogonalisation Muon relies on. */
static void test_newton_schulz(wf_rng *r) {
    enum { RR = 6, CC = 10 };
    double U[RR * RR], V[CC * RR], s[RR], g[RR * CC], want[RR * CC];
    orthonormal(r, U, RR, RR);
    orthonormal(r, V, CC, RR);
    double norm = 0;
    for (int i = 0; i < RR; i++) {
        s[i] = 3 * pow(100.0, -(double)i / (RR - 1)); /* 3 ... 0.03 */
        norm += s[i] * s[i];
    }
    norm = sqrt(norm);
    double lo = INFINITY, hi = 0, f[RR];
    for (int i = 0; i < RR; i++) {
        double x = s[i] / (norm + 1e-7);
        for (int it = 0; it < 5; it++) x = 3.4445 * x - 4.7750 * x * x * x + 2.0315 * x * x * x * x * x;
        f[i] = x;
        lo = fmin(lo, x);
        hi = fmax(hi, x);
    }
    for (int i = 0; i < RR; i++)
        for (int j = 0; j < CC; j++) {
            double gij = 0, wij = 0;
            for (int k = 0; k < RR; k++) {
                gij += U[i * RR + k] * s[k] * V[j * RR + k];
                wij += U[i * RR + k] * f[k] * V[j * RR + k];
            }
            g[i * CC + j] = gij;
            want[i * CC + j] = wij;
        }
    double scratch[RR * CC + 2 * RR * RR];
    wf_newton_schulz(g, RR, CC, scratch, NULL);
    double err = 0;
    for (int i = 0; i < RR * CC; i++) err = fmax(err, fabs(g[i] - want[i]));
    printf("  newton-schulz: singular values %.3g..%.3g -> %.3f..%.3f, max abs err vs U phi^5(S) V^T %.2e\n",
           s[RR - 1], s[0], lo, hi, err);
    CHECK(err < 1e-12, "newton-schulz: differs from U phi^5(S) V^T by %g", err);
    CHECK(lo >= 0.68 && hi <= 1.21, "newton-schulz: singular values end in [%g, %g], not [0.68, 1.21]", lo, hi);
}

/* ---- mean squared error over real rows ---- */
typedef struct {
    int B, T, C;
    const int32_t *lengths;
    double *y, *target;
} mse_ctx;

static double mse_loss(void *p) {
    mse_ctx *c = p;
    double count;
    double total = wf_mse_forward(&count, c->y, c->target, c->lengths, c->B, c->T, c->C);
    return total / count;
}

static void test_mse(wf_rng *r) {
    static const int32_t lengths[2] = {3, 1};
    mse_ctx c = {2, 3, 4, lengths, alloc_d(24), alloc_d(24)};
    fill(r, c.y, 24, 1);
    fill(r, c.target, 24, 1);
    double count;
    wf_mse_forward(&count, c.y, c.target, c.lengths, c.B, c.T, c.C);
    CHECK(count == 16, "mse counts the real rows' elements: %g", count);
    double *dy = alloc_d(24);
    wf_mse_backward(dy, 1 / count, c.y, c.target, c.lengths, c.B, c.T, c.C);
    for (int i = 16; i < 24; i++) CHECK(dy[i] == 0, "padding row got a gradient");
    /* padded rows are checked only through their exact zeros above */
    check_tensor("mse", "y", mse_loss, &c, c.y, dy, 16);
    free(c.y); free(c.target); free(dy);
}

/* ---- the softmax Jacobian through the attention op's backward (seed 003, theorem 17) ----
 * With HS = Tk, keys k_j = e_j / scale and values v_j = e_j, dq_i = J(a_i) dout_i exactly:
 * dv_j... aside, ds_ij = a_ij (do_i[j] - do_i.o_i), and dq_i[c] = sum_j ds_ij k_j[c] scale = ds_ic.
 * Feeding dout_i = e_m gives column m of J = diag(a) - a a^T. Its rank must be T - 1 (J 1 = 0)
 * over the visible keys. */
static int rank_of(double *A, int n, double tol) {
    int rank = 0;
    for (int col = 0; col < n && rank < n; col++) {
        int piv = rank;
        for (int i = rank; i < n; i++)
            if (fabs(A[i * n + col]) > fabs(A[piv * n + col])) piv = i;
        if (fabs(A[piv * n + col]) <= tol) continue;
        for (int j = 0; j < n; j++) {
            double t = A[rank * n + j];
            A[rank * n + j] = A[piv * n + j];
            A[piv * n + j] = t;
        }
        for (int i = rank + 1; i < n; i++) {
            double f = A[i * n + col] / A[rank * n + col];
            for (int j = 0; j < n; j++) A[i * n + j] -= f * A[rank * n + j];
        }
        rank++;
    }
    return rank;
}

static void test_softmax_jacobian(wf_rng *r) {
    enum { TK = 6 };
    for (int visible = 2; visible <= TK; visible += 2) {
        const int32_t key_len[1] = {visible};
        wf_attn_dims d = {.B = 1, .NH = 1, .HS = TK, .Tq = 1, .Tk = TK, .q_stride = TK, .kv_stride = TK, .key_len = key_len};
        const double scale = 1 / sqrt((double)TK);
        double q[TK], k[TK * TK] = {0}, v[TK * TK] = {0}, out[TK], att[TK];
        fill(r, q, TK, 1.5);
        for (int j = 0; j < TK; j++) {
            k[j * TK + j] = 1 / scale;
            v[j * TK + j] = 1;
        }
        wf_attention_forward(out, att, q, k, v, &d, NULL);
        double J[TK * TK], worst = 0;
        for (int col = 0; col < TK; col++) {
            double dout[TK] = {0}, dq[TK] = {0};
            dout[col] = 1;
            wf_attention_backward(dq, NULL, NULL, dout, out, att, q, k, v, &d, NULL);
            for (int row = 0; row < TK; row++) J[row * TK + col] = dq[row];
        }
        /* J = diag(a) - a a^T, and J 1 = 0 */
        double rowsum = 0;
        for (int i = 0; i < TK; i++) {
            double s = 0;
            for (int j = 0; j < TK; j++) {
                double want = (i == j ? att[i] : 0) - att[i] * att[j];
                worst = fmax(worst, fabs(J[i * TK + j] - want));
                s += J[i * TK + j];
            }
            rowsum = fmax(rowsum, fabs(s));
        }
        int rank = rank_of(J, TK, 1e-9);
        printf("  softmax Jacobian, %d of %d keys visible: |J - (diag(a) - aa^T)| %.1e, |J 1| %.1e, rank %d\n", visible,
               TK, worst, rowsum, rank);
        CHECK(worst < 1e-15, "the op's softmax Jacobian differs from diag(a) - aa^T by %g", worst);
        CHECK(rowsum < 1e-15, "J 1 = %g, not 0", rowsum);
        CHECK(rank == visible - 1, "rank %d, want %d (T - 1 over the visible keys)", rank, visible - 1);
    }
}

/* ---- whole models of every architecture through the public API ---- */
typedef struct {
    wf_model *m;
    wf_batch b;
    int train; /* dropout models: the loss of the training forward (its masks are fixed per step) */
} model_ctx;

static double model_loss(void *p) {
    model_ctx *c = p;
    wf_real loss = 0;
    wf_status s = wf_model_loss(c->m, &c->b, c->train, &loss); /* the double build's loss, in double */
    CHECK(s == WF_OK, "forward: %s", wf_model_error(c->m));
    return loss;
}

enum { PADDED = 1, MSE = 2, VEC_INPUTS = 4, Q4_BASE = 8 };

/* A batch of B = 2 for cfg: ids or vectors in, ids or vectors out, a source for
 * encoder-decoders (S = context, T = context - 1, so Tq != Tk), padding with PADDED. With a
 * trainable mask (train: "1" and "0" per slice, NULL: the config's default) only the
 * slices that train have gradients, each checked where wf_tensor_info.grad_offset puts it.
 * Q4_BASE (QLoRA): the linears and embedding quantized to Q4_0 after the perturbation, and
 * the gradients then also equal, bit for bit, those of the float model holding its values. */
static void test_model_grads_with(const char *name, wf_config cfg, int flags, const char *train);
static void test_model_grads(const char *name, wf_config cfg, int flags) { test_model_grads_with(name, cfg, flags, NULL); }

static void test_model_grads_with(const char *name, wf_config cfg, int flags, const char *train) {
    printf(" %s\n", name);
    wf_model *m = wf_model_create();
    CHECK_OK(wf_model_init(m, &cfg), m);
    /* non-trivial norms and biases, so their gradients are not a special case */
    wf_rng r;
    wf_rng_seed(&r, 7);
    for (int i = 0; i < model_info(m).n_tensors; i++) {
        wf_tensor_info t;
        wf_model_get_tensor(m, i, &t);
        wf_real *w = WF_REALS(wf_model_params(m)) + t.offset;
        for (int j = 0; j < t.size; j++) w[j] += PERTURB * wf_rng_normal(&r);
    }
    if (flags & Q4_BASE) CHECK_OK(wf_model_quantize(m, WF_QUANT_Q4_0), m);
    const int xa = cfg.arch == WF_ARCH_ENCODER_DECODER;
    const int B = 2, T = xa ? cfg.context - 1 : cfg.context, S = xa ? cfg.context : 0, C = cfg.d_model;
    model_ctx c;
    memset(&c, 0, sizeof c);
    c.m = m;
    c.train = cfg.dropout > 0;
    int32_t *in = malloc(B * T * sizeof(int32_t)), *tg = malloc(B * T * sizeof(int32_t));
    int32_t *src = xa ? malloc(B * S * sizeof(int32_t)) : NULL;
    double *vin = alloc_d((size_t)B * T * C), *vtg = alloc_d((size_t)B * T * C);
    static const int32_t lengths[2] = {0, 2}, src_lengths[2] = {0, 2}; /* [0] is set below */
    int32_t len[2], slen[2];
    memcpy(len, lengths, sizeof len);
    memcpy(slen, src_lengths, sizeof slen);
    len[0] = T;
    slen[0] = S;
    for (int i = 0; i < B * T; i++) {
        in[i] = (int32_t)(wf_rng_u32(&r) % cfg.vocab_size);
        tg[i] = (int32_t)(wf_rng_u32(&r) % cfg.vocab_size);
    }
    for (int i = 0; i < B * S; i++) src[i] = (int32_t)(wf_rng_u32(&r) % cfg.vocab_size);
    fill(&r, vin, (size_t)B * T * C, 1);
    fill(&r, vtg, (size_t)B * T * C, 1);
    tg[1] = -1; /* one ignored target */
    c.b.B = B;
    c.b.T = T;
    /* the double build: the batch's float pointers carry doubles (internal.h) */
    if (flags & VEC_INPUTS) c.b.input_vecs = WF_CFLOATS(vin); else c.b.inputs = in;
    if (flags & MSE) c.b.target_vecs = WF_CFLOATS(vtg); else c.b.targets = tg;
    if (flags & PADDED) c.b.lengths = len;
    if (xa) {
        c.b.src = src;
        c.b.S = S;
        if (flags & PADDED) c.b.src_lengths = slen;
    }
    int n_slices = 0;
    for (int i = 0; i < model_info(m).n_tensors; i++) {
        wf_tensor_info t;
        wf_model_get_tensor(m, i, &t);
        n_slices += t.layers;
    }
    uint8_t *mask = malloc((size_t)n_slices);
    if (train) {
        CHECK((int)strlen(train) == n_slices, "%s: the mask has %zu slices, the model %d", name, strlen(train), n_slices);
        for (int k = 0; k < n_slices; k++) mask[k] = train[k] == '1';
        CHECK_OK(wf_model_trainable(m, mask, NULL, n_slices), m);
    }
    CHECK_OK(wf_model_trainable(m, NULL, mask, n_slices), m);
    wf_real loss;
    CHECK_OK(wf_model_loss(m, &c.b, 1, &loss), m);
    const size_t gstride = (size_t)(model_info(m).memory.grads / sizeof(double));
    double *grads = alloc_d(gstride);
    memcpy(grads, WF_REALS(wf_model_grads(m)), gstride * sizeof(double));
    int checked = 0, frozen = 0;
    for (int i = 0, k = 0; i < model_info(m).n_tensors; i++) {
        wf_tensor_info t;
        wf_model_get_tensor(m, i, &t);
        const uint8_t *tm = mask + k;
        k += t.layers;
        if (!t.size) continue;
        int all = 1;
        for (int l = 0; l < t.layers; l++) all &= tm[l];
        if (!all) {
            /* per slice: the trainable ones' gradients lie one after the other from grad_offset */
            const int slice = t.size / t.layers;
            for (int l = 0, at = t.grad_offset; l < t.layers; l++) {
                if (!tm[l]) {
                    frozen++;
                    continue;
                }
                char what[48];
                snprintf(what, sizeof what, "%s[%d]", t.name, l);
                check_tensor("  model", what, model_loss, &c, WF_REALS(wf_model_params(m)) + t.offset + l * slice,
                             grads + at, slice);
                at += slice;
                checked++;
            }
            continue;
        }
        /* every slice trains: the gradient has the tensor's shape, at grad_offset */
        /* what the objective does not reach: the head under an MSE on the states, the token
         * table under vector inputs; their gradients must be exactly zero */
        int unused = ((flags & MSE) && !strcmp(t.name, "lm_head")) ||
                     ((flags & VEC_INPUTS) && !strcmp(t.name, "wte") && (flags & MSE || cfg.tied_head == 0));
        if (unused) {
            double mx = 0;
            for (int j = 0; j < t.size; j++) mx = fmax(mx, fabs(grads[t.grad_offset + j]));
            CHECK(mx == 0, "%s: %s is unused yet has gradient %g", name, t.name, mx);
            continue;
        }
        check_tensor("  model", t.name, model_loss, &c, WF_REALS(wf_model_params(m)) + t.offset, grads + t.grad_offset,
                     t.size);
        checked++;
    }
    CHECK(checked > 5, "%s: only %d tensors checked", name, checked);
    if (train) printf("  (%d frozen slices: no gradients)\n", frozen);
    if (flags & Q4_BASE) {
        wf_real loss_f;
        CHECK_OK(wf_model_quantize(m, WF_QUANT_F32), m); /* the same values as floats */
        CHECK_OK(wf_model_loss(m, &c.b, 1, &loss_f), m);
        CHECK(loss_f == loss && !memcmp(WF_REALS(wf_model_grads(m)), grads, gstride * sizeof(double)),
              "%s: the float base's loss %.17g and gradients differ from the Q4_0 base's (%.17g)", name, loss_f, loss);
        printf("  (%d quantized slices: frozen; loss and gradients = the float base's, bit for bit)\n", frozen);
    }
    free(mask); free(grads); free(in); free(tg); free(src); free(vin); free(vtg);
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

/* Head size 4: rotary positions need an even one. */
static wf_config small(int arch, int norm, int block, int act, int positions, int tied, int bias) {
    wf_config c = small_gpt();
    c.d_model = 8;
    c.arch = arch;
    c.n_enc_layer = arch == WF_ARCH_ENCODER_DECODER ? 2 : 0;
    c.norm = norm;
    c.block = block;
    c.activation = act;
    c.positions = positions;
    c.tied_head = tied;
    c.bias = bias;
    return c;
}

int main(void) {
    wf_rng r;
    wf_rng_seed(&r, 42);
    printf("ops\n");
    test_embed(&r);
    test_layernorm(&r);
    test_linear(&r);
    test_lora(&r);
    test_attention(&r);
    test_pointwise(&r);
    test_crossentropy(&r);
    test_rmsnorm(&r);
    test_misc_pointwise(&r);
    test_rope(&r);
    test_headnorm(&r);
    test_newton_schulz(&r);
    test_mse(&r);
    test_softmax_jacobian(&r);

    printf("whole models\n");
    wf_config c = small_gpt();
    test_model_grads("decoder: tied head, learned positions, GELU, biases", c, 0);
    c = small_gpt();
    c.tied_head = 0;
    c.activation = WF_ACT_RELU;
    test_model_grads("decoder: untied head, ReLU", c, 0);
    c = small_gpt();
    c.positions = WF_POS_SINUSOIDAL;
    c.bias = 0;
    test_model_grads("decoder: sinusoidal positions, no biases", c, 0);
    enum { D = WF_ARCH_DECODER, EN = WF_ARCH_ENCODER, ED = WF_ARCH_ENCODER_DECODER };
    enum { LN = WF_NORM_LAYERNORM, RMS = WF_NORM_RMSNORM, PRE = WF_BLOCK_PRE_LN, POST = WF_BLOCK_POST_LN };
    enum { GELU = WF_ACT_GELU, RELU = WF_ACT_RELU, SWIGLU = WF_ACT_SWIGLU, RELU2 = WF_ACT_RELU2 };
    enum { LEARNED = WF_POS_LEARNED, SINUS = WF_POS_SINUSOIDAL, ROPE = WF_POS_ROPE };
    test_model_grads("decoder: Post-LN, LayerNorm, GELU, padding", small(D, LN, POST, GELU, LEARNED, 1, 1), PADDED);
    test_model_grads("decoder, Llama-style: RMSNorm, SwiGLU, RoPE, untied, no biases",
                     small(D, RMS, PRE, SWIGLU, ROPE, 0, 0), 0);
    c = small(D, RMS, POST, RELU, SINUS, 1, 1);
    c.dropout = 0.25f;
    test_model_grads("decoder: Post-LN, RMSNorm, ReLU, sinusoidal, dropout 0.25", c, PADDED);
    test_model_grads("encoder: Pre-LN, LayerNorm, GELU, learned, cross-entropy, padding",
                     small(EN, LN, PRE, GELU, LEARNED, 1, 1), PADDED);
    test_model_grads("encoder, seed 002: Post-LN, LayerNorm, ReLU, sinusoidal, vectors in, MSE, padding",
                     small(EN, LN, POST, RELU, SINUS, 1, 1), PADDED | MSE | VEC_INPUTS);
    c = small(EN, RMS, PRE, SWIGLU, ROPE, 0, 0);
    c.dropout = 0.2f;
    test_model_grads("encoder: RMSNorm, SwiGLU, RoPE, MSE on ids, dropout 0.2", c, MSE);
    test_model_grads("encoder-decoder: Pre-LN, LayerNorm, GELU, learned, tied, padding both sides",
                     small(ED, LN, PRE, GELU, LEARNED, 1, 1), PADDED);
    test_model_grads("encoder-decoder: Post-LN, LayerNorm, ReLU, sinusoidal, untied, padding",
                     small(ED, LN, POST, RELU, SINUS, 0, 1), PADDED);
    c = small(ED, RMS, PRE, SWIGLU, ROPE, 0, 0);
    c.dropout = 0.1f;
    test_model_grads("encoder-decoder: RMSNorm, SwiGLU, RoPE, no biases, dropout 0.1", c, PADDED);
    test_model_grads("encoder-decoder: Post-LN, RMSNorm, GELU, learned, tied", small(ED, RMS, POST, GELU, LEARNED, 1, 1), 0);


    printf("whole models with the recipe options (issue 14)\n");
    c = small(D, RMS, PRE, RELU2, ROPE, 0, 0);
    c.qk_norm = 1;
    c.logit_cap = 1.5f; /* small: the logits reach tanh's curved part */
    test_model_grads("decoder: QK-norm before RoPE, ReLU^2, logit cap 1.5, RMSNorm, untied", c, 0);
    c = small_gpt();
    c.qk_norm = 1;
    c.zero_proj = 1;
    c.logit_cap = 2.0f;
    c.activation = WF_ACT_RELU2;
    test_model_grads("decoder: QK-norm, zero-init projections, ReLU^2, logit cap 2, learned, tied", c, 0);
    c = small(ED, LN, POST, RELU2, SINUS, 0, 1);
    c.qk_norm = 1;
    c.logit_cap = 3.0f;
    test_model_grads("encoder-decoder: Post-LN, QK-norm, ReLU^2, logit cap 3, padding", c, PADDED);
    c = small(EN, RMS, PRE, GELU, ROPE, 1, 0);
    c.qk_norm = 1;
    c.dropout = 0.2f;
    test_model_grads("encoder: QK-norm, RoPE, dropout 0.2, MSE", c, MSE);
    c = small(D, LN, PRE, WF_ACT_GELU_EXACT, LEARNED, 1, 0);
    test_model_grads("decoder, nanoGPT's: LayerNorm, exact (erf) GELU, learned, tied, no biases", c, 0);

    printf("whole models with grouped-query attention (issue 15)\n");
    c = small(D, RMS, PRE, SWIGLU, ROPE, 0, 0);
    c.n_head = 4;
    c.n_kv_head = 2;
    c.d_model = 16; /* head size 4, even for RoPE */
    c.rope_theta = 500.0f;
    test_model_grads("decoder, Llama-style GQA: 4 query heads over 2 key/value heads, RoPE theta 500", c, 0);
    c.n_kv_head = 1;
    c.qk_norm = 1;
    test_model_grads("decoder: multi-query (1 key/value head), QK-norm, RoPE", c, PADDED);
    c = small(ED, LN, PRE, GELU, LEARNED, 1, 1);
    c.n_head = 4;
    c.n_kv_head = 2;
    test_model_grads("encoder-decoder: GQA in both stacks' self-attention, padding both sides", c, PADDED);

    printf("whole models with LoRA adapters and frozen tensors (issue 15)\n");
    c = small(D, RMS, PRE, SWIGLU, ROPE, 0, 0);
    c.n_head = 4;
    c.n_kv_head = 2;
    c.d_model = 16;
    c.lora_rank = 2;
    c.lora_alpha = 3;
    c.lora_targets = 127;
    test_model_grads("decoder, Llama-style GQA: LoRA r 2 on q, k, v, o, gate, up, down; base frozen", c, PADDED);
    c = small_gpt();
    c.lora_rank = 3;
    c.lora_alpha = 6;
    c.lora_targets = 1 | 4 | 16 | 64; /* q, v, fc, down */
    c.dropout = 0.2f;
    /* wte wpe | ln1w ln1b qkvw qkvb attprojw attprojb ln2w ln2b fcw fcb fcprojw fcprojb (2 layers each) | lnfw lnfb
     * | the adapters (8 tensors x 2 layers): layer 1's attention, the final norm and layer 0's adapters train */
    test_model_grads_with("decoder, GPT-2-style: LoRA on q, v, fc, down, dropout; layer 1's attention and the final "
                          "norm train, layer 1's adapters frozen",
                          c, 0, "00" "01" "01" "01" "01" "01" "01" "00" "00" "00" "00" "00" "00" "11"
                                "10101010" "10101010");
    c = small_gpt();
    test_model_grads_with("decoder, no LoRA: layer 0 and the embeddings frozen (backward stops above them)", c, 0,
                          "00" "01" "01" "01" "01" "01" "01" "01" "01" "01" "01" "01" "01" "11");
    c = small(ED, LN, POST, RELU, SINUS, 0, 1);
    c.lora_rank = 2;
    c.lora_alpha = 2;
    c.lora_targets = 1 | 2 | 8 | 16 | 64;
    test_model_grads("encoder-decoder, Post-LN: LoRA on both stacks (q, k, o, fc, down), base frozen", c, PADDED);

    printf("QLoRA: LoRA adapters over a base quantized to Q4_0 (issue 29)\n");
    c = small(D, RMS, PRE, SWIGLU, ROPE, 1, 0);
    c.n_head = 4;
    c.n_kv_head = 2;
    c.d_model = 32; /* rows of whole blocks of 32 */
    c.d_ff = 32;
    c.lora_rank = 2;
    c.lora_alpha = 4;
    c.lora_targets = 1 | 2 | 4 | 8; /* q, k, v, o */
    test_model_grads("decoder, Llama-style, tied: LoRA r 2 on q, k, v, o over Q4_0 linears and embedding", c,
                     PADDED | Q4_BASE);
    c.lora_targets = 127;
    c.tied_head = 0;
    test_model_grads("decoder, untied head: LoRA on every linear over a Q4_0 base", c, Q4_BASE);

    printf("largest relative error over every check: %.2e (tolerance %.0e); %zu elements on a ReLU kink skipped\n",
           worst_overall, TOL, kinks_overall);
    return check_summary("test_gradcheck");
}
