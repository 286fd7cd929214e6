/* LoRA adapters in PEFT's layout (docs/FORMATS.md): adapter_model.safetensors, a lora_A
 * [r, in] and a lora_B [out, r] per adapted module of a Hugging Face class, named
 * base_model.model.<module>.lora_A.weight, and adapter_config.json (peft_type LORA, r,
 * lora_alpha, target_modules...). PEFT adds scaling * (x A^T) B^T to the module's output with
 * scaling = lora_alpha / r (use_rslora: / sqrt(r)).
 *
 * Llama's modules are ours one for one: q_proj, k_proj, v_proj (the row parts of our packed
 * qkvw), o_proj, gate_proj and up_proj (fcw's halves), down_proj. GPT-2 has one c_attn for q,
 * k and v: our separate adapters of rank r become one of rank P r (P adapted parts), A their
 * As stacked, B block-structured (part p's rows of c_attn read only columns [p r, (p + 1) r)),
 * with rank_pattern and alpha_pattern {c_attn: P r, P alpha} keeping the scale alpha / r.
 * GPT-NeoX's query_key_value is the same fused module with its rows regrouped by head (hf.h),
 * and so are its lora_B's rows; dense, dense_h_to_4h and dense_4h_to_h are ours one for one.
 * Import takes any ranks and scales: each module's A and B fill the first rows and columns of
 * ours (rank the largest), its scale folded into B. A fused module's A goes to q, k and v
 * alike, unless its B has the block structure export writes (each adapted part's rows read
 * only their own P-th of the columns): then each part gets its own block back, at rank r / P,
 * which is what was trained (an 8 / 16 adapter comes back as rank 8, alpha 16, not 24 / 48).
 * Import checks everything (names, shapes, values, the config) before the model changes. */
#include <stdio.h>
#include <stdlib.h>

#include "bytes.h"
#include "hf.h"
#include "model.h"
#include "unicode.h"

#define PREFIX "base_model.model."

/* A module of a Hugging Face class that PEFT adapts: its name (%d: the layer), the name
 * target_modules gives it, and our adapters it holds: parts of them from `first`. */
typedef struct {
    const char *name, *target;
    int first, parts;
    int heads; /* its rows regrouped by head (GPT-NeoX's query_key_value) */
} peft_module;

static const peft_module LLAMA_MODULES[] = {
    {"model.layers.%d.self_attn.q_proj", "q_proj", WF_LORA_Q, 1, 0},
    {"model.layers.%d.self_attn.k_proj", "k_proj", WF_LORA_K, 1, 0},
    {"model.layers.%d.self_attn.v_proj", "v_proj", WF_LORA_V, 1, 0},
    {"model.layers.%d.self_attn.o_proj", "o_proj", WF_LORA_O, 1, 0},
    {"model.layers.%d.mlp.gate_proj", "gate_proj", WF_LORA_FC, 1, 0},
    {"model.layers.%d.mlp.up_proj", "up_proj", WF_LORA_UP, 1, 0},
    {"model.layers.%d.mlp.down_proj", "down_proj", WF_LORA_DOWN, 1, 0},
};
static const peft_module GPT2_MODULES[] = {
    {"transformer.h.%d.attn.c_attn", "c_attn", WF_LORA_Q, 3, 0},
    {"transformer.h.%d.attn.c_proj", "attn.c_proj", WF_LORA_O, 1, 0},
    {"transformer.h.%d.mlp.c_fc", "c_fc", WF_LORA_FC, 1, 0},
    {"transformer.h.%d.mlp.c_proj", "mlp.c_proj", WF_LORA_DOWN, 1, 0},
};
static const peft_module NEOX_MODULES[] = {
    {"gpt_neox.layers.%d.attention.query_key_value", "query_key_value", WF_LORA_Q, 3, 1},
    {"gpt_neox.layers.%d.attention.dense", "dense", WF_LORA_O, 1, 0},
    {"gpt_neox.layers.%d.mlp.dense_h_to_4h", "dense_h_to_4h", WF_LORA_FC, 1, 0},
    {"gpt_neox.layers.%d.mlp.dense_4h_to_h", "dense_4h_to_h", WF_LORA_DOWN, 1, 0},
};
#define N_OF(a) ((int)(sizeof a / sizeof *a))

