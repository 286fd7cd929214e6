/* safetensors files with a config.json, in Hugging Face layouts (hf.h), so that PyTorch
 * users load wasmformer models without conversion and wasmformer loads theirs
 * (docs/FORMATS.md): the container (a u64 header length, a JSON header of every tensor's
 * dtype, shape and byte range, the data), export, and import.
 *
 * Import is hardened like checkpoint loading: every size is checked against the bytes
 * present before anything is allocated for the model, and the model is built only when
 * nothing else can fail, so a bad file leaves m as it was. */
#include <stdio.h>
#include <stdlib.h>

#include "bytes.h"
#include "config.h"
#include "hf.h"
#include "model.h"


/* ---- the container ---- */

static const char *const DTYPE_NAMES[] = {"F32", "F16", "BF16", "F64"};
static const size_t DTYPE_BYTES[] = {4, 2, 2, 8};

static int by_name(const void *a, const void *b) { return strcmp(((const st_tensor *)a)->name, ((const st_tensor *)b)->name); }

static int by_range(const void *a, const void *b) {
    const st_tensor *x = *(const st_tensor *const *)a, *y = *(const st_tensor *const *)b;
    return x->begin != y->begin ? (x->begin < y->begin ? -1 : 1) : x->end != y->end ? (x->end < y->end ? -1 : 1) : 0;
}

/* The tensors' byte ranges tile the data [0, n): sorted by where they begin, each begins
 * where the one before ends. Overlapping ranges would let a small file describe a large
 * model (every tensor reading the same bytes); a gap hides bytes no tensor owns. */
static wf_status check_tiling(const st_file *f, uint64_t n, char *msg, size_t cap) {
    const st_tensor **by = wf_malloc_n((size_t)f->n, sizeof *by);
    if (!by) FAIL(WF_ERR_NOMEM, "out of memory reading %d tensor entries", f->n);
    for (int32_t i = 0; i < f->n; i++) by[i] = &f->t[i];
    qsort(by, (size_t)f->n, sizeof *by, by_range);
    uint64_t at = 0;
    wf_status s = WF_OK;
    for (int32_t i = 0; i < f->n && s == WF_OK; i++) {
        if (by[i]->begin < at)
            s = wf_fail(msg, cap, WF_ERR_FORMAT, "safetensors: tensors \"%s\" and \"%s\" share bytes (data_offsets [%llu, %llu] "
                        "and [%llu, %llu]); the format gives each tensor bytes of its own", by[i - 1]->name, by[i]->name,
                        (unsigned long long)by[i - 1]->begin, (unsigned long long)by[i - 1]->end,
                        (unsigned long long)by[i]->begin, (unsigned long long)by[i]->end);
        else if (by[i]->begin > at)
            s = wf_fail(msg, cap, WF_ERR_FORMAT, "safetensors: the data bytes [%llu, %llu) belong to no tensor (before \"%s\"); "
                        "the format leaves no gaps", (unsigned long long)at, (unsigned long long)by[i]->begin, by[i]->name);
        at = by[i]->end;
    }
    if (s == WF_OK && at != n)
        s = wf_fail(msg, cap, WF_ERR_FORMAT, "safetensors: the data bytes [%llu, %llu) belong to no tensor; the format leaves "
                    "no gaps", (unsigned long long)at, (unsigned long long)n);
    free(by);
    return s;
}

st_tensor *wf_st_find(st_file *f, const char *name) {
    st_tensor key;
    snprintf(key.name, sizeof key.name, "%s", name);
    return bsearch(&key, f->t, (size_t)f->n, sizeof *f->t, by_name);
}

