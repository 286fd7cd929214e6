/* Finding added tokens in a text (added.c): an Aho-Corasick automaton over a set of byte
 * strings, leftmost-longest. The vocabulary tokenizers (vocab.h) build one per set of their
 * added tokens (raw, normalized); this module knows nothing of them. */
#ifndef WF_ADDED_H
#define WF_ADDED_H

#include "internal.h"

/* The added tokens of one set (raw or normalized) as an Aho-Corasick automaton over their
 * reversed bytes (added.c); state 0 is the root. */
typedef struct {
    int32_t n;           /* states; 1: no tokens */
    int32_t *fail;       /* [n] the state of the longest proper suffix */
    int32_t *out;        /* [n] the longest token (an index of the tokens it was built from) that a state ends with, -1 */
    uint32_t *ekey;      /* edges, open addressing: (state << 8 | byte) + 1 (0 empty) -> echild */
    int32_t *echild;
    uint32_t emask;
    int32_t longest;     /* bytes of the longest token */
} wf_matcher;
/* One text's scan for one set: the longest token starting at each position of a block. */
typedef struct {
    int32_t *best;       /* [cap]: for positions [at, end), -1 where none starts */
    size_t at, end, cap;
    int64_t work;        /* automaton steps taken (for the tests of its complexity) */
} wf_match_scan;

/* Token i's bytes (its length to *len), or NULL when token i is not in the set being built. */
typedef const uint8_t *(*wf_token_fn)(const void *ctx, int32_t i, uint32_t *len);
/* The automaton of tokens 0 .. n - 1 (those token() gives) into a zeroed m; on failure m holds
 * what to release. */
wf_status wf_matcher_build(wf_matcher *m, int32_t n, wf_token_fn token, const void *ctx, char *msg, size_t cap);
void wf_matcher_release(wf_matcher *m);
/* The leftmost-longest token of m in s[from, n): *at its start (n if none), *k its index among
 * the tokens m was built from. sc carries the scan of this s between calls (zeroed for a new
 * text; free sc->best after). 0: out of memory. */
int wf_match_next(const wf_matcher *m, const uint8_t *s, size_t n, size_t from, wf_match_scan *sc, size_t *at, int32_t *k);

#endif /* WF_ADDED_H */
