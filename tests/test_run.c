/* Training runs (src/run.c): a run paused anywhere, in memory or through a checkpoint, goes on
 * exactly as one that never paused (by steps, and by time on a test clock); the schedule of
 * steps and of a time budget, going on past the end and after the run ends; the divergence
 * rules (a model meeting a new text is not diverged, an absurd learning rate is caught and
 * rolled back); the caller's batches; the run in a checkpoint; refused calls. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "model.h" /* the run's test clock (m->clock) */
#include "model_state.h"

/* A clock that advances 1 ms each time it is read: a step (two reads) takes 1 ms of training,
 * so a time budget runs the same steps in every run. */
static double tick(void *ctx) { return (*(double *)ctx) += 1.0; }
static double ticks;

static wf_model *model_with(const wf_config *c, float lr) {
    wf_model *m = wf_model_create();
    CHECK_OK(wf_model_init(m, c), m);
    wf_optim o;
    wf_model_get_optim(m, &o);
    o.lr = lr;
    CHECK_OK(wf_model_set_optim(m, &o), m);
    m->clock = tick, m->clock_ctx = &ticks;
    return m;
}

/* ids below V with structure: runs that count up, a random id every 7th */
static int32_t *corpus(int n, int V, uint32_t seed, int lo) {
    int32_t *t = malloc((size_t)n * sizeof(int32_t));
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        t[i] = lo + ((i % 7 == 0) ? (int32_t)((seed >> 16) % (uint32_t)(V - lo)) : (i > 0 ? (t[i - 1] - lo + 1) % (V - lo) : 0));
    }
    return t;
}

/* wf_model_run until the run ends or a call fails. */
static wf_status to_end(wf_model *m, wf_run_facts *f) {
    wf_status s;
    while ((s = wf_model_run(m, NULL, 1 << 30, 0, f)) == WF_OK && !f->finished) {
    }
    return s;
}

static wf_run settings(int32_t steps, float seconds) {
    wf_run r;
    wf_preset(NULL, NULL, NULL, &r);
    r.steps = steps, r.seconds = seconds, r.batch_size = 4, r.context = 12, r.val_fraction = 0.2f;
    r.eval_interval = 7, r.eval_batches = 2, r.seed = 5;
    return r;
}

/* Every step's facts of one model, and its state at the end. */
typedef struct {
    wf_run_facts f[64];
    int n;
    uint8_t *ckpt;
    int32_t n_ckpt;
} trace;

static void finish_trace(wf_model *m, trace *t) { CHECK_OK(wf_model_save(m, NULL, WF_SAVE_OPTIMIZER, &t->ckpt, &t->n_ckpt), m); }

static int same_facts(const wf_run_facts *a, const wf_run_facts *b) {
    return a->step == b->step && a->steps == b->steps && a->seconds == b->seconds && a->loss == b->loss &&
           a->grad_norm == b->grad_norm && a->lr == b->lr && a->val_step == b->val_step &&
           (a->val_loss == b->val_loss || (a->val_loss != a->val_loss && b->val_loss != b->val_loss)) &&
           a->finished == b->finished;
}

/* A run stepped one step a call until it ends; at `pause` (0: never) it stops there: in memory
 * (reload 0), or saved and loaded into a new model that goes on with the run (reload 1). */
