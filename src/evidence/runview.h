/*
 * runview: one run record of the evidence read into typed figures, the ones a
 * stack, cost, --csv and compare print (its label, endpoint and transport,
 * how it was set up, ops and ops/s, latency percentiles, the phases, errors by
 * kind, the client's CPU, the metrics compare weighs, each service's CPU and
 * memory, the sockets of the loaded and the watched hops, the kernel's
 * listen-queue counters, the agent's services, whether the run is valid and
 * whether it was noisy), by one function over schema.h's keys. A figure the
 * run does not hold is NAN (absent, or {"unavailable": why}), NULL for a
 * string; for an integer or a flag run_view.have says whether it is held.
 */
#ifndef HOPBENCH_EVIDENCE_RUNVIEW_H
#define HOPBENCH_EVIDENCE_RUNVIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "evidence/metric.h"
#include "util.h"

#define RUN_VIEW_MAX_SVC    8  /* services (and the agent's) kept, in order: run's --service cap */
#define RUN_VIEW_MAX_KINDS  24 /* error kinds and status classes kept, in the run's order */
#define RUN_VIEW_MAX_WATCH  8  /* watched hops kept: run's --watch cap */
#define RUN_VIEW_MAX_PHASES 8  /* phases kept, in the run's order (connect mode has 4) */

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
    double min, p50, p90, p99, p999, p9999, max, mean;
};

/* A phase of connect mode ("connect", "ttfb", "response", "close") and its latency. */
struct run_phase {
    const char *name;
    struct run_latency latency;
};

/*
 * The figures of a run_view that are not numbers (NAN when absent) but
 * integers, flags or a closed loop's rate of 0: which of them the run holds,
 * so a table can tell an absent figure from 0 or false.
 */
enum run_have {
    RUN_HAVE_CELL = 1u << 0,
    RUN_HAVE_CONNECTIONS = 1u << 1,
    RUN_HAVE_THREADS = 1u << 2,
    RUN_HAVE_OPS = 1u << 3,
    RUN_HAVE_ERRORS_TOTAL = 1u << 4,
    RUN_HAVE_VALID = 1u << 5,
    RUN_HAVE_INTERRUPTED = 1u << 6,
    RUN_HAVE_SATURATED = 1u << 7,
    RUN_HAVE_NOISY = 1u << 8,
    RUN_HAVE_RATE = 1u << 9,
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
    struct run_phase phase[RUN_VIEW_MAX_PHASES]; /* every phase the run holds, in its order */
    unsigned nphase;
    /* how the run was set up, and its window; NULL or NAN when not said */
    const char *proto, *mode, *close_by, *wait; /* close_by: who closes first ("client") */
    double rep, size, pipeline, connects, reconnects, duration_s, window_s;
    double window_start; /* Unix s, UTC */
    /* an open loop's figures beyond its rate; NAN for a closed loop */
    double rate_share, achieved_ops_per_s;
    struct run_latency service_latency;
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
    double server_pss_end, cgroup_ws_end;     /* observed.memory at the window's end, B */
    struct run_service svc[RUN_VIEW_MAX_SVC]; /* observed.services */
    unsigned nsvc;
    double sum_ns_per_op; /* the client's and every service's CPU per op */
    struct run_hop front; /* the loaded hop's sockets */
    struct run_hop watch[RUN_VIEW_MAX_WATCH];
    unsigned nwatch;
    double listen_overflows, listen_drops, syn_retrans; /* net_delta over the window */
    double coloc_share; /* placement.colocated.share (docs/placement.md) */
    bool agent;         /* the run holds an agent's evidence */
    struct run_service agent_svc[RUN_VIEW_MAX_SVC]; /* its services (CPU per op only) */
    unsigned nagent;
    unsigned have; /* enum run_have: which integers and flags above the run holds */
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

/* The service of v (observed.services) named name, or NULL. */
const struct run_service *run_view_service(const struct run_view *v, const char *name);

/* The hop under test: the arm v's label names (evidence_label_arm), else its transport. */
const char *run_view_hop_transport(const struct run_view *v);

/* The figure of v that metric m (evidence/metric.h) is summarized and compared by, or NAN. */
double run_view_metric(const struct run_view *v, enum summary_metric m);

#endif
