/*
 * probe: the machine a result was measured on (kernel, CPU, clock source,
 * the sysctls that shape loopback TCP). Counters that change during a run
 * live in counters.c, sockdiag.c and observe.c. A fact that cannot be read is
 * left as "" and shown as null, never guessed.
 */
#ifndef HOPBENCH_PROBE_H
#define HOPBENCH_PROBE_H

#include <stddef.h>

struct machine {
    char hostname[72];
    char kernel[128];    /* uname -r */
    char cpu_model[128]; /* /proc/cpuinfo "model name" */
    unsigned ncpus_online;
    unsigned ncpus_allowed; /* sched_getaffinity */
    char clocksource[32];
    char tcp_tw_reuse[16];
    char ip_local_port_range[32];
    char somaxconn[16];
    char tcp_max_syn_backlog[16];
    char tcp_timestamps[16];
    char tcp_fin_timeout[16];
    char tcp_tw_reuse_delay[16]; /* absent before kernel 6.x: "" */
    char tcp_max_tw_buckets[16];
};

/* Fills m; unreadable facts stay "". */
void probe_machine(struct machine *m);

/* Reads the first line of a small file into buf without the newline. Returns 0 or a negative errno.
 */
int probe_read_line(const char *path, char *buf, size_t cap);

#endif
