/*
 * test_load: the load engine's pure helpers, without threads or sockets: how
 * an errno becomes an error kind, the names of kinds, phases and close modes
 * (the keys of the JSON), how the threads' tallies merge into one result
 * (load_result_add), how a merged result is totalled and judged, and how many
 * ops an open-loop schedule intends in an interval (conn_intended_in).
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

#include "engine/conn.h"
#include "engine/load.h"

/* Every name is set, not "?", and differs from every other of its set. */
static void check_names(const char *(*name)(int), int n)
{
    for (int i = 0; i < n; i++) {
        assert_non_null(name(i));
        assert_string_not_equal(name(i), "?");
        assert_true(strlen(name(i)) > 0);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(name(i), name(j));
    }
    assert_string_equal(name(n), "?");
    assert_string_equal(name(-1), "?");
}

static const char *err_name(int i)
{
    return op_err_name((enum op_err)i);
}

static const char *phase_name(int i)
{
    return load_phase_name((enum load_phase)i);
}

static void test_names(void **state)
{
    (void)state;
    check_names(err_name, OP_ERR_KINDS);
    check_names(phase_name, PHASES);
    assert_string_equal(load_close_name(CLOSE_CLIENT), "client");
    assert_string_equal(load_close_name(CLOSE_SERVER), "server");
    assert_string_equal(load_close_name(CLOSE_RST), "rst");
    assert_string_equal(load_close_name((enum load_close)99), "?");
}

static void test_errno_kinds(void **state)
{
    static const struct {
        int err;
        enum op_err kind;
    } cases[] = {
        { ECONNREFUSED, OP_ERR_REFUSED },
        { ENOENT, OP_ERR_REFUSED },
        { ECONNRESET, OP_ERR_RESET },
        { EPIPE, OP_ERR_RESET },
        { ECONNABORTED, OP_ERR_RESET },
        { ETIMEDOUT, OP_ERR_TIMEOUT },
        { EADDRNOTAVAIL, OP_ERR_ADDRNOTAVAIL },
        { EAGAIN, OP_ERR_AGAIN },
        { EMFILE, OP_ERR_FDS },
        { ENFILE, OP_ERR_FDS },
        { EINVAL, OP_ERR_OTHER },
        { 0, OP_ERR_OTHER },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(op_err_from_errno(cases[i].err), cases[i].kind);
}

static void test_errors_total_and_valid(void **state)
{
    struct load_result r = { 0 };
    uint64_t want = 0;

    (void)state;
    assert_int_equal(load_errors_total(&r), 0);
    assert_false(load_result_valid(&r)); /* no op completed */
    r.ops = 1;
    assert_true(load_result_valid(&r));

    /* Each kind counts in the total, and any one of them invalidates the run. */
    for (int k = 0; k < OP_ERR_KINDS; k++) {
        struct load_result one = { .ops = 10 };
        one.errors[k] = 1;
        assert_int_equal(load_errors_total(&one), 1);
        assert_false(load_result_valid(&one));

        r.errors[k] = (uint64_t)k + 1;
        want += (uint64_t)k + 1;
    }
    assert_int_equal(load_errors_total(&r), want);
    assert_false(load_result_valid(&r));
}

/* A thread's tally: every counter from base, lat and phases with n values each of v ns. */
static void tally_init(struct conn_ctx *ctx, uint64_t base, unsigned n, uint64_t v)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->ops = base;
    ctx->connects = base + 1;
    ctx->requests = base + 2;
    ctx->replies = base + 3;
    ctx->reconnects = base + 4;
    ctx->stderr_replies = base + 5;
    ctx->retried = base + 6;
    ctx->connect_retries = base + 7;
    for (size_t k = 0; k < 6; k++)
        ctx->status[k] = base * 10 + k;
    for (size_t k = 0; k < CODEC_KINDS; k++)
        ctx->replies_kind[k] = base * 1000 + k;
    for (int k = 0; k < OP_ERR_KINDS; k++)
        ctx->errors[k] = base * 100 + (uint64_t)k;
    ctx->lat = hist_new();
    assert_non_null(ctx->lat);
    for (int p = 0; p < PHASES; p++) {
        ctx->phase[p] = hist_new();
        assert_non_null(ctx->phase[p]);
        for (unsigned i = 0; i < n; i++)
            hist_record(ctx->phase[p], v * (uint64_t)(p + 1));
    }
    for (unsigned i = 0; i < n; i++)
        hist_record(ctx->lat, v);
}

