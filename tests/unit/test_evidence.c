/*
 * test_evidence: reading evidence back. A histogram written with
 * report_hist_json and read with evidence_hist_add is the same histogram,
 * counter for counter; its counts written as the gamma-rice/1 string, as
 * the runs of consecutive counters and as the [index, count] pairs of older
 * evidence (or both in one list, in any order) decode alike, empty, with one
 * counter, the highest, or counts of 2^53, and the lists decoded are written
 * again as the same string; the string is shorter than runs, runs than
 * pairs; an unknown counts_encoding, or counts of the other form than it
 * names, is refused, and runs outside the counters are; adding two
 * histograms' JSON equals
 * hist_merge of the originals; a histogram of another layout, or whose counts
 * disagree with its
 * total, is refused, and so are counts or totals that overflow when added;
 * evidence_load checks the schema; evidence_read refuses impossible figures
 * (negative rates, percentiles out of order) naming the file and run; and
 * text_safe escapes what could act on a terminal; runs are keyed by their
 * label, when they have one, instead of their address. Random data comes from a
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
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evidence.h"
#include "evidence/schema.h"
#include "hist.h"
#include "report/report.h"
#include "util.h"

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

/* h's non-zero counters as [index, count] pairs, as evidence was written before runs. */
static json_t *pairs_counts(const struct hist *h)
{
    json_t *a = json_array();

    for (size_t i = 0; i < HIST_COUNTS; i++)
        if (h->counts[i] != 0)
            json_array_append_new(a, json_pack("[II]", (json_int_t)i, (json_int_t)h->counts[i]));
    return a;
}

/*
 * h's non-zero counters as [index, [count, ...]] runs of consecutive
 * counters, as evidence was written before counts_encoding, with a zero
 * inside a run where one counter is empty between two that are not.
 */
static json_t *runs_counts(const struct hist *h)
{
    json_t *a = json_array(), *run = NULL; /* run: borrowed from a */
    size_t end = 0;                        /* one past run's last counter */

    for (size_t i = 0; i < HIST_COUNTS; i++) {
        if (h->counts[i] == 0) continue;
        if (run != NULL && i == end + 1) {
            json_array_append_new(run, json_integer(0));
        } else if (run == NULL || i != end) {
            run = json_array();
            json_array_append_new(a, json_pack("[Io]", (json_int_t)i, run));
        }
        json_array_append_new(run, json_integer((json_int_t)h->counts[i]));
        end = i + 1;
    }
    return a;
}

/* The histogram JSON j with its counts as the JSON list counts, as older evidence has them. */
static json_t *listed(const json_t *j, json_t *counts)
{
    json_t *old = json_deep_copy(j);

    json_object_del(old, "counts_encoding");
    json_object_set_new(old, "counts", counts);
    return old;
}

/*
 * h written as the string, as runs, as pairs, and as both in one list (the
 * first run as pairs, the rest in reverse order) decodes to h; pairs and runs
 * decoded and written again are the string report_hist_json writes.
 */
static void assert_encodings_alike(const struct hist *h)
{
    json_t *enc = report_hist_json(h), *runs = listed(enc, runs_counts(h));
    json_t *pairs = listed(enc, pairs_counts(h)), *mixed, *again;
    json_t *counts = json_object_get(runs, "counts"), *first = json_array_get(counts, 0);
    json_t *both = json_array();
    struct hist *a, *b, *c, *d;
    struct hist_coded p;
    struct hb_err err = { 0 };

    assert_non_null(enc);
    assert_string_equal(json_string_value(json_object_get(enc, "counts_encoding")), "gamma-rice/1");
    assert_true(json_is_string(json_object_get(enc, "counts")));
    for (size_t k = 0; k < json_array_size(json_array_get(first, 1)); k++) {
        json_int_t n = json_integer_value(json_array_get(json_array_get(first, 1), k));
        if (n > 0)
            json_array_append_new(
                both,
                json_pack("[II]", json_integer_value(json_array_get(first, 0)) + (json_int_t)k, n));
    }
    for (size_t i = json_array_size(counts); i-- > 1;)
        json_array_append(both, json_array_get(counts, i));
    mixed = listed(enc, both);
    a = decode(enc);
    b = decode(runs);
    c = decode(pairs);
    d = decode(mixed);
    assert_hist_equal(h, a);
    assert_hist_equal(h, b);
    assert_hist_equal(h, c);
    assert_hist_equal(h, d);
    for (int k = 0; k < 3; k++) {
        if (hist_coded_decode(&p, k == 0 ? runs : k == 1 ? pairs : mixed, &err) != 0)
            fail_msg("refused: %s", err.msg);
        again = hist_coded_json(&p);
        assert_true(json_equal(again, enc));
        hist_coded_release(&p);
        json_decref(again);
    }
    hist_free(a);
    hist_free(b);
    hist_free(c);
    hist_free(d);
    json_decref(mixed);
    json_decref(pairs);
    json_decref(runs);
    json_decref(enc);
}

