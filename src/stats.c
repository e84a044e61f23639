/*
 * stats: summaries, the Mann–Whitney U test, a bootstrap interval of a median
 * ratio, the benchstat-style verdict and run orders (see stats.h).
 *
 * The exact Mann–Whitney distribution comes from the Gaussian binomial
 * coefficient [m+n choose m]_q, whose coefficient of q^s counts the
 * arrangements of m a's and n b's with U = s. It is built one factor at a time
 * so every intermediate polynomial is itself a Gaussian binomial (non-negative
 * counts), truncated at the degree the tail needs: one small table, no
 * cancellation of large terms, exact integers while they fit in a double.
 */
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Up to this many elements, insertion sort beats qsort's call overhead. */
#define SMALL_SORT 16

/* ---- random numbers: xoshiro256** seeded by splitmix64 (Blackman & Vigna) ---- */

struct rng {
    uint64_t s[4];
};

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed)
{
    /* splitmix64 never yields four zero words, the one state xoshiro must avoid */
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Uniform in [0, bound), bound >= 1: reject the short top range so there is no modulo bias. */
static uint64_t rng_below(struct rng *r, uint64_t bound)
{
    uint64_t threshold = (0 - bound) % bound;
    uint64_t x;

    do
        x = rng_next(r);
    while (x < threshold);
    return x % bound;
}

/* ---- order statistics ---- */

static int cmp_double(const void *pa, const void *pb)
{
    double x = *(const double *)pa, y = *(const double *)pb;

    return (x > y) - (x < y);
}

static void sort_doubles(double *v, size_t n)
{
    if (n > SMALL_SORT) {
        qsort(v, n, sizeof(*v), cmp_double);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        double x = v[i];
        size_t j = i;

        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* Median of sorted v[0 .. n-1], n >= 1. Halving each term first cannot overflow. */
static double median_sorted(const double *v, size_t n)
{
    if (n % 2 == 1) return v[n / 2];
    return v[n / 2 - 1] / 2 + v[n / 2] / 2;
}

/*
 * The k-th smallest (from 0) of x[0 .. n-1] without a copy: x[i] is it when
 * fewer than k+1 values lie below it and at least k+1 lie at or below it.
 * O(n²); x must not contain NaN.
 */
static double kth_smallest(const double *x, size_t n, size_t k)
{
    for (size_t i = 0; i < n; i++) {
        size_t below = 0, equal = 0;

        for (size_t j = 0; j < n; j++) {
            if (x[j] < x[i])
                below++;
            else if (x[j] == x[i])
                equal++;
        }
        if (below <= k && k < below + equal) return x[i];
    }
    return NAN; /* unreachable without NaN */
}

static double median_unsorted(const double *x, size_t n)
{
    if (n % 2 == 1) return kth_smallest(x, n, n / 2);
    return kth_smallest(x, n, n / 2 - 1) / 2 + kth_smallest(x, n, n / 2) / 2;
}

/* q-quantile of sorted v[0 .. n-1] by linear interpolation (Hyndman & Fan type 7). */
static double quantile_sorted(const double *v, size_t n, double q)
{
    double h = q * (double)(n - 1);
    size_t i = (size_t)h;

    if (i + 1 >= n) return v[n - 1];
    return v[i] + (h - (double)i) * (v[i + 1] - v[i]);
}

/* ---- summary ---- */

int stats_summarize(const double *x, size_t n, struct stats_summary *out)
{
    double sum = 0, min, max, mean, ss = 0;

    if (n == 0) return -EINVAL;
    min = max = x[0];
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) return -EINVAL;
        sum += x[i];
        min = x[i] < min ? x[i] : min;
        max = x[i] > max ? x[i] : max;
    }
    /* Two passes: squares of deviations, not sum of squares minus square of sum. */
    mean = sum / (double)n;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - mean) * (x[i] - mean);

    out->n = n;
    out->median = median_unsorted(x, n);
    out->min = min;
    out->max = max;
    out->mean = mean;
    out->sd = n < 2 ? 0 : sqrt(ss / (double)(n - 1));
    return 0;
}

size_t stats_median_known(const double *x, size_t n, double *median)
{
    double *v = xcalloc(n ? n : 1, sizeof(*v));
    size_t k = 0;

    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i])) v[k++] = x[i];
    *median = k > 0 ? median_unsorted(v, k) : NAN;
    free(v);
    return k;
}

void stats_known_note(char *buf, size_t cap, size_t known, size_t all)
{
    if (cap == 0) return;
    if (known == 0 || known >= all)
        buf[0] = '\0';
    else
        snprintf(buf, cap, "%zu of %zu runs", known, all);
}

/* ---- Mann–Whitney U ---- */

static int has_nan(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isnan(x[i])) return 1;
    return 0;
}

/* How many of x[0 .. n-1] are below v (*below) and equal to it (*equal). */
static void count_vs(const double *x, size_t n, double v, size_t *below, size_t *equal)
{
    *below = *equal = 0;
    for (size_t i = 0; i < n; i++) {
        if (x[i] < v)
            (*below)++;
        else if (x[i] == v)
            (*equal)++;
    }
}

