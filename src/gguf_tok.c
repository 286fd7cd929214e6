/* A GGUF file's tokenizer (tokenizer.ggml.*), both ways (gguf.h). Read: a llama
 * (SentencePiece) vocabulary becomes the llama2.c tokenizer.bin it is (its pieces with
 * U+2581 as spaces, scores, byte tokens <0xHH> at ids 3..258: run.c's encoding is
 * SentencePiece's merge by score), a gpt2 (byte-level BPE) one the tokenizer.json it is
 * (vocabulary, merges, llama.cpp's pre-tokenizer as Hugging Face's steps), each read by its
 * own hardened reader, whose file the tokenizer keeps and saves. Written: the same
 * vocabularies back, or without a tokenizer a placeholder one, so that llama.cpp loads the
 * model to run on token ids. */
#include <stdio.h>
#include <stdlib.h>

#include "gguf.h"

#define TOK_TYPE_NORMAL 1
#define TOK_TYPE_UNKNOWN 2
#define TOK_TYPE_CONTROL 3
#define TOK_TYPE_USER 4
#define TOK_TYPE_BYTE 6

static const uint8_t SPACE_MARK[3] = {0xE2, 0x96, 0x81}; /* U+2581, SentencePiece's space */

/* An array of `type` with n elements (n: the tokens'), or NULL and the message. */
static const gg_kv *array_of(const gg_file *f, const char *key, uint32_t type, uint64_t n, int need, wf_status *s, char *msg,
                             size_t cap) {
    const gg_kv *kv = wf_gguf_get(f, key);
    if (!kv) {
        if (need) *s = wf_fail(msg, cap, WF_ERR_FORMAT, "GGUF: %s is missing", key);
        return NULL;
    }
    const int ok = kv->type == GG_ARR && (kv->etype == type || (type == GG_I32 && kv->etype == GG_U32)) && (!n || kv->count == n);
    if (!ok) *s = wf_fail(msg, cap, WF_ERR_FORMAT, "GGUF: %s is not an array of the tokenizer's %llu entries", key, (unsigned long long)n);
    return ok ? kv : NULL;
}

/* ---- reading ---- */

/* llama: the tokenizer.bin the vocabulary is, read by llama2c.c. */
static wf_status read_spm(const gg_file *f, const gg_kv *toks, wf_tokenizer *out, char *msg, size_t cap) {
    wf_status s = WF_OK;
    const gg_kv *scores = array_of(f, "tokenizer.ggml.scores", GG_F32, toks->count, 1, &s, msg, cap);
    if (!scores) return s;
    double bos = 1, add_bos = 1;
    wf_gguf_num(f, "tokenizer.ggml.bos_token_id", &bos);
    wf_gguf_num(f, "tokenizer.ggml.add_bos_token", &add_bos);
    if (bos != 1 || !add_bos)
        FAIL(WF_ERR_UNSUPPORTED, "GGUF: a llama vocabulary %s; this build reads the ones that start prompts with id 1 (Llama's, TinyLlama's)",
             add_bos ? "whose BOS is not id 1" : "without a BOS");
    /* sizes first: each piece shrinks (U+2581 -> one byte) or stays */
    size_t bytes = 4, max_len = 1;
    const uint8_t *at = toks->at;
    for (uint64_t i = 0; i < toks->count; i++) {
        const gg_str t = wf_gguf_next_str(&at);
        if (i >= 3 && i < 259) { /* run.c writes byte b as id b + 3 */
            char want[8];
            snprintf(want, sizeof want, "<0x%02X>", (unsigned)(i - 3));
            if (t.n != 6 || memcmp(t.p, want, 6))
                FAIL(WF_ERR_UNSUPPORTED, "GGUF: the llama vocabulary's id %llu is not the byte token %s (SentencePiece's "
                     "byte fallback at ids 3..258 is what this build reads)", (unsigned long long)i, want);
        }
        if (!wf_add_ok(bytes, 8 + t.n, &bytes)) FAIL(WF_ERR_NOMEM, "GGUF: the vocabulary passes this build's address space");
        if (t.n > max_len) max_len = t.n;
    }
    if (toks->count < 259) FAIL(WF_ERR_FORMAT, "GGUF: a llama vocabulary of %llu tokens (at least 259)", (unsigned long long)toks->count);
    wf_buf b = {0};
    if (!(b.p = malloc(bytes))) FAIL(WF_ERR_NOMEM, "out of memory reading a GGUF vocabulary");
    b.cap = bytes;
    const uint32_t ml = (uint32_t)max_len;
    wf_buf_put(&b, &ml, 4);
    at = toks->at;
    for (uint64_t i = 0; i < toks->count; i++) {
        const gg_str t = wf_gguf_next_str(&at);
        const float score = (float)wf_gguf_elem(scores, i);
        const size_t len_at = b.n + 4;
        uint32_t len = 0;
        wf_buf_put(&b, &score, 4);
        wf_buf_put(&b, &len, 4);
        for (size_t k = 0; k < t.n; k++, len++) {
            if (k + 3 <= t.n && !memcmp(t.p + k, SPACE_MARK, 3)) {
                wf_buf_put(&b, " ", 1);
                k += 2;
            } else {
                wf_buf_put(&b, t.p + k, 1);
            }
        }
        memcpy(b.p + len_at, &len, 4);
    }
    s = b.failed ? wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory") : wf_llama2c_tok_parse(b.p, b.n, out, msg, cap);
    free(b.p);
    return s;
}

