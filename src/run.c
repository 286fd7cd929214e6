/* Training runs (model.h): the loop a program runs, in the core, so that a C program, a Node
 * script and a browser tab drive the same one. A run owns a copy of its tokens, their split
 * (the last val_fraction validates), the batch sampler and the validation windows; its
 * learning-rate schedule (the optimizer's, over steps, or a time budget's, over seconds of
 * training); when it validates; the roll-back copy and the divergence rules. What it has done
 * (run_progress) is saved with the model (checkpoint.c, section RUNS), so a run paused, saved
 * and loaded goes on exactly where it was.
 *
 * The divergence rules, each judged on what THIS run has seen:
 *   refused: the core refused the step (a non-finite loss or gradient norm, or an update that
 *     would overflow), so the step changed nothing;
 *   the bound: a cross-entropy above 1.5 max(ln V, the run's first loss) + 1 is far worse than
 *     guessing and than where the run started (a model meeting a new text starts high, and is
 *     judged from there); held against every step's loss and, at the run's end, against the
 *     last batch's after the last update (a step's loss is taken before its update);
 *   the spike: the mean of the last SPIKE_WINDOW losses more than max(SPIKE_MARGIN,
 *     SPIKE_NOISE x the median change between consecutive losses of the window) above the
 *     lowest of the run's first loss and every earlier such mean. A batch's loss varies around
 *     the model's with some deviation s: the median change between two is about s, a mean of
 *     20 varies by s / 4.5, so the allowance stands 4 s above the noisiest baseline (the first
 *     loss, one batch); 1 nat is the floor (the text's probability divided by e).
 *     bench/studies/loss-noise.mjs measured both: sound runs of micro and tiny rose at most 0.11 nats
 *     above their best; a trained micro pushed to lr 0.03 rose 1.38 in 20 steps.
 * A diverged run goes back to its roll-back copy (taken where the run began or went on, and
 * again at each validation passed soundly), and stops until it is begun again. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "model.h"

enum { SPIKE_WINDOW = 20 };
#define SPIKE_MARGIN 1.0 /* nats */
#define SPIKE_NOISE 4.0

/* What a run has done: rolled back with the model, saved with it. */
typedef struct {
    int32_t steps;                /* steps the run has taken */
    double seconds;               /* of training: sampling and stepping, not validating */
    float loss, grad_norm, lr;    /* the last step's */
    float first;                  /* the run's first loss (NaN: none yet) */
    double best;                  /* the spike rule's baseline */
    float window[SPIKE_WINDOW];   /* the last losses: window[(filled - 1) % SPIKE_WINDOW] the newest */
    int32_t filled;               /* losses pushed, all told */
    int32_t val_step, val_tokens; /* the last validation: its step (0: none), tokens scored */
    double val_loss;
    int32_t diverged, refused, at; /* why it stopped (0: it did not), at which step */
    float measured, limit;
} run_progress;

struct wf_run_state {
    wf_run set;          /* context resolved (T); warmup and decay_steps as the optimizer got them */
    int32_t start;       /* the model's step where the run began */
    int32_t end_step;    /* it ends at this step (0: on the clock) */
    double end_seconds;  /* or at this many seconds of training (0: on steps) */
    float sched;         /* > 0: the time schedule's length in seconds; 0: the optimizer's schedule */
    run_progress p;
    int32_t n;           /* its tokens: their count and CRC-32, which a loaded run checks */
    uint32_t crc;
    int32_t *tokens;     /* [n]; NULL: the caller's batches, or a loaded run not given its tokens yet */
    int32_t *batch;      /* [4 B T]: the last sampled training batch (inputs, targets), validation's */
    int has_batch;       /* batch holds a training batch (the end's check reads it) */
    wf_real *copy;       /* the roll-back copy: weights, AdamW m and v (NULL: none) */
    int32_t copy_step;
    wf_optim copy_opt;
    uint64_t copy_rng[2];
    run_progress copy_p;
};

static const wf_run_ops RUN_OPS = {.end = wf_run_end, .free = wf_run_free, .next_lr = wf_model_next_lr};

/* ---- the clock: wall time in milliseconds, or the test's ---- */

static double now_ms(const wf_model *m) {
    if (m->clock) return m->clock(m->clock_ctx);
#ifdef __EMSCRIPTEN__
    return emscripten_get_now(); /* performance.now(): monotonic, in the page and in Node */
#else
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
#endif
}

