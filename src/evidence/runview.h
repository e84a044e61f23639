/*
 * runview: one run record of the evidence read into typed figures, the ones a
 * stack prints (its label, endpoint and transport, ops and ops/s, latency
 * percentiles, errors by kind, the client's CPU, each service's CPU and
 * memory, the phases, the sockets of the loaded and the watched hops, the
 * kernel's listen-queue counters, the agent's services, whether the run is
 * valid and whether it was noisy), by one function over schema.h's keys.
 * A figure the run does not hold is NAN (absent, or {"unavailable": why}).
 */
#ifndef HOPBENCH_EVIDENCE_RUNVIEW_H
#define HOPBENCH_EVIDENCE_RUNVIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "util.h"

#define RUN_VIEW_MAX_SVC   8  /* services (and the agent's) kept, in order: run's --service cap */
#define RUN_VIEW_MAX_KINDS 24 /* error kinds and status classes kept, in the run's order */
#define RUN_VIEW_MAX_WATCH 8  /* watched hops kept: run's --watch cap */

/* A gauge of a hop's sockets over the window: at its start and its fullest sample. */
struct run_gauge {
    double start, peak;
};

/* A hop's sockets: TIME_WAIT on either side, established connections, the accept queue. */
struct run_hop {
    const char *transport; /* a watched hop's ("tcp", "unix"); NULL for the loaded hop */
    struct run_gauge tw_client, tw_server, established, listen_queue;
};

/* A service as the run (or its agent) measured it: CPU per op (ns), PSS and working set (B). */
struct run_service {
    const char *name;
    double cpu_ns_per_op, pss_end, ws_end;
};

/* A count by kind: an error kind ("timeout") or a status class ("5xx"). */
struct run_count {
    const char *kind;
    uint64_t n;
};

/* A latency object's figures, ns. */
struct run_latency {
    double p50, p99, p999, mean;
};

/*
 * A run record's figures. The strings are lent from the record: the view is
 * good as long as the record is.
 */
struct run_view {
    int cell;              /* the endpoint's place in the run's order */
    const char *endpoint;  /* as given: "tcp://127.0.0.1:9000" */
    const char *label;     /* the endpoint's label; NULL when it has none */
    const char *transport; /* the client's: "tcp", "unix", "tcp-veth" */
    unsigned connections, threads;
    bool valid, interrupted;
    bool saturated; /* an open loop below 99 % of its rate */
    uint64_t ops, requests, errors_total;
    double ops_per_s;
    double rate; /* an open loop's rate asked, ops/s; 0 for a closed loop */
    struct run_latency latency;
    struct run_latency connect, response, close; /* connect mode's phases; NAN without */
    double client_cpu_ns_per_op;
    struct run_count errors[RUN_VIEW_MAX_KINDS], status[RUN_VIEW_MAX_KINDS];
    unsigned nerrors, nstatus;
    /* observed: the machine's CPU over the window and what else used it */
    double system_busy_ns, system_ns_per_op;
    const char *system_source; /* where system_* comes from; NULL when not said */
    double server_ns_per_op, client_plus_server_ns_per_op, cgroup_ns_per_op; /* --server-* */
    const char *server_source; /* "pid", "cgroup", "none"; NULL when not said */
    double cpus_allowed, other_share, steal_share, window_ns;
    bool noisy;
    struct run_service svc[RUN_VIEW_MAX_SVC]; /* observed.services */
    unsigned nsvc;
    double sum_ns_per_op; /* the client's and every service's CPU per op */
    struct run_hop front; /* the loaded hop's sockets */
    struct run_hop watch[RUN_VIEW_MAX_WATCH];
    unsigned nwatch;
    double listen_overflows, listen_drops, syn_retrans; /* net_delta over the window */
    bool agent;                                         /* the run holds an agent's evidence */
    struct run_service agent_svc[RUN_VIEW_MAX_SVC];     /* its services (CPU per op only) */
    unsigned nagent;
};

/*
 * Fills *v from run. Returns 0; 1 for the placeholder of a run the writer
 * could not encode ({"error": ...}; nothing filled); -EINVAL with err naming
 * the key (without the file) when run is not an object or lacks a key every
 * run has: cell, endpoint, transport, connections, threads, ops, errors_total,
 * valid, interrupted, ops_per_s, latency_ns.
 */
int run_view_of(const json_t *run, struct run_view *v, struct hb_err *err);

/*
 * Fills *v with every figure run holds, checking none: cell -1, strings NULL,
 * counts 0 and figures NAN for what it lacks (cost, which checks runs its own
 * way, reads older and merged evidence through it).
 */
void run_view_fill(const json_t *run, struct run_view *v);

/* The watched hop of transport t in v, or NULL. */
const struct run_hop *run_view_watch(const struct run_view *v, const char *t);

#endif
