/* Train a small GPT on a text file for a time budget, in C, with the loop the core runs
 * (include/wasmformer.h, "Training runs"): the same run the npm package, the command line and
 * the web page drive. It prints a sample of the model at every validation, says where a run
 * that diverged went back to, and saves the model (with its run, so it can go on) at the end.
 *
 *   build/native/example_train [text.txt] [--seconds 60 | --steps N] [--preset micro]
 *                              [--lr X] [--seed N] [--eval N] [--out model.wf] [--losses]
 *
 * --losses prints every step's loss and learning rate as JSON lines instead of the progress
 * (tests/js/example.test.mjs holds them to the package's, bit for bit, in wasm). Built by
 * CMake (target example_train) and, for Node, by ./build.sh example. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wasmformer.h"

#define SAMPLE_TOKENS 80

/* Ends the program on a failed call, with the handle's message. */
static void check(wf_status s, const char *what, const char *message) {
    if (s == WF_OK) return;
    fprintf(stderr, "train: %s: %s (%s)\n", what, message, wf_status_string(s));
    exit(1);
}

/* The whole file, NUL-terminated; its length to *n. */
static char *read_text(const char *path, int32_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "train: cannot read %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    const long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)len + 1);
    if (!text || fread(text, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "train: cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    text[len] = 0;
    *n = (int32_t)len;
    return text;
}

/* SAMPLE_TOKENS of the model's text after a newline, at temperature 0.8 with a fixed seed: what
 * changes between two samples is the model. Generating does not disturb the run. Each call
 * samples a token and writes the bytes it adds to the text (a UTF-8 character may come in
 * pieces: printed as they come, they join). */
static void print_sample(wf_model *m, wf_tokenizer *tok) {
    int32_t prompt, n, id, len;
    check(wf_tokenizer_encode(tok, "\n", 1, &prompt, 1, &n), "encode", wf_tokenizer_error(tok));
    wf_tokenizer_info ti;
    wf_tokenizer_get_info(tok, &ti);
    const int32_t cap = 2 * ti.max_bytes; /* the most one token adds */
    char *piece = malloc((size_t)cap);
    if (!piece) check(WF_ERR_NOMEM, "generate", "out of memory");
    const wf_sampling s = {.temperature = 0.8f, .top_k = 0, .top_p = 1, .n_vocab = 0, .no_unk = 1};
    check(wf_model_gen_start(m, &prompt, n, 1), "generate", wf_model_error(m));
    printf("  sample: ");
    for (int i = 0; i < SAMPLE_TOKENS; i++) {
        check(wf_model_gen_next(m, &s, tok, &id, piece, cap, &len), "generate", wf_model_error(m));
        for (int k = 0; k < len; k++) putchar(piece[k] == '\n' ? ' ' : piece[k]);
    }
    putchar('\n');
    free(piece);
}

int main(int argc, char **argv) {
    const char *path = "data/austen/pride_and_prejudice.txt", *preset = "micro", *out = NULL;
    double seconds = 60, lr = 0;
    int steps = 0, seed = -1, eval = -1, losses = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--seconds")) seconds = atof(v), steps = 0, i++;
        else if (!strcmp(a, "--steps")) steps = atoi(v), i++;
        else if (!strcmp(a, "--preset")) preset = v, i++;
        else if (!strcmp(a, "--lr")) lr = atof(v), i++;
        else if (!strcmp(a, "--seed")) seed = atoi(v), i++;
        else if (!strcmp(a, "--eval")) eval = atoi(v), i++;
        else if (!strcmp(a, "--out")) out = v, i++;
        else if (!strcmp(a, "--losses")) losses = 1;
        else if (a[0] == '-') return fprintf(stderr, "train: unknown flag %s\n", a), 2;
        else path = a;
    }

    /* the text, and a char tokenizer learned from it */
    int32_t n_text, n_ids;
    char *text = read_text(path, &n_text);
    wf_tokenizer *tok = wf_tokenizer_create();
    check(wf_tokenizer_train(tok, WF_TOKENIZER_CHAR, text, n_text, 0), "tokenizer", wf_tokenizer_error(tok));
    int32_t *ids = malloc((size_t)n_text * sizeof *ids);
    check(wf_tokenizer_encode(tok, text, n_text, ids, n_text, &n_ids), "encode", wf_tokenizer_error(tok));
    wf_tokenizer_info ti;
    wf_tokenizer_get_info(tok, &ti);

    /* a preset: its shape, its optimizer recipe and its run's settings */
    wf_config cfg;
    wf_optim opt;
    wf_run run;
    if (wf_preset(preset, &cfg, &opt, &run) != WF_OK) return fprintf(stderr, "train: no preset \"%s\"\n", preset), 2;
    cfg.vocab_size = ti.vocab_size;
    if (lr > 0) opt.lr = (float)lr;
    wf_model *m = wf_model_create();
    check(wf_model_init(m, &cfg), "init", wf_model_error(m));
    check(wf_model_set_optim(m, &opt), "optimizer", wf_model_error(m));
    run.steps = steps, run.seconds = steps ? 0 : (float)seconds; /* a number of steps, or a time budget */
    if (seed >= 0) run.seed = seed;
    if (eval >= 0) run.eval_interval = eval;
    check(wf_model_run_begin(m, &run, 0, ids, n_ids), "run", wf_model_error(m));
    wf_model_info info;
    wf_model_get_info(m, &info);
    if (!losses)
        printf("training %s (%.0f parameters) on %s, %d tokens, for %g %s; batches of %d x %d\n", preset, info.memory.count,
               path, n_ids, steps ? (double)steps : seconds, steps ? "steps" : "seconds", run.batch_size, cfg.context);

    /* the loop: calls of at most a quarter second of training; each returns after a validation
     * (a sample then), at the run's end, or on divergence */
    wf_run_facts f;
    wf_status s;
    do {
        s = wf_model_run(m, NULL, losses ? 1 : 1 << 30, losses ? 0 : 250, &f);
        if (losses && s == WF_OK) printf("{\"step\":%d,\"loss\":%.9g,\"lr\":%.9g}\n", f.step, f.loss, f.lr);
        else if (s == WF_OK && f.val_step == f.step) {
            printf("step %5d  %5.1f s  loss %.3f  lr %.2e  val %.3f\n", f.step, f.seconds, f.loss, f.lr, f.val_loss);
            print_sample(m, tok);
        }
    } while (s == WF_OK && !f.finished);
    if (s == WF_ERR_NUMERIC && f.diverged) {
        /* the facts, not the message: why, where, and where the model is now */
        printf("diverged at step %d (%s%d: %g against %g); %s %d\n", f.at, f.refused ? "a refused step, " : "rule ",
               f.diverged, f.measured, f.limit, f.backup >= 0 ? "back at the copy of step" : "no copy: at step", f.step);
    } else {
        check(s, "train", wf_model_error(m));
    }
    if (!losses) printf("done: step %d, %.1f s of training, loss %.3f, val %.3f\n", f.step, f.seconds, f.loss, f.val_loss);

    if (out) { /* the model, its tokenizer and its run: a program that loads it can go on with it */
        uint8_t *bytes;
        int32_t n;
        check(wf_model_save(m, tok, WF_SAVE_OPTIMIZER, &bytes, &n), "save", wf_model_error(m));
        FILE *fo = fopen(out, "wb");
        if (!fo || fwrite(bytes, 1, (size_t)n, fo) != (size_t)n || fclose(fo)) return fprintf(stderr, "train: cannot write %s\n", out), 1;
        wf_buffer_free(bytes);
        printf("saved %s (%d bytes)\n", out, n);
    }
    wf_model_free(m);
    wf_tokenizer_free(tok);
    free(ids);
    free(text);
    return s == WF_OK ? 0 : 3;
}
