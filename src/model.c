/* The model: config checks, the parameter arena, activation planning, the layer loop
 * (forward and backward), the training step and the batch sampler. */
#include <stdlib.h>

#include "model.h"

/* ---- config ---- */

void wf_config_default(wf_config *cfg) {
    if (!cfg) return;
    memset(cfg, 0, sizeof *cfg);
    cfg->arch = WF_ARCH_DECODER;
    cfg->norm = WF_NORM_LAYERNORM;
    cfg->block = WF_BLOCK_PRE_LN;
    cfg->activation = WF_ACT_GELU;
    cfg->positions = WF_POS_LEARNED;
    cfg->tied_head = 1;
    cfg->bias = 1;
    cfg->vocab_size = 96;
    cfg->context = 64;
    cfg->n_layer = 4;
    cfg->n_head = 4;
    cfg->d_model = 128;
    cfg->d_ff = 512;
    cfg->norm_eps = 1e-5f;
    cfg->seed = 1337;
}

void wf_dims_of(const wf_config *c, wf_dims *d) {
    d->V = c->vocab_size;
    d->C = c->d_model;
    d->L = c->n_layer;
    d->NH = c->n_head;
    d->HS = c->n_head > 0 ? c->d_model / c->n_head : 0;
    d->F = c->d_ff;
    d->T = c->context;
    d->fc = c->activation == WF_ACT_SWIGLU ? 2 : 1;
    d->pos = c->positions == WF_POS_LEARNED;
    d->bias = c->bias != 0;
    d->normb = c->bias != 0 && c->norm == WF_NORM_LAYERNORM;
    d->head = c->tied_head == 0;
}

/* Limits that keep every size computation inside int32 element counts. */
#define MAX_VOCAB (1 << 24)
#define MAX_CONTEXT (1 << 16)
#define MAX_LAYERS 1024
#define MAX_WIDTH (1 << 20)

#define CHECK(cond, status, ...) \
    do {                         \
        if (!(cond)) return wf_fail(msg, msg ? (size_t)cap : 0, status, __VA_ARGS__); \
    } while (0)

wf_status wf_config_check(const wf_config *c, char *msg, int32_t cap) {
    if (cap < 0) cap = 0;
    if (msg && cap > 0) msg[0] = 0;
    CHECK(c, WF_ERR_ARG, "config is NULL");
    CHECK(c->arch >= 0 && c->arch <= 2, WF_ERR_CONFIG, "arch %d is not one of decoder (0), encoder (1), encoder-decoder (2)", c->arch);
    CHECK(c->norm >= 0 && c->norm <= 1, WF_ERR_CONFIG, "norm %d is not one of layernorm (0), rmsnorm (1)", c->norm);
    CHECK(c->block >= 0 && c->block <= 1, WF_ERR_CONFIG, "block %d is not one of pre_ln (0), post_ln (1)", c->block);
    CHECK(c->activation >= 0 && c->activation <= 2, WF_ERR_CONFIG, "activation %d is not one of gelu (0), relu (1), swiglu (2)", c->activation);
    CHECK(c->positions >= 0 && c->positions <= 2, WF_ERR_CONFIG, "positions %d is not one of learned (0), sinusoidal (1), rope (2)", c->positions);
    CHECK(c->tied_head == 0 || c->tied_head == 1, WF_ERR_CONFIG, "tied_head must be 0 or 1, not %d", c->tied_head);
    CHECK(c->bias == 0 || c->bias == 1, WF_ERR_CONFIG, "bias must be 0 or 1, not %d", c->bias);
    CHECK(c->vocab_size >= 2 && c->vocab_size <= MAX_VOCAB, WF_ERR_CONFIG, "vocab_size %d is outside [2, %d]", c->vocab_size, MAX_VOCAB);
    CHECK(c->context >= 1 && c->context <= MAX_CONTEXT, WF_ERR_CONFIG, "context %d is outside [1, %d]", c->context, MAX_CONTEXT);
    CHECK(c->n_layer >= 1 && c->n_layer <= MAX_LAYERS, WF_ERR_CONFIG, "n_layer %d is outside [1, %d]", c->n_layer, MAX_LAYERS);
    CHECK(c->d_model >= 1 && c->d_model <= MAX_WIDTH, WF_ERR_CONFIG, "d_model %d is outside [1, %d]", c->d_model, MAX_WIDTH);
    CHECK(c->n_head >= 1 && c->n_head <= c->d_model, WF_ERR_CONFIG, "n_head %d is outside [1, d_model = %d]", c->n_head, c->d_model);
    CHECK(c->d_model % c->n_head == 0, WF_ERR_CONFIG, "n_head %d does not divide d_model %d", c->n_head, c->d_model);
    CHECK(c->d_ff >= 1 && c->d_ff <= MAX_WIDTH, WF_ERR_CONFIG, "d_ff %d is outside [1, %d]", c->d_ff, MAX_WIDTH);
    CHECK(wf_finite(c->norm_eps) && c->norm_eps > 0 && c->norm_eps < 1, WF_ERR_CONFIG, "norm_eps must be in (0, 1)");
    /* Valid, but not built yet: each names what to use instead. */
    CHECK(c->arch == WF_ARCH_DECODER, WF_ERR_UNSUPPORTED, "arch %s is not implemented yet; use decoder", c->arch == 1 ? "encoder" : "encoder-decoder");
    CHECK(c->norm == WF_NORM_LAYERNORM, WF_ERR_UNSUPPORTED, "norm rmsnorm is not implemented yet; use layernorm");
    CHECK(c->block == WF_BLOCK_PRE_LN, WF_ERR_UNSUPPORTED, "block post_ln is not implemented yet; use pre_ln");
    CHECK(c->activation != WF_ACT_SWIGLU, WF_ERR_UNSUPPORTED, "activation swiglu is not implemented yet; use gelu or relu");
    CHECK(c->positions != WF_POS_ROPE, WF_ERR_UNSUPPORTED, "positions rope is not implemented yet; use learned or sinusoidal");
    return WF_OK;
}

