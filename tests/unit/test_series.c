/*
 * test_series: ops and p99 per interval (engine/series.h) without threads:
 * the intervals a window gets, what a thread's histogram gained turned into
 * the run's slots at each interval's end, the p99 of an interval against the exact one of its
 * values (never below, at most 12.5 % above), ops past the last slot, and a
 * count-bound run's intervals added in groups to at most 616.
 */
/* cmocka.h needs these four first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <stdlib.h>

#include "engine/series.h"

static void test_plan(void **state)
{
    struct series_run r;

    (void)state;
    series_plan(&r, 5 * NS_PER_S, 0);
    assert_int_equal(r.interval_ns, 100 * NS_PER_MS);
    assert_int_equal(r.nslots, 50 + SERIES_SLACK);
    series_plan(&r, 60 * NS_PER_S, 0); /* 600 intervals of 100 ms: still 100 ms */
    assert_int_equal(r.interval_ns, 100 * NS_PER_MS);
    series_plan(&r, 60 * NS_PER_S, 1); /* one ns more: 200 ms */
    assert_int_equal(r.interval_ns, 200 * NS_PER_MS);
    assert_int_equal(r.nslots, 301 + SERIES_SLACK);
    series_plan(&r, 3600 * NS_PER_S, 0); /* an hour: 6 s, 600 intervals */
    assert_int_equal(r.interval_ns, 6 * NS_PER_S);
    assert_int_equal(r.nslots, 600 + SERIES_SLACK);
    series_plan(&r, 0, 0); /* count-bound */
    assert_int_equal(r.interval_ns, 100 * NS_PER_MS);
    assert_int_equal(r.nslots, SERIES_COUNT_SLOTS);
    assert_int_equal(series_mem(&r), (size_t)SERIES_COUNT_SLOTS * SERIES_BUCKETS * 4);
}

/* The coarse counters' upper edges against every value around them, exactly. */
static void test_bucket_edges(void **state)
{
    static const uint64_t v[] = { 0,          1,         127,        128,
                                  2047,       2048,      2303,       2304,
                                  4095,       4096,      123456,     999999,
                                  1000000,    300000000, 1ULL << 35, HIST_MAX_NS - 1,
                                  HIST_MAX_NS };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(v); i++) {
        size_t b = hist_index(v[i]) >> SERIES_SHIFT;
        uint64_t hi = series_bucket_high(b);
        assert_true(hi >= v[i]);
        if (v[i] >= 2048)
            assert_true(hi - v[i] <= v[i] / 8);
        else
            assert_true(hi - v[i] < 128);
        /* the next value past the edge is the next counter's */
        if (hi < HIST_MAX_NS) assert_int_equal(hist_index(hi + 1) >> SERIES_SHIFT, b + 1);
    }
    assert_int_equal(series_bucket_high(0), 127);
    assert_int_equal(series_bucket_high(16), 2303); /* 2048 + 256 - 1: 2 ns steps from 2048 */
    assert_int_equal(series_bucket_high(SERIES_BUCKETS - 1), HIST_MAX_NS);
}

/* An op of latency v that ended at at_ns, as conn.c records it: noted, then in the histogram. */
static void rec(struct series_mine *m, struct hist *h, uint64_t at_ns, uint64_t v)
{
    series_note(m, at_ns);
    hist_record(h, v);
}

/* The exact p99 (rank round(0.99 n), at least 1) of v[0..n-1], sorted in place. */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static uint64_t exact_p99(uint64_t *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_u64);
    return v[hist_percentile_rank(99, n) - 1];
}

/* Ops at known times through one thread's interval: ops and p99 per interval. */
static void test_turns(void **state)
{
    struct series_run r;
    struct series_mine m;
    struct hist *hm = hist_new();
    struct series_result out;
    uint64_t t0 = 1000 * NS_PER_S, vals[200];
    uint64_t seed = 12345;

    (void)state;
    series_plan(&r, NS_PER_S, 0);
    series_alloc(&r);
    r.origin_ns = t0;
    series_mine_init(&m, &r, hm);
    /* interval 0: 200 ops of 1 .. 200 µs, pseudo-random order */
    for (size_t i = 0; i < 200; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        vals[i] = (1 + (seed >> 33) % 200) * 1000;
        rec(&m, hm, t0 + 10 * NS_PER_MS + i, vals[i]);
    }
    /* intervals 1, 2: none (a stall); 3: one op that waited 300 ms, and 9 quick ones */
    rec(&m, hm, t0 + 350 * NS_PER_MS, 300 * NS_PER_MS);
    for (int i = 0; i < 9; i++)
        rec(&m, hm, t0 + 360 * NS_PER_MS, 20000);
    /* interval 9, the last */
    rec(&m, hm, t0 + 950 * NS_PER_MS, 5000);
    series_flush(&m);
    series_result_of(&r, NS_PER_S + 7, &out); /* 1 s and 7 ns: 11 intervals */
    assert_int_equal(out.n, 11);
    assert_int_equal(out.interval_ns, 100 * NS_PER_MS);
    assert_int_equal(out.end_ns, NS_PER_S + 7);
    assert_int_equal(out.ops[0], 200);
    assert_int_equal(out.ops[1], 0);
    assert_int_equal(out.ops[2], 0);
    assert_int_equal(out.ops[3], 10);
    assert_int_equal(out.ops[9], 1);
    assert_int_equal(out.ops[10], 0);
    assert_int_equal(out.p99_ns[1], 0);
    /* the p99 of 10 ops is the 10th: the one that waited 300 ms */
    assert_true(out.p99_ns[3] >= 300 * NS_PER_MS && out.p99_ns[3] <= 300 * NS_PER_MS * 9 / 8);
    {
        uint64_t want = exact_p99(vals, 200);
        assert_true(out.p99_ns[0] >= want && out.p99_ns[0] <= want + want / 8);
        assert_int_equal(out.p99_ns[0], series_bucket_high(hist_index(want) >> SERIES_SHIFT));
    }
    assert_int_equal(out.beyond, 0);
    series_result_release(&out);
    series_free(&r);
    hist_free(hm);
}

