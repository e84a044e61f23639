/*
 * counters: the kernel figures hopbench snapshots before and after every run,
 * so a report can show what a run cost beyond its own latency numbers:
 *   - /proc/net/netstat + /proc/net/snmp counters, parsed by name;
 *   - system-wide CPU jiffies from /proc/stat, and the machine's run time to
 *     the ns (/proc/schedstat, or the root cpuacct cgroup);
 *   - per-process CPU (clock_getcpuclockid) and PSS (smaps_rollup), and the
 *     process tree below a pid;
 *   - cgroup CPU usage/throttling and kubelet-style working set, v1 or v2,
 *     and the cgroup directory of a process.
 * Every text format has a pure parse function (so fixtures can test it) next
 * to the function that reads the live file. A figure that cannot be known is
 * a struct ctr_val with ok == false and a reason, never a 0.
 *
 * Left out: /proc/net/sockstat, sock_diag, the ephemeral port range and the
 * sysctls (read elsewhere); per-CPU /proc/stat figures and /proc/softirqs;
 * taskstats (needs CAP_NET_ADMIN); sampling while a run is in flight. Nothing
 * here is meant for the hot path: each call opens and parses files.
 */
#ifndef HOPBENCH_COUNTERS_H
#define HOPBENCH_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- values that may be unknown ------------------------------------------------------------ */

#define CTR_WHY_MAX 160

/*
 * A figure that may be unknown. ok == true: v holds it and why is "".
 * ok == false: v is 0 and must not be used; why says what went wrong, e.g.
 * "/proc/1/smaps_rollup: Permission denied" (truncated to fit).
 */
struct ctr_val {
    bool ok;
    uint64_t v;
    char why[CTR_WHY_MAX];
};

/* ---- /proc/net/netstat and /proc/net/snmp -------------------------------------------------- */

#define NETSTAT_MAX      640 /* this 6.18 kernel has ~310 names across both files */
#define NETSTAT_NAME_MAX 64  /* "Prefix.Name" plus NUL */

struct netstat_entry {
    char name[NETSTAT_NAME_MAX]; /* "TcpExt.TW", "Tcp.ActiveOpens", "IpExt.InOctets" */
    uint64_t v;                  /* the value; 0 when neg */
    bool neg;                    /* the kernel printed a negative number (Tcp.MaxConn -1) */
};

/* A snapshot of both files. ~50 KB: keep it on the heap or in static storage. */
struct netstat {
    unsigned n;
    struct netstat_entry e[NETSTAT_MAX];
};

/*
 * Slurps path (a /proc, sysfs or cgroup file, at most 64 MiB) into a malloc'd
 * NUL-terminated string; NULL with *err (negative errno) on failure.
 */
char *read_text(const char *path, int *err);

/*
 * Parses "Prefix: Name1 Name2 ...\nPrefix: v1 v2 ...\n" line pairs (the
 * format of both files) and appends one entry per column, named
 * "Prefix.Name", so callers look values up by name, never by position. Blank
 * lines are skipped. Values are decimal u64; a negative value (snmp's
 * Tcp.MaxConn is -1, a constant meaning "no limit") is stored with neg = true
 * and v = 0 so netstat_get/netstat_delta can refuse it instead of reporting 0.
 * Returns 0, or on failure leaves ns->n as it was and returns:
 *   -EINVAL       a header without a value line, prefixes that differ, column
 *                 counts that differ, a name not starting with a letter, a
 *                 value that is not a number or overflows u64;
 *   -ENAMETOOLONG "Prefix.Name" does not fit NETSTAT_NAME_MAX;
 *   -ENOSPC       more than NETSTAT_MAX entries in total.
 * ns->n must be initialised (0 for a fresh snapshot).
 */
int netstat_parse(struct netstat *ns, const char *text);

/*
 * Resets ns and parses /proc/net/netstat, /proc/net/snmp and
 * /proc/net/softnet_stat. Returns 0, or
 * a negative errno (see above) after which ns must not be used.
 */
int netstat_read(struct netstat *ns);

/*
 * Appends Softnet.Dropped and Softnet.TimeSqueeze, summed over the CPUs of a
 * /proc/net/softnet_stat text (hex columns: processed, dropped, time_squeeze).
 * A loopback packet dropped at a full per-CPU backlog (netdev_max_backlog)
 * shows here, and TCP then waits out a retransmission timeout (>= 200 ms).
 * Returns 0 or -EINVAL (ns unchanged beyond what was appended).
 */
