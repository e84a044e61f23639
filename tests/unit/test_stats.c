/*
 * test_stats: statistics across repetitions against published or hand-derived
 * values. Mann–Whitney exact p-values come from textbook tables (critical values
 * of U), the SciPy documentation example and exact fractions; normal-approximation
 * cases are derived by hand below (the same formula reproduces SciPy's published
 * asymptotic p = 0.111346886533140 for its males/females example). The bootstrap
 * is checked for coverage on synthetic data whose true ratio is known; random
 * data come from a fixed-seed generator, so a failure reproduces.
 */
/* cmocka.h needs these four first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <errno.h>
#include <math.h>
#include <string.h>

#include "stats.h"

#define SEED 0x243f6a8885a308d3ULL

/* |got - want| <= tol * |want|, with a message that shows both. */
static void check_rel(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol * fabs(want)))
        fail_msg("%s: got %.17g, want %.17g", what, got, want);
}

/* ---- test data ---- */

/* splitmix64: the test's own generator, independent of the one in stats.c. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1). */
static double rng_unit(uint64_t *s)
{
    return ((double)(rng_next(s) >> 11) + 0.5) * 0x1.0p-53;
}

/* Standard normal by Box–Muller (one of the pair is enough here). */
static double rng_normal(uint64_t *s)
{
    double u1 = rng_unit(s), u2 = rng_unit(s);

    return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/*
 * Samples of m and n distinct values with U for a exactly u (0 <= u <= m n):
 * b = 1, 2, ..., n, and each a_i = j_i + 0.5 (plus a small offset so no two a's
 * tie) lies above exactly j_i of the b's, with the j_i summing to u.
 */
static void make_u(size_t m, size_t n, size_t u, double *a, double *b)
{
    for (size_t j = 0; j < n; j++)
        b[j] = (double)(j + 1);
    for (size_t i = 0; i < m; i++) {
        size_t j = u < n ? u : n;

        a[i] = (double)j + 0.5 + 0.001 * (double)i;
        u -= j;
    }
    assert_int_equal(u, 0);
}

/* ---- summary ---- */

static void test_summary_odd_even(void **state)
{
    const double odd[] = { 3, 1, 2 };
    const double even[] = { 4, 1, 3, 2 };
    const double dup[] = { 5, 5, 1, 5 };
    struct stats_summary s;

    (void)state;
    assert_int_equal(stats_summarize(odd, 3, &s), 0);
    assert_int_equal(s.n, 3);
    assert_true(s.median == 2 && s.min == 1 && s.max == 3 && s.mean == 2);
    assert_true(s.sd == 1); /* deviations -1, 0, 1: sqrt(2 / 2) */

    assert_int_equal(stats_summarize(even, 4, &s), 0);
    assert_true(s.median == 2.5 && s.min == 1 && s.max == 4 && s.mean == 2.5);
    check_rel(s.sd, sqrt(5.0 / 3.0), 1e-15, "sd {1,2,3,4}"); /* (2.25+.25+.25+2.25)/3 */

    /* sorted 1 5 5 5: the two middle values are both 5 */
    assert_int_equal(stats_summarize(dup, 4, &s), 0);
    assert_true(s.median == 5 && s.min == 1 && s.max == 5 && s.mean == 4);
}

static void test_summary_sd_by_hand(void **state)
{
    /* The textbook set: mean 5, squared deviations sum to 32, population SD 2. */
    const double x[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
    /* Same spread far from 0: sum-of-squares formulas lose every digit here. */
    const double far[] = { 1e9 + 1, 1e9 + 2, 1e9 + 3 };
    struct stats_summary s;

    (void)state;
    assert_int_equal(stats_summarize(x, 8, &s), 0);
    assert_true(s.mean == 5 && s.median == 4.5 && s.min == 2 && s.max == 9);
    check_rel(s.sd, sqrt(32.0 / 7.0), 1e-15, "sample sd"); /* 2.1380899352993950 */

    assert_int_equal(stats_summarize(far, 3, &s), 0);
    assert_true(s.median == 1e9 + 2 && s.mean == 1e9 + 2);
    check_rel(s.sd, 1.0, 1e-12, "sd far from 0");
}

static void test_summary_single_and_invalid(void **state)
{
    const double one[] = { 42.5 };
    const double with_nan[] = { 1, NAN, 3 };
    const double with_inf[] = { 1, INFINITY };
    struct stats_summary s = { .n = 99 };

    (void)state;
    assert_int_equal(stats_summarize(one, 1, &s), 0);
    assert_int_equal(s.n, 1);
    assert_true(s.median == 42.5 && s.min == 42.5 && s.max == 42.5 && s.mean == 42.5);
    assert_true(s.sd == 0);

    s.n = 99;
    assert_int_equal(stats_summarize(with_nan, 3, &s), -EINVAL);
    assert_int_equal(stats_summarize(with_inf, 2, &s), -EINVAL);
    assert_int_equal(stats_summarize(one, 0, &s), -EINVAL);
    assert_int_equal(s.n, 99); /* untouched on error */
}

/* ---- Mann–Whitney U ---- */

/*
 * Completely separated samples: U = 0 and the two-sided exact p is 2 / C(m+n, m),
 * the smallest p those sizes allow (0.0286 for 4 vs 4: 2/70).
 */
static void test_mwu_separated(void **state)
{
    static const struct {
        size_t n;
        double p;
    } cases[] = {
        { 3, 2.0 / 20 },  /* 0.1: 3 + 3 runs can never be significant */
        { 4, 2.0 / 70 },  /* 0.028571 */
        { 5, 2.0 / 252 }, /* 0.0079365 */
    };
    double lo[5] = { 1, 2, 3, 4, 5 }, hi[5] = { 11, 12, 13, 14, 15 };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t n = cases[i].n;
        double u, p;

        assert_int_equal(stats_mann_whitney(lo, n, hi, n, &u, &p), 0);
        assert_true(u == 0);
        check_rel(p, cases[i].p, 1e-12, "separated, a below");
        /* swapped: U for a is now n², the p-value is the same */
        assert_int_equal(stats_mann_whitney(hi, n, lo, n, &u, &p), 0);
        assert_true(u == (double)(n * n));
        check_rel(p, cases[i].p, 1e-12, "separated, a above");
    }
}

/* The smallest p of na against nb runs: that of two separated samples, for every size. */
static void test_mwu_min_p(void **state)
{
    double lo[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, hi[8] = { 11, 12, 13, 14, 15, 16, 17, 18 };

    (void)state;
    for (size_t na = 1; na <= 8; na++)
        for (size_t nb = 1; nb <= 8; nb++) {
            double u, p;
            assert_int_equal(stats_mann_whitney(lo, na, hi, nb, &u, &p), 0);
            check_rel(stats_mw_min_p(na, nb), p, 1e-12, "the separated samples' p");
        }
    assert_true(stats_mw_min_p(1, 1) == 1);
    check_rel(stats_mw_min_p(2, 2), 1.0 / 3, 1e-12, "2+2");
    check_rel(stats_mw_min_p(3, 4), 2.0 / 35, 1e-12, "3+4: above 0.05");
    check_rel(stats_mw_min_p(5, 3), 2.0 / 56, 1e-12, "5+3: below");
    assert_true(stats_mw_min_p(0, 5) == 1 && stats_mw_min_p(5, 0) == 1);
    assert_true(stats_mw_min_p(200, 200) < 1e-100 && stats_mw_min_p(200, 200) >= 0);
}

/*
 * The SciPy documentation example (from R. Shier, "The Mann-Whitney U Test",
 * 2004): ages at diagnosis, males vs females. Published: U1 = 17, exact
 * two-sided p = 0.1111 (1/9).
 */
static void test_mwu_published_example(void **state)
{
    const double males[] = { 19, 22, 16, 29, 24 };
    const double females[] = { 20, 11, 17, 12 };
    double u, p;

    (void)state;
    assert_int_equal(stats_mann_whitney(males, 5, females, 4, &u, &p), 0);
    assert_true(u == 17);
    check_rel(p, 1.0 / 9.0, 1e-12, "males vs females");
    assert_int_equal(stats_mann_whitney(females, 4, males, 5, &u, &p), 0);
    assert_true(u == 3); /* 5 * 4 - 17 */
    check_rel(p, 1.0 / 9.0, 1e-12, "females vs males");
}

/*
 * A mixed 4 vs 5 case by hand. a above b in pairs: 1.1 none, 2.3 none, 3.5 > 2.9,
 * 6.0 > 2.9 4.2 5.1, so U = 4. Under the null the number of arrangements with
 * U = s is the number of partitions of s into at most 4 parts of at most 5:
 * s = 0..4 gives 1, 1, 2, 3, 5, so P(U <= 4) = 12 / C(9, 4) = 12/126 and
 * p = 24/126 = 0.190476.
 */
static void test_mwu_mixed_by_hand(void **state)
{
    const double a[] = { 1.1, 2.3, 3.5, 6.0 };
    const double b[] = { 2.9, 4.2, 5.1, 7.7, 8.8 };
    double u, p;

    (void)state;
    assert_int_equal(stats_mann_whitney(a, 4, b, 5, &u, &p), 0);
    assert_true(u == 4);
    check_rel(p, 24.0 / 126.0, 1e-12, "4 vs 5 mixed");
    /* the order of the values within an arm does not matter */
    const double a_rev[] = { 6.0, 3.5, 2.3, 1.1 };
    assert_int_equal(stats_mann_whitney(a_rev, 4, b, 5, &u, &p), 0);
    assert_true(u == 4);
    check_rel(p, 24.0 / 126.0, 1e-12, "4 vs 5 reversed");
}

/*
 * Critical values of U for a two-sided test at alpha = 0.05 (the standard table
 * in statistics textbooks): U <= crit is significant, crit + 1 is not. The exact
 * p-values beside them are sums of the null frequencies computed independently.
 */
static void test_mwu_table_critical_values(void **state)
{
    static const struct {
        size_t m, n, crit;
        double p_crit, p_next;
    } table[] = {
        { 5, 5, 2, 0.031746031746031744, 0.05555555555555555 },
        { 8, 8, 13, 0.049883449883449886, 0.06495726495726496 },
        { 10, 10, 23, 0.04325705254497824, 0.05242590227110351 },
        { 20, 20, 127, 0.04909032518937244, 0.05239952187284973 },
        { 6, 9, 10, 0.04955044955044955, 0.06633366633366633 },
        { 12, 15, 49, 0.046866346139465, 0.05285799586513007 },
    };
    double a[20], b[20];

    (void)state;
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        size_t m = table[i].m, n = table[i].n;
        double u, p;

        make_u(m, n, table[i].crit, a, b);
        assert_int_equal(stats_mann_whitney(a, m, b, n, &u, &p), 0);
        assert_true(u == (double)table[i].crit);
        assert_true(p <= 0.05);
        check_rel(p, table[i].p_crit, 1e-12, "p at the critical U");

        make_u(m, n, table[i].crit + 1, a, b);
        assert_int_equal(stats_mann_whitney(a, m, b, n, &u, &p), 0);
        assert_true(p > 0.05);
        check_rel(p, table[i].p_next, 1e-12, "p just above the critical U");
    }
}

/*
 * At the exact-method limit (50 vs 50, C(100, 50) ~ 1.0e29 arrangements, more
 * than a double holds exactly) the p-values still match exact big-integer sums,
 * from the far tail to the centre.
 */
static void test_mwu_exact_at_limit(void **state)
{
    static const struct {
        size_t u;
        double p;
    } cases[] = {
        { 0, 1.9823306042836678e-29 }, /* 2 / C(100, 50) */
        { 1, 3.9646612085673355e-29 }, { 100, 3.2309972145606823e-20 },
        { 800, 0.001739834286160499 }, { 1000, 0.08545121551827177 },
        { 1100, 0.30413961453034644 }, { 1250, 1.0 }, /* U = m n / 2: capped at 1 */
    };
    double a[STATS_MWU_EXACT_MAX], b[STATS_MWU_EXACT_MAX];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        double u, p;

        make_u(50, 50, cases[i].u, a, b);
        assert_int_equal(stats_mann_whitney(a, 50, b, 50, &u, &p), 0);
        assert_true(u == (double)cases[i].u);
        check_rel(p, cases[i].p, 1e-9, "50 vs 50 exact");
        /* U near the top is the mirror image */
        make_u(50, 50, 2500 - cases[i].u, a, b);
        assert_int_equal(stats_mann_whitney(a, 50, b, 50, &u, &p), 0);
        check_rel(p, cases[i].p, 1e-9, "50 vs 50 exact, upper tail");
    }
}

