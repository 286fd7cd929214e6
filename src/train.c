/* Training (model.h): a batch's checks, the loss, gradient clipping and the AdamW step, and
 * the entry points that run them. */
#include <stdatomic.h>

#include "model.h"

/* ---- checks ---- */

static const char *arch_name(int arch) {
    return arch == WF_ARCH_DECODER ? "decoder" : arch == WF_ARCH_ENCODER ? "encoder" : "encoder-decoder";
}

static wf_status check_lengths(wf_model *m, const int32_t *len, int B, int T, const char *what) {
    if (!len) return WF_OK;
    for (int b = 0; b < B; b++)
        if (len[b] < 1 || len[b] > T)
            return WF_ERR(m, WF_ERR_ARG, "%s[%d] = %d is outside [1, %d]", what, b, len[b], T);
    return WF_OK;
}

static wf_status check_batch(wf_model *m, const wf_batch *b, int need_targets) {
    WF_NEED_READY(m);
    if (!b) return WF_ERR(m, WF_ERR_ARG, "batch is NULL");
    const int arch = m->cfg.arch;
    const int32_t B = b->B, T = b->T, S = b->S;
    wf_status s;
    if (!b->inputs && !b->input_vecs) return WF_ERR(m, WF_ERR_ARG, "inputs are NULL");
    if (b->inputs && b->input_vecs) return WF_ERR(m, WF_ERR_ARG, "give inputs (ids) or input_vecs, not both");
    if (b->input_vecs && arch != WF_ARCH_ENCODER)
        return WF_ERR(m, WF_ERR_ARG, "input_vecs need an encoder; this model is a %s", arch_name(arch));
    if (b->targets && b->target_vecs) return WF_ERR(m, WF_ERR_ARG, "give targets (ids) or target_vecs, not both");
    if (b->target_vecs && arch != WF_ARCH_ENCODER)
        return WF_ERR(m, WF_ERR_ARG, "target_vecs need an encoder; this model is a %s", arch_name(arch));
    if (need_targets && !b->targets && !b->target_vecs) return WF_ERR(m, WF_ERR_ARG, "targets are NULL");
    if (B < 1 || T < 1) return WF_ERR(m, WF_ERR_ARG, "batch shape %d x %d: both must be >= 1", B, T);
    if (T > m->cfg.context) return WF_ERR(m, WF_ERR_ARG, "sequence length %d exceeds the model's context of %d", T, m->cfg.context);
    if ((double)B * T > 2147483647.0 / 4) return WF_ERR(m, WF_ERR_ARG, "batch %d x %d is too large", B, T);
    /* the layer code counts a batch's values in int: its rows times the widest row (queries,
     * keys and values; cross-attention keys and values; the feed-forward hidden layer;
     * logits) must stay within 2^31 - 1 */
    const double wide = fmax(fmax(3.0 * m->d.C, (double)m->d.fc * m->d.F), m->d.V);
    if ((double)B * T * wide > 2147483647.0)
        return WF_ERR(m, WF_ERR_ARG, "batch %d x %d is too large: %d rows of up to %.0f values exceed 2^31 - 1", B, T,
                      B * T, wide);
    if (arch == WF_ARCH_ENCODER_DECODER) {
        if (!b->src) return WF_ERR(m, WF_ERR_ARG, "an encoder-decoder needs a source: src is NULL");
        if (S < 1 || S > m->cfg.context)
            return WF_ERR(m, WF_ERR_ARG, "source length %d is outside [1, context = %d]", S, m->cfg.context);
        if ((double)B * S > 2147483647.0 / 4) return WF_ERR(m, WF_ERR_ARG, "source batch %d x %d is too large", B, S);
        if ((double)B * S * wide > 2147483647.0)
            return WF_ERR(m, WF_ERR_ARG, "source batch %d x %d is too large: %d rows of up to %.0f values exceed 2^31 - 1",
                          B, S, B * S, wide);
        if ((s = wf_model_check_ids(m, b->src, (size_t)B * S, 0, "source")) != WF_OK) return s;
        if ((s = check_lengths(m, b->src_lengths, B, S, "src_lengths")) != WF_OK) return s;
    } else if (b->src || b->src_lengths || S != 0) {
        return WF_ERR(m, WF_ERR_ARG, "src, src_lengths and S are for encoder-decoders; this model is a %s", arch_name(arch));
    }
    if (b->inputs && (s = wf_model_check_ids(m, b->inputs, (size_t)B * T, 0, "input")) != WF_OK) return s;
    if ((s = check_lengths(m, b->lengths, B, T, "lengths")) != WF_OK) return s;
    if (b->targets) {
        if ((s = wf_model_check_ids(m, b->targets, (size_t)B * T, 1, "target")) != WF_OK) return s;
        size_t counted = 0;
        for (int32_t i = 0; i < B; i++)
            for (int32_t t = 0; t < T; t++) counted += b->targets[(size_t)i * T + t] >= 0 && (!b->lengths || t < b->lengths[i]);
        if (counted == 0)
            return WF_ERR(m, WF_ERR_ARG, "every target is negative (ignored) or padding: nothing to learn from");
    }
    return WF_OK;
}

