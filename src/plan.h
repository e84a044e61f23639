/*
 * plan: the options `run` and `lab` share (struct shared_opts): how many
 * connections and threads, how long, how the runs repeat, where the evidence
 * goes. One parser reads them for both (cmd/options.c), with the same values
 * and the same messages; each command sets its own defaults, and run copies
 * the load's share into run_opts.load.
 */
#ifndef HOPBENCH_PLAN_H
#define HOPBENCH_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/loadcfg.h"
#include "host/place.h"

#define CLI_MAX_ENDPOINTS 16
#define CLI_MAX_SIZES     8
#define CLI_SEED_MAX      ((1ULL << 53) - 1) /* --seed: a JSON number every reader keeps exact */

struct shared_opts {
    unsigned conns;         /* -c, --connections */
    unsigned threads;       /* -t, --threads */
    uint64_t duration_ns;   /* -d, --duration: measured time (run: 0 when not given) */
    uint64_t warmup_ns;     /* --warmup */
    uint64_t timeout_ns;    /* --timeout */
    enum place_mode pin;    /* --pin */
    enum load_close close;  /* --close */
    bool block_wait;        /* --wait block (lab: its server too) */
    bool uring_wait;        /* --wait uring (run only) */
    uint64_t sample_ns;     /* --sample-ms: sock_diag sampling period during a run, if given */
    double noisy_cpus;      /* --noisy-threshold, in CPUs; 0: the default (OBS_NOISY_CPUS) */
    bool profile;           /* --profile: sample the kernel's stacks in each window */
    unsigned profile_hz;    /* --profile-hz: samples per second per CPU; 0: PROFILE_PERIOD_NS's */
    const char *json_path;  /* --json; NULL: hopbench-CMD-DATE-TIME.json in the current directory */
    const char *jsonl_path; /* --jsonl: one record per finished run */
    const char *csv_path;   /* --csv: one row per run, written with the evidence; NULL: none */
    bool quiet;             /* -q, --quiet: no live progress line on a terminal */
    bool verbose;           /* -v, --verbose: each run's line, summaries, noisy lines */
    const char *html_path;  /* --html: the evidence drawn as an HTML report; NULL: none */
    unsigned reps;          /* --reps */
    uint64_t cooldown_ns;   /* --cooldown: pause between runs */
    uint64_t seed;          /* --seed */
    bool conns_given;       /* -c was on the command line ("lab overload" keeps it) */
    bool duration_given;    /* -d likewise (lab --quick, "lab overload") */
    bool warmup_given;      /* --warmup likewise */
    bool reps_given;        /* --reps likewise (the default lab's reps) */
    bool pin_given;         /* --pin likewise (the lab's split falls back to same on 1 CPU) */
    bool close_given;       /* --close likewise (else the protocol's closer closes) */
    bool sample_given;      /* --sample-ms likewise (else observe_default_period) */
    bool wait_given;        /* --wait likewise (else the lab picks the wait: lab_opts.wait_auto) */
};

#endif
