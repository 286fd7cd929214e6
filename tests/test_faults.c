/* Faults (docs/ERRORS.md, rows F1, F2 and F10), natively:
 *   a step whose loss, gradient norm or update would be NaN or infinite is refused with
 *   weights and optimizer state exactly as before, a message with a hint, and training
 *   goes on;
 *   generation and beam search from logits that are NaN or infinite are refused
 *   (WF_ERR_NUMERIC), the generation as it was;
 *   every allocation of every fallible call fails in turn (the linker wraps malloc, calloc,
 *   realloc and aligned_alloc, see CMakeLists.txt): the call returns WF_ERR_NOMEM, the
 *   handle is unchanged and still works, and nothing leaks (the sanitizer build and
 *   valgrind check that part);
 *   training steps of a planned shape and generation allocate nothing. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "wasmformer.h"

/* ---- allocation failure injection ---- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);

static long allocations; /* since the last arm() */
static long fail_at = -1; /* the allocation (0-based) that fails; -1: none */
static int failed;        /* whether it happened */

static void arm(long k) {
    allocations = 0;
    fail_at = k;
    failed = 0;
}

static int refuse(void) {
    if (allocations++ == fail_at) {
        failed = 1;
        return 1;
    }
    return 0;
}

void *__wrap_malloc(size_t n) { return refuse() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t k, size_t n) { return refuse() ? NULL : __real_calloc(k, n); }
void *__wrap_realloc(void *p, size_t n) { return refuse() ? NULL : __real_realloc(p, n); }
void *__wrap_aligned_alloc(size_t a, size_t n) { return refuse() ? NULL : __real_aligned_alloc(a, n); }

/* ---- the state a refused call must not touch: model_state.h ---- */

#define WF_STATE_MALLOC __real_malloc /* a copy that injected failures leave alone */
#include "model_state.h"

static int32_t in[64], tg[64];

static wf_model *trained(void) {
    wf_config c = small();
    wf_model *m = wf_model_create();
    CHECK_OK(wf_model_init(m, &c), m);
    for (int i = 0; i < 64; i++) {
        in[i] = (i * 7) % c.vocab_size;
        tg[i] = (i * 3) % c.vocab_size;
    }
    for (int k = 0; k < 3; k++) CHECK_OK(step_ids(m, in, tg, 2, 16, NULL), m);
    return m;
}

static float *tensor(wf_model *m, const char *name, int32_t *size) {
    wf_tensor_info t;
    for (int i = 0; i < model_info(m).n_tensors; i++) {
        wf_model_get_tensor(m, i, &t);
        if (!strcmp(t.name, name)) {
            *size = t.size;
            return wf_model_params(m) + t.offset;
        }
    }
    return NULL;
}

/* ---- F1: non-finite steps ---- */

/* Scales a tensor (zero entries become `scale`), takes a step that must be refused with
 * `text` in the message and nothing changed, undoes the scaling and trains on. */
static void refused_step(const char *name, double scale, float lr, const char *text) {
    wf_model *m = trained();
    wf_optim o;
    wf_model_get_optim(m, &o);
    o.grad_clip = 0; /* clipping would tame the gradients these cases blow up */
    if (lr > 0) o.lr = lr;
    CHECK_OK(wf_model_set_optim(m, &o), m);
    int32_t size = 0;
    float *w = name ? tensor(m, name, &size) : NULL;
    float *saved = __real_malloc((size_t)size * sizeof(float) + 1);
    if (w) memcpy(saved, w, (size_t)size * sizeof(float));
    for (int32_t j = 0; j < size; j++) w[j] = w[j] == 0 ? (float)scale : (float)(w[j] * scale);
    state before = capture(m);
    wf_step_info info;
    wf_status s = step_ids(m, in, tg, 2, 16, &info);
    CHECK(s == WF_ERR_NUMERIC, "%s x %g, lr %g: got %s", name ? name : "-", scale, (double)lr, wf_status_string(s));
    CHECK(strstr(wf_model_error(m), text) != NULL, "message \"%s\" lacks \"%s\"", wf_model_error(m), text);
    CHECK(strstr(wf_model_error(m), "weights and optimizer state are unchanged") != NULL, "%s", wf_model_error(m));
    CHECK(strstr(wf_model_error(m), "try a lower learning rate") != NULL, "a hint: %s", wf_model_error(m));
    CHECK(unchanged(m, &before), "%s: the refused step changed weights, moments, step or settings", text);
    /* training continues once the cause is gone */
    if (w) memcpy(w, saved, (size_t)size * sizeof(float));
    wf_model_get_optim(m, &o);
    o.lr = 1e-3f;
    o.grad_clip = 1;
    CHECK_OK(wf_model_set_optim(m, &o), m);
    CHECK_OK(step_ids(m, in, tg, 2, 16, &info), m);
    CHECK(model_info(m).step == before.step + 1 && isfinite(info.loss), "the next step is taken");
    free(saved);
    release(&before);
    wf_model_free(m);
}