/* A JSON string of s[0, n): quotes, backslashes and control characters escaped. */
static void put_json_str(wf_buf *b, const uint8_t *s, size_t n) {
    wf_buf_put(b, "\"", 1);
    for (size_t k = 0; k < n; k++) {
        if (s[k] == '"' || s[k] == '\\') {
            const char e[2] = {'\\', (char)s[k]};
            wf_buf_put(b, e, 2);
        } else if (s[k] < 0x20) {
            char e[8];
            snprintf(e, sizeof e, "\\u%04x", s[k]);
            wf_buf_put(b, e, 6);
        } else {
            wf_buf_put(b, s + k, 1);
        }
    }
    wf_buf_put(b, "\"", 1);
}

static void put_text(wf_buf *b, const char *s) { wf_buf_put(b, s, strlen(s)); }

/* gpt2: the tokenizer.json the vocabulary is, read by tokjson.c. llama.cpp's pre-tokenizers
 * "gpt2" (GPT-2's pattern) and "smollm" (each digit alone, then GPT-2's pattern) are
 * Hugging Face's ByteLevel and Digits + ByteLevel. */
static wf_status read_bpe(const gg_file *f, const gg_kv *toks, wf_tokenizer *out, char *msg, size_t cap) {
    wf_status s = WF_OK;
    const gg_kv *merges = array_of(f, "tokenizer.ggml.merges", GG_STR, 0, 1, &s, msg, cap);
    const gg_kv *types = array_of(f, "tokenizer.ggml.token_type", GG_I32, toks->count, 0, &s, msg, cap);
    if (s != WF_OK) return s;
    char pre[32] = "gpt2";
    wf_gguf_text(f, "tokenizer.ggml.pre", pre, sizeof pre);
    const char *pretok = !strcmp(pre, "gpt2") ? "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":true}"
                         : !strcmp(pre, "smollm") ? "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Digits\",\"individual_digits\":true},"
                                                    "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":true}]}"
                                                  : NULL;
    if (!pretok) FAIL(WF_ERR_UNSUPPORTED, "GGUF: the BPE pre-tokenizer \"%s\" is not one this build runs (gpt2, smollm)", pre);
    double bos = -1, add_bos = 0;
    wf_gguf_num(f, "tokenizer.ggml.bos_token_id", &bos);
    wf_gguf_num(f, "tokenizer.ggml.add_bos_token", &add_bos);
    if (add_bos && !(bos >= 0 && bos < (double)toks->count && bos == floor(bos)))
        FAIL(WF_ERR_FORMAT, "GGUF: tokenizer.ggml.add_bos_token without a BOS id among the tokens");
    wf_buf b = {0};
    put_text(&b, "{\"version\":\"1.0\",\"added_tokens\":[");
    const uint8_t *at = toks->at;
    int first = 1;
    for (uint64_t i = 0; types && i < toks->count; i++) {
        const gg_str t = wf_gguf_next_str(&at);
        const double type = wf_gguf_elem(types, i);
        if (type != TOK_TYPE_CONTROL && type != TOK_TYPE_USER) continue;
        char head[64];
        snprintf(head, sizeof head, "%s{\"id\":%llu,\"content\":", first ? "" : ",", (unsigned long long)i);
        put_text(&b, head);
        put_json_str(&b, t.p, t.n);
        put_text(&b, type == TOK_TYPE_CONTROL ? ",\"normalized\":false,\"special\":true}" : ",\"normalized\":false,\"special\":false}");
        first = 0;
    }
    put_text(&b, "],\"normalizer\":null,\"pre_tokenizer\":");
    put_text(&b, pretok);
    if (add_bos) {
        char pp[256];
        snprintf(pp, sizeof pp, ",\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":\"B\","
                 "\"type_id\":0}},{\"Sequence\":{\"id\":\"A\",\"type_id\":0}}],\"special_tokens\":{\"B\":{\"id\":\"B\",\"ids\":[%d],"
                 "\"tokens\":[\"B\"]}}}", (int)bos);
        put_text(&b, pp);
    }
    put_text(&b, ",\"decoder\":{\"type\":\"ByteLevel\"},\"model\":{\"type\":\"BPE\",\"vocab\":{");
    at = toks->at;
    for (uint64_t i = 0; i < toks->count; i++) {
        const gg_str t = wf_gguf_next_str(&at);
        char id[32];
        if (i) put_text(&b, ",");
        put_json_str(&b, t.p, t.n);
        snprintf(id, sizeof id, ":%llu", (unsigned long long)i);
        put_text(&b, id);
    }
    put_text(&b, "},\"merges\":[");
    at = merges->at;
    for (uint64_t i = 0; i < merges->count; i++) {
        const gg_str m = wf_gguf_next_str(&at);
        if (i) put_text(&b, ",");
        put_json_str(&b, m.p, m.n);
    }
    put_text(&b, "]}}");
    s = b.failed ? wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory reading a GGUF vocabulary")
                 : wf_tokjson_parse(b.p, b.n, out, msg, cap);
    free(b.p);
    return s;
}

