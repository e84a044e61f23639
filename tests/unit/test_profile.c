/*
 * test_profile: --profile's attribution without the kernel. The symbol table
 * from a kallsyms text (tests/fixtures/profile/kallsyms): text symbols only,
 * sorted, a module's name without its "[module]", an address found in the
 * function it falls in and in none past the last; the subsystem table (the
 * longest pattern decides; helpers of no subsystem let the walk go on) and
 * the chain's rule (the first frame from the leaf that is not the
 * system-call entry; that entry only when nothing else matches; user mode
 * is the process's own code); and fabricated samples fed to a profiler
 * without events: each side by its pid (hopbench's load threads by their
 * name), the idle loop apart, sampled time = samples × period, the folded
 * stacks root first; a late sample standing for the periods the timer skipped.
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
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host/counters.h"
#include "host/ksym.h"
#include "host/profile.h"
#include "host/subsys.h"
#include "report/profile.h"

/* The fixture's text. */
static char *fixture(void)
{
    const char *root = getenv("HOPBENCH_FIXTURES");
    char path[512];
    int rc = 0;
    char *t;

    snprintf(path, sizeof(path), "%s/profile/kallsyms", root != NULL ? root : "tests/fixtures");
    t = read_text(path, &rc);
    assert_non_null(t);
    return t;
}

/* Symbol addresses of the fixture. */
enum {
    A_ENTRY = 0x1000,
    A_DOSYS = 0x1100,
    A_XSEND = 0x2000,
    A_SYS_SENDTO = 0x2100,
    A_TCP_SENDMSG = 0x3000,
    A_TCP_LOCKED = 0x3400,
    A_DEVQ = 0x4000,
    A_LOOPBACK = 0x4300,
    A_NETRX = 0x5000,
    A_SOFTIRQ = 0x5200,
    A_BH = 0x5400,
    A_TCP_RCV = 0x6000,
    A_UNLOCK = 0x7000,
    A_TTWU = 0x7100,
    A_SCHED_CLOCK = 0x7200,
    A_UNIX_SEND = 0x8000,
    A_COPY = 0x9000,
    A_FGET = 0xa000,
    A_HALT = 0xb000,
    A_IDLE = 0xb100,
    A_RTMUTEX = 0xc000,
};
#define K(off) (0xffffffff81000000ULL + (off) + 8)

static void test_kallsyms_parsed_sorted_found(void **state)
{
    struct ksym_table t;
    struct hb_err err = { 0 };
    char *text = fixture();
    long k;

    (void)state;
    assert_int_equal(ksym_parse(&t, text, &err), 0);
    assert_int_equal(t.n, 25); /* 27 lines less the two data symbols */
    for (size_t i = 1; i < t.n; i++)
        assert_true(t.addr[i - 1] <= t.addr[i]);
    k = ksym_find(&t, K(A_TCP_LOCKED) + 0x10);
    assert_true(k >= 0);
    assert_string_equal(ksym_name(&t, (size_t)k), "tcp_sendmsg_locked");
    k = ksym_find(&t, K(A_TCP_SENDMSG));
    assert_string_equal(ksym_name(&t, (size_t)k), "tcp_sendmsg");
    k = ksym_find(&t, 0xffffffffc0a00400ULL + 4);
    assert_string_equal(ksym_name(&t, (size_t)k), "ipv4_conntrack_local");      /* no "[module]" */
    assert_int_equal(ksym_find(&t, 0xffffffff80000000ULL), -1);                 /* before */
    assert_int_equal(ksym_find(&t, 0xffffffffc0a00400ULL + KSYM_MAX_SIZE), -1); /* past */
    ksym_free(&t);
    /* hidden addresses, and a text with no symbol, are refused with a line */
    assert_int_equal(ksym_parse(&t, "0000000000000000 T tcp_sendmsg\n", &err), -EACCES);
    assert_non_null(strstr(err.msg, "kptr_restrict"));
    assert_int_equal(ksym_parse(&t, "ffffffff81000000 D x\n", &err), -ENOENT);
    free(text);
}

