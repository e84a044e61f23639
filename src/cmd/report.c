/*
 * report: `hopbench report EVIDENCE.json... -o REPORT.html`, evidence files
 * drawn as one self-contained HTML page (report/html.c), or their runs as CSV.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/options.h"
#include "cmd/session.h"
#include "evidence.h"
#include "report/bottom.h"
#include "report/csv.h"
#include "report/hdr.h"
#include "report/html.h"
#include "util.h"

static const char report_usage[] =
    "usage: hopbench report EVIDENCE.json... -o REPORT.html\n"
    "\n"
    "Draws evidence files (from run, lab or merge, or --jsonl files; up to 16) as one\n"
    "self-contained HTML page: inline SVG charts and CSS, no script, nothing fetched, so it\n"
    "opens from a file:// URL or a mail. Per file: ops/s per cell with every rep as a dot\n"
    "and the median marked; latency percentile curves (0 % to 99.99 % on a nines axis, µs on\n"
    "a log scale), an open loop's intended and service time both; CPU per op stacked by who\n"
    "pays (client, server, each service, the rest of the system); connection phases;\n"
    "latency against the offered rate for open-loop runs; the verdicts with their\n"
    "intervals; the kernel evidence, the machine, placement, sysctls and command line; n/a\n"
    "figures with their reasons. With several files (before and after, two hosts), their\n"
    "cells side by side first, each file against the first as compare prints it.\n"
    "With -o it then prints the page's bottom line as a run with --reps ends with it (the\n"
    "files' own, each file's cells named by its path when there are several).\n"
    "docs/report.md describes each chart.\n"
    "\n";

static const struct cmd_option report_options[] = {
    { "output", 'o', "FILE",
      "write the report to FILE (atomically), then print its bottom\n"
      "line (the files' own, as a run with --reps ends with it)",
      'o' },
    { "csv", 0, "FILE",
      "also (or instead) write one CSV row per run of every file, its\n"
      "source column the file's name (docs/csv.md lists the columns)",
      OPT_CSV },
    { "hgrm", 0, "DIR",
      "also (or instead) write each histogram of each run (latency,\n"
      "service time, phases) into DIR as HdrHistogram's percentile\n"
      "distribution, one .hgrm each, named by its run",
      OPT_HGRM },
    { "hgrm-ratio", 0, "N", "divide the .hgrm values (ns) by N (default 1000: microseconds)",
      OPT_HGRM_RATIO },
    { "hdr-log", 0, "FILE",
      "also (or instead) write them as one HdrHistogram log (V2, a line\n"
      "per histogram tagged by its run, timed by its window)",
      OPT_HDR_LOG },
    { "help", 'h', NULL, "this text", 'h' },
    CMD_END,
};

static const char report_tail[] =
    "\n"
    "Exit codes: 0 written, 1 a file cannot be read or is not hopbench evidence, or the\n"
    "report cannot be written, 64 bad usage.\n";

/* What report is asked. */
static struct report_opts {
    const char **paths; /* the evidence files, in the order given (allocated) */
    size_t npaths;
    const char *out;             /* -o, --output: the HTML page, or NULL */
    const char *csv;             /* --csv: one row per run of every file, or NULL */
    const char *hgrm;            /* --hgrm: a .hgrm per histogram into this directory, or NULL */
    const char *hdr_log;         /* --hdr-log: every histogram as one HdrHistogram log, or NULL */
    const char *hgrm_ratio_text; /* --hgrm-ratio as given, or NULL */
    double hgrm_ratio;           /* the .hgrm values are ns / this (HDR_RATIO_US) */
} report_opts;

static void report_release(void)
{
    free(report_opts.paths);
    report_opts = (struct report_opts){ 0 };
}

/* --hgrm-ratio N: a number above 0, HDR_RATIO_US when not given. */
static int report_ratio(struct report_opts *o, struct hb_err *err)
{
    char *end = NULL;

    o->hgrm_ratio = HDR_RATIO_US;
    if (o->hgrm_ratio_text == NULL) return 0;
    errno = 0;
    o->hgrm_ratio = strtod(o->hgrm_ratio_text, &end);
    if (end == o->hgrm_ratio_text || *end != '\0' || errno != 0 || !(o->hgrm_ratio > 0) ||
        !isfinite(o->hgrm_ratio))
        return hb_fail(err, -EINVAL, "--hgrm-ratio: '%s' is not a number above 0 (1000: µs)",
                       o->hgrm_ratio_text);
    return 0;
}

