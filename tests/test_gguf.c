#define _GNU_SOURCE /* memmem */
/* GGUF files (src/gguf*.c): a Llama-shaped model written and read back in float32, Q8_0 and
 * Q4_0 gives the same weights, logits and generations bit for bit; its tokenizer (none: a
 * placeholder vocabulary; llama2.c's SentencePiece; a byte-level BPE tokenizer.json) comes
 * back encoding alike; and hostile files (every truncation, byte flips, absurd counts, other
 * architectures and types) are refused with a message, the model unchanged. */
#include <stdlib.h>

#include "check.h"
#include "gguf.h"
#include "model_state.h"
#include "ops.h"
#include "qsimd.h"

static wf_config llama(void) {
    wf_config c;
    wf_config_default(&c);
    c.norm = WF_NORM_RMSNORM;
    c.activation = WF_ACT_SWIGLU;
    c.positions = WF_POS_ROPE;
    c.bias = 0;
    c.vocab_size = 300;
    c.context = 32;
    c.n_layer = 2;
    c.n_head = 4;
    c.n_kv_head = 2;
    c.d_model = 64;
    c.d_ff = 96;
    c.rope_theta = 500;
    c.norm_eps = 1e-6f;
    return c;
}

static int32_t in[32], tg[32];

static float loss_of(wf_model *m) {
    float l = 0;
    CHECK_OK(forward_ids(m, in, tg, 2, 16, &l), m);
    return l;
}

static uint8_t *gguf_of(wf_model *m, const wf_tokenizer *t, int32_t *n) {
    uint8_t *buf = NULL;
    CHECK_OK(wf_model_save(m, t, WF_SAVE_GGUF, &buf, n), m);
    return buf;
}

static uint8_t *read_all(const char *path, int32_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = (int32_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)*n);
    CHECK(fread(b, 1, (size_t)*n, f) == (size_t)*n, "read %s", path);
    fclose(f);
    return b;
}

static void test_round_trip(void) {
    wf_config c = llama();
    for (int i = 0; i < 32; i++) in[i] = (i * 37 + 5) % c.vocab_size, tg[i] = (i * 11 + 1) % c.vocab_size;
    for (int tied = 0; tied < 2; tied++)
        for (int type = 0; type < 3; type++) {
            c.tied_head = tied;
            wf_model *m = wf_model_create(), *b = wf_model_create();
            CHECK_OK(wf_model_init(m, &c), m);
            CHECK_OK(wf_model_quantize(m, type), m);
            int32_t n;
            uint8_t *buf = gguf_of(m, NULL, &n);
            CHECK(n > 24 && !memcmp(buf, "GGUF", 4), "the file starts GGUF");
            wf_tokenizer *tok = wf_tokenizer_create(); /* the placeholder vocabulary reads back, byte by byte */
            CHECK_OK(wf_model_load(b, tok, buf, n), b);
            int32_t ids[16], nid = 0;
            CHECK(wf_tokenizer_encode(tok, "Hi", 2, ids, 16, &nid) == WF_OK && nid == 3 && ids[0] == 259 &&
                      ids[1] == 'H' + 3 && ids[2] == 'i' + 3,
                  "the placeholder vocabulary encodes \"Hi\" as its space and two bytes (%d ids)", nid);
            wf_tokenizer_free(tok);
            wf_config got;
            wf_model_get_config(b, &got);
            CHECK(!memcmp(&got, &c, sizeof c) || (got.seed != c.seed), "type %d tied %d: the config comes back", type, tied);
            CHECK(model_info(b).memory.params == model_info(m).memory.params, "type %d: the same weights' bytes", type);
            const float l1 = loss_of(m), l2 = loss_of(b);
            CHECK(!memcmp(&l1, &l2, sizeof l1), "type %d tied %d: loss %.9g after the round trip, %.9g before", type, tied, l2, l1);
            int32_t g1[6], g2[6];
            const wf_sampling greedy = {.temperature = 0, .top_p = 1};
            CHECK_OK(generate(m, in, 5, 6, &greedy, 1, g1), m);
            CHECK_OK(generate(b, in, 5, 6, &greedy, 1, g2), b);
            CHECK(!memcmp(g1, g2, sizeof g1), "type %d: the same generation", type);
            /* written again: the same bytes */
            int32_t n2;
            uint8_t *again = gguf_of(b, NULL, &n2);
            CHECK(n2 == n && !memcmp(again, buf, (size_t)n), "type %d tied %d: read and written again, the same file", type, tied);
            wf_buffer_free(again);
            wf_buffer_free(buf);
            wf_model_free(m);
            wf_model_free(b);
        }
}

