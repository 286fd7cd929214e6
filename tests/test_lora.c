/* Fine-tuning (issue 15 item 4): the trainable mask and LoRA's adapters through the public API.
 *   memory: frozen slices have no gradients or moments (the estimate and the model agree);
 *   freezing: frozen weights never move, trainable ones get the same gradients as with
 *     everything trainable, and backward skips what nothing below needs;
 *   LoRA: a new adapter changes no output; adapters added later equal adapters made with the
 *     model; training moves the adapters alone; removing them restores the base exactly;
 *     merging gives the same outputs as the adapters;
 *   checkpoints: the mask and the adapters' moments survive, and training resumes exactly;
 *   PEFT: the adapters of a Llama-, a GPT-2- and a GPT-NeoX-shaped model round-trip bit for
 *     bit, the fused c_attn's and query_key_value's back at the rank they were trained at;
 *     a fused module's adapter whose B is not block-structured shares its A among q, k, v;
 *   refusals leave the model as it was. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "model_state.h"

static int32_t slices(wf_model *m) {
    int32_t n = 0;
    for (int i = 0; i < model_info(m).n_tensors; i++) {
        wf_tensor_info t;
        wf_model_get_tensor(m, i, &t);
        n += t.layers;
    }
    return n;
}

static int tensor(wf_model *m, const char *name, wf_tensor_info *out) {
    for (int i = 0; i < model_info(m).n_tensors; i++) {
        wf_model_get_tensor(m, i, out);
        if (!strcmp(out->name, name)) return i;
    }
    return -1;
}

/* A mask with every slice of the named tensors (a space-separated list) on, the rest off. */
static uint8_t *mask_of(wf_model *m, const char *names) {
    uint8_t *mask = calloc((size_t)slices(m) + 1, 1);
    for (int i = 0, k = 0; i < model_info(m).n_tensors; i++) {
        wf_tensor_info t;
        wf_model_get_tensor(m, i, &t);
        char key[80];
        snprintf(key, sizeof key, " %s ", t.name);
        char list[512];
        snprintf(list, sizeof list, " %s ", names);
        for (int l = 0; l < t.layers; l++, k++) mask[k] = strstr(list, key) != NULL;
    }
    return mask;
}

static float *copy_floats(const float *x, size_t n) {
    float *c = malloc(n * sizeof(float) + 1);
    memcpy(c, x, n * sizeof(float));
    return c;
}

static double max_diff(const float *a, const float *b, size_t n) {
    double d = 0;
    for (size_t i = 0; i < n; i++) d = fmax(d, fabs((double)a[i] - b[i]));
    return d;
}

enum { B = 2, T = 12 };
static int32_t in[B * T], tg[B * T];

static void make_batch(int V) {
    for (int i = 0; i < B * T; i++) {
        in[i] = (i * 7 + 3) % V;
        tg[i] = (i * 5 + 1) % V;
    }
}

static wf_config llama(void) {
    wf_config c = small();
    c.norm = WF_NORM_RMSNORM;
    c.activation = WF_ACT_SWIGLU;
    c.positions = WF_POS_ROPE;
    c.bias = 0;
    c.tied_head = 0;
    c.n_head = 4;
    c.n_kv_head = 2;
    c.d_model = 16;
    return c;
}

static float *logits_of(wf_model *m) {
    float loss;
    CHECK_OK(forward_ids(m, in, tg, B, T, &loss), m);
    wf_config c;
    wf_model_get_config(m, &c);
    return copy_floats(wf_model_logits(m), (size_t)B * T * c.vocab_size);
}