/*
 * U for a, and the tie term sum over tie groups of (t³ - t) of the pooled
 * sample, as the sum over its elements of (t² - 1) with t the element's group size.
 */
static void mwu_count(const double *a, size_t na, const double *b, size_t nb, double *u,
                      double *ties)
{
    double twice_u = 0, tie_sum = 0;

    for (size_t i = 0; i < na + nb; i++) {
        double v = i < na ? a[i] : b[i - na];
        size_t below_a, equal_a, below_b, equal_b;
        double t;

        count_vs(a, na, v, &below_a, &equal_a);
        count_vs(b, nb, v, &below_b, &equal_b);
        if (i < na) twice_u += (double)(2 * below_b + equal_b);
        t = (double)(equal_a + equal_b);
        tie_sum += t * t - 1;
    }
    *u = twice_u / 2;
    *ties = tie_sum;
}

/*
 * P(U <= k) under the null for samples of m and n distinct values, with
 * k <= m n / 2 and m, n <= STATS_MWU_EXACT_MAX. c[s] holds the coefficient of q^s
 * of [n+i choose i]_q after step i: multiply by (1 - q^(n+i)), divide by (1 - q^i).
 */
static double mwu_exact_cdf(unsigned m, unsigned n, unsigned k)
{
    double c[STATS_MWU_EXACT_MAX * STATS_MWU_EXACT_MAX / 2 + 1] = { 1 };
    double total = 1, tail = 0;

    for (unsigned i = 1; i <= m; i++) {
        for (unsigned s = k; s >= n + i; s--)
            c[s] -= c[s - (n + i)];
        for (unsigned s = i; s <= k; s++)
            c[s] += c[s - i];
        total = total * (double)(n + i) / (double)i;
    }
    for (unsigned s = 0; s <= k; s++)
        tail += c[s];
    return tail / total;
}

/* Two-sided p from the normal approximation with tie and continuity corrections. */
static double mwu_normal_p(double u, size_t na, size_t nb, double ties)
{
    double m = (double)na, n = (double)nb, big_n = m + n;
    double var = m * n / 12 * ((big_n + 1) - ties / (big_n * (big_n - 1)));
    double z;

    if (!(var > 0)) return 1; /* every value equal: no evidence either way */
    z = (fabs(u - m * n / 2) - 0.5) / sqrt(var);
    if (z <= 0) return 1;
    return erfc(z / sqrt(2.0));
}

int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *u, double *p)
{
    double u_a, ties, pv;

    if (na == 0 || nb == 0 || has_nan(a, na) || has_nan(b, nb)) return -EINVAL;
    mwu_count(a, na, b, nb, &u_a, &ties);
    if (ties == 0 && na <= STATS_MWU_EXACT_MAX && nb <= STATS_MWU_EXACT_MAX) {
        /* no ties: U is an integer and its null distribution is symmetric about m n / 2 */
        unsigned uu = (unsigned)u_a, mn = (unsigned)(na * nb);
        unsigned k = uu < mn - uu ? uu : mn - uu;

        pv = 2 * mwu_exact_cdf((unsigned)na, (unsigned)nb, k);
    } else {
        pv = mwu_normal_p(u_a, na, nb, ties);
    }
    *u = u_a;
    *p = pv < 1 ? pv : 1;
    return 0;
}

/* ---- bootstrap ---- */

static int all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

static int all_positive(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(x[i] > 0 && isfinite(x[i]))) return 0;
    return 1;
}

/* Median of x[0 .. n-1], sorting a copy in scratch[0 .. n-1]. */
static double sorted_median_of(const double *x, size_t n, double *scratch)
{
    memcpy(scratch, x, n * sizeof(*x));
    sort_doubles(scratch, n);
    return median_sorted(scratch, n);
}

/* Median of n draws with replacement from x, using scratch[0 .. n-1]. */
static double resampled_median(struct rng *r, const double *x, size_t n, double *scratch)
{
    for (size_t i = 0; i < n; i++)
        scratch[i] = x[rng_below(r, n)];
    sort_doubles(scratch, n);
    return median_sorted(scratch, n);
}

/* Bootstrap of median(b) / median(a), or with diff median(a) - median(b) (the stats.h pair). */
static int bootstrap(const double *a, size_t na, const double *b, size_t nb, unsigned iterations,
                     double level, uint64_t seed, bool diff, double *est, double *lo, double *hi)
{
    const size_t max = SIZE_MAX / sizeof(double) / 3; /* so the sum below cannot overflow */
    struct rng r;
    double *draws, *sa, *sb;

    if (na == 0 || nb == 0 || iterations == 0 || !(level > 0 && level < 1)) return -EINVAL;
    if (diff ? !all_finite(a, na) || !all_finite(b, nb)
             : !all_positive(a, na) || !all_positive(b, nb))
        return -EINVAL;
    if (na > max || nb > max || iterations > max) return -ENOMEM;
    draws = malloc(((size_t)iterations + na + nb) * sizeof(double));
    if (draws == NULL) return -ENOMEM;
    sa = draws + iterations;
    sb = sa + na;

    double ma = sorted_median_of(a, na, sa), mb = sorted_median_of(b, nb, sb);
    *est = diff ? ma - mb : mb / ma;
    rng_seed(&r, seed);
    for (unsigned i = 0; i < iterations; i++) {
        ma = resampled_median(&r, a, na, sa);
        mb = resampled_median(&r, b, nb, sb);
        draws[i] = diff ? ma - mb : mb / ma;
    }
    sort_doubles(draws, iterations);
    *lo = quantile_sorted(draws, iterations, (1 - level) / 2);
    *hi = quantile_sorted(draws, iterations, (1 + level) / 2);
    free(draws);
    return 0;
}

