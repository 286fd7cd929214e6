/* The seq2seq demonstration: an encoder-decoder learns to reverse strings of 3 to 8 letters
 * over an 8-letter alphabet in 800 steps (a few seconds), then decodes 200 held-out strings,
 * never seen in training, greedily and with a beam of 4. Exact-match accuracy must reach
 * 90% both ways (it prints what it reached). Ids: 0 unused, 1 bos, 2 eos, 3.. letters. */
#include <stdlib.h>

#include "check.h"
#include "wasmformer.h"

enum { LETTERS = 8, MIN_LEN = 3, MAX_LEN = 8, BOS = 1, EOS = 2, HELD_OUT = 200, B = 32, STEPS = 800 };
enum { S = MAX_LEN, T = MAX_LEN + 1 };

typedef struct {
    int32_t x[MAX_LEN];
    int n;
} example;

static int same(const example *a, const example *b) {
    return a->n == b->n && !memcmp(a->x, b->x, (size_t)a->n * sizeof(int32_t));
}

static example draw(uint64_t *state) {
    example e;
    uint64_t s = *state;
#define NEXT (s ^= s << 13, s ^= s >> 7, s ^= s << 17, (uint32_t)(s >> 11))
    e.n = MIN_LEN + (int)(NEXT % (MAX_LEN - MIN_LEN + 1));
    for (int i = 0; i < e.n; i++) e.x[i] = 3 + (int32_t)(NEXT % LETTERS);
#undef NEXT
    *state = s;
    return e;
}

/* Exact-match accuracy of decoding every held-out string with a beam of width beam. */
static double accuracy(wf_model *m, const example *test, int beam) {
    int good = 0;
    for (int k = 0; k < HELD_OUT; k++) {
        const example *e = &test[k];
        int32_t out[T], n_out;
        CHECK_OK(wf_model_beam_search(m, e->x, e->n, BOS, EOS, beam, T, out, &n_out), m);
        int ok = n_out == e->n + 1 && out[e->n] == EOS;
        for (int i = 0; i < e->n && ok; i++) ok = out[i] == e->x[e->n - 1 - i];
        good += ok;
    }
    return (double)good / HELD_OUT;
}

int main(void) {
    wf_config c;
    wf_config_default(&c);
    c.arch = WF_ARCH_ENCODER_DECODER;
    c.vocab_size = 3 + LETTERS;
    c.context = T;
    c.n_layer = 1;
    c.n_enc_layer = 1;
    c.n_head = 4;
    c.d_model = 24;
    c.d_ff = 48;
    c.seed = 1;
    wf_model *m = wf_model_create();
    CHECK_OK(wf_model_init(m, &c), m);
    wf_optim o;
    wf_optim_default(&o);
    o.lr = 5e-3f;
    o.warmup = STEPS / 10;
    o.decay_steps = STEPS - STEPS / 10;
    o.weight_decay = 0.01f;
    CHECK_OK(wf_model_set_optim(m, &o), m);

    uint64_t rng = 88172645463325252ULL;
    example test[HELD_OUT];
    for (int k = 0; k < HELD_OUT; k++) test[k] = draw(&rng);

    /* each batch: source = the string, decoder input = bos + reversed, target = reversed + eos;
     * both sides padded to their longest, with lengths */
    int32_t src[B * S], in[B * T], tg[B * T], src_len[B], len[B];
    wf_batch b = {in, NULL, len, tg, NULL, src, src_len, B, T, S};
    wf_step_info info;
    float first = 0;
    int rejected = 0;
    for (int step = 0; step < STEPS; step++) {
        for (int i = 0; i < B; i++) {
            example e;
            int held;
            do {
                e = draw(&rng);
                held = 0;
                for (int k = 0; k < HELD_OUT && !held; k++) held = same(&e, &test[k]);
                rejected += held;
            } while (held);
            memset(src + i * S, 0, S * sizeof(int32_t));
            memcpy(src + i * S, e.x, (size_t)e.n * sizeof(int32_t));
            src_len[i] = e.n;
            in[i * T] = BOS;
            for (int t = 0; t < e.n; t++) in[i * T + 1 + t] = tg[i * T + t] = e.x[e.n - 1 - t];
            tg[i * T + e.n] = EOS;
            len[i] = e.n + 1;
            for (int t = e.n + 1; t < T; t++) in[i * T + t] = tg[i * T + t] = 0;
        }
        CHECK_OK(wf_model_step(m, &b, &info), m);
        if (step == 0) first = info.loss;
    }
    double greedy = accuracy(m, test, 1), beam = accuracy(m, test, 4);
    printf("reverse strings: loss %.3f -> %.4f in %d steps of %d (%d held-out draws rejected); "
           "held-out exact match: greedy %.1f%%, beam 4 %.1f%%\n", first, info.loss, STEPS, B, rejected,
           100 * greedy, 100 * beam);
    CHECK(greedy >= 0.9, "greedy exact match %.3f < 0.9", greedy);
    CHECK(beam >= 0.9, "beam exact match %.3f < 0.9", beam);
    wf_model_free(m);
    return check_summary("test_seq2seq");
}
