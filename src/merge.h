/* Merging one word's symbols, for every BPE here (merge.c; bpe.c and vocab_encode.c use it),
 * and the ids a tokenizer writes out. */
#ifndef WF_MERGE_H
#define WF_MERGE_H

#include "internal.h"

/* Ids out: written while they fit, all counted (a too-small buffer learns the size). */
typedef struct {
    int32_t *out;
    int32_t cap;
    int64_t n;
} wf_ids;
static inline void wf_ids_put(wf_ids *o, int32_t id) {
    if (o->n < o->cap) o->out[o->n] = id;
    o->n++;
}

/* The pair (a, b) may merge when pair() says so: into *merged, with priority *key (lower
 * first; equal keys: the leftmost pair), one merge at a time. Words of up to 64 symbols: a
 * scan of their pairs' keys; longer ones: a heap of candidates over a linked list, O(n log n). */
typedef int (*wf_pair_fn)(const void *ctx, int32_t a, int32_t b, double *key, int32_t *merged);
typedef struct { double key; int32_t pos, merged, left, right; } wf_cand;
typedef struct {
    int32_t *link;       /* [2 cap]: prev, next */
    wf_cand *heap;
    size_t cap, heap_cap;
} wf_merger;
/* Merges sym[0, n) (n <= m->cap) in place; returns how many are left, or -1 when the heap
 * could not grow (heap_cap 0: a fixed heap of 3 cap entries, which always suffices). */
int32_t wf_merge(wf_merger *m, int32_t *sym, int32_t n, wf_pair_fn pair, const void *ctx);

#endif /* WF_MERGE_H */
