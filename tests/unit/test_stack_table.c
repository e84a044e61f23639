/*
 * test_stack_table: the stack's table (stack_table, src/stack/measure.c) with
 * an agent's figures, written into a memory stream from hand-built cells: each
 * service's CPU per request as the agent read it (the median of each
 * transport's runs), its ratio to the local figure, "the agent gave none" for
 * a service the agent gave no figure of, and no agent row at all for a cell
 * measured without an agent. A figure some runs lack is the median of the
 * runs that have it, with how many they are after the row. The agent's rows of
 * one run (stack_agent_run_rows), as the fpm failure cases report each
 * transport's run, read from its record.
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

#include <jansson.h>

#include "stack/measure.h"
#include "stack/readings.h"

/* A cell "get pipeline 1" of two runs a transport, services redis and php-fpm. */
static void cell_make(struct stack_cell *c, bool agent)
{
    static const double local[2][2] = { { 10, 12 }, { 8, 9 } };
    static const double by_agent[2][2] = { { 10.5, 12.6 }, { 8.8, 9.9 } };

    stack_cell_init(c, "get pipeline 1", "tcp", "unix");
    snprintf(c->svc[0], sizeof(c->svc[0]), "redis");
    snprintf(c->svc[1], sizeof(c->svc[1]), "php-fpm");
    c->nsvc = 2;
    c->agent = agent;
    for (unsigned t = 0; t < 2; t++) {
        struct stack_arm *a = &c->arm[t];
        a->n = 2;
        for (unsigned r = 0; r < 2; r++) {
            a->ops_s[r] = 1000 + r;
            a->client_us[r] = 3;
            for (unsigned k = 0; k < STACK_MAX_SVC; k++) {
                a->svc_us[k][r] = k == 0 ? local[t][r] : k == 1 ? 4 : NAN;
                a->pss_mib[k][r] = a->ws_mib[k][r] = NAN;
                a->agent_us[k][r] = agent && k == 0 ? by_agent[t][r] : NAN;
            }
            a->sum_us[r] = a->system_us[r] = NAN;
            a->p50_us[r] = a->p99_us[r] = a->p999_us[r] = a->mean_us[r] = NAN;
            a->connect_us[r] = a->response_us[r] = a->close_us[r] = NAN; /* kept connections */
            a->machine_cpus[r] = a->other_cpus[r] = NAN;
            for (unsigned h = 0; h < STACK_HOP_FIGS; h++)
                a->hop[h][r] = a->hop_added[h][r] = 0;
        }
    }
}

/* The table of the one cell; the caller frees it. */
static char *render(const struct stack_cell *c)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    stack_table(f, c, 1);
    assert_int_equal(fclose(f), 0);
    assert_non_null(buf);
    return buf;
}

/* The line of text starting with "  " key and a space (NULL when none); points into text. */
static const char *row(const char *text, const char *key)
{
    char want[80];

    snprintf(want, sizeof(want), "\n  %s ", key);
    const char *p = strstr(text, want);
    return p == NULL ? NULL : p + 3 + strlen(key);
}

static void test_agent_rows(void **state)
{
    struct stack_cell c;
    double tcp, ux, lo, hi;
    char *text;
    const char *r;

    (void)state;
    cell_make(&c, true);
    text = render(&c);
    r = row(text, "agent CPU µs/req redis");
    assert_non_null(r);
    assert_int_equal(sscanf(r, "%lf %lf", &tcp, &ux), 2);
    assert_float_equal(tcp, 11.55, 1e-9); /* median of 10.5 and 12.6 */
    assert_float_equal(ux, 9.35, 1e-9);
    r = row(text, "agent CPU µs/req php-fpm");
    assert_non_null(r);
    assert_non_null(strstr(r, "n/a         n/a  the agent gave none\n"));
    r = row(text, "agent/local CPU redis");
    assert_non_null(r);
    assert_int_equal(sscanf(r, " %lf× %lf× runs %lf× to %lf×", &tcp, &ux, &lo, &hi), 4);
    assert_float_equal(tcp, 1.05, 1e-9);
    assert_float_equal(ux, 1.1, 1e-9);
    assert_float_equal(lo, 1.05, 1e-9);
    assert_float_equal(hi, 1.1, 1e-9);
    assert_null(row(text, "agent/local CPU php-fpm")); /* the agent gave none: nothing to check */
    assert_non_null(strstr(text, "\nagent CPU µs/req: "));
    free(text);
}

