/* The golden record of the native build (tests/golden/README.md): the calls record.mjs makes
 * through the JavaScript package, made here through include/wasmformer.h alone, case for
 * case and in the same order, printed as the same JSON document (same keys, same layout,
 * numbers as JavaScript writes them), so that native.json and wasm.json diff line by line.
 * Every architecture trains 50 steps on fixed data; then its losses, gradient norms,
 * learning rates, validation loss, generations or decodes and the SHA-256 of its checkpoint
 * and safetensors bytes; each case again on two threads, which must give the same record.
 * The fingerprint names the compiler, the CPU and the instruction sets the build uses:
 * native numerics depend on them (FMA), so tests/golden/check-native.mjs compares only on a
 * machine with the recorded fingerprint.
 *
 * Usage (from the repository root): build/native/golden_record > tests/golden/native.json */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h" /* include/wasmformer.h, and its info getters as values */

/* ---- the record's settings: record.mjs's, one for one ---- */
#define TEXT_PATH "data/austen/pride_and_prejudice.txt"
#define TEXT_BYTES 16384 /* the start of the novel: plain ASCII */
#define BPE_VOCAB 320
#define STEPS 50
#define CONTEXT 16 /* T of every batch */
#define DECODER_B 32
#define ENCODER_B 8
#define SEQ2SEQ_B 16
#define VAL_FRACTION 0.1f
#define EVAL_BATCHES 2
#define SAMPLER_SEED 42
#define SEQ2SEQ_SEED 3 /* Seq2Seq.train's batch sampler */
#define MSE_VOCAB 96   /* an MSE encoder's ids are unused: the default vocabulary */
#define GEN_TOKENS 48  /* 9 + 48 tokens through a window of 16: several slides */
#define WORDS 200      /* seq2seq: training pairs, then HELD held-out ones */
#define HELD 8
#define MAX_WORD 8
static const char PROMPT[] = "Elizabeth", LETTERS[] = "abcdefgh";

/* warmup, cosine decay to a constant tail (steps 46-50) and clipping that bites */
static const wf_optim OPTIM = {.lr = 3e-3f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f,
                               .warmup = 5, .decay_steps = 40, .min_lr_ratio = 0.1f, .grad_clip = 0.5f, .start = 0};

typedef enum { DECODER, ENCODER_CE, ENCODER_MSE, SEQ2SEQ } case_kind;
typedef enum { NO_TOKENIZER, CHAR, BPE, LETTERS_CHAR } tokenizer_kind;
typedef struct {
    const char *name;
    case_kind kind;           /* decoder: trains on the text; encoder_ce: next-id cross-entropy on its
                                 char ids; encoder_mse: vectors to vectors; seq2seq: string reversal */
    tokenizer_kind tokenizer; /* of the text (char, BPE), of LETTERS, or none */
    wf_config config;         /* the variant; shapes and the rest: config_of */
} golden_case;

#define VARIANT(n, b, a, p, tied, bias_, drop, seed_)                                                       \
    .norm = WF_NORM_##n, .block = WF_BLOCK_##b, .activation = WF_ACT_##a, .positions = WF_POS_##p, .tied_head = tied, \
    .bias = bias_, .dropout = drop, .seed = seed_
static const golden_case CASES[] = {
    {"gpt2", DECODER, CHAR, {VARIANT(LAYERNORM, PRE_LN, GELU, LEARNED, 1, 1, 0.0f, 11)}},
    {"llama", DECODER, BPE, {VARIANT(RMSNORM, PRE_LN, SWIGLU, ROPE, 0, 0, 0.0f, 12)}},
    {"post_ln", DECODER, CHAR, {VARIANT(LAYERNORM, POST_LN, RELU, SINUSOIDAL, 1, 1, 0.0f, 13)}},
    {"dropout", DECODER, CHAR, {VARIANT(LAYERNORM, PRE_LN, GELU, LEARNED, 1, 1, 0.1f, 14)}},
    {"encoder_ce", ENCODER_CE, CHAR, {VARIANT(RMSNORM, PRE_LN, SWIGLU, ROPE, 0, 0, 0.1f, 15)}},
    {"encoder_mse", ENCODER_MSE, NO_TOKENIZER, {VARIANT(LAYERNORM, POST_LN, GELU, SINUSOIDAL, 1, 1, 0.0f, 16)}},
    {"seq2seq", SEQ2SEQ, LETTERS_CHAR, {VARIANT(LAYERNORM, PRE_LN, GELU, LEARNED, 1, 1, 0.0f, 17), .n_enc_layer = 1, .max_beam = 4}},
};
#undef VARIANT

