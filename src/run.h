/*
 * run: the `run` command's work. It loads each endpoint of the plan --reps
 * times, in ABBA (or seeded random) order and under identical settings, with
 * the outside counters (observe.c) around each run's window; each finished
 * run is a record, appended to --jsonl as soon as it ends. It prints the
 * tables and the summary over repetitions, but no error, and picks no exit
 * code: each call returns 0 or a negative errno with a struct hb_err, and
 * the command (cmd/run.c) says what went wrong.
 */
#ifndef HOPBENCH_RUN_H
#define HOPBENCH_RUN_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "agent/client.h"
#include "endpoint.h"
#include "engine/load.h"
#include "host/budget.h"
#include "host/listener.h"
#include "host/netns.h"
#include "host/observe.h"
#include "host/place.h"
#include "host/service.h"
#include "plan.h"
#include "progress.h"
#include "proto/mysql.h"
#include "registry.h"
#include "report/report.h"

#define CLI_MAX_PARAMS 32   /* --param */
#define CLI_MAX_SECRET 258  /* a password read from a file, its NUL and one more */
#define CLI_MAX_BODY   4096 /* --expect-body, after escapes */

/* From this many connections (or with --procs or --source) run prints its limits and what
 * kept connections shut. */
#define RUN_MANY_CONNS 1000

struct proto_entry;

/* What `hopbench run` is asked (cmd/run.c reads it from the command line). */
struct run_opts {
    const struct proto_entry *proto;
    struct endpoint eps[CLI_MAX_ENDPOINTS];
    unsigned neps;
    struct shared_opts
        shared;           /* reps: runs per endpoint; seed: the random order and the bootstrap */
    struct load_cfg load; /* every field but ep, cpus and stop */
    bool allow_remote;
    pid_t server_pids[64]; /* --server-pid */
    unsigned nserver_pids;
    bool server_tree;          /* --server-tree */
    const char *server_cgroup; /* --server-cgroup */
    bool no_server_lookup;     /* --no-server-lookup: no server found by its listening socket */
    /*
     * The server of each endpoint found by its listening socket (run_find_servers),
     * counted with its tree; why none was, for its figures' n/a ("" when one was, or
     * when it was not looked for).
     */
    pid_t found[CLI_MAX_ENDPOINTS][LISTENER_MAX];
    unsigned nfound[CLI_MAX_ENDPOINTS];
    char not_found[CLI_MAX_ENDPOINTS][CTR_WHY_MAX];
    bool order_random;      /* --order random (default abba) */
    union codec_room codec; /* the protocol's struct NAME_opts (load.opts points here) */
    struct proto_given given[PROTO_GIVEN_MAX]; /* its options, as given, in order */
    unsigned ngiven;
    const char *params[CLI_MAX_PARAMS];
    char expect_body[CLI_MAX_BODY];     /* --expect-body with \n, \r, \t, \\ decoded */
    char password[CLI_MAX_SECRET];      /* --password-file: the file's first line */
    char server_key[MYSQL_MAX_KEY + 1]; /* --server-public-key: the file's PEM */
    bool size_given;
    bool close_given;       /* shared.close_given, where the protocol's checks read it */
    bool arrivals_given;    /* --arrivals was given (it needs --rate) */
    double rate_share;      /* --rate N%: N / 100 (load.rate is set per run); 0 = absolute */
    bool wait_auto;         /* no --wait: one kept connection per thread, closed loop, so
                             * load.block_wait was set as --wait block would (run_wait_default) */
    uint64_t wait_ready_ns; /* --wait-ready: how long a refused endpoint is asked again */
    uint64_t calibrate_ns;  /* how long the closed-loop maximum is measured for --rate N% */
    /* --rate-base: ops/s the share is of, one for every endpoint or one per endpoint */
    double rate_bases[CLI_MAX_ENDPOINTS];
    unsigned nrate_bases;
    /* --service, --watch */
    struct service_set services;
    /* --label, in the order of the endpoints */
    const char *labels[CLI_MAX_ENDPOINTS];
    unsigned nlabels;
    /* --agent ENDPOINT, its token, services and state */
    bool agent_given;
    const char *agent_token_file;
    struct agent_client agent;
    /* --procs: the load's child processes (0: hopbench's own process) */
    unsigned procs;
    bool procs_given;
    /* --source, or chosen by run_plan_auto (sources_auto): TCP connections bind these */
    struct endpoint_sources sources;
    bool sources_auto;
    enum netns_mode netns;    /* --netns: run starts the built-in server there (NETNS_NONE: none) */
    enum netns_mode in_netns; /* --in-netns: started inside a stack's --netns namespaces */
};

