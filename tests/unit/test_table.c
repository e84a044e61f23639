/*
 * test_table: the terminal tables of report/table.c, written into a memory
 * stream from small hand-built run records and checked for the exact text a
 * person reads: thousands separators, sizes, µs latencies, the "vs first"
 * ratio, the open-loop verdict, n/a with its reason, errors, noisy and
 * cut-short lines.
 */
/* cmocka.h needs these four first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/summary.h"

#define RECS_MAX 8

/* Records with their own latency histograms; freed by recs_free. */
struct recs {
    struct run_record r[RECS_MAX];
    size_t n;
};

/* Adds a run of `ops` ops in a window of window_ns, every latency lat_ns, to ep. */
static struct run_record *rec_add(struct recs *rs, const char *ep, size_t size, uint64_t ops,
                                  uint64_t window_ns, uint64_t lat_ns)
{
    struct run_record *r;
    struct hb_err err = { 0 };

    assert_true(rs->n < RECS_MAX);
    r = &rs->r[rs->n];
    memset(r, 0, sizeof(*r));
    r->proto = "echo";
    r->cell = (unsigned)rs->n;
    assert_int_equal(endpoint_parse(&r->cfg.ep, ep, &err), 0);
    r->cfg.mode = LOAD_REUSE;
    r->cfg.size = size;
    r->res.ops = ops;
    r->res.window_ns = window_ns;
    r->res.lat = hist_new();
    assert_non_null(r->res.lat);
    for (uint64_t i = 0; i < ops && i < 1000; i++)
        hist_record(r->res.lat, lat_ns);
    rs->n++;
    return r;
}

static void recs_free(struct recs *rs)
{
    for (size_t i = 0; i < rs->n; i++) {
        hist_free(rs->r[i].res.lat);
        hist_free(rs->r[i].res.service);
    }
}

/* The text fn wrote for rs; the caller frees it. */
static char *render(void (*fn)(FILE *, const struct run_record *, size_t), const struct recs *rs)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    fn(f, rs->r, rs->n);
    assert_int_equal(fclose(f), 0);
    assert_non_null(buf);
    return buf;
}

static void assert_has(const char *text, const char *want)
{
    if (strstr(text, want) == NULL) fail_msg("missing \"%s\" in:\n%s", want, text);
}

static void assert_lacks(const char *text, const char *unwanted)
{
    if (strstr(text, unwanted) != NULL) fail_msg("unexpected \"%s\" in:\n%s", unwanted, text);
}

/* The line of text that contains key; the caller frees it. */
static char *line_with(const char *text, const char *key)
{
    const char *p = strstr(text, key), *b, *e;
    char *out;

    if (p == NULL) fail_msg("no line with \"%s\" in:\n%s", key, text);
    for (b = p; b > text && b[-1] != '\n'; b--)
        ;
    e = strchr(p, '\n');
    if (e == NULL) e = p + strlen(p);
    out = strndup(b, (size_t)(e - b));
    assert_non_null(out);
    return out;
}

/* The one spelling of figures in text: thousands grouped by ',', ratios as "1.18×", columns. */
static void test_text_figures(void **state)
{
    static const struct {
        double v;
        int decimals;
        const char *want;
    } nums[] = {
        { 0, 0, "0" },
        { 999, 0, "999" },
        { 1000, 0, "1,000" },
        { 1223806, 0, "1,223,806" },
        { 22943.06, 2, "22,943.06" },
        { -1500, 0, "-1,500" },
        { -0.004, 2, "0.00" },
        { 999.996, 2, "1,000.00" },
        { 123456.5, 1, "123,456.5" },
        { NAN, 2, "n/a" },
        { INFINITY, 0, "n/a" },
    };
    char buf[64], *out = NULL;
    size_t len = 0;
    FILE *f;

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(nums); i++) {
        text_number(buf, sizeof(buf), nums[i].v, nums[i].decimals);
        assert_string_equal(buf, nums[i].want);
    }
    text_number(buf, 6, 1223806, 0); /* cut to fit, still a string */
    assert_int_equal(strlen(buf), 5);
    text_ratio(buf, sizeof(buf), 1.18, 2);
    assert_string_equal(buf, "1.18×");
    text_ratio(buf, sizeof(buf), 1.0321, 3);
    assert_string_equal(buf, "1.032×");
    text_ratio(buf, sizeof(buf), NAN, 2);
    assert_string_equal(buf, "n/a");
    f = open_memstream(&out, &len);
    assert_non_null(f);
    put_columns(f, 8, "1.18×"); /* 5 columns: 3 spaces */
    put_columns(f, -8, "p50 µs");
    fputc('|', f);
    assert_int_equal(fclose(f), 0);
    assert_string_equal(out, "   1.18×p50 µs  |");
    free(out);
}