static void test_no_agent(void **state)
{
    struct stack_cell c;
    char *text;

    (void)state;
    cell_make(&c, false);
    text = render(&c);
    assert_non_null(row(text, "CPU µs/req redis"));
    assert_null(strstr(text, "agent"));
    free(text);
}

/* A run without the local figure is left out of the ratio, not counted as 0. */
static void test_ratio_needs_both(void **state)
{
    struct stack_cell c;
    double tcp;
    char ux[16];
    char *text;
    const char *r;

    (void)state;
    cell_make(&c, true);
    c.arm[0].svc_us[0][1] = NAN;
    c.arm[1].svc_us[0][0] = c.arm[1].svc_us[0][1] = NAN;
    text = render(&c);
    r = row(text, "agent/local CPU redis");
    assert_non_null(r);
    assert_int_equal(sscanf(r, " %lf× %15s", &tcp, ux), 2);
    assert_float_equal(tcp, 1.05, 1e-9);
    assert_string_equal(ux, "n/a");
    free(text);
}

/* A run without the figure is left out of the median, and the row says of how many it is. */
static void test_median_of_runs_that_have_it(void **state)
{
    struct stack_cell c;
    double tcp, ux;
    char *text;
    const char *r, *end;

    (void)state;
    cell_make(&c, true);
    c.arm[0].agent_us[0][1] = NAN;
    text = render(&c);
    r = row(text, "agent CPU µs/req redis");
    assert_non_null(r);
    assert_int_equal(sscanf(r, "%lf %lf", &tcp, &ux), 2);
    assert_float_equal(tcp, 10.5, 1e-9); /* the one run that has it */
    assert_float_equal(ux, 9.35, 1e-9);
    end = strchr(r, '\n');
    assert_non_null(end);
    assert_non_null(strstr(r, " [tcp: 1 of 2 runs]\n"));
    assert_true(strstr(r, " [tcp: 1 of 2 runs]\n") + strlen(" [tcp: 1 of 2 runs]") == end);
    r = row(text, "agent/local CPU redis");
    assert_non_null(r);
    assert_int_equal(sscanf(r, " %lf× %lf×", &tcp, &ux), 2);
    assert_float_equal(tcp, 1.05, 1e-9);
    assert_non_null(strstr(r, "runs 1.050× to 1.100× [tcp: 1 of 2 runs]\n"));
    r = row(text, "CPU µs/req redis"); /* every run has it: no note */
    assert_non_null(r);
    end = strchr(r, '\n');
    assert_non_null(end);
    assert_true(strstr(r, " runs]") == NULL || strstr(r, " runs]") > end);
    assert_null(strstr(text, "unix: 1 of"));
    free(text);
}

/* The row key of text holds one figure, followed by "×" when a ratio, equal to want. */
static void one_figure(const char *text, const char *key, bool ratio, double want)
{
    const char *r = row(text, key);
    double v;

    assert_non_null(r);
    assert_int_equal(ratio ? sscanf(r, " %lf×", &v) : sscanf(r, "%lf", &v), 1);
    assert_float_equal(v, want, 1e-9);
}

