/*
 * schema: the evidence format (docs/evidence.md) as the writers (report/json.c,
 * report/services.c, agent/agent.c) and the readers (runview, compare, merge)
 * all spell it: the schema name, the keys that are written and read back, or
 * written by more than one writer, the order of a latency object's figures,
 * the document's head, built here for run, lab and merge alike, and the
 * encoders of a figure that may be unavailable and of a gauge. Keys only one
 * writer puts and no reader reads (the machine's facts, settings such as
 * warmup_s) are spelled once, where they are written.
 */
#ifndef HOPBENCH_EVIDENCE_SCHEMA_H
#define HOPBENCH_EVIDENCE_SCHEMA_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define EVIDENCE_SCHEMA "hopbench.evidence/1"

/* The document (and a --jsonl header). */
#define EV_SCHEMA         "schema"
#define EV_TOOL           "tool"
#define EV_NAME           "name"
#define EV_VERSION        "version"
#define EV_COMMAND        "command"
#define EV_ARGV           "argv"
#define EV_STARTED_UNIX_S "started_unix_s"
#define EV_MERGED_FROM    "merged_from"
#define EV_MACHINE        "machine"
#define EV_PLACEMENT      "placement"
#define EV_SERVER         "server"
#define EV_ELAPSED_S      "elapsed_s"
#define EV_INTERRUPTED    "interrupted" /* also a run's */
#define EV_VALID          "valid"       /* also a run's */
#define EV_RUNS           "runs"
#define EV_PLAN           "plan"
#define EV_SUMMARY        "summary"
#define EV_BOTTOM_LINE    "bottom_line"
#define EV_TRANSPORT      "transport"

/* A --jsonl line: {"record": "header", ...} or {"record": "run", ...}. */
#define EV_RECORD        "record"
#define EV_RECORD_HEADER "header"
#define EV_RECORD_RUN    "run"

/* A run record. */
#define EV_CELL                 "cell"
#define EV_REP                  "rep"
#define EV_PROTO                "proto"
#define EV_WAIT                 "wait" /* "epoll", "block" or "uring" */
#define EV_ENDPOINT             "endpoint"
#define EV_TRANSPORT            "transport" /* the client's: "tcp", "unix", "tcp-veth" */
#define EV_LABEL                "label"     /* the endpoint's, when it has one */
#define EV_MODE                 "mode"
#define EV_SIZE                 "size"
#define EV_CONNECTIONS          "connections"
#define EV_THREADS              "threads"
#define EV_PIPELINE             "pipeline"
#define EV_OPS                  "ops"
#define EV_WINDOW_S             "window_s"
#define EV_WINDOW_START         "window_start_unix_s" /* when the window began: Unix s, UTC */
#define EV_CONNECTS             "connects"
#define EV_ERRORS_TOTAL         "errors_total"
#define EV_CLIENT_CPU_NS        "client_cpu_ns"
#define EV_ERRORS               "errors"
#define EV_OPS_PER_S            "ops_per_s"
#define EV_CLIENT_CPU_NS_PER_OP "client_cpu_ns_per_op"
#define EV_LATENCY_NS           "latency_ns" /* also a phase's */
#define EV_HISTOGRAM            "histogram"  /* also a phase's */
#define EV_PHASES               "phases"
#define EV_OBSERVED             "observed"
#define EV_REQUESTS             "requests"
#define EV_REPLIES              "replies"
#define EV_REPLIES_BY_KIND      "replies_by_kind" /* protocols that tell requests apart */
#define EV_PREPARED             "prepared"        /* requests before the run, when any */
#define EV_RECONNECTS           "reconnects"
#define EV_RETRIED              "retried"
#define EV_CONNECT_RETRIES      "connect_retries"
#define EV_RETRY                "retry"
#define EV_STDERR_REPLIES       "stderr_replies"
#define EV_STATUS               "status"
#define EV_OPEN_LOOP            "open_loop"
#define EV_MERGED_RUNS          "merged_runs"
#define EV_CONNECTIONS_OPEN     "connections_open" /* {start, end}: connected at the window's */
#define EV_SOURCE_ADDRESSES     "source_addresses" /* --source's, when the run bound any */
#define EV_PROCS                "procs"            /* run --procs: the load processes */
#define EV_CLOSE                "close"            /* connect mode: who closes first */
#define EV_DURATION_S           "duration_s"
/* Ops and p99 per interval of the window (engine/series.h): one line of the document. */
#define EV_SERIES             "series"
#define EV_SERIES_INTERVAL_MS "interval_ms"
#define EV_SERIES_END_MS      "end_ms"
#define EV_SERIES_OPS         "ops"
#define EV_SERIES_P99_NS      "p99_ns"
#define EV_SERIES_BEYOND      "beyond"
#define EV_ERROR              "error" /* the placeholder of a run that could not be encoded */

