/* Checkpoints (.wf): writing, and reading hardened against hostile input. The byte layout is
 * specified in docs/FORMATS.md; the envelope is envelope.c's, the tokenizer section a whole
 * tokenizer file (tokfile.c). The loader parses and checks the whole
 * input into temporaries (bounds on every read, sizes against the header and the config,
 * the checksum) and touches the handle only when nothing can fail any more, so a bad file
 * leaves the handle exactly as it was. Nothing is allocated from a size the file states
 * until the file has been seen to contain that many bytes. */
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "envelope.h"
#include "gguf.h"
#include "hf.h"
#include "model.h"
#include "tokenizer.h"

#define CKPT_VERSION 1
#define CKPT_TOKENIZER 2u                            /* file flag; bit 0 is WF_SAVE_OPTIMIZER */
#define CKPT_NOTE 4 /* flag bit 2: a NOTE section, the application's bytes (wf_model_set_note) */
#define CKPT_TRAIN 8 /* flag bit 3: a TRAN section, the trainable mask, when a slice is frozen */
#define CKPT_RUN 16   /* flag bit 4: a RUNS section, the training run (run.c), saved with the optimizer */
#define CKPT_QUANT 32 /* flag bit 5: a QUAN section, the quantized tensors' types, when there are any */
#define CKPT_FLAGS (WF_SAVE_OPTIMIZER | CKPT_TOKENIZER | CKPT_NOTE | CKPT_TRAIN | CKPT_RUN | CKPT_QUANT) /* every flag version 1 knows */
#define MAX_NAME 63

/* wf_config and wf_optim are serialized field by field, in table order (WF_CONFIG_FIELDS,
 * WF_OPTIM_FIELDS), after a field count. Every field is 4 bytes (int32, uint32 or float32
 * bits), so a struct is an array of 4-byte words. A file with fewer fields than this build
 * (written before a field existed) gets the defaults for the rest; a file with more is
 * refused as written by a newer version. */
enum {
    N_CONFIG = WF_N_CONFIG,
    N_OPTIM = WF_N_OPTIM,
    N_CONFIG_V1 = 15, /* the fields version 1 files always have */
    N_OPTIM_V1 = 9,   /* before the schedule's start (0 when absent) */
    N_RNG = 2,        /* the batch sampler's train and validation streams */
};

/* ---- writing ---- */

static void put_words(wf_writer *w, const void *s, int n) {
    const uint8_t *b = s;
    wf_put_u32(w, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        uint32_t v;
        memcpy(&v, b + 4 * i, 4);
        wf_put_u32(w, v);
    }
}

static void put_reals(wf_writer *w, const wf_real *x, size_t n) {
#ifdef WF_DOUBLE
    for (size_t i = 0; i < n; i++) {
        float f = (float)x[i]; /* files hold float32; the double build is for gradient checks */
        wf_put_f32s(w, &f, 1);
    }
#else
    wf_put_f32s(w, x, n);
#endif
}

/* n values of x, or n zeros when x is NULL (a model that never trained has no moments yet). */
static void put_reals_or_zeros(wf_writer *w, const wf_real *x, size_t n) {
    if (x) {
        put_reals(w, x, n);
        return;
    }
    const float zero = 0;
    for (size_t i = 0; i < n; i++) wf_put_f32s(w, &zero, 1);
}

/* A quantized tensor's rows (the model's packed layout, qsimd.h) as ggml's blocks, in order */
static void put_blocks(wf_writer *w, const uint8_t *q, const wf_tensor_info *ti) {
    const size_t cols = (size_t)ti->shape[ti->ndim - 1], rb = wf_quant_row_bytes(ti->dtype, cols);
    uint8_t blk[34]; /* the largest block, Q8_0's */
    for (size_t row = 0; row < (size_t)ti->size / cols; row++)
        for (size_t b = 0; b < cols / 32; b++) {
            wf_quant_block_ggml(blk, q + row * rb, cols, b, ti->dtype);
            wf_put(w, blk, wf_quant_block_bytes(ti->dtype));
        }
}

/* A section: 4-byte tag, u32 reserved 0, u64 payload length (patched by end_section). */
static size_t begin_section(wf_writer *w, const char *tag) {
    wf_put(w, tag, 4);
    wf_put_u32(w, 0);
    size_t at = w->off;
    wf_put_u64(w, 0);
    return at;
}