#undef CHECK

/* Elements of each table, padded to 4 so every tensor starts 16-byte aligned. Computed in
 * double first so that absurd configs are refused instead of overflowing. */
#define PAD4(n) (((n) + 3) / 4 * 4)
#define PAD4D(n) (ceil((n) / 4.0) * 4) /* the same in double */

static double params_elems_d(const wf_dims *dd) {
    double V = dd->V, C = dd->C, L = dd->L, F = dd->F, T = dd->T, fc = dd->fc;
    double pos = dd->pos, bias = dd->bias, normb = dd->normb, head = dd->head, total = 0;
#define X(name, ndim, d0, d1, d2, decay, init) total += PAD4D((d0) * (d1) * (d2));
    WF_PARAMS(X)
#undef X
    (void)F;
    return total;
}

static double acts_elems_d(const wf_dims *dd, double B, double T) {
    double V = dd->V, C = dd->C, L = dd->L, NH = dd->NH, F = dd->F, fc = dd->fc, total = 0;
#define X(name, n) total += PAD4D(n);
    WF_ACTS(X)
#undef X
    return total;
}

static size_t acts_carve(wf_acts *a, wf_real *mem, const wf_dims *dd, size_t B, size_t T) {
    const size_t V = dd->V, C = dd->C, L = dd->L, NH = dd->NH, F = dd->F, fc = dd->fc;
    size_t off = 0;
#define X(name, n)                              \
    a->name = mem ? mem + off : NULL;           \
    off += PAD4((size_t)(n));
    WF_ACTS(X)
#undef X
    return off;
}

/* The largest memory this build can address: 4 GB in wasm32, effectively unlimited natively. */
static double address_limit(void) { return sizeof(void *) == 4 ? 4294967296.0 : 1e18; }

wf_status wf_memory_estimate(const wf_config *cfg, int32_t B, int32_t T, wf_memory *out) {
    wf_status s = wf_config_check(cfg, NULL, 0);
    if (s != WF_OK) return s;
    if (!out || B < 0 || T < 0 || T > cfg->context) return WF_ERR_ARG;
    wf_dims d;
    wf_dims_of(cfg, &d);
    double bytes = sizeof(wf_real);
    double P = params_elems_d(&d);
    out->params = P * bytes;
    out->grads = P * bytes;
    out->optimizer = 2 * P * bytes;
    out->activations = (B > 0 && T > 0) ? acts_elems_d(&d, B, T) * bytes : 0;
    out->inference = (double)wf_gen_bytes(&d) + (cfg->positions == WF_POS_SINUSOIDAL ? (double)d.T * d.C * bytes : 0);
    out->total = out->params + out->grads + out->optimizer + out->activations + out->inference;
    return WF_OK;
}

/* ---- the handle ---- */

wf_model *wf_model_create(void) {
    wf_model *m = calloc(1, sizeof *m);
    return m;
}

static void release(wf_model *m) {
    wf_free(m->arena);
    wf_free(m->pos_table);
    wf_free(m->act_mem);
    wf_free(m->gen.mem);
}

void wf_model_free(wf_model *m) {
    if (!m) return;
    release(m);
    wf_pool_free(m->pool);
    free(m);
}

const char *wf_model_error(const wf_model *m) { return m ? m->err : "model is NULL"; }

void wf_optim_default(wf_optim *o) {
    if (!o) return;
    o->lr = 3e-4f;
    o->beta1 = 0.9f;
    o->beta2 = 0.95f;
    o->eps = 1e-8f;
    o->weight_decay = 0.1f;
    o->warmup = 0;
    o->decay_steps = 0;
    o->min_lr_ratio = 0.1f;
    o->grad_clip = 1.0f;
}

