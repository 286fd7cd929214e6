/* The model handle and its two tables, kept once each:
 *   WF_PARAMS: every parameter tensor (name, shape, decay, init). From it come the
 *     wf_params struct of pointers, the sizes and the offsets into one arena laid out as
 *     [params | grads | adam m | adam v], so the optimizer is one flat loop per tensor.
 *   WF_ACTS: every activation the backward pass reads, planned for a batch shape (B, T).
 * A zero in a shape means the tensor is absent for this config (its pointer is NULL). */
#ifndef WF_MODEL_H
#define WF_MODEL_H

#include "ops.h"

/* Letters the tables use, derived from a config. */
typedef struct {
    int V, C, L, NH, HS, F, T;
    int fc;     /* rows of the first feed-forward matrix per hidden unit: 2 for SwiGLU */
    int pos;    /* 1: a learned position table */
    int bias;   /* 1: linear biases */
    int normb;  /* 1: norms have a bias (LayerNorm with biases) */
    int head;   /* 1: an untied output head */
} wf_dims;

void wf_dims_of(const wf_config *c, wf_dims *d);

enum { WF_INIT_ZERO, WF_INIT_ONE, WF_INIT_NORMAL, WF_INIT_RESIDUAL };

/* X(name, ndim, d0, d1, d2, decay, init); dims beyond ndim are 1. Per-layer tensors are
 * stacked along a leading L. */
#define WF_PARAMS(X)                                                          \
    X(wte,      2, V,            C,            1, 1, WF_INIT_NORMAL)          \
    X(wpe,      2, pos * T,      C,            1, 1, WF_INIT_NORMAL)          \
    X(ln1w,     2, L,            C,            1, 0, WF_INIT_ONE)             \
    X(ln1b,     2, L,            normb * C,    1, 0, WF_INIT_ZERO)            \
    X(qkvw,     3, L,            3 * C,        C, 1, WF_INIT_NORMAL)          \
    X(qkvb,     2, L,            bias * 3 * C, 1, 0, WF_INIT_ZERO)            \
    X(attprojw, 3, L,            C,            C, 1, WF_INIT_RESIDUAL)        \
    X(attprojb, 2, L,            bias * C,     1, 0, WF_INIT_ZERO)            \
    X(ln2w,     2, L,            C,            1, 0, WF_INIT_ONE)             \
    X(ln2b,     2, L,            normb * C,    1, 0, WF_INIT_ZERO)            \
    X(fcw,      3, L,            fc * F,       C, 1, WF_INIT_NORMAL)          \
    X(fcb,      2, L,            bias * fc * F, 1, 0, WF_INIT_ZERO)           \
    X(fcprojw,  3, L,            C,            F, 1, WF_INIT_RESIDUAL)        \
    X(fcprojb,  2, L,            bias * C,     1, 0, WF_INIT_ZERO)            \
    X(lnfw,     1, C,            1,            1, 0, WF_INIT_ONE)             \
    X(lnfb,     1, normb * C,    1,            1, 0, WF_INIT_ZERO)            \
    X(lm_head,  2, head * V,     C,            1, 1, WF_INIT_NORMAL)

#define WF_X_ENUM(name, ...) WF_P_##name,
enum { WF_PARAMS(WF_X_ENUM) WF_N_PARAMS };
#undef WF_X_ENUM

#define WF_X_FIELD(name, ...) wf_real *name;
typedef struct {
    WF_PARAMS(WF_X_FIELD)
} wf_params;
#undef WF_X_FIELD

/* X(name, elements): B, T and the wf_dims letters are in scope. Per-layer activations are
 * stacked along a leading L; the d* entries are backward scratch for one layer at a time. */
