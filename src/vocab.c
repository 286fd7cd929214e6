/* The vocabulary tokenizers (tokenizer.h): a Hugging Face tokenizer.json (read by tokjson.c)
 * or llama2.c's tokenizer.bin (read by llama2c.c), and the pair merging bpe.c shares.
 *
 * tokenizer.json, as the Hugging Face tokenizers library (Rust) runs one (docs/FORMATS.md):
 * the text is cut at its added tokens (those matched in the raw text, leftmost-longest);
 * each piece between them is normalized (Prepend, Replace) and cut again at the added
 * tokens matched in normalized text; each piece left is pre-tokenized (Metaspace or
 * ByteLevel's prefix space, then the splits: GPT-2's pattern, Digits) into words; a word's
 * characters become ids (byte-level: one per byte, through bytes_to_unicode; else its
 * characters, with byte fallback to <0xNN> or <unk>), then merge by rank. Invalid UTF-8,
 * which the libraries never see: each invalid byte is a character of its own, of the class
 * of U+FFFD for the pre-tokenizer, with no id of its own (so byte fallback or <unk>).
 *
 * llama2.c (run.c's encode): a leading " " token, then each character (a byte and the
 * continuation bytes after it, at most 4) is its piece or its bytes as ids byte + 3, then
 * the adjacent pair whose concatenation is the best-scoring piece merges, the leftmost of
 * equals first, while one scores above -1e10.
 *
 * Merging (wf_merge): the candidate pairs in a heap, lowest key then leftmost first, the
 * symbols in a linked list; a popped pair is stale when either symbol has merged since.
 * This is the Rust library's Word::merge_all, and for scores llama2.c's loop in
 * O(n log n): SentencePiece-style vocabularies have no pre-tokenizer, so a whole text
 * is one word. */
#include <stdio.h>
#include <stdlib.h>

#include "tokenizer.h"

#define LLAMA2C_BOS 1
#define LLAMA2C_FLOOR -1e10f /* run.c merges only pairs scoring above its starting best */

/* ---- merging ---- */

static int cand_before(const wf_cand *a, const wf_cand *b) {
    return a->key < b->key || (a->key == b->key && a->pos < b->pos);
}

static int heap_push(wf_merger *m, size_t *hn, wf_cand c) {
    if (*hn == (m->heap_cap ? m->heap_cap : 3 * m->cap)) {
        if (!m->heap_cap) return 0; /* a fixed heap of 3n: n - 1 pairs, 2 per merge: never full */
        wf_cand *p = realloc(m->heap, 2 * m->heap_cap * sizeof *p);
        if (!p) return 0;
        m->heap = p;
        m->heap_cap *= 2;
    }
    size_t i = (*hn)++;
    while (i > 0 && cand_before(&c, &m->heap[(i - 1) / 2])) {
        m->heap[i] = m->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    m->heap[i] = c;
    return 1;
}

static wf_cand heap_pop(wf_merger *m, size_t *hn) {
    wf_cand top = m->heap[0], last = m->heap[--*hn];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *hn) break;
        if (c + 1 < *hn && cand_before(&m->heap[c + 1], &m->heap[c])) c++;
        if (!cand_before(&m->heap[c], &last)) break;
        m->heap[i] = m->heap[c];
        i = c;
    }
    if (*hn > 0) m->heap[i] = last;
    return top;
}

/* Short words (every chunk of wasmformer's BPE, most words of the others): each pair's key
 * kept in an array, the lowest found by a scan, two pairs looked up again per merge. */
#define SHORT_WORD 64

static int32_t merge_short(int32_t *sym, int32_t n, wf_pair_fn pair, const void *ctx) {
    double key[SHORT_WORD];
    int32_t res[SHORT_WORD];
    uint8_t ok[SHORT_WORD];
    for (int32_t i = 0; i + 1 < n; i++) ok[i] = (uint8_t)pair(ctx, sym[i], sym[i + 1], &key[i], &res[i]);
    for (;;) {
        int32_t at = -1;
        for (int32_t i = 0; i + 1 < n; i++)
            if (ok[i] && (at < 0 || key[i] < key[at])) at = i; /* strict: the leftmost of equals */
        if (at < 0) return n;
        sym[at] = res[at];
        n--;
        for (int32_t i = at + 1; i < n; i++) sym[i] = sym[i + 1];
        for (int32_t i = at + 1; i + 1 < n; i++) {
            key[i] = key[i + 1];
            res[i] = res[i + 1];
            ok[i] = ok[i + 1];
        }
        if (at > 0) ok[at - 1] = (uint8_t)pair(ctx, sym[at - 1], sym[at], &key[at - 1], &res[at - 1]);
        if (at + 1 < n) ok[at] = (uint8_t)pair(ctx, sym[at], sym[at + 1], &key[at], &res[at]);
    }
}