static void init_weights(wf_model *m) {
    wf_rng r;
    wf_rng_seed(&r, m->cfg.seed);
    const double std = 0.02, resid_std = 0.02 / sqrt(2.0 * m->d.L); /* GPT-2: residual projections shrink with depth */
    for (int i = 0; i < WF_N_PARAMS; i++) {
        const wf_tensor_info *t = &m->tensors[i];
        wf_real *w = m->arena + t->offset;
        int init = 0;
#define X(name, ndim, d0, d1, d2, decay, kind) if (i == WF_P_##name) init = kind;
        WF_PARAMS(X)
#undef X
        for (int32_t j = 0; j < t->size; j++) {
            switch (init) {
            case WF_INIT_ZERO: w[j] = 0; break;
            case WF_INIT_ONE: w[j] = 1; break;
            case WF_INIT_NORMAL: w[j] = (wf_real)(std * wf_rng_normal(&r)); break;
            default: w[j] = (wf_real)(resid_std * wf_rng_normal(&r)); break;
            }
        }
    }
}

/* Fills the tensor table and points p and g into the arena. */
static size_t layout_params(wf_model *m) {
    const wf_dims *dd = &m->d;
    const int V = dd->V, C = dd->C, L = dd->L, F = dd->F, T = dd->T, fc = dd->fc;
    const int pos = dd->pos, bias = dd->bias, normb = dd->normb, head = dd->head;
    size_t off = 0;
    int i = 0;
    m->n_params = 0;
#define X(pname, nd, d0, d1, d2, dec, init)                                           \
    {                                                                                 \
        wf_tensor_info *t = &m->tensors[i++];                                         \
        t->name = #pname;                                                             \
        t->ndim = nd;                                                                 \
        t->shape[0] = (d0); t->shape[1] = (d1); t->shape[2] = (d2); t->shape[3] = 1;  \
        for (int k = nd; k < 4; k++) t->shape[k] = 0;                                 \
        t->size = (d0) * (d1) * (d2);                                                 \
        t->offset = (int32_t)off;                                                     \
        t->decay = dec;                                                               \
        m->n_params += (size_t)t->size;                                               \
        off += PAD4((size_t)t->size);                                                 \
    }
    WF_PARAMS(X)
#undef X
    (void)F;
    return off;
}

static void point_params(wf_model *m, size_t stride) {
    int i = 0;
#define X(pname, ...)                                                               \
    {                                                                               \
        const wf_tensor_info *t = &m->tensors[i++];                                 \
        m->p.pname = t->size ? m->arena + t->offset : NULL;                         \
        m->g.pname = t->size ? m->arena + stride + t->offset : NULL;                \
    }
    WF_PARAMS(X)
#undef X
}

static size_t arena_stride(const wf_model *m) {
    const wf_tensor_info *last = &m->tensors[WF_N_PARAMS - 1];
    return PAD4((size_t)last->offset + (size_t)last->size);
}

wf_status wf_model_init(wf_model *m, const wf_config *cfg) {
    if (!m) return WF_ERR_ARG;
    char why[200];
    wf_status s = wf_config_check(cfg, why, sizeof why);
    if (s != WF_OK) return WF_ERR(m, s, "%s", why);
    wf_memory mem;
    wf_memory_estimate(cfg, 0, 0, &mem);
    wf_dims d;
    wf_dims_of(cfg, &d);
    if (params_elems_d(&d) > 2147483647.0)
        return WF_ERR(m, WF_ERR_CONFIG, "the model would have %.0f parameters; at most 2^31 - 1 are supported",
                      params_elems_d(&d));
    if (mem.total > address_limit() * 0.95)
        return WF_ERR(m, WF_ERR_NOMEM, "the model needs %.2f GB before activations; this build addresses at most %.2f GB",
                      mem.total / 1e9, address_limit() / 1e9);

    /* Build into a fresh handle-sized state; swap in only when everything succeeded. */
    wf_model next;
    memset(&next, 0, sizeof next);
    next.cfg = *cfg;
    next.d = d;
    size_t stride = layout_params(&next);
    next.arena = wf_calloc(4 * stride * sizeof(wf_real));
    size_t gen_bytes = wf_gen_bytes(&d);
    next.gen.mem = wf_alloc(gen_bytes);
    if (cfg->positions == WF_POS_SINUSOIDAL) next.pos_table = wf_alloc((size_t)d.T * d.C * sizeof(wf_real));
    if (!next.arena || !next.gen.mem || (cfg->positions == WF_POS_SINUSOIDAL && !next.pos_table)) {
        release(&next);
        return WF_ERR(m, WF_ERR_NOMEM, "could not allocate %.1f MB for the model", mem.total / 1e6);
    }
    point_params(&next, stride);
    init_weights(&next);
    if (next.pos_table) wf_sinusoid_table(next.pos_table, d.T, d.C);
    wf_gen_carve(&next.gen, &d, next.gen.mem);
    next.gen.bytes = gen_bytes;
    wf_optim_default(&next.opt);
    wf_rng_seed(&next.rng_split[0], (uint64_t)cfg->seed * 2 + 1);
    wf_rng_seed(&next.rng_split[1], (uint64_t)cfg->seed * 2 + 2);
    next.ready = 1;
    next.pool = m->pool; /* the thread setting belongs to the handle */

    release(m);
    *m = next;
    return WF_OK;
}

