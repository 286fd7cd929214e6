/* Multi-head scaled dot-product attention with causal and padding masks.
 * Shapes: q [B,Tq,NH*HS] with row stride q_stride, k and v [B,Tk,NH*HS] with row stride
 * kv_stride, out [B,Tq,C] (stride C); saves att [B,NH,Tq,Tk], the softmax probabilities.
 *   s_ij = q_i.k_j / sqrt(HS) (masked: -inf),  a_i = softmax(s_i),  o_i = sum_j a_ij v_j
 *   dv_j += sum_i a_ij do_i;  ds_ij = a_ij (do_i.v_j - do_i.o_i);  dq_i += sum_j ds_ij k_j/sqrt(HS);
 *   dk_j += sum_i ds_ij q_i/sqrt(HS)
 * (seed 000, 1.6). The row term sum_k a_ik (dA)_ik equals do_i.o_i because o_i = sum_k a_ik v_k,
 * so backward needs no T x T scratch and costs O(Tq Tk HS) per head. */
#include "ops.h"

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

void wf_attention_forward(wf_real *out, wf_real *att, const wf_real *q, const wf_real *k,
                          const wf_real *v, const wf_attn_dims *d) {
    const int HS = d->HS, C = d->NH * d->HS, Tq = d->Tq, Tk = d->Tk;
    const wf_real scale = 1 / WF_SQRT((wf_real)HS);
    for (int b = 0; b < d->B; b++) {
        for (int h = 0; h < d->NH; h++) {
            for (int i = 0; i < Tq; i++) {
                const wf_real *qi = q + ((size_t)b * Tq + i) * d->q_stride + h * HS;
                wf_real *a = att + (((size_t)b * d->NH + h) * Tq + i) * Tk;
                wf_real *o = out + ((size_t)b * Tq + i) * C + h * HS;
                int lim = key_limit(d, b, i);
                /* scores, and their max so exp never overflows */
                wf_real maxs = -INFINITY;
                for (int j = 0; j < lim; j++) {
                    const wf_real *kj = k + ((size_t)b * Tk + j) * d->kv_stride + h * HS;
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
                    const wf_real *vj = v + ((size_t)b * Tk + j) * d->kv_stride + h * HS;
                    for (int c = 0; c < HS; c++) o[c] += a[j] * vj[c];
                }
            }
        }
    }
}

void wf_attention_backward(wf_real *dq, wf_real *dk, wf_real *dv, const wf_real *dout,
                           const wf_real *out, const wf_real *att, const wf_real *q,
                           const wf_real *k, const wf_real *v, const wf_attn_dims *d) {
    const int HS = d->HS, C = d->NH * d->HS, Tq = d->Tq, Tk = d->Tk;
    const wf_real scale = 1 / WF_SQRT((wf_real)HS);
    for (int b = 0; b < d->B; b++) {
        for (int h = 0; h < d->NH; h++) {
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
                    size_t krow = ((size_t)b * Tk + j) * d->kv_stride + h * HS;
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
