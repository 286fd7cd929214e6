#define _POSIX_C_SOURCE 200809L /* clock_gettime, sched_yield */
/* The thread pool (see pool.h). Workers spin briefly between jobs, since ops come back to
 * back within a training step, then sleep on a condition variable so an idle model costs no
 * CPU. A job's tasks are handed out from one word, (end << 32) | next, and a task is claimed
 * by a compare-and-swap on the whole word: the caller takes task next from the front, the
 * workers task end - 1 from the back. A word with next < end describes the current job and
 * nothing else (a finished job's has next == end), so a claim that succeeds is a task of
 * the current job, however late the thread that read the word. From the two ends, the
 * caller keeps the first rows of every op and a worker the last ones, so an op reads the
 * rows the same core wrote in the op before (from one shared counter, a row's producer and
 * its reader were on different cores about half the time, and micro's two-thread step was
 * longer: docs/SPEED.md, "Each thread keeps its rows"). The
 * caller then waits only for the tasks claimed and not yet done, never for a worker that has
 * not joined: a worker that wakes late (asleep, or its core taken by another process) finds
 * no task left and costs the job nothing. (Waiting for every worker to check in made two
 * threads slower than one whenever a worker was slow to be scheduled: micro 0.82x of one
 * thread beside one busy process, docs/SPEED.md.) A job touches the mutex only when someone
 * sleeps: the caller publishes the job and broadcasts only if a worker went to sleep, the
 * worker that finishes the last task signals only if the caller did (each side publishes
 * "I sleep" and then re-checks, with sequentially consistent atomics, so one of them always
 * sees the other). In the browser's main thread Emscripten
 * turns the caller's waits into busy-waits, which is why the caller only ever waits for work
 * that is already running. */
#include <stdlib.h>

#include "pool.h"

#if defined(WF_THREADS)
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define LINE 64 /* a cache line on every machine we run on */

/* How long a thread polls before it sleeps. A training step's jobs come back to back or a
 * few hundred microseconds apart (the loss, the optimizer's serial checks), while a worker
 * asleep takes 30-130 us to wake, natively and in Node (docs/SPEED.md, "Waking the pool"):
 * a worker that slept through every gap longer than its old 20,000 polls (20-50 us) missed
 * the start of the next job each time. A millisecond covers a step's gaps and still lets an
 * idle model's workers sleep.
 * On a machine with more runnable threads than cores, though, a poller takes a core from the
 * thread it waits for (and wasm has no yield): beside one busy process, polling for 1 ms made
 * micro's two-thread step 0.66x of one thread, against 0.91x with short polls. A poller that
 * finds the clock jumped between two of its reads was descheduled, and takes that for a busy
 * machine: for the next BUSY_JOBS jobs every poll lasts at most SPIN_BUSY. (On a virtual
 * machine the host taking a CPU away looks the same, and costs long polls for a while: on an
 * idle 2-vCPU VM the pool kept its polls short for every job, bench_wasmformer's
 * pool_busy_share 1.000; docs/SPEED.md, "The caller's share of the tasks, and the busy rule on
 * a virtual machine".) */
#define SPIN_SECONDS 1e-3
#define SPIN_BUSY 30e-6
/* a gap this long between two clock reads 256 polls apart; -DWF_POOL_PREEMPTED=1e30 builds a
 * pool without the rule, for the A/B in docs/SPEED.md */
#if defined(WF_POOL_PREEMPTED)
#define PREEMPTED WF_POOL_PREEMPTED
#else
#define PREEMPTED 50e-6
#endif
#define BUSY_JOBS 4096   /* some 50 micro steps */

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A poll's clock: when it began, its last reading, and its limit. */
typedef struct {
    double start, last, limit;
} spin;

