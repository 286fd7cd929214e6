/* A fixed pool of worker threads that runs numbered tasks. The calling thread works too,
 * so a pool of n threads starts n - 1 workers. The caller takes a job's tasks in order from
 * the front and the workers from the back, each as it becomes free; an op that splits its
 * output into tasks computes every element the same way whichever thread runs it, so
 * results do not depend on the thread count.
 * Without WF_THREADS (the single-thread wasm build) there are no threads: wf_pool_start
 * refuses n > 1, and a NULL pool runs every task on the caller. */
#ifndef WF_POOL_H
#define WF_POOL_H

#include "wasmformer.h"

typedef struct wf_pool wf_pool;
typedef void (*wf_task_fn)(void *ctx, int task);

/* Each worker's stack, set explicitly because the default varies (8 MB with glibc, 128 KB
 * with musl, 64 KB to 2 MB in Emscripten's versions). The deepest task is a matrix
 * product's packing buffers (matmul.c: 512 KB of B and 32-48 KB of A) under an attention head's 9 KB tile. 2 MB leaves room for the sanitizers, whose
 * per-thread state can take part of the stack's area (gcc's ThreadSanitizer: ~770 KB,
 * which overflowed a 1 MB stack); in the -pthread wasm build each worker's stack is taken
 * from the module's linear memory, and 2 MB is what build.sh already gave every thread. */
#define WF_POOL_STACK (2 << 20)

/* How long a pool waits for its workers to check in before giving up: natively a loaded
 * machine may take a while to schedule a thread; in a page's main thread the wait spins
 * (Emscripten has no other), so it is kept short there. */
#if defined(__EMSCRIPTEN__)
#define WF_POOL_WAIT 0.5
#else
#define WF_POOL_WAIT 2.0
#endif

/* A pool of n >= 2 threads in all (caller included) into *out, its workers given `wait`
 * seconds to start (a negative wait gives up at once, started or not: the tests' way
 * through that path). WF_ERR_NOMEM; WF_ERR_THREADS
 * when a thread could not be created or did not check in in time (the started ones are
 * told to stop and free the pool when the last lets go); WF_ERR_UNSUPPORTED without
 * WF_THREADS. */
wf_status wf_pool_start(wf_pool **out, int n, double wait);
void wf_pool_free(wf_pool *p); /* NULL is fine; joins the workers */
int wf_pool_threads(const wf_pool *p); /* 1 for NULL */
/* How many jobs have woken the workers since the pool started (0 for NULL): the tests'
 * check that work too small to share (decoding a token) stays on the caller. */
unsigned wf_pool_jobs(const wf_pool *p);
/* Where the caller's time inside wf_pool_run went since the pool started, in seconds: *tasks
 * publishing jobs and running tasks itself, *wait waiting for the tasks the workers had
 * claimed (0 and 0 for NULL). The rest of a training step's time is the work left on one
 * thread: bench/bench.c splits a step this way. */
void wf_pool_times(const wf_pool *p, double *tasks, double *wait);
/* Counts since the pool started (0 for NULL): jobs run while the pool took the machine for
 * busy and kept its polls short, tasks handed out, and those the caller ran itself. */
void wf_pool_counts(const wf_pool *p, unsigned *busy_jobs, unsigned *tasks, unsigned *caller_tasks);

/* Runs fn(ctx, t) for every t in [0, n_tasks) and returns when all have finished. Not
 * reentrant: a task must not call wf_pool_run on the same pool. */
void wf_pool_run(wf_pool *p, int n_tasks, wf_task_fn fn, void *ctx);

/* The pool's scratch buffer, 64-byte aligned, *bytes long (NULL and 0 for NULL or without
 * WF_THREADS): the caller's (between runs, for the tasks of its next runs to share), as
 * wf_matmul packs an operand once for all threads. Allocated with the pool, so no op
 * allocates. */
#define WF_POOL_SCRATCH (8 << 20)
void *wf_pool_scratch(wf_pool *p, size_t *bytes);

/* fn(ctx, begin, end) over [0, n) in ranges, a few per thread, each a multiple of `align`
 * long (but the last) and at least `min`: one run of the pool, or one call on the caller
 * without a pool or when n < 2 min. For the cheap row- and element-wise ops, whose every
 * element must come out the same whatever range it falls in. */
typedef void (*wf_range_fn)(void *ctx, size_t begin, size_t end);
void wf_pool_for(wf_pool *p, size_t n, size_t align, size_t min, wf_range_fn fn, void *ctx);

#endif /* WF_POOL_H */
