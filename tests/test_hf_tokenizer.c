/* Hugging Face tokenizer.json and llama2.c tokenizer.bin in the core (issue 15): the heap
 * merge against a plain quadratic one, the fixtures' ids for a few texts as
 * @huggingface/tokenizers 0.2.0 gives them (tests/js/hf-tokenizer.test.mjs holds whole
 * corpora against it), the .wft and checkpoint round trips of the new kinds, the encode
 * buffer rule, wasmformer's BPE as a tokenizer.json, and refusals that change nothing. */
#include <stdlib.h>

#include "check.h"
#include "tokenizer.h"

static wf_tokenizer *load(const char *name) {
    char path[256];
    snprintf(path, sizeof path, "tests/fixtures/tokenizers/%s", name);
    int32_t n;
    uint8_t *b = read_file(path, &n);
    CHECK(n > 0, "read %s (run from the repository root)", path);
    wf_tokenizer *t = wf_tokenizer_create();
    wf_status s = wf_tokenizer_load(t, b, n);
    CHECK(s == WF_OK, "load %s: %s", name, wf_tokenizer_error(t));
    free(b);
    return t;
}

/* ---- the merger: the heap against a quadratic scan, for ranks and for scores ---- */

typedef struct {
    int32_t n;          /* symbols 0..n-1 */
    double key[16][16]; /* pair (a, b) merges into res[a][b] with this key; NAN: no merge */
    int32_t res[16][16];
} toy;

static int toy_pair(const void *ctx, int32_t a, int32_t b, double *key, int32_t *merged) {
    const toy *t = ctx;
    if (isnan(t->key[a][b])) return 0;
    *key = t->key[a][b];
    *merged = t->res[a][b];
    return 1;
}

/* The rule written plainly: the lowest key, the leftmost of equals, one merge at a time. */
static int32_t plain_merge(const toy *t, int32_t *s, int32_t n) {
    for (;;) {
        int32_t at = -1;
        double best = 0;
        for (int32_t i = 0; i + 1 < n; i++) {
            double k;
            int32_t m;
            if (toy_pair(t, s[i], s[i + 1], &k, &m) && (at < 0 || k < best)) {
                best = k;
                at = i;
            }
        }
        if (at < 0) return n;
        s[at] = t->res[s[at]][s[at + 1]];
        memmove(s + at + 1, s + at + 2, (size_t)(n - at - 2) * sizeof(int32_t));
        n--;
    }
}

static void merger_matches_the_plain_rule(void) {
    wf_rng r;
    wf_rng_seed(&r, 42);
    int agree = 0, trials = 2000;
    for (int trial = 0; trial < trials; trial++) {
        toy t;
        t.n = 16;
        /* keys: distinct ranks, or scores with ties (as llama2.c's pieces may have) */
        const int ties = trial % 2;
        for (int a = 0; a < 16; a++)
            for (int b = 0; b < 16; b++) {
                t.key[a][b] = wf_rng_uniform(&r) < 0.35 ? (ties ? (double)(wf_rng_u32(&r) % 4) : a * 16 + b) : NAN;
                t.res[a][b] = (int32_t)(wf_rng_u32(&r) % 16);
            }
        /* up to 150 symbols: the short-word scan (up to 64) and the heap both */
        int32_t n = 1 + (int32_t)(wf_rng_u32(&r) % 150), s1[160], s2[160], link[320];
        for (int32_t i = 0; i < n; i++) s1[i] = s2[i] = (int32_t)(wf_rng_u32(&r) % 4); /* few symbols: many repeats */
        wf_cand heap[3 * 160];
        wf_merger m = {.link = link, .heap = heap, .cap = 160};
        const int32_t k1 = wf_merge(&m, s1, n, toy_pair, &t), k2 = plain_merge(&t, s2, n);
        agree += k1 == k2 && !memcmp(s1, s2, (size_t)k1 * sizeof(int32_t));
    }
    printf("merger: %d of %d random words merge as the plain rule does\n", agree, trials);
    CHECK(agree == trials, "%d of %d", agree, trials);
}

/* ---- the fixtures' ids, as @huggingface/tokenizers gives them ---- */

