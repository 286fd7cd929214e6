/* Loss against steps, natively (issue 14, item 3): the run of bench/ttq/wasmformer_run.mjs
 * (by steps, char tokenizer) through the C API, for the deterministic half of the
 * time-to-quality bench. The same calls in the same order as the package's train() and
 * evaluate(): the model seeded with `seed` (weights, and the sampler's streams), a training
 * run on the optimizer's schedule (wf_model_run_begin with keep), one wf_model_run a step, the schedule set once
 * (warmup, cosine over steps - warmup), the shared evaluation (bench/ttq/README.md) on the
 * held-out split and on the second text. So seed N gives the same batches and, up to float
 * rounding (AVX2 here, wasm SIMD there), the same curve as wasmformer_run.mjs --seed N: the
 * native build only makes the curves cheaper to draw. Its time per step is not the bench's:
 * that is measured in wasm by paired.mjs.
 *   build/native/ttq_curve seed=1 steps=2000 batch=8 lr=2e-3 beta2=0.99 eval_every=250 activation=relu2
 * Arguments are key=value: the run's (seed steps batch lr beta1 beta2 weight_decay clip
 * warmup decay (default steps - warmup) stop (end at this step, the schedule still fitted to steps) min_lr_ratio muon eval_every other_at(all|end) text other other_chars) and any config
 * field by its C or JS name (enums by name: activation=relu2). Prints JSON lines as
 * wasmformer_run.mjs does. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wasmformer.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static char *read_file(const char *path, long *n) {
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "cannot open %s\n", path); exit(1); }
    fseek(f, 0, SEEK_END);
    *n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc(*n + 1);
    if (fread(s, 1, *n, f) != (size_t)*n) { fprintf(stderr, "cannot read %s\n", path); exit(1); }
    fclose(f);
    s[*n] = 0;
    return s;
}

/* The value of an enum name in a names string ("gelu relu swiglu relu2"), or -1. */
static int enum_index(const char *names, const char *v) {
    int i = 0;
    size_t n = strlen(v);
    for (const char *p = names; *p; i++) {
        const char *e = strchr(p, ' ');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, v, n) == 0) return i;
        if (!e) break;
        p = e + 1;
    }
    return -1;
}

