/*
 * CSV: one row per run, for spreadsheets. The columns are documented in
 * docs/csv.md: the run's cell keys (the transport of the hop under test
 * beside the client's), how it waited and was pinned, when its window began
 * (ISO 8601, UTC) and its figures in a fixed order, memory in bytes, then the
 * columns only some evidence has (error kinds, connection phases, named
 * services), in the order they first appear.
 */
#ifndef HOPBENCH_REPORT_CSV_H
#define HOPBENCH_REPORT_CSV_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "util.h"

/* One evidence document's runs, and the name its rows carry in the source column. */
struct csv_source {
    const char *name;
    const json_t *runs; /* the document's "runs" array */
    const json_t *doc;  /* the document, for what its runs share (placement.pin); NULL: none */
};

/*
 * Writes the header and one row per run of every source to f (RFC 4180:
 * CRLF line ends, fields with a comma, quote or line break quoted). Returns
 * 0, or -EIO when f reports a write error, or -ENOMEM.
 */
int report_csv(FILE *f, const struct csv_source *src, size_t n);

/* report_csv into path, atomically (outfile_replace); err says why not. */
int report_csv_write(const char *path, const struct csv_source *src, size_t n, struct hb_err *err);

#endif
