/* Every op as a forward/backward pair, in one argument order (llm.c's):
 *   forward  (outs, saved-for-backward, ins, weights, dims)
 *   backward (d_ins, d_weights, d_out, saved, weights, dims)
 * Shapes use the shared letters: B batch, T time, C channels, NH heads, HS head size,
 * V vocabulary, F feed-forward width, N = B*T rows. Backward accumulates (+=) into every
 * gradient it writes, so fan-out needs no special case; zeroing is the caller's.
 * A NULL gradient pointer means "not needed" and is skipped.
 * The heavy ops take a trailing wf_pool (NULL: run on the calling thread); their results
 * do not depend on the number of threads. Each SIMD kernel keeps its plain reference,
 * wf_<op>_*_scalar, which tests/test_simd.c compares it with; building with
 * -DWF_REFERENCE_KERNELS makes the ops run the references (the benchmark's baseline). */
#ifndef WF_OPS_H
#define WF_OPS_H

#include "internal.h"
#include "pool.h"

/* ---- embed.c ---- */
void wf_embed_forward(wf_real *out, const int32_t *inp, const wf_real *wte, const wf_real *pos,
                      int B, int T, int C);
void wf_embed_backward(wf_real *dwte, wf_real *dpos, const wf_real *dout, const int32_t *inp,
                       int B, int T, int C);
void wf_sinusoid_table(wf_real *pe, int T, int C);
void wf_embed_vec_forward(wf_real *out, const wf_real *inp, const wf_real *pos, int B, int T, int C);
void wf_embed_vec_backward(wf_real *dpos, const wf_real *dout, int B, int T, int C);

/* ---- norm.c ---- */
void wf_layernorm_forward(wf_real *out, wf_real *mean, wf_real *rstd, const wf_real *inp,
                          const wf_real *w, const wf_real *b, int N, int C, wf_real eps, wf_pool *pool);
void wf_layernorm_backward(wf_real *dinp, wf_real *dw, wf_real *db, const wf_real *dout,
                           const wf_real *inp, const wf_real *mean, const wf_real *rstd,
                           const wf_real *w, int N, int C, wf_pool *pool);
void wf_layernorm_forward_scalar(wf_real *out, wf_real *mean, wf_real *rstd, const wf_real *inp,
                                 const wf_real *w, const wf_real *b, int N, int C, wf_real eps);
void wf_layernorm_backward_scalar(wf_real *dinp, wf_real *dw, wf_real *db, const wf_real *dout,
                                  const wf_real *inp, const wf_real *mean, const wf_real *rstd,
                                  const wf_real *w, int N, int C);
void wf_rmsnorm_forward(wf_real *out, wf_real *rstd, const wf_real *inp, const wf_real *w,
                        int N, int C, wf_real eps, wf_pool *pool);
void wf_rmsnorm_backward(wf_real *dinp, wf_real *dw, const wf_real *dout, const wf_real *inp,
                         const wf_real *rstd, const wf_real *w, int N, int C, wf_pool *pool);
/* QK-norm: RMSNorm without a gain over each head of NH heads of HS channels, in place, on
 * N rows spaced stride apart (the queries or keys inside the packed qkv); rstd [N, NH]. */
void wf_headnorm_forward(wf_real *x, wf_real *rstd, int N, int NH, int HS, int stride, wf_real eps);
void wf_headnorm_backward(wf_real *dx, const wf_real *y, const wf_real *rstd, int N, int NH, int HS, int stride);

/* ---- linear.c ---- */
void wf_linear_forward(wf_real *out, const wf_real *inp, const wf_real *w, const wf_real *b,
                       int N, int C, int OC, wf_pool *pool);
void wf_linear_backward(wf_real *dinp, wf_real *dw, wf_real *db, const wf_real *dout,
                        const wf_real *inp, const wf_real *w, int N, int C, int OC, wf_pool *pool);
/* The same with dinp written over (dinp = dout w) instead of added to: a layer's backward
 * fills a fresh gradient buffer without zeroing it first (a serial pass over memory). */
void wf_linear_backward_set(wf_real *dinp, wf_real *dw, wf_real *db, const wf_real *dout,
                            const wf_real *inp, const wf_real *w, int N, int C, int OC, wf_pool *pool);
void wf_linear_forward_scalar(wf_real *out, const wf_real *inp, const wf_real *w, const wf_real *b,
                              int N, int C, int OC);
void wf_linear_backward_scalar(wf_real *dinp, wf_real *dw, wf_real *db, const wf_real *dout,
                               const wf_real *inp, const wf_real *w, int N, int C, int OC);
/* The forward's kernel for up to WF_ROWS_MAX rows (decoding, prompts; not in the reference
 * build), output rows ldo apart: what quant.c's exact path runs on dequantized weights. */
