/*
 * test_svg: what the HTML report draws with. html_text must leave no markup
 * from a string of a file (labels, command lines), keep UTF-8 and show
 * control bytes and broken UTF-8 visibly; the nines axis must place 90 %, 99 %,
 * 99.9 %, 99.99 % one step apart; axes map their ends to their pixels; numbers
 * print as the page shows them.
 */
/* cmocka.h needs these four first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/svg.h"

/* html_text(s) into a string of the test's own (freed by the caller). */
static char *escaped(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    html_text(f, s);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void check_escape(const char *in, const char *want)
{
    char *got = escaped(in);

    if (strcmp(got, want) != 0) print_message("html_text(%s) = %s, want %s\n", in, got, want);
    assert_string_equal(got, want);
    free(got);
}

static void test_escape_markup(void **state)
{
    (void)state;
    check_escape("tcp://127.0.0.1:9000", "tcp://127.0.0.1:9000");
    check_escape("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;");
    check_escape("a&b", "a&amp;b");
    check_escape("\"x\" onload='y'", "&quot;x&quot; onload=&#39;y&#39;");
    check_escape("&lt;", "&amp;lt;");
    check_escape("", "");
}

static void test_escape_bytes(void **state)
{
    (void)state;
    /* UTF-8 is kept, tab and newline too */
    check_escape("µs ±4 % — ok", "µs ±4 % — ok");
    check_escape("a\tb\nc", "a\tb\nc");
    /* control bytes and DEL are shown, not passed */
    check_escape("\x1b[2J", "\\x1b[2J");
    check_escape("a\x7f"
                 "b",
                 "a\\x7fb");
    check_escape("\r", "\\x0d");
    /* not UTF-8: a lone continuation byte, a cut sequence, an overlong '<', a surrogate */
    check_escape("\x80", "\\x80");
    check_escape("\xc3", "\\xc3");
    check_escape("\xc0\xbc", "\\xc0\\xbc");
    check_escape("\xed\xa0\x80", "\\xed\\xa0\\x80");
    /* a C1 control (U+009B, CSI) */
    check_escape("\xc2\x9b", "\\xc2\\x9b");
}

static void test_escape_null(void **state)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    (void)state;
    html_text(f, NULL);
    fclose(f);
    assert_int_equal(len, 0);
    free(buf);
}

static void test_nines(void **state)
{
    static const struct {
        double pct, nines;
    } cases[] = {
        { 0, 0 },     { 50, 0.30103 }, { 90, 1 },  { 99, 2 }, { 99.9, 3 },
        { 99.99, 4 }, { 99.999, 4 },   { 100, 4 }, { -1, 0 }, { 75, 0.60206 },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        double got = svg_nines(cases[i].pct);
        if (fabs(got - cases[i].nines) > 1e-5)
            print_message("svg_nines(%g) = %g, want %g\n", cases[i].pct, got, cases[i].nines);
        assert_true(fabs(got - cases[i].nines) <= 1e-5);
    }
    for (double n = 0; n <= SVG_NINES_MAX; n += 0.25)
        assert_true(fabs(svg_nines(svg_percentile_at(n)) - n) < 1e-9);
}

/* On a nines axis 90 %, 99 %, 99.9 % and 99.99 % are equally spaced, 0 % and 99.99 % its ends. */
static void test_nines_axis(void **state)
{
    struct svg_axis a = { SVG_NINES, 0, 0, 100, 500 };

    (void)state;
    svg_axis_round(SVG_NINES, &a.lo, &a.hi);
    assert_true(fabs(svg_map(&a, 0) - 100) < 1e-9);
    assert_true(fabs(svg_map(&a, 90) - 200) < 1e-9);
    assert_true(fabs(svg_map(&a, 99) - 300) < 1e-9);
    assert_true(fabs(svg_map(&a, 99.9) - 400) < 1e-9);
    assert_true(fabs(svg_map(&a, 99.99) - 500) < 1e-6);
    assert_true(fabs(svg_map(&a, 100) - 500) < 1e-6); /* clamped at the end */
    assert_true(svg_map(&a, 50) > 100 && svg_map(&a, 50) < 200);
}

static void test_log_axis(void **state)
{
    struct svg_axis y = { SVG_LOG, 3, 4500, 300, 0 }; /* a y axis: up is smaller */

    (void)state;
    svg_axis_round(SVG_LOG, &y.lo, &y.hi);
    assert_true(y.lo == 1 && y.hi == 10000);
    assert_true(fabs(svg_map(&y, 1) - 300) < 1e-9);
    assert_true(fabs(svg_map(&y, 100) - 150) < 1e-9);
    assert_true(fabs(svg_map(&y, 10000) - 0) < 1e-9);
    assert_true(fabs(svg_map(&y, 0) - 300) < 1e-9); /* nothing below the bottom */
}

static void test_linear_axis(void **state)
{
    struct svg_axis x = { SVG_LINEAR, 0, 13200, 0, 600 };

    (void)state;
    svg_axis_round(SVG_LINEAR, &x.lo, &x.hi);
    assert_true(x.lo == 0 && x.hi >= 13200 && x.hi <= 20000);
    assert_true(fabs(svg_map(&x, x.hi / 2) - 300) < 1e-9);
    x.lo = x.hi = 5; /* one value: the middle */
    assert_true(fabs(svg_map(&x, 5) - 300) < 1e-9);
}

static void test_number(void **state)
{
    char buf[32];

    (void)state;
    svg_number(buf, sizeof(buf), 1234567.4);
    assert_string_equal(buf, "1,234,567");
    svg_number(buf, sizeof(buf), 999.5); /* rounds as printf does: to even */
    assert_string_equal(buf, "1,000");
    svg_number(buf, sizeof(buf), 100);
    assert_string_equal(buf, "100");
    svg_number(buf, sizeof(buf), 12.345);
    assert_string_equal(buf, "12.3");
    svg_number(buf, sizeof(buf), 0.01234);
    assert_string_equal(buf, "0.0123");
    svg_number(buf, sizeof(buf), 0);
    assert_string_equal(buf, "0");
    svg_number(buf, sizeof(buf), NAN);
    assert_string_equal(buf, "n/a");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape_markup), cmocka_unit_test(test_escape_bytes),
        cmocka_unit_test(test_escape_null),   cmocka_unit_test(test_nines),
        cmocka_unit_test(test_nines_axis),    cmocka_unit_test(test_log_axis),
        cmocka_unit_test(test_linear_axis),   cmocka_unit_test(test_number),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
