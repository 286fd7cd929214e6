/* One layer forward and backward (block.h), every block variant, and the pieces they share
 * with the stacks: the norm, the activation and dropout, dispatched on the config. Everything
 * a layer reads besides its weights, activations and io comes in a wf_layer_ctx: this file
 * knows no model handle. */
#include "block.h"

/* ---- the block's pieces, dispatched on the config ---- */

void wf_lin_forward(const wf_layer_ctx *ctx, wf_real *out, const wf_real *inp, const wf_real *w, wf_qw q,
                    const wf_real *b, int N, int C, int OC) {
    if (q.p)
        wf_qlinear_forward(out, inp, q.p, q.type, b, N, C, OC, ctx->fast, ctx->qscratch, ctx->pool);
    else
        wf_linear_forward(out, inp, w, b, N, C, OC, ctx->pool);
}

void wf_lin_backward(const wf_layer_ctx *ctx, wf_real *dinp, int set, wf_real *dw, wf_real *db, const wf_real *dout,
                     const wf_real *inp, const wf_real *w, wf_qw q, int N, int C, int OC) {
    if (!q.p) {
        (set ? wf_linear_backward_set : wf_linear_backward)(dinp, dw, db, dout, inp, w, N, C, OC, ctx->pool);
        return;
    }
    WF_INVARIANT(dw == NULL); /* quantized weights are frozen */
    if (dinp && set) memset(dinp, 0, (size_t)N * C * sizeof(wf_real));
    if (dinp) wf_qlinear_backward(dinp, dout, q.p, q.type, N, C, OC, ctx->qscratch, ctx->pool);
    if (db) wf_linear_backward(NULL, NULL, db, dout, inp, NULL, N, C, OC, ctx->pool);
}

void wf_norm_forward(const wf_layer_ctx *ctx, wf_real *out, wf_real *mean, wf_real *rstd, const wf_real *inp,
                     const wf_real *w, const wf_real *b, int N) {
    const wf_real eps = (wf_real)ctx->cfg->norm_eps;
    if (ctx->cfg->norm == WF_NORM_RMSNORM)
        wf_rmsnorm_forward(out, rstd, inp, w, N, ctx->d->C, eps, ctx->pool);
    else
        wf_layernorm_forward(out, mean, rstd, inp, w, b, N, ctx->d->C, eps, ctx->pool);
}

void wf_norm_backward(const wf_layer_ctx *ctx, wf_real *dinp, wf_real *dw, wf_real *db, const wf_real *dout,
                      const wf_real *inp, const wf_real *mean, const wf_real *rstd, const wf_real *w, int N) {
    if (ctx->cfg->norm == WF_NORM_RMSNORM)
        wf_rmsnorm_backward(dinp, dw, dout, inp, rstd, w, N, ctx->d->C, ctx->pool);
    else
        wf_layernorm_backward(dinp, dw, db, dout, inp, mean, rstd, w, N, ctx->d->C, ctx->pool);
}

static void act_forward(const wf_layer_ctx *ctx, wf_real *out, const wf_real *inp, int N) {
    const int F = ctx->d->F;
    switch (ctx->cfg->activation) {
    case WF_ACT_RELU: wf_relu_forward(out, inp, N * F); break;
    case WF_ACT_RELU2: wf_relu2_forward(out, inp, N * F); break;
    case WF_ACT_GELU_EXACT: wf_gelu_exact_forward(out, inp, N * F); break;
    case WF_ACT_SWIGLU: wf_swiglu_forward(out, inp, N, F); break;
    default: wf_gelu_forward(out, inp, N * F, ctx->pool); break;
    }
}

static void act_backward(const wf_layer_ctx *ctx, wf_real *dinp, const wf_real *dout, const wf_real *inp, int N) {
    const int F = ctx->d->F;
    switch (ctx->cfg->activation) {
    case WF_ACT_RELU: wf_relu_backward(dinp, dout, inp, N * F); break;
    case WF_ACT_RELU2: wf_relu2_backward(dinp, dout, inp, N * F); break;
    case WF_ACT_GELU_EXACT: wf_gelu_exact_backward(dinp, dout, inp, N * F); break;
    case WF_ACT_SWIGLU: wf_swiglu_backward(dinp, dout, inp, N, F); break;
    default: wf_gelu_backward(dinp, dout, inp, N * F, ctx->pool); break;
    }
}

