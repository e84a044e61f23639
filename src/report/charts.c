/*
 * charts: the SVG charts of the HTML report (see htmldata.h): ops/s per cell
 * with every rep, latency percentile curves on a nines axis, CPU per op
 * stacked by who pays, connection phases, latency against the offered rate.
 * Each is drawn from the cells' records and added histograms; a figure the
 * evidence lacks is left out of the drawing and listed with its reason.
 */
#include "report/charts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/schema.h"
#include "report/svg.h"
#include "stats.h"
#include "util.h"

#define CHART_W     900
#define PLOT_LEFT   20  /* row charts: labels above their row, the plot from here */
#define PLOT_RIGHT  740 /* ... to here; the value of the row after it */
#define CURVE_LEFT  80  /* curve charts: the y axis's labels left of it */
#define CURVE_RIGHT 880
#define CURVE_TOP   16
#define CURVE_H     260
#define LEGEND_ROW  16
#define NOTE_MAX    32
#define CURVE_STEPS 100 /* points of a percentile curve, 0 .. SVG_NINES_MAX nines */

static const char *const component_colour_rest = "#b0b0b0";

static void legend_line(FILE *f, double x, double y, const char *colour, const char *cls,
                        const char *text)
{
    fprintf(f,
            "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
            cls, x, y - 4, x + 24, y - 4, colour);
    svg_text(f, x + 30, y, "legend", "start", text);
}

static void legend_box(FILE *f, double x, double y, const char *colour, const char *text)
{
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>\n", x, y - 9,
            colour);
    svg_text(f, x + 14, y, "legend", "start", text);
}

/* Sets a's range to [lo, hi] rounded for its scale. */
static void axis_fit(struct svg_axis *a, double lo, double hi)
{
    svg_axis_round(a->scale, &lo, &hi);
    a->lo = lo;
    a->hi = hi;
}

/* ---- ops/s ---------------------------------------------------------------------------- */

/* A row of the ops chart: one cell key, its cell in each file (NULL where absent). */
struct ops_row {
    const struct hcell *cell[HTML_MAX_FILES];
};

static size_t ops_rows(const struct hfile *const *files, size_t n, struct ops_row **out)
{
    size_t cap = 0, nrows = 0;
    struct ops_row *rows;

    for (size_t k = 0; k < n; k++)
        cap += files[k]->ncells;
    rows = xcalloc(cap ? cap : 1, sizeof(*rows));
    for (size_t k = 0; k < n; k++)
        for (size_t c = 0; c < files[k]->ncells; c++) {
            const struct hcell *cell = &files[k]->cells[c];
            size_t r = 0;
            for (; r < nrows; r++) {
                const struct hcell *any = NULL;
                for (size_t j = 0; j < n && any == NULL; j++)
                    any = rows[r].cell[j];
                if (evidence_same_cell(&any->key, &cell->key)) break;
            }
            if (r == nrows) nrows++;
            rows[r].cell[k] = cell;
        }
    *out = rows;
    return nrows;
}

static double ops_max(const struct ops_row *rows, size_t nrows, size_t n)
{
    double hi = 0, v;

    for (size_t r = 0; r < nrows; r++)
        for (size_t k = 0; k < n; k++) {
            size_t i;
            json_t *run;
            if (rows[r].cell[k] == NULL) continue;
            json_array_foreach(rows[r].cell[k]->runs, i, run)
            {
                if (hd_number(run, &v, EV_OPS_PER_S, NULL, NULL) && v > hi) hi = v;
            }
        }
    return hi;
}

/* One file's dots and median in a row, on the line y. */
static void ops_series(FILE *f, const struct hcell *cell, const struct svg_axis *x, double y,
                       const char *colour)
{
    size_t i;
    json_t *run;
    double med, v;
    char why[128], num[64];

    json_array_foreach(cell->runs, i, run)
    {
        bool counts = evidence_run_counts(run);
        if (!hd_number(run, &v, EV_OPS_PER_S, NULL, NULL)) continue;
        fprintf(f,
                "<circle class=\"rep%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\" "
                "stroke=\"%s\" fill-opacity=\"0.6\"/>\n",
                counts ? "" : " bad", svg_map(x, v), y, counts ? colour : "#fff", colour);
    }
    if (!hd_median(cell, &med, why, sizeof(why), EV_OPS_PER_S, NULL, NULL)) {
        svg_text(f, PLOT_RIGHT + 10, y + 4, "median-val na", "start", "no run counts");
        return;
    }
    fprintf(f,
            "<line class=\"median\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"%s\"/>\n",
            svg_map(x, med), y - 7, svg_map(x, med), y + 7, colour);
    svg_number(num, sizeof(num), med);
    svg_text(f, PLOT_RIGHT + 10, y + 4, "median-val", "start", num);
}

