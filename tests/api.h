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

/* wf_model_gen_start, then n_new tokens into out. */
static inline wf_status generate(wf_model *m, const int32_t *prompt, int32_t n, int32_t n_new, const wf_sampling *s,
                                 uint32_t seed, int32_t *out) {
    wf_status st = wf_model_gen_start(m, prompt, n, seed);
    for (int32_t i = 0; st == WF_OK && i < n_new; i++) st = wf_model_gen_next(m, s, NULL, &out[i], NULL, 0, NULL);
    return st;
}

#endif