/* Sets a config field named by its C or JS name; 0 when no field has that name. */
static int set_config(wf_config *c, const char *k, const char *v) {
#define E_(name, js, def, names, ...) \
    if (!strcmp(k, #name) || !strcmp(k, #js)) { c->name = enum_index(names, v); if (c->name < 0) { fprintf(stderr, "%s: no %s\n", k, v); exit(2); } return 1; }
#define B_(name, js, ...) \
    if (!strcmp(k, #name) || !strcmp(k, #js)) { c->name = !strcmp(v, "true") || !strcmp(v, "1"); return 1; }
#define I_(name, js, ...) \
    if (!strcmp(k, #name) || !strcmp(k, #js)) { c->name = atoi(v); return 1; }
#define R_(name, js, ...) \
    if (!strcmp(k, #name) || !strcmp(k, #js)) { c->name = (float)atof(v); return 1; }
#define S_(name, js, ...) \
    if (!strcmp(k, #name) || !strcmp(k, #js)) { c->name = (uint32_t)strtoul(v, 0, 10); return 1; }
    WF_CONFIG_FIELDS(E_, B_, I_, R_, S_)
    return 0;
}

/* The shared evaluation: mean nats over non-overlapping windows of T, batches of 64. */
static double evaluate(wf_model *m, const int32_t *ids, int n, int T, int32_t *x, int32_t *y) {
    const int W = (n - 1) / T;
    double total = 0;
    for (int w0 = 0; w0 < W; w0 += 64) {
        const int b = W - w0 < 64 ? W - w0 : 64;
        for (int i = 0; i < b; i++) {
            memcpy(x + i * T, ids + (size_t)(w0 + i) * T, T * sizeof(int32_t));
            memcpy(y + i * T, ids + (size_t)(w0 + i) * T + 1, T * sizeof(int32_t));
        }
        wf_batch bt = {.inputs = x, .targets = y, .B = b, .T = T};
        float loss;
        if (wf_model_forward(m, &bt, &loss) != WF_OK) { fprintf(stderr, "forward: %s\n", wf_model_error(m)); exit(1); }
        total += (double)loss * b * T;
    }
    return total / ((double)W * T);
}

int main(int argc, char **argv) {
    wf_config cfg;
    wf_config_default(&cfg);
    int steps = 2000, B = 12, warmup = 100, decay = -1, stop = 0, every = 250, other_chars = 50000, other_end = 0;
    unsigned seed = 1;
    double lr = 1e-3, beta1 = 0.9, beta2 = 0.95, wd = 0.1, clip = 1, min_lr = 0.1;
    int muon = 0;
    const char *text_path = "data/austen/pride_and_prejudice.txt", *other_path = "data/austen/emma.txt";
    for (int i = 1; i < argc; i++) {
        char k[64], *v = strchr(argv[i], '=');
        if (!v || v - argv[i] >= (long)sizeof k) { fprintf(stderr, "arguments are key=value: %s\n", argv[i]); return 2; }
        memcpy(k, argv[i], v - argv[i]);
        k[v - argv[i]] = 0;
        v++;
        if (!strcmp(k, "seed")) seed = (unsigned)atoi(v);
        else if (!strcmp(k, "steps")) steps = atoi(v);
        else if (!strcmp(k, "batch")) B = atoi(v);
        else if (!strcmp(k, "warmup")) warmup = atoi(v);
        else if (!strcmp(k, "decay")) decay = atoi(v);
        else if (!strcmp(k, "stop")) stop = atoi(v);
        else if (!strcmp(k, "eval_every")) every = atoi(v);
        else if (!strcmp(k, "other_chars")) other_chars = atoi(v);
        else if (!strcmp(k, "other_at")) other_end = !strcmp(v, "end");
        else if (!strcmp(k, "lr")) lr = atof(v);
        else if (!strcmp(k, "beta1")) beta1 = atof(v);
        else if (!strcmp(k, "beta2")) beta2 = atof(v);
        else if (!strcmp(k, "weight_decay")) wd = atof(v);
        else if (!strcmp(k, "clip")) clip = atof(v);
        else if (!strcmp(k, "min_lr_ratio")) min_lr = atof(v);
        else if (!strcmp(k, "muon")) muon = atoi(v);
        else if (!strcmp(k, "text")) text_path = v;
        else if (!strcmp(k, "other")) other_path = v;
        else if (!set_config(&cfg, k, v)) { fprintf(stderr, "unknown key %s\n", k); return 2; }
    }
    long n_text, n_other;
    char *text = read_file(text_path, &n_text), *other = read_file(other_path, &n_other);
    long cut = 0;  /* the first other_chars code points */
    for (int cp = 0; cut < n_other; cut++)
        if (((unsigned char)other[cut] & 0xC0) != 0x80 && cp++ == other_chars) break;
    wf_tokenizer *tok = wf_tokenizer_create();
    wf_tokenizer_info ti;
    int32_t n_ids, n_oids;
    int32_t *ids = malloc(n_text * sizeof(int32_t)), *oids = malloc(cut * sizeof(int32_t) + 4);
    if (wf_tokenizer_train(tok, WF_TOKENIZER_CHAR, text, (int32_t)n_text, 0) || wf_tokenizer_get_info(tok, &ti) ||
        wf_tokenizer_encode(tok, text, (int32_t)n_text, ids, (int32_t)n_text, &n_ids) ||
        wf_tokenizer_encode(tok, other, (int32_t)cut, oids, (int32_t)cut, &n_oids)) {
        fprintf(stderr, "tokenizer: %s\n", wf_tokenizer_error(tok));
        return 1;
    }
    cfg.vocab_size = ti.vocab_size;
    cfg.seed = seed;
    wf_model *m = wf_model_create();
    if (wf_model_init(m, &cfg) != WF_OK) { fprintf(stderr, "init: %s\n", wf_model_error(m)); return 1; }
    wf_optim o;
    wf_model_get_optim(m, &o);
    o.lr = (float)lr; o.beta1 = (float)beta1; o.beta2 = (float)beta2; o.eps = 1e-8f; o.weight_decay = (float)wd;
    o.grad_clip = (float)clip; o.min_lr_ratio = (float)min_lr; o.muon = muon;
    o.warmup = warmup; o.decay_steps = decay >= 0 ? decay : steps > warmup ? steps - warmup : 0; o.start = 0;
    if (wf_model_set_optim(m, &o) != WF_OK) { fprintf(stderr, "optim: %s\n", wf_model_error(m)); return 1; }
    const int T = cfg.context, n_val = (int)floor(n_ids * 0.1);
    const int32_t *val = ids + (n_ids - n_val);
    int32_t *x = malloc(sizeof(int32_t) * 64 * T), *y = malloc(sizeof(int32_t) * 64 * T);
    printf("{\"kind\":\"settings\",\"side\":\"native\",\"seed\":%u,\"steps\":%d,\"batch\":%d,\"lr\":%g,\"beta2\":%g,"
           "\"muon\":%d,\"vocab\":%d,\"val_tokens\":%d,\"other_tokens\":%d,\"args\":\"",
           seed, steps, B, lr, beta2, muon, ti.vocab_size, n_val, n_oids);
    for (int i = 1; i < argc; i++) printf("%s%s", i > 1 ? " " : "", argv[i]);
    printf("\"}\n");
    double elapsed = 0, val_loss = 0, other_loss = -1, sum = 0;
    int count = 0;
    const int last = stop > 0 && stop < steps ? stop : steps; /* stop: end early, the schedule still fitted to steps */
    wf_run run; /* batches from the training split; this program evaluates on its own */
    wf_preset(NULL, NULL, NULL, &run);
    run.steps = last, run.batch_size = B, run.eval_interval = 0, run.rollback = 0;
    if (wf_model_run_begin(m, &run, 1, ids, n_ids) != WF_OK) { fprintf(stderr, "run: %s\n", wf_model_error(m)); return 1; }
    for (int step = 0; step <= last; step++) {
        if (step > 0) {
            double t0 = now();
            wf_run_facts f;
            if (wf_model_run(m, NULL, 1, 0, &f)) {
                fprintf(stderr, "step %d: %s\n", step, wf_model_error(m));
                return 1;
            }
            elapsed += now() - t0;
            sum += f.loss;
            count++;
        }
        if ((every > 0 && step % every == 0) || step == last) {
            val_loss = evaluate(m, val, n_val, T, x, y);
            if (!other_end || step == last) other_loss = evaluate(m, oids, n_oids, T, x, y);
            printf("{\"elapsed\":%.3f,\"step\":%d,\"tokens\":%d,\"train_loss\":", elapsed, step, step * B * T);
            printf(count ? "%.6f" : "null", sum / (count ? count : 1));
            printf(",\"val_loss\":%.5f,\"val_bpc\":%.5f", val_loss, val_loss / log(2));
            if (other_loss >= 0) printf(",\"emma_loss\":%.5f,\"emma_bpc\":%.5f", other_loss, other_loss / log(2));
            printf("}\n");
            fflush(stdout);
            sum = 0, count = 0;
        }
    }
    printf("{\"kind\":\"summary\",\"side\":\"native\",\"seed\":%u,\"steps\":%d,\"train_seconds\":%.3f,\"val_loss\":%.5f,"
           "\"emma_loss\":%.5f,\"ms_per_step\":%.3f}\n", seed, last, elapsed, val_loss, other_loss, 1000 * elapsed / last);
    wf_model_free(m);
    wf_tokenizer_free(tok);
    free(ids), free(oids), free(x), free(y), free(text), free(other);
    return 0;
}
