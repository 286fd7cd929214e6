/* llama2.c tokenizer.bin files from anywhere: wf_tokenizer_load must load them or
 * refuse them with a message, never crash or leak; a refused file leaves the tokenizer as it
 * was. A file that loads encodes any bytes (the file itself) to ids in range, decodes them
 * within max_bytes each, and saves as a .wft that loads and saves to the same bytes. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
    if (n > INT32_MAX) return 0;
    wf_tokenizer *t = wf_tokenizer_create();
    REQUIRE(t && wf_tokenizer_train(t, WF_TOKENIZER_CHAR, "hello", 5, 0) == WF_OK, "setup");
    wf_status s = wf_tokenizer_load(t, data, (int32_t)n);
    if (s != WF_OK) {
        REQUIRE(wf_tokenizer_error(t)[0] != 0, "refused with %s but no message", wf_status_string(s));
        REQUIRE(tok_info(t).kind == WF_TOKENIZER_CHAR && tok_info(t).vocab_size == 5, "a refused file changed the tokenizer");
        wf_tokenizer_free(t);
        return 0;
    }
    REQUIRE(tok_info(t).kind == WF_TOKENIZER_LLAMA2C && tok_info(t).bos == 1, "kind %d", tok_info(t).kind);
    /* at most one id per byte, and the " " in front */
    const int32_t cap = (int32_t)n + 1, V = tok_info(t).vocab_size;
    int32_t *ids = malloc((size_t)cap * sizeof(int32_t)), k = 0;
    REQUIRE(ids, "out of memory");
    s = wf_tokenizer_encode(t, (const char *)data, (int32_t)n, ids, cap, &k);
    REQUIRE(s == WF_OK || s == WF_ERR_NOMEM, "encode: %s", wf_tokenizer_error(t));
    if (s == WF_OK) {
        for (int32_t i = 0; i < k; i++) REQUIRE(ids[i] >= 0 && ids[i] < V, "id %d outside [0, %d)", ids[i], V);
        const size_t out_cap = (size_t)k * (size_t)tok_info(t).max_bytes;
        char *out = malloc(out_cap ? out_cap : 1);
        int32_t m = 0;
        REQUIRE(out, "out of memory");
        REQUIRE(wf_tokenizer_decode(t, ids, k, out, (int32_t)out_cap, &m) == WF_OK, "decode: %s", wf_tokenizer_error(t));
        free(out);
    }
    free(ids);
    uint8_t *a = NULL, *b = NULL;
    int32_t na = 0, nb = 0;
    wf_tokenizer *back = wf_tokenizer_create();
    REQUIRE(back && wf_tokenizer_save(t, 0, &a, &na) == WF_OK, "save");
    REQUIRE(wf_tokenizer_load(back, a, na) == WF_OK, "its .wft does not load: %s", wf_tokenizer_error(back));
    REQUIRE(wf_tokenizer_save(back, 0, &b, &nb) == WF_OK && na == nb && !memcmp(a, b, (size_t)na), "the .wft changed");
    wf_buffer_free(a);
    wf_buffer_free(b);
    wf_tokenizer_free(back);
    wf_tokenizer_free(t);
    return 0;
}
