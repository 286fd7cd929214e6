/* The envelope of wasmformer's own files, the checkpoint (.wf, checkpoint.c) and the tokenizer
 * file (.wft, tokfile.c): a 24-byte header (magic, version, a word of the kind's, reserved 0,
 * the file's length), the payload, and a CRC-32 of every byte before it (docs/FORMATS.md). */
#ifndef WF_ENVELOPE_H
#define WF_ENVELOPE_H

#include "bytes.h"
#include "internal.h"

#define WF_ENVELOPE_HEADER 24 /* magic, version, word, reserved, u64 length */
#define WF_ENVELOPE_CRC 4

/* Writes a header whose length wf_envelope_end patches; returns where the file starts. */
size_t wf_envelope_begin(wf_writer *w, const char *magic, uint32_t version, uint32_t word);
/* Patches the total length and appends the CRC-32 of everything from start. */
void wf_envelope_end(wf_writer *w, size_t start);
/* Checks magic, version, the length in the header against the n bytes at hand and the
 * checksum (what names the file in messages). On success *body reads the payload and *word
 * is the header's third field. */
wf_status wf_envelope_open(const uint8_t *data, size_t n, const char *magic, uint32_t version, const char *what,
                           wf_reader *body, uint32_t *word, char *msg, size_t cap);
/* Whether the bytes begin as a wasmformer file does ("WF", then the kind's two letters). */
int wf_envelope_is_ours(const uint8_t *data, size_t n);
/* A file is written twice: a counting pass sizes it (a wf_writer without a buffer), then this
 * allocates the caller's buffer of that size (at most 2 GB) for the writing pass. */
wf_status wf_envelope_buffer(size_t bytes, uint8_t **out, int32_t *n, char *msg, size_t cap);

#endif /* WF_ENVELOPE_H */
