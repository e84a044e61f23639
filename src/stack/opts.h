/*
 * opts: what the command line asks of a stack (cmd/stack.c fills it),
 * read by the stacks (stack.c, fpm.c, php.c, redis.c) and by measure.c, which
 * runs their measurements.
 */
#ifndef HOPBENCH_STACK_OPTS_H
#define HOPBENCH_STACK_OPTS_H

#include <stdbool.h>
#include <stdint.h>

#include "host/netns.h"

/* The study's cases a stack may run instead of its profile (stack_def.cases). */
#define STACK_CASE_ABLATION 1u /* --ablation: one change at a time, baseline to optimized */
#define STACK_CASE_POOL     2u /* --pool N,N,..: the pool-size sweep */
#define STACK_CASE_OVERLOAD 4u /* --overload: a small pool, a short backlog, many connections */
#define STACK_CASE_STARVE   8u /* --starve: more kept FastCGI connections than the pool */

#define STACK_MAX_POOL 8

/* What the command line asks of a stack (cmd/stack.c fills it). */
struct stack_opts {
    const char *name;     /* the stack; NULL with list */
    const char *profile;  /* --profile P: one of the stack's profiles; NULL = its default */
    bool kernel_profile;  /* --profile alone: the run children sample the kernel (run --profile) */
    bool list;            /* `hopbench stack list` */
    bool short_mode;      /* --short: a quick pass (tests), not a result */
    unsigned reps;        /* --reps: runs per transport and cell, ABBA; 0 = the stack's */
    uint64_t duration_ns; /* -d: each run; 0 = the stack's */
    uint64_t warmup_ns;   /* --warmup; UINT64_MAX = the stack's */
    unsigned conns;       /* -c; 0 = the stack's */
    const char *jsonl_path; /* --jsonl: every run of every child, appended */
    bool hold;              /* --hold: keep the services up after measuring, until a stop signal */
    bool quiet;             /* -q, --quiet: the run children draw no progress line */
    const char *csv_path;   /* --csv: one CSV row per run of every child, in one file */
    const char *html_path;  /* --html: every child's evidence drawn as one HTML report */
    unsigned cases;         /* STACK_CASE_*: the study's cases asked for, one at most */
    unsigned pool[STACK_MAX_POOL]; /* --pool: the pm.max_children of the sweep */
    unsigned npool;
    enum netns_mode netns;        /* --netns: the services in namespace A, the load in A or B */
    const char *agent;            /* --agent: each run child asks this agent for the server side */
    const char *agent_token_file; /* --agent-token-file: its token (else HOPBENCH_AGENT_TOKEN) */
};

#endif
