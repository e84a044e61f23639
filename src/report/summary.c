/*
 * summary: statistics across repetitions (see summary.h).
 */
#include "report/summary.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *summary_metric_name(enum summary_metric m)
{
    return (unsigned)m < METRICS ? metric_def(m)->name : "?";
}

/* The valid runs' values of metric m for cell c; returns how many. */
static size_t collect(const struct run_record *recs, size_t n, unsigned c, enum summary_metric m,
                      double *out)
{
    size_t k = 0;

    for (size_t i = 0; i < n; i++)
        if (recs[i].cell == c && report_run_counts(&recs[i]))
            out[k++] = metric_of_record(&recs[i], m);
    return k;
}

static void summarize_cell(const struct run_record *recs, size_t n, unsigned c, uint64_t seed,
                           double *x0, double *x, struct cell_summary *out)
{
    for (size_t i = 0; i < n; i++) {
        if (recs[i].cell != c) continue;
        if (out->first == NULL) out->first = &recs[i];
        out->runs++;
        out->saturated += report_saturated_invalid(&recs[i]);
        if (!recs[i].res.interrupted) continue;
        out->cut++;
        out->cut_by = recs[i].cut_by;
    }
    for (int m = 0; m < METRICS; m++) {
        size_t k = collect(recs, n, c, (enum summary_metric)m, x);
        size_t k0 = collect(recs, n, 0, (enum summary_metric)m, x0);
        out->valid = k;
        if (k > 0) stats_summarize(x, k, &out->m[m]);
        if (c > 0) stats_delta(x0, k0, x, k, seed + (uint64_t)m, &out->vs_first[m]);
    }
}

int summary_compute(const struct run_record *recs, size_t n, unsigned ncells, uint64_t seed,
                    struct cell_summary *out)
{
    double *x0 = calloc(n ? n : 1, sizeof(*x0));
    double *x = calloc(n ? n : 1, sizeof(*x));

    if (x0 == NULL || x == NULL) {
        free(x0);
        free(x);
        return -ENOMEM;
    }
    memset(out, 0, ncells * sizeof(*out));
    for (unsigned c = 0; c < ncells; c++)
        summarize_cell(recs, n, c, seed, x0, x, &out[c]);
    free(x0);
    free(x);
    return 0;
}

/* Latencies and CPU are printed in µs, throughput as is. */
static double shown(enum summary_metric m, double v)
{
    return m == METRIC_OPS_PER_S ? v : v / 1000.0;
}

static void print_metric(FILE *f, const struct cell_summary *c, unsigned idx, enum summary_metric m)
{
    const struct stats_summary *s = &c->m[m];
    double sd_pct = s->mean > 0 ? 100.0 * s->sd / s->mean : 0;

    int digits = metric_def(m)->digits;
    char med[48], lo[48], hi[48];

    text_number(med, sizeof(med), shown(m, s->median), digits);
    text_number(lo, sizeof(lo), shown(m, s->min), digits);
    text_number(hi, sizeof(hi), shown(m, s->max), digits);
    fputs("  ", f);
    put_columns(f, -10, metric_def(m)->label);
    fprintf(f, " %12s  [%s – %s]  ±%.1f %%", med, lo, hi, sd_pct);
    if (idx > 0) fprintf(f, "   vs first: %s", c->vs_first[m].text);
    fputc('\n', f);
}

void summary_print(FILE *f, const char *title, const struct cell_summary *cells, unsigned ncells)
{
    char ep[TEXT_SAFE_CAP]; /* the endpoint, text_safe */
    fprintf(f, "\n%s: median [min – max] ±SD of the valid runs\n", title);
    for (unsigned i = 0; i < ncells; i++) {
        const struct cell_summary *c = &cells[i];
        if (c->first == NULL) continue;
        fprintf(f, "%s %s (n=%zu valid of %zu",
                text_safe(ep, sizeof(ep), report_run_name(c->first)),
                report_mode_name(c->first->cfg.mode), c->valid, c->runs);
        if (c->saturated > 0) fprintf(f, "; %zu saturated (below 99 %% of the rate)", c->saturated);
        if (c->cut > 0)
            fprintf(f, "; %zu cut short by %s", c->cut, c->cut_by != NULL ? c->cut_by : "Ctrl-C");
        fputs(")\n", f);
        if (c->valid == 0) {
            fprintf(f, "  no valid run: left out of every comparison\n");
            continue;
        }
        for (int m = 0; m < METRICS; m++)
            print_metric(f, c, i, (enum summary_metric)m);
    }
}

