/* A Llama-shaped model as a GGUF v3 file (gguf.h), for llama.cpp and wllama: llama.cpp's
 * metadata keys and tensor names (hf.c's GGUF layout), each tensor as the model holds it
 * (F32, or its Q8_0 or Q4_0 blocks: ggml's layouts), q and k in llama.cpp's pair order, and
 * the tokenizer (gguf_tok.c). Written twice, as every file: a counting pass sizes it. */
#include <stdio.h>
#include <stdlib.h>

#include "envelope.h"
#include "gguf.h"

#define ALIGN 32 /* general.alignment: llama.cpp's default */

static uint32_t ggml_type(int dtype) { return dtype == WF_QUANT_Q8_0 ? GGML_Q8_0 : dtype == WF_QUANT_Q4_0 ? GGML_Q4_0 : GGML_F32; }

static void pad(wf_writer *w) {
    static const uint8_t zeros[ALIGN] = {0};
    wf_put(w, zeros, (ALIGN - w->off % ALIGN) % ALIGN);
}

/* The inverse of gguf.c's file_row: file row g of a q or k part holds our row unpaired. */
static size_t our_row(size_t g, size_t HS, int permute) {
    if (!permute) return g;
    const size_t i = g % HS, h = g - i;
    return h + (i % 2 == 0 ? i / 2 : HS / 2 + i / 2);
}

static void put_f32_kv(wf_writer *w, const char *key, float v) {
    wf_gguf_put_key(w, key, GG_F32);
    wf_put_f32s(w, &v, 1);
}

static void put_u32(wf_writer *w, const char *key, uint32_t v) {
    wf_gguf_put_key(w, key, GG_U32);
    wf_put_u32(w, v);
}

/* The whole file into w (counting when w has no buffer); -1 with the message when the
 * tokenizer has no GGUF form. */
