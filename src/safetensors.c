/* safetensors files with a config.json, in Hugging Face layouts, so that PyTorch users load
 * wasmformer models without conversion and wasmformer loads theirs (docs/FORMATS.md).
 *
 * A layout is a table of rows: a Hugging Face tensor name (with %d for the layer), the
 * parameter it comes from, and how: one layer's slice of a stacked tensor, a part of its
 * rows (Llama's q/k/v out of our fused qkv), transposed (GPT-2's Conv1D keeps weights as
 * [in, out] where we keep [out, in]). Adding an architecture is adding a table and its
 * config.json mapping. Configs no Hugging Face class matches use the "wasmformer" layout:
 * our own tensor names and stacked shapes.
 *
 * Import is hardened like checkpoint loading: the JSON parser bounds every read and nests
 * at most 64 deep, every size is checked against the bytes present before anything is
 * allocated for the model, and the model is built aside and swapped in only when nothing
 * can fail, so a bad file leaves m as it was. */
#include <stdio.h>
#include <stdlib.h>

#include "bytes.h"
#include "config.h"
#include "model.h"

/* ---- JSON: a strict parser into a flat node array ---- */

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct {
    int type;
    int32_t first, next; /* children of arrays and objects, in order; -1 ends */
    int32_t key;         /* an object member's key (a J_STR node), else -1 */
    size_t start, len;   /* J_STR: the raw bytes between the quotes; J_NUM: the number's text */
    int has_escape;
    int boolean;
    double num;
    int is_int;          /* J_NUM without fraction or exponent, |value| < 10^18: ival is exact */
    int64_t ival;
} jnode;

typedef struct {
    const char *s;
    size_t n, pos;
    jnode *nodes;
    int32_t count, cap;
    const char *what; /* "config.json", "the safetensors header" */
    char *msg;
    size_t msg_cap;
    wf_status status;
} json;

#define JSON_MAX_DEPTH 64

static int32_t j_fail(json *j, wf_status s, const char *why) {
    if (j->status == WF_OK) {
        j->status = s;
        wf_fail(j->msg, j->msg_cap, s, "%s: %s at byte %zu", j->what, why, j->pos);
    }
    return -1;
}

static int32_t j_node(json *j, int type) {
    if (j->count == j->cap) {
        /* every node consumes at least one input byte, so count <= n + 1 */
        int64_t c = j->cap ? 2 * (int64_t)j->cap : 64;
        if (c > (int64_t)j->n + 1) c = (int64_t)j->n + 1;
        if (c > INT32_MAX || c <= j->cap) return j_fail(j, WF_ERR_FORMAT, "too many values");
        jnode *p = realloc(j->nodes, (size_t)c * sizeof(jnode));
        if (!p) return j_fail(j, WF_ERR_NOMEM, "out of memory");
        j->nodes = p;
        j->cap = (int32_t)c;
    }
    jnode *x = &j->nodes[j->count];
    memset(x, 0, sizeof *x);
    x->type = type;
    x->first = x->next = x->key = -1;
    return j->count++;
}

static void j_ws(json *j) {
    while (j->pos < j->n && (j->s[j->pos] == ' ' || j->s[j->pos] == '\t' || j->s[j->pos] == '\n' || j->s[j->pos] == '\r'))
        j->pos++;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int32_t j_string(json *j) {
    int32_t x = j_node(j, J_STR);
    if (x < 0) return -1;
    j->pos++; /* the opening quote */
    size_t start = j->pos;
    int esc = 0;
    for (;;) {
        if (j->pos >= j->n) return j_fail(j, WF_ERR_FORMAT, "unterminated string");
        unsigned char c = (unsigned char)j->s[j->pos];
        if (c == '"') break;
        if (c < 0x20) return j_fail(j, WF_ERR_FORMAT, "control character in a string");
        if (c == '\\') {
            esc = 1;
            if (j->pos + 1 >= j->n) return j_fail(j, WF_ERR_FORMAT, "unterminated escape");
            char e = j->s[j->pos + 1];
            if (e == 'u') {
                if (j->pos + 5 >= j->n) return j_fail(j, WF_ERR_FORMAT, "short \\u escape");
                for (int k = 2; k < 6; k++)
                    if (hexval(j->s[j->pos + k]) < 0) return j_fail(j, WF_ERR_FORMAT, "bad \\u escape");
                j->pos += 6;
                continue;
            }
            if (!strchr("\"\\/bfnrt", e) || e == 0) return j_fail(j, WF_ERR_FORMAT, "bad escape");
            j->pos += 2;
            continue;
        }
        j->pos++;
    }
    jnode *n = &j->nodes[x];
    n->start = start;
    n->len = j->pos - start;
    n->has_escape = esc;
    j->pos++; /* the closing quote */
    return x;
}

/* A JSON number's value without the C library (strtod follows the locale's decimal
 * separator): exact when the digits fit a double and the power of ten is exact, as in
 * every number a config holds; otherwise within a few ulps. */
static double j_decimal(const char *s, size_t n, int64_t *ival, int *is_int) {
    static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    size_t i = 0;
    int neg = 0, digits = 0;
    uint64_t mant = 0;
    int64_t e10 = 0;
    if (i < n && s[i] == '-') { neg = 1; i++; }
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        if (digits < 19) { mant = mant * 10 + (uint64_t)(s[i] - '0'); if (mant) digits++; }
        else e10++;
    }
    *is_int = 1;
    if (i < n && s[i] == '.') {
        *is_int = 0;
        for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
            if (digits < 19) { mant = mant * 10 + (uint64_t)(s[i] - '0'); if (mant) digits++; e10--; }
        }
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        *is_int = 0;
        i++;
        int eneg = 0;
        int64_t e = 0;
        if (i < n && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) if (e < 100000) e = e * 10 + (s[i] - '0');
        e10 += eneg ? -e : e;
    }
    if (*is_int) {
        *is_int = e10 == 0 && digits <= 18;
        *ival = neg ? -(int64_t)mant : (int64_t)mant;
    }
    double v;
    if (mant == 0) v = 0;
    else if (mant < (1ULL << 53) && e10 >= -22 && e10 <= 22) v = e10 >= 0 ? (double)mant * p10[e10] : (double)mant / p10[-e10];
    else if (e10 > 400) v = HUGE_VAL;
    else if (e10 < -400) v = 0;
    else v = (double)mant * pow(10.0, (double)e10);
    return neg ? -v : v;
}

static int32_t j_number(json *j) {
    int32_t x = j_node(j, J_NUM);
    if (x < 0) return -1;
    const char *s = j->s;
    size_t i = j->pos, n = j->n;
    if (i < n && s[i] == '-') i++;
    if (i >= n || s[i] < '0' || s[i] > '9') return j_fail(j, WF_ERR_FORMAT, "bad number");
    if (s[i] == '0') i++;
    else while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || s[i] < '0' || s[i] > '9') return j_fail(j, WF_ERR_FORMAT, "bad number");
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        if (i >= n || s[i] < '0' || s[i] > '9') return j_fail(j, WF_ERR_FORMAT, "bad number");
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    }
    jnode *node = &j->nodes[x];
    node->start = j->pos;
    node->len = i - j->pos;
    node->num = j_decimal(s + j->pos, i - j->pos, &node->ival, &node->is_int);
    j->pos = i;
    return x;
}

static int j_literal(json *j, const char *word) {
    size_t k = strlen(word);
    if (j->n - j->pos < k || memcmp(j->s + j->pos, word, k) != 0) return 0;
    j->pos += k;
    return 1;
}

static int32_t j_value(json *j, int depth);

