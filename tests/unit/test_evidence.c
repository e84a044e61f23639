/*
 * test_evidence: reading evidence back. A histogram written with
 * report_hist_json and read with evidence_hist_add is the same histogram,
 * counter for counter; adding two histograms' JSON equals hist_merge of the
 * originals; a histogram of another layout, or whose counts disagree with its
 * total, is refused; evidence_load checks the schema. Random data comes from a
 * fixed-seed xorshift so a failure reproduces.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evidence.h"
#include "hist.h"
#include "report/report.h"

#define SEED 0x9e3779b97f4a7c15ULL

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dULL;
}

/* n values log-uniform over [1, 2 * HIST_MAX_NS], so every bucket and the overflow see some. */
static struct hist *random_hist(size_t n, uint64_t seed)
{
    struct hist *h = hist_new();
    uint64_t s = seed;

    assert_non_null(h);
    for (size_t i = 0; i < n; i++) {
        double u = (double)(rng_next(&s) >> 11) * 0x1.0p-53;
        hist_record(h, (uint64_t)exp(u * log(2.0 * (double)HIST_MAX_NS)));
    }
    return h;
}

static void assert_hist_equal(const struct hist *a, const struct hist *b)
{
    assert_int_equal(a->total, b->total);
    assert_int_equal(a->overflow, b->overflow);
    assert_int_equal(a->min, b->min);
    assert_int_equal(a->max, b->max);
    assert_memory_equal(a->counts, b->counts, sizeof(a->counts));
}

/* Decodes j into a new histogram; the test fails if it is refused. */
static struct hist *decode(const json_t *j)
{
    struct hist *h = hist_new();
    struct hb_err err = { 0 };

    assert_non_null(h);
    if (evidence_hist_add(h, j, &err) != 0) fail_msg("refused: %s", err.msg);
    return h;
}

static void test_round_trip_exact(void **state)
{
    struct hist *h = random_hist(200000, SEED);
    json_t *j = report_hist_json(h);
    struct hist *back = decode(j);

    (void)state;
    assert_true(h->overflow > 0);
    assert_hist_equal(h, back);
    hist_free(back);
    hist_free(h);
    json_decref(j);
}

static void test_round_trip_empty(void **state)
{
    struct hist *h = hist_new();
    json_t *j = report_hist_json(h);
    struct hist *back = decode(j);

    (void)state;
    /* written with min 0, it must come back as empty (min UINT64_MAX) */
    assert_hist_equal(h, back);
    hist_free(back);
    hist_free(h);
    json_decref(j);
}

static void test_merge_equals_hist_merge(void **state)
{
    struct hist *a = random_hist(100000, SEED), *b = random_hist(50000, SEED + 1);
    json_t *ja = report_hist_json(a), *jb = report_hist_json(b);
    struct hist *sum = decode(ja);
    struct hb_err err = { 0 };

    (void)state;
    assert_int_equal(evidence_hist_add(sum, jb, &err), 0);
    hist_merge(a, b);
    assert_hist_equal(a, sum);
    assert_int_equal(hist_percentile(a, 50), hist_percentile(sum, 50));
    assert_int_equal(hist_percentile(a, 99.9), hist_percentile(sum, 99.9));
    hist_free(sum);
    hist_free(a);
    hist_free(b);
    json_decref(ja);
    json_decref(jb);
}

/* j with key set to v must be refused with -EINVAL and a message. */
static void assert_refused(const json_t *orig, const char *key, json_t *v)
{
    json_t *j = json_deep_copy(orig);
    struct hist *h = hist_new();
    struct hb_err err = { 0 };

    json_object_set_new(j, key, v);
    assert_int_equal(evidence_hist_add(h, j, &err), -EINVAL);
    assert_true(err.msg[0] != '\0');
    hist_free(h);
    json_decref(j);
}

static void test_refuses_other_layouts(void **state)
{
    struct hist *h = random_hist(1000, SEED);
    json_t *j = report_hist_json(h);

    (void)state;
    assert_refused(j, "significant_digits", json_integer(2));
    assert_refused(j, "highest", json_integer(3600000000000LL));
    assert_refused(j, "lowest", json_integer(1000));
    assert_refused(j, "unit", json_string("us"));
    assert_refused(j, "total", json_integer((json_int_t)h->total + 1));
    assert_refused(j, "counts", json_pack("[[ii]]", (int)HIST_COUNTS, 1000));
    assert_refused(j, "counts", json_pack("[[i]]", 5));
    assert_refused(j, "min", json_string("5"));
    hist_free(h);
    json_decref(j);
}

/* Writes text to a new temporary file; returns its path (static storage). */
static const char *temp_file(const char *text)
{
    static char path[] = "/tmp/test_evidence.XXXXXX";
    int fd;

    strcpy(path, "/tmp/test_evidence.XXXXXX");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

/* evidence_load of text gives want; the message is set on failure. */
static void assert_load(const char *text, int want)
{
    const char *path = temp_file(text);
    struct hb_err err = { 0 };
    json_t *sentinel = json_object(), *doc = sentinel; /* must be replaced, NULL on failure */

    assert_int_equal(evidence_load(path, &doc, &err), want);
    json_decref(sentinel);
    if (want == 0) assert_non_null(doc);
    if (want != 0) assert_null(doc);
    if (want != 0) assert_non_null(strstr(err.msg, path));
    json_decref(doc);
    unlink(path);
}

static void test_load_checks_schema(void **state)
{
    struct hb_err err = { 0 };
    json_t *doc;

    (void)state;
    assert_load("{\"schema\": \"" REPORT_SCHEMA "\", \"runs\": []}", 0);
    assert_load("{\"schema\": \"hopbench.evidence/2\", \"runs\": []}", -EINVAL);
    assert_load("{\"runs\": []}", -EINVAL);
    assert_load("{\"schema\": \"" REPORT_SCHEMA "\"}", -EINVAL);
    assert_load("[1, 2]", -EINVAL);
    assert_load("{\"schema\": ", -EINVAL);
    assert_int_equal(evidence_load("/nonexistent/e.json", &doc, &err), -ENOENT);
    assert_null(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_exact),
        cmocka_unit_test(test_round_trip_empty),
        cmocka_unit_test(test_merge_equals_hist_merge),
        cmocka_unit_test(test_refuses_other_layouts),
        cmocka_unit_test(test_load_checks_schema),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
