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

struct stack_def {
    const char *name;
    const char *summary;      /* one line for `stack list` */
    const char *help;         /* `stack NAME --help`: what it builds, measures, how long it takes */
    const char *const *needs; /* pairs: binary path, Debian package; NULL-terminated */
    const char *const *profiles; /* its --profile names, NULL-terminated; NULL: none */
    unsigned cases;              /* the STACK_CASE_* it runs; 0: none */
    bool front_unix;             /* its arms are the front hop (redis): no --netns other */
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