/* Encodes alike: a text through t and through the tokenizer a GGUF file of m and t gives back. */
static void tokenizer_round_trip(const char *what, wf_tokenizer *t, wf_config c) {
    wf_model *m = wf_model_create(), *b = wf_model_create();
    wf_tokenizer *back = wf_tokenizer_create();
    CHECK_OK(wf_model_init(m, &c), m);
    int32_t n;
    uint8_t *buf = gguf_of(m, t, &n);
    CHECK_OK(wf_model_load(b, back, buf, n), b);
    static const char text[] = "It is a truth universally acknowledged, that 12 men in 1813 were <|end|> here.";
    int32_t a[256], z[256], na = 0, nz = 0;
    CHECK(wf_tokenizer_encode(t, text, (int32_t)strlen(text), a, 256, &na) == WF_OK, "%s: encode", what);
    CHECK(wf_tokenizer_encode(back, text, (int32_t)strlen(text), z, 256, &nz) == WF_OK, "%s: encode back: %s", what,
          wf_tokenizer_error(back));
    CHECK(na == nz && !memcmp(a, z, (size_t)na * 4), "%s: %d ids, back %d, differ", what, na, nz);
    wf_tokenizer_info i1, i2;
    wf_tokenizer_get_info(t, &i1);
    wf_tokenizer_get_info(back, &i2);
    CHECK(i1.vocab_size == i2.vocab_size && i1.bos == i2.bos, "%s: vocabulary %d (bos %d), back %d (bos %d)", what,
          i1.vocab_size, i1.bos, i2.vocab_size, i2.bos);
    char out[512];
    int32_t got = 0;
    CHECK(wf_tokenizer_decode(back, z, nz, out, sizeof out, &got) == WF_OK, "%s: decode", what);
    wf_buffer_free(buf);
    wf_tokenizer_free(back);
    wf_model_free(m);
    wf_model_free(b);
}

static void test_tokenizers(void) {
    wf_config c = llama();
    /* llama2.c's tokenizer.bin: a SentencePiece vocabulary (llama) */
    int32_t n = 0;
    uint8_t *bin = read_all("tests/fixtures/tokenizers/llama2c_tok.bin", &n);
    CHECK(bin != NULL, "the llama2.c tokenizer fixture (run from the repository root)");
    wf_tokenizer *t = wf_tokenizer_create();
    if (bin && wf_tokenizer_load(t, bin, n) == WF_OK) {
        c.vocab_size = tok_info(t).vocab_size;
        tokenizer_round_trip("llama vocabulary (tokenizer.bin)", t, c);
    }
    free(bin);
    wf_tokenizer_free(t);
    /* byte-level BPE tokenizer.json files (gpt2): SmolLM's pre-tokenizer (digits alone:
     * llama.cpp's "smollm") and GPT-2's */
    static const char *const files[2] = {"tests/fixtures/tokenizers/smollm.json", "tests/fixtures/tokenizers/gpt2.json"};
    for (int k = 0; k < 2; k++) {
        uint8_t *js = read_all(files[k], &n);
        CHECK(js != NULL, "%s (run from the repository root)", files[k]);
        if (!js) continue;
        t = wf_tokenizer_create();
        CHECK(wf_tokenizer_load(t, js, n) == WF_OK, "%s: %s", files[k], wf_tokenizer_error(t));
        c.vocab_size = tok_info(t).vocab_size;
        tokenizer_round_trip(files[k], t, c);
        wf_tokenizer_free(t);
        free(js);
    }
    /* a char tokenizer has no GGUF form: refused, the model unchanged */
    wf_model *m = wf_model_create();
    c = llama();
    CHECK_OK(wf_model_init(m, &c), m);
    t = wf_tokenizer_create();
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_CHAR, "abc", 3, 0) == WF_OK, "char");
    uint8_t *buf = NULL;
    CHECK(wf_model_save(m, t, WF_SAVE_GGUF, &buf, &n) == WF_ERR_UNSUPPORTED && !buf &&
              strstr(wf_model_error(m), "char tokenizer has no GGUF form"),
          "char tokenizer: %s", wf_model_error(m));
    wf_tokenizer_free(t);
    wf_model_free(m);
}

