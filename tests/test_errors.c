/* docs/ERRORS.md, row by row, through the C API: every class of bad input gets its status
 * and a message that says what is wrong, and changes nothing in the handle it was given.
 * Each function is one row (E1, E2, ...); tests/js/errors.test.mjs walks the same rows
 * through the JavaScript API. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "check.h"
#include "model_state.h"
#include "wasmformer.h"

/* A trained model (non-zero moments) for the rows that need one. */
static wf_model *trained(void) {
    wf_config c = small();
    wf_model *m = wf_model_create();
    CHECK_OK(wf_model_init(m, &c), m);
    int32_t in[32], tg[32];
    for (int i = 0; i < 32; i++) in[i] = tg[i] = (i * 7) % c.vocab_size;
    for (int k = 0; k < 3; k++) CHECK_OK(step_ids(m, in, tg, 2, 16, NULL), m);
    return m;
}

/* Runs a config through wf_config_check and wf_model_init on a built model: want the
 * status, a message containing `text`, and the model unchanged. */
static void refuse_config(wf_model *m, const wf_config *c, wf_status want, const char *text, const char *what) {
    char msg[256];
    wf_status s = wf_config_check(c, msg, sizeof msg);
    CHECK(s == want, "%s: wf_config_check gave %s", what, wf_status_string(s));
    CHECK(strstr(msg, text) != NULL, "%s: message \"%s\" lacks \"%s\"", what, msg, text);
    state before = capture(m);
    s = wf_model_init(m, c);
    CHECK(s == want, "%s: wf_model_init gave %s", what, wf_status_string(s));
    CHECK(strstr(wf_model_error(m), text) != NULL, "%s: init message \"%s\"", what, wf_model_error(m));
    CHECK(unchanged(m, &before), "%s: a refused config changed the model", what);
    release(&before);
}