/* ---- the schedule ---- */

/* The learning rate of the run's next step: the optimizer's schedule over steps, or the time
 * budget's: the same shape with seconds of training in place of steps, a linear warm-up over
 * its first warmup_fraction from 1 % of lr (so the first step learns), then a cosine down to
 * min_lr_ratio of lr where the budget ends, and that rate after it. */
static float run_lr(const wf_model *m, const wf_run_state *r) {
    if (r->sched <= 0) return wf_lr_at(&m->opt, m->step);
    const double p = r->p.seconds / r->sched, w = r->set.warmup_fraction, lo = m->opt.min_lr_ratio;
    double f;
    if (p < w) {
        f = fmax(p / w, 0.01);
    } else {
        const double q = fmin(1, (p - w) / fmax(1e-12, 1 - w));
        f = lo + (1 - lo) * 0.5 * (1 + cos(3.14159265358979323846 * q));
    }
    return (float)(m->opt.lr * f);
}

float wf_model_next_lr(const wf_model *m) { return m->run ? run_lr(m, m->run) : wf_lr_at(&m->opt, m->step); }

static int at_end(const wf_model *m, const wf_run_state *r) {
    return (r->end_step > 0 && m->step >= r->end_step) || (r->end_seconds > 0 && r->p.seconds >= r->end_seconds);
}

/* ---- batches ---- */

static int32_t held_out(const wf_run_state *r) { return (int32_t)floor((double)r->n * r->set.val_fraction); }

/* B windows of T + 1 tokens at random offsets of split 0 (the first n - held_out tokens) or 1
 * (the rest), from the split's stream: inputs[b, t] = w[t], targets[b, t] = w[t + 1]. */
static void sample(wf_model *m, const wf_run_state *r, int split, int32_t *in, int32_t *tg) {
    const int32_t B = r->set.batch_size, T = r->set.context, n_val = held_out(r);
    const int32_t lo = split == 0 ? 0 : r->n - n_val, hi = split == 0 ? r->n - n_val : r->n;
    const uint64_t span = (uint64_t)(hi - lo - T); /* window starts in [lo, hi - T - 1] */
    wf_rng *g = &m->rng_split[split];
    for (int b = 0; b < B; b++) {
        const int32_t at = lo + (int32_t)(((uint64_t)wf_rng_u32(g) * span) >> 32);
        memcpy(in + (size_t)b * T, r->tokens + at, (size_t)T * sizeof(int32_t));
        memcpy(tg + (size_t)b * T, r->tokens + at + 1, (size_t)T * sizeof(int32_t));
    }
}

void wf_run_sample(wf_model *m, int split, int32_t *in, int32_t *tg) { sample(m, m->run, split, in, tg); }

/* The held-out tokens' loss: the mean of eval_batches random batches, or (0) over every
 * window of T consecutive tokens, B at a time (window w reads held[wT, wT + T) and predicts
 * held[wT + 1, wT + T]: no sampling noise). The tokens it scored to *scored. */
static double validate(wf_model *m, wf_run_state *r, int32_t *scored) {
    const int32_t B = r->set.batch_size, T = r->set.context, k = r->set.eval_batches;
    int32_t *in = r->batch + 2 * (size_t)B * T, *tg = in + (size_t)B * T;
    double sum = 0;
    float loss = 0;
    if (k > 0) {
        for (int32_t i = 0; i < k; i++) {
            sample(m, r, 1, in, tg);
            wf_model_forward(m, &(wf_batch){.inputs = in, .targets = tg, .B = B, .T = T}, &loss);
            sum += loss;
        }
        *scored = k * B * T;
        return sum / k;
    }
    const int32_t n_val = held_out(r), windows = (n_val - 1) / T;
    const int32_t *held = r->tokens + (r->n - n_val);
    for (int32_t w = 0; w < windows; w += B) {
        const int32_t b = windows - w < B ? windows - w : B;
        for (int32_t i = 0; i < b; i++) {
            memcpy(in + (size_t)i * T, held + (size_t)(w + i) * T, (size_t)T * sizeof(int32_t));
            memcpy(tg + (size_t)i * T, held + (size_t)(w + i) * T + 1, (size_t)T * sizeof(int32_t));
        }
        wf_model_forward(m, &(wf_batch){.inputs = in, .targets = tg, .B = b, .T = T}, &loss);
        sum += (double)loss * b * T;
    }
    *scored = windows * T;
    return sum / ((double)windows * T);
}

