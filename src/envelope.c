/* The envelope both wasmformer files share (envelope.h). Errors name what is wrong and where,
 * for a user holding a damaged file. */
#include <stdlib.h>

#include "envelope.h"

size_t wf_envelope_begin(wf_writer *w, const char *magic, uint32_t version, uint32_t word) {
    size_t start = w->off;
    wf_put(w, magic, 4);
    wf_put_u32(w, version);
    wf_put_u32(w, word);
    wf_put_u32(w, 0);
    wf_put_u64(w, 0);
    return start;
}

void wf_envelope_end(wf_writer *w, size_t start) {
    wf_patch_u64(w, start + 16, (uint64_t)(w->off + WF_ENVELOPE_CRC - start));
    uint32_t crc = w->p ? wf_crc32(w->p + start, w->off - start) : 0;
    wf_put_u32(w, crc);
}

wf_status wf_envelope_open(const uint8_t *data, size_t n, const char *magic, uint32_t version, const char *what,
                           wf_reader *body, uint32_t *word, char *msg, size_t cap) {
    if (n < WF_ENVELOPE_HEADER + WF_ENVELOPE_CRC)
        FAIL(WF_ERR_FORMAT, "the %s is %zu bytes; even an empty one has %d (truncated?)", what, n,
             WF_ENVELOPE_HEADER + WF_ENVELOPE_CRC);
    if (memcmp(data, magic, 4) != 0) {
        if (!memcmp(data, "WFCK", 4) || !memcmp(data, "WFTK", 4))
            FAIL(WF_ERR_FORMAT, "this is a wasmformer %s, not a %s", data[2] == 'C' ? "checkpoint" : "tokenizer file", what);
        FAIL(WF_ERR_FORMAT, "not a wasmformer %s: the first bytes are not \"%s\"", what, magic);
    }
    wf_reader r = wf_reader_of(data, n);
    wf_take(&r, 4);
    uint32_t v = wf_get_u32(&r);
    if (v != version) FAIL(WF_ERR_UNSUPPORTED, "the %s has format version %u; this build reads version %u", what, v, version);
    *word = wf_get_u32(&r);
    uint32_t reserved = wf_get_u32(&r);
    uint64_t len = wf_get_u64(&r);
    if (len != n)
        FAIL(WF_ERR_FORMAT, "the %s says it is %llu bytes long but %zu bytes were given (truncated or padded)", what,
             (unsigned long long)len, n);
    uint32_t stored = wf_le32(data + n - WF_ENVELOPE_CRC), actual = wf_crc32(data, n - WF_ENVELOPE_CRC);
    if (stored != actual)
        FAIL(WF_ERR_FORMAT, "the %s is damaged: its bytes have the CRC-32 0x%08x, its checksum says 0x%08x", what, actual, stored);
    if (reserved != 0) FAIL(WF_ERR_FORMAT, "the %s's reserved header field is %u, not 0", what, reserved);
    *body = wf_reader_of(data + WF_ENVELOPE_HEADER, n - WF_ENVELOPE_HEADER - WF_ENVELOPE_CRC);
    return WF_OK;
}

int wf_envelope_is_ours(const uint8_t *data, size_t n) { return n >= 2 && data[0] == 'W' && data[1] == 'F'; }

wf_status wf_envelope_buffer(size_t bytes, uint8_t **out, int32_t *n, char *msg, size_t cap) {
    if (bytes > INT32_MAX) FAIL(WF_ERR_UNSUPPORTED, "the file would be %.2f GB; at most 2 GB can be written", bytes / 1e9);
    *out = malloc(bytes);
    if (!*out) FAIL(WF_ERR_NOMEM, "could not allocate %.1f MB for the file", bytes / 1e6);
    *n = (int32_t)bytes;
    return WF_OK;
}