int32_t wf_merge(wf_merger *m, int32_t *sym, int32_t n, wf_pair_fn pair, const void *ctx) {
    if (n < 2) return n;
    if (n <= SHORT_WORD) return merge_short(sym, n, pair, ctx);
    int32_t *prev = m->link, *next = m->link + m->cap;
    size_t hn = 0;
    double key;
    int32_t merged;
    for (int32_t i = 0; i < n; i++) {
        prev[i] = i - 1;
        next[i] = i + 1 < n ? i + 1 : -1;
    }
    for (int32_t i = 0; i + 1 < n; i++)
        if (pair(ctx, sym[i], sym[i + 1], &key, &merged) && !heap_push(m, &hn, (wf_cand){key, i, merged, sym[i], sym[i + 1]}))
            return -1;
    while (hn > 0) {
        const wf_cand c = heap_pop(m, &hn);
        const int32_t p = c.pos, q = next[p];
        if (sym[p] < 0 || q < 0) continue; /* merged into its left neighbour, or last */
        /* stale: either symbol merged since (in a vocabulary a changed pair never joins into
         * the same token, so this is the Rust library's check on the merged id) */
        if (sym[p] != c.left || sym[q] != c.right) continue;
        merged = c.merged;
        sym[p] = merged;
        sym[q] = -1;
        next[p] = next[q];
        if (next[q] >= 0) prev[next[q]] = p;
        int32_t made;
        if (prev[p] >= 0 && pair(ctx, sym[prev[p]], sym[p], &key, &made) &&
            !heap_push(m, &hn, (wf_cand){key, prev[p], made, sym[prev[p]], sym[p]}))
            return -1;
        if (next[p] >= 0 && pair(ctx, sym[p], sym[next[p]], &key, &made) &&
            !heap_push(m, &hn, (wf_cand){key, p, made, sym[p], sym[next[p]]}))
            return -1;
    }
    int32_t k = 0;
    for (int32_t i = 0; i >= 0; i = next[i]) sym[k++] = sym[i];
    return k;
}

/* ---- merges: pair key (0 is an empty slot) -> rank and merged id ---- */

static uint64_t merge_key(int32_t a, int32_t b) { return ((uint64_t)(uint32_t)a << 32 | (uint32_t)b) + 1; }
static uint32_t merge_slot(uint64_t k) { return (uint32_t)((k * 0x9E3779B97F4A7C15ULL) >> 32); }

int wf_vocab_merges_alloc(wf_vocab *v, int32_t count) {
    uint32_t slots = 16;
    while (slots < 2u * (uint32_t)count) slots *= 2;
    v->mkey = calloc(slots, sizeof(uint64_t));
    v->mrank = malloc(slots * sizeof(int32_t));
    v->mres = malloc(slots * sizeof(int32_t));
    v->mmask = slots - 1;
    return v->mkey && v->mrank && v->mres;
}

