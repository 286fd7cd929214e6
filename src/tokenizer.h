/* The tokenizer handle, shared by tokenizer.c (char-level and the dispatch), bpe.c
 * (byte-level BPE), vocab.c and vocab_encode.c (the vocabulary tokenizers: a tokenizer.json, read by tokjson.c,
 * or llama2.c's tokenizer.bin, read by llama2c.c) and checkpoint.c (the file format).
 * Nothing here is public. */
#ifndef WF_TOKENIZER_H
#define WF_TOKENIZER_H

#include "bytes.h"
#include "internal.h"

/* Byte-level BPE: tokens 0..255 are the bytes, token 256 + k is merge k. */
#define WF_BPE_MAX_CHUNK 64       /* longest pre-tokenized chunk, so the longest token */
#define WF_BPE_MAX_VOCAB (1 << 20)
#define WF_BPE_PRETOKENIZER 1     /* the chunking rule of bpe.c; part of the file format */

typedef struct {
    int32_t n_merges;
    int32_t *merges;     /* [n_merges][2]: token 256 + k is merges[2k] then merges[2k + 1] */
    uint32_t *tok_off;   /* [256 + n_merges + 1]: token i's bytes are bytes[tok_off[i], tok_off[i + 1]) */
    uint8_t *bytes;
    int32_t max_len;     /* bytes of the longest token */
    uint64_t *keys;      /* merge lookup, open addressing: pair key (0 = empty slot) -> rank */
    int32_t *ranks;
    uint32_t mask;
} wf_bpe;

/* ---- vocabulary tokenizers (vocab.c, vocab_encode.c) ----
 * Every id has a string (as its file spells it) and its decoded bytes. A tokenizer.json's
 * text goes through its added tokens, normalizer, pre-tokenizer and BPE model (merges by
 * rank); llama2.c's through its own steps (merges by score). The file's bytes are kept:
 * they are what wf_tokenizer_save writes back. */
typedef struct { uint32_t off, len; } wf_span; /* bytes in a vocabulary's string pool */

enum { WF_VOCAB_BYTES = 1, WF_VOCAB_CHARS = 2, WF_VOCAB_LLAMA2C = 3 }; /* wf_vocab.family */
enum { WF_NORM_PREPEND = 1, WF_NORM_REPLACE = 2 };                     /* normalizer steps */
enum { WF_SPLIT_GPT2 = 1, WF_SPLIT_DIGIT = 2, WF_SPLIT_DIGITS = 3 };   /* pre-tokenizer splits */
enum { WF_META_ALWAYS = 1, WF_META_FIRST = 2, WF_META_NEVER = 3 };     /* Metaspace's prepend_scheme */
/* the decoder's per-token steps, before Fuse */
enum { WF_DEC_REPLACE = 1, WF_DEC_BYTEFALLBACK = 2, WF_DEC_BYTELEVEL = 3, WF_DEC_STRIP = 4, WF_DEC_METASPACE = 5 };
#define WF_VOCAB_STEPS 8 /* most steps of each kind a tokenizer.json may chain */
/* The most a tokenizer.json's normalizer may lengthen a text, and its decoder a token: the
 * product over their Replace steps of content / pattern bytes (steps that shorten count 1)
 * is at most this, checked at load (tokjson_steps.c). A normalized text of n bytes is then
 * at most WF_MAX_GROWTH * (n + its Prepend strings) bytes long; the pre-tokenizer adds at
 * most 4 bytes per byte (Metaspace's one character for each space) and 4 more. */
#define WF_MAX_GROWTH 8

typedef struct {
    int op;
    wf_span a, b;        /* Prepend: a; Replace: a by b; Strip: a is the character */
    int32_t start, stop; /* Strip */
} wf_vocab_step;

typedef struct {
    int32_t id;
    wf_span match;       /* the text it matches (its content, normalized when `normalized`) */
    int normalized;      /* matched in normalized text (else in the raw text) */
} wf_added;

/* The added tokens of one set (raw or normalized) as an Aho-Corasick automaton over their
 * reversed bytes (added.c); state 0 is the root. */