static void test_memory(void) {
    wf_config c = llama();
    c.lora_rank = 4;
    c.lora_targets = 127;
    wf_memory est;
    CHECK(wf_config_memory(&c, 0, 0, &est, NULL, 0) == WF_OK, "estimate");
    wf_model *m = wf_model_create();
    CHECK_OK(wf_model_init(m, &c), m);
    const wf_memory got = model_info(m).memory;
    double adapters = 0;
    for (int i = 0; i < model_info(m).n_tensors; i++) {
        wf_tensor_info t;
        wf_model_get_tensor(m, i, &t);
        if (!strncmp(t.name, "lora_", 5)) adapters += (t.size + 3) / 4 * 4;
        CHECK((t.grad_offset >= 0) == (t.size > 0 && !strncmp(t.name, "lora_", 5)), "%s: grad_offset %d", t.name,
              t.grad_offset);
    }
    printf("memory: LoRA r 4 on every linear: weights %.0f B, gradients %.0f B (adapters %.0f floats), optimizer %.0f B\n",
           got.params, got.grads, adapters, got.optimizer);
    CHECK(got.grads == adapters * 4 && est.grads == got.grads, "gradients: the adapters' alone (%.0f, estimate %.0f)",
          got.grads, est.grads);
    CHECK(est.optimizer == got.optimizer && est.params == got.params, "the estimate is the model's");
    /* every slice trainable: the blocks are the weights' size again, and the moments are kept */
    uint8_t *all = malloc((size_t)slices(m));
    memset(all, 1, (size_t)slices(m));
    CHECK_OK(wf_model_trainable(m, all, NULL, slices(m)), m);
    CHECK(model_info(m).memory.grads == got.params, "all trainable: gradients %.0f, weights %.0f",
          model_info(m).memory.grads, got.params);
    memset(all, 0, (size_t)slices(m));
    CHECK_OK(wf_model_trainable(m, all, NULL, slices(m)), m);
    CHECK(model_info(m).memory.grads == 0, "nothing trainable: no gradients");
    CHECK(step_ids(m, in, tg, B, T, NULL) == WF_ERR_STATE && strstr(wf_model_error(m), "frozen"),
          "a step with nothing to train: %s", wf_model_error(m));
    free(all);
    wf_model_free(m);
}

static void test_freezing(void) {
    wf_config c = small();
    c.tied_head = 0;
    make_batch(c.vocab_size);
    wf_model *full = wf_model_create(), *head = wf_model_create();
    CHECK_OK(wf_model_init(full, &c), full);
    CHECK_OK(wf_model_init(head, &c), head);
    uint8_t *mask = mask_of(head, "lm_head lnfw lnfb");
    CHECK_OK(wf_model_trainable(head, mask, NULL, slices(head)), head);
    float l1, l2;
    CHECK_OK(wf_model_backward(full, &(wf_batch){.inputs = in, .targets = tg, .B = B, .T = T}, &l1), full);
    CHECK_OK(wf_model_backward(head, &(wf_batch){.inputs = in, .targets = tg, .B = B, .T = T}, &l2), head);
    wf_tensor_info tf, th;
    tensor(full, "lm_head", &tf);
    tensor(head, "lm_head", &th);
    CHECK(l1 == l2 && !memcmp(wf_model_grads(full) + tf.grad_offset, wf_model_grads(head) + th.grad_offset,
                              (size_t)tf.size * sizeof(float)),
          "the head's gradient is the same with the rest frozen");
    const size_t nw = block(head);
    float *before = copy_floats(wf_model_params(head), nw);
    for (int s = 0; s < 3; s++) CHECK_OK(step_ids(head, in, tg, B, T, NULL), head);
    size_t moved = 0, moved_frozen = 0;
    const float *after = wf_model_params(head);
    for (int i = 0; i < model_info(head).n_tensors; i++) {
        wf_tensor_info t;
        wf_model_get_tensor(head, i, &t);
        size_t diff = 0;
        for (int j = 0; j < t.size; j++) diff += after[t.offset + j] != before[t.offset + j];
        if (t.grad_offset >= 0) moved += diff;
        else moved_frozen += diff;
    }
    printf("freezing: head and final norm train: %zu of their weights moved in 3 steps, %zu frozen ones\n", moved,
           moved_frozen);
    CHECK(moved > 0 && moved_frozen == 0, "frozen weights stay put (%zu moved), trainable ones move (%zu)", moved_frozen,
          moved);
    free(before);
    free(mask);
    wf_model_free(full);
    wf_model_free(head);
}

