/* GGUF files (gguf.h): the container's header, read hardened like every loader (the
 * llama-family model in it: gguf_model.c; its tensors' data, streamed: gguf_stream.c), and the
 * writer's primitives. Every count and length is checked against the bytes left before it is
 * used, in 64-bit arithmetic compared with the buffer's size_t length (32 bits in wasm). The
 * header may be read from a prefix of the file: a failure for want of bytes says so (more). */
#include <stdio.h>
#include <stdlib.h>

#include "gguf.h"

#define MAX_ENTRIES (1 << 20) /* key-value pairs or tensors: far beyond any model */

/* ---- the container ---- */

int wf_gguf_is(const uint8_t *b, size_t n) { return n >= 4 && !memcmp(b, WF_GGUF_MAGIC, 4); }

static const size_t SCALAR_BYTES[GG_TYPES] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

/* A string: u64 length, then its bytes. */
static gg_str get_str(wf_reader *r) {
    const uint64_t len = wf_get_u64(r);
    gg_str s = {NULL, 0};
    if (r->failed || len > wf_left(r)) {
        r->failed = 1;
        return s;
    }
    s.n = (size_t)len;
    s.p = wf_take(r, s.n);
    return s;
}

gg_str wf_gguf_next_str(const uint8_t **at) {
    wf_reader r = wf_reader_of(*at, 8 + (size_t)wf_le32(*at)); /* checked by the parser: it fits */
    const gg_str s = get_str(&r);
    *at += 8 + s.n;
    return s;
}

/* Shown in messages: printable ASCII, the rest as '?', at most cap - 1 bytes. */
const char *wf_gguf_shown(gg_str s, char *buf, size_t cap) {
    size_t k = 0;
    for (; k < s.n && k + 1 < cap; k++) buf[k] = s.p[k] >= 32 && s.p[k] < 127 ? (char)s.p[k] : '?';
    buf[k] = 0;
    return buf;
}

/* One value of type `type` (not an array) skipped over, bounded. */
static void skip_value(wf_reader *r, uint32_t type) {
    if (type == GG_STR) get_str(r);
    else wf_take(r, SCALAR_BYTES[type]);
}

static wf_status parse_kv(wf_reader *r, gg_kv *kv, char *msg, size_t cap) {
    char name[80];
    kv->key = get_str(r);
    kv->type = wf_get_u32(r);
    if (r->failed) FAIL(WF_ERR_FORMAT, "GGUF: a key-value pair runs past the end of the file");
    if (kv->type >= GG_TYPES) FAIL(WF_ERR_FORMAT, "GGUF: \"%s\" has value type %u", wf_gguf_shown(kv->key, name, sizeof name), kv->type);
    const size_t start = r->off;
    if (kv->type == GG_ARR) {
        kv->etype = wf_get_u32(r);
        kv->count = wf_get_u64(r);
        if (r->failed) FAIL(WF_ERR_FORMAT, "GGUF: \"%s\": the array runs past the end", wf_gguf_shown(kv->key, name, sizeof name));
        if (kv->etype >= GG_TYPES || kv->etype == GG_ARR)
            FAIL(kv->etype == GG_ARR ? WF_ERR_UNSUPPORTED : WF_ERR_FORMAT, "GGUF: \"%s\": arrays of element type %u are %s",
                 wf_gguf_shown(kv->key, name, sizeof name), kv->etype, kv->etype == GG_ARR ? "not supported (nested)" : "unknown");
        /* each element takes at least a byte (a string: its 8-byte length): a count beyond
         * the bytes left cannot be, whatever the element type */
        const size_t least = kv->etype == GG_STR ? 8 : SCALAR_BYTES[kv->etype];
        if (kv->count > wf_left(r) / least) {
            r->failed = 1; /* for want of bytes: a longer prefix may hold them */
            FAIL(WF_ERR_FORMAT, "GGUF: \"%s\" says it has %llu elements but only %zu bytes follow",
                 wf_gguf_shown(kv->key, name, sizeof name), (unsigned long long)kv->count, r->n - r->off);
        }
        kv->at = r->p + r->off;
        for (uint64_t i = 0; i < kv->count && !r->failed; i++) skip_value(r, kv->etype);
    } else {
        kv->at = r->p + r->off;
        skip_value(r, kv->type);
        if (kv->type == GG_BOOL && !r->failed && kv->at[0] > 1)
            FAIL(WF_ERR_FORMAT, "GGUF: \"%s\" is a bool of value %u", wf_gguf_shown(kv->key, name, sizeof name), kv->at[0]);
    }
    if (r->failed) FAIL(WF_ERR_FORMAT, "GGUF: the value of \"%s\" runs past the end of the file", wf_gguf_shown(kv->key, name, sizeof name));
    kv->bytes = r->off - start;
    return WF_OK;
}

