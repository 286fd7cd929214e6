/* The model: config checks, the parameter arena, activation planning, the layer (forward
 * and backward, every block variant), both stacks, the losses, the training step and the
 * batch sampler. */
#include <stdlib.h>

#include "config.h"
#include "model.h"

void wf_dims_of(const wf_config *c, wf_dims *d) {
    d->V = c->vocab_size;
    d->C = c->d_model;
    d->NH = c->n_head;
    d->HS = c->n_head > 0 ? c->d_model / c->n_head : 0;
    d->F = c->d_ff;
    d->T = c->context;
    d->L = c->n_layer;
    d->xa = c->arch == WF_ARCH_ENCODER_DECODER;
    d->E = d->xa ? c->n_enc_layer : 0;
    d->fc = c->activation == WF_ACT_SWIGLU ? 2 : 1;
    d->pos = c->positions == WF_POS_LEARNED;
    d->bias = c->bias != 0;
    d->normb = c->bias != 0 && c->norm == WF_NORM_LAYERNORM;
    d->head = c->tied_head == 0;
    d->post = c->block == WF_BLOCK_POST_LN;
    d->rope = c->positions == WF_POS_ROPE;
    d->drop = c->dropout > 0;
    d->K = c->arch == WF_ARCH_DECODER ? 1 : d->xa ? c->max_beam : 0;
}

/* Elements of each table, padded to 4 (PAD4) so every tensor starts 16-byte aligned.
 * Computed in double first (PAD4D) so that absurd configs are refused instead of
 * overflowing. */

static double params_elems_d(const wf_dims *dd, int padded) {
    double V = dd->V, C = dd->C, L = dd->L, E = dd->E, F = dd->F, T = dd->T, fc = dd->fc, xa = dd->xa;
    double pos = dd->pos, bias = dd->bias, normb = dd->normb, head = dd->head, total = 0;
#define X(name, ndim, d0, d1, d2, decay, init) total += padded ? PAD4D((d0) * (d1) * (d2)) : (d0) * (d1) * (d2);
    WF_PARAMS(X)
#undef X
    return total;
}

double wf_layer_elems_d(const wf_dims *dd, double N, double Tk, double S, double BS, double x, double drop) {
    double C = dd->C, NH = dd->NH, F = dd->F, fc = dd->fc, total = 0;
#define X(name, n) total += PAD4D(n);
    WF_LAYER_ACTS(X)
#undef X
    return total;
}

size_t wf_layer_carve(wf_layer_acts *a, wf_real *mem, const wf_dims *d, size_t N, size_t Tk, size_t S, size_t BS,
                      size_t x, size_t drop) {
    const size_t C = d->C, NH = d->NH, F = d->F, fc = d->fc;
    size_t off = 0;
#define X(name, n)                                  \
    a->name = mem && (n) != 0 ? mem + off : NULL;        \
    off += PAD4((size_t)(n));
    WF_LAYER_ACTS(X)
#undef X
    a->branch = NULL;
    a->out = d->post ? a->ln2 : a->res2;
    return off;
}

static double acts_elems_d(const wf_dims *dd, double B, double T, double S) {
    double V = dd->V, C = dd->C, L = dd->L, E = dd->E, F = dd->F, fc = dd->fc, xa = dd->xa, drop = dd->drop;
    double R = T > S ? T : S, total = 0;
    double main_layer = wf_layer_elems_d(dd, B * T, T, S, B * S, xa, drop);
    double enc_layer = wf_layer_elems_d(dd, B * S, S, 0, 0, 0, drop);
#define X(name, n) total += PAD4D(n);
    WF_ACTS(X)
#undef X
    return total;
}

/* Carves the activations for (B, T, S); layer_elems gets each stack's block size. */
static size_t acts_carve(wf_acts *a, wf_real *mem, const wf_dims *dd, size_t B, size_t T, size_t S,
                         size_t layer_elems[2]) {
    const size_t V = dd->V, C = dd->C, L = dd->L, E = dd->E, F = dd->F, fc = dd->fc, xa = dd->xa, drop = dd->drop;
    const size_t R = T > S ? T : S;
    wf_layer_acts scratch;
    const size_t main_layer = wf_layer_carve(&scratch, NULL, dd, B * T, T, S, B * S, xa, drop);
    const size_t enc_layer = wf_layer_carve(&scratch, NULL, dd, B * S, S, 0, 0, 0, drop);
    layer_elems[WF_STACK_MAIN] = main_layer;
    layer_elems[WF_STACK_ENC] = enc_layer;
    size_t off = 0;
#define X(name, n)                              \
    a->name = mem && (n) != 0 ? mem + off : NULL;    \
    off += PAD4((size_t)(n));
    WF_ACTS(X)
#undef X
    return off;
}

/* The largest memory this build can address: 4 GB in wasm32, effectively unlimited natively.
 * WF_MEMORY_LIMIT (bytes) lowers it, so the fuzzing build refuses what a hostile file
 * describes beyond it the way wasm refuses beyond 4 GB. */
static double address_limit(void) {
#ifdef WF_MEMORY_LIMIT
    return (double)(WF_MEMORY_LIMIT);
#else
    return sizeof(void *) == 4 ? 4294967296.0 : 1e18;
#endif
}

/* Fixed tables: the sinusoids [context, C] or the rotary cos and sin [2, context, HS/2]. */
static double tables_elems(const wf_dims *d) {
    return d->rope ? (double)d->T * d->HS : (!d->pos ? (double)d->T * d->C : 0);
}