/* v rounded to bfloat16 (to nearest, ties to even): its upper 16 bits. */
static uint16_t to_bf16(float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    return (uint16_t)((u + 0x7fff + (u >> 16 & 1)) >> 16);
}

/* f32 file (data from `data` on) with every tensor rewritten as `type` (F16 or BF16): the
 * tensor infos patched in place (type, offset), the data converted, each tensor aligned. */
static uint8_t *as_half(const uint8_t *f32, int32_t n, uint32_t type, int32_t *n_out) {
    gg_file f;
    char msg[160];
    CHECK(wf_gguf_parse(f32, (size_t)n, &f, msg, sizeof msg) == WF_OK, "%s", msg);
    size_t at = f.data, size = f.data;
    for (int32_t i = 0; i < f.n_t; i++) size += f.t[i].bytes / 2 + f.alignment;
    uint8_t *out = calloc(size, 1);
    memcpy(out, f32, f.data);
    for (int32_t i = 0; i < f.n_t; i++) {
        const gg_tensor *t = &f.t[i];
        uint8_t *info = out + (t->name.p - f32) + t->name.n + 4 + 8 * t->ndim; /* past the name, ndim and dims */
        const uint64_t offset = at - f.data;
        memcpy(info, &type, 4);
        memcpy(info + 4, &offset, 8);
        for (size_t k = 0; k < t->bytes / 4; k++) {
            float v;
            memcpy(&v, f32 + f.data + t->offset + 4 * k, 4);
            const uint16_t h = type == GGML_F16 ? wf_f32_to_f16(v) : to_bf16(v);
            memcpy(out + at + 2 * k, &h, 2);
        }
        at += t->bytes / 2;
        at += (f.alignment - at % f.alignment) % f.alignment;
    }
    wf_gguf_release(&f);
    *n_out = (int32_t)at;
    return out;
}

/* F16 and BF16 tensors (llama.cpp's converter writes its --outtype f16 and bf16 so): every
 * weight the file's value exactly, widened to float32; a non-finite value is refused. */
static void test_half_types(void) {
    wf_config c = llama();
    wf_model *m = wf_model_create();
    CHECK_OK(wf_model_init(m, &c), m);
    int32_t n;
    uint8_t *f32 = gguf_of(m, NULL, &n);
    const float *w = wf_model_params(m);
    const int32_t count = param_count(m);
    for (int half = 0; half < 2; half++) {
        const uint32_t type = half ? GGML_BF16 : GGML_F16;
        const char *name = half ? "BF16" : "F16";
        int32_t nh;
        uint8_t *h = as_half(f32, n, type, &nh);
        wf_model *b = wf_model_create();
        CHECK_OK(wf_model_load(b, NULL, h, nh), b);
        const float *got = wf_model_params(b);
        int32_t same = 0, moved = 0;
        for (int32_t i = 0; got && i < count; i++) {
            const uint32_t r = (uint32_t)to_bf16(w[i]) << 16;
            float want;
            memcpy(&want, &r, 4);
            if (!half) want = wf_f16_to_f32(wf_f32_to_f16(w[i]));
            same += got[i] == want, moved += got[i] != w[i];
        }
        CHECK(got && same == count && moved > count / 2, "%s: %d of %d weights are the file's (%d rounded)", name, same, count, moved);
        /* a NaN in the first tensor's data: refused, the model as it was */
        gg_file f;
        char msg[160];
        CHECK(wf_gguf_parse(h, (size_t)nh, &f, msg, sizeof msg) == WF_OK, "%s", msg);
        state before = capture(b);
        const uint16_t nan = half ? 0x7fc0 : 0x7e00;
        memcpy(h + f.data + f.t[0].offset + 6, &nan, 2);
        wf_gguf_release(&f);
        CHECK(wf_model_load(b, NULL, h, nh) == WF_ERR_FORMAT && strstr(wf_model_error(b), "not finite"), "%s NaN: %s", name,
              wf_model_error(b));
        CHECK(unchanged(b, &before), "%s: a refused file changed the model", name);
        release(&before);
        free(h);
        wf_model_free(b);
    }
    wf_buffer_free(f32);
    wf_model_free(m);
}