static void ids_are(wf_tokenizer *t, const char *what, const char *text, const int32_t *want, int32_t n_want) {
    int32_t ids[256], n = 0;
    wf_status s = wf_tokenizer_encode(t, text, (int32_t)strlen(text), ids, 256, &n);
    int same = s == WF_OK && n == n_want && !memcmp(ids, want, (size_t)n * sizeof(int32_t));
    CHECK(same, "%s: %s gives %d ids (%s)", what, text, n, wf_tokenizer_error(t));
}

#define IDS(...) (const int32_t[]){__VA_ARGS__}, (int32_t)(sizeof (const int32_t[]){__VA_ARGS__} / sizeof(int32_t))

static const char T1[] = "It's 1813: Mr. Darcy's  pride.\n\n  Elizabeth\xE2\x80\x94na\xC3\xAFve? \xF0\x9F\x98\x80 <|endoftext|>";
static const char T2[] = "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82, \xE4\xB8\x96\xE7\x95\x8C! \xD9\xA3\xD9\xA4\xD9\xA5 x\xC2\xB2";
static const char T3[] = "<s> Hello\tworld </s>  \xE2\x98\x83";

static void fixture_ids(void) {
    wf_tokenizer *t = load("gpt2.json");
    ids_are(t, "gpt2", T1, IDS(1000, 434, 742, 23, 16, 18, 25, 343, 13, 435, 434, 220, 710, 611, 13, 574, 220, 462, 499, 242, 77,
                               64, 127, 107, 320, 30, 220, 942, 222, 220, 1456));
    ids_are(t, "gpt2", T2, IDS(140, 253, 1201, 594, 1198, 697, 925, 11, 220, 939, 244, 163, 243, 234, 0, 559, 916, 97, 149, 98, 220,
                               87, 126, 110));
    ids_are(t, "gpt2", T3, IDS(27, 82, 29, 423, 684, 78, 197, 86, 294, 311, 220, 27, 14, 82, 29, 220, 946, 246, 225));
    wf_tokenizer_info info;
    wf_tokenizer_get_info(t, &info);
    CHECK(info.kind == WF_TOKENIZER_HF && info.vocab_size == 1457 && info.bos == -1, "gpt2: kind %d, %d ids, bos %d", info.kind,
          info.vocab_size, info.bos);
    wf_tokenizer_free(t);

    t = load("smollm.json");
    ids_are(t, "smollm", T1, IDS(999, 437, 223, 19, 26, 19, 21, 28, 346, 16, 438, 437, 223, 713, 614, 16, 576, 223, 465, 502, 245,
                                 80, 67, 130, 110, 323, 33, 223, 943, 225, 223, 0));
    ids_are(t, "smollm", T3, IDS(30, 85, 32, 426, 687, 81, 200, 89, 297, 314, 223, 30, 17, 85, 32, 223, 1236, 249, 228));
    wf_tokenizer_free(t);

    for (int k = 0; k < 2; k++) {
        t = load(k ? "llama_meta.json" : "llama.json");
        const char *name = k ? "llama_meta" : "llama";
        ids_are(t, name, T1, IDS(859, 444, 739, 1627, 1512, 1530, 1523, 367, 441, 444, 1459, 706, 689, 501, 1459, 468, 1608, 1464, 1462,
                                 1644, 325, 1504, 1459, 1821, 1459, 63, 127, 393, 620, 971, 738, 127, 65));
        ids_are(t, name, T2, IDS(1459, 1657, 1584, 1516, 1553, 1518, 1555, 1479, 1459, 231, 187, 153, 234, 152, 143, 1505, 1459, 1699,
                                 1700, 1701, 1459, 1492, 1638));
        if (k) ids_are(t, name, T3, IDS(1, 430, 480, 1463, 1631, 1477, 298, 316, 1459, 2, 1459, 1459, 229, 155, 134));
        else ids_are(t, name, T3, IDS(1, 1459, 430, 480, 1463, 1631, 1477, 298, 316, 1459, 2, 1459, 1459, 1459, 229, 155, 134));
        wf_tokenizer_get_info(t, &info);
        CHECK(info.bos == 1, "%s: the template's <s> is the bos, not %d", name, info.bos);
        /* decoding: ▁ as spaces, byte tokens as bytes, the first space stripped */
        char out[256];
        int32_t n = 0;
        const int32_t hello[] = {430, 480, 1463, 229, 155, 134}; /* "▁H", ..., then the bytes of U+2603 */
        CHECK(wf_tokenizer_decode(t, hello, 6, out, sizeof out, &n) == WF_OK, "%s decode", name);
        out[n] = 0;
        CHECK(!strcmp(out, "Hello\xE2\x98\x83"), "%s decodes to \"%s\"", name, out);
        const int32_t after[] = {1, 430, 480, 1463}; /* "<s>" and "▁Hello": only the first character is stripped */
        CHECK(wf_tokenizer_decode(t, after, 4, out, sizeof out, &n) == WF_OK && n == 9 && !memcmp(out, "<s> Hello", 9), "%s: %.*s", name, n, out);
        wf_tokenizer_free(t);
    }
}