static json_t *delta_json(const struct stats_delta *d)
{
    if (!d->ok)
        return json_pack("{s:s, s:I, s:I}", "text", d->text, "n_first", (json_int_t)d->na, "n",
                         (json_int_t)d->nb);
    return json_pack("{s:f, s:f, s:f, s:f, s:b, s:I, s:I, s:s}", "ratio", d->ratio, "ci_lo", d->lo,
                     "ci_hi", d->hi, "p", d->p, "significant", d->significant, "n_first",
                     (json_int_t)d->na, "n", (json_int_t)d->nb, "text", d->text);
}

static json_t *cell_json(const struct cell_summary *c, unsigned idx)
{
    json_t *metrics = json_object();

    for (int m = 0; m < METRICS; m++) {
        const struct stats_summary *s = &c->m[m];
        json_t *o = c->valid ? json_pack("{s:I, s:f, s:f, s:f, s:f, s:f}", "n", (json_int_t)s->n,
                                         "median", s->median, EV_MIN, s->min, EV_MAX, s->max,
                                         EV_MEAN, s->mean, "sd", s->sd)
                             : json_pack("{s:I}", "n", (json_int_t)0);
        if (idx > 0) json_object_set_new(o, "vs_first", delta_json(&c->vs_first[m]));
        json_object_set_new(metrics, summary_metric_name((enum summary_metric)m), o);
    }
    return json_pack("{s:i, s:s, s:I, s:I, s:I, s:o}", EV_CELL, (int)idx, EV_ENDPOINT,
                     c->first ? c->first->cfg.ep.text : "", EV_RUNS, (json_int_t)c->runs, EV_VALID,
                     (json_int_t)c->valid, EV_SATURATED, (json_int_t)c->saturated, "metrics",
                     metrics);
}

json_t *summary_json(const struct cell_summary *cells, unsigned ncells)
{
    json_t *arr = json_array();

    for (unsigned i = 0; i < ncells; i++)
        json_array_append_new(arr, cell_json(&cells[i], i));
    return json_pack("{s:f, s:i, s:s, s:o}", "alpha", STATS_ALPHA, "bootstrap_resamples",
                     STATS_BOOTSTRAP, "test", "Mann-Whitney U, two-sided", "cells", arr);
}

static bool same_pair(const struct run_record *a, const struct run_record *b)
{
    return a->cfg.size == b->cfg.size && a->cfg.mode == b->cfg.mode &&
           a->rate_share == b->rate_share;
}

/* The summary cell of a lab run: tcp = 0, unix = 1, tcp-veth (lab --netns other) = 2. */
static unsigned lab_cell_of(const struct run_record *r)
{
    if (r->transport != NULL) return 2;
    return strcmp(endpoint_transport(&r->cfg.ep), "tcp") == 0 ? 0 : 1;
}

/* One (size, mode) pair of the lab: its records as cells tcp = 0, unix = 1 (tcp-veth = 2). */
static json_t *lab_pair(FILE *f, const struct run_record *recs, size_t n, size_t first,
                        uint64_t seed, struct run_record *tmp)
{
    struct cell_summary cells[3];
    char title[96];
    unsigned ncells = 2;
    size_t k = 0;

    for (size_t i = first; i < n; i++) {
        if (!same_pair(&recs[i], &recs[first])) continue;
        tmp[k] = recs[i];
        tmp[k].cell = lab_cell_of(&recs[i]);
        if (tmp[k++].cell == 2) ncells = 3;
    }
    if (summary_compute(tmp, k, ncells, seed, cells) < 0) return NULL;
    char open[32] = "";

    if (recs[first].rate_share > 0)
        snprintf(open, sizeof(open), " open loop at %.0f %%", recs[first].rate_share * 100);
    snprintf(title, sizeof(title), "%zu B %s%s, %s against tcp", recs[first].cfg.size,
             report_mode_name(recs[first].cfg.mode), open,
             ncells == 3 ? "unix and tcp-veth" : "unix");
    if (f != NULL) {
        summary_print(f, title, cells, ncells);
        report_noisy_count(f, tmp, k);
    }
    return json_pack("{s:I, s:s, s:f, s:o}", EV_SIZE, (json_int_t)recs[first].cfg.size, EV_MODE,
                     report_mode_name(recs[first].cfg.mode), EV_RATE_SHARE, recs[first].rate_share,
                     EV_SUMMARY, summary_json(cells, ncells));
}

json_t *summary_lab(FILE *f, const struct run_record *recs, size_t n, uint64_t seed)
{
    struct run_record *tmp = calloc(n ? n : 1, sizeof(*tmp));
    json_t *arr = json_array();

    if (tmp == NULL || arr == NULL) {
        free(tmp);
        json_decref(arr);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = same_pair(&recs[j], &recs[i]);
        if (!seen) json_array_append_new(arr, lab_pair(f, recs, n, i, seed, tmp));
    }
    free(tmp);
    return arr;
}
