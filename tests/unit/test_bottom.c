/*
 * test_bottom: the bottom line (report/bottom.c) from hand-built run records:
 * cells and arms (the lab's size and mode; run's labels NAME.tcp, NAME.unix;
 * tcp as the base whatever the order), the verdicts and their words, the
 * figures the summaries give for the same runs and seed, the cost sentence
 * only for a significant CPU difference, the noisy count, the evidence's
 * object read back to the same text, and colour only when asked.
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

#include "report/bottom.h"
#include "report/summary.h"

#define RECS_MAX 24

struct recs {
    struct run_record r[RECS_MAX];
    size_t n;
};

/*
 * A run on ep (label "" for none) of ops ops in 1 s, every latency lat_ns,
 * client and server CPU ns per op; noisy or not.
 */
static struct run_record *rec_add(struct recs *rs, const char *ep, const char *label, uint64_t ops,
                                  uint64_t lat_ns, uint64_t cli_ns, uint64_t srv_ns, bool noisy)
{
    struct run_record *r;
    struct hb_err err = { 0 };

    assert_true(rs->n < RECS_MAX);
    r = &rs->r[rs->n];
    memset(r, 0, sizeof(*r));
    r->proto = "echo";
    assert_int_equal(endpoint_parse(&r->cfg.ep, ep, &err), 0);
    snprintf(r->cfg.ep.label, sizeof(r->cfg.ep.label), "%s", label);
    r->cfg.mode = LOAD_REUSE;
    r->cfg.size = 64;
    r->res.ops = ops;
    r->res.window_ns = 1000000000;
    r->res.client_cpu_ns = cli_ns * ops;
    r->res.lat = hist_new();
    assert_non_null(r->res.lat);
    for (uint64_t i = 0; i < 100; i++)
        hist_record(r->res.lat, lat_ns);
    r->observed = true;
    r->obs.server_cpu_ns = (struct ctr_val){ .ok = true, .v = srv_ns * ops };
    r->obs.other = (struct obs_other){ .decided = true, .noisy = noisy, .threshold_cpus = 0.1 };
    rs->n++;
    return r;
}

static void recs_free(struct recs *rs)
{
    for (size_t i = 0; i < rs->n; i++)
        hist_free(rs->r[i].res.lat);
}

/* Five runs a side, tcp and unix in ABBA order; unix twice the ops/s at half the cost. */
static void faster_unix(struct recs *rs, const char *tcp_label, const char *unix_label)
{
    for (unsigned i = 0; i < 5; i++) {
        bool tcp_first = i % 2 == 0;
        for (unsigned k = 0; k < 2; k++) {
            if ((k == 0) == tcp_first)
                rec_add(rs, "tcp://127.0.0.1:9000", tcp_label, 10000 + 100 * i, 50000 + 1000 * i,
                        20000 + 100 * i, 18000 + 100 * i, i == 0);
            else
                rec_add(rs, "unix:/tmp/x.sock", unix_label, 20000 + 100 * i, 40000 + 1000 * i,
                        10000 + 100 * i, 9000 + 100 * i, false);
        }
    }
}

static char *print_text(const struct bottom_line *b, bool colour)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    bottom_print(f, b, colour, "-v lists them");
    assert_int_equal(fclose(f), 0);
    return buf;
}

/* b's evidence object dumped and read back: its first row's verdict is verdict, and it prints text.
 */
static void assert_round_trip(const struct bottom_line *b, const char *text, const char *verdict)
{
    json_t *j = bottom_json(b);
    char *dumped = json_dumps(j, JSON_REAL_PRECISION(17)), *again;
    struct bottom_line back;

    json_decref(j);
    j = json_loads(dumped, 0, NULL);
    free(dumped);
    assert_int_equal(bottom_from_json(j, &back), 0);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(j, "rows"), 0), "verdict")),
                        verdict);
    again = print_text(&back, false);
    assert_string_equal(text, again);
    free(again);
    json_decref(j);
    bottom_release(&back);
}

static void assert_has(const char *text, const char *want)
{
    if (strstr(text, want) == NULL) fail_msg("missing \"%s\" in:\n%s", want, text);
}

