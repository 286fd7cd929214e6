/* Byte-level BPE: training on the user's text, encoding, and the tables behind both.
 * Tokens 0..255 are the 256 bytes; token 256 + k is merge k, the concatenation of its two
 * parts. Every byte string encodes (there is no unknown token) and decoding concatenates
 * token bytes, so any input, invalid UTF-8 included, round-trips exactly.
 *
 * Chunks (pretokenizer 1). Text is first cut into chunks and merges never cross a chunk
 * boundary, so training counts each distinct chunk once with its frequency. Byte classes:
 * letters (A-Z, a-z and every byte >= 0x80, so UTF-8 text stays in one class), digits,
 * whitespace (space, \t \n \v \f \r), and the rest (punctuation). A chunk is one space
 * followed by a run of one non-space class (" the", " 42", " --"), or such a run alone,
 * or a run of whitespace; a whitespace run followed by a word leaves its last space to
 * lead that word. Chunks are cut at WF_BPE_MAX_CHUNK bytes, at a UTF-8 character
 * boundary when one is near.
 *
 * Training (Sennrich et al.'s algorithm with incremental pair counts): repeatedly merge
 * the most frequent adjacent pair of tokens, counted over distinct chunks times their
 * frequency; ties go to the smaller left id, then the smaller right id, so the result
 * depends on the text alone. A max-heap with lazy deletion finds the pair; each pair
 * keeps the list of chunks it occurs in, so a merge touches only those. Training stops
 * at the target vocabulary or when no pair occurs twice.
 *
 * Encoding a chunk: repeatedly merge, everywhere left to right, the pair with the lowest
 * merge rank. A merge only creates pairs with the new, later token, so this applies the
 * merges in training order, exactly as training did. wf_merge (merge.c) does it with a heap
 * of candidate pairs, lowest rank then leftmost first: the same merges in the same order. */
#include <stdlib.h>

#include "bpe.h"

#define MAX_CHUNK WF_BPE_MAX_CHUNK

/* ---- chunks ---- */

enum { CL_LETTER, CL_DIGIT, CL_SPACE, CL_PUNCT };

static int byte_class(uint8_t b) {
    if ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || b >= 0x80) return CL_LETTER;
    if (b >= '0' && b <= '9') return CL_DIGIT;
    if (b == ' ' || (b >= '\t' && b <= '\r')) return CL_SPACE;
    return CL_PUNCT;
}

/* Bytes in the chunk that starts at s[0]; len >= 1. */
static size_t chunk_len(const uint8_t *s, size_t len) {
    size_t i = 0, j;
    int c = byte_class(s[0]);
    if (s[0] == ' ' && len > 1 && byte_class(s[1]) != CL_SPACE) {
        c = byte_class(s[1]); /* a space leads the word */
        i = 1;
    }
    j = i + 1;
    while (j < len && byte_class(s[j]) == c) j++;
    if (c == CL_SPACE && j < len && j >= 2 && s[j - 1] == ' ') j--; /* leave the space to the next word */
    if (j > MAX_CHUNK) {
        /* s[MAX_CHUNK] exists; back up over at most 3 UTF-8 continuation bytes */
        size_t k = MAX_CHUNK;
        while (k > MAX_CHUNK - 3 && (s[k] & 0xC0) == 0x80) k--;
        j = (s[k] & 0xC0) == 0x80 ? MAX_CHUNK : k;
    }
    return j;
}

/* ---- hashing ---- */

static uint64_t pair_key(int32_t a, int32_t b) { return ((uint64_t)(uint32_t)a << 32 | (uint32_t)b) + 1; }

static uint32_t mix64(uint64_t k) {
    k ^= k >> 33;
    k *= 0xFF51AFD7ED558CCDULL;
    k ^= k >> 33;
    k *= 0xC4CEB9FE1A85EC53ULL;
    k ^= k >> 33;
    return (uint32_t)k;
}

static uint32_t fnv1a(const uint8_t *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 16777619u;
    return h;
}

/* ---- the tables: building, lookup, release ---- */

void wf_bpe_release(wf_bpe *b) {
    free(b->merges);
    free(b->tok_off);
    free(b->bytes);
    free(b->keys);
    free(b->ranks);
    memset(b, 0, sizeof *b);
}

