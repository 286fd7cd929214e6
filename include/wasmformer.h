/* wasmformer: train small transformers and generate text, natively and in WebAssembly. Names: wf_<object>_<verb>.
 * A call that fails returns a wf_status (or NULL), leaves a one-line message in its handle (wf_model_error,
 * wf_tokenizer_error; a NULL handle: WF_ERR_ARG alone) and the handle as it was. A returned pointer is borrowed from
 * its handle until the next call on it, unless its comment says the caller owns it. Nothing exits, aborts or asserts
 * on bad input. Numbers cross as float, int32 or double whatever the core computes in. */
#ifndef WASMFORMER_H
#define WASMFORMER_H

#include <float.h>
#include <stdint.h>

#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>
#define WF_API EMSCRIPTEN_KEEPALIVE
#else
#define WF_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define WF_STATUSES(X) /* X(name, wf_status_string's text), in value order from WF_OK = 0 */                        \
    X(WF_OK, "ok")                                                                                                  \
    X(WF_ERR_ARG, "invalid argument")            /* a NULL pointer, a size or count out of range */                \
    X(WF_ERR_CONFIG, "invalid config")           /* an invalid or inconsistent model config */                     \
    X(WF_ERR_UNSUPPORTED, "unsupported")         /* a valid choice this version or build does not implement */     \
    X(WF_ERR_NOMEM, "out of memory")             /* memory could not be allocated (nothing was changed) */         \
    X(WF_ERR_TOKEN, "token id out of range")     /* a token id outside [0, vocab_size) */                          \
    X(WF_ERR_NUMERIC, "non-finite loss or gradient") /* NaN or inf in the loss, gradients or logits: refused */ \
    X(WF_ERR_STATE, "invalid state")             /* the call does not fit the handle's state */                    \
    X(WF_ERR_FORMAT, "malformed data")           /* malformed input data */                                        \
    X(WF_ERR_THREADS, "worker threads could not be started") /* none are left running */
#define WF_ENUM_(name, ...) name,
typedef enum { WF_STATUSES(WF_ENUM_) } wf_status;
WF_API const char *wf_status_string(wf_status s); /* static, e.g. "invalid config"; else "unknown status" */

/* ---- The config: every choice the seeds describe ---- */
typedef enum { WF_ARCH_DECODER = 0, WF_ARCH_ENCODER = 1, WF_ARCH_ENCODER_DECODER = 2 } wf_arch;
typedef enum { WF_NORM_LAYERNORM = 0, WF_NORM_RMSNORM = 1 } wf_norm;
typedef enum { WF_BLOCK_PRE_LN = 0, WF_BLOCK_POST_LN = 1 } wf_block;
typedef enum { WF_ACT_GELU = 0, WF_ACT_RELU = 1, WF_ACT_SWIGLU = 2, WF_ACT_RELU2 = 3, WF_ACT_GELU_EXACT = 4 } wf_activation;
typedef enum { WF_POS_LEARNED = 0, WF_POS_SINUSOIDAL = 1, WF_POS_ROPE = 2 } wf_positions;

/* A row per field makes the struct, its defaults and checks, the checkpoint's CONF, config.json and the JS table;
 * 4-byte fields, a new one at the end (older files get its default). ENUM(name, jsName, default, names, meaning):
 * int32 index of names; BOOL: 0 or 1; INT(.., min, max, scope, ..): int32 in [min, max], scope WF_ED: encoder-
 * decoders only; REAL(.., min, max, bounds, ..): finite float, bounds "[]" "[)" "(]" "()" (FLT_MAX: none); SEED. */