/* One run's agent rows, from its run view: the same names and figures as the table's. */
static void test_agent_run_rows(void **state)
{
    struct run_view v = { .valid = false, .agent = true, .nsvc = 2, .nagent = 2 };
    char *buf = NULL, *text;
    size_t len = 0;
    FILE *f;

    (void)state;
    v.svc[0] = (struct run_service){ "nginx", 10000.0, NAN, NAN };
    v.svc[1] = (struct run_service){ "php-fpm", 20000.0, NAN, NAN };
    v.agent_svc[0] = (struct run_service){ "nginx", 10500.0, NAN, NAN };
    v.agent_svc[1] = (struct run_service){ "php-fpm", NAN, NAN, NAN }; /* the agent gave none */
    v.sum_ns_per_op = v.system_ns_per_op = NAN;
    f = open_memstream(&buf, &len);
    assert_non_null(f);
    stack_agent_run_rows(f, &v);
    assert_int_equal(fclose(f), 0);
    assert_non_null(buf);
    text = calloc(1, len + 2); /* row() looks for "\n  NAME ": a newline before the first */
    assert_non_null(text);
    text[0] = '\n';
    memcpy(text + 1, buf, len);
    one_figure(text, "agent CPU µs/req nginx", false, 10.5);
    assert_non_null(strstr(row(text, "agent CPU µs/req php-fpm"), "n/a  the agent gave none\n"));
    one_figure(text, "agent/local CPU nginx", true, 1.05);
    assert_non_null(
        strstr(text, "\n  agent/local CPU nginx               1.050×\n")); /* as the table */
    assert_null(row(text, "agent/local CPU php-fpm"));
    free(text);
    free(buf);

    /* a run without the agent's evidence: no row */
    v.agent = false;
    v.nagent = 0;
    buf = NULL;
    f = open_memstream(&buf, &len);
    assert_non_null(f);
    stack_agent_run_rows(f, &v);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(len, 0);
    free(buf);
}

/*
 * The rows beside the study's figures: connections, p99.9 and mean, the noisy
 * runs, and each socket count with what the runs added, "12,478 (+2,001)"
 * (thousands separated, as every count): a count the measurement before left
 * is not this one's.
 */
static void test_rows(void **state)
{
    struct stack_cell c;
    char *text;
    const char *r;
    double tcp, ux;

    (void)state;
    cell_make(&c, false);
    for (unsigned t = 0; t < 2; t++) {
        c.arm[t].conns = 96;
        for (unsigned k = 0; k < 2; k++) {
            c.arm[t].p999_us[k] = t ? 9000 + k : 1010000 + k; /* the study's 9 ms and 1,010 ms */
            c.arm[t].mean_us[k] = t ? 700 : 900;
            c.arm[t].hop[STACK_TW_FRONT_SERVER][k] = t ? 0 : 12478;
            c.arm[t].hop_added[STACK_TW_FRONT_SERVER][k] = t ? 0 : 2000 + 2 * k; /* median 2001 */
            c.arm[t].hop[STACK_TW_FRONT_CLIENT][k] = t ? 0 : 3000;
            c.arm[t].hop_added[STACK_TW_FRONT_CLIENT][k] = t ? 0 : -1500; /* fewer than before */
        }
    }
    c.arm[0].noisy = 1;
    text = render(&c);
    r = row(text, "connections");
    assert_non_null(r);
    assert_int_equal(sscanf(r, "%lf %lf", &tcp, &ux), 2);
    assert_true(tcp == 96 && ux == 96);
    r = row(text, "latency p99.9 µs"); /* thousands separated, as every text figure */
    assert_non_null(r);
    assert_non_null(strstr(r, "1,010,000.5"));
    assert_non_null(strstr(r, "9,000.5"));
    one_figure(text, "latency mean µs", false, 900);
    r = row(text, "noisy runs");
    assert_non_null(r);
    assert_int_equal(sscanf(r, "%lf %lf", &tcp, &ux), 2);
    assert_true(tcp == 1 && ux == 0);
    r = row(text, "TIME_WAIT front, server side");
    assert_non_null(r);
    assert_non_null(strstr(r, "12,478 (+2,001)      0 (+0)\n"));
    r = row(text, "TIME_WAIT front, client side");
    assert_non_null(r);
    assert_non_null(strstr(r, "3,000 (-1,500)      0 (+0)\n"));
    free(text);
}

