/* A GGUF file loaded as it arrives (docs/FORMATS.md, "Streamed loads"): its header gathered
 * until it parses, the model it describes planned and made aside, then the tensors' data
 * taken in file order, whatever the pieces, each row checked and converted into place as it
 * is complete. What the load holds besides the new model: the header (kept: the tensor infos
 * point into it) and one row split between two pieces. Nothing touches the handle's model
 * until the last byte has been checked: the end swaps the new one in. wf_model_load's GGUF
 * path is the same load in one piece. */
#include <stdio.h>
#include <stdlib.h>

#include "gguf.h"

#define FIRST_TRY 65536 /* bytes of header tried first; each failed try for want of bytes doubles it */

struct wf_gguf_stream {
    wf_tokenizer *t;            /* where the file's tokenizer goes at the end, or NULL */
    uint8_t *head;              /* the file's first bytes, until the header parses; then kept */
    size_t n_head, cap_head;    /* bytes in head, its room */
    size_t try_at;              /* parse when head holds this many */
    gg_file f;
    int parsed;
    gg_entry *fe;               /* the plan: entries in file order */
    int n_fe, cur;              /* entries; the one being filled */
    size_t k;                   /* its next row */
    wf_model next;              /* the model being filled (made once parsed) */
    wf_tokenizer tok;
    int have_tok;
    uint64_t pos;               /* file bytes taken so far */
    uint8_t *carry;             /* a row split between pieces: n_carry bytes of it so far */
    size_t n_carry;
};
typedef struct wf_gguf_stream stream;

static void stream_free(stream *s) {
    if (!s) return;
    if (s->parsed) wf_model_release(&s->next);
    wf_tokenizer_clear(&s->tok);
    wf_gguf_release(&s->f);
    free(s->fe);
    free(s->carry);
    free(s->head);
    free(s);
}

/* The header parsed (s->head holds the file's first n_head bytes): the plan, the model made
 * aside, the carry sized for the widest row. more: a failure for want of bytes is reported
 * as WF_ERR_STATE (try again with more) instead of the parser's message. */
static wf_status try_header(wf_model *m, stream *s, int more) {
    wf_status st = wf_gguf_parse(s->head, s->n_head, &s->f, m->err, sizeof m->err);
    if (st != WF_OK) return more && s->f.more ? WF_ERR_STATE : st;
    wf_config cfg;
    uint8_t qtype[WF_N_PARAMS];
    st = wf_gguf_plan(&s->f, &cfg, qtype, &s->fe, &s->n_fe, s->t ? &s->tok : NULL, &s->have_tok, m->err, sizeof m->err);
    size_t widest = 1;
    for (int i = 0; i < s->n_fe; i++) widest = s->fe[i].unit > widest ? s->fe[i].unit : widest;
    if (st == WF_OK && !(s->carry = malloc(widest))) st = WF_ERR(m, WF_ERR_NOMEM, "out of memory for a row of %zu bytes", widest);
    /* every tensor is present with its shape: the weights take no more than the file (a Q4_0
     * part kept as Q8_0 at most twice its bytes); the KV cache the context asks for is
     * refused by the model's own size check when it cannot fit */
    if (st == WF_OK) st = wf_model_make(m, &s->next, &cfg, NULL, qtype);
    if (st != WF_OK) return st;
    s->parsed = 1;
    s->pos = s->f.data;
    return WF_OK;
}

/* File bytes [s->pos, s->pos + n) at p, after the header: each entry's rows into the model. */
static wf_status take(wf_model *m, stream *s, const uint8_t *p, size_t n) {
    while (n && s->cur < s->n_fe) {
        const gg_entry *x = &s->fe[s->cur];
        size_t step;
        wf_status st = WF_OK;
        if (s->pos < x->at) { /* padding, or bytes no tensor uses */
            step = x->at - s->pos < n ? (size_t)(x->at - s->pos) : n;
        } else if (s->n_carry || n < x->unit) { /* a row split between pieces */
            step = x->unit - s->n_carry < n ? x->unit - s->n_carry : n;
            memcpy(s->carry + s->n_carry, p, step);
            if ((s->n_carry += step) == x->unit) {
                st = wf_gguf_take_row(&s->next, x, s->k++, s->carry, m->err, sizeof m->err);
                s->n_carry = 0;
            }
        } else { /* whole rows, straight from the piece */
            const size_t rows = n / x->unit < x->rows - s->k ? n / x->unit : x->rows - s->k;
            for (size_t i = 0; i < rows && st == WF_OK; i++) st = wf_gguf_take_row(&s->next, x, s->k++, p + i * x->unit, m->err, sizeof m->err);
            step = rows * x->unit;
        }
        if (st != WF_OK) return st;
        p += step;
        n -= step;
        s->pos += step;
        if (s->k == x->rows) {
            s->cur++;
            s->k = 0;
        }
    }
    s->pos += n; /* after the last tensor: padding */
    return WF_OK;
}