/* E1: zero or negative sizes. */
static void row_e1_sizes(void) {
    wf_model *m = trained();
    struct { size_t off; int32_t value; const char *text; } bad[] = {
        {offsetof(wf_config, vocab_size), 0, "vocab_size 0 is outside"},
        {offsetof(wf_config, vocab_size), -5, "vocab_size -5 is outside"},
        {offsetof(wf_config, n_layer), 0, "n_layer 0 is outside"},
        {offsetof(wf_config, n_layer), -1, "n_layer -1 is outside"},
        {offsetof(wf_config, n_head), 0, "n_head 0 is outside"},
        {offsetof(wf_config, d_model), -16, "d_model -16 is outside"},
        {offsetof(wf_config, d_ff), 0, "d_ff 0 is outside"},
        {offsetof(wf_config, d_ff), -32, "d_ff -32 is outside"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        wf_config c = small();
        memcpy((char *)&c + bad[i].off, &bad[i].value, 4);
        refuse_config(m, &c, WF_ERR_CONFIG, bad[i].text, bad[i].text);
    }
    wf_model_free(m);
}

/* E2: heads that do not divide the width (and rotary heads of odd size). */
static void row_e2_heads(void) {
    wf_model *m = trained();
    wf_config c = small();
    c.n_head = 3;
    refuse_config(m, &c, WF_ERR_CONFIG, "n_head 3 does not divide d_model 16", "3 heads, width 16");
    c = small();
    c.n_head = 32;
    refuse_config(m, &c, WF_ERR_CONFIG, "n_head 32 is outside [1, d_model = 16]", "more heads than channels");
    c = small();
    c.positions = WF_POS_ROPE;
    c.n_head = 16;
    refuse_config(m, &c, WF_ERR_CONFIG, "must be even", "rope with head size 1");
    wf_model_free(m);
}

/* E3: context 0 (and negative). */
static void row_e3_context(void) {
    wf_model *m = trained();
    wf_config c = small();
    c.context = 0;
    refuse_config(m, &c, WF_ERR_CONFIG, "context 0 is outside [1, 65536]", "context 0");
    c.context = -64;
    refuse_config(m, &c, WF_ERR_CONFIG, "context -64 is outside", "context -64");
    wf_model_free(m);
}

/* E4: absurd sizes: beyond the limits that keep sizes in int32, or more than 2^31 - 1
 * parameters. */
static void row_e4_absurd(void) {
    wf_model *m = trained();
    wf_config c = small();
    c.vocab_size = 1 << 30;
    refuse_config(m, &c, WF_ERR_CONFIG, "vocab_size 1073741824 is outside [2, 16777216]", "vocab 2^30");
    c = small();
    c.context = 1 << 20;
    refuse_config(m, &c, WF_ERR_CONFIG, "context 1048576 is outside", "context 2^20");
    c = small();
    c.n_layer = 100000;
    refuse_config(m, &c, WF_ERR_CONFIG, "n_layer 100000 is outside", "100000 layers");
    c = small();
    c.d_model = 1 << 20;
    c.n_head = 1;
    c.n_layer = 1000;
    CHECK(wf_config_check(&c, NULL, 0) == WF_OK, "each field is within its limit");
    state before = capture(m);
    CHECK(wf_model_init(m, &c) == WF_ERR_CONFIG, "2^20 wide, 1000 deep");
    CHECK(strstr(wf_model_error(m), "parameters; at most 2^31 - 1") != NULL, "message: %s", wf_model_error(m));
    CHECK(unchanged(m, &before), "a refused absurd config changed the model");
    release(&before);
    /* enum values and floats out of range */
    c = small();
    c.activation = 7;
    refuse_config(m, &c, WF_ERR_CONFIG, "activation 7 is not one of", "activation 7");
    c = small();
    c.norm_eps = NAN;
    refuse_config(m, &c, WF_ERR_CONFIG, "norm_eps must be in (0, 1)", "norm_eps NaN");
    c = small();
    c.dropout = 1;
    refuse_config(m, &c, WF_ERR_CONFIG, "dropout must be in [0, 1)", "dropout 1");
    CHECK(wf_config_check(NULL, NULL, 0) == WF_ERR_ARG, "NULL config");
    wf_model_free(m);
}

/* E5: sizes that cannot fit the memory this build can address: refused before anything
 * is allocated, with the estimate in the message. wasm32 addresses 4 GB; this test links
 * the core built with WF_MEMORY_LIMIT = 256 MB (wasmformer_capped) so the same refusal
 * runs natively at a size a test can afford; tests/js/errors.test.mjs checks it in wasm. */
static void row_e5_memory(void) {
    const double limit = 268435456.0;
    wf_model *m = trained();
    state before = capture(m);
    wf_config c = small();
    c.vocab_size = 50000;
    c.d_model = 1024;
    c.n_head = 8;
    c.d_ff = 4096;
    c.n_layer = 4;
    wf_memory est;
    char why[200];
    /* the estimate says it does not fit, in the words init refuses it with, and fills est all the same */
    CHECK(wf_config_memory(&c, 0, 0, &est, why, sizeof why) == WF_ERR_NOMEM && est.total > limit,
          "the example needs more than 256 MB");
    CHECK(est.budget == 0.95 * limit, "the budget: 95%% of the limit, not %.0f", est.budget);
    CHECK(est.total == est.params + est.grads + est.optimizer + est.inference && est.optimizer > 2 * est.params,
          "weights, gradients, both moments and the KV cache");
    char want[128];
    snprintf(want, sizeof want, "the model needs %.2f GB before activations; this build addresses at most %.2f GB",
             est.total / 1e9, limit / 1e9);
    CHECK(strcmp(why, want) == 0, "estimate's message \"%s\", want \"%s\"", why, want);
    double heap = wf_heap_in_use();
    CHECK(wf_model_init(m, &c) == WF_ERR_NOMEM, "a model beyond the limit");
    CHECK(strstr(wf_model_error(m), want) != NULL, "message \"%s\", want \"%s\"", wf_model_error(m), want);
    CHECK(wf_heap_in_use() == heap, "refused before allocating: heap %.0f -> %.0f bytes", heap, wf_heap_in_use());
    CHECK(unchanged(m, &before), "a refused model changed the one in the handle");

    /* a model whose weights are small but whose KV cache is not (review #1: in wasm the
     * cache's size once wrapped around 32 bits, and the first generated token wrote out of
     * bounds; tests/js/review_c.test.mjs runs the review's 1024-layer case there): 64
     * layers x 65536 positions x 64 wide, 2 GB of keys and values */
    wf_config g = small();
    g.n_layer = 64;
    g.n_head = 1;
    g.d_model = 64;
    g.d_ff = 1;
    g.context = 65536;
    CHECK(wf_config_memory(&g, 0, 0, &est, NULL, 0) == WF_ERR_NOMEM, "estimate of a huge KV cache");
    const double cache = 2.0 * g.n_layer * g.context * g.d_model * sizeof(float);
    CHECK(est.inference >= cache && est.inference < cache * 1.01, "the KV cache is counted: %.0f, want about %.0f",
          est.inference, cache);
    CHECK(est.params + est.grads + est.optimizer < limit / 2, "without the cache it would fit: %.0f",
          est.params + est.grads + est.optimizer);
    snprintf(want, sizeof want, "the model needs %.2f GB before activations", est.total / 1e9);
    heap = wf_heap_in_use();
    CHECK(wf_model_init(m, &g) == WF_ERR_NOMEM, "a KV cache beyond the limit");
    CHECK(strstr(wf_model_error(m), want) != NULL, "message \"%s\", want \"%s\"", wf_model_error(m), want);
    CHECK(wf_heap_in_use() == heap, "refused before allocating");
    CHECK(unchanged(m, &before), "a refused model changed the one in the handle");

    /* a batch whose activations exceed the limit, on a model that fits */
    int32_t B = 64;
    wf_memory need;
    while (wf_config_memory(&before.cfg, B, 16, &need, NULL, 0) == WF_OK) B *= 2;
    CHECK(need.activations > need.budget && need.activations / 2 <= need.budget, "refused at the budget: %.0f",
          need.activations);
    int32_t *ids = calloc((size_t)B * 16, sizeof(int32_t));
    snprintf(want, sizeof want, "a batch of %d x 16 needs %.2f GB of activations", B, need.activations / 1e9);
    heap = wf_heap_in_use();
    CHECK(step_ids(m, ids, ids, B, 16, NULL) == WF_ERR_NOMEM, "a batch beyond the limit");
    CHECK(strstr(wf_model_error(m), want) != NULL, "message \"%s\", want \"%s\"", wf_model_error(m), want);
    CHECK(wf_heap_in_use() == heap, "refused before allocating");
    CHECK(unchanged(m, &before), "a refused batch changed the model");
    CHECK_OK(step_ids(m, ids, ids, 2, 16, NULL), m); /* and the model still trains */
    free(ids);
    release(&before);
    wf_model_free(m);
}

/* E6: token ids out of range, in inputs, targets, prompts, sources and decoding. */
static void row_e6_tokens(void) {
    wf_model *m = trained();
    state before = capture(m);
    int32_t in[32], tg[32];
    for (int i = 0; i < 32; i++) in[i] = tg[i] = i % 11;
    in[5] = 11;
    CHECK(step_ids(m, in, tg, 2, 16, NULL) == WF_ERR_TOKEN, "input id == V");
    CHECK(strstr(wf_model_error(m), "input token 11 at position 5 is outside [0, 11)") != NULL, "%s", wf_model_error(m));
    in[5] = -3;
    CHECK(forward_ids(m, in, tg, 2, 16, NULL) == WF_ERR_TOKEN, "input id -3");
    in[5] = 1;
    tg[30] = 1000;
    CHECK(step_ids(m, in, tg, 2, 16, NULL) == WF_ERR_TOKEN, "target 1000");
    CHECK(strstr(wf_model_error(m), "target token 1000 at position 30") != NULL, "%s", wf_model_error(m));
    tg[30] = 1;
    int32_t prompt[3] = {1, 99, 2};
    CHECK(wf_model_gen_start(m, prompt, 3, 1) == WF_ERR_TOKEN, "prompt id 99");
    CHECK(strstr(wf_model_error(m), "prompt token 99 at position 1") != NULL, "%s", wf_model_error(m));
    CHECK(unchanged(m, &before), "bad ids changed the model");
    release(&before);
    wf_model_free(m);

    wf_tokenizer *t = wf_tokenizer_create();
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_CHAR, "abc", 3, 0) == WF_OK, "tokenizer");
    int32_t ids[2] = {1, 4};
    char out[16];
    int32_t n;
    CHECK(wf_tokenizer_decode(t, ids, 2, out, 16, &n) == WF_ERR_TOKEN, "decode id 4 of a 4-token vocabulary");
    CHECK(strlen(wf_tokenizer_error(t)) > 0, "decode message");
    wf_tokenizer_free(t);
}