struct wf_pool {
    int n;               /* threads including the caller */
    pthread_t *workers;  /* n - 1 */
    pthread_mutex_t mu;
    pthread_cond_t wake; /* a new job or stop */
    pthread_cond_t done; /* a worker finished the job's last task */
    wf_task_fn fn;       /* the current job's, written before its word is published */
    void *ctx;
    void *scratch;       /* WF_POOL_SCRATCH bytes for the ops' shared buffers (wf_pool_scratch) */
    _Alignas(LINE) _Atomic uint64_t work; /* (end << 32) | next: the tasks [next, end) not handed out */
    _Alignas(LINE) atomic_uint epoch; /* bumped once per job; read by every spinning worker */
    _Alignas(LINE) atomic_int left;   /* the current job's tasks not yet done */
    _Alignas(LINE) atomic_int sleepers;     /* workers asleep on wake (or about to be) */
    atomic_int caller_sleeps; /* the caller is asleep on done (or about to be) */
    atomic_int stop;
    atomic_int started;  /* workers that are running */
    atomic_int refs;     /* the owner and every created worker; the last to let go frees */
    atomic_int busy;     /* jobs left whose polls are short (SPIN_BUSY): a poller was descheduled */
    /* the caller's time and counts in wf_pool_run (wf_pool_times, wf_pool_counts), on a line
     * no worker reads */
    _Alignas(LINE) double tasks_s, wait_s;
    unsigned busy_jobs, tasks, caller_tasks;
};

/* A poll starting at time t. */
static spin spin_begin(const wf_pool *p, double t) {
    return (spin){.start = t, .last = t, .limit = atomic_load_explicit(&p->busy, memory_order_relaxed) > 0 ? SPIN_BUSY : SPIN_SECONDS};
}

/* Called on each poll i: every so often offers the core (on a machine busier than the pool,
 * the thread it waits for may need that very core; a no-op in wasm) and reads the clock.
 * Returns 1 when the poll has lasted its limit, or the clock says this thread was descheduled
 * (and marks the machine busy). */
static int spun_out(wf_pool *p, spin *s, int i) {
    if ((i & 255) != 255) return 0;
    sched_yield();
    const double t = seconds();
    if (t - s->last > PREEMPTED) {
        atomic_store_explicit(&p->busy, BUSY_JOBS, memory_order_relaxed);
        return 1;
    }
    s->last = t;
    return t - s->start > s->limit;
}

static void destroy(wf_pool *p) {
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    free(p->workers);
    free(p->scratch);
    free(p);
}

static void let_go(wf_pool *p) {
    if (atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1) destroy(p);
}

/* Wakes every worker to exit. */
static void stop_all(wf_pool *p) {
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->stop, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
}

/* Claims and runs tasks of the current job until none is left, the next from the front (the
 * caller) or the last from the back (a worker); returns how many it ran. */
static int run_tasks(wf_pool *p, int from_back) {
    const uint64_t one = from_back ? (uint64_t)1 << 32 : 1; /* a claim moves end down or next up */
    int ran = 0;
    uint64_t w = atomic_load(&p->work);
    for (;;) {
        const uint32_t next = (uint32_t)w, end = (uint32_t)(w >> 32);
        if (next >= end) return ran;
        const uint64_t claimed = from_back ? w - one : w + one;
        if (!atomic_compare_exchange_weak(&p->work, &w, claimed)) continue; /* w now holds the word */
        p->fn(p->ctx, (int)(from_back ? end - 1 : next));
        ran++;
        w = claimed;
    }
}

