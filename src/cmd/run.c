/*
 * run: `hopbench run PROTO ENDPOINT...`, each endpoint loaded in turn under
 * identical settings (run.c): the command line read and checked against the
 * protocol's entry in the registry, the output files checked, the built-in
 * server of --netns started, the pre-flight, then the runs, the tables, the
 * evidence and the exit code.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/options.h"
#include "cmd/session.h"
#include "host/counters.h"
#include "host/probe.h"
#include "host/service.h"
#include "outfile.h"
#include "procs.h"
#include "progress.h"
#include "registry.h"
#include "report/profile.h"
#include "run.h"
#include "util.h"

/* run's protocol options (the registry's): OPT_PROTO_FIRST + their proto_option_name index. */
enum { OPT_PROTO_FIRST = 1024 };

static const char run_usage[] =
    "usage: hopbench run PROTO ENDPOINT [ENDPOINT...] [OPTIONS]\n"
    "\n"
    "Loads each ENDPOINT in turn with identical settings and prints a row per endpoint\n"
    "with its ratio to the first. Every reply is checked: echo byte for byte, the other\n"
    "protocols' framing and status (and the body, with --expect-body).\n"
    "An ENDPOINT may be a URL: http://HOST[:PORT]/PATH is tcp://HOST:PORT with --path\n"
    "/PATH, http+unix://%2Frun%2Fx.sock/PATH the socket unix:/run/x.sock; it names its\n"
    "protocol, so PROTO may be left out ('hopbench run http://127.0.0.1:8080/').\n"
    "\n";

/* The words of run's own options that take one of a few, which their parsers check against. */
static const char *const mode_values[] = { "connect", "reuse", NULL };
static const char *const arrivals_values[] = { "constant", "poisson", NULL };
static const char *const order_values[] = { "abba", "random", NULL };
static const char *const retry_values[] = { "once", "none", NULL };

/* The help of --size and --value-size: the entries' words, made by run_options_build. */
static const char run_size_head[] = "payload per request: 64, 4KiB, 64KiB, 1MiB... (default 64);";
static char run_size_help[640];
static char run_value_size_help[160];

