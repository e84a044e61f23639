/*
 * cli: argv to option structs (see cli.h). Every option of every subcommand
 * is listed in its --help text (tests/unit/test_cli.c checks each text against
 * its parser's table, struct cli_spec); a bad value is reported in one line
 * that names the option and the value.
 */
#include "cli.h"

#include "cmd/options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "host/counters.h"
#include "proto/echo.h"
#include "registry.h"
#include "report/html.h"
#include "server/server.h"
#include "stack/measure.h"
#include "stack/stack.h"

static const char usage_top[] =
    "usage: hopbench [lab] [LAB OPTIONS]\n"
    "       hopbench run PROTO ENDPOINT [ENDPOINT...] [OPTIONS]\n"
    "       hopbench serve PROTO --listen ENDPOINT [--listen ENDPOINT...] [OPTIONS]\n"
    "       hopbench compare OLD.json NEW.json\n"
    "       hopbench merge A.json B.json... [-o OUT.json]\n"
    "       hopbench report EVIDENCE.json... -o REPORT.html\n"
    "       hopbench cost EVIDENCE [--traffic LIST] [--price USD] [--app-work LIST]\n"
    "       hopbench stack list | NAME [OPTIONS]\n"
    "       hopbench agent [--listen ADDR:PORT] [--token-file FILE] [--schedule FILE]\n"
    "       hopbench help | --help | --version\n"
    "\n"
    "What does the hop between two services on one host cost: TCP loopback or a Unix socket?\n"
    "\n"
    "  lab     the default: starts its own echo server on TCP loopback and on a Unix socket,\n"
    "          measures {tcp, unix} x {connect, reuse} x {64 B, 4 KiB, 64 KiB}, each cell 5\n"
    "          times, prints one table per size, each unix/tcp ratio with its interval, and\n"
    "          writes the evidence as JSON; --proto " PROTO_HELP_LAB_OTHERS " runs\n"
    "          it on that protocol, --rates adds open-loop runs, 'lab overload' shows how\n"
    "          each transport fails under overload\n"
    "  run     loads one or more endpoints in turn under identical settings\n"
    "  serve   runs a built-in reference server until SIGINT or SIGTERM\n"
    "  compare compares two evidence files cell by cell, as benchstat does\n"
    "  merge   adds up evidence files from processes or hosts that loaded at the same time\n"
    "  report  draws evidence files as one self-contained HTML page (SVG charts, no script)\n"
    "  cost    what the Unix socket saves per request and per month, from run or lab evidence\n"
    "  stack   builds a real stack (redis, nginx-fpm, apache-fpm, php-method, postgres,\n"
    "          redis-mariadb) from Debian's servers in a private directory and cgroups,\n"
    "          measures it tcp against unix, prices the saving, removes it\n"
    "  agent   runs beside a server and gives 'run --agent' on another host the server side\n"
    "\n"
    "ENDPOINT: tcp://127.0.0.1:PORT  tcp://[::1]:PORT  tcp://localhost:PORT\n"
    "          unix:/path/to.sock    unix:@name (Linux abstract namespace)\n"
    "PROTO:    " PROTO_HELP_NAMES "\n"
    "\n"
    "Exit codes: 0 valid results, 1 runtime failure (also: stdout could not be written, as\n"
    "to a full disk; the work goes on), 2 invalid results (a run saw errors or an open loop\n"
    "was saturated; compare: nothing comparable), 64 bad usage, 71 the plan needs more file\n"
    "descriptors or memory than the limits give (refused before anything runs; ulimit -n\n"
    "raises the first), 77 --netns without the right to make a network namespace, 130\n"
    "interrupted (what was measured is still printed and written); run --agent: 3 the agent\n"
    "refused the token, 76 it refused a request as bad or too large.\n"
    "lab and run: Ctrl-C (SIGINT; SIGTERM, SIGHUP and SIGQUIT alike) ends the current run\n"
    "early and writes what was measured; a second one within 250 ms is the same interrupt\n"
    "(timeout(1) signals the process and then its group), one after that aborts at once (what\n"
    "is not yet printed or written is lost; --jsonl lines already written stay whole). A\n"
    "stdout whose reader is gone (hopbench lab | head) ends the work after the current run or\n"
    "cell, as an interrupt if runs were left: SIGPIPE is ignored. The lab stops its server and\n"
    "removes its directory on every one of these paths. serve stops on SIGINT or SIGTERM.\n"
    "'hopbench SUBCOMMAND --help' describes every option.\n"
    "\n"
    "  -h, --help            this text (also 'hopbench help')\n"
    "      --version         the version (also 'hopbench version')\n";

