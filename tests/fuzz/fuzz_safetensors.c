/* A config.json and a safetensors file from anywhere: wf_model_import_safetensors must build the
 * model they describe or refuse them with a message, never crash or leak; a refused import
 * leaves the model as it was. An import that succeeds must be bounded by the file (at least
 * 2 bytes per parameter: the tensors' bytes tile the data, none shared), run a forward pass,
 * export, and import its export back to the same export. Input: a little-endian u16 k, then k bytes
 * of config.json (fewer if the input is shorter), then the safetensors file. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
    if (n < 2 || n > INT32_MAX) return 0;
    size_t k = (size_t)(data[0] | data[1] << 8);
    if (k > n - 2) k = n - 2;
    const char *config = (const char *)data + 2;
    const uint8_t *st = data + 2 + k;
    const size_t nst = n - 2 - k;

    wf_model *m = wf_model_create();
    wf_config small = fuzz_small_config();
    REQUIRE(m && wf_model_init(m, &small) == WF_OK, "setup");
    size_t n_before;
    float *before = fuzz_snapshot(m, &n_before);

    wf_status s = wf_model_import_safetensors(m, config, (int32_t)k, st, (int32_t)nst);
    if (s != WF_OK) {
        fuzz_require_unchanged(m, s, &small, before, n_before);
    } else {
        REQUIRE(model_info(m).memory.count * 2 <= (double)nst, "%.0f parameters from %zu bytes of safetensors",
                model_info(m).memory.count, nst);
        wf_config c;
        wf_model_get_config(m, &c);
        int32_t tok = 0, src = 0;
        wf_batch b;
        memset(&b, 0, sizeof b);
        b.inputs = &tok;
        b.B = b.T = 1;
        if (c.arch == WF_ARCH_ENCODER_DECODER) {
            b.src = &src;
            b.S = 1;
        }
        s = wf_model_forward(m, &b, NULL);
        REQUIRE(s == WF_OK || s == WF_ERR_NOMEM, "forward: %s", wf_model_error(m));

        uint8_t *st1 = NULL, *st2 = NULL;
        char *cfg1 = NULL, *cfg2 = NULL;
        int32_t nst1, nst2, ncfg1, ncfg2;
        REQUIRE(wf_model_export_safetensors(m, &st1, &nst1, &cfg1, &ncfg1) == WF_OK, "export: %s", wf_model_error(m));
        wf_model *again = wf_model_create();
        REQUIRE(wf_model_import_safetensors(again, cfg1, ncfg1, st1, nst1) == WF_OK, "import of an export: %s", wf_model_error(again));
        REQUIRE(wf_model_export_safetensors(again, &st2, &nst2, &cfg2, &ncfg2) == WF_OK, "export again");
        REQUIRE(nst1 == nst2 && memcmp(st1, st2, (size_t)nst1) == 0, "export, import, export changed the safetensors");
        REQUIRE(ncfg1 == ncfg2 && memcmp(cfg1, cfg2, (size_t)ncfg1) == 0, "export, import, export changed config.json");
        wf_buffer_free(st1);
        wf_buffer_free(st2);
        wf_buffer_free(cfg1);
        wf_buffer_free(cfg2);
        wf_model_free(again);
    }
    free(before);
    wf_model_free(m);
    return 0;
}
