/* A llama2.c model file from anywhere: wf_model_load must build the model it
 * describes or refuse it with a message, never crash or leak; a refused file leaves the
 * model as it was. A file that loads must run a forward pass and take a training step, or
 * refuse them for memory or for numbers that overflow (finite but huge weights can make the
 * loss infinite). Input: the file. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
    if (n > INT32_MAX) return 0;
    wf_model *m = wf_model_create();
    wf_config small = fuzz_small_config();
    REQUIRE(m && wf_model_init(m, &small) == WF_OK, "setup");
    size_t n_before;
    float *before = fuzz_snapshot(m, &n_before);

    wf_status s = wf_model_load(m, NULL, data, (int32_t)n);
    if (s != WF_OK) {
        fuzz_require_unchanged(m, s, &small, before, n_before);
    } else {
        int32_t tok = 0, target = 0;
        wf_batch b;
        memset(&b, 0, sizeof b);
        b.inputs = &tok;
        b.targets = &target;
        b.B = b.T = 1;
        s = wf_model_forward(m, &b, NULL);
        REQUIRE(s == WF_OK || s == WF_ERR_NOMEM || s == WF_ERR_NUMERIC, "forward: %s", wf_model_error(m));
        s = wf_model_step(m, &b, NULL);
        REQUIRE(s == WF_OK || s == WF_ERR_NOMEM || s == WF_ERR_NUMERIC, "step: %s", wf_model_error(m));
    }
    free(before);
    wf_model_free(m);
    return 0;
}
