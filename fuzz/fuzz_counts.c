/*
 * fuzz_counts: the gamma-rice/1 decoder against arbitrary strings, and the
 * encoder against arbitrary counters. Byte 0 picks the mode. Decoding (even
 * byte 0): bytes 1-8 are the total (little-endian, its top bit cleared, as a
 * file's total fits in int64), the rest the string. Whatever it is, reading
 * stays inside it and ends; a string that is accepted yields counters in
 * strictly ascending order below HIST_COUNTS, each of 1 or more, adding up to
 * the total, at most one per 2 bits, and written again it decodes to the same
 * counters in at most three times its room (4 characters of padding aside:
 * an escape read for a small count, 17 bits at the least, is written as its
 * Rice code, at most 48).
 * Encoding (odd byte 0): each 4 bytes more give a step (1 + the first two,
 * mod 64) and a count (1 + the next two shifted left by the low 6 bits of
 * byte 0 less one, while the total fits in int64): the string decodes to the
 * same counters.
 */
/* fuzz: also src/evidence/counts_code.c src/util.c */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/counts_code.h"
#include "hist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* text (len bytes) with total: its counters into out (room for cap), their number, or -1. */
static long decode(const char *text, size_t len, uint64_t total, struct hist_pair *out, size_t cap)
{
    struct counts_reader r;
    struct hb_err err;
    struct hist_pair p;
    size_t n = 0;
    int rc;

    if (counts_reader_init(&r, text, len, total, &err) < 0) return -1;
    while ((rc = counts_reader_next(&r, &p, &err)) == 1) {
        assert(n < cap);
        out[n++] = p;
    }
    return rc < 0 ? -1 : (long)n;
}

static void check_decoded(const struct hist_pair *v, size_t n, uint64_t total, size_t len)
{
    uint64_t sum = 0;

    assert(n <= len * 6 / 2);
    for (size_t i = 0; i < n; i++) {
        assert(v[i].idx < HIST_COUNTS && (i == 0 || v[i].idx > v[i - 1].idx));
        assert(v[i].count >= 1);
        sum += v[i].count;
    }
    assert(sum == total);
}

/* encoded again, the counters come back the same */
static void check_again(const struct hist_pair *v, size_t n, uint64_t total, size_t len)
{
    char *again = counts_encode(v, n);
    size_t again_len = strlen(again);
    struct hist_pair *back = calloc(n + 1, sizeof(*back));

    assert(back != NULL);
    assert(len == 0 || again_len <= 3 * len + 4);
    assert(decode(again, again_len, total, back, n + 1) == (long)n);
    for (size_t i = 0; i < n; i++)
        assert(back[i].idx == v[i].idx && back[i].count == v[i].count);
    free(back);
    free(again);
}

static void fuzz_decode(const uint8_t *data, size_t size)
{
    uint64_t total = 0;
    const char *text = (const char *)data + 8;
    size_t len = size - 8;
    static struct hist_pair v[HIST_COUNTS];
    long n;

    for (int i = 7; i >= 0; i--)
        total = total << 8 | data[i];
    total &= INT64_MAX;
    n = decode(text, len, total, v, HIST_COUNTS);
    if (n >= 0) {
        check_decoded(v, (size_t)n, total, len);
        check_again(v, (size_t)n, total, len);
    }
}

static void fuzz_encode(uint8_t mode, const uint8_t *data, size_t size)
{
    size_t cap = size / 4, n = 0;
    struct hist_pair *v = calloc(cap + 1, sizeof(*v));
    uint64_t idx = 0, total = 0;

    assert(v != NULL);
    for (size_t i = 0; i + 4 <= size; i += 4) {
        uint64_t step = 1 + ((data[i] | (unsigned)data[i + 1] << 8) % 64);
        uint64_t count = 1 + ((data[i + 2] | (uint64_t)data[i + 3] << 8) << (mode & 63));
        if (idx + step > HIST_COUNTS || count == 0 || count > (uint64_t)INT64_MAX - total) break;
        idx += step;
        total += count;
        v[n++] = (struct hist_pair){ .idx = (uint32_t)(idx - 1), .count = count };
    }
    check_again(v, n, total, 0);
    free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    if (data[0] & 1)
        fuzz_encode(data[0] >> 1, data + 1, size - 1);
    else if (size >= 9)
        fuzz_decode(data + 1, size - 1);
    return 0;
}