static void test_hostile(void) {
    wf_config c = llama();
    c.n_layer = 1;
    wf_model *src = wf_model_create();
    CHECK_OK(wf_model_init(src, &c), src);
    CHECK_OK(wf_model_quantize(src, WF_QUANT_Q4_0), src);
    int32_t n;
    uint8_t *good = gguf_of(src, NULL, &n);
    wf_model *m = wf_model_create();
    wf_config small_c = small();
    CHECK_OK(wf_model_init(m, &small_c), m);
    state before = capture(m);
    /* every truncation */
    int refused = 0;
    for (int32_t k = 0; k < n; k += (k < 4096 ? 1 : 97)) {
        const wf_status s = wf_model_load(m, NULL, good, k);
        refused += s != WF_OK;
        CHECK(s != WF_OK && strlen(wf_model_error(m)) > 0, "a file cut at %d of %d bytes loaded", k, n);
    }
    CHECK(unchanged(m, &before), "refused truncations changed the model");
    /* byte flips: each either loads or is refused, never crashes (ASan) */
    uint8_t *bad = malloc((size_t)n);
    for (int32_t k = 0; k < n; k += 7) {
        memcpy(bad, good, (size_t)n);
        bad[k] ^= (uint8_t)(0x5a + k);
        wf_model *t = wf_model_create();
        const wf_status s = wf_model_load(t, NULL, bad, n);
        CHECK(s == WF_OK || strlen(wf_model_error(t)) > 0, "flip at %d: %s without a message", k, wf_status_string(s));
        wf_model_free(t);
    }
    /* absurd counts, another version, another architecture */
    memcpy(bad, good, (size_t)n);
    memset(bad + 8, 0xff, 8); /* tensor count 2^64 - 1 */
    CHECK(wf_model_load(m, NULL, bad, n) == WF_ERR_FORMAT && strstr(wf_model_error(m), "more than"), "%s", wf_model_error(m));
    memcpy(bad, good, (size_t)n);
    bad[4] = 9;
    CHECK(wf_model_load(m, NULL, bad, n) == WF_ERR_UNSUPPORTED && strstr(wf_model_error(m), "GGUF version 9"), "%s",
          wf_model_error(m));
    memcpy(bad, good, (size_t)n);
    uint8_t *arch = memmem(bad, (size_t)n, "llama", 5); /* general.architecture's value comes first */
    if (arch) memcpy(arch, "gemma", 5);
    CHECK(wf_model_load(m, NULL, bad, n) == WF_ERR_UNSUPPORTED && strstr(wf_model_error(m), "architecture \"gemma\""), "%s",
          wf_model_error(m));
    CHECK(unchanged(m, &before), "refused files changed the model");
    printf("hostile GGUF: %d truncations refused; flips and bad headers handled\n", refused);
    release(&before);
    free(bad);
    wf_buffer_free(good);
    wf_model_free(src);
    wf_model_free(m);
    /* what cannot be a GGUF: a GPT-2, adapters, optimizer state */
    wf_model *g = wf_model_create();
    wf_config gpt = small();
    CHECK_OK(wf_model_init(g, &gpt), g);
    uint8_t *buf = NULL;
    CHECK(wf_model_save(g, NULL, WF_SAVE_GGUF, &buf, &n) == WF_ERR_UNSUPPORTED && strstr(wf_model_error(g), "Llama-shaped"),
          "a GPT-2: %s", wf_model_error(g));
    CHECK(wf_model_save(g, NULL, WF_SAVE_GGUF | WF_SAVE_OPTIMIZER, &buf, &n) == WF_ERR_ARG, "GGUF with optimizer state");
    wf_model_free(g);
}

