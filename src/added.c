/* Finding added tokens in a text (added.h), as the Hugging Face library
 * does (Aho-Corasick, leftmost-longest): the next match starts at the leftmost position where
 * any token starts, and is the longest token starting there (of equal ones, the first in the
 * file). In time linear in the text, whatever the tokens: 2,000 tokens of 1,000 bytes with
 * one prefix made the plain scan (every token at every position) quadratic.
 *
 * The longest token starting at position p is the longest reversed token that ends where a
 * backward scan reaches p. So each set (raw, normalized) is an Aho-Corasick automaton over
 * its reversed tokens, run backward over a block of the text and the longest token's length
 * past it: one transition per byte, and the failure transitions paid for by the depth they
 * undo (at most one per byte read), so at most two steps per byte and block. A block is
 * MATCH_BLOCK positions (or the first text's length when shorter), never fewer than the
 * longest token has bytes, so the bytes past it at most double the work. The leftmost match
 * is then the first position of a block with one. */
#include <stdlib.h>

#include "added.h"

#define MATCH_BLOCK 65536
#define MAX_STATES ((1 << 24) - 1) /* state << 8 | byte fits a uint32 edge key */

void wf_matcher_release(wf_matcher *m) {
    free(m->fail);
    free(m->out);
    free(m->ekey);
    free(m->echild);
    memset(m, 0, sizeof *m);
}

/* The child of state s by byte c, -1 if none; or its empty slot, for adding one. */
static uint32_t edge_slot(const wf_matcher *m, int32_t s, uint8_t c) {
    const uint32_t key = ((uint32_t)s << 8 | c) + 1;
    uint32_t i = key ^ key >> 16; /* murmur3's finalizer: the low bits depend on every bit of the key */
    i *= 0x85EBCA6Bu;
    i ^= i >> 13;
    i *= 0xC2B2AE35u;
    i = (i ^ i >> 16) & m->emask;
    while (m->ekey[i] && m->ekey[i] != key) i = (i + 1) & m->emask;
    return i;
}

static int32_t child(const wf_matcher *m, int32_t s, uint8_t c) {
    const uint32_t i = edge_slot(m, s, c);
    return m->ekey[i] ? m->echild[i] : -1;
}