/* Arrays and objects; children are linked in order. */
static int32_t j_container(json *j, int depth, int obj) {
    if (depth >= JSON_MAX_DEPTH) return j_fail(j, WF_ERR_FORMAT, "nested too deeply");
    int32_t x = j_node(j, obj ? J_OBJ : J_ARR);
    if (x < 0) return -1;
    j->pos++;
    j_ws(j);
    int32_t last = -1;
    if (j->pos < j->n && j->s[j->pos] == (obj ? '}' : ']')) {
        j->pos++;
        return x;
    }
    for (;;) {
        int32_t key = -1;
        if (obj) {
            j_ws(j);
            if (j->pos >= j->n || j->s[j->pos] != '"') return j_fail(j, WF_ERR_FORMAT, "expected a string key");
            if ((key = j_string(j)) < 0) return -1;
            j_ws(j);
            if (j->pos >= j->n || j->s[j->pos] != ':') return j_fail(j, WF_ERR_FORMAT, "expected ':'");
            j->pos++;
        }
        int32_t v = j_value(j, depth + 1);
        if (v < 0) return -1;
        j->nodes[v].key = key;
        if (last < 0) j->nodes[x].first = v;
        else j->nodes[last].next = v;
        last = v;
        j_ws(j);
        if (j->pos >= j->n) return j_fail(j, WF_ERR_FORMAT, "unterminated array or object");
        char c = j->s[j->pos++];
        if (c == ',') continue;
        if (c == (obj ? '}' : ']')) return x;
        j->pos--;
        return j_fail(j, WF_ERR_FORMAT, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int32_t j_value(json *j, int depth) {
    j_ws(j);
    if (j->pos >= j->n) return j_fail(j, WF_ERR_FORMAT, "expected a value");
    char c = j->s[j->pos];
    if (c == '{') return j_container(j, depth, 1);
    if (c == '[') return j_container(j, depth, 0);
    if (c == '"') return j_string(j);
    if (c == '-' || (c >= '0' && c <= '9')) return j_number(j);
    int32_t x;
    int truth = j_literal(j, "true");
    if (truth || j_literal(j, "false")) {
        if ((x = j_node(j, J_BOOL)) >= 0) j->nodes[x].boolean = truth;
        return x;
    }
    if (j_literal(j, "null")) return j_node(j, J_NULL);
    return j_fail(j, WF_ERR_FORMAT, "expected a value");
}

/* Parses s[0, n) as one JSON value; on failure the message is in msg. */
static wf_status j_parse(json *j, const char *s, size_t n, const char *what, char *msg, size_t cap) {
    memset(j, 0, sizeof *j);
    j->s = s;
    j->n = n;
    j->what = what;
    j->msg = msg;
    j->msg_cap = cap;
    if (j_value(j, 0) >= 0) {
        j_ws(j);
        if (j->pos != j->n) j_fail(j, WF_ERR_FORMAT, "text after the value");
    }
    return j->status;
}

/* String node x decoded into buf (NUL-terminated); its length, or -1 if cap is too small. */
static int32_t j_str(const json *j, int32_t x, char *buf, size_t cap) {
    const jnode *n = &j->nodes[x];
    const char *s = j->s + n->start;
    size_t o = 0;
    for (size_t i = 0; i < n->len;) {
        char tmp[4];
        size_t k = 1;
        if (s[i] != '\\') {
            tmp[0] = s[i++];
        } else if (s[i + 1] != 'u') {
            static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            tmp[0] = to[strchr(from, s[i + 1]) - from];
            i += 2;
        } else {
            uint32_t cp = 0;
            for (int d = 2; d < 6; d++) cp = cp * 16 + (uint32_t)hexval(s[i + d]);
            i += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF && i + 5 < n->len && s[i] == '\\' && s[i + 1] == 'u') {
                uint32_t lo = 0;
                for (int d = 2; d < 6; d++) lo = lo * 16 + (uint32_t)hexval(s[i + d]);
                if (lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                }
            }
            if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD; /* a lone surrogate */
            if (cp < 0x80) { tmp[0] = (char)cp; k = 1; }
            else if (cp < 0x800) { tmp[0] = (char)(0xC0 | cp >> 6); tmp[1] = (char)(0x80 | (cp & 0x3F)); k = 2; }
            else if (cp < 0x10000) { tmp[0] = (char)(0xE0 | cp >> 12); tmp[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); tmp[2] = (char)(0x80 | (cp & 0x3F)); k = 3; }
            else { tmp[0] = (char)(0xF0 | cp >> 18); tmp[1] = (char)(0x80 | ((cp >> 12) & 0x3F)); tmp[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); tmp[3] = (char)(0x80 | (cp & 0x3F)); k = 4; }
        }
        if (o + k + 1 > cap) return -1;
        memcpy(buf + o, tmp, k);
        o += k;
    }
    buf[o] = 0;
    return (int32_t)o;
}

static int j_str_is(const json *j, int32_t x, const char *lit) {
    char buf[256];
    return j->nodes[x].type == J_STR && j_str(j, x, buf, sizeof buf) >= 0 && !strcmp(buf, lit);
}

/* The member of object obj named key: its node, -1 if absent, -2 if it appears twice. */
static int32_t j_get(const json *j, int32_t obj, const char *key) {
    int32_t found = -1;
    for (int32_t c = j->nodes[obj].first; c >= 0; c = j->nodes[c].next) {
        if (j_str_is(j, j->nodes[c].key, key)) {
            if (found >= 0) return -2;
            found = c;
        }
    }
    return found;
}

/* ---- layouts ---- */

typedef struct {
    const char *name; /* Hugging Face name; "%d" stands for the layer */
    int param;        /* WF_P_* */
    int layered;      /* one tensor per layer: a slice of the stacked tensor */
    int part, parts;  /* rows [part R / parts, (part + 1) R / parts) of the slice's R rows */
    int transpose;    /* stored [in, out] (GPT-2's Conv1D) instead of our [out, in] */
} st_row;

/* GPT2LMHeadModel. lm_head.weight is written only when the head is untied (a tied head
 * is transformer.wte.weight, as save_pretrained writes it). */
static const st_row GPT2_ROWS[] = {
    {"transformer.wte.weight", WF_P_wte, 0, 0, 1, 0},
    {"transformer.wpe.weight", WF_P_wpe, 0, 0, 1, 0},
    {"transformer.h.%d.ln_1.weight", WF_P_ln1w, 1, 0, 1, 0},
    {"transformer.h.%d.ln_1.bias", WF_P_ln1b, 1, 0, 1, 0},
    {"transformer.h.%d.attn.c_attn.weight", WF_P_qkvw, 1, 0, 1, 1},
    {"transformer.h.%d.attn.c_attn.bias", WF_P_qkvb, 1, 0, 1, 0},
    {"transformer.h.%d.attn.c_proj.weight", WF_P_attprojw, 1, 0, 1, 1},
    {"transformer.h.%d.attn.c_proj.bias", WF_P_attprojb, 1, 0, 1, 0},
    {"transformer.h.%d.ln_2.weight", WF_P_ln2w, 1, 0, 1, 0},
    {"transformer.h.%d.ln_2.bias", WF_P_ln2b, 1, 0, 1, 0},
    {"transformer.h.%d.mlp.c_fc.weight", WF_P_fcw, 1, 0, 1, 1},
    {"transformer.h.%d.mlp.c_fc.bias", WF_P_fcb, 1, 0, 1, 0},
    {"transformer.h.%d.mlp.c_proj.weight", WF_P_fcprojw, 1, 0, 1, 1},
    {"transformer.h.%d.mlp.c_proj.bias", WF_P_fcprojb, 1, 0, 1, 0},
    {"transformer.ln_f.weight", WF_P_lnfw, 0, 0, 1, 0},
    {"transformer.ln_f.bias", WF_P_lnfb, 0, 0, 1, 0},
    {"lm_head.weight", WF_P_lm_head, 0, 0, 1, 0},
};

/* LlamaForCausalLM. Every matrix is [out, in] as ours; q/k/v and gate/up are row parts of
 * the fused qkvw and fcw (docs/ARCHITECTURES.md). lm_head.weight is written only when the
 * head is untied. */
static const st_row LLAMA_ROWS[] = {
    {"model.embed_tokens.weight", WF_P_wte, 0, 0, 1, 0},
    {"model.layers.%d.input_layernorm.weight", WF_P_ln1w, 1, 0, 1, 0},
    {"model.layers.%d.self_attn.q_proj.weight", WF_P_qkvw, 1, 0, 3, 0},
    {"model.layers.%d.self_attn.k_proj.weight", WF_P_qkvw, 1, 1, 3, 0},
    {"model.layers.%d.self_attn.v_proj.weight", WF_P_qkvw, 1, 2, 3, 0},
    {"model.layers.%d.self_attn.o_proj.weight", WF_P_attprojw, 1, 0, 1, 0},
    {"model.layers.%d.post_attention_layernorm.weight", WF_P_ln2w, 1, 0, 1, 0},
    {"model.layers.%d.mlp.gate_proj.weight", WF_P_fcw, 1, 0, 2, 0},
    {"model.layers.%d.mlp.up_proj.weight", WF_P_fcw, 1, 1, 2, 0},
    {"model.layers.%d.mlp.down_proj.weight", WF_P_fcprojw, 1, 0, 1, 0},
    {"model.norm.weight", WF_P_lnfw, 0, 0, 1, 0},
    {"lm_head.weight", WF_P_lm_head, 0, 0, 1, 0},
};

/* Our own names and stacked shapes, for configs no Hugging Face class matches. */
#define X(pname, ...) {#pname, WF_P_##pname, 0, 0, 1, 0},
static const st_row NATIVE_ROWS[] = {WF_PARAMS(X)};
#undef X

enum { LAYOUT_GPT2, LAYOUT_LLAMA, LAYOUT_NATIVE };

#define ROWS(t) t, (int)(sizeof t / sizeof *t)
typedef struct {
    const char *model_type; /* config.json's model_type */
    const st_row *rows;
    int n_rows;
    const char *optional_prefix; /* GPT2Model checkpoints name tensors without it */
    const char *embedding;       /* the token embedding's name: a tied head repeated in a state dict must equal it */
} st_layout;

static const st_layout LAYOUTS[] = {
    [LAYOUT_GPT2] = {"gpt2", ROWS(GPT2_ROWS), "transformer.", "transformer.wte.weight"},
    [LAYOUT_LLAMA] = {"llama", ROWS(LLAMA_ROWS), NULL, "model.embed_tokens.weight"},
    [LAYOUT_NATIVE] = {"wasmformer", ROWS(NATIVE_ROWS), NULL, NULL},
};
#undef ROWS

/* Decoders only: GPT-2's Pre-LN LayerNorm with biases and learned positions, or Llama's
 * Pre-LN RMSNorm, SwiGLU and RoPE without biases (head tied or not in both). */
static int layout_of(const wf_config *c) {
    if (c->arch != WF_ARCH_DECODER || c->block != WF_BLOCK_PRE_LN) return LAYOUT_NATIVE;
    if (c->norm == WF_NORM_LAYERNORM && c->positions == WF_POS_LEARNED && c->bias == 1 &&
        (c->activation == WF_ACT_GELU || c->activation == WF_ACT_RELU))
        return LAYOUT_GPT2;
    if (c->norm == WF_NORM_RMSNORM && c->positions == WF_POS_ROPE && c->bias == 0 && c->activation == WF_ACT_SWIGLU)
        return LAYOUT_LLAMA;
    return LAYOUT_NATIVE;
}

/* The shape a row gives tensor ti in the file; returns its rank. */
static int row_shape(const st_row *r, const wf_tensor_info *ti, int64_t shape[4]) {
    int nd = 0;
    for (int k = r->layered ? 1 : 0; k < ti->ndim; k++) shape[nd++] = ti->shape[k];
    if (nd == 0) shape[nd++] = 1;
    shape[0] /= r->parts;
    if (r->transpose && nd == 2) {
        int64_t t = shape[0];
        shape[0] = shape[1];
        shape[1] = t;
    }
    return nd;
}

static void row_name(const st_row *r, int layer, char *buf, size_t cap) {
    if (r->layered) snprintf(buf, cap, r->name, layer);
    else snprintf(buf, cap, "%s", r->name);
}

/* One layer's slice of tensor ti, seen as R rows of K: part `part` of `parts`. */
typedef struct {
    size_t offset; /* elements into the parameter block */
    size_t rows, cols;
} slice;

static slice slice_of(const st_row *r, const wf_tensor_info *ti, int L, int layer) {
    size_t S = (size_t)ti->size / (size_t)(r->layered ? L : 1);
    size_t R = r->layered ? (ti->ndim > 1 ? (size_t)ti->shape[1] : 1) : (size_t)ti->shape[0];
    size_t K = S / R, Rp = R / (size_t)r->parts;
    slice s = {(size_t)ti->offset + (size_t)layer * S + (size_t)r->part * Rp * K, Rp, K};
    return s;
}

/* ---- config.json ---- */

#define LLAMA_ROPE_THETA 10000.0 /* the only RoPE base the core has (src/rope.c) */

/* A float as the shortest decimal that reads back as the same float, with '.' whatever
 * the C locale's decimal separator. */
static void format_float(char *buf, size_t cap, float v) {
    for (int prec = 6; prec <= 9; prec++) {
        snprintf(buf, cap, "%.*g", prec, (double)v);
        for (char *p = buf; *p; p++)
            if (!strchr("0123456789+-eE", *p)) *p = '.';
        int64_t iv;
        int is_int;
        if ((float)j_decimal(buf, strlen(buf), &iv, &is_int) == v) return;
    }
}

typedef struct {
    char *p;
    size_t n, cap;
    int overflow;
} text;

static void put(text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void put(text *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->p + t->n, t->cap - t->n, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= t->cap - t->n) t->overflow = 1;
    else t->n += (size_t)k;
}

static void write_config(text *t, const wf_config *c, int layout) {
    char eps[32];
    format_float(eps, sizeof eps, c->norm_eps);
    if (layout == LAYOUT_GPT2) {
        put(t, "{\n  \"architectures\": [\"GPT2LMHeadModel\"],\n  \"model_type\": \"gpt2\",\n");
        put(t, "  \"vocab_size\": %d,\n  \"n_positions\": %d,\n  \"n_ctx\": %d,\n  \"n_embd\": %d,\n", c->vocab_size,
            c->context, c->context, c->d_model);
        put(t, "  \"n_layer\": %d,\n  \"n_head\": %d,\n  \"n_inner\": %d,\n", c->n_layer, c->n_head, c->d_ff);
        put(t, "  \"activation_function\": \"%s\",\n  \"layer_norm_epsilon\": %s,\n",
            c->activation == WF_ACT_RELU ? "relu" : "gelu_new", eps);
        put(t, "  \"tie_word_embeddings\": %s,\n", c->tied_head ? "true" : "false");
        put(t, "  \"scale_attn_weights\": true,\n  \"scale_attn_by_inverse_layer_idx\": false,\n"
               "  \"reorder_and_upcast_attn\": false,\n  \"add_cross_attention\": false,\n");
        put(t, "  \"resid_pdrop\": 0.0,\n  \"embd_pdrop\": 0.0,\n  \"attn_pdrop\": 0.0,\n"
               "  \"initializer_range\": 0.02,\n  \"use_cache\": true,\n  \"torch_dtype\": \"float32\"\n}\n");
        return;
    }
    if (layout == LAYOUT_LLAMA) {
        /* null token ids: Llama's defaults (1, 2) would make generate() stop on token 2 */
        put(t, "{\n  \"architectures\": [\"LlamaForCausalLM\"],\n  \"model_type\": \"llama\",\n");
        put(t, "  \"vocab_size\": %d,\n  \"max_position_embeddings\": %d,\n  \"hidden_size\": %d,\n"
               "  \"intermediate_size\": %d,\n", c->vocab_size, c->context, c->d_model, c->d_ff);
        put(t, "  \"num_hidden_layers\": %d,\n  \"num_attention_heads\": %d,\n  \"num_key_value_heads\": %d,\n"
               "  \"head_dim\": %d,\n", c->n_layer, c->n_head, c->n_head, c->d_model / c->n_head);
        put(t, "  \"hidden_act\": \"silu\",\n  \"rms_norm_eps\": %s,\n  \"rope_theta\": 10000.0,\n"
               "  \"rope_scaling\": null,\n", eps); /* LLAMA_ROPE_THETA, written without the locale */
        put(t, "  \"tie_word_embeddings\": %s,\n", c->tied_head ? "true" : "false");
        put(t, "  \"attention_bias\": false,\n  \"mlp_bias\": false,\n  \"attention_dropout\": 0.0,\n"
               "  \"pretraining_tp\": 1,\n  \"bos_token_id\": null,\n  \"eos_token_id\": null,\n"
               "  \"initializer_range\": 0.02,\n  \"use_cache\": true,\n  \"torch_dtype\": \"float32\"\n}\n");
        return;
    }
    put(t, "{\n  \"model_type\": \"wasmformer\",\n  \"wasmformer_format\": 1");
    for (const wf_field *f = wf_config_fields; f < wf_config_fields + WF_N_CONFIG; f++) {
        const char *at = (const char *)c + f->offset, *name;
        int32_t iv;
        uint32_t uv;
        float fv;
        memcpy(&iv, at, 4);
        memcpy(&uv, at, 4);
        memcpy(&fv, at, 4);
        put(t, ",\n  \"%s\": ", f->name);
        if (f->kind == 'e') {
            size_t n = wf_enum_name(f->names, iv, &name);
            put(t, "\"%.*s\"", n ? (int)n : 1, n ? name : "?");
        }
        else if (f->kind == 'b') put(t, "%s", iv ? "true" : "false");
        else if (f->kind == 'u') put(t, "%u", uv);
        else if (f->kind == 'f') { char b[32]; format_float(b, sizeof b, fv); put(t, "%s", b); }
        else put(t, "%d", iv);
    }
    put(t, "\n}\n");
}

#define FAIL(status, ...) return wf_fail(msg, cap, (status), __VA_ARGS__)

/* An integer member within [lo, hi]; absent members keep *out (when optional). */
static wf_status get_int(const json *j, int32_t obj, const char *key, int optional, int64_t lo, int64_t hi, int64_t *out,
                         char *msg, size_t cap) {
    int32_t x = j_get(j, obj, key);
    if (x == -2) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" appears twice", key);
    if (x < 0 || j->nodes[x].type == J_NULL) {
        if (optional) return WF_OK;
        FAIL(WF_ERR_FORMAT, "config.json: \"%s\" is missing", key);
    }
    if (j->nodes[x].type != J_NUM || !j->nodes[x].is_int || j->nodes[x].ival < lo || j->nodes[x].ival > hi)
        FAIL(WF_ERR_FORMAT, "config.json: \"%s\" must be an integer in [%lld, %lld]", key, (long long)lo, (long long)hi);
    *out = j->nodes[x].ival;
    return WF_OK;
}

static wf_status get_float(const json *j, int32_t obj, const char *key, float *out, char *msg, size_t cap) {
    int32_t x = j_get(j, obj, key);
    if (x == -2) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" appears twice", key);
    if (x < 0) return WF_OK;
    if (j->nodes[x].type != J_NUM) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" must be a number", key);
    *out = (float)j->nodes[x].num;
    return WF_OK;
}

