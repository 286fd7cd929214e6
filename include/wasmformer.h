/* wasmformer: train small transformers and generate text, natively and in WebAssembly.
 *
 * Ownership in one rule: a pointer a function returns is borrowed from the handle it came
 * from and valid until the next call on that handle, unless its comment says otherwise.
 * Every fallible call returns a wf_status; on failure the handle keeps a message
 * (wf_model_error, wf_tokenizer_error) and is left exactly as it was before the call.
 * Nothing here exits, aborts or asserts on bad input. */
#ifndef WASMFORMER_H
#define WASMFORMER_H

#include <float.h>
#include <stddef.h>
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

/* Weights, activations and results: float, or double in the gradient-check build (-DWF_DOUBLE). */
#ifdef WF_DOUBLE
typedef double wf_real;
#else
typedef float wf_real;
#endif

typedef enum {
    WF_OK = 0,
    WF_ERR_ARG = 1,         /* a bad argument: NULL pointer, size or count out of range */
    WF_ERR_CONFIG = 2,      /* an invalid or inconsistent model config */
    WF_ERR_UNSUPPORTED = 3, /* a valid choice this version does not implement */
    WF_ERR_NOMEM = 4,       /* memory could not be allocated (nothing was changed) */
    WF_ERR_TOKEN = 5,       /* a token id outside [0, vocab_size) */
    WF_ERR_NUMERIC = 6,     /* NaN or infinity in the loss or gradients: step rejected */
    WF_ERR_STATE = 7,       /* the call does not fit the handle's state */
    WF_ERR_FORMAT = 8,      /* malformed input data */
} wf_status;

WF_API const char *wf_status_string(wf_status s); /* static, e.g. "invalid config" */

/* ---- Model configuration: every choice the seeds describe ---- */
typedef enum { WF_ARCH_DECODER = 0, WF_ARCH_ENCODER = 1, WF_ARCH_ENCODER_DECODER = 2 } wf_arch;
typedef enum { WF_NORM_LAYERNORM = 0, WF_NORM_RMSNORM = 1 } wf_norm;
typedef enum { WF_BLOCK_PRE_LN = 0, WF_BLOCK_POST_LN = 1 } wf_block;
typedef enum { WF_ACT_GELU = 0, WF_ACT_RELU = 1, WF_ACT_SWIGLU = 2 } wf_activation;
typedef enum { WF_POS_LEARNED = 0, WF_POS_SINUSOIDAL = 1, WF_POS_ROPE = 2 } wf_positions;

/* The config, one row per field; the struct, wf_config_default, wf_config_check, the
 * checkpoint's config section, config.json's "wasmformer" layout and the JavaScript
 * package's table (src/js/config-table.js, scripts/gen-config.mjs) all come from it.
 * Every field is 4 bytes, in this order, so JavaScript writes the struct directly; a new
 * field is a new row at the end (files written before it get its default).
 *   ENUM(name, jsName, default, names, meaning): an int32 in [0, count of names)
 *   BOOL(name, jsName, default, meaning): an int32, 0 or 1
 *   INT(name, jsName, default, min, max, scope, meaning): an int32 in [min, max]; scope
 *     WF_ALL, or WF_ED: checked for encoder-decoders only (others: see wf_config_check)
 *   REAL(name, jsName, default, min, max, bounds, meaning): a finite float; bounds "[]",
 *     "[)", "(]" or "()" say which ends are included; max FLT_MAX: no upper bound
 *   SEED(name, jsName, default, meaning): any uint32
 * The limits keep every size computation inside int32 element counts. */
