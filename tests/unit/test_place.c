/*
 * test_place: where the server's CPUs come from. place_observe_server reads
 * them from the server's threads (the union of each thread's affinity, with
 * `tree` of its descendants' too) and marks them observed; a pid that is gone
 * leaves the expected list as it was. The threads and processes observed here
 * are this test's own, pinned on purpose. The spare CPUs (for the sampler)
 * are the allowed ones neither side is pinned to.
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/place.h"

/* This process's allowed CPUs, ascending; how many. */
static unsigned allowed(int *cpus, unsigned cap)
{
    cpu_set_t set;
    unsigned n = 0;

    assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
    for (int c = 0; c < CPU_SETSIZE && n < cap; c++)
        if (CPU_ISSET(c, &set)) cpus[n++] = c;
    assert_true(n > 0);
    return n;
}

static void pin_self(int cpu)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    assert_int_equal(sched_setaffinity(0, sizeof(set), &set), 0);
}

static void unpin_self(const int *cpus, unsigned n)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    for (unsigned i = 0; i < n; i++)
        CPU_SET(cpus[i], &set);
    assert_int_equal(sched_setaffinity(0, sizeof(set), &set), 0);
}

/* p's server CPUs as a list, as the evidence writes them. */
static const char *server_list(const struct place *p)
{
    static char buf[256];

    place_format(p, PLACE_SERVER, buf, sizeof(buf));
    return buf;
}

static void test_source_names_as_in_the_evidence(void **state)
{
    (void)state;
    assert_string_equal(place_source_name(PLACE_SRC_EXPECTED), "expected");
    assert_string_equal(place_source_name(PLACE_SRC_SET), "set");
    assert_string_equal(place_source_name(PLACE_SRC_OBSERVED), "observed");
}

/* A new place is expected: run marks nothing observed unless it reads the server. */
static void test_a_new_place_is_expected(void **state)
{
    struct hb_err err = { 0 };
    static struct place p;

    (void)state;
    assert_int_equal(place_init(&p, PLACE_SAME, &err), 0);
    assert_int_equal(p.server_source, PLACE_SRC_EXPECTED);
    assert_int_equal(place_init(&p, PLACE_NONE, &err), 0);
    assert_int_equal(p.server_source, PLACE_SRC_EXPECTED);
    assert_string_equal(server_list(&p), "any");
}

/* A list too long for the buffer ends after its last whole item, with ",...". */
static cpu_set_t cpus_of(const int *cpus, unsigned n)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    for (unsigned i = 0; i < n; i++)
        CPU_SET(cpus[i], &set);
    return set;
}

/* The spare CPUs are the allowed ones that neither side is pinned to; unpinned: none known. */
static void test_spare_cpus(void **state)
{
    const int three[] = { 0, 1, 2 }, five[] = { 0, 1, 2, 3, 5 };
    cpu_set_t allowed = cpus_of(three, 3), spare;
    struct place p = {
        .mode = PLACE_SAME, .client = { 0 }, .nclient = 1, .server = { 0 }, .nserver = 1
    };

    (void)state;
    assert_int_equal(place_spare_cpus(&p, &allowed, &spare), 2);
    assert_false(CPU_ISSET(0, &spare));
    assert_true(CPU_ISSET(1, &spare) && CPU_ISSET(2, &spare));

    p.mode = PLACE_SPLIT;
    p.server[0] = 1;
    assert_int_equal(place_spare_cpus(&p, &allowed, &spare), 1);
    assert_true(CPU_ISSET(2, &spare));

    allowed = cpus_of(three, 2); /* a 2-CPU split leaves nothing */
    assert_int_equal(place_spare_cpus(&p, &allowed, &spare), 0);
    assert_int_equal(CPU_COUNT(&spare), 0);

    allowed = cpus_of(five, 5); /* client 0-1, server 2-3: 5 is spare, 4 not allowed */
    p.client[1] = 1;
    p.nclient = 2;
    p.server[0] = 2;
    p.server[1] = 3;
    p.nserver = 2;
    assert_int_equal(place_spare_cpus(&p, &allowed, &spare), 1);
    assert_true(CPU_ISSET(5, &spare));

    p.nserver = 0; /* a server that may run anywhere leaves no CPU known to be free */
    assert_int_equal(place_spare_cpus(&p, &allowed, &spare), 0);
    p.nserver = 2;
    p.nclient = 0;
    assert_int_equal(place_spare_cpus(&p, &allowed, &spare), 0);
}