static void test_encodings_decode_alike(void **state)
{
    struct hist *spread = random_hist(200000, SEED), *empty = hist_new(), *one = hist_new();
    struct hist *last = hist_new(), *big = hist_new();
    const uint64_t c53 = 1ULL << 53;

    (void)state;
    assert_true(empty != NULL && one != NULL && last != NULL && big != NULL);
    hist_record(one, 12345);
    hist_record(last, HIST_MAX_NS); /* the highest counter a value can reach */
    hist_record(last, 1);
    /* counts of 2^53, the most a double-based JSON reader keeps exact, side by side */
    big->counts[hist_index(1000)] = c53;
    big->counts[hist_index(1001)] = c53 - 1;
    big->counts[hist_index(HIST_MAX_NS)] = c53;
    big->total = 3 * c53 - 1;
    big->min = 1000;
    big->max = HIST_MAX_NS;
    assert_encodings_alike(spread);
    assert_encodings_alike(empty);
    assert_encodings_alike(one);
    assert_encodings_alike(last);
    assert_encodings_alike(big);
    hist_free(spread);
    hist_free(empty);
    hist_free(one);
    hist_free(last);
    hist_free(big);
}

/*
 * The string takes less room than runs, which take less than pairs, for a
 * histogram of 200,000 values spread over every bucket.
 */
static void test_string_smaller_than_lists(void **state)
{
    struct hist *h = random_hist(200000, SEED);
    json_t *enc = report_hist_json(h), *runs = runs_counts(h), *pairs = pairs_counts(h);
    char *r = json_dumps(runs, JSON_COMPACT), *q = json_dumps(pairs, JSON_COMPACT);
    size_t e = json_string_length(json_object_get(enc, "counts"));

    (void)state;
    assert_true(r != NULL && q != NULL);
    assert_true(e < strlen(r));
    assert_true(strlen(r) < strlen(q));
    free(r);
    free(q);
    json_decref(pairs);
    json_decref(runs);
    json_decref(enc);
    hist_free(h);
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
    json_t *j = report_hist_json(h), *old = listed(j, pairs_counts(h));

    (void)state;
    assert_refused(j, "significant_digits", json_integer(2));
    assert_refused(j, "highest", json_integer(3600000000000LL));
    assert_refused(j, "lowest", json_integer(1000));
    assert_refused(j, "unit", json_string("us"));
    assert_refused(j, "total", json_integer((json_int_t)h->total + 1));
    assert_refused(old, "counts", json_pack("[[ii]]", (int)HIST_COUNTS, 1000));
    assert_refused(old, "counts", json_pack("[[i]]", 5));
    assert_refused(j, "min", json_string("5"));
    /* an encoding this build does not know, a string without its name, a list with it */
    assert_refused(j, "counts_encoding", json_string("gamma-rice/2"));
    assert_refused(j, "counts_encoding", json_integer(1));
    assert_refused(old, "counts", json_string("gA=="));
    assert_refused(j, "counts", json_pack("[[ii]]", 5, 1));
    assert_refused(j, "counts", json_string("not base64"));
    hist_free(h);
    json_decref(old);
    json_decref(j);
}

/*
 * A run must lie inside the counters and hold counts of 0 or more that add up
 * without wrapping; a counter listed twice holds the sum.
 */
