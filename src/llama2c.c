/* llama2.c's model file, as its run.c reads it and its export.py writes it in the "legacy"
 * layout (version 0): seven int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
 * vocab_size, seq_len; a negative vocab_size says the classifier is a matrix of its own),
 * then float32 weights, each stacked over the layers, in the order of FILE_TENSORS below.
 * The model is a Llama-shaped decoder: RMSNorm (eps 1e-5), SwiGLU with w1 the gate, w3 the
 * up and w2 the down projection, RoPE of base 10000, no biases, grouped-query attention
 * when n_kv_heads < n_heads (docs/FORMATS.md).
 *
 * RoPE: llama2.c turns adjacent channels (2i, 2i + 1) of a head as one pair by t * theta_i
 * (Meta's convention); ours pairs channel i with i + HS/2 (Hugging Face's rotate_half). So
 * each head's query and key rows are permuted on the way in, row 2i to i and row 2i + 1 to
 * i + HS/2: the same pairs turn by the same angles, and q.k, a sum over the head's channels,
 * does not change when both are permuted alike. */
#include <stdlib.h>

#include "bytes.h"
#include "hf.h"
#include "model.h"
#include "tokenizer.h"

#define LLAMA2C_NORM_EPS 1e-5f /* run.c's rmsnorm */
#define LLAMA2C_MAGIC 0x616b3432u /* "ak42": the later export versions, which this reader refuses */

/* Where one of the file's tensors goes: a parameter, the first of its rows there, and
 * whether its rows are RoPE'd heads to permute. rows = 0: skipped (RoPE tables). */
typedef struct {
    const char *name;
    int param;     /* WF_P_* */
    int rows_of;   /* 0 d_model, 1 n_kv_head * head size, 2 d_ff, 3 vocab, 4 the RoPE tables */
    int cols_of;   /* the same letters for columns; -1: one row per layer of C (norm gains) */
    int at;        /* 0: rows start at 0; 1: after the queries (C); 2: after the keys (C + KC); 3: after F */
    int layered;
    int permute;   /* 1: query or key heads in llama2.c's pair order */
} file_tensor;

enum { R_C, R_KC, R_F, R_V, R_TABLE };
static const file_tensor FILE_TENSORS[] = {
    {"token_embedding_table", WF_P_wte, R_V, R_C, 0, 0, 0},
    {"rms_att_weight", WF_P_ln1w, R_C, -1, 0, 1, 0},
    {"wq", WF_P_qkvw, R_C, R_C, 0, 1, 1},
    {"wk", WF_P_qkvw, R_KC, R_C, 1, 1, 1},
    {"wv", WF_P_qkvw, R_KC, R_C, 2, 1, 0},
    {"wo", WF_P_attprojw, R_C, R_C, 0, 1, 0},
    {"rms_ffn_weight", WF_P_ln2w, R_C, -1, 0, 1, 0},
    {"w1", WF_P_fcw, R_F, R_C, 0, 1, 0},
    {"w2", WF_P_fcprojw, R_C, R_F, 0, 1, 0},
    {"w3", WF_P_fcw, R_F, R_C, 3, 1, 0},
    {"rms_final_weight", WF_P_lnfw, R_C, -1, 0, 0, 0},
    {"freq_cis_real", -1, R_TABLE, 0, 0, 0, 0},
    {"freq_cis_imag", -1, R_TABLE, 0, 0, 0, 0},
    {"wcls", WF_P_lm_head, R_V, R_C, 0, 0, 0}, /* only with a negative vocab_size */
};
#define N_FILE_TENSORS ((int)(sizeof FILE_TENSORS / sizeof *FILE_TENSORS))