static void test_subsystem_table(void **state)
{
    (void)state;
    assert_int_equal(subsys_of_symbol("tcp_sendmsg"), SUB_TCP);
    assert_int_equal(subsys_of_symbol("inet_csk_accept"), SUB_TCP);
    assert_int_equal(subsys_of_symbol("ip_finish_output2"), SUB_IP);
    assert_int_equal(subsys_of_symbol("loopback_xmit"), SUB_IP);
    assert_int_equal(subsys_of_symbol("net_rx_action"), SUB_SOFTIRQ);
    assert_int_equal(subsys_of_symbol("nf_conntrack_in"), SUB_NETFILTER);
    assert_int_equal(subsys_of_symbol("unix_stream_sendmsg"), SUB_UNIX);
    assert_int_equal(subsys_of_symbol("__alloc_skb"), SUB_SOCKET);
    assert_int_equal(subsys_of_symbol("sock_sendmsg"), SUB_SOCKET);
    assert_int_equal(subsys_of_symbol("rep_movs_alternative"), SUB_COPY);
    assert_int_equal(subsys_of_symbol("try_to_wake_up"), SUB_SCHED);
    /* a data-ready callback is its reader's wake-up, though "sock_" is the socket layer's */
    assert_int_equal(subsys_of_symbol("sock_def_readable"), SUB_SCHED);
    assert_int_equal(subsys_of_symbol("sock_recvmsg"), SUB_SOCKET);
    assert_int_equal(subsys_of_symbol("do_epoll_wait"), SUB_EPOLL);
    assert_int_equal(subsys_of_symbol("do_syscall_64"), SUB_SYSCALL);
    /* the longest pattern decides: __x64_sys_ is the entry, __x64_sys_epoll_wait epoll's */
    assert_int_equal(subsys_of_symbol("__x64_sys_sendto"), SUB_SYSCALL);
    assert_int_equal(subsys_of_symbol("__x64_sys_epoll_wait"), SUB_EPOLL);
    assert_int_equal(subsys_of_symbol("napi_alloc_skb"), SUB_SOCKET);
    assert_int_equal(subsys_of_symbol("napi_poll"), SUB_SOFTIRQ);
    assert_int_equal(subsys_of_symbol("enqueue_to_backlog"), SUB_SOFTIRQ);
    /* no subsystem: unmatched names and the helpers of everyone */
    assert_int_equal(subsys_of_symbol("_raw_spin_unlock_irqrestore"), -1);
    assert_int_equal(subsys_of_symbol("rt_mutex_lock"), -1);
    assert_int_equal(subsys_of_symbol("sched_clock"), -1);
    for (int s = 0; s < SUBSYS_COUNT; s++)
        assert_int_equal(subsys_by_name(subsys_name((enum prof_subsys)s)), s);
    assert_int_equal(subsys_by_name("nope"), -1);
}

static void test_chain_rule(void **state)
{
    int8_t tcp_under_syscall[] = { -1, SUB_TCP, SUB_SOCKET, SUB_SYSCALL, SUB_SYSCALL };
    int8_t wake_in_tcp[] = { -1, SUB_SCHED, SUB_TCP, SUB_SYSCALL };
    int8_t syscall_only[] = { -1, SUB_SYSCALL, -1, SUB_SYSCALL };
    int8_t none[] = { -1, -1 };

    (void)state;
    assert_int_equal(subsys_of_chain(tcp_under_syscall, 5, false), SUB_TCP);
    assert_int_equal(subsys_of_chain(wake_in_tcp, 4, false), SUB_SCHED);
    assert_int_equal(subsys_of_chain(syscall_only, 4, false), SUB_SYSCALL);
    assert_int_equal(subsys_of_chain(none, 2, false), SUB_OTHER);
    assert_int_equal(subsys_of_chain(NULL, 0, false), SUB_OTHER);
    assert_int_equal(subsys_of_chain(tcp_under_syscall, 5, true), SUB_USER);
}