static const char usage_run_head[] =
    "usage: hopbench run PROTO ENDPOINT [ENDPOINT...] [OPTIONS]\n"
    "\n"
    "Loads each ENDPOINT in turn with identical settings and prints a row per endpoint\n"
    "with its ratio to the first. Every reply is checked: echo byte for byte, the other\n"
    "protocols' framing and status (and the body, with --expect-body).\n"
    "\n"
    "  -c, --connections N   connections in total, spread over the threads (default 1)\n"
    "  -t, --threads N       load threads, one epoll loop each (default 1; <= connections)\n"
    "  -d, --duration S      measure for S seconds after the warm-up (default 5)\n"
    "  -n, --count N         measure N ops instead (failed ops count too)\n"
    "      --mode M          connect: a new connection per request (batch); reuse: one\n"
    "                        connection for many requests (default reuse)\n"
    "      --pipeline P      requests in flight per connection (default 1)\n"
    "      --rate R          open loop: R ops/s in all, spread over the connections, each\n"
    "                        on its own schedule; or N% of each endpoint's closed-loop\n"
    "                        maximum, measured once per endpoint before the open-loop runs:\n"
    "                        --reps closed-loop probes of the same settings (each as long as\n"
    "                        -d, at most 3 s; in the runs' order), whose median is the base.\n"
    "                        Latency counts from each op's intended send time (corrected for\n"
    "                        coordinated omission); the service time, from the actual send,\n"
    "                        is shown beside it. A run below 99 % of its rate is flagged\n"
    "                        saturated and, like a run with errors, is invalid (exit 2)\n"
    "      --rate-base B     with --rate N%: take the share of B ops/s instead of probing;\n"
    "                        one B for every endpoint, or a comma list, one per endpoint in\n"
    "                        their order (repeatable: the lists are joined)\n"
    "      --arrivals A      open loop: constant (default) or poisson gaps (seeded: --seed)\n"
    "      --wait W          how a thread waits for its replies: epoll (epoll_wait, then\n"
    "                        recv), block (it sleeps in recv: one syscall less per op, as a\n"
    "                        blocking client or sockperf; either transport alike; needs\n"
    "                        --mode reuse, --pipeline 1, no --rate, -c equal to -t and a\n"
    "                        --timeout of 1 ms or more) or uring (kept connections send and\n"
    "                        receive through one io_uring per thread: one io_uring_enter per\n"
    "                        turn for all that are ready; needs --mode reuse and no --rate; where\n"
    "                        io_uring cannot be set up the run uses epoll and says so).\n"
    "                        Default: block where it applies, else epoll. serve's default\n"
    "                        is epoll: start it with --wait block to match\n"
    "      --close WHO       connect mode: who closes first and so holds TIME_WAIT:\n"
    "                        client (default), server (wait for the server's FIN; start the\n"
    "                        built-in server with --close-after SIZE) or rst (SO_LINGER 0:\n"
    "                        an RST, no TIME_WAIT)\n"
    "      --size BYTES      payload per request: 64, 4KiB, 64KiB, 1MiB... (default 64);" PROTO_HELP_RUN_SIZE
    "\n"
    "      --warmup S        seconds of load before measuring; discarded (default 1, 0 = none)\n"
    "      --timeout S       a connect or reply slower than this is a timeout (default 5)\n"
    "      --pin P           none | same (client and server share one CPU) | split (client on\n"
    "                        the first half of the CPUs, server on the rest) (default none);\n"
    "                        start the server with the same --pin\n"
    "      --json FILE       write the evidence (every run, whole histograms) to FILE (default\n"
    "                        hopbench-run-DATE.json here)\n"
    "      --html FILE       also draw the evidence as an HTML report in FILE (as 'hopbench\n"
    "                        report' does)\n"
    "      --jsonl FILE      also append to FILE a header line (schema, version, command line,\n"
    "                        machine), then one JSON line per finished run, each appended\n"
    "                        whole or not at all, so a crash, Ctrl-C or a full disk leaves\n"
    "                        only whole lines; a FILE whose last line has no end is refused\n"
    "      --csv FILE        also write one CSV row per run (cell keys and figures, for\n"
    "                        spreadsheets; docs/csv.md lists the columns)\n"
    "  -q, --quiet           no live progress line (drawn on stderr only when it is a\n"
    "                        terminal: endpoint, rep k/n, seconds, ops/s and errors so\n"
    "                        far, the time left)\n"
    "      --allow-remote    allow a non-loopback TCP address\n"
    "      --wait-ready S    an endpoint that refuses (or whose socket file is not there\n"
    "                        yet) is asked again every 50 ms for up to S seconds before\n"
    "                        the runs, as when the server starts beside it (a pod)\n"
    "      --netns M         start the protocol's built-in server on the endpoints (a TCP\n"
    "                        port 0: one it picks) in a network namespace made for the run,\n"
    "                        removed after it; same: the client in that namespace too (its\n"
    "                        own loopback; a Unix socket as in a pod's shared volume);\n"
    "                        other: the client in a second namespace joined to the first by\n"
    "                        a veth pair, TCP only, each TCP endpoint's address replaced by\n"
    "                        the server's veth address (two pods on a node). Needs root\n"
    "      --in-netns M      the run was started inside the namespaces of a 'stack --netns M'\n"
    "                        (same, other): the evidence records where each end ran\n"
    "\n"
    "Repetitions (the unit of analysis is one run):\n"
    "      --reps N          runs per endpoint (default 1); the summary gives median, min-max,\n"
    "                        SD and n per endpoint, and each endpoint against the first: ratio\n"
    "                        of medians with a bootstrap 95 % interval and a Mann-Whitney p\n"
    "                        (\"~\" before it when not significant; n >= 4 per side can\n"
    "                        reach p < 0.05)\n"
    "      --order O         abba (default: A B B A ... cancels linear drift) or random\n"
    "      --seed N          seed of the random order, of poisson arrivals and of the bootstrap\n"
    "                        (default 1; at most 2^53-1, which every JSON reader keeps exact)\n"
    "      --cooldown S      pause between runs (default 0)\n"
    "\n"
    "Where the cost goes (the client's own CPU is always measured):\n"
    "      --server-pid PID  count this server process's CPU time and memory (PSS);\n"
    "                        repeat for several processes; each must be running\n"
    "      --server-tree     add the descendants of each --server-pid (a php-fpm pool),\n"
    "                        found again at the end, and the CPU of the children they reaped\n"
    "      --server-cgroup DIR  the server's cgroup directory: its CPU usage (v2 cpu.stat\n"
    "                        usage_usec, v1 cpuacct.usage), throttling and working set; alone,\n"
    "                        it is the server's CPU; on v1 any controller's directory will do\n"
    "      --sample-ms MS    count the hop's sockets by state (sock_diag) every MS during\n"
    "                        a run, for peaks (default 250 with --mode connect or --watch,\n"
    "                        else 30000; 0 = only at the window's ends)\n"
    "      --noisy-threshold CPUS  flag a run noisy when other processes' CPU plus steal\n"
    "                        averaged more than CPUS over its window (default 0.1)\n"
    "      --service NAME=KIND:ARG  a named service, measured apart (repeatable): pid:PID,\n"
    "                        tree:PID (its descendants and reaped children too) or\n"
    "                        cgroup:DIR (its CPU usage, its processes' PSS, its working set);\n"
    "                        the table shows client, each service, their sum and the system\n"
    "      --watch [LABEL=]ENDPOINT  sample that hop's sockets too (a TCP port or a socket\n"
    "                        path: established, TIME_WAIT by side, accept queue, ports held)\n"
    "      --label NAME      a name for an endpoint, in the order of the endpoints (or write\n"
    "                        NAME=ENDPOINT); tables and evidence use it\n"
    "\n"
    "The server side from another host ('hopbench agent' beside the server; docs/agent.md):\n"
    "      --agent ENDPOINT  ask the agent there at each run's window start and end for the\n"
    "                        server side (CPU and memory of each --agent-service, the loaded\n"
    "                        hop's sockets, kernel counters, the machine): in the evidence\n"
    "                        under \"agent\", with the agent's host name; a refused token is\n"
    "                        exit 3, a request the agent refuses as bad or too large exit 76\n"
    "      --agent-token-file FILE  the shared token (its first line; only its owner may read\n"
    "                        it); default: the environment's HOPBENCH_AGENT_TOKEN\n"
    "      --agent-service NAME=KIND:ARG  a service on the agent's host, as --service there\n"
    "                        (repeatable, at most 8)\n"
    "      --agent-state NAME  before the first run, wait until the agent's schedule\n"
    "                        announces NAME; each run records the state at its start and end\n"
    "      --agent-wait S    how long to wait for --agent-state (default 600)\n"
    "\n"
    "Protocols (echo checks every byte; the others check the reply's framing and status):\n";