/* The config a header describes; WF_ERR_FORMAT with the reason when it describes none. */
static wf_status read_header(wf_model *m, const uint8_t *data, size_t n, wf_config *cfg, int *shared) {
    if (n >= 4 && wf_le32(data) == LLAMA2C_MAGIC)
        return WF_ERR(m, WF_ERR_UNSUPPORTED, "llama2.c: this is a version %u export (magic \"ak42\"); wasmformer reads "
                      "the legacy layout (export.py --version 0, the tinyllamas' .bin files)",
                      n >= 8 ? wf_le32(data + 4) : (uint32_t)0);
    if (n < 28) return WF_ERR(m, WF_ERR_FORMAT, "llama2.c: %zu bytes, shorter than the 28-byte header (truncated?)", n);
    int32_t h[7];
    for (int i = 0; i < 7; i++) h[i] = (int32_t)wf_le32(data + 4 * i);
    static const char *const names[7] = {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"};
    for (int i = 0; i < 7; i++)
        if (h[i] == 0 || (h[i] < 0 && i != 5) || h[i] == INT32_MIN)
            return WF_ERR(m, WF_ERR_FORMAT, "llama2.c: header %s is %d", names[i], h[i]);
    *shared = h[5] > 0;
    wf_config_default(cfg);
    wf_hf_llama_shape(cfg);
    cfg->tied_head = *shared;
    cfg->d_model = h[0];
    cfg->d_ff = h[1];
    cfg->n_layer = h[2];
    cfg->n_head = h[3];
    cfg->n_kv_head = h[4] == h[3] ? 0 : h[4];
    cfg->vocab_size = h[5] < 0 ? -h[5] : h[5];
    cfg->context = h[6];
    cfg->norm_eps = LLAMA2C_NORM_EPS;
    char why[200];
    wf_status s = wf_config_check(cfg, why, sizeof why);
    if (s != WF_OK) return WF_ERR(m, WF_ERR_FORMAT, "llama2.c: the header describes no model wasmformer has: %s", why);
    return WF_OK;
}

/* Rows and columns of a file tensor, per layer, from the config's letters. */
static double letter(const wf_dims *d, int which) {
    switch (which) {
    case R_C: return d->C;
    case R_KC: return d->KC;
    case R_F: return d->F;
    case R_V: return d->V;
    default: return (double)d->T * (d->HS / 2);
    }
}

/* Row r of a head of HS rows, in llama2.c's pair order, goes to this row of ours. */
static size_t unpair(size_t r, size_t HS) { return r % 2 == 0 ? r / 2 : HS / 2 + r / 2; }

wf_status wf_llama2c_model_load(wf_model *m, const uint8_t *data, int32_t n) {
    wf_config cfg;
    int shared = 1;
    wf_status s = read_header(m, data, (size_t)n, &cfg, &shared);
    if (s != WF_OK) return s;
    wf_dims d;
    wf_dims_of(&cfg, &d);
    /* the file's length, in double so that a hostile header cannot overflow it */
    double floats = 0;
    for (int t = 0; t < N_FILE_TENSORS; t++) {
        const file_tensor *f = &FILE_TENSORS[t];
        if (f->param == WF_P_lm_head && shared) continue;
        const double per = f->rows_of == R_TABLE ? letter(&d, R_TABLE) : letter(&d, f->rows_of) * (f->cols_of < 0 ? 1 : letter(&d, f->cols_of));
        floats += per * (f->layered ? d.L : 1);
    }
    const double want = 28 + 4 * floats;
    if (want != (double)n)
        return WF_ERR(m, WF_ERR_FORMAT, "llama2.c: the header (dim %d, hidden_dim %d, %d layers, %d heads, %d key/value "
                      "heads, vocabulary %d%s, seq_len %d) needs %.0f bytes; the file has %d", cfg.d_model, cfg.d_ff,
                      cfg.n_layer, cfg.n_head, d.KV, cfg.vocab_size, shared ? "" : " and a classifier of its own",
                      cfg.context, want, n);
    /* every weight finite, before the model is touched */
    for (size_t i = 28; i < (size_t)n; i += 4) {
        uint32_t bits = wf_le32(data + i);
        if ((bits & 0x7f800000u) == 0x7f800000u)
            return WF_ERR(m, WF_ERR_FORMAT, "llama2.c: the float at byte %zu is %s", i,
                          bits & 0x007fffffu ? "NaN" : "infinite");
    }
    /* the file is as long as the model's weights (4 bytes each), so the model is bounded by it */
    if ((s = wf_model_init_zero(m, &cfg)) != WF_OK) return s;
    wf_real *w = wf_model_block(m, WF_WEIGHTS);
    wf_tensor_info table[WF_N_PARAMS];
    wf_plan_tensors(&d, table);
    const uint8_t *p = data + 28;
    for (int t = 0; t < N_FILE_TENSORS; t++) {
        const file_tensor *f = &FILE_TENSORS[t];
        if (f->param == WF_P_lm_head && shared) continue;
        const size_t R = (size_t)letter(&d, f->rows_of), K = f->cols_of < 0 ? 1 : (size_t)letter(&d, f->cols_of);
        if (f->param < 0) { /* run.c skips the RoPE tables too: theta is 10000 */
            p += 4 * (size_t)letter(&d, R_TABLE);
            continue;
        }
        const wf_tensor_info *ti = &table[f->param];
        const size_t layer_size = (size_t)ti->size / (f->layered ? (size_t)d.L : 1);
        const size_t first = f->at == 0 ? 0 : f->at == 1 ? (size_t)d.C : f->at == 2 ? (size_t)(d.C + d.KC) : (size_t)d.F;
        for (int l = 0; l < (f->layered ? d.L : 1); l++) {
            wf_real *dst = w + ti->offset + (size_t)l * layer_size;
            for (size_t r = 0; r < R; r++, p += 4 * K) {
                const size_t HS = (size_t)d.HS, row = f->permute ? r / HS * HS + unpair(r % HS, HS) : r;
                float v[1];
                for (size_t k = 0; k < K; k++) {
                    wf_read_f32s(v, p + 4 * k, 1);
                    dst[(first + row) * K + k] = v[0];
                }
            }
        }
    }
    m->origin = WF_ORIGIN_LLAMA2C;
    return WF_OK;
}

/* ---- tokenizer.bin ----
 * llama2.c's tokenizer file, as its tokenizer.py writes it and run.c reads it: int32
 * max_token_length, then per token float32 score, int32 length, its bytes (SentencePiece's
 * piece with U+2581 as a space; <s> and </s> as "\n<s>\n", "\n</s>\n"; bytes as "<0xHH>" at
 * ids 3..258). run.c takes the count from the model; here it is every record to the end.
 * run.c's encoder needs the piece " " (its dummy prefix) and ids up to 258 (byte b is id
 * b + 3), and its merge buffer holds two pieces of max_token_length bytes: all checked. */
#define TOK_FAIL(status, ...) return wf_fail(msg, cap, (status), __VA_ARGS__)

wf_status wf_llama2c_tok_parse(const uint8_t *data, size_t n, wf_tokenizer *out, char *msg, size_t cap) {
    wf_reader r = wf_reader_of(data, n);
    const uint32_t max_len = wf_get_u32(&r);
    if (r.failed) TOK_FAIL(WF_ERR_FORMAT, "tokenizer.bin: %zu bytes, shorter than its 4-byte header", n);
    if (max_len == 0 || max_len > (1u << 20))
        TOK_FAIL(WF_ERR_FORMAT, "tokenizer.bin: max_token_length %d is outside [1, 1048576]", (int32_t)max_len);
    /* count the records first: each is at least 9 bytes, so the count is bounded by the file */
    int64_t count = 0;
    for (wf_reader c = r; wf_left(&c) > 0; count++) {
        wf_get_u32(&c);
        const uint32_t len = wf_get_u32(&c);
        if (c.failed) TOK_FAIL(WF_ERR_FORMAT, "tokenizer.bin: token %lld is cut short (truncated file?)", (long long)count);
        if (len == 0 || len > max_len)
            TOK_FAIL(WF_ERR_FORMAT, "tokenizer.bin: token %lld is %d bytes long; max_token_length says 1 to %u", (long long)count,
                     (int32_t)len, max_len);
        if (!wf_take(&c, len)) TOK_FAIL(WF_ERR_FORMAT, "tokenizer.bin: token %lld runs past the end of the file", (long long)count);
    }
    if (count < 259)
        TOK_FAIL(WF_ERR_FORMAT, "tokenizer.bin has %lld tokens; llama2.c writes byte b as id b + 3, so it needs at least 259",
                 (long long)count);
    if (count > (1 << 24)) TOK_FAIL(WF_ERR_FORMAT, "tokenizer.bin has %lld tokens; at most 16777216", (long long)count);
    wf_vocab *v = &out->voc;
    v->family = WF_VOCAB_LLAMA2C;
    v->n = (int32_t)count;
    v->pool = malloc(n);
    v->tok = wf_malloc_n((size_t)count, sizeof(wf_span));
    v->score = wf_malloc_n((size_t)count, sizeof(float));
    v->src = malloc(n);
    if (!v->pool || !v->tok || !v->score || !v->src) {
        wf_vocab_release(v);
        TOK_FAIL(WF_ERR_NOMEM, "out of memory reading tokenizer.bin (%lld tokens)", (long long)count);
    }
    memcpy(v->src, data, n);
    v->src_n = (int32_t)n;
    for (int32_t i = 0; i < v->n; i++) {
        wf_read_f32s(&v->score[i], wf_take(&r, 4), 1);
        const uint32_t len = wf_get_u32(&r);
        v->tok[i] = (wf_span){(uint32_t)v->pool_n, len};
        memcpy(v->pool + v->pool_n, wf_take(&r, len), len);
        v->pool_n += len;
    }
    v->unk = -1;
    v->bos = 1; /* run.c starts every prompt with BOS, id 1 */
    wf_status s = wf_vocab_index(v, msg, cap);
    if (s == WF_OK && wf_vocab_find(v, (const uint8_t *)" ", 1) < 0)
        s = wf_fail(msg, cap, WF_ERR_FORMAT, "tokenizer.bin has no \" \" token, which llama2.c's encoder puts first");
    if (s == WF_OK) s = wf_vocab_finish(v, msg, cap);
    if (s != WF_OK) {
        wf_vocab_release(v);
        return s;
    }
    out->kind = WF_TOKENIZER_LLAMA2C;
    return WF_OK;
}
