/*
 * bottom: the bottom line, the answer a lab, a run with repetitions or a stack
 * ends with. Computed once, here, from the run records: per cell (a lab's size
 * and mode, a run's label NAME of NAME.tcp and NAME.unix, a stack's
 * measurement) each arm against the base (tcp): ops/s, p50, p99 and the CPU
 * per request of the client, the server and each named service apart, each
 * as the ratio of medians arm/base with its 95 % bootstrap interval and the
 * Mann-Whitney p, from stats_delta on the same values and seeds the summaries
 * use (summary.c: seed + metric; services.c: seed + figure), and a verdict:
 * better, worse, or not significant. A cost sentence per cell only where the
 * CPU per request of the client and every server together differs
 * significantly: what it saves (or costs) and the request rate at which that
 * adds up to one vCPU (cost.c's arithmetic). And how many runs were noisy.
 *
 * The same struct is written into the evidence ("bottom_line",
 * docs/evidence.md), read back from it (bottom_from_json: the stack prints its
 * run children's, the HTML report draws it), printed as text and drawn as HTML
 * from the same words (bottom_words), so every form says the same figures.
 */
#ifndef HOPBENCH_REPORT_BOTTOM_H
#define HOPBENCH_REPORT_BOTTOM_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report/record.h"

#define BOTTOM_NAME_CAP 64
#define BOTTOM_ARM_CAP  48

enum bottom_fig { BOTTOM_OPS = 0, BOTTOM_P50, BOTTOM_P99, BOTTOM_CPU, BOTTOM_FIGS };

/*
 * BOTTOM_FEW: too few runs for a verdict, whatever they measured: with n_base
 * against n_arm runs Mann-Whitney's smallest p (stats_mw_min_p) is not below
 * STATS_ALPHA (1+1, 2+2, 3+3, 3+4: fewer than 4 a side).
 */
/*
 * BOTTOM_PLACEMENT: unpinned, the two arms' load threads shared a CPU with
 * their server in shares of the samples more than EVIDENCE_COLOC_DIFFERS
 * apart (evidence.h, host/coloc.h): what differs is where the scheduler put them, not the
 * transport, whatever the figures say.
 */
enum bottom_verdict {
    BOTTOM_SAME = 0,
    BOTTOM_BETTER,
    BOTTOM_WORSE,
    BOTTOM_NA,
    BOTTOM_FEW,
    BOTTOM_PLACEMENT,
    BOTTOM_VERDICTS
};

/* One figure of one cell: arm against base. */
struct bottom_row {
    char cell[BOTTOM_NAME_CAP]; /* "64 B reuse", "nginx->fpm"; "" when the runs make one cell */
    enum bottom_fig fig;
    char who[BOTTOM_NAME_CAP]; /* CPU: "client", "server", a service's name; else "" */
    char base[BOTTOM_ARM_CAP], arm[BOTTOM_ARM_CAP]; /* "tcp", "unix" */
    double base_median, arm_median; /* ops/s, or ns (latency, CPU per request); NAN: none */
    double ratio, lo, hi, p;        /* arm / base with its interval; NAN when no test */
    size_t n_base, n_arm;
    enum bottom_verdict verdict;
    /* unpinned runs: the median share of samples where the load and the server shared a CPU */
    double coloc_base, coloc_arm; /* NAN: pinned, or not observed */
};

/*
 * What the CPU difference of a cell is worth: priced only when significant
 * (else the figures are NAN and the words say it is not priced).
 */
struct bottom_cost {
    char cell[BOTTOM_NAME_CAP];
    char who[BOTTOM_NAME_CAP]; /* "client + server", "client + php-fpm + nginx" */
    char base[BOTTOM_ARM_CAP], arm[BOTTOM_ARM_CAP];
    bool priced; /* the difference is significant */
    double p;    /* the Mann-Whitney p of the CPU of them all together */
    size_t n_base, n_arm;
    double saved_ns, saved_lo_ns, saved_hi_ns; /* base - arm per request, with its interval */
    double rate, rate_lo, rate_hi; /* requests/s at which that is one vCPU; INFINITY: unbounded */
};

struct bottom_line {
    struct bottom_row *rows;
    size_t nrows;
    struct bottom_cost *costs;
    size_t ncosts;
    size_t runs, noisy, noisy_unknown; /* the runs, how many were noisy, how many not known */
    double noisy_cpus;                 /* the threshold they were judged by */
};

/* How the runs make cells and arms. */
enum bottom_by {
    BOTTOM_BY_LAB, /* cell: size, mode (and open-loop share); arm: the transport */
    BOTTOM_BY_RUN, /* cell: NAME of a label NAME.ARM, else one cell; arm: ARM, label, transport */
};

/*
 * The bottom line of recs[0 .. n-1] into *out (bottom_release frees it).
 * Only runs that count (report_run_counts) enter a figure. Returns 0 or -ENOMEM.
 */
int bottom_compute(const struct run_record *recs, size_t n, enum bottom_by by, uint64_t seed,
                   struct bottom_line *out);

void bottom_release(struct bottom_line *b);

/* The evidence's "bottom_line" object (NULL on OOM). */
json_t *bottom_json(const struct bottom_line *b);

/*
 * Reads a "bottom_line" object back (what bottom_json wrote) into *out.
 * Returns 0, -EINVAL when j is not one (*out then empty), or -ENOMEM.
 */
int bottom_from_json(const json_t *j, struct bottom_line *out);