static const struct bottom_row *row_of(const struct bottom_line *b, enum bottom_fig fig,
                                       const char *who)
{
    for (size_t i = 0; i < b->nrows; i++)
        if (b->rows[i].fig == fig && strcmp(b->rows[i].who, who) == 0) return &b->rows[i];
    fail_msg("no row for figure %d %s", fig, who);
    return NULL;
}

static void test_lab_better(void **state)
{
    struct recs rs = { 0 };
    struct bottom_line b;
    char words[320];
    char *text;

    (void)state;
    faster_unix(&rs, "", "");
    assert_int_equal(bottom_compute(rs.r, rs.n, BOTTOM_BY_LAB, 7, &b), 0);
    /* ops/s, p50, p99, client CPU, server CPU */
    assert_int_equal(b.nrows, 5);
    for (size_t i = 0; i < b.nrows; i++) {
        assert_string_equal(b.rows[i].cell, "64 B reuse");
        assert_string_equal(b.rows[i].base, "tcp");
        assert_string_equal(b.rows[i].arm, "unix");
        assert_int_equal(b.rows[i].verdict, BOTTOM_BETTER);
        assert_int_equal(b.rows[i].n_base, 5);
    }
    assert_true(fabs(row_of(&b, BOTTOM_OPS, "")->base_median - 10200) < 1e-9);
    assert_true(fabs(row_of(&b, BOTTOM_OPS, "")->arm_median - 20200) < 1e-9);
    bottom_words(words, sizeof(words), row_of(&b, BOTTOM_OPS, ""));
    assert_has(words, "better: unix ran 1.98× [");
    assert_has(words, "] the ops/s of tcp (p=0.0079, n=5+5)");
    bottom_words(words, sizeof(words), row_of(&b, BOTTOM_CPU, "server"));
    assert_has(words, "better: unix used 0.51× [");
    assert_has(words, "the server CPU of tcp");
    /* the cost of the client and the server together, saved by unix */
    assert_int_equal(b.ncosts, 1);
    assert_true(b.costs[0].priced);
    assert_true(b.costs[0].saved_ns > 18000 && b.costs[0].saved_ns < 20000);
    assert_true(b.costs[0].saved_lo_ns <= b.costs[0].saved_ns);
    assert_true(b.costs[0].saved_hi_ns >= b.costs[0].saved_ns);
    assert_true(fabs(b.costs[0].rate - 1e9 / b.costs[0].saved_ns) < 1e-6);
    assert_string_equal(b.costs[0].who, "client + server");
    assert_int_equal(b.runs, 10);
    assert_int_equal(b.noisy, 1);
    text = print_text(&b, false);
    assert_has(text, "bottom line: unix against tcp");
    assert_has(text, "  64 B reuse  ops/s");
    assert_has(text, "10,200    20,200  better: unix ran");
    assert_has(text, "cost 64 B reuse: unix saves ");
    assert_has(text, "] of CPU per request (client + server): one vCPU saved at ");
    assert_has(text, "1 of 10 runs noisy (other processes' CPU + steal above 0.10 CPU); noisy "
                     "runs still count; -v lists them");
    assert_null(strstr(text, "\033["));
    free(text);
    text = print_text(&b, true);
    assert_has(text, "\033[32mbetter: unix ran");
    free(text);
    bottom_release(&b);
    recs_free(&rs);
}

/* The bottom line's figures are the summary's for the same runs and seed. */
static void test_same_as_summary(void **state)
{
    struct recs rs = { 0 };
    struct bottom_line b;
    struct cell_summary cells[2];
    static const enum summary_metric m[] = { METRIC_OPS_PER_S, METRIC_P50, METRIC_P99,
                                             METRIC_CPU_PER_OP };
    static const enum bottom_fig fig[] = { BOTTOM_OPS, BOTTOM_P50, BOTTOM_P99, BOTTOM_CPU };

    (void)state;
    faster_unix(&rs, "", "");
    for (size_t i = 0; i < rs.n; i++)
        rs.r[i].cell = strcmp(report_transport(&rs.r[i]), "tcp") == 0 ? 0 : 1;
    assert_int_equal(summary_compute(rs.r, rs.n, 2, 7, cells), 0);
    assert_int_equal(bottom_compute(rs.r, rs.n, BOTTOM_BY_LAB, 7, &b), 0);
    for (size_t i = 0; i < ARRAY_LEN(m); i++) {
        const struct bottom_row *r = row_of(&b, fig[i], fig[i] == BOTTOM_CPU ? "client" : "");
        const struct stats_delta *d = &cells[1].vs_first[m[i]];
        assert_true(r->ratio == d->ratio && r->lo == d->lo && r->hi == d->hi && r->p == d->p);
        assert_true(r->base_median == cells[0].m[m[i]].median);
        assert_true(r->arm_median == cells[1].m[m[i]].median);
    }
    bottom_release(&b);
    recs_free(&rs);
}