static char *text; /* TEXT_BYTES of the novel */

/* ---- failures: this is a test program, any failed call ends it ---- */
static void ok(wf_status s, const wf_model *m) {
    if (s == WF_OK) return;
    fprintf(stderr, "golden_record: %s: %s\n", wf_status_string(s), wf_model_error(m));
    exit(1);
}

static void tok_ok(wf_status s, const wf_tokenizer *t) {
    if (s == WF_OK) return;
    fprintf(stderr, "golden_record: %s: %s\n", wf_status_string(s), wf_tokenizer_error(t));
    exit(1);
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "golden_record: out of memory\n");
        exit(1);
    }
    return p;
}

/* ---- SHA-256 (FIPS 180-4) ---- */
#define ROR(x, n) ((x) >> (n) | (x) << (32 - (n)))
static uint32_t SHA_K[64], SHA_H0[8];

/* The constants: the first 32 bits of the fractional parts of the square roots (H0) of the
 * first 8 primes and of the cube roots (K) of the first 64. */
static void sha256_constants(void) {
    for (int n = 2, i = 0; i < 64; n++) {
        int prime = 1;
        for (int d = 2; d * d <= n; d++) prime &= n % d != 0;
        if (!prime) continue;
        long double c = cbrtl((long double)n), s = sqrtl((long double)n);
        SHA_K[i] = (uint32_t)((c - floorl(c)) * 4294967296.0L);
        if (i < 8) SHA_H0[i] = (uint32_t)((s - floorl(s)) * 4294967296.0L);
        i++;
    }
}

static void sha256_block(uint32_t h[8], const uint8_t *p) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ w[i - 15] >> 3;
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ w[i - 2] >> 10;
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = k + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + SHA_K[i] + w[i];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

/* SHA-256 of data[0, n) as 64 hex digits and a NUL. */
static void sha256_hex(const void *data, size_t n, char hex[65]) {
    const uint8_t *p = data;
    uint32_t h[8];
    memcpy(h, SHA_H0, sizeof h);
    size_t full = n / 64 * 64;
    for (size_t i = 0; i < full; i += 64) sha256_block(h, p + i);
    uint8_t tail[128] = {0}; /* the rest, 0x80, zeros, the length in bits (big-endian) */
    size_t r = n - full, len = r + 9 <= 64 ? 64 : 128;
    memcpy(tail, p + full, r);
    tail[r] = 0x80;
    for (int i = 0; i < 8; i++) tail[len - 1 - i] = (uint8_t)((uint64_t)n * 8 >> (8 * i));
    for (size_t i = 0; i < len; i += 64) sha256_block(h, tail + i);
    for (int i = 0; i < 8; i++) snprintf(hex + 8 * i, 9, "%08x", h[i]);
}

/* ---- the JSON document, laid out as record.mjs's format() lays it out ---- */
typedef struct {
    char *p; /* NUL-terminated */
    size_t n, cap;
    int depth, items[8]; /* nesting, and the members written so far at each level */
} out;