/* Before the registry's protocol options (run_options_build). */
static const struct cmd_option run_head[] = {
    { "connections", 'c', "N", "connections in total, spread over the threads (default 1)", 'c' },
    { "threads", 't', "N", "load threads, one epoll loop each (default 1; <= connections)", 't' },
    { "procs", 0, "N",
      "make the load in N child processes (1..64), each with its share\n"
      "of -c and -t (at least one thread each), their windows opened\n"
      "together, their results added into one run, histograms exactly\n"
      "(docs/connections.md). Default: hopbench's own process; a plan\n"
      "whose fds one process may not open (its hard RLIMIT_NOFILE) is\n"
      "refused with the --procs that would do",
      OPT_PROCS },
    { "source", 0, "LIST",
      "TCP: the source addresses connections bind, in turn\n"
      "(127.0.0.2-127.0.0.9, or A,B,...), each with the ephemeral port\n"
      "range to the endpoint. Default: the kernel's pick (127.0.0.1 to\n"
      "a loopback endpoint), or 127.0.0.1, .2, ... as many as -c needs\n"
      "when it is more than one address has ports for",
      OPT_SOURCE },
    { "duration", 'd', "S",
      "measure for S after the warm-up (default 5); S, here and below,\n"
      "is seconds (2, 0.5) or a time with its unit (500ms, 10s, 2m, 1h)",
      'd' },
    { "count", 'n', "N", "measure N ops instead (failed ops count too)", 'n' },
    { "mode", 0, "M",
      "connect: a new connection per request (batch); reuse: one\n"
      "connection for many requests (default reuse)",
      OPT_MODE },
    { "pipeline", 0, "P", "requests in flight per connection (default 1)", OPT_PIPELINE },
    { "rate", 0, "R",
      "open loop: R ops/s in all, spread over the connections, each\n"
      "on its own schedule; or N% of each endpoint's closed-loop\n"
      "maximum, measured once per endpoint before the open-loop runs:\n"
      "--reps closed-loop probes of the same settings (each as long as\n"
      "-d, at most 3 s; in the runs' order), whose median is the base.\n"
      "Latency counts from each op's intended send time (corrected for\n"
      "coordinated omission); the service time, from the actual send,\n"
      "is shown beside it. A run below 99 % of its rate is flagged\n"
      "saturated and, like a run with errors, is invalid (exit 2)",
      OPT_RATE },
    { "rate-base", 0, "B",
      "with --rate N%: take the share of B ops/s instead of probing;\n"
      "one B for every endpoint, or a comma list, one per endpoint in\n"
      "their order (repeatable: the lists are joined)",
      OPT_RATE_BASE },
    { "arrivals", 0, "A", "open loop: constant (default) or poisson gaps (seeded: --seed)",
      OPT_ARRIVALS },
    { "wait", 0, "W",
      "how a thread waits for its replies: epoll (epoll_wait, then\n"
      "recv), block (it sleeps in recv: one syscall less per op, as a\n"
      "blocking client or sockperf; either transport alike; needs\n"
      "--mode reuse, --pipeline 1, no --rate, -c equal to -t and a\n"
      "--timeout of 1 ms or more) or uring (kept connections send and\n"
      "receive through one io_uring per thread: one io_uring_enter per\n"
      "turn for all that are ready; needs --mode reuse and no --rate; where\n"
      "io_uring cannot be set up the run uses epoll and says so).\n"
      "Default: block where it applies, else epoll. serve's default\n"
      "is epoll: start it with --wait block to match",
      OPT_WAIT },
    { "close", 0, "WHO",
      "connect mode: who closes first and so holds TIME_WAIT:\n"
      "client (default), server (wait for the server's FIN; start the\n"
      "built-in server with --close-after SIZE) or rst (SO_LINGER 0:\n"
      "an RST, no TIME_WAIT)",
      OPT_CLOSE },
    { "size", 0, "BYTES", run_size_help, OPT_SIZE },
    { "warmup", 0, "S", "seconds of load before measuring; discarded (default 1, 0 = none)",
      OPT_WARMUP },
    { "timeout", 0, "S", "a connect or reply slower than this is a timeout (default 5)",
      OPT_TIMEOUT },
    { "pin", 0, "P",
      "none | same (client and server share one CPU) | split (client on\n"
      "the first half of the CPUs, server on the rest) (default none);\n"
      "start the server with the same --pin",
      OPT_PIN },
    { "json", 0, "FILE",
      "write the evidence (every run, whole histograms) to FILE (default\n"
      "hopbench-run-DATE.json here)",
      OPT_JSON },
    { "html", 0, "FILE",
      "also draw the evidence as an HTML report in FILE (as 'hopbench\n"
      "report' does)",
      OPT_HTML },
    { "jsonl", 0, "FILE",
      "also append to FILE a header line (schema, version, command line,\n"
      "machine), then one JSON line per finished run, each appended\n"
      "whole or not at all, so a crash, Ctrl-C or a full disk leaves\n"
      "only whole lines; a FILE whose last line has no end is refused",
      OPT_JSONL },
    { "csv", 0, "FILE",
      "also write one CSV row per run (cell keys and figures, for\n"
      "spreadsheets; docs/csv.md lists the columns)",
      OPT_CSV },
    { "quiet", 'q', NULL,
      "no live progress line (drawn on stderr only when it is a\n"
      "terminal: endpoint, rep k/n, seconds, ops/s and errors so\n"
      "far, the time left)",
      'q' },
    { "verbose", 'v', NULL,
      "with --reps: also the \"noisy:\" line of each run (the bottom\n"
      "line counts them)",
      'v' },
    { "allow-remote", 0, NULL, "allow a non-loopback TCP address", OPT_ALLOW_REMOTE },
    { "wait-ready", 0, "S",
      "an endpoint that refuses (or whose socket file is not there\n"
      "yet) is asked again every 50 ms for up to S seconds before\n"
      "the runs, as when the server starts beside it (a pod)",
      OPT_WAIT_READY },
    { "netns", 0, "M",
      "start the protocol's built-in server on the endpoints (a TCP\n"
      "port 0: one it picks) in a network namespace made for the run,\n"
      "removed after it; same: the client in that namespace too (its\n"
      "own loopback; a Unix socket as in a pod's shared volume);\n"
      "other: the client in a second namespace joined to the first by\n"
      "a veth pair, TCP only, each TCP endpoint's address replaced by\n"
      "the server's veth address (two pods on a node). Needs root",
      OPT_NETNS },
    { "in-netns", 0, "M",
      "the run was started inside the namespaces of a 'stack --netns M'\n"
      "(same, other): the evidence records where each end ran",
      OPT_IN_NETNS },
    CMD_TEXT("\n"
             "Repetitions (the unit of analysis is one run):\n"),
    { "reps", 0, "N",
      "runs per endpoint (default 1); the summary gives median, min-max,\n"
      "SD and n per endpoint, and each endpoint against the first: ratio\n"
      "of medians with a bootstrap 95 % interval and a Mann-Whitney p\n"
      "(\"~\" before it when not significant; n >= 4 per side can\n"
      "reach p < 0.05)",
      OPT_REPS },
    { "order", 0, "O", "abba (default: A B B A ... cancels linear drift) or random", OPT_ORDER },
    { "seed", 0, "N",
      "seed of the random order, of poisson arrivals and of the bootstrap\n"
      "(default 1; at most 2^53-1, which every JSON reader keeps exact)",
      OPT_SEED },
    { "cooldown", 0, "S", "pause between runs (default 0)", OPT_COOLDOWN },
    CMD_TEXT("\n"
             "Where the cost goes (the client's own CPU is always measured):\n"),
    { "server-pid", 0, "PID",
      "count this server process's CPU time and memory (PSS);\n"
      "repeat for several processes; each must be running. Without\n"
      "it (nor --server-cgroup, --service, --netns), the server of each\n"
      "local endpoint is found by its listening socket (sock_diag's\n"
      "inode, the process whose fds hold it: any as root, else only\n"
      "this user's) and counted with its tree, as --server-pid PID\n"
      "--server-tree would, never signalled nor moved; a line says\n"
      "which it found and how, or why none is counted (not this user's,\n"
      "several that are not one tree: docs/server-lookup.md)",
      OPT_SERVER_PID },
    { "no-server-lookup", 0, NULL, "do not look for the server by its listening socket",
      OPT_NO_SERVER_LOOKUP },
    { "server-tree", 0, NULL,
      "add the descendants of each --server-pid (a php-fpm pool),\n"
      "found again at the end, and the CPU of the children they reaped",
      OPT_SERVER_TREE },
    { "server-cgroup", 0, "DIR",
      "the server's cgroup directory: its CPU usage (v2 cpu.stat\n"
      "usage_usec, v1 cpuacct.usage), throttling and working set; alone,\n"
      "it is the server's CPU; on v1 any controller's directory will do",
      OPT_SERVER_CGROUP },
    { "sample-ms", 0, "MS",
      "count the hop's sockets by state (sock_diag) every MS during\n"
      "a run, for peaks (default 250 with --mode connect or --watch,\n"
      "else 30000; 0 = only at the window's ends)",
      OPT_SAMPLE_MS },
    { "noisy-threshold", 0, "CPUS",
      "flag a run noisy when other processes' CPU plus steal\n"
      "averaged more than CPUS over its window (default 0.1)",
      OPT_NOISY_THRESHOLD },
    { "profile", 0, NULL,
      "sample every CPU's kernel stacks in each window (needs root or\n"
      "kernel.perf_event_paranoid <= 0, else exit 77): us per request\n"
      "by side and kernel subsystem, tcp - unix decomposed, flame\n"
      "graphs in --html (docs/profile.md)",
      OPT_PROFILE },
    { "profile-hz", 0, "N",
      "--profile, sampling each CPU N times a second (10..20000;\n"
      "default 809: every 1.236 ms)",
      OPT_PROFILE_HZ },
    { "service", 0, "NAME=KIND:ARG",
      "a named service, measured apart (repeatable): pid:PID,\n"
      "tree:PID (its descendants and reaped children too),\n"
      "cgroup:DIR (its CPU usage, its processes' PSS, its working set)\n"
      "or comm:COMM (the tree of the one process named COMM whose\n"
      "parent is not, found when the run starts, waited for as long as\n"
      "--wait-ready: a pod's containers in one process namespace);\n"
      "the table shows client, each service, their sum and the system",
      OPT_SERVICE },
    { "watch", 0, "[LABEL=]ENDPOINT",
      "sample that hop's sockets too (a TCP port or a socket\n"
      "path: established, TIME_WAIT by side, accept queue, ports held)",
      OPT_WATCH },
    { "label", 0, "NAME",
      "a name for an endpoint, in the order of the endpoints (or write\n"
      "NAME=ENDPOINT); tables and evidence use it",
      OPT_LABEL },
    CMD_TEXT(
        "\n"
        "The server side from another host ('hopbench agent' beside the server; docs/agent.md):\n"),
    { "agent", 0, "ENDPOINT",
      "ask the agent there at each run's window start and end for the\n"
      "server side (CPU and memory of each --agent-service, the loaded\n"
      "hop's sockets, kernel counters, the machine): in the evidence\n"
      "under \"agent\", with the agent's host name; a refused token is\n"
      "exit 3, a request the agent refuses as bad or too large exit 76",
      OPT_AGENT },
    { "agent-token-file", 0, "FILE",
      "the shared token (its first line; only its owner may read\n"
      "it); default: the environment's HOPBENCH_AGENT_TOKEN",
      OPT_AGENT_TOKEN_FILE },
    { "agent-service", 0, "NAME=KIND:ARG",
      "a service on the agent's host, as --service there\n"
      "(repeatable, at most 8)",
      OPT_AGENT_SERVICE },
    { "agent-state", 0, "NAME",
      "before the first run, wait until the agent's schedule\n"
      "announces NAME; each run records the state at its start and end",
      OPT_AGENT_STATE },
    { "agent-wait", 0, "S", "how long to wait for --agent-state (default 600)", OPT_AGENT_WAIT },
    CMD_TEXT(
        "\n"
        "Protocols (echo checks every byte; the others check the reply's framing and status):\n"),
    CMD_END,
};

