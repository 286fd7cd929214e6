/* Sizes at the width they run at (issue 25). In wasm size_t is 32 bits, and a count that
 * wrapped into a small allocation corrupted other models' memory; npm test runs this file
 * (and every other C test) in a 32-bit build too (-m32, ASan + UBSan), where each of these
 * failed on 6655a24:
 * - the checked helpers at size_t's limits;
 * - tokenizer.json expansion bombs (Replace chains in the normalizer and the decoder, and a
 *   normalized added token): refused at load, a model beside them unchanged;
 * - one 2^28-byte word through the GPT-2 fixture (32-bit builds: a clean WF_ERR_NOMEM);
 * - added-token matching: leftmost-longest as a plain scan finds it, and linear in the text
 *   (issue 25's 2,000 tokens of ~1,000 bytes with one prefix: counted automaton steps). */
#include <stdlib.h>

#include "check.h"
#include "tokenizer.h"

/* ---- the helpers ---- */

static void helpers(void) {
    size_t r;
    CHECK(wf_mul_ok(SIZE_MAX / 2, 2, &r) && r == SIZE_MAX - 1, "SIZE_MAX / 2 * 2");
    CHECK(!wf_mul_ok(SIZE_MAX / 2 + 1, 2, &r), "SIZE_MAX / 2 + 1 times 2 overflows");
    CHECK(!wf_add_ok(SIZE_MAX, 1, &r) && wf_add_ok(SIZE_MAX - 1, 1, &r) && r == SIZE_MAX, "SIZE_MAX + 1");
    /* what wrapped in wasm: 2^30 int32 symbols, 2^28 * 16 bytes */
    CHECK(wf_mul_ok((size_t)1 << 30, 4, &r) == (sizeof(size_t) > 4), "2^30 * 4 fits only a 64-bit size_t");
    CHECK(wf_malloc_n(SIZE_MAX / 4 + 1, 4) == NULL && wf_realloc_n(NULL, SIZE_MAX / 2 + 1, 2) == NULL &&
          wf_alloc(SIZE_MAX / 8 + 1, 8) == NULL && wf_zalloc(SIZE_MAX, 2) == NULL && wf_calloc_n(SIZE_MAX, 2) == NULL,
          "every allocator refuses a product that does not fit");
    CHECK(wf_alloc(SIZE_MAX - 8, 1) == NULL, "aligned: the rounding up does not wrap");
    CHECK(wf_grow(0, 100, 64) == 128 && wf_grow(128, 129, 64) == 256 && wf_grow(SIZE_MAX / 2 + 1, SIZE_MAX, 1) == 0,
          "doubling stops at the limit instead of wrapping to 0 (which looped for ever)");
    CHECK(wf_table_slots(0) == 16 && wf_table_slots(9) == 32 && wf_table_slots((size_t)1 << 30) == (uint32_t)1 << 31 &&
          wf_table_slots(((size_t)1 << 30) + 1) == 0, "table slots: twice the keys, at most 2^31");
}

/* ---- tokenizer.json bombs ---- */

#define MODEL "\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2}, \"merges\": []}"
#define C16 "{\"type\": \"Replace\", \"pattern\": {\"String\": \"c\"}, \"content\": \"cccccccccccccccc\"}"
#define C16x7 C16 ", " C16 ", " C16 ", " C16 ", " C16 ", " C16 ", " C16

/* A trained model's weights, to hold against what a refused file does to the module. */
static float *snapshot(wf_model *m) {
    const size_t n = (size_t)param_count(m);
    float *copy = malloc(n * sizeof(float));
    memcpy(copy, wf_model_params(m), n * sizeof(float));
    return copy;
}

