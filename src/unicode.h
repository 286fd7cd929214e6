/* UTF-8 and the Unicode classes the pre-tokenizers test (unicode.c; its tables are
 * unicode_tables.h, written by scripts/gen-unicode.mjs). */
#ifndef WF_UNICODE_H
#define WF_UNICODE_H

#include "internal.h"

#define WF_MAX_CODEPOINT 0x10FFFFu

enum { WF_UNI_L = 1, WF_UNI_N = 2, WF_UNI_S = 4 }; /* \p{L}, \p{N}, White_Space */
/* One code point at s[0, len), len >= 1, into *cp; returns the bytes read (>= 1). A byte
 * that does not start a valid sequence reads alone, as U+FFFD. */
int wf_utf8_next(const uint8_t *s, size_t len, uint32_t *cp);
int wf_utf8_put(uint32_t cp, uint8_t *out);
int wf_utf8_valid(const uint8_t *s, size_t len); /* 1: s[0, len) is UTF-8 throughout */
int wf_uni_class(uint32_t cp);

#endif /* WF_UNICODE_H */
