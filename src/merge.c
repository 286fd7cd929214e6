/* Pair merging for every BPE here (bpe.c, and the vocabulary tokenizers of vocab.c): the
 * candidate pairs in a heap, lowest key then leftmost first, the symbols in a linked list; a
 * popped pair is stale when either symbol has merged since. This is the Rust tokenizers
 * library's Word::merge_all, and for scores llama2.c's loop, in O(n log n): SentencePiece-
 * style vocabularies have no pre-tokenizer, so a whole text is one word. */
#include <stdlib.h>

#include "merge.h"

static int cand_before(const wf_cand *a, const wf_cand *b) {
    return a->key < b->key || (a->key == b->key && a->pos < b->pos);
}

static int heap_push(wf_merger *m, size_t *hn, wf_cand c) {
    if (*hn == (m->heap_cap ? m->heap_cap : 3 * m->cap)) {
        if (!m->heap_cap) return 0; /* a fixed heap of 3n: n - 1 pairs, 2 per merge: never full */
        size_t c;
        wf_cand *p = wf_mul_ok(m->heap_cap, 2, &c) ? wf_realloc_n(m->heap, c, sizeof *p) : NULL;
        if (!p) return 0;
        m->heap = p;
        m->heap_cap = c;
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

/* Pushes the pair (left, right) at pos when the vocabulary merges it; 0: out of memory. */
static int push_pair(wf_merger *m, size_t *hn, wf_pair_fn pair, const void *ctx, int32_t pos, int32_t left, int32_t right) {
    double key;
    int32_t merged;
    if (!pair(ctx, left, right, &key, &merged)) return 1;
    return heap_push(m, hn, (wf_cand){.key = key, .pos = pos, .merged = merged, .left = left, .right = right});
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
    for (int32_t i = 0; i < n; i++) {
        prev[i] = i - 1;
        next[i] = i + 1 < n ? i + 1 : -1;
    }
    for (int32_t i = 0; i + 1 < n; i++)
        if (!push_pair(m, &hn, pair, ctx, i, sym[i], sym[i + 1])) return -1;
    while (hn > 0) {
        const wf_cand c = heap_pop(m, &hn);
        const int32_t p = c.pos, q = next[p];
        if (sym[p] < 0 || q < 0) continue; /* merged into its left neighbour, or last */
        /* stale: either symbol merged since (in a vocabulary a changed pair never joins into
         * the same token, so this is the Rust library's check on the merged id) */
        if (sym[p] != c.left || sym[q] != c.right) continue;
        sym[p] = c.merged;
        sym[q] = -1;
        next[p] = next[q];
        if (next[q] >= 0) prev[next[q]] = p;
        if (prev[p] >= 0 && !push_pair(m, &hn, pair, ctx, prev[p], sym[prev[p]], sym[p])) return -1;
        if (next[p] >= 0 && !push_pair(m, &hn, pair, ctx, p, sym[p], sym[next[p]])) return -1;
    }
    int32_t k = 0;
    for (int32_t i = 0; i >= 0; i = next[i]) sym[k++] = sym[i];
    return k;
}