/* ---- files: .wft and checkpoints keep the new kinds; save_json; encode's buffer ---- */

static void files_and_buffers(void) {
    const char *names[] = {"gpt2.json", "llama.json", "llama2c_tok.bin"};
    for (int k = 0; k < 3; k++) {
        wf_tokenizer *t = load(names[k]), *back = wf_tokenizer_create();
        uint8_t *b = NULL, *b2 = NULL;
        int32_t n = 0, n2 = 0;
        CHECK(wf_tokenizer_save(t, 0, &b, &n) == WF_OK, "%s save: %s", names[k], wf_tokenizer_error(t));
        CHECK(wf_tokenizer_load(back, b, n) == WF_OK, "%s load: %s", names[k], wf_tokenizer_error(back));
        CHECK(wf_tokenizer_save(back, 0, &b2, &n2) == WF_OK && n2 == n && !memcmp(b, b2, (size_t)n), "%s: the .wft round-trips", names[k]);
        int32_t a1[256], a2[256], c1 = 0, c2 = 0;
        wf_tokenizer_encode(t, T1, (int32_t)strlen(T1), a1, 256, &c1);
        wf_tokenizer_encode(back, T1, (int32_t)strlen(T1), a2, 256, &c2);
        CHECK(c1 == c2 && c1 > 0 && !memcmp(a1, a2, (size_t)c1 * sizeof(int32_t)), "%s: the loaded one encodes alike", names[k]);
        /* in a checkpoint */
        wf_config c;
        wf_config_default(&c);
        c.vocab_size = 2000;
        c.n_layer = 1;
        c.d_model = 16;
        c.d_ff = 32;
        c.context = 8;
        wf_model *m = wf_model_create(), *m2 = wf_model_create();
        wf_tokenizer *t3 = wf_tokenizer_create();
        uint8_t *ck = NULL;
        int32_t nck = 0;
        CHECK_OK(wf_model_init(m, &c), m);
        CHECK_OK(wf_model_save(m, t, 0, &ck, &nck), m);
        CHECK_OK(wf_model_load(m2, t3, ck, nck), m2);
        wf_tokenizer_info i1, i3;
        wf_tokenizer_get_info(t, &i1);
        wf_tokenizer_get_info(t3, &i3);
        CHECK(i1.kind == i3.kind && i1.vocab_size == i3.vocab_size && i1.bos == i3.bos, "%s: the checkpoint keeps it", names[k]);
        /* save_json: the file it came from; llama2.c has none */
        uint8_t *js = NULL;
        int32_t njs = 0;
        wf_status s = wf_tokenizer_save(t, WF_SAVE_JSON, &js, &njs);
        CHECK(k == 2 ? s == WF_ERR_UNSUPPORTED : s == WF_OK && njs > 1000 && js[njs] == 0, "%s save_json: %s", names[k],
              wf_status_string(s));
        wf_buffer_free(js);
        wf_buffer_free(ck);
        wf_buffer_free(b);
        wf_buffer_free(b2);
        wf_model_free(m);
        wf_model_free(m2);
        wf_tokenizer_free(t3);
        wf_tokenizer_free(back);
        wf_tokenizer_free(t);
    }
    /* a character with no token: ▁ and its 3 byte tokens, 4 ids for 3 bytes */
    wf_tokenizer *t = load("llama.json");
    int32_t ids[8], n = 0;
    CHECK(wf_tokenizer_encode(t, "\xE2\x98\x83", 3, ids, 3, &n) == WF_ERR_ARG && n == 4, "a short buffer learns the need: %d", n);
    CHECK(wf_tokenizer_encode(t, "\xE2\x98\x83", 3, ids, 4, &n) == WF_OK && n == 4, "then it fits");
    CHECK(wf_tokenizer_encode(t, "", 0, ids, 0, &n) == WF_OK && n == 0, "nothing: no ids");
    /* a whole book is one SentencePiece word: the heap merge, and the text back */
    int32_t len = 0;
    uint8_t *book = read_file("data/austen/pride_and_prejudice.txt", &len);
    if (len > 200000) len = 200000;
    int32_t *bids = malloc((size_t)(len + 16) * sizeof(int32_t));
    char *text = malloc((size_t)len * 4 + 16);
    CHECK(wf_tokenizer_encode(t, (const char *)book, len, bids, len + 16, &n) == WF_OK && n > len / 5 && n < len, "the book: %d ids", n);
    int32_t m = 0;
    CHECK(wf_tokenizer_decode(t, bids, n, text, len * 4 + 16, &m) == WF_OK && m == len && !memcmp(text, book, (size_t)len),
          "the book decodes back (%d of %d bytes)", m, len);
    free(bids);
    free(text);
    free(book);
    wf_tokenizer_free(t);
}

