#define _GNU_SOURCE /* memmem */
/* GGUF files (src/gguf*.c): a Llama-shaped model written and read back in float32, Q8_0 and
 * Q4_0 gives the same weights, logits and generations bit for bit; its tokenizer (none: a
 * placeholder vocabulary; llama2.c's SentencePiece; a byte-level BPE tokenizer.json) comes
 * back encoding alike; and hostile files (every truncation, byte flips, absurd counts, other
 * architectures and types) are refused with a message, the model unchanged. */
#include <stdlib.h>

#include "check.h"
#include "model_state.h"

static wf_config llama(void) {
    wf_config c;
    wf_config_default(&c);
    c.norm = WF_NORM_RMSNORM;
    c.activation = WF_ACT_SWIGLU;
    c.positions = WF_POS_ROPE;
    c.bias = 0;
    c.vocab_size = 300;
    c.context = 32;
    c.n_layer = 2;
    c.n_head = 4;
    c.n_kv_head = 2;
    c.d_model = 64;
    c.d_ff = 96;
    c.rope_theta = 500;
    c.norm_eps = 1e-6f;
    return c;
}

static int32_t in[32], tg[32];

static float loss_of(wf_model *m) {
    float l = 0;
    CHECK_OK(forward_ids(m, in, tg, 2, 16, &l), m);
    return l;
}

static uint8_t *gguf_of(wf_model *m, const wf_tokenizer *t, int32_t *n) {
    uint8_t *buf = NULL;
    CHECK_OK(wf_model_save(m, t, WF_SAVE_GGUF, &buf, n), m);
    return buf;
}

static uint8_t *read_all(const char *path, int32_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = (int32_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)*n);
    CHECK(fread(b, 1, (size_t)*n, f) == (size_t)*n, "read %s", path);
    fclose(f);
    return b;
}

static void test_round_trip(void) {
    wf_config c = llama();
    for (int i = 0; i < 32; i++) in[i] = (i * 37 + 5) % c.vocab_size, tg[i] = (i * 11 + 1) % c.vocab_size;
    for (int tied = 0; tied < 2; tied++)
        for (int type = 0; type < 3; type++) {
            c.tied_head = tied;
            wf_model *m = wf_model_create(), *b = wf_model_create();
            CHECK_OK(wf_model_init(m, &c), m);
            CHECK_OK(wf_model_quantize(m, type), m);
            int32_t n;
            uint8_t *buf = gguf_of(m, NULL, &n);
            CHECK(n > 24 && !memcmp(buf, "GGUF", 4), "the file starts GGUF");
            wf_tokenizer *tok = wf_tokenizer_create(); /* the placeholder vocabulary reads back, byte by byte */
            CHECK_OK(wf_model_load(b, tok, buf, n), b);
            int32_t ids[16], nid = 0;
            CHECK(wf_tokenizer_encode(tok, "Hi", 2, ids, 16, &nid) == WF_OK && nid == 3 && ids[0] == 259 &&
                      ids[1] == 'H' + 3 && ids[2] == 'i' + 3,
                  "the placeholder vocabulary encodes \"Hi\" as its space and two bytes (%d ids)", nid);
            wf_tokenizer_free(tok);
            wf_config got;
            wf_model_get_config(b, &got);
            CHECK(!memcmp(&got, &c, sizeof c) || (got.seed != c.seed), "type %d tied %d: the config comes back", type, tied);
            CHECK(model_info(b).memory.params == model_info(m).memory.params, "type %d: the same weights' bytes", type);
            const float l1 = loss_of(m), l2 = loss_of(b);
            CHECK(!memcmp(&l1, &l2, sizeof l1), "type %d tied %d: loss %.9g after the round trip, %.9g before", type, tied, l2, l1);
            int32_t g1[6], g2[6];
            const wf_sampling greedy = {.temperature = 0, .top_p = 1};
            CHECK_OK(generate(m, in, 5, 6, &greedy, 1, g1), m);
            CHECK_OK(generate(b, in, 5, 6, &greedy, 1, g2), b);
            CHECK(!memcmp(g1, g2, sizeof g1), "type %d: the same generation", type);
            /* written again: the same bytes */
            int32_t n2;
            uint8_t *again = gguf_of(b, NULL, &n2);
            CHECK(n2 == n && !memcmp(again, buf, (size_t)n), "type %d tied %d: read and written again, the same file", type, tied);
            wf_buffer_free(again);
            wf_buffer_free(buf);
            wf_model_free(m);
            wf_model_free(b);
        }
}

