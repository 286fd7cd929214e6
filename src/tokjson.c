/* tokenizer.json, the Hugging Face tokenizers file: read into a vocabulary tokenizer
 * (vocab.c runs it) or, when it is wasmformer's own byte-level BPE (tokjson_write.c writes
 * it), back into BPE (docs/FORMATS.md). Reading is hardened like the other loaders: the JSON parser bounds
 * every read, every size is checked against the bytes present before allocating from it,
 * and a component this build does not run is refused with WF_ERR_UNSUPPORTED naming it,
 * never run approximately. */
#include <stdio.h>
#include <stdlib.h>

#include "json.h"
#include "tokenizer.h"

#define MAX_IDS (1 << 24) /* the config's vocab_size limit */
/* The longest string a normalizer or decoder may write in place of another: it bounds how
 * much longer than the text its normalized form can be (real files write "\u2581", 3 bytes). */
#define MAX_STEP_STRING 16

/* The ByteLevel pre-tokenizer's pattern, which the Split pre-tokenizer may also name. */
static const char GPT2_PATTERN[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/* ---- reading ---- */

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
} reader;

static const wf_jnode *node(const reader *r, int32_t x) { return &r->j.nodes[x]; }

/* Member key of object x: its node, -1 if absent or null. Duplicates are refused. */
static int32_t member(reader *r, int32_t x, const char *key, wf_status *s) {
    if (*s != WF_OK) return -1;
    const int32_t m = wf_json_get(&r->j, x, key);
    if (m == -2) *s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: \"%s\" appears twice in one object", key);
    return m >= 0 && node(r, m)->type != WF_J_NULL ? m : -1;
}

/* A string node decoded into the scratch buffer; its length, or -1 (status set). */
static int32_t text_of(reader *r, int32_t x, const char *what, wf_status *s) {
    if (*s != WF_OK) return -1;
    if (x < 0 || node(r, x)->type != WF_J_STR) {
        *s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: %s must be a string", what);
        return -1;
    }
    /* decoding never lengthens a JSON string */
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
static wf_span pool_put(reader *r, const uint8_t *s, size_t n) {
    wf_vocab *v = r->v;
    if (v->pool_n + n > r->pool_cap) {
        size_t c = 2 * r->pool_cap + n;
        uint8_t *p = c < UINT32_MAX ? realloc(v->pool, c) : NULL;
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

static int is_type(reader *r, int32_t x, const char *type) {
    const int32_t t = wf_json_get(&r->j, x, "type");
    return t >= 0 && wf_json_is(&r->j, t, type);
}

/* The component's "type", for messages. */
static const char *type_name(reader *r, int32_t x, char *buf, size_t n) {
    const int32_t t = x >= 0 && node(r, x)->type == WF_J_OBJ ? wf_json_get(&r->j, x, "type") : -1;
    if (t < 0 || node(r, t)->type != WF_J_STR || wf_json_str(&r->j, t, buf, n) < 0) snprintf(buf, n, "(without a type)");
    return buf;
}

static int flag(reader *r, int32_t x, const char *key, int dflt, wf_status *s) {
    const int32_t m = member(r, x, key, s);
    if (m < 0) return dflt;
    if (node(r, m)->type != WF_J_BOOL) {
        if (*s == WF_OK) *s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: \"%s\" must be true or false", key);
        return dflt;
    }
    return node(r, m)->boolean;
}

/* An integer member in [lo, hi]; dflt when absent. */
static int64_t integer(reader *r, int32_t x, const char *key, int64_t dflt, int64_t lo, int64_t hi, wf_status *s) {
    const int32_t m = member(r, x, key, s);
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
static int flatten(reader *r, int32_t x, const char *key, int32_t *out, int *n, wf_status *s) {
    if (*s != WF_OK) return 0;
    if (node(r, x)->type != WF_J_OBJ) {
        *s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: a %s must be an object", key);
        return 0;
    }
    if (!is_type(r, x, "Sequence")) {
        if (*n == WF_VOCAB_STEPS) {
            *s = wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: more than %d %s in a sequence", WF_VOCAB_STEPS, key);
            return 0;
        }
        out[(*n)++] = x;
        return 1;
    }
    const int32_t list = member(r, x, key, s);
    if (list < 0 || node(r, list)->type != WF_J_ARR) {
        if (*s == WF_OK) *s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: a Sequence needs its \"%s\" list", key);
        return 0;
    }
    for (int32_t c = node(r, list)->first; c >= 0 && *s == WF_OK; c = node(r, c)->next) flatten(r, c, key, out, n, s);
    return *s == WF_OK;
}

/* A pattern {"String": s} into the pool; a Regex is refused (what names the component). */
static wf_span string_pattern(reader *r, int32_t x, const char *what, wf_status *s) {
    const int32_t p = member(r, x, "pattern", s);
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
    const int32_t len = text_of(r, wf_json_get(&r->j, p, "String"), "a pattern's \"String\"", s);
    if (*s == WF_OK && len == 0) *s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: the %s's pattern is empty", what);
    if (*s == WF_OK && len > MAX_STEP_STRING)
        *s = wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the %s's pattern is %d bytes; this build takes at most %d",
                     what, len, MAX_STEP_STRING);
    if (*s == WF_OK) sp = pool_put(r, r->scratch, (size_t)len);
    return sp;
}

/* A string member into the pool (one character when one is set). */
static wf_span string_member(reader *r, int32_t x, const char *key, const char *dflt, int one, wf_status *s) {
    wf_span sp = {0, 0};
    const int32_t m = member(r, x, key, s);
    if (*s != WF_OK) return sp;
    if (m < 0) {
        if (!dflt) {
            *s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: \"%s\" is missing", key);
            return sp;
        }
        return pool_put(r, (const uint8_t *)dflt, strlen(dflt));
    }
    const int32_t len = text_of(r, m, key, s);
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
    return pool_put(r, r->scratch, (size_t)len);
}

