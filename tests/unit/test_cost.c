/*
 * test_cost: the arithmetic of `hopbench cost` against hand computations. The
 * worked example is the Apache -> PHP-FPM study's: 97.2 us of CPU per request
 * over TCP, 72.7 us over the socket, so 24.5 us saved; 100,000 requests a
 * 30-day month save 2.45 s of CPU, 2.45 / 2,592,000 of one vCPU, that times
 * $25; one vCPU is saved at 1e9 / 24,500 = 40,816 requests/s; with 1 ms of
 * application work the saving is 24.5 / 1,097.2 = 2.23 % of the CPU.
 * Then the interval (the bootstrap of the ratio, carried to the saving) and
 * the grouping of evidence runs into cells by transport.
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
#include <string.h>

#include "cost.h"
#include "report/saving.h"
#include "stats.h"

/* |got - want| <= 1e-12 * |want| (or both 0), with a message that shows both. */
static void check_close(double got, double want, const char *what)
{
    if (!(fabs(got - want) <= 1e-12 * fabs(want)))
        fail_msg("%s: got %.17g, want %.17g", what, got, want);
}

/* ---- parsing ---- */

static void test_traffic_units(void **state)
{
    static const struct {
        const char *s;
        double per_month;
    } cases[] = {
        { "100k/month", 100e3 },           { "1M/day", 1e6 * 30 },
        { "40k/s", 40e3 * 86400 * 30 },    { "2.5G/month", 2.5e9 },
        { "90/min", 90.0 * 60 * 24 * 30 }, { "3/h", 3.0 * 24 * 30 },
        { ".5k/s", 500.0 * 2592000 },
    };
    struct hb_err err = { 0 };
    struct cost_traffic t;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(cost_traffic_parse(cases[i].s, &t, &err), 0);
        check_close(t.per_month, cases[i].per_month, cases[i].s);
        assert_string_equal(t.text, cases[i].s);
    }
    assert_int_equal(cost_traffic_parse("40k/s", &t, &err), 0);
    check_close(cost_traffic_per_s(&t), 40e3, "40k/s per second");
    assert_int_equal(cost_traffic_parse("100k/month", &t, &err), 0);
    check_close(cost_traffic_per_s(&t), 100e3 / 2592000, "100k/month per second");
}

static void test_traffic_bad(void **state)
{
    static const char *const bad[] = { "",         "k/s",   "100",    "100/week", "100x/s",
                                       "-1/s",     "0/s",   "0.0k/s", "1e3/s",    "1..5/s",
                                       "inf/s",    "nan/s", "100k/",  "100kk/s",  " 1/s",
                                       "1/s ",     "+1/s",  "0x10/s", "1/S",      "1/months",
                                       "1m/month", "./s" };
    struct hb_err err = { 0 };
    struct cost_traffic t;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err.msg[0] = '\0';
        if (cost_traffic_parse(bad[i], &t, &err) != -EINVAL) fail_msg("'%s' was accepted", bad[i]);
        assert_true(strlen(err.msg) > 0);
        assert_null(strchr(err.msg, '\n'));
    }
    assert_int_equal(cost_traffic_parse("1/week", &t, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "unknown unit 'week'"));
}

static void test_app_work(void **state)
{
    static const struct {
        const char *s;
        double ns;
    } cases[] = { { "1ms", 1e6 }, { "10ms", 1e7 },  { "50ms", 5e7 },  { "500us", 5e5 },
                  { "7µs", 7e3 }, { "0.05s", 5e7 }, { "120ns", 120 }, { "0ms", 0 } };
    static const char *const bad[] = { "1", "1m", "ms", "-1ms", "1 ms", "1msec", "", "1e3us" };
    struct hb_err err = { 0 };
    double ns;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(cost_app_work_parse(cases[i].s, &ns, &err), 0);
        if (cases[i].ns == 0)
            assert_true(ns == 0);
        else
            check_close(ns, cases[i].ns, cases[i].s);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (cost_app_work_parse(bad[i], &ns, &err) != -EINVAL)
            fail_msg("'%s' was accepted", bad[i]);
    assert_int_equal(cost_app_work_parse("5", &ns, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "needs a unit"));
}

