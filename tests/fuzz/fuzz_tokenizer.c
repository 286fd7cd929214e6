/* Tokenizer files from anywhere: wf_tokenizer_load must load them or refuse them with a
 * message, never crash or leak; a refused file leaves the tokenizer as it was. A file that
 * loads saves back to exactly its own bytes (the format has one encoding of each
 * vocabulary; a tokenizer.json or tokenizer.bin inside is kept as it is), and a BPE
 * vocabulary round-trips any bytes. Each input is tried as it is
 * and sealed (length and checksum made right: fuzz_sealed). */
#include "fuzz.h"

static void check_file(const uint8_t *data, size_t n) {
    wf_tokenizer *t = wf_tokenizer_create();
    REQUIRE(t && wf_tokenizer_train(t, WF_TOKENIZER_CHAR, "hello", 5, 0) == WF_OK, "setup");
    wf_status s = wf_tokenizer_load(t, data, (int32_t)n);
    if (s != WF_OK) {
        REQUIRE(wf_tokenizer_error(t)[0] != 0, "refused with %s but no message", wf_status_string(s));
        REQUIRE(tok_info(t).kind == WF_TOKENIZER_CHAR && tok_info(t).vocab_size == 5,
                "a refused file changed the tokenizer");
        int32_t ids[5], k = 0;
        REQUIRE(wf_tokenizer_encode(t, "hello", 5, ids, 5, &k) == WF_OK && k == 5 && ids[0] == 2, "the old vocabulary still encodes");
        wf_tokenizer_free(t);
        return;
    }
    uint8_t *out = NULL;
    int32_t nout = 0;
    REQUIRE(wf_tokenizer_save(t, 0, &out, &nout) == WF_OK, "save: %s", wf_tokenizer_error(t));
    REQUIRE((size_t)nout == n && memcmp(out, data, n) == 0, "a loaded file saved to other bytes");
    wf_buffer_free(out);

    /* encode and decode the input itself as text (char and BPE: at most an id a byte; the
     * others say how many they need) */
    int32_t len = (int32_t)n, icap = len;
    int32_t *ids = malloc((size_t)(len ? len : 1) * sizeof(int32_t));
    int32_t k = 0;
    REQUIRE(ids, "out of memory");
    wf_status es = wf_tokenizer_encode(t, (const char *)data, len, ids, icap, &k);
    if (es == WF_ERR_ARG && k > icap && tok_info(t).kind >= WF_TOKENIZER_HF) {
        free(ids);
        icap = k;
        REQUIRE((ids = malloc((size_t)icap * sizeof(int32_t))), "out of memory");
        es = wf_tokenizer_encode(t, (const char *)data, len, ids, icap, &k);
    }
    REQUIRE(es == WF_OK, "encode: %s", wf_tokenizer_error(t));
    int32_t V = tok_info(t).vocab_size;
    for (int32_t i = 0; i < k; i++) REQUIRE(ids[i] >= 0 && ids[i] < V, "id %d outside [0, %d)", ids[i], V);
    size_t cap = (size_t)k * (size_t)tok_info(t).max_bytes;
    char *text = malloc(cap ? cap : 1);
    int32_t nt = 0;
    REQUIRE(text, "out of memory");
    if (cap <= INT32_MAX) {
        REQUIRE(wf_tokenizer_decode(t, ids, k, text, (int32_t)cap, &nt) == WF_OK, "decode: %s", wf_tokenizer_error(t));
        if (tok_info(t).kind == WF_TOKENIZER_BPE)
            REQUIRE(nt == len && memcmp(text, data, n) == 0, "BPE did not round-trip %d bytes", len);
    }
    free(text);
    free(ids);
    wf_tokenizer_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
    if (n > INT32_MAX) return 0;
    check_file(data, n);
    uint8_t *sealed = fuzz_sealed(data, n);
    if (sealed) check_file(sealed, n);
    free(sealed);
    return 0;
}
