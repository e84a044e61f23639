/*
 * test_counters: the counter readers, twice over. Fixture tests feed captured
 * or hand-made /proc texts and fake cgroup directories (tests/fixtures, or
 * $HOPBENCH_FIXTURES) to the parsers and checks exact values, including
 * malformed input. Live tests read this kernel: netstat/snmp must see our own
 * loopback connects, CPU clocks must see our own burning, the process tree
 * must find a forked grandchild, and every cgroup figure must be either a
 * plausible number or not-ok with a reason, never a silent 0.
 * Left out: permission-denied paths (the suite may run as root, which
 * bypasses file modes); they share the code path of "no such file".
 */
/* cmocka.h needs these four first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/counters.h"
#include "util.h"

#define N_CONNECTS 20
#define BURN_NS    (50 * NS_PER_MS)
#define BIG_LEN    ((size_t)64 * 1024) /* room for NETSTAT_MAX + 1 columns */

/* ---- helpers ------------------------------------------------------------------------------- */

/* $HOPBENCH_FIXTURES/rel (default tests/fixtures/rel, relative to the repo root). */
static const char *fixture(const char *rel)
{
    static char buf[4096];
    const char *root = getenv("HOPBENCH_FIXTURES");
    int n = snprintf(buf, sizeof(buf), "%s/%s", root != NULL ? root : "tests/fixtures", rel);

    assert_true(n > 0 && (size_t)n < sizeof(buf));
    return buf;
}

/* The whole fixture file rel, NUL-terminated; the caller frees it. */
static char *slurp(const char *rel)
{
    const char *path = fixture(rel);
    FILE *f = fopen(path, "r");
    char *text = calloc(1, 1 << 20);
    size_t n;

    if (f == NULL)
        fail_msg("cannot open fixture %s (run from the repo root or set HOPBENCH_FIXTURES)", path);
    assert_non_null(text);
    n = fread(text, 1, (1 << 20) - 1, f);
    assert_false(ferror(f));
    text[n] = '\0';
    fclose(f);
    return text;
}

static struct netstat *new_netstat(void)
{
    struct netstat *ns = calloc(1, sizeof(*ns));

    assert_non_null(ns);
    return ns;
}

/* Spins until the calling thread has used ns more CPU time. */
static void burn_cpu(uint64_t ns)
{
    uint64_t end = thread_cpu_ns() + ns;

    while (thread_cpu_ns() < end)
        ;
}

static void assert_not_ok(const struct ctr_val *v)
{
    assert_false(v->ok);
    assert_int_equal(v->v, 0);
    assert_true(v->why[0] != '\0');
}

static void assert_ok(const struct ctr_val *v, uint64_t want)
{
    if (!v->ok) fail_msg("not ok: %s", v->why);
    assert_int_equal(v->v, want);
    assert_string_equal(v->why, "");
}

/* A figure from a live system: a number, or not ok with a reason. */
static void check_live(const char *what, const struct ctr_val *v)
{
    if (v->ok) {
        assert_string_equal(v->why, "");
        print_message("  %-22s %" PRIu64 "\n", what, v->v);
    } else {
        assert_not_ok(v);
        print_message("  %-22s unavailable: %s\n", what, v->why);
    }
}

/* ---- netstat / snmp fixtures --------------------------------------------------------------- */

static void test_netstat_fixture(void **state)
{
    struct netstat *ns = new_netstat();
    char *netstat = slurp("proc/netstat"), *snmp = slurp("proc/snmp");
    uint64_t v = 42;

    (void)state;
    assert_int_equal(netstat_parse(ns, netstat), 0);
    assert_int_equal(netstat_parse(ns, snmp), 0);
    assert_int_equal(ns->n, 312); /* every column of both files (6.18) */
    assert_int_equal(netstat_get(ns, "TcpExt.TW", &v), 0);
    assert_int_equal(v, 1101762);
    assert_int_equal(netstat_get(ns, "TcpExt.SyncookiesSent", &v), 0); /* first column */
    assert_int_equal(v, 0);
    assert_int_equal(netstat_get(ns, "IpExt.InOctets", &v), 0);
    assert_int_equal(v, UINT64_C(36812578482));
    assert_int_equal(netstat_get(ns, "Tcp.ActiveOpens", &v), 0);
    assert_int_equal(v, 1132875);
    assert_int_equal(netstat_get(ns, "Tcp.RtoAlgorithm", &v), 0);
    assert_int_equal(v, 1);
    assert_int_equal(netstat_get(ns, "MPTcpExt.WinProbe", &v), 0); /* last column of a line */
    v = 42;
    assert_int_equal(netstat_get(ns, "Tcp.MaxConn", &v), -ERANGE); /* printed as -1 */
    assert_int_equal(v, 42);
    assert_int_equal(netstat_get(ns, "TcpExt.NoSuchCounter", &v), -ENOENT);
    assert_int_equal(netstat_get(ns, "TW", &v), -ENOENT); /* names carry their prefix */
    free(netstat);
    free(snmp);
    free(ns);
}

/* /proc/net/softnet_stat: hex columns, dropped and time_squeeze summed over the CPUs. */
static void test_softnet(void **state)
{
    /* two CPUs as kernel 6.1 prints them (13 columns); CPU 1 dropped 0xa3 */
    static const char two[] =
        "0d221686 00000000 0000000a 00000000 00000000 00000000 00000000 00000000 00000000 "
        "00000000 00000000 00000000 00000000\n"
        "0778be7a 000000a3 00000009 00000000 00000000 00000000 00000000 00000000 00000000 "
        "00000000 00000000 00000001 00000001\n";
    struct netstat *ns = new_netstat();
    uint64_t v = 0;

    (void)state;
    assert_int_equal(softnet_parse(ns, two), 0);
    assert_int_equal(netstat_get(ns, "Softnet.Dropped", &v), 0);
    assert_int_equal(v, 0xa3);
    assert_int_equal(netstat_get(ns, "Softnet.TimeSqueeze", &v), 0);
    assert_int_equal(v, 0x13);
    ns->n = 0;
    assert_int_equal(softnet_parse(ns, "FFFFFFFF ffffffff 1\n"), 0); /* both cases of hex */
    assert_int_equal(netstat_get(ns, "Softnet.Dropped", &v), 0);
    assert_int_equal(v, 0xffffffffu);
    ns->n = 0;
    assert_int_equal(softnet_parse(ns, ""), -EINVAL);                    /* no CPU */
    assert_int_equal(softnet_parse(ns, "0d221686 00000000\n"), -EINVAL); /* too few columns */
    assert_int_equal(softnet_parse(ns, "0d221686 0000zz00 00\n"), -EINVAL);
    assert_int_equal(softnet_parse(ns, "11112222333344445 0 0\n"), -EINVAL); /* > 64 bits */
    assert_int_equal(ns->n, 0);
    free(ns);
}