static int32_t rank_of(const wf_bpe *b, int32_t x, int32_t y) {
    uint64_t key = pair_key(x, y);
    for (uint32_t h = mix64(key) & b->mask;; h = (h + 1) & b->mask) {
        if (b->keys[h] == key) return b->ranks[h];
        if (b->keys[h] == 0) return -1;
    }
}

wf_status wf_bpe_build(wf_bpe *b, int32_t *merges, int32_t n, char *msg, size_t cap) {
    memset(b, 0, sizeof *b);
    b->merges = merges;
    b->n_merges = n;
    if (n < 0 || n > WF_BPE_MAX_VOCAB - 256) {
        wf_bpe_release(b);
        return wf_fail(msg, cap, WF_ERR_FORMAT, "%d merges; at most %d", n, WF_BPE_MAX_VOCAB - 256);
    }
    const int32_t V = 256 + n;
    const uint32_t slots = wf_table_slots((size_t)n); /* n <= 2^20 */
    b->tok_off = wf_malloc_n((size_t)V + 1, sizeof(uint32_t));
    b->keys = wf_calloc_n(slots, sizeof(uint64_t));
    b->ranks = wf_malloc_n(slots, sizeof(int32_t));
    b->mask = slots - 1;
    if (!b->tok_off || !b->keys || !b->ranks) {
        wf_bpe_release(b);
        return wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory building a vocabulary of %d tokens", V);
    }
    /* pass 1: check each merge and find its length (held in tok_off[t + 1] for now) */
    uint32_t *len = b->tok_off + 1;
    for (int32_t i = 0; i < 256; i++) len[i] = 1;
    b->max_len = 1;
    for (int32_t k = 0; k < n; k++) {
        const int32_t x = merges[2 * k], y = merges[2 * k + 1];
        if (x < 0 || y < 0 || x >= 256 + k || y >= 256 + k) {
            wf_bpe_release(b);
            return wf_fail(msg, cap, WF_ERR_FORMAT, "merge %d joins tokens %d and %d; it may only join tokens below %d",
                           k, x, y, 256 + k);
        }
        len[256 + k] = len[x] + len[y];
        if (len[256 + k] > MAX_CHUNK) {
            wf_fail(msg, cap, WF_ERR_FORMAT, "merge %d makes a token of %u bytes; at most %d", k, len[256 + k], MAX_CHUNK);
            wf_bpe_release(b);
            return WF_ERR_FORMAT;
        }
        if ((int32_t)len[256 + k] > b->max_len) b->max_len = (int32_t)len[256 + k];
        const uint64_t key = pair_key(x, y);
        uint32_t h = mix64(key) & b->mask;
        while (b->keys[h] && b->keys[h] != key) h = (h + 1) & b->mask;
        if (b->keys[h] == key) {
            wf_fail(msg, cap, WF_ERR_FORMAT, "merge %d repeats merge %d (%d, %d)", k, b->ranks[h], x, y);
            wf_bpe_release(b);
            return WF_ERR_FORMAT;
        }
        b->keys[h] = key;
        b->ranks[h] = k;
    }
    /* lengths to offsets, then each token's bytes from its two earlier parts */
    b->tok_off[0] = 0;
    for (int32_t t = 0; t < V; t++) b->tok_off[t + 1] += b->tok_off[t];
    b->bytes = malloc(b->tok_off[V]); /* at most 2^20 tokens of 64 bytes */
    if (!b->bytes) {
        wf_bpe_release(b);
        return wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory building a vocabulary of %d tokens", V);
    }
    for (int32_t i = 0; i < 256; i++) b->bytes[i] = (uint8_t)i;
    for (int32_t k = 0; k < n; k++) {
        const int32_t x = merges[2 * k], y = merges[2 * k + 1];
        const uint32_t lx = b->tok_off[x + 1] - b->tok_off[x], ly = b->tok_off[y + 1] - b->tok_off[y];
        uint8_t *dst = b->bytes + b->tok_off[256 + k];
        memcpy(dst, b->bytes + b->tok_off[x], lx);
        memcpy(dst + lx, b->bytes + b->tok_off[y], ly);
    }
    return WF_OK;
}