static void test_refuses_bad_runs(void **state)
{
    struct hist *empty = hist_new(), *h;
    json_t *enc = report_hist_json(empty), *j = listed(enc, json_array()),
           *edge = json_deep_copy(j);
    struct hb_err err = { 0 };
    const json_int_t last = (json_int_t)HIST_COUNTS - 1;

    (void)state;
    /* a run may reach the last counter, not pass it */
    json_object_set_new(edge, "counts", json_pack("[[I[ii]]]", last - 1, 0, 0));
    h = decode(edge);
    assert_int_equal(h->total, 0);
    /* a counter listed twice, in a run and in a pair, holds the sum */
    json_object_set_new(edge, "total", json_integer(3));
    json_object_set_new(edge, "min", json_integer(5));
    json_object_set_new(edge, "max", json_integer(6));
    json_object_set_new(edge, "counts", json_pack("[[i[ii]][ii]]", 5, 1, 1, 5, 1));
    assert_int_equal(evidence_hist_add(h, edge, &err), 0);
    assert_true(h->total == 3 && h->counts[5] == 2 && h->counts[6] == 1);
    json_object_set_new(edge, "total", json_integer(0));
    json_object_set_new(edge, "counts", json_pack("[[I[ii]]]", last, 0, 0));
    assert_int_equal(evidence_hist_add(h, edge, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "passes"));
    assert_refused(j, "counts", json_pack("[[i[ii]]]", -1, 0, 0));
    assert_refused(j, "counts", json_pack("[[i[ii]]]", 5, 1, -1));
    assert_refused(j, "counts", json_pack("[[i[s]]]", 5, "1"));
    assert_refused(j, "counts", json_pack("[[i[[i]]]]", 5, 0));
    assert_refused(j, "counts", json_pack("[[i[i]i]]", 5, 0, 0));
    assert_refused(
        j, "counts",
        json_pack("[[i[III]]]", 100, (json_int_t)INT64_MAX, (json_int_t)INT64_MAX, (json_int_t)2));
    hist_free(h);
    hist_free(empty);
    json_decref(edge);
    json_decref(j);
    json_decref(enc);
}

/* Counts that wrap around 2^64 when added must not pass for a small total. */
static void test_refuses_wrapping_counts(void **state)
{
    /* 2 * (2^63 - 1) + 2 = 2^64: 0 in uint64 arithmetic */
    json_t *j =
        json_pack("{s:s, s:I, s:I, s:i, s:I, s:I, s:I, s:I, s:[[II][II][II]]}", "unit", "ns",
                  "lowest", (json_int_t)1, "highest", (json_int_t)HIST_MAX_NS, "significant_digits",
                  3, "total", (json_int_t)0, "min", (json_int_t)0, "max", (json_int_t)0, "overflow",
                  (json_int_t)0, "counts", (json_int_t)100, (json_int_t)INT64_MAX, (json_int_t)200,
                  (json_int_t)INT64_MAX, (json_int_t)300, (json_int_t)2);
    struct hist *h = hist_new();
    struct hb_err err = { 0 };

    (void)state;
    assert_non_null(j);
    assert_int_equal(evidence_hist_add(h, j, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "overflow"));
    assert_int_equal(h->total, 0);
    hist_free(h);
    json_decref(j);
}

/* Two histograms whose totals add up past INT64_MAX cannot be merged. */
static void test_refuses_total_overflow(void **state)
{
    struct hist *h = random_hist(1000, SEED), *sum = hist_new();
    json_t *j;
    struct hb_err err = { 0 };

    (void)state;
    /* every value in one counter, as many as a file can say */
    memset(h->counts, 0, sizeof(h->counts));
    h->counts[hist_index(h->min)] = (uint64_t)INT64_MAX;
    h->total = (uint64_t)INT64_MAX;
    h->max = h->min;
    h->overflow = 0;
    j = report_hist_json(h);
    assert_int_equal(evidence_hist_add(sum, j, &err), 0);
    assert_int_equal(evidence_hist_add(sum, j, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "overflow"));
    assert_int_equal(sum->total, (uint64_t)INT64_MAX);
    hist_free(sum);
    hist_free(h);
    json_decref(j);
}

