/*
 * charts: the SVG charts of the HTML report (html.c calls them), drawn from the
 * cells of htmldata.h through svg.h.
 */
#ifndef HOPBENCH_REPORT_CHARTS_H
#define HOPBENCH_REPORT_CHARTS_H

#include <stddef.h>
#include <stdio.h>

#include "report/htmldata.h"

/* The charts of one file (charts.c): each writes its SVG, or a line saying why there is none. */
void chart_latency(FILE *f, const struct hfile *hf);
void chart_cpu(FILE *f, const struct hfile *hf);
void chart_phases(FILE *f, const struct hfile *hf);
void chart_rates(FILE *f, const struct hfile *hf);
/* ops/s and p99 per interval across each run (runs[].series), a chart per group of cells. */
void chart_series(FILE *f, const struct hfile *hf);

/*
 * ops/s per cell, every rep a dot and the median marked, over the files
 * files[0 .. n-1] side by side (cells matched by key), one colour each.
 */
void chart_ops(FILE *f, const struct hfile *const *files, size_t n);

#endif
