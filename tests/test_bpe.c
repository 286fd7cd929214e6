/* Byte-level BPE: merges worked out by hand (including the tie-break), chunk boundaries,
 * exact round trips of random bytes, invalid UTF-8 and Pride and Prejudice, determinism,
 * the vocabulary size, errors, and hostile tokenizer files. */
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "wasmformer.h"

static int32_t encode(wf_tokenizer *t, const char *s, int32_t len, int32_t *ids, int32_t cap) {
    int32_t n = -1;
    wf_status st = wf_tokenizer_encode(t, s, len, ids, cap, &n);
    return st == WF_OK ? n : -1;
}

/* Encodes and decodes bytes; 1 when they come back exactly. */
static int round_trips(wf_tokenizer *t, const char *s, int32_t len) {
    int32_t *ids = malloc((len + 1) * sizeof(int32_t));
    int32_t n = encode(t, s, len, ids, len);
    int32_t cap = (n > 0 ? n : 1) * tok_info(t).max_bytes, back_len = -1;
    char *back = malloc(cap + 1);
    int ok = n >= 0 && n <= len && wf_tokenizer_decode(t, ids, n, back, cap, &back_len) == WF_OK && back_len == len &&
             !memcmp(back, s, len);
    free(ids);
    free(back);
    return ok;
}

static int same_ids(const int32_t *a, int32_t na, const int32_t *b, int32_t nb) {
    return na == nb && !memcmp(a, b, na * sizeof(int32_t));
}

static char *read_novel(int32_t *len) {
    FILE *f = fopen("data/austen/pride_and_prejudice.txt", "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(size);
    *len = (int32_t)fread(b, 1, size, f);
    fclose(f);
    return b;
}

static uint8_t *save_tok(wf_tokenizer *t, int32_t *n) {
    uint8_t *b = NULL;
    CHECK(wf_tokenizer_save(t, 0, &b, n) == WF_OK, "save: %s", wf_tokenizer_error(t));
    return b;
}

static void test_by_hand(void) {
    wf_tokenizer *t = wf_tokenizer_create();
    int32_t ids[64], n;
    /* chunks "ab", " ab", " ab": (a,b) occurs 3 times -> 256; then (' ', 256) twice -> 257;
     * then no pair occurs twice, so training stops short of the 1000 asked for */
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_BPE, "ab ab ab", 8, 1000) == WF_OK, "%s", wf_tokenizer_error(t));
    CHECK(tok_info(t).kind == WF_TOKENIZER_BPE && tok_info(t).vocab_size == 258, "vocab %d", tok_info(t).vocab_size);
    n = encode(t, "ab ab", 5, ids, 64);
    CHECK(n == 2 && ids[0] == 256 && ids[1] == 257, "ab ab -> %d ids: %d %d", n, ids[0], ids[1]);
    /* ties: "xy", " xy", " yx", " yx" gives (' ',y) = (x,y) = (y,x) = 2; the smallest left id
     * wins: 256 = " y". Then (x,y) = (256,x) = 2: 257 = "xy". Then 258 = " yx" (256, x). */
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_BPE, "xy xy yx yx", 11, 300) == WF_OK, "%s", wf_tokenizer_error(t));
    CHECK(tok_info(t).vocab_size == 259, "vocab %d", tok_info(t).vocab_size);
    n = encode(t, "xy yx xy", 8, ids, 64);
    CHECK(n == 4 && ids[0] == 257 && ids[1] == 258 && ids[2] == ' ' && ids[3] == 257,
          "xy yx xy -> %d: %d %d %d %d", n, ids[0], ids[1], ids[2], ids[3]);
    char out[64];
    int32_t len;
    int32_t one = 258;
    CHECK(wf_tokenizer_decode(t, &one, 1, out, 64, &len) == WF_OK && len == 3 && !memcmp(out, " yx", 3), "258 is \" yx\"");
    CHECK(tok_info(t).max_bytes == 3, "longest token %d", tok_info(t).max_bytes);
    /* merges never cross chunks: letters and punctuation alternate, so no pair is inside one */
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_BPE, "a.a.a.a.a.a.", 12, 300) == WF_OK && tok_info(t).vocab_size == 256,
          "no merge across chunks: vocab %d", tok_info(t).vocab_size);
    /* a whitespace run leaves its last space to the word after it: "  cat\n cat" is
     * " ", " cat", "\n", " cat", so " cat" occurs twice and becomes one token */
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_BPE, "  cat\n cat", 10, 300) == WF_OK, "%s", wf_tokenizer_error(t));
    n = encode(t, " cat", 4, ids, 64);
    CHECK(n == 1, "\" cat\" is one token after training on \"  cat\\n cat\": %d ids", n);
    /* 256: only the bytes */
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_BPE, "hello hello", 11, 256) == WF_OK && tok_info(t).vocab_size == 256, "256 = bytes only");
    n = encode(t, "hi\xFF", 3, ids, 64);
    CHECK(n == 3 && ids[0] == 'h' && ids[1] == 'i' && ids[2] == 0xFF, "bytes are their own ids");
    wf_tokenizer_free(t);
}

