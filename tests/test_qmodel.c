/* Quantized models through the public API (issue 29): wf_model_quantize, and what a model
 * with Q8_0 or Q4_0 weights does.
 *   layout: the linears' and embeddings' tensors leave the float block (offset -1, dtype),
 *     the memory shrinks accordingly, and back to float32 gives the dequantized values;
 *   exactness: training, evaluation and their gradients (the exact path) are bit for bit the
 *     float model's holding the quantized weights' values, on any number of rows and threads;
 *     QLoRA's adapters train the same as over that float base;
 *   generation: the fast path (quantized activations) stays close to the exact logits, and
 *     does not depend on the thread count;
 *   files: a quantized checkpoint loads back bit for bit, with and without the optimizer's
 *     state; safetensors export the dequantized values;
 *   refusals: rows not whole blocks, an unknown type, training a quantized tensor, merging
 *     adapters into one: each leaves the model as it was. */
#include <math.h>
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
    c.tied_head = 1;
    c.vocab_size = 96;
    c.context = 32;
    c.n_layer = 2;
    c.n_head = 4;
    c.n_kv_head = 2;
    c.d_model = 64;
    c.d_ff = 96;
    c.seed = 5;
    return c;
}

static int32_t in[64 * 2], tg[64 * 2];

static void make_batch(int V) {
    uint32_t s = 9;
    for (int i = 0; i < 128; i++) {
        s = s * 1103515245u + 12345u;
        in[i] = (int32_t)((s >> 8) % (uint32_t)V);
        tg[i] = (int32_t)((s >> 4) % (uint32_t)V);
    }
}

/* A copy of m through a checkpoint (with the optimizer's state when opt). */
static wf_model *copy_of(wf_model *m, int opt) {
    uint8_t *buf;
    int32_t n;
    CHECK_OK(wf_model_save(m, NULL, opt ? WF_SAVE_OPTIMIZER : 0, &buf, &n), m);
    wf_model *c = wf_model_create();
    CHECK_OK(wf_model_load(c, NULL, buf, n), c);
    wf_buffer_free(buf);
    return c;
}

static int32_t slices(wf_model *m) {
    int32_t n = 0;
    for (int i = 0; i < model_info(m).n_tensors; i++) {
        wf_tensor_info t;
        wf_model_get_tensor(m, i, &t);
        n += t.layers;
    }
    return n;
}

/* The loss of a forward on B x T of the batch (bit patterns compared by the callers). */
static float loss_of(wf_model *m, int B, int T) {
    float loss = 0;
    CHECK_OK(forward_ids(m, in, tg, B, T, &loss), m);
    return loss;
}

static int same_floats(const float *a, const float *b, size_t n) { return !memcmp(a, b, n * sizeof(float)); }