/* Bytes of the file, the next n, into the load: gathered into the header until it parses, then
 * taken. */
static wf_status feed(wf_model *m, stream *s, const uint8_t *p, size_t n) {
    while (n && !s->parsed) {
        const size_t want = s->try_at - s->n_head, step = want < n ? want : n;
        if (s->cap_head - s->n_head < step) { /* doubling (pieces of a byte copy the header a few times), up to try_at */
            const size_t grow = s->cap_head > s->try_at - s->cap_head ? s->try_at : 2 * s->cap_head;
            const size_t room = grow > s->n_head + step ? grow : s->n_head + step;
            uint8_t *head = realloc(s->head, room);
            if (!head) return WF_ERR(m, WF_ERR_NOMEM, "out of memory for the first %zu bytes of a GGUF file", room);
            s->head = head;
            s->cap_head = room;
        }
        memcpy(s->head + s->n_head, p, step);
        s->n_head += step;
        p += step;
        n -= step;
        if (s->n_head < s->try_at) break;
        wf_status st = try_header(m, s, 1);
        if (st == WF_ERR_STATE) s->try_at = s->try_at > SIZE_MAX / 2 ? SIZE_MAX : 2 * s->try_at;
        else if (st != WF_OK || (st = take(m, s, s->head + s->f.data, s->n_head - s->f.data)) != WF_OK) return st;
    }
    return n ? take(m, s, p, n) : WF_OK;
}

/* The file ended: the header parsed from all of it if not yet, every tensor complete; then the
 * model and tokenizer swapped in. */
static wf_status finish(wf_model *m, stream *s) {
    wf_status st = WF_OK;
    if (!s->parsed && (st = try_header(m, s, 0)) == WF_OK)
        st = take(m, s, s->head + s->f.data, s->n_head - s->f.data);
    if (st != WF_OK) return st;
    if (s->cur < s->n_fe) {
        const gg_tensor *t = s->fe[s->cur].t;
        char name[GG_MAX_NAME + 8];
        return WF_ERR(m, WF_ERR_FORMAT, "GGUF: tensor \"%s\" (%zu rows of %zu bytes from byte %llu) runs past the end of the file",
                      wf_gguf_shown(t->name, name, sizeof name), t->bytes / t->row, t->row, (unsigned long long)t->offset);
    }
    s->next.origin = WF_ORIGIN_GGUF;
    wf_model_adopt(m, &s->next);
    s->parsed = 0; /* the model is m's now */
    if (s->t && s->have_tok) {
        wf_tokenizer_move(s->t, &s->tok);
        s->t->err[0] = 0;
    }
    m->err[0] = 0;
    return WF_OK;
}

static stream *begin(wf_tokenizer *t) {
    stream *s = calloc(1, sizeof *s);
    if (s) {
        s->t = t;
        s->try_at = FIRST_TRY;
    }
    return s;
}

wf_status wf_gguf_model_load(wf_model *m, wf_tokenizer *t, const uint8_t *data, size_t n) {
    stream *s = begin(t);
    if (!s) return WF_ERR(m, WF_ERR_NOMEM, "out of memory");
    wf_status st = feed(m, s, data, n);
    if (st == WF_OK) st = finish(m, s);
    stream_free(s);
    return st;
}

/* ---- the public calls: one load under way per handle ---- */

wf_status wf_model_load_begin(wf_model *m, wf_tokenizer *t) {
    if (!m) return WF_ERR_ARG;
    if (m->loading) return WF_ERR(m, WF_ERR_STATE, "a streamed load is under way on this model: end it first");
    if (!(m->loading = begin(t))) return WF_ERR(m, WF_ERR_NOMEM, "out of memory");
    m->loading_free = stream_free;
    m->err[0] = 0;
    return WF_OK;
}

wf_status wf_model_load_feed(wf_model *m, const uint8_t *data, int32_t n) {
    if (!m) return WF_ERR_ARG;
    if (!m->loading) return WF_ERR(m, WF_ERR_STATE, "no streamed load is under way (wf_model_load_begin)");
    if ((!data && n > 0) || n < 0) return WF_ERR(m, WF_ERR_ARG, "data is NULL or its length is negative");
    const wf_status st = feed(m, m->loading, data, (size_t)n);
    if (st != WF_OK) {
        stream_free(m->loading);
        m->loading = NULL;
    }
    return st;
}

wf_status wf_model_load_end(wf_model *m, int32_t done) {
    if (!m) return WF_ERR_ARG;
    stream *s = m->loading;
    if (!s) return WF_ERR(m, WF_ERR_STATE, "no streamed load is under way (wf_model_load_begin)");
    m->loading = NULL;
    const wf_status st = done ? finish(m, s) : WF_OK;
    if (st == WF_OK && !done) m->err[0] = 0;
    stream_free(s);
    return st;
}
