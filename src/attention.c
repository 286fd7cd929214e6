/* Multi-head scaled dot-product attention, causal and padding masks. q [B,Tq,NH*HS] (row
 * stride q_stride), k, v [B,Tk,KV*HS] (kv_stride), out [B,Tq,C]; saves att [B,NH,Tq,Tk].
 * Query head h reads key/value head g(h) = h / (NH/KV) (grouped-query attention).
 *   s_ij = q_i.k_j / sqrt(HS) (masked: -inf),  a_i = softmax(s_i),  o_i = sum_j a_ij v_j
 *   dv_j += sum_i a_ij do_i;  ds_ij = a_ij (do_i.v_j - do_i.o_i);  dq_i += sum_j ds_ij k_j/sqrt(HS);
 *   dk_j += sum_i ds_ij q_i/sqrt(HS)  (seed 000, 1.6), summed over the query heads of a group
 *   (k and v fan out to them). The row term sum_k a_ik (dA)_ik is do_i.o_i (o_i = sum_k
 *   a_ik v_k): backward needs no T x T scratch, O(Tq Tk HS) per head. */
#include "ops.h"
#include "simd.h"

/* Query heads per key/value head. */
static int group_size(const wf_attn_dims *d) { return d->KV > 0 ? d->NH / d->KV : 1; }

/* Last key index (exclusive) query i of sequence b may see. */
static int key_limit(const wf_attn_dims *d, int b, int i) {
    int lim = d->Tk;
    if (d->key_len && d->key_len[b] < lim) lim = d->key_len[b];
    if (d->causal) {
        int last = i + d->Tk - d->Tq + 1;
        if (last < lim) lim = last;
    }
    return lim < 0 ? 0 : lim;
}

void wf_attention_forward_scalar(wf_real *out, wf_real *att, const wf_real *q, const wf_real *k,
                                 const wf_real *v, const wf_attn_dims *d) {
    const int HS = d->HS, C = d->NH * d->HS, Tq = d->Tq, Tk = d->Tk, group = group_size(d);
    const wf_real scale = 1 / WF_SQRT((wf_real)HS);
    for (int b = 0; b < d->B; b++) {
        for (int h = 0; h < d->NH; h++) {
            const int kh = h / group;
            for (int i = 0; i < Tq; i++) {
                const wf_real *qi = q + ((size_t)b * Tq + i) * d->q_stride + h * HS;
                wf_real *a = att + (((size_t)b * d->NH + h) * Tq + i) * Tk;
                wf_real *o = out + ((size_t)b * Tq + i) * C + h * HS;
                int lim = key_limit(d, b, i);
                /* scores, and their max so exp never overflows */
                wf_real maxs = -INFINITY;
                for (int j = 0; j < lim; j++) {
                    const wf_real *kj = k + ((size_t)b * Tk + j) * d->kv_stride + kh * HS;
                    wf_real s = 0;
                    for (int c = 0; c < HS; c++) s += qi[c] * kj[c];
                    s *= scale;
                    a[j] = s;
                    if (s > maxs) maxs = s;
                }
                wf_real sum = 0;
                for (int j = 0; j < lim; j++) {
                    a[j] = WF_EXP(a[j] - maxs);
                    sum += a[j];
                }
                wf_real inv = lim > 0 ? 1 / sum : 0;
                for (int j = 0; j < lim; j++) a[j] *= inv;
                for (int j = lim; j < Tk; j++) a[j] = 0; /* masked: exp(-inf) */
                for (int c = 0; c < HS; c++) o[c] = 0;
                for (int j = 0; j < lim; j++) {
                    const wf_real *vj = v + ((size_t)b * Tk + j) * d->kv_stride + kh * HS;
                    for (int c = 0; c < HS; c++) o[c] += a[j] * vj[c];
                }
            }
        }
    }
}