/*
 * Ties force the normal approximation. By hand: pooled sorted 1 2 2 2 3 3 3 4 5 6
 * has midranks 1, 3 (x3), 6 (x3), 8, 9, 10; a = {1, 2, 2, 3, 4} has rank sum
 * R = 1 + 3 + 3 + 6 + 8 = 21, so U = R - 5*6/2 = 6. Two tie groups of 3 give
 * T = 2 * (27 - 3) = 48; var = 25/12 * (11 - 48/90) = 21.805556;
 * z = (|6 - 12.5| - 0.5) / sqrt(var) = 1.2848951; p = erfc(z / sqrt 2) = 0.198829.
 */
static void test_mwu_ties_normal(void **state)
{
    const double a[] = { 1, 2, 2, 3, 4 };
    const double b[] = { 2, 3, 3, 5, 6 };
    double u, p;

    (void)state;
    assert_int_equal(stats_mann_whitney(a, 5, b, 5, &u, &p), 0);
    assert_true(u == 6);
    check_rel(p, 0.19882894401644238, 1e-12, "ties, normal approximation");
}

static void test_mwu_identical(void **state)
{
    const double x[] = { 1, 2, 3, 4, 5 };
    const double same[] = { 7, 7, 7 };
    double u, p;

    (void)state;
    /* every value tied across arms: U = m n / 2, |U - mu| < 1/2, so p = 1 */
    assert_int_equal(stats_mann_whitney(x, 5, x, 5, &u, &p), 0);
    assert_true(u == 12.5);
    assert_true(p == 1);
    /* one value throughout: zero variance, p = 1 rather than 0/0 */
    assert_int_equal(stats_mann_whitney(same, 3, same, 3, &u, &p), 0);
    assert_true(u == 4.5);
    assert_true(p == 1);
}