/* After the registry's protocol options (run_spec_build). */
static const char usage_run_tail[] =
    "      --value-size B    redis: the SET value (the same as --size)\n"
    "A non-2xx status (http, fcgi's Status:) counts as an error of kind 'status', a RESP error\n"
    "or a FastCGI protocolStatus other than REQUEST_COMPLETE as 'error_reply'. A kept\n"
    "connection the server closes (nginx's keepalive_requests, a keep-alive timeout) is\n"
    "reopened and counted under 'reconnects', not as an error; a connection a reply said it\n"
    "closes likewise. In connect mode a server that says it closes (http Connection: close,\n"
    "fcgi without KEEP_CONN) is waited for, so it holds TIME_WAIT, unless --close is given.\n"
    "      --retry R         once (default): the requests a kept connection left unanswered\n"
    "                        when the server closed it (EOF, reset) are sent again, once,\n"
    "                        on a new connection: 'retried' in the table, not errors; none:\n"
    "                        each such close fails its op (short or reset), as wrk counts it\n"
    "An AF_UNIX connect that finds the listener's backlog full (EAGAIN) waits, as a blocking\n"
    "connect would and as TCP retransmits its SYN: it is tried again every 1 ms, the op stays\n"
    "in its connect phase (the wait is in its latency), the retries are counted apart\n"
    "('connect retries'), and it fails, as a timeout, only --timeout after its first attempt.\n"
    "  -h, --help            this text\n";