/* ---- the loss ---- */

/* Mean cross-entropy of the logits (padding positions are ignored like negative targets)
 * or mean squared error of the final states; *count gets the number of terms. */
static double loss_forward(wf_model *m, const wf_batch *b, double *count) {
    const int B = m->B, T = m->T;
    if (b->target_vecs) return wf_mse_forward(count, m->a.lnf, WF_CREALS(b->target_vecs), b->lengths, B, T, m->d.C);
    int32_t *tg = (int32_t *)m->a.targets; /* int32 ids in wf_real-sized slots */
    for (int i = 0; i < B; i++)
        for (int t = 0; t < T; t++) tg[i * T + t] = b->lengths && t >= b->lengths[i] ? -1 : b->targets[i * T + t];
    int n = 0;
    const double total = wf_crossentropy_forward(m->a.losses, &n, m->a.probs, m->a.logits, tg, B * T, m->d.V, m->pool);
    *count = n;
    return total;
}

/* dL/d(final states) into dln (MSE), or dL/d(logits) in place of the probabilities. */
static void loss_backward(wf_model *m, const wf_batch *b, double count) {
    wf_acts *a = &m->a;
    const int B = m->B, T = m->T, C = m->d.C;
    const wf_real dloss = (wf_real)(1.0 / count);
    memset(a->dln, 0, (size_t)B * T * C * sizeof(wf_real));
    if (b->target_vecs)
        wf_mse_backward(a->dln, dloss, a->lnf, WF_CREALS(b->target_vecs), b->lengths, B, T, C);
    else
        wf_crossentropy_backward(a->probs, dloss, a->probs, (const int32_t *)a->targets, B * T, m->d.V, m->pool);
}

/* Forward, loss, and (with grads) backward; the shared front of every entry point. */
static wf_status run(wf_model *m, const wf_batch *b, int grads, wf_real *loss_out) {
    wf_status s = check_batch(m, b, grads);
    if (s != WF_OK) return s;
    if (grads && m->gstride == 0)
        return WF_ERR(m, WF_ERR_STATE, "every tensor is frozen: nothing to train (make some trainable first)");
    const int fresh = grads && !m->block[WF_GRADS]; /* the first training call: a failure takes the state back */
    if (grads && (s = wf_model_train_state(m)) != WF_OK) return s;
    if ((s = wf_model_plan_batch(m, b->B, b->T, m->d.xa ? b->S : 0)) != WF_OK) {
        if (fresh) wf_model_drop_train_state(m);
        return s;
    }
    wf_model_forward_batch(m, b, grads);
    if (!b->targets && !b->target_vecs) return WF_OK;
    double count;
    const double loss = loss_forward(m, b, &count) / count;
    if (loss_out) *loss_out = (wf_real)loss;
    if (!wf_finite(loss))
        return WF_ERR(m, WF_ERR_NUMERIC, "the loss is %s; %s", loss != loss ? "NaN" : "infinite",
                      grads ? "the step was rejected and weights and optimizer state are unchanged (try a lower learning rate)"
                            : "are the weights finite?");
    if (grads) {
        memset(wf_model_block(m, WF_GRADS), 0, m->gstride * sizeof(wf_real));
        loss_backward(m, b, count);
        wf_model_backward_batch(m, b);
    }
    return WF_OK;
}

