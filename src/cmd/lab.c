/*
 * lab: `hopbench [lab]`, the default experiment (lab.c): its own echo server
 * on TCP loopback and on a Unix socket, the matrix of cells, the tables,
 * the summaries and the evidence. The stop signals' handler is in place, with
 * the signals held, before its directory exists; an abort removes the
 * directory and the socket (cmd_env).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/options.h"
#include "cmd/session.h"
#include "host/probe.h"
#include "host/profile.h"
#include "lab.h"
#include "outfile.h"
#include "progress.h"
#include "registry.h"
#include "report/bottom.h"
#include "report/profile.h"
#include "report/report.h"
#include "report/summary.h"
#include "suggest.h"
#include "util.h"

static const char lab_usage[] =
    "usage: hopbench [lab] [OPTIONS]\n"
    "       hopbench lab overload [OPTIONS]\n"
    "\n"
    "Starts a built-in echo server (a child process) on a TCP loopback port and on a Unix\n"
    "socket in a private temporary directory, measures {tcp, unix} x {connect, reuse} x\n"
    "sizes, each cell 5 runs of 0.6 s with tcp and unix in ABBA order, prints one table per\n"
    "size (each cell's median run) with the unix/tcp ratios, then per size and mode each\n"
    "unix/tcp ratio of medians with its 95 % interval (\"~\" before it when not\n"
    "significant), and writes the evidence as JSON. Stops the server and removes its\n"
    "directory on every exit, Ctrl-C included.\n"
    "If the server exits on its own (killed, crashed), the lab stops at once: one line\n"
    "says how and in which cell, the evidence holds what was measured (that cell marked\n"
    "cut short), and the exit code is 1.\n"
    "\n";

/* The word after the options: 'lab overload'. */
static const char *const lab_words[] = { "overload", NULL };

/* The words its options take, which their parsers check against. */
static const struct cmd_value lab_values[] = {
    { OPT_PROTO, cmd_served_words }, { OPT_PIN, cmd_pin_values },
    { OPT_CLOSE, cmd_close_values }, { OPT_WAIT, cmd_wait_values },
    { OPT_NETNS, cmd_netns_values }, { 0, NULL },
};

/* The texts that name the protocols, from the registry's entries (lab_help_build). */
static char lab_proto_help[512];
static char lab_summary[640];