/* What main() takes before a subcommand; any other option is the lab's. */
static const struct option top_longopts[] = {
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 },
};

const struct cli_spec cli_spec_top = { "hopbench", usage_top, "h", top_longopts };

void cli_usage(FILE *f)
{
    fputs(cli_spec_top.help, f);
}

/* Is c one of the spec's short letters (not the ':' of an argument)? */
static bool is_short(const struct cli_spec *s, int c)
{
    return c > 0 && c < 256 && c != ':' && strchr(s->shortopts, c) != NULL;
}

int cli_option(const struct cli_spec *s, const char *arg)
{
    if (arg[0] != '-' || arg[1] == '\0') return 0;
    for (const struct option *o = s->longopts; o->name != NULL; o++) {
        if (arg[1] == '-' && strcmp(arg + 2, o->name) == 0) return o->val;
        if (arg[2] == '\0' && arg[1] == o->val && is_short(s, o->val)) return o->val;
    }
    return '?';
}

/*
 * The entry of spec's table that the long option name[len] names, as
 * getopt_long picks it: the one of that name, else the only one it begins;
 * NULL when none is, *matches then saying how many it begins (2 or more:
 * ambiguous).
 */
static const struct option *long_entry(const struct cli_spec *spec, const char *name, size_t len,
                                       int *matches)
{
    const struct option *found = NULL;

    *matches = 0;
    for (const struct option *o = spec->longopts; o->name != NULL; o++) {
        if (strncmp(o->name, name, len) != 0) continue;
        if (o->name[len] == '\0') {
            *matches = 1;
            return o;
        }
        found = o;
        (*matches)++;
    }
    return *matches == 1 ? found : NULL;
}

/*
 * An unknown option, a missing value: getopt's own message is replaced by
 * ours. A long option is named as written: getopt's optopt is then its
 * table's value (an enum past the letters, not a letter to print), or 0 for
 * one that is unknown or ambiguous. A short option is named by its letter.
 */
