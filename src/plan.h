/* The plan: every size and layout a config implies, computed without a model.
 *   WF_PARAMS: every parameter tensor (name, shape, decay, init). From it come the
 *     wf_params struct of pointers, the tensor table (sizes and offsets) and four blocks
 *     in its layout, params, grads, adam m and adam v, so the optimizer is one flat loop per
 *     tensor at the same offset in each.
 *   WF_LAYER_ACTS: what one layer saves for backward, for any number of rows; training
 *     stacks one block per layer, generation carves one row block of it.
 *   WF_ACTS: the rest of the activations and the backward scratch, planned for a batch
 *     shape (B, T, S).
 *   wf_gen: the generation block (KV caches, one row block of layer scratch, the beam
 *     search's bookkeeping), allocated with the model.
 * A zero in a shape means the tensor is absent for this config (its pointer is NULL).
 * Sizes are counted in double first, so that absurd configs are refused instead of
 * overflowing size_t (32 bits in wasm). Architectures and block variants are described
 * in docs/ARCHITECTURES.md. */
#ifndef WF_PLAN_H
#define WF_PLAN_H

#include "internal.h"

/* Letters the tables use, derived from a config. */
typedef struct {
    int V, C, NH, HS, F, T;
    int KV;     /* key/value heads of self-attention: NH, or fewer shared by groups (GQA) */
    int KC;     /* their width KV * HS; the packed qkv rows are C + 2 KC wide */
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
    int qkn;    /* 1: QK-norm (per-head RMS of queries and keys; their rstd is saved) */
    int K;      /* decoding hypotheses, each with a KV cache: 1 for decoders, max_beam for
                   encoder-decoders, 0 for encoders (which do not generate) */
    int LR;     /* LoRA's rank r: 0 without adapters */
    int lq, lk, lv, lo, lf, lu, ld; /* 1: an adapter on q, k, v, o, fc (SwiGLU: gate), up, down */
    int LU;     /* columns of a layer's saved LoRA products u = x A^T: LR per adapter */
} wf_dims;

/* LoRA's targets, the bits of cfg.lora_targets, in the order of their adapters; their names
 * (the package's addLora({targets})). */
enum { WF_LORA_Q, WF_LORA_K, WF_LORA_V, WF_LORA_O, WF_LORA_FC, WF_LORA_UP, WF_LORA_DOWN, WF_LORA_N };
#define WF_LORA_NAMES "q k v o fc up down"

enum { WF_INIT_ZERO, WF_INIT_ONE, WF_INIT_NORMAL, WF_INIT_RESIDUAL, WF_INIT_LORA };
/* The groups a fine-tuning choice names tensors by (the package's trainOnly('attn')), a bit
 * each, named in order by WF_GROUP_NAMES; the core itself does not use them. */
enum { WF_G_EMBED = 1, WF_G_NORM = 2, WF_G_ATTN = 4, WF_G_MLP = 8, WF_G_CROSS = 16, WF_G_HEAD = 32, WF_G_LORA = 64 };
#define WF_GROUP_NAMES "embed norm attn mlp cross head lora"

/* X(name, ndim, d0, d1, d2, decay, init, groups); dims beyond ndim are 1. Per-layer tensors are
 * stacked along a leading L (or E). The enc_ tensors exist in encoder-decoders only; the
 * cross-attention ones (lnc, cq, ckv, cproj) in their decoder layers. ckvw's rows are
 * [keys; values], qkvw's [queries (C); keys (KC); values (KC)]. The order is the blocks'. */
#define WF_PARAMS(X)                                                                                             \
    X(wte,              2, V,              C,                   1,  1, WF_INIT_NORMAL,   WF_G_EMBED)             \
    X(wpe,              2, pos * T,        C,                   1,  1, WF_INIT_NORMAL,   WF_G_EMBED)             \
    X(enc_wpe,          2, xa * pos * T,   C,                   1,  1, WF_INIT_NORMAL,   WF_G_EMBED)             \
    WF_BLOCK_PARAMS(X, enc_, E, )                                                                                \
    X(enc_lnfw,         1, xa * C,         1,                   1,  0, WF_INIT_ONE,      WF_G_NORM)              \
    X(enc_lnfb,         1, xa * normb * C, 1,                   1,  0, WF_INIT_ZERO,     WF_G_NORM)              \
    WF_BLOCK_PARAMS(X, , L, WF_CROSS_PARAMS(X))                                                                  \
    X(lnfw,             1, C,              1,                   1,  0, WF_INIT_ONE,      WF_G_NORM)              \
    X(lnfb,             1, normb * C,      1,                   1,  0, WF_INIT_ZERO,     WF_G_NORM)              \
    X(lm_head,          2, head * V,       C,                   1,  1, WF_INIT_NORMAL,   WF_G_HEAD)              \
    WF_LORA_PARAMS(X, enc_, E)                                                                                   \
    WF_LORA_PARAMS(X, , L)

