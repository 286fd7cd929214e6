/* The model handle, and what the rest of the core does with it:
 *   model.c       the handle: init (random or zero weights), accessors, settings, threads
 *   stack.c       the stacks: embeddings, ONE forward loop for training, prompts, decoding
 *                 and the beam search's encoder, one backward loop, the head
 *   train.c       batches: checks, the loss, clipping, the step
 *   run.c         the training run: its tokens, sampler, schedule, validation, roll-back
 *   generate.c, seq2seq.c: decoding, on the stack's forward loop
 *   checkpoint.c, safetensors.c: the file formats, which build a model through model.c
 * Below it: block.h (one layer), plan.h (sizes and tables), ops.h (the op pairs). */
#ifndef WF_MODEL_H
#define WF_MODEL_H

#include "block.h"
#include "bytes.h"

typedef struct wf_run_state wf_run_state; /* a training run (run.c) */
/* What the model calls of its run, which lives above it (run.c sets it with the run): end it
 * (its schedule goes on in the settings), free it, its next step's learning rate. */
typedef struct {
    void (*end)(struct wf_model *m);
    void (*free)(wf_run_state *r);
    float (*next_lr)(const struct wf_model *m);
} wf_run_ops;

struct wf_model {
    int ready; /* 0: an empty handle */
    int32_t origin; /* wf_origin: what made the model (init, or the file format that filled it) */
    wf_config cfg;
    wf_dims d;
    wf_optim opt;
    int32_t step;
    wf_rng rng_split[2]; /* the batch sampler's train and validation streams */

    wf_tensor_info tensors[WF_N_PARAMS];
    size_t n_params;
    size_t stride;  /* elements of each block */
    wf_real *block[4]; /* params, grads, AdamW m, AdamW v (WF_WEIGHTS...), allocated apart (one
                          wasm32 allocation stops short of 2 GB; a 135M model's four are 2.2):
                          params stride elements in the tensor table's layout, the other three
                          gstride in the trainable slices' (wf_plan_train), allocated by the
                          first call that trains (NULL before: wf_model_train_state) */
    size_t gstride;    /* elements of the grads, m and v blocks: stride when every slice trains */
    int32_t n_slices;  /* the trainable mask's bytes: tensors[i].layers each */
    int32_t slice0[WF_N_PARAMS]; /* tensor i's first slice */
    uint8_t *train;    /* [n_slices] 1: the slice trains (wf_model_trainable) */
    size_t *goff;      /* [n_slices] its offset in the grads, m and v blocks; SIZE_MAX: frozen */
    wf_real *muon_mem; /* Muon's Newton-Schulz scratch, wf_plan_muon elements (with the training state) */
    /* quantized weights (wf_model_quantize, the file formats): each tensor's wf_quant, the
       quantized ones' blocks outside the weight block (wf_plan_quant: tensor i at qoff[i] bytes,
       its tensors[i].offset -1), and the quantized products' scratch (wf_qlinear_scratch) */
    uint8_t qtype[WF_N_PARAMS];
    uint8_t *qmem;
    size_t qoff[WF_N_PARAMS], qbytes;
    void *qscratch;
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
    uint8_t *note;   /* the application's bytes (wf_model_set_note), or NULL */
    int32_t note_n;
    wf_run_state *run;           /* the training run, or NULL (run.c) */
    const wf_run_ops *run_ops;   /* its calls, set with it */
    double (*clock)(void *ctx);  /* the run's clock in milliseconds; NULL: the system's (a test sets its own) */
    void *clock_ctx;
    struct wf_gguf_stream *loading; /* a streamed load under way (gguf_stream.c), or NULL, */
    void (*loading_free)(struct wf_gguf_stream *s); /* and how to free it (set with it: no call into gguf_stream.c) */
    char err[256];
};

#define WF_ERR(m, status, ...) wf_fail((m)->err, sizeof (m)->err, (status), __VA_ARGS__)

/* ---- model.c ---- */

/* WF_ERR_ARG for NULL, WF_ERR_STATE (with the message) for an empty handle; WF_NEED_READY
 * returns it from the caller. */
wf_status wf_model_ready(wf_model *m);
#define WF_NEED_READY(m)                     \
    do {                                     \
        wf_status ready_ = wf_model_ready(m); \
        if (ready_ != WF_OK) return ready_;  \
    } while (0)

/* wf_model_init without the random weights: every weight zero, for the file formats to fill
 * (wf_model_block). On failure m's previous model is kept. */