int softnet_parse(struct netstat *ns, const char *text);

/*
 * Looks name up ("TcpExt.TW"). Returns 0 and sets *v, -ENOENT if absent, or
 * -ERANGE if the kernel printed a negative value (*v is left alone).
 */
int netstat_get(const struct netstat *ns, const char *name, uint64_t *v);

/*
 * after − before for name. Not ok (with the reason) when the name is missing
 * from either snapshot, is negative in either, or went backwards (counters
 * are cumulative: a decrease means a different network namespace or a bug).
 * Note these counters are per network namespace, so other TCP users of the
 * same namespace are included.
 */
struct ctr_val netstat_delta(const struct netstat *before, const struct netstat *after,
                             const char *name);

/* ---- /proc/stat ---------------------------------------------------------------------------- */

/*
 * System-wide CPU time in USER_HZ ticks, from the aggregate "cpu " line, and
 * the number of per-CPU lines ("cpuN") that follow it.
 */
struct cpu_jiffies {
    uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
    unsigned cpus;
};

/*
 * Parses the "cpu " line of /proc/stat text (guest and guest_nice, if
 * present, are ignored: they are already included in user and nice).
 * Returns 0, -ENOENT if there is no "cpu " line, -EINVAL if it has fewer than
 * eight numbers or one is not a number.
 */
int procstat_parse(const char *text, struct cpu_jiffies *out);

/* Reads /proc/stat into *out. 0 or negative errno (as procstat_parse, or the read's errno). */
int procstat_read(struct cpu_jiffies *out);

/*
 * Non-idle CPU time between samples a (earlier) and b, in ns:
 * Δ(user+nice+system+irq+softirq) * 1e9 / sysconf(_SC_CLK_TCK). Steal (the
 * hypervisor running another guest) is left out: it is not this host's work. Each
 * field's delta is clamped at 0, so swapped or odd samples never wrap.
 * Granularity is one tick (10 ms at USER_HZ 100) per CPU.
 */
uint64_t procstat_busy_ns(const struct cpu_jiffies *a, const struct cpu_jiffies *b);

/*
 * Steal time between samples a and b, in ns: Δsteal * 1e9 / sysconf(_SC_CLK_TCK),
 * the time a virtual machine's CPUs were ready but the hypervisor ran something
 * else (0 on bare metal). Clamped at 0 like procstat_busy_ns.
 */
uint64_t procstat_steal_ns(const struct cpu_jiffies *a, const struct cpu_jiffies *b);

/*
 * Non-idle CPU time between samples a and b taken window_ns apart, from the
 * idle side: b's CPUs x window_ns less Δ(idle + iowait) and Δsteal, clamped at
 * 0. Under NO_HZ the kernel keeps each CPU's idle time on its own clock (not by
 * tick), so this counts every instant a CPU was not idle, interrupts and
 * softirq included, to one tick per CPU and read.
 */
uint64_t procstat_idle_busy_ns(const struct cpu_jiffies *a, const struct cpu_jiffies *b,
                               uint64_t window_ns);

/* ---- the whole machine's CPU to the nanosecond ------------------------------------------- */

/*
 * /proc/stat's busy time is sampled: each tick charges a whole tick to what
 * it interrupts, so at light load (tasks that run and sleep between ticks) it
 * can be far below what ran (27 % below at one connection, and below the sum
 * of the cgroups it contains). These sources count run time as the scheduler
 * does, in ns:
 *   schedstat  /proc/schedstat: per CPU, the time tasks ran on it (rq_clock,
 *              so the interrupts and softirq they were interrupted by too);
 *   cpuacct    the machine's root cpuacct cgroup (v1): every task's run time.
 *              The kernel charges the softirq it runs on a task's way out of
 *              an interrupt, or in ksoftirqd, to that task; with
 *              CONFIG_IRQ_TIME_ACCOUNTING it keeps interrupt time apart
 *              instead (and exactly), so /proc/stat's irq and softirq are
 *              added (machine_cpu.irq_added).
 * Neither counts the interrupts an idle CPU takes; procstat_idle_busy_ns
 * does, to a tick.
 */
enum machine_cpu_source {
    MACHINE_CPU_NONE = 0,
    MACHINE_CPU_SCHEDSTAT,
    MACHINE_CPU_CPUACCT,
    MACHINE_CPU_IDLE, /* procstat_idle_busy_ns: neither of the above */
};