static void put(out *o, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (o->n + (size_t)k + 1 > o->cap) {
        o->cap = 2 * (o->n + (size_t)k + 1);
        o->p = realloc(o->p, o->cap);
        if (!o->p) exit(1);
    }
    va_start(ap, fmt);
    vsnprintf(o->p + o->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    o->n += (size_t)k;
}

static void item(out *o) { /* the separator and indentation before a member */
    if (o->depth == 0) return;
    put(o, "%s%*s", o->items[o->depth]++ ? ",\n" : "\n", 2 * o->depth, "");
}
static void key(out *o, const char *k) { item(o), put(o, "\"%s\": ", k); }
static void begin(out *o, const char *k, char bracket) { /* k NULL: an array element */
    if (k) key(o, k);
    else item(o);
    put(o, "%c", bracket);
    o->items[++o->depth] = 0;
}
static void end(out *o, char bracket) {
    o->depth--;
    put(o, "\n%*s%c", 2 * o->depth, "", bracket);
}

/* v as JavaScript writes a number: the shortest decimal that reads back as the same double
 * (as_float: as the same float, then written as that decimal), in JavaScript's notation. */
static void put_number(out *o, double v, int as_float) {
    if (!isfinite(v)) { put(o, "null"); return; }
    if (v == 0) { put(o, "0"); return; }
    char buf[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, v);
        double back = strtod(buf, NULL); /* as Number(x.toPrecision(p)), then Math.fround */
        if (as_float ? (float)back == (float)v : back == v) break;
    }
    const char *s = buf;
    if (*s == '-') put(o, "-"), s++;
    char d[20]; /* the digits, without trailing zeros; the point sits after n of them */
    int k = 0;
    for (; *s != 'e'; s++)
        if (*s != '.') d[k++] = *s;
    int n = atoi(s + 1) + 1;
    while (k > 1 && d[k - 1] == '0') k--;
    d[k] = 0;
    if (k <= n && n <= 21) put(o, "%s%.*s", d, n - k, "000000000000000000000");
    else if (0 < n && n <= 21) put(o, "%.*s.%s", n, d, d + n);
    else if (-6 < n && n <= 0) put(o, "0.%.*s%s", -n, "00000", d);
    else put(o, "%c%s%se%c%d", d[0], k > 1 ? "." : "", d + 1, n - 1 < 0 ? '-' : '+', abs(n - 1));
}

/* s[0, n) as JSON.stringify writes the string TextDecoder makes of these bytes: each
 * invalid UTF-8 sequence becomes U+FFFD (the WHATWG decoder's rule), then the escapes. */
static void put_string(out *o, const char *s, size_t n) {
    put(o, "\"");
    for (size_t i = 0; i < n;) {
        unsigned c = (unsigned char)s[i];
        if (c < 0x80) {
            const char *esc = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\b' ? "\\b" : c == '\f' ? "\\f"
                              : c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
            if (esc) put(o, "%s", esc);
            else if (c < 0x20) put(o, "\\u%04x", c);
            else put(o, "%c", c);
            i++;
            continue;
        }
        int need = c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : 0;
        unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80, hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
        size_t j = i + 1;
        for (int k = 0; k < need && j < n && (unsigned char)s[j] >= lo && (unsigned char)s[j] <= hi; k++, j++)
            lo = 0x80, hi = 0xBF;
        if (need && j == i + 1 + (size_t)need) put(o, "%.*s", need + 1, s + i);
        else put(o, "\xEF\xBF\xBD"); /* and the byte that broke the sequence starts the next */
        i = j;
    }
    put(o, "\"");
}

static void put_sha(out *o, const char *k, const void *data, size_t n) {
    char hex[65];
    sha256_hex(data, n, hex);
    key(o, k), put(o, "\"%s\"", hex);
}

static void put_floats(out *o, const char *k, const float *v, int n) {
    key(o, k), put(o, "[");
    for (int i = 0; i < n; i++) put(o, i ? ", " : ""), put_number(o, v[i], 1);
    put(o, "]");
}

static void put_ints(out *o, const char *k, const int32_t *v, int n) {
    key(o, k), put(o, "[");
    for (int i = 0; i < n; i++) put(o, i ? ", %d" : "%d", v[i]);
    put(o, "]");
}

/* ---- the pieces of a case ---- */
static uint32_t mulberry32(uint32_t *a) { /* record.mjs's, and Seq2Seq.train's sampler */
    uint32_t t = *a += 0x6D2B79F5u;
    t = (t ^ t >> 15) * (t | 1);
    t ^= t + (t ^ t >> 7) * (t | 61);
    return t ^ t >> 14;
}

static wf_tokenizer *tokenizer_of(tokenizer_kind kind) {
    wf_tokenizer *t = wf_tokenizer_create();
    if (!t) exit(1);
    if (kind == CHAR) tok_ok(wf_tokenizer_train(t, WF_TOKENIZER_CHAR, text, TEXT_BYTES, 0), t);
    if (kind == BPE) tok_ok(wf_tokenizer_train(t, WF_TOKENIZER_BPE, text, TEXT_BYTES, BPE_VOCAB), t);
    if (kind == LETTERS_CHAR) tok_ok(wf_tokenizer_train(t, WF_TOKENIZER_CHAR, LETTERS, (int32_t)strlen(LETTERS), 0), t);
    return t;
}

