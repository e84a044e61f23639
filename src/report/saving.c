/*
 * report/saving: prints what cost.c computes: first the bottom line, the one
 * key figure (the rate at which the largest significant saving of CPU per
 * request, client and server together, is one vCPU); then per cell the
 * figures per request (tcp, unix, saved with its interval, and whether the
 * difference is significant), then for each CPU figure whose difference is
 * significant what the saving is worth per month at each traffic volume, the
 * rate that saves a whole vCPU and the dilution by application work. A
 * difference that is not significant is said to be one, never priced. Or the
 * same as JSON.
 */
#include "report/saving.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/bottom.h"
#include "stats.h"

/* What a CPU figure measures, for the notes under a cell's table. */
static const struct {
    const char *name, *what;
} figure_notes[] = {
    { "client", "the load generator's threads (hopbench)" },
    { "server", "the server's processes (--server-pid, --server-cgroup; the lab's own server)" },
    { "client+server", "the sum of the two" },
    { "system", "every CPU's busy time on the machine, softirq included (/proc/stat)" },
    { "server cgroup", "the server's cgroup (--server-cgroup)" },
    { "client+services", "the client and every --service together" },
};

/* Whether series s is one of figure_notes'. */
static bool noted(const struct cost_series *s)
{
    for (size_t i = 0; i < ARRAY_LEN(figure_notes); i++)
        if (strcmp(s->name, figure_notes[i].name) == 0) return true;
    return false;
}

bool report_saving_cell_ok(const struct cost_cell *c)
{
    return c->counted[COST_TCP] > 0 && c->counted[COST_UDS] > 0 && !c->mixed[COST_TCP] &&
           !c->mixed[COST_UDS];
}

/* v with `digits` significant digits in fixed notation, thousands grouped ("0.000095", "40,800").
 */
static const char *sig(char *buf, size_t cap, double v, int digits)
{
    int d;

    if (!isfinite(v) || v == 0) {
        snprintf(buf, cap, "%s", isnan(v) ? "n/a" : v == 0 ? "0" : v < 0 ? "-inf" : "inf");
        return buf;
    }
    /* the exponent after rounding to `digits`: 9.996 with 3 digits is 10.0, not 10.00 */
    snprintf(buf, cap, "%.*e", digits - 1, v);
    d = digits - 1 - (int)floor(log10(fabs(strtod(buf, NULL))));
    d = d < 0 ? 0 : d > 12 ? 12 : d;
    text_number(buf, cap, v, d);
    return buf;
}

/* "2.45 [2.10, 2.80]" or "2.45" without an interval: r scaled by k, `digits` significant. */
static void range_text(char *buf, size_t cap, struct cost_range r, double k, int digits)
{
    char v[48], lo[48], hi[48];

    r = cost_range_scale(r, k);
    sig(v, sizeof(v), r.v, digits);
    if (!cost_range_has_interval(r)) {
        snprintf(buf, cap, "%s", v);
        return;
    }
    snprintf(buf, cap, "%s [%s, %s]", v, sig(lo, sizeof(lo), r.lo, digits),
             sig(hi, sizeof(hi), r.hi, digits));
}

/* CPU seconds as s, min, h or days, chosen by the point figure. */
static void duration_text(char *buf, size_t cap, struct cost_range s)
{
    static const struct {
        double below, unit;
        const char *name;
    } units[] = {
        { 120, 1, "s" }, { 7200, 60, "min" }, { 172800, 3600, "h" }, { INFINITY, 86400, "days" }
    };
    char num[160];
    size_t i = 0;

    while (!(fabs(s.v) < units[i].below) && i + 1 < ARRAY_LEN(units))
        i++;
    range_text(num, sizeof(num), s, 1 / units[i].unit, 3);
    snprintf(buf, cap, "%s %s", num, units[i].name);
}

