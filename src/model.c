/* The model handle (model.h): creating and freeing it, building a model of a config (random
 * weights, or zeros for the file formats to fill), its accessors and settings (optimizer,
 * threads), the activation plan for a batch, and the one token-id check. */
#include <stdlib.h>

#include "config.h"
#include "model.h"

/* ---- the handle ---- */

wf_model *wf_model_create(void) { return calloc(1, sizeof(wf_model)); }

static void release(wf_model *m) {
    if (m->run) m->run_ops->free(m->run);
    m->run = NULL;
    for (int b = 0; b < 4; b++) wf_free(m->block[b]);
    free(m->train);
    free(m->goff);
    wf_free(m->muon_mem);
    wf_free(m->pos_table);
    wf_free(m->rope_cos);
    wf_free(m->act_mem);
    wf_free(m->gen.mem);
}

/* Moves next's model into m, keeping m's thread pool (the setting belongs to the handle). */
static void adopt(wf_model *m, wf_model *next) {
    next->pool = m->pool;
    next->clock = m->clock;
    next->clock_ctx = m->clock_ctx;
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
 * moving one step later. The draws are made anyway: the other tensors stay as without it.
 * LoRA's adapters come last in the table and draw from a stream of their own (init_lora), so
 * the base weights are the same with and without them. */
static void init_weights(wf_model *m) {
#define X(name, ndim, d0, d1, d2, decay, init, groups) init,
    static const int INIT[WF_N_PARAMS] = {WF_PARAMS(X)};
#undef X
    wf_rng r;
    wf_rng_seed(&r, m->cfg.seed);
    const double std = 0.02, resid_std = 0.02 / sqrt(2.0 * m->d.L), enc_resid_std = m->d.E ? 0.02 / sqrt(2.0 * m->d.E) : 0;
    for (int i = 0; i < WF_N_PARAMS; i++) {
        const wf_tensor_info *t = &m->tensors[i];
        if (wf_param_lora(i)) continue;
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

/* LoRA's adapters as PEFT starts them: A Kaiming-uniform with a = sqrt(5) (nn.Linear's
 * default, U(-1/sqrt(in), 1/sqrt(in))), B zero, so that a new adapter changes nothing. From
 * their own stream: adding adapters later draws the same as a model made with them. */
static void init_lora(wf_model *m) {
    wf_rng r;
    wf_rng_seed(&r, (uint64_t)m->cfg.seed ^ 0x6c6f7261ULL); /* "lora" */
    for (int i = 0; i < WF_N_PARAMS; i++) {
        const wf_tensor_info *t = &m->tensors[i];
        if (!wf_param_lora(i) || !t->size) continue;
        wf_real *w = m->block[WF_WEIGHTS] + t->offset;
        const int is_a = (i - WF_P_enc_lora_qa) % 2 == 0; /* rows alternate A, B */
        const double bound = 1 / sqrt((double)t->shape[2]);
        for (int32_t j = 0; j < t->size; j++) w[j] = is_a ? (wf_real)(bound * (2 * wf_rng_uniform(&r) - 1)) : 0;
    }
}

wf_real *wf_model_slice(const wf_model *m, int block, int i, int layer) {
    const wf_tensor_info *t = &m->tensors[i];
    if (!t->size) return NULL;
    if (block == WF_WEIGHTS) return m->block[WF_WEIGHTS] + t->offset + (size_t)layer * (size_t)(t->size / t->layers);
    const size_t o = m->goff[m->slice0[i] + layer];
    return o == SIZE_MAX ? NULL : m->block[block] + o;
}

/* Points p into the weight block at each tensor's offset, and g at the gradients of the whole
 * tensors (the stacked ones are reached per layer: wf_layer_weights). */
static void point_params(wf_model *m) {
    const wf_tensor_info *t = m->tensors;
    int i = 0;
#define X(pname, ...)                                                                     \
    m->p.pname = t->size ? m->block[WF_WEIGHTS] + t->offset : NULL;                       \
    m->g.pname = wf_param_stacked(i) ? NULL : wf_model_slice(m, WF_GRADS, i, 0);          \
    t++, i++;
    WF_PARAMS(X)
#undef X
}

/* The batch sampler's train and validation streams, both derived from one seed. */
void wf_model_seed_sampler(wf_model *m, uint32_t seed) {
    wf_rng_seed(&m->rng_split[0], (uint64_t)seed * 2 + 1);
    wf_rng_seed(&m->rng_split[1], (uint64_t)seed * 2 + 2);
}

/* Bytes a model of dims d needs with gstride elements of gradients (and each AdamW moment). */
static double model_bytes(const wf_dims *d, double stride, double gstride) {
    return (stride + 3 * gstride + wf_plan_muon(d) + wf_plan_gen(d) + wf_plan_tables(d)) * sizeof(wf_real);
}

/* Lays out and allocates a model of cfg in next (zero weights, trainable mask `mask`, or the
 * config's default when NULL), without touching m but for its message. On failure next holds
 * nothing. */
static wf_status make(wf_model *m, wf_model *next, const wf_config *cfg, const uint8_t *mask) {
    char why[200];
    wf_status s = wf_config_check(cfg, why, sizeof why);
    if (s != WF_OK) return WF_ERR(m, s, "%s", why);
    wf_dims d;
    wf_dims_of(cfg, &d);
    if (wf_plan_params(&d, 1) > 2147483647.0)
        return WF_ERR(m, WF_ERR_CONFIG, "the model would have %.0f parameters; at most 2^31 - 1 are supported",
                      wf_plan_params(&d, 1));
    memset(next, 0, sizeof *next);
    next->cfg = *cfg;
    next->d = d;
    next->stride = wf_plan_tensors(&d, next->tensors);
    next->n_slices = wf_plan_slices(next->tensors);
    for (int i = 0, k = 0; i < WF_N_PARAMS; k += next->tensors[i].layers, i++) {
        next->n_params += (size_t)next->tensors[i].size;
        next->slice0[i] = k;
    }
    /* the size first, so that a model too large is refused before anything is allocated */
    wf_memory est;
    wf_config_memory(cfg, 0, 0, &est, NULL, 0);
    double grads = est.grads / sizeof(wf_real);
    if (mask) grads = (double)wf_plan_train(next->tensors, mask, NULL);
    const double bytes = model_bytes(&d, (double)next->stride, grads);
    if ((s = wf_plan_fits(bytes, 0, 0, 0, why, sizeof why)) != WF_OK) {
        memset(next, 0, sizeof *next);
        return WF_ERR(m, s, "%s", why);
    }
    next->train = wf_malloc_n((size_t)next->n_slices + 1, 1);
    next->goff = wf_malloc_n((size_t)next->n_slices + 1, sizeof(size_t));
    if (!next->train || !next->goff) {
        release(next);
        return WF_ERR(m, WF_ERR_NOMEM, "out of memory");
    }
    if (mask) memcpy(next->train, mask, (size_t)next->n_slices);
    else wf_plan_default_mask(next->tensors, d.LR > 0, next->train);
    next->gstride = wf_plan_train(next->tensors, next->train, next->goff);
    int blocks = 1;
    for (int b = 0; b < 4; b++) {
        const size_t n = b == WF_WEIGHTS ? next->stride : next->gstride;
        blocks &= (next->block[b] = wf_zalloc(n ? n : 4, sizeof(wf_real))) != NULL;
    }
    next->muon_mem = wf_alloc((size_t)wf_plan_muon(&d), sizeof(wf_real));
    size_t gen_elems = wf_gen_carve(NULL, &d, NULL);
    next->gen.mem = wf_alloc(gen_elems, sizeof(wf_real));
    size_t table = (size_t)wf_plan_tables(&d);
    wf_real *tables = table ? wf_alloc(table, sizeof(wf_real)) : NULL;
    if (d.rope) {
        next->rope_cos = tables;
        next->rope_sin = tables ? tables + table / 2 : NULL;
    } else {
        next->pos_table = tables;
    }
    if (!blocks || !next->muon_mem || !next->gen.mem || (table && !tables)) {
        release(next);
        return WF_ERR(m, WF_ERR_NOMEM, "could not allocate %.1f MB for the model", bytes / 1e6);
    }
    point_params(next);
    if (next->pos_table) wf_sinusoid_table(next->pos_table, d.T, d.C);
    if (next->rope_cos) wf_rope_table(next->rope_cos, next->rope_sin, d.T, d.HS, next->cfg.rope_theta);
    wf_gen_carve(&next->gen, &d, next->gen.mem);
    next->gen.bytes = gen_elems * sizeof(wf_real);
    wf_optim_default(&next->opt);
    wf_model_seed_sampler(next, cfg->seed);
    next->ready = 1;
    return WF_OK;
}

/* A model of cfg into m: built aside and swapped in only when everything succeeded. */
static wf_status build(wf_model *m, const wf_config *cfg, int random, const uint8_t *mask) {
    if (!m) return WF_ERR_ARG;
    wf_model next;
    wf_status s = make(m, &next, cfg, mask);
    if (s != WF_OK) return s;
    if (random) {
        init_weights(&next);
        init_lora(&next);
        next.origin = WF_ORIGIN_INIT; /* the file formats set theirs once they have filled it */
    }
    adopt(m, &next);
    return WF_OK;
}

wf_status wf_model_init(wf_model *m, const wf_config *cfg) { return build(m, cfg, 1, NULL); }
wf_status wf_model_init_zero(wf_model *m, const wf_config *cfg) { return build(m, cfg, 0, NULL); }
wf_status wf_model_init_masked(wf_model *m, const wf_config *cfg, const uint8_t *mask) { return build(m, cfg, 0, mask); }

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
    const double bytes = sizeof(wf_real), stride = (double)m->stride, gstride = (double)m->gstride;
    mem->params = stride * bytes;
    mem->grads = gstride * bytes;
    mem->optimizer = (2 * gstride + wf_plan_muon(&m->d)) * bytes;
    size_t scratch; /* a threaded model's pool packs shared operands into a scratch of its own */
    wf_pool_scratch(m->pool, &scratch);
    mem->activations = (double)m->act_cap * bytes + (double)scratch;
    mem->inference = (double)m->gen.bytes + wf_plan_tables(&m->d) * bytes;
    mem->total = mem->params + mem->grads + mem->optimizer + mem->activations + mem->inference;
    mem->count = (double)m->n_params;
    out->n_tensors = WF_N_PARAMS;
    out->step = m->step;
    out->lr = m->run ? m->run_ops->next_lr(m) : wf_lr_at(&m->opt, m->step);
    out->origin = m->origin;
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
float *wf_model_params(wf_model *m) { return wf_model_ready(m) == WF_OK ? WF_FLOATS(m->block[WF_WEIGHTS]) : NULL; }
float *wf_model_grads(wf_model *m) { return wf_model_ready(m) == WF_OK ? WF_FLOATS(m->block[WF_GRADS]) : NULL; }

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
    char why[200];
    const wf_status fits = wf_plan_fits(0, need_d * sizeof(wf_real), B, T, why, sizeof why);
    if (fits != WF_OK) return WF_ERR(m, fits, "%s", why);
    size_t need = (size_t)need_d;
    if (need > m->act_cap) {
        wf_real *mem = wf_alloc(need, sizeof(wf_real));
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

wf_layer_ctx wf_model_layer_ctx(wf_model *m) {
    return (wf_layer_ctx){.cfg = &m->cfg, .d = &m->d, .pool = m->pool, .rope_cos = m->rope_cos, .rope_sin = m->rope_sin,
                          .a = &m->a};
}

void wf_layer_weights(const wf_model *m, int stack, int l, int grads, wf_layer_w *w) {
    const int block = grads ? WF_GRADS : WF_WEIGHTS;
#define MAIN_X(name, ...) w->name = wf_model_slice(m, block, WF_P_##name, l);
#define ENC_X(name, ...) w->name = wf_model_slice(m, block, WF_P_enc_##name, l);
#define NONE_X(name, ...) w->name = NULL;
    if (stack == WF_STACK_MAIN) {
        WF_BLOCK_PARAMS(MAIN_X, , L, WF_CROSS_PARAMS(MAIN_X))
        WF_LORA_PARAMS(MAIN_X, , L)
    } else {
        WF_BLOCK_PARAMS(ENC_X, , E, WF_CROSS_PARAMS(NONE_X))
        WF_LORA_PARAMS(ENC_X, , E)
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

/* ---- fine-tuning: the trainable mask and LoRA's config ---- */

/* Elements of slice k (tensor i's layer) of table t. */
static size_t slice_elems(const wf_tensor_info *t) { return t->layers ? (size_t)t->size / (size_t)t->layers : 0; }

/* AdamW's (or Muon's) moments of every slice that trains in both a and b (tables of the same
 * tensor sizes where it matters: slices of tensors whose sizes differ are left at zero). */
static void copy_moments(wf_model *to, const wf_model *from) {
    for (int i = 0; i < WF_N_PARAMS; i++) {
        const wf_tensor_info *a = &from->tensors[i], *b = &to->tensors[i];
        if (!a->size || a->size != b->size) continue;
        for (int l = 0; l < a->layers; l++) {
            const size_t src = from->goff[from->slice0[i] + l], dst = to->goff[to->slice0[i] + l];
            if (src == SIZE_MAX || dst == SIZE_MAX) continue;
            for (int k = WF_ADAM_M; k <= WF_ADAM_V; k++)
                memcpy(to->block[k] + dst, from->block[k] + src, slice_elems(a) * sizeof(wf_real));
        }
    }
}

/* The grads, m and v blocks of a new mask; nothing changes on failure. */
static wf_status relayout(wf_model *m, const uint8_t *mask) {
    wf_model next = *m; /* the tables and blocks of m, with the three blocks replaced */
    next.train = wf_malloc_n((size_t)m->n_slices + 1, 1);
    next.goff = wf_malloc_n((size_t)m->n_slices + 1, sizeof(size_t));
    for (int b = WF_GRADS; b <= WF_ADAM_V; b++) next.block[b] = NULL;
    int ok = next.train && next.goff;
    if (ok) {
        memcpy(next.train, mask, (size_t)m->n_slices);
        next.gstride = wf_plan_train(next.tensors, mask, next.goff);
        for (int b = WF_GRADS; b <= WF_ADAM_V; b++)
            ok &= (next.block[b] = wf_zalloc(next.gstride ? next.gstride : 4, sizeof(wf_real))) != NULL;
    }
    if (!ok) {
        free(next.train);
        free(next.goff);
        for (int b = WF_GRADS; b <= WF_ADAM_V; b++) wf_free(next.block[b]);
        return WF_ERR(m, WF_ERR_NOMEM, "could not allocate %.1f MB of gradients and optimizer state",
                      3.0 * next.gstride * sizeof(wf_real) / 1e6);
    }
    copy_moments(&next, m);
    free(m->train);
    free(m->goff);
    for (int b = WF_GRADS; b <= WF_ADAM_V; b++) wf_free(m->block[b]);
    *m = next;
    point_params(m);
    return WF_OK;
}

wf_status wf_model_trainable(wf_model *m, const uint8_t *set, uint8_t *get, int32_t n) {
    WF_NEED_READY(m);
    if (n != m->n_slices)
        return WF_ERR(m, WF_ERR_ARG, "the trainable mask has %d bytes; this model's has %d (wf_tensor_info.layers "
                      "per tensor)", n, m->n_slices);
    if (set) {
        for (int32_t k = 0; k < n; k++)
            if (set[k] > 1) return WF_ERR(m, WF_ERR_ARG, "byte %d of the trainable mask is %u, not 0 (frozen) or 1", k, set[k]);
        if (memcmp(set, m->train, (size_t)n)) {
            wf_status s = relayout(m, set);
            if (s != WF_OK) return s;
            if (m->run) m->run_ops->end(m); /* what trains changed: the run (and its roll-back copy's layout) is over */
        }
    }
    if (get) memcpy(get, m->train, (size_t)n);
    m->err[0] = 0;
    return WF_OK;
}

/* What wf_model_set_config may change: LoRA's fields and dropout. */
static int changeable(const char *name) { return !strncmp(name, "lora_", 5) || !strcmp(name, "dropout"); }

/* Folds every adapter of old that next does not keep into next's weights: W += s B A. */
static void merge_dropped(wf_model *next, const wf_model *old, wf_real *sb) {
    const wf_real s = (wf_real)(old->cfg.lora_alpha / (double)old->cfg.lora_rank);
    for (int enc = 0; enc < 2; enc++) {
        const int layers = enc ? old->d.E : old->d.L;
        for (int t = 0; t < WF_LORA_N; t++) {
            const wf_lora_site site = wf_lora_site_of(&old->d, t, enc);
            const wf_tensor_info *A = &old->tensors[site.a], *Bt = &old->tensors[site.a + 1];
            if (!A->size || next->tensors[site.a].size == A->size) continue;
            const wf_tensor_info *W = &next->tensors[site.w];
            for (int l = 0; l < layers; l++) {
                wf_real *w = next->block[WF_WEIGHTS] + W->offset + (size_t)l * slice_elems(W) + (size_t)site.row0 * site.in;
                wf_lora_merge(w, old->block[WF_WEIGHTS] + A->offset + (size_t)l * slice_elems(A),
                              old->block[WF_WEIGHTS] + Bt->offset + (size_t)l * slice_elems(Bt), s, site.in, site.rows,
                              old->d.LR, sb);
            }
        }
    }
}

wf_status wf_model_set_config(wf_model *m, const wf_config *cfg, int32_t merge) {
    WF_NEED_READY(m);
    if (!cfg) return WF_ERR(m, WF_ERR_ARG, "cfg is NULL");
    if (merge != 0 && merge != 1) return WF_ERR(m, WF_ERR_ARG, "merge must be 0 or 1, not %d", merge);
    char why[200];
    wf_status s = wf_config_check(cfg, why, sizeof why);
    if (s != WF_OK) return WF_ERR(m, s, "%s", why);
    for (const wf_field *f = wf_config_fields; f < wf_config_fields + WF_N_CONFIG; f++)
        if (!changeable(f->name) && memcmp((const char *)cfg + f->offset, (const char *)&m->cfg + f->offset, 4))
            return WF_ERR(m, WF_ERR_CONFIG, "a model's config changes in place only in lora_rank, lora_alpha, "
                          "lora_targets and dropout; %s differs (the model is unchanged)", f->name);
    if (!memcmp(cfg, &m->cfg, sizeof *cfg)) {
        m->err[0] = 0;
        return WF_OK;
    }
    /* the mask: a model's first adapters train alone (the config's default); after that the
     * base keeps its mask, kept adapters theirs, and new adapters train */
    wf_dims d;
    wf_dims_of(cfg, &d);
    wf_tensor_info table[WF_N_PARAMS];
    wf_plan_tensors(&d, table);
    uint8_t *mask = NULL;
    if (m->d.LR && !(mask = wf_malloc_n((size_t)wf_plan_slices(table) + 1, 1)))
        return WF_ERR(m, WF_ERR_NOMEM, "out of memory");
    for (int i = 0, k = 0; mask && i < WF_N_PARAMS; i++)
        for (int l = 0; l < table[i].layers; l++, k++)
            mask[k] = m->tensors[i].size == table[i].size ? m->train[m->slice0[i] + l] : 1;
    wf_model next;
    s = make(m, &next, cfg, mask);
    free(mask);
    if (s != WF_OK) return s;
    wf_real *sb = NULL;
    if (merge && m->d.LR) {
        const int widest = m->d.C > m->d.F ? m->d.C : m->d.F;
        size_t n; /* d_ff 2^20 times rank 2^16: past a 32-bit size_t, though the adapters fit */
        if (!wf_mul_ok((size_t)widest, (size_t)m->d.LR, &n) || !(sb = wf_alloc(n, sizeof(wf_real)))) {
            release(&next);
            return WF_ERR(m, WF_ERR_NOMEM, "out of memory merging the adapters");
        }
    }
    for (int i = 0; i < WF_N_PARAMS; i++)
        if (!wf_param_lora(i) && m->tensors[i].size)
            memcpy(next.block[WF_WEIGHTS] + next.tensors[i].offset, m->block[WF_WEIGHTS] + m->tensors[i].offset,
                   (size_t)m->tensors[i].size * sizeof(wf_real));
    init_lora(&next);
    for (int i = 0; i < WF_N_PARAMS; i++)
        if (wf_param_lora(i) && m->tensors[i].size && m->tensors[i].size == next.tensors[i].size)
            memcpy(next.block[WF_WEIGHTS] + next.tensors[i].offset, m->block[WF_WEIGHTS] + m->tensors[i].offset,
                   (size_t)m->tensors[i].size * sizeof(wf_real));
    if (sb) merge_dropped(&next, m, sb);
    wf_free(sb);
    copy_moments(&next, m);
    if (m->run) m->run_ops->end(m); /* a new model in the handle: the run ends, its schedule in the settings */
    next.opt = m->opt;
    next.step = m->step;
    memcpy(next.rng_split, m->rng_split, sizeof next.rng_split);
    next.origin = m->origin;
    adopt(m, &next);
    return WF_OK;
}
