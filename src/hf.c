/* Hugging Face layouts and config.json (hf.h). */
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "hf.h"

/* ---- the layouts ---- */

/* Rows: a whole tensor; one layer's slice; the same, transposed; part k of n of its rows. */
#define ONE(n, p) {.name = n, .param = WF_P_##p, .parts = 1}
#define LAYER(n, p) {.name = n, .param = WF_P_##p, .layered = 1, .parts = 1}
#define LAYER_T(n, p) {.name = n, .param = WF_P_##p, .layered = 1, .parts = 1, .transpose = 1}
#define PART(n, p, k, of) {.name = n, .param = WF_P_##p, .layered = 1, .part = k, .parts = of}
#define QKV(n, k) {.name = n, .param = WF_P_qkvw, .layered = 1, .part = k, .parts = 3, .qkv = 1}

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

/* llama.cpp's names for the same tensors in a GGUF file (gguf.c, gguf_write.c), where q and
 * k also hold each head's rows in pairs (llama.cpp's RoPE turns channels 2i, 2i + 1). */
static const wf_hf_row GGUF_ROWS[] = {
    ONE("token_embd.weight", wte),
    LAYER("blk.%d.attn_norm.weight", ln1w),
    QKV("blk.%d.attn_q.weight", 0),
    QKV("blk.%d.attn_k.weight", 1),
    QKV("blk.%d.attn_v.weight", 2),
    LAYER("blk.%d.attn_output.weight", attprojw),
    LAYER("blk.%d.ffn_norm.weight", ln2w),
    PART("blk.%d.ffn_gate.weight", fcw, 0, 2),
    PART("blk.%d.ffn_up.weight", fcw, 1, 2),
    LAYER("blk.%d.ffn_down.weight", fcprojw),
    ONE("output_norm.weight", lnfw),
    ONE("output.weight", lm_head),
};

/* Our own names and stacked shapes, for configs no Hugging Face class matches. */
#define X(pname, ...) ONE(#pname, pname),
static const wf_hf_row NATIVE_ROWS[] = {WF_PARAMS(X)};
#undef X

#define ROWS(t) .rows = t, .n_rows = (int)(sizeof t / sizeof *t)

const wf_hf_layout wf_hf_layouts[] = {
    [WF_LAYOUT_GPT2] = {.model_type = "gpt2", ROWS(GPT2_ROWS), .optional_prefix = "transformer.",
                        .embedding = "transformer.wte.weight"},
    [WF_LAYOUT_LLAMA] = {.model_type = "llama", ROWS(LLAMA_ROWS), .embedding = "model.embed_tokens.weight"},
    [WF_LAYOUT_NATIVE] = {.model_type = "wasmformer", ROWS(NATIVE_ROWS)},
    [WF_LAYOUT_GGUF] = {.model_type = "llama", ROWS(GGUF_ROWS)},
};
#undef ROWS

/* Decoders only: GPT-2's Pre-LN LayerNorm with biases, learned positions and a key/value
 * head per query head, or Llama's Pre-LN RMSNorm, SwiGLU and RoPE without biases (with
 * grouped-query attention or not); head tied or not in both; neither with QK-norm or
 * capped logits. */
