/*
 * test_runview: a run record read into typed figures (evidence/runview.c),
 * over a real run's evidence (tests/fixtures/evidence/run-view.jsonl:
 * `hopbench run http` in connect mode on a built-in server's TCP port and
 * Unix socket, with --service web=pid, --watch of the TCP port and a label
 * per endpoint), read through evidence_read; a record that lacks a key every
 * run has, holds one of another type, or is not an object is refused with the
 * key named; the writer's placeholder is told apart; run_view_fill reads what
 * a partial record holds and checks nothing; the figures --csv and compare
 * read (every latency figure, the phases in order, the open loop's, which
 * integers and flags a run holds, the metrics), also over an open loop's
 * evidence (tests/fixtures/evidence/pairs-a-open.json).
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

#include <jansson.h>

#include "evidence.h"
#include "evidence/runview.h"
#include "evidence/schema.h"

/* The fixture's runs, kept whole. */
static int keep(void *ctx, size_t idx, json_t *run, struct hb_err *err)
{
    UNUSED(idx);
    UNUSED(err);
    return json_array_append(ctx, run) == 0 ? 0 : -ENOMEM;
}

/* The runs of tests/fixtures/evidence/NAME (two each), and its head into *head when not NULL. */
static json_t *fixture_of(const char *name, json_t **head)
{
    const char *root = getenv("HOPBENCH_FIXTURES");
    char path[512];
    json_t *runs = json_array(), *h = NULL;
    struct evidence_reader r = { .take = keep, .ctx = runs };
    struct hb_err err = { 0 };

    snprintf(path, sizeof(path), "%s/evidence/%s", root != NULL ? root : "tests/fixtures", name);
    assert_int_equal(evidence_read(path, &r, &h, &err), 0);
    if (head != NULL)
        *head = h;
    else
        json_decref(h);
    assert_int_equal(json_array_size(runs), 2);
    return runs;
}

static json_t *fixture_runs(void)
{
    return fixture_of("run-view.jsonl", NULL);
}

static void test_tcp_run(void **state)
{
    json_t *runs = fixture_runs();
    struct run_view v;
    struct hb_err err = { 0 };
    const struct run_hop *w;

    UNUSED(state);
    assert_int_equal(run_view_of(json_array_get(runs, 0), &v, &err), 0);
    assert_int_equal(v.cell, 0);
    assert_string_equal(v.label, "web.tcp");
    assert_string_equal(v.transport, "tcp");
    assert_non_null(strstr(v.endpoint, "tcp://127.0.0.1:"));
    assert_int_equal(v.connections, 1);
    assert_int_equal(v.threads, 1);
    assert_true(v.valid);
    assert_false(v.interrupted);
    assert_false(v.saturated);
    assert_int_equal(v.ops, 6759);
    assert_int_equal(v.requests, 9393);
    assert_int_equal(v.errors_total, 0);
    assert_true(v.ops_per_s == 22530.0);
    assert_true(v.rate == 0);
    assert_true(v.latency.p50 == 24127 && v.latency.p99 == 261631 && v.latency.p999 == 1735679);
    assert_true(fabs(v.latency.mean - 38410.811066725844) < 1e-6);
    /* connect mode: the phases */
    assert_true(fabs(v.connect.mean - 14985.858854860186) < 1e-6);
    assert_true(fabs(v.close.mean - 5895.787394584998) < 1e-6);
    assert_false(isnan(v.response.mean));
    assert_true(fabs(v.client_cpu_ns_per_op - 21723.357005474183) < 1e-6);
    /* errors by kind (every kind, 0 included) and status classes, in the record's order */
    assert_int_equal(v.nerrors, 14);
    assert_string_equal(v.errors[2].kind, "timeout");
    assert_int_equal(v.nstatus, 6);
    assert_string_equal(v.status[2].kind, "2xx");
    assert_int_equal(v.status[2].n, 9393);
    /* the machine: the system's CPU, the other processes, noisy */
    assert_true(v.system_busy_ns == 562904898);
    assert_string_equal(v.system_source, "cpuacct");
    assert_true(v.cpus_allowed == 2 && v.window_ns == 300340848);
    assert_true(fabs(v.other_share - 0.4874038512403747) < 1e-12);
    assert_true(v.noisy);
    /* the service and the sum */
    assert_int_equal(v.nsvc, 1);
    assert_string_equal(v.svc[0].name, "web");
    assert_true(fabs(v.svc[0].cpu_ns_per_op - 16491.871430685012) < 1e-6);
    assert_true(v.svc[0].pss_end == 1231872);
    assert_true(isnan(v.svc[0].ws_end)); /* {"unavailable": ...}: a pid has no working set */
    assert_true(fabs(v.sum_ns_per_op - 38215.228436159196) < 1e-6);
    /* the loaded hop, the watched hop, the kernel's counters */
    assert_null(v.front.transport);
    assert_true(v.front.tw_server.start == 0 && v.front.tw_server.peak == 7428);
    assert_int_equal(v.nwatch, 1);
    w = run_view_watch(&v, "tcp");
    assert_non_null(w);
    assert_true(w->established.peak == 1 && w->listen_queue.peak == 0);
    assert_null(run_view_watch(&v, "unix"));
    assert_true(v.listen_overflows == 1);
    assert_false(v.agent);
    json_decref(runs);
}

