/* A whole tokenizer.json into a tokenizer (docs/FORMATS.md): wasmformer's own byte-level BPE
 * back into BPE, any other into a vocabulary tokenizer, its parts read by tokjson_steps.c
 * (the pipeline) and tokjson_model.c (the model) with the helpers of tokjson.c. */
#include <stdio.h>
#include <stdlib.h>

#include "tokenizer.h"
#include "tokjson.h"

/* wasmformer's own tokenizer.json (as wf_tokjson_write_bpe writes it), or -1 if the
 * pre-tokenizer is another; WF_ERR_UNSUPPORTED when wasmformer's pre-tokenizer comes with
 * anything else. On WF_OK, out holds the BPE. */
static int own_bpe(wf_tj_reader *r, int32_t root, wf_tokenizer *out, wf_status *s) {
    const int32_t pre = wf_json_get(&r->j, root, "pre_tokenizer");
    if (pre < 0 || node(r, pre)->type != WF_J_OBJ || !wf_tj_is_type(r, pre, "Sequence")) return 0;
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
    const int ours = n == 3 && wf_tj_is_split(r, p[1], chunks) && wf_tj_is_split(r, p[2], cut);
    free(chunks);
    free(cut);
    if (!ours) return 0;
    const wf_vocab *v = r->v;
    wf_status st = WF_OK;
    int ok = v->family == WF_VOCAB_BYTES && wf_tj_is_type(r, p[0], "ByteLevel") && !wf_tj_flag(r, p[0], "add_prefix_space", 0, &st) &&
             !wf_tj_flag(r, p[0], "use_regex", 1, &st) && v->n_added == 0 && v->unk < 0 && !v->byte_fallback && !v->ignore_merges &&
             wf_json_get(&r->j, root, "normalizer") >= 0 && node(r, wf_json_get(&r->j, root, "normalizer"))->type == WF_J_NULL &&
             v->n == 256 + r->n_merges && st == WF_OK;
    const int32_t dec = wf_json_get(&r->j, root, "decoder");
    ok = ok && dec >= 0 && node(r, dec)->type == WF_J_OBJ && wf_tj_is_type(r, dec, "ByteLevel");
    for (int b = 0; b < 256 && ok; b++) ok = v->char_id[b] == b;
    int32_t *merges = wf_malloc_n((size_t)r->n_merges * 2, sizeof(int32_t));
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
    wf_tj_reader r = {.msg = msg, .cap = cap, .v = &out->voc};
    wf_vocab *v = &out->voc;
    wf_status s = wf_json_parse(&r.j, (const char *)data, n, "tokenizer.json", msg, cap);
    if (s == WF_OK && r.j.nodes[0].type != WF_J_OBJ) s = wf_fail(msg, cap, WF_ERR_FORMAT, "tokenizer.json is not a JSON object");
    /* every string the vocabulary keeps is decoded from the file: at most its size */
    r.pool_cap = n < UINT32_MAX - 64 ? n + 64 : UINT32_MAX;
    if (s == WF_OK && !(v->pool = malloc(r.pool_cap))) s = wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory reading tokenizer.json");
    v->bos = -1;
    const int32_t root = 0;
    int32_t pre = -1, model = -1, added = -1;
    if (s == WF_OK) {
        pre = wf_tj_member(&r, root, "pre_tokenizer", &s);
        model = wf_tj_member(&r, root, "model", &s);
        added = wf_tj_member(&r, root, "added_tokens", &s);
    }
    if (s == WF_OK) {
        /* the family first: merges and the vocabulary's byte characters depend on it */
        v->family = WF_VOCAB_CHARS;
        int32_t parts[WF_VOCAB_STEPS];
        int np = 0;
        wf_status ps = WF_OK;
        if (pre >= 0 && wf_tj_flatten(&r, pre, "pretokenizers", parts, &np, &ps))
            for (int i = 0; i < np; i++)
                if (wf_tj_is_type(&r, parts[i], "ByteLevel")) v->family = WF_VOCAB_BYTES;
        s = wf_tj_read_model(&r, model, added);
        if (s == WF_OK && r.nomem) s = wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory reading tokenizer.json");
    }
    if (s == WF_OK && !own_bpe(&r, root, out, &s)) {
        const int fam = v->family;
        s = wf_tj_read_pre_tokenizer(&r, pre);
        if (s == WF_OK && v->family != fam) s = wf_fail(msg, cap, WF_ERR_FORMAT, "tokenizer.json: the pre-tokenizer is inconsistent");
        if (s == WF_OK) s = wf_tj_read_normalizer(&r, wf_tj_member(&r, root, "normalizer", &s));
        if (s == WF_OK) s = wf_tj_read_decoder(&r, wf_tj_member(&r, root, "decoder", &s));
        if (s == WF_OK) s = wf_tj_read_post_processor(&r, wf_tj_member(&r, root, "post_processor", &s));
        if (s == WF_OK) s = wf_tj_normalize_added(&r);
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
