/*
 * cell: one measurement of a stack as its run children's evidence gives it
 * (measure.c reads it, the tables and readings.c print from it): its label,
 * its services, and per transport the figures of each run.
 */
#ifndef HOPBENCH_STACK_CELL_H
#define HOPBENCH_STACK_CELL_H

#include <stdbool.h>

#define STACK_MAX_REPS 50

#define STACK_MAX_SVC 4 /* named services of a run child the table shows */

/*
 * The socket figures of a run, peaks over its window: the hop the client
 * loads (front) and the watched hop behind it of the arm's transport
 * (backend; the stacks watch their web server -> FPM hop). A Unix socket has
 * no TIME_WAIT state: 0 there.
 */
enum stack_hop_fig {
    STACK_TW_FRONT_CLIENT = 0, /* TIME_WAIT on the client's side of the front hop */
    STACK_TW_FRONT_SERVER,
    STACK_TW_BACK_CLIENT, /* the web server's side of the backend hop */
    STACK_TW_BACK_SERVER, /* FPM's side */
    STACK_EST_BACK,       /* established connections on the backend hop */
    STACK_HOP_FIGS
};

/*
 * The runs of one transport within a cell, as the evidence gives them. A
 * figure a run does not hold is NAN.
 */
struct stack_arm {
    char transport[8];
    unsigned n;
    double ops_s[STACK_MAX_REPS];
    double p50_us[STACK_MAX_REPS], p99_us[STACK_MAX_REPS], p999_us[STACK_MAX_REPS];
    double mean_us[STACK_MAX_REPS];   /* the mean latency */
    double rate[STACK_MAX_REPS];      /* open loop: the rate asked, ops/s; 0 closed loop */
    double client_us[STACK_MAX_REPS]; /* the client's CPU per op, µs */
    double sum_us[STACK_MAX_REPS];    /* client + every service, CPU per op, µs */
    double system_us[STACK_MAX_REPS]; /* every CPU's busy time (softirq included) per op, µs */
    double svc_us[STACK_MAX_SVC][STACK_MAX_REPS];   /* each service's CPU per op, µs */
    double pss_mib[STACK_MAX_SVC][STACK_MAX_REPS];  /* each service's PSS at the end, MiB */
    double ws_mib[STACK_MAX_SVC][STACK_MAX_REPS];   /* its cgroup's working set at the end, MiB */
    double agent_us[STACK_MAX_SVC][STACK_MAX_REPS]; /* each service's CPU per op by the agent, µs */
    double hop[STACK_HOP_FIGS][STACK_MAX_REPS];
    double hop_added[STACK_HOP_FIGS][STACK_MAX_REPS]; /* peak - start: what the run added */
    /* connect mode: the client's phases, mean µs per op (NAN: not measured) */
    double connect_us[STACK_MAX_REPS], response_us[STACK_MAX_REPS], close_us[STACK_MAX_REPS];
    double other_cpus[STACK_MAX_REPS];   /* other processes' CPU + steal over the window, CPUs */
    double machine_cpus[STACK_MAX_REPS]; /* every CPU's busy time over the window, CPUs */
    unsigned cpus;                       /* CPUs the run could use (other_cpu.cpus_allowed) */
    unsigned threads;                    /* the client's load threads */
    unsigned conns;                      /* the run's connections */
    unsigned noisy;                      /* valid runs flagged noisy (other_cpu.noisy) */
    char sys_source[12];                 /* where system_us comes from (cpu.system_source) */
    unsigned long long requests;         /* requests sent, warm-up included */
    unsigned saturated;                  /* open-loop runs below 99 % of their rate (invalid) */
    unsigned failed;                     /* runs the gate failed (errors, or no op) */
    unsigned long long errors;           /* their errors */
    char kinds[96];                      /* their errors' kinds, "status 4xx, reset" */
};

/*
 * One measurement: a label and its two endpoints, in the order given to run
 * (the evidence's "cell"): arm[i].transport is the stack's own name for the
 * hop under test ("tcp", "unix"), which the client's endpoint may not be.
 * svc: the run child's --service names, in its order (from the evidence).
 */
struct stack_cell {
    char label[48];
    char title[64]; /* what a reader calls it: "nginx → php-fpm" (the label's "->" as " → ") */
    char svc[STACK_MAX_SVC][32];
    unsigned nsvc;
    bool backend;   /* the runs watched a backend hop */
    bool agent;     /* a run holds an agent's evidence (stack --agent) */
    unsigned conns; /* the runs' connections (-c); 0: the stack's (stack_ctx.conns) */
    struct stack_arm arm[2];
};

#endif
