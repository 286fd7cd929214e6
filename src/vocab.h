/* The vocabulary tokenizers: a Hugging Face tokenizer.json (read by tokjson_read.c) or
 * llama2.c's tokenizer.bin (read by llama2c.c). vocab.c builds the tables and decodes;
 * vocab_encode.c encodes. */
#ifndef WF_VOCAB_H
#define WF_VOCAB_H

#include "added.h"
#include "merge.h"

/* Every id has a string (as its file spells it) and its decoded bytes. A tokenizer.json's
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

#endif /* WF_VOCAB_H */
