/* A tiny test harness: every CHECK counts, main returns non-zero if any failed. */
#ifndef WF_CHECK_H
#define WF_CHECK_H

#include <stdio.h>
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

static int check_summary(const char *name) {
    printf("%s: %d checks, %d failed\n", name, wf_checks_run, wf_checks_failed);
    return wf_checks_failed ? 1 : 0;
}

#endif