static void test_errors(void) {
    wf_tokenizer *t = wf_tokenizer_create();
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_BPE, "abc", 3, 255) == WF_ERR_ARG && strstr(wf_tokenizer_error(t), "256"), "vocab below 256");
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_BPE, "abc", 3, (1 << 20) + 1) == WF_ERR_ARG, "vocab above 2^20");
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_BPE, "", 0, 300) == WF_ERR_ARG, "empty text");
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_BPE, NULL, 3, 300) == WF_ERR_ARG, "NULL text");
    CHECK(tok_info(t).kind == WF_TOKENIZER_NONE && tok_info(t).max_bytes == 0, "still empty");
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_BPE, "abab abab", 9, 260) == WF_OK, "train");
    int32_t ids[4], n, bad = 260, len;
    char out[8];
    CHECK(wf_tokenizer_encode(t, "abab abab", 9, ids, 2, &n) == WF_ERR_ARG, "encode buffer too small");
    CHECK(wf_tokenizer_decode(t, &bad, 1, out, 8, &len) == WF_ERR_TOKEN, "decode id == vocab size");
    bad = -1;
    CHECK(wf_tokenizer_decode(t, &bad, 1, out, 8, &len) == WF_ERR_TOKEN, "decode id -1");
    int32_t v = tok_info(t).vocab_size;
    CHECK(v > 256, "learned merges");
    ids[0] = v - 1;
    CHECK(wf_tokenizer_decode(t, ids, 1, out, 1, &len) == WF_ERR_ARG, "decode buffer too small");
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_BPE, "x", 1, 100) == WF_ERR_ARG && tok_info(t).vocab_size == v, "a failed retrain keeps the vocabulary");
    /* retraining as char replaces BPE and back */
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_CHAR, "xyz", 3, 0) == WF_OK && tok_info(t).kind == WF_TOKENIZER_CHAR &&
          tok_info(t).vocab_size == 4 && tok_info(t).max_bytes == 4, "char after bpe");
    wf_tokenizer_free(t);
}

