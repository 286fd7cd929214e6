/* Prints the config and training-settings tables of include/wasmformer.h (WF_CONFIG_FIELDS,
 * WF_OPTIM_FIELDS) and the presets of src/presets.h (WF_PRESETS) as JSON, for
 * scripts/gen-config.mjs, which writes the JavaScript package's copy
 * (src/js/config-table.js). Needs only the two headers:
 *   cc -Iinclude -Isrc scripts/config_table.c -o config_table && ./config_table */
#include <float.h>
#include <stdio.h>

#include "wasmformer.h"
#include "presets.h"

/* A JSON string: the table's texts are plain ASCII without quotes or backslashes. */
static void str(const char *key, const char *s) { printf(", \"%s\": \"%s\"", key, s); }

static void names(const char *list) {
    printf(", \"names\": [\"");
    for (const char *p = list; *p; p++) {
        if (*p == ' ') printf("\", \"");
        else putchar(*p);
    }
    printf("\"]");
}

static int first;
static void row(const char *name, const char *js, const char *type) {
    printf("%s\n    {\"name\": \"%s\", \"js\": \"%s\", \"type\": \"%s\"", first ? "" : ",", name, js, type);
    first = 0;
}

#define ENUM(name, js, def, list, doc) \
    row(#name, #js, "enum");           \
    printf(", \"default\": %d", (int)(def)); \
    names(list);                       \
    str("doc", doc);                   \
    printf("}");
#define BOOL(name, js, def, doc) \
    row(#name, #js, "bool");     \
    printf(", \"default\": %s", (def) ? "true" : "false"); \
    str("doc", doc);             \
    printf("}");
#define INT(name, js, def, lo, hi, scope, doc) \
    row(#name, #js, "int");                    \
    printf(", \"default\": %d, \"min\": %lld, \"max\": %lld", (int)(def), (long long)(lo), (long long)(hi)); \
    if ((scope) == WF_ED) printf(", \"encoderDecoderOnly\": true"); \
    str("doc", doc);                           \
    printf("}");
/* floats to 9 significant digits, which read back as the same float32 */
#define REAL(name, js, def, lo, hi, bounds, doc) \
    row(#name, #js, "real");                     \
    printf(", \"default\": %.9g, \"min\": %.9g", (double)(def), (double)(lo)); \
    if ((hi) == FLT_MAX) printf(", \"max\": null"); else printf(", \"max\": %.9g", (double)(hi)); \
    str("bounds", bounds);                       \
    str("doc", doc);                             \
    printf("}");
#define SEED(name, js, def, doc) \
    row(#name, #js, "seed");     \
    printf(", \"default\": %u", (unsigned)(def)); \
    str("doc", doc);             \
    printf("}");

/* A preset's row, in the package's names: its shape, positions (an enum index) and recipe. */
#define PRESET(name, L, NH, C, F, T, pos, B, lr, beta2, muon, steps)                                               \
    printf("%s\n    {\"name\": \"%s\", \"nLayer\": %d, \"nHead\": %d, \"dModel\": %d, \"dFF\": %d, \"context\": %d, " \
           "\"positions\": %d, \"batchSize\": %d, \"lr\": %.9g, \"beta2\": %.9g, \"muon\": %d, \"steps\": %d}",          \
           first ? "" : ",", #name, L, NH, C, F, T, (int)(pos), B, (double)(lr), (double)(beta2), muon, steps);           \
    first = 0;

int main(void) {
    printf("{\n  \"config\": [");
    first = 1;
    WF_CONFIG_FIELDS(ENUM, BOOL, INT, REAL, SEED)
    printf("\n  ],\n  \"optim\": [");
    first = 1;
    WF_OPTIM_FIELDS(INT, REAL)
    printf("\n  ],\n  \"presets\": [");
    first = 1;
    WF_PRESETS(PRESET)
    printf("\n  ]\n}\n");
    return 0;
}
