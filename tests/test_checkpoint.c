/* Checkpoints and tokenizer files: round trips, exact resume (N steps, save, load into a
 * fresh handle, M steps == N + M steps bit for bit), and hostile files: every truncation,
 * every flipped byte (with and without a repaired checksum), wrong magic and version,
 * lengths that disagree, absurd sizes, and structural damage behind a valid checksum.
 * Each must fail with a message and leave an existing model and tokenizer bit-identical. */
#include <stdlib.h>

#include "check.h"
#include "wasmformer.h"

static wf_config tiny(void) {
    wf_config c;
    wf_config_default(&c);
    c.vocab_size = 13;
    c.context = 8;
    c.n_layer = 1;
    c.n_head = 2;
    c.d_model = 8;
    c.d_ff = 16;
    return c;
}

static wf_config small(void) {
    wf_config c = tiny();
    c.vocab_size = 29;
    c.context = 16;
    c.n_layer = 2;
    c.d_model = 16;
    c.d_ff = 32;
    return c;
}

/* A deterministic corpus of token ids below V with some structure to learn. */
static int32_t *corpus(int n, int V) {
    int32_t *t = malloc(n * sizeof(int32_t));
    uint32_t x = 12345;
    for (int i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        t[i] = (i % 7 == 0) ? (int32_t)((x >> 16) % V) : (i > 0 ? (t[i - 1] + 1) % V : 0);
    }
    return t;
}

/* steps on the optimizer's own schedule (a run with keep), the run ended after them */
static void train(wf_model *m, const int32_t *tokens, int n, int steps) {
    const wf_run r = run_of(steps, 3, 8, 0.1f);
    CHECK_OK(train_run(m, &r, 1, tokens, n), m);
}

/* The model's whole state as bytes (weights, moments, settings, step, RNG streams). */
static uint8_t *state_of(wf_model *m, int32_t *n) {
    uint8_t *b = NULL;
    *n = 0;
    if (param_count(m) == 0) return NULL;
    CHECK_OK(wf_model_save(m, NULL, WF_SAVE_OPTIMIZER, &b, n), m);
    return b;
}

static int same_state(wf_model *m, const uint8_t *before, int32_t n_before) {
    int32_t n;
    uint8_t *now = state_of(m, &n);
    int same = n == n_before && (n == 0 || !memcmp(now, before, n));
    wf_buffer_free(now);
    return same;
}

static uint8_t *tok_state(wf_tokenizer *t, int32_t *n) {
    uint8_t *b = NULL;
    *n = 0;
    if (tok_info(t).kind == WF_TOKENIZER_NONE) return NULL;
    wf_tokenizer_save(t, 0, &b, n);
    return b;
}

static int same_tok(wf_tokenizer *t, const uint8_t *before, int32_t n_before) {
    int32_t n;
    uint8_t *now = tok_state(t, &n);
    int same = n == n_before && (n == 0 || !memcmp(now, before, n));
    wf_buffer_free(now);
    return same;
}

/* ---- little-endian helpers and CRC-32, written independently of the library ---- */

static uint32_t rd32(const uint8_t *b) { return b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24; }
static void wr32(uint8_t *b, uint32_t v) { b[0] = v; b[1] = v >> 8; b[2] = v >> 16; b[3] = v >> 24; }

static uint32_t crc32_ref(const uint8_t *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
    }
    return ~c;
}

/* Makes the header's length n and the trailing checksum right again. */
static void repair(uint8_t *b, int32_t n) {
    wr32(b + 16, (uint32_t)n);
    wr32(b + 20, 0);
    wr32(b + n - 4, crc32_ref(b, n - 4));
}

/* A checkpoint taken apart into sections, to rebuild with changes. */
typedef struct {
    uint8_t head[24];
    int n;
    char tag[8][5];
    uint8_t *payload[8];
    uint32_t len[8];
} sections;

static void split(const uint8_t *b, int32_t n, sections *s) {
    memcpy(s->head, b, 24);
    s->n = 0;
    int32_t off = 24;
    while (off < n - 4 && s->n < 8) {
        memcpy(s->tag[s->n], b + off, 4);
        s->tag[s->n][4] = 0;
        uint32_t len = rd32(b + off + 8);
        s->payload[s->n] = malloc(len + 64);
        memcpy(s->payload[s->n], b + off + 16, len);
        s->len[s->n++] = len;
        off += 16 + (int32_t)len;
    }
}

static int find(sections *s, const char *tag) {
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->tag[i], tag)) return i;
    return -1;
}

static uint8_t *join(sections *s, int32_t *n_out) {
    int32_t n = 24 + 4;
    for (int i = 0; i < s->n; i++) n += 16 + (int32_t)s->len[i];
    uint8_t *b = calloc(n, 1);
    memcpy(b, s->head, 24);
    int32_t off = 24;
    for (int i = 0; i < s->n; i++) {
        memcpy(b + off, s->tag[i], 4);
        wr32(b + off + 4, 0);
        wr32(b + off + 8, s->len[i]);
        wr32(b + off + 12, 0);
        memcpy(b + off + 16, s->payload[i], s->len[i]);
        off += 16 + (int32_t)s->len[i];
    }
    repair(b, n);
    *n_out = n;
    return b;
}

