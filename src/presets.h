/* The presets: named configs and their recipes, one row each, the only place they are
 * written. wf_preset reads them; scripts/config_table.c prints them for the JavaScript
 * package (src/js/config-table.js), whose createModel, command line and page offer them.
 * Each sets, over the config rows' defaults (which are tiny's shape), its shape and
 * positions, and a recipe: the optimizer's lr, beta2 and Muon, and the run's batch size and
 * length in steps (the page's and the command line's default run).
 *   micro  the smallest: the command line's and the page's default, the time-to-quality
 *          bench's winner (bench/ttq/RESULTS.md), Muon, beta2 0.99 and RoPE its recipe
 *   tiny   the speed benchmark's config A, with micro's optimizer recipe
 *   baby   config B, plain AdamW */
#ifndef WF_PRESETS_H
#define WF_PRESETS_H

/* P(name, n_layer, n_head, d_model, d_ff, context, positions, batch_size, lr, beta2, muon, steps) */
#define WF_PRESETS(P)                                                        \
    P(micro, 2, 4, 64, 256, 64, WF_POS_ROPE, 16, 3e-3f, 0.99f, 1, 1000)     \
    P(tiny, 4, 4, 128, 512, 64, WF_POS_LEARNED, 8, 2e-3f, 0.99f, 1, 2000)   \
    P(baby, 6, 6, 384, 1536, 256, WF_POS_LEARNED, 4, 1e-3f, 0.95f, 0, 2000)

#endif /* WF_PRESETS_H */