int wf_hf_layout_of(const wf_config *c) {
    if (c->arch != WF_ARCH_DECODER || c->block != WF_BLOCK_PRE_LN) return WF_LAYOUT_NATIVE;
    if (c->qk_norm || c->logit_cap > 0) return WF_LAYOUT_NATIVE; /* neither class has them */
    const int mha = c->n_kv_head == 0 || c->n_kv_head == c->n_head;
    if (c->norm == WF_NORM_LAYERNORM && c->positions == WF_POS_LEARNED && c->bias == 1 && mha &&
        (c->activation == WF_ACT_GELU || c->activation == WF_ACT_RELU || c->activation == WF_ACT_GELU_EXACT))
        return WF_LAYOUT_GPT2;
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


int wf_hf_entries(const wf_hf_layout *lay, const wf_tensor_info *table, int L, wf_hf_entry *out) {
    int n = 0;
    for (const wf_hf_row *r = lay->rows; r < lay->rows + lay->n_rows; r++) {
        if (!table[r->param].size) continue;
        for (int l = 0; l < (r->layered ? L : 1); l++) out[n++] = (wf_hf_entry){.row = r, .layer = l};
    }
    return n;
}

/* ---- config.json ---- */

/* The integer members of a layout's config.json that are wf_config fields, in the order
 * transformers writes them: the one table the writer and the reader go through. NEED: the
 * reader refuses a file without it; MAY: null or absent gives absent + widths * d_model, the
 * class's default; WRITE: written only (GPT-2's n_ctx repeats n_positions). */
enum { NEED, MAY, WRITE };
typedef struct {
    const char *key;
    size_t field; /* offsetof(wf_config, ...) */
    int32_t min;  /* the smallest value read (the largest: 2^31 - 1) */
    int need;
    int32_t absent, widths;
} hf_int;
#define F(field) offsetof(wf_config, field)
static const hf_int GPT2_INTS[] = {
    {.key = "vocab_size", .field = F(vocab_size), .min = 2, .need = NEED},
    {.key = "n_positions", .field = F(context), .min = 1, .need = NEED},
    {.key = "n_ctx", .field = F(context), .min = 1, .need = WRITE},
    {.key = "n_embd", .field = F(d_model), .min = 1, .need = NEED},
    {.key = "n_layer", .field = F(n_layer), .min = 1, .need = NEED},
    {.key = "n_head", .field = F(n_head), .min = 1, .need = NEED},
    {.key = "n_inner", .field = F(d_ff), .min = 1, .need = MAY, .widths = 4},
};
static const hf_int LLAMA_INTS[] = {
    {.key = "vocab_size", .field = F(vocab_size), .min = 2, .need = NEED},
    {.key = "max_position_embeddings", .field = F(context), .min = 1, .need = MAY, .absent = 2048},
    {.key = "hidden_size", .field = F(d_model), .min = 1, .need = NEED},
    {.key = "intermediate_size", .field = F(d_ff), .min = 1, .need = NEED},
    {.key = "num_hidden_layers", .field = F(n_layer), .min = 1, .need = NEED},
    {.key = "num_attention_heads", .field = F(n_head), .min = 1, .need = NEED},
};
#undef F
#define COUNT(a) (sizeof(a) / sizeof *(a))

static void write_ints(wf_text *t, const hf_int *rows, size_t n, const wf_config *c) {
    for (const hf_int *r = rows; r < rows + n; r++) {
        int32_t v;
        memcpy(&v, (const char *)c + r->field, 4);
        wf_text_put(t, "  \"%s\": %d,\n", r->key, v);
    }
}

void wf_hf_write_config(wf_text *t, const wf_config *c, int layout) {
    char eps[32], theta[32];
    wf_json_float(eps, sizeof eps, c->norm_eps);
    wf_json_float(theta, sizeof theta, c->rope_theta);
    if (!strpbrk(theta, ".eE")) strcat(theta, ".0"); /* a Python float, as transformers writes it */
    if (layout == WF_LAYOUT_GPT2) {
        wf_text_put(t, "{\n  \"architectures\": [\"GPT2LMHeadModel\"],\n  \"model_type\": \"gpt2\",\n");
        write_ints(t, GPT2_INTS, COUNT(GPT2_INTS), c);
        wf_text_put(t, "  \"activation_function\": \"%s\",\n  \"layer_norm_epsilon\": %s,\n",
            c->activation == WF_ACT_RELU ? "relu" : c->activation == WF_ACT_GELU_EXACT ? "gelu" : "gelu_new", eps);
        wf_text_put(t, "  \"tie_word_embeddings\": %s,\n", c->tied_head ? "true" : "false");
        wf_text_put(t, "  \"scale_attn_weights\": true,\n  \"scale_attn_by_inverse_layer_idx\": false,\n"
               "  \"reorder_and_upcast_attn\": false,\n  \"add_cross_attention\": false,\n");
        wf_text_put(t, "  \"resid_pdrop\": 0.0,\n  \"embd_pdrop\": 0.0,\n  \"attn_pdrop\": 0.0,\n"
               "  \"initializer_range\": 0.02,\n  \"use_cache\": true,\n  \"torch_dtype\": \"float32\"\n}\n");
        return;
    }
    if (layout == WF_LAYOUT_LLAMA) {
        /* null token ids: Llama's defaults (1, 2) would make generate() stop on token 2 */
        wf_text_put(t, "{\n  \"architectures\": [\"LlamaForCausalLM\"],\n  \"model_type\": \"llama\",\n");
        write_ints(t, LLAMA_INTS, COUNT(LLAMA_INTS), c);
        /* not fields: the key/value heads (ours: 0 for one per query head) and the head size */
        wf_text_put(t, "  \"num_key_value_heads\": %d,\n  \"head_dim\": %d,\n", c->n_kv_head ? c->n_kv_head : c->n_head,
                    c->d_model / c->n_head);
        wf_text_put(t, "  \"hidden_act\": \"silu\",\n  \"rms_norm_eps\": %s,\n  \"rope_theta\": %s,\n"
               "  \"rope_scaling\": null,\n", eps, theta);
        wf_text_put(t, "  \"tie_word_embeddings\": %s,\n", c->tied_head ? "true" : "false");
        wf_text_put(t, "  \"attention_bias\": false,\n  \"mlp_bias\": false,\n  \"attention_dropout\": 0.0,\n"
               "  \"pretraining_tp\": 1,\n  \"bos_token_id\": null,\n  \"eos_token_id\": null,\n"
               "  \"initializer_range\": 0.02,\n  \"use_cache\": true,\n  \"torch_dtype\": \"float32\"\n}\n");
        return;
    }
    wf_text_put(t, "{\n  \"model_type\": \"wasmformer\",\n  \"wasmformer_format\": 1");
    for (const wf_field *f = wf_config_fields; f < wf_config_fields + WF_N_CONFIG; f++) {
        const char *at = (const char *)c + f->offset, *name;
        int32_t iv;
        uint32_t uv;
        float fv;
        memcpy(&iv, at, 4);
        memcpy(&uv, at, 4);
        memcpy(&fv, at, 4);
        wf_text_put(t, ",\n  \"%s\": ", f->name);
        if (f->kind == 'e') {
            size_t n = wf_enum_name(f->names, iv, &name);
            wf_text_put(t, "\"%.*s\"", n ? (int)n : 1, n ? name : "?");
        }
        else if (f->kind == 'b') wf_text_put(t, "%s", iv ? "true" : "false");
        else if (f->kind == 'u') wf_text_put(t, "%u", uv);
        else if (f->kind == 'f') { char b[32]; wf_json_float(b, sizeof b, fv); wf_text_put(t, "%s", b); }
        else wf_text_put(t, "%d", iv);
    }
    wf_text_put(t, "\n}\n");
}


/* An integer member within [lo, hi]; absent members keep *out (when optional). */
static wf_status get_int(const wf_json *j, int32_t obj, const char *key, int optional, int64_t lo, int64_t hi, int64_t *out,
                         char *msg, size_t cap) {
    int32_t x = wf_json_get(j, obj, key);
    if (x == -2) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" appears twice", key);
    if (x < 0 || j->nodes[x].type == WF_J_NULL) {
        if (optional) return WF_OK;
        FAIL(WF_ERR_FORMAT, "config.json: \"%s\" is missing", key);
    }
    if (j->nodes[x].type != WF_J_NUM || !j->nodes[x].is_int || j->nodes[x].ival < lo || j->nodes[x].ival > hi)
        FAIL(WF_ERR_FORMAT, "config.json: \"%s\" must be an integer in [%lld, %lld]", key, (long long)lo, (long long)hi);
    *out = j->nodes[x].ival;
    return WF_OK;
}