struct run {
    const struct run_opts *opts;
    struct place place;
    struct observe_hook hook; /* the current run's outside counters */
    struct run_record *recs;  /* one per finished run, in the order they ran */
    /* --rate N%: each endpoint's base, set before the first run (nbases = neps once set) */
    struct rate_base bases[CLI_MAX_ENDPOINTS];
    unsigned nbases;
    double *probes; /* the closed-loop probes' ops/s, --reps per endpoint */
    size_t nrecs;
    struct hb_err jsonl_err;   /* run_all stopped: a record could not be appended to --jsonl */
    struct progress *progress; /* the live line, or NULL */
    /* --agent: the run in its window, its session, and the first failure of its questions */
    struct run_record *cur;
    uint64_t agent_session;
    int agent_rc;
    struct hb_err agent_err;
    /* --netns: the namespaces made for the run, the built-in server in A (pid 0: none) */
    struct netns netns;
    enum netns_side client_side; /* where the load runs: A (same) or B (other) */
    pid_t server_pid;
    _Atomic pid_t *pid_mirror; /* server_pid for signal handlers, or NULL (spawn.h) */
    struct profile *prof;      /* --profile: the profiler of every window, or NULL */
};

/*
 * The order of run_all's runs into order[run_planned_runs(o)]: each an
 * endpoint's index, --reps of each, in reps blocks that hold every endpoint
 * once: ABBA (forward and reverse in turn), or with --order random each block
 * shuffled by --seed. --rate's probes of each endpoint's base go in the same order.
 */
void run_order(const struct run_opts *o, unsigned *order);

/* How many runs run_all makes, and how long each takes as planned (0: a count, not a time). */
unsigned run_planned_runs(const struct run_opts *o);
uint64_t run_planned_ns(const struct run_opts *o);

/*
 * Places the CPUs as --pin asks (place_init). Returns 0, or a negative errno
 * with err set (the placement cannot be made: a usage error).
 */
int run_init(struct run *run, const struct run_opts *opts, struct hb_err *err);

/*
 * --netns: makes the namespaces (-EPERM when not allowed to), starts the
 * protocol's built-in server in A on o's endpoints and moves the calling
 * thread to the client's namespace, where the rest of the run happens (every
 * thread it starts begins there). o's endpoints become where the server
 * listens: a TCP port 0 the port it got and, with other, each TCP address
 * A's veth address. *mirror (if not NULL) follows the server's pid (spawn.h).
 * With --in-netns it only describes the namespaces it was started in
 * (netns_adopt). Nothing without either. Returns 0 or a negative errno with err set;
 * run_serve_stop undoes a partial start.
 */
int run_serve(struct run *run, struct run_opts *o, _Atomic pid_t *mirror, struct hb_err *err);

/*
 * Whether the built-in server still runs: 0, or -ECHILD with err saying how
 * it ended (it is reaped then).
 */
int run_serve_check(struct run *run, struct hb_err *err);

/* Stops the built-in server, moves the thread back to the host's namespace, closes them. */
void run_serve_stop(struct run *run);

/*
 * The fds one run holds at once (load_fd_need), besides those open when it
 * starts; with --procs, those of the load process with the most (each inherits
 * the soft limit the budget check raises).
 */
uint64_t run_fd_need(const struct run_opts *o);

/*
 * How many load processes o's plan needs: o->procs when --procs was given (or
 * it is set), 0 when one process with `open` fds open may open the run's fds
 * under the hard RLIMIT_NOFILE `hard` (budget_fds), else the fewest that may,
 * each with its share (at least a thread each); 0 when not even PROCS_MAX
 * processes may (the budget check then refuses the plan). Pure.
 */
unsigned run_procs_for(const struct run_opts *o, uint64_t hard, uint64_t open);

/*
 * What the plan needs that it was not told: source addresses from 127.0.0.1
 * on (run_sources_for, o->sources_auto). Returns 0, or -EMFILE with err set
 * when one process may not open the connections' fds (l's hard RLIMIT_NOFILE,
 * `open` fds open) and --procs was not given: the line says how many would
 * (run_procs_for).
 */
int run_plan_auto(struct run_opts *o, const struct budget_limits *l, uint64_t open,
                  struct hb_err *err);

/*
 * Whether the machine (l) holds o's connections beyond what the budget check
 * sees: 0, or with err set -EADDRNOTAVAIL when a TCP endpoint's connections
 * are more than its source addresses have ports, -ENFILE when more than the
 * system has fds left (the fds of a process and memory are cmd_check_budget's).
 */
