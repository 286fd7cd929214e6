/* The tokenizer file (.wft): any tokenizer, in the envelope checkpoints have too (envelope.c),
 * written and read hardened like a checkpoint (docs/FORMATS.md); a checkpoint's TOKN section
 * holds one whole. And the two public calls for a tokenizer's files: wf_tokenizer_save (a
 * .wft, or a tokenizer.json: tokjson_write.c) and wf_tokenizer_load, which tells the files a
 * tokenizer comes in apart by their first bytes: a .wft, a tokenizer.json or llama2.c's
 * tokenizer.bin. */
#include <stdlib.h>

#include "envelope.h"
#include "tokenizer.h"

#define TOK_VERSION 1

/* ---- writing ---- */

void wf_tokfile_write(wf_writer *w, const wf_tokenizer *t) {
    size_t start = wf_envelope_begin(w, "WFTK", TOK_VERSION, (uint32_t)t->kind);
    if (t->kind == WF_TOKENIZER_CHAR) {
        wf_put_u32(w, (uint32_t)t->n_chars);
        for (int32_t i = 0; i < t->n_chars; i++) wf_put_u32(w, t->chars[i]);
    } else if (t->kind == WF_TOKENIZER_HF || t->kind == WF_TOKENIZER_LLAMA2C) {
        wf_put(w, t->voc.src, (size_t)t->voc.src_n); /* the tokenizer.json or tokenizer.bin itself */
    } else {
        wf_put_u32(w, WF_BPE_PRETOKENIZER);
        wf_put_u32(w, (uint32_t)t->bpe.n_merges);
        for (int32_t i = 0; i < 2 * t->bpe.n_merges; i++) wf_put_u32(w, (uint32_t)t->bpe.merges[i]);
    }
    wf_envelope_end(w, start);
}

wf_status wf_tokenizer_save(wf_tokenizer *t, int32_t flags, uint8_t **out, int32_t *n) {
    if (!t) return WF_ERR_ARG;
    if (!out || !n) return TOK_ERR(t, WF_ERR_ARG, "out and n must not be NULL");
    *out = NULL;
    *n = 0;
    if (flags & ~WF_SAVE_JSON) return TOK_ERR(t, WF_ERR_ARG, "unknown flags 0x%x; the only flag is WF_SAVE_JSON", (unsigned)flags);
    if (t->kind == WF_TOKENIZER_NONE) return TOK_ERR(t, WF_ERR_STATE, "the tokenizer is empty: nothing to save");
    if (flags & WF_SAVE_JSON) return wf_tokjson_save(t, out, n);
    wf_writer w = {NULL, 0};
    wf_tokfile_write(&w, t);
    wf_status s = wf_envelope_buffer(w.off, out, n, t->err, sizeof t->err);
    if (s != WF_OK) return s;
    w.p = *out;
    w.off = 0;
    wf_tokfile_write(&w, t);
    t->err[0] = 0;
    return WF_OK;
}

/* ---- reading ---- */

/* A BPE payload: pretokenizer, merge count, merges; wf_bpe_build checks the merges. */
static wf_status parse_bpe(wf_reader *r, wf_tokenizer *out, char *msg, size_t cap) {
    uint32_t pre = wf_get_u32(r), count = wf_get_u32(r);
    if (r->failed) FAIL(WF_ERR_FORMAT, "the BPE vocabulary ends early");
    if (pre != WF_BPE_PRETOKENIZER) FAIL(WF_ERR_UNSUPPORTED, "BPE pretokenizer %u; this build knows %d", pre, WF_BPE_PRETOKENIZER);
    if (count > WF_BPE_MAX_VOCAB - 256 || (size_t)count * 8 != wf_left(r))
        FAIL(WF_ERR_FORMAT, "the BPE vocabulary says %u merges but %zu bytes follow (8 each)", count, wf_left(r));
    int32_t *merges = wf_malloc_n((size_t)count, 2 * sizeof(int32_t));
    if (!merges) FAIL(WF_ERR_NOMEM, "out of memory reading %u merges", count);
    for (uint32_t i = 0; i < 2 * count; i++) {
        uint32_t v = wf_get_u32(r);
        merges[i] = v > INT32_MAX ? -1 : (int32_t)v; /* out of range either way; build names it */
    }
    char why[160];
    wf_status s = wf_bpe_build(&out->bpe, merges, (int32_t)count, why, sizeof why);
    if (s != WF_OK) FAIL(s, "the BPE vocabulary: %s", why);
    out->kind = WF_TOKENIZER_BPE;
    return WF_OK;
}

