/* Hugging Face layouts (hf.h): each class's tensors against ours; its config.json is hf_config.c's. */
#include <stdio.h>
#include <stdlib.h>

#include "hf.h"

/* ---- the layouts ---- */

/* Rows: a whole tensor; one layer's slice; the same, transposed; part k of n of its rows. */
#define ONE(n, p) {.name = n, .param = WF_P_##p, .parts = 1}
#define LAYER(n, p) {.name = n, .param = WF_P_##p, .layered = 1, .parts = 1}
#define LAYER_T(n, p) {.name = n, .param = WF_P_##p, .layered = 1, .parts = 1, .transpose = 1}
#define PART(n, p, k, of) {.name = n, .param = WF_P_##p, .layered = 1, .part = k, .parts = of}
#define QKV(n, k) {.name = n, .param = WF_P_qkvw, .layered = 1, .part = k, .parts = 3, .qkv = 1}
#define HEADS(n, p) {.name = n, .param = WF_P_##p, .layered = 1, .parts = 1, .heads = 1}

/* GPT2LMHeadModel. lm_head.weight is written only when the head is untied (a tied head
 * is transformer.wte.weight, as save_pretrained writes it). */
static const wf_hf_row GPT2_ROWS[] = {
    ONE("transformer.wte.weight", wte),
    ONE("transformer.wpe.weight", wpe),
    LAYER("transformer.h.%d.ln_1.weight", ln1w),
    LAYER("transformer.h.%d.ln_1.bias", ln1b),
    LAYER_T("transformer.h.%d.attn.c_attn.weight", qkvw),
    LAYER("transformer.h.%d.attn.c_attn.bias", qkvb),
    LAYER_T("transformer.h.%d.attn.c_proj.weight", attprojw),
    LAYER("transformer.h.%d.attn.c_proj.bias", attprojb),
    LAYER("transformer.h.%d.ln_2.weight", ln2w),
    LAYER("transformer.h.%d.ln_2.bias", ln2b),
    LAYER_T("transformer.h.%d.mlp.c_fc.weight", fcw),
    LAYER("transformer.h.%d.mlp.c_fc.bias", fcb),
    LAYER_T("transformer.h.%d.mlp.c_proj.weight", fcprojw),
    LAYER("transformer.h.%d.mlp.c_proj.bias", fcprojb),
    ONE("transformer.ln_f.weight", lnfw),
    ONE("transformer.ln_f.bias", lnfb),
    ONE("lm_head.weight", lm_head),
};

/* LlamaForCausalLM. Every matrix is [out, in] as ours; q/k/v and gate/up are row parts of
 * the fused qkvw and fcw (docs/ARCHITECTURES.md); with grouped-query attention k and v have
 * fewer rows than q. lm_head.weight is written only when the head is untied. */
static const wf_hf_row LLAMA_ROWS[] = {
    ONE("model.embed_tokens.weight", wte),
    LAYER("model.layers.%d.input_layernorm.weight", ln1w),
    QKV("model.layers.%d.self_attn.q_proj.weight", 0),
    QKV("model.layers.%d.self_attn.k_proj.weight", 1),
    QKV("model.layers.%d.self_attn.v_proj.weight", 2),
    LAYER("model.layers.%d.self_attn.o_proj.weight", attprojw),
    LAYER("model.layers.%d.post_attention_layernorm.weight", ln2w),
    PART("model.layers.%d.mlp.gate_proj.weight", fcw, 0, 2),
    PART("model.layers.%d.mlp.up_proj.weight", fcw, 1, 2),
    LAYER("model.layers.%d.mlp.down_proj.weight", fcprojw),
    ONE("model.norm.weight", lnfw),
    ONE("lm_head.weight", lm_head),
};

/* GPTNeoXForCausalLM with use_parallel_residual false (attention, then the MLP, each on the
 * residual stream after its LayerNorm: our Pre-LN block) and rotary_pct 1. Every matrix is
 * [out, in] as ours; query_key_value holds our qkvw's rows regrouped by head (the model
 * views its output as [heads, 3 HS] and splits each head's q, k, v), and so does its bias.
 * Both apply RoPE in the rotate_half convention over the whole head: q and k rows need no
 * permutation within a head. embed_out.weight is written only when the head is untied. */
static const wf_hf_row NEOX_ROWS[] = {
    ONE("gpt_neox.embed_in.weight", wte),
    LAYER("gpt_neox.layers.%d.input_layernorm.weight", ln1w),
    LAYER("gpt_neox.layers.%d.input_layernorm.bias", ln1b),
    HEADS("gpt_neox.layers.%d.attention.query_key_value.weight", qkvw),
    HEADS("gpt_neox.layers.%d.attention.query_key_value.bias", qkvb),
    LAYER("gpt_neox.layers.%d.attention.dense.weight", attprojw),
    LAYER("gpt_neox.layers.%d.attention.dense.bias", attprojb),
    LAYER("gpt_neox.layers.%d.post_attention_layernorm.weight", ln2w),
    LAYER("gpt_neox.layers.%d.post_attention_layernorm.bias", ln2b),
    LAYER("gpt_neox.layers.%d.mlp.dense_h_to_4h.weight", fcw),
    LAYER("gpt_neox.layers.%d.mlp.dense_h_to_4h.bias", fcb),
    LAYER("gpt_neox.layers.%d.mlp.dense_4h_to_h.weight", fcprojw),
    LAYER("gpt_neox.layers.%d.mlp.dense_4h_to_h.bias", fcprojb),
    ONE("gpt_neox.final_layer_norm.weight", lnfw),
    ONE("gpt_neox.final_layer_norm.bias", lnfb),
    ONE("embed_out.weight", lm_head),
};

