/*
 * progress: a live line on a terminal while lab, run or a stack works: what
 * is running, rep k/n, the run's elapsed and planned seconds, ops/s and
 * errors so far, and the time left for the whole job. One line on stderr,
 * redrawn in place by its own thread at most 10 times a second, cleared
 * before anything else is printed; nothing at all when stderr is not a
 * terminal or when it is switched off (--quiet). No colour.
 *
 * A run started by a stack is one measurement of a longer job: the stack
 * says which, and how long the measurements after it are planned to take,
 * in the environment (PROGRESS_ENV); the line then names the measurement
 * k/n and its time left is the whole stack's.
 */
#ifndef HOPBENCH_PROGRESS_H
#define HOPBENCH_PROGRESS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/loadcfg.h"

#define PROGRESS_WHAT_CAP 200

/*
 * "K/N+MS": this process is measurement K (1-based) of N, and MS milliseconds
 * of measuring are planned after it. Read by progress_start; ignored unless
 * well formed with 1 <= K <= N.
 */
#define PROGRESS_ENV "HOPBENCH_PROGRESS"

struct progress {
    bool on; /* a terminal, and not switched off: the thread runs */
    int fd;  /* stderr's */
    pthread_t tid;
    pthread_mutex_t mu; /* guards everything below */
    pthread_cond_t wake;
    bool quit;
    bool running; /* a run is on: the line is drawn */
    bool drawn;   /* the line is on the terminal now */
    char what[PROGRESS_WHAT_CAP];
    unsigned rep, reps;
    unsigned runs_total, runs_done;
    uint64_t per_run_ns;       /* a run's planned length (warm-up, window, pause); 0: unknown */
    unsigned outer_k, outer_n; /* measurement k of n of a stack (PROGRESS_ENV); 0: none */
    uint64_t outer_after_ns;   /* the time planned for the stack's measurements after this one */
    uint64_t run_start_ns, warmup_ns, window_ns;
    struct load_live *live; /* the current run's, threads entries */
    unsigned nlive;
    unsigned live_cap;
};

/*
 * Starts the line's thread when fd is a terminal and on is true; else the
 * other calls do nothing. runs_total runs of per_run_ns each (0: unknown)
 * make the job; the time left is estimated from them, plus the time a stack
 * plans after this process (PROGRESS_ENV). Returns 0 or -errno (the thread
 * could not start: there is then no line, nothing else changes).
 */
int progress_start(struct progress *p, int fd, bool on, unsigned runs_total, uint64_t per_run_ns);

/*
 * A run begins: what it is ("echo 64 B reuse unix"), its rep (1-based) of
 * reps. Gives cfg->live the counters its threads keep up to date.
 */
void progress_run_begin(struct progress *p, const char *what, unsigned rep, unsigned reps,
                        struct load_cfg *cfg);

/* The run of cfg ended: its line is cleared (before its results are printed). */
void progress_run_end(struct progress *p, struct load_cfg *cfg);

/* Clears the line and stops the thread. */
void progress_stop(struct progress *p);

/*
 * Reads PROGRESS_ENV's value s into p's outer_k, outer_n and outer_after_ns.
 * Returns 0, or -EINVAL (s NULL or malformed: p is left as it was).
 */
int progress_outer_parse(struct progress *p, const char *s);

/*
 * The line itself, for the thread and the tests: at most cap - 1 characters
 * (the terminal's width), from the state at now_ns.
 */
void progress_format(const struct progress *p, uint64_t now_ns, char *buf, size_t cap);

#endif