static pid_t my_tid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

/* A thread named as a load thread, which waits until told to end: its tid. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pid_t load_tid;
static int end_load;

static void *load_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "hb-load");
    pthread_mutex_lock(&mu);
    load_tid = my_tid();
    pthread_cond_broadcast(&cv);
    while (!end_load)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    return NULL;
}

/* The value of the folded line that begins with prefix (its count), or -1. */
static long long folded_count(const char *folded, const char *stack)
{
    size_t n = strlen(stack);

    for (const char *l = folded; l != NULL && *l != '\0'; l = strchr(l, '\n') + 1) {
        if (strncmp(l, stack, n) == 0 && l[n] == ' ') return atoll(l + n + 1);
        if (strchr(l, '\n') == NULL) break;
    }
    return -1;
}

static void test_samples_attributed(void **state)
{
    struct hb_err err = { 0 };
    char *text = fixture();
    struct profile *p = profile_new(1000, text, false, &err);
    pid_t server = 999999, other = 999998; /* no such processes: found by the list only */
    const uint64_t send_tcp[] = { K(A_UNLOCK), K(A_TCP_LOCKED), K(A_TCP_SENDMSG), K(A_SYS_SENDTO),
                                  K(A_XSEND),  K(A_DOSYS),      K(A_ENTRY) };
    const uint64_t wake[] = { K(A_UNLOCK),      K(A_TTWU), K(A_TCP_RCV),  K(A_NETRX),
                              K(A_SOFTIRQ),     K(A_BH),   K(A_LOOPBACK), K(A_DEVQ),
                              K(A_TCP_SENDMSG), K(A_DOSYS) };
    const uint64_t unix_copy[] = { K(A_SCHED_CLOCK), K(A_COPY), K(A_UNIX_SEND), K(A_DOSYS) };
    const uint64_t fget[] = { K(A_FGET), K(A_DOSYS), K(A_ENTRY) };
    const uint64_t idle[] = { K(A_HALT), K(A_IDLE) };
    const uint64_t lost[] = { 0xffffffff90000000ULL, K(A_RTMUTEX) };
    pthread_t th;
    struct profile_result r;

    (void)state;
    assert_non_null(p);
    pthread_create(&th, NULL, load_main, NULL);
    pthread_mutex_lock(&mu);
    while (load_tid == 0)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);

    struct profile_cfg cfg = { .self = getpid(), .server_pids = &server, .nserver_pids = 1 };
    assert_int_equal(profile_begin(p, &cfg), 0);
    for (int i = 0; i < 3; i++)
        profile_feed(p, getpid(), load_tid, false, send_tcp, 7, 1000);
    profile_feed(p, getpid(), load_tid, false, wake, 10, 1000);
    profile_feed(p, getpid(), load_tid, true, NULL, 0, 1000);
    profile_feed(p, getpid(), my_tid(), false, fget, 3, 1000); /* not a load thread */
    profile_feed(p, server, server, false, unix_copy, 4, 1000);
    profile_feed(p, server, server + 1, false, fget, 3, 1000);
    profile_feed(p, other, other, false, lost, 2, 1000);
    profile_feed(p, 0, 0, false, idle, 2, 1000);
    profile_feed(p, 0, 0, false, wake, 10, 1000); /* softirq work on an idle CPU: other's */
    profile_end(p, &r);

    assert_int_equal(r.samples, 11);
    assert_int_equal(r.idle, 1);
    assert_int_equal(r.nsides, 4);
    assert_string_equal(r.side[0].name, "client");
    assert_string_equal(r.side[1].name, "hopbench");
    assert_string_equal(r.side[2].name, "server");
    assert_string_equal(r.side[3].name, "other");
    assert_int_equal(r.side[0].samples, 5);
    assert_int_equal(r.side[0].ns[SUB_TCP], 3000);
    assert_int_equal(r.side[0].ns[SUB_SCHED], 1000);
    assert_int_equal(r.side[0].ns[SUB_USER], 1000);
    assert_int_equal(r.side[1].ns[SUB_SYSCALL], 1000);
    assert_int_equal(r.side[2].ns[SUB_COPY], 1000); /* sched_clock is no one's: the copy is */
    assert_int_equal(r.side[2].ns[SUB_SYSCALL], 1000);
    assert_int_equal(r.side[3].ns[SUB_OTHER], 1000); /* unknown address, unmatched caller */
    assert_int_equal(r.side[3].ns[SUB_SCHED], 1000);
    assert_non_null(r.folded);
    assert_int_equal(folded_count(r.folded, "client;entry_SYSCALL_64_after_hwframe;do_syscall_64;"
                                            "__x64_sys_sendto;__sys_sendto;tcp_sendmsg;"
                                            "tcp_sendmsg_locked;_raw_spin_unlock_irqrestore"),
                     3);
    assert_int_equal(folded_count(r.folded, "client;[user]"), 1);
    assert_int_equal(folded_count(r.folded, "other;rt_mutex_lock;[unknown]"), 1);
    profile_result_release(&r);

    /* a new window starts from nothing, with the sides of its own cfg */
    struct service_set set = { .n = 1 };
    snprintf(set.svc[0].name, sizeof(set.svc[0].name), "php-fpm");
    set.svc[0].kind = SERVICE_PID;
    set.svc[0].pid = server;
    struct profile_cfg cfg2 = { .self = getpid(), .set = &set };
    assert_int_equal(profile_begin(p, &cfg2), 0);
    profile_feed(p, server, server, false, unix_copy, 4, 1000);
    profile_end(p, &r);
    assert_int_equal(r.samples, 1);
    assert_int_equal(r.nsides, 4);
    assert_string_equal(r.side[2].name, "php-fpm");
    assert_int_equal(r.side[2].ns[SUB_COPY], 1000);
    profile_result_release(&r);

    pthread_mutex_lock(&mu);
    end_load = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(th, NULL);
    profile_free(p);
    free(text);
}