/* E7: batch shapes and pointers: B or T below 1, T beyond the context, NULL buffers,
 * targets that are all ignored. */
static void row_e7_shapes(void) {
    wf_model *m = trained();
    state before = capture(m);
    int32_t in[34], tg[34];
    for (int i = 0; i < 34; i++) in[i] = tg[i] = i % 11;
    CHECK(step_ids(m, in, tg, 0, 16, NULL) == WF_ERR_ARG, "B = 0");
    CHECK(step_ids(m, in, tg, 2, -1, NULL) == WF_ERR_ARG, "T = -1");
    CHECK(strstr(wf_model_error(m), "both must be >= 1") != NULL, "%s", wf_model_error(m));
    CHECK(step_ids(m, in, tg, 2, 17, NULL) == WF_ERR_ARG, "T = context + 1");
    CHECK(strstr(wf_model_error(m), "exceeds the model's context of 16") != NULL, "%s", wf_model_error(m));
    CHECK(step_ids(m, NULL, tg, 2, 16, NULL) == WF_ERR_ARG, "NULL inputs");
    CHECK(step_ids(m, in, NULL, 2, 16, NULL) == WF_ERR_ARG, "NULL targets");
    for (int i = 0; i < 34; i++) tg[i] = -1;
    CHECK(step_ids(m, in, tg, 2, 16, NULL) == WF_ERR_ARG, "every target ignored");
    CHECK(strstr(wf_model_error(m), "nothing to learn from") != NULL, "%s", wf_model_error(m));
    CHECK(unchanged(m, &before), "bad shapes changed the model");
    release(&before);
    wf_model_free(m);
}