/* The modules of a layout (NULL: none, the wasmformer layout). */
static const peft_module *modules_of(int layout, int *n) {
    static const struct { const peft_module *mods; int n; } of[] = {
        [WF_LAYOUT_GPT2] = {GPT2_MODULES, N_OF(GPT2_MODULES)},
        [WF_LAYOUT_LLAMA] = {LLAMA_MODULES, N_OF(LLAMA_MODULES)},
        [WF_LAYOUT_NEOX] = {NEOX_MODULES, N_OF(NEOX_MODULES)},
        [WF_LAYOUT_NATIVE] = {NULL, 0},
    };
    *n = of[layout].n;
    return of[layout].mods;
}

/* The file's row of a module's output row `ours` (of `rows`): the same, or for a module whose
 * rows are regrouped by head, part p's head h's row j (ours = p C + h HS + j) at (3h + p) HS + j. */
static size_t file_row(const peft_module *mod, size_t ours, size_t rows, int NH) {
    if (!mod->heads) return ours;
    const size_t C = rows / 3, HS = C / (size_t)NH, p = ours / C, h = ours % C / HS, j = ours % HS;
    return (3 * h + p) * HS + j;
}

static int has(const wf_dims *d, int t) {
    const int on[WF_LORA_N] = {d->lq, d->lk, d->lv, d->lo, d->lf, d->lu, d->ld};
    return on[t];
}

/* A module's adapted parts, its output rows (all parts') and its input width. */
static int module_parts(const wf_dims *d, const peft_module *mod, int *rows, int *in) {
    int n = 0;
    *rows = 0;
    *in = 0;
    for (int p = 0; p < mod->parts; p++) {
        const wf_lora_site s = wf_lora_site_of(d, mod->first + p, 0);
        *rows += s.rows;
        *in = s.in;
        n += has(d, mod->first + p);
    }
    return n;
}

/* ---- export ---- */

/* A number as JSON: an integer when it is one (PEFT's r and lora_alpha are ints). */
static void put_number(wf_text *t, double v) {
    char b[32];
    if (v == floor(v) && fabs(v) < 1e15) wf_text_put(t, "%.0f", v);
    else {
        wf_json_float(b, sizeof b, (float)v);
        wf_text_put(t, "%s", b);
    }
}

/* adapter_config.json; base (checked UTF-8) is base_model_name_or_path, NULL: null. */
static void write_config(wf_text *t, const wf_config *c, int layout, const peft_module *mods, int n_mods,
                         const wf_dims *d, const char *base) {
    wf_text_put(t, "{\n  \"peft_type\": \"LORA\",\n  \"task_type\": \"CAUSAL_LM\",\n  \"base_model_name_or_path\": ");
    if (base) wf_text_string(t, base, strlen(base));
    else wf_text_put(t, "null");
    wf_text_put(t, ",\n");
    wf_text_put(t, "  \"r\": %d,\n  \"lora_alpha\": ", c->lora_rank);
    put_number(t, c->lora_alpha);
    wf_text_put(t, ",\n  \"lora_dropout\": 0.0,\n  \"target_modules\": [");
    int first = 1, rows, in;
    for (int k = 0; k < n_mods; k++)
        if (module_parts(d, &mods[k], &rows, &in)) {
            wf_text_put(t, "%s\"%s\"", first ? "" : ", ", mods[k].target);
            first = 0;
        }
    wf_text_put(t, "],\n  \"rank_pattern\": {");
    first = 1;
    for (int k = 0; k < n_mods; k++) {
        const int P = module_parts(d, &mods[k], &rows, &in);
        if (P > 1) wf_text_put(t, "%s\"%s\": %d", first ? "" : ", ", mods[k].target, P * c->lora_rank);
        first &= P <= 1;
    }
    wf_text_put(t, "},\n  \"alpha_pattern\": {");
    first = 1;
    for (int k = 0; k < n_mods; k++) {
        const int P = module_parts(d, &mods[k], &rows, &in);
        if (P <= 1) continue;
        wf_text_put(t, "%s\"%s\": ", first ? "" : ", ", mods[k].target);
        put_number(t, (double)P * c->lora_alpha);
        first = 0;
    }
    wf_text_put(t, "},\n  \"fan_in_fan_out\": %s,\n", layout == WF_LAYOUT_GPT2 ? "true" : "false");
    wf_text_put(t, "  \"bias\": \"none\",\n  \"use_rslora\": false,\n  \"use_dora\": false,\n"
                   "  \"init_lora_weights\": true,\n  \"inference_mode\": true,\n  \"modules_to_save\": null,\n"
                   "  \"layers_to_transform\": null,\n  \"layers_pattern\": null,\n  \"revision\": null\n}\n");
}