#define WF_CONFIG_FIELDS(ENUM, BOOL, INT, REAL, SEED)                                                              \
    ENUM(arch, arch, WF_ARCH_DECODER, "decoder encoder encoder-decoder", "wf_arch (docs/ARCHITECTURES.md)")        \
    ENUM(norm, norm, WF_NORM_LAYERNORM, "layernorm rmsnorm", "wf_norm")                                            \
    ENUM(block, block, WF_BLOCK_PRE_LN, "pre_ln post_ln", "wf_block: where the norm sits around each sublayer")    \
    ENUM(activation, activation, WF_ACT_GELU, "gelu relu swiglu", "wf_activation of the feed-forward sublayer")    \
    ENUM(positions, positions, WF_POS_LEARNED, "learned sinusoidal rope", "wf_positions")                          \
    BOOL(tied_head, tiedHead, 1, "1: the output head is the token embedding (GPT-2); 0: its own")                  \
    BOOL(bias, bias, 1, "1: linear layers and LayerNorms have biases; 0: none (Llama)")                           \
    INT(vocab_size, vocabSize, 96, 2, 1 << 24, WF_ALL, "V: token ids in [0, V)")                                   \
    INT(context, context, 64, 1, 1 << 16, WF_ALL, "longest sequence the model sees (learned positions, KV cache)") \
    INT(n_layer, nLayer, 4, 1, 1024, WF_ALL, "L: layers (an encoder-decoder's decoder layers)")                    \
    INT(n_head, nHead, 4, 1, 1 << 20, WF_ALL, "NH: heads, dividing d_model; head size HS = d_model / n_head")      \
    INT(d_model, dModel, 128, 1, 1 << 20, WF_ALL, "C: width of the residual stream")                               \
    INT(d_ff, dFF, 512, 1, 1 << 20, WF_ALL, "F: width of the feed-forward hidden layer")                           \
    REAL(norm_eps, normEps, 1e-5f, 0, 1, "()", "epsilon inside the norm's square root")                            \
    SEED(seed, seed, 1337, "seeds weight init and the model's training RNG streams")                               \
    INT(n_enc_layer, nEncLayer, 0, 1, 1024, WF_ED, "encoder layers of an encoder-decoder; 0 for the others")       \
    REAL(dropout, dropout, 0, 0, 1, "[)", "training only: drop probability of embeddings and sublayer outputs")    \
    INT(max_beam, maxBeam, 4, 1, 64, WF_ED, "widest beam of wf_seq2seq_decode (encoder-decoders; else ignored)")
enum { WF_ALL = 0, WF_ED = 1 };

#define WF_I32_FIELD_(name, ...) int32_t name;
#define WF_F32_FIELD_(name, ...) float name;
#define WF_U32_FIELD_(name, ...) uint32_t name;
typedef struct {
    WF_CONFIG_FIELDS(WF_I32_FIELD_, WF_I32_FIELD_, WF_I32_FIELD_, WF_F32_FIELD_, WF_U32_FIELD_)
} wf_config;

/* Fills cfg with the defaults of WF_CONFIG_FIELDS: the "tiny" GPT (docs/ARCHITECTURES.md). */
WF_API void wf_config_default(wf_config *cfg);

/* Checks cfg without allocating (each row's range, then what rows cannot say alone: n_head
 * divides d_model, RoPE's even head size, encoder layers only in encoder-decoders); on
 * failure a one-line reason goes to the caller's msg (cap bytes, NUL-terminated when
 * cap > 0; msg may be NULL). */
WF_API wf_status wf_config_check(const wf_config *cfg, char *msg, int32_t cap);

/* Memory in bytes, as doubles: exact in JavaScript, no overflow for absurd configs. */
typedef struct {
    double params;      /* weights */
    double grads;       /* gradients */
    double optimizer;   /* AdamW first and second moments */
    double activations; /* planned for the largest batch shape trained so far */
    double inference;   /* KV cache and generation scratch */
    double total;
    double count;       /* parameters (elements, without the padding the bytes above include) */
} wf_memory;

/* What a model of cfg needs trained at batch B, length T (sources too; B = T = 0: no
 * activations), into the caller's *out. Fails like wf_config_check, without a message. */
WF_API wf_status wf_memory_estimate(const wf_config *cfg, int32_t B, int32_t T, wf_memory *out);

/* Bytes allocated and not yet freed by this wasm module (natively: the process, with glibc;
 * 0 elsewhere), for memory displays and leak checks. */
WF_API double wf_heap_in_use(void);

/* ---- The model ---- */
typedef struct wf_model wf_model;

/* A new empty handle (no weights yet); caller frees with wf_model_free. NULL: out of memory. */
WF_API wf_model *wf_model_create(void);
WF_API void wf_model_free(wf_model *m);               /* NULL is fine */
WF_API const char *wf_model_error(const wf_model *m); /* last failure's message; borrowed, "" after success */

/* A model of cfg with random weights (seeded by cfg->seed) and default optimizer settings;
 * on failure m's previous model, if any, is kept. */
WF_API wf_status wf_model_init(wf_model *m, const wf_config *cfg);
WF_API wf_status wf_model_config(const wf_model *m, wf_config *out); /* copies m's config to *out */

/* Threads for training and prompt reading, the caller's included (default 1: no workers).
 * m owns the workers (joined in wf_model_free); results do not depend on n. Without thread
 * support (the single-thread wasm) n > 1 is WF_ERR_UNSUPPORTED; failure keeps the setting. */