/*
 * Large samples use the normal approximation. a = 0..59, b = a + 10.5 (no
 * ties): a_i lies above the b's with j <= i - 11, so U = sum_{k=1}^{49} k = 1225;
 * mu = 1800, var = 60*60*121/12 = 36300, z = (575 - 0.5) / 190.5256 = 3.015343,
 * p = erfc(z / sqrt 2) = 0.0025669.
 */
static void test_mwu_large_normal(void **state)
{
    double a[60], b[60], u, p, p_exact;

    (void)state;
    for (int i = 0; i < 60; i++) {
        a[i] = i;
        b[i] = i + 10.5;
    }
    assert_int_equal(stats_mann_whitney(a, 60, b, 60, &u, &p), 0);
    assert_true(u == 1225);
    check_rel(p, 0.0025668879435241797, 1e-12, "60 vs 60 shift");

    /*
     * Heavy ties: a = i mod 10, b = i mod 10 plus 1 for every third i. Midranks
     * give R_a = 3516, U = 3516 - 60*61/2 = 1686; tie groups sum to T = 16440;
     * var = 300 * (121 - 16440 / 14280) = 35954.622, z = 0.598575, p = 0.549456.
     */
    for (int i = 0; i < 60; i++) {
        a[i] = i % 10;
        b[i] = i % 10 + (i % 3 == 0);
    }
    assert_int_equal(stats_mann_whitney(a, 60, b, 60, &u, &p), 0);
    assert_true(u == 1686);
    check_rel(p, 0.5494564007138996, 1e-12, "60 vs 60 ties");

    /*
     * Either side of the exact limit the two methods agree roughly: 50 vs 50
     * (exact) has U = 780 and p = 0.0010550; 50 vs 51 (normal) has U = 780,
     * var = 21675, z = 3.358820, p = 0.00078276.
     */
    for (int i = 0; i < 51; i++) {
        a[i] = i;
        b[i] = i + 10.5;
    }
    assert_int_equal(stats_mann_whitney(a, 50, b, 50, &u, &p_exact), 0);
    assert_true(u == 780);
    check_rel(p_exact, 0.0010550164711136758, 1e-9, "50 vs 50 exact");
    assert_int_equal(stats_mann_whitney(a, 50, b, 51, &u, &p), 0);
    assert_true(u == 780);
    check_rel(p, 0.0007827600835104525, 1e-12, "50 vs 51 normal");
}