static wf_status get_float(const wf_json *j, int32_t obj, const char *key, float *out, char *msg, size_t cap) {
    int32_t x = wf_json_get(j, obj, key);
    if (x == -2) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" appears twice", key);
    if (x < 0) return WF_OK;
    if (j->nodes[x].type != WF_J_NUM) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" must be a number", key);
    *out = (float)j->nodes[x].num;
    return WF_OK;
}

/* A boolean member; absent keeps *out. want >= 0: the only value this build supports. */
static wf_status get_bool(const wf_json *j, int32_t obj, const char *key, int want, int32_t *out, char *msg, size_t cap) {
    int32_t x = wf_json_get(j, obj, key);
    if (x == -2) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" appears twice", key);
    if (x < 0) return WF_OK;
    if (j->nodes[x].type != WF_J_BOOL) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" must be true or false", key);
    if (want >= 0 && j->nodes[x].boolean != want)
        FAIL(WF_ERR_UNSUPPORTED, "config.json: \"%s\": %s is not supported", key, j->nodes[x].boolean ? "true" : "false");
    *out = j->nodes[x].boolean;
    return WF_OK;
}

#define TRY(call)                      \
    do {                               \
        wf_status s_ = (call);         \
        if (s_ != WF_OK) return s_;    \
    } while (0)

