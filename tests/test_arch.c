/* The architectures through the public API (fp32): the seeds' properties on whole models
 * (decoder causality P1, attention rows sum to 1 with zero weight on padding, the decoder
 * seeing the encoder only through cross-attention keys and values), padding masks against
 * the unpadded sequences, KV caches against full forwards, beam search against exhaustive
 * search, dropout in training only, and the errors of the new entry points. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "model.h" /* the saved attention weights of self-attention layers */

enum { D = WF_ARCH_DECODER, EN = WF_ARCH_ENCODER, ED = WF_ARCH_ENCODER_DECODER };
/* Exhaustive-search trials, with weights near init (scale 0.05): flat enough that greedy
 * misses the best sequence in some of them, so the beam's search matters. */
enum { TRIALS = 40 };
#define SCALE 0.05f

static wf_config config(int arch, int norm, int block, int act, int positions) {
    wf_config c;
    wf_config_default(&c);
    c.arch = arch;
    c.norm = norm;
    c.block = block;
    c.activation = act;
    c.positions = positions;
    c.vocab_size = 13;
    c.context = 12;
    c.n_layer = 2;
    c.n_enc_layer = arch == ED ? 2 : 0;
    c.n_head = 2;
    c.d_model = 16;
    c.d_ff = 24;
    c.seed = 5;
    return c;
}

/* Weights perturbed by scale * N(0, 1): 0.2 is a trained net's scale, so that every path
 * carries signal. */
static wf_model *build_scaled(const wf_config *c, float scale) {
    wf_model *m = wf_model_create();
    CHECK_OK(wf_model_init(m, c), m);
    wf_rng r;
    wf_rng_seed(&r, 99);
    for (int i = 0; i < model_info(m).n_tensors; i++) {
        wf_tensor_info t;
        wf_model_get_tensor(m, i, &t);
        for (int j = 0; j < t.size; j++) wf_model_params(m)[t.offset + j] += scale * (float)wf_rng_normal(&r);
    }
    return m;
}

static wf_model *build(const wf_config *c) { return build_scaled(c, 0.2f); }

static void fill_ids(int32_t *x, int n, int V, uint32_t seed) {
    wf_rng r;
    wf_rng_seed(&r, seed);
    for (int i = 0; i < n; i++) x[i] = (int32_t)(wf_rng_u32(&r) % V);
}

static float max_diff(const float *a, const float *b, size_t n) {
    float w = 0;
    for (size_t i = 0; i < n; i++) w = fmaxf(w, fabsf(a[i] - b[i]));
    return w;
}

static float *copy(const float *x, size_t n) {
    float *c = malloc(n * sizeof(float));
    memcpy(c, x, n * sizeof(float));
    return c;
}

static const wf_config *variants(int arch, int *n) {
    static wf_config v[4];
    v[0] = config(arch, WF_NORM_LAYERNORM, WF_BLOCK_PRE_LN, WF_ACT_GELU, WF_POS_LEARNED);
    v[1] = config(arch, WF_NORM_LAYERNORM, WF_BLOCK_POST_LN, WF_ACT_RELU, WF_POS_SINUSOIDAL);
    v[2] = config(arch, WF_NORM_RMSNORM, WF_BLOCK_PRE_LN, WF_ACT_SWIGLU, WF_POS_ROPE);
    v[3] = config(arch, WF_NORM_RMSNORM, WF_BLOCK_POST_LN, WF_ACT_GELU, WF_POS_ROPE);
    v[2].tied_head = 0;
    v[2].bias = 0;
    *n = 4;
    return v;
}

static const char *variant_name(int i) {
    static const char *names[] = {"Pre-LN LayerNorm GELU learned", "Post-LN LayerNorm ReLU sinusoidal",
                                  "Pre-LN RMSNorm SwiGLU RoPE untied", "Post-LN RMSNorm GELU RoPE"};
    return names[i];
}

/* A batch with a source for encoder-decoders. */
static wf_batch batch_of(const int32_t *in, const int32_t *len, const int32_t *src, const int32_t *slen, int B,
                         int T, int S) {
    wf_batch b;
    memset(&b, 0, sizeof b);
    b.inputs = in;
    b.lengths = len;
    b.src = src;
    b.src_lengths = slen;
    b.B = B;
    b.T = T;
    b.S = src ? S : 0;
    return b;
}

/* Seed 000, P1: with a causal mask, changing the decoder's inputs after position t changes
 * no logit at or before t; the encoder (bidirectional) changes everywhere. */