/* ---- the roll-back copy ---- */

static size_t copy_elems(const wf_model *m) { return m->stride + 2 * m->gstride; }

/* The roll-back copy's memory, when asked for and there is room for it beside what is in use
 * (else the run goes on without one: backup -1); WF_ERR_NOMEM when there is room but the
 * allocation fails, as any other. */
static wf_status alloc_copy(wf_model *m, wf_run_state *r) {
    const double bytes = (double)copy_elems(m) * sizeof(wf_real);
    if (!r->set.rollback || r->copy || wf_heap_in_use() + bytes > wf_memory_budget()) return WF_OK;
    if (!(r->copy = wf_alloc(copy_elems(m), sizeof(wf_real))))
        return WF_ERR(m, WF_ERR_NOMEM, "could not allocate the run's roll-back copy (%.1f MB; rollback 0 runs without)",
                      bytes / 1e6);
    return WF_OK;
}

/* The model's training state (weights, moments, step, settings, sampler) and the run's into
 * the copy, when it has one. */
static void take_copy(wf_model *m, wf_run_state *r) {
    if (!r->copy) return;
    memcpy(r->copy, m->block[WF_WEIGHTS], m->stride * sizeof(wf_real));
    memcpy(r->copy + m->stride, m->block[WF_ADAM_M], m->gstride * sizeof(wf_real));
    memcpy(r->copy + m->stride + m->gstride, m->block[WF_ADAM_V], m->gstride * sizeof(wf_real));
    r->copy_step = m->step;
    r->copy_opt = m->opt;
    for (int i = 0; i < 2; i++) r->copy_rng[i] = m->rng_split[i].s;
    r->copy_p = r->p;
}

static void roll_back(wf_model *m, wf_run_state *r) {
    memcpy(m->block[WF_WEIGHTS], r->copy, m->stride * sizeof(wf_real));
    memcpy(m->block[WF_ADAM_M], r->copy + m->stride, m->gstride * sizeof(wf_real));
    memcpy(m->block[WF_ADAM_V], r->copy + m->stride + m->gstride, m->gstride * sizeof(wf_real));
    m->step = r->copy_step;
    m->opt = r->copy_opt;
    for (int i = 0; i < 2; i++) m->rng_split[i].s = r->copy_rng[i];
    r->p = r->copy_p;
    wf_model_gen_stop(m);
}

/* ---- the divergence rules ---- */

static const char *const WHY[] = {"", "the loss is not finite", "the gradient norm is not finite",
                                  "the update would overflow a weight or moment", "the loss passed the run's bound",
                                  "the loss climbed above the run's best by more than its noise"};

/* Stops the run: why (a WF_DIVERGED_*) at step `at`, measured against limit; back to the copy
 * when there is one. The message says it all for a C caller; the facts say it for JavaScript. */
static wf_status diverge(wf_model *m, wf_run_state *r, int why, int32_t at, float measured, float limit) {
    const float lr = r->p.lr, loss = r->p.loss, norm = r->p.grad_norm;
    if (r->copy) roll_back(m, r);
    r->p.diverged = why;
    r->p.refused = why <= WF_DIVERGED_UPDATE;
    r->p.at = at;
    r->p.measured = measured;
    r->p.limit = limit;
    r->p.loss = loss, r->p.lr = lr, r->p.grad_norm = norm; /* the diverging step's, for the caller */
    return WF_ERR(m, WF_ERR_NUMERIC, "the run diverged at step %d: %s (%g; at most %g; lr %g); %s %d (try a lower lr)",
                  at, WHY[why], (double)measured, (double)limit, (double)lr,
                  r->copy ? "the model went back to its copy of step" : "no copy to go back to: the model is at step",
                  m->step);
}

/* The loss beyond which a cross-entropy run has diverged (see the top of the file). */
static double bound(const wf_model *m, const wf_run_state *r) {
    return 1.5 * fmax(log((double)m->cfg.vocab_size), (double)r->p.first) + 1;
}

/* Pushes a step's loss into the spike window; 1 (and the window's mean, the limit) when the
 * mean has climbed above the run's best by more than its noise explains. */
