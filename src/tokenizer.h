/* The tokenizer handle, shared by tokenizer.c (char-level and the dispatch), bpe.c
 * (byte-level BPE) and checkpoint.c (the file format). Nothing here is public. */
#ifndef WF_TOKENIZER_H
#define WF_TOKENIZER_H

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

struct wf_tokenizer {
    int32_t kind;         /* wf_tokenizer_kind; WF_TOKENIZER_NONE before training */
    /* char-level */
    int32_t n_chars;      /* code points in the vocabulary (vocab size - 1) */
    uint32_t *chars;      /* [n_chars], strictly ascending */
    int32_t ascii[128];   /* id of each ASCII code point, for the common case */
    wf_bpe bpe;           /* byte-level BPE */
    char err[256];
};

/* bpe.c. Builds b from n merges (taking ownership of merges, freed on failure too),
 * checking that each refers to earlier tokens, that none repeats and that no token is
 * longer than WF_BPE_MAX_CHUNK bytes. */
wf_status wf_bpe_build(wf_bpe *b, int32_t *merges, int32_t n, char *msg, size_t cap);
void wf_bpe_release(wf_bpe *b);
wf_status wf_bpe_train(wf_bpe *b, const uint8_t *text, size_t len, int32_t vocab_size, char *msg, size_t cap);
/* Appends ids to out[*n, cap); WF_ERR_ARG when they do not fit. */
wf_status wf_bpe_encode(const wf_bpe *b, const uint8_t *s, size_t len, int32_t *out, int32_t cap, int32_t *n,
                        char *msg, size_t msg_cap);

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