static void f1_non_finite_steps(void) {
    refused_step("qkvw", 1e20, 0, "the loss is NaN");
    refused_step("fcb", 1e26, 0, "the gradient norm is not finite");
    /* finite gradients of the head whose squares (AdamW's v) overflow */
    refused_step("lnfw", 1e26, 0, "the update at learning rate 0.0003 would overflow \"wte\"");
    refused_step(NULL, 1, 1e38f, "the update at learning rate 1e+38 would overflow"); /* an absurd lr */
    /* an update at the same lr that stays finite is taken: the check refuses overflow, not size */
    wf_model *m = trained();
    wf_optim o;
    wf_model_get_optim(m, &o);
    o.lr = 1e3f;
    o.weight_decay = 0;
    CHECK_OK(wf_model_set_optim(m, &o), m);
    CHECK_OK(step_ids(m, in, tg, 2, 16, NULL), m);
    wf_model_free(m);
}

/* ---- F10: generation from logits that are not finite ---- */

/* Every weight of tensor `name` set to x (finite: a file may hold such weights). */
static void fill_tensor(wf_model *m, const char *name, float x) {
    int32_t size = 0;
    float *w = tensor(m, name, &size);
    CHECK(w != NULL, "tensor %s", name);
    for (int32_t j = 0; w && j < size; j++) w[j] = x;
}

static void f10_non_finite_logits(void) {
    /* a decoder whose embeddings are 3e38: the first norm's mean overflows, NaN flows on */
    wf_model *m = trained();
    fill_tensor(m, "wte", 3e38f);
    int32_t prompt[3] = {1, 2, 3}, tok = -7;
    CHECK_OK(wf_model_gen_start(m, prompt, 3, 1), m);
    const float *logits = wf_model_gen_logits(m);
    CHECK(logits && !isfinite(logits[0]), "the logits are not finite: %g", logits ? (double)logits[0] : 0.0);
    const wf_sampling kinds[] = {{0.8f, 0, 1, 0, 0}, {0, 0, 1, 0, 0}, {1, 3, 0.9f, 0, 1}}; /* sampled, greedy, filtered */
    for (int k = 0; k < 3; k++) {
        wf_status s = wf_model_gen_next(m, &kinds[k], NULL, &tok, NULL, 0, NULL);
        CHECK(s == WF_ERR_NUMERIC, "sampling %d: got %s", k, wf_status_string(s));
        /* the message names the first logit sampled from: no_unk starts at id 1 */
        const char *want = k == 2 ? "the logits are not finite (token 1's is NaN)" : "the logits are not finite (token 0's is NaN)";
        CHECK(strstr(wf_model_error(m), want) != NULL, "%s", wf_model_error(m));
        CHECK(tok == -7, "no token written");
    }
    /* the generation is as it was: its logits are the same, and it has not moved */
    CHECK(wf_model_gen_logits(m) == logits && !isfinite(logits[0]), "the generation is unchanged");
    wf_model_free(m);

    /* infinite logits alone: a sound forward into an untied head that overflows (every
     * product 3e38 x 3e38) */
    wf_config c = small();
    c.tied_head = 0;
    m = wf_model_create();
    CHECK_OK(wf_model_init(m, &c), m);
    fill_tensor(m, "lnfb", 3e38f);
    fill_tensor(m, "lm_head", 3e38f);
    CHECK_OK(wf_model_gen_start(m, prompt, 3, 1), m);
    CHECK(wf_model_gen_next(m, &kinds[0], NULL, &tok, NULL, 0, NULL) == WF_ERR_NUMERIC, "%s", wf_model_error(m));
    CHECK(strstr(wf_model_error(m), "(token 0's is +inf)") != NULL, "%s", wf_model_error(m));
    wf_model_free(m);

    /* an encoder-decoder's beam search */
    c = small();
    c.arch = WF_ARCH_ENCODER_DECODER;
    c.n_enc_layer = 1;
    m = wf_model_create();
    CHECK_OK(wf_model_init(m, &c), m);
    int32_t out[16], n_out = -1, src[4] = {1, 2, 3, 4};
    CHECK_OK(wf_model_beam_search(m, src, 4, 9, 10, 2, 8, out, &n_out), m);
    fill_tensor(m, "wte", 3e38f);
    n_out = -1;
    wf_status s = wf_model_beam_search(m, src, 4, 9, 10, 2, 8, out, &n_out);
    CHECK(s == WF_ERR_NUMERIC, "beam search: got %s", wf_status_string(s));
    CHECK(strstr(wf_model_error(m), "the logits are not finite (token 0's is NaN at step 0)") != NULL, "%s", wf_model_error(m));
    CHECK(n_out == -1, "nothing decoded");
    wf_model_free(m);
}