static int prepend_scheme(reader *r, int32_t x, wf_status *s) {
    const int32_t m = member(r, x, "prepend_scheme", s);
    if (m < 0) return flag(r, x, "add_prefix_space", 1, s) ? WF_META_ALWAYS : WF_META_NEVER;
    static const char *const names[] = {"always", "first", "never"};
    for (int i = 0; i < 3; i++)
        if (wf_json_is(&r->j, m, names[i])) return WF_META_ALWAYS + i;
    if (*s == WF_OK) *s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: prepend_scheme must be always, first or never");
    return 0;
}

static wf_status read_normalizer(reader *r, int32_t x) {
    wf_status s = WF_OK;
    int32_t parts[WF_VOCAB_STEPS];
    int n = 0;
    char t[64];
    if (x < 0 || !flatten(r, x, "normalizers", parts, &n, &s)) return s;
    for (int i = 0; i < n && s == WF_OK; i++) {
        wf_vocab_step *st = &r->v->norm[r->v->n_norm++];
        if (is_type(r, parts[i], "Prepend")) {
            st->op = WF_NORM_PREPEND;
            st->a = string_member(r, parts[i], "prepend", NULL, 0, &s);
        } else if (is_type(r, parts[i], "Replace")) {
            st->op = WF_NORM_REPLACE;
            st->a = string_pattern(r, parts[i], "Replace normalizer", &s);
            st->b = string_member(r, parts[i], "content", NULL, 0, &s);
        } else {
            return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the normalizer %s is not supported; this build "
                           "runs Prepend and Replace (with a String pattern)", type_name(r, parts[i], t, sizeof t));
        }
    }
    return s;
}

/* Whether a pre-tokenizer is Split with this pattern, isolated, not inverted. */
static int is_split(reader *r, int32_t x, const char *pattern) {
    if (!is_type(r, x, "Split")) return 0;
    const int32_t p = wf_json_get(&r->j, x, "pattern"), b = wf_json_get(&r->j, x, "behavior"), inv = wf_json_get(&r->j, x, "invert");
    if (p < 0 || node(r, p)->type != WF_J_OBJ || b < 0 || !wf_json_is(&r->j, b, "Isolated")) return 0;
    if (inv >= 0 && !(node(r, inv)->type == WF_J_BOOL && !node(r, inv)->boolean)) return 0;
    const int32_t re = wf_json_get(&r->j, p, "Regex");
    wf_status s = WF_OK;
    const int32_t len = re >= 0 ? text_of(r, re, "a Regex", &s) : -1;
    return s == WF_OK && len >= 0 && (size_t)len == strlen(pattern) && !memcmp(r->scratch, pattern, (size_t)len);
}

