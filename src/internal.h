/* Shared by every source file: the real type and its math functions, aligned allocation,
 * error reporting and the seeded RNG. Nothing here is public. */
#ifndef WF_INTERNAL_H
#define WF_INTERNAL_H

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wasmformer.h"

/* Weights, activations and results: float, or double in the gradient-check build (-DWF_DOUBLE). */
#ifdef WF_DOUBLE
typedef double wf_real;
#define WF_SQRT sqrt
#define WF_EXP exp
#define WF_LOG log
#define WF_TANH tanh
#define WF_ERF erf
#define WF_FABS fabs
#else
typedef float wf_real;
#define WF_SQRT sqrtf
#define WF_EXP expf
#define WF_LOG logf
#define WF_TANH tanhf
#define WF_ERF erff
#define WF_FABS fabsf
#endif

/* wf_reals in a 64-byte cache line: the unit of the ranges that split rows among threads, so
 * that two threads do not share a line (matmul.c's column ranges, norm.c's channel ranges). */
#define WF_LINE_REALS (64 / (int)sizeof(wf_real))

/* The public API speaks float (include/wasmformer.h). The gradient-check build (WF_DOUBLE)
 * computes in double: there every float array the API takes or returns holds wf_real
 * values, and the core and its tests convert the pointers with these. */
#define WF_REALS(p) ((wf_real *)(void *)(p))
#define WF_CREALS(p) ((const wf_real *)(const void *)(p))
#define WF_FLOATS(p) ((float *)(void *)(p))
#define WF_CFLOATS(p) ((const float *)(const void *)(p))

/* Elements rounded up to a multiple of 4, so every tensor and buffer starts 16-byte
 * aligned; PAD4D is the same in double, for size checks that must not overflow. */
#define PAD4(n) (((n) + 3) / 4 * 4)
#define PAD4D(n) (ceil((n) / 4.0) * 4)

/* Debug-only checks of internal invariants, never of user input. */
#ifdef WF_DEBUG
#include <assert.h>
#define WF_INVARIANT(x) assert(x)
#else
#define WF_INVARIANT(x) ((void)0)
#endif

/* ---- sizes: a count becomes bytes only through these ----
 * In wasm size_t is 32 bits: n * sizeof(x) wraps at 4 GB into a small request that then
 * succeeds, and the writes that follow corrupt the heap of every model in the module. So
 * every product or sum that sizes a buffer is checked at the width it runs at, and every
 * allocation takes a count and an element size. Each helper returns 0 / NULL on overflow. */
static inline int wf_mul_ok(size_t a, size_t b, size_t *out) { return !__builtin_mul_overflow(a, b, out); }
static inline int wf_add_ok(size_t a, size_t b, size_t *out) { return !__builtin_add_overflow(a, b, out); }
/* The capacity that holds need elements, doubling from cap (first when cap is 0); 0 when
 * it would not fit a size_t. */
size_t wf_grow(size_t cap, size_t need, size_t first);
/* Slots of an open-addressing table for count keys: a power of two, at least 16 and twice
 * count, so that it is at most half full; 0 beyond 2^31 (the tables' masks are uint32). */
uint32_t wf_table_slots(size_t count);
/* n elements of size bytes each from the C library (freed with free; n 0: one byte). NULL
 * when n * size overflows or memory ran out; realloc keeps p then. */
void *wf_malloc_n(size_t n, size_t size);
void *wf_calloc_n(size_t n, size_t size);
void *wf_realloc_n(void *p, size_t n, size_t size);
/* The same, WF_ALIGN-byte aligned (zeroed: wf_zalloc), freed with wf_free. WF_ALIGN: a
 * cache line, so a row of a tensor that starts one (most do: their sizes are multiples of
 * 16 floats) is read without loads that straddle two lines, which every AVX-512 load (64
 * bytes) from a 16-byte boundary does. */
#define WF_ALIGN 64
void *wf_alloc(size_t n, size_t size);
void *wf_zalloc(size_t n, size_t size);
void wf_free(void *p);

/* Formats an error into a handle's message buffer and returns the status, so that
 * failing paths read `return wf_fail(m->err, sizeof m->err, WF_ERR_ARG, "...", ...)`. */
wf_status wf_fail(char *buf, size_t cap, wf_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* The same, in a function whose message buffer is its arguments `char *msg, size_t cap`. */
#define FAIL(status, ...) return wf_fail(msg, cap, (status), __VA_ARGS__)

/* ---- seeded RNG: xorshift64* over a splitmix64-scrambled seed; no global state ---- */
typedef struct {
    uint64_t s;
} wf_rng;

void wf_rng_seed(wf_rng *r, uint64_t seed);
uint32_t wf_rng_u32(wf_rng *r);
double wf_rng_uniform(wf_rng *r); /* [0, 1), 53 random bits */
double wf_rng_normal(wf_rng *r);  /* standard normal, Box-Muller */

/* Non-finite check that survives compilers treating NaN loosely. */
static inline int wf_finite(double x) { return x - x == 0.0; }

#endif /* WF_INTERNAL_H */
