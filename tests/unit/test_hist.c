/*
 * test_hist: the histogram against exact arithmetic. Index/value mapping is
 * checked exhaustively over all counters, percentiles against order
 * statistics of a sorted copy, merge against a single histogram that saw
 * every value. Random data comes from a fixed-seed xorshift so a failure
 * reproduces.
 */
/* cmocka.h needs these four first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hist.h"

#define N_RANDOM 1000000
#define SEED     0x9e3779b97f4a7c15ULL

static const double percentiles[] = { 1, 10, 50, 90, 99, 99.9, 99.99, 100 };

/* xorshift64*: tiny, deterministic, good enough to spread values. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dULL;
}

/*
 * A value log-uniform over [1, HIST_MAX_NS], so every bucket gets traffic
 * instead of nearly all values landing in the top few buckets.
 */
static uint64_t rng_log_value(uint64_t *s)
{
    double u = (double)(rng_next(s) >> 11) * 0x1.0p-53;
    uint64_t v = (uint64_t)exp(u * log((double)HIST_MAX_NS));

    if (v < 1) v = 1;
    if (v > HIST_MAX_NS) v = HIST_MAX_NS;
    return v;
}

static uint64_t *random_values(size_t n)
{
    uint64_t *v = malloc(n * sizeof(*v));
    uint64_t s = SEED;

    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = rng_log_value(&s);
    return v;
}

static struct hist *new_hist(void)
{
    struct hist *h = malloc(sizeof(*h));

