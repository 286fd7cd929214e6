/* Byte-level BPE training and encoding time, natively: the median of `runs` runs per
 * vocabulary size. Usage: bench_bpe_train FILE [runs] — run by bench/studies/bpe_train.mjs,
 * which times the wasm build the same way in the same run. Prints one line per size:
 * vocab, train ms, encode ms, tokens. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wasmformer.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE [runs]\n", argv[0]);
        return 2;
    }
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (runs < 1 || runs > 100) runs = 5;
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc(len);
    if (!text || fread(text, 1, len, f) != (size_t)len) return 1;
    fclose(f);
    int32_t *ids = malloc(len * sizeof(int32_t));
    const int sizes[] = {512, 1024, 2048, 4096, 8192};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        double train[100], enc[100];
        int32_t n = 0;
        for (int r = 0; r < runs; r++) {
            wf_tokenizer *t = wf_tokenizer_create();
            double t0 = now_ms();
            if (wf_tokenizer_train(t, WF_TOKENIZER_BPE, text, (int32_t)len, sizes[s]) != WF_OK) {
                fprintf(stderr, "%s\n", wf_tokenizer_error(t));
                return 1;
            }
            double t1 = now_ms();
            wf_tokenizer_encode(t, text, (int32_t)len, ids, (int32_t)len, &n);
            enc[r] = now_ms() - t1;
            train[r] = t1 - t0;
            wf_tokenizer_free(t);
        }
        qsort(train, runs, sizeof(double), cmp);
        qsort(enc, runs, sizeof(double), cmp);
        printf("%d %.2f %.2f %d\n", sizes[s], train[runs / 2], enc[runs / 2], n);
    }
    free(ids);
    free(text);
    return 0;
}
