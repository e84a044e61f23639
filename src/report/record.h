/*
 * record: one measured run (struct run_record) and the figures derived from
 * it that every report shares: ops/s, CPU per op, whether it counts, whether
 * an open loop kept up, the names its size and mode are printed by; and
 * where each end of a run under --netns ran (record_netns_begin, _end).
 */
#ifndef HOPBENCH_REPORT_RECORD_H
#define HOPBENCH_REPORT_RECORD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "engine/load.h"
#include "host/netns.h"
#include "host/observe.h"
#include "stats.h"

/*
 * What an open loop at --rate N% takes its share of, for one endpoint of
 * `run`: the median of closed-loop probes of the same load, measured once
 * before the open-loop runs, or the --rate-base given instead.
 */
struct rate_base {
    double ops_per_s;          /* the base: the probes' median, or --rate-base */
    bool given;                /* from --rate-base: nothing was probed */
    const double *probes;      /* each probe's ops/s, in the order they ran; NULL when given */
    struct stats_summary stat; /* of the probes (n = 0 when given) */
    uint64_t probe_ns;         /* each probe's measured duration */
};

/* Where each end of a run under --netns (lab, run) ran; mode NETNS_NONE when not. */
struct record_netns {
    enum netns_mode mode;
    const char *client, *server;      /* "same", "A", "B" (netns_side_name) */
    uint64_t client_ino, server_ino;  /* the namespaces' inodes, as /proc/PID/ns/net names them */
    char client_addr[NETNS_ADDR_CAP]; /* tcp-veth: the veth end in B, else "" */
    char server_addr[NETNS_ADDR_CAP]; /* tcp-veth: the veth end in A, else "" */
    bool veth_ok;                     /* veth was read, in B, before and after the run */
    struct netns_veth_bytes veth;     /* what the veth end in B moved over the run */
};

/* run --procs: the load's child processes, each with its share of the connections. */
#define RECORD_MAX_PROCS 64

struct record_proc {
    unsigned conns, threads; /* its share */
    uint64_t ops, requests, replies, errors, connects, reconnects;
    uint64_t open_start, open_end; /* its connections open when the window began and ended */
    uint64_t client_cpu_ns;
    /* its PSS after the fork, before its load set up, and when its window closed (every
     * connection and buffer in place), bytes */
    struct ctr_val pss_start, pss_end;
};

struct record_procs {
    unsigned n;
    pid_t pid[RECORD_MAX_PROCS]; /* each child's, from its fork until it is reaped */
    struct record_proc proc[RECORD_MAX_PROCS];
};

/*
 * The memory the load's children took for it: the sum of each one's PSS
 * growth (pss_end - pss_start), and that over their connections; false when a
 * PSS was not read (or went down).
 */
bool record_procs_growth(const struct record_procs *p, uint64_t *bytes, double *per_conn);

/* One measured run: what was asked and what came back. */
struct run_record {
    const char *proto;
    struct load_cfg cfg; /* a copy; cfg.cpus and cfg.stop are not used after the run */
    struct load_result res;
    struct observe_result obs; /* valid when observed */
    bool observed;
    unsigned cell;      /* which cell (endpoint) of the plan this run measured */
    unsigned rep;       /* the how-manieth run of that cell, from 0 */
    bool size_is_reply; /* cfg.size is the server's reply body (lab http, fcgi), not the request */
    double rate_share;  /* open loop with --rate N%: N / 100 of rate_basis; 0 = an absolute rate */
    double rate_basis;  /* the closed-loop maximum measured for it, ops/s */
    /* run --rate N%: where rate_basis comes from; NULL otherwise (the lab's is its cell's run) */
    const struct rate_base *base;
    const char *cut_by; /* what cut it short (res.interrupted): NULL for Ctrl-C */
    /* Requests made before the run, not measured (redis: the SETs that fill a mix's keys). */
    uint64_t prepared;
    const char *transport; /* its name where the endpoint's is not enough ("tcp-veth"), or NULL */
    /* The lab's: its text lines name it by its transport, as the lab's tables do (its
     * endpoints are a free port and a socket in a temporary directory, new at each lab). */
    bool by_transport;
    struct record_netns netns; /* lab, run --netns: where each end ran */
    /* run --agent: the agent's evidence of the window, its host and endpoint; owned, or NULL */
    json_t *agent;
    /* run --procs: the child processes that made the load; owned, or NULL (hopbench's own) */
    struct record_procs *procs;
    /* With many connections or --procs: what the accept queues refused over the whole run,
     * warm-up (the connects) included, where the window's counters miss it (run.c) */
    struct record_accept {
        bool ok; /* both snapshots read */
        uint64_t overflows, drops,
            syn_retrans; /* TcpExt.ListenOverflows, ListenDrops, TCPSynRetrans */
    } accept;
};

/*
 * Before a load from side's namespace of ns against a server in A: where
 * each end runs into p, and for a client in B the veth pair's addresses and
 * the veth end's byte counters as they stand (netns_veth_bytes, read in B).
 */
void record_netns_begin(struct record_netns *p, const struct netns *ns, enum netns_side side);

/* After that load: p->veth becomes what the veth end in B moved since record_netns_begin. */
void record_netns_end(struct record_netns *p, const struct netns *ns);

/* "tcp", "unix" (endpoint_transport), or the lab's r->transport ("tcp-veth"). */
const char *report_transport(const struct run_record *r);

/* The name the text gives r: its transport for a lab's run (by_transport), else its endpoint's. */
const char *report_run_name(const struct run_record *r);

/* ops/s of a run (0 when its window is empty). */
double report_ops_per_s(const struct run_record *r);

/* Client CPU ns per op (0 when no op). */
double report_cpu_ns_per_op(const struct run_record *r);

/*
 * Whether r is valid: no error, an op completed, and, for an open loop not
 * cut short, not saturated (it achieved the rate it was asked for).
 */
bool report_run_valid(const struct run_record *r);

/*
 * Whether r counts in summaries, comparisons and ratios: valid and not cut
 * short by Ctrl-C. A run that does not is still shown, and marked.
 */
bool report_run_counts(const struct run_record *r);

/*
 * The rate an open-loop run's schedule asked for over its window, ops/s: in a
 * duration-bound run every op intended inside the window was answered or
 * failed, so (ops + errors) / duration, which is the schedule's own count
 * (for poisson arrivals, not the mean rate); in a count-bound run the rate.
 */
double report_rate_intended(const struct run_record *r);

/*
 * The rate an open-loop run kept up with, ops/s: its ops over its window,
 * which includes the drain (the time past the intended window's end it took
 * to answer the ops intended inside it; in a count-bound run, the time past
 * count ops at the rate), less the part of it the slowest op's own service
 * time accounts for. 0 for an empty window.
 */
double report_rate_kept(const struct run_record *r);

/* An open-loop run that kept up with less than 99 % of the rate intended. */
bool report_saturated(const struct run_record *r);

/* A saturated run that was not cut short: it makes the results invalid. */
bool report_saturated_invalid(const struct run_record *r);

/* CPU per op in µs: client, server, their sum, system-wide; negative = unavailable. */
struct report_cost {
    double cli, srv, sum, sys;
};

/* r's CPU per op; a figure is unavailable when not observed, unreadable or no op completed. */
struct report_cost report_cost_of(const struct run_record *r);

/* "connect" or "reuse", as tables, summaries and the evidence name a mode. */
const char *report_mode_name(enum load_mode mode);

#endif