/*
 * --profile: a run's samples by side and subsystem, and the document's figures per request
 * over the runs (docs/profile.md lists what each holds; report/profile.c writes and reads them).
 */
#define EV_PROFILE "profile"
#define EV_MEDIAN  "median"

/* A run's server side from run --agent (docs/agent.md lists what it holds). */
#define EV_AGENT "agent"

/*
 * Every run's placement: where each end ran. kind says what separates them
 * ("process": processes of one network namespace, the one hopbench started
 * in; "netns": namespaces made by lab, run or stack --netns; "container" and
 * "pod" are kept for their ends); key is what compare and report print to
 * tell placements apart ("process", "netns same", "netns other"); client and
 * server are objects of their own: where (a side's name), and what is known
 * of it (netns_inode, addr). docs/evidence.md lists the fields.
 */
#define EV_PLACEMENT           "placement"
#define EV_PLACE_KIND          "kind"
#define EV_PLACE_KEY           "key"
#define EV_PLACE_CLIENT        "client"
#define EV_PLACE_SERVER        "server"
#define EV_PLACE_WHERE         "where" /* "host", "remote", "same", "A", "B" */
#define EV_PLACE_NS_INODE      "netns_inode"
#define EV_PLACE_ADDR          "addr"
#define EV_PLACE_KIND_PROC     "process"
#define EV_PLACE_KIND_NETNS    "netns"
#define EV_PLACE_COLOCATED     "colocated" /* host/coloc.h: {share, samples, same} */
#define EV_PLACE_COLOC_SHARE   "share"
#define EV_PLACE_COLOC_SAMPLES "samples"
#define EV_PLACE_COLOC_SAME    "same"
/* the document's placement: where the load ran (json.c place_where), and merge's list */
#define EV_PLACE_KIND_POD       "pod"
#define EV_PLACE_KIND_CONTAINER "container"
#define EV_PLACE_KIND_MERGED    "merged"
#define EV_PLACE_POD            "pod"
#define EV_PLACE_NODE           "node"
#define EV_PLACE_CONTAINER      "container"
#define EV_PLACEMENTS           "placements"
#define EV_PLACE_PIN            "pin" /* the document's: --pin as asked */
#define EV_PLACE_PIN_NONE       "none"

/* A lab or run --netns run's netns: where each end ran. */
#define EV_NETNS            "netns"
#define EV_NETNS_CLIENT     "client"          /* "same", "A" or "B" */
#define EV_NETNS_SERVER     "server"          /* "same" or "A" */
#define EV_NETNS_CLIENT_INO "client_ns_inode" /* as /proc/PID/ns/net names it: net:[N] */
#define EV_NETNS_SERVER_INO "server_ns_inode" /* null when not known (stack --netns other) */
#define EV_NETNS_VETH       "veth"            /* a tcp-veth run's; null for the others */
#define EV_VETH_CLIENT_IF   "client_if"
#define EV_VETH_CLIENT_ADDR "client_addr"
#define EV_VETH_SERVER_IF   "server_if"
#define EV_VETH_SERVER_ADDR "server_addr"
#define EV_VETH_PREFIX      "prefix"
#define EV_VETH_RX_BYTES    "client_rx_bytes" /* what the client's end received over the run */
#define EV_VETH_TX_BYTES    "client_tx_bytes" /* and sent; null when unreadable */

/*
 * A run's observed figures as the stack reads them back (evidence/runview.c): the machine's CPU,
 * other processes' share of it, each --service, their sum, and the hops' sockets (the loaded
 * one's, and each --watch hop's) as gauges of start, peak and end.
 */