/* ops/s with thousands separators, sizes in B/KiB/MiB, and the ratio to the first endpoint. */
static void test_run_table_numbers(void **state)
{
    struct recs rs = { 0 };
    char *out, *l0, *l1, *l2;

    (void)state;
    rec_add(&rs, "unix:/run/a.sock", 100, 1234567, 1000000000, 5000);
    rec_add(&rs, "tcp://127.0.0.1:9000", 1024, 2469134, 1000000000, 5000);
    rec_add(&rs, "unix:@b", (size_t)2 * 1024 * 1024, 999, 1000000000, 5000);
    out = render(report_run_table, &rs);
    l0 = line_with(out, "unix:/run/a.sock");
    l1 = line_with(out, "tcp://127.0.0.1:9000");
    l2 = line_with(out, "unix:@b");
    assert_has(l0, " 1,234,567 ");
    assert_has(l0, " 100 B ");
    assert_has(l0, "1.00×");
    assert_has(l1, " 2,469,134 ");
    assert_has(l1, " 1 KiB ");
    assert_has(l1, "2.00×");
    assert_has(l2, " 999 ");
    assert_lacks(l2, ",");
    assert_has(l2, " 2 MiB ");
    assert_has(l2, "0.00×");
    assert_has(out, "ops/s");
    free(l0);
    free(l1);
    free(l2);
    free(out);
    recs_free(&rs);
}

/* Latencies are printed in µs: a run whose every op took 5 ms shows about 5,000.00. */
static void test_run_table_latency_units(void **state)
{
    struct recs rs = { 0 };
    char *out, *l, want[32];

    (void)state;
    rec_add(&rs, "unix:/run/a.sock", 64, 10, 1000000000, 5000000);
    out = render(report_run_table, &rs);
    l = line_with(out, "unix:/run/a.sock");
    want[0] = ' ';
    text_number(want + 1, sizeof(want) - 2, (double)hist_percentile(rs.r[0].res.lat, 50) / 1000.0,
                2);
    strcat(want, " ");
    assert_has(l, want);
    assert_has(l, " 5,00"); /* 5 ms = 5,000 µs: the leading digits, whatever the bucket edge */
    assert_lacks(l, " 5000000"); /* not ns */
    assert_has(out, "p50 µs");
    free(l);
    free(out);
    recs_free(&rs);
}

/*
 * A run no op of which completed has no latency: n/a, never 0.00, and a line
 * under the table says why (each kind its ops failed as); the other rows keep
 * theirs.
 */
static void test_run_table_no_op(void **state)
{
    struct recs rs = { 0 };
    struct run_record *bad;
    char *out, *l0, *l1;

    (void)state;
    rec_add(&rs, "unix:/run/a.sock", 64, 1000, 1000000000, 5000);
    bad = rec_add(&rs, "tcp://127.0.0.1:9000", 64, 0, 1000000000, 0);
    bad->res.errors[OP_ERR_WRONG] = 1423;
    bad->res.errors[OP_ERR_RESET] = 1;
    out = render(report_run_table, &rs);
    l0 = line_with(out, "unix:/run/a.sock");
    l1 = line_with(out, "tcp://127.0.0.1:9000 ");
    assert_has(l0, " 5.00 ");
    assert_lacks(l1, "0.00");
    assert_has(l1, "       0       n/a       n/a       n/a       n/a       n/a   1,424");
    assert_has(out, "\n  n/a (no op completed: 1,424 failed (reset, wrong)): the latencies of "
                    "tcp://127.0.0.1:9000\n");
    free(l0);
    free(l1);
    free(out);
    recs_free(&rs);
}