static wf_status read_pre_tokenizer(reader *r, int32_t x) {
    wf_status s = WF_OK;
    int32_t parts[WF_VOCAB_STEPS];
    int n = 0;
    char t[64];
    wf_vocab *v = r->v;
    v->family = WF_VOCAB_CHARS;
    if (x < 0 || !flatten(r, x, "pretokenizers", parts, &n, &s)) return s;
    for (int i = 0; i < n && s == WF_OK; i++) {
        const int32_t p = parts[i];
        if (v->family == WF_VOCAB_BYTES)
            return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the pre-tokenizer %s comes after ByteLevel, "
                           "where it would see byte-level characters; this build runs splits before it",
                           type_name(r, p, t, sizeof t));
        if (is_type(r, p, "ByteLevel")) {
            v->family = WF_VOCAB_BYTES;
            v->prefix_space = flag(r, p, "add_prefix_space", 0, &s);
            if (v->prefix_space && i > 0)
                return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: ByteLevel with add_prefix_space after "
                               "another pre-tokenizer (a space for each of its pieces) is not supported");
            if (flag(r, p, "use_regex", 1, &s)) v->split[v->n_split++] = WF_SPLIT_GPT2;
        } else if (is_type(r, p, "Digits")) {
            v->split[v->n_split++] = flag(r, p, "individual_digits", 0, &s) ? WF_SPLIT_DIGIT : WF_SPLIT_DIGITS;
        } else if (is_type(r, p, "Split") && is_split(r, p, GPT2_PATTERN)) {
            v->split[v->n_split++] = WF_SPLIT_GPT2;
        } else if (is_type(r, p, "Metaspace")) {
            if (i > 0) return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: Metaspace after another pre-tokenizer is not supported");
            v->meta_rep = string_member(r, p, "replacement", "\xE2\x96\x81", 1, &s);
            v->meta = prepend_scheme(r, p, &s);
            if (flag(r, p, "split", 1, &s) && s == WF_OK)
                return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: Metaspace with \"split\": true (a word at "
                               "each space) is not supported; this build runs split: false, as Llama's tokenizers have it");
        } else if (is_type(r, p, "Split")) {
            return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the pre-tokenizer Split with this pattern is not "
                           "supported; this build runs GPT-2's pattern (isolated, not inverted) and wasmformer's own");
        } else {
            return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the pre-tokenizer %s is not supported; this build "
                           "runs ByteLevel, Digits, Metaspace and Split with GPT-2's pattern", type_name(r, p, t, sizeof t));
        }
    }
    if (v->meta && v->family == WF_VOCAB_BYTES)
        return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: Metaspace and ByteLevel together are not supported");
    return s;
}

static wf_status read_decoder(reader *r, int32_t x) {
    wf_status s = WF_OK;
    int32_t parts[WF_VOCAB_STEPS];
    int n = 0, fused = 0, fallback = 0;
    char t[64];
    wf_vocab *v = r->v;
    if (x < 0) {
        v->dec_join = 1; /* the libraries join the tokens with spaces */
        return WF_OK;
    }
    if (!flatten(r, x, "decoders", parts, &n, &s)) return s;
    for (int i = 0; i < n && s == WF_OK; i++) {
        const int32_t p = parts[i];
        const char *name = type_name(r, p, t, sizeof t);
        if (fused && !is_type(r, p, "Strip"))
            return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the decoder %s after Fuse is not supported", name);
        if (fallback && !fused && !is_type(r, p, "Fuse"))
            return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the decoder %s after ByteFallback (which joins "
                           "byte runs) is not supported", name);
        if (is_type(r, p, "Fuse")) {
            fused = 1;
            continue;
        }
        if (is_type(r, p, "Strip") && fused) {
            if (v->strip.len)
                return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: two Strip decoders after Fuse are not supported");
            v->strip = string_member(r, p, "content", NULL, 1, &s);
            v->strip_start = (int32_t)integer(r, p, "start", 0, 0, 1 << 20, &s);
            v->strip_stop = (int32_t)integer(r, p, "stop", 0, 0, 1 << 20, &s);
            continue;
        }
        wf_vocab_step *st = &v->dec_steps[v->n_dec++];
        if (is_type(r, p, "Replace")) {
            st->op = WF_DEC_REPLACE;
            st->a = string_pattern(r, p, "Replace decoder", &s);
            st->b = string_member(r, p, "content", NULL, 0, &s);
        } else if (is_type(r, p, "ByteFallback")) {
            st->op = WF_DEC_BYTEFALLBACK;
            fallback = 1;
        } else if (is_type(r, p, "ByteLevel")) {
            if (n > 1)
                return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the ByteLevel decoder in a sequence is not supported");
            st->op = WF_DEC_BYTELEVEL;
        } else if (is_type(r, p, "Strip")) {
            st->op = WF_DEC_STRIP;
            st->a = string_member(r, p, "content", NULL, 1, &s);
            st->start = (int32_t)integer(r, p, "start", 0, 0, 1 << 20, &s);
            st->stop = (int32_t)integer(r, p, "stop", 0, 0, 1 << 20, &s);
        } else if (is_type(r, p, "Metaspace")) {
            st->op = WF_DEC_METASPACE;
            st->a = string_member(r, p, "replacement", "\xE2\x96\x81", 1, &s);
            st->start = prepend_scheme(r, p, &s) != WF_META_NEVER; /* the first token drops them */
            v->dec_first |= st->start;
        } else {
            return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the decoder %s is not supported; this build runs "
                           "ByteLevel, Replace, ByteFallback, Fuse, Strip and Metaspace", name);
        }
    }
    return s;
}

