/* Checkpoints and tokenizer files: writing, and reading hardened against hostile input.
 * The byte layout is specified in docs/FORMATS.md. A loader parses and checks the whole
 * input into temporaries (bounds on every read, sizes against the header and the config,
 * the checksum) and touches the handle only when nothing can fail any more, so a bad file
 * leaves the handle exactly as it was. Nothing is allocated from a size the file states
 * until the file has been seen to contain that many bytes. */
#include <stdio.h>
#include <stdlib.h>

#include "bytes.h"
#include "config.h"
#include "hf.h"
#include "model.h"
#include "tokenizer.h"

#define CKPT_VERSION 1
#define TOK_VERSION 1
#define HEADER_BYTES 24 /* magic, version, flags, reserved, u64 length */
#define CRC_BYTES 4
#define CKPT_TOKENIZER 2u                            /* file flag; bit 0 is WF_SAVE_OPTIMIZER */
#define CKPT_NOTE 4 /* flag bit 2: a NOTE section, the application's bytes (wf_model_set_note) */
#define CKPT_TRAIN 8 /* flag bit 3: a TRAN section, the trainable mask, when a slice is frozen */
#define CKPT_FLAGS (WF_SAVE_OPTIMIZER | CKPT_TOKENIZER | CKPT_NOTE | CKPT_TRAIN) /* every flag version 1 knows */
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

void wf_buffer_free(void *p) { free(p); }

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

/* A section: 4-byte tag, u32 reserved 0, u64 payload length (patched by end_section). */
static size_t begin_section(wf_writer *w, const char *tag) {
    wf_put(w, tag, 4);
    wf_put_u32(w, 0);
    size_t at = w->off;
    wf_put_u64(w, 0);
    return at;
}

static void end_section(wf_writer *w, size_t at) { wf_patch_u64(w, at, (uint64_t)(w->off - at - 8)); }

static size_t begin_file(wf_writer *w, const char *magic, uint32_t version, uint32_t word) {
    size_t start = w->off;
    wf_put(w, magic, 4);
    wf_put_u32(w, version);
    wf_put_u32(w, word);
    wf_put_u32(w, 0);
    wf_put_u64(w, 0);
    return start;
}

/* Patches the total length and appends the CRC-32 of everything from start. */
static void end_file(wf_writer *w, size_t start) {
    wf_patch_u64(w, start + 16, (uint64_t)(w->off + CRC_BYTES - start));
    uint32_t crc = w->p ? wf_crc32(w->p + start, w->off - start) : 0;
    wf_put_u32(w, crc);
}

