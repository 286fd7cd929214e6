/* JSON for the file formats (json.h). */
#include <stdio.h>
#include <stdlib.h>

#include "json.h"
#include "unicode.h"

#define MAX_DEPTH 64

static int32_t j_fail(wf_json *j, wf_status s, const char *why) {
    if (j->status == WF_OK) {
        j->status = s;
        wf_fail(j->msg, j->msg_cap, s, "%s: %s at byte %zu", j->what, why, j->pos);
    }
    return -1;
}

static int32_t j_node(wf_json *j, int type) {
    if (j->count == j->cap) {
        /* every node consumes at least one input byte, so count <= n + 1 */
        int64_t c = j->cap ? 2 * (int64_t)j->cap : 64;
        if (c > (int64_t)j->n + 1) c = (int64_t)j->n + 1;
        if (c > INT32_MAX || c <= j->cap) return j_fail(j, WF_ERR_FORMAT, "too many values");
        wf_jnode *p = wf_realloc_n(j->nodes, (size_t)c, sizeof(wf_jnode)); /* ~56 bytes each: wraps in wasm past 76M */
        if (!p) return j_fail(j, WF_ERR_NOMEM, "out of memory");
        j->nodes = p;
        j->cap = (int32_t)c;
    }
    wf_jnode *x = &j->nodes[j->count];
    memset(x, 0, sizeof *x);
    x->type = type;
    x->first = x->next = x->key = -1;
    return j->count++;
}

static void j_ws(wf_json *j) {
    while (j->pos < j->n && (j->s[j->pos] == ' ' || j->s[j->pos] == '\t' || j->s[j->pos] == '\n' || j->s[j->pos] == '\r'))
        j->pos++;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int32_t j_string(wf_json *j) {
    int32_t x = j_node(j, WF_J_STR);
    if (x < 0) return -1;
    j->pos++; /* the opening quote */
    size_t start = j->pos;
    int esc = 0;
    for (;;) {
        if (j->pos >= j->n) return j_fail(j, WF_ERR_FORMAT, "unterminated string");
        unsigned char c = (unsigned char)j->s[j->pos];
        if (c == '"') break;
        if (c < 0x20) return j_fail(j, WF_ERR_FORMAT, "control character in a string");
        if (c == '\\') {
            esc = 1;
            if (j->pos + 1 >= j->n) return j_fail(j, WF_ERR_FORMAT, "unterminated escape");
            char e = j->s[j->pos + 1];
            if (e == 'u') {
                if (j->pos + 5 >= j->n) return j_fail(j, WF_ERR_FORMAT, "short \\u escape");
                for (int k = 2; k < 6; k++)
                    if (hexval(j->s[j->pos + k]) < 0) return j_fail(j, WF_ERR_FORMAT, "bad \\u escape");
                j->pos += 6;
                continue;
            }
            if (!strchr("\"\\/bfnrt", e) || e == 0) return j_fail(j, WF_ERR_FORMAT, "bad escape");
            j->pos += 2;
            continue;
        }
        j->pos++;
    }
    wf_jnode *n = &j->nodes[x];
    n->start = start;
    n->len = j->pos - start;
    n->has_escape = esc;
    j->pos++; /* the closing quote */
    return x;
}

/* A JSON number's value without the C library (strtod follows the locale's decimal
 * separator): exact when the digits fit a double and the power of ten is exact, as in
 * every number a config holds; otherwise within a few ulps. */
double wf_json_decimal(const char *s, size_t n, int64_t *ival, int *is_int) {
    static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    size_t i = 0;
    int neg = 0, digits = 0;
    uint64_t mant = 0;
    int64_t e10 = 0;
    if (i < n && s[i] == '-') { neg = 1; i++; }
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        if (digits < 19) { mant = mant * 10 + (uint64_t)(s[i] - '0'); if (mant) digits++; }
        else e10++;
    }
    *is_int = 1;
    if (i < n && s[i] == '.') {
        *is_int = 0;
        for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
            if (digits < 19) { mant = mant * 10 + (uint64_t)(s[i] - '0'); if (mant) digits++; e10--; }
        }
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        *is_int = 0;
        i++;
        int eneg = 0;
        int64_t e = 0;
        if (i < n && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) if (e < 100000) e = e * 10 + (s[i] - '0');
        e10 += eneg ? -e : e;
    }
    if (*is_int) {
        *is_int = e10 == 0 && digits <= 18;
        *ival = neg ? -(int64_t)mant : (int64_t)mant;
    }
    double v;
    if (mant == 0) v = 0;
    else if (mant < (1ULL << 53) && e10 >= -22 && e10 <= 22) v = e10 >= 0 ? (double)mant * p10[e10] : (double)mant / p10[-e10];
    else if (e10 > 400) v = HUGE_VAL;
    else if (e10 < -400) v = 0;
    else v = (double)mant * pow(10.0, (double)e10);
    return neg ? -v : v;
}

