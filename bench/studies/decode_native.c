/* Greedy decoding of a GGUF file natively, for a load-free profile of a decoded token
 * (issue 29): the file loaded, a 16-token prompt (bench/studies/decode-ab.mjs's), then
 * N greedy tokens, ROUNDS times; prints tokens/s per round. Under callgrind, collect the
 * decoding alone:
 *   cc -O2 -g -march=haswell -Iinclude bench/studies/decode_native.c build/native/libwasmformer_avx2.a \
 *      -lm -lpthread -o build/decode_native
 *   valgrind --tool=callgrind --toggle-collect=wf_model_gen_next build/decode_native \
 *      bench/models/smollm-135m/q8_0.gguf 4
 *   build/decode_native FILE [N=32] [ROUNDS=1]
 * (libwasmformer_avx2.a: valgrind 3.19 cannot run the AVX-512 that -march=native may pick.) */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "wasmformer.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE.gguf [tokens=32] [rounds=1]\n", argv[0]);
        return 2;
    }
    const int n = argc > 2 ? atoi(argv[2]) : 32, rounds = argc > 3 ? atoi(argv[3]) : 1;
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *bytes = malloc((size_t)size);
    if (!bytes || size > INT32_MAX || fread(bytes, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "%s: cannot read it whole\n", argv[1]);
        return 1;
    }
    fclose(f);
    wf_model *m = wf_model_create();
    if (!m || wf_model_load(m, NULL, bytes, (int32_t)size) != WF_OK) {
        fprintf(stderr, "%s: %s\n", argv[1], m ? wf_model_error(m) : "out of memory");
        return 1;
    }
    free(bytes);
    wf_model_info info;
    wf_model_get_info(m, &info);
    int32_t prompt[16];
    uint32_t seed = 7;
    for (int i = 0; i < 16; i++) {
        seed = seed * 1103515245u + 12345u;
        prompt[i] = (int32_t)((seed >> 8) % 49152u);
    }
    const wf_sampling greedy = {.temperature = 0, .top_k = 0, .top_p = 1, .n_vocab = 0, .no_unk = 0};
    for (int r = 0; r < rounds; r++) {
        if (wf_model_gen_start(m, prompt, 16, 1) != WF_OK) {
            fprintf(stderr, "%s\n", wf_model_error(m));
            return 1;
        }
        int32_t token = 0;
        const double t0 = now();
        for (int k = 0; k < n; k++) wf_model_gen_next(m, &greedy, NULL, &token, NULL, 0, NULL);
        printf("%s: %d tokens, %.1f tokens/s, last token %d\n", argv[1], n, n / (now() - t0), token);
    }
    wf_model_free(m);
    return 0;
}