#define NEED_READY(m)                                                                  \
    do {                                                                               \
        if (!(m)) return WF_ERR_ARG;                                                   \
        if (!(m)->ready) return WF_ERR(m, WF_ERR_STATE, "the model has no weights yet: call wf_model_init first"); \
    } while (0)

wf_status wf_model_config(const wf_model *m, wf_config *out) {
    if (!m || !out || !m->ready) return m && out ? WF_ERR_STATE : WF_ERR_ARG;
    *out = m->cfg;
    return WF_OK;
}

int32_t wf_model_param_count(const wf_model *m) { return m && m->ready ? (int32_t)m->n_params : 0; }

wf_status wf_model_memory(const wf_model *m, wf_memory *out) {
    if (!m || !out) return WF_ERR_ARG;
    memset(out, 0, sizeof *out);
    if (!m->ready) return WF_OK;
    double bytes = sizeof(wf_real), stride = (double)arena_stride(m);
    out->params = stride * bytes;
    out->grads = stride * bytes;
    out->optimizer = 2 * stride * bytes;
    out->activations = (double)m->act_cap * bytes;
    out->inference = (double)m->gen.bytes + (m->pos_table ? (double)m->d.T * m->d.C * bytes : 0);
    out->total = out->params + out->grads + out->optimizer + out->activations + out->inference;
    return WF_OK;
}

int32_t wf_model_tensor_count(const wf_model *m) { return m && m->ready ? WF_N_PARAMS : 0; }

wf_status wf_model_tensor(const wf_model *m, int32_t i, wf_tensor_info *out) {
    if (!m || !out) return WF_ERR_ARG;
    if (!m->ready) return WF_ERR_STATE;
    if (i < 0 || i >= WF_N_PARAMS) return WF_ERR_ARG;
    *out = m->tensors[i];
    return WF_OK;
}

wf_real *wf_model_params(wf_model *m) { return m && m->ready ? m->arena : NULL; }
wf_real *wf_model_grads(wf_model *m) { return m && m->ready ? m->arena + arena_stride(m) : NULL; }

wf_status wf_model_set_optim(wf_model *m, const wf_optim *o) {
    NEED_READY(m);
    if (!o) return WF_ERR(m, WF_ERR_ARG, "optimizer settings are NULL");
    if (!wf_finite(o->lr) || o->lr < 0) return WF_ERR(m, WF_ERR_ARG, "learning rate must be a finite number >= 0, not %g", (double)o->lr);
    if (!wf_finite(o->beta1) || o->beta1 < 0 || o->beta1 >= 1) return WF_ERR(m, WF_ERR_ARG, "beta1 must be in [0, 1), not %g", (double)o->beta1);
    if (!wf_finite(o->beta2) || o->beta2 < 0 || o->beta2 >= 1) return WF_ERR(m, WF_ERR_ARG, "beta2 must be in [0, 1), not %g", (double)o->beta2);
    if (!wf_finite(o->eps) || o->eps <= 0) return WF_ERR(m, WF_ERR_ARG, "eps must be > 0, not %g", (double)o->eps);
    if (!wf_finite(o->weight_decay) || o->weight_decay < 0) return WF_ERR(m, WF_ERR_ARG, "weight_decay must be >= 0, not %g", (double)o->weight_decay);
    if (o->warmup < 0 || o->decay_steps < 0) return WF_ERR(m, WF_ERR_ARG, "warmup and decay_steps must be >= 0");
    if (!wf_finite(o->min_lr_ratio) || o->min_lr_ratio < 0 || o->min_lr_ratio > 1) return WF_ERR(m, WF_ERR_ARG, "min_lr_ratio must be in [0, 1], not %g", (double)o->min_lr_ratio);
    if (!wf_finite(o->grad_clip) || o->grad_clip < 0) return WF_ERR(m, WF_ERR_ARG, "grad_clip must be >= 0 (0 = off), not %g", (double)o->grad_clip);
    m->opt = *o;
    m->err[0] = 0;
    return WF_OK;
}

