/*
 * test_budget: what a plan needs before it runs. The fds and memory a load
 * needs are computed from the plan as load.c lays it out (request copies
 * for fixed codecs, a request buffer per connection for the others, receive
 * buffers capped at 64 KiB, histograms); the decisions (raise the soft
 * open-files limit, refuse) are checked on fixed inputs; the live limit is
 * raised and refused in this process. EMFILE and ENFILE are their own error
 * kind.
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "engine/load.h"
#include "host/budget.h"
#include "proto/resp.h"
#include "registry.h"

#define MIB ((size_t)1024 * 1024)

static struct load_cfg cfg_of(const char *proto, size_t size, unsigned pipeline, unsigned conns,
                              unsigned threads)
{
    static struct resp_opts set = { .command = { .cmd = REDIS_SET }, .keys = 1 };
    struct load_cfg c = { .codec = codec_find(proto),
                          .size = size,
                          .mode = LOAD_REUSE,
                          .pipeline = pipeline,
                          .conns = conns,
                          .threads = threads };

    assert_non_null(c.codec);
    if (strcmp(proto, "redis") == 0) c.opts = &set;
    return c;
}

/* EMFILE and ENFILE are "fds", not "other"; every kind has its own name. */
static void test_err_kinds(void **state)
{
    (void)state;
    assert_int_equal(op_err_from_errno(EMFILE), OP_ERR_FDS);
    assert_int_equal(op_err_from_errno(ENFILE), OP_ERR_FDS);
    assert_string_equal(op_err_name(OP_ERR_FDS), "fds");
    assert_int_equal(op_err_from_errno(EBADF), OP_ERR_OTHER);
    for (int a = 0; a < OP_ERR_KINDS; a++) {
        assert_string_not_equal(op_err_name((enum op_err)a), "?");
        for (int b = a + 1; b < OP_ERR_KINDS; b++)
            assert_string_not_equal(op_err_name((enum op_err)a), op_err_name((enum op_err)b));
    }
}

static void test_fd_need(void **state)
{
    struct load_cfg c = cfg_of("echo", 64, 1, 1000, 3);

    (void)state;
    assert_true(load_fd_need(&c) == 1000 + 3);
    assert_true(budget_fds(5, load_fd_need(&c)) == 5 + 1000 + 3 + BUDGET_FD_SPARE);
    /* the lab's server: connections twice over, 2 listeners, 4 epolls, the stop eventfd */
    assert_true(budget_server_fds(1000, 4, 2) == 2000 + 2 + 4 + 1);
}

static void test_fd_plan(void **state)
{
    uint64_t soft = 0;

    (void)state;
    assert_int_equal(budget_fds_plan(100, 256, 256, &soft), 0);
    assert_true(soft == 256);
    assert_int_equal(budget_fds_plan(256, 256, 256, &soft), 0);
    assert_int_equal(budget_fds_plan(1019, 256, 4096, &soft), 1);
    assert_true(soft == 1019);
    assert_int_equal(budget_fds_plan(1019, 256, 1019, &soft), 1);
    assert_int_equal(budget_fds_plan(1020, 256, 1019, &soft), -EMFILE);
    assert_true(soft == 256);
    assert_int_equal(budget_fds_plan(1u << 20, 1024, RLIM_INFINITY, &soft), 1);
    assert_true(soft == 1u << 20);
}

/* This process: a lowered soft limit is raised to what is needed, a need above the hard refused. */
static void test_fd_ensure_live(void **state)
{
    struct hb_err err = { 0 };
    struct rlimit was, now;
    int open = budget_fds_open(), fds[2];
    char want[64];

    (void)state;
    assert_true(open >= 3);
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(budget_fds_open(), open + 2);
    close(fds[0]);
    close(fds[1]);

    assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
    if (was.rlim_max < 128) skip();
    now = was;
    now.rlim_cur = 64;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &now), 0);
    assert_int_equal(budget_fds_ensure(100, &err), 0);
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &now), 0);
    assert_true(now.rlim_cur == 100 && now.rlim_max == was.rlim_max);
    assert_int_equal(budget_fds_ensure(50, &err), 0); /* never lowered */
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &now), 0);
    assert_true(now.rlim_cur == 100);
    if (was.rlim_max != RLIM_INFINITY) {
        assert_int_equal(budget_fds_ensure((uint64_t)was.rlim_max + 1, &err), -EMFILE);
        snprintf(want, sizeof(want), "ulimit -n %llu", (unsigned long long)was.rlim_max + 1);
        assert_non_null(strstr(err.msg, want));
        assert_null(strchr(err.msg, '\n'));
    }
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
}