static int32_t *encode(wf_tokenizer *t, const char *s, int32_t len, int32_t *n) {
    int32_t *ids = xmalloc((size_t)len * sizeof *ids);
    tok_ok(wf_tokenizer_encode(t, s, len, ids, len, n), t);
    return ids;
}

/* The case's model of vocabulary V on `threads` threads, with the record's optimizer. */
static wf_model *model_of(const golden_case *c, int32_t V, int threads) {
    wf_config cfg = c->config, d;
    wf_config_default(&d);
    cfg.arch = c->kind == DECODER ? WF_ARCH_DECODER : c->kind == SEQ2SEQ ? WF_ARCH_ENCODER_DECODER : WF_ARCH_ENCODER;
    cfg.vocab_size = V;
    cfg.context = CONTEXT;
    cfg.n_layer = 2, cfg.n_head = 4, cfg.d_model = 64, cfg.d_ff = 256; /* big enough for the matmuls to use threads */
    cfg.norm_eps = d.norm_eps;
    cfg.rope_theta = d.rope_theta;
    cfg.lora_alpha = d.lora_alpha;
    if (!cfg.max_beam) cfg.max_beam = d.max_beam;
    wf_model *m = wf_model_create();
    if (!m) exit(1);
    ok(wf_model_init(m, &cfg), m);
    if (threads > 1) ok(wf_model_set_threads(m, threads), m);
    ok(wf_model_set_optim(m, &OPTIM), m);
    return m;
}

typedef struct {
    float loss[STEPS], grad_norm[STEPS], lr[STEPS];
} train_log;

static void log_step(train_log *lg, int s, const wf_step_info *info) {
    lg->loss[s] = (float)info->loss, lg->grad_norm[s] = (float)info->grad_norm, lg->lr[s] = info->lr;
}

/* name, param_count, train, val_loss (a float32 itself, or a mean in double) */
static void put_training(out *o, const golden_case *c, wf_model *m, const train_log *lg, double val, int val_float) {
    key(o, "name"), put(o, "\"%s\"", c->name);
    key(o, "param_count"), put(o, "%d", (int32_t)model_info(m).memory.count);
    begin(o, "train", '{');
    put_floats(o, "loss", lg->loss, STEPS);
    put_floats(o, "grad_norm", lg->grad_norm, STEPS);
    put_floats(o, "lr", lg->lr, STEPS);
    end(o, '}');
    key(o, "val_loss"), put_number(o, val, val_float);
}

/* checkpoint: with and without the optimizer state; safetensors: the weights and config.json */
static void put_files(out *o, wf_model *m, const wf_tokenizer *tok) {
    uint8_t *st, *ck;
    char *cfg;
    int32_t n_st, n_cfg, n;
    ok(wf_model_export_safetensors(m, &st, &n_st, &cfg, &n_cfg), m);
    begin(o, "checkpoint", '{');
    ok(wf_model_save(m, tok, WF_SAVE_OPTIMIZER, &ck, &n), m);
    put_sha(o, "full", ck, (size_t)n);
    wf_buffer_free(ck);
    ok(wf_model_save(m, tok, 0, &ck, &n), m);
    put_sha(o, "weights", ck, (size_t)n);
    wf_buffer_free(ck);
    end(o, '}');
    begin(o, "safetensors", '{');
    put_sha(o, "model", st, (size_t)n_st);
    put_sha(o, "config", cfg, (size_t)n_cfg);
    end(o, '}');
    wf_buffer_free(st);
    wf_buffer_free(cfg);
}

