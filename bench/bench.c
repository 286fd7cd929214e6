#define _POSIX_C_SOURCE 199309L /* clock_gettime */
/* Native timings for bench/run.mjs: training and generation on config A or B (or M, the
 * micro preset's shape: L2 H4 C64 FF256 T64 with RoPE, batch 16), and a profile of the
 * training step by kernel. Prints one JSON object.
 *   bench_wasmformer A|B|M [--steps N] [--warmup N] [--threads N] [--gen N] [--profile] [--pair] [--cpu]
 *                   [--batch N] [--muon]
 * --muon trains as the presets do: Muon on the blocks' matrices, AdamW on the rest (the
 * profile then times Newton-Schulz and the update of each matrix of a step, and AdamW
 * over the rest only).
 * With --threads N > 1 the JSON also gives pool_jobs_per_step: how many jobs a timed step hands
 * the thread pool (wf_pool_jobs), each one wake-up of its workers; pool_busy_share, the share
 * of those jobs the pool ran with short polls, having taken the machine for busy (pool.c);
 * caller_task_share, the share of the jobs' tasks the calling thread ran itself (0.5 of two
 * threads is an even split); and step_split_ms, where
 * the calling thread's time in a timed step went (means in ms, wall clock, so not with --cpu):
 * the step, its part inside the pool's jobs up to the caller's last task (publishing the job and
 * running tasks: wf_pool_times), waiting for the workers' last tasks, and the rest (work left on
 * one thread).
 * --pair (with --threads N > 1) also trains a second, single-thread model on the same batch,
 * alternating steps with the first, and reports the ratio of their summed step times: on a
 * shared machine the two see the same interference, so the ratio is steadier than two runs.
 * Train tokens/s = B*T / (forward + backward + AdamW), the median over the timed steps.
 * Generation tokens/s = 128 new tokens from a 16-token prompt at batch 1, median of --gen runs
 * (with context 64 the window slides and is re-read three times); decode tokens/s = the
 * T - 16 tokens after the prompt alone, which fill the window without a slide.
 * The profile times each op alone, on the shapes of one step, repeated as often as the
 * step calls it; its sum is printed next to the measured step so the two can be compared.
 * With --threads N > 1 it also times every op on one thread, the two taking turns
 * ("profile_1t"): each op's speed-up shows where the threads lose. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "model.h"
#include "pool.h"

/* --cpu: the process's CPU time instead of the wall clock (one thread on a busy machine) */
static clockid_t clock_id = CLOCK_MONOTONIC;

#ifdef __EMSCRIPTEN__
/* Compiled to wasm for Node (bench/README.md: the profile in wasm), where the libc has no CPU
 * clock: Node's process.cpuUsage, the whole process's (a 1-thread run's is its own thread's). */
#include <emscripten.h>
EM_JS(double, node_cpu_seconds, (void), {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
});
#endif