static int bad_option(const struct cli_spec *spec, char **argv, struct hb_err *err)
{
    const char *arg = argv[optind - 1], *cmd = spec->name;
    size_t n = strcspn(arg, "=");
    const struct option *lo = NULL;
    int matches = 0;

    if (strncmp(arg, "--", 2) == 0 && n > 2) lo = long_entry(spec, arg + 2, n - 2, &matches);
    if (strncmp(arg, "--", 2) == 0 && n > 2 && optopt == 0)
        return hb_fail(err, -EINVAL, "%s: %s option '%.*s'", cmd,
                       matches > 1 ? "ambiguous" : "unknown", (int)n, arg);
    if (lo != NULL && optopt == lo->val)
        return hb_fail(err, -EINVAL, "%s: option --%s %s", cmd, lo->name,
                       arg[n] == '=' ? "takes no value" : "needs a value");
    if (is_short(spec, optopt))
        return hb_fail(err, -EINVAL, "%s: option -%c needs a value", cmd, optopt);
    if (optopt > ' ' && optopt < 127)
        return hb_fail(err, -EINVAL, "%s: unknown option -%c", cmd, optopt);
    return hb_fail(err, -EINVAL, "%s: unknown option or missing value: '%s'", cmd, arg);
}

/*
 * Reads argv's options by spec's table with getopt_long, from the start (its
 * state is global: one parser at a time), and hands each to option(c, optarg,
 * opts, err). Returns 0 with optind at the first word that is not an option;
 * CLI_HELP for -h or --help, after printing spec's help to out (out NULL: the
 * caller prints its own); -EINVAL with err set for an unknown option, a
 * missing value, or a value that option refused.
 */
static int cli_getopt(const struct cli_spec *spec, int argc, char **argv,
                      int (*option)(int c, const char *val, void *opts, struct hb_err *err),
                      void *opts, FILE *out, struct hb_err *err)
{
    int c;

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, spec->shortopts, spec->longopts, NULL)) != -1) {
        if (c == 'h') {
            if (out != NULL) fputs(spec->help, out);
            return CLI_HELP;
        }
        if (c == '?') return bad_option(spec, argv, err);
        if (option(c, optarg, opts, err) < 0) return -EINVAL;
    }
    return 0;
}

/* run's protocol options (the registry's): OPT_PROTO_FIRST + their proto_option_at index. */
enum { OPT_PROTO_FIRST = 1024 };

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
 * Options that shape the protocol's requests: the registry's, each parsed by
 * its hook (proto_check_run refuses it later if the protocol chosen does not
 * take it), and the payload and the open loop.
 */
