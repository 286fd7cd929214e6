/* The llama-family model in a GGUF file (gguf.h; llama, SmolLM, TinyLlama:
 * general.architecture "llama"): what its header describes, checked (the config, where each
 * tensor goes, the type each keeps, the tokenizer: gguf_tok.c), and each row of its weights as
 * it arrives (F32, F16 and BF16 as float32, Q8_0 and Q4_0 as blocks). gguf_stream.c drives it. */
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

/* A row of entry x (x->unit bytes at src) holds what is not finite: a float, or a block's scale. */
static int bad_row(const gg_entry *x, const uint8_t *src) {
    const uint32_t type = x->t->type;
    const size_t n = x->cols;
    if (type == GGML_Q8_0 || type == GGML_Q4_0) return wf_quant_check_row(src, n, type == GGML_Q8_0 ? WF_QUANT_Q8_0 : WF_QUANT_Q4_0) >= 0;
    for (size_t k = 0; k < n; k++)
        if (type == GGML_F32    ? (wf_le32(src + 4 * k) & 0x7f800000u) == 0x7f800000u
            : type == GGML_BF16 ? ((src[2 * k + 1] << 8 | src[2 * k]) & 0x7f80) == 0x7f80 /* float32's exponent, 8 bits */
                                : ((src[2 * k + 1] << 8) & 0x7c00) == 0x7c00)
            return 1;
    return 0;
}

/* Finds every tensor the config's layout has (shape, type) and the type each of our
 * tensors keeps: float32 where any part is F32, F16 or BF16 (or the tensor is not a linear's or an
 * embedding), else Q8_0 where any part is, else Q4_0 (Q4_0 parts become Q8_0 exactly). */
