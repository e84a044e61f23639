/*
 * htmldata: the evidence as the HTML report holds it (html.c reads it, charts.c
 * and flame.c draw it, htmldata.c reads its figures): per file its head and
 * its cells, each cell its run records (their histograms taken out) and the
 * latency histograms of its runs that count, added exactly. Figures are read
 * from the records when drawn.
 */
#ifndef HOPBENCH_REPORT_HTMLDATA_H
#define HOPBENCH_REPORT_HTMLDATA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "evidence/check.h"
#include "evidence/hist_json.h"
#include "hist.h"
#include "util.h"

/* The most evidence files one report takes. */
#define HTML_MAX_FILES 16

/*
 * A latency histogram kept sparse: its non-zero counters, ascending by index,
 * and the figures beside them. The report holds two per cell, so a file of
 * thousands of cells takes the room of their counters, not 216 KiB each.
 */
struct hsparse {
    struct hist_pair *pairs;
    size_t n;
    uint64_t total, min, max;
};

/*
 * Adds the histogram JSON j (checked as evidence_hist_add checks it) into h.
 * Returns 0, or -EINVAL/-ENOMEM with err set (h then as it was).
 */
int hd_sparse_add(struct hsparse *h, const json_t *j, struct hb_err *err);

/* hist_percentile of the same counters: the same value for the same p. */
uint64_t hd_percentile(const struct hsparse *h, double p);

/* One cell of a file: runs with the same key (compare's cell). */
struct hcell {
    struct run_key key;  /* its strings lent from runs[0] */
    json_t *runs;        /* the records, in the order read, without their histograms */
    struct hsparse *lat; /* the runs that count, added; NULL while none does */
    struct hsparse *svc; /* the open loop's service time likewise */
    size_t counted;      /* runs that count */
    char *placed;        /* where it is shown to have run (evidence_place_label); key.placement */
    const char *wait_other; /* a wait of its runs other than key.wait's, else "" (static) */
};

struct hfile {
    const char *path;
    const char *title; /* a stack's measurement ("nginx → php-fpm"), or NULL: the path */
    json_t *head;      /* the document but its runs */
    struct hcell *cells;
    size_t ncells, cap;
    /* the page's services in order of first appearance, the same for every file of it: a
     * service's place here is its colour in every CPU chart of the page (none: NULL, 0) */
    const char *const *who;
    size_t nwho;
};

/* j[a][b]... as a number into *out: false when a step is missing or not a number. */
bool hd_number(const json_t *j, double *out, const char *a, const char *b, const char *c);

/*
 * The figure j[a][b][c] of a run: true and *out when a number; else false and
 * why in why[cap]: the evidence's "unavailable" reason, or "not in the
 * evidence".
 */
bool hd_figure(const json_t *run, double *out, char *why, size_t cap, const char *a, const char *b,
               const char *c);

/* A figure of a run as hd_median_by reads it: true and *out, or false and why. */
typedef bool hd_figure_fn(const json_t *run, const void *arg, double *out, char *why, size_t cap);

/*
 * The median over the runs of cell that count of fig(run, arg); false (why
 * set by the first run that lacks it) when a counting run lacks it or none
 * counts.
 */
bool hd_median_by(const struct hcell *cell, hd_figure_fn *fig, const void *arg, double *out,
                  char *why, size_t cap);

/*
 * The tables' rule (stats_median_known, as the stack's table takes it): the
 * median of fig(run, arg) over the runs of cell that count and have it, into
 * *out (NAN when none has it); returns how many have it. why: the first
 * counting run's reason for lacking it ("no run counts" when none counts).
 */
size_t hd_median_known(const struct hcell *cell, hd_figure_fn *fig, const void *arg, double *out,
                       char *why, size_t cap);

/*
 * The median over the runs of cell that count of the figure a.b.c; false
 * (why set from the first run that lacks it) when a counting run lacks it or
 * none counts.
 */
bool hd_median(const struct hcell *cell, double *out, char *why, size_t cap, const char *a,
               const char *b, const char *c);

/*
 * s with each Unix socket in a temporary directory of hopbench's (the lab's,
 * a stack's: removed when it ended) as "unix:…/NAME", into buf.
 */
void hd_short(char *buf, size_t cap, const char *s);

/*
 * The colour of a cell in every chart: tcp blue, unix orange, tcp-veth green
 * (by its label's .tcp/.unix, else its runs' transport), else svg_colour(k).
 */
const char *hd_colour(const struct hcell *cell, size_t k);

/* The cell's place: its label, else its endpoint. */
const char *hd_place(const struct hcell *cell);

/*
 * The cell's whole name, as compare prints it (escaped for a terminal; html_text it), and
 * its placement after it when that is not "process" ("(netns other)", "(pod web-0 on node
 * n1)": the file's container or pod when its placement names one), and when its runs
 * waited differently both waits as compare names them ("[wait epoll -> block]").
 */
void hd_cell_name(char *buf, size_t cap, const struct hcell *cell);

/*
 * Whether a and b belong in one chart: the same key but their place (for a
 * labelled run, the part of its label after the last '.'), and, with
 * any_rate, their open-loop rate.
 */
bool hd_same_group(const struct hcell *a, const struct hcell *b, bool any_rate);

/*
 * The groups of hf's cells (hd_same_group): group[c] is the index of the
 * first cell of cell c's group. Returns the array (the caller frees it).
 */
size_t *hd_groups(const struct hfile *hf, bool any_rate);

/* The group's title: the key without the place ("echo reuse 64 B c=1 p=1"), escaped. */
void hd_group_name(char *buf, size_t cap, const struct hcell *cell, bool any_rate);

/* The cell is an open-loop one. */
bool hd_open_loop(const struct hcell *cell);

#endif
