/* Writes the fuzz targets' seed corpora (tests/fuzz/corpus/<target>/): small valid inputs
 * of every kind each loader reads, so fuzzing starts from deep inside the formats. The
 * named seeds came from this program; run it from the repository root to remake them:
 *   build/native/fuzz_make_seeds tests/fuzz/corpus
 * The files named by their SHA-1 are what the long fuzzing runs added (libFuzzer -merge=1:
 * the smallest set keeping their coverage); ctest replays all of them. */
#include "fuzz.h"
#include "tokenizer.h"

static const char *root;

static void write_file(const char *target, const char *name, const void *a, size_t na, const void *b, size_t nb) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/%s", root, target, name);
    FILE *f = fopen(path, "wb");
    REQUIRE(f, "cannot write %s (does the folder exist?)", path);
    fwrite(a, 1, na, f);
    if (nb) fwrite(b, 1, nb, f);
    fclose(f);
}

static const char TEXT[] = "It is a truth universally acknowledged, that a single man in possession of a good fortune";

/* A tiny model of each architecture and block variant the formats must carry. */
static wf_model *model_of(int variant) {
    wf_config c = fuzz_small_config();
    switch (variant) {
    case 1: c.tied_head = 0; c.activation = WF_ACT_RELU; break;                       /* GPT-2, untied */
    case 2: c.norm = WF_NORM_RMSNORM; c.activation = WF_ACT_SWIGLU; c.positions = WF_POS_ROPE;
            c.bias = 0; c.tied_head = 0; break;                                         /* Llama */
    case 3: c.arch = WF_ARCH_ENCODER; c.block = WF_BLOCK_POST_LN; c.positions = WF_POS_SINUSOIDAL; break;
    case 4: c.arch = WF_ARCH_ENCODER_DECODER; c.n_enc_layer = 1; c.max_beam = 2; c.dropout = 0.1f; break;
    case 5: c.positions = WF_POS_ROPE; c.dropout = 0.1f; break;                       /* GPT-NeoX */
    default: break;                                                                    /* GPT-2, tied */
    }
    wf_model *m = wf_model_create();
    REQUIRE(m && wf_model_init(m, &c) == WF_OK, "variant %d: %s", variant, wf_model_error(m));
    if (c.arch == WF_ARCH_DECODER) {
        int32_t in[4] = {1, 2, 3, 4}, tg[4] = {2, 3, 4, 5};
        REQUIRE(step_ids(m, in, tg, 1, 4, NULL) == WF_OK, "step: %s", wf_model_error(m)); /* non-zero moments */
    }
    return m;
}