static int spiked(run_progress *p, float loss, float *mean_out, float *limit_out) {
    if (p->filled == 0) p->best = loss;
    p->window[p->filled++ % SPIKE_WINDOW] = loss;
    if (p->filled < SPIKE_WINDOW) return 0;
    double mean = 0, change[SPIKE_WINDOW - 1];
    float w[SPIKE_WINDOW]; /* oldest first */
    for (int i = 0; i < SPIKE_WINDOW; i++) w[i] = p->window[(p->filled + i) % SPIKE_WINDOW];
    for (int i = 0; i < SPIKE_WINDOW; i++) mean += w[i];
    mean /= SPIKE_WINDOW;
    for (int i = 1; i < SPIKE_WINDOW; i++) { /* insertion sort of the changes, for their median */
        double c = fabs((double)w[i] - w[i - 1]);
        int j = i - 1;
        for (; j > 0 && change[j - 1] > c; j--) change[j] = change[j - 1];
        change[j] = c;
    }
    const double allowed = fmax(SPIKE_MARGIN, SPIKE_NOISE * change[(SPIKE_WINDOW - 1) / 2]);
    const int up = mean - p->best > allowed;
    *mean_out = (float)mean;
    *limit_out = (float)(p->best + allowed);
    if (mean < p->best) p->best = mean;
    return up;
}

int wf_run_spike_at(const float *losses, int n) {
    run_progress p = {0};
    float mean, limit;
    for (int i = 0; i < n; i++)
        if (spiked(&p, losses[i], &mean, &limit)) return i;
    return -1;
}

/* ---- a step ---- */

/* One step on b, or on a batch sampled from the training split, at the run's learning rate;
 * timed (sampling and stepping) and judged. */
static wf_status run_step(wf_model *m, wf_run_state *r, const wf_batch *b) {
    const int32_t B = r->set.batch_size, T = r->set.context;
    const double t0 = now_ms(m);
    wf_batch own;
    if (!b) {
        sample(m, r, 0, r->batch, r->batch + (size_t)B * T);
        own = (wf_batch){.inputs = r->batch, .targets = r->batch + (size_t)B * T, .B = B, .T = T};
        b = &own;
    }
    wf_step_info info;
    int why = 0;
    const float lr = run_lr(m, r);
    const wf_status s = wf_model_step_lr(m, b, lr, &info, &why);
    r->p.seconds += (now_ms(m) - t0) / 1000;
    if (s != WF_OK && !why) return s; /* a bad batch: nothing happened */
    r->p.loss = info.loss, r->p.grad_norm = info.grad_norm, r->p.lr = lr;
    if (why) return diverge(m, r, why, m->step + 1, why == WF_DIVERGED_GRAD ? info.grad_norm : info.loss, FLT_MAX);
    r->has_batch = b == &own;
    r->p.steps++;
    if (r->p.steps == 1) r->p.first = info.loss;
    if (b->targets && !(info.loss <= bound(m, r)))
        return diverge(m, r, WF_DIVERGED_BOUND, m->step, info.loss, (float)bound(m, r));
    float mean, limit;
    if (spiked(&r->p, info.loss, &mean, &limit)) return diverge(m, r, WF_DIVERGED_SPIKE, m->step, mean, limit);
    return WF_OK;
}

static int validates(const wf_run_state *r) { return r->tokens && r->set.eval_interval > 0 && r->set.val_fraction > 0; }

static void record_validation(wf_model *m, wf_run_state *r) {
    r->p.val_loss = validate(m, r, &r->p.val_tokens);
    r->p.val_step = m->step;
}

/* The run's end, right after its last step: the last validation (unless that step had one),
 * and the bound held against the last batch after the last update. */
static wf_status finish(wf_model *m, wf_run_state *r, const wf_batch *b) {
    if (validates(r) && r->p.val_step != m->step) record_validation(m, r);
    const int32_t B = r->set.batch_size, T = r->set.context;
    const wf_batch own = {.inputs = r->batch, .targets = r->batch + (size_t)B * T, .B = B, .T = T};
    if (!b && r->has_batch) b = &own;
    if (!b || !b->targets) return WF_OK;
    float after = 0;
    wf_model_forward(m, b, &after);
    if (!(after <= bound(m, r))) return diverge(m, r, WF_DIVERGED_BOUND, m->step, after, (float)bound(m, r));
    return WF_OK;
}