wf_status wf_memory_estimate(const wf_config *cfg, int32_t B, int32_t T, wf_memory *out) {
    wf_status s = wf_config_check(cfg, NULL, 0);
    if (s != WF_OK) return s;
    if (!out || B < 0 || T < 0 || T > cfg->context) return WF_ERR_ARG;
    wf_dims d;
    wf_dims_of(cfg, &d);
    double bytes = sizeof(wf_real);
    double P = params_elems_d(&d, 1);
    out->params = P * bytes;
    out->grads = P * bytes;
    out->optimizer = 2 * P * bytes;
    out->activations = (B > 0 && T > 0) ? acts_elems_d(&d, B, T, d.xa ? T : 0) * bytes : 0;
    out->inference = wf_gen_elems_d(&d) * bytes + tables_elems(&d) * bytes;
    out->total = out->params + out->grads + out->optimizer + out->activations + out->inference;
    out->count = params_elems_d(&d, 0);
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
    wf_free(m->rope_cos);
    wf_free(m->act_mem);
    wf_free(m->gen.mem);
}

void wf_model_adopt(wf_model *m, wf_model *next) {
    next->pool = m->pool; /* the thread setting belongs to the handle */
    release(m);
    *m = *next;
    memset(next, 0, sizeof *next);
    m->err[0] = 0;
}

void wf_model_free(wf_model *m) {
    if (!m) return;
    release(m);
    wf_pool_free(m->pool);
    free(m);
}

const char *wf_model_error(const wf_model *m) { return m ? m->err : "model is NULL"; }

static void init_weights(wf_model *m) {
    wf_rng r;
    wf_rng_seed(&r, m->cfg.seed);
    /* GPT-2: residual projections shrink with the depth of their stack */
    const double std = 0.02, resid_std = 0.02 / sqrt(2.0 * m->d.L), enc_resid_std = m->d.E ? 0.02 / sqrt(2.0 * m->d.E) : 0;
    for (int i = 0; i < WF_N_PARAMS; i++) {
        const wf_tensor_info *t = &m->tensors[i];
        wf_real *w = m->arena + t->offset;
        const int encoder = i >= WF_P_enc_ln1w && i <= WF_P_enc_fcprojb; /* the encoder stack's block tensors */
        int init = 0;
#define X(name, ndim, d0, d1, d2, decay, kind) if (i == WF_P_##name) init = kind;
        WF_PARAMS(X)
#undef X
        for (int32_t j = 0; j < t->size; j++) {
            switch (init) {
            case WF_INIT_ZERO: w[j] = 0; break;
            case WF_INIT_ONE: w[j] = 1; break;
            case WF_INIT_NORMAL: w[j] = (wf_real)(std * wf_rng_normal(&r)); break;
            default: w[j] = (wf_real)((encoder ? enc_resid_std : resid_std) * wf_rng_normal(&r)); break;
            }
        }
    }
}

