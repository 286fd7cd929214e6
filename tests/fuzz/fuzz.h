/* Shared by the fuzz targets: the libFuzzer entry point and the property checks. A target
 * is built twice: against libFuzzer (scripts/fuzz.sh, clang) and against replay.c, which
 * runs the committed seeds and regression inputs through it in every ctest run. A failed
 * property aborts, which both report as a crash. */
#ifndef WF_FUZZ_H
#define WF_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);

#define REQUIRE(cond, ...)                                                          \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "fuzz property failed at %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                           \
            fprintf(stderr, "\n");                                                  \
            abort();                                                                \
        }                                                                           \
    } while (0)

/* A small decoder every target can load into and compare against: V 8, context 4, C 8. */
static inline wf_config fuzz_small_config(void) {
    wf_config c;
    wf_config_default(&c);
    c.vocab_size = 8;
    c.context = 4;
    c.n_layer = 1;
    c.n_head = 2;
    c.d_model = 8;
    c.d_ff = 16;
    return c;
}

/* A copy of the weights, to prove a refused load changed nothing. Caller frees. */
static inline float *fuzz_snapshot(wf_model *m, size_t *n_out) {
    wf_tensor_info t;
    wf_model_get_tensor(m, model_info(m).n_tensors - 1, &t);
    size_t n = (size_t)t.offset + (size_t)t.size;
    float *s = malloc(n * sizeof(float));
    if (s) memcpy(s, wf_model_params(m), n * sizeof(float));
    *n_out = n;
    return s;
}

/* A refused call's promise: a message, and m's config and weights as before (cfg, and the
 * fuzz_snapshot of n floats). */
static inline void fuzz_require_unchanged(wf_model *m, wf_status s, const wf_config *cfg, const float *before, size_t n) {
    REQUIRE(wf_model_error(m)[0] != 0, "refused with %s but no message", wf_status_string(s));
    wf_config now;
    wf_model_get_config(m, &now);
    REQUIRE(memcmp(&now, cfg, sizeof now) == 0, "a refused call changed the config");
    REQUIRE(memcmp(wf_model_params(m), before, n * sizeof(float)) == 0, "a refused call changed the weights");
}

/* Bytes allocated now: the sanitizer's count when it runs (its allocator is not glibc's),
 * else wf_heap_in_use. For bounds on what loading a file may take. */
size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));
static inline double fuzz_heap_bytes(void) {
    return __sanitizer_get_current_allocated_bytes ? (double)__sanitizer_get_current_allocated_bytes() : wf_heap_in_use();
}

/* A copy of a checkpoint or tokenizer file with the length in its header and the CRC-32
 * at its end made to agree with its bytes, so mutations reach the parsers behind the
 * checksum instead of stopping at it; NULL when too short to have both. Caller frees. */
static inline uint8_t *fuzz_sealed(const uint8_t *data, size_t n) {
    if (n < 28) return NULL;
    uint8_t *c = malloc(n);
    if (!c) return NULL;
    memcpy(c, data, n);
    for (int i = 0; i < 8; i++) c[16 + i] = (uint8_t)((uint64_t)n >> (8 * i));
    uint32_t crc = wf_crc32(c, n - 4);
    for (int i = 0; i < 4; i++) c[n - 4 + i] = (uint8_t)(crc >> (8 * i));
    return c;
}

#endif