/* A connect-mode cell: tcp's phases and unix's, means per request over two runs each. */
static void connect_cell(struct stack_cell *c)
{
    static const double ph[2][3] = { { 30, 10, 50 }, { 5, 3, 48 } }; /* connect, close, response */

    cell_make(c, false);
    for (unsigned t = 0; t < 2; t++)
        for (unsigned r = 0; r < 2; r++) {
            c->arm[t].connect_us[r] = ph[t][0] + r; /* medians: 30.5 + 10.5, 5.5 + 3.5 */
            c->arm[t].close_us[r] = ph[t][1] + r;
            c->arm[t].response_us[r] = ph[t][2];
        }
}

/*
 * The lifecycle's share of the saving is the phases' arithmetic: connect +
 * close against the transfer, tcp - unix, medians of the runs' means.
 */
static void test_lifecycle(void **state)
{
    struct stack_cell c;
    struct stack_lifecycle l;
    char *text;

    (void)state;
    connect_cell(&c);
    assert_int_equal(stack_lifecycle_of(&c, &l), 0);
    assert_float_equal(l.life[0], 41, 1e-9);
    assert_float_equal(l.life[1], 9, 1e-9);
    assert_float_equal(l.saved, (41 + 50) - (9 + 48), 1e-9);
    assert_float_equal(l.saved_life, 32, 1e-9);
    assert_float_equal(l.share, 32.0 / 34.0, 1e-9);
    text = render(&c);
    assert_non_null(strstr(text, "tcp connect + close 41.0, transfer 50.0; unix connect + close "
                                 "9.0, transfer 48.0\n"));
    assert_non_null(strstr(text, "the socket saves 34.0 µs per request: the lifecycle 32.0 (94 %), "
                                 "the transfer 2.0 (6 %)\n"));
    free(text);
    /* kept connections: no share, and a line saying why */
    cell_make(&c, false);
    assert_int_equal(stack_lifecycle_of(&c, &l), -ENOENT);
    text = render(&c);
    assert_non_null(strstr(text, "  lifecycle: every connection kept for the run"));
    free(text);
    /* the socket saving nothing: no share to give */
    connect_cell(&c);
    for (unsigned r = 0; r < 2; r++)
        c.arm[1].response_us[r] = 200;
    assert_int_equal(stack_lifecycle_of(&c, &l), 0);
    assert_true(isnan(l.share));
}

/* The pod study's arithmetic: connect-mode CPU less kept CPU on each transport. */
static void test_lifecycle_cpu(void **state)
{
    struct stack_cell kept, connect;
    char *buf = NULL;
    size_t len = 0;
    FILE *f;

    (void)state;
    cell_make(&kept, false);
    cell_make(&connect, false);
    for (unsigned r = 0; r < 2; r++) {
        kept.arm[0].sum_us[r] = 63.9; /* the pod study's Apache + FPM, kept */
        kept.arm[1].sum_us[r] = 60.7;
        connect.arm[0].sum_us[r] = 97.2; /* and with a connection per request */
        connect.arm[1].sum_us[r] = 72.7;
    }
    f = open_memstream(&buf, &len);
    assert_non_null(f);
    stack_lifecycle_cpu_print(f, &kept, &connect, true);
    assert_int_equal(fclose(f), 0);
    /* 33.3 and 12.0 us; of 24.5 saved, 21.3: 87 % */
    assert_non_null(strstr(buf, "tcp 33.3 µs, unix 12.0 µs; of the 24.5 µs the socket saves with "
                                "a connection per request, 21.3 (87 %)\n"));
    free(buf);
}