/* min and max must be in the first and last counters that hold a value. */
static void test_refuses_min_max_outside_counts(void **state)
{
    struct hist *h = hist_new();
    json_t *j;

    (void)state;
    assert_non_null(h);
    hist_record(h, 5000);
    hist_record(h, 7000);
    hist_record(h, 90000);
    j = report_hist_json(h);
    hist_free(decode(j)); /* as written, it decodes */
    assert_refused(j, "min", json_integer(2500));
    assert_refused(j, "min", json_integer(7000));
    assert_refused(j, "max", json_integer(180000));
    assert_refused(j, "max", json_integer(7000));
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

/*
 * A document read a run at a time is the document jansson reads whole,
 * however it is laid out; one that is not JSON is refused with the line and
 * column of the fault.
 */
static void assert_same_doc(const char *text)
{
    const char *path = temp_file(text);
    struct hb_err err = { 0 };
    json_t *doc = NULL, *whole = json_loads(text, 0, NULL);

    assert_non_null(whole);
    if (evidence_load(path, &doc, &err) != 0) fail_msg("refused: %s", err.msg);
    if (!json_equal(doc, whole)) fail_msg("read differently: %s", text);
    json_decref(doc);
    json_decref(whole);
    unlink(path);
}

static void test_read_document_layouts(void **state)
{
    const char *bad[] = {
        "{\"schema\": \"" REPORT_SCHEMA "\", \"runs\": [{\"a\": 1}, {\"b\": ]}",
        "{\"schema\": \"" REPORT_SCHEMA "\", \"runs\": [{\"a\": 1} {\"b\": 2}]}",
        "{\"schema\": \"" REPORT_SCHEMA "\", \"runs\": [{\"a\": 1}]} x",
        "{\"schema\": \"" REPORT_SCHEMA "\", \"runs\": [{\"a\": \"1}]}",
    };
    struct hb_err err = { 0 };
    json_t *doc;

    (void)state;
    assert_same_doc("{\"schema\":\"" REPORT_SCHEMA
                    "\",\"runs\":[{\"a\":1},{\"b\":[2,{\"c\":\"]}\"}]}]}");
    assert_same_doc("{\n \"schema\": \"" REPORT_SCHEMA "\",\n \"runs\": [\n  {\"a\": 1},\n  2, "
                    "null, \"x\", -1.5e3, true\n ],\n \"after\": {\"d\": [1]}\n}\n");
    assert_same_doc("{\"runs\": [], \"schema\": \"" REPORT_SCHEMA "\", \"x\": \"\\\"runs\\\"\"}");
    /* layouts read whole: an escaped key, two "runs" */
    assert_same_doc("{\"sch\\u0065ma\": \"" REPORT_SCHEMA "\", \"runs\": [{\"a\": 1}]}");
    assert_same_doc("{\"schema\": \"" REPORT_SCHEMA "\", \"runs\": 1, \"runs\": [{\"a\": 1}]}");
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        const char *path = temp_file(bad[i]);
        doc = NULL;
        assert_int_equal(evidence_load(path, &doc, &err), -EINVAL);
        assert_null(doc);
        if (strstr(err.msg, "not JSON") == NULL || strstr(err.msg, "(line 1, column ") == NULL)
            fail_msg("%s: %s", bad[i], err.msg);
        unlink(path);
    }
}

/* Counts each run evidence_read hands over. */
static int count_run(void *ctx, size_t idx, json_t *run, struct hb_err *err)
{
    (void)idx;
    (void)run;
    (void)err;
    (*(size_t *)ctx)++;
    return 0;
}

#define JSONL_HEADER "{\"record\": \"header\", \"schema\": \"" REPORT_SCHEMA "\"}\n"
#define JSONL_RUN    "{\"record\": \"run\", \"a\": 1}\n"

/* evidence_read of a --jsonl text: its runs (-1 when refused, err's message into msg). */
static long jsonl_runs(const char *text, char *msg, size_t cap)
{
    const char *path = temp_file(text);
    size_t n = 0;
    struct evidence_reader reader = { .take = count_run, .ctx = &n };
    struct hb_err err = { 0 };
    json_t *head = NULL;
    int rc = evidence_read(path, &reader, &head, &err);

    snprintf(msg, cap, "%s", rc < 0 ? err.msg : "");
    json_decref(head);
    unlink(path);
    return rc < 0 ? -1 : (long)n;
}

/*
 * A --jsonl file's blank lines (white space only) are skipped, before its
 * first header too; a last line without its end that is not JSON is said to
 * be cut short, with the byte it starts at.
 */