/* After them. */
static const struct cmd_option run_tail[] = {
    { "value-size", 0, "B", run_value_size_help, OPT_VALUE_SIZE },
    CMD_TEXT(
        "A non-2xx status (http, fcgi's Status:) counts as an error of kind 'status', a RESP error\n"
        "or a FastCGI protocolStatus other than REQUEST_COMPLETE as 'error_reply'. A kept\n"
        "connection the server closes (nginx's keepalive_requests, a keep-alive timeout) is\n"
        "reopened and counted under 'reconnects', not as an error; a connection a reply said it\n"
        "closes likewise. In connect mode a server that says it closes (http Connection: close,\n"
        "fcgi without KEEP_CONN) is waited for, so it holds TIME_WAIT, unless --close is given.\n"),
    { "retry", 0, "R",
      "once (default): the requests a kept connection left unanswered\n"
      "when the server closed it (EOF, reset) are sent again, once,\n"
      "on a new connection: 'retried' in the table, not errors; none:\n"
      "each such close fails its op (short or reset), as wrk counts it",
      OPT_RETRY },
    CMD_TEXT(
        "An AF_UNIX connect that finds the listener's backlog full (EAGAIN) waits, as a blocking\n"
        "connect would and as TCP retransmits its SYN: it is tried again every 1 ms, the op stays\n"
        "in its connect phase (the wait is in its latency), the retries are counted apart\n"
        "('connect retries'), and it fails, as a timeout, only --timeout after its first attempt.\n"),
    { "help", 'h', NULL, "this text", 'h' },
    CMD_END,
};

/*
 * run's table: its own options with the registry's protocol options put in,
 * built once before main (run_options_build), so that cmd_run's table is the
 * constant the other commands' are.
 */
static struct cmd_option run_options[CMD_MAX_OPTIONS + 1];

/* The words its options take: its own, then the registry's protocol options' (run_options_build).
 */
#define RUN_VALUES_MAX 32
static struct cmd_value run_values[RUN_VALUES_MAX + 1] = {
    { OPT_MODE, mode_values },          { OPT_ARRIVALS, arrivals_values },
    { OPT_WAIT, cmd_wait_run_values },  { OPT_CLOSE, cmd_close_values },
    { OPT_PIN, cmd_pin_values },        { OPT_NETNS, cmd_netns_values },
    { OPT_IN_NETNS, cmd_netns_values }, { OPT_ORDER, order_values },
    { OPT_RETRY, retry_values },
};
/* The protocol options' words, each list NULL-terminated, that run_values point into. */
static const char *run_words[64];

__attribute__((constructor)) static void run_options_build(void)
{
    const struct proto_option *po;
    size_t nwords = 0;
    size_t n = 0, nv = 0, len = sizeof(run_size_head) - 1;
    char names[96];

    while (run_values[nv].words != NULL)
        nv++;
    memcpy(run_size_help, run_size_head, len);
    proto_help(PROTO_HELP_RUN_SIZE, run_size_help + len, sizeof(run_size_help) - len,
               (unsigned)(cmd_run.column + len), cmd_run.column);
    snprintf(run_value_size_help, sizeof(run_value_size_help),
             "%s: the SET value (the same as --size)",
             proto_help(PROTO_HELP_VALUE_SIZE, names, sizeof(names), 0, 0));
    for (size_t i = 0; run_head[i].name != NULL || run_head[i].help != NULL; i++)
        run_options[n++] = run_head[i];
    for (size_t i = 0; (po = proto_option_at(i)) != NULL && n < CMD_MAX_OPTIONS - 8; i++) {
        size_t nw = 0;

        run_options[n++] = (struct cmd_option){ po->name + 2, 0, po->arg, proto_option_help(i),
                                                OPT_PROTO_FIRST + (int)i };
        if (nv < RUN_VALUES_MAX && nwords < ARRAY_LEN(run_words))
            nw = proto_option_values(i, run_words + nwords, ARRAY_LEN(run_words) - nwords - 1);
        if (nw > 0) {
            run_values[nv++] = (struct cmd_value){ OPT_PROTO_FIRST + (int)i, run_words + nwords };
            nwords += nw + 1; /* and its NULL */
        }
    }
    for (size_t i = 0;
         n < CMD_MAX_OPTIONS && (run_tail[i].name != NULL || run_tail[i].help != NULL); i++)
        run_options[n++] = run_tail[i];
    run_options[n] = (struct cmd_option)CMD_END;
}

/*
 * --rate-base B[,B...]: each B in ops/s, appended to o->rate_bases (the
 * option may be repeated); the count is checked against the endpoints later.
 */
static int opt_rate_base(const char *val, struct run_opts *o, struct hb_err *err)
{
    const char *p = val;

    for (;;) {
        char *end = NULL;
        double v;

        errno = 0;
        v = strtod(p, &end);
        if (end == p || errno != 0 || !(v >= 0.001) || v > 1e9 || (*end != ',' && *end != '\0'))
            return hb_fail(err, -EINVAL,
                           "--rate-base: '%s' is not a list of rates in ops/s, one per endpoint "
                           "(e.g. 11317 or 11317,9348)",
                           val);
        if (o->nrate_bases == CLI_MAX_ENDPOINTS)
            return hb_fail(err, -EINVAL, "--rate-base: more than %d bases", CLI_MAX_ENDPOINTS);
        o->rate_bases[o->nrate_bases++] = v;
        if (*end == '\0') return 0;
        p = end + 1;
    }
}

/*
 * Options that shape the protocol's requests: the registry's, kept as given
 * until the protocol is known (run_proto_parse), and the payload and the
 * open loop.
 */
static int run_proto_option(int c, const char *val, struct run_opts *o, struct hb_err *err)
{
    unsigned k = 0;
    int rc = 0;

    if (c >= OPT_PROTO_FIRST && proto_option_name((size_t)(c - OPT_PROTO_FIRST)) != NULL) {
        if (o->ngiven == ARRAY_LEN(o->given))
            return hb_fail(err, -EINVAL, "run: more than %zu protocol options",
                           ARRAY_LEN(o->given));
        o->given[o->ngiven++] = (struct proto_given){ (unsigned)(c - OPT_PROTO_FIRST), val };
        return 0;
    }
    switch (c) {
    case OPT_VALUE_SIZE:
        o->size_given = true;
        rc = opt_size("--value-size", val, &o->load.size, err);
        break;
    case OPT_RATE:
        rc = opt_rate(val, &o->load.rate, &o->rate_share, err);
        break;
    case OPT_RATE_BASE:
        rc = opt_rate_base(val, o, err);
        break;
    case OPT_ARRIVALS:
        rc = opt_choice("--arrivals", val, arrivals_values, &k, err);
        o->load.poisson = k == 1;
        o->arrivals_given = true;
        break;
    default:
        rc = -EINVAL;
    }
    return rc;
}