wf_status wf_gguf_read_tokenizer(const gg_file *f, int32_t V, wf_tokenizer *out, int *found, char *msg, size_t cap) {
    char model[32];
    *found = 0;
    const int32_t len = wf_gguf_text(f, "tokenizer.ggml.model", model, sizeof model);
    if (len < 0) return wf_gguf_get(f, "tokenizer.ggml.model") ? wf_fail(msg, cap, WF_ERR_FORMAT, "GGUF: tokenizer.ggml.model is not a short string") : WF_OK;
    if (strcmp(model, "llama") && strcmp(model, "gpt2"))
        FAIL(WF_ERR_UNSUPPORTED, "GGUF: tokenizer.ggml.model \"%s\" is not one this build reads (llama, gpt2)", model);
    wf_status s = WF_OK;
    const gg_kv *toks = array_of(f, "tokenizer.ggml.tokens", GG_STR, 0, 1, &s, msg, cap);
    if (!toks) return s;
    if (toks->count == 0 || toks->count > (uint64_t)V)
        FAIL(WF_ERR_FORMAT, "GGUF: the tokenizer has %llu tokens; the model's vocabulary %d", (unsigned long long)toks->count, V);
    char sub[200];
    s = !strcmp(model, "llama") ? read_spm(f, toks, out, sub, sizeof sub) : read_bpe(f, toks, out, sub, sizeof sub);
    if (s != WF_OK) {
        wf_tokenizer_clear(out);
        FAIL(s, "%s%s", strncmp(sub, "GGUF", 4) ? "GGUF: the tokenizer: " : "", sub);
    }
    *found = 1;
    return WF_OK;
}

/* ---- writing ---- */

static void put_array(wf_writer *w, const char *key, uint32_t etype, uint64_t n) {
    wf_gguf_put_key(w, key, GG_ARR);
    wf_put_u32(w, etype);
    wf_put_u64(w, n);
}

static void put_u32_kv(wf_writer *w, const char *key, uint32_t v) {
    wf_gguf_put_key(w, key, GG_U32);
    wf_put_u32(w, v);
}

static void put_bool_kv(wf_writer *w, const char *key, int v) {
    wf_gguf_put_key(w, key, GG_BOOL);
    const uint8_t b = (uint8_t)(v != 0);
    wf_put(w, &b, 1);
}