/* ---- the study's example, by hand ---- */

static void test_study_example(void **state)
{
    const double tcp[] = { 97200 }, uds[] = { 72700 };
    struct cost_saving s;
    struct cost_range cpu, share, usd, rate;

    (void)state;
    assert_int_equal(cost_saving_of(tcp, 1, uds, 1, 1, &s), 0);
    check_close(s.tcp, 97200, "tcp median");
    check_close(s.uds, 72700, "unix median");
    check_close(s.saved.v, 24500, "saved ns");
    /* one run per side: no interval */
    assert_false(cost_range_has_interval(s.saved));

    cpu = cost_month_cpu_s(s.saved, 100e3);
    check_close(cpu.v, 2.45, "CPU s per month at 100k");
    check_close(cost_month_cpu_s(s.saved, 100e6).v, 2450, "at 100M: 41 min");
    share = cost_vcpu_share(cpu);
    check_close(share.v, 2.45 / 2592000, "share of a vCPU");
    usd = cost_price(share, 25);
    check_close(usd.v, 2.45 / 2592000 * 25, "value at $25");
    assert_false(cost_range_has_interval(usd));

    rate = cost_breakeven_rate(s.saved);
    check_close(rate.v, 1e9 / 24500, "one vCPU saved at 40,816 req/s");
    /* and that rate for a month saves exactly one vCPU-month */
    check_close(cost_vcpu_share(cost_month_cpu_s(s.saved, rate.v * COST_MONTH_S)).v, 1,
                "break-even is one vCPU");

    check_close(cost_diluted(s.saved, s.tcp, 0).v, 24500.0 / 97200, "no app work: 25 %");
    check_close(cost_diluted(s.saved, s.tcp, 1e6).v, 24500.0 / 1097200, "1 ms: 2.2 %");
    check_close(cost_diluted(s.saved, s.tcp, 1e7).v, 24500.0 / 10097200, "10 ms: 0.24 %");
    check_close(cost_diluted(s.saved, s.tcp, 5e7).v, 24500.0 / 50097200, "50 ms: 0.05 %");
    assert_true(isnan(cost_diluted(s.saved, 0, 0).v));
}

/* Where the socket costs more, every figure says so by its sign. */
static void test_unix_costs_more(void **state)
{
    const double tcp[] = { 40000 }, uds[] = { 45000 };
    struct cost_saving s;

    (void)state;
    assert_int_equal(cost_saving_of(tcp, 1, uds, 1, 1, &s), 0);
    check_close(s.saved.v, -5000, "saved");
    check_close(cost_month_cpu_s(s.saved, 1e6).v, -5, "CPU per month");
    check_close(cost_price(cost_vcpu_share(cost_month_cpu_s(s.saved, 1e6)), 10).v,
                -5.0 / 2592000 * 10, "price");
    check_close(cost_breakeven_rate(s.saved).v, 200000, "costs a vCPU more at 200k req/s");
    check_close(cost_diluted(s.saved, s.tcp, 0).v, -0.125, "dilution");
}

static void test_median_of_reps(void **state)
{
    const double tcp[] = { 10, 14, 12 }, uds[] = { 9, 8, 7, 100 };
    struct cost_saving s;

    (void)state;
    assert_int_equal(cost_saving_of(tcp, 3, uds, 4, 1, &s), 0);
    check_close(s.tcp, 12, "median of 10 14 12");
    check_close(s.uds, 8.5, "median of 7 8 9 100");
    check_close(s.saved.v, 3.5, "saved");
    assert_int_equal(s.n_tcp, 3);
    assert_int_equal(s.n_uds, 4);
}

/* ---- intervals ---- */