static void run_defaults(struct run_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->shared.conns = 1;
    o->shared.threads = 1;
    o->shared.warmup_ns = 1 * NS_PER_S;
    o->shared.timeout_ns = 5 * NS_PER_S;
    o->shared.pin = PLACE_NONE;
    o->shared.reps = 1;
    o->shared.seed = 1;
    o->load.pipeline = 1;
    o->load.size = 64;
    o->load.mode = LOAD_REUSE;
}

/* The load's share of the shared options, into o->load where each run starts from. */
static void run_load_from_shared(struct run_opts *o)
{
    const struct shared_opts *sh = &o->shared;

    o->load.conns = sh->conns;
    o->load.threads = sh->threads;
    o->load.duration_ns = sh->duration_ns;
    o->load.warmup_ns = sh->warmup_ns;
    o->load.timeout_ns = sh->timeout_ns;
    o->load.close = sh->close;
    o->load.block_wait = sh->block_wait;
    o->load.uring_wait = sh->uring_wait;
    o->load.seed = sh->seed;
    o->close_given = sh->close_given;
}

/* The order of the repetitions. */
static int run_plan_option(int c, const char *val, struct run_opts *o, struct hb_err *err)
{
    unsigned k = 0;
    int rc = 0;

    switch (c) {
    case OPT_ORDER:
        rc = opt_choice("--order", val, order_values, &k, err);
        o->order_random = k == 1;
        break;
    default:
        rc = run_proto_option(c, val, o, err);
    }
    return rc;
}

/* --agent and its companions; the token is read once the options are all in (run_agent_check). */
static int run_agent_option(int c, const char *val, struct run_opts *o, struct hb_err *err)
{
    struct agent_client *a = &o->agent;

    switch (c) {
    case OPT_AGENT:
        o->agent_given = true;
        return endpoint_parse(&a->ep, val, err) < 0 ? -EINVAL : 0;
    case OPT_AGENT_TOKEN_FILE:
        o->agent_token_file = val;
        return 0;
    case OPT_AGENT_SERVICE:
        if (a->nservices == AGENT_ARGS_MAX)
            return hb_fail(err, -EINVAL, "--agent-service: at most %d", AGENT_ARGS_MAX);
        if (strlen(val) >= AGENT_ARG_MAX)
            return hb_fail(err, -EINVAL, "--agent-service: longer than %d bytes",
                           AGENT_ARG_MAX - 1);
        snprintf(a->services[a->nservices++], AGENT_ARG_MAX, "%s", val);
        return 0;
    case OPT_AGENT_STATE:
        if (!agent_name_valid(val))
            return hb_fail(err, -EINVAL, "--agent-state: '%.64s' is not a state name", val);
        snprintf(a->state, sizeof(a->state), "%s", val);
        return 0;
    case OPT_AGENT_WAIT:
        return opt_seconds("--agent-wait", val, false, &a->wait_ns, err);
    }
    return hb_fail(err, -EINVAL, "run: unhandled option");
}

/* The --agent options together, and the token. */
static int run_agent_check(struct run_opts *o, struct hb_err *err)
{
    struct agent_client *a = &o->agent;

    if (!o->agent_given) {
        if (o->agent_token_file != NULL || a->nservices > 0 || a->state[0] != '\0' ||
            a->wait_ns != 0)
            return hb_fail(err, -EINVAL, "run: the --agent-* options need --agent ENDPOINT");
        return 0;
    }
    if (a->wait_ns == 0) a->wait_ns = 600 * NS_PER_S;
    a->timeout_ns = o->load.timeout_ns;
    return opt_agent_target("run", &a->ep, o->agent_token_file, &a->token, err);
}

/* Where the cost goes: the server's processes, named services, watched hops, labels. */
static int run_observe_option(int c, const char *val, struct run_opts *o, struct hb_err *err)
{
    uint64_t v = 0;
    int rc = 0;

    switch (c) {
    case OPT_SERVER_PID:
        if (o->nserver_pids == ARRAY_LEN(o->server_pids))
            return hb_fail(err, -EINVAL, "--server-pid: at most %zu", ARRAY_LEN(o->server_pids));
        rc = opt_uint("--server-pid", val, 1, 1u << 22, &v, err);
        o->server_pids[o->nserver_pids++] = (pid_t)v;
        break;
    case OPT_SERVER_TREE:
        o->server_tree = true;
        break;
    case OPT_NO_SERVER_LOOKUP:
        o->no_server_lookup = true;
        break;
    case OPT_SERVER_CGROUP:
        o->server_cgroup = val;
        break;
    case OPT_SERVICE:
        rc = service_add(&o->services, val, err);
        break;
    case OPT_WATCH:
        rc = service_watch_add(&o->services, val, err);
        break;
    case OPT_LABEL:
        if (o->nlabels == CLI_MAX_ENDPOINTS)
            return hb_fail(err, -EINVAL, "--label: at most %d", CLI_MAX_ENDPOINTS);
        o->labels[o->nlabels++] = val;
        break;
    default:
        rc = run_plan_option(c, val, o, err);
    }
    return rc;
}

static int run_option(int c, const char *val, void *opts, struct hb_err *err)
{
    struct run_opts *o = opts;
    struct load_cfg *l = &o->load;
    uint64_t v = 0;
    unsigned k = 0;
    int rc = shared_option(c, val, &o->shared, err);

    if (rc != SHARED_NOT_MINE) return rc;
    rc = 0;
    switch (c) {
    case 'n':
        rc = opt_uint("--count", val, 1, UINT64_MAX / 2, &l->count, err);
        break;
    case OPT_MODE:
        rc = opt_choice("--mode", val, mode_values, &k, err);
        l->mode = k == 0 ? LOAD_CONNECT : LOAD_REUSE;
        break;
    case OPT_PIPELINE:
        rc = opt_uint("--pipeline", val, 1, 1024, &v, err);
        l->pipeline = (unsigned)v;
        break;
    case OPT_NETNS:
        rc = opt_netns("--netns", val, &o->netns, err);
        break;
    case OPT_PROCS:
        rc = opt_uint("--procs", val, 1, PROCS_MAX, &v, err);
        o->procs = (unsigned)v;
        o->procs_given = true;
        break;
    case OPT_SOURCE:
        if (endpoint_sources_parse(&o->sources, val, err) < 0) {
            char msg[sizeof(err->msg)];
            memcpy(msg, err->msg, sizeof(msg));
            rc = hb_fail(err, -EINVAL, "--source: %s", msg);
        }
        break;
    case OPT_IN_NETNS:
        rc = opt_netns("--in-netns", val, &o->in_netns, err);
        break;
    case OPT_SIZE:
        o->size_given = true;
        rc = opt_size("--size", val, &l->size, err);
        break;
    case OPT_WAIT_READY:
        rc = opt_seconds("--wait-ready", val, true, &o->wait_ready_ns, err);
        break;
    case OPT_ALLOW_REMOTE:
        o->allow_remote = true;
        break;
    case OPT_AGENT:
    case OPT_AGENT_TOKEN_FILE:
    case OPT_AGENT_SERVICE:
    case OPT_AGENT_STATE:
    case OPT_AGENT_WAIT:
        rc = run_agent_option(c, val, o, err);
        break;
    case OPT_RETRY:
        rc = opt_choice("--retry", val, retry_values, &k, err);
        l->retry = k == 1 ? RETRY_NONE : RETRY_ONCE;
        break;
    default:
        rc = run_observe_option(c, val, o, err);
    }
    return rc;
}