static void test_netstat_malformed(void **state)
{
    static const char *const bad[] = {
        "TcpExt: A B\n",                             /* header without values */
        "TcpExt: A B\nIpExt: 1 2\n",                 /* prefixes differ */
        "TcpExt: A B\nTcpExt: 1\n",                  /* fewer values */
        "TcpExt: A\nTcpExt: 1 2\n",                  /* more values */
        "TcpExt: A B\nTcpExt: 1 x\n",                /* not a number */
        "TcpExt: A B\nTcpExt: 1 2x\n",               /* trailing junk */
        "TcpExt: A\nTcpExt: 18446744073709551616\n", /* UINT64_MAX + 1 */
        "TcpExt: 1 2\nTcpExt: 1 2\n",                /* values where the header should be */
        "TcpExt A B\nTcpExt 1 2\n",                  /* no colon */
        "TcpExt: A B\n\nTcpExt: 1 2\n",              /* blank line inside a pair */
    };
    struct netstat *ns = new_netstat();
    char *cols = slurp("proc/netstat-columns"), *nohdr = slurp("proc/netstat-no-header");

    (void)state;
    assert_int_equal(netstat_parse(ns, "Tcp: A B\nTcp: 1 2\n"), 0);
    assert_int_equal(ns->n, 2);
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        if (netstat_parse(ns, bad[i]) != -EINVAL) fail_msg("accepted: %s", bad[i]);
        assert_int_equal(ns->n, 2); /* a failed parse appends nothing */
    }
    assert_int_equal(netstat_parse(ns, cols), -EINVAL);
    assert_int_equal(netstat_parse(ns, nohdr), -EINVAL);
    assert_int_equal(ns->n, 2);
    free(cols);
    free(nohdr);
    free(ns);
}