static const struct cmd_option lab_options[] = {
    { "proto", 0, "P", lab_proto_help, OPT_PROTO },
    { "rates", 0, "LIST",
      "after each closed-loop cell, open-loop runs at these shares of\n"
      "the ops/s it measured, e.g. 30%,60%,90% (60 % is the headline):\n"
      "latency from the intended send time and service time, p99.9,\n"
      "p99.99, max, and whether the rate was achieved",
      OPT_RATES },
    { "quick", 0, NULL, "one short run per cell (0.75 s), no verdicts: about 13 s in all",
      OPT_QUICK },
    { "backlog", 0, "N",
      "the lab server's listen backlog (default net.core.somaxconn;\n"
      "overload 4)",
      OPT_BACKLOG },
    { "server-threads", 0, "N", "the lab server's worker threads (default: its CPUs; overload 1)",
      OPT_SERVER_THREADS },
    { "delay-us", 0, "D",
      "the lab server's service time per request (default 0;\n"
      "overload 5000)",
      OPT_DELAY_US },
    CMD_TEXT(
        "'lab overload' reproduces an overload test: 64 connections, each op a new connection,\n"
        "3 s per transport, against one worker with a 4-slot backlog busy 5 ms per request; per\n"
        "transport it prints ops/s, the connect phase's p99, errors by kind, how connects to the\n"
        "full backlog were retried (TCP: SYNs dropped, so ListenOverflows and TCPSynRetrans grow\n"
        "and ops wait out 1 s retransmits; AF_UNIX: EAGAIN, tried again every 1 ms) and the ops\n"
        "that took 1 s or more. A connect that waits is slow, not an error, until --timeout.\n"),
    { "duration", 'd', "S",
      "measured seconds per run (default 0.6, each cell 5 runs; with\n"
      "-d and no --reps one run per cell; --reps alone 3; --quick 0.75);\n"
      "S, here and below, is seconds or a time with its unit (500ms, 10s)",
      'd' },
    { "count", 'n', "N", "measure N ops per run instead of a duration", 'n' },
    { "pipeline", 0, "P",
      "requests in flight per connection in the reuse cells (default\n"
      "1; connect cells send one per connection); not with --rates",
      OPT_PIPELINE },
    { "warmup", 0, "S",
      "discarded seconds before each run (default 0.15; with -d or --reps\n"
      "1; --quick 0.25)",
      OPT_WARMUP },
    { "sizes", 0, "LIST", "payload sizes, e.g. 64,4KiB,64KiB (the default)", OPT_SIZES },
    { "connections", 'c', "N", "connections per cell (default 1: sequential round trips)", 'c' },
    { "threads", 't', "N", "load threads (default 1)", 't' },
    { "timeout", 0, "S", "connect/reply timeout (default 5)", OPT_TIMEOUT },
    { "pin", 0, "P", "none | same | split (default split when 2+ CPUs, else same)", OPT_PIN },
    { "close", 0, "WHO", "connect cells: client (default) | server | rst closes first", OPT_CLOSE },
    { "wait", 0, "W",
      "epoll or block: how the client and the server wait in the reuse\n"
      "cells with -c equal to -t (see 'hopbench run --help'); both\n"
      "transports alike. Default: block there when -c equals -t and\n"
      "there is no --pipeline or --rates (the floor's wait), else epoll",
      OPT_WAIT },
    { "sample-ms", 0, "MS",
      "sock_diag sampling period for socket peaks (default 250 in\n"
      "connect cells, 30000 in reuse cells)",
      OPT_SAMPLE_MS },
    { "noisy-threshold", 0, "CPUS",
      "flag a run noisy when other processes' CPU plus steal\n"
      "averaged more than CPUS over its window (default 0.1)",
      OPT_NOISY_THRESHOLD },
    { "profile", 0, NULL,
      "sample every CPU's kernel stacks in each cell (as run\n"
      "--profile; root, else exit 77): per request by side and kernel\n"
      "subsystem, tcp - unix decomposed per size and mode",
      OPT_PROFILE },
    { "profile-hz", 0, "N", "--profile at N samples a second per CPU (default 809)",
      OPT_PROFILE_HZ },
    { "jsonl", 0, "FILE",
      "append a header line, then one JSON line per finished cell,\n"
      "each appended whole or not at all",
      OPT_JSONL },
    { "csv", 0, "FILE", "also write one CSV row per run (docs/csv.md lists the columns)", OPT_CSV },
    { "quiet", 'q', NULL,
      "no live progress line (drawn on stderr only when it is a\n"
      "terminal: cell, rep k/n, seconds, ops/s and errors so far,\n"
      "the time left for the whole lab)",
      'q' },
    { "verbose", 'v', NULL,
      "also a line per run as it ends, the summaries over repetitions\n"
      "and a \"noisy:\" line per noisy run (the bottom line counts them)",
      'v' },
    { "reps", 0, "N",
      "run every cell N times, tcp and unix in ABBA order; then print\n"
      "per size and mode the medians and unix against tcp with a\n"
      "bootstrap 95 % interval and a Mann-Whitney p (default 5; with\n"
      "-d, --quick or overload 1)",
      OPT_REPS },
    { "cooldown", 0, "S", "pause between runs (default 0)", OPT_COOLDOWN },
    { "seed", 0, "N",
      "seed of the bootstrap (default 1; at most 2^53-1, which every\n"
      "JSON reader keeps exact)",
      OPT_SEED },
    { "json", 0, "FILE", "evidence path (default hopbench-lab-DATE.json here)", OPT_JSON },
    { "html", 0, "FILE",
      "also draw the evidence as an HTML report in FILE (as 'hopbench\n"
      "report' does)",
      OPT_HTML },
    { "netns", 0, "M",
      "same: server and client in one network namespace made for the\n"
      "lab (its own lo; the Unix socket as in a pod's shared volume);\n"
      "other: the server in namespace A, the client in B, joined by a\n"
      "veth pair with addresses only they have, and a third transport\n"
      "tcp-veth (client in B to the server's veth address) beside unix\n"
      "and tcp loopback (both from A, as a sidecar); needs root (exit\n"
      "77 without); the namespaces go when the lab ends",
      OPT_NETNS },
    { "help", 'h', NULL, "this text", 'h' },
    CMD_END,
};

