/*
 * test_procs: run --procs's pure parts. procs_share splits a load's
 * connections, threads, count and rate over N processes so that the shares
 * add up to the whole and number the connections contiguously; a child's
 * result, written by procs_result_json and read by procs_result_add, adds
 * into the parent's exactly (every counter, every histogram counter by
 * counter, the window the longest, the child's own figures kept apart); a
 * result with a field missing, or one that says the load could not run, is
 * refused with a line. What run picks when not told: as many source
 * addresses as keep each under 7/8 of the port range's even half (connect()
 * takes those first; past them each connect scans them all), as few load
 * processes as fit the hard fd limit.
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
#include <string.h>

#include "endpoint.h"
#include "hist.h"
#include "procs.h"
#include "proto/echo.h"
#include "registry.h"
#include "run.h"

static void test_share(void **state)
{
    static const unsigned conns[] = { 3, 7, 1000, 50000, 50001 };
    struct load_cfg cfg = { .codec = &echo_codec, .count = 100003, .rate = 30000 };

    (void)state;
    for (size_t c = 0; c < sizeof(conns) / sizeof(conns[0]); c++)
        for (unsigned n = 1; n <= 3 && n <= conns[c]; n++) {
            unsigned next_conn = 0, next_thread = 0, conns_sum = 0, threads_sum = 0;
            uint64_t count_sum = 0;
            double rate_sum = 0;

            cfg.conns = conns[c];
            cfg.threads = n + 1 <= conns[c] ? n + 1 : n;
            for (unsigned k = 0; k < n; k++) {
                struct load_cfg part;
                unsigned first;
                procs_share(&cfg, k, n, &part, &first);
                assert_int_equal(part.conn_base, next_conn); /* contiguous */
                assert_int_equal(first, next_thread);
                assert_true(part.conns >= cfg.conns / n && part.conns <= cfg.conns / n + 1);
                assert_true(part.threads >= 1 && part.threads <= part.conns);
                next_conn += part.conns;
                next_thread += part.threads;
                conns_sum += part.conns;
                threads_sum += part.threads;
                count_sum += part.count;
                rate_sum += part.rate;
            }
            assert_int_equal(conns_sum, cfg.conns);
            assert_int_equal(threads_sum, cfg.threads);
            assert_int_equal(count_sum, cfg.count); /* exactly: no op lost or added */
            assert_true(rate_sum > cfg.rate * 0.999999 && rate_sum < cfg.rate * 1.000001);
        }
}

/* A result of `ops` ops of latency base, base+7, ... ns and a window of window_ns. */
static void fake_result(struct load_result *r, const struct load_cfg *cfg, uint64_t ops,
                        uint64_t base, uint64_t window_ns)
{
    load_result_init(r, cfg);
    for (uint64_t i = 0; i < ops; i++)
        hist_record(r->lat, base + i * 7);
    r->ops = ops;
    r->requests = ops + 3;
    r->replies = ops + 1;
    r->errors[OP_ERR_RESET] = 2;
    r->open_start = r->open_end = 5;
    r->window_ns = window_ns;
    r->client_cpu_ns = ops * 1000;
}

static void test_result_add(void **state)
{
    struct load_cfg cfg = { .codec = &echo_codec, .conns = 10, .threads = 2 };
    struct load_result a, b, sum, want;
    struct record_proc me_a = { 0 }, me_b = { 0 }, got_a = { 0 }, got_b = { 0 };
    struct hb_err err = { 0 };
    json_t *ja, *jb;

    (void)state;
    fake_result(&a, &cfg, 1000, 1500, 2000000000);
    fake_result(&b, &cfg, 333, 900000, 2100000000);
    me_a.pss_start = (struct ctr_val){ .ok = true, .v = 4096 };
    me_a.pss_end = (struct ctr_val){ .ok = true, .v = 40960 };
    ja = procs_result_json(&a, &me_a, NULL);
    jb = procs_result_json(&b, &me_b, NULL);
    load_result_init(&sum, &cfg);
    assert_int_equal(procs_result_add(&sum, ja, &got_a, &err), 0);
    assert_int_equal(procs_result_add(&sum, jb, &got_b, &err), 0);
    /* the whole: what adding the histograms directly gives */
    load_result_init(&want, &cfg);
    hist_merge(want.lat, a.lat);
    hist_merge(want.lat, b.lat);
    assert_int_equal(sum.ops, 1333);
    assert_int_equal(sum.requests, 1339);
    assert_int_equal(sum.replies, 1335);
    assert_int_equal(sum.errors[OP_ERR_RESET], 4);
    assert_int_equal(sum.open_start, 10);
    assert_int_equal(sum.window_ns, 2100000000);
    assert_int_equal(sum.client_cpu_ns, 1333000);
    assert_int_equal(sum.lat->total, 1333);
    assert_int_equal(sum.lat->min, want.lat->min);
    assert_int_equal(sum.lat->max, want.lat->max);
    assert_memory_equal(sum.lat->counts, want.lat->counts, sizeof(want.lat->counts));
    /* each child's own */
    assert_int_equal(got_a.ops, 1000);
    assert_int_equal(got_b.ops, 333);
    assert_int_equal(got_a.errors, 2);
    assert_true(got_a.pss_start.ok && got_a.pss_end.ok);
    assert_int_equal(got_a.pss_end.v - got_a.pss_start.v, 36864);
    assert_false(got_b.pss_end.ok);
    /* a field missing: refused, named */
    json_object_del(jb, "ops");
    assert_int_equal(procs_result_add(&sum, jb, &got_b, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "\"ops\""));
    json_decref(jb);
    /* a child whose load could not run */
    jb = procs_result_json(&b, &me_b, "cannot connect");
    assert_int_equal(procs_result_add(&sum, jb, &got_b, &err), -EIO);
    assert_non_null(strstr(err.msg, "cannot connect"));
    json_decref(ja);
    json_decref(jb);
    load_result_release(&a);
    load_result_release(&b);
    load_result_release(&sum);
    load_result_release(&want);
}

static void test_plan_auto(void **state)
{
    static struct run_opts o; /* large: not on the stack */
    struct hb_err err = { 0 };

    (void)state;
    memset(&o, 0, sizeof(o));
    o.proto = proto_find("echo");
    assert_non_null(o.proto);
    assert_int_equal(endpoint_parse(&o.eps[0], "tcp://127.0.0.1:9", &err), 0);
    o.neps = 1;
    o.load.conns = 50000;
    o.load.threads = 1;
    /* 28232 ports: 14116 even, 12351 counted on per address */
    assert_int_equal(run_sources_for(&o, 28232), 5);
    o.load.conns = 12351;
    assert_int_equal(run_sources_for(&o, 28232), 0);
    o.load.conns = 12352;
    assert_int_equal(run_sources_for(&o, 28232), 2);
    o.sources.n = 1; /* --source given: its own */
    assert_int_equal(run_sources_for(&o, 28232), 0);
    o.sources.n = 0;
    assert_int_equal(endpoint_parse(&o.eps[0], "unix:/tmp/x.sock", &err), 0);
    assert_int_equal(run_sources_for(&o, 28232), 0);
    /* fds: 50000 connections under a hard limit of 20000 */
    o.load.conns = 50000;
    assert_int_equal(run_procs_for(&o, 20000, 10), 3);
    o.load.conns = 1000;
    assert_int_equal(run_procs_for(&o, 20000, 10), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_share),
        cmocka_unit_test(test_result_add),
        cmocka_unit_test(test_plan_auto),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