wf_status wf_st_parse(const uint8_t *b, size_t n, st_file *out, char *msg, size_t cap) {
    memset(out, 0, sizeof *out);
    if (n < 8) FAIL(WF_ERR_FORMAT, "the safetensors file is %zu bytes; its header length alone takes 8", n);
    wf_reader r = wf_reader_of(b, n);
    uint64_t hlen = wf_get_u64(&r);
    if (hlen > n - 8) FAIL(WF_ERR_FORMAT, "the safetensors header says it is %llu bytes but the file has %zu after it (truncated?)",
                           (unsigned long long)hlen, n - 8);
    const uint8_t *data = b + 8 + hlen;
    const size_t data_len = n - 8 - (size_t)hlen;
    wf_json j;
    wf_status s = wf_json_parse(&j, (const char *)b + 8, (size_t)hlen, "the safetensors header", msg, cap);
    if (s == WF_OK && j.nodes[0].type != WF_J_OBJ) s = wf_fail(msg, cap, WF_ERR_FORMAT, "the safetensors header is not a JSON object");
    int32_t count = 0;
    for (int32_t c = s == WF_OK ? j.nodes[0].first : -1; c >= 0; c = j.nodes[c].next) count++;
    if (s == WF_OK && !(out->t = wf_calloc_n((size_t)count, sizeof(st_tensor))))
        s = wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory reading %d tensor entries", count);
    for (int32_t c = s == WF_OK ? j.nodes[0].first : -1; c >= 0 && s == WF_OK; c = j.nodes[c].next) {
        st_tensor *t = &out->t[out->n];
        if (wf_json_str(&j, j.nodes[c].key, t->name, sizeof t->name) < 0) {
            s = wf_fail(msg, cap, WF_ERR_FORMAT, "a tensor name in the safetensors header is longer than %d bytes", MAX_ST_NAME - 1);
            break;
        }
        if (!strcmp(t->name, "__metadata__")) continue; /* free-form strings */
        if (j.nodes[c].type != WF_J_OBJ) {
            s = wf_fail(msg, cap, WF_ERR_FORMAT, "safetensors: entry \"%s\" is not an object", t->name);
            break;
        }
        int32_t dt = wf_json_get(&j, c, "dtype"), sh = wf_json_get(&j, c, "shape"), off = wf_json_get(&j, c, "data_offsets");
        if (dt < 0 || sh < 0 || off < 0 || j.nodes[dt].type != WF_J_STR || j.nodes[sh].type != WF_J_ARR || j.nodes[off].type != WF_J_ARR) {
            s = wf_fail(msg, cap, WF_ERR_FORMAT, "safetensors: tensor \"%s\" needs a dtype string, a shape array and data_offsets", t->name);
            break;
        }
        t->dtype = ST_OTHER;
        for (int k = 0; k < ST_OTHER; k++)
            if (wf_json_is(&j, dt, DTYPE_NAMES[k])) t->dtype = k;
        t->elems = 1;
        for (int32_t d = j.nodes[sh].first; d >= 0 && s == WF_OK; d = j.nodes[d].next) {
            const wf_jnode *x = &j.nodes[d];
            if (t->ndim == MAX_ST_DIMS || x->type != WF_J_NUM || !x->is_int || x->ival < 0 || x->ival > INT32_MAX)
                s = wf_fail(msg, cap, WF_ERR_FORMAT, "safetensors: tensor \"%s\" has a bad shape", t->name);
            else if (x->ival && t->elems > (UINT64_MAX >> 4) / (uint64_t)x->ival)
                s = wf_fail(msg, cap, WF_ERR_FORMAT, "safetensors: tensor \"%s\" is absurdly large", t->name);
            else {
                t->shape[t->ndim++] = x->ival;
                t->elems *= (uint64_t)x->ival;
            }
        }
        if (s != WF_OK) break;
        int64_t o[2] = {-1, -1};
        int k = 0;
        for (int32_t d = j.nodes[off].first; d >= 0; d = j.nodes[d].next, k++)
            if (k < 2 && j.nodes[d].type == WF_J_NUM && j.nodes[d].is_int) o[k] = j.nodes[d].ival;
        if (k != 2 || o[0] < 0 || o[1] < o[0] || (uint64_t)o[1] > data_len) {
            s = wf_fail(msg, cap, WF_ERR_FORMAT, "safetensors: tensor \"%s\": data_offsets must be [begin, end] within the %zu data bytes",
                        t->name, data_len);
            break;
        }
        if (t->dtype != ST_OTHER && (uint64_t)(o[1] - o[0]) != t->elems * DTYPE_BYTES[t->dtype]) {
            s = wf_fail(msg, cap, WF_ERR_FORMAT, "safetensors: tensor \"%s\" has %lld bytes; its shape and dtype need %llu",
                        t->name, (long long)(o[1] - o[0]), (unsigned long long)(t->elems * DTYPE_BYTES[t->dtype]));
            break;
        }
        t->data = data + o[0];
        t->begin = (uint64_t)o[0];
        t->end = (uint64_t)o[1];
        out->n++;
    }
    free(j.nodes);
    if (s == WF_OK) {
        qsort(out->t, (size_t)out->n, sizeof *out->t, by_name);
        for (int32_t i = 1; i < out->n && s == WF_OK; i++)
            if (!strcmp(out->t[i].name, out->t[i - 1].name))
                s = wf_fail(msg, cap, WF_ERR_FORMAT, "safetensors: tensor \"%s\" appears twice", out->t[i].name);
        if (s == WF_OK) s = check_tiling(out, data_len, msg, cap);
    }
    if (s != WF_OK) {
        free(out->t);
        out->t = NULL;
    }
    return s;
}