static int parse_sizes(const char *val, struct lab_opts *o, struct hb_err *err)
{
    char buf[256], *toks[CLI_MAX_SIZES];
    unsigned n = 0;

    if (opt_list("--sizes", val, buf, sizeof(buf), toks, &n, err) < 0) return -EINVAL;
    for (o->nsizes = 0; o->nsizes < n; o->nsizes++)
        if (opt_size("--sizes", toks[o->nsizes], &o->sizes[o->nsizes], err) < 0) return -EINVAL;
    o->sizes_given = true;
    return 0;
}

static int parse_rates(const char *val, struct lab_opts *o, struct hb_err *err)
{
    char buf[256], *toks[CLI_MAX_SIZES];
    unsigned n = 0;

    if (opt_list("--rates", val, buf, sizeof(buf), toks, &n, err) < 0) return -EINVAL;
    for (o->nrates = 0; o->nrates < n; o->nrates++) {
        double rate = 0, share = 0;
        if (opt_rate(toks[o->nrates], &rate, &share, err) < 0 || share == 0)
            return hb_fail(err, -EINVAL,
                           "--rates: '%s' is not a share of the closed-loop maximum (e.g. 60%%)",
                           toks[o->nrates]);
        o->rates[o->nrates] = share;
    }
    return 0;
}

static int lab_option(int c, const char *val, void *opts, struct hb_err *err)
{
    struct lab_opts *o = opts;
    uint64_t v = 0;
    char near[160];
    int rc = shared_option(c, val, &o->shared, err);

    if (rc != SHARED_NOT_MINE) return rc;
    rc = 0;
    switch (c) {
    case OPT_QUICK:
        o->quick = true;
        break;
    case OPT_SIZES:
        rc = parse_sizes(val, o, err);
        break;
    case OPT_RATES:
        rc = parse_rates(val, o, err);
        break;
    case OPT_BACKLOG:
        rc = opt_uint("--backlog", val, 1, 1 << 20, &v, err);
        o->server_backlog = (int)v;
        break;
    case OPT_SERVER_THREADS:
        rc = opt_uint("--server-threads", val, 1, 1024, &v, err);
        o->server_threads = (unsigned)v;
        break;
    case OPT_DELAY_US:
        rc = opt_uint("--delay-us", val, 0, 60000000, &v, err);
        o->server_delay_ns = v * 1000;
        break;
    case OPT_PROTO:
        o->proto = proto_find(val);
        if (o->proto == NULL)
            return hb_fail(err, -EINVAL, "--proto: '%s' is not one of %s%s", val, proto_names(),
                           cmd_suggest_proto(val, true, near, sizeof(near)));
        if (o->proto->server == NULL)
            return hb_fail(err, -EINVAL,
                           "--proto: %s has no built-in server for the lab; measure a real one "
                           "with hopbench run %s ENDPOINT",
                           o->proto->name, o->proto->name);
        break;
    case OPT_PIPELINE:
        rc = opt_uint("--pipeline", val, 1, 1024, &v, err);
        o->pipeline = (unsigned)v;
        break;
    case 'n':
        rc = opt_uint("--count", val, 1, UINT64_MAX / 2, &o->count, err);
        break;
    case OPT_NETNS:
        rc = opt_netns("--netns", val, &o->netns, err);
        break;
    default:
        rc = -EINVAL;
    }
    return rc;
}

static void lab_defaults(struct lab_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->proto = proto_lab_default();
    o->shared.duration_ns = 3 * NS_PER_S;
    o->shared.warmup_ns = 1 * NS_PER_S;
    o->shared.timeout_ns = 5 * NS_PER_S;
    o->shared.conns = 1;
    o->shared.threads = 1;
    o->sizes[0] = 64;
    o->sizes[1] = 4096;
    o->sizes[2] = 65536;
    o->nsizes = 3;
    o->shared.pin = PLACE_SPLIT;
    o->shared.reps = 1;
    o->shared.seed = 1;
    o->pipeline = 1;
}