/* A boolean member; absent keeps *out. want >= 0: the only value this build supports. */
static wf_status get_bool(const json *j, int32_t obj, const char *key, int want, int32_t *out, char *msg, size_t cap) {
    int32_t x = j_get(j, obj, key);
    if (x == -2) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" appears twice", key);
    if (x < 0) return WF_OK;
    if (j->nodes[x].type != J_BOOL) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" must be true or false", key);
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

static wf_status read_gpt2_config(const json *j, wf_config *c, char *msg, size_t cap) {
    int64_t v;
    const int32_t o = 0;
    TRY(get_int(j, o, "vocab_size", 0, 2, INT32_MAX, &v, msg, cap));
    c->vocab_size = (int32_t)v;
    TRY(get_int(j, o, "n_positions", 0, 1, INT32_MAX, &v, msg, cap));
    c->context = (int32_t)v;
    TRY(get_int(j, o, "n_embd", 0, 1, INT32_MAX, &v, msg, cap));
    c->d_model = (int32_t)v;
    TRY(get_int(j, o, "n_layer", 0, 1, INT32_MAX, &v, msg, cap));
    c->n_layer = (int32_t)v;
    TRY(get_int(j, o, "n_head", 0, 1, INT32_MAX, &v, msg, cap));
    c->n_head = (int32_t)v;
    v = 4 * (int64_t)c->d_model; /* GPT-2's default for a null or absent n_inner */
    TRY(get_int(j, o, "n_inner", 1, 1, INT32_MAX, &v, msg, cap));
    if (v > INT32_MAX) FAIL(WF_ERR_FORMAT, "config.json: n_inner %lld is too large", (long long)v);
    c->d_ff = (int32_t)v;
    c->norm_eps = 1e-5f;
    TRY(get_float(j, o, "layer_norm_epsilon", &c->norm_eps, msg, cap));
    c->tied_head = 1;
    TRY(get_bool(j, o, "tie_word_embeddings", -1, &c->tied_head, msg, cap));
    int32_t ignored;
    TRY(get_bool(j, o, "scale_attn_weights", 1, &ignored, msg, cap));
    TRY(get_bool(j, o, "scale_attn_by_inverse_layer_idx", 0, &ignored, msg, cap));
    TRY(get_bool(j, o, "add_cross_attention", 0, &ignored, msg, cap));
    c->activation = WF_ACT_GELU;
    int32_t x = j_get(j, o, "activation_function");
    if (x == -2) FAIL(WF_ERR_FORMAT, "config.json: \"activation_function\" appears twice");
    if (x >= 0) {
        char act[64];
        if (j->nodes[x].type != J_STR || j_str(j, x, act, sizeof act) < 0)
            FAIL(WF_ERR_FORMAT, "config.json: \"activation_function\" must be a short string");
        if (!strcmp(act, "relu")) c->activation = WF_ACT_RELU;
        else if (strcmp(act, "gelu_new") && strcmp(act, "gelu_pytorch_tanh") && strcmp(act, "gelu_fast"))
            FAIL(WF_ERR_UNSUPPORTED, "config.json: activation_function \"%s\" is not supported; "
                 "wasmformer has gelu_new (GELU, tanh approximation) and relu", act);
    }
    c->arch = WF_ARCH_DECODER;
    c->norm = WF_NORM_LAYERNORM;
    c->block = WF_BLOCK_PRE_LN;
    c->positions = WF_POS_LEARNED;
    c->bias = 1;
    return WF_OK;
}

