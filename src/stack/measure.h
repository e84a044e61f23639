/*
 * measure: what every stack shares. A stack's services run under a struct
 * sup; each measurement is a `hopbench run` child (this same binary, through
 * /proc/self/exe) with its evidence in the private directory, read back here
 * run by run into one cell per measurement, tcp and unix side by side.
 */
#ifndef HOPBENCH_STACK_MEASURE_H
#define HOPBENCH_STACK_MEASURE_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include "cost.h"
#include "evidence/runview.h"
#include "outfile.h"
#include "report/bottom.h"
#include "stack/cell.h"
#include "stack/opts.h"
#include "stack/supervisor.h"

/*
 * stack_run's returns for a run child's refused authentication (exit 3: by
 * its --agent, or of the server's way of logging in) and its agent's
 * protocol (76), apart from every errno the stack itself may return.
 */
#define STACK_AGENT_AUTH     (-4096)
#define STACK_AGENT_PROTOCOL (-4097)

#define STACK_MAX_ARGS   64
#define STACK_MAX_COSTED 16     /* measurements of both transports whose saving is priced */
#define STACK_TRAFFIC    "1k/s" /* the traffic a month's saving is stated at */

/*
 * A measurement of both transports in one run child: its label and its
 * evidence, read as soon as the child ends (a case's step removes its
 * directory, the child's JSONL file with it, before the pricing at the end).
 */
struct stack_costed {
    char label[48];
    struct cost_set set;
    bool read;                                   /* set holds the runs */
    char why[sizeof(((struct hb_err *)0)->msg)]; /* else why they could not be read */
};

struct stack_def;

/* A stack being built and measured. */
struct stack_ctx {
    const struct stack_opts *o;
    const struct stack_def *def; /* the stack's entry (stack.h) */
    FILE *out;  /* where it prints: the command's stdout, or with --html a tee of it into text */
    FILE *term; /* the command's stdout itself (whether to colour the bottom line) */
    FILE *text; /* --html: what it printed, its colours left out, for the page; else NULL */
    char *text_buf;
    size_t text_len;
    const atomic_int *stop;
    struct sup sup;
    unsigned reps; /* the options, or the stack's defaults */
    uint64_t duration_ns;
    uint64_t warmup_ns;
    unsigned conns;
    unsigned nchild;        /* run children so far: names their files */
    unsigned plan_children; /* run children the stack plans (stack_plan) */
    unsigned plan_runs;     /* their runs together */
    unsigned runs_begun;    /* the runs of the children started so far */
    struct outfile jsonl;   /* --jsonl, when given */
    bool jsonl_open;
    bool invalid;     /* a run child exited 2 */
    bool interrupted; /* a stop signal came before the measurements ended */
    struct stack_costed costed[STACK_MAX_COSTED]; /* for stack_cost, in the order measured */
    struct bottom_line bottom; /* each run child's bottom line, its cells named by measurement */
    unsigned ncosted;
    json_t *last_run; /* the last run record of the last run child (the fpm cases read it) */
    json_t *csv;      /* --csv: each child's {"source": its measurement, "runs": its document's} */
    /*
     * --netns: the namespaces made for the stack. The stack's own thread is
     * in A from before the first service starts to after the last stops, so
     * the services, their readiness checks and the free ports are A's; each
     * run child enters its side (A, or B with other) between fork and exec.
     */
    struct netns netns;
    enum netns_side child_side;
    const char *front_host; /* where the front listens: "127.0.0.1", or A's veth address */
};

/*
 * A run child's JSONL file, read once (stack_child_read): each run through the
 * run view (evidence/runview.h) into cell, arm arm (or its endpoint's arm when
 * arm is negative); with cost not NULL, into that set for stack_cost (cost_rc
 * and cost_why say why it could not be: the stack goes on without that
 * saving); with keep_last, the last run record into last (the caller
 * json_decrefs it).
 */
struct stack_child_read {
    const char *path;
    struct stack_cell *cell;
    int arm;
    struct cost_set *cost;
    bool keep_last;
    json_t *last;
    size_t line; /* the line of the run being read (evidence_read sets it) */
    int cost_rc;
    char cost_why[sizeof(((struct hb_err *)0)->msg)];
};

/*
 * Reads r->path as struct stack_child_read says. Returns 0, or a negative
 * errno with err naming the file and the line: -errno when it cannot be read,
 * -EINVAL when a line is not JSON, not a header or run record, or a run lacks
 * a key every run has (its runs before that line are in the cell).
 */
int stack_child_read(struct stack_child_read *r, struct hb_err *err);

/* Names the two arms of cell (before stack_measure). */
void stack_cell_init(struct stack_cell *cell, const char *label, const char *a, const char *b);

/* An argument vector built piece by piece; every string is kept in store. */
struct stack_args {
    const char *v[STACK_MAX_ARGS + 1];
    unsigned n;
    char store[8192];
    size_t used;
};