static void test_round_trips(const char *novel, int32_t novel_len) {
    wf_tokenizer *t = wf_tokenizer_create();
    clock_t c0 = clock();
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_BPE, novel, novel_len, 1024) == WF_OK, "%s", wf_tokenizer_error(t));
    double secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
    CHECK(tok_info(t).vocab_size == 1024, "vocab size honoured: %d", tok_info(t).vocab_size);
    int32_t *ids = malloc(novel_len * sizeof(int32_t));
    int32_t n = encode(t, novel, novel_len, ids, novel_len);
    printf("Pride and Prejudice (%d bytes): BPE 1024 trained in %.3f s (native, one run), %d tokens, %.3f tokens/byte, "
           "longest token %d bytes\n", novel_len, secs, n, (double)n / novel_len, tok_info(t).max_bytes);
    CHECK(n > 0 && n < novel_len / 2, "BPE compresses the novel at least 2x: %d tokens for %d bytes", n, novel_len);
    CHECK(round_trips(t, novel, novel_len), "the novel round-trips");

    /* any bytes: random buffers, every byte value, invalid UTF-8 of every kind */
    uint32_t x = 7;
    char *buf = malloc(5000);
    int all_ok = 1;
    for (int trial = 0; trial < 200; trial++) {
        int32_t len = trial < 100 ? trial : (int32_t)(x % 5000);
        for (int32_t i = 0; i < len; i++) {
            x = x * 1664525u + 1013904223u;
            /* half the trials: mostly text with noise; half: uniform bytes */
            buf[i] = trial % 2 ? (char)(x >> 24) : (x >> 28) < 2 ? (char)(x >> 16) : novel[(x >> 8) % novel_len];
        }
        all_ok &= round_trips(t, buf, len);
    }
    CHECK(all_ok, "200 random byte strings round-trip");
    for (int i = 0; i < 256; i++) buf[i] = (char)i;
    CHECK(round_trips(t, buf, 256), "every byte value");
    const char bad_utf8[] = "caf\xC3" " \x80\x80\xBF overlong \xC0\xAF \xE0\x80\xAF surrogate \xED\xA0\x80 "
                            "too big \xF4\x90\x80\x80 \xF5\xFF\xFE truncated \xE2\x82 \xF0\x9F\x98 end\xC3";
    CHECK(round_trips(t, bad_utf8, (int32_t)sizeof bad_utf8 - 1), "invalid UTF-8 round-trips");
    /* long runs: chunks are cut at 64 bytes (at a character boundary when one is near) */
    memset(buf, 'a', 4000);
    CHECK(round_trips(t, buf, 4000), "4000 letters");
    for (int i = 0; i < 3000; i += 3) memcpy(buf + i, "\xE2\x9C\x93", 3); /* ✓ x 1000, no spaces */
    CHECK(round_trips(t, buf, 3000), "1000 three-byte characters without a space");
    /* a BPE trained on random bytes still round-trips other random bytes */
    for (int i = 0; i < 5000; i++) {
        x = x * 1664525u + 1013904223u;
        buf[i] = (char)(x >> 24);
    }
    wf_tokenizer *r = wf_tokenizer_create();
    CHECK(wf_tokenizer_train(r, WF_TOKENIZER_BPE, buf, 5000, 400) == WF_OK, "train on random bytes");
    CHECK(round_trips(r, novel, 20000) && round_trips(r, buf + 1, 4999), "random-byte BPE round-trips");
    wf_tokenizer_free(r);
    free(buf);
    free(ids);
    wf_tokenizer_free(t);
}

static void test_determinism_and_sizes(const char *novel, int32_t novel_len) {
    int32_t sizes[] = {256, 300, 512, 2048, 4096};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        wf_tokenizer *a = wf_tokenizer_create(), *b = wf_tokenizer_create();
        char *copy = malloc(novel_len);
        memcpy(copy, novel, novel_len);
        CHECK(wf_tokenizer_train(a, WF_TOKENIZER_BPE, novel, novel_len, sizes[i]) == WF_OK, "train %d", sizes[i]);
        CHECK(wf_tokenizer_train(b, WF_TOKENIZER_BPE, copy, novel_len, sizes[i]) == WF_OK, "train %d again", sizes[i]);
        CHECK(tok_info(a).vocab_size == sizes[i], "vocab %d, asked %d", tok_info(a).vocab_size, sizes[i]);
        int32_t na, nb;
        uint8_t *fa = save_tok(a, &na), *fb = save_tok(b, &nb);
        CHECK(na == nb && !memcmp(fa, fb, na), "same text, same merges (vocab %d)", sizes[i]);
        /* the merges of a smaller vocabulary are a prefix of a larger one's */
        if (i > 0) {
            wf_tokenizer *small = wf_tokenizer_create();
            wf_tokenizer_train(small, WF_TOKENIZER_BPE, novel, novel_len, sizes[i - 1]);
            int32_t ns;
            uint8_t *fs = save_tok(small, &ns);
            CHECK(!memcmp(fs + 32, fa + 32, ns - 36), "vocab %d's merges start with vocab %d's", sizes[i], sizes[i - 1]);
            free(fs);
            wf_tokenizer_free(small);
        }
        /* save, load: the same ids for the whole novel */
        wf_tokenizer *c = wf_tokenizer_create();
        CHECK(wf_tokenizer_load(c, fa, na) == WF_OK, "load: %s", wf_tokenizer_error(c));
        int32_t *ia = malloc(novel_len * sizeof(int32_t)), *ic = malloc(novel_len * sizeof(int32_t));
        int32_t ka = encode(a, novel, novel_len, ia, novel_len), kc = encode(c, novel, novel_len, ic, novel_len);
        CHECK(same_ids(ia, ka, ic, kc), "a loaded BPE encodes the novel identically (vocab %d)", sizes[i]);
        free(ia);
        free(ic);
        free(fa);
        free(fb);
        free(copy);
        wf_tokenizer_free(a);
        wf_tokenizer_free(b);
        wf_tokenizer_free(c);
    }
}

/* ---- a slow, obviously correct trainer, written from the spec in bpe.c's header ---- */