/* The protocol a URL's scheme names ("http" of http:// and http+unix://; LABEL= before it), or
 * NULL. */
static const struct proto_entry *url_proto(const char *url)
{
    const char *eq = strchr(url, '=');
    char scheme[16];
    size_t n;

    if (eq != NULL && memchr(url, ':', (size_t)(eq - url)) == NULL) url = eq + 1;
    n = strcspn(url, "+:");
    if (strstr(url, "://") == NULL || n >= sizeof(scheme)) return NULL;
    memcpy(scheme, url, n);
    scheme[n] = '\0';
    return proto_find(scheme);
}

/*
 * The /PATH of the URLs among the words after the options (argv[from..]) is
 * --path's, as if given before them: one path for every endpoint, the same
 * as --path's if given. A word that is no URL is left to run_positionals.
 */
static int run_url_paths(int argc, char **argv, int from, struct run_opts *o, struct hb_err *err)
{
    const char *given = NULL;
    size_t i = 0;

    while (proto_option_name(i) != NULL && strcmp(proto_option_name(i), "--path") != 0)
        i++;
    for (size_t k = 0; k < o->ngiven; k++)
        if (o->given[k].opt == i) given = o->given[k].val;
    for (int w = from; w < argc; w++) {
        char label[ENDPOINT_LABEL_MAX];
        const char *text = NULL, *path = NULL;
        struct endpoint ep;
        struct hb_err scratch;

        if (service_label_split(argv[w], label, sizeof(label), &text, &scratch) < 0 ||
            endpoint_parse_url(&ep, text, &path, &scratch) < 0 || path == NULL || path[0] == '\0')
            continue;
        if (given != NULL && strcmp(given, path) != 0)
            return hb_fail(err, -EINVAL,
                           "run: %s asks for %s, and --path or another URL for %s: one path is "
                           "for every endpoint",
                           text, path, given);
        if (given == NULL && run_proto_option(OPT_PROTO_FIRST + (int)i, path, o, err) < 0)
            return -EINVAL;
        given = path;
    }
    return 0;
}

/*
 * The protocol options given, each parsed by the protocol's own hook into its
 * options (o->codec), in their order: PROTO is the first word left once the
 * options are read (an unknown one is said later, run_positionals).
 */
static int run_proto_parse(int argc, char **argv, struct run_opts *o, struct hb_err *err)
{
    const struct proto_entry *pe = optind < argc ? proto_find(argv[optind]) : NULL;
    int from = optind;
    struct proto_args args = {
        .params = o->params,
        .params_cap = ARRAY_LEN(o->params),
        .body = o->expect_body,
        .body_cap = sizeof(o->expect_body),
        .secret = o->password,
        .secret_cap = sizeof(o->password),
        .key = o->server_key,
        .key_cap = sizeof(o->server_key),
    };

    if (pe != NULL)
        from++;
    else if (optind < argc) /* "hopbench run http://127.0.0.1:8080/": the URL names it */
        pe = url_proto(argv[optind]);
    if (run_url_paths(argc, argv, from, o, err) < 0) return -EINVAL;
    return proto_parse(pe, o->given, o->ngiven, &args, &o->codec, err) < 0 ? -EINVAL : 0;
}

/*
 * Options that only some protocols take, and what the protocol makes of --size
 * (the registry's entry says both).
 */
static int run_check_proto(struct run_opts *o, struct hb_err *err)
{
    struct proto_req req = {
        .opts = &o->codec,
        .size = &o->load.size,
        .size_given = o->size_given,
        .connect = o->load.mode == LOAD_CONNECT,
        .pipeline = o->load.pipeline,
    };

    if (proto_check_run(o->proto, o->given, o->ngiven, &req, err) < 0) return -EINVAL;
    o->load.close_auto = !o->close_given;
    o->load.opts = &o->codec;
    return 0;
}

/* --server-tree needs a --server-pid, and each --server-pid must be a running process now. */
static int run_check_servers(const struct run_opts *o, struct hb_err *err)
{
    if (o->server_tree && o->nserver_pids == 0)
        return hb_fail(err, -EINVAL, "run: --server-tree needs a --server-pid");
    for (unsigned i = 0; i < o->nserver_pids; i++) {
        struct proc_stat st;
        int pid = (int)o->server_pids[i], rc = proc_stat_read(o->server_pids[i], &st);

        if (rc == -ESRCH) return hb_fail(err, rc, "run: --server-pid %d: no such process", pid);
        if (rc < 0)
            return hb_fail(err, rc, "run: --server-pid %d: /proc/%d/stat: %s", pid, pid,
                           strerror(-rc));
        if (proc_state_exited(st.state))
            return hb_fail(err, -ESRCH, "run: --server-pid %d: has exited (a zombie)", pid);
    }
    return 0;
}

/* An endpoint given as a URL (endpoint_parse_url): its scheme must name the run's protocol. */
static int run_url(const struct run_opts *o, const char *url, struct hb_err *err)
{
    if (url_proto(url) != o->proto)
        return hb_fail(err, -EINVAL,
                       "run %s: %s is a URL of another protocol; give the address as "
                       "tcp://HOST:PORT or unix:PATH",
                       o->proto->name, url);
    return 0;
}

/* An ENDPOINT or LABEL=ENDPOINT word of run. */
static int run_add_endpoint(struct run_opts *o, const char *arg, struct hb_err *err)
{
    char label[ENDPOINT_LABEL_MAX];
    const char *text, *path = NULL;

    if (service_label_split(arg, label, sizeof(label), &text, err) < 0) return -EINVAL;
    if (o->neps == CLI_MAX_ENDPOINTS)
        return hb_fail(err, -EINVAL, "too many endpoints (at most %d)", CLI_MAX_ENDPOINTS);
    if (endpoint_parse_url(&o->eps[o->neps], text, &path, err) < 0) return -EINVAL;
    if (path != NULL && run_url(o, text, err) < 0) return -EINVAL;
    snprintf(o->eps[o->neps++].label, sizeof(o->eps[0].label), "%s", label);
    return 0;
}