#define WF_ACTS(X)                              \
    X(encoded,  B * T * C)                      \
    X(ln1,      L * B * T * C)                  \
    X(ln1_mean, L * B * T)                      \
    X(ln1_rstd, L * B * T)                      \
    X(qkv,      L * B * T * 3 * C)              \
    X(atty,     L * B * T * C)                  \
    X(att,      L * B * NH * T * T)             \
    X(res1,     L * B * T * C)                  \
    X(ln2,      L * B * T * C)                  \
    X(ln2_mean, L * B * T)                      \
    X(ln2_rstd, L * B * T)                      \
    X(fch,      L * B * T * fc * F)             \
    X(fch_act,  L * B * T * F)                  \
    X(res2,     L * B * T * C)                  \
    X(lnf,      B * T * C)                      \
    X(lnf_mean, B * T)                          \
    X(lnf_rstd, B * T)                          \
    X(logits,   B * T * V)                      \
    X(probs,    B * T * V)                      \
    X(losses,   B * T)                          \
    X(branch,   B * T * C)                      \
    X(dres,     B * T * C)                      \
    X(dln,      B * T * C)                      \
    X(dqkv,     B * T * 3 * C)                  \
    X(datty,    B * T * C)                      \
    X(dfch,     B * T * fc * F)                 \
    X(dfch_act, B * T * F)

#define WF_X_FIELD(name, ...) wf_real *name;
typedef struct {
    WF_ACTS(WF_X_FIELD)
} wf_acts;
#undef WF_X_FIELD

/* One layer's slice of the activations, or the generation scratch for a few rows. */
typedef struct {
    wf_real *ln1, *ln1_mean, *ln1_rstd, *qkv, *atty, *att, *res1;
    wf_real *ln2, *ln2_mean, *ln2_rstd, *fch, *fch_act, *res2;
    wf_real *branch; /* sublayer output before the residual add (not saved) */
} wf_layer_acts;

/* Generation state: the KV cache and one row of scratch, allocated with the model. */
typedef struct {
    wf_real *kcache, *vcache; /* [L, context, C] */
    int32_t *window;          /* the tokens whose keys and values are in the cache */
    int32_t n;                /* how many */
    int32_t active;
    wf_rng rng;
    wf_layer_acts row;        /* one position's activations */
    wf_real *x;               /* [C] the residual stream */
    wf_real *lnf, *lnf_mean, *lnf_rstd, *logits, *probs; /* [C], [1], [1], [V], [V] */
    int32_t *order;           /* [V] token order for top-k / top-p */
    wf_real *mem;
    size_t bytes;
} wf_gen;

struct wf_model {
    int ready; /* 0: an empty handle */
    wf_config cfg;
    wf_dims d;
    wf_optim opt;
    int32_t step;
    wf_rng rng_split[2]; /* the batch sampler's train and validation streams */

    wf_tensor_info tensors[WF_N_PARAMS];
    size_t n_params;
    wf_real *arena; /* [params | grads | m | v], each n_params */
    wf_params p, g;

    wf_real *pos_table; /* [context, C]: sinusoidal positions, else NULL */

    wf_real *act_mem;   /* activations, planned for the largest shape so far */
    size_t act_cap;     /* elements */
    wf_acts a;          /* carved for the shape of the last forward */
    int32_t B, T;       /* that shape; 0 before any forward */

    wf_gen gen;
    wf_pool *pool; /* worker threads (wf_model_set_threads), or NULL: one thread */
    char err[256];
};

/* The position table added to embeddings: learned wpe, the fixed sinusoids, or NULL. */
static inline const wf_real *wf_position_table(const wf_model *m) { return m->d.pos ? m->p.wpe : m->pos_table; }

#define WF_ERR(m, status, ...) wf_fail((m)->err, sizeof (m)->err, (status), __VA_ARGS__)

/* model.c, for generate.c: one layer forward over rows of x; with kcache/vcache (the
 * layer's cache rows) the new keys and values are stored at position pos and attention
 * reads the whole cache. */
void wf_layer_forward(const wf_model *m, int l, const wf_layer_acts *a, const wf_real *x,
                      int B, int T, wf_real *kcache, wf_real *vcache, int pos);
void wf_head_forward(const wf_model *m, wf_real *logits, wf_real *lnf, wf_real *lnf_mean,
                     wf_real *lnf_rstd, const wf_real *x, int N);

/* generate.c, for model.c */
size_t wf_gen_bytes(const wf_dims *d);
void wf_gen_carve(wf_gen *g, const wf_dims *d, wf_real *mem);
int32_t wf_sample_token(const wf_real *logits, int V, const wf_sampling *s, wf_rng *rng,
                        wf_real *probs, int32_t *order);

#endif /* WF_MODEL_H */
