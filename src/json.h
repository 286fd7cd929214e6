/* JSON for the file formats (config.json, the safetensors header): a strict parser into a
 * flat node array, hardened against hostile input (every read bounded, nesting at most 64
 * deep, numbers read without the C library's locale), and the little a writer needs. */
#ifndef WF_JSON_H
#define WF_JSON_H

#include "internal.h"

enum { WF_J_NULL, WF_J_BOOL, WF_J_NUM, WF_J_STR, WF_J_ARR, WF_J_OBJ };

typedef struct {
    int type;
    int32_t first, next; /* children of arrays and objects, in order; -1 ends */
    int32_t key;         /* an object member's key (a WF_J_STR node), else -1 */
    size_t start, len;   /* WF_J_STR: the raw bytes between the quotes; WF_J_NUM: the number's text */
    int has_escape;
    int boolean;
    double num;
    int is_int;          /* WF_J_NUM without fraction or exponent, |value| < 10^18: ival is exact */
    int64_t ival;
} wf_jnode;

typedef struct {
    const char *s;
    size_t n, pos;
    wf_jnode *nodes;
    int32_t count, cap;
    const char *what; /* "config.json", "the safetensors header" */
    char *msg;
    size_t msg_cap;
    wf_status status;
} wf_json;


/* Parses s[0, n) as one JSON value into j (nodes[0] is the root; free j->nodes); on
 * failure the message, naming `what` and the byte, is in msg. */
wf_status wf_json_parse(wf_json *j, const char *s, size_t n, const char *what, char *msg, size_t cap);
/* String node x decoded into buf (NUL-terminated); its length, or -1 if cap is too small (buf then holds
 * the characters that fit, NUL-terminated, when cap > 0). */
int32_t wf_json_str(const wf_json *j, int32_t x, char *buf, size_t cap);
/* Node x is the string lit. */
int wf_json_is(const wf_json *j, int32_t x, const char *lit);
/* The member of object obj named key: its node, -1 if absent, -2 if it appears twice. */
int32_t wf_json_get(const wf_json *j, int32_t obj, const char *key);
/* A JSON number's text as a double (and, for integers below 10^18, exactly as *ival). */
double wf_json_decimal(const char *s, size_t n, int64_t *ival, int *is_int);

/* Text into a fixed buffer; overflow is remembered instead of written. */
typedef struct {
    char *p;
    size_t n, cap;
    int overflow;
} wf_text;
void wf_text_put(wf_text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Bytes s[0, n), valid UTF-8, as a JSON string (quotes, backslash and control characters
 * escaped as JSON.stringify does); 0, nothing written, when s is not valid UTF-8. */
int wf_text_string(wf_text *t, const char *s, size_t n);
/* A float as the shortest decimal that reads back as the same float, '.' whatever the C
 * locale's decimal separator. */
void wf_json_float(char *buf, size_t cap, float v);

#endif /* WF_JSON_H */