void chart_ops(FILE *f, const struct hfile *const *files, size_t n)
{
    struct ops_row *rows;
    size_t nrows = ops_rows(files, n, &rows);
    double row_h = 18 + 14.0 * (double)n, top = 8 + (n > 1 ? LEGEND_ROW * (double)n : 0);
    double lo = 0, hi = 0, bottom = top + row_h * (double)nrows;
    struct svg_axis x = { SVG_LINEAR, 0, 0, PLOT_LEFT, PLOT_RIGHT };
    char name[TEXT_SAFE_CAP];

    if (nrows == 0) {
        fputs("<p class=\"na\">n/a: no runs</p>\n", f);
        free(rows);
        return;
    }
    hi = ops_max(rows, nrows, n);
    axis_fit(&x, lo, hi);
    svg_open(f, "ops", CHART_W, (int)(bottom + 44),
             "ops/s per cell: every rep a dot (hollow: it does not count), the median a bar "
             "and its figure on the right");
    for (size_t k = 0; n > 1 && k < n; k++)
        legend_box(f, PLOT_LEFT, 8 + LEGEND_ROW * (double)(k + 1) - 4, svg_colour(k),
                   files[k]->path);
    svg_axis_x(f, &x, bottom + 4, top, "ops/s");
    svg_text(f, PLOT_RIGHT + 10, top - 2 + (n > 1 ? 0 : 10), "tick", "start", "median");
    for (size_t r = 0; r < nrows; r++) {
        double y0 = top + row_h * (double)r;
        const struct hcell *any = NULL;
        for (size_t k = 0; k < n && any == NULL; k++)
            any = rows[r].cell[k];
        hd_cell_name(name, sizeof(name), any);
        svg_text(f, PLOT_LEFT, y0 + 12, "row-label", "start", name);
        for (size_t k = 0; k < n; k++)
            if (rows[r].cell[k] != NULL)
                ops_series(f, rows[r].cell[k], &x, y0 + 22 + 14.0 * (double)k,
                           n > 1 ? svg_colour(k) : hd_colour(rows[r].cell[k], r));
    }
    svg_close(f);
    free(rows);
}

/* ---- groups of cells ------------------------------------------------------------------ */

static void group_heading(FILE *f, const struct hcell *cell, bool any_rate)
{
    char name[TEXT_SAFE_CAP];

    hd_group_name(name, sizeof(name), cell, any_rate);
    fputs("<h4>", f);
    html_text(f, name);
    fputs("</h4>\n", f);
}

/* ---- latency percentiles -------------------------------------------------------------- */

/* The value of h at n nines, in µs: the minimum at 0. */
static double curve_us(const struct hsparse *h, double nines)
{
    if (nines <= 0) return (double)h->min / 1000;
    return (double)hd_percentile(h, svg_percentile_at(nines)) / 1000;
}

static void curve(FILE *f, const struct hsparse *h, const struct svg_axis *x,
                  const struct svg_axis *y, const char *cls, const char *colour)
{
    fprintf(f, "<polyline class=\"%s\" stroke=\"%s\" points=\"", cls, colour);
    for (int i = 0; i <= CURVE_STEPS; i++) {
        double nines = SVG_NINES_MAX * i / CURVE_STEPS;
        fprintf(f, "%s%.1f,%.1f", i ? " " : "", svg_map(x, svg_percentile_at(nines)),
                svg_map(y, curve_us(h, nines)));
    }
    fputs("\"/>\n", f);
}

/* The y range of the group's curves, in µs. */
static void curve_range(const struct hfile *hf, const size_t *group, size_t g, double *lo,
                        double *hi)
{
    *lo = 0;
    *hi = 0;
    for (size_t c = g; c < hf->ncells; c++) {
        const struct hcell *cell = &hf->cells[c];
        const struct hsparse *hs[2] = { cell->lat, cell->svc };
        if (group[c] != g) continue;
        for (int i = 0; i < 2; i++) {
            if (hs[i] == NULL || hs[i]->total == 0) continue;
            if (*lo == 0 || (double)hs[i]->min / 1000 < *lo) *lo = (double)hs[i]->min / 1000;
            if ((double)hs[i]->max / 1000 > *hi) *hi = (double)hs[i]->max / 1000;
        }
    }
}

/* A curve's legend: "PLACE intended time, p99 12.3 µs, max 45.6 µs (n runs)". */
static void curve_legend(FILE *f, double y, const struct hcell *cell, const struct hsparse *h,
                         const char *what, const char *cls, const char *colour)
{
    char text[TEXT_SAFE_CAP + 160], place[TEXT_SAFE_CAP], raw[TEXT_SAFE_CAP], p99[32], max[32];

    hd_short(place, sizeof(place), text_safe(raw, sizeof(raw), hd_place(cell)));
    svg_number(p99, sizeof(p99), (double)hd_percentile(h, 99) / 1000);
    svg_number(max, sizeof(max), (double)h->max / 1000);
    snprintf(text, sizeof(text), "%s%s: p99 %s µs, max %s µs (%zu run%s)", place, what, p99, max,
             cell->counted, cell->counted == 1 ? "" : "s");
    legend_line(f, CURVE_LEFT, y, colour, cls, text);
}