static void test_netstat_edges(void **state)
{
    struct netstat *ns = new_netstat();
    char name[128], *big = malloc(BIG_LEN);
    uint64_t v;
    size_t len;

    (void)state;
    assert_non_null(big);
    /* blank lines between pairs, tabs, no final newline, UINT64_MAX */
    assert_int_equal(netstat_parse(ns, "\n  \nIp: A\tB\nIp: 18446744073709551615 7\n\nX: C\nX: 3"),
                     0);
    assert_int_equal(netstat_get(ns, "Ip.A", &v), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(netstat_get(ns, "X.C", &v), 0);
    assert_int_equal(v, 3);
    assert_int_equal(netstat_parse(ns, ""), 0);
    assert_int_equal(ns->n, 3);

    memset(name, 'N', sizeof(name) - 1);
    name[NETSTAT_NAME_MAX - 3] = '\0'; /* "X." + name + NUL fills NETSTAT_NAME_MAX exactly */
    snprintf(big, BIG_LEN, "X: %s\nX: 1\n", name);
    assert_int_equal(netstat_parse(ns, big), 0);
    name[NETSTAT_NAME_MAX - 3] = 'N'; /* one more */
    name[NETSTAT_NAME_MAX - 2] = '\0';
    snprintf(big, BIG_LEN, "X: %s\nX: 1\n", name);
    assert_int_equal(netstat_parse(ns, big), -ENAMETOOLONG);

    ns->n = 0; /* NETSTAT_MAX + 1 columns */
    len = (size_t)snprintf(big, BIG_LEN, "W:");
    for (int i = 0; i <= NETSTAT_MAX; i++)
        len += (size_t)snprintf(big + len, BIG_LEN - len, " C%d", i);
    len += (size_t)snprintf(big + len, BIG_LEN - len, "\nW:");
    for (int i = 0; i <= NETSTAT_MAX; i++)
        len += (size_t)snprintf(big + len, BIG_LEN - len, " %d", i);
    assert_true(len < BIG_LEN - 1);
    assert_int_equal(netstat_parse(ns, big), -ENOSPC);
    assert_int_equal(ns->n, 0);
    free(big);
    free(ns);
}

static void test_netstat_delta(void **state)
{
    struct netstat *a = new_netstat(), *b = new_netstat();
    struct ctr_val d;

    (void)state;
    assert_int_equal(netstat_parse(a, "T: X Y Z N\nT: 10 5 7 -1\n"), 0);
    assert_int_equal(netstat_parse(b, "T: X Y Q N\nT: 25 4 1 -1\n"), 0);
    d = netstat_delta(a, b, "T.X");
    assert_ok(&d, 15);
    d = netstat_delta(a, a, "T.X");
    assert_ok(&d, 0);               /* a real zero is ok */
    d = netstat_delta(a, b, "T.Y"); /* went backwards */
    assert_not_ok(&d);
    assert_non_null(strstr(d.why, "backwards"));
    d = netstat_delta(a, b, "T.Z"); /* gone from after */
    assert_not_ok(&d);
    assert_non_null(strstr(d.why, "after"));
    d = netstat_delta(a, b, "T.Q"); /* new in after */
    assert_not_ok(&d);
    assert_non_null(strstr(d.why, "before"));
    d = netstat_delta(a, b, "T.N"); /* negative constant */
    assert_not_ok(&d);
    free(a);
    free(b);
}

/* ---- /proc/stat and smaps_rollup fixtures -------------------------------------------------- */

static void test_procstat_fixture(void **state)
{
    char *text = slurp("proc/stat");
    struct cpu_jiffies a, b;
    long tck = sysconf(_SC_CLK_TCK);

    (void)state;
    assert_int_equal(procstat_parse(text, &a), 0);
    assert_int_equal(a.user, 51289);
    assert_int_equal(a.nice, 0);
    assert_int_equal(a.system, 89918);
    assert_int_equal(a.idle, 188925);
    assert_int_equal(a.iowait, 501);
    assert_int_equal(a.softirq, 12193);
    assert_int_equal(a.steal, 0);
    b = a;
    b.user += 3;
    b.softirq += 2;
    b.idle += 1000;  /* idle and iowait do not count */
    b.iowait -= 100; /* and may even go backwards */
    b.steal += 50;   /* nor steal: another guest's time */
    assert_int_equal(procstat_busy_ns(&a, &b), 5 * NS_PER_S / (uint64_t)tck);
    assert_int_equal(procstat_busy_ns(&b, &a), 0); /* swapped: clamped, no wrap */
    assert_int_equal(procstat_steal_ns(&a, &b), 50 * NS_PER_S / (uint64_t)tck);
    assert_int_equal(procstat_steal_ns(&b, &a), 0);
    assert_int_equal(procstat_parse("cpu  1 2 3 4 5 6 7 8\n", &b), 0); /* no guest columns */
    assert_int_equal(b.steal, 8);
    assert_int_equal(procstat_parse("cpu 1 2 3 4 5 6 7\n", &b), -EINVAL);
    assert_int_equal(procstat_parse("cpu 1 2 3 4 5 6 7 x\n", &b), -EINVAL);
    assert_int_equal(procstat_parse("cpu0 1 2 3 4 5 6 7 8\n", &b), -ENOENT);
    assert_int_equal(procstat_parse("", &b), -ENOENT);
    free(text);
}

/* The per-CPU lines counted; the busy time from the idle side. */
static void test_procstat_idle(void **state)
{
    char *text = slurp("proc/stat");
    struct cpu_jiffies a, b;
    uint64_t tick = NS_PER_S / (uint64_t)sysconf(_SC_CLK_TCK);

    (void)state;
    assert_int_equal(procstat_parse(text, &a), 0);
    assert_int_equal(a.cpus, 2);
    b = a;
    b.idle += 30;  /* of a 1-s window on 2 CPUs, 0.3 s idle, */
    b.iowait += 5; /* 0.05 s waiting for I/O */
    b.steal += 5;  /* and 0.05 s given to another guest: */
    assert_int_equal(procstat_idle_busy_ns(&a, &b, NS_PER_S), 2 * NS_PER_S - 40 * tick);
    b.idle += 1000; /* idle longer than the window: clamped */
    assert_int_equal(procstat_idle_busy_ns(&a, &b, NS_PER_S), 0);
    assert_int_equal(procstat_parse("cpu  1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\n", &b), 0);
    assert_int_equal(b.cpus, 1);
    free(text);
}

/* /proc/schedstat's run time, the machine's root cpuacct cgroup, the kernel's configuration. */
static void test_machine_cpu_fixture(void **state)
{
    static const char sched[] = "version 15\ntimestamp 4296784292\n"
                                "cpu0 0 0 1 2 3 4 1000000007 5 6\n"
                                "domain0 3 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"
                                "cpu1 0 0 1 2 3 4 2000000000 5 6\n";
    char *hybrid = slurp("proc/mountinfo-hybrid"), *v2 = slurp("proc/mountinfo-v2");
    char dir[256];
    uint64_t ns = 0;

    (void)state;
    assert_int_equal(schedstat_parse(sched, &ns), 0);
    assert_int_equal(ns, 3000000007ULL); /* the 7th number of each cpu line, summed */
    assert_int_equal(schedstat_parse("version 14\ncpu0 0 0 1 2 3 4 5 6 7\n", &ns), -EINVAL);
    assert_int_equal(schedstat_parse("version 15\ncpu0 0 0 1 2 3\n", &ns), -EINVAL);
    assert_int_equal(schedstat_parse("version 15\ntimestamp 1\n", &ns), -ENOENT);
    assert_int_equal(cgroup_root_cpuacct_resolve(hybrid, dir, sizeof(dir)), 0);
    assert_string_equal(dir, "/sys/fs/cgroup/cpuacct");
    assert_int_equal(cgroup_root_cpuacct_resolve(v2, dir, sizeof(dir)), -ENOENT);
    /* a container's mount of its own cgroup is not the machine's */
    assert_int_equal(cgroup_root_cpuacct_resolve("32 30 0:29 /docker/x /sys/fs/cgroup/cpuacct rw "
                                                 "- cgroup cgroup rw,cpuacct\n",
                                                 dir, sizeof(dir)),
                     -ENOENT);
    assert_true(kconfig_set("# x\nCONFIG_IRQ_TIME_ACCOUNTING=y\n", "CONFIG_IRQ_TIME_ACCOUNTING"));
    assert_false(
        kconfig_set("# CONFIG_IRQ_TIME_ACCOUNTING is not set\n", "CONFIG_IRQ_TIME_ACCOUNTING"));
    assert_false(kconfig_set("CONFIG_IRQ_TIME_ACCOUNTING=yes\n", "CONFIG_IRQ_TIME_ACCOUNTING"));
    assert_string_equal(machine_cpu_source_name(MACHINE_CPU_CPUACCT), "cpuacct");
    free(hybrid);
    free(v2);
}

static void test_smaps_fixture(void **state)
{
    char *text = slurp("proc/smaps_rollup");
    uint64_t v = 0;

    (void)state;
    assert_int_equal(smaps_rollup_parse(text, &v), 0); /* Pss_Anon comes first: not it */
    assert_int_equal(v, 227 * 1024);
    assert_int_equal(smaps_rollup_parse("Rss: 5 kB\nPss_Anon: 1 kB\n", &v), -ENOENT);
    assert_int_equal(smaps_rollup_parse("", &v), -ENOENT);
    assert_int_equal(smaps_rollup_parse("Pss: x kB\n", &v), -EINVAL);
    assert_int_equal(smaps_rollup_parse("Pss: 12 MB\n", &v), -EINVAL);
    assert_int_equal(smaps_rollup_parse("Pss: 12\n", &v), -EINVAL);
    assert_int_equal(smaps_rollup_parse("Pss: 18014398509481984 kB\n", &v), -EINVAL);
    assert_int_equal(smaps_rollup_parse("Pss:\t0 kB", &v), 0);
    assert_int_equal(v, 0);
    free(text);
}

/* ---- cgroup fixtures ----------------------------------------------------------------------- */

static void test_keyed_get(void **state)
{
    const char *text = "inactive_anon 5\ninactive_file 7\nfile 9\nbad 1x\n";
    uint64_t v = 0;

    (void)state;
    assert_int_equal(cgroup_keyed_get(text, "inactive_file", &v), 0);
    assert_int_equal(v, 7);
    assert_int_equal(cgroup_keyed_get(text, "file", &v), 0); /* not inactive_file's tail */
    assert_int_equal(v, 9);
    assert_int_equal(cgroup_keyed_get(text, "inactive", &v), -ENOENT);
    assert_int_equal(cgroup_keyed_get(text, "bad", &v), -EINVAL);
    assert_int_equal(v, 9);
    assert_int_equal(cgroup_keyed_get("", "x", &v), -ENOENT);
}

/* Resolves controller against two fixture files and compares with want (or an error). */
static void check_resolve(const char *cg, const char *mi, const char *controller, int want_rc,
                          const char *want)
{
    char *cgt = slurp(cg), *mit = slurp(mi);
    char buf[256];
    int rc = cgroup_dir_resolve(cgt, mit, controller, buf, sizeof(buf));

    if (rc != want_rc) fail_msg("%s + %s, \"%s\": rc %d, want %d", cg, mi, controller, rc, want_rc);
    if (rc == 0) assert_string_equal(buf, want);
    free(cgt);
    free(mit);
}

static void test_cgroup_resolve(void **state)
{
    const char *hy = "proc/cgroup-hybrid", *hym = "proc/mountinfo-hybrid";
    const char *co = "proc/cgroup-combined", *com = "proc/mountinfo-combined";
    const char *session = "/user.slice/user-1000.slice/session-2.scope";
    char want[256], buf[8];

    (void)state;
    check_resolve(hy, hym, "cpu", 0, "/sys/fs/cgroup/cpu"); /* not cpuacct or cpuset */
    check_resolve(hy, hym, "cpuacct", 0, "/sys/fs/cgroup/cpuacct");
    check_resolve(hy, hym, "memory", 0, "/sys/fs/cgroup/memory/bench/run1");
    check_resolve(hy, hym, "", 0, "/sys/fs/cgroup/unified");
    check_resolve(hy, hym, "hugetlb", -ENOENT, NULL);
    snprintf(want, sizeof(want), "/sys/fs/cgroup/cpu,cpuacct%s", session);
    check_resolve(co, com, "cpu", 0, want);
    check_resolve(co, com, "cpuacct", 0, want);
    snprintf(want, sizeof(want), "/sys/fs/cgroup/systemd%s", session);
    check_resolve(co, com, "name=systemd", 0, want);
    snprintf(want, sizeof(want), "/sys/fs/cgroup/unified%s", session);
    check_resolve(co, com, "", 0, want);
    check_resolve(co, "proc/mountinfo-v2", "cpu", -ENOENT, NULL); /* listed, not mounted */
    /* the container's mount root is stripped from the path */
    check_resolve("proc/cgroup-v2", "proc/mountinfo-v2", "", 0, "/sys/fs/cgroup/worker");
    check_resolve("proc/cgroup-v2", "proc/mountinfo-v2", "memory", -ENOENT, NULL);
    check_resolve("proc/cgroup-v2", "proc/mountinfo-v2-escaped", "", 0,
                  "/mnt/my cgroups/pod7/ctr3/worker");
    check_resolve("proc/cgroup-v2", "proc/mountinfo-hybrid", "", 0,
                  "/sys/fs/cgroup/unified/kubepods/pod7/ctr3/worker");
    assert_int_equal(
        cgroup_dir_resolve("0::/\n", "40 30 0:37 /a /x rw - cgroup2 c rw\n", "", buf, sizeof(buf)),
        -ENOENT); /* mount root /a does not cover / */
    assert_int_equal(cgroup_dir_resolve("0::/abc\n", "40 30 0:37 /ab /x rw - cgroup2 c rw\n", "",
                                        buf, sizeof(buf)),
                     -ENOENT); /* /ab is not a path prefix of /abc */
    assert_int_equal(cgroup_dir_resolve("0::/\n", "40 30 0:37 / /sys/fs/cgroup rw - cgroup2 c rw\n",
                                        "", buf, sizeof(buf)),
                     -ENAMETOOLONG);
    assert_int_equal(cgroup_dir_resolve("garbage\n", "", "", buf, sizeof(buf)), -EINVAL);
}

static void test_cgroup_v1_fixture(void **state)
{
    struct cgroup_cpu c;
    struct ctr_val ws;

    (void)state;
    assert_int_equal(cgroup_cpu_read(fixture("cgroup-v1/cpuacct"), &c), 0);
    assert_int_equal(c.version, 1);
    assert_ok(&c.usage_ns, 123456789);
    assert_not_ok(&c.nr_throttled); /* cpuacct alone has no cpu.stat */
    assert_non_null(strstr(c.nr_throttled.why, "cpu.stat"));
    assert_not_ok(&c.throttled_us);

    assert_int_equal(cgroup_cpu_read(fixture("cgroup-v1/cpu"), &c), 0);
    assert_not_ok(&c.usage_ns); /* cpu alone has no cpuacct.usage */
    assert_non_null(strstr(c.usage_ns.why, "cpuacct.usage"));
    assert_ok(&c.nr_throttled, 3);
    assert_ok(&c.throttled_us, 4500); /* throttled_time is ns */

    assert_int_equal(cgroup_cpu_read(fixture("cgroup-v1/cpu,cpuacct"), &c), 0);
    assert_ok(&c.usage_ns, 987654321);
    assert_ok(&c.nr_throttled, 0);
    assert_ok(&c.throttled_us, 0);

    assert_int_equal(cgroup_cpu_read(fixture("cgroup-v1/bad"), &c), 0);
    assert_not_ok(&c.usage_ns);
    assert_non_null(strstr(c.usage_ns.why, "malformed"));
    assert_not_ok(&c.nr_throttled); /* -1 */
    assert_not_ok(&c.throttled_us); /* missing */

    ws = cgroup_working_set(fixture("cgroup-v1/memory"));
    assert_ok(&ws, 10485760 - 3145728); /* total_inactive_file, not inactive_file */
    ws = cgroup_working_set(fixture("cgroup-v1/cpu"));
    assert_not_ok(&ws);
    assert_non_null(strstr(ws.why, "memory.usage_in_bytes"));
}

/* MemAvailable from a captured /proc/meminfo; the "KEY: N kB" lines, malformed ones refused. */
static void test_meminfo_fixture(void **state)
{
    char *text = slurp("proc/meminfo");
    uint64_t v = 0, want = 0;
    const char *line;

    (void)state;
    line = strstr(text, "MemAvailable:");
    assert_non_null(line);
    assert_int_equal(sscanf(line, "MemAvailable: %" SCNu64, &want), 1);
    assert_int_equal(meminfo_parse(text, "MemAvailable", &v), 0);
    assert_true(v == want * 1024); /* the file's own figure, in bytes */
    assert_int_equal(meminfo_read(fixture("proc/meminfo"), "MemAvailable", &v), 0);
    assert_true(v == want * 1024);
    assert_int_equal(meminfo_parse(text, "MemNone", &v), -ENOENT);
    assert_int_equal(meminfo_parse("MemAvailable: 12 MB\n", "MemAvailable", &v), -EINVAL);
    assert_int_equal(meminfo_parse("MemAvailable: x kB\n", "MemAvailable", &v), -EINVAL);
    assert_int_equal(meminfo_parse("MemAvailable: 18014398509481984 kB\n", "MemAvailable", &v),
                     -EINVAL); /* 2^54 kB overflows bytes */
    assert_int_equal(meminfo_read(fixture("proc/none"), "MemAvailable", &v), -ENOENT);
    free(text);
}

/* Room under a memory limit: limit less the working set, the lowest up the hierarchy. */
static void test_cgroup_mem_room(void **state)
{
    uint64_t room = 0;

    (void)state;
    /* v1: usage 10 MiB, total_inactive_file 3 MiB; limit 16 MiB, hierarchical 12 MiB */
    assert_int_equal(cgroup_mem_room(fixture("cgroup-v1/memory"), &room), 1);
    assert_true(room == 12582912 - (10485760 - 3145728));
    assert_int_equal(cgroup_mem_room(fixture("cgroup-v1/unlimited"), &room), 0);
    assert_int_equal(cgroup_mem_room(fixture("cgroup-v1/cpu"), &room), -ENOENT);
    /* v2: job has no limit of its own; its parent's 64 MiB less 32 - 4 MiB applies */
    assert_int_equal(cgroup_mem_room(fixture("cgroup-v2/limited/job"), &room), 1);
    assert_true(room == 67108864 - (33554432 - 4194304));
    assert_int_equal(cgroup_mem_room(fixture("cgroup-v2/limited"), &room), 1);
    assert_true(room == 67108864 - (33554432 - 4194304));
    assert_int_equal(cgroup_mem_room(fixture("cgroup-v2/app"), &room), 0); /* no memory.max */
    assert_int_equal(cgroup_mem_room(fixture("cgroup-v2/badmax"), &room), -EINVAL);
    assert_int_equal(cgroup_mem_room(fixture("cgroup-v2/none"), &room), -ENOENT);
}

/* This process's cgroup: a room that is a plausible number, or no limit; never an error. */
static void test_cgroup_mem_room_live(void **state)
{
    uint64_t room = 0;
    int rc = cgroup_mem_room_pid(0, &room);

    (void)state;
    if (rc == -ENOENT) skip(); /* no memory cgroup mounted here */
    assert_true(rc == 0 || rc == 1);
}

static void test_cgroup_v2_fixture(void **state)
{
    struct cgroup_cpu c;
    struct ctr_val ws;

    (void)state;
    assert_int_equal(cgroup_cpu_read(fixture("cgroup-v2/app"), &c), 0);
    assert_int_equal(c.version, 2);
    assert_ok(&c.usage_ns, 2500 * NS_PER_US);
    assert_ok(&c.nr_throttled, 2);
    assert_ok(&c.throttled_us, 7300);
    ws = cgroup_working_set(fixture("cgroup-v2/app"));
    assert_ok(&ws, 20971520 - 8388608);

    /* the root: usage only, no memory.current */
    assert_int_equal(cgroup_cpu_read(fixture("cgroup-v2/root"), &c), 0);
    assert_int_equal(c.version, 2);
    assert_ok(&c.usage_ns, UINT64_C(1247884000) * NS_PER_US);
    assert_not_ok(&c.nr_throttled);
    assert_non_null(strstr(c.nr_throttled.why, "nr_throttled"));
    assert_not_ok(&c.throttled_us);
    ws = cgroup_working_set(fixture("cgroup-v2/root"));
    assert_not_ok(&ws);
    assert_non_null(strstr(ws.why, "memory.current"));

    ws = cgroup_working_set(fixture("cgroup-v2/clamp")); /* inactive > current */
    assert_ok(&ws, 0);

    assert_int_equal(cgroup_cpu_read(fixture("cgroup-v2/none"), &c), -ENOENT);
    assert_int_equal(c.version, 0);
    assert_not_ok(&c.usage_ns);
    assert_not_ok(&c.nr_throttled);
    assert_not_ok(&c.throttled_us);
    ws = cgroup_working_set(fixture("cgroup-v2/none"));
    assert_not_ok(&ws);
    assert_int_equal(cgroup_cpu_read(fixture("cgroup-v2/app/cpu.stat"), &c), -ENOTDIR);
}

/* A mountinfo line: a v1 hierarchy of `controllers` mounted at the fixture dir rel (root /). */
static void add_v1_mount(char *mi, size_t cap, int id, const char *rel, const char *controllers)
{
    char abs[4096], esc[8192];
    size_t o = 0, len = strlen(mi);

    assert_non_null(realpath(fixture(rel), abs));
    for (const char *p = abs; *p != '\0' && o + 5 < sizeof(esc); p++) {
        if (*p == ' ') {
            memcpy(esc + o, "\\040", 4);
            o += 4;
        } else {
            esc[o++] = *p;
        }
    }
    esc[o] = '\0';
    snprintf(mi + len, cap - len, "%d 30 0:%d / %s rw,relatime - cgroup cgroup rw,%s\n", id, id,
             esc, controllers);
}

static void test_cgroup_v1_sibling(void **state)
{
    char *mi = slurp("proc/mountinfo-hybrid"), buf[4096];
    static char fx[16384];

    (void)state;
    assert_int_equal(cgroup_v1_sibling_resolve("/sys/fs/cgroup/cpuacct/bench/run1", mi, "memory",
                                               buf, sizeof(buf)),
                     0);
    assert_string_equal(buf, "/sys/fs/cgroup/memory/bench/run1");
    assert_int_equal(
        cgroup_v1_sibling_resolve("/sys/fs/cgroup/memory", mi, "cpuacct", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "/sys/fs/cgroup/cpuacct");
    assert_int_equal(
        cgroup_v1_sibling_resolve("/sys/fs/cgroup/memory/a", mi, "memory", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "/sys/fs/cgroup/memory/a");
    /* not under a v1 hierarchy (v2, tmpfs, elsewhere; a name that only starts alike) */
    assert_int_equal(
        cgroup_v1_sibling_resolve("/sys/fs/cgroup/unified/a", mi, "memory", buf, sizeof(buf)),
        -ENOENT);
    assert_int_equal(cgroup_v1_sibling_resolve("/tmp/x", mi, "memory", buf, sizeof(buf)), -ENOENT);
    assert_int_equal(
        cgroup_v1_sibling_resolve("/sys/fs/cgroup/memoryx/a", mi, "cpuacct", buf, sizeof(buf)),
        -ENOENT);
    assert_int_equal(
        cgroup_v1_sibling_resolve("/sys/fs/cgroup/memory/a", mi, "nosuch", buf, sizeof(buf)),
        -ENOENT);
    /* a container's view: both mounts rooted at /pod7, the path keeps its root */
    snprintf(fx, sizeof(fx), "%s",
             "31 30 0:28 /pod7 /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct\n"
             "34 30 0:31 /pod7 /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
    assert_int_equal(
        cgroup_v1_sibling_resolve("/sys/fs/cgroup/cpuacct/w", fx, "memory", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "/sys/fs/cgroup/memory/w");
    free(mi);
}

/* --server-cgroup on v1 with each controller apart: any one directory gives CPU and memory. */
static void test_cgroup_any_v1_fixture(void **state)
{
    static char mi[16384];
    struct cgroup_cpu c;
    struct ctr_val ws;

    (void)state;
    mi[0] = '\0';
    add_v1_mount(mi, sizeof(mi), 31, "cgroup-v1/cpu", "cpu");
    add_v1_mount(mi, sizeof(mi), 32, "cgroup-v1/cpuacct", "cpuacct");
    add_v1_mount(mi, sizeof(mi), 34, "cgroup-v1/memory", "memory");
    assert_int_equal(cgroup_cpu_read_any(fixture("cgroup-v1/memory"), mi, &c), 0);
    assert_int_equal(c.version, 1);
    assert_ok(&c.usage_ns, 123456789); /* from cpuacct */
    assert_ok(&c.nr_throttled, 3);     /* from cpu */
    assert_ok(&c.throttled_us, 4500);
    ws = cgroup_working_set_any(fixture("cgroup-v1/cpuacct"), mi);
    assert_ok(&ws, 10485760 - 3145728); /* from memory */
    ws = cgroup_working_set_any(fixture("cgroup-v1/memory"), mi);
    assert_ok(&ws, 10485760 - 3145728);
    /* no memory hierarchy: the reason names the file that was missing */
    mi[0] = '\0';
    add_v1_mount(mi, sizeof(mi), 32, "cgroup-v1/cpuacct", "cpuacct");
    ws = cgroup_working_set_any(fixture("cgroup-v1/cpuacct"), mi);
    assert_not_ok(&ws);
    assert_non_null(strstr(ws.why, "memory.usage_in_bytes"));
    assert_int_equal(cgroup_cpu_read_any(fixture("cgroup-v1/cpuacct"), mi, &c), 0);
    assert_ok(&c.usage_ns, 123456789);
    assert_not_ok(&c.throttled_us); /* no cpu hierarchy */
    /* v2 needs no sibling */
    assert_int_equal(cgroup_cpu_read_any(fixture("cgroup-v2/app"), mi, &c), 0);
    assert_ok(&c.usage_ns, 2500 * NS_PER_US);
    ws = cgroup_working_set_any(fixture("cgroup-v2/app"), mi);
    assert_ok(&ws, 20971520 - 8388608);
}

/* ---- /proc/PID/stat ------------------------------------------------------------------------ */

static void test_proc_stat_fixture(void **state)
{
    /* a command name with a space and a ") (" inside; nice -5 (negative fields on the way) */
    static const char text[] =
        "4242 (php-fpm: pool ) (www) S 1 4242 4242 0 -1 4194624 1291 7 0 0 12 34 56 78 20 -5 1 0 "
        "987654 232017920 2731 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n";
    static const char zombie[] =
        "77 (sh) Z 76 77 77 0 -1 4227084 0 0 0 0 1 2 3 4 20 0 1 0 555 0 0 0\n";
    struct proc_stat st;

    (void)state;
    assert_int_equal(proc_stat_parse(text, &st), 0);
    assert_string_equal(st.comm, "php-fpm: pool )"); /* the first 15 bytes */
    assert_int_equal(st.ppid, 1);
    assert_int_equal(st.state, 'S');
    assert_int_equal(st.children_ticks, 56 + 78);
    assert_int_equal(st.start_ticks, 987654);
    assert_false(proc_state_exited(st.state));
    assert_int_equal(proc_stat_parse(zombie, &st), 0);
    assert_string_equal(st.comm, "sh");
    assert_int_equal(st.ppid, 76);
    assert_int_equal(st.state, 'Z');
    assert_int_equal(st.children_ticks, 7);
    assert_int_equal(st.start_ticks, 555);
    assert_true(proc_state_exited(st.state));
    assert_true(proc_state_exited('X'));
    assert_int_equal(proc_stat_parse("1 (x) S 1 2 3\n", &st), -EINVAL); /* too short */
    assert_int_equal(proc_stat_parse("no parenthesis\n", &st), -EINVAL);
    assert_int_equal(proc_stat_parse("1 (x)\n", &st), -EINVAL);
    assert_int_equal(proc_stat_parse("1 ) (x S 1 1 1 0 -1 0 0 0 0 0 1 2 3 4 20 0 1 0 5\n", &st),
                     -EINVAL); /* its only ')' before the '(' */
    assert_int_equal(proc_stat_parse("1 (x) S -1 1 1 0 -1 0 0 0 0 0 1 2 3 4 20 0 1 0 5\n", &st),
                     -EINVAL); /* a negative ppid */
    assert_int_equal(proc_stat_parse("1 (x) S 1 1 1 0 -1 0 0 0 0 0 1 2 -3 4 20 0 1 0 5\n", &st),
                     -EINVAL); /* a negative cutime */
}

/* ---- live: network counters ---------------------------------------------------------------- */

/* N blocking loopback connects to a fresh listener, each accepted and closed. */
static void loopback_connects(int n)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(sa);
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    assert_true(l >= 0);
    assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(l, n), 0);
    assert_int_equal(getsockname(l, (struct sockaddr *)&sa, &len), 0);
    for (int i = 0; i < n; i++) {
        int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), a;

        assert_true(c >= 0);
        assert_int_equal(connect(c, (struct sockaddr *)&sa, sizeof(sa)), 0);
        a = accept(l, NULL, NULL);
        assert_true(a >= 0);
        close(c);
        close(a);
    }
    close(l);
}

static void test_netstat_live(void **state)
{
    struct netstat *a = new_netstat(), *b = new_netstat();
    struct ctr_val d;
    uint64_t v;

    (void)state;
    assert_int_equal(netstat_read(a), 0);
    assert_int_equal(netstat_get(a, "Tcp.ActiveOpens", &v), 0);
    assert_int_equal(netstat_get(a, "TcpExt.TW", &v), 0);
    assert_int_equal(netstat_get(a, "TcpExt.ListenOverflows", &v), 0);
    assert_int_equal(netstat_get(a, "Tcp.MaxConn", &v), -ERANGE);
    print_message("  netstat+snmp: %u counters\n", a->n);
    loopback_connects(N_CONNECTS);
    assert_int_equal(netstat_read(b), 0);
    d = netstat_delta(a, b, "Tcp.ActiveOpens");
    assert_true(d.ok);
    assert_true(d.v >= N_CONNECTS);
    d = netstat_delta(a, b, "Tcp.PassiveOpens");
    assert_true(d.ok);
    assert_true(d.v >= N_CONNECTS);
    d = netstat_delta(a, b, "TcpExt.TW");
    check_live("delta TcpExt.TW", &d);
    assert_true(d.ok);
    free(a);
    free(b);
}

/* ---- live: CPU ----------------------------------------------------------------------------- */

static void test_procstat_live(void **state)
{
    struct cpu_jiffies a, b, c;

    (void)state;
    assert_int_equal(procstat_read(&a), 0);
    burn_cpu(BURN_NS);
    assert_int_equal(procstat_read(&b), 0);
    burn_cpu(BURN_NS / 5);
    assert_int_equal(procstat_read(&c), 0);
    assert_true(procstat_busy_ns(&a, &b) > 0); /* ~12 ticks at HZ 250 */
    assert_true(procstat_busy_ns(&a, &c) >= procstat_busy_ns(&a, &b));
    assert_true(b.user + b.system >= a.user + a.system);
    print_message("  system busy over %" PRIu64 " ms of our burning: %" PRIu64 " ms\n",
                  (uint64_t)(BURN_NS / NS_PER_MS),
                  (uint64_t)(procstat_busy_ns(&a, &b) / NS_PER_MS));
}

/*
 * The machine's run time, where this host has it, holds this process's own
 * CPU over the same interval: the whole is never below this part (the
 * sampled /proc/stat can be). Without schedstat or a v1 root cpuacct, -ENOENT.
 */
static void test_machine_cpu_live(void **state)
{
    struct machine_cpu a, b;
    struct ctr_val me0, me1;

    (void)state;
    if (machine_cpu_read(&a) == -ENOENT) {
        print_message("  no /proc/schedstat and no v1 root cpuacct: skipped\n");
        return;
    }
    me0 = proc_cpu_ns(0);
    for (int i = 0; i < 20; i++) { /* short bursts between ticks, as a light load runs */
        burn_cpu(BURN_NS / 40);
        usleep(1000);
    }
    me1 = proc_cpu_ns(0);
    assert_int_equal(machine_cpu_read(&b), 0);
    assert_int_equal(b.source, a.source);
    assert_true(me0.ok && me1.ok);
    assert_true(b.run_ns - a.run_ns >= me1.v - me0.v);
    print_message("  machine (%s) %" PRIu64 " ms, this process %" PRIu64 " ms\n",
                  machine_cpu_source_name(b.source), (uint64_t)((b.run_ns - a.run_ns) / NS_PER_MS),
                  (uint64_t)((me1.v - me0.v) / NS_PER_MS));
}

static void test_proc_cpu_self(void **state)
{
    struct ctr_val a = proc_cpu_ns(getpid()), b, z;

    (void)state;
    assert_true(a.ok);
    assert_true(a.v > 0);
    burn_cpu(20 * NS_PER_MS);
    b = proc_cpu_ns(getpid());
    assert_true(b.ok);
    assert_true(b.v >= a.v + 20 * NS_PER_MS);
    z = proc_cpu_ns(0); /* 0: the caller */
    assert_true(z.ok);
    assert_true(z.v >= b.v);
    z = proc_cpu_ns(-1);
    assert_not_ok(&z);
}

/* A child that burns ms of CPU, then exits. */
static pid_t fork_burner(uint64_t ns)
{
    pid_t p = fork();

    assert_true(p >= 0);
    if (p == 0) {
        burn_cpu(ns);
        _exit(0);
    }
    return p;
}

static void test_proc_cpu_child(void **state)
{
    pid_t p = fork_burner(30 * NS_PER_MS);
    siginfo_t si;
    struct ctr_val v;
    int st;

    (void)state;
    memset(&si, 0, sizeof(si));
    assert_int_equal(waitid(P_PID, (id_t)p, &si, WEXITED | WNOWAIT), 0);
    v = proc_cpu_ns(p); /* a zombie still has its clock */
    check_live("zombie child CPU ns", &v);
    assert_true(v.ok);
    assert_true(v.v >= 30 * NS_PER_MS);
    assert_int_equal(waitpid(p, &st, 0), p);
    v = proc_cpu_ns(p); /* reaped: gone, and must not read as 0 */
    assert_not_ok(&v);
    print_message("  reaped child: %s\n", v.why);
}

/* A child that sleeps until killed. */
static pid_t fork_sleeper(void)
{
    pid_t p = fork();

    assert_true(p >= 0);
    if (p == 0) {
        for (;;)
            pause();
    }
    return p;
}

static void test_proc_cpu_sleeping(void **state)
{
    pid_t p = fork_sleeper();
    struct ctr_val v;

    (void)state;
    usleep(20000);
    v = proc_cpu_ns(p);
    assert_true(v.ok);
    assert_true(v.v < 20 * NS_PER_MS); /* sleeping, so little */
    v = proc_pss_bytes(p);
    assert_true(v.ok);
    assert_true(v.v > 0);
    kill(p, SIGKILL);
    assert_int_equal(waitpid(p, NULL, 0), p);
}

static void test_proc_stat_live(void **state)
{
    long hz = sysconf(_SC_CLK_TCK);
    struct proc_stat self, before, after, z;
    pid_t p;
    siginfo_t si;

    (void)state;
    assert_int_equal(proc_stat_read(0, &self), 0);
    assert_int_equal(self.state, 'R');
    assert_true(self.start_ticks > 0);
    assert_int_equal(proc_stat_read(getpid(), &before), 0);
    assert_int_equal(before.start_ticks, self.start_ticks);
    /* a zombie: still there, state Z; once reaped, its CPU is in our cutime + cstime */
    p = fork_burner(50 * NS_PER_MS);
    memset(&si, 0, sizeof(si));
    assert_int_equal(waitid(P_PID, (id_t)p, &si, WEXITED | WNOWAIT), 0);
    assert_int_equal(proc_stat_read(p, &z), 0);
    assert_int_equal(z.state, 'Z');
    assert_true(proc_state_exited(z.state));
    assert_int_equal(waitpid(p, NULL, 0), p);
    assert_int_equal(proc_stat_read(p, &z), -ESRCH);
    assert_int_equal(proc_stat_read(0, &after), 0);
    print_message("  reaped children: %" PRIu64 " -> %" PRIu64 " ticks (%ld/s)\n",
                  before.children_ticks, after.children_ticks, hz);
    assert_true(after.children_ticks >= before.children_ticks + (uint64_t)(hz * 40 / 1000));
    assert_int_equal(proc_stat_read(-1, &z), -ESRCH);
}

/* ---- live: process tree and memory --------------------------------------------------------- */

/*
 * A child that forks a grandchild and reports its pid (returned in
 * *grandchild), then waits for EOF on *hold_w and kills and reaps the
 * grandchild before exiting.
 */
static pid_t fork_family(pid_t *grandchild, int *hold_w)
{
    int gc[2], hold[2];
    pid_t p;

    assert_int_equal(pipe(gc), 0);
    assert_int_equal(pipe(hold), 0);
    p = fork();
    assert_true(p >= 0);
    if (p == 0) {
        pid_t g;
        char c;

        close(hold[1]); /* before forking, so the grandchild does not hold it open */
        g = fork_sleeper();
        if (write(gc[1], &g, sizeof(g)) != sizeof(g) || read(hold[0], &c, 1) < 0) _exit(1);
        kill(g, SIGKILL);
        waitpid(g, NULL, 0);
        _exit(0);
    }
    close(gc[1]);
    close(hold[0]);
    assert_int_equal(read(gc[0], grandchild, sizeof(*grandchild)), sizeof(*grandchild));
    close(gc[0]);
    *hold_w = hold[1];
    return p;
}

static bool has_pid(const pid_t *v, size_t n, pid_t p)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == p) return true;
    return false;
}