/* GEN_TOKENS generated after PROMPT, as text (Model.generateText without stop strings) */
static void put_generation(out *o, const char *k, wf_model *m, wf_tokenizer *tok, wf_sampling s, uint32_t seed) {
    int32_t n, gen[GEN_TOKENS], len;
    int32_t *prompt = encode(tok, PROMPT, (int32_t)strlen(PROMPT), &n);
    ok(wf_model_gen_start(m, prompt, n, seed), m);
    s.n_vocab = tok_info(tok).vocab_size; /* never ids the tokenizer cannot decode */
    for (int i = 0; i < GEN_TOKENS; i++) ok(wf_model_gen_next(m, &s, NULL, &gen[i], NULL, 0, NULL), m);
    int32_t cap = GEN_TOKENS * tok_info(tok).max_bytes;
    char *bytes = xmalloc((size_t)cap);
    tok_ok(wf_tokenizer_decode(tok, gen, GEN_TOKENS, bytes, cap, &len), tok);
    key(o, k), put_string(o, bytes, (size_t)len);
    free(bytes);
    free(prompt);
}

/* ---- the cases: Model.train, Encoder.trainStep, Seq2Seq.train ---- */
static void run_decoder(out *o, const golden_case *c, int threads) {
    enum { B = DECODER_B, T = CONTEXT };
    wf_tokenizer *tok = tokenizer_of(c->tokenizer);
    wf_model *m = model_of(c, tok_info(tok).vocab_size, threads);
    int32_t n;
    int32_t *ids = encode(tok, text, TEXT_BYTES, &n);
    train_log lg;
    /* a run of STEPS, validated at its end on EVAL_BATCHES held-out batches, then ended
     * (Model.train's), its schedule OPTIM's */
    wf_run run;
    wf_preset(NULL, NULL, NULL, &run);
    run.steps = STEPS, run.warmup = OPTIM.warmup, run.decay_steps = OPTIM.decay_steps, run.batch_size = B;
    run.val_fraction = VAL_FRACTION, run.eval_interval = STEPS, run.eval_batches = EVAL_BATCHES, run.seed = SAMPLER_SEED;
    ok(wf_model_run_begin(m, &run, 0, ids, n), m);
    wf_run_facts f;
    for (int s = 0; s < STEPS; s++) {
        ok(wf_model_run(m, NULL, 1, 0, &f), m);
        log_step(&lg, s, &(wf_step_info){.loss = f.loss, .grad_norm = f.grad_norm, .lr = f.lr, .step = f.step});
    }
    ok(wf_model_run_begin(m, NULL, 0, NULL, 0), m);
    put_training(o, c, m, &lg, f.val_loss, 0);
    begin(o, "generate", '{');
    put_generation(o, "greedy", m, tok, (wf_sampling){.temperature = 0, .top_k = 0, .top_p = 1}, 1);
    put_generation(o, "sampled", m, tok, (wf_sampling){.temperature = 0.8f, .top_k = 20, .top_p = 0.9f}, 7);
    end(o, '}');
    key(o, "decode"), put(o, "null");
    put_files(o, m, tok);
    free(ids);
    wf_model_free(m);
    wf_tokenizer_free(tok);
}

/* Encoder batch k: B windows of T, rows past lengths[b] padding; ids (next-id targets) or
 * vectors in [-1, 1) whose targets are the real rows reversed and halved. */
typedef struct {
    int32_t inputs[ENCODER_B * CONTEXT], targets[ENCODER_B * CONTEXT], lengths[ENCODER_B];
    float *vecs, *target_vecs;
    wf_batch b;
} encoder_batch;

static void make_encoder_batch(encoder_batch *x, int k, const int32_t *ids, int32_t n, int C) {
    enum { B = ENCODER_B, T = CONTEXT };
    for (int b = 0; b < B; b++) x->lengths[b] = T - 2 * ((k + b) % 4);
    x->b = (wf_batch){.lengths = x->lengths, .B = B, .T = T};
    if (ids) {
        for (int b = 0; b < B; b++) {
            int32_t start = (int32_t)(((int64_t)(k * B + b) * 131) % (n - T - 1));
            memcpy(x->inputs + b * T, ids + start, T * sizeof *ids);
            memcpy(x->targets + b * T, ids + start + 1, T * sizeof *ids);
        }
        x->b.inputs = x->inputs, x->b.targets = x->targets;
        return;
    }
    uint32_t rng = 1000 + (uint32_t)k;
    for (int i = 0; i < B * T * C; i++) x->vecs[i] = (float)((double)(mulberry32(&rng) >> 8) / 16777216 * 2 - 1);
    memset(x->target_vecs, 0, (size_t)B * T * C * sizeof(float));
    for (int b = 0; b < B; b++)
        for (int t = 0; t < x->lengths[b]; t++)
            for (int c = 0; c < C; c++)
                x->target_vecs[(b * T + t) * C + c] = 0.5f * x->vecs[(b * T + x->lengths[b] - 1 - t) * C + c];
    x->b.input_vecs = x->vecs, x->b.target_vecs = x->target_vecs;
}

