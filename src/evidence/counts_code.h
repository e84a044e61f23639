/*
 * counts_code: a histogram's non-zero counters as one base64 string, the
 * "gamma-rice/1" encoding of the evidence (docs/evidence.md). The counters go
 * in ascending index order, each as two codes in one bit stream, most
 * significant bit first: the step from the previous counter's index (the
 * first counter's from -1) in Elias gamma, then the count less one in a Rice
 * code whose parameter follows a running mean of the counts before it, with
 * an escape to Elias gamma for a count far above that mean. The stream is
 * padded with zero bits to a whole byte and written as base64 (RFC 4648, with
 * '=' padding). It holds no length: a reader stops where the counts add up
 * to the histogram's total. Pure code: no JSON, no IO, no globals.
 */
#ifndef HOPBENCH_EVIDENCE_COUNTS_CODE_H
#define HOPBENCH_EVIDENCE_COUNTS_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define COUNTS_ENCODING "gamma-rice/1"

/* One counter of a histogram: its index and what it holds. */
struct hist_pair {
    uint32_t idx;
    uint64_t count;
};

/*
 * The n counters of pairs, indices strictly ascending and below HIST_COUNTS,
 * counts 1 or more, as a new NUL-terminated base64 string that the caller
 * frees ("" for n = 0). Exits on OOM, as setup-time allocation does; a pair
 * out of order or of count 0 is a caller's bug (asserted).
 */
char *counts_encode(const struct hist_pair *pairs, size_t n);

/* len bytes of buf as a new NUL-terminated base64 string (RFC 4648, '=' padding); exits on OOM. */
char *base64_text(const uint8_t *buf, size_t len);

/* Reads the counters of one encoded string, one at a time. */
struct counts_reader {
    const char *text;
    size_t nbits;         /* bits of the stream: its bytes times 8 */
    size_t pos;           /* the next bit to read */
    uint64_t total, left; /* the counts to read, and those not read yet */
    size_t n;             /* counters read */
    int64_t prev;         /* the last counter's index, -1 before the first */
    uint64_t trend;       /* the Rice parameter's running sum */
};

/*
 * Starts reading text (len bytes, canonical base64: a multiple of 4, '='
 * only as its last one or two, the bits past the stream 0) whose counts
 * must add up to total. Returns 0, or -EINVAL with err set.
 */
int counts_reader_init(struct counts_reader *r, const char *text, size_t len, uint64_t total,
                       struct hb_err *err);

/*
 * The next counter into *out: returns 1, or 0 once the counts read add up to
 * the total and only the zero padding of the last byte is left, or -EINVAL
 * with err set (an index past the last counter, counts that pass the total
 * or end before it, bits after the last counter). At most nbits / 2 counters
 * come out: each takes 2 bits at the least.
 */
int counts_reader_next(struct counts_reader *r, struct hist_pair *out, struct hb_err *err);

#endif