/* Fills the tensor table and points p and g into the arena. */
static size_t layout_params(wf_model *m) {
    const wf_dims *dd = &m->d;
    const int V = dd->V, C = dd->C, L = dd->L, E = dd->E, F = dd->F, T = dd->T, fc = dd->fc, xa = dd->xa;
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

/* The batch sampler's train and validation streams, both derived from one seed. */
static void seed_sampler(wf_model *m, uint32_t seed) {
    wf_rng_seed(&m->rng_split[0], (uint64_t)seed * 2 + 1);
    wf_rng_seed(&m->rng_split[1], (uint64_t)seed * 2 + 2);
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
    if (params_elems_d(&d, 1) > 2147483647.0)
        return WF_ERR(m, WF_ERR_CONFIG, "the model would have %.0f parameters; at most 2^31 - 1 are supported",
                      params_elems_d(&d, 1));
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
    size_t gen_elems = wf_gen_carve(NULL, &d, NULL);
    next.gen.mem = wf_alloc(gen_elems * sizeof(wf_real));
    size_t table = (size_t)tables_elems(&d);
    wf_real *tables = table ? wf_alloc(table * sizeof(wf_real)) : NULL;
    if (d.rope) {
        next.rope_cos = tables;
        next.rope_sin = tables ? tables + table / 2 : NULL;
    } else {
        next.pos_table = tables;
    }
    if (!next.arena || !next.gen.mem || (table && !tables)) {
        release(&next);
        return WF_ERR(m, WF_ERR_NOMEM, "could not allocate %.1f MB for the model", mem.total / 1e6);
    }
    point_params(&next, stride);
    init_weights(&next);
    if (next.pos_table) wf_sinusoid_table(next.pos_table, d.T, d.C);
    if (next.rope_cos) wf_rope_table(next.rope_cos, next.rope_sin, d.T, d.HS);
    wf_gen_carve(&next.gen, &d, next.gen.mem);
    next.gen.bytes = gen_elems * sizeof(wf_real);
    wf_optim_default(&next.opt);
    seed_sampler(&next, cfg->seed);
    next.ready = 1;
    wf_model_adopt(m, &next);
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
    out->inference = (double)m->gen.bytes + tables_elems(&m->d) * bytes;
    out->total = out->params + out->grads + out->optimizer + out->activations + out->inference;
    out->count = (double)m->n_params;
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
    wf_status s = wf_optim_check(o, m->err, sizeof m->err);
    if (s != WF_OK) return s;
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

/* Makes room for (B, T, S) and carves the activation pointers for it. Allocates only when
 * the shape needs more than any before; on failure nothing changes. */
static wf_status plan(wf_model *m, int B, int T, int S) {
    double need_d = acts_elems_d(&m->d, B, T, S);
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
    acts_carve(&m->a, m->act_mem, &m->d, (size_t)B, (size_t)T, (size_t)S, m->layer_elems);
    m->B = B;
    m->T = T;
    m->S = S;
    return WF_OK;
}

/* Layer l of a stack's slice of the planned activations. */
static wf_layer_acts stack_layer(const wf_model *m, int stack, int l) {
    const size_t B = m->B, T = m->T, S = m->S;
    wf_layer_acts a;
    if (stack == WF_STACK_MAIN)
        wf_layer_carve(&a, m->a.layers + l * m->layer_elems[stack], &m->d, B * T, T, S, B * S, m->d.xa, m->d.drop);
    else
        wf_layer_carve(&a, m->a.enc_layers + l * m->layer_elems[stack], &m->d, B * S, S, 0, 0, 0, m->d.drop);
    a.branch = m->a.branch;
    return a;
}

/* A stacked tensor's slice for layer l, in the block at base (params or grads). */
static wf_real *slice(const wf_model *m, int i, wf_real *base, int l) {
    const wf_tensor_info *t = &m->tensors[i];
    if (!t->size) return NULL;
    return base + t->offset + (size_t)l * (size_t)(t->size / t->shape[0]);
}

void wf_layer_weights(const wf_model *m, int stack, int l, int grads, wf_layer_w *w) {
    wf_real *base = m->arena + (grads ? arena_stride(m) : 0);
#define MAIN_X(name, ...) w->name = slice(m, WF_P_##name, base, l);
#define ENC_X(name, ...) w->name = slice(m, WF_P_enc_##name, base, l);
#define NONE_X(name, ...) w->name = NULL;
    if (stack == WF_STACK_MAIN) {
        WF_BLOCK_PARAMS(MAIN_X, , L, WF_CROSS_PARAMS(MAIN_X))
    } else {
        WF_BLOCK_PARAMS(ENC_X, , E, WF_CROSS_PARAMS(NONE_X))
    }
#undef MAIN_X
#undef ENC_X
#undef NONE_X
}

const wf_real *wf_position_table(const wf_model *m, int stack) {
    if (m->d.pos) return stack == WF_STACK_MAIN ? m->p.wpe : m->p.enc_wpe;
    return m->pos_table; /* NULL with rotary positions */
}

/* ---- the block's pieces, dispatched on the config ---- */

void wf_norm_forward(const wf_model *m, wf_real *out, wf_real *mean, wf_real *rstd, const wf_real *inp,
                     const wf_real *w, const wf_real *b, int N) {
    const wf_real eps = (wf_real)m->cfg.norm_eps;
    if (m->cfg.norm == WF_NORM_RMSNORM)
        wf_rmsnorm_forward(out, rstd, inp, w, N, m->d.C, eps);
    else
        wf_layernorm_forward(out, mean, rstd, inp, w, b, N, m->d.C, eps);
}

static void norm_backward(const wf_model *m, wf_real *dinp, wf_real *dw, wf_real *db, const wf_real *dout,
                          const wf_real *inp, const wf_real *mean, const wf_real *rstd, const wf_real *w, int N) {
    if (m->cfg.norm == WF_NORM_RMSNORM)
        wf_rmsnorm_backward(dinp, dw, dout, inp, rstd, w, N, m->d.C);
    else
        wf_layernorm_backward(dinp, dw, db, dout, inp, mean, rstd, w, N, m->d.C);
}

static void act_forward(const wf_model *m, wf_real *out, const wf_real *inp, int N) {
    const int F = m->d.F;
    switch (m->cfg.activation) {
    case WF_ACT_RELU: wf_relu_forward(out, inp, N * F); break;
    case WF_ACT_SWIGLU: wf_swiglu_forward(out, inp, N, F); break;
    default: wf_gelu_forward(out, inp, N * F, m->pool); break;
    }
}

static void act_backward(const wf_model *m, wf_real *dinp, const wf_real *dout, const wf_real *inp, int N) {
    const int F = m->d.F;
    switch (m->cfg.activation) {
    case WF_ACT_RELU: wf_relu_backward(dinp, dout, inp, N * F); break;
    case WF_ACT_SWIGLU: wf_swiglu_backward(dinp, dout, inp, N, F); break;
    default: wf_gelu_backward(dinp, dout, inp, N * F, m->pool); break;
    }
}

/* In training, x = dropout(x) with a fresh mask from the step's stream. */
static void drop_forward(const wf_model *m, wf_real *mask, wf_real *x, int n, wf_rng *rng) {
    if (!rng || !mask) return;
    wf_dropout_mask(mask, n, (wf_real)m->cfg.dropout, rng);
    wf_dropout_forward(x, x, mask, n);
}

/* ---- the layer forward: training and generation ---- */

/* Wiring of one layer, Pre-LN (seed 000, eq. 5-9) and Post-LN (seeds 002, 003):
 *   pre:  h1 = x + A(ln1(x));    hc = h1 + X(lnc(h1));    out = hc + FF(ln2(hc))
 *   post: h1 = ln1(x + A(x));    hc = lnc(h1 + X(h1));    out = ln2(hc + FF(hc))
 * A: causal or bidirectional self-attention, X: cross-attention over the encoder's keys and
 * values (encoder-decoder decoders only, else hc = h1), each sublayer's output dropped out
 * in training before its residual add. Pre-LN keeps the sums in res1, resc, res2 and the
 * sublayer inputs in ln1, lnc, ln2; Post-LN the other way round. */
void wf_layer_forward(const wf_model *m, const wf_layer_w *w, const wf_layer_acts *a, const wf_real *x,
                      const wf_layer_io *io) {
    const int C = m->d.C, NH = m->d.NH, HS = m->d.HS, F = m->d.F, fc = m->d.fc, post = m->d.post;
    const int N = io->B * io->T;

    /* self-attention */
    const wf_real *in = x;
    if (!post) {
        wf_norm_forward(m, a->ln1, a->ln1_mean, a->ln1_rstd, x, w->ln1w, w->ln1b, N);
        in = a->ln1;
    }
    wf_linear_forward(a->qkv, in, w->qkvw, w->qkvb, N, C, 3 * C, m->pool);
    if (m->d.rope) {
        wf_rope_forward(a->qkv, m->rope_cos, m->rope_sin, io->B, io->T, NH, HS, 3 * C, io->pos);
        wf_rope_forward(a->qkv + C, m->rope_cos, m->rope_sin, io->B, io->T, NH, HS, 3 * C, io->pos);
    }
    wf_attn_dims ad = {io->B, NH, HS, io->T, io->T, 3 * C, 3 * C, io->causal, io->key_len, 0};
    const wf_real *q = a->qkv, *k = a->qkv + C, *v = a->qkv + 2 * C;
    if (io->kcache) {
        /* generation (B = 1): append this step's keys and values, attend over the cache */
        for (int t = 0; t < io->T; t++) {
            memcpy(io->kcache + (size_t)(io->pos + t) * C, a->qkv + (size_t)t * 3 * C + C, C * sizeof(wf_real));
            memcpy(io->vcache + (size_t)(io->pos + t) * C, a->qkv + (size_t)t * 3 * C + 2 * C, C * sizeof(wf_real));
        }
        k = io->kcache;
        v = io->vcache;
        ad.Tk = io->pos + io->T;
        ad.kv_stride = C;
        ad.by_rows = 1;
    }
    wf_attention_forward(a->atty, a->att, q, k, v, &ad, m->pool);
    wf_linear_forward(a->branch, a->atty, w->attprojw, w->attprojb, N, C, C, m->pool);
    drop_forward(m, a->mask1, a->branch, N * C, io->drop_rng);
    wf_residual_forward(a->res1, x, a->branch, N * C);
    const wf_real *h = a->res1;
    if (post) {
        wf_norm_forward(m, a->ln1, a->ln1_mean, a->ln1_rstd, a->res1, w->ln1w, w->ln1b, N);
        h = a->ln1;
    }

    /* cross-attention: queries from the decoder, keys and values from the encoder */
    if (io->ckv) {
        in = h;
        if (!post) {
            wf_norm_forward(m, a->lnc, a->lnc_mean, a->lnc_rstd, h, w->lncw, w->lncb, N);
            in = a->lnc;
        }
        wf_linear_forward(a->cq, in, w->cqw, w->cqb, N, C, C, m->pool);
        wf_attn_dims cd = {io->B, NH, HS, io->T, io->S, C, 2 * C, 0, io->src_len, 0};
        wf_attention_forward(a->catty, a->catt, a->cq, io->ckv, io->ckv + C, &cd, m->pool);
        wf_linear_forward(a->branch, a->catty, w->cprojw, w->cprojb, N, C, C, m->pool);
        drop_forward(m, a->maskc, a->branch, N * C, io->drop_rng);
        wf_residual_forward(a->resc, h, a->branch, N * C);
        h = a->resc;
        if (post) {
            wf_norm_forward(m, a->lnc, a->lnc_mean, a->lnc_rstd, a->resc, w->lncw, w->lncb, N);
            h = a->lnc;
        }
    }

    /* feed-forward */
    in = h;
    if (!post) {
        wf_norm_forward(m, a->ln2, a->ln2_mean, a->ln2_rstd, h, w->ln2w, w->ln2b, N);
        in = a->ln2;
    }
    wf_linear_forward(a->fch, in, w->fcw, w->fcb, N, C, fc * F, m->pool);
    act_forward(m, a->fch_act, a->fch, N);
    wf_linear_forward(a->branch, a->fch_act, w->fcprojw, w->fcprojb, N, F, C, m->pool);
    drop_forward(m, a->mask2, a->branch, N * C, io->drop_rng);
    wf_residual_forward(a->res2, h, a->branch, N * C);
    if (post) wf_norm_forward(m, a->ln2, a->ln2_mean, a->ln2_rstd, a->res2, w->ln2w, w->ln2b, N);
}

/* The output head's weights: the token embedding when tied. */
static const wf_real *head_weights(const wf_model *m) { return m->d.head ? m->p.lm_head : m->p.wte; }

void wf_head_forward(const wf_model *m, wf_real *logits, wf_real *lnf, wf_real *lnf_mean,
                     wf_real *lnf_rstd, const wf_real *x, int N) {
    wf_norm_forward(m, lnf, lnf_mean, lnf_rstd, x, m->p.lnfw, m->p.lnfb, N);
    wf_linear_forward(logits, lnf, head_weights(m), NULL, N, m->d.C, m->d.V, m->pool);
}

/* ---- the stacks ---- */

/* How a stack runs on the current batch. */
static wf_layer_io stack_io(const wf_model *m, const wf_batch *b, int stack, const wf_real *ckv, wf_rng *rng) {
    wf_layer_io io;
    memset(&io, 0, sizeof io);
    io.B = m->B;
    if (stack == WF_STACK_ENC) {
        io.T = m->S;
        io.key_len = b->src_lengths;
    } else {
        io.T = m->T;
        io.causal = m->cfg.arch != WF_ARCH_ENCODER;
        io.key_len = b->lengths;
        io.ckv = ckv;
        io.S = m->S;
        io.src_len = b->src_lengths;
    }
    io.drop_rng = rng;
    return io;
}

static void embed_forward(wf_model *m, int stack, wf_real *out, wf_real *mask, const int32_t *ids,
                          const wf_real *vecs, int B, int T, wf_rng *rng) {
    const wf_real *pos = wf_position_table(m, stack);
    if (vecs)
        wf_embed_vec_forward(out, vecs, pos, B, T, m->d.C);
    else
        wf_embed_forward(out, ids, m->p.wte, pos, B, T, m->d.C);
    drop_forward(m, mask, out, B * T * m->d.C, rng);
}

/* The layer below the head's last output (the final norm's input). */
static const wf_real *stack_out(const wf_model *m, int stack) {
    int n = stack == WF_STACK_MAIN ? m->d.L : m->d.E;
    return stack_layer(m, stack, n - 1).out;
}

/* Encoder (encoder-decoders), then the stack under the head, then the final norm and,
 * unless the objective is a mean squared error on the states, the head. */
static void forward(wf_model *m, const wf_batch *b, int train) {
    wf_acts *a = &m->a;
    const int B = m->B, T = m->T, S = m->S, C = m->d.C;
    wf_rng rng, *drop_rng = NULL;
    if (train && m->d.drop) {
        /* a stream per (seed, step): the masks of a step are reproducible without saved state */
        wf_rng_seed(&rng, ((uint64_t)m->cfg.seed << 32 | (uint32_t)m->step) ^ 0x64726f706f7574ULL);
        drop_rng = &rng;
    }
    if (m->d.xa) {
        embed_forward(m, WF_STACK_ENC, a->enc_encoded, a->enc_emb_mask, b->src, NULL, B, S, drop_rng);
        const wf_real *x = a->enc_encoded;
        for (int l = 0; l < m->d.E; l++) {
            wf_layer_acts la = stack_layer(m, WF_STACK_ENC, l);
            wf_layer_w w;
            wf_layer_weights(m, WF_STACK_ENC, l, 0, &w);
            wf_layer_io io = stack_io(m, b, WF_STACK_ENC, NULL, drop_rng);
            wf_layer_forward(m, &w, &la, x, &io);
            x = la.out;
        }
        wf_norm_forward(m, a->enc_lnf, a->enc_lnf_mean, a->enc_lnf_rstd, x, m->p.enc_lnfw, m->p.enc_lnfb, B * S);
    }
    embed_forward(m, WF_STACK_MAIN, a->encoded, a->emb_mask, b->inputs, b->input_vecs, B, T, drop_rng);
    const wf_real *x = a->encoded;
    for (int l = 0; l < m->d.L; l++) {
        wf_layer_acts la = stack_layer(m, WF_STACK_MAIN, l);
        wf_layer_w w;
        wf_layer_weights(m, WF_STACK_MAIN, l, 0, &w);
        /* this layer's cross-attention keys and values of the encoder's output */
        if (m->d.xa) wf_linear_forward(la.ckv, a->enc_lnf, w.ckvw, w.ckvb, B * S, C, 2 * C, m->pool);
        wf_layer_io io = stack_io(m, b, WF_STACK_MAIN, la.ckv, drop_rng);
        wf_layer_forward(m, &w, &la, x, &io);
        x = la.out;
    }
    wf_norm_forward(m, a->lnf, a->lnf_mean, a->lnf_rstd, x, m->p.lnfw, m->p.lnfb, B * T);
    m->have_logits = b->target_vecs == NULL;
    if (m->have_logits) wf_linear_forward(a->logits, a->lnf, head_weights(m), NULL, B * T, C, m->d.V, m->pool);
}

/* ---- backward ---- */

static void zero(wf_real *x, size_t n) { memset(x, 0, n * sizeof(wf_real)); }

/* The gradient of a sublayer's output before dropout: dres * mask, or dres itself. */
static const wf_real *drop_backward(const wf_model *m, const wf_real *mask, const wf_real *dres, int n) {
    if (!mask) return dres;
    zero(m->a.branch, (size_t)n);
    wf_dropout_backward(m->a.branch, dres, mask, n);
    return m->a.branch;
}

/* Post-LN: dres holds dL/d(norm output); replaces it with dL/d(norm input). */
static void post_norm_backward(wf_model *m, const wf_real *inp, const wf_real *mean, const wf_real *rstd,
                               const wf_real *w, wf_real *dw, wf_real *db, int N) {
    wf_acts *a = &m->a;
    const size_t n = (size_t)N * m->d.C;
    zero(a->dln, n);
    norm_backward(m, a->dln, dw, db, a->dres, inp, mean, rstd, w, N);
    memcpy(a->dres, a->dln, n * sizeof(wf_real));
}

/* A sublayer's input side: from dL/d(sublayer input) in `din` to dres. Pre-LN: through the
 * norm (whose input is the stream `stream`), accumulated onto dres, the residual path.
 * Post-LN: the sublayer read the stream itself, so it is added directly. */
static void sublayer_input_backward(wf_model *m, const wf_real *din, const wf_real *stream, const wf_real *mean,
                                    const wf_real *rstd, const wf_real *w, wf_real *dw, wf_real *db, int N) {
    if (m->d.post)
        wf_residual_backward(m->a.dres, NULL, din, N * m->d.C);
    else
        norm_backward(m, m->a.dres, dw, db, din, stream, mean, rstd, w, N);
}

/* dres holds dL/d(out) on entry and dL/dx on return: each residual add passes its gradient
 * through unchanged, so the branch gradients accumulate into dres in place. enc is the
 * encoder output the cross-attention keys and values were computed from. */
static void layer_backward(wf_model *m, const wf_layer_w *w, const wf_layer_w *dw, const wf_layer_acts *la,
                           const wf_real *x, const wf_layer_io *io, const wf_real *enc) {
    wf_acts *a = &m->a;
    const int C = m->d.C, NH = m->d.NH, HS = m->d.HS, F = m->d.F, fc = m->d.fc, post = m->d.post;
    const int N = io->B * io->T;
    /* the streams entering each sublayer, as in the forward */
    const wf_real *h1 = post ? la->ln1 : la->res1;
    const wf_real *hc = io->ckv ? (post ? la->lnc : la->resc) : h1;

    /* feed-forward: out = hc + FF(ln2(hc))  or  ln2(hc + FF(hc)) */
    if (post) post_norm_backward(m, la->res2, la->ln2_mean, la->ln2_rstd, w->ln2w, dw->ln2w, dw->ln2b, N);
    const wf_real *dbranch = drop_backward(m, la->mask2, a->dres, N * C);
    zero(a->dfch_act, (size_t)N * F);
    wf_linear_backward(a->dfch_act, dw->fcprojw, dw->fcprojb, dbranch, la->fch_act, w->fcprojw, N, F, C, m->pool);
    zero(a->dfch, (size_t)N * fc * F);
    act_backward(m, a->dfch, a->dfch_act, la->fch, N);
    zero(a->dln, (size_t)N * C);
    wf_linear_backward(a->dln, dw->fcw, dw->fcb, a->dfch, post ? hc : la->ln2, w->fcw, N, C, fc * F, m->pool);
    sublayer_input_backward(m, a->dln, hc, la->ln2_mean, la->ln2_rstd, w->ln2w, dw->ln2w, dw->ln2b, N);

    /* cross-attention: hc = h1 + X(lnc(h1))  or  lnc(h1 + X(h1)) */
    if (io->ckv) {
        if (post) post_norm_backward(m, la->resc, la->lnc_mean, la->lnc_rstd, w->lncw, dw->lncw, dw->lncb, N);
        dbranch = drop_backward(m, la->maskc, a->dres, N * C);
        zero(a->datty, (size_t)N * C);
        wf_linear_backward(a->datty, dw->cprojw, dw->cprojb, dbranch, la->catty, w->cprojw, N, C, C, m->pool);
        const size_t BS = (size_t)io->B * io->S;
        wf_real *dcq = a->dqkv; /* [N, C] */
        zero(dcq, (size_t)N * C);
        zero(a->dckv, BS * 2 * C);
        wf_attn_dims cd = {io->B, NH, HS, io->T, io->S, C, 2 * C, 0, io->src_len, 0};
        wf_attention_backward(dcq, a->dckv, a->dckv + C, a->datty, la->catty, la->catt, la->cq, io->ckv,
                              io->ckv + C, &cd, m->pool);
        /* ckv = enc ckvw^T + ckvb: the encoder's gradient collects over the decoder layers */
        wf_linear_backward(a->denc, dw->ckvw, dw->ckvb, a->dckv, enc, w->ckvw, (int)BS, C, 2 * C, m->pool);
        zero(a->dln, (size_t)N * C);
        wf_linear_backward(a->dln, dw->cqw, dw->cqb, dcq, post ? h1 : la->lnc, w->cqw, N, C, C, m->pool);
        sublayer_input_backward(m, a->dln, h1, la->lnc_mean, la->lnc_rstd, w->lncw, dw->lncw, dw->lncb, N);
    }

    /* self-attention: h1 = x + A(ln1(x))  or  ln1(x + A(x)) */
    if (post) post_norm_backward(m, la->res1, la->ln1_mean, la->ln1_rstd, w->ln1w, dw->ln1w, dw->ln1b, N);
    dbranch = drop_backward(m, la->mask1, a->dres, N * C);
    zero(a->datty, (size_t)N * C);
    wf_linear_backward(a->datty, dw->attprojw, dw->attprojb, dbranch, la->atty, w->attprojw, N, C, C, m->pool);
    zero(a->dqkv, (size_t)N * 3 * C);
    wf_attn_dims ad = {io->B, NH, HS, io->T, io->T, 3 * C, 3 * C, io->causal, io->key_len, 0};
    wf_attention_backward(a->dqkv, a->dqkv + C, a->dqkv + 2 * C, a->datty, la->atty, la->att, la->qkv,
                          la->qkv + C, la->qkv + 2 * C, &ad, m->pool);
    if (m->d.rope) {
        /* the saved q and k are rotated; their gradients turn back to the projection's frame */
        wf_rope_backward(a->dqkv, m->rope_cos, m->rope_sin, io->B, io->T, NH, HS, 3 * C, 0);
        wf_rope_backward(a->dqkv + C, m->rope_cos, m->rope_sin, io->B, io->T, NH, HS, 3 * C, 0);
    }
    zero(a->dln, (size_t)N * C);
    wf_linear_backward(a->dln, dw->qkvw, dw->qkvb, a->dqkv, post ? x : la->ln1, w->qkvw, N, C, 3 * C, m->pool);
    sublayer_input_backward(m, a->dln, x, la->ln1_mean, la->ln1_rstd, w->ln1w, dw->ln1w, dw->ln1b, N);
}

static void embed_backward(wf_model *m, int stack, const wf_real *mask, const int32_t *ids, int vecs, int B, int T) {
    const int C = m->d.C;
    const wf_real *d = drop_backward(m, mask, m->a.dres, B * T * C);
    wf_real *dpos = !m->d.pos ? NULL : stack == WF_STACK_MAIN ? m->g.wpe : m->g.enc_wpe;
    if (vecs)
        wf_embed_vec_backward(dpos, d, B, T, C);
    else
        wf_embed_backward(m->g.wte, dpos, d, ids, B, T, C);
}

/* Every gradient of the batch's loss; count is the number of terms the loss averages. */
static void backward(wf_model *m, const wf_batch *b, double count) {
    wf_acts *a = &m->a;
    const int B = m->B, T = m->T, S = m->S, N = B * T, C = m->d.C, V = m->d.V;
    const wf_real dloss = (wf_real)(1.0 / count);
    zero(a->dln, (size_t)N * C);
    if (b->target_vecs) {
        /* loss = mean squared error of the final states */
        wf_mse_backward(a->dln, dloss, a->lnf, b->target_vecs, b->lengths, B, T, C);
    } else {
        /* loss = mean cross-entropy; probs become dlogits in place */
        wf_crossentropy_backward(a->probs, dloss, a->probs, (const int32_t *)a->targets, N, V);
        wf_real *dhead = m->d.head ? m->g.lm_head : m->g.wte;
        wf_linear_backward(a->dln, dhead, NULL, a->probs, a->lnf, head_weights(m), N, C, V, m->pool);
    }
    zero(a->dres, (size_t)N * C);
    norm_backward(m, a->dres, m->g.lnfw, m->g.lnfb, a->dln, stack_out(m, WF_STACK_MAIN), a->lnf_mean, a->lnf_rstd,
                  m->p.lnfw, N);
    if (m->d.xa) zero(a->denc, (size_t)B * S * C);
    for (int l = m->d.L - 1; l >= 0; l--) {
        wf_layer_acts la = stack_layer(m, WF_STACK_MAIN, l);
        wf_layer_w w, dw;
        wf_layer_weights(m, WF_STACK_MAIN, l, 0, &w);
        wf_layer_weights(m, WF_STACK_MAIN, l, 1, &dw);
        wf_layer_io io = stack_io(m, b, WF_STACK_MAIN, la.ckv, NULL);
        const wf_real *x = l == 0 ? a->encoded : stack_layer(m, WF_STACK_MAIN, l - 1).out;
        layer_backward(m, &w, &dw, &la, x, &io, a->enc_lnf);
    }
    embed_backward(m, WF_STACK_MAIN, a->emb_mask, b->inputs, b->input_vecs != NULL, B, T);
    if (!m->d.xa) return;

    /* the encoder, from the gradient its output collected in every decoder layer */
    zero(a->dres, (size_t)B * S * C);
    norm_backward(m, a->dres, m->g.enc_lnfw, m->g.enc_lnfb, a->denc, stack_out(m, WF_STACK_ENC), a->enc_lnf_mean,
                  a->enc_lnf_rstd, m->p.enc_lnfw, B * S);
    for (int l = m->d.E - 1; l >= 0; l--) {
        wf_layer_acts la = stack_layer(m, WF_STACK_ENC, l);
        wf_layer_w w, dw;
        wf_layer_weights(m, WF_STACK_ENC, l, 0, &w);
        wf_layer_weights(m, WF_STACK_ENC, l, 1, &dw);
        wf_layer_io io = stack_io(m, b, WF_STACK_ENC, NULL, NULL);
        const wf_real *x = l == 0 ? a->enc_encoded : stack_layer(m, WF_STACK_ENC, l - 1).out;
        layer_backward(m, &w, &dw, &la, x, &io, NULL);
    }
    embed_backward(m, WF_STACK_ENC, a->enc_emb_mask, b->src, 0, B, S);
}

/* ---- public entry points ---- */

static const char *arch_name(int arch) {
    return arch == WF_ARCH_DECODER ? "decoder" : arch == WF_ARCH_ENCODER ? "encoder" : "encoder-decoder";
}

static wf_status check_ids(wf_model *m, const int32_t *ids, size_t n, const char *what) {
    const int32_t V = m->cfg.vocab_size;
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= V)
            return WF_ERR(m, WF_ERR_TOKEN, "%s token %d at position %zu is outside [0, %d)", what, ids[i], i, V);
    return WF_OK;
}

static wf_status check_lengths(wf_model *m, const int32_t *len, int B, int T, const char *what) {
    if (!len) return WF_OK;
    for (int b = 0; b < B; b++)
        if (len[b] < 1 || len[b] > T)
            return WF_ERR(m, WF_ERR_ARG, "%s[%d] = %d is outside [1, %d]", what, b, len[b], T);
    return WF_OK;
}

static wf_status check_batch(wf_model *m, const wf_batch *b, int need_targets) {
    NEED_READY(m);
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
        if (!b->src) return WF_ERR(m, WF_ERR_ARG, "an encoder-decoder needs a source: src is NULL (use wf_batch_*)");
        if (S < 1 || S > m->cfg.context)
            return WF_ERR(m, WF_ERR_ARG, "source length %d is outside [1, context = %d]", S, m->cfg.context);
        if ((double)B * S > 2147483647.0 / 4) return WF_ERR(m, WF_ERR_ARG, "source batch %d x %d is too large", B, S);
        if ((double)B * S * wide > 2147483647.0)
            return WF_ERR(m, WF_ERR_ARG, "source batch %d x %d is too large: %d rows of up to %.0f values exceed 2^31 - 1",
                          B, S, B * S, wide);
        if ((s = check_ids(m, b->src, (size_t)B * S, "source")) != WF_OK) return s;
        if ((s = check_lengths(m, b->src_lengths, B, S, "src_lengths")) != WF_OK) return s;
    } else if (b->src || b->src_lengths || S != 0) {
        return WF_ERR(m, WF_ERR_ARG, "src, src_lengths and S are for encoder-decoders; this model is a %s", arch_name(arch));
    }
    if (b->inputs && (s = check_ids(m, b->inputs, (size_t)B * T, "input")) != WF_OK) return s;
    if ((s = check_lengths(m, b->lengths, B, T, "lengths")) != WF_OK) return s;
    if (b->targets) {
        size_t counted = 0;
        for (int32_t i = 0; i < B; i++)
            for (int32_t t = 0; t < T; t++) {
                int32_t y = b->targets[(size_t)i * T + t];
                if (y >= m->cfg.vocab_size)
                    return WF_ERR(m, WF_ERR_TOKEN, "target token %d at position %zu is outside [0, %d)", y,
                                  (size_t)i * T + t, m->cfg.vocab_size);
                counted += y >= 0 && (!b->lengths || t < b->lengths[i]);
            }
        if (counted == 0)
            return WF_ERR(m, WF_ERR_ARG, "every target is negative (ignored) or padding: nothing to learn from");
    }
    return WF_OK;
}