/* In training, x = dropout(x) with a fresh mask from the step's stream. */
void wf_drop_forward(const wf_layer_ctx *ctx, wf_real *mask, wf_real *x, int n, wf_rng *rng) {
    if (!rng || !mask) return;
    wf_dropout_mask(mask, n, (wf_real)ctx->cfg->dropout, rng);
    wf_dropout_forward(x, x, mask, n);
}

/* LoRA's adapters (lora.c) beside the layer's linears: adapter t (WF_LORA_*) with weights A, B
 * (NULL: absent) on OC output columns, rows ldo apart, of the linear reading inp [N, C]. Its
 * saved products u sit in the layer's lora_u, the present adapters' in WF_LORA_* order. */
static wf_real *lora_u(const wf_layer_ctx *ctx, const wf_layer_acts *a, int t, int N) {
    const int on[WF_LORA_N] = {ctx->d->lq, ctx->d->lk, ctx->d->lv, ctx->d->lo, ctx->d->lf, ctx->d->lu, ctx->d->ld};
    int k = 0;
    for (int i = 0; i < t; i++) k += on[i];
    return a->lora_u + (size_t)k * N * ctx->d->LR;
}

static wf_real lora_scale(const wf_layer_ctx *ctx) { return (wf_real)(ctx->cfg->lora_alpha / (double)ctx->cfg->lora_rank); }

static void lora_forward(const wf_layer_ctx *ctx, int t, const wf_real *A, const wf_real *B, wf_real *out, int ldo, int OC,
                         const wf_real *inp, int C, const wf_layer_acts *a, int N) {
    if (A) wf_lora_forward(out, lora_u(ctx, a, t, N), inp, A, B, lora_scale(ctx), N, C, OC, ctx->d->LR, ldo, ctx->pool);
}

static void lora_backward(const wf_layer_ctx *ctx, int t, const wf_real *A, const wf_real *B, wf_real *dA, wf_real *dB,
                          wf_real *dinp, const wf_real *dout, int ldo, int OC, const wf_real *inp, int C,
                          const wf_layer_acts *a, int N) {
    if (A)
        wf_lora_backward(dinp, dA, dB, dout, lora_u(ctx, a, t, N), inp, A, B, ctx->a->dlora, lora_scale(ctx), N, C, OC,
                         ctx->d->LR, ldo, ctx->pool);
}

/* ---- the layer forward: training and generation ---- */

/* Self-attention over the layer's own rows (the packed qkv, stride C + 2 KC: KV key/value
 * heads, shared by groups of query heads), and cross-attention of its queries (stride C)
 * over the source's keys and values (stride 2C, one per query head). */
static wf_attn_dims self_dims(const wf_layer_ctx *ctx, const wf_layer_io *io) {
    const int QKV = ctx->d->C + 2 * ctx->d->KC;
    return (wf_attn_dims){.B = io->B, .NH = ctx->d->NH, .KV = ctx->d->KV, .HS = ctx->d->HS, .Tq = io->T, .Tk = io->T,
                          .q_stride = QKV, .kv_stride = QKV, .causal = io->causal, .key_len = io->key_len};
}

static wf_attn_dims cross_dims(const wf_layer_ctx *ctx, const wf_layer_io *io) {
    const int C = ctx->d->C;
    return (wf_attn_dims){.B = io->B, .NH = ctx->d->NH, .KV = ctx->d->NH, .HS = ctx->d->HS, .Tq = io->T, .Tk = io->S,
                          .q_stride = C, .kv_stride = 2 * C, .key_len = io->src_len};
}

/* Wiring of one layer, Pre-LN (seed 000, eq. 5-9) and Post-LN (seeds 002, 003). With
 * QK-norm, self-attention's queries and keys are RMS-normalised per head right after the
 * projection, before RoPE (cross-attention's are not):
 *   pre:  h1 = x + A(ln1(x));    hc = h1 + X(lnc(h1));    out = hc + FF(ln2(hc))
 *   post: h1 = ln1(x + A(x));    hc = lnc(h1 + X(h1));    out = ln2(hc + FF(hc))
 * A: causal or bidirectional self-attention, X: cross-attention over the encoder's keys and
 * values (encoder-decoder decoders only, else hc = h1), each sublayer's output dropped out
 * in training before its residual add. Pre-LN keeps the sums in res1, resc, res2 and the
 * sublayer inputs in ln1, lnc, ln2; Post-LN the other way round. */
