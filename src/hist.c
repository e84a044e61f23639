/*
 * hist: the read side of the log-linear latency histogram (see hist.h).
 *
 * Recording lives inline in hist.h because it is on the hot path; this file
 * holds what runs once per report: mapping counters back to values,
 * percentiles, the mean and merging per-thread histograms.
 */
#include "hist.h"

#include <stdlib.h>

#include <string.h>

/* The smallest page size: a larger page is touched more than once. */
#define HIST_TOUCH_STRIDE 4096

/*
 * Bucket of v, i.e. log2 of the width of its counter's value range. Same
 * formula as hist_index() but without the index arithmetic, so it is valid
 * for any uint64_t (the OR keeps clz away from 0 and puts v < 2048 in bucket 0).
 */
static unsigned bucket_of(uint64_t v)
{
    const uint64_t mask = (uint64_t)(HIST_SUB_BUCKETS - 1);

    return (unsigned)(64 - __builtin_clzll(v | mask)) - (HIST_HALF_MAG + 1);
}

/*
 * Lowest value sharing v's counter: clear the bits below the bucket's
 * resolution. Shifting instead of going through hist_index() cannot overflow,
 * even for values far above HIST_MAX_NS.
 */
static uint64_t lowest_equivalent(uint64_t v)
{
    unsigned bucket = bucket_of(v);

    return (v >> bucket) << bucket;
}

uint64_t hist_value_at_index(size_t idx)
{
    const size_t half = HIST_SUB_BUCKETS / 2;
    long bucket = (long)(idx >> HIST_HALF_MAG) - 1;
    uint64_t sub = (uint64_t)(idx & (half - 1)) + half;

    /*
     * Indices below half are the lower half of bucket 0 (values 0..1023),
     * which hist_index() reaches through "bucket + 1 = 1" with sub < half.
     */
    if (bucket < 0) {
        bucket = 0;
        sub -= half;
    }
    return sub << bucket;
}

uint64_t hist_highest_equivalent(uint64_t v)
{
    /* A bucket-b counter covers 2^b consecutive values starting at the lowest one. */
    return lowest_equivalent(v) + ((UINT64_C(1) << bucket_of(v)) - 1);
}

uint64_t hist_percentile_rank(double p, uint64_t total)
{
    uint64_t rank;

    /* Written so a NaN p falls to 0 too: converting NaN to an integer is undefined. */
    if (!(p > 0.0)) p = 0.0;
    if (p > 100.0) p = 100.0;
    rank = (uint64_t)(p / 100.0 * (double)total + 0.5);
    if (rank < 1) rank = 1;
    /* double rounding can overshoot for totals above 2^53 */
    if (rank > total) rank = total;
    return rank;
}

uint64_t hist_percentile(const struct hist *h, double p)
{
    uint64_t rank, seen = 0;

    if (h->total == 0) return 0;
    rank = hist_percentile_rank(p, h->total);
    for (size_t i = 0; i < HIST_COUNTS; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            /* The bucket's upper edge, but never above the largest value recorded. */
            uint64_t v = hist_highest_equivalent(hist_value_at_index(i));
            return v < h->max ? v : h->max;
        }
    }
    /* Only reachable if counts and total disagree; the top recorded value is the honest answer. */
    return h->max;
}

double hist_mean(const struct hist *h)
{
    double sum = 0.0;

    if (h->total == 0) return 0.0;
    for (size_t i = 0; i < HIST_COUNTS; i++) {
        uint64_t lo, half_width;

        if (h->counts[i] == 0) continue;
        lo = hist_value_at_index(i);
        /* midpoint of the counter's range, as HdrHistogram's median-equivalent value */
        half_width = (UINT64_C(1) << bucket_of(lo)) / 2;
        /* double: count * value can exceed 2^64 (e.g. 10^9 values near 60 s) */
        sum += (double)h->counts[i] * (double)(lo + half_width);
    }
    return sum / (double)h->total;
}

void hist_init(struct hist *h)
{
    memset(h, 0, sizeof(*h));
    /* UINT64_MAX so the first recorded value (or a merged-in min) always wins */
    h->min = UINT64_MAX;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
    for (size_t i = 0; i < HIST_COUNTS; i++)
        dst->counts[i] += src->counts[i];
    dst->total += src->total;
    dst->overflow += src->overflow;
    /* an empty src has min = UINT64_MAX and max = 0, so it leaves dst unchanged */
    if (src->min < dst->min) dst->min = src->min;
    if (src->max > dst->max) dst->max = src->max;
}

/*
 * Writes one byte per page of [p, p + len). The compiler turns malloc followed
 * by memset(0) into calloc, whose fresh pages (a histogram is above malloc's
 * mmap threshold) are left unmapped: each would then be faulted in on the hot
 * path, the first time a value lands in it, and the process would grow for as
 * long as new latencies keep arriving. volatile keeps the stores, which a
 * compiler may otherwise drop as writing zero over zero.
 */
static void touch_pages(void *p, size_t len)
{
    volatile unsigned char *b = p;

    for (size_t i = 0; i < len; i += HIST_TOUCH_STRIDE)
        b[i] = 0;
    if (len > 0) b[len - 1] = 0;
}

struct hist *hist_new(void)
{
    struct hist *h = malloc(sizeof(*h));

    if (h == NULL) return NULL;
    hist_init(h);
    touch_pages(h, sizeof(*h));
    return h;
}

void hist_free(struct hist *h)
{
    free(h);
}

uint64_t hist_count_at_least(const struct hist *h, uint64_t v)
{
    uint64_t n = 0; /* an overflow is in the top counter too */

    for (size_t i = hist_index(v); i < HIST_COUNTS; i++)
        n += h->counts[i];
    return n;
}
