/* Reading a tokenizer.json, shared by its parts: tokjson.c (the JSON helpers),
 * tokjson_read.c (the whole file, wasmformer's own BPE), tokjson_steps.c (the pipeline
 * around the model: normalizer, pre-tokenizer, decoder, post-processor) and tokjson_model.c
 * (the BPE model: vocabulary, added tokens, merges). Each reader fills r->v, refusing by name what this
 * build does not run; a failure sets the status (and r->msg) and stops. */
#ifndef WF_TOKJSON_H
#define WF_TOKJSON_H

#include "json.h"
#include "unicode.h"
#include "vocab.h"

/* The longest string a normalizer or decoder may write in place of another: it bounds how
 * much longer than the text its normalized form can be (real files write "\u2581", 3 bytes). */
#define MAX_STEP_STRING 16

typedef struct {
    wf_json j;
    wf_vocab *v;
    size_t pool_cap;
    uint8_t *scratch; /* a decoded string */
    size_t scratch_cap;
    int32_t *merges;  /* [n_merges][3]: left, right, merged; in file order */
    int32_t n_merges, n_model; /* the model's vocabulary: its strings' ids */
    int nomem;        /* pool_put failed */
    char *msg;
    size_t cap;
} wf_tj_reader;

static inline const wf_jnode *node(const wf_tj_reader *r, int32_t x) { return &r->j.nodes[x]; }

/* ---- tokjson.c: the JSON of the file; a helper given a failed status returns at once ---- */
/* Member key of object x: its node, -1 if absent or null. Duplicates are refused. */
int32_t wf_tj_member(wf_tj_reader *r, int32_t x, const char *key, wf_status *s);
/* A string node decoded into r->scratch; its length, or -1 (status set). */
int32_t wf_tj_text(wf_tj_reader *r, int32_t x, const char *what, wf_status *s);
/* Bytes into the vocabulary's pool; on out of memory an empty span and r->nomem. */
wf_span wf_tj_pool_put(wf_tj_reader *r, const uint8_t *s, size_t n);
int wf_tj_is_type(wf_tj_reader *r, int32_t x, const char *type);
/* The component's "type" into buf, for messages. */
const char *wf_tj_type_name(wf_tj_reader *r, int32_t x, char *buf, size_t n);
/* A boolean member, dflt when absent; an integer member in [lo, hi], dflt when absent. */
int wf_tj_flag(wf_tj_reader *r, int32_t x, const char *key, int dflt, wf_status *s);
int64_t wf_tj_integer(wf_tj_reader *r, int32_t x, const char *key, int64_t dflt, int64_t lo, int64_t hi, wf_status *s);
/* The components of a Sequence (key names its list), or the component itself, into out[*n..]. */
int wf_tj_flatten(wf_tj_reader *r, int32_t x, const char *key, int32_t *out, int *n, wf_status *s);
/* A pattern {"String": s} into the pool (a Regex is refused; what names the component); a
 * string member into the pool (dflt when absent, NULL: required; one: a single character). */
wf_span wf_tj_pattern(wf_tj_reader *r, int32_t x, const char *what, wf_status *s);
wf_span wf_tj_string(wf_tj_reader *r, int32_t x, const char *key, const char *dflt, int one, wf_status *s);
/* Whether a pre-tokenizer is Split with this Regex pattern, isolated, not inverted. */
int wf_tj_is_split(wf_tj_reader *r, int32_t x, const char *pattern);

/* ---- tokjson_steps.c: each reads the component at node x (-1: absent) ---- */
wf_status wf_tj_read_pre_tokenizer(wf_tj_reader *r, int32_t x);
wf_status wf_tj_read_normalizer(wf_tj_reader *r, int32_t x);
wf_status wf_tj_read_decoder(wf_tj_reader *r, int32_t x);
wf_status wf_tj_read_post_processor(wf_tj_reader *r, int32_t x);
wf_status wf_tj_normalize_added(wf_tj_reader *r);

/* ---- tokjson_model.c ---- */
/* model.vocab, the added tokens' ids and model.merges into the vocabulary (r->merges: the
 * merges in file order, for wasmformer's own BPE). */
wf_status wf_tj_read_model(wf_tj_reader *r, int32_t model, int32_t added);

#endif /* WF_TOKJSON_H */
