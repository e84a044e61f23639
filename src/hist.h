/*
 * hist: a log-linear latency histogram in the HdrHistogram scheme.
 *
 * Values are nanoseconds, lowest discernible 1 ns, highest trackable 60 s, 3
 * significant digits: 2048 sub-buckets, 26 buckets, 27,648 uint64 counters
 * (216 KiB). Every recorded value v lands in a bucket whose [lowest, highest]
 * equivalent range contains v and is at most v/1024 wide, so the relative
 * error of any reported value is below 0.1 %.
 *
 * Recording is an index calculation and an increment: no allocation, no lock,
 * no atomic. Each thread owns its histograms; they are merged at the end by
 * element-wise addition. Values above the top are clamped to HIST_MAX_NS and
 * counted in `overflow` as well as in the top bucket.
 */
#ifndef HOPBENCH_HIST_H
#define HOPBENCH_HIST_H

#include <stddef.h>
#include <stdint.h>

#define HIST_MAX_NS      60000000000ULL /* highest trackable value: 60 s */
#define HIST_SUB_BUCKETS 2048           /* 2^ceil(log2(2 * 10^3)) */
#define HIST_HALF_MAG    10             /* log2(HIST_SUB_BUCKETS / 2) */
#define HIST_BUCKETS     26             /* smallest b with 2048 << (b - 1) > HIST_MAX_NS */
#define HIST_COUNTS      ((size_t)(HIST_BUCKETS + 1) * (HIST_SUB_BUCKETS / 2)) /* 27,648 */

struct hist {
    uint64_t total;    /* values recorded, overflow included */
    uint64_t min;      /* smallest recorded value (UINT64_MAX when empty) */
    uint64_t max;      /* largest recorded value, after clamping */
    uint64_t overflow; /* values that were above HIST_MAX_NS */
    uint64_t counts[HIST_COUNTS];
};

/*
 * Allocates an empty histogram with every page already in memory, so that
 * recording never takes a page fault; NULL on OOM. Free it with hist_free.
 */
struct hist *hist_new(void);

/* Frees a histogram from hist_new; NULL is fine. */
void hist_free(struct hist *h);

/* Makes h empty. h is caller-owned (216 KiB: allocate it, don't put it on a thread stack). */
void hist_init(struct hist *h);

/* Index of the counter for value v (v already clamped to HIST_MAX_NS). */
static inline size_t hist_index(uint64_t v)
{
    /* unit_mag = 0 since the lowest discernible value is 1 ns */
    const uint64_t mask = (uint64_t)(HIST_SUB_BUCKETS - 1);
    unsigned bucket = (unsigned)(64 - __builtin_clzll(v | mask)) - (HIST_HALF_MAG + 1);
    uint64_t sub = v >> bucket;

    return ((size_t)(bucket + 1) << HIST_HALF_MAG) + (size_t)(sub - HIST_SUB_BUCKETS / 2);
}

/* Records n times one value, as n hist_record calls would. */
static inline void hist_record_n(struct hist *h, uint64_t v, uint64_t n)
{
    if (n == 0) return;
    if (v > HIST_MAX_NS) {
        v = HIST_MAX_NS;
        h->overflow += n;
    }
    h->counts[hist_index(v)] += n;
    h->total += n;
    if (v < h->min) h->min = v;
    if (v > h->max) h->max = v;
}

/* Records one value. Never fails; values above HIST_MAX_NS are clamped and counted. */
static inline void hist_record(struct hist *h, uint64_t v)
{
    hist_record_n(h, v, 1);
}

/* Lowest value that maps to counter idx. */
uint64_t hist_value_at_index(size_t idx);

/* Highest value that maps to the same counter as v. */
uint64_t hist_highest_equivalent(uint64_t v);

/*
 * Value at percentile p (0 < p <= 100): the highest equivalent value of the
 * counter where the running count first reaches max(1, round(p/100 * total)),
 * capped at max (so no percentile is ever printed above the maximum). Returns
 * 0 for an empty histogram; p = 100 gives max.
 */
uint64_t hist_percentile(const struct hist *h, double p);

/*
 * The rank (1-based) of the value at percentile p among total (> 0) values,
 * as hist_percentile counts it: round(p/100 * total), at least 1, at most total.
 */
uint64_t hist_percentile_rank(double p, uint64_t total);

/* How many recorded values are at least v (to counter precision: whole counters from v's). */
uint64_t hist_count_at_least(const struct hist *h, uint64_t v);

/* Mean of the recorded values, using each counter's midpoint; 0 when empty. */
double hist_mean(const struct hist *h);

/* Adds src into dst (counts, total, overflow, min, max). Exact: no value is lost. */
void hist_merge(struct hist *dst, const struct hist *src);

#endif