void wf_vocab_merge_put(wf_vocab *v, int32_t a, int32_t b, int32_t rank, int32_t merged) {
    const uint64_t k = merge_key(a, b);
    uint32_t i = merge_slot(k) & v->mmask;
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

static const uint8_t *str_of(const wf_vocab *v, wf_span s) { return v->pool + s.off; }

/* The lowest id whose string is a followed by b; -1 if none. */
int32_t wf_vocab_find2(const wf_vocab *v, const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
    if (!v->slot || na + nb > (size_t)v->max_tok) return -1;
    const uint32_t h = fnv_more(fnv_more(FNV_START, a, na), b, nb);
    for (uint32_t i = h & v->slot_mask;; i = (i + 1) & v->slot_mask) {
        const int32_t id = v->slot[i];
        if (id < 0) return -1;
        const wf_span t = v->tok[id];
        if (t.len == na + nb && !memcmp(str_of(v, t), a, na) && (!nb || !memcmp(str_of(v, t) + na, b, nb))) return id;
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
    free(v->added_at);
    free(v->src);
    memset(v, 0, sizeof *v);
}

wf_status wf_vocab_index(wf_vocab *v, char *msg, size_t cap) {
    uint32_t slots = 16;
    while (slots < 2u * (uint32_t)v->n) slots *= 2;
    v->slot = malloc(slots * sizeof(int32_t));
    if (!v->slot) return wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory indexing %d tokens", v->n);
    memset(v->slot, 0xFF, slots * sizeof(int32_t));
    v->slot_mask = slots - 1;
    v->max_tok = 0;
    for (int32_t id = 0; id < v->n; id++) {
        const wf_span t = v->tok[id];
        if ((int32_t)t.len > v->max_tok) v->max_tok = (int32_t)t.len;
        uint32_t i = fnv_more(FNV_START, str_of(v, t), t.len) & v->slot_mask;
        for (; v->slot[i] >= 0; i = (i + 1) & v->slot_mask) {
            const wf_span o = v->tok[v->slot[i]];
            if (o.len == t.len && !memcmp(str_of(v, o), str_of(v, t), t.len)) break; /* a repeat keeps the lowest id */
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

typedef struct {
    uint8_t *p;
    size_t n, cap;
    int failed;
} buf;

static void buf_put(buf *b, const void *s, size_t k) {
    if (b->failed) return;
    if (b->n + k > b->cap) {
        size_t c = b->cap ? 2 * b->cap : 256;
        while (c < b->n + k) c *= 2;
        uint8_t *p = realloc(b->p, c);
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

static int starts(const uint8_t *s, size_t n, const uint8_t *pre, size_t k) { return n >= k && !memcmp(s, pre, k); }

/* One token's bytes through the decoder's per-token steps, into *out (using *tmp). */
static void decode_token(const wf_vocab *v, int32_t id, int first, buf *out, buf *tmp) {
    const wf_span t = v->tok[id];
    out->n = 0;
    buf_put(out, str_of(v, t), t.len);
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
        const uint8_t *a = str_of(v, st->a), *b = str_of(v, st->b);
        tmp->n = 0;
        if (st->op == WF_DEC_REPLACE || st->op == WF_DEC_METASPACE) {
            const int drop = st->op == WF_DEC_METASPACE && first && st->start; /* start: prepends */
            for (size_t i = 0; i < out->n;) {
                if (starts(out->p + i, out->n - i, a, st->a.len)) {
                    if (st->op == WF_DEC_REPLACE) buf_put(tmp, b, st->b.len);
                    else if (!drop) buf_put(tmp, " ", 1);
                    i += st->a.len;
                } else {
                    buf_put(tmp, out->p + i++, 1);
                }
            }
        } else if (st->op == WF_DEC_BYTEFALLBACK) {
            const int byte = fallback_byte(out->p, out->n);
            if (byte < 0) continue;
            const uint8_t c = (uint8_t)byte;
            buf_put(tmp, &c, 1);
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
                    buf_put(tmp, &c, 1);
                }
            }
            if (!all) continue;
        } else { /* WF_DEC_STRIP: up to start leading, stop trailing copies of one character */
            size_t from = 0, to = out->n;
            for (int32_t i = 0; i < st->start && starts(out->p + from, to - from, a, st->a.len); i++) from += st->a.len;
            for (int32_t i = 0; i < st->stop && to - from >= st->a.len && !memcmp(out->p + to - st->a.len, a, st->a.len); i++)
                to -= st->a.len;
            buf_put(tmp, out->p + from, to - from);
        }
        buf swap = *out;
        *out = *tmp;
        *tmp = swap;
    }
    if (tmp->failed) out->failed = 1;
}

/* Appends each id's decoded bytes to the pool: spans[id]. */
static int decode_all(wf_vocab *v, int first, wf_span *spans, buf *pool, buf *one, buf *tmp) {
    for (int32_t id = 0; id < v->n; id++) {
        decode_token(v, id, first, one, tmp);
        if (one->failed || pool->n + one->n > UINT32_MAX) return 0;
        spans[id] = (wf_span){(uint32_t)pool->n, (uint32_t)one->n};
        buf_put(pool, one->p, one->n);
        v->pool = pool->p; /* it may have moved; the next token's string is read from it */
        if ((int32_t)one->n > v->max_dec) v->max_dec = (int32_t)one->n;
    }
    return !pool->failed;
}

static int added_cmp_key(const wf_vocab *v, int32_t i, int32_t j) {
    const wf_added *a = &v->added[i], *b = &v->added[j];
    if (a->normalized != b->normalized) return a->normalized - b->normalized;
    const uint8_t fa = v->pool[a->match.off], fb = v->pool[b->match.off];
    if (fa != fb) return fa - fb;
    if (a->match.len != b->match.len) return a->match.len > b->match.len ? -1 : 1;
    return i < j ? -1 : i > j;
}

wf_status wf_vocab_finish(wf_vocab *v, char *msg, size_t cap) {
    buf pool = {.p = v->pool, .n = v->pool_n, .cap = v->pool_n}, one = {0}, tmp = {0};
    v->dec = malloc((size_t)(v->n ? v->n : 1) * sizeof(wf_span));
    v->dec0 = v->dec_first ? malloc((size_t)(v->n ? v->n : 1) * sizeof(wf_span)) : NULL;
    v->added_at = malloc((size_t)(v->n_added ? v->n_added : 1) * sizeof(int32_t));
    int ok = v->dec && (!v->dec_first || v->dec0) && v->added_at;
    v->max_dec = 0;
    if (ok) ok = decode_all(v, 0, v->dec, &pool, &one, &tmp);
    if (ok && v->dec_first) ok = decode_all(v, 1, v->dec0, &pool, &one, &tmp);
    free(one.p);
    free(tmp.p);
    v->pool = pool.p; /* realloc may have moved it; spans are offsets */
    v->pool_n = pool.n;
    if (!ok) return wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory decoding %d tokens", v->n);
    /* the added tokens by set and first byte, longest first (insertion sort: there are few) */
    for (int32_t i = 0; i < v->n_added; i++) {
        int32_t j = i;
        while (j > 0 && added_cmp_key(v, v->added_at[j - 1], i) > 0) {
            v->added_at[j] = v->added_at[j - 1];
            j--;
        }
        v->added_at[j] = i;
    }
    for (int set = 0; set < 2; set++) {
        int32_t i = 0;
        for (int byte = 0; byte <= 256; byte++) {
            while (i < v->n_added && (v->added[v->added_at[i]].normalized < set ||
                                      (v->added[v->added_at[i]].normalized == set &&
                                       (byte == 256 || v->pool[v->added[v->added_at[i]].match.off] < byte))))
                i++;
            v->added_first[set][byte] = i;
        }
    }
    return WF_OK;
}

/* ---- encoding ---- */

typedef struct {
    const wf_vocab *v;
    wf_ids *o;
    buf norm, text, word; /* a normalized section, a pre-tokenizer's text, a word's characters */
    int32_t *sym;
    size_t sym_cap;
    wf_merger m;
    int failed;           /* out of memory */
} enc;

/* The leftmost-longest added token of a set in s[from, n): its start (n if none), id, length. */
static size_t next_added(const wf_vocab *v, int set, const uint8_t *s, size_t n, size_t from, int32_t *id, size_t *len) {
    *id = -1;
    *len = 0;
    if (v->added_first[set][256] == v->added_first[set][0]) return n;
    for (size_t i = from; i < n; i++) {
        for (int32_t k = v->added_first[set][s[i]]; k < v->added_first[set][s[i] + 1]; k++) {
            const wf_added *a = &v->added[v->added_at[k]];
            if (starts(s + i, n - i, str_of(v, a->match), a->match.len)) {
                *id = a->id;
                *len = a->match.len;
                return i;
            }
        }
    }
    return n;
}

static int grow_syms(enc *e, size_t need) {
    if (need <= e->sym_cap) return 1;
    size_t c = e->sym_cap ? 2 * e->sym_cap : 64;
    while (c < need) c *= 2;
    int32_t *s = realloc(e->sym, c * sizeof(int32_t)), *l = s ? realloc(e->m.link, 2 * c * sizeof(int32_t)) : NULL;
    if (s) e->sym = s;
    if (l) e->m.link = l;
    if (!s || !l) return 0;
    e->sym_cap = e->m.cap = c;
    return 1;
}

static int hf_pair(const void *ctx, int32_t a, int32_t b, double *key, int32_t *merged) {
    const wf_vocab *v = ctx;
    const uint64_t k = merge_key(a, b);
    for (uint32_t i = merge_slot(k) & v->mmask;; i = (i + 1) & v->mmask) {
        if (v->mkey[i] == k) {
            *key = v->mrank[i];
            *merged = v->mres[i];
            return 1;
        }
        if (v->mkey[i] == 0) return 0;
    }
}

static int llama2c_pair(const void *ctx, int32_t a, int32_t b, double *key, int32_t *merged) {
    const wf_vocab *v = ctx;
    const int32_t id = wf_vocab_find2(v, str_of(v, v->tok[a]), v->tok[a].len, str_of(v, v->tok[b]), v->tok[b].len);
    if (id < 0 || !(v->score[id] > LLAMA2C_FLOOR)) return 0; /* NaN never merges either */
    *key = -(double)v->score[id];
    *merged = id;
    return 1;
}

/* Merges the word's n symbols and writes them out. */
static void merge_out(enc *e, int32_t n, wf_pair_fn pair) {
    if (e->v->n_merges || pair == llama2c_pair) n = wf_merge(&e->m, e->sym, n, pair, e->v);
    if (n < 0) {
        e->failed = 1;
        return;
    }
    for (int32_t i = 0; i < n; i++) wf_ids_put(e->o, e->sym[i]);
}

/* The model's view of one character (bytes c[0, k), id its id or -1): Rust's merge_word. */
static void add_char(enc *e, int32_t id, const uint8_t *c, size_t k, int32_t *n, int *unk) {
    const wf_vocab *v = e->v;
    if (id >= 0) {
        if (*unk) e->sym[(*n)++] = v->unk;
        *unk = 0;
        e->sym[(*n)++] = id;
        return;
    }
    if (v->byte_fallback) {
        size_t i = 0;
        while (i < k && v->fb_id[c[i]] >= 0) i++;
        if (i == k) { /* the library adds these without flushing a pending <unk> */
            for (i = 0; i < k; i++) e->sym[(*n)++] = v->fb_id[c[i]];
            return;
        }
    }
    if (v->unk >= 0) {
        if (*unk && !v->fuse_unk) e->sym[(*n)++] = v->unk;
        *unk = 1;
    }
}

/* One word of a tokenizer.json: characters to ids, merged. */
static void model(enc *e, const uint8_t *s, size_t len) {
    const wf_vocab *v = e->v;
    if (e->failed || len == 0) return;
    if (v->ignore_merges) { /* a word that is a token stays whole */
        int32_t id;
        if (v->family == WF_VOCAB_BYTES) {
            e->word.n = 0;
            for (size_t i = 0; i < len; i++) {
                uint8_t c[2];
                buf_put(&e->word, c, (size_t)wf_byte_char(s[i], c));
            }
            if (e->word.failed) {
                e->failed = 1;
                return;
            }
            id = wf_vocab_find(v, e->word.p, e->word.n);
        } else {
            id = wf_vocab_find(v, s, len);
        }
        if (id >= 0) {
            wf_ids_put(e->o, id);
            return;
        }
    }
    if (!grow_syms(e, 2 * len + 2)) {
        e->failed = 1;
        return;
    }
    int32_t n = 0;
    int unk = 0;
    for (size_t i = 0; i < len;) {
        if (v->family == WF_VOCAB_BYTES) {
            uint8_t c[2];
            const int k = wf_byte_char(s[i], c);
            add_char(e, v->char_id[s[i]], c, (size_t)k, &n, &unk);
            i++;
        } else {
            uint32_t cp;
            const size_t k = (size_t)wf_utf8_next(s + i, len - i, &cp);
            add_char(e, wf_vocab_find(v, s + i, k), s + i, k, &n, &unk);
            i += k;
        }
    }
    if (unk) e->sym[n++] = v->unk;
    merge_out(e, n, hf_pair);
}

static int class_of(const uint8_t *s, size_t n, size_t *k) {
    uint32_t cp;
    *k = (size_t)wf_utf8_next(s, n, &cp);
    const int c = wf_uni_class(cp);
    return c & WF_UNI_L ? WF_UNI_L : c & WF_UNI_N ? WF_UNI_N : c & WF_UNI_S ? WF_UNI_S : 0;
}

/* Bytes of the piece GPT-2's pattern matches at s[0] (n >= 1):
 * 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
static size_t gpt2_piece(const uint8_t *s, size_t n) {
    if (s[0] == '\'' && n >= 2) {
        const uint8_t a = s[1];
        if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
        if (n >= 3 && ((a == 'r' && s[2] == 'e') || (a == 'v' && s[2] == 'e') || (a == 'l' && s[2] == 'l'))) return 3;
    }
    size_t k, i = 0;
    int c = class_of(s, n, &k);
    if (s[0] == ' ' && n > 1) {
        size_t k1;
        const int c1 = class_of(s + 1, n - 1, &k1);
        if (c1 != WF_UNI_S) { /* " ?X+": the space leads the run */
            c = c1;
            k = 1;
        }
    }
    if (c != WF_UNI_S) {
        i = k;
        while (i < n && class_of(s + i, n - i, &k) == c) i += k;
        return i;
    }
    size_t last = 0; /* the start of the run's last character */
    while (i < n && class_of(s + i, n - i, &k) == WF_UNI_S) {
        last = i;
        i += k;
    }
    if (i == n || last == 0) return i; /* at the end, or one space before a word: \s+ */
    return last;                       /* \s+(?!\S): the last space goes with the word */
}

static void split(enc *e, int step, const uint8_t *s, size_t n) {
    if (e->failed || n == 0) return;
    if (step == e->v->n_split) {
        model(e, s, n);
        return;
    }
    const int how = e->v->split[step];
    for (size_t i = 0; i < n;) {
        size_t j = i, k;
        if (how == WF_SPLIT_GPT2) {
            j = i + gpt2_piece(s + i, n - i);
        } else { /* Digits: each number character alone (or runs of them), and the runs between */
            const int num = class_of(s + i, n - i, &k) == WF_UNI_N;
            j = i + k;
            if (!num || how == WF_SPLIT_DIGITS)
                while (j < n && (class_of(s + j, n - j, &k) == WF_UNI_N) == num) j += k;
        }
        split(e, step + 1, s + i, j - i);
        i = j;
    }
}

/* A piece between the normalized added tokens: Metaspace or ByteLevel's prefix space, then
 * the splits. at_start: it begins the text. */
static void pretokenize(enc *e, const uint8_t *s, size_t n, int at_start) {
    const wf_vocab *v = e->v;
    if (n == 0 || e->failed) return;
    if (v->meta) {
        const uint8_t *rep = str_of(v, v->meta_rep);
        const size_t rn = v->meta_rep.len;
        e->text.n = 0;
        for (size_t i = 0; i < n; i++) {
            if (s[i] == ' ') buf_put(&e->text, rep, rn);
            else buf_put(&e->text, s + i, 1);
        }
        if ((v->meta == WF_META_ALWAYS || (v->meta == WF_META_FIRST && at_start)) && !starts(e->text.p, e->text.n, rep, rn)) {
            buf_put(&e->text, rep, rn); /* then rotate it to the front */
            if (!e->text.failed) {
                memmove(e->text.p + rn, e->text.p, e->text.n - rn);
                memcpy(e->text.p, rep, rn);
            }
        }
    } else if (v->prefix_space && s[0] != ' ') {
        e->text.n = 0;
        buf_put(&e->text, " ", 1);
        buf_put(&e->text, s, n);
    } else {
        split(e, 0, s, n);
        return;
    }
    if (e->text.failed) e->failed = 1;
    else split(e, 0, e->text.p, e->text.n);
}

/* A piece of the raw text between added tokens: normalized, cut at the normalized ones. */
static void section(enc *e, const uint8_t *s, size_t n, int at_start) {
    const wf_vocab *v = e->v;
    if (v->n_norm) {
        e->norm.n = 0;
        buf_put(&e->norm, s, n);
        for (int k = 0; k < v->n_norm && !e->norm.failed; k++) {
            const wf_vocab_step *st = &v->norm[k];
            const uint8_t *a = str_of(v, st->a), *b = str_of(v, st->b);
            e->text.n = 0;
            if (st->op == WF_NORM_PREPEND) {
                buf_put(&e->text, a, st->a.len);
                buf_put(&e->text, e->norm.p, e->norm.n);
            } else {
                for (size_t i = 0; i < e->norm.n;) {
                    if (starts(e->norm.p + i, e->norm.n - i, a, st->a.len)) {
                        buf_put(&e->text, b, st->b.len);
                        i += st->a.len;
                    } else {
                        buf_put(&e->text, e->norm.p + i++, 1);
                    }
                }
            }
            buf swap = e->norm; /* the result in norm, the other as the next scratch */
            e->norm = e->text;
            e->text = swap;
            if (e->text.failed) e->norm.failed = 1;
        }
        if (e->norm.failed) {
            e->failed = 1;
            return;
        }
        s = e->norm.p; /* pretokenize writes e->text, never e->norm */
        n = e->norm.n;
    }
    for (size_t pos = 0; pos < n && !e->failed;) {
        int32_t id;
        size_t len;
        const size_t at = next_added(v, 1, s, n, pos, &id, &len);
        pretokenize(e, s + pos, at - pos, at_start && pos == 0);
        if (at == n) break;
        wf_ids_put(e->o, id);
        pos = at + len;
    }
}

static void llama2c_encode(enc *e, const uint8_t *s, size_t len) {
    const wf_vocab *v = e->v;
    if (len == 0) return;
    if (!grow_syms(e, len + 1)) {
        e->failed = 1;
        return;
    }
    int32_t n = 0;
    e->sym[n++] = wf_vocab_find(v, (const uint8_t *)" ", 1); /* the dummy prefix (checked at load) */
    for (size_t i = 0; i < len;) {
        size_t j = i + 1;
        while (j < len && (s[j] & 0xC0) == 0x80 && j - i < 4) j++;
        const int32_t id = wf_vocab_find(v, s + i, j - i);
        if (id >= 0) e->sym[n++] = id;
        else
            for (size_t k = i; k < j; k++) e->sym[n++] = s[k] + 3;
        i = j;
    }
    merge_out(e, n, llama2c_pair);
}

wf_status wf_vocab_encode(const wf_vocab *v, const uint8_t *s, size_t len, wf_ids *o, char *msg, size_t cap) {
    enc e = {.v = v, .o = o};
    e.m.heap_cap = 1024;
    e.m.heap = malloc(e.m.heap_cap * sizeof(wf_cand));
    if (!e.m.heap) return wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory encoding %zu bytes", len);
    if (v->family == WF_VOCAB_LLAMA2C) {
        llama2c_encode(&e, s, len);
    } else {
        for (size_t pos = 0; pos < len && !e.failed;) {
            int32_t id;
            size_t k;
            const size_t at = next_added(v, 0, s, len, pos, &id, &k);
            if (at > pos) section(&e, s + pos, at - pos, pos == 0);
            if (at == len) break;
            wf_ids_put(o, id);
            pos = at + k;
        }
    }
    free(e.norm.p);
    free(e.text.p);
    free(e.word.p);
    free(e.sym);
    free(e.m.link);
    free(e.m.heap);
    if (e.failed) return wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory encoding %zu bytes", len);
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
        const uint8_t *p = str_of(v, d);
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
        const uint8_t *c = str_of(v, v->strip);
        const size_t k = v->strip.len;
        int32_t from = 0;
        for (int32_t i = 0; i < v->strip_start && starts(out + from, (size_t)(len - from), c, k); i++) from += (int32_t)k;
        for (int32_t i = 0; i < v->strip_stop && (size_t)(len - from) >= k && !memcmp(out + len - k, c, k); i++) len -= (int32_t)k;
        memmove(out, out + from, (size_t)(len - from));
        len -= from;
    }
    *n_out = len;
    return WF_OK;
}
