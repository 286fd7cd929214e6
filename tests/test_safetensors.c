/* safetensors + config.json: Hugging Face GPT-2 and Llama files written by PyTorch import
 * with the logits PyTorch computed (tests/fixtures/gen_safetensors_fixture.py), export and
 * import round-trip exactly, and hostile files (every truncation, flipped bytes, bad JSON,
 * bad configs, shapes, dtypes, offsets, missing and extra tensors; for Llama also grouped
 * keys and values, other RoPE bases and scalings, biases) fail with a message and leave the
 * model as it was. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "fixture.h"
#include "wasmformer.h"

static size_t param_block(wf_model *m) {
    wf_tensor_info t;
    wf_model_get_tensor(m, model_info(m).n_tensors - 1, &t);
    return (size_t)t.offset + t.size;
}

/* The model's state as checkpoint bytes, to prove a failed call changed nothing. */
static uint8_t *state_of(wf_model *m, int32_t *n) {
    uint8_t *b = NULL;
    wf_model_save(m, NULL, WF_SAVE_OPTIMIZER, &b, n);
    return b;
}

static int same_state(wf_model *m, const uint8_t *before, int32_t n0) {
    int32_t n;
    uint8_t *now = state_of(m, &n);
    int same = n == n0 && !memcmp(now, before, n);
    wf_buffer_free(now);
    return same;
}

static void test_pytorch_fixtures(void) {
    const char *cases[] = {"hf_gpt2_tied", "hf_gpt2_untied_relu_f16", "hf_gpt2_model_bf16", "hf_llama_untied",
                           "hf_llama_tied_bf16"};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char path[256];
        int32_t nc = 0, ns = 0;
        snprintf(path, sizeof path, "tests/fixtures/%s/config.json", cases[c]);
        char *config = (char *)read_file(path, &nc);
        snprintf(path, sizeof path, "tests/fixtures/%s/model.safetensors", cases[c]);
        uint8_t *st = read_file(path, &ns);
        snprintf(path, sizeof path, "tests/fixtures/%s/expected.bin", cases[c]);
        fx_file fx = {0, NULL};
        int have = config && st && fx_load(path, &fx) == 0;
        CHECK(have, "%s: fixture files missing (run from the repository root)", cases[c]);
        if (!have) continue;
        /* import over an existing, different model: it is replaced */
        wf_model *m = wf_model_create();
        wf_config other;
        wf_config_default(&other);
        CHECK_OK(wf_model_init(m, &other), m);
        CHECK_OK(wf_model_import_safetensors(m, config, nc, st, ns), m);
        CHECK(model_info(m).origin == WF_ORIGIN_SAFETENSORS, "%s: origin %d", cases[c], model_info(m).origin);
        fx_entry *in = fx_get(&fx, "inputs"), *want = fx_get(&fx, "logits");
        const int B = in->dims[0], T = in->dims[1], V = want->dims[2];
        wf_config got;
        wf_model_get_config(m, &got);
        CHECK(got.vocab_size == V && got.context == T, "%s: config from config.json", cases[c]);
        CHECK_OK(forward_ids(m, in->data, NULL, B, T, NULL), m);
        const float *logits = wf_model_logits(m), *ref = want->data;
        double err = 0;
        for (size_t i = 0; i < (size_t)B * T * V; i++) err = fmax(err, fabs((double)logits[i] - ref[i]));
        printf("%s: imported logits vs PyTorch's %s forward: max abs err %.2e\n", cases[c],
               strstr(cases[c], "llama") ? "LlamaForCausalLM" : "GPT2LMHeadModel", err);
        CHECK(err < 1e-5, "%s: logits differ from PyTorch by %g", cases[c], err);
        fx_free(&fx);
        free(config);
        free(st);
        wf_model_free(m);
    }
}

static void tensor_named(wf_model *m, const char *name, wf_tensor_info *out) {
    memset(out, 0, sizeof *out);
    for (int32_t i = 0; i < model_info(m).n_tensors; i++) {
        wf_model_get_tensor(m, i, out);
        if (!strcmp(out->name, name)) return;
    }
    CHECK(0, "no tensor %s", name);
}

/* The data of tensor `name` in a float32 safetensors file, or NULL. */
static const float *tensor_data(const uint8_t *st, const char *name, int64_t *bytes) {
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | st[i];
    char key[160];
    snprintf(key, sizeof key, "\"%s\":{", name);
    const char *h = (const char *)st + 8, *at = strstr(h, key), *off = at ? strstr(at, "\"data_offsets\":[") : NULL;
    long long b0, b1;
    if (!off || off > h + hlen || sscanf(off, "\"data_offsets\":[%lld,%lld]", &b0, &b1) != 2) return NULL;
    *bytes = b1 - b0;
    return (const float *)(st + 8 + hlen + b0);
}

/* export -> import gives the same weights and config; the GPT-2 layout for GPT-2 configs,
 * GPT-NeoX's for the same with RoPE, the Llama layout for Llama-style ones, wasmformer's own
 * names for the rest */
