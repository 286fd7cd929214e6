/* wasmformer's byte-level BPE and its char tokenizer written as Hugging Face tokenizer.json
 * files that the tokenizers libraries encode alike (docs/FORMATS.md): the BPE's chunks become
 * two Split patterns over byte-level characters (the reader, tokjson.c, knows them back); the
 * char tokenizer is a BPE without merges over no pre-tokenizer. And any tokenizer.json a
 * tokenizer keeps, for wf_tokenizer_save's WF_SAVE_JSON. */
#include <stdio.h>
#include <stdlib.h>

#include "tokenizer.h"

/* ---- wasmformer's chunks (bpe.c) as two Split patterns over byte-level characters ----
 * After ByteLevel (use_regex false) every byte is one character, so a pattern can name
 * bytes: the byte classes become character classes, and the cut at 64 bytes is a count of
 * characters; the cut backs up over continuation bytes (0x80..0xBF) as bpe.c does. */

enum { B_LETTER, B_DIGIT, B_SPACE, B_PUNCT, B_NSPACE, B_CONT }; /* B_NSPACE: \t..\r; B_CONT: 0x80..0xBF */

static int in_class(int b, int cls) {
    const int letter = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || b >= 0x80;
    const int digit = b >= '0' && b <= '9', space = b == ' ' || (b >= '\t' && b <= '\r');
    switch (cls) {
    case B_LETTER: return letter;
    case B_DIGIT: return digit;
    case B_SPACE: return space;
    case B_PUNCT: return !letter && !digit && !space;
    case B_NSPACE: return b >= '\t' && b <= '\r';
    default: return b >= 0x80 && b <= 0xBF;
    }
}

typedef struct {
    char *p; /* NULL: count only */
    size_t n;
} jw;

/* Counting saturates at SIZE_MAX, which the size checks then refuse. */
static void jw_put(jw *w, const char *s, size_t k) {
    if (w->p) memcpy(w->p + w->n, s, k);
    if (!wf_add_ok(w->n, k, &w->n)) w->n = SIZE_MAX;
}
static void jw_str(jw *w, const char *s) { jw_put(w, s, strlen(s)); }

/* A code point in a pattern's character class: ASCII that classes treat specially escaped. */
static void class_char(jw *w, uint32_t cp) {
    uint8_t u[4];
    if (cp < 0x80 && strchr("[]\\^-", (int)cp)) jw_put(w, "\\", 1);
    jw_put(w, (const char *)u, (size_t)wf_utf8_put(cp, u));
}

/* "[...]" (negate: "[^...]") of the byte-level characters of the bytes of a class, as ranges. */
static void class_of_bytes(jw *w, int cls, int negate) {
    uint32_t cps[256];
    int n = 0;
    for (int b = 0; b < 256; b++) {
        if (!in_class(b, cls)) continue;
        uint8_t c[2];
        uint32_t cp;
        wf_utf8_next(c, (size_t)wf_byte_char((uint8_t)b, c), &cp);
        int i = n++;
        while (i > 0 && cps[i - 1] > cp) { cps[i] = cps[i - 1]; i--; }
        cps[i] = cp;
    }
    jw_str(w, negate ? "[^" : "[");
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && cps[j + 1] == cps[j] + 1) j++;
        class_char(w, cps[i]);
        if (j > i) {
            if (j > i + 1) jw_put(w, "-", 1);
            class_char(w, cps[j]);
        }
        i = j + 1;
    }
    jw_put(w, "]", 1);
}

/* bpe.c's chunks: " ?" + a run of one class, or whitespace (its last space left to a word). */
static void chunks_pattern(jw *w) {
    static const int runs[3] = {B_LETTER, B_DIGIT, B_PUNCT};
    uint8_t sp[2];
    const size_t k = (size_t)wf_byte_char(' ', sp);
    for (int r = 0; r < 3; r++) {
        jw_put(w, (const char *)sp, k);
        jw_put(w, "?", 1);
        class_of_bytes(w, runs[r], 0);
        jw_str(w, "+|");
    }
    class_of_bytes(w, B_SPACE, 0);
    jw_put(w, "*", 1);
    class_of_bytes(w, B_NSPACE, 0);
    jw_str(w, "(?!");
    class_of_bytes(w, B_SPACE, 0);
    jw_str(w, ")|");
    class_of_bytes(w, B_SPACE, 0);
    jw_str(w, "+(?!");
    class_of_bytes(w, B_SPACE, 1);
    jw_put(w, ")", 1);
}

/* The cut of a chunk longer than 64 bytes: at 64, or at the character start among bytes
 * 61..63 when byte 64 continues a character, or at 64 when 61..64 all do. */
static void cut_pattern(jw *w) {
    for (int back = 0; back < 4; back++) {
        char head[32];
        snprintf(head, sizeof head, ".{%d}(?=", 64 - back);
        jw_str(w, head);
        class_of_bytes(w, B_CONT, 1);
        for (int i = 0; i < back; i++) class_of_bytes(w, B_CONT, 0);
        jw_str(w, ")|");
    }
    jw_str(w, ".{61}(?=");
    for (int i = 0; i < 4; i++) class_of_bytes(w, B_CONT, 0);
    jw_str(w, ").{3}");
}