/* The same runs on both sides: no significant difference, said so, and nothing priced. */
static void test_not_significant(void **state)
{
    struct recs rs = { 0 };
    struct bottom_line b;
    char words[320];
    char *text;

    (void)state;
    for (unsigned i = 0; i < 5; i++) {
        rec_add(&rs, "tcp://127.0.0.1:9000", "", 10000 + 100 * i, 50000, 20000 + 300 * i, 18000,
                false);
        rec_add(&rs, "unix:/tmp/x.sock", "", 10050 + 100 * i, 50000, 20100 + 300 * i, 18000, false);
    }
    assert_int_equal(bottom_compute(rs.r, rs.n, BOTTOM_BY_LAB, 1, &b), 0);
    assert_int_equal(row_of(&b, BOTTOM_OPS, "")->verdict, BOTTOM_SAME);
    bottom_words(words, sizeof(words), row_of(&b, BOTTOM_OPS, ""));
    assert_string_equal(words, "no significant difference (p=0.69, n=5+5)");
    assert_int_equal(b.ncosts, 1);
    assert_false(b.costs[0].priced);
    assert_true(isnan(b.costs[0].saved_ns) && isnan(b.costs[0].rate));
    text = print_text(&b, true);
    assert_has(text, "  cost: no significant difference in CPU per request (client + server): "
                     "not priced (p=");
    assert_null(strstr(text, "vCPU"));
    assert_has(text, "\033[2mno significant difference (p=0.69, n=5+5)");
    assert_has(text, "0 of 10 runs noisy (other processes' CPU + steal above 0.10 CPU)\n");
    free(text);
    bottom_release(&b);
    recs_free(&rs);
}

/*
 * Too few runs for a verdict: 3 a side (Mann-Whitney's smallest p is 0.1), each side's
 * values tied, so that the normal approximation's p (0.047) would pass; no row has a
 * verdict, nothing is priced, and the bottom line is one sentence and a grid of ratios,
 * in the text and read back from the evidence alike. 4 a side can have one.
 */