/* "$0.024 [$0.017, $0.027]", "-$0.0000048": the sign before the dollar. */
static void usd_text(char *buf, size_t cap, struct cost_range r)
{
    char v[48], lo[48], hi[48];

    sig(v, sizeof(v), fabs(r.v), 2);
    if (!cost_range_has_interval(r)) {
        snprintf(buf, cap, "%s$%s", r.v < 0 ? "-" : "", v);
        return;
    }
    snprintf(buf, cap, "%s$%s [%s$%s, %s$%s]", r.v < 0 ? "-" : "", v, r.lo < 0 ? "-" : "",
             sig(lo, sizeof(lo), fabs(r.lo), 2), r.hi < 0 ? "-" : "",
             sig(hi, sizeof(hi), fabs(r.hi), 2));
}

/*
 * What a side's runs were on: "tcp://127.0.0.1:9000", or by its label with
 * the address after it, "backend.tcp (tcp://127.0.0.1:9000)"; " and others"
 * where the side holds more than one.
 */
static void side_place(char *buf, size_t cap, const struct cost_cell *c, int s)
{
    const char *more = " and others", *ep = c->endpoint[s] ? c->endpoint[s] : "none";
    char raw[TEXT_SAFE_CAP];

    if (c->label[s] != NULL)
        snprintf(raw, sizeof(raw), "%s%s (%s%s)", c->label[s], c->mixed[s] ? more : "", ep,
                 c->several_endpoints[s] ? more : "");
    else
        snprintf(raw, sizeof(raw), "%s%s", ep, c->mixed[s] ? more : "");
    /* labels and endpoints come from a file: escaped, they cannot act on the terminal */
    text_safe(buf, cap, raw);
}

static void put_cell_head(FILE *f, const struct cost_cell *c)
{
    static const char *const side_name[2] = { "tcp", "unix" };
    char label[TEXT_SAFE_CAP], place[TEXT_SAFE_CAP];

    evidence_cell_label(label, sizeof(label), &c->key);
    fprintf(f, "\n== %s\n", label);
    for (int s = 0; s < 2; s++) {
        side_place(place, sizeof(place), c, s);
        fprintf(f, "   %-5s %s: %zu run%s, %zu counted\n", side_name[s], place, c->runs[s],
                c->runs[s] == 1 ? "" : "s", c->counted[s]);
    }
}

/* The saving of series i of c, seeded per series; false when it cannot be had. */
static bool saving_of(const struct cost_cell *c, size_t i, const struct cost_plan *p,
                      struct cost_saving *out)
{
    const struct cost_series *s = &c->series[i];

    return s->n[COST_TCP] > 0 && s->n[COST_UDS] > 0 &&
           cost_saving_of(s->v[COST_TCP], s->n[COST_TCP], s->v[COST_UDS], s->n[COST_UDS],
                          p->seed + i, out) == 0;
}

/*
 * The one figure of c's whole CPU per request: the client and every service
 * (a stack's), else the client and the server, else the client's alone (a
 * merged file); SIZE_MAX when c has none of them.
 */
static size_t key_series(const struct cost_cell *c)
{
    static const char *const order[] = { "client+services", "client+server", "client" };

    for (size_t k = 0; k < ARRAY_LEN(order); k++)
        for (size_t i = 0; i < c->nseries; i++)
            if (strcmp(c->series[i].name, order[k]) == 0) return i;
    return SIZE_MAX;
}

/* Too few runs for Mann-Whitney to reach p < STATS_ALPHA, whatever they measured. */
static bool few_runs(const struct cost_saving *s)
{
    return stats_mw_min_p(s->n_tcp, s->n_uds) >= STATS_ALPHA;
}

/*
 * Why a saving is not priced: "no significant difference (p=0.31, n=5+5): not
 * priced", "too few runs for a verdict (n=2+2): not priced", or without an
 * interval "no interval (n=1+1: fewer than two runs a side): not priced".
 * Empty when it is significant.
 */
static void unpriced_text(char *buf, size_t cap, const struct cost_saving *s)
{
    if (s->significant)
        snprintf(buf, cap, "%s", "");
    else if (!isnan(s->p) && few_runs(s))
        snprintf(buf, cap, "too few runs for a verdict (n=%zu+%zu): not priced", s->n_tcp,
                 s->n_uds);
    else if (!isnan(s->p))
        snprintf(buf, cap, "no significant difference (p=%.2g, n=%zu+%zu): not priced", s->p,
                 s->n_tcp, s->n_uds);
    else
        snprintf(buf, cap, "no interval (n=%zu+%zu: fewer than two runs a side): not priced",
                 s->n_tcp, s->n_uds);
}