static void test_round_trip(void) {
    struct { const char *name; int tied, bias, relu, sinusoidal, llama, neox; const char *needle; } cases[] = {
        {"gpt2 tied", 1, 1, 0, 0, 0, 0, "\"GPT2LMHeadModel\""},
        {"gpt2 untied relu", 0, 1, 1, 0, 0, 0, "\"tie_word_embeddings\": false"},
        {"no biases, sinusoidal", 1, 0, 0, 1, 0, 0, "\"model_type\": \"wasmformer\""},
        {"llama untied", 0, 0, 0, 0, 1, 0, "\"LlamaForCausalLM\""},
        {"llama tied", 1, 0, 0, 0, 1, 0, "\"tie_word_embeddings\": true"},
        {"llama-style with biases", 0, 1, 0, 0, 1, 0, "\"model_type\": \"wasmformer\""},
        {"gpt-neox tied (micro's shape)", 1, 1, 0, 0, 0, 1, "\"GPTNeoXForCausalLM\""},
        {"gpt-neox untied relu2, dropout", 0, 1, 1, 0, 0, 1, "\"use_parallel_residual\": false"},
        {"rope, layernorm, no biases", 1, 0, 0, 0, 0, 1, "\"model_type\": \"wasmformer\""},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        wf_config cfg;
        wf_config_default(&cfg);
        cfg.vocab_size = 23;
        cfg.context = 12;
        cfg.n_layer = 2;
        cfg.n_head = 2;
        cfg.d_model = 16;
        cfg.d_ff = 40;
        cfg.norm_eps = 1e-6f;
        cfg.tied_head = cases[c].tied;
        cfg.bias = cases[c].bias;
        cfg.activation = cases[c].relu ? WF_ACT_RELU : WF_ACT_GELU;
        cfg.positions = cases[c].sinusoidal ? WF_POS_SINUSOIDAL : WF_POS_LEARNED;
        if (cases[c].llama) {
            cfg.norm = WF_NORM_RMSNORM;
            cfg.activation = WF_ACT_SWIGLU;
            cfg.positions = WF_POS_ROPE;
            cfg.n_head = 4;
        }
        if (cases[c].neox) {
            cfg.positions = WF_POS_ROPE;
            cfg.n_head = 4;
            cfg.rope_theta = 5e4f;
            if (cases[c].relu) {
                cfg.activation = WF_ACT_RELU2;
                cfg.dropout = 0.125f; /* GPT-NeoX's hidden_dropout */
            }
        }
        cfg.seed = 77;
        wf_model *m = wf_model_create();
        CHECK_OK(wf_model_init(m, &cfg), m);
        uint8_t *st;
        char *config;
        int32_t ns, nc;
        CHECK_OK(wf_model_export_safetensors(m, &st, &ns, &config, &nc), m);
        CHECK(strstr(config, cases[c].needle) != NULL, "%s: config.json has %s:\n%.*s", cases[c].name, cases[c].needle, nc, config);
        uint64_t hlen = 0;
        for (int i = 7; i >= 0; i--) hlen = hlen << 8 | st[i];
        CHECK((8 + hlen) % 8 == 0, "%s: data starts 8-byte aligned", cases[c].name);
        const int native = strstr(config, "\"wasmformer\"") != NULL;
        if (cases[c].llama && !native) {
            /* Hugging Face's rows, [out, in]: layer 1's k_proj is qkvw[1] rows [C, 2C), its
             * up_proj fcw[1] rows [F, 2F); a tied head is not written */
            const int C = cfg.d_model, F = cfg.d_ff;
            wf_tensor_info qkv, fc;
            tensor_named(m, "qkvw", &qkv);
            tensor_named(m, "fcw", &fc);
            const float *w = wf_model_params(m);
            int64_t nk = 0, nu = 0, nh = 0;
            const float *k = tensor_data(st, "model.layers.1.self_attn.k_proj.weight", &nk);
            const float *u = tensor_data(st, "model.layers.1.mlp.up_proj.weight", &nu);
            CHECK(k && nk == 4LL * C * C && !memcmp(k, w + qkv.offset + (size_t)3 * C * C + (size_t)C * C, (size_t)nk),
                  "%s: k_proj is qkvw's middle rows", cases[c].name);
            CHECK(u && nu == 4LL * F * C && !memcmp(u, w + fc.offset + (size_t)2 * F * C + (size_t)F * C, (size_t)nu),
                  "%s: up_proj is fcw's second half", cases[c].name);
            CHECK((tensor_data(st, "lm_head.weight", &nh) != NULL) == !cfg.tied_head, "%s: lm_head.weight only when untied",
                  cases[c].name);
        }
        if (cases[c].neox && !native) {
            /* query_key_value holds qkvw's rows head after head: its rows [(3h + p) HS, +HS) are
             * part p's of head h, our rows [p C + h HS, +HS); so does its bias */
            const int C = cfg.d_model, HS = C / cfg.n_head;
            wf_tensor_info qkv, qkvb;
            tensor_named(m, "qkvw", &qkv);
            tensor_named(m, "qkvb", &qkvb);
            const float *w = wf_model_params(m);
            int64_t nw = 0, nb = 0, nh = 0;
            const float *fw = tensor_data(st, "gpt_neox.layers.1.attention.query_key_value.weight", &nw);
            const float *fb = tensor_data(st, "gpt_neox.layers.1.attention.query_key_value.bias", &nb);
            CHECK(fw && fb && nw == 4LL * 3 * C * C && nb == 4LL * 3 * C, "%s: query_key_value's shapes", cases[c].name);
            for (int h = 0; h < cfg.n_head; h++)
                for (int p = 0; p < 3; p++) {
                    const size_t file = (size_t)(3 * h + p) * HS, ours = (size_t)p * C + (size_t)h * HS;
                    CHECK(!memcmp(fw + file * C, w + qkv.offset + (size_t)3 * C * C + ours * C, (size_t)HS * C * 4) &&
                          !memcmp(fb + file, w + qkvb.offset + (size_t)3 * C + ours, (size_t)HS * 4),
                          "%s: head %d's part %d", cases[c].name, h, p);
                }
            CHECK((tensor_data(st, "embed_out.weight", &nh) != NULL) == !cfg.tied_head, "%s: embed_out.weight only when untied",
                  cases[c].name);
            CHECK(strstr(config, "\"rotary_emb_base\": 50000.0") && strstr(config, "\"rotary_pct\": 1.0"),
                  "%s: the rotary base and fraction:\n%s", cases[c].name, config);
        }
        wf_model *e = wf_model_create();
        CHECK_OK(wf_model_import_safetensors(e, config, nc, st, ns), e);
        wf_config back;
        wf_model_get_config(e, &back);
        if (!native) back.seed = cfg.seed; /* Hugging Face configs have no seed */
        CHECK(!memcmp(&back, &cfg, sizeof cfg), "%s: config survives", cases[c].name);
        CHECK(param_block(e) == param_block(m) &&
              !memcmp(wf_model_params(e), wf_model_params(m), param_block(m) * sizeof(float)),
              "%s: weights bit-identical", cases[c].name);
        /* export of the import: the same bytes */
        uint8_t *st2;
        char *config2;
        int32_t ns2, nc2;
        CHECK_OK(wf_model_export_safetensors(e, &st2, &ns2, &config2, &nc2), e);
        CHECK(ns2 == ns && !memcmp(st2, st, ns) && nc2 == nc && !memcmp(config2, config, nc),
              "%s: export(import(x)) == x", cases[c].name);
        wf_buffer_free(st2);
        wf_buffer_free(config2);
        wf_buffer_free(st);
        wf_buffer_free(config);
        wf_model_free(e);
        wf_model_free(m);
    }
    /* LoRA adapters: kept by wasmformer's layout, refused by a Hugging Face class's (never dropped) */
    for (int neox = 0; neox < 2; neox++) {
        wf_config cfg;
        wf_config_default(&cfg);
        cfg.n_layer = 1;
        cfg.d_model = 16;
        cfg.d_ff = 32;
        cfg.context = 8;
        cfg.positions = neox ? WF_POS_ROPE : WF_POS_SINUSOIDAL;
        cfg.lora_rank = 2;
        cfg.lora_targets = 1 | 4;
        wf_model *m = wf_model_create();
        CHECK_OK(wf_model_init(m, &cfg), m);
        uint8_t *st = NULL;
        char *config = NULL;
        int32_t ns, nc;
        wf_status s = wf_model_export_safetensors(m, &st, &ns, &config, &nc);
        if (neox) CHECK(s == WF_ERR_STATE && st == NULL && strstr(wf_model_error(m), "LoRA adapters, which a gpt_neox file"),
                        "adapters in a GPT-NeoX export: %d %s", s, wf_model_error(m));
        else CHECK(s == WF_OK && strstr(config, "\"lora_rank\": 2"), "wasmformer's layout keeps the adapters");
        wf_buffer_free(st);
        wf_buffer_free(config);
        wf_model_free(m);
    }
    wf_model *empty = wf_model_create();
    uint8_t *st = (uint8_t *)1;
    char *config = (char *)1;
    int32_t ns, nc;
    CHECK(wf_model_export_safetensors(empty, &st, &ns, &config, &nc) == WF_ERR_STATE && st == NULL && config == NULL, "empty model");
    wf_model_free(empty);
}