WF_API wf_status wf_model_set_threads(wf_model *m, int32_t n);
WF_API int32_t wf_model_param_count(const wf_model *m); /* 0 for an empty handle */
WF_API wf_status wf_model_memory(const wf_model *m, wf_memory *out); /* m's current use, to *out */

/* Parameter tensors, in table order; offsets index the flat blocks of wf_model_params and
 * wf_model_grads (borrowed, writable). */
typedef struct {
    const char *name; /* static, e.g. "qkvw" */
    int32_t offset, size; /* in elements: where in the flat parameter block, how many */
    int32_t ndim, shape[4];
    int32_t decay;    /* 1: AdamW applies weight decay to it */
} wf_tensor_info;
WF_API int32_t wf_model_tensor_count(const wf_model *m); /* tensors of m's table; 0 when empty */
WF_API wf_status wf_model_tensor(const wf_model *m, int32_t i, wf_tensor_info *out); /* copies row i */
WF_API wf_real *wf_model_params(wf_model *m); /* all weights, flat; borrowed */
WF_API wf_real *wf_model_grads(wf_model *m);  /* their gradients, same layout; borrowed */

/* ---- Training ---- */
/* The training settings, one row per field as WF_CONFIG_FIELDS (INT and REAL rows only). */
#define WF_OPTIM_FIELDS(INT, REAL)                                                                               \
    REAL(lr, lr, 3e-4f, 0, FLT_MAX, "[]", "peak learning rate")                                                  \
    REAL(beta1, beta1, 0.9f, 0, 1, "[)", "AdamW first moment decay rate")                                        \
    REAL(beta2, beta2, 0.95f, 0, 1, "[)", "AdamW second moment decay rate")                                      \
    REAL(eps, eps, 1e-8f, 0, FLT_MAX, "(]", "AdamW denominator epsilon")                                         \
    REAL(weight_decay, weightDecay, 0.1f, 0, FLT_MAX, "[]", "decoupled; applied to matrices and embeddings only") \
    INT(warmup, warmup, 0, 0, INT32_MAX, WF_ALL, "steps of linear warmup from lr/warmup to lr")                 \
    INT(decay_steps, decaySteps, 0, 0, INT32_MAX, WF_ALL, "then cosine decay over these steps; 0: constant lr")  \
    REAL(min_lr_ratio, minLrRatio, 0.1f, 0, 1, "[]", "where the decay ends, as a fraction of lr; then constant") \
    REAL(grad_clip, gradClip, 1.0f, 0, FLT_MAX, "[]", "clip the global gradient norm to this; 0: no clipping")   \
    INT(start, start, 0, 0, INT32_MAX, WF_ALL, "step where warmup and decay start (a later run: the current step)")
typedef struct {
    WF_OPTIM_FIELDS(WF_I32_FIELD_, WF_F32_FIELD_)
} wf_optim;
/* Fills o with the defaults of WF_OPTIM_FIELDS. */
WF_API void wf_optim_default(wf_optim *o);
WF_API wf_status wf_model_set_optim(wf_model *m, const wf_optim *o); /* copies *o into m */
WF_API wf_status wf_model_get_optim(const wf_model *m, wf_optim *out); /* copies m's to *out */

typedef struct {
    wf_real loss;      /* the batch's loss: mean cross-entropy, or mean squared error */
    wf_real grad_norm; /* global gradient norm before clipping */
    float lr;          /* learning rate used */
    int32_t step;      /* steps taken after this one */
} wf_step_info;
/* One step: forward, backward, clipping, AdamW on [B, T] inputs and targets (a negative
 * target is padding). Only a (B, T) larger than any before allocates. On any failure,
 * NaN/infinite loss or gradient (WF_ERR_NUMERIC) included, weights and optimizer are
 * unchanged. info may be NULL. */
WF_API wf_status wf_train_step(wf_model *m, const int32_t *inputs, const int32_t *targets,
                               int32_t B, int32_t T, wf_step_info *info);
/* Forward only, weights unchanged; with targets (may be NULL) *loss gets the mean
 * cross-entropy (loss may be NULL). */
WF_API wf_status wf_forward(wf_model *m, const int32_t *inputs, const int32_t *targets,
                            int32_t B, int32_t T, wf_real *loss);

/* One batch for any architecture (docs/ARCHITECTURES.md); unused pointers are NULL. Rows
 * t >= lengths[b] are padding: nothing attends to them and no loss counts them. */