static void test_few_runs(void **state)
{
    struct recs rs = { 0 };
    struct bottom_line b;
    const struct bottom_row *cols[8];
    char words[512], v[32];
    char *text;
    json_t *j;

    (void)state;
    for (unsigned i = 0; i < 3; i++) {
        rec_add(&rs, "tcp://127.0.0.1:9000", "", 10000, 50000, 20000, 18000, false);
        rec_add(&rs, "unix:/tmp/x.sock", "", 20000, 40000, 10000, 9000, false);
    }
    assert_int_equal(bottom_compute(rs.r, rs.n, BOTTOM_BY_LAB, 1, &b), 0);
    for (size_t i = 0; i < b.nrows; i++)
        assert_int_equal(b.rows[i].verdict, BOTTOM_FEW);
    assert_true(bottom_no_verdict(&b));
    bottom_words(words, sizeof(words), row_of(&b, BOTTOM_OPS, ""));
    assert_string_equal(words, "too few runs for a verdict (n=3+3): ratio 2.00×");
    assert_false(b.costs[0].priced);
    bottom_cost_words(words, sizeof(words), &b.costs[0]);
    assert_string_equal(words, "too few runs to price CPU per request (client + server) (n=3+3)");
    bottom_few_words(words, sizeof(words), &b);
    assert_string_equal(words, "no verdict is possible with n=3+3: Mann-Whitney's smallest p is "
                               "then 0.1, and a difference needs p < 0.05 (4 runs a side can "
                               "reach 0.029); the ratios unix/tcp of the medians only, nothing "
                               "priced");
    assert_int_equal(bottom_grid_cols(&b, cols, 8), 5);
    bottom_grid_col_name(words, sizeof(words), cols[4]);
    assert_string_equal(words, "CPU server");
    bottom_grid_value(v, sizeof(v), &b, 0, cols[0]);
    assert_string_equal(v, "2.00×");
    bottom_grid_value(v, sizeof(v), &b, 0, cols[3]);
    assert_string_equal(v, "0.50×");
    text = print_text(&b, false);
    assert_has(text, "\nbottom line: no verdict is possible with n=3+3: ");
    assert_has(text, "   ops/s     p50     p99  CPU client  CPU server\n");
    assert_has(text, "  64 B reuse   2.00×   0.80×   0.80×       0.50×       0.50×\n");
    assert_null(strstr(text, "cost"));
    assert_null(strstr(text, "significant"));
    /* the evidence says so, and read back prints the same */
    j = bottom_json(&b);
    assert_true(json_is_false(json_object_get(j, "verdict_possible")));
    json_decref(j);
    assert_round_trip(&b, text, "too few runs");
    free(text);
    bottom_release(&b);
    /* a fourth run a side: a verdict is possible, and this one is better */
    rec_add(&rs, "tcp://127.0.0.1:9000", "", 10000, 50000, 20000, 18000, false);
    rec_add(&rs, "unix:/tmp/x.sock", "", 20000, 40000, 10000, 9000, false);
    assert_int_equal(bottom_compute(rs.r, rs.n, BOTTOM_BY_LAB, 1, &b), 0);
    assert_false(bottom_no_verdict(&b));
    assert_int_equal(row_of(&b, BOTTOM_OPS, "")->verdict, BOTTOM_BETTER);
    bottom_release(&b);
    recs_free(&rs);
}

/* run: NAME.tcp and NAME.unix make cell NAME, tcp its base even when unix comes first. */
static void test_run_labels(void **state)
{
    struct recs rs = { 0 };
    struct bottom_line b;

    (void)state;
    for (unsigned i = 0; i < 3; i++) {
        rec_add(&rs, "tcp://127.0.0.1:8080", "nginx->fpm.unix", 2000, 300000, 30000, 9000, false)
            ->cell = 0;
        rec_add(&rs, "tcp://127.0.0.1:8080", "nginx->fpm.tcp", 1000, 500000, 60000, 9000, false)
            ->cell = 1;
    }
    assert_int_equal(bottom_compute(rs.r, rs.n, BOTTOM_BY_RUN, 1, &b), 0);
    assert_true(b.nrows > 0);
    for (size_t i = 0; i < b.nrows; i++) {
        assert_string_equal(b.rows[i].cell, "nginx->fpm");
        assert_string_equal(b.rows[i].base, "tcp");
        assert_string_equal(b.rows[i].arm, "unix");
    }
    assert_true(row_of(&b, BOTTOM_OPS, "")->ratio == 2.0);
    bottom_release(&b);
    recs_free(&rs);

    /* unlabelled: the transports; unix given first, tcp is still the base */
    memset(&rs, 0, sizeof(rs));
    for (unsigned i = 0; i < 2; i++) {
        rec_add(&rs, "unix:/tmp/x.sock", "", 2000, 30000, 3000, 1000, false)->cell = 0;
        rec_add(&rs, "tcp://127.0.0.1:9000", "", 1000, 50000, 6000, 1000, false)->cell = 1;
    }
    assert_int_equal(bottom_compute(rs.r, rs.n, BOTTOM_BY_RUN, 1, &b), 0);
    assert_string_equal(b.rows[0].cell, "");
    assert_string_equal(b.rows[0].base, "tcp");
    assert_string_equal(b.rows[0].arm, "unix");
    bottom_release(&b);
    recs_free(&rs);
}

