/* The plan (plan.h): the dims a config implies, the tensor table, the sizes and carving of
 * the activations and the generation block, and what a model of a config needs in memory.
 * Every size is padded to 4 elements (PAD4), so every tensor starts 16-byte aligned. */
#include "plan.h"

void wf_dims_of(const wf_config *c, wf_dims *d) {
    d->V = c->vocab_size;
    d->C = c->d_model;
    d->NH = c->n_head;
    d->HS = c->n_head > 0 ? c->d_model / c->n_head : 0;
    d->KV = c->n_kv_head > 0 ? c->n_kv_head : c->n_head;
    d->KC = d->KV * d->HS;
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
    d->qkn = c->qk_norm;
    d->K = c->arch == WF_ARCH_DECODER ? 1 : d->xa ? c->max_beam : 0;
    d->LR = c->lora_targets ? c->lora_rank : 0;
    const int t = d->LR ? c->lora_targets : 0;
    d->lq = (t >> WF_LORA_Q) & 1, d->lk = (t >> WF_LORA_K) & 1, d->lv = (t >> WF_LORA_V) & 1;
    d->lo = (t >> WF_LORA_O) & 1, d->lf = (t >> WF_LORA_FC) & 1, d->lu = (t >> WF_LORA_UP) & 1;
    d->ld = (t >> WF_LORA_DOWN) & 1;
    d->LU = d->LR * (d->lq + d->lk + d->lv + d->lo + d->lf + d->lu + d->ld);
}

/* The letters of WF_PARAMS, in the caller's type; T (the context) as Tc. */
#define PARAM_LETTERS(TYPE, dd)                                                                                   \
    const TYPE V = dd->V, C = dd->C, KC = dd->KC, L = dd->L, E = dd->E, F = dd->F, fc = dd->fc, xa = dd->xa;      \
    const TYPE pos = dd->pos, bias = dd->bias, normb = dd->normb, head = dd->head, LR = dd->LR;                   \
    const TYPE lq = dd->lq, lk = dd->lk, lv = dd->lv, lo = dd->lo, lf = dd->lf, lu = dd->lu, ld = dd->ld;         \
    const TYPE Tc = dd->T;                                                                                        \
    (void)V, (void)C, (void)KC, (void)L, (void)E, (void)F, (void)fc, (void)xa, (void)pos, (void)bias;          \
    (void)normb, (void)head, (void)LR, (void)lq, (void)lk, (void)lv, (void)lo, (void)lf, (void)lu, (void)ld

/* ---- parameters ---- */

double wf_plan_params(const wf_dims *dd, int padded) {
    PARAM_LETTERS(double, dd);
    const double T = Tc;
    double total = 0;
#define X(name, ndim, d0, d1, d2, ...) total += padded ? PAD4D((d0) * (d1) * (d2)) : (d0) * (d1) * (d2);
    WF_PARAMS(X)
#undef X
    return total;
}

size_t wf_plan_tensors(const wf_dims *dd, wf_tensor_info out[WF_N_PARAMS]) {
    PARAM_LETTERS(int, dd);
    const int T = Tc;
    size_t off = 0;
    wf_tensor_info *t = out;
#define X(pname, nd, d0, d1, d2, dec, ...)                                                            \
    *t = (wf_tensor_info){.name = #pname, .offset = (int32_t)off, .size = (d0) * (d1) * (d2), .ndim = nd, \
                          .shape = {(d0), nd > 1 ? (d1) : 0, nd > 2 ? (d2) : 0, 0}, .decay = dec};       \
    off += PAD4((size_t)t->size);                                                                     \
    t++;
    WF_PARAMS(X)
#undef X
    for (int i = 0; i < WF_N_PARAMS; i++) {
        out[i].layers = !out[i].size ? 0 : wf_param_stacked(i) ? out[i].shape[0] : 1;
        out[i].grad_offset = out[i].offset; /* every slice trains until a mask says otherwise */
    }
    return off;
}

/* ---- LoRA's sites ---- */

wf_lora_site wf_lora_site_of(const wf_dims *d, int t, int enc) {
    const int C = d->C, KC = d->KC, F = d->F;
    static const int W[WF_LORA_N] = {WF_P_qkvw, WF_P_qkvw, WF_P_qkvw, WF_P_attprojw, WF_P_fcw, WF_P_fcw, WF_P_fcprojw};
    const int row0[WF_LORA_N] = {0, C, C + KC, 0, 0, F, 0}, rows[WF_LORA_N] = {C, KC, KC, C, F, F, C};
    wf_lora_site s = {.w = W[t], .a = WF_P_lora_qa + 2 * t, .row0 = row0[t], .rows = rows[t],
                      .in = t == WF_LORA_DOWN ? F : C};
    if (enc) {
        s.w += WF_P_enc_ln1w - WF_P_ln1w;
        s.a += WF_P_enc_lora_qa - WF_P_lora_qa;
    }
    return s;
}