static void test_range_scale(void **state)
{
    struct cost_range r = { 2, 1, 3 }, o;

    (void)state;
    o = cost_range_scale(r, 10);
    assert_true(o.v == 20 && o.lo == 10 && o.hi == 30);
    o = cost_range_scale(r, -1);
    assert_true(o.v == -2 && o.lo == -3 && o.hi == -1);
    o = cost_range_scale((struct cost_range){ 2, NAN, NAN }, 5);
    assert_true(o.v == 10 && !cost_range_has_interval(o));
}

/* The interval is the bootstrap of the ratio, carried to tcp (1 - r), and reproducible. */
static void test_interval_mapping(void **state)
{
    const double tcp[] = { 100, 104, 98, 101, 103 }, uds[] = { 80, 83, 79, 85, 81 };
    struct cost_saving s, again;
    double r, lo, hi;
    struct cost_range m, share, usd, dil;

    (void)state;
    assert_int_equal(cost_saving_of(tcp, 5, uds, 5, 7, &s), 0);
    assert_int_equal(
        stats_bootstrap_ratio(tcp, 5, uds, 5, COST_BOOTSTRAP, COST_LEVEL, 7, &r, &lo, &hi), 0);
    check_close(s.saved.v, 101 - 81, "point");
    check_close(s.saved.lo, 101 * (1 - hi), "low end from the ratio's high end");
    check_close(s.saved.hi, 101 * (1 - lo), "high end from the ratio's low end");
    assert_true(s.saved.lo <= s.saved.v && s.saved.v <= s.saved.hi);
    assert_true(s.saved.lo < s.saved.hi);

    assert_int_equal(cost_saving_of(tcp, 5, uds, 5, 7, &again), 0);
    assert_memory_equal(&s.saved, &again.saved, sizeof(s.saved));
    /* separated sides: significant (p = 2/252), so priced */
    assert_true(s.significant);
    check_close(s.p, 2.0 / 252, "Mann-Whitney p");
    /* 3 runs a side, each side's tied: the normal approximation's p is 0.047, but no exact
     * test of 3 + 3 runs goes below 0.1: never significant, never priced */
    {
        const double t3[] = { 100, 100, 100 }, u3[] = { 50, 50, 50 };
        struct cost_saving few;
        assert_int_equal(cost_saving_of(t3, 3, u3, 3, 7, &few), 0);
        assert_true(few.p < 0.05);
        assert_false(few.significant);
    }
    /* overlapping ones are not: no price, whatever the interval's ends */
    {
        const double t2[] = { 100, 104, 98, 101, 103 }, u2[] = { 99, 105, 97, 102, 100 };
        struct cost_saving ns;
        assert_int_equal(cost_saving_of(t2, 5, u2, 5, 7, &ns), 0);
        assert_false(ns.significant);
        assert_true(ns.p > 0.05);
    }

    /* every derived figure is the saving times a constant: so are its ends */
    m = cost_month_cpu_s(s.saved, 3e6);
    check_close(m.lo, s.saved.lo * 3e6 / 1e9, "month lo");
    check_close(m.hi, s.saved.hi * 3e6 / 1e9, "month hi");
    share = cost_vcpu_share(m);
    usd = cost_price(share, 40);
    check_close(usd.lo, s.saved.lo * 3e6 / 1e9 / 2592000 * 40, "price lo");
    check_close(usd.hi, s.saved.hi * 3e6 / 1e9 / 2592000 * 40, "price hi");
    dil = cost_diluted(s.saved, s.tcp, 1000);
    check_close(dil.lo, s.saved.lo / 1101, "dilution lo");
    check_close(dil.hi, s.saved.hi / 1101, "dilution hi");
}

/* Tied runs: every resample's ratio is the point's, and tcp (1 - uds / tcp) rounds to
 * 6680.0000000000009 where tcp - uds is 6680; the interval still holds the point. */
static void test_interval_ties(void **state)
{
    const double tcp[] = { 10010, 10010 }, uds[] = { 3330, 3330 };
    struct cost_saving s;

    (void)state;
    assert_int_equal(cost_saving_of(tcp, 2, uds, 2, 1, &s), 0);
    assert_true(cost_range_has_interval(s.saved));
    assert_true(s.saved.v == 6680);
    assert_true(s.saved.lo <= s.saved.v && s.saved.v <= s.saved.hi);
    check_close(s.saved.lo, 6680, "low end");
    check_close(s.saved.hi, 6680, "high end");
}