static int ref_class(uint8_t b) {
    if ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || b >= 0x80) return 0;
    if (b >= '0' && b <= '9') return 1;
    if (b == ' ' || b == '\t' || b == '\n' || b == '\v' || b == '\f' || b == '\r') return 2;
    return 3;
}

static size_t ref_chunk(const uint8_t *s, size_t len) {
    size_t start = 0;
    if (s[0] == ' ' && len > 1 && ref_class(s[1]) != 2) start = 1; /* " word" */
    int c = ref_class(s[start]);
    size_t j = start;
    while (j < len && ref_class(s[j]) == c) j++;
    if (c == 2 && j < len && j >= 2 && s[j - 1] == ' ') j--;
    if (j > 64) { /* cut at 64, or up to 3 bytes earlier at the start of a UTF-8 character */
        j = 64;
        for (size_t k = 64; k >= 61; k--)
            if ((s[k] & 0xC0) != 0x80) { j = k; break; }
    }
    return j;
}

/* Merges by recounting every pair of every chunk occurrence in a dense V x V table each
 * round; ties to the smallest (left, right). Returns the number of merges. */
static int32_t ref_train(const uint8_t *text, int32_t len, int32_t vocab, int32_t *merges) {
    int32_t *ids = malloc(len * sizeof(int32_t)), *chunk = malloc(len * sizeof(int32_t)), n = len, c = 0;
    for (size_t pos = 0; pos < (size_t)len; c++) {
        size_t k = ref_chunk(text + pos, len - pos);
        for (size_t i = 0; i < k; i++) {
            ids[pos + i] = text[pos + i];
            chunk[pos + i] = c;
        }
        pos += k;
    }
    int64_t *count = malloc((size_t)vocab * vocab * sizeof(int64_t));
    int32_t made = 0;
    while (256 + made < vocab) {
        memset(count, 0, (size_t)vocab * vocab * sizeof(int64_t));
        for (int32_t i = 0; i + 1 < n; i++)
            if (chunk[i] == chunk[i + 1]) count[(size_t)ids[i] * vocab + ids[i + 1]]++;
        int64_t best = 1;
        int32_t ba = -1, bb = -1;
        for (int32_t a = 0; a < 256 + made; a++)
            for (int32_t b = 0; b < 256 + made; b++)
                if (count[(size_t)a * vocab + b] > best) {
                    best = count[(size_t)a * vocab + b];
                    ba = a;
                    bb = b;
                }
        if (ba < 0) break; /* no pair occurs twice */
        int32_t o = 0;
        for (int32_t i = 0; i < n;) {
            if (i + 1 < n && chunk[i] == chunk[i + 1] && ids[i] == ba && ids[i + 1] == bb) {
                chunk[o] = chunk[i];
                ids[o++] = 256 + made;
                i += 2;
            } else {
                chunk[o] = chunk[i];
                ids[o++] = ids[i++];
            }
        }
        n = o;
        merges[2 * made] = ba;
        merges[2 * made + 1] = bb;
        made++;
    }
    free(ids);
    free(chunk);
    free(count);
    return made;
}

static void test_against_reference(const char *novel, int32_t novel_len) {
    /* a slice of the novel, a text with long runs and invalid UTF-8, and noisy bytes */
    char *noisy = malloc(6000);
    uint32_t x = 99;
    for (int i = 0; i < 6000; i++) {
        x = x * 1664525u + 1013904223u;
        noisy[i] = (x >> 29) == 0 ? (char)(x >> 16) : "ab  ba\n\xC3\xA9\xE2\x9C\x93 12, ;"[(x >> 8) % 18];
    }
    char *runs = malloc(3000);
    for (int i = 0; i < 3000; i++) runs[i] = i % 700 < 500 ? "aab"[i % 3] : i % 700 < 600 ? ' ' : (char)(0x80 + i % 3);
    struct { const char *text; int32_t len; int32_t vocab; const char *name; } cases[] = {
        {novel + 100000, 30000, 420, "30 KB of the novel"},
        {noisy, 6000, 380, "noisy bytes"},
        {runs, 3000, 330, "long runs"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int32_t *want = malloc(2 * cases[i].vocab * sizeof(int32_t));
        int32_t n_want = ref_train((const uint8_t *)cases[i].text, cases[i].len, cases[i].vocab, want);
        wf_tokenizer *t = wf_tokenizer_create();
        CHECK(wf_tokenizer_train(t, WF_TOKENIZER_BPE, cases[i].text, cases[i].len, cases[i].vocab) == WF_OK, "train");
        int32_t nf;
        uint8_t *f = save_tok(t, &nf);
        int32_t n_got = (nf - 36) / 8, same = n_got == n_want;
        for (int32_t k = 0; same && k < 2 * n_got; k++) {
            const uint8_t *p = f + 32 + 4 * k;
            same = (int32_t)(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24) == want[k];
        }
        CHECK(same, "%s: the merges equal the reference trainer's (%d vs %d merges)", cases[i].name, n_got, n_want);
        CHECK(n_want > 30, "%s: the case exercises many merges (%d)", cases[i].name, n_want);
        free(f);
        free(want);
        wf_tokenizer_free(t);
    }
    free(noisy);
    free(runs);
}

static void wr32(uint8_t *b, uint32_t v) { b[0] = v; b[1] = v >> 8; b[2] = v >> 16; b[3] = v >> 24; }

static uint32_t crc32_ref(const uint8_t *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
    }
    return ~c;
}