/* A safetensors file with another header and the same data. */
static uint8_t *with_header(const uint8_t *st, int32_t ns, const char *header, int32_t *n_out) {
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | st[i];
    size_t data = (size_t)ns - 8 - hlen, hn = strlen(header);
    uint8_t *b = malloc(8 + hn + data + 1);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)hn >> (8 * i));
    memcpy(b + 8, header, hn);
    memcpy(b + 8 + hn, st + 8 + hlen, data);
    *n_out = (int32_t)(8 + hn + data);
    return b;
}

/* The file with one more tensor: entry ("\"name\":{\"dtype\":...,\"shape\":[...]") first in the
 * header, owning k new bytes after the data. */
static uint8_t *with_tensor(const uint8_t *st, int32_t ns, const char *header, const char *entry, const uint8_t *bytes,
                            size_t k, int32_t *n_out) {
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | st[i];
    const size_t data = (size_t)ns - 8 - hlen;
    char *h = malloc(strlen(header) + strlen(entry) + 64);
    sprintf(h, "{%s,\"data_offsets\":[%zu,%zu]},%s", entry, data, data + k, header + 1);
    int32_t n;
    uint8_t *with = with_header(st, ns, h, &n), *b = malloc((size_t)n + k);
    memcpy(b, with, (size_t)n);
    memcpy(b + n, bytes, k);
    *n_out = n + (int32_t)k;
    free(with);
    free(h);
    return b;
}

/* s with the first occurrence of from replaced by to (a new string). */
static char *replace(const char *s, const char *from, const char *to) {
    const char *at = strstr(s, from);
    if (!at) return NULL;
    size_t n = strlen(s) - strlen(from) + strlen(to);
    char *out = malloc(n + 1);
    size_t k = (size_t)(at - s);
    memcpy(out, s, k);
    strcpy(out + k, to);
    strcat(out, at + strlen(from));
    return out;
}

static char last_msg[256];

static void expect(wf_model *m, const uint8_t *before, int32_t n0, const char *config, int32_t nc, const uint8_t *st,
                   int32_t ns, wf_status want, const char *needle, const char *what) {
    wf_status s = wf_model_import_safetensors(m, config, nc, st, ns);
    snprintf(last_msg, sizeof last_msg, "%s", wf_model_error(m));
    CHECK(s == want, "%s: %s, want %s (%s)", what, wf_status_string(s), wf_status_string(want), last_msg);
    CHECK(strstr(last_msg, needle) != NULL, "%s: message \"%s\" lacks \"%s\"", what, last_msg, needle);
    CHECK(same_state(m, before, n0), "%s: the model changed", what);
    if (getenv("WF_VERBOSE")) printf("  %-36s %-16s %s\n", what, wf_status_string(s), last_msg);
}

/* One hostile-input test's base: the model that must stay unchanged, and the files to edit. */
typedef struct {
    wf_model *m;
    const uint8_t *before; /* m's state (state_of) */
    int32_t n0;
    const char *config;    /* config.json, nc bytes */
    int32_t nc;
    const uint8_t *st;     /* the safetensors file, ns bytes */
    int32_t ns;
    const char *header;    /* its JSON header */
} hostile_base;

/* The safetensors file with its header's first `from` replaced by `to` is refused (expect). */
static void edit_header(const hostile_base *hb, const char *from, const char *to, wf_status want, const char *needle,
                        const char *what) {
    char *h2 = replace(hb->header, from, to);
    CHECK(h2 != NULL, "%s: \"%s\" not in the header", what, from);
    if (!h2) return;
    int32_t nb;
    uint8_t *bad = with_header(hb->st, hb->ns, h2, &nb);
    expect(hb->m, hb->before, hb->n0, hb->config, hb->nc, bad, nb, want, needle, what);
    free(bad);
    free(h2);
}

