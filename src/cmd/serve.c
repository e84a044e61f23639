/*
 * serve: `hopbench serve PROTO --listen ENDPOINT...`, a built-in reference
 * server (server/frame.c and the protocol's part) until SIGINT or SIGTERM.
 */
#include "cmd/serve.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/options.h"
#include "cmd/session.h"
#include "registry.h"
#include "server/server.h"
#include "util.h"

/* serve's usage: its head, the protocols' words (serve_help_build), its tail. */
static const char serve_usage_head[] =
    "usage: hopbench serve PROTO --listen ENDPOINT [--listen ENDPOINT...] [OPTIONS]\n"
    "\n"
    "Runs a built-in reference server until SIGINT or SIGTERM, then removes the socket\n"
    "files it made (a path that no longer holds the socket it bound is left alone: another\n"
    "server may have taken it over). PROTO:";
static const char serve_usage_tail[] =
    ".\n"
    "Prints 'hopbench: listening on ENDPOINT' per listener (a TCP port 0 is replaced by\n"
    "the port the kernel chose), then, once every listener is up, 'hopbench: PROTO server,\n"
    "N threads, pid PID, ...': a script can wait for that line before it starts a client.\n"
    "Before that, 'hopbench: limits: ...' gives the backlog, the fd limit (the soft\n"
    "RLIMIT_NOFILE, raised to the hard limit at start), --max-conns, and the most buffer\n"
    "memory one connection can hold (given back when it closes, but for what each thread\n"
    "keeps for reuse). A connection over --max-conns, or one that finds the server out\n"
    "of fds, is accepted and closed at once; a request larger than the protocol's limit\n"
    "gets its error reply (http 431, redis -ERR) and a close. The 'stopped:' line at\n"
    "exit counts both kinds of refused connections.\n"
    "\n";

/* The words its options take, which their parsers check against. */
static const struct cmd_value serve_values[] = { { OPT_PIN, cmd_pin_values },
                                                 { OPT_WAIT, cmd_wait_values },
                                                 { 0, NULL } };

static char serve_usage[2048];
static char serve_body_help[128];

/* The texts that name the protocols, from the registry's entries, before main. */
__attribute__((constructor)) static void serve_help_build(void)
{
    size_t len = sizeof(serve_usage_head) - 1;
    const char *line = strrchr(serve_usage_head, '\n') + 1;
    char names[96];

    memcpy(serve_usage, serve_usage_head, len);
    proto_help(PROTO_HELP_SERVE, serve_usage + len, sizeof(serve_usage) - len,
               (unsigned)strlen(line), 0);
    len = strlen(serve_usage);
    snprintf(serve_usage + len, sizeof(serve_usage) - len, "%s", serve_usage_tail);
    snprintf(serve_body_help, sizeof(serve_body_help),
             "%s: answer with a B-byte body instead of the greeting",
             proto_help(PROTO_HELP_REPLY_BODY, names, sizeof(names), 0, 0));
}

