/*
 * test_observe: the server figures of a window (observe_begin .. observe_end)
 * against real processes this test forks: a server pid that dies and stays a
 * zombie has no CPU figure; a --server-tree counts a child that was born and
 * reaped inside the window (through its parent's cutime + cstime), and one
 * reaped idle is no loss; a process that leaves the tree unreaped with its
 * CPU time, and a tree larger than the table, make it unavailable with the
 * reason.
 * The endpoint is a closed port, so the socket figures are empty; they are
 * tested in test_sockdiag and the integration tests.
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/observe.h"
#include "util.h"

#define BURN_NS (60 * NS_PER_MS)

static void burn_cpu(uint64_t ns)
{
    struct timespec ts;
    uint64_t start, now;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    start = (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
    do {
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        now = (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
    } while (now - start < ns);
}

/* In a child: die when the parent does, so a failed test leaves no process behind. */
static void die_with_parent(void)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
}

static void cfg_for(struct observe_cfg *cfg, pid_t pid, bool tree)
{
    struct hb_err err = { 0 };

    memset(cfg, 0, sizeof(*cfg));
    assert_int_equal(endpoint_parse(&cfg->ep, "tcp://127.0.0.1:1", &err), 0);
    cfg->pids[0] = pid;
    cfg->npids = 1;
    cfg->tree = tree;
}

/* A child that sleeps until killed. */
static pid_t fork_sleeper(void)
{
    pid_t p = fork();

    assert_true(p >= 0);
    if (p == 0) {
        die_with_parent();
        for (;;)
            pause();
    }
    return p;
}

static void reap(pid_t p)
{
    kill(p, SIGKILL);
    assert_int_equal(waitpid(p, NULL, 0), p);
}

static void test_zombie_server(void **state)
{
    static struct observe o;
    struct observe_cfg cfg;
    struct observe_result r;
    char want[64];
    siginfo_t si;
    pid_t p = fork_sleeper();

    (void)state;
    cfg_for(&cfg, p, false);
    assert_int_equal(observe_begin(&o, &cfg), 0);
    kill(p, SIGKILL);
    memset(&si, 0, sizeof(si));
    assert_int_equal(waitid(P_PID, (id_t)p, &si, WEXITED | WNOWAIT), 0); /* a zombie now */
    observe_end(&o, &r);
    snprintf(want, sizeof(want), "pid %d exited during the run", (int)p);
    assert_false(r.server_cpu_ns.ok);
    assert_string_equal(r.server_cpu_ns.why, want);
    assert_false(r.pss_end.ok);
    assert_string_equal(r.pss_end.why, want);
    assert_true(r.pss_start.ok);
    assert_int_equal(waitpid(p, NULL, 0), p);
}

/*
 * The pipes a test and its process tree signal each other through: the tree
 * says `ready` once set up, the test says `go`, the tree says `done`.
 */
struct cue {
    int go[2], done[2], ready[2];
};

static void cue_open(struct cue *q)
{
    assert_int_equal(pipe(q->go), 0);
    assert_int_equal(pipe(q->done), 0);
    assert_int_equal(pipe(q->ready), 0);
}

/* In the test, after the fork: waits for `ready` if asked, keeps only go[1] and done[0]. */
static void cue_forked(struct cue *q, bool wait_ready)
{
    char c;

    if (wait_ready) assert_int_equal(read(q->ready[0], &c, 1), 1);
    close(q->ready[0]);
    close(q->ready[1]);
    close(q->go[0]);
    close(q->done[1]);
}

/*
 * One window over the tree of p: begins, says `go`, waits for `done`, ends;
 * closes the test's ends of q.
 */
static void observe_across(pid_t p, struct cue *q, struct observe_result *r)
{
    static struct observe o;
    struct observe_cfg cfg;
    char c;

    cfg_for(&cfg, p, true);
    assert_int_equal(observe_begin(&o, &cfg), 0);
    assert_int_equal(write(q->go[1], "g", 1), 1);
    assert_int_equal(read(q->done[0], &c, 1), 1);
    observe_end(&o, r);
    close(q->go[1]);
    close(q->done[0]);
}

/*
 * A parent that, told through `go`, forks a child that burns BURN_NS of CPU
 * and reaps it, then says `done`; then sleeps until killed.
 */
static pid_t fork_pool(struct cue *q)
{
    int *go = q->go, *done = q->done;
    pid_t p;

    cue_open(q);
    p = fork();
    assert_true(p >= 0);
    if (p == 0) {
        char c;
        pid_t k;

        die_with_parent();
        if (read(go[0], &c, 1) != 1) _exit(1);
        k = fork();
        if (k == 0) {
            burn_cpu(BURN_NS);
            _exit(0);
        }
        if (k < 0 || waitpid(k, NULL, 0) != k || write(done[1], "d", 1) != 1) _exit(1);
        for (;;)
            pause();
    }
    cue_forked(q, false);
    return p;
}

static void test_tree_counts_reaped_child(void **state)
{
    struct observe_result r;
    struct cue q;
    pid_t p = fork_pool(&q);

    (void)state;
    observe_across(p, &q, &r); /* meanwhile the child was born, burned, exited, was reaped */
    if (!r.server_cpu_ns.ok) fail_msg("server CPU unavailable: %s", r.server_cpu_ns.why);
    print_message("  tree CPU %.1f ms for a child that burned %.1f ms\n",
                  (double)r.server_cpu_ns.v / 1e6, (double)BURN_NS / 1e6);
    /* cutime + cstime are in clock ticks: allow one tick each below */
    assert_true(r.server_cpu_ns.v + 2 * clock_ticks_ns(1) >= BURN_NS);
    assert_int_equal(r.server_pids, 1); /* only the parent is left */
    reap(p);
}