/* config.json with its first `from` replaced by `to` is refused (expect). */
static void edit_config(const hostile_base *hb, const char *from, const char *to, wf_status want, const char *needle,
                        const char *what) {
    char *c2 = replace(hb->config, from, to);
    CHECK(c2 != NULL, "%s: \"%s\" not in config.json", what, from);
    if (!c2) return;
    expect(hb->m, hb->before, hb->n0, c2, (int32_t)strlen(c2), hb->st, hb->ns, want, needle, what);
    free(c2);
}

static void test_hostile(void) {
    int32_t nc = 0, ns = 0;
    char *config = (char *)read_file("tests/fixtures/hf_gpt2_model_bf16/config.json", &nc);
    uint8_t *st = read_file("tests/fixtures/hf_gpt2_model_bf16/model.safetensors", &ns);
    CHECK(config && st, "fixture missing");
    if (!config || !st) return;
    wf_model *m = wf_model_create();
    wf_config c;
    wf_config_default(&c);
    CHECK_OK(wf_model_init(m, &c), m);
    int32_t n0;
    uint8_t *before = state_of(m, &n0);

    /* every truncation of both files */
    int refused = 0;
    for (int32_t len = 0; len < ns; len++) refused += wf_model_import_safetensors(m, config, nc, st, len) != WF_OK;
    CHECK(refused == ns, "every truncated safetensors file refused: %d of %d", refused, ns);
    refused = 0;
    for (int32_t len = 0; len < nc; len++) refused += wf_model_import_safetensors(m, config, len, st, ns) != WF_OK;
    /* a config.json cut after its closing brace is still whole: every shorter cut fails */
    int32_t last = nc;
    while (last > 0 && config[last - 1] != '}') last--;
    CHECK(refused == last, "every truncated config.json refused: %d of %d", refused, last);
    CHECK(same_state(m, before, n0), "truncations changed nothing");

    /* every byte of the safetensors file flipped: refused or loaded, never a crash, and a
     * refusal changes nothing */
    uint8_t *b = malloc(ns);
    int loaded = 0, bad_refusal = 0;
    for (int32_t i = 0; i < ns; i++) {
        memcpy(b, st, ns);
        b[i] ^= i < 8 ? 0x01 : 0x41;
        wf_model *e = wf_model_create();
        if (wf_model_import_safetensors(e, config, nc, b, ns) == WF_OK) loaded++;
        else bad_refusal += param_count(e) != 0 || strlen(wf_model_error(e)) == 0;
        wf_model_free(e);
    }
    CHECK(bad_refusal == 0, "%d refusals left a model or no message", bad_refusal);
    printf("safetensors bytes flipped: %d of %d still load (weights that stay finite), %d refused\n", loaded, ns, ns - loaded);
    free(b);

    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | st[i];
    char *header = calloc(hlen + 1, 1);
    memcpy(header, st + 8, hlen);
    uint8_t *bad;
    int32_t nb;
    char *h2;
    const hostile_base hb = {m, before, n0, config, nc, st, ns, header};
    edit_header(&hb, "\"wte.weight\":{\"dtype\":\"BF16\"", "\"wte.weight\":{\"dtype\":\"F32\"", WF_ERR_FORMAT, "bytes", "dtype disagrees with the bytes");
    edit_header(&hb, "\"wte.weight\":{\"dtype\":\"BF16\"", "\"wte.weight\":{\"dtype\":\"I16\"", WF_ERR_UNSUPPORTED, "dtype", "unsupported dtype");
    edit_header(&hb, "\"wte.weight\"", "\"wte.weight2\"", WF_ERR_FORMAT, "\"transformer.wte.weight\" is missing", "missing tensor");
    const uint8_t four[4] = {0};
    bad = with_tensor(st, ns, header, "\"extra\":{\"dtype\":\"F32\",\"shape\":[1]", four, 4, &nb);
    expect(m, before, n0, config, nc, bad, nb, WF_ERR_FORMAT, "\"extra\" is not part", "extra tensor");
    free(bad);
    /* the tensors' bytes tile the data (issue 25: aliased ranges made an 8.4 MB file a
     * 151.5M-parameter model): a second tensor on another's bytes, a gap, bytes after the last */
    edit_header(&hb, "{", "{\"extra\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},", WF_ERR_FORMAT,
                "tensors \"extra\" and \"wte.weight\" share bytes (data_offsets [0, 4] and [0, 960])", "extra tensor on another's bytes");
    {
        uint8_t eight[8] = {0};
        int32_t n1;
        uint8_t *one = with_tensor(st, ns, header, "\"extra\":{\"dtype\":\"F32\",\"shape\":[1]", eight, 8, &n1);
        char *h3 = calloc((size_t)n1, 1);
        uint64_t l3 = 0;
        for (int i = 7; i >= 0; i--) l3 = l3 << 8 | one[i];
        memcpy(h3, one + 8, l3);
        const size_t data = (size_t)ns - 8 - hlen;
        char from[64], to[64];
        snprintf(from, sizeof from, "[%zu,%zu]", data, data + 8);
        snprintf(to, sizeof to, "[%zu,%zu]", data + 4, data + 8);
        char *h4 = replace(h3, from, to);
        CHECK(h4 != NULL, "the gap's header");
        bad = with_header(one, n1, h4, &nb);
        expect(m, before, n0, config, nc, bad, nb, WF_ERR_FORMAT, "belong to no tensor (before \"extra\")", "a gap between tensors");
        free(bad);
        bad = with_header(st, ns, header, &nb);
        uint8_t *longer = realloc(bad, (size_t)nb + 4);
        memset(longer + nb, 0, 4);
        expect(m, before, n0, config, nc, longer, nb + 4, WF_ERR_FORMAT, "belong to no tensor; the format leaves no gaps",
               "bytes after the last tensor");
        free(longer);
        free(h4);
        free(h3);
        free(one);
    }
    edit_header(&hb, "{", "{\"wte.weight\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},", WF_ERR_FORMAT, "appears twice", "duplicate tensor");
    edit_header(&hb, "\"shape\":[30,16]", "\"shape\":[16,30]", WF_ERR_FORMAT, "shape [16, 30]", "transposed shape");
    edit_header(&hb, "\"shape\":[30,16]", "\"shape\":[30,16,1]", WF_ERR_FORMAT, "config.json gives", "extra dimension");
    edit_header(&hb, "\"shape\":[30,16]", "\"shape\":[3000000000,16]", WF_ERR_FORMAT, "bad shape", "dimension above int32");
    edit_header(&hb, "\"shape\":[30,16]", "\"shape\":[2147483647,2147483647,2147483647,2147483647]", WF_ERR_FORMAT, "absurdly large", "absurd shape");
    edit_header(&hb, "\"shape\":[30,16]", "\"shape\":[30,-16]", WF_ERR_FORMAT, "bad shape", "negative dimension");
    edit_header(&hb, "\"data_offsets\":[0,", "\"data_offsets\":[99999999,", WF_ERR_FORMAT, "data_offsets", "offset beyond the data");
    edit_header(&hb, "\"data_offsets\":[0,", "\"data_offsets\":[0,1,", WF_ERR_FORMAT, "data_offsets", "three offsets");
    edit_header(&hb, "{", "[", WF_ERR_FORMAT, "safetensors header", "not an object");
    /* JSON escapes are decoded: "BF\u0031\u0036" is BF16 */
    {
        h2 = replace(header, "\"dtype\":\"BF16\"", "\"dtype\":\"BF\\u0031\\u0036\"");
        bad = with_header(st, ns, h2, &nb);
        wf_model *e = wf_model_create();
        CHECK(wf_model_import_safetensors(e, config, nc, bad, nb) == WF_OK, "escaped dtype: %s", wf_model_error(e));
        wf_model_free(e);
        free(bad);
        free(h2);
    }
    /* nesting: 100 levels deep in the metadata */
    {
        char deep[1024] = "{\"__metadata__\":";
        for (int i = 0; i < 100; i++) strcat(deep, "[");
        h2 = NULL;
        bad = with_header(st, ns, deep, &nb);
        expect(m, before, n0, config, nc, bad, nb, WF_ERR_FORMAT, "nested too deeply", "deep nesting");
        free(bad);
    }
    /* the header length field beyond the file */
    b = malloc(ns);
    memcpy(b, st, ns);
    b[7] = 0x10;
    expect(m, before, n0, config, nc, b, ns, WF_ERR_FORMAT, "truncated?", "header length beyond the file");
    /* a NaN weight (bf16 0x7FC0) */
    memcpy(b, st, ns);
    b[8 + hlen] = 0xC0;
    b[8 + hlen + 1] = 0x7F;
    wf_status s = wf_model_import_safetensors(m, config, nc, b, ns);
    CHECK(s == WF_ERR_FORMAT && strstr(wf_model_error(m), "not a finite"), "NaN weight: %s", wf_model_error(m));
    CHECK(same_state(m, before, n0), "NaN weight changed the model");
    free(b);

    /* config.json */
    edit_config(&hb, "\"model_type\": \"gpt2\"", "\"model_type\": \"bert\"", WF_ERR_UNSUPPORTED, "model_type \"bert\"", "unknown model_type");
    edit_config(&hb, "\"model_type\": \"gpt2\",", "", WF_ERR_FORMAT, "model_type", "no model_type");
    edit_config(&hb, "\"activation_function\": \"gelu_new\"", "\"activation_function\": \"silu\"", WF_ERR_UNSUPPORTED, "gelu_new", "SiLU activation");
    edit_config(&hb, "\"n_head\": 2", "\"n_head\": 3", WF_ERR_FORMAT, "does not divide", "heads do not divide the width");
    edit_config(&hb, "\"n_embd\": 16", "\"n_embd\": 32", WF_ERR_FORMAT, "has shape", "width disagrees with the tensors");
    edit_config(&hb, "\"n_layer\": 1", "\"n_layer\": 1.5", WF_ERR_FORMAT, "integer", "fractional layers");
    edit_config(&hb, "\"n_layer\": 1", "\"n_layer\": 1e3", WF_ERR_FORMAT, "integer", "layers as 1e3");
    edit_config(&hb, "\"vocab_size\": 30", "\"vocab_size\": 99999999999", WF_ERR_FORMAT, "integer", "vocab beyond int32");
    edit_config(&hb, "\"vocab_size\": 30", "\"vocab_size\": 30, \"vocab_size\": 31", WF_ERR_FORMAT, "twice", "duplicate key");
    edit_config(&hb, "\"n_embd\": 16", "\"n_embd\": 65536", WF_ERR_FORMAT, "2^31", "absurd width");
    edit_config(&hb, "\"n_embd\": 16,", "", WF_ERR_FORMAT, "\"n_embd\" is missing", "missing width");
    edit_config(&hb, "\"scale_attn_weights\": true", "\"scale_attn_weights\": false", WF_ERR_UNSUPPORTED, "scale_attn_weights", "unscaled attention");
    edit_config(&hb, "{", "{\"n_head\": 2 \"x\": 1,", WF_ERR_FORMAT, "expected ','", "bad JSON");
    edit_config(&hb, "{", "{\"\\q\": 1,", WF_ERR_FORMAT, "bad escape", "bad escape");
    edit_config(&hb, "}", "} x", WF_ERR_FORMAT, "text after", "trailing text");
    /* a tied config whose file repeats a different lm_head */
    {
        const int32_t wb = 8 + (int32_t)hlen; /* wte's bytes, shifted by one value: another matrix */
        bad = with_tensor(st, ns, header, "\"lm_head.weight\":{\"dtype\":\"BF16\",\"shape\":[30,16]", st + wb + 2, 960, &nb);
        expect(m, before, n0, config, nc, bad, nb, WF_ERR_FORMAT, "differs from the embedding", "tied head that differs");
        free(bad);
    }
    CHECK(wf_model_import_safetensors(m, NULL, 0, st, ns) == WF_ERR_ARG && wf_model_import_safetensors(NULL, config, nc, st, ns) == WF_ERR_ARG,
          "NULL arguments");
    CHECK(same_state(m, before, n0), "nothing changed");
    free(header);
    free(before);
    free(config);
    free(st);
    wf_model_free(m);
}