static void test_causality(void) {
    for (int arch = 0; arch < 3; arch++) {
        int nv;
        const wf_config *v = variants(arch, &nv);
        for (int k = 0; k < nv; k++) {
            wf_model *m = build(&v[k]);
            const int T = 10, S = 7, V = v[k].vocab_size, t = 4;
            int32_t a[10], b[10], src[7];
            fill_ids(a, T, V, 1);
            fill_ids(src, S, V, 2);
            memcpy(b, a, sizeof a);
            for (int i = t + 1; i < T; i++) b[i] = (b[i] + 3) % V;
            wf_batch ba = batch_of(a, NULL, arch == ED ? src : NULL, NULL, 1, T, S);
            wf_batch bb = batch_of(b, NULL, arch == ED ? src : NULL, NULL, 1, T, S);
            CHECK_OK(wf_model_forward(m, &ba, NULL), m);
            float *la = copy(wf_model_logits(m), (size_t)T * V);
            CHECK_OK(wf_model_forward(m, &bb, NULL), m);
            const float *lb = wf_model_logits(m);
            float before = max_diff(la, lb, (size_t)(t + 1) * V);
            float after = max_diff(la + (t + 1) * V, lb + (t + 1) * V, (size_t)(T - t - 1) * V);
            if (arch == EN) {
                CHECK(before > 1e-4f, "encoder %s: bidirectional, yet earlier outputs ignore later tokens", variant_name(k));
            } else {
                CHECK(before == 0, "%s %s: a logit at or before t changed by %g", arch == D ? "decoder" : "encoder-decoder",
                      variant_name(k), before);
            }
            CHECK(after > 1e-4f, "%s: later logits did not change: the test would prove nothing", variant_name(k));
            if (arch == ED) {
                /* and the decoder does read the source */
                int32_t src2[7];
                memcpy(src2, src, sizeof src);
                src2[S - 1] = (src2[S - 1] + 1) % V;
                wf_batch bs = batch_of(a, NULL, src2, NULL, 1, T, S);
                CHECK_OK(wf_model_forward(m, &bs, NULL), m);
                CHECK(max_diff(la, wf_model_logits(m), (size_t)T * V) > 1e-4f, "the source's last token changed nothing");
            }
            free(la);
            wf_model_free(m);
        }
    }
    printf("causality: decoders and encoder-decoders causal, encoders bidirectional (4 block variants each)\n");
}

/* Padding: a padded batch gives each sequence exactly what it gets alone and unpadded, and
 * what sits in the padding changes nothing. */
static void test_padding(void) {
    double worst = 0;
    for (int arch = 0; arch < 3; arch++) {
        int nv;
        const wf_config *v = variants(arch, &nv);
        for (int k = 0; k < nv; k++) {
            wf_model *m = build(&v[k]);
            const int B = 3, T = 9, S = 8, V = v[k].vocab_size;
            const int32_t len[3] = {9, 5, 2}, slen[3] = {3, 8, 6};
            int32_t in[27], tg[27], src[24];
            fill_ids(in, B * T, V, 3);
            fill_ids(tg, B * T, V, 4);
            fill_ids(src, B * S, V, 5);
            wf_batch b = batch_of(in, len, arch == ED ? src : NULL, arch == ED ? slen : NULL, B, T, S);
            b.targets = tg;
            float loss;
            CHECK_OK(wf_model_forward(m, &b, &loss), m);
            float *full = copy(wf_model_logits(m), (size_t)B * T * V);
            /* garbage in the padding */
            for (int i = 0; i < B; i++) {
                for (int t = len[i]; t < T; t++) {
                    in[i * T + t] = (in[i * T + t] + 5) % V;
                    tg[i * T + t] = (tg[i * T + t] + 1) % V;
                }
                for (int s = slen[i]; s < S; s++) src[i * S + s] = (src[i * S + s] + 7) % V;
            }
            float loss2;
            CHECK_OK(wf_model_forward(m, &b, &loss2), m);
            for (int i = 0; i < B; i++) {
                float d = max_diff(full + (size_t)i * T * V, wf_model_logits(m) + (size_t)i * T * V, (size_t)len[i] * V);
                CHECK(d == 0, "%s: padding content changed real logits of sequence %d by %g", variant_name(k), i, d);
            }
            CHECK(loss == loss2, "%s: padding content changed the loss %g -> %g", variant_name(k), loss, loss2);
            /* each sequence alone, without padding */
            for (int i = 0; i < B; i++) {
                wf_batch one = batch_of(in + i * T, NULL, arch == ED ? src + i * S : NULL, NULL, 1, len[i],
                                        arch == ED ? slen[i] : 0);
                CHECK_OK(wf_model_forward(m, &one, NULL), m);
                float d = max_diff(full + (size_t)i * T * V, wf_model_logits(m), (size_t)len[i] * V);
                worst = fmax(worst, d);
                CHECK(d < 1e-5f, "%s: sequence %d alone differs from its padded self by %g", variant_name(k), i, d);
            }
            free(full);
            wf_model_free(m);
        }
    }
    printf("padding: padded sequences = unpadded ones within %.1e; padding content changes nothing\n", worst);
}