void wf_block_forward(const wf_layer_ctx *ctx, const wf_layer_w *w, const wf_layer_acts *a, const wf_real *x,
                      const wf_layer_io *io) {
    const wf_dims *d = ctx->d;
    const int C = d->C, NH = d->NH, KV = d->KV, KC = d->KC, HS = d->HS, F = d->F, fc = d->fc;
    const int QKV = C + 2 * KC, post = d->post;
    int N = io->B * io->T;

    /* self-attention */
    const wf_real *in = x;
    if (!post) {
        wf_norm_forward(ctx, a->ln1, a->ln1_mean, a->ln1_rstd, x, w->ln1w, w->ln1b, N);
        in = a->ln1;
    }
    wf_lin_forward(ctx, a->qkv, in, w->qkvw, w->q.qkvw, w->qkvb, N, C, QKV);
    lora_forward(ctx, WF_LORA_Q, w->lora_qa, w->lora_qb, a->qkv, QKV, C, in, C, a, N);
    lora_forward(ctx, WF_LORA_K, w->lora_ka, w->lora_kb, a->qkv + C, QKV, KC, in, C, a, N);
    lora_forward(ctx, WF_LORA_V, w->lora_va, w->lora_vb, a->qkv + C + KC, QKV, KC, in, C, a, N);
    if (d->qkn) {
        const wf_real eps = (wf_real)ctx->cfg->norm_eps;
        wf_headnorm_forward(a->qkv, a->qk_rstd, N, NH, HS, QKV, eps);
        wf_headnorm_forward(a->qkv + C, a->qk_rstd + (size_t)N * NH, N, KV, HS, QKV, eps);
    }
    if (d->rope) {
        wf_rope_forward(a->qkv, ctx->rope_cos, ctx->rope_sin, io->B, io->T, NH, HS, QKV, io->pos, ctx->pool);
        wf_rope_forward(a->qkv + C, ctx->rope_cos, ctx->rope_sin, io->B, io->T, KV, HS, QKV, io->pos, ctx->pool);
    }
    wf_attn_dims ad = self_dims(ctx, io);
    const wf_real *q = a->qkv, *k = a->qkv + C, *v = a->qkv + C + KC;
    if (io->kcache) {
        /* generation (B = 1): append this step's keys and values, attend over the cache */
        for (int t = 0; t < io->T; t++) {
            const wf_real *row = a->qkv + (size_t)t * QKV;
            memcpy(io->kcache + (size_t)(io->pos + t) * KC, row + C, KC * sizeof(wf_real));
            memcpy(io->vcache + (size_t)(io->pos + t) * KC, row + C + KC, KC * sizeof(wf_real));
        }
        k = io->kcache;
        v = io->vcache;
        ad.Tk = io->pos + io->T;
        ad.kv_stride = KC;
        ad.by_rows = 1;
    }
    /* Rows whose outputs nobody reads (a prompt's rows in the last layer, all but the last)
     * stop here, their keys and values cached: the rest of the layer runs on the rows after
     * them. Decoding computes every row alone (the few-row linear kernel, attention by
     * rows), so the kept rows come out bit for bit as with the others. */
    wf_layer_acts kept;
    const int skip = io->kcache && !io->ckv && io->skip > 0 ? io->skip : 0;
    if (skip >= io->T) return;
    if (skip) {
        kept = *a;
        wf_layer_skip_rows(&kept, d, (size_t)skip, (size_t)d->T, 0, 0, 0); /* gen.row's carve */
        a = &kept;
        x += (size_t)skip * C;
        q += (size_t)skip * QKV;
        ad.Tq -= skip;
        N -= skip;
    }
    wf_attention_forward(a->atty, a->att, q, k, v, &ad, ctx->pool);
    wf_lin_forward(ctx, a->branch, a->atty, w->attprojw, w->q.attprojw, w->attprojb, N, C, C);
    lora_forward(ctx, WF_LORA_O, w->lora_oa, w->lora_ob, a->branch, C, C, a->atty, C, a, N);
    wf_drop_forward(ctx, a->mask1, a->branch, N * C, io->drop_rng);
    wf_residual_forward(a->res1, x, a->branch, N * C, ctx->pool);
    const wf_real *h = a->res1;
    if (post) {
        wf_norm_forward(ctx, a->ln1, a->ln1_mean, a->ln1_rstd, a->res1, w->ln1w, w->ln1b, N);
        h = a->ln1;
    }

    /* cross-attention: queries from the decoder, keys and values from the encoder */
    if (io->ckv) {
        in = h;
        if (!post) {
            wf_norm_forward(ctx, a->lnc, a->lnc_mean, a->lnc_rstd, h, w->lncw, w->lncb, N);
            in = a->lnc;
        }
        wf_lin_forward(ctx, a->cq, in, w->cqw, w->q.cqw, w->cqb, N, C, C);
        const wf_attn_dims cd = cross_dims(ctx, io);
        wf_attention_forward(a->catty, a->catt, a->cq, io->ckv, io->ckv + C, &cd, ctx->pool);
        wf_lin_forward(ctx, a->branch, a->catty, w->cprojw, w->q.cprojw, w->cprojb, N, C, C);
        wf_drop_forward(ctx, a->maskc, a->branch, N * C, io->drop_rng);
        wf_residual_forward(a->resc, h, a->branch, N * C, ctx->pool);
        h = a->resc;
        if (post) {
            wf_norm_forward(ctx, a->lnc, a->lnc_mean, a->lnc_rstd, a->resc, w->lncw, w->lncb, N);
            h = a->lnc;
        }
    }

    /* feed-forward */
    in = h;
    if (!post) {
        wf_norm_forward(ctx, a->ln2, a->ln2_mean, a->ln2_rstd, h, w->ln2w, w->ln2b, N);
        in = a->ln2;
    }
    wf_lin_forward(ctx, a->fch, in, w->fcw, w->q.fcw, w->fcb, N, C, fc * F);
    lora_forward(ctx, WF_LORA_FC, w->lora_fa, w->lora_fb, a->fch, fc * F, F, in, C, a, N);
    lora_forward(ctx, WF_LORA_UP, w->lora_ua, w->lora_ub, a->fch + F, fc * F, F, in, C, a, N);
    act_forward(ctx, a->fch_act, a->fch, N);
    wf_lin_forward(ctx, a->branch, a->fch_act, w->fcprojw, w->q.fcprojw, w->fcprojb, N, F, C);
    lora_forward(ctx, WF_LORA_DOWN, w->lora_da, w->lora_db, a->branch, C, C, a->fch_act, F, a, N);
    wf_drop_forward(ctx, a->mask2, a->branch, N * C, io->drop_rng);
    wf_residual_forward(a->res2, h, a->branch, N * C, ctx->pool);
    if (post) wf_norm_forward(ctx, a->ln2, a->ln2_mean, a->ln2_rstd, a->res2, w->ln2w, w->ln2b, N);
}