static void test_proc_tree(void **state)
{
    pid_t gc, tree[64];
    int hold;
    pid_t c = fork_family(&gc, &hold);
    ssize_t n;

    (void)state;
    n = proc_tree(c, tree, ARRAY_LEN(tree));
    assert_int_equal(n, 2);
    assert_int_equal(tree[0], c);
    assert_int_equal(tree[1], gc);
    n = proc_tree(c, tree, 1); /* count beyond cap */
    assert_int_equal(n, 2);
    assert_int_equal(tree[0], c);
    assert_int_equal(proc_tree(c, NULL, 0), 2);
    n = proc_tree(getpid(), tree, ARRAY_LEN(tree));
    assert_true(n >= 3);
    assert_int_equal(tree[0], getpid());
    assert_true(has_pid(tree, (size_t)n, c) && has_pid(tree, (size_t)n, gc));
    assert_int_equal(proc_tree(gc, tree, ARRAY_LEN(tree)), 1);
    assert_int_equal(proc_tree(1 << 30, tree, ARRAY_LEN(tree)), -ESRCH); /* > pid_max */
    close(hold);
    assert_int_equal(waitpid(c, NULL, 0), c);
    assert_int_equal(proc_tree(c, tree, ARRAY_LEN(tree)), -ESRCH);
}