/* ---- F4: allocation failure everywhere ---- */

typedef struct {
    wf_model *m;
    wf_tokenizer *t;
    uint8_t *ckpt, *st;
    char *cfg;
    int32_t n_ckpt, n_st, n_cfg;
} fixture;

/* One fallible call; returns its status (and leaves any result to be freed inside). */
typedef wf_status (*call_fn)(fixture *f);

static wf_status call_init(fixture *f) {
    wf_config c = small();
    c.n_layer = 3;
    return wf_model_init(f->m, &c);
}
static wf_status call_bigger_batch(fixture *f) {
    static int32_t ids[4 * 16];
    return step_ids(f->m, ids, ids, 4, 16, NULL);
}
static wf_status call_save(fixture *f) {
    uint8_t *b = NULL;
    int32_t n;
    wf_status s = wf_model_save(f->m, f->t, WF_SAVE_OPTIMIZER, &b, &n);
    wf_buffer_free(b);
    return s;
}
static wf_status call_load(fixture *f) { return wf_model_load(f->m, f->t, f->ckpt, f->n_ckpt); }
static wf_status call_export(fixture *f) {
    uint8_t *st = NULL;
    char *cfg = NULL;
    int32_t a, b;
    wf_status s = wf_model_export_safetensors(f->m, &st, &a, &cfg, &b);
    wf_buffer_free(st);
    wf_buffer_free(cfg);
    return s;
}
static wf_status call_import(fixture *f) { return wf_model_import_safetensors(f->m, f->cfg, f->n_cfg, f->st, f->n_st); }

static const char TEXT[] = "It is a truth universally acknowledged, that a single man in possession of a good fortune, "
                           "must be in want of a wife.";

static wf_status call_train_char(fixture *f) { return wf_tokenizer_train(f->t, WF_TOKENIZER_CHAR, TEXT, (int32_t)strlen(TEXT), 0); }
static wf_status call_train_bpe(fixture *f) { return wf_tokenizer_train(f->t, WF_TOKENIZER_BPE, TEXT, (int32_t)strlen(TEXT), 300); }
static wf_status call_tok_save_load(fixture *f) {
    uint8_t *b = NULL;
    int32_t n;
    wf_status s = wf_tokenizer_save(f->t, 0, &b, &n);
    if (s == WF_OK) s = wf_tokenizer_load(f->t, b, n);
    wf_buffer_free(b);
    return s;
}

/* the tokenizer fixtures: a tokenizer.json and a llama2.c tokenizer.bin */
static uint8_t *tok_json, *tok_bin;
static int32_t n_tok_json, n_tok_bin;

static wf_status call_load_json(fixture *f) { return wf_tokenizer_load(f->t, tok_json, n_tok_json); }
static wf_status call_load_llama2c(fixture *f) { return wf_tokenizer_load(f->t, tok_bin, n_tok_bin); }
static wf_status call_encode(fixture *f) {
    int32_t ids[sizeof TEXT + 8], n;
    return wf_tokenizer_encode(f->t, TEXT, (int32_t)strlen(TEXT), ids, (int32_t)(sizeof TEXT + 8), &n);
}
static wf_status call_save_json(fixture *f) {
    uint8_t *b = NULL;
    int32_t n;
    wf_status s = wf_tokenizer_save(f->t, WF_SAVE_JSON, &b, &n);
    wf_buffer_free(b);
    return s;
}

static wf_status call_set_threads(fixture *f) { return wf_model_set_threads(f->m, 3); }

/* a training run: a copy of its tokens, its batches, its roll-back copy */
static int32_t run_tokens[300];
static wf_status call_run_begin(fixture *f) {
    wf_run r = run_of(5, 2, 16, 0.2f);
    r.rollback = 1, r.eval_interval = 5;
    return wf_model_run_begin(f->m, &r, 0, run_tokens, 300);
}