/* A string member of at most cap_buf - 1 bytes into buf; absent keeps buf. */
static wf_status get_str(const json *j, int32_t obj, const char *key, char *buf, size_t cap_buf, char *msg, size_t cap) {
    int32_t x = j_get(j, obj, key);
    if (x == -2) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" appears twice", key);
    if (x < 0) return WF_OK;
    if (j->nodes[x].type != J_STR || j_str(j, x, buf, cap_buf) < 0)
        FAIL(WF_ERR_FORMAT, "config.json: \"%s\" must be a string of at most %zu bytes", key, cap_buf - 1);
    return WF_OK;
}

/* A RoPE base must be the core's; quoted as the file writes it. */
static wf_status check_theta(const json *j, int32_t x, const char *key, char *msg, size_t cap) {
    const jnode *n = &j->nodes[x];
    if (n->type != J_NUM) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" must be a number", key);
    if (n->num != LLAMA_ROPE_THETA)
        FAIL(WF_ERR_UNSUPPORTED, "config.json: %s %.*s is not supported; wasmformer's rotary positions use base 10000 only",
             key, (int)(n->len < 32 ? n->len : 32), j->s + n->start);
    return WF_OK;
}

/* RoPE as the core computes it: base 10000, unscaled, over the whole head. transformers 4.x
 * writes rope_theta and rope_scaling (null, or {"rope_type" or "type", parameters});
 * 5.x writes rope_parameters {"rope_type": "default", "rope_theta": ...}. */