static const struct cmd_option serve_options[] = {
    { "listen", 'l', "EP", "where to listen; repeat for several endpoints", 'l' },
    { "backlog", 0, "N",
      "listen(2) backlog (default: net.core.somaxconn, the kernel's\n"
      "cap for TCP and Unix sockets alike)",
      OPT_BACKLOG },
    { "max-conns", 0, "N",
      "connections open at once (default: the fd limit less the fds\n"
      "the server needs for itself)",
      OPT_MAX_CONNS },
    { "threads", 't', "N", "worker threads (default: one per CPU the server may use)", 't' },
    { "socket-mode", 0, "M",
      "permission bits of socket files, octal (default 0600); not\n"
      "for unix:@name: an abstract socket has no permissions, any\n"
      "local user can connect to it (a warning says so on stderr)",
      OPT_SOCKET_MODE },
    { "pin", 0, "P",
      "none | same (the client's CPU) | split (the second half of\n"
      "the CPUs) (default none); use the same --pin for run",
      OPT_PIN },
    { "allow-remote", 0, NULL, "allow a non-loopback TCP address", OPT_ALLOW_REMOTE },
    { "reuseport", 0, NULL,
      "TCP: SO_REUSEPORT, so that several serve processes listen on\n"
      "one port (more connections than one process has fds for: the\n"
      "kernel spreads them by address; docs/connections.md)",
      OPT_REUSEPORT },
    { "close-after", 0, "B",
      "close each connection first once B bytes were sent on it (one\n"
      "echo of B bytes): the server holds TIME_WAIT (run --close server)",
      OPT_CLOSE_AFTER },
    { "body-size", 0, "B", serve_body_help, OPT_BODY_SIZE },
    { "delay-us", 0, "D",
      "service time: every reply waits D µs in the worker thread that\n"
      "made it (with --threads N: at most N / D requests per second;\n"
      "echo has no message boundaries: per read)",
      OPT_DELAY_US },
    { "stall-every", 0, "N", "with --stall-ms M: after every N requests (server-wide), the",
      OPT_STALL_EVERY },
    { "stall-ms", 0, "M", "worker that answered the Nth stalls M ms (to test a measurement)",
      OPT_STALL_MS },
    { "wait", 0, "W",
      "epoll (default) or block: a worker whose only connection is a\n"
      "kept one waits for its next request in recv, as a blocking\n"
      "server would, and polls for new connections after 1 ms of\n"
      "requests or 20 ms without one; every transport alike",
      OPT_WAIT },
    { "help", 'h', NULL, "this text", 'h' },
    CMD_END,
};

static int serve_option(int c, const char *val, void *opts, struct hb_err *err)
{
    struct serve_opts *o = opts;
    uint64_t v = 0;
    int rc = 0;

    switch (c) {
    case 'l':
        rc = opt_endpoint(o->eps, &o->neps, val, err);
        break;
    case OPT_BACKLOG:
        rc = opt_uint("--backlog", val, 1, 1 << 20, &v, err);
        o->backlog = (int)v;
        break;
    case OPT_SOCKET_MODE: {
        char *end = NULL;
        unsigned long m = strtoul(val, &end, 8);
        if (val[0] == '\0' || *end != '\0' || m > 0777 || val[0] == '-')
            rc = hb_fail(err, -EINVAL,
                         "--socket-mode: '%s' is not octal permission bits (e.g. 0600)", val);
        o->socket_mode = (unsigned)m;
        o->socket_mode_given = true;
        break;
    }
    case OPT_PIN:
        rc = opt_pin(val, &o->pin, err);
        break;
    case OPT_ALLOW_REMOTE:
        o->allow_remote = true;
        break;
    case OPT_REUSEPORT:
        o->reuseport = true;
        break;
    case 't':
        rc = opt_uint("--threads", val, 1, 1024, &v, err);
        o->threads = (unsigned)v;
        break;
    case OPT_CLOSE_AFTER: {
        size_t sz = 0;
        rc = opt_size("--close-after", val, &sz, err);
        o->close_after = sz;
        break;
    }
    case OPT_BODY_SIZE:
        rc = opt_size("--body-size", val, &o->body_size, err);
        break;
    case OPT_DELAY_US:
        rc = opt_uint("--delay-us", val, 0, 60000000, &v, err);
        o->delay_ns = v * 1000;
        break;
    case OPT_STALL_EVERY:
        rc = opt_uint("--stall-every", val, 1, UINT64_MAX / 2, &o->stall_every, err);
        break;
    case OPT_STALL_MS:
        rc = opt_uint("--stall-ms", val, 1, 600000, &v, err);
        o->stall_ns = v * NS_PER_MS;
        break;
    case OPT_WAIT:
        rc = opt_wait(val, &o->block_wait, NULL, err);
        break;
    case OPT_MAX_CONNS:
        rc = opt_uint("--max-conns", val, 1, 1 << 30, &v, err);
        o->max_conns = (unsigned)v;
        break;
    default:
        rc = -EINVAL;
    }
    return rc;
}

