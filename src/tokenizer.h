/* The tokenizer handle, shared by tokenizer.c (char-level and the dispatch), and
 * checkpoint.c (its file format). Nothing here is public. */
#ifndef WF_TOKENIZER_H
#define WF_TOKENIZER_H

#include "internal.h"

struct wf_tokenizer {
    int32_t kind;         /* wf_tokenizer_kind; WF_TOKENIZER_NONE before training */
    /* char-level */
    int32_t n_chars;      /* code points in the vocabulary (vocab size - 1) */
    uint32_t *chars;      /* [n_chars], strictly ascending */
    int32_t ascii[128];   /* id of each ASCII code point, for the common case */
    char err[256];
};

#define TOK_ERR(t, status, ...) wf_fail((t)->err, sizeof (t)->err, (status), __VA_ARGS__)

#define WF_MAX_CODEPOINT 0x10FFFFu

/* A char vocabulary from n code points, strictly ascending Unicode scalar values (the
 * caller checked). Takes ownership of chars; fills a cleared tokenizer's fields. */
void wf_tokenizer_set_chars(wf_tokenizer *t, uint32_t *chars, int32_t n);

/* Frees the vocabulary; the handle becomes empty (kind NONE). The message stays. */
void wf_tokenizer_clear(wf_tokenizer *t);

/* Replaces dst's vocabulary by src's (src becomes empty). dst keeps its message buffer. */
void wf_tokenizer_move(wf_tokenizer *dst, wf_tokenizer *src);

#endif /* WF_TOKENIZER_H */