/* The saved attention weights of a whole model: rows are distributions, masked keys get 0
 * (self-attention through the activation table, cross-attention through the public call). */
static void test_attention_rows(void) {
    wf_config c = config(ED, WF_NORM_LAYERNORM, WF_BLOCK_PRE_LN, WF_ACT_GELU, WF_POS_LEARNED);
    wf_model *m = build(&c);
    const int B = 2, T = 6, S = 5, V = c.vocab_size, NH = c.n_head;
    const int32_t len[2] = {6, 3}, slen[2] = {5, 2};
    int32_t in[12], src[10];
    fill_ids(in, B * T, V, 6);
    fill_ids(src, B * S, V, 7);
    wf_batch b = batch_of(in, len, src, slen, B, T, S);
    CHECK_OK(wf_model_forward(m, &b, NULL), m);
    double worst_row = 0, masked = 0;
    int rows = 0;
    for (int l = 0; l < c.n_layer; l++) {
        wf_layer_acts la;
        wf_layer_carve(&la, m->a.layers + l * m->layer_elems[WF_STACK_MAIN], &m->d, B * T, T, S, B * S, 1, 0);
        const float *cross = wf_model_attention(m, l, 1);
        CHECK(cross == la.catt, "wf_model_attention (cross) returns layer %d's saved weights", l);
        for (int which = 0; which < 2; which++) {
            const float *att = which ? cross : la.att;
            const int Tk = which ? S : T;
            for (int i = 0; i < B; i++)
                for (int h = 0; h < NH; h++)
                    for (int q = 0; q < T; q++) {
                        const float *a = att + (((size_t)i * NH + h) * T + q) * Tk;
                        double s = 0;
                        for (int j = 0; j < Tk; j++) {
                            s += a[j];
                            int hidden = which ? j >= slen[i] : (j > q || j >= len[i]);
                            if (hidden) masked += fabsf(a[j]);
                        }
                        worst_row = fmax(worst_row, fabs(s - 1));
                        rows++;
                    }
        }
    }
    CHECK(wf_model_attention(m, c.n_layer, 1) == NULL && wf_model_attention(m, -1, 1) == NULL, "layer out of range");
    printf("attention rows: %d rows (self and cross), |sum - 1| <= %.1e, weight on masked keys %g\n", rows, worst_row,
           masked);
    CHECK(worst_row < 1e-6, "a row sums to 1 +- %g", worst_row);
    CHECK(masked == 0, "masked keys (future, padding) got weight %g", masked);
    wf_model_free(m);
}

/* Seed 000, eq. 8: the decoder reads the encoder only through each layer's cross-attention
 * keys and values, K V = enc ckvw^T. Zero column j of every ckvw and no move of the encoder
 * output along channel j (made through the encoder's final norm bias) reaches a logit or a
 * gradient; a move along a channel the keys and values read does. */
static void test_cross_through_kv(void) {
    wf_config c = config(ED, WF_NORM_LAYERNORM, WF_BLOCK_POST_LN, WF_ACT_GELU, WF_POS_SINUSOIDAL);
    wf_model *m = build(&c);
    const int B = 2, T = 5, S = 6, V = c.vocab_size, C = c.d_model, j = 3, i = 7;
    int32_t in[10], tg[10], src[12];
    fill_ids(in, B * T, V, 8);
    fill_ids(tg, B * T, V, 9);
    fill_ids(src, B * S, V, 10);
    wf_batch b = batch_of(in, NULL, src, NULL, B, T, S);
    b.targets = tg;
    for (int l = 0; l < c.n_layer; l++)
        for (int r = 0; r < 2 * C; r++) m->p.ckvw[((size_t)l * 2 * C + r) * C + j] = 0;
    float loss;
    CHECK_OK(wf_model_backward(m, &b, &loss), m);
    float *base = copy(wf_model_logits(m), (size_t)B * T * V);
    CHECK(m->g.enc_lnfb[j] == 0 && m->g.enc_lnfw[j] == 0, "channel j of the encoder output got gradient %g, %g",
          m->g.enc_lnfb[j], m->g.enc_lnfw[j]);
    CHECK(m->g.enc_lnfb[i] != 0, "channel i's gradient is 0: the test would prove nothing");
    m->p.enc_lnfb[j] += 1.5f;
    CHECK_OK(wf_model_forward(m, &b, NULL), m);
    float dj = max_diff(base, wf_model_logits(m), (size_t)B * T * V);
    m->p.enc_lnfb[j] -= 1.5f;
    m->p.enc_lnfb[i] += 1.5f;
    CHECK_OK(wf_model_forward(m, &b, NULL), m);
    float di = max_diff(base, wf_model_logits(m), (size_t)B * T * V);
    printf("cross-attention: moving the encoder output off the keys' and values' rows changes logits by %g, "
           "along them by %g\n", dj, di);
    CHECK(dj == 0, "the decoder saw the encoder outside keys and values (%g)", dj);
    CHECK(di > 1e-4f, "moving a channel the keys read changed nothing");
    free(base);
    wf_model_free(m);
}