wf_status wf_model_get_optim(const wf_model *m, wf_optim *out) {
    if (!m || !out) return WF_ERR_ARG;
    if (!m->ready) return WF_ERR_STATE;
    *out = m->opt;
    return WF_OK;
}

int32_t wf_model_step(const wf_model *m) { return m && m->ready ? m->step : 0; }
float wf_model_lr(const wf_model *m) { return m && m->ready ? wf_lr_at(&m->opt, m->step) : 0; }

/* ---- activations ---- */

/* Makes room for (B, T) and carves the activation pointers for it. Allocates only when
 * the shape needs more than any before; on failure nothing changes. */
static wf_status plan(wf_model *m, int B, int T) {
    double need_d = acts_elems_d(&m->d, B, T);
    if (need_d * sizeof(wf_real) > address_limit() * 0.95)
        return WF_ERR(m, WF_ERR_NOMEM, "a batch of %d x %d needs %.2f GB of activations", B, T, need_d * sizeof(wf_real) / 1e9);
    size_t need = (size_t)need_d;
    if (need > m->act_cap) {
        wf_real *mem = wf_alloc(need * sizeof(wf_real));
        if (!mem)
            return WF_ERR(m, WF_ERR_NOMEM, "could not allocate %.1f MB of activations for a batch of %d x %d",
                          need * sizeof(wf_real) / 1e6, B, T);
        wf_free(m->act_mem);
        m->act_mem = mem;
        m->act_cap = need;
    }
    acts_carve(&m->a, m->act_mem, &m->d, (size_t)B, (size_t)T);
    m->B = B;
    m->T = T;
    return WF_OK;
}

/* Layer l's slice of the planned activations. */
static wf_layer_acts layer_slice(const wf_model *m, int l) {
    const wf_acts *a = &m->a;
    const size_t N = (size_t)m->B * m->T, C = m->d.C, F = m->d.F, fc = m->d.fc, NH = m->d.NH;
    wf_layer_acts s;
    s.ln1 = a->ln1 + l * N * C;
    s.ln1_mean = a->ln1_mean + l * N;
    s.ln1_rstd = a->ln1_rstd + l * N;
    s.qkv = a->qkv + l * N * 3 * C;
    s.atty = a->atty + l * N * C;
    s.att = a->att + l * N * NH * m->T;
    s.res1 = a->res1 + l * N * C;
    s.ln2 = a->ln2 + l * N * C;
    s.ln2_mean = a->ln2_mean + l * N;
    s.ln2_rstd = a->ln2_rstd + l * N;
    s.fch = a->fch + l * N * fc * F;
    s.fch_act = a->fch_act + l * N * F;
    s.res2 = a->res2 + l * N * C;
    s.branch = a->branch;
    return s;
}

/* ---- forward ---- */

/* Weights of layer l: the l-th slice of a stacked tensor, or NULL when it is absent. */
#define LW(t, l, n) ((t) ? (t) + (size_t)(l) * (n) : NULL)

void wf_layer_forward(const wf_model *m, int l, const wf_layer_acts *a, const wf_real *x,
                      int B, int T, wf_real *kcache, wf_real *vcache, int pos) {
    const wf_params *p = &m->p;
    const int C = m->d.C, F = m->d.F, fc = m->d.fc, N = B * T;
    const size_t CC = (size_t)C * C;
    const wf_real eps = (wf_real)m->cfg.norm_eps;

    /* res1 = x + attproj(attention(qkv(ln1(x)))) */
    wf_layernorm_forward(a->ln1, a->ln1_mean, a->ln1_rstd, x, LW(p->ln1w, l, C), LW(p->ln1b, l, C), N, C, eps);
    wf_linear_forward(a->qkv, a->ln1, LW(p->qkvw, l, 3 * CC), LW(p->qkvb, l, 3 * C), N, C, 3 * C, m->pool);
    wf_attn_dims ad = {B, m->d.NH, m->d.HS, T, T, 3 * C, 3 * C, 1, NULL};
    const wf_real *q = a->qkv, *k = a->qkv + C, *v = a->qkv + 2 * C;
    if (kcache) {
        /* generation (B = 1): append this step's keys and values, attend over the cache */
        for (int t = 0; t < T; t++) {
            memcpy(kcache + (size_t)(pos + t) * C, a->qkv + (size_t)t * 3 * C + C, C * sizeof(wf_real));
            memcpy(vcache + (size_t)(pos + t) * C, a->qkv + (size_t)t * 3 * C + 2 * C, C * sizeof(wf_real));
        }
        k = kcache;
        v = vcache;
        ad.Tk = pos + T;
        ad.kv_stride = C;
    }
    wf_attention_forward(a->atty, a->att, q, k, v, &ad, m->pool);
    wf_linear_forward(a->branch, a->atty, LW(p->attprojw, l, CC), LW(p->attprojb, l, C), N, C, C, m->pool);
    wf_residual_forward(a->res1, x, a->branch, N * C);

    /* res2 = res1 + fcproj(act(fc(ln2(res1)))) */
    wf_layernorm_forward(a->ln2, a->ln2_mean, a->ln2_rstd, a->res1, LW(p->ln2w, l, C), LW(p->ln2b, l, C), N, C, eps);
    wf_linear_forward(a->fch, a->ln2, LW(p->fcw, l, (size_t)fc * F * C), LW(p->fcb, l, fc * F), N, C, fc * F, m->pool);
    if (m->cfg.activation == WF_ACT_RELU)
        wf_relu_forward(a->fch_act, a->fch, N * F);
    else
        wf_gelu_forward(a->fch_act, a->fch, N * F);
    wf_linear_forward(a->branch, a->fch_act, LW(p->fcprojw, l, (size_t)C * F), LW(p->fcprojb, l, C), N, F, C, m->pool);
    wf_residual_forward(a->res2, a->res1, a->branch, N * C);
}