static void tally_release(struct conn_ctx *ctx)
{
    hist_free(ctx->lat);
    hist_free(ctx->service);
    for (int p = 0; p < PHASES; p++)
        hist_free(ctx->phase[p]);
}

static void result_init(struct load_result *r, bool open_loop)
{
    memset(r, 0, sizeof(*r));
    r->lat = hist_new();
    assert_non_null(r->lat);
    for (int p = 0; p < PHASES; p++) {
        r->phase[p] = hist_new();
        assert_non_null(r->phase[p]);
    }
    if (open_loop) {
        r->service = hist_new();
        assert_non_null(r->service);
    }
}

static void result_release(struct load_result *r)
{
    hist_free(r->lat);
    hist_free(r->service);
    for (int p = 0; p < PHASES; p++)
        hist_free(r->phase[p]);
}

/*
 * Two threads' tallies: counters, error kinds (each kind apart) and CPU time
 * add up, histograms add value by value, the window is the longer of the two
 * (an open loop's drain too, whichever thread's it is), and one interrupted
 * thread makes the run interrupted.
 */
static void test_merge_adds(void **state)
{
    struct conn_ctx a, b;
    struct load_result r;
    struct load_thread_window wa = { .window_ns = 900, .drain_ns = 70, .cpu_ns = 40 };
    struct load_thread_window wb = {
        .window_ns = 1000, .drain_ns = 30, .cpu_ns = 60, .interrupted = true
    };
    uint64_t errors = 0;

    (void)state;
    tally_init(&a, 1, 3, 1000);
    tally_init(&b, 2, 5, 2000);
    result_init(&r, false);
    load_result_add(&r, &a, &wa);
    assert_false(r.interrupted);
    assert_int_equal(r.window_ns, 900);
    assert_int_equal(r.drain_ns, 70);
    load_result_add(&r, &b, &wb);

    assert_int_equal(r.ops, a.ops + b.ops);
    assert_int_equal(r.connects, a.connects + b.connects);
    assert_int_equal(r.requests, a.requests + b.requests);
    assert_int_equal(r.replies, a.replies + b.replies);
    assert_int_equal(r.reconnects, a.reconnects + b.reconnects);
    assert_int_equal(r.stderr_replies, a.stderr_replies + b.stderr_replies);
    assert_int_equal(r.retried, a.retried + b.retried);
    assert_int_equal(r.connect_retries, a.connect_retries + b.connect_retries);
    for (size_t k = 0; k < 6; k++)
        assert_int_equal(r.status[k], a.status[k] + b.status[k]);
    for (size_t k = 0; k < CODEC_KINDS; k++)
        assert_int_equal(r.replies_kind[k], a.replies_kind[k] + b.replies_kind[k]);
    for (int k = 0; k < OP_ERR_KINDS; k++) {
        assert_int_equal(r.errors[k], a.errors[k] + b.errors[k]);
        errors += a.errors[k] + b.errors[k];
    }
    assert_int_equal(load_errors_total(&r), errors);
    assert_int_equal(r.client_cpu_ns, 100);
    assert_int_equal(r.window_ns, 1000);
    assert_int_equal(r.drain_ns, 70);
    assert_true(r.interrupted);

    /* 3 values of 1 us and 5 of 2 us: the median is 2 us, the lowest 1 us. */
    assert_int_equal(r.lat->total, 8);
    assert_int_equal(r.lat->min, 1000);
    assert_int_equal(r.lat->max, 2000);
    assert_int_equal(hist_count_at_least(r.lat, 2000), 5);
    for (int p = 0; p < PHASES; p++) {
        assert_int_equal(r.phase[p]->total, 8);
        assert_int_equal(r.phase[p]->max, 2000 * (uint64_t)(p + 1));
    }
    assert_null(r.service);

    tally_release(&a);
    tally_release(&b);
    result_release(&r);
}

/*
 * Open loop: a thread's service histogram is added when the result keeps one;
 * a thread with no histogram (one that never set up) adds its counters only,
 * and a shorter window never shortens the merged one.
 */