static void test_pss_live(void **state)
{
    struct ctr_val v = proc_pss_bytes(getpid());
    pid_t p;

    (void)state;
    check_live("PSS of self", &v);
    assert_true(v.ok);
    assert_true(v.v > 0);
    v = proc_pss_bytes(0);
    assert_true(v.ok);
    p = fork_burner(0);
    assert_int_equal(waitpid(p, NULL, 0), p);
    v = proc_pss_bytes(p);
    assert_not_ok(&v);
}

/* ---- live: cgroups ------------------------------------------------------------------------- */

static void test_cgroup_dirs_live(void **state)
{
    static const char *const ctrls[] = { "cpu", "cpuacct", "memory", "" };
    char dir[4096];

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(ctrls); i++) {
        int rc = cgroup_self_dir(ctrls[i], dir, sizeof(dir));

        if (rc == -ENOENT) {
            print_message("  cgroup %-8s not mounted\n", ctrls[i][0] ? ctrls[i] : "v2");
            continue;
        }
        assert_int_equal(rc, 0);
        assert_true(dir[0] == '/');
        print_message("  cgroup %-8s %s\n", ctrls[i][0] ? ctrls[i] : "v2", dir);
    }
}

/* Usage, if readable, must grow by at least most of what we burn (one tick may be unflushed). */
static void check_usage_grows(const char *dir)
{
    struct cgroup_cpu a, b;

    assert_int_equal(cgroup_cpu_read(dir, &a), 0);
    check_live("cgroup usage_ns", &a.usage_ns);
    check_live("cgroup nr_throttled", &a.nr_throttled);
    check_live("cgroup throttled_us", &a.throttled_us);
    if (!a.usage_ns.ok) return;
    burn_cpu(BURN_NS);
    assert_int_equal(cgroup_cpu_read(dir, &b), 0);
    assert_true(b.usage_ns.ok);
    print_message("  usage grew %" PRIu64 " us while we burned %" PRIu64 " us\n",
                  (uint64_t)((b.usage_ns.v - a.usage_ns.v) / NS_PER_US),
                  (uint64_t)(BURN_NS / NS_PER_US));
    assert_true(b.usage_ns.v >= a.usage_ns.v + BURN_NS / 2);
}

