/* UTF-8 and the Unicode classes the pre-tokenizers test (tokenizer.h). The class tables are
 * generated from Node's regular expressions by scripts/gen-unicode.mjs. */
#include "unicode.h"
#include "unicode_tables.h"

#define REPLACEMENT 0xFFFDu

int wf_utf8_next(const uint8_t *s, size_t len, uint32_t *cp) {
    uint8_t c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t n;
    uint32_t v, min;
    if (c >= 0xC2 && c <= 0xDF) { n = 2; v = c & 0x1F; min = 0x80; }
    else if (c >= 0xE0 && c <= 0xEF) { n = 3; v = c & 0x0F; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { n = 4; v = c & 0x07; min = 0x10000; }
    else { *cp = REPLACEMENT; return 1; }
    if (len < n) { *cp = REPLACEMENT; return 1; }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) { *cp = REPLACEMENT; return 1; }
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > WF_MAX_CODEPOINT || (v >= 0xD800 && v <= 0xDFFF)) { *cp = REPLACEMENT; return 1; }
    *cp = v;
    return (int)n;
}

int wf_utf8_put(uint32_t cp, uint8_t *o) {
    if (cp < 0x80) { o[0] = (uint8_t)cp; return 1; }
    if (cp < 0x800) { o[0] = (uint8_t)(0xC0 | (cp >> 6)); o[1] = (uint8_t)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (uint8_t)(0xE0 | (cp >> 12)); o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F)); o[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (uint8_t)(0xF0 | (cp >> 18)); o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

static int in_ranges(const uint32_t (*r)[2], int n, uint32_t cp) {
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (cp < r[mid][0]) hi = mid - 1;
        else if (cp > r[mid][1]) lo = mid + 1;
        else return 1;
    }
    return 0;
}

int wf_utf8_valid(const uint8_t *s, size_t len) {
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        const int k = wf_utf8_next(s + i, len - i, &cp);
        /* U+FFFD read from anything but its own three bytes: a byte that starts no sequence */
        if (cp == REPLACEMENT && (k != 3 || memcmp(s + i, "\xEF\xBF\xBD", 3) != 0)) return 0;
        i += (size_t)k;
    }
    return 1;
}

int wf_uni_class(uint32_t cp) {
    if (cp < 0x80) {
        if ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') return WF_UNI_L;
        if (cp >= '0' && cp <= '9') return WF_UNI_N;
        return cp == ' ' || (cp >= '\t' && cp <= '\r') ? WF_UNI_S : 0;
    }
    return (in_ranges(WF_UNI_LETTER, WF_UNI_LETTER_N, cp) ? WF_UNI_L : 0) |
           (in_ranges(WF_UNI_NUMBER, WF_UNI_NUMBER_N, cp) ? WF_UNI_N : 0) |
           (in_ranges(WF_UNI_SPACE, WF_UNI_SPACE_N, cp) ? WF_UNI_S : 0);
}