static void latency_group(FILE *f, const struct hfile *hf, const size_t *group, size_t g)
{
    size_t ncurves = 0, k = 0, li = 0;
    double lo, hi, y_leg;
    struct svg_axis x = { SVG_NINES, 0, 0, CURVE_LEFT, CURVE_RIGHT };
    struct svg_axis y = { SVG_LOG, 0, 0, CURVE_TOP + CURVE_H, CURVE_TOP };

    for (size_t c = g; c < hf->ncells; c++)
        if (group[c] == g) ncurves += (hf->cells[c].lat != NULL) + (hf->cells[c].svc != NULL);
    group_heading(f, &hf->cells[g], false);
    if (ncurves == 0) {
        fputs("<p class=\"na\">n/a: no run of these cells counts</p>\n", f);
        return;
    }
    curve_range(hf, group, g, &lo, &hi);
    axis_fit(&x, 0, 100);
    axis_fit(&y, lo, hi);
    y_leg = CURVE_TOP + CURVE_H + 52;
    svg_open(f, "latency", CHART_W, (int)(y_leg + LEGEND_ROW * (double)ncurves),
             "latency percentiles: x the percentile on a nines axis, y µs on a log scale; one "
             "curve per endpoint, an open loop's service time dashed");
    svg_axis_x(f, &x, CURVE_TOP + CURVE_H, CURVE_TOP, "percentile");
    svg_axis_y(f, &y, CURVE_LEFT, CURVE_RIGHT, "latency µs");
    for (size_t c = g; c < hf->ncells; c++) {
        const struct hcell *cell = &hf->cells[c];
        bool open = cell->svc != NULL;
        if (group[c] != g || cell->lat == NULL) continue;
        curve(f, cell->lat, &x, &y, "curve", hd_colour(cell, k));
        curve_legend(f, y_leg + LEGEND_ROW * (double)li++, cell, cell->lat,
                     open ? " intended time" : "", "curve", hd_colour(cell, k));
        if (open) {
            curve(f, cell->svc, &x, &y, "curve service", hd_colour(cell, k));
            curve_legend(f, y_leg + LEGEND_ROW * (double)li++, cell, cell->svc, " service time",
                         "curve service", hd_colour(cell, k));
        }
        k++;
    }
    svg_close(f);
}

void chart_latency(FILE *f, const struct hfile *hf)
{
    size_t *group = hd_groups(hf, false);

    fputs("<p class=\"muted\">Per cell the histograms of its runs that count, added. An open "
          "loop's latency counts from each request's intended send time; its service time "
          "(from the actual send) is the dashed curve.</p>\n",
          f);
    for (size_t c = 0; c < hf->ncells; c++)
        if (group[c] == c) latency_group(f, hf, group, c);
    if (hf->ncells == 0) fputs("<p class=\"na\">n/a: no runs</p>\n", f);
    free(group);
}

/* ---- CPU per op ----------------------------------------------------------------------- */

/* An n/a figure: which component, why, in how many cells. */
struct note {
    char what[64], why[192];
    size_t cells;
};

struct notes {
    struct note note[NOTE_MAX];
    size_t n, dropped;
};

static void note_add(struct notes *ns, const char *what, const char *why)
{
    for (size_t i = 0; i < ns->n; i++)
        if (strcmp(ns->note[i].what, what) == 0 && strcmp(ns->note[i].why, why) == 0) {
            ns->note[i].cells++;
            return;
        }
    if (ns->n == NOTE_MAX) {
        ns->dropped++;
        return;
    }
    snprintf(ns->note[ns->n].what, sizeof(ns->note[0].what), "%s", what);
    snprintf(ns->note[ns->n].why, sizeof(ns->note[0].why), "%s", why);
    ns->note[ns->n++].cells = 1;
}

static void notes_print(FILE *f, const struct notes *ns)
{
    char line[320];

    if (ns->n == 0) return;
    fputs("<ul class=\"na-list\">\n", f);
    for (size_t i = 0; i < ns->n; i++) {
        snprintf(line, sizeof(line), "%s: n/a (%s) in %zu cell%s", ns->note[i].what,
                 ns->note[i].why, ns->note[i].cells, ns->note[i].cells == 1 ? "" : "s");
        fputs("<li class=\"na\">", f);
        html_text(f, line);
        fputs("</li>\n", f);
    }
    if (ns->dropped > 0) fprintf(f, "<li class=\"na\">and %zu more</li>\n", ns->dropped);
    fputs("</ul>\n", f);
}

/* hd_median_by's figure: observed.services[*arg].cpu_ns_per_op. */
static bool service_cpu(const json_t *run, const void *arg, double *out, char *why, size_t cap)
{
    const json_t *svc = json_array_get(
        json_object_get(json_object_get(run, EV_OBSERVED), "services"), *(const size_t *)arg);

    return hd_figure(svc, out, why, cap, "cpu_ns_per_op", NULL, NULL);
}

#define CPU_PARTS 12 /* client, server, up to 9 services, the rest of the system */

/* A cell's CPU per op by who pays, in µs; a part that is n/a is < 0 and noted. */
struct cpu_parts {
    double v[CPU_PARTS];
    const char *name[CPU_PARTS];
    const char *colour[CPU_PARTS];
    size_t n;
    double system; /* < 0: n/a */
};

/*
 * The colour of a service: by its place in the page's services (hf->who), so that
 * php-fpm is one colour in the bare FastCGI hop's chart and in nginx → php-fpm's; after
 * the server's (red) when the cell has one; never the client's blue nor the orange of unix.
 */
static const char *service_colour(const struct hfile *hf, const char *name, size_t j, bool server)
{
    static const size_t slot[] = { 1, 2, 4, 5, 6, 7, 8, 9 };
    size_t k = j;

    for (size_t i = 0; i < hf->nwho; i++)
        if (strcmp(hf->who[i], name) == 0) k = i;
    return svg_colour(slot[(k + (server ? 1 : 0)) % (sizeof(slot) / sizeof(slot[0]))]);
}