/* The run's interval slots (series_alloc) and its series' points, as load_run takes them. */
static size_t series_bytes(const struct load_cfg *c)
{
    struct series_run r;

    series_plan(&r, c->duration_ns, c->rate > 0 ? c->timeout_ns : 0);
    return series_mem(&r) + r.nslots * 2 * sizeof(uint64_t);
}

/* A fixed codec (echo): pipeline copies of the request per thread, a 64 KiB receive buffer. */
static void test_mem_fixed(void **state)
{
    struct load_cfg one = cfg_of("echo", 64 * MIB, 200, 1, 1),
                    two = cfg_of("echo", 64 * MIB, 200, 2, 2);
    size_t copies = 200 * 64 * MIB, hists = 2 * (1 + PHASES) * sizeof(struct hist);
    size_t need = load_mem_need(&one, 0), series = series_bytes(&one);

    (void)state;
    assert_true(need >= copies + 64 * 1024 + hists + series);
    /* + structs and codec state */
    assert_true(need < copies + 64 * 1024 + hists + series + 64 * 1024);
    /* a second thread copies the requests again */
    assert_true(load_mem_need(&two, 0) - need >= copies);
    /* two connections on one thread share the copies and the receive buffer */
    two.threads = 1;
    assert_true(load_mem_need(&two, 0) - need < 1024);
    /* small requests: the receive buffer's floor is 16 KiB */
    one = cfg_of("echo", 64, 1, 1, 1);
    assert_true(load_mem_need(&one, 0) >= 64 + 16 * 1024 + hists);
}

/*
 * Many connections of small requests (issue 31: at most 4 KiB of client memory each): a
 * connection is its struct and codec state, the thread's receive buffer shared; with
 * --wait uring each has a receive in flight, so a buffer of its own.
 */
static void test_mem_many_conns(void **state)
{
    struct load_cfg one = cfg_of("echo", 64, 1, 1, 1), many = cfg_of("echo", 64, 1, 10001, 1);
    size_t each;

    (void)state;
    each = (load_mem_need(&many, 0) - load_mem_need(&one, 0)) / 10000;
    assert_true(each > 0 && each < 1024);
    one = cfg_of("http", 64, 1, 1, 1);
    many = cfg_of("http", 64, 1, 10001, 1);
    each = (load_mem_need(&many, 0) - load_mem_need(&one, 0)) / 10000;
    assert_true(each > 0 && each < 4096);
    one.uring_wait = many.uring_wait = true;
    each = (load_mem_need(&many, 0) - load_mem_need(&one, 0)) / 10000;
    assert_true(each >= 16 * 1024);
}

/* A codec that encodes per connection (redis SET): each connection has its own request buffer. */
static void test_mem_per_conn(void **state)
{
    struct load_cfg one = cfg_of("redis", MIB, 100, 1, 1), three = cfg_of("redis", MIB, 100, 3, 1);

    (void)state;
    assert_true(load_mem_need(&three, 0) - load_mem_need(&one, 0) >= 2 * 100 * MIB);
}

/*
 * A single redis command over N keys (codec_ops.cycle): a table of a round of its requests per
 * thread, no request buffer per connection; a round over 1 MiB goes back to the buffers.
 */
static void test_mem_table(void **state)
{
    static struct resp_opts thousand = { .command = { .cmd = REDIS_SET }, .keys = 1000 },
                            billion = { .command = { .cmd = REDIS_SET }, .keys = 1000000000 };
    struct load_cfg one = cfg_of("redis", 64, 16, 1, 1), round = one, many, big, big3;
    size_t each;

    (void)state;
    round.opts = &thousand;
    /* 1,015 SETs of key:0 .. key:999 and 64 B, 97 bytes each at most */
    assert_true(load_mem_need(&round, 0) - load_mem_need(&one, 0) >= 999 * 90);
    assert_true(load_mem_need(&round, 0) - load_mem_need(&one, 0) < 1015 * 97 + 8192);
    many = round;
    many.conns = 10001;
    each = (load_mem_need(&many, 0) - load_mem_need(&round, 0)) / 10000;
    assert_true(each > 0 && each < 4096);
    big = one;
    big.opts = &billion;
    big3 = big;
    big3.conns = 3;
    assert_true(load_mem_need(&big3, 0) - load_mem_need(&big, 0) >= 2 * 16 * 64);
}