static void test_no_interval(void **state)
{
    const double two[] = { 100, 110 }, one[] = { 80 }, zero[] = { 0, 5 };
    const double inf[] = { INFINITY };
    struct cost_saving s;

    (void)state;
    assert_int_equal(cost_saving_of(two, 2, one, 1, 1, &s), 0);
    assert_false(cost_range_has_interval(s.saved));
    check_close(s.saved.v, 25, "saved");
    /* a ratio needs values > 0: a 0 gives no interval, not a wrong one */
    assert_int_equal(cost_saving_of(two, 2, zero, 2, 1, &s), 0);
    assert_false(cost_range_has_interval(s.saved));
    assert_int_equal(cost_saving_of(two, 0, one, 1, 1, &s), -EINVAL);
    assert_int_equal(cost_saving_of(inf, 1, one, 1, 1, &s), -EINVAL);
}

static void test_breakeven_interval(void **state)
{
    struct cost_range r;

    (void)state;
    r = cost_breakeven_rate((struct cost_range){ 20, 10, 40 });
    check_close(r.v, 5e7, "point");
    check_close(r.lo, 2.5e7, "the largest saving, the lowest rate");
    check_close(r.hi, 1e8, "the smallest saving, the highest rate");
    r = cost_breakeven_rate((struct cost_range){ -20, -40, -10 });
    check_close(r.lo, 2.5e7, "costs more: lo");
    check_close(r.hi, 1e8, "costs more: hi");
    r = cost_breakeven_rate((struct cost_range){ 5, -5, 20 });
    check_close(r.lo, 5e7, "straddling 0: lo");
    assert_true(isinf(r.hi));
    r = cost_breakeven_rate((struct cost_range){ 0, NAN, NAN });
    assert_true(isinf(r.v) && !cost_range_has_interval(r));
}

/* ---- cells ---- */

static json_t *run_of(const char *ep, const char *transport, const char *mode, double client,
                      double server, bool valid)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:b, s:b, s:f, s:{s:f, s:f}, "
                     "s:{s:{s:s, s:f, s:f, s:f}}}",
                     "proto", "echo", "endpoint", ep, "transport", transport, "mode", mode, "size",
                     64, "connections", 1, "pipeline", 1, "valid", valid, "interrupted", 0,
                     "client_cpu_ns_per_op", client, "latency_ns", "p50", 3 * client, "mean",
                     4 * client, "observed", "cpu", "server_source", "pids", "server_ns_per_op",
                     server, "client_plus_server_ns_per_op", client + server, "system_ns_per_op",
                     2 * server);
}

static void add(struct cost_set *s, json_t *run)
{
    struct hb_err err = { 0 };

    assert_non_null(run);
    if (cost_set_add(s, run, &err) != 0) fail_msg("cost_set_add: %s", err.msg);
    json_decref(run);
}

/* run_of with a label. */
static json_t *labelled(const char *label, const char *ep, const char *transport, double client)
{
    json_t *run = run_of(ep, transport, "reuse", client, 10 * client, true);

    json_object_set_new(run, "label", json_string(label));
    return run;
}

/*
 * NAME.tcp and NAME.unix make the cell NAME, whatever the addresses, and name
 * the side whatever the client's endpoint (a stack's web server in front: both
 * TCP, the backend differs); other labels leave a run in the unlabelled cell
 * on its endpoint's transport, where two of them on a side mix it.
 */
