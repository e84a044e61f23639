/*
 * test_html: the HTML report's sparse histograms. Histograms written as the
 * evidence writes them and added sparsely (hd_sparse_add) give, at every
 * percentile, what the same values recorded in one struct hist give
 * (hist_percentile); a histogram of another layout is refused. The tables'
 * median of a figure some runs lack (hd_median_known) is of the runs that
 * count and have it, as the stack's table takes it.
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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "evidence/hist_json.h"
#include "hist.h"
#include "report/htmldata.h"

/* A fixed-seed generator: a failure reproduces. */
static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_sparse_equals_hist(void **state)
{
    struct hist *whole = hist_new(), *part[3] = { hist_new(), hist_new(), hist_new() };
    struct hsparse sp = { 0 };
    struct hb_err err = { 0 };
    uint64_t seed = 0x9e3779b97f4a7c15ULL;

    (void)state;
    assert_non_null(whole);
    for (int k = 0; k < 3; k++) {
        assert_non_null(part[k]);
        /* each part its own spread: 1 µs to 1 ms, with a tail of up to 1 s */
        for (int i = 0; i < 20000; i++) {
            uint64_t v = 1000 + next(&seed) % (1000000u * (k + 1));
            if (i % 500 == 0) v = next(&seed) % 1000000000u;
            hist_record(part[k], v);
            hist_record(whole, v);
        }
        json_t *j = report_hist_json(part[k]);
        assert_int_equal(hd_sparse_add(&sp, j, &err), 0);
        json_decref(j);
    }
    assert_int_equal(sp.total, whole->total);
    assert_int_equal(sp.min, whole->min);
    assert_int_equal(sp.max, whole->max);
    for (double p = 0.5; p <= 100; p += 0.5)
        assert_int_equal(hd_percentile(&sp, p), hist_percentile(whole, p));
    assert_int_equal(hd_percentile(&sp, 99.99), hist_percentile(whole, 99.99));
    for (size_t i = 1; i < sp.n; i++)
        assert_true(sp.pairs[i - 1].idx < sp.pairs[i].idx);
    free(sp.pairs);
    for (int k = 0; k < 3; k++)
        hist_free(part[k]);
    hist_free(whole);
}

static void test_sparse_refuses_layout(void **state)
{
    struct hist *h = hist_new();
    struct hsparse sp = { 0 };
    struct hb_err err = { 0 };
    json_t *j;

    (void)state;
    hist_record(h, 1234);
    j = report_hist_json(h);
    json_object_set_new(j, "significant_digits", json_integer(2));
    assert_int_equal(hd_sparse_add(&sp, j, &err), -EINVAL);
    assert_int_equal(sp.total, 0);
    assert_int_equal(hd_percentile(&sp, 50), 0);
    json_decref(j);
    free(sp.pairs);
    hist_free(h);
}

/* hd_median_known's figure: the run's number "x", else why it has none. */
static bool figure_x(const json_t *run, const void *arg, double *out, char *why, size_t cap)
{
    (void)arg;
    return hd_figure(run, out, why, cap, "x", NULL, NULL);
}

static void test_median_known(void **state)
{
    struct hcell cell = { .runs = json_array(), .counted = 4 };
    char why[64];
    double med;

    (void)state;
    /* counting runs: 1, none, 5, 3; a run that does not count with 100 is left out */
    json_array_append_new(cell.runs, json_pack("{s:b, s:f}", "valid", 1, "x", 1.0));
    json_array_append_new(cell.runs, json_pack("{s:b, s:{s:s}}", "valid", 1, "x", "unavailable",
                                               "the agent gave none"));
    json_array_append_new(cell.runs, json_pack("{s:b, s:f}", "valid", 0, "x", 100.0));
    json_array_append_new(cell.runs, json_pack("{s:b, s:f}", "valid", 1, "x", 5.0));
    json_array_append_new(cell.runs, json_pack("{s:b, s:f}", "valid", 1, "x", 3.0));
    assert_int_equal(hd_median_known(&cell, figure_x, NULL, &med, why, sizeof(why)), 3);
    assert_float_equal(med, 3, 0);
    assert_string_equal(why, "the agent gave none"); /* the first run that lacks it */
    json_array_remove(cell.runs, 4);
    json_array_remove(cell.runs, 3);
    json_array_remove(cell.runs, 0);
    assert_int_equal(hd_median_known(&cell, figure_x, NULL, &med, why, sizeof(why)), 0);
    assert_true(isnan(med));
    assert_string_equal(why, "the agent gave none");
    json_array_clear(cell.runs);
    assert_int_equal(hd_median_known(&cell, figure_x, NULL, &med, why, sizeof(why)), 0);
    assert_string_equal(why, "no run counts");
    json_decref(cell.runs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sparse_equals_hist),
        cmocka_unit_test(test_sparse_refuses_layout),
        cmocka_unit_test(test_median_known),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