static void run_encoder(out *o, const golden_case *c, int threads) {
    int32_t n = 0, *ids = NULL, V = MSE_VOCAB;
    if (c->kind == ENCODER_CE) {
        wf_tokenizer *tok = tokenizer_of(c->tokenizer);
        ids = encode(tok, text, TEXT_BYTES, &n);
        V = tok_info(tok).vocab_size;
        wf_tokenizer_free(tok);
    }
    wf_model *m = model_of(c, V, threads);
    wf_config cfg;
    ok(wf_model_get_config(m, &cfg), m);
    encoder_batch x;
    x.vecs = xmalloc((size_t)ENCODER_B * CONTEXT * cfg.d_model * sizeof(float));
    x.target_vecs = xmalloc((size_t)ENCODER_B * CONTEXT * cfg.d_model * sizeof(float));
    train_log lg;
    for (int k = 0; k < STEPS; k++) {
        wf_step_info info;
        make_encoder_batch(&x, k, ids, n, cfg.d_model);
        ok(wf_model_step(m, &x.b, &info), m);
        log_step(&lg, k, &info);
    }
    float val;
    make_encoder_batch(&x, STEPS, ids, n, cfg.d_model);
    ok(wf_model_forward(m, &x.b, &val), m);
    put_training(o, c, m, &lg, val, 1);
    key(o, "generate"), put(o, "null");
    key(o, "decode"), put(o, "null");
    put_files(o, m, NULL);
    free(x.vecs), free(x.target_vecs), free(ids);
    wf_model_free(m);
}

/* A reversal pair: a word of 3 to 8 letters as ids, and its reverse. */
typedef struct {
    int32_t src[MAX_WORD], tgt[MAX_WORD], n;
} pair;

/* Seq2Seq.makeBatch: src = source ids, inputs = bos + target, targets = target + eos, each
 * side padded to its longest (ids 0, targets -1), with lengths. */
typedef struct {
    int32_t src[SEQ2SEQ_B * MAX_WORD], src_lengths[SEQ2SEQ_B];
    int32_t inputs[SEQ2SEQ_B * (MAX_WORD + 1)], targets[SEQ2SEQ_B * (MAX_WORD + 1)], lengths[SEQ2SEQ_B];
    wf_batch b;
} seq2seq_batch;

static void make_seq2seq_batch(seq2seq_batch *x, const pair *const *chosen, int B, int32_t bos, int32_t eos) {
    int S = 0;
    for (int b = 0; b < B; b++) S = chosen[b]->n > S ? chosen[b]->n : S;
    int T = S + 1; /* a reverse is as long as its word */
    memset(x->src, 0, sizeof x->src), memset(x->inputs, 0, sizeof x->inputs);
    for (int i = 0; i < B * T; i++) x->targets[i] = -1;
    for (int b = 0; b < B; b++) {
        const pair *p = chosen[b];
        memcpy(x->src + b * S, p->src, (size_t)p->n * sizeof *p->src);
        x->src_lengths[b] = p->n;
        x->inputs[b * T] = bos;
        memcpy(x->inputs + b * T + 1, p->tgt, (size_t)p->n * sizeof *p->tgt);
        memcpy(x->targets + b * T, p->tgt, (size_t)p->n * sizeof *p->tgt);
        x->targets[b * T + p->n] = eos;
        x->lengths[b] = p->n + 1;
    }
    x->b = (wf_batch){.inputs = x->inputs, .lengths = x->lengths, .targets = x->targets, .src = x->src,
                      .src_lengths = x->src_lengths, .B = B, .T = T, .S = S};
}