static wf_status read_llama_rope(const json *j, char *msg, size_t cap) {
    int32_t x = j_get(j, 0, "rope_theta");
    if (x == -2) FAIL(WF_ERR_FORMAT, "config.json: \"rope_theta\" appears twice");
    if (x >= 0) TRY(check_theta(j, x, "rope_theta", msg, cap));
    static const char *const groups[] = {"rope_scaling", "rope_parameters"};
    for (int g = 0; g < 2; g++) {
        int32_t o = j_get(j, 0, groups[g]);
        if (o == -2) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" appears twice", groups[g]);
        if (o < 0 || j->nodes[o].type == J_NULL) continue;
        if (j->nodes[o].type != J_OBJ) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" must be an object or null", groups[g]);
        for (int32_t c = j->nodes[o].first; c >= 0; c = j->nodes[c].next) {
            char key[64], name[96];
            if (j_str(j, j->nodes[c].key, key, sizeof key) < 0) snprintf(key, sizeof key, "(a long key)");
            snprintf(name, sizeof name, "%s.%s", groups[g], key);
            if (!strcmp(key, "rope_theta")) TRY(check_theta(j, c, name, msg, cap));
            else if ((!strcmp(key, "rope_type") || !strcmp(key, "type")) && !j_str_is(j, c, "default")) {
                char value[64] = "?";
                if (j->nodes[c].type == J_STR && j_str(j, c, value, sizeof value) < 0) snprintf(value, sizeof value, "(long)");
                FAIL(WF_ERR_UNSUPPORTED, "config.json: %s \"%s\" is not supported; wasmformer's rotary positions are "
                     "unscaled (\"default\")", name, value);
            }
            else if (strcmp(key, "rope_type") && strcmp(key, "type"))
                FAIL(WF_ERR_UNSUPPORTED, "config.json: %s is not supported; wasmformer's rotary positions are unscaled, "
                     "base 10000, over the whole head", name);
        }
    }
    return WF_OK;
}

static wf_status read_llama_config(const json *j, wf_config *c, char *msg, size_t cap) {
    int64_t v;
    const int32_t o = 0;
    TRY(get_int(j, o, "vocab_size", 0, 2, INT32_MAX, &v, msg, cap));
    c->vocab_size = (int32_t)v;
    TRY(get_int(j, o, "hidden_size", 0, 1, INT32_MAX, &v, msg, cap));
    c->d_model = (int32_t)v;
    TRY(get_int(j, o, "intermediate_size", 0, 1, INT32_MAX, &v, msg, cap));
    c->d_ff = (int32_t)v;
    TRY(get_int(j, o, "num_hidden_layers", 0, 1, INT32_MAX, &v, msg, cap));
    c->n_layer = (int32_t)v;
    TRY(get_int(j, o, "num_attention_heads", 0, 1, INT32_MAX, &v, msg, cap));
    c->n_head = (int32_t)v;
    v = c->n_head; /* Llama's default for a null or absent num_key_value_heads */
    TRY(get_int(j, o, "num_key_value_heads", 1, 1, INT32_MAX, &v, msg, cap));
    if (v != c->n_head)
        FAIL(WF_ERR_UNSUPPORTED, "config.json: num_key_value_heads %lld differs from num_attention_heads %d: grouped-query "
             "attention is not supported (wasmformer has one key and value head per query head)", (long long)v, c->n_head);
    v = -1;
    TRY(get_int(j, o, "head_dim", 1, 1, INT32_MAX, &v, msg, cap));
    if (v >= 0 && (c->d_model % c->n_head || v != c->d_model / c->n_head))
        FAIL(WF_ERR_UNSUPPORTED, "config.json: head_dim %lld is not hidden_size / num_attention_heads (%d / %d), "
             "the only head size wasmformer has", (long long)v, c->d_model, c->n_head);
    v = 2048; /* Llama's default */
    TRY(get_int(j, o, "max_position_embeddings", 1, 1, INT32_MAX, &v, msg, cap));
    c->context = (int32_t)v;
    c->norm_eps = 1e-6f;
    TRY(get_float(j, o, "rms_norm_eps", &c->norm_eps, msg, cap));
    c->tied_head = 0;
    TRY(get_bool(j, o, "tie_word_embeddings", -1, &c->tied_head, msg, cap));
    int32_t ignored;
    TRY(get_bool(j, o, "attention_bias", 0, &ignored, msg, cap));
    TRY(get_bool(j, o, "mlp_bias", 0, &ignored, msg, cap));
    char act[64] = "silu";
    TRY(get_str(j, o, "hidden_act", act, sizeof act, msg, cap));
    if (strcmp(act, "silu") && strcmp(act, "swish"))
        FAIL(WF_ERR_UNSUPPORTED, "config.json: hidden_act \"%s\" is not supported; wasmformer's SwiGLU gates with silu", act);
    TRY(read_llama_rope(j, msg, cap));
    c->arch = WF_ARCH_DECODER;
    c->norm = WF_NORM_RMSNORM;
    c->block = WF_BLOCK_PRE_LN;
    c->activation = WF_ACT_SWIGLU;
    c->positions = WF_POS_ROPE;
    c->bias = 0;
    return WF_OK;
}

static wf_status read_native_config(const json *j, wf_config *c, char *msg, size_t cap) {
    for (const wf_field *f = wf_config_fields; f < wf_config_fields + WF_N_CONFIG; f++) {
        char *at = (char *)c + f->offset;
        int32_t x = j_get(j, 0, f->name);
        if (x == -2) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" appears twice", f->name);
        if (x < 0) continue; /* a field from after this file was written: the default */
        const jnode *n = &j->nodes[x];
        int32_t iv = 0;
        if (f->kind == 'e') {
            char name[64];
            iv = n->type == J_STR && j_str(j, x, name, sizeof name) >= 0 ? wf_enum_value(f->names, name) : -1;
            if (iv < 0) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" is not one of the names wasmformer knows", f->name);
        } else if (f->kind == 'b') {
            if (n->type != J_BOOL) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" must be true or false", f->name);
            iv = n->boolean;
        } else if (f->kind == 'f') {
            if (n->type != J_NUM) FAIL(WF_ERR_FORMAT, "config.json: \"%s\" must be a number", f->name);
            float fv = (float)n->num;
            memcpy(&iv, &fv, 4);
        } else {
            int64_t lo = f->kind == 'u' ? 0 : INT32_MIN, hi = f->kind == 'u' ? UINT32_MAX : INT32_MAX;
            if (n->type != J_NUM || !n->is_int || n->ival < lo || n->ival > hi)
                FAIL(WF_ERR_FORMAT, "config.json: \"%s\" must be an integer in [%lld, %lld]", f->name, (long long)lo, (long long)hi);
            uint32_t uv = (uint32_t)n->ival;
            memcpy(&iv, &uv, 4);
        }
        memcpy(at, &iv, 4);
    }
    return WF_OK;
}

