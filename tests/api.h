/* Shorthands over the public API, for the tests: the info getters as values, and the
 * steps, forwards and generations the tests write most. */
#ifndef WF_TEST_API_H
#define WF_TEST_API_H

#include <string.h>

#include "wasmformer.h"

static inline wf_model_info model_info(wf_model *m) {
    wf_model_info i;
    memset(&i, 0, sizeof i);
    wf_model_get_info(m, &i);
    return i;
}

static inline int32_t param_count(wf_model *m) { return (int32_t)model_info(m).memory.count; }

static inline wf_tokenizer_info tok_info(wf_tokenizer *t) {
    wf_tokenizer_info i;
    memset(&i, 0, sizeof i);
    wf_tokenizer_get_info(t, &i);
    return i;
}

static inline wf_batch ids_batch(const int32_t *inputs, const int32_t *targets, int32_t B, int32_t T) {
    return (wf_batch){.inputs = inputs, .targets = targets, .B = B, .T = T};
}

/* A step, or a forward, on a batch of ids alone. */
static inline wf_status step_ids(wf_model *m, const int32_t *inputs, const int32_t *targets, int32_t B, int32_t T,
                                 wf_step_info *info) {
    const wf_batch b = ids_batch(inputs, targets, B, T);
    return wf_model_step(m, &b, info);
}

static inline wf_status forward_ids(wf_model *m, const int32_t *inputs, const int32_t *targets, int32_t B, int32_t T,
                                    float *loss) {
    const wf_batch b = ids_batch(inputs, targets, B, T);
    return wf_model_forward(m, &b, loss);
}

/* A run's settings for the tests: `steps` of B windows of T tokens, the last val_fraction held
 * out, no validation, a flat lr (no warm-up or decay: the optimizer settings' lr, as
 * wf_model_step takes it), no roll-back copy. */
static inline wf_run run_of(int32_t steps, int32_t B, int32_t T, float val_fraction) {
    wf_run r;
    wf_preset(NULL, NULL, NULL, &r);
    r.steps = steps, r.batch_size = B, r.context = T, r.val_fraction = val_fraction;
    r.eval_interval = 0, r.warmup = 0, r.decay_steps = 0, r.rollback = 0;
    return r;
}

/* A whole run of r on tokens[0, n) (keep: on the optimizer's own schedule), then its end (a
 * run ended leaves nothing in a checkpoint): the model then stands where `steps` steps of
 * wf_model_step on sampled batches leave it. */
static inline wf_status train_run(wf_model *m, const wf_run *r, int32_t keep, const int32_t *tokens, int32_t n) {
    wf_run_facts f;
    wf_status s = wf_model_run_begin(m, r, keep, tokens, n);
    while (s == WF_OK && (s = wf_model_run(m, NULL, 1 << 30, 0, &f)) == WF_OK && !f.finished) {
    }
    return s == WF_OK ? wf_model_run_begin(m, NULL, 0, NULL, 0) : s;
}

/* wf_model_gen_start, then n_new tokens into out. */
static inline wf_status generate(wf_model *m, const int32_t *prompt, int32_t n, int32_t n_new, const wf_sampling *s,
                                 uint32_t seed, int32_t *out) {
    wf_status st = wf_model_gen_start(m, prompt, n, seed);
    for (int32_t i = 0; st == WF_OK && i < n_new; i++) st = wf_model_gen_next(m, s, NULL, &out[i], NULL, 0, NULL);
    return st;
}

#endif