/* The decoder-only KV cache gives the full forward's logits for every block variant. */
static void test_decoder_cache(void) {
    int nv;
    const wf_config *v = variants(D, &nv);
    double worst = 0;
    for (int k = 0; k < nv; k++) {
        wf_model *m = build(&v[k]);
        const int T = v[k].context, V = v[k].vocab_size;
        int32_t seq[12];
        fill_ids(seq, T, V, 11);
        wf_batch b = batch_of(seq, NULL, NULL, NULL, 1, T, 0);
        CHECK_OK(wf_model_forward(m, &b, NULL), m);
        float *full = copy(wf_model_logits(m), (size_t)T * V);
        CHECK_OK(wf_model_gen_start(m, seq, 1, 0), m);
        wf_sampling greedy = {0, 0, 1, 0, 0};
        for (int t = 0; t < T; t++) {
            worst = fmax(worst, max_diff(wf_model_gen_logits(m), full + (size_t)t * V, V));
            if (t + 1 < T) CHECK_OK(wf_model_gen_start(m, seq, t + 2, 0), m);
        }
        /* and decoding step by step (one token at a time over the cache) agrees too */
        int32_t tok;
        CHECK_OK(wf_model_gen_start(m, seq, 3, 0), m);
        CHECK_OK(wf_model_gen_next(m, &greedy, NULL, &tok, NULL, 0, NULL), m);
        int best = 0;
        for (int u = 1; u < V; u++)
            if (full[2 * V + u] > full[2 * V + best]) best = u;
        CHECK(tok == best, "%s: greedy after 3 tokens %d, full forward %d", variant_name(k), tok, best);
        free(full);
        wf_model_free(m);
    }
    printf("decoder KV cache: max |cached - full| logit %.1e over 4 block variants\n", worst);
    CHECK(worst < 1e-5, "cached logits differ from the full forward by %g", worst);
}

/* log p of each output token given the prefix, from one teacher-forced forward. */
static double sequence_score(wf_model *m, const int32_t *src, int S, int32_t bos, const int32_t *y, int n) {
    int32_t in[16];
    in[0] = bos;
    for (int t = 1; t < n; t++) in[t] = y[t - 1];
    wf_batch b = batch_of(in, NULL, src, NULL, 1, n, S);
    CHECK_OK(wf_model_forward(m, &b, NULL), m);
    const float *lg = wf_model_logits(m);
    const int V = m->cfg.vocab_size;
    double total = 0;
    for (int t = 0; t < n; t++) {
        double mx = lg[t * V], s = 0;
        for (int v = 1; v < V; v++) mx = fmax(mx, lg[t * V + v]);
        for (int v = 0; v < V; v++) s += exp(lg[t * V + v] - mx);
        total += lg[t * V + y[t]] - mx - log(s);
    }
    return total;
}

/* Encoder-decoder decoding: greedy equals the argmax of a teacher-forced forward at every
 * step (the self and cross caches are right), and a beam wide enough to keep every
 * candidate finds the best sequence of an exhaustive search. */