static void end_section(wf_writer *w, size_t at) { wf_patch_u64(w, at, (uint64_t)(w->off - at - 8)); }

/* Elements of a tensor's trainable slices (mask: its bytes of the trainable mask). */
static size_t trained_elems(const wf_tensor_info *ti, const uint8_t *mask) {
    size_t n = 0;
    for (int l = 0; l < ti->layers; l++) n += mask[l];
    return ti->layers ? n * ((size_t)ti->size / (size_t)ti->layers) : 0;
}

static void write_model(wf_writer *w, wf_model *m, const wf_tokenizer *t, int32_t flags) {
    const int opt = (flags & WF_SAVE_OPTIMIZER) != 0;
    wf_config cfg;
    wf_model_get_config(m, &cfg);
    int32_t note_n;
    const uint8_t *note = wf_model_get_note(m, &note_n);
    const int frozen = memchr(m->train, 0, (size_t)m->n_slices) != NULL, run = opt && m->run;
    int quantized = 0;
    for (int i = 0; i < WF_N_PARAMS; i++) quantized += m->tensors[i].dtype != WF_QUANT_F32;
    size_t start = wf_envelope_begin(w, "WFCK", CKPT_VERSION, (uint32_t)flags | (t ? CKPT_TOKENIZER : 0) | (note_n ? CKPT_NOTE : 0) |
                                                         (frozen ? CKPT_TRAIN : 0) | (run ? CKPT_RUN : 0) |
                                                         (quantized ? CKPT_QUANT : 0));

    size_t at = begin_section(w, "CONF");
    put_words(w, &cfg, N_CONFIG);
    end_section(w, at);

    if (t) {
        at = begin_section(w, "TOKN");
        wf_tokfile_write(w, t);
        end_section(w, at);
    }

    if (frozen) {
        at = begin_section(w, "TRAN");
        wf_put_u32(w, (uint32_t)m->n_slices);
        wf_put(w, m->train, (size_t)m->n_slices);
        end_section(w, at);
    }

    if (quantized) { /* each quantized tensor's name and wf_quant */
        at = begin_section(w, "QUAN");
        wf_put_u32(w, (uint32_t)quantized);
        for (int i = 0; i < WF_N_PARAMS; i++) {
            if (m->tensors[i].dtype == WF_QUANT_F32) continue;
            wf_put_u32(w, (uint32_t)strlen(m->tensors[i].name));
            wf_put(w, m->tensors[i].name, strlen(m->tensors[i].name));
            wf_put_u32(w, (uint32_t)m->tensors[i].dtype);
        }
        end_section(w, at);
    }

    at = begin_section(w, "TENS");
    wf_tensor_info table[WF_N_PARAMS];
    int present = 0;
    for (int i = 0; i < WF_N_PARAMS; i++) {
        wf_model_get_tensor(m, i, &table[i]);
        present += table[i].size > 0;
    }
    wf_put_u32(w, (uint32_t)present);
    wf_put_u32(w, 0); /* dtype: float32 */
    const wf_real *weights = wf_model_block(m, WF_WEIGHTS), *adam_m = wf_model_block(m, WF_ADAM_M);
    const wf_real *adam_v = wf_model_block(m, WF_ADAM_V);
    for (int i = 0; i < WF_N_PARAMS; i++) {
        const wf_tensor_info *ti = &table[i];
        if (!ti->size) continue;
        size_t len = strlen(ti->name);
        wf_put_u32(w, (uint32_t)len);
        wf_put(w, ti->name, len);
        wf_put_u32(w, (uint32_t)ti->ndim);
        for (int k = 0; k < ti->ndim; k++) wf_put_u32(w, (uint32_t)ti->shape[k]);
        if (ti->dtype == WF_QUANT_F32)
            put_reals(w, weights + ti->offset, (size_t)ti->size);
        else /* its blocks, in ggml's form (the model holds them packed: qsimd.h) */
            put_blocks(w, wf_model_qslice(m, i, 0), ti);
        const size_t trained = trained_elems(ti, m->train + m->slice0[i]);
        if (opt && trained) { /* the trainable slices' moments, as they lie in the blocks (zero before training) */
            put_reals_or_zeros(w, adam_m ? adam_m + ti->grad_offset : NULL, trained);
            put_reals_or_zeros(w, adam_v ? adam_v + ti->grad_offset : NULL, trained);
        }
    }
    end_section(w, at);

    if (opt) {
        wf_optim o;
        wf_train_state st;
        wf_model_get_optim(m, &o);
        wf_model_get_state(m, &st);
        at = begin_section(w, "OPTM");
        put_words(w, &o, N_OPTIM);
        wf_put_u32(w, (uint32_t)st.step);
        wf_put_u32(w, N_RNG);
        for (int i = 0; i < N_RNG; i++) wf_put_u64(w, st.rng[i]);
        end_section(w, at);
    }
    if (run) {
        at = begin_section(w, "RUNS");
        wf_run_write(w, m);
        end_section(w, at);
    }
    if (note_n) {
        at = begin_section(w, "NOTE");
        wf_put(w, note, (size_t)note_n);
        end_section(w, at);
    }
    wf_envelope_end(w, start);
}

