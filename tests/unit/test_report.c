/*
 * test_report: what every report shares. A run record's derived figures
 * (report/record.c), its size and mode names, the metric list (each metric's
 * value from a record is the figure the evidence holds where compare reads
 * it), the A/B comparison and its text (stats_delta), and the histogram
 * codec: a histogram encoded, decoded and encoded again is the same JSON, and
 * decoded into a struct hist it is the same histogram.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/hist_json.h"
#include "evidence/schema.h"
#include "report/metric.h"
#include "report/record.h"
#include "report/report.h"
#include "report/summary.h"
#include "stats.h"

static void assert_size(long long size, const char *want)
{
    char buf[32];

    size_text(buf, sizeof(buf), size);
    assert_string_equal(buf, want);
}

static void test_size_text(void **state)
{
    (void)state;
    assert_size(64, "64 B");
    assert_size(1000, "1000 B");
    assert_size(1536, "1536 B");
    assert_size(4096, "4 KiB");
    assert_size((1LL << 20) + 1024, "1025 KiB");
    assert_size(1LL << 20, "1 MiB");
    assert_size(64LL << 20, "64 MiB");
    assert_size(0, "0 B");
    assert_size(-1024, "-1024 B");
}

static void test_mode_name(void **state)
{
    (void)state;
    assert_string_equal(report_mode_name(LOAD_CONNECT), "connect");
    assert_string_equal(report_mode_name(LOAD_REUSE), "reuse");
}

/* A record of ops ops in window_ns with client_cpu_ns of client CPU; no histogram. */
static struct run_record record(uint64_t ops, uint64_t window_ns, uint64_t client_cpu_ns)
{
    struct run_record r;

    memset(&r, 0, sizeof(r));
    r.res.ops = ops;
    r.res.window_ns = window_ns;
    r.res.client_cpu_ns = client_cpu_ns;
    return r;
}

static void test_derived_figures(void **state)
{
    struct run_record r = record(1000, NS_PER_S / 2, 3000000);

    (void)state;
    assert_true(report_ops_per_s(&r) == 2000.0);
    assert_true(report_cpu_ns_per_op(&r) == 3000.0);
    assert_true(report_run_counts(&r));
    r.res.interrupted = true;
    assert_false(report_run_counts(&r));
    r.res.interrupted = false;
    r.res.errors[OP_ERR_TIMEOUT] = 1;
    assert_false(report_run_counts(&r));

    r = record(0, 0, 5000);
    assert_true(report_ops_per_s(&r) == 0.0);
    assert_true(report_cpu_ns_per_op(&r) == 0.0);
    assert_false(report_run_counts(&r));
}

static void test_saturated(void **state)
{
    struct run_record r = record(980, NS_PER_S, 0);

    (void)state;
    assert_false(report_saturated(&r)); /* closed loop: nothing was asked */
    r.cfg.rate = 1000;
    assert_true(report_saturated(&r));  /* 98 % of the rate */
    assert_false(report_run_valid(&r)); /* saturated: invalid, like a run with errors */
    assert_false(report_run_counts(&r));
    r.res.interrupted = true;
    assert_true(report_run_valid(&r)); /* cut short: left out as such, not as saturated */
    assert_false(report_saturated_invalid(&r));
    r.res.interrupted = false;
    r.res.ops = 995;
    assert_false(report_saturated(&r)); /* 99.5 % */
    assert_true(report_run_valid(&r));
    assert_true(report_run_counts(&r));

    /* Duration-bound: against what the schedule intended in the window (ops + errors). */
    r = record(1578, 1602 * NS_PER_MS, 0); /* a poisson schedule's own 1578 in 1.6 s */
    r.cfg.rate = 1000;
    r.cfg.duration_ns = 1600 * NS_PER_MS;
    assert_true(report_rate_intended(&r) == 1578 * 1000.0 / 1600);
    assert_false(report_saturated(&r)); /* 98.5 % of the mean rate, 99.9 % of the schedule */
    r.res.window_ns = 1900 * NS_PER_MS; /* a 300 ms drain past the window */
    r.res.drain_ns = 300 * NS_PER_MS;
    assert_true(report_saturated(&r)); /* without a service histogram: all of it counts */
    r.res.service = hist_new();
    assert_non_null(r.res.service);
    hist_record(r.res.service, 298 * NS_PER_MS); /* the stalled op's own service time */
    assert_false(report_saturated(&r));          /* only 2 ms of the drain count */
    hist_free(r.res.service);
    r.res.service = hist_new();
    assert_non_null(r.res.service);
    hist_record(r.res.service, 250 * NS_PER_MS); /* 50 ms of backlog: 3 % */
    assert_true(report_saturated(&r));
    hist_free(r.res.service);
    r.res.service = NULL;
    r.res.drain_ns = 0;
    r.res.window_ns = 1602 * NS_PER_MS;
    r.res.errors[OP_ERR_TIMEOUT] = 22; /* each op intended is answered or failed */
    assert_true(report_rate_intended(&r) == 1000.0);
    assert_true(report_saturated(&r));
    assert_false(report_run_valid(&r));

    /* Count-bound: 200 ops at 50,000/s span 4 ms; the 1 ms past it is the last op's own. */
    r = record(200, 5 * NS_PER_MS, 0);
    r.cfg.rate = 50000;
    r.cfg.count = 200;
    r.res.service = hist_new();
    assert_non_null(r.res.service);
    hist_record(r.res.service, 2 * NS_PER_MS);
    assert_true(report_rate_intended(&r) == 50000.0);
    assert_false(report_saturated(&r));
    hist_free(r.res.service);
    r.res.service = hist_new();
    assert_non_null(r.res.service);
    hist_record(r.res.service, 100000); /* 0.1 ms: 0.9 ms of backlog, 18 % */
    assert_true(report_saturated(&r));
    hist_free(r.res.service);
}

