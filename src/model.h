/* The model handle and its tables, kept once each:
 *   WF_PARAMS: every parameter tensor (name, shape, decay, init). From it come the
 *     wf_params struct of pointers, the sizes and the offsets into one arena laid out as
 *     [params | grads | adam m | adam v], so the optimizer is one flat loop per tensor.
 *   WF_LAYER_ACTS: what one layer saves for backward, for any number of rows; training
 *     stacks one block per layer, generation carves one row of it.
 *   WF_ACTS: the rest of the activations and the backward scratch, planned for a batch
 *     shape (B, T, S).
 * A zero in a shape means the tensor is absent for this config (its pointer is NULL).
 * Architectures and block variants are described in docs/ARCHITECTURES.md. */
#ifndef WF_MODEL_H
#define WF_MODEL_H

#include "ops.h"

/* Letters the tables use, derived from a config. */
typedef struct {
    int V, C, NH, HS, F, T;
    int L;      /* layers of the stack under the head: the decoder's, or the encoder-only's */
    int E;      /* encoder layers of an encoder-decoder; 0 for the other archs */
    int xa;     /* 1: encoder-decoder (an encoder stack, cross-attention in every decoder layer) */
    int fc;     /* rows of the first feed-forward matrix per hidden unit: 2 for SwiGLU */
    int pos;    /* 1: learned position tables */
    int bias;   /* 1: linear biases */
    int normb;  /* 1: norms have a bias (LayerNorm with biases) */
    int head;   /* 1: an untied output head */
    int post;   /* 1: Post-LN blocks */
    int rope;   /* 1: rotary positions in self-attention */
    int drop;   /* 1: dropout masks are planned (cfg.dropout > 0) */
    int K;      /* decoding hypotheses, each with a KV cache: 1 for decoders, max_beam for
                   encoder-decoders, 0 for encoders (which do not generate) */
} wf_dims;

void wf_dims_of(const wf_config *c, wf_dims *d);

enum { WF_INIT_ZERO, WF_INIT_ONE, WF_INIT_NORMAL, WF_INIT_RESIDUAL };

/* X(name, ndim, d0, d1, d2, decay, init); dims beyond ndim are 1. Per-layer tensors are
 * stacked along a leading L (or E). The enc_ tensors exist in encoder-decoders only; the
 * cross-attention ones (lnc, cq, ckv, cproj) in their decoder layers. ckvw's rows are
 * [keys; values], qkvw's [queries; keys; values]. The order is the arena's. */
#define WF_PARAMS(X)                                                              \
    X(wte,          2, V,            C,              1, 1, WF_INIT_NORMAL)        \
    X(wpe,          2, pos * T,      C,              1, 1, WF_INIT_NORMAL)        \
    X(enc_wpe,      2, xa * pos * T, C,              1, 1, WF_INIT_NORMAL)        \
    WF_BLOCK_PARAMS(X, enc_, E, )                                                 \
    X(enc_lnfw,     1, xa * C,       1,              1, 0, WF_INIT_ONE)           \
    X(enc_lnfb,     1, xa * normb * C, 1,            1, 0, WF_INIT_ZERO)          \
    WF_BLOCK_PARAMS(X, , L, WF_CROSS_PARAMS(X))                                   \
    X(lnfw,         1, C,            1,              1, 0, WF_INIT_ONE)           \
    X(lnfb,         1, normb * C,    1,              1, 0, WF_INIT_ZERO)          \
    X(lm_head,      2, head * V,     C,              1, 1, WF_INIT_NORMAL)

/* One stack of n layers, its names prefixed; cross (the cross-attention rows, or nothing)
 * sits between the self-attention and the feed-forward rows. */
