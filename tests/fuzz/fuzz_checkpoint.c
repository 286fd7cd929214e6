/* Checkpoint bytes from anywhere: wf_model_load must load them or refuse them with a
 * message, never crash or leak, and a refused file must leave the model and tokenizer it
 * was loaded into exactly as they were. A file that loads must run a forward pass and
 * save back to bytes that load to the same bytes again. Each input is tried as it is and
 * sealed (length and checksum made right: fuzz_sealed), so mutations get past the CRC. */
#include "fuzz.h"

/* One forward pass of a single token, whatever the architecture. */
static void forward_one(wf_model *m) {
    wf_config c;
    wf_model_get_config(m, &c);
    int32_t tok = 0, target = 1 % c.vocab_size;
    wf_batch b;
    memset(&b, 0, sizeof b);
    b.inputs = &tok;
    b.targets = &target;
    b.B = b.T = 1;
    if (c.arch == WF_ARCH_ENCODER_DECODER) {
        b.src = &tok;
        b.S = 1;
    }
    float loss;
    wf_status s = wf_model_forward(m, &b, &loss);
    /* a file may hold finite weights whose loss overflows; anything else is a bug */
    REQUIRE(s == WF_OK || s == WF_ERR_NUMERIC || s == WF_ERR_NOMEM, "forward: %s: %s", wf_status_string(s), wf_model_error(m));
}

static void check_file(const uint8_t *data, size_t n) {
    wf_model *m = wf_model_create();
    wf_tokenizer *t = wf_tokenizer_create();
    wf_config small = fuzz_small_config();
    REQUIRE(m && t && wf_model_init(m, &small) == WF_OK, "setup");
    REQUIRE(wf_tokenizer_train(t, WF_TOKENIZER_CHAR, "abc", 3, 0) == WF_OK, "setup");
    size_t n_before;
    float *before = fuzz_snapshot(m, &n_before);

    wf_status s = wf_model_load(m, t, data, (int32_t)n);
    if (s != WF_OK) {
        REQUIRE(param_count(m) > 0, "a refused file emptied the model");
        fuzz_require_unchanged(m, s, &small, before, n_before);
        REQUIRE(tok_info(t).vocab_size == 4, "a refused file changed the tokenizer");
    } else {
        forward_one(m);
        uint8_t *a = NULL, *b = NULL;
        int32_t na = 0, nb = 0;
        int has_tok = (data[8] & 2) != 0; /* the file's flags: a tokenizer, now in t (else t is still "abc") */
        REQUIRE(wf_model_save(m, has_tok ? t : NULL, WF_SAVE_OPTIMIZER, &a, &na) == WF_OK, "save: %s", wf_model_error(m));
        wf_model *again = wf_model_create();
        wf_tokenizer *t2 = wf_tokenizer_create();
        REQUIRE(wf_model_load(again, t2, a, na) == WF_OK, "reload of a saved file: %s", wf_model_error(again));
        REQUIRE(wf_model_save(again, has_tok ? t2 : NULL, WF_SAVE_OPTIMIZER, &b, &nb) == WF_OK, "save again");
        REQUIRE(na == nb && memcmp(a, b, (size_t)na) == 0, "save, load, save gave different bytes");
        wf_buffer_free(a);
        wf_buffer_free(b);
        wf_model_free(again);
        wf_tokenizer_free(t2);
    }
    free(before);
    wf_model_free(m);
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