/*
 * The timer's late samples: each CPU's sample stands for the whole periods since that CPU's
 * previous one (the kernel's CPU-clock timer skips the periods it overran), at least one, the
 * first of the window one; the CPUs apart, a new window from nothing. Period 1000 ns: CPU 0's
 * server samples at 10000, 11000 (1), 13980 (3: 2 missed), 14300 (early on the last: 1) and
 * its idle sample at 16000 (2: 1 missed, the idle loop's); CPU 1's client at 50000 (first: 1),
 * 54600 (5: 4 missed).
 */
static void test_samples_weighted_by_time(void **state)
{
    struct hb_err err = { 0 };
    char *text = fixture();
    struct profile *p = profile_new(1000, text, false, &err);
    pid_t server = 999999;
    const uint64_t copy[] = { K(A_COPY), K(A_UNIX_SEND), K(A_DOSYS) };
    const uint64_t idle[] = { K(A_HALT), K(A_IDLE) };
    struct profile_cfg cfg = { .self = getpid(), .server_pids = &server, .nserver_pids = 1 };
    struct profile_result r;

    (void)state;
    assert_non_null(p);
    assert_int_equal(profile_begin(p, &cfg), 0);
    profile_sample(p, 0, 10000, server, server, false, copy, 3);
    profile_sample(p, 0, 11000, server, server, false, copy, 3);
    profile_sample(p, 1, 50000, server, server, true, NULL, 0);
    profile_sample(p, 0, 13980, server, server, false, copy, 3);
    profile_sample(p, 0, 14300, server, server, false, copy, 3);
    profile_sample(p, 1, 54600, server, server, true, NULL, 0);
    profile_sample(p, 0, 16000, 0, 0, false, idle, 2);
    profile_end(p, &r);
    assert_int_equal(r.samples, 7);
    assert_int_equal(r.idle, 1);
    assert_int_equal(r.idle_ns, 2 * 1000);
    assert_int_equal(r.missed, 2 + 1 + 4);
    assert_int_equal(r.side[2].samples, 6);
    assert_int_equal(r.side[2].ns[SUB_COPY], (1 + 1 + 3 + 1) * 1000);
    assert_int_equal(r.side[2].ns[SUB_USER], (1 + 5) * 1000);
    profile_result_release(&r);

    /* a new window: each CPU's first sample stands for one period again */
    assert_int_equal(profile_begin(p, &cfg), 0);
    profile_sample(p, 0, 90000, server, server, false, copy, 3);
    profile_end(p, &r);
    assert_int_equal(r.missed, 0);
    assert_int_equal(r.side[2].ns[SUB_COPY], 1000);
    profile_result_release(&r);
    profile_free(p);
    free(text);
}