typedef struct {
    int32_t n;           /* states; 1: no tokens */
    int32_t *fail;       /* [n] the state of the longest proper suffix */
    int32_t *out;        /* [n] the longest token (an index of wf_vocab.added) that a state ends with, -1 */
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

typedef struct {
    int family;
    int32_t n;           /* ids: 0 .. n - 1, each with a string */
    uint8_t *pool;       /* every wf_span's bytes */
    size_t pool_n;
    wf_span *tok;        /* [n] each id's string */
    wf_span *dec;        /* [n] its decoded bytes (the decoder's per-token steps) */
    wf_span *dec0;       /* [n] the same as the first token (a Metaspace decoder), else NULL */
    float *score;        /* llama2.c: [n] */
    int32_t max_tok, max_dec;
    int32_t *slot;       /* string -> lowest id, open addressing (-1 empty) */
    uint32_t slot_mask;
    uint64_t *mkey;      /* merges: pair key (0 empty) -> rank and the merged id */
    int32_t *mrank, *mres;
    uint32_t mmask;
    int32_t n_merges;
    int32_t char_id[256]; /* byte-level: the id of each byte's character (-1: not in the vocabulary) */
    int32_t fb_id[256];   /* byte fallback: the id of <0xNN> (-1: none) */
    wf_matcher match[2];  /* the added tokens matched in the raw text, in the normalized text */
    int32_t unk, bos;     /* -1: none */
    int byte_fallback, fuse_unk, ignore_merges;
    int n_norm, n_split, n_dec;
    wf_vocab_step norm[WF_VOCAB_STEPS], dec_steps[WF_VOCAB_STEPS];
    int split[WF_VOCAB_STEPS];
    int meta;             /* Metaspace pre-tokenizer: WF_META_*, 0: none */
    wf_span meta_rep;
    int prefix_space;     /* ByteLevel's add_prefix_space */
    int32_t n_added;
    wf_added *added;
    int dec_join;         /* no decoder: tokens joined by one space */
    int dec_first;        /* a Metaspace decoder: the first token drops its replacement characters */
    wf_span strip;        /* Strip after Fuse: the character, and how many at each end */
    int32_t strip_start, strip_stop;
    uint8_t *src;         /* the file's bytes */
    int32_t src_n;
} wf_vocab;

struct wf_tokenizer {
    int32_t kind;         /* wf_tokenizer_kind; WF_TOKENIZER_NONE before training */
    /* char-level */
    int32_t n_chars;      /* code points in the vocabulary (vocab size - 1) */
    uint32_t *chars;      /* [n_chars], strictly ascending */
    int32_t ascii[128];   /* id of each ASCII code point, for the common case */
    wf_bpe bpe;           /* byte-level BPE */
    wf_vocab voc;         /* WF_TOKENIZER_HF, WF_TOKENIZER_LLAMA2C */
    char err[256];
};

/* ---- ids out: written while they fit, all counted (a too-small buffer learns the size) ---- */
typedef struct {
    int32_t *out;
    int32_t cap;
    int64_t n;
} wf_ids;
static inline void wf_ids_put(wf_ids *o, int32_t id) {
    if (o->n < o->cap) o->out[o->n] = id;
    o->n++;
}

/* ---- merging one word's symbols (merge.c; for vocab_encode.c and bpe.c) ----
 * The pair (a, b) may merge when pair() says so: into *merged, with priority *key (lower
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

/* ---- UTF-8 and Unicode classes (unicode.c) ---- */
enum { WF_UNI_L = 1, WF_UNI_N = 2, WF_UNI_S = 4 }; /* \p{L}, \p{N}, White_Space */
/* One code point at s[0, len), len >= 1, into *cp; returns the bytes read (>= 1). A byte
 * that does not start a valid sequence reads alone, as U+FFFD. */
int wf_utf8_next(const uint8_t *s, size_t len, uint32_t *cp);
int wf_utf8_put(uint32_t cp, uint8_t *out);
int wf_uni_class(uint32_t cp);

/* ---- vocab.c ---- */
void wf_vocab_release(wf_vocab *v);
/* For a vocabulary whose family, n, pool and tok are set: the string index, the longest
 * string, the byte-level characters' and the byte fallback's ids. WF_ERR_NOMEM on failure. */
wf_status wf_vocab_index(wf_vocab *v, char *msg, size_t cap);
/* Then, with the steps and added tokens set: each id's decoded bytes, the added tokens' index. */
wf_status wf_vocab_finish(wf_vocab *v, char *msg, size_t cap);
static inline const uint8_t *wf_str_of(const wf_vocab *v, wf_span s) { return v->pool + s.off; }
/* whether s[0, n) starts with pre[0, k) */
static inline int wf_starts(const uint8_t *s, size_t n, const uint8_t *pre, size_t k) { return n >= k && !memcmp(s, pre, k); }
int32_t wf_vocab_find(const wf_vocab *v, const uint8_t *s, size_t n); /* the lowest id of a string, -1 */
int32_t wf_vocab_find2(const wf_vocab *v, const uint8_t *a, size_t na, const uint8_t *b, size_t nb); /* of a then b */
/* The merge table: a pair's key (never 0, an empty slot's) and its first slot. */
static inline uint64_t wf_merge_key(int32_t a, int32_t b) { return ((uint64_t)(uint32_t)a << 32 | (uint32_t)b) + 1; }
static inline uint32_t wf_merge_slot(uint64_t k) { return (uint32_t)((k * 0x9E3779B97F4A7C15ULL) >> 32); }
/* The merge table for count merges (0 on out of memory), and one merge into it. */
int wf_vocab_merges_alloc(wf_vocab *v, int32_t count);
void wf_vocab_merge_put(wf_vocab *v, int32_t a, int32_t b, int32_t rank, int32_t merged);
/* Encodes s[0, len) into o; *work (when not NULL) gets the added-token matcher's steps. */
wf_status wf_vocab_encode(const wf_vocab *v, const uint8_t *s, size_t len, wf_ids *o, int64_t *work, char *msg, size_t cap);
wf_status wf_vocab_decode(const wf_vocab *v, const int32_t *ids, int32_t n, uint8_t *out, int32_t cap,
                          int32_t *n_out, char *msg, size_t msg_cap);
/* ---- added.c: the added tokens' automata (wf_vocab_finish builds them) ---- */
wf_status wf_matcher_build(wf_vocab *v, char *msg, size_t cap);
void wf_matcher_release(wf_matcher *m);
/* The leftmost-longest token of m in s[from, n): *at its start (n if none), *k its index in
 * the vocabulary's added tokens. sc carries the scan of this s between calls (zeroed for a
 * new text; free sc->best after). 0: out of memory. */
int wf_match_next(const wf_matcher *m, const uint8_t *s, size_t n, size_t from, wf_match_scan *sc, size_t *at, int32_t *k);

/* A growing byte buffer (vocab.c, vocab_encode.c): when it cannot grow, failed is set and
 * later puts are dropped. */
typedef struct {
    uint8_t *p;
    size_t n, cap;
    int failed;
} wf_buf;
void wf_buf_put(wf_buf *b, const void *s, size_t k);
/* s[0, n) through the vocabulary's normalizer into out (tmp: scratch); 0: out of memory. */
int wf_vocab_normalize(const wf_vocab *v, const uint8_t *s, size_t n, wf_buf *out, wf_buf *tmp);
/* bytes_to_unicode: the character (UTF-8, 1 or 2 bytes) a byte-level tokenizer writes for b */
int wf_byte_char(uint8_t b, uint8_t out[2]);

/* ---- the files (tokfile.c, tokjson.c, llama2c.c): a whole file into a zeroed temporary tokenizer ---- */
/* The tokenizer file (.wft): t as one, into w; one from data (out freed here on failure). */
void wf_tokfile_write(wf_writer *w, const wf_tokenizer *t);
wf_status wf_tokfile_parse(const uint8_t *data, size_t n, wf_tokenizer *out, char *msg, size_t cap);
wf_status wf_tokjson_parse(const uint8_t *data, size_t n, wf_tokenizer *out, char *msg, size_t cap);
wf_status wf_tokjson_write_bpe(const wf_bpe *b, char **out, int32_t *n, char *msg, size_t cap);
/* t (not empty) as a NUL-terminated tokenizer.json into a new buffer: BPE written, HF its file. */
wf_status wf_tokjson_save(wf_tokenizer *t, uint8_t **out, int32_t *n);
/* wasmformer's chunks as the Split pattern tokjson_write.c writes (cut = 0: the chunks; 1: the
 * cut at WF_BPE_MAX_CHUNK bytes), malloc'd; NULL: out of memory. */
char *wf_tokjson_pattern(int cut);
wf_status wf_llama2c_tok_parse(const uint8_t *data, size_t n, wf_tokenizer *out, char *msg, size_t cap);

/* bpe.c. Builds b from n merges (taking ownership of merges, freed on failure too),
 * checking that each refers to earlier tokens, that none repeats and that no token is
 * longer than WF_BPE_MAX_CHUNK bytes. */
wf_status wf_bpe_build(wf_bpe *b, int32_t *merges, int32_t n, char *msg, size_t cap);
void wf_bpe_release(wf_bpe *b);
wf_status wf_bpe_train(wf_bpe *b, const uint8_t *text, size_t len, int32_t vocab_size, char *msg, size_t cap);
/* Appends the ids to o. */
void wf_bpe_encode(const wf_bpe *b, const uint8_t *s, size_t len, wf_ids *o);

#define TOK_ERR(t, status, ...) wf_fail((t)->err, sizeof (t)->err, (status), __VA_ARGS__)

#define WF_MAX_CODEPOINT 0x10FFFFu

/* A char vocabulary from n code points, strictly ascending Unicode scalar values (the
 * caller checked). Takes ownership of chars; fills a cleared tokenizer's fields. */
void wf_tokenizer_set_chars(wf_tokenizer *t, uint32_t *chars, int32_t n);

/* The ids t knows; 0 when empty. */
int32_t wf_tokenizer_vocab_size(const wf_tokenizer *t);

/* Frees the vocabulary; the handle becomes empty (kind NONE). The message stays. */
void wf_tokenizer_clear(wf_tokenizer *t);

/* Replaces dst's vocabulary by src's (src becomes empty). dst keeps its message buffer. */
void wf_tokenizer_move(wf_tokenizer *dst, wf_tokenizer *src);

#endif /* WF_TOKENIZER_H */