/* ---- the layer backward ---- */

static void zero(wf_real *x, size_t n) { memset(x, 0, n * sizeof(wf_real)); }

/* The gradient of a sublayer's output before dropout: dres * mask, or dres itself. */
const wf_real *wf_drop_backward(const wf_layer_ctx *ctx, const wf_real *mask, const wf_real *dres, int n) {
    if (!mask) return dres;
    zero(ctx->a->branch, (size_t)n);
    wf_dropout_backward(ctx->a->branch, dres, mask, n);
    return ctx->a->branch;
}

/* Post-LN: dres holds dL/d(norm output); replaces it with dL/d(norm input). */
static void post_norm_backward(const wf_layer_ctx *ctx, const wf_real *inp, const wf_real *mean, const wf_real *rstd,
                               const wf_real *w, wf_real *dw, wf_real *db, int N) {
    wf_acts *a = ctx->a;
    const size_t n = (size_t)N * ctx->d->C;
    zero(a->dln, n);
    wf_norm_backward(ctx, a->dln, dw, db, a->dres, inp, mean, rstd, w, N);
    memcpy(a->dres, a->dln, n * sizeof(wf_real));
}

/* A sublayer's input side: from dL/d(sublayer input) in `din` to dres. Pre-LN: through the
 * norm (whose input is the stream `stream`), accumulated onto dres, the residual path.
 * Post-LN: the sublayer read the stream itself, so it is added directly. */
