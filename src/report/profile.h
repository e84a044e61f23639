/*
 * report/profile: what --profile's samples say per request (docs/profile.md).
 *
 * A run's "profile" object in the evidence (profile_run_json): the sampled
 * nanoseconds of each side by subsystem, and per request, and its folded
 * stacks. Over the runs of a cell: µs per request of each side and subsystem,
 * the median and [min, max] of the runs that count; and for each cell over
 * unix, against the cell over TCP with the same key (protocol, mode, size,
 * connections, pipeline, the label less its last ".transport"): what a
 * request costs more over TCP, by subsystem, medians subtracted with a 95 %
 * bootstrap interval, for the hop's sides together (client, server, the
 * services) and each side; beside it the phases' decomposition (the latency
 * of connect + close, the connection's lifecycle, against the response
 * phase, the transfer: from the request written to the reply's last byte). The same from records
 * (run, lab) and from evidence read back (the stacks, the HTML report).
 */
#ifndef HOPBENCH_REPORT_PROFILE_H
#define HOPBENCH_REPORT_PROFILE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/loadcfg.h"
#include "host/profile.h"
#include "report/record.h"

#define PROF_KEY_CAP 160

/* One profiled run, as the summaries read it. */
struct prof_run {
    char key[PROF_KEY_CAP];  /* the cell but for its transport (pairs tcp with unix) */
    char cell[PROF_KEY_CAP]; /* its name: the endpoint's label, or its address */
    char transport[16];      /* "tcp", "unix", "tcp-veth": the label's last part if it is one */
    char client[16];         /* the client's own hop: its endpoint's transport */
    bool per_request;        /* a connection per request (connect mode): a lifecycle per op */
    bool counts;             /* valid and not cut short */
    uint64_t ops;
    double phase_ns[PHASES]; /* mean latency of each phase, NAN when it has none */
    uint64_t period_ns;
    unsigned cpus;
    unsigned nsides;
    char side[PROFILE_SIDES][SERVICE_NAME_MAX];
    double ns[PROFILE_SIDES][SUBSYS_COUNT]; /* sampled ns over the window */
    double clock_ns[PROFILE_SIDES]; /* its CPU measured by its clocks over the window, or NAN */
    const char *folded;             /* borrowed: the stacks, or NULL */
};

/* The run's "profile" object for the evidence, or NULL when it was not profiled. */
json_t *profile_run_json(const struct run_record *r);

/* r's profile as a prof_run; false when r was not profiled. */
bool prof_run_from_record(const struct run_record *r, struct prof_run *out);

/* An evidence run object's profile; false when it has none (or it is malformed). */
bool prof_run_from_json(const json_t *run, struct prof_run *out);

/*
 * Prints the per-request tables and the decompositions of runs[0 .. n-1]
 * (nothing when none was profiled) and returns them for the evidence
 * (the document's "profile"), NULL when none; the bootstrap seeded by seed.
 */
json_t *profile_summary(FILE *f, const struct prof_run *runs, size_t n, uint64_t seed);

/*
 * profile_summary of the run lines of a --jsonl file (a stack's run child's), printed; the
 * figures are not kept. 0, or a negative errno when the file cannot be read.
 */
int profile_summary_jsonl(FILE *f, const char *path, uint64_t seed);

/* profile_summary of records (those profiled). */
json_t *profile_summary_records(FILE *f, const struct run_record *recs, size_t n, uint64_t seed);

#endif
