/*
 * stats: statistics across repetitions. The unit of analysis is
 * one run: each function takes one value per run, per arm.
 *
 * - stats_summarize: median, min, max, mean and sample SD of one cell.
 * - stats_mann_whitney: two-sided Mann–Whitney U test (benchstat's A/B test).
 * - stats_bootstrap_ratio: percentile-bootstrap interval of median(b)/median(a).
 * - stats_format_delta: the benchstat-style verdict "1.28× [1.24×, 1.31×] (p=…)", "~" before
 *   it when not significant.
 * - stats_delta: all three for one A/B pair, as summaries and compare report it.
 * - stats_order_abba / stats_order_shuffle: the order in which to run the arms.
 *
 * Everything here is pure: no I/O, no globals, no clocks. Only
 * stats_bootstrap_ratio allocates (one buffer, freed before it returns).
 * Randomness comes from a private xoshiro256** seeded through splitmix64, so a
 * seed gives the same result on every platform.
 *
 * Limits: stats_summarize (for its median) and stats_mann_whitney take O(n²)
 * comparisons and no scratch memory, which suits run counts (tens to a few
 * thousand per arm), not per-request samples. Inputs must not contain NaN.
 */
#ifndef HOPBENCH_STATS_H
#define HOPBENCH_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Largest per-arm sample size for which stats_mann_whitney uses the exact null
 * distribution of U (when there are no ties); bigger samples, or ties, use the
 * normal approximation. It also bounds a stack table of
 * STATS_MWU_EXACT_MAX² / 2 + 1 doubles (10 KiB).
 */
#define STATS_MWU_EXACT_MAX 50

/* Summary of one cell's runs (the unit of analysis is one run). */
struct stats_summary {
    size_t n;
    double median; /* middle value; the mean of the two middle values for even n */
    double min, max;
    double mean;
    double sd; /* sample standard deviation (divides by n - 1); 0 for n < 2 */
};

/*
 * Summarizes x[0 .. n-1]; x is only read. Returns 0 and fills *out, or -EINVAL
 * (leaving *out untouched) if n == 0 or a value is not finite (NaN or ±inf).
 */
int stats_summarize(const double *x, size_t n, struct stats_summary *out);

/*
 * The one rule of the tables for a figure some runs may lack (the stack's
 * table, the report's agent's table): the median of the runs that have it.
 * x[0 .. n-1] holds a value per run, NAN (any value not finite) for a run
 * without the figure. *median is the median of the finite values, NAN when
 * there is none; returns how many there are.
 */
size_t stats_median_known(const double *x, size_t n, double *median);

/*
 * What a table shows beside such a median: "1 of 3 runs" when known, the runs
 * that have the figure, is fewer than all (and not 0); else "".
 */
void stats_known_note(char *buf, size_t cap, size_t known, size_t all);

/*
 * Two-sided Mann–Whitney U test of a[0 .. na-1] against b[0 .. nb-1]; both are
 * only read. *u is U for a: the number of pairs (a_i, b_j) with a_i > b_j, a
 * tie counting 1/2 (so U for b is na * nb - *u). *p is the two-sided p-value
 * for "a and b come from the same distribution":
 *   - no ties and na, nb <= STATS_MWU_EXACT_MAX: exact, 2 * P(U <= min(u, na nb - u))
 *     under the null, capped at 1 (4 vs 4 completely separated gives 2/70);
 *   - otherwise the normal approximation with tie correction of the variance and
 *     continuity correction 1/2 (scipy's method="asymptotic"); p = 1 when all
 *     values are equal.
 * Returns 0, or -EINVAL (outputs untouched) if na or nb is 0 or a value is NaN.
 */
int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *u,
                       double *p);

/*
 * Percentile-bootstrap interval of the ratio median(b) / median(a), e.g. median
 * latency of arm B over arm A. Each of `iterations` rounds resamples a and b
 * independently with replacement (na and nb draws) and recomputes the ratio;
 * *lo and *hi are the (1 - level)/2 and (1 + level)/2 quantiles of those ratios
 * (linear interpolation between order statistics, numpy's default).
 * *ratio is the point estimate median(b) / median(a) of the data themselves.
 * The draws come from `seed` alone: the same inputs and seed give bit-identical
 * results. a and b are only read.
 *
 * Allocates (iterations + na + nb) doubles once and frees them before returning.
 * Returns 0; -EINVAL (outputs untouched) if na or nb is 0, iterations is 0,
 * level is not in (0, 1), or a value is not finite and > 0 (a median ratio
 * needs positive data); -ENOMEM if the buffer cannot be allocated.
 */