static void test_mwu_invalid(void **state)
{
    const double a[] = { 1, 2, 3 };
    const double bad[] = { 1, NAN };
    double u = -1, p = -1;

    (void)state;
    assert_int_equal(stats_mann_whitney(a, 0, a, 3, &u, &p), -EINVAL);
    assert_int_equal(stats_mann_whitney(a, 3, a, 0, &u, &p), -EINVAL);
    assert_int_equal(stats_mann_whitney(a, 3, bad, 2, &u, &p), -EINVAL);
    assert_int_equal(stats_mann_whitney(bad, 2, a, 3, &u, &p), -EINVAL);
    assert_true(u == -1 && p == -1);
}

/* ---- bootstrap ---- */

static void test_bootstrap_point_estimate(void **state)
{
    const double a[] = { 7, 1, 5, 3 };   /* median 4 */
    const double b[] = { 100, 2, 6, 4 }; /* median 5 */
    const double twos[] = { 2, 2, 2 }, threes[] = { 3, 3, 3, 3 };
    double r, lo, hi;

    (void)state;
    assert_int_equal(stats_bootstrap_ratio(a, 4, b, 4, 1000, 0.95, SEED, &r, &lo, &hi), 0);
    assert_true(r == 1.25);
    assert_true(lo <= r && r <= hi && lo < hi);

    /* no spread: every resample gives 3/2 */
    assert_int_equal(stats_bootstrap_ratio(twos, 3, threes, 4, 100, 0.95, SEED, &r, &lo, &hi), 0);
    assert_true(r == 1.5 && lo == 1.5 && hi == 1.5);
}

/*
 * A distribution small enough to know: a = {2}, b = {1, 3}. A resample of b
 * has median 1, 2 or 3 with probability 1/4, 1/2, 1/4, so the ratio is 0.5, 1
 * or 1.5. The 5 % and 95 % quantiles (level 0.9) are 0.5 and 1.5, and so are the
 * 20 % and 80 % (level 0.6); the 30 % and 70 % quantiles (level 0.4) are both 1.
 * lo and hi cannot be swapped, or taken at the wrong quantile, without this failing.
 */
