/*
 * place: where the client threads and the server run.
 *
 *   none   no pinning: the scheduler decides (and varies run to run)
 *   same   client and server share one CPU: they alternate on one runqueue
 *   split  client on the first half of the allowed CPUs, server on the rest
 *
 * The CPUs are taken from the process's allowed set (sched_getaffinity), so
 * taskset and cgroup cpusets are respected.
 */
#ifndef HOPBENCH_PLACE_H
#define HOPBENCH_PLACE_H

#include <sched.h>
#include <stdbool.h>
#include <sys/types.h>

#include "util.h"

#define PLACE_MAX_CPUS 1024

enum place_mode {
    PLACE_NONE = 0,
    PLACE_SAME,
    PLACE_SPLIT,
};

enum place_role {
    PLACE_CLIENT = 0,
    PLACE_SERVER,
};

/* Where the server's CPU list comes from (the evidence's placement.server_cpus_source). */
enum place_source {
    PLACE_SRC_EXPECTED = 0, /* run: what `serve --pin` with the same mode would use; not seen */
    PLACE_SRC_SET,          /* lab: its own server, which hopbench pinned (or left unpinned) */
    PLACE_SRC_OBSERVED,     /* run --server-pid: read from the server's threads */
};

struct place {
    enum place_mode mode;
    int client[PLACE_MAX_CPUS];
    unsigned nclient; /* 0 = unpinned */
    int server[PLACE_MAX_CPUS];
    unsigned nserver; /* 0 = unpinned (observed: never 0) */
    enum place_source server_source;
};

const char *place_name(enum place_mode mode);

/* Fills p for mode from the allowed CPUs. Returns 0, or -EINVAL with err set (split on one CPU). */
int place_init(struct place *p, enum place_mode mode, struct hb_err *err);

/*
 * A container's or a pod's placement beside the CPUs (report/json.c's place_where):
 *
 * The kubelet's QoS class of the pod a /proc/PID/cgroup text's paths lie in:
 * "Guaranteed" (kubepods/podUID, kubepods-podUID.slice), "Burstable" or
 * "BestEffort" (kubepods/burstable/..., kubepods-burstable.slice...), or NULL
 * when no path names the kubelet's tiers (a cgroup namespace hides them).
 */
const char *place_qos_cgroup(const char *cgroup_text);

/*
 * The class the container's own requests and limits make, as the downward API
 * gives them (resourceFieldRef: a CPU in any divisor, memory in bytes; an
 * unset limit reads as the node's allocatable, an unset request as 0 or the
 * limit): "BestEffort" when both requests are 0, "Guaranteed" when each
 * request equals its limit, else "Burstable"; NULL when one is missing or is
 * not a whole number.
 */
const char *place_qos_resources(const char *cpu_req, const char *cpu_lim, const char *mem_req,
                                const char *mem_lim);

/*
 * The CPUs this process's cpuset cgroup lets it run on (v2
 * cpuset.cpus.effective, v1 cpuset.effective_cpus, else cpuset.cpus), as the
 * kernel lists them ("2-3,6"), into buf. 0, or a negative errno.
 */
int place_cpuset_self(char *buf, size_t cap);

/* How many CPUs this process may run on (sched_getaffinity); 0 if unknown. */
unsigned place_allowed_cpus(void);

/*
 * The CPUs of `role` as a list ("0", "1-3", "any"), for tables and JSON. One
 * that does not fit in cap ends in ",..." after the last whole item.
 */
void place_format(const struct place *p, enum place_role role, char *buf, size_t cap);

/*
 * The CPUs of `allowed` that neither the client nor the server of p is pinned
 * to, into *spare: where a helper thread (the socket sampler) can run without
 * taking CPU time from either. Returns how many; 0 when none is left, or when
 * the client or the server is unpinned (it may run on any CPU). Pure.
 */
unsigned place_spare_cpus(const struct place *p, const cpu_set_t *allowed, cpu_set_t *spare);

/* place_spare_cpus of this process's allowed CPUs (sched_getaffinity); 0 if unreadable. */
unsigned place_spare_now(const struct place *p, cpu_set_t *spare);

/* "expected", "set" or "observed". */
const char *place_source_name(enum place_source src);

/*
 * Replaces p's server CPUs with those the server really may run on: the union
 * of sched_getaffinity over every thread of each pid (with `tree`, of every
 * process of each pid's tree too), and marks them observed. Returns 0, or a
 * negative errno with err set, p unchanged (a pid that is gone, /proc unreadable).
 */
int place_observe_server(struct place *p, const pid_t *pids, unsigned npids, bool tree,
                         struct hb_err *err);

#endif