static void cpu_parts_of(const struct hfile *hf, const struct hcell *cell, struct cpu_parts *p,
                         struct notes *ns)
{
    const json_t *services =
        json_object_get(json_object_get(json_array_get(cell->runs, 0), EV_OBSERVED), "services");
    double sum = 0, v;
    char why[192];
    bool server;

    *p = (struct cpu_parts){ .name = { "client", "server" },
                             .colour = { svg_colour(0), svg_colour(1) },
                             .n = 2,
                             .system = -1 };
    if (hd_median(cell, &v, why, sizeof(why), EV_OBSERVED, "cpu", "client_ns_per_op"))
        p->v[0] = v / 1000;
    else
        p->v[0] = -1, note_add(ns, "client", why);
    if (hd_median(cell, &v, why, sizeof(why), EV_OBSERVED, "cpu", "server_ns_per_op"))
        p->v[1] = v / 1000;
    else if (json_array_size(services) > 0) /* measured as services, by their names */
        p->n = 1;
    else
        p->v[1] = -1, note_add(ns, "server", why);
    server = p->n == 2;
    for (size_t j = 0; j < json_array_size(services) && p->n < CPU_PARTS - 1; j++) {
        const char *name = json_string_value(json_object_get(json_array_get(services, j), "name"));
        p->name[p->n] = name != NULL ? name : "service";
        p->colour[p->n] = service_colour(hf, p->name[p->n], j, server);
        if (hd_median_by(cell, service_cpu, &j, &v, why, sizeof(why)))
            p->v[p->n] = v / 1000;
        else
            p->v[p->n] = -1, note_add(ns, p->name[p->n], why);
        p->n++;
    }
    if (hd_median(cell, &v, why, sizeof(why), EV_OBSERVED, "cpu", "system_ns_per_op"))
        p->system = v / 1000;
    else
        note_add(ns, "system", why);
    for (size_t i = 0; i < p->n; i++)
        sum += p->v[i] > 0 ? p->v[i] : 0;
    p->name[p->n] = "system/softirq, the rest";
    p->colour[p->n] = component_colour_rest;
    p->v[p->n++] = p->system >= 0 ? (p->system > sum ? p->system - sum : 0) : -1;
}

static void cpu_row(FILE *f, const struct cpu_parts *p, const struct svg_axis *x, double y0)
{
    double at = 0, total = 0;
    char num[48], text[96];

    for (size_t i = 0; i < p->n; i++) {
        if (p->v[i] <= 0) continue;
        fprintf(f,
                "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"14\" "
                "fill=\"%s\"><title>",
                svg_map(x, at), y0 + 16, svg_map(x, at + p->v[i]) - svg_map(x, at), p->colour[i]);
        html_text(f, p->name[i]);
        fprintf(f, " %.3g µs/op</title></rect>\n", p->v[i]);
        at += p->v[i];
        total += p->v[i];
    }
    svg_number(num, sizeof(num), p->system >= 0 ? p->system : total);
    snprintf(text, sizeof(text), "%s µs%s", num, p->system >= 0 ? "" : " (no system)");
    svg_text(f, PLOT_RIGHT + 10, y0 + 27, "cpu-val", "start", text);
}

void chart_cpu(FILE *f, const struct hfile *hf)
{
    struct cpu_parts *parts = xcalloc(hf->ncells ? hf->ncells : 1, sizeof(*parts));
    struct notes *ns = xcalloc(1, sizeof(*ns));
    struct svg_axis x = { SVG_LINEAR, 0, 0, PLOT_LEFT, PLOT_RIGHT };
    double lo = 0, hi = 0, top = 8 + LEGEND_ROW, row_h = 34;
    size_t legend = 0;
    char name[TEXT_SAFE_CAP];

    for (size_t c = 0; c < hf->ncells; c++) {
        double sum = 0;
        cpu_parts_of(hf, &hf->cells[c], &parts[c], ns);
        for (size_t i = 0; i < parts[c].n; i++)
            sum += parts[c].v[i] > 0 ? parts[c].v[i] : 0;
        if (sum > hi) hi = sum;
        if (parts[c].n > parts[legend].n) legend = c;
    }
    if (hf->ncells == 0 || hi <= 0) {
        fputs("<p class=\"na\">n/a: no run that counts has a CPU figure</p>\n", f);
        notes_print(f, ns);
        free(parts);
        free(ns);
        return;
    }
    axis_fit(&x, lo, hi);
    svg_open(f, "cpu", CHART_W, (int)(top + row_h * (double)hf->ncells + 44),
             "CPU per op in µs, stacked by who pays: the client's load threads, the server, each "
             "named service, and the rest of the system's busy time (softirq, kernel, others); "
             "on the right the whole system's");
    for (size_t i = 0, xl = PLOT_LEFT; i < parts[legend].n; i++) {
        legend_box(f, (double)xl, 14, parts[legend].colour[i], parts[legend].name[i]);
        xl += 24 + 7 * strlen(parts[legend].name[i]);
    }
    svg_text(f, PLOT_RIGHT + 10, 14, "tick", "start", "system");
    svg_axis_x(f, &x, top + row_h * (double)hf->ncells + 4, top, "CPU µs per op");
    for (size_t c = 0; c < hf->ncells; c++) {
        double y0 = top + row_h * (double)c;
        hd_cell_name(name, sizeof(name), &hf->cells[c]);
        svg_text(f, PLOT_LEFT, y0 + 12, "row-label", "start", name);
        cpu_row(f, &parts[c], &x, y0);
    }
    svg_close(f);
    notes_print(f, ns);
    free(parts);
    free(ns);
}

