/* The vocabulary tokenizers (tokenizer.h): a Hugging Face tokenizer.json (read by tokjson.c)
 * or llama2.c's tokenizer.bin (read by llama2c.c): their tables (the merges, the strings'
 * index, added tokens) and decoding. Encoding is vocab_encode.c, merging merge.c. */
#include <stdio.h>
#include <stdlib.h>

#include "unicode.h"
#include "vocab.h"

#define LLAMA2C_BOS 1

/* ---- merges: pair key (0 is an empty slot) -> rank and merged id ---- */


int wf_vocab_merges_alloc(wf_vocab *v, int32_t count) {
    const uint32_t slots = wf_table_slots((size_t)count);
    if (!slots) return 0;
    v->mkey = wf_calloc_n(slots, sizeof(uint64_t));
    v->mrank = wf_malloc_n(slots, sizeof(int32_t));
    v->mres = wf_malloc_n(slots, sizeof(int32_t));
    v->mmask = slots - 1;
    return v->mkey && v->mrank && v->mres;
}

void wf_vocab_merge_put(wf_vocab *v, int32_t a, int32_t b, int32_t rank, int32_t merged) {
    const uint64_t k = wf_merge_key(a, b);
    uint32_t i = wf_merge_slot(k) & v->mmask;
    while (v->mkey[i] && v->mkey[i] != k) i = (i + 1) & v->mmask;
    if (!v->mkey[i]) v->n_merges++;
    v->mkey[i] = k; /* a repeated pair takes its last rank, as the libraries' maps do */
    v->mrank[i] = rank;
    v->mres[i] = merged;
}

/* ---- strings ---- */

static uint32_t fnv_more(uint32_t h, const uint8_t *s, size_t n) {
    if (!n) return h;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 16777619u;
    return h;
}

#define FNV_START 2166136261u

/* The lowest id whose string is a followed by b; -1 if none. */
int32_t wf_vocab_find2(const wf_vocab *v, const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
    if (!v->slot || na + nb > (size_t)v->max_tok) return -1;
    const uint32_t h = fnv_more(fnv_more(FNV_START, a, na), b, nb);
    for (uint32_t i = h & v->slot_mask;; i = (i + 1) & v->slot_mask) {
        const int32_t id = v->slot[i];
        if (id < 0) return -1;
        const wf_span t = v->tok[id];
        if (t.len == na + nb && !memcmp(wf_str_of(v, t), a, na) && (!nb || !memcmp(wf_str_of(v, t) + na, b, nb))) return id;
    }
}

int32_t wf_vocab_find(const wf_vocab *v, const uint8_t *s, size_t n) { return wf_vocab_find2(v, s, n, NULL, 0); }

/* GPT-2's bytes_to_unicode: the printable bytes ('!'..'~', 0xA1..0xAC, 0xAE..0xFF) stand
 * for themselves; the other 68 (0x00..0x20, 0x7F, 0x80..0xA0, 0xAD), in order, for 256.. */
