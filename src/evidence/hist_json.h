/*
 * hist_json: a histogram in the evidence, both ways. Encoding writes a
 * struct hist as its layout, its totals and its non-zero counters as runs
 * [start, [count, ...]] of consecutive counters (so runs from threads,
 * processes or hosts add up exactly later), and its latency figures; decoding
 * checks that layout, takes runs and the [index, count] pairs of older
 * evidence alike, and keeps the non-zero counters as pairs (struct
 * hist_pairs, at most eight times the room their text took) until they are
 * added into a struct hist or written again.
 */
#ifndef HOPBENCH_EVIDENCE_HIST_JSON_H
#define HOPBENCH_EVIDENCE_HIST_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "hist.h"
#include "util.h"

/* min, p50, p90, p95, p99, p999, p9999, max, mean of h, in ns. */
json_t *report_latency_json(const struct hist *h);

/*
 * A histogram as JSON: config, totals and counts, the non-zero counters as
 * [start, [count, ...]] runs, ascending, each run going on over up to a few
 * zero counters rather than starting a new one (docs/evidence.md).
 */
json_t *report_hist_json(const struct hist *h);

/*
 * Adds the histogram JSON j (the "histogram" of a run, as report_hist_json
 * writes it) into dst: counts index by index, total and overflow summed, min
 * and max widened. Decoding is hist_init followed by this. j must have this
 * build's layout (unit "ns", lowest 1, highest HIST_MAX_NS, 3 significant
 * digits), counts as runs or [index, count] pairs, every counter they list
 * below HIST_COUNTS, and counts that add up to total.
 * Returns 0, or -EINVAL with err set; dst may then be partly updated.
 */
int evidence_hist_add(struct hist *dst, const json_t *j, struct hb_err *err);

struct hist_pair {
    uint32_t idx;
    uint64_t count;
};

/*
 * A decoded histogram: its counters as [index, count] pairs in the file's
 * order (a run's zeros left out) and the figures beside them.
 */
struct hist_pairs {
    uint64_t total, min, max, overflow; /* min as written: 0 when empty */
    struct hist_pair *pairs;
    size_t n;
};

/*
 * Decodes the histogram JSON j into p, checked as evidence_hist_add says, and
 * min and max in the first and last counters that hold a value. Returns 0 or
 * -EINVAL with err set; p is released by the caller, also on failure.
 */
int hist_pairs_decode(struct hist_pairs *p, const json_t *j, struct hb_err *err);

/* Adds p into dst; the total must stay within INT64_MAX, as a file can hold it. 0 or -EINVAL. */
int hist_pairs_add(struct hist *dst, const struct hist_pairs *p, struct hb_err *err);

/*
 * p as report_hist_json writes a histogram, its pairs in their order: a new
 * run where a pair does not follow the one before.
 */
json_t *hist_pairs_json(const struct hist_pairs *p);

void hist_pairs_release(struct hist_pairs *p);

#endif