#define WF_CONFIG_FIELDS(ENUM, BOOL, INT, REAL, SEED)                                                                 \
    ENUM(arch, arch, WF_ARCH_DECODER, "decoder encoder encoder-decoder", "a decoder (GPT), an encoder or both")       \
    ENUM(norm, norm, WF_NORM_LAYERNORM, "layernorm rmsnorm", "normalisation: LayerNorm or RMSNorm")                   \
    ENUM(block, block, WF_BLOCK_PRE_LN, "pre_ln post_ln", "norm before each sublayer (GPT-2) or after the residual")  \
    ENUM(activation, activation, WF_ACT_GELU, "gelu relu swiglu relu2 gelu_exact",                                    \
         "GELU (tanh), ReLU, gated SwiGLU, ReLU squared or GELU (erf)")                                               \
    ENUM(positions, positions, WF_POS_LEARNED, "learned sinusoidal rope", "learned, sinusoidal or rotary (RoPE)")     \
    BOOL(tied_head, tiedHead, 1, "the output head shares the token embedding's weights (GPT-2); off: its own")        \
    BOOL(bias, bias, 1, "linear layers and LayerNorms have biases (GPT-2); off: none (Llama)")                        \
    INT(vocab_size, vocabSize, 96, 2, 1 << 24, WF_ALL, "number of tokens: ids run from 0 to this minus 1")            \
    INT(context, context, 64, 1, 1 << 16, WF_ALL, "longest sequence the model sees (learned positions, KV cache)")    \
    INT(n_layer, nLayer, 4, 1, 1024, WF_ALL, "transformer layers (an encoder-decoder's decoder layers)")              \
    INT(n_head, nHead, 4, 1, 1 << 20, WF_ALL, "attention heads; they must divide the model width")                    \
    INT(d_model, dModel, 128, 1, 1 << 20, WF_ALL, "model width: the size of each token's vector")                     \
    INT(d_ff, dFF, 512, 1, 1 << 20, WF_ALL, "width of the feed-forward hidden layer (usually 4x the model width)")    \
    REAL(norm_eps, normEps, 1e-5f, 0, 1, "()", "epsilon inside the norm's square root")                               \
    SEED(seed, seed, 1337, "seeds weight init and the model's training RNG streams")                                  \
    INT(n_enc_layer, nEncLayer, 0, 1, 1024, WF_ED, "encoder layers of an encoder-decoder; 0 for the others")          \
    REAL(dropout, dropout, 0, 0, 1, "[)", "training only: drop probability of embeddings and sublayer outputs")       \
    INT(max_beam, maxBeam, 4, 1, 64, WF_ED, "widest beam search (encoder-decoders)")                                  \
    BOOL(qk_norm, qkNorm, 0, "RMS-normalise each head's queries and keys (no gain), before RoPE")                     \
    BOOL(zero_proj, zeroProj, 0, "attention and feed-forward output projections start at zero")                       \
    REAL(logit_cap, logitCap, 0, 0, FLT_MAX, "[]", "logits = cap * tanh(logits / cap); 0: no capping")                \
    INT(n_kv_head, nKvHead, 0, 0, 1 << 20, WF_ALL, "GQA: key/value heads shared by groups of query heads; 0: n_head") \
    REAL(rope_theta, ropeTheta, 10000, 0, FLT_MAX, "(]", "RoPE's base: pair i turns by pos * theta^(-2i/head size)")  \
    INT(lora_rank, loraRank, 0, 0, 1 << 16, WF_ALL, "rank r of LoRA adapters on the lora_targets linears; 0: none")   \
    REAL(lora_alpha, loraAlpha, 16, 0, FLT_MAX, "(]", "LoRA's scale: an adapter adds (lora_alpha / r) x A^T B^T")     \
    INT(lora_targets, loraTargets, 0, 0, 127, WF_ALL,                                                                 \
        "LoRA's linears, a bit each: 1 q, 2 k, 4 v, 8 o, 16 fc (SwiGLU's gate), 32 up (SwiGLU), 64 down")
enum { WF_ALL = 0, WF_ED = 1 };

#define WF_I32_FIELD_(name, ...) int32_t name;
#define WF_F32_FIELD_(name, ...) float name;
#define WF_U32_FIELD_(name, ...) uint32_t name;
typedef struct { WF_CONFIG_FIELDS(WF_I32_FIELD_, WF_I32_FIELD_, WF_I32_FIELD_, WF_F32_FIELD_, WF_U32_FIELD_) } wf_config;

