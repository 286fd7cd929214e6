/* The tokenizer handle and its char-level kind; byte-level BPE lives in bpe.c, the
 * vocabulary tokenizers (tokenizer.json, llama2.c) in vocab.c.
 * Char-level vocabulary: id 0 is <unk>; ids 1..n are the distinct code points of the
 * training text in ascending order. UTF-8 is decoded strictly (no overlong forms,
 * surrogates or values above U+10FFFF); each byte that does not start a valid sequence
 * reads as U+FFFD. Encoding maps a code point outside the vocabulary to <unk>; <unk>
 * decodes to U+FFFD. */
#include <stdlib.h>

#include "tokenizer.h"

#define UNK 0
#define REPLACEMENT 0xFFFDu

wf_tokenizer *wf_tokenizer_create(void) { return calloc(1, sizeof(wf_tokenizer)); }

void wf_tokenizer_clear(wf_tokenizer *t) {
    free(t->chars);
    t->chars = NULL;
    t->n_chars = 0;
    wf_bpe_release(&t->bpe);
    wf_vocab_release(&t->voc);
    t->kind = WF_TOKENIZER_NONE;
}

void wf_tokenizer_move(wf_tokenizer *dst, wf_tokenizer *src) {
    char err[sizeof dst->err];
    memcpy(err, dst->err, sizeof err);
    wf_tokenizer_clear(dst);
    *dst = *src;
    memcpy(dst->err, err, sizeof err);
    memset(src, 0, sizeof *src);
}

void wf_tokenizer_free(wf_tokenizer *t) {
    if (!t) return;
    wf_tokenizer_clear(t);
    free(t);
}

void wf_tokenizer_set_chars(wf_tokenizer *t, uint32_t *chars, int32_t n) {
    t->kind = WF_TOKENIZER_CHAR;
    t->chars = chars;
    t->n_chars = n;
    for (int c = 0; c < 128; c++) t->ascii[c] = UNK;
    for (int32_t i = 0; i < n && chars[i] < 128; i++) t->ascii[chars[i]] = i + 1;
}

const char *wf_tokenizer_error(const wf_tokenizer *t) { return t ? t->err : "tokenizer is NULL"; }

int32_t wf_tokenizer_vocab_size(const wf_tokenizer *t) {
    if (!t) return 0;
    if (t->kind == WF_TOKENIZER_CHAR) return t->n_chars + 1;
    if (t->kind == WF_TOKENIZER_BPE) return 256 + t->bpe.n_merges;
    if (t->kind == WF_TOKENIZER_HF || t->kind == WF_TOKENIZER_LLAMA2C) return t->voc.n;
    return 0;
}

wf_status wf_tokenizer_get_info(wf_tokenizer *t, wf_tokenizer_info *out) {
    if (!t) return WF_ERR_ARG;
    if (!out) return TOK_ERR(t, WF_ERR_ARG, "out is NULL");
    out->kind = t->kind;
    out->vocab_size = wf_tokenizer_vocab_size(t);
    /* char: the longest UTF-8 sequence; no decoder: a space between tokens */
    out->max_bytes = t->kind == WF_TOKENIZER_CHAR ? 4 : t->kind == WF_TOKENIZER_BPE ? t->bpe.max_len
                   : t->kind == WF_TOKENIZER_NONE ? 0 : t->voc.max_dec + t->voc.dec_join;
    out->bos = t->kind == WF_TOKENIZER_HF || t->kind == WF_TOKENIZER_LLAMA2C ? t->voc.bos : t->kind ? -1 : 0;
    return WF_OK;
}