#define WF_ROWS_MAX 32 /* up to here the few-row kernel beats packing the weights (bench: decode and re-reads) */
void wf_linear_rows(wf_real *out, size_t ldo, const wf_real *inp, const wf_real *w, const wf_real *b, int N, int C,
                    int OC, wf_pool *pool);

/* ---- quant.c: weights in ggml's Q8_0 and Q4_0 blocks (qsimd.h), never trained ---- */
uint16_t wf_f32_to_f16(float f); /* round to nearest even; qsimd.h's wf_f16_to_f32 is exact */
size_t wf_quant_block_bytes(int type);       /* 34 (Q8_0) or 18 (Q4_0) bytes per 32 weights */
size_t wf_quant_row_bytes(int type, size_t n); /* n (a multiple of 32) weights: n / 32 blocks, or 4n for F32 */
/* Rows of n weights (a multiple of 32) as the model holds them, packed for the kernels
 * (qsimd.h): into blocks, as ggml's reference quantizers do; back to floats (exactly: every
 * block value is a float); Q4_0 to Q8_0 exactly (the same scale). */
void wf_quantize_row(uint8_t *q, const wf_real *x, size_t n, int type);
void wf_dequantize_row(wf_real *x, const uint8_t *q, size_t n, int type);
void wf_q4_to_q8_row(uint8_t *q8, const uint8_t *q4, size_t n);
/* The file boundary (ggml's blocks, in order): a row of blocks of type `from` packed as the
 * model's `type` (the same, or Q4_0 into Q8_0); block b of a packed row as ggml's block; a
 * row of ggml's blocks as floats; the first block whose scale is inf or NaN (a hostile
 * file's), or -1. */
void wf_quant_pack_row(uint8_t *dst, int type, const uint8_t *ggml, int from, size_t n);
void wf_quant_block_ggml(uint8_t *blk, const uint8_t *row, size_t n, size_t b, int type);
void wf_dequantize_blocks(wf_real *x, const uint8_t *ggml, size_t n, int type);
int64_t wf_quant_check_row(const uint8_t *ggml, size_t n, int type);
/* The linear layer on quantized w [OC, C] (C a multiple of 32): forward out = inp w^T + b,
 * exact (rows dequantized into scratch, then wf_matmul) or with fast = 1 and N <= 32 rows the
 * generation path (activations quantized per block, integer dots: quant.c); backward dinp +=
 * dout w (no weight gradient: quantized weights are frozen). scratch: wf_qlinear_scratch(K)
 * bytes, K the widest input, 64-byte aligned. The scalar reference of the fast path, which
 * needs wf_qlinear_scratch too. */
void wf_qlinear_forward(wf_real *out, const wf_real *inp, const uint8_t *w, int type, const wf_real *b, int N, int C,
                        int OC, int fast, void *scratch, wf_pool *pool);
void wf_qlinear_backward(wf_real *dinp, const wf_real *dout, const uint8_t *w, int type, int N, int C, int OC,
                         void *scratch, wf_pool *pool);
void wf_qlinear_forward_scalar(wf_real *out, const wf_real *inp, const uint8_t *w, int type, const wf_real *b,
                               int N, int C, int OC, void *scratch);
size_t wf_qlinear_scratch(int K);
/* wf_embed_forward with the token embedding in blocks: each id's row dequantized, plus pos. */
void wf_qembed_forward(wf_real *out, const int32_t *inp, const uint8_t *wte, int type, const wf_real *pos, int B,
                       int T, int C);

/* ---- matmul.c ---- */
#define WF_KC 256 /* the depth of a packed slice of the sum: each output adds its terms KC at a time */
/* The SIMD backend the kernels were built for (src/simd.h), e.g. "avx2-fma"; "reference"
 * with WF_REFERENCE_KERNELS. */
const char *wf_simd_name(void);
/* C[M,N] = A[M,K] B[K,N] (accumulate = 0) or C += A B (accumulate = 1). Operands are read
 * through strides, so transposes are free: A(i,k) = a[i*ars + k*acs], B(k,j) = b[k*brs +
 * j*bcs], C(i,j) = c[i*ldc + j]. The packed, register-blocked kernel every matrix product
 * of the model runs on (linear layers, attention). */
void wf_matmul(wf_real *c, size_t ldc, const wf_real *a, size_t ars, size_t acs, const wf_real *b, size_t brs,
               size_t bcs, int M, int N, int K, int accumulate, wf_pool *pool);