/* A run with errors, or cut short, gets no ratio: "-"; nor does one against such a first run. */
static void test_run_table_no_ratio(void **state)
{
    struct recs rs = { 0 };
    struct run_record *bad;
    char *out, *l0, *l1;

    (void)state;
    bad = rec_add(&rs, "unix:/run/a.sock", 64, 1000, 1000000000, 5000);
    bad->res.errors[OP_ERR_RESET] = 2;
    rec_add(&rs, "unix:@b", 64, 2000, 1000000000, 5000);
    out = render(report_run_table, &rs);
    l0 = line_with(out, "unix:/run/a.sock");
    l1 = line_with(out, "unix:@b");
    assert_has(l0, "       2        -");
    assert_true(l0[strlen(l0) - 1] == '-');
    assert_true(l1[strlen(l1) - 1] == '-');
    assert_lacks(out, "×");
    free(l0);
    free(l1);
    free(out);
    recs_free(&rs);
}

static void test_errors_lines(void **state)
{
    struct recs rs = { 0 };
    struct run_record *r;
    char *out;

    (void)state;
    r = rec_add(&rs, "unix:/run/a.sock", 64, 100, 1000000000, 5000);
    r->res.errors[OP_ERR_REFUSED] = 3;
    r->res.errors[OP_ERR_SHORT] = 1;
    rec_add(&rs, "unix:@b", 128, 0, 1000000000, 5000);
    rec_add(&rs, "unix:@c", 256, 10, 1000000000, 5000);
    out = render(report_errors, &rs);
    assert_has(out, "errors: unix:/run/a.sock reuse 64 B: refused=3 short=1\n");
    assert_has(out, "invalid: unix:@b reuse 128 B: no op completed in the measured window\n");
    assert_lacks(out, "unix:@c");
    free(out);
    recs_free(&rs);

    memset(&rs, 0, sizeof(rs));
    rec_add(&rs, "unix:@c", 256, 10, 1000000000, 5000);
    out = render(report_errors, &rs);
    assert_string_equal(out, "");
    free(out);
    recs_free(&rs);
}

/* r observed, with other processes' CPU and steal over a window (ms), and its verdict. */
static void rec_other(struct run_record *r, uint64_t other_ms, uint64_t steal_ms,
                      uint64_t window_ms)
{
    struct obs_other *x = &r->obs.other;

    r->observed = true;
    x->busy_ns.ok = x->self_ns.ok = x->named_ns.ok = x->steal_ns.ok = true;
    x->busy_ns.v = other_ms * NS_PER_MS;
    x->steal_ns.v = steal_ms * NS_PER_MS;
    x->window_ns = window_ms * NS_PER_MS;
    x->cpus = 2;
    x->threshold_cpus = 0.1;
    observe_other_compute(x);
}

/*
 * A noisy run gets one line naming it (and its repetition) with its figures;
 * a quiet one none; beside a summary, how many of its runs were noisy and how
 * many could not be told.
 */
static void test_noisy_lines(void **state)
{
    struct recs rs = { 0 };
    struct run_record *r;
    char *out;

    (void)state;
    rec_other(rec_add(&rs, "unix:@a", 64, 100, NS_PER_S, 5000), 50, 0, 1000);
    r = rec_add(&rs, "unix:@a", 64, 100, NS_PER_S, 5000);
    r->rep = 1;
    rec_other(r, 400, 100, 1000);
    rec_add(&rs, "unix:@a", 64, 100, NS_PER_S, 5000)->rep = 2; /* not observed */
    out = render(report_errors, &rs);
    assert_string_equal(out, "noisy: unix:@a reuse 64 B #2: other processes 0.400 CPU-s + steal "
                             "0.100 s in a 1.00 s window: 0.50 CPU (25.0 % of 2 CPUs), above "
                             "0.10 CPU; the run still counts\n");
    free(out);
    out = render(report_noisy_count, &rs);
    assert_string_equal(out, "  1 of 3 runs noisy (other processes' CPU + steal above 0.10 CPU), "
                             "1 not known; noisy runs still count\n");
    free(out);
    rs.n = 1;
    out = render(report_noisy_count, &rs);
    assert_string_equal(out, "  0 of 1 runs noisy (other processes' CPU + steal above 0.10 CPU)\n");
    free(out);
    rs.n = 3;
    recs_free(&rs);
}