static int32_t j_number(wf_json *j) {
    int32_t x = j_node(j, WF_J_NUM);
    if (x < 0) return -1;
    const char *s = j->s;
    size_t i = j->pos, n = j->n;
    if (i < n && s[i] == '-') i++;
    if (i >= n || s[i] < '0' || s[i] > '9') return j_fail(j, WF_ERR_FORMAT, "bad number");
    if (s[i] == '0') i++;
    else while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || s[i] < '0' || s[i] > '9') return j_fail(j, WF_ERR_FORMAT, "bad number");
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        if (i >= n || s[i] < '0' || s[i] > '9') return j_fail(j, WF_ERR_FORMAT, "bad number");
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    }
    wf_jnode *node = &j->nodes[x];
    node->start = j->pos;
    node->len = i - j->pos;
    node->num = wf_json_decimal(s + j->pos, i - j->pos, &node->ival, &node->is_int);
    j->pos = i;
    return x;
}

static int j_literal(wf_json *j, const char *word) {
    size_t k = strlen(word);
    if (j->n - j->pos < k || memcmp(j->s + j->pos, word, k) != 0) return 0;
    j->pos += k;
    return 1;
}

static int32_t j_value(wf_json *j, int depth);

/* Arrays and objects; children are linked in order. */
static int32_t j_container(wf_json *j, int depth, int obj) {
    if (depth >= MAX_DEPTH) return j_fail(j, WF_ERR_FORMAT, "nested too deeply");
    int32_t x = j_node(j, obj ? WF_J_OBJ : WF_J_ARR);
    if (x < 0) return -1;
    j->pos++;
    j_ws(j);
    int32_t last = -1;
    if (j->pos < j->n && j->s[j->pos] == (obj ? '}' : ']')) {
        j->pos++;
        return x;
    }
    for (;;) {
        int32_t key = -1;
        if (obj) {
            j_ws(j);
            if (j->pos >= j->n || j->s[j->pos] != '"') return j_fail(j, WF_ERR_FORMAT, "expected a string key");
            if ((key = j_string(j)) < 0) return -1;
            j_ws(j);
            if (j->pos >= j->n || j->s[j->pos] != ':') return j_fail(j, WF_ERR_FORMAT, "expected ':'");
            j->pos++;
        }
        int32_t v = j_value(j, depth + 1);
        if (v < 0) return -1;
        j->nodes[v].key = key;
        if (last < 0) j->nodes[x].first = v;
        else j->nodes[last].next = v;
        last = v;
        j_ws(j);
        if (j->pos >= j->n) return j_fail(j, WF_ERR_FORMAT, "unterminated array or object");
        char c = j->s[j->pos++];
        if (c == ',') continue;
        if (c == (obj ? '}' : ']')) return x;
        j->pos--;
        return j_fail(j, WF_ERR_FORMAT, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int32_t j_value(wf_json *j, int depth) {
    j_ws(j);
    if (j->pos >= j->n) return j_fail(j, WF_ERR_FORMAT, "expected a value");
    char c = j->s[j->pos];
    if (c == '{') return j_container(j, depth, 1);
    if (c == '[') return j_container(j, depth, 0);
    if (c == '"') return j_string(j);
    if (c == '-' || (c >= '0' && c <= '9')) return j_number(j);
    int32_t x;
    int truth = j_literal(j, "true");
    if (truth || j_literal(j, "false")) {
        if ((x = j_node(j, WF_J_BOOL)) >= 0) j->nodes[x].boolean = truth;
        return x;
    }
    if (j_literal(j, "null")) return j_node(j, WF_J_NULL);
    return j_fail(j, WF_ERR_FORMAT, "expected a value");
}

/* Parses s[0, n) as one JSON value; on failure the message is in msg. */
wf_status wf_json_parse(wf_json *j, const char *s, size_t n, const char *what, char *msg, size_t cap) {
    memset(j, 0, sizeof *j);
    j->s = s;
    j->n = n;
    j->what = what;
    j->msg = msg;
    j->msg_cap = cap;
    if (j_value(j, 0) >= 0) {
        j_ws(j);
        if (j->pos != j->n) j_fail(j, WF_ERR_FORMAT, "text after the value");
    }
    return j->status;
}

/* String node x decoded into buf (NUL-terminated); its length, or -1 if cap is too small. */
int32_t wf_json_str(const wf_json *j, int32_t x, char *buf, size_t cap) {
    const wf_jnode *n = &j->nodes[x];
    const char *s = j->s + n->start;
    size_t o = 0;
    for (size_t i = 0; i < n->len;) {
        char tmp[4];
        size_t k = 1;
        if (s[i] != '\\') {
            tmp[0] = s[i++];
        } else if (s[i + 1] != 'u') {
            static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            tmp[0] = to[strchr(from, s[i + 1]) - from];
            i += 2;
        } else {
            uint32_t cp = 0;
            for (int d = 2; d < 6; d++) cp = cp * 16 + (uint32_t)hexval(s[i + d]);
            i += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF && i + 5 < n->len && s[i] == '\\' && s[i + 1] == 'u') {
                uint32_t lo = 0;
                for (int d = 2; d < 6; d++) lo = lo * 16 + (uint32_t)hexval(s[i + d]);
                if (lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                }
            }
            if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD; /* a lone surrogate */
            if (cp < 0x80) { tmp[0] = (char)cp; k = 1; }
            else if (cp < 0x800) { tmp[0] = (char)(0xC0 | cp >> 6); tmp[1] = (char)(0x80 | (cp & 0x3F)); k = 2; }
            else if (cp < 0x10000) { tmp[0] = (char)(0xE0 | cp >> 12); tmp[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); tmp[2] = (char)(0x80 | (cp & 0x3F)); k = 3; }
            else { tmp[0] = (char)(0xF0 | cp >> 18); tmp[1] = (char)(0x80 | ((cp >> 12) & 0x3F)); tmp[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); tmp[3] = (char)(0x80 | (cp & 0x3F)); k = 4; }
        }
        if (o + k + 1 > cap) {
            if (cap) buf[o] = 0; /* what fits, terminated: a message may still show it */
            return -1;
        }
        memcpy(buf + o, tmp, k);
        o += k;
    }
    buf[o] = 0;
    return (int32_t)o;
}

int wf_json_is(const wf_json *j, int32_t x, const char *lit) {
    char buf[256];
    return j->nodes[x].type == WF_J_STR && wf_json_str(j, x, buf, sizeof buf) >= 0 && !strcmp(buf, lit);
}

/* The member of object obj named key: its node, -1 if absent, -2 if it appears twice. */
int32_t wf_json_get(const wf_json *j, int32_t obj, const char *key) {
    int32_t found = -1;
    for (int32_t c = j->nodes[obj].first; c >= 0; c = j->nodes[c].next) {
        if (wf_json_is(j, j->nodes[c].key, key)) {
            if (found >= 0) return -2;
            found = c;
        }
    }
    return found;
}


/* ---- writing ---- */

/* A float as the shortest decimal that reads back as the same float, with '.' whatever
 * the C locale's decimal separator. */
void wf_json_float(char *buf, size_t cap, float v) {
    for (int prec = 6; prec <= 9; prec++) {
        snprintf(buf, cap, "%.*g", prec, (double)v);
        for (char *p = buf; *p; p++)
            if (!strchr("0123456789+-eE", *p)) *p = '.';
        int64_t iv;
        int is_int;
        if ((float)wf_json_decimal(buf, strlen(buf), &iv, &is_int) == v) return;
    }
}


void wf_text_put(wf_text *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->p + t->n, t->cap - t->n, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= t->cap - t->n) t->overflow = 1;
    else t->n += (size_t)k;
}

int wf_text_string(wf_text *t, const char *s, size_t n) {
    const uint8_t *u = (const uint8_t *)s;
    if (!wf_utf8_valid(u, n)) return 0;
    wf_text_put(t, "\"");
    for (size_t i = 0; i < n; i++) {
        const char c = s[i], *short_form = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\b' ? "\\b" : c == '\f' ? "\\f"
                                      : c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
        if (short_form) wf_text_put(t, "%s", short_form);
        else if (u[i] < 0x20) wf_text_put(t, "\\u%04x", u[i]);
        else wf_text_put(t, "%c", c);
    }
    wf_text_put(t, "\"");
    return 1;
}
