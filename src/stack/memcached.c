/*
 * The memcached stack: Debian's memcached twice, the same settings but where
 * it listens (memcached's -s turns its TCP off): one on its own port on
 * 127.0.0.1, one on its own Unix socket; set and get at pipeline 1 and 16,
 * tcp against unix, each measured as its service (its cgroup: CPU per op,
 * PSS, working set). memcached's text protocol has no authentication without
 * SASL: as root the stack runs them as the user memcache (nobody when
 * missing), the socket in a 0700 directory of that user's, and the whole
 * stack in a network namespace of its own (stack_def.private_net), so no
 * other local user reaches either while it runs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "stack/kv.h"
#include "stack/measure.h"
#include "stack/stack.h"

#define MEMCACHED "/usr/bin/memcached"

static const char memcached_help[] =
    "usage: hopbench stack memcached [--short] [--reps N] [-d S] [--warmup S] [-c N]\n"
    "                                [--jsonl FILE] [--csv FILE] [-q] [--hold]\n"
    "\n"
    "Builds: Debian's memcached (package memcached) twice with the same settings (64 MiB,\n"
    "4 threads, no UDP): one on its own port on 127.0.0.1, one on its own Unix socket in\n"
    "a private temporary directory (memcached's -s turns its TCP off); each in its own\n"
    "cgroups made for the run under hopbench's own (each v1 hierarchy, and v2).\n"
    "memcached's text protocol has no authentication (only SASL, on its binary protocol):\n"
    "any local user who reaches its port or socket reads and writes every item. So as\n"
    "root both run as the user memcache (nobody when missing), the socket (mode 0700) in\n"
    "a 0700 directory of that user's, and the stack in a network namespace of its own\n"
    "(its own loopback: no other local user reaches the port); not root, or with --agent,\n"
    "a warning says that the port is open to every local user while the stack runs.\n"
    "Measures: 'hopbench run memcached' over tcp and over unix, set then get (1000 keys,\n"
    "64 B values, every key set before each get run), at pipeline 1 and at pipeline 16,\n"
    "each transport --reps times in ABBA order; per cell, for tcp, unix and unix/tcp (a\n"
    "95 % interval, '~' when not significant): ops/s, p50, p99, CPU per op of the client,\n"
    "of memcached (the services memcached-tcp and memcached-unix, their cgroups' usage:\n"
    "the one not loaded stays near 0), their sum and the system; memcached's PSS and\n"
    "working set; TIME_WAIT per side. Every reply is checked (a get must read the 64 B it\n"
    "set); an error fails the gate (exit 2).\n"
    "Takes: 4 cells x 2 transports x --reps (default 4) x (-d 2 s + --warmup 0.5 s), about\n"
    "90 s; --short (2 reps of 0.3 s after 0.1 s) about 15 s and is a check, not a result.\n"
    "\n" STACK_HELP_OPTIONS_C(
        "  -c, --connections N  connections of each run (default 1, a ping-pong: it "
        "reproduces\n                   no study)\n");

static const char *const memcached_needs[] = { MEMCACHED, "memcached", NULL };

/* What a local user reaching memcached's port could do (stack_def.private_net). */
static const struct stack_private memcached_private = {
    .port = "memcached",
    .why = "memcached's text protocol has no authentication",
    .risk = "read and write every item",
};

/* Where the two memcached listen, and who they run as. */
struct stack_mc {
    unsigned port; /* memcached-tcp's, on 127.0.0.1 */
    char sock[PATH_MAX];
    struct login who;
};

/* Starts memcached as service name, listening where `where` (its -l/-p or -s words) says. */
static int mc_start(struct stack_ctx *c, const struct stack_mc *m, const char *name,
                    const char *const *where, struct hb_err *err)
{
    const char *argv[16];
    unsigned n = 0;

    argv[n++] = MEMCACHED;
    for (; *where != NULL; where++)
        argv[n++] = *where;
    argv[n++] = "-U"; /* no UDP */
    argv[n++] = "0";
    argv[n++] = "-m";
    argv[n++] = "64";
    argv[n++] = "-t";
    argv[n++] = "4";
    argv[n] = NULL;
    struct sup_spec spec = { .name = name, .argv = argv, .as = m->who.as };
    return sup_start(&c->sup, &spec, err);
}