typedef struct {
    const int32_t *inputs;      /* [B, T] ids: the decoder's (shifted target) or the encoder's */
    const wf_real *input_vecs;  /* encoder only: [B, T, C] vectors instead of inputs */
    const int32_t *lengths;     /* [B] real rows, in [1, T]; NULL: all T */
    const int32_t *targets;     /* [B, T] ids for cross-entropy, negative = ignored */
    const wf_real *target_vecs; /* encoder only: [B, T, C] MSE targets of the final states */
    const int32_t *src;         /* encoder-decoder only: [B, S] source ids */
    const int32_t *src_lengths; /* [B] real source rows, in [1, S]; NULL: all S */
    int32_t B, T, S;
} wf_batch;
/* wf_forward and wf_train_step for a wf_batch (forward: no dropout, targets optional, loss
 * may be NULL; grads and step: dropout on). Grads is forward and backward without an
 * update: the gradients land in wf_model_grads. */
WF_API wf_status wf_batch_forward(wf_model *m, const wf_batch *b, wf_real *loss);
WF_API wf_status wf_batch_grads(wf_model *m, const wf_batch *b, wf_real *loss);
WF_API wf_status wf_batch_step(wf_model *m, const wf_batch *b, wf_step_info *info);

/* Results of the last forward, borrowed; NULL when it has none (no forward yet, no such
 * layer). Logits [B, T, V] (none: an encoder trained on target_vecs); final states
 * [B, T, C] after the final norm; attention weights of `layer`: cross [B, NH, T, S] (an
 * encoder-decoder's decoder only), self [B, NH, T, T] of the stack under the head (a
 * decoder's, an encoder-only model's, an encoder-decoder's decoder). */
WF_API const wf_real *wf_logits(const wf_model *m);
WF_API const wf_real *wf_hidden(const wf_model *m);
WF_API const wf_real *wf_cross_attention(const wf_model *m, int32_t layer);
WF_API const wf_real *wf_self_attention(const wf_model *m, int32_t layer);

WF_API int32_t wf_model_step(const wf_model *m); /* optimizer steps taken */
WF_API float wf_model_lr(const wf_model *m);     /* learning rate the next step will use */

/* Batch sampler: the first n - floor(n * val_fraction) of tokens[0, n) train (split 0), the
 * rest validate (1). Draws B windows w of T + 1 tokens at random offsets in the split into
 * the caller's inputs[b, t] = w[t], targets[b, t] = w[t + 1]. Each split has its own RNG
 * stream in m: validation batches never change the training sequence. */
WF_API wf_status wf_sample_batch(wf_model *m, const int32_t *tokens, int32_t n,
                                 float val_fraction, int32_t split, int32_t B, int32_t T,
                                 int32_t *inputs, int32_t *targets);
/* Restarts both sampler streams from seed (as wf_model_init does from cfg.seed), to replay
 * a run's batches without rebuilding the model. */
WF_API wf_status wf_sample_seed(wf_model *m, uint32_t seed);

/* ---- Generation (a KV cache in the model, sized by cfg.context; decoder arch) ---- */
typedef struct {
    float temperature; /* higher flattens; below 1e-6 (0 too): greedy, 1/temperature would overflow */
    int32_t top_k;     /* keep the k most likely tokens; 0: all */
    float top_p;       /* keep the smallest set whose probability reaches p; 1: all */
    int32_t n_vocab;   /* sample only ids below this (a smaller tokenizer's); 0: all */
} wf_sampling;
/* Starts a generation from prompt[0, n), n >= 1 (longer than the context: its last
 * `context` tokens), with its own RNG seeded by seed. */
WF_API wf_status wf_gen_start(wf_model *m, const int32_t *prompt, int32_t n, uint32_t seed);
/* Samples the next token into *token and appends it; a full context slides: the last
 * context/2 tokens are kept and re-read. */
WF_API wf_status wf_gen_next(wf_model *m, const wf_sampling *s, int32_t *token);
WF_API const wf_real *wf_gen_logits(const wf_model *m); /* the next token's [V]; borrowed, NULL if none */
/* Start and n_new nexts, the tokens into the caller's out. */
WF_API wf_status wf_generate(wf_model *m, const int32_t *prompt, int32_t n, int32_t n_new,
                             const wf_sampling *s, uint32_t seed, int32_t *out);

/* Encoder-decoder: beam search (width 1..max_beam; 1: greedy; no length penalty) from bos
 * until eos or max_new <= context tokens, in the model's caches. The best hypothesis (with
 * eos if reached) goes to the caller's out[0, max_new), its length to *n_out. */
WF_API wf_status wf_seq2seq_decode(wf_model *m, const int32_t *src, int32_t S, int32_t bos,
                                   int32_t eos, int32_t beam, int32_t max_new, int32_t *out,
                                   int32_t *n_out);