/* The post-processor is not run (encoding adds no special tokens); its template's leading
 * special token is the tokenizer's bos. */
static wf_status read_post_processor(reader *r, int32_t x) {
    wf_status s = WF_OK;
    int32_t parts[WF_VOCAB_STEPS];
    int n = 0;
    char t[64];
    if (x < 0 || !flatten(r, x, "processors", parts, &n, &s)) return s;
    for (int i = 0; i < n && s == WF_OK; i++) {
        if (is_type(r, parts[i], "ByteLevel")) continue;
        if (!is_type(r, parts[i], "TemplateProcessing"))
            return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the post-processor %s is not supported; this "
                           "build reads ByteLevel and TemplateProcessing", type_name(r, parts[i], t, sizeof t));
        const int32_t single = member(r, parts[i], "single", &s), specials = member(r, parts[i], "special_tokens", &s);
        if (s != WF_OK || single < 0 || node(r, single)->type != WF_J_ARR || node(r, single)->first < 0) continue;
        const int32_t first = node(r, single)->first;
        const int32_t sp = node(r, first)->type == WF_J_OBJ ? wf_json_get(&r->j, first, "SpecialToken") : -1;
        if (sp < 0 || node(r, sp)->type != WF_J_OBJ || specials < 0 || node(r, specials)->type != WF_J_OBJ) continue;
        const int32_t name = wf_json_get(&r->j, sp, "id");
        const int32_t len = text_of(r, name, "a SpecialToken's id", &s);
        if (s != WF_OK) return s;
        for (int32_t c = node(r, specials)->first; c >= 0; c = node(r, c)->next) {
            char key[256];
            if (wf_json_str(&r->j, node(r, c)->key, key, sizeof key) != len || memcmp(key, r->scratch, (size_t)len)) continue;
            const int32_t ids = node(r, c)->type == WF_J_OBJ ? wf_json_get(&r->j, c, "ids") : -1;
            const int32_t one = ids >= 0 && node(r, ids)->type == WF_J_ARR ? node(r, ids)->first : -1;
            if (one >= 0 && node(r, one)->next < 0 && node(r, one)->type == WF_J_NUM && node(r, one)->is_int &&
                node(r, one)->ival >= 0 && node(r, one)->ival < r->v->n)
                r->v->bos = (int32_t)node(r, one)->ival;
            else
                return wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: the template's special token \"%s\" needs one id "
                               "in [0, %d)", key, r->v->n);
        }
    }
    return s;
}

