/*
 * lab: the default experiment. It starts the built-in echo server as a child
 * process, listening on a TCP loopback port and on a Unix socket in a private
 * temporary directory, and measures the matrix sizes x {connect, reuse} x
 * {tcp, unix} under one CPU placement. The server is stopped and the
 * directory removed by lab_release, which every exit path calls. A server
 * that exits on its own (killed, crashed) stops the lab (lab_run).
 * The directory carries its owner mark, and a watcher removes it if hopbench
 * is killed outright (host/leftover.h).
 * With --netns (host/netns.h) the server runs in namespace A and each cell's
 * client threads in the namespace of its transport: A for unix and tcp, B for
 * tcp-veth (the third transport, --netns other only) to A's veth address.
 */
#ifndef HOPBENCH_LAB_H
#define HOPBENCH_LAB_H

#include <stdatomic.h>
#include <stdio.h>
#include <sys/types.h>

#include "endpoint.h"
#include "host/leftover.h"
#include "host/netns.h"
#include "host/place.h"
#include "plan.h"
#include "progress.h"
#include "report/report.h"

struct proto_entry;

/* What `hopbench lab` is asked (cmd/lab.c reads it from the command line). */
struct lab_opts {
    const struct proto_entry *proto; /* the registry's first (echo) by default */
    struct shared_opts shared;   /* per cell; reps: runs of each cell, tcp and unix in ABBA order;
                                  * seed: the bootstrap of the summaries */
    double rates[CLI_MAX_SIZES]; /* --rates: open-loop shares of each cell's closed-loop ops/s */
    unsigned nrates;
    bool overload;            /* "lab overload": connect cells only, against a small server */
    bool wait_auto;           /* no --wait: the reuse cells wait as --wait block, the lab found
                               * them one kept connection per thread, closed loop */
    int server_backlog;       /* --backlog of the lab's server */
    unsigned server_threads;  /* --server-threads; 0 = as --pin places it */
    uint64_t server_delay_ns; /* --delay-us of the lab's server */
    bool quick;
    size_t sizes[CLI_MAX_SIZES];
    unsigned nsizes;
    bool sizes_given;      /* --sizes was on the command line */
    unsigned pipeline;     /* --pipeline: requests in flight per connection in the reuse cells */
    uint64_t count;        /* -n: ops per run instead of a duration; 0 = the duration */
    enum netns_mode netns; /* --netns: where server and client run (NETNS_NONE: here) */
};

struct lab {
    const struct lab_opts *opts;
    struct place place;
    char dir[256];               /* private temporary directory, "" when none */
    struct endpoint eps[3];      /* tcp, unix, and tcp-veth with --netns other */
    unsigned neps;               /* the transports measured: 2, or 3 with --netns other */
    struct netns netns;          /* --netns: the namespaces made for the lab */
    struct leftover_watch watch; /* removes the directory if hopbench is killed outright */
    pid_t server_pid;            /* 0 when no server runs */
    uint64_t server_close_after; /* the running server's --close-after */
    size_t server_body_size;     /* the running server's --body-size */
    const void *codec;           /* the requests of every cell: the entry's lab_opts */
    _Atomic pid_t *pid_mirror;   /* server_pid, -server_pid while lab_stop_server stops it, 0 when
                                    none: for signal handlers; may be NULL */
    struct observe_hook hook;    /* the current cell's outside counters */
    struct outfile *jsonl;       /* each finished cell is appended here (--jsonl), or NULL */
    bool reader_gone;            /* lab_run stopped early: the progress lines' reader is gone */
    bool server_gone;            /* lab_run stopped early: the server exited on its own */
    struct progress *progress;   /* the live line, or NULL */
    struct run_record *recs;
    size_t nrecs;
    size_t cap;
    struct profile *prof; /* --profile: the profiler of every cell's window, or NULL */
};

/* One closed-loop run of the lab's plan: the cell (sizes[size], mode, transport) and its rep. */
struct lab_step {
    unsigned size; /* index into lab_opts.sizes */
    enum load_mode mode;
    unsigned transport; /* 0 tcp, 1 unix, 2 tcp-veth (--netns other) */
    unsigned rep;       /* counted per cell, from 0 */
};

/* How many closed-loop runs the lab makes: sizes × modes × transports × reps. */
size_t lab_plan_len(const struct lab_opts *o);

/*
 * The lab's closed-loop runs in the order lab_run makes them, into
 * steps[lab_plan_len(o)]: per size as given, connect then reuse (overload:
 * connect alone), and within each the transports in ABBA order over the reps
 * (stats_order_abba). lab_run follows each with its open-loop runs at the
 * --rates shares of the ops/s it measured.
 */
void lab_plan(const struct lab_opts *o, struct lab_step *steps);

/* How many runs lab_run makes (each step and its --rates), and how long each takes as planned. */
unsigned lab_planned_runs(const struct lab_opts *o);
uint64_t lab_planned_ns(const struct lab_opts *o);

/*
 * Makes the --netns namespaces (-EPERM when not allowed to), places the CPUs,
 * makes the directory, opens the listeners, forks the server and the watcher. *pid_mirror (if not
 * NULL) follows the server's pid as it restarts: the pid while it runs, minus it while the lab
 * stops it (its exit is then expected), 0 when no server runs.
 */
int lab_init(struct lab *lab, const struct lab_opts *opts, _Atomic pid_t *pid_mirror,
             struct hb_err *err);

/*
 * The most memory a cell of the lab's load allocates while the histograms of
 * every other record are kept (load_mem_need); SIZE_MAX when that overflows.
 */
size_t lab_mem_need(const struct lab_opts *o);

/*
 * The fds the lab's client (load_fd_need of a cell) or its server child
 * (budget_server_fds: it is forked with the client's limit) needs, the
 * larger, besides those open when it starts and BUDGET_FD_SPARE.
 */
uint64_t lab_fd_need(const struct lab_opts *o);

/*
 * Runs the matrix, printing a progress line per cell to `progress`. Stops
 * after the current cell once *stop is set or the reader of `progress` is
 * gone (fd_reader_gone; lab->reader_gone is then set). The server is checked
 * (waitpid WNOHANG) before each cell, after each run and at the end; set *stop
 * to STOP_SERVER_EXIT on its SIGCHLD to end the current run at once. An exit
 * the lab did not ask for stops the lab: lab->server_gone, -ECHILD and err
 * naming the exit (signal or status) and the cell, which is kept, marked cut
 * short (cut_by), if the exit ended it early. Unless *stop is STOP_INTERRUPT:
 * a server that exits then went with the stop signal. Returns 0 or a negative
 * errno with err set (the records measured so far are kept either way).
 */
int lab_run(struct lab *lab, FILE *progress, const atomic_int *stop, struct hb_err *err);

/*
 * Stops the server (SIGTERM, then waits), removes the directory, frees the
 * records, closes the namespaces (they go once the server has exited), stops
 * the watcher.
 */
void lab_release(struct lab *lab);

/*
 * Removes the private directories of labs whose hopbench is dead
 * (host/leftover.h), under $TMPDIR or /tmp: one line per dead owner to out.
 */
void lab_clean_leftovers(FILE *out);

#endif