int run_limits_check(const struct run_opts *o, const struct budget_limits *l, uint64_t open,
                     struct hb_err *err);

/*
 * The limits lines, once the plan is not refused: the source addresses chosen
 * (run_plan_auto), what the machine allows o's connections (fds a process and
 * the system's, ports a source address, the accept queue, memory) from l, and
 * which limit binds first, on out.
 */
void run_limits_print(const struct run_opts *o, const struct budget_limits *l, uint64_t open,
                      FILE *out);

/*
 * How many source addresses (127.0.0.1 on) the connections to o's first
 * IPv4 loopback TCP endpoint need when each has `ports` ephemeral ports
 * (ip_local_port_range) to it: connect() takes the even half first, and past
 * it each connect scans them all (5 ms each with 16,000 connections from one
 * address, measured on Linux 6.18), so seven eighths of the half are counted on
 * (the rest for ports others hold): 0 when the kernel's one address is enough,
 * --source was given, or no endpoint is such. Pure.
 */
unsigned run_sources_for(const struct run_opts *o, unsigned ports);

/*
 * The most memory a run allocates while the histograms of every earlier
 * record are kept (load_mem_need); with --rate N% each run also keeps an open
 * loop's service histogram. SIZE_MAX when that overflows.
 */
size_t run_mem_need(const struct run_opts *o);

/*
 * Whether every endpoint has someone listening: 0, or a negative errno with
 * err naming the first that has not ("cannot connect to ENDPOINT: why").
 * For pg and mysql the probe logs in: a server whose way of authenticating
 * the codec refuses (--auth-method, --server-public-key) is -EKEYREJECTED,
 * "ENDPOINT: refused to log in: why". With --agent, whether the agent answers and takes the token,
 * and with
 * --agent-state, the wait until it announces that state.
 */
int run_preflight(const struct run_opts *o, const atomic_int *stop, struct hb_err *err);

/*
 * Where the --server-pid processes run, or those run_find_servers found: the
 * server's CPUs read from their threads and marked observed
 * (place_observe_server). 0 when none is named or they were read; a negative
 * errno with err set when they could not be (the placement then stays what
 * --pin expects).
 */
int run_place_server(struct run *run, struct hb_err *err);

/*
 * When nothing says where the server is (no --server-pid, --server-cgroup,
 * --service, --netns, nor --no-server-lookup): the server of each local
 * endpoint found by its listening socket (host/listener.h), which each of the
 * endpoint's runs counts as --server-pid PID --server-tree would. Prints to
 * out a line per server found and how ("server: nginx (pid 1234, found by its
 * listening socket tcp://127.0.0.1:8080)"), one per endpoint whose server was
 * not and why; server (the evidence's, cap bytes) names those found, "" when none.
 */
void run_find_servers(struct run_opts *o, FILE *out, char *server, size_t cap);

/*
 * Runs the plan into run->recs, each record appended to jsonl (if not NULL)
 * as it ends. With --rate N%, first each endpoint's base (run->bases): the
 * --rate-base given, or the median of --reps closed-loop probes per
 * endpoint, run in the plan's order; a probe with errors or no op ends the
 * plan there (a negative errno with err set). Stops before the next run once *stop is set, or once
 * the reader of out (where the tables go) is gone (fd_reader_gone), which then sets *stop to
 * STOP_INTERRUPT; the current run ends early when *stop is set. Returns 0 or a negative errno: err
 * is set (err->code not 0) when a run could not be made (threads, memory), run->jsonl_err (its code
 * not 0) when a record could not be appended, both when the last run did the one and then the
 * other. The records so far are kept either way (in jsonl, each whole or not at all).
 */
int run_all(struct run *run, struct outfile *jsonl, FILE *out, atomic_int *stop,
            struct hb_err *err);

/* Prints the tables, the summary over repetitions (--reps > 1), the errors and cut runs. */
void run_report(const struct run *run, FILE *out);

/* The summary over repetitions for the evidence, owned by the caller; NULL on OOM. */
json_t *run_summary_json(const struct run *run);

/*
 * With repetitions: the bottom line of the runs (report/bottom.h, each label
 * NAME.tcp against NAME.unix, else every endpoint against the tcp one or the
 * first) printed to out and returned as the evidence's "bottom_line"; NULL
 * with one run per endpoint.
 */
json_t *run_bottom(const struct run *run, FILE *out);

/* Frees the records and their histograms. */
void run_release(struct run *run);

#endif