static void bombs(void) {
    wf_config c;
    wf_config_default(&c);
    c.vocab_size = 16;
    c.context = 8;
    c.n_layer = 1;
    c.d_model = 16;
    c.n_head = 2;
    c.d_ff = 32;
    wf_model *m = wf_model_create();
    CHECK_OK(wf_model_init(m, &c), m);
    float *before = snapshot(m);
    static const struct { const char *json, *words; } files[] = {
        /* issue 25: one "c" normalized to 2^28, whose symbols' bytes wrapped to 0 in wasm */
        {"{" MODEL ", \"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [" C16x7 "]}}",
         "the normalizer can make a text 268435456 times longer"},
        /* 8 steps and a normalized added token: its normalized length wrapped to 1 byte */
        {"{" MODEL ", \"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [" C16x7 ", " C16 "]}, \"added_tokens\": "
         "[{\"id\": 2, \"content\": \"c\", \"normalized\": true}]}", "4294967296 times longer"},
        /* the decoder: 682 bytes loaded to 543 MB (one token decoded to 2^28 bytes) */
        {"{" MODEL ", \"decoder\": {\"type\": \"Sequence\", \"decoders\": [" C16x7 "]}}", "the decoder can make a text"},
        /* a single step past the bound: 16 bytes for 1 */
        {"{" MODEL ", \"normalizer\": " C16 "}", "16 for 1 bytes); this build allows at most 8 times"},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        wf_tokenizer *t = wf_tokenizer_create();
        CHECK(wf_tokenizer_train(t, WF_TOKENIZER_CHAR, "abc", 3, 0) == WF_OK, "setup");
        wf_status s = wf_tokenizer_load(t, (const uint8_t *)files[i].json, (int32_t)strlen(files[i].json));
        CHECK(s == WF_ERR_FORMAT && strstr(wf_tokenizer_error(t), files[i].words), "bomb %zu: %s \"%s\"", i,
              wf_status_string(s), wf_tokenizer_error(t));
        int32_t ids[8], k = 0;
        CHECK(wf_tokenizer_encode(t, "c", 1, ids, 8, &k) == WF_OK && k == 1, "bomb %zu: the char tokenizer stays", i);
        wf_tokenizer_free(t);
    }
    CHECK(!memcmp(before, wf_model_params(m), (size_t)param_count(m) * sizeof(float)), "the model beside them is unchanged");
    /* growth within the bound loads, and encodes to what the steps say: Prepend "_", " " -> 3
     * bytes, "a" -> "aa" (6 times in all); "a a" is "_" "aa" "\xE2\x96\x81" "aa" */
    static const char ok[] = "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"_\": 1, \"\\u2581\": 2, \"aa\": 3}, "
                             "\"merges\": [\"a a\"]}, \"normalizer\": {\"type\": \"Sequence\", \"normalizers\": ["
                             "{\"type\": \"Prepend\", \"prepend\": \"_\"}, "
                             "{\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"\\u2581\"}, "
                             "{\"type\": \"Replace\", \"pattern\": {\"String\": \"a\"}, \"content\": \"aa\"}]}}";
    wf_tokenizer *t = wf_tokenizer_create();
    CHECK(wf_tokenizer_load(t, (const uint8_t *)ok, (int32_t)strlen(ok)) == WF_OK, "6 times: %s", wf_tokenizer_error(t));
    int32_t ids[16], k = 0;
    const int32_t want[] = {1, 3, 2, 3};
    CHECK(wf_tokenizer_encode(t, "a a", 3, ids, 16, &k) == WF_OK && k == 4 && !memcmp(ids, want, sizeof want),
          "6 times: %d ids", k);
    wf_tokenizer_free(t);
    free(before);
    wf_model_free(m);
}

/* One word of 2^28 bytes (issue 25: in wasm it hung, or corrupted the heap, where 2^26 and
 * 2^27 gave WF_ERR_NOMEM): its merges need 6 GB, so a 32-bit build refuses it cleanly. A
 * 64-bit one would merge it, for minutes: there it is not run. */