/* "p=0.0079, n=5+5": a significant saving's test. */
static void test_text(char *buf, size_t cap, const struct cost_saving *s)
{
    snprintf(buf, cap, "p=%.2g, n=%zu+%zu", s->p, s->n_tcp, s->n_uds);
}

static void put_per_request(FILE *f, const struct cost_cell *c, const struct cost_plan *p)
{
    bool any_interval = false, none = false;

    fprintf(f, "\n   %-22s %11s %11s   %-33s %-9s %s\n", "per request", "tcp µs", "unix µs",
            "saved by unix µs [95 % interval]", "saved", "unix against tcp");
    for (size_t i = 0; i < c->nseries; i++) {
        const struct cost_series *ser = &c->series[i];
        char name[64], saved[160], share[64], pct[48], verdict[96], tcp[32], uds[32];
        struct cost_saving s;

        snprintf(name, sizeof(name), "%s %s", ser->kind == COST_CPU ? "cpu" : "latency", ser->name);
        if (!saving_of(c, i, p, &s)) {
            fprintf(f, "   %-22s  n/a: not measured over both transports\n", name);
            continue;
        }
        range_text(saved, sizeof(saved), s.saved, 1e-3, 3);
        if (cost_range_has_interval(s.saved))
            any_interval = true;
        else
            none = true;
        sig(pct, sizeof(pct), 100 * s.saved.v / s.tcp, 3);
        snprintf(share, sizeof(share), "%s %%", pct);
        if (s.significant) {
            char test[64];
            test_text(test, sizeof(test), &s);
            snprintf(verdict, sizeof(verdict), "%s (%s)", s.saved.v < 0 ? "costs more" : "saves",
                     test);
        } else {
            snprintf(verdict, sizeof(verdict), "%s",
                     isnan(s.p)     ? "no interval"
                     : few_runs(&s) ? "too few runs"
                                    : "not significant");
            if (!isnan(s.p))
                snprintf(verdict + strlen(verdict), sizeof(verdict) - strlen(verdict),
                         " (p=%.2g, n=%zu+%zu)", s.p, s.n_tcp, s.n_uds);
        }
        text_number(tcp, sizeof(tcp), s.tcp / 1e3, 2);
        text_number(uds, sizeof(uds), s.uds / 1e3, 2);
        fprintf(f, "   %-22s %10s %10s   %-32s %-9s %s\n", name, tcp, uds, saved,
                s.tcp > 0 ? share : "n/a", verdict);
    }
    if (none)
        fprintf(f, "   %s: fewer than two runs on a side give no interval\n",
                any_interval ? "a figure without [ ]" : "no interval");
}

/* What each CPU figure of s measures, once for the whole output. */
static void put_notes(FILE *f, const struct cost_set *s)
{
    bool named = false;

    fputc('\n', f);
    for (size_t i = 0; i < ARRAY_LEN(figure_notes); i++) {
        bool any = false;
        for (size_t c = 0; c < s->ncells && !any; c++)
            any = report_saving_cell_ok(&s->cells[c]) &&
                  cost_cell_series(&s->cells[c], figure_notes[i].name) != NULL;
        if (any) fprintf(f, "cpu %s: %s\n", figure_notes[i].name, figure_notes[i].what);
    }
    for (size_t c = 0; c < s->ncells; c++)
        for (size_t i = 0; i < s->cells[c].nseries; i++)
            named =
                named || (report_saving_cell_ok(&s->cells[c]) &&
                          s->cells[c].series[i].kind == COST_CPU && !noted(&s->cells[c].series[i]));
    if (named) fprintf(f, "cpu NAME: a named service (--service)\n");
}