/* ---- connection phases ---------------------------------------------------------------- */

static const char *const phase_key[4] = { "connect", "ttfb", "response", "close" };
static const char *const phase_name[4] = { "connect", "first byte", "whole reply", "close" };

/* hd_median_by's figure: phases[arg].latency_ns.p50, in ns. */
static bool phase_p50(const json_t *run, const void *arg, double *out, char *why, size_t cap)
{
    const json_t *phase = json_object_get(json_object_get(run, EV_PHASES), arg);

    return hd_figure(phase, out, why, cap, EV_LATENCY_NS, EV_P50, NULL);
}

/* A phase bar's pitch: its value's label (svg text, 11 px) clear of the next bar's. */
#define PHASE_PITCH 13.0
#define PHASE_TOP   18.0 /* below the row's label */

/* How many of a cell's four phases were measured (p50 >= 0). */
static int phases_known(const double *p50)
{
    int n = 0;

    for (int p = 0; p < 4; p++)
        n += p50[p] >= 0;
    return n;
}

void chart_phases(FILE *f, const struct hfile *hf)
{
    double(*p50)[4] = xcalloc(hf->ncells ? hf->ncells : 1, sizeof(*p50));
    struct notes *ns = xcalloc(1, sizeof(*ns));
    struct svg_axis x = { SVG_LINEAR, 0, 0, PLOT_LEFT, PLOT_RIGHT };
    double lo = 0, hi = 0, top = 8 + LEGEND_ROW, height = 0;
    char name[TEXT_SAFE_CAP], num[48];

    for (size_t c = 0; c < hf->ncells; c++) {
        for (int p = 0; p < 4; p++) {
            char why[128];
            if (hd_median_by(&hf->cells[c], phase_p50, phase_key[p], &p50[c][p], why, sizeof(why)))
                p50[c][p] /= 1000;
            else
                p50[c][p] = -1;
            if (p50[c][p] > hi) hi = p50[c][p];
        }
        if (phases_known(p50[c]) > 0)
            height += PHASE_TOP + PHASE_PITCH * phases_known(p50[c]) + 6;
        else
            note_add(ns, "phases", hf->cells[c].counted ? "not measured" : "no run counts");
    }
    if (height == 0) {
        fputs("<p class=\"na\">n/a: no run that counts measured its phases</p>\n", f);
        free(p50);
        free(ns);
        return;
    }
    axis_fit(&x, lo, hi);
    svg_open(f, "phases", CHART_W, (int)(top + height + 44),
             "connection phases per cell, the median over its runs of each phase's p50 in µs: "
             "connect, request written to first reply byte, to whole reply, close");
    for (int p = 0; p < 4; p++)
        legend_box(f, PLOT_LEFT + 120.0 * p, 14, svg_colour((size_t)p), phase_name[p]);
    svg_axis_x(f, &x, top + height + 4, top, "p50 µs");
    for (size_t c = 0; c < hf->ncells; c++) {
        double y0 = top; /* this row's top: each row as tall as its measured phases */
        int k = 0;
        if (phases_known(p50[c]) == 0) continue;
        hd_cell_name(name, sizeof(name), &hf->cells[c]);
        svg_text(f, PLOT_LEFT, y0 + 12, "row-label", "start", name);
        for (int p = 0; p < 4; p++) {
            double yb = y0 + PHASE_TOP + PHASE_PITCH * (double)k;
            if (p50[c][p] < 0) continue;
            fprintf(f,
                    "<rect class=\"phase\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"8\" "
                    "fill=\"%s\"/>\n",
                    (double)PLOT_LEFT, yb, svg_map(&x, p50[c][p]) - PLOT_LEFT,
                    svg_colour((size_t)p));
            svg_number(num, sizeof(num), p50[c][p]);
            svg_text(f, svg_map(&x, p50[c][p]) + 4, yb + 8, "phase-val", "start", num);
            k++;
        }
        top += PHASE_TOP + PHASE_PITCH * (double)k + 6;
    }
    svg_close(f);
    notes_print(f, ns);
    free(p50);
    free(ns);
}

/* ---- latency against the offered rate ------------------------------------------------- */

/* An open-loop cell's point: the rate offered, p50 and p99 of its intended time (µs). */
struct rate_point {
    double rate, p50, p99;
};

static int point_order(const void *pa, const void *pb)
{
    const struct rate_point *a = pa, *b = pb;

    return (a->rate > b->rate) - (a->rate < b->rate);
}

/* The points of the cells of group g whose place is that of cell c; how many. */
static size_t rate_points(const struct hfile *hf, const size_t *group, size_t g, size_t c,
                          struct rate_point *pt)
{
    size_t n = 0;
    char why[128];