wf_status wf_model_init_zero(wf_model *m, const wf_config *cfg);
/* The same with a trainable mask (a checkpoint's): mask[n_slices], NULL: the config's default
 * (quantized slices are frozen either way); each tensor's wf_quant (qtype NULL: all float32);
 * train: with the training state (to load optimizer moments into). */
wf_status wf_model_init_as(wf_model *m, const wf_config *cfg, const uint8_t *mask, const uint8_t *qtype, int train);
/* Models are made without their training state (gradients, optimizer moments, Muon's scratch:
 * NULL blocks), which only training needs: the first call that trains allocates it, zero.
 * WF_ERR_NOMEM (m unchanged) when it cannot. */
wf_status wf_model_train_state(wf_model *m);
void wf_model_drop_train_state(wf_model *m); /* frees it again: the first training call failed */
/* The model's blocks: weights in the tensor table's layout, the others in the trainable
 * slices' (wf_model_slice, m->goff). */
enum { WF_WEIGHTS = 0, WF_GRADS = 1, WF_ADAM_M = 2, WF_ADAM_V = 3 };
wf_real *wf_model_block(wf_model *m, int block);
/* Tensor i's slice for one layer (an unstacked tensor: layer 0 is all of it) in a block: its
 * weights, or its gradients or moments (NULL: the slice is frozen); NULL for a tensor the
 * config does not have. */
wf_real *wf_model_slice(const wf_model *m, int block, int i, int layer);
/* The same slice's blocks when tensor i is quantized (its dtype: m->tensors[i].dtype), else NULL. */
uint8_t *wf_model_qslice(const wf_model *m, int i, int layer);
/* Rows [r0, r0 + n) of tensor i (its rows: its last dimension long, all layers in turn) as
 * floats: a pointer into the weight block, or dequantized into buf. */
const wf_real *wf_model_rows(const wf_model *m, int i, size_t r0, size_t n, wf_real *buf);
/* What a checkpoint carries besides weights and settings. */
typedef struct {
    int32_t step;
    uint64_t rng[2]; /* the batch sampler's streams */
} wf_train_state;
void wf_model_get_state(const wf_model *m, wf_train_state *out);
void wf_model_set_state(wf_model *m, const wf_train_state *s);
/* The batch sampler's two streams from one seed, as init seeds them from the config's. */
void wf_model_seed_sampler(wf_model *m, uint32_t seed);

/* What a layer reads of the handle (block.h): the config and sizes, the pool, RoPE's tables
 * and backward's scratch. Made per call: a model being rebuilt moves (model.c's adopt). */
wf_layer_ctx wf_model_layer_ctx(wf_model *m);

/* For tune.c, which changes a model in place by building its successor aside: make (as
 * wf_model_init_as, into next, m's message on failure), the training state of a model being
 * built (into err), release, adopt (next's model into m, keeping m's pool and note), LoRA's
 * initial adapters, and pointing p and g into the blocks again. */
wf_status wf_model_make(wf_model *m, wf_model *next, const wf_config *cfg, const uint8_t *mask, const uint8_t *qtype);
wf_status wf_model_alloc_train(wf_model *m, char *err, size_t cap);
void wf_model_release(wf_model *m);
void wf_model_adopt(wf_model *m, wf_model *next);
void wf_model_init_lora(wf_model *m);
void wf_model_point(wf_model *m);
/* Layer l of a stack: weights (grads = 0) or their gradients (grads = 1: NULL for frozen slices). */
void wf_layer_weights(const wf_model *m, int stack, int l, int grads, wf_layer_w *w);
/* Makes room for a batch of (B, T, S) and carves the activations for it; allocates only
 * when the shape needs more than any before; on failure nothing changes. */
wf_status wf_model_plan_batch(wf_model *m, int B, int T, int S);
/* The one token-id check: ids[0, n) in [0, vocab_size) (negative = ignored: negatives
 * pass); WF_ERR_TOKEN names what, the id and its position. */
wf_status wf_model_check_ids(wf_model *m, const int32_t *ids, size_t n, int negative_ok, const char *what);

/* ---- stack.c ---- */

/* How a stack runs besides its layers' shape (io, the same for every layer). */
typedef struct {
    wf_layer_io io;               /* the per-layer fields (caches, ckv) are set by the loop */
    const wf_layer_acts *scratch; /* decoding: one block for every layer, its output copied back
                                     into x; NULL: layer l's block of the planned activations */
    wf_real *kcache, *vcache;     /* decoding: layer l's cache at + l * context * C */
    const wf_real *xkv;           /* decoding: layer l's cross keys and values at + l * context * 2C */
    const wf_real *enc;           /* training: the encoder's output; the loop computes each decoder
                                     layer's cross keys and values from it (into the layer's block) */
    int last_skip;                /* decoding: io.skip of the last layer (its first rows' outputs unread) */
} wf_stack_run;