/* Two threads' ops of one interval add in its slot; a thread's first op before the origin. */
static void test_two_threads(void **state)
{
    struct series_run r;
    struct series_mine a, b;
    struct hist *ha = hist_new(), *hb = hist_new();
    struct series_result out;

    (void)state;
    series_plan(&r, NS_PER_S, 0);
    series_alloc(&r);
    r.origin_ns = 5 * NS_PER_S;
    series_mine_init(&a, &r, ha);
    series_mine_init(&b, &r, hb);
    rec(&a, ha, r.origin_ns - 1, 1000); /* a clock read just before: interval 0 */
    rec(&a, ha, r.origin_ns + 1, 1000);
    rec(&b, hb, r.origin_ns + 2, 2000);
    rec(&a, ha, r.origin_ns + 150 * NS_PER_MS, 1000);
    series_flush(&a);
    series_flush(&b);
    series_result_of(&r, 200 * NS_PER_MS, &out);
    assert_int_equal(out.n, 2);
    assert_int_equal(out.ops[0], 3);
    assert_int_equal(out.ops[1], 1);
    series_result_release(&out);
    series_free(&r);
    hist_free(ha);
    hist_free(hb);
}

/* Past the last slot ops are counted in beyond, and the window's end cuts the series. */
static void test_beyond(void **state)
{
    struct series_run r;
    struct series_mine m;
    struct hist *hm = hist_new();
    struct series_result out;

    (void)state;
    series_plan(&r, NS_PER_S, 0); /* 10 + SERIES_SLACK slots */
    series_alloc(&r);
    r.origin_ns = NS_PER_S;
    series_mine_init(&m, &r, hm);
    rec(&m, hm, r.origin_ns + 50 * NS_PER_MS, 1000);
    rec(&m, hm, r.origin_ns + 100 * NS_PER_S, 1000); /* far past the last slot */
    rec(&m, hm, r.origin_ns + 101 * NS_PER_S, 1000);
    rec(&m, hm, r.origin_ns + 101 * NS_PER_S + 1, 1000);
    series_flush(&m);
    series_result_of(&r, NS_PER_S, &out);
    assert_int_equal(out.n, 10);
    assert_int_equal(out.ops[0], 1);
    assert_int_equal(out.beyond, 3);
    series_result_release(&out);
    series_free(&r);
    hist_free(hm);
}

/* A count-bound run of 2,000 intervals: added 4 at a time, 500 of 400 ms, none lost. */
static void test_count_groups(void **state)
{
    struct series_run r;
    struct series_mine m;
    struct hist *hm = hist_new();
    struct series_result out;
    uint64_t sum = 0;

    (void)state;
    series_plan(&r, 0, 0);
    series_alloc(&r);
    r.origin_ns = 0;
    series_mine_init(&m, &r, hm);
    for (uint64_t i = 0; i < 2000; i++)
        rec(&m, hm, i * SERIES_STEP_NS + 1, i == 1001 ? 50 * NS_PER_MS : 10000);
    series_flush(&m);
    series_result_of(&r, 2000 * SERIES_STEP_NS, &out);
    assert_int_equal(out.interval_ns, 4 * SERIES_STEP_NS);
    assert_int_equal(out.n, 500);
    for (size_t i = 0; i < out.n; i++) {
        assert_int_equal(out.ops[i], 4);
        sum += out.ops[i];
    }
    assert_int_equal(sum, 2000);
    /* the p99 of 4 values is the 4th: the slow one's in its group, 1001 / 4 = 250 */
    assert_true(out.p99_ns[250] >= 50 * NS_PER_MS);
    assert_true(out.p99_ns[249] < 50 * NS_PER_MS);
    series_result_release(&out);
    /* 616 intervals are not grouped, 617 are */
    series_result_of(&r, 616 * SERIES_STEP_NS, &out);
    assert_int_equal(out.n, 616);
    series_result_release(&out);
    series_result_of(&r, 617 * SERIES_STEP_NS, &out);
    assert_int_equal(out.n, 309);
    assert_int_equal(out.interval_ns, 2 * SERIES_STEP_NS);
    series_result_release(&out);
    series_free(&r);
    hist_free(hm);
}

/* No op in the window, or a run that never reached it: no interval. */
static void test_empty(void **state)
{
    struct series_run r;
    struct series_mine m;
    struct hist *hm = hist_new();
    struct series_result out;

    (void)state;
    series_plan(&r, NS_PER_S, 0);
    series_alloc(&r);
    series_mine_init(&m, &r, hm);
    series_flush(&m); /* before any op: nothing to add */
    series_result_of(&r, 0, &out);
    assert_int_equal(out.n, 0);
    assert_null(out.ops);
    series_result_release(&out);
    series_free(&r);
    hist_free(hm);
    assert_int_equal(series_p99(NULL, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan),   cmocka_unit_test(test_bucket_edges),
        cmocka_unit_test(test_turns),  cmocka_unit_test(test_two_threads),
        cmocka_unit_test(test_beyond), cmocka_unit_test(test_count_groups),
        cmocka_unit_test(test_empty),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