/* The evidence's object, read back, prints the same text; a damaged one is refused. */
static void test_json_round_trip(void **state)
{
    struct recs rs = { 0 };
    struct bottom_line b, back, all = { 0 };
    json_t *j;
    char *t1, *t2, *dumped;

    (void)state;
    faster_unix(&rs, "", "");
    assert_int_equal(bottom_compute(rs.r, rs.n, BOTTOM_BY_LAB, 3, &b), 0);
    j = bottom_json(&b);
    assert_non_null(j);
    /* through the text JSON is, as a reader gets it */
    dumped = json_dumps(j, JSON_REAL_PRECISION(17));
    json_decref(j);
    j = json_loads(dumped, 0, NULL);
    free(dumped);
    assert_int_equal(bottom_from_json(j, &back), 0);
    t1 = print_text(&b, false);
    t2 = print_text(&back, false);
    assert_string_equal(t1, t2);
    free(t2);
    /* a stack's measurement: its title in front of each cell */
    assert_int_equal(bottom_append(&all, &back, "nginx → php-fpm"), 0);
    assert_string_equal(all.rows[0].cell, "nginx → php-fpm");
    assert_string_equal(all.costs[0].cell, "nginx → php-fpm");
    assert_int_equal(all.runs, 10);
    /* a second one, of two cells: the title before each */
    back.rows[0].cell[0] = 'X';
    assert_int_equal(bottom_append(&all, &back, "bare FastCGI hop"), 0);
    assert_string_equal(all.rows[b.nrows].cell, "bare FastCGI hop: X4 B reuse");
    assert_string_equal(all.rows[b.nrows + 1].cell, "bare FastCGI hop: 64 B reuse");
    assert_int_equal(all.runs, 20);
    bottom_release(&all);
    json_object_set_new(json_array_get(json_object_get(j, "rows"), 0), "verdict",
                        json_string("great"));
    assert_int_equal(bottom_from_json(j, &all), -EINVAL);
    assert_int_equal(bottom_from_json(json_object_get(j, "rows"), &all), -EINVAL);
    json_decref(j);
    free(t1);
    bottom_release(&back);
    bottom_release(&b);
    recs_free(&rs);
}

/* A grid row of the bottom line: cell, figure, whose CPU, ratio (NAN: none). */
static struct bottom_row grid_row(const char *cell, enum bottom_fig fig, const char *who,
                                  double ratio)
{
    struct bottom_row r = {
        .fig = fig, .ratio = ratio, .n_base = 2, .n_arm = 2, .verdict = BOTTOM_FEW
    };

    snprintf(r.cell, sizeof(r.cell), "%s", cell);
    snprintf(r.who, sizeof(r.who), "%s", who);
    snprintf(r.base, sizeof(r.base), "tcp");
    snprintf(r.arm, sizeof(r.arm), "unix");
    return r;
}

/*
 * A stack's measurements without verdicts, one of them without a service (the bare
 * FastCGI hop has no nginx): its cell in that column is a dash, said once under the
 * grid, not an n/a; a figure the cell has but without a ratio is n/a.
 */
static void test_grid_absent(void **state)
{
    struct bottom_row rows[] = {
        grid_row("bare hop", BOTTOM_OPS, "", 1.15),
        grid_row("bare hop", BOTTOM_CPU, "client", NAN),
        grid_row("nginx", BOTTOM_OPS, "", 1.27),
        grid_row("nginx", BOTTOM_CPU, "client", 0.75),
        grid_row("nginx", BOTTOM_CPU, "nginx", 0.54),
    };
    struct bottom_line b = { .rows = rows, .nrows = 5, .runs = 8 };
    const struct bottom_row *cols[8];
    char v[32];
    char *text;

    (void)state;
    assert_true(bottom_no_verdict(&b));
    assert_int_equal(bottom_grid_cols(&b, cols, 8), 3);
    bottom_grid_value(v, sizeof(v), &b, 0, cols[2]);
    assert_string_equal(v, "-");
    bottom_grid_value(v, sizeof(v), &b, 0, cols[1]);
    assert_string_equal(v, "n/a");
    bottom_grid_value(v, sizeof(v), &b, 2, cols[2]);
    assert_string_equal(v, "0.54×");
    text = print_text(&b, false);
    assert_has(text, "  bare hop   1.15×         n/a          -\n");
    assert_has(text, "  nginx      1.27×       0.75×      0.54×\n");
    assert_has(text, "\n  -: a service not in that measurement\n");
    free(text);
}

