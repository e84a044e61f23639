/*
 * test_csv: the CSV writer (report/csv.c). One row per run with every
 * source's name; fields that hold a comma, quote or line break quoted
 * (RFC 4180), a leading = + - @ defused; a figure a run lacks or has as
 * {"unavailable": ...} an empty field; the columns only some runs have (error
 * kinds, phases, services) present in every row; a write error reported;
 * the kernel's counters read under their netstat names; the CSV of a real
 * run's evidence (tests/fixtures/evidence/run-view.jsonl) byte for byte
 * tests/fixtures/evidence/run-view.csv.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evidence.h"
#include "report/csv.h"
#include "util.h"

/* The CSV of the sources, in a malloc'd string. */
static char *csv_of(const struct csv_source *src, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    assert_int_equal(report_csv(f, src, n), 0);
    assert_int_equal(fclose(f), 0);
    return buf;
}

/* Field number col (0-based) of line number row (0 = the header), unquoted fields only. */
static void field(const char *csv, int row, int col, char *out, size_t cap)
{
    const char *p = csv;
    size_t len;

    for (int r = 0; r < row; r++) {
        p = strstr(p, "\r\n");
        assert_non_null(p);
        p += 2;
    }
    for (int c = 0; c < col; c++) {
        p = strpbrk(p, ",\r");
        assert_true(p != NULL && *p == ',');
        p++;
    }
    len = strcspn(p, ",\r");
    assert_true(len < cap);
    memcpy(out, p, len);
    out[len] = '\0';
}

/* The 0-based number of the header's column name, or -1. */
static int column(const char *csv, const char *name)
{
    char f[128];
    size_t header = (size_t)(strstr(csv, "\r\n") - csv);
    int n = 0;

    for (const char *p = csv; p < csv + header; p++)
        n += *p == ',';
    for (int c = 0; c <= n; c++) {
        field(csv, 0, c, f, sizeof(f));
        if (strcmp(f, name) == 0) return c;
    }
    return -1;
}

static int count_lines(const char *csv)
{
    int n = 0;

    for (const char *p = csv; (p = strstr(p, "\r\n")) != NULL; p += 2)
        n++;
    return n;
}

/* Row row's field in the column named name is want. */
static void expect_field(const char *csv, int row, const char *name, const char *want)
{
    char f[128];
    int col = column(csv, name);

    assert_true(col >= 0);
    field(csv, row, col, f, sizeof(f));
    assert_string_equal(f, want);
}

static json_t *runs_of(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);

    assert_non_null(j);
    return j;
}

static void test_rows_and_figures(void **state)
{
    json_t *a =
        runs_of("[{\"cell\":0,\"rep\":0,\"proto\":\"echo\",\"endpoint\":\"tcp://127.0.0.1:1\","
                "\"transport\":\"tcp\",\"ops\":1000,\"ops_per_s\":0.3,\"valid\":true,"
                "\"latency_ns\":{\"p50\":5971,\"mean\":12789.5},"
                "\"observed\":{\"cpu\":{\"server_ns_per_op\":{\"unavailable\":\"no\"}}}},"
                "{\"cell\":1,\"rep\":0,\"proto\":\"echo\",\"transport\":\"unix\","
                "\"ops\":7,\"valid\":false}]");
    struct csv_source src = { "a.json", a, NULL };
    char *csv = csv_of(&src, 1);

    (void)state;
    assert_int_equal(count_lines(csv), 3);
    assert_int_equal(column(csv, "source"), 0);
    expect_field(csv, 1, "source", "a.json");
    expect_field(csv, 1, "ops", "1000");
    expect_field(csv, 2, "ops", "7");
    expect_field(csv, 1, "ops_per_s", "0.3"); /* the shortest form that reads back the same */
    expect_field(csv, 1, "latency_mean_ns", "12789.5");
    expect_field(csv, 1, "valid", "true");
    expect_field(csv, 2, "valid", "false");
    /* unavailable, and missing: empty */
    expect_field(csv, 1, "server_cpu_ns_per_op", "");
    expect_field(csv, 2, "latency_p50_ns", "");
    free(csv);
    json_decref(a);
}

