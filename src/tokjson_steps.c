/* tokenizer.json's pipeline around the model (tokjson.h): the normalizer, the pre-tokenizer,
 * the decoder and the post-processor, each flattened from its Sequence into the vocabulary's
 * steps, and the added tokens' normalized forms. What this build does not run is refused by
 * name. */
#include <stdio.h>
#include <stdlib.h>

#include "tokjson.h"

/* The ByteLevel pre-tokenizer's pattern, which the Split pre-tokenizer may also name. */
static const char GPT2_PATTERN[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

static int prepend_scheme(wf_tj_reader *r, int32_t x, wf_status *s) {
    const int32_t m = wf_tj_member(r, x, "prepend_scheme", s);
    if (m < 0) return wf_tj_flag(r, x, "add_prefix_space", 1, s) ? WF_META_ALWAYS : WF_META_NEVER;
    static const char *const names[] = {"always", "first", "never"};
    for (int i = 0; i < 3; i++)
        if (wf_json_is(&r->j, m, names[i])) return WF_META_ALWAYS + i;
    if (*s == WF_OK) *s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: prepend_scheme must be always, first or never");
    return 0;
}

wf_status wf_tj_read_pre_tokenizer(wf_tj_reader *r, int32_t x) {
    wf_status s = WF_OK;
    int32_t parts[WF_VOCAB_STEPS];
    int n = 0;
    char t[64];
    wf_vocab *v = r->v;
    v->family = WF_VOCAB_CHARS;
    if (x < 0 || !wf_tj_flatten(r, x, "pretokenizers", parts, &n, &s)) return s;
    for (int i = 0; i < n && s == WF_OK; i++) {
        const int32_t p = parts[i];
        if (v->family == WF_VOCAB_BYTES)
            return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the pre-tokenizer %s comes after ByteLevel, "
                           "where it would see byte-level characters; this build runs splits before it",
                           wf_tj_type_name(r, p, t, sizeof t));
        if (wf_tj_is_type(r, p, "ByteLevel")) {
            v->family = WF_VOCAB_BYTES;
            v->prefix_space = wf_tj_flag(r, p, "add_prefix_space", 0, &s);
            if (v->prefix_space && i > 0)
                return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: ByteLevel with add_prefix_space after "
                               "another pre-tokenizer (a space for each of its pieces) is not supported");
            if (wf_tj_flag(r, p, "use_regex", 1, &s)) v->split[v->n_split++] = WF_SPLIT_GPT2;
        } else if (wf_tj_is_type(r, p, "Digits")) {
            v->split[v->n_split++] = wf_tj_flag(r, p, "individual_digits", 0, &s) ? WF_SPLIT_DIGIT : WF_SPLIT_DIGITS;
        } else if (wf_tj_is_type(r, p, "Split") && wf_tj_is_split(r, p, GPT2_PATTERN)) {
            v->split[v->n_split++] = WF_SPLIT_GPT2;
        } else if (wf_tj_is_type(r, p, "Metaspace")) {
            if (i > 0) return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: Metaspace after another pre-tokenizer is not supported");
            v->meta_rep = wf_tj_string(r, p, "replacement", "\xE2\x96\x81", 1, &s);
            v->meta = prepend_scheme(r, p, &s);
            if (wf_tj_flag(r, p, "split", 1, &s) && s == WF_OK)
                return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: Metaspace with \"split\": true (a word at "
                               "each space) is not supported; this build runs split: false, as Llama's tokenizers have it");
        } else if (wf_tj_is_type(r, p, "Split")) {
            return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the pre-tokenizer Split with this pattern is not "
                           "supported; this build runs GPT-2's pattern (isolated, not inverted) and wasmformer's own");
        } else {
            return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the pre-tokenizer %s is not supported; this build "
                           "runs ByteLevel, Digits, Metaspace and Split with GPT-2's pattern", wf_tj_type_name(r, p, t, sizeof t));
        }
    }
    if (v->meta && v->family == WF_VOCAB_BYTES)
        return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: Metaspace and ByteLevel together are not supported");
    return s;
}