static double now(void) {
#ifdef __EMSCRIPTEN__
    if (clock_id == CLOCK_PROCESS_CPUTIME_ID) return node_cpu_seconds();
#endif
    struct timespec ts;
    clock_gettime(clock_id, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *x, int n) {
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

typedef struct {
    int L, NH, C, T, B;
} bench_cfg;

static void config_of(char which, wf_config *cfg, bench_cfg *b) {
    wf_config_default(cfg); /* A: V=96, L=4, NH=4, C=128, T=64 */
    b->B = 8;
    if (which == 'M') {
        cfg->n_layer = 2;
        cfg->d_model = 64;
        cfg->d_ff = 256;
        cfg->positions = WF_POS_ROPE;
        b->B = 16;
    }
    if (which == 'B') {
        cfg->n_layer = 6;
        cfg->n_head = 6;
        cfg->d_model = 384;
        cfg->d_ff = 4 * 384;
        cfg->context = 256;
        b->B = 4;
    }
    b->L = cfg->n_layer;
    b->NH = cfg->n_head;
    b->C = cfg->d_model;
    b->T = cfg->context;
}

static float *randv(wf_rng *r, size_t n) {
    float *x = wf_alloc(n, sizeof(float));
    for (size_t i = 0; i < n; i++) x[i] = (float)(0.5 * wf_rng_normal(r));
    return x;
}

/* ---- profile: each op of one training step, timed alone ---- */
enum { P_LINEAR_FWD, P_LINEAR_BWD, P_ATTN_FWD, P_ATTN_BWD, P_NORM, P_GELU, P_LOSS, P_ADAMW, P_ADAMW_CHECK, P_GRAD_NORM,
       P_GRAD_ZERO, P_EMBED, P_OTHER, P_ROPE, P_MUON, P_MUON_CHECK, P_N };
static const char *pnames[P_N] = {"linear_fwd", "linear_bwd", "attention_fwd", "attention_bwd", "layernorm", "gelu",
                                  "crossentropy", "adamw", "adamw_check", "grad_norm", "grad_zero", "embed",
                                  "residual", "rope", "muon", "muon_check"};

typedef struct {
    int B, T, C, NH, L, V, F, N, rope, muon;
    size_t n_params;
    float *x, *y, *dy, *w, *dw, *bias, *db, *qkv, *dqkv, *att, *o, *dout, *mean, *rstd, *logits, *probs, *losses, *pa;
    float *wte, *wpe, *dwte, *dwpe, *rcos, *rsin, *muon_mem;
    int32_t *targets;
    wf_optim opt;
} prof_bufs;

/* One step's ops once each on `pool`, their times added to t[]; rep numbers AdamW's step. */
static void profile_rep(prof_bufs *p, wf_pool *pool, int rep, double *t) {
    const int B = p->B, T = p->T, C = p->C, NH = p->NH, L = p->L, V = p->V, F = p->F, N = p->N;
    const size_t np = p->n_params;
    double t0;
    /* per layer: linears qkv (C->3C), proj (C->C), fc (C->F), fcproj (F->C); then the head (C->V) */
    const int lin[4][2] = {{C, 3 * C}, {C, C}, {C, F}, {F, C}};
    for (int i = 0; i < 4; i++) {
        t0 = now();
        for (int l = 0; l < L; l++) wf_linear_forward(p->y, p->x, p->w, p->bias, N, lin[i][0], lin[i][1], pool);
        t[P_LINEAR_FWD] += now() - t0;
        t0 = now();
        for (int l = 0; l < L; l++) wf_linear_backward(p->x, p->dw, p->db, p->dy, p->y, p->w, N, lin[i][0], lin[i][1], pool);
        t[P_LINEAR_BWD] += now() - t0;
    }
    t0 = now();
    wf_linear_forward(p->logits, p->x, p->w, NULL, N, C, V, pool);
    t[P_LINEAR_FWD] += now() - t0;
    t0 = now();
    wf_linear_backward(p->x, p->dw, NULL, p->logits, p->y, p->w, N, C, V, pool);
    t[P_LINEAR_BWD] += now() - t0;

    wf_attn_dims ad = {.B = B, .NH = NH, .HS = C / NH, .Tq = T, .Tk = T, .q_stride = 3 * C, .kv_stride = 3 * C, .causal = 1};
    t0 = now();
    for (int l = 0; l < L; l++) wf_attention_forward(p->o, p->att, p->qkv, p->qkv + C, p->qkv + 2 * C, &ad, pool);
    t[P_ATTN_FWD] += now() - t0;
    t0 = now();
    for (int l = 0; l < L; l++)
        wf_attention_backward(p->dqkv, p->dqkv + C, p->dqkv + 2 * C, p->dout, p->o, p->att, p->qkv, p->qkv + C,
                              p->qkv + 2 * C, &ad, pool);
    t[P_ATTN_BWD] += now() - t0;
    if (p->rope) {
        t0 = now();
        for (int l = 0; l < L; l++)
            for (int qk = 0; qk < 2; qk++) {
                wf_rope_forward(p->qkv + qk * C, p->rcos, p->rsin, B, T, NH, C / NH, 3 * C, 0, pool);
                wf_rope_backward(p->dqkv + qk * C, p->rcos, p->rsin, B, T, NH, C / NH, 3 * C, 0, pool);
            }
        t[P_ROPE] += now() - t0;
    }

    t0 = now();
    for (int l = 0; l < 2 * L + 1; l++) {
        wf_layernorm_forward(p->y, p->mean, p->rstd, p->x, p->w, p->bias, N, C, 1e-5f, pool);
        wf_layernorm_backward(p->dy, p->dw, p->db, p->dout, p->x, p->mean, p->rstd, p->w, N, C, pool);
    }
    t[P_NORM] += now() - t0;
    t0 = now();
    for (int l = 0; l < L; l++) {
        wf_gelu_forward(p->y, p->x, N * F, pool);
        wf_gelu_backward(p->dy, p->x, p->y, N * F, pool);
    }
    t[P_GELU] += now() - t0;
    t0 = now();
    int count;
    wf_crossentropy_forward(p->losses, &count, p->probs, p->logits, p->targets, N, V, pool);
    wf_crossentropy_backward(p->probs, 1.0f / N, p->probs, p->targets, N, V, pool);
    t[P_LOSS] += now() - t0;
    t0 = now();
    for (int l = 0; l < 2 * L; l++) {
        wf_residual_forward(p->y, p->x, p->dy, N * C, pool);
        memset(p->dqkv, 0, (size_t)N * C * sizeof(float)); /* the backward pass's gradient zeroing */
    }
    t[P_OTHER] += now() - t0;
    /* the step's passes over all parameters besides the update: the gradients zeroed before
     * backward, their norm (clipping), the read-only check that no update overflows */
    float *pp = p->pa, *pm = pp + np, *pv = pm + np, *pg = pv + np;
    t0 = now();
    memset(pg, 0, np * sizeof(float));
    t[P_GRAD_ZERO] += now() - t0;
    for (size_t i = 0; i < np; i += 997) pg[i] = 1e-3f; /* a few non-zero gradients */
    t0 = now();
    volatile double norm = wf_sum_squares(pg, np, pool);
    (void)norm;
    t[P_GRAD_NORM] += now() - t0;
    /* with Muon: each layer's q, k, v, attention projection, fc and fc projection matrices
     * [R, C] through Newton-Schulz and the update; AdamW on the rest */
    size_t na = np;
    if (p->muon) {
        const int mats[6][2] = {{C, C}, {C, C}, {C, C}, {C, C}, {F, C}, {C, F}};
        float *pw = pp, *pb = pm, *gw = pg;
        t0 = now();
        for (int l = 0; l < L; l++)
            for (int i = 0; i < 6; i++) {
                volatile size_t bad = wf_muon_check(pw, pb, gw, mats[i][0], mats[i][1], 1.0f, &p->opt, 1e-4f, 1);
                (void)bad;
            }
        t[P_MUON_CHECK] += now() - t0;
        t0 = now();
        for (int l = 0; l < L; l++)
            for (int i = 0; i < 6; i++) {
                const size_t n = (size_t)mats[i][0] * mats[i][1];
                wf_muon_update(pw, pb, gw, mats[i][0], mats[i][1], 1.0f, &p->opt, 1e-4f, 1, p->muon_mem, pool);
                pw += n, pb += n, gw += n, na -= n;
            }
        t[P_MUON] += now() - t0;
        pp = pw, pm = pb, pg = gw;
    }
    t0 = now();
    volatile size_t bad = wf_adamw_check(pp, pm, pv, pg, na, 1.0f, &p->opt, 1e-4f, 1, rep + 1);
    (void)bad;
    t[P_ADAMW_CHECK] += now() - t0;
    t0 = now();
    wf_adamw_update(pp, pm, pv, pg, na, 1.0f, &p->opt, 1e-4f, 1, rep + 1);
    t[P_ADAMW] += now() - t0;
    t0 = now();
    wf_embed_forward(p->y, p->targets, p->wte, p->wpe, B, T, C);
    wf_embed_backward(p->dwte, p->dwpe, p->dout, p->targets, B, T, C);
    t[P_EMBED] += now() - t0;
}

/* The ops timed on the model's pool, and when it has threads also on the caller alone, the
 * two taking turns op set by op set (so a busy machine slows both alike): t (pool), t1 (one
 * thread; untouched without a pool). AdamW is timed in the model's thread count only. */
static void profile(const wf_config *cfg, const bench_cfg *bc, int muon, wf_pool *pool, size_t n_params, double *t,
                    double *t1) {
    prof_bufs p = {.B = bc->B, .T = bc->T, .C = bc->C, .NH = bc->NH, .L = bc->L, .V = cfg->vocab_size, .F = cfg->d_ff,
                   .n_params = n_params, .rope = cfg->positions == WF_POS_ROPE, .muon = muon};
    p.N = p.B * p.T;
    const int N = p.N, F = p.F, C = p.C, V = p.V;
    wf_rng r;
    wf_rng_seed(&r, 1);
    p.x = randv(&r, (size_t)N * F), p.y = randv(&r, (size_t)N * F), p.dy = randv(&r, (size_t)N * F);
    p.w = randv(&r, (size_t)F * C), p.dw = randv(&r, (size_t)F * C), p.bias = randv(&r, F), p.db = randv(&r, F);
    p.qkv = randv(&r, (size_t)N * 3 * C), p.dqkv = randv(&r, (size_t)N * 3 * C);
    p.att = randv(&r, (size_t)p.B * p.NH * p.T * p.T), p.o = randv(&r, (size_t)N * C), p.dout = randv(&r, (size_t)N * C);
    p.mean = randv(&r, N), p.rstd = randv(&r, N), p.logits = randv(&r, (size_t)N * V), p.probs = randv(&r, (size_t)N * V);
    p.losses = randv(&r, N);
    p.wte = randv(&r, (size_t)V * C), p.wpe = randv(&r, (size_t)p.T * C), p.dwte = randv(&r, (size_t)V * C);
    p.dwpe = randv(&r, (size_t)p.T * C);
    p.targets = malloc((size_t)N * sizeof(int32_t));
    for (int i = 0; i < N; i++) p.targets[i] = (int32_t)(wf_rng_u32(&r) % (uint32_t)V);
    p.pa = randv(&r, 4 * n_params);
    for (size_t i = n_params * 2; i < n_params * 3; i++) p.pa[i] = p.pa[i] * p.pa[i]; /* v >= 0 */
    const int HS = C / p.NH;
    p.rcos = randv(&r, (size_t)p.T * HS / 2), p.rsin = randv(&r, (size_t)p.T * HS / 2);
    wf_rope_table(p.rcos, p.rsin, p.T, HS, 10000);
    p.muon_mem = randv(&r, wf_muon_scratch(F, C));
    wf_optim_default(&p.opt);
    for (int i = 0; i < P_N; i++) t[i] = t1[i] = 0;
    const int reps = 3;
    for (int rep = 0; rep < reps; rep++) {
        profile_rep(&p, pool, rep, t);
        if (pool) profile_rep(&p, NULL, rep, t1);
    }
    for (int i = 0; i < P_N; i++) t[i] /= reps, t1[i] /= reps;
    wf_free(p.x); wf_free(p.y); wf_free(p.dy); wf_free(p.w); wf_free(p.dw); wf_free(p.bias); wf_free(p.db);
    wf_free(p.qkv); wf_free(p.dqkv); wf_free(p.att); wf_free(p.o); wf_free(p.dout); wf_free(p.mean); wf_free(p.rstd);
    wf_free(p.logits); wf_free(p.probs); wf_free(p.losses); wf_free(p.wte); wf_free(p.wpe); wf_free(p.dwte);
    wf_free(p.dwpe); free(p.targets); wf_free(p.pa); wf_free(p.rcos); wf_free(p.rsin); wf_free(p.muon_mem);
}

static void print_profile(const char *key, const double *t) {
    double sum = 0;
    printf(",\"%s\":{", key);
    for (int i = 0; i < P_N; i++) {
        printf("%s\"%s\":%.6f", i ? "," : "", pnames[i], t[i]);
        sum += t[i];
    }
    printf(",\"sum\":%.6f}", sum);
}

int main(int argc, char **argv) {
    if (argc < 2 || (argv[1][0] != 'A' && argv[1][0] != 'B' && argv[1][0] != 'M')) {
        fprintf(stderr, "usage: %s A|B|M [--steps N] [--warmup N] [--threads N] [--gen N] [--profile] [--pair] [--cpu] "
                        "[--batch N] [--muon]\n", argv[0]);
        return 2;
    }
    int steps = 5, warmup = 2, threads = 1, gen_runs = 0, want_profile = 0, pair = 0, batch_size = 0, muon = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--gen") && i + 1 < argc) gen_runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--profile")) want_profile = 1;
        else if (!strcmp(argv[i], "--pair")) pair = 1;
        else if (!strcmp(argv[i], "--cpu")) clock_id = CLOCK_PROCESS_CPUTIME_ID;
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc) batch_size = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--muon")) muon = 1;
    }
    wf_config cfg;
    bench_cfg bc;
    config_of(argv[1][0], &cfg, &bc);
    if (batch_size > 0) bc.B = batch_size;
    wf_model *m = wf_model_create();
    if (wf_model_set_threads(m, threads) != WF_OK || wf_model_init(m, &cfg) != WF_OK) {
        fprintf(stderr, "bench: %s\n", wf_model_error(m));
        return 1;
    }
    wf_optim o;
    wf_optim_default(&o);
    o.muon = muon;
    wf_model_set_optim(m, &o);
    const int N = bc.B * bc.T;
    int32_t *in = malloc((size_t)N * sizeof(int32_t)), *tg = malloc((size_t)N * sizeof(int32_t));
    wf_rng r;
    wf_rng_seed(&r, 42);
    for (int i = 0; i < N; i++) {
        in[i] = (int32_t)(wf_rng_u32(&r) % 96);
        tg[i] = (int32_t)(wf_rng_u32(&r) % 96);
    }
    double *times = malloc(sizeof(double) * (size_t)(steps > 0 ? steps : 1));
    wf_model *single = NULL;
    if (pair && threads > 1) {
        single = wf_model_create();
        if (wf_model_init(single, &cfg) != WF_OK || wf_model_set_optim(single, &o) != WF_OK) return 1;
    }
    double pair_time[2] = {0, 0};
    const wf_batch batch = {.inputs = in, .targets = tg, .B = bc.B, .T = bc.T};
    wf_step_info info;
    unsigned jobs0 = 0, counts0[3] = {0, 0, 0};
    double split[3] = {0, 0, 0}; /* the timed steps' caller: tasks, waiting, the rest */
    for (int s = 0; s < warmup + steps; s++) {
        if (s == warmup) {
            jobs0 = wf_pool_jobs(m->pool);
            wf_pool_counts(m->pool, &counts0[0], &counts0[1], &counts0[2]);
        }
        double p0[2], p1[2];
        wf_pool_times(m->pool, &p0[0], &p0[1]);
        double t0 = now();
        if (wf_model_step(m, &batch, &info) != WF_OK) {
            fprintf(stderr, "bench: %s\n", wf_model_error(m));
            return 1;
        }
        double t1 = now();
        wf_pool_times(m->pool, &p1[0], &p1[1]);
        if (s >= warmup) {
            times[s - warmup] = t1 - t0;
            split[0] += p1[0] - p0[0], split[1] += p1[1] - p0[1];
            split[2] += (t1 - t0) - (p1[0] - p0[0]) - (p1[1] - p0[1]);
        }
        if (single) {
            wf_model_step(single, &batch, NULL);
            if (s >= warmup) pair_time[0] += t1 - t0, pair_time[1] += now() - t1;
        }
    }
    const unsigned jobs = wf_pool_jobs(m->pool) - jobs0;
    unsigned counts[3];
    wf_pool_counts(m->pool, &counts[0], &counts[1], &counts[2]);
    for (int i = 0; i < 3; i++) counts[i] -= counts0[i];
    wf_model_free(single);
    double step = steps > 0 ? median(times, steps) : 0;
    double gen_tps = 0, decode_tps = 0;
    if (gen_runs > 0) {
        double *g = malloc(sizeof(double) * (size_t)gen_runs);
        int32_t prompt[16], out[128];
        for (int i = 0; i < 16; i++) prompt[i] = (int32_t)(wf_rng_u32(&r) % 96);
        wf_sampling smp = {0.8f, 0, 1.0f, 0, 0};
        for (int i = 0; i < gen_runs + 1; i++) {
            double t0 = now();
            wf_model_gen_start(m, prompt, 16, (uint32_t)i);
            for (int k = 0; k < 128; k++) wf_model_gen_next(m, &smp, NULL, &out[k], NULL, 0, NULL);
            if (i > 0) g[i - 1] = 128 / (now() - t0); /* the first run warms up */
        }
        gen_tps = median(g, gen_runs);
        /* decoding alone: T - 16 tokens after the prompt fill the window without a slide */
        for (int i = 0; i < gen_runs + 1; i++) {
            int32_t tok;
            wf_model_gen_start(m, prompt, 16, (uint32_t)i);
            double t0 = now();
            for (int k = 0; k < bc.T - 16; k++) wf_model_gen_next(m, &smp, NULL, &tok, NULL, 0, NULL);
            if (i > 0) g[i - 1] = (bc.T - 16) / (now() - t0);
        }
        decode_tps = median(g, gen_runs);
        free(g);
    }
    wf_model_info mi;
    wf_model_get_info(m, &mi);
    const wf_memory mem = mi.memory;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("{\"config\":\"%c\",\"batch\":%d,\"muon\":%d,\"backend\":\"%s\",\"threads\":%d,\"step_s\":%.6f,\"train_tok_s\":%.2f,"
           "\"gen_tok_s\":%.2f,\"decode_tok_s\":%.2f,\"peak_rss_bytes\":%.0f,\"params\":%d,\"model_bytes\":%.0f,\"act_bytes\":%.0f,"
           "\"loss\":%.5f",
           argv[1][0], bc.B, muon, wf_simd_name(),
           threads, step, step > 0 ? N / step : 0, gen_tps, decode_tps, ru.ru_maxrss * 1024.0, (int32_t)mem.count,
           mem.params + mem.grads + mem.optimizer, mem.activations, (double)info.loss);
    if (pair_time[0] > 0) printf(",\"pair_speedup\":%.3f", pair_time[1] / pair_time[0]);
    if (threads > 1 && steps > 0 && jobs > 0)
        printf(",\"pool_jobs_per_step\":%.1f,\"pool_busy_share\":%.3f,\"caller_task_share\":%.3f", (double)jobs / steps,
               (double)counts[0] / jobs, counts[1] ? (double)counts[2] / counts[1] : 0);
    /* the pool's times are wall clock: no split of a --cpu run */
    if (threads > 1 && steps > 0 && clock_id == CLOCK_MONOTONIC)
        printf(",\"step_split_ms\":{\"step\":%.3f,\"caller_tasks\":%.3f,\"caller_waits\":%.3f,\"one_thread\":%.3f}",
               (split[0] + split[1] + split[2]) * 1e3 / steps, split[0] * 1e3 / steps, split[1] * 1e3 / steps,
               split[2] * 1e3 / steps);
    if (want_profile) {
        double t[P_N], t1[P_N];
        profile(&cfg, &bc, muon, m->pool, (size_t)mem.count, t, t1);
        print_profile("profile", t);
        if (m->pool) print_profile("profile_1t", t1);
    }
    printf("}\n");
    wf_model_free(m);
    free(in); free(tg); free(times);
    return 0;
}
