/*
 * test_hdr: HdrHistogram's formats of a struct hist (report/hdr.c). The
 * percentile distribution's lines, footer and rounding (half up from the
 * shortest decimal form, as Java's Formatter: 0.0045 is 0.005 though printf
 * gives 0.004); the V2 compressed encoding taken apart by hand here: base64,
 * the outer cookie and length, zlib's inflate, the inner header's fields, and
 * the ZigZag LEB128 counters, zero runs as negative lengths, added back up to
 * the histogram recorded.
 */
/* cmocka.h needs these four first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "report/hdr.h"

static char *percentiles_of(const struct hist *h, double ratio)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    hdr_percentiles(f, h, ratio);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void test_percentiles(void **state)
{
    struct hist *h = hist_new();
    char *text;

    (void)state;
    for (uint64_t v = 1; v <= 100; v++)
        hist_record(h, v * 1000); /* 1 us .. 100 us */
    text = percentiles_of(h, 1000.0);
    assert_true(strncmp(text,
                        "       Value     Percentile TotalCount 1/(1-Percentile)\n\n"
                        "       1.000 0.000000000000          1           1.00\n"
                        "      10.007 0.100000000000         10           1.11\n",
                        160) == 0);
    /* the median: 50 us is in a counter 8 ns wide, reported as its top */
    assert_non_null(strstr(text, "\n      50.015 0.500000000000         50           2.00\n"));
    /* the last line: 100 %, no 1/(1-Percentile) */
    assert_non_null(strstr(text, "\n     100.031 1.000000000000        100\n#[Mean    = "));
    assert_non_null(strstr(text, "#[Max     =      100.031, Total count    =          100]\n"));
    assert_non_null(strstr(text, "#[Buckets =           26, SubBuckets     =         2048]\n"));
    free(text);

    /* 45 / 10000 is 0.0045, below it in binary (printf: 0.004): half up from "0.0045", as Java */
    hist_init(h);
    hist_record(h, 45);
    text = percentiles_of(h, 10000.0);
    assert_non_null(strstr(text, "\n       0.005 0.000000000000          1           1.00\n"));
    free(text);

    /* empty: the header and the footer only */
    hist_init(h);
    text = percentiles_of(h, 1000.0);
    assert_string_equal(text, "       Value     Percentile TotalCount 1/(1-Percentile)\n\n"
                              "#[Mean    =        0.000, StdDeviation   =        0.000]\n"
                              "#[Max     =        0.000, Total count    =            0]\n"
                              "#[Buckets =           26, SubBuckets     =         2048]\n");
    free(text);
    hist_free(h);
}

static uint64_t be(const unsigned char *p, int n)
{
    uint64_t v = 0;

    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* The counters of a V2 payload, added into counts (as a reader of the format would). */
static size_t read_counts(const unsigned char *p, size_t len, uint64_t *counts)
{
    size_t at = 0, idx = 0;

    while (at < len) {
        uint64_t z = 0;
        int64_t v;
        for (unsigned shift = 0, i = 0;; i++, shift += 7) {
            unsigned char b = p[at++];
            if (i == 8) { /* the ninth byte holds 8 bits */
                z |= (uint64_t)b << 56;
                break;
            }
            z |= (uint64_t)(b & 0x7f) << shift;
            if ((b & 0x80) == 0) break;
        }
        v = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
        if (v < 0)
            idx += (size_t)-v; /* a run of zeros */
        else
            counts[idx++] = (uint64_t)v;
    }
    return idx;
}

static void test_v2(void **state)
{
    static const uint64_t values[] = { 1,    2,    2,      1023,      1024,       2047,
                                       2048, 4097, 123456, 999999999, HIST_MAX_NS };
    struct hist *h = hist_new();
    uint64_t *counts = calloc(HIST_COUNTS, sizeof(*counts));
    unsigned char *raw, *inner;
    uLongf inner_len = 1 << 20;
    char *text;
    int n;
    double ratio;
    uint64_t bits;

    (void)state;
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
        hist_record(h, values[i]);
    for (int k = 0; k < 300; k++) /* a large count: several LEB128 bytes */
        hist_record(h, 50000);
    h->counts[hist_index(50000)] += 70000000000ULL;
    h->total += 70000000000ULL;
    text = hdr_v2_base64(h);
    assert_non_null(text);
    assert_true(strncmp(text, "HISTF", 5) == 0); /* what HdrHistogram's logs hold */
    raw = malloc(strlen(text));
    inner = malloc(inner_len);
    n = EVP_DecodeBlock(raw, (const unsigned char *)text, (int)strlen(text));
    assert_true(n > 8);
    assert_int_equal(be(raw, 4), 0x1c849314);
    assert_int_equal(uncompress(inner, &inner_len, raw + 8, (uLong)be(raw + 4, 4)), Z_OK);
    assert_int_equal(be(inner, 4), 0x1c849313);
    assert_int_equal(be(inner + 4, 4), inner_len - 40);
    assert_int_equal(be(inner + 8, 4), 0); /* normalizing index offset */
    assert_int_equal(be(inner + 12, 4), 3);
    assert_int_equal(be(inner + 16, 8), 1);
    assert_int_equal(be(inner + 24, 8), HIST_MAX_NS);
    bits = be(inner + 32, 8);
    memcpy(&ratio, &bits, sizeof(ratio));
    assert_true(ratio == 1.0);
    /* up to the maximum's counter, every counter as recorded */
    assert_int_equal(read_counts(inner + 40, inner_len - 40, counts), hist_index(h->max) + 1);
    assert_memory_equal(counts, h->counts, HIST_COUNTS * sizeof(*counts));
    free(text);
    free(raw);
    free(inner);
    free(counts);
    hist_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percentiles),
        cmocka_unit_test(test_v2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