static void test_cells_by_label(void **state)
{
    struct cost_set s = { 0 };
    const struct cost_cell *c;

    (void)state;
    add(&s, labelled("set.tcp", "tcp://127.0.0.1:1", "tcp", 10));
    add(&s, labelled("set.unix", "unix:/a", "unix", 8));
    add(&s, labelled("get.tcp", "tcp://127.0.0.1:1", "tcp", 20));
    add(&s, labelled("get.unix", "unix:/a", "unix", 16));
    add(&s, labelled("set.tcp", "tcp://127.0.0.1:2", "tcp", 11)); /* a second invocation */
    add(&s, labelled("set.unix", "unix:/b", "unix", 9));
    add(&s, labelled("front", "tcp://127.0.0.1:1", "tcp", 5));
    add(&s, labelled("back", "unix:/a", "unix", 4));
    add(&s, labelled("other", "tcp://127.0.0.1:1", "tcp", 6));
    add(&s, labelled("set.unix", "tcp://127.0.0.1:3", "tcp", 7)); /* a unix backend behind tcp */

    assert_int_equal(s.ncells, 3);
    c = &s.cells[0];
    assert_string_equal(c->key.label, "set");
    assert_string_equal(c->key.endpoint, "");
    assert_string_equal(c->label[COST_TCP], "set.tcp");
    assert_string_equal(c->label[COST_UDS], "set.unix");
    assert_true(c->runs[COST_TCP] == 2 && c->runs[COST_UDS] == 3);
    assert_false(c->mixed[COST_TCP] || c->mixed[COST_UDS]);
    assert_true(c->several_endpoints[COST_TCP] && c->several_endpoints[COST_UDS]);
    assert_int_equal(cost_cell_series(c, "client")->n[COST_TCP], 2);
    assert_int_equal(cost_cell_series(c, "client")->n[COST_UDS], 3);
    assert_true(cost_cell_series(c, "client")->v[COST_UDS][2] == 7);
    c = &s.cells[1];
    assert_string_equal(c->key.label, "get");
    assert_true(c->runs[COST_TCP] == 1 && c->runs[COST_UDS] == 1);
    assert_false(c->several_endpoints[COST_TCP]);
    c = &s.cells[2];
    assert_string_equal(c->key.label, "");
    assert_string_equal(c->label[COST_TCP], "front");
    assert_string_equal(c->label[COST_UDS], "back");
    assert_true(c->runs[COST_TCP] == 2 && c->runs[COST_UDS] == 1);
    assert_true(c->mixed[COST_TCP]);
    assert_false(c->mixed[COST_UDS]);
    cost_set_release(&s);
}

/* run_of with --service figures: web (3x client), server (a name of cost's own), their sum. */
static json_t *with_services(const char *label, const char *transport, double client)
{
    json_t *run = labelled(label, "tcp://127.0.0.1:1", transport, client);
    json_t *obs = json_object_get(run, "observed");

    json_object_set_new(obs, "services",
                        json_pack("[{s:s, s:f}, {s:s, s:f}, {s:s, s:{s:s}}]", "name", "web",
                                  "cpu_ns_per_op", 3 * client, "name", "server", "cpu_ns_per_op",
                                  5 * client, "name", "gone", "cpu_ns_per_op", "unavailable",
                                  "exited"));
    json_object_set_new(obs, "services_total", json_pack("{s:f}", "sum_ns_per_op", 9 * client));
    return run;
}

/* Each --service is a series of its own, named after it; a name of cost's own is prefixed. */
static void test_service_series(void **state)
{
    struct cost_set s = { 0 };
    const struct cost_cell *c;
    const struct cost_series *web, *srv, *sum;

    (void)state;
    add(&s, with_services("front.tcp", "tcp", 10));
    add(&s, with_services("front.unix", "tcp", 8));
    assert_int_equal(s.ncells, 1);
    c = &s.cells[0];
    web = cost_cell_series(c, "web");
    srv = cost_cell_series(c, "service server");
    sum = cost_cell_series(c, "client+services");
    assert_non_null(web);
    assert_non_null(srv);
    assert_non_null(sum);
    assert_null(cost_cell_series(c, "gone"));
    assert_true(web->kind == COST_CPU && web->n[COST_TCP] == 1 && web->n[COST_UDS] == 1);
    check_close(web->v[COST_TCP][0], 30, "web tcp");
    check_close(web->v[COST_UDS][0], 24, "web unix");
    check_close(srv->v[COST_UDS][0], 40, "service server unix");
    check_close(sum->v[COST_TCP][0], 90, "client+services tcp");
    /* the --server-pid figure keeps its own name */
    check_close(cost_cell_series(c, "server")->v[COST_TCP][0], 100, "server tcp");
    cost_set_release(&s);
}

