/* A GGUF file from anywhere: wf_model_load must build the llama model and the tokenizer it
 * describes or refuse them with a message, never crash or leak; a refused file leaves the
 * model as it was. A file that loads must run a forward pass (the exact path on its blocks),
 * generate a token (the quantized path) and encode a text with its tokenizer, or refuse them
 * for memory or numbers that overflow. Input: the file. */
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