/* The words, read one by one: no abbreviations, --help anywhere. */
static int report_parse(int argc, char **argv, FILE *out, struct hb_err *err)
{
    struct report_opts *o = &report_opts;
    const struct opt_value more[] = { { OPT_CSV, &o->csv },
                                      { OPT_HGRM, &o->hgrm },
                                      { OPT_HGRM_RATIO, &o->hgrm_ratio_text },
                                      { OPT_HDR_LOG, &o->hdr_log } };
    int rc = 0;

    report_release();
    if (cmd_asks_help(report_options, argc, argv)) {
        cmd_help(&cmd_report, out);
        return CLI_HELP;
    }
    if (opt_files_out(report_options, argc, argv, &o->paths, &o->npaths, &o->out, more,
                      ARRAY_LEN(more), err) < 0)
        rc = -EINVAL;
    else if (o->npaths == 0)
        rc = hb_fail(err, -EINVAL, "want one or more evidence files");
    else if (o->npaths > HTML_MAX_FILES)
        rc = hb_fail(err, -EINVAL, "want at most %d evidence files, got %zu", HTML_MAX_FILES,
                     o->npaths);
    else if (o->out == NULL && o->csv == NULL && o->hgrm == NULL && o->hdr_log == NULL)
        rc = hb_fail(err, -EINVAL,
                     "want -o REPORT.html, --csv FILE.csv, --hgrm DIR or --hdr-log FILE");
    else
        rc = report_ratio(o, err);
    if (rc < 0) report_release();
    return rc;
}

/* report --csv: every run of every file, each file's rows named by its path. */
static int report_csv_files(const char *csv, const char *const *paths, size_t n, struct hb_err *err)
{
    struct loaded {
        json_t *doc;
    } *docs = xcalloc(n, sizeof(*docs));
    struct csv_source *src = xcalloc(n, sizeof(*src));
    int rc = 0;

    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = evidence_load(paths[i], &docs[i].doc, err);
        if (rc < 0) break;
        src[i] =
            (struct csv_source){ paths[i], json_object_get(docs[i].doc, EV_RUNS), docs[i].doc };
    }
    if (rc == 0) rc = report_csv_write(csv, src, n, err);
    for (size_t i = 0; i < n; i++)
        json_decref(docs[i].doc);
    free(docs);
    free(src);
    return rc;
}

/* Skips a run: the bottom line is in the files' heads. */
static int report_skip_run(void *ctx, size_t idx, json_t *run, struct hb_err *err)
{
    UNUSED(ctx);
    UNUSED(idx);
    UNUSED(run);
    UNUSED(err);
    return 0;
}

/*
 * The files' bottom line as the page draws it first, printed as a run ends
 * with it (each file's cells named by its path when there are several);
 * nothing when no file has one.
 */
static int report_bottom_print(const char *const *paths, size_t n, struct hb_err *err)
{
    const struct evidence_reader skip = { .take = report_skip_run };
    json_t *heads[HTML_MAX_FILES] = { 0 };
    const char *titles[HTML_MAX_FILES];
    struct bottom_line b;
    int rc = 0;

    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = evidence_read(paths[i], &skip, &heads[i], err);
        titles[i] = n > 1 ? paths[i] : NULL;
    }
    if (rc == 0) {
        bottom_of_heads((const json_t *const *)heads, titles, n, &b);
        bottom_print(stdout, &b, bottom_colour(stdout), NULL);
        bottom_release(&b);
    }
    for (size_t i = 0; i < n; i++)
        json_decref(heads[i]);
    return rc;
}

static int report_exec(const struct cmd_env *env)
{
    const struct report_opts *o = &report_opts;
    struct hb_err err = { 0 };
    char shown[TEXT_SAFE_CAP]; /* o->out, text_safe */
    int rc;

    UNUSED(env);
    if ((o->out != NULL && report_html_write(o->out, o->paths, o->npaths, &err) < 0) ||
        (o->csv != NULL && report_csv_files(o->csv, o->paths, o->npaths, &err) < 0) ||
        (o->hgrm != NULL &&
         hdr_hgrm_write(o->hgrm, o->hgrm_ratio, o->paths, o->npaths, stdout, &err) < 0) ||
        (o->hdr_log != NULL && hdr_log_write(o->hdr_log, o->paths, o->npaths, &err) < 0)) {
        rc = cmd_fail("report", &err, HB_EXIT_RUNTIME);
    } else {
        if (o->out != NULL) printf("report: %s\n", text_safe(shown, sizeof(shown), o->out));
        if (o->csv != NULL) printf("csv: %s\n", text_safe(shown, sizeof(shown), o->csv));
        if (o->hdr_log != NULL)
            printf("hdr-log: %s\n", text_safe(shown, sizeof(shown), o->hdr_log));
        /* the page's bottom line, as a run ends with it */
        if (o->out != NULL && report_bottom_print(o->paths, o->npaths, &err) < 0)
            rc = cmd_fail("report", &err, HB_EXIT_RUNTIME);
        else
            rc = cmd_stdout_failed() ? HB_EXIT_RUNTIME : HB_EXIT_OK;
    }
    report_release();
    return rc;
}

const struct command cmd_report = {
    .name = "report",
    .synopsis = "report EVIDENCE.json... -o REPORT.html",
    .summary = "draws evidence files as one self-contained HTML page (SVG charts, no script)",
    .usage = report_usage,
    .options = report_options,
    .tail = report_tail,
    .column = 22,
    .hint = true,
    .parse = report_parse,
    .exec = report_exec,
};