/* The sustained rate at which the saving s adds up to one whole vCPU, as a phrase. */
static void vcpu_rate_text(char *buf, size_t cap, const struct cost_saving *s)
{
    char rtext[160];

    range_text(rtext, sizeof(rtext), cost_breakeven_rate(s->saved), 1, 3);
    if (s->saved.v > 0)
        snprintf(buf, cap, "one whole vCPU is saved at %s requests/s, sustained", rtext);
    else if (s->saved.v < 0)
        snprintf(buf, cap, "the Unix socket costs one whole vCPU more at %s requests/s, sustained",
                 rtext);
    else
        snprintf(buf, cap, "nothing is saved at any rate");
}

/*
 * A saving's month at traffic tr, as the month's table and the stack's short
 * form both print it: the CPU saved ("36.0 [30.1, 41.2] h"), its share of one
 * vCPU in % and its value at p's price ("$1.2 [$1.0, $1.4]").
 */
static void month_text(char *cpu_t, size_t cpu_cap, char *share_t, size_t share_cap, char *usd_t,
                       size_t usd_cap, const struct cost_saving *s, const struct cost_traffic *tr,
                       const struct cost_plan *p)
{
    struct cost_range cpu = cost_month_cpu_s(s->saved, tr->per_month);
    struct cost_range share = cost_vcpu_share(cpu);

    duration_text(cpu_t, cpu_cap, cpu);
    range_text(share_t, share_cap, share, 100, 2);
    usd_text(usd_t, usd_cap, cost_price(share, p->price_usd));
}

/* What one CPU figure's saving is worth per month, and the rate that saves a vCPU. */
static void put_month(FILE *f, const struct cost_series *ser, const struct cost_saving *s,
                      const struct cost_plan *p)
{
    char rtext[256], price[48];

    fprintf(f, "\n   cpu %s: saved per month (30 days)\n", ser->name);
    snprintf(price, sizeof(price), "value at $%g/vCPU-month", p->price_usd);
    fprintf(f, "   %-14s %16s %12s   %-30s %-34s %s\n", "traffic", "requests/month", "avg req/s",
            "CPU saved", "share of 1 vCPU %", price);
    for (size_t t = 0; t < p->ntraffic; t++) {
        const struct cost_traffic *tr = &p->traffic[t];
        char text[TEXT_SAFE_CAP], cpu_t[192], share_t[160], usd_t[160], rps[48], month[48];

        month_text(cpu_t, sizeof(cpu_t), share_t, sizeof(share_t), usd_t, sizeof(usd_t), s, tr, p);
        text_number(month, sizeof(month), tr->per_month, 0);
        fprintf(f, "   %-14s %16s %12s   %-30s %-34s %s\n", text_safe(text, sizeof(text), tr->text),
                month, sig(rps, sizeof(rps), cost_traffic_per_s(tr), 3), cpu_t, share_t, usd_t);
    }
    vcpu_rate_text(rtext, sizeof(rtext), s);
    fprintf(f, "   %s\n", rtext);
}

/* The saving of each CPU figure as % of all CPU per request with app work added. */
static void put_dilution(FILE *f, const struct cost_cell *c, const struct cost_plan *p)
{
    struct cost_saving s[COST_MAX_FIGURES];
    const struct cost_series *ser[COST_MAX_FIGURES];
    size_t n = 0;

    /* the cell's key figure (the whole CPU per request), when it is priced */
    for (size_t i = 0; i < c->nseries && n < COST_MAX_FIGURES; i++)
        if (i == key_series(c) && saving_of(c, i, p, &s[n]) && s[n].significant)
            ser[n++] = &c->series[i];
    if (n == 0) return;
    fprintf(f,
            "\n   application work per request dilutes the saving (an estimate, not a "
            "measurement):\n   saved as %% of all CPU per request = saved / (tcp figure + app "
            "work)\n   %-10s",
            "app work");
    for (size_t i = 0; i < n; i++)
        fprintf(f, " %-*s", i + 1 < n ? 30 : 0, ser[i]->name);
    fputc('\n', f);
    for (size_t a = 0; a <= p->napp; a++) {
        double app = a == 0 ? 0 : p->app_ns[a - 1];
        char head[48];

        if (a == 0)
            snprintf(head, sizeof(head), "none");
        else
            snprintf(head, sizeof(head), "%g ms", app / 1e6);
        fprintf(f, "   %-10s", head);
        for (size_t i = 0; i < n; i++) {
            char text[160], cell[192];
            range_text(text, sizeof(text), cost_diluted(s[i].saved, s[i].tcp, app), 100, 3);
            snprintf(cell, sizeof(cell), "%s %%", text);
            fprintf(f, " %-*s", i + 1 < n ? 30 : 0, cell);
        }
        fputc('\n', f);
    }
}