static void *worker(void *arg) {
    wf_pool *p = arg;
    unsigned seen = 0;
    atomic_fetch_add(&p->started, 1);
    for (;;) {
        unsigned e = atomic_load_explicit(&p->epoch, memory_order_acquire);
        spin sp = spin_begin(p, seconds());
        for (int i = 0; e == seen && !spun_out(p, &sp, i) && !atomic_load_explicit(&p->stop, memory_order_relaxed); i++) {
            e = atomic_load_explicit(&p->epoch, memory_order_acquire);
        }
        if (e == seen && !atomic_load(&p->stop)) {
            pthread_mutex_lock(&p->mu);
            atomic_fetch_add(&p->sleepers, 1); /* then re-check: the caller reads sleepers after publishing */
            while ((e = atomic_load(&p->epoch)) == seen && !atomic_load(&p->stop)) pthread_cond_wait(&p->wake, &p->mu);
            atomic_fetch_sub(&p->sleepers, 1);
            pthread_mutex_unlock(&p->mu);
        }
        if (atomic_load(&p->stop)) {
            let_go(p);
            return NULL;
        }
        seen = e;
        const int ran = run_tasks(p, 1);
        if (ran && atomic_fetch_sub(&p->left, ran) == ran && atomic_load(&p->caller_sleeps)) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

wf_status wf_pool_start(wf_pool **out, int n, double wait) {
    *out = NULL;
    if (n < 2) return WF_ERR_ARG;
    /* aligned as its cache-line members ask (calloc promises only 16 bytes) */
    wf_pool *p = aligned_alloc(LINE, (sizeof(wf_pool) + LINE - 1) / LINE * LINE);
    if (!p) return WF_ERR_NOMEM;
    memset(p, 0, sizeof *p);
    p->workers = calloc((size_t)n - 1, sizeof *p->workers);
    p->scratch = aligned_alloc(LINE, WF_POOL_SCRATCH);
    if (!p->workers || !p->scratch) {
        free(p->workers);
        free(p->scratch);
        free(p);
        return WF_ERR_NOMEM;
    }
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) {
        free(p->workers);
        free(p->scratch);
        free(p);
        return WF_ERR_THREADS;
    }
    pthread_attr_setstacksize(&attr, WF_POOL_STACK);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    p->n = 1;
    atomic_store(&p->refs, 1);
    for (int i = 0; i < n - 1; i++) {
        atomic_fetch_add(&p->refs, 1); /* before the worker can exit and let go */
        if (pthread_create(&p->workers[i], &attr, worker, p) != 0) {
            atomic_fetch_sub(&p->refs, 1);
            pthread_attr_destroy(&attr);
            wf_pool_free(p);
            return WF_ERR_THREADS;
        }
        p->n++;
    }
    pthread_attr_destroy(&attr);
    /* A worker that never starts would leave wf_pool_run waiting for it forever. In the
     * browser a thread starts without the main thread's help only on a Web Worker loaded
     * in advance (-sPTHREAD_POOL_SIZE, which loader.js sets from the thread count, and
     * useThreads checks are idle), so they check in within milliseconds; give them `wait`
     * seconds and give up otherwise. On giving up the workers are detached and told to
     * stop; whoever lets go of the pool last, the caller here or a late worker, frees it. */
    const double t0 = seconds();
    while (wait < 0 || atomic_load(&p->started) < n - 1) {
        if (wait < 0 || seconds() - t0 > wait) {
            stop_all(p);
            for (int i = 0; i < p->n - 1; i++) pthread_detach(p->workers[i]);
            let_go(p);
            return WF_ERR_THREADS;
        }
        sched_yield();
    }
    *out = p;
    return WF_OK;
}

void wf_pool_free(wf_pool *p) {
    if (!p) return;
    stop_all(p);
    for (int i = 0; i < p->n - 1; i++) pthread_join(p->workers[i], NULL);
    let_go(p); /* the workers have let go: this frees it */
}

int wf_pool_threads(const wf_pool *p) { return p ? p->n : 1; }

unsigned wf_pool_jobs(const wf_pool *p) { return p ? atomic_load(&p->epoch) : 0; }

void wf_pool_times(const wf_pool *p, double *tasks, double *wait) {
    *tasks = p ? p->tasks_s : 0;
    *wait = p ? p->wait_s : 0;
}

void wf_pool_counts(const wf_pool *p, unsigned *busy_jobs, unsigned *tasks, unsigned *caller_tasks) {
    *busy_jobs = p ? p->busy_jobs : 0;
    *tasks = p ? p->tasks : 0;
    *caller_tasks = p ? p->caller_tasks : 0;
}

void *wf_pool_scratch(wf_pool *p, size_t *bytes) {
    *bytes = p ? WF_POOL_SCRATCH : 0;
    return p ? p->scratch : NULL;
}

void wf_pool_run(wf_pool *p, int n_tasks, wf_task_fn fn, void *ctx) {
    if (!p || n_tasks <= 1) {
        for (int t = 0; t < n_tasks; t++) fn(ctx, t);
        return;
    }
    const double t0 = seconds();
    if (atomic_load_explicit(&p->busy, memory_order_relaxed) > 0) {
        atomic_fetch_sub(&p->busy, 1);
        p->busy_jobs++;
    }
    p->fn = fn;
    p->ctx = ctx;
    atomic_store(&p->left, n_tasks);
    atomic_store(&p->work, (uint64_t)n_tasks << 32); /* the job's tasks [0, n_tasks) */
    atomic_fetch_add(&p->epoch, 1); /* wakes the spinners; then: does anyone sleep? */
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mu);
    }
    const int ran = run_tasks(p, 0);
    const double start = seconds();
    p->tasks_s += start - t0;
    p->tasks += (unsigned)n_tasks;
    p->caller_tasks += (unsigned)ran;
    /* the workers may still be finishing the tasks they claimed */
    if (atomic_fetch_sub(&p->left, ran) == ran) return;
    spin sp = spin_begin(p, start);
    for (int i = 0; atomic_load_explicit(&p->left, memory_order_acquire) > 0 && !spun_out(p, &sp, i); i++) continue;
    if (atomic_load_explicit(&p->left, memory_order_acquire) > 0) {
        pthread_mutex_lock(&p->mu);
        atomic_store(&p->caller_sleeps, 1); /* then re-check: the last worker reads it after its decrement */
        while (atomic_load(&p->left) > 0) pthread_cond_wait(&p->done, &p->mu);
        atomic_store(&p->caller_sleeps, 0);
        pthread_mutex_unlock(&p->mu);
    }
    p->wait_s += seconds() - start;
}

