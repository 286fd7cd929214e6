/* LoRA (Hu et al. 2021): beside a linear layer, a rank-R update of OC of its output columns
 * (rows ldo apart: a part of a packed output), s = alpha / R. inp [N, C], a [R, C], b [OC, R].
 * Forward saves u [N, R] with s in it (so db needs no rescaling):
 *   u = s inp a^T;  out += u b^T                                   (y = x W^T + s x A^T B^T)
 *   db += dout^T u;  g = s dout b;  da += g^T inp;  dinp += g a    (g [N, R]: scratch)
 * W's own gradient is the linear layer's, skipped when W is frozen. */
#include "ops.h"

void wf_lora_forward(wf_real *out, wf_real *u, const wf_real *inp, const wf_real *a, const wf_real *b, wf_real s,
                     int N, int C, int OC, int R, int ldo, wf_pool *pool) {
    /* u(n, k) = sum_i inp(n, i) a(k, i): a read transposed */
    wf_matmul(u, (size_t)R, inp, (size_t)C, 1, a, 1, (size_t)C, N, R, C, 0, pool);
    for (size_t i = 0; i < (size_t)N * R; i++) u[i] *= s;
    /* out(n, j) += sum_k u(n, k) b(j, k) */
    wf_matmul(out, (size_t)ldo, u, (size_t)R, 1, b, 1, (size_t)R, N, OC, R, 1, pool);
}

void wf_lora_backward(wf_real *dinp, wf_real *da, wf_real *db, const wf_real *dout, const wf_real *u,
                      const wf_real *inp, const wf_real *a, const wf_real *b, wf_real *g, wf_real s, int N, int C,
                      int OC, int R, int ldo, wf_pool *pool) {
    /* out += u b^T */
    if (db) wf_matmul(db, (size_t)R, dout, 1, (size_t)ldo, u, (size_t)R, 1, OC, R, N, 1, pool);
    if (!da && !dinp) return;
    wf_matmul(g, (size_t)R, dout, (size_t)ldo, 1, b, (size_t)R, 1, N, R, OC, 0, pool);
    for (size_t i = 0; i < (size_t)N * R; i++) g[i] *= s;
    /* u = s inp a^T */
    if (da) wf_matmul(da, (size_t)C, g, 1, (size_t)R, inp, (size_t)C, 1, R, C, N, 1, pool);
    if (dinp) wf_matmul(dinp, (size_t)C, g, (size_t)R, 1, a, (size_t)C, 1, N, C, R, 1, pool);
}

void wf_lora_merge(wf_real *w, const wf_real *a, const wf_real *b, wf_real s, int C, int OC, int R, wf_real *sb) {
    /* W += s B A, as (s B) A: sb [OC, R] is scratch */
    for (size_t i = 0; i < (size_t)OC * R; i++) sb[i] = s * b[i];
    wf_matmul(w, (size_t)C, sb, (size_t)R, 1, a, (size_t)C, 1, OC, C, R, 1, NULL);
}