/* model.vocab, the added tokens' ids and model.merges into the vocabulary. */
static wf_status read_model(reader *r, int32_t model, int32_t added) {
    wf_status s = WF_OK;
    wf_vocab *v = r->v;
    char t[64];
    if (model < 0 || node(r, model)->type != WF_J_OBJ || wf_json_get(&r->j, model, "type") < 0)
        return wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: \"model\" is missing, not an object or without a type");
    if (!is_type(r, model, "BPE")) {
        return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the model %s is not supported; this build runs BPE",
                       type_name(r, model, t, sizeof t));
    }
    const int32_t dropout = member(r, model, "dropout", &s);
    if (dropout >= 0 && !(node(r, dropout)->type == WF_J_NUM && node(r, dropout)->num == 0))
        return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: BPE dropout (random merges) is not supported");
    static const char *const affixes[] = {"continuing_subword_prefix", "end_of_word_suffix", "continuing_subword_suffix"};
    for (int i = 0; i < 3; i++) {
        const int32_t a = member(r, model, affixes[i], &s);
        if (a >= 0 && !wf_json_is(&r->j, a, ""))
            return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the BPE model's %s is not supported", affixes[i]);
    }
    v->byte_fallback = flag(r, model, "byte_fallback", 0, &s);
    v->fuse_unk = flag(r, model, "fuse_unk", 0, &s);
    v->ignore_merges = flag(r, model, "ignore_merges", 0, &s);
    const int32_t vocab = member(r, model, "vocab", &s), merges = member(r, model, "merges", &s);
    if (s != WF_OK) return s;
    if (vocab < 0 || node(r, vocab)->type != WF_J_OBJ)
        return wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: model.vocab is missing or not an object");
    if (merges >= 0 && node(r, merges)->type != WF_J_ARR)
        return wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: model.merges is not a list");
    if (added >= 0 && node(r, added)->type != WF_J_ARR)
        return wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: added_tokens is not a list");
    /* the ids: every one in [0, V) names one string, from the vocabulary or an added token */
    int64_t V = 0, count = 0;
    for (int32_t c = node(r, vocab)->first; c >= 0; c = node(r, c)->next, count++) {
        const wf_jnode *x = node(r, c);
        if (x->type != WF_J_NUM || !x->is_int || x->ival < 0 || x->ival >= MAX_IDS) {
            wf_json_str(&r->j, x->key, t, sizeof t);
            return wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: the vocabulary's \"%s\" has no id in [0, %d)", t, MAX_IDS);
        }
        if (x->ival + 1 > V) V = x->ival + 1;
    }
    int32_t n_added = 0;
    for (int32_t c = added >= 0 ? node(r, added)->first : -1; c >= 0; c = node(r, c)->next, n_added++) {
        const int64_t id = node(r, c)->type == WF_J_OBJ ? integer(r, c, "id", -1, 0, MAX_IDS - 1, &s) : -1;
        if (s != WF_OK) return s;
        if (id < 0) return wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: added token %d has no \"id\"", n_added);
        if (id + 1 > V) V = id + 1;
    }
    /* a hostile id (2^24 - 1 in a small file) must not size the tables: ids without a gap
     * are no more than the tokens the file holds */
    if (V > count + n_added)
        return wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: the ids run to %lld but the file has %lld tokens: "
                       "some id has no token (the ids must run from 0 without a gap)", (long long)V - 1, (long long)(count + n_added));
    v->n = (int32_t)V;
    r->n_model = (int32_t)count;
    v->tok = calloc((size_t)(V ? V : 1), sizeof(wf_span));
    v->added = malloc((size_t)(n_added ? n_added : 1) * sizeof(wf_added));
    uint8_t *have = calloc((size_t)(V ? V : 1), 1);
    if (!v->tok || !v->added || !have) {
        free(have);
        return wf_fail(r->msg, r->cap, WF_ERR_NOMEM, "out of memory reading a vocabulary of %lld tokens", (long long)V);
    }
    for (int32_t c = node(r, vocab)->first; c >= 0 && s == WF_OK; c = node(r, c)->next) {
        const int32_t id = (int32_t)node(r, c)->ival, len = text_of(r, node(r, c)->key, "a token", &s);
        if (s != WF_OK) break;
        if (have[id]) s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: id %d is in the vocabulary twice", id);
        else if (len == 0) s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: the vocabulary has an empty token (id %d)", id);
        have[id] = 1;
        if (s == WF_OK) v->tok[id] = pool_put(r, r->scratch, (size_t)len);
    }
    /* added tokens: a new id takes the content as its string; a vocabulary id must have it */
    for (int32_t c = added >= 0 ? node(r, added)->first : -1; c >= 0 && s == WF_OK; c = node(r, c)->next) {
        wf_added *a = &v->added[v->n_added];
        a->id = (int32_t)integer(r, c, "id", 0, 0, MAX_IDS - 1, &s);
        const int32_t len = text_of(r, member(r, c, "content", &s), "an added token's content", &s);
        if (s != WF_OK) break;
        if (len == 0) s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: added token %d is empty", a->id);
        static const char *const opts[] = {"single_word", "lstrip", "rstrip"};
        for (int i = 0; i < 3 && s == WF_OK; i++)
            if (flag(r, c, opts[i], 0, &s))
                s = wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: added token %d has %s: true, which is not supported",
                            a->id, opts[i]);
        const int special = flag(r, c, "special", 0, &s);
        a->normalized = flag(r, c, "normalized", !special, &s);
        if (s != WF_OK) break;
        const wf_span content = pool_put(r, r->scratch, (size_t)len);
        if (!have[a->id]) {
            v->tok[a->id] = content;
            have[a->id] = 2;
        } else if (v->tok[a->id].len != content.len || memcmp(v->pool + v->tok[a->id].off, v->pool + content.off, content.len)) {
            s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: added token %d is \"%.*s\" but that id is another token "
                        "in the vocabulary", a->id, len > 40 ? 40 : len, (const char *)r->scratch);
        }
        a->match = content;
        v->n_added++;
    }
    for (int64_t id = 0; id < V && s == WF_OK; id++)
        if (!have[id]) s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: id %lld has no token (the ids must run from 0 "
                                   "to %lld without a gap)", (long long)id, (long long)V - 1);
    free(have);
    if (s != WF_OK) return s;
    if ((s = wf_vocab_index(v, r->msg, r->cap)) != WF_OK) return s;
    /* the same string under two ids: the libraries keep one of them */
    for (int32_t id = 0; id < v->n; id++) {
        const int32_t first = wf_vocab_find(v, v->pool + v->tok[id].off, v->tok[id].len);
        if (first != id) {
            const int32_t len = (int32_t)v->tok[id].len;
            return wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: ids %d and %d are the same token \"%.*s\"", first, id,
                           len > 40 ? 40 : len, (const char *)v->pool + v->tok[id].off);
        }
    }
    const int32_t unk = member(r, model, "unk_token", &s);
    v->unk = -1;
    if (unk >= 0) {
        const int32_t len = text_of(r, unk, "unk_token", &s);
        if (s != WF_OK) return s;
        v->unk = wf_vocab_find(v, r->scratch, (size_t)len);
        if (v->unk < 0) return wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: unk_token \"%.*s\" is not in the vocabulary",
                                       len > 40 ? 40 : len, (const char *)r->scratch);
    }
    /* merges: "left right" or ["left", "right"]; both parts and their join must be tokens */
    int32_t nm = 0;
    for (int32_t c = merges >= 0 ? node(r, merges)->first : -1; c >= 0; c = node(r, c)->next) nm++;
    r->merges = malloc((size_t)(nm ? nm : 1) * 3 * sizeof(int32_t));
    if (!r->merges || !wf_vocab_merges_alloc(v, nm))
        return wf_fail(r->msg, r->cap, WF_ERR_NOMEM, "out of memory reading %d merges", nm);
    int32_t k = 0;
    for (int32_t c = merges >= 0 ? node(r, merges)->first : -1; c >= 0; c = node(r, c)->next, k++) {
        int32_t part[2], len;
        size_t cut;
        const uint8_t *sc;
        if (node(r, c)->type == WF_J_ARR) {
            const int32_t a = node(r, c)->first, b = a >= 0 ? node(r, a)->next : -1;
            if (b < 0 || node(r, b)->next >= 0)
                return wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: merge %d is not a pair of tokens", k);
            for (int i = 0; i < 2; i++) {
                len = text_of(r, i ? b : a, "a merge's token", &s);
                if (s != WF_OK) return s;
                part[i] = wf_vocab_find(v, r->scratch, (size_t)len);
                if (part[i] < 0)
                    return wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: merge %d: \"%.*s\" is not in the vocabulary", k,
                                   len > 40 ? 40 : len, (const char *)r->scratch);
            }
        } else {
            len = text_of(r, c, "a merge", &s);
            if (s != WF_OK) return s;
            sc = r->scratch;
            const uint8_t *sp = memchr(sc, ' ', (size_t)len);
            if (!sp || memchr(sp + 1, ' ', (size_t)len - (size_t)(sp + 1 - sc)))
                return wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: merge %d \"%.*s\" is not two tokens and one space", k,
                               len > 40 ? 40 : len, (const char *)sc);
            cut = (size_t)(sp - sc);
            part[0] = wf_vocab_find(v, sc, cut);
            part[1] = wf_vocab_find(v, sp + 1, (size_t)len - cut - 1);
            if (part[0] < 0 || part[1] < 0)
                return wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: merge %d \"%.*s\": \"%.*s\" is not in the vocabulary", k,
                               len > 40 ? 40 : len, (const char *)sc, (int)(part[0] < 0 ? cut : (size_t)len - cut - 1),
                               (const char *)(part[0] < 0 ? sc : sp + 1));
        }
        const wf_span ta = v->tok[part[0]], tb = v->tok[part[1]];
        const int32_t merged = wf_vocab_find2(v, v->pool + ta.off, ta.len, v->pool + tb.off, tb.len);
        if (merged < 0)
            return wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: merge %d makes a token that is not in the vocabulary", k);
        r->merges[3 * k] = part[0];
        r->merges[3 * k + 1] = part[1];
        r->merges[3 * k + 2] = merged;
        wf_vocab_merge_put(v, part[0], part[1], k, merged);
    }
    r->n_merges = nm;
    return WF_OK;
}