int main(int argc, char **argv) {
    root = argc > 1 ? argv[1] : "tests/fuzz/corpus";
    wf_tokenizer *chr = wf_tokenizer_create(), *bpe = wf_tokenizer_create();
    REQUIRE(wf_tokenizer_train(chr, WF_TOKENIZER_CHAR, "abcdefg", 7, 0) == WF_OK, "char");
    REQUIRE(wf_tokenizer_train(bpe, WF_TOKENIZER_BPE, TEXT, (int32_t)strlen(TEXT), 264) == WF_OK, "bpe");

    for (int v = 0; v < 6; v++) {
        wf_model *m = model_of(v);
        char name[64];
        uint8_t *buf;
        int32_t n;
        /* checkpoints: with and without optimizer state, with a char or BPE tokenizer or none */
        for (int k = 0; k < 3; k++) {
            wf_tokenizer *t = k == 0 ? NULL : k == 1 ? chr : bpe;
            if (t && tok_info(t).vocab_size > 8) t = NULL; /* the BPE has 264 tokens; the models 8 */
            int flags = k == 2 ? 0 : WF_SAVE_OPTIMIZER;
            REQUIRE(wf_model_save(m, t, flags, &buf, &n) == WF_OK, "save: %s", wf_model_error(m));
            snprintf(name, sizeof name, "variant%d_%s.wf", v, k == 0 ? "opt" : k == 1 ? "opt_char" : "noopt");
            write_file("checkpoint", name, buf, (size_t)n, NULL, 0);
            wf_buffer_free(buf);
        }
        /* safetensors: u16 config length, config.json, the file */
        uint8_t *st;
        char *cfg;
        int32_t nst, ncfg;
        REQUIRE(wf_model_export_safetensors(m, &st, &nst, &cfg, &ncfg) == WF_OK, "export: %s", wf_model_error(m));
        REQUIRE(ncfg < 65536, "config.json too long");
        uint8_t len[2] = {(uint8_t)(ncfg & 0xFF), (uint8_t)(ncfg >> 8)};
        uint8_t *joined = malloc(2 + (size_t)ncfg);
        memcpy(joined, len, 2);
        memcpy(joined + 2, cfg, (size_t)ncfg);
        snprintf(name, sizeof name, "variant%d.st", v);
        write_file("safetensors", name, joined, 2 + (size_t)ncfg, st, (size_t)nst);
        free(joined);
        wf_buffer_free(st);
        wf_buffer_free(cfg);
        wf_model_free(m);
    }

    /* LoRA (issue 15): checkpoints of adapters on a frozen base, one with the head
     * unfrozen too (a TRAN section either way); PEFT adapters of every target set, on the
     * Llama-, GPT-2- and GPT-NeoX-shaped bases of fuzz_peft.c: a byte (0 Llama, 1 GPT-2, 2
     * GPT-NeoX), u16 config length, adapter_config.json, adapter_model.safetensors */
    static const int targets[] = {127, 1 | 4, 8 | 16 | 64, 2};
    for (int v = 0; v < 3; v++) {
        for (size_t t = 0; t < sizeof targets / sizeof *targets; t++) {
            const int llama = v == 0;
            if (!llama && (targets[t] & 32)) continue;
            if (v == 2 && t == 0) continue; /* the GPT-2 base's set of 127 (all but up) is seed enough */
            wf_model *m = model_of(llama ? 2 : v == 1 ? 0 : 5);
            wf_config c;
            wf_model_get_config(m, &c);
            c.lora_rank = 2;
            c.lora_alpha = 3;
            c.lora_targets = llama ? targets[t] : targets[t] & ~32;
            REQUIRE(wf_model_set_config(m, &c, 0) == WF_OK, "lora: %s", wf_model_error(m));
            int32_t in[4] = {1, 2, 3, 4}, tg[4] = {2, 3, 4, 5};
            REQUIRE(step_ids(m, in, tg, 1, 4, NULL) == WF_OK, "step: %s", wf_model_error(m));
            char name[64];
            uint8_t *st;
            char *cfg;
            int32_t nst, ncfg;
            REQUIRE(wf_model_export_peft(m, NULL, &st, &nst, &cfg, &ncfg) == WF_OK, "export: %s", wf_model_error(m));
            uint8_t head[3] = {(uint8_t)v, (uint8_t)(ncfg & 0xFF), (uint8_t)(ncfg >> 8)};
            uint8_t *joined = malloc(3 + (size_t)ncfg);
            memcpy(joined, head, 3);
            memcpy(joined + 3, cfg, (size_t)ncfg);
            snprintf(name, sizeof name, "%s_targets%d.peft", llama ? "llama" : v == 1 ? "gpt2" : "gpt_neox", c.lora_targets);
            write_file("peft", name, joined, 3 + (size_t)ncfg, st, (size_t)nst);
            free(joined);
            wf_buffer_free(st);
            wf_buffer_free(cfg);
            if (t == 0) {
                uint8_t *buf;
                int32_t n;
                REQUIRE(wf_model_save(m, NULL, WF_SAVE_OPTIMIZER, &buf, &n) == WF_OK, "save: %s", wf_model_error(m));
                snprintf(name, sizeof name, "lora_%s_opt.wf", llama ? "llama" : "gpt2");
                write_file("checkpoint", name, buf, (size_t)n, NULL, 0);
                wf_buffer_free(buf);
            }
            wf_model_free(m);
        }
    }

    /* a checkpoint with a training run in it (its RUNS section), paused after two steps */
    {
        wf_model *m = model_of(0);
        int32_t tokens[64];
        for (int i = 0; i < 64; i++) tokens[i] = i % 5;
        wf_run r;
        wf_preset(NULL, NULL, NULL, &r);
        r.steps = 10, r.batch_size = 2, r.context = 4, r.eval_interval = 2, r.eval_batches = 1, r.val_fraction = 0.25f;
        wf_run_facts f;
        uint8_t *buf;
        int32_t n;
        REQUIRE(wf_model_run_begin(m, &r, 0, tokens, 64) == WF_OK, "run: %s", wf_model_error(m));
        REQUIRE(wf_model_run(m, NULL, 2, 0, &f) == WF_OK, "run: %s", wf_model_error(m));
        REQUIRE(wf_model_save(m, chr, WF_SAVE_OPTIMIZER, &buf, &n) == WF_OK, "save: %s", wf_model_error(m));
        write_file("checkpoint", "run_opt_char.wf", buf, (size_t)n, NULL, 0);
        wf_buffer_free(buf);
        wf_model_free(m);
    }

    /* a checkpoint with a BPE tokenizer needs a vocabulary of at least its 264 tokens */
    {
        wf_config c = fuzz_small_config();
        c.vocab_size = 264;
        wf_model *m = wf_model_create();
        uint8_t *buf;
        int32_t n;
        REQUIRE(m && wf_model_init(m, &c) == WF_OK, "bpe model");
        REQUIRE(wf_model_save(m, bpe, 0, &buf, &n) == WF_OK, "save: %s", wf_model_error(m));
        write_file("checkpoint", "bpe_noopt.wf", buf, (size_t)n, NULL, 0);
        wf_buffer_free(buf);
        wf_model_free(m);
    }

    /* tokenizer files */
    uint8_t *buf;
    int32_t n;
    REQUIRE(wf_tokenizer_save(chr, 0, &buf, &n) == WF_OK, "save char");
    write_file("tokenizer", "char.wft", buf, (size_t)n, NULL, 0);
    wf_buffer_free(buf);
    REQUIRE(wf_tokenizer_save(bpe, 0, &buf, &n) == WF_OK, "save bpe");
    write_file("tokenizer", "bpe.wft", buf, (size_t)n, NULL, 0);
    wf_buffer_free(buf);

    /* training text: two bytes of vocabulary size, then the text */
    static const struct { const char *name; const char *text; } texts[] = {
        {"english.txt", "\x08\x00" "It is a truth universally acknowledged, that a single man in possession"},
        {"utf8.txt", "\x40\x00" "na\xc3\xafve caf\xc3\xa9 \xe2\x82\xac 5 \xf0\x9f\x98\x80 \xe6\x97\xa5\xe6\x9c\xac"},
        {"invalid_utf8.txt", "\x10\x00" "ab\xff\xfe\xc3\x28 \xed\xa0\x80 \xc0\xaf \xf4\x90\x80\x80 end"},
        {"repeats.txt", "\xff\x03" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaabababababababababab"},
        {"one_char.txt", "\x00\x00" "x"},
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
        write_file("bpe", texts[i].name, texts[i].text, 2 + strlen(texts[i].text + 2), NULL, 0);
    /* tokenizer.json: two of the fixtures, wasmformer's BPE and char tokenizers, and small ones of each component */
    static const char *const fixtures[] = {"gpt2.json", "llama.json"};
    for (size_t i = 0; i < 2; i++) {
        char path[256];
        snprintf(path, sizeof path, "tests/fixtures/tokenizers/%s", fixtures[i]);
        FILE *fp = fopen(path, "rb");
        REQUIRE(fp, "cannot read %s (run from the repository root)", path);
        static uint8_t file[1 << 17];
        const size_t got = fread(file, 1, sizeof file, fp);
        fclose(fp);
        write_file("tokjson", fixtures[i], file, got, NULL, 0);
    }
    uint8_t *js;
    REQUIRE(wf_tokenizer_save(bpe, WF_SAVE_JSON, &js, &n) == WF_OK, "bpe json");
    write_file("tokjson", "wasmformer_bpe.json", js, (size_t)n, NULL, 0);
    wf_buffer_free(js);
    REQUIRE(wf_tokenizer_save(chr, WF_SAVE_JSON, &js, &n) == WF_OK, "char json");
    write_file("tokjson", "wasmformer_char.json", js, (size_t)n, NULL, 0);
    wf_buffer_free(js);
    static const struct { const char *name; const char *json; } mini[] = {
        {"mini_sentencepiece.json",
         "{\"added_tokens\": [{\"id\": 0, \"content\": \"<unk>\", \"normalized\": false, \"special\": true},"
         " {\"id\": 1, \"content\": \"<s>\", \"normalized\": false, \"special\": true}],"
         " \"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\", \"prepend\": \"\u2581\"},"
         " {\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"\u2581\"}]},"
         " \"pre_tokenizer\": null, \"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<s>\"}},"
         " {\"Sequence\": {\"id\": \"A\"}}], \"special_tokens\": {\"<s>\": {\"id\": \"<s>\", \"ids\": [1], \"tokens\": [\"<s>\"]}}},"
         " \"decoder\": {\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Replace\", \"pattern\": {\"String\": \"\u2581\"}, \"content\": \" \"},"
         " {\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"}, {\"type\": \"Strip\", \"content\": \" \", \"start\": 1, \"stop\": 0}]},"
         " \"model\": {\"type\": \"BPE\", \"unk_token\": \"<unk>\", \"fuse_unk\": true, \"byte_fallback\": true,"
         " \"vocab\": {\"<unk>\": 0, \"<s>\": 1, \"<0x41>\": 2, \"<0xC3>\": 3, \"<0xA9>\": 4, \"\u2581\": 5, \"a\": 6, \"b\": 7,"
         " \"\u2581a\": 8, \"ab\": 9, \"\u2581ab\": 10}, \"merges\": [\"\u2581 a\", \"a b\", \"\u2581a b\"]}}"},
        {"mini_bytelevel.json",
         "{\"added_tokens\": [{\"id\": 258, \"content\": \"<|end|>\", \"special\": true, \"normalized\": true}],"
         " \"normalizer\": null, \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Digits\","
         " \"individual_digits\": true}, {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": true}]},"
         " \"decoder\": {\"type\": \"ByteLevel\"}, \"model\": {\"type\": \"BPE\", \"ignore_merges\": true, \"vocab\": {BYTES,"
         " \"\u0120t\": 256, \"\u0120th\": 257}, \"merges\": [[\"\u0120\", \"t\"], [\"\u0120t\", \"h\"]]}}"},
        {"mini_metaspace.json",
         "{\"pre_tokenizer\": {\"type\": \"Metaspace\", \"replacement\": \"\u2581\", \"prepend_scheme\": \"first\", \"split\": false},"
         " \"decoder\": {\"type\": \"Metaspace\", \"replacement\": \"\u2581\", \"prepend_scheme\": \"first\"},"
         " \"model\": {\"type\": \"BPE\", \"unk_token\": \"?\", \"vocab\": {\"?\": 0, \"\u2581\": 1, \"x\": 2, \"\u2581x\": 3},"
         " \"merges\": [\"\u2581 x\"]}}"},
        {"mini_split.json",
         "{\"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"Regex\":"
         " \"'s|'t|'re|'ve|'m|'ll|'d| ?\\\\p{L}+| ?\\\\p{N}+| ?[^\\\\s\\\\p{L}\\\\p{N}]+|\\\\s+(?!\\\\S)|\\\\s+\"}, \"behavior\": \"Isolated\","
         " \"invert\": false}, {\"type\": \"ByteLevel\", \"use_regex\": false}]}, \"decoder\": null,"
         " \"model\": {\"type\": \"BPE\", \"vocab\": {BYTES}, \"merges\": []}}"},
    };
    /* BYTES: the 256 byte-level characters as ids 0..255 */
    char bytes_json[256 * 16], *at = bytes_json;
    for (int b = 0; b < 256; b++) {
        uint8_t c[2];
        int k = wf_byte_char((uint8_t)b, c);
        at += sprintf(at, "%s\"", b ? ", " : "");
        if (c[0] == '"' || c[0] == '\\') *at++ = '\\';
        memcpy(at, c, (size_t)k);
        at += k;
        at += sprintf(at, "\": %d", b);
    }
    static char seed[1 << 14];
    for (size_t i = 0; i < sizeof mini / sizeof *mini; i++) {
        const char *src = mini[i].json, *hole = strstr(src, "BYTES");
        size_t len = hole ? (size_t)snprintf(seed, sizeof seed, "%.*s%s%s", (int)(hole - src), src, bytes_json, hole + 5)
                          : (size_t)snprintf(seed, sizeof seed, "%s", src);
        wf_tokenizer *t = wf_tokenizer_create();
        REQUIRE(t && wf_tokenizer_load(t, (const uint8_t *)seed, (int32_t)len) == WF_OK, "%s: %s", mini[i].name, wf_tokenizer_error(t));
        write_file("tokjson", mini[i].name, seed, len, NULL, 0);
        if (i == 0) { /* as a .wft too (kind 3) */
            REQUIRE(wf_tokenizer_save(t, 0, &buf, &n) == WF_OK, "save");
            write_file("tokenizer", "tokenizer_json.wft", buf, (size_t)n, NULL, 0);
            wf_buffer_free(buf);
        }
        wf_tokenizer_free(t);
    }

    /* tokenizer.bin: the fixture, and a small one (the 3 specials, 256 byte tokens, pieces) */
    {
        FILE *fp = fopen("tests/fixtures/tokenizers/llama2c_tok.bin", "rb");
        REQUIRE(fp, "cannot read the llama2.c tokenizer fixture");
        static uint8_t file[1 << 16];
        const size_t got = fread(file, 1, sizeof file, fp);
        fclose(fp);
        write_file("tokbin", "llama2c_tok.bin", file, got, NULL, 0);
        static const char *const pieces[] = {"<unk>", "\n<s>\n", "\n</s>\n"};
        static const char *const more[] = {" ", "t", "h", "e", "th", "he", " t", " the", "\xc3\xa9"};
        static uint8_t small[8192];
        wf_writer w = {small, 0};
        wf_put_u32(&w, 8);
        for (int i = 0; i < 3 + 256 + 9; i++) {
            char p[16];
            const char *piece = i < 3 ? pieces[i] : i < 259 ? (snprintf(p, sizeof p, "<0x%02X>", i - 3), p) : more[i - 259];
            const float score = i < 259 ? 0.0f : -(float)(i - 259);
            uint32_t bits;
            memcpy(&bits, &score, 4);
            wf_put_u32(&w, bits);
            wf_put_u32(&w, (uint32_t)strlen(piece));
            wf_put(&w, piece, strlen(piece));
        }
        wf_tokenizer *t = wf_tokenizer_create();
        REQUIRE(t && wf_tokenizer_load(t, small, (int32_t)w.off) == WF_OK, "small tokenizer.bin: %s", wf_tokenizer_error(t));
        write_file("tokbin", "small.bin", small, w.off, NULL, 0);
        REQUIRE(wf_tokenizer_save(t, 0, &buf, &n) == WF_OK, "save");
        write_file("tokenizer", "llama2c.wft", buf, (size_t)n, NULL, 0);
        wf_buffer_free(buf);
        wf_tokenizer_free(t);
    }
    wf_tokenizer_free(chr);
    wf_tokenizer_free(bpe);
    printf("seeds written under %s\n", root);
    return 0;
}