static int printable(uint32_t b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

int wf_byte_char(uint8_t b, uint8_t out[2]) {
    const uint32_t k = b <= 0x20 ? b : b == 0x7F ? 33 : b <= 0xA0 ? 34 + (b - 0x80u) : 67;
    return wf_utf8_put(printable(b) ? b : 256 + k, out);
}

/* The byte a byte-level character stands for; -1 for any other character. */
static int char_byte(uint32_t cp) {
    if (printable(cp)) return (int)cp;
    if (cp < 256 || cp >= 256 + 68) return -1;
    const uint32_t k = cp - 256;
    return (int)(k < 33 ? k : k == 33 ? 0x7F : k < 67 ? 0x80 + (k - 34) : 0xAD);
}

/* A byte fallback token's byte: "<0xHH>" with two hex digits (the Rust library's rule). */
static int fallback_byte(const uint8_t *s, size_t n) {
    if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>') return -1;
    int v = 0;
    for (int i = 3; i < 5; i++) {
        const uint8_t c = s[i];
        const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

void wf_vocab_release(wf_vocab *v) {
    free(v->pool);
    free(v->tok);
    free(v->dec);
    free(v->dec0);
    free(v->score);
    free(v->slot);
    free(v->mkey);
    free(v->mrank);
    free(v->mres);
    free(v->added);
    wf_matcher_release(&v->match[0]);
    wf_matcher_release(&v->match[1]);
    free(v->src);
    memset(v, 0, sizeof *v);
}

wf_status wf_vocab_index(wf_vocab *v, char *msg, size_t cap) {
    const uint32_t slots = wf_table_slots((size_t)v->n);
    v->slot = slots ? wf_malloc_n(slots, sizeof(int32_t)) : NULL;
    if (!v->slot) return wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory indexing %d tokens", v->n);
    memset(v->slot, 0xFF, slots * sizeof(int32_t));
    v->slot_mask = slots - 1;
    v->max_tok = 0;
    for (int32_t id = 0; id < v->n; id++) {
        const wf_span t = v->tok[id];
        if ((int32_t)t.len > v->max_tok) v->max_tok = (int32_t)t.len;
        uint32_t i = fnv_more(FNV_START, wf_str_of(v, t), t.len) & v->slot_mask;
        for (; v->slot[i] >= 0; i = (i + 1) & v->slot_mask) {
            const wf_span o = v->tok[v->slot[i]];
            if (o.len == t.len && !memcmp(wf_str_of(v, o), wf_str_of(v, t), t.len)) break; /* a repeat keeps the lowest id */
        }
        if (v->slot[i] < 0) v->slot[i] = id;
    }
    for (int b = 0; b < 256; b++) {
        uint8_t c[8];
        int k = wf_byte_char((uint8_t)b, c);
        v->char_id[b] = v->family == WF_VOCAB_BYTES ? wf_vocab_find(v, c, (size_t)k) : -1;
        snprintf((char *)c, sizeof c, "<0x%02X>", b);
        v->fb_id[b] = wf_vocab_find(v, c, 6);
    }
    return WF_OK;
}

/* ---- decoding one token ---- */

void wf_buf_put(wf_buf *b, const void *s, size_t k) {
    if (b->failed) return;
    size_t need;
    if (!wf_add_ok(b->n, k, &need)) {
        b->failed = 1;
        return;
    }
    if (need > b->cap) {
        const size_t c = wf_grow(b->cap, need, 256);
        uint8_t *p = c ? realloc(b->p, c) : NULL;
        if (!p) {
            b->failed = 1;
            return;
        }
        b->p = p;
        b->cap = c;
    }
    if (k) memcpy(b->p + b->n, s, k);
    b->n += k;
}

int wf_vocab_normalize(const wf_vocab *v, const uint8_t *s, size_t n, wf_buf *out, wf_buf *tmp) {
    out->n = 0;
    wf_buf_put(out, s, n);
    for (int k = 0; k < v->n_norm && !out->failed; k++) {
        const wf_vocab_step *st = &v->norm[k];
        const uint8_t *a = wf_str_of(v, st->a), *b = wf_str_of(v, st->b);
        tmp->n = 0;
        if (st->op == WF_NORM_PREPEND) {
            wf_buf_put(tmp, a, st->a.len);
            wf_buf_put(tmp, out->p, out->n);
        } else {
            for (size_t i = 0; i < out->n;) {
                if (wf_starts(out->p + i, out->n - i, a, st->a.len)) {
                    wf_buf_put(tmp, b, st->b.len);
                    i += st->a.len;
                } else {
                    wf_buf_put(tmp, out->p + i++, 1);
                }
            }
        }
        wf_buf swap = *out; /* the result in out, the other as the next scratch */
        *out = *tmp;
        *tmp = swap;
        if (tmp->failed) out->failed = 1;
    }
    return !out->failed;
}

/* One token's bytes through the decoder's per-token steps, into *out (using *tmp). */
static void decode_token(const wf_vocab *v, int32_t id, int first, wf_buf *out, wf_buf *tmp) {
    const wf_span t = v->tok[id];
    out->n = 0;
    wf_buf_put(out, wf_str_of(v, t), t.len);
    if (v->family == WF_VOCAB_LLAMA2C) {
        const int b = fallback_byte(out->p, out->n);
        if (b >= 0) {
            out->p[0] = (uint8_t)b;
            out->n = 1;
        }
        return;
    }
    for (int k = 0; k < v->n_dec && !out->failed; k++) {
        const wf_vocab_step *st = &v->dec_steps[k];
        const uint8_t *a = wf_str_of(v, st->a), *b = wf_str_of(v, st->b);
        tmp->n = 0;
        if (st->op == WF_DEC_REPLACE || st->op == WF_DEC_METASPACE) {
            const int drop = st->op == WF_DEC_METASPACE && first && st->start; /* start: prepends */
            for (size_t i = 0; i < out->n;) {
                if (wf_starts(out->p + i, out->n - i, a, st->a.len)) {
                    if (st->op == WF_DEC_REPLACE) wf_buf_put(tmp, b, st->b.len);
                    else if (!drop) wf_buf_put(tmp, " ", 1);
                    i += st->a.len;
                } else {
                    wf_buf_put(tmp, out->p + i++, 1);
                }
            }
        } else if (st->op == WF_DEC_BYTEFALLBACK) {
            const int byte = fallback_byte(out->p, out->n);
            if (byte < 0) continue;
            const uint8_t c = (uint8_t)byte;
            wf_buf_put(tmp, &c, 1);
        } else if (st->op == WF_DEC_BYTELEVEL) {
            /* each character back to its byte; a character outside the map: the token's own bytes */
            int all = 1;
            for (size_t i = 0; i < out->n && all;) {
                uint32_t cp;
                i += (size_t)wf_utf8_next(out->p + i, out->n - i, &cp);
                const int byte = char_byte(cp);
                if (byte < 0) all = 0;
                else {
                    const uint8_t c = (uint8_t)byte;
                    wf_buf_put(tmp, &c, 1);
                }
            }
            if (!all) continue;
        } else { /* WF_DEC_STRIP: up to start leading, stop trailing copies of one character */
            size_t from = 0, to = out->n;
            for (int32_t i = 0; i < st->start && wf_starts(out->p + from, to - from, a, st->a.len); i++) from += st->a.len;
            for (int32_t i = 0; i < st->stop && to - from >= st->a.len && !memcmp(out->p + to - st->a.len, a, st->a.len); i++)
                to -= st->a.len;
            wf_buf_put(tmp, out->p + from, to - from);
        }
        wf_buf swap = *out;
        *out = *tmp;
        *tmp = swap;
    }
    if (tmp->failed) out->failed = 1;
}

/* Appends each id's decoded bytes to the pool: spans[id]. */
static int decode_all(wf_vocab *v, int first, wf_span *spans, wf_buf *pool, wf_buf *one, wf_buf *tmp) {
    for (int32_t id = 0; id < v->n; id++) {
        decode_token(v, id, first, one, tmp);
        size_t end;
        if (one->failed || !wf_add_ok(pool->n, one->n, &end) || end > UINT32_MAX) return 0;
        spans[id] = (wf_span){(uint32_t)pool->n, (uint32_t)one->n};
        wf_buf_put(pool, one->p, one->n);
        v->pool = pool->p; /* it may have moved; the next token's string is read from it */
        if ((int32_t)one->n > v->max_dec) v->max_dec = (int32_t)one->n;
    }
    return !pool->failed;
}

/* The added tokens of one set (raw or normalized), as wf_matcher_build reads them. */
typedef struct { const wf_vocab *v; int set; } added_set;
static const uint8_t *added_token(const void *ctx, int32_t i, uint32_t *len) {
    const added_set *as = ctx;
    const wf_added *a = &as->v->added[i];
    if (a->normalized != as->set) return NULL;
    *len = a->match.len;
    return wf_str_of(as->v, a->match);
}

wf_status wf_vocab_finish(wf_vocab *v, char *msg, size_t cap) {
    wf_buf pool = {.p = v->pool, .n = v->pool_n, .cap = v->pool_n}, one = {0}, tmp = {0};
    v->dec = wf_malloc_n((size_t)v->n, sizeof(wf_span));
    v->dec0 = v->dec_first ? wf_malloc_n((size_t)v->n, sizeof(wf_span)) : NULL;
    int ok = v->dec && (!v->dec_first || v->dec0);
    v->max_dec = 0;
    if (ok) ok = decode_all(v, 0, v->dec, &pool, &one, &tmp);
    if (ok && v->dec_first) ok = decode_all(v, 1, v->dec0, &pool, &one, &tmp);
    free(one.p);
    free(tmp.p);
    v->pool = pool.p; /* realloc may have moved it; spans are offsets */
    v->pool_n = pool.n;
    if (!ok) return wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory decoding %d tokens", v->n);
    for (int set = 0; set < 2; set++) {
        const added_set as = {v, set};
        wf_status s = wf_matcher_build(&v->match[set], v->n_added, added_token, &as, msg, cap);
        if (s != WF_OK) return s;
    }
    return WF_OK;
}

/* ---- decoding ---- */

wf_status wf_vocab_decode(const wf_vocab *v, const int32_t *ids, int32_t n, uint8_t *out, int32_t cap,
                          int32_t *n_out, char *msg, size_t msg_cap) {
    int32_t len = 0;
    for (int32_t i = 0; i < n; i++) {
        const int32_t id = ids[i];
        if (id < 0 || id >= v->n)
            return wf_fail(msg, msg_cap, WF_ERR_TOKEN, "token id %d at position %d is outside [0, %d)", id, i, v->n);
        wf_span d = i == 0 && v->dec0 ? v->dec0[id] : v->dec[id];
        const uint8_t *p = wf_str_of(v, d);
        if (v->family == WF_VOCAB_LLAMA2C && (i == 0 || ids[i - 1] == LLAMA2C_BOS) && d.len && p[0] == ' ') {
            p++; /* run.c: a piece after BOS drops its leading space; so does the first */
            d.len--;
        }
        if (v->dec_join && i > 0) {
            if (len == cap) return wf_fail(msg, msg_cap, WF_ERR_ARG, "output buffer of %d bytes is too small", cap);
            out[len++] = ' ';
        }
        if (d.len > (uint32_t)(cap - len)) return wf_fail(msg, msg_cap, WF_ERR_ARG, "output buffer of %d bytes is too small", cap);
        memcpy(out + len, p, d.len);
        len += (int32_t)d.len;
    }
    if (v->strip_start || v->strip_stop) { /* Strip after Fuse: the whole text's ends */
        const uint8_t *c = wf_str_of(v, v->strip);
        const size_t k = v->strip.len;
        int32_t from = 0;
        for (int32_t i = 0; i < v->strip_start && wf_starts(out + from, (size_t)(len - from), c, k); i++) from += (int32_t)k;
        for (int32_t i = 0; i < v->strip_stop && (size_t)(len - from) >= k && !memcmp(out + len - k, c, k); i++) len -= (int32_t)k;
        memmove(out, out + from, (size_t)(len - from));
        len -= from;
    }
    *n_out = len;
    return WF_OK;
}
