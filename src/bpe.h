/* Byte-level BPE (bpe.c): its tables, training, building from merges, encoding. */
#ifndef WF_BPE_H
#define WF_BPE_H

#include "merge.h"

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

/* Builds b from n merges (taking ownership of merges, freed on failure too),
 * checking that each refers to earlier tokens, that none repeats and that no token is
 * longer than WF_BPE_MAX_CHUNK bytes. */
wf_status wf_bpe_build(wf_bpe *b, int32_t *merges, int32_t n, char *msg, size_t cap);
void wf_bpe_release(wf_bpe *b);
wf_status wf_bpe_train(wf_bpe *b, const uint8_t *text, size_t len, int32_t vocab_size, char *msg, size_t cap);
/* Appends the ids to o. */
void wf_bpe_encode(const wf_bpe *b, const uint8_t *s, size_t len, wf_ids *o);

#endif /* WF_BPE_H */