static void test_bootstrap_known_quantiles(void **state)
{
    const double a[] = { 2 }, b[] = { 1, 3 };
    double r, lo, hi;

    (void)state;
    assert_int_equal(stats_bootstrap_ratio(a, 1, b, 2, 10000, 0.9, SEED, &r, &lo, &hi), 0);
    assert_true(r == 1);
    assert_true(lo == 0.5 && hi == 1.5);
    assert_int_equal(stats_bootstrap_ratio(a, 1, b, 2, 10000, 0.6, SEED, &r, &lo, &hi), 0);
    assert_true(lo == 0.5 && hi == 1.5);
    assert_int_equal(stats_bootstrap_ratio(a, 1, b, 2, 10000, 0.4, SEED, &r, &lo, &hi), 0);
    assert_true(lo == 1 && hi == 1);
}

/*
 * The difference of medians the same way: a = {2}, b = {1, 3} gives 2 - 1, 2 - 2 or
 * 2 - 3 with probability 1/4, 1/2, 1/4, so at level 0.9 [-1, 1] around 0; values of any
 * sign are taken (a ratio refuses them), a value not finite is refused.
 */
static void test_bootstrap_diff(void **state)
{
    const double a[] = { 2 }, b[] = { 1, 3 }, neg[] = { -5, -4, -6 }, bad[] = { 1, INFINITY };
    double d, lo, hi;

    (void)state;
    assert_int_equal(stats_bootstrap_diff(a, 1, b, 2, 10000, 0.9, SEED, &d, &lo, &hi), 0);
    assert_true(d == 0);
    assert_true(lo == -1 && hi == 1);
    assert_int_equal(stats_bootstrap_diff(neg, 3, a, 1, 1000, 0.95, SEED, &d, &lo, &hi), 0);
    assert_true(d == -7 && lo <= -7 && hi >= -7 && lo >= -8 && hi <= -6);
    assert_int_equal(stats_bootstrap_diff(bad, 2, a, 1, 1000, 0.95, SEED, &d, &lo, &hi), -EINVAL);
    assert_int_equal(stats_bootstrap_ratio(neg, 3, a, 1, 1000, 0.95, SEED, &d, &lo, &hi), -EINVAL);
}

/*
 * With 2 iterations the sorted ratios are r0 <= r1 and the q-quantile is
 * r0 + q (r1 - r0) (linear interpolation, numpy's default). Levels 0.9 and 0.5
 * with one seed see the same r0, r1: from the first, d = (hi - lo) / 0.9 and
 * r0 = lo - 0.05 d; the second must then give r0 + 0.25 d and r0 + 0.75 d.
 */
static void test_bootstrap_interpolation(void **state)
{
    const double a[] = { 2 }, b[] = { 1, 3 };
    double r, lo90, hi90, lo50, hi50;
    uint64_t seed = 0;

    (void)state;
    do {
        seed++;
        assert_int_equal(stats_bootstrap_ratio(a, 1, b, 2, 2, 0.9, seed, &r, &lo90, &hi90), 0);
    } while (hi90 == lo90 && seed < 100);
    assert_true(hi90 > lo90); /* P(r0 == r1) = 3/8 per seed */
    assert_int_equal(stats_bootstrap_ratio(a, 1, b, 2, 2, 0.5, seed, &r, &lo50, &hi50), 0);

    double d = (hi90 - lo90) / 0.9, r0 = lo90 - 0.05 * d;
    check_rel(lo50, r0 + 0.25 * d, 1e-12, "25 % quantile of 2");
    check_rel(hi50, r0 + 0.75 * d, 1e-12, "75 % quantile of 2");
}

static void test_bootstrap_determinism(void **state)
{
    double a[10], b[10], r1, lo1, hi1, r2, lo2, hi2;
    uint64_t s = SEED;

    (void)state;
    for (int i = 0; i < 10; i++) {
        a[i] = exp(0.1 * rng_normal(&s));
        b[i] = 1.2 * exp(0.1 * rng_normal(&s));
    }
    assert_int_equal(stats_bootstrap_ratio(a, 10, b, 10, 2000, 0.95, 1, &r1, &lo1, &hi1), 0);
    assert_int_equal(stats_bootstrap_ratio(a, 10, b, 10, 2000, 0.95, 1, &r2, &lo2, &hi2), 0);
    assert_true(r1 == r2 && lo1 == lo2 && hi1 == hi2);
    assert_int_equal(stats_bootstrap_ratio(a, 10, b, 10, 2000, 0.95, 2, &r2, &lo2, &hi2), 0);
    assert_true(r1 == r2);
    assert_true(lo1 != lo2 || hi1 != hi2);
    /* another seed moves the interval a little, not a lot */
    check_rel(lo2, lo1, 0.05, "lo, seed 1 vs 2");
    check_rel(hi2, hi1, 0.05, "hi, seed 1 vs 2");
}

