/*
 * test_observe: the server figures of a window (observe_begin .. observe_end)
 * against real processes this test forks: a server pid that dies and stays a
 * zombie has no CPU figure; a --server-tree counts a child that was born and
 * reaped inside the window (through its parent's cutime + cstime), and one
 * reaped idle is no loss; a process that leaves the tree unreaped with its
 * CPU time, and a tree larger than the table, make it unavailable with the
 * reason.
 * Other processes' CPU (struct obs_other): the computation from its parts,
 * case by case; and in a live window, the CPU this process burns is its own,
 * never "other", and a server pid that dies makes other unavailable.
 * Those use a closed port, so their socket figures are empty. The sampler:
 * its default period by mode; with another hop's sockets on the host it counts
 * only the loaded hop's, from a thread at SCHED_IDLE on the CPUs it was given.
 * The counts themselves are tested in test_sockdiag and the integration tests.
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
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
    assert_false(r.other.other_ns.ok); /* the server's CPU is a part of it */
    assert_non_null(strstr(r.other.other_ns.why, want));
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

/* ---- other processes' CPU ------------------------------------------------------------------ */

static struct ctr_val ok_ns(uint64_t v)
{
    struct ctr_val c = { .ok = true, .v = v };

    return c;
}

static struct ctr_val na(const char *why)
{
    struct ctr_val c = { .ok = false };

    snprintf(c.why, sizeof(c.why), "%s", why);
    return c;
}

/* One case: the parts in, other (or its reason) and the verdict out; times in ms. */
struct other_case {
    const char *name;
    struct ctr_val busy, self, named, steal;
    uint64_t window;
    double threshold;
    bool other_ok;
    uint64_t other;  /* other_ok */
    const char *why; /* !other_ok: a part of the reason */
    bool decided, noisy;
};

static void test_other_compute(void **state)
{
    const struct other_case cases[] = {
        { "busy less the run's own", ok_ns(1000), ok_ns(300), ok_ns(200), ok_ns(0), 1000, 0.1, true,
          500, NULL, true, true },
        { "quiet: 50 ms of 1 s is under 0.1 CPU", ok_ns(550), ok_ns(300), ok_ns(200), ok_ns(0),
          1000, 0.1, true, 50, NULL, true, false },
        { "exactly at the threshold is not above it", ok_ns(600), ok_ns(300), ok_ns(200), ok_ns(0),
          1000, 0.1, true, 100, NULL, true, false },
        { "other + steal pass it together", ok_ns(560), ok_ns(300), ok_ns(200), ok_ns(60), 1000,
          0.1, true, 60, NULL, true, true },
        { "a higher threshold", ok_ns(1000), ok_ns(300), ok_ns(200), ok_ns(0), 1000, 0.6, true, 500,
          NULL, true, false },
        { "tick rounding below 0 is 0", ok_ns(480), ok_ns(300), ok_ns(200), ok_ns(0), 1000, 0.1,
          true, 0, NULL, true, false },
        { "busy unknown: other unknown, undecided", na("cannot read /proc/stat"), ok_ns(300),
          ok_ns(200), ok_ns(0), 1000, 0.1, false, 0, "cannot read /proc/stat", false, false },
        { "own CPU unknown", ok_ns(1000), na("EPERM"), ok_ns(200), ok_ns(0), 1000, 0.1, false, 0,
          "hopbench's own CPU: EPERM", false, false },
        { "a named one unknown", ok_ns(1000), ok_ns(300), na("the server's CPU: pid 7 exited"),
          ok_ns(0), 1000, 0.1, false, 0, "pid 7 exited", false, false },
        { "steal alone decides it", ok_ns(1000), ok_ns(300), na("x"), ok_ns(150), 1000, 0.1, false,
          0, "x", true, true },
        { "no window: undecided", ok_ns(1000), ok_ns(300), ok_ns(200), ok_ns(0), 0, 0.1, true, 500,
          NULL, false, false },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct other_case *c = &cases[i];
        struct obs_other o = { .busy_ns = c->busy,
                               .self_ns = c->self,
                               .named_ns = c->named,
                               .steal_ns = c->steal,
                               .window_ns = c->window * NS_PER_MS,
                               .threshold_cpus = c->threshold };

        o.busy_ns.v *= NS_PER_MS;
        o.self_ns.v *= NS_PER_MS;
        o.named_ns.v *= NS_PER_MS;
        o.steal_ns.v *= NS_PER_MS;
        observe_other_compute(&o);
        if (o.other_ns.ok != c->other_ok || o.decided != c->decided || o.noisy != c->noisy)
            fail_msg("%s: other ok %d (%s), decided %d, noisy %d", c->name, o.other_ns.ok,
                     o.other_ns.why, o.decided, o.noisy);
        if (c->other_ok && o.other_ns.v != c->other * NS_PER_MS)
            fail_msg("%s: other %llu ns", c->name, (unsigned long long)o.other_ns.v);
        if (!c->other_ok && strstr(o.other_ns.why, c->why) == NULL)
            fail_msg("%s: why '%s'", c->name, o.other_ns.why);
    }
}