static void test_merge_service_and_missing(void **state)
{
    struct conn_ctx a, none;
    struct load_result r;
    struct load_thread_window wa = { .window_ns = 500, .cpu_ns = 7 };
    struct load_thread_window wn = { 0 };

    (void)state;
    tally_init(&a, 3, 4, 5000);
    a.service = hist_new();
    assert_non_null(a.service);
    for (int i = 0; i < 4; i++)
        hist_record(a.service, 4000);
    memset(&none, 0, sizeof(none));
    none.errors[OP_ERR_REFUSED] = 2;
    result_init(&r, true);

    load_result_add(&r, &a, &wa);
    load_result_add(&r, &none, &wn);
    assert_int_equal(r.service->total, 4);
    assert_int_equal(r.service->max, 4000);
    assert_int_equal(r.lat->total, 4);
    assert_int_equal(r.errors[OP_ERR_REFUSED], a.errors[OP_ERR_REFUSED] + 2);
    assert_int_equal(r.errors[OP_ERR_RESET], a.errors[OP_ERR_RESET]);
    assert_int_equal(r.window_ns, 500);
    assert_int_equal(r.client_cpu_ns, 7);
    assert_false(r.interrupted);

    tally_release(&a);
    result_release(&r);
}

/*
 * The run's first bad reply is the earliest of its threads' (a thread without
 * one changes nothing), whichever order they are added in.
 */
static void test_merge_first_bad_reply(void **state)
{
    struct conn_ctx late, early, none;
    struct load_result r;
    struct load_thread_window w = { 0 };

    (void)state;
    memset(&late, 0, sizeof(late));
    memset(&early, 0, sizeof(early));
    memset(&none, 0, sizeof(none));
    late.bad = (struct op_bad){ .t_ns = 2000, .kind = OP_ERR_WRONG, .len = 3, .bytes = "abc" };
    early.bad = (struct op_bad){
        .t_ns = 1000, .kind = OP_ERR_UNEXPECTED, .from_start = true, .len = 2, .bytes = "xy"
    };
    memset(&r, 0, sizeof(r));
    load_result_add(&r, &none, &w);
    assert_int_equal(r.bad.t_ns, 0);
    load_result_add(&r, &late, &w);
    assert_int_equal(r.bad.t_ns, 2000);
    load_result_add(&r, &early, &w);
    load_result_add(&r, &none, &w);
    assert_int_equal(r.bad.t_ns, 1000);
    assert_int_equal(r.bad.kind, OP_ERR_UNEXPECTED);
    assert_true(r.bad.from_start);
    assert_int_equal(r.bad.len, 2);
    assert_memory_equal(r.bad.bytes, "xy", 2);
    load_result_add(&r, &late, &w); /* later: kept as it was */
    assert_int_equal(r.bad.t_ns, 1000);
}

/* A connection with the open loop's schedule only: its arrivals and their mean gap. */
static void sched_init(struct conn *c, struct conn_ctx *ctx, struct load_cfg *cfg, bool poisson,
                       double gap_ns)
{
    memset(cfg, 0, sizeof(*cfg));
    memset(ctx, 0, sizeof(*ctx));
    memset(c, 0, sizeof(*c));
    cfg->poisson = poisson;
    ctx->cfg = cfg;
    ctx->gap_ns = gap_ns;
    c->ctx = ctx;
    c->rng = 0x9E3779B97F4A7C15ULL;
}

/*
 * The ops intended in [from, end): constant gaps count every grid point in the
 * half-open interval, whatever its offset; none in an empty one; Poisson
 * arrivals keep their mean over a million gaps (the count's standard deviation
 * is 0.1 %) and, from the same generator state, give the same count.
 */
static void test_intended_in(void **state)
{
    struct load_cfg cfg;
    struct conn_ctx ctx;
    struct conn c;
    uint64_t n, again;

    (void)state;
    sched_init(&c, &ctx, &cfg, false, 1000);
    assert_int_equal(conn_intended_in(&c, 0, 10000), 10);
    assert_int_equal(conn_intended_in(&c, 5, 10005), 10);
    assert_int_equal(conn_intended_in(&c, 0, 10001), 11);
    assert_int_equal(conn_intended_in(&c, 7, 8), 1);
    assert_int_equal(conn_intended_in(&c, 10, 10), 0);
    assert_int_equal(conn_intended_in(&c, 11, 10), 0);

    sched_init(&c, &ctx, &cfg, true, 1000);
    n = conn_intended_in(&c, 0, 1000000000);
    assert_true(n > 990000 && n < 1010000);
    sched_init(&c, &ctx, &cfg, true, 1000);
    again = conn_intended_in(&c, 0, 1000000000);
    assert_int_equal(again, n);
    assert_int_equal(conn_intended_in(&c, 10, 10), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_errno_kinds),
        cmocka_unit_test(test_errors_total_and_valid),
        cmocka_unit_test(test_merge_adds),
        cmocka_unit_test(test_merge_service_and_missing),
        cmocka_unit_test(test_merge_first_bad_reply),
        cmocka_unit_test(test_intended_in),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