static int bpe_pair(const void *ctx, int32_t x, int32_t y, double *key, int32_t *merged) {
    const int32_t r = rank_of(ctx, x, y);
    if (r < 0) return 0;
    *key = r;
    *merged = 256 + r;
    return 1;
}

void wf_bpe_encode(const wf_bpe *b, const uint8_t *s, size_t len, wf_ids *o) {
    int32_t ids[MAX_CHUNK], link[2 * MAX_CHUNK];
    wf_cand heap[3 * MAX_CHUNK];
    wf_merger m = {.link = link, .heap = heap, .cap = MAX_CHUNK};
    for (size_t pos = 0; pos < len;) {
        const size_t clen = chunk_len(s + pos, len - pos);
        for (size_t i = 0; i < clen; i++) ids[i] = s[pos + i];
        const int32_t k = wf_merge(&m, ids, (int32_t)clen, bpe_pair, b); /* a fixed heap never fails */
        for (int32_t i = 0; i < k; i++) wf_ids_put(o, ids[i]);
        pos += clen;
    }
}

/* ---- training ---- */

typedef struct {
    int32_t *w; /* chunks ("words") the pair occurs in; may hold stale entries */
    int32_t n, cap;
} wlist;

typedef struct {
    int64_t count;
    int32_t pair;
} heap_entry;

typedef struct {
    const uint8_t *text;
    /* distinct chunks */
    int32_t n_words, cap_words;
    uint32_t *w_off, *w_hash; /* first occurrence in text, content hash */
    int32_t *w_len;           /* tokens left after the merges so far */
    int64_t *w_count;         /* occurrences in the text */
    int32_t *w_start;         /* into sym */
    int32_t *w_stamp;         /* last merge that visited the word */
    int32_t *sym;             /* every word's tokens, merged in place */
    int32_t *slots;           /* chunk table: word index or -1 */
    uint32_t slot_mask;
    /* pairs */
    int32_t n_pairs, cap_pairs;
    int32_t *pa, *pb, *p_stamp;
    int64_t *pc;
    wlist *pl;
    uint64_t *pkeys;          /* pair table: key -> index in pidx */
    int32_t *pidx;
    uint32_t pmask;
    /* heap and the pairs one merge touched */
    heap_entry *heap;
    int32_t n_heap, cap_heap;
    int32_t *touched;
    int32_t n_touched, cap_touched;
} trainer;

static void trainer_free(trainer *tr) {
    free(tr->w_off); free(tr->w_hash); free(tr->w_len); free(tr->w_count); free(tr->w_start); free(tr->w_stamp);
    free(tr->sym); free(tr->slots);
    for (int32_t i = 0; i < tr->n_pairs; i++) free(tr->pl[i].w);
    free(tr->pa); free(tr->pb); free(tr->p_stamp); free(tr->pc); free(tr->pl); free(tr->pkeys); free(tr->pidx);
    free(tr->heap); free(tr->touched);
}

/* The capacity after doubling from cap until need fits; 0 when that exceeds int32. */
static int32_t next_cap(int32_t cap, int32_t need) {
    int64_t c = cap ? cap : 64;
    while (c < need) c *= 2;
    return c > INT32_MAX ? 0 : (int32_t)c;
}

/* Reallocates *arr to cap items of elem bytes; 0 on failure (*arr kept). */
static int resize(void **arr, int32_t cap, size_t elem) {
    void *p = cap ? wf_realloc_n(*arr, (size_t)cap, elem) : NULL;
    if (!p) return 0;
    *arr = p;
    return 1;
}

/* Grows one array to hold at least need items; 0 on failure (array kept). */
static int grow(void **arr, int32_t *cap, int32_t need, size_t elem) {
    if (need <= *cap) return 1;
    int32_t c = next_cap(*cap, need);
    if (!resize(arr, c, elem)) return 0;
    *cap = c;
    return 1;
}