static void facts_of(const wf_model *m, const wf_run_state *r, wf_run_facts *f) {
    if (!f) return;
    memset(f, 0, sizeof *f);
    f->step = m->step;
    f->steps = r->p.steps;
    f->seconds = r->p.seconds;
    f->run = r->set;
    f->run.steps = r->end_step ? r->end_step - r->start : 0; /* where it ends */
    f->run.seconds = (float)r->end_seconds;
    f->loss = r->p.loss, f->grad_norm = r->p.grad_norm, f->lr = r->p.lr;
    f->val_step = r->p.val_step, f->val_tokens = r->p.val_tokens;
    f->val_loss = r->p.val_step ? r->p.val_loss : NAN;
    f->finished = at_end(m, r);
    f->diverged = r->p.diverged, f->refused = r->p.refused, f->at = r->p.at;
    f->measured = r->p.measured, f->limit = r->p.limit;
    f->backup = r->copy ? r->copy_step : -1;
}

wf_status wf_model_run(wf_model *m, const wf_batch *b, int32_t steps, double ms, wf_run_facts *out) {
    WF_NEED_READY(m);
    wf_run_state *r = m->run;
    if (!r) return WF_ERR(m, WF_ERR_STATE, "the model has no training run: begin one (wf_model_run_begin)");
    if (steps < 0 || !(ms >= 0)) return WF_ERR(m, WF_ERR_ARG, "steps %d and ms %g: both must be >= 0", steps, ms);
    if (steps > 0 && r->p.diverged)
        return WF_ERR(m, WF_ERR_STATE, "the run diverged at step %d: begin a new one, or go on with keep (a lower lr?)",
                      r->p.at);
    if (steps > 0 && !b && !r->tokens && r->n)
        return WF_ERR(m, WF_ERR_STATE, "the run was loaded without its %d tokens: give them again (keep)", r->n);
    if (steps > 0 && !b && !r->tokens) return WF_ERR(m, WF_ERR_STATE, "the run trains on the caller's batches: give one");
    wf_status s = WF_OK;
    const int ended = at_end(m, r); /* a run past its end trains on at its last rate */
    const double before = r->p.seconds;
    for (int32_t k = 0; k < steps && s == WF_OK; k++) {
        if ((s = run_step(m, r, b)) != WF_OK) break;
        if (!ended && at_end(m, r)) {
            s = finish(m, r, b);
            break;
        }
        if (validates(r) && m->step % r->set.eval_interval == 0) {
            record_validation(m, r);
            take_copy(m, r); /* a sound run, validated: the copy moves here */
            break;
        }
        if (b || (ms > 0 && (r->p.seconds - before) * 1000 >= ms)) break;
    }
    facts_of(m, r, out);
    if (s == WF_OK) m->err[0] = 0;
    return s;
}

/* ---- beginning and ending ---- */

static wf_status check_settings(wf_model *m, const wf_run *r) {
    if (r->steps < 0 || !wf_finite(r->seconds) || r->seconds < 0 || (r->steps == 0 && r->seconds == 0))
        return WF_ERR(m, WF_ERR_ARG, "a run lasts steps >= 1 or seconds > 0 (finite); not steps %d, seconds %g", r->steps,
                      (double)r->seconds);
    if (r->warmup < -1 || r->decay_steps < -1)
        return WF_ERR(m, WF_ERR_ARG, "warmup %d and decay_steps %d must be >= 0 (or -1: the default)", r->warmup, r->decay_steps);
    if (!(r->warmup_fraction >= 0 && r->warmup_fraction < 1))
        return WF_ERR(m, WF_ERR_ARG, "warmup_fraction must be in [0, 1), not %g", (double)r->warmup_fraction);
    if (!(r->val_fraction >= 0 && r->val_fraction < 1))
        return WF_ERR(m, WF_ERR_ARG, "val_fraction must be in [0, 1), not %g", (double)r->val_fraction);
    if (r->batch_size < 1 || r->context < 0 || r->context > m->cfg.context)
        return WF_ERR(m, WF_ERR_ARG, "batch_size %d must be >= 1 and context %d in [0, the model's %d]", r->batch_size,
                      r->context, m->cfg.context);
    if (r->eval_interval < 0 || r->eval_batches < 0 || r->rollback < 0 || r->rollback > 1 || r->seed < -1)
        return WF_ERR(m, WF_ERR_ARG, "eval_interval %d and eval_batches %d must be >= 0, rollback %d 0 or 1, seed %d >= -1",
                      r->eval_interval, r->eval_batches, r->rollback, r->seed);
    return WF_OK;
}