static void test_cut_short(void **state)
{
    struct recs rs = { 0 };
    struct run_record *r;
    char *out;

    (void)state;
    rec_add(&rs, "unix:/run/a.sock", 64, 100, 1000000000, 5000);
    out = render(report_cut_short, &rs);
    assert_string_equal(out, "");
    free(out);

    rs.r[0].res.interrupted = true;
    rs.r[0].res.window_ns = 1500000000;
    r = rec_add(&rs, "unix:@b", 64, 100, 250000000, 5000);
    r->res.interrupted = true;
    r->cut_by = "the time budget";
    r->cfg.mode = LOAD_CONNECT;
    out = render(report_cut_short, &rs);
    assert_has(out, "cut short: unix:/run/a.sock reuse 64 B: Ctrl-C ended it after 1.50 s of its "
                    "window; left out of summaries, comparisons and ratios\n");
    assert_has(out, "cut short: unix:@b connect 64 B: the time budget ended it after 0.25 s");
    free(out);
    recs_free(&rs);
}

/* Unobserved CPU and phases a reuse run never goes through are n/a, each with its reason. */
static void test_cost_table_na(void **state)
{
    struct recs rs = { 0 };
    struct run_record *r;
    char *out;

    (void)state;
    r = rec_add(&rs, "unix:/run/a.sock", 64, 1000, 1000000000, 5000);
    r->res.client_cpu_ns = 2500000; /* 2.5 µs per op */
    out = render(report_cost_table, &rs);
    assert_has(out, "    2.50      n/a      n/a      n/a");
    assert_has(out, "  n/a (not observed: interrupted before the window opened): server cpu/op, "
                    "system cpu/op\n");
    assert_has(out, "  n/a (reuse mode keeps its connections): connect p50, ttfb p50, response "
                    "p50, close p50\n");
    free(out);
    recs_free(&rs);
}

/* An observed counter that could not be read is n/a with its own reason, and names its row. */
static void test_cost_table_na_rows(void **state)
{
    struct recs rs = { 0 };
    struct run_record *r;
    char *out;

    (void)state;
    for (int i = 0; i < 3; i++) {
        r = rec_add(&rs,
                    i == 0   ? "unix:@a"
                    : i == 1 ? "unix:@b"
                             : "unix:@c",
                    64, 1000, 1000000000, 5000);
        r->observed = true;
        r->obs.system_busy_ns.ok = true;
        r->obs.system_busy_ns.v = 4000000; /* 4 µs per op */
        r->obs.server_cpu_ns.ok = i == 0;
        r->obs.server_cpu_ns.v = 1000000;
        if (i > 0)
            snprintf(r->obs.server_cpu_ns.why, sizeof(r->obs.server_cpu_ns.why),
                     "pid 4242 exited during the run");
    }
    out = render(report_cost_table, &rs);
    assert_has(out,
               "  n/a (pid 4242 exited during the run): server cpu/op of unix:@b and 1 more\n");
    assert_has(out, "    4.00");
    assert_lacks(out, "system cpu/op");
    free(out);
    recs_free(&rs);
}

/* The open-loop verdict: the rate asked, achieved, its share, SATURATED below 99 %. */
static void test_open_loop_verdict(void **state)
{
    struct recs rs = { 0 };
    struct run_record *r;
    char *out;

    (void)state;
    r = rec_add(&rs, "unix:@a", 64, 5000, 1000000000, 5000);
    r->cfg.rate = 10000;
    r->res.service = hist_new();
    assert_non_null(r->res.service);
    r = rec_add(&rs, "unix:@b", 64, 12000, 1000000000, 5000);
    r->cfg.rate = 12000;
    r->cfg.poisson = true;
    r->rate_share = 0.5;
    r->rate_basis = 24000;
    r->res.service = hist_new();
    assert_non_null(r->res.service);
    rec_add(&rs, "unix:@closed", 64, 5000, 1000000000, 5000); /* closed loop: not shown */
    out = render(report_open_loop, &rs);
    assert_has(out, "open loop, constant arrivals: unix:@a asked 10,000 ops/s, achieved 5,000, "
                    "kept up with 5,000 (50.0 %): SATURATED (below 99 %: invalid)\n");
    assert_has(out, "open loop, poisson arrivals: unix:@b asked 12,000 ops/s (50 % of 24,000 "
                    "ops/s, the cell's closed-loop run), achieved 12,000, kept up with 12,000 "
                    "(100.0 %)\n");
    assert_has(out, "from the intended send time");
    assert_has(out, "service (from the actual send)");
    assert_lacks(out, "unix:@closed");
    assert_true(report_saturated(&rs.r[0]));
    assert_false(report_saturated(&rs.r[1]));
    assert_false(report_saturated(&rs.r[2]));
    free(out);
    out = render(report_errors, &rs);
    assert_has(out, "saturated: unix:@a reuse 64 B: kept up with 5,000 of 10,000 ops/s (50.0 %, "
                    "below 99 %): invalid, left out of summaries, comparisons and ratios\n");
    assert_lacks(out, "unix:@b");
    free(out);
    recs_free(&rs);
}