/* ---- forward and backward ---- */

wf_status wf_model_loss(wf_model *m, const wf_batch *b, int grads, wf_real *loss) {
    wf_status s = run(m, b, grads, loss);
    if (s == WF_OK) m->err[0] = 0;
    return s;
}

/* The same with a float loss, written whenever the loss was computed (a non-finite one too). */
static wf_status loss_as_float(wf_model *m, const wf_batch *b, int grads, float *loss) {
    wf_real l = loss ? (wf_real)*loss : 0;
    wf_status s = wf_model_loss(m, b, grads, loss ? &l : NULL);
    if (loss) *loss = (float)l;
    return s;
}

wf_status wf_model_forward(wf_model *m, const wf_batch *b, float *loss) { return loss_as_float(m, b, 0, loss); }
wf_status wf_model_backward(wf_model *m, const wf_batch *b, float *loss) { return loss_as_float(m, b, 1, loss); }

/* ---- the step ---- */

/* torch.nn.utils.clip_grad_norm_: scale the gradients by max_norm / (norm + 1e-6) when
 * that is < 1. */
static wf_real clip_scale(const wf_model *m, double norm) {
    if (m->opt.grad_clip <= 0) return 1;
    const double coef = m->opt.grad_clip / (norm + 1e-6);
    return coef < 1 ? (wf_real)coef : 1;
}

/* Muon's matrices: a block's weight matrices (the tensors of rank 3, [layers, R, C]), each
 * layer's split into the matrices the layer multiplies by separately: queries (C rows), keys
 * and values (KC each); cross keys and values; SwiGLU's gate and up rows. Returns how many,
 * their row counts in rows (may be NULL); 0: Muon does not update tensor i. */
static int muon_parts(const wf_model *m, int i, int rows[3]) {
    if (!m->opt.muon || m->tensors[i].ndim != 3 || wf_param_lora(i)) return 0;
    int r[3];
    if (!rows) rows = r;
    if (i == WF_P_qkvw || i == WF_P_enc_qkvw) {
        rows[0] = m->d.C;
        rows[1] = rows[2] = m->d.KC;
        return 3;
    }
    const int n = i == WF_P_ckvw ? 2 : (i == WF_P_fcw || i == WF_P_enc_fcw) ? m->d.fc : 1;
    for (int k = 0; k < n; k++) rows[k] = m->tensors[i].shape[1] / n;
    return n;
}

/* The trainable part of tensor i as runs of consecutive slices: calls fn on each run's
 * weights, gradients and moments (n elements); a tensor that trains whole is one run. */
typedef wf_status (*run_fn)(wf_model *m, int i, wf_real *p, wf_real *mo, wf_real *v, const wf_real *g, size_t n, void *ctx);
static wf_status each_run(wf_model *m, int i, run_fn fn, void *ctx) {
    const wf_tensor_info *ti = &m->tensors[i];
    if (!ti->size) return WF_OK;
    const size_t slice = (size_t)ti->size / (size_t)ti->layers;
    for (int l = 0; l < ti->layers;) {
        const size_t g = m->goff[m->slice0[i] + l];
        int end = l + 1;
        if (g == SIZE_MAX) {
            l = end;
            continue;
        }
        while (end < ti->layers && m->goff[m->slice0[i] + end] == g + (size_t)(end - l) * slice) end++;
        wf_real *const *B = m->block;
        const size_t o = (size_t)ti->offset + (size_t)l * slice;
        wf_status s = fn(m, i, B[WF_WEIGHTS] + o, B[WF_ADAM_M] + g, B[WF_ADAM_V] + g, B[WF_GRADS] + g,
                         (size_t)(end - l) * slice, ctx);
        if (s != WF_OK) return s;
        l = end;
    }
    return WF_OK;
}

