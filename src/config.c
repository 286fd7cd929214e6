/* The config and the training settings: defaults and checks, both from the tables in
 * include/wasmformer.h (WF_CONFIG_FIELDS, WF_OPTIM_FIELDS). What a row cannot say alone
 * (one field against another) is checked by hand at the end of wf_config_check. Then what a
 * config implies, from the plan: its tensor table and its memory. */
#include <stdio.h>

#include "config.h"
#include "presets.h"

/* ---- the tables as data ---- */

#define ENUM_ROW(s, n, js, def, list, doc) {.name = #n, .kind = 'e', .offset = offsetof(s, n), .names = list},
#define BOOL_ROW(s, n, js, def, doc) {.name = #n, .kind = 'b', .offset = offsetof(s, n), .hi = 1},
#define INT_ROW(s, n, js, def, min, max, sc, doc) \
    {.name = #n, .kind = 'i', .offset = offsetof(s, n), .lo = min, .hi = max, .scope = sc},
#define REAL_ROW(s, n, js, def, min, max, bounds, doc) \
    {.name = #n, .kind = 'f', .offset = offsetof(s, n), .lo = min, .hi = max, .names = bounds},
#define SEED_ROW(s, n, js, def, doc) {.name = #n, .kind = 'u', .offset = offsetof(s, n)},
#define C_ENUM(...) ENUM_ROW(wf_config, __VA_ARGS__)
#define C_BOOL(...) BOOL_ROW(wf_config, __VA_ARGS__)
#define C_INT(...) INT_ROW(wf_config, __VA_ARGS__)
#define C_REAL(...) REAL_ROW(wf_config, __VA_ARGS__)
#define C_SEED(...) SEED_ROW(wf_config, __VA_ARGS__)
#define O_INT(...) INT_ROW(wf_optim, __VA_ARGS__)
#define O_REAL(...) REAL_ROW(wf_optim, __VA_ARGS__)
const wf_field wf_config_fields[WF_N_CONFIG] = {WF_CONFIG_FIELDS(C_ENUM, C_BOOL, C_INT, C_REAL, C_SEED)};
const wf_field wf_optim_fields[WF_N_OPTIM] = {WF_OPTIM_FIELDS(O_INT, O_REAL)};
_Static_assert(sizeof(wf_config) == 4 * WF_N_CONFIG && sizeof(wf_optim) == 4 * WF_N_OPTIM,
               "every field is 4 bytes: the checkpoint and JavaScript read the structs as words");

/* ---- defaults ---- */

#define SET(name, js, def, ...) out->name = def;
void wf_config_default(wf_config *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    WF_CONFIG_FIELDS(SET, SET, SET, SET, SET)
}

void wf_optim_default(wf_optim *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    WF_OPTIM_FIELDS(SET, SET)
}
#undef SET

/* The run's defaults, as the header's wf_run comment gives them. */
static void run_default(wf_run *r) {
    *r = (wf_run){.steps = 1000, .seconds = 0, .warmup = -1, .decay_steps = -1, .warmup_fraction = 0.05f,
                  .val_fraction = 0.1f, .eval_interval = 100, .eval_batches = 4, .batch_size = 8, .context = 0,
                  .rollback = 1, .seed = -1};
}

wf_status wf_preset(const char *name, wf_config *c, wf_optim *o, wf_run *r) {
    if (c) wf_config_default(c);
    if (o) wf_optim_default(o);
    if (r) run_default(r);
    if (!name) return WF_OK;
#define PRESET(id, L, NH, C, F, T, pos, B, lr_, beta2_, muon_, steps_)                                              if (!strcmp(name, #id)) {                                                                                            if (c) c->n_layer = L, c->n_head = NH, c->d_model = C, c->d_ff = F, c->context = T, c->positions = pos;         if (o) o->lr = lr_, o->beta2 = beta2_, o->muon = muon_;                                                           if (r) r->batch_size = B, r->steps = steps_;                                                                     return WF_OK;                                                                                                }
    WF_PRESETS(PRESET)
#undef PRESET
    return WF_ERR_ARG; /* no such preset: the defaults */
}

/* ---- enum names ---- */

size_t wf_enum_name(const char *names, int32_t i, const char **at) {
    const char *p = names;
    for (int32_t k = 0; *p; k++) {
        size_t n = strcspn(p, " ");
        if (k == i) {
            *at = p;
            return n;
        }
        p += n;
        p += *p == ' ';
    }
    return 0;
}

int32_t wf_enum_value(const char *names, const char *name) {
    const char *at;
    size_t n;
    for (int32_t i = 0; (n = wf_enum_name(names, i, &at)) > 0; i++)
        if (n == strlen(name) && !memcmp(at, name, n)) return i;
    return -1;
}

/* ---- checks ---- */

/* The first field of a table outside its row's range; ed: an encoder-decoder's config
 * (WF_ED rows are checked). */
static wf_status check_fields(const void *s, const wf_field *fields, int n, int ed, wf_status status, char *msg,
                              size_t cap) {
    for (const wf_field *f = fields; f < fields + n; f++) {
        if (f->scope == WF_ED && !ed) continue;
        int32_t iv;
        float fv;
        const char *at;
        memcpy(&iv, (const char *)s + f->offset, 4);
        memcpy(&fv, (const char *)s + f->offset, 4);
        if (f->kind == 'e' && !wf_enum_name(f->names, iv, &at)) {
            char list[160] = "";
            size_t len, o = 0;
            for (int32_t i = 0; (len = wf_enum_name(f->names, i, &at)) > 0 && o < sizeof list; i++)
                o += (size_t)snprintf(list + o, sizeof list - o, "%s%.*s (%d)", i ? ", " : "", (int)len, at, i);
            return wf_fail(msg, cap, status, "%s %d is not one of %s", f->name, iv, list);
        }
        if (f->kind == 'b' && iv != 0 && iv != 1) return wf_fail(msg, cap, status, "%s must be 0 or 1, not %d", f->name, iv);
        if (f->kind == 'i' && (iv < f->lo || iv > f->hi))
            return wf_fail(msg, cap, status, "%s %d is outside [%.0f, %.0f]", f->name, iv, f->lo, f->hi);
        if (f->kind == 'f') {
            const int open_lo = f->names[0] == '(', open_hi = f->names[1] == ')';
            const int ok = wf_finite(fv) && (open_lo ? fv > f->lo : fv >= f->lo) && (open_hi ? fv < f->hi : fv <= f->hi);
            if (ok) continue;
            if (f->hi == FLT_MAX)
                return wf_fail(msg, cap, status, "%s must be %s %g and finite, not %g", f->name, open_lo ? ">" : ">=", f->lo,
                               (double)fv);
            return wf_fail(msg, cap, status, "%s must be in %c%g, %g%c, not %g", f->name, f->names[0], f->lo, f->hi,
                           f->names[1], (double)fv);
        }
    }
    return WF_OK;
}

#define CHECK(cond, ...)                                                                         \
    do {                                                                                         \
        if (!(cond)) return wf_fail(msg, msg ? (size_t)cap : 0, WF_ERR_CONFIG, __VA_ARGS__); \
    } while (0)

wf_status wf_config_check(const wf_config *c, char *msg, int32_t cap) {
    if (cap < 0) cap = 0;
    if (msg && cap > 0) msg[0] = 0;
    if (!c) return wf_fail(msg, msg ? (size_t)cap : 0, WF_ERR_ARG, "config is NULL");
    const int ed = c->arch == WF_ARCH_ENCODER_DECODER;
    wf_status s = check_fields(c, wf_config_fields, WF_N_CONFIG, ed, WF_ERR_CONFIG, msg, msg ? (size_t)cap : 0);
    if (s != WF_OK) return s;
    CHECK(c->n_head <= c->d_model, "n_head %d is outside [1, d_model = %d]", c->n_head, c->d_model);
    CHECK(c->d_model % c->n_head == 0, "n_head %d does not divide d_model %d", c->n_head, c->d_model);
    CHECK(c->n_kv_head == 0 || c->n_head % c->n_kv_head == 0,
          "n_kv_head %d does not divide n_head %d: query heads share key/value heads in equal groups", c->n_kv_head,
          c->n_head);
    CHECK(c->positions != WF_POS_ROPE || (c->d_model / c->n_head) % 2 == 0,
          "rope pairs channel i with i + HS/2, so the head size d_model / n_head = %d must be even", c->d_model / c->n_head);
    CHECK((c->lora_rank > 0) == (c->lora_targets != 0),
          "lora_rank %d and lora_targets %d: adapters need both a rank and targets (or neither)", c->lora_rank,
          c->lora_targets);
    CHECK(!(c->lora_targets & (1 << WF_LORA_UP)) || c->activation == WF_ACT_SWIGLU,
          "lora_targets has bit %d (up), SwiGLU's up rows; this model's activation has none (bit %d, fc, adapts its "
          "first feed-forward matrix)", 1 << WF_LORA_UP, 1 << WF_LORA_FC);
    CHECK(ed || c->n_enc_layer == 0, "n_enc_layer is %d, but only an encoder-decoder has a separate encoder (arch 2); "
          "the layers of a %s are n_layer", c->n_enc_layer, c->arch == WF_ARCH_DECODER ? "decoder" : "encoder");
    return WF_OK;
}

#undef CHECK

wf_status wf_optim_check(const wf_optim *o, char *msg, int32_t cap) {
    const size_t n = msg && cap > 0 ? (size_t)cap : 0;
    if (msg && n > 0) msg[0] = 0;
    if (!o) return wf_fail(msg, n, WF_ERR_ARG, "optimizer settings are NULL");
    return check_fields(o, wf_optim_fields, WF_N_OPTIM, 0, WF_ERR_ARG, msg, n);
}

/* ---- what a config implies: its tensor table, its memory ---- */

wf_status wf_tensor_table(const wf_config *cfg, wf_tensor_info out[WF_N_PARAMS]) {
    wf_status s = wf_config_check(cfg, NULL, 0);
    if (s != WF_OK) return s;
    wf_dims d;
    wf_dims_of(cfg, &d);
    if (wf_plan_params(&d, 1) > 2147483647.0) return WF_ERR_CONFIG; /* int32 sizes would overflow */
    wf_plan_tensors(&d, out);
    return WF_OK;
}

wf_status wf_config_memory(const wf_config *cfg, int32_t B, int32_t T, wf_memory *out, char *msg, int32_t cap) {
    wf_status s = wf_config_check(cfg, msg, cap);
    if (s != WF_OK) return s;
    if (!out) return wf_fail(msg, msg && cap > 0 ? (size_t)cap : 0, WF_ERR_ARG, "out is NULL");
    if (B < 0 || T < 0 || T > cfg->context)
        return wf_fail(msg, msg && cap > 0 ? (size_t)cap : 0, WF_ERR_ARG, "B = %d and T = %d must be >= 0, T at most the context %d", B, T,
                       cfg->context);
    wf_dims d;
    wf_dims_of(cfg, &d);
    double bytes = sizeof(wf_real);
    double P = wf_plan_params(&d, 1), G = P;
    if (d.LR && P <= 2147483647.0) {
        /* adapters train alone: the gradients and moments of theirs only */
        wf_tensor_info t[WF_N_PARAMS];
        wf_plan_tensors(&d, t);
        G = 0;
        for (int i = 0; i < WF_N_PARAMS; i++) G += wf_param_lora(i) ? PAD4D(t[i].size) : 0;
    }
    out->params = P * bytes;
    out->grads = G * bytes;
    out->optimizer = (2 * G + wf_plan_muon(&d)) * bytes;
    out->activations = (B > 0 && T > 0) ? wf_plan_acts(&d, B, T, d.xa ? T : 0) * bytes : 0;
    out->inference = wf_plan_gen(&d) * bytes + wf_plan_tables(&d) * bytes;
    out->total = out->params + out->grads + out->optimizer + out->activations + out->inference;
    out->count = wf_plan_params(&d, 0);
    out->budget = wf_memory_budget();
    return wf_plan_fits(out->total - out->activations, out->activations, B, T, msg, msg && cap > 0 ? (size_t)cap : 0);
}