static void test_seq2seq_decode(void) {
    int nv;
    const wf_config *v = variants(ED, &nv);
    for (int k = 0; k < nv; k++) {
        wf_model *m = build(&v[k]);
        const int V = v[k].vocab_size, S = 5;
        const int32_t bos = 1, eos = 2;
        int32_t src[5], out[12], n_out;
        fill_ids(src, S, V, 12 + k);
        CHECK_OK(wf_model_beam_search(m, src, S, bos, eos, 1, 10, out, &n_out), m);
        CHECK(n_out >= 1 && n_out <= 10, "greedy length %d", n_out);
        int32_t in[12];
        in[0] = bos;
        for (int t = 1; t < n_out; t++) in[t] = out[t - 1];
        wf_batch b = batch_of(in, NULL, src, NULL, 1, n_out, S);
        CHECK_OK(wf_model_forward(m, &b, NULL), m);
        for (int t = 0; t < n_out; t++) {
            const float *lg = wf_model_logits(m) + (size_t)t * V;
            int best = 0;
            for (int u = 1; u < V; u++)
                if (lg[u] > lg[best]) best = u;
            CHECK(best == out[t], "%s: greedy step %d chose %d, the full forward %d", variant_name(k), t, out[t], best);
        }
        for (int t = 0; t + 1 < n_out; t++) CHECK(out[t] != eos, "eos inside the output");
        wf_model_free(m);
    }

    /* exhaustive search over a 4-token vocabulary (bos 0, eos 1) up to 3 new tokens */
    wf_config c = config(ED, WF_NORM_LAYERNORM, WF_BLOCK_PRE_LN, WF_ACT_GELU, WF_POS_LEARNED);
    c.vocab_size = 4;
    c.max_beam = 64;
    int agree = 0, beats_greedy = 0;
    for (int trial = 0; trial < TRIALS; trial++) {
        c.seed = 20 + trial;
        wf_model *m = build_scaled(&c, SCALE);
        const int S = 4, max_new = 3;
        int32_t src[4], best_seq[3], out[3], n_out;
        fill_ids(src, S, 4, 30 + trial);
        double best = -INFINITY;
        int best_n = 0;
        /* every sequence: y1..yn with eos only last (finished), or 3 tokens without eos */
        for (int n = 1; n <= max_new; n++) {
            int count = 1;
            for (int t = 0; t < n; t++) count *= 4;
            for (int code = 0; code < count; code++) {
                int32_t y[3];
                int x = code, ok = 1;
                for (int t = 0; t < n; t++, x /= 4) y[t] = x % 4;
                for (int t = 0; t < n - 1; t++) ok &= y[t] != 1;
                if (!ok || (n < max_new && y[n - 1] != 1)) continue;
                double s = sequence_score(m, src, S, 0, y, n);
                if (s > best + 1e-9) {
                    best = s;
                    best_n = n;
                    memcpy(best_seq, y, sizeof y);
                }
            }
        }
        CHECK_OK(wf_model_beam_search(m, src, S, 0, 1, 64, max_new, out, &n_out), m);
        double got = sequence_score(m, src, S, 0, out, n_out);
        agree += n_out == best_n && !memcmp(out, best_seq, (size_t)n_out * sizeof(int32_t));
        CHECK(got >= best - 1e-4, "trial %d: beam 64 found log p %.6f, exhaustive %.6f", trial, got, best);
        int32_t g[3], gn;
        CHECK_OK(wf_model_beam_search(m, src, S, 0, 1, 1, max_new, g, &gn), m);
        beats_greedy += got > sequence_score(m, src, S, 0, g, gn) + 1e-6;
        wf_model_free(m);
    }
    printf("seq2seq decoding: greedy = teacher-forced argmax (4 block variants); beam 64 = exhaustive search in %d of %d "
           "models (better than greedy in %d)\n", agree, TRIALS, beats_greedy);
    CHECK(agree == TRIALS, "a wide beam missed the exhaustive optimum");
    CHECK(beats_greedy > 0, "greedy was optimal in every trial: the test would not see a beam that acts greedily");
}

/* Dropout: only in training, the same masks for the same step, none in evaluation. */
static void test_dropout(void) {
    wf_config c = config(ED, WF_NORM_LAYERNORM, WF_BLOCK_PRE_LN, WF_ACT_GELU, WF_POS_LEARNED);
    wf_config cd = c;
    cd.dropout = 0.3f;
    wf_model *plain = wf_model_create(), *drop = wf_model_create();
    CHECK_OK(wf_model_init(plain, &c), plain);
    CHECK_OK(wf_model_init(drop, &cd), drop);
    const int B = 4, T = 8, S = 8, V = c.vocab_size;
    int32_t in[32], tg[32], src[32];
    fill_ids(in, B * T, V, 13);
    fill_ids(tg, B * T, V, 14);
    fill_ids(src, B * S, V, 15);
    wf_batch b = batch_of(in, NULL, src, NULL, B, T, S);
    b.targets = tg;
    float e1, e2, t1, t2, t3;
    CHECK_OK(wf_model_forward(plain, &b, &e1), plain);
    CHECK_OK(wf_model_forward(drop, &b, &e2), drop);
    CHECK(e1 == e2, "evaluation with dropout configured differs from without: %g vs %g", e1, e2);
    CHECK_OK(wf_model_backward(drop, &b, &t1), drop);
    CHECK_OK(wf_model_backward(drop, &b, &t2), drop);
    CHECK(t1 == t2, "the same step drew other masks: %g vs %g", t1, t2);
    CHECK(t1 != e2, "training loss equals evaluation loss: dropout did nothing");
    /* the masks drop about p of the embedding entries, and scale the rest by 1/(1-p) */
    int zeros = 0, n = B * T * c.d_model;
    for (int i = 0; i < n; i++) {
        float mk = drop->a.emb_mask[i];
        zeros += mk == 0;
        CHECK(mk == 0 || fabsf(mk - 1 / 0.7f) < 1e-6f, "mask value %g", mk);
    }
    double frac = (double)zeros / n;
    CHECK(fabs(frac - 0.3) < 0.05, "dropped fraction %.3f, want 0.3", frac);
    wf_step_info info;
    CHECK_OK(wf_model_step(drop, &b, &info), drop);
    CHECK_OK(wf_model_backward(drop, &b, &t3), drop);
    CHECK(t3 != t1, "the next step reused the masks");
    printf("dropout: evaluation unaffected; training loss %.4f vs evaluation %.4f; %.3f of entries dropped\n", t1, e2,
           frac);
    wf_model_free(plain);
    wf_model_free(drop);
}

