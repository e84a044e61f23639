/*
 * subsys: which part of the kernel (or the process's own code) a profile
 * sample of `--profile` belongs to, from one table of kernel symbol patterns
 * (subsys.c; docs/profile.md prints it).
 *
 * A frame's subsystem is that of the longest pattern its symbol begins with
 * (a pattern ending in '$' must match the whole name), or none.
 * A sample's subsystem (subsys_of_chain), from its kernel callchain read
 * from the leaf (the sampled instruction) up to the system-call or interrupt
 * entry:
 *   - a sample in user mode: SUB_USER, the process's own code;
 *   - the first frame from the leaf with a subsystem other than SUB_SYSCALL;
 *   - else SUB_SYSCALL when a frame of the chain is the system-call entry or
 *     exit (so work of a system call no pattern names, a file descriptor's
 *     lookup, counts as its entry and exit);
 *   - else SUB_OTHER.
 * So a wake-up inside TCP's receive path is the scheduler's, an allocation
 * under alloc_skb the socket layer's, TCP's receive processing TCP's even in
 * softirq context: SUB_SOFTIRQ is the softirq and NAPI machinery itself.
 */
#ifndef HOPBENCH_HOST_SUBSYS_H
#define HOPBENCH_HOST_SUBSYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum prof_subsys {
    SUB_SYSCALL = 0, /* system-call entry and exit */
    SUB_EPOLL,       /* epoll, poll, select */
    SUB_TCP,         /* TCP, inet connection sockets, TIME_WAIT */
    SUB_IP,          /* IP, routing, loopback and device transmit */
    SUB_SOFTIRQ,     /* softirq and NAPI receive */
    SUB_NETFILTER,   /* netfilter and conntrack */
    SUB_UNIX,        /* AF_UNIX */
    SUB_SOCKET,      /* the socket layer and skb allocation */
    SUB_COPY,        /* copies to and from user memory */
    SUB_SCHED,       /* the scheduler and wake-ups */
    SUB_USER,        /* the process's own code, in user mode */
    SUB_OTHER,       /* kernel work none of the above names */
    SUBSYS_COUNT
};

/* "syscall", "epoll", "tcp", ... "other": the evidence's keys. */
const char *subsys_name(enum prof_subsys s);

/* "system-call entry and exit", ...: what a subsystem is, in words. */
const char *subsys_title(enum prof_subsys s);

/* The subsystem named name ("tcp"), or -1. */
int subsys_by_name(const char *name);

/* A symbol's subsystem by the table (longest pattern), or -1 when no pattern matches. */
int subsys_of_symbol(const char *name);

/*
 * A sample's subsystem by the rule above: frames[0 .. n-1] are its kernel
 * frames' subsystems (subsys_of_symbol, -1 for none), leaf first; user: the
 * sample was taken in user mode.
 */
enum prof_subsys subsys_of_chain(const int8_t *frames, size_t n, bool user);

/* The table, for docs and tests: pattern i (NULL past the end) and its subsystem. */
const char *subsys_pattern(size_t i, enum prof_subsys *s);

#endif