static void long_word(void) {
    if (sizeof(size_t) > 4) {
        printf("test_sizes: the 2^28-byte word runs in 32-bit builds (npm test's -m32 stage, wasm)\n");
        return;
    }
    int32_t n;
    uint8_t *json = read_file("tests/fixtures/tokenizers/gpt2.json", &n);
    wf_tokenizer *t = wf_tokenizer_create();
    CHECK(json && wf_tokenizer_load(t, json, n) == WF_OK, "gpt2.json: %s", wf_tokenizer_error(t));
    int32_t before[8], n_before = 0, after[8], n_after = 0;
    CHECK(wf_tokenizer_encode(t, "It's a word", 11, before, 8, &n_before) == WF_OK, "encode before");
    const int32_t len = 1 << 28;
    char *text = malloc((size_t)len);
    memset(text, 'a', (size_t)len);
    int32_t id, k = 0;
    wf_status s = wf_tokenizer_encode(t, text, len, &id, 1, &k);
    CHECK(s == WF_ERR_NOMEM && strstr(wf_tokenizer_error(t), "at a word of 268435456 bytes (merging it takes 6.44 GB"), "%s: %s",
          wf_status_string(s), wf_tokenizer_error(t));
    /* and the tokenizer still works */
    CHECK(wf_tokenizer_encode(t, "It's a word", 11, after, 8, &n_after) == WF_OK && n_after == n_before &&
          !memcmp(after, before, (size_t)n_before * sizeof(int32_t)), "encode after: %s", wf_tokenizer_error(t));
    free(text);
    free(json);
    wf_tokenizer_free(t);
}

/* ---- added tokens ---- */

/* The rule plainly: from `from`, the first position where a token starts; there the longest
 * (of equal ones the first). */
static size_t plain_next(const wf_vocab *v, int set, const uint8_t *s, size_t n, size_t from, int32_t *k) {
    for (size_t p = from; p < n; p++) {
        *k = -1;
        for (int32_t i = 0; i < v->n_added; i++) {
            const wf_added *a = &v->added[i];
            if (a->normalized != set || !a->match.len || !wf_starts(s + p, n - p, wf_str_of(v, a->match), a->match.len)) continue;
            if (*k < 0 || a->match.len > v->added[*k].match.len) *k = i;
        }
        if (*k >= 0) return p;
    }
    *k = -1;
    return n;
}

/* Random tokens over a small alphabet (so they overlap, nest and repeat) against random
 * texts: the automaton finds what the plain scan finds, match after match. */
static void matcher_matches_the_plain_rule(void) {
    uint64_t x = 25;
    int mismatches = 0;
    for (int round = 0; round < 200; round++) {
        char json[8192];
        size_t o = (size_t)snprintf(json, sizeof json, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2}, "
                                    "\"merges\": []}, \"added_tokens\": [");
        const int n_tok = 1 + round % 12;
        for (int i = 0; i < n_tok; i++) {
            char tok[16];
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            const int len = 1 + (int)(x >> 60) % 6;
            for (int j = 0; j < len; j++) tok[j] = (char)('a' + (x >> (8 + 3 * j)) % 3);
            tok[len] = 0;
            o += (size_t)snprintf(json + o, sizeof json - o, "%s{\"id\": %d, \"content\": \"%s\", \"normalized\": false}",
                                  i ? ", " : "", 3 + i, tok);
        }
        snprintf(json + o, sizeof json - o, "]}");
        wf_tokenizer *t = wf_tokenizer_create();
        wf_status s = wf_tokenizer_load(t, (const uint8_t *)json, (int32_t)strlen(json));
        if (s == WF_ERR_FORMAT) { /* two added tokens of one string under two ids */
            wf_tokenizer_free(t);
            continue;
        }
        CHECK(s == WF_OK, "%s: %s", json, wf_tokenizer_error(t));
        uint8_t text[300];
        for (size_t i = 0; i < sizeof text; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            text[i] = (uint8_t)('a' + (x >> 33) % 3);
        }
        wf_match_scan sc = {0};
        for (size_t pos = 0; pos < sizeof text;) {
            size_t at;
            int32_t k, want_k;
            CHECK(wf_match_next(&t->voc.match[0], text, sizeof text, pos, &sc, &at, &k), "out of memory");
            const size_t want = plain_next(&t->voc, 0, text, sizeof text, pos, &want_k);
            if (at != want || k != want_k) {
                mismatches++;
                break;
            }
            if (at == sizeof text) break;
            pos = at + t->voc.added[k].match.len;
        }
        free(sc.best);
        wf_tokenizer_free(t);
    }
    CHECK(mismatches == 0, "%d of 200 token sets matched otherwise than the plain scan", mismatches);
}

