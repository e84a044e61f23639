/*
 * fpm_cases: the study's cases of the web server -> PHP-FPM stacks, each
 * instead of a profile's measurement (stack_opts.cases: --ablation, --pool,
 * --overload, --starve), built with fpm.c from the front's entry (front.h).
 */
#ifndef HOPBENCH_STACK_FPM_CASES_H
#define HOPBENCH_STACK_FPM_CASES_H

#include "stack/front.h"
#include "stack/measure.h"

#define FPM_MAX_STEPS 8

/* One step of a case: its label and the settings it is built from. */
struct fpm_step {
    char label[48];
    struct fpm_knobs k;
};

/*
 * The ablation's steps in front of w into s (FPM_MAX_STEPS), their number:
 * the study's order, each adding one change to the one before; the .htaccess
 * step where w reads them, the reuse step where it keeps connections. A front
 * that keeps every FastCGI connection it opens (nginx: about one per client
 * connection, conns) gets a worker for each in its reuse step, else the pool
 * would starve.
 */
unsigned fpm_ablation_steps(const struct web_front *w, unsigned conns, struct fpm_step *s);

/* Runs the case c->o->cases asks for in front of w: 0, or a negative errno with err set. */
int fpm_cases(struct stack_ctx *c, const struct web_front *w, struct hb_err *err);

#endif