size_t wf_gguf_row_bytes(uint32_t type, uint64_t ne0) {
    size_t n = 0; /* 0 as well when a row passes a size_t (a 32-bit one: 2^31 floats) */
    if (ne0 > SIZE_MAX) return 0;
    switch (type) {
    case GGML_F32: return wf_mul_ok((size_t)ne0, 4, &n) ? n : 0;
    case GGML_F16:
    case GGML_BF16: return wf_mul_ok((size_t)ne0, 2, &n) ? n : 0;
    case GGML_Q8_0: return ne0 % 32 || !wf_mul_ok((size_t)(ne0 / 32), 34, &n) ? 0 : n;
    case GGML_Q4_0: return ne0 % 32 || !wf_mul_ok((size_t)(ne0 / 32), 18, &n) ? 0 : n;
    default: return 0;
    }
}

const char *wf_gguf_type_name(uint32_t type) {
    static const char *const names[] = {"F32", "F16", "Q4_0", "Q4_1", "Q4_2", "Q4_3", "Q5_0", "Q5_1", "Q8_0", "Q8_1",
                                        "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ3_XXS",
                                        "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS", "I8", "I16", "I32", "I64", "F64",
                                        "IQ1_M", "BF16"};
    return type < sizeof names / sizeof *names ? names[type] : "unknown";
}

static wf_status parse_tensor(wf_reader *r, gg_tensor *t, char *msg, size_t cap) {
    char name[GG_MAX_NAME + 8];
    t->name = get_str(r);
    t->ndim = wf_get_u32(r);
    if (r->failed) FAIL(WF_ERR_FORMAT, "GGUF: a tensor's description runs past the end of the file");
    if (t->name.n == 0 || t->name.n >= GG_MAX_NAME)
        FAIL(WF_ERR_FORMAT, "GGUF: a tensor name is %zu bytes long (1 to %d)", t->name.n, GG_MAX_NAME - 1);
    if (t->ndim < 1 || t->ndim > GG_MAX_DIMS)
        FAIL(WF_ERR_FORMAT, "GGUF: tensor \"%s\" has %u dimensions (1 to %d)", wf_gguf_shown(t->name, name, sizeof name), t->ndim,
             GG_MAX_DIMS);
    uint64_t elems = 1;
    for (uint32_t d = 0; d < GG_MAX_DIMS; d++) {
        t->ne[d] = d < t->ndim ? wf_get_u64(r) : 1;
        if (!r->failed && (t->ne[d] == 0 || t->ne[d] > INT32_MAX || elems > (UINT64_MAX >> 2) / t->ne[d]))
            FAIL(WF_ERR_FORMAT, "GGUF: tensor \"%s\" has dimension %u of %llu", wf_gguf_shown(t->name, name, sizeof name), d,
                 (unsigned long long)t->ne[d]);
        elems *= t->ne[d];
    }
    t->type = wf_get_u32(r);
    t->offset = wf_get_u64(r);
    if (r->failed) FAIL(WF_ERR_FORMAT, "GGUF: tensor \"%s\"'s description runs past the end", wf_gguf_shown(t->name, name, sizeof name));
    return WF_OK;
}

/* The header of the file whose first n bytes are at b: wf_gguf_parse, which says when a failure
 * was for want of bytes (f->more). */
