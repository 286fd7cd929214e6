/* The stacks (model.h): the embeddings, one forward loop over a stack's layers that training,
 * prompt reading, decoding and the beam search's encoder all run, one backward loop, the
 * final norm and the head, and the results of the last forward. */
#include "model.h"

static void zero(wf_real *x, size_t n) { memset(x, 0, n * sizeof(wf_real)); }

static int stack_layers(const wf_model *m, int stack) { return stack == WF_STACK_MAIN ? m->d.L : m->d.E; }

wf_layer_acts wf_stack_acts(const wf_model *m, int stack, int l) {
    const size_t B = m->B, T = m->T, S = m->S;
    wf_layer_acts a;
    if (stack == WF_STACK_MAIN)
        wf_layer_carve(&a, m->a.layers + l * m->layer_elems[stack], &m->d, B * T, T, S, B * S, m->d.xa, m->d.drop);
    else
        wf_layer_carve(&a, m->a.enc_layers + l * m->layer_elems[stack], &m->d, B * S, S, 0, 0, 0, m->d.drop);
    a.branch = m->a.branch;
    return a;
}

/* The last layer's output: the final norm's input. */
static const wf_real *stack_out(const wf_model *m, int stack) {
    return wf_stack_acts(m, stack, stack_layers(m, stack) - 1).out;
}

/* How a stack's layers run on the planned batch. */
static wf_layer_io batch_io(const wf_model *m, const wf_batch *b, int stack, wf_rng *rng) {
    if (stack == WF_STACK_ENC) return (wf_layer_io){.B = m->B, .T = m->S, .key_len = b->src_lengths, .drop_rng = rng};
    return (wf_layer_io){.B = m->B, .T = m->T, .causal = m->cfg.arch != WF_ARCH_ENCODER, .key_len = b->lengths,
                         .S = m->S, .src_len = b->src_lengths, .drop_rng = rng};
}

/* ---- embeddings ---- */

/* The position table added to a stack's embeddings: learned, the fixed sinusoids, or NULL
 * (rotary positions, applied inside attention). */
static const wf_real *position_table(const wf_model *m, int stack) {
    if (m->d.pos) return stack == WF_STACK_MAIN ? m->p.wpe : m->p.enc_wpe;
    return m->pos_table;
}

void wf_stack_embed(wf_model *m, int stack, wf_real *out, wf_real *mask, const int32_t *ids, const wf_real *vecs,
                    int B, int T, int pos, wf_rng *rng) {
    const int C = m->d.C;
    const wf_real *pt = position_table(m, stack);
    if (pt) pt += (size_t)pos * C;
    if (vecs)
        wf_embed_vec_forward(out, vecs, pt, B, T, C);
    else if (m->tensors[WF_P_wte].dtype != WF_QUANT_F32)
        wf_qembed_forward(out, ids, wf_model_qslice(m, WF_P_wte, 0), m->tensors[WF_P_wte].dtype, pt, B, T, C);
    else
        wf_embed_forward(out, ids, m->p.wte, pt, B, T, C);
    const wf_layer_ctx ctx = wf_model_layer_ctx(m);
    wf_drop_forward(&ctx, mask, out, B * T * C, rng);
}

static void embed_backward(wf_model *m, int stack, const wf_real *mask, const int32_t *ids, int vecs, int B, int T) {
    const int C = m->d.C;
    wf_real *dpos = !m->d.pos ? NULL : stack == WF_STACK_MAIN ? m->g.wpe : m->g.enc_wpe;
    if (!dpos && (!m->g.wte || vecs)) return; /* frozen */
    const wf_layer_ctx ctx = wf_model_layer_ctx(m);
    const wf_real *d = wf_drop_backward(&ctx, mask, m->a.dres, B * T * C);
    if (vecs)
        wf_embed_vec_backward(dpos, d, B, T, C);
    else
        wf_embed_backward(m->g.wte, dpos, d, ids, B, T, C);
}

/* ---- the forward loop ---- */

