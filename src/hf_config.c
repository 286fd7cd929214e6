/* config.json of the Hugging Face layouts (hf.h): the writer and the readers, over one table
 * of integer members per class. */
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "hf.h"

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
/* Llama's, and GPT-NeoX's (the same keys; GPT-NeoX's max_position_embeddings defaults to 2048 too) */
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
    if (layout == WF_LAYOUT_NEOX) {
        /* rotary_pct and rotary_emb_base: the names transformers 4.x reads and 5.x still takes;
         * our dropout drops the embeddings and both sublayers' outputs, as hidden_dropout does;
         * null token ids, as for Llama (GPTNeoXConfig's 0 and 2 would stop generate() on 2) */
        static const char *const acts[] = {[WF_ACT_GELU] = "gelu_new", [WF_ACT_RELU] = "relu", [WF_ACT_RELU2] = "relu2",
                                           [WF_ACT_GELU_EXACT] = "gelu", [WF_ACT_SWIGLU] = "?"};
        char drop[32];
        wf_json_float(drop, sizeof drop, c->dropout);
        if (!strpbrk(drop, ".eE")) strcat(drop, ".0");
        wf_text_put(t, "{\n  \"architectures\": [\"GPTNeoXForCausalLM\"],\n  \"model_type\": \"gpt_neox\",\n");
        write_ints(t, LLAMA_INTS, COUNT(LLAMA_INTS), c);
        wf_text_put(t, "  \"hidden_act\": \"%s\",\n  \"layer_norm_eps\": %s,\n  \"rotary_pct\": 1.0,\n  \"rotary_emb_base\": %s,\n"
               "  \"rope_scaling\": null,\n  \"use_parallel_residual\": false,\n  \"attention_bias\": true,\n", acts[c->activation],
               eps, theta);
        wf_text_put(t, "  \"tie_word_embeddings\": %s,\n  \"hidden_dropout\": %s,\n", c->tied_head ? "true" : "false", drop);
        wf_text_put(t, "  \"attention_dropout\": 0.0,\n  \"classifier_dropout\": 0.0,\n  \"bos_token_id\": null,\n"
               "  \"eos_token_id\": null,\n  \"initializer_range\": 0.02,\n  \"use_cache\": true,\n  \"torch_dtype\": \"float32\"\n}\n");
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

/* A rotary fraction (NeoX's rotary_pct, or partial_rotary_factor) as a number. */
static wf_status read_partial(const wf_json *j, int32_t x, const char *key, double *partial, char *msg, size_t cap) {
    if (j->nodes[x].type != WF_J_NUM) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" must be a number", key);
    *partial = j->nodes[x].num;
    return WF_OK;
}

/* RoPE as the core computes it: base theta (10000 when absent), unscaled, over the whole
 * head. Llama: transformers 4.x writes rope_theta and rope_scaling (null, or {"rope_type" or
 * "type", parameters}); 5.x writes rope_parameters {"rope_type": "default", "rope_theta": ...}.
 * GPT-NeoX (partial non-NULL: the fraction of the head turned) writes rotary_emb_base and
 * rotary_pct in 4.x, rope_parameters {..., "partial_rotary_factor"} in 5.x. */
static wf_status read_rope(const wf_json *j, const char *theta_key, float *theta, double *partial, char *msg, size_t cap) {
    int32_t x = wf_json_get(j, 0, theta_key);
    if (x == -2) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" appears twice", theta_key);
    if (x >= 0) TRY(read_theta(j, x, theta_key, theta, msg, cap));
    x = partial ? wf_json_get(j, 0, "rotary_pct") : -1;
    if (x == -2) FAIL(WF_ERR_FORMAT, "config.json: \"rotary_pct\" appears twice");
    if (x >= 0) TRY(read_partial(j, x, "rotary_pct", partial, msg, cap));
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
            else if (partial && !strcmp(key, "partial_rotary_factor")) TRY(read_partial(j, c, name, partial, msg, cap));
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
    TRY(read_rope(j, "rope_theta", &c->rope_theta, NULL, msg, cap));
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

/* GPTNeoXForCausalLM, as wasmformer computes it: the sequential residual, a rotary
 * fraction of 1, biases on attention (attention_bias true; the MLP and norms always have
 * them); the rest as GPTNeoXConfig defaults it (hidden_act "gelu", the erf form). */