/* Encodes alike: a text through t and through the tokenizer a GGUF file of m and t gives back. */
static void tokenizer_round_trip(const char *what, wf_tokenizer *t, wf_config c) {
    wf_model *m = wf_model_create(), *b = wf_model_create();
    wf_tokenizer *back = wf_tokenizer_create();
    CHECK_OK(wf_model_init(m, &c), m);
    int32_t n;
    uint8_t *buf = gguf_of(m, t, &n);
    CHECK_OK(wf_model_load(b, back, buf, n), b);
    static const char text[] = "It is a truth universally acknowledged, that 12 men in 1813 were <|end|> here.";
    int32_t a[256], z[256], na = 0, nz = 0;
    CHECK(wf_tokenizer_encode(t, text, (int32_t)strlen(text), a, 256, &na) == WF_OK, "%s: encode", what);
    CHECK(wf_tokenizer_encode(back, text, (int32_t)strlen(text), z, 256, &nz) == WF_OK, "%s: encode back: %s", what,
          wf_tokenizer_error(back));
    CHECK(na == nz && !memcmp(a, z, (size_t)na * 4), "%s: %d ids, back %d, differ", what, na, nz);
    wf_tokenizer_info i1, i2;
    wf_tokenizer_get_info(t, &i1);
    wf_tokenizer_get_info(back, &i2);
    CHECK(i1.vocab_size == i2.vocab_size && i1.bos == i2.bos, "%s: vocabulary %d (bos %d), back %d (bos %d)", what,
          i1.vocab_size, i1.bos, i2.vocab_size, i2.bos);
    char out[512];
    int32_t got = 0;
    CHECK(wf_tokenizer_decode(back, z, nz, out, sizeof out, &got) == WF_OK, "%s: decode", what);
    wf_buffer_free(buf);
    wf_tokenizer_free(back);
    wf_model_free(m);
    wf_model_free(b);
}

static void test_tokenizers(void) {
    wf_config c = llama();
    /* llama2.c's tokenizer.bin: a SentencePiece vocabulary (llama) */
    int32_t n = 0;
    uint8_t *bin = read_all("tests/fixtures/tokenizers/llama2c_tok.bin", &n);
    CHECK(bin != NULL, "the llama2.c tokenizer fixture (run from the repository root)");
    wf_tokenizer *t = wf_tokenizer_create();
    if (bin && wf_tokenizer_load(t, bin, n) == WF_OK) {
        c.vocab_size = tok_info(t).vocab_size;
        tokenizer_round_trip("llama vocabulary (tokenizer.bin)", t, c);
    }
    free(bin);
    wf_tokenizer_free(t);
    /* byte-level BPE tokenizer.json files (gpt2): SmolLM's pre-tokenizer (digits alone:
     * llama.cpp's "smollm") and GPT-2's */
    static const char *const files[2] = {"tests/fixtures/tokenizers/smollm.json", "tests/fixtures/tokenizers/gpt2.json"};
    for (int k = 0; k < 2; k++) {
        uint8_t *js = read_all(files[k], &n);
        CHECK(js != NULL, "%s (run from the repository root)", files[k]);
        if (!js) continue;
        t = wf_tokenizer_create();
        CHECK(wf_tokenizer_load(t, js, n) == WF_OK, "%s: %s", files[k], wf_tokenizer_error(t));
        c.vocab_size = tok_info(t).vocab_size;
        tokenizer_round_trip(files[k], t, c);
        wf_tokenizer_free(t);
        free(js);
    }
    /* a char tokenizer has no GGUF form: refused, the model unchanged */
    wf_model *m = wf_model_create();
    c = llama();
    CHECK_OK(wf_model_init(m, &c), m);
    t = wf_tokenizer_create();
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_CHAR, "abc", 3, 0) == WF_OK, "char");
    uint8_t *buf = NULL;
    CHECK(wf_model_save(m, t, WF_SAVE_GGUF, &buf, &n) == WF_ERR_UNSUPPORTED && !buf &&
              strstr(wf_model_error(m), "char tokenizer has no GGUF form"),
          "char tokenizer: %s", wf_model_error(m));
    wf_tokenizer_free(t);
    wf_model_free(m);
}

