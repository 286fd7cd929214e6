/* Hugging Face tokenizer.json files from anywhere: wf_tokenizer_load must load them or
 * refuse them with a message, never crash or leak; a refused file leaves the tokenizer as it
 * was, and what one keeps is at most 256 bytes per byte of the file. A file that loads
 * encodes any text (the file itself as text, each of its byte values alone: a normalizer
 * that multiplies one character, and a hostile string) to ids in range that decode within
 * max_bytes each, saves as a .wft that loads and saves to the same bytes, and saves as a
 * tokenizer.json: its own bytes (kind HF), or one that reads back as the same BPE. */
#include "fuzz.h"

static void encode_decode(wf_tokenizer *t, const uint8_t *text, int32_t len) {
    int32_t cap = len + 8, k = 0;
    int32_t *ids = malloc((size_t)cap * sizeof(int32_t));
    REQUIRE(ids, "out of memory");
    wf_status s = wf_tokenizer_encode(t, (const char *)text, len, ids, cap, &k);
    if (s == WF_ERR_ARG && k > cap) { /* the count it needs, then again */
        free(ids);
        cap = k;
        ids = malloc((size_t)cap * sizeof(int32_t));
        REQUIRE(ids, "out of memory");
        s = wf_tokenizer_encode(t, (const char *)text, len, ids, cap, &k);
    }
    if (s == WF_ERR_NOMEM) {
        free(ids);
        return;
    }
    REQUIRE(s == WF_OK && k <= cap, "encode: %s", wf_tokenizer_error(t));
    const int32_t V = tok_info(t).vocab_size;
    for (int32_t i = 0; i < k; i++) REQUIRE(ids[i] >= 0 && ids[i] < V, "id %d outside [0, %d)", ids[i], V);
    const size_t out_cap = (size_t)k * (size_t)tok_info(t).max_bytes;
    if (out_cap <= (1u << 26)) {
        char *out = malloc(out_cap ? out_cap : 1);
        int32_t n = 0;
        REQUIRE(out, "out of memory");
        REQUIRE(wf_tokenizer_decode(t, ids, k, out, (int32_t)out_cap, &n) == WF_OK && (size_t)n <= out_cap, "decode: %s",
                wf_tokenizer_error(t));
        free(out);
    }
    free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
    if (n > INT32_MAX) return 0;
    wf_tokenizer *t = wf_tokenizer_create();
    REQUIRE(t && wf_tokenizer_train(t, WF_TOKENIZER_CHAR, "hello", 5, 0) == WF_OK, "setup");
    const double heap = fuzz_heap_bytes();
    wf_status s = wf_tokenizer_load(t, data, (int32_t)n);
    /* what a file keeps is bounded by its size (issue 25: 682 bytes kept 543 MB of decoded
     * tokens): its strings decoded (up to 8 times), the tables, the added tokens' automata */
    REQUIRE(fuzz_heap_bytes() - heap <= 256.0 * (double)n + (1 << 20), "%zu bytes of tokenizer.json kept %.0f bytes", n,
            fuzz_heap_bytes() - heap);
    if (s != WF_OK) {
        REQUIRE(wf_tokenizer_error(t)[0] != 0, "refused with %s but no message", wf_status_string(s));
        REQUIRE(tok_info(t).kind == WF_TOKENIZER_CHAR && tok_info(t).vocab_size == 5, "a refused file changed the tokenizer");
        wf_tokenizer_free(t);
        return 0;
    }
    const int kind = tok_info(t).kind;
    REQUIRE(kind == WF_TOKENIZER_HF || kind == WF_TOKENIZER_BPE, "kind %d", kind);
    encode_decode(t, data, (int32_t)n);
    uint8_t seen[256] = {0};
    for (size_t i = 0; i < n; i++)
        if (!seen[data[i]]++) encode_decode(t, data + i, 1);
    static const char hostile[] = "It's 42 \xC3\xA9\xE2\x96\x81 <s>\n\n  \xF0\x9F\x98\x80\xFF\xC0\xAF\xED\xA0\x80 x\xC2\x85y";
    encode_decode(t, (const uint8_t *)hostile, (int32_t)sizeof hostile - 1);

    /* the .wft keeps it */
    uint8_t *a = NULL, *b = NULL;
    int32_t na = 0, nb = 0;
    wf_tokenizer *back = wf_tokenizer_create();
    REQUIRE(back, "out of memory");
    if (wf_tokenizer_save(t, 0, &a, &na) == WF_OK) {
        REQUIRE(wf_tokenizer_load(back, a, na) == WF_OK, "its .wft does not load: %s", wf_tokenizer_error(back));
        REQUIRE(wf_tokenizer_save(back, 0, &b, &nb) == WF_OK && na == nb && !memcmp(a, b, (size_t)na), "the .wft changed");
    }
    /* and its tokenizer.json */
    uint8_t *js = NULL;
    int32_t njs = 0;
    s = wf_tokenizer_save(t, WF_SAVE_JSON, &js, &njs);
    if (s == WF_OK && kind == WF_TOKENIZER_HF) REQUIRE((size_t)njs == n && !memcmp(js, data, n), "saved another tokenizer.json");
    if (s == WF_OK && kind == WF_TOKENIZER_BPE) {
        wf_tokenizer *again = wf_tokenizer_create();
        uint8_t *c = NULL;
        int32_t nc = 0;
        REQUIRE(again && wf_tokenizer_load(again, js, njs) == WF_OK, "the written tokenizer.json does not load");
        REQUIRE(wf_tokenizer_save(again, 0, &c, &nc) == WF_OK && nc == na && !memcmp(c, a, (size_t)na), "it is another BPE");
        wf_buffer_free(c);
        wf_tokenizer_free(again);
    }
    wf_buffer_free(js);
    wf_buffer_free(a);
    wf_buffer_free(b);
    wf_tokenizer_free(back);
    wf_tokenizer_free(t);
    return 0;
}