static void run_seq2seq(out *o, const golden_case *c, int threads) {
    wf_tokenizer *tok = tokenizer_of(c->tokenizer);
    const int32_t V = tok_info(tok).vocab_size + 2, bos = V - 2, eos = V - 1; /* two ids past the letters */
    wf_model *m = model_of(c, V, threads);
    pair pairs[WORDS + HELD];
    uint32_t rng = 7;
    for (int i = 0; i < WORDS + HELD; i++) {
        char w[MAX_WORD], r[MAX_WORD];
        int32_t n = 3 + (int32_t)(mulberry32(&rng) % 6), k;
        for (int j = 0; j < n; j++) w[j] = LETTERS[mulberry32(&rng) % 8];
        for (int j = 0; j < n; j++) r[j] = w[n - 1 - j];
        tok_ok(wf_tokenizer_encode(tok, w, n, pairs[i].src, MAX_WORD, &pairs[i].n), tok);
        tok_ok(wf_tokenizer_encode(tok, r, n, pairs[i].tgt, MAX_WORD, &k), tok);
    }
    const pair *chosen[SEQ2SEQ_B];
    seq2seq_batch x;
    train_log lg;
    rng = SEQ2SEQ_SEED;
    /* Seq2Seq.train: a run of STEPS on the caller's batches, then ended */
    wf_run run;
    wf_preset(NULL, NULL, NULL, &run);
    run.steps = STEPS, run.warmup = OPTIM.warmup, run.decay_steps = OPTIM.decay_steps, run.batch_size = SEQ2SEQ_B;
    ok(wf_model_run_begin(m, &run, 0, NULL, 0), m);
    for (int s = 0; s < STEPS; s++) {
        wf_run_facts f;
        for (int b = 0; b < SEQ2SEQ_B; b++) chosen[b] = &pairs[(uint64_t)mulberry32(&rng) * WORDS >> 32];
        make_seq2seq_batch(&x, chosen, SEQ2SEQ_B, bos, eos);
        ok(wf_model_run(m, &x.b, 1, 0, &f), m);
        log_step(&lg, s, &(wf_step_info){.loss = f.loss, .grad_norm = f.grad_norm, .lr = f.lr, .step = f.step});
    }
    ok(wf_model_run_begin(m, NULL, 0, NULL, 0), m);
    /* Seq2Seq.evaluate: the mean over target tokens, eos included (one batch of HELD) */
    float loss;
    int tokens = 0;
    for (int i = 0; i < HELD; i++) chosen[i] = &pairs[WORDS + i], tokens += pairs[WORDS + i].n + 1;
    make_seq2seq_batch(&x, chosen, HELD, bos, eos);
    ok(wf_model_forward(m, &x.b, &loss), m);
    double total = 0;
    total += loss * (double)tokens;
    put_training(o, c, m, &lg, total / tokens, 0);
    key(o, "generate"), put(o, "null");
    begin(o, "decode", '{');
    static const struct { const char *key; int32_t beam; } DECODES[] = {{"greedy", 1}, {"beam", 4}};
    for (int d = 0; d < 2; d++) {
        const int32_t beam = DECODES[d].beam;
        begin(o, DECODES[d].key, '[');
        for (int i = 0; i < HELD; i++) {
            const pair *p = &pairs[WORDS + i];
            int32_t ids[CONTEXT], n;
            ok(wf_model_beam_search(m, p->src, p->n, bos, eos, beam, CONTEXT, ids, &n), m);
            int finished = n > 0 && ids[n - 1] == eos;
            begin(o, NULL, '{');
            put_ints(o, "ids", ids, finished ? n - 1 : n);
            key(o, "finished"), put(o, finished ? "true" : "false");
            end(o, '}');
        }
        end(o, ']');
    }
    end(o, '}');
    put_files(o, m, tok);
    wf_model_free(m);
    wf_tokenizer_free(tok);
}

static void run_case(out *o, const golden_case *c, int threads) {
    switch (c->kind) {
    case DECODER: run_decoder(o, c, threads); break;
    case SEQ2SEQ: run_seq2seq(o, c, threads); break;
    default: run_encoder(o, c, threads); break;
    }
}