int stats_bootstrap_ratio(const double *a, size_t na, const double *b, size_t nb,
                          unsigned iterations, double level, uint64_t seed, double *ratio,
                          double *lo, double *hi)
{
    return bootstrap(a, na, b, nb, iterations, level, seed, false, ratio, lo, hi);
}

int stats_bootstrap_diff(const double *a, size_t na, const double *b, size_t nb,
                         unsigned iterations, double level, uint64_t seed, double *diff, double *lo,
                         double *hi)
{
    return bootstrap(a, na, b, nb, iterations, level, seed, true, diff, lo, hi);
}

/* ---- verdict ---- */

double stats_mw_min_p(size_t na, size_t nb)
{
    double c = 1; /* C(na + nb, k) for k up to the smaller of the two */
    size_t k = na < nb ? na : nb, n = na + nb;

    if (na == 0 || nb == 0) return 1;
    for (size_t i = 1; i <= k && c < 1e300; i++)
        c = c * (double)(n - k + i) / (double)i;
    return 2 / c < 1 ? 2 / c : 1;
}

bool stats_significant(double ratio, double lo, double hi, double p, double alpha)
{
    return isfinite(ratio) && isfinite(lo) && isfinite(hi) && p < alpha && (lo > 1 || hi < 1);
}

void stats_format_delta(char *buf, size_t cap, double ratio, double lo, double hi, double p,
                        double alpha, size_t na, size_t nb)
{
    int finite = isfinite(ratio) && isfinite(lo) && isfinite(hi);
    const char *mark = stats_significant(ratio, lo, hi, p, alpha) ? "" : "~ ";
    char r[32], l[32], h[32];
    int d;

    if (cap == 0) return;
    if (!finite) {
        snprintf(buf, cap, "~ (p=%.2g n=%zu+%zu)", p, na, nb);
        return;
    }
    /* The ratio and its interval are shown either way: "~" only says they do not decide. */
    d = fabs(ratio - 1) < 0.1 ? 3 : 2;
    text_ratio(r, sizeof(r), ratio, d);
    text_ratio(l, sizeof(l), lo, d);
    text_ratio(h, sizeof(h), hi, d);
    snprintf(buf, cap, "%s%s [%s, %s] (p=%.2g n=%zu+%zu)", mark, r, l, h, p, na, nb);
}

void stats_delta(const double *a, size_t na, const double *b, size_t nb, uint64_t seed,
                 struct stats_delta *d)
{
    double u = 0;

    memset(d, 0, sizeof(*d));
    d->na = na;
    d->nb = nb;
    if (na == 0 || nb == 0 ||
        stats_bootstrap_ratio(a, na, b, nb, STATS_BOOTSTRAP, STATS_LEVEL, seed, &d->ratio, &d->lo,
                              &d->hi) < 0 ||
        stats_mann_whitney(a, na, b, nb, &u, &d->p) < 0) {
        snprintf(d->text, sizeof(d->text), "n/a (n=%zu+%zu)", na, nb);
        return;
    }
    d->ok = 1;
    d->significant = stats_significant(d->ratio, d->lo, d->hi, d->p, STATS_ALPHA);
    stats_format_delta(d->text, sizeof(d->text), d->ratio, d->lo, d->hi, d->p, STATS_ALPHA, na, nb);
}

/* ---- run order ---- */

void stats_order_abba(unsigned arms, unsigned reps, unsigned *out)
{
    for (unsigned blk = 0; blk < reps; blk++)
        for (unsigned i = 0; i < arms; i++)
            out[(size_t)blk * arms + i] = blk % 2 == 0 ? i : arms - 1 - i;
}

void stats_order_shuffle(unsigned arms, unsigned reps, uint64_t seed, unsigned *out)
{
    struct rng r;

    rng_seed(&r, seed);
    for (unsigned blk = 0; blk < reps; blk++) {
        unsigned *o = out + (size_t)blk * arms;

        for (unsigned i = 0; i < arms; i++)
            o[i] = i;
        /* Fisher–Yates within the block */
        for (unsigned i = arms; i > 1; i--) {
            unsigned j = (unsigned)rng_below(&r, i);
            unsigned t = o[i - 1];

            o[i - 1] = o[j];
            o[j] = t;
        }
    }
}