/* A child that sleeps until killed, or until its parent dies. */
static void fork_orphan_proof_sleeper(void)
{
    pid_t p = fork();

    if (p == 0) {
        die_with_parent();
        if (getppid() == 1) _exit(0);
        for (;;)
            pause();
    }
    if (p < 0) _exit(1);
}

/*
 * A parent whose child has burned 15 ms of CPU and then idles; told through
 * `go`, the parent kills and reaps it, then says `done`.
 */
static pid_t fork_idle_pool(struct cue *q)
{
    int *go = q->go, *done = q->done, *ready = q->ready;
    pid_t p;
    char c;

    cue_open(q);
    p = fork();
    assert_true(p >= 0);
    if (p == 0) {
        pid_t k;

        die_with_parent();
        k = fork();
        if (k == 0) {
            die_with_parent();
            burn_cpu(15 * NS_PER_MS);
            if (write(ready[1], "r", 1) != 1) _exit(1);
            for (;;)
                pause();
        }
        if (k < 0 || read(go[0], &c, 1) != 1) _exit(1);
        kill(k, SIGKILL);
        if (waitpid(k, NULL, 0) != k || write(done[1], "d", 1) != 1) _exit(1);
        for (;;)
            pause();
    }
    cue_forked(q, true);
    return p;
}

/*
 * The idle child's 15 ms were in the sum at the start as its CPU clock (ns);
 * at the end they are in its parent's cutime + cstime, read floored to clock
 * ticks: the sum falls by a few ms. That is 0 at tick precision, not a
 * process lost from the tree.
 */
static void test_tree_idle_child_reaped(void **state)
{
    struct observe_result r;
    struct cue q;
    pid_t p = fork_idle_pool(&q);

    (void)state;
    observe_across(p, &q, &r);
    if (!r.server_cpu_ns.ok) fail_msg("server CPU unavailable: %s", r.server_cpu_ns.why);
    print_message("  tree CPU %.1f ms\n", (double)r.server_cpu_ns.v / 1e6);
    assert_true(r.server_cpu_ns.v < 2 * clock_ticks_ns(1));
    reap(p);
}

/*
 * root -> middle -> leaf, the leaf having burned 50 ms and idling; told
 * through `go`, the root kills and reaps the middle, so the leaf (killed by
 * its parent's death) leaves the tree unreaped, with its CPU time: init reaps
 * it. Then `done`.
 */
static pid_t fork_orphaning_tree(struct cue *q)
{
    int *go = q->go, *done = q->done, *ready = q->ready;
    pid_t root;
    char c;

    cue_open(q);
    root = fork();
    assert_true(root >= 0);
    if (root == 0) {
        pid_t middle;

        die_with_parent();
        middle = fork();
        if (middle == 0) {
            die_with_parent();
            if (fork() == 0) {
                die_with_parent();
                burn_cpu(50 * NS_PER_MS);
                if (write(ready[1], "r", 1) != 1) _exit(1);
                for (;;)
                    pause();
            }
            for (;;)
                pause();
        }
        if (middle < 0 || read(go[0], &c, 1) != 1) _exit(1);
        kill(middle, SIGKILL);
        if (waitpid(middle, NULL, 0) != middle || write(done[1], "d", 1) != 1) _exit(1);
        for (;;)
            pause();
    }
    cue_forked(q, true);
    return root;
}

static void test_tree_orphan_lost(void **state)
{
    struct observe_result r;
    struct cue q;
    pid_t p = fork_orphaning_tree(&q);

    (void)state;
    observe_across(p, &q, &r);
    assert_false(r.server_cpu_ns.ok);
    assert_non_null(strstr(r.server_cpu_ns.why, "left the server's tree"));
    reap(p);
}

/* A parent with two sleeping children (they die with it): a tree of 3. */
static pid_t fork_family(void)
{
    int ready[2];
    pid_t p;
    char c;

    assert_int_equal(pipe(ready), 0);
    p = fork();
    assert_true(p >= 0);
    if (p == 0) {
        die_with_parent();
        close(ready[0]);
        fork_orphan_proof_sleeper();
        fork_orphan_proof_sleeper();
        if (write(ready[1], "r", 1) != 1) _exit(1);
        for (;;)
            pause();
    }
    close(ready[1]);
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    return p;
}

static void test_tree_over_table(void **state)
{
    static struct observe o;
    struct observe_cfg cfg;
    struct observe_result r;
    pid_t p = fork_family();

    (void)state;
    cfg_for(&cfg, p, true);
    cfg.tree_max = 2;
    assert_int_equal(observe_begin(&o, &cfg), 0);
    observe_end(&o, &r);
    assert_false(r.server_cpu_ns.ok);
    assert_non_null(strstr(r.server_cpu_ns.why, "has 3 processes, more than the 2 counted"));
    assert_false(r.pss_end.ok);
    cfg.tree_max = 3;
    assert_int_equal(observe_begin(&o, &cfg), 0);
    observe_end(&o, &r);
    if (!r.server_cpu_ns.ok) fail_msg("server CPU unavailable: %s", r.server_cpu_ns.why);
    assert_int_equal(r.server_pids, 3);
    reap(p); /* its children die with it (PR_SET_PDEATHSIG) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zombie_server),
        cmocka_unit_test(test_tree_counts_reaped_child),
        cmocka_unit_test(test_tree_idle_child_reaped),
        cmocka_unit_test(test_tree_orphan_lost),
        cmocka_unit_test(test_tree_over_table),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