/* Char: every distinct code point of the text, ascending, after <unk>. */
static wf_status train_char(wf_tokenizer *t, const char *text, int32_t len) {
    if (len == 0) return TOK_ERR(t, WF_ERR_ARG, "the text is empty: a vocabulary needs at least one character");
    /* one bit per code point: 136 KB, freed before returning */
    uint32_t *seen = wf_calloc_n((WF_MAX_CODEPOINT + 1) / 32 + 1, sizeof(uint32_t));
    if (!seen) return TOK_ERR(t, WF_ERR_NOMEM, "out of memory building the vocabulary");
    const unsigned char *s = (const unsigned char *)text;
    int32_t n_chars = 0;
    for (int32_t i = 0; i < len;) {
        uint32_t cp;
        i += wf_utf8_next(s + i, (size_t)(len - i), &cp);
        if (!(seen[cp >> 5] & (1u << (cp & 31)))) {
            seen[cp >> 5] |= 1u << (cp & 31);
            n_chars++;
        }
    }
    uint32_t *chars = wf_malloc_n((size_t)n_chars, sizeof(uint32_t));
    if (!chars) {
        free(seen);
        return TOK_ERR(t, WF_ERR_NOMEM, "out of memory building the vocabulary");
    }
    int32_t k = 0;
    for (uint32_t w = 0; w <= WF_MAX_CODEPOINT / 32; w++) {
        for (uint32_t bits = seen[w]; bits; bits &= bits - 1) chars[k++] = w * 32 + (uint32_t)__builtin_ctz(bits);
    }
    free(seen);
    wf_tokenizer_clear(t);
    wf_tokenizer_set_chars(t, chars, n_chars);
    t->err[0] = 0;
    return WF_OK;
}

static int32_t lookup(const wf_tokenizer *t, uint32_t cp) {
    if (cp < 128) return t->ascii[cp];
    int32_t lo = 0, hi = t->n_chars - 1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (t->chars[mid] == cp) return mid + 1;
        if (t->chars[mid] < cp) lo = mid + 1;
        else hi = mid - 1;
    }
    return UNK;
}

wf_status wf_tokenizer_encode(wf_tokenizer *t, const char *text, int32_t len, int32_t *out, int32_t cap,
                              int32_t *n_out) {
    if (!t) return WF_ERR_ARG;
    if (t->kind == WF_TOKENIZER_NONE) return TOK_ERR(t, WF_ERR_STATE, "the tokenizer has no vocabulary yet");
    if ((!text && len > 0) || len < 0 || !n_out || (!out && cap > 0) || cap < 0)
        return TOK_ERR(t, WF_ERR_ARG, "bad arguments to encode");
    const unsigned char *s = (const unsigned char *)text;
    wf_ids o = {.out = out, .cap = cap};
    if (t->kind == WF_TOKENIZER_BPE) {
        wf_bpe_encode(&t->bpe, s, (size_t)len, &o);
    } else if (t->kind == WF_TOKENIZER_CHAR) {
        for (int32_t i = 0; i < len;) {
            uint32_t cp;
            i += wf_utf8_next(s + i, (size_t)(len - i), &cp);
            wf_ids_put(&o, lookup(t, cp));
        }
    } else {
        wf_status st = wf_vocab_encode(&t->voc, s, (size_t)len, &o, NULL, t->err, sizeof t->err);
        if (st != WF_OK) return st;
    }
    if (o.n > INT32_MAX) return TOK_ERR(t, WF_ERR_ARG, "the text has more than 2^31 - 1 tokens");
    *n_out = (int32_t)o.n;
    if (o.n > cap) return TOK_ERR(t, WF_ERR_ARG, "output buffer of %d ids is too small: the text has %lld", cap, (long long)o.n);
    t->err[0] = 0;
    return WF_OK;
}