WF_API void wf_config_default(wf_config *cfg); /* the rows' defaults: the "tiny" GPT (docs/ARCHITECTURES.md) */
/* Each row's range, then the rules across rows; the reason to msg (cap bytes, NUL-terminated; may be NULL). */
WF_API wf_status wf_config_check(const wf_config *cfg, char *msg, int32_t cap);
/* Bytes (doubles, exact in JS): weights, gradients and optimizer moments (a model's: 0 until it trains), activations
 * (largest batch yet, pool scratch), KV cache and generation scratch, total; count: parameters; budget: what a model,
 * or a batch's activations, may take. */
typedef struct { double params, grads, optimizer, activations, inference, total, count, budget; } wf_memory;
/* What a model of cfg needs trained at batch B, length T (B = T = 0: no activations); msg as wf_config_check.
 * WF_ERR_NOMEM (*out filled all the same): the model, or that batch's activations, would pass the budget. */
WF_API wf_status wf_config_memory(const wf_config *cfg, int32_t B, int32_t T, wf_memory *out, char *msg, int32_t cap);
WF_API double wf_heap_in_use(void); /* bytes allocated and not freed by this wasm module (natively: glibc's) */

/* ---- The model ---- */
typedef struct wf_model wf_model; typedef struct wf_tokenizer wf_tokenizer; /* the handles (wf_tokenizer: Tokenizers) */
WF_API wf_model *wf_model_create(void); /* an empty handle, the caller's (wf_model_free); NULL: out of memory */
WF_API void wf_model_free(wf_model *m); /* and all it owns; NULL is fine */
WF_API const char *wf_model_error(const wf_model *m); /* the last failure's; "" after a success (getters aside) */
/* A model of cfg with random weights (seeded by cfg->seed) and default optimizer settings, replacing m's. */
WF_API wf_status wf_model_init(wf_model *m, const wf_config *cfg);
WF_API wf_status wf_model_get_config(wf_model *m, wf_config *out);
/* Threads, the caller's included (default 1; the single-thread wasm: 1 only); results do not depend on n. */
WF_API wf_status wf_model_set_threads(wf_model *m, int32_t n);
/* Memory (count: parameters), tensor-table rows, steps taken, the next step's lr, threads, and what made the model:
 * its last init, or a load or import (a checkpoint of weights only, or with optimizer state...); an empty m: zeros. */
typedef enum { WF_ORIGIN_NONE, WF_ORIGIN_INIT, WF_ORIGIN_WEIGHTS, WF_ORIGIN_OPTIMIZER, WF_ORIGIN_LLAMA2C,
               WF_ORIGIN_SAFETENSORS, WF_ORIGIN_GGUF } wf_origin;
typedef struct { wf_memory memory; int32_t n_tensors, step; float lr; int32_t threads, origin; } wf_model_info;
WF_API wf_status wf_model_get_info(wf_model *m, wf_model_info *out);
typedef enum { WF_QUANT_F32 = 0, WF_QUANT_Q8_0 = 1, WF_QUANT_Q4_0 = 2 } wf_quant; /* ggml's blocks: FORMATS.md */
/* Parameter tensors, in table order: name (static, e.g. "qkvw"); offset (-1: quantized), size (elements) in
 * wf_model_params; shape; decay: AdamW decays it; dtype: its wf_quant; layers: its mask bytes (its layers, or 1);
 * grad_offset: its gradients' start (-1: frozen). */
typedef struct { const char *name; int32_t offset, size, ndim, shape[4], decay, dtype, layers, grad_offset; } wf_tensor_info;
WF_API wf_status wf_model_get_tensor(wf_model *m, int32_t i, wf_tensor_info *out); /* row i */
WF_API float *wf_model_params(wf_model *m); /* float32 weights, flat, writable; borrowed; NULL: an empty model */
WF_API float *wf_model_grads(wf_model *m);  /* the trainable slices' gradients (all: params' layout); borrowed */
/* Sets and/or gets (either NULL) the trainable mask: a byte (1 trains) per layer of each row, tensor.layers each;
 * frozen slices get no gradients, moments or weight-gradient work. New models: all train (LoRA: the adapters). */