static void free_sections(sections *s) {
    for (int i = 0; i < s->n; i++) free(s->payload[i]);
}

/* ---- tests ---- */

static void test_round_trip(void) {
    wf_config c = small();
    c.tied_head = 0; /* every kind of tensor, lm_head included */
    wf_model *m = wf_model_create();
    CHECK_OK(wf_model_init(m, &c), m);
    wf_optim o;
    wf_optim_default(&o);
    o.lr = 1e-2f;
    o.warmup = 2;
    o.decay_steps = 20;
    CHECK_OK(wf_model_set_optim(m, &o), m);
    int32_t *tokens = corpus(2000, c.vocab_size);
    train(m, tokens, 2000, 5);
    wf_tokenizer *t = wf_tokenizer_create();
    const char *text = "a tiny text: héllo ✓";
    CHECK(wf_tokenizer_train(t, WF_TOKENIZER_CHAR, text, (int32_t)strlen(text), 0) == WF_OK, "%s", wf_tokenizer_error(t));

    for (int flags = 0; flags <= WF_SAVE_OPTIMIZER; flags++) {
        uint8_t *buf;
        int32_t n;
        CHECK_OK(wf_model_save(m, t, flags, &buf, &n), m);
        wf_model *e = wf_model_create();
        wf_tokenizer *te = wf_tokenizer_create();
        CHECK_OK(wf_model_load(e, te, buf, n), e);
        CHECK(model_info(e).origin == (flags ? WF_ORIGIN_OPTIMIZER : WF_ORIGIN_WEIGHTS), "what the file was: %d (flags %d)",
              model_info(e).origin, flags);
        wf_config a, b;
        wf_model_get_config(m, &a);
        wf_model_get_config(e, &b);
        CHECK(!memcmp(&a, &b, sizeof a), "config survives (flags %d)", flags);
        CHECK(param_count(e) == param_count(m), "param count");
        wf_tensor_info last;
        wf_model_get_tensor(m, model_info(m).n_tensors - 1, &last);
        CHECK(!memcmp(wf_model_params(m), wf_model_params(e), ((size_t)last.offset + last.size) * sizeof(float)),
              "weights bit-identical (flags %d)", flags);
        wf_optim oe;
        wf_model_get_optim(e, &oe);
        if (flags) {
            CHECK(!memcmp(&oe, &o, sizeof o), "optimizer settings survive");
            CHECK(model_info(e).step == 5 && model_info(e).lr == model_info(m).lr, "step %d and lr", model_info(e).step);
        } else {
            wf_optim d;
            wf_optim_default(&d);
            CHECK(!memcmp(&oe, &d, sizeof d) && model_info(e).step == 0, "weights only: default optimizer, step 0");
        }
        /* save(load(x)) == x, byte for byte, with the tokenizer */
        uint8_t *again;
        int32_t n2;
        CHECK_OK(wf_model_save(e, te, flags, &again, &n2), e);
        CHECK(n2 == n && !memcmp(again, buf, n), "save after load gives the same bytes (flags %d)", flags);
        CHECK(tok_info(te).vocab_size == tok_info(t).vocab_size, "tokenizer vocabulary");
        wf_buffer_free(again);
        /* without a tokenizer handle the tokenizer is skipped; a file without one leaves t alone */
        wf_model *e2 = wf_model_create();
        CHECK_OK(wf_model_load(e2, NULL, buf, n), e2);
        wf_model_free(e2);
        wf_buffer_free(buf);
        CHECK_OK(wf_model_save(m, NULL, flags, &buf, &n), m);
        int32_t nt;
        uint8_t *tb = tok_state(te, &nt);
        CHECK_OK(wf_model_load(e, te, buf, n), e);
        CHECK(same_tok(te, tb, nt), "a file without a tokenizer leaves the tokenizer handle alone");
        free(tb);
        wf_buffer_free(buf);
        wf_model_free(e);
        wf_tokenizer_free(te);
    }

    /* tokenizer files on their own */
    uint8_t *tb;
    int32_t nt;
    CHECK(wf_tokenizer_save(t, 0, &tb, &nt) == WF_OK, "%s", wf_tokenizer_error(t));
    wf_tokenizer *t2 = wf_tokenizer_create();
    CHECK(wf_tokenizer_load(t2, tb, nt) == WF_OK, "%s", wf_tokenizer_error(t2));
    int32_t ids[64], k, len;
    char out[128];
    CHECK(wf_tokenizer_encode(t2, text, (int32_t)strlen(text), ids, 64, &k) == WF_OK &&
          wf_tokenizer_decode(t2, ids, k, out, 128, &len) == WF_OK && len == (int32_t)strlen(text) &&
          !memcmp(out, text, len), "loaded tokenizer round-trips the text");
    CHECK(tok_info(t2).kind == WF_TOKENIZER_CHAR, "kind");
    wf_buffer_free(tb);

    /* errors when saving */
    uint8_t *buf = (uint8_t *)1;
    int32_t n = 7;
    wf_model *empty = wf_model_create();
    CHECK(wf_model_save(empty, NULL, 0, &buf, &n) == WF_ERR_STATE && buf == NULL && n == 0, "empty model");
    CHECK(wf_model_save(m, NULL, 4, &buf, &n) == WF_ERR_ARG && strlen(wf_model_error(m)) > 0, "unknown flag");
    CHECK(wf_model_save(m, NULL, 0, NULL, &n) == WF_ERR_ARG, "NULL out");
    wf_tokenizer *none = wf_tokenizer_create();
    CHECK(wf_model_save(m, none, 0, &buf, &n) == WF_ERR_STATE, "empty tokenizer");
    CHECK(wf_tokenizer_save(none, 0, &buf, &n) == WF_ERR_STATE && strlen(wf_tokenizer_error(none)) > 0, "save empty tokenizer");
    const char *wide = "abcdefghijklmnopqrstuvwxyzABCDEFGH";
    wf_tokenizer_train(none, WF_TOKENIZER_CHAR, wide, (int32_t)strlen(wide), 0);
    CHECK(wf_model_save(m, none, 0, &buf, &n) == WF_ERR_STATE && strstr(wf_model_error(m), "vocabulary"),
          "tokenizer larger than the model's vocabulary: %s", wf_model_error(m));
    wf_tokenizer_free(none);
    wf_model_free(empty);
    wf_tokenizer_free(t2);
    wf_tokenizer_free(t);
    free(tokens);
    wf_model_free(m);
}

