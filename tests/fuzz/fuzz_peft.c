/* PEFT LoRA adapters from anywhere: wf_model_import_peft must put the adapters an
 * adapter_config.json and an adapter_model.safetensors describe on a small model, or refuse
 * them with a message, never crash or leak; a refused import leaves the model as it was.
 * Adapters that load must run a forward pass and a training step, and export; their export
 * imported onto a fresh copy of the base exports the same bytes (Llama) or gives the same
 * logits (GPT-2's c_attn and GPT-NeoX's query_key_value, fused: a B without export's block
 * structure comes back as q, k and v adapters sharing its A). Input: one byte (its value
 * mod 3: 0 a Llama-shaped base, 1 a GPT-2 one, 2 a GPT-NeoX one), a little-endian u16 k, k
 * bytes of adapter_config.json (fewer if the input is shorter), then the safetensors file. */
#include <math.h>

#include "fuzz.h"

/* The base a seed's adapters fit: fuzz_small_config, Llama-shaped, GPT-2 or GPT-NeoX (GPT-2
 * with RoPE). */
static wf_config base_config(int kind) {
    wf_config c = fuzz_small_config();
    if (kind == 2) c.positions = WF_POS_ROPE;
    if (kind == 0) {
        c.norm = WF_NORM_RMSNORM;
        c.activation = WF_ACT_SWIGLU;
        c.positions = WF_POS_ROPE;
        c.bias = 0;
        c.tied_head = 0;
    }
    return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
    if (n < 3 || n > INT32_MAX) return 0;
    const int kind = data[0] % 3, llama = kind == 0;
    size_t k = (size_t)(data[1] | data[2] << 8);
    if (k > n - 3) k = n - 3;
    const char *config = (const char *)data + 3;
    const uint8_t *st = data + 3 + k;
    const size_t nst = n - 3 - k;

    wf_model *m = wf_model_create();
    wf_config base = base_config(kind);
    REQUIRE(m && wf_model_init(m, &base) == WF_OK, "setup");
    size_t n_before;
    float *before = fuzz_snapshot(m, &n_before);
    const int32_t tok[4] = {1, 2, 3, 4}, next[4] = {2, 3, 4, 5};

    wf_status s = wf_model_import_peft(m, config, (int32_t)k, st, (int32_t)nst);
    if (s != WF_OK) {
        fuzz_require_unchanged(m, s, &base, before, n_before);
    } else {
        wf_config c;
        wf_model_get_config(m, &c);
        REQUIRE(c.lora_rank > 0 && c.lora_targets != 0, "imported adapters: rank %d, targets %d", c.lora_rank, c.lora_targets);
        float loss;
        s = forward_ids(m, tok, next, 1, 4, &loss);
        REQUIRE(s == WF_OK || s == WF_ERR_NUMERIC || s == WF_ERR_NOMEM, "forward: %s", wf_model_error(m));
        const float *l = wf_model_logits(m);
        float *logits = NULL;
        if (s == WF_OK && l) {
            logits = malloc(4 * 8 * sizeof(float));
            memcpy(logits, l, 4 * 8 * sizeof(float));
        }
        uint8_t *st1 = NULL, *st2 = NULL;
        char *cfg1 = NULL, *cfg2 = NULL;
        int32_t nst1, nst2, ncfg1, ncfg2;
        REQUIRE(wf_model_export_peft(m, NULL, &st1, &nst1, &cfg1, &ncfg1) == WF_OK, "export: %s", wf_model_error(m));
        wf_model *again = wf_model_create();
        REQUIRE(again && wf_model_init(again, &base) == WF_OK, "a second base");
        REQUIRE(wf_model_import_peft(again, cfg1, ncfg1, st1, nst1) == WF_OK, "import of an export: %s", wf_model_error(again));
        if (llama) {
            REQUIRE(wf_model_export_peft(again, NULL, &st2, &nst2, &cfg2, &ncfg2) == WF_OK, "export again");
            REQUIRE(nst1 == nst2 && memcmp(st1, st2, (size_t)nst1) == 0, "export, import, export changed the adapters");
            REQUIRE(ncfg1 == ncfg2 && memcmp(cfg1, cfg2, (size_t)ncfg1) == 0, "export, import, export changed the config");
        } else if (logits && forward_ids(again, tok, next, 1, 4, &loss) == WF_OK) {
            const float *l2 = wf_model_logits(again);
            double worst = 0, scale = 0;
            for (int i = 0; i < 32; i++) {
                worst = fmax(worst, fabs((double)l2[i] - logits[i]));
                scale = fmax(scale, fabs((double)logits[i]));
            }
            REQUIRE(worst <= 1e-4 * fmax(1, scale), "export, import: logits moved by %g", worst);
        }
        s = step_ids(m, tok, next, 1, 4, NULL);
        REQUIRE(s == WF_OK || s == WF_ERR_NUMERIC, "a step on the adapters: %s", wf_model_error(m));
        free(logits);
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