static void stepped(const wf_config *c, const wf_run *r, const int32_t *tok, int n, int pause, int reload, trace *t) {
    ticks = 0;
    wf_model *m = model_with(c, 3e-3f);
    CHECK_OK(wf_model_run_begin(m, r, 0, tok, n), m);
    t->n = 0;
    for (;;) {
        if (t->n == pause && reload) {
            uint8_t *b;
            int32_t nb;
            CHECK_OK(wf_model_save(m, NULL, WF_SAVE_OPTIMIZER, &b, &nb), m);
            wf_model_free(m);
            m = model_with(c, 1.0f); /* the checkpoint brings its own settings */
            CHECK_OK(wf_model_load(m, NULL, b, nb), m);
            wf_buffer_free(b);
            wf_run_facts f;
            CHECK(wf_model_run(m, NULL, 1, 0, &f) == WF_ERR_STATE, "a loaded run waits for its tokens");
            CHECK_OK(wf_model_run(m, NULL, 0, 0, &f), m);
            CHECK(f.steps == pause && f.step == t->f[pause - 1].step, "the loaded run's facts: %d steps", f.steps);
            CHECK_OK(wf_model_run_begin(m, r, 1, tok, n), m);
        }
        CHECK_OK(wf_model_run(m, NULL, 1, 0, &t->f[t->n]), m);
        if (t->f[t->n++].finished || t->n == 64) break;
    }
    finish_trace(m, t);
    wf_model_free(m);
}

static void compare(const trace *a, const trace *b, const char *what, int pause) {
    int same = a->n == b->n && a->n_ckpt == b->n_ckpt && !memcmp(a->ckpt, b->ckpt, (size_t)a->n_ckpt);
    for (int i = 0; same && i < a->n; i++) same = same_facts(&a->f[i], &b->f[i]);
    CHECK(same, "%s at step %d: not the run that never paused", what, pause);
}

/* A run paused after any step, in memory or through a checkpoint, is bit for bit the run that
 * never paused: every step's loss, gradient norm and lr, every validation, the end, the final
 * checkpoint (weights, moments, sampler, the run itself). By steps, and by time. */
static void test_pause_anywhere(void) {
    const wf_config c = small();
    int32_t *tok = corpus(600, c.vocab_size, 1, 0);
    for (int timed = 0; timed < 2; timed++) {
        const wf_run r = timed ? settings(0, 0.030f) : settings(30, 0);
        trace one;
        stepped(&c, &r, tok, 600, 0, 0, &one);
        CHECK(one.f[one.n - 1].finished && one.n == 30, "%s: %d steps", timed ? "30 ms at 1 ms a step" : "30 steps", one.n);
        CHECK(one.f[6].val_step == 7 && one.f[5].val_step == 0 && one.f[29].val_step == 30, "validated at 7, 14, ... and the end");
        /* the same run in calls of several steps: validations end a call */
        ticks = 0;
        wf_model *m = model_with(&c, 3e-3f);
        CHECK_OK(wf_model_run_begin(m, &r, 0, tok, 600), m);
        wf_run_facts f;
        int calls = 0;
        do {
            CHECK_OK(wf_model_run(m, NULL, 1 << 30, 0, &f), m);
            calls++;
        } while (!f.finished && calls < 20);
        CHECK(calls == 5 && same_facts(&f, &one.f[29]), "%d calls (validations at 7, 14, 21, 28, then the end)", calls);
        wf_model_free(m);
        for (int pause = 1; pause < one.n; pause++) {
            for (int reload = 0; reload < 2; reload++) {
                trace other;
                stepped(&c, &r, tok, 600, pause, reload, &other);
                compare(&one, &other, reload ? "saved, loaded and resumed" : "paused and resumed", pause);
                wf_buffer_free(other.ckpt);
            }
        }
        wf_buffer_free(one.ckpt);
    }
    printf("pause anywhere: 30 steps (and 30 ms of steps) paused after each step, in memory and through a checkpoint, "
           "equal the run that never paused\n");
    free(tok);
}

/* The schedule: warm-up over a tenth, cosine decay over the rest, then its last rate past the
 * end; a time budget's warm-up from 1 % and its cosine on the clock; an ended run's schedule
 * goes on in the optimizer settings at the rate it reached, and a run on them (keep) from there. */