/* The config and layout a config.json describes. */
static wf_status read_config(const char *text, size_t n, wf_config *c, int *layout, char *msg, size_t cap) {
    json j;
    wf_status s = j_parse(&j, text, n, "config.json", msg, cap);
    if (s == WF_OK && j.nodes[0].type != J_OBJ) s = wf_fail(msg, cap, WF_ERR_FORMAT, "config.json is not a JSON object");
    int32_t mt = s == WF_OK ? j_get(&j, 0, "model_type") : -1;
    char type[64] = "";
    if (s == WF_OK && (mt < 0 || j.nodes[mt].type != J_STR || j_str(&j, mt, type, sizeof type) < 0))
        s = wf_fail(msg, cap, WF_ERR_FORMAT, "config.json: \"model_type\" is missing or not a short string");
    wf_config_default(c);
    if (s == WF_OK) {
        if (!strcmp(type, "gpt2")) {
            *layout = LAYOUT_GPT2;
            s = read_gpt2_config(&j, c, msg, cap);
        } else if (!strcmp(type, "llama")) {
            *layout = LAYOUT_LLAMA;
            s = read_llama_config(&j, c, msg, cap);
        } else if (!strcmp(type, "wasmformer")) {
            *layout = LAYOUT_NATIVE;
            s = read_native_config(&j, c, msg, cap);
        } else {
            s = wf_fail(msg, cap, WF_ERR_UNSUPPORTED, "config.json: model_type \"%s\" is not supported; this build reads gpt2, llama and wasmformer", type);
        }
    }
    free(j.nodes);
    return s;
}

/* ---- the safetensors container ---- */

enum { ST_F32, ST_F16, ST_BF16, ST_F64, ST_OTHER };
static const char *const DTYPE_NAMES[] = {"F32", "F16", "BF16", "F64"};
static const size_t DTYPE_BYTES[] = {4, 2, 2, 8};

#define MAX_ST_NAME 256
#define MAX_ST_DIMS 8

typedef struct {
    char name[MAX_ST_NAME];
    int dtype;
    int ndim;
    int64_t shape[MAX_ST_DIMS];
    uint64_t elems;
    const uint8_t *data; /* inside the caller's buffer */
    int used;
} st_tensor;

typedef struct {
    st_tensor *t;
    int32_t n;
} st_file;

static int by_name(const void *a, const void *b) { return strcmp(((const st_tensor *)a)->name, ((const st_tensor *)b)->name); }

static st_tensor *st_find(st_file *f, const char *name) {
    st_tensor key;
    snprintf(key.name, sizeof key.name, "%s", name);
    return bsearch(&key, f->t, (size_t)f->n, sizeof *f->t, by_name);
}

/* Reads the header of a safetensors file: u64 header length, JSON header, data. Every
 * tensor's dtype, shape and byte range are checked against each other and the data. */
static wf_status st_parse(const uint8_t *b, size_t n, st_file *out, char *msg, size_t cap) {
    memset(out, 0, sizeof *out);
    if (n < 8) FAIL(WF_ERR_FORMAT, "the safetensors file is %zu bytes; its header length alone takes 8", n);
    wf_reader r = wf_reader_of(b, n);
    uint64_t hlen = wf_get_u64(&r);
    if (hlen > n - 8) FAIL(WF_ERR_FORMAT, "the safetensors header says it is %llu bytes but the file has %zu after it (truncated?)",
                           (unsigned long long)hlen, n - 8);
    const uint8_t *data = b + 8 + hlen;
    const size_t data_len = n - 8 - (size_t)hlen;
    json j;
    wf_status s = j_parse(&j, (const char *)b + 8, (size_t)hlen, "the safetensors header", msg, cap);
    if (s == WF_OK && j.nodes[0].type != J_OBJ) s = wf_fail(msg, cap, WF_ERR_FORMAT, "the safetensors header is not a JSON object");
    int32_t count = 0;
    for (int32_t c = s == WF_OK ? j.nodes[0].first : -1; c >= 0; c = j.nodes[c].next) count++;
    if (s == WF_OK && !(out->t = calloc((size_t)(count ? count : 1), sizeof(st_tensor))))
        s = wf_fail(msg, cap, WF_ERR_NOMEM, "out of memory reading %d tensor entries", count);
    for (int32_t c = s == WF_OK ? j.nodes[0].first : -1; c >= 0 && s == WF_OK; c = j.nodes[c].next) {
        st_tensor *t = &out->t[out->n];
        if (j_str(&j, j.nodes[c].key, t->name, sizeof t->name) < 0) {
            s = wf_fail(msg, cap, WF_ERR_FORMAT, "a tensor name in the safetensors header is longer than %d bytes", MAX_ST_NAME - 1);
            break;
        }
        if (!strcmp(t->name, "__metadata__")) continue; /* free-form strings */
        if (j.nodes[c].type != J_OBJ) {
            s = wf_fail(msg, cap, WF_ERR_FORMAT, "safetensors: entry \"%s\" is not an object", t->name);
            break;
        }
        int32_t dt = j_get(&j, c, "dtype"), sh = j_get(&j, c, "shape"), off = j_get(&j, c, "data_offsets");
        if (dt < 0 || sh < 0 || off < 0 || j.nodes[dt].type != J_STR || j.nodes[sh].type != J_ARR || j.nodes[off].type != J_ARR) {
            s = wf_fail(msg, cap, WF_ERR_FORMAT, "safetensors: tensor \"%s\" needs a dtype string, a shape array and data_offsets", t->name);
            break;
        }
        t->dtype = ST_OTHER;
        for (int k = 0; k < ST_OTHER; k++)
            if (j_str_is(&j, dt, DTYPE_NAMES[k])) t->dtype = k;
        t->elems = 1;
        for (int32_t d = j.nodes[sh].first; d >= 0 && s == WF_OK; d = j.nodes[d].next) {
            const jnode *x = &j.nodes[d];
            if (t->ndim == MAX_ST_DIMS || x->type != J_NUM || !x->is_int || x->ival < 0 || x->ival > INT32_MAX)
                s = wf_fail(msg, cap, WF_ERR_FORMAT, "safetensors: tensor \"%s\" has a bad shape", t->name);
            else if (x->ival && t->elems > (UINT64_MAX >> 4) / (uint64_t)x->ival)
                s = wf_fail(msg, cap, WF_ERR_FORMAT, "safetensors: tensor \"%s\" is absurdly large", t->name);
            else {
                t->shape[t->ndim++] = x->ival;
                t->elems *= (uint64_t)x->ival;
            }
        }
        if (s != WF_OK) break;
        int64_t o[2] = {-1, -1};
        int k = 0;
        for (int32_t d = j.nodes[off].first; d >= 0; d = j.nodes[d].next, k++)
            if (k < 2 && j.nodes[d].type == J_NUM && j.nodes[d].is_int) o[k] = j.nodes[d].ival;
        if (k != 2 || o[0] < 0 || o[1] < o[0] || (uint64_t)o[1] > data_len) {
            s = wf_fail(msg, cap, WF_ERR_FORMAT, "safetensors: tensor \"%s\": data_offsets must be [begin, end] within the %zu data bytes",
                        t->name, data_len);
            break;
        }
        if (t->dtype != ST_OTHER && (uint64_t)(o[1] - o[0]) != t->elems * DTYPE_BYTES[t->dtype]) {
            s = wf_fail(msg, cap, WF_ERR_FORMAT, "safetensors: tensor \"%s\" has %lld bytes; its shape and dtype need %llu",
                        t->name, (long long)(o[1] - o[0]), (unsigned long long)(t->elems * DTYPE_BYTES[t->dtype]));
            break;
        }
        t->data = data + o[0];
        out->n++;
    }
    free(j.nodes);
    if (s == WF_OK) {
        qsort(out->t, (size_t)out->n, sizeof *out->t, by_name);
        for (int32_t i = 1; i < out->n && s == WF_OK; i++)
            if (!strcmp(out->t[i].name, out->t[i - 1].name))
                s = wf_fail(msg, cap, WF_ERR_FORMAT, "safetensors: tensor \"%s\" appears twice", out->t[i].name);
    }
    if (s != WF_OK) {
        free(out->t);
        out->t = NULL;
    }
    return s;
}