static wf_status read_neox_config(const wf_json *j, wf_config *c, char *msg, size_t cap) {
    const int32_t o = 0;
    TRY(read_ints(j, LLAMA_INTS, COUNT(LLAMA_INTS), NEED, c, msg, cap));
    TRY(read_ints(j, LLAMA_INTS, COUNT(LLAMA_INTS), MAY, c, msg, cap));
    TRY(read_eps_and_tie(j, "layer_norm_eps", 1e-5f, 0, c, msg, cap));
    int32_t parallel = 1, ignored;
    TRY(get_bool(j, o, "use_parallel_residual", -1, &parallel, msg, cap));
    if (parallel)
        FAIL(WF_ERR_UNSUPPORTED, "config.json: use_parallel_residual %s is not supported; wasmformer's layers add the "
             "attention and then the MLP to the residual stream, in sequence (false)",
             wf_json_get(j, o, "use_parallel_residual") < 0 ? "absent (GPTNeoXConfig's default: true)" : "true");
    TRY(get_bool(j, o, "attention_bias", 1, &ignored, msg, cap));
    char act[64] = "gelu";
    TRY(get_str(j, o, "hidden_act", act, sizeof act, msg, cap));
    if (!strcmp(act, "gelu")) c->activation = WF_ACT_GELU_EXACT;
    else if (!strcmp(act, "gelu_new") || !strcmp(act, "gelu_pytorch_tanh") || !strcmp(act, "gelu_fast")) c->activation = WF_ACT_GELU;
    else if (!strcmp(act, "relu")) c->activation = WF_ACT_RELU;
    else if (!strcmp(act, "relu2")) c->activation = WF_ACT_RELU2;
    else FAIL(WF_ERR_UNSUPPORTED, "config.json: hidden_act \"%s\" is not supported; wasmformer has gelu (erf), gelu_new "
              "(tanh), relu and relu2", act);
    double partial = 0.25; /* GPTNeoXConfig's default */
    TRY(read_rope(j, "rotary_emb_base", &c->rope_theta, &partial, msg, cap));
    int32_t x = wf_json_get(j, o, "rope_theta"); /* a newer writer's name for the base */
    if (x == -2) FAIL(WF_ERR_FORMAT, "config.json: \"rope_theta\" appears twice");
    if (x >= 0) TRY(read_theta(j, x, "rope_theta", &c->rope_theta, msg, cap));
    /* transformers turns int(head size x fraction) channels of each head */
    const int HS = c->n_head > 0 ? c->d_model / c->n_head : 0;
    if (!(partial >= 0 && partial <= 1) || (int)(HS * partial) != HS)
        FAIL(WF_ERR_UNSUPPORTED, "config.json: a rotary fraction of %g (rotary_pct or partial_rotary_factor) turns %d of "
             "each head's %d channels; wasmformer's rotary positions turn the whole head (1)", partial,
             partial >= 0 && partial <= 1 ? (int)(HS * partial) : -1, HS);
    c->dropout = 0;
    TRY(get_float(j, o, "hidden_dropout", &c->dropout, msg, cap));
    if (!(c->dropout >= 0 && c->dropout < 1)) FAIL(WF_ERR_FORMAT, "config.json: hidden_dropout must be in [0, 1)");
    c->arch = WF_ARCH_DECODER;
    c->norm = WF_NORM_LAYERNORM;
    c->block = WF_BLOCK_PRE_LN;
    c->positions = WF_POS_ROPE;
    c->bias = 1;
    return WF_OK;
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
        } else if (!strcmp(type, "gpt_neox")) {
            *layout = WF_LAYOUT_NEOX;
            s = read_neox_config(&j, c, msg, cap);
        } else if (!strcmp(type, "wasmformer")) {
            *layout = WF_LAYOUT_NATIVE;
            s = read_native_config(&j, c, msg, cap);
        } else {
            s = wf_fail(msg, cap, WF_ERR_UNSUPPORTED, "config.json: model_type \"%s\" is not supported; this build reads gpt2, llama, gpt_neox and wasmformer", type);
        }
    }
    free(j.nodes);
    return s;
}