typedef struct {
    wf_real scale;
    float lr;
    int32_t t;
} adamw_ctx;

/* One run's AdamW, its elements shared out by the pool in ranges of whole 64-element blocks
 * (so each element takes the same vector or scalar path as in one pass over the run): the
 * check keeps the first element that fails in `bad`, the update writes. */
typedef struct {
    wf_real *p, *mo, *v;
    const wf_real *g;
    const adamw_ctx *c;
    const wf_optim *opt;
    int decay;
    _Atomic size_t bad;
} adamw_job;

static void adamw_check_range(void *ctx, size_t i0, size_t i1) {
    adamw_job *j = ctx;
    const size_t at = wf_adamw_check(j->p + i0, j->mo + i0, j->v + i0, j->g + i0, i1 - i0, j->c->scale, j->opt,
                                     j->c->lr, j->decay, j->c->t);
    if (at == i1 - i0) return;
    const size_t bad = i0 + at;
    size_t seen = atomic_load(&j->bad);
    while (bad < seen && !atomic_compare_exchange_weak(&j->bad, &seen, bad)) {
    }
}

static void adamw_update_range(void *ctx, size_t i0, size_t i1) {
    adamw_job *j = ctx;
    wf_adamw_update(j->p + i0, j->mo + i0, j->v + i0, j->g + i0, i1 - i0, j->c->scale, j->opt, j->c->lr, j->decay,
                    j->c->t);
}

#define ADAMW_MIN (1 << 15) /* elements per range at least */

static wf_status adamw_check_run(wf_model *m, int i, wf_real *p, wf_real *mo, wf_real *v, const wf_real *g, size_t n,
                                 void *ctx) {
    const wf_tensor_info *ti = &m->tensors[i];
    adamw_job j = {.p = p, .mo = mo, .v = v, .g = g, .c = ctx, .opt = &m->opt, .decay = ti->decay};
    atomic_init(&j.bad, n);
    wf_pool_for(m->pool, n, 64, ADAMW_MIN, adamw_check_range, &j);
    const size_t bad = atomic_load(&j.bad);
    if (bad < n)
        return WF_ERR(m, WF_ERR_NUMERIC, "the update at learning rate %g would overflow \"%s\"[%zu] (weight or "
                      "AdamW moment); the step was rejected and weights and optimizer state are unchanged "
                      "(try a lower learning rate or gradient clipping)", (double)j.c->lr, ti->name,
                      (size_t)(p - m->block[WF_WEIGHTS]) - (size_t)ti->offset + bad);
    return WF_OK;
}

static wf_status adamw_run(wf_model *m, int i, wf_real *p, wf_real *mo, wf_real *v, const wf_real *g, size_t n,
                           void *ctx) {
    adamw_job j = {.p = p, .mo = mo, .v = v, .g = g, .c = ctx, .opt = &m->opt, .decay = m->tensors[i].decay};
    wf_pool_for(m->pool, n, 64, ADAMW_MIN, adamw_update_range, &j);
    return WF_OK;
}

/* AdamW on every trainable slice Muon does not update, as step t. A finite gradient can still
 * overflow the update (an absurd learning rate): every element is checked first, so a
 * refused step leaves weights and moments as they were. */