/* wasmformer's own tokenizer.json (as wf_tokjson_write_bpe writes it), or -1 if the
 * pre-tokenizer is another; WF_ERR_UNSUPPORTED when wasmformer's pre-tokenizer comes with
 * anything else. On WF_OK, out holds the BPE. */
static int own_bpe(reader *r, int32_t root, wf_tokenizer *out, wf_status *s) {
    const int32_t pre = wf_json_get(&r->j, root, "pre_tokenizer");
    if (pre < 0 || node(r, pre)->type != WF_J_OBJ || !is_type(r, pre, "Sequence")) return 0;
    const int32_t list = wf_json_get(&r->j, pre, "pretokenizers");
    if (list < 0 || node(r, list)->type != WF_J_ARR) return 0;
    int32_t p[4] = {-1, -1, -1, -1}, n = 0;
    for (int32_t c = node(r, list)->first; c >= 0 && n < 4; c = node(r, c)->next) p[n++] = c;
    char *chunks = wf_tokjson_pattern(0), *cut = wf_tokjson_pattern(1);
    if (!chunks || !cut) {
        free(chunks);
        free(cut);
        *s = wf_fail(r->msg, r->cap, WF_ERR_NOMEM, "out of memory reading tokenizer.json");
        return 1;
    }
    const int ours = n == 3 && is_split(r, p[1], chunks) && is_split(r, p[2], cut);
    free(chunks);
    free(cut);
    if (!ours) return 0;
    const wf_vocab *v = r->v;
    wf_status st = WF_OK;
    int ok = v->family == WF_VOCAB_BYTES && is_type(r, p[0], "ByteLevel") && !flag(r, p[0], "add_prefix_space", 0, &st) &&
             !flag(r, p[0], "use_regex", 1, &st) && v->n_added == 0 && v->unk < 0 && !v->byte_fallback && !v->ignore_merges &&
             wf_json_get(&r->j, root, "normalizer") >= 0 && node(r, wf_json_get(&r->j, root, "normalizer"))->type == WF_J_NULL &&
             v->n == 256 + r->n_merges && st == WF_OK;
    const int32_t dec = wf_json_get(&r->j, root, "decoder");
    ok = ok && dec >= 0 && node(r, dec)->type == WF_J_OBJ && is_type(r, dec, "ByteLevel");
    for (int b = 0; b < 256 && ok; b++) ok = v->char_id[b] == b;
    int32_t *merges = malloc((size_t)(r->n_merges ? r->n_merges : 1) * 2 * sizeof(int32_t));
    if (!merges) {
        *s = wf_fail(r->msg, r->cap, WF_ERR_NOMEM, "out of memory reading tokenizer.json");
        return 1;
    }
    for (int32_t k = 0; k < r->n_merges && ok; k++) {
        merges[2 * k] = r->merges[3 * k];
        merges[2 * k + 1] = r->merges[3 * k + 1];
        ok = r->merges[3 * k + 2] == 256 + k; /* wf_bpe_build checks the rest */
    }
    if (!ok) {
        free(merges);
        *s = wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: wasmformer's pre-tokenizer goes with wasmformer's BPE "
                     "as it writes it (the 256 bytes as ids 0..255, merge k as id 256 + k, no added tokens, no normalizer, the "
                     "ByteLevel decoder); this file changes that");
        return 1;
    }
    char why[160];
    st = wf_bpe_build(&out->bpe, merges, r->n_merges, why, sizeof why);
    if (st != WF_OK) *s = wf_fail(r->msg, r->cap, st, "tokenizer.json: %s", why);
    else out->kind = WF_TOKENIZER_BPE;
    return 1;
}