/* Module mod of layer l as PEFT holds it: A [P r, in] and B [rows, P r] into a and b. */
static void module_weights(wf_model *m, const peft_module *mod, int l, float *a, float *b) {
    const wf_dims *d = &m->d;
    const int R = d->LR;
    int rows, in;
    const int P = module_parts(d, mod, &rows, &in);
    memset(b, 0, (size_t)rows * P * R * sizeof(float));
    int j = 0, row = 0;
    for (int p = 0; p < mod->parts; p++) {
        const wf_lora_site s = wf_lora_site_of(d, mod->first + p, 0);
        if (has(d, mod->first + p)) {
            const wf_real *A = wf_model_slice(m, WF_WEIGHTS, s.a, l), *B = wf_model_slice(m, WF_WEIGHTS, s.a + 1, l);
            for (size_t k = 0; k < (size_t)R * in; k++) a[(size_t)j * R * in + k] = (float)A[k];
            for (int r = 0; r < s.rows; r++) {
                const size_t f = file_row(mod, (size_t)(row + r), (size_t)rows, d->NH);
                for (int k = 0; k < R; k++) b[f * P * R + (size_t)j * R + k] = (float)B[(size_t)r * R + k];
            }
            j++;
        }
        row += s.rows;
    }
}

wf_status wf_model_export_peft(wf_model *m, const char *base, uint8_t **st, int32_t *st_len, char **config,
                               int32_t *config_len) {
    if (!m) return WF_ERR_ARG;
    if (!st || !st_len || !config || !config_len) return WF_ERR(m, WF_ERR_ARG, "output pointers must not be NULL");
    *st = NULL;
    *config = NULL;
    *st_len = *config_len = 0;
    WF_NEED_READY(m);
    /* the config's room: its fixed text and the name, each byte escaped to at most 6 */
    const size_t base_n = base ? strlen(base) : 0;
    if (base_n > (SIZE_MAX - 4096) / 6) return WF_ERR(m, WF_ERR_NOMEM, "the base model's name is %zu bytes", base_n);
    const size_t ccap = 4096 + 6 * base_n;
    if (base && !wf_utf8_valid((const uint8_t *)base, base_n))
        return WF_ERR(m, WF_ERR_ARG, "the base model's name is not valid UTF-8");
    const wf_dims *d = &m->d;
    if (!d->LR) return WF_ERR(m, WF_ERR_STATE, "the model has no LoRA adapters (lora_rank is 0)");
    const int layout = wf_hf_layout_of(&m->cfg);
    int n_mods;
    const peft_module *mods = modules_of(layout, &n_mods);
    if (!mods)
        return WF_ERR(m, WF_ERR_UNSUPPORTED, "PEFT names the modules of a Hugging Face class; this model is not "
                      "GPT-2-, GPT-NeoX- or Llama-shaped (save it with its adapters as a checkpoint instead)");
    for (int i = 0; i < WF_N_PARAMS; i++) {
        wf_tensor_info t;
        wf_model_get_tensor(m, i, &t);
        if (!wf_param_lora(i) && t.grad_offset >= 0)
            return WF_ERR(m, WF_ERR_STATE, "\"%s\" trains besides the adapters, and an adapter file holds adapters "
                          "only: freeze it, or merge the adapters and export the whole model", t.name);
    }

    /* the header: every module's A and B, layer by layer, with their byte ranges */
    const int L = d->L, R = d->LR;
    /* byte counts in 64 bits: a sum that passes 4 GB is refused below, not wrapped */
    size_t hcap = 4096 + (size_t)L * n_mods * 2 * 200;
    uint64_t data = 0, biggest = 0;
    wf_text h = {.p = malloc(hcap), .cap = hcap};
    char *cfg = malloc(ccap);
    wf_text c = {.p = cfg, .cap = ccap};
    if (!h.p || !cfg) {
        free(h.p);
        free(cfg);
        return WF_ERR(m, WF_ERR_NOMEM, "out of memory");
    }
    wf_text_put(&h, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (int l = 0; l < L; l++)
        for (int k = 0; k < n_mods; k++) {
            int rows, in;
            const int P = module_parts(d, &mods[k], &rows, &in);
            if (!P) continue;
            char name[MAX_ST_NAME];
            snprintf(name, sizeof name, mods[k].name, l);
            const uint64_t na = (uint64_t)P * R * in * 4, nb = (uint64_t)rows * P * R * 4;
            wf_text_put(&h, ",\"" PREFIX "%s.lora_A.weight\":{\"dtype\":\"F32\",\"shape\":[%d,%d],\"data_offsets\":[%llu,%llu]}",
                        name, P * R, in, (unsigned long long)data, (unsigned long long)(data + na));
            wf_text_put(&h, ",\"" PREFIX "%s.lora_B.weight\":{\"dtype\":\"F32\",\"shape\":[%d,%d],\"data_offsets\":[%llu,%llu]}",
                        name, rows, P * R, (unsigned long long)(data + na), (unsigned long long)(data + na + nb));
            data += na + nb;
            if (na + nb > biggest) biggest = na + nb;
        }
    wf_text_put(&h, "}");
    while (!h.overflow && (8 + h.n) % 8) wf_text_put(&h, " ");
    write_config(&c, &m->cfg, layout, mods, n_mods, d, base);
    const uint64_t total = 8 + (uint64_t)h.n + data;
    uint8_t *out = NULL;
    float *buf = NULL;
    if (!h.overflow && !c.overflow && total <= INT32_MAX) {
        out = malloc((size_t)total);
        buf = malloc((size_t)biggest); /* at most total */
    }
    if (!out || !buf) {
        free(h.p);
        free(cfg);
        free(out);
        free(buf);
        if (total > INT32_MAX) return WF_ERR(m, WF_ERR_UNSUPPORTED, "the adapter file would be %.2f GB; at most 2 GB", total / 1e9);
        return WF_ERR(m, WF_ERR_NOMEM, "could not allocate %.1f MB for the adapter file", total / 1e6);
    }
    wf_writer w = {out, 0};
    wf_put_u64(&w, h.n);
    wf_put(&w, h.p, h.n);
    free(h.p);
    for (int l = 0; l < L; l++)
        for (int k = 0; k < n_mods; k++) {
            int rows, in;
            const int P = module_parts(d, &mods[k], &rows, &in);
            if (!P) continue;
            float *a = buf, *b = buf + (size_t)P * R * in;
            module_weights(m, &mods[k], l, a, b);
            wf_put_f32s(&w, a, (size_t)P * R * in);
            wf_put_f32s(&w, b, (size_t)rows * P * R);
        }
    free(buf);
    *st = out;
    *st_len = (int32_t)total;
    *config = cfg;
    *config_len = (int32_t)c.n;
    m->err[0] = 0;
    return WF_OK;
}

/* ---- import ---- */

/* adapter_config.json's part that decides the arithmetic. */
typedef struct {
    int64_t r;
    double alpha;
    int rslora;
    wf_json j;
    int32_t ranks, alphas; /* rank_pattern, alpha_pattern objects, or -1 */
} peft_config;

/* A pattern's value for a module: the member whose key is the module's name or a dotted tail
 * of it (PEFT matches them as regular expressions; plain names match the same); the longest
 * key wins. Returns the node, or -1. */
static int32_t pattern_for(const wf_json *j, int32_t obj, const char *name) {
    int32_t best = -1;
    size_t best_len = 0, n = strlen(name);
    if (obj < 0) return -1;
    for (int32_t c = j->nodes[obj].first; c >= 0; c = j->nodes[c].next) {
        char key[MAX_ST_NAME];
        if (wf_json_str(j, j->nodes[c].key, key, sizeof key) < 0) continue;
        size_t k = strlen(key);
        int match = k == n ? !strcmp(key, name) : k < n && name[n - k - 1] == '.' && !strcmp(name + n - k, key);
        if (match && k > best_len) best = c, best_len = k;
    }
    return best;
}

static wf_status read_config(const char *text, size_t n, peft_config *pc, char *msg, size_t cap) {
    wf_json *j = &pc->j;
    wf_status s = wf_json_parse(j, text, n, "adapter_config.json", msg, cap);
    if (s != WF_OK) return s;
    if (j->nodes[0].type != WF_J_OBJ) FAIL(WF_ERR_FORMAT, "adapter_config.json is not a JSON object");
    int32_t x = wf_json_get(j, 0, "peft_type");
    if (x < 0 || !wf_json_is(j, x, "LORA")) {
        if (x >= 0 && j->nodes[x].type == WF_J_STR) FAIL(WF_ERR_UNSUPPORTED, "adapter_config.json: peft_type is not \"LORA\", the only kind wasmformer reads");
        FAIL(WF_ERR_FORMAT, "adapter_config.json: \"peft_type\" must be \"LORA\"");
    }
    x = wf_json_get(j, 0, "r");
    if (x < 0 || j->nodes[x].type != WF_J_NUM || !j->nodes[x].is_int || j->nodes[x].ival < 1 || j->nodes[x].ival > 1 << 16)
        FAIL(WF_ERR_FORMAT, "adapter_config.json: \"r\" must be an integer in [1, 65536]");
    pc->r = j->nodes[x].ival;
    pc->alpha = 8; /* PEFT's default */
    x = wf_json_get(j, 0, "lora_alpha");
    if (x >= 0 && (j->nodes[x].type != WF_J_NUM || !(j->nodes[x].num > 0 && j->nodes[x].num <= 1e30)))
        FAIL(WF_ERR_FORMAT, "adapter_config.json: \"lora_alpha\" must be a positive number");
    if (x >= 0) pc->alpha = j->nodes[x].num;
    static const char *const off[] = {"use_dora", "use_rslora"};
    for (int k = 0; k < 2; k++) {
        x = wf_json_get(j, 0, off[k]);
        if (x >= 0 && j->nodes[x].type != WF_J_BOOL && j->nodes[x].type != WF_J_NULL)
            FAIL(WF_ERR_FORMAT, "adapter_config.json: \"%s\" must be true or false", off[k]);
        const int on = x >= 0 && j->nodes[x].type == WF_J_BOOL && j->nodes[x].boolean;
        if (k == 0 && on) FAIL(WF_ERR_UNSUPPORTED, "adapter_config.json: use_dora: DoRA adapters are not supported, only LoRA");
        if (k == 1) pc->rslora = on;
    }
    x = wf_json_get(j, 0, "bias");
    if (x >= 0 && j->nodes[x].type != WF_J_NULL && !wf_json_is(j, x, "none"))
        FAIL(WF_ERR_UNSUPPORTED, "adapter_config.json: bias must be \"none\": wasmformer's adapters train no biases");
    x = wf_json_get(j, 0, "modules_to_save");
    if (x >= 0 && !(j->nodes[x].type == WF_J_NULL || (j->nodes[x].type == WF_J_ARR && j->nodes[x].first < 0)))
        FAIL(WF_ERR_UNSUPPORTED, "adapter_config.json: modules_to_save is not supported (whole modules besides the "
             "adapters): merge them into the base model first");
    static const char *const pats[] = {"rank_pattern", "alpha_pattern"};
    for (int k = 0; k < 2; k++) {
        x = wf_json_get(j, 0, pats[k]);
        if (x >= 0 && j->nodes[x].type == WF_J_NULL) x = -1;
        if (x == -2 || (x >= 0 && j->nodes[x].type != WF_J_OBJ))
            FAIL(WF_ERR_FORMAT, "adapter_config.json: \"%s\" must be an object (or null)", pats[k]);
        for (int32_t c = x >= 0 ? j->nodes[x].first : -1; c >= 0; c = j->nodes[c].next)
            if (j->nodes[c].type != WF_J_NUM || !(j->nodes[c].num > 0 && j->nodes[c].num <= 1e30) ||
                (k == 0 && (!j->nodes[c].is_int || j->nodes[c].ival > 1 << 16)))
                FAIL(WF_ERR_FORMAT, "adapter_config.json: every value of \"%s\" must be a positive %s", pats[k],
                     k ? "number" : "integer up to 65536");
        if (k == 0) pc->ranks = x;
        else pc->alphas = x;
    }
    return WF_OK;
}

/* One module of one layer in the file: its A and B, rank and scale; for a fused module
 * whose B is block-structured, the rank of each part's block (split; 0: A shared by all
 * parts) and the parts that have one (on, a bit each). */
typedef struct {
    const st_tensor *a, *b;
    int r;
    double scale;
    int split, on;
} found_module;

/* A fused module's parts whose rows of B are not all zero (all of them when none is), into
 * fm->on; and whether B has export's block structure, each of those parts reading only its
 * own block of r / (their count) columns, in part order: then fm->split is that rank. */
static void split_fused(const wf_dims *all, const peft_module *mod, found_module *fm) {
    int rows, in, on = 0, row0[3], n_on = 0;
    module_parts(all, mod, &rows, &in);
    const size_t r = (size_t)fm->r;
    for (int p = 0, row = 0; p < mod->parts; p++) {
        const wf_lora_site site = wf_lora_site_of(all, mod->first + p, 0);
        row0[p] = row;
        for (int i = 0; i < site.rows && !(on >> p & 1); i++)
            for (size_t c = 0; c < r; c++)
                if (wf_st_get(fm->b, file_row(mod, (size_t)(row + i), (size_t)rows, all->NH) * r + c) != 0) {
                    on |= 1 << p;
                    break;
                }
        row += site.rows;
    }
    if (!on) on = (1 << mod->parts) - 1;
    fm->on = on; /* a part whose rows are zero changes nothing: it gets no adapter */
    for (int p = 0; p < mod->parts; p++) n_on += on >> p & 1;
    if (r % (size_t)n_on) return;
    const size_t blk = r / (size_t)n_on;
    for (int p = 0, j = 0; p < mod->parts; p++) {
        if (!(on >> p & 1)) continue;
        const int n = wf_lora_site_of(all, mod->first + p, 0).rows;
        for (int i = 0; i < n; i++)
            for (size_t c = 0; c < r; c++)
                if ((c < (size_t)j * blk || c >= (size_t)(j + 1) * blk) &&
                    wf_st_get(fm->b, file_row(mod, (size_t)(row0[p] + i), (size_t)rows, all->NH) * r + c) != 0)
                    return;
        j++;
    }
    fm->split = (int)blk;
}

static st_tensor *find_weight(st_file *f, const char *module, const char *ab, const char *optional_prefix) {
    char name[MAX_ST_NAME + 64];
    snprintf(name, sizeof name, PREFIX "%s.%s.weight", module, ab);
    st_tensor *t = wf_st_find(f, name);
    size_t pre = optional_prefix ? strlen(optional_prefix) : 0;
    if (!t && pre && !strncmp(module, optional_prefix, pre)) {
        snprintf(name, sizeof name, PREFIX "%s.%s.weight", module + pre, ab);
        t = wf_st_find(f, name);
    }
    return t;
}

/* Finds, for every layer and module, its A and B (found[l * n_mods + k]; a = NULL: absent)
 * and checks their shapes against the model, their values, and that the file holds nothing
 * else. targets and rank get the adapters and the largest rank seen. */
static wf_status plan_import(wf_model *m, int layout, const peft_module *mods, int n_mods, st_file *f,
                             const peft_config *pc, found_module *found, int *targets, int *rank, char *msg,
                             size_t cap) {
    const wf_hf_layout *lay = &wf_hf_layouts[layout];
    wf_dims all = m->d; /* the model's sizes, every adapter present */
    all.lq = all.lk = all.lv = all.lo = all.lf = all.ld = 1;
    all.lu = m->d.fc == 2;
    *targets = 0;
    *rank = 0;
    for (int l = 0; l < m->d.L; l++)
        for (int k = 0; k < n_mods; k++) {
            found_module *fm = &found[l * n_mods + k];
            char module[MAX_ST_NAME];
            snprintf(module, sizeof module, mods[k].name, l);
            fm->a = find_weight(f, module, "lora_A", lay->optional_prefix);
            fm->b = find_weight(f, module, "lora_B", lay->optional_prefix);
            if (!fm->a && !fm->b) continue;
            if (!fm->a || !fm->b)
                FAIL(WF_ERR_FORMAT, "adapter_model.safetensors: %s has a lora_%s but no lora_%s", module,
                     fm->a ? "A" : "B", fm->a ? "B" : "A");
            int rows, in;
            module_parts(&all, &mods[k], &rows, &in);
            if (mods[k].first == WF_LORA_UP && m->d.fc != 2)
                FAIL(WF_ERR_FORMAT, "adapter_model.safetensors: %s is not a module of this model", module);
            const st_tensor *a = fm->a, *b = fm->b;
            if (a->dtype == ST_OTHER || b->dtype == ST_OTHER)
                FAIL(WF_ERR_UNSUPPORTED, "adapter_model.safetensors: %s: dtype is not F32, F16, BF16 or F64", module);
            if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != in || b->shape[0] != rows || b->shape[1] != a->shape[0] ||
                a->shape[0] < 1 || a->shape[0] > 1 << 16)
                FAIL(WF_ERR_FORMAT, "adapter_model.safetensors: %s: lora_A must be [r, %d] and lora_B [%d, r] for this "
                     "model, not [%lld, %lld] and [%lld, %lld]", module, in, rows, (long long)a->shape[0],
                     (long long)(a->ndim > 1 ? a->shape[1] : 0), (long long)b->shape[0],
                     (long long)(b->ndim > 1 ? b->shape[1] : 0));
            fm->r = (int)a->shape[0];
            int32_t rp = pattern_for(&pc->j, pc->ranks, module), ap = pattern_for(&pc->j, pc->alphas, module);
            const int64_t r_cfg = rp >= 0 ? pc->j.nodes[rp].ival : pc->r;
            if (r_cfg != fm->r)
                FAIL(WF_ERR_FORMAT, "adapter_model.safetensors: %s has rank %d; adapter_config.json gives it %lld",
                     module, fm->r, (long long)r_cfg);
            const double alpha = ap >= 0 ? pc->j.nodes[ap].num : pc->alpha;
            fm->scale = alpha / (pc->rslora ? sqrt((double)fm->r) : (double)fm->r);
            ((st_tensor *)a)->used = ((st_tensor *)b)->used = 1;
            for (int e = 0; e < 2; e++) {
                const st_tensor *t = e ? b : a;
                for (uint64_t i = 0; i < t->elems; i++)
                    if (!wf_finite(wf_st_get(t, i)))
                        FAIL(WF_ERR_FORMAT, "adapter_model.safetensors: \"%s\": value %llu is not a finite float32",
                             t->name, (unsigned long long)i);
            }
            fm->split = 0;
            fm->on = (1 << mods[k].parts) - 1;
            if (mods[k].parts > 1) split_fused(&all, &mods[k], fm);
            for (int p = 0; p < mods[k].parts; p++)
                if (fm->on >> p & 1) *targets |= 1 << (mods[k].first + p);
            const int r_ours = fm->split ? fm->split : fm->r;
            if (r_ours > *rank) *rank = r_ours;
        }
    for (int32_t i = 0; i < f->n; i++)
        if (!f->t[i].used)
            FAIL(WF_ERR_FORMAT, "adapter_model.safetensors: \"%s\" is not a LoRA weight of this %s model's modules "
                 "(%d layers)", f->t[i].name, lay->model_type, m->d.L);
    if (!*targets) FAIL(WF_ERR_FORMAT, "adapter_model.safetensors holds no LoRA weights");
    return WF_OK;
}