/* E8: empty and one-character corpora. */
static void row_e8_corpora(void) {
    wf_tokenizer *t = wf_tokenizer_create();
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_CHAR, "", 0, 0) == WF_ERR_ARG, "char: empty text");
    CHECK(strstr(wf_tokenizer_error(t), "the text is empty") != NULL, "%s", wf_tokenizer_error(t));
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_BPE, "", 0, 300) == WF_ERR_ARG, "bpe: empty text");
    CHECK(strstr(wf_tokenizer_error(t), "the text is empty") != NULL, "%s", wf_tokenizer_error(t));
    CHECK(tok_info(t).kind == WF_TOKENIZER_NONE, "still empty");
    /* one character is a vocabulary: <unk> and it; BPE learns no merges from it */
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_CHAR, "x", 1, 0) == WF_OK && tok_info(t).vocab_size == 2, "char: one character");
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_BPE, "x", 1, 300) == WF_OK && tok_info(t).vocab_size == 256, "bpe: one character");
    wf_tokenizer_free(t);
    /* too few tokens for one training window */
    wf_model *m = trained();
    state before = capture(m);
    int32_t one = 1;
    wf_run r = run_of(10, 1, 16, 0.0f);
    CHECK(wf_model_run_begin(m, &r, 0, &one, 1) == WF_ERR_ARG, "a corpus of 1 token");
    CHECK(strstr(wf_model_error(m), "the training split has 1 tokens; a window of T = 16 needs at least 17") != NULL, "%s",
          wf_model_error(m));
    CHECK(wf_model_run_begin(m, &r, 0, &one, 0) == WF_ERR_ARG, "an empty corpus");
    CHECK(unchanged(m, &before), "a short corpus changed the model");
    release(&before);
    wf_model_free(m);
}

/* E9: text with invalid UTF-8 is not an error: each invalid byte reads as U+FFFD (char
 * tokenizer); byte-level BPE learns and round-trips the bytes themselves. */