static void test_format_cuts_between_items(void **state)
{
    static struct place p;
    char buf[16];

    (void)state;
    p.nserver = 0;
    for (int c = 100; c < 140; c += 2) /* 100,102,104,...: no ranges */
        p.server[p.nserver++] = c;
    p.client[0] = 7;
    p.nclient = 1;
    place_format(&p, PLACE_SERVER, buf, sizeof(buf));
    assert_string_equal(buf, "100,102,104,...");
    place_format(&p, PLACE_SERVER, buf, 14); /* "100,102,104" fits, not with ",..."; was "...,1" */
    assert_string_equal(buf, "100,102,...");
    place_format(&p, PLACE_SERVER, buf, 5);
    assert_string_equal(buf, "...");
    place_format(&p, PLACE_CLIENT, buf, 2); /* exactly fits */
    assert_string_equal(buf, "7");
    p.nserver = 3; /* 100,102,104: fits exactly in 12 */
    place_format(&p, PLACE_SERVER, buf, 12);
    assert_string_equal(buf, "100,102,104");
    p.server[1] = 101; /* 100-101,104,106 */
    p.nserver = 4;
    place_format(&p, PLACE_SERVER, buf, 12);
    assert_string_equal(buf, "100-101,...");
}

struct pinned {
    int cpu;
    int ready[2]; /* the thread writes 0 once pinned, 1 if it could not pin itself */
    int go[2];    /* then it waits for a byte here */
};

/* Pins itself to p->cpu, says so, and waits to be released (no cmocka calls off main). */
static void *pinned_thread(void *arg)
{
    struct pinned *p = arg;
    cpu_set_t set;
    char c;

    CPU_ZERO(&set);
    CPU_SET(p->cpu, &set);
    c = sched_setaffinity(0, sizeof(set), &set) == 0 ? 0 : 1;
    if (write(p->ready[1], &c, 1) == 1) (void)!read(p->go[0], &c, 1);
    return NULL;
}

/* How many threads this process has (a sanitizer may run its own). */
static unsigned own_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    unsigned n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* The union over the threads: one pinned thread does not hide the unpinned main thread. */
static void test_observe_the_union_of_threads(void **state)
{
    int cpus[PLACE_MAX_CPUS];
    unsigned n = allowed(cpus, PLACE_MAX_CPUS);
    struct hb_err err = { 0 };
    static struct place p;
    struct pinned th = { .cpu = cpus[n - 1] };
    pid_t self = getpid();
    pthread_t t;
    char c = 1;

    (void)state;
    assert_int_equal(pipe(th.ready), 0);
    assert_int_equal(pipe(th.go), 0);
    assert_int_equal(pthread_create(&t, NULL, pinned_thread, &th), 0);
    assert_int_equal(read(th.ready[0], &c, 1), 1);
    assert_int_equal(c, 0);

    /* main unpinned, the thread on the last CPU: every allowed CPU */
    assert_int_equal(place_init(&p, PLACE_NONE, &err), 0);
    assert_int_equal(place_observe_server(&p, &self, 1, false, &err), 0);
    assert_int_equal(p.server_source, PLACE_SRC_OBSERVED);
    assert_int_equal(p.nserver, n);
    for (unsigned i = 0; i < n; i++)
        assert_int_equal(p.server[i], cpus[i]);

    /* main on the first CPU too: the first and the last (and, under a sanitizer that runs a
       thread of its own, that thread's CPUs) */
    pin_self(cpus[0]);
    assert_int_equal(place_observe_server(&p, &self, 1, false, &err), 0);
    assert_int_equal(p.server[0], cpus[0]);
    assert_int_equal(p.server[p.nserver - 1], cpus[n - 1]);
    if (own_threads() == 2) assert_int_equal(p.nserver, n > 1 ? 2 : 1);
    unpin_self(cpus, n);

    assert_int_equal(write(th.go[1], &c, 1), 1);
    assert_int_equal(pthread_join(t, NULL), 0);
    for (int i = 0; i < 2; i++) {
        close(th.ready[i]);
        close(th.go[i]);
    }
}

/*
 * A child of this test pinned to `cpu` that execs sleep (one thread, whatever
 * this process runs), after forking, if `grandchild_cpu` >= 0, a child of its
 * own pinned there that does the same. Returns the child's pid; *grandchild
 * gets the grandchild's (0 when none). Both are pinned when this returns.
 */