/* The output head's weights: the token embedding when tied. */
static const wf_real *head_weights(const wf_model *m) { return m->d.head ? m->p.lm_head : m->p.wte; }

void wf_head_forward(const wf_model *m, wf_real *logits, wf_real *lnf, wf_real *lnf_mean,
                     wf_real *lnf_rstd, const wf_real *x, int N) {
    wf_layernorm_forward(lnf, lnf_mean, lnf_rstd, x, m->p.lnfw, m->p.lnfb, N, m->d.C, (wf_real)m->cfg.norm_eps);
    wf_linear_forward(logits, lnf, head_weights(m), NULL, N, m->d.C, m->d.V, m->pool);
}

static const wf_real *last_residual(const wf_model *m) {
    return layer_slice(m, m->d.L - 1).res2;
}

static void forward(wf_model *m, const int32_t *inputs) {
    const int B = m->B, T = m->T;
    wf_embed_forward(m->a.encoded, inputs, m->p.wte, wf_position_table(m), B, T, m->d.C);
    const wf_real *x = m->a.encoded;
    for (int l = 0; l < m->d.L; l++) {
        wf_layer_acts la = layer_slice(m, l);
        wf_layer_forward(m, l, &la, x, B, T, NULL, NULL, 0);
        x = la.res2;
    }
    wf_head_forward(m, m->a.logits, m->a.lnf, m->a.lnf_mean, m->a.lnf_rstd, x, B * T);
}

/* ---- backward ---- */

static void zero(wf_real *x, size_t n) { memset(x, 0, n * sizeof(wf_real)); }

/* Pre-LN block backward. dres holds dL/d(res2) on entry and dL/dx on return: each
 * residual add passes its gradient through unchanged, so the branch gradients accumulate
 * into dres in place. */
static void layer_backward(wf_model *m, int l, const wf_layer_acts *la, const wf_real *x) {
    const wf_params *p = &m->p;
    const wf_params *g = &m->g;
    wf_acts *a = &m->a;
    const int B = m->B, T = m->T, N = B * T, C = m->d.C, F = m->d.F, fc = m->d.fc;
    const size_t CC = (size_t)C * C;

    /* res2 = res1 + fcproj(act(fc(ln2(res1)))) */
    zero(a->dfch_act, (size_t)N * F);
    wf_linear_backward(a->dfch_act, LW(g->fcprojw, l, (size_t)C * F), LW(g->fcprojb, l, C), a->dres, la->fch_act,
                       LW(p->fcprojw, l, (size_t)C * F), N, F, C, m->pool);
    zero(a->dfch, (size_t)N * fc * F);
    if (m->cfg.activation == WF_ACT_RELU)
        wf_relu_backward(a->dfch, a->dfch_act, la->fch, N * F);
    else
        wf_gelu_backward(a->dfch, a->dfch_act, la->fch, N * F);
    zero(a->dln, (size_t)N * C);
    wf_linear_backward(a->dln, LW(g->fcw, l, (size_t)fc * F * C), LW(g->fcb, l, fc * F), a->dfch, la->ln2,
                       LW(p->fcw, l, (size_t)fc * F * C), N, C, fc * F, m->pool);
    wf_layernorm_backward(a->dres, LW(g->ln2w, l, C), LW(g->ln2b, l, C), a->dln, la->res1, la->ln2_mean,
                          la->ln2_rstd, LW(p->ln2w, l, C), N, C);

    /* res1 = x + attproj(attention(qkv(ln1(x)))) */
    zero(a->datty, (size_t)N * C);
    wf_linear_backward(a->datty, LW(g->attprojw, l, CC), LW(g->attprojb, l, C), a->dres, la->atty,
                       LW(p->attprojw, l, CC), N, C, C, m->pool);
    zero(a->dqkv, (size_t)N * 3 * C);
    wf_attn_dims ad = {B, m->d.NH, m->d.HS, T, T, 3 * C, 3 * C, 1, NULL};
    wf_attention_backward(a->dqkv, a->dqkv + C, a->dqkv + 2 * C, a->datty, la->atty, la->att, la->qkv,
                          la->qkv + C, la->qkv + 2 * C, &ad, m->pool);
    zero(a->dln, (size_t)N * C);
    wf_linear_backward(a->dln, LW(g->qkvw, l, 3 * CC), LW(g->qkvb, l, 3 * C), a->dqkv, la->ln1,
                       LW(p->qkvw, l, 3 * CC), N, C, 3 * C, m->pool);
    wf_layernorm_backward(a->dres, LW(g->ln1w, l, C), LW(g->ln1b, l, C), a->dln, x, la->ln1_mean, la->ln1_rstd,
                          LW(p->ln1w, l, C), N, C);
}

