/* The char-level tokenizer: vocabulary order, UTF-8 round trips, <unk>, invalid UTF-8. */
#include <stdlib.h>

#include "check.h"
#include "wasmformer.h"

static int round_trip(wf_tokenizer *t, const char *text, char *out, int32_t *n_out) {
    int32_t len = (int32_t)strlen(text), ids[256], n = 0;
    if (wf_tokenizer_encode(t, text, len, ids, 256, &n) != WF_OK) return -1;
    return wf_tokenizer_decode(t, ids, n, out, 1024, n_out) == WF_OK ? n : -1;
}

int main(void) {
    wf_tokenizer *t = wf_tokenizer_create();
    /* before training */
    int32_t ids[64], n;
    CHECK(wf_tokenizer_encode(t, "a", 1, ids, 64, &n) == WF_ERR_STATE, "encode without a vocabulary");
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_CHAR, "", 0, 0) == WF_ERR_ARG, "empty text");
    CHECK(strlen(wf_tokenizer_error(t)) > 0, "message");
    CHECK(tok_info(t).vocab_size == 0, "still empty");

    const char *text = "héllo wörld — ✓ 😀 ba";
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_CHAR, text, (int32_t)strlen(text), 0) == WF_OK, "train: %s", wf_tokenizer_error(t));
    /* <unk> + distinct code points: h é l o ' ' w ö r d — ✓ 😀 b a */
    CHECK(tok_info(t).vocab_size == 15, "vocab size %d", tok_info(t).vocab_size);
    /* ascending code points: ' ' is the smallest, so id 1; 😀 the largest */
    CHECK(wf_tokenizer_encode(t, " a😀", 6, ids, 64, &n) == WF_OK && n == 3, "encode 3 code points");
    CHECK(ids[0] == 1 && ids[1] == 2 && ids[2] == 14, "ids %d %d %d", ids[0], ids[1], ids[2]);

    char out[1024];
    int32_t len;
    CHECK(round_trip(t, text, out, &len) == 20 && len == (int32_t)strlen(text) && !memcmp(out, text, len),
          "round trip of the training text");
    /* unknown characters: <unk> (id 0) -> U+FFFD */
    CHECK(wf_tokenizer_encode(t, "bxa", 3, ids, 64, &n) == WF_OK && n == 3 && ids[1] == 0, "x is <unk>");
    CHECK(wf_tokenizer_decode(t, ids, n, out, 64, &len) == WF_OK && len == 5 && !memcmp(out, "b\xEF\xBF\xBD" "a", 5),
          "<unk> decodes to U+FFFD");
    /* invalid UTF-8: a lone continuation byte, a truncated sequence, an overlong '/',
     * a surrogate: each invalid byte is one U+FFFD (unknown here, like 'c') */
    const char bad[] = "a\x80" "b\xE2\x82" "c\xC0\xAF" "d\xED\xA0\x80";
    CHECK(wf_tokenizer_encode(t, bad, (int32_t)sizeof bad - 1, ids, 64, &n) == WF_OK, "encode invalid UTF-8");
    int unk = 0;
    for (int i = 0; i < n; i++) unk += ids[i] == 0;
    CHECK(n == 4 + 1 + 2 + 2 + 3 && unk == 8 + 1, "n %d unk %d", n, unk);
    /* a tokenizer trained on invalid bytes learns U+FFFD as a character */
    wf_tokenizer *t2 = wf_tokenizer_create();
    CHECK(wf_tokenizer_train(t2, WF_TOKENIZER_CHAR, "a\xFF", 2, 0) == WF_OK && tok_info(t2).vocab_size == 3, "invalid byte in training text");
    CHECK(wf_tokenizer_encode(t2, "\xFF", 1, ids, 64, &n) == WF_OK && ids[0] == 2, "U+FFFD has its own id");
    wf_tokenizer_free(t2);

    /* errors */
    CHECK(wf_tokenizer_encode(t, "hello", 5, ids, 2, &n) == WF_ERR_ARG, "encode buffer too small");
    int32_t badid = 15;
    CHECK(wf_tokenizer_decode(t, &badid, 1, out, 64, &len) == WF_ERR_TOKEN, "decode id == vocab size");
    badid = -1;
    CHECK(wf_tokenizer_decode(t, &badid, 1, out, 64, &len) == WF_ERR_TOKEN, "decode id -1");
    int32_t emoji = 14;
    CHECK(wf_tokenizer_decode(t, &emoji, 1, out, 3, &len) == WF_ERR_ARG, "decode buffer too small for 4 bytes");
    /* a failed retrain keeps the old vocabulary */
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_CHAR, NULL, 3, 0) == WF_ERR_ARG && tok_info(t).vocab_size == 15, "failed retrain");

    /* Pride and Prejudice fits the tiny config's V = 96 */
    FILE *f = fopen("data/austen/pride_and_prejudice.txt", "rb");
    CHECK(f != NULL, "bundled corpus missing (run from the repository root)");
    if (f) {
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fseek(f, 0, SEEK_SET);
        char *book = malloc(size);
        CHECK(fread(book, 1, size, f) == (size_t)size, "read");
        fclose(f);
        CHECK(wf_tokenizer_train(t, WF_TOKENIZER_CHAR, book, (int32_t)size, 0) == WF_OK, "train on the novel");
        printf("Pride and Prejudice: %ld bytes, vocabulary %d\n", size, tok_info(t).vocab_size);
        CHECK(tok_info(t).vocab_size <= 96, "vocabulary %d > 96", tok_info(t).vocab_size);
        int32_t *all = malloc(size * sizeof(int32_t));
        char *back = malloc(size);
        CHECK(wf_tokenizer_encode(t, book, (int32_t)size, all, (int32_t)size, &n) == WF_OK, "encode novel");
        CHECK(wf_tokenizer_decode(t, all, n, back, (int32_t)size, &len) == WF_OK && len == size &&
              !memcmp(back, book, size), "the novel round-trips");
        free(all);
        free(back);
        free(book);
    }
    wf_tokenizer_free(t);
    wf_tokenizer_free(NULL);
    return check_summary("test_tokenizer");
}
