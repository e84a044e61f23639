/*
 * readings: what a stack says beside each table, from the figures its runs
 * already hold (measure.h's cells), computed here and printed by the stack:
 *   - the lifecycle's share of the saving: in connect mode (a connection per
 *     request) the client's phases split each request into its connection's
 *     lifecycle (connect + close) and the transfer (request written -> whole
 *     reply): what the Unix socket saves on each, and the lifecycle's share;
 *     and the pod study's arithmetic on CPU per request, a connect-mode
 *     measurement less a kept one on each transport;
 *   - what saturated, per transport: the machine (its CPUs nearly all busy),
 *     the client (its load threads each on a whole CPU) or a service on a
 *     whole CPU, from each run's CPU per request times its rate.
 */
#ifndef HOPBENCH_STACK_READINGS_H
#define HOPBENCH_STACK_READINGS_H

#include <stdbool.h>
#include <stdio.h>

#include "stack/cell.h"

/* A share of the CPUs at which a side counts as saturated: 90 % of what it may use. */
#define STACK_SATURATED 0.9

/*
 * The lifecycle of one connect-mode cell, µs per request, medians over each
 * transport's runs of their phases' means (index 0 tcp, 1 unix).
 */
struct stack_lifecycle {
    double life[2];     /* connect + close */
    double transfer[2]; /* response: request written -> whole reply */
    double saved;       /* (life + transfer) tcp - unix */
    double saved_life;  /* life tcp - unix */
    double share;       /* saved_life / saved; NAN when the socket saves nothing */
};

/*
 * The lifecycle of cell c: 0 with *out set, or -ENOENT when a transport's
 * runs have no connect and close phases (its connections are kept).
 */
int stack_lifecycle_of(const struct stack_cell *c, struct stack_lifecycle *out);

/*
 * Prints the lifecycle's share of the saving of cell c (stack_lifecycle_of),
 * three lines; for a cell whose connections are kept, a line saying so.
 */
void stack_lifecycle_print(FILE *f, const struct stack_cell *c);

/*
 * The pod study's arithmetic on CPU per request (client + services with
 * client, else the services alone, as the pod study's web server + php-fpm):
 * connect-mode cell (a connection per request) less kept cell on each
 * transport is its lifecycle, and their difference's share of the
 * connect-mode saving; two lines, or nothing without runs on both.
 */
void stack_lifecycle_cpu_print(FILE *f, const struct stack_cell *kept,
                               const struct stack_cell *connect, bool client);

/* What one transport's runs kept busy, medians, in CPUs. */
struct stack_busy {
    double machine;            /* every CPU's busy time (the system figure) */
    double client;             /* the client's load threads */
    double svc[STACK_MAX_SVC]; /* each service */
    double other;              /* other processes' CPU and steal */
    unsigned cpus, threads;
    enum {
        STACK_SAT_NONE = 0,
        STACK_SAT_MACHINE, /* machine >= STACK_SATURATED x cpus */
        STACK_SAT_CLIENT,  /* client >= STACK_SATURATED x threads */
        STACK_SAT_SERVICE, /* a service >= STACK_SATURATED of one CPU: svc_at */
    } what;
    unsigned svc_at;
};

/* The busy figures of arm a of cell c: 0, or -ENOENT when it has no run. */
int stack_busy_of(const struct stack_cell *c, const struct stack_arm *a, struct stack_busy *out);

/* One line per transport of cell c: its connections, what it kept busy, what saturated. */
void stack_busy_print(FILE *f, const struct stack_cell *c);

#endif