wf_status wf_tokjson_parse(const uint8_t *data, size_t n, wf_tokenizer *out, char *msg, size_t cap) {
    reader r = {.msg = msg, .cap = cap, .v = &out->voc};
    wf_vocab *v = &out->voc;
    wf_status s = wf_json_parse(&r.j, (const char *)data, n, "tokenizer.json", msg, cap);
    if (s == WF_OK && r.j.nodes[0].type != WF_J_OBJ) s = wf_fail(msg, cap, WF_ERR_FORMAT, "tokenizer.json is not a JSON object");
    /* every string the vocabulary keeps is decoded from the file: at most its size */
    if (s == WF_OK && !(v->pool = malloc(n + 64))) s = wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory reading tokenizer.json");
    r.pool_cap = n + 64;
    v->bos = -1;
    const int32_t root = 0;
    int32_t pre = -1, model = -1, added = -1;
    if (s == WF_OK) {
        pre = member(&r, root, "pre_tokenizer", &s);
        model = member(&r, root, "model", &s);
        added = member(&r, root, "added_tokens", &s);
    }
    if (s == WF_OK) {
        /* the family first: merges and the vocabulary's byte characters depend on it */
        v->family = WF_VOCAB_CHARS;
        int32_t parts[WF_VOCAB_STEPS];
        int np = 0;
        wf_status ps = WF_OK;
        if (pre >= 0 && flatten(&r, pre, "pretokenizers", parts, &np, &ps))
            for (int i = 0; i < np; i++)
                if (is_type(&r, parts[i], "ByteLevel")) v->family = WF_VOCAB_BYTES;
        s = read_model(&r, model, added);
        if (s == WF_OK && r.nomem) s = wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory reading tokenizer.json");
    }
    if (s == WF_OK && !own_bpe(&r, root, out, &s)) {
        const int fam = v->family;
        s = read_pre_tokenizer(&r, pre);
        if (s == WF_OK && v->family != fam) s = wf_fail(msg, cap, WF_ERR_FORMAT, "tokenizer.json: the pre-tokenizer is inconsistent");
        if (s == WF_OK) s = read_normalizer(&r, member(&r, root, "normalizer", &s));
        if (s == WF_OK) s = read_decoder(&r, member(&r, root, "decoder", &s));
        if (s == WF_OK) s = read_post_processor(&r, member(&r, root, "post_processor", &s));
        /* normalized added tokens match the normalized text: their content goes through the normalizer */
        for (int32_t i = 0; i < v->n_added && s == WF_OK && v->n_norm; i++) {
            wf_added *a = &v->added[i];
            if (!a->normalized) continue;
            uint8_t *text = malloc(a->match.len), *prev;
            size_t len = a->match.len;
            if (!text) {
                s = wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory reading tokenizer.json");
                break;
            }
            memcpy(text, v->pool + a->match.off, len);
            for (int k = 0; k < v->n_norm && text; k++) {
                const wf_vocab_step *st = &v->norm[k];
                const uint8_t *pa = v->pool + st->a.off, *pb = v->pool + st->b.off;
                size_t most = st->op == WF_NORM_PREPEND ? len + st->a.len : len * (st->b.len > st->a.len ? st->b.len : 1) + 1, o = 0;
                prev = text;
                text = malloc(most);
                if (!text) {
                    free(prev);
                    break;
                }
                if (st->op == WF_NORM_PREPEND) {
                    memcpy(text, pa, st->a.len);
                    memcpy(text + st->a.len, prev, len);
                    o = st->a.len + len;
                } else {
                    for (size_t i2 = 0; i2 < len;) {
                        if (len - i2 >= st->a.len && !memcmp(prev + i2, pa, st->a.len)) {
                            memcpy(text + o, pb, st->b.len);
                            o += st->b.len;
                            i2 += st->a.len;
                        } else {
                            text[o++] = prev[i2++];
                        }
                    }
                }
                free(prev);
                len = o;
            }
            if (!text) {
                s = wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory reading tokenizer.json");
                break;
            }
            a->match = pool_put(&r, text, len);
            free(text);
        }
        if (s == WF_OK && r.nomem) s = wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory reading tokenizer.json");
        if (s == WF_OK) s = wf_vocab_finish(v, msg, cap);
        if (s == WF_OK) {
            if (!(v->src = malloc(n ? n : 1))) s = wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory keeping tokenizer.json");
            else {
                memcpy(v->src, data, n);
                v->src_n = (int32_t)n;
                out->kind = WF_TOKENIZER_HF;
            }
        }
    }
    if (out->kind == WF_TOKENIZER_BPE) wf_vocab_release(v);
    free(r.j.nodes);
    free(r.scratch);
    free(r.merges);
    if (s != WF_OK) wf_tokenizer_clear(out);
    return s;
}