/* N steps, save, load into a fresh handle, M steps == N + M steps without stopping. */
/* What made a model (wf_model_info.origin): its init, or the file it was loaded from, which
 * the caller need not tell apart by its bytes (a llama2.c file's byte 8 is its layer count). */
static void test_origin(void) {
    wf_model *m = wf_model_create();
    CHECK(model_info(m).origin == WF_ORIGIN_NONE, "an empty handle: none");
    wf_config c = small();
    CHECK_OK(wf_model_init(m, &c), m);
    CHECK(model_info(m).origin == WF_ORIGIN_INIT, "init");
    wf_config lc = c;
    lc.lora_rank = 2;
    lc.lora_targets = 1;
    CHECK_OK(wf_model_set_config(m, &lc, 0), m);
    CHECK(model_info(m).origin == WF_ORIGIN_INIT, "adapters added: still what init made");
    int32_t n = 0;
    uint8_t *bin = read_file("tests/fixtures/llama2c_gqa.bin", &n);
    CHECK(bin && n > 28, "the llama2.c fixture (run from the repository root)");
    if (bin) CHECK_OK(wf_model_load(m, NULL, bin, n), m);
    CHECK(model_info(m).origin == WF_ORIGIN_LLAMA2C, "a llama2.c file: %d", model_info(m).origin);
    free(bin);
    CHECK(wf_model_load(m, NULL, (const uint8_t *)"nonsense", 8) == WF_ERR_FORMAT &&
              model_info(m).origin == WF_ORIGIN_LLAMA2C, "a refused file leaves the origin as it was");
    wf_model_free(m);
}

static void test_exact_resume(void) {
    const int N = 7, M = 9, n = 3000;
    wf_config c = small();
    int32_t *tokens = corpus(n, c.vocab_size);
    wf_optim o;
    wf_optim_default(&o);
    o.lr = 5e-3f;
    o.warmup = 4;       /* the resume lands in the cosine decay: the schedule position matters */
    o.decay_steps = 10;
    o.grad_clip = 0.5f;

    wf_model *straight = wf_model_create();
    CHECK_OK(wf_model_init(straight, &c), straight);
    CHECK_OK(wf_model_set_optim(straight, &o), straight);
    train(straight, tokens, n, N + M);

    for (int flags = WF_SAVE_OPTIMIZER; flags >= 0; flags--) {
        wf_model *first = wf_model_create();
        CHECK_OK(wf_model_init(first, &c), first);
        CHECK_OK(wf_model_set_optim(first, &o), first);
        train(first, tokens, n, N);
        uint8_t *buf;
        int32_t nb;
        CHECK_OK(wf_model_save(first, NULL, flags, &buf, &nb), first);
        wf_model_free(first);
        wf_model *resumed = wf_model_create();
        CHECK_OK(wf_model_load(resumed, NULL, buf, nb), resumed);
        wf_buffer_free(buf);
        if (!flags) CHECK_OK(wf_model_set_optim(resumed, &o), resumed);
        train(resumed, tokens, n, M);
        int32_t na, nr;
        uint8_t *a = state_of(straight, &na), *r = state_of(resumed, &nr);
        int same = na == nr && !memcmp(a, r, na);
        wf_tensor_info last;
        wf_model_get_tensor(straight, model_info(straight).n_tensors - 1, &last);
        int same_w = !memcmp(wf_model_params(straight), wf_model_params(resumed),
                             ((size_t)last.offset + last.size) * sizeof(float));
        if (flags) {
            CHECK(same && same_w, "resumed training is bit-identical to training without stopping");
            printf("exact resume: %d + %d steps after save/load == %d steps: weights, moments, step, RNG identical\n", N, M, N + M);
        } else {
            /* the control: without the optimizer state the runs must differ, or the test proves nothing */
            CHECK(!same_w, "a weights-only resume differs (moments, step and sampler restart)");
        }
        wf_buffer_free(a);
        wf_buffer_free(r);
        wf_model_free(resumed);
    }
    wf_model_free(straight);
    free(tokens);
}