void wf_attention_backward_scalar(wf_real *dq, wf_real *dk, wf_real *dv, const wf_real *dout,
                                  const wf_real *out, const wf_real *att, const wf_real *q,
                                  const wf_real *k, const wf_real *v, const wf_attn_dims *d) {
    const int HS = d->HS, C = d->NH * d->HS, Tq = d->Tq, Tk = d->Tk, group = group_size(d);
    const wf_real scale = 1 / WF_SQRT((wf_real)HS);
    for (int b = 0; b < d->B; b++) {
        for (int h = 0; h < d->NH; h++) {
            const int kh = h / group;
            for (int i = 0; i < Tq; i++) {
                size_t qrow = ((size_t)b * Tq + i) * d->q_stride + h * HS;
                const wf_real *qi = q + qrow;
                const wf_real *a = att + (((size_t)b * d->NH + h) * Tq + i) * Tk;
                const wf_real *doi = dout + ((size_t)b * Tq + i) * C + h * HS;
                const wf_real *oi = out + ((size_t)b * Tq + i) * C + h * HS;
                int lim = key_limit(d, b, i);
                wf_real D = 0; /* do_i . o_i */
                for (int c = 0; c < HS; c++) D += doi[c] * oi[c];
                for (int j = 0; j < lim; j++) {
                    size_t krow = ((size_t)b * Tk + j) * d->kv_stride + kh * HS;
                    const wf_real *kj = k + krow, *vj = v + krow;
                    /* o_i = sum_j a_ij v_j */
                    wf_real dA = 0;
                    for (int c = 0; c < HS; c++) dA += doi[c] * vj[c];
                    if (dv) {
                        wf_real *dvj = dv + krow;
                        for (int c = 0; c < HS; c++) dvj[c] += a[j] * doi[c];
                    }
                    /* a_i = softmax(s_i), s_ij = q_i.k_j * scale */
                    wf_real ds = a[j] * (dA - D) * scale;
                    if (dq) {
                        wf_real *dqi = dq + qrow;
                        for (int c = 0; c < HS; c++) dqi[c] += ds * kj[c];
                    }
                    if (dk) {
                        wf_real *dkj = dk + krow;
                        for (int c = 0; c < HS; c++) dkj[c] += ds * qi[c];
                    }
                }
            }
        }
    }
}

/* ---- the fast path ----
 * Per head, blocks of QB query rows: S = Q K^T, P V and the four backward products are
 * wf_matmul calls over only the keys the block can see (the causal triangle costs ~half of
 * the square), with backward's dS in a QB x KB tile on the stack. Heads are the tasks a
 * pool shares out, each writing its own columns: forward one task per query head, backward
 * one per key/value head (its group's query heads in turn, since they all add into its dk
 * and dv columns). */
#if !defined(WF_REFERENCE_KERNELS)

#define QB 48 /* query rows per block: a multiple of every backend's WF_MR (and WF_NR but AVX-512's 64) */
#define KB 48 /* keys per backward tile */

/* a[0, lim) = softmax(scale * a[0, lim)), a[lim, n) = 0 */
static void softmax_row(wf_real *a, int lim, int n, wf_real scale) {
    int j = 0;
    if (lim > 0) {
        wf_v mv = wf_vset1(a[0]);
        for (; j + WF_VL <= lim; j += WF_VL) mv = wf_vmax(mv, wf_vload(a + j));
        wf_real maxs = wf_vhmax(mv);
        for (; j < lim; j++) maxs = a[j] > maxs ? a[j] : maxs;
        /* exp(scale * (s - max)) <= 1: never overflows */
        wf_v sv = wf_vzero();
        j = wf_vexp_sum(a, a, lim, maxs, scale, &sv);
        wf_real sum = wf_vsum(sv);
        for (; j < lim; j++) {
            a[j] = WF_EXP((a[j] - maxs) * scale);
            sum += a[j];
        }
        const wf_v inv = wf_vset1(1 / sum);
        for (j = 0; j + WF_VL <= lim; j += WF_VL) wf_vstore(a + j, wf_vmul(wf_vload(a + j), inv));
        for (; j < lim; j++) a[j] *= 1 / sum;
    }
    for (j = lim; j < n; j++) a[j] = 0; /* masked: exp(-inf) */
}

typedef struct {
    wf_real *out, *att, *dq, *dk, *dv;
    const wf_real *dout, *q, *k, *v;
    const wf_attn_dims *d;
} attn_job;

/* One head's pointers: row 0 of sequence b, head h. */
#define HEAD(d, b, h, base, T, stride) ((base) + (size_t)(b) * (T) * (stride) + (size_t)(h) * (d)->HS)