/* The text of line in buf after prefix, up to its end (empty when no line starts so). */
static void line_after(char *out, size_t cap, const char *buf, const char *prefix)
{
    const char *l = strstr(buf, prefix), *end;

    out[0] = '\0';
    if (l == NULL) return;
    l += strlen(prefix);
    end = strchr(l, '\n');
    snprintf(out, cap, "%.*s", (int)(end ? end - l : (long)strlen(l)), l);
}

/*
 * The stack's short form prices a month only where report_saving_table (what
 * `hopbench cost` prints) does: the key figure, client+server here, its 50 us
 * saved per request at 1k/s sustained is 2.592e9 requests a month, 36.0 h of
 * CPU, 5 % of a vCPU: $1.2 at $25 per vCPU-month, in the words of cost's row
 * for 1k/s; the server's significant saving its vCPU rate alone, as cost's
 * line for it; the client's, which does not differ, not priced at all.
 */
static void test_brief_month(void **state)
{
    struct cost_plan plan = { .price_usd = 25, .seed = 1, .ntraffic = 1 };
    struct cost_set s = { 0 };
    struct hb_err err = { 0 };
    char *buf = NULL, *table = NULL, key[1024], server[1024], row[1024], want[1200];
    size_t len = 0;
    FILE *f;

    (void)state;
    assert_int_equal(cost_traffic_parse("1k/s", &plan.traffic[0], &err), 0);
    for (int i = 0; i < 5; i++) { /* 5 + 5 runs apart: p = 0.008; client 10 us, server 100 */
        add(&s, labelled("hop.tcp", "tcp://127.0.0.1:1", "tcp", 10000 + 10 * i));
        json_t *u = labelled("hop.unix", "unix:/s", "unix", 10000 + 10 * i);
        json_t *cpu = json_object_get(json_object_get(u, "observed"), "cpu");
        json_object_set_new(cpu, "server_ns_per_op", json_real(50000 + 100 * i)); /* 50 us */
        json_object_set_new(cpu, "client_plus_server_ns_per_op", json_real(60000 + 110 * i));
        add(&s, u);
    }
    f = open_memstream(&buf, &len);
    assert_non_null(f);
    report_saving_brief(f, "hop", &s, &plan);
    assert_int_equal(fclose(f), 0);
    f = open_memstream(&table, &len);
    assert_non_null(f);
    report_saving_table(f, "x.jsonl", &s, &plan);
    assert_int_equal(fclose(f), 0);
    print_message("%s\n%s", buf, table);

    /* the key figure: its rate, then its month at 1k/s, by hand */
    line_after(key, sizeof(key), buf, "   cpu client+server: saved 50.0 ");
    assert_non_null(strstr(key, "; one whole vCPU is saved at "));
    assert_non_null(strstr(key, "; at 1k/s: 36.0 "));
    assert_non_null(strstr(key, " h of CPU a month, $1.2 "));
    assert_non_null(strstr(key, " a month at $25/vCPU-month"));
    /* and as cost prints them: the rate under the month's table, the month in its 1k/s row */
    const char *rate = strstr(key, "one whole vCPU"), *at = strstr(key, "; at 1k/s: ");
    snprintf(want, sizeof(want), "\n   %.*s\n", (int)(at - rate), rate);
    assert_non_null(strstr(table, want));
    line_after(row, sizeof(row), table, "   1k/s ");
    const char *cpu_t = at + strlen("; at 1k/s: "), *of = strstr(cpu_t, " of CPU a month, ");
    snprintf(want, sizeof(want), "%.*s", (int)(of - cpu_t), cpu_t);
    assert_non_null(strstr(row, want));
    const char *usd_t = of + strlen(" of CPU a month, "), *per = strstr(usd_t, " a month at $");
    snprintf(want, sizeof(want), " %.*s", (int)(per - usd_t), usd_t);
    assert_true(strlen(row) > strlen(want) && strcmp(row + strlen(row) - strlen(want), want) == 0);

    /* the server's significant saving: its rate, as cost's own line, no month */
    line_after(server, sizeof(server), buf, "   cpu server: saved 50.0 ");
    assert_null(strstr(server, "a month"));
    rate = strstr(server, "one whole vCPU is saved at ");
    assert_non_null(rate);
    snprintf(want, sizeof(want), "\n   cpu server: %s\n", rate);
    assert_non_null(strstr(table, want));
    /* the client's CPU does not differ: not priced, no month */
    line_after(key, sizeof(key), buf, "   cpu client: ");
    assert_non_null(strstr(key, "not priced"));
    assert_null(strstr(key, "a month"));
    free(buf);
    free(table);
    cost_set_release(&s);
}