wf_status wf_model_save(wf_model *m, const wf_tokenizer *t, int32_t flags, uint8_t **out, int32_t *n) {
    if (!m) return WF_ERR_ARG;
    if (!out || !n) return WF_ERR(m, WF_ERR_ARG, "out and n must not be NULL");
    *out = NULL;
    *n = 0;
    wf_config cfg;
    if (wf_model_get_config(m, &cfg) != WF_OK) return WF_ERR(m, WF_ERR_STATE, "the model has no weights yet: nothing to save");
    if (flags & ~(WF_SAVE_OPTIMIZER | WF_SAVE_GGUF))
        return WF_ERR(m, WF_ERR_ARG, "unknown flags 0x%x; the flags are WF_SAVE_OPTIMIZER and WF_SAVE_GGUF", (unsigned)flags);
    if (flags == (WF_SAVE_OPTIMIZER | WF_SAVE_GGUF))
        return WF_ERR(m, WF_ERR_ARG, "a GGUF file holds no optimizer state: WF_SAVE_GGUF alone");
    if (t && t->kind == WF_TOKENIZER_NONE) return WF_ERR(m, WF_ERR_STATE, "the tokenizer is empty: train or load it first, or pass NULL");
    if (t && wf_tokenizer_vocab_size(t) > cfg.vocab_size)
        return WF_ERR(m, WF_ERR_STATE, "the tokenizer has %d tokens but the model's vocabulary only %d",
                      wf_tokenizer_vocab_size(t), cfg.vocab_size);
    if (flags & WF_SAVE_GGUF) return wf_gguf_save(m, t, out, n);
    wf_writer w = {NULL, 0};
    write_model(&w, m, t, flags);
    wf_status s = wf_envelope_buffer(w.off, out, n, m->err, sizeof m->err);
    if (s != WF_OK) return s;
    w.p = *out;
    w.off = 0;
    write_model(&w, m, t, flags);
    m->err[0] = 0;
    return WF_OK;
}

/* ---- reading ---- */

/* Errors name what is wrong and where, for a user holding a damaged file. */

/* The next section, which must carry tag; *sec reads exactly its payload. */
static wf_status open_section(wf_reader *r, const char *tag, wf_reader *sec, char *msg, size_t cap) {
    const uint8_t *t = wf_take(r, 4);
    uint32_t reserved = wf_get_u32(r);
    uint64_t len = wf_get_u64(r);
    if (r->failed) FAIL(WF_ERR_FORMAT, "section %s is missing (the data ends early)", tag);
    if (memcmp(t, tag, 4) != 0) {
        char got[5] = {0};
        for (int i = 0; i < 4; i++) got[i] = t[i] >= 32 && t[i] < 127 ? (char)t[i] : '?';
        FAIL(WF_ERR_FORMAT, "expected section %s, found \"%s\"", tag, got);
    }
    if (reserved != 0) FAIL(WF_ERR_FORMAT, "section %s: reserved field is %u, not 0", tag, reserved);
    if (len > wf_left(r))
        FAIL(WF_ERR_FORMAT, "section %s says it has %llu bytes but only %zu are left", tag, (unsigned long long)len, wf_left(r));
    *sec = wf_reader_of(wf_take(r, (size_t)len), (size_t)len);
    return WF_OK;
}

static wf_status close_section(const wf_reader *sec, const char *tag, char *msg, size_t cap) {
    if (sec->failed) FAIL(WF_ERR_FORMAT, "section %s ends in the middle of its data (sizes inconsistent with its length)", tag);
    if (wf_left(sec)) FAIL(WF_ERR_FORMAT, "section %s has %zu unexplained bytes at its end", tag, wf_left(sec));
    return WF_OK;
}