static void test_schedule(void) {
    const wf_config c = small();
    int32_t *tok = corpus(600, c.vocab_size, 2, 0);
    ticks = 0;
    wf_model *m = model_with(&c, 1e-2f);
    wf_run r = settings(20, 0);
    r.eval_interval = 0;
    CHECK_OK(wf_model_run_begin(m, &r, 0, tok, 600), m);
    wf_run_facts f;
    wf_optim o;
    wf_model_get_optim(m, &o);
    CHECK(o.warmup == 2 && o.decay_steps == 18 && o.start == 0, "a tenth of 20 warms up, the rest decays: %d, %d", o.warmup,
          o.decay_steps);
    for (int s = 0; s < 20; s++) {
        const float want = model_info(m).lr;
        CHECK_OK(wf_model_run(m, NULL, 1, 0, &f), m);
        CHECK(f.lr == want, "step %d: lr %g, the info said %g", s + 1, (double)f.lr, (double)want);
    }
    CHECK(f.finished && model_info(m).lr == 1e-3f, "the decay ends at lr x min_lr_ratio: %g", (double)model_info(m).lr);
    CHECK_OK(wf_model_run(m, NULL, 3, 0, &f), m);
    CHECK(f.steps == 23 && f.lr == 1e-3f && f.finished, "past its end a run trains on at its last rate (%g)", (double)f.lr);

    /* a time budget: 40 ms at 1 ms a step */
    ticks = 0;
    r = settings(0, 0.040f);
    r.eval_interval = 0;
    CHECK_OK(wf_model_run_begin(m, &r, 0, tok, 600), m);
    CHECK_OK(wf_model_run(m, NULL, 1, 0, &f), m);
    CHECK(f.lr == (float)(1e-2f * 0.01), "the first step of a budget at 1 %% of lr: %g", (double)f.lr);
    CHECK_OK(wf_model_run(m, NULL, 1, 0, &f), m);
    CHECK(fabsf(f.lr - 1e-2f * 0.5f) < 1e-7f, "then up to lr over 5 %% of it: %g at 1 of 2 ms", (double)f.lr);
    float last = 1;
    int down = 1;
    while (!f.finished) {
        CHECK_OK(wf_model_run(m, NULL, 1, 0, &f), m);
        down &= f.lr <= last;
        last = f.lr;
    }
    CHECK(down && f.steps == 40 && f.seconds >= 0.040 && f.run.seconds == 0.040f, "a cosine down to its end: %d steps, %g s",
          f.steps, f.seconds);
    const float tail = model_info(m).lr;
    CHECK(tail == (float)(1e-2f * (double)0.1f), "the rate after a budget: lr x min_lr_ratio (%g)", (double)tail);
    /* ended, the schedule goes on in the settings at that rate; a run on them (keep) from there */
    CHECK_OK(wf_model_run_begin(m, NULL, 0, NULL, 0), m);
    CHECK(wf_model_run(m, NULL, 0, 0, &f) == WF_ERR_STATE, "ended: no run");
    CHECK(model_info(m).lr == tail, "the settings go on at %g, not %g", (double)tail, (double)model_info(m).lr);
    wf_model_get_optim(m, &o);
    CHECK(o.lr == 1e-2f && o.min_lr_ratio == 0.1f, "the peak lr and floor stay the settings'");
    r = settings(5, 0);
    r.eval_interval = 0;
    CHECK_OK(wf_model_run_begin(m, &r, 1, tok, 600), m);
    CHECK_OK(wf_model_run(m, NULL, 5, 0, &f), m);
    CHECK(f.lr == tail && f.steps == 5 && f.finished, "5 more steps at %g, not back up (%g)", (double)tail, (double)f.lr);
    /* and 5 more milliseconds of training, past its end */
    CHECK_OK(wf_model_run(m, NULL, 1 << 30, 5.0, &f), m);
    CHECK(f.lr == tail && f.steps == 10, "5 ms more at %g (%d steps, lr %g)", (double)tail, f.steps, (double)f.lr);

    /* a budget ended early goes on at the rate it reached */
    ticks = 0;
    r = settings(0, 1.0f);
    r.eval_interval = 0;
    CHECK_OK(wf_model_run_begin(m, &r, 0, tok, 600), m);
    CHECK_OK(wf_model_run(m, NULL, 300, 0, &f), m);
    const float reached = model_info(m).lr;
    CHECK_OK(wf_model_run_begin(m, NULL, 0, NULL, 0), m);
    CHECK(fabsf(model_info(m).lr - reached) <= 1e-6f * reached, "ended at %g, the settings go on at %g", (double)reached,
          (double)model_info(m).lr);
    wf_model_free(m);
    free(tok);
}

