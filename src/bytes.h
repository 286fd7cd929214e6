/* Little-endian byte buffers for the file formats (docs/FORMATS.md).
 * A wf_reader never reads past its end: every get returns 0 once the data ran out and
 * leaves the reader failed, so parsers check once per record instead of once per byte.
 * A wf_writer with no buffer only counts, so one function both sizes and writes a file. */
#ifndef WF_BYTES_H
#define WF_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    const uint8_t *p;
    size_t n, off;
    int failed; /* a read ran past the end */
} wf_reader;

static inline wf_reader wf_reader_of(const uint8_t *p, size_t n) {
    return (wf_reader){.p = p, .n = n};
}

static inline size_t wf_left(const wf_reader *r) { return r->failed ? 0 : r->n - r->off; }

/* A borrowed pointer to the next k bytes, or NULL (and failed) when fewer are left. */
static inline const uint8_t *wf_take(wf_reader *r, size_t k) {
    if (r->failed || k > r->n - r->off) {
        r->failed = 1;
        return NULL;
    }
    const uint8_t *p = r->p + r->off;
    r->off += k;
    return p;
}

static inline uint32_t wf_le32(const uint8_t *b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static inline uint64_t wf_le64(const uint8_t *b) { return wf_le32(b) | (uint64_t)wf_le32(b + 4) << 32; }

static inline uint32_t wf_get_u32(wf_reader *r) {
    const uint8_t *b = wf_take(r, 4);
    return b ? wf_le32(b) : 0;
}

static inline uint64_t wf_get_u64(wf_reader *r) {
    const uint8_t *b = wf_take(r, 8);
    return b ? (uint64_t)wf_le32(b) | (uint64_t)wf_le32(b + 4) << 32 : 0;
}

typedef struct {
    uint8_t *p; /* NULL: count only */
    size_t off; /* counting saturates at SIZE_MAX, which the writers' size checks refuse */
} wf_writer;

static inline void wf_put(wf_writer *w, const void *src, size_t k) {
    if (w->p && k) memcpy(w->p + w->off, src, k);
    w->off = k > SIZE_MAX - w->off ? SIZE_MAX : w->off + k;
}

static inline void wf_put_u32(wf_writer *w, uint32_t v) {
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    wf_put(w, b, 4);
}

static inline void wf_put_u64(wf_writer *w, uint64_t v) {
    wf_put_u32(w, (uint32_t)v);
    wf_put_u32(w, (uint32_t)(v >> 32));
}

/* Overwrites 4 bytes already written at off (a length or checksum known only later). */
static inline void wf_patch_u32(wf_writer *w, size_t off, uint32_t v) {
    if (!w->p) return;
    w->p[off] = (uint8_t)v;
    w->p[off + 1] = (uint8_t)(v >> 8);
    w->p[off + 2] = (uint8_t)(v >> 16);
    w->p[off + 3] = (uint8_t)(v >> 24);
}

static inline void wf_patch_u64(wf_writer *w, size_t off, uint64_t v) {
    wf_patch_u32(w, off, (uint32_t)v);
    wf_patch_u32(w, off + 4, (uint32_t)(v >> 32));
}

/* n floats as little-endian IEEE-754 binary32, converting from wf_real. */
static inline void wf_put_f32s(wf_writer *w, const float *x, size_t n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n > SIZE_MAX / 4) { /* only counting gets here: a buffer is sized by the count */
        w->off = SIZE_MAX;
        return;
    }
    wf_put(w, x, n * 4);
#else
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], 4);
        wf_put_u32(w, u);
    }
#endif
}

/* Reads n little-endian binary32 values from b (4n bytes, already bounds-checked). */
static inline void wf_read_f32s(float *out, const uint8_t *b, size_t n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(out, b, n * 4);
#else
    for (size_t i = 0; i < n; i++) {
        uint32_t u = wf_le32(b + 4 * i);
        memcpy(&out[i], &u, 4);
    }
#endif
}

/* CRC-32 (IEEE 802.3, as zlib.crc32 and `crc32` compute it) of p[0, n). util.c */
uint32_t wf_crc32(const uint8_t *p, size_t n);

#endif /* WF_BYTES_H */