/* A system figure below the sum of the parts it holds is printed with the reason, else not. */
static void test_system_below_parts(void **state)
{
    struct stack_cell c;
    char *text;

    (void)state;
    cell_make(&c, false);
    for (unsigned t = 0; t < 2; t++)
        for (unsigned r = 0; r < 2; r++) {
            c.arm[t].sum_us[r] = 20;
            c.arm[t].system_us[r] = t ? 25 : 15;
        }
    snprintf(c.arm[0].sys_source, sizeof(c.arm[0].sys_source), "idle");
    text = render(&c);
    assert_non_null(strstr(text, "\n  (tcp: system 15.00 below client + services 20.00: the "
                                 "machine's idle time is counted to a tick per CPU"));
    assert_null(strstr(text, "(unix: system"));
    free(text);
}

/* What saturated: the machine, else the client's threads, else a service on a whole CPU. */
static void test_busy(void **state)
{
    struct stack_cell c;
    struct stack_busy b;
    char *text;

    (void)state;
    cell_make(&c, false);
    for (unsigned t = 0; t < 2; t++) {
        c.arm[t].cpus = 2;
        c.arm[t].threads = 1;
        c.arm[t].conns = 50;
        for (unsigned r = 0; r < 2; r++) {
            c.arm[t].ops_s[r] = 100000;
            c.arm[t].client_us[r] = 3;           /* 0.3 CPU */
            c.arm[t].svc_us[0][r] = t ? 9.6 : 5; /* redis: 0.96 CPU over unix, 0.5 over tcp */
            c.arm[t].svc_us[1][r] = 1;
            c.arm[t].machine_cpus[r] = t ? 1.5 : 1.95;
            c.arm[t].other_cpus[r] = 0.1;
        }
    }
    assert_int_equal(stack_busy_of(&c, &c.arm[0], &b), 0);
    assert_int_equal(b.what, STACK_SAT_MACHINE);
    assert_float_equal(b.client, 0.3, 1e-9);
    assert_float_equal(b.svc[0], 0.5, 1e-9);
    assert_int_equal(stack_busy_of(&c, &c.arm[1], &b), 0);
    assert_int_equal(b.what, STACK_SAT_SERVICE);
    assert_string_equal(c.svc[b.svc_at], "redis");
    text = render(&c);
    assert_non_null(strstr(text, "  load tcp: 50 connection(s), 1 client thread(s); busy, CPUs "
                                 "(medians): machine 1.95 of 2, client 0.30, redis 0.50, php-fpm "
                                 "0.10, other processes and steal 0.10\n    saturated: the "
                                 "machine (its 2 CPUs 98 % busy; the most: redis)\n"));
    assert_non_null(strstr(text, "    saturated if it serves on one thread: redis on a whole CPU "
                                 "(0.96); the machine had 0.50 CPU idle\n"));
    free(text);
    for (unsigned r = 0; r < 2; r++) {
        c.arm[1].svc_us[0][r] = 1;
        c.arm[1].client_us[r] = 9.5; /* 0.95 CPU: its one thread */
    }
    assert_int_equal(stack_busy_of(&c, &c.arm[1], &b), 0);
    assert_int_equal(b.what, STACK_SAT_CLIENT);
    for (unsigned r = 0; r < 2; r++)
        c.arm[1].client_us[r] = 1;
    assert_int_equal(stack_busy_of(&c, &c.arm[1], &b), 0);
    assert_int_equal(b.what, STACK_SAT_NONE);
    c.arm[1].n = 0;
    assert_int_equal(stack_busy_of(&c, &c.arm[1], &b), -ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agent_rows),
        cmocka_unit_test(test_no_agent),
        cmocka_unit_test(test_ratio_needs_both),
        cmocka_unit_test(test_median_of_runs_that_have_it),
        cmocka_unit_test(test_agent_run_rows),
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_lifecycle),
        cmocka_unit_test(test_lifecycle_cpu),
        cmocka_unit_test(test_system_below_parts),
        cmocka_unit_test(test_busy),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