/*
 * --netns: run starts the protocol's built-in server in the namespace made
 * for it, so the protocol needs one; with other the client is in B, which
 * reaches A only over the veth pair: TCP, no socket file or abstract name.
 */
static int run_check_netns(const struct run_opts *o, struct hb_err *err)
{
    if (o->proto->server == NULL)
        return hb_fail(err, -EINVAL,
                       "run: --netns starts the built-in server, and %s has none; measure a real "
                       "one with hopbench stack --netns",
                       o->proto->name);
    for (unsigned i = 0; i < o->neps && o->netns == NETNS_OTHER; i++)
        if (o->eps[i].kind != ENDPOINT_TCP)
            return hb_fail(err, -EINVAL,
                           "run: --netns other is TCP only (the client in B reaches the server in "
                           "A over the veth pair): %s; use --netns same for a Unix socket",
                           o->eps[i].text);
    return 0;
}

static int run_positionals(int argc, char **argv, struct run_opts *o, struct hb_err *err)
{
    char near[160];

    if (optind >= argc)
        return hb_fail(err, -EINVAL, "run: missing PROTO (%s) and ENDPOINT", proto_names());
    o->proto = proto_find(argv[optind]);
    /* "hopbench run http://127.0.0.1:8080/": the URL names its protocol */
    if (o->proto == NULL && (o->proto = url_proto(argv[optind])) != NULL) optind--;
    if (o->proto == NULL)
        return hb_fail(err, -EINVAL, "run: unknown protocol '%s' (known: %s)%s", argv[optind],
                       proto_names(), cmd_suggest_proto(argv[optind], false, near, sizeof(near)));
    optind++;
    if (optind >= argc)
        return hb_fail(err, -EINVAL, "run: missing ENDPOINT (e.g. tcp://127.0.0.1:9000)");
    for (; optind < argc; optind++)
        if (run_add_endpoint(o, argv[optind], err) < 0) return -EINVAL;
    if (service_labels_apply(o->eps, o->neps, o->labels, o->nlabels, err) < 0) return -EINVAL;
    if (o->netns != NETNS_NONE && o->in_netns != NETNS_NONE)
        return hb_fail(err, -EINVAL, "run: give --netns or --in-netns, not both");
    if (o->netns != NETNS_NONE && run_check_netns(o, err) < 0) return -EINVAL;
    for (unsigned i = 0; i < o->neps && o->netns == NETNS_NONE; i++)
        if (o->eps[i].kind == ENDPOINT_TCP && endpoint_port(&o->eps[i]) == 0)
            return hb_fail(err, -EINVAL, "run: %s: port 0 cannot be connected to", o->eps[i].text);
    if (run_check_proto(o, err) < 0 || run_check_servers(o, err) < 0) return -EINVAL;
    return opt_check_remote(o->eps, o->neps, o->allow_remote, err);
}

/* --source against the endpoints, and --procs against the rest of the plan. */
static int run_check_procs(const struct run_opts *o, struct hb_err *err)
{
    const struct endpoint_sources *src = &o->sources;
    unsigned tcp = 0;

    for (unsigned i = 0; i < o->neps && src->n > 0; i++) {
        const struct endpoint *ep = &o->eps[i];
        if (ep->kind != ENDPOINT_TCP) continue;
        tcp++;
        for (unsigned k = 0; k < src->n; k++)
            if (src->addr[k].ss_family != ep->addr.ss_family)
                return hb_fail(err, -EINVAL,
                               "run: --source: %s takes source addresses of its own family "
                               "(IPv%d)",
                               ep->text, ep->addr.ss_family == AF_INET6 ? 6 : 4);
    }
    if (src->n > 0 && tcp == 0)
        return hb_fail(err, -EINVAL, "run: --source is for TCP endpoints; none is TCP");
    if (src->n > 0 && !o->allow_remote && !endpoint_sources_local(src))
        return hb_fail(err, -EINVAL,
                       "run: --source: an address that is not a loopback one needs "
                       "--allow-remote");
    if (!o->procs_given) return 0;
    if (o->netns != NETNS_NONE)
        return hb_fail(err, -EINVAL,
                       "run: give --procs or --netns, not both (the load processes' exits "
                       "would be taken for the server's)");
    if (o->load.count && o->load.count < o->procs)
        return hb_fail(err, -EINVAL, "run: --count %llu is less than --procs %u",
                       (unsigned long long)o->load.count, o->procs);
    if (o->rate_share > 0 && o->nrate_bases == 0)
        return hb_fail(err, -EINVAL,
                       "run: --procs with --rate N%% needs --rate-base (the closed-loop probes "
                       "would run in one process)");
    return 0;
}

/*
 * Without --wait, a run whose threads each have one kept connection and one
 * request at a time, closed loop (-c equal to -t, --mode reuse, no --pipeline,
 * no --rate), waits as --wait block does, as the lab's reuse cells: one
 * blocking recv() per reply instead of epoll_wait() and recv(), on every
 * endpoint of the run alike (bench/RESULTS.md: the HTTP client's CPU against
 * wrk at -c 1). Anything else polls.
 */
static void run_wait_default(struct run_opts *o)
{
    if (o->shared.wait_given || o->load.mode != LOAD_REUSE || o->load.pipeline > 1 ||
        o->load.rate > 0 || o->rate_share > 0 || o->load.conns != o->load.threads ||
        o->load.timeout_ns < NS_PER_MS) /* the engine polls under a 1-ms --timeout */
        return;
    o->load.block_wait = true;
    o->wait_auto = true;
}