static wf_status adamw_step(wf_model *m, wf_real scale, float lr, int32_t t) {
    adamw_ctx c = {.scale = scale, .lr = lr, .t = t};
    for (int i = 0; i < WF_N_PARAMS; i++) {
        if (muon_parts(m, i, NULL)) continue;
        wf_status s = each_run(m, i, adamw_check_run, &c);
        if (s != WF_OK) return s;
    }
    for (int i = 0; i < WF_N_PARAMS; i++)
        if (!muon_parts(m, i, NULL)) each_run(m, i, adamw_run, &c);
    return WF_OK;
}

/* Muon's matrices: one part of one trainable layer of a tensor Muon updates. */
typedef struct {
    int tensor, layer, R, C;
    size_t at, go; /* the part's offset in the tensor's layer, and its layer's gradient offset */
} muon_mat;

/* The k-th of Muon's matrices (tensors in table order, layers, parts) into *mat: 0 past the
 * last. Walks the table from the start: Muon's pass asks for each matrix once. */
static int muon_matrix(const wf_model *m, int k, muon_mat *mat) {
    for (int i = 0; i < WF_N_PARAMS; i++) {
        const wf_tensor_info *ti = &m->tensors[i];
        int rows[3];
        const int parts = muon_parts(m, i, rows);
        if (!parts || !ti->size) continue;
        for (int l = 0; l < ti->layers; l++) {
            const size_t g0 = m->goff[m->slice0[i] + l];
            if (g0 == SIZE_MAX) continue;
            if (k >= parts) {
                k -= parts;
                continue;
            }
            size_t at = 0;
            for (int q = 0; q < k; q++) at += (size_t)rows[q] * ti->shape[2];
            *mat = (muon_mat){.tensor = i, .layer = l, .R = rows[k], .C = ti->shape[2], .at = at, .go = g0};
            return 1;
        }
    }
    return 0;
}

static void muon_update_matrix(wf_model *m, const muon_mat *x, wf_real scale, float lr, wf_real *scratch,
                               wf_pool *pool) {
    const wf_tensor_info *ti = &m->tensors[x->tensor];
    const size_t o = (size_t)ti->offset + (size_t)x->layer * ((size_t)ti->size / (size_t)ti->layers) + x->at;
    wf_real *const *B = m->block;
    wf_muon_update(B[WF_WEIGHTS] + o, B[WF_ADAM_M] + x->go + x->at, B[WF_GRADS] + x->go + x->at, x->R, x->C, scale,
                   &m->opt, lr, ti->decay, scratch, pool);
}

/* A threaded model's Muon, when each thread's Newton-Schulz scratch fits in the pool's: each
 * thread takes whole matrices (the largest, last in the table, first) rather than every
 * thread sharing each matrix's products, which are too small to share well at the widths
 * people train in a page (width 64: each product stays on one thread, matmul.c; width 128:
 * 30 pool runs a matrix). A matrix's arithmetic is the same whoever runs it, so results do
 * not depend on the threads. */
typedef struct {
    wf_model *m;
    wf_real scale, *scratch;
    float lr;
    int n;
    size_t slot;
    _Atomic int next;
} muon_job;

static void muon_task(void *ctx, int task) {
    muon_job *j = ctx;
    muon_mat x;
    for (int k; (k = atomic_fetch_add(&j->next, 1)) < j->n;)
        if (muon_matrix(j->m, j->n - 1 - k, &x)) muon_update_matrix(j->m, &x, j->scale, j->lr, j->scratch + (size_t)task * j->slot, NULL);
}

#define MUON_SPLIT_MAX 256 /* matrices at most for the split by matrix (muon_matrix walks the table for each) */

/* Muon over each of its matrices in the trainable layers: check = 1 only checks
 * (WF_ERR_NUMERIC for the first that could overflow, nothing written), check = 0 updates. */