static void test_lora(void) {
    wf_config c = llama();
    make_batch(c.vocab_size);
    wf_model *base = wf_model_create(), *m = wf_model_create(), *made = wf_model_create();
    CHECK_OK(wf_model_init(base, &c), base);
    CHECK_OK(wf_model_init(m, &c), m);
    float *ref = logits_of(base);
    const size_t n = (size_t)B * T * c.vocab_size;
    wf_config lc = c;
    lc.lora_rank = 3;
    lc.lora_alpha = 6;
    lc.lora_targets = 127;
    CHECK_OK(wf_model_set_config(m, &lc, 0), m);
    CHECK_OK(wf_model_init(made, &lc), made);
    CHECK(block(m) == block(made) && !memcmp(wf_model_params(m), wf_model_params(made), block(m) * sizeof(float)),
          "adapters added to a model equal a model made with them");
    float *got = logits_of(m);
    CHECK(!memcmp(got, ref, n * sizeof(float)), "new adapters (B = 0) change no logit");
    free(got);
    wf_optim o;
    wf_optim_default(&o);
    o.lr = 1e-2f;
    wf_model_set_optim(m, &o);
    const size_t nbase = (size_t)block(base);
    wf_step_info first, last;
    for (int s = 0; s < 20; s++) CHECK_OK(step_ids(m, in, tg, B, T, s ? &last : &first), m);
    printf("LoRA r 3 on every linear, base frozen: loss %.4f -> %.4f in 20 steps\n", first.loss, last.loss);
    CHECK(last.loss < first.loss - 0.1, "the loss falls");
    CHECK(!memcmp(wf_model_params(m), wf_model_params(base), nbase * sizeof(float)), "the base weights never moved");
    float *tuned = logits_of(m);
    /* merged: the same model without adapters */
    wf_model *merged = wf_model_create();
    uint8_t *ck;
    int32_t ck_n;
    CHECK_OK(wf_model_save(m, NULL, WF_SAVE_OPTIMIZER, &ck, &ck_n), m);
    CHECK_OK(wf_model_load(merged, NULL, ck, ck_n), merged);
    CHECK_OK(wf_model_set_config(merged, &c, 1), merged);
    float *mg = logits_of(merged);
    const double merge_err = max_diff(mg, tuned, n);
    printf("merged: logits within %.2e of the adapters' (max |logit| ~ %.2f)\n", merge_err, fabs(tuned[0]));
    CHECK(merge_err < 1e-5, "merging changes logits by %g", merge_err);
    CHECK(model_info(merged).memory.count == model_info(base).memory.count, "a merged model is the base's size");
    CHECK(model_info(merged).memory.grads == 0, "the base was frozen and stays so after the merge (%.0f B of gradients)",
          model_info(merged).memory.grads);
    /* later changes keep the mask: the head unfrozen, then the adapters' alpha changed */
    uint8_t *mk = mask_of(m, "lm_head lora_qa lora_qb lora_ka lora_kb lora_va lora_vb lora_oa lora_ob lora_fa lora_fb "
                             "lora_ua lora_ub lora_da lora_db");
    CHECK_OK(wf_model_trainable(m, mk, NULL, slices(m)), m);
    wf_config alpha = lc;
    alpha.lora_alpha = 3;
    CHECK_OK(wf_model_set_config(m, &alpha, 0), m);
    uint8_t *now = calloc((size_t)slices(m), 1);
    CHECK_OK(wf_model_trainable(m, NULL, now, slices(m)), m);
    CHECK(!memcmp(now, mk, (size_t)slices(m)), "a new alpha keeps the trainable mask");
    free(now);
    free(mk);
    /* dropout changes in place too: the weights and the mask stay, evaluation is unchanged */
    wf_config drop = alpha;
    drop.dropout = 0.1f;
    float *before = logits_of(m);
    const size_t nw = block(m);
    float *w0 = copy_floats(wf_model_params(m), nw);
    CHECK_OK(wf_model_set_config(m, &drop, 0), m);
    got = logits_of(m);
    CHECK(!memcmp(got, before, n * sizeof(float)) && !memcmp(wf_model_params(m), w0, nw * sizeof(float)),
          "dropout set in place: the same weights and evaluation");
    uint8_t *adapters = mask_of(m, "lora_qa lora_qb lora_ka lora_kb lora_va lora_vb lora_oa lora_ob lora_fa lora_fb "
                                   "lora_ua lora_ub lora_da lora_db");
    CHECK_OK(wf_model_trainable(m, adapters, NULL, slices(m)), m); /* the head frozen again */
    CHECK_OK(step_ids(m, in, tg, B, T, NULL), m); /* with dropout's masks now planned */
    free(adapters);
    free(got);
    free(before);
    free(w0);
    /* dropped without merging: the base again, exactly */
    wf_config plain = c;
    plain.dropout = 0.1f;
    CHECK_OK(wf_model_set_config(m, &plain, 0), m);
    got = logits_of(m);
    CHECK(!memcmp(got, ref, n * sizeof(float)), "adapters dropped: the base model's logits");
    free(got);
    free(mg);
    free(tuned);
    free(ref);
    wf_buffer_free(ck);
    wf_model_free(merged);
    wf_model_free(base);
    wf_model_free(m);
    wf_model_free(made);
}