/* The lab's 60 % headline: unix÷tcp of two open-loop runs, none when one is saturated. */
static void test_lab_headline(void **state)
{
    struct recs rs = { 0 };
    struct run_record *r;
    char *out;

    (void)state;
    for (int i = 0; i < 2; i++) {
        r = rec_add(&rs, i ? "unix:@u" : "tcp://127.0.0.1:9000", 64, 6000, 1000000000,
                    i ? 10000 : 20000);
        r->cfg.rate = 6000;
        r->rate_share = 0.6;
        r->rate_basis = 10000;
        r->res.service = hist_new();
        assert_non_null(r->res.service);
        hist_record(r->res.service, 1000);
    }
    out = render(report_lab_tables, &rs);
    assert_has(out, "  headline, reuse at 60 % of each one's maximum: unix÷tcp p99 0.50×");
    free(out);
    rs.r[1].res.ops = 5000; /* 83 % of its rate: saturated */
    out = render(report_lab_tables, &rs);
    assert_has(out, "  headline, reuse at 60 % of each one's maximum: unix÷tcp p99 - (no ratio: a "
                    "run is invalid, saturated or was cut short)\n");
    assert_lacks(out, "0.50×");
    free(out);
    recs_free(&rs);
}

/* The base of --rate N%: the probes' median and spread, or the --rate-base given. */
static void test_rate_base(void **state)
{
    static const double probes[] = { 9000, 11000, 10000 };
    struct rate_base b = { .probes = probes, .probe_ns = 3 * NS_PER_S };
    struct endpoint ep;
    struct hb_err err = { 0 };
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    (void)state;
    assert_non_null(f);
    assert_int_equal(endpoint_parse(&ep, "unix:@a", &err), 0);
    stats_summarize(probes, 3, &b.stat);
    b.ops_per_s = b.stat.median;
    report_rate_base(f, &ep, &b, 0.6);
    b = (struct rate_base){ .ops_per_s = 2000, .given = true };
    report_rate_base(f, &ep, &b, 0.5);
    assert_int_equal(fclose(f), 0);
    assert_has(buf, "rate base: unix:@a 10,000 ops/s, median of 3 closed-loop probes of 3.00 s "
                    "[9,000 – 11,000] ±10.0 %; open loop at 60 %: 6,000 ops/s\n");
    assert_has(buf, "rate base: unix:@a 2,000 ops/s (--rate-base); open loop at 50 %: 1,000 "
                    "ops/s\n");
    free(buf);
}

/* The lab's unix÷tcp row: the ratios of ops/s and CPU per op, n/a where a side has none. */
static void test_lab_ratio(void **state)
{
    struct recs rs = { 0 };
    struct run_record *t, *u;
    char *out, *l;

    (void)state;
    t = rec_add(&rs, "tcp://127.0.0.1:9000", 64, 1000, 1000000000, 5000);
    t->res.client_cpu_ns = 4000000; /* 4 µs per op */
    u = rec_add(&rs, "unix:/run/a.sock", 64, 2500, 1000000000, 5000);
    u->res.client_cpu_ns = 5000000; /* 2 µs per op */
    out = render(report_lab_tables, &rs);
    assert_has(out, "64 B echo round trips");
    l = line_with(out, "unix÷tcp");
    assert_has(l, "       2.50×");
    assert_has(l, "    0.50×");
    assert_has(l, "    1.00×"); /* the same latencies */
    assert_has(l, "     n/a");  /* server cpu/op: not observed */
    free(l);
    l = line_with(out, "  reuse    tcp ");
    assert_has(l, " 1,000 ");
    assert_has(l, "    4.00");
    free(l);
    free(out);

    u->res.interrupted = true;
    out = render(report_lab_tables, &rs);
    l = line_with(out, "unix÷tcp");
    assert_has(l, "(no ratio: a run is invalid or was cut short)");
    assert_lacks(l, "2.50×");
    free(l);
    free(out);
    recs_free(&rs);
}