/* ---- the trainable mask ---- */

int32_t wf_plan_slices(const wf_tensor_info t[WF_N_PARAMS]) {
    int32_t n = 0;
    for (int i = 0; i < WF_N_PARAMS; i++) n += t[i].layers;
    return n;
}

void wf_plan_default_mask(const wf_tensor_info t[WF_N_PARAMS], int lora, uint8_t *mask) {
    for (int i = 0, k = 0; i < WF_N_PARAMS; i++)
        for (int l = 0; l < t[i].layers; l++) mask[k++] = !lora || wf_param_lora(i);
}

size_t wf_plan_train(wf_tensor_info t[WF_N_PARAMS], const uint8_t *mask, size_t *goff) {
    size_t off = 0;
    for (int i = 0, k = 0; i < WF_N_PARAMS; i++) {
        const size_t slice = t[i].layers ? (size_t)t[i].size / (size_t)t[i].layers : 0;
        size_t used = 0;
        t[i].grad_offset = -1;
        for (int l = 0; l < t[i].layers; l++, k++) {
            if (!mask[k]) {
                if (goff) goff[k] = SIZE_MAX;
                continue;
            }
            if (t[i].grad_offset < 0) t[i].grad_offset = (int32_t)off;
            if (goff) goff[k] = off + used;
            used += slice;
        }
        off += PAD4(used);
    }
    return off;
}

/* ---- activations ---- */

/* One X row of a carve: the tensor's pointer into mem (NULL when absent, or when only
 * counting), then the offset past it. */
#define CARVE(name, n)                            \
    a->name = mem && (n) != 0 ? mem + off : NULL; \
    off += PAD4((size_t)(n));

static double layer_elems(const wf_dims *dd, double N, double Tk, double S, double BS, double x, double drop) {
    double C = dd->C, NH = dd->NH, KV = dd->KV, KC = dd->KC, F = dd->F, fc = dd->fc, qkn = dd->qkn, total = 0;
    double LU = dd->LU;
#define X(name, n) total += PAD4D(n);
    WF_LAYER_ACTS(X)
#undef X
    return total;
}

size_t wf_layer_carve(wf_layer_acts *a, wf_real *mem, const wf_dims *d, size_t N, size_t Tk, size_t S, size_t BS,
                      size_t x, size_t drop) {
    const size_t C = d->C, NH = d->NH, KV = d->KV, KC = d->KC, F = d->F, fc = d->fc, qkn = d->qkn, LU = d->LU;
    size_t off = 0;
    WF_LAYER_ACTS(CARVE)
    a->branch = NULL;
    a->out = d->post ? a->ln2 : a->res2;
    return off;
}

void wf_layer_skip_rows(wf_layer_acts *a, const wf_dims *d, size_t N, size_t Tk, size_t S, size_t x, size_t drop) {
    const size_t C = d->C, NH = d->NH, KV = d->KV, KC = d->KC, F = d->F, fc = d->fc, qkn = d->qkn, LU = d->LU;
    const size_t BS = 0; /* the source's keys and values are not the decoder's rows */
#define SKIP(name, n) \
    if (a->name) a->name += (n);
    WF_LAYER_ACTS(SKIP)
#undef SKIP
    if (a->branch) a->branch += N * C;
    a->out = d->post ? a->ln2 : a->res2;
}

double wf_plan_acts(const wf_dims *dd, double B, double T, double S) {
    double V = dd->V, C = dd->C, KC = dd->KC, L = dd->L, E = dd->E, F = dd->F, fc = dd->fc, xa = dd->xa, drop = dd->drop;
    double LR = dd->LR, R = T > S ? T : S, total = 0;
    double main_layer = layer_elems(dd, B * T, T, S, B * S, xa, drop);
    double enc_layer = layer_elems(dd, B * S, S, 0, 0, 0, drop);
#define X(name, n) total += PAD4D(n);
    WF_ACTS(X)
#undef X
    return total;
}

void wf_acts_carve(wf_acts *a, wf_real *mem, const wf_dims *dd, size_t B, size_t T, size_t S, size_t layer_elems[2]) {
    const size_t V = dd->V, C = dd->C, KC = dd->KC, L = dd->L, E = dd->E, F = dd->F, fc = dd->fc, xa = dd->xa,
                 drop = dd->drop, LR = dd->LR;
    const size_t R = T > S ? T : S;
    wf_layer_acts scratch;
    const size_t main_layer = wf_layer_carve(&scratch, NULL, dd, B * T, T, S, B * S, xa, drop);
    const size_t enc_layer = wf_layer_carve(&scratch, NULL, dd, B * S, S, 0, 0, 0, drop);
    layer_elems[WF_STACK_MAIN] = main_layer;
    layer_elems[WF_STACK_ENC] = enc_layer;
    size_t off = 0;
    WF_ACTS(CARVE)
}

/* ---- the generation block ---- */