typedef struct {
    wf_model *m;
    wf_tokenizer *t;
    uint8_t *state, *tstate;
    int32_t n_state, n_tstate;
} victim;

static victim make_victim(void) {
    victim v;
    wf_config c = tiny();
    c.seed = 99; /* not the file's weights */
    v.m = wf_model_create();
    CHECK_OK(wf_model_init(v.m, &c), v.m);
    int32_t *tokens = corpus(500, c.vocab_size);
    train(v.m, tokens, 500, 2);
    free(tokens);
    v.t = wf_tokenizer_create();
    wf_tokenizer_train(v.t, WF_TOKENIZER_CHAR, "xyz", 3, 0);
    v.state = state_of(v.m, &v.n_state);
    v.tstate = tok_state(v.t, &v.n_tstate);
    return v;
}

static void free_victim(victim *v) {
    wf_model_free(v->m);
    wf_tokenizer_free(v->t);
    wf_buffer_free(v->state);
    wf_buffer_free(v->tstate);
}

static char last_msg[256];

/* Loads a bad file; it must fail with a message (kept in last_msg) and leave the victim
 * as it was. */
static wf_status refuse(victim *v, const uint8_t *b, int32_t n, const char *what) {
    wf_status s = wf_model_load(v->m, v->t, b, n);
    snprintf(last_msg, sizeof last_msg, "%s", wf_model_error(v->m));
    CHECK(s != WF_OK, "%s: loaded", what);
    CHECK(strlen(last_msg) > 0, "%s: no message", what);
    CHECK(same_state(v->m, v->state, v->n_state), "%s: the model changed", what);
    CHECK(same_tok(v->t, v->tstate, v->n_tstate), "%s: the tokenizer changed", what);
    return s;
}

static void expect(victim *v, const uint8_t *b, int32_t n, wf_status want, const char *needle, const char *what) {
    wf_status s = refuse(v, b, n, what);
    CHECK(s == want, "%s: status %s, want %s (%s)", what, wf_status_string(s), wf_status_string(want), last_msg);
    CHECK(strstr(last_msg, needle) != NULL, "%s: message \"%s\" lacks \"%s\"", what, last_msg, needle);
    if (getenv("WF_VERBOSE")) printf("  %-40s %-22s %s\n", what, wf_status_string(s), last_msg);
}