    assert_non_null(h);
    hist_init(h);
    return h;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

/* Same rank formula as hist.h documents, computed independently. */
static uint64_t rank_of(double p, uint64_t total)
{
    uint64_t r = (uint64_t)(p / 100.0 * (double)total + 0.5);

    return r < 1 ? 1 : r;
}

/* v lies in its counter's range, and that range is within 0.1 % of v. */
static void check_value(uint64_t v)
{
    uint64_t lo = hist_value_at_index(hist_index(v));
    uint64_t hi = hist_highest_equivalent(v);

    if (lo > v || v > hi || hi - lo > v / 1024 + 1)
        fail_msg("v=%" PRIu64 ": lowest %" PRIu64 " highest %" PRIu64, v, lo, hi);
}

static void test_index_round_trip(void **state)
{
    uint64_t s = SEED;

    (void)state;
    for (size_t idx = 0; idx < HIST_COUNTS; idx++) {
        uint64_t lo = hist_value_at_index(idx);

        if (hist_index(lo) != idx)
            fail_msg("idx %zu -> value %" PRIu64 " -> idx %zu", idx, lo, hist_index(lo));
        /* counters tile the value line: no gap and no overlap with the next one */
        if (idx + 1 < HIST_COUNTS &&
            hist_value_at_index(idx + 1) != hist_highest_equivalent(lo) + 1)
            fail_msg("gap or overlap after idx %zu", idx);
    }
    assert_int_equal(hist_value_at_index(0), 0);
    assert_int_equal(hist_value_at_index(2048), 2048);
    assert_int_equal(hist_highest_equivalent(4094), 4095);
    assert_true(hist_index(HIST_MAX_NS) < HIST_COUNTS);
    for (uint64_t v = 0; v < 5000; v++)
        check_value(v);
    for (unsigned b = 1; b < 37; b++) {
        check_value((UINT64_C(1) << b) - 1);
        check_value(UINT64_C(1) << b);
        check_value((UINT64_C(1) << b) + 1);
    }
    check_value(HIST_MAX_NS);
    for (int i = 0; i < N_RANDOM; i++)
        check_value(rng_log_value(&s));
}

static void test_percentiles_vs_sort(void **state)
{
    uint64_t *v = random_values(N_RANDOM);
    struct hist *h = new_hist();

    (void)state;
    for (size_t i = 0; i < N_RANDOM; i++)
        hist_record(h, v[i]);
    qsort(v, N_RANDOM, sizeof(*v), cmp_u64);
    assert_int_equal(h->total, N_RANDOM);
    assert_int_equal(h->overflow, 0);
    assert_int_equal(h->min, v[0]);
    assert_int_equal(h->max, v[N_RANDOM - 1]);
    for (size_t k = 0; k < sizeof(percentiles) / sizeof(percentiles[0]); k++) {
        uint64_t x = v[rank_of(percentiles[k], N_RANDOM) - 1];
        uint64_t got = hist_percentile(h, percentiles[k]);
        uint64_t want = hist_highest_equivalent(x) < h->max ? hist_highest_equivalent(x) : h->max;

        if (got != want)
            fail_msg("p%g: got %" PRIu64 ", exact %" PRIu64 " (highest equivalent %" PRIu64 ")",
                     percentiles[k], got, x, hist_highest_equivalent(x));
        assert_true(x <= got && got - x <= x / 1024 + 1);
    }
    free(h);
    free(v);
}

static void assert_same_hist(const struct hist *a, const struct hist *b)
{
    assert_memory_equal(a->counts, b->counts, sizeof(a->counts));
    assert_int_equal(a->total, b->total);
    assert_int_equal(a->overflow, b->overflow);
    assert_int_equal(a->min, b->min);
    assert_int_equal(a->max, b->max);
    for (size_t k = 0; k < sizeof(percentiles) / sizeof(percentiles[0]); k++)
        assert_int_equal(hist_percentile(a, percentiles[k]), hist_percentile(b, percentiles[k]));
    assert_true(hist_mean(a) == hist_mean(b));
}

static void test_merge(void **state)
{
    uint64_t *v = random_values(N_RANDOM);
    struct hist *all = new_hist(), *merged = new_hist(), *part[4];
    uint64_t s = SEED ^ 1;

    (void)state;
    for (int i = 0; i < 4; i++)
        part[i] = new_hist();
    /* a few extremes so min, max and overflow have to travel through the merge */
    v[10] = 0;
    v[20] = HIST_MAX_NS + 1;
    v[30] = UINT64_MAX;
    for (size_t i = 0; i < N_RANDOM; i++) {
        hist_record(all, v[i]);
        hist_record(part[rng_next(&s) % 4], v[i]);
    }
    for (int i = 0; i < 4; i++) {
        assert_true(part[i]->total > 0);
        hist_merge(merged, part[i]);
    }
    assert_same_hist(merged, all);
    assert_int_equal(merged->overflow, 2);
    assert_int_equal(merged->min, 0);

    /* merging an empty histogram changes nothing, in particular not min/max */
    hist_init(part[0]);
    hist_merge(merged, part[0]);
    assert_same_hist(merged, all);
    for (int i = 0; i < 4; i++)
        free(part[i]);
    free(merged);
    free(all);
    free(v);
}

/* hist_record_n(v, n) is n hist_record(v): the engine records a batch's equal latencies so. */
static void test_record_n(void **state)
{
    uint64_t *v = random_values(N_RANDOM);
    struct hist *one = new_hist(), *runs = new_hist();
    uint64_t s = SEED ^ 2;

    (void)state;
    v[5] = 0;
    v[6] = HIST_MAX_NS + 1; /* an overflow counts n times */
    v[7] = UINT64_MAX;
    for (size_t i = 0; i < N_RANDOM; i++) {
        uint64_t n = rng_next(&s) % 17; /* 0 records nothing */
        for (uint64_t k = 0; k < n; k++)
            hist_record(one, v[i]);
        hist_record_n(runs, v[i], n);
    }
    assert_same_hist(runs, one);
    assert_int_equal(runs->overflow, one->overflow);
    free(one);
    free(runs);
    free(v);
}

static void test_overflow(void **state)
{
    struct hist *h = new_hist();
    uint64_t top_lo = hist_value_at_index(hist_index(HIST_MAX_NS));
    uint64_t top_hi = hist_highest_equivalent(HIST_MAX_NS);

    (void)state;
    hist_record(h, 1000);
    hist_record(h, HIST_MAX_NS); /* exactly the top: not an overflow */
    hist_record(h, 61000000000ULL);
    hist_record(h, HIST_MAX_NS + 1);
    hist_record(h, UINT64_MAX);
    assert_int_equal(h->total, 5);
    assert_int_equal(h->overflow, 3);
    assert_int_equal(h->max, HIST_MAX_NS);
    assert_int_equal(h->min, 1000);
    assert_int_equal(h->counts[hist_index(HIST_MAX_NS)], 4);
    assert_int_equal(hist_percentile(h, 100), HIST_MAX_NS); /* capped at max */
    assert_in_range(hist_percentile(h, 50), top_lo, top_hi);
    assert_true(hist_percentile(h, 50) <= h->max);
    assert_int_equal(hist_percentile(h, 10), hist_highest_equivalent(1000));
    free(h);
}

static void test_empty_and_zero(void **state)
{
    struct hist *h = new_hist();

    (void)state;
    assert_int_equal(h->total, 0);
    assert_int_equal(h->min, UINT64_MAX);
    assert_int_equal(h->max, 0);
    for (size_t k = 0; k < sizeof(percentiles) / sizeof(percentiles[0]); k++)
        assert_int_equal(hist_percentile(h, percentiles[k]), 0);
    assert_true(hist_mean(h) == 0.0);

    hist_record(h, 0);
    assert_int_equal(hist_index(0), 0);
    assert_int_equal(h->counts[0], 1);
    assert_int_equal(h->total, 1);
    assert_int_equal(h->min, 0);
    assert_int_equal(h->max, 0);
    assert_int_equal(hist_percentile(h, 50), 0);
    assert_int_equal(hist_percentile(h, 100), 0);
    assert_true(hist_mean(h) == 0.0);

    /* small values are exact: one counter per nanosecond below 2048 */
    hist_record(h, 7);
    assert_int_equal(hist_percentile(h, 100), 7);
    assert_true(hist_mean(h) == 3.5);
    free(h);
}

static void test_out_of_range_p(void **state)
{
    struct hist *h = new_hist();

    (void)state;
    for (uint64_t v = 1; v <= 100; v++)
        hist_record(h, v);
    assert_int_equal(hist_percentile(h, 0), 1);
    assert_int_equal(hist_percentile(h, -5), 1);
    assert_int_equal(hist_percentile(h, NAN), 1);
    assert_int_equal(hist_percentile(h, 150), 100);
    assert_int_equal(hist_percentile(h, 50), 50);
    assert_int_equal(hist_percentile(h, 99.5), 100); /* rank round(99.5) = 100 */
    free(h);
}

static void test_mean(void **state)
{
    uint64_t *v = random_values(N_RANDOM);
    struct hist *h = new_hist();
    long double sum = 0;
    double exact, got;

    (void)state;
    for (size_t i = 0; i < N_RANDOM; i++) {
        hist_record(h, v[i]);
        sum += (long double)v[i];
    }
    exact = (double)(sum / N_RANDOM);
    got = hist_mean(h);
    if (fabs(got - exact) > exact * 1e-3) fail_msg("mean %.3f, exact %.3f", got, exact);

    /* 0.1 % cannot tell midpoint from lowest; a wide counter can: [2^30, 2^30 + 2^20) */
    hist_init(h);
    hist_record(h, (UINT64_C(1) << 30) + 5);
    assert_true(hist_mean(h) == (double)((UINT64_C(1) << 30) + (UINT64_C(1) << 19)));
    free(h);
    free(v);
}

/* hist_count_at_least: exact at counter edges, overflow counted once. */
static void test_count_at_least(void **state)
{
    struct hist *h = hist_new();

    (void)state;
    assert_non_null(h);
    hist_record(h, 500);
    hist_record(h, 999999999);
    hist_record(h, 1000000000);
    hist_record(h, 1200000000);
    hist_record(h, HIST_MAX_NS + 1000);
    assert_int_equal(hist_count_at_least(h, 1), 5);
    assert_int_equal(hist_count_at_least(h, 501), 4);
    /* 999999999 and 1e9 share a counter at 3 significant digits */
    assert_int_equal(hist_count_at_least(h, 1000000000), 4);
    assert_int_equal(hist_count_at_least(h, 1100000000), 2);
    assert_int_equal(hist_count_at_least(h, HIST_MAX_NS), 1);
    hist_free(h);
}

/*
 * hist_new: every page of the histogram is resident before the first value, so
 * recording takes no page fault and a long run does not grow as new latencies
 * land in new pages. mincore(2) reads which pages are mapped in; a fresh
 * calloc'd mapping (what the compiler makes of malloc + memset 0) has none.
 */
static void test_new_is_resident(void **state)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    struct hist *h[4];

