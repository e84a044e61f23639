/*
 * html: the HTML report (see html.h). Each file is read a run at a time
 * (evidence_read): its runs are grouped into cells as compare groups them,
 * the histograms of the runs that count added per cell, and the records kept
 * without their histograms. Then the page: the files side by side, then each
 * file's charts (charts.c) and tables.
 */
#include "report/html.h"
#include "report/flame.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evidence.h"
#include "evidence/hist_json.h"
#include "evidence/schema.h"
#include "outfile.h"
#include "report/bottom.h"
#include "report/charts.h"
#include "report/htmldata.h"
#include "report/metric.h"
#include "report/report.h"
#include "report/svg.h"
#include "stats.h"

#define HTML_SEED                                                                                  \
    1 /* the bootstrap's, for the deltas between files: the same files, the same text */

/* ---- reading -------------------------------------------------------------------------- */

/* The cell of key k in hf, a new one (its key lent from run) when there is none. */
static struct hcell *file_cell(struct hfile *hf, const struct run_key *k)
{
    struct hcell *c;

    for (size_t i = 0; i < hf->ncells; i++)
        if (evidence_same_cell(&hf->cells[i].key, k)) return &hf->cells[i];
    if (hf->ncells == hf->cap) {
        hf->cap = hf->cap ? 2 * hf->cap : 16;
        c = realloc(hf->cells, hf->cap * sizeof(*c));
        if (c == NULL) return NULL;
        hf->cells = c;
    }
    c = &hf->cells[hf->ncells++];
    *c = (struct hcell){ .key = *k, .runs = json_array(), .wait_other = "" };
    return c;
}

static void sparse_free(struct hsparse *h)
{
    if (h != NULL) free(h->pairs);
    free(h);
}

/* Adds the histogram j into *h (allocated at the first one); 0 or -EINVAL/-ENOMEM, err set. */
static int hist_take(struct hsparse **h, const json_t *j, struct hb_err *err)
{
    if (j == NULL) return 0;
    if (*h == NULL) *h = calloc(1, sizeof(**h));
    if (*h == NULL) return hb_fail(err, -ENOMEM, "out of memory");
    return hd_sparse_add(*h, j, err);
}

/* Takes the histograms out of a record: the report keeps their sums, not each. */
static void strip_hists(json_t *run)
{
    json_t *phases = json_object_get(run, EV_PHASES), *phase;
    const char *name;

    json_object_del(run, EV_HISTOGRAM);
    json_object_del(json_object_get(run, EV_OPEN_LOOP), EV_SERVICE_HISTOGRAM);
    json_object_foreach(phases, name, phase)
    {
        json_object_del(phase, EV_HISTOGRAM);
    }
}

/* Prefixes err's message with the file and the run; returns -EINVAL. */
static int run_fail(const struct hfile *hf, size_t idx, struct hb_err *err)
{
    char msg[sizeof(err->msg)];

    memcpy(msg, err->msg, sizeof(msg));
    return hb_fail(err, -EINVAL, "%s: not valid evidence: run %zu: %s", hf->path, idx, msg);
}

/* The reader: each record into its cell. */
static int take_run(void *ctx, size_t idx, json_t *run, struct hb_err *err)
{
    struct hfile *hf = ctx;
    struct run_key k;
    struct hcell *cell;
    bool counts;
    int rc = evidence_run_cell(run, &k, &counts, err);

    if (rc < 0) return run_fail(hf, idx, err);
    if (rc == 1) return 0;
    cell = file_cell(hf, &k);
    if (cell == NULL || json_array_append(cell->runs, run) < 0)
        return hb_fail(err, -ENOMEM, "%s: out of memory", hf->path);
    /* the cell's first wait, then the first other one (both static strings) */
    if (cell->key.wait[0] == '\0') cell->key.wait = k.wait;
    if (cell->wait_other[0] == '\0' && k.wait[0] != '\0' && strcmp(k.wait, cell->key.wait) != 0)
        cell->wait_other = k.wait;
    if (counts) {
        rc = hist_take(&cell->lat, json_object_get(run, EV_HISTOGRAM), err);
        if (rc == 0)
            rc = hist_take(
                &cell->svc,
                json_object_get(json_object_get(run, EV_OPEN_LOOP), EV_SERVICE_HISTOGRAM), err);
        if (rc < 0) return run_fail(hf, idx, err);
        cell->counted++;
    }
    strip_hists(run);
    return 0;
}

/*
 * Names each cell by the placement it is shown under: the container or pod
 * of the file's placement when it names one (evidence_place_label); a lab's
 * by its transport, as the lab's own tables do (its endpoints are a free port
 * and a socket in a temporary directory, new at each lab). Returns 0 or
 * -ENOMEM with err set.
 */
static int file_place(struct hfile *hf, struct hb_err *err)
{
    const json_t *doc_place = json_object_get(hf->head, EV_PLACEMENT);
    const char *cmd = json_string_value(json_object_get(hf->head, EV_COMMAND));
    char label[TEXT_SAFE_CAP];

    for (size_t i = 0; i < hf->ncells; i++) {
        struct hcell *cell = &hf->cells[i];
        const char *tr =
            json_string_value(json_object_get(json_array_get(cell->runs, 0), EV_TRANSPORT));
        if (cmd != NULL && strcmp(cmd, "lab") == 0 && cell->key.label[0] == '\0' && tr != NULL)
            cell->key.label = tr; /* lent from the cell's first run, as the rest of its key */
        evidence_place_label(label, sizeof(label), doc_place, cell->key.placement);
        cell->placed = strdup(label);
        if (cell->placed == NULL) return hb_fail(err, -ENOMEM, "%s: out of memory", hf->path);
        cell->key.placement = cell->placed;
    }
    return 0;
}

static void file_release(struct hfile *hf)
{
    for (size_t i = 0; i < hf->ncells; i++) {
        free(hf->cells[i].placed);
        json_decref(hf->cells[i].runs);
        sparse_free(hf->cells[i].lat);
        sparse_free(hf->cells[i].svc);
    }
    free(hf->cells);
    json_decref(hf->head);
}

/* ---- the page ------------------------------------------------------------------------- */

