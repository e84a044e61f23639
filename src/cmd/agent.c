/*
 * agent: `hopbench agent`, beside a server, until SIGINT or SIGTERM: it
 * answers 'run --agent' with the server side (agent/agent.c); SIGUSR1 moves
 * its schedule on.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "agent/agent.h"
#include "cmd/options.h"
#include "cmd/session.h"
#include "util.h"

static const char agent_usage[] =
    "usage: hopbench agent [--listen ADDR:PORT | --listen unix:PATH] [--token-file FILE]\n"
    "                      [--schedule FILE]\n"
    "\n"
    "Runs beside a server (on its host, in its namespace or pod) until SIGINT or SIGTERM and\n"
    "answers 'hopbench run --agent' from this host or another: at each run's window start\n"
    "and end it observes the server side as a local run does (CPU and memory of the services\n"
    "the run names, the loaded hop's sockets by state, the kernel's TCP counters, the\n"
    "machine) and sends the figures back. Prints 'hopbench agent: listening on ENDPOINT'\n"
    "once it listens (a port 0 replaced by the kernel's choice), one line per state of the\n"
    "schedule and per refused or closed connection, naming its peer, on stderr. Up to 16\n"
    "connections at once, each at most 5 s: its request's length within 1 s of the accept\n"
    "and the whole request, at most 8 KiB, within 2 s; a newcomer to 16 closes the oldest\n"
    "without a signed request. Every request carries an HMAC-SHA256 of the agent's fresh\n"
    "nonce keyed by the shared token, which never crosses the wire (docs/agent.md).\n"
    "\n";

static const struct cmd_option agent_options[] = {
    { "listen", 0, "EP",
      "where to listen: ADDR:PORT, tcp://ADDR:PORT or unix:PATH\n"
      "(default " AGENT_DEFAULT_LISTEN "; an address given here may be\n"
      "any, the default is loopback only)",
      OPT_LISTEN },
    { "token-file", 0, "FILE",
      "the shared token: the file's first line, 16 to 1023 bytes; only\n"
      "its owner may read the file (default: HOPBENCH_AGENT_TOKEN)",
      OPT_TOKEN_FILE },
    { "schedule", 0, "FILE",
      "configurations to apply and announce in turn, a line each: NAME\n"
      "DURATION COMMAND (seconds, or 'next': until SIGUSR1; the\n"
      "command, run by /bin/sh -c, must exit 0 before NAME is\n"
      "announced; '-' for none); after the last, no state",
      OPT_SCHEDULE },
    { "help", 'h', NULL, "this text", 'h' },
    CMD_END,
};

static const char agent_tail[] =
    "\n"
    "Exit codes: 0 stopped by a signal, 1 cannot listen or a configuration's command failed,\n"
    "64 bad usage (a bad token or schedule too).\n";

/* Where it listens, its token, its schedule. */
static struct agent_cli {
    struct agent_opts agent;
    const char *token_file; /* --token-file, or NULL: HOPBENCH_AGENT_TOKEN */
} agent_cli;

/* --listen: an endpoint, or ADDR:PORT as tcp://ADDR:PORT. */
static int agent_listen(const char *val, struct endpoint *ep, struct hb_err *err)
{
    char buf[300];

    if (strncmp(val, "tcp://", 6) == 0 || strncmp(val, "unix:", 5) == 0)
        return endpoint_parse(ep, val, err);
    if (snprintf(buf, sizeof(buf), "tcp://%s", val) >= (int)sizeof(buf))
        return hb_fail(err, -EINVAL, "--listen: too long");
    return endpoint_parse(ep, buf, err);
}

static int agent_option(int c, const char *val, void *opts, struct hb_err *err)
{
    struct agent_cli *o = opts;
    struct agent_opts *a = &o->agent;

    if (c == OPT_LISTEN) {
        if (agent_listen(val, &a->listen, err) < 0) return -EINVAL;
        a->listen_given = true;
    }
    if (c == OPT_TOKEN_FILE) o->token_file = val;
    if (c == OPT_SCHEDULE) a->schedule_path = val;
    return 0;
}

static int agent_parse(int argc, char **argv, FILE *out, struct hb_err *err)
{
    struct agent_cli *o = &agent_cli;
    struct agent_opts *a = &o->agent;
    int rc;

    memset(o, 0, sizeof(*o));
    rc = cmd_getopt(&cmd_agent, argc, argv, agent_option, o, out, err);
    if (rc != 0) return rc;
    if (optind < argc)
        return hb_fail(err, -EINVAL, "agent: unexpected argument '%s'", argv[optind]);
    if (!a->listen_given && endpoint_parse(&a->listen, AGENT_DEFAULT_LISTEN, err) < 0)
        return -EINVAL;
    return agent_token_read(&a->token, o->token_file,
                            o->token_file != NULL ? "agent: --token-file" : "agent", err);
}

/* SIGUSR1: the schedule moves on. */
static atomic_int agent_next;

static void on_next(int sig)
{
    UNUSED(sig);
    atomic_store(&agent_next, 1);
}

static int agent_exec(const struct cmd_env *env)
{
    struct hb_err err = { 0 };
    struct sigaction sa;
    int rc;

    env->signals(CMD_SIG_STOP);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_next;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    rc = agent_run(&agent_cli.agent, env->stop, &agent_next, stdout, stderr, &err);
    if (rc == -EINVAL) return cmd_fail("agent", &err, HB_EXIT_USAGE);
    if (rc < 0) return cmd_fail("agent", &err, HB_EXIT_RUNTIME);
    return HB_EXIT_OK;
}

const struct command cmd_agent = {
    .name = "agent",
    .synopsis = "agent [--listen ADDR:PORT] [--token-file FILE] [--schedule FILE]",
    .summary = "runs beside a server and gives 'run --agent' on another host the server side",
    .usage = agent_usage,
    .options = agent_options,
    .tail = agent_tail,
    .column = 24,
    .parse = agent_parse,
    .exec = agent_exec,
};