/* Element i of a tensor's data as a float. */
static float st_get(const st_tensor *t, size_t i) {
    const uint8_t *p = t->data + i * DTYPE_BYTES[t->dtype];
    uint32_t u;
    float f;
    switch (t->dtype) {
    case ST_F32:
        u = wf_le32(p);
        memcpy(&f, &u, 4);
        return f;
    case ST_BF16:
        u = (uint32_t)(p[0] | p[1] << 8) << 16;
        memcpy(&f, &u, 4);
        return f;
    case ST_F16: {
        uint32_t h = (uint32_t)(p[0] | p[1] << 8), sign = (h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023;
        if (e == 31) u = sign | 0x7F800000u | m << 13;       /* inf, NaN */
        else if (e) u = sign | (e + 112) << 23 | m << 13;     /* normal: rebias 15 -> 127 */
        else if (!m) u = sign;                                /* zero */
        else {                                                /* subnormal: normalize */
            e = 113;
            while (!(m & 1024)) { m <<= 1; e--; }
            u = sign | e << 23 | (m & 1023) << 13;
        }
        memcpy(&f, &u, 4);
        return f;
    }
    default: {
        uint64_t v = (uint64_t)wf_le32(p) | (uint64_t)wf_le32(p + 4) << 32;
        double d;
        memcpy(&d, &v, 8);
        return (float)d;
    }
    }
}

/* ---- export ---- */

wf_status wf_safetensors_export(wf_model *m, uint8_t **st, int32_t *st_len, char **config, int32_t *config_len) {
    if (!m) return WF_ERR_ARG;
    if (!st || !st_len || !config || !config_len) return WF_ERR(m, WF_ERR_ARG, "output pointers must not be NULL");
    *st = NULL;
    *config = NULL;
    *st_len = *config_len = 0;
    if (!m->ready) return WF_ERR(m, WF_ERR_STATE, "the model has no weights yet: nothing to export");
    const int layout = layout_of(&m->cfg);
    const st_layout *lay = &LAYOUTS[layout];
    const int L = m->d.L;

    /* the header: every tensor the layout gives this config, with its byte range */
    size_t hcap = 4096 + (size_t)lay->n_rows * (size_t)L * 200, data_bytes = 0;
    text h = {malloc(hcap), 0, hcap, 0};
    if (!h.p) return WF_ERR(m, WF_ERR_NOMEM, "out of memory");
    put(&h, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (int i = 0; i < lay->n_rows; i++) {
        const st_row *r = &lay->rows[i];
        const wf_tensor_info *ti = &m->tensors[r->param];
        if (!ti->size) continue;
        for (int l = 0; l < (r->layered ? L : 1); l++) {
            char name[MAX_ST_NAME];
            int64_t shape[4];
            row_name(r, l, name, sizeof name);
            int nd = row_shape(r, ti, shape);
            slice sl = slice_of(r, ti, L, l);
            put(&h, ",\"%s\":{\"dtype\":\"F32\",\"shape\":[", name);
            for (int d = 0; d < nd; d++) put(&h, d ? ",%lld" : "%lld", (long long)shape[d]);
            put(&h, "],\"data_offsets\":[%zu,%zu]}", data_bytes, data_bytes + sl.rows * sl.cols * 4);
            data_bytes += sl.rows * sl.cols * 4;
        }
    }
    put(&h, "}");
    while (!h.overflow && (8 + h.n) % 8) put(&h, " "); /* data starts 8-byte aligned, as safetensors writes it */
    char *cfg = malloc(4096);
    text c = {cfg, 0, 4096, 0};
    if (cfg) write_config(&c, &m->cfg, layout);
    const size_t total = 8 + h.n + data_bytes;
    if (!cfg || h.overflow || c.overflow || total > INT32_MAX) {
        free(h.p);
        free(cfg);
        if (total > INT32_MAX) return WF_ERR(m, WF_ERR_UNSUPPORTED, "the safetensors file would be %.2f GB; at most 2 GB", total / 1e9);
        return WF_ERR(m, WF_ERR_NOMEM, "out of memory writing the safetensors header");
    }
    uint8_t *out = malloc(total);
    if (!out) {
        free(h.p);
        free(cfg);
        return WF_ERR(m, WF_ERR_NOMEM, "could not allocate %.1f MB for the safetensors file", total / 1e6);
    }
    wf_writer w = {out, 0};
    wf_put_u64(&w, h.n);
    wf_put(&w, h.p, h.n);
    free(h.p);
    const wf_real *params = m->arena;
    for (int i = 0; i < lay->n_rows; i++) {
        const st_row *r = &lay->rows[i];
        const wf_tensor_info *ti = &m->tensors[r->param];
        if (!ti->size) continue;
        for (int l = 0; l < (r->layered ? L : 1); l++) {
            slice sl = slice_of(r, ti, L, l);
            const wf_real *src = params + sl.offset;
            for (size_t a = 0; a < (r->transpose ? sl.cols : sl.rows); a++)
                for (size_t b2 = 0; b2 < (r->transpose ? sl.rows : sl.cols); b2++) {
                    float v = (float)(r->transpose ? src[b2 * sl.cols + a] : src[a * sl.cols + b2]);
                    wf_put_f32s(&w, &v, 1);
                }
        }
    }
    *st = out;
    *st_len = (int32_t)total;
    *config = cfg;
    *config_len = (int32_t)c.n;
    m->err[0] = 0;
    return WF_OK;
}

/* ---- import ---- */

/* Ties a layout row and layer to the file's tensor. */
typedef struct {
    const st_row *row;
    int layer;
    st_tensor *t;
} planned;

static int ends_with(const char *name, const char *tail) {
    size_t n = strlen(name), k = strlen(tail);
    return n > k && !strcmp(name + n - k, tail);
}

/* Tensors a GPT-2 file may carry that are not weights: the causal-mask buffers older
 * transformers versions saved. */
static int gpt2_buffer(const char *name) { return ends_with(name, ".attn.bias") || ends_with(name, ".attn.masked_bias"); }

/* A Llama file from transformers before 4.31 carries each layer's RoPE frequencies, which
 * the model then used instead of rope_theta's: they must be the core's, 10000^(-2i/HS)
 * (HS/2 of them), within the rounding of the dtype they were saved in. */
static wf_status llama_inv_freq(const st_tensor *t, int HS, char *msg, size_t cap) {
    if (t->dtype == ST_OTHER || t->ndim != 1 || t->shape[0] != HS / 2)
        FAIL(WF_ERR_FORMAT, "safetensors: \"%s\" must be %d floats (the head size is %d)", t->name, HS / 2, HS);
    const double rel = t->dtype == ST_BF16 ? 8e-3 : t->dtype == ST_F16 ? 1e-3 : 1e-5;
    for (int i = 0; i < HS / 2; i++) {
        double want = pow(LLAMA_ROPE_THETA, -2.0 * i / HS), got = st_get(t, (size_t)i);
        if (!(fabs(got - want) <= rel * want))
            FAIL(WF_ERR_UNSUPPORTED, "safetensors: \"%s\"[%d] is %g, not 10000^(-%d/%d): another RoPE base, which "
                 "wasmformer does not support", t->name, i, got, 2 * i, HS);
    }
    return WF_OK;
}

static wf_status plan_import(const wf_config *cfg, int layout, const wf_tensor_info *table, st_file *f, planned *plan,
                             int *n_plan, char *msg, size_t cap) {
    const st_layout *lay = &LAYOUTS[layout];
    const int L = cfg->n_layer;
    *n_plan = 0;
    for (int i = 0; i < lay->n_rows; i++) {
        const st_row *r = &lay->rows[i];
        const wf_tensor_info *ti = &table[r->param];
        if (!ti->size) continue;
        for (int l = 0; l < (r->layered ? L : 1); l++) {
            char name[MAX_ST_NAME];
            row_name(r, l, name, sizeof name);
            st_tensor *t = st_find(f, name);
            size_t pre = lay->optional_prefix ? strlen(lay->optional_prefix) : 0;
            if (!t && pre && !strncmp(name, lay->optional_prefix, pre)) t = st_find(f, name + pre);
            if (!t) FAIL(WF_ERR_FORMAT, "safetensors: tensor \"%s\" is missing (a %s model of this config has it)", name, lay->model_type);
            if (t->dtype == ST_OTHER) FAIL(WF_ERR_UNSUPPORTED, "safetensors: tensor \"%s\": dtype is not F32, F16, BF16 or F64", t->name);
            int64_t shape[4];
            int nd = row_shape(r, ti, shape);
            int same = t->ndim == nd;
            for (int d = 0; same && d < nd; d++) same = t->shape[d] == shape[d];
            if (!same) {
                char want[64], got[64];
                size_t a = 0, b = 0;
                for (int d = 0; d < nd; d++) a += (size_t)snprintf(want + a, sizeof want - a, d ? ", %lld" : "%lld", (long long)shape[d]);
                got[0] = 0;
                for (int d = 0; d < t->ndim && b < sizeof got - 24; d++) b += (size_t)snprintf(got + b, sizeof got - b, d ? ", %lld" : "%lld", (long long)t->shape[d]);
                FAIL(WF_ERR_FORMAT, "safetensors: tensor \"%s\" has shape [%s]; config.json gives [%s]", t->name, got, want);
            }
            t->used = 1;
            plan[(*n_plan)++] = (planned){r, l, t};
        }
    }
    for (int32_t i = 0; i < f->n; i++) {
        st_tensor *t = &f->t[i];
        if (t->used) continue;
        if (layout == LAYOUT_GPT2 && gpt2_buffer(t->name)) continue;
        if (layout == LAYOUT_LLAMA && ends_with(t->name, ".self_attn.rotary_emb.inv_freq")) {
            wf_status s = llama_inv_freq(t, cfg->d_model / cfg->n_head, msg, cap);
            if (s != WF_OK) return s;
            continue;
        }
        if (lay->embedding && cfg->tied_head && !strcmp(t->name, "lm_head.weight")) {
            /* a state_dict of a tied model repeats the embedding as the head: it must equal it */
            st_tensor *wte = st_find(f, lay->embedding);
            size_t pre = lay->optional_prefix ? strlen(lay->optional_prefix) : 0;
            if (!wte && pre) wte = st_find(f, lay->embedding + pre);
            int same = wte && wte->dtype != ST_OTHER && t->dtype != ST_OTHER && t->elems == wte->elems;
            for (uint64_t k = 0; same && k < t->elems; k++) same = st_get(t, k) == st_get(wte, k);
            if (!same) FAIL(WF_ERR_FORMAT, "safetensors: lm_head.weight differs from the embedding but config.json ties them");
            continue;
        }
        FAIL(WF_ERR_FORMAT, "safetensors: tensor \"%s\" is not part of a %s model of this config", t->name, lay->model_type);
    }
    for (int p = 0; p < *n_plan; p++) {
        const st_tensor *t = plan[p].t;
        for (uint64_t k = 0; k < t->elems; k++) {
            float v = st_get(t, k);
            if (!wf_finite(v)) FAIL(WF_ERR_FORMAT, "safetensors: tensor \"%s\": value %llu is not a finite float32", t->name, (unsigned long long)k);
        }
    }
    return WF_OK;
}

wf_status wf_safetensors_import(wf_model *m, const char *config, int32_t config_len, const uint8_t *st, int32_t st_len) {
    if (!m) return WF_ERR_ARG;
    if (!config || !st || config_len < 0 || st_len < 0) return WF_ERR(m, WF_ERR_ARG, "config.json and the safetensors bytes must be given");
    wf_config cfg;
    int layout = LAYOUT_NATIVE;
    char why[200];
    wf_status s = read_config(config, (size_t)config_len, &cfg, &layout, m->err, sizeof m->err);
    if (s != WF_OK) return s;
    if ((s = wf_config_check(&cfg, why, sizeof why)) != WF_OK)
        return WF_ERR(m, s == WF_ERR_UNSUPPORTED ? s : WF_ERR_FORMAT, "config.json describes an invalid model: %s", why);
    wf_tensor_info table[WF_N_PARAMS];
    if (wf_tensor_table(&cfg, table) != WF_OK) return WF_ERR(m, WF_ERR_FORMAT, "config.json describes more than 2^31 - 1 parameters");
    st_file f;
    if ((s = st_parse(st, (size_t)st_len, &f, m->err, sizeof m->err)) != WF_OK) return s;
    const int rows = LAYOUTS[layout].n_rows;
    planned *plan = malloc((size_t)rows * (size_t)cfg.n_layer * sizeof *plan);
    int n_plan = 0;
    wf_model *next = NULL;
    if (!plan) s = WF_ERR(m, WF_ERR_NOMEM, "out of memory");
    if (s == WF_OK) s = plan_import(&cfg, layout, table, &f, plan, &n_plan, m->err, sizeof m->err);
    /* every tensor is present with its shape, so the file holds at least 2 bytes per
     * parameter: the model allocated below is bounded by the input */
    if (s == WF_OK && !(next = wf_model_create())) s = WF_ERR(m, WF_ERR_NOMEM, "out of memory");
    if (s == WF_OK && (s = wf_model_init(next, &cfg)) != WF_OK) s = WF_ERR(m, s, "%s", wf_model_error(next));
    if (s == WF_OK) {
        for (int p = 0; p < n_plan; p++) {
            const st_row *r = plan[p].row;
            slice sl = slice_of(r, &next->tensors[r->param], cfg.n_layer, plan[p].layer);
            wf_real *dst = next->arena + sl.offset;
            size_t k = 0;
            for (size_t a = 0; a < (r->transpose ? sl.cols : sl.rows); a++)
                for (size_t b = 0; b < (r->transpose ? sl.rows : sl.cols); b++, k++) {
                    wf_real v = st_get(plan[p].t, k);
                    if (r->transpose) dst[b * sl.cols + a] = v;
                    else dst[a * sl.cols + b] = v;
                }
        }
        wf_model_adopt(m, next);
    }
    wf_model_free(next);
    free(plan);
    free(f.t);
    return s;
}
