/* Generation: the sampler (temperature, top-k, top-p) and decoding one token at a time over
 * the KV cache, on the stacks' forward loop (wf_stack_decode). Every buffer was allocated
 * with the model (wf_gen_carve); nothing here allocates. */
#include "model.h"

/* Reads the window from position 0, up to WF_GEN_ROWS positions per pass through the layers
 * (the same causal attention over the cache as decoding, T rows at once). */
static void prefill(wf_model *m) {
    wf_gen *g = &m->gen;
    const int C = m->d.C, R = m->d.T < WF_GEN_ROWS ? m->d.T : WF_GEN_ROWS;
    for (int pos = 0; pos < g->n; pos += R) {
        const int T = g->n - pos < R ? g->n - pos : R;
        /* only the last position's logits are read: the last layer computes that row alone
         * (the others only cache their keys and values) */
        const int last = pos + T == g->n;
        wf_stack_decode(m, g->window + pos, T, pos, g->kcache, g->vcache, 0, last ? T - 1 : T);
        if (last)
            wf_head_forward(m, g->logits, g->lnf, g->lnf_mean, g->lnf_rstd, g->x + (size_t)(T - 1) * C, 1);
    }
}

/* Higher probability first; ties by lower id, so the order is total and deterministic. */
static int before(const wf_real *p, int32_t a, int32_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); }

static void sort_by_prob(int32_t *order, int n, const wf_real *p) {
    /* Shell sort (Ciura's gaps): no allocation and no comparator context needed. */
    static const int gaps[] = {1750, 701, 301, 132, 57, 23, 10, 4, 1};
    for (int gi = 0; gi < 9; gi++) {
        int gap = gaps[gi];
        for (int i = gap; i < n; i++) {
            int32_t v = order[i];
            int j = i;
            for (; j >= gap && before(p, v, order[j - gap]); j -= gap) order[j] = order[j - gap];
            order[j] = v;
        }
    }
}

/* Below it sampling is greedy: dividing the logits by a smaller temperature would overflow
 * to infinities, and their differences to NaN probabilities. */
#define GREEDY_BELOW 1e-6

int32_t wf_first_non_finite(const wf_real *x, int32_t n) {
    for (int32_t i = 0; i < n; i++)
        if (!wf_finite(x[i])) return i;
    return -1;
}

int32_t wf_sample_token(const wf_real *logits, int V, const wf_sampling *s, wf_rng *rng, wf_real *probs,
                        int32_t *order) {
    /* weights that overflow float32 give NaN or infinite logits: no order, no distribution
     * (every comparison with NaN is false, so a draw would silently pick an arbitrary id) */
    if (wf_first_non_finite(logits, V) >= 0) return -1;
    if (s->temperature < GREEDY_BELOW) {
        int32_t best = 0;
        for (int i = 1; i < V; i++)
            if (logits[i] > logits[best]) best = i;
        return best;
    }
    wf_real maxz = logits[0];
    for (int i = 1; i < V; i++)
        if (logits[i] > maxz) maxz = logits[i];
    const wf_real inv_t = (wf_real)(1.0 / s->temperature);
    double sum = 0;
    for (int i = 0; i < V; i++) {
        probs[i] = WF_EXP((logits[i] - maxz) * inv_t);
        sum += probs[i];
    }
    int keep = V;
    int filtered = (s->top_k > 0 && s->top_k < V) || s->top_p < 1;
    if (filtered) {
        for (int i = 0; i < V; i++) order[i] = i;
        sort_by_prob(order, V, probs);
        if (s->top_k > 0 && s->top_k < V) keep = s->top_k;
        double kept = 0;
        for (int i = 0; i < keep; i++) kept += probs[order[i]];
        if (s->top_p < 1) {
            /* the smallest prefix whose share of the top-k mass reaches top_p */
            double cum = 0;
            for (int i = 0; i < keep; i++) {
                cum += probs[order[i]];
                if (cum >= s->top_p * kept) {
                    keep = i + 1;
                    break;
                }
            }
        }
        sum = 0;
        for (int i = 0; i < keep; i++) sum += probs[order[i]];
    }
    double u = wf_rng_uniform(rng) * sum, cum = 0;
    for (int i = 0; i < keep; i++) {
        int32_t id = filtered ? order[i] : i;
        cum += probs[id];
        if (u < cum) return id;
    }
    /* rounding left u just above the last cumulative sum */
    return filtered ? order[keep - 1] : V - 1;
}

