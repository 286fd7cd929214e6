/* How long the thread pool's worker takes to join a job, against the idle gap before the job
 * (docs/SPEED.md, "Waking the pool"). Each round waits `gap` on the caller, then runs a job of
 * two tasks: the caller takes task 0 and waits in it until the worker has started task 1 (or
 * 5 ms), so the time from publishing the job to task 1's start is the worker's join latency:
 * spinning, it is the time to see a new job; asleep, the time to be woken. The pool is the
 * library's internal one (src/pool.h), so this builds from the sources, natively and in wasm:
 *   cc -O2 -std=c11 -DWF_THREADS -Iinclude -Isrc bench/studies/pool_wake.c \
 *      $(grep -v '^#' src/sources.txt | sed 's|^|src/|') -lm -lpthread -o build/pool_wake && build/pool_wake
 *   NODE_PATH=/usr/share/nodejs emcc -O3 -std=c11 -msimd128 -mbulk-memory -DWF_THREADS -pthread \
 *      -sPTHREAD_POOL_SIZE=2 -sENVIRONMENT=node -sWASM_ASYNC_COMPILATION=0 -sEXIT_RUNTIME=1 \
 *      -Iinclude -Isrc bench/studies/pool_wake.c $(grep -v '^#' src/sources.txt | sed 's|^|src/|') \
 *      -o build/pool_wake.js && echo '{"type":"commonjs"}' > build/package.json && node build/pool_wake.js
 * Prints, per gap, the median, 90th percentile and largest latency over 200 rounds. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pool.h"

#define ROUNDS 200

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static atomic_int joined;
static double t_joined;

static void task(void *ctx, int t) {
    (void)ctx;
    if (t == 1) {
        t_joined = now();
        atomic_store(&joined, 1);
        return;
    }
    const double start = now();
    while (!atomic_load(&joined) && now() - start < 5e-3) continue;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void) {
    wf_pool *pool;
    if (wf_pool_start(&pool, 2, 2.0) != WF_OK) {
        fprintf(stderr, "pool_wake: no thread pool in this build\n");
        return 1;
    }
    const double gaps[] = {0, 20e-6, 100e-6, 500e-6, 1e-3, 2e-3, 10e-3};
    for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++) {
        double lat[ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            const double start = now();
            while (now() - start < gaps[g]) continue;
            atomic_store(&joined, 0);
            t_joined = 0;
            const double t0 = now();
            wf_pool_run(pool, 2, task, NULL);
            lat[r] = t_joined > 0 ? t_joined - t0 : 5e-3; /* never joined: the caller ran both */
        }
        qsort(lat, ROUNDS, sizeof lat[0], cmp_double);
        printf("gap %6.0f us: the worker joins after %7.1f us (median), %7.1f (p90), %7.1f (max)\n", gaps[g] * 1e6,
               lat[ROUNDS / 2] * 1e6, lat[ROUNDS * 9 / 10] * 1e6, lat[ROUNDS - 1] * 1e6);
    }
    wf_pool_free(pool);
    return 0;
}