/* A chain of steps may lengthen text by at most WF_MAX_GROWTH (tokenizer.h): the product of
 * each Replace step's content over pattern bytes, which is what a text made of its patterns
 * grows by. A chain that multiplies (7 steps each replacing "c" by 16 of them: 2^28 bytes
 * from one) is refused here, before any text meets it. */
static wf_status check_growth(wf_tj_reader *r, const wf_vocab_step *st, int n, int replace, const char *what) {
    double f = 1;
    char by[16 * WF_VOCAB_STEPS] = ""; /* "16 for 15, " per step */
    size_t o = 0;
    for (int k = 0; k < n; k++) {
        if (st[k].op != replace || st[k].b.len <= st[k].a.len) continue;
        f *= (double)st[k].b.len / st[k].a.len;
        o += (size_t)snprintf(by + o, sizeof by - o, "%s%u for %u", o ? ", " : "", st[k].b.len, st[k].a.len);
    }
    if (f <= WF_MAX_GROWTH) return WF_OK;
    return wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: the %s can make a text %.0f times longer (its Replace "
                   "steps write %s bytes); this build allows at most %d times", what, f, by, WF_MAX_GROWTH);
}

wf_status wf_tj_read_normalizer(wf_tj_reader *r, int32_t x) {
    wf_status s = WF_OK;
    int32_t parts[WF_VOCAB_STEPS];
    int n = 0;
    char t[64];
    if (x < 0 || !wf_tj_flatten(r, x, "normalizers", parts, &n, &s)) return s;
    for (int i = 0; i < n && s == WF_OK; i++) {
        wf_vocab_step *st = &r->v->norm[r->v->n_norm++];
        if (wf_tj_is_type(r, parts[i], "Prepend")) {
            st->op = WF_NORM_PREPEND;
            st->a = wf_tj_string(r, parts[i], "prepend", NULL, 0, &s);
        } else if (wf_tj_is_type(r, parts[i], "Replace")) {
            st->op = WF_NORM_REPLACE;
            st->a = wf_tj_pattern(r, parts[i], "Replace normalizer", &s);
            st->b = wf_tj_string(r, parts[i], "content", NULL, 0, &s);
        } else {
            return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the normalizer %s is not supported; this build "
                           "runs Prepend and Replace (with a String pattern)", wf_tj_type_name(r, parts[i], t, sizeof t));
        }
    }
    return s == WF_OK ? check_growth(r, r->v->norm, r->v->n_norm, WF_NORM_REPLACE, "normalizer") : s;
}

/* Normalized added tokens match the normalized text: their content goes through the
 * normalizer (whose growth check_growth bounded). */
wf_status wf_tj_normalize_added(wf_tj_reader *r) {
    wf_vocab *v = r->v;
    wf_buf out = {0}, tmp = {0};
    int ok = 1;
    for (int32_t i = 0; i < v->n_added && v->n_norm && ok; i++) {
        wf_added *a = &v->added[i];
        if (!a->normalized) continue;
        ok = wf_vocab_normalize(v, v->pool + a->match.off, a->match.len, &out, &tmp);
        if (ok) a->match = wf_tj_pool_put(r, out.p, out.n);
    }
    free(out.p);
    free(tmp.p);
    if (!ok) return wf_fail(r->msg, r->cap, WF_ERR_NOMEM, "out of memory reading tokenizer.json");
    return WF_OK;
}

