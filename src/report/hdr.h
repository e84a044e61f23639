/*
 * hdr: a struct hist in HdrHistogram's own formats, for its tools (the
 * percentile plotter, HistogramLogAnalyzer, HistogramLogProcessor, the ports
 * that read its logs). The layout is already HdrHistogram's (hist.h: lowest
 * 1 ns, highest HIST_MAX_NS, 3 significant digits, the same counter
 * indices), so each counter is written as it is.
 *
 *  - The percentile distribution (".hgrm") exactly as HdrHistogram's
 *    outputPercentileDistribution prints it with 5 ticks per half distance:
 *    its header, a line per percentile step, the Mean/StdDeviation, Max/Total
 *    count and Buckets/SubBuckets footer; values divided by a ratio (1000:
 *    microseconds), numbers rounded half up from their shortest decimal form
 *    as Java's Formatter does.
 *  - The V2 compressed encoding, in base64 ("HISTF..."): cookie 0x1c849314
 *    (0x1c849304 with the word-size nibble of LEB128), the compressed length
 *    and the zlib-deflated V2 encoding (cookie 0x1c849313, the payload's
 *    length, normalizing offset 0, 3 digits, lowest 1, highest, conversion
 *    ratio 1.0, then the counters up to the maximum's as ZigZag LEB128 longs,
 *    a run of zeros as its negated length). A histogram log holds one per line.
 *
 * docs/report.md says how `hopbench report --hgrm` and `--hdr-log` use them.
 */
#ifndef HOPBENCH_REPORT_HDR_H
#define HOPBENCH_REPORT_HDR_H

#include <stddef.h>
#include <stdio.h>

#include "hist.h"
#include "util.h"

/* HdrHistogram's bucket and sub-bucket counts for the layout of hist.h. */
#define HDR_BUCKETS     HIST_BUCKETS
#define HDR_SUB_BUCKETS HIST_SUB_BUCKETS

/* The default --hgrm-ratio: values in microseconds. */
#define HDR_RATIO_US 1000.0

/* h's percentile distribution into f, values divided by ratio (> 0). */
void hdr_percentiles(FILE *f, const struct hist *h, double ratio);

/* h's V2 compressed encoding in base64 (NUL-ended, the caller frees it); NULL: no memory. */
char *hdr_v2_base64(const struct hist *h);

/*
 * `hopbench report --hgrm DIR`: every histogram of every run of the evidence
 * files (the op latency, an open loop's service time, each phase) as a .hgrm
 * file in dir (made when missing), named by the run (docs/report.md), values
 * divided by ratio; one line to out says how many. 0, or a negative errno
 * with err set.
 */
int hdr_hgrm_write(const char *dir, double ratio, const char *const *paths, size_t n, FILE *out,
                   struct hb_err *err);

/*
 * `hopbench report --hdr-log FILE`: the same histograms as one HdrHistogram
 * log (V2), a line each tagged by its run as the .hgrm names, its interval
 * the run's measured window. 0, or a negative errno with err set.
 */
int hdr_log_write(const char *path, const char *const *paths, size_t n, struct hb_err *err);

#endif