static void test_quoting(void **state)
{
    json_t *a =
        runs_of("[{\"proto\":\"echo\",\"label\":\"=1+1\",\"endpoint\":\"unix:/a,b\\\"c\"}]");
    struct csv_source src = { "x", a, NULL };
    char *csv = csv_of(&src, 1);

    (void)state;
    assert_non_null(strstr(csv, ",'=1+1,"));
    assert_non_null(strstr(csv, ",\"unix:/a,b\"\"c\","));
    free(csv);
    json_decref(a);
}

/* Error kinds, phases and services some runs lack: a column each, empty where absent. */
static void test_extra_columns(void **state)
{
    json_t *a = runs_of("[{\"errors\":{\"reset\":2},\"phases\":{\"connect\":{\"latency_ns\":"
                        "{\"p50\":11,\"p99\":13}}}}]");
    json_t *b = runs_of("[{\"errors\":{\"timeout\":4},\"observed\":{\"services\":"
                        "[{\"name\":\"fpm\",\"cpu_ns_per_op\":900,\"pss_end\":4096}]}}]");
    struct csv_source src[] = { { "a", a, NULL }, { "b", b, NULL } };
    char *csv = csv_of(src, 2);

    (void)state;
    assert_int_equal(count_lines(csv), 3);
    assert_true(column(csv, "errors_reset") > 0);
    assert_true(column(csv, "errors_timeout") > column(csv, "errors_reset"));
    expect_field(csv, 1, "errors_reset", "2");
    expect_field(csv, 1, "errors_timeout", "");
    expect_field(csv, 2, "errors_timeout", "4");
    expect_field(csv, 1, "phase_connect_p99_ns", "13");
    expect_field(csv, 2, "phase_connect_p50_ns", "");
    expect_field(csv, 2, "service_fpm_cpu_ns_per_op", "900");
    expect_field(csv, 2, "service_fpm_working_set_end_bytes", "");
    expect_field(csv, 2, "service_fpm_pss_end_bytes", "4096"); /* bytes, as the evidence */
    expect_field(csv, 1, "service_fpm_pss_end_bytes", "");
    expect_field(csv, 2, "source", "b");
    free(csv);
    json_decref(a);
    json_decref(b);
}

/*
 * A stack's arms: transport is the hop under test, the arm the label names
 * (nginx-fpm's unix arm: the client reaches nginx over TCP, nginx php-fpm over
 * a socket), client_transport what the client connected over; wait, the
 * document's pin, the window's start in UTC, the server's memory in bytes.
 */
static void test_stack_arms(void **state)
{
    json_t *doc = runs_of("{\"placement\":{\"pin\":\"split\"},\"runs\":["
                          "{\"label\":\"hello-php.unix\",\"transport\":\"tcp\",\"wait\":\"block\","
                          "\"window_start_unix_s\":1700000000.1234,"
                          "\"observed\":{\"memory\":{\"server_pss_end\":2048,"
                          "\"cgroup_working_set_end\":{\"unavailable\":\"no cgroup\"}}}},"
                          "{\"label\":\"hello-php.tcp\",\"transport\":\"tcp\",\"wait\":\"epoll\","
                          "\"window_start_unix_s\":1700000000.9996},"
                          "{\"label\":\"front\",\"transport\":\"unix\"},"
                          "{\"label\":\".unix\",\"transport\":\"tcp-veth\"}]}");
    struct csv_source src = { "s", json_object_get(doc, "runs"), doc };
    char *csv = csv_of(&src, 1);

    (void)state;
    expect_field(csv, 1, "transport", "unix");
    expect_field(csv, 1, "client_transport", "tcp");
    expect_field(csv, 2, "transport", "tcp");
    expect_field(csv, 3, "transport", "unix");     /* any other label: the run's own */
    expect_field(csv, 4, "transport", "tcp-veth"); /* no NAME before the arm */
    expect_field(csv, 1, "wait", "block");
    expect_field(csv, 2, "wait", "epoll");
    expect_field(csv, 1, "pin", "split");
    expect_field(csv, 3, "pin", "split");
    expect_field(csv, 1, "start", "2023-11-14T22:13:20.123Z");
    expect_field(csv, 2, "start", "2023-11-14T22:13:21.000Z"); /* 999.6 ms rounds up a second */
    expect_field(csv, 3, "start", "");
    expect_field(csv, 1, "server_pss_end_bytes", "2048");
    expect_field(csv, 1, "cgroup_working_set_end_bytes", "");
    assert_true(column(csv, "start") < column(csv, "proto"));
    assert_true(column(csv, "client_transport") == column(csv, "transport") + 1);
    free(csv);
    json_decref(doc);
}

