/*
 * The redis stack: Debian's redis-server on its own TCP port on 127.0.0.1
 * and its own Unix socket, nothing saved to disk; SET and GET at pipeline 1
 * and 16, tcp against unix, with redis-server measured as the service redis
 * (its cgroup: CPU per op, PSS, working set). It runs as the user redis with
 * a password made for the stack (login.c), which every connection AUTHs with:
 * no other local user may use it, over TCP or its socket.
 */
#include "stack/redis.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "stack/kv.h"
#include "stack/measure.h"
#include "stack/stack.h"

#define REDIS_SERVER "/usr/bin/redis-server"

static const char redis_help[] =
    "usage: hopbench stack redis [--short] [--reps N] [-d S] [--warmup S] [-c N]\n"
    "                            [--jsonl FILE] [--csv FILE] [-q] [--hold]\n"
    "\n"
    "Builds: Debian's redis-server (package redis-server) under a configuration hopbench\n"
    "writes into a private temporary directory: its own port on 127.0.0.1 and its own\n"
    "Unix socket there, no RDB or AOF, its log there; in its own cgroups made for the run\n"
    "under hopbench's own (each v1 hierarchy, and v2). As root it runs as the user redis\n"
    "(nobody when missing), its socket and configuration in a 0700 directory of redis's,\n"
    "with requirepass: a random password made for the stack, in a 0600 file there that\n"
    "the run children get with --password-file (each connection sends AUTH first).\n"
    "Measures: 'hopbench run redis' over tcp and over unix, SET then GET (1000 keys, 64 B\n"
    "values), at pipeline 1 and at pipeline 16, 50 connections as redis-benchmark's clients\n"
    "(-c), each transport --reps times in ABBA order;\n"
    "per cell, for tcp, unix and unix/tcp (a 95 % interval, '~' when not significant):\n"
    "ops/s, p50, p99, CPU per op of the client, of redis-server (the service redis, its\n"
    "cgroup's usage), their sum and the system; redis-server's PSS and working set;\n"
    "TIME_WAIT per side (+ what each run added); the noisy runs; the CPUs each side kept busy\n"
    "and what saturated (the machine, the client, redis-server on its one thread). Every\n"
    "reply is checked; an error fails the gate (exit 2).\n"
    "Takes: 4 cells x 2 transports x --reps (default 4) x (-d 2 s + --warmup 0.5 s), about\n"
    "90 s; --short (2 reps of 0.3 s after 0.1 s) about 15 s and is a check, not a result.\n"
    "\n" STACK_HELP_OPTIONS("50");

static const char *const redis_needs[] = { REDIS_SERVER, "redis-server", NULL };

/*
 * redis/redis.conf: its own port and socket, nothing saved, everything in its
 * own directory (0700, the user redis's: no other local user reaches the
 * socket or reads the password), and requirepass: every connection, the
 * socket's too, AUTHs first.
 */
static int redis_conf(struct stack_ctx *c, const struct stack_redis *r, const char *dir,
                      struct hb_err *err)
{
    char conf[3 * PATH_MAX + 512];

    snprintf(conf, sizeof(conf),
             "bind 127.0.0.1\n"
             "port %u\n"
             "unixsocket %s\n"
             "unixsocketperm 700\n"
             "daemonize no\n"
             "supervised no\n"
             "save \"\"\n"
             "appendonly no\n"
             "dir %s\n"
             "pidfile %s/redis.pid\n"
             "logfile \"\"\n"
             "databases 1\n"
             "protected-mode yes\n"
             "requirepass %s\n",
             r->port, r->sock, dir, dir, r->who.pw);
    return sup_write(&c->sup, "redis/redis.conf", conf, err);
}