/* ---- wasmformer's BPE as a tokenizer.json ---- */

static void bpe_json(void) {
    wf_tokenizer *t = wf_tokenizer_create(), *back = wf_tokenizer_create();
    const char text[] = "the cat sat on the mat; the cat's hat. 42 + 42 = 84 \xC3\xA9\xC3\xA9\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC";
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_BPE, text, (int32_t)strlen(text), 300) == WF_OK, "train");
    uint8_t *js = NULL;
    int32_t n = 0;
    CHECK(wf_tokenizer_save(t, WF_SAVE_JSON, &js, &n) == WF_OK && (int32_t)strlen((const char *)js) == n, "save_json: %s",
          wf_tokenizer_error(t));
    CHECK(wf_tokenizer_load(back, js, n) == WF_OK, "load it back: %s", wf_tokenizer_error(back));
    uint8_t *a = NULL, *b = NULL;
    int32_t na = 0, nb = 0;
    wf_tokenizer_save(t, 0, &a, &na);
    wf_tokenizer_save(back, 0, &b, &nb);
    CHECK(tok_info(back).kind == WF_TOKENIZER_BPE && na == nb && !memcmp(a, b, (size_t)na), "it reads back as the same BPE");
    wf_buffer_free(a);
    wf_buffer_free(b);
    wf_buffer_free(js);

    /* two merges that make the same bytes ("ab"+"c" and "a"+"bc"): no tokenizer.json form */
    wf_bpe dup;
    int32_t *merges = malloc(8 * sizeof(int32_t));
    const int32_t m[8] = {'a', 'b', 'b', 'c', 256, 'c', 'a', 257};
    memcpy(merges, m, sizeof m);
    char why[160];
    CHECK(wf_bpe_build(&dup, merges, 4, why, sizeof why) == WF_OK, "build: %s", why);
    wf_tokenizer_clear(t);
    t->bpe = dup;
    t->kind = WF_TOKENIZER_BPE;
    js = NULL;
    CHECK(wf_tokenizer_save(t, WF_SAVE_JSON, &js, &n) == WF_ERR_UNSUPPORTED && js == NULL && strstr(wf_tokenizer_error(t), "258"),
          "refused: %s", wf_tokenizer_error(t));
    wf_tokenizer_free(t);
    wf_tokenizer_free(back);
}

/* ---- refusals: named, and the tokenizer as it was ---- */

static void refused(const char *json, wf_status want, const char *words) {
    wf_tokenizer *t = wf_tokenizer_create();
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_CHAR, "abc", 3, 0) == WF_OK, "setup");
    wf_status s = wf_tokenizer_load(t, (const uint8_t *)json, (int32_t)strlen(json));
    CHECK(s == want && strstr(wf_tokenizer_error(t), words), "%s: got %s \"%s\"", json, wf_status_string(s), wf_tokenizer_error(t));
    CHECK(tok_info(t).kind == WF_TOKENIZER_CHAR && tok_info(t).vocab_size == 4, "a refused file changed the tokenizer");
    wf_tokenizer_free(t);
}

#define MODEL "\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2}, \"merges\": [\"a b\"]}"