#define WF_BLOCK_PARAMS(X, prefix, n, cross)                                      \
    X(prefix##ln1w,     2, n,        C,              1, 0, WF_INIT_ONE)           \
    X(prefix##ln1b,     2, n,        normb * C,      1, 0, WF_INIT_ZERO)          \
    X(prefix##qkvw,     3, n,        3 * C,          C, 1, WF_INIT_NORMAL)        \
    X(prefix##qkvb,     2, n,        bias * 3 * C,   1, 0, WF_INIT_ZERO)          \
    X(prefix##attprojw, 3, n,        C,              C, 1, WF_INIT_RESIDUAL)      \
    X(prefix##attprojb, 2, n,        bias * C,       1, 0, WF_INIT_ZERO)          \
    cross                                                                         \
    X(prefix##ln2w,     2, n,        C,              1, 0, WF_INIT_ONE)           \
    X(prefix##ln2b,     2, n,        normb * C,      1, 0, WF_INIT_ZERO)          \
    X(prefix##fcw,      3, n,        fc * F,         C, 1, WF_INIT_NORMAL)        \
    X(prefix##fcb,      2, n,        bias * fc * F,  1, 0, WF_INIT_ZERO)          \
    X(prefix##fcprojw,  3, n,        C,              F, 1, WF_INIT_RESIDUAL)      \
    X(prefix##fcprojb,  2, n,        bias * C,       1, 0, WF_INIT_ZERO)

#define WF_CROSS_PARAMS(X)                                                        \
    X(lncw,         2, xa * L,       C,              1, 0, WF_INIT_ONE)           \
    X(lncb,         2, xa * L,       normb * C,      1, 0, WF_INIT_ZERO)          \
    X(cqw,          3, xa * L,       C,              C, 1, WF_INIT_NORMAL)        \
    X(cqb,          2, xa * L,       bias * C,       1, 0, WF_INIT_ZERO)          \
    X(ckvw,         3, xa * L,       2 * C,          C, 1, WF_INIT_NORMAL)        \
    X(ckvb,         2, xa * L,       bias * 2 * C,   1, 0, WF_INIT_ZERO)          \
    X(cprojw,       3, xa * L,       C,              C, 1, WF_INIT_RESIDUAL)      \
    X(cprojb,       2, xa * L,       bias * C,       1, 0, WF_INIT_ZERO)

#define WF_X_ENUM(name, ...) WF_P_##name,
enum { WF_PARAMS(WF_X_ENUM) WF_N_PARAMS };
#undef WF_X_ENUM

#define WF_X_FIELD(name, ...) wf_real *name;
typedef struct {
    WF_PARAMS(WF_X_FIELD)
} wf_params;
#undef WF_X_FIELD

/* One layer's tensors, the same for both stacks; the cross-attention ones are NULL
 * outside encoder-decoder decoders. */
#define WF_X_FIELD(name, ...) wf_real *name;
typedef struct {
    WF_BLOCK_PARAMS(WF_X_FIELD, , L, WF_CROSS_PARAMS(WF_X_FIELD))
} wf_layer_w;
#undef WF_X_FIELD

enum { WF_STACK_MAIN = 0, WF_STACK_ENC = 1 };

/* Layer l of a stack: weights (grads = 0) or their gradients (grads = 1). */
void wf_layer_weights(const wf_model *m, int stack, int l, int grads, wf_layer_w *w);

/* X(name, elements) for one layer of N rows: Tk keys per sequence in self-attention, S
 * source rows per sequence and BS source rows in all for cross-attention (x = 1), drop = 1
 * for dropout masks. The norms' outputs ln1, lnc, ln2 sit before their sublayer (Pre-LN)
 * or after its residual add (Post-LN); mean is unused by RMSNorm. */
#define WF_LAYER_ACTS(X)                     \
    X(ln1,      N * C)                       \
    X(ln1_mean, N)                           \
    X(ln1_rstd, N)                           \
    X(qkv,      N * 3 * C)                   \
    X(atty,     N * C)                       \
    X(att,      N * NH * Tk)                 \
    X(res1,     N * C)                       \
    X(mask1,    drop * N * C)                \
    X(lnc,      x * N * C)                   \
    X(lnc_mean, x * N)                       \
    X(lnc_rstd, x * N)                       \
    X(cq,       x * N * C)                   \
    X(ckv,      x * BS * 2 * C)              \
    X(catty,    x * N * C)                   \
    X(catt,     x * N * NH * S)              \
    X(resc,     x * N * C)                   \
    X(maskc,    x * drop * N * C)            \
    X(ln2,      N * C)                       \
    X(ln2_mean, N)                           \
    X(ln2_rstd, N)                           \
    X(fch,      N * fc * F)                  \
    X(fch_act,  N * F)                       \
    X(res2,     N * C)                       \
    X(mask2,    drop * N * C)

#define WF_X_FIELD(name, ...) wf_real *name;
typedef struct {
    WF_LAYER_ACTS(WF_X_FIELD)
    wf_real *branch; /* [N, C] scratch: a sublayer's output before the residual add */
    wf_real *out;    /* the layer's output: res2 (Pre-LN) or ln2 (Post-LN) */
} wf_layer_acts;
#undef WF_X_FIELD

/* Carves one layer's activations from mem (NULL: only counts) and returns the elements
 * used; branch is left to the caller. */
size_t wf_layer_carve(wf_layer_acts *a, wf_real *mem, const wf_dims *d, size_t N, size_t Tk, size_t S,
                      size_t BS, size_t x, size_t drop);
double wf_layer_elems_d(const wf_dims *d, double N, double Tk, double S, double BS, double x, double drop); /* the same count in double */

/* X(name, elements): B, T, S (source rows), R = max(T, S) and the wf_dims letters are in
 * scope. The layers of both stacks are blocks of WF_LAYER_ACTS; the d* entries are
 * backward scratch for one layer at a time, sized for the longer of the two stacks. */
#define WF_ACTS(X)                               \
    X(encoded,      B * T * C)                   \
    X(emb_mask,     drop * B * T * C)            \
    X(enc_encoded,  xa * B * S * C)              \
    X(enc_emb_mask, xa * drop * B * S * C)       \
    X(enc_lnf,      xa * B * S * C)              \
    X(enc_lnf_mean, xa * B * S)                  \
    X(enc_lnf_rstd, xa * B * S)                  \
    X(lnf,          B * T * C)                   \
    X(lnf_mean,     B * T)                       \
    X(lnf_rstd,     B * T)                       \
    X(logits,       B * T * V)                   \
    X(probs,        B * T * V)                   \
    X(losses,       B * T)                       \
    X(targets,      B * T)                       \
    X(branch,       B * R * C)                   \
    X(dres,         B * R * C)                   \
    X(dln,          B * R * C)                   \
    X(dqkv,         B * R * 3 * C)               \
    X(datty,        B * R * C)                   \
    X(dfch,         B * R * fc * F)              \
    X(dfch_act,     B * R * F)                   \
    X(dckv,         xa * B * S * 2 * C)          \
    X(denc,         xa * B * S * C)              \
    X(layers,       L * main_layer)              \
    X(enc_layers,   E * enc_layer)

#define WF_X_FIELD(name, ...) wf_real *name;
typedef struct {
    WF_ACTS(WF_X_FIELD)
} wf_acts;
#undef WF_X_FIELD

/* How one stack runs: the call's shape, masks and caches. */
typedef struct {
    int B, T;                 /* B sequences of T rows */
    int causal;               /* 1: decoder self-attention */
    const int32_t *key_len;   /* [B] real rows (keys) per sequence, or NULL */
    int pos;                  /* position of row 0 (the KV cache and RoPE) */
    wf_real *kcache, *vcache; /* generation: this layer's cache [context, C], or NULL */
    const wf_real *ckv;       /* cross-attention keys and values [B, S, 2C], or NULL: no cross sublayer */
    int S;                    /* source rows per sequence */
    const int32_t *src_len;   /* [B] real source rows, or NULL */
    wf_rng *drop_rng;         /* training: draws the dropout masks; NULL: evaluation */
} wf_layer_io;

/* Generation state, allocated with the model: the KV caches of every hypothesis, the
 * source's cross-attention keys and values, one row of layer scratch, one encoder layer's
 * scratch for a whole source, and the beam search's bookkeeping. */
typedef struct {
    wf_real *kcache, *vcache; /* [K, L, context, C] */
    wf_real *kalt, *valt;     /* the same for the beam search's next step (encoder-decoder) */
    wf_real *xkv;             /* [L, context, 2C]: cross-attention keys and values of the source */
    wf_layer_acts row;        /* one position's activations */
    wf_layer_acts enc;        /* one encoder layer over a source of up to context rows */
    wf_real *x;               /* [C] the residual stream */
    wf_real *enc_x;           /* [context, C] */
    wf_real *enc_out, *enc_mean, *enc_rstd;
    wf_real *lnf, *lnf_mean, *lnf_rstd, *logits, *probs; /* [C], [1], [1], [V], [V] */
    wf_real *logp;            /* [K, V] */
    wf_real *score, *score_alt; /* [K] live hypotheses' summed log-probabilities */
    wf_real *cand_score;      /* [2K] */
    int32_t *cand_beam, *cand_tok; /* [2K] */
    int32_t *seq, *seq_alt;   /* [K, context] live hypotheses' tokens */
    int32_t *best;            /* [context] the best finished hypothesis */
    int32_t *order;           /* [V] token order for top-k / top-p */
    int32_t *window;          /* the tokens whose keys and values are in the cache */
    int32_t n;                /* how many */
    int32_t active;
    wf_rng rng;
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

    wf_real *pos_table;           /* [context, C]: sinusoidal positions, else NULL */
    wf_real *rope_cos, *rope_sin; /* [context, HS/2]: rotary positions, else NULL */

    wf_real *act_mem;   /* activations, planned for the largest shape so far */
    size_t act_cap;     /* elements */
    wf_acts a;          /* carved for the shape of the last forward */
    int32_t B, T, S;    /* that shape; B = 0 before any forward */
    size_t layer_elems[2]; /* elements of one layer's block, per stack */
    int have_logits;    /* the last forward computed logits */

    wf_gen gen;
    wf_pool *pool; /* worker threads (wf_model_set_threads), or NULL: one thread */
    char err[256];
};

/* The position table added to a stack's embeddings: learned, the fixed sinusoids, or NULL
 * (rotary positions, applied inside attention). */
const wf_real *wf_position_table(const wf_model *m, int stack);

#define WF_ERR(m, status, ...) wf_fail((m)->err, sizeof (m)->err, (status), __VA_ARGS__)

/* model.c, for generate.c and seq2seq.c: one layer forward over the rows of x. With
 * io->kcache the new keys and values are stored at position io->pos and attention reads
 * the whole cache. The same function runs training and generation. */
void wf_layer_forward(const wf_model *m, const wf_layer_w *w, const wf_layer_acts *a, const wf_real *x,
                      const wf_layer_io *io);
void wf_norm_forward(const wf_model *m, wf_real *out, wf_real *mean, wf_real *rstd, const wf_real *inp,
                     const wf_real *w, const wf_real *b, int N);
void wf_head_forward(const wf_model *m, wf_real *logits, wf_real *lnf, wf_real *lnf_mean,
                     wf_real *lnf_rstd, const wf_real *x, int N);

/* model.c, for wf_model_init and the file formats: moves next's model into m, keeping m's
 * thread pool; m's old buffers are freed and next is left empty (free it as usual). */
void wf_model_adopt(wf_model *m, wf_model *next);

/* model.c, for the file formats: the elements between the arena's blocks
 * ([params | grads | m | v] start at 0, stride, 2 stride, 3 stride), and the tensor table
 * a config would have, computed without allocating (WF_ERR_CONFIG when the config is
 * invalid or has more than 2^31 - 1 parameters). */
size_t wf_model_stride(const wf_model *m);
wf_status wf_tensor_table(const wf_config *cfg, wf_tensor_info out[WF_N_PARAMS]);

/* generate.c, for model.c */
size_t wf_gen_carve(wf_gen *g, const wf_dims *d, wf_real *mem); /* mem NULL: only counts */
double wf_gen_elems_d(const wf_dims *d); /* the same count in double, for the size checks */
/* generate.c, for seq2seq.c too: T tokens of one sequence at positions pos.. through the
 * embedding and the decoder layers, leaving the last layer's output in gen.x [T, C]. Layer
 * l's keys and values go to kcache/vcache + l * context * C; S > 0: cross-attention to
 * the S source rows' keys and values in gen.xkv. */
void wf_gen_layers(wf_model *m, const int32_t *tokens, int T, int pos, wf_real *kcache, wf_real *vcache, int S);
int32_t wf_sample_token(const wf_real *logits, int V, const wf_sampling *s, wf_rng *rng,
                        wf_real *probs, int32_t *order);

#endif /* WF_MODEL_H */