/* A BPE tokenizer file with the given merges (header and checksum right). */
static uint8_t *bpe_file(const int32_t *merges, int32_t n, uint32_t pre, int32_t *size) {
    int32_t len = 24 + 8 + 8 * n + 4;
    uint8_t *b = calloc(len, 1);
    memcpy(b, "WFTK", 4);
    wr32(b + 4, 1);
    wr32(b + 8, 2);
    wr32(b + 16, (uint32_t)len);
    wr32(b + 24, pre);
    wr32(b + 28, (uint32_t)n);
    for (int32_t i = 0; i < 2 * n; i++) wr32(b + 32 + 4 * i, (uint32_t)merges[i]);
    wr32(b + len - 4, crc32_ref(b, len - 4));
    *size = len;
    return b;
}

static void test_hostile_files(void) {
    wf_tokenizer *t = wf_tokenizer_create();
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_BPE, "hello there, hello", 18, 270) == WF_OK, "train");
    int32_t n0;
    uint8_t *before = save_tok(t, &n0);
    int32_t size;
    uint8_t *f;
    struct { int32_t merges[16]; int32_t n; uint32_t pre; wf_status want; const char *needle; } cases[] = {
        {{'a', 'b', 256, 'c'}, 2, 1, WF_OK, ""},
        {{'a', 'b', 257, 'c'}, 2, 1, WF_ERR_FORMAT, "below 257"},       /* refers to itself */
        {{'a', 'b', 300, 'c'}, 2, 1, WF_ERR_FORMAT, "below 257"},       /* a later token */
        {{'a', -5}, 1, 1, WF_ERR_FORMAT, "below 256"},
        {{'a', 'b', 'a', 'b'}, 2, 1, WF_ERR_FORMAT, "repeats"},
        /* doubling: 2, 4, 8, 16, 32, 64 bytes fit, 128 does not */
        {{'a', 'a', 256, 256, 257, 257, 258, 258, 259, 259, 260, 260, 261, 261}, 7, 1, WF_ERR_FORMAT, "128 bytes"},
        {{'a', 'b'}, 1, 2, WF_ERR_UNSUPPORTED, "pretokenizer 2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        f = bpe_file(cases[i].merges, cases[i].n, cases[i].pre, &size);
        wf_status s = wf_tokenizer_load(t, f, size);
        CHECK(s == cases[i].want && strstr(wf_tokenizer_error(t), cases[i].needle), "case %zu: %s: %s", i,
              wf_status_string(s), wf_tokenizer_error(t));
        if (s != WF_OK) {
            int32_t n1;
            uint8_t *now = save_tok(t, &n1);
            CHECK(n1 == n0 && !memcmp(now, before, n0), "case %zu changed the tokenizer", i);
            free(now);
        } else {
            wf_tokenizer_load(t, before, n0);
        }
        free(f);
    }
    /* counts that disagree with the bytes present, absurd counts */
    int32_t m[2] = {'a', 'b'};
    f = bpe_file(m, 1, 1, &size);
    wr32(f + 28, 0xFFFFFFFFu);
    wr32(f + size - 4, crc32_ref(f, size - 4));
    CHECK(wf_tokenizer_load(t, f, size) == WF_ERR_FORMAT && strstr(wf_tokenizer_error(t), "merges but"), "absurd merge count");
    wr32(f + 28, 2);
    wr32(f + size - 4, crc32_ref(f, size - 4));
    CHECK(wf_tokenizer_load(t, f, size) == WF_ERR_FORMAT, "merge count above the bytes present");
    free(f);
    /* every truncation and flip of a real BPE file */
    int32_t good_n;
    wf_tokenizer *src = wf_tokenizer_create();
    wf_tokenizer_train(src, WF_TOKENIZER_BPE, "the cat sat on the mat with the hat", 35, 300);
    uint8_t *good = save_tok(src, &good_n), *b = malloc(good_n);
    for (int32_t len = 0; len < good_n; len++) {
        memcpy(b, good, len);
        CHECK(wf_tokenizer_load(t, b, len) != WF_OK, "truncated to %d", len);
    }
    for (int32_t i = 0; i < good_n; i++) {
        memcpy(b, good, good_n);
        b[i] ^= 0x21;
        CHECK(wf_tokenizer_load(t, b, good_n) != WF_OK, "byte %d flipped", i);
    }
    int32_t n1;
    uint8_t *now = save_tok(t, &n1);
    CHECK(n1 == n0 && !memcmp(now, before, n0), "failed loads changed nothing");
    free(now);
    free(b);
    free(good);
    free(before);
    wf_tokenizer_free(src);
    wf_tokenizer_free(t);
}