static int mc_start_both(struct stack_ctx *c, struct stack_mc *m, struct hb_err *err)
{
    char dir[PATH_MAX - 64], port[16], ep[PATH_MAX + 8];
    struct sup_check checks[2];
    int rc = login_user(&m->who, "memcached", "memcache", err);

    if (rc == 0) rc = stack_free_port(&m->port, err);
    if (rc == 0) rc = sup_mkdir(&c->sup, "memcached", m->who.as, err);
    if (rc < 0) return rc;
    sup_path(&c->sup, "memcached", dir, sizeof(dir));
    snprintf(m->sock, sizeof(m->sock), "%s/memcached.sock", dir);
    snprintf(port, sizeof(port), "%u", m->port);
    const char *tcp[] = { "-l", "127.0.0.1", "-p", port, NULL };
    const char *unix_sock[] = { "-s", m->sock, "-a", "0700", NULL };
    rc = mc_start(c, m, "memcached-tcp", tcp, err);
    if (rc == 0) rc = mc_start(c, m, "memcached-unix", unix_sock, err);
    if (rc < 0) return rc;
    memset(checks, 0, sizeof(checks)); /* a get of key:0: END on a fresh server */
    snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%u", m->port);
    rc = endpoint_parse(&checks[0].ep, ep, err);
    snprintf(ep, sizeof(ep), "unix:%s", m->sock);
    if (rc == 0) rc = endpoint_parse(&checks[1].ep, ep, err);
    if (rc < 0) return rc;
    checks[0].svc = "memcached-tcp";
    checks[1].svc = "memcached-unix";
    checks[0].proto = checks[1].proto = "memcached";
    rc = sup_wait_ready(&c->sup, checks, 2, 10 * NS_PER_S, c->stop, err);
    if (rc < 0) return rc;
    fprintf(c->out, "memcached: no authentication (its text protocol has none); user %s\n",
            m->who.user);
    return 0;
}

/* A cell's run child: both endpoints, the command over 1000 keys, its pipeline (stack_kv_args). */
static void mc_args(struct stack_args *a, const void *srv, const char *cmd, unsigned pipeline)
{
    const struct stack_mc *m = srv;

    stack_arg(a, "hopbench");
    stack_arg(a, "run");
    stack_arg(a, "memcached");
    stack_arg(a, "tcp://127.0.0.1:%u", m->port);
    stack_arg(a, "unix:%s", m->sock);
    stack_arg(a, "--command");
    stack_arg(a, "%s", cmd);
    stack_arg(a, "--keys");
    stack_arg(a, "1000");
    stack_arg(a, "--pipeline");
    stack_arg(a, "%u", pipeline);
}

static int memcached_run(struct stack_ctx *c, struct hb_err *err)
{
    static const char *const names[] = { "memcached-tcp", "memcached-unix", NULL };
    static struct stack_mc m;
    int rc = mc_start_both(c, &m, err);

    if (rc == -EINTR) {
        c->interrupted = true;
        return 0;
    }
    if (rc < 0) return rc;
    fprintf(c->out,
            "hopbench stack memcached: memcached-tcp pid %ld on tcp://127.0.0.1:%u, "
            "memcached-unix pid %ld on unix:%s\n"
            "cells: set, get x pipeline 1, 16; tcp and unix %u times each in ABBA order, "
            "%.2f s after %.2f s warm-up, %u connection(s)\n",
            (long)sup_find(&c->sup, "memcached-tcp")->pid, m.port,
            (long)sup_find(&c->sup, "memcached-unix")->pid, m.sock, c->reps,
            (double)c->duration_ns / 1e9, (double)c->warmup_ns / 1e9, c->conns);
    fflush(c->out);
    return stack_kv_cells(c, names, mc_args, &m, err);
}

const struct stack_def stack_memcached = {
    .name = "memcached",
    .summary = "memcached: set and get at pipeline 1 and 16, tcp vs unix, its CPU per op "
               "(no authentication: its own network namespace)",
    .help = memcached_help,
    .needs = memcached_needs,
    .front_unix = true,
    .private_net = &memcached_private,
    .run = memcached_run,
};