static wf_status check_sampling(wf_model *m, const wf_sampling *s) {
    if (!s) return WF_ERR(m, WF_ERR_ARG, "sampling settings are NULL");
    if (!wf_finite(s->temperature) || s->temperature < 0)
        return WF_ERR(m, WF_ERR_ARG, "temperature must be a finite number >= 0 (below 1e-6: greedy), not %g", (double)s->temperature);
    if (s->top_k < 0) return WF_ERR(m, WF_ERR_ARG, "top_k must be >= 0 (0 = off), not %d", s->top_k);
    if (!wf_finite(s->top_p) || s->top_p <= 0 || s->top_p > 1)
        return WF_ERR(m, WF_ERR_ARG, "top_p must be in (0, 1] (1 = off), not %g", (double)s->top_p);
    if (s->n_vocab < 0 || s->n_vocab > m->cfg.vocab_size)
        return WF_ERR(m, WF_ERR_ARG, "n_vocab must be in [0, vocab_size = %d] (0 = all), not %d", m->cfg.vocab_size,
                      s->n_vocab);
    if (s->no_unk != 0 && s->no_unk != 1) return WF_ERR(m, WF_ERR_ARG, "no_unk must be 0 or 1, not %d", s->no_unk);
    return WF_OK;
}

wf_status wf_model_gen_start(wf_model *m, const int32_t *prompt, int32_t n, uint32_t seed) {
    WF_NEED_READY(m);
    if (m->cfg.arch != WF_ARCH_DECODER)
        return WF_ERR(m, WF_ERR_STATE, "%s", m->cfg.arch == WF_ARCH_ENCODER
                      ? "an encoder does not generate; wf_model_gen_start needs a decoder"
                      : "an encoder-decoder decodes from a source: use wf_model_beam_search");
    if (!prompt || n < 1) return WF_ERR(m, WF_ERR_ARG, "the prompt must have at least one token");
    wf_status s = wf_model_check_ids(m, prompt, (size_t)n, 0, "prompt");
    if (s != WF_OK) return s;
    wf_gen *g = &m->gen;
    int32_t keep = n < m->cfg.context ? n : m->cfg.context;
    memcpy(g->window, prompt + (n - keep), (size_t)keep * sizeof(int32_t));
    g->n = keep;
    wf_rng_seed(&g->rng, seed);
    prefill(m);
    g->active = 1;
    m->err[0] = 0;
    return WF_OK;
}

/* Whether t can write the text of the next token: its info to *ti. */
static wf_status check_text(wf_model *m, wf_tokenizer *t, const char *text, int32_t cap, const int32_t *n_text,
                            wf_tokenizer_info *ti) {
    if (!text || !n_text) return WF_ERR(m, WF_ERR_ARG, "text and n_text must not be NULL with a tokenizer");
    if (wf_tokenizer_get_info(t, ti) != WF_OK || ti->kind == WF_TOKENIZER_NONE)
        return WF_ERR(m, WF_ERR_STATE, "the tokenizer is empty: it has no text for a token");
    if (cap < 2 * ti->max_bytes)
        return WF_ERR(m, WF_ERR_ARG, "the text buffer holds %d bytes; a token's text may need %d (2 x max_bytes)", cap,
                      2 * ti->max_bytes);
    const int32_t prev = m->gen.window[m->gen.n - 1];
    if (prev >= ti->vocab_size)
        return WF_ERR(m, WF_ERR_TOKEN, "token %d before the next is not one of the tokenizer's %d ids", prev,
                      ti->vocab_size);
    return WF_OK;
}

/* The bytes token id adds to the text after prev, to text[0, cap): char and BPE tokens decode
 * alone; the others in the context of the token before (a decoder that strips the text's
 * first space, llama2.c's space after BOS), as decoding [prev, id] less decoding [prev]. */