enum dist { DIST_LOGNORMAL, DIST_UNIFORM };

/* A draw with population median 1: lognormal (sigma 0.1) or uniform on [0.9, 1.1]. */
static double draw(enum dist d, uint64_t *s)
{
    return d == DIST_LOGNORMAL ? exp(0.1 * rng_normal(s)) : 0.9 + 0.2 * rng_unit(s);
}

/*
 * Coverage: 200 pairs of n = 10 runs whose true median ratio is 1.2. The
 * percentile bootstrap of a median at n = 10 undercovers somewhat, so the 95 %
 * intervals should contain 1.2 in roughly 85-99 % of pairs (binomial SD at 200
 * pairs is about 1.6 points), and with a 20 % effect against a 6-10 % spread
 * they should rarely contain 1 (no effect).
 */
static void check_coverage(enum dist d)
{
    const int pairs = 200;
    uint64_t s = SEED + (uint64_t)d;
    int cover = 0, cover_null = 0;

    for (int k = 0; k < pairs; k++) {
        double a[10], b[10], r, lo, hi;

        for (int i = 0; i < 10; i++) {
            a[i] = draw(d, &s);
            b[i] = 1.2 * draw(d, &s);
        }
        assert_int_equal(stats_bootstrap_ratio(a, 10, b, 10, 2000, 0.95, (uint64_t)k, &r, &lo, &hi),
                         0);
        cover += lo <= 1.2 && 1.2 <= hi;
        cover_null += lo <= 1 && 1 <= hi;
    }
    print_message("coverage %s: %d/%d of 1.2, %d/%d of 1\n",
                  d == DIST_LOGNORMAL ? "lognormal" : "uniform", cover, pairs, cover_null, pairs);
    if (cover < pairs * 85 / 100 || cover > pairs * 99 / 100)
        fail_msg("coverage %d/%d outside 85-99 %%", cover, pairs);
    if (cover_null > pairs / 4) fail_msg("1 covered in %d/%d pairs", cover_null, pairs);
}

static void test_bootstrap_coverage(void **state)
{
    (void)state;
    check_coverage(DIST_LOGNORMAL);
    check_coverage(DIST_UNIFORM);
}

static void test_bootstrap_invalid(void **state)
{
    const double a[] = { 1, 2, 3 };
    const double zero[] = { 1, 0 }, neg[] = { -1, 2 };
    const double with_nan[] = { 1, NAN }, with_inf[] = { INFINITY };
    double r = -1, lo = -1, hi = -1;

    (void)state;
    assert_int_equal(stats_bootstrap_ratio(a, 0, a, 3, 10, 0.95, 1, &r, &lo, &hi), -EINVAL);
    assert_int_equal(stats_bootstrap_ratio(a, 3, a, 0, 10, 0.95, 1, &r, &lo, &hi), -EINVAL);
    assert_int_equal(stats_bootstrap_ratio(a, 3, a, 3, 0, 0.95, 1, &r, &lo, &hi), -EINVAL);
    assert_int_equal(stats_bootstrap_ratio(a, 3, a, 3, 10, 0, 1, &r, &lo, &hi), -EINVAL);
    assert_int_equal(stats_bootstrap_ratio(a, 3, a, 3, 10, 1, 1, &r, &lo, &hi), -EINVAL);
    assert_int_equal(stats_bootstrap_ratio(a, 3, a, 3, 10, NAN, 1, &r, &lo, &hi), -EINVAL);
    assert_int_equal(stats_bootstrap_ratio(a, 3, zero, 2, 10, 0.95, 1, &r, &lo, &hi), -EINVAL);
    assert_int_equal(stats_bootstrap_ratio(neg, 2, a, 3, 10, 0.95, 1, &r, &lo, &hi), -EINVAL);
    assert_int_equal(stats_bootstrap_ratio(a, 3, with_nan, 2, 10, 0.95, 1, &r, &lo, &hi), -EINVAL);
    assert_int_equal(stats_bootstrap_ratio(with_inf, 1, a, 3, 10, 0.95, 1, &r, &lo, &hi), -EINVAL);
    assert_true(r == -1 && lo == -1 && hi == -1);
}

/* ---- verdict ---- */

static void test_format_significant(void **state)
{
    char buf[128];

    (void)state;
    stats_format_delta(buf, sizeof(buf), 1.28, 1.24, 1.31, 0.002, 0.05, 10, 10);
    assert_string_equal(buf, "1.28× [1.24×, 1.31×] (p=0.002 n=10+10)");
    stats_format_delta(buf, sizeof(buf), 0.8, 0.75, 0.86, 0.0001, 0.05, 10, 12);
    assert_string_equal(buf, "0.80× [0.75×, 0.86×] (p=0.0001 n=10+12)");
    /* small effects get a third decimal */
    stats_format_delta(buf, sizeof(buf), 1.05, 1.02, 1.08, 0.01, 0.05, 20, 20);
    assert_string_equal(buf, "1.050× [1.020×, 1.080×] (p=0.01 n=20+20)");
    /* the smallest p of 4 vs 4 is significant at 0.05 */
    stats_format_delta(buf, sizeof(buf), 2, 1.5, 3, 2.0 / 70, 0.05, 4, 4);
    assert_string_equal(buf, "2.00× [1.50×, 3.00×] (p=0.029 n=4+4)");
}