/* "none", "schedstat", "cpuacct", "idle": the evidence's cpu.system_source. */
const char *machine_cpu_source_name(enum machine_cpu_source s);

/* A reading of the machine's run time. */
struct machine_cpu {
    enum machine_cpu_source source; /* SCHEDSTAT or CPUACCT when read */
    uint64_t run_ns;                /* cumulative since boot */
    bool irq_added; /* cpuacct under IRQ_TIME_ACCOUNTING: add /proc/stat's irq and softirq */
};

/*
 * Sums the run time of every "cpuN" line of /proc/schedstat text (its 7th
 * number, ns; schedstat version 15 and later). Returns 0 with *run_ns,
 * -ENOENT with no such line, -EINVAL for a line of fewer numbers or another
 * version.
 */
int schedstat_parse(const char *text, uint64_t *run_ns);

/*
 * The machine's own root of the v1 cpuacct hierarchy from mountinfo text: the
 * mount point of a "cgroup" mount serving cpuacct whose root is "/" (a
 * container's mount of its own subtree is not the machine). 0 with buf set,
 * -ENOENT when there is none, -ENAMETOOLONG.
 */
int cgroup_root_cpuacct_resolve(const char *mountinfo_text, char *buf, size_t cap);

/* Whether kernel configuration text (/proc/config.gz unpacked) sets name=y. */
bool kconfig_set(const char *text, const char *name);

/*
 * Reads the machine's run time: /proc/schedstat, else the root cpuacct
 * cgroup (found once), with irq_added from the kernel's configuration
 * (/proc/config.gz or /boot/config-RELEASE; unknown: not added). Returns 0,
 * or -ENOENT when neither can be read.
 */
int machine_cpu_read(struct machine_cpu *m);

/* USER_HZ clock ticks (sysconf(_SC_CLK_TCK), /proc's unit of CPU time) in ns. */
uint64_t clock_ticks_ns(uint64_t ticks);

/* ---- processes ----------------------------------------------------------------------------- */

/*
 * CPU time of process pid (0: the caller) in ns, all threads including
 * exited ones (clock_getcpuclockid + clock_gettime; Linux allows it for any
 * pid). Works for a zombie (exited, not yet reaped); once reaped it is not ok
 * with "No such process". If the pid has been reused, this is the new
 * process. A negative pid is not ok.
 */
struct ctr_val proc_cpu_ns(pid_t pid);

/* What /proc/PID/stat says about a process that hopbench uses (man 5 proc). */
#define PROC_COMM_MAX 16 /* a command name (field 2, /proc/PID/comm) with its NUL */

struct proc_stat {
    char comm[PROC_COMM_MAX]; /* field 2 without its parentheses */
    char state;               /* field 3: R, S, D, T, t, Z (zombie), X (dead), ... */
    pid_t ppid;               /* field 4: the parent (0 when it is outside the pid namespace) */
    uint64_t children_ticks;  /* fields 16 + 17, cutime + cstime: CPU of reaped children, ticks */
    uint64_t start_ticks;     /* field 22, starttime: clock ticks after boot (a pid's identity) */
};

/*
 * Parses the text of /proc/PID/stat. The command name (field 2) may hold
 * spaces and parentheses: fields are counted from its last ')'. Returns 0, or
 * -EINVAL if the text is malformed or a field needed is not a u64.
 */
int proc_stat_parse(const char *text, struct proc_stat *out);

/*
 * Reads /proc/PID/stat (pid 0: the caller). Returns 0, -ESRCH if there is no
 * such process (a reaped one included; a zombie still has its file, with
 * state 'Z'), -EINVAL if malformed, or another negative errno.
 */
int proc_stat_read(pid_t pid, struct proc_stat *out);

/*
 * The processes named comm (their command name, /proc/PID/comm) whose parent
 * is not named so too: the roots of the trees those names make (a server's
 * master, not its workers). Fills out[0 .. min(count, cap) - 1] in the order
 * of /proc and returns the count (0 when none), or a negative errno from
 * opening /proc. Exited processes (zombies) are left out.
 */
ssize_t proc_comm_roots(const char *comm, pid_t *out, size_t cap);

/* Whether state is a process that has exited: 'Z' (zombie, not yet reaped) or 'X' (dead). */
bool proc_state_exited(char state);