/*
 * A live window over a named server that burns CPU while this process burns
 * its own: both are the run's, so other is what /proc/stat's busy time has
 * beyond them (at least 0), and never counts them; the default threshold.
 */
static void test_other_live(void **state)
{
    static struct observe o;
    struct observe_cfg cfg;
    struct observe_result r;
    struct cue q;
    pid_t p;
    char c;

    (void)state;
    cue_open(&q);
    p = fork();
    assert_true(p >= 0);
    if (p == 0) {
        die_with_parent();
        if (read(q.go[0], &c, 1) != 1) _exit(1);
        burn_cpu(BURN_NS);
        if (write(q.done[1], "d", 1) != 1) _exit(1);
        for (;;)
            pause();
    }
    cue_forked(&q, false);
    cfg_for(&cfg, p, false);
    assert_int_equal(observe_begin(&o, &cfg), 0);
    assert_int_equal(write(q.go[1], "g", 1), 1);
    burn_cpu(BURN_NS);
    assert_int_equal(read(q.done[0], &c, 1), 1);
    observe_end(&o, &r);
    close(q.go[1]);
    close(q.done[0]);
    reap(p);
    if (!r.other.other_ns.ok) fail_msg("other unavailable: %s", r.other.other_ns.why);
    assert_true(r.other.self_ns.ok && r.other.self_ns.v >= BURN_NS);
    assert_true(r.other.named_ns.ok && r.other.named_ns.v == r.server_cpu_ns.v);
    assert_true(r.other.named_ns.v >= BURN_NS);
    assert_true(r.other.busy_ns.ok && r.other.busy_ns.v == r.system_busy_ns.v);
    if (r.other.busy_ns.v > r.other.self_ns.v + r.other.named_ns.v)
        assert_int_equal(r.other.other_ns.v,
                         r.other.busy_ns.v - r.other.self_ns.v - r.other.named_ns.v);
    else
        assert_int_equal(r.other.other_ns.v, 0);
    assert_true(r.other.steal_ns.ok);
    assert_true(r.other.window_ns >= BURN_NS);
    assert_true(r.other.cpus >= 1);
    assert_true(r.other.threshold_cpus == OBS_NOISY_CPUS);
    assert_true(r.other.decided);
}

/* The default period: short where sockets come and go in the window, long with kept ones. */
static void test_default_period(void **state)
{
    struct observe_cfg cfg;
    struct service_set set;
    struct place pl = { .mode = PLACE_NONE };

    (void)state;
    assert_true(OBS_SAMPLE_KEPT_NS > OBS_SAMPLE_CHURN_NS);
    /* every TIME_WAIT socket a reconnect leaves lives across a periodic sample or the end */
    assert_true(OBS_SAMPLE_KEPT_NS <= OBS_TIME_WAIT_NS);
    assert_int_equal(observe_default_period(LOAD_CONNECT, false), OBS_SAMPLE_CHURN_NS);
    assert_int_equal(observe_default_period(LOAD_REUSE, false), OBS_SAMPLE_KEPT_NS);
    assert_int_equal(observe_default_period(LOAD_REUSE, true), OBS_SAMPLE_CHURN_NS);

    memset(&cfg, 0, sizeof(cfg));
    observe_set_sampler(&cfg, false, 0, LOAD_REUSE, &pl);
    assert_int_equal(cfg.sample_ns, OBS_SAMPLE_KEPT_NS);
    assert_int_equal(cfg.nsampler_cpus, 0); /* unpinned: no CPU is known to be free */
    memset(&set, 0, sizeof(set));
    set.nwatch = 1;
    cfg.set = &set;
    observe_set_sampler(&cfg, false, 0, LOAD_REUSE, &pl);
    assert_int_equal(cfg.sample_ns, OBS_SAMPLE_CHURN_NS);
    observe_set_sampler(&cfg, true, 0, LOAD_CONNECT, &pl); /* given, even 0, wins */
    assert_int_equal(cfg.sample_ns, 0);
    observe_set_sampler(&cfg, true, 40 * NS_PER_MS, LOAD_REUSE, &pl);
    assert_int_equal(cfg.sample_ns, 40 * NS_PER_MS);
}

