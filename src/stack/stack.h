/*
 * stack: `hopbench stack NAME`, a real stack built from Debian's own servers
 * under configurations hopbench writes (supervisor.h), measured with `hopbench
 * run` children (the load, the gate, the evidence: each child is this same
 * binary), summarised in one table per stack.
 *
 * A stack prints its progress and tables to the FILE it is given; it prints
 * no error and picks no exit code (struct hb_err and enum stack_verdict go
 * back to the command, cmd/stack.c).
 */
#ifndef HOPBENCH_STACK_STACK_H
#define HOPBENCH_STACK_STACK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "stack/login.h"
#include "stack/opts.h"
#include "stack/supervisor.h"
#include "util.h"

/* How the measurement ended, for main's exit code. */
enum stack_verdict {
    STACK_VALID = 0,   /* every run valid */
    STACK_INVALID,     /* a run saw errors (the gate) or completed no op */
    STACK_INTERRUPTED, /* a stop signal came before the end */
};

struct stack_ctx;
struct stack_args;

/*
 * What a stack's port without authentication is and what any local user who
 * reaches it could do (stack_def.private_net), for the lines that say where
 * the stack's network is.
 */
struct stack_private {
    const char *port; /* "FastCGI": "its FastCGI port", "the FastCGI TCP port" */
    const char *why;  /* "FastCGI has no authentication" */
    const char *risk; /* "send it requests, which run code as php-fpm's workers" */
};

/* php-fpm's FastCGI port (the fpm stacks). */
extern const struct stack_private stack_private_fastcgi;
struct web_front; /* front.h: the fpm stacks' web server */

struct stack_def {
    const char *name;
    const char *summary; /* one line for `stack list` */
    const char *help;    /* `stack NAME --help`: what it builds, measures, how long it takes */
    /* or its --help written from the stack's own table (the fpm stacks: from their front's) */
    void (*help_write)(const struct stack_def *d, FILE *f);
    /* pairs: binary (a glob: the newest match, sup_need), Debian package; NULL-terminated */
    const char *const *needs;
    const char *const *profiles; /* its --profile names, NULL-terminated; NULL: none */
    unsigned cases;              /* the STACK_CASE_* it runs; 0: none */
    bool front_unix; /* its arms are the front hop (redis, the databases): no --netns other */
    /* -c by default: the connections of the study it reproduces (0: 1, a ping-pong) */
    unsigned conns;
    /*
     * It has a port with no authentication (php-fpm's FastCGI): without
     * --netns it runs in a network namespace of its own (same) when it can,
     * and says why in these words; NULL: the host's network.
     */
    const struct stack_private *private_net;
    const struct web_front *front; /* the fpm stacks: the web server in front of php-fpm */
    /* Starts the services, measures, prints the table: 0 or a negative errno with err set. */
    int (*run)(struct stack_ctx *c, struct hb_err *err);
};

/*
 * The options' lines of the --help of a stack with neither profiles nor cases;
 * conns: its default -c, the study's, as a string literal.
 */
#define STACK_HELP_OPTIONS(conns)                                                                  \
    STACK_HELP_OPTIONS_C("  -c, --connections N  connections of each run (default " conns          \
                         ", the study's; -c 1: a\n                   ping-pong)\n")

/* The same with the -c line given whole (a stack that reproduces no study). */
#define STACK_HELP_OPTIONS_C(c_line)                                                               \
    "  --short          a quick pass: 2 reps, -d 0.3, --warmup 0.1\n"                              \
    "  --reps N         runs per transport and cell (default 4; 2 with --short)\n"                 \
    "  -d, --duration S each run's measured seconds (default 2)\n"                                 \
    "      --warmup S   each run's discarded start (default 0.5)\n" c_line                         \
    "      --jsonl FILE append every run's evidence (hopbench run --jsonl lines) to FILE\n"        \
    "      --csv FILE   one CSV row per run of every measurement (source: the measurement)\n"      \
    "  -q, --quiet      no live progress line from the runs\n"                                     \
    "      --hold       after measuring keep the services up until Ctrl-C (to look at them)\n"     \
    "  -h, --help       this text\n"

/* Every stack, NULL-terminated. */
extern const struct stack_def *const stack_defs[];

/* -c when given, else study: the connections of one measurement of the stack. */
unsigned stack_conns(const struct stack_ctx *c, unsigned study);

/* The stack called name, or NULL. */
const struct stack_def *stack_find(const char *name);

/* `stack NAME --help`: d's help text, or what its help_write writes. */
void stack_help(const struct stack_def *d, FILE *f);

/* 0 when the stack has a profile called name, else -EINVAL with err naming them. */
int stack_profile_check(const struct stack_def *d, const char *name, struct hb_err *err);

/* One line per stack: its name and summary. */
void stack_list(FILE *f);

/*
 * Builds, measures and tears down stack o->name, printing to out. *stop is
 * the stop flag (signals): set, the current run child is asked to stop
 * (SIGINT), and everything is stopped and removed. Returns 0 with *verdict
 * set; or a negative errno with err set (a missing server: -ENOENT, one line
 * naming the apt-get command). Every process, cgroup and file it made is gone
 * when it returns, whatever it returns; if that fails it is the error.
 */
int stack_run(const struct stack_opts *o, FILE *out, const atomic_int *stop,
              enum stack_verdict *verdict, struct hb_err *err);

#endif