/* A field count and the fields over defaults (see CONFIG_FIELDS). */
static wf_status get_words(wf_reader *r, void *s, int ours, int min, const char *what, char *msg, size_t cap) {
    uint32_t n = wf_get_u32(r);
    if (r->failed) FAIL(WF_ERR_FORMAT, "the %s ends early", what);
    if (n > (uint32_t)ours)
        FAIL(WF_ERR_UNSUPPORTED, "the %s has %u fields; this build knows %d (written by a newer wasmformer?)", what, n, ours);
    if (n < (uint32_t)min) FAIL(WF_ERR_FORMAT, "the %s has %u fields; at least %d expected", what, n, min);
    uint8_t *b = s;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = wf_get_u32(r);
        memcpy(b + 4 * i, &v, 4);
    }
    if (r->failed) FAIL(WF_ERR_FORMAT, "the %s ends after fewer than its %u fields", what, n);
    return WF_OK;
}

static void read_reals(wf_real *out, const uint8_t *b, size_t n) {
#ifdef WF_DOUBLE
    for (size_t i = 0; i < n; i++) {
        float f;
        wf_read_f32s(&f, b + 4 * i, 1);
        out[i] = f;
    }
#else
    wf_read_f32s(out, b, n);
#endif
}

/* Index of the first element of b[0, n) (little-endian float32) that is not finite, or
 * negative when nonneg is set; -1 if none. Weights a step could never produce are refused. */
static int64_t first_bad(const uint8_t *b, size_t n, int nonneg) {
    for (size_t i = 0; i < n; i++) {
        uint32_t u = wf_le32(b + 4 * i);
        if ((u & 0x7F800000u) == 0x7F800000u) return (int64_t)i; /* exponent all ones: inf or NaN */
        if (nonneg && (u & 0x80000000u) && (u & 0x7FFFFFFFu)) return (int64_t)i;
    }
    return -1;
}

/* What a checkpoint holds, parsed and checked, before any of it is applied. */
typedef struct {
    wf_config cfg;
    int has_opt;
    wf_optim opt;
    wf_train_state state;
    wf_tensor_info table[WF_N_PARAMS];
    uint8_t *mask;                    /* the trainable mask: the file's TRAN section, else all 1 */
    uint8_t qtype[WF_N_PARAMS];       /* each tensor's wf_quant: the file's QUAN section, else float32 */
    const uint8_t *data[WF_N_PARAMS]; /* each tensor's weights in the file (then m, v of its trainable slices) */
    const uint8_t *note;              /* the NOTE section's bytes in the file, or NULL */
    int32_t note_n;
    wf_run_state *run;                /* the RUNS section's training run, or NULL */
} parsed_ckpt;

static int32_t slice0(const parsed_ckpt *pc, int i) {
    int32_t k = 0;
    for (int j = 0; j < i; j++) k += pc->table[j].layers;
    return k;
}

/* The TRAN section: a byte per slice of the config's table, each 0 or 1. */
static wf_status parse_mask(wf_reader *r, parsed_ckpt *pc, char *msg, size_t cap) {
    const int32_t want = wf_plan_slices(pc->table);
    uint32_t n = wf_get_u32(r);
    if (r->failed || n != (uint32_t)want || wf_left(r) != n)
        FAIL(WF_ERR_FORMAT, "the trainable mask has %u bytes (%zu follow); the file's config has %d slices", n,
             wf_left(r), want);
    const uint8_t *b = wf_take(r, n);
    for (uint32_t k = 0; k < n; k++)
        if (b[k] > 1) FAIL(WF_ERR_FORMAT, "byte %u of the trainable mask is %u, not 0 or 1", k, b[k]);
    memcpy(pc->mask, b, n);
    return WF_OK;
}

/* The QUAN section: how many quantized tensors, then each one's name and wf_quant. They leave
 * the float layout (wf_plan_quant), so this comes before the tensors' sizes are known. */