/* Fine-tuning (issue 15): adapters added, the mask changed, adapters out and in, merged. */
static wf_config with_lora(wf_model *m, int rank) {
    wf_config c;
    wf_model_get_config(m, &c);
    c.lora_rank = rank;
    c.lora_targets = rank ? 1 | 2 | 4 | 8 | 16 | 64 : 0;
    return c;
}
static wf_status call_add_lora(fixture *f) {
    wf_config c = with_lora(f->m, 2);
    return wf_model_set_config(f->m, &c, 0);
}
static uint8_t *lora_st;
static char *lora_cfg;
static int32_t lora_n_st, lora_n_cfg;
static wf_status call_lora_export(fixture *f) {
    wf_buffer_free(lora_st);
    wf_buffer_free(lora_cfg);
    lora_st = NULL;
    lora_cfg = NULL;
    return wf_model_export_peft(f->m, "base", &lora_st, &lora_n_st, &lora_cfg, &lora_n_cfg);
}
static wf_status call_lora_import(fixture *f) { return wf_model_import_peft(f->m, lora_cfg, lora_n_cfg, lora_st, lora_n_st); }
static wf_status call_train_all(fixture *f) {
    uint8_t mask[512];
    memset(mask, 1, sizeof mask);
    int32_t n = 0;
    for (int i = 0; i < model_info(f->m).n_tensors; i++) {
        wf_tensor_info t;
        wf_model_get_tensor(f->m, i, &t);
        n += t.layers;
    }
    return wf_model_trainable(f->m, mask, NULL, n);
}
static wf_status call_merge(fixture *f) {
    wf_config c = with_lora(f->m, 0);
    return wf_model_set_config(f->m, &c, 1);
}

/* Fails each allocation of `call` in turn, from the first until the call needs no more;
 * after each, the call must have said WF_ERR_NOMEM and left the model and tokenizer as
 * they were, and both must still work. */
static void every_allocation_fails(const char *what, call_fn call, fixture *f) {
    long k = 0;
    for (;; k++) {
        state before = capture(f->m);
        int32_t vocab = tok_info(f->t).vocab_size;
        arm(k);
        wf_status s = call(f);
        int hit = failed;
        arm(-1);
        if (!hit) {
            CHECK(s == WF_OK, "%s without failures: %s", what, wf_status_string(s));
            release(&before);
            break;
        }
        CHECK(s == WF_ERR_NOMEM, "%s, allocation %ld failed: got %s (%s)", what, k, wf_status_string(s), wf_model_error(f->m));
        CHECK(unchanged(f->m, &before), "%s, allocation %ld failed: the model changed", what, k);
        CHECK(tok_info(f->t).vocab_size == vocab, "%s, allocation %ld failed: the tokenizer changed", what, k);
        release(&before);
    }
    printf("%s: each of %ld allocations failed in turn\n", what, k);
    CHECK(k > 0, "%s allocates nothing: the test tests nothing", what);
    /* still usable */
    CHECK_OK(step_ids(f->m, in, tg, 2, 16, NULL), f->m);
}