static void row_e9_utf8(void) {
    const char bad[] = "ab\xFF" "c\xC3\x28" "\xED\xA0\x80";
    const int32_t len = (int32_t)sizeof bad - 1;
    wf_tokenizer *t = wf_tokenizer_create();
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_CHAR, bad, len, 0) == WF_OK, "char trains on invalid UTF-8: %s", wf_tokenizer_error(t));
    int32_t ids[16], n = 0;
    CHECK(wf_tokenizer_encode(t, bad, len, ids, 16, &n) == WF_OK && n == 9, "9 code points, %d", n);
    int32_t replacement = ids[2];
    CHECK(ids[4] == replacement && ids[6] == replacement && ids[7] == replacement && ids[8] == replacement,
          "every invalid byte is the same U+FFFD id");
    char out[64];
    int32_t nout;
    CHECK(wf_tokenizer_decode(t, ids + 2, 1, out, 64, &nout) == WF_OK && nout == 3 && !memcmp(out, "\xEF\xBF\xBD", 3),
          "which decodes to U+FFFD");
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_BPE, bad, len, 260) == WF_OK, "bpe trains on invalid UTF-8");
    CHECK(wf_tokenizer_encode(t, bad, len, ids, 16, &n) == WF_OK, "bpe encode");
    CHECK(wf_tokenizer_decode(t, ids, n, out, 64, &nout) == WF_OK && nout == len && !memcmp(out, bad, (size_t)len),
          "bpe round-trips the bytes");
    wf_tokenizer_free(t);
}

/* E10: a prompt longer than the context is not an error: its last `context` tokens are
 * kept, exactly as if the prompt had been those tokens. An empty prompt is refused. */
static void row_e10_long_prompt(void) {
    wf_model *m = trained();
    int32_t prompt[40], a[20], b[20];
    for (int i = 0; i < 40; i++) prompt[i] = (i * 5 + 3) % 11;
    wf_sampling s = {0.9f, 0, 1.0f, 0, 0};
    CHECK_OK(generate(m, prompt, 40, 20, &s, 7, a), m);
    CHECK_OK(generate(m, prompt + 24, 16, 20, &s, 7, b), m);
    CHECK(!memcmp(a, b, sizeof a), "a 40-token prompt generates as its last 16 tokens");
    CHECK(wf_model_gen_start(m, prompt, 0, 1) == WF_ERR_ARG, "an empty prompt");
    CHECK(strstr(wf_model_error(m), "at least one token") != NULL, "%s", wf_model_error(m));
    wf_model_free(m);
}

/* E11: zero or negative counts of work: beam widths, new tokens, source lengths. (Step
 * counts and tokens to generate exist only above the C API, in JavaScript and the CLI:
 * C generates one token per wf_model_gen_next.) */
static void row_e11_counts(void) {
    int32_t out[4];
    wf_config c = small();
    c.arch = WF_ARCH_ENCODER_DECODER;
    c.n_enc_layer = 1;
    wf_model *x = wf_model_create();
    CHECK_OK(wf_model_init(x, &c), x);
    int32_t src[3] = {3, 4, 5}, n_out;
    CHECK(wf_model_beam_search(x, src, 3, 1, 2, 0, 8, out, &n_out) == WF_ERR_ARG, "beam 0");
    CHECK(wf_model_beam_search(x, src, 3, 1, 2, 1, 0, out, &n_out) == WF_ERR_ARG, "max_new 0");
    CHECK(wf_model_beam_search(x, src, 0, 1, 2, 1, 4, out, &n_out) == WF_ERR_ARG, "empty source");
    wf_model_free(x);
}

/* E12: learning rates that are NaN, negative or infinite, and every other optimizer
 * setting out of its range; sampling settings likewise. */