/*
 * pid (0: the caller) and all its descendants, found through
 * /proc/PID/task/TID/children recursively (pre-order: pid first). Fills
 * out[0 .. min(count, cap) − 1] and returns the total count, which may
 * exceed cap (out may be NULL when cap is 0). Returns -ESRCH if pid does not
 * exist (or is negative), -EOPNOTSUPP if the kernel has no children files
 * (CONFIG_PROC_CHILDREN=n), -ELOOP if the tree is deeper than 256 levels, or
 * another negative errno from reading /proc.
 * Like the kernel's file, this is only exact while the tree does not change:
 * a process forked or reaped during the walk may be missed or included.
 */
ssize_t proc_tree(pid_t pid, pid_t *out, size_t cap);

/*
 * Finds the "Pss:" line of /proc/PID/smaps_rollup text ("Pss:   227 kB") and
 * sets *pss_bytes. Returns 0, -ENOENT if there is no Pss line (a kernel
 * thread or zombie has an empty rollup), -EINVAL if it is malformed or
 * overflows.
 */
int smaps_rollup_parse(const char *text, uint64_t *pss_bytes);

/*
 * Finds the "KEY: N kB" line of /proc/meminfo text (key "MemAvailable") and
 * sets *bytes. Returns 0, -ENOENT if there is no such line, -EINVAL if it is
 * malformed or overflows, -ENAMETOOLONG for a key longer than 62 bytes.
 */
int meminfo_parse(const char *text, const char *key, uint64_t *bytes);

/* meminfo_parse on the file at path ("/proc/meminfo"); or the read's negative errno. */
int meminfo_read(const char *path, const char *key, uint64_t *bytes);

/*
 * Proportional set size of pid (0: the caller) in bytes, from
 * /proc/PID/smaps_rollup (kernel ≥ 4.14; needs ptrace-read access). This
 * walks the page tables: call it at the start and end of a run, not while
 * measuring. Not ok with the reason if unreadable or without a Pss line.
 */
struct ctr_val proc_pss_bytes(pid_t pid);

/* ---- cgroups ------------------------------------------------------------------------------- */

/*
 * Looks key up in flat-keyed text ("key value" per line: cpu.stat,
 * memory.stat). Returns 0 and sets *v, -ENOENT if absent, -EINVAL if the
 * value is not a u64.
 */
int cgroup_keyed_get(const char *text, const char *key, uint64_t *v);

/*
 * The cgroup directory of a process, from the text of /proc/PID/cgroup and
 * of the reader's /proc/self/mountinfo. controller is a v1 controller name
 * ("cpu", "cpuacct", "memory", "name=systemd") or "" for the v2 hierarchy.
 * A v1 controller matches a "cgroup" mount whose super options list it (so
 * a combined "cpu,cpuacct" mount serves both); "" matches a "cgroup2" mount.
 * The mount's root is stripped from the cgroup path (a container sees a
 * subtree) and octal escapes (\040) in mountinfo are undone.
 * Returns 0 with buf set, -ENOENT if the controller is not in the cgroup
 * text or no matching mount covers the path, -EINVAL if a cgroup line is
 * malformed, -ENAMETOOLONG if the result does not fit cap.
 */
int cgroup_dir_resolve(const char *cgroup_text, const char *mountinfo_text, const char *controller,
                       char *buf, size_t cap);

/* cgroup_dir_resolve on /proc/PID/cgroup (pid 0: the caller) and /proc/self/mountinfo. */
int cgroup_pid_dir(pid_t pid, const char *controller, char *buf, size_t cap);

/* cgroup_pid_dir(0, ...): the calling process's own cgroup directory. */
int cgroup_self_dir(const char *controller, char *buf, size_t cap);

/*
 * The directory that v1 controller `controller` ("cpuacct", "memory", "cpu")
 * has for the same cgroup as dir, a directory in another v1 hierarchy: on
 * cgroup v1 each controller may be mounted apart (/sys/fs/cgroup/cpuacct/X
 * and /sys/fs/cgroup/memory/X). From mountinfo_text: dir's hierarchy is the
 * v1 "cgroup" mount with the longest mount point containing dir; the cgroup's
 * path is that mount's root plus the rest of dir; the result is the mount
 * point of the hierarchy serving controller plus that path less its root.
 * Returns 0 with buf set (it may equal dir: a combined mount), -ENOENT if dir
 * is under no v1 cgroup mount or no mount serves controller or covers the
 * path, -ENAMETOOLONG if a path does not fit.
 */