static wf_status plan(gg_file *f, const wf_config *c, const wf_tensor_info *table, gg_entry *fe, int *n_fe,
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
        if (!t->bytes) {
            s = wf_fail(msg, cap, WF_ERR_UNSUPPORTED, "GGUF: tensor \"%s\" is %s; this build reads F32, F16, BF16, Q8_0 and Q4_0", name,
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
        const int is_float = t->type == GGML_F32 || t->type == GGML_F16 || t->type == GGML_BF16;
        if (nd == 1 && !is_float) {
            s = wf_fail(msg, cap, WF_ERR_UNSUPPORTED, "GGUF: the vector \"%s\" is %s; this build reads vectors as F32, F16 or BF16",
                        name, wf_gguf_type_name(t->type));
            break;
        }
        t->used = 1;
        const int p = entries[k].row->param;
        any_f32[p] |= is_float;
        any_q8[p] |= t->type == GGML_Q8_0;
        const wf_hf_slice sl = wf_hf_slice_of(entries[k].row, &table[entries[k].row->param], c->n_layer, entries[k].layer);
        fe[k] = (gg_entry){.e = entries[k], .t = t, .at = f->data + t->offset, .rows = sl.rows, .cols = sl.cols,
                           .unit = wf_gguf_row_bytes(t->type, sl.cols)};
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

/* Entries in file order, none overlapping another (a streamed load takes each file byte once). */
static int by_offset(const void *a, const void *b) {
    const uint64_t x = ((const gg_entry *)a)->at, y = ((const gg_entry *)b)->at;
    return (x > y) - (x < y);
}

wf_status wf_gguf_plan(gg_file *f, wf_config *cfg, uint8_t qtype[WF_N_PARAMS], gg_entry **out, int *n_out, wf_tokenizer *tok,
                       int *have_tok, char *msg, size_t cap) {
    wf_tensor_info table[WF_N_PARAMS];
    *out = NULL;
    *n_out = 0;
    *have_tok = 0;
    wf_status s = read_config(f, cfg, msg, cap);
    if (s == WF_OK && wf_tensor_table(cfg, table) != WF_OK)
        s = wf_fail(msg, cap, WF_ERR_FORMAT, "GGUF: the metadata describes more than 2^31 - 1 parameters");
    gg_entry *fe = NULL;
    if (s == WF_OK && !(fe = wf_calloc_n((size_t)cfg->n_layer * 12 + 4, sizeof *fe))) s = wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory");
    int n = 0;
    if (s == WF_OK) s = plan(f, cfg, table, fe, &n, qtype, msg, cap);
    for (int k = 0; k < n && s == WF_OK; k++) /* (the shapes were checked: a row is whole blocks) */
        if (!fe[k].unit || fe[k].t->bytes % fe[k].unit || fe[k].t->bytes / fe[k].unit != fe[k].rows)
            s = wf_fail(msg, cap, WF_ERR_FORMAT, "GGUF: a tensor's bytes do not divide into its rows");
    if (s == WF_OK) qsort(fe, (size_t)n, sizeof *fe, by_offset);
    for (int k = 1; k < n && s == WF_OK; k++)
        if (fe[k].at < fe[k - 1].at + fe[k - 1].t->bytes) {
            char a[GG_MAX_NAME + 8], b[GG_MAX_NAME + 8];
            s = wf_fail(msg, cap, WF_ERR_FORMAT, "GGUF: tensors \"%s\" and \"%s\" share bytes of the file",
                        wf_gguf_shown(fe[k - 1].t->name, a, sizeof a), wf_gguf_shown(fe[k].t->name, b, sizeof b));
        }
    if (s == WF_OK && tok) s = wf_gguf_read_tokenizer(f, cfg->vocab_size, tok, have_tok, msg, cap);
    if (s != WF_OK) {
        free(fe);
        return s;
    }
    *out = fe;
    *n_out = n;
    return WF_OK;
}

/* Row r of a part of rows (a head of HS rows at a time) in llama.cpp's pair order: the file
 * holds our row i < HS/2 of a head at 2i, row HS/2 + i at 2i + 1; so its row p is our
 * p/2 (p even) or HS/2 + p/2 (p odd). */
static size_t our_row(size_t p, size_t HS, int permute) {
    if (!permute) return p;
    const size_t i = p % HS, h = p - i;
    return h + (i % 2 ? HS / 2 + i / 2 : i / 2);
}

wf_status wf_gguf_take_row(wf_model *m, const gg_entry *x, size_t k, const uint8_t *src, char *msg, size_t cap) {
    if (bad_row(x, src)) {
        char name[GG_MAX_NAME + 8];
        FAIL(WF_ERR_FORMAT, "GGUF: tensor \"%s\": row %llu has a value or a block scale that is not finite",
             wf_gguf_shown(x->t->name, name, sizeof name), (unsigned long long)(k * x->unit / x->t->row));
    }
    const wf_hf_row *r = x->e.row;
    const wf_tensor_info *ti = &m->tensors[r->param];
    const wf_hf_slice sl = wf_hf_slice_of(r, ti, m->d.L, x->e.layer);
    const size_t row = (sl.offset - (size_t)ti->offset) / sl.cols + our_row(k, (size_t)m->d.HS, r->qkv && r->part < 2);
    const uint32_t type = x->t->type;
    const size_t n = x->cols, rb = wf_quant_row_bytes(ti->dtype, n);
    if (ti->dtype == WF_QUANT_F32) {
        wf_real *out = m->block[WF_WEIGHTS] + ti->offset + row * n;
        if (type == GGML_F32) {
            for (size_t j = 0; j < n; j++) {
                float v;
                wf_read_f32s(&v, src + 4 * j, 1);
                out[j] = v;
            }
        } else if (type == GGML_F16) {
            for (size_t j = 0; j < n; j++) out[j] = wf_f16_to_f32((uint16_t)(src[2 * j] | src[2 * j + 1] << 8));
        } else if (type == GGML_BF16) { /* bfloat16: float32's upper half, exactly */
            for (size_t j = 0; j < n; j++) {
                const uint32_t u = (uint32_t)(src[2 * j] | src[2 * j + 1] << 8) << 16;
                float v;
                memcpy(&v, &u, 4);
                out[j] = v;
            }
        } else {
            wf_dequantize_blocks(out, src, n, type == GGML_Q8_0 ? WF_QUANT_Q8_0 : WF_QUANT_Q4_0);
        }
    } else { /* ggml's blocks packed for the kernels (Q4_0 parts of a Q8_0 tensor as Q8_0) */
        wf_quant_pack_row(m->qmem + m->qoff[r->param] + row * rb, ti->dtype, src, type == GGML_Q8_0 ? WF_QUANT_Q8_0 : WF_QUANT_Q4_0, n);
    }
    return WF_OK;
}
