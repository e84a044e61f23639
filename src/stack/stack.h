/*
 * stack: `hopbench stack NAME`, a real stack built from Debian's own servers
 * under configurations hopbench writes (supervisor.h), measured with `hopbench
 * run` children (the load, the gate, the evidence: each child is this same
 * binary), summarised in one table per stack.
 *
 * A stack prints its progress and tables to the FILE it is given; it prints
 * no error and picks no exit code (struct hb_err and enum stack_verdict go
 * back to main.c).
 */
#ifndef HOPBENCH_STACK_STACK_H
#define HOPBENCH_STACK_STACK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "stack/supervisor.h"
#include "util.h"

/* The study's cases a stack may run instead of its profile (stack_def.cases). */
#define STACK_CASE_ABLATION 1u /* --ablation: one change at a time, baseline to optimized */
#define STACK_CASE_POOL     2u /* --pool N,N,..: the pool-size sweep */
#define STACK_CASE_OVERLOAD 4u /* --overload: a small pool, a short backlog, many connections */
#define STACK_CASE_STARVE   8u /* --starve: more kept FastCGI connections than the pool */

#define STACK_MAX_POOL 8

/* What the command line asks of a stack (cli_parse_stack fills it). */
struct stack_opts {
    const char *name;       /* the stack; NULL with list */
    const char *profile;    /* --profile: one of the stack's profiles; NULL = its default */
    bool list;              /* `hopbench stack list` */
    bool short_mode;        /* --short: a quick pass (tests), not a result */
    unsigned reps;          /* --reps: runs per transport and cell, ABBA; 0 = the stack's */
    uint64_t duration_ns;   /* -d: each run; 0 = the stack's */
    uint64_t warmup_ns;     /* --warmup; UINT64_MAX = the stack's */
    unsigned conns;         /* -c; 0 = the stack's */
    const char *jsonl_path; /* --jsonl: every run of every child, appended */
    bool hold;              /* --hold: keep the services up after measuring, until a stop signal */
    unsigned cases;         /* STACK_CASE_*: the study's cases asked for, one at most */
    unsigned pool[STACK_MAX_POOL]; /* --pool: the pm.max_children of the sweep */
    unsigned npool;
};

/* How the measurement ended, for main's exit code. */
enum stack_verdict {
    STACK_VALID = 0,   /* every run valid */
    STACK_INVALID,     /* a run saw errors (the gate) or completed no op */
    STACK_INTERRUPTED, /* a stop signal came before the end */
};

struct stack_ctx;

struct stack_def {
    const char *name;
    const char *summary;      /* one line for `stack list` */
    const char *help;         /* `stack NAME --help`: what it builds, measures, how long it takes */
    const char *const *needs; /* pairs: binary path, Debian package; NULL-terminated */
    const char *const *profiles; /* its --profile names, NULL-terminated; NULL: none */
    unsigned cases;              /* the STACK_CASE_* it runs; 0: none */
    /* Starts the services, measures, prints the table: 0 or a negative errno with err set. */
    int (*run)(struct stack_ctx *c, struct hb_err *err);
};

/* Every stack, NULL-terminated. */
extern const struct stack_def *const stack_defs[];

/* The stack called name, or NULL. */
const struct stack_def *stack_find(const char *name);

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