int stats_bootstrap_ratio(const double *a, size_t na, const double *b, size_t nb,
                          unsigned iterations, double level, uint64_t seed, double *ratio,
                          double *lo, double *hi);

/*
 * The same percentile bootstrap for the difference median(a) - median(b), of
 * finite values of any sign (what a request costs more over one transport,
 * in µs): *diff from the data, [*lo, *hi] its interval. The same returns.
 */
int stats_bootstrap_diff(const double *a, size_t na, const double *b, size_t nb,
                         unsigned iterations, double level, uint64_t seed, double *diff, double *lo,
                         double *hi);

/*
 * The smallest two-sided p the exact Mann–Whitney test can give na against
 * nb values: 2 / C(na + nb, na) (every b above every a), at most 1; 1 when
 * either is 0. Below alpha only with enough runs: 1+1 gives 1, 2+2 0.33,
 * 3+3 0.1, 3+4 0.057, 4+4 0.029, 3+5 0.036.
 */
double stats_mw_min_p(size_t na, size_t nb);

/*
 * Whether an A/B pair is a significant difference: p < alpha and the interval
 * [lo, hi] of the ratio excludes 1 (all three finite).
 */
bool stats_significant(double ratio, double lo, double hi, double p, double alpha);

/*
 * Writes the verdict for one A/B pair into buf (at most cap bytes, always
 * NUL-terminated when cap > 0, silently truncated): B relative to A, the
 * ratio with its interval as every ratio in text is written (text_ratio),
 * e.g. ratio 1.28 in [1.24, 1.31] with p = 0.002:
 *     "1.28× [1.24×, 1.31×] (p=0.002 n=10+10)"
 * When the pair is not significant (stats_significant) the same figures follow "~ ":
 *     "~ 1.28× [0.97×, 1.60×] (p=0.31 n=10+10)"
 * Ratios have three decimals when |ratio - 1| < 0.1 ("1.050×"), two otherwise.
 * A non-finite ratio or bound has no figures to show: "~ (p=0.31 n=10+10)".
 * p is printed with two significant digits. Nothing is written when cap == 0.
 */
void stats_format_delta(char *buf, size_t cap, double ratio, double lo, double hi, double p,
                        double alpha, size_t na, size_t nb);

/* The comparison summaries and compare make: alpha, bootstrap rounds and interval level. */
#define STATS_ALPHA     0.05
#define STATS_BOOTSTRAP 10000
#define STATS_LEVEL     0.95

/* One A/B comparison: B (nb values) against A (na values). */
struct stats_delta {
    int ok;           /* 0 when either arm has no value or a test could not be made */
    bool significant; /* stats_significant at STATS_ALPHA (false when not ok) */
    double ratio, lo, hi, p;
    size_t na, nb;
    char text[96]; /* the verdict of stats_format_delta, or "n/a (n=0+4)" when not ok */
};

/*
 * Compares b against a: the ratio of medians median(b) / median(a) with its
 * STATS_LEVEL bootstrap interval (STATS_BOOTSTRAP rounds drawn from seed),
 * the two-sided Mann–Whitney p, and their verdict at STATS_ALPHA. Fills *d;
 * d->ok is 0 (and d->text "n/a (n=na+nb)") when na or nb is 0 or the data
 * cannot be compared (a value <= 0 or not finite, or no memory).
 */
void stats_delta(const double *a, size_t na, const double *b, size_t nb, uint64_t seed,
                 struct stats_delta *d);

/*
 * ABBA order: writes arms * reps arm indices to out, as reps blocks that each
 * hold every arm once, alternately in forward and reverse order. 2 arms, 4 reps:
 * 0 1 1 0 0 1 1 0. A linear drift then hits every arm equally over each pair of
 * blocks. Writes nothing if arms or reps is 0.
 */
void stats_order_abba(unsigned arms, unsigned reps, unsigned *out);

/*
 * Seeded random interleave: like stats_order_abba, reps blocks that each hold
 * every arm once (so each arm appears reps times and no arm runs far ahead of the
 * others), but each block is an independent uniform random permutation. The same
 * seed gives the same order; store the seed with the results. Writes nothing if
 * arms or reps is 0.
 */
void stats_order_shuffle(unsigned arms, unsigned reps, uint64_t seed, unsigned *out);

#endif