/* A loopback listener and n connections to it, accepted. */
struct tcp_hop {
    int listener;
    int c[3], a[3];
    unsigned n, port;
};

static void tcp_hop_open(struct tcp_hop *h, unsigned n)
{
    struct sockaddr_in in = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(in);

    assert_true(n <= 3);
    h->n = n;
    h->listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_int_not_equal(h->listener, -1);
    assert_int_equal(bind(h->listener, (struct sockaddr *)&in, sizeof(in)), 0);
    assert_int_equal(listen(h->listener, 8), 0);
    assert_int_equal(getsockname(h->listener, (struct sockaddr *)&in, &len), 0);
    h->port = ntohs(in.sin_port);
    for (unsigned i = 0; i < n; i++) {
        h->c[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_int_not_equal(h->c[i], -1);
        assert_int_equal(connect(h->c[i], (struct sockaddr *)&in, sizeof(in)), 0);
        h->a[i] = accept4(h->listener, NULL, NULL, SOCK_CLOEXEC);
        assert_int_not_equal(h->a[i], -1);
    }
}

static void tcp_hop_close(struct tcp_hop *h)
{
    for (unsigned i = 0; i < h->n; i++) {
        close(h->c[i]);
        close(h->a[i]);
    }
    close(h->listener);
}

/* Polls up to 2 s until the sampler thread is at SCHED_IDLE on exactly the CPUs in want. */
static bool sampler_aside(pthread_t t, const cpu_set_t *want)
{
    for (int waited = 0; waited < 2000; waited += 5) {
        struct sched_param sp;
        cpu_set_t got;
        int policy = -1;

        if (pthread_getschedparam(t, &policy, &sp) == 0 && policy == SCHED_IDLE &&
            pthread_getaffinity_np(t, sizeof(got), &got) == 0 && CPU_EQUAL(&got, want))
            return true;
        nanosleep(&(struct timespec){ .tv_nsec = 5 * 1000000L }, NULL);
    }
    return false;
}

/*
 * The sampler, with another hop's sockets on the host: it counts the loaded
 * hop's established connections and client ports, not the other's, and runs
 * at idle priority on the CPUs it was given.
 */
static void test_sampler_counts_its_hop(void **state)
{
    static struct observe o;
    struct observe_cfg cfg;
    struct observe_result r;
    struct tcp_hop mine, other;
    struct hb_err err = { 0 };
    cpu_set_t allowed;
    int last = -1;

    (void)state;
    tcp_hop_open(&mine, 2);
    tcp_hop_open(&other, 3);
    memset(&cfg, 0, sizeof(cfg));
    assert_int_equal(endpoint_parse(&cfg.ep, "tcp://127.0.0.1:1", &err), 0);
    endpoint_set_port(&cfg.ep, mine.port);
    cfg.sample_ns = 5 * NS_PER_MS;
    assert_int_equal(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed)) last = c;
    CPU_ZERO(&cfg.sampler_cpus);
    CPU_SET(last, &cfg.sampler_cpus);
    cfg.nsampler_cpus = 1;

    assert_int_equal(observe_begin(&o, &cfg), 0);
    assert_true(o.sampling);
    assert_true(sampler_aside(o.sampler, &cfg.sampler_cpus));
    observe_end(&o, &r);
    tcp_hop_close(&mine);
    tcp_hop_close(&other);

    assert_true(r.samples >= 2);
    assert_int_equal(r.sample_ns, 5 * NS_PER_MS);
    assert_true(r.established.start.ok && r.established.peak.ok && r.established.end.ok);
    assert_int_equal(r.established.start.v, 2);
    assert_int_equal(r.established.peak.v, 2);
    assert_int_equal(r.established.end.v, 2);
    /* Client ports: its 2 connections, and any TIME_WAIT an earlier user of the port left. */
    assert_true(r.client_ports.end.ok && r.tw_client.end.ok);
    assert_int_equal(r.client_ports.end.v - r.tw_client.end.v, 2);
    assert_true(r.listen_queue.peak.ok);
    assert_int_equal(r.listen_queue.peak.v, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zombie_server),
        cmocka_unit_test(test_tree_counts_reaped_child),
        cmocka_unit_test(test_tree_idle_child_reaped),
        cmocka_unit_test(test_tree_orphan_lost),
        cmocka_unit_test(test_tree_over_table),
        cmocka_unit_test(test_other_compute),
        cmocka_unit_test(test_other_live),
        cmocka_unit_test(test_default_period),
        cmocka_unit_test(test_sampler_counts_its_hop),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
