/* GGUF v3, llama.cpp's model file (docs/FORMATS.md), shared by its reader (gguf.c: the
 * container, hardened; gguf_model.c: the llama-family model), its writer (gguf_write.c) and their
 * tokenizers (gguf_tok.c). Everything is little-endian; a file is a header (magic "GGUF",
 * version, tensor and key-value counts), typed key-value pairs, tensor infos (name, dims
 * innermost first, ggml type, offset), padding to general.alignment, the tensors' data. */
#ifndef WF_GGUF_H
#define WF_GGUF_H

#include "hf.h"
#include "model.h"
#include "tokenizer.h"

#define WF_GGUF_MAGIC "GGUF"
enum { GG_U8, GG_I8, GG_U16, GG_I16, GG_U32, GG_I32, GG_F32, GG_BOOL, GG_STR, GG_ARR, GG_U64, GG_I64, GG_F64, GG_TYPES };
enum { GGML_F32 = 0, GGML_F16 = 1, GGML_Q4_0 = 2, GGML_Q8_0 = 8, GGML_BF16 = 30 }; /* the tensor types this build reads */
#define GG_MAX_DIMS 4
#define GG_MAX_NAME 64 /* ggml's GGML_MAX_NAME, the terminating NUL included */

typedef struct {
    const uint8_t *p;
    size_t n;
} gg_str;

/* A key-value pair: its value's type; for arrays the elements' type and count; the value's
 * bytes in the file (at, bytes). */
typedef struct {
    gg_str key;
    uint32_t type, etype;
    uint64_t count;
    const uint8_t *at;
    size_t bytes;
} gg_kv;

typedef struct {
    gg_str name;
    uint32_t ndim, type;
    uint64_t ne[GG_MAX_DIMS]; /* ne[0] the innermost: a row's length */
    uint64_t offset;    /* from the file's data (gg_file.data) */
    size_t row, bytes;  /* a row of ne[0] values, the whole tensor (0: a type this build does not read) */
    int used;
} gg_tensor;

typedef struct {
    uint32_t version, alignment;
    size_t data; /* where the tensors' data starts: the header's length */
    int more;    /* a failed parse ran out of bytes: a longer prefix of the file may parse */
    gg_kv *kv; /* in file order; the caller frees kv and t (wf_gguf_release) */
    int32_t n_kv;
    gg_tensor *t;
    int32_t n_t;
} gg_file;

/* The header checked, from the file's first n bytes: every key-value pair and tensor info
 * bounded by the bytes present, each tensor of a type this build reads with rows of whole
 * blocks, aligned and addressable (where its data ends is the streamed load's to check). */
wf_status wf_gguf_parse(const uint8_t *b, size_t n, gg_file *f, char *msg, size_t cap);
void wf_gguf_release(gg_file *f);
int wf_gguf_is(const uint8_t *b, size_t n); /* the magic */
const gg_kv *wf_gguf_get(const gg_file *f, const char *key); /* NULL: absent */
/* A scalar as a number (any integer or float type; bool as 0/1): 1, or 0 when absent or not a number. */
int wf_gguf_num(const gg_file *f, const char *key, double *out);
/* A string value into buf (NUL-terminated, at most cap - 1 bytes): its length, or -1 (absent,
 * not a string, too long). */
int32_t wf_gguf_text(const gg_file *f, const char *key, char *buf, size_t cap);
/* An array's string elements one after the other: the next one after *at (start at kv->at),
 * moving *at past it. */
gg_str wf_gguf_next_str(const uint8_t **at);
/* Element i of a numeric array as a double. */
double wf_gguf_elem(const gg_kv *kv, uint64_t i);

/* The tensor infos' ggml type: bytes of a row of ne0 values (0: ne0 does not fit the type's
 * blocks), and the name ("Q4_K" for the ones this build refuses). */
size_t wf_gguf_row_bytes(uint32_t type, uint64_t ne0);
const char *wf_gguf_type_name(uint32_t type);
/* A string for a message: printable ASCII, the rest as '?', at most cap - 1 bytes, in buf. */
const char *wf_gguf_shown(gg_str s, char *buf, size_t cap);

/* gguf_tok.c: the file's tokenizer (tokenizer.ggml.*) into out, made through the readers of
 * the files wasmformer reads already (a llama SentencePiece vocabulary as llama2.c's
 * tokenizer.bin, a gpt2 BPE one as a tokenizer.json), whose bytes the tokenizer then keeps;
 * *found = 0 when the file has none. V: the model's vocabulary size. */
wf_status wf_gguf_read_tokenizer(const gg_file *f, int32_t V, wf_tokenizer *out, int *found, char *msg, size_t cap);
/* The tokenizer.ggml.* pairs of t (NULL: a placeholder vocabulary of V ids for token-id
 * use), appended to w; returns how many pairs, or -1 with the message (a tokenizer GGUF
 * cannot carry). Called twice by the writer: count, then write. */
int wf_gguf_write_tokenizer(wf_writer *w, const wf_tokenizer *t, int32_t V, char *msg, size_t cap);

/* gguf.c: a key and a string: the writer's vocabulary. */
void wf_gguf_put_str(wf_writer *w, const char *s, size_t n);
void wf_gguf_put_key(wf_writer *w, const char *key, uint32_t type);

/* gguf_model.c: a file tensor and the part of one of our tensors it fills, a row (unit bytes,
 * cols values; a vector's: one value) at a time, rows of them; at: its first byte in the file. */
typedef struct {
    wf_hf_entry e;
    const gg_tensor *t;
    uint64_t at;
    size_t rows, cols, unit;
} gg_entry;
/* What a parsed header describes, checked: the config, the entries in file order (*out, the
 * caller's to free; none sharing a byte), the type each tensor keeps, and into tok when
 * non-NULL the tokenizer (*have_tok 0: the file has none). */
wf_status wf_gguf_plan(gg_file *f, wf_config *cfg, uint8_t qtype[WF_N_PARAMS], gg_entry **out, int *n_out, wf_tokenizer *tok,
                       int *have_tok, char *msg, size_t cap);
/* Row k of entry x (src: its bytes) checked (finite) and put in place in m, made from the plan. */
wf_status wf_gguf_take_row(wf_model *m, const gg_entry *x, size_t k, const uint8_t *src, char *msg, size_t cap);
/* gguf_stream.c: a GGUF file into m (and its tokenizer into t when non-NULL), for wf_model_load:
 * the streamed load (wf_model_load_begin) of one piece. */
wf_status wf_gguf_model_load(wf_model *m, wf_tokenizer *t, const uint8_t *data, size_t n);
/* gguf_write.c: m (a Llama-shaped decoder without adapters) and t as a GGUF file. */
wf_status wf_gguf_save(wf_model *m, const wf_tokenizer *t, uint8_t **out, int32_t *n);

#endif /* WF_GGUF_H */