/*
 * "lab overload" (the pod study's overload test): many connections, each a
 * new connection per request, against a server with a tiny backlog and one
 * slow worker. Options given on the command line win.
 */
static void lab_overload_defaults(struct lab_opts *o)
{
    struct shared_opts *sh = &o->shared;

    o->overload = true;
    if (!sh->conns_given) sh->conns = 64;
    if (!sh->duration_given) sh->duration_ns = 3 * NS_PER_S;
    if (!sh->warmup_given) sh->warmup_ns = 0;
    if (o->server_backlog == 0) o->server_backlog = 4;
    if (o->server_threads == 0) o->server_threads = 1;
    if (o->server_delay_ns == 0) o->server_delay_ns = 5 * NS_PER_MS;
    o->sizes[0] = 64;
    o->nsizes = 1;
}

/*
 * The default lab gives a verdict per cell, not one shot: LAB_VERDICT_REPS
 * short runs of each transport in ABBA order, so each unix÷tcp ratio comes
 * with its interval and p, all 12 cells in about 50 s (45 s of runs and
 * warm-ups, the rest each run's start and the tables). Each run warms up only
 * briefly: all but the first run of a size and mode follow one of the same
 * size and mode, so the machine is warm and the warm-up covers the new
 * connection and the switch of transport. -d, --reps, --quick and "lab
 * overload" keep their own meaning: -d alone is one run per cell of that
 * length after 1 s, --reps alone runs of 3 s.
 */
#define LAB_VERDICT_REPS      5
#define LAB_VERDICT_RUN_NS    (600 * NS_PER_MS)
#define LAB_VERDICT_WARMUP_NS (150 * NS_PER_MS)

static void lab_verdict_defaults(struct lab_opts *o)
{
    struct shared_opts *sh = &o->shared;

    if (o->quick || o->overload || sh->duration_given || sh->reps_given) return;
    sh->reps = LAB_VERDICT_REPS;
    sh->duration_ns = LAB_VERDICT_RUN_NS;
    if (!sh->warmup_given) sh->warmup_ns = LAB_VERDICT_WARMUP_NS;
}

/* -n and --pipeline against the rest, as run checks them; -n replaces the duration. */
static int lab_check_load(struct lab_opts *o, struct hb_err *err)
{
    if (o->count > 0 && o->shared.duration_given)
        return hb_fail(err, -EINVAL, "lab: give --duration or --count, not both");
    if (o->pipeline > 1 && o->nrates > 0)
        return hb_fail(err, -EINVAL, "lab: --rates sends one request at a time; drop --pipeline");
    if (o->shared.uring_wait)
        return hb_fail(err, -EINVAL, "lab: --wait uring is for 'hopbench run' only");
    if (o->pipeline > 1 && o->shared.block_wait)
        return hb_fail(err, -EINVAL,
                       "lab: --wait block is for one request at a time; drop --pipeline");
    if (o->count > 0) o->shared.duration_ns = 0;
    return 0;
}

/*
 * Without --wait, a lab whose reuse cells each have one kept connection per
 * thread and one request at a time, closed loop (-c equal to -t, no
 * --pipeline, no --rates), waits in them as --wait block does, client and
 * server alike: one blocking recv() per reply, the wait of the blocking floor
 * and of sockperf, where epoll adds a syscall per round trip on each side
 * (bench/RESULTS.md). Its connect cells poll either way.
 */
static void lab_wait_default(struct lab_opts *o)
{
    if (o->shared.wait_given || o->overload || o->pipeline > 1 || o->nrates > 0 ||
        o->shared.conns != o->shared.threads)
        return;
    o->shared.block_wait = true;
    o->wait_auto = true;
}