const wf_real *wf_stack_forward(wf_model *m, int stack, const wf_stack_run *r, wf_real *x) {
    const int C = m->d.C;
    const size_t cache = (size_t)m->d.T * m->d.KC; /* one layer's KV cache: context rows */
    const size_t xcache = (size_t)m->d.T * 2 * C;  /* one layer's source keys and values */
    wf_layer_ctx ctx = wf_model_layer_ctx(m);
    ctx.fast = r->scratch != NULL; /* decoding: generation's quantized products */
    const wf_real *in = x;
    for (int l = 0; l < stack_layers(m, stack); l++) {
        wf_layer_w w;
        wf_layer_weights(m, stack, l, 0, &w);
        const wf_layer_acts a = r->scratch ? *r->scratch : wf_stack_acts(m, stack, l);
        wf_layer_io io = r->io;
        if (l == stack_layers(m, stack) - 1) io.skip = r->last_skip;
        if (r->kcache) {
            io.kcache = r->kcache + l * cache;
            io.vcache = r->vcache + l * cache;
        }
        if (r->enc) {
            /* this layer's cross-attention keys and values of the encoder's output */
            wf_lin_forward(&ctx, a.ckv, r->enc, w.ckvw, w.q.ckvw, w.ckvb, io.B * io.S, C, 2 * C);
            io.ckv = a.ckv;
        } else if (r->xkv) {
            io.ckv = r->xkv + l * xcache;
        }
        wf_block_forward(&ctx, &w, &a, in, &io);
        if (r->scratch)
            memcpy(x, a.out, (size_t)io.B * io.T * C * sizeof(wf_real));
        else
            in = a.out;
    }
    return in;
}

/* The output head's weights: the token embedding when tied; its blocks when quantized. */
static const wf_real *head_weights(const wf_model *m) { return m->d.head ? m->p.lm_head : m->p.wte; }
static wf_qw head_blocks(const wf_model *m) {
    const int i = m->d.head ? WF_P_lm_head : WF_P_wte;
    return (wf_qw){.p = wf_model_qslice(m, i, 0), .type = m->tensors[i].dtype};
}

void wf_head_forward(wf_model *m, wf_real *logits, wf_real *lnf, wf_real *lnf_mean, wf_real *lnf_rstd,
                     const wf_real *x, int N, int fast) {
    wf_layer_ctx ctx = wf_model_layer_ctx(m);
    ctx.fast = fast;
    wf_norm_forward(&ctx, lnf, lnf_mean, lnf_rstd, x, m->p.lnfw, m->p.lnfb, N);
    wf_lin_forward(&ctx, logits, lnf, head_weights(m), head_blocks(m), NULL, N, m->d.C, m->d.V);
    if (m->cfg.logit_cap > 0) wf_softcap_forward(logits, N * m->d.V, (wf_real)m->cfg.logit_cap);
}

void wf_stack_decode(wf_model *m, const int32_t *tokens, int T, int pos, wf_real *kcache, wf_real *vcache, int S,
                     int from) {
    wf_gen *g = &m->gen;
    wf_stack_embed(m, WF_STACK_MAIN, g->x, NULL, tokens, NULL, 1, T, pos, NULL);
    const wf_stack_run r = {
        .io = {.B = 1, .T = T, .causal = 1, .pos = pos, .S = S},
        .scratch = &g->row,
        .kcache = kcache,
        .vcache = vcache,
        .xkv = S > 0 ? g->xkv : NULL,
        .last_skip = from,
    };
    wf_stack_forward(m, WF_STACK_MAIN, &r, g->x);
}