/* The Llama layout's own refusals: each one an error with a message, the model unchanged. */
static void test_hostile_llama(void) {
    int32_t nc = 0, ns = 0;
    char *config = (char *)read_file("tests/fixtures/hf_llama_untied/config.json", &nc);
    uint8_t *st = read_file("tests/fixtures/hf_llama_untied/model.safetensors", &ns);
    CHECK(config && st, "fixture missing");
    if (!config || !st) return;
    wf_model *m = wf_model_create();
    wf_config c;
    wf_config_default(&c);
    CHECK_OK(wf_model_init(m, &c), m);
    int32_t n0;
    uint8_t *before = state_of(m, &n0);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | st[i];
    char *header = calloc(hlen + 1, 1);
    memcpy(header, st + 8, hlen);
    uint8_t *bad;
    const hostile_base hb = {m, before, n0, config, nc, st, ns, header};
    edit_header(&hb, "\"model.layers.1.mlp.up_proj.weight\"", "\"model.layers.1.mlp.up_proj.weigh\"", WF_ERR_FORMAT,
                "\"model.layers.1.mlp.up_proj.weight\" is missing", "missing up_proj");
    edit_header(&hb, "\"lm_head.weight\"", "\"lm_head.weigh\"", WF_ERR_FORMAT, "\"lm_head.weight\" is missing", "untied head missing");
    edit_header(&hb, "\"model.layers.0.mlp.gate_proj.weight\":{\"dtype\":\"F32\",\"shape\":[56,32]",
                "\"model.layers.0.mlp.gate_proj.weight\":{\"dtype\":\"F32\",\"shape\":[32,56]", WF_ERR_FORMAT,
                "has shape [32, 56]; config.json gives [56, 32]", "transposed gate_proj");
    edit_header(&hb, "\"model.layers.0.self_attn.k_proj.weight\":{\"dtype\":\"F32\",\"shape\":[32,32]",
                "\"model.layers.0.self_attn.k_proj.weight\":{\"dtype\":\"F32\",\"shape\":[8,128]", WF_ERR_FORMAT,
                "has shape [8, 128]", "k_proj of another shape");
    edit_header(&hb, "\"model.norm.weight\":{\"dtype\":\"F32\",\"shape\":[32]", "\"model.norm.weight\":{\"dtype\":\"F32\",\"shape\":[1,32]",
                WF_ERR_FORMAT, "config.json gives [32]", "norm with an extra dimension");
    {
        const uint8_t four[4] = {0};
        int32_t nb;
        uint8_t *bad = with_tensor(st, ns, header, "\"model.layers.0.self_attn.q_proj.bias\":{\"dtype\":\"F32\",\"shape\":[1]",
                                   four, 4, &nb);
        expect(m, before, n0, config, nc, bad, nb, WF_ERR_FORMAT, "is not part of a llama model", "a bias Llama has not");
        free(bad);
    }
    edit_header(&hb, "\"model.layers.0.self_attn.rotary_emb.inv_freq\":{\"dtype\":\"F32\",\"shape\":[4]",
                "\"model.layers.0.self_attn.rotary_emb.inv_freq\":{\"dtype\":\"F32\",\"shape\":[2,2]", WF_ERR_FORMAT,
                "must be 4 floats", "inv_freq of another shape");
    /* inv_freq of another base (500000), in the file's own bytes */
    {
        int64_t nf = 0;
        const float *f = tensor_data(st, "model.layers.1.self_attn.rotary_emb.inv_freq", &nf);
        CHECK(f && nf == 16, "inv_freq in the fixture");
        if (f) {
            bad = malloc(ns);
            memcpy(bad, st, ns);
            float other[4];
            for (int i = 0; i < 4; i++) other[i] = (float)pow(500000.0, -2.0 * i / 8);
            memcpy(bad + ((const uint8_t *)f - st), other, sizeof other);
            expect(m, before, n0, config, nc, bad, ns, WF_ERR_FORMAT, "the RoPE base of config.json's rope_theta",
                   "inv_freq of base 500000 under rope_theta 10000");
            free(bad);
        }
    }
    /* grouped-query attention and other RoPE bases load (tests/test_fixture.c); here the
     * tensors and inv_freq buffers of a 4-head, base-10000 file contradict the edited config */
    edit_config(&hb, "\"num_key_value_heads\": 4", "\"num_key_value_heads\": 2", WF_ERR_FORMAT, "config.json gives [16, 32]",
                "2 key/value heads in config.json, 4 in the tensors");
    edit_config(&hb, "\"num_key_value_heads\": 4", "\"num_key_value_heads\": 3", WF_ERR_FORMAT, "does not divide",
                "3 key/value heads for 4 query heads");
    edit_config(&hb, "\"rope_theta\": 10000.0", "\"rope_theta\": 500000.0", WF_ERR_FORMAT, "not 500000^(-2/8)",
                "rope_theta 500000 against inv_freq of base 10000");
    edit_config(&hb, "\"rope_theta\": 10000.0", "\"rope_theta\": -1", WF_ERR_FORMAT, "must be a positive number",
                "negative rope_theta");
    edit_config(&hb, "\"rope_theta\": 10000.0", "\"rope_theta\": \"10000\"", WF_ERR_FORMAT, "must be a number", "rope_theta as a string");
    edit_config(&hb, "\"rope_theta\": 10000.0,", "\"rope_parameters\": {\"rope_type\": \"default\", \"rope_theta\": 1e6},",
                WF_ERR_FORMAT, "not 1e+06^(-2/8)", "rope_parameters with base 1e6 against inv_freq of base 10000");
    edit_config(&hb, "\"rope_scaling\": null", "\"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.0}", WF_ERR_UNSUPPORTED,
                "rope_scaling.type \"linear\"", "linear RoPE scaling");
    edit_config(&hb, "\"rope_scaling\": null", "\"rope_scaling\": {\"rope_type\": \"default\", \"partial_rotary_factor\": 0.5}",
                WF_ERR_UNSUPPORTED, "rope_scaling.partial_rotary_factor", "partial rotary factor");
    edit_config(&hb, "\"rope_scaling\": null", "\"rope_scaling\": 2", WF_ERR_FORMAT, "object or null", "rope_scaling a number");
    edit_config(&hb, "\"attention_bias\": false", "\"attention_bias\": true", WF_ERR_UNSUPPORTED, "attention_bias", "attention biases");
    edit_config(&hb, "\"mlp_bias\": false", "\"mlp_bias\": true", WF_ERR_UNSUPPORTED, "mlp_bias", "MLP biases");
    edit_config(&hb, "\"hidden_act\": \"silu\"", "\"hidden_act\": \"gelu\"", WF_ERR_UNSUPPORTED, "hidden_act \"gelu\"", "GELU gate");
    edit_config(&hb, "{", "{\"head_dim\": 16,", WF_ERR_UNSUPPORTED, "head_dim 16", "head_dim other than C / NH");
    edit_config(&hb, "\"hidden_size\": 32", "\"hidden_size\": 48", WF_ERR_FORMAT, "has shape", "width disagrees with the tensors");
    edit_config(&hb, "\"intermediate_size\": 56,", "", WF_ERR_FORMAT, "\"intermediate_size\" is missing", "no intermediate_size");
    edit_config(&hb, "\"num_attention_heads\": 4,\n  \"num_key_value_heads\": 4", "\"num_attention_heads\": 3,\n  \"num_key_value_heads\": 3",
                WF_ERR_FORMAT, "does not divide", "heads do not divide");
    edit_config(&hb, "\"tie_word_embeddings\": false", "\"tie_word_embeddings\": true", WF_ERR_FORMAT, "differs from the embedding",
                "tied config, different head");
    edit_config(&hb, "\"model_type\": \"llama\"", "\"model_type\": \"mistral\"", WF_ERR_UNSUPPORTED, "gpt2, llama, gpt_neox and wasmformer",
                "another model_type");
    /* what Llama's defaults fill in: absent key/value heads and RoPE settings load */
    {
        char *a = replace(config, "\"num_key_value_heads\": 4,", "");
        char *b2 = a ? replace(a, "\"rope_theta\": 10000.0,", "") : NULL;
        char *c2 = b2 ? replace(b2, "\"rope_scaling\": null,", "\"rope_scaling\": {\"rope_type\": \"default\"},") : NULL;
        wf_model *e = wf_model_create();
        CHECK(c2 && wf_model_import_safetensors(e, c2, (int32_t)strlen(c2), st, ns) == WF_OK, "Llama defaults: %s", wf_model_error(e));
        wf_model_free(e);
        free(a);
        free(b2);
        free(c2);
    }
    CHECK(same_state(m, before, n0), "nothing changed");
    free(header);
    free(before);
    free(config);
    free(st);
    wf_model_free(m);
}

