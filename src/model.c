/* The model handle (model.h): creating and freeing it, building a model of a config (random
 * weights, or zeros for the file formats to fill), its accessors and settings (optimizer,
 * threads), the activation plan for a batch, and the one token-id check. */
#include <stdlib.h>

#include "config.h"
#include "model.h"

/* ---- the handle ---- */

wf_model *wf_model_create(void) { return calloc(1, sizeof(wf_model)); }

static void release(wf_model *m) {
    for (int b = 0; b < 4; b++) wf_free(m->block[b]);
    wf_free(m->muon_mem);
    wf_free(m->pos_table);
    wf_free(m->rope_cos);
    wf_free(m->act_mem);
    wf_free(m->gen.mem);
}

/* Moves next's model into m, keeping m's thread pool (the setting belongs to the handle). */
static void adopt(wf_model *m, wf_model *next) {
    next->pool = m->pool;
    next->note = m->note;
    next->note_n = m->note_n;
    release(m);
    *m = *next;
    m->err[0] = 0;
}

void wf_model_free(wf_model *m) {
    if (!m) return;
    release(m);
    wf_pool_free(m->pool);
    free(m->note);
    free(m);
}

/* ---- the application's note ---- */

wf_status wf_model_set_note(wf_model *m, const uint8_t *bytes, int32_t n) {
    if (!m) return WF_ERR_ARG;
    if (n < 0 || n > WF_NOTE_MAX) return WF_ERR(m, WF_ERR_ARG, "a note is 0 to %d bytes, not %d", WF_NOTE_MAX, n);
    if (n > 0 && !bytes) return WF_ERR(m, WF_ERR_ARG, "bytes is NULL");
    uint8_t *copy = NULL;
    if (n > 0 && !(copy = malloc((size_t)n))) return WF_ERR(m, WF_ERR_NOMEM, "could not allocate a note of %d bytes", n);
    if (n > 0) memcpy(copy, bytes, (size_t)n);
    free(m->note);
    m->note = copy;
    m->note_n = n;
    m->err[0] = 0;
    return WF_OK;
}

const uint8_t *wf_model_get_note(const wf_model *m, int32_t *n) {
    if (n) *n = m ? m->note_n : 0;
    return m ? m->note : NULL;
}

const char *wf_model_error(const wf_model *m) { return m ? m->err : "model is NULL"; }

wf_status wf_model_ready(wf_model *m) {
    if (!m) return WF_ERR_ARG;
    if (!m->ready) return WF_ERR(m, WF_ERR_STATE, "the model has no weights yet: call wf_model_init first");
    return WF_OK;
}

/* ---- building a model ---- */

/* GPT-2's init: N(0, 0.02), residual projections shrinking with the depth of their stack.
 * zero_proj (modded-nanogpt): those projections start at zero instead, so every block starts
 * as the identity and the residual stream is the embedding; their gradients are not zero
 * (dL/dW = dout^T x), so they move at the first step, and the weights upstream of them start
 * moving one step later. The draws are made anyway: the other tensors stay as without it. */
static void init_weights(wf_model *m) {
#define X(name, ndim, d0, d1, d2, decay, init) init,
    static const int INIT[WF_N_PARAMS] = {WF_PARAMS(X)};
#undef X
    wf_rng r;
    wf_rng_seed(&r, m->cfg.seed);
    const double std = 0.02, resid_std = 0.02 / sqrt(2.0 * m->d.L), enc_resid_std = m->d.E ? 0.02 / sqrt(2.0 * m->d.E) : 0;
    for (int i = 0; i < WF_N_PARAMS; i++) {
        const wf_tensor_info *t = &m->tensors[i];
        wf_real *w = m->block[WF_WEIGHTS] + t->offset;
        const int encoder = i >= WF_P_enc_ln1w && i <= WF_P_enc_fcprojb; /* the encoder stack's block tensors */
        for (int32_t j = 0; j < t->size; j++) {
            switch (INIT[i]) {
            case WF_INIT_ZERO: w[j] = 0; break;
            case WF_INIT_ONE: w[j] = 1; break;
            case WF_INIT_NORMAL: w[j] = (wf_real)(std * wf_rng_normal(&r)); break;
            default: w[j] = (wf_real)((encoder ? enc_resid_std : resid_std) * wf_rng_normal(&r)); break;
            }
        }
        if (INIT[i] == WF_INIT_RESIDUAL && m->cfg.zero_proj) memset(w, 0, (size_t)t->size * sizeof(wf_real));
    }
}

/* Points p and g into the weight and gradient blocks, at each tensor's offset. */
static void point_params(wf_model *m) {
    const wf_tensor_info *t = m->tensors;
#define X(pname, ...)                                                   \
    m->p.pname = t->size ? m->block[WF_WEIGHTS] + t->offset : NULL;     \
    m->g.pname = t->size ? m->block[WF_GRADS] + t->offset : NULL;       \
    t++;
    WF_PARAMS(X)
#undef X
}