int cgroup_v1_sibling_resolve(const char *dir, const char *mountinfo_text, const char *controller,
                              char *buf, size_t cap);

/*
 * CPU figures of one cgroup. version: 2 or 1 (0 if the directory could not
 * be read). usage_ns: v2 cpu.stat usage_usec × 1000, v1 cpuacct.usage.
 * nr_throttled: cpu.stat nr_throttled. throttled_us: v2 cpu.stat
 * throttled_usec, v1 cpu.stat throttled_time / 1000. Any throttling during a
 * run invalidates its latency figures.
 */
struct cgroup_cpu {
    int version;
    struct ctr_val usage_ns;
    struct ctr_val nr_throttled;
    struct ctr_val throttled_us;
};

/*
 * Reads the CPU figures of cgroup directory dir. The version is 2 if dir has
 * cgroup.controllers, else 1. Each figure is not ok with a reason when its
 * file or key is missing: a v2 cgroup without the cpu controller (e.g. the
 * root) has no throttling keys; a v1 "cpuacct"-only directory has no
 * cpu.stat, a "cpu"-only one has no cpuacct.usage.
 * Returns 0 (figures filled, each ok or not), or negative errno if dir
 * cannot be examined (every figure then not ok with that reason).
 */
int cgroup_cpu_read(const char *dir, struct cgroup_cpu *out);

/*
 * The CPU figures of the cgroup process pid (0: the caller) is in. Where v1
 * cpuacct is mounted, usage comes from the cpuacct directory and throttling
 * from the v1 cpu directory (the same one if mounted together); otherwise
 * everything comes from the v2 directory. Returns 0 or negative errno from
 * cgroup_pid_dir / cgroup_cpu_read (figures then not ok with the reason).
 */
int cgroup_cpu_pid(pid_t pid, struct cgroup_cpu *out);

/*
 * Working set as kubelet/cAdvisor computes it, in bytes:
 * v2 memory.current − memory.stat:inactive_file,
 * v1 memory.usage_in_bytes − memory.stat:total_inactive_file, clamped at 0.
 * Not ok with the reason if a file or key is missing (the v2 root has no
 * memory.current) or unreadable.
 */
struct ctr_val cgroup_working_set(const char *dir);

/* cgroup_working_set of pid's (0: the caller's) v1 memory cgroup if mounted, else its v2 cgroup. */
struct ctr_val cgroup_working_set_pid(pid_t pid);

/*
 * Memory left under the memory limit of cgroup directory dir: the limit less
 * the working set (cgroup_working_set: the kernel reclaims inactive file
 * pages before it fails an allocation), clamped at 0. v2: the lowest room of
 * dir and of each parent directory that has memory.max ("max" is no limit).
 * v1: memory.limit_in_bytes, or memory.stat's hierarchical_memory_limit (the
 * lowest limit up the hierarchy) when lower; 2^62 or more is v1's "no limit".
 * Returns 1 with *room set when a limit applies, 0 when none does, or a
 * negative errno (a file missing, unreadable or malformed).
 */
int cgroup_mem_room(const char *dir, uint64_t *room);

/* cgroup_mem_room of pid's (0: the caller's) v1 memory cgroup if mounted, else its v2 cgroup. */
int cgroup_mem_room_pid(pid_t pid, uint64_t *room);

/*
 * The CPU figures of cgroup directory dir as --server-cgroup names it, on
 * either version: cgroup_cpu_read(dir), and on cgroup v1, for a figure that
 * dir's hierarchy lacks, the same cgroup's directory in the hierarchy that
 * has it (cgroup_v1_sibling_resolve): usage from cpuacct, throttling from cpu.
 * So a v1 memory directory gives CPU too. mountinfo_text is the text of
 * /proc/self/mountinfo, or NULL to read it. Returns as cgroup_cpu_read.
 */
int cgroup_cpu_read_any(const char *dir, const char *mountinfo_text, struct cgroup_cpu *out);

/*
 * cgroup_working_set(dir), or on cgroup v1 when dir has no memory files, that
 * of the same cgroup's directory in the memory hierarchy (a v1 cpuacct
 * directory gives the working set too). mountinfo_text as above; when it is
 * NULL and the hierarchies do not nest alike (no such directory there), the
 * memory cgroup of dir's first process.
 */
struct ctr_val cgroup_working_set_any(const char *dir, const char *mountinfo_text);

#endif
