/* Encoder-decoder decoding. The source goes through the encoder once; every decoder layer's
 * cross-attention keys and values of it are computed once and cached. The decoder then
 * runs one position at a time per hypothesis, with a KV cache per hypothesis, through the
 * same layer forward as training (wf_stack_decode).
 *
 * Beam search of width K (K = 1 is greedy decoding exactly): every live hypothesis is
 * extended by every token; of the 2K best extensions by summed log-probability, those
 * ending in eos among the K best finish, the best K others stay live (at most K of the
 * 2K end in eos, one per hypothesis, so K live ones always remain). Scores only fall as a
 * hypothesis grows, so once the best finished score is at least the best live one, no
 * live hypothesis can overtake it and the search stops: the result is exact for that
 * beam. Ties go to the lower hypothesis index, then the lower token id.
 * Every buffer was allocated with the model (wf_gen_carve); nothing here allocates. */
#include "model.h"

/* The source through the encoder (one layer's scratch, reused), then the cross keys and
 * values of every decoder layer into g->xkv. */
static void encode_source(wf_model *m, const int32_t *src, int S) {
    wf_gen *g = &m->gen;
    const int C = m->d.C;
    wf_stack_embed(m, WF_STACK_ENC, g->enc_x, NULL, src, NULL, 1, S, 0, NULL);
    const wf_stack_run r = {.io = {.B = 1, .T = S}, .scratch = &g->enc};
    wf_stack_forward(m, WF_STACK_ENC, &r, g->enc_x);
    const wf_layer_ctx ctx = wf_model_layer_ctx(m);
    wf_norm_forward(&ctx, g->enc_out, g->enc_mean, g->enc_rstd, g->enc_x, m->p.enc_lnfw, m->p.enc_lnfb, S);
    for (int l = 0; l < m->d.L; l++) {
        wf_layer_w w;
        wf_layer_weights(m, WF_STACK_MAIN, l, 0, &w);
        wf_linear_forward(g->xkv + (size_t)l * m->d.T * 2 * C, g->enc_out, w.ckvw, w.ckvb, S, C, 2 * C, m->pool);
    }
}

/* Hypothesis k reads token at position pos; its log-probabilities of the next token land
 * in g->logp[k]. Returns the first id whose logit is NaN or infinite (weights that overflow
 * float32: there is no distribution to search), or -1. */
static int32_t decoder_step(wf_model *m, int k, int32_t token, int pos, int S) {
    wf_gen *g = &m->gen;
    const int V = m->d.V;
    const size_t cache = (size_t)k * m->d.L * m->d.T * m->d.KC; /* hypothesis k's caches */
    wf_stack_decode(m, &token, 1, pos, g->kcache + cache, g->vcache + cache, S, 0);
    wf_head_forward(m, g->logits, g->lnf, g->lnf_mean, g->lnf_rstd, g->x, 1);
    int32_t bad = wf_first_non_finite(g->logits, V);
    if (bad >= 0) return bad;
    /* log-softmax, in double */
    double maxz = g->logits[0], sum = 0;
    for (int v = 1; v < V; v++) maxz = g->logits[v] > maxz ? g->logits[v] : maxz;
    for (int v = 0; v < V; v++) sum += exp((double)g->logits[v] - maxz);
    const double lse = maxz + log(sum);
    for (int v = 0; v < V; v++) g->logp[(size_t)k * V + v] = (wf_real)((double)g->logits[v] - lse);
    return -1;
}

/* Inserts a candidate into the list sorted by falling score, kept to cap entries. */
static void offer(wf_gen *g, int *n, int cap, wf_real score, int32_t beam, int32_t tok) {
    if (*n == cap && !(score > g->cand_score[cap - 1])) return;
    int i = *n < cap ? (*n)++ : cap - 1;
    for (; i > 0 && score > g->cand_score[i - 1]; i--) {
        g->cand_score[i] = g->cand_score[i - 1];
        g->cand_beam[i] = g->cand_beam[i - 1];
        g->cand_tok[i] = g->cand_tok[i - 1];
    }
    g->cand_score[i] = score;
    g->cand_beam[i] = beam;
    g->cand_tok[i] = tok;
}

static void swap_ptr(wf_real **a, wf_real **b) {
    wf_real *t = *a;
    *a = *b;
    *b = t;
}