/* Forward, loss, and (with grads) backward; the shared front of every entry point. */
static wf_status run(wf_model *m, const wf_batch *b, int grads, wf_real *loss_out) {
    wf_status s = check_batch(m, b, grads);
    if (s != WF_OK) return s;
    if ((s = plan(m, b->B, b->T, m->d.xa ? b->S : 0)) != WF_OK) return s;
    forward(m, b, grads);
    if (!b->targets && !b->target_vecs) return WF_OK;
    const int B = m->B, T = m->T;
    double total, count;
    if (b->target_vecs) {
        total = wf_mse_forward(&count, m->a.lnf, b->target_vecs, b->lengths, B, T, m->d.C);
    } else {
        /* padding positions are ignored like negative targets */
        int32_t *tg = (int32_t *)m->a.targets; /* int32 ids in wf_real-sized slots */
        for (int i = 0; i < B; i++)
            for (int t = 0; t < T; t++)
                tg[i * T + t] = b->lengths && t >= b->lengths[i] ? -1 : b->targets[i * T + t];
        int n = 0;
        total = wf_crossentropy_forward(m->a.losses, &n, m->a.probs, m->a.logits, tg, B * T, m->d.V);
        count = n;
    }
    double loss = total / count;
    if (loss_out) *loss_out = (wf_real)loss;
    if (!wf_finite(loss))
        return WF_ERR(m, WF_ERR_NUMERIC, "the loss is %s; %s", loss != loss ? "NaN" : "infinite",
                      grads ? "the step was rejected and weights and optimizer state are unchanged (try a lower learning rate)"
                            : "are the weights finite?");
    if (grads) {
        zero(m->arena + arena_stride(m), arena_stride(m));
        backward(m, b, count);
    }
    return WF_OK;
}