/* A fabricated run of cell key over transport: the client's and server's ns, ops, phases. */
static struct prof_run fake_run(const char *transport, double tcp_ns, double unix_ns,
                                double connect_ns, double response_ns)
{
    struct prof_run r;

    memset(&r, 0, sizeof(r));
    snprintf(r.key, sizeof(r.key), "echo connect 64");
    snprintf(r.cell, sizeof(r.cell), "%s-cell", transport);
    snprintf(r.transport, sizeof(r.transport), "%s", transport);
    r.counts = true;
    r.ops = 1000;
    r.period_ns = 1000;
    r.nsides = 3;
    snprintf(r.side[0], sizeof(r.side[0]), "client");
    snprintf(r.side[1], sizeof(r.side[1]), "server");
    snprintf(r.side[2], sizeof(r.side[2]), "other");
    r.ns[0][SUB_TCP] = tcp_ns;
    r.ns[0][SUB_UNIX] = unix_ns;
    r.ns[1][SUB_TCP] = tcp_ns / 2;
    r.ns[1][SUB_SCHED] = 3e6;
    r.ns[2][SUB_TCP] = tcp_ns * 1000; /* other processes: never the hop's */
    for (int p = 0; p < PHASES; p++)
        r.phase_ns[p] = NAN;
    snprintf(r.client, sizeof(r.client), "%s", transport);
    r.per_request = true;
    r.phase_ns[PHASE_CONNECT] = connect_ns;
    r.phase_ns[PHASE_CLOSE] = connect_ns / 2;
    r.phase_ns[PHASE_TTFB] = response_ns / 2; /* inside response: not added again */
    r.phase_ns[PHASE_RESPONSE] = response_ns;
    return r;
}

/* The pair of cells the tests below read, in ABBA order. */
static void fake_pair(struct prof_run runs[4])
{
    runs[0] = fake_run("tcp", 4e6, 0, 20000, 20000);
    runs[1] = fake_run("unix", 0, 1e6, 8000, 18000);
    runs[2] = runs[1];
    runs[3] = runs[0];
}

/*
 * tcp - unix from fabricated runs, 1000 ops each: the hop (client + server, never other) takes
 * 9 µs per request over tcp (client tcp 4, server tcp 2, server sched 3) and 4 over unix
 * (client unix 1, server sched 3): 5 µs more, tcp 6 more, unix 1 less, sched the same; the
 * phases: the lifecycle (connect + close) 30 -> 12 µs, the transfer (the response phase, ttfb
 * inside it) 20 -> 18 µs, so the lifecycle is 18 of the 20 µs difference.
 */