static void test_cost(void **state)
{
    struct run_record r = record(1000, NS_PER_S, 2000000);
    struct report_cost c;

    (void)state;
    c = report_cost_of(&r); /* not observed: only the client's */
    assert_true(c.cli == 2.0);
    assert_true(c.srv < 0 && c.sum < 0 && c.sys < 0);

    r.observed = true;
    r.obs.server_cpu_ns = (struct ctr_val){ .ok = true, .v = 3000000 };
    r.obs.system_busy_ns = (struct ctr_val){ .ok = true, .v = 8000000 };
    c = report_cost_of(&r);
    assert_true(c.cli == 2.0 && c.srv == 3.0 && c.sum == 5.0 && c.sys == 8.0);

    r.obs.server_cpu_ns.ok = false; /* unreadable: no server figure, so no sum */
    c = report_cost_of(&r);
    assert_true(c.srv < 0 && c.sum < 0 && c.sys == 8.0);

    r.res.ops = 0;
    c = report_cost_of(&r);
    assert_true(c.cli < 0 && c.srv < 0 && c.sum < 0 && c.sys < 0);
}

/* The median of x[0 .. n-1], as stats_summarize computes it. */
static double median(const double *x, size_t n)
{
    struct stats_summary s;

    assert_int_equal(stats_summarize(x, n, &s), 0);
    return s.median;
}

/* The text of d is the verdict of its own figures, and its ratio that of the medians. */
static void assert_delta_text(const struct stats_delta *d, const double *a, const double *b)
{
    char want[96];

    assert_true(d->ok);
    assert_true(d->ratio == median(b, d->nb) / median(a, d->na));
    assert_true(d->lo <= d->ratio && d->ratio <= d->hi);
    stats_format_delta(want, sizeof(want), d->ratio, d->lo, d->hi, d->p, STATS_ALPHA, d->na, d->nb);
    assert_string_equal(d->text, want);
}

static void test_delta(void **state)
{
    const double a[] = { 100, 102, 98, 101, 99, 100, 103, 97 };
    const double b[] = { 128, 130, 126, 129, 127, 131, 125, 128 };
    struct stats_delta d, again;
    char tail[32];

    (void)state;
    stats_delta(a, 8, b, 8, 1, &d);
    assert_delta_text(&d, a, b);
    assert_true(d.p < STATS_ALPHA && d.lo > 1);
    assert_true(strncmp(d.text, "1.28×", 6) == 0); /* a significant rise: medians 128 / 100 */
    snprintf(tail, sizeof(tail), " n=%zu+%zu)", d.na, d.nb);
    assert_non_null(strstr(d.text, tail));
    stats_delta(a, 8, b, 8, 1, &again); /* the seed makes it repeatable */
    assert_string_equal(again.text, d.text);

    stats_delta(a, 8, a, 8, 1, &d); /* the same sample: no difference */
    assert_delta_text(&d, a, a);
    assert_true(d.text[0] == '~');

    stats_delta(a, 0, b, 3, 1, &d); /* an arm without a value */
    assert_false(d.ok);
    assert_string_equal(d.text, "n/a (n=0+3)");
}

/* A histogram with values over several buckets, one above the top, recorded in a fixed order. */
static struct hist *spread_hist(void)
{
    struct hist *h = hist_new();