/*
 * The bottom line's figure: over the compared cells, the significant saving
 * of each one's key series (key_series) that saves the most, or when none
 * saves, the one that costs the most. Returns how many cells have a
 * significant one (0: *cell and *sv are not set).
 */
static size_t key_figure(const struct cost_set *s, const struct cost_plan *p, size_t *cell,
                         struct cost_saving *sv)
{
    size_t n = 0;

    for (size_t c = 0; c < s->ncells; c++) {
        size_t k = key_series(&s->cells[c]);
        struct cost_saving x;
        if (!report_saving_cell_ok(&s->cells[c]) || k == SIZE_MAX ||
            !saving_of(&s->cells[c], k, p, &x) || !x.significant)
            continue;
        if (n++ == 0 || (x.saved.v > 0 && x.saved.v > sv->saved.v) ||
            (x.saved.v < 0 && sv->saved.v < 0 && x.saved.v < sv->saved.v)) {
            *cell = c;
            *sv = x;
        }
    }
    return n;
}

/* The cells compared. */
static size_t compared_cells(const struct cost_set *s)
{
    size_t n = 0;

    for (size_t c = 0; c < s->ncells; c++)
        n += report_saving_cell_ok(&s->cells[c]);
    return n;
}

/* The bottom line's saving as report/bottom.c words a stack's or a lab's cost. */
static struct bottom_cost key_cost(const struct cost_cell *c, const struct cost_saving *sv)
{
    struct cost_range rate = cost_breakeven_rate(sv->saved);
    struct bottom_cost b = { .base = "tcp",
                             .arm = "unix",
                             .priced = sv->significant,
                             .p = sv->p,
                             .n_base = sv->n_tcp,
                             .n_arm = sv->n_uds,
                             .saved_ns = sv->saved.v,
                             .saved_lo_ns = sv->saved.lo,
                             .saved_hi_ns = sv->saved.hi,
                             .rate = rate.v,
                             .rate_lo = rate.lo,
                             .rate_hi = rate.hi };

    snprintf(b.who, sizeof(b.who), "%s", c->series[key_series(c)].name);
    return b;
}

/*
 * The bottom line's words: "unix saves 23.1 µs [18.2, 30.0] of CPU per
 * request (client+server): one vCPU saved at 43,300 [33,300, 54,900]
 * requests/s, in echo reuse 64 B c=1 p=1 (p=0.0079, n=5+5); 2 of 6 cells
 * priced", or that no compared cell has a significant difference: nothing
 * priced.
 */
static void bottom_text(char *buf, size_t cap, const struct cost_set *s, const struct cost_plan *p)
{
    struct cost_saving sv;
    size_t cell = 0, n = key_figure(s, p, &cell, &sv), cells = compared_cells(s);
    char words[512], test[64], label[TEXT_SAFE_CAP], more[96] = "";
    struct bottom_cost b;

    if (n == 0) {
        snprintf(buf, cap,
                 "no significant difference in CPU per request in %s%zu compared cell%s: "
                 "nothing priced",
                 cells > 1 ? "any of the " : "the ", cells, cells == 1 ? "" : "s");
        return;
    }
    b = key_cost(&s->cells[cell], &sv);
    bottom_cost_words(words, sizeof(words), &b);
    evidence_cell_label(label, sizeof(label), &s->cells[cell].key);
    test_text(test, sizeof(test), &sv);
    if (cells > 1) snprintf(more, sizeof(more), "; %zu of %zu cells priced", n, cells);
    snprintf(buf, cap, "%s, in %s (%s)%s", words, label, test, more);
}