/* Counts the distinct chunks of the text. 0 on out of memory. */
static int count_chunks(trainer *tr, const uint8_t *text, size_t len) {
    uint32_t slots = 1024;
    tr->slots = wf_malloc_n(slots, sizeof(int32_t));
    if (!tr->slots) return 0;
    memset(tr->slots, 0xFF, slots * sizeof(int32_t));
    tr->slot_mask = slots - 1;
    for (size_t pos = 0; pos < len;) {
        const size_t n = chunk_len(text + pos, len - pos);
        const uint32_t h = fnv1a(text + pos, n);
        uint32_t i = h & tr->slot_mask;
        for (; tr->slots[i] >= 0; i = (i + 1) & tr->slot_mask) {
            const int32_t w = tr->slots[i];
            if (tr->w_hash[w] == h && (size_t)tr->w_len[w] == n && !memcmp(text + tr->w_off[w], text + pos, n)) break;
        }
        if (tr->slots[i] >= 0) {
            tr->w_count[tr->slots[i]]++;
        } else {
            const int32_t w = tr->n_words;
            if (w + 1 > tr->cap_words) { /* four parallel arrays, one capacity */
                const int32_t c = next_cap(tr->cap_words, w + 1);
                if (!resize((void **)&tr->w_off, c, sizeof(uint32_t)) || !resize((void **)&tr->w_hash, c, sizeof(uint32_t)) ||
                    !resize((void **)&tr->w_len, c, sizeof(int32_t)) || !resize((void **)&tr->w_count, c, sizeof(int64_t)))
                    return 0;
                tr->cap_words = c;
            }
            tr->w_off[w] = (uint32_t)pos;
            tr->w_hash[w] = h;
            tr->w_len[w] = (int32_t)n;
            tr->w_count[w] = 1;
            tr->slots[i] = w;
            tr->n_words++;
            if ((uint32_t)tr->n_words * 2 > tr->slot_mask) { /* rehash at half full */
                const uint32_t bigger = wf_table_slots((size_t)tr->n_words + 1);
                int32_t *ns = bigger ? wf_malloc_n(bigger, sizeof(int32_t)) : NULL;
                if (!ns) return 0;
                memset(ns, 0xFF, bigger * sizeof(int32_t));
                for (int32_t k = 0; k < tr->n_words; k++) {
                    uint32_t j = tr->w_hash[k] & (bigger - 1);
                    while (ns[j] >= 0) j = (j + 1) & (bigger - 1);
                    ns[j] = k;
                }
                free(tr->slots);
                tr->slots = ns;
                tr->slot_mask = bigger - 1;
            }
        }
        pos += n;
    }
    return 1;
}

static int32_t pair_find(const trainer *tr, int32_t a, int32_t b) {
    const uint64_t key = pair_key(a, b);
    for (uint32_t h = mix64(key) & tr->pmask;; h = (h + 1) & tr->pmask) {
        if (tr->pkeys[h] == key) return tr->pidx[h];
        if (tr->pkeys[h] == 0) return -1;
    }
}

/* The index of pair (a, b), created with count 0 if new; -1 on out of memory. */
static int32_t pair_get(trainer *tr, int32_t a, int32_t b) {
    const uint64_t key = pair_key(a, b);
    uint32_t h = mix64(key) & tr->pmask;
    for (; tr->pkeys[h]; h = (h + 1) & tr->pmask)
        if (tr->pkeys[h] == key) return tr->pidx[h];
    const int32_t p = tr->n_pairs;
    if (p + 1 > tr->cap_pairs) { /* five parallel arrays, one capacity */
        const int32_t c = next_cap(tr->cap_pairs, p + 1);
        if (!resize((void **)&tr->pa, c, sizeof(int32_t)) || !resize((void **)&tr->pb, c, sizeof(int32_t)) ||
            !resize((void **)&tr->pc, c, sizeof(int64_t)) || !resize((void **)&tr->pl, c, sizeof(wlist)) ||
            !resize((void **)&tr->p_stamp, c, sizeof(int32_t)))
            return -1;
        tr->cap_pairs = c;
    }
    tr->pa[p] = a;
    tr->pb[p] = b;
    tr->pc[p] = 0;
    tr->p_stamp[p] = -1;
    tr->pl[p].w = NULL;
    tr->pl[p].n = tr->pl[p].cap = 0;
    tr->pkeys[h] = key;
    tr->pidx[h] = p;
    tr->n_pairs++;
    if ((uint32_t)tr->n_pairs * 2 > tr->pmask) {
        const uint32_t bigger = wf_table_slots((size_t)tr->n_pairs + 1);
        uint64_t *nk = bigger ? wf_calloc_n(bigger, sizeof(uint64_t)) : NULL;
        int32_t *ni = bigger ? wf_malloc_n(bigger, sizeof(int32_t)) : NULL;
        if (!nk || !ni) {
            free(nk);
            free(ni);
            return -1;
        }
        for (uint32_t i = 0; i <= tr->pmask; i++) {
            if (!tr->pkeys[i]) continue;
            uint32_t j = mix64(tr->pkeys[i]) & (bigger - 1);
            while (nk[j]) j = (j + 1) & (bigger - 1);
            nk[j] = tr->pkeys[i];
            ni[j] = tr->pidx[i];
        }
        free(tr->pkeys);
        free(tr->pidx);
        tr->pkeys = nk;
        tr->pidx = ni;
        tr->pmask = bigger - 1;
    }
    return p;
}

