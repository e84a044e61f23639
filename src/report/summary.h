/*
 * summary: statistics across repetitions. The unit of
 * analysis is one run. Per cell: median, min-max, SD and n of each metric
 * over its valid runs (invalid runs, and runs Ctrl-C cut short, are shown but
 * left out). Per cell against
 * the first: the ratio of medians with a bootstrap 95 % interval and a
 * two-sided Mann-Whitney U p-value, printed the way benchstat prints them:
 * "+28 % [+24 %, +31 %] (p=0.002 n=10+10)", or "~ (p=0.31 n=10+10)".
 */
#ifndef HOPBENCH_REPORT_SUMMARY_H
#define HOPBENCH_REPORT_SUMMARY_H

#include <jansson.h>
#include <stdio.h>

#include "report/report.h"
#include "stats.h"

enum summary_metric {
    METRIC_OPS_PER_S = 0,
    METRIC_P50,
    METRIC_P99,
    METRIC_P999,
    METRIC_CPU_PER_OP,
    METRICS
};

/* "ops_per_s", "p50_ns", ...: the names used in JSON. */
const char *summary_metric_name(enum summary_metric m);

struct summary_delta {
    int ok; /* 0 when either arm has no valid run */
    double ratio, lo, hi, p;
    size_t na, nb;
    char text[96]; /* benchstat-style */
};

struct cell_summary {
    const struct run_record *first; /* a run of this cell, for its labels */
    size_t runs;                    /* all runs of the cell */
    size_t valid;                   /* runs that count: valid and not cut short */
    size_t cut;                     /* runs cut short (left out) */
    const char *cut_by;             /* what cut the last of them short: NULL for Ctrl-C */
    struct stats_summary m[METRICS];
    struct summary_delta vs_first[METRICS]; /* unset for cell 0 */
};

/*
 * b against a, one value per run each: the ratio of medians b / a with its
 * bootstrap interval (seeded) and the Mann-Whitney p, as vs_first holds them.
 */
void summary_delta(struct summary_delta *d, const double *a, size_t na, const double *b, size_t nb,
                   uint64_t seed);

/*
 * Summarizes recs (each with its cell index in [0, ncells)) into out[ncells].
 * Bootstrap resampling uses `seed`, so the same evidence gives the same
 * intervals. Returns 0 or a negative errno.
 */
int summary_compute(const struct run_record *recs, size_t n, unsigned ncells, uint64_t seed,
                    struct cell_summary *out);

/* The summary under `title`: per cell its metrics, and each cell against the first. */
void summary_print(FILE *f, const char *title, const struct cell_summary *cells, unsigned ncells);

/*
 * The lab's summaries: for each (size, mode) of recs, tcp as the first cell
 * and unix against it. Prints them, and returns them as a JSON array (owned
 * by the caller), or NULL on OOM.
 */
json_t *summary_lab(FILE *f, const struct run_record *recs, size_t n, uint64_t seed);

/* {"cells": [...]} for the evidence. */
json_t *summary_json(const struct cell_summary *cells, unsigned ncells);

#endif
