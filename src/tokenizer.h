/* The tokenizer handle, shared by tokenizer.c (char-level and the dispatch to bpe.c and the
 * vocabulary tokenizers of vocab.c), the file formats that fill it (tokfile.c, tokjson_read.c,
 * tokjson_write.c, llama2c.c) and checkpoint.c. Nothing here is public. */
#ifndef WF_TOKENIZER_H
#define WF_TOKENIZER_H

#include "bpe.h"
#include "bytes.h"
#include "unicode.h"
#include "vocab.h"

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

/* ---- the files (tokfile.c, tokjson_read.c, tokjson_write.c, llama2c.c): a whole file into a zeroed temporary
 * tokenizer ---- */
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

#define TOK_ERR(t, status, ...) wf_fail((t)->err, sizeof (t)->err, (status), __VA_ARGS__)

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
