/* The model handle (model.h): creating and freeing it, building a model of a config (random
 * weights, or zeros for the file formats to fill), its accessors and settings (optimizer,
 * threads), the activation plan for a batch, and the one token-id check. */
#include <stdlib.h>

#include "config.h"
#include "model.h"

/* ---- the handle ---- */

wf_model *wf_model_create(void) { return calloc(1, sizeof(wf_model)); }

void wf_model_release(wf_model *m) {
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
    wf_free(m->qmem);
    wf_free(m->qscratch);
}

/* Moves next's model into m, keeping m's thread pool (the setting belongs to the handle). */
void wf_model_adopt(wf_model *m, wf_model *next) {
    next->pool = m->pool;
    next->clock = m->clock;
    next->clock_ctx = m->clock_ctx;
    next->note = m->note;
    next->note_n = m->note_n;
    next->loading = m->loading;
    next->loading_free = m->loading_free;
    wf_model_release(m);
    *m = *next;
    m->err[0] = 0;
}

void wf_model_free(wf_model *m) {
    if (!m) return;
    wf_model_release(m);
    if (m->loading) m->loading_free(m->loading);
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
void wf_model_init_lora(wf_model *m) {
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
    if (!t->size || (block == WF_WEIGHTS && t->offset < 0)) return NULL; /* absent, or quantized */
    if (block == WF_WEIGHTS) return m->block[WF_WEIGHTS] + t->offset + (size_t)layer * (size_t)(t->size / t->layers);
    const size_t o = m->goff[m->slice0[i] + layer];
    return o == SIZE_MAX || !m->block[block] ? NULL : m->block[block] + o;
}

uint8_t *wf_model_qslice(const wf_model *m, int i, int layer) {
    const wf_tensor_info *t = &m->tensors[i];
    if (!t->size || t->dtype == WF_QUANT_F32) return NULL;
    return m->qmem + m->qoff[i] + (size_t)layer * wf_plan_qslice(t);
}

const wf_real *wf_model_rows(const wf_model *m, int i, size_t r0, size_t n, wf_real *buf) {
    const wf_tensor_info *t = &m->tensors[i];
    const size_t cols = (size_t)t->shape[t->ndim - 1];
    if (t->dtype == WF_QUANT_F32) return m->block[WF_WEIGHTS] + t->offset + r0 * cols;
    const size_t rb = wf_quant_row_bytes(t->dtype, cols);
    for (size_t r = 0; r < n; r++) wf_dequantize_row(buf + r * cols, m->qmem + m->qoff[i] + (r0 + r) * rb, cols, t->dtype);
    return buf;
}

/* Points p into the weight block at each tensor's offset, and g at the gradients of the whole
 * tensors (the stacked ones are reached per layer: wf_layer_weights). */
void wf_model_point(wf_model *m) {
    const wf_tensor_info *t = m->tensors;
    int i = 0;
#define X(pname, ...)                                                                     \
    m->p.pname = t->size && t->offset >= 0 ? m->block[WF_WEIGHTS] + t->offset : NULL;     \
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

/* Bytes of a model of dims d to generate: its weights (stride elements, and qbytes of blocks),
 * the generation block (the KV cache) and the position tables. */
static double model_bytes(const wf_dims *d, double stride, double qbytes) {
    return (stride + wf_plan_gen(d) + wf_plan_tables(d)) * sizeof(wf_real) + qbytes;
}

/* The widest input of the model's linears: the quantized products' scratch is sized by it. */
static int widest_input(const wf_dims *d) { return d->C > d->F ? d->C : d->F; }

/* Lays out and allocates a model of cfg in next (zero weights, trainable mask `mask`, or the
 * config's default when NULL; quantized as qtype says, NULL: float32), without touching m but
 * for its message, and without its training state (wf_model_train_state). On failure next
 * holds nothing. */
wf_status wf_model_make(wf_model *m, wf_model *next, const wf_config *cfg, const uint8_t *mask, const uint8_t *qtype) {
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
    if (qtype) {
        memcpy(next->qtype, qtype, sizeof next->qtype);
        next->stride = wf_plan_quant(next->tensors, qtype, next->qoff, &next->qbytes);
    }
    next->n_slices = wf_plan_slices(next->tensors);
    for (int i = 0, k = 0; i < WF_N_PARAMS; k += next->tensors[i].layers, i++) {
        next->n_params += (size_t)next->tensors[i].size;
        next->slice0[i] = k;
    }
    /* the size first, so that a model too large is refused before anything is allocated */
    const double bytes = model_bytes(&d, (double)next->stride, (double)next->qbytes);
    if (bytes > wf_memory_budget()) { /* training's state comes later (wf_model_alloc_train), checked then */
        memset(next, 0, sizeof *next);
        return WF_ERR(m, WF_ERR_NOMEM, "the model needs %.2f GB for its weights and KV cache; this build addresses at "
                      "most %.2f GB", bytes / 1e9, wf_address_limit() / 1e9);
    }
    next->train = wf_malloc_n((size_t)next->n_slices + 1, 1);
    next->goff = wf_malloc_n((size_t)next->n_slices + 1, sizeof(size_t));
    if (!next->train || !next->goff) {
        wf_model_release(next);
        return WF_ERR(m, WF_ERR_NOMEM, "out of memory");
    }
    wf_plan_default_mask(next->tensors, d.LR > 0, next->train);
    if (mask) /* quantized slices stay frozen whatever a mask says */
        for (int i = 0, k = 0; i < WF_N_PARAMS; i++)
            for (int l = 0; l < next->tensors[i].layers; l++, k++) next->train[k] = mask[k] && next->tensors[i].dtype == WF_QUANT_F32;
    next->gstride = wf_plan_train(next->tensors, next->train, next->goff);
    int blocks = (next->block[WF_WEIGHTS] = wf_zalloc(next->stride ? next->stride : 4, sizeof(wf_real))) != NULL;
    if (next->qbytes) {
        blocks &= (next->qmem = wf_zalloc(next->qbytes, 1)) != NULL;
        blocks &= (next->qscratch = wf_alloc(wf_qlinear_scratch(widest_input(&d)), 1)) != NULL;
    }
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
    if (!blocks || !next->gen.mem || (table && !tables)) {
        wf_model_release(next);
        return WF_ERR(m, WF_ERR_NOMEM, "could not allocate %.1f MB for the model", bytes / 1e6);
    }
    wf_model_point(next);
    if (next->pos_table) wf_sinusoid_table(next->pos_table, d.T, d.C);
    if (next->rope_cos) wf_rope_table(next->rope_cos, next->rope_sin, d.T, d.HS, next->cfg.rope_theta);
    wf_gen_carve(&next->gen, &d, next->gen.mem);
    next->gen.bytes = gen_elems * sizeof(wf_real);
    wf_optim_default(&next->opt);
    wf_model_seed_sampler(next, cfg->seed);
    next->ready = 1;
    return WF_OK;
}

/* The training state of a model (made without it): gradients, AdamW's moments (Muon's
 * momentum in m) and Muon's scratch, all zero; the message of a failure in err. Generating
 * needs none of it, and it is most of a model's memory: a 135M-parameter model's weights take
 * 0.54 GB, its training state 1.6 GB more. */
wf_status wf_model_alloc_train(wf_model *m, char *err, size_t cap) {
    if (m->block[WF_GRADS]) return WF_OK;
    const size_t n = m->gstride ? m->gstride : 4;
    const double bytes = (3.0 * (double)n + wf_plan_muon(&m->d)) * sizeof(wf_real);
    wf_real *b[3] = {NULL, NULL, NULL}, *muon = NULL;
    int ok = bytes <= wf_memory_budget();
    for (int k = 0; ok && k < 3; k++) ok = (b[k] = wf_zalloc(n, sizeof(wf_real))) != NULL;
    if (ok) ok = (muon = wf_alloc((size_t)wf_plan_muon(&m->d), sizeof(wf_real))) != NULL;
    if (!ok) {
        for (int k = 0; k < 3; k++) wf_free(b[k]);
        return wf_fail(err, cap, WF_ERR_NOMEM, "training needs %.1f MB more for gradients and optimizer state, which "
                       "could not be allocated (the model is unchanged and still generates)", bytes / 1e6);
    }
    for (int k = 0; k < 3; k++) m->block[WF_GRADS + k] = b[k];
    m->muon_mem = muon;
    wf_model_point(m);
    return WF_OK;
}

wf_status wf_model_train_state(wf_model *m) { return wf_model_alloc_train(m, m->err, sizeof m->err); }

void wf_model_drop_train_state(wf_model *m) {
    for (int b = WF_GRADS; b <= WF_ADAM_V; b++) {
        wf_free(m->block[b]);
        m->block[b] = NULL;
    }
    wf_free(m->muon_mem);
    m->muon_mem = NULL;
    wf_model_point(m);
}

/* A model of cfg into m: built aside and swapped in only when everything succeeded (with its
 * training state when train is set). */
static wf_status build(wf_model *m, const wf_config *cfg, int random, const uint8_t *mask, const uint8_t *qtype,
                       int train) {
    if (!m) return WF_ERR_ARG;
    wf_model next;
    wf_status s = wf_model_make(m, &next, cfg, mask, qtype);
    if (s == WF_OK && train && (s = wf_model_alloc_train(&next, m->err, sizeof m->err)) != WF_OK) wf_model_release(&next);
    if (s != WF_OK) return s;
    if (random) {
        init_weights(&next);
        wf_model_init_lora(&next);
        next.origin = WF_ORIGIN_INIT; /* the file formats set theirs once they have filled it */
    }
    wf_model_adopt(m, &next);
    return WF_OK;
}

wf_status wf_model_init(wf_model *m, const wf_config *cfg) { return build(m, cfg, 1, NULL, NULL, 0); }
wf_status wf_model_init_zero(wf_model *m, const wf_config *cfg) { return build(m, cfg, 0, NULL, NULL, 0); }
wf_status wf_model_init_as(wf_model *m, const wf_config *cfg, const uint8_t *mask, const uint8_t *qtype, int train) {
    return build(m, cfg, 0, mask, qtype, train);
}

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
    const int trains = m->block[WF_GRADS] != NULL; /* the training state exists once training started */
    mem->params = stride * bytes + (double)m->qbytes;
    mem->grads = trains ? gstride * bytes : 0;
    mem->optimizer = trains ? (2 * gstride + wf_plan_muon(&m->d)) * bytes : 0;
    size_t scratch; /* a threaded model's pool packs shared operands into a scratch of its own */
    wf_pool_scratch(m->pool, &scratch);
    mem->activations = (double)m->act_cap * bytes + (double)scratch;
    mem->inference = (double)m->gen.bytes + wf_plan_tables(&m->d) * bytes +
                     (m->qscratch ? (double)wf_qlinear_scratch(widest_input(&m->d)) : 0);
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
float *wf_model_grads(wf_model *m) {
    return wf_model_ready(m) == WF_OK && wf_model_train_state(m) == WF_OK ? WF_FLOATS(m->block[WF_GRADS]) : NULL;
}

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
                          .a = &m->a, .qscratch = m->qscratch};
}

void wf_layer_weights(const wf_model *m, int stack, int l, int grads, wf_layer_w *w) {
    const int block = grads ? WF_GRADS : WF_WEIGHTS;
    memset(&w->q, 0, sizeof w->q);
#define Q_(i) (wf_qw){.p = grads ? NULL : wf_model_qslice(m, i, l), .type = m->tensors[i].dtype}
    if (stack == WF_STACK_MAIN)
        w->q = (wf_layer_q){.qkvw = Q_(WF_P_qkvw), .attprojw = Q_(WF_P_attprojw), .cqw = Q_(WF_P_cqw),
                            .ckvw = Q_(WF_P_ckvw), .cprojw = Q_(WF_P_cprojw), .fcw = Q_(WF_P_fcw),
                            .fcprojw = Q_(WF_P_fcprojw)};
    else
        w->q = (wf_layer_q){.qkvw = Q_(WF_P_enc_qkvw), .attprojw = Q_(WF_P_enc_attprojw), .fcw = Q_(WF_P_enc_fcw),
                            .fcprojw = Q_(WF_P_enc_fcprojw)};
#undef Q_
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