static wf_batch ids_batch(const int32_t *inputs, const int32_t *targets, int32_t B, int32_t T) {
    wf_batch b;
    memset(&b, 0, sizeof b);
    b.inputs = inputs;
    b.targets = targets;
    b.B = B;
    b.T = T;
    return b;
}

wf_status wf_batch_forward(wf_model *m, const wf_batch *b, wf_real *loss) {
    wf_status s = run(m, b, 0, loss);
    if (s == WF_OK) m->err[0] = 0;
    return s;
}

wf_status wf_batch_grads(wf_model *m, const wf_batch *b, wf_real *loss) {
    wf_status s = run(m, b, 1, loss);
    if (s == WF_OK) m->err[0] = 0;
    return s;
}

wf_status wf_forward(wf_model *m, const int32_t *inputs, const int32_t *targets, int32_t B, int32_t T,
                     wf_real *loss) {
    wf_batch b = ids_batch(inputs, targets, B, T);
    return wf_batch_forward(m, &b, loss);
}

const wf_real *wf_logits(const wf_model *m) { return m && m->ready && m->B > 0 && m->have_logits ? m->a.logits : NULL; }

const wf_real *wf_hidden(const wf_model *m) { return m && m->ready && m->B > 0 ? m->a.lnf : NULL; }