static void test_hostile(void) {
    victim v = make_victim();
    /* the file under attack: the tiny model with optimizer state and a tokenizer */
    wf_config c = tiny();
    wf_model *src = wf_model_create();
    CHECK_OK(wf_model_init(src, &c), src);
    int32_t *tokens = corpus(500, c.vocab_size);
    train(src, tokens, 500, 3);
    free(tokens);
    wf_tokenizer *st = wf_tokenizer_create();
    wf_tokenizer_train(st, WF_TOKENIZER_CHAR, "hello, wörld", 13, 0);
    uint8_t *good;
    int32_t n;
    CHECK_OK(wf_model_save(src, st, WF_SAVE_OPTIMIZER, &good, &n), src);
    printf("hostile-file tests on a %d-byte checkpoint\n", n);
    uint8_t *b = malloc(n);

    /* every truncation, as is and with the header and checksum repaired to match */
    int repaired_refused = 0;
    for (int32_t len = 0; len < n; len++) {
        memcpy(b, good, len);
        if (wf_model_load(v.m, v.t, b, len) == WF_OK) CHECK(0, "truncated to %d bytes: loaded", len);
        if (len >= 28) {
            repair(b, len);
            repaired_refused += wf_model_load(v.m, v.t, b, len) != WF_OK;
        }
    }
    CHECK(repaired_refused == n - 28, "every repaired truncation refused: %d of %d", repaired_refused, n - 28);
    CHECK(same_state(v.m, v.state, v.n_state) && same_tok(v.t, v.tstate, v.n_tstate), "truncations changed nothing");
    memcpy(b, good, n);
    expect(&v, b, 10, WF_ERR_FORMAT, "truncated", "10 bytes");

    /* every byte flipped: the checksum catches each; repaired, the parser must cope */
    int flip_refused = 0, repaired_ok = 0;
    for (int32_t i = 0; i < n; i++) {
        memcpy(b, good, n);
        b[i] ^= 0xFF;
        flip_refused += wf_model_load(v.m, v.t, b, n) != WF_OK;
        if (i >= 24 && i < n - 4) {
            repair(b, n);
            wf_model *e = wf_model_create();
            wf_tokenizer *te = wf_tokenizer_create();
            if (wf_model_load(e, te, b, n) == WF_OK) {
                repaired_ok++;
            } else {
                CHECK(strlen(wf_model_error(e)) > 0 && param_count(e) == 0 &&
                      tok_info(te).kind == WF_TOKENIZER_NONE, "byte %d: failed load changed the empty handle", i);
            }
            wf_model_free(e);
            wf_tokenizer_free(te);
        }
    }
    CHECK(flip_refused == n, "every flipped byte refused: %d of %d", flip_refused, n);
    CHECK(same_state(v.m, v.state, v.n_state) && same_tok(v.t, v.tstate, v.n_tstate), "flips changed nothing");
    printf("flipped bytes: %d of %d refused by the checksum; with a repaired checksum %d loaded (weights and "
           "moments are any finite floats) and %d were refused by the parser\n",
           flip_refused, n, repaired_ok, n - 28 - repaired_ok);

    /* the header */
    memcpy(b, good, n);
    memcpy(b, "WFXX", 4);
    expect(&v, b, n, WF_ERR_FORMAT, "not a wasmformer checkpoint", "wrong magic");
    memcpy(b, good, n);
    wr32(b + 4, 2);
    expect(&v, b, n, WF_ERR_UNSUPPORTED, "version 2", "newer version");
    memcpy(b, good, n);
    wr32(b + 4, 0);
    expect(&v, b, n, WF_ERR_UNSUPPORTED, "version 0", "version 0");
    memcpy(b, good, n);
    wr32(b + 16, (uint32_t)n + 1);
    expect(&v, b, n, WF_ERR_FORMAT, "bytes long", "length field too large");
    memcpy(b, good, n);
    wr32(b + 20, 1);
    expect(&v, b, n, WF_ERR_FORMAT, "bytes long", "length field beyond 4 GB");
    memcpy(b, good, n);
    b[n - 1] ^= 1;
    expect(&v, b, n, WF_ERR_FORMAT, "CRC-32", "checksum mismatch");
    memcpy(b, good, n);
    wr32(b + 8, 32 | 3); /* bit 3 is the trainable mask (TRAN), bit 4 the training run (RUNS) */
    repair(b, n);
    expect(&v, b, n, WF_ERR_UNSUPPORTED, "flags", "unknown flag");
    memcpy(b, good, n);
    wr32(b + 12, 5);
    repair(b, n);
    expect(&v, b, n, WF_ERR_FORMAT, "reserved", "reserved header field");
    uint8_t *padded = calloc(n + 8, 1);
    memcpy(padded, good, n);
    expect(&v, padded, n + 8, WF_ERR_FORMAT, "bytes long", "padded file");
    free(padded);
    /* a tokenizer file is not a checkpoint */
    uint8_t *tfile;
    int32_t tn;
    wf_tokenizer_save(st, 0, &tfile, &tn);
    expect(&v, tfile, tn, WF_ERR_FORMAT, "not a checkpoint", "tokenizer file as checkpoint");
    CHECK(wf_tokenizer_load(v.t, good, n) == WF_ERR_FORMAT && strstr(wf_tokenizer_error(v.t), "checkpoint, not a tokenizer file"),
          "checkpoint as tokenizer file: %s", wf_tokenizer_error(v.t));
    CHECK(same_tok(v.t, v.tstate, v.n_tstate), "tokenizer unchanged");
    CHECK(wf_model_load(v.m, v.t, NULL, 5) == WF_ERR_ARG && wf_model_load(v.m, v.t, good, -1) == WF_ERR_ARG, "bad arguments");
    CHECK(wf_model_load(NULL, v.t, good, n) == WF_ERR_ARG, "NULL model");

    /* structure behind a valid checksum: rebuild the file with one thing changed */
    sections s;
    uint8_t *bad;
    int32_t nb;
#define REBUILD(change, status, needle, what)                  \
    do {                                                       \
        split(good, n, &s);                                    \
        change;                                                \
        bad = join(&s, &nb);                                   \
        expect(&v, bad, nb, status, needle, what);             \
        free(bad);                                             \
        free_sections(&s);                                     \
    } while (0)
    int conf = 0, tokn = 1, tens = 2, optm = 3;
    split(good, n, &s);
    CHECK(s.n == 4 && find(&s, "CONF") == conf && find(&s, "TOKN") == tokn && find(&s, "TENS") == tens &&
          find(&s, "OPTM") == optm, "sections CONF TOKN TENS OPTM");
    bad = join(&s, &nb);
    CHECK(nb == n && !memcmp(bad, good, n), "the test's rebuild reproduces the file");
    CHECK(wf_model_load(v.m, v.t, bad, nb) == WF_OK, "and it loads");
    wf_model_load(v.m, v.t, v.state, v.n_state); /* back to the victim's own state */
    wf_tokenizer_load(v.t, v.tstate, v.n_tstate);
    CHECK(same_state(v.m, v.state, v.n_state) && same_tok(v.t, v.tstate, v.n_tstate), "victim restored");
    free(bad);
    free_sections(&s);

    REBUILD(memcpy(s.tag[conf], "CONX", 4), WF_ERR_FORMAT, "expected section CONF", "wrong section tag");
    REBUILD((free(s.payload[optm]), s.n = 3), WF_ERR_FORMAT, "OPTM is missing", "missing section");
    REBUILD((s.len[tens] += 4, memset(s.payload[tens] + s.len[tens] - 4, 0, 4)), WF_ERR_FORMAT, "unexplained", "trailing bytes in a section");
    REBUILD((s.len[tens] -= 4), WF_ERR_FORMAT, "bytes left", "section shorter than its tensors");
    /* this build writes one config field per row of WF_CONFIG_FIELDS (15 in version 1, then
     * n_enc_layer, dropout, max_beam, qk_norm, zero_proj, logit_cap, n_kv_head, rope_theta);
     * a file with one more is from a newer version */
    const uint32_t newer = (uint32_t)(sizeof(wf_config) / 4) + 1;
    char newer_fields[32];
    snprintf(newer_fields, sizeof newer_fields, "%u fields", newer);
    REBUILD((wr32(s.payload[conf], newer), wr32(s.payload[conf] + s.len[conf], 0), s.len[conf] += 4), WF_ERR_UNSUPPORTED,
            newer_fields, "config from a newer version");
    REBUILD((wr32(s.payload[conf], 14), s.len[conf] -= 4), WF_ERR_FORMAT, "14 fields", "config too short");
    REBUILD(wr32(s.payload[conf], 0xFFFFFFFFu), WF_ERR_UNSUPPORTED, "fields", "absurd field count");
    /* config fields: 1 + index words into CONF */
    REBUILD(wr32(s.payload[conf] + 4 * (1 + 11), 12), WF_ERR_FORMAT, "dimension", "d_model disagrees with the tensors");
    REBUILD(wr32(s.payload[conf] + 4 * (1 + 10), 3), WF_ERR_FORMAT, "does not divide", "invalid config");
    REBUILD(wr32(s.payload[conf] + 4 * (1 + 2), 2), WF_ERR_FORMAT, "block 2", "block out of range");
    REBUILD(wr32(s.payload[conf] + 4 * (1 + 15), 2), WF_ERR_FORMAT, "n_enc_layer", "encoder layers in a decoder");
    REBUILD((wr32(s.payload[conf] + 4 * (1 + 7), 1 << 24), wr32(s.payload[conf] + 4 * (1 + 11), 1 << 20),
             wr32(s.payload[conf] + 4 * (1 + 10), 1)), WF_ERR_FORMAT, "2^31", "absurd config: 2^44 parameters");
    /* a valid config of 2^30 parameters (12 GB with moments) whose first tensor's shape
     * matches: refused by its size against the bytes present, before anything is allocated */
    REBUILD((wr32(s.payload[conf] + 4 * (1 + 7), 1 << 22), wr32(s.payload[conf] + 4 * (1 + 11), 256),
             wr32(s.payload[conf] + 4 * (1 + 10), 1), wr32(s.payload[conf] + 4 * (1 + 12), 1),
             wr32(s.payload[tens] + 19, 1 << 22), wr32(s.payload[tens] + 23, 256)), WF_ERR_FORMAT,
            "bytes left", "huge config, small file");
    REBUILD(wr32(s.payload[conf] + 4 * (1 + 5), 0), WF_ERR_FORMAT, "tensors", "untied config, tied tensors");
    /* tensors: count, dtype, then entries "wte" first */
    REBUILD(wr32(s.payload[tens], 99), WF_ERR_FORMAT, "99 tensors", "tensor count");
    REBUILD(wr32(s.payload[tens] + 4, 1), WF_ERR_UNSUPPORTED, "dtype", "dtype");
    REBUILD(wr32(s.payload[tens] + 8, 0xFFFFFFF0u), WF_ERR_FORMAT, "name length", "absurd name length");
    REBUILD(memcpy(s.payload[tens] + 12, "wtx", 3), WF_ERR_FORMAT, "\"wtx\" is not part", "unknown tensor");
    REBUILD(memcpy(s.payload[tens] + 12, "wpe", 3), WF_ERR_FORMAT, "dimension 0", "shape mismatch (wpe as wte)");
    REBUILD(wr32(s.payload[tens] + 15, 3), WF_ERR_FORMAT, "dimensions", "ndim");
    REBUILD(wr32(s.payload[tens] + 19, 0x7FFFFFFF), WF_ERR_FORMAT, "dimension 0", "absurd dimension");
    {
        const float nan = 0.0f / 0.0f, neg = -1.0f;
        uint32_t u;
        memcpy(&u, &nan, 4);
        REBUILD(wr32(s.payload[tens] + 27 + 4 * 5, u), WF_ERR_FORMAT, "not finite", "NaN weight");
        /* wte's AdamW v starts after its weights and m: 2 * V * C floats in */
        memcpy(&u, &neg, 4);
        REBUILD(wr32(s.payload[tens] + 27 + 4 * (2 * 13 * 8 + 3), u), WF_ERR_FORMAT, "AdamW v", "negative second moment");
    }
    /* the optimizer section: 12 fields (9 in files from before the schedule's start, 10 before
     * Muon), step, RNG streams */
    REBUILD(wr32(s.payload[optm] + 4 * (1 + 0), 0xFFC00000u), WF_ERR_FORMAT, "lr must be", "NaN learning rate");
    REBUILD(wr32(s.payload[optm] + 4 * (1 + 9), 0x80000000u), WF_ERR_FORMAT, "start", "negative schedule start");
    REBUILD(wr32(s.payload[optm] + 4 * (1 + 10), 2), WF_ERR_FORMAT, "muon 2", "muon out of range");
    REBUILD(wr32(s.payload[optm] + 4 * (1 + 12), 0x80000000u), WF_ERR_FORMAT, "step", "negative step");
    REBUILD(wr32(s.payload[optm] + 4 * (1 + 13), 3), WF_ERR_FORMAT, "RNG", "RNG count");
    REBUILD((wr32(s.payload[optm] + 4 * (1 + 14), 0), wr32(s.payload[optm] + 4 * (1 + 15), 0)), WF_ERR_FORMAT,
            "state 0", "RNG state 0");
    REBUILD((wr32(s.payload[optm], 13), wr32(s.payload[optm] + s.len[optm], 0), s.len[optm] += 4), WF_ERR_UNSUPPORTED,
            "13 fields", "optimizer settings from a newer version");
    {
        /* a schedule start survives the file; a file of 9 optimizer fields (written before
         * the start existed) loads with start 0 */
        wf_model *e = wf_model_create();
        wf_optim o;
        split(good, n, &s);
        wr32(s.payload[optm] + 4 * (1 + 9), 7);
        bad = join(&s, &nb);
        CHECK_OK(wf_model_load(e, NULL, bad, nb), e);
        CHECK(wf_model_get_optim(e, &o) == WF_OK && o.start == 7, "start 7 saved and loaded: %d", o.start);
        const int32_t step = model_info(e).step;
        free(bad);
        uint8_t *p = s.payload[optm];
        wr32(p, 9);
        memmove(p + 4 * (1 + 9), p + 4 * (1 + 12), s.len[optm] - 4 * (1 + 12));
        s.len[optm] -= 3 * 4;
        bad = join(&s, &nb);
        CHECK_OK(wf_model_load(e, NULL, bad, nb), e);
        CHECK(wf_model_get_optim(e, &o) == WF_OK && o.start == 0, "9 fields: start %d, want 0", o.start);
        CHECK(step > 0 && model_info(e).step == step, "9 fields: the step %d follows them, want %d", model_info(e).step, step);
        free(bad);
        free_sections(&s);
        wf_model_free(e);
    }
    /* the embedded tokenizer: a damaged one, and one larger than the vocabulary */
    REBUILD(s.payload[tokn][30] ^= 1, WF_ERR_FORMAT, "tokenizer", "damaged embedded tokenizer");
    {
        wf_tokenizer *wide = wf_tokenizer_create();
        const char *abc = "abcdefghijklmnopqrstuvwxyz";
        wf_tokenizer_train(wide, WF_TOKENIZER_CHAR, abc, 26, 0);
        uint8_t *wb;
        int32_t wn;
        wf_tokenizer_save(wide, 0, &wb, &wn);
        REBUILD((free(s.payload[tokn]), s.payload[tokn] = wb, s.len[tokn] = (uint32_t)wn), WF_ERR_FORMAT,
                "27 tokens", "tokenizer larger than the model");
        wf_tokenizer_free(wide);
    }
#undef REBUILD

    /* a failed load into an empty handle leaves it empty */
    wf_model *e = wf_model_create();
    memcpy(b, good, n);
    b[100] ^= 1;
    CHECK(wf_model_load(e, NULL, b, n) == WF_ERR_FORMAT && param_count(e) == 0, "empty handle stays empty");
    wf_model_free(e);

    /* tokenizer files: every truncation and flip, and bad vocabularies behind a valid checksum */
    for (int32_t len = 0; len < tn; len++) {
        memcpy(b, tfile, len);
        CHECK(wf_tokenizer_load(v.t, b, len) != WF_OK, "tokenizer truncated to %d bytes", len);
        if (len >= 28) {
            repair(b, len);
            CHECK(wf_tokenizer_load(v.t, b, len) != WF_OK, "tokenizer truncated to %d bytes, repaired", len);
        }
    }
    for (int32_t i = 0; i < tn; i++) {
        memcpy(b, tfile, tn);
        b[i] ^= 0x55;
        CHECK(wf_tokenizer_load(v.t, b, tn) != WF_OK && strlen(wf_tokenizer_error(v.t)) > 0, "tokenizer byte %d flipped", i);
    }
    struct { int word; uint32_t value; wf_status want; const char *needle; } tok_cases[] = {
        {2, 0, WF_ERR_FORMAT, "kind 0"},          /* kind */
        {2, 7, WF_ERR_UNSUPPORTED, "kind 7"},
        {6, 0, WF_ERR_FORMAT, "empty"},           /* count */
        {6, 0xFFFFFFFFu, WF_ERR_FORMAT, "code points but"},
        {7, 0xD800, WF_ERR_FORMAT, "scalar"},     /* first code point: a surrogate */
        {7, 0x110000, WF_ERR_FORMAT, "scalar"},
        {8, 0, WF_ERR_FORMAT, "ascend"},          /* second below the first */
    };
    for (size_t i = 0; i < sizeof tok_cases / sizeof *tok_cases; i++) {
        memcpy(b, tfile, tn);
        wr32(b + 4 * tok_cases[i].word, tok_cases[i].value);
        repair(b, tn);
        wf_status ts = wf_tokenizer_load(v.t, b, tn);
        CHECK(ts == tok_cases[i].want && strstr(wf_tokenizer_error(v.t), tok_cases[i].needle),
              "tokenizer case %zu: %s: %s", i, wf_status_string(ts), wf_tokenizer_error(v.t));
    }
    CHECK(same_tok(v.t, v.tstate, v.n_tstate), "failed tokenizer loads changed nothing");

    free(tfile);
    free(b);
    wf_buffer_free(good);
    wf_tokenizer_free(st);
    wf_model_free(src);
    free_victim(&v);
}