WF_API wf_status wf_model_trainable(wf_model *m, const uint8_t *set, uint8_t *get, int32_t n);
/* cfg for m's where only lora_* and dropout differ: adapters added (B = 0; the first alone train), kept or
 * dropped (merge = 1: folded in first, W += alpha/r B A); the rest of the mask stays. */
WF_API wf_status wf_model_set_config(wf_model *m, const wf_config *cfg, int32_t merge);
/* Linears' and token embeddings' weights to a wf_quant in place (F32: back); quantized ones are frozen (QLoRA). */
WF_API wf_status wf_model_quantize(wf_model *m, int32_t type);

/* ---- Training: its settings (rows as in WF_CONFIG_FIELDS), batches and steps ---- */
#define WF_OPTIM_FIELDS(INT, REAL)                                                                                  \
    REAL(lr, lr, 3e-4f, 0, FLT_MAX, "[]", "peak learning rate")                                                     \
    REAL(beta1, beta1, 0.9f, 0, 1, "[)", "AdamW first moment decay rate")                                           \
    REAL(beta2, beta2, 0.95f, 0, 1, "[)", "AdamW second moment decay rate")                                         \
    REAL(eps, eps, 1e-8f, 0, FLT_MAX, "(]", "AdamW denominator epsilon")                                            \
    REAL(weight_decay, weightDecay, 0.1f, 0, FLT_MAX, "[]", "decoupled weight decay, on matrices and embeddings")   \
    INT(warmup, warmup, 0, 0, INT32_MAX, WF_ALL, "steps of linear warmup up to lr")                                 \
    INT(decay_steps, decaySteps, 0, 0, INT32_MAX, WF_ALL, "steps of cosine decay after the warmup; 0: constant lr") \
    REAL(min_lr_ratio, minLrRatio, 0.1f, 0, 1, "[]", "where the decay ends, as a fraction of lr")                   \
    REAL(grad_clip, gradClip, 1.0f, 0, FLT_MAX, "[]", "clip the gradient norm to this; 0: no clipping")             \
    INT(start, start, 0, 0, INT32_MAX, WF_ALL, "step where the warmup and decay start")                             \
    INT(muon, muon, 0, 0, 1, WF_ALL, "1: Muon for the blocks' weight matrices, AdamW for the rest; 0: AdamW")       \
    REAL(muon_momentum, muonMomentum, 0.95f, 0, 1, "[)", "Muon's Nesterov momentum")
typedef struct { WF_OPTIM_FIELDS(WF_I32_FIELD_, WF_F32_FIELD_) } wf_optim;
WF_API void wf_optim_default(wf_optim *o); /* the rows' defaults */
WF_API wf_status wf_optim_check(const wf_optim *o, char *msg, int32_t cap); /* each row's range: WF_ERR_ARG, msg */
WF_API wf_status wf_model_set_optim(wf_model *m, const wf_optim *o); /* checks *o, copies it into m */
WF_API wf_status wf_model_get_optim(wf_model *m, wf_optim *out);
/* One batch for any architecture (docs/ARCHITECTURES.md); unused pointers are NULL. Rows t >= lengths[b] are padding:
 * nothing attends to them and no loss counts them. Encoders take vectors or ids, encoder-decoders a source too. */