/* The streamed load (wf_model_load_begin/feed/end), the file in pieces of `piece` bytes. */
static wf_status load_in_pieces(wf_model *m, wf_tokenizer *t, const uint8_t *buf, int32_t n, int32_t piece) {
    wf_status s = wf_model_load_begin(m, t);
    for (int32_t at = 0; s == WF_OK && at < n; at += piece) s = wf_model_load_feed(m, buf + at, n - at < piece ? n - at : piece);
    return s == WF_OK ? wf_model_load_end(m, 1) : s;
}

/* Loaded in pieces of 1, 7, 4096 bytes and of a third of the file (pieces that straddle
 * tensors): the same weights, bit for bit, as the whole file in one piece, and the same
 * tokenizer; a stream cut short, a bad block scale mid-stream and an abandoned load leave
 * the model as it was, with the message the whole file would give. */
static void test_stream(void) {
    wf_config c = llama();
    int32_t n = 0;
    uint8_t *js = read_all("tests/fixtures/tokenizers/smollm.json", &n);
    CHECK(js != NULL, "the smollm tokenizer fixture (run from the repository root)");
    wf_tokenizer *src_tok = wf_tokenizer_create();
    CHECK(js && wf_tokenizer_load(src_tok, js, n) == WF_OK, "smollm.json");
    free(js);
    for (int type = 0; type < 3; type++) {
        c.vocab_size = type == 1 ? tok_info(src_tok).vocab_size : 300; /* Q8_0: with a header of a large vocabulary */
        wf_model *src = wf_model_create(), *whole = wf_model_create();
        CHECK_OK(wf_model_init(src, &c), src);
        CHECK_OK(wf_model_quantize(src, type), src);
        uint8_t *buf = gguf_of(src, type == 1 ? src_tok : NULL, &n);
        wf_tokenizer *tw = wf_tokenizer_create();
        CHECK_OK(wf_model_load(whole, tw, buf, n), whole);
        int32_t nw;
        uint8_t *again = gguf_of(whole, tw, &nw);
        const size_t floats = block(whole);
        const int32_t pieces[4] = {1, 7, 4096, n / 3 + 5};
        for (int k = 0; k < 4; k++) {
            if (type == 1 && pieces[k] == 1) continue; /* a byte at a time through megabytes: the small files do it */
            wf_model *m = wf_model_create();
            wf_tokenizer *t = wf_tokenizer_create();
            CHECK_OK(load_in_pieces(m, t, buf, n, pieces[k]), m);
            CHECK(block(m) == floats && !memcmp(wf_model_params(m), wf_model_params(whole), floats * sizeof(float)),
                  "type %d, pieces of %d: the float weights differ from the whole file's", type, pieces[k]);
            int32_t nb;
            uint8_t *back = gguf_of(m, t, &nb); /* the blocks and the tokenizer, as bytes */
            CHECK(nb == nw && !memcmp(back, again, (size_t)nw), "type %d, pieces of %d: written again, not the whole load's file",
                  type, pieces[k]);
            CHECK(model_info(m).origin == WF_ORIGIN_GGUF, "origin GGUF");
            wf_buffer_free(back);
            wf_tokenizer_free(t);
            wf_model_free(m);
        }
        wf_buffer_free(again);
        wf_tokenizer_free(tw);
        /* cut short: refused at the end as the whole file cut there is, the model unchanged */
        wf_model *m = wf_model_create();
        wf_config small_c = small();
        CHECK_OK(wf_model_init(m, &small_c), m);
        state before = capture(m);
        char want[256];
        for (int32_t cut = 4; cut < n; cut += cut < 64 ? 1 : n / 29 + 1) { /* (4: the magic; else not a GGUF) */
            CHECK(wf_model_load(whole, NULL, buf, cut) != WF_OK, "cut at %d loaded", cut);
            snprintf(want, sizeof want, "%s", wf_model_error(whole));
            CHECK(load_in_pieces(m, NULL, buf, cut, 7) != WF_OK && !strcmp(wf_model_error(m), want),
                  "type %d cut at %d of %d: streamed \"%s\", whole \"%s\"", type, cut, n, wf_model_error(m), want);
        }
        /* abandoned half way; the model generates meanwhile */
        CHECK_OK(wf_model_load_begin(m, NULL), m);
        CHECK(wf_model_load_begin(m, NULL) == WF_ERR_STATE, "a second load begun");
        CHECK_OK(wf_model_load_feed(m, buf, n / 2), m);
        const int32_t prompt[3] = {1, 2, 3};
        CHECK_OK(wf_model_gen_start(m, prompt, 3, 1), m);
        CHECK_OK(wf_model_load_end(m, 0), m);
        CHECK(wf_model_load_feed(m, buf, 1) == WF_ERR_STATE && wf_model_load_end(m, 1) == WF_ERR_STATE, "fed after the end");
        CHECK(unchanged(m, &before), "type %d: a refused or abandoned stream changed the model", type);
        /* the last value that is a float or a block scale (found from the end), made inf: its
         * row is refused by the feed that completes it */
        uint8_t *bad = malloc((size_t)n);
        int32_t at = -1;
        for (int32_t j = n - 4; j > n - 4096 && at < 0; j--)
            for (int f32 = 0; f32 < 2 && at < 0; f32++) {
                memcpy(bad, buf, (size_t)n);
                if (f32) bad[j] = bad[j + 1] = 0, bad[j + 2] = 0x80, bad[j + 3] = 0x7f;
                else bad[j] = 0, bad[j + 1] = 0x7c;
                if (wf_model_load(whole, NULL, bad, n) == WF_ERR_FORMAT && strstr(wf_model_error(whole), "not finite")) at = j;
            }
        CHECK(at > 0, "type %d: no value found to make inf", type);
        snprintf(want, sizeof want, "%s", wf_model_error(whole));
        /* (a file under the first try's 64 KB is gathered whole: its end refuses it) */
        wf_status st = wf_model_load_begin(m, NULL);
        if (st == WF_OK) st = wf_model_load_feed(m, bad, at);
        CHECK(st == WF_OK, "type %d: the rows before the bad one: %s", type, wf_model_error(m));
        st = wf_model_load_feed(m, bad + at, n - at);
        CHECK((n < 65536 || st != WF_OK) && (st != WF_OK || (st = wf_model_load_end(m, 1)) != WF_OK), "type %d: the bad row taken", type);
        CHECK(st == WF_ERR_FORMAT && !strcmp(wf_model_error(m), want), "type %d: a bad last row: \"%s\" (whole: \"%s\")", type,
              wf_model_error(m), want);
        CHECK(wf_model_load_end(m, 1) == WF_ERR_STATE, "the refused load is over");
        CHECK(unchanged(m, &before), "type %d: a bad row changed the model", type);
        /* a handle freed with a load under way frees it (ASan: no leak) */
        CHECK_OK(wf_model_load_begin(m, NULL), m);
        CHECK_OK(wf_model_load_feed(m, buf, n / 2), m);
        release(&before);
        free(bad);
        wf_model_free(m);
        wf_buffer_free(buf);
        wf_model_free(src);
        wf_model_free(whole);
    }
    wf_tokenizer_free(src_tok);
    printf("streamed GGUF: pieces of 1, 7, 4096 and a third of the file load the same bits\n");
}

int main(void) {
    test_round_trip();
    test_tokenizers();
    test_half_types();
    test_hostile();
    test_stream();
    return check_summary("test_gguf");
}
