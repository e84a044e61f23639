/*
 * report: what a person reads (tables) and what a program reads (the JSON
 * evidence), both from the same run records. Figures are printed as measured:
 * nothing is rounded into a verdict, and errors are always shown.
 */
#ifndef HOPBENCH_REPORT_REPORT_H
#define HOPBENCH_REPORT_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "engine/load.h"
#include "evidence/hist_json.h"
#include "evidence/schema.h"
#include "host/observe.h"
#include "host/place.h"
#include "host/probe.h"
#include "report/record.h"
#include "util.h"

/* The schema every evidence document and --jsonl header names. */
#define REPORT_SCHEMA EVIDENCE_SCHEMA

/* What the whole invocation was. */
struct report_meta {
    const char *command; /* "run" or "lab" */
    int argc;
    char **argv;
    const struct place *place;
    const struct machine *machine;
    uint64_t started_unix_s;
    uint64_t elapsed_ns; /* from the invocation's start to the evidence (not in a JSONL header) */
    bool interrupted;
    const char *server; /* "built-in echo (pid 1234)" or "external" */
    json_t *plan;       /* {reps, order, seed, cooldown_s} or NULL; borrowed */
    json_t *summary;    /* from summary_json, or NULL; borrowed */
    json_t *bottom;     /* from bottom_json, or NULL; borrowed */
    json_t *profile;    /* --profile: from profile_summary, or NULL; borrowed */
};

/*
 * A "cut short:" line for each run that ended early, naming what ended it
 * (Ctrl-C, or its cut_by); prints nothing when none did.
 */
void report_cut_short(FILE *f, const struct run_record *recs, size_t n);

/* The table of `hopbench run`: one row per endpoint, and its ratio to the first. */
void report_run_table(FILE *f, const struct run_record *recs, size_t n);

/*
 * For each run that sent several kinds of request (a redis mix) or made
 * requests before it: a line with its replies by kind and those requests.
 */
void report_kinds(FILE *f, const struct run_record *recs, size_t n);

/* Where the time goes: CPU per op (client, server, system), phase medians, TIME_WAIT peaks. */
void report_cost_table(FILE *f, const struct run_record *recs, size_t n);

/* Open-loop runs: the rate asked and achieved, and both latencies (intended and service). */
void report_open_loop(FILE *f, const struct run_record *recs, size_t n);

/*
 * One line: the base endpoint ep's open loop takes `share` of (--rate N%),
 * with its probes' spread, or that it was given by --rate-base.
 */
void report_rate_base(FILE *f, const struct endpoint *ep, const struct rate_base *b, double share);

/* "lab overload": per run, ops/s, connect errors by kind, resets, kernel drops, 1 s stalls. */
void report_overload(FILE *f, const struct run_record *recs, size_t n);

/* The tables of `hopbench lab`: one per size, transports x modes, unix/tcp ratios. */
void report_lab_tables(FILE *f, const struct run_record *recs, size_t n);

/*
 * The kernel evidence of each run, three lines each: the hop's sockets at
 * their peaks (established, accept queue, TIME_WAIT, ports held), the
 * server's memory (PSS and working set, start -> end), the kernel counters
 * that moved. n/a with the reason.
 */
void report_kernel_evidence(FILE *f, const struct run_record *recs, size_t n);

/* One line: the sysctls that shape loopback TCP, n/a with the reason when unreadable. */
void report_sysctls(FILE *f, const struct machine *m);

/*
 * The lines that qualify runs: "noisy:" for each run other processes' CPU or
 * steal disturbed (struct obs_other), "kernel:" for packets dropped, "invalid:"
 * and "errors:" for runs that had errors, "saturated:" for open-loop runs
 * below 99 % of their rate; prints nothing when all were clean.
 */
void report_errors(FILE *f, const struct run_record *recs, size_t n);

/* report_errors without the "noisy:" lines (a bottom line counts them instead). */
void report_errors_only(FILE *f, const struct run_record *recs, size_t n);

/*
 * One line: how many of the runs were noisy ("  3 of 10 runs noisy ..."),
 * and how many could not be told; printed beside a summary of those runs.
 */
void report_noisy_count(FILE *f, const struct run_record *recs, size_t n);

/* The evidence document (see docs/evidence.md). The caller owns the result (json_decref). */
json_t *report_json(const struct report_meta *meta, const struct run_record *recs, size_t n);

/* The machine (probe_machine) as the evidence's "machine" object. */
json_t *report_machine_json(const struct machine *m);

/* One run as JSON (the records of "runs" and of --jsonl); NULL if it cannot be encoded. */
json_t *report_run_json(const struct run_record *r);

struct outfile;

/*
 * --jsonl: the first line an invocation appends to o (an OUTFILE_APPEND
 * outfile), {"record": "header", schema, tool, command, argv, started_unix_s,
 * machine, placement, server, plan}. Appended whole or not at all
 * (outfile_append), the stop signals held meanwhile. Returns 0 or a negative
 * errno with err set ("cannot write PATH: reason").
 */
int report_jsonl_header(struct outfile *o, const struct report_meta *meta, struct hb_err *err);

/* Appends r as one line {"record": "run", ...the run record}, as report_jsonl_header does. */
int report_jsonl_append(struct outfile *o, const struct run_record *r, struct hb_err *err);

/* Writes doc to path through outfile_replace. Returns 0 or a negative errno. */
int report_json_write(const char *path, json_t *doc, struct hb_err *err);

#endif