/*
 * summary_print across repetitions: the cell's counts (valid of all, cut
 * short by what), median [min – max] per metric, µs for latencies, and the
 * comparison to the first cell; a cell without a valid run says so.
 */
static void test_summary_print(void **state)
{
    static const uint64_t ops[2][3] = { { 1000, 1200, 1100 }, { 2400, 2000, 2200 } };
    struct recs rs = { 0 };
    struct cell_summary cells[3];
    struct run_record *r;
    char *buf = NULL, want[160], num[48];
    size_t len = 0;
    FILE *f;

    (void)state;
    for (unsigned c = 0; c < 2; c++)
        for (unsigned k = 0; k < 3; k++) {
            r = rec_add(&rs, c == 0 ? "unix:@a" : "unix:@b", 64, ops[c][k], 1000000000, 5000000);
            r->cell = c;
            r->rep = k;
        }
    r = rec_add(&rs, "unix:@b", 64, 9000, 1000000000, 5000000);
    r->cell = 1;
    r->res.interrupted = true;
    r->cut_by = "the time budget";
    r = rec_add(&rs, "unix:@c", 64, 0, 1000000000, 5000000);
    r->cell = 2;
    assert_int_equal(summary_compute(rs.r, rs.n, 3, 1, cells), 0);
    assert_int_equal(cells[1].valid, 3);
    f = open_memstream(&buf, &len);
    assert_non_null(f);
    summary_print(f, "repetitions", cells, 3);
    assert_int_equal(fclose(f), 0);
    assert_has(buf, "\nrepetitions: median [min – max] ±SD of the valid runs\n");
    assert_has(buf, "unix:@a reuse (n=3 valid of 3)\n");
    assert_has(buf, "unix:@b reuse (n=3 valid of 4; 1 cut short by the time budget)\n");
    assert_has(buf, "  ops/s             1,100  [1,000 – 1,200]");
    assert_has(buf, "  ops/s             2,200  [2,000 – 2,400]");
    text_number(num, sizeof(num), (double)hist_percentile(rs.r[0].res.lat, 50) / 1000.0, 2);
    snprintf(want, sizeof(want), "  p50 µs     %12s", num);
    assert_has(buf, want);
    snprintf(want, sizeof(want), "   vs first: %s\n", cells[1].vs_first[METRIC_OPS_PER_S].text);
    assert_has(buf, want);
    assert_has(cells[1].vs_first[METRIC_OPS_PER_S].text, "n=3+3");
    /* the mean latency beside p50, with its own comparison */
    text_number(num, sizeof(num), hist_mean(rs.r[0].res.lat) / 1000.0, 2);
    snprintf(want, sizeof(want), "\n  mean µs    %12s", num);
    assert_has(buf, want);
    snprintf(want, sizeof(want), "   vs first: %s\n", cells[1].vs_first[METRIC_MEAN].text);
    assert_has(buf, want);
    /* 3 + 3 runs are never significant, yet the ratio and its interval are shown */
    assert_true(strncmp(cells[1].vs_first[METRIC_OPS_PER_S].text, "~ 2.00× [", 10) == 0);
    assert_has(cells[1].vs_first[METRIC_OPS_PER_S].text, "×, ");
    assert_has(buf,
               "unix:@c reuse (n=0 valid of 1)\n  no valid run: left out of every comparison\n");
    free(buf);
    recs_free(&rs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_table_numbers),  cmocka_unit_test(test_run_table_latency_units),
        cmocka_unit_test(test_run_table_no_ratio), cmocka_unit_test(test_errors_lines),
        cmocka_unit_test(test_cut_short),          cmocka_unit_test(test_cost_table_na),
        cmocka_unit_test(test_cost_table_na_rows), cmocka_unit_test(test_open_loop_verdict),
        cmocka_unit_test(test_rate_base),          cmocka_unit_test(test_lab_headline),
        cmocka_unit_test(test_run_table_no_op),    cmocka_unit_test(test_text_figures),
        cmocka_unit_test(test_lab_ratio),          cmocka_unit_test(test_summary_print),
        cmocka_unit_test(test_noisy_lines),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