/* A model trained on one text meets another: its first losses are far above ln V, and its run
 * is judged from there, not diverged. A learning rate of 1e6 after 150 good steps is caught
 * and rolled back to where that run began. */
static void test_divergence(void) {
    wf_config c = small();
    c.vocab_size = 24;
    /* the text counts up through 24 ids; the new one counts down through them: a model sure of
     * the first is surely wrong on the second */
    int32_t *a = malloc(2000 * sizeof(int32_t)), *b = malloc(2000 * sizeof(int32_t));
    for (int i = 0; i < 2000; i++) a[i] = i % 24, b[i] = 23 - i % 24;
    ticks = 0;
    wf_model *m = model_with(&c, 1e-2f);
    wf_run r = settings(250, 0);
    r.eval_interval = 50;
    wf_run_facts f;
    CHECK_OK(wf_model_run_begin(m, &r, 0, a, 2000), m);
    CHECK_OK(to_end(m, &f), m);
    CHECK(f.loss < 0.1f && !f.diverged, "250 good steps: loss %g", (double)f.loss);
    printf("a model sure of its text (loss %.3f) ", (double)f.loss);
    /* fine-tuning on the new text, at a small lr */
    r = settings(100, 0);
    wf_optim o;
    wf_model_get_optim(m, &o);
    o.lr = 3e-4f;
    CHECK_OK(wf_model_set_optim(m, &o), m);
    CHECK_OK(wf_model_run_begin(m, &r, 0, b, 2000), m);
    CHECK_OK(wf_model_run(m, NULL, 1, 0, &f), m);
    const double old_bound = 1.5 * log(24.0) + 1;
    CHECK(f.loss > old_bound, "the new text starts at %g, above the %g an absolute bound allowed", (double)f.loss, old_bound);
    printf("meets a new one at loss %.3f (an absolute bound: %.3f)\n", (double)f.loss, old_bound);
    wf_status s = to_end(m, &f);
    CHECK(s == WF_OK && !f.diverged && f.steps == 100, "fine-tuning on a new text is no divergence: %s (%s)",
          wf_status_string(s), wf_model_error(m));

    /* lr 1e6 after those 350 steps: caught, rolled back to the run's start */
    const int32_t at = model_info(m).step;
    uint8_t *before;
    int32_t nb;
    o.lr = 1e6f;
    CHECK_OK(wf_model_set_optim(m, &o), m);
    CHECK_OK(wf_model_save(m, NULL, WF_SAVE_OPTIMIZER, &before, &nb), m);
    r = settings(100, 0);
    r.warmup = 0;
    CHECK_OK(wf_model_run_begin(m, &r, 0, a, 2000), m);
    s = to_end(m, &f);
    CHECK(s == WF_ERR_NUMERIC && f.diverged && f.at > at && f.at <= at + 3, "lr 1e6: diverged (%d) at step %d: %s",
          f.diverged, f.at, wf_model_error(m));
    CHECK(f.step == at && f.backup == at && f.steps == 0, "back at step %d (the copy's %d)", f.step, f.backup);
    CHECK(strstr(wf_model_error(m), "went back to its copy of step") != NULL, "%s", wf_model_error(m));
    printf("lr 1e6 after 350 good steps: %s\n", wf_model_error(m));
    wf_model *back = model_with(&c, 3e-3f);
    CHECK_OK(wf_model_load(back, NULL, before, nb), back);
    CHECK(!memcmp(wf_model_params(back), wf_model_params(m), block(m) * sizeof(float)), "rolled back: the weights as they were");
    CHECK(wf_model_run(m, NULL, 1, 0, &f) == WF_ERR_STATE && strstr(wf_model_error(m), "diverged"),
          "a diverged run takes no step: %s", wf_model_error(m));
    /* without a copy, it stops where it diverged; an update that would overflow changes nothing */
    r.rollback = 0;
    o.lr = 1e38f;
    CHECK_OK(wf_model_set_optim(back, &o), back);
    CHECK_OK(wf_model_run_begin(back, &r, 0, a, 2000), back);
    s = wf_model_run(back, NULL, 10, 0, &f);
    CHECK(s == WF_ERR_NUMERIC && f.refused && f.backup == -1 && f.step == f.at - 1, "lr 1e38: step %d refused (%d): %s",
          f.at, f.diverged, wf_model_error(back));
    int finite = 1;
    for (size_t i = 0; i < block(back); i++) finite &= isfinite(wf_model_params(back)[i]);
    CHECK(finite, "the refused step changed nothing: the weights are finite");
    wf_buffer_free(before);
    wf_model_free(back);
    wf_model_free(m);
    free(a), free(b);
}

