#define _POSIX_C_SOURCE 199309L /* clock_gettime */
/* What this CPU can issue through the native build's SIMD backend (src/simd.h, -march=native
 * as the library): ACC independent chains of acc = acc * a + b with wf_vmadd (one FMA on the
 * AVX-512 and AVX2 backends, a multiply and an add on SSE2), 2 x WF_VL FLOP per chain step,
 * for several chain counts; the best is the backend's peak, which bench/run.mjs sets the
 * native rows' training GFLOP/s against (as bench/peak.mjs does for wasm). Prints one JSON
 * object.
 *   bench_peak [--cpu]   (--cpu: the process's CPU time instead of the wall clock) */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "simd.h"

static clockid_t clock_id = CLOCK_MONOTONIC;

static double now(void) {
    struct timespec ts;
    clock_gettime(clock_id, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ACC chains of the backend's multiply-add, iters steps each; returns a lane so the work is kept */
#define CHAINS(ACC)                                                                       \
    static __attribute__((noinline)) float chains##ACC(long iters) {                      \
        const float av = 0.999f, bv = 0.001f;                                             \
        const wf_v a = wf_vset1(av), b = wf_vset1(bv);                                    \
        wf_v acc[ACC];                                                                    \
        for (int i = 0; i < ACC; i++) acc[i] = wf_vset1((float)i);                        \
        for (long n = 0; n < iters; n++)                                                  \
            for (int i = 0; i < ACC; i++) acc[i] = wf_vmadd(acc[i], a, b);                \
        wf_v s = acc[0];                                                                  \
        for (int i = 1; i < ACC; i++) s = wf_vadd(s, acc[i]);                             \
        return wf_vsum(s);                                                                \
    }
CHAINS(4)
CHAINS(6)
CHAINS(8)
CHAINS(10)
CHAINS(12)
CHAINS(14)


typedef float (*chain_fn)(long);

/* GFLOP/s of fn (acc chains of lanes-wide FMAs): the median of 7 runs of about 0.2 s */
static double rate(chain_fn fn, int acc, int lanes) {
    volatile float sink = fn(1000000);
    long iters = 1000000;
    for (;;) {
        double t0 = now();
        sink += fn(iters);
        double s = now() - t0;
        if (s > 0.2) break;
        iters = (long)(iters * (s > 0.02 ? 0.22 / s : 10));
    }
    double r[7];
    for (int k = 0; k < 7; k++) {
        double t0 = now();
        sink += fn(iters);
        r[k] = (double)iters * acc * lanes * 2 / (now() - t0) / 1e9;
    }
    for (int i = 1; i < 7; i++) /* insertion sort, then the middle */
        for (int j = i; j > 0 && r[j] < r[j - 1]; j--) {
            double x = r[j];
            r[j] = r[j - 1], r[j - 1] = x;
        }
    (void)sink;
    return r[3];
}

static void report(const char *key, const char *what, const chain_fn *fns, const int *accs, int n, int lanes) {
    double best = 0;
    int best_acc = 0;
    printf("%s\"%s\":{\"what\":\"%s\",\"rows\":[", strcmp(key, "backend") ? "," : "", key, what);
    for (int i = 0; i < n; i++) {
        const double g = rate(fns[i], accs[i], lanes);
        printf("%s{\"chains\":%d,\"gflops\":%.2f}", i ? "," : "", accs[i], g);
        if (g > best) best = g, best_acc = accs[i];
    }
    printf("],\"peak\":{\"chains\":%d,\"gflops\":%.2f}}", best_acc, best);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--cpu")) clock_id = CLOCK_PROCESS_CPUTIME_ID;
    static const chain_fn fns[] = {chains4, chains6, chains8, chains10, chains12, chains14};
    static const int accs[] = {4, 6, 8, 10, 12, 14};
    printf("{\"simd\":\"%s\",", WF_SIMD_NAME);
    report("backend", "wf_vmadd, " WF_SIMD_NAME, fns, accs, 6, WF_VL);
    printf("}\n");
    return 0;
}
