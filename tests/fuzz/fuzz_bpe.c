/* Training input from anywhere: byte-level BPE and the char tokenizer learn from any bytes
 * or refuse them with a message (empty text), never crash or leak. Afterwards BPE encodes
 * and decodes the same bytes back exactly, and the char tokenizer does so for valid
 * UTF-8 (invalid bytes read as U+FFFD). The first two bytes choose the BPE vocabulary
 * size, 256 + (0..1023): the rest is the text. */
#include "fuzz.h"

/* 1 if s[0, n) is valid UTF-8: no overlong forms, surrogates or code points > U+10FFFF. */
static int valid_utf8(const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        size_t k = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : 9;
        if (k == 9 || k >= n - i) return 0; /* a lead byte needs k more bytes */
        uint32_t cp = k == 0 ? c : k == 1 ? c & 0x1F : k == 2 ? c & 0x0F : c & 0x07;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xC0) != 0x80) return 0;
            cp = cp << 6 | (s[i + j] & 0x3F);
        }
        static const uint32_t least[] = {0, 0x80, 0x800, 0x10000};
        if (cp < least[k] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        i += k + 1;
    }
    return 1;
}

/* Encodes and decodes text with t; returns 1 when the bytes come back unchanged. */
static int round_trips(wf_tokenizer *t, const uint8_t *text, int32_t len) {
    int32_t *ids = malloc((size_t)(len ? len : 1) * sizeof(int32_t)), k = 0;
    REQUIRE(ids, "out of memory");
    REQUIRE(wf_tokenizer_encode(t, (const char *)text, len, ids, len, &k) == WF_OK, "encode: %s", wf_tokenizer_error(t));
    int32_t V = tok_info(t).vocab_size;
    for (int32_t i = 0; i < k; i++) REQUIRE(ids[i] >= 0 && ids[i] < V, "id %d outside [0, %d)", ids[i], V);
    size_t cap = (size_t)k * (size_t)tok_info(t).max_bytes;
    char *out = malloc(cap ? cap : 1);
    int32_t n = 0;
    REQUIRE(out && cap <= INT32_MAX, "decode buffer");
    REQUIRE(wf_tokenizer_decode(t, ids, k, out, (int32_t)cap, &n) == WF_OK, "decode: %s", wf_tokenizer_error(t));
    int same = n == len && memcmp(out, text, (size_t)len) == 0;
    free(out);
    free(ids);
    return same;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
    if (n < 2 || n > (1u << 20)) return 0;
    const int32_t vocab = 256 + ((data[0] | data[1] << 8) & 1023);
    const uint8_t *text = data + 2;
    const int32_t len = (int32_t)(n - 2);

    wf_tokenizer *t = wf_tokenizer_create();
    REQUIRE(t, "setup");
    wf_status s = wf_tokenizer_train(t, WF_TOKENIZER_BPE, (const char *)text, len, vocab);
    if (len == 0) {
        REQUIRE(s == WF_ERR_ARG && wf_tokenizer_error(t)[0], "empty text: %s", wf_status_string(s));
    } else {
        REQUIRE(s == WF_OK, "bpe on %d bytes: %s: %s", len, wf_status_string(s), wf_tokenizer_error(t));
        REQUIRE(tok_info(t).vocab_size <= vocab, "vocabulary %d > %d", tok_info(t).vocab_size, vocab);
        REQUIRE(round_trips(t, text, len), "BPE did not round-trip its own training text");
        /* and the file of what it learned loads back */
        uint8_t *file = NULL;
        int32_t nf = 0;
        REQUIRE(wf_tokenizer_save(t, 0, &file, &nf) == WF_OK, "save");
        wf_tokenizer *back = wf_tokenizer_create();
        REQUIRE(back && wf_tokenizer_load(back, file, nf) == WF_OK, "reload: %s", wf_tokenizer_error(back));
        REQUIRE(tok_info(back).vocab_size == tok_info(t).vocab_size, "reloaded vocabulary size");
        wf_tokenizer_free(back);
        wf_buffer_free(file);
    }

    s = wf_tokenizer_train(t, WF_TOKENIZER_CHAR, (const char *)text, len, 0);
    if (len == 0) {
        REQUIRE(s != WF_OK && wf_tokenizer_error(t)[0], "char on empty text: %s", wf_status_string(s));
    } else {
        REQUIRE(s == WF_OK, "char on %d bytes: %s", len, wf_tokenizer_error(t));
        int same = round_trips(t, text, len);
        REQUIRE(same == valid_utf8(text, (size_t)len), "char round trip %d, valid UTF-8 %d", same,
                valid_utf8(text, (size_t)len));
    }
    wf_tokenizer_free(t);
    return 0;
}