/* The rows of a table that `need` says (NEED or MAY), each into its field. */
static wf_status read_ints(const wf_json *j, const hf_int *rows, size_t n, int need, wf_config *c, char *msg, size_t cap) {
    for (const hf_int *r = rows; r < rows + n; r++) {
        if (r->need != need) continue;
        int64_t v = r->absent + r->widths * (int64_t)c->d_model;
        TRY(get_int(j, 0, r->key, need == MAY, r->min, INT32_MAX, &v, msg, cap));
        if (v > INT32_MAX) FAIL(WF_ERR_FORMAT, "config.json: %s %lld is too large", r->key, (long long)v);
        const int32_t x = (int32_t)v;
        memcpy((char *)c + r->field, &x, 4);
    }
    return WF_OK;
}

/* The norm's epsilon (under eps_key; absent: eps) and the head's tying (absent: tied), which
 * every class names its own way or defaults its own way. */
static wf_status read_eps_and_tie(const wf_json *j, const char *eps_key, float eps, int32_t tied, wf_config *c, char *msg,
                                  size_t cap) {
    c->norm_eps = eps;
    TRY(get_float(j, 0, eps_key, &c->norm_eps, msg, cap));
    c->tied_head = tied;
    return get_bool(j, 0, "tie_word_embeddings", -1, &c->tied_head, msg, cap);
}

static wf_status read_gpt2_config(const wf_json *j, wf_config *c, char *msg, size_t cap) {
    const int32_t o = 0;
    TRY(read_ints(j, GPT2_INTS, COUNT(GPT2_INTS), NEED, c, msg, cap));
    TRY(read_ints(j, GPT2_INTS, COUNT(GPT2_INTS), MAY, c, msg, cap));
    TRY(read_eps_and_tie(j, "layer_norm_epsilon", 1e-5f, 1, c, msg, cap));
    int32_t ignored;
    TRY(get_bool(j, o, "scale_attn_weights", 1, &ignored, msg, cap));
    TRY(get_bool(j, o, "scale_attn_by_inverse_layer_idx", 0, &ignored, msg, cap));
    TRY(get_bool(j, o, "add_cross_attention", 0, &ignored, msg, cap));
    c->activation = WF_ACT_GELU;
    int32_t x = wf_json_get(j, o, "activation_function");
    if (x == -2) FAIL(WF_ERR_FORMAT, "config.json: \"activation_function\" appears twice");
    if (x >= 0) {
        char act[64];
        if (j->nodes[x].type != WF_J_STR || wf_json_str(j, x, act, sizeof act) < 0)
            FAIL(WF_ERR_FORMAT, "config.json: \"activation_function\" must be a short string");
        if (!strcmp(act, "relu")) c->activation = WF_ACT_RELU;
        else if (!strcmp(act, "gelu")) c->activation = WF_ACT_GELU_EXACT;
        else if (strcmp(act, "gelu_new") && strcmp(act, "gelu_pytorch_tanh") && strcmp(act, "gelu_fast"))
            FAIL(WF_ERR_UNSUPPORTED, "config.json: activation_function \"%s\" is not supported; "
                 "wasmformer has gelu_new (GELU, tanh approximation), gelu (erf) and relu", act);
    }
    c->arch = WF_ARCH_DECODER;
    c->norm = WF_NORM_LAYERNORM;
    c->block = WF_BLOCK_PRE_LN;
    c->positions = WF_POS_LEARNED;
    c->bias = 1;
    return WF_OK;
}

/* A string member of at most cap_buf - 1 bytes into buf; absent keeps buf. */
static wf_status get_str(const wf_json *j, int32_t obj, const char *key, char *buf, size_t cap_buf, char *msg, size_t cap) {
    int32_t x = wf_json_get(j, obj, key);
    if (x == -2) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" appears twice", key);
    if (x < 0) return WF_OK;
    if (j->nodes[x].type != WF_J_STR || wf_json_str(j, x, buf, cap_buf) < 0)
        FAIL(WF_ERR_FORMAT, "config.json: \"%s\" must be a string of at most %zu bytes", key, cap_buf - 1);
    return WF_OK;
}