void wf_run_free(wf_run_state *r) {
    if (!r) return;
    free(r->tokens);
    free(r->batch);
    wf_free(r->copy);
    free(r);
}

/* The batch buffer of r: 4 B T ids (checked against the address limit first). */
static wf_status alloc_batch(wf_model *m, wf_run_state *r) {
    const double ids = 4.0 * r->set.batch_size * r->set.context;
    if (ids * sizeof(int32_t) > wf_memory_budget() || !(r->batch = wf_malloc_n((size_t)ids, sizeof(int32_t))))
        return WF_ERR(m, WF_ERR_NOMEM, "could not allocate the run's batches (%.0f ids)", ids);
    return WF_OK;
}

/* A copy of tokens[0, n) for r (checked, counted and summed). */
static wf_status take_tokens(wf_model *m, wf_run_state *r, const int32_t *tokens, int32_t n) {
    wf_status s = wf_model_check_ids(m, tokens, (size_t)n, 0, "token");
    if (s != WF_OK) return s;
    if ((double)n * sizeof(int32_t) > wf_memory_budget() || !(r->tokens = wf_malloc_n((size_t)n, sizeof(int32_t))))
        return WF_ERR(m, WF_ERR_NOMEM, "could not copy the run's %d tokens", n);
    memcpy(r->tokens, tokens, (size_t)n * sizeof(int32_t));
    r->n = n;
    r->crc = wf_crc32((const uint8_t *)tokens, (size_t)n * sizeof(int32_t));
    return WF_OK;
}

/* keep, with a run in the model: it goes on (its tokens given again when it has none) from a
 * fresh roll-back copy; a diverged run is begun again from where it went back to. */
static wf_status go_on(wf_model *m, wf_run_state *r, const int32_t *tokens, int32_t n) {
    if (tokens && (n != r->n || wf_crc32((const uint8_t *)tokens, (size_t)n * sizeof(int32_t)) != r->crc))
        return WF_ERR(m, WF_ERR_STATE, "the run goes on on the tokens it began with (%d, CRC-32 %08x), not these %d", r->n,
                      r->crc, n);
    wf_run_state tmp = {.set = r->set, .copy = r->copy};
    wf_status s = tokens && !r->tokens ? take_tokens(m, &tmp, tokens, n) : WF_OK;
    if (s == WF_OK && !r->batch) s = alloc_batch(m, &tmp);
    if (s == WF_OK) s = alloc_copy(m, &tmp);
    if (s != WF_OK) {
        free(tmp.tokens), free(tmp.batch);
        if (tmp.copy != r->copy) wf_free(tmp.copy);
        return s;
    }
    if (tmp.tokens) r->tokens = tmp.tokens;
    if (tmp.batch) r->batch = tmp.batch;
    r->copy = tmp.copy;
    r->p.diverged = r->p.refused = r->p.at = 0;
    take_copy(m, r);
    m->err[0] = 0;
    return WF_OK;
}