/* An encoder with vectors in and a mean squared error: the loss is the mean of the real
 * rows' squared errors of wf_model_hidden. */
static void test_encoder_mse(void) {
    wf_config c = config(EN, WF_NORM_LAYERNORM, WF_BLOCK_POST_LN, WF_ACT_RELU, WF_POS_SINUSOIDAL);
    wf_model *m = build(&c);
    const int B = 2, T = 6, C = c.d_model;
    const int32_t len[2] = {6, 4};
    float vin[2 * 6 * 16], vtg[2 * 6 * 16];
    wf_rng r;
    wf_rng_seed(&r, 16);
    for (int i = 0; i < B * T * C; i++) {
        vin[i] = (float)wf_rng_normal(&r);
        vtg[i] = 0.5f * (float)wf_rng_normal(&r);
    }
    wf_batch b;
    memset(&b, 0, sizeof b);
    b.input_vecs = vin;
    b.target_vecs = vtg;
    b.lengths = len;
    b.B = B;
    b.T = T;
    float loss;
    CHECK_OK(wf_model_forward(m, &b, &loss), m);
    CHECK(wf_model_logits(m) == NULL, "an MSE forward computes no logits");
    const float *h = wf_model_hidden(m);
    double sum = 0;
    int n = 0;
    for (int i = 0; i < B; i++)
        for (int t = 0; t < len[i]; t++)
            for (int k = 0; k < C; k++, n++) {
                double d = h[(i * T + t) * C + k] - vtg[(i * T + t) * C + k];
                sum += d * d;
            }
    CHECK(fabs(sum / n - loss) < 1e-6 * loss, "MSE %g, from wf_model_hidden %g", loss, sum / n);
    float first = loss;
    wf_optim o;
    wf_optim_default(&o);
    o.lr = 1e-2f;
    CHECK_OK(wf_model_set_optim(m, &o), m);
    wf_step_info info;
    for (int s = 0; s < 30; s++) CHECK_OK(wf_model_step(m, &b, &info), m);
    printf("encoder MSE on vectors: %.4f -> %.4f in 30 steps\n", first, info.loss);
    CHECK(info.loss < 0.7f * first, "MSE did not fall: %g -> %g", first, info.loss);
    wf_model_free(m);
}