int cli_parse_run(int argc, char **argv, struct run_opts *o, FILE *out, struct hb_err *err)
{
    int rc;

    run_defaults(o);
    rc = cmd_getopt(&cmd_run, argc, argv, run_option, o, out, err);
    if (rc == 0) rc = run_proto_parse(argc, argv, o, err);
    if (rc != 0) return rc;
    run_load_from_shared(o);
    if (o->procs_given && o->procs > o->load.conns)
        return hb_fail(err, -EINVAL, "run: --procs %u is more than --connections %u", o->procs,
                       o->load.conns);
    /* each load process has a thread at least */
    if (o->procs_given && o->load.threads < o->procs) o->load.threads = o->procs;
    if (o->load.duration_ns && o->load.count)
        return hb_fail(err, -EINVAL, "run: give --duration or --count, not both");
    if (!o->load.duration_ns && !o->load.count) o->load.duration_ns = 5 * NS_PER_S;
    if (o->load.threads > o->load.conns)
        return hb_fail(err, -EINVAL, "run: --threads %u is more than --connections %u",
                       o->load.threads, o->load.conns);
    if ((o->load.rate > 0 || o->rate_share > 0) && o->load.pipeline > 1)
        return hb_fail(err, -EINVAL, "run: --rate sends one request at a time; drop --pipeline");
    if (o->arrivals_given && o->load.rate == 0 && o->rate_share == 0)
        return hb_fail(err, -EINVAL, "run: --arrivals needs --rate");
    /* --wait block changes how one kept connection per thread waits; anything else would
     * silently measure the epoll path under the name of the blocking one. */
    if (o->load.block_wait &&
        (o->load.mode != LOAD_REUSE || o->load.pipeline > 1 || o->load.rate > 0 ||
         o->rate_share > 0 || o->load.conns != o->load.threads))
        return hb_fail(err, -EINVAL,
                       "run: --wait block is for one kept connection per thread: --mode reuse, "
                       "--pipeline 1, no --rate, -c equal to -t");
    /* --wait uring keeps connections in a closed loop; elsewhere it would be epoll's figure. */
    if (o->load.uring_wait && (o->load.mode != LOAD_REUSE || o->load.rate > 0 || o->rate_share > 0))
        return hb_fail(err, -EINVAL,
                       "run: --wait uring is for kept connections in a closed loop: --mode "
                       "reuse, no --rate");
    run_wait_default(o);
    if (o->nrate_bases > 0 && o->rate_share == 0)
        return hb_fail(err, -EINVAL, "run: --rate-base needs --rate N%% (the share is of it)");
    /* Each probe of the closed-loop maximum for --rate N%: as long as the run, at most 3 s. */
    o->calibrate_ns = o->load.duration_ns && o->load.duration_ns < 3 * NS_PER_S
                          ? o->load.duration_ns
                          : 3 * NS_PER_S;
    if (run_positionals(argc, argv, o, err) < 0 || run_agent_check(o, err) < 0 ||
        run_check_procs(o, err) < 0)
        return -EINVAL;
    if (o->nrate_bases > 1 && o->nrate_bases != o->neps)
        return hb_fail(err, -EINVAL,
                       "run: --rate-base gives %u bases for %u endpoints: give one for all, or "
                       "one per endpoint",
                       o->nrate_bases, o->neps);
    return 0;
}

/* What `hopbench run` was asked: cli_parse_run fills it. */
static struct run_opts run_opts;

static int run_parse(int argc, char **argv, FILE *out, struct hb_err *err)
{
    return cli_parse_run(argc, argv, &run_opts, out, err);
}

/*
 * After the runs: the tables, the evidence (its summary over repetitions
 * included) and the exit code, from run_rc (the runs' own) on.
 */
static int run_finish(const struct cmd_env *env, struct run *run, const char *json_path,
                      const char *csv_path, struct report_meta *meta, int run_rc)
{
    int rc;

    run_report(run, stdout);
    meta->profile = profile_summary_records(stdout, run->recs, run->nrecs, run->opts->shared.seed);
    meta->bottom = run_bottom(run, stdout);
    /* not stdout failing now: the runs are done */
    meta->interrupted = atomic_load(env->stop) || cmd_wait_failed(run->recs, run->nrecs);
    meta->summary = run_summary_json(run);
    rc = cmd_write_evidence(env, "run", json_path, csv_path, meta, run->recs, run->nrecs);
    if (rc == HB_EXIT_OK) rc = cmd_write_html("run", run->opts->shared.html_path, json_path);
    json_decref(meta->summary);
    meta->summary = NULL;
    json_decref(meta->bottom);
    meta->bottom = NULL;
    json_decref(meta->profile);
    meta->profile = NULL;
    if (rc != HB_EXIT_OK && run_rc == HB_EXIT_OK) run_rc = rc;
    rc = run_rc != HB_EXIT_OK ? run_rc : cmd_verdict(run->recs, run->nrecs, atomic_load(env->stop));
    if (rc == HB_EXIT_OK && cmd_stdout_failed()) rc = HB_EXIT_RUNTIME;
    return rc;
}

/* Runs the plan (run_all); what went wrong is said at once, before the tables. */
static int run_plan(const struct cmd_env *env, struct run *run, struct outfile *jsonl)
{
    struct hb_err err = { 0 };
    char msg[TEXT_SAFE_CAP];
    int rc = HB_EXIT_RUNTIME;

    if (run_all(run, jsonl, stdout, env->stop, &err) == 0) return HB_EXIT_OK;
    if (err.code != 0) rc = cmd_fail("run", &err, cmd_failure_exit(err.code));
    if (run->jsonl_err.code != 0)
        fprintf(stderr, "hopbench run: --jsonl: %s\n",
                text_safe(msg, sizeof(msg), run->jsonl_err.msg));
    return rc;
}

/*
 * --netns: the namespaces and the built-in server, made with the stop signals
 * held (one that comes meanwhile is the first interrupt once they are let
 * through); the server's exit on its own ends the current run (on_child).
 */
static int run_start_server(const struct cmd_env *env, struct run *run, struct run_opts *o,
                            struct hb_err *err)
{
    sigset_t held, old;
    int rc;