static void refusals(void) {
    refused("{" MODEL ", \"normalizer\": {\"type\": \"NFKC\"}}", WF_ERR_UNSUPPORTED, "normalizer NFKC");
    refused("{" MODEL ", \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}}", WF_ERR_UNSUPPORTED, "pre-tokenizer BertPreTokenizer");
    refused("{" MODEL ", \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"ByteLevel\"}, {\"type\": \"Digits\"}]}}",
            WF_ERR_UNSUPPORTED, "after ByteLevel");
    refused("{" MODEL ", \"decoder\": {\"type\": \"WordPiece\"}}", WF_ERR_UNSUPPORTED, "decoder WordPiece");
    refused("{" MODEL ", \"post_processor\": {\"type\": \"BertProcessing\"}}", WF_ERR_UNSUPPORTED, "post-processor BertProcessing");
    refused("{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}", WF_ERR_UNSUPPORTED, "model Unigram");
    refused("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 2}, \"merges\": []}}", WF_ERR_FORMAT, "some id has no token");
    refused("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 2, \"c\": 2}, \"merges\": []}}", WF_ERR_FORMAT, "twice");
    /* a huge id in a small file is refused before anything is sized by it */
    const double heap = wf_heap_in_use();
    refused("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 16777215}, \"merges\": []}}", WF_ERR_FORMAT, "run to 16777215");
    CHECK(wf_heap_in_use() == heap, "the refusal left %.0f bytes allocated", wf_heap_in_use() - heap);
    refused("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": [\"a b\"]}}", WF_ERR_FORMAT, "not in the vocabulary");
    refused("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": [\"a  b\"]}}", WF_ERR_FORMAT, "one space");
    refused("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"a\": 1}, \"merges\": []}}", WF_ERR_FORMAT, "same token");
    refused("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": -1}, \"merges\": []}}", WF_ERR_FORMAT, "no id");
    refused("{" MODEL ", \"added_tokens\": [{\"id\": 1, \"content\": \"zz\"}]}", WF_ERR_FORMAT, "another token");
    refused("{" MODEL ", \"added_tokens\": [{\"id\": 3, \"content\": \"zz\", \"rstrip\": true}]}", WF_ERR_UNSUPPORTED, "rstrip");
    refused("[1, 2]", WF_ERR_FORMAT, "not a JSON object");
    refused("{\"model\": ", WF_ERR_FORMAT, "tokenizer.json");
    /* llama2.c: what run.c's encoder needs */
    wf_tokenizer *t = wf_tokenizer_create();
    uint8_t small[4 + 9 * 3] = {4, 0, 0, 0};
    for (int i = 0; i < 3; i++) {
        small[4 + 9 * i + 4] = 1;
        small[4 + 9 * i + 8] = (uint8_t)('a' + i);
    }
    CHECK(wf_tokenizer_load(t, small, sizeof small) == WF_ERR_FORMAT && strstr(wf_tokenizer_error(t), "259"),
          "too few tokens: %s", wf_tokenizer_error(t));
    small[4 + 4] = 9; /* a length beyond max_token_length */
    CHECK(wf_tokenizer_load(t, small, sizeof small) == WF_ERR_FORMAT && strstr(wf_tokenizer_error(t), "max_token_length"),
          "%s", wf_tokenizer_error(t));
    CHECK(wf_tokenizer_load(t, small, 2) == WF_ERR_FORMAT, "shorter than the header");
    CHECK(tok_info(t).kind == WF_TOKENIZER_NONE, "still empty");
    wf_tokenizer_free(t);
}

/* ---- generation's text: wf_model_gen_next writes each token's bytes ---- */

/* For each kind: the tokens are those of a generation without a tokenizer (its ids all fit),
 * and each token's text is the bytes decoding [prev, id] adds to decoding [prev]; joined, they
 * are the generated ids' text. A too small buffer or an empty tokenizer changes nothing. */
static void generation_text(void) {
    const char *names[] = {"llama.json", "llama2c_tok.bin", "gpt2.json", NULL};
    for (int k = 0; k < 4; k++) {
        wf_tokenizer *t;
        if (names[k]) t = load(names[k]);
        else {
            t = wf_tokenizer_create();
            CHECK(wf_tokenizer_train(t, WF_TOKENIZER_CHAR, T1, (int32_t)strlen(T1), 0) == WF_OK, "char");
        }
        const wf_tokenizer_info ti = tok_info(t);
        wf_config c;
        wf_config_default(&c);
        c.vocab_size = ti.vocab_size;
        c.d_model = 16;
        c.n_head = 2;
        c.d_ff = 32;
        c.n_layer = 1;
        c.context = 24; /* 40 tokens: the window slides */
        wf_model *m = wf_model_create();
        CHECK_OK(wf_model_init(m, &c), m);
        int32_t prompt[8], n_prompt = 0;
        CHECK(wf_tokenizer_encode(t, "It is", 5, prompt, 8, &n_prompt) == WF_OK && n_prompt > 0, "%s: prompt", wf_tokenizer_error(t));
        const wf_sampling smp = {.temperature = 1, .top_k = 0, .top_p = 1, .n_vocab = 0, .no_unk = 0};
        enum { N = 40 };
        int32_t plain[N], ids[N + 1], n_text = -1;
        CHECK_OK(generate(m, prompt, n_prompt, N, &smp, 7, plain), m);
        const int32_t cap = 2 * ti.max_bytes;
        char *text = malloc((size_t)cap), *want = malloc((size_t)cap), *joined = malloc((size_t)N * cap);
        size_t n_joined = 0;
        CHECK_OK(wf_model_gen_start(m, prompt, n_prompt, 7), m);
        CHECK(wf_model_gen_next(m, &smp, t, &ids[0], text, cap - 1, &n_text) == WF_ERR_ARG, "a buffer under 2 x max_bytes");
        wf_tokenizer *empty = wf_tokenizer_create();
        CHECK(wf_model_gen_next(m, &smp, empty, &ids[0], text, cap, &n_text) == WF_ERR_STATE, "an empty tokenizer");
        wf_tokenizer_free(empty);
        int32_t prev = prompt[n_prompt - 1];
        for (int i = 0; i < N; i++) {
            CHECK_OK(wf_model_gen_next(m, &smp, t, &ids[i], text, cap, &n_text), m);
            CHECK(ids[i] == plain[i], "%s: token %d is %d, without a tokenizer %d", names[k] ? names[k] : "char", i, ids[i], plain[i]);
            const int32_t pair[2] = {prev, ids[i]};
            int32_t a = 0, b = 0;
            char *both = malloc((size_t)cap);
            wf_tokenizer_decode(t, pair, 1, want, cap, &a);
            wf_tokenizer_decode(t, pair, 2, both, cap, &b);
            CHECK(n_text == b - a && !memcmp(text, both + a, (size_t)n_text), "%s: token %d's text", names[k] ? names[k] : "char", i);
            free(both);
            memcpy(joined + n_joined, text, (size_t)n_text);
            n_joined += (size_t)n_text;
            prev = ids[i];
        }
        /* joined, the pieces are the text of prev + ids less prev's (decoders that act on the
         * text's ends aside: the fixtures' own decoding in context is what each piece is) */
        if (ti.kind == WF_TOKENIZER_CHAR || ti.kind == WF_TOKENIZER_BPE || k == 2) {
            char *all = malloc((size_t)(N + 1) * cap);
            int32_t n_all = 0;
            ids[N] = 0;
            CHECK(wf_tokenizer_decode(t, ids, N, all, (N + 1) * cap, &n_all) == WF_OK, "decode all");
            CHECK((size_t)n_all == n_joined && !memcmp(all, joined, n_joined), "%s: the pieces are the text",
                  names[k] ? names[k] : "char");
            free(all);
        }
        /* a token before the next that the tokenizer does not know: refused before the draw,
         * so the next call without the tokenizer draws what it would have */
        if (!names[k]) {
            c.vocab_size = ti.vocab_size + 4;
            CHECK_OK(wf_model_init(m, &c), m);
            const int32_t odd[2] = {1, ti.vocab_size + 2};
            int32_t a, b;
            CHECK_OK(wf_model_gen_start(m, odd, 2, 3), m);
            CHECK(wf_model_gen_next(m, &smp, t, &a, text, cap, &n_text) == WF_ERR_TOKEN, "%s", wf_model_error(m));
            CHECK_OK(wf_model_gen_next(m, &smp, NULL, &a, NULL, 0, NULL), m);
            CHECK_OK(wf_model_gen_start(m, odd, 2, 3), m);
            CHECK_OK(wf_model_gen_next(m, &smp, NULL, &b, NULL, 0, NULL), m);
            CHECK(a == b, "the refused call drew nothing: %d, %d", a, b);
        }
        free(text);
        free(want);
        free(joined);
        wf_model_free(m);
        wf_tokenizer_free(t);
    }
}

int main(void) {
    merger_matches_the_plain_rule();
    generation_text();
    fixture_ids();
    files_and_buffers();
    bpe_json();
    refusals();
    return check_summary("test_hf_tokenizer");
}