/* Training resumes exactly from a checkpoint of a model with adapters and a custom mask. */
static void test_resume(void) {
    wf_config c = small();
    c.lora_rank = 2;
    c.lora_targets = 1 | 4 | 16 | 64;
    c.dropout = 0.1f;
    make_batch(c.vocab_size);
    wf_model *a = wf_model_create(), *b = wf_model_create();
    CHECK_OK(wf_model_init(a, &c), a);
    uint8_t *mask = calloc((size_t)slices(a), 1);
    CHECK_OK(wf_model_trainable(a, NULL, mask, slices(a)), a);
    /* the adapters and also layer 1's attention projection */
    wf_tensor_info t;
    int i = tensor(a, "attprojw", &t), k = 0;
    for (int j = 0; j < i; j++) {
        wf_tensor_info u;
        wf_model_get_tensor(a, j, &u);
        k += u.layers;
    }
    mask[k + 1] = 1;
    CHECK_OK(wf_model_trainable(a, mask, NULL, slices(a)), a);
    for (int s = 0; s < 3; s++) CHECK_OK(step_ids(a, in, tg, B, T, NULL), a);
    uint8_t *buf, *full;
    int32_t n, n_full;
    CHECK_OK(wf_model_save(a, NULL, WF_SAVE_OPTIMIZER, &buf, &n), a);
    CHECK_OK(wf_model_load(b, NULL, buf, n), b);
    uint8_t *got = calloc((size_t)slices(b), 1);
    CHECK_OK(wf_model_trainable(b, NULL, got, slices(b)), b);
    CHECK(!memcmp(got, mask, (size_t)slices(b)), "the mask survives the checkpoint");
    memset(got, 1, (size_t)slices(b));
    wf_model *all = wf_model_create();
    CHECK_OK(wf_model_load(all, NULL, buf, n), all);
    CHECK_OK(wf_model_trainable(all, got, NULL, slices(all)), all);
    CHECK_OK(wf_model_save(all, NULL, WF_SAVE_OPTIMIZER, &full, &n_full), all);
    printf("checkpoint with the optimizer: %d bytes with the mask, %d with every slice trainable\n", n, n_full);
    CHECK(n < n_full * 0.6, "frozen slices carry no moments in the file");
    int same = 1;
    for (int s = 0; s < 4; s++) {
        wf_step_info ia, ib;
        CHECK_OK(step_ids(a, in, tg, B, T, &ia), a);
        CHECK_OK(step_ids(b, in, tg, B, T, &ib), b);
        same &= ia.loss == ib.loss && ia.grad_norm == ib.grad_norm;
    }
    same &= !memcmp(wf_model_params(a), wf_model_params(b), block(a) * sizeof(float));
    same &= !memcmp(wf_model_block(a, 2), wf_model_block(b, 2), gblock(a) * sizeof(float));
    CHECK(same, "4 more steps after the checkpoint: losses, weights and moments bit-identical");
    free(mask);
    free(got);
    wf_buffer_free(buf);
    wf_buffer_free(full);
    wf_model_free(a);
    wf_model_free(b);
    wf_model_free(all);
}

/* The adapters out in PEFT's layout and back onto the base; fused: the rank_pattern entry a
 * fused module's adapter (parts x rank) must have, or NULL. */
static void peft_round_trip(const char *what, wf_config c, int targets, const char *fused) {
    make_batch(c.vocab_size);
    wf_model *m = wf_model_create(), *base = wf_model_create();
    CHECK_OK(wf_model_init(m, &c), m);
    uint8_t *st, *ast;
    char *cj, *acj;
    int32_t st_n, cj_n, ast_n, acj_n;
    CHECK_OK(wf_model_export_safetensors(m, &st, &st_n, &cj, &cj_n), m);
    CHECK_OK(wf_model_import_safetensors(base, cj, cj_n, st, st_n), base);
    wf_config lc = c;
    lc.lora_rank = 2;
    lc.lora_alpha = 5;
    lc.lora_targets = targets;
    CHECK_OK(wf_model_set_config(m, &lc, 0), m);
    for (int s = 0; s < 5; s++) CHECK_OK(step_ids(m, in, tg, B, T, NULL), m);
    float *want = logits_of(m);
    CHECK_OK(wf_model_export_peft(m, NULL, &ast, &ast_n, &acj, &acj_n), m);
    CHECK_OK(wf_model_import_peft(base, acj, acj_n, ast, ast_n), base);
    float *got = logits_of(base);
    const double err = max_diff(got, want, (size_t)B * T * c.vocab_size);
    wf_config bc;
    wf_model_get_config(base, &bc);
    printf("PEFT %s: %d bytes of adapters; imported onto the base: rank %d, alpha %g, logits within %.2e\n", what,
           ast_n, bc.lora_rank, bc.lora_alpha, err);
    CHECK(!memcmp(&bc, &lc, sizeof bc), "%s: the imported config is the exported one (rank %d, alpha %g, targets %d)", what,
          bc.lora_rank, bc.lora_alpha, bc.lora_targets);
    CHECK(!memcmp(wf_model_params(base), wf_model_params(m), block(m) * sizeof(float)), "%s: bit for bit", what);
    CHECK(err < 1e-5, "%s: the imported adapters give other logits (%g)", what, err);
    if (fused) CHECK(strstr(acj, fused) != NULL, "%s: the fused module's rank is parts x r: %s", what, acj);
    /* the adapters are trainable, the base frozen */
    CHECK(model_info(base).memory.grads < model_info(base).memory.params / 4, "imported adapters train alone");
    free(want);
    free(got);
    wf_buffer_free(st);
    wf_buffer_free(cj);
    wf_buffer_free(ast);
    wf_buffer_free(acj);
    wf_model_free(m);
    wf_model_free(base);
}