/* The token (or vector) embedding of a stack at positions pos.., with dropout in training. */
void wf_stack_embed(wf_model *m, int stack, wf_real *out, wf_real *mask, const int32_t *ids, const wf_real *vecs,
                    int B, int T, int pos, wf_rng *rng);
/* The stack's layers over x; returns the last layer's output (x itself with r->scratch). */
const wf_real *wf_stack_forward(wf_model *m, int stack, const wf_stack_run *r, wf_real *x);
/* Layer l's block of the planned activations. */
wf_layer_acts wf_stack_acts(const wf_model *m, int stack, int l);
/* The final norm and the output head over N rows of x (fast: generation's products, quant.c). */
void wf_head_forward(wf_model *m, wf_real *logits, wf_real *lnf, wf_real *lnf_mean, wf_real *lnf_rstd,
                     const wf_real *x, int N, int fast);
/* Decoding: T tokens of one sequence at positions pos.. through the embedding and the
 * decoder layers, leaving the last layer's output in gen.x [T, C] (rows from `from` on:
 * the last layer skips the others, whose keys and values still go to the caches; 0: all).
 * Layer l's keys and values go to kcache/vcache + l * context * C; S > 0: cross-attention
 * to the S source rows' keys and values in gen.xkv. */
void wf_stack_decode(wf_model *m, const int32_t *tokens, int T, int pos, wf_real *kcache, wf_real *vcache, int S,
                     int from);
/* The whole model on the planned batch: the encoder (encoder-decoders), the stack under the
 * head, the final norm and, unless the objective is a mean squared error on the states, the
 * head. train: dropout on. */
void wf_model_forward_batch(wf_model *m, const wf_batch *b, int train);
/* Its backward, from dL/d(final states) in the activations' dln or, with logits, from
 * dL/d(logits) in probs: every weight gradient, accumulated into the grads block. */
void wf_model_backward_batch(wf_model *m, const wf_batch *b);

/* ---- train.c ---- */

/* wf_model_forward (grads = 0) and wf_model_backward (grads = 1) with the loss in wf_real:
 * the gradient-check build's (WF_DOUBLE) way to a double loss. */
wf_status wf_model_loss(wf_model *m, const wf_batch *b, int grads, wf_real *loss);
/* wf_model_step at learning rate lr; a refused step's WF_DIVERGED_* (the loss, the gradient
 * norm or the update not finite) to *why (may be NULL; 0: none), and what it found to info. */
wf_status wf_model_step_lr(wf_model *m, const wf_batch *b, float lr, wf_step_info *info, int *why);

/* ---- run.c ---- */

/* The learning rate of the next step: the run's, else the optimizer schedule's. */
float wf_model_next_lr(const wf_model *m);
/* Ends m's run (init, load, a new trainable layout and wf_model_run_begin(m, NULL...) do):
 * its schedule goes on in the optimizer settings from the rate it reached. */
void wf_run_end(wf_model *m);
void wf_run_free(wf_run_state *r);
/* For the tests: one batch of the run's sampler from split 0 (training) or 1 (validation);
 * the spike rule on its own over losses[0, n): where it trips (-1: nowhere). */
void wf_run_sample(wf_model *m, int split, int32_t *in, int32_t *tg);
int wf_run_spike_at(const float *losses, int n);
/* Checkpoints: the run's bytes (m has one), and a run read from them (checked against the
 * file's config; its tokens come again with keep), which attach puts into a loaded m. */
void wf_run_write(wf_writer *w, const wf_model *m);
wf_status wf_run_read(wf_reader *rd, const wf_config *cfg, wf_run_state **out, char *msg, size_t cap);
void wf_run_attach(wf_model *m, wf_run_state *r);

/* ---- generate.c ---- */

/* Ends a generation in progress: its cached keys and values belong to weights that changed. */
void wf_model_gen_stop(wf_model *m);
/* The next token from logits[0, V) under s (greedy below temperature 1e-6), drawn with rng;
 * probs [V] and order [V] are scratch. -1 when a logit is NaN or infinite: nothing to sample. */
int32_t wf_sample_token(const wf_real *logits, int V, const wf_sampling *s, wf_rng *rng, wf_real *probs,
                        int32_t *order);
/* The first of x[0, n) that is NaN or infinite, or -1. */
int32_t wf_first_non_finite(const wf_real *x, int32_t n);

#endif /* WF_MODEL_H */