void report_saving_table(FILE *f, const char *path, const struct cost_set *s,
                         const struct cost_plan *p)
{
    char shown[TEXT_SAFE_CAP], month_s[32], bottom[2 * TEXT_SAFE_CAP];

    text_number(month_s, sizeof(month_s), COST_MONTH_S, 0);
    bottom_text(bottom, sizeof(bottom), s, p);
    fprintf(f,
            "hopbench cost: what a Unix socket saves over TCP loopback, from %s\n"
            "bottom line: %s\n\n"
            "Per cell the median of each transport's runs that count; saved = tcp - unix\n"
            "(negative: unix costs more), [ ] the %.0f %% bootstrap interval of the ratio of\n"
            "medians (seed %llu) carried to it. Only a significant difference (Mann-Whitney\n"
            "p < %.2g, the interval excluding 0) is priced. A month is 30 days (%s s).\n"
            "Price: $%g per vCPU-month%s.\n",
            text_safe(shown, sizeof(shown), path), bottom, COST_LEVEL * 100,
            (unsigned long long)p->seed, STATS_ALPHA, month_s, p->price_usd,
            p->price_given ? " (--price)" : ", an assumption (--price sets it)");
    for (size_t i = 0; i < s->ncells; i++) {
        const struct cost_cell *c = &s->cells[i];
        struct cost_saving sv;

        put_cell_head(f, c);
        if (!report_saving_cell_ok(c)) {
            if (c->mixed[0] || c->mixed[1])
                fprintf(f, "   skipped: a transport has runs of several %s in this cell\n",
                        c->label[0] || c->label[1] ? "labels (or labelled and unlabelled runs)"
                                                   : "endpoints");
            else
                fprintf(f, "   skipped: no run that counts over both tcp and unix\n");
            continue;
        }
        put_per_request(f, c, p);
        /* the key figure's month in full (every figure's is in --json), the others a line each */
        if (key_series(c) != SIZE_MAX && saving_of(c, key_series(c), p, &sv) && sv.significant)
            put_month(f, &c->series[key_series(c)], &sv, p);
        fputc('\n', f);
        for (size_t j = 0; j < c->nseries; j++) {
            char why[256];
            if (c->series[j].kind != COST_CPU || !saving_of(c, j, p, &sv)) continue;
            if (sv.significant && j == key_series(c)) continue;
            if (sv.significant) {
                vcpu_rate_text(why, sizeof(why), &sv);
            } else {
                unpriced_text(why, sizeof(why), &sv);
            }
            fprintf(f, "   cpu %s: %s\n", c->series[j].name, why);
        }
        put_dilution(f, c, p);
    }
    put_notes(f, s);
}

/*
 * A significant saving in short: the rate that saves one whole vCPU, as
 * report_saving_table prints it; for the cell's key figure (the one whose
 * month report_saving_table prints in full) also its month at p's first
 * traffic, when p has one, the same words as that table's row.
 */
static void brief_priced(char *buf, size_t cap, const struct cost_cell *c, size_t j,
                         const struct cost_saving *s, const struct cost_plan *p)
{
    char rate[256], cpu[192], share[160], usd[160], tr[4 * sizeof(p->traffic[0].text)];

    vcpu_rate_text(rate, sizeof(rate), s);
    if (j != key_series(c) || p->ntraffic == 0) {
        snprintf(buf, cap, "%s", rate);
        return;
    }
    month_text(cpu, sizeof(cpu), share, sizeof(share), usd, sizeof(usd), s, &p->traffic[0], p);
    snprintf(buf, cap, "%s; at %s: %s of CPU a month, %s a month at $%g/vCPU-month", rate,
             text_safe(tr, sizeof(tr), p->traffic[0].text), cpu, usd, p->price_usd);
}