static wf_status parse(const uint8_t *b, size_t n, gg_file *f, char *msg, size_t cap) {
    wf_reader r = wf_reader_of(b, n);
    if (n < 4) {
        f->more = 1;
        FAIL(WF_ERR_FORMAT, "GGUF: %zu bytes, shorter than the 24-byte header", n);
    }
    if (!wf_gguf_is(b, n)) FAIL(WF_ERR_FORMAT, "not a GGUF file (its first bytes are not \"GGUF\")");
    wf_take(&r, 4);
    f->version = wf_get_u32(&r);
    const uint64_t n_t = wf_get_u64(&r), n_kv = wf_get_u64(&r);
    if ((f->more = r.failed)) FAIL(WF_ERR_FORMAT, "GGUF: %zu bytes, shorter than the 24-byte header", n);
    if (f->version != 3 && f->version != 2)
        FAIL(WF_ERR_UNSUPPORTED, "GGUF version %u; this build reads versions 2 and 3 (little-endian)", f->version);
    /* each pair takes at least 13 bytes (key length, type, a byte), each tensor 32 */
    if (n_kv > MAX_ENTRIES || n_t > MAX_ENTRIES) FAIL(WF_ERR_FORMAT, "GGUF: the header counts %llu key-value pairs and %llu tensors, "
                                                      "more than any model has", (unsigned long long)n_kv, (unsigned long long)n_t);
    if (n_kv > wf_left(&r) / 13 || n_t > wf_left(&r) / 32) {
        f->more = 1;
        FAIL(WF_ERR_FORMAT, "GGUF: the header counts %llu key-value pairs and %llu tensors, more than %zu bytes hold",
             (unsigned long long)n_kv, (unsigned long long)n_t, n);
    }
    f->kv = calloc((size_t)n_kv + 1, sizeof *f->kv);
    f->t = calloc((size_t)n_t + 1, sizeof *f->t);
    if (!f->kv || !f->t) FAIL(WF_ERR_NOMEM, "out of memory reading a GGUF file's %llu entries", (unsigned long long)(n_kv + n_t));
    wf_status s = WF_OK;
    for (uint64_t i = 0; i < n_kv && s == WF_OK; i++, f->n_kv++) s = parse_kv(&r, &f->kv[i], msg, cap);
    for (int32_t i = 0; i < f->n_kv && s == WF_OK; i++)
        for (int32_t j = 0; j < i && s == WF_OK; j++)
            if (f->kv[i].key.n == f->kv[j].key.n && !memcmp(f->kv[i].key.p, f->kv[j].key.p, f->kv[i].key.n)) {
                char name[80];
                s = wf_fail(msg, cap, WF_ERR_FORMAT, "GGUF: key \"%s\" appears twice", wf_gguf_shown(f->kv[i].key, name, sizeof name));
            }
    /* general.alignment: a power of two, 32 when absent */
    f->alignment = 32;
    const gg_kv *al = s == WF_OK ? wf_gguf_get(f, "general.alignment") : NULL;
    if (al) {
        if (al->type != GG_U32 || !wf_le32(al->at) || (wf_le32(al->at) & (wf_le32(al->at) - 1)) || wf_le32(al->at) > (1u << 16))
            s = wf_fail(msg, cap, WF_ERR_FORMAT, "GGUF: general.alignment must be a u32 power of two up to 65536");
        else f->alignment = wf_le32(al->at);
    }
    for (uint64_t i = 0; i < n_t && s == WF_OK; i++, f->n_t++) s = parse_tensor(&r, &f->t[i], msg, cap);
    if ((f->more = r.failed) || s != WF_OK) return s;
    /* the data: from the next multiple of the alignment */
    f->data = (r.off + f->alignment - 1) / f->alignment * f->alignment;
    if (f->data > n) {
        f->more = 1;
        FAIL(WF_ERR_FORMAT, "GGUF: the file ends before its tensor data (at byte %zu of %zu)", f->data, n);
    }
    /* each tensor of a type this build reads: whole blocks a row, aligned, addressable */
    for (int32_t i = 0; i < f->n_t; i++) {
        gg_tensor *t = &f->t[i];
        char name[GG_MAX_NAME + 8];
        const size_t row = wf_gguf_row_bytes(t->type, t->ne[0]);
        uint64_t rows = 1;
        for (uint32_t d = 1; d < GG_MAX_DIMS; d++) rows *= t->ne[d];
        if (t->type != GGML_F32 && t->type != GGML_F16 && t->type != GGML_BF16 && t->type != GGML_Q8_0 && t->type != GGML_Q4_0)
            continue;
        if (!row || rows > SIZE_MAX / row)
            FAIL(WF_ERR_FORMAT, "GGUF: tensor \"%s\" (%s) has rows of %llu values: not whole blocks of 32, or more bytes than "
                 "this build addresses", wf_gguf_shown(t->name, name, sizeof name), wf_gguf_type_name(t->type), (unsigned long long)t->ne[0]);
        if (t->offset % f->alignment)
            FAIL(WF_ERR_FORMAT, "GGUF: tensor \"%s\" starts at %llu, not a multiple of the alignment %u",
                 wf_gguf_shown(t->name, name, sizeof name), (unsigned long long)t->offset, f->alignment);
        t->row = row;
        t->bytes = (size_t)rows * row;
        const uint64_t data = f->data, bytes = t->bytes; /* (64 bits whatever size_t is) */
        if (bytes > UINT64_MAX - data || t->offset > UINT64_MAX - data - bytes)
            FAIL(WF_ERR_FORMAT, "GGUF: tensor \"%s\" starts at byte %llu, past any file", wf_gguf_shown(t->name, name, sizeof name),
                 (unsigned long long)t->offset);
    }
    return WF_OK;
}

