/* The fp32 core against PyTorch on the committed fixtures (tests/fixtures/NAME.bin, written by
 * gen_gpt_fixture.py, gen_arch_fixture.py, gen_recipe_fixture.py and gen_gqa_fixture.py): logits (or final
 * states) and loss to 1e-5, every gradient to 2e-4 relative (GRAD_TOL), and the losses of 5 AdamW (or
 * Muon + AdamW) steps with warmup, cosine decay and clipping to 1e-5. GPTs, an
 * encoder-decoder, a Llama-style decoder, an encoder trained with a mean squared error and
 * issue 14's recipe options, grouped- and multi-query attention with another RoPE base (issue
 * 15), LoRA adapters on a frozen base (Llama- and GPT-2-shaped), all through the one wf_batch entry point. The GPT and recipe
 * fixtures also hold PyTorch's greedy continuation of a prompt: generation must match it
 * token for token.
 * With --dump DIR it also writes DIR/<case>.logits.f32 (the final states for an MSE
 * fixture) and .loss.f32, so the wasm build's tests can compare themselves with this
 * native build. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "fixture.h"
#include "wasmformer.h"

static const char *cases[] = {"gpt2_tied",   "gpt_untied_relu", "encdec_post_ln", "llama_decoder",
                               "encoder_mse", "recipe_options",  "recipe_muon",    "recipe_gelu_exact", "gqa_decoder",
                               "mqa_muon",    "lora_llama",      "lora_gpt2"};

static void dump(const char *dir, const char *name, const char *what, const float *x, size_t n) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s.%s.f32", dir, name, what);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL, "cannot write %s", path);
    if (!f) return;
    fwrite(x, sizeof(float), n, f);
    fclose(f);
}

/* Relative error of a against reference b, element by element, with the denominator
 * floored at 1% of the tensor's largest reference value: fp32 sums of a few hundred terms
 * cannot give elements a thousand times smaller than their neighbours a small relative
 * error against another fp32 implementation that sums in another order. At the floor the
 * rounding of such sums is ~1e-4: AVX-512's 16-lane sums put encdec_post_ln's cqw 1.25e-4
 * off (3e-9 at an element of 2.5e-5, 1.2e-6 of the tensor's largest), AVX2's 7e-5. */
#define GRAD_TOL 2e-4
static double rel_err(const float *a, const float *b, size_t n) {
    double scale = 0, worst = 0;
    for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(b[i]));
    for (size_t i = 0; i < n; i++) {
        double den = fmax(fabs(b[i]), 1e-2 * scale);
        if (den > 0) worst = fmax(worst, fabs(a[i] - b[i]) / den);
    }
    return worst;
}

static double max_abs(const float *a, const float *b, size_t n) {
    double worst = 0;
    for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs((double)a[i] - b[i]));
    return worst;
}