int cli_parse_lab(int argc, char **argv, struct lab_opts *o, FILE *out, struct hb_err *err)
{
    int rc;

    lab_defaults(o);
    rc = cmd_getopt(&cmd_lab, argc, argv, lab_option, o, out, err);
    if (rc != 0) return rc;
    if (optind < argc && strcmp(argv[optind], lab_words[0]) == 0) {
        optind++;
        /* Its cells are fixed: 64 B, connect mode, closed loop. */
        if (o->sizes_given || o->nrates > 0 || o->shared.block_wait || o->pipeline > 1)
            return hb_fail(err, -EINVAL,
                           "lab overload: %s does not apply (its cells are 64 B, "
                           "a new connection each, closed loop)",
                           o->sizes_given         ? "--sizes"
                           : o->nrates > 0        ? "--rates"
                           : o->shared.block_wait ? "--wait block"
                                                  : "--pipeline");
        lab_overload_defaults(o);
    }
    if (optind < argc) {
        struct suggest s;
        char near[64];
        suggest_init(&s, argv[optind]);
        suggest_add(&s, lab_words[0]);
        return hb_fail(err, -EINVAL, "lab: unexpected argument '%s'%s", argv[optind],
                       suggest_text(&s, false, near, sizeof(near)));
    }
    if (o->quick && !o->shared.duration_given) o->shared.duration_ns = 750 * NS_PER_MS;
    if (o->quick && !o->shared.warmup_given) o->shared.warmup_ns = 250 * NS_PER_MS;
    lab_verdict_defaults(o);
    if (o->shared.threads > o->shared.conns)
        return hb_fail(err, -EINVAL, "lab: --threads %u is more than --connections %u",
                       o->shared.threads, o->shared.conns);
    rc = lab_check_load(o, err);
    if (rc == 0) lab_wait_default(o);
    return rc;
}

/* What `hopbench lab` was asked: cli_parse_lab fills it. */
static struct lab_opts lab_opts;

static int lab_parse(int argc, char **argv, FILE *out, struct hb_err *err)
{
    return cli_parse_lab(argc, argv, &lab_opts, out, err);
}

static void lab_arm_emergency(const struct cmd_env *env, const struct lab *lab)
{
    snprintf(env->abort_dir, env->abort_cap, "%s", lab->dir);
    snprintf(env->abort_mark, env->abort_cap, "%s/%s", lab->dir, LEFTOVER_OWNER_FILE);
    if (lab->eps[1].kind == ENDPOINT_UNIX)
        snprintf(env->abort_sock, env->abort_cap, "%s", lab->eps[1].text + strlen("unix:"));
}

/* Where --netns put the server and the client; nothing without it. */
static void lab_netns_header(const struct lab *lab)
{
    char veth[sizeof(lab->eps[2].text) + 32];

    snprintf(veth, sizeof(veth), " for tcp-veth to %s", lab->eps[2].text);
    netns_describe(&lab->netns,
                   &(struct netns_words){ .same = "server and client in one network namespace "
                                                  "made for the lab (its own lo)",
                                          .in_a = "server",
                                          .in_b = "client in A for tcp and unix, in",
                                          .after_b = veth,
                                          .tail = "" },
                   stdout);
}

static void lab_header(const struct lab *lab, const struct lab_opts *o)
{
    char tcp[TEXT_SAFE_CAP], unix_ep[TEXT_SAFE_CAP];

    printf("hopbench %s lab: %s over %s and %s; server pid %ld\n", HOPBENCH_VERSION, o->proto->name,
           text_safe(tcp, sizeof(tcp), lab->eps[0].text),
           text_safe(unix_ep, sizeof(unix_ep), lab->eps[1].text), (long)lab->server_pid);
    lab_netns_header(lab);
    cmd_print_placement(&lab->place,
                        o->wait_auto ? "block in the reuse cells (the default with one kept "
                                       "connection per thread, closed loop), epoll in the "
                                       "connect cells"
                        : o->shared.block_wait ? "block"
                                               : "epoll",
                        NULL);
    printf("cells: %u connection(s), %u thread(s), %.2f s measured after %.2f s warm-up, %u run(s) "
           "each\n",
           o->shared.conns, o->shared.threads, (double)o->shared.duration_ns / 1e9,
           (double)o->shared.warmup_ns / 1e9, o->shared.reps);
    fflush(stdout);
}