/* Bad calls fail with a message and change nothing. */
static void test_errors(void) {
    wf_config ce = config(ED, WF_NORM_LAYERNORM, WF_BLOCK_PRE_LN, WF_ACT_GELU, WF_POS_LEARNED);
    wf_config cd = config(D, WF_NORM_LAYERNORM, WF_BLOCK_PRE_LN, WF_ACT_GELU, WF_POS_LEARNED);
    wf_config cn = config(EN, WF_NORM_LAYERNORM, WF_BLOCK_PRE_LN, WF_ACT_GELU, WF_POS_LEARNED);
    wf_model *ed = build(&ce), *dec = build(&cd), *enc = build(&cn);
    int32_t in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, src[8] = {3, 3, 3, 3, 3, 3, 3, 3}, out[8], n_out, tok;
    float vec[8 * 16] = {0};
    wf_batch b = batch_of(in, NULL, NULL, NULL, 1, 8, 0);
    b.targets = in;
    wf_step_info info;
    struct { wf_model *m; wf_batch b; wf_status want; const char *what; } cases[] = {
        {ed, b, WF_ERR_ARG, "src"},
        {dec, batch_of(in, NULL, src, NULL, 1, 8, 8), WF_ERR_ARG, "encoder-decoder"},
        {ed, batch_of(in, NULL, src, NULL, 1, 8, 13), WF_ERR_ARG, "source length"},
        {dec, b, WF_OK, ""},
    };
    cases[1].b.targets = in;
    cases[2].b.targets = in;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        wf_status s = wf_model_step(cases[i].m, &cases[i].b, &info);
        CHECK(s == cases[i].want, "case %zu: %s, want %s (%s)", i, wf_status_string(s), wf_status_string(cases[i].want),
              wf_model_error(cases[i].m));
        CHECK(strstr(wf_model_error(cases[i].m), cases[i].what), "case %zu message: %s", i, wf_model_error(cases[i].m));
    }
    int32_t bad_len[1] = {9};
    wf_batch bl = b;
    bl.lengths = bad_len;
    CHECK(wf_model_step(dec, &bl, &info) == WF_ERR_ARG && strstr(wf_model_error(dec), "lengths"), "lengths > T");
    int32_t bad_src[8] = {3, 3, 3, 99, 3, 3, 3, 3};
    wf_batch bs = batch_of(in, NULL, bad_src, NULL, 1, 8, 8);
    bs.targets = in;
    CHECK(wf_model_step(ed, &bs, &info) == WF_ERR_TOKEN, "source id 99");
    wf_batch bv = b;
    bv.inputs = NULL;
    bv.input_vecs = vec;
    CHECK(wf_model_step(dec, &bv, &info) == WF_ERR_ARG && strstr(wf_model_error(dec), "encoder"), "vectors into a decoder");
    wf_batch bt = b;
    bt.targets = NULL;
    bt.target_vecs = vec;
    CHECK(wf_model_step(dec, &bt, &info) == WF_ERR_ARG, "target vectors for a decoder");
    bt.targets = in;
    bt.inputs = NULL;
    bt.input_vecs = vec;
    CHECK(wf_model_step(enc, &bt, &info) == WF_ERR_ARG && strstr(wf_model_error(enc), "not both"), "both targets");
    CHECK(wf_model_step(enc, NULL, &info) == WF_ERR_ARG, "NULL batch");
    /* generation calls that do not fit the architecture */
    CHECK(wf_model_gen_start(enc, in, 2, 0) == WF_ERR_STATE && strstr(wf_model_error(enc), "encoder"), "generate with an encoder");
    CHECK(wf_model_gen_start(ed, in, 2, 0) == WF_ERR_STATE && strstr(wf_model_error(ed), "wf_model_beam_search"), "generate with an encoder-decoder");
    CHECK(wf_model_beam_search(dec, src, 8, 1, 2, 1, 4, out, &n_out) == WF_ERR_STATE, "seq2seq with a decoder");
    CHECK(wf_model_beam_search(ed, src, 8, 1, 2, ce.max_beam + 1, 4, out, &n_out) == WF_ERR_ARG, "beam > max_beam");
    CHECK(wf_model_beam_search(ed, src, 8, 1, 99, 1, 4, out, &n_out) == WF_ERR_TOKEN, "eos out of range");
    CHECK(wf_model_beam_search(ed, src, 0, 1, 2, 1, 4, out, &n_out) == WF_ERR_ARG, "empty source");
    CHECK(wf_model_beam_search(ed, src, 8, 1, 2, 1, ce.context + 1, out, &n_out) == WF_ERR_ARG, "max_new > context");
    (void)tok;
    /* decoding allocates nothing: the model's memory is what it was */
    wf_memory before, after;
    before = model_info(ed).memory;
    CHECK_OK(wf_model_beam_search(ed, src, 8, 1, 2, ce.max_beam, 8, out, &n_out), ed);
    after = model_info(ed).memory;
    CHECK(before.total == after.total, "decoding changed the model's memory");
    /* the estimate of an encoder-decoder (sources as long as T) is what training takes */
    wf_memory est;
    CHECK(wf_config_memory(&ce, 2, 8, &est, NULL, 0) == WF_OK, "estimate");
    wf_model *fresh = wf_model_create();
    CHECK_OK(wf_model_init(fresh, &ce), fresh);
    int32_t in2[16], src2[16];
    fill_ids(in2, 16, ce.vocab_size, 17);
    fill_ids(src2, 16, ce.vocab_size, 18);
    wf_batch b2 = batch_of(in2, NULL, src2, NULL, 2, 8, 8);
    b2.targets = in2;
    CHECK_OK(wf_model_step(fresh, &b2, &info), fresh);
    after = model_info(fresh).memory;
    CHECK(est.total == after.total, "estimate %.0f, actual %.0f", est.total, after.total);
    wf_model_free(fresh);
    wf_model_free(ed);
    wf_model_free(dec);
    wf_model_free(enc);
}

/* Checkpoints and safetensors carry the new config fields and tensors: an encoder-decoder
 * with dropout and an odd beam width comes back with the same config and outputs. */