/*
 * The kernel's counters: net_delta names each by its netstat name, dot
 * included ("TcpExt.ListenOverflows"), which a dotted path split in two and so
 * always left empty.
 */
static void test_net_delta(void **state)
{
    json_t *a = runs_of("[{\"observed\":{\"net_delta\":{\"TcpExt.ListenOverflows\":3,"
                        "\"TcpExt.TCPSynRetrans\":5}}},{\"observed\":{\"net_delta\":"
                        "{\"TcpExt.ListenOverflows\":{\"unavailable\":\"no netstat\"}}}}]");
    struct csv_source src = { "a", a, NULL };
    char *csv = csv_of(&src, 1);

    (void)state;
    expect_field(csv, 1, "listen_overflows", "3");
    expect_field(csv, 1, "syn_retrans", "5");
    expect_field(csv, 2, "listen_overflows", "");
    expect_field(csv, 2, "syn_retrans", "");
    free(csv);
    json_decref(a);
}

static int keep(void *ctx, size_t idx, json_t *run, struct hb_err *err)
{
    UNUSED(idx);
    UNUSED(err);
    return json_array_append(ctx, run) == 0 ? 0 : -ENOMEM;
}

/* tests/fixtures/evidence/NAME's text, malloc'd. */
static char *fixture_text(const char *name, size_t *len)
{
    const char *root = getenv("HOPBENCH_FIXTURES");
    char path[512], *text;
    FILE *f;
    long n;

    snprintf(path, sizeof(path), "%s/evidence/%s", root != NULL ? root : "tests/fixtures", name);
    f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    text = malloc((size_t)n + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return text;
}

/*
 * A real run's evidence (connect mode, phases, a service, a watched hop, error
 * kinds, labels, integers and reals, unavailable figures): every byte as
 * run-view.csv holds it, which is `hopbench report run-view.jsonl --csv` of the
 * writer that read paths of key literals, but for listen_overflows and
 * syn_retrans, which that one left empty (test_net_delta).
 */
static void test_fixture_bytes(void **state)
{
    const char *root = getenv("HOPBENCH_FIXTURES");
    char path[512], *csv, *want;
    json_t *runs = json_array(), *head = NULL;
    struct evidence_reader r = { .take = keep, .ctx = runs };
    struct hb_err err = { 0 };
    struct csv_source src;
    size_t len;

    UNUSED(state);
    snprintf(path, sizeof(path), "%s/evidence/run-view.jsonl",
             root != NULL ? root : "tests/fixtures");
    assert_int_equal(evidence_read(path, &r, &head, &err), 0);
    src = (struct csv_source){ "run-view.jsonl", runs, head };
    csv = csv_of(&src, 1);
    want = fixture_text("run-view.csv", &len);
    assert_int_equal(strlen(csv), len);
    assert_string_equal(csv, want);
    free(csv);
    free(want);
    json_decref(runs);
    json_decref(head);
}

static void test_write_error(void **state)
{
    json_t *a = runs_of("[{\"ops\":1}]");
    struct csv_source src = { "a", a, NULL };
    FILE *f = fopen("/dev/full", "w");

    (void)state;
    if (f == NULL) skip();
    assert_int_equal(report_csv(f, &src, 1), -EIO);
    fclose(f);
    json_decref(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_and_figures), cmocka_unit_test(test_quoting),
        cmocka_unit_test(test_extra_columns),    cmocka_unit_test(test_stack_arms),
        cmocka_unit_test(test_write_error),      cmocka_unit_test(test_fixture_bytes),
        cmocka_unit_test(test_net_delta),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