/* Before the lab starts: its output files, its placement on one CPU, its fds and memory. */
static int lab_check(struct lab_opts *o, const char *json_path)
{
    int rc = cmd_check_outputs("lab", json_path, o->shared.csv_path, o->shared.html_path);

    if (rc != HB_EXIT_OK) return rc;
    if (o->shared.pin == PLACE_SPLIT && !o->shared.pin_given && place_allowed_cpus() < 2)
        o->shared.pin = PLACE_SAME;
    return cmd_check_budget("lab", lab_fd_need(o), lab_mem_need(o));
}

/*
 * The lab's directory and server. The handler is in place before the
 * temporary directory exists, and the stop signals are held until it knows
 * what to clean up: one that comes meanwhile is the first interrupt once they
 * are let through (the lab then stops before its first cell, and cleans up),
 * never an abort that cannot see the directory.
 */
static int lab_start(const struct cmd_env *env, struct lab *lab, const struct lab_opts *o)
{
    struct hb_err err = { 0 };
    sigset_t held, old;
    int rc;

    env->signals(CMD_SIG_STOP | CMD_SIG_CHILD);
    lab_clean_leftovers(stdout); /* of labs whose hopbench was killed with its watcher */
    stop_signal_set(&held);
    pthread_sigmask(SIG_BLOCK, &held, &old);
    rc = lab_init(lab, o, env->server, &err);
    if (rc == 0) lab_arm_emergency(env, lab);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0) return HB_EXIT_OK;
    lab_release(lab);
    return cmd_fail("lab", &err,
                    rc == -EPERM && o->netns != NETNS_NONE ? HB_EXIT_NOPERM : HB_EXIT_RUNTIME);
}

/*
 * After the cells: the tables, the summaries over the reps (printed with
 * --verbose) and the bottom line, both kept in meta for the evidence.
 */
static void lab_tables(const struct lab *lab, const struct lab_opts *o, struct report_meta *meta)
{
    bool verbose = o->shared.verbose;

    if (o->shared.reps > 1)
        printf("\nThe tables show each cell's run of median ops/s; the %s after them cover%s "
               "all %u runs.\n",
               verbose ? "summaries and the bottom line" : "bottom line", verbose ? "" : "s",
               o->shared.reps);
    report_lab_tables(stdout, lab->recs, lab->nrecs);
    if (o->overload) report_overload(stdout, lab->recs, lab->nrecs);
    meta->summary = o->shared.reps > 1 ? summary_lab(verbose ? stdout : NULL, lab->recs, lab->nrecs,
                                                     o->shared.seed)
                                       : NULL;
    meta->profile = profile_summary_records(stdout, lab->recs, lab->nrecs, o->shared.seed);
    (verbose ? report_errors : report_errors_only)(stdout, lab->recs, lab->nrecs);
    report_cut_short(stdout, lab->recs, lab->nrecs);
    if (!o->overload)
        meta->bottom =
            bottom_report(stdout, lab->recs, lab->nrecs, BOTTOM_BY_LAB, o->shared.seed, verbose);
}

/*
 * The evidence (--csv, --html) and the exit code: lab_run's failure (run_rc,
 * err), a --jsonl that could not be closed, or the runs' verdict.
 */
static int lab_finish(const struct cmd_env *env, const struct lab *lab, const char *json_path,
                      struct report_meta *meta, int run_rc, bool jsonl_failed,
                      const struct hb_err *err)
{
    const struct lab_opts *o = lab->opts;
    int rc;

    /*
     * Cut short: a stop signal, the reader gone, the server's exit while cells were left (not
     * one after the last cell: STOP_SERVER_EXIT alone), a load thread's failed wait, not
     * stdout failing now.
     */
    meta->interrupted = atomic_load(env->stop) == STOP_INTERRUPT || lab->reader_gone ||
                        lab->server_gone || cmd_wait_failed(lab->recs, lab->nrecs);
    rc = cmd_write_evidence(env, "lab", json_path, o->shared.csv_path, meta, lab->recs, lab->nrecs);
    if (rc == HB_EXIT_OK) rc = cmd_write_html("lab", o->shared.html_path, json_path);
    if (run_rc < 0)
        rc = cmd_fail("lab", err, HB_EXIT_RUNTIME);
    else if (rc == HB_EXIT_OK && jsonl_failed)
        rc = HB_EXIT_RUNTIME;
    else if (rc == HB_EXIT_OK)
        rc = cmd_verdict(lab->recs, lab->nrecs, meta->interrupted);
    if (rc == HB_EXIT_OK && cmd_stdout_failed()) rc = HB_EXIT_RUNTIME;
    return rc;
}

