/* tokenizer.json, the Hugging Face tokenizers file: read into a vocabulary tokenizer
 * (vocab.c runs it) or, when it is wasmformer's own byte-level BPE (tokjson_write.c writes
 * it), back into BPE (docs/FORMATS.md). Reading is hardened like the other loaders: the JSON
 * parser bounds every read, every size is checked against the bytes present before
 * allocating from it, and a component this build does not run is refused with
 * WF_ERR_UNSUPPORTED naming it, never run approximately. This file: the JSON helpers the
 * readers share (tokjson.h); the whole file is read in tokjson_read.c, the pipeline's
 * components in tokjson_steps.c, the model in tokjson_model.c. */
#include <stdio.h>
#include <stdlib.h>

#include "tokjson.h"

/* Member key of object x: its node, -1 if absent or null. Duplicates are refused. */
int32_t wf_tj_member(wf_tj_reader *r, int32_t x, const char *key, wf_status *s) {
    if (*s != WF_OK) return -1;
    const int32_t m = wf_json_get(&r->j, x, key);
    if (m == -2) *s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: \"%s\" appears twice in one object", key);
    return m >= 0 && node(r, m)->type != WF_J_NULL ? m : -1;
}

/* A string node decoded into the scratch buffer; its length, or -1 (status set). */
int32_t wf_tj_text(wf_tj_reader *r, int32_t x, const char *what, wf_status *s) {
    if (*s != WF_OK) return -1;
    if (x < 0 || node(r, x)->type != WF_J_STR) {
        *s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: %s must be a string", what);
        return -1;
    }
    /* decoding never lengthens a JSON string (len < the file's size, so len + 1 fits) */
    if (node(r, x)->len + 1 > r->scratch_cap) {
        uint8_t *p = realloc(r->scratch, node(r, x)->len + 1);
        if (!p) {
            *s = wf_fail(r->msg, r->cap, WF_ERR_NOMEM, "out of memory reading tokenizer.json");
            return -1;
        }
        r->scratch = p;
        r->scratch_cap = node(r, x)->len + 1;
    }
    return wf_json_str(&r->j, x, (char *)r->scratch, r->scratch_cap);
}

/* Bytes into the vocabulary's pool (sized from the file, so it rarely grows); on out of
 * memory an empty span and r->nomem. */
wf_span wf_tj_pool_put(wf_tj_reader *r, const uint8_t *s, size_t n) {
    wf_vocab *v = r->v;
    size_t need, c;
    if (!wf_add_ok(v->pool_n, n, &need) || need > UINT32_MAX) { /* spans are 32-bit offsets */
        r->nomem = 1;
        return (wf_span){0, 0};
    }
    if (need > r->pool_cap) {
        c = wf_grow(r->pool_cap, need, 256);
        if (c > UINT32_MAX) c = need;
        uint8_t *p = c ? realloc(v->pool, c) : NULL;
        if (!p) {
            r->nomem = 1;
            return (wf_span){0, 0};
        }
        v->pool = p;
        r->pool_cap = c;
    }
    wf_span sp = {(uint32_t)v->pool_n, (uint32_t)n};
    if (n) memcpy(v->pool + v->pool_n, s, n);
    v->pool_n += n;
    return sp;
}

int wf_tj_is_type(wf_tj_reader *r, int32_t x, const char *type) {
    const int32_t t = wf_json_get(&r->j, x, "type");
    return t >= 0 && wf_json_is(&r->j, t, type);
}

/* The component's "type", for messages. */
const char *wf_tj_type_name(wf_tj_reader *r, int32_t x, char *buf, size_t n) {
    const int32_t t = x >= 0 && node(r, x)->type == WF_J_OBJ ? wf_json_get(&r->j, x, "type") : -1;
    if (t < 0 || node(r, t)->type != WF_J_STR || wf_json_str(&r->j, t, buf, n) < 0) snprintf(buf, n, "(without a type)");
    return buf;
}

int wf_tj_flag(wf_tj_reader *r, int32_t x, const char *key, int dflt, wf_status *s) {
    const int32_t m = wf_tj_member(r, x, key, s);
    if (m < 0) return dflt;
    if (node(r, m)->type != WF_J_BOOL) {
        if (*s == WF_OK) *s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: \"%s\" must be true or false", key);
        return dflt;
    }
    return node(r, m)->boolean;
}

/* An integer member in [lo, hi]; dflt when absent. */
int64_t wf_tj_integer(wf_tj_reader *r, int32_t x, const char *key, int64_t dflt, int64_t lo, int64_t hi, wf_status *s) {
    const int32_t m = wf_tj_member(r, x, key, s);
    if (m < 0) return dflt;
    if (node(r, m)->type != WF_J_NUM || !node(r, m)->is_int || node(r, m)->ival < lo || node(r, m)->ival > hi) {
        if (*s == WF_OK)
            *s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: \"%s\" must be an integer in [%lld, %lld]", key,
                         (long long)lo, (long long)hi);
        return dflt;
    }
    return node(r, m)->ival;
}