/* Several independent products (different outputs) as one job: with a pool, their operands
 * are packed in one run and their tasks share one more, instead of two runs each (linear
 * backward's dinp and dw). Up to WF_MM_MAX; the same results as one wf_matmul each.
 * upper: C is symmetric (X X^T, or A A with A symmetric), so only the register tiles that
 * reach the diagonal or above it are computed: every element with j >= i is, and those
 * below may be left as they were (the caller mirrors them). bias: a linear layer's. */
typedef struct {
    wf_real *c;
    size_t ldc;
    const wf_real *a;
    size_t ars, acs;
    const wf_real *b;
    size_t brs, bcs;
    int M, N, K, accumulate, upper;
    const wf_real *bias; /* without accumulate: C = bias + A B, bias [N] added to every row as
                            the product is stored (the same sums as C = bias, then C += A B) */
} wf_mm;
#define WF_MM_MAX 4
void wf_matmul_many(const wf_mm *p, int n, wf_pool *pool);
/* How threads share out p when all of its B is packed at once (tests/test_simd.c holds the
 * plan to its promises): the number of product tasks, task t's rows [r[t][0], r[t][1]) and
 * columns [r[t][2], r[t][3]) for t < max, and into *block the rows of one block. */
int wf_matmul_tasks(const wf_mm *p, int threads, int (*r)[4], int max, int *block);

/* ---- attention.c ---- */
typedef struct {
    int B, NH, HS;          /* C = NH * HS */
    int Tq, Tk;             /* query rows and key rows per sequence */
    int q_stride;           /* elements from one row of q (and dq) to the next */
    int kv_stride;          /* the same for k, v, dk and dv */
    int causal;             /* query i sits at absolute position i + Tk - Tq and sees keys
                               j <= that position (bottom-right aligned, so one new query
                               over a KV cache is causal too) */
    const int32_t *key_len; /* [B] keys that are real (the rest are padding), or NULL */
    int by_rows;            /* forward one query row at a time however many there are:
                               generation's passes over a KV cache (up to 32 rows), where
                               packing operands for matrix products costs more than it saves */
    int KV;                 /* key/value heads, dividing NH: query head h reads k, v head
                               h / (NH / KV) (grouped-query attention); 0 or NH: one each */
} wf_attn_dims;

void wf_attention_forward(wf_real *out, wf_real *att, const wf_real *q, const wf_real *k,
                          const wf_real *v, const wf_attn_dims *d, wf_pool *pool);
void wf_attention_backward(wf_real *dq, wf_real *dk, wf_real *dv, const wf_real *dout,
                           const wf_real *out, const wf_real *att, const wf_real *q,
                           const wf_real *k, const wf_real *v, const wf_attn_dims *d, wf_pool *pool);
void wf_attention_forward_scalar(wf_real *out, wf_real *att, const wf_real *q, const wf_real *k,
                                 const wf_real *v, const wf_attn_dims *d);
void wf_attention_backward_scalar(wf_real *dq, wf_real *dk, wf_real *dv, const wf_real *dout,
                                  const wf_real *out, const wf_real *att, const wf_real *q,
                                  const wf_real *k, const wf_real *v, const wf_attn_dims *d);

/* ---- lora.c ---- */
/* A low-rank update of OC output columns (rows ldo apart) beside a linear layer (lora.c derives
 * it); backward's g [N, R] is scratch, and any of dinp, da, db may be NULL. wf_lora_merge folds
 * one into the weights w [OC, C] (rows C apart): w += s b a, with sb [OC, R] as scratch. */
void wf_lora_forward(wf_real *out, wf_real *u, const wf_real *inp, const wf_real *a, const wf_real *b, wf_real s,
                     int N, int C, int OC, int R, int ldo, wf_pool *pool);
void wf_lora_backward(wf_real *dinp, wf_real *da, wf_real *db, const wf_real *dout, const wf_real *u,
                      const wf_real *inp, const wf_real *a, const wf_real *b, wf_real *g, wf_real s, int N, int C,
                      int OC, int R, int ldo, wf_pool *pool);
void wf_lora_merge(wf_real *w, const wf_real *a, const wf_real *b, wf_real s, int C, int OC, int R, wf_real *sb);

/* ---- activation.c ---- */
void wf_gelu_forward(wf_real *out, const wf_real *inp, int N, wf_pool *pool);
void wf_gelu_backward(wf_real *dinp, const wf_real *dout, const wf_real *inp, int N, wf_pool *pool);
void wf_gelu_forward_scalar(wf_real *out, const wf_real *inp, int N);
void wf_gelu_backward_scalar(wf_real *dinp, const wf_real *dout, const wf_real *inp, int N);
void wf_relu_forward(wf_real *out, const wf_real *inp, int N);
void wf_relu_backward(wf_real *dinp, const wf_real *dout, const wf_real *inp, int N);
void wf_relu2_forward(wf_real *out, const wf_real *inp, int N);
void wf_gelu_exact_forward(wf_real *out, const wf_real *inp, int N);
void wf_gelu_exact_backward(wf_real *dinp, const wf_real *dout, const wf_real *inp, int N);
void wf_relu2_backward(wf_real *dinp, const wf_real *dout, const wf_real *inp, int N);
/* In place: forward caps x, backward scales dx (dL/dy on entry, dL/dz on return) by the
 * derivative at the capped values y. */