static wf_status parse_quant(wf_reader *r, parsed_ckpt *pc, char *msg, size_t cap) {
    const uint32_t n = wf_get_u32(r);
    if (r->failed || n == 0 || n > WF_N_PARAMS) FAIL(WF_ERR_FORMAT, "the quantization section lists %u tensors", n);
    for (uint32_t k = 0; k < n; k++) {
        const uint32_t len = wf_get_u32(r);
        const uint8_t *name = len <= MAX_NAME ? wf_take(r, len) : NULL;
        const uint32_t type = wf_get_u32(r);
        if (r->failed || !name) FAIL(WF_ERR_FORMAT, "the quantization section ends early (entry %u)", k);
        int i = 0;
        while (i < WF_N_PARAMS && !(strlen(pc->table[i].name) == len && !memcmp(pc->table[i].name, name, len))) i++;
        if (i == WF_N_PARAMS || !pc->table[i].size || !wf_param_quantizable(i))
            FAIL(WF_ERR_FORMAT, "the quantization section names entry %u, which is no quantizable tensor of this config", k);
        if (pc->qtype[i] != WF_QUANT_F32) FAIL(WF_ERR_FORMAT, "\"%s\" is quantized twice", pc->table[i].name);
        if (type != WF_QUANT_Q8_0 && type != WF_QUANT_Q4_0)
            FAIL(WF_ERR_UNSUPPORTED, "\"%s\" is quantized as type %u; this build reads Q8_0 (1) and Q4_0 (2)", pc->table[i].name, type);
        const wf_tensor_info *t = &pc->table[i];
        if (t->shape[t->ndim - 1] % 32)
            FAIL(WF_ERR_FORMAT, "\"%s\" has rows of %d weights: not whole blocks of 32", t->name, t->shape[t->ndim - 1]);
        pc->qtype[i] = (uint8_t)type;
    }
    size_t qoff[WF_N_PARAMS], qbytes;
    wf_plan_quant(pc->table, pc->qtype, qoff, &qbytes);
    for (int i = 0, k = 0; i < WF_N_PARAMS; k += pc->table[i].layers, i++)
        if (pc->qtype[i] != WF_QUANT_F32 && memchr(pc->mask + k, 1, (size_t)pc->table[i].layers))
            FAIL(WF_ERR_FORMAT, "the trainable mask trains \"%s\", which is quantized", pc->table[i].name);
    return WF_OK;
}

