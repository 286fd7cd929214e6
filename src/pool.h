/* A fixed pool of worker threads that runs numbered tasks. The calling thread works too,
 * so a pool of n threads starts n - 1 workers. Tasks are handed out in order from a shared
 * counter; an op that splits its output into tasks computes every element the same way
 * whichever thread runs it, so results do not depend on the thread count.
 * Without WF_THREADS (the single-thread wasm build) there are no threads: wf_pool_create
 * returns NULL for n > 1, and a NULL pool runs every task on the caller. */
#ifndef WF_POOL_H
#define WF_POOL_H

typedef struct wf_pool wf_pool;
typedef void (*wf_task_fn)(void *ctx, int task);

/* n >= 2 threads in all (caller included); NULL when threads are unavailable or could
 * not be started. */
wf_pool *wf_pool_create(int n);
/* The same, giving the workers `wait` seconds to start (wf_pool_create: 2 natively, 0.5 in
 * wasm) before giving up; tests pass 0 to take the give-up path. */
wf_pool *wf_pool_create_wait(int n, double wait);
void wf_pool_free(wf_pool *p); /* NULL is fine; joins the workers */
int wf_pool_threads(const wf_pool *p); /* 1 for NULL */

/* Runs fn(ctx, t) for every t in [0, n_tasks) and returns when all have finished. Not
 * reentrant: a task must not call wf_pool_run on the same pool. */
void wf_pool_run(wf_pool *p, int n_tasks, wf_task_fn fn, void *ctx);

#endif /* WF_POOL_H */