/* Sets each run's co-location: tcp's share tcp, unix's unix, over 200 samples; pinned or not. */
static void set_coloc(struct recs *rs, double tcp, double unix_share, bool pinned)
{
    for (size_t i = 0; i < rs->n; i++) {
        struct run_record *r = &rs->r[i];
        double share = r->cfg.ep.kind == ENDPOINT_TCP ? tcp : unix_share;
        r->obs.coloc =
            (struct coloc_result){ .observed = true, .both = 200, .same = (unsigned)(share * 200) };
        r->cfg.ncpus = pinned ? 1 : 0;
    }
}

/*
 * Unpinned, unix's load thread shared a CPU with its server in 98 % of the
 * samples and tcp's in 2 %: every figure of the pair says the placement
 * differed, not better or worse, and no cost is priced; in the text, the
 * evidence, and read back. Pinned, or with shares closer than 0.5, the verdict
 * is the figures' again.
 */
static void test_placement_differed(void **state)
{
    struct recs rs = { 0 };
    struct bottom_line b;
    char words[320];
    char *text;

    (void)state;
    faster_unix(&rs, "", "");
    set_coloc(&rs, 0.02, 0.98, false);
    assert_int_equal(bottom_compute(rs.r, rs.n, BOTTOM_BY_LAB, 7, &b), 0);
    assert_int_equal(b.nrows, 5);
    for (size_t i = 0; i < b.nrows; i++)
        assert_int_equal(b.rows[i].verdict, BOTTOM_PLACEMENT);
    assert_int_equal(b.ncosts, 0);
    bottom_words(words, sizeof(words), row_of(&b, BOTTOM_P50, ""));
    assert_string_equal(words, "placement differed: unix shared a CPU with its server in 98 % of "
                               "samples, tcp in 2 %: not a transport difference; pin with --pin "
                               "same or split");
    text = print_text(&b, false);
    assert_has(text, "placement differed: unix shared a CPU");
    assert_null(strstr(text, "better"));
    assert_null(strstr(text, "cost"));
    assert_round_trip(&b, text, "placement differed");
    free(text);
    bottom_release(&b);
    /* pinned: the placement was asked, the figures decide */
    set_coloc(&rs, 0.02, 0.98, true);
    assert_int_equal(bottom_compute(rs.r, rs.n, BOTTOM_BY_LAB, 7, &b), 0);
    assert_int_equal(row_of(&b, BOTTOM_OPS, "")->verdict, BOTTOM_BETTER);
    assert_int_equal(b.ncosts, 1);
    bottom_release(&b);
    /* unpinned but 0.5 apart, not more */
    set_coloc(&rs, 0.25, 0.75, false);
    assert_int_equal(bottom_compute(rs.r, rs.n, BOTTOM_BY_LAB, 7, &b), 0);
    assert_int_equal(row_of(&b, BOTTOM_OPS, "")->verdict, BOTTOM_BETTER);
    bottom_release(&b);
    recs_free(&rs);
}

/* The line of each run's observed share, and none when no run has one. */
static void test_placement_line(void **state)
{
    struct recs rs = { 0 };
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    (void)state;
    assert_non_null(f);
    rec_add(&rs, "tcp://127.0.0.1:9000", "", 10000, 50000, 20000, 18000, false);
    rec_add(&rs, "unix:/tmp/x.sock", "", 20000, 40000, 10000, 9000, false);
    bottom_placement_print(f, rs.r, rs.n);
    assert_int_equal(fflush(f), 0);
    assert_int_equal(len, 0);
    set_coloc(&rs, 0.02, 0.98, false);
    rs.r[1].obs.coloc.both = 0;
    rs.r[1].obs.coloc.same = 0;
    bottom_placement_print(f, rs.r, rs.n);
    assert_int_equal(fclose(f), 0);
    assert_string_equal(buf, "\nplacement observed (load and server threads on one CPU, share of "
                             "samples): run 1 tcp 2 % (n=200), run 2 unix n/a (n=0)\n");
    free(buf);
    recs_free(&rs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lab_better),      cmocka_unit_test(test_same_as_summary),
        cmocka_unit_test(test_not_significant), cmocka_unit_test(test_run_labels),
        cmocka_unit_test(test_json_round_trip), cmocka_unit_test(test_few_runs),
        cmocka_unit_test(test_grid_absent),     cmocka_unit_test(test_placement_differed),
        cmocka_unit_test(test_placement_line),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