/* A RoPE base: a positive number a float holds, quoted as the file writes it. */
static wf_status read_theta(const wf_json *j, int32_t x, const char *key, float *theta, char *msg, size_t cap) {
    const wf_jnode *n = &j->nodes[x];
    if (n->type != WF_J_NUM) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" must be a number", key);
    if (!(n->num > 0 && n->num <= FLT_MAX))
        FAIL(WF_ERR_FORMAT, "config.json: %s %.*s must be a positive number", key, (int)(n->len < 32 ? n->len : 32),
             j->s + n->start);
    *theta = (float)n->num;
    return WF_OK;
}

/* RoPE as the core computes it: base rope_theta (10000 when absent), unscaled, over the
 * whole head. transformers 4.x writes rope_theta and rope_scaling (null, or {"rope_type" or
 * "type", parameters}); 5.x writes rope_parameters {"rope_type": "default", "rope_theta": ...}. */
static wf_status read_llama_rope(const wf_json *j, float *theta, char *msg, size_t cap) {
    int32_t x = wf_json_get(j, 0, "rope_theta");
    if (x == -2) FAIL(WF_ERR_FORMAT, "config.json: \"rope_theta\" appears twice");
    if (x >= 0) TRY(read_theta(j, x, "rope_theta", theta, msg, cap));
    static const char *const groups[] = {"rope_scaling", "rope_parameters"};
    for (int g = 0; g < 2; g++) {
        int32_t o = wf_json_get(j, 0, groups[g]);
        if (o == -2) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" appears twice", groups[g]);
        if (o < 0 || j->nodes[o].type == WF_J_NULL) continue;
        if (j->nodes[o].type != WF_J_OBJ) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" must be an object or null", groups[g]);
        for (int32_t c = j->nodes[o].first; c >= 0; c = j->nodes[c].next) {
            char key[64], name[96];
            if (wf_json_str(j, j->nodes[c].key, key, sizeof key) < 0) snprintf(key, sizeof key, "(a long key)");
            snprintf(name, sizeof name, "%s.%s", groups[g], key);
            if (!strcmp(key, "rope_theta")) TRY(read_theta(j, c, name, theta, msg, cap));
            else if ((!strcmp(key, "rope_type") || !strcmp(key, "type")) && !wf_json_is(j, c, "default")) {
                char value[64] = "?";
                if (j->nodes[c].type == WF_J_STR && wf_json_str(j, c, value, sizeof value) < 0) snprintf(value, sizeof value, "(long)");
                FAIL(WF_ERR_UNSUPPORTED, "config.json: %s \"%s\" is not supported; wasmformer's rotary positions are "
                     "unscaled (\"default\")", name, value);
            }
            else if (strcmp(key, "rope_type") && strcmp(key, "type"))
                FAIL(WF_ERR_UNSUPPORTED, "config.json: %s is not supported; wasmformer's rotary positions are unscaled "
                     "and turn the whole head", name);
        }
    }
    return WF_OK;
}

static wf_status read_llama_config(const wf_json *j, wf_config *c, char *msg, size_t cap) {
    const int32_t o = 0;
    TRY(read_ints(j, LLAMA_INTS, COUNT(LLAMA_INTS), NEED, c, msg, cap));
    int64_t v = c->n_head; /* Llama's default for a null or absent num_key_value_heads */
    TRY(get_int(j, o, "num_key_value_heads", 1, 1, INT32_MAX, &v, msg, cap));
    if (c->n_head % v)
        FAIL(WF_ERR_FORMAT, "config.json: num_key_value_heads %lld does not divide num_attention_heads %d", (long long)v,
             c->n_head);
    c->n_kv_head = v == c->n_head ? 0 : (int32_t)v; /* 0: one per query head, as our default */
    v = -1;
    TRY(get_int(j, o, "head_dim", 1, 1, INT32_MAX, &v, msg, cap));
    if (v >= 0 && (c->d_model % c->n_head || v != c->d_model / c->n_head))
        FAIL(WF_ERR_UNSUPPORTED, "config.json: head_dim %lld is not hidden_size / num_attention_heads (%d / %d), "
             "the only head size wasmformer has", (long long)v, c->d_model, c->n_head);
    TRY(read_ints(j, LLAMA_INTS, COUNT(LLAMA_INTS), MAY, c, msg, cap));
    TRY(read_eps_and_tie(j, "rms_norm_eps", 1e-6f, 0, c, msg, cap));
    int32_t ignored;
    TRY(get_bool(j, o, "attention_bias", 0, &ignored, msg, cap));
    TRY(get_bool(j, o, "mlp_bias", 0, &ignored, msg, cap));
    char act[64] = "silu";
    TRY(get_str(j, o, "hidden_act", act, sizeof act, msg, cap));
    if (strcmp(act, "silu") && strcmp(act, "swish"))
        FAIL(WF_ERR_UNSUPPORTED, "config.json: hidden_act \"%s\" is not supported; wasmformer's SwiGLU gates with silu", act);
    TRY(read_llama_rope(j, &c->rope_theta, msg, cap));
    wf_hf_llama_shape(c);
    return WF_OK;
}