static void write_tokenizer(wf_writer *w, const wf_tokenizer *t) {
    size_t start = begin_file(w, "WFTK", TOK_VERSION, (uint32_t)t->kind);
    if (t->kind == WF_TOKENIZER_CHAR) {
        wf_put_u32(w, (uint32_t)t->n_chars);
        for (int32_t i = 0; i < t->n_chars; i++) wf_put_u32(w, t->chars[i]);
    } else if (t->kind == WF_TOKENIZER_HF || t->kind == WF_TOKENIZER_LLAMA2C) {
        wf_put(w, t->voc.src, (size_t)t->voc.src_n); /* the tokenizer.json or tokenizer.bin itself */
    } else {
        wf_put_u32(w, WF_BPE_PRETOKENIZER);
        wf_put_u32(w, (uint32_t)t->bpe.n_merges);
        for (int32_t i = 0; i < 2 * t->bpe.n_merges; i++) wf_put_u32(w, (uint32_t)t->bpe.merges[i]);
    }
    end_file(w, start);
}

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
    const int frozen = memchr(m->train, 0, (size_t)m->n_slices) != NULL;
    size_t start = begin_file(w, "WFCK", CKPT_VERSION, (uint32_t)flags | (t ? CKPT_TOKENIZER : 0) | (note_n ? CKPT_NOTE : 0) |
                                                         (frozen ? CKPT_TRAIN : 0));

    size_t at = begin_section(w, "CONF");
    put_words(w, &cfg, N_CONFIG);
    end_section(w, at);

    if (t) {
        at = begin_section(w, "TOKN");
        write_tokenizer(w, t);
        end_section(w, at);
    }

    if (frozen) {
        at = begin_section(w, "TRAN");
        wf_put_u32(w, (uint32_t)m->n_slices);
        wf_put(w, m->train, (size_t)m->n_slices);
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
        put_reals(w, weights + ti->offset, (size_t)ti->size);
        const size_t trained = trained_elems(ti, m->train + m->slice0[i]);
        if (opt && trained) { /* the trainable slices' moments, as they lie in the blocks */
            put_reals(w, adam_m + ti->grad_offset, trained);
            put_reals(w, adam_v + ti->grad_offset, trained);
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
    if (note_n) {
        at = begin_section(w, "NOTE");
        wf_put(w, note, (size_t)note_n);
        end_section(w, at);
    }
    end_file(w, start);
}

/* Sizes the file with a counting pass, then writes it into one new buffer. */
static wf_status finish_buffer(size_t bytes, uint8_t **out, int32_t *n, char *err, size_t cap) {
    if (bytes > INT32_MAX)
        return wf_fail(err, cap, WF_ERR_UNSUPPORTED, "the file would be %.2f GB; at most 2 GB can be written", bytes / 1e9);
    *out = malloc(bytes);
    if (!*out) return wf_fail(err, cap, WF_ERR_NOMEM, "could not allocate %.1f MB for the file", bytes / 1e6);
    *n = (int32_t)bytes;
    return WF_OK;
}

wf_status wf_model_save(wf_model *m, const wf_tokenizer *t, int32_t flags, uint8_t **out, int32_t *n) {
    if (!m) return WF_ERR_ARG;
    if (!out || !n) return WF_ERR(m, WF_ERR_ARG, "out and n must not be NULL");
    *out = NULL;
    *n = 0;
    wf_config cfg;
    if (wf_model_get_config(m, &cfg) != WF_OK) return WF_ERR(m, WF_ERR_STATE, "the model has no weights yet: nothing to save");
    if (flags & ~WF_SAVE_OPTIMIZER) return WF_ERR(m, WF_ERR_ARG, "unknown flags 0x%x; the only flag is WF_SAVE_OPTIMIZER", (unsigned)flags);
    if (t && t->kind == WF_TOKENIZER_NONE) return WF_ERR(m, WF_ERR_STATE, "the tokenizer is empty: train or load it first, or pass NULL");
    if (t && wf_tokenizer_vocab_size(t) > cfg.vocab_size)
        return WF_ERR(m, WF_ERR_STATE, "the tokenizer has %d tokens but the model's vocabulary only %d",
                      wf_tokenizer_vocab_size(t), cfg.vocab_size);
    wf_writer w = {NULL, 0};
    write_model(&w, m, t, flags);
    wf_status s = finish_buffer(w.off, out, n, m->err, sizeof m->err);
    if (s != WF_OK) return s;
    w.p = *out;
    w.off = 0;
    write_model(&w, m, t, flags);
    m->err[0] = 0;
    return WF_OK;
}

wf_status wf_tokenizer_save(wf_tokenizer *t, uint8_t **out, int32_t *n) {
    if (!t) return WF_ERR_ARG;
    if (!out || !n) return TOK_ERR(t, WF_ERR_ARG, "out and n must not be NULL");
    *out = NULL;
    *n = 0;
    if (t->kind == WF_TOKENIZER_NONE) return TOK_ERR(t, WF_ERR_STATE, "the tokenizer is empty: nothing to save");
    wf_writer w = {NULL, 0};
    write_tokenizer(&w, t);
    wf_status s = finish_buffer(w.off, out, n, t->err, sizeof t->err);
    if (s != WF_OK) return s;
    w.p = *out;
    w.off = 0;
    write_tokenizer(&w, t);
    t->err[0] = 0;
    return WF_OK;
}

/* ---- reading ---- */

/* Errors name what is wrong and where, for a user holding a damaged file. */

/* The common envelope of both file kinds: magic, version, the length in the header
 * against the bytes at hand, the checksum. On success *body reads the payload (from the
 * header's end to the checksum) and *word is the header's third field. */
static wf_status open_file(const uint8_t *data, size_t n, const char *magic, uint32_t version, const char *what,
                           wf_reader *body, uint32_t *word, char *msg, size_t cap) {
    if (n < HEADER_BYTES + CRC_BYTES)
        FAIL(WF_ERR_FORMAT, "the %s is %zu bytes; even an empty one has %d (truncated?)", what, n, HEADER_BYTES + CRC_BYTES);
    if (memcmp(data, magic, 4) != 0) {
        if (!memcmp(data, "WFCK", 4) || !memcmp(data, "WFTK", 4))
            FAIL(WF_ERR_FORMAT, "this is a wasmformer %s, not a %s", data[2] == 'C' ? "checkpoint" : "tokenizer file", what);
        FAIL(WF_ERR_FORMAT, "not a wasmformer %s: the first bytes are not \"%s\"", what, magic);
    }
    wf_reader r = wf_reader_of(data, n);
    wf_take(&r, 4);
    uint32_t v = wf_get_u32(&r);
    if (v != version) FAIL(WF_ERR_UNSUPPORTED, "the %s has format version %u; this build reads version %u", what, v, version);
    *word = wf_get_u32(&r);
    uint32_t reserved = wf_get_u32(&r);
    uint64_t len = wf_get_u64(&r);
    if (len != n)
        FAIL(WF_ERR_FORMAT, "the %s says it is %llu bytes long but %zu bytes were given (truncated or padded)", what,
             (unsigned long long)len, n);
    uint32_t stored = wf_le32(data + n - CRC_BYTES), actual = wf_crc32(data, n - CRC_BYTES);
    if (stored != actual)
        FAIL(WF_ERR_FORMAT, "the %s is damaged: its bytes have the CRC-32 0x%08x, its checksum says 0x%08x", what, actual, stored);
    if (reserved != 0) FAIL(WF_ERR_FORMAT, "the %s's reserved header field is %u, not 0", what, reserved);
    *body = wf_reader_of(data + HEADER_BYTES, n - HEADER_BYTES - CRC_BYTES);
    return WF_OK;
}

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

/* A BPE payload: pretokenizer, merge count, merges; wf_bpe_build checks the merges. */
static wf_status parse_bpe(wf_reader *r, wf_tokenizer *out, char *msg, size_t cap) {
    uint32_t pre = wf_get_u32(r), count = wf_get_u32(r);
    if (r->failed) FAIL(WF_ERR_FORMAT, "the BPE vocabulary ends early");
    if (pre != WF_BPE_PRETOKENIZER) FAIL(WF_ERR_UNSUPPORTED, "BPE pretokenizer %u; this build knows %d", pre, WF_BPE_PRETOKENIZER);
    if (count > WF_BPE_MAX_VOCAB - 256 || (size_t)count * 8 != wf_left(r))
        FAIL(WF_ERR_FORMAT, "the BPE vocabulary says %u merges but %zu bytes follow (8 each)", count, wf_left(r));
    int32_t *merges = malloc((size_t)(count ? count : 1) * 2 * sizeof(int32_t));
    if (!merges) FAIL(WF_ERR_NOMEM, "out of memory reading %u merges", count);
    for (uint32_t i = 0; i < 2 * count; i++) {
        uint32_t v = wf_get_u32(r);
        merges[i] = v > INT32_MAX ? -1 : (int32_t)v; /* out of range either way; build names it */
    }
    char why[160];
    wf_status s = wf_bpe_build(&out->bpe, merges, (int32_t)count, why, sizeof why);
    if (s != WF_OK) FAIL(s, "the BPE vocabulary: %s", why);
    out->kind = WF_TOKENIZER_BPE;
    return WF_OK;
}

/* Parses a whole tokenizer file into out, a zeroed temporary (freed here on failure). */
static wf_status parse_tokenizer(const uint8_t *data, size_t n, wf_tokenizer *out, char *msg, size_t cap) {
    wf_reader r;
    uint32_t kind;
    wf_status s = open_file(data, n, "WFTK", TOK_VERSION, "tokenizer file", &r, &kind, msg, cap);
    if (s != WF_OK) return s;
    if (kind == WF_TOKENIZER_BPE) return parse_bpe(&r, out, msg, cap);
    if (kind == WF_TOKENIZER_HF || kind == WF_TOKENIZER_LLAMA2C) {
        char sub[200];
        s = kind == WF_TOKENIZER_HF ? wf_tokjson_parse(r.p, r.n, out, sub, sizeof sub) : wf_llama2c_tok_parse(r.p, r.n, out, sub, sizeof sub);
        if (s != WF_OK) FAIL(s, "the tokenizer file holds a bad %s: %s", kind == WF_TOKENIZER_HF ? "tokenizer.json" : "tokenizer.bin", sub);
        if (out->kind != (int32_t)kind) {
            wf_tokenizer_clear(out);
            FAIL(WF_ERR_FORMAT, "the tokenizer file's tokenizer.json is wasmformer's own BPE, which is saved as kind 2");
        }
        return WF_OK;
    }
    if (kind != WF_TOKENIZER_CHAR)
        FAIL(kind == WF_TOKENIZER_NONE ? WF_ERR_FORMAT : WF_ERR_UNSUPPORTED,
             "tokenizer kind %u is not one this build reads (1 char, 2 bpe, 3 tokenizer.json, 4 llama2.c)", kind);
    uint32_t count = wf_get_u32(&r);
    if (r.failed || count == 0) FAIL(WF_ERR_FORMAT, "the char vocabulary is empty");
    if (count > WF_MAX_CODEPOINT + 1 || (size_t)count * 4 != wf_left(&r))
        FAIL(WF_ERR_FORMAT, "the char vocabulary says %u code points but %zu bytes follow (4 each)", count, wf_left(&r));
    uint32_t *chars = malloc((size_t)count * sizeof(uint32_t));
    if (!chars) FAIL(WF_ERR_NOMEM, "out of memory reading %u code points", count);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t cp = wf_get_u32(&r);
        int bad = cp > WF_MAX_CODEPOINT || (cp >= 0xD800 && cp <= 0xDFFF);
        if (bad || (i > 0 && cp <= chars[i - 1])) {
            free(chars);
            FAIL(WF_ERR_FORMAT, "code point %u of the vocabulary (0x%X) is %s", i, cp,
                 bad ? "not a Unicode scalar value" : "not above the one before it (they must ascend)");
        }
        chars[i] = cp;
    }
    wf_tokenizer_set_chars(out, chars, (int32_t)count);
    return WF_OK;
}