void wf_model_forward_batch(wf_model *m, const wf_batch *b, int train) {
    wf_acts *a = &m->a;
    const int B = m->B, T = m->T, S = m->S;
    wf_rng rng, *drop_rng = NULL;
    if (train && m->d.drop) {
        /* a stream per (seed, step): the masks of a step are reproducible without saved state */
        wf_rng_seed(&rng, ((uint64_t)m->cfg.seed << 32 | (uint32_t)m->step) ^ 0x64726f706f7574ULL);
        drop_rng = &rng;
    }
    const wf_layer_ctx ctx = wf_model_layer_ctx(m);
    const wf_real *enc = NULL;
    if (m->d.xa) {
        wf_stack_embed(m, WF_STACK_ENC, a->enc_encoded, a->enc_emb_mask, b->src, NULL, B, S, 0, drop_rng);
        const wf_stack_run r = {.io = batch_io(m, b, WF_STACK_ENC, drop_rng)};
        const wf_real *x = wf_stack_forward(m, WF_STACK_ENC, &r, a->enc_encoded);
        wf_norm_forward(&ctx, a->enc_lnf, a->enc_lnf_mean, a->enc_lnf_rstd, x, m->p.enc_lnfw, m->p.enc_lnfb, B * S);
        enc = a->enc_lnf;
    }
    wf_stack_embed(m, WF_STACK_MAIN, a->encoded, a->emb_mask, b->inputs, WF_CREALS(b->input_vecs), B, T, 0, drop_rng);
    const wf_stack_run r = {.io = batch_io(m, b, WF_STACK_MAIN, drop_rng), .enc = enc};
    const wf_real *x = wf_stack_forward(m, WF_STACK_MAIN, &r, a->encoded);
    m->have_logits = b->target_vecs == NULL;
    if (m->have_logits)
        wf_head_forward(m, a->logits, a->lnf, a->lnf_mean, a->lnf_rstd, x, B * T, 0);
    else
        wf_norm_forward(&ctx, a->lnf, a->lnf_mean, a->lnf_rstd, x, m->p.lnfw, m->p.lnfb, B * T);
}

/* ---- the backward loop ---- */

static int trains(const wf_model *m, int i, int l) { return m->tensors[i].size && m->goff[m->slice0[i] + l] != SIZE_MAX; }

/* Whether any slice of layer l of a stack trains (its block's tensors, its adapters). */
static int layer_trains(const wf_model *m, int stack, int l) {
    const int enc = stack == WF_STACK_ENC;
    const int first[2] = {enc ? WF_P_enc_ln1w : WF_P_ln1w, enc ? WF_P_enc_lora_qa : WF_P_lora_qa};
    const int last[2] = {enc ? WF_P_enc_fcprojb : WF_P_fcprojb, enc ? WF_P_enc_lora_db : WF_P_lora_db};
    for (int r = 0; r < 2; r++)
        for (int i = first[r]; i <= last[r]; i++)
            if (trains(m, i, l)) return 1;
    return 0;
}

/* The lowest layer of a stack that backward must visit: layers below it and the embeddings
 * have nothing that trains, so no gradient needs to reach them (frozen layers above it still
 * pass their input gradients down). In an encoder-decoder the decoder's every layer hands
 * the encoder gradient through cross-attention: its stack is always visited whole. */
static int lowest_needed(const wf_model *m, int stack) {
    const int layers = stack_layers(m, stack);
    const int pos = !m->d.pos ? -1 : stack == WF_STACK_MAIN ? WF_P_wpe : WF_P_enc_wpe;
    if (trains(m, WF_P_wte, 0) || (pos >= 0 && trains(m, pos, 0)) || (stack == WF_STACK_MAIN && m->d.xa)) return 0;
    for (int l = 0; l < layers; l++)
        if (layer_trains(m, stack, l)) return l;
    return layers;
}

/* A stack's layers from the last to the lowest needed; x0 is the first layer's input, enc the
 * encoder output its cross-attention read. Returns whether the gradient reached x0. */
static int stack_backward(wf_model *m, const wf_batch *b, int stack, const wf_real *x0, const wf_real *enc) {
    wf_layer_io io = batch_io(m, b, stack, NULL);
    const wf_layer_ctx ctx = wf_model_layer_ctx(m);
    const int low = lowest_needed(m, stack);
    for (int l = stack_layers(m, stack) - 1; l >= low; l--) {
        const wf_layer_acts a = wf_stack_acts(m, stack, l);
        wf_layer_w w, dw;
        wf_layer_weights(m, stack, l, 0, &w);
        wf_layer_weights(m, stack, l, 1, &dw);
        io.ckv = a.ckv;
        const wf_real *x = l == 0 ? x0 : wf_stack_acts(m, stack, l - 1).out;
        wf_block_backward(&ctx, &w, &dw, &a, x, &io, enc);
    }
    return low == 0;
}

