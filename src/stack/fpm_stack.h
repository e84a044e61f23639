/*
 * fpm_stack: the stacks NAME-fpm, one per web front (front.h), above fpm.c
 * and fpm_cases.c: a profile's measurement (the web server's load, then the
 * bare FastCGI hop) or the study's case the options ask for, and the stack's
 * --help from its front's words. Each front's stack_def names these two and
 * its entry (stack_def.front).
 */
#ifndef HOPBENCH_STACK_FPM_STACK_H
#define HOPBENCH_STACK_FPM_STACK_H

#include <stdio.h>

#include "stack/stack.h"

/* stack_def.run of an fpm stack: its front is c->def->front. */
int fpm_stack_run(struct stack_ctx *c, struct hb_err *err);

/* stack_def.help_write of an fpm stack: its usage, what it builds and measures, its options. */
void fpm_stack_help(const struct stack_def *d, FILE *f);

#endif