/* serve --body-size: the protocols whose server answers with a body of a chosen size. */
static bool has_reply_body(const struct proto_entry *pe, const char *unused)
{
    (void)unused;
    return pe->reply_body;
}

int cli_parse_serve(int argc, char **argv, struct serve_opts *o, FILE *out, struct hb_err *err)
{
    char near[160];
    int rc;

    memset(o, 0, sizeof(*o));
    o->socket_mode = 0600;
    rc = cmd_getopt(&cmd_serve, argc, argv, serve_option, o, out, err);
    if (rc != 0) return rc;
    if (optind >= argc) return hb_fail(err, -EINVAL, "serve: missing PROTO (%s)", proto_names());
    o->proto = proto_find(argv[optind]);
    if (o->proto == NULL)
        return hb_fail(err, -EINVAL, "serve: unknown protocol '%s' (known: %s)%s", argv[optind],
                       proto_names(), cmd_suggest_proto(argv[optind], true, near, sizeof(near)));
    if (o->proto->server == NULL)
        return hb_fail(err, -EINVAL,
                       "serve: %s has no built-in server; run %s against a real one "
                       "(hopbench run %s ENDPOINT)",
                       o->proto->name, o->proto->name, o->proto->name);
    optind++;
    if (o->body_size > 0 && !o->proto->reply_body) {
        char names[128];
        proto_list(names, sizeof(names), has_reply_body, NULL, NULL);
        return hb_fail(err, -EINVAL, "serve %s: --body-size is for %s", o->proto->name, names);
    }
    if (optind < argc)
        return hb_fail(err, -EINVAL, "serve: unexpected argument '%s' (use --listen ENDPOINT)",
                       argv[optind]);
    if (o->neps == 0) return hb_fail(err, -EINVAL, "serve: give at least one --listen ENDPOINT");
    if ((o->stall_every > 0) != (o->stall_ns > 0))
        return hb_fail(err, -EINVAL, "serve: give --stall-every and --stall-ms together");
    for (unsigned i = 0; i < o->neps && o->socket_mode_given; i++)
        if (o->eps[i].kind == ENDPOINT_ABSTRACT)
            return hb_fail(err, -EINVAL,
                           "serve: --socket-mode cannot apply to %s: an abstract socket has no "
                           "file, so no permissions, and any local user can connect to it (use "
                           "unix:/path for a socket with permissions)",
                           o->eps[i].text);
    return opt_check_remote(o->eps, o->neps, o->allow_remote, err);
}

/* What `hopbench serve` was asked: cli_parse_serve fills it. */
static struct serve_opts serve_opts;

static int serve_parse(int argc, char **argv, FILE *out, struct hb_err *err)
{
    return cli_parse_serve(argc, argv, &serve_opts, out, err);
}

/* The server serve_opts asks for, on the CPUs --pin gives it. 0, or -EINVAL with err set. */
static int serve_cfg(struct serve_opts *o, struct place *pl, struct server_cfg *cfg,
                     struct hb_err *err)
{
    const int *cpus;
    unsigned ncpus;

    if (place_init(pl, o->pin, err) < 0) return -EINVAL;
    /* same: the client's CPU; split: the server's half (see place.h). */
    cpus = o->pin == PLACE_SAME ? pl->client : pl->server;
    ncpus = o->pin == PLACE_SAME ? pl->nclient : pl->nserver;
    *cfg = (struct server_cfg){
        .proto = o->proto->server,
        .eps = o->eps,
        .neps = o->neps,
        .threads = o->threads             ? o->threads
                   : ncpus                ? ncpus
                   : place_allowed_cpus() ? place_allowed_cpus()
                                          : 1,
        .backlog = o->backlog,
        .max_conns = o->max_conns,
        .mode = o->socket_mode,
        .allow_remote = o->allow_remote,
        .reuseport = o->reuseport,
        .cpus = ncpus ? cpus : NULL,
        .ncpus = ncpus,
        .stop_on_sigint = true,
        .close_after = o->close_after,
        .body_size = o->body_size,
        .delay_ns = o->delay_ns,
        .stall_every = o->stall_every,
        .stall_ns = o->stall_ns,
        .block_wait = o->block_wait,
    };
    return 0;
}