static void test_jsonl_blank_and_cut_lines(void **state)
{
    char msg[512];

    (void)state;
    assert_int_equal(jsonl_runs(JSONL_HEADER JSONL_RUN, msg, sizeof(msg)), 1);
    assert_int_equal(jsonl_runs("\n\n" JSONL_HEADER JSONL_RUN, msg, sizeof(msg)), 1);
    assert_int_equal(jsonl_runs(" \r\n\t\n" JSONL_HEADER "\n  \n" JSONL_RUN "\n", msg, sizeof(msg)),
                     1);
    assert_int_equal(jsonl_runs(JSONL_HEADER JSONL_RUN "{\"record\": \"ru", msg, sizeof(msg)), -1);
    if (strstr(msg, ": line 3: cut short (no line end, from byte ") == NULL ||
        strstr(msg, "not JSON") == NULL)
        fail_msg("want line 3 said cut short, got '%s'", msg);
    assert_int_equal(jsonl_runs(JSONL_HEADER "{\"record\": \"ru\n" JSONL_RUN, msg, sizeof(msg)),
                     -1);
    if (strstr(msg, ": line 2: not JSON") == NULL || strstr(msg, "cut short") != NULL)
        fail_msg("want line 2 not JSON (not cut short), got '%s'", msg);
}

/*
 * evidence_compare of argv[1] and argv[2] with its tables dropped; its error
 * message in msg[cap] ("" when none). Returns what it returns.
 */
static int compare_caught(char **argv, char *msg, size_t cap)
{
    FILE *null = fopen("/dev/null", "w");
    struct evidence_compare_result res;
    struct hb_err err = { 0 };
    int rc;

    assert_non_null(null);
    rc = evidence_compare(argv[1], argv[2], null, &res, &err);
    fclose(null);
    snprintf(msg, cap, "%s", rc < 0 ? err.msg : "");
    return rc;
}

/* A run record with every figure compare reads; extra is merged in (json_object_update). */
static char *run_doc(const char *extra)
{
    json_t *run =
        json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:b, s:b, s:f, s:f, s:{s:i, s:i, "
                  "s:i, s:i, s:i, s:i, s:i, s:i, s:f}}",
                  "endpoint", "tcp://127.0.0.1:1", "mode", "reuse", "size", 64, "connections", 1,
                  "pipeline", 1, "rep", 0, "valid", 1, "interrupted", 0, "ops_per_s", 1000.0,
                  "client_cpu_ns_per_op", 2000.0, "latency_ns", "min", 10, "p50", 20, "p90", 30,
                  "p95", 40, "p99", 50, "p999", 60, "p9999", 70, "max", 80, "mean", 25.0);
    json_t *change = json_loads(extra, 0, NULL), *doc;
    char *text;

    assert_non_null(run);
    assert_non_null(change);
    json_object_update_recursive(run, change);
    doc = json_pack("{s:s, s:[o]}", "schema", REPORT_SCHEMA, "runs", run);
    text = json_dumps(doc, 0);
    json_decref(change);
    json_decref(doc);
    return text;
}

/*
 * A document of one run, changed by extra, reads; compare refuses it with
 * one line naming the file, the run and want (or takes it, want NULL).
 */
static void assert_figures(const char *extra, const char *want)
{
    char *text = run_doc(extra), msg[512], cmd[] = "compare", path[64];
    char *argv[] = { cmd, path, path, NULL };
    size_t n = 0;
    struct evidence_reader reader = { .take = count_run, .ctx = &n };
    struct hb_err err = { 0 };
    json_t *head = NULL;

    snprintf(path, sizeof(path), "%s", temp_file(text));
    assert_int_equal(evidence_read(path, &reader, &head, &err), 0);
    assert_int_equal(n, 1);
    json_decref(head);
    assert_int_equal(compare_caught(argv, msg, sizeof(msg)), want ? -EINVAL : 0);
    if (want != NULL) {
        if (strstr(msg, path) == NULL || strstr(msg, ": run 0: ") == NULL ||
            strstr(msg, want) == NULL || strchr(msg, '\n') != NULL)
            fail_msg("want one line naming %s, run 0 and '%s', got '%s'", path, want, msg);
    }
    unlink(path);
    free(text);
}