void wf_hf_llama_shape(wf_config *c) {
    c->arch = WF_ARCH_DECODER;
    c->norm = WF_NORM_RMSNORM;
    c->block = WF_BLOCK_PRE_LN;
    c->activation = WF_ACT_SWIGLU;
    c->positions = WF_POS_ROPE;
    c->bias = 0;
}

static wf_status read_native_config(const wf_json *j, wf_config *c, char *msg, size_t cap) {
    for (const wf_field *f = wf_config_fields; f < wf_config_fields + WF_N_CONFIG; f++) {
        char *at = (char *)c + f->offset;
        int32_t x = wf_json_get(j, 0, f->name);
        if (x == -2) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" appears twice", f->name);
        if (x < 0) continue; /* a field from after this file was written: the default */
        const wf_jnode *n = &j->nodes[x];
        int32_t iv = 0;
        if (f->kind == 'e') {
            char name[64];
            iv = n->type == WF_J_STR && wf_json_str(j, x, name, sizeof name) >= 0 ? wf_enum_value(f->names, name) : -1;
            if (iv < 0) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" is not one of the names wasmformer knows", f->name);
        } else if (f->kind == 'b') {
            if (n->type != WF_J_BOOL) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" must be true or false", f->name);
            iv = n->boolean;
        } else if (f->kind == 'f') {
            if (n->type != WF_J_NUM) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" must be a number", f->name);
            float fv = (float)n->num;
            memcpy(&iv, &fv, 4);
        } else {
            int64_t lo = f->kind == 'u' ? 0 : INT32_MIN, hi = f->kind == 'u' ? UINT32_MAX : INT32_MAX;
            if (n->type != WF_J_NUM || !n->is_int || n->ival < lo || n->ival > hi)
                FAIL(WF_ERR_FORMAT, "config.json: \"%s\" must be an integer in [%lld, %lld]", f->name, (long long)lo, (long long)hi);
            uint32_t uv = (uint32_t)n->ival;
            memcpy(&iv, &uv, 4);
        }
        memcpy(at, &iv, 4);
    }
    return WF_OK;
}

/* The config and layout a config.json describes. */
wf_status wf_hf_read_config(const char *text, size_t n, wf_config *c, int *layout, char *msg, size_t cap) {
    wf_json j;
    wf_status s = wf_json_parse(&j, text, n, "config.json", msg, cap);
    if (s == WF_OK && j.nodes[0].type != WF_J_OBJ) s = wf_fail(msg, cap, WF_ERR_FORMAT, "config.json is not a JSON object");
    int32_t mt = s == WF_OK ? wf_json_get(&j, 0, "model_type") : -1;
    char type[64] = "";
    if (s == WF_OK && (mt < 0 || j.nodes[mt].type != WF_J_STR || wf_json_str(&j, mt, type, sizeof type) < 0))
        s = wf_fail(msg, cap, WF_ERR_FORMAT, "config.json: \"model_type\" is missing or not a short string");
    wf_config_default(c);
    if (s == WF_OK) {
        if (!strcmp(type, "gpt2")) {
            *layout = WF_LAYOUT_GPT2;
            s = read_gpt2_config(&j, c, msg, cap);
        } else if (!strcmp(type, "llama")) {
            *layout = WF_LAYOUT_LLAMA;
            s = read_llama_config(&j, c, msg, cap);
        } else if (!strcmp(type, "wasmformer")) {
            *layout = WF_LAYOUT_NATIVE;
            s = read_native_config(&j, c, msg, cap);
        } else {
            s = wf_fail(msg, cap, WF_ERR_UNSUPPORTED, "config.json: model_type \"%s\" is not supported; this build reads gpt2, llama and wasmformer", type);
        }
    }
    free(j.nodes);
    return s;
}