static const char page_css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:960px}"
    "h1{font-size:1.5em}h2{border-bottom:2px solid #ccc;margin-top:2em}"
    "h3{margin-top:1.5em}table{border-collapse:collapse;margin:.5em 0}"
    "td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}"
    "code{background:#f4f4f4;padding:1px 3px;word-break:break-all}"
    ".na{color:#a33}.muted{color:#777}"
    "svg.chart{display:block;margin:.5em 0;background:#fff;border:1px solid #eee}"
    "svg.flame text.flame{font:10px sans-serif;fill:#222}"
    "svg text{font:11px system-ui,sans-serif;fill:#222}svg text.tick{fill:#555}"
    "svg text.axis-title{font-size:12px}svg .grid{stroke:#eee}svg .axis{stroke:#888}"
    "svg .median{stroke-width:3}svg .curve,svg .rate{fill:none;stroke-width:1.8}"
    "svg .service,svg .p99{stroke-dasharray:5 3}"
    "svg .series{fill:none;stroke-width:1.3;stroke-linejoin:round}svg path.bad{stroke-dasharray:2 3}"
    ".cards{display:flex;gap:.8em;margin:.8em 0}.card{flex:1;border:1px solid #ddd;"
    "border-radius:6px;padding:.5em .8em}.card b{display:block;font-size:1.6em}"
    "table.bottom td{white-space:nowrap}table.bottom td.words{white-space:normal}"
    ".better{color:#1a7f37}.worse{color:#c62828}.same{color:#777}.few{color:#8a5a00}"
    ".card.few{border-color:#8a5a00}"
    "section.stack pre{white-space:pre-wrap;overflow-wrap:anywhere}"
    "body{max-width:1360px}";

/* One row of a two-column table: name, then the value escaped. */
static void kv_row(FILE *f, const char *name, const char *value)
{
    fputs("<tr><th>", f);
    html_text(f, name);
    fputs("</th><td>", f);
    html_text(f, value);
    fputs("</td></tr>\n", f);
}

/* A JSON scalar as text: a string as it is, a number, true/false; null or missing "n/a". */
static void scalar_text(char *buf, size_t cap, const json_t *v)
{
    if (json_is_string(v))
        snprintf(buf, cap, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, cap, "%g", json_real_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, cap, "%s", json_is_true(v) ? "yes" : "no");
    else
        snprintf(buf, cap, "n/a");
}

/* Every scalar member of obj as a row, in the file's order. */
static void kv_object(FILE *f, const json_t *obj)
{
    const char *key;
    json_t *v;
    char text[1024];

    json_object_foreach((json_t *)(uintptr_t)obj, key, v)
    {
        if (json_is_object(v) || json_is_array(v)) continue;
        scalar_text(text, sizeof(text), v);
        kv_row(f, key, text);
    }
}

/* The command line as typed, each word escaped, words with a space quoted. */
static void command_line(FILE *f, const json_t *argv)
{
    size_t i;
    json_t *w;

    fputs("<p>Command line: <code class=\"argv\">", f);
    json_array_foreach(argv, i, w)
    {
        const char *s = json_is_string(w) ? json_string_value(w) : "?";
        bool quote = s[0] == '\0' || strpbrk(s, " \t'\"") != NULL;
        if (i > 0) fputc(' ', f);
        if (quote) fputc('\'', f);
        html_text(f, s);
        if (quote) fputc('\'', f);
    }
    fputs("</code></p>\n", f);
}

/* The sysctls with their values, or n/a and why. */
static void sysctl_table(FILE *f, const json_t *machine)
{
    const json_t *sysctl = json_object_get(machine, "sysctl");
    const json_t *unavailable = json_object_get(machine, "sysctl_unavailable");
    const char *key;
    json_t *v;
    char text[1024];

    fputs("<table class=\"sysctl\"><tr><th>sysctl</th><th>value</th></tr>\n", f);
    json_object_foreach((json_t *)(uintptr_t)sysctl, key, v)
    {
        const json_t *why = json_object_get(unavailable, key);
        if (json_is_string(v))
            scalar_text(text, sizeof(text), v);
        else
            snprintf(text, sizeof(text), "n/a (%s)",
                     json_is_string(why) ? json_string_value(why) : "not read");
        kv_row(f, key, text);
    }
    fputs("</table>\n", f);
}

/* "runs placed": each placement the file's cells are shown under, the first few. */
static void placed_row(FILE *f, const struct hfile *hf)
{
    const char *seen[8];
    size_t n = 0;
    char text[TEXT_SAFE_CAP] = "", shown[TEXT_SAFE_CAP];

    for (size_t i = 0; i < hf->ncells && n < ARRAY_LEN(seen); i++) {
        const char *p = hf->cells[i].key.placement;
        bool known = p[0] == '\0';
        for (size_t j = 0; j < n && !known; j++)
            known = strcmp(seen[j], p) == 0;
        if (known) continue;
        size_t len = strlen(text);
        snprintf(text + len, sizeof(text) - len, "%s%s", n > 0 ? "; " : "",
                 text_safe(shown, sizeof(shown), p));
        seen[n++] = p;
    }
    if (n > 0) kv_row(f, "runs placed", text);
}

static void machine_section(FILE *f, const struct hfile *hf)
{
    const json_t *head = hf->head;
    const json_t *tool = json_object_get(head, EV_TOOL);
    double started;
    char when[64] = "n/a";

    fputs("<h3>The invocation, the machine, the placement</h3>\n", f);
    command_line(f, json_object_get(head, EV_ARGV));
    if (hd_number(head, &started, EV_STARTED_UNIX_S, NULL, NULL)) {
        time_t t = (time_t)started;
        struct tm tm;
        if (gmtime_r(&t, &tm) != NULL) strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
    }
    fputs("<table class=\"invocation\">\n", f);
    kv_row(f, "tool", json_string_value(json_object_get(tool, EV_VERSION)));
    kv_row(f, "started", when);
    kv_object(f, head);
    kv_object(f, json_object_get(head, EV_PLAN));
    fputs("</table>\n<table class=\"machine\">\n", f);
    kv_object(f, json_object_get(head, EV_MACHINE));
    fputs("</table>\n<table class=\"placement\">\n", f);
    kv_object(f, json_object_get(head, EV_PLACEMENT));
    placed_row(f, hf);
    fputs("</table>\n", f);
    sysctl_table(f, json_object_get(head, EV_MACHINE));
}

/* ---- the verdicts --------------------------------------------------------------------- */