static void put_text_kv(wf_writer *w, const char *key, const char *v) {
    wf_gguf_put_key(w, key, GG_STR);
    wf_gguf_put_str(w, v, strlen(v));
}

/* A piece with U+2581 for each space (SentencePiece's spelling). */
static void put_piece(wf_writer *w, const uint8_t *s, size_t n) {
    size_t spaces = 0;
    for (size_t k = 0; k < n; k++) spaces += s[k] == ' ';
    wf_put_u64(w, n + 2 * spaces);
    for (size_t k = 0; k < n; k++) {
        if (s[k] == ' ') wf_put(w, SPACE_MARK, 3);
        else wf_put(w, s + k, 1);
    }
}

/* Whether s[0, n) is a byte token "<0xHH>". */
static int is_byte_token(const uint8_t *s, size_t n) { return n == 6 && !memcmp(s, "<0x", 3) && s[5] == '>'; }

/* No tokenizer: <unk>, <s>, </s>, the byte tokens <0x00>..<0xFF>, U+2581 (SentencePiece's
 * space: llama.cpp and the llama2.c reader want it and <0x0A>), then placeholders <tN>:
 * text encodes byte by byte, and llama.cpp runs the model on token ids. */
static int write_placeholder(wf_writer *w, int32_t V, char *msg, size_t cap) {
    if (V < 260)
        return wf_fail(msg, cap, WF_ERR_UNSUPPORTED, "a vocabulary of %d without a tokenizer: a GGUF file's placeholder "
                       "vocabulary needs 260 ids (the bytes and SentencePiece's space)", V), -1;
    put_text_kv(w, "tokenizer.ggml.model", "llama");
    put_array(w, "tokenizer.ggml.tokens", GG_STR, (uint64_t)V);
    for (int32_t i = 0; i < V; i++) {
        char t[32];
        if (i < 3) snprintf(t, sizeof t, "%s", i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>");
        else if (i < 259) snprintf(t, sizeof t, "<0x%02X>", (unsigned)(i - 3));
        else if (i == 259) memcpy(t, SPACE_MARK, 3), t[3] = 0;
        else snprintf(t, sizeof t, "<t%d>", i);
        wf_gguf_put_str(w, t, strlen(t));
    }
    put_array(w, "tokenizer.ggml.scores", GG_F32, (uint64_t)V);
    for (int32_t i = 0; i < V; i++) {
        const float z = 0;
        wf_put_f32s(w, &z, 1);
    }
    put_array(w, "tokenizer.ggml.token_type", GG_I32, (uint64_t)V);
    for (int32_t i = 0; i < V; i++)
        wf_put_u32(w, i == 0 ? TOK_TYPE_UNKNOWN : i < 3 ? TOK_TYPE_CONTROL : i < 259 ? TOK_TYPE_BYTE : TOK_TYPE_NORMAL);
    put_u32_kv(w, "tokenizer.ggml.bos_token_id", 1);
    put_u32_kv(w, "tokenizer.ggml.eos_token_id", 2);
    put_u32_kv(w, "tokenizer.ggml.unknown_token_id", 0);
    put_bool_kv(w, "tokenizer.ggml.add_bos_token", 1);
    return 8;
}

/* A llama2.c-style vocabulary (run.c's SentencePiece merge by score): back to pieces. */
static int write_spm(wf_writer *w, const wf_vocab *v) {
    put_text_kv(w, "tokenizer.ggml.model", "llama");
    put_array(w, "tokenizer.ggml.tokens", GG_STR, (uint64_t)v->n);
    for (int32_t i = 0; i < v->n; i++) put_piece(w, wf_str_of(v, v->tok[i]), v->tok[i].len);
    put_array(w, "tokenizer.ggml.scores", GG_F32, (uint64_t)v->n);
    wf_put_f32s(w, v->score, (size_t)v->n);
    put_array(w, "tokenizer.ggml.token_type", GG_I32, (uint64_t)v->n);
    for (int32_t i = 0; i < v->n; i++) {
        const int byte = is_byte_token(wf_str_of(v, v->tok[i]), v->tok[i].len);
        wf_put_u32(w, i == 0 ? TOK_TYPE_UNKNOWN : i < 3 ? TOK_TYPE_CONTROL : byte ? TOK_TYPE_BYTE : TOK_TYPE_NORMAL);
    }
    put_u32_kv(w, "tokenizer.ggml.bos_token_id", 1);
    put_u32_kv(w, "tokenizer.ggml.eos_token_id", 2);
    put_u32_kv(w, "tokenizer.ggml.unknown_token_id", 0);
    put_bool_kv(w, "tokenizer.ggml.add_bos_token", 1);
    return 8;
}

typedef struct {
    int32_t rank, a, b;
} merge_entry;

static int by_rank(const void *x, const void *y) {
    const merge_entry *p = x, *q = y;
    return (p->rank > q->rank) - (p->rank < q->rank);
}

/* A byte-level BPE tokenizer.json: its vocabulary, its merges in rank order, its added tokens
 * as control (special) or user-defined tokens, and llama.cpp's name of its pre-tokenizer. */
static int write_bpe(wf_writer *w, const wf_vocab *v, char *msg, size_t cap) {
    int digits = 0;
    for (int i = 0; i < v->n_split; i++) digits |= v->split[i] == WF_SPLIT_DIGIT;
    merge_entry *m = wf_malloc_n((size_t)v->n_merges + 1, sizeof *m);
    if (!m) return wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory writing the merges"), -1;
    int32_t k = 0;
    for (uint32_t i = 0; v->mkey && i <= v->mmask; i++)
        if (v->mkey[i]) {
            const uint64_t key = v->mkey[i] - 1;
            m[k++] = (merge_entry){.rank = v->mrank[i], .a = (int32_t)(key >> 32), .b = (int32_t)(uint32_t)key};
        }
    qsort(m, (size_t)k, sizeof *m, by_rank);
    put_text_kv(w, "tokenizer.ggml.model", "gpt2");
    put_text_kv(w, "tokenizer.ggml.pre", digits ? "smollm" : "gpt2");
    put_array(w, "tokenizer.ggml.tokens", GG_STR, (uint64_t)v->n);
    for (int32_t i = 0; i < v->n; i++) wf_gguf_put_str(w, (const char *)wf_str_of(v, v->tok[i]), v->tok[i].len);
    put_array(w, "tokenizer.ggml.token_type", GG_I32, (uint64_t)v->n);
    for (int32_t i = 0; i < v->n; i++) {
        uint32_t type = TOK_TYPE_NORMAL;
        for (int32_t j = 0; j < v->n_added; j++)
            if (v->added[j].id == i) type = TOK_TYPE_CONTROL;
        wf_put_u32(w, type);
    }
    put_array(w, "tokenizer.ggml.merges", GG_STR, (uint64_t)k);
    for (int32_t i = 0; i < k; i++) {
        const wf_span a = v->tok[m[i].a], b = v->tok[m[i].b];
        wf_put_u64(w, (uint64_t)a.len + 1 + b.len);
        wf_put(w, wf_str_of(v, a), a.len);
        wf_put(w, " ", 1);
        wf_put(w, wf_str_of(v, b), b.len);
    }
    free(m);
    int n = 5;
    if (v->bos >= 0) {
        put_u32_kv(w, "tokenizer.ggml.bos_token_id", (uint32_t)v->bos);
        n++;
    }
    put_bool_kv(w, "tokenizer.ggml.add_bos_token", v->bos >= 0);
    return n + 1;
}

int wf_gguf_write_tokenizer(wf_writer *w, const wf_tokenizer *t, int32_t V, char *msg, size_t cap) {
    if (!t) return write_placeholder(w, V, msg, cap);
    if (t->kind == WF_TOKENIZER_LLAMA2C) return write_spm(w, &t->voc);
    if (t->kind == WF_TOKENIZER_HF && t->voc.family == WF_VOCAB_BYTES && !t->voc.byte_fallback) return write_bpe(w, &t->voc, msg, cap);
    const char *what = t->kind == WF_TOKENIZER_CHAR ? "a char tokenizer" : t->kind == WF_TOKENIZER_BPE ? "wasmformer's BPE (its own chunks)"
                                                                                                     : "a SentencePiece-style tokenizer.json";
    wf_fail(msg, cap, WF_ERR_UNSUPPORTED, "%s has no GGUF form llama.cpp encodes alike; save without the tokenizer (llama.cpp then "
            "runs the model on token ids)", what);
    return -1;
}