    assert_non_null(h);
    for (uint64_t v = 1; v < 5 * NS_PER_S; v += v / 4 + 1)
        for (uint64_t k = 0; k < v % 5 + 1; k++)
            hist_record(h, v + k);
    hist_record(h, HIST_MAX_NS + 1);
    return h;
}

/* report_hist_json, decoded and encoded again, is the same JSON, and the same histogram. */
static void assert_round_trip(const struct hist *h)
{
    struct hist *back = hist_new();
    struct hist_coded p;
    struct hb_err err = { 0 };
    json_t *j = report_hist_json(h), *again, *lat, *lat_back;

    assert_non_null(back);
    assert_non_null(j);
    if (hist_coded_decode(&p, j, &err) != 0) fail_msg("refused: %s", err.msg);
    again = hist_coded_json(&p);
    assert_true(json_equal(j, again));
    assert_int_equal(hist_coded_add(back, &p, &err), 0);
    assert_int_equal(back->total, h->total);
    assert_int_equal(back->overflow, h->overflow);
    assert_int_equal(back->max, h->max);
    if (h->total > 0) assert_int_equal(back->min, h->min);
    assert_memory_equal(back->counts, h->counts, sizeof(h->counts));
    lat = report_latency_json(h);
    lat_back = report_latency_json(back);
    assert_true(json_equal(lat, lat_back));
    json_decref(lat);
    json_decref(lat_back);
    json_decref(again);
    json_decref(j);
    hist_coded_release(&p);
    hist_free(back);
}

static void test_hist_round_trip(void **state)
{
    struct hist *h = spread_hist(), *empty = hist_new();

    (void)state;
    assert_non_null(empty);
    assert_true(h->overflow == 1 && h->total > 100);
    assert_round_trip(h);
    assert_round_trip(empty);
    hist_free(h);
    hist_free(empty);
}

/* A latency object has its figures in order, each no lower than the one before. */
static void test_latency_order(void **state)
{
    struct hist *h = spread_hist();
    json_t *lat = report_latency_json(h);
    const char *key;
    json_t *v;
    size_t i = 0;
    json_int_t prev = 0;

    (void)state;
    assert_non_null(lat);
    json_object_foreach(lat, key, v)
    {
        if (i == EV_LATENCY_FIGURES) {
            assert_string_equal(key, EV_MEAN);
            break;
        }
        assert_string_equal(key, ev_latency_order[i].key);
        assert_true(json_is_integer(v) && json_integer_value(v) >= prev);
        prev = json_integer_value(v);
        i++;
    }
    assert_int_equal(i, EV_LATENCY_FIGURES);
    assert_int_equal(json_object_size(lat), EV_LATENCY_FIGURES + 1);
    json_decref(lat);
    hist_free(h);
}

/*
 * Each metric's value from a record (what the run and lab summaries use) is
 * the figure report_run_json writes where compare reads it.
 */
static void test_metrics_match_evidence(void **state)
{
    struct run_record r = record(4321, NS_PER_S / 3, 987654321);
    struct hb_err err = { 0 };
    json_t *run;
    const char *names[METRICS];

    (void)state;
    r.proto = "echo";
    assert_int_equal(endpoint_parse(&r.cfg.ep, "tcp://127.0.0.1:9000", &err), 0);
    r.res.lat = spread_hist();
    run = report_run_json(&r);
    assert_non_null(run);
    for (int m = 0; m < METRICS; m++) {
        const struct metric_def *d = metric_def((enum summary_metric)m);
        const json_t *o = d->obj != NULL ? json_object_get(run, d->obj) : run;
        const json_t *v = json_object_get(o, d->key);
        if (!json_is_number(v)) fail_msg("no number %s", d->key);
        assert_true(json_number_value(v) == metric_of_record(&r, (enum summary_metric)m));
        names[m] = summary_metric_name((enum summary_metric)m);
        for (int k = 0; k < m; k++)
            assert_string_not_equal(names[k], names[m]);
    }
    assert_string_equal(summary_metric_name(METRICS), "?");
    json_decref(run);
    hist_free(r.res.lat);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_text),
        cmocka_unit_test(test_mode_name),
        cmocka_unit_test(test_derived_figures),
        cmocka_unit_test(test_saturated),
        cmocka_unit_test(test_cost),
        cmocka_unit_test(test_delta),
        cmocka_unit_test(test_hist_round_trip),
        cmocka_unit_test(test_latency_order),
        cmocka_unit_test(test_metrics_match_evidence),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