static void row_e12_settings(void) {
    wf_model *m = trained();
    state before = capture(m);
    wf_optim o = before.opt, bad;
    struct { float *field; float value; const char *text; } rows[] = {
        {&bad.lr, NAN, "lr must be >= 0 and finite, not nan"},
        {&bad.lr, -1e-3f, "lr must be >= 0 and finite, not -0.001"},
        {&bad.lr, INFINITY, "lr must be >= 0 and finite, not inf"},
        {&bad.beta1, 1.0f, "beta1 must be in [0, 1)"},
        {&bad.beta2, -0.5f, "beta2 must be in [0, 1)"},
        {&bad.eps, 0.0f, "eps must be > 0"},
        {&bad.weight_decay, -1.0f, "weight_decay must be >= 0"},
        {&bad.min_lr_ratio, 2.0f, "min_lr_ratio must be in [0, 1]"},
        {&bad.grad_clip, NAN, "grad_clip must be >= 0"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        bad = o;
        *rows[i].field = rows[i].value;
        CHECK(wf_model_set_optim(m, &bad) == WF_ERR_ARG, "%s", rows[i].text);
        CHECK(strstr(wf_model_error(m), rows[i].text) != NULL, "message \"%s\"", wf_model_error(m));
        char msg[128]; /* the same check without a model (JavaScript's checkConfig) */
        CHECK(wf_optim_check(&bad, msg, sizeof msg) == WF_ERR_ARG && strstr(msg, rows[i].text), "wf_optim_check: \"%s\"", msg);
    }
    CHECK(wf_optim_check(&o, NULL, 0) == WF_OK && wf_optim_check(NULL, NULL, 0) == WF_ERR_ARG, "wf_optim_check of good and NULL settings");
    bad = o;
    bad.warmup = -1;
    CHECK(wf_model_set_optim(m, &bad) == WF_ERR_ARG, "warmup -1");
    CHECK(unchanged(m, &before), "refused settings changed the model");

    int32_t prompt[2] = {1, 2}, out[2];
    wf_sampling s[] = {{-1.0f, 0, 1.0f, 0, 0}, {NAN, 0, 1.0f, 0, 0}, {1.0f, -2, 1.0f, 0, 0}, {1.0f, 0, 0.0f, 0, 0},
                       {1.0f, 0, 1.5f, 0, 0}, {1.0f, 0, 1.0f, 12, 0}};
    for (size_t i = 0; i < sizeof s / sizeof *s; i++)
        CHECK(generate(m, prompt, 2, 2, &s[i], 1, out) == WF_ERR_ARG, "sampling setting %zu", i);
    release(&before);
    wf_model_free(m);
}

/* E13: calls on a handle that cannot take them: NULL (wf_model_free ends a handle; C
 * cannot detect a freed pointer, so JavaScript's dispose() guards it, row E13 there),
 * an empty handle, or an architecture the call is not for. */
static void row_e13_handles(void) {
    int32_t ids[2] = {1, 2};
    CHECK(step_ids(NULL, ids, ids, 1, 2, NULL) == WF_ERR_ARG, "NULL model");
    CHECK(wf_model_gen_start(NULL, ids, 2, 1) == WF_ERR_ARG, "NULL model");
    CHECK(strlen(wf_model_error(NULL)) > 0, "NULL has a message too");
    wf_model_free(NULL);
    wf_tokenizer_free(NULL);
    wf_model *m = wf_model_create();
    CHECK(step_ids(m, ids, ids, 1, 2, NULL) == WF_ERR_STATE, "an empty handle trains");
    CHECK(strstr(wf_model_error(m), "call wf_model_init first") != NULL, "%s", wf_model_error(m));
    CHECK(wf_model_gen_start(m, ids, 2, 1) == WF_ERR_STATE, "an empty handle generates");
    uint8_t *buf;
    int32_t n;
    CHECK(wf_model_save(m, NULL, 0, &buf, &n) == WF_ERR_STATE, "an empty handle saves");
    /* a call that returns NULL for a reason leaves the reason (save's was another), as a status call does */
    CHECK(strstr(wf_model_error(m), "nothing to save") != NULL, "%s", wf_model_error(m));
    CHECK(wf_model_params(m) == NULL && strstr(wf_model_error(m), "call wf_model_init first"), "params: %s", wf_model_error(m));
    wf_model_free(m);
    wf_config c = small();
    c.arch = WF_ARCH_ENCODER;
    m = wf_model_create();
    CHECK_OK(wf_model_init(m, &c), m);
    CHECK(wf_model_gen_start(m, ids, 2, 1) == WF_ERR_STATE, "an encoder generates");
    CHECK(strstr(wf_model_error(m), "an encoder does not generate") != NULL, "%s", wf_model_error(m));
    CHECK(wf_model_logits(m) == NULL && strstr(wf_model_error(m), "no forward pass yet"), "logits: %s", wf_model_error(m));
    CHECK(forward_ids(m, ids, ids, 1, 2, NULL) == WF_OK, "forward: %s", wf_model_error(m));
    CHECK(wf_model_logits(m) && wf_model_attention(m, 0, 0), "a forward's results");
    CHECK(wf_model_attention(m, c.n_layer, 0) == NULL && strstr(wf_model_error(m), "is outside [0, "), "layer: %s",
          wf_model_error(m));
    CHECK(wf_model_attention(m, 0, 1) == NULL && strstr(wf_model_error(m), "not an encoder-decoder"), "cross: %s",
          wf_model_error(m));
    CHECK(wf_model_gen_logits(m) == NULL && strstr(wf_model_error(m), "no generation in progress"), "gen_logits: %s",
          wf_model_error(m));
    wf_model_free(m);
    wf_tokenizer *t = wf_tokenizer_create();
    CHECK(wf_tokenizer_encode(t, "a", 1, ids, 2, &n) == WF_ERR_STATE, "an empty tokenizer encodes");
    /* a kind that is read from a file, not trained; a flag save does not know */
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_HF, "abc", 3, 0) == WF_ERR_UNSUPPORTED && strstr(wf_tokenizer_error(t), "wf_tokenizer_load"),
          "train a tokenizer.json: %s", wf_tokenizer_error(t));
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_CHAR, "abc", 3, 300) == WF_ERR_ARG && tok_info(t).kind == WF_TOKENIZER_NONE,
          "a char tokenizer with a size: %s", wf_tokenizer_error(t));
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_CHAR, "abc", 3, 0) == WF_OK, "%s", wf_tokenizer_error(t));
    CHECK(wf_tokenizer_save(t, 4, &buf, &n) == WF_ERR_ARG && buf == NULL && strstr(wf_tokenizer_error(t), "WF_SAVE_JSON"),
          "unknown flags: %s", wf_tokenizer_error(t));
    wf_tokenizer_free(t);
}