static void test_unix_run(void **state)
{
    json_t *runs = fixture_runs();
    struct run_view v;
    struct hb_err err = { 0 };

    UNUSED(state);
    assert_int_equal(run_view_of(json_array_get(runs, 1), &v, &err), 0);
    assert_int_equal(v.cell, 1);
    assert_string_equal(v.label, "web.unix");
    assert_string_equal(v.transport, "unix");
    assert_int_equal(v.ops, 17581);
    /* a Unix socket's TIME_WAIT is {"unavailable": ...} */
    assert_true(isnan(v.front.tw_client.peak) && isnan(v.front.tw_server.start));
    assert_true(v.front.established.peak >= 0);
    assert_true(v.steal_share == 0);
    json_decref(runs);
}

/* Each key every run has, taken out of the first run: refused, the key named. */
static void test_required_keys(void **state)
{
    static const char *const need[] = { "cell",        "endpoint",  "transport",    "connections",
                                        "threads",     "ops",       "errors_total", "valid",
                                        "interrupted", "ops_per_s", "latency_ns" };
    json_t *runs = fixture_runs();

    UNUSED(state);
    for (size_t i = 0; i < ARRAY_LEN(need); i++) {
        json_t *run = json_deep_copy(json_array_get(runs, 0));
        struct run_view v;
        struct hb_err err = { 0 };
        char want[64];

        assert_int_equal(json_object_del(run, need[i]), 0);
        assert_int_equal(run_view_of(run, &v, &err), -EINVAL);
        snprintf(want, sizeof(want), "\"%s\"", need[i]);
        assert_non_null(strstr(err.msg, want));
        json_decref(run);
    }
    json_decref(runs);
}

static void test_wrong_types(void **state)
{
    json_t *runs = fixture_runs();
    struct run_view v;
    struct hb_err err = { 0 };
    json_t *run = json_deep_copy(json_array_get(runs, 0));
    json_t *junk = json_integer(3), *placeholder = json_pack("{s:s}", "error", "out of memory");

    UNUSED(state);
    json_object_set_new(run, "valid", json_string("yes"));
    assert_int_equal(run_view_of(run, &v, &err), -EINVAL);
    json_object_set_new(run, "valid", json_true());
    json_object_set_new(run, "cell", json_real(0.5));
    assert_int_equal(run_view_of(run, &v, &err), -EINVAL);
    json_object_set_new(run, "cell", json_integer(1));
    assert_int_equal(run_view_of(run, &v, &err), 0);
    assert_int_equal(v.cell, 1);
    assert_int_equal(run_view_of(junk, &v, &err), -EINVAL);
    assert_int_equal(run_view_of(placeholder, &v, &err), 1);
    json_decref(run);
    json_decref(junk);
    json_decref(placeholder);
    json_decref(runs);
}

/* run_view_fill checks nothing: what a record lacks is -1, NULL, 0 or NAN; the rest is read. */
static void test_fill_partial(void **state)
{
    json_t *run =
        json_pack("{s:f, s:{s:{s:s, s:f}, s:[{s:s, s:f}]}}", "client_cpu_ns_per_op", 4000.0,
                  "observed", "cpu", "server_source", "cgroup", "server_ns_per_op", 9000.0,
                  "services", "name", "redis", "cpu_ns_per_op", 7000.0);
    struct run_view v;

    UNUSED(state);
    assert_non_null(run);
    run_view_fill(run, &v);
    assert_int_equal(v.cell, -1);
    assert_null(v.endpoint);
    assert_null(v.transport);
    assert_false(v.valid);
    assert_int_equal(v.ops, 0);
    assert_true(isnan(v.ops_per_s) && isnan(v.latency.p50) && isnan(v.system_ns_per_op));
    assert_true(v.client_cpu_ns_per_op == 4000.0);
    assert_string_equal(v.server_source, "cgroup");
    assert_true(v.server_ns_per_op == 9000.0);
    assert_true(isnan(v.cgroup_ns_per_op));
    assert_int_equal(v.nsvc, 1);
    assert_string_equal(v.svc[0].name, "redis");
    assert_true(v.svc[0].cpu_ns_per_op == 7000.0 && isnan(v.svc[0].pss_end));
    json_decref(run);
}

/*
 * The figures a table prints (report/csv.c) and compare reads: how the run was
 * set up, its window, every latency figure, each phase in the record's order,
 * which integers and flags it holds, the metrics.
 */
