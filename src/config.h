/* The config and training-settings tables (WF_CONFIG_FIELDS, WF_OPTIM_FIELDS in
 * include/wasmformer.h) as data, for the code that walks them: the checks (config.c), the
 * checkpoint's sections (checkpoint.c) and config.json's "wasmformer" layout (hf.c); and a
 * config's tensor table, for the file formats. */
#ifndef WF_CONFIG_H
#define WF_CONFIG_H

#include "plan.h"

typedef struct {
    const char *name;  /* the C name, also config.json's key */
    char kind;         /* 'e' enum, 'b' bool, 'i' int32, 'f' float, 'u' seed (uint32) */
    size_t offset;     /* bytes into the struct; every field is 4 bytes */
    double lo, hi;     /* 'i' and 'f': the range */
    const char *names; /* 'e': the values' names, space-separated; 'f': the bounds, e.g. "[)" */
    int scope;         /* WF_ALL, or WF_ED: checked for encoder-decoders only */
} wf_field;

#define WF_COUNT_(...) +1
enum {
    WF_N_CONFIG = 0 WF_CONFIG_FIELDS(WF_COUNT_, WF_COUNT_, WF_COUNT_, WF_COUNT_, WF_COUNT_),
    WF_N_OPTIM = 0 WF_OPTIM_FIELDS(WF_COUNT_, WF_COUNT_),
};
#undef WF_COUNT_
extern const wf_field wf_config_fields[WF_N_CONFIG];
extern const wf_field wf_optim_fields[WF_N_OPTIM];

/* Name i of an enum's space-separated names: its start in *at and its length (0: no such
 * value); and the value a name stands for (-1: none). */
size_t wf_enum_name(const char *names, int32_t i, const char **at);
int32_t wf_enum_value(const char *names, const char *name);

/* A config's tensor table, checked first: WF_ERR_CONFIG when it is invalid or has more than
 * 2^31 - 1 parameters. For the file formats, which check a file against it. */
wf_status wf_tensor_table(const wf_config *cfg, wf_tensor_info out[WF_N_PARAMS]);

#endif /* WF_CONFIG_H */
