/* A short run of everything a user does, for valgrind (npm test runs it as
 * `valgrind --error-exitcode=1 --leak-check=full`): char and BPE tokenizers learned from a
 * text, a decoder trained on it with the batch sampler, generation past the context,
 * a checkpoint saved and loaded, safetensors exported and imported, an encoder-decoder's
 * step and beam search, the tokenizer.json and tokenizer.bin fixtures, and every handle freed. Exits non-zero if a call fails or
 * training does not lower the loss; valgrind adds any memory error or leak. */
#include <stdlib.h>

#include "check.h"
#include "wasmformer.h"

static const char TEXT[] =
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in "
    "want of a wife. However little known the feelings or views of such a man may be on his first entering a "
    "neighbourhood, this truth is so well fixed in the minds of the surrounding families, that he is "
    "considered the rightful property of some one or other of their daughters.";

/* The tokenizer.json and tokenizer.bin fixtures: load, encode (a SentencePiece-style text is
 * one word: the heap merge), decode, save as .wft and load back, save_json. */
static void hf_tokenizers(void) {
    static const char *const files[] = {"tests/fixtures/tokenizers/gpt2.json", "tests/fixtures/tokenizers/llama.json",
                                        "tests/fixtures/tokenizers/llama2c_tok.bin"};
    for (int k = 0; k < 3; k++) {
        FILE *fp = fopen(files[k], "rb");
        CHECK(fp != NULL, "open %s (run from the repository root)", files[k]);
        if (!fp) continue;
        static char file[1 << 17];
        const int32_t n = (int32_t)fread(file, 1, sizeof file, fp);
        fclose(fp);
        wf_tokenizer *t = wf_tokenizer_create(), *back = wf_tokenizer_create();
        wf_status s = wf_tokenizer_load(t, (const uint8_t *)file, n);
        CHECK(s == WF_OK, "%s: %s", files[k], wf_tokenizer_error(t));
        /* four copies of the text: more than 64 symbols in a word */
        static char text[4 * sizeof TEXT + 8];
        const int32_t len = (int32_t)(4 * (sizeof TEXT - 1));
        for (int i = 0; i < 4; i++) memcpy(text + i * (sizeof TEXT - 1), TEXT, sizeof TEXT - 1);
        static int32_t ids[4 * sizeof TEXT + 8];
        static char out[16 * sizeof TEXT];
        int32_t n_ids = 0, n_out = 0;
        CHECK(wf_tokenizer_encode(t, text, len, ids, len + 8, &n_ids) == WF_OK, "%s encode", files[k]);
        CHECK(wf_tokenizer_decode(t, ids, n_ids, out, sizeof out, &n_out) == WF_OK && n_out == len && !memcmp(out, text, (size_t)len),
              "%s decodes the text back", files[k]);
        uint8_t *b = NULL;
        int32_t nb = 0;
        uint8_t *js = NULL;
        int32_t njs = 0;
        CHECK(wf_tokenizer_save(t, 0, &b, &nb) == WF_OK && wf_tokenizer_load(back, b, nb) == WF_OK, "%s .wft", files[k]);
        s = wf_tokenizer_save(back, WF_SAVE_JSON, &js, &njs);
        CHECK(k == 2 ? s == WF_ERR_UNSUPPORTED : s == WF_OK && njs == n, "%s save_json", files[k]);
        wf_buffer_free(js);
        wf_buffer_free(b);
        wf_tokenizer_free(back);
        wf_tokenizer_free(t);
    }
}