const wf_real *wf_cross_attention(const wf_model *m, int32_t layer) {
    if (!m || !m->ready || m->B == 0 || !m->d.xa || layer < 0 || layer >= m->d.L) return NULL;
    return stack_layer(m, WF_STACK_MAIN, layer).catt;
}

const wf_real *wf_self_attention(const wf_model *m, int32_t layer) {
    if (!m || !m->ready || m->B == 0 || layer < 0 || layer >= m->d.L) return NULL;
    return stack_layer(m, WF_STACK_MAIN, layer).att;
}

wf_status wf_batch_step(wf_model *m, const wf_batch *b, wf_step_info *info) {
    wf_real loss = 0;
    wf_status s = run(m, b, 1, &loss);
    if (s != WF_OK) return s;
    const size_t stride = arena_stride(m);
    wf_real *grads = m->arena + stride;
    double norm = sqrt(wf_sum_squares(grads, stride));
    if (!wf_finite(norm))
        return WF_ERR(m, WF_ERR_NUMERIC, "the gradient norm is not finite; the step was rejected and weights and optimizer state are unchanged "
                      "(try a lower learning rate or gradient clipping)");
    /* torch.nn.utils.clip_grad_norm_: scale by max_norm / (norm + 1e-6) when that is < 1 */
    wf_real scale = 1;
    if (m->opt.grad_clip > 0) {
        double coef = m->opt.grad_clip / (norm + 1e-6);
        if (coef < 1) scale = (wf_real)coef;
    }
    const float lr = wf_lr_at(&m->opt, m->step);
    const int32_t t = m->step + 1;
    /* a finite gradient can still overflow the update (an absurd learning rate): check every
     * element first, so a refused step leaves weights and moments as they were */
    for (int i = 0; i < WF_N_PARAMS; i++) {
        const wf_tensor_info *ti = &m->tensors[i];
        if (!ti->size) continue;
        const wf_real *p = m->arena + ti->offset;
        size_t bad = wf_adamw_check(p, p + 2 * stride, p + 3 * stride, p + stride, (size_t)ti->size, scale, &m->opt,
                                    lr, ti->decay, t);
        if (bad < (size_t)ti->size)
            return WF_ERR(m, WF_ERR_NUMERIC, "the update at learning rate %g would overflow \"%s\"[%zu] (weight or "
                          "AdamW moment); the step was rejected and weights and optimizer state are unchanged "
                          "(try a lower learning rate or gradient clipping)", (double)lr, ti->name, bad);
    }
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

wf_status wf_train_step(wf_model *m, const int32_t *inputs, const int32_t *targets, int32_t B, int32_t T,
                        wf_step_info *info) {
    wf_batch b = ids_batch(inputs, targets, B, T);
    return wf_batch_step(m, &b, info);
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

wf_status wf_sample_seed(wf_model *m, uint32_t seed) {
    NEED_READY(m);
    seed_sampler(m, seed);
    m->err[0] = 0;
    return WF_OK;
}

/* ---- for the file formats (checkpoint.c, safetensors.c) ---- */

size_t wf_model_stride(const wf_model *m) { return arena_stride(m); }

wf_status wf_tensor_table(const wf_config *cfg, wf_tensor_info out[WF_N_PARAMS]) {
    wf_status s = wf_config_check(cfg, NULL, 0);
    if (s != WF_OK) return s;
    wf_model probe; /* only its dims and table are used; nothing is allocated */
    memset(&probe, 0, sizeof probe);
    wf_dims_of(cfg, &probe.d);
    if (params_elems_d(&probe.d, 1) > 2147483647.0) return WF_ERR_CONFIG; /* int32 sizes would overflow */
    layout_params(&probe);
    memcpy(out, probe.tensors, sizeof probe.tensors);
    return WF_OK;
}