    for (size_t d = g; d < hf->ncells; d++) {
        const struct hcell *cell = &hf->cells[d];
        double rate;
        if (group[d] != g || !hd_open_loop(cell) || cell->lat == NULL) continue;
        if (strcmp(hd_place(cell), hd_place(&hf->cells[c])) != 0) continue;
        if (!hd_median(cell, &rate, why, sizeof(why), EV_OPEN_LOOP, EV_RATE, NULL)) continue;
        pt[n++] = (struct rate_point){ rate, (double)hd_percentile(cell->lat, 50) / 1000,
                                       (double)hd_percentile(cell->lat, 99) / 1000 };
    }
    qsort(pt, n, sizeof(*pt), point_order);
    return n;
}

static void rate_line(FILE *f, const struct rate_point *pt, size_t n, const struct svg_axis *x,
                      const struct svg_axis *y, bool p99, const char *colour)
{
    fprintf(f, "<polyline class=\"rate %s\" stroke=\"%s\" points=\"", p99 ? "p99" : "p50", colour);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%.1f,%.1f", i ? " " : "", svg_map(x, pt[i].rate),
                svg_map(y, p99 ? pt[i].p99 : pt[i].p50));
    fputs("\"/>\n", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "<circle class=\"rate-point\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
                svg_map(x, pt[i].rate), svg_map(y, p99 ? pt[i].p99 : pt[i].p50), colour);
}

/* Whether cell c is the first of group g with its place (one series per place). */
static bool first_of_place(const struct hfile *hf, const size_t *group, size_t g, size_t c)
{
    for (size_t d = g; d < c; d++)
        if (group[d] == g && hd_open_loop(&hf->cells[d]) &&
            strcmp(hd_place(&hf->cells[d]), hd_place(&hf->cells[c])) == 0)
            return false;
    return true;
}

static void rates_group(FILE *f, const struct hfile *hf, const size_t *group, size_t g)
{
    struct rate_point *pt = xcalloc(hf->ncells, sizeof(*pt));
    struct svg_axis x = { SVG_LINEAR, 0, 0, CURVE_LEFT, CURVE_RIGHT };
    struct svg_axis y = { SVG_LOG, 0, 0, CURVE_TOP + CURVE_H, CURVE_TOP };
    double xlo = 0, xhi = 0, ylo = 0, yhi = 0, y_leg = CURVE_TOP + CURVE_H + 52;
    size_t series = 0, k = 0;
    char text[TEXT_SAFE_CAP + 32], place[TEXT_SAFE_CAP], raw[TEXT_SAFE_CAP];

    for (size_t c = g; c < hf->ncells; c++) {
        size_t n;
        if (group[c] != g || !hd_open_loop(&hf->cells[c]) || !first_of_place(hf, group, g, c))
            continue;
        n = rate_points(hf, group, g, c, pt);
        series += n > 0;
        for (size_t i = 0; i < n; i++) {
            if (pt[i].rate > xhi) xhi = pt[i].rate;
            if (pt[i].p99 > yhi) yhi = pt[i].p99;
            if (ylo == 0 || pt[i].p50 < ylo) ylo = pt[i].p50;
        }
    }
    if (series == 0) {
        free(pt);
        return;
    }
    group_heading(f, &hf->cells[g], true);
    axis_fit(&x, xlo, xhi);
    axis_fit(&y, ylo, yhi);
    svg_open(f, "rates", CHART_W, (int)(y_leg + LEGEND_ROW * 2.0 * (double)series),
             "latency against the offered rate: p50 (solid) and p99 (dashed) of the intended "
             "time, µs on a log scale, per endpoint");
    svg_axis_x(f, &x, CURVE_TOP + CURVE_H, CURVE_TOP, "offered rate, ops/s");
    svg_axis_y(f, &y, CURVE_LEFT, CURVE_RIGHT, "latency µs");
    for (size_t c = g; c < hf->ncells; c++) {
        size_t n;
        if (group[c] != g || !hd_open_loop(&hf->cells[c]) || !first_of_place(hf, group, g, c))
            continue;
        n = rate_points(hf, group, g, c, pt);
        if (n == 0) continue;
        rate_line(f, pt, n, &x, &y, false, hd_colour(&hf->cells[c], k));
        rate_line(f, pt, n, &x, &y, true, hd_colour(&hf->cells[c], k));
        hd_short(place, sizeof(place), text_safe(raw, sizeof(raw), hd_place(&hf->cells[c])));
        snprintf(text, sizeof(text), "%s p50", place);
        legend_line(f, CURVE_LEFT, y_leg + LEGEND_ROW * 2.0 * (double)k,
                    hd_colour(&hf->cells[c], k), "rate p50", text);
        snprintf(text, sizeof(text), "%s p99", place);
        legend_line(f, CURVE_LEFT, y_leg + LEGEND_ROW * (2.0 * (double)k + 1),
                    hd_colour(&hf->cells[c], k), "rate p99", text);
        k++;
    }
    svg_close(f);
    free(pt);
}

/*
 * A chart per group of hf's cells (hd_groups with their rates apart): the
 * note, then draw for each group; or, when no cell has what it shows (!any),
 * the n/a line alone.
 */
static void per_group(FILE *f, const struct hfile *hf, bool any, const char *na, const char *note,
                      void (*draw)(FILE *, const struct hfile *, const size_t *, size_t))
{
    size_t *group;

    if (!any) {
        fprintf(f, "<p class=\"na\">%s</p>\n", na);
        return;
    }
    fprintf(f, "<p class=\"muted\">%s</p>\n", note);
    group = hd_groups(hf, true);
    for (size_t c = 0; c < hf->ncells; c++)
        if (group[c] == c) draw(f, hf, group, c);
    free(group);
}