/* Open loop: a service histogram per thread and per result, a heap slot per connection. */
static void test_mem_open_loop(void **state)
{
    struct load_cfg closed = cfg_of("echo", 64, 1, 10, 1), open = closed;

    (void)state;
    open.rate = 1000;
    assert_true(load_mem_need(&open, 0) - load_mem_need(&closed, 0) ==
                2 * sizeof(struct hist) + 10 * sizeof(void *));
    assert_true(load_result_mem(&open) - load_result_mem(&closed) == sizeof(struct hist));
    /* the records of earlier runs: their histograms stay */
    assert_true(load_mem_need(&open, 3) - load_mem_need(&open, 0) == 3 * load_result_mem(&open));
}

/*
 * The intervals of ops and p99: a count-bound run's 3,000 slots of 216 counters, a 5 s one's
 * 50 and the slack, whatever its threads.
 */
static void test_mem_series(void **state)
{
    struct load_cfg count = cfg_of("echo", 64, 1, 1, 1), timed = count;
    size_t slot = SERIES_BUCKETS * sizeof(uint32_t);

    (void)state;
    timed.duration_ns = 5 * NS_PER_S;
    assert_true(load_mem_need(&count, 0) - load_mem_need(&timed, 0) >=
                (SERIES_COUNT_SLOTS - 50 - SERIES_SLACK) * slot);
    assert_true(series_bytes(&timed) >= (50 + SERIES_SLACK) * slot);
    timed.threads = timed.conns = 4;
    count.threads = count.conns = 4;
    assert_true(load_mem_need(&count, 0) - load_mem_need(&timed, 0) ==
                series_bytes(&count) - series_bytes(&timed));
}

/* A plan too large for a size_t says so instead of wrapping round to a small number. */
static void test_mem_saturates(void **state)
{
    struct load_cfg c = cfg_of("echo", 64 * MIB, 1024, 1u << 31, 1u << 31);

    (void)state;
    assert_true(load_mem_need(&c, 0) == SIZE_MAX);
}

static void test_mem_check(void **state)
{
    struct budget_mem m = { .meminfo_ok = true, .meminfo = 8 * 1024 * MIB };
    struct hb_err err = { 0 };

    (void)state;
    assert_int_equal(budget_mem_check(8 * 1024 * MIB, &m, &err), 0);
    assert_int_equal(budget_mem_check(12800 * MIB, &m, &err), -ENOMEM);
    assert_non_null(strstr(err.msg, "needs 12.5 GiB"));
    assert_non_null(strstr(err.msg, "8.0 GiB is available (MemAvailable"));
    assert_null(strchr(err.msg, '\n'));
    /* a cgroup's room below MemAvailable is what counts */
    m.cgroup_ok = true;
    m.cgroup = 512 * MIB;
    assert_int_equal(budget_mem_check(1024 * MIB, &m, &err), -ENOMEM);
    assert_non_null(
        strstr(err.msg, "512.0 MiB is available (under the limit of its memory cgroup"));
    assert_int_equal(budget_mem_check(512 * MIB, &m, &err), 0);
    /* and MemAvailable when it is the lower */
    m.cgroup = 16 * 1024 * MIB;
    assert_int_equal(budget_mem_check(12800 * MIB, &m, &err), -ENOMEM);
    assert_non_null(strstr(err.msg, "MemAvailable"));
    /* nothing known: nothing refused */
    m = (struct budget_mem){ 0 };
    assert_int_equal(budget_mem_check(SIZE_MAX, &m, &err), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_err_kinds),     cmocka_unit_test(test_fd_need),
        cmocka_unit_test(test_fd_plan),       cmocka_unit_test(test_fd_ensure_live),
        cmocka_unit_test(test_mem_fixed),     cmocka_unit_test(test_mem_many_conns),
        cmocka_unit_test(test_mem_per_conn),  cmocka_unit_test(test_mem_table),
        cmocka_unit_test(test_mem_open_loop), cmocka_unit_test(test_mem_series),
        cmocka_unit_test(test_mem_saturates), cmocka_unit_test(test_mem_check),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