static int note_word(wlist *l, int32_t w) {
    if (l->n > 0 && l->w[l->n - 1] == w) return 1;
    if (!grow((void **)&l->w, &l->cap, l->n + 1, sizeof(int32_t))) return 0;
    l->w[l->n++] = w;
    return 1;
}

/* Heap order: more frequent first, then the smaller (left, right) pair. */
static int above(const trainer *tr, heap_entry x, heap_entry y) {
    if (x.count != y.count) return x.count > y.count;
    if (tr->pa[x.pair] != tr->pa[y.pair]) return tr->pa[x.pair] < tr->pa[y.pair];
    return tr->pb[x.pair] < tr->pb[y.pair];
}

static int heap_push(trainer *tr, int64_t count, int32_t pair) {
    if (!grow((void **)&tr->heap, &tr->cap_heap, tr->n_heap + 1, sizeof(heap_entry))) return 0;
    heap_entry e = {count, pair};
    int32_t i = tr->n_heap++;
    while (i > 0 && above(tr, e, tr->heap[(i - 1) / 2])) {
        tr->heap[i] = tr->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    tr->heap[i] = e;
    return 1;
}

static heap_entry heap_pop(trainer *tr) {
    heap_entry top = tr->heap[0], last = tr->heap[--tr->n_heap];
    int32_t i = 0;
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= tr->n_heap) break;
        if (c + 1 < tr->n_heap && above(tr, tr->heap[c + 1], tr->heap[c])) c++;
        if (!above(tr, tr->heap[c], last)) break;
        tr->heap[i] = tr->heap[c];
        i = c;
    }
    if (tr->n_heap > 0) tr->heap[i] = last;
    return top;
}

/* Merge k: pair p becomes token 256 + k in every chunk that has it. 0 on out of memory. */
static int apply_merge(trainer *tr, int32_t p, int32_t k) {
    const int32_t a = tr->pa[p], b = tr->pb[p], X = 256 + k;
    const int32_t *list = tr->pl[p].w, n_list = tr->pl[p].n; /* only lists of pairs with X grow below */
    tr->n_touched = 0;
    for (int32_t li = 0; li < n_list; li++) {
        const int32_t w = list[li];
        if (tr->w_stamp[w] == k) continue;
        tr->w_stamp[w] = k;
        int32_t *s = tr->sym + tr->w_start[w];
        const int32_t n = tr->w_len[w];
        int found = 0;
        for (int32_t i = 0; i + 1 < n && !found; i++) found = s[i] == a && s[i + 1] == b;
        if (!found) continue; /* a stale entry */
        const int64_t f = tr->w_count[w];
        for (int32_t i = 0; i + 1 < n; i++) tr->pc[pair_find(tr, s[i], s[i + 1])] -= f;
        int32_t o = 0;
        for (int32_t i = 0; i < n;) {
            if (i + 1 < n && s[i] == a && s[i + 1] == b) {
                s[o++] = X;
                i += 2;
            } else {
                s[o++] = s[i++];
            }
        }
        tr->w_len[w] = o;
        for (int32_t i = 0; i + 1 < o; i++) {
            const int32_t q = pair_get(tr, s[i], s[i + 1]);
            if (q < 0) return 0;
            tr->pc[q] += f;
            if (s[i] != X && s[i + 1] != X) continue; /* an old pair: w is already on its list */
            if (!note_word(&tr->pl[q], w)) return 0;
            if (tr->p_stamp[q] != k) {
                tr->p_stamp[q] = k;
                if (!grow((void **)&tr->touched, &tr->cap_touched, tr->n_touched + 1, sizeof(int32_t))) return 0;
                tr->touched[tr->n_touched++] = q;
            }
        }
    }
    free(tr->pl[p].w);
    tr->pl[p].w = NULL;
    tr->pl[p].n = tr->pl[p].cap = 0;
    for (int32_t i = 0; i < tr->n_touched; i++) {
        const int32_t q = tr->touched[i];
        if (tr->pc[q] > 0 && !heap_push(tr, tr->pc[q], q)) return 0;
    }
    return 1;
}