static void run_case(const char *name, const char *dump_dir) {
    char path[256];
    snprintf(path, sizeof path, "tests/fixtures/%s.bin", name);
    fx_file fx = {0, NULL};
    CHECK(fx_load(path, &fx) == 0, "cannot read %s (run from the repository root)", path);
    if (fx.n == 0) return;
    const int32_t *c = fx_get(&fx, "config")->data;
    wf_config cfg;
    wf_config_default(&cfg);
    int32_t *fields = &cfg.arch; /* the first 13 fields are int32, in the fixture's order */
    for (int i = 0; i < 13; i++) fields[i] = c[i];
    cfg.norm_eps = ((float *)fx_get(&fx, "norm_eps")->data)[0];
    fx_entry *ext = fx_get(&fx, "config_ext");
    if (ext) {
        cfg.n_enc_layer = ((int32_t *)ext->data)[0];
        cfg.max_beam = ((int32_t *)ext->data)[1];
    }
    fx_entry *rec = fx_get(&fx, "config_recipe"); /* issue 14's options (gen_recipe_fixture.py) */
    if (rec) {
        const float *r = rec->data;
        cfg.qk_norm = (int32_t)r[0];
        cfg.zero_proj = (int32_t)r[1];
        cfg.logit_cap = r[2];
    }
    fx_entry *gqa = fx_get(&fx, "config_gqa"); /* issue 15's (gen_gqa_fixture.py) */
    if (gqa) {
        cfg.n_kv_head = (int32_t)((const float *)gqa->data)[0];
        cfg.rope_theta = ((const float *)gqa->data)[1];
    }
    fx_entry *lora = fx_get(&fx, "config_lora"); /* issue 15's LoRA (gen_lora_fixture.py): the base frozen */
    if (lora) {
        const float *l = lora->data;
        cfg.lora_rank = (int32_t)l[0];
        cfg.lora_alpha = l[1];
        cfg.lora_targets = (int32_t)l[2];
    }

    wf_model *m = wf_model_create();
    CHECK_OK(wf_model_init(m, &cfg), m);
    int n_loaded = 0;
    for (int i = 0; i < model_info(m).n_tensors; i++) {
        wf_tensor_info t;
        wf_model_get_tensor(m, i, &t);
        if (!t.size) continue;
        char key[80];
        snprintf(key, sizeof key, "param.%s", t.name);
        fx_entry *e = fx_get(&fx, key);
        CHECK(e && e->count == (size_t)t.size, "%s: fixture tensor %s missing or of the wrong size", name, key);
        if (!e || e->count != (size_t)t.size) continue;
        memcpy(wf_model_params(m) + t.offset, e->data, e->count * sizeof(float));
        n_loaded++;
    }
    /* greedy generation (temperature 0, any seed) against PyTorch's argmax decoding */
    fx_entry *gp = fx_get(&fx, "greedy.prompt"), *gt = fx_get(&fx, "greedy.tokens");
    if (gp && gt) {
        int32_t got[64] = {0};
        const int n_new = (int)gt->count;
        CHECK(n_new <= 64, "%s: %d golden tokens", name, n_new);
        wf_sampling greedy = {0, 0, 1, 0, 0};
        CHECK_OK(generate(m, gp->data, (int32_t)gp->count, n_new, &greedy, 7, got), m);
        const int32_t *want = gt->data;
        int same = !memcmp(got, want, (size_t)n_new * sizeof(int32_t));
        printf("%s: greedy generation of %d tokens %s PyTorch's\n", name, n_new, same ? "matches" : "DIFFERS from");
        for (int i = 0; i < n_new; i++) CHECK(got[i] == want[i], "%s: greedy token %d is %d, PyTorch %d", name, i, got[i], want[i]);
    }
    /* the batch: whichever of its parts the fixture has */
    wf_batch b;
    memset(&b, 0, sizeof b);
    fx_entry *e;
    if ((e = fx_get(&fx, "inputs"))) { b.inputs = e->data; b.B = e->dims[0]; b.T = e->dims[1]; }
    if ((e = fx_get(&fx, "input_vecs"))) { b.input_vecs = e->data; b.B = e->dims[0]; b.T = e->dims[1]; }
    if ((e = fx_get(&fx, "targets"))) b.targets = e->data;
    if ((e = fx_get(&fx, "target_vecs"))) b.target_vecs = e->data;
    if ((e = fx_get(&fx, "lengths"))) b.lengths = e->data;
    if ((e = fx_get(&fx, "src"))) { b.src = e->data; b.S = e->dims[1]; }
    if ((e = fx_get(&fx, "src_lengths"))) b.src_lengths = e->data;
    const int B = b.B, T = b.T, V = cfg.vocab_size;

    float loss = 0;
    CHECK_OK(wf_model_forward(m, &b, &loss), m);
    /* logits, or for a mean squared error the final states it is taken on */
    fx_entry *ref_out = fx_get(&fx, "logits");
    const float *out = wf_model_logits(m);
    size_t n_out = (size_t)B * T * V;
    if (!ref_out) {
        ref_out = fx_get(&fx, "hidden");
        out = wf_model_hidden(m);
        n_out = (size_t)B * T * cfg.d_model;
    }
    float ref_loss = ((float *)fx_get(&fx, "loss")->data)[0];
    double out_err = out ? max_abs(out, ref_out->data, n_out) : INFINITY;
    printf("%s: %d tensors, %s max abs err %.2e, loss %.7f vs PyTorch %.7f (err %.2e)\n", name, n_loaded,
           fx_get(&fx, "logits") ? "logits" : "final states", out_err, loss, ref_loss, fabs(loss - ref_loss));
    CHECK(out_err < 1e-5, "%s: outputs differ from PyTorch by %.3g", name, out_err);
    CHECK(fabs(loss - ref_loss) < 1e-5, "%s: loss %.8f vs PyTorch %.8f", name, loss, ref_loss);
    if (dump_dir && out) {
        dump(dump_dir, name, "logits", out, n_out);
        dump(dump_dir, name, "loss", &loss, 1);
    }

    CHECK_OK(wf_model_backward(m, &b, &loss), m);
    /* our first gradients, to tell exact zeros from rounding noise after the steps; the
     * trainable tensors' only (a frozen one has none, here or in the fixture) */
    const size_t n_all = (size_t)(model_info(m).memory.grads / sizeof(float));
    float *ours0 = malloc(n_all * sizeof(float) + 1);
    memcpy(ours0, wf_model_grads(m), n_all * sizeof(float));
    double worst = 0;
    int n_frozen = 0;
    for (int i = 0; i < model_info(m).n_tensors; i++) {
        wf_tensor_info t;
        wf_model_get_tensor(m, i, &t);
        if (!t.size) continue;
        char key[80];
        snprintf(key, sizeof key, "grad.%s", t.name);
        fx_entry *e = fx_get(&fx, key);
        CHECK((e != NULL) == (t.grad_offset >= 0), "%s: %s trains here%s, in PyTorch%s", name, t.name,
              t.grad_offset >= 0 ? "" : " not", e ? "" : " not");
        n_frozen += t.grad_offset < 0;
        if (!e || t.grad_offset < 0) continue;
        double err = rel_err(wf_model_grads(m) + t.grad_offset, e->data, e->count);
        worst = fmax(worst, err);
        CHECK(err < GRAD_TOL, "%s: gradient %s differs from PyTorch by %.3g relative", name, t.name, err);
    }
    printf("%s: gradients max rel err %.2e%s\n", name, worst, n_frozen ? " (the base frozen: adapters' alone)" : "");

    fx_entry *oe = fx_get(&fx, "optim");
    const float *of = oe->data; /* written as float32; the recipe fixtures add muon, muon_momentum */
    wf_optim opt = {.lr = of[0], .beta1 = of[1], .beta2 = of[2], .eps = of[3], .weight_decay = of[4],
                    .warmup = (int32_t)of[5], .decay_steps = (int32_t)of[6], .min_lr_ratio = of[7],
                    .grad_clip = of[8], .muon = oe->count > 9 ? (int32_t)of[9] : 0,
                    .muon_momentum = oe->count > 10 ? of[10] : 0.95f};
    CHECK_OK(wf_model_set_optim(m, &opt), m);
    const float *ref_steps = fx_get(&fx, "step_losses")->data;
    double step_err = 0;
    for (int s = 0; s < 5; s++) {
        wf_step_info info;
        CHECK_OK(wf_model_step(m, &b, &info), m);
        step_err = fmax(step_err, fabs(info.loss - ref_steps[s]));
        printf("  step %d: loss %.6f vs PyTorch %.6f, lr %.5f\n", s + 1, info.loss, ref_steps[s], info.lr);
    }
    CHECK(step_err < 1e-5, "%s: AdamW step losses differ from PyTorch by %.3g", name, step_err);
    /* Weights after the steps, as one vector. Left out: elements whose gradient is zero in
     * exact arithmetic, such as the key bias (softmax ignores a shift shared by a whole row
     * of scores). Their computed gradients are rounding noise (~1e-12, or exactly 0 in a
     * float64 reference), which Adam's division by sqrt(v) turns into +-lr steps. They are
     * found as |reference gradient| < 1e-6 of the tensor's largest, unless both gradients
     * are exactly 0 (a row nothing reads: then both must only decay). */
    double diff2 = 0, ref2 = 0, final_max = 0;
    int skipped = 0;
    for (int i = 0; i < model_info(m).n_tensors; i++) {
        wf_tensor_info t;
        wf_model_get_tensor(m, i, &t);
        char key[80];
        snprintf(key, sizeof key, "final.%s", t.name);
        fx_entry *e = fx_get(&fx, key);
        if (!e) continue;
        snprintf(key, sizeof key, "grad.%s", t.name);
        fx_entry *ge = fx_get(&fx, key);
        const float *w = wf_model_params(m) + t.offset, *r = e->data, *g = ge ? ge->data : NULL;
        if (!g) { /* frozen: exactly as loaded */
            snprintf(key, sizeof key, "param.%s", t.name);
            CHECK(!memcmp(w, fx_get(&fx, key)->data, e->count * sizeof(float)), "%s: frozen %s moved", name, t.name);
            continue;
        }
        double gmax = 0;
        for (size_t j = 0; j < e->count; j++) gmax = fmax(gmax, fabs(g[j]));
        for (size_t j = 0; j < e->count; j++) {
            if (fabs(g[j]) < 1e-6 * gmax && (g[j] != 0 || ours0[t.grad_offset + j] != 0)) {
                skipped++;
                continue;
            }
            diff2 += ((double)w[j] - r[j]) * ((double)w[j] - r[j]);
            ref2 += (double)r[j] * r[j];
            final_max = fmax(final_max, fabs((double)w[j] - r[j]));
        }
    }
    double final_rel = sqrt(diff2 / ref2);
    const char *optimizer = opt.muon ? "Muon + AdamW" : "AdamW";
    printf("%s: 5 %s steps: loss max abs err %.2e; weights relative L2 err %.2e, max abs %.2e "
           "(%d zero-gradient elements left out)\n", name, optimizer, step_err, final_rel, final_max, skipped);
    CHECK(final_rel < 1e-5, "%s: weights after 5 %s steps differ from PyTorch by %.3g (relative L2)", name, optimizer,
          final_rel);
    free(ours0);
    wf_model_free(m);
    fx_free(&fx);
}

int main(int argc, char **argv) {
    const char *dump_dir = argc == 3 && !strcmp(argv[1], "--dump") ? argv[2] : NULL;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) run_case(cases[i], dump_dir);
    return check_summary("test_fixture");
}