static int run_proto_option(int c, const char *val, struct run_opts *o, struct hb_err *err)
{
    const struct proto_option *po =
        c >= OPT_PROTO_FIRST ? proto_option_at((size_t)(c - OPT_PROTO_FIRST)) : NULL;
    struct proto_args args = {
        .co = &o->codec,
        .params = o->params,
        .params_cap = ARRAY_LEN(o->params),
        .body = o->expect_body,
        .body_cap = sizeof(o->expect_body),
        .secret = o->password,
        .secret_cap = sizeof(o->password),
        .key = o->server_key,
        .key_cap = sizeof(o->server_key),
    };
    int rc = 0;

    if (po != NULL) return po->parse(val, &args, err);
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
        if (strcmp(val, "constant") != 0 && strcmp(val, "poisson") != 0)
            return hb_fail(err, -EINVAL, "--arrivals: '%s' is not constant or poisson", val);
        o->load.poisson = val[0] == 'p';
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
    int rc = 0;

    switch (c) {
    case OPT_ORDER:
        if (strcmp(val, "abba") != 0 && strcmp(val, "random") != 0)
            return hb_fail(err, -EINVAL, "--order: '%s' is not abba or random", val);
        o->order_random = val[0] == 'r';
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

static int run_option(int c, const char *val, void *opts, struct hb_err *err)
{
    struct run_opts *o = opts;
    struct load_cfg *l = &o->load;
    uint64_t v = 0;
    int rc = shared_option(c, val, &o->shared, err);

    if (rc != SHARED_NOT_MINE) return rc;
    rc = 0;
    switch (c) {
    case 'n':
        rc = opt_uint("--count", val, 1, UINT64_MAX / 2, &l->count, err);
        break;
    case OPT_MODE:
        if (strcmp(val, "connect") == 0)
            l->mode = LOAD_CONNECT;
        else if (strcmp(val, "reuse") == 0)
            l->mode = LOAD_REUSE;
        else
            rc = hb_fail(err, -EINVAL, "--mode: '%s' is not connect or reuse", val);
        break;
    case OPT_PIPELINE:
        rc = opt_uint("--pipeline", val, 1, 1024, &v, err);
        l->pipeline = (unsigned)v;
        break;
    case OPT_SERVER_PID:
        if (o->nserver_pids == ARRAY_LEN(o->server_pids))
            return hb_fail(err, -EINVAL, "--server-pid: at most %zu", ARRAY_LEN(o->server_pids));
        rc = opt_uint("--server-pid", val, 1, 1u << 22, &v, err);
        o->server_pids[o->nserver_pids++] = (pid_t)v;
        break;
    case OPT_SERVER_TREE:
        o->server_tree = true;
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
    case OPT_NETNS:
        rc = opt_netns(val, &o->netns, err);
        break;
    case OPT_IN_NETNS:
        rc = opt_netns(val, &o->in_netns, err);
        break;
    case OPT_LABEL:
        if (o->nlabels == CLI_MAX_ENDPOINTS)
            return hb_fail(err, -EINVAL, "--label: at most %d", CLI_MAX_ENDPOINTS);
        o->labels[o->nlabels++] = val;
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
        if (strcmp(val, "once") == 0)
            l->retry = RETRY_ONCE;
        else if (strcmp(val, "none") == 0)
            l->retry = RETRY_NONE;
        else
            rc = hb_fail(err, -EINVAL, "--retry: '%s' is not once or none", val);
        break;
    default:
        rc = run_plan_option(c, val, o, err);
    }
    return rc;
}

/*
 * Options that only some protocols take, and what the protocol makes of --size
 * (the registry's entry says both).
 */
static int run_check_proto(struct run_opts *o, struct hb_err *err)
{
    struct proto_req req = {
        .co = &o->codec,
        .size = &o->load.size,
        .size_given = o->size_given,
        .connect = o->load.mode == LOAD_CONNECT,
        .pipeline = o->load.pipeline,
    };

    if (proto_check_run(o->proto, &req, err) < 0) return -EINVAL;
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

/* An ENDPOINT or LABEL=ENDPOINT word of run. */
static int run_add_endpoint(struct run_opts *o, const char *arg, struct hb_err *err)
{
    char label[ENDPOINT_LABEL_MAX];
    const char *text;

    if (service_label_split(arg, label, sizeof(label), &text, err) < 0) return -EINVAL;
    if (opt_endpoint(o->eps, &o->neps, text, err) < 0) return -EINVAL;
    snprintf(o->eps[o->neps - 1].label, sizeof(o->eps[0].label), "%s", label);
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
    if (optind >= argc)
        return hb_fail(err, -EINVAL, "run: missing PROTO (%s) and ENDPOINT", proto_names());
    o->proto = proto_find(argv[optind]);
    if (o->proto == NULL)
        return hb_fail(err, -EINVAL, "run: unknown protocol '%s' (known: %s)", argv[optind],
                       proto_names());
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

static const struct option run_longopts[] = {
    { "connections", required_argument, NULL, 'c' },
    { "threads", required_argument, NULL, 't' },
    { "duration", required_argument, NULL, 'd' },
    { "count", required_argument, NULL, 'n' },
    { "mode", required_argument, NULL, OPT_MODE },
    { "pipeline", required_argument, NULL, OPT_PIPELINE },
    { "close", required_argument, NULL, OPT_CLOSE },
    { "server-pid", required_argument, NULL, OPT_SERVER_PID },
    { "server-tree", no_argument, NULL, OPT_SERVER_TREE },
    { "server-cgroup", required_argument, NULL, OPT_SERVER_CGROUP },
    { "sample-ms", required_argument, NULL, OPT_SAMPLE_MS },
    { "noisy-threshold", required_argument, NULL, OPT_NOISY_THRESHOLD },
    { "service", required_argument, NULL, OPT_SERVICE },
    { "watch", required_argument, NULL, OPT_WATCH },
    { "label", required_argument, NULL, OPT_LABEL },
    { "reps", required_argument, NULL, OPT_REPS },
    { "order", required_argument, NULL, OPT_ORDER },
    { "seed", required_argument, NULL, OPT_SEED },
    { "cooldown", required_argument, NULL, OPT_COOLDOWN },
    { "jsonl", required_argument, NULL, OPT_JSONL },
    { "csv", required_argument, NULL, OPT_CSV },
    { "quiet", no_argument, NULL, 'q' },
    { "size", required_argument, NULL, OPT_SIZE },
    { "warmup", required_argument, NULL, OPT_WARMUP },
    { "timeout", required_argument, NULL, OPT_TIMEOUT },
    { "pin", required_argument, NULL, OPT_PIN },
    { "json", required_argument, NULL, OPT_JSON },
    { "html", required_argument, NULL, OPT_HTML },
    { "allow-remote", no_argument, NULL, OPT_ALLOW_REMOTE },
    { "wait-ready", required_argument, NULL, OPT_WAIT_READY },
    { "value-size", required_argument, NULL, OPT_VALUE_SIZE },
    { "rate", required_argument, NULL, OPT_RATE },
    { "arrivals", required_argument, NULL, OPT_ARRIVALS },
    { "rate-base", required_argument, NULL, OPT_RATE_BASE },
    { "wait", required_argument, NULL, OPT_WAIT },
    { "retry", required_argument, NULL, OPT_RETRY },
    { "netns", required_argument, NULL, OPT_NETNS },
    { "agent", required_argument, NULL, OPT_AGENT },
    { "agent-token-file", required_argument, NULL, OPT_AGENT_TOKEN_FILE },
    { "agent-service", required_argument, NULL, OPT_AGENT_SERVICE },
    { "agent-state", required_argument, NULL, OPT_AGENT_STATE },
    { "agent-wait", required_argument, NULL, OPT_AGENT_WAIT },
    { "in-netns", required_argument, NULL, OPT_IN_NETNS },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

/*
 * run's --help text and option table: the fixed ones with the registry's
 * protocol options put in, built once before main (run_spec_build) so that
 * cli_spec_run is the constant the other specs are. Room for 32 protocol
 * options, one per proto_opt bit.
 */
static char run_help[sizeof(usage_run_head) + sizeof(usage_run_tail) + 8192];
static struct option run_table[ARRAY_LEN(run_longopts) + 32];

const struct cli_spec cli_spec_run = { "run", run_help, "c:t:d:n:qh", run_table };

/* Appends to buf (of cap bytes, holding *len) one option's --help entry, as the fixed ones are. */
static void help_option(char *buf, size_t cap, size_t *len, const struct proto_option *po)
{
    const char *arg = po->arg != NULL ? po->arg : "";
    int head = (int)(strlen(po->name) + (*arg != '\0') + strlen(arg));
    int n = snprintf(buf + *len, cap - *len, "      %s%s%s%*s%s\n", po->name, *arg ? " " : "", arg,
                     head <= 16 ? 18 - head : 2, "", po->help);

    if (n > 0) *len = *len + (size_t)n < cap ? *len + (size_t)n : cap - 1;
}

__attribute__((constructor)) static void run_spec_build(void)
{
    const struct proto_option *po;
    size_t len = 0, n = 0;

    len = (size_t)snprintf(run_help, sizeof(run_help), "%s", usage_run_head);
    for (size_t i = 0; (po = proto_option_at(i)) != NULL; i++)
        help_option(run_help, sizeof(run_help), &len, po);
    snprintf(run_help + len, sizeof(run_help) - len, "%s", usage_run_tail);
    for (; run_longopts[n].name != NULL; n++)
        run_table[n] = run_longopts[n];
    for (size_t i = 0; (po = proto_option_at(i)) != NULL && n + 1 < ARRAY_LEN(run_table); i++)
        run_table[n++] =
            (struct option){ po->name + 2, po->arg != NULL ? required_argument : no_argument, NULL,
                             OPT_PROTO_FIRST + (int)i };
    run_table[n] = (struct option){ NULL, 0, NULL, 0 };
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
    rc = cli_getopt(&cli_spec_run, argc, argv, run_option, o, out, err);
    if (rc != 0) return rc;
    run_load_from_shared(o);
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
    if (run_positionals(argc, argv, o, err) < 0 || run_agent_check(o, err) < 0) return -EINVAL;
    if (o->nrate_bases > 1 && o->nrate_bases != o->neps)
        return hb_fail(err, -EINVAL,
                       "run: --rate-base gives %u bases for %u endpoints: give one for all, or "
                       "one per endpoint",
                       o->nrate_bases, o->neps);
    return 0;
}

/* ---- compare, merge ---- */