/* A fused module's adapter trained as PEFT trains it (one A for q, k and v: B reads all its
 * columns in every part) comes back at its own rank, the A shared by the parts it changes. */
static void test_shared_a(void) {
    make_batch(11);
    wf_config c = small(), lc;
    wf_model *m = wf_model_create(), *back = wf_model_create();
    CHECK_OK(wf_model_init(m, &c), m);
    CHECK_OK(wf_model_init(back, &c), back);
    lc = c;
    lc.lora_rank = 2;
    lc.lora_alpha = 4;
    lc.lora_targets = 1; /* q alone: c_attn's A [2, C], B [3C, 2] with k and v's rows zero */
    CHECK_OK(wf_model_set_config(m, &lc, 0), m);
    for (int s = 0; s < 3; s++) CHECK_OK(step_ids(m, in, tg, B, T, NULL), m);
    uint8_t *st;
    char *cj;
    int32_t st_n, cj_n;
    CHECK_OK(wf_model_export_peft(m, NULL, &st, &st_n, &cj, &cj_n), m);
    /* k's rows of layer 0's B read both columns, as q's do: not export's block structure */
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | st[i];
    const char *at = strstr((const char *)st + 8, "\"base_model.model.transformer.h.0.attn.c_attn.lora_B.weight\"");
    long long b0 = -1, b1 = -1;
    CHECK(at && sscanf(strstr(at, "\"data_offsets\":["), "\"data_offsets\":[%lld,%lld]", &b0, &b1) == 2, "B's offsets");
    float *b = (float *)(st + 8 + hlen + b0);
    for (int r = c.d_model; r < 2 * c.d_model; r++) b[2 * r] = b[2 * r + 1] = 0.01f * (float)(r % 5 + 1);
    CHECK_OK(wf_model_import_peft(back, cj, cj_n, st, st_n), back);
    wf_config bc;
    wf_model_get_config(back, &bc);
    CHECK(bc.lora_rank == 2 && bc.lora_targets == (1 | 2) && bc.lora_alpha == 4, "shared A: rank %d, alpha %g, targets %d",
          bc.lora_rank, bc.lora_alpha, bc.lora_targets);
    wf_buffer_free(st);
    wf_buffer_free(cj);
    wf_model_free(m);
    wf_model_free(back);
}