static void test_files(void) {
    wf_config c = config(ED, WF_NORM_RMSNORM, WF_BLOCK_POST_LN, WF_ACT_SWIGLU, WF_POS_ROPE);
    c.n_enc_layer = 3;
    c.dropout = 0.125f;
    c.max_beam = 5;
    wf_model *m = build(&c);
    const int B = 2, T = 6, S = 7, V = c.vocab_size;
    const int32_t len[2] = {6, 4}, slen[2] = {7, 3};
    int32_t in[12], src[14];
    fill_ids(in, B * T, V, 19);
    fill_ids(src, B * S, V, 20);
    wf_batch b = batch_of(in, len, src, slen, B, T, S);
    CHECK_OK(wf_model_forward(m, &b, NULL), m);
    float *ref = copy(wf_model_logits(m), (size_t)B * T * V);
    uint8_t *buf;
    int32_t n;
    CHECK_OK(wf_model_save(m, NULL, WF_SAVE_OPTIMIZER, &buf, &n), m);
    wf_model *back = wf_model_create();
    CHECK_OK(wf_model_load(back, NULL, buf, n), back);
    wf_buffer_free(buf);
    wf_config got;
    CHECK_OK(wf_model_get_config(back, &got), back);
    CHECK(memcmp(&got, &c, sizeof c) == 0, "the checkpoint changed the config (n_enc_layer %d, dropout %g, max_beam %d)",
          got.n_enc_layer, got.dropout, got.max_beam);
    CHECK_OK(wf_model_forward(back, &b, NULL), back);
    CHECK(max_diff(ref, wf_model_logits(back), (size_t)B * T * V) == 0, "checkpoint round trip changed the logits");
    uint8_t *st;
    char *json;
    int32_t st_len, json_len;
    CHECK_OK(wf_model_export_safetensors(m, &st, &st_len, &json, &json_len), m);
    CHECK(strstr(json, "\"n_enc_layer\": 3") && strstr(json, "\"max_beam\": 5"), "config.json: %s", json);
    wf_model *imported = wf_model_create();
    CHECK_OK(wf_model_import_safetensors(imported, json, json_len, st, st_len), imported);
    CHECK_OK(wf_model_get_config(imported, &got), imported);
    CHECK(got.n_enc_layer == 3 && got.dropout == c.dropout && got.max_beam == 5 && got.arch == ED,
          "safetensors round trip changed the config");
    CHECK_OK(wf_model_forward(imported, &b, NULL), imported);
    CHECK(max_diff(ref, wf_model_logits(imported), (size_t)B * T * V) == 0, "safetensors round trip changed the logits");
    wf_buffer_free(st);
    wf_buffer_free(json);
    printf("files: an encoder-decoder (RMSNorm, SwiGLU, RoPE, Post-LN, dropout) round-trips through a checkpoint and "
           "safetensors with identical logits\n");
    free(ref);
    wf_model_free(imported);
    wf_model_free(back);
    wf_model_free(m);
}

/* The residual projections start at 0.02 / sqrt(2 x the depth of their own stack): an
 * encoder of 8 layers under a decoder of 1 gets the smaller scale (review #23). */
static double rms_of(wf_model *m, const char *name) {
    for (int i = 0; i < model_info(m).n_tensors; i++) {
        wf_tensor_info t;
        wf_model_get_tensor(m, i, &t);
        if (strcmp(t.name, name)) continue;
        double s = 0;
        for (int32_t j = 0; j < t.size; j++) s += (double)wf_model_params(m)[t.offset + j] * wf_model_params(m)[t.offset + j];
        return sqrt(s / t.size);
    }
    return 0;
}

static void test_init_scales(void) {
    wf_config c = config(ED, 0, 0, 0, 0);
    c.n_layer = 1;
    c.n_enc_layer = 8;
    c.d_model = 64;
    c.d_ff = 128;
    wf_model *m = wf_model_create();
    CHECK_OK(wf_model_init(m, &c), m);
    const char *names[4] = {"enc_attprojw", "enc_fcprojw", "attprojw", "fcprojw"};
    const double want[4] = {0.02 / 4, 0.02 / 4, 0.02 / sqrt(2.0), 0.02 / sqrt(2.0)};
    for (int i = 0; i < 4; i++) {
        double got = rms_of(m, names[i]);
        CHECK(fabs(got / want[i] - 1) < 0.05, "%s starts at scale %.5f, want %.5f", names[i], got, want[i]);
    }
    wf_model_free(m);
}

int main(void) {
    test_init_scales();
    test_causality();
    test_padding();
    test_attention_rows();
    test_cross_through_kv();
    test_decoder_cache();
    test_seq2seq_decode();
    test_dropout();
    test_encoder_mse();
    test_errors();
    test_files();
    return check_summary("test_arch");
}
