/*
 * probe: the machine a result was measured on (kernel, CPU, clock source,
 * the sysctls that shape loopback TCP). Counters that change during a run
 * live in counters.c, sockdiag.c and observe.c. A fact that cannot be read is
 * left as "" and shown as null, never guessed; for a sysctl, with the reason.
 */
#ifndef HOPBENCH_PROBE_H
#define HOPBENCH_PROBE_H

#include <stddef.h>

#define PROBE_SYSCTLS 8

/* A sysctl that shapes loopback TCP. */
struct probe_sysctl {
    const char *name; /* "net.ipv4.tcp_tw_reuse" */
    char value[32];   /* as read, a tab turned into a space; "" when unreadable */
    char why[320];    /* why unreadable ("/proc/sys/...: No such file or directory"), else "" */
};

struct machine {
    char hostname[72];
    char kernel[128];    /* uname -r */
    char cpu_model[128]; /* /proc/cpuinfo "model name" */
    unsigned ncpus_online;
    unsigned ncpus_allowed; /* sched_getaffinity */
    char clocksource[32];
    /* net.ipv4.tcp_tw_reuse, .ip_local_port_range, net.core.somaxconn, net.ipv4.
     * tcp_max_syn_backlog, .tcp_timestamps, .tcp_fin_timeout, .tcp_tw_reuse_delay (absent
     * before kernel 6.x), .tcp_max_tw_buckets, in this order */
    struct probe_sysctl sysctl[PROBE_SYSCTLS];
};

/* Fills m; unreadable facts stay "" (sysctls with the reason). */
void probe_machine(struct machine *m);

/* Reads the sysctls of m from under root ("/proc/sys", or a fixture directory). */
void probe_sysctls(struct machine *m, const char *root);

/* Reads the first line of a small file into buf without the newline. Returns 0 or a negative errno.
 */
int probe_read_line(const char *path, char *buf, size_t cap);

#endif