/* Issue 25's file: 2,000 added tokens of about 1,000 bytes sharing a 990-byte prefix (4,000
 * characters took 9.9 s, 16,000 took 57 s). The text: the prefix's first half, then a whole
 * token, over and over. Encoding's matcher takes at most 4 steps per byte (2 per byte
 * scanned, each block scanned with at most as much again past it), so 4 times the text is
 * at most 4.5 times the steps. */
static int64_t matcher_steps(wf_tokenizer *t, size_t chars, int64_t *n_ids) {
    char *text = malloc(chars + 1600);
    size_t o = 0;
    for (int j = 0; o < chars; j++) {
        memset(text + o, 'x', 495 + 990);
        o += 495 + 990;
        o += (size_t)sprintf(text + o, "%04d", j % 2000);
    }
    wf_ids ids = {.out = NULL, .cap = 0};
    int64_t work = -1;
    char msg[256];
    CHECK(wf_vocab_encode(&t->voc, (const uint8_t *)text, chars, &ids, &work, msg, sizeof msg) == WF_OK, "%s", msg);
    *n_ids = ids.n;
    free(text);
    return work;
}

static void matcher_is_linear(void) {
    const int n_tok = 2000, prefix = 990;
    char *json = malloc((size_t)n_tok * 1100 + 256);
    size_t o = (size_t)sprintf(json, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"x\": 0}, \"merges\": []}, \"added_tokens\": [");
    for (int i = 0; i < n_tok; i++) {
        o += (size_t)sprintf(json + o, "%s{\"id\": %d, \"content\": \"", i ? ", " : "", 1 + i);
        memset(json + o, 'x', (size_t)prefix);
        o += (size_t)prefix;
        o += (size_t)sprintf(json + o, "%04d\", \"special\": true}", i);
    }
    sprintf(json + o, "]}");
    wf_tokenizer *t = wf_tokenizer_create();
    CHECK(wf_tokenizer_load(t, (const uint8_t *)json, (int32_t)strlen(json)) == WF_OK, "%s", wf_tokenizer_error(t));
    int64_t ids_small, ids_large;
    const int64_t small = matcher_steps(t, 4000, &ids_small), large = matcher_steps(t, 16000, &ids_large);
    /* a unit of 1,489 bytes is 495 x's (one id each) and one added token: 4,000 bytes are two
     * units and 1,022 x's, 16,000 are ten units and 1,110 x's */
    CHECK(ids_small == 2 * 496 + 1022 && ids_large == 10 * 496 + 1110, "%lld and %lld ids", (long long)ids_small,
          (long long)ids_large);
    CHECK(small > 0 && small <= 4 * 4000 && large <= 4 * 16000, "steps %lld for 4,000 bytes, %lld for 16,000: more than 4 per byte",
          (long long)small, (long long)large);
    CHECK((double)large / (double)small <= 4.5, "4 times the text took %.2f times the steps", (double)large / (double)small);
    printf("test_sizes: 2,000 added tokens of 994 bytes: %lld matcher steps for 4,000 bytes, %lld for 16,000 (%.2fx)\n",
           (long long)small, (long long)large, (double)large / (double)small);
    free(json);
    wf_tokenizer_free(t);
}

int main(void) {
    helpers();
    bombs();
    long_word();
    matcher_matches_the_plain_rule();
    matcher_is_linear();
    return check_summary("test_sizes");
}