static void test_decomposition(void **state)
{
    struct prof_run runs[4];
    FILE *devnull = fopen("/dev/null", "w");
    json_t *o, *d, *hop, *subs, *ph;

    fake_pair(runs);
    o = profile_summary(devnull, runs, 4, 1);
    d = json_array_get(json_object_get(o, "differences"), 0);
    hop = json_array_get(json_object_get(d, "sides"), 0);
    subs = json_object_get(hop, "subsystems");
    ph = json_object_get(d, "phases");
    (void)state;
    assert_non_null(o);
    assert_int_equal(json_array_size(json_object_get(o, "cells")), 2);
    assert_string_equal(json_string_value(json_object_get(hop, "name")), "hop");
    /* hop over tcp: client 4 + server 2 + sched 3 = 9 µs; over unix: unix 1 + sched 3 = 4 µs */
    assert_float_equal(json_real_value(json_object_get(json_object_get(hop, "total"), "diff")), 5.0,
                       1e-9);
    assert_float_equal(json_real_value(json_object_get(json_object_get(subs, "tcp"), "diff")), 6.0,
                       1e-9);
    assert_float_equal(json_real_value(json_object_get(json_object_get(subs, "unix"), "diff")),
                       -1.0, 1e-9);
    assert_float_equal(json_real_value(json_object_get(json_object_get(subs, "sched"), "diff")), 0,
                       1e-9);
    assert_float_equal(json_real_value(json_object_get(ph, "lifecycle_tcp_us")), 30, 1e-9);
    assert_float_equal(json_real_value(json_object_get(ph, "lifecycle_unix_us")), 12, 1e-9);
    assert_float_equal(json_real_value(json_object_get(ph, "transfer_tcp_us")), 20, 1e-9);
    assert_float_equal(json_real_value(json_object_get(ph, "transfer_unix_us")), 18, 1e-9);
    assert_float_equal(json_real_value(json_object_get(ph, "lifecycle_share")), 18.0 / 20.0, 1e-9);
    json_decref(o);
    fclose(devnull);
}

/* The phases of the pair, summarised from runs[0..3] with run i's client and mode changed. */
static json_t *pair_phases(struct prof_run *runs, const char *client, bool per_request)
{
    FILE *devnull = fopen("/dev/null", "w");
    json_t *o, *ph;

    for (int i = 0; i < 4; i++) {
        if (client != NULL) snprintf(runs[i].client, sizeof(runs[i].client), "%s", client);
        runs[i].per_request = per_request;
    }
    o = profile_summary(devnull, runs, 4, 1);
    fclose(devnull);
    ph = json_incref(
        json_object_get(json_array_get(json_object_get(o, "differences"), 0), "phases"));
    json_decref(o);
    return ph;
}

/*
 * A stack's web measurement loads the web server over tcp in both arms: the client's phases
 * are the front hop's and split nothing; kept connections have no lifecycle per request,
 * even when a reconnect left connect and close phases.
 */
static void test_phases_only_for_the_hop(void **state)
{
    struct prof_run runs[4];
    json_t *ph;

    (void)state;
    fake_pair(runs);
    ph = pair_phases(runs, "tcp", true);
    assert_true(json_is_true(json_object_get(ph, "behind_server")));
    assert_true(json_is_null(json_object_get(ph, "lifecycle_tcp_us")));
    assert_true(json_is_null(json_object_get(ph, "transfer_unix_us")));
    assert_true(json_is_null(json_object_get(ph, "lifecycle_share")));
    json_decref(ph);
    for (int i = 0; i < 4; i++)
        memcpy(runs[i].client, runs[i].transport, sizeof(runs[i].client));
    ph = pair_phases(runs, NULL, false);
    assert_true(json_is_false(json_object_get(ph, "behind_server")));
    assert_true(json_is_null(json_object_get(ph, "lifecycle_tcp_us")));
    assert_true(json_is_null(json_object_get(ph, "lifecycle_share")));
    assert_float_equal(json_real_value(json_object_get(ph, "transfer_tcp_us")), 20, 1e-9);
    json_decref(ph);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kallsyms_parsed_sorted_found),
        cmocka_unit_test(test_subsystem_table),
        cmocka_unit_test(test_chain_rule),
        cmocka_unit_test(test_samples_attributed),
        cmocka_unit_test(test_samples_weighted_by_time),
        cmocka_unit_test(test_decomposition),
        cmocka_unit_test(test_phases_only_for_the_hop),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