    if (o->netns == NETNS_NONE) return run_serve(run, o, NULL, err); /* --in-netns, or nothing */
    env->signals(CMD_SIG_STOP | CMD_SIG_CHILD);
    stop_signal_set(&held);
    pthread_sigmask(SIG_BLOCK, &held, &old);
    rc = run_serve(run, o, env->server, err);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* --netns: where the server and the client run, and the server's pid. */
static void run_netns_header(const struct run *run)
{
    char tail[48];

    snprintf(tail, sizeof(tail), "; server pid %ld", (long)run->server_pid);
    netns_describe(&run->netns,
                   &(struct netns_words){ .same = "built-in server and client in one network "
                                                  "namespace made for the run (its own loopback)",
                                          .in_a = "built-in server",
                                          .in_b = "client in",
                                          .after_b = ", joined by a veth pair",
                                          .tail = tail },
                   stdout);
}

/*
 * --wait uring where the placement line said uring (its probe set a ring up):
 * one line for the runs some of whose load threads could not set theirs up and
 * waited with epoll (as each run's wait in the evidence says), and why; one for
 * the runs some of whose threads' rings had no multishot receive into provided
 * buffers and armed a receive per reply (the evidence's uring_receive).
 */
static void run_ring_note(const struct run *run)
{
    unsigned fell = 0;
    int why = 0;

    for (size_t i = 0; i < run->nrecs; i++) {
        const struct run_record *r = &run->recs[i];
        if (!r->cfg.uring_wait || r->res.ring_err == 0) continue; /* each thread's ring was up */
        fell++;
        if (why == 0) why = r->res.ring_err;
    }
    if (fell > 0)
        fprintf(stderr,
                "hopbench run: --wait uring: %u of %zu runs waited with epoll, not as the "
                "placement line says (a load thread could not set up io_uring: %s)\n",
                fell, run->nrecs, strerror(why));
    fell = 0;
    for (size_t i = 0; i < run->nrecs; i++) {
        const struct load_result *res = &run->recs[i].res;
        if (run->recs[i].cfg.uring_wait && res->ring_threads > res->ring_ms_threads) fell++;
    }
    if (fell > 0)
        fprintf(stderr,
                "hopbench run: --wait uring: %u of %zu runs armed a receive per reply (no "
                "multishot receive into provided buffers here)\n",
                fell, run->nrecs);
}

/* After the checks: the runs, the tables and the evidence. */
static int run_measure(const struct cmd_env *env, struct run *run, struct run_opts *o,
                       const char *json_path, const char *server)
{
    static struct progress progress;
    struct hb_err err = { 0 };
    struct machine m;
    struct outfile jsonl_out, *jsonl;
    bool failed;
    const char *unseen = "no --server-pid";
    char wait[160];
    int rc, run_rc, ring = -1;

    env->signals(CMD_SIG_STOP);
    /* Where the server really runs, when it is named; else what --pin expects (not observed). */
    if (run_place_server(run, &err) < 0) {
        char msg[TEXT_SAFE_CAP];
        fprintf(stderr, "hopbench run: the server's CPUs were not observed: %s\n",
                text_safe(msg, sizeof(msg), err.msg));
        unseen = "its threads could not be read";
    }
    probe_machine(&m);
    struct report_meta meta = { .command = "run",
                                .argc = env->argc,
                                .argv = env->argv,
                                .place = &run->place,
                                .machine = &m,
                                .started_unix_s = env->started_unix_s,
                                .server = server,
                                .plan = cmd_plan_json(o->shared.reps, o->order_random,
                                                      o->shared.seed, o->shared.cooldown_ns) };
    jsonl = cmd_open_jsonl("run", o->shared.jsonl_path, &meta, &jsonl_out, &failed);
    if (failed) {
        json_decref(meta.plan);
        return HB_EXIT_RUNTIME;
    }
    if (o->load.uring_wait) {
        ring = load_ring_probe();
        snprintf(wait, sizeof(wait), ring == 0 ? "uring" : "epoll (io_uring cannot be set up: %s)",
                 strerror(-ring));
    }
    cmd_print_placement(&run->place,
                        o->load.uring_wait   ? wait
                        : o->wait_auto       ? "block (the default with one kept connection per "
                                               "thread, closed loop)"
                        : o->load.block_wait ? "block"
                                             : "epoll",
                        unseen);
    run_netns_header(run);
    report_sysctls(stdout, &m);
    /* Without a terminal (or with --quiet) there is no line and no thread. */
    progress_start(&progress, STDERR_FILENO, !o->shared.quiet, run_planned_runs(o),
                   run_planned_ns(o));
    run->progress = &progress;
    run_rc = run_plan(env, run, jsonl);
    progress_stop(&progress);
    run->progress = NULL;
    if (ring == 0) run_ring_note(run);
    if (jsonl != NULL && cmd_close_jsonl("run", &jsonl_out) != HB_EXIT_OK && run_rc == HB_EXIT_OK)
        run_rc = HB_EXIT_RUNTIME;
    /* Its own server's exit, unless a stop signal took it: said once, exit 1. */
    if (run_serve_check(run, &err) < 0 && atomic_load(env->stop) != STOP_INTERRUPT) {
        cmd_fail("run", &err, HB_EXIT_RUNTIME);
        atomic_store(env->stop, STOP_SERVER_EXIT);
        run_rc = HB_EXIT_RUNTIME;
    }
    rc = run_finish(env, run, json_path, o->shared.csv_path, &meta, run_rc);
    json_decref(meta.plan);
    return rc;
}

/*
 * Before the budget check: the source addresses the plan needs (run_plan_auto)
 * and the machine's limits for its connections (run_limits_check), read into
 * *l. A plan refused gets one line and HB_EXIT_LIMITS, nothing on stdout.
 */
static int run_limits(struct run_opts *o, struct budget_limits *l, uint64_t *nopen)
{
    struct hb_err err = { 0 };
    int open = budget_fds_open();

    *nopen = open > 0 ? (uint64_t)open : 3;
    budget_limits_read("/proc/meminfo", l);
    if (run_plan_auto(o, l, *nopen, &err) < 0 || run_limits_check(o, l, *nopen, &err) < 0)
        return cmd_fail("run", &err, HB_EXIT_LIMITS);
    return HB_EXIT_OK;
}

/* Once the plan may run: its limits lines, with many connections, --procs or --source. */
static void run_limits_show(const struct run_opts *o, const struct budget_limits *l, uint64_t nopen)
{
    if (o->procs == 0 && o->sources.n == 0 && o->load.conns < RUN_MANY_CONNS) return;
    run_limits_print(o, l, nopen, stdout);
    fflush(stdout);
}

static int run_exec(const struct cmd_env *env)
{
    struct run_opts *o = &run_opts;
    static struct run run;
    struct hb_err err = { 0 };
    const char *json_path;
    char path[64], server[1024] = "";
    struct budget_limits limits;
    uint64_t nopen = 3;
    int rc;

    if (run_init(&run, o, &err) < 0) return cmd_fail("run", &err, HB_EXIT_USAGE);
    json_path = cmd_evidence_path("run", o->shared.json_path, path, sizeof(path));
    rc = cmd_check_outputs("run", json_path, o->shared.csv_path, o->shared.html_path);
    if (rc == HB_EXIT_OK) rc = run_limits(o, &limits, &nopen);
    if (rc == HB_EXIT_OK) rc = cmd_check_budget("run", run_fd_need(o), run_mem_need(o));
    if (rc == HB_EXIT_OK) run_limits_show(o, &limits, nopen);
    if (rc == HB_EXIT_OK) rc = cmd_open_profile("run", &o->shared, &run.prof);
    if (rc == HB_EXIT_OK && (rc = run_start_server(env, &run, o, &err)) < 0)
        rc = cmd_fail("run", &err, rc == -EPERM ? HB_EXIT_NOPERM : HB_EXIT_RUNTIME);
    if (rc == HB_EXIT_OK && run_preflight(o, env->stop, &err) < 0)
        rc = cmd_fail("run", &err, cmd_failure_exit(err.code));
    /* a comm service once the endpoints answer, waited for as long as they are (a pod) */
    if (rc == HB_EXIT_OK &&
        service_resolve(&o->services, now_ns() + o->wait_ready_ns, env->stop, &err) < 0)
        rc = cmd_fail("run", &err, HB_EXIT_RUNTIME);
    if (run.server_pid > 0)
        snprintf(server, sizeof(server), "built-in %s (pid %ld)", o->proto->name,
                 (long)run.server_pid);
    else if (rc == HB_EXIT_OK) /* the server each endpoint's listening socket names */
        run_find_servers(o, stdout, server, sizeof(server));
    if (rc == HB_EXIT_OK) rc = run_measure(env, &run, o, json_path, server[0] ? server : NULL);
    run_serve_stop(&run);
    run_release(&run);
    return rc;
}

const struct command cmd_run = {
    .name = "run",
    .synopsis = "run PROTO ENDPOINT [ENDPOINT...] [OPTIONS]",
    .summary = "loads one or more endpoints in turn under identical settings",
    .usage = run_usage,
    .options = run_options,
    .words = cmd_proto_words,
    .values = run_values,
    .tail = NULL,
    .column = 24,
    .parse = run_parse,
    .exec = run_exec,
};