/* The thread count belongs to the handle (review #6): it survives wf_model_init, a
 * checkpoint load and a safetensors import, each of which swaps in a new model. */
/* The GPT-NeoX layout's own refusals (on wasmformer's committed export of micro's shape), each
 * an error with a message, the model unchanged; and what GPTNeoXConfig's defaults and
 * transformers 5.x's names give. */
static void test_hostile_neox(void) {
    int32_t nc = 0, ns = 0;
    char *config = (char *)read_file("tests/fixtures/wf_export_gpt_neox/config.json", &nc);
    uint8_t *st = read_file("tests/fixtures/wf_export_gpt_neox/model.safetensors", &ns);
    CHECK(config && st, "fixture missing");
    if (!config || !st) return;
    wf_model *m = wf_model_create();
    wf_config c;
    wf_config_default(&c);
    CHECK_OK(wf_model_init(m, &c), m);
    int32_t n0;
    uint8_t *before = state_of(m, &n0);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | st[i];
    char *header = calloc(hlen + 1, 1);
    memcpy(header, st + 8, hlen);
    const hostile_base hb = {m, before, n0, config, nc, st, ns, header};
    edit_config(&hb, "\"use_parallel_residual\": false", "\"use_parallel_residual\": true", WF_ERR_UNSUPPORTED,
                "use_parallel_residual true is not supported", "parallel residual");
    edit_config(&hb, "\"use_parallel_residual\": false,", "", WF_ERR_UNSUPPORTED, "absent (GPTNeoXConfig's default: true)",
                "parallel residual by default");
    edit_config(&hb, "\"rotary_pct\": 1.0", "\"rotary_pct\": 0.25", WF_ERR_UNSUPPORTED, "turns 2 of each head's 8 channels",
                "a quarter of the head turned");
    edit_config(&hb, "\"rotary_pct\": 1.0,", "", WF_ERR_UNSUPPORTED, "a rotary fraction of 0.25", "the class's default fraction");
    edit_config(&hb, "\"rope_scaling\": null", "\"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 2.0}", WF_ERR_UNSUPPORTED,
                "rope_scaling.type \"dynamic\"", "dynamic RoPE scaling");
    edit_config(&hb, "\"attention_bias\": true", "\"attention_bias\": false", WF_ERR_UNSUPPORTED, "attention_bias",
                "attention without biases");
    edit_config(&hb, "\"hidden_act\": \"gelu_new\"", "\"hidden_act\": \"silu\"", WF_ERR_UNSUPPORTED, "hidden_act \"silu\"",
                "another activation");
    edit_config(&hb, "\"hidden_dropout\": 0.0", "\"hidden_dropout\": 1.5", WF_ERR_FORMAT, "hidden_dropout must be in [0, 1)",
                "dropout out of range");
    edit_config(&hb, "\"rotary_emb_base\": 10000.0", "\"rotary_emb_base\": 0", WF_ERR_FORMAT, "must be a positive number",
                "a zero base");
    edit_header(&hb, "\"gpt_neox.layers.1.attention.query_key_value.bias\"", "\"gpt_neox.layers.1.attention.query_key_value.bia\"",
                WF_ERR_FORMAT, "\"gpt_neox.layers.1.attention.query_key_value.bias\" is missing", "missing qkv bias");
    {
        /* a tied config whose file repeats a different head: the embedding's bytes (data [12288,
         * 24576)) shifted by one value, as a tensor of its own (tensors may not share bytes) */
        const size_t from = 8 + (size_t)hlen + 12288 + 4;
        CHECK(from + 12288 <= (size_t)ns, "the file holds the embedding and a value past it");
        int32_t nb;
        uint8_t *bad = with_tensor(st, ns, header, "\"embed_out.weight\":{\"dtype\":\"F32\",\"shape\":[96,32]", st + from, 12288, &nb);
        expect(m, before, n0, config, nc, bad, nb, WF_ERR_FORMAT, "embed_out.weight differs from the embedding",
               "tied config, a different head");
        free(bad);
    }
    /* transformers 5.x's names for the same config, the old buffers, and GPTNeoXConfig's
     * defaults for what is absent, all load as the export */
    const char *fine[][3] = {
        {"\"rotary_pct\": 1.0,\n  \"rotary_emb_base\": 10000.0,\n  \"rope_scaling\": null,",
         "\"rope_parameters\": {\"rope_type\": \"default\", \"rope_theta\": 10000.0, \"partial_rotary_factor\": 1.0},", "5.x's rope_parameters"},
        {"\"rotary_emb_base\": 10000.0,", "\"rope_theta\": 10000.0,", "rope_theta"},
        {"\"rotary_emb_base\": 10000.0,\n  \"rope_scaling\": null,\n  \"use_parallel_residual\": false,\n  \"attention_bias\": true,",
         "\"use_parallel_residual\": false,", "defaults: base 10000, attention biases"},
    };
    for (size_t i = 0; i < sizeof fine / sizeof *fine; i++) {
        char *c2 = replace(config, fine[i][0], fine[i][1]);
        wf_model *e = wf_model_create();
        CHECK(c2 && wf_model_import_safetensors(e, c2, (int32_t)strlen(c2), st, ns) == WF_OK, "%s: %s", fine[i][2], wf_model_error(e));
        free(c2);
        wf_model_free(e);
    }
    {
        /* the buffers older transformers saved: masks and inv_freq (the base's frequencies, 4 of them) */
        int32_t n1, nb;
        const uint8_t zero[4] = {0}, *data = st + 8 + hlen;
        uint8_t *b1 = with_tensor(st, ns, header, "\"gpt_neox.layers.0.attention.masked_bias\":{\"dtype\":\"F32\",\"shape\":[]", zero, 4, &n1);
        uint64_t h1len = 0;
        for (int i = 7; i >= 0; i--) h1len = h1len << 8 | b1[i];
        char *h2 = calloc(h1len + 1, 1);
        memcpy(h2, b1 + 8, h1len);
        uint8_t *b2 = with_tensor(b1, n1, h2, "\"gpt_neox.layers.0.attention.rotary_emb.inv_freq\":{\"dtype\":\"F32\",\"shape\":[4]", data, 16, &nb);
        free(b1);
        wf_model *e = wf_model_create();
        /* its 16 bytes (the file's first weights) are not 10000^(-2i/8): refused as inv_freq, which proves it was read as one */
        CHECK(b2 && wf_model_import_safetensors(e, config, nc, b2, nb) == WF_ERR_FORMAT &&
                  strstr(wf_model_error(e), "the RoPE base"), "inv_freq is checked: %s", wf_model_error(e));
        free(b2);
        free(h2);
        wf_model_free(e);
    }
    CHECK(same_state(m, before, n0), "nothing changed");
    free(header);
    free(before);
    free(config);
    free(st);
    wf_model_free(m);
}