#define EV_OBS_CPU                          "cpu"
#define EV_OBS_SYSTEM_BUSY_NS               "system_busy_ns"
#define EV_OBS_SYSTEM_NS_PER_OP             "system_ns_per_op" /* also services_total's */
#define EV_OBS_SYSTEM_SOURCE                "system_source"
#define EV_OBS_SERVER_NS_PER_OP             "server_ns_per_op" /* --server-pid or --server-cgroup */
#define EV_OBS_CLIENT_PLUS_SERVER_NS_PER_OP "client_plus_server_ns_per_op"
#define EV_OBS_CGROUP_NS_PER_OP             "cgroup_ns_per_op"
#define EV_OBS_SERVER_SOURCE                "server_source" /* "pid", "cgroup", "none" */
#define EV_OBS_OTHER_CPU                    "other_cpu"
#define EV_OBS_CPUS_ALLOWED                 "cpus_allowed"
#define EV_OBS_OTHER_SHARE                  "other_share"
#define EV_OBS_STEAL_SHARE                  "steal_share"
#define EV_OBS_WINDOW_NS                    "window_ns"
#define EV_OBS_NOISY                        "noisy"
#define EV_OBS_STEAL_NS                     "steal_ns" /* also the agent's cpu */
#define EV_OBS_SAMPLES                      "samples"  /* the sockets' samples; also the agent's */
#define EV_OBS_SAMPLE_MS                    "sample_ms"
#define EV_OBS_SERVICES                     "services" /* also an agent's */
#define EV_OBS_SERVICES_TOTAL               "services_total"
#define EV_OBS_SUM_NS_PER_OP                "sum_ns_per_op"
#define EV_SVC_NAME                         "name"
#define EV_SVC_KIND                         "kind"
#define EV_SVC_SOURCE                       "source"
#define EV_SVC_CPU_NS                       "cpu_ns"
#define EV_SVC_PSS_START                    "pss_start" /* also a --procs child's */
#define EV_SVC_WS_START                     "working_set_start"
#define EV_SVC_PROCESSES                    "processes"
#define EV_SVC_CPU_NS_PER_OP                "cpu_ns_per_op"
#define EV_SVC_PSS_END                      "pss_end"
#define EV_SVC_WS_END                       "working_set_end"
#define EV_OBS_MEMORY                       "memory"
#define EV_OBS_SERVER_PSS_END               "server_pss_end"
#define EV_OBS_CGROUP_WS_END                "cgroup_working_set_end"
#define EV_OBS_SOCKETS                      "sockets"
#define EV_OBS_WATCH                        "watch"
#define EV_HOP_TW_CLIENT                    "time_wait_client"
#define EV_HOP_TW_SERVER                    "time_wait_server"
#define EV_HOP_ESTABLISHED                  "established"
#define EV_GAUGE_START                      "start"
#define EV_GAUGE_PEAK                       "peak"
#define EV_GAUGE_END                        "end"
#define EV_HOP_LISTEN_QUEUE                 "listen_queue"
#define EV_HOP_CLIENT_PORTS                 "client_ports"
#define EV_HOP_LISTEN_BACKLOG               "listen_backlog"
#define EV_OBS_NET_DELTA                    "net_delta" /* the kernel's counters, each by its netstat name */
#define EV_NET_LISTEN_OVERFLOWS             "TcpExt.ListenOverflows"
#define EV_NET_LISTEN_DROPS                 "TcpExt.ListenDrops"
#define EV_NET_SYN_RETRANS                  "TcpExt.TCPSynRetrans"
/* A run's phases (connect mode): each {"latency_ns": ..., "histogram": ...}. */
#define EV_PHASE_CONNECT  "connect"
#define EV_PHASE_RESPONSE "response"
#define EV_PHASE_CLOSE    "close"

