/*
 * test_plan: the runs a lab or a run plans from its command line, against the
 * fixtures in tests/fixtures/plan. Each fixture's first line is the command
 * line ("# lab --sizes 64,4096 --reps 2"), then one line per closed-loop run
 * in the order it is made (lab: size, mode, transport, rep; run: endpoint,
 * rep), then "runs N": how many runs the progress line plans, open-loop runs
 * included. Whatever the fixture says, every plan must also hold each cell
 * (lab) or endpoint (run) --reps times, rep by rep, in blocks that hold each
 * once.
 * Run from the top of the tree (HOPBENCH_FIXTURES names another fixtures root).
 */
/* cmocka.h needs these four first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "lab.h"
#include "run.h"

#include "fixture.h"

#define MAX_WORDS 16
#define TEXT_CAP  8192

/* The fixture tests/fixtures/plan/name, whole; the caller frees it. */
static char *fixture(const char *name)
{
    return fixture_read("plan", name);
}

/* The fixture's command line (its first line, after "# ") split into argv; returns argc. */
static int command_line(const char *text, char *buf, size_t cap, char **argv)
{
    const char *end = strchr(text, '\n');
    size_t len;
    int argc = 0;

    assert_true(strncmp(text, "# ", 2) == 0 && end != NULL);
    len = (size_t)(end - text - 2);
    assert_true(len < cap);
    memcpy(buf, text + 2, len);
    buf[len] = '\0';
    for (char *w = strtok(buf, " "); w != NULL; w = strtok(NULL, " ")) {
        assert_true(argc < MAX_WORDS);
        argv[argc++] = w;
    }
    return argc;
}

/* Appends a formatted line to out[TEXT_CAP]. */
static void say(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(char *out, const char *fmt, ...)
{
    size_t len = strlen(out);
    va_list ap;

    va_start(ap, fmt);
    assert_true(vsnprintf(out + len, TEXT_CAP - len, fmt, ap) < (int)(TEXT_CAP - len));
    va_end(ap);
}

static const char *const transport_names[] = { "tcp", "unix", "tcp-veth" };

/* The lab's plan as the fixtures write it; checks each block holds each transport once. */
static void lab_text(const struct lab_opts *o, char *out)
{
    size_t n = lab_plan_len(o);
    struct lab_step *steps = calloc(n, sizeof(*steps));
    unsigned nt = o->netns == NETNS_OTHER ? 3 : 2;

    assert_non_null(steps);
    lab_plan(o, steps);
    for (size_t i = 0; i < n; i++) {
        const struct lab_step *s = &steps[i];
        /* block i / nt of its cell holds every transport once, each at rep (i / nt) % reps */
        assert_int_equal(s->rep, (i / nt) % o->shared.reps);
        for (size_t j = i - i % nt; j < i; j++)
            assert_int_not_equal(steps[j].transport, s->transport);
        say(out, "%zu %s %s %u\n", o->sizes[s->size], s->mode == LOAD_CONNECT ? "connect" : "reuse",
            transport_names[s->transport], s->rep);
    }
    say(out, "runs %u\n", lab_planned_runs(o));
    free(steps);
}

/* The run's plan as the fixtures write it; checks each block holds each endpoint once. */
static void run_text(const struct run_opts *o, char *out)
{
    unsigned n = run_planned_runs(o), done[CLI_MAX_ENDPOINTS] = { 0 };
    unsigned *order = calloc(n, sizeof(*order));

    assert_non_null(order);
    assert_int_equal(n, o->neps * o->shared.reps);
    run_order(o, order);
    for (unsigned i = 0; i < n; i++) {
        assert_true(order[i] < o->neps);
        assert_int_equal(done[order[i]], i / o->neps);
        say(out, "%s %u\n", o->eps[order[i]].text, done[order[i]]++);
    }
    say(out, "runs %u\n", n);
    free(order);
}

/* The plan of fixture name's command line equals the rest of the fixture. */
static void check_plan(const char *name)
{
    static struct run_opts run;
    static struct lab_opts lab;
    char *text = fixture(name), buf[512], *argv[MAX_WORDS], out[TEXT_CAP] = "";
    int argc = command_line(text, buf, sizeof(buf), argv);
    struct hb_err err = { 0 };

    if (strcmp(argv[0], "lab") == 0) {
        memset(&lab, 0, sizeof(lab));
        if (cli_parse_lab(argc, argv, &lab, stdout, &err) != 0) fail_msg("%s: %s", name, err.msg);
        lab_text(&lab, out);
    } else {
        assert_string_equal(argv[0], "run");
        memset(&run, 0, sizeof(run));
        if (cli_parse_run(argc, argv, &run, stdout, &err) != 0) fail_msg("%s: %s", name, err.msg);
        run_text(&run, out);
    }
    if (strcmp(strchr(text, '\n') + 1, out) != 0) fail_msg("%s: the plan is\n%s", name, out);
    free(text);
}

/* The plan of the fixture named by *state (see the list in main). */
static void test_plan_fixture(void **state)
{
    check_plan(*state);
}

/* The fixtures (writable: a test's state is a void *), and what each shows. */
static char fixtures[][20] = {
    "lab-sizes",       /* two sizes: connect then reuse per size, tcp and unix ABBA over the reps */
    "lab-overload",    /* lab overload: connect cells alone */
    "lab-netns-other", /* --netns other: a third transport, tcp-veth, in the ABBA order of three */
    "lab-rates",       /* --rates: the same closed-loop plan; each step's open-loop runs counted */
    "run-abba",        /* run: two endpoints in ABBA order over --reps */
    "run-three",       /* three endpoints likewise */
    "run-random", /* --order random: each block shuffled by --seed, the same seed the same order */
};

int main(void)
{
    struct CMUnitTest tests[ARRAY_LEN(fixtures)];

    for (size_t i = 0; i < ARRAY_LEN(fixtures); i++) {
        tests[i] = (struct CMUnitTest)cmocka_unit_test_prestate(test_plan_fixture, fixtures[i]);
        tests[i].name = fixtures[i]; /* a failure names its fixture */
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