static void test_format_not_significant(void **state)
{
    char buf[128];

    (void)state;
    /* the ratio and its interval stay, "~" before them */
    stats_format_delta(buf, sizeof(buf), 1.28, 1.24, 1.31, 0.31, 0.05, 10, 10);
    assert_string_equal(buf, "~ 1.28× [1.24×, 1.31×] (p=0.31 n=10+10)");
    /* p == alpha is not below alpha */
    stats_format_delta(buf, sizeof(buf), 1.28, 1.24, 1.31, 0.05, 0.05, 10, 10);
    assert_string_equal(buf, "~ 1.28× [1.24×, 1.31×] (p=0.05 n=10+10)");
    /* p < alpha but the interval contains 1 */
    stats_format_delta(buf, sizeof(buf), 1.1, 0.98, 1.2, 0.04, 0.05, 10, 10);
    assert_string_equal(buf, "~ 1.10× [0.98×, 1.20×] (p=0.04 n=10+10)");
    stats_format_delta(buf, sizeof(buf), 0.9, 0.8, 1.0, 0.04, 0.05, 10, 10);
    assert_string_equal(buf, "~ 0.900× [0.800×, 1.000×] (p=0.04 n=10+10)");
    /* 3 vs 3 can never be significant, yet its figures are shown: ratio 3, interval [2, 4] */
    stats_format_delta(buf, sizeof(buf), 3, 2, 4, 0.1, 0.05, 3, 3);
    assert_string_equal(buf, "~ 3.00× [2.00×, 4.00×] (p=0.1 n=3+3)");
    /* a small effect gets its third decimal with "~" too */
    stats_format_delta(buf, sizeof(buf), 0.97, 0.9, 1.04, 0.4, 0.05, 3, 3);
    assert_string_equal(buf, "~ 0.970× [0.900×, 1.040×] (p=0.4 n=3+3)");
    /* one run per side: the interval is the ratio itself */
    stats_format_delta(buf, sizeof(buf), 0.64, 0.64, 0.64, 1, 0.05, 1, 1);
    assert_string_equal(buf, "~ 0.64× [0.64×, 0.64×] (p=1 n=1+1)");
    /* a non-finite figure has nothing to show */
    stats_format_delta(buf, sizeof(buf), NAN, 1.2, 1.3, 0.001, 0.05, 10, 10);
    assert_string_equal(buf, "~ (p=0.001 n=10+10)");
    stats_format_delta(buf, sizeof(buf), 1.2, 1.1, INFINITY, 0.001, 0.05, 10, 10);
    assert_string_equal(buf, "~ (p=0.001 n=10+10)");
}

static void test_significant(void **state)
{
    (void)state;
    assert_true(stats_significant(1.28, 1.24, 1.31, 0.002, 0.05));
    assert_true(stats_significant(0.8, 0.75, 0.86, 0.0001, 0.05));
    assert_false(stats_significant(1.28, 1.24, 1.31, 0.05, 0.05)); /* p not below alpha */
    assert_false(stats_significant(1.1, 0.98, 1.2, 0.04, 0.05));   /* interval holds 1 */
    assert_false(stats_significant(0.9, 0.8, 1.0, 0.04, 0.05));    /* its bound is 1 */
    assert_false(stats_significant(NAN, 1.2, 1.3, 0.001, 0.05));
    assert_false(stats_significant(1.2, 1.1, INFINITY, 0.001, 0.05));
}

/* stats_delta's flag and text agree: "~" exactly when it is not significant. */
static void test_delta_significant(void **state)
{
    const double a[] = { 100, 102, 98, 101, 99 };
    const double b[] = { 128, 130, 126, 129, 127 };
    const double c[] = { 99, 103, 100, 97, 101 };
    struct stats_delta d;

    (void)state;
    stats_delta(a, 5, b, 5, 1, &d);
    assert_true(d.ok && d.significant);
    assert_true(strncmp(d.text, "1.28", 4) == 0); /* medians 128 over 100 */
    stats_delta(a, 5, c, 5, 1, &d);
    assert_true(d.ok && !d.significant);
    assert_true(strncmp(d.text, "~ ", 2) == 0 && strchr(d.text, '[') != NULL);
    stats_delta(a, 3, b, 3, 1, &d); /* 3 + 3 runs: never significant, figures still shown */
    assert_true(d.ok && !d.significant);
    assert_true(strncmp(d.text, "~ 1.", 4) == 0 && strstr(d.text, "n=3+3)") != NULL);
}

