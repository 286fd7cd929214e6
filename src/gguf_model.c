/* The llama-family model in a GGUF file (gguf.h; llama, SmolLM, TinyLlama:
 * general.architecture "llama") into a model, with its weights as the file holds them (F32
 * and F16 as float32, Q8_0 and Q4_0 as blocks) and its tokenizer (gguf_tok.c). The model is
 * built only when nothing else can fail, so a bad file leaves the handle as it was. */
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "gguf.h"
#include "qsimd.h"

/* An integer of the architecture's metadata ("llama.block_count"): must be present (need)
 * or gets dflt, and fit in [lo, hi]. */
static wf_status arch_int(const gg_file *f, const char *arch, const char *what, int need, double dflt, double lo,
                          double hi, int32_t *out, char *msg, size_t cap) {
    char key[96];
    snprintf(key, sizeof key, "%s.%s", arch, what);
    double v = dflt;
    if (!wf_gguf_num(f, key, &v) && need) FAIL(WF_ERR_FORMAT, "GGUF: %s is missing", key);
    if (!(v >= lo && v <= hi && v == floor(v))) FAIL(WF_ERR_FORMAT, "GGUF: %s is %g, not an integer in [%g, %g]", key, v, lo, hi);
    *out = (int32_t)v;
    return WF_OK;
}

/* The config the metadata describes, checked (wf_config_check). */
static wf_status read_config(const gg_file *f, wf_config *c, char *msg, size_t cap) {
    char arch[32];
    if (wf_gguf_text(f, "general.architecture", arch, sizeof arch) < 0) FAIL(WF_ERR_FORMAT, "GGUF: general.architecture is missing");
    if (strcmp(arch, "llama"))
        FAIL(WF_ERR_UNSUPPORTED, "GGUF: architecture \"%s\"; this build reads the llama family (Llama, SmolLM, TinyLlama)", arch);
    char scaling[32];
    if (wf_gguf_text(f, "llama.rope.scaling.type", scaling, sizeof scaling) >= 0 && strcmp(scaling, "none"))
        FAIL(WF_ERR_UNSUPPORTED, "GGUF: RoPE scaling \"%s\" is not supported", scaling);
    wf_config_default(c);
    wf_hf_llama_shape(c);
    wf_status s;
    int32_t heads = 1, kv_heads = 1, rope_dims = 0; /* (set before use: gcc cannot tell) */
    if ((s = arch_int(f, "llama", "block_count", 1, 0, 1, 1024, &c->n_layer, msg, cap)) != WF_OK ||
        (s = arch_int(f, "llama", "embedding_length", 1, 0, 1, 1 << 20, &c->d_model, msg, cap)) != WF_OK ||
        (s = arch_int(f, "llama", "feed_forward_length", 1, 0, 1, 1 << 20, &c->d_ff, msg, cap)) != WF_OK ||
        (s = arch_int(f, "llama", "context_length", 1, 0, 1, 1 << 16, &c->context, msg, cap)) != WF_OK ||
        (s = arch_int(f, "llama", "attention.head_count", 1, 0, 1, 1 << 20, &heads, msg, cap)) != WF_OK ||
        (s = arch_int(f, "llama", "attention.head_count_kv", 0, heads, 1, heads, &kv_heads, msg, cap)) != WF_OK ||
        (s = arch_int(f, "llama", "rope.dimension_count", 0, c->d_model / heads, 0, 1 << 20, &rope_dims, msg, cap)) != WF_OK)
        return s;
    c->n_head = heads;
    c->n_kv_head = kv_heads == heads ? 0 : kv_heads;
    if (rope_dims != c->d_model / heads)
        FAIL(WF_ERR_UNSUPPORTED, "GGUF: llama.rope.dimension_count %d: this build turns whole heads (%d)", rope_dims,
             c->d_model / heads);
    double eps, theta = 10000;
    if (!wf_gguf_num(f, "llama.attention.layer_norm_rms_epsilon", &eps))
        FAIL(WF_ERR_FORMAT, "GGUF: llama.attention.layer_norm_rms_epsilon is missing");
    wf_gguf_num(f, "llama.rope.freq_base", &theta);
    c->norm_eps = (float)eps;
    c->rope_theta = (float)theta;
    const gg_tensor *emb = NULL;
    for (int32_t i = 0; i < f->n_t; i++)
        if (f->t[i].name.n == 17 && !memcmp(f->t[i].name.p, "token_embd.weight", 17)) emb = &f->t[i];
    if (!emb || emb->ndim != 2) FAIL(WF_ERR_FORMAT, "GGUF: token_embd.weight is missing or not a matrix");
    if (emb->ne[1] > (1 << 24)) FAIL(WF_ERR_FORMAT, "GGUF: a vocabulary of %llu tokens", (unsigned long long)emb->ne[1]);
    c->vocab_size = (int32_t)emb->ne[1];
    double vocab;
    if (wf_gguf_num(f, "llama.vocab_size", &vocab) && vocab != c->vocab_size)
        FAIL(WF_ERR_FORMAT, "GGUF: llama.vocab_size %g differs from token_embd.weight's %d rows", vocab, c->vocab_size);
    c->tied_head = 1;
    for (int32_t i = 0; i < f->n_t; i++)
        if (f->t[i].name.n == 13 && !memcmp(f->t[i].name.p, "output.weight", 13)) c->tied_head = 0;
    char why[200];
    if ((s = wf_config_check(c, why, sizeof why)) != WF_OK)
        FAIL(s == WF_ERR_UNSUPPORTED ? s : WF_ERR_FORMAT, "GGUF: the metadata describes an invalid model: %s", why);
    return WF_OK;
}