static void f4_allocation_failures(void) {
    fixture f;
    memset(&f, 0, sizeof f);
    f.m = trained();
    f.t = wf_tokenizer_create();
    CHECK(wf_tokenizer_train(f.t, WF_TOKENIZER_CHAR, "abcdefghij", 10, 0) == WF_OK, "tokenizer");
    CHECK_OK(wf_model_save(f.m, f.t, WF_SAVE_OPTIMIZER, &f.ckpt, &f.n_ckpt), f.m);
    CHECK_OK(wf_model_export_safetensors(f.m, &f.st, &f.n_st, &f.cfg, &f.n_cfg), f.m);

    every_allocation_fails("wf_model_init over a model", call_init, &f);
    wf_config c = small();
    CHECK_OK(wf_model_init(f.m, &c), f.m); /* back to the shape the rest expects */
    every_allocation_fails("wf_model_step on a larger batch", call_bigger_batch, &f);
    every_allocation_fails("wf_model_save", call_save, &f);
    every_allocation_fails("wf_model_load", call_load, &f);
    every_allocation_fails("wf_model_export_safetensors", call_export, &f);
    every_allocation_fails("wf_model_import_safetensors", call_import, &f);
    every_allocation_fails("wf_tokenizer_train (char)", call_train_char, &f);
    every_allocation_fails("wf_tokenizer_train (bpe)", call_train_bpe, &f);
    every_allocation_fails("wf_tokenizer_save + load", call_tok_save_load, &f);
    every_allocation_fails("wf_model_set_config (LoRA adapters added)", call_add_lora, &f);
    every_allocation_fails("wf_model_export_peft", call_lora_export, &f);
    every_allocation_fails("wf_model_import_peft", call_lora_import, &f);
    every_allocation_fails("wf_model_trainable (every slice)", call_train_all, &f);
    every_allocation_fails("wf_model_set_config (adapters merged)", call_merge, &f);
    wf_buffer_free(lora_st);
    wf_buffer_free(lora_cfg);
    /* the vocabulary tokenizers (larger than the model's vocabulary: after the model's calls) */
    tok_json = read_file("tests/fixtures/tokenizers/llama.json", &n_tok_json);
    tok_bin = read_file("tests/fixtures/tokenizers/llama2c_tok.bin", &n_tok_bin);
    CHECK(n_tok_json > 0 && n_tok_bin > 0, "the tokenizer fixtures (run from the repository root)");
    every_allocation_fails("wf_tokenizer_load (tokenizer.json)", call_load_json, &f);
    every_allocation_fails("wf_tokenizer_encode (tokenizer.json)", call_encode, &f);
    every_allocation_fails("wf_tokenizer_save (json)", call_save_json, &f);
    every_allocation_fails("wf_tokenizer_save + load (tokenizer.json)", call_tok_save_load, &f);
    every_allocation_fails("wf_tokenizer_load (tokenizer.bin)", call_load_llama2c, &f);
    every_allocation_fails("wf_tokenizer_encode (llama2.c)", call_encode, &f);
    every_allocation_fails("wf_tokenizer_save + load (llama2.c)", call_tok_save_load, &f);
    free(tok_json);
    free(tok_bin);
#ifdef WF_THREADS
    every_allocation_fails("wf_model_set_threads (a pool of workers)", call_set_threads, &f);
    for (int i = 0; i < 300; i++) run_tokens[i] = i % 7;
    every_allocation_fails("wf_model_run_begin (tokens, batches, roll-back copy)", call_run_begin, &f);
    CHECK_OK(wf_model_set_threads(f.m, 1), f.m);
#else
    (void)call_set_threads;
#endif

    /* handles: creation fails cleanly */
    arm(0);
    wf_model *none = wf_model_create();
    arm(-1);
    CHECK(none == NULL, "wf_model_create without memory returns NULL");
    arm(0);
    wf_tokenizer *no_tok = wf_tokenizer_create();
    arm(-1);
    CHECK(no_tok == NULL, "wf_tokenizer_create without memory returns NULL");

    wf_buffer_free(f.ckpt);
    wf_buffer_free(f.st);
    wf_buffer_free(f.cfg);
    wf_tokenizer_free(f.t);
    wf_model_free(f.m);
}

/* Steps of a shape already planned, and generation, allocate nothing: the rule that makes
 * their failures impossible rather than handled. */
static void no_allocation_on_the_hot_path(void) {
    wf_model *m = trained();
    arm(-1);
    CHECK_OK(step_ids(m, in, tg, 2, 16, NULL), m);
    CHECK_OK(step_ids(m, in, tg, 1, 8, NULL), m); /* smaller: re-carved, not reallocated */
    CHECK(allocations == 0, "training steps allocated %ld times", allocations);
    int32_t out[40];
    wf_sampling s = {0.8f, 5, 0.9f, 0, 0};
    arm(-1);
    CHECK_OK(generate(m, in, 10, 40, &s, 3, out), m); /* 10 + 40 > 16: the window slides */
    float loss;
    CHECK_OK(forward_ids(m, in, tg, 2, 16, &loss), m);
    CHECK(allocations == 0, "generation and forward allocated %ld times", allocations);
    /* a run's steps, validations and its end allocate nothing once it has begun */
    int32_t tokens[300];
    for (int i = 0; i < 300; i++) tokens[i] = i % 7;
    wf_run r = run_of(12, 2, 16, 0.2f);
    r.rollback = 1, r.eval_interval = 4;
    CHECK_OK(wf_model_run_begin(m, &r, 0, tokens, 300), m);
    wf_run_facts f;
    CHECK_OK(wf_model_run(m, NULL, 1, 0, &f), m);
    arm(-1);
    do CHECK_OK(wf_model_run(m, NULL, 100, 0, &f), m);
    while (!f.finished);
    CHECK(allocations == 0 && f.steps == 12 && f.val_step == f.step, "a run's steps allocated %ld times", allocations);
    wf_model_free(m);
}

int main(void) {
    f1_non_finite_steps();
    f10_non_finite_logits();
    f4_allocation_failures();
    no_allocation_on_the_hot_path();
    return check_summary("test_faults");
}