void chart_rates(FILE *f, const struct hfile *hf)
{
    bool any = false;

    for (size_t c = 0; c < hf->ncells; c++)
        any = any || hd_open_loop(&hf->cells[c]);
    per_group(f, hf, any, "n/a: no open-loop runs (--rate, lab --rates)",
              "Open-loop cells, each point one cell: the rate it offered (all connections "
              "together) and the latency from the intended send time, its runs that count added.",
              rates_group);
}

/* ---- ops/s and p99 across each run ----------------------------------------------------- */

#define TL_PANEL_H 150 /* each of the two panels */
#define TL_GAP     44  /* between them: the upper panel's ticks */

/* A run's series as the evidence holds it (docs/evidence.md, runs[].series). */
struct tl_run {
    const json_t *ops, *p99;
    size_t n;
    double interval_s, end_s;
};

/* The run's series: false when it has none (older evidence, a merged run) or it is malformed. */
static bool tl_of(const json_t *run, struct tl_run *s)
{
    const json_t *o = json_object_get(run, EV_SERIES);
    double ms, end;

    s->ops = json_object_get(o, EV_SERIES_OPS);
    s->p99 = json_object_get(o, EV_SERIES_P99_NS);
    s->n = json_array_size(s->ops);
    if (s->n == 0 || json_array_size(s->p99) != s->n ||
        !hd_number(o, &ms, EV_SERIES_INTERVAL_MS, NULL, NULL) || !(ms > 0) ||
        !hd_number(o, &end, EV_SERIES_END_MS, NULL, NULL))
        return false;
    s->interval_s = ms / 1e3;
    s->end_s = end / 1e3;
    return true;
}

/* Interval i's length in s: the last one ends at end_s. */
static double tl_len(const struct tl_run *s, size_t i)
{
    double rest = s->end_s - s->interval_s * (double)i;

    return i + 1 < s->n || rest > s->interval_s ? s->interval_s : rest;
}

/* Interval i is drawn: all but a last one shorter than half an interval (its rate is noise). */
static bool tl_drawn(const struct tl_run *s, size_t i)
{
    return i + 1 < s->n || tl_len(s, i) >= s->interval_s / 2;
}

static double tl_ops_per_s(const struct tl_run *s, size_t i)
{
    return json_number_value(json_array_get(s->ops, i)) / tl_len(s, i);
}

static double tl_p99_us(const struct tl_run *s, size_t i)
{
    return json_number_value(json_array_get(s->p99, i)) / 1000;
}

/* The middle of interval i, in s from the window's start. */
static double tl_mid(const struct tl_run *s, size_t i)
{
    return s->interval_s * (double)i + tl_len(s, i) / 2;
}

/* The extremes of a group's series: seconds, ops/s, p99 µs (those of intervals with ops). */
struct tl_range {
    double end, ops, p99_lo, p99_hi;
    size_t runs;
};

static void tl_range_add(struct tl_range *r, const struct tl_run *s)
{
    r->runs++;
    if (s->end_s > r->end) r->end = s->end_s;
    for (size_t i = 0; i < s->n; i++) {
        double p99 = tl_p99_us(s, i);
        if (!tl_drawn(s, i)) continue;
        if (tl_ops_per_s(s, i) > r->ops) r->ops = tl_ops_per_s(s, i);
        if (p99 <= 0) continue;
        if (r->p99_lo == 0 || p99 < r->p99_lo) r->p99_lo = p99;
        if (p99 > r->p99_hi) r->p99_hi = p99;
    }
}

/*
 * One run's two lines: ops/s in the upper panel, p99 in the lower one (broken
 * across an interval without ops, which has no p99), each with a title
 * naming its extremes.
 */
static void tl_lines(FILE *f, const struct tl_run *s, const char *who, bool counts,
                     const struct svg_axis *x, const struct svg_axis *y_ops,
                     const struct svg_axis *y_p99, const char *colour)
{
    double lo = -1, hi = 0, lo_at = 0, hi_at = 0;
    char a[32], b[32], at_a[32], at_b[32], ms[32], title[TEXT_SAFE_CAP + 320];
    bool pen = false;

    for (size_t i = 0; i < s->n; i++) {
        if (!tl_drawn(s, i)) continue;
        if (lo < 0 || tl_ops_per_s(s, i) < lo) lo = tl_ops_per_s(s, i), lo_at = tl_mid(s, i);
        if (tl_p99_us(s, i) > hi) hi = tl_p99_us(s, i), hi_at = tl_mid(s, i);
    }
    svg_number(a, sizeof(a), lo < 0 ? 0 : lo);
    svg_number(b, sizeof(b), hi);
    svg_number(at_a, sizeof(at_a), lo_at);
    svg_number(at_b, sizeof(at_b), hi_at);
    svg_number(ms, sizeof(ms), s->interval_s * 1e3);
    snprintf(title, sizeof(title),
             "%s: lowest %s ops/s at %s s, highest p99 %s µs at %s s (%zu intervals of %s ms)%s",
             who, a, at_a, b, at_b, s->n, ms, counts ? "" : "; does not count");
    fprintf(f, "<path class=\"series series-ops%s\" stroke=\"%s\" d=\"", counts ? "" : " bad",
            colour);
    for (size_t i = 0, k = 0; i < s->n; i++)
        if (tl_drawn(s, i))
            fprintf(f, "%s%.1f,%.1f", k++ ? " L" : "M", svg_map(x, tl_mid(s, i)),
                    svg_map(y_ops, tl_ops_per_s(s, i)));
    fputs("\"><title>", f);
    html_text(f, title);
    fputs("</title></path>\n", f);
    fprintf(f, "<path class=\"series series-p99%s\" stroke=\"%s\" d=\"", counts ? "" : " bad",
            colour);
    for (size_t i = 0; i < s->n; i++) {
        if (!tl_drawn(s, i) || tl_p99_us(s, i) <= 0) {
            pen = false;
            continue;
        }
        fprintf(f, "%s%.1f,%.1f", pen ? " L" : " M", svg_map(x, tl_mid(s, i)),
                svg_map(y_p99, tl_p99_us(s, i)));
        pen = true;
    }
    fputs("\"><title>", f);
    html_text(f, title);
    fputs("</title></path>\n", f);
}