void report_saving_brief(FILE *f, const char *label, const struct cost_set *s,
                         const struct cost_plan *p)
{
    char shown[TEXT_SAFE_CAP], cell[TEXT_SAFE_CAP];

    text_safe(shown, sizeof(shown), label);
    for (size_t i = 0; i < s->ncells; i++) {
        const struct cost_cell *c = &s->cells[i];
        struct cost_saving sv;

        evidence_cell_label(cell, sizeof(cell), &c->key);
        fprintf(f, "%s%s%s\n", shown, s->ncells > 1 ? ": " : "", s->ncells > 1 ? cell : "");
        if (!report_saving_cell_ok(c)) {
            fprintf(f, "   not priced: no run that counts over both tcp and unix%s\n",
                    c->mixed[0] || c->mixed[1] ? " from one endpoint each" : "");
            continue;
        }
        for (size_t j = 0; j < c->nseries; j++) {
            char saved[160], pct[48], rate[896];
            if (c->series[j].kind != COST_CPU || !saving_of(c, j, p, &sv)) continue;
            range_text(saved, sizeof(saved), sv.saved, 1e-3, 3);
            sig(pct, sizeof(pct), 100 * sv.saved.v / sv.tcp, 3);
            /* the stack's short form prices only a significant difference */
            if (sv.significant) {
                brief_priced(rate, sizeof(rate), c, j, &sv, p);
            } else {
                unpriced_text(rate, sizeof(rate), &sv);
            }
            fprintf(f, "   cpu %s: saved %s µs per request (%s%s); %s\n", c->series[j].name, saved,
                    sv.tcp > 0 ? pct : "n/a", sv.tcp > 0 ? " %" : "", rate);
        }
    }
}

/* ---- JSON ---------------------------------------------------------------------------- */

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* {"value": v, "lo": lo, "hi": hi}; lo and hi null without an interval, infinity null too. */
static json_t *range_json(struct cost_range r)
{
    return json_pack("{s:o, s:o, s:o}", "value", num_or_null(r.v), "lo", num_or_null(r.lo), "hi",
                     num_or_null(r.hi));
}

static json_t *figure_json(const struct cost_series *ser, const struct cost_saving *s,
                           const struct cost_plan *p)
{
    char why[128];
    json_t *o =
        json_pack("{s:s, s:s, s:f, s:f, s:I, s:I, s:o, s:o, s:b}", "name", ser->name, "kind",
                  ser->kind == COST_CPU ? "cpu" : "latency", "tcp_ns", s->tcp, "unix_ns", s->uds,
                  "n_tcp", (json_int_t)s->n_tcp, "n_unix", (json_int_t)s->n_uds, "saved_ns",
                  range_json(s->saved), "p", num_or_null(s->p), "significant", s->significant);
    json_t *month, *app;

    if (o == NULL || ser->kind != COST_CPU) return o;
    /* a difference that is not significant is said to be one, never priced */
    json_object_set_new(o, "priced", json_boolean(s->significant));
    if (!s->significant) {
        unpriced_text(why, sizeof(why), s);
        json_object_set_new(o, "not_priced", json_string(why));
        json_object_set_new(o, "per_month", json_null());
        json_object_set_new(o, "vcpu_saved_at_requests_per_s", json_null());
        json_object_set_new(o, "app_work", json_null());
        return o;
    }
    month = json_array();
    app = json_array();
    for (size_t t = 0; t < p->ntraffic; t++) {
        struct cost_range cpu = cost_month_cpu_s(s->saved, p->traffic[t].per_month);
        struct cost_range share = cost_vcpu_share(cpu);
        json_array_append_new(month, json_pack("{s:s, s:f, s:f, s:o, s:o, s:o}", "traffic",
                                               p->traffic[t].text, "requests_per_month",
                                               p->traffic[t].per_month, "requests_per_s",
                                               cost_traffic_per_s(&p->traffic[t]), "cpu_saved_s",
                                               range_json(cpu), "vcpu_share", range_json(share),
                                               "usd", range_json(cost_price(share, p->price_usd))));
    }
    for (size_t a = 0; a <= p->napp; a++) {
        double ns = a == 0 ? 0 : p->app_ns[a - 1];
        json_array_append_new(app, json_pack("{s:f, s:o}", "app_ns", ns, "saved_share",
                                             range_json(cost_diluted(s->saved, s->tcp, ns))));
    }
    json_object_set_new(o, "per_month", month);
    json_object_set_new(o, "vcpu_saved_at_requests_per_s",
                        range_json(cost_breakeven_rate(s->saved)));
    json_object_set_new(o, "app_work", app);
    return o;
}

