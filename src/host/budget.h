/*
 * budget: what a plan needs of the process's limits, checked before anything
 * runs, so that a plan that cannot fit is refused at once with one line
 * instead of counting an error per op (out of file descriptors) or being
 * killed by the kernel (out of memory):
 *   - file descriptors: what is open now, plus the load's sockets and epoll
 *     fds (or the lab's server's), plus BUDGET_FD_SPARE; the soft
 *     RLIMIT_NOFILE is raised to that when it is lower and the hard limit
 *     allows, else the plan is refused;
 *   - memory: the load's buffers and histograms (load_mem_need) against
 *     MemAvailable and the room under the memory cgroup's limit.
 * The decisions are pure functions of their inputs (unit-tested); the rest
 * reads the live limits. Nothing here prints.
 */
#ifndef HOPBENCH_BUDGET_H
#define HOPBENCH_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/*
 * The fds a process of hopbench may hold besides those open when it starts
 * and those of its load or server, at most at once: the --jsonl file (1), the
 * sampler's eventfd and sock_diag socket (2), the end of the window's
 * sock_diag socket while the sampler may still be dumping (1), a /proc or
 * cgroup file being read (1) and the directories of a --server-tree walk (one
 * per level); 16 leaves room for a tree 10 levels deep. The evidence file is
 * written once the load's sockets are closed.
 */
#define BUDGET_FD_SPARE 16

/*
 * The fds a process needs: `open` already open, `load` those of its load
 * (load_fd_need) or server (budget_server_fds), and BUDGET_FD_SPARE.
 */
uint64_t budget_fds(uint64_t open, uint64_t load);

/*
 * The fds of a built-in server that `conns` client connections load: one per
 * connection, and as many again for connections the client has closed that
 * the server has not yet seen close (connect mode), one listener per
 * endpoint, one epoll per thread and the stop eventfd.
 */
uint64_t budget_server_fds(uint64_t conns, unsigned threads, unsigned listeners);

/* The fds the calling process has open now (/proc/self/fd), or a negative errno. */
int budget_fds_open(void);

/*
 * What to do with a soft RLIMIT_NOFILE `cur` and hard `max` (RLIM_INFINITY
 * included) for a process that needs `need` fds (an fd's number must be
 * below the soft limit). Returns 0 when cur is enough (*soft = cur), 1 when
 * it must be raised to need (*soft = need), -EMFILE when need is above max.
 */
int budget_fds_plan(uint64_t need, uint64_t cur, uint64_t max, uint64_t *soft);

/*
 * Makes the soft RLIMIT_NOFILE at least need (budget_fds_plan, setrlimit).
 * Returns 0, or a negative errno with err set to one line saying how many
 * fds are needed, the limit, and how to raise it (ulimit -n).
 */
int budget_fds_ensure(uint64_t need, struct hb_err *err);

/* The memory a run may have: each figure known (ok) or not. */
struct budget_mem {
    bool meminfo_ok;  /* /proc/meminfo had MemAvailable */
    uint64_t meminfo; /* MemAvailable, bytes */
    bool cgroup_ok;   /* the memory cgroup hopbench is in has a limit (cgroup_mem_room) */
    uint64_t cgroup;  /* room under it, bytes */
};

/* Reads MemAvailable from meminfo_path and the room under the caller's memory cgroup. */
void budget_mem_read(const char *meminfo_path, struct budget_mem *m);

/*
 * Whether `need` bytes fit the lower of the known figures of m. Returns 0
 * (they fit, or nothing is known), or -ENOMEM with err set to one line saying
 * how much is needed and how much is available, and where that figure is from.
 */
int budget_mem_check(uint64_t need, const struct budget_mem *m, struct hb_err *err);

/*
 * What the machine allows a plan of many connections, read before the runs
 * (run prints it: docs/connections.md). 0 where a figure could not be read.
 */
struct budget_limits {
    uint64_t nofile_soft,
        nofile_hard;            /* this process's RLIMIT_NOFILE (RLIM_INFINITY: UINT64_MAX) */
    uint64_t file_max, file_nr; /* fs.file-max, and the fds allocated now (fs.file-nr) */
    unsigned port_lo, port_hi;  /* net.ipv4.ip_local_port_range */
    int somaxconn;              /* net.core.somaxconn: the most any listen backlog is */
    struct budget_mem mem;
};

/* Reads them (meminfo_path: MemAvailable's /proc/meminfo). */
void budget_limits_read(const char *meminfo_path, struct budget_limits *l);

/* The limits a plan's connections meet, in the order run prints them. */
enum budget_limit {
    BUDGET_FDS,        /* each process's hard RLIMIT_NOFILE */
    BUDGET_SYSTEM_FDS, /* fs.file-max, less what is allocated: for the client and a local server */
    BUDGET_PORTS,      /* TCP: the ephemeral ports of each source address, to one endpoint */
    BUDGET_MEMORY,     /* the load's buffers and histograms against the memory available */
    BUDGET_LIMITS
};

/* "fds", "system fds", "ports", "memory". */
const char *budget_limit_name(enum budget_limit b);

/* What a plan spends of them. */
struct budget_plan {
    unsigned procs;        /* processes holding the connections (1: hopbench's own) */
    uint64_t fds_per_proc; /* each one's fds besides its connections (open, threads, spare) */
    bool local;            /* the server is on this host: its end takes an fd too */
    unsigned sources;      /* TCP: source addresses (1: the kernel's one); 0: not TCP */
    uint64_t mem_fixed;    /* bytes whatever the connections (histograms, threads) */
    uint64_t mem_per_conn; /* bytes per connection */
};

/*
 * The most connections each limit allows the plan, into room[] (UINT64_MAX:
 * no such limit, or not known); returns the one that allows the fewest. Pure.
 */
enum budget_limit budget_limits_room(const struct budget_limits *l, const struct budget_plan *p,
                                     uint64_t room[BUDGET_LIMITS]);

#endif
