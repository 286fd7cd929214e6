/* A GGUF file from anywhere: wf_model_load must build the llama model and the tokenizer it
 * describes or refuse them with a message, never crash or leak; a refused file leaves the
 * model as it was. A file that loads must run a forward pass (the exact path on its blocks),
 * generate a token (the quantized path) and encode a text with its tokenizer, or refuse them
 * for memory or numbers that overflow. The same file streamed (wf_model_load_begin/feed/end,
 * in pieces of 1 to 61 bytes) must give the same status and message, and the same model.
 * Input: the file. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
    if (n > INT32_MAX) return 0;
    wf_model *m = wf_model_create();
    wf_tokenizer *t = wf_tokenizer_create();
    wf_config small = fuzz_small_config();
    REQUIRE(m && t && wf_model_init(m, &small) == WF_OK, "setup");
    size_t n_before;
    float *before = fuzz_snapshot(m, &n_before);

    wf_status s = wf_model_load(m, t, data, (int32_t)n);
    if (n >= 4 && !memcmp(data, "GGUF", 4)) {
        wf_model *ms = wf_model_create();
        wf_tokenizer *ts = wf_tokenizer_create();
        REQUIRE(ms && ts && wf_model_init(ms, &small) == WF_OK, "setup");
        const size_t piece = 1 + n % 61;
        wf_status ss = wf_model_load_begin(ms, ts);
        for (size_t at = 0; ss == WF_OK && at < n; at += piece)
            ss = wf_model_load_feed(ms, data + at, (int32_t)(n - at < piece ? n - at : piece));
        if (ss == WF_OK) ss = wf_model_load_end(ms, 1);
        REQUIRE(ss == s && !strcmp(wf_model_error(ms), wf_model_error(m)), "streamed: %s \"%s\"; whole: %s \"%s\"",
                wf_status_string(ss), wf_model_error(ms), wf_status_string(s), wf_model_error(m));
        if (s != WF_OK) {
            fuzz_require_unchanged(ms, ss, &small, before, n_before);
        } else { /* the same model: written as GGUF, the same bytes */
            uint8_t *a = NULL, *b = NULL;
            int32_t na = 0, nb = 0;
            const wf_status sa = wf_model_save(m, NULL, WF_SAVE_GGUF, &a, &na), sb = wf_model_save(ms, NULL, WF_SAVE_GGUF, &b, &nb);
            REQUIRE(sa == sb && na == nb && (!na || !memcmp(a, b, (size_t)na)), "streamed, a different model");
            wf_buffer_free(a);
            wf_buffer_free(b);
        }
        wf_tokenizer_free(ts);
        wf_model_free(ms);
    }
    if (s != WF_OK) {
        fuzz_require_unchanged(m, s, &small, before, n_before);
    } else {
        int32_t tok = 0, target = 0, next = 0;
        wf_batch b;
        memset(&b, 0, sizeof b);
        b.inputs = &tok;
        b.targets = &target;
        b.B = b.T = 1;
        s = wf_model_forward(m, &b, NULL);
        REQUIRE(s == WF_OK || s == WF_ERR_NOMEM || s == WF_ERR_NUMERIC, "forward: %s", wf_model_error(m));
        const wf_sampling greedy = {.temperature = 0, .top_p = 1};
        s = wf_model_gen_start(m, &tok, 1, 1);
        if (s == WF_OK) s = wf_model_gen_next(m, &greedy, NULL, &next, NULL, 0, NULL);
        REQUIRE(s == WF_OK || s == WF_ERR_NUMERIC, "generation: %s", wf_model_error(m)); /* finite weights may overflow */
        wf_tokenizer_info ti;
        if (wf_tokenizer_get_info(t, &ti) == WF_OK && ti.kind != WF_TOKENIZER_NONE) {
            int32_t ids[64], got = 0;
            s = wf_tokenizer_encode(t, "Hello, world 123", 16, ids, 64, &got);
            REQUIRE(s == WF_OK || s == WF_ERR_ARG, "encode: %s", wf_tokenizer_error(t));
        }
    }
    free(before);
    wf_tokenizer_free(t);
    wf_model_free(m);
    return 0;
}