static void test_type(int type) {
    const char *name = type == WF_QUANT_Q8_0 ? "Q8_0" : "Q4_0";
    wf_config c = llama();
    make_batch(c.vocab_size);
    wf_model *f32 = wf_model_create();
    CHECK_OK(wf_model_init(f32, &c), f32);
    const wf_memory before = model_info(f32).memory;

    /* layout and memory */
    wf_model *q = copy_of(f32, 0);
    CHECK_OK(wf_model_quantize(q, type), q);
    const wf_memory after = model_info(q).memory;
    double quantized = 0, floats = 0;
    for (int i = 0; i < model_info(q).n_tensors; i++) {
        wf_tensor_info t;
        wf_model_get_tensor(q, i, &t);
        if (!t.size) continue;
        const int want = !strcmp(t.name, "wte") || !strcmp(t.name, "qkvw") || !strcmp(t.name, "attprojw") ||
                         !strcmp(t.name, "fcw") || !strcmp(t.name, "fcprojw");
        CHECK(t.dtype == (want ? type : WF_QUANT_F32) && (t.offset < 0) == want && (t.grad_offset < 0) == want,
              "%s: %s has dtype %d, offset %d, grad_offset %d", name, t.name, t.dtype, t.offset, t.grad_offset);
        if (want) quantized += t.size;
        else floats += (t.size + 3) / 4 * 4;
    }
    const double bytes = quantized / 32 * (type == WF_QUANT_Q8_0 ? 34 : 18);
    CHECK(after.params >= floats * 4 + bytes && after.params < floats * 4 + bytes + 64 * 8,
          "%s: weights %.0f bytes, want %.0f floats and %.0f bytes of blocks", name, after.params, floats, bytes);
    printf("%s: weights %.0f -> %.0f bytes (%.2fx)\n", name, before.params, after.params, before.params / after.params);

    /* the float model holding the quantized values: back to float32 */
    wf_model *deq = copy_of(q, 0);
    CHECK_OK(wf_model_quantize(deq, WF_QUANT_F32), deq);
    CHECK(model_info(deq).memory.params == before.params, "%s: back to float32, the float model's size", name);
    wf_model *again = copy_of(deq, 0);
    CHECK_OK(wf_model_quantize(again, type), again);
    uint8_t *b1, *b2;
    int32_t n1, n2;
    CHECK_OK(wf_model_save(q, NULL, 0, &b1, &n1), q);
    CHECK_OK(wf_model_save(again, NULL, 0, &b2, &n2), again);
    CHECK(n1 == n2 && !memcmp(b1, b2, (size_t)n1), "%s: quantizing the dequantized values gives the same blocks", name);
    wf_buffer_free(b1);
    wf_buffer_free(b2);
    wf_model_free(again);

    /* evaluation: bit for bit the float model's, few rows (the few-row kernel) and many (the
     * matrix multiply), one thread and two */
    for (int threads = 1; threads <= 2; threads++) {
        if (threads == 2 && (wf_model_set_threads(q, 2) != WF_OK || wf_model_set_threads(deq, 2) != WF_OK)) break;
        for (int k = 0; k < 2; k++) {
            const int B = k ? 4 : 1, T = k ? 32 : 8;
            const float lq = loss_of(q, B, T), ld = loss_of(deq, B, T);
            CHECK(!memcmp(&lq, &ld, sizeof lq), "%s: loss %.9g on %d x %d (%d threads), the float model's %.9g", name,
                  lq, B, T, threads, ld);
            const size_t nl = (size_t)B * T * c.vocab_size;
            CHECK(same_floats(wf_model_logits(q), wf_model_logits(deq), nl), "%s: logits differ from the float model's",
                  name);
        }
    }

    /* generation: the fast path, close to the exact logits; the same on one thread or two */
    const int32_t prompt[5] = {3, 1, 4, 1, 5};
    CHECK_OK(wf_model_gen_start(q, prompt, 5, 1), q);
    float *fast2 = malloc((size_t)c.vocab_size * sizeof(float)), *fast1 = malloc((size_t)c.vocab_size * sizeof(float));
    memcpy(fast2, wf_model_gen_logits(q), (size_t)c.vocab_size * sizeof(float));
    wf_model_set_threads(q, 1);
    CHECK_OK(wf_model_gen_start(q, prompt, 5, 1), q);
    memcpy(fast1, wf_model_gen_logits(q), (size_t)c.vocab_size * sizeof(float));
    CHECK(same_floats(fast1, fast2, (size_t)c.vocab_size), "%s: generation depends on the thread count", name);
    CHECK_OK(wf_model_gen_start(deq, prompt, 5, 1), deq);
    double diff = 0, scale = 0;
    for (int v = 0; v < c.vocab_size; v++) {
        diff = fmax(diff, fabs((double)fast1[v] - wf_model_gen_logits(deq)[v]));
        scale = fmax(scale, fabs((double)wf_model_gen_logits(deq)[v]));
    }
    printf("%s: generation's logits (8-bit activations) within %.2e of the exact ones (largest %.2e)\n", name, diff, scale);
    CHECK(diff <= 0.03 * scale, "%s: generation's logits differ by %g (of %g)", name, diff, scale);
    free(fast1);
    free(fast2);

    /* QLoRA: adapters on q and v over the quantized base train as over the float base */
    wf_config lc = c;
    lc.lora_rank = 4;
    lc.lora_alpha = 8;
    lc.lora_targets = 1 | 4;
    CHECK_OK(wf_model_set_config(q, &lc, 0), q);
    CHECK_OK(wf_model_set_config(deq, &lc, 0), deq);
    const wf_memory lq = model_info(q).memory;
    for (int s = 0; s < 3; s++) {
        wf_step_info a, b;
        CHECK_OK(step_ids(q, in, tg, 2, 32, &a), q);
        CHECK_OK(step_ids(deq, in, tg, 2, 32, &b), deq);
        CHECK(!memcmp(&a, &b, sizeof a), "%s QLoRA: step %d: loss %.9g norm %.9g, float base %.9g %.9g", name, s, a.loss,
              a.grad_norm, b.loss, b.grad_norm);
    }
    const wf_memory trained = model_info(q).memory;
    CHECK(trained.grads > 0 && trained.grads < lq.params / 4, "%s QLoRA: gradients of the adapters alone (%.0f bytes)",
          name, trained.grads);

    /* checkpoints: with and without the optimizer's state */
    for (int opt = 0; opt < 2; opt++) {
        wf_model *back = copy_of(q, opt);
        CHECK(model_info(back).memory.params == model_info(q).memory.params, "%s: a loaded checkpoint's size", name);
        const float l1 = loss_of(back, 2, 32), l2 = loss_of(q, 2, 32);
        CHECK(!memcmp(&l1, &l2, sizeof l1), "%s: a loaded checkpoint's loss %.9g, not %.9g", name, l1, l2);
        if (opt) {
            wf_step_info a, b;
            CHECK_OK(step_ids(back, in, tg, 2, 32, &a), back);
            CHECK_OK(step_ids(q, in, tg, 2, 32, &b), q);
            CHECK(!memcmp(&a, &b, sizeof a), "%s: training resumes exactly from a checkpoint", name);
            CHECK_OK(step_ids(deq, in, tg, 2, 32, &b), deq);
        }
        wf_model_free(back);
    }

    /* safetensors: the dequantized values */
    uint8_t *s1, *s2;
    char *j1, *j2;
    int32_t ns1, ns2, nj1, nj2;
    wf_config plain = c;
    CHECK_OK(wf_model_set_config(q, &plain, 0), q); /* adapters dropped, not merged */
    CHECK_OK(wf_model_set_config(deq, &plain, 0), deq);
    CHECK_OK(wf_model_export_safetensors(q, &s1, &ns1, &j1, &nj1), q);
    CHECK_OK(wf_model_export_safetensors(deq, &s2, &ns2, &j2, &nj2), deq);
    CHECK(ns1 == ns2 && !memcmp(s1, s2, (size_t)ns1), "%s: safetensors of the quantized model are the float model's", name);
    wf_buffer_free(s1), wf_buffer_free(s2), wf_buffer_free(j1), wf_buffer_free(j2);

    /* refusals */
    state st = capture(q);
    CHECK(wf_model_quantize(q, 3) == WF_ERR_ARG && unchanged(q, &st), "%s: type 3", name);
    uint8_t *mask = malloc((size_t)slices(q));
    memset(mask, 1, (size_t)slices(q));
    CHECK(wf_model_trainable(q, mask, NULL, slices(q)) == WF_ERR_STATE && strstr(wf_model_error(q), "quantized") &&
              unchanged(q, &st),
          "%s: training quantized weights is refused: %s", name, wf_model_error(q));
    free(mask);
    CHECK_OK(wf_model_set_config(q, &lc, 0), q);
    release(&st);
    st = capture(q);
    CHECK(wf_model_set_config(q, &plain, 1) == WF_ERR_STATE && strstr(wf_model_error(q), "cannot be merged") &&
              unchanged(q, &st),
          "%s: merging adapters into quantized weights is refused: %s", name, wf_model_error(q));
    release(&st);
    if (type == WF_QUANT_Q4_0) { /* Q4_0 to Q8_0 keeps the values */
        wf_model *q8 = copy_of(q, 0);
        CHECK_OK(wf_model_quantize(q8, WF_QUANT_Q8_0), q8);
        const float a = loss_of(q8, 2, 32), b = loss_of(q, 2, 32);
        CHECK(!memcmp(&a, &b, sizeof a), "Q4_0 as Q8_0: the same loss (%.9g, %.9g)", a, b);
        wf_model_free(q8);
    }
    wf_model_free(f32);
    wf_model_free(q);
    wf_model_free(deq);
}

static void test_refusals(void) {
    wf_config c = llama();
    c.d_model = 48; /* rows of 48: not whole blocks */
    c.n_head = 4;
    wf_model *m = wf_model_create();
    CHECK_OK(wf_model_init(m, &c), m);
    state st = capture(m);
    CHECK(wf_model_quantize(m, WF_QUANT_Q8_0) == WF_ERR_UNSUPPORTED && strstr(wf_model_error(m), "blocks of 32") &&
              unchanged(m, &st),
          "rows of 48 weights: %s", wf_model_error(m));
    CHECK_OK(wf_model_quantize(m, WF_QUANT_F32), m); /* nothing to do */
    release(&st);
    wf_model_free(m);
    CHECK(wf_model_quantize(NULL, 1) == WF_ERR_ARG, "NULL model");
    wf_model *empty = wf_model_create();
    CHECK(wf_model_quantize(empty, 1) == WF_ERR_STATE, "an empty model");
    wf_model_free(empty);
}

int main(void) {
    test_type(WF_QUANT_Q8_0);
    test_type(WF_QUANT_Q4_0);
    test_refusals();
    return check_summary("test_qmodel");
}