static wf_status parse_tensors(wf_reader *r, parsed_ckpt *pc, char *msg, size_t cap) {
    int expected = 0;
    for (int i = 0; i < WF_N_PARAMS; i++) expected += pc->table[i].size > 0;
    uint32_t count = wf_get_u32(r), dtype = wf_get_u32(r);
    if (r->failed) FAIL(WF_ERR_FORMAT, "the tensor section ends early");
    if (dtype != 0) FAIL(WF_ERR_UNSUPPORTED, "tensor dtype %u; this build reads float32 (0)", dtype);
    if (count != (uint32_t)expected)
        FAIL(WF_ERR_FORMAT, "the file has %u tensors; its config needs %d", count, expected);
    for (uint32_t k = 0; k < count; k++) {
        uint32_t len = wf_get_u32(r);
        if (r->failed || len == 0 || len > MAX_NAME) FAIL(WF_ERR_FORMAT, "tensor %u: name length %u is outside [1, %d]", k, len, MAX_NAME);
        const uint8_t *name = wf_take(r, len);
        if (!name) FAIL(WF_ERR_FORMAT, "tensor %u: the name runs past the end", k);
        char shown[MAX_NAME + 1];
        for (uint32_t c = 0; c < len; c++) shown[c] = name[c] >= 32 && name[c] < 127 ? (char)name[c] : '?';
        shown[len] = 0;
        int i = 0;
        while (i < WF_N_PARAMS && !(strlen(pc->table[i].name) == len && !memcmp(pc->table[i].name, name, len))) i++;
        if (i == WF_N_PARAMS || pc->table[i].size == 0)
            FAIL(WF_ERR_FORMAT, "tensor \"%s\" is not part of a model with this config", shown);
        if (pc->data[i]) FAIL(WF_ERR_FORMAT, "tensor \"%s\" appears twice", shown);
        const wf_tensor_info *ti = &pc->table[i];
        uint32_t ndim = wf_get_u32(r);
        if (r->failed || ndim != (uint32_t)ti->ndim)
            FAIL(WF_ERR_FORMAT, "tensor \"%s\" has %u dimensions; the config gives it %d", shown, ndim, ti->ndim);
        for (int d = 0; d < ti->ndim; d++) {
            uint32_t dim = wf_get_u32(r);
            if (r->failed || dim != (uint32_t)ti->shape[d])
                FAIL(WF_ERR_FORMAT, "tensor \"%s\": dimension %d is %u; the config gives %d", shown, d, dim, ti->shape[d]);
        }
        if (ti->dtype != WF_QUANT_F32) { /* its blocks: frozen, so nothing after them */
            const size_t cols = (size_t)ti->shape[ti->ndim - 1], rows = (size_t)ti->size / cols;
            const size_t rb = wf_quant_row_bytes(ti->dtype, cols);
            if (rows > wf_left(r) / rb)
                FAIL(WF_ERR_FORMAT, "tensor \"%s\" needs %zu rows of %zu bytes but the section has only %zu bytes left",
                     shown, rows, rb, wf_left(r));
            const uint8_t *b = wf_take(r, rows * rb);
            for (size_t row = 0; row < rows; row++) {
                const int64_t bad = wf_quant_check_row(b + row * rb, cols, ti->dtype);
                if (bad >= 0) FAIL(WF_ERR_FORMAT, "tensor \"%s\": row %zu, block %lld has a scale that is not finite", shown,
                                   row, (long long)bad);
            }
            pc->data[i] = b;
            continue;
        }
        /* weights, then the AdamW m and v of its trainable slices; compared before
         * multiplying: 12 * size can exceed a 32-bit size_t */
        const size_t elems = (size_t)ti->size, trained = pc->has_opt ? trained_elems(ti, pc->mask + slice0(pc, i)) : 0;
        if (elems > wf_left(r) / 4 || trained > (wf_left(r) / 4 - elems) / 2)
            FAIL(WF_ERR_FORMAT, "tensor \"%s\" needs %zu values but the section has only %zu bytes left", shown,
                 elems + 2 * trained, wf_left(r));
        const uint8_t *b = wf_take(r, (elems + 2 * trained) * 4);
        for (size_t c = 0; c < (trained ? 3u : 1u); c++) {
            const size_t at = c == 0 ? 0 : elems + (c - 1) * trained, n = c == 0 ? elems : trained;
            int64_t bad = first_bad(b + at * 4, n, c == 2);
            if (bad >= 0)
                FAIL(WF_ERR_FORMAT, "tensor \"%s\": %s value %lld is %s", shown, c == 0 ? "weight" : c == 1 ? "AdamW m" : "AdamW v",
                     (long long)bad, c == 2 ? "negative or not finite" : "not finite");
        }
        pc->data[i] = b;
    }
    return WF_OK;
}