/* Once every listener is up: where, the limits, then the line scripts wait for. */
static void serve_announce(const struct serve_opts *o, const struct server *srv,
                           const struct server_cfg *cfg)
{
    for (unsigned i = 0; i < o->neps; i++) {
        char ep[TEXT_SAFE_CAP];
        printf("hopbench: listening on %s\n", text_safe(ep, sizeof(ep), o->eps[i].text));
        /* Nothing guards it: the kernel checks no permission on an abstract name. */
        if (o->eps[i].kind == ENDPOINT_ABSTRACT)
            fprintf(stderr,
                    "hopbench serve: warning: %s is an abstract socket: it has no permissions, "
                    "any local user (any process in this network namespace) can connect to it\n",
                    ep);
    }
    printf("hopbench: limits: backlog %d, fd limit %llu, max conns %u, %zu B per connection, "
           "%zu B kept per thread\n",
           srv->backlog, (unsigned long long)srv->nofile, srv->max_conns, srv->conn_bytes,
           SERVER_WARM_BYTES);
    /* Every listener is up (server_open): scripts wait for this line (serve --help, README). */
    printf("hopbench: %s server, %u threads, pid %ld, pin %s, wait %s\n", o->proto->name,
           cfg->threads, (long)getpid(), place_name(o->pin), o->block_wait ? "block" : "epoll");
    fflush(stdout);
}

static int serve_exec(const struct cmd_env *env)
{
    struct serve_opts *o = &serve_opts;
    struct hb_err err = { 0 };
    struct server_cfg cfg;
    struct server srv;
    struct place pl;
    sigset_t stop;
    int rc;

    UNUSED(env);
    if (serve_cfg(o, &pl, &cfg, &err) < 0) return cmd_fail("serve", &err, HB_EXIT_USAGE);
    /*
     * SIGINT and SIGTERM are held from before the first socket file exists:
     * one that comes while we start up (or print, below) waits for server_run's
     * sigwait and stops the server cleanly, instead of killing it with its
     * socket files in place. SIGPIPE is ignored for the same reason: a stdout
     * nobody reads any more makes printf fail with EPIPE, and serving goes on.
     */
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (server_open(&srv, &cfg, &err) < 0) return cmd_fail("serve", &err, HB_EXIT_RUNTIME);
    serve_announce(o, &srv, &cfg);
    rc = server_run(&srv, &err);
    server_close(&srv, true);
    if (rc < 0) return cmd_fail("serve", &err, HB_EXIT_RUNTIME);
    printf("hopbench: stopped: %llu connections, %llu bytes in, %llu bytes out, %llu resets, "
           "%llu errors, %llu requests, %llu bad requests, %llu over max conns, "
           "%llu out of fds\n",
           (unsigned long long)srv.stats.accepted, (unsigned long long)srv.stats.bytes_in,
           (unsigned long long)srv.stats.bytes_out, (unsigned long long)srv.stats.resets,
           (unsigned long long)srv.stats.errors, (unsigned long long)srv.stats.requests,
           (unsigned long long)srv.stats.bad, (unsigned long long)srv.stats.over_max,
           (unsigned long long)srv.stats.no_fds);
    return HB_EXIT_OK;
}

const struct command cmd_serve = {
    .name = "serve",
    .synopsis = "serve PROTO --listen ENDPOINT [--listen ENDPOINT...] [OPTIONS]",
    .summary = "runs a built-in reference server until SIGINT or SIGTERM",
    .usage = serve_usage,
    .options = serve_options,
    .words = cmd_served_words,
    .values = serve_values,
    .tail = NULL,
    .column = 24,
    .parse = serve_parse,
    .exec = serve_exec,
};