/* Our own names and stacked shapes, for configs no Hugging Face class matches. */
#define X(pname, ...) ONE(#pname, pname),
static const wf_hf_row NATIVE_ROWS[] = {WF_PARAMS(X)};
#undef X

#define ROWS(t) .rows = t, .n_rows = (int)(sizeof t / sizeof *t)

const wf_hf_layout wf_hf_layouts[] = {
    [WF_LAYOUT_GPT2] = {.model_type = "gpt2", ROWS(GPT2_ROWS), .optional_prefix = "transformer.",
                        .embedding = "transformer.wte.weight", .head = "lm_head.weight"},
    [WF_LAYOUT_LLAMA] = {.model_type = "llama", ROWS(LLAMA_ROWS), .embedding = "model.embed_tokens.weight",
                         .head = "lm_head.weight"},
    [WF_LAYOUT_NEOX] = {.model_type = "gpt_neox", ROWS(NEOX_ROWS), .embedding = "gpt_neox.embed_in.weight",
                        .head = "embed_out.weight"},
    [WF_LAYOUT_NATIVE] = {.model_type = "wasmformer", ROWS(NATIVE_ROWS)},
};
#undef ROWS

/* Decoders only: GPT-2's Pre-LN LayerNorm with biases, learned positions and a key/value
 * head per query head; GPT-NeoX's the same with RoPE instead of learned positions (micro,
 * the CLI's and the page's default); or Llama's Pre-LN RMSNorm, SwiGLU and RoPE without
 * biases (with grouped-query attention or not); head tied or not in each; none with QK-norm
 * or capped logits. */
int wf_hf_layout_of(const wf_config *c) {
    if (c->arch != WF_ARCH_DECODER || c->block != WF_BLOCK_PRE_LN) return WF_LAYOUT_NATIVE;
    if (c->qk_norm || c->logit_cap > 0) return WF_LAYOUT_NATIVE; /* neither class has them */
    const int mha = c->n_kv_head == 0 || c->n_kv_head == c->n_head;
    const int plain = c->activation == WF_ACT_GELU || c->activation == WF_ACT_RELU || c->activation == WF_ACT_GELU_EXACT;
    if (c->norm == WF_NORM_LAYERNORM && c->positions == WF_POS_LEARNED && c->bias == 1 && mha && plain)
        return WF_LAYOUT_GPT2;
    if (c->norm == WF_NORM_LAYERNORM && c->positions == WF_POS_ROPE && c->bias == 1 && mha &&
        (plain || c->activation == WF_ACT_RELU2))
        return WF_LAYOUT_NEOX;
    if (c->norm == WF_NORM_RMSNORM && c->positions == WF_POS_ROPE && c->bias == 0 && c->activation == WF_ACT_SWIGLU)
        return WF_LAYOUT_LLAMA;
    return WF_LAYOUT_NATIVE;
}

/* The rows of a part: [*start, *start + return value) of the slice's R rows. qkvw's are
 * [C queries; KC keys; KC values], with C its input width (its last dimension). */
static size_t part_rows(const wf_hf_row *r, const wf_tensor_info *ti, size_t R, size_t *start) {
    if (!r->qkv) {
        *start = (size_t)r->part * (R / (size_t)r->parts);
        return R / (size_t)r->parts;
    }
    const size_t C = (size_t)ti->shape[ti->ndim - 1], KC = (R - C) / 2;
    *start = r->part == 0 ? 0 : r->part == 1 ? C : C + KC;
    return r->part == 0 ? C : KC;
}

/* The shape a row gives tensor ti in the file; returns its rank. */
int wf_hf_row_shape(const wf_hf_row *r, const wf_tensor_info *ti, int64_t shape[4]) {
    int nd = 0;
    for (int k = r->layered ? 1 : 0; k < ti->ndim; k++) shape[nd++] = ti->shape[k];
    if (nd == 0) shape[nd++] = 1;
    size_t start;
    shape[0] = (int64_t)part_rows(r, ti, (size_t)shape[0], &start);
    if (r->transpose && nd == 2) {
        int64_t t = shape[0];
        shape[0] = shape[1];
        shape[1] = t;
    }
    return nd;
}

void wf_hf_row_name(const wf_hf_row *r, int layer, char *buf, size_t cap) {
    if (r->layered) snprintf(buf, cap, r->name, layer);
    else snprintf(buf, cap, "%s", r->name);
}


wf_hf_slice wf_hf_slice_of(const wf_hf_row *r, const wf_tensor_info *ti, int L, int layer) {
    size_t S = (size_t)ti->size / (size_t)(r->layered ? L : 1);
    size_t R = r->layered ? (ti->ndim > 1 ? (size_t)ti->shape[1] : 1) : (size_t)ti->shape[0];
    size_t K = S / R, start, Rp = part_rows(r, ti, R, &start);
    return (wf_hf_slice){.offset = (size_t)ti->offset + (size_t)layer * S + start * K, .rows = Rp, .cols = K};
}


size_t wf_hf_row_of(const wf_hf_row *r, size_t i, size_t rows, int NH) {
    if (!r->heads) return i;
    const size_t C = rows / 3, HS = C / (size_t)NH, h = i / (3 * HS), p = i / HS % 3, j = i % HS;
    return p * C + h * HS + j;
}

int wf_hf_entries(const wf_hf_layout *lay, const wf_tensor_info *table, int L, wf_hf_entry *out) {
    int n = 0;
    for (const wf_hf_row *r = lay->rows; r < lay->rows + lay->n_rows; r++) {
        if (!table[r->param].size) continue;
        for (int l = 0; l < (r->layered ? L : 1); l++) out[n++] = (wf_hf_entry){.row = r, .layer = l};
    }
    return n;
}
