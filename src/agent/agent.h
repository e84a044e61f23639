/*
 * agent: `hopbench agent`, beside the server (docs/agent.md). It answers,
 * from one poll loop, up to AGENT_CONNS connections at once, each bounded in
 * time and bytes (wire.h) and none waiting on another: a peer must send its
 * request's length within AGENT_HEAD_MS and the whole request within
 * AGENT_BODY_MS of its accept, and a newcomer to a full agent closes the
 * oldest connection whose request has not been taken as the token's (so
 * peers that cannot authenticate cannot hold every place), the
 * questions of a `hopbench run --agent` on this host or another: "begin"
 * starts an observation of the server side as observe.c makes one for a local
 * run (each named service's CPU and memory, the sockets of each watched hop,
 * sampled; the kernel counters; the machine's CPU), "end" ends it and sends
 * its figures as JSON, "state" says which configuration of the schedule is
 * active. The schedule (--schedule FILE) is a list of configurations, each a
 * name, a duration (or until SIGUSR1) and a command that applies it; the
 * agent runs each command in turn and announces its name once it succeeded.
 */
#ifndef HOPBENCH_AGENT_AGENT_H
#define HOPBENCH_AGENT_AGENT_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "agent/client.h"
#include "agent/wire.h"
#include "endpoint.h"
#include "util.h"

#define AGENT_SCHED_MAX      64   /* configurations in a schedule */
#define AGENT_CMD_MAX        1024 /* a configuration's command, with its NUL */
#define AGENT_SESSIONS       16   /* observations begun and not ended */
#define AGENT_SESSION_TTL_S  3600 /* past this an unended one may be dropped for a new one */
#define AGENT_CONN_MS        5000 /* one connection, accept to close */
#define AGENT_HEAD_MS        1000 /* accept to the request's 4 length bytes in */
#define AGENT_BODY_MS        2000 /* accept to the whole request in */
#define AGENT_CONNS          16   /* connections served at once */
#define AGENT_PEER_MAX       64   /* a peer's text in the log, with its NUL */
#define AGENT_DEFAULT_LISTEN "tcp://127.0.0.1:7460"

/* One configuration of a schedule. */
struct agent_step {
    char name[AGENT_NAME_MAX];
    uint64_t duration_ns; /* 0: until the agent gets SIGUSR1 */
    char cmd[AGENT_CMD_MAX];
};

struct agent_schedule {
    struct agent_step step[AGENT_SCHED_MAX];
    unsigned n;
};

/*
 * Parses a schedule's text: a line per configuration, "NAME DURATION
 * COMMAND", where NAME is a state name (agent_name_valid), DURATION seconds
 * ("30", "2.5", "30s") or "next" (until SIGUSR1), COMMAND the rest of the line
 * for /bin/sh -c ("-" or nothing: none). Blank lines and lines beginning with
 * '#' are skipped. Returns 0, or -EINVAL with err naming the line.
 */
int agent_schedule_parse(const char *text, struct agent_schedule *s, struct hb_err *err);

struct agent_opts {
    struct endpoint listen;
    bool listen_given; /* an address named explicitly may be other than loopback */
    struct agent_token token;
    const char *schedule_path; /* or NULL */
};

/*
 * Runs the agent until *stop is set: listens (prints "hopbench agent:
 * listening on EP" to out once it does), follows the schedule (each
 * *next set moves it on), answers. One line on log per state and per
 * refused or closed connection, naming its peer (ADDR:PORT, or a Unix
 * socket's pid and uid). Returns 0, or a negative errno with err set: it cannot
 * listen, the schedule cannot be read, or a configuration's command failed.
 */
int agent_run(const struct agent_opts *o, atomic_int *stop, atomic_int *next, FILE *out, FILE *log,
              struct hb_err *err);

#endif