/* The batch sampler's train and validation streams, both derived from one seed. */
static void seed_sampler(wf_model *m, uint32_t seed) {
    wf_rng_seed(&m->rng_split[0], (uint64_t)seed * 2 + 1);
    wf_rng_seed(&m->rng_split[1], (uint64_t)seed * 2 + 2);
}

/* A model of cfg into m: built aside and swapped in only when everything succeeded. */
static wf_status build(wf_model *m, const wf_config *cfg, int random) {
    if (!m) return WF_ERR_ARG;
    char why[200];
    wf_status s = wf_config_check(cfg, why, sizeof why);
    if (s != WF_OK) return WF_ERR(m, s, "%s", why);
    wf_memory mem;
    wf_config_memory(cfg, 0, 0, &mem, NULL, 0);
    wf_dims d;
    wf_dims_of(cfg, &d);
    if (wf_plan_params(&d, 1) > 2147483647.0)
        return WF_ERR(m, WF_ERR_CONFIG, "the model would have %.0f parameters; at most 2^31 - 1 are supported",
                      wf_plan_params(&d, 1));
    if (mem.total > wf_address_limit() * 0.95)
        return WF_ERR(m, WF_ERR_NOMEM, "the model needs %.2f GB before activations; this build addresses at most %.2f GB",
                      mem.total / 1e9, wf_address_limit() / 1e9);

    wf_model next;
    memset(&next, 0, sizeof next);
    next.cfg = *cfg;
    next.d = d;
    next.stride = wf_plan_tensors(&d, next.tensors);
    for (int i = 0; i < WF_N_PARAMS; i++) next.n_params += (size_t)next.tensors[i].size;
    int blocks = 1;
    for (int b = 0; b < 4; b++) blocks &= (next.block[b] = wf_calloc(next.stride * sizeof(wf_real))) != NULL;
    next.muon_mem = wf_alloc((size_t)wf_plan_muon(&d) * sizeof(wf_real));
    size_t gen_elems = wf_gen_carve(NULL, &d, NULL);
    next.gen.mem = wf_alloc(gen_elems * sizeof(wf_real));
    size_t table = (size_t)wf_plan_tables(&d);
    wf_real *tables = table ? wf_alloc(table * sizeof(wf_real)) : NULL;
    if (d.rope) {
        next.rope_cos = tables;
        next.rope_sin = tables ? tables + table / 2 : NULL;
    } else {
        next.pos_table = tables;
    }
    if (!blocks || !next.muon_mem || !next.gen.mem || (table && !tables)) {
        release(&next);
        return WF_ERR(m, WF_ERR_NOMEM, "could not allocate %.1f MB for the model", mem.total / 1e6);
    }
    point_params(&next);
    if (random) init_weights(&next);
    if (next.pos_table) wf_sinusoid_table(next.pos_table, d.T, d.C);
    if (next.rope_cos) wf_rope_table(next.rope_cos, next.rope_sin, d.T, d.HS, next.cfg.rope_theta);
    wf_gen_carve(&next.gen, &d, next.gen.mem);
    next.gen.bytes = gen_elems * sizeof(wf_real);
    wf_optim_default(&next.opt);
    seed_sampler(&next, cfg->seed);
    next.ready = 1;
    adopt(m, &next);
    return WF_OK;
}

wf_status wf_model_init(wf_model *m, const wf_config *cfg) { return build(m, cfg, 1); }
wf_status wf_model_init_zero(wf_model *m, const wf_config *cfg) { return build(m, cfg, 0); }

/* ---- accessors and settings ---- */

wf_status wf_model_get_config(wf_model *m, wf_config *out) {
    WF_NEED_READY(m);
    if (!out) return WF_ERR(m, WF_ERR_ARG, "out is NULL");
    *out = m->cfg;
    return WF_OK;
}

wf_status wf_model_get_info(wf_model *m, wf_model_info *out) {
    if (!m) return WF_ERR_ARG;
    if (!out) return WF_ERR(m, WF_ERR_ARG, "out is NULL");
    memset(out, 0, sizeof *out);
    out->threads = wf_pool_threads(m->pool);
    if (!m->ready) return WF_OK;
    wf_memory *mem = &out->memory;
    const double bytes = sizeof(wf_real), stride = (double)m->stride;
    mem->params = stride * bytes;
    mem->grads = stride * bytes;
    mem->optimizer = (2 * stride + wf_plan_muon(&m->d)) * bytes;
    mem->activations = (double)m->act_cap * bytes;
    mem->inference = (double)m->gen.bytes + wf_plan_tables(&m->d) * bytes;
    mem->total = mem->params + mem->grads + mem->optimizer + mem->activations + mem->inference;
    mem->count = (double)m->n_params;
    out->n_tensors = WF_N_PARAMS;
    out->step = m->step;
    out->lr = wf_lr_at(&m->opt, m->step);
    return WF_OK;
}