typedef struct {
    const int32_t *inputs; const float *input_vecs; /* [B, T] ids (the decoder's: the shifted target); or [B, T, C] */
    const int32_t *lengths, *targets;               /* [B] real rows in [1, T] (NULL: all T); [B, T] ids, < 0: ignored */
    const float *target_vecs;                       /* [B, T, C]: a mean squared error on the final states instead */
    const int32_t *src, *src_lengths; int32_t B, T, S; /* [B, S] source ids; [B] its real rows in [1, S] (NULL: all) */
} wf_batch;
/* forward: no dropout; the loss to *loss (may be NULL). backward: and the gradients (dropout on). step: and clipping and
 * the update; info (may be NULL): the loss (mean cross-entropy or squared error), the gradient norm before clipping, lr,
 * steps after it. A non-finite loss or gradient norm, or an overflowing update: WF_ERR_NUMERIC, nothing updated. */
typedef struct { float loss, grad_norm, lr; int32_t step; } wf_step_info;
WF_API wf_status wf_model_forward(wf_model *m, const wf_batch *b, float *loss);
WF_API wf_status wf_model_backward(wf_model *m, const wf_batch *b, float *loss);
WF_API wf_status wf_model_step(wf_model *m, const wf_batch *b, wf_step_info *info);
/* The last forward's results, borrowed; NULL (the message says why) if it has none: logits [B, T, V], final states
 * [B, T, C], a layer's attention (cross 0: self [B, NH, T, T]; 1: an encoder-decoder's cross [B, NH, T, S]). */
WF_API const float *wf_model_logits(wf_model *m);
WF_API const float *wf_model_hidden(wf_model *m);
WF_API const float *wf_model_attention(wf_model *m, int32_t layer, int32_t cross);

/* ---- Training runs: the loop a program runs, in the core (docs/DESIGN.md, "Training runs") ---- */
typedef struct { /* a run's settings [their defaults] */
    int32_t steps; float seconds;        /* its length: steps [1000], or (> 0) seconds of training [0] */
    int32_t warmup, decay_steps;         /* steps of warm-up to lr, of cosine decay [-1, -1: a tenth (<= 100), the rest] */
    float warmup_fraction, val_fraction; /* a time budget's warm-up [0.05]; the tokens' share (their end) held out [0.1] */
    int32_t eval_interval, eval_batches; /* validate at its multiples and the end [100; 0: never] on batches [4; 0: all] */
    int32_t batch_size, context, rollback, seed; /* windows [8] of tokens [0: the context]; roll back [1]; reseed [-1] */
} wf_run;
WF_API wf_status wf_preset(const char *name, wf_config *c, wf_optim *o, wf_run *r); /* micro, tiny, baby (NULL: none) */
/* A run's record: the model's step; the run's steps, seconds, settings; its last step and validation (val_step 0: none);
 * diverged: a WF_DIVERGED_* at step `at` (refused: that step changed nothing), measured against limit; backup: the step
 * of the roll-back copy (-1: none), where a diverged run goes back to. */
typedef struct { int32_t step, steps; double seconds; wf_run run; float loss, grad_norm, lr; int32_t val_step, val_tokens;
    double val_loss; int32_t finished, diverged, refused, at; float measured, limit; int32_t backup; } wf_run_facts;
enum { WF_DIVERGED_LOSS = 1, WF_DIVERGED_GRAD = 2, WF_DIVERGED_UPDATE = 3, WF_DIVERGED_BOUND = 4, WF_DIVERGED_SPIKE = 5 };
/* A new run on tokens[0, n) (copied; NULL, 0: the caller's batches) from this step; keep: the model's run goes on (a
 * loaded one takes its tokens again) or, with none, r's on the optimizer's schedule. r NULL: it ends (so do init, load). */
WF_API wf_status wf_model_run_begin(wf_model *m, const wf_run *r, int32_t keep, const int32_t *tokens, int32_t n);
/* Trains: one step on b, or (b NULL) sampled ones, at most `steps` (0: none, out only) in at most ms of training (0: no
 * cap; past its end at its last lr); returns after a validation, at its end, on divergence (WF_ERR_NUMERIC: see out). */
WF_API wf_status wf_model_run(wf_model *m, const wf_batch *b, int32_t steps, double ms, wf_run_facts *out);