static void test_cells(void **state)
{
    struct cost_set s = { 0 };
    const struct cost_cell *c;
    const struct cost_series *ser;
    struct hb_err err = { 0 };
    json_t *junk;

    (void)state;
    add(&s, run_of("tcp://127.0.0.1:1", "tcp", "reuse", 10, 100, true));
    add(&s, run_of("unix:/a", "unix", "reuse", 8, 70, true));
    add(&s, run_of("tcp://127.0.0.1:1", "tcp", "reuse", 12, 110, true));
    add(&s, run_of("unix:/a", "unix", "reuse", 1, 1, false)); /* invalid: does not count */
    add(&s, run_of("tcp://127.0.0.1:1", "tcp", "connect", 30, 300, true));
    add(&s, run_of("tcp://127.0.0.1:2", "tcp", "connect", 31, 301, true)); /* a 2nd endpoint */
    add(&s, json_pack("{s:s}", "error", "this run could not be encoded as JSON"));

    assert_int_equal(s.ncells, 2);
    c = &s.cells[0];
    assert_string_equal(c->key.mode, "reuse");
    assert_string_equal(c->endpoint[COST_TCP], "tcp://127.0.0.1:1");
    assert_string_equal(c->endpoint[COST_UDS], "unix:/a");
    assert_int_equal(c->runs[COST_TCP], 2);
    assert_int_equal(c->runs[COST_UDS], 2);
    assert_int_equal(c->counted[COST_UDS], 1);
    assert_false(c->mixed[COST_TCP] || c->mixed[COST_UDS]);
    ser = cost_cell_series(c, "server");
    assert_non_null(ser);
    assert_int_equal(ser->n[COST_TCP], 2);
    assert_true(ser->v[COST_TCP][0] == 100 && ser->v[COST_TCP][1] == 110);
    assert_true(ser->n[COST_UDS] == 1 && ser->v[COST_UDS][0] == 70);
    ser = cost_cell_series(c, "client+server");
    assert_true(ser != NULL && ser->v[COST_TCP][1] == 122);
    assert_int_equal(cost_cell_series(c, "system")->kind, COST_CPU);
    assert_int_equal(cost_cell_series(c, "p50")->kind, COST_LATENCY);
    assert_null(cost_cell_series(c, "server cgroup")); /* not in these runs */
    assert_true(s.cells[1].mixed[COST_TCP]);
    assert_null(s.cells[1].endpoint[COST_UDS]);

    junk = json_string("not a run");
    assert_int_equal(cost_set_add(&s, junk, &err), -EINVAL);
    json_decref(junk);
    junk = json_pack("{s:s}", "endpoint", "tcp://127.0.0.1:1");
    assert_int_equal(cost_set_add(&s, junk, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "lacks"));
    json_decref(junk);
    cost_set_release(&s);
    assert_int_equal(s.ncells, 0);
}

/*
 * What cost prints and writes: a reuse cell of 5 runs a side whose CPU does
 * not overlap is priced; a connect cell of 5 interleaved runs a side is not
 * (said to be no significant difference, with p and n), and the bottom line
 * is the reuse cell's client+server.
 */