static void test_thread_setting(void) {
    int32_t nc = 0, ns = 0;
    char *config = (char *)read_file("tests/fixtures/hf_gpt2_tied/config.json", &nc);
    uint8_t *st = read_file("tests/fixtures/hf_gpt2_tied/model.safetensors", &ns);
    CHECK(config && st, "fixture files missing (run from the repository root)");
    wf_model *m = wf_model_create();
    wf_status s = wf_model_set_threads(m, 3);
    if (s == WF_ERR_UNSUPPORTED) {
        printf("thread setting: skipped (a build without threads)\n");
    } else if (config && st) {
        CHECK_OK(s, m);
        wf_config c;
        wf_config_default(&c);
        c.n_layer = 1;
        CHECK_OK(wf_model_init(m, &c), m);
        CHECK(model_info(m).threads == 3, "after wf_model_init: %d threads", model_info(m).threads);
        CHECK_OK(wf_model_import_safetensors(m, config, nc, st, ns), m);
        CHECK(model_info(m).threads == 3, "after wf_model_import_safetensors: %d threads", model_info(m).threads);
        uint8_t *ck;
        int32_t nk;
        CHECK_OK(wf_model_save(m, NULL, WF_SAVE_OPTIMIZER, &ck, &nk), m);
        CHECK_OK(wf_model_load(m, NULL, ck, nk), m);
        CHECK(model_info(m).threads == 3, "after wf_model_load: %d threads", model_info(m).threads);
        wf_buffer_free(ck);
    }
    wf_model_free(m);
    free(config);
    free(st);
}

int main(void) {
    test_thread_setting();
    test_pytorch_fixtures();
    test_round_trip();
    test_hostile();
    test_hostile_llama();
    test_hostile_neox();
    return check_summary("test_safetensors");
}