static void test_format_truncates(void **state)
{
    char buf[8];

    (void)state;
    memset(buf, 'x', sizeof(buf));
    stats_format_delta(buf, 0, 1.28, 1.24, 1.31, 0.002, 0.05, 10, 10);
    assert_true(buf[0] == 'x'); /* cap 0: nothing written */
    stats_format_delta(buf, 5, 1.28, 1.24, 1.31, 0.31, 0.05, 10, 10);
    assert_string_equal(buf, "~ 1.");
    assert_true(buf[5] == 'x');
}

/* ---- run order ---- */

static void test_order_abba(void **state)
{
    const unsigned want2[] = { 0, 1, 1, 0, 0, 1, 1, 0 };
    const unsigned want3[] = { 0, 1, 2, 2, 1, 0, 0, 1, 2 };
    unsigned out[64], count[4] = { 0 };

    (void)state;
    stats_order_abba(2, 4, out);
    assert_memory_equal(out, want2, sizeof(want2));
    stats_order_abba(3, 3, out);
    assert_memory_equal(out, want3, sizeof(want3));

    stats_order_abba(4, 16, out);
    for (int i = 0; i < 64; i++) {
        assert_true(out[i] < 4);
        count[out[i]]++;
    }
    for (int k = 0; k < 4; k++)
        assert_int_equal(count[k], 16);

    /* nothing to write: out untouched */
    out[0] = 77;
    stats_order_abba(0, 4, out);
    stats_order_abba(2, 0, out);
    assert_int_equal(out[0], 77);
}

static void test_order_shuffle(void **state)
{
    unsigned out[2000], again[2000];
    int starts_with_0 = 0;

    (void)state;
    /* each block of 3 is a permutation of 0 1 2 */
    stats_order_shuffle(3, 20, 7, out);
    for (int blk = 0; blk < 20; blk++) {
        unsigned seen = 0;

        for (int i = 0; i < 3; i++) {
            assert_true(out[blk * 3 + i] < 3);
            seen |= 1u << out[blk * 3 + i];
        }
        assert_int_equal(seen, 7);
    }
    /* same seed, same order; another seed, another order */
    stats_order_shuffle(3, 20, 7, again);
    assert_memory_equal(out, again, 60 * sizeof(out[0]));
    stats_order_shuffle(3, 20, 8, again);
    assert_memory_not_equal(out, again, 60 * sizeof(out[0]));

    /* fair: 1000 blocks of 2 start with arm 0 about half the time (SD ~16) */
    stats_order_shuffle(2, 1000, SEED, out);
    for (int blk = 0; blk < 1000; blk++) {
        assert_true(out[2 * blk] + out[2 * blk + 1] == 1);
        starts_with_0 += out[2 * blk] == 0;
    }
    if (starts_with_0 < 430 || starts_with_0 > 570)
        fail_msg("arm 0 first in %d of 1000 blocks", starts_with_0);

    /* one arm: all zeros */
    stats_order_shuffle(1, 5, SEED, out);
    for (int i = 0; i < 5; i++)
        assert_int_equal(out[i], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_odd_even),
        cmocka_unit_test(test_summary_sd_by_hand),
        cmocka_unit_test(test_summary_single_and_invalid),
        cmocka_unit_test(test_mwu_separated),
        cmocka_unit_test(test_mwu_min_p),
        cmocka_unit_test(test_mwu_published_example),
        cmocka_unit_test(test_mwu_mixed_by_hand),
        cmocka_unit_test(test_mwu_table_critical_values),
        cmocka_unit_test(test_mwu_exact_at_limit),
        cmocka_unit_test(test_mwu_ties_normal),
        cmocka_unit_test(test_mwu_identical),
        cmocka_unit_test(test_mwu_large_normal),
        cmocka_unit_test(test_mwu_invalid),
        cmocka_unit_test(test_bootstrap_point_estimate),
        cmocka_unit_test(test_bootstrap_known_quantiles),
        cmocka_unit_test(test_bootstrap_diff),
        cmocka_unit_test(test_bootstrap_interpolation),
        cmocka_unit_test(test_bootstrap_determinism),
        cmocka_unit_test(test_bootstrap_coverage),
        cmocka_unit_test(test_bootstrap_invalid),
        cmocka_unit_test(test_format_significant),
        cmocka_unit_test(test_format_not_significant),
        cmocka_unit_test(test_significant),
        cmocka_unit_test(test_delta_significant),
        cmocka_unit_test(test_format_truncates),
        cmocka_unit_test(test_order_abba),
        cmocka_unit_test(test_order_shuffle),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