wf_status wf_tj_read_decoder(wf_tj_reader *r, int32_t x) {
    wf_status s = WF_OK;
    int32_t parts[WF_VOCAB_STEPS];
    int n = 0, fused = 0, fallback = 0;
    char t[64];
    wf_vocab *v = r->v;
    if (x < 0) {
        v->dec_join = 1; /* the libraries join the tokens with spaces */
        return WF_OK;
    }
    if (!wf_tj_flatten(r, x, "decoders", parts, &n, &s)) return s;
    for (int i = 0; i < n && s == WF_OK; i++) {
        const int32_t p = parts[i];
        const char *name = wf_tj_type_name(r, p, t, sizeof t);
        if (fused && !wf_tj_is_type(r, p, "Strip"))
            return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the decoder %s after Fuse is not supported", name);
        if (fallback && !fused && !wf_tj_is_type(r, p, "Fuse"))
            return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the decoder %s after ByteFallback (which joins "
                           "byte runs) is not supported", name);
        if (wf_tj_is_type(r, p, "Fuse")) {
            fused = 1;
            continue;
        }
        if (wf_tj_is_type(r, p, "Strip") && fused) {
            if (v->strip.len)
                return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: two Strip decoders after Fuse are not supported");
            v->strip = wf_tj_string(r, p, "content", NULL, 1, &s);
            v->strip_start = (int32_t)wf_tj_integer(r, p, "start", 0, 0, 1 << 20, &s);
            v->strip_stop = (int32_t)wf_tj_integer(r, p, "stop", 0, 0, 1 << 20, &s);
            continue;
        }
        wf_vocab_step *st = &v->dec_steps[v->n_dec++];
        if (wf_tj_is_type(r, p, "Replace")) {
            st->op = WF_DEC_REPLACE;
            st->a = wf_tj_pattern(r, p, "Replace decoder", &s);
            st->b = wf_tj_string(r, p, "content", NULL, 0, &s);
        } else if (wf_tj_is_type(r, p, "ByteFallback")) {
            st->op = WF_DEC_BYTEFALLBACK;
            fallback = 1;
        } else if (wf_tj_is_type(r, p, "ByteLevel")) {
            if (n > 1)
                return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the ByteLevel decoder in a sequence is not supported");
            st->op = WF_DEC_BYTELEVEL;
        } else if (wf_tj_is_type(r, p, "Strip")) {
            st->op = WF_DEC_STRIP;
            st->a = wf_tj_string(r, p, "content", NULL, 1, &s);
            st->start = (int32_t)wf_tj_integer(r, p, "start", 0, 0, 1 << 20, &s);
            st->stop = (int32_t)wf_tj_integer(r, p, "stop", 0, 0, 1 << 20, &s);
        } else if (wf_tj_is_type(r, p, "Metaspace")) {
            st->op = WF_DEC_METASPACE;
            st->a = wf_tj_string(r, p, "replacement", "\xE2\x96\x81", 1, &s);
            st->start = prepend_scheme(r, p, &s) != WF_META_NEVER; /* the first token drops them */
            v->dec_first |= st->start;
        } else {
            return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the decoder %s is not supported; this build runs "
                           "ByteLevel, Replace, ByteFallback, Fuse, Strip and Metaspace", name);
        }
    }
    return s == WF_OK ? check_growth(r, v->dec_steps, v->n_dec, WF_DEC_REPLACE, "decoder") : s;
}

/* The post-processor is not run (encoding adds no special tokens); its template's leading
 * special token is the tokenizer's bos. */
wf_status wf_tj_read_post_processor(wf_tj_reader *r, int32_t x) {
    wf_status s = WF_OK;
    int32_t parts[WF_VOCAB_STEPS];
    int n = 0;
    char t[64];
    if (x < 0 || !wf_tj_flatten(r, x, "processors", parts, &n, &s)) return s;
    for (int i = 0; i < n && s == WF_OK; i++) {
        if (wf_tj_is_type(r, parts[i], "ByteLevel")) continue;
        if (!wf_tj_is_type(r, parts[i], "TemplateProcessing"))
            return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the post-processor %s is not supported; this "
                           "build reads ByteLevel and TemplateProcessing", wf_tj_type_name(r, parts[i], t, sizeof t));
        const int32_t single = wf_tj_member(r, parts[i], "single", &s), specials = wf_tj_member(r, parts[i], "special_tokens", &s);
        if (s != WF_OK || single < 0 || node(r, single)->type != WF_J_ARR || node(r, single)->first < 0) continue;
        const int32_t first = node(r, single)->first;
        const int32_t sp = node(r, first)->type == WF_J_OBJ ? wf_json_get(&r->j, first, "SpecialToken") : -1;
        if (sp < 0 || node(r, sp)->type != WF_J_OBJ || specials < 0 || node(r, specials)->type != WF_J_OBJ) continue;
        const int32_t name = wf_json_get(&r->j, sp, "id");
        const int32_t len = wf_tj_text(r, name, "a SpecialToken's id", &s);
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