/* The components of a Sequence (key names its list), or the component itself, flattened. */
int wf_tj_flatten(wf_tj_reader *r, int32_t x, const char *key, int32_t *out, int *n, wf_status *s) {
    if (*s != WF_OK) return 0;
    if (node(r, x)->type != WF_J_OBJ) {
        *s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: a %s must be an object", key);
        return 0;
    }
    if (!wf_tj_is_type(r, x, "Sequence")) {
        if (*n == WF_VOCAB_STEPS) {
            *s = wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: more than %d %s in a sequence", WF_VOCAB_STEPS, key);
            return 0;
        }
        out[(*n)++] = x;
        return 1;
    }
    const int32_t list = wf_tj_member(r, x, key, s);
    if (list < 0 || node(r, list)->type != WF_J_ARR) {
        if (*s == WF_OK) *s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: a Sequence needs its \"%s\" list", key);
        return 0;
    }
    for (int32_t c = node(r, list)->first; c >= 0 && *s == WF_OK; c = node(r, c)->next) wf_tj_flatten(r, c, key, out, n, s);
    return *s == WF_OK;
}

/* A pattern {"String": s} into the pool; a Regex is refused (what names the component). */
wf_span wf_tj_pattern(wf_tj_reader *r, int32_t x, const char *what, wf_status *s) {
    const int32_t p = wf_tj_member(r, x, "pattern", s);
    wf_span sp = {0, 0};
    if (*s != WF_OK) return sp;
    if (p < 0 || node(r, p)->type != WF_J_OBJ) {
        *s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: the %s has no pattern", what);
        return sp;
    }
    if (wf_json_get(&r->j, p, "Regex") >= 0) {
        *s = wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the %s has a Regex pattern; this build runs String patterns", what);
        return sp;
    }
    const int32_t len = wf_tj_text(r, wf_json_get(&r->j, p, "String"), "a pattern's \"String\"", s);
    if (*s == WF_OK && len == 0) *s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: the %s's pattern is empty", what);
    if (*s == WF_OK && len > MAX_STEP_STRING)
        *s = wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the %s's pattern is %d bytes; this build takes at most %d",
                     what, len, MAX_STEP_STRING);
    if (*s == WF_OK) sp = wf_tj_pool_put(r, r->scratch, (size_t)len);
    return sp;
}

/* A string member into the pool (one character when one is set). */
wf_span wf_tj_string(wf_tj_reader *r, int32_t x, const char *key, const char *dflt, int one, wf_status *s) {
    wf_span sp = {0, 0};
    const int32_t m = wf_tj_member(r, x, key, s);
    if (*s != WF_OK) return sp;
    if (m < 0) {
        if (!dflt) {
            *s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: \"%s\" is missing", key);
            return sp;
        }
        return wf_tj_pool_put(r, (const uint8_t *)dflt, strlen(dflt));
    }
    const int32_t len = wf_tj_text(r, m, key, s);
    if (*s != WF_OK) return sp;
    if (one) {
        uint32_t cp;
        if (len == 0 || wf_utf8_next(r->scratch, (size_t)len, &cp) != len) {
            *s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: \"%s\" must be one character", key);
            return sp;
        }
    }
    if (len > MAX_STEP_STRING) {
        *s = wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: \"%s\" is %d bytes; this build takes at most %d",
                     key, len, MAX_STEP_STRING);
        return sp;
    }
    return wf_tj_pool_put(r, r->scratch, (size_t)len);
}

/* Whether a pre-tokenizer is Split with this pattern, isolated, not inverted. */
int wf_tj_is_split(wf_tj_reader *r, int32_t x, const char *pattern) {
    if (!wf_tj_is_type(r, x, "Split")) return 0;
    const int32_t p = wf_json_get(&r->j, x, "pattern"), b = wf_json_get(&r->j, x, "behavior"), inv = wf_json_get(&r->j, x, "invert");
    if (p < 0 || node(r, p)->type != WF_J_OBJ || b < 0 || !wf_json_is(&r->j, b, "Isolated")) return 0;
    if (inv >= 0 && !(node(r, inv)->type == WF_J_BOOL && !node(r, inv)->boolean)) return 0;
    const int32_t re = wf_json_get(&r->j, p, "Regex");
    wf_status s = WF_OK;
    const int32_t len = re >= 0 ? wf_tj_text(r, re, "a Regex", &s) : -1;
    return s == WF_OK && len >= 0 && (size_t)len == strlen(pattern) && !memcmp(r->scratch, pattern, (size_t)len);
}