wf_status wf_model_import_peft(wf_model *m, const char *config, int32_t config_len, const uint8_t *st, int32_t st_len) {
    if (!m) return WF_ERR_ARG;
    if (!config || !st || config_len < 0 || st_len < 0)
        return WF_ERR(m, WF_ERR_ARG, "adapter_config.json and the safetensors bytes must be given");
    WF_NEED_READY(m);
    const int layout = wf_hf_layout_of(&m->cfg);
    int n_mods;
    const peft_module *mods = modules_of(layout, &n_mods);
    if (!mods)
        return WF_ERR(m, WF_ERR_UNSUPPORTED, "PEFT adapters name the modules of a Hugging Face class; this model is "
                      "not GPT-2-, GPT-NeoX- or Llama-shaped");
    peft_config pc = {.ranks = -1, .alphas = -1};
    st_file f = {NULL, 0};
    found_module *found = wf_calloc_n((size_t)m->d.L * (size_t)n_mods, sizeof *found);
    int targets = 0, rank = 0;
    wf_status s = found ? WF_OK : WF_ERR(m, WF_ERR_NOMEM, "out of memory");
    if (s == WF_OK) s = read_config(config, (size_t)config_len, &pc, m->err, sizeof m->err);
    if (s == WF_OK) s = wf_st_parse(st, (size_t)st_len, &f, m->err, sizeof m->err);
    if (s == WF_OK) s = plan_import(m, layout, mods, n_mods, &f, &pc, found, &targets, &rank, m->err, sizeof m->err);
    /* our scale: the config's alpha / r; each module's own folded into its B */
    const double scale = pc.alpha / (pc.rslora ? sqrt((double)pc.r) : (double)pc.r);
    wf_config cfg = m->cfg;
    if (s == WF_OK) {
        cfg.lora_rank = rank;
        cfg.lora_targets = targets;
        cfg.lora_alpha = (float)(scale * rank);
        if (!(cfg.lora_alpha > 0 && cfg.lora_alpha <= FLT_MAX))
            s = WF_ERR(m, WF_ERR_FORMAT, "adapter_config.json: lora_alpha / r = %g is out of range", scale);
    }
    /* each module's B is scaled by its own scale over ours: it must stay a finite float32 */
    for (int l = 0; s == WF_OK && l < m->d.L; l++)
        for (int k = 0; s == WF_OK && k < n_mods; k++) {
            const found_module *fm = &found[l * n_mods + k];
            if (!fm->a) continue;
            const double factor = fm->scale / (cfg.lora_alpha / (double)cfg.lora_rank);
            for (uint64_t i = 0; i < fm->b->elems; i++)
                if (!(fabs(wf_st_get(fm->b, i) * factor) <= FLT_MAX)) {
                    s = WF_ERR(m, WF_ERR_FORMAT, "adapter_model.safetensors: \"%s\": value %llu times the module's "
                               "alpha / r over the adapter's (%g) is not a finite float32", fm->b->name,
                               (unsigned long long)i, factor);
                    break;
                }
        }
    if (s == WF_OK) s = wf_model_set_config(m, &cfg, 0);
    if (s == WF_OK) {
        /* the model has these adapters now; nothing can fail from here */
        const double ours = cfg.lora_alpha / (double)cfg.lora_rank;
        for (int i = 0; i < WF_N_PARAMS; i++) {
            wf_tensor_info t;
            wf_model_get_tensor(m, i, &t);
            if (!wf_param_lora(i) || !t.size) continue;
            /* every adapter's weights and moments start from zero (B = 0 until written below) */
            const size_t n = (size_t)t.size / (size_t)t.layers;
            for (int l = 0; l < t.layers; l++)
                for (int b = WF_WEIGHTS; b <= WF_ADAM_V; b++) {
                    wf_real *p = b == WF_GRADS ? NULL : wf_model_slice(m, b, i, l); /* NULL: frozen, no moments */
                    if (p) memset(p, 0, n * sizeof(wf_real));
                }
        }
        for (int l = 0; l < m->d.L; l++)
            for (int k = 0; k < n_mods; k++) {
                const found_module *fm = &found[l * n_mods + k];
                if (!fm->a) continue;
                const double factor = fm->scale / ours;
                int rows_all, in_all;
                module_parts(&m->d, &mods[k], &rows_all, &in_all); /* rows: every part's */
                /* a part's rank and first row of A (first column of B): its own block when split */
                const int r_part = fm->split ? fm->split : fm->r;
                int row = 0, block = 0;
                for (int p = 0; p < mods[k].parts; p++) {
                    const wf_lora_site site = wf_lora_site_of(&m->d, mods[k].first + p, 0);
                    const int c0 = fm->split ? block * fm->split : 0;
                    if (fm->on >> p & 1) {
                        wf_real *A = wf_model_slice(m, WF_WEIGHTS, site.a, l), *B = wf_model_slice(m, WF_WEIGHTS, site.a + 1, l);
                        const int in = site.in;
                        for (int r = 0; r < r_part; r++)
                            for (int c = 0; c < in; c++) A[(size_t)r * in + c] = (wf_real)wf_st_get(fm->a, (size_t)(c0 + r) * in + c);
                        for (int j = 0; j < site.rows; j++) {
                            const size_t f = file_row(&mods[k], (size_t)(row + j), (size_t)rows_all, m->d.NH);
                            for (int r = 0; r < r_part; r++) {
                                const double v = wf_st_get(fm->b, f * (size_t)fm->r + (size_t)(c0 + r));
                                B[(size_t)j * rank + r] = (wf_real)(factor == 1 ? v : v * factor);
                            }
                        }
                        block++;
                    }
                    row += site.rows;
                }
            }
        wf_model_gen_stop(m);
        m->err[0] = 0;
    }
    free(found);
    free(f.t);
    free(pc.j.nodes);
    return s;
}
