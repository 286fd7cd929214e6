/* Changing a model in place (model.h): its trainable mask, LoRA's config (adapters added,
 * kept, merged or dropped) and its weights' quantization. Each builds what changes aside
 * (wf_model_make) and swaps it in only when nothing can fail any more. */
#include <stdlib.h>

#include "config.h"
#include "model.h"

/* ---- fine-tuning: the trainable mask and LoRA's config ---- */

/* Elements of slice k (tensor i's layer) of table t. */
static size_t slice_elems(const wf_tensor_info *t) { return t->layers ? (size_t)t->size / (size_t)t->layers : 0; }

/* AdamW's (or Muon's) moments of every slice that trains in both a and b (tables of the same
 * tensor sizes where it matters: slices of tensors whose sizes differ are left at zero). */
static void copy_moments(wf_model *to, const wf_model *from) {
    if (!to->block[WF_ADAM_M] || !from->block[WF_ADAM_M]) return;
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

/* The grads, m and v blocks of a new mask (when m has its training state); nothing changes on
 * failure. */
static wf_status relayout(wf_model *m, const uint8_t *mask) {
    wf_model next = *m; /* the tables and blocks of m, with the three blocks replaced */
    next.train = wf_malloc_n((size_t)m->n_slices + 1, 1);
    next.goff = wf_malloc_n((size_t)m->n_slices + 1, sizeof(size_t));
    for (int b = WF_GRADS; b <= WF_ADAM_V; b++) next.block[b] = NULL;
    int ok = next.train && next.goff;
    if (ok) {
        memcpy(next.train, mask, (size_t)m->n_slices);
        next.gstride = wf_plan_train(next.tensors, mask, next.goff);
        for (int b = WF_GRADS; ok && m->block[WF_GRADS] && b <= WF_ADAM_V; b++)
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
    wf_model_point(m);
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
        for (int i = 0; i < WF_N_PARAMS; i++)
            if (m->tensors[i].dtype != WF_QUANT_F32 && memchr(set + m->slice0[i], 1, (size_t)m->tensors[i].layers))
                return WF_ERR(m, WF_ERR_STATE, "\"%s\" is quantized: quantized weights do not train (train LoRA adapters "
                              "over them, or quantize the model back to float32 first)", m->tensors[i].name);
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
    if (merge && m->d.LR) { /* quantized weights cannot take an update in place */
        wf_tensor_info dropped[WF_N_PARAMS];
        wf_plan_tensors(&d, dropped);
        for (int enc = 0; enc < 2; enc++)
            for (int t = 0; t < WF_LORA_N; t++) {
                const wf_lora_site site = wf_lora_site_of(&m->d, t, enc);
                if (m->tensors[site.a].size && dropped[site.a].size != m->tensors[site.a].size &&
                    m->tensors[site.w].dtype != WF_QUANT_F32)
                    return WF_ERR(m, WF_ERR_STATE, "the adapters on \"%s\" cannot be merged: its weights are quantized "
                                  "(export the adapters, or quantize the model back to float32 first); the model is "
                                  "unchanged", m->tensors[site.w].name);
            }
    }
    wf_tensor_info table[WF_N_PARAMS];
    wf_plan_tensors(&d, table);
    uint8_t *mask = NULL;
    if (m->d.LR && !(mask = wf_malloc_n((size_t)wf_plan_slices(table) + 1, 1)))
        return WF_ERR(m, WF_ERR_NOMEM, "out of memory");
    for (int i = 0, k = 0; mask && i < WF_N_PARAMS; i++)
        for (int l = 0; l < table[i].layers; l++, k++)
            mask[k] = m->tensors[i].size == table[i].size ? m->train[m->slice0[i] + l] : 1;
    wf_model next;
    s = wf_model_make(m, &next, cfg, mask, m->qtype);
    free(mask);
    if (s == WF_OK && m->block[WF_GRADS] && (s = wf_model_alloc_train(&next, m->err, sizeof m->err)) != WF_OK) wf_model_release(&next);
    if (s != WF_OK) return s;
    wf_real *sb = NULL;
    if (merge && m->d.LR) {
        const int widest = m->d.C > m->d.F ? m->d.C : m->d.F;
        size_t n; /* d_ff 2^20 times rank 2^16: past a 32-bit size_t, though the adapters fit */
        if (!wf_mul_ok((size_t)widest, (size_t)m->d.LR, &n) || !(sb = wf_alloc(n, sizeof(wf_real)))) {
            wf_model_release(&next);
            return WF_ERR(m, WF_ERR_NOMEM, "out of memory merging the adapters");
        }
    }
    for (int i = 0; i < WF_N_PARAMS; i++)
        if (!wf_param_lora(i) && m->tensors[i].size && m->tensors[i].offset >= 0)
            memcpy(next.block[WF_WEIGHTS] + next.tensors[i].offset, m->block[WF_WEIGHTS] + m->tensors[i].offset,
                   (size_t)m->tensors[i].size * sizeof(wf_real));
    if (m->qbytes) memcpy(next.qmem, m->qmem, m->qbytes); /* adapters are never quantized: the same layout */
    wf_model_init_lora(&next);
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
    wf_model_adopt(m, &next);
    return WF_OK;
}

/* ---- quantization ---- */

/* Row r of tensor i of `from` into the same row of `to`, from its wf_quant to `to`'s (a float32
 * or a Q8_0 one back to blocks through tmp [cols]): exact unless blocks of fewer bits. */
static void convert_row(wf_model *to, const wf_model *from, int i, size_t r, wf_real *tmp) {
    const wf_tensor_info *a = &from->tensors[i], *b = &to->tensors[i];
    const size_t cols = (size_t)a->shape[a->ndim - 1];
    const size_t ra = wf_quant_row_bytes(a->dtype, cols), rb = wf_quant_row_bytes(b->dtype, cols);
    const uint8_t *src = a->dtype == WF_QUANT_F32 ? NULL : from->qmem + from->qoff[i] + r * ra;
    uint8_t *dst = b->dtype == WF_QUANT_F32 ? NULL : to->qmem + to->qoff[i] + r * rb;
    const wf_real *x = src ? NULL : from->block[WF_WEIGHTS] + a->offset + r * cols;
    wf_real *y = dst ? NULL : to->block[WF_WEIGHTS] + b->offset + r * cols;
    if (a->dtype == b->dtype)
        memcpy(dst ? (void *)dst : (void *)y, src ? (const void *)src : (const void *)x, dst ? rb : cols * sizeof(wf_real));
    else if (!src)
        wf_quantize_row(dst, x, cols, b->dtype);
    else if (!dst)
        wf_dequantize_row(y, src, cols, a->dtype);
    else if (a->dtype == WF_QUANT_Q4_0) /* to Q8_0: the same values */
        wf_q4_to_q8_row(dst, src, cols);
    else {
        wf_dequantize_row(tmp, src, cols, a->dtype);
        wf_quantize_row(dst, tmp, cols, b->dtype);
    }
}

wf_status wf_model_quantize(wf_model *m, int32_t type) {
    WF_NEED_READY(m);
    if (type < WF_QUANT_F32 || type > WF_QUANT_Q4_0)
        return WF_ERR(m, WF_ERR_ARG, "quantization type %d is not 0 (float32), 1 (Q8_0) or 2 (Q4_0)", type);
    uint8_t qt[WF_N_PARAMS];
    int same = 1;
    for (int i = 0; i < WF_N_PARAMS; i++) {
        const wf_tensor_info *t = &m->tensors[i];
        qt[i] = t->size && wf_param_quantizable(i) ? (uint8_t)type : WF_QUANT_F32;
        if (qt[i] != WF_QUANT_F32 && t->shape[t->ndim - 1] % 32)
            return WF_ERR(m, WF_ERR_UNSUPPORTED, "\"%s\" has rows of %d weights; quantized rows are whole blocks of 32 "
                          "(d_model and d_ff must be multiples of 32)", t->name, t->shape[t->ndim - 1]);
        same &= qt[i] == t->dtype || !t->size;
    }
    if (same) {
        m->err[0] = 0;
        return WF_OK;
    }
    /* quantized slices freeze; the rest keep their mask (and their moments) */
    uint8_t *mask = wf_malloc_n((size_t)m->n_slices + 1, 1);
    const int widest = m->d.C > m->d.F ? m->d.C : m->d.F;
    wf_real *tmp = wf_alloc((size_t)widest, sizeof(wf_real));
    if (!mask || !tmp) {
        free(mask);
        wf_free(tmp);
        return WF_ERR(m, WF_ERR_NOMEM, "out of memory");
    }
    memcpy(mask, m->train, (size_t)m->n_slices);
    wf_model next;
    wf_status s = wf_model_make(m, &next, &m->cfg, mask, qt);
    free(mask);
    if (s == WF_OK && m->block[WF_GRADS] && (s = wf_model_alloc_train(&next, m->err, sizeof m->err)) != WF_OK)
        wf_model_release(&next);
    if (s != WF_OK) {
        wf_free(tmp);
        return s;
    }
    for (int i = 0; i < WF_N_PARAMS; i++) {
        const wf_tensor_info *t = &m->tensors[i];
        if (!t->size) continue;
        const size_t rows = (size_t)t->size / (size_t)t->shape[t->ndim - 1];
        for (size_t r = 0; r < rows; r++) convert_row(&next, m, i, r, tmp);
    }
    wf_free(tmp);
    copy_moments(&next, m);
    if (m->run) m->run_ops->end(m); /* what trains changed: the run is over */
    next.opt = m->opt;
    next.step = m->step;
    memcpy(next.rng_split, m->rng_split, sizeof next.rng_split);
    next.origin = m->origin;
    wf_model_adopt(m, &next);
    return WF_OK;
}