/* The spike rule on its own: noise about a flat loss never trips it; a climb does, on its way;
 * a jump at a run's start is measured from the run's first loss. */
static void test_spike_rule(void) {
    static float loss[2000];
    uint32_t x = 7;
    for (int i = 0; i < 2000; i++) {
        x = x * 1103515245u + 12345u;
        loss[i] = 1.3f + (float)(((x >> 8) / 16777216.0 - 0.5) * 0.6); /* +-0.3 */
    }
    CHECK(wf_run_spike_at(loss, 2000) == -1, "noise of +-0.3 about 1.3 tripped at %d", wf_run_spike_at(loss, 2000));
    for (int i = 0; i < 200; i++) loss[i] = 1.3f + (i / 40.0f < 3 ? i / 40.0f : 3) + (loss[i] - 1.3f) / 3;
    const int at = wf_run_spike_at(loss, 200);
    CHECK(at >= 19 && at < 120, "a climb of 3 nats is caught on its way (at step %d)", at + 1);
    loss[0] = 1.3f;
    for (int i = 1; i < 20; i++) loss[i] = 3.5f;
    CHECK(wf_run_spike_at(loss, 20) == 19, "a jump at the run's start is measured from its first loss");
}

/* A run on the caller's batches: each step is wf_model_step's at the run's schedule. */
static void test_caller_batches(void) {
    const wf_config c = small();
    int32_t *tok = corpus(400, c.vocab_size, 5, 0);
    wf_model *m = model_with(&c, 3e-3f), *plain = model_with(&c, 3e-3f);
    wf_run r = settings(10, 0);
    CHECK_OK(wf_model_run_begin(m, &r, 0, NULL, 0), m);
    wf_optim o;
    wf_model_get_optim(m, &o);
    CHECK_OK(wf_model_set_optim(plain, &o), plain);
    wf_run_facts f;
    CHECK(wf_model_run(m, NULL, 1, 0, &f) == WF_ERR_STATE, "no tokens, no batch: %s", wf_model_error(m));
    int same = 1;
    for (int s = 0; s < 10; s++) {
        const wf_batch b = ids_batch(tok + 13 * s, tok + 13 * s + 1, 1, 12);
        wf_step_info info;
        CHECK_OK(wf_model_run(m, &b, 5, 0, &f), m);
        CHECK_OK(wf_model_step(plain, &b, &info), plain);
        same &= f.loss == info.loss && f.lr == info.lr && f.steps == s + 1;
    }
    CHECK(same && f.finished && f.val_step == 0, "one step a batch, as wf_model_step, to the run's end");
    wf_model_free(m), wf_model_free(plain);
    free(tok);
}