static void test_table_figures(void **state)
{
    static const char *const phases[] = { "connect", "ttfb", "response", "close" };
    json_t *runs = fixture_runs();
    struct run_view v;
    struct hb_err err = { 0 };

    UNUSED(state);
    assert_int_equal(run_view_of(json_array_get(runs, 0), &v, &err), 0);
    assert_string_equal(v.proto, "http");
    assert_string_equal(v.mode, "connect");
    assert_string_equal(v.close_by, "client");
    assert_string_equal(v.wait, "epoll");
    assert_true(v.rep == 0 && v.size == 0 && v.pipeline == 1);
    assert_true(v.connects == 6759 && v.reconnects == 0);
    assert_true(v.duration_s == 0.3 && v.window_s == 0.3);
    assert_true(v.window_start == 1796573143.1614275);
    assert_true(v.latency.min == 17778 && v.latency.p90 == 59775);
    assert_true(v.latency.p9999 == 3133439 && v.latency.max == 3452593);
    assert_int_equal(v.nphase, 4);
    for (unsigned i = 0; i < 4; i++)
        assert_string_equal(v.phase[i].name, phases[i]);
    assert_true(v.phase[1].latency.p50 == 912 && v.phase[1].latency.p99 == 233343);
    assert_true(v.phase[3].latency.mean == v.close.mean);
    assert_true(isnan(v.server_pss_end) && isnan(v.cgroup_ws_end)); /* unavailable */
    assert_true(isnan(v.coloc_share));
    /* a closed loop: no rate, no saturated, no open-loop figures */
    assert_int_equal(v.have, RUN_HAVE_CELL | RUN_HAVE_CONNECTIONS | RUN_HAVE_THREADS |
                                 RUN_HAVE_OPS | RUN_HAVE_ERRORS_TOTAL | RUN_HAVE_VALID |
                                 RUN_HAVE_INTERRUPTED | RUN_HAVE_NOISY);
    assert_true(isnan(v.rate_share) && isnan(v.achieved_ops_per_s));
    assert_true(isnan(v.service_latency.p50));
    assert_ptr_equal(run_view_service(&v, "web"), &v.svc[0]);
    assert_null(run_view_service(&v, "db"));
    assert_string_equal(run_view_hop_transport(&v), "tcp");
    assert_true(run_view_metric(&v, METRIC_OPS_PER_S) == 22530.0);
    assert_true(run_view_metric(&v, METRIC_P50) == 24127);
    assert_true(run_view_metric(&v, METRIC_MEAN) == v.latency.mean);
    assert_true(run_view_metric(&v, METRIC_P99) == 261631);
    assert_true(run_view_metric(&v, METRIC_P999) == 1735679);
    assert_true(run_view_metric(&v, METRIC_CPU_PER_OP) == v.client_cpu_ns_per_op);
    json_decref(runs);
}

/* An open loop's figures (tests/fixtures/evidence/pairs-a-open.json, run with --pin none). */
static void test_open_loop(void **state)
{
    json_t *head = NULL, *runs = fixture_of("pairs-a-open.json", &head);
    struct run_view v;
    struct hb_err err = { 0 };

    UNUSED(state);
    assert_string_equal(evidence_doc_pin(head), "none");
    assert_int_equal(run_view_of(json_array_get(runs, 0), &v, &err), 0);
    assert_true(v.rate == 1000 && (v.have & RUN_HAVE_RATE) != 0);
    assert_true(fabs(v.achieved_ops_per_s - 1001.1327165952009) < 1e-9);
    assert_true(isnan(v.rate_share)); /* null */
    assert_false(v.saturated);
    assert_true((v.have & RUN_HAVE_SATURATED) != 0);
    assert_true(v.service_latency.p50 == 37343 && v.service_latency.p99 == 294911);
    assert_true((v.have & RUN_HAVE_NOISY) == 0); /* null: not observed */
    assert_int_equal(v.nphase, 4);               /* connect mode: connect, ttfb, response, close */
    assert_null(v.label);
    assert_string_equal(run_view_hop_transport(&v), v.transport);
    json_decref(runs);
    json_decref(head);
}

/* A partial record's memory, colocation, and flags and integers of another type: not held. */
static void test_fill_have(void **state)
{
    json_t *run =
        json_pack("{s:s, s:i, s:f, s:{s:{s:f}}, s:{s:{s:i, s:{s:s}}}}", "valid", "yes", "ops", -3,
                  "connections", 2.0, "placement", "colocated", "share", 0.25, "observed", "memory",
                  "server_pss_end", 2048, "cgroup_working_set_end", "unavailable", "no cgroup");
    struct run_view v;

    UNUSED(state);
    assert_non_null(run);
    run_view_fill(run, &v);
    assert_int_equal(v.have, 0);
    assert_false(v.valid);
    assert_int_equal(v.ops, 0);
    assert_int_equal(v.connections, 0);
    assert_true(v.coloc_share == 0.25);
    assert_true(v.server_pss_end == 2048 && isnan(v.cgroup_ws_end));
    assert_true(isnan(run_view_metric(&v, METRIC_P50)));
    assert_null(run_view_hop_transport(&v));
    assert_null(evidence_doc_pin(run));
    json_decref(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tcp_run),       cmocka_unit_test(test_unix_run),
        cmocka_unit_test(test_required_keys), cmocka_unit_test(test_wrong_types),
        cmocka_unit_test(test_fill_partial),  cmocka_unit_test(test_table_figures),
        cmocka_unit_test(test_open_loop),     cmocka_unit_test(test_fill_have),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