/* A run's open_loop. */
#define EV_RATE               "rate"
#define EV_ARRIVALS           "arrivals"
#define EV_RATE_SHARE         "rate_share"
#define EV_RATE_BASIS         "rate_basis_ops_per_s"
#define EV_RATE_BASIS_FROM    "rate_basis_from"   /* "probes", "given" or "cell" */
#define EV_RATE_BASIS_PROBES  "rate_basis_probes" /* the probes behind "probes", else null */
#define EV_ACHIEVED_OPS_PER_S "achieved_ops_per_s"
#define EV_INTENDED_OPS_PER_S "intended_ops_per_s" /* saturated: kept below 99 % of it */
#define EV_KEPT_OPS_PER_S     "kept_ops_per_s"
#define EV_SATURATED          "saturated"
#define EV_SERVICE_LATENCY_NS "service_latency_ns"
#define EV_SERVICE_HISTOGRAM  "service_histogram"

/* A latency object: min, the percentiles and max (EV_LATENCY_ORDER), and mean. */
#define EV_MIN   "min" /* also a histogram's */
#define EV_P50   "p50"
#define EV_P90   "p90"
#define EV_P99   "p99"
#define EV_P999  "p999"
#define EV_P9999 "p9999"
#define EV_MAX   "max" /* also a histogram's */
#define EV_MEAN  "mean"

/* A histogram. */
#define EV_UNIT               "unit"
#define EV_LOWEST             "lowest"
#define EV_HIGHEST            "highest"
#define EV_SIGNIFICANT_DIGITS "significant_digits"
#define EV_TOTAL              "total"
#define EV_OVERFLOW           "overflow"
#define EV_COUNTS             "counts"
#define EV_COUNTS_ENCODING    "counts_encoding"

/*
 * The figures of a latency object that never decrease, in order: min, p50,
 * p90, p95, p99, p999, p9999, max; with the percentile each stands for (0 for
 * min and max, which the histogram keeps exactly).
 */
#define EV_LATENCY_FIGURES 8
struct ev_latency_figure {
    const char *key;
    double percentile;
};
extern const struct ev_latency_figure ev_latency_order[EV_LATENCY_FIGURES];

/*
 * The head of a document: schema, tool, command, argv, started_unix_s,
 * merged_from (when not NULL), machine, placement, server. The json_t members
 * are references the builder takes over (NULL for one that could not be
 * made: the head is then NULL too).
 */
struct evidence_head {
    const char *command; /* "run", "lab", "merge" */
    json_t *argv;
    uint64_t started_unix_s;
    json_t *merged_from; /* the input files of a merge; NULL for run and lab */
    json_t *machine, *placement, *server;
};

/* j[key] as a non-negative integer into *out; -EINVAL when absent or not one. */
int evidence_get_u64(const json_t *j, const char *key, uint64_t *out);

/*
 * The transport a label names as a stack names a cell's arms, NAME.tcp or
 * NAME.unix: "tcp" or "unix" (the hop under test, which may lie behind a web
 * server the client reaches over TCP on both arms); NULL for any other label.
 * *name_len, when not NULL, gets the length of NAME.
 */
const char *evidence_label_arm(const char *label, size_t *name_len);

/* A run's hop under test: the arm its label names (evidence_label_arm), else its transport. */
const char *evidence_hop_transport(const json_t *run);

/* A figure that could not be had: {"unavailable": why}. */
#define EV_UNAVAILABLE "unavailable"

/* {"unavailable": why} as a new object, or NULL. */
json_t *evidence_unavailable_json(const char *why);

/*
 * A count the machine gave (ok: v) or could not give (why): the integer, or
 * {"unavailable": why}, never 0 for unknown. A new value, or NULL.
 */
json_t *evidence_count_json(bool ok, uint64_t v, const char *why);

/*
 * A gauge over the window, {"start", "peak", "end"}, of three counts
 * (evidence_count_json's), which it takes over. A new object, or NULL.
 */
json_t *evidence_gauge_json(json_t *start, json_t *peak, json_t *end);

/* A document's placement.pin (--pin as asked: "none", "same", "split"), or NULL. */
const char *evidence_doc_pin(const json_t *doc);

/* The head as a new object (owned by the caller), or NULL. */
json_t *evidence_head_json(const struct evidence_head *h);

/* Appends a document's verdict after its head: interrupted, then valid. 0 or -ENOMEM. */
int evidence_head_verdict(json_t *doc, bool interrupted, bool valid);

#endif