/* Adds one formatted argument (silently dropped when full: stack_measure then refuses). */
void stack_arg(struct stack_args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A free TCP port on 127.0.0.1 below the ephemeral range. Returns 0 or a negative errno. */
int stack_free_port(unsigned *port, struct hb_err *err);

/*
 * Adds children run children of runs_each runs to the stack's plan, before it
 * measures them. Each child is told its place in the plan, measurement k of
 * n, and the time planned after it: the runs not yet begun, each -d plus
 * --warmup (PROGRESS_ENV; its progress line shows the whole stack's time
 * left). A child past the plan is measurement k of k.
 */
void stack_plan(struct stack_ctx *c, unsigned children, unsigned runs_each);

/*
 * Runs `hopbench run` with args (PROTO, endpoints, the stack's options)
 * plus --reps, --order abba, -d, --warmup, -c, private --json/--jsonl files
 * and a --label per endpoint named after the cell and its arm
 * ("set-pipeline-1.tcp", "apache-fpm.unix"), the same in every stack run; its stdout goes to a log
 * in the private directory, its stderr passes through. Forwards a stop signal (SIGINT) and waits
 * for it. Reads its runs into cell. An exit 2 marks the stack invalid and its table is copied to
 * out. Returns 0, or a negative errno with err set.
 */
int stack_measure(struct stack_ctx *c, struct stack_args *args, struct stack_cell *cell,
                  struct hb_err *err);

/*
 * stack_measure with args naming one endpoint, run once (--reps 1) for
 * duration_ns (0: the stack's -d): its run goes to cell->arm[arm]. A stack
 * interleaves such children to measure each endpoint under its own settings
 * (an open loop at its own rate).
 */
int stack_measure_one(struct stack_ctx *c, struct stack_args *args, struct stack_cell *cell,
                      unsigned arm, uint64_t duration_ns, struct hb_err *err);

/*
 * What the saving is worth, at the end of a stack: for each measurement of
 * both transports in one run child (stack_measure), `hopbench cost` on that
 * child's own evidence, in short (report_saving_brief). One child each, as
 * the evidence's cells do not tell apart runs of one endpoint pair that
 * differ in what they ask (the path, the redis command). Each run is on the
 * side its label names (NAME.tcp, NAME.unix: the cell's arm, the hop under
 * test): in front of a web server both of the client's endpoints are TCP and
 * the backend differs.
 */
void stack_cost(struct stack_ctx *c);

/* Frees the evidence kept for stack_cost and the bottom line. */
void stack_cost_release(struct stack_ctx *c);

/*
 * The stack's last words: the bottom line of every measurement of both
 * transports (each run child's, report/bottom.h, read from its evidence and
 * named by the measurement's title), one block per stack.
 */
void stack_bottom(struct stack_ctx *c);

/*
 * --csv: the runs of every child so far (their --json documents' "runs"),
 * each row's source the child's measurement ("set-pipeline-1", or
 * "overload.tcp" for a child that loads one arm), written to o->csv_path.
 * Returns 0 (also without --csv or without a run), or a negative errno with
 * err set. Frees them either way.
 */
int stack_csv_write(struct stack_ctx *c, struct hb_err *err);

/*
 * Adds --service NAME=cgroup:DIR for each of the stack's services named in
 * names (NULL-terminated; the cgroup is the one made for it), so that the run
 * child measures each apart: its CPU, PSS and working set.
 */
void stack_services(struct stack_ctx *c, struct stack_args *a, const char *const *names);

/*
 * The table of cells, one block each: per figure the median of each
 * transport's runs and the unix÷tcp verdict (ratio, bootstrap interval,
 * Mann-Whitney; "~" when not significant): ops/s, p50, p99; CPU per request
 * of the client, of each service, their sum and the system (softirq
 * included); each service's PSS and working set; TIME_WAIT on each side of
 * the front hop and, when watched, of the backend hop, and its established
 * connections. With an agent's evidence (stack --agent), each service's CPU
 * per request as the agent read it and its ratio to this host's figure. A
 * cell without a run is left out; nothing without any.
 */
void stack_table(FILE *f, const struct stack_cell *cells, unsigned n);

/*
 * The agent's rows of the table for one run, whatever its validity (stack
 * --agent; nothing for a run without an agent's evidence), as a case that
 * reports each transport's one run on its own shows them (the fpm failure
 * cases, whose runs fail by design): per service of the run, "agent CPU
 * us/req NAME" (its CPU per op as the agent read it, "n/a  the agent gave
 * none" without one), then "agent/local CPU NAME" (the agent's figure over
 * this host's) for each service both measured.
 */
void stack_agent_run_rows(FILE *f, const struct run_view *v);

/* The median over arm a's runs of the CPU per op of cell's services together, µs (NAN: none). */
double stack_services_cpu(const struct stack_cell *cell, const struct stack_arm *a);

/* --hold: waits for a stop signal (or a service's exit: -ECHILD with err set). */
int stack_hold(struct stack_ctx *c, struct hb_err *err);

/* Whether to stop before the next measurement (a stop signal came). */
bool stack_stopping(struct stack_ctx *c);

#endif
