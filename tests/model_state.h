/* What the tests of refused calls share: a small model's config, and a copy of the state a
 * refused call must leave alone (config, optimizer settings, step, and the model's weights
 * and AdamW m and v; not the gradients, which are scratch). (static inline: a test uses what it needs.) A test
 * that wraps malloc defines WF_STATE_MALLOC to the real one first. */
#ifndef WF_MODEL_STATE_H
#define WF_MODEL_STATE_H

#include <stdlib.h>

#include "wasmformer.h"

#ifndef WF_STATE_MALLOC
#define WF_STATE_MALLOC malloc
#endif

static inline wf_config small(void) {
    wf_config c;
    wf_config_default(&c);
    c.vocab_size = 11;
    c.context = 16;
    c.n_layer = 2;
    c.n_head = 2;
    c.d_model = 16;
    c.d_ff = 32;
    return c;
}

/* The model's blocks (src/model.h: 0 params, 1 grads, 2 AdamW m, 3 v): the library's own
 * accessor, which the public header leaves out, for tests that look at the moments. */
float *wf_model_block(wf_model *m, int block);

/* Elements in each of the model's blocks (params, grads, m, v), padded to 4; 0 empty. */
static inline size_t block(wf_model *m) {
    wf_tensor_info t;
    if (!model_info(m).n_tensors) return 0;
    wf_model_get_tensor(m, model_info(m).n_tensors - 1, &t);
    return ((size_t)t.offset + t.size + 3) / 4 * 4;
}

/* Elements of the gradient and moment blocks: the trainable slices' (block(m) when all train). */
static inline size_t gblock(wf_model *m) { return (size_t)(model_info(m).memory.grads / sizeof(float)); }

typedef struct {
    wf_config cfg;
    wf_optim opt;
    int32_t step;
    size_t n, g;
    float *copy; /* weights, then m and v */
} state;

static inline state capture(wf_model *m) {
    state s;
    memset(&s, 0, sizeof s);
    wf_model_get_config(m, &s.cfg);
    wf_model_get_optim(m, &s.opt);
    s.step = model_info(m).step;
    s.n = block(m);
    s.g = gblock(m);
    s.copy = WF_STATE_MALLOC((s.n + 2 * s.g) * sizeof(float) + 1);
    if (s.n) memcpy(s.copy, wf_model_params(m), s.n * sizeof(float));
    if (s.g) { /* a model that never trained has no moments (NULL blocks) */
        memcpy(s.copy + s.n, wf_model_block(m, 2), s.g * sizeof(float));
        memcpy(s.copy + s.n + s.g, wf_model_block(m, 3), s.g * sizeof(float));
    }
    return s;
}

static inline int unchanged(wf_model *m, const state *s) {
    wf_config c;
    wf_optim o;
    wf_model_get_config(m, &c);
    wf_model_get_optim(m, &o);
    return !memcmp(&c, &s->cfg, sizeof c) && !memcmp(&o, &s->opt, sizeof o) && model_info(m).step == s->step &&
           block(m) == s->n && gblock(m) == s->g &&
           (!s->n || !memcmp(wf_model_params(m), s->copy, s->n * sizeof(float))) &&
           (!s->g || (!memcmp(wf_model_block(m, 2), s->copy + s->n, s->g * sizeof(float)) &&
                      !memcmp(wf_model_block(m, 3), s->copy + s->n + s->g, s->g * sizeof(float))));
}

static inline void release(state *s) { free(s->copy); }

#endif