/* Row r of a part of rows (a head of HS rows at a time) in llama.cpp's pair order: the file
 * holds our row i < HS/2 of a head at 2i, row HS/2 + i at 2i + 1. */
static size_t file_row(size_t r, size_t HS, int permute) {
    if (!permute) return r;
    const size_t i = r % HS, h = r - i;
    return h + (i < HS / 2 ? 2 * i : 2 * (i - HS / 2) + 1);
}

/* Row `row` of t as floats (F32, F16, or dequantized blocks) into out [ne0]. */
static void read_row(wf_real *out, const gg_tensor *t, size_t row) {
    const size_t n = (size_t)t->ne[0], rb = wf_gguf_row_bytes(t->type, t->ne[0]);
    const uint8_t *p = t->data + row * rb;
    if (t->type == GGML_F32) {
        for (size_t k = 0; k < n; k++) {
            float v;
            wf_read_f32s(&v, p + 4 * k, 1);
            out[k] = v;
        }
    } else if (t->type == GGML_F16) {
        for (size_t k = 0; k < n; k++) out[k] = wf_f16_to_f32((uint16_t)(p[2 * k] | p[2 * k + 1] << 8));
    } else {
        wf_dequantize_row(out, p, n, t->type == GGML_Q8_0 ? WF_QUANT_Q8_0 : WF_QUANT_Q4_0);
    }
}

/* The first value of t that is not finite (a float's) or a block whose scale is not: its
 * row, or -1. */
static int64_t first_bad_row(const gg_tensor *t) {
    const size_t n = (size_t)t->ne[0], rb = wf_gguf_row_bytes(t->type, t->ne[0]), rows = t->bytes / rb;
    for (size_t r = 0; r < rows; r++) {
        const uint8_t *p = t->data + r * rb;
        if (t->type == GGML_Q8_0 || t->type == GGML_Q4_0) {
            if (wf_quant_check_row(p, n, t->type == GGML_Q8_0 ? WF_QUANT_Q8_0 : WF_QUANT_Q4_0) >= 0) return (int64_t)r;
        } else {
            for (size_t k = 0; k < n; k++) {
                const int inf = t->type == GGML_F32 ? (wf_le32(p + 4 * k) & 0x7f800000u) == 0x7f800000u
                                                    : ((p[2 * k + 1] << 8) & 0x7c00) == 0x7c00;
                if (inf) return (int64_t)r;
            }
        }
    }
    return -1;
}

typedef struct {
    wf_hf_entry e;
    const gg_tensor *t;
} found_entry;