static wf_status token_text(wf_tokenizer *t, const wf_tokenizer_info *ti, int32_t prev, int32_t id, char *text,
                            int32_t cap, int32_t *n_text) {
    if (ti->kind == WF_TOKENIZER_CHAR || ti->kind == WF_TOKENIZER_BPE) return wf_tokenizer_decode(t, &id, 1, text, cap, n_text);
    const int32_t pair[2] = {prev, id};
    int32_t before, both;
    wf_status s = wf_tokenizer_decode(t, pair, 1, text, cap, &before);
    if (s == WF_OK) s = wf_tokenizer_decode(t, pair, 2, text, cap, &both);
    if (s != WF_OK) return s;
    /* a decoder that strips the text's end may leave [prev, id] no longer than [prev] */
    *n_text = both > before ? both - before : 0;
    memmove(text, text + before, (size_t)*n_text);
    return WF_OK;
}

wf_status wf_model_gen_next(wf_model *m, const wf_sampling *s, wf_tokenizer *t, int32_t *token, char *text,
                            int32_t cap, int32_t *n_text) {
    if (!m) return WF_ERR_ARG;
    if (!m->ready || !m->gen.active) return WF_ERR(m, WF_ERR_STATE, "no generation in progress: call wf_model_gen_start first");
    if (!token) return WF_ERR(m, WF_ERR_ARG, "token is NULL");
    wf_status st = check_sampling(m, s);
    if (st != WF_OK) return st;
    wf_tokenizer_info ti;
    if (t && (st = check_text(m, t, text, cap, n_text, &ti)) != WF_OK) return st;
    wf_gen *g = &m->gen;
    /* with no_unk the draw is over ids [1, n): id 0's probability goes to the others */
    int32_t n = s->n_vocab > 0 ? s->n_vocab : m->d.V;
    if (t && ti.vocab_size < n) n = ti.vocab_size;
    int32_t lo = s->no_unk && n > 1 ? 1 : 0;
    const wf_rng rng = g->rng;
    int32_t drawn = wf_sample_token(g->logits + lo, n - lo, s, &g->rng, g->probs, g->order);
    if (drawn < 0) {
        g->rng = rng;
        int32_t bad = lo + wf_first_non_finite(g->logits + lo, n - lo);
        double x = g->logits[bad];
        return WF_ERR(m, WF_ERR_NUMERIC, "the logits are not finite (token %d's is %s): the weights overflow float32 "
                      "somewhere on the way; nothing was generated and the generation is as it was", bad,
                      x != x ? "NaN" : x > 0 ? "+inf" : "-inf");
    }
    int32_t id = lo + drawn;
    if (t && (st = token_text(t, &ti, g->window[g->n - 1], id, text, cap, n_text)) != WF_OK) {
        g->rng = rng; /* nothing changed */
        return WF_ERR(m, st, "decoding token %d: %s", id, wf_tokenizer_error(t));
    }
    if (g->n == m->cfg.context) {
        /* full: keep the newest half of the window, then re-read it with the new token */
        int32_t keep = m->cfg.context / 2;
        memmove(g->window, g->window + (g->n - keep), (size_t)keep * sizeof(int32_t));
        g->window[keep] = id;
        g->n = keep + 1;
        prefill(m);
    } else {
        g->window[g->n] = id;
        wf_stack_decode(m, &id, 1, g->n, g->kcache, g->vcache, 0, 0);
        wf_head_forward(m, g->logits, g->lnf, g->lnf_mean, g->lnf_rstd, g->x, 1);
        g->n++;
    }
    *token = id;
    m->err[0] = 0;
    return WF_OK;
}

void wf_model_gen_stop(wf_model *m) { m->gen.active = 0; }

const float *wf_model_gen_logits(wf_model *m) {
    if (wf_model_ready(m) != WF_OK) return NULL;
    if (!m->gen.active) {
        WF_ERR(m, WF_ERR_STATE, "no generation in progress: call wf_model_gen_start first");
        return NULL;
    }
    return WF_CFLOATS(m->gen.logits);
}