/* X(name, type, elements) of the generation block besides its two layers' scratch; the
 * wf_dims letters and R (rows of layer scratch) are in scope. int32 ids live in
 * wf_real-sized slots: sizeof(int32_t) <= sizeof(wf_real). */
#define GEN_BUFS(X)                              \
    X(kcache,      wf_real, K * L * T * KC)      \
    X(vcache,      wf_real, K * L * T * KC)      \
    X(kalt,        wf_real, xa * K * L * T * KC) \
    X(valt,        wf_real, xa * K * L * T * KC) \
    X(xkv,         wf_real, xa * L * T * 2 * C)  \
    X(row.branch,  wf_real, R * C)               \
    X(enc.branch,  wf_real, xa * T * C)          \
    X(x,           wf_real, R * C)               \
    X(enc_x,       wf_real, xa * T * C)          \
    X(enc_out,     wf_real, xa * T * C)          \
    X(enc_mean,    wf_real, xa * T)              \
    X(enc_rstd,    wf_real, xa * T)              \
    X(lnf,         wf_real, C)                   \
    X(lnf_mean,    wf_real, 1)                   \
    X(lnf_rstd,    wf_real, 1)                   \
    X(logits,      wf_real, V)                   \
    X(probs,       wf_real, V)                   \
    X(logp,        wf_real, xa * K * V)          \
    X(score,       wf_real, xa * K)              \
    X(score_alt,   wf_real, xa * K)              \
    X(cand_score,  wf_real, xa * 2 * K)          \
    X(cand_beam,   int32_t, xa * 2 * K)          \
    X(cand_tok,    int32_t, xa * 2 * K)          \
    X(seq,         int32_t, xa * K * (T + 1))    \
    X(seq_alt,     int32_t, xa * K * (T + 1))    \
    X(best,        int32_t, xa * T)              \
    X(order,       int32_t, V)                   \
    X(window,      int32_t, T)

size_t wf_gen_carve(wf_gen *g, const wf_dims *d, wf_real *mem) {
    wf_gen scratch;
    if (!g) g = &scratch;
    const size_t T = d->T, C = d->C, KC = d->KC, V = d->V, L = d->L, K = d->K, xa = d->xa;
    const size_t R = T < WF_GEN_ROWS ? T : WF_GEN_ROWS;
    size_t off = wf_layer_carve(&g->row, mem, d, R, T, xa * T, 0, xa, 0);
    if (xa)
        off += wf_layer_carve(&g->enc, mem ? mem + off : NULL, d, T, T, 0, 0, 0, 0);
    else
        memset(&g->enc, 0, sizeof g->enc);
#define X(ptr, type, n)                                    \
    g->ptr = (type *)(mem && (n) != 0 ? mem + off : NULL); \
    off += PAD4((size_t)(n));
    GEN_BUFS(X)
#undef X
    g->n = 0;
    g->active = 0;
    return off;
}

double wf_plan_gen(const wf_dims *d) {
    const double T = d->T, C = d->C, KC = d->KC, V = d->V, L = d->L, K = d->K, xa = d->xa;
    const double R = T < WF_GEN_ROWS ? T : WF_GEN_ROWS;
    double total = layer_elems(d, R, T, xa * T, 0, xa, 0) + (xa ? layer_elems(d, T, T, 0, 0, 0, 0) : 0);
#define X(ptr, type, n) total += PAD4D(n);
    GEN_BUFS(X)
#undef X
    return total;
}

/* ---- memory ---- */

double wf_plan_tables(const wf_dims *d) {
    return d->rope ? (double)d->T * d->HS : (!d->pos ? (double)d->T * d->C : 0);
}

double wf_address_limit(void) {
#ifdef WF_MEMORY_LIMIT
    return (double)(WF_MEMORY_LIMIT);
#else
    return sizeof(void *) == 4 ? 4294967296.0 : 1e18;
#endif
}

double wf_memory_budget(void) { return wf_address_limit() * 0.95; }

wf_status wf_plan_fits(double model, double acts, int B, int T, char *msg, size_t cap) {
    if (model > wf_memory_budget())
        FAIL(WF_ERR_NOMEM, "the model needs %.2f GB before activations; this build addresses at most %.2f GB", model / 1e9,
             wf_address_limit() / 1e9);
    if (acts > wf_memory_budget())
        FAIL(WF_ERR_NOMEM, "a batch of %d x %d needs %.2f GB of activations; this build allows at most %.2f GB", B, T,
             acts / 1e9, wf_memory_budget() / 1e9);
    return WF_OK;
}

static double muon_scratch(double R, double C) {
    const double r = R < C ? R : C, c = R < C ? C : R;
    return 2 * r * c + 2 * r * r;
}

double wf_plan_muon(const wf_dims *d) {
    const double a = muon_scratch(d->C, d->C), f = muon_scratch(d->F, d->C);
    return a > f ? a : f;
}