wf_status wf_model_get_tensor(wf_model *m, int32_t i, wf_tensor_info *out) {
    WF_NEED_READY(m);
    if (!out) return WF_ERR(m, WF_ERR_ARG, "out is NULL");
    if (i < 0 || i >= WF_N_PARAMS) return WF_ERR(m, WF_ERR_ARG, "tensor %d is outside [0, %d)", i, WF_N_PARAMS);
    *out = m->tensors[i];
    return WF_OK;
}

wf_real *wf_model_block(wf_model *m, int block) { return m && m->ready ? m->block[block] : NULL; }
float *wf_model_params(wf_model *m) { return WF_FLOATS(wf_model_block(m, WF_WEIGHTS)); }
float *wf_model_grads(wf_model *m) { return WF_FLOATS(wf_model_block(m, WF_GRADS)); }

wf_status wf_model_set_optim(wf_model *m, const wf_optim *o) {
    WF_NEED_READY(m);
    wf_status s = wf_optim_check(o, m->err, sizeof m->err);
    if (s != WF_OK) return s;
    m->opt = *o;
    m->err[0] = 0;
    return WF_OK;
}

wf_status wf_model_get_optim(wf_model *m, wf_optim *out) {
    WF_NEED_READY(m);
    if (!out) return WF_ERR(m, WF_ERR_ARG, "out is NULL");
    *out = m->opt;
    return WF_OK;
}

wf_status wf_model_sample_seed(wf_model *m, uint32_t seed) {
    WF_NEED_READY(m);
    seed_sampler(m, seed);
    m->err[0] = 0;
    return WF_OK;
}

void wf_model_get_state(const wf_model *m, wf_train_state *out) {
    out->step = m->step;
    for (int i = 0; i < 2; i++) out->rng[i] = m->rng_split[i].s;
}

void wf_model_set_state(wf_model *m, const wf_train_state *s) {
    m->step = s->step;
    for (int i = 0; i < 2; i++) m->rng_split[i].s = s->rng[i];
}

wf_status wf_model_set_threads(wf_model *m, int32_t n) {
    if (!m) return WF_ERR_ARG;
    if (n < 1 || n > 256) return WF_ERR(m, WF_ERR_ARG, "thread count %d is outside [1, 256]", n);
    if (n == wf_pool_threads(m->pool)) {
        m->err[0] = 0;
        return WF_OK;
    }
    wf_pool *p = NULL;
    const wf_status s = n > 1 ? wf_pool_start(&p, n, WF_POOL_WAIT) : WF_OK;
    if (s == WF_ERR_UNSUPPORTED)
        return WF_ERR(m, s, "this build has no threads; load the threaded build for %d threads", n);
    if (s == WF_ERR_NOMEM) return WF_ERR(m, s, "out of memory starting %d worker threads", n - 1);
    if (s != WF_OK)
        return WF_ERR(m, s, "could not start %d worker threads (the system refused one, or it did not start within "
                      "%g s); the setting is unchanged", n - 1, WF_POOL_WAIT);
    wf_pool_free(m->pool);
    m->pool = p;
    m->err[0] = 0;
    return WF_OK;
}

/* ---- for the stacks and training ---- */

wf_status wf_model_plan_batch(wf_model *m, int B, int T, int S) {
    double need_d = wf_plan_acts(&m->d, B, T, S);
    if (need_d * sizeof(wf_real) > wf_address_limit() * 0.95)
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
    wf_acts_carve(&m->a, m->act_mem, &m->d, (size_t)B, (size_t)T, (size_t)S, m->layer_elems);
    m->B = B;
    m->T = T;
    m->S = S;
    return WF_OK;
}

/* A stacked tensor's slice for layer l, in the block at base (params or grads). */
static wf_real *slice(const wf_model *m, int i, wf_real *base, int l) {
    const wf_tensor_info *t = &m->tensors[i];
    if (!t->size) return NULL;
    return base + t->offset + (size_t)l * (size_t)(t->size / t->shape[0]);
}

void wf_layer_weights(const wf_model *m, int stack, int l, int grads, wf_layer_w *w) {
    wf_real *base = m->block[grads ? WF_GRADS : WF_WEIGHTS];
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

wf_status wf_model_check_ids(wf_model *m, const int32_t *ids, size_t n, int negative_ok, const char *what) {
    const int32_t V = m->cfg.vocab_size;
    for (size_t i = 0; i < n; i++)
        if ((ids[i] < 0 && !negative_ok) || ids[i] >= V)
            return WF_ERR(m, WF_ERR_TOKEN, "%s token %d at position %zu is outside [0, %d)", what, ids[i], i, V);
    return WF_OK;
}