static int lab_exec(const struct cmd_env *env)
{
    struct lab_opts *o = &lab_opts;
    static struct lab lab;
    static struct progress progress;
    struct hb_err err = { 0 };
    struct machine m;
    char path[64], server[64];
    const char *json_path = cmd_evidence_path("lab", o->shared.json_path, path, sizeof(path));
    struct outfile jsonl_out;
    bool failed;
    int rc = lab_check(o, json_path), run_rc;
    struct profile *prof = NULL;

    if (rc == HB_EXIT_OK) rc = cmd_open_profile("lab", &o->shared, &prof);
    if (rc == HB_EXIT_OK) rc = lab_start(env, &lab, o);
    if (rc != HB_EXIT_OK) {
        profile_free(prof);
        return rc;
    }
    lab.prof = prof; /* lab_release frees it */
    probe_machine(&m);
    lab_header(&lab, o);
    report_sysctls(stdout, &m);
    snprintf(server, sizeof(server), "built-in %s (pid %ld)", o->proto->name, (long)lab.server_pid);
    struct report_meta meta = { .command = "lab",
                                .argc = env->argc,
                                .argv = env->argv,
                                .place = &lab.place,
                                .machine = &m,
                                .started_unix_s = env->started_unix_s,
                                .server = server,
                                .plan = cmd_plan_json(o->shared.reps, false, o->shared.seed,
                                                      o->shared.cooldown_ns) };
    lab.jsonl = cmd_open_jsonl("lab", o->shared.jsonl_path, &meta, &jsonl_out, &failed);
    if (failed) {
        json_decref(meta.plan);
        lab_release(&lab);
        return HB_EXIT_RUNTIME;
    }
    progress_start(&progress, STDERR_FILENO, !o->shared.quiet, lab_planned_runs(o),
                   lab_planned_ns(o));
    lab.progress = &progress;
    run_rc = lab_run(&lab, stdout, env->stop, &err);
    progress_stop(&progress);
    lab.progress = NULL;
    failed = lab.jsonl != NULL && cmd_close_jsonl("lab", &jsonl_out) != HB_EXIT_OK;
    lab.jsonl = NULL;
    /* the server may have been restarted (--close server): the last one's pid */
    snprintf(server, sizeof(server), "built-in %s (pid %ld)", o->proto->name, (long)lab.server_pid);
    lab_tables(&lab, o, &meta);
    rc = lab_finish(env, &lab, json_path, &meta, run_rc, failed, &err);
    json_decref(meta.plan);
    json_decref(meta.summary);
    json_decref(meta.bottom);
    json_decref(meta.profile);
    lab_release(&lab);
    return rc;
}

/* Before main: lab's help and summary with the protocols the registry has. */
__attribute__((constructor)) static void lab_help_build(void)
{
    char others[128];

    proto_help(PROTO_HELP_LAB, lab_proto_help, sizeof(lab_proto_help), 24, 24);
    snprintf(lab_summary, sizeof(lab_summary),
             "the default: starts its own echo server on TCP loopback and on a Unix socket,\n"
             "measures {tcp, unix} x {connect, reuse} x {64 B, 4 KiB, 64 KiB}, each cell 5\n"
             "times, prints one table per size, each unix/tcp ratio with its interval, and\n"
             "writes the evidence as JSON; --proto %s runs\n"
             "it on that protocol, --rates adds open-loop runs, 'lab overload' shows how\n"
             "each transport fails under overload",
             proto_help(PROTO_HELP_LAB_OTHERS, others, sizeof(others), 0, 0));
}

const struct command cmd_lab = {
    .name = "lab",
    .synopsis = "[lab] [LAB OPTIONS]",
    .summary = lab_summary,
    .usage = lab_usage,
    .options = lab_options,
    .words = lab_words,
    .values = lab_values,
    .tail = NULL,
    .column = 24,
    .parse = lab_parse,
    .exec = lab_exec,
};