/* Finds every tensor the config's layout has (shape, type, values) and the type each of our
 * tensors keeps: float32 where any part is F32 or F16 (or the tensor is not a linear's or an
 * embedding), else Q8_0 where any part is, else Q4_0 (Q4_0 parts become Q8_0 exactly). */
static wf_status plan(gg_file *f, const wf_config *c, const wf_tensor_info *table, found_entry *fe, int *n_fe,
                      uint8_t qtype[WF_N_PARAMS], char *msg, size_t cap) {
    const wf_hf_layout *lay = &wf_hf_layouts[WF_LAYOUT_GGUF];
    wf_hf_entry *entries = wf_malloc_n((size_t)lay->n_rows * (size_t)c->n_layer, sizeof *entries); /* n_layer <= 1024 */
    if (!entries) FAIL(WF_ERR_NOMEM, "out of memory");
    const int n = wf_hf_entries(lay, table, c->n_layer, entries);
    uint8_t any_f32[WF_N_PARAMS] = {0}, any_q8[WF_N_PARAMS] = {0};
    wf_status s = WF_OK;
    for (int k = 0; k < n && s == WF_OK; k++) {
        char name[GG_MAX_NAME + 16];
        wf_hf_row_name(entries[k].row, entries[k].layer, name, sizeof name);
        gg_tensor *t = NULL;
        for (int32_t i = 0; i < f->n_t && !t; i++)
            if (f->t[i].name.n == strlen(name) && !memcmp(f->t[i].name.p, name, f->t[i].name.n)) t = &f->t[i];
        int64_t shape[4];
        const int nd = wf_hf_row_shape(entries[k].row, &table[entries[k].row->param], shape);
        if (!t) {
            s = wf_fail(msg, cap, WF_ERR_FORMAT, "GGUF: tensor \"%s\" is missing (a llama model of this metadata has it)", name);
            break;
        }
        if (!t->data) {
            s = wf_fail(msg, cap, WF_ERR_UNSUPPORTED, "GGUF: tensor \"%s\" is %s; this build reads F32, F16, Q8_0 and Q4_0", name,
                        wf_gguf_type_name(t->type));
            break;
        }
        int same = (int)t->ndim == nd;
        for (int d = 0; same && d < nd; d++) same = t->ne[d] == (uint64_t)shape[nd - 1 - d]; /* innermost first */
        if (!same) {
            s = wf_fail(msg, cap, WF_ERR_FORMAT, "GGUF: tensor \"%s\" has dimensions [%llu, %llu]; the metadata gives [%lld, %lld]",
                        name, (unsigned long long)t->ne[0], (unsigned long long)t->ne[1], (long long)shape[nd - 1],
                        (long long)(nd > 1 ? shape[0] : 1));
            break;
        }
        if (nd == 1 && t->type != GGML_F32 && t->type != GGML_F16) {
            s = wf_fail(msg, cap, WF_ERR_UNSUPPORTED, "GGUF: the vector \"%s\" is %s; this build reads vectors as F32 or F16",
                        name, wf_gguf_type_name(t->type));
            break;
        }
        const int64_t bad = first_bad_row(t);
        if (bad >= 0) {
            s = wf_fail(msg, cap, WF_ERR_FORMAT, "GGUF: tensor \"%s\": row %lld has a value or a block scale that is not finite", name,
                        (long long)bad);
            break;
        }
        t->used = 1;
        const int p = entries[k].row->param;
        any_f32[p] |= t->type == GGML_F32 || t->type == GGML_F16;
        any_q8[p] |= t->type == GGML_Q8_0;
        fe[k] = (found_entry){.e = entries[k], .t = t};
    }
    free(entries);
    *n_fe = n;
    for (int32_t i = 0; i < f->n_t && s == WF_OK; i++) {
        if (f->t[i].used) continue;
        char name[GG_MAX_NAME + 8];
        wf_gguf_shown(f->t[i].name, name, sizeof name);
        s = wf_fail(msg, cap, !strcmp(name, "rope_freqs.weight") ? WF_ERR_UNSUPPORTED : WF_ERR_FORMAT,
                    "GGUF: tensor \"%s\" is not part of a llama model this build reads%s", name,
                    !strcmp(name, "rope_freqs.weight") ? " (Llama 3's scaled RoPE)" : "");
    }
    for (int i = 0; i < WF_N_PARAMS; i++)
        qtype[i] = !table[i].size || !wf_param_quantizable(i) || any_f32[i] ? WF_QUANT_F32 : any_q8[i] ? WF_QUANT_Q8_0 : WF_QUANT_Q4_0;
    return s;
}