/* Whether the bytes begin as a wasmformer file does ("WF", then the kind's two letters). */
static int is_ours(const uint8_t *data, size_t n) { return n >= 2 && data[0] == 'W' && data[1] == 'F'; }

/* Whether the bytes are JSON: '{' or '[' after any byte order mark and blanks, and then not
 * a zero byte. A llama2.c tokenizer.bin opens with an int32 (max_token_length) whose first
 * byte may be '{' (123), but then zero bytes follow. */
static int is_json(const uint8_t *d, size_t n) {
    size_t i = n >= 3 && d[0] == 0xef && d[1] == 0xbb && d[2] == 0xbf ? 3 : 0;
    while (i < n && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r')) i++;
    return i < n && (d[i] == '{' || d[i] == '[') && (i + 1 == n || d[i + 1] != 0);
}

wf_status wf_tokenizer_load(wf_tokenizer *t, const uint8_t *data, int32_t n) {
    if (!t) return WF_ERR_ARG;
    if ((!data && n > 0) || n < 0) return TOK_ERR(t, WF_ERR_ARG, "data is NULL or its length is negative");
    wf_tokenizer next;
    memset(&next, 0, sizeof next);
    const size_t len = (size_t)n;
    wf_status s = is_ours(data, len) ? parse_tokenizer(data, len, &next, t->err, sizeof t->err)
                  : is_json(data, len) ? wf_tokjson_parse(data, len, &next, t->err, sizeof t->err)
                                              : wf_llama2c_tok_parse(data, len, &next, t->err, sizeof t->err);
    if (s != WF_OK) return s;
    wf_tokenizer_move(t, &next);
    t->err[0] = 0;
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
    const uint8_t *data[WF_N_PARAMS]; /* each tensor's weights in the file (then m, v of its trainable slices) */
    const uint8_t *note;              /* the NOTE section's bytes in the file, or NULL */
    int32_t note_n;
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
    wf_status s = open_file(data, n, "WFCK", CKPT_VERSION, "checkpoint", &r, &flags, msg, cap);
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
    if (!(pc->mask = malloc((size_t)slices))) FAIL(WF_ERR_NOMEM, "out of memory");
    memset(pc->mask, 1, (size_t)slices);

    if (flags & CKPT_TOKENIZER) {
        if ((s = open_section(&r, "TOKN", &sec, msg, cap)) != WF_OK) return s;
        char sub[200];
        s = parse_tokenizer(sec.p, sec.n, tok, sub, sizeof sub);
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
    if (!is_ours(data, (size_t)n)) {
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
    if (s == WF_OK) s = wf_model_init_masked(m, &pc->cfg, pc->mask);
    if (s != WF_OK) {
        free(note);
        wf_tokenizer_clear(&tok);
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
        read_reals(weights + ti->offset, pc->data[i], elems);
        const size_t trained = trained_elems(ti, pc->mask + slice0(pc, i));
        if (pc->has_opt && trained) {
            const int32_t g = m->tensors[i].grad_offset; /* the model's, built with this mask */
            read_reals(adam_m + g, pc->data[i] + 4 * elems, trained);
            read_reals(adam_v + g, pc->data[i] + 4 * (elems + trained), trained);
        }
    }
    if (pc->has_opt) {
        wf_model_set_optim(m, &pc->opt);
        wf_model_set_state(m, &pc->state);
    }
    if (t && tok.kind != WF_TOKENIZER_NONE) {
        wf_tokenizer_move(t, &tok);
        t->err[0] = 0;
    }
    wf_tokenizer_clear(&tok);
    free(pc->mask);
    free(pc);
    m->err[0] = 0;
    return WF_OK;
}