static void test_priced_only_significant(void **state)
{
    struct cost_set s = { 0 };
    struct cost_plan p = { .price_usd = 25, .seed = 1 };
    struct hb_err err = { 0 };
    json_t *doc, *figs, *f;
    char *text = NULL;
    size_t len = 0, i;
    FILE *out;

    (void)state;
    assert_int_equal(cost_traffic_parse("1M/day", &p.traffic[0], &err), 0);
    p.ntraffic = 1;
    for (int k = 0; k < 5; k++) {
        add(&s, run_of("tcp://127.0.0.1:1", "tcp", "reuse", 10 + k, 100 + k, true));
        add(&s, run_of("unix:/a", "unix", "reuse", 5 + k, 70 + k, true));
        /* tcp 30, 32, ... 38; unix 31, 33, ... 39: p = 0.69 */
        add(&s, run_of("tcp://127.0.0.1:1", "tcp", "connect", 30 + 2 * k, 300 + 20 * k, true));
        add(&s, run_of("unix:/a", "unix", "connect", 31 + 2 * k, 310 + 20 * k, true));
    }
    doc = report_saving_json("x.json", &s, &p);
    assert_non_null(doc);
    assert_true(json_is_true(json_object_get(json_object_get(doc, "bottom_line"), "priced")));
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(doc, "bottom_line"), "figure")),
        "client+server");
    assert_non_null(strstr(
        json_string_value(json_object_get(json_object_get(doc, "bottom_line"), "cell")), "reuse"));
    figs = json_object_get(json_array_get(json_object_get(doc, "cells"), 0), "figures");
    json_array_foreach(figs, i, f)
    {
        if (strcmp(json_string_value(json_object_get(f, "kind")), "cpu") != 0) continue;
        assert_true(json_is_true(json_object_get(f, "priced")));
        assert_true(json_is_array(json_object_get(f, "per_month")));
    }
    figs = json_object_get(json_array_get(json_object_get(doc, "cells"), 1), "figures");
    json_array_foreach(figs, i, f)
    {
        if (strcmp(json_string_value(json_object_get(f, "kind")), "cpu") != 0) continue;
        assert_true(json_is_false(json_object_get(f, "priced")));
        assert_true(json_is_null(json_object_get(f, "per_month")));
        assert_true(json_is_null(json_object_get(f, "vcpu_saved_at_requests_per_s")));
        assert_true(json_is_null(json_object_get(f, "app_work")));
        assert_true(json_real_value(json_object_get(f, "p")) > 0.05);
        assert_non_null(strstr(json_string_value(json_object_get(f, "not_priced")),
                               "no significant difference (p=0.69, n=5+5): not priced"));
    }
    json_decref(doc);
    out = open_memstream(&text, &len);
    assert_non_null(out);
    report_saving_table(out, "x.json", &s, &p);
    fclose(out);
    assert_non_null(strstr(text, "\nbottom line: unix saves "));
    assert_non_null(strstr(text, "   cpu server: no significant difference (p=0.69, n=5+5): "
                                 "not priced\n"));
    /* the connect cell, last: nothing priced in it */
    assert_null(strstr(strstr(text, "== echo connect"), "per month"));
    assert_null(strstr(strstr(text, "== echo connect"), "vCPU is saved"));
    free(text);
    cost_set_release(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_traffic_units),
        cmocka_unit_test(test_traffic_bad),
        cmocka_unit_test(test_app_work),
        cmocka_unit_test(test_study_example),
        cmocka_unit_test(test_unix_costs_more),
        cmocka_unit_test(test_median_of_reps),
        cmocka_unit_test(test_range_scale),
        cmocka_unit_test(test_interval_mapping),
        cmocka_unit_test(test_interval_ties),
        cmocka_unit_test(test_no_interval),
        cmocka_unit_test(test_breakeven_interval),
        cmocka_unit_test(test_cells),
        cmocka_unit_test(test_cells_by_label),
        cmocka_unit_test(test_service_series),
        cmocka_unit_test(test_priced_only_significant),
        cmocka_unit_test(test_brief_month),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