static json_t *cell_json(const struct cost_cell *c, const struct cost_plan *p)
{
    json_t *figs = json_array(), *o;

    for (size_t i = 0; report_saving_cell_ok(c) && i < c->nseries; i++) {
        struct cost_saving s;
        if (saving_of(c, i, p, &s) &&
            json_array_append_new(figs, figure_json(&c->series[i], &s, p)) < 0) {
            json_decref(figs);
            return NULL;
        }
    }
    o = json_pack(
        "{s:s, s:s?, s:s, s:I, s:I, s:I, s:f, s:{s:s?, s:s?, s:b, s:I, s:I}, s:{s:s?, s:s?, "
        "s:b, s:I, s:I}, s:b, s:o}",
        "proto", c->key.proto, "label", c->key.label[0] != '\0' ? c->key.label : NULL, "mode",
        c->key.mode, "size", (json_int_t)c->key.size, "connections", (json_int_t)c->key.connections,
        "pipeline", (json_int_t)c->key.pipeline, "rate", c->key.rate, "tcp", "endpoint",
        c->endpoint[COST_TCP], "label", c->label[COST_TCP], "several_endpoints", c->mixed[COST_TCP],
        "runs", (json_int_t)c->runs[COST_TCP], "counted", (json_int_t)c->counted[COST_TCP], "unix",
        "endpoint", c->endpoint[COST_UDS], "label", c->label[COST_UDS], "several_endpoints",
        c->mixed[COST_UDS], "runs", (json_int_t)c->runs[COST_UDS], "counted",
        (json_int_t)c->counted[COST_UDS], "compared", report_saving_cell_ok(c), "figures", figs);
    return o;
}

/* The bottom line: its words, and the figure priced in them (null when none is). */
static json_t *key_json(const struct cost_set *s, const struct cost_plan *p)
{
    struct cost_saving sv;
    size_t cell = 0, n = key_figure(s, p, &cell, &sv);
    char text[2 * TEXT_SAFE_CAP], label[TEXT_SAFE_CAP];
    json_t *o;

    bottom_text(text, sizeof(text), s, p);
    o = json_pack("{s:s, s:b, s:I, s:I}", "text", text, "priced", n > 0, "cells_priced",
                  (json_int_t)n, "cells_compared", (json_int_t)compared_cells(s));
    if (o == NULL || n == 0) return o;
    evidence_cell_label(label, sizeof(label), &s->cells[cell].key);
    json_object_set_new(o, "cell", json_string(label));
    json_object_set_new(o, "figure",
                        json_string(s->cells[cell].series[key_series(&s->cells[cell])].name));
    json_object_set_new(o, "saved_ns", range_json(sv.saved));
    json_object_set_new(o, "vcpu_saved_at_requests_per_s",
                        range_json(cost_breakeven_rate(sv.saved)));
    json_object_set_new(o, "p", num_or_null(sv.p));
    json_object_set_new(o, "n_tcp", json_integer((json_int_t)sv.n_tcp));
    json_object_set_new(o, "n_unix", json_integer((json_int_t)sv.n_uds));
    return o;
}

json_t *report_saving_json(const char *path, const struct cost_set *s, const struct cost_plan *p)
{
    json_t *cells = json_array();

    /* a cell that cannot be encoded (an endpoint that is not UTF-8) fails the whole document */
    for (size_t i = 0; i < s->ncells; i++) {
        if (json_array_append_new(cells, cell_json(&s->cells[i], p)) < 0) {
            json_decref(cells);
            return NULL;
        }
    }
    return json_pack("{s:s, s:s, s:o, s:f, s:f, s:b, s:I, s:f, s:f, s:o}", "schema",
                     REPORT_SAVING_SCHEMA, "evidence", path, "bottom_line", key_json(s, p),
                     "month_s", COST_MONTH_S, "price_usd_per_vcpu_month", p->price_usd,
                     "price_assumed", !p->price_given, "seed", (json_int_t)p->seed,
                     "interval_level", COST_LEVEL, "alpha", STATS_ALPHA, "cells", cells);
}