static void test_refusals(void) {
    wf_config c = llama();
    wf_model *m = wf_model_create();
    CHECK_OK(wf_model_init(m, &c), m);
    state before = capture(m);
    wf_config bad = c;
    bad.n_layer = 3;
    CHECK(wf_model_set_config(m, &bad, 0) == WF_ERR_CONFIG && strstr(wf_model_error(m), "n_layer"), "%s",
          wf_model_error(m));
    bad = c;
    bad.lora_rank = 2;
    CHECK(wf_model_set_config(m, &bad, 0) == WF_ERR_CONFIG && strstr(wf_model_error(m), "lora_targets"), "%s",
          wf_model_error(m));
    uint8_t mask[256];
    memset(mask, 1, sizeof mask);
    CHECK(wf_model_trainable(m, mask, NULL, slices(m) - 1) == WF_ERR_ARG, "short mask");
    mask[3] = 2;
    CHECK(wf_model_trainable(m, mask, NULL, slices(m)) == WF_ERR_ARG && strstr(wf_model_error(m), "byte 3"), "%s",
          wf_model_error(m));
    uint8_t *out;
    char *cfg;
    int32_t n, cn;
    CHECK(wf_model_export_peft(m, NULL, &out, &n, &cfg, &cn) == WF_ERR_STATE, "no adapters to export");
    const char *bad_configs[] = {
        "{\"peft_type\": \"PREFIX_TUNING\", \"r\": 2}", "{\"peft_type\": \"LORA\"}",
        "{\"peft_type\": \"LORA\", \"r\": 2, \"use_dora\": true}", "[1]", "{\"peft_type\": \"LORA\", \"r\": 2,",
    };
    const uint8_t empty_st[16] = {8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' '};
    for (size_t i = 0; i < sizeof bad_configs / sizeof *bad_configs; i++) {
        wf_status s = wf_model_import_peft(m, bad_configs[i], (int32_t)strlen(bad_configs[i]), empty_st, 16);
        CHECK(s == WF_ERR_FORMAT || s == WF_ERR_UNSUPPORTED, "bad adapter_config %zu: %s", i, wf_status_string(s));
    }
    const char *ok = "{\"peft_type\": \"LORA\", \"r\": 2, \"lora_alpha\": 4}";
    CHECK(wf_model_import_peft(m, ok, (int32_t)strlen(ok), empty_st, 16) == WF_ERR_FORMAT &&
              strstr(wf_model_error(m), "no LoRA weights"), "%s", wf_model_error(m));
    CHECK(unchanged(m, &before), "refusals left the model as it was");
    /* a base tensor that trains cannot go into an adapter file */
    wf_config lc = c;
    lc.lora_rank = 2;
    lc.lora_targets = 1;
    CHECK_OK(wf_model_set_config(m, &lc, 0), m);
    memset(mask, 1, sizeof mask);
    CHECK_OK(wf_model_trainable(m, mask, NULL, slices(m)), m);
    CHECK(wf_model_export_peft(m, NULL, &out, &n, &cfg, &cn) == WF_ERR_STATE && strstr(wf_model_error(m), "merge"), "%s",
          wf_model_error(m));
    /* the base model's name goes into adapter_config.json as a JSON string; a name that is
     * not UTF-8 is refused before anything is written */
    CHECK_OK(wf_model_set_config(m, &c, 0), m); /* adapters dropped, then added again: they alone train */
    CHECK_OK(wf_model_set_config(m, &lc, 0), m);
    CHECK_OK(wf_model_export_peft(m, "org/m\"1\"\\\n\x01 \xC3\xA9", &out, &n, &cfg, &cn), m);
    CHECK(strstr(cfg, "\"base_model_name_or_path\": \"org/m\\\"1\\\"\\\\\\n\\u0001 \xC3\xA9\",\n") != NULL, "%s", cfg);
    CHECK_OK(wf_model_import_peft(m, cfg, cn, out, n), m);
    wf_buffer_free(out);
    wf_buffer_free(cfg);
    CHECK(wf_model_export_peft(m, "bad \xC3(", &out, &n, &cfg, &cn) == WF_ERR_ARG && strstr(wf_model_error(m), "UTF-8") &&
              !out && !cfg, "%s", wf_model_error(m));
    /* the wasmformer layout has no PEFT names */
    wf_config native = small();
    native.qk_norm = 1;
    native.lora_rank = 2;
    native.lora_targets = 1;
    CHECK_OK(wf_model_init(m, &native), m);
    CHECK(wf_model_export_peft(m, NULL, &out, &n, &cfg, &cn) == WF_ERR_UNSUPPORTED, "%s", wf_model_error(m));
    release(&before);
    wf_model_free(m);
}

int main(void) {
    test_memory();
    test_freezing();
    test_lora();
    test_resume();
    peft_round_trip("Llama layout (q, k, v, o, gate, up, down)", llama(), 127, NULL);
    wf_config g = small();
    peft_round_trip("GPT-2 layout (q, v in c_attn, o, fc)", g, 1 | 4 | 8 | 16, "\"rank_pattern\": {\"c_attn\": 4}");
    g.positions = WF_POS_ROPE; /* micro's shape */
    peft_round_trip("GPT-NeoX layout (q, k, v in query_key_value, o, fc, down)", g, 1 | 2 | 4 | 8 | 16 | 64,
                    "\"rank_pattern\": {\"query_key_value\": 6}");
    test_shared_a();
    test_refusals();
    return check_summary("test_lora");
}