/*
 * Every process spawn_pinned started (with whether it is ours to reap), for
 * kill_spawned: a teardown, so that a failed assert leaves none behind.
 */
static struct {
    pid_t pid;
    bool mine;
} g_spawned[8];
static unsigned g_nspawned;

static void spawned_add(pid_t pid, bool mine)
{
    if (pid > 0 && g_nspawned < sizeof(g_spawned) / sizeof(g_spawned[0])) {
        g_spawned[g_nspawned].pid = pid;
        g_spawned[g_nspawned++].mine = mine;
    }
}

static int kill_spawned(void **state)
{
    int status;

    (void)state;
    for (unsigned i = 0; i < g_nspawned; i++) {
        kill(g_spawned[i].pid, SIGKILL);
        if (g_spawned[i].mine) waitpid(g_spawned[i].pid, &status, 0); /* else init reaps it */
    }
    g_nspawned = 0;
    return 0;
}

static pid_t spawn_pinned(int cpu, int grandchild_cpu, pid_t *grandchild)
{
    int p[2];
    pid_t child, g = 0;
    char byte;

    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    child = fork();
    spawned_add(child, true);
    assert_true(child >= 0);
    if (child == 0) {
        cpu_set_t set;

        close(p[0]);
        if (grandchild_cpu >= 0) {
            pid_t gc = fork();
            if (gc == 0) {
                CPU_ZERO(&set);
                CPU_SET(grandchild_cpu, &set);
                if (sched_setaffinity(0, sizeof(set), &set) == 0)
                    execlp("sleep", "sleep", "30", (char *)NULL);
                _exit(1);
            }
            if (gc < 0 || write(p[1], &gc, sizeof(gc)) != sizeof(gc)) _exit(1);
        }
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof(set), &set) == 0)
            execlp("sleep", "sleep", "30", (char *)NULL);
        _exit(1);
    }
    close(p[1]);
    if (grandchild_cpu >= 0) assert_int_equal(read(p[0], &g, sizeof(g)), sizeof(g));
    spawned_add(g, false);
    /* EOF once both have exec'd (the pipe is close-on-exec): both are pinned by then */
    assert_int_equal(read(p[0], &byte, 1), 0);
    close(p[0]);
    *grandchild = g;
    return child;
}

/* With `tree`, the server's children count too; without, only the pid's own threads. */
static void test_observe_children_with_tree(void **state)
{
    int cpus[PLACE_MAX_CPUS];
    unsigned n = allowed(cpus, PLACE_MAX_CPUS);
    struct hb_err err = { 0 };
    static struct place p;
    pid_t grand, other_grand, child = spawn_pinned(cpus[0], cpus[n - 1], &grand);
    pid_t other = spawn_pinned(cpus[n - 1], -1, &other_grand), both[2] = { child, other };

    (void)state;
    assert_int_equal(place_init(&p, PLACE_SAME, &err), 0);
    assert_int_equal(place_observe_server(&p, &child, 1, false, &err), 0);
    assert_int_equal(p.nserver, 1);
    assert_int_equal(p.server[0], cpus[0]);
    assert_int_equal(place_observe_server(&p, &child, 1, true, &err), 0);
    assert_int_equal(p.nserver, n > 1 ? 2 : 1);
    assert_int_equal(p.server[0], cpus[0]);
    assert_int_equal(p.server[p.nserver - 1], cpus[n - 1]);

    /* two pids: the union of both */
    assert_int_equal(place_observe_server(&p, &other, 1, false, &err), 0);
    assert_int_equal(p.nserver, 1);
    assert_int_equal(p.server[0], cpus[n - 1]);
    assert_int_equal(place_observe_server(&p, both, 2, false, &err), 0);
    assert_int_equal(p.nserver, n > 1 ? 2 : 1);
    assert_int_equal(p.server[0], cpus[0]);
    /* kill_spawned (the teardown) stops them */
}