/* One file tensor into its rows of our tensor (wf_hf_slice_of: a vector is rows of one
 * value), converted to the type the model keeps: floats, the same blocks, or Q4_0 blocks as
 * Q8_0 (the same values); q and k rows back from llama.cpp's pair order. */
static void copy_entry(wf_model *m, const found_entry *x) {
    const wf_hf_row *r = x->e.row;
    const wf_tensor_info *ti = &m->tensors[r->param];
    const wf_hf_slice sl = wf_hf_slice_of(r, ti, m->d.L, x->e.layer);
    const size_t row0 = (sl.offset - (size_t)ti->offset) / sl.cols, HS = (size_t)m->d.HS;
    const int permute = r->qkv && r->part < 2; /* q and k */
    const size_t frb = wf_gguf_row_bytes(x->t->type, sl.cols), rb = wf_quant_row_bytes(ti->dtype, sl.cols);
    for (size_t k = 0; k < sl.rows; k++) {
        const uint8_t *src = x->t->data + file_row(k, HS, permute) * frb;
        if (ti->dtype == WF_QUANT_F32) {
            const gg_tensor one = {.type = x->t->type, .ne = {sl.cols, 1, 1, 1}, .data = src};
            read_row(m->block[WF_WEIGHTS] + ti->offset + (row0 + k) * sl.cols, &one, 0);
        } else if ((x->t->type == GGML_Q8_0) == (ti->dtype == WF_QUANT_Q8_0)) {
            memcpy(m->qmem + m->qoff[r->param] + (row0 + k) * rb, src, rb);
        } else {
            wf_q4_to_q8_row(m->qmem + m->qoff[r->param] + (row0 + k) * rb, src, sl.cols);
        }
    }
}

wf_status wf_gguf_model_load(wf_model *m, wf_tokenizer *t, const uint8_t *data, size_t n) {
    gg_file f;
    wf_status s = wf_gguf_parse(data, n, &f, m->err, sizeof m->err);
    if (s != WF_OK) return s;
    wf_config cfg;
    wf_tensor_info table[WF_N_PARAMS];
    uint8_t qtype[WF_N_PARAMS];
    found_entry *fe = NULL;
    int n_fe = 0, have_tok = 0;
    wf_tokenizer tok;
    memset(&tok, 0, sizeof tok);
    s = read_config(&f, &cfg, m->err, sizeof m->err);
    if (s == WF_OK && wf_tensor_table(&cfg, table) != WF_OK)
        s = WF_ERR(m, WF_ERR_FORMAT, "GGUF: the metadata describes more than 2^31 - 1 parameters");
    if (s == WF_OK && !(fe = wf_calloc_n((size_t)cfg.n_layer * 12 + 4, sizeof *fe))) s = WF_ERR(m, WF_ERR_NOMEM, "out of memory");
    if (s == WF_OK) s = plan(&f, &cfg, table, fe, &n_fe, qtype, m->err, sizeof m->err);
    if (s == WF_OK && t) s = wf_gguf_read_tokenizer(&f, cfg.vocab_size, &tok, &have_tok, m->err, sizeof m->err);
    /* every tensor is present with its shape: the weights take no more than the file (a Q4_0
     * part kept as Q8_0 at most twice its bytes); the KV cache the context asks for is
     * refused by the model's own size check when it cannot fit */
    if (s == WF_OK) s = wf_model_init_as(m, &cfg, NULL, qtype, 0);
    if (s == WF_OK) {
        for (int k = 0; k < n_fe; k++) copy_entry(m, &fe[k]);
        if (t && have_tok) {
            wf_tokenizer_move(t, &tok);
            t->err[0] = 0;
        }
        m->origin = WF_ORIGIN_GGUF;
        m->err[0] = 0;
    }
    wf_tokenizer_clear(&tok);
    free(fe);
    wf_gguf_release(&f);
    return s;
}