static void test_refuses_impossible_figures(void **state)
{
    (void)state;
    assert_figures("{}", NULL);
    assert_figures("{\"ops_per_s\": -5}", "ops_per_s is -5, not a number >= 0");
    assert_figures("{\"ops_per_s\": -0.0}", NULL);
    assert_figures("{\"ops_per_s\": 1.5e308}", NULL); /* no ops and window to check it by */
    assert_figures("{\"ops\": 176000, \"window_s\": 1.0, \"ops_per_s\": 1e308}",
                   "ops_per_s is 1e+308, not ops / window_s (176000 / 1 = 176000)");
    assert_figures("{\"ops\": 176000, \"window_s\": 1.0, \"ops_per_s\": 176000.0}", NULL);
    assert_figures("{\"ops\": 176000, \"window_s\": 2.0, \"ops_per_s\": 88000.00001}", NULL);
    assert_figures("{\"ops\": 176000, \"window_s\": 2.0, \"ops_per_s\": 88001.0}",
                   "ops_per_s is 88001, not ops / window_s (176000 / 2 = 88000)");
    assert_figures("{\"ops\": 10, \"window_s\": 0.0, \"ops_per_s\": 0.0}", NULL);
    assert_figures("{\"ops\": 10, \"window_s\": 0.0, \"ops_per_s\": 5.0}",
                   "ops_per_s is 5, not ops / window_s (10 / 0 = 0)");
    assert_figures("{\"ops\": -1, \"window_s\": 1.0, \"ops_per_s\": 0.0}",
                   "ops is not a count >= 0");
    assert_figures("{\"ops\": 10, \"window_s\": -1.0, \"ops_per_s\": 0.0}",
                   "window_s is -1, not a number >= 0");
    assert_figures("{\"client_cpu_ns_per_op\": -1e300}",
                   "client_cpu_ns_per_op is -1e+300, not a number >= 0");
    assert_figures("{\"latency_ns\": {\"p50\": 5}}",
                   "latency_ns.p50 is 5, below latency_ns.min 10");
    assert_figures("{\"latency_ns\": {\"p99\": 35}}",
                   "latency_ns.p99 is 35, below latency_ns.p95 40");
    assert_figures("{\"latency_ns\": {\"max\": 65}}",
                   "latency_ns.max is 65, below latency_ns.p9999");
    assert_figures("{\"latency_ns\": {\"p9999\": \"70\"}}", "latency_ns.p9999 is a string");
    assert_figures("{\"latency_ns\": {\"mean\": -1}}", "latency_ns.mean is -1");
}

/* jansson refuses numbers a double cannot hold, so no NaN or infinity comes in. */
static void test_no_nan_from_json(void **state)
{
    json_error_t jerr;

    (void)state;
    assert_null(json_loads("[1e999]", 0, &jerr));
    assert_null(json_loads("[-1e999]", 0, &jerr));
    assert_null(json_loads("[NaN]", 0, &jerr));
    assert_null(json_loads("[Infinity]", 0, &jerr));
}

/* text_safe of in gives want in a buffer of cap bytes. */
static void assert_safe(const char *in, size_t cap, const char *want)
{
    char buf[TEXT_SAFE_CAP];

    assert_true(cap <= sizeof(buf));
    assert_string_equal(text_safe(buf, cap, in), want);
    assert_true(strlen(buf) < cap);
}

static void test_text_safe(void **state)
{
    (void)state;
    assert_safe("tcp://127.0.0.1:9000", 64, "tcp://127.0.0.1:9000");
    assert_safe("a\x1b[2Jb", 64, "a\\x1b[2Jb");
    assert_safe("line\nforged\r\t", 64, "line\\nforged\\r\\t");
    assert_safe("back\\slash", 64, "back\\\\slash");
    assert_safe("\x7f\x01", 64, "\\x7f\\x01");
    /* UTF-8 is kept: µ, €, 𝄞 */
    assert_safe("p50 \xc2\xb5s \xe2\x82\xac \xf0\x9d\x84\x9e", 64,
                "p50 \xc2\xb5s \xe2\x82\xac \xf0\x9d\x84\x9e");
    /* C1 controls (CSI as UTF-8 and as a lone byte), overlong, surrogate, cut sequences */
    assert_safe("\xc2\x9b"
                "31m",
                64, "\\xc2\\x9b31m");
    assert_safe("\x9b"
                "31m",
                64, "\\x9b31m");
    assert_safe("\xc0\xaf", 64, "\\xc0\\xaf");
    assert_safe("\xed\xa0\x80", 64, "\\xed\\xa0\\x80");
    assert_safe("\xe2\x82", 64, "\\xe2\\x82");
    /* what does not fit ends with "...", never with half an escape */
    assert_safe("abcdefgh", 8, "abcd...");
    assert_safe("ab\x1b"
                "cdef",
                8, "ab...");
    assert_safe("abc", 4, "abc");
    assert_safe("", 4, "");
    /* bytes a server sent (text_safe_n): NULs escaped, the count bounds UTF-8 too */
    {
        char buf[64];
        assert_string_equal(text_safe_n(buf, sizeof(buf),
                                        "\x01\x00"
                                        "A\0",
                                        4),
                            "\\x01\\x00A\\x00");
        assert_string_equal(text_safe_n(buf, sizeof(buf), "\xc2\xb5s", 1), "\\xc2");
        assert_string_equal(text_safe_n(buf, sizeof(buf), "\xc2\xb5s", 2), "\xc2\xb5");
        assert_string_equal(text_safe_n(buf, sizeof(buf), "ignored", 0), "");
    }
}