/* ---- the machine: what native numerics depend on ---- */
static void put_fingerprint(out *o) {
#if defined(__clang__)
    const char *compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
    const char *compiler = "gcc " __VERSION__;
#else
    const char *compiler = "unknown compiler";
#endif
    char cpu[256] = "unknown CPU", line[1024];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(cpu, sizeof cpu, "%s", colon + 2);
            cpu[strcspn(cpu, "\n")] = 0;
            break;
        }
    }
    if (f) fclose(f);
    /* the instruction sets this build's kernels use (-march=native; src/simd.h): with AVX-512
     * the kernels are its (16 lanes: other sums, other bits) */
    static const char isa[] = ""
#ifdef __SSE2__
        " sse2"
#endif
#ifdef __SSE4_2__
        " sse4.2"
#endif
#ifdef __AVX__
        " avx"
#endif
#ifdef __AVX2__
        " avx2"
#endif
#ifdef __FMA__
        " fma"
#endif
#if defined(__AVX512F__) && defined(__FMA__)
        " avx512f"
#endif
#ifdef __ARM_NEON
        " neon"
#endif
#ifdef __ARM_FEATURE_FMA
        " arm-fma"
#endif
        "";
    char fp[1400];
    snprintf(fp, sizeof fp, "%s; %s;%s", compiler, cpu, isa);
    key(o, "fingerprint"), put_string(o, fp, strlen(fp));
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : TEXT_PATH;
    struct timespec t0, t1;
    timespec_get(&t0, TIME_UTC);
    sha256_constants();
    FILE *f = fopen(path, "rb");
    text = xmalloc(TEXT_BYTES);
    if (!f || fread(text, 1, TEXT_BYTES, f) != TEXT_BYTES) {
        fprintf(stderr, "golden_record: cannot read %d bytes of %s (run it from the repository root)\n", TEXT_BYTES, path);
        return 1;
    }
    fclose(f);

    out o = {0};
    begin(&o, NULL, '{');
    put_fingerprint(&o);
    begin(&o, "text", '{');
    key(&o, "bytes"), put(&o, "%d", TEXT_BYTES);
    put_sha(&o, "sha256", text, TEXT_BYTES);
    end(&o, '}');
    begin(&o, "tokenizers", '{');
    for (tokenizer_kind k = CHAR; k <= BPE; k++) {
        wf_tokenizer *tok = tokenizer_of(k);
        int32_t n, nb;
        uint8_t *file;
        int32_t *ids = encode(tok, text, TEXT_BYTES, &n);
        uint8_t *le = xmalloc((size_t)n * 4); /* the ids as int32 little-endian */
        for (int32_t i = 0; i < n; i++)
            for (int j = 0; j < 4; j++) le[4 * i + j] = (uint8_t)((uint32_t)ids[i] >> (8 * j));
        tok_ok(wf_tokenizer_save(tok, 0, &file, &nb), tok);
        begin(&o, k == CHAR ? "char" : "bpe", '{');
        key(&o, "vocab_size"), put(&o, "%d", tok_info(tok).vocab_size);
        put_sha(&o, "file_sha256", file, (size_t)nb);
        key(&o, "n_ids"), put(&o, "%d", n);
        put_sha(&o, "ids_sha256", le, (size_t)n * 4);
        end(&o, '}');
        wf_buffer_free(file), free(le), free(ids);
        wf_tokenizer_free(tok);
    }
    end(&o, '}');
    begin(&o, "cases", '[');
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        begin(&o, NULL, '{');
        size_t mark = o.n; /* the case on one thread, then again on two: the same text */
        int items = o.items[o.depth];
        run_case(&o, &CASES[i], 1);
        char *one = xmalloc(o.n - mark + 1);
        memcpy(one, o.p + mark, o.n - mark + 1);
        o.n = mark, o.p[mark] = 0, o.items[o.depth] = items;
        run_case(&o, &CASES[i], 2);
        int same = strcmp(one, o.p + mark) == 0;
        if (!same) fprintf(stderr, "golden_record: %s differs on 2 threads\n", CASES[i].name);
        free(one);
        key(&o, "threads2_same"), put(&o, same ? "true" : "false");
        end(&o, '}');
    }
    end(&o, ']');
    end(&o, '}');
    fputs(o.p, stdout);
    fputs("\n", stdout);
    free(o.p);
    free(text);
    timespec_get(&t1, TIME_UTC);
    fprintf(stderr, "golden_record: %.1f s\n", (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    return 0;
}