/* F9 (docs/ERRORS.md): a model whose roll-back copy (weights and both moments) would not fit
 * beside what the heap holds runs without one (backup -1, not an error), and a divergence then
 * stops where it diverged. Where the heap use cannot be read (0: ASan's allocator), the copy is
 * taken, and only that is checked. */
static void row_f9_no_room(void) {
    wf_config c = small();
    c.vocab_size = 16, c.context = 8, c.n_layer = 4, c.n_head = 4, c.d_model = 448, c.d_ff = 1792; /* 9.6M weights */
    wf_model *m = wf_model_create();
    CHECK_OK(wf_model_init(m, &c), m); /* 154 MB of the 256 MB this build addresses; its copy would be 115 more */
    int32_t tokens[64];
    for (int i = 0; i < 64; i++) tokens[i] = i % 16;
    wf_run r = run_of(5, 1, 8, 0.0f);
    r.rollback = 1;
    CHECK_OK(wf_model_run_begin(m, &r, 0, tokens, 64), m);
    wf_run_facts f;
    CHECK_OK(wf_model_run(m, NULL, 0, 0, &f), m);
    if (wf_heap_in_use() > 0) {
        CHECK(f.backup == -1, "no room for the copy: the run goes without (backup %d)", f.backup);
        wf_optim o;
        wf_model_get_optim(m, &o);
        o.lr = 1e6f;
        CHECK_OK(wf_model_set_optim(m, &o), m);
        wf_status s = wf_model_run(m, NULL, 5, 0, &f);
        CHECK(s == WF_ERR_NUMERIC && f.diverged && f.backup == -1 && strstr(wf_model_error(m), "no copy to go back to"),
              "diverged without a copy: %s", wf_model_error(m));
    } else {
        CHECK(f.backup == 0, "heap use unknown: the copy is taken");
    }
    wf_model_free(m);
}

int main(void) {
    row_f9_no_room();
    row_e1_sizes();
    row_e2_heads();
    row_e3_context();
    row_e4_absurd();
    row_e5_memory();
    row_e6_tokens();
    row_e7_shapes();
    row_e8_corpora();
    row_e9_utf8();
    row_e10_long_prompt();
    row_e11_counts();
    row_e12_settings();
    row_e13_handles();
    return check_summary("test_errors");
}