float wf_st_get(const st_tensor *t, size_t i) {
    const uint8_t *p = t->data + i * DTYPE_BYTES[t->dtype];
    uint32_t u;
    float f;
    switch (t->dtype) {
    case ST_F32:
        u = wf_le32(p);
        memcpy(&f, &u, 4);
        return f;
    case ST_BF16:
        u = (uint32_t)(p[0] | p[1] << 8) << 16;
        memcpy(&f, &u, 4);
        return f;
    case ST_F16: {
        uint32_t h = (uint32_t)(p[0] | p[1] << 8), sign = (h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023;
        if (e == 31) u = sign | 0x7F800000u | m << 13;       /* inf, NaN */
        else if (e) u = sign | (e + 112) << 23 | m << 13;     /* normal: rebias 15 -> 127 */
        else if (!m) u = sign;                                /* zero */
        else {                                                /* subnormal: normalize */
            e = 113;
            while (!(m & 1024)) { m <<= 1; e--; }
            u = sign | e << 23 | (m & 1023) << 13;
        }
        memcpy(&f, &u, 4);
        return f;
    }
    default: {
        uint64_t v = (uint64_t)wf_le32(p) | (uint64_t)wf_le32(p + 4) << 32;
        double d;
        memcpy(&d, &v, 8);
        return (float)d;
    }
    }
}

/* ---- export ---- */

wf_status wf_model_export_safetensors(wf_model *m, uint8_t **st, int32_t *st_len, char **config, int32_t *config_len) {
    if (!m) return WF_ERR_ARG;
    if (!st || !st_len || !config || !config_len) return WF_ERR(m, WF_ERR_ARG, "output pointers must not be NULL");
    *st = NULL;
    *config = NULL;
    *st_len = *config_len = 0;
    wf_config mc;
    wf_tensor_info table[WF_N_PARAMS];
    if (wf_model_get_config(m, &mc) != WF_OK) return WF_ERR(m, WF_ERR_STATE, "the model has no weights yet: nothing to export");
    wf_tensor_table(&mc, table);
    const int layout = wf_hf_layout_of(&mc);
    const wf_hf_layout *lay = &wf_hf_layouts[layout];
    const int L = mc.n_layer;
    /* a Hugging Face class has no place for adapters: the file would be the base alone */
    if (mc.lora_rank > 0 && layout != WF_LAYOUT_NATIVE)
        return WF_ERR(m, WF_ERR_STATE, "the model has LoRA adapters, which a %s file has no place for: merge them into "
                      "the weights first to export the fine-tuned model, or export the base without them (before adding "
                      "them, or after removing them) and the adapters alone in PEFT's layout", lay->model_type);

    /* the header: every tensor the layout gives this config, with its byte range */
    wf_hf_entry *entries = malloc((size_t)lay->n_rows * (size_t)L * sizeof *entries);
    if (!entries) return WF_ERR(m, WF_ERR_NOMEM, "out of memory");
    const int n_entries = wf_hf_entries(lay, table, L, entries);
    /* byte counts in 64 bits: a sum that passes 4 GB is refused below, not wrapped */
    size_t hcap = 4096 + (size_t)n_entries * 200;
    uint64_t data_bytes = 0;
    wf_text h = {.p = malloc(hcap), .cap = hcap};
    if (!h.p) {
        free(entries);
        return WF_ERR(m, WF_ERR_NOMEM, "out of memory");
    }
    wf_text_put(&h, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (const wf_hf_entry *e = entries; e < entries + n_entries; e++) {
        const wf_tensor_info *ti = &table[e->row->param];
        char name[MAX_ST_NAME];
        int64_t shape[4];
        wf_hf_row_name(e->row, e->layer, name, sizeof name);
        int nd = wf_hf_row_shape(e->row, ti, shape);
        wf_hf_slice sl = wf_hf_slice_of(e->row, ti, L, e->layer);
        wf_text_put(&h, ",\"%s\":{\"dtype\":\"F32\",\"shape\":[", name);
        for (int d = 0; d < nd; d++) wf_text_put(&h, d ? ",%lld" : "%lld", (long long)shape[d]);
        const uint64_t bytes = (uint64_t)sl.rows * sl.cols * 4;
        wf_text_put(&h, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)data_bytes, (unsigned long long)(data_bytes + bytes));
        data_bytes += bytes;
    }
    wf_text_put(&h, "}");
    while (!h.overflow && (8 + h.n) % 8) wf_text_put(&h, " "); /* data starts 8-byte aligned, as safetensors writes it */
    char *cfg = malloc(4096);
    wf_text c = {.p = cfg, .cap = 4096};
    if (cfg) wf_hf_write_config(&c, &mc, layout);
    const uint64_t total = 8 + (uint64_t)h.n + data_bytes;
    if (!cfg || h.overflow || c.overflow || total > INT32_MAX) {
        free(entries);
        free(h.p);
        free(cfg);
        if (total > INT32_MAX) return WF_ERR(m, WF_ERR_UNSUPPORTED, "the safetensors file would be %.2f GB; at most 2 GB", total / 1e9);
        return WF_ERR(m, WF_ERR_NOMEM, "out of memory writing the safetensors header");
    }
    uint8_t *out = malloc((size_t)total);
    if (!out) {
        free(entries);
        free(h.p);
        free(cfg);
        return WF_ERR(m, WF_ERR_NOMEM, "could not allocate %.1f MB for the safetensors file", total / 1e6);
    }
    wf_writer w = {out, 0};
    wf_put_u64(&w, h.n);
    wf_put(&w, h.p, h.n);
    free(h.p);
    const wf_real *params = wf_model_block(m, WF_WEIGHTS);
    for (const wf_hf_entry *e = entries; e < entries + n_entries; e++) {
        const wf_hf_row *r = e->row;
        const wf_hf_slice sl = wf_hf_slice_of(r, &table[r->param], L, e->layer);
        const wf_real *src = params + sl.offset;
        for (size_t a = 0; a < (r->transpose ? sl.cols : sl.rows); a++)
            for (size_t b2 = 0; b2 < (r->transpose ? sl.rows : sl.cols); b2++) {
                const size_t row = wf_hf_row_of(r, a, sl.rows, mc.n_head); /* ours, for the file's row a */
                float v = (float)(r->transpose ? src[b2 * sl.cols + a] : src[row * sl.cols + b2]);
                wf_put_f32s(&w, &v, 1);
            }
    }
    free(entries);
    *st = out;
    *st_len = (int32_t)total;
    *config = cfg;
    *config_len = (int32_t)c.n;
    m->err[0] = 0;
    return WF_OK;
}

/* ---- import ---- */

static int ends_with(const char *name, const char *tail) {
    size_t n = strlen(name), k = strlen(tail);
    return n > k && !strcmp(name + n - k, tail);
}

/* Tensors a GPT-2 or GPT-NeoX file may carry that are not weights: the causal-mask buffers
 * older transformers versions saved. */
static int mask_buffer(int layout, const char *name) {
    if (layout == WF_LAYOUT_GPT2) return ends_with(name, ".attn.bias") || ends_with(name, ".attn.masked_bias");
    return layout == WF_LAYOUT_NEOX && (ends_with(name, ".attention.bias") || ends_with(name, ".attention.masked_bias"));
}

/* A Llama or GPT-NeoX file from older transformers carries each layer's RoPE frequencies,
 * which the model then used instead of the config's base: they must be the core's,
 * theta^(-2i/HS) (HS/2 of them), within the rounding of the dtype they were saved in. */
static wf_status rope_inv_freq(const st_tensor *t, int HS, double theta, char *msg, size_t cap) {
    if (t->dtype == ST_OTHER || t->ndim != 1 || t->shape[0] != HS / 2)
        FAIL(WF_ERR_FORMAT, "safetensors: \"%s\" must be %d floats (the head size is %d)", t->name, HS / 2, HS);
    const double rel = t->dtype == ST_BF16 ? 8e-3 : t->dtype == ST_F16 ? 1e-3 : 1e-5;
    for (int i = 0; i < HS / 2; i++) {
        double want = pow(theta, -2.0 * i / HS), got = wf_st_get(t, (size_t)i);
        if (!(fabs(got - want) <= rel * want))
            FAIL(WF_ERR_FORMAT, "safetensors: \"%s\"[%d] is %g, not %g^(-%d/%d): the RoPE base of config.json's "
                 "rope_theta", t->name, i, got, theta, 2 * i, HS);
    }
    return WF_OK;
}

/* Finds the file's tensor of every entry (found[p]), checks its shape and values, and that
 * the file holds nothing else a model of this config would not have. */
static wf_status plan_import(const wf_config *cfg, int layout, const wf_tensor_info *table, st_file *f,
                             const wf_hf_entry *entries, int n, st_tensor **found, char *msg, size_t cap) {
    const wf_hf_layout *lay = &wf_hf_layouts[layout];
    for (int p = 0; p < n; p++) {
        const wf_hf_row *r = entries[p].row;
        const wf_tensor_info *ti = &table[r->param];
        char name[MAX_ST_NAME];
        wf_hf_row_name(r, entries[p].layer, name, sizeof name);
        st_tensor *t = wf_st_find(f, name);
        size_t pre = lay->optional_prefix ? strlen(lay->optional_prefix) : 0;
        if (!t && pre && !strncmp(name, lay->optional_prefix, pre)) t = wf_st_find(f, name + pre);
        if (!t) FAIL(WF_ERR_FORMAT, "safetensors: tensor \"%s\" is missing (a %s model of this config has it)", name, lay->model_type);
        if (t->dtype == ST_OTHER) FAIL(WF_ERR_UNSUPPORTED, "safetensors: tensor \"%s\": dtype is not F32, F16, BF16 or F64", t->name);
        int64_t shape[4];
        int nd = wf_hf_row_shape(r, ti, shape);
        int same = t->ndim == nd;
        for (int d = 0; same && d < nd; d++) same = t->shape[d] == shape[d];
        if (!same) {
            char want[64], got[64];
            size_t a = 0, b = 0;
            for (int d = 0; d < nd; d++) a += (size_t)snprintf(want + a, sizeof want - a, d ? ", %lld" : "%lld", (long long)shape[d]);
            got[0] = 0;
            for (int d = 0; d < t->ndim && b < sizeof got - 24; d++) b += (size_t)snprintf(got + b, sizeof got - b, d ? ", %lld" : "%lld", (long long)t->shape[d]);
            FAIL(WF_ERR_FORMAT, "safetensors: tensor \"%s\" has shape [%s]; config.json gives [%s]", t->name, got, want);
        }
        t->used = 1;
        found[p] = t;
    }
    for (int32_t i = 0; i < f->n; i++) {
        st_tensor *t = &f->t[i];
        if (t->used) continue;
        if (mask_buffer(layout, t->name)) continue;
        if ((layout == WF_LAYOUT_LLAMA && ends_with(t->name, ".self_attn.rotary_emb.inv_freq")) ||
            (layout == WF_LAYOUT_NEOX && ends_with(t->name, ".attention.rotary_emb.inv_freq"))) {
            wf_status s = rope_inv_freq(t, cfg->d_model / cfg->n_head, cfg->rope_theta, msg, cap);
            if (s != WF_OK) return s;
            continue;
        }
        if (lay->embedding && cfg->tied_head && !strcmp(t->name, lay->head)) {
            /* a state_dict of a tied model repeats the embedding as the head: it must equal it */
            st_tensor *wte = wf_st_find(f, lay->embedding);
            size_t pre = lay->optional_prefix ? strlen(lay->optional_prefix) : 0;
            if (!wte && pre) wte = wf_st_find(f, lay->embedding + pre);
            int same = wte && wte->dtype != ST_OTHER && t->dtype != ST_OTHER && t->elems == wte->elems;
            for (uint64_t k = 0; same && k < t->elems; k++) same = wf_st_get(t, k) == wf_st_get(wte, k);
            if (!same) FAIL(WF_ERR_FORMAT, "safetensors: %s differs from the embedding but config.json ties them", lay->head);
            continue;
        }
        FAIL(WF_ERR_FORMAT, "safetensors: tensor \"%s\" is not part of a %s model of this config", t->name, lay->model_type);
    }
    for (int p = 0; p < n; p++) {
        const st_tensor *t = found[p];
        for (uint64_t k = 0; k < t->elems; k++) {
            float v = wf_st_get(t, k);
            if (!wf_finite(v)) FAIL(WF_ERR_FORMAT, "safetensors: tensor \"%s\": value %llu is not a finite float32", t->name, (unsigned long long)k);
        }
    }
    return WF_OK;
}

wf_status wf_model_import_safetensors(wf_model *m, const char *config, int32_t config_len, const uint8_t *st, int32_t st_len) {
    if (!m) return WF_ERR_ARG;
    if (!config || !st || config_len < 0 || st_len < 0) return WF_ERR(m, WF_ERR_ARG, "config.json and the safetensors bytes must be given");
    wf_config cfg;
    int layout = WF_LAYOUT_NATIVE;
    char why[200];
    wf_status s = wf_hf_read_config(config, (size_t)config_len, &cfg, &layout, m->err, sizeof m->err);
    if (s != WF_OK) return s;
    if ((s = wf_config_check(&cfg, why, sizeof why)) != WF_OK)
        return WF_ERR(m, s == WF_ERR_UNSUPPORTED ? s : WF_ERR_FORMAT, "config.json describes an invalid model: %s", why);
    wf_tensor_info table[WF_N_PARAMS];
    if (wf_tensor_table(&cfg, table) != WF_OK) return WF_ERR(m, WF_ERR_FORMAT, "config.json describes more than 2^31 - 1 parameters");
    st_file f;
    if ((s = wf_st_parse(st, (size_t)st_len, &f, m->err, sizeof m->err)) != WF_OK) return s;
    const wf_hf_layout *lay = &wf_hf_layouts[layout];
    wf_hf_entry *entries = malloc((size_t)lay->n_rows * (size_t)cfg.n_layer * sizeof *entries);
    st_tensor **found = malloc((size_t)lay->n_rows * (size_t)cfg.n_layer * sizeof *found);
    const int n = entries ? wf_hf_entries(lay, table, cfg.n_layer, entries) : 0;
    if (!entries || !found) s = WF_ERR(m, WF_ERR_NOMEM, "out of memory");
    if (s == WF_OK) s = plan_import(&cfg, layout, table, &f, entries, n, found, m->err, sizeof m->err);
    /* every tensor is present with its shape, so the file holds at least 2 bytes per
     * parameter: the model built below is bounded by the input; the entries cover every
     * tensor the config has, so each of its weights is written */
    if (s == WF_OK) s = wf_model_init_zero(m, &cfg);
    if (s == WF_OK) {
        wf_real *weights = wf_model_block(m, WF_WEIGHTS);
        for (int p = 0; p < n; p++) {
            const wf_hf_row *r = entries[p].row;
            const wf_hf_slice sl = wf_hf_slice_of(r, &table[r->param], cfg.n_layer, entries[p].layer);
            wf_real *dst = weights + sl.offset;
            size_t k = 0;
            for (size_t a = 0; a < (r->transpose ? sl.cols : sl.rows); a++)
                for (size_t b = 0; b < (r->transpose ? sl.rows : sl.cols); b++, k++) {
                    wf_real v = wf_st_get(found[p], k);
                    if (r->transpose) dst[b * sl.cols + a] = v;
                    else dst[wf_hf_row_of(r, a, sl.rows, cfg.n_head) * sl.cols + b] = v;
                }
        }
        m->origin = WF_ORIGIN_SAFETENSORS;
    }
    free(entries);
    free(found);
    free(f.t);
    return s;
}