/* A closed-loop echo cell on endpoint ep with label ("" for none). */
static struct run_key key_of(const char *ep, const char *label)
{
    return (struct run_key){ .endpoint = ep,
                             .label = label,
                             .mode = "reuse",
                             .proto = "echo",
                             .size = 64,
                             .connections = 1,
                             .pipeline = 1,
                             .rep = -1 };
}

/* The order is a total one on these keys: antisymmetric, 0 exactly for the same cell. */
static void assert_order(struct run_key a, struct run_key b, int want)
{
    int d = evidence_key_order(&a, &b), back = evidence_key_order(&b, &a);

    assert_int_equal((d > 0) - (d < 0), want);
    assert_int_equal((back > 0) - (back < 0), -want);
    assert_true(evidence_same_cell(&a, &b) == (want == 0));
}

static void test_key_order_labels(void **state)
{
    (void)state;
    const char *p1 = "tcp://127.0.0.1:10001", *p2 = "tcp://127.0.0.1:20002";
    char text[TEXT_SAFE_CAP];
    struct run_key k;

    /* one label on two ports (two invocations, each its own free port): one cell */
    assert_order(key_of(p1, "backend.tcp"), key_of(p2, "backend.tcp"), 0);
    assert_order(key_of("unix:/tmp/a/fpm.sock", "u"), key_of("unix:/tmp/b/fpm.sock", "u"), 0);
    /* without labels, as before: the endpoint places the run */
    assert_order(key_of(p1, ""), key_of(p2, ""), -1);
    assert_order(key_of(p1, ""), key_of(p1, ""), 0);
    /* two labels on one endpoint are two cells, ordered by label */
    assert_order(key_of(p2, "a"), key_of(p1, "b"), -1);
    /* a labelled run never shares a cell with an unlabelled one: unlabelled first */
    assert_order(key_of(p1, ""), key_of(p1, "a"), -1);
    assert_order(key_of(p2, ""), key_of(p1, "a"), -1);
    /* the rest of the key still counts under a label */
    k = key_of(p2, "backend.tcp");
    k.pipeline = 16;
    assert_order(key_of(p1, "backend.tcp"), k, -1);

    /* read from a run record: "label" when it is a string, else "" */
    json_t *run = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:s}", "endpoint", p1, "mode", "reuse",
                            "proto", "echo", "size", (json_int_t)64, "connections", (json_int_t)1,
                            "pipeline", (json_int_t)1, "label", "backend.tcp");
    assert_non_null(run);
    assert_true(evidence_run_key(run, &k));
    assert_string_equal(k.label, "backend.tcp");
    assert_string_equal(k.endpoint, p1);
    evidence_cell_label(text, sizeof(text), &k);
    assert_string_equal(text, "echo backend.tcp reuse 64 B c=1 p=1");
    json_object_set_new(run, "label", json_null());
    assert_true(evidence_run_key(run, &k));
    assert_string_equal(k.label, "");
    evidence_cell_label(text, sizeof(text), &k);
    assert_string_equal(text, "echo tcp://127.0.0.1:10001 reuse 64 B c=1 p=1");
    json_decref(run);
}

/* evidence_place_label of a document placement given as JSON text, against want. */
static void assert_placed(const char *doc_place, const char *run_key, const char *want)
{
    json_t *p = doc_place != NULL ? json_loads(doc_place, 0, NULL) : NULL;
    char buf[TEXT_SAFE_CAP];

    assert_true(doc_place == NULL || p != NULL);
    evidence_place_label(buf, sizeof(buf), p, run_key);
    assert_string_equal(buf, want);
    json_decref(p);
}