/* LoRA's adapters of one stack (lora.c): per target an A [r, in] (WF_INIT_LORA: PEFT's
 * Kaiming-uniform, U(-1/sqrt(in), 1/sqrt(in))) and a B [out, r] (zero), for the rows of the
 * linear it adapts: qkvw's queries (C), keys and values (KC each), attprojw, fcw's first F
 * rows (the whole fcw, or SwiGLU's gate) and SwiGLU's up rows, fcprojw. After the base
 * tensors, so that adding adapters moves no base tensor. */
#define WF_LORA_PARAMS(X, prefix, n)                                                                             \
    X(prefix##lora_qa,  3, n,              lq * LR,             C,  1, WF_INIT_LORA,     WF_G_LORA)              \
    X(prefix##lora_qb,  3, n,              lq * C,              LR, 1, WF_INIT_ZERO,     WF_G_LORA)              \
    X(prefix##lora_ka,  3, n,              lk * LR,             C,  1, WF_INIT_LORA,     WF_G_LORA)              \
    X(prefix##lora_kb,  3, n,              lk * KC,             LR, 1, WF_INIT_ZERO,     WF_G_LORA)              \
    X(prefix##lora_va,  3, n,              lv * LR,             C,  1, WF_INIT_LORA,     WF_G_LORA)              \
    X(prefix##lora_vb,  3, n,              lv * KC,             LR, 1, WF_INIT_ZERO,     WF_G_LORA)              \
    X(prefix##lora_oa,  3, n,              lo * LR,             C,  1, WF_INIT_LORA,     WF_G_LORA)              \
    X(prefix##lora_ob,  3, n,              lo * C,              LR, 1, WF_INIT_ZERO,     WF_G_LORA)              \
    X(prefix##lora_fa,  3, n,              lf * LR,             C,  1, WF_INIT_LORA,     WF_G_LORA)              \
    X(prefix##lora_fb,  3, n,              lf * F,              LR, 1, WF_INIT_ZERO,     WF_G_LORA)              \
    X(prefix##lora_ua,  3, n,              lu * LR,             C,  1, WF_INIT_LORA,     WF_G_LORA)              \
    X(prefix##lora_ub,  3, n,              lu * F,              LR, 1, WF_INIT_ZERO,     WF_G_LORA)              \
    X(prefix##lora_da,  3, n,              ld * LR,             F,  1, WF_INIT_LORA,     WF_G_LORA)              \
    X(prefix##lora_db,  3, n,              ld * C,              LR, 1, WF_INIT_ZERO,     WF_G_LORA)

/* One stack of n layers, its names prefixed; cross (the cross-attention rows, or nothing)
 * sits between the self-attention and the feed-forward rows. */
#define WF_BLOCK_PARAMS(X, prefix, n, cross)                                                                     \
    X(prefix##ln1w,     2, n,              C,                   1,  0, WF_INIT_ONE,      WF_G_NORM)              \
    X(prefix##ln1b,     2, n,              normb * C,           1,  0, WF_INIT_ZERO,     WF_G_NORM)              \
    X(prefix##qkvw,     3, n,              C + 2 * KC,          C,  1, WF_INIT_NORMAL,   WF_G_ATTN)              \
    X(prefix##qkvb,     2, n,              bias * (C + 2 * KC), 1,  0, WF_INIT_ZERO,     WF_G_ATTN)              \
    X(prefix##attprojw, 3, n,              C,                   C,  1, WF_INIT_RESIDUAL, WF_G_ATTN)              \
    X(prefix##attprojb, 2, n,              bias * C,            1,  0, WF_INIT_ZERO,     WF_G_ATTN)              \
    cross                                                                                                        \
    X(prefix##ln2w,     2, n,              C,                   1,  0, WF_INIT_ONE,      WF_G_NORM)              \
    X(prefix##ln2b,     2, n,              normb * C,           1,  0, WF_INIT_ZERO,     WF_G_NORM)              \
    X(prefix##fcw,      3, n,              fc * F,              C,  1, WF_INIT_NORMAL,   WF_G_MLP)               \
    X(prefix##fcb,      2, n,              bias * fc * F,       1,  0, WF_INIT_ZERO,     WF_G_MLP)               \
    X(prefix##fcprojw,  3, n,              C,                   F,  1, WF_INIT_RESIDUAL, WF_G_MLP)               \
    X(prefix##fcprojb,  2, n,              bias * C,            1,  0, WF_INIT_ZERO,     WF_G_MLP)

#define WF_CROSS_PARAMS(X)                                                                                       \
    X(lncw,             2, xa * L,         C,                   1,  0, WF_INIT_ONE,      WF_G_NORM | WF_G_CROSS) \
    X(lncb,             2, xa * L,         normb * C,           1,  0, WF_INIT_ZERO,     WF_G_NORM | WF_G_CROSS) \
    X(cqw,              3, xa * L,         C,                   C,  1, WF_INIT_NORMAL,   WF_G_CROSS)             \
    X(cqb,              2, xa * L,         bias * C,            1,  0, WF_INIT_ZERO,     WF_G_CROSS)             \
    X(ckvw,             3, xa * L,         2 * C,               C,  1, WF_INIT_NORMAL,   WF_G_CROSS)             \
    X(ckvb,             2, xa * L,         bias * 2 * C,        1,  0, WF_INIT_ZERO,     WF_G_CROSS)             \
    X(cprojw,           3, xa * L,         C,                   C,  1, WF_INIT_RESIDUAL, WF_G_CROSS)             \
    X(cprojb,           2, xa * L,         bias * C,            1,  0, WF_INIT_ZERO,     WF_G_CROSS)

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
    WF_LORA_PARAMS(WF_X_FIELD, , L)
} wf_layer_w;
#undef WF_X_FIELD

/* Rows of the table that are stacks of per-layer slices ([layers, ...]): the trainable mask
 * has a byte per layer for them, one for the others. */
static inline int wf_param_stacked(int i) {
    return (i >= WF_P_enc_ln1w && i <= WF_P_enc_fcprojb) || (i >= WF_P_ln1w && i <= WF_P_fcprojb) ||
           i >= WF_P_enc_lora_qa;
}
static inline int wf_param_lora(int i) { return i >= WF_P_enc_lora_qa; }

/* X(name, elements) for one layer of N rows: Tk keys per sequence in self-attention, S
 * source rows per sequence and BS source rows in all for cross-attention (x = 1), drop = 1
 * for dropout masks. The norms' outputs ln1, lnc, ln2 sit before their sublayer (Pre-LN)
 * or after its residual add (Post-LN); mean is unused by RMSNorm. qk_rstd holds QK-norm's
 * [N, NH] query then [N, KV] key scales (qkn = 1). lora_u holds each adapter's scaled
 * (alpha/r) x A^T [N, LR], adapters in WF_LORA_* order. */
#define WF_LAYER_ACTS(X)                     \
    X(ln1,      N * C)                       \
    X(ln1_mean, N)                           \
    X(ln1_rstd, N)                           \
    X(qkv,      N * (C + 2 * KC))            \
    X(qk_rstd,  qkn * N * (NH + KV))         \
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
    X(mask2,    drop * N * C)                \
    X(lora_u,   N * LU)

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
/* Moves a carve's per-row pointers (branch's too) past its first N rows, as carved with
 * these Tk, S, x and drop: the same layer on the rows after them. */
void wf_layer_skip_rows(wf_layer_acts *a, const wf_dims *d, size_t N, size_t Tk, size_t S, size_t x, size_t drop);

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
    X(dqkv,         B * R * (C + 2 * KC))        \
    X(datty,        B * R * C)                   \
    X(dfch,         B * R * fc * F)              \
    X(dfch_act,     B * R * F)                   \
    X(dckv,         xa * B * S * 2 * C)          \
    X(dlora,        B * R * LR)                  \
    X(denc,         xa * B * S * C)              \
    X(layers,       L * main_layer)              \
    X(enc_layers,   E * enc_layer)

#define WF_X_FIELD(name, ...) wf_real *name;
typedef struct {
    WF_ACTS(WF_X_FIELD)
} wf_acts;
#undef WF_X_FIELD

/* A prompt and a re-read window go through the layers WF_GEN_ROWS positions at a time, as
 * matrix products; each new token is then one row (matrix-vector products). */
#define WF_GEN_ROWS 32

/* Generation state, allocated with the model: the KV caches of every hypothesis, the
 * source's cross-attention keys and values, layer scratch for up to WF_GEN_ROWS positions,
 * one encoder layer's scratch for a whole source, and the beam search's bookkeeping. */
typedef struct {
    wf_real *kcache, *vcache; /* [K, L, context, KC] */
    wf_real *kalt, *valt;     /* the same for the beam search's next step (encoder-decoder) */
    wf_real *xkv;             /* [L, context, 2C]: cross-attention keys and values of the source */
    wf_layer_acts row;        /* the activations of up to WF_GEN_ROWS positions */
    wf_layer_acts enc;        /* one encoder layer over a source of up to context rows */
    wf_real *x;               /* [WF_GEN_ROWS, C] the residual stream */
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

enum { WF_STACK_MAIN = 0, WF_STACK_ENC = 1 };

void wf_dims_of(const wf_config *c, wf_dims *d);

/* The tensor table of a model with dims d (offsets into the parameter block, shapes, decay);
 * returns each block's size in elements (params, grads, adam m and v: one block each). */
size_t wf_plan_tensors(const wf_dims *d, wf_tensor_info out[WF_N_PARAMS]);
/* Where LoRA adapter t (WF_LORA_*) of a stack (enc: the encoder's) sits: the weight it adapts
 * (WF_P_*), rows [row0, row0 + rows) of each layer's slice, its input width, and its A and B
 * tensors (b = a + 1). */
typedef struct {
    int w, a, row0, rows, in;
} wf_lora_site;
wf_lora_site wf_lora_site_of(const wf_dims *d, int t, int enc);

/* The trainable mask (wf_model_trainable): its length, a byte per tensor.layers slice;
 * the default of a config (lora: adapters alone, else every slice); and the layout of the
 * gradients and AdamW moments it gives: each tensor's trainable slices in layer order, padded
 * to 4, at t[i].grad_offset (set here; -1: frozen), each slice's offset in goff (SIZE_MAX:
 * frozen; may be NULL). Returns the elements of those blocks: the parameter block's when
 * every slice trains. */
int32_t wf_plan_slices(const wf_tensor_info t[WF_N_PARAMS]);
void wf_plan_default_mask(const wf_tensor_info t[WF_N_PARAMS], int lora, uint8_t *mask);
size_t wf_plan_train(wf_tensor_info t[WF_N_PARAMS], const uint8_t *mask, size_t *goff);
/* Elements of the parameter block (padded: as allocated, else the parameter count). */
double wf_plan_params(const wf_dims *d, int padded);
/* Elements of the activations for a batch shape (B, T, S); carving them from mem sets a's
 * pointers and returns each stack's layer block size in layer_elems. */
double wf_plan_acts(const wf_dims *d, double B, double T, double S);
void wf_acts_carve(wf_acts *a, wf_real *mem, const wf_dims *d, size_t B, size_t T, size_t S, size_t layer_elems[2]);
/* The generation block: carves g from mem (NULL: only counts), returns its elements. */
size_t wf_gen_carve(wf_gen *g, const wf_dims *d, wf_real *mem);
double wf_plan_gen(const wf_dims *d); /* the same count in double, for the size checks */
/* Fixed tables: the sinusoids [context, C] or the rotary cos and sin [2, context, HS/2]. */
double wf_plan_tables(const wf_dims *d);
/* Muon's scratch (wf_muon_update), for the largest matrix it orthogonalises: a block's
 * [C, C] (attention; qkv and the cross keys and values as separate C x C matrices) or its
 * [F, C] and [C, F] (feed-forward; SwiGLU's gate and up rows separately). */
double wf_plan_muon(const wf_dims *d);
/* The largest memory this build can address in bytes: 4 GB in wasm32, effectively
 * unlimited natively; WF_MEMORY_LIMIT lowers it (the fuzzing build). */
double wf_address_limit(void);
/* What one model, or one batch's activations, may take: 95% of that (the rest is the
 * caller's). wf_plan_fits: WF_OK when a model of `model` bytes and a B x T batch's `acts`
 * bytes of activations each fit it, else WF_ERR_NOMEM and why in msg. The one bound the
 * model's init, a batch's plan and wf_config_memory (so the JS package) all apply. */
double wf_memory_budget(void);
wf_status wf_plan_fits(double model, double acts, int B, int T, char *msg, size_t cap);

#endif /* WF_PLAN_H */
