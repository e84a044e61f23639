/*
 * summary: statistics across repetitions. The unit of
 * analysis is one run. Per cell: median, min-max, SD and n of each metric
 * over its valid runs (invalid runs, and runs Ctrl-C cut short, are shown but
 * left out). Per cell against
 * the first: the ratio of medians with a bootstrap 95 % interval and a
 * two-sided Mann-Whitney U p-value, printed the way benchstat prints them:
 * "+28 % [+24 %, +31 %] (p=0.002 n=10+10)", or "~ +9 % [-4 %, +20 %] (p=0.31 n=10+10)".
 */
#ifndef HOPBENCH_REPORT_SUMMARY_H
#define HOPBENCH_REPORT_SUMMARY_H

#include <jansson.h>
#include <stdio.h>

#include "report/metric.h"
#include "report/report.h"
#include "stats.h"

/* "ops_per_s", "p50_ns", ...: the names used in JSON ("?" for a value out of range). */
const char *summary_metric_name(enum summary_metric m);

struct cell_summary {
    const struct run_record *first; /* a run of this cell, for its labels */
    size_t runs;                    /* all runs of the cell */
    size_t valid;                   /* runs that count: valid and not cut short */
    size_t cut;                     /* runs cut short (left out) */
    size_t saturated;               /* open-loop runs below 99 % of their rate (left out) */
    const char *cut_by;             /* what cut the last of them short: NULL for Ctrl-C */
    struct stats_summary m[METRICS];
    struct stats_delta vs_first[METRICS]; /* unset for cell 0 */
};

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
 * and unix against it. Prints them (f NULL: not), and returns them as a JSON array (owned
 * by the caller), or NULL on OOM.
 */
json_t *summary_lab(FILE *f, const struct run_record *recs, size_t n, uint64_t seed);

/* {"cells": [...]} for the evidence. */
json_t *summary_json(const struct cell_summary *cells, unsigned ncells);

#endif