wf_status wf_tokenizer_decode(wf_tokenizer *t, const int32_t *ids, int32_t n, char *out, int32_t cap,
                              int32_t *n_out) {
    if (!t) return WF_ERR_ARG;
    if (t->kind == WF_TOKENIZER_NONE) return TOK_ERR(t, WF_ERR_STATE, "the tokenizer has no vocabulary yet");
    if ((!ids && n > 0) || n < 0 || !n_out || (!out && cap > 0) || cap < 0)
        return TOK_ERR(t, WF_ERR_ARG, "bad arguments to decode");
    int32_t len = 0;
    if (t->kind == WF_TOKENIZER_HF || t->kind == WF_TOKENIZER_LLAMA2C) {
        wf_status st = wf_vocab_decode(&t->voc, ids, n, (uint8_t *)out, cap, n_out, t->err, sizeof t->err);
        if (st == WF_OK) t->err[0] = 0;
        return st;
    }
    if (t->kind == WF_TOKENIZER_BPE) {
        const int32_t V = 256 + t->bpe.n_merges;
        for (int32_t i = 0; i < n; i++) {
            const int32_t id = ids[i];
            if (id < 0 || id >= V) return TOK_ERR(t, WF_ERR_TOKEN, "token id %d at position %d is outside [0, %d)", id, i, V);
            const int32_t k = (int32_t)(t->bpe.tok_off[id + 1] - t->bpe.tok_off[id]);
            if (k > cap - len) return TOK_ERR(t, WF_ERR_ARG, "output buffer of %d bytes is too small", cap);
            memcpy(out + len, t->bpe.bytes + t->bpe.tok_off[id], (size_t)k);
            len += k;
        }
        *n_out = len;
        t->err[0] = 0;
        return WF_OK;
    }
    uint8_t buf[4];
    for (int32_t i = 0; i < n; i++) {
        int32_t id = ids[i];
        if (id < 0 || id > t->n_chars)
            return TOK_ERR(t, WF_ERR_TOKEN, "token id %d at position %d is outside [0, %d)", id, i, t->n_chars + 1);
        int k = wf_utf8_put(id == UNK ? REPLACEMENT : t->chars[id - 1], buf);
        if (len + k > cap) return TOK_ERR(t, WF_ERR_ARG, "output buffer of %d bytes is too small", cap);
        memcpy(out + len, buf, (size_t)k);
        len += k;
    }
    *n_out = len;
    t->err[0] = 0;
    return WF_OK;
}

/* Byte-level BPE: bpe.c learns the merges. */
static wf_status train_bpe(wf_tokenizer *t, const char *text, int32_t len, int32_t vocab_size) {
    if (len == 0) return TOK_ERR(t, WF_ERR_ARG, "the text is empty: there is nothing to learn merges from");
    if (vocab_size < 256 || vocab_size > WF_BPE_MAX_VOCAB)
        return TOK_ERR(t, WF_ERR_ARG, "a byte-level BPE vocabulary has 256 byte tokens plus merges: vocab_size must be in [256, %d], not %d",
                       WF_BPE_MAX_VOCAB, vocab_size);
    wf_bpe next;
    wf_status s = wf_bpe_train(&next, (const uint8_t *)text, (size_t)len, vocab_size, t->err, sizeof t->err);
    if (s != WF_OK) return s;
    wf_tokenizer_clear(t);
    t->bpe = next;
    t->kind = WF_TOKENIZER_BPE;
    t->err[0] = 0;
    return WF_OK;
}

wf_status wf_tokenizer_train(wf_tokenizer *t, int32_t kind, const char *text, int32_t len, int32_t vocab_size) {
    if (!t) return WF_ERR_ARG;
    if (!text || len < 0) return TOK_ERR(t, WF_ERR_ARG, "text is NULL or its length is negative");
    if (kind == WF_TOKENIZER_BPE) return train_bpe(t, text, len, vocab_size);
    if (kind == WF_TOKENIZER_HF || kind == WF_TOKENIZER_LLAMA2C)
        return TOK_ERR(t, WF_ERR_UNSUPPORTED, "a %s tokenizer is read from its file (wf_tokenizer_load), not trained",
                       kind == WF_TOKENIZER_HF ? "tokenizer.json" : "llama2.c");
    if (kind != WF_TOKENIZER_CHAR)
        return TOK_ERR(t, WF_ERR_ARG, "kind %d is not a tokenizer to train: WF_TOKENIZER_CHAR (1) or WF_TOKENIZER_BPE (2)", kind);
    if (vocab_size != 0)
        return TOK_ERR(t, WF_ERR_ARG, "a char tokenizer's vocabulary is its text's characters: vocab_size must be 0, not %d",
                       vocab_size);
    return train_char(t, text, len);
}