/* One of the two patterns, NUL-terminated, in a new buffer (NULL: out of memory). */
char *wf_tokjson_pattern(int cut) {
    jw w = {NULL, 0};
    if (cut) cut_pattern(&w);
    else chunks_pattern(&w);
    char *p = malloc(w.n + 1);
    if (!p) return NULL;
    w = (jw){p, 0};
    if (cut) cut_pattern(&w);
    else chunks_pattern(&w);
    p[w.n] = 0;
    return p;
}

/* ---- writing wasmformer's BPE ---- */

static void jw_json_str(jw *w, const uint8_t *s, size_t n) {
    jw_put(w, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"' || s[i] == '\\') {
            char e[2] = {'\\', (char)s[i]};
            jw_put(w, e, 2);
        } else if (s[i] < 0x20) {
            char e[8];
            snprintf(e, sizeof e, "\\u%04x", s[i]);
            jw_put(w, e, 6);
        } else {
            jw_put(w, (const char *)s + i, 1);
        }
    }
    jw_put(w, "\"", 1);
}

/* A token's bytes as its byte-level string. */
static void jw_token(jw *w, const wf_bpe *b, int32_t id, uint8_t *tmp) {
    size_t k = 0;
    for (uint32_t i = b->tok_off[id]; i < b->tok_off[id + 1]; i++) k += (size_t)wf_byte_char(b->bytes[i], tmp + k);
    jw_json_str(w, tmp, k);
}

static void write_bpe(jw *w, const wf_bpe *b, const char *chunks, const char *cut) {
    static const char byte_level[] = "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": false, \"use_regex\": false}";
    uint8_t tmp[2 * WF_BPE_MAX_CHUNK];
    jw_str(w, "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n  \"added_tokens\": [],\n"
              "  \"normalizer\": null,\n  \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [\n    ");
    jw_str(w, byte_level);
    for (int k = 0; k < 2; k++) {
        jw_str(w, ",\n    {\"type\": \"Split\", \"pattern\": {\"Regex\": ");
        jw_json_str(w, (const uint8_t *)(k ? cut : chunks), strlen(k ? cut : chunks));
        jw_str(w, "}, \"behavior\": \"Isolated\", \"invert\": false}");
    }
    jw_str(w, "]},\n  \"post_processor\": null,\n  \"decoder\": ");
    jw_str(w, byte_level);
    jw_str(w, ",\n  \"model\": {\"type\": \"BPE\", \"dropout\": null, \"unk_token\": null, \"continuing_subword_prefix\": null, "
              "\"end_of_word_suffix\": null, \"fuse_unk\": false, \"byte_fallback\": false, \"ignore_merges\": false,\n    \"vocab\": {");
    const int32_t V = 256 + b->n_merges;
    for (int32_t id = 0; id < V; id++) {
        char num[24];
        jw_str(w, id ? ",\n      " : "\n      ");
        jw_token(w, b, id, tmp);
        snprintf(num, sizeof num, ": %d", id);
        jw_str(w, num);
    }
    jw_str(w, "},\n    \"merges\": [");
    for (int32_t k = 0; k < b->n_merges; k++) {
        jw_str(w, k ? ",\n      " : "\n      ");
        /* "left right": byte-level strings never hold a space */
        size_t n = 0;
        for (int part = 0; part < 2; part++) {
            const int32_t t = b->merges[2 * k + part];
            for (uint32_t i = b->tok_off[t]; i < b->tok_off[t + 1]; i++) n += (size_t)wf_byte_char(b->bytes[i], tmp + n);
            if (!part) tmp[n++] = ' ';
        }
        jw_json_str(w, tmp, n);
    }
    jw_str(w, "]}\n}\n");
}