static void tl_group(FILE *f, const struct hfile *hf, const size_t *group, size_t g)
{
    struct tl_range r = { 0 };
    struct tl_run s;
    struct svg_axis x = { SVG_LINEAR, 0, 0, CURVE_LEFT, CURVE_RIGHT };
    struct svg_axis y_ops = { SVG_LINEAR, 0, 0, CURVE_TOP + TL_PANEL_H, CURVE_TOP };
    double top2 = CURVE_TOP + TL_PANEL_H + TL_GAP, y_leg = top2 + TL_PANEL_H + 52;
    struct svg_axis y_p99 = { SVG_LOG, 0, 0, top2 + TL_PANEL_H, top2 };
    size_t ncells = 0, k = 0, i;
    const json_t *run;

    for (size_t c = g; c < hf->ncells; c++) {
        size_t before = r.runs;
        if (group[c] != g) continue;
        json_array_foreach(hf->cells[c].runs, i, run)
        {
            if (tl_of(run, &s)) tl_range_add(&r, &s);
        }
        ncells += r.runs > before;
    }
    if (r.runs == 0) return;
    group_heading(f, &hf->cells[g], true);
    axis_fit(&x, 0, r.end);
    axis_fit(&y_ops, 0, r.ops);
    axis_fit(&y_p99, r.p99_lo > 0 ? r.p99_lo : 1, r.p99_hi > 0 ? r.p99_hi : 1);
    svg_open(f, "series", CHART_W, (int)(y_leg + LEGEND_ROW * (double)ncells),
             "ops/s (above) and p99 µs on a log scale (below) per interval across each run, one "
             "line per run; a stall is a dip to 0 ops/s, then a p99 spike");
    svg_axis_x(f, &x, CURVE_TOP + TL_PANEL_H, CURVE_TOP, "");
    svg_axis_y(f, &y_ops, CURVE_LEFT, CURVE_RIGHT, "ops/s");
    svg_axis_x(f, &x, top2 + TL_PANEL_H, top2, "seconds into the window");
    svg_axis_y(f, &y_p99, CURVE_LEFT, CURVE_RIGHT, "p99 µs");
    for (size_t c = g; c < hf->ncells; c++) {
        const struct hcell *cell = &hf->cells[c];
        char place[TEXT_SAFE_CAP], raw[TEXT_SAFE_CAP], who[TEXT_SAFE_CAP + 32];
        char text[TEXT_SAFE_CAP + 64];
        size_t drawn = 0;
        if (group[c] != g) continue;
        hd_short(place, sizeof(place), text_safe(raw, sizeof(raw), hd_place(cell)));
        json_array_foreach(cell->runs, i, run)
        {
            double rep = -1;
            if (!tl_of(run, &s)) continue;
            hd_number(run, &rep, EV_REP, NULL, NULL);
            snprintf(who, sizeof(who), "%s rep %.0f", place, rep);
            tl_lines(f, &s, who, evidence_run_counts(run), &x, &y_ops, &y_p99, hd_colour(cell, k));
            drawn++;
        }
        if (drawn == 0) continue;
        snprintf(text, sizeof(text), "%s: %zu run%s", place, drawn, drawn == 1 ? "" : "s");
        legend_line(f, CURVE_LEFT, y_leg + LEGEND_ROW * (double)k, hd_colour(cell, k), "series",
                    text);
        k++;
    }
    svg_close(f);
}

void chart_series(FILE *f, const struct hfile *hf)
{
    struct tl_run s;
    bool any = false;
    size_t i;
    const json_t *run;

    for (size_t c = 0; c < hf->ncells && !any; c++)
        json_array_foreach(hf->cells[c].runs, i, run)
        {
            any = any || tl_of(run, &s);
        }
    per_group(f, hf, any,
              "n/a: no run of this file holds ops and p99 per interval (written before hopbench "
              "recorded them, or merged)",
              "Per run, the ops that ended in each interval of its window (100 ms, longer for a "
              "window over a minute) as ops/s, and their p99: the upper edge of a counter at most "
              "12.5 % wide (docs/evidence.md). An interval without ops breaks the p99 line; a "
              "last interval shorter than half of one is not drawn. A stall shows as a dip to 0 "
              "ops/s, then a p99 spike when the ops that waited end. Hover a line for its "
              "extremes; dashed: a run that does not count.",
              tl_group);
}