/* ---- Tokenizers: char-level (Unicode code points) or byte-level BPE ---- */
typedef struct wf_tokenizer wf_tokenizer;
typedef enum { WF_TOKENIZER_NONE = 0, WF_TOKENIZER_CHAR = 1, WF_TOKENIZER_BPE = 2 } wf_tokenizer_kind;

/* A new empty tokenizer; caller frees with wf_tokenizer_free. NULL: out of memory. */
WF_API wf_tokenizer *wf_tokenizer_create(void);
WF_API void wf_tokenizer_free(wf_tokenizer *t);
WF_API const char *wf_tokenizer_error(const wf_tokenizer *t); /* borrowed */
/* Char vocabulary from text (UTF-8, len bytes): id 0 is <unk>, then every distinct code
 * point in ascending order. Each invalid UTF-8 byte reads as U+FFFD. */
WF_API wf_status wf_tokenizer_train_char(wf_tokenizer *t, const char *text, int32_t len);
/* Byte-level BPE from text (any bytes): ids 0..255 are the bytes, then merges until
 * vocab_size (256..2^20) tokens or no pair occurs twice. Any bytes round-trip exactly. */
WF_API wf_status wf_tokenizer_train_bpe(wf_tokenizer *t, const char *text, int32_t len, int32_t vocab_size);
WF_API int32_t wf_tokenizer_vocab_size(const wf_tokenizer *t); /* ids t knows; 0 when empty */
WF_API int32_t wf_tokenizer_get_kind(const wf_tokenizer *t); /* a wf_tokenizer_kind; NONE when empty */
WF_API int32_t wf_tokenizer_max_bytes(const wf_tokenizer *t); /* most bytes one id decodes to */

/* Text (len bytes) to ids: at most one id per input byte, so cap = len always suffices.
 * Char: code points outside the vocabulary (and invalid bytes, as U+FFFD) become <unk>, 0. */
WF_API wf_status wf_tokenizer_encode(wf_tokenizer *t, const char *text, int32_t len,
                                     int32_t *out, int32_t cap, int32_t *n_out);
/* ids to bytes: cap = n * wf_tokenizer_max_bytes(t) always suffices; char's <unk> decodes
 * to U+FFFD. Writes no NUL. */
WF_API wf_status wf_tokenizer_decode(wf_tokenizer *t, const int32_t *ids, int32_t n,
                                     char *out, int32_t cap, int32_t *n_out);

/* ---- Checkpoints and tokenizer files (docs/FORMATS.md) ---- */
#define WF_SAVE_OPTIMIZER 1 /* also save AdamW moments, optimizer settings, step, schedule position and RNG states */
/* Serializes m (and tokenizer t when non-NULL) into a new buffer *out of *n bytes; caller
 * frees with wf_buffer_free. */
WF_API wf_status wf_model_save(wf_model *m, const wf_tokenizer *t, int32_t flags, uint8_t **out, int32_t *n);
WF_API void wf_buffer_free(void *p); /* NULL is fine */
/* Loads a checkpoint (data stays the caller's) into m (may be empty) and, when t is non-NULL
 * and the file has one, its tokenizer into t. Everything (magic, version, sizes, checksum)
 * is validated before m or t is touched; on failure both are unchanged. */
WF_API wf_status wf_model_load(wf_model *m, wf_tokenizer *t, const uint8_t *data, int32_t n);
/* A tokenizer on its own, same rules; the buffer is the caller's (wf_buffer_free). */
WF_API wf_status wf_tokenizer_save(const wf_tokenizer *t, uint8_t **out, int32_t *n);
WF_API wf_status wf_tokenizer_load(wf_tokenizer *t, const uint8_t *data, int32_t n);

/* ---- safetensors + config.json in Hugging Face layouts (docs/FORMATS.md) ---- */
/* m as a float32 safetensors file and a NUL-terminated config.json: GPT2LMHeadModel for
 * the GPT-2 style decoder, LlamaForCausalLM for the Llama style, wasmformer's own names
 * otherwise. Caller frees both buffers with wf_buffer_free. */
WF_API wf_status wf_safetensors_export(wf_model *m, uint8_t **st, int32_t *st_len, char **config, int32_t *config_len);
/* Replaces m by the model a config.json and a safetensors file (F32, F16, BF16 or F64)
 * describe. Validated first; on failure m is unchanged. */
WF_API wf_status wf_safetensors_import(wf_model *m, const char *config, int32_t config_len,
                                       const uint8_t *st, int32_t st_len);

#ifdef __cplusplus
}
#endif
#endif /* WASMFORMER_H */