static void test_place_label(void **state)
{
    (void)state;
    const char *pod = "{\"pin\":\"none\",\"kind\":\"pod\",\"pod\":\"web-0\","
                      "\"namespace\":\"default\",\"node\":\"n1\",\"container\":\"load\"}";
    char small[12];

    /* no container or pod: the run's own key */
    assert_placed(NULL, "process", "process");
    assert_placed("{\"pin\":\"none\"}", "netns other", "netns other");
    assert_placed("{\"pin\":\"none\"}", "", "");
    /* the pod named; the run's key after it unless it is "process" */
    assert_placed(pod, "process", "pod web-0 on node n1");
    assert_placed(pod, "", "pod web-0 on node n1");
    assert_placed(pod, "netns other", "pod web-0 on node n1, netns other");
    assert_placed("{\"kind\":\"pod\",\"pod\":\"web-0\",\"node\":null}", "process", "pod web-0");
    assert_placed("{\"kind\":\"container\",\"pod\":null,\"container\":\"load\"}", "process",
                  "container load");
    assert_placed("{\"kind\":\"container\",\"container\":null}", "process", "container");
    /* merged: each that names one, in order; one that does not is left out */
    assert_placed("{\"kind\":\"merged\",\"placements\":[{\"kind\":\"pod\",\"pod\":\"l-0\","
                  "\"node\":\"a\"},{\"pin\":\"none\"},{\"kind\":\"pod\",\"pod\":\"l-1\","
                  "\"node\":\"b\"}]}",
                  "process", "pod l-0 on node a + pod l-1 on node b");
    assert_placed("{\"kind\":\"merged\",\"placements\":[{\"pin\":\"none\"}]}", "netns same",
                  "netns same");
    /* cut to the room given, NUL-terminated */
    json_t *p = json_loads(pod, 0, NULL);
    assert_non_null(p);
    evidence_place_label(small, sizeof(small), p, "netns other");
    assert_string_equal(small, "pod web-0 o");
    json_decref(p);
}

/*
 * The figure encoders every writer calls: a count is its integer or
 * {"unavailable": why}, never 0; a gauge is {start, peak, end} in that order.
 */
static void test_figure_encoders(void **state)
{
    json_t *n = evidence_count_json(true, 7, ""), *u = evidence_count_json(false, 7, "no cgroup");
    json_t *g =
        evidence_gauge_json(evidence_count_json(true, 1, ""), evidence_count_json(true, 9, ""),
                            evidence_count_json(false, 0, "gone"));
    char *text;

    UNUSED(state);
    assert_true(json_is_integer(n) && json_integer_value(n) == 7);
    assert_true(json_is_object(u) && json_object_size(u) == 1);
    assert_string_equal(json_string_value(json_object_get(u, "unavailable")), "no cgroup");
    text = json_dumps(g, JSON_COMPACT);
    assert_non_null(text);
    assert_string_equal(text, "{\"start\":1,\"peak\":9,\"end\":{\"unavailable\":\"gone\"}}");
    free(text);
    json_decref(n);
    json_decref(u);
    json_decref(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_exact),
        cmocka_unit_test(test_round_trip_empty),
        cmocka_unit_test(test_merge_equals_hist_merge),
        cmocka_unit_test(test_encodings_decode_alike),
        cmocka_unit_test(test_string_smaller_than_lists),
        cmocka_unit_test(test_refuses_bad_runs),
        cmocka_unit_test(test_refuses_other_layouts),
        cmocka_unit_test(test_load_checks_schema),
        cmocka_unit_test(test_refuses_wrapping_counts),
        cmocka_unit_test(test_refuses_total_overflow),
        cmocka_unit_test(test_refuses_min_max_outside_counts),
        cmocka_unit_test(test_refuses_impossible_figures),
        cmocka_unit_test(test_no_nan_from_json),
        cmocka_unit_test(test_text_safe),
        cmocka_unit_test(test_read_document_layouts),
        cmocka_unit_test(test_jsonl_blank_and_cut_lines),
        cmocka_unit_test(test_key_order_labels),
        cmocka_unit_test(test_place_label),
        cmocka_unit_test(test_figure_encoders),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