    (void)state;
    for (size_t k = 0; k < sizeof(h) / sizeof(h[0]); k++) {
        uintptr_t lo, hi;
        size_t pages, missing = 0;
        unsigned char *vec;

        h[k] = hist_new();
        assert_non_null(h[k]);
        lo = (uintptr_t)h[k] & ~(uintptr_t)(page - 1);
        hi = ((uintptr_t)h[k] + sizeof(*h[k]) + page - 1) & ~(uintptr_t)(page - 1);
        pages = (hi - lo) / page;
        vec = calloc(pages, 1);
        assert_non_null(vec);
        assert_int_equal(mincore((void *)lo, hi - lo, vec), 0);
        for (size_t i = 0; i < pages; i++)
            missing += !(vec[i] & 1);
        if (missing) fail_msg("histogram %zu: %zu of %zu pages not resident", k, missing, pages);
        free(vec);
    }
    for (size_t k = 0; k < sizeof(h) / sizeof(h[0]); k++)
        hist_free(h[k]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_is_resident),
        cmocka_unit_test(test_index_round_trip),
        cmocka_unit_test(test_percentiles_vs_sort),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_record_n),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_empty_and_zero),
        cmocka_unit_test(test_out_of_range_p),
        cmocka_unit_test(test_mean),
        cmocka_unit_test(test_count_at_least),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