wf_status wf_tokfile_parse(const uint8_t *data, size_t n, wf_tokenizer *out, char *msg, size_t cap) {
    wf_reader r;
    uint32_t kind;
    wf_status s = wf_envelope_open(data, n, "WFTK", TOK_VERSION, "tokenizer file", &r, &kind, msg, cap);
    if (s != WF_OK) return s;
    if (kind == WF_TOKENIZER_BPE) return parse_bpe(&r, out, msg, cap);
    if (kind == WF_TOKENIZER_HF || kind == WF_TOKENIZER_LLAMA2C) {
        char sub[200];
        s = kind == WF_TOKENIZER_HF ? wf_tokjson_parse(r.p, r.n, out, sub, sizeof sub) : wf_llama2c_tok_parse(r.p, r.n, out, sub, sizeof sub);
        if (s != WF_OK) FAIL(s, "the tokenizer file holds a bad %s: %s", kind == WF_TOKENIZER_HF ? "tokenizer.json" : "tokenizer.bin", sub);
        if (out->kind != (int32_t)kind) {
            wf_tokenizer_clear(out);
            FAIL(WF_ERR_FORMAT, "the tokenizer file's tokenizer.json is wasmformer's own BPE, which is saved as kind 2");
        }
        return WF_OK;
    }
    if (kind != WF_TOKENIZER_CHAR)
        FAIL(kind == WF_TOKENIZER_NONE ? WF_ERR_FORMAT : WF_ERR_UNSUPPORTED,
             "tokenizer kind %u is not one this build reads (1 char, 2 bpe, 3 tokenizer.json, 4 llama2.c)", kind);
    uint32_t count = wf_get_u32(&r);
    if (r.failed || count == 0) FAIL(WF_ERR_FORMAT, "the char vocabulary is empty");
    if (count > WF_MAX_CODEPOINT + 1 || (size_t)count * 4 != wf_left(&r))
        FAIL(WF_ERR_FORMAT, "the char vocabulary says %u code points but %zu bytes follow (4 each)", count, wf_left(&r));
    uint32_t *chars = wf_malloc_n(count, sizeof(uint32_t));
    if (!chars) FAIL(WF_ERR_NOMEM, "out of memory reading %u code points", count);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t cp = wf_get_u32(&r);
        int bad = cp > WF_MAX_CODEPOINT || (cp >= 0xD800 && cp <= 0xDFFF);
        if (bad || (i > 0 && cp <= chars[i - 1])) {
            free(chars);
            FAIL(WF_ERR_FORMAT, "code point %u of the vocabulary (0x%X) is %s", i, cp,
                 bad ? "not a Unicode scalar value" : "not above the one before it (they must ascend)");
        }
        chars[i] = cp;
    }
    wf_tokenizer_set_chars(out, chars, (int32_t)count);
    return WF_OK;
}

/* Whether the bytes are JSON: '{' or '[' after any byte order mark and blanks, and then not
 * a zero byte. A llama2.c tokenizer.bin opens with an int32 (max_token_length) whose first
 * byte may be '{' (123), but then zero bytes follow. */
static int is_json(const uint8_t *d, size_t n) {
    size_t i = n >= 3 && d[0] == 0xef && d[1] == 0xbb && d[2] == 0xbf ? 3 : 0;
    while (i < n && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r')) i++;
    return i < n && (d[i] == '{' || d[i] == '[') && (i + 1 == n || d[i + 1] != 0);
}

wf_status wf_tokenizer_load(wf_tokenizer *t, const uint8_t *data, int32_t n) {
    if (!t) return WF_ERR_ARG;
    if ((!data && n > 0) || n < 0) return TOK_ERR(t, WF_ERR_ARG, "data is NULL or its length is negative");
    wf_tokenizer next;
    memset(&next, 0, sizeof next);
    const size_t len = (size_t)n;
    wf_status s = wf_envelope_is_ours(data, len) ? wf_tokfile_parse(data, len, &next, t->err, sizeof t->err)
                  : is_json(data, len) ? wf_tokjson_parse(data, len, &next, t->err, sizeof t->err)
                                              : wf_llama2c_tok_parse(data, len, &next, t->err, sizeof t->err);
    if (s != WF_OK) return s;
    wf_tokenizer_move(t, &next);
    t->err[0] = 0;
    return WF_OK;
}