/* A pid that is gone: an error, and the expected list left as it was. */
static void test_observe_a_pid_that_is_gone(void **state)
{
    struct hb_err err = { 0 };
    static struct place p;
    pid_t gone = fork(), none[1] = { 0 };
    int status;

    (void)state;
    assert_true(gone >= 0);
    if (gone == 0) _exit(0);
    assert_int_equal(waitpid(gone, &status, 0), gone);
    assert_int_equal(place_init(&p, PLACE_SAME, &err), 0);
    for (int tree = 0; tree < 2; tree++) {
        char before[256];

        snprintf(before, sizeof(before), "%s", server_list(&p));
        assert_int_equal(place_observe_server(&p, &gone, 1, tree, &err), -ESRCH);
        assert_non_null(strstr(err.msg, "pid"));
        assert_int_equal(p.server_source, PLACE_SRC_EXPECTED);
        assert_string_equal(server_list(&p), before);
    }
    assert_int_equal(place_observe_server(&p, none, 0, false, &err), -ESRCH);
    assert_int_equal(p.server_source, PLACE_SRC_EXPECTED);
}

/* The kubelet's tiers under both cgroup drivers, v1 and v2; paths that name none. */
static void test_qos_cgroup(void **state)
{
    (void)state;
    assert_string_equal(place_qos_cgroup("12:cpuset:/kubepods/pod1f2e/abc\n"), "Guaranteed");
    assert_string_equal(place_qos_cgroup("4:memory:/x\n3:cpu,cpuacct:/kubepods/burstable/"
                                         "pod1f2e/abc\n"),
                        "Burstable");
    assert_string_equal(place_qos_cgroup("0::/kubepods/besteffort/pod9/c\n"), "BestEffort");
    assert_string_equal(place_qos_cgroup("0::/kubepods.slice/kubepods-burstable.slice/"
                                         "kubepods-burstable-pod9.slice/cri-containerd-1.scope\n"),
                        "Burstable");
    assert_string_equal(place_qos_cgroup("0::/kubepods.slice/kubepods-pod9.slice/"
                                         "cri-containerd-1.scope\n"),
                        "Guaranteed");
    assert_string_equal(place_qos_cgroup("0::/kubepods.slice/kubepods-besteffort.slice/x\n"),
                        "BestEffort");
    assert_null(place_qos_cgroup("0::/\n")); /* a cgroup namespace */
    assert_null(place_qos_cgroup("3:cpuset:/libpod_parent/abc/libpod-1\n")); /* podman */
    assert_null(place_qos_cgroup("0::/user.slice/kubepodsx/pod1\n"));
    assert_null(place_qos_cgroup("0::/kubepods\n"));
    assert_null(place_qos_cgroup(""));
}

/* Requests and limits as the downward API gives them. */
static void test_qos_resources(void **state)
{
    (void)state;
    assert_string_equal(place_qos_resources("2000", "2000", "268435456", "268435456"),
                        "Guaranteed");
    assert_string_equal(place_qos_resources("1000", "2000", "268435456", "268435456"), "Burstable");
    assert_string_equal(place_qos_resources("0", "8000", "268435456", "33000000000"), "Burstable");
    assert_string_equal(place_qos_resources("0", "8000", "0", "33000000000"), "BestEffort");
    assert_null(place_qos_resources(NULL, "2000", "1", "1"));
    assert_null(place_qos_resources("2", "2", "256Mi", "256Mi"));
    assert_null(place_qos_resources("-1", "2", "1", "1"));
    assert_null(place_qos_resources("", "2", "1", "1"));
}

/* This process's cpuset, as the kernel lists it: the CPUs sched_getaffinity allows. */
static void test_cpuset_self(void **state)
{
    char cpus[256];
    int rc = place_cpuset_self(cpus, sizeof(cpus));

    (void)state;
    if (rc == -ENOENT) {
        skip(); /* no cpuset controller mounted */
        return;
    }
    assert_int_equal(rc, 0);
    assert_true(cpus[0] >= '0' && cpus[0] <= '9');
    assert_true(strspn(cpus, "0123456789,-") == strlen(cpus));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source_names_as_in_the_evidence),
        cmocka_unit_test(test_a_new_place_is_expected),
        cmocka_unit_test(test_format_cuts_between_items),
        cmocka_unit_test(test_spare_cpus),
        cmocka_unit_test(test_qos_cgroup),
        cmocka_unit_test(test_qos_resources),
        cmocka_unit_test(test_cpuset_self),
        cmocka_unit_test(test_observe_the_union_of_threads),
        cmocka_unit_test_teardown(test_observe_children_with_tree, kill_spawned),
        cmocka_unit_test(test_observe_a_pid_that_is_gone),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
