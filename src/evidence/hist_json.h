/*
 * hist_json: a histogram in the evidence, both ways. Encoding writes a
 * struct hist as its layout, its totals and its non-zero counters, exactly
 * (so runs from threads, processes or hosts add up later), as one string in
 * the encoding counts_code.h names, and its latency figures; decoding checks
 * that layout, takes that string and the JSON lists of older evidence (runs
 * [start, [count, ...]] and [index, count] pairs) alike, and keeps the
 * counters encoded (struct hist_coded) until they are added into a struct
 * hist or written again.
 */
#ifndef HOPBENCH_EVIDENCE_HIST_JSON_H
#define HOPBENCH_EVIDENCE_HIST_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "evidence/counts_code.h"
#include "hist.h"
#include "util.h"

/* min, p50, p90, p95, p99, p999, p9999, max, mean of h, in ns. */
json_t *report_latency_json(const struct hist *h);

/*
 * A histogram as JSON: config, totals, counts_encoding and counts, the
 * non-zero counters encoded as one string (counts_code.h, docs/evidence.md).
 */
json_t *report_hist_json(const struct hist *h);

/*
 * Adds the histogram JSON j (the "histogram" of a run, as report_hist_json
 * writes it) into dst: counts index by index, total and overflow summed, min
 * and max widened. Decoding is hist_init followed by this. j must have this
 * build's layout (unit "ns", lowest 1, highest HIST_MAX_NS, 3 significant
 * digits), counts as counts_encoding names it (or, without one, as runs or
 * [index, count] pairs), every counter below HIST_COUNTS, and counts that add
 * up to total.
 * Returns 0, or -EINVAL with err set; dst may then be partly updated.
 */
int evidence_hist_add(struct hist *dst, const json_t *j, struct hb_err *err);

/*
 * A decoded histogram: its figures and its counters, checked and written
 * again as counts_encode writes them (whatever form they were read in), so a
 * merge holds each in about the room its text took (less for lists).
 */
struct hist_coded {
    uint64_t total, min, max, overflow; /* min as written: 0 when empty */
    char *counts;                       /* counts_encode's string: "" when empty */
};

/*
 * Decodes the histogram JSON j into c, checked as evidence_hist_add says, and
 * min and max in the first and last counters that hold a value. Returns 0 or
 * -EINVAL with err set; c is released by the caller, also on failure.
 */
int hist_coded_decode(struct hist_coded *c, const json_t *j, struct hb_err *err);

/* Adds c into dst; the total must stay within INT64_MAX, as a file can hold it. 0 or -EINVAL. */
int hist_coded_add(struct hist *dst, const struct hist_coded *c, struct hb_err *err);

/* c as report_hist_json writes a histogram. */
json_t *hist_coded_json(const struct hist_coded *c);

void hist_coded_release(struct hist_coded *c);

#endif