static void backward(wf_model *m, const int32_t *inputs, const int32_t *targets, int count) {
    wf_acts *a = &m->a;
    const int N = m->B * m->T, C = m->d.C, V = m->d.V;
    /* loss = mean over counted rows of cross-entropy; probs become dlogits in place */
    wf_crossentropy_backward(a->probs, (wf_real)(1.0 / count), a->probs, targets, N, V);
    zero(a->dln, (size_t)N * C);
    wf_real *dhead = m->d.head ? m->g.lm_head : m->g.wte;
    wf_linear_backward(a->dln, dhead, NULL, a->probs, a->lnf, head_weights(m), N, C, V, m->pool);
    zero(a->dres, (size_t)N * C);
    wf_layernorm_backward(a->dres, m->g.lnfw, m->g.lnfb, a->dln, last_residual(m), a->lnf_mean, a->lnf_rstd,
                          m->p.lnfw, N, C);
    for (int l = m->d.L - 1; l >= 0; l--) {
        wf_layer_acts la = layer_slice(m, l);
        const wf_real *x = l == 0 ? a->encoded : layer_slice(m, l - 1).res2;
        layer_backward(m, l, &la, x);
    }
    wf_embed_backward(m->g.wte, m->d.pos ? m->g.wpe : NULL, a->dres, inputs, m->B, m->T, C);
}

/* ---- public entry points ---- */

static wf_status check_batch(wf_model *m, const int32_t *inputs, const int32_t *targets, int32_t B, int32_t T,
                             int need_targets) {
    NEED_READY(m);
    if (!inputs) return WF_ERR(m, WF_ERR_ARG, "inputs are NULL");
    if (need_targets && !targets) return WF_ERR(m, WF_ERR_ARG, "targets are NULL");
    if (B < 1 || T < 1) return WF_ERR(m, WF_ERR_ARG, "batch shape %d x %d: both must be >= 1", B, T);
    if (T > m->cfg.context) return WF_ERR(m, WF_ERR_ARG, "sequence length %d exceeds the model's context of %d", T, m->cfg.context);
    if ((double)B * T > 2147483647.0 / 4) return WF_ERR(m, WF_ERR_ARG, "batch %d x %d is too large", B, T);
    const int32_t V = m->cfg.vocab_size;
    const size_t N = (size_t)B * T;
    for (size_t i = 0; i < N; i++)
        if (inputs[i] < 0 || inputs[i] >= V)
            return WF_ERR(m, WF_ERR_TOKEN, "input token %d at position %zu is outside [0, %d)", inputs[i], i, V);
    if (targets) {
        size_t counted = 0;
        for (size_t i = 0; i < N; i++) {
            if (targets[i] >= V) return WF_ERR(m, WF_ERR_TOKEN, "target token %d at position %zu is outside [0, %d)", targets[i], i, V);
            counted += targets[i] >= 0;
        }
        if (counted == 0) return WF_ERR(m, WF_ERR_ARG, "every target is negative (ignored): nothing to learn from");
    }
    return WF_OK;
}

/* Forward, loss, and (with grads) backward; the shared front of the three entry points. */
static wf_status run(wf_model *m, const int32_t *inputs, const int32_t *targets, int32_t B, int32_t T,
                     int grads, wf_real *loss_out) {
    wf_status s = check_batch(m, inputs, targets, B, T, grads);
    if (s != WF_OK) return s;
    if ((s = plan(m, B, T)) != WF_OK) return s;
    forward(m, inputs);
    if (!targets) return WF_OK;
    int count = 0;
    double total = wf_crossentropy_forward(m->a.losses, m->a.probs, m->a.logits, targets, B * T, m->d.V, &count);
    double loss = total / count;
    if (loss_out) *loss_out = (wf_real)loss;
    if (!wf_finite(loss))
        return WF_ERR(m, WF_ERR_NUMERIC, "the loss is %s; weights are unchanged (try a lower learning rate)",
                      loss != loss ? "NaN" : "infinite");
    if (grads) {
        zero(m->arena + arena_stride(m), arena_stride(m));
        backward(m, inputs, targets, count);
    }
    return WF_OK;
}