/* The header cells of a verdicts table, as compare names them: "client cpu µs/op", whose. */
static void metric_heads(FILE *f)
{
    fputs("<table class=\"verdicts\"><tr><th>cell</th>", f);
    for (size_t m = 0; m < METRICS; m++) {
        fputs("<th>", f);
        html_text(f, metric_def(m)->cmp_label);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
}

/* The label of the runs of summary cell idx in hf (stack children label their arms), else ep. */
static const char *label_of_cell(const struct hfile *hf, size_t idx, const char *ep)
{
    for (size_t c = 0; c < hf->ncells; c++) {
        double cell = -1;
        if (hd_number(json_array_get(hf->cells[c].runs, 0), &cell, EV_CELL, NULL, NULL) &&
            cell == (double)idx && hf->cells[c].key.label[0] != '\0')
            return hf->cells[c].key.label;
    }
    return ep;
}

/* One summary's table: per cell the median of each metric and, after the first, vs_first. */
static void summary_table(FILE *f, const struct hfile *hf, const json_t *summary)
{
    const json_t *cells = json_object_get(summary, "cells");
    size_t i;
    json_t *cell;
    char num[64];

    metric_heads(f);
    json_array_foreach(cells, i, cell)
    {
        const json_t *metrics = json_object_get(cell, "metrics");
        const char *ep = json_string_value(json_object_get(cell, EV_ENDPOINT));
        char shown[TEXT_SAFE_CAP];
        fputs("<tr><td>", f);
        hd_short(shown, sizeof(shown), ep != NULL ? ep : "");
        html_text(f, label_of_cell(hf, i, shown));
        fputs("</td>", f);
        for (size_t m = 0; m < METRICS; m++) {
            const struct metric_def *d = metric_def(m);
            const json_t *mv = json_object_get(metrics, d->name);
            const json_t *vs = json_object_get(json_object_get(mv, "vs_first"), "text");
            double med;
            fputs("<td class=\"num\">", f);
            if (hd_number(mv, &med, "median", NULL, NULL)) {
                svg_number(num, sizeof(num), med * d->scale);
                html_text(f, num);
            } else {
                fputs("no run counts", f);
            }
            if (json_is_string(vs)) {
                fputs("<br><span class=\"delta\">", f);
                html_text(f, json_string_value(vs));
                fputs("</span>", f);
            }
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* A metric's values over the runs of cell that count, into x; how many. */
static size_t metric_values(const struct hcell *cell, const struct metric_def *d, double *x)
{
    size_t n = 0, i;
    json_t *run;

    json_array_foreach(cell->runs, i, run)
    {
        if (evidence_run_counts(run) && hd_number(run, &x[n], d->obj, d->key, NULL)) n++;
    }
    return n;
}

/* One row: per metric the median of cell and, unless it is first, its delta against first. */
static void computed_row(FILE *f, const struct hcell *first, const struct hcell *cell,
                         uint64_t seed)
{
    size_t cap = json_array_size(first->runs) + json_array_size(cell->runs) + 1;
    double *a = xcalloc(cap, sizeof(*a)), *b = xcalloc(cap, sizeof(*b));
    char num[64];

    char place[TEXT_SAFE_CAP];

    hd_short(place, sizeof(place), hd_place(cell));
    fputs("<tr><td>", f);
    html_text(f, place);
    fputs("</td>", f);
    for (size_t m = 0; m < METRICS; m++) {
        const struct metric_def *d = metric_def(m);
        size_t na = metric_values(first, d, a), nb = metric_values(cell, d, b);
        struct stats_summary st;
        struct stats_delta delta;
        fputs("<td class=\"num\">", f);
        if (nb > 0 && stats_summarize(b, nb, &st) == 0) {
            svg_number(num, sizeof(num), st.median * d->scale);
            html_text(f, num);
        } else {
            fputs("no run counts", f);
        }
        if (cell != first) {
            /* as the run's summary draws it: seed + the metric's index */
            stats_delta(a, na, b, nb, seed + (uint64_t)m, &delta);
            fputs("<br><span class=\"delta\">", f);
            html_text(f, delta.text);
            fputs("</span>", f);
        }
        fputs("</td>", f);
    }
    fputs("</tr>\n", f);
    free(a);
    free(b);
}

/* A file without a summary: each cell against the first of its group, computed here. */
static void computed_verdicts(FILE *f, const struct hfile *hf)
{
    size_t *group = hd_groups(hf, false);
    double seed = 1;
    bool any = false;

    hd_number(hf->head, &seed, EV_PLAN, "seed", NULL);
    fputs("<p class=\"muted\">This file holds no summary (one run per cell, or a --jsonl file): "
          "each cell against the first of its chart, computed here as <code>run --reps</code> "
          "computes its summary.</p>\n",
          f);
    for (size_t g = 0; g < hf->ncells; g++) {
        char name[TEXT_SAFE_CAP];
        size_t n = 0;
        for (size_t c = g; c < hf->ncells; c++)
            n += group[c] == g;
        if (group[g] != g || n < 2) continue;
        any = true;
        hd_group_name(name, sizeof(name), &hf->cells[g], false);
        fputs("<h4>", f);
        html_text(f, name);
        fputs("</h4>\n", f);
        metric_heads(f);
        for (size_t c = g; c < hf->ncells; c++)
            if (group[c] == g) computed_row(f, &hf->cells[g], &hf->cells[c], (uint64_t)seed);
        fputs("</table>\n", f);
    }
    if (!any) fputs("<p class=\"na\">n/a: no cell has another to be compared with</p>\n", f);
    free(group);
}

/* The evidence's summary: run's one, or the lab's one per size, mode and rate share. */
static void verdicts_section(FILE *f, const struct hfile *hf)
{
    const json_t *summary = json_object_get(hf->head, EV_SUMMARY);
    size_t i;
    json_t *part;

    fputs("<h3>Verdicts</h3>\n<p class=\"muted\">Each cell against the first of its summary: "
          "the ratio of medians with its bootstrap 95 % interval and the Mann-Whitney p, as "
          "the summary printed it (<code>~</code>: not significant).</p>\n",
          f);
    if (json_is_object(summary)) {
        summary_table(f, hf, summary);
        return;
    }
    if (!json_is_array(summary) || json_array_size(summary) == 0) {
        computed_verdicts(f, hf);
        return;
    }
    json_array_foreach(summary, i, part)
    {
        char size[32], head[160];
        double sz = 0, share = 0;
        hd_number(part, &sz, EV_SIZE, NULL, NULL);
        hd_number(part, &share, EV_RATE_SHARE, NULL, NULL);
        size_text(size, sizeof(size), (long long)sz);
        if (share > 0)
            snprintf(head, sizeof(head), "%s %s, open loop at %g %% of the maximum", size,
                     json_string_value(json_object_get(part, EV_MODE)), share * 100);
        else
            snprintf(head, sizeof(head), "%s %s", size,
                     json_string_value(json_object_get(part, EV_MODE)));
        fputs("<h4>", f);
        html_text(f, head);
        fputs("</h4>\n", f);
        summary_table(f, hf, json_object_get(part, EV_SUMMARY));
    }
}

/* ---- the bottom line, first ---------------------------------------------------------------- */

static const char *verdict_class(enum bottom_verdict v)
{
    return v == BOTTOM_BETTER ? "better" : v == BOTTOM_WORSE ? "worse" : "same";
}

/* The files' bottom lines as one (each file's cells named by its title when there are several). */
static void bottom_of(const struct hfile *const *files, size_t n, struct bottom_line *all)
{
    const json_t *heads[HTML_MAX_FILES];
    const char *titles[HTML_MAX_FILES];

    for (size_t i = 0; i < n; i++) {
        heads[i] = files[i]->head;
        titles[i] = files[i]->title != NULL ? files[i]->title : n > 1 ? files[i]->path : NULL;
    }
    bottom_of_heads(heads, titles, n, all);
}

static void card(FILE *f, const char *cls, const char *big, const char *text)
{
    fprintf(f, "<div class=\"card %s\"><b>", cls);
    html_text(f, big);
    fputs("</b>", f);
    html_text(f, text);
    fputs("</div>\n", f);
}

/* Three or four cards: how many figures are better, worse, not significant; what it costs. */
static void bottom_cards(FILE *f, const struct bottom_line *b)
{
    size_t count[BOTTOM_VERDICTS] = { 0 };
    char big[32], text[3 * TEXT_SAFE_CAP], arm[TEXT_SAFE_CAP], base[TEXT_SAFE_CAP];
    const struct bottom_cost *priced = NULL;

    for (size_t i = 0; i < b->nrows; i++)
        count[b->rows[i].verdict]++;
    for (size_t i = 0; i < b->ncosts && priced == NULL; i++)
        if (b->costs[i].priced) priced = &b->costs[i];
    text_safe(arm, sizeof(arm), b->rows[0].arm);
    text_safe(base, sizeof(base), b->rows[0].base);
    fputs("<div class=\"cards\">\n", f);
    snprintf(big, sizeof(big), "%zu of %zu", count[BOTTOM_BETTER], b->nrows);
    snprintf(text, sizeof(text), "figures where %s is better than %s", arm, base);
    card(f, "better", big, text);
    snprintf(big, sizeof(big), "%zu of %zu", count[BOTTOM_WORSE], b->nrows);
    snprintf(text, sizeof(text), "figures where %s is worse", arm);
    card(f, "worse", big, text);
    snprintf(big, sizeof(big), "%zu of %zu",
             count[BOTTOM_SAME] + count[BOTTOM_NA] + count[BOTTOM_FEW] + count[BOTTOM_PLACEMENT],
             b->nrows);
    card(f, "same", big,
         count[BOTTOM_PLACEMENT] > 0
             ? "figures with no significant difference, too few runs, or a placement that "
               "differed (not a transport difference): not priced, not claimed"
         : count[BOTTOM_FEW] > 0
             ? "figures with no significant difference, or too few runs for a "
               "verdict: not priced, not claimed"
             : "figures with no significant difference: not priced, not claimed");
    if (priced != NULL) {
        char cell[TEXT_SAFE_CAP];
        bottom_cost_words(text, sizeof(text), priced);
        snprintf(big, sizeof(big), "cost");
        text_safe(cell, sizeof(cell), priced->cell);
        if (cell[0] != '\0') {
            size_t len = strlen(text);
            snprintf(text + len, sizeof(text) - len, " (%s)", cell);
        }
        card(f, priced->saved_ns > 0 ? "better" : "worse", big, text);
    }
    fputs("</div>\n", f);
}

/* The noisy runs' count, the last item of the bottom line's list. */
static void bottom_noisy(FILE *f, const struct bottom_line *b)
{
    char noisy[256];

    bottom_noisy_words(noisy, sizeof(noisy), b);
    if (noisy[0] == '\0') return;
    fputs("<li class=\"muted\">", f);
    html_text(f, noisy);
    fputs("</li>\n", f);
}

#define GRID_COLS 16

/*
 * A bottom line without verdicts (bottom_no_verdict) as the text prints it:
 * the sentence saying why, in a card, and per cell the ratios of the medians.
 */
static void bottom_grid(FILE *f, const struct bottom_line *b)
{
    const struct bottom_row *cols[GRID_COLS];
    size_t ncols = bottom_grid_cols(b, cols, GRID_COLS);
    char words[512], name[TEXT_SAFE_CAP + 8], v[32];
    bool absent = false;

    bottom_few_words(words, sizeof(words), b);
    fputs("<div class=\"cards\">\n", f);
    card(f, "few", "no verdict", words);
    fputs("</div>\n<table class=\"bottom grid\"><tr><th>cell</th>", f);
    for (size_t k = 0; k < ncols; k++) {
        bottom_grid_col_name(name, sizeof(name), cols[k]);
        fputs("<th>", f);
        html_text(f, name);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (size_t i = 0; i < b->nrows; i++) {
        if (!bottom_grid_cell_at(b, i)) continue;
        fputs("<tr class=\"row few\"><td class=\"cell\">", f);
        html_text(f, b->rows[i].cell);
        fputs("</td>", f);
        for (size_t k = 0; k < ncols; k++) {
            bottom_grid_value(v, sizeof(v), b, i, cols[k]);
            absent = absent || strcmp(v, BOTTOM_GRID_ABSENT) == 0;
            fputs("<td class=\"num\">", f);
            html_text(f, v);
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n<ul class=\"costs\">\n", f);
    if (absent) fputs("<li class=\"muted\">" BOTTOM_GRID_ABSENT_WORDS "</li>\n", f);
    bottom_noisy(f, b);
    fputs("</ul>\n", f);
}

/*
 * The bottom line as the text ends with it (report/bottom.c's words, read from
 * the evidence): cards, then per cell and figure both medians and the verdict;
 * without a verdict possible, the sentence and the ratios (bottom_grid).
 */
static void bottom_section(FILE *f, const struct hfile *const *files, size_t n)
{
    struct bottom_line b;
    char name[BOTTOM_NAME_CAP + 16], a[48], v[48], words[320];

    bottom_of(files, n, &b);
    if (b.nrows == 0) {
        bottom_release(&b);
        return;
    }
    fputs("<section class=\"bottom\" id=\"bottom-line\">\n<h2>The bottom line</h2>\n", f);
    if (bottom_no_verdict(&b)) {
        bottom_grid(f, &b);
        fputs("</section>\n", f);
        bottom_release(&b);
        return;
    }
    bottom_cards(f, &b);
    fputs("<table class=\"bottom\"><tr><th>cell</th><th>figure</th><th>", f);
    html_text(f, b.rows[0].base);
    fputs("</th><th>", f);
    html_text(f, b.rows[0].arm);
    fputs("</th><th>verdict: ratio of medians [95 % interval], Mann-Whitney p</th></tr>\n", f);
    for (size_t i = 0; i < b.nrows; i++) {
        const struct bottom_row *r = &b.rows[i];
        bottom_fig_name(name, sizeof(name), r);
        bottom_value_text(a, sizeof(a), r, r->base_median);
        bottom_value_text(v, sizeof(v), r, r->arm_median);
        bottom_words(words, sizeof(words), r);
        fprintf(f, "<tr class=\"row %s\"><td class=\"cell\">", verdict_class(r->verdict));
        if (i == 0 || strcmp(b.rows[i - 1].cell, r->cell) != 0) html_text(f, r->cell);
        fputs("</td><td class=\"fig\">", f);
        html_text(f, name);
        fputs("</td><td class=\"num\">", f);
        html_text(f, a);
        fputs("</td><td class=\"num\">", f);
        html_text(f, v);
        fprintf(f, "</td><td class=\"words %s\">", verdict_class(r->verdict));
        html_text(f, words);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n<ul class=\"costs\">\n", f);
    for (size_t i = 0; i < b.ncosts; i++) {
        char line[640];
        bottom_cost_words(words, sizeof(words), &b.costs[i]);
        snprintf(line, sizeof(line), "%s%s%s", b.costs[i].cell, b.costs[i].cell[0] ? ": " : "",
                 words);
        fprintf(f, "<li class=\"cost %s\">", b.costs[i].priced ? "priced" : "same");
        html_text(f, line);
        fputs("</li>\n", f);
    }
    bottom_noisy(f, &b);
    fputs("</ul>\n</section>\n", f);
    bottom_release(&b);
}

/* A cell of files[0] and its match in hf, or NULL. */
static const struct hcell *match_cell(const struct hfile *hf, const struct hcell *cell)
{
    for (size_t i = 0; i < hf->ncells; i++)
        if (evidence_same_cell(&hf->cells[i].key, &cell->key)) return &hf->cells[i];
    return NULL;
}

/* Each later file against the first, cell by cell, as compare does: one table per metric. */
static void deltas_section(FILE *f, const struct hfile *const *files, size_t n)
{
    const struct hfile *first = files[0];
    char name[TEXT_SAFE_CAP];

    fputs("<h3>Each file against the first</h3>\n<p class=\"muted\">Cells found in both: the "
          "ratio of medians (this file over the first) with its bootstrap 95 % interval and the "
          "Mann-Whitney p, as <code>hopbench compare</code> prints them.</p>\n",
          f);
    for (size_t m = 0; m < METRICS; m++) {
        const struct metric_def *d = metric_def(m);
        fputs("<table class=\"deltas\"><tr><th>", f);
        html_text(f, d->cmp_label);
        fputs("</th>", f);
        for (size_t k = 1; k < n; k++) {
            fputs("<th>", f);
            html_text(f, files[k]->path);
            fputs("</th>", f);
        }
        fputs("</tr>\n", f);
        for (size_t c = 0; c < first->ncells; c++) {
            const struct hcell *a = &first->cells[c];
            size_t cap = json_array_size(a->runs) + 1;
            double *xa = xcalloc(cap, sizeof(*xa));
            size_t na = metric_values(a, d, xa);
            hd_cell_name(name, sizeof(name), a);
            /* a later file's runs of the cell that waited otherwise, as compare says it (once:
             * a cell whose own runs differ already says so) */
            for (size_t k = 1; k < n && a->wait_other[0] == '\0'; k++) {
                const struct hcell *b = match_cell(files[k], a);
                const char *other = b == NULL ? "" : b->key.wait;
                if (b != NULL && (other[0] == '\0' || strcmp(other, a->key.wait) == 0))
                    other = b->wait_other;
                if (other[0] == '\0' || strcmp(other, a->key.wait) == 0) continue;
                evidence_label_change(name, sizeof(name), "wait ", a->key.wait, other);
                break;
            }
            fputs("<tr><td>", f);
            html_text(f, name);
            fputs("</td>", f);
            for (size_t k = 1; k < n; k++) {
                const struct hcell *b = match_cell(files[k], a);
                struct stats_delta delta;
                double *xb;
                size_t nb;
                fputs("<td class=\"num\">", f);
                if (b == NULL) {
                    fputs("<span class=\"na\">not in this file</span></td>", f);
                    continue;
                }
                xb = xcalloc(json_array_size(b->runs) + 1, sizeof(*xb));
                nb = metric_values(b, d, xb);
                stats_delta(xa, na, xb, nb, HTML_SEED, &delta);
                html_text(f, delta.text);
                free(xb);
                fputs("</td>", f);
            }
            fputs("</tr>\n", f);
            free(xa);
        }
        fputs("</table>\n", f);
    }
}

/* ---- the kernel evidence -------------------------------------------------------------- */

/* A table cell: text when known, else "n/a (why)", marked as such. */
static void known_cell(FILE *f, bool known, const char *text, const char *why)
{
    char na[320];

    if (known) {
        fputs("<td class=\"num\">", f);
    } else {
        snprintf(na, sizeof(na), "n/a (%s)", why);
        text = na;
        fputs("<td class=\"na\">", f);
    }
    html_text(f, text);
    fputs("</td>", f);
}

/* The largest of a gauge's peaks over the cell's runs, or n/a and the first reason. */
static void gauge_cell(FILE *f, const struct hcell *cell, const char *a, const char *b,
                       const char *c)
{
    const char *transport =
        json_string_value(json_object_get(json_array_get(cell->runs, 0), EV_TRANSPORT));
    double best = -1, v;
    char why[256] = "not in the evidence", text[320];
    size_t i;
    json_t *run;

    json_array_foreach(cell->runs, i, run)
    {
        char w[256];
        if (hd_figure(json_object_get(run, EV_OBSERVED), &v, w, sizeof(w), a, b, c)) {
            if (v > best) best = v;
        } else if (best < 0) {
            memcpy(why, w, sizeof(why));
        }
    }
    if (best >= 0) {
        svg_number(text, sizeof(text), best);
    } else if (strncmp(b, "time_wait", 9) == 0 && transport != NULL &&
               strcmp(transport, "unix") == 0) {
        /* not a figure missing: a Unix socket has none, 0 as the stacks' tables say */
        snprintf(text, sizeof(text), "0 (a Unix socket has no TIME_WAIT)");
        best = 0;
    }
    known_cell(f, best >= 0, text, why);
}

/*
 * The server's PSS at the end, the largest over the cell's runs; when no
 * server was named but services were (a stack's), each service's by its name
 * ("redis 2,345,678"): a measured service is never shown as n/a for a
 * server that was not given.
 */
static void pss_cell(FILE *f, const struct hcell *cell)
{
    const json_t *svcs =
        json_object_get(json_object_get(json_array_get(cell->runs, 0), EV_OBSERVED), "services");
    char text[512] = "", num[48], why[256];
    size_t i, len = 0;
    json_t *run;
    double v;

    if (json_array_size(svcs) == 0 ||
        hd_figure(json_object_get(json_array_get(cell->runs, 0), EV_OBSERVED), &v, why, sizeof(why),
                  "memory", "server_pss_end", NULL)) {
        gauge_cell(f, cell, "memory", "server_pss_end", NULL);
        return;
    }
    for (size_t j = 0; j < json_array_size(svcs) && len < sizeof(text); j++) {
        const char *name = json_string_value(json_object_get(json_array_get(svcs, j), "name"));
        double best = -1;
        char raw[TEXT_SAFE_CAP], shown[TEXT_SAFE_CAP];
        snprintf(why, sizeof(why), "not in the evidence");
        json_array_foreach(cell->runs, i, run)
        {
            const json_t *svc =
                json_array_get(json_object_get(json_object_get(run, EV_OBSERVED), "services"), j);
            char w[256];
            if (hd_figure(svc, &v, w, sizeof(w), "pss_end", NULL, NULL)) {
                if (v > best) best = v;
            } else if (best < 0) {
                memcpy(why, w, sizeof(why));
            }
        }
        if (best >= 0)
            svg_number(num, sizeof(num), best);
        else
            snprintf(num, sizeof(num), "n/a (%.40s)", why);
        snprintf(raw, sizeof(raw), "%s", name != NULL ? name : "service");
        len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s %s", j > 0 ? "; " : "",
                                text_safe(shown, sizeof(shown), raw), num);
    }
    known_cell(f, true, text, "");
}

/* The kernel counters that moved, summed over the cell's runs. */
static void net_cell(FILE *f, const struct hcell *cell)
{
    json_t *sums = json_object(), *run, *v;
    const char *key;
    size_t i;
    bool any = false;

    json_array_foreach(cell->runs, i, run)
    {
        json_t *delta = json_object_get(json_object_get(run, EV_OBSERVED), "net_delta");
        json_object_foreach(delta, key, v)
        {
            double before = 0;
            if (!json_is_number(v)) continue;
            hd_number(sums, &before, key, NULL, NULL);
            json_object_set_new(sums, key, json_real(before + json_number_value(v)));
        }
    }
    fputs("<td>", f);
    json_object_foreach(sums, key, v)
    {
        char num[64];
        if (json_real_value(v) == 0) continue;
        svg_number(num, sizeof(num), json_real_value(v));
        if (any) fputs(", ", f);
        html_text(f, key);
        fputc(' ', f);
        html_text(f, num);
        any = true;
    }
    if (!any) fputs("<span class=\"muted\">none moved</span>", f);
    fputs("</td>", f);
    json_decref(sums);
}

static void kernel_section(FILE *f, const struct hfile *hf)
{
    char name[TEXT_SAFE_CAP];

    fputs("<h3>Kernel evidence</h3>\n<p class=\"muted\">Per cell over its runs: the largest "
          "socket peaks the sampler saw (whole counts, earlier runs' sockets included), the "
          "server's PSS at the end (each service's, by its name, where services were measured "
          "instead), and the kernel counters that moved, summed.</p>\n"
          "<table class=\"kernel\"><tr><th>cell</th><th>TIME_WAIT client</th>"
          "<th>TIME_WAIT server</th><th>established</th><th>accept queue</th>"
          "<th>server PSS end (B)</th><th>counters that moved</th></tr>\n",
          f);
    for (size_t c = 0; c < hf->ncells; c++) {
        const struct hcell *cell = &hf->cells[c];
        hd_cell_name(name, sizeof(name), cell);
        fputs("<tr><td>", f);
        html_text(f, name);
        fputs("</td>", f);
        gauge_cell(f, cell, "sockets", "time_wait_client", "peak");
        gauge_cell(f, cell, "sockets", "time_wait_server", "peak");
        gauge_cell(f, cell, "sockets", "established", "peak");
        gauge_cell(f, cell, "sockets", "listen_queue", "peak");
        pss_cell(f, cell);
        net_cell(f, cell);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* ---- the agent's figures ---------------------------------------------------------------- */

/* The service called name among list (a run's observed.services or agent.services), or NULL. */
static const json_t *service_named(const json_t *list, const char *name)
{
    size_t i;
    json_t *s;

    json_array_foreach(list, i, s)
    {
        const char *n = json_string_value(json_object_get(s, "name"));
        if (n != NULL && strcmp(n, name) == 0) return s;
    }
    return NULL;
}

/* hd_median_by's figure: the CPU per op of the service called arg as the run's agent read it. */
static bool agent_cpu(const json_t *run, const void *arg, double *out, char *why, size_t cap)
{
    const json_t *agent = json_object_get(run, EV_AGENT);
    const json_t *s = service_named(json_object_get(agent, "services"), arg);

    if (s == NULL) {
        snprintf(why, cap, "%s", agent == NULL ? "a run without the agent" : "the agent gave none");
        return false;
    }
    if (hd_figure(s, out, why, cap, "cpu_ns_per_op", NULL, NULL)) return true;
    if (json_is_null(json_object_get(s, "cpu_ns_per_op")))
        snprintf(why, cap, "the agent gave none");
    return false;
}

/* hd_median_by's figure: the same service's CPU per op as the run measured it itself. */
static bool local_cpu(const json_t *run, const void *arg, double *out, char *why, size_t cap)
{
    const json_t *s =
        service_named(json_object_get(json_object_get(run, EV_OBSERVED), "services"), arg);

    if (s != NULL) return hd_figure(s, out, why, cap, "cpu_ns_per_op", NULL, NULL);
    snprintf(why, cap, "not measured here");
    return false;
}

/* hd_median_by's figure: the agent's figure of the service over the run's own. */
static bool agent_local(const json_t *run, const void *arg, double *out, char *why, size_t cap)
{
    double ag, local;

    if (!agent_cpu(run, arg, &ag, why, cap) || !local_cpu(run, arg, &local, why, cap)) return false;
    if (local <= 0) {
        snprintf(why, cap, "no CPU measured here");
        return false;
    }
    *out = ag / local;
    return true;
}

/*
 * A table cell: the median of fig over cell's runs that count and have it
 * (hd_median_known: the stack's table's rule), in µs from ns ("16.3"), or as a
 * ratio ("x1.002"), "(1 of 2 runs)" after it when not every run has it; else
 * n/a (why).
 */
static void median_cell(FILE *f, const struct hcell *cell, hd_figure_fn *fig, const char *name,
                        bool ratio)
{
    char why[256], text[96] = "", note[48];
    double v;
    size_t known = hd_median_known(cell, fig, name, &v, why, sizeof(why));
    size_t len;

    if (known > 0 && ratio)
        text_ratio(text, sizeof(text), v, 3);
    else if (known > 0)
        svg_number(text, sizeof(text), v / 1e3);
    stats_known_note(note, sizeof(note), known, cell->counted);
    len = strlen(text);
    if (note[0] != '\0') snprintf(text + len, sizeof(text) - len, " (%s)", note);
    known_cell(f, known > 0, text, why);
}

/*
 * With --agent: per cell and service the agent named, its CPU per op as the
 * agent read it, as the run read it, and the median of their ratio. Nothing
 * when no run has an agent's evidence.
 */
static void agent_section(FILE *f, const struct hfile *hf)
{
    char name[TEXT_SAFE_CAP];
    bool head = false;

    for (size_t c = 0; c < hf->ncells; c++) {
        const struct hcell *cell = &hf->cells[c];
        const json_t *svcs = NULL, *run, *s;
        size_t i;

        json_array_foreach(cell->runs, i, run)
        {
            svcs = json_object_get(json_object_get(run, EV_AGENT), "services");
            if (svcs != NULL) break;
        }
        if (svcs == NULL) continue;
        if (!head)
            fputs("<h3>The agent's figures</h3>\n<p class=\"muted\">Per cell over its runs that "
                  "count, medians: each service's CPU per op as the agent (<code>--agent</code>) "
                  "read it on its host, as the run read it on its own, and the agent's figure "
                  "over the run's.</p>\n<table class=\"agent\"><tr><th>cell</th><th>service</th>"
                  "<th>agent CPU &micro;s/op</th><th>local CPU &micro;s/op</th>"
                  "<th>agent/local</th></tr>\n",
                  f);
        head = true;
        hd_cell_name(name, sizeof(name), cell);
        json_array_foreach(svcs, i, s)
        {
            const char *sn = json_string_value(json_object_get(s, "name"));
            if (sn == NULL) continue;
            fputs("<tr><td>", f);
            html_text(f, name);
            fputs("</td><td>", f);
            html_text(f, sn);
            fputs("</td>", f);
            median_cell(f, cell, agent_cpu, sn, false);
            median_cell(f, cell, local_cpu, sn, false);
            median_cell(f, cell, agent_local, sn, true);
            fputs("</tr>\n", f);
        }
    }
    if (head) fputs("</table>\n", f);
}

/* The runs that do not count, each with why. */
static void invalid_list(FILE *f, const struct hfile *hf)
{
    char name[TEXT_SAFE_CAP], line[TEXT_SAFE_CAP + 128];
    bool any = false;

    for (size_t c = 0; c < hf->ncells; c++) {
        size_t i;
        json_t *run;
        hd_cell_name(name, sizeof(name), &hf->cells[c]);
        json_array_foreach(hf->cells[c].runs, i, run)
        {
            double rep = 0, errors = 0;
            if (evidence_run_counts(run)) continue;
            hd_number(run, &rep, EV_REP, NULL, NULL);
            hd_number(run, &errors, EV_ERRORS_TOTAL, NULL, NULL);
            if (!any) fputs("<ul class=\"invalid\">\n", f);
            any = true;
            snprintf(line, sizeof(line), "%s rep %.0f: %s", name, rep,
                     json_is_true(json_object_get(run, EV_INTERRUPTED)) ? "cut short"
                     : errors > 0                                       ? "invalid: it saw errors"
                                  : "invalid: no op completed");
            if (errors > 0)
                snprintf(line + strlen(line), sizeof(line) - strlen(line), " (%.0f)", errors);
            fputs("<li class=\"na\">", f);
            html_text(f, line);
            fputs("</li>\n", f);
        }
    }
    if (any)
        fputs("</ul>\n<p class=\"muted\">These runs are drawn as hollow dots and left out of "
              "medians, curves and verdicts.</p>\n",
              f);
}

static void file_section(FILE *f, const struct hfile *hf, size_t idx)
{
    const struct hfile *self = hf;
    char runs[128];
    size_t nruns = 0, counted = 0;
    bool open_loop = false;

    for (size_t c = 0; c < hf->ncells; c++) {
        nruns += json_array_size(hf->cells[c].runs);
        counted += hf->cells[c].counted;
    }
    fprintf(f, "<section class=\"file\" id=\"file%zu\">\n<h2>", idx);
    html_text(f, hf->title != NULL ? hf->title : hf->path);
    fputs("</h2>\n", f);
    snprintf(runs, sizeof(runs), "%zu runs in %zu cells, %zu of them count", nruns, hf->ncells,
             counted);
    fputs("<p class=\"muted\">", f);
    html_text(f, json_string_value(json_object_get(hf->head, EV_COMMAND)));
    fputs(": ", f);
    html_text(f, runs);
    fputs("</p>\n<h3>ops/s per cell</h3>\n", f);
    chart_ops(f, &self, 1);
    invalid_list(f, hf);
    fputs("<h3>ops/s and p99 across each run</h3>\n", f);
    chart_series(f, hf);
    fputs("<h3>Latency percentiles</h3>\n", f);
    chart_latency(f, hf);
    fputs("<h3>CPU per op, by who pays</h3>\n", f);
    chart_cpu(f, hf);
    fputs("<h3>Connection phases</h3>\n", f);
    chart_phases(f, hf);
    if (json_object_get(hf->head, EV_PROFILE) != NULL) {
        fputs("<h3>Where each request's CPU goes (--profile)</h3>\n", f);
        chart_profile(f, hf);
    }
    for (size_t c = 0; c < hf->ncells; c++)
        open_loop = open_loop || hd_open_loop(&hf->cells[c]);
    if (open_loop) { /* only where asked (--rate, lab --rates): else not an n/a but not drawn */
        fputs("<h3>Latency against the offered rate</h3>\n", f);
        chart_rates(f, hf);
    }
    verdicts_section(f, hf);
    kernel_section(f, hf);
    agent_section(f, hf);
    machine_section(f, hf);
    fputs("</section>\n", f);
}

struct page {
    const struct hfile *const *files;
    size_t n;
    bool parts;       /* the files are one stack's measurements, not files to compare */
    const char *text; /* the stack's own text, or NULL */
};

/* outfile_replace's writer: the whole page. */
static int write_page(FILE *f, void *ctx, struct hb_err *err)
{
    const struct page *p = ctx;

    UNUSED(err);
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<link rel=\"icon\" href=\"data:,\">\n<title>hopbench report</title>\n<style>",
          f);
    fputs(page_css, f);
    fputs("</style></head><body>\n<h1>hopbench report</h1>\n", f);
    bottom_section(f, p->files, p->n);
    if (p->text != NULL) {
        fputs("<section class=\"stack\" id=\"stack-text\">\n<h2>What the stack printed</h2>\n"
              "<p class=\"muted\">Its tables and what it reads beside them (lifecycle, load, "
              "cost), as on its standard output.</p>\n<pre>",
              f);
        html_text(f, p->text);
        fputs("</pre>\n</section>\n", f);
    }
    fputs("<ul class=\"files\">\n", f);
    for (size_t i = 0; i < p->n; i++) {
        fprintf(f, "<li><a href=\"#file%zu\">", i);
        html_text(f, p->files[i]->title != NULL ? p->files[i]->title : p->files[i]->path);
        fputs("</a></li>\n", f);
    }
    fputs("</ul>\n", f);
    if (p->n > 1 && !p->parts) {
        fputs("<section class=\"side-by-side\">\n<h2>The files side by side</h2>\n"
              "<h3>ops/s per cell</h3>\n",
              f);
        chart_ops(f, p->files, p->n);
        deltas_section(f, p->files, p->n);
        fputs("</section>\n", f);
    }
    for (size_t i = 0; i < p->n; i++)
        file_section(f, p->files[i], i);
    fputs("</body></html>\n", f);
    return ferror(f) ? -EIO : 0;
}

#define PAGE_WHO 16 /* services named on one page, each its own colour */

/* The services the files' runs measured, by name, in order of first appearance, into who. */
static size_t page_who(const struct hfile *files, size_t n, const char **who)
{
    size_t nwho = 0;

    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < files[i].ncells; c++) {
            size_t r, s;
            const json_t *run, *svc;
            json_array_foreach(files[i].cells[c].runs, r, run)
            {
                json_array_foreach(json_object_get(json_object_get(run, EV_OBSERVED), "services"),
                                   s, svc)
                {
                    const char *name = json_string_value(json_object_get(svc, "name"));
                    size_t k = 0;
                    while (name != NULL && k < nwho && strcmp(who[k], name) != 0)
                        k++;
                    if (name != NULL && k == nwho && nwho < PAGE_WHO) who[nwho++] = name;
                }
            }
        }
    return nwho;
}

int report_html_write(const char *out, const char *const *paths, size_t npaths, struct hb_err *err)
{
    return report_html_write_parts(out, paths, NULL, npaths, NULL, err);
}

int report_html_write_parts(const char *out, const char *const *paths, const char *const *titles,
                            size_t npaths, const char *text, struct hb_err *err)
{
    struct hfile files[HTML_MAX_FILES] = { 0 };
    const struct hfile *ptrs[HTML_MAX_FILES];
    struct page page = { .files = ptrs, .n = npaths, .parts = titles != NULL, .text = text };
    int rc = 0;

    if (npaths == 0 || npaths > HTML_MAX_FILES)
        return hb_fail(err, -EINVAL, "want 1 to %d evidence files, got %zu", HTML_MAX_FILES,
                       npaths);
    for (size_t i = 0; i < npaths && rc == 0; i++) {
        struct evidence_reader reader = { .take = take_run, .ctx = &files[i] };
        files[i].path = paths[i];
        files[i].title = titles != NULL ? titles[i] : NULL;
        ptrs[i] = &files[i];
        rc = evidence_read(paths[i], &reader, &files[i].head, err);
        if (rc == 0) rc = file_place(&files[i], err);
    }
    if (rc == 0) {
        const char *who[PAGE_WHO];
        size_t nwho = page_who(files, npaths, who);
        for (size_t i = 0; i < npaths; i++)
            files[i].who = who, files[i].nwho = nwho;
        rc = outfile_replace(out, write_page, &page, err);
    }
    for (size_t i = 0; i < npaths; i++)
        file_release(&files[i]);
    return rc;
}