wf_status wf_model_beam_search(wf_model *m, const int32_t *src, int32_t S, int32_t bos, int32_t eos, int32_t beam,
                               int32_t max_new, int32_t *out, int32_t *n_out) {
    WF_NEED_READY(m);
    if (!m->d.xa) return WF_ERR(m, WF_ERR_STATE, "wf_model_beam_search needs an encoder-decoder (arch 2)");
    const int32_t T = m->cfg.context, V = m->cfg.vocab_size;
    if (!src || S < 1 || S > T) return WF_ERR(m, WF_ERR_ARG, "the source needs 1 to context = %d tokens, not %d", T, S);
    if (!out || !n_out) return WF_ERR(m, WF_ERR_ARG, "out and n_out must not be NULL");
    if (beam < 1 || beam > m->cfg.max_beam)
        return WF_ERR(m, WF_ERR_ARG, "beam %d is outside [1, max_beam = %d]", beam, m->cfg.max_beam);
    if (max_new < 1 || max_new > T) return WF_ERR(m, WF_ERR_ARG, "max_new %d is outside [1, context = %d]", max_new, T);
    if (bos < 0 || bos >= V || eos < 0 || eos >= V)
        return WF_ERR(m, WF_ERR_TOKEN, "bos %d and eos %d must be in [0, %d)", bos, eos, V);
    wf_status st = wf_model_check_ids(m, src, (size_t)S, 0, "source");
    if (st != WF_OK) return st;

    wf_gen *g = &m->gen;
    const int K = beam, L = m->d.L;
    const size_t KC = m->d.KC, layer_cache = (size_t)T * KC, row = (size_t)T + 1;
    g->active = 0; /* the decoder-only generation state is overwritten */
    encode_source(m, src, S);

    int live = 1;
    g->seq[0] = bos;
    g->score[0] = 0;
    int best_len = 0;
    wf_real best_score = 0;
    for (int t = 0; t < max_new; t++) {
        for (int k = 0; k < live; k++) {
            int32_t bad = decoder_step(m, k, g->seq[k * row + t], t, S);
            if (bad >= 0) {
                double x = g->logits[bad];
                return WF_ERR(m, WF_ERR_NUMERIC, "the logits are not finite (token %d's is %s at step %d): the weights "
                              "overflow float32 somewhere on the way; nothing was decoded", bad,
                              x != x ? "NaN" : x > 0 ? "+inf" : "-inf", t);
            }
        }
        int n = 0;
        const int cap = 2 * K;
        for (int k = 0; k < live; k++)
            for (int32_t v = 0; v < V; v++) offer(g, &n, cap, g->score[k] + g->logp[(size_t)k * V + v], k, v);
        int next = 0;
        for (int r = 0; r < n && next < K; r++) {
            const int k = g->cand_beam[r];
            const int32_t v = g->cand_tok[r];
            const wf_real s = g->cand_score[r];
            if (v == eos) {
                if (r < K && (best_len == 0 || s > best_score)) {
                    memcpy(g->best, g->seq + k * row + 1, (size_t)t * sizeof(int32_t));
                    g->best[t] = eos;
                    best_len = t + 1;
                    best_score = s;
                }
                continue;
            }
            memcpy(g->seq_alt + next * row, g->seq + k * row, (size_t)(t + 1) * sizeof(int32_t));
            g->seq_alt[next * row + t + 1] = v;
            g->score_alt[next] = s;
            if (K > 1) {
                /* the new hypothesis continues its parent's cache, positions 0..t */
                for (int l = 0; l < L; l++) {
                    size_t to = ((size_t)next * L + l) * layer_cache, from = ((size_t)k * L + l) * layer_cache;
                    memcpy(g->kalt + to, g->kcache + from, (size_t)(t + 1) * KC * sizeof(wf_real));
                    memcpy(g->valt + to, g->vcache + from, (size_t)(t + 1) * KC * sizeof(wf_real));
                }
            }
            next++;
        }
        /* with K = 1 the only parent is hypothesis 0, whose cache stays where it is */
        int32_t *ts = g->seq;
        g->seq = g->seq_alt;
        g->seq_alt = ts;
        swap_ptr(&g->score, &g->score_alt);
        if (K > 1) {
            swap_ptr(&g->kcache, &g->kalt);
            swap_ptr(&g->vcache, &g->valt);
        }
        live = next;
        if (live == 0 || (best_len > 0 && best_score >= g->score[0])) break;
    }
    if (best_len > 0 && (live == 0 || best_score >= g->score[0])) {
        memcpy(out, g->best, (size_t)best_len * sizeof(int32_t));
        *n_out = best_len;
    } else {
        /* no hypothesis finished within max_new tokens: the best live one, without eos */
        memcpy(out, g->seq + 1, (size_t)max_new * sizeof(int32_t));
        *n_out = max_new;
    }
    m->err[0] = 0;
    return WF_OK;
}