static void forward_head(void *ctx, int task) {
    const attn_job *J = ctx;
    const wf_attn_dims *d = J->d;
    const int b = task / d->NH, h = task % d->NH, HS = d->HS, C = d->NH * d->HS, Tq = d->Tq, Tk = d->Tk;
    const int kh = h / group_size(d);
    const size_t qs = (size_t)d->q_stride, ks = (size_t)d->kv_stride;
    const wf_real scale = 1 / WF_SQRT((wf_real)HS);
    const wf_real *q = HEAD(d, b, h, J->q, Tq, qs), *k = HEAD(d, b, kh, J->k, Tk, ks), *v = HEAD(d, b, kh, J->v, Tk, ks);
    wf_real *o = HEAD(d, b, h, J->out, Tq, (size_t)C);
    wf_real *att = J->att + ((size_t)b * d->NH + h) * Tq * Tk;
    if (Tq < 4 || d->by_rows) {
        /* a few query rows, or generation's (decoding and re-reading over a KV cache): four
         * keys per pass share each load of q, and each block of output lanes stays in
         * registers over all the keys */
        for (int i = 0; i < Tq; i++) {
            wf_real *a = att + (size_t)i * Tk, *oi = o + (size_t)i * C;
            const wf_real *qi = q + i * qs;
            const int lim = key_limit(d, b, i);
            int j = 0;
            for (; j + 4 <= lim; j += 4) wf_dot4(a + j, qi, k + j * ks, ks, HS);
            for (; j < lim; j++) a[j] = wf_dot(qi, k + j * ks, HS);
            softmax_row(a, lim, Tk, scale);
            int c = 0;
            for (; c + 4 * WF_VL <= HS; c += 4 * WF_VL) {
                wf_v o0 = wf_vzero(), o1 = wf_vzero(), o2 = wf_vzero(), o3 = wf_vzero();
                for (j = 0; j < lim; j++) {
                    const wf_v aj = wf_vbroadcast(a + j);
                    const wf_real *vj = v + j * ks + c;
                    o0 = wf_vmadd(aj, wf_vload(vj), o0);
                    o1 = wf_vmadd(aj, wf_vload(vj + WF_VL), o1);
                    o2 = wf_vmadd(aj, wf_vload(vj + 2 * WF_VL), o2);
                    o3 = wf_vmadd(aj, wf_vload(vj + 3 * WF_VL), o3);
                }
                wf_vstore(oi + c, o0);
                wf_vstore(oi + c + WF_VL, o1);
                wf_vstore(oi + c + 2 * WF_VL, o2);
                wf_vstore(oi + c + 3 * WF_VL, o3);
            }
            for (; c + WF_VL <= HS; c += WF_VL) {
                wf_v o0 = wf_vzero();
                for (j = 0; j < lim; j++) o0 = wf_vmadd(wf_vbroadcast(a + j), wf_vload(v + j * ks + c), o0);
                wf_vstore(oi + c, o0);
            }
            for (; c < HS; c++) {
                wf_real oc = 0;
                for (j = 0; j < lim; j++) oc += a[j] * v[j * ks + c];
                oi[c] = oc;
            }
        }
        return;
    }
    for (int i0 = 0; i0 < Tq; i0 += QB) {
        const int m = Tq - i0 < QB ? Tq - i0 : QB;
        const int lim = key_limit(d, b, i0 + m - 1); /* the most any row of the block sees */
        wf_real *a = att + (size_t)i0 * Tk;
        /* s_ij = q_i . k_j: B(c, j) = k[j, c], keys read transposed */
        wf_matmul(a, (size_t)Tk, q + i0 * qs, qs, 1, k, 1, ks, m, lim, HS, 0, NULL);
        for (int i = 0; i < m; i++) softmax_row(a + (size_t)i * Tk, key_limit(d, b, i0 + i), Tk, scale);
        /* o_i = sum_j a_ij v_j */
        wf_matmul(o + (size_t)i0 * C, (size_t)C, a, (size_t)Tk, 1, v, ks, 1, m, HS, lim, 0, NULL);
    }
}

