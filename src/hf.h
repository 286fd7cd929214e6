/* Hugging Face layouts: for each architecture a Hugging Face class holds, the table of its
 * tensors against ours, and its config.json against wf_config (docs/FORMATS.md). A row
 * names a Hugging Face tensor (with %d for the layer), the parameter it comes from, and
 * how: one layer's slice of a stacked tensor, a part of its rows (Llama's q/k/v out of our
 * fused qkv), transposed (GPT-2's Conv1D keeps weights as [in, out] where we keep
 * [out, in]), its rows regrouped by head (GPT-NeoX's fused query_key_value). Configs no Hugging Face class matches use the "wasmformer" layout: our own
 * tensor names and stacked shapes, and config.json from WF_CONFIG_FIELDS. Adding an
 * architecture is adding a table, its config.json key table (hf.c: the integer members the
 * writer and the reader share) with the rest of its mapping, and its case in wf_hf_layout_of. */
#ifndef WF_HF_H
#define WF_HF_H

#include "json.h"
#include "plan.h"

typedef struct {
    const char *name; /* Hugging Face name; "%d" stands for the layer */
    int param;        /* WF_P_* */
    int layered;      /* one tensor per layer: a slice of the stacked tensor */
    int part, parts;  /* rows [part R / parts, (part + 1) R / parts) of the slice's R rows */
    int qkv;          /* instead: part 0, 1, 2 of qkvw's rows [queries C; keys KC; values KC] */
    int transpose;    /* stored [in, out] (GPT-2's Conv1D) instead of our [out, in] */
    int heads;        /* our [q; k; v] rows (C each, head after head) stored head after head, [q_h; k_h; v_h] */
} wf_hf_row;

enum { WF_LAYOUT_GPT2, WF_LAYOUT_LLAMA, WF_LAYOUT_NEOX, WF_LAYOUT_NATIVE };

typedef struct {
    const char *model_type; /* config.json's model_type */
    const wf_hf_row *rows;
    int n_rows;
    const char *optional_prefix; /* GPT2Model checkpoints name tensors without it */
    const char *embedding;       /* the token embedding's name: a tied head repeated in a state dict must equal it */
    const char *head;            /* the output head's name */
} wf_hf_layout;
extern const wf_hf_layout wf_hf_layouts[];

/* Sets the choices that make a Llama: a Pre-LN RMSNorm decoder with SwiGLU, RoPE and no biases
 * (the sizes, head tying and the rest are left as they are). llama2c.c reads into it too. */
void wf_hf_llama_shape(wf_config *c);
/* llama2c.c: m from a llama2.c model file (data and n checked by the caller, wf_model_load). */
wf_status wf_llama2c_model_load(wf_model *m, const uint8_t *data, int32_t n);
/* The layout of a config: GPT-2, Llama or GPT-NeoX for the decoders those classes hold, else ours. */
int wf_hf_layout_of(const wf_config *c);
/* The shape a row gives tensor ti in the file; returns its rank. */
int wf_hf_row_shape(const wf_hf_row *r, const wf_tensor_info *ti, int64_t shape[4]);
/* The row's tensor name for a layer. */
void wf_hf_row_name(const wf_hf_row *r, int layer, char *buf, size_t cap);
/* One layer's slice of tensor ti, seen as R rows of K: part `part` of `parts`. */
typedef struct {
    size_t offset; /* elements into the parameter block */
    size_t rows, cols;
} wf_hf_slice;
wf_hf_slice wf_hf_slice_of(const wf_hf_row *r, const wf_tensor_info *ti, int L, int layer);
/* Which of a slice's rows (of `rows`) the file's row i holds: i, or for a `heads` row with NH
 * heads, head h's part p's row j of [q_h; k_h; v_h] (i = (3h + p) HS + j) is our p C + h HS + j. */
size_t wf_hf_row_of(const wf_hf_row *r, size_t i, size_t rows, int NH);

/* One tensor of a file in a layout: a row, for one layer (0 for rows that are not layered). */
typedef struct {
    const wf_hf_row *row;
    int layer;
} wf_hf_entry;
/* The tensors of a model with tensor table `table` and L layers in layout lay, in file
 * order, into out (room for lay->n_rows * L entries); returns how many. */
int wf_hf_entries(const wf_hf_layout *lay, const wf_tensor_info *table, int L, wf_hf_entry *out);

/* ---- the safetensors container (safetensors.c) ---- */
enum { ST_F32, ST_F16, ST_BF16, ST_F64, ST_OTHER };
#define MAX_ST_NAME 256
#define MAX_ST_DIMS 8
typedef struct {
    char name[MAX_ST_NAME];
    int dtype;
    int ndim;
    int64_t shape[MAX_ST_DIMS];
    uint64_t elems;
    const uint8_t *data; /* inside the caller's buffer */
    uint64_t begin, end; /* data_offsets: its bytes of the data */
    int used;
} st_tensor;
typedef struct {
    st_tensor *t; /* sorted by name; the caller frees t */
    int32_t n;
} st_file;
/* Reads the header of a safetensors file: u64 header length, JSON header, data. Every
 * tensor's dtype, shape and byte range are checked against each other and the data, and the
 * ranges against each other: they tile the data (no overlap, no gap), as the format says. */
wf_status wf_st_parse(const uint8_t *b, size_t n, st_file *out, char *msg, size_t cap);
st_tensor *wf_st_find(st_file *f, const char *name); /* NULL: absent */
float wf_st_get(const st_tensor *t, size_t i);      /* element i as a float (ST_OTHER: not readable) */

/* config.json of a config in a layout (into t), and the config and layout a config.json
 * describes (over wf_config_default; checked only as JSON and against the layout: the
 * caller runs wf_config_check). */
void wf_hf_write_config(wf_text *t, const wf_config *c, int layout);
wf_status wf_hf_read_config(const char *text, size_t n, wf_config *c, int *layout, char *msg, size_t cap);

#endif /* WF_HF_H */
