/*
 * profile: where in the kernel a run's CPU goes (--profile; docs/profile.md).
 *
 * While a measured window runs, one CPU-clock sampling event per online CPU
 * (perf_event_open: PERF_COUNT_SW_CPU_CLOCK every PROFILE_PERIOD_NS of a
 * CPU's time, with the kernel callchain; no perf process) samples whatever
 * runs there. A thread of hopbench's own ("hb-profile") drains the events'
 * rings and attributes each sample:
 *   - to a side: the client (hopbench's load threads, named "hb-load"),
 *     hopbench (its other threads: the main thread, the sampler, this one),
 *     the server (--server-pid, its tree, --server-cgroup, the lab's own
 *     server), each --service by its pid, tree or cgroup, or other (any other
 *     process; the idle task's samples are counted apart as idle);
 *   - to a subsystem by the kernel callchain (subsys.h, the rule and table);
 *   - and to its stack, for the flame graphs (folded: "side;root;...;leaf").
 * A sample stands for the whole periods of its CPU's time since that CPU's
 * previous sample: one, or more when the timer fired over a period late (the
 * kernel's CPU-clock timer skips the periods it overran; 0.3 % of them at
 * 4000 Hz on a loaded VM). So the sides' and the idle loop's sampled time sum
 * to the CPUs' time over the window; a side's estimates its CPU time.
 *
 * The sample path allocates nothing: the pid cache, the tables and the
 * stacks' hash are made by profile_new. A pid's side is found once, at its
 * first sample (/proc/PID/stat's parents, /proc/PID/cgroup).
 */
#ifndef HOPBENCH_HOST_PROFILE_H
#define HOPBENCH_HOST_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "host/service.h"
#include "host/subsys.h"
#include "util.h"

/*
 * The sampling period: 1.236 ms (809 Hz per CPU), 4 ms × (√5 − 1) / 4, so that
 * the samples' phase against a 4 ms, 1 ms or 10 ms scheduler tick never falls
 * in step with it (a period just off the tick's, as 1.003 ms, drifts through
 * its phase only once a second or so). bench/profile.sh measures its cost
 * (docs/profile.md): within 2 % of throughput.
 */
#define PROFILE_PERIOD_NS 1236068ULL
#define PROFILE_STACK_MAX 64                /* kernel frames kept of a sample's callchain */
#define PROFILE_SIDES     (4 + SERVICE_MAX) /* client, hopbench, server, services, other */

/* What tells the sides apart: profile_begin takes it for its window. */
struct profile_cfg {
    pid_t self;                    /* hopbench's process (getpid) */
    const pid_t *server_pids;      /* the server's, or NULL */
    unsigned nserver_pids;         /* at most PROFILE_SERVER_PIDS */
    bool server_tree;              /* with their descendants */
    const char *server_cgroup;     /* or NULL */
    const struct service_set *set; /* the named services, or NULL */
};

#define PROFILE_SERVER_PIDS 64

/* One side's samples over the window, by subsystem. */
struct profile_side {
    char name[SERVICE_NAME_MAX]; /* "client", "hopbench", "server", a service's, "other" */
    uint64_t samples;
    uint64_t ns[SUBSYS_COUNT]; /* sampled time: the periods its samples stand for × period */
};

#define PROFILE_FOLD_MAX   160   /* stacks kept in a run's evidence */
#define PROFILE_FOLD_SHARE 0.002 /* and only those with at least this share of the samples */

/* A run's profile. */
struct profile_result {
    uint64_t period_ns;
    unsigned cpus;    /* CPUs sampled */
    uint64_t samples; /* all, idle ones included */
    uint64_t idle;    /* samples of the idle task in its idle loop */
    uint64_t idle_ns; /* the time they stand for */
    uint64_t lost;    /* samples the kernel could not write (a ring was full) */
    uint64_t missed;  /* periods the timer skipped (fired over a period late): the next sample's */
    uint64_t throttled; /* times the kernel throttled an event (PERF_RECORD_THROTTLE) */
    uint64_t self_ns;   /* the draining thread's own CPU over the window (its cost in hopbench) */
    unsigned nsides;
    struct profile_side side[PROFILE_SIDES];
    /*
     * The most frequent stacks, folded: a line each, "client;entry_SYSCALL_64;...;tcp_sendmsg
     * 42" (root first; a user-mode sample is "SIDE;[user]"), by count, at most
     * PROFILE_FOLD_MAX of at least PROFILE_FOLD_SHARE of the samples, the others summed
     * into "SIDE;[rest] N". malloc'd, or NULL; profile_result_release frees it.
     */
    char *folded;
};

struct profile;

/*
 * Whether this process may profile: opens (and closes) one CPU-clock event on
 * a CPU. 0, or -EACCES with err set to one line naming what is missing (root,
 * CAP_PERFMON, or kernel.perf_event_paranoid at most 0, and its value), or
 * another negative errno.
 */
int profile_check(struct hb_err *err);

/*
 * A profiler: the kernel's symbols read from /proc/kallsyms (kallsyms_text
 * NULL) or from the text given, and with events, a disabled event and its
 * ring on every online CPU. NULL with err set.
 */
struct profile *profile_new(uint64_t period_ns, const char *kallsyms_text, bool events,
                            struct hb_err *err);

/*
 * The window begins: the sides of cfg (copied), the counts emptied, and with
 * events the events enabled and the draining thread started. 0 or -errno.
 */
int profile_begin(struct profile *p, const struct profile_cfg *cfg);

/*
 * The window has ended: the events disabled, what is left drained, and the
 * window's figures into *out (out->folded malloc'd).
 */
void profile_end(struct profile *p, struct profile_result *out);

void profile_free(struct profile *p);

void profile_result_release(struct profile_result *r);

/*
 * One sample as the draining thread attributes it: its process and thread,
 * whether it was taken in user mode, its kernel frames leaf first, the time
 * it stands for. For tests, on a profiler without events.
 */
void profile_feed(struct profile *p, pid_t pid, pid_t tid, bool user, const uint64_t *ips,
                  unsigned nips, uint64_t period);

/*
 * One sample as the rings give it: taken at t_ns (the kernel's sample time) on the CPU whose
 * ring is cpu; it stands for the whole periods since that CPU's previous sample of the window
 * (at least one; the first stands for one), then fed as above. For tests too.
 */
void profile_sample(struct profile *p, unsigned cpu, uint64_t t_ns, pid_t pid, pid_t tid, bool user,
                    const uint64_t *ips, unsigned nips);

#endif