static void test_cgroup_cpu_live(void **state)
{
    static const char *const ctrls[] = { "cpuacct", "" };
    struct cgroup_cpu c;
    char dir[4096];

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(ctrls); i++) {
        if (cgroup_self_dir(ctrls[i], dir, sizeof(dir)) != 0) continue;
        print_message("  %s:\n", dir);
        check_usage_grows(dir);
    }
    assert_int_equal(cgroup_cpu_pid(0, &c), 0);
    print_message("  cgroup_cpu_pid(0): v%d\n", c.version);
    check_live("usage_ns", &c.usage_ns);
    check_live("nr_throttled", &c.nr_throttled);
    check_live("throttled_us", &c.throttled_us);
    assert_true(c.version == 1 || c.version == 2);
}

static void test_cgroup_memory_live(void **state)
{
    static const char *const ctrls[] = { "memory", "" };
    struct ctr_val ws;
    char dir[4096];

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(ctrls); i++) {
        if (cgroup_self_dir(ctrls[i], dir, sizeof(dir)) != 0) continue;
        ws = cgroup_working_set(dir);
        print_message("  %s:\n", dir);
        check_live("working set", &ws);
        if (ws.ok) assert_true(ws.v > 0); /* we are in it, and we have pages */
    }
    ws = cgroup_working_set_pid(0);
    check_live("working set (pid 0)", &ws);
}

