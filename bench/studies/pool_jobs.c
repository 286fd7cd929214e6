/* How many jobs a training step hands the thread pool (issue 28): a micro (batch 16) or tiny
 * (batch 8) model on 2 threads with Muon, as the presets train, steps on one fixed batch, and
 * wf_pool_jobs counts the pool's jobs (each wakes the workers once). Built on the native
 * library, outside CMake:
 *   gcc -O2 -Iinclude -Isrc bench/studies/pool_jobs.c build/native/libwasmformer.a -lm -lpthread \
 *       -o build/native/pool_jobs && build/native/pool_jobs micro && build/native/pool_jobs tiny */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "pool.h"

int main(int argc, char **argv) {
    const int tiny = argc > 1 && !strcmp(argv[1], "tiny");
    wf_config cfg;
    wf_config_default(&cfg); /* tiny: L4 H4 C128 FF512 T64 */
    int B = 8;
    if (!tiny) {
        cfg.n_layer = 2;
        cfg.d_model = 64;
        cfg.d_ff = 256;
        B = 16;
    }
    cfg.positions = WF_POS_ROPE;
    wf_model *m = wf_model_create();
    wf_optim o;
    wf_optim_default(&o);
    o.muon = 1;
    if (wf_model_set_threads(m, 2) != WF_OK || wf_model_init(m, &cfg) != WF_OK || wf_model_set_optim(m, &o) != WF_OK) {
        fprintf(stderr, "pool_jobs: %s\n", wf_model_error(m));
        return 1;
    }
    const int T = cfg.context, N = B * T, steps = 10;
    int32_t *in = malloc((size_t)N * sizeof(int32_t)), *tg = malloc((size_t)N * sizeof(int32_t));
    if (!in || !tg) return 1;
    for (int i = 0; i < N; i++) {
        in[i] = i * 7 % 96;
        tg[i] = i * 13 % 96;
    }
    const wf_batch b = {.inputs = in, .targets = tg, .B = B, .T = T};
    if (wf_model_step(m, &b, NULL) != WF_OK) return 1; /* the first step sets up the optimizer state */
    const unsigned before = wf_pool_jobs(m->pool);
    for (int s = 0; s < steps; s++)
        if (wf_model_step(m, &b, NULL) != WF_OK) return 1;
    printf("%s: %.1f pool jobs a step (2 threads, Muon)\n", tiny ? "tiny, batch 8" : "micro, batch 16",
           (double)(wf_pool_jobs(m->pool) - before) / steps);
    wf_model_free(m);
    free(in);
    free(tg);
    return 0;
}
