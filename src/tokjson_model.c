/* tokenizer.json's model (tokjson.h): BPE's vocabulary, the added tokens and the merges,
 * every id and string checked before the tables are sized by them. */
#include <stdlib.h>

#include "tokjson.h"

#define MAX_IDS (1 << 24) /* the config's vocab_size limit */

/* model.vocab, the added tokens' ids and model.merges into the vocabulary. */
wf_status wf_tj_read_model(wf_tj_reader *r, int32_t model, int32_t added) {
    wf_status s = WF_OK;
    wf_vocab *v = r->v;
    char t[64];
    if (model < 0 || node(r, model)->type != WF_J_OBJ || wf_json_get(&r->j, model, "type") < 0)
        return wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: \"model\" is missing, not an object or without a type");
    if (!wf_tj_is_type(r, model, "BPE")) {
        return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the model %s is not supported; this build runs BPE",
                       wf_tj_type_name(r, model, t, sizeof t));
    }
    const int32_t dropout = wf_tj_member(r, model, "dropout", &s);
    if (dropout >= 0 && !(node(r, dropout)->type == WF_J_NUM && node(r, dropout)->num == 0))
        return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: BPE dropout (random merges) is not supported");
    static const char *const affixes[] = {"continuing_subword_prefix", "end_of_word_suffix", "continuing_subword_suffix"};
    for (int i = 0; i < 3; i++) {
        const int32_t a = wf_tj_member(r, model, affixes[i], &s);
        if (a >= 0 && !wf_json_is(&r->j, a, ""))
            return wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: the BPE model's %s is not supported", affixes[i]);
    }
    v->byte_fallback = wf_tj_flag(r, model, "byte_fallback", 0, &s);
    v->fuse_unk = wf_tj_flag(r, model, "fuse_unk", 0, &s);
    v->ignore_merges = wf_tj_flag(r, model, "ignore_merges", 0, &s);
    const int32_t vocab = wf_tj_member(r, model, "vocab", &s), merges = wf_tj_member(r, model, "merges", &s);
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
        const int64_t id = node(r, c)->type == WF_J_OBJ ? wf_tj_integer(r, c, "id", -1, 0, MAX_IDS - 1, &s) : -1;
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
    v->tok = wf_calloc_n((size_t)V, sizeof(wf_span));
    v->added = wf_malloc_n((size_t)n_added, sizeof(wf_added));
    uint8_t *have = wf_calloc_n((size_t)V, 1);
    if (!v->tok || !v->added || !have) {
        free(have);
        return wf_fail(r->msg, r->cap, WF_ERR_NOMEM, "out of memory reading a vocabulary of %lld tokens", (long long)V);
    }
    for (int32_t c = node(r, vocab)->first; c >= 0 && s == WF_OK; c = node(r, c)->next) {
        const int32_t id = (int32_t)node(r, c)->ival, len = wf_tj_text(r, node(r, c)->key, "a token", &s);
        if (s != WF_OK) break;
        if (have[id]) s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: id %d is in the vocabulary twice", id);
        else if (len == 0) s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: the vocabulary has an empty token (id %d)", id);
        have[id] = 1;
        if (s == WF_OK) v->tok[id] = wf_tj_pool_put(r, r->scratch, (size_t)len);
    }
    /* added tokens: a new id takes the content as its string; a vocabulary id must have it */
    for (int32_t c = added >= 0 ? node(r, added)->first : -1; c >= 0 && s == WF_OK; c = node(r, c)->next) {
        wf_added *a = &v->added[v->n_added];
        a->id = (int32_t)wf_tj_integer(r, c, "id", 0, 0, MAX_IDS - 1, &s);
        const int32_t len = wf_tj_text(r, wf_tj_member(r, c, "content", &s), "an added token's content", &s);
        if (s != WF_OK) break;
        if (len == 0) s = wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: added token %d is empty", a->id);
        static const char *const opts[] = {"single_word", "lstrip", "rstrip"};
        for (int i = 0; i < 3 && s == WF_OK; i++)
            if (wf_tj_flag(r, c, opts[i], 0, &s))
                s = wf_fail(r->msg, r->cap, WF_ERR_UNSUPPORTED, "tokenizer.json: added token %d has %s: true, which is not supported",
                            a->id, opts[i]);
        const int special = wf_tj_flag(r, c, "special", 0, &s);
        a->normalized = wf_tj_flag(r, c, "normalized", !special, &s);
        if (s != WF_OK) break;
        const wf_span content = wf_tj_pool_put(r, r->scratch, (size_t)len);
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
    const int32_t unk = wf_tj_member(r, model, "unk_token", &s);
    v->unk = -1;
    if (unk >= 0) {
        const int32_t len = wf_tj_text(r, unk, "unk_token", &s);
        if (s != WF_OK) return s;
        v->unk = wf_vocab_find(v, r->scratch, (size_t)len);
        if (v->unk < 0) return wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: unk_token \"%.*s\" is not in the vocabulary",
                                       len > 40 ? 40 : len, (const char *)r->scratch);
    }
    /* merges: "left right" or ["left", "right"]; both parts and their join must be tokens */
    int32_t nm = 0;
    for (int32_t c = merges >= 0 ? node(r, merges)->first : -1; c >= 0; c = node(r, c)->next) nm++;
    r->merges = wf_malloc_n((size_t)nm, 3 * sizeof(int32_t));
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
                len = wf_tj_text(r, i ? b : a, "a merge's token", &s);
                if (s != WF_OK) return s;
                part[i] = wf_vocab_find(v, r->scratch, (size_t)len);
                if (part[i] < 0)
                    return wf_fail(r->msg, r->cap, WF_ERR_FORMAT, "tokenizer.json: merge %d: \"%.*s\" is not in the vocabulary", k,
                                   len > 40 ? 40 : len, (const char *)r->scratch);
            }
        } else {
            len = wf_tj_text(r, c, "a merge", &s);
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
