/* Prints the core's tables as JSON, for scripts/gen-config.mjs, which writes the JavaScript
 * package's copy (src/js/config-table.js): the config and training-settings tables of
 * include/wasmformer.h (WF_CONFIG_FIELDS, WF_OPTIM_FIELDS), its statuses (WF_STATUSES), the
 * constants the package passes or reads, the parameter tensors of src/plan.h (WF_PARAMS:
 * which are stacked per layer, the groups a fine-tuning choice names them by), LoRA's
 * targets (WF_LORA_NAMES) and the presets of src/presets.h (WF_PRESETS):
 *   cc -Iinclude -Isrc scripts/config_table.c -o config_table && ./config_table */
#include <float.h>
#include <stdio.h>

#include "plan.h"
#include "presets.h"

/* A JSON string: the table's texts are plain ASCII without quotes or backslashes. */
static void str(const char *key, const char *s) { printf(", \"%s\": \"%s\"", key, s); }

/* Space-separated names as a JSON array. */
static void list(const char *names) {
    printf("[\"");
    for (const char *p = names; *p; p++) {
        if (*p == ' ') printf("\", \"");
        else putchar(*p);
    }
    printf("\"]");
}

static void names(const char *names) {
    printf(", \"names\": ");
    list(names);
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

/* The constants the package uses, by name: a name the header lacks fails to compile. */
#define CONSTANTS(K)                                                                                   \
    K(WF_SAVE_OPTIMIZER) K(WF_SAVE_JSON) K(WF_NOTE_MAX)                                                \
    K(WF_TOKENIZER_NONE) K(WF_TOKENIZER_CHAR) K(WF_TOKENIZER_BPE) K(WF_TOKENIZER_HF) K(WF_TOKENIZER_LLAMA2C)        \
    K(WF_ORIGIN_NONE) K(WF_ORIGIN_INIT) K(WF_ORIGIN_WEIGHTS) K(WF_ORIGIN_OPTIMIZER) K(WF_ORIGIN_LLAMA2C)              \
    K(WF_ORIGIN_SAFETENSORS)

static void status(const char *name, const char *text) {
    printf("%s\n    {\"name\": \"%s\", \"text\": \"%s\"}", first ? "" : ",", name, text);
    first = 0;
}

static void tensor(const char *name, int i, int groups) {
    printf("%s\n    {\"name\": \"%s\", \"stacked\": %s, \"groups\": [", first ? "" : ",", name,
           wf_param_stacked(i) ? "true" : "false");
    const char *g = WF_GROUP_NAMES;
    for (int bit = 1, any = 0; *g; bit <<= 1) {
        size_t n = 0;
        while (g[n] && g[n] != ' ') n++;
        if (groups & bit) printf("%s\"%.*s\"", any++ ? ", " : "", (int)n, g);
        g += n + (g[n] == ' ');
    }
    printf("]}");
    first = 0;
}

/* A preset's row, in the package's names: its shape, positions (an enum index) and recipe. */
#define PRESET(name, L, NH, C, F, T, pos, B, lr, beta2, muon, steps)                                               \
    printf("%s\n    {\"name\": \"%s\", \"nLayer\": %d, \"nHead\": %d, \"dModel\": %d, \"dFF\": %d, \"context\": %d, " \
           "\"positions\": %d, \"batchSize\": %d, \"lr\": %.9g, \"beta2\": %.9g, \"muon\": %d, \"steps\": %d}",          \
           first ? "" : ",", #name, L, NH, C, F, T, (int)(pos), B, (double)(lr), (double)(beta2), muon, steps);           \
    first = 0;

int main(void) {
    printf("{\n  \"status\": [");
    first = 1;
#define S(name, text) status(#name, text);
    WF_STATUSES(S)
#undef S
    printf("\n  ],\n  \"constants\": {");
    first = 1;
#define K(name) printf("%s\n    \"%s\": %lld", first ? "" : ",", #name, (long long)(name)), first = 0;
    CONSTANTS(K)
#undef K
    printf("\n  },\n  \"groups\": ");
    list(WF_GROUP_NAMES);
    printf(",\n  \"lora\": ");
    list(WF_LORA_NAMES);
    printf(",\n  \"tensors\": [");
    first = 1;
#define T(name, nd, d0, d1, d2, decay, init, groups) tensor(#name, WF_P_##name, groups);
    WF_PARAMS(T)
#undef T
    printf("\n  ],\n  \"config\": [");
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