wf_status wf_forward(wf_model *m, const int32_t *inputs, const int32_t *targets, int32_t B, int32_t T,
                     wf_real *loss) {
    wf_status s = run(m, inputs, targets, B, T, 0, loss);
    if (s == WF_OK) m->err[0] = 0;
    return s;
}

wf_status wf_compute_grads(wf_model *m, const int32_t *inputs, const int32_t *targets, int32_t B, int32_t T,
                           wf_real *loss) {
    wf_status s = run(m, inputs, targets, B, T, 1, loss);
    if (s == WF_OK) m->err[0] = 0;
    return s;
}

const wf_real *wf_logits(const wf_model *m) { return m && m->ready && m->B > 0 ? m->a.logits : NULL; }

wf_status wf_train_step(wf_model *m, const int32_t *inputs, const int32_t *targets, int32_t B, int32_t T,
                        wf_step_info *info) {
    wf_real loss = 0;
    wf_status s = run(m, inputs, targets, B, T, 1, &loss);
    if (s != WF_OK) return s;
    const size_t stride = arena_stride(m);
    wf_real *grads = m->arena + stride;
    double norm = sqrt(wf_sum_squares(grads, stride));
    if (!wf_finite(norm))
        return WF_ERR(m, WF_ERR_NUMERIC, "the gradient norm is not finite; the step was rejected and weights are unchanged "
                      "(try a lower learning rate or gradient clipping)");
    /* torch.nn.utils.clip_grad_norm_: scale by max_norm / (norm + 1e-6) when that is < 1 */
    wf_real scale = 1;
    if (m->opt.grad_clip > 0) {
        double coef = m->opt.grad_clip / (norm + 1e-6);
        if (coef < 1) scale = (wf_real)coef;
    }
    const float lr = wf_lr_at(&m->opt, m->step);
    const int32_t t = m->step + 1;
    for (int i = 0; i < WF_N_PARAMS; i++) {
        const wf_tensor_info *ti = &m->tensors[i];
        if (!ti->size) continue;
        wf_real *p = m->arena + ti->offset;
        wf_adamw_update(p, p + 2 * stride, p + 3 * stride, p + stride, (size_t)ti->size, scale, &m->opt, lr,
                        ti->decay, t);
    }
    m->step = t;
    m->gen.active = 0; /* the cached keys and values belong to the old weights */
    if (info) {
        info->loss = loss;
        info->grad_norm = (wf_real)norm;
        info->lr = lr;
        info->step = m->step;
    }
    m->err[0] = 0;
    return WF_OK;
}

wf_status wf_sample_batch(wf_model *m, const int32_t *tokens, int32_t n, float val_fraction, int32_t split,
                          int32_t B, int32_t T, int32_t *inputs, int32_t *targets) {
    NEED_READY(m);
    if (!tokens || !inputs || !targets) return WF_ERR(m, WF_ERR_ARG, "tokens, inputs and targets must not be NULL");
    if (split != 0 && split != 1) return WF_ERR(m, WF_ERR_ARG, "split must be 0 (train) or 1 (validation), not %d", split);
    if (!wf_finite(val_fraction) || val_fraction < 0 || val_fraction >= 1)
        return WF_ERR(m, WF_ERR_ARG, "val_fraction must be in [0, 1), not %g", (double)val_fraction);
    if (B < 1 || T < 1) return WF_ERR(m, WF_ERR_ARG, "batch shape %d x %d: both must be >= 1", B, T);
    if (n < 0) return WF_ERR(m, WF_ERR_ARG, "token count %d is negative", n);
    int32_t n_val = (int32_t)floor((double)n * val_fraction);
    int32_t lo = split == 0 ? 0 : n - n_val, hi = split == 0 ? n - n_val : n;
    if (hi - lo < T + 1)
        return WF_ERR(m, WF_ERR_ARG, "the %s split has %d tokens; a window of T = %d needs at least %d",
                      split == 0 ? "training" : "validation", hi - lo, T, T + 1);
    uint64_t span = (uint64_t)(hi - lo - T); /* window starts in [lo, hi - T - 1] */
    wf_rng *r = &m->rng_split[split];
    for (int b = 0; b < B; b++) {
        int32_t start = lo + (int32_t)(((uint64_t)wf_rng_u32(r) * span) >> 32);
        memcpy(inputs + (size_t)b * T, tokens + start, (size_t)T * sizeof(int32_t));
        memcpy(targets + (size_t)b * T, tokens + start + 1, (size_t)T * sizeof(int32_t));
    }
    m->err[0] = 0;
    return WF_OK;
}
