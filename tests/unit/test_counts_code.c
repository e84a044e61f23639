/*
 * test_counts_code: the gamma-rice/1 encoding of a histogram's counters.
 * Encoding then decoding gives the same counters, for no counter, one, the
 * first and the last index, every counter at once, counts of 1 up to 2^64 - 1
 * and counts that jump far above the running mean (the escape) and back; two
 * hand-worked strings pin the bit layout docs/evidence.md gives; and a string
 * that is not canonical base64, ends early, passes its total or the last
 * index, or has bits after its last counter is refused with a message.
 */
/* cmocka.h needs these four first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/counts_code.h"
#include "hist.h"

#define SEED 0x9e3779b97f4a7c15ULL

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dULL;
}

/* Decodes text whose counts add up to total into pairs (room for cap); their number, or -1. */
static long decode(const char *text, uint64_t total, struct hist_pair *pairs, size_t cap,
                   struct hb_err *err)
{
    struct counts_reader r;
    size_t n = 0;
    int rc;

    if (counts_reader_init(&r, text, strlen(text), total, err) < 0) return -1;
    while ((rc = counts_reader_next(&r, &pairs[n < cap ? n : cap - 1], err)) == 1)
        n++;
    return rc < 0 || n > cap ? -1 : (long)n;
}

/* pairs encoded and decoded are the same pairs, and the string is canonical base64. */
static void assert_round_trip(const struct hist_pair *pairs, size_t n)
{
    char *text = counts_encode(pairs, n);
    struct hist_pair *back = calloc(n + 1, sizeof(*back));
    struct hb_err err = { 0 };
    uint64_t total = 0;
    long got;

    assert_non_null(back);
    for (size_t i = 0; i < n; i++)
        total += pairs[i].count;
    assert_int_equal(strlen(text) % 4, 0);
    got = decode(text, total, back, n + 1, &err);
    if (got < 0) fail_msg("refused: %s", err.msg);
    assert_int_equal(got, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(back[i].idx, pairs[i].idx);
        assert_int_equal(back[i].count, pairs[i].count);
    }
    free(back);
    free(text);
}

static void test_edge_cases(void **state)
{
    const struct hist_pair one[] = { { 0, 1 } };
    const struct hist_pair last[] = { { HIST_COUNTS - 1, 1 } };
    const struct hist_pair both_ends[] = { { 0, 7 }, { HIST_COUNTS - 1, 3 } };
    const struct hist_pair huge[] = { { 5, UINT64_MAX - 1 }, { HIST_COUNTS - 1, 1 } };
    const struct hist_pair max[] = { { 100, UINT64_MAX } };
    /* far above the mean, back to 1, far above again: the escape both ways */
    const struct hist_pair jumps[] = { { 10, 1 },
                                       { 11, 1 },
                                       { 12, 1ULL << 40 },
                                       { 13, 1 },
                                       { 14, 1ULL << 20 },
                                       { 20, 16 },
                                       { 21, 17 },
                                       { 22, (1ULL << 33) + 5 },
                                       { 30000 % HIST_COUNTS, 2 } };

    (void)state;
    assert_round_trip(NULL, 0);
    assert_round_trip(one, 1);
    assert_round_trip(last, 1);
    assert_round_trip(both_ends, 2);
    assert_round_trip(huge, 2);
    assert_round_trip(max, 1);
    assert_round_trip(jumps, sizeof(jumps) / sizeof(jumps[0]));
}

/* Every counter at once, and random spreads of counts, sparse and dense. */
static void test_many_counters(void **state)
{
    struct hist_pair *pairs = calloc(HIST_COUNTS, sizeof(*pairs));
    uint64_t s = SEED;

    (void)state;
    assert_non_null(pairs);
    for (size_t i = 0; i < HIST_COUNTS; i++)
        pairs[i] = (struct hist_pair){ .idx = (uint32_t)i, .count = 1 + i % 300 };
    assert_round_trip(pairs, HIST_COUNTS);
    for (int round = 0; round < 50; round++) {
        size_t n = 0;
        /* counts below 2^49: n of them add up within 2^64 */
        unsigned shift = 15 + (unsigned)(rng_next(&s) % 49);
        for (size_t i = 0; i < HIST_COUNTS; i++) {
            if (rng_next(&s) % (1 + round) != 0) continue;
            pairs[n++] =
                (struct hist_pair){ .idx = (uint32_t)i, .count = 1 + (rng_next(&s) >> shift) };
        }
        assert_round_trip(pairs, n);
    }
    free(pairs);
}

/*
 * By hand: counter 0 holding 1 is gamma(1) = 1, then rice(0, k 0) = 0: bits
 * 10, a byte 0x80, "gA==". Counters 5 holding 3 and 6 holding 1: gamma(6) =
 * 00110, rice(2, k 0) = 110; the running sum is then 2, k still 0: gamma(1) =
 * 1, rice(0) = 0; bits 0011011010, bytes 0x36 0x80, "NoA=".
 */
static void test_known_strings(void **state)
{
    const struct hist_pair a[] = { { 0, 1 } }, b[] = { { 5, 3 }, { 6, 1 } };
    char *ta = counts_encode(a, 1), *tb = counts_encode(b, 2), *none = counts_encode(NULL, 0);

    (void)state;
    assert_string_equal(ta, "gA==");
    assert_string_equal(tb, "NoA=");
    assert_string_equal(none, "");
    free(ta);
    free(tb);
    free(none);
}

/* text with total must be refused, with a message that contains want. */
static void assert_refused(const char *text, uint64_t total, const char *want)
{
    struct hist_pair pairs[64];
    struct hb_err err = { 0 };

    assert_int_equal(decode(text, total, pairs, 64, &err), -1);
    if (strstr(err.msg, want) == NULL)
        fail_msg("'%s': message '%s' lacks '%s'", text, err.msg, want);
}

static void test_refusals(void **state)
{
    const struct hist_pair b[] = { { 5, 3 }, { 6, 1 } };
    const struct hist_pair last[] = { { HIST_COUNTS - 1, 1 } };
    char *tb = counts_encode(b, 2), *tl = counts_encode(last, 1);

    (void)state;
    assert_refused("NoA", 4, "not base64");
    assert_refused("No!=", 4, "not base64");
    assert_refused("N=A=", 4, "not base64");
    assert_refused("NoB=", 4, "padding bits");
    assert_refused(tb, 5, "add up to 4, its total is 5");
    assert_refused(tb, 2, "more than its total");             /* the first count, 3, passes it */
    assert_refused(tb, 3, "bits after the last counter");     /* the second is one too many */
    assert_refused("NoAA", 4, "bits after the last counter"); /* a whole byte more */
    assert_refused("NoE=", 4, "bits after the last counter"); /* a one in the padding */
    assert_refused("", 1, "add up to 0, its total is 1");
    assert_refused("gAA=", 1, "bits after the last counter"); /* 14 zero bits more */
    assert_refused("AAAAAAAAAAAA", 1, "its total is 1");      /* 72 zeros: no gamma code */
    /* the last index is a step of 27648 from -1: 14 zeros, 110110000000000, then rice 0 */
    assert_string_equal(tl, "AANgAA==");
    assert_refused("AANgCA==", 1, "index outside 0..27647"); /* a step of 27649 */
    free(tb);
    free(tl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edge_cases),
        cmocka_unit_test(test_many_counters),
        cmocka_unit_test(test_known_strings),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