wf_status wf_gguf_parse(const uint8_t *b, size_t n, gg_file *f, char *msg, size_t cap) {
    memset(f, 0, sizeof *f);
    const wf_status s = parse(b, n, f, msg, cap);
    if (s != WF_OK) {
        const int more = f->more;
        wf_gguf_release(f);
        f->more = more;
    }
    return s;
}

void wf_gguf_release(gg_file *f) {
    free(f->kv);
    free(f->t);
    f->kv = NULL;
    f->t = NULL;
}

const gg_kv *wf_gguf_get(const gg_file *f, const char *key) {
    const size_t n = strlen(key);
    for (int32_t i = 0; i < f->n_kv; i++)
        if (f->kv[i].key.n == n && !memcmp(f->kv[i].key.p, key, n)) return &f->kv[i];
    return NULL;
}

/* A scalar at p of type `type` as a double. */
static double scalar(const uint8_t *p, uint32_t type) {
    const uint64_t u64 = type == GG_U64 || type == GG_I64 || type == GG_F64 ? (uint64_t)wf_le32(p) | (uint64_t)wf_le32(p + 4) << 32 : 0;
    float f;
    double d;
    switch (type) {
    case GG_U8: case GG_BOOL: return p[0];
    case GG_I8: return (int8_t)p[0];
    case GG_U16: return (uint16_t)(p[0] | p[1] << 8);
    case GG_I16: return (int16_t)(p[0] | p[1] << 8);
    case GG_U32: return wf_le32(p);
    case GG_I32: return (int32_t)wf_le32(p);
    case GG_F32: { const uint32_t u = wf_le32(p); memcpy(&f, &u, 4); return f; }
    case GG_U64: return (double)u64;
    case GG_I64: return (double)(int64_t)u64;
    default: memcpy(&d, &u64, 8); return d;
    }
}

int wf_gguf_num(const gg_file *f, const char *key, double *out) {
    const gg_kv *kv = wf_gguf_get(f, key);
    if (!kv || kv->type == GG_STR || kv->type == GG_ARR) return 0;
    *out = scalar(kv->at, kv->type);
    return 1;
}

double wf_gguf_elem(const gg_kv *kv, uint64_t i) { return scalar(kv->at + i * SCALAR_BYTES[kv->etype], kv->etype); }

int32_t wf_gguf_text(const gg_file *f, const char *key, char *buf, size_t cap) {
    const gg_kv *kv = wf_gguf_get(f, key);
    if (!kv || kv->type != GG_STR) return -1;
    const uint8_t *at = kv->at;
    const gg_str s = wf_gguf_next_str(&at);
    if (s.n >= cap) return -1;
    memcpy(buf, s.p, s.n);
    buf[s.n] = 0;
    return (int32_t)s.n;
}

/* ---- writing ---- */

void wf_gguf_put_str(wf_writer *w, const char *s, size_t n) {
    wf_put_u64(w, n);
    wf_put(w, s, n);
}

void wf_gguf_put_key(wf_writer *w, const char *key, uint32_t type) {
    wf_gguf_put_str(w, key, strlen(key));
    wf_put_u32(w, type);
}