static wf_status muon_pass(wf_model *m, int check, wf_real scale, float lr) {
    muon_mat x;
    int n = 0;
    for (; muon_matrix(m, n, &x); n++) {
        if (!check) continue;
        const wf_tensor_info *ti = &m->tensors[x.tensor];
        const size_t o = (size_t)ti->offset + (size_t)x.layer * ((size_t)ti->size / (size_t)ti->layers) + x.at;
        wf_real *const *B = m->block;
        size_t bad = wf_muon_check(B[WF_WEIGHTS] + o, B[WF_ADAM_M] + x.go + x.at, B[WF_GRADS] + x.go + x.at, x.R, x.C,
                                   scale, &m->opt, lr, ti->decay);
        if (bad < (size_t)x.R * x.C)
            return WF_ERR(m, WF_ERR_NUMERIC, "the Muon update at learning rate %g would overflow \"%s\"[%zu] "
                          "(weight or momentum); the step was rejected and weights and optimizer state are "
                          "unchanged (try a lower learning rate or gradient clipping)", (double)lr, ti->name,
                          (size_t)x.layer * ((size_t)ti->size / (size_t)ti->layers) + x.at + bad);
    }
    if (check || n == 0) return WF_OK;
    const int threads = wf_pool_threads(m->pool);
    size_t bytes = 0;
    wf_real *shared = m->pool ? wf_pool_scratch(m->pool, &bytes) : NULL;
    const size_t slot = (size_t)wf_plan_muon(&m->d);
    if (shared && n >= 2 * threads && n <= MUON_SPLIT_MAX && (size_t)threads * slot <= bytes / sizeof(wf_real)) {
        muon_job j = {.m = m, .scale = scale, .scratch = shared, .lr = lr, .n = n, .slot = slot};
        atomic_init(&j.next, 0);
        wf_pool_run(m->pool, threads, muon_task, &j);
        return WF_OK;
    }
    for (int k = 0; k < n; k++)
        if (muon_matrix(m, k, &x)) muon_update_matrix(m, &x, scale, lr, m->muon_mem, m->pool);
    return WF_OK;
}

/* The optimizer on every tensor, as step t: AdamW, or with opt.muon Muon for the blocks'
 * matrices and AdamW for the rest. Every check runs before any update. */
static wf_status optim_step(wf_model *m, wf_real scale, float lr, int32_t t) {
    wf_status s = muon_pass(m, 1, scale, lr);
    if (s == WF_OK) s = adamw_step(m, scale, lr, t);
    if (s == WF_OK) muon_pass(m, 0, scale, lr);
    return s;
}

wf_status wf_model_step_lr(wf_model *m, const wf_batch *b, float lr, wf_step_info *info, int *why) {
    wf_real loss = 0;
    if (why) *why = 0;
    wf_status s = run(m, b, 1, &loss);
    if (info) *info = (wf_step_info){.loss = (float)loss, .lr = lr, .step = m->step}; /* a refused step's, too */
    if (s == WF_ERR_NUMERIC && why) *why = WF_DIVERGED_LOSS;
    if (s != WF_OK) return s;
    const double norm = sqrt(wf_sum_squares(wf_model_block(m, WF_GRADS), m->gstride, m->pool));
    if (info) info->grad_norm = (float)norm;
    if (!wf_finite(norm)) {
        if (why) *why = WF_DIVERGED_GRAD;
        return WF_ERR(m, WF_ERR_NUMERIC, "the gradient norm is not finite; the step was rejected and weights and "
                      "optimizer state are unchanged (try a lower learning rate or gradient clipping)");
    }
    if ((s = optim_step(m, clip_scale(m, norm), lr, m->step + 1)) != WF_OK) {
        if (why) *why = WF_DIVERGED_UPDATE;
        return s;
    }
    m->step++;
    wf_model_gen_stop(m); /* the cached keys and values belong to the old weights */
    if (info) info->step = m->step;
    m->err[0] = 0;
    return WF_OK;
}

wf_status wf_model_step(wf_model *m, const wf_batch *b, wf_step_info *info) {
    WF_NEED_READY(m);
    return wf_model_step_lr(m, b, wf_lr_at(&m->opt, m->step), info, NULL);
}