static int write_file(wf_writer *w, wf_model *m, const wf_tokenizer *t, const wf_hf_entry *e, int n, char *msg, size_t cap) {
    const wf_config *c = &m->cfg;
    const wf_dims *d = &m->d;
    int q8 = 0, q4 = 0;
    for (int i = 0; i < WF_N_PARAMS; i++) q8 |= m->tensors[i].dtype == WF_QUANT_Q8_0, q4 |= m->tensors[i].dtype == WF_QUANT_Q4_0;
    /* the header, its counts patched once the tokenizer's pairs are known */
    wf_put(w, WF_GGUF_MAGIC, 4);
    wf_put_u32(w, 3);
    wf_put_u64(w, (uint64_t)n);
    const size_t kv_count_at = w->off;
    wf_put_u64(w, 0);
    wf_gguf_put_key(w, "general.architecture", GG_STR);
    wf_gguf_put_str(w, "llama", 5);
    wf_gguf_put_key(w, "general.name", GG_STR);
    wf_gguf_put_str(w, "wasmformer", 10);
    put_u32(w, "general.alignment", ALIGN);
    put_u32(w, "general.file_type", q4 ? 2 : q8 ? 7 : 0); /* llama.cpp's MOSTLY_Q4_0, MOSTLY_Q8_0, ALL_F32 */
    put_u32(w, "llama.context_length", (uint32_t)c->context);
    put_u32(w, "llama.embedding_length", (uint32_t)c->d_model);
    put_u32(w, "llama.block_count", (uint32_t)c->n_layer);
    put_u32(w, "llama.feed_forward_length", (uint32_t)c->d_ff);
    put_u32(w, "llama.attention.head_count", (uint32_t)c->n_head);
    put_u32(w, "llama.attention.head_count_kv", (uint32_t)d->KV);
    put_u32(w, "llama.rope.dimension_count", (uint32_t)d->HS);
    put_u32(w, "llama.vocab_size", (uint32_t)c->vocab_size);
    put_f32_kv(w, "llama.rope.freq_base", c->rope_theta);
    put_f32_kv(w, "llama.attention.layer_norm_rms_epsilon", c->norm_eps);
    const int tok = wf_gguf_write_tokenizer(w, t, c->vocab_size, msg, cap);
    if (tok < 0) return -1;
    wf_patch_u64(w, kv_count_at, (uint64_t)(14 + tok));
    /* the tensor infos, each tensor's data at the next multiple of the alignment */
    uint64_t offset = 0;
    for (int k = 0; k < n; k++) {
        const wf_tensor_info *ti = &m->tensors[e[k].row->param];
        const wf_hf_slice sl = wf_hf_slice_of(e[k].row, ti, d->L, e[k].layer);
        char name[GG_MAX_NAME];
        wf_hf_row_name(e[k].row, e[k].layer, name, sizeof name);
        wf_gguf_put_str(w, name, strlen(name));
        const int matrix = ti->ndim - (e[k].row->layered ? 1 : 0) > 1;
        wf_put_u32(w, matrix ? 2 : 1);
        wf_put_u64(w, sl.cols * (matrix ? 1 : sl.rows)); /* a norm's C values: one row of C in our slice */
        if (matrix) wf_put_u64(w, sl.rows);
        wf_put_u32(w, ggml_type(ti->dtype));
        wf_put_u64(w, offset);
        const uint64_t bytes = (uint64_t)sl.rows * wf_quant_row_bytes(ti->dtype, sl.cols);
        offset += (bytes + ALIGN - 1) / ALIGN * ALIGN;
    }
    pad(w);
    for (int k = 0; k < n; k++) {
        const wf_hf_row *r = e[k].row;
        const wf_tensor_info *ti = &m->tensors[r->param];
        const wf_hf_slice sl = wf_hf_slice_of(r, ti, d->L, e[k].layer);
        const size_t row0 = (sl.offset - (size_t)ti->offset) / sl.cols, rb = wf_quant_row_bytes(ti->dtype, sl.cols);
        const int permute = r->qkv && r->part < 2;
        for (size_t g = 0; g < sl.rows; g++) {
            const size_t row = row0 + our_row(g, (size_t)d->HS, permute);
            if (ti->dtype == WF_QUANT_F32) {
                const wf_real *x = m->block[WF_WEIGHTS] + ti->offset + row * sl.cols;
                for (size_t j = 0; j < sl.cols; j++) {
                    const float v = (float)x[j];
                    wf_put_f32s(w, &v, 1);
                }
            } else { /* the model's packed row as ggml's blocks */
                uint8_t blk[34]; /* the largest block, Q8_0's */
                for (size_t b = 0; b < sl.cols / 32; b++) {
                    wf_quant_block_ggml(blk, m->qmem + m->qoff[r->param] + row * rb, sl.cols, b, ti->dtype);
                    wf_put(w, blk, wf_quant_block_bytes(ti->dtype));
                }
            }
        }
        pad(w);
    }
    return 0;
}

wf_status wf_gguf_save(wf_model *m, const wf_tokenizer *t, uint8_t **out, int32_t *n) {
    if (wf_hf_layout_of(&m->cfg) != WF_LAYOUT_LLAMA)
        return WF_ERR(m, WF_ERR_UNSUPPORTED, "GGUF: only a Llama-shaped decoder is written as one (RMSNorm, SwiGLU, RoPE, "
                      "no biases: the llama family llama.cpp runs)");
    if (m->d.LR) return WF_ERR(m, WF_ERR_STATE, "GGUF: the model has LoRA adapters: merge or remove them first");
    const wf_hf_layout *lay = &wf_hf_layouts[WF_LAYOUT_GGUF];
    wf_hf_entry *e = wf_malloc_n((size_t)lay->n_rows * (size_t)m->d.L, sizeof *e); /* L <= 1024 */
    if (!e) return WF_ERR(m, WF_ERR_NOMEM, "out of memory");
    const int count = wf_hf_entries(lay, m->tensors, m->d.L, e);
    wf_writer w = {NULL, 0};
    wf_status s = write_file(&w, m, t, e, count, m->err, sizeof m->err) < 0 ? WF_ERR_UNSUPPORTED : WF_OK;
    if (s == WF_OK) s = wf_envelope_buffer(w.off, out, n, m->err, sizeof m->err);
    if (s == WF_OK) {
        w = (wf_writer){*out, 0};
        write_file(&w, m, t, e, count, m->err, sizeof m->err);
        m->err[0] = 0;
    }
    free(e);
    return s;
}