/* ---- Generation (a KV cache in the model, sized by cfg.context) ---- */
/* temperature: higher flattens (below 1e-6, 0 too: greedy); top_k: keep the k most likely tokens (0: all); top_p: the
 * smallest set whose probability reaches p (1: all); n_vocab: only ids below it (0: all); no_unk 1: never id 0 (<unk>). */
typedef struct { float temperature; int32_t top_k; float top_p; int32_t n_vocab, no_unk; } wf_sampling;
/* Decoders: gen_start reads prompt[0, n) (n >= 1; its last `context` tokens), its RNG seeded by seed; gen_next samples
 * a token into *token and appends it (a full context keeps its last context/2, re-read); with t (or NULL), of t's ids,
 * and the bytes it adds after the one before to text[0, cap >= 2 t.max_bytes), their count to *n_text (UTF-8 may split). */
WF_API wf_status wf_model_gen_start(wf_model *m, const int32_t *prompt, int32_t n, uint32_t seed);
WF_API wf_status wf_model_gen_next(wf_model *m, const wf_sampling *s, wf_tokenizer *t, int32_t *token, char *text,
                                   int32_t cap, int32_t *n_text);
WF_API const float *wf_model_gen_logits(wf_model *m); /* the next token's [V]; borrowed; NULL: none started */
/* Encoder-decoders: beam search (width 1..max_beam; 1: greedy; no length penalty) from bos until eos or max_new
 * <= context tokens; the best hypothesis (with eos if reached) to out[0, max_new), its length to *n_out. */
WF_API wf_status wf_model_beam_search(wf_model *m, const int32_t *src, int32_t S, int32_t bos, int32_t eos,
                                      int32_t beam, int32_t max_new, int32_t *out, int32_t *n_out);

/* ---- Tokenizers: char-level (code points), byte-level BPE, tokenizer.json (HF), llama2.c's ---- */
typedef enum { WF_TOKENIZER_NONE = 0, WF_TOKENIZER_CHAR = 1, WF_TOKENIZER_BPE = 2, WF_TOKENIZER_HF = 3,
               WF_TOKENIZER_LLAMA2C = 4 } wf_tokenizer_kind;
WF_API wf_tokenizer *wf_tokenizer_create(void); /* empty, the caller's (wf_tokenizer_free); NULL: out of memory */
WF_API void wf_tokenizer_free(wf_tokenizer *t); /* NULL is fine */
WF_API const char *wf_tokenizer_error(const wf_tokenizer *t); /* the same for a tokenizer */
/* WF_TOKENIZER_CHAR (vocab_size 0): id 0 is <unk>, then text's distinct code points (UTF-8; a bad byte is U+FFFD),
 * ascending. WF_TOKENIZER_BPE: ids 0..255 the bytes, then merges until vocab_size (256..2^20) or no pair repeats. */
WF_API wf_status wf_tokenizer_train(wf_tokenizer *t, int32_t kind, const char *text, int32_t len, int32_t vocab_size);
/* Its wf_tokenizer_kind, ids known, most bytes one id decodes to, the id a prompt starts with (-1: none); empty: 0s */
typedef struct { int32_t kind, vocab_size, max_bytes, bos; } wf_tokenizer_info;
WF_API wf_status wf_tokenizer_get_info(wf_tokenizer *t, wf_tokenizer_info *out);
/* Text (len bytes) to ids in out[0, cap), their count to *n_out (char and BPE: at most len; for the others a too
 * small cap is WF_ERR_ARG, *n_out the need). Char: a code point outside the vocabulary becomes <unk>, 0. */
WF_API wf_status wf_tokenizer_encode(wf_tokenizer *t, const char *text, int32_t len, int32_t *out, int32_t cap,
                                     int32_t *n_out);
/* ids to bytes: cap = n * max_bytes always suffices; char's <unk> decodes to U+FFFD. No NUL. */
WF_API wf_status wf_tokenizer_decode(wf_tokenizer *t, const int32_t *ids, int32_t n, char *out, int32_t cap,
                                     int32_t *n_out);