static wf_status parse_checkpoint(const uint8_t *data, size_t n, parsed_ckpt *pc, wf_tokenizer *tok, char *msg,
                                  size_t cap) {
    wf_reader r, sec;
    uint32_t flags;
    wf_status s = wf_envelope_open(data, n, "WFCK", CKPT_VERSION, "checkpoint", &r, &flags, msg, cap);
    if (s != WF_OK) return s;
    if (flags & ~CKPT_FLAGS) FAIL(WF_ERR_UNSUPPORTED, "unknown file flags 0x%x (written by a newer wasmformer?)", flags);
    pc->has_opt = (flags & WF_SAVE_OPTIMIZER) != 0;

    /* config: checked like wf_model_init would, and small enough to address */
    if ((s = open_section(&r, "CONF", &sec, msg, cap)) != WF_OK) return s;
    wf_config_default(&pc->cfg);
    if ((s = get_words(&sec, &pc->cfg, N_CONFIG, N_CONFIG_V1, "config", msg, cap)) != WF_OK) return s;
    if ((s = close_section(&sec, "CONF", msg, cap)) != WF_OK) return s;
    char why[200];
    s = wf_config_check(&pc->cfg, why, sizeof why);
    if (s != WF_OK) FAIL(s == WF_ERR_UNSUPPORTED ? s : WF_ERR_FORMAT, "the file's config: %s", why);
    if (wf_tensor_table(&pc->cfg, pc->table) != WF_OK) FAIL(WF_ERR_FORMAT, "the file's config has more than 2^31 - 1 parameters");
    const int32_t slices = wf_plan_slices(pc->table);
    if (!(pc->mask = wf_malloc_n((size_t)slices, 1))) FAIL(WF_ERR_NOMEM, "out of memory");
    memset(pc->mask, 1, (size_t)slices);

    if (flags & CKPT_TOKENIZER) {
        if ((s = open_section(&r, "TOKN", &sec, msg, cap)) != WF_OK) return s;
        char sub[200];
        s = wf_tokfile_parse(sec.p, sec.n, tok, sub, sizeof sub);
        if (s != WF_OK) FAIL(s, "the file's tokenizer: %s", sub);
        if (wf_tokenizer_vocab_size(tok) > pc->cfg.vocab_size)
            FAIL(WF_ERR_FORMAT, "the file's tokenizer has %d tokens but its model only %d", wf_tokenizer_vocab_size(tok),
                 pc->cfg.vocab_size);
    }

    if (flags & CKPT_TRAIN) {
        if ((s = open_section(&r, "TRAN", &sec, msg, cap)) != WF_OK) return s;
        if ((s = parse_mask(&sec, pc, msg, cap)) != WF_OK) return s;
        if ((s = close_section(&sec, "TRAN", msg, cap)) != WF_OK) return s;
    }
    if (flags & CKPT_QUANT) {
        if ((s = open_section(&r, "QUAN", &sec, msg, cap)) != WF_OK) return s;
        if ((s = parse_quant(&sec, pc, msg, cap)) != WF_OK) return s;
        if ((s = close_section(&sec, "QUAN", msg, cap)) != WF_OK) return s;
    }
    if ((s = open_section(&r, "TENS", &sec, msg, cap)) != WF_OK) return s;
    if ((s = parse_tensors(&sec, pc, msg, cap)) != WF_OK) return s;
    if ((s = close_section(&sec, "TENS", msg, cap)) != WF_OK) return s;

    if (pc->has_opt) {
        if ((s = open_section(&r, "OPTM", &sec, msg, cap)) != WF_OK) return s;
        wf_optim_default(&pc->opt);
        if ((s = get_words(&sec, &pc->opt, N_OPTIM, N_OPTIM_V1, "optimizer settings", msg, cap)) != WF_OK) return s;
        uint32_t step = wf_get_u32(&sec), n_rng = wf_get_u32(&sec);
        if (sec.failed) FAIL(WF_ERR_FORMAT, "the optimizer section ends early");
        if (step > INT32_MAX) FAIL(WF_ERR_FORMAT, "step %u is out of range", step);
        if (n_rng != N_RNG) FAIL(WF_ERR_FORMAT, "the file has %u RNG streams; the model has %d", n_rng, N_RNG);
        pc->state.step = (int32_t)step;
        for (int i = 0; i < N_RNG; i++) {
            pc->state.rng[i] = wf_get_u64(&sec);
            if (!sec.failed && pc->state.rng[i] == 0) FAIL(WF_ERR_FORMAT, "RNG stream %d has the state 0, which it can never reach", i);
        }
        if ((s = close_section(&sec, "OPTM", msg, cap)) != WF_OK) return s;
    }
    if (flags & CKPT_RUN) {
        if (!pc->has_opt) FAIL(WF_ERR_FORMAT, "a training run is saved only with the optimizer state (flag bit 0)");
        if ((s = open_section(&r, "RUNS", &sec, msg, cap)) != WF_OK) return s;
        if ((s = wf_run_read(&sec, &pc->cfg, &pc->run, msg, cap)) != WF_OK) return s;
        if ((s = close_section(&sec, "RUNS", msg, cap)) != WF_OK) return s;
    }
    if (flags & CKPT_NOTE) {
        if ((s = open_section(&r, "NOTE", &sec, msg, cap)) != WF_OK) return s;
        if (sec.n == 0 || sec.n > WF_NOTE_MAX) FAIL(WF_ERR_FORMAT, "the note has %zu bytes; a note has 1 to %d", sec.n, WF_NOTE_MAX);
        pc->note = sec.p;
        pc->note_n = (int32_t)sec.n;
    }
    if (wf_left(&r)) FAIL(WF_ERR_FORMAT, "%zu unexplained bytes after the last section", wf_left(&r));
    if (pc->has_opt && (s = wf_optim_check(&pc->opt, why, sizeof why)) != WF_OK)
        FAIL(WF_ERR_FORMAT, "the file's optimizer settings: %s", why);
    return WF_OK;
}

