/*
 * test_stack_read: a stack's run child's JSONL file read once
 * (stack_child_read, src/stack/measure.c) through evidence_read and the run
 * view: the real run of tests/fixtures/evidence/run-view.jsonl into a cell's
 * two arms, priced, its last run kept; a file with a line that is not JSON,
 * or with a run that lacks a key every run has, is an error naming the file
 * and the line (the runs before it are read), not a skipped line.
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

#include <jansson.h>

#include "fixture.h"
#include "stack/measure.h"

/* A temporary file holding text; its path into path (64 bytes). */
static void temp_file(char *path, const char *text)
{
    int fd;

    snprintf(path, 64, "/tmp/test_stack_read.XXXXXX");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

/* The fixture's lines: header, the tcp run, the unix run (each with its '\n'). */
static char *fixture_line(const char *all, unsigned k)
{
    const char *p = all;
    const char *nl;

    for (unsigned i = 0; i < k; i++)
        p = strchr(p, '\n') + 1;
    nl = strchr(p, '\n');
    return strndup(p, (size_t)(nl - p + 1));
}

static void test_fixture_read(void **state)
{
    char *text = fixture_read("evidence", "run-view.jsonl"), path[64];
    struct stack_cell cell;
    struct cost_set set = { 0 };
    struct hb_err err = { 0 };
    struct stack_child_read r = { .arm = -1, .cost = &set, .keep_last = true };

    (void)state;
    temp_file(path, text);
    stack_cell_init(&cell, "web", "tcp", "unix");
    r.path = path;
    r.cell = &cell;
    assert_int_equal(stack_child_read(&r, &err), 0);
    assert_int_equal(r.line, 3);
    assert_int_equal(cell.arm[0].n, 1);
    assert_int_equal(cell.arm[1].n, 1);
    assert_float_equal(cell.arm[0].ops_s[0], 22530.0, 1e-9);
    assert_float_equal(cell.arm[1].p99_us[0], 40.767, 1e-9);
    assert_float_equal(cell.arm[0].connect_us[0], 14.985858854860186, 1e-9);
    assert_int_equal(cell.nsvc, 1);
    assert_string_equal(cell.svc[0], "web");
    assert_int_equal(cell.arm[0].noisy, 1);
    assert_float_equal(cell.arm[0].hop[STACK_TW_FRONT_SERVER][0], 7428, 0);
    assert_float_equal(cell.arm[1].hop[STACK_TW_FRONT_SERVER][0], 0, 0); /* no TIME_WAIT */
    assert_int_equal(r.cost_rc, 0);
    assert_true(set.ncells > 0);
    assert_non_null(r.last);
    assert_int_equal(json_integer_value(json_object_get(r.last, "cell")), 1);
    json_decref(r.last);
    cost_set_release(&set);
    unlink(path);
    free(text);
}

/* The fixture with its line k (1: the header) replaced by bad; the error names path and k. */
static void bad_line(unsigned k, const char *bad, const char *why)
{
    char *text = fixture_read("evidence", "run-view.jsonl"), *mixed, path[64], want[96];
    struct stack_cell cell;
    struct hb_err err = { 0 };
    struct stack_child_read r = { .arm = -1 };
    size_t len = strlen(text) + strlen(bad) + 1;

    mixed = calloc(1, len);
    assert_non_null(mixed);
    for (unsigned i = 0; i < 3; i++) {
        char *l = i + 1 == k ? strdup(bad) : fixture_line(text, i);
        strcat(mixed, l);
        free(l);
    }
    temp_file(path, mixed);
    stack_cell_init(&cell, "web", "tcp", "unix");
    r.path = path;
    r.cell = &cell;
    assert_int_equal(stack_child_read(&r, &err), -EINVAL);
    snprintf(want, sizeof(want), "%s: line %u: ", path, k);
    assert_non_null(strstr(err.msg, want));
    assert_non_null(strstr(err.msg, why));
    /* the runs before the bad line were read */
    assert_int_equal(cell.arm[0].n + cell.arm[1].n, k - 2);
    unlink(path);
    free(mixed);
    free(text);
}

static void test_not_json(void **state)
{
    (void)state;
    bad_line(3, "{\"record\": \"run\", \"cell\": 1,\n", "not JSON");
    bad_line(2, "garbage\n", "not JSON");
}

static void test_run_without_key(void **state)
{
    char *text = fixture_read("evidence", "run-view.jsonl"), *line = fixture_line(text, 2);
    json_t *run = json_loads(line, 0, NULL);
    char *bad;

    (void)state;
    assert_non_null(run);
    json_object_del(run, "valid");
    bad = json_dumps(run, JSON_COMPACT);
    bad = realloc(bad, strlen(bad) + 2);
    strcat(bad, "\n");
    bad_line(3, bad, "not valid evidence: a run without \"valid\"");
    free(bad);
    json_decref(run);
    free(line);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_read),
        cmocka_unit_test(test_not_json),
        cmocka_unit_test(test_run_without_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