void wf_model_backward_batch(wf_model *m, const wf_batch *b) {
    wf_acts *a = &m->a;
    const int B = m->B, T = m->T, S = m->S, N = B * T, C = m->d.C;
    const wf_layer_ctx ctx = wf_model_layer_ctx(m);
    if (m->have_logits) {
        /* logits = cap tanh(lnf head^T / cap), or without a cap lnf head^T */
        if (m->cfg.logit_cap > 0) wf_softcap_backward(a->probs, a->logits, N * m->d.V, (wf_real)m->cfg.logit_cap);
        wf_real *dhead = m->d.head ? m->g.lm_head : m->g.wte;
        wf_lin_backward(&ctx, a->dln, 0, dhead, NULL, a->probs, a->lnf, head_weights(m), head_blocks(m), N, C, m->d.V);
    }
    zero(a->dres, (size_t)N * C);
    wf_norm_backward(&ctx, a->dres, m->g.lnfw, m->g.lnfb, a->dln, stack_out(m, WF_STACK_MAIN), a->lnf_mean, a->lnf_rstd,
                     m->p.lnfw, N);
    if (m->d.xa) zero(a->denc, (size_t)B * S * C);
    if (stack_backward(m, b, WF_STACK_MAIN, a->encoded, a->enc_lnf))
        embed_backward(m, WF_STACK_MAIN, a->emb_mask, b->inputs, b->input_vecs != NULL, B, T);
    if (!m->d.xa) return;

    /* the encoder, from the gradient its output collected in every decoder layer */
    zero(a->dres, (size_t)B * S * C);
    wf_norm_backward(&ctx, a->dres, m->g.enc_lnfw, m->g.enc_lnfb, a->denc, stack_out(m, WF_STACK_ENC), a->enc_lnf_mean,
                     a->enc_lnf_rstd, m->p.enc_lnfw, B * S);
    if (stack_backward(m, b, WF_STACK_ENC, a->enc_encoded, NULL))
        embed_backward(m, WF_STACK_ENC, a->enc_emb_mask, b->src, 0, B, S);
}

/* ---- results of the last forward ---- */

/* Whether m has a last forward to read (else the message says why). */
static int have_forward(wf_model *m) {
    if (wf_model_ready(m) != WF_OK) return 0;
    if (m->B > 0) return 1;
    WF_ERR(m, WF_ERR_STATE, "no forward pass yet: there are no results to read");
    return 0;
}

const float *wf_model_logits(wf_model *m) {
    if (!have_forward(m)) return NULL;
    if (!m->have_logits) {
        WF_ERR(m, WF_ERR_STATE, "the last forward computed no logits: its batch had target_vecs (read wf_model_hidden)");
        return NULL;
    }
    return WF_CFLOATS(m->a.logits);
}

const float *wf_model_hidden(wf_model *m) { return have_forward(m) ? WF_CFLOATS(m->a.lnf) : NULL; }

const float *wf_model_attention(wf_model *m, int32_t layer, int32_t cross) {
    if (!have_forward(m)) return NULL;
    if (cross && !m->d.xa) {
        WF_ERR(m, WF_ERR_STATE, "cross-attention: this model is not an encoder-decoder");
        return NULL;
    }
    if (layer < 0 || layer >= m->d.L) {
        WF_ERR(m, WF_ERR_ARG, "layer %d is outside [0, %d)", layer, m->d.L);
        return NULL;
    }
    const wf_layer_acts a = wf_stack_acts(m, WF_STACK_MAIN, layer);
    return WF_CFLOATS(cross ? a.catt : a.att);
}