/* ---- Files (docs/FORMATS.md). A save or export writes new buffers, the caller's: free each with
 * wf_buffer_free. A load or import checks the whole input before it touches the handle. ---- */
WF_API void wf_buffer_free(void *p); /* NULL is fine */
/* m, and t when non-NULL, as a checkpoint; flags WF_SAVE_OPTIMIZER: with the optimizer's moments, settings, step,
 * schedule and RNG states, to resume exactly; WF_SAVE_GGUF: as GGUF v3 instead (a Llama-shaped decoder's). */
enum { WF_SAVE_OPTIMIZER = 1, WF_SAVE_JSON = 2, WF_SAVE_GGUF = 4 };
WF_API wf_status wf_model_save(wf_model *m, const wf_tokenizer *t, int32_t flags, uint8_t **out, int32_t *n);
/* A checkpoint or a GGUF v3 file (llama-family) into m (may be empty), and into t when non-NULL the file's tokenizer;
 * or a llama2.c model file (export.py's legacy .bin, the tinyllamas'; its tokenizer.bin is a file of its own). */
WF_API wf_status wf_model_load(wf_model *m, wf_tokenizer *t, const uint8_t *data, int32_t n);
/* A GGUF file's load in pieces, never whole in memory (FORMATS.md): begin (t, or NULL, must live until the end), feed
 * its bytes in order in pieces of any size, end (done 1: the file ended, its model and tokenizer replace m's and t's;
 * 0: abandoned). m is unchanged until end succeeds; a failed feed or end abandons the load. */
WF_API wf_status wf_model_load_begin(wf_model *m, wf_tokenizer *t);
WF_API wf_status wf_model_load_feed(wf_model *m, const uint8_t *data, int32_t n);
WF_API wf_status wf_model_load_end(wf_model *m, int32_t done);
/* The application's note (any bytes, at most WF_NOTE_MAX; n = 0: none), kept by the handle and saved with it;
 * loading a checkpoint gives the file's. get: borrowed (NULL: none), its length to *n. */
#define WF_NOTE_MAX (1 << 20)
WF_API wf_status wf_model_set_note(wf_model *m, const uint8_t *bytes, int32_t n);
WF_API const uint8_t *wf_model_get_note(const wf_model *m, int32_t *n);
/* A tokenizer file or, flags WF_SAVE_JSON, a NUL-terminated tokenizer.json (char, BPE: Hugging Face encodes alike;
 * HF: its file). load reads either and llama2.c's tokenizer.bin (wasmformer's own tokenizer.json: as BPE). */
WF_API wf_status wf_tokenizer_save(wf_tokenizer *t, int32_t flags, uint8_t **out, int32_t *n);
WF_API wf_status wf_tokenizer_load(wf_tokenizer *t, const uint8_t *data, int32_t n);
/* Hugging Face's: m as float32 safetensors and a NUL-terminated config.json (GPT2LMHeadModel, GPTNeoXForCausalLM,
 * LlamaForCausalLM; else wasmformer's own, which alone keeps adapters: a class's refuses them), or its LoRA adapters
 * as PEFT's files (base_model_name_or_path: base, UTF-8; NULL: null). Importing safetensors (F32, F16, BF16, F64)
 * replaces m; importing PEFT's adds adapters to m. */
WF_API wf_status wf_model_export_safetensors(wf_model *m, uint8_t **st, int32_t *n_st, char **json, int32_t *n_json);
WF_API wf_status wf_model_export_peft(wf_model *m, const char *base, uint8_t **st, int32_t *n_st, char **json,
                                      int32_t *n_json);
WF_API wf_status wf_model_import_safetensors(wf_model *m, const char *json, int32_t n_json, const uint8_t *st,
                                             int32_t n_st);
WF_API wf_status wf_model_import_peft(wf_model *m, const char *json, int32_t n_json, const uint8_t *st, int32_t n_st);

#ifdef __cplusplus
}
#endif
#endif /* WASMFORMER_H */