/* --dump dir: a checkpoint of a trained small model with its tokenizer and optimizer
 * state, for the wasm build to load and save again byte for byte
 * (tests/js/checkpoint.test.mjs). */
static int dump(const char *dir) {
    wf_config c = small();
    wf_model *m = wf_model_create();
    if (wf_model_init(m, &c) != WF_OK) return 1;
    int32_t *tokens = corpus(2000, c.vocab_size);
    train(m, tokens, 2000, 4);
    wf_tokenizer *t = wf_tokenizer_create();
    wf_tokenizer_train(t, WF_TOKENIZER_CHAR, "native build", 12, 0);
    uint8_t *b;
    int32_t n;
    if (wf_model_save(m, t, WF_SAVE_OPTIMIZER, &b, &n) != WF_OK) return 1;
    char path[1024];
    snprintf(path, sizeof path, "%s/small.wf", dir);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(b, 1, n, f) == (size_t)n;
    if (f) fclose(f);
    wf_buffer_free(b);
    free(tokens);
    wf_tokenizer_free(t);
    wf_model_free(m);
    return ok ? 0 : 1;
}

/* The application's note: saved with the model, given back by a load, replaced by a load
 * of a file without one, bounded, and refused whole when damaged. */
static void test_note(void) {
    wf_config c = tiny();
    wf_model *m = wf_model_create(), *e = wf_model_create();
    CHECK_OK(wf_model_init(m, &c), m);
    int32_t n = -1;
    CHECK(wf_model_get_note(m, &n) == NULL && n == 0, "a new model has no note");
    const char *plan = "{\"batchSize\":4,\"text\":\"sha256:ab\"}";
    CHECK_OK(wf_model_set_note(m, (const uint8_t *)plan, (int32_t)strlen(plan)), m);
    uint8_t *with = NULL, *without = NULL;
    int32_t n_with, n_without;
    CHECK_OK(wf_model_save(m, NULL, WF_SAVE_OPTIMIZER, &with, &n_with), m);
    CHECK_OK(wf_model_set_note(m, NULL, 0), m);
    CHECK_OK(wf_model_save(m, NULL, WF_SAVE_OPTIMIZER, &without, &n_without), m);
    CHECK(n_with == n_without + 16 + (int32_t)strlen(plan), "the NOTE section: 16 bytes of header and the note");
    CHECK_OK(wf_model_load(e, NULL, with, n_with), e);
    const uint8_t *got = wf_model_get_note(e, &n);
    CHECK(n == (int32_t)strlen(plan) && got && !memcmp(got, plan, (size_t)n), "the note comes back");
    CHECK_OK(wf_model_load(e, NULL, without, n_without), e);
    CHECK(wf_model_get_note(e, &n) == NULL && n == 0, "a file without a note leaves none");
    CHECK(wf_model_set_note(m, (const uint8_t *)plan, WF_NOTE_MAX + 1) == WF_ERR_ARG, "too long");
    CHECK(wf_model_set_note(m, NULL, 3) == WF_ERR_ARG, "NULL bytes");
    /* a note whose length field says 0 is refused, and the model keeps its state */
    sections s;
    split(with, n_with, &s);
    int k = find(&s, "NOTE");
    CHECK(k >= 0, "the file has a NOTE section");
    CHECK_OK(wf_model_load(e, NULL, with, n_with), e);
    if (k >= 0) {
        s.len[k] = 0;
        int32_t n_empty;
        uint8_t *empty = join(&s, &n_empty);
        repair(empty, n_empty);
        CHECK(wf_model_load(e, NULL, empty, n_empty) == WF_ERR_FORMAT && strstr(wf_model_error(e), "note"), "an empty NOTE: %s",
              wf_model_error(e));
        free(empty);
    }
    uint8_t *bad = malloc((size_t)n_with);
    memcpy(bad, with, (size_t)n_with);
    bad[n_with - 4 - (int32_t)strlen(plan) - 1] ^= 0xff; /* the note's last byte before the CRC */
    CHECK(wf_model_load(e, NULL, bad, n_with) == WF_ERR_FORMAT, "a damaged note fails the checksum");
    got = wf_model_get_note(e, &n);
    CHECK(n == (int32_t)strlen(plan) && !memcmp(got, plan, (size_t)n), "a refused load keeps the note");
    free(bad);
    free_sections(&s);
    wf_buffer_free(with);
    wf_buffer_free(without);
    wf_model_free(m);
    wf_model_free(e);
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "--dump")) return dump(argv[2]);
    test_note();
    test_round_trip();
    test_origin();
    test_exact_resume();
    test_hostile();
    return check_summary("test_checkpoint");
}