wf_status wf_model_load(wf_model *m, wf_tokenizer *t, const uint8_t *data, int32_t n) {
    if (!m) return WF_ERR_ARG;
    if ((!data && n > 0) || n < 0) return WF_ERR(m, WF_ERR_ARG, "data is NULL or its length is negative");
    if (wf_gguf_is(data, (size_t)n)) return wf_gguf_model_load(m, t, data, (size_t)n);
    if (!wf_envelope_is_ours(data, (size_t)n)) {
        wf_status s = wf_llama2c_model_load(m, data, n);
        if (s == WF_ERR_FORMAT) { /* say both readings: a damaged checkpoint ends here too */
            char why[sizeof m->err];
            const char *p = strncmp(m->err, "llama2.c: ", 10) ? m->err : m->err + 10;
            snprintf(why, sizeof why, "%s", p);
            return WF_ERR(m, s, "not a wasmformer checkpoint (its first bytes are not \"WFCK\") nor a llama2.c model "
                          "file (%s)", why);
        }
        return s;
    }
    parsed_ckpt *pc = calloc(1, sizeof *pc);
    wf_tokenizer tok;
    memset(&tok, 0, sizeof tok);
    if (!pc) return WF_ERR(m, WF_ERR_NOMEM, "out of memory");
    /* parsed and checked: only building the model can fail now, and it leaves m as it was */
    wf_status s = parse_checkpoint(data, (size_t)n, pc, &tok, m->err, sizeof m->err);
    /* the note is copied first: once the model is rebuilt nothing may fail */
    uint8_t *note = NULL;
    if (s == WF_OK && pc->note_n > 0 && !(note = malloc((size_t)pc->note_n)))
        s = WF_ERR(m, WF_ERR_NOMEM, "could not allocate the note's %d bytes", pc->note_n);
    if (note) memcpy(note, pc->note, (size_t)pc->note_n);
    /* moments to load need the training state; without them the model is made to generate */
    if (s == WF_OK) s = wf_model_init_as(m, &pc->cfg, pc->mask, pc->qtype, pc->has_opt);
    if (s != WF_OK) {
        free(note);
        wf_tokenizer_clear(&tok);
        wf_run_free(pc->run);
        free(pc->mask);
        free(pc);
        return s;
    }
    free(m->note);
    m->note = note;
    m->note_n = pc->note_n;
    wf_real *weights = wf_model_block(m, WF_WEIGHTS), *adam_m = wf_model_block(m, WF_ADAM_M);
    wf_real *adam_v = wf_model_block(m, WF_ADAM_V);
    for (int i = 0; i < WF_N_PARAMS; i++) {
        const wf_tensor_info *ti = &pc->table[i];
        if (!ti->size) continue;
        const size_t elems = (size_t)ti->size;
        if (ti->dtype != WF_QUANT_F32) { /* ggml's blocks, packed for the kernels */
            const size_t cols = (size_t)ti->shape[ti->ndim - 1], rb = wf_quant_row_bytes(ti->dtype, cols);
            uint8_t *q = wf_model_qslice(m, i, 0);
            for (size_t row = 0; row < elems / cols; row++) wf_quant_pack_row(q + row * rb, ti->dtype, pc->data[i] + row * rb, ti->dtype, cols);
            continue;
        }
        read_reals(weights + ti->offset, pc->data[i], elems);
        const size_t trained = trained_elems(ti, pc->mask + slice0(pc, i));
        if (pc->has_opt && trained) {
            wf_tensor_info mt; /* the model's row: built with this mask, its gradients' offset */
            wf_model_get_tensor(m, i, &mt);
            const int32_t g = mt.grad_offset;
            read_reals(adam_m + g, pc->data[i] + 4 * elems, trained);
            read_reals(adam_v + g, pc->data[i] + 4 * (elems + trained), trained);
        }
    }
    if (pc->has_opt) {
        wf_model_set_optim(m, &pc->opt);
        wf_model_set_state(m, &pc->state);
    }
    if (pc->run) wf_run_attach(m, pc->run);
    if (t && tok.kind != WF_TOKENIZER_NONE) {
        wf_tokenizer_move(t, &tok);
        t->err[0] = 0;
    }
    wf_tokenizer_clear(&tok);
    m->origin = pc->has_opt ? WF_ORIGIN_OPTIMIZER : WF_ORIGIN_WEIGHTS;
    free(pc->mask);
    free(pc);
    m->err[0] = 0;
    return WF_OK;
}
