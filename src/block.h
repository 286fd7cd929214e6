/* One transformer layer, forward and backward, every variant the config has: Pre-LN or
 * Post-LN, LayerNorm or RMSNorm, GELU, ReLU or SwiGLU, learned, sinusoidal or rotary
 * positions, dropout, and cross-attention in an encoder-decoder's decoder layers. The same
 * forward runs training (a block of activations per layer), prompt reading and decoding (a
 * KV cache; one block of scratch reused by every layer). */
#ifndef WF_BLOCK_H
#define WF_BLOCK_H

#include "ops.h"
#include "plan.h"

/* What a layer reads besides its weights, its activations and the call's io: the config and
 * its sizes, the threads, RoPE's tables and, in backward, the gradient scratch all layers
 * share (dres, dln, dqkv, ...: one layer's worth in the planned activations). The stacks make
 * one from the model handle (wf_model_layer_ctx); nothing here reads the handle. */
typedef struct {
    const wf_config *cfg;
    const wf_dims *d;
    wf_pool *pool;                      /* NULL: the calling thread alone */
    const wf_real *rope_cos, *rope_sin; /* [context, HS/2]: rotary positions, else NULL */
    wf_acts *a;                         /* backward's scratch */
    void *qscratch;                     /* quantized weights' products' scratch (wf_qlinear_scratch) */
    int fast;                           /* generation: quantized products quantize their inputs (quant.c) */
} wf_layer_ctx;

/* How one layer runs: the call's shape, masks and caches. */
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
    int skip;                 /* decoding a decoder (kcache, no ckv; a: gen.row): the first skip rows
                                 only cache their keys and values, their outputs unread */
} wf_layer_io;

/* One layer forward over the rows of x, into a. With io->kcache the new keys and values are
 * stored at position io->pos and attention reads the whole cache. */
void wf_block_forward(const wf_layer_ctx *ctx, const wf_layer_w *w, const wf_layer_acts *a, const wf_real *x,
                      const wf_layer_io *io);
/* Its backward: ctx->a->dres holds dL/d(out) on entry and dL/dx on return; weight gradients
 * accumulate into dw. enc: the encoder output the cross-attention keys and values were
 * computed from (its gradient collects in ctx->a->denc). */
void wf_block_backward(const wf_layer_ctx *ctx, const wf_layer_w *w, const wf_layer_w *dw, const wf_layer_acts *a,
                       const wf_real *x, const wf_layer_io *io, const wf_real *enc);

/* A linear layer on float32 weights w, or on quantized ones (q.p set: quant.c, no weight
 * gradient: dw must be NULL), with ops.h's linear forward and backward. */
void wf_lin_forward(const wf_layer_ctx *ctx, wf_real *out, const wf_real *inp, const wf_real *w, wf_qw q,
                    const wf_real *b, int N, int C, int OC);
/* backward: dinp's gradient written over it (set) or added to it (a gradient collected from
 * several layers) */
void wf_lin_backward(const wf_layer_ctx *ctx, wf_real *dinp, int set, wf_real *dw, wf_real *db, const wf_real *dout,
                     const wf_real *inp, const wf_real *w, wf_qw q, int N, int C, int OC);

/* The pieces the stacks share with the layer, dispatched on the config: the norm, and
 * dropout (in training: x = dropout(x) with a fresh mask; rng NULL: nothing). */
void wf_norm_forward(const wf_layer_ctx *ctx, wf_real *out, wf_real *mean, wf_real *rstd, const wf_real *inp,
                     const wf_real *w, const wf_real *b, int N);
void wf_norm_backward(const wf_layer_ctx *ctx, wf_real *dinp, wf_real *dw, wf_real *db, const wf_real *dout,
                      const wf_real *inp, const wf_real *mean, const wf_real *rstd, const wf_real *w, int N);
void wf_drop_forward(const wf_layer_ctx *ctx, wf_real *mask, wf_real *x, int n, wf_rng *rng);
/* The gradient of a value before dropout: dres * mask (in ctx->a->branch), or dres itself
 * without a mask. */
const wf_real *wf_drop_backward(const wf_layer_ctx *ctx, const wf_real *mask, const wf_real *dres, int n);

#endif /* WF_BLOCK_H */