int main(void)
{
    /* clang-format off */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_netstat_fixture),
        cmocka_unit_test(test_netstat_malformed),
        cmocka_unit_test(test_softnet),
        cmocka_unit_test(test_netstat_edges),
        cmocka_unit_test(test_netstat_delta),
        cmocka_unit_test(test_procstat_fixture),
        cmocka_unit_test(test_procstat_idle),
        cmocka_unit_test(test_machine_cpu_fixture),
        cmocka_unit_test(test_smaps_fixture),
        cmocka_unit_test(test_keyed_get),
        cmocka_unit_test(test_cgroup_resolve),
        cmocka_unit_test(test_cgroup_v1_fixture),
        cmocka_unit_test(test_cgroup_v2_fixture),
        cmocka_unit_test(test_meminfo_fixture),
        cmocka_unit_test(test_cgroup_mem_room),
        cmocka_unit_test(test_cgroup_mem_room_live),
        cmocka_unit_test(test_cgroup_v1_sibling),
        cmocka_unit_test(test_cgroup_any_v1_fixture),
        cmocka_unit_test(test_proc_stat_fixture),
        cmocka_unit_test(test_proc_stat_live),
        cmocka_unit_test(test_netstat_live),
        cmocka_unit_test(test_procstat_live),
        cmocka_unit_test(test_machine_cpu_live),
        cmocka_unit_test(test_proc_cpu_self),
        cmocka_unit_test(test_proc_cpu_child),
        cmocka_unit_test(test_proc_cpu_sleeping),
        cmocka_unit_test(test_proc_tree),
        cmocka_unit_test(test_pss_live),
        cmocka_unit_test(test_cgroup_dirs_live),
        cmocka_unit_test(test_cgroup_cpu_live),
        cmocka_unit_test(test_cgroup_memory_live),
    };
    /* clang-format on */

    return cmocka_run_group_tests(tests, NULL, NULL);
}