/*
 * Appends the rows and cost sentences of src to dst, each cell named
 * "title" (a stack's measurement) when src has one cell, else "title: cell".
 * Returns 0 or -ENOMEM.
 */
int bottom_append(struct bottom_line *dst, const struct bottom_line *src, const char *title);

/*
 * The bottom lines of n evidence files' heads as one into *all (bottom_release
 * frees it): each head's "bottom_line" read back (bottom_from_json) and
 * appended, its cells named by titles[i] (NULL: not named); a head without
 * one, or with one that cannot be read, adds nothing. What the HTML report
 * draws first and `hopbench report` prints.
 */
void bottom_of_heads(const json_t *const *heads, const char *const *titles, size_t n,
                     struct bottom_line *all);

/* The figure's name with its unit: "ops/s", "p50 µs", "CPU µs/req client". */
void bottom_fig_name(char *buf, size_t cap, const struct bottom_row *r);

/* A median as the tables show it: "12,043" ops/s, "55.87" µs; "n/a". */
void bottom_value_text(char *buf, size_t cap, const struct bottom_row *r, double v);

/* "better", "worse", "not significant", "n/a", "too few runs". */
const char *bottom_verdict_name(enum bottom_verdict v);

/* Whether n_base against n_arm runs are too few for a verdict (BOTTOM_FEW). */
bool bottom_few(size_t n_base, size_t n_arm);

/*
 * Whether no row of b can have a verdict: each has too few runs (or none on a
 * side), one at least too few. The bottom line is then one sentence saying so
 * (bottom_few_words) and per cell the ratios of the medians alone
 * (bottom_grid_*), in the text and the HTML alike.
 */
bool bottom_no_verdict(const struct bottom_line *b);

/*
 * That sentence: "no verdict is possible with n=1+1 (Mann-Whitney's smallest
 * p is then 1, not below 0.05; 4 runs a side can reach 0.029): the ratios
 * unix/tcp of the medians only, nothing priced".
 */
void bottom_few_words(char *buf, size_t cap, const struct bottom_line *b);

/*
 * The compact grid of a bottom line without verdicts: its columns are the
 * figures in the order first seen (ops/s, p50, p99, CPU of each who); its
 * rows the cells, each starting at the row bottom_grid_cell_at gives.
 * bottom_grid_cols fills cols (at most cap) with the first row of each
 * column and returns how many.
 */
size_t bottom_grid_cols(const struct bottom_line *b, const struct bottom_row **cols, size_t cap);

/* Whether row i of b begins a cell (its cell, arm or base differs from row i - 1's). */
bool bottom_grid_cell_at(const struct bottom_line *b, size_t i);

/* A column's name: "ops/s", "p50", "p99", "CPU client". */
void bottom_grid_col_name(char *buf, size_t cap, const struct bottom_row *col);

/*
 * The ratio of the medians of the cell beginning at row i in column col ("1.78"); "n/a"
 * when the cell has the figure but no ratio; BOTTOM_GRID_ABSENT when the cell has no such
 * figure (a service that takes no part in that measurement: nginx in the bare FastCGI hop).
 */
#define BOTTOM_GRID_ABSENT       "-"
#define BOTTOM_GRID_ABSENT_WORDS "-: a service not in that measurement"
void bottom_grid_value(char *buf, size_t cap, const struct bottom_line *b, size_t i,
                       const struct bottom_row *col);

/*
 * The row's words: "better: unix ran 1.63× [1.20, 1.80] the ops/s of tcp
 * (p=0.0079, n=5+5)", "no significant difference (p=0.22, n=5+5)", or
 * "no comparison (n=0+5)".
 */
void bottom_words(char *buf, size_t cap, const struct bottom_row *r);

/*
 * The cost sentence: "unix saves 23.1 µs [18.2, 30.0] of CPU per request
 * (client + server): one vCPU saved at 43,300 [33,300, 54,900] requests/s",
 * or "no significant difference in CPU per request (client + server): not
 * priced (p=0.22, n=5+5)".
 */
void bottom_cost_words(char *buf, size_t cap, const struct bottom_cost *c);

/* The noisy runs' count: "57 of 60 runs noisy (...)"; "" when there is no run. */
void bottom_noisy_words(char *buf, size_t cap, const struct bottom_line *b);

/* Whether to colour f: a terminal, and NO_COLOR unset or empty (no-color.org). */
bool bottom_colour(FILE *f);

/*
 * Prints the bottom line under "bottom line: ..." (nothing when it has no
 * row); with colour the verdicts green (better), red (worse) or dim (not
 * significant). hint: a line's end for the noisy count ("-v lists them"), or NULL.
 */
void bottom_print(FILE *f, const struct bottom_line *b, bool colour, const char *hint);

/* "placement differed: unix shared a CPU with its server in 95 % of samples, tcp in 3 %: ..." */
void bottom_placement_words(char *buf, size_t cap, const struct bottom_row *r);

/*
 * "placement observed (...): run 1 tcp 98 % (n=412), run 2 unix 3 % (n=398)": each
 * run's co-location share (host/coloc.h), when any run has one; else nothing.
 */
void bottom_placement_print(FILE *f, const struct run_record *recs, size_t n);

/*
 * What a lab or a run ends with: the bottom line of recs computed, printed to
 * f (coloured on a terminal; without verbose the noisy count says -v lists
 * them) and returned as the evidence's "bottom_line" (NULL on OOM).
 */
json_t *bottom_report(FILE *f, const struct run_record *recs, size_t n, enum bottom_by by,
                      uint64_t seed, bool verbose);

#endif