wf_status wf_bpe_train(wf_bpe *out, const uint8_t *text, size_t len, int32_t vocab_size, char *msg, size_t cap) {
    trainer tr;
    memset(&tr, 0, sizeof tr);
    int32_t *merges = NULL;
    const int32_t want = vocab_size - 256;
    int32_t n_merges = 0;
    int ok = count_chunks(&tr, text, len);
    /* every distinct chunk's bytes as initial tokens */
    int64_t total = 0;
    for (int32_t w = 0; ok && w < tr.n_words; w++) total += tr.w_len[w];
    ok = ok && total <= INT32_MAX;
    if (ok) {
        tr.sym = wf_malloc_n((size_t)total, sizeof(int32_t));
        tr.w_start = wf_malloc_n((size_t)tr.n_words, sizeof(int32_t));
        tr.w_stamp = wf_malloc_n((size_t)tr.n_words, sizeof(int32_t));
        merges = wf_malloc_n(want > 0 ? (size_t)want : 1, 2 * sizeof(int32_t));
        uint32_t slots = 1024;
        tr.pkeys = wf_calloc_n(slots, sizeof(uint64_t));
        tr.pidx = wf_malloc_n(slots, sizeof(int32_t));
        tr.pmask = slots - 1;
        ok = tr.sym && tr.w_start && tr.w_stamp && merges && tr.pkeys && tr.pidx;
    }
    int32_t at = 0;
    for (int32_t w = 0; ok && w < tr.n_words; w++) {
        tr.w_start[w] = at;
        tr.w_stamp[w] = -1;
        const int32_t n = tr.w_len[w];
        for (int32_t i = 0; i < n; i++) tr.sym[at + i] = text[tr.w_off[w] + i];
        for (int32_t i = 0; ok && i + 1 < n; i++) {
            const int32_t q = pair_get(&tr, tr.sym[at + i], tr.sym[at + i + 1]);
            ok = q >= 0 && note_word(&tr.pl[q], w);
            if (ok) tr.pc[q] += tr.w_count[w];
        }
        at += n;
    }
    for (int32_t q = 0; ok && q < tr.n_pairs; q++) ok = heap_push(&tr, tr.pc[q], q);
    while (ok && n_merges < want && tr.n_heap > 0) {
        heap_entry e = heap_pop(&tr);
        const int64_t now = tr.pc[e.pair];
        if (now != e.count) {
            /* stale: a larger count has its own entry; a smaller one goes back in */
            if (now > 0 && now < e.count) ok = heap_push(&tr, now, e.pair);
            continue;
        }
        if (now < 2) break; /* no pair occurs twice: nothing left worth a token */
        merges[2 * n_merges] = tr.pa[e.pair];
        merges[2 * n_merges + 1] = tr.pb[e.pair];
        ok = apply_merge(&tr, e.pair, n_merges);
        n_merges++;
    }
    trainer_free(&tr);
    if (!ok) {
        free(merges);
        return wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory training the BPE vocabulary");
    }
    return wf_bpe_build(out, merges, n_merges, msg, cap);
}