wf_status wf_model_run_begin(wf_model *m, const wf_run *set, int32_t keep, const int32_t *tokens, int32_t n) {
    WF_NEED_READY(m);
    if (!set) {
        wf_run_end(m);
        m->err[0] = 0;
        return WF_OK;
    }
    if (keep != 0 && keep != 1) return WF_ERR(m, WF_ERR_ARG, "keep must be 0 or 1, not %d", keep);
    if (n < 0 || (n > 0) != (tokens != NULL))
        return WF_ERR(m, WF_ERR_ARG, "tokens and n: a run takes both (n >= 1) or neither, not %s and %d",
                      tokens ? "tokens" : "NULL", n);
    if (keep && m->run) return go_on(m, m->run, tokens, n);
    wf_status s = check_settings(m, set);
    if (s != WF_OK) return s;
    if (m->gstride == 0) return WF_ERR(m, WF_ERR_STATE, "every tensor is frozen: nothing to train (make some trainable first)");
    wf_run_state *r = calloc(1, sizeof *r);
    if (!r) return WF_ERR(m, WF_ERR_NOMEM, "out of memory");
    r->set = *set;
    const int32_t T = r->set.context = set->context ? set->context : m->cfg.context;
    if (tokens) {
        const int32_t n_val = (int32_t)floor((double)n * set->val_fraction);
        if (n - n_val < T + 1 || (set->eval_interval > 0 && set->val_fraction > 0 && n_val < T + 1)) {
            const int train = n - n_val < T + 1;
            wf_run_free(r);
            return WF_ERR(m, WF_ERR_ARG, "the %s split has %d tokens; a window of T = %d needs at least %d (%s)",
                          train ? "training" : "validation", train ? n - n_val : n_val, T, T + 1,
                          train ? "more tokens, or a smaller val_fraction" : "more tokens, a larger val_fraction, or none");
        }
        if ((s = take_tokens(m, r, tokens, n)) != WF_OK || (s = alloc_batch(m, r)) != WF_OK) {
            wf_run_free(r);
            return s;
        }
    }
    if ((s = alloc_copy(m, r)) != WF_OK) {
        wf_run_free(r);
        return s;
    }
    /* nothing fails from here on */
    r->start = m->step;
    if (!keep && set->seconds > 0) { /* a time budget: the optimizer's schedule stays flat at lr under it */
        r->sched = set->seconds;
        m->opt.start = m->step, m->opt.warmup = 0, m->opt.decay_steps = 0;
    } else if (!keep) { /* warm-up over a tenth of the run (at most 100 steps), then a cosine over the rest */
        const int32_t warm = set->warmup >= 0 ? set->warmup : (set->steps / 10 < 100 ? set->steps / 10 : 100);
        const int32_t decay = set->decay_steps >= 0 ? set->decay_steps : (set->steps > warm ? set->steps - warm : 0);
        m->opt.start = m->step, m->opt.warmup = r->set.warmup = warm, m->opt.decay_steps = r->set.decay_steps = decay;
    }
    if (set->seconds > 0) r->end_seconds = set->seconds;
    else r->end_step = m->step + set->steps;
    r->p.first = NAN;
    if (set->seed >= 0) wf_model_seed_sampler(m, (uint32_t)set->seed);
    wf_run_attach(m, r);
    take_copy(m, r);
    m->err[0] = 0;
    return WF_OK;
}

void wf_run_end(wf_model *m) {
    wf_run_state *r = m->run;
    if (!r) return;
    /* a time schedule goes on in the optimizer's at the rate it reached: after its end, its
     * decay ended a step ago; before (a run ended early), the floor becomes that rate */
    if (r->sched > 0 && m->step > 0 && r->p.steps > 0) {
        const float lr = run_lr(m, r);
        m->opt.start = m->step - 1, m->opt.warmup = 0, m->opt.decay_steps = 1;
        if (r->p.seconds < r->sched && m->opt.lr > 0) m->opt.min_lr_ratio = lr / m->opt.lr;
    }
    m->run = NULL;
    wf_run_free(r);
}

/* ---- checkpoints (docs/FORMATS.md, section RUNS) ---- */

enum { N_RUN = sizeof(wf_run) / 4 };
_Static_assert(sizeof(wf_run) == 4 * N_RUN, "wf_run is 4-byte words");

/* What a checkpoint keeps of a run after its settings, in order: 'i' an int32 (or the CRC's
 * uint32), 'f' a float32, 'd' a float64, 'w' the loss window. */
static const struct {
    size_t at;
    char kind;
} SAVED[] = {
#define F(field, kind) {offsetof(wf_run_state, field), kind},
    F(start, 'i') F(end_step, 'i') F(end_seconds, 'd') F(sched, 'f') F(n, 'i') F(crc, 'i') F(p.steps, 'i')
    F(p.seconds, 'd') F(p.loss, 'f') F(p.grad_norm, 'f') F(p.lr, 'f') F(p.first, 'f') F(p.best, 'd')
    F(p.window, 'w') F(p.filled, 'i') F(p.val_step, 'i') F(p.val_tokens, 'i') F(p.val_loss, 'd')
    F(p.diverged, 'i') F(p.at, 'i') F(p.measured, 'f') F(p.limit, 'f')
#undef F
};