wf_status wf_tokjson_write_bpe(const wf_bpe *b, char **out, int32_t *n, char *msg, size_t cap) {
    const int32_t V = 256 + b->n_merges;
    /* Hugging Face maps each string to one id: two tokens of the same bytes cannot be written */
    uint32_t mask = wf_table_slots((size_t)V); /* V <= 2^20 */
    int32_t *slot = wf_malloc_n(mask, sizeof(int32_t));
    if (!slot) FAIL(WF_ERR_NOMEM, "out of memory writing tokenizer.json");
    memset(slot, 0xFF, mask * sizeof(int32_t)); /* wf_malloc_n checked the product */
    mask--;
    for (int32_t id = 0; id < V; id++) {
        const uint8_t *s = b->bytes + b->tok_off[id];
        const uint32_t len = b->tok_off[id + 1] - b->tok_off[id];
        uint32_t h = 2166136261u;
        for (uint32_t i = 0; i < len; i++) h = (h ^ s[i]) * 16777619u;
        for (h &= mask; slot[h] >= 0; h = (h + 1) & mask) {
            const int32_t o = slot[h];
            if (b->tok_off[o + 1] - b->tok_off[o] == len && !memcmp(b->bytes + b->tok_off[o], s, len)) {
                free(slot);
                FAIL(WF_ERR_UNSUPPORTED, "tokens %d and %d are the same %u bytes (two merges made them); a tokenizer.json "
                     "maps each string to one id, so this BPE has no tokenizer.json form (its .wft file keeps it)", o, id, len);
            }
        }
        slot[h] = id;
    }
    free(slot);
    char *chunks = wf_tokjson_pattern(0), *cut = wf_tokjson_pattern(1);
    if (!chunks || !cut) {
        free(chunks);
        free(cut);
        FAIL(WF_ERR_NOMEM, "out of memory writing tokenizer.json");
    }
    jw w = {NULL, 0};
    write_bpe(&w, b, chunks, cut);
    if (w.n >= INT32_MAX) {
        free(chunks);
        free(cut);
        FAIL(WF_ERR_UNSUPPORTED, "the tokenizer.json would be %.2f GB; at most 2 GB can be written", w.n / 1e9);
    }
    *out = malloc(w.n + 1);
    if (!*out) {
        free(chunks);
        free(cut);
        FAIL(WF_ERR_NOMEM, "could not allocate %.1f MB for tokenizer.json", w.n / 1e6);
    }
    w = (jw){*out, 0};
    write_bpe(&w, b, chunks, cut);
    (*out)[w.n] = 0;
    *n = (int32_t)w.n;
    free(chunks);
    free(cut);
    return WF_OK;
}

/* ---- writing the char tokenizer ----
 * A BPE model without merges splits its one word (no pre-tokenizer: the whole text) into
 * code points and looks each up: the vocabulary's id, or unk_token for the rest, id 0, each
 * unknown code point on its own (fuse_unk false), as ours. Decoding joins the tokens (Fuse)
 * after turning "<unk>" into U+FFFD, which ours decodes it to; "<unk>" is not an added token,
 * so text that spells it is read character by character, as ours reads it. */
static void write_char(jw *w, const wf_tokenizer *t) {
    jw_str(w, "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n  \"added_tokens\": [],\n"
              "  \"normalizer\": null,\n  \"pre_tokenizer\": null,\n  \"post_processor\": null,\n"
              "  \"decoder\": {\"type\": \"Sequence\", \"decoders\": [\n    {\"type\": \"Replace\", \"pattern\": {\"String\": \"<unk>\"}, "
              "\"content\": \"\\ufffd\"},\n    {\"type\": \"Fuse\"}]},\n"
              "  \"model\": {\"type\": \"BPE\", \"dropout\": null, \"unk_token\": \"<unk>\", \"continuing_subword_prefix\": null, "
              "\"end_of_word_suffix\": null, \"fuse_unk\": false, \"byte_fallback\": false, \"ignore_merges\": false,\n"
              "    \"vocab\": {\n      \"<unk>\": 0");
    for (int32_t i = 0; i < t->n_chars; i++) {
        uint8_t u[4];
        char num[24];
        jw_str(w, ",\n      ");
        jw_json_str(w, u, (size_t)wf_utf8_put(t->chars[i], u));
        snprintf(num, sizeof num, ": %d", i + 1);
        jw_str(w, num);
    }
    jw_str(w, "},\n    \"merges\": []}\n}\n");
}

/* ---- a tokenizer as a tokenizer.json (wf_tokenizer_save's WF_SAVE_JSON) ---- */

wf_status wf_tokjson_save(wf_tokenizer *t, uint8_t **out, int32_t *n) {
    if (t->kind == WF_TOKENIZER_CHAR) {
        jw w = {NULL, 0};
        write_char(&w, t); /* at most 32 bytes a code point: far below 2 GB */
        if (!(*out = malloc(w.n + 1))) return TOK_ERR(t, WF_ERR_NOMEM, "out of memory saving tokenizer.json");
        w = (jw){(char *)*out, 0};
        write_char(&w, t);
        (*out)[w.n] = 0;
        *n = (int32_t)w.n;
        t->err[0] = 0;
        return WF_OK;
    }
    if (t->kind == WF_TOKENIZER_LLAMA2C)
        return TOK_ERR(t, WF_ERR_UNSUPPORTED, "a llama2.c tokenizer has no tokenizer.json form (its merges follow scores, "
                       "not ranks); save it as a tokenizer file (.wft)");
    if (t->kind == WF_TOKENIZER_BPE) {
        char *text = NULL;
        wf_status s = wf_tokjson_write_bpe(&t->bpe, &text, n, t->err, sizeof t->err);
        *out = (uint8_t *)text;
        if (s == WF_OK) t->err[0] = 0;
        return s;
    }
    if (!(*out = malloc((size_t)t->voc.src_n + 1))) return TOK_ERR(t, WF_ERR_NOMEM, "out of memory saving tokenizer.json");
    memcpy(*out, t->voc.src, (size_t)t->voc.src_n);
    (*out)[t->voc.src_n] = 0;
    *n = t->voc.src_n;
    t->err[0] = 0;
    return WF_OK;
}