wf_status wf_matcher_build(wf_matcher *m, int32_t n, wf_token_fn token, const void *ctx, char *msg, size_t cap) {
    size_t bytes = 0;
    for (int32_t i = 0; i < n; i++) {
        uint32_t len;
        if (!token(ctx, i, &len)) continue;
        if (len > MAX_STATES - 1 - bytes)
            return wf_fail(msg, cap, WF_ERR_UNSUPPORTED, "the added tokens hold more than %d bytes; this build "
                           "matches at most that many", MAX_STATES - 1);
        bytes += len;
        if ((int32_t)len > m->longest) m->longest = (int32_t)len;
    }
    const size_t states = bytes + 1;
    const uint32_t slots = wf_table_slots(states);
    m->fail = wf_malloc_n(states, sizeof(int32_t));
    m->out = wf_malloc_n(states, sizeof(int32_t));
    m->ekey = wf_calloc_n(slots, sizeof(uint32_t));
    m->echild = wf_malloc_n(slots, sizeof(int32_t));
    /* for the failures: each state's depth, parent and byte from it, and the states by depth */
    int32_t *depth = wf_malloc_n(states, sizeof(int32_t)), *order = wf_malloc_n(states, sizeof(int32_t));
    int32_t *parent = wf_malloc_n(states, sizeof(int32_t)), *at_depth = wf_calloc_n((size_t)m->longest + 2, sizeof(int32_t));
    uint8_t *by = wf_malloc_n(states, 1);
    wf_status st = WF_OK;
    if (!m->fail || !m->out || !m->ekey || !m->echild || !depth || !order || !parent || !at_depth || !by)
        st = wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory indexing %d added tokens", n);
    if (st == WF_OK) {
        m->emask = slots - 1;
        /* the trie of reversed tokens; out: the token that ends at a state (the first in the file) */
        m->n = 1;
        m->out[0] = -1;
        depth[0] = 0;
        for (int32_t i = 0; i < n; i++) {
            uint32_t len;
            const uint8_t *t = token(ctx, i, &len);
            if (!t || !len) continue; /* normalized to nothing: never matches */
            int32_t s = 0;
            for (uint32_t k = len; k-- > 0;) {
                const uint32_t e = edge_slot(m, s, t[k]);
                if (!m->ekey[e]) {
                    m->ekey[e] = ((uint32_t)s << 8 | t[k]) + 1;
                    m->echild[e] = m->n;
                    m->out[m->n] = -1;
                    depth[m->n] = depth[s] + 1;
                    parent[m->n] = s;
                    by[m->n] = t[k];
                    m->n++;
                }
                s = m->echild[e];
            }
            if (m->out[s] < 0) m->out[s] = i;
        }
        /* a counting sort by depth: a state's failure is then known before its children's */
        for (int32_t s = 0; s < m->n; s++) at_depth[depth[s] + 1]++;
        for (int32_t d = 1; d <= m->longest + 1; d++) at_depth[d] += at_depth[d - 1];
        for (int32_t s = 0; s < m->n; s++) order[at_depth[depth[s]]++] = s;
        /* t = child of s by c: its failure is the child by c of the deepest state on s's
         * failure chain that has one (else the root); its output, its own token or else its
         * failure's: the longest token that is a suffix of t (reversed: that starts there) */
        m->fail[0] = 0;
        for (int32_t k = 1; k < m->n; k++) {
            const int32_t t = order[k], s = parent[t];
            int32_t f = s, g = -1;
            while (f && (g = child(m, m->fail[f], by[t])) < 0) f = m->fail[f];
            m->fail[t] = f ? g : 0;
            if (m->out[t] < 0) m->out[t] = m->out[m->fail[t]];
        }
    }
    free(depth);
    free(order);
    free(parent);
    free(at_depth);
    free(by);
    return st;
}

/* The longest token starting at each position of the block [at, end) of s[0, n). */
static void scan_block(const wf_matcher *m, const uint8_t *s, size_t n, wf_match_scan *sc) {
    const size_t stop = n - sc->end < (size_t)m->longest ? n : sc->end + (size_t)m->longest - 1;
    int32_t q = 0;
    for (size_t p = stop; p-- > sc->at;) {
        int32_t t;
        while ((t = child(m, q, s[p])) < 0 && q) {
            q = m->fail[q];
            sc->work++;
        }
        q = t < 0 ? 0 : t;
        sc->work++;
        if (p < sc->end) sc->best[p - sc->at] = m->out[q];
    }
}

int wf_match_next(const wf_matcher *m, const uint8_t *s, size_t n, size_t from, wf_match_scan *sc, size_t *at, int32_t *k) {
    *at = n;
    *k = -1;
    if (m->n <= 1) return 1; /* no tokens in this set */
    if (!sc->best) { /* a block of at most MATCH_BLOCK positions (fewer for a shorter text), never below the longest token */
        sc->cap = n < MATCH_BLOCK ? n : MATCH_BLOCK;
        if (sc->cap < (size_t)m->longest) sc->cap = (size_t)m->longest;
        if (!(sc->best = wf_malloc_n(sc->cap, sizeof(int32_t)))) return 0;
    }
    for (size_t p = from; p < n; p++) {
        if (p < sc->at || p >= sc->end) { /* the block that starts here */
            sc->at = p;
            sc->end = n - p < sc->cap ? n : p + sc->cap;
            scan_block(m, s, n, sc);
        }
        if (sc->best[p - sc->at] >= 0) {
            *at = p;
            *k = sc->best[p - sc->at];
            return 1;
        }
    }
    return 1;
}