static void sublayer_input_backward(const wf_layer_ctx *ctx, const wf_real *din, const wf_real *stream, const wf_real *mean,
                                    const wf_real *rstd, const wf_real *w, wf_real *dw, wf_real *db, int N) {
    if (ctx->d->post)
        wf_residual_backward(ctx->a->dres, NULL, din, N * ctx->d->C, ctx->pool);
    else
        wf_norm_backward(ctx, ctx->a->dres, dw, db, din, stream, mean, rstd, w, N);
}

/* dres holds dL/d(out) on entry and dL/dx on return: each residual add passes its gradient
 * through unchanged, so the branch gradients accumulate into dres in place. enc is the
 * encoder output the cross-attention keys and values were computed from. */
void wf_block_backward(const wf_layer_ctx *ctx, const wf_layer_w *w, const wf_layer_w *dw, const wf_layer_acts *la,
                       const wf_real *x, const wf_layer_io *io, const wf_real *enc) {
    const wf_dims *d = ctx->d;
    wf_acts *a = ctx->a;
    const int C = d->C, NH = d->NH, KV = d->KV, KC = d->KC, HS = d->HS, F = d->F, fc = d->fc;
    const int QKV = C + 2 * KC, post = d->post;
    const int N = io->B * io->T;
    /* the streams entering each sublayer, as in the forward */
    const wf_real *h1 = post ? la->ln1 : la->res1;
    const wf_real *hc = io->ckv ? (post ? la->lnc : la->resc) : h1;

    /* feed-forward: out = hc + FF(ln2(hc))  or  ln2(hc + FF(hc)) */
    if (post) post_norm_backward(ctx, la->res2, la->ln2_mean, la->ln2_rstd, w->ln2w, dw->ln2w, dw->ln2b, N);
    const wf_real *dbranch = wf_drop_backward(ctx, la->mask2, a->dres, N * C);
    wf_lin_backward(ctx, a->dfch_act, 1, dw->fcprojw, dw->fcprojb, dbranch, la->fch_act, w->fcprojw, w->q.fcprojw, N, F, C);
    lora_backward(ctx, WF_LORA_DOWN, w->lora_da, w->lora_db, dw->lora_da, dw->lora_db, a->dfch_act, dbranch, C, C,
                  la->fch_act, F, la, N);
    zero(a->dfch, (size_t)N * fc * F);
    act_backward(ctx, a->dfch, a->dfch_act, la->fch, N);
    const wf_real *ffin = post ? hc : la->ln2;
    wf_lin_backward(ctx, a->dln, 1, dw->fcw, dw->fcb, a->dfch, ffin, w->fcw, w->q.fcw, N, C, fc * F);
    lora_backward(ctx, WF_LORA_FC, w->lora_fa, w->lora_fb, dw->lora_fa, dw->lora_fb, a->dln, a->dfch, fc * F, F, ffin, C,
                  la, N);
    lora_backward(ctx, WF_LORA_UP, w->lora_ua, w->lora_ub, dw->lora_ua, dw->lora_ub, a->dln, a->dfch + F, fc * F, F,
                  ffin, C, la, N);
    sublayer_input_backward(ctx, a->dln, hc, la->ln2_mean, la->ln2_rstd, w->ln2w, dw->ln2w, dw->ln2b, N);

    /* cross-attention: hc = h1 + X(lnc(h1))  or  lnc(h1 + X(h1)) */
    if (io->ckv) {
        if (post) post_norm_backward(ctx, la->resc, la->lnc_mean, la->lnc_rstd, w->lncw, dw->lncw, dw->lncb, N);
        dbranch = wf_drop_backward(ctx, la->maskc, a->dres, N * C);
        wf_lin_backward(ctx, a->datty, 1, dw->cprojw, dw->cprojb, dbranch, la->catty, w->cprojw, w->q.cprojw, N, C, C);
        const size_t BS = (size_t)io->B * io->S;
        wf_real *dcq = a->dqkv; /* [N, C] */
        zero(dcq, (size_t)N * C);
        zero(a->dckv, BS * 2 * C);
        const wf_attn_dims cd = cross_dims(ctx, io);
        wf_attention_backward(dcq, a->dckv, a->dckv + C, a->datty, la->catty, la->catt, la->cq, io->ckv,
                              io->ckv + C, &cd, ctx->pool);
        /* ckv = enc ckvw^T + ckvb: the encoder's gradient collects over the decoder layers */
        wf_lin_backward(ctx, a->denc, 0, dw->ckvw, dw->ckvb, a->dckv, enc, w->ckvw, w->q.ckvw, (int)BS, C, 2 * C);
        wf_lin_backward(ctx, a->dln, 1, dw->cqw, dw->cqb, dcq, post ? h1 : la->lnc, w->cqw, w->q.cqw, N, C, C);
        sublayer_input_backward(ctx, a->dln, h1, la->lnc_mean, la->lnc_rstd, w->lncw, dw->lncw, dw->lncb, N);
    }

    /* self-attention: h1 = x + A(ln1(x))  or  ln1(x + A(x)) */
    if (post) post_norm_backward(ctx, la->res1, la->ln1_mean, la->ln1_rstd, w->ln1w, dw->ln1w, dw->ln1b, N);
    dbranch = wf_drop_backward(ctx, la->mask1, a->dres, N * C);
    wf_lin_backward(ctx, a->datty, 1, dw->attprojw, dw->attprojb, dbranch, la->atty, w->attprojw, w->q.attprojw, N, C, C);
    lora_backward(ctx, WF_LORA_O, w->lora_oa, w->lora_ob, dw->lora_oa, dw->lora_ob, a->datty, dbranch, C, C, la->atty, C,
                  la, N);
    zero(a->dqkv, (size_t)N * QKV);
    const wf_attn_dims ad = self_dims(ctx, io);
    wf_attention_backward(a->dqkv, a->dqkv + C, a->dqkv + C + KC, a->datty, la->atty, la->att, la->qkv,
                          la->qkv + C, la->qkv + C + KC, &ad, ctx->pool);
    if (d->qkn) {
        /* the saved q and k are normed (and rotated: the norm's gradient is the same in
         * either frame, norm.c), so this comes before RoPE's backward */
        wf_headnorm_backward(a->dqkv, la->qkv, la->qk_rstd, N, NH, HS, QKV);
        wf_headnorm_backward(a->dqkv + C, la->qkv + C, la->qk_rstd + (size_t)N * NH, N, KV, HS, QKV);
    }
    if (d->rope) {
        /* the saved q and k are rotated; their gradients turn back to the projection's frame */
        wf_rope_backward(a->dqkv, ctx->rope_cos, ctx->rope_sin, io->B, io->T, NH, HS, QKV, 0, ctx->pool);
        wf_rope_backward(a->dqkv + C, ctx->rope_cos, ctx->rope_sin, io->B, io->T, KV, HS, QKV, 0, ctx->pool);
    }
    const wf_real *attin = post ? x : la->ln1;
    wf_lin_backward(ctx, a->dln, 1, dw->qkvw, dw->qkvb, a->dqkv, attin, w->qkvw, w->q.qkvw, N, C, QKV);
    lora_backward(ctx, WF_LORA_Q, w->lora_qa, w->lora_qb, dw->lora_qa, dw->lora_qb, a->dln, a->dqkv, QKV, C, attin, C,
                  la, N);
    lora_backward(ctx, WF_LORA_K, w->lora_ka, w->lora_kb, dw->lora_ka, dw->lora_kb, a->dln, a->dqkv + C, QKV, KC, attin,
                  C, la, N);
    lora_backward(ctx, WF_LORA_V, w->lora_va, w->lora_vb, dw->lora_va, dw->lora_vb, a->dln, a->dqkv + C + KC, QKV, KC,
                  attin, C, la, N);
    sublayer_input_backward(ctx, a->dln, x, la->ln1_mean, la->ln1_rstd, w->ln1w, dw->ln1w, dw->ln1b, N);
}