void wf_softcap_forward(wf_real *x, int N, wf_real cap);
void wf_softcap_backward(wf_real *dx, const wf_real *y, int N, wf_real cap);
void wf_residual_forward(wf_real *out, const wf_real *a, const wf_real *b, int N, wf_pool *pool);
void wf_residual_backward(wf_real *da, wf_real *db, const wf_real *dout, int N, wf_pool *pool);
void wf_swiglu_forward(wf_real *out, const wf_real *inp, int N, int F);
void wf_swiglu_backward(wf_real *dinp, const wf_real *dout, const wf_real *inp, int N, int F);
void wf_dropout_mask(wf_real *mask, int N, wf_real p, wf_rng *rng);
void wf_dropout_forward(wf_real *out, const wf_real *inp, const wf_real *mask, int N);
void wf_dropout_backward(wf_real *dinp, const wf_real *dout, const wf_real *mask, int N);

/* ---- rope.c (in place, forward and backward) ---- */
void wf_rope_table(wf_real *cos_t, wf_real *sin_t, int T, int HS, double theta);
void wf_rope_forward(wf_real *x, const wf_real *cos_t, const wf_real *sin_t, int B, int T, int NH, int HS,
                     int stride, int pos0, wf_pool *pool);
void wf_rope_backward(wf_real *dx, const wf_real *cos_t, const wf_real *sin_t, int B, int T, int NH, int HS,
                      int stride, int pos0, wf_pool *pool);

/* ---- loss.c ---- */
double wf_crossentropy_forward(wf_real *losses, int *count, wf_real *probs, const wf_real *logits,
                               const int32_t *targets, int N, int V, wf_pool *pool);
void wf_crossentropy_backward(wf_real *dlogits, wf_real dloss, const wf_real *probs,
                              const int32_t *targets, int N, int V, wf_pool *pool);
double wf_crossentropy_forward_scalar(wf_real *losses, int *count, wf_real *probs, const wf_real *logits,
                                      const int32_t *targets, int N, int V);
double wf_mse_forward(double *count, const wf_real *y, const wf_real *target, const int32_t *lengths, int B, int T,
                      int C);
void wf_mse_backward(wf_real *dy, wf_real dloss, const wf_real *y, const wf_real *target,
                     const int32_t *lengths, int B, int T, int C);

/* ---- optim.c ---- */
float wf_lr_at(const wf_optim *o, int32_t step);
double wf_sum_squares(const wf_real *x, size_t n, wf_pool *pool);
void wf_adamw_update(wf_real *p, wf_real *m, wf_real *v, const wf_real *g, size_t n,
                     wf_real grad_scale, const wf_optim *o, float lr, int decay, int32_t t);
void wf_adamw_update_scalar(wf_real *p, wf_real *m, wf_real *v, const wf_real *g, size_t n,
                            wf_real grad_scale, const wf_optim *o, float lr, int decay, int32_t t);
/* The first of n elements whose update (same arguments) would overflow, or n if none. */
/* Muon for one weight matrix W [R, C] (optim.c derives it): buf is its momentum [R, C] (the
 * model's m block), scratch holds wf_muon_scratch(R, C) elements. wf_newton_schulz orthogonalises
 * x [r, c], r <= c, in place (5 steps on x / ||x||_F) with r c + 2 r^2 elements of scratch. */
size_t wf_muon_scratch(int R, int C);
void wf_newton_schulz(wf_real *x, int r, int c, wf_real *scratch, wf_pool *pool);
void wf_muon_update(wf_real *p, wf_real *buf, const wf_real *g, int R, int C, wf_real grad_scale,
                    const wf_optim *o, float lr, int decay, wf_real *scratch, wf_pool *pool);
/* The first element whose momentum or weight the update could overflow, or R * C if none. */
size_t wf_muon_check(const wf_real *p, const wf_real *buf, const wf_real *g, int R, int C, wf_real grad_scale,
                     const wf_optim *o, float lr, int decay);
size_t wf_adamw_check(const wf_real *p, const wf_real *m, const wf_real *v, const wf_real *g, size_t n,
                      wf_real grad_scale, const wf_optim *o, float lr, int decay, int32_t t);

#endif /* WF_OPS_H */