/* A BPE tokenizer inside a checkpoint, with a model whose vocabulary fits it. */
static void test_in_checkpoint(const char *novel, int32_t novel_len) {
    wf_tokenizer *t = wf_tokenizer_create();
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_BPE, novel, novel_len / 4, 300) == WF_OK, "train");
    wf_config c;
    wf_config_default(&c);
    c.vocab_size = 300;
    c.n_layer = 1;
    c.d_model = 16;
    c.n_head = 2;
    c.d_ff = 32;
    c.context = 16;
    wf_model *m = wf_model_create();
    CHECK_OK(wf_model_init(m, &c), m);
    uint8_t *buf;
    int32_t n;
    CHECK_OK(wf_model_save(m, t, 0, &buf, &n), m);
    wf_model *e = wf_model_create();
    wf_tokenizer *te = wf_tokenizer_create();
    CHECK_OK(wf_model_load(e, te, buf, n), e);
    CHECK(tok_info(te).kind == WF_TOKENIZER_BPE && tok_info(te).vocab_size == 300, "BPE tokenizer from the checkpoint");
    CHECK(round_trips(te, novel, 10000), "and it round-trips");
    wf_buffer_free(buf);
    c.vocab_size = 299;
    wf_model *narrow = wf_model_create();
    CHECK_OK(wf_model_init(narrow, &c), narrow);
    CHECK(wf_model_save(narrow, t, 0, &buf, &n) == WF_ERR_STATE, "a 300-token BPE does not fit a 299-token model");
    wf_model_free(narrow);
    wf_model_free(m);
    wf_model_free(e);
    wf_tokenizer_free(te);
    wf_tokenizer_free(t);
}

/* --dump dir: writes the BPE of 1024 tokens learned from the novel, for the wasm build to
 * reproduce byte for byte (tests/js/tokenizer.test.mjs). */
static int dump(const char *dir, const char *novel, int32_t novel_len) {
    wf_tokenizer *t = wf_tokenizer_create();
    if (!novel || wf_tokenizer_train(t, WF_TOKENIZER_BPE, novel, novel_len, 1024) != WF_OK) return 1;
    int32_t n;
    uint8_t *b = save_tok(t, &n);
    char path[1024];
    snprintf(path, sizeof path, "%s/bpe1024.wft", dir);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(b, 1, n, f) == (size_t)n;
    if (f) fclose(f);
    free(b);
    wf_tokenizer_free(t);
    return ok ? 0 : 1;
}

int main(int argc, char **argv) {
    int32_t novel_len = 0;
    char *novel = read_novel(&novel_len);
    if (argc == 3 && !strcmp(argv[1], "--dump")) return dump(argv[2], novel, novel_len);
    CHECK(novel != NULL, "bundled corpus missing (run from the repository root)");
    test_by_hand();
    test_errors();
    test_hostile_files();
    if (novel) {
        test_against_reference(novel, novel_len);
        test_round_trips(novel, novel_len);
        test_determinism_and_sizes(novel, novel_len);
        test_in_checkpoint(novel, novel_len);
    }
    free(novel);
    return check_summary("test_bpe");
}
