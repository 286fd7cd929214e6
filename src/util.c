/* Status names, error messages, aligned allocation, the seeded RNG and CRC-32. */
#include <stdio.h>
#include <stdlib.h>
#if defined(__EMSCRIPTEN__) || defined(__GLIBC__)
#include <malloc.h>
#endif

#include "bytes.h"
#include "internal.h"

const char *wf_status_string(wf_status s) {
#define TEXT_(name, text) text,
    static const char *const text[] = {WF_STATUSES(TEXT_)};
#undef TEXT_
    return (unsigned)s < sizeof text / sizeof *text ? text[s] : "unknown status";
}

wf_status wf_fail(char *buf, size_t cap, wf_status s, const char *fmt, ...) {
    if (buf && cap > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, cap, fmt, ap);
        va_end(ap);
    }
    return s;
}

size_t wf_grow(size_t cap, size_t need, size_t first) {
    size_t c = cap ? cap : first;
    while (c < need)
        if (!wf_mul_ok(c, 2, &c)) return 0;
    return c;
}

uint32_t wf_table_slots(size_t count) {
    uint32_t slots = 16;
    while (slots / 2 < count) {
        if (slots == (uint32_t)1 << 31) return 0;
        slots *= 2;
    }
    return slots;
}

void *wf_malloc_n(size_t n, size_t size) {
    size_t bytes;
    return wf_mul_ok(n, size, &bytes) ? malloc(bytes ? bytes : 1) : NULL;
}

void *wf_calloc_n(size_t n, size_t size) {
    size_t bytes;
    return wf_mul_ok(n, size, &bytes) ? calloc(bytes ? bytes : 1, 1) : NULL;
}

void *wf_realloc_n(void *p, size_t n, size_t size) {
    size_t bytes;
    return wf_mul_ok(n, size, &bytes) ? realloc(p, bytes ? bytes : 1) : NULL;
}

/* The size is rounded up to the alignment, as aligned_alloc requires. */
void *wf_alloc(size_t n, size_t size) {
    size_t bytes;
    if (!wf_mul_ok(n, size, &bytes) || !wf_add_ok(bytes ? bytes : 1, WF_ALIGN - 1, &bytes)) return NULL;
    return aligned_alloc(WF_ALIGN, bytes & ~(size_t)(WF_ALIGN - 1));
}

void *wf_zalloc(size_t n, size_t size) {
    void *p = wf_alloc(n, size);
    if (p) memset(p, 0, n * size); /* wf_alloc checked the product */
    return p;
}

void wf_free(void *p) { free(p); }

/* The buffers the file writers (checkpoint, tokenizer files, safetensors) give the caller. */
void wf_buffer_free(void *p) { free(p); }

double wf_heap_in_use(void) {
#if defined(__EMSCRIPTEN__)
    struct mallinfo mi = mallinfo(); /* dlmalloc: one heap, no separate mappings */
    return (double)(unsigned)mi.uordblks;
#elif defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    struct mallinfo2 mi = mallinfo2(); /* large blocks are mapped apart from the heap */
    return (double)mi.uordblks + (double)mi.hblkhd;
#else
    return 0;
#endif
}

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void wf_rng_seed(wf_rng *r, uint64_t seed) {
    uint64_t x = seed;
    r->s = splitmix64(&x);
    if (r->s == 0) r->s = 0x9E3779B97F4A7C15ULL; /* xorshift's one fixed point */
}

static uint64_t next64(wf_rng *r) {
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1DULL;
}

uint32_t wf_rng_u32(wf_rng *r) { return (uint32_t)(next64(r) >> 32); }

double wf_rng_uniform(wf_rng *r) { return (double)(next64(r) >> 11) * (1.0 / 9007199254740992.0); }

double wf_rng_normal(wf_rng *r) {
    double u1 = wf_rng_uniform(r), u2 = wf_rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300; /* log(0) */
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* CRC-32, reflected polynomial 0xEDB88320 (zlib's). The 1 KB table is rebuilt per call:
 * cheaper than any file it checks, and no global state. */
uint32_t wf_crc32(const uint8_t *p, size_t n) {
    uint32_t table[256];
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
    return crc ^ 0xFFFFFFFFu;
}
