/* Encoding with a vocabulary tokenizer (tokenizer.h; vocab.c builds the tables):
 *
 * tokenizer.json, as the Hugging Face tokenizers library (Rust) runs one (docs/FORMATS.md):
 * the text is cut at its added tokens (those matched in the raw text, leftmost-longest);
 * each piece between them is normalized (Prepend, Replace) and cut again at the added
 * tokens matched in normalized text; each piece left is pre-tokenized (Metaspace or
 * ByteLevel's prefix space, then the splits: GPT-2's pattern, Digits) into words; a word's
 * characters become ids (byte-level: one per byte, through bytes_to_unicode; else its
 * characters, with byte fallback to <0xNN> or <unk>), then merge by rank (merge.c). Invalid
 * UTF-8, which the libraries never see: each invalid byte is a character of its own, of the
 * class of U+FFFD for the pre-tokenizer, with no id of its own (so byte fallback or <unk>).
 *
 * llama2.c (run.c's encode): a leading " " token, then each character (a byte and the
 * continuation bytes after it, at most 4) is its piece or its bytes as ids byte + 3, then
 * the adjacent pair whose concatenation is the best-scoring piece merges, the leftmost of
 * equals first, while one scores above -1e10. */
#include <stdlib.h>

#include "unicode.h"
#include "vocab.h"

#define LLAMA2C_FLOOR -1e10f /* run.c merges only pairs scoring above its starting best */

typedef struct {
    const wf_vocab *v;
    wf_ids *o;
    wf_buf norm, text, word; /* a normalized section, a pre-tokenizer's text, a word's characters */
    int32_t *sym;
    size_t sym_cap;
    wf_merger m;
    int failed;           /* out of memory */
    size_t long_word;     /* the bytes of the word that did not fit, if that was it */
    wf_match_scan scan[2]; /* the added tokens' scans: of the raw text, of a normalized section */
} enc;

/* The leftmost-longest added token of a set in s[from, n) (added.c): its start (n if none),
 * id and length; out of memory fails the encoding. */
static size_t next_added(enc *e, int set, const uint8_t *s, size_t n, size_t from, int32_t *id, size_t *len) {
    size_t at;
    int32_t k;
    *id = -1;
    *len = 0;
    if (!wf_match_next(&e->v->match[set], s, n, from, &e->scan[set], &at, &k)) {
        e->failed = 1;
        return n;
    }
    if (k >= 0) {
        *id = e->v->added[k].id;
        *len = e->v->added[k].match.len;
    }
    return at;
}

/* Room for need symbols and the merger's two links per symbol; 0 on out of memory, or when
 * need exceeds the int32 count the merger keeps (a word of 2^30 bytes). */
static int grow_syms(enc *e, size_t need) {
    if (need <= e->sym_cap) return 1;
    if (need > INT32_MAX) return 0;
    size_t c = wf_grow(e->sym_cap, need, 64);
    if (!c || c > INT32_MAX) c = need;
    int32_t *s = wf_realloc_n(e->sym, c, sizeof(int32_t)), *l = s ? wf_realloc_n(e->m.link, c, 2 * sizeof(int32_t)) : NULL;
    if (s) e->sym = s;
    if (l) e->m.link = l;
    if (!s || !l) return 0;
    e->sym_cap = e->m.cap = c;
    return 1;
}

static int hf_pair(const void *ctx, int32_t a, int32_t b, double *key, int32_t *merged) {
    const wf_vocab *v = ctx;
    const uint64_t k = wf_merge_key(a, b);
    for (uint32_t i = wf_merge_slot(k) & v->mmask;; i = (i + 1) & v->mmask) {
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
    const int32_t id = wf_vocab_find2(v, wf_str_of(v, v->tok[a]), v->tok[a].len, wf_str_of(v, v->tok[b]), v->tok[b].len);
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
                wf_buf_put(&e->word, c, (size_t)wf_byte_char(s[i], c));
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
    if (len > INT32_MAX / 2 - 1 || !grow_syms(e, 2 * len + 2)) { /* a character may add its bytes and a pending <unk> */
        e->failed = 1;
        e->long_word = len;
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
        const uint8_t *rep = wf_str_of(v, v->meta_rep);
        const size_t rn = v->meta_rep.len;
        e->text.n = 0;
        for (size_t i = 0; i < n; i++) {
            if (s[i] == ' ') wf_buf_put(&e->text, rep, rn);
            else wf_buf_put(&e->text, s + i, 1);
        }
        if ((v->meta == WF_META_ALWAYS || (v->meta == WF_META_FIRST && at_start)) && !wf_starts(e->text.p, e->text.n, rep, rn)) {
            wf_buf_put(&e->text, rep, rn); /* then rotate it to the front */
            if (!e->text.failed) {
                memmove(e->text.p + rn, e->text.p, e->text.n - rn);
                memcpy(e->text.p, rep, rn);
            }
        }
    } else if (v->prefix_space && s[0] != ' ') {
        e->text.n = 0;
        wf_buf_put(&e->text, " ", 1);
        wf_buf_put(&e->text, s, n);
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
        if (!wf_vocab_normalize(v, s, n, &e->norm, &e->text)) {
            e->failed = 1;
            return;
        }
        s = e->norm.p; /* pretokenize writes e->text, never e->norm */
        n = e->norm.n;
    }
    e->scan[1].at = e->scan[1].end = 0; /* a new text */
    for (size_t pos = 0; pos < n && !e->failed;) {
        int32_t id;
        size_t len;
        const size_t at = next_added(e, 1, s, n, pos, &id, &len);
        pretokenize(e, s + pos, at - pos, at_start && pos == 0);
        if (at == n) break;
        wf_ids_put(e->o, id);
        pos = at + len;
    }
}

static void llama2c_encode(enc *e, const uint8_t *s, size_t len) {
    const wf_vocab *v = e->v;
    if (len == 0) return;
    if (len > INT32_MAX - 1 || !grow_syms(e, len + 1)) {
        e->failed = 1;
        e->long_word = len;
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

wf_status wf_vocab_encode(const wf_vocab *v, const uint8_t *s, size_t len, wf_ids *o, int64_t *work, char *msg, size_t cap) {
    enc e = {.v = v, .o = o};
    e.m.heap_cap = 1024;
    e.m.heap = wf_malloc_n(e.m.heap_cap, sizeof(wf_cand));
    if (!e.m.heap) return wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory encoding %zu bytes", len);
    if (v->family == WF_VOCAB_LLAMA2C) {
        llama2c_encode(&e, s, len);
    } else {
        for (size_t pos = 0; pos < len && !e.failed;) {
            int32_t id;
            size_t k;
            const size_t at = next_added(&e, 0, s, len, pos, &id, &k);
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
    free(e.scan[0].best);
    free(e.scan[1].best);
    if (work) *work = e.scan[0].work + e.scan[1].work;
    if (e.failed && e.long_word)
        return wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory encoding %zu bytes, at a word of %zu bytes (merging it takes "
                       "%.2f GB: a symbol and two links per character and byte)", len, e.long_word, (2.0 * e.long_word + 2) * 12 / 1e9);
    if (e.failed) return wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory encoding %zu bytes", len);
    return WF_OK;
}