static void test_hostile(void) {
    wf_config c = llama();
    c.n_layer = 1;
    wf_model *src = wf_model_create();
    CHECK_OK(wf_model_init(src, &c), src);
    CHECK_OK(wf_model_quantize(src, WF_QUANT_Q4_0), src);
    int32_t n;
    uint8_t *good = gguf_of(src, NULL, &n);
    wf_model *m = wf_model_create();
    wf_config small_c = small();
    CHECK_OK(wf_model_init(m, &small_c), m);
    state before = capture(m);
    /* every truncation */
    int refused = 0;
    for (int32_t k = 0; k < n; k += (k < 4096 ? 1 : 97)) {
        const wf_status s = wf_model_load(m, NULL, good, k);
        refused += s != WF_OK;
        CHECK(s != WF_OK && strlen(wf_model_error(m)) > 0, "a file cut at %d of %d bytes loaded", k, n);
    }
    CHECK(unchanged(m, &before), "refused truncations changed the model");
    /* byte flips: each either loads or is refused, never crashes (ASan) */
    uint8_t *bad = malloc((size_t)n);
    for (int32_t k = 0; k < n; k += 7) {
        memcpy(bad, good, (size_t)n);
        bad[k] ^= (uint8_t)(0x5a + k);
        wf_model *t = wf_model_create();
        const wf_status s = wf_model_load(t, NULL, bad, n);
        CHECK(s == WF_OK || strlen(wf_model_error(t)) > 0, "flip at %d: %s without a message", k, wf_status_string(s));
        wf_model_free(t);
    }
    /* absurd counts, another version, another architecture */
    memcpy(bad, good, (size_t)n);
    memset(bad + 8, 0xff, 8); /* tensor count 2^64 - 1 */
    CHECK(wf_model_load(m, NULL, bad, n) == WF_ERR_FORMAT && strstr(wf_model_error(m), "more than"), "%s", wf_model_error(m));
    memcpy(bad, good, (size_t)n);
    bad[4] = 9;
    CHECK(wf_model_load(m, NULL, bad, n) == WF_ERR_UNSUPPORTED && strstr(wf_model_error(m), "GGUF version 9"), "%s",
          wf_model_error(m));
    memcpy(bad, good, (size_t)n);
    uint8_t *arch = memmem(bad, (size_t)n, "llama", 5); /* general.architecture's value comes first */
    if (arch) memcpy(arch, "gemma", 5);
    CHECK(wf_model_load(m, NULL, bad, n) == WF_ERR_UNSUPPORTED && strstr(wf_model_error(m), "architecture \"gemma\""), "%s",
          wf_model_error(m));
    CHECK(unchanged(m, &before), "refused files changed the model");
    printf("hostile GGUF: %d truncations refused; flips and bad headers handled\n", refused);
    release(&before);
    free(bad);
    wf_buffer_free(good);
    wf_model_free(src);
    wf_model_free(m);
    /* what cannot be a GGUF: a GPT-2, adapters, optimizer state */
    wf_model *g = wf_model_create();
    wf_config gpt = small();
    CHECK_OK(wf_model_init(g, &gpt), g);
    uint8_t *buf = NULL;
    CHECK(wf_model_save(g, NULL, WF_SAVE_GGUF, &buf, &n) == WF_ERR_UNSUPPORTED && strstr(wf_model_error(g), "Llama-shaped"),
          "a GPT-2: %s", wf_model_error(g));
    CHECK(wf_model_save(g, NULL, WF_SAVE_GGUF | WF_SAVE_OPTIMIZER, &buf, &n) == WF_ERR_ARG, "GGUF with optimizer state");
    wf_model_free(g);
}

int main(void) {
    test_round_trip();
    test_tokenizers();
    test_hostile();
    return check_summary("test_gguf");
}
