/* A tiny test harness: every CHECK counts, main returns non-zero if any failed. */
#ifndef WF_CHECK_H
#define WF_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

static int wf_checks_run, wf_checks_failed;

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        wf_checks_run++;                                                    \
        if (!(cond)) {                                                      \
            wf_checks_failed++;                                             \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fprintf(stderr, "\n");                                          \
        }                                                                   \
    } while (0)

#define CHECK_OK(call, m)                                                                   \
    do {                                                                                    \
        wf_status s_ = (call);                                                              \
        CHECK(s_ == WF_OK, "%s -> %s: %s", #call, wf_status_string(s_), wf_model_error(m)); \
    } while (0)

/* A whole file (tests run from the repository root), NUL-terminated after its *n bytes;
 * malloc'd, the caller frees it. NULL and *n = 0 when it cannot be read. */
static inline uint8_t *read_file(const char *path, int32_t *n) {
    *n = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    const long len = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *b = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (b && fread(b, 1, (size_t)len, fp) == (size_t)len) {
        b[len] = 0;
        *n = (int32_t)len;
    } else {
        free(b);
        b = NULL;
    }
    fclose(fp);
    return b;
}

static int check_summary(const char *name) {
    printf("%s: %d checks, %d failed\n", name, wf_checks_run, wf_checks_failed);
    return wf_checks_failed ? 1 : 0;
}

#endif