/* Query head h of sequence b; its key/value head's dk and dv are shared with its group. */
static void backward_query_head(const attn_job *J, int b, int h) {
    const wf_attn_dims *d = J->d;
    const int HS = d->HS, C = d->NH * d->HS, Tq = d->Tq, Tk = d->Tk, kh = h / group_size(d);
    const size_t qs = (size_t)d->q_stride, ks = (size_t)d->kv_stride;
    const wf_real scale = 1 / WF_SQRT((wf_real)HS);
    const wf_real *q = HEAD(d, b, h, J->q, Tq, qs), *k = HEAD(d, b, kh, J->k, Tk, ks), *v = HEAD(d, b, kh, J->v, Tk, ks);
    const wf_real *o = HEAD(d, b, h, J->out, Tq, (size_t)C), *dout = HEAD(d, b, h, J->dout, Tq, (size_t)C);
    wf_real *dq = J->dq ? HEAD(d, b, h, J->dq, Tq, qs) : NULL;
    wf_real *dk = J->dk ? HEAD(d, b, kh, J->dk, Tk, ks) : NULL;
    wf_real *dv = J->dv ? HEAD(d, b, kh, J->dv, Tk, ks) : NULL;
    const wf_real *att = J->att + ((size_t)b * d->NH + h) * Tq * Tk;
    wf_real tile[QB * KB] __attribute__((aligned(32)));
    wf_real D[QB];
    for (int i0 = 0; i0 < Tq; i0 += QB) {
        const int m = Tq - i0 < QB ? Tq - i0 : QB;
        const int lim = key_limit(d, b, i0 + m - 1);
        const wf_real *doi = dout + (size_t)i0 * C, *a = att + (size_t)i0 * Tk;
        for (int i = 0; i < m; i++) D[i] = wf_dot(doi + (size_t)i * C, o + (size_t)(i0 + i) * C, HS);
        for (int j0 = 0; j0 < lim; j0 += KB) {
            const int n = lim - j0 < KB ? lim - j0 : KB;
            /* o_i = sum_j a_ij v_j */
            if (dv) wf_matmul(dv + j0 * ks, ks, a + j0, 1, (size_t)Tk, doi, (size_t)C, 1, n, HS, m, 1, NULL);
            if (!dq && !dk) continue;
            /* dA_ij = do_i . v_j, then a_i = softmax(s_i): ds_ij = a_ij (dA_ij - D_i) scale */
            wf_matmul(tile, KB, doi, (size_t)C, 1, v + j0 * ks, 1, ks, m, n, HS, 0, NULL);
            for (int i = 0; i < m; i++) {
                wf_real *t = tile + i * KB;
                const wf_real *ai = a + (size_t)i * Tk + j0;
                const wf_v Dv = wf_vset1(D[i]), sv = wf_vset1(scale);
                int j = 0;
                for (; j + WF_VL <= n; j += WF_VL)
                    wf_vstore(t + j, wf_vmul(wf_vmul(wf_vload(ai + j), wf_vsub(wf_vload(t + j), Dv)), sv));
                for (; j < n; j++) t[j] = ai[j] * (t[j] - D[i]) * scale;
            }
            /* s_ij = q_i . k_j * scale */
            if (dq) wf_matmul(dq + i0 * qs, qs, tile, KB, 1, k + j0 * ks, ks, 1, m, HS, n, 1, NULL);
            if (dk) wf_matmul(dk + j0 * ks, ks, tile, 1, KB, q + i0 * qs, qs, 1, n, HS, m, 1, NULL);
        }
    }
}

/* Task: key/value head kh of sequence b, and the query heads that share it. */
static void backward_kv_head(void *ctx, int task) {
    const attn_job *J = ctx;
    const int group = group_size(J->d), KV = J->d->NH / group, b = task / KV, kh = task % KV;
    for (int h = kh * group; h < (kh + 1) * group; h++) backward_query_head(J, b, h);
}

#endif /* !WF_REFERENCE_KERNELS */

void wf_attention_forward(wf_real *out, wf_real *att, const wf_real *q, const wf_real *k,
                          const wf_real *v, const wf_attn_dims *d, wf_pool *pool) {
#if defined(WF_REFERENCE_KERNELS)
    (void)pool;
    wf_attention_forward_scalar(out, att, q, k, v, d);
#else
    attn_job j = {.out = out, .att = att, .q = q, .k = k, .v = v, .d = d};
    /* decoding one token is too little work to share: keep it on the caller */
    if ((double)d->B * d->NH * d->Tq * d->Tk * d->HS < (1 << 18)) pool = NULL;
    wf_pool_run(pool, d->B * d->NH, forward_head, &j);
#endif
}

void wf_attention_backward(wf_real *dq, wf_real *dk, wf_real *dv, const wf_real *dout,
                           const wf_real *out, const wf_real *att, const wf_real *q,
                           const wf_real *k, const wf_real *v, const wf_attn_dims *d, wf_pool *pool) {
#if defined(WF_REFERENCE_KERNELS)
    (void)pool;
    wf_attention_backward_scalar(dq, dk, dv, dout, out, att, q, k, v, d);
#else
    attn_job j = {.out = (wf_real *)out, .att = (wf_real *)att, .dq = dq, .dk = dk, .dv = dv, .dout = dout, .q = q, .k = k,
                  .v = v, .d = d};
    wf_pool_run(pool, d->B * (d->NH / group_size(d)), backward_kv_head, &j);
#endif
}