int main(void) {
    const int32_t len = (int32_t)strlen(TEXT), B = 4, T = 32;
    wf_tokenizer *tok = wf_tokenizer_create(), *bpe = wf_tokenizer_create();
    CHECK(wf_tokenizer_train(tok, WF_TOKENIZER_CHAR, TEXT, len, 0) == WF_OK, "char: %s", wf_tokenizer_error(tok));
    CHECK(wf_tokenizer_train(bpe, WF_TOKENIZER_BPE, TEXT, len, 300) == WF_OK, "bpe: %s", wf_tokenizer_error(bpe));
    int32_t *ids = malloc((size_t)len * sizeof(int32_t)), n = 0;
    CHECK(wf_tokenizer_encode(tok, TEXT, len, ids, len, &n) == WF_OK, "encode");

    wf_config c;
    wf_config_default(&c);
    c.vocab_size = tok_info(tok).vocab_size;
    c.context = T;
    c.n_layer = 2;
    c.n_head = 4;
    c.d_model = 32;
    c.d_ff = 128;
    wf_model *m = wf_model_create();
    CHECK_OK(wf_model_init(m, &c), m);
    wf_optim o;
    wf_optim_default(&o);
    o.lr = 3e-3f;
    CHECK_OK(wf_model_set_optim(m, &o), m);
    /* a run of 30 steps, validated at its end, with a roll-back copy */
    wf_run run = run_of(30, B, T, 0.1f);
    run.eval_interval = 30, run.rollback = 1;
    wf_run_facts first, last;
    CHECK_OK(wf_model_run_begin(m, &run, 0, ids, n), m);
    CHECK_OK(wf_model_run(m, NULL, 1, 0, &first), m);
    do CHECK_OK(wf_model_run(m, NULL, 100, 0, &last), m);
    while (!last.finished);
    printf("loss %.3f -> %.3f (validation %.3f)\n", (double)first.loss, (double)last.loss, last.val_loss);
    CHECK(last.loss < first.loss, "training lowers the loss");
    const int32_t *in = ids, *tg = ids + 1; /* a batch of B windows of the text, for the steps and forwards below */
    float val;

    int32_t out[80];
    wf_sampling samp = {0.8f, 10, 0.95f, 0, 0};
    CHECK_OK(generate(m, ids, 10, 80, &samp, 1, out), m); /* 90 tokens > context 32: the window slides */
    char text[80 * 4];
    int32_t nt;
    CHECK(wf_tokenizer_decode(tok, out, 80, text, sizeof text, &nt) == WF_OK, "decode");
    printf("sample: %.*s\n", (int)(nt < 60 ? nt : 60), text);

    uint8_t *ckpt;
    int32_t nc;
    CHECK_OK(wf_model_save(m, tok, WF_SAVE_OPTIMIZER, &ckpt, &nc), m);
    wf_model *back = wf_model_create();
    wf_tokenizer *tback = wf_tokenizer_create();
    CHECK_OK(wf_model_load(back, tback, ckpt, nc), back);
    CHECK_OK(step_ids(back, in, tg, B, T, NULL), back);
    uint8_t *st;
    char *cfg;
    int32_t nst, ncfg;
    CHECK_OK(wf_model_export_safetensors(back, &st, &nst, &cfg, &ncfg), back);
    wf_model *imported = wf_model_create();
    CHECK_OK(wf_model_import_safetensors(imported, cfg, ncfg, st, nst), imported);
    CHECK_OK(forward_ids(imported, in, tg, B, T, &val), imported);

    wf_config x = c;
    x.arch = WF_ARCH_ENCODER_DECODER;
    x.n_enc_layer = 1;
    x.max_beam = 3;
    x.dropout = 0.1f;
    wf_model *s2s = wf_model_create();
    CHECK_OK(wf_model_init(s2s, &x), s2s);
    wf_batch b;
    memset(&b, 0, sizeof b);
    b.inputs = in;
    b.targets = tg;
    b.src = in;
    b.B = B;
    b.T = T;
    b.S = T;
    CHECK_OK(wf_model_step(s2s, &b, NULL), s2s);
    int32_t dec[8], nd;
    CHECK_OK(wf_model_beam_search(s2s, in, 12, 1, 2, 3, 8, dec, &nd), s2s);

    wf_buffer_free(ckpt);
    wf_buffer_free(st);
    wf_buffer_free(cfg);
    wf_model_free(s2s);
    wf_model_free(imported);
    wf_model_free(back);
    wf_tokenizer_free(tback);
    wf_model_free(m);
    wf_tokenizer_free(bpe);
    wf_tokenizer_free(tok);
    free(ids);
    hf_tokenizers();
    return check_summary("valgrind_smoke");
}