#else /* no threads in this build */

wf_status wf_pool_start(wf_pool **out, int n, double wait) {
    (void)n;
    (void)wait;
    *out = NULL;
    return WF_ERR_UNSUPPORTED;
}

void wf_pool_free(wf_pool *p) { (void)p; }

int wf_pool_threads(const wf_pool *p) {
    (void)p;
    return 1;
}

unsigned wf_pool_jobs(const wf_pool *p) {
    (void)p;
    return 0;
}

void wf_pool_times(const wf_pool *p, double *tasks, double *wait) {
    (void)p;
    *tasks = *wait = 0;
}

void wf_pool_counts(const wf_pool *p, unsigned *busy_jobs, unsigned *tasks, unsigned *caller_tasks) {
    (void)p;
    *busy_jobs = *tasks = *caller_tasks = 0;
}

void *wf_pool_scratch(wf_pool *p, size_t *bytes) {
    (void)p;
    *bytes = 0;
    return NULL;
}

void wf_pool_run(wf_pool *p, int n_tasks, wf_task_fn fn, void *ctx) {
    (void)p;
    for (int t = 0; t < n_tasks; t++) fn(ctx, t);
}

#endif

typedef struct {
    wf_range_fn fn;
    void *ctx;
    size_t n, width;
} range_job;

static void range_task(void *ctx, int task) {
    const range_job *j = ctx;
    const size_t begin = (size_t)task * j->width, end = begin + j->width < j->n ? begin + j->width : j->n;
    j->fn(j->ctx, begin, end);
}

void wf_pool_for(wf_pool *p, size_t n, size_t align, size_t min, wf_range_fn fn, void *ctx) {
    const int threads = wf_pool_threads(p);
    if (threads < 2 || n < 2 * min) {
        if (n) fn(ctx, 0, n);
        return;
    }
    size_t width = (n + 4 * (size_t)threads - 1) / (4 * (size_t)threads);
    if (width < min) width = min;
    width = (width + align - 1) / align * align;
    range_job j = {.fn = fn, .ctx = ctx, .n = n, .width = width};
    wf_pool_run(p, (int)((n + width - 1) / width), range_task, &j);
}