/* n 4-byte (or, wide, 8-byte) values at x as little-endian words: to the file, or from it. */
static void put_words(wf_writer *w, const void *x, int n, int wide) {
    for (int i = 0; i < n; i++) {
        uint64_t v = 0;
        if (wide) memcpy(&v, (const uint8_t *)x + 8 * i, 8), wf_put_u64(w, v);
        else memcpy(&v, (const uint8_t *)x + 4 * i, 4), wf_put_u32(w, (uint32_t)v);
    }
}

static void get_words(const uint8_t *b, void *x, int n, int wide) {
    for (int i = 0; i < n; i++) {
        const uint64_t v = wide ? wf_le64(b + 8 * i) : wf_le32(b + 4 * i);
        const uint32_t v32 = (uint32_t)v;
        memcpy((uint8_t *)x + (wide ? 8 : 4) * i, wide ? (const void *)&v : (const void *)&v32, wide ? 8 : 4);
    }
}

void wf_run_write(wf_writer *w, const wf_model *m) {
    wf_put_u32(w, N_RUN);
    put_words(w, &m->run->set, N_RUN, 0);
    for (size_t k = 0; k < sizeof SAVED / sizeof *SAVED; k++) {
        const uint8_t *x = (const uint8_t *)m->run + SAVED[k].at;
        if (SAVED[k].kind == 'w') wf_put_u32(w, SPIKE_WINDOW);
        put_words(w, x, SAVED[k].kind == 'w' ? SPIKE_WINDOW : 1, SAVED[k].kind == 'd');
    }
}

wf_status wf_run_read(wf_reader *rd, const wf_config *cfg, wf_run_state **out, char *msg, size_t cap) {
    *out = NULL;
    wf_run_state *r = calloc(1, sizeof *r);
    if (!r) FAIL(WF_ERR_NOMEM, "out of memory");
    const run_progress *p = &r->p;
    const uint32_t words = wf_get_u32(rd);
    const uint8_t *b = words == N_RUN ? wf_take(rd, 4 * N_RUN) : NULL;
    if (b) get_words(b, &r->set, N_RUN, 0);
    for (size_t k = 0; b && k < sizeof SAVED / sizeof *SAVED; k++) {
        const int window = SAVED[k].kind == 'w', wide = SAVED[k].kind == 'd';
        const uint8_t *x = wf_take(rd, wide ? 8 : window ? 4 + 4 * SPIKE_WINDOW : 4);
        if (!x || (window && wf_le32(x) != SPIKE_WINDOW)) b = NULL;
        else get_words(window ? x + 4 : x, (uint8_t *)r + SAVED[k].at, window ? SPIKE_WINDOW : 1, wide);
    }
    wf_model probe; /* check_settings reads the model's context, and writes its message */
    memset(&probe, 0, sizeof probe);
    probe.cfg = *cfg;
    const char *bad = !b ? "it ends early, or its settings or loss window are not this version's"
                      : r->set.context < 1 ? "its context is not set"
                      : check_settings(&probe, &r->set) != WF_OK ? probe.err
                      : r->start < 0 || r->end_step < 0 || !(r->end_seconds >= 0 && r->end_seconds < 1e300) ||
                                (r->end_step == 0) == (r->end_seconds == 0)
                          ? "where it begins or ends is out of range"
                      : !(r->sched >= 0 && r->sched < 1e30f) || r->n < 0 || p->steps < 0 ||
                                !(p->seconds >= 0 && p->seconds < 1e300) || p->filled < 0 || p->val_step < 0 ||
                                p->val_tokens < 0 || p->diverged < 0 || p->diverged > WF_DIVERGED_SPIKE
                          ? "what it has done is out of range"
                          : NULL;
    if (bad) {
        char why[256];
        snprintf(why, sizeof why, "%s", bad);
        wf_run_free(r);
        FAIL(WF_ERR_FORMAT, "the training run: %s", why);
    }
    r->p.refused = p->diverged >= 1 && p->diverged <= WF_DIVERGED_UPDATE;
    r->copy_step = -1;
    *out = r;
    return WF_OK;
}

void wf_run_attach(wf_model *m, wf_run_state *r) {
    wf_run_end(m);
    m->run = r;
    m->run_ops = &RUN_OPS;
}