int stack_redis_start(struct stack_ctx *c, struct stack_redis *r, struct hb_err *err)
{
    char dir[PATH_MAX - 64], conf[PATH_MAX], ep[PATH_MAX + 8];
    struct sup_check checks[2];
    int rc = login_user(&r->who, "redis", "redis", err);

    if (rc == 0) rc = stack_free_port(&r->port, err);
    if (rc == 0) rc = sup_mkdir(&c->sup, "redis", r->who.as, err);
    if (rc < 0) return rc;
    sup_path(&c->sup, "redis", dir, sizeof(dir));
    snprintf(r->sock, sizeof(r->sock), "%s/redis.sock", dir);
    rc = login_secret(&r->who, dir, err);
    if (rc == 0) rc = redis_conf(c, r, dir, err);
    if (rc < 0) return rc;
    sup_path(&c->sup, "redis/redis.conf", conf, sizeof(conf));
    const char *argv[] = { REDIS_SERVER, conf, NULL };
    struct sup_spec spec = { .name = "redis", .argv = argv, .as = r->who.as };
    rc = sup_start(&c->sup, &spec, err);
    if (rc < 0) return rc;
    memset(checks, 0, sizeof(checks));
    snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%u", r->port);
    rc = endpoint_parse(&checks[0].ep, ep, err);
    snprintf(ep, sizeof(ep), "unix:%s", r->sock);
    if (rc == 0) rc = endpoint_parse(&checks[1].ep, ep, err);
    if (rc < 0) return rc;
    for (unsigned i = 0; i < 2; i++) {
        checks[i].svc = "redis-server";
        checks[i].proto = "redis";
        checks[i].opts.redis.command.cmd = REDIS_PING;
        checks[i].opts.redis.password = r->who.pw;
    }
    rc = sup_wait_ready(&c->sup, checks, 2, 10 * NS_PER_S, c->stop, err);
    if (rc < 0) return rc;
    fprintf(c->out, "redis: authentication requirepass (AUTH first on each connection, over "
                    "the socket too)\n");
    login_say(&r->who, c->out);
    return 0;
}

void stack_redis_args(struct stack_args *a, const struct stack_redis *r, const char *cmd,
                      unsigned pipeline)
{
    stack_arg(a, "hopbench");
    stack_arg(a, "run");
    stack_arg(a, "redis");
    stack_arg(a, "tcp://127.0.0.1:%u", r->port);
    stack_arg(a, "unix:%s", r->sock);
    stack_arg(a, "--command");
    stack_arg(a, "%s", cmd);
    stack_arg(a, "--keys");
    stack_arg(a, "1000");
    stack_arg(a, "--pipeline");
    stack_arg(a, "%u", pipeline);
    stack_arg(a, "--password-file");
    stack_arg(a, "%s", r->who.pw_file);
}

/* A redis cell's run child: stack_redis_args, the stack's kv args. */
static void redis_cell_args(struct stack_args *a, const void *srv, const char *cmd,
                            unsigned pipeline)
{
    stack_redis_args(a, srv, cmd, pipeline);
}

static int redis_run(struct stack_ctx *c, struct hb_err *err)
{
    static const char *const names[] = { "redis", NULL };
    static struct stack_redis r;
    int rc = stack_redis_start(c, &r, err);

    if (rc == -EINTR) {
        c->interrupted = true;
        return 0;
    }
    if (rc < 0) return rc;
    struct sup_svc *v = sup_find(&c->sup, "redis");
    fprintf(c->out,
            "hopbench stack redis: redis-server pid %ld on tcp://127.0.0.1:%u and unix:%s\n"
            "cgroup: %s\n"
            "cells: SET, GET x pipeline 1, 16; tcp and unix %u times each in ABBA order, "
            "%.2f s after %.2f s warm-up, %u connection(s)\n",
            (long)v->pid, r.port, r.sock, sup_cgroup_cpu(v), c->reps, (double)c->duration_ns / 1e9,
            (double)c->warmup_ns / 1e9, c->conns);
    fflush(c->out);
    return stack_kv_cells(c, names, redis_cell_args, &r, err);
}

const struct stack_def stack_redis = {
    .name = "redis",
    .summary = "redis-server: SET and GET at pipeline 1 and 16, tcp vs unix, its CPU per op",
    .help = redis_help,
    .needs = redis_needs,
    .front_unix = true,
    .conns = 50, /* redis-benchmark's clients */
    .run = redis_run,
};
