/* Reads the WFFX fixtures written by tests/fixtures/gen_gpt_fixture.py (format there). */
#ifndef WF_FIXTURE_H
#define WF_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char name[64];
    int dtype; /* 0 f32, 1 i32 */
    int ndim;
    int dims[8];
    size_t count;
    void *data;
} fx_entry;

typedef struct {
    int n;
    fx_entry *e;
} fx_file;

static int fx_read_u32(FILE *f, uint32_t *v) { return fread(v, 4, 1, f) == 1; }

/* Returns 0 on success; the fixture files are ours, but a truncated one still fails cleanly. */
static int fx_load(const char *path, fx_file *fx) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char magic[4];
    uint32_t version, n;
    if (fread(magic, 1, 4, f) != 4 || memcmp(magic, "WFFX", 4) || !fx_read_u32(f, &version) || version != 1 ||
        !fx_read_u32(f, &n) || n > 4096) {
        fclose(f);
        return -1;
    }
    fx->n = (int)n;
    fx->e = calloc(n, sizeof(fx_entry));
    for (uint32_t i = 0; i < n; i++) {
        fx_entry *e = &fx->e[i];
        uint32_t len, dtype, ndim;
        if (!fx_read_u32(f, &len) || len >= sizeof e->name || fread(e->name, 1, len, f) != len ||
            !fx_read_u32(f, &dtype) || !fx_read_u32(f, &ndim) || ndim > 8) {
            fclose(f);
            return -1;
        }
        e->dtype = (int)dtype;
        e->ndim = (int)ndim;
        e->count = 1;
        for (uint32_t d = 0; d < ndim; d++) {
            uint32_t v;
            if (!fx_read_u32(f, &v)) { fclose(f); return -1; }
            e->dims[d] = (int)v;
            e->count *= v;
        }
        e->data = malloc(e->count * 4 + 1);
        if (fread(e->data, 4, e->count, f) != e->count) {
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    return 0;
}

static fx_entry *fx_get(fx_file *fx, const char *name) {
    for (int i = 0; i < fx->n; i++)
        if (!strcmp(fx->e[i].name, name)) return &fx->e[i];
    return NULL;
}

static void fx_free(fx_file *fx) {
    for (int i = 0; i < fx->n; i++) free(fx->e[i].data);
    free(fx->e);
}

#endif