/* Refused calls leave the model and its run as they were, and say why. */
static void test_refused(void) {
    const wf_config c = small();
    int32_t *tok = corpus(400, c.vocab_size, 6, 0);
    wf_model *m = model_with(&c, 3e-3f);
    wf_run r = settings(10, 0);
    wf_run_facts f;
    CHECK(wf_model_run(m, NULL, 1, 0, &f) == WF_ERR_STATE && strstr(wf_model_error(m), "no training run"), "no run");
    CHECK(wf_model_run_begin(NULL, &r, 0, tok, 400) == WF_ERR_ARG, "NULL model");
    r.steps = 0;
    CHECK(wf_model_run_begin(m, &r, 0, tok, 400) == WF_ERR_ARG && strstr(wf_model_error(m), "lasts"), "no length");
    r = settings(10, 0);
    r.context = 17;
    CHECK(wf_model_run_begin(m, &r, 0, tok, 400) == WF_ERR_ARG && strstr(wf_model_error(m), "context"), "T > context");
    r = settings(10, 0);
    CHECK(wf_model_run_begin(m, &r, 2, tok, 400) == WF_ERR_ARG, "keep 2");
    CHECK(wf_model_run_begin(m, &r, 0, tok, 0) == WF_ERR_ARG, "tokens without a count");
    int32_t bad[400];
    memcpy(bad, tok, sizeof bad);
    bad[123] = c.vocab_size;
    CHECK(wf_model_run_begin(m, &r, 0, bad, 400) == WF_ERR_TOKEN, "a token outside the vocabulary");
    CHECK_OK(wf_model_run_begin(m, &r, 0, tok, 400), m);
    CHECK(wf_model_run(m, NULL, -1, 0, &f) == WF_ERR_ARG, "steps -1");
    CHECK(wf_model_run_begin(m, &r, 1, bad, 400) == WF_ERR_STATE && strstr(wf_model_error(m), "tokens it began with"),
          "keep with other tokens: %s", wf_model_error(m));
    uint8_t *mask = calloc(1000, 1);
    wf_model *frozen = model_with(&c, 3e-3f);
    int32_t n_mask = 0;
    for (int i = 0; i < model_info(frozen).n_tensors; i++) {
        wf_tensor_info t;
        wf_model_get_tensor(frozen, i, &t);
        n_mask += t.layers;
    }
    CHECK_OK(wf_model_trainable(frozen, mask, NULL, n_mask), frozen);
    CHECK(wf_model_run_begin(frozen, &r, 0, tok, 400) == WF_ERR_STATE && strstr(wf_model_error(frozen), "frozen"), "frozen");
    /* a new trainable layout ends the run */
    memset(mask, 1, (size_t)n_mask);
    mask[0] = 0;
    CHECK_OK(wf_model_trainable(m, mask, NULL, n_mask), m);
    CHECK(wf_model_run(m, NULL, 0, 0, &f) == WF_ERR_STATE, "a new layout ended the run");
    free(mask);
    /* presets */
    wf_config pc;
    wf_optim po;
    wf_run pr;
    CHECK(wf_preset("micro", &pc, &po, &pr) == WF_OK && pc.n_layer == 2 && pc.positions == WF_POS_ROPE && po.muon == 1 &&
              pr.batch_size == 16, "micro");
    CHECK(wf_preset("tiny", &pc, NULL, NULL) == WF_OK && pc.d_model == 128, "tiny, NULLs fine");
    wf_config d;
    wf_config_default(&d);
    CHECK(!memcmp(&pc, &d, sizeof d), "tiny's shape is the rows' defaults");
    CHECK(wf_preset("huge", &pc, &po, &pr) == WF_ERR_ARG, "no such preset");
    wf_model_free(m), wf_model_free(frozen);
    free(tok);
}

int main(void) {
    test_pause_anywhere();
    test_schedule();
    test_divergence();
    test_spike_rule();
    test_caller_batches();
    test_refused();
    return check_summary("test_run");
}
