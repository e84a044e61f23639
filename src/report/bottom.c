/*
 * bottom: the bottom line (see bottom.h).
 */
#include "report/bottom.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cost.h"
#include "evidence.h"
#include "evidence/schema.h"
#include "report/metric.h"
#include "util.h"

/* ---- cells and arms ------------------------------------------------------------------------ */

/* Where a run goes: its cell and its arm, by name. */
struct place_of {
    char cell[BOTTOM_NAME_CAP];
    char arm[BOTTOM_ARM_CAP];
};

/*
 * A run of `run` unlabelled: its transport, or its endpoint when another
 * endpoint of the runs has the same transport (two tcp endpoints).
 */
static void run_arm(const struct run_record *recs, size_t n, const struct run_record *r, char *buf,
                    size_t cap)
{
    for (size_t i = 0; i < n; i++) {
        if (recs[i].cell == r->cell || recs[i].cfg.ep.label[0] != '\0') continue;
        if (strcmp(report_transport(&recs[i]), report_transport(r)) == 0) {
            text_safe(buf, cap, endpoint_name(&r->cfg.ep));
            return;
        }
    }
    snprintf(buf, cap, "%s", report_transport(r));
}

static void place_of(const struct run_record *recs, size_t n, const struct run_record *r,
                     enum bottom_by by, struct place_of *p)
{
    const char *label = r->cfg.ep.label, *dot = strrchr(label, '.');

    memset(p, 0, sizeof(*p));
    if (by == BOTTOM_BY_LAB) {
        char size[32];
        int k;

        size_text(size, sizeof(size), (long long)r->cfg.size);
        k = snprintf(p->cell, sizeof(p->cell), "%s %s", size, report_mode_name(r->cfg.mode));
        if (r->rate_share > 0 && k > 0 && (size_t)k < sizeof(p->cell))
            snprintf(p->cell + k, sizeof(p->cell) - (size_t)k, " open loop at %.0f %%",
                     r->rate_share * 100);
        snprintf(p->arm, sizeof(p->arm), "%s", report_transport(r));
    } else if (dot != NULL && dot != label && dot[1] != '\0') {
        snprintf(p->cell, sizeof(p->cell), "%.*s", (int)(dot - label), label);
        snprintf(p->arm, sizeof(p->arm), "%s", dot + 1);
    } else if (label[0] != '\0') {
        snprintf(p->arm, sizeof(p->arm), "%s", label);
    } else {
        run_arm(recs, n, r, p->arm, sizeof(p->arm));
    }
}

/* ---- the figures of a run ---------------------------------------------------------------------
 */

/* A figure of the rows: which and, for CPU, whose. */
struct figure {
    enum bottom_fig fig;
    int who; /* CPU: -1 client, -2 server, -3 all together, k >= 0 service k */
};

/* A counter per op in ns, or false. */
static bool per_op(const struct ctr_val *v, uint64_t ops, double *out)
{
    if (!v->ok || ops == 0) return false;
    *out = (double)v->v / (double)ops;
    return true;
}

static unsigned services_of(const struct run_record *r)
{
    return r->observed && r->obs.set != NULL ? r->obs.set->n : 0;
}

/* The CPU of the client, the server and every service of r, ns per op; false when one lacks it. */
static bool all_cpu(const struct run_record *r, double *out)
{
    double v;

    if (r->res.ops == 0) return false;
    *out = report_cpu_ns_per_op(r);
    if (r->observed && r->obs.server_cpu_ns.ok) {
        if (!per_op(&r->obs.server_cpu_ns, r->res.ops, &v)) return false;
        *out += v;
    }
    for (unsigned k = 0; k < services_of(r); k++) {
        if (!per_op(&r->obs.svc[k].cpu_ns, r->res.ops, &v)) return false;
        *out += v;
    }
    return true;
}

static bool value_of(const struct run_record *r, const struct figure *f, double *out)
{
    switch (f->fig) {
    case BOTTOM_OPS:
        *out = metric_of_record(r, METRIC_OPS_PER_S);
        return true;
    case BOTTOM_P50:
        *out = metric_of_record(r, METRIC_P50);
        return true;
    case BOTTOM_P99:
        *out = metric_of_record(r, METRIC_P99);
        return true;
    case BOTTOM_CPU:
        if (f->who == -1) {
            *out = metric_of_record(r, METRIC_CPU_PER_OP);
            return r->res.ops > 0;
        }
        if (f->who == -3) return all_cpu(r, out);
        if (!r->observed) return false;
        if (f->who == -2) return per_op(&r->obs.server_cpu_ns, r->res.ops, out);
        return (unsigned)f->who < services_of(r) &&
               per_op(&r->obs.svc[f->who].cpu_ns, r->res.ops, out);
    case BOTTOM_FIGS:
        break;
    }
    return false;
}

/*
 * The seed of a figure's bootstrap: the one the summaries use for it
 * (summary.c: seed + metric; services.c: seed + 1 + service), so that the
 * bottom line and the tables above it give the same interval.
 */
static uint64_t seed_of(const struct figure *f, uint64_t seed)
{
    switch (f->fig) {
    case BOTTOM_OPS:
        return seed + METRIC_OPS_PER_S;
    case BOTTOM_P50:
        return seed + METRIC_P50;
    case BOTTOM_P99:
        return seed + METRIC_P99;
    default:
        break;
    }
    if (f->who == -1) return seed + METRIC_CPU_PER_OP;
    if (f->who == -2) return seed + METRICS;
    if (f->who == -3) return seed + METRICS + 1;
    return seed + 1 + (uint64_t)f->who;
}

/* ---- computing --------------------------------------------------------------------------------
 */

struct calc {
    const struct run_record *recs;
    size_t n;
    enum bottom_by by;
    uint64_t seed;
    struct place_of *places; /* places[i]: recs[i]'s */
    double *a, *b;           /* scratch, n each */
    struct bottom_line *out;
};

/* The values of figure f in the counting runs of cell and arm into x; how many. */
static size_t collect(const struct calc *c, const char *cell, const char *arm,
                      const struct figure *f, double *x)
{
    size_t k = 0;

    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->places[i].cell, cell) == 0 && strcmp(c->places[i].arm, arm) == 0 &&
            report_run_counts(&c->recs[i]) && value_of(&c->recs[i], f, &x[k]))
            k++;
    return k;
}

/* Room for element n of *p (a bottom line has tens of rows: one realloc each). */
static int grow(void **p, size_t n, size_t sz)
{
    void *q = realloc(*p, (n + 1) * sz);

    if (q == NULL) return -ENOMEM;
    *p = q;
    return 0;
}

static double median_of(double *x, size_t n)
{
    struct stats_summary s;

    return n > 0 && stats_summarize(x, n, &s) == 0 ? s.median : NAN;
}

/*
 * The share of r's samples where its load threads shared a CPU with its
 * server, when r ran unpinned (a pinned run's placement is the one asked).
 */
static bool coloc_of(const struct run_record *r, double *share)
{
    return r->observed && r->cfg.ncpus == 0 && coloc_share(&r->obs.coloc, share);
}

/* The median co-location share of the counting runs of cell and arm; NAN when none has one. */
static double coloc_median(const struct calc *c, const char *cell, const char *arm, double *x)
{
    size_t k = 0;

    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->places[i].cell, cell) == 0 && strcmp(c->places[i].arm, arm) == 0 &&
            report_run_counts(&c->recs[i]) && coloc_of(&c->recs[i], &x[k]))
            k++;
    return median_of(x, k);
}

/* Whether the placement of arm and base in cell differed (BOTTOM_PLACEMENT); their shares. */
static bool placement_differed(const struct calc *c, const char *cell, const char *base,
                               const char *arm, double *cb, double *ca)
{
    *cb = coloc_median(c, cell, base, c->a);
    *ca = coloc_median(c, cell, arm, c->b);
    return evidence_coloc_differs(*cb, *ca);
}

bool bottom_few(size_t n_base, size_t n_arm)
{
    return n_base > 0 && n_arm > 0 && stats_mw_min_p(n_base, n_arm) >= STATS_ALPHA;
}

static enum bottom_verdict verdict_of(const struct stats_delta *d, enum bottom_fig fig)
{
    bool up = d->ratio > 1;

    if (!d->ok) return BOTTOM_NA;
    /* ties can bring the normal approximation's p below alpha; so few runs never can */
    if (bottom_few(d->na, d->nb)) return BOTTOM_FEW;
    if (!d->significant) return BOTTOM_SAME;
    return (fig == BOTTOM_OPS) == up ? BOTTOM_BETTER : BOTTOM_WORSE;
}

/* The name of whose CPU f is, for r's services. */
static void who_name(char *buf, size_t cap, const struct run_record *r, const struct figure *f)
{
    if (f->fig != BOTTOM_CPU)
        buf[0] = '\0';
    else if (f->who == -1)
        snprintf(buf, cap, "client");
    else if (f->who == -2)
        snprintf(buf, cap, "server");
    else
        text_safe(buf, cap, r->obs.set->svc[f->who].name);
}

/* The row of figure f of arm against base in cell (none when neither side has a value). */
static int add_row(struct calc *c, const struct run_record *any, const char *cell, const char *base,
                   const char *arm, const struct figure *f, struct stats_delta *d)
{
    size_t na, nb;
    struct bottom_line *o = c->out;
    struct bottom_row *r;
    double cb, ca;
    bool moved = placement_differed(c, cell, base, arm, &cb, &ca);

    na = collect(c, cell, base, f, c->a);
    nb = collect(c, cell, arm, f, c->b);
    memset(d, 0, sizeof(*d));
    if (na + nb == 0) return 1;
    if (grow((void **)&o->rows, o->nrows, sizeof(*o->rows)) < 0) return -ENOMEM;
    r = &o->rows[o->nrows++];
    memset(r, 0, sizeof(*r));
    snprintf(r->cell, sizeof(r->cell), "%s", cell);
    snprintf(r->base, sizeof(r->base), "%s", base);
    snprintf(r->arm, sizeof(r->arm), "%s", arm);
    r->fig = f->fig;
    who_name(r->who, sizeof(r->who), any, f);
    stats_delta(c->a, na, c->b, nb, seed_of(f, c->seed), d);
    r->base_median = median_of(c->a, na);
    r->arm_median = median_of(c->b, nb);
    r->n_base = na;
    r->n_arm = nb;
    r->ratio = d->ok ? d->ratio : NAN;
    r->lo = d->ok ? d->lo : NAN;
    r->hi = d->ok ? d->hi : NAN;
    r->p = d->ok ? d->p : NAN;
    r->verdict = verdict_of(d, f->fig);
    r->coloc_base = cb;
    r->coloc_arm = ca;
    if (moved && r->verdict != BOTTOM_NA) r->verdict = BOTTOM_PLACEMENT;
    return 0;
}

/* Whose CPU the cost sentence sums: "client + server + php-fpm". */
static void all_name(char *buf, size_t cap, const struct run_record *r)
{
    size_t len = (size_t)snprintf(buf, cap, "client");
    char name[BOTTOM_NAME_CAP];

    if (r->observed && r->obs.server_cpu_ns.ok && len < cap)
        len += (size_t)snprintf(buf + len, cap - len, " + server");
    for (unsigned k = 0; k < services_of(r) && len < cap; k++)
        len += (size_t)snprintf(buf + len, cap - len, " + %s",
                                text_safe(name, sizeof(name), r->obs.set->svc[k].name));
}

/*
 * The cost sentence of cell: the CPU of the client and every server
 * together, priced only when arm differs from base significantly. The saving
 * and its interval are cost.c's (cost_saving_range) from this delta's ratio.
 */
static int add_cost(struct calc *c, const struct run_record *any, const char *cell,
                    const char *base, const char *arm)
{
    const struct figure f = { BOTTOM_CPU, -3 };
    size_t na = collect(c, cell, base, &f, c->a), nb = collect(c, cell, arm, &f, c->b);
    struct bottom_line *o = c->out;
    struct cost_range saved, rate;
    struct stats_delta d;
    struct bottom_cost *k;
    double mb, mu;

    if (na == 0 || nb == 0 || placement_differed(c, cell, base, arm, &mb, &mu)) return 0;
    /* a difference of placement is not priced as one of transport: no cost sentence */
    na = collect(c, cell, base, &f, c->a);
    nb = collect(c, cell, arm, &f, c->b);
    stats_delta(c->a, na, c->b, nb, seed_of(&f, c->seed), &d);
    if (!d.ok) return 0;
    if (grow((void **)&o->costs, o->ncosts, sizeof(*o->costs)) < 0) return -ENOMEM;
    k = &o->costs[o->ncosts++];
    memset(k, 0, sizeof(*k));
    snprintf(k->cell, sizeof(k->cell), "%s", cell);
    all_name(k->who, sizeof(k->who), any);
    snprintf(k->base, sizeof(k->base), "%s", base);
    snprintf(k->arm, sizeof(k->arm), "%s", arm);
    k->p = d.p;
    k->n_base = na;
    k->n_arm = nb;
    k->priced = d.significant && !bottom_few(na, nb);
    if (!k->priced) { /* a difference that is not significant is never priced */
        k->saved_ns = k->saved_lo_ns = k->saved_hi_ns = NAN;
        k->rate = k->rate_lo = k->rate_hi = NAN;
        return 0;
    }
    mb = median_of(c->a, na);
    mu = median_of(c->b, nb);
    saved = cost_saving_range(mb, mu, d.lo, d.hi);
    rate = cost_breakeven_rate(saved);
    k->saved_ns = saved.v;
    k->saved_lo_ns = saved.lo;
    k->saved_hi_ns = saved.hi;
    k->rate = rate.v;
    k->rate_lo = rate.lo;
    k->rate_hi = rate.hi;
    return 0;
}

/* The rows of one arm against the base of its cell. */
static int pair_rows(struct calc *c, const struct run_record *any, const char *cell,
                     const char *base, const char *arm)
{
    static const enum bottom_fig figs[] = { BOTTOM_OPS, BOTTOM_P50, BOTTOM_P99 };
    struct stats_delta d;
    int rc = 0;

    for (size_t i = 0; i < ARRAY_LEN(figs) && rc >= 0; i++)
        rc = add_row(c, any, cell, base, arm, &(struct figure){ figs[i], 0 }, &d);
    if (rc >= 0) rc = add_row(c, any, cell, base, arm, &(struct figure){ BOTTOM_CPU, -1 }, &d);
    if (rc >= 0 && any->observed)
        rc = add_row(c, any, cell, base, arm, &(struct figure){ BOTTOM_CPU, -2 }, &d);
    for (unsigned k = 0; k < services_of(any) && rc >= 0; k++)
        rc = add_row(c, any, cell, base, arm, &(struct figure){ BOTTOM_CPU, (int)k }, &d);
    if (rc >= 0) rc = add_cost(c, any, cell, base, arm);
    return rc < 0 ? rc : 0;
}

/* Whether the place at i is the first of its cell (first) or of its arm in that cell. */
static bool first_seen(const struct calc *c, size_t i, bool arm)
{
    for (size_t j = 0; j < i; j++)
        if (strcmp(c->places[j].cell, c->places[i].cell) == 0 &&
            (!arm || strcmp(c->places[j].arm, c->places[i].arm) == 0))
            return false;
    return true;
}

/* The base arm of the cell of run i: its "tcp" arm, else the first. */
static size_t base_of(const struct calc *c, size_t i)
{
    size_t first = c->n;

    for (size_t j = 0; j < c->n; j++) {
        if (strcmp(c->places[j].cell, c->places[i].cell) != 0) continue;
        if (strcmp(c->places[j].arm, "tcp") == 0) return j;
        if (first == c->n) first = j;
    }
    return first;
}

static int cell_rows(struct calc *c, size_t i)
{
    size_t base = base_of(c, i);
    int rc = 0;

    for (size_t j = 0; j < c->n && rc == 0; j++) {
        if (strcmp(c->places[j].cell, c->places[i].cell) != 0 || !first_seen(c, j, true) ||
            strcmp(c->places[j].arm, c->places[base].arm) == 0)
            continue;
        rc = pair_rows(c, &c->recs[j], c->places[i].cell, c->places[base].arm, c->places[j].arm);
    }
    return rc;
}

static void noisy_count(const struct run_record *recs, size_t n, struct bottom_line *out)
{
    out->runs = n;
    out->noisy_cpus = OBS_NOISY_CPUS;
    for (size_t i = 0; i < n; i++) {
        const struct obs_other *x = &recs[i].obs.other;
        if (recs[i].observed) out->noisy_cpus = x->threshold_cpus;
        out->noisy += recs[i].observed && x->noisy;
        out->noisy_unknown += !recs[i].observed || !x->decided;
    }
}

int bottom_compute(const struct run_record *recs, size_t n, enum bottom_by by, uint64_t seed,
                   struct bottom_line *out)
{
    struct calc c = { .recs = recs, .n = n, .by = by, .seed = seed, .out = out };
    int rc = 0;

    memset(out, 0, sizeof(*out));
    c.places = calloc(n ? n : 1, sizeof(*c.places));
    c.a = calloc(n ? n : 1, sizeof(*c.a));
    c.b = calloc(n ? n : 1, sizeof(*c.b));
    if (c.places == NULL || c.a == NULL || c.b == NULL) rc = -ENOMEM;
    for (size_t i = 0; i < n && rc == 0; i++)
        place_of(recs, n, &recs[i], by, &c.places[i]);
    for (size_t i = 0; i < n && rc == 0; i++)
        if (first_seen(&c, i, false)) rc = cell_rows(&c, i);
    noisy_count(recs, n, out);
    free(c.places);
    free(c.a);
    free(c.b);
    if (rc < 0) bottom_release(out);
    return rc;
}

void bottom_release(struct bottom_line *b)
{
    free(b->rows);
    free(b->costs);
    memset(b, 0, sizeof(*b));
}

/* ---- words -------------------------------------------------------------------------------------
 */

static const char *const fig_keys[BOTTOM_FIGS] = { "ops_per_s", "p50_ns", "p99_ns",
                                                   "cpu_ns_per_op" };

const char *bottom_verdict_name(enum bottom_verdict v)
{
    static const char *const names[BOTTOM_VERDICTS] = { "not significant", "better",
                                                        "worse",           "n/a",
                                                        "too few runs",    "placement differed" };

    return (unsigned)v < BOTTOM_VERDICTS ? names[v] : "n/a";
}

void bottom_fig_name(char *buf, size_t cap, const struct bottom_row *r)
{
    static const char *const names[BOTTOM_FIGS] = { "ops/s", "p50 µs", "p99 µs", "CPU µs/req" };

    if (r->fig == BOTTOM_CPU)
        snprintf(buf, cap, "%s %s", names[BOTTOM_CPU], r->who);
    else
        snprintf(buf, cap, "%s", names[(unsigned)r->fig < BOTTOM_FIGS ? r->fig : 0]);
}

/* v with thousands separators, no decimals: "12,043". */
static void thousands(char *buf, size_t cap, double v)
{
    text_number(buf, cap, v, 0);
}

void bottom_value_text(char *buf, size_t cap, const struct bottom_row *r, double v)
{
    if (!isfinite(v))
        snprintf(buf, cap, "n/a");
    else if (r->fig == BOTTOM_OPS)
        thousands(buf, cap, v);
    else
        text_number(buf, cap, v / 1000.0, 2);
}

/* A ratio as the words give it: "1.63×" (text_ratio); "inf" when not finite. */
static void ratio_text(char *buf, size_t cap, double v)
{
    if (!isfinite(v))
        snprintf(buf, cap, "inf");
    else
        text_ratio(buf, cap, v, 2);
}

void bottom_placement_words(char *buf, size_t cap, const struct bottom_row *r)
{
    snprintf(buf, cap,
             "placement differed: %s shared a CPU with its server in %.0f %% of samples, %s in "
             "%.0f %%: not a transport difference; pin with --pin same or split",
             r->arm, 100 * r->coloc_arm, r->base, 100 * r->coloc_base);
}

void bottom_words(char *buf, size_t cap, const struct bottom_row *r)
{
    static const char *const verbs[BOTTOM_FIGS] = { "ran", "took", "took", "used" };
    char what[BOTTOM_NAME_CAP + 16], ratio[32], lo[32], hi[32];

    if (r->verdict == BOTTOM_NA) {
        snprintf(buf, cap, "no comparison (n=%zu+%zu)", r->n_base, r->n_arm);
        return;
    }
    if (r->verdict == BOTTOM_FEW) {
        ratio_text(ratio, sizeof(ratio), r->ratio);
        snprintf(buf, cap, "too few runs for a verdict (n=%zu+%zu): ratio %s", r->n_base, r->n_arm,
                 ratio);
        return;
    }
    if (r->verdict == BOTTOM_PLACEMENT) {
        bottom_placement_words(buf, cap, r);
        return;
    }
    if (r->verdict == BOTTOM_SAME) {
        snprintf(buf, cap, "no significant difference (p=%.2g, n=%zu+%zu)", r->p, r->n_base,
                 r->n_arm);
        return;
    }
    if (r->fig == BOTTOM_CPU)
        snprintf(what, sizeof(what), "the %s CPU", r->who);
    else
        snprintf(what, sizeof(what), "the %s",
                 r->fig == BOTTOM_OPS   ? "ops/s"
                 : r->fig == BOTTOM_P50 ? "p50"
                                        : "p99");
    ratio_text(ratio, sizeof(ratio), r->ratio);
    ratio_text(lo, sizeof(lo), r->lo);
    ratio_text(hi, sizeof(hi), r->hi);
    snprintf(buf, cap, "%s: %s %s %s [%s, %s] %s of %s (p=%.2g, n=%zu+%zu)",
             bottom_verdict_name(r->verdict), r->arm, verbs[(unsigned)r->fig % BOTTOM_FIGS], ratio,
             lo, hi, what, r->base, r->p, r->n_base, r->n_arm);
}

/* A rate of requests/s with three significant digits and separators; "unbounded" for inf. */
static void rate_text(char *buf, size_t cap, double v)
{
    double mag;

    if (!isfinite(v)) {
        snprintf(buf, cap, "unbounded");
        return;
    }
    mag = v >= 1000 ? pow(10, floor(log10(v)) - 2) : 1;
    thousands(buf, cap, round(v / mag) * mag);
}

/* The words of a priced cost: what the arm saves (or costs) and the rate that is one vCPU. */
static void cost_priced_words(char *buf, size_t cap, const struct bottom_cost *c, bool saves)
{
    double lo = saves ? c->saved_lo_ns : -c->saved_hi_ns,
           hi = saves ? c->saved_hi_ns : -c->saved_lo_ns;
    char rate[48], rlo[48], rhi[48], interval[128] = "";

    rate_text(rate, sizeof(rate), c->rate);
    rate_text(rlo, sizeof(rlo), c->rate_lo);
    rate_text(rhi, sizeof(rhi), c->rate_hi);
    if (isfinite(c->rate_lo)) snprintf(interval, sizeof(interval), " [%s, %s]", rlo, rhi);
    snprintf(buf, cap,
             "%s %s %.3g µs [%.3g, %.3g] %sCPU per request (%s): one vCPU %s at %s%s requests/s",
             c->arm, saves ? "saves" : "costs", fabs(c->saved_ns) / 1000.0, lo / 1000.0,
             hi / 1000.0, saves ? "of " : "more ", c->who, saves ? "saved" : "more", rate,
             interval);
}

void bottom_cost_words(char *buf, size_t cap, const struct bottom_cost *c)
{
    bool saves = c->saved_ns > 0;

    if (!c->priced && bottom_few(c->n_base, c->n_arm)) {
        snprintf(buf, cap, "too few runs to price CPU per request (%s) (n=%zu+%zu)", c->who,
                 c->n_base, c->n_arm);
        return;
    }
    if (!c->priced) {
        snprintf(buf, cap,
                 "no significant difference in CPU per request (%s): not priced (p=%.2g, "
                 "n=%zu+%zu)",
                 c->who, c->p, c->n_base, c->n_arm);
        return;
    }
    cost_priced_words(buf, cap, c, saves);
}

void bottom_noisy_words(char *buf, size_t cap, const struct bottom_line *b)
{
    int k;

    buf[0] = '\0';
    if (b->runs == 0) return;
    k = snprintf(buf, cap, "%zu of %zu runs noisy (other processes' CPU + steal above %.2f CPU)",
                 b->noisy, b->runs, b->noisy_cpus);
    if (b->noisy_unknown > 0 && k > 0 && (size_t)k < cap)
        k += snprintf(buf + k, cap - (size_t)k, ", %zu not known", b->noisy_unknown);
    if (b->noisy > 0 && k > 0 && (size_t)k < cap)
        snprintf(buf + k, cap - (size_t)k, "; noisy runs still count");
}

bool bottom_colour(FILE *f)
{
    const char *no = getenv("NO_COLOR");

    return isatty(fileno(f)) && (no == NULL || no[0] == '\0');
}

/* The ANSI colour of a verdict: green, red, dim. */
static const char *colour_of(enum bottom_verdict v)
{
    return v == BOTTOM_BETTER ? "\033[32m" : v == BOTTOM_WORSE ? "\033[31m" : "\033[2m";
}

/* s left-aligned in w columns. */
static void put_left(FILE *f, const char *s, int w)
{
    fputs(s, f);
    for (int i = text_columns(s); i < w; i++)
        fputc(' ', f);
}

static void put_right(FILE *f, const char *s, int w)
{
    for (int i = text_columns(s); i < w; i++)
        fputc(' ', f);
    fputs(s, f);
}

/* The width of the cell column: its longest name up to 24 columns. */
static int cell_width(const struct bottom_line *b)
{
    int w = 4;

    for (size_t i = 0; i < b->nrows; i++) {
        int c = text_columns(b->rows[i].cell);
        if (c > w && c <= 24) w = c;
    }
    return w;
}

static int fig_width(const struct bottom_line *b)
{
    char name[BOTTOM_NAME_CAP + 16];
    int w = 6;

    for (size_t i = 0; i < b->nrows; i++) {
        bottom_fig_name(name, sizeof(name), &b->rows[i]);
        if (text_columns(name) > w) w = text_columns(name);
    }
    return w;
}

static void print_row(FILE *f, const struct bottom_row *r, const struct bottom_row *prev, int cw,
                      int fw, bool colour)
{
    char name[BOTTOM_NAME_CAP + 16], a[48], b[48], words[320], cell[TEXT_SAFE_CAP];
    bool new_cell = prev == NULL || strcmp(prev->cell, r->cell) != 0 ||
                    strcmp(prev->arm, r->arm) != 0 || strcmp(prev->base, r->base) != 0;

    text_safe(cell, sizeof(cell), r->cell);
    if (new_cell && text_columns(cell) > cw) {
        fprintf(f, "  %s\n", cell);
        cell[0] = '\0';
    }
    bottom_fig_name(name, sizeof(name), r);
    bottom_value_text(a, sizeof(a), r, r->base_median);
    bottom_value_text(b, sizeof(b), r, r->arm_median);
    bottom_words(words, sizeof(words), r);
    fputs("  ", f);
    put_left(f, new_cell ? cell : "", cw);
    fputs("  ", f);
    put_left(f, name, fw);
    put_right(f, a, 10);
    put_right(f, b, 10);
    fputs("  ", f);
    if (colour) fputs(colour_of(r->verdict), f);
    fputs(words, f);
    if (colour) fputs("\033[0m", f);
    fputc('\n', f);
}

/* "unix against tcp", or "each arm against its cell's base" when the rows' arms differ. */
static void against_text(char *buf, size_t cap, const struct bottom_line *b)
{
    const struct bottom_row *r0 = &b->rows[0];
    bool same = true;

    for (size_t i = 1; i < b->nrows; i++)
        same &= strcmp(b->rows[i].arm, r0->arm) == 0 && strcmp(b->rows[i].base, r0->base) == 0;
    if (same) {
        char arm[TEXT_SAFE_CAP], base[TEXT_SAFE_CAP];
        snprintf(buf, cap, "%s against %s", text_safe(arm, sizeof(arm), r0->arm),
                 text_safe(base, sizeof(base), r0->base));
    } else {
        snprintf(buf, cap, "each arm against its cell's base");
    }
}

bool bottom_no_verdict(const struct bottom_line *b)
{
    bool few = false;

    for (size_t i = 0; i < b->nrows; i++) {
        if (b->rows[i].verdict != BOTTOM_FEW && b->rows[i].verdict != BOTTOM_NA) return false;
        few |= b->rows[i].verdict == BOTTOM_FEW;
    }
    return few;
}

void bottom_few_words(char *buf, size_t cap, const struct bottom_line *b)
{
    size_t na = 0, nb = 0;
    bool one = true;
    char arm[TEXT_SAFE_CAP], base[TEXT_SAFE_CAP], runs[64], min_p[32];

    for (size_t i = 0; i < b->nrows; i++) {
        const struct bottom_row *r = &b->rows[i];
        if (r->verdict != BOTTOM_FEW) continue;
        if (na == 0) na = r->n_base, nb = r->n_arm;
        one &= r->n_base == na && r->n_arm == nb;
    }
    if (one) {
        snprintf(runs, sizeof(runs), "n=%zu+%zu", na, nb);
        snprintf(min_p, sizeof(min_p), "%.2g", stats_mw_min_p(na, nb));
    } else {
        snprintf(runs, sizeof(runs), "so few runs");
        snprintf(min_p, sizeof(min_p), "%.2g or more", STATS_ALPHA);
    }
    text_safe(arm, sizeof(arm), b->nrows > 0 ? b->rows[0].arm : "");
    text_safe(base, sizeof(base), b->nrows > 0 ? b->rows[0].base : "");
    snprintf(buf, cap,
             "no verdict is possible with %s: Mann-Whitney's smallest p is then %s, and a "
             "difference needs p < %.2g (4 runs a side can reach %.2g); the ratios %s/%s of the "
             "medians only, nothing priced",
             runs, min_p, STATS_ALPHA, stats_mw_min_p(4, 4), arm, base);
}

bool bottom_grid_cell_at(const struct bottom_line *b, size_t i)
{
    const struct bottom_row *r = &b->rows[i], *prev = i > 0 ? &b->rows[i - 1] : NULL;

    return prev == NULL || strcmp(prev->cell, r->cell) != 0 || strcmp(prev->arm, r->arm) != 0 ||
           strcmp(prev->base, r->base) != 0;
}

/* Whether rows a and b are of one column: the same figure, of the same who's CPU. */
static bool same_col(const struct bottom_row *a, const struct bottom_row *b)
{
    return a->fig == b->fig && strcmp(a->who, b->who) == 0;
}

size_t bottom_grid_cols(const struct bottom_line *b, const struct bottom_row **cols, size_t cap)
{
    size_t n = 0;

    for (size_t i = 0; i < b->nrows; i++) {
        size_t k = 0;
        while (k < n && !same_col(cols[k], &b->rows[i]))
            k++;
        if (k == n && n < cap) cols[n++] = &b->rows[i];
    }
    return n;
}

void bottom_grid_col_name(char *buf, size_t cap, const struct bottom_row *col)
{
    static const char *const names[BOTTOM_FIGS] = { "ops/s", "p50", "p99", "CPU" };
    char who[TEXT_SAFE_CAP];

    if (col->fig == BOTTOM_CPU)
        snprintf(buf, cap, "%s %s", names[BOTTOM_CPU], text_safe(who, sizeof(who), col->who));
    else
        snprintf(buf, cap, "%s", names[(unsigned)col->fig < BOTTOM_FIGS ? col->fig : 0]);
}

void bottom_grid_value(char *buf, size_t cap, const struct bottom_line *b, size_t i,
                       const struct bottom_row *col)
{
    snprintf(buf, cap, BOTTOM_GRID_ABSENT);
    for (size_t j = i; j < b->nrows && (j == i || !bottom_grid_cell_at(b, j)); j++) {
        if (!same_col(&b->rows[j], col)) continue;
        if (isfinite(b->rows[j].ratio))
            ratio_text(buf, cap, b->rows[j].ratio);
        else
            snprintf(buf, cap, "n/a");
        return;
    }
}

#define BOTTOM_GRID_COLS 16 /* ops/s, p50, p99, the client, the server and 11 services */

/* The bottom line without verdicts: the sentence, then a row of ratios per cell. */
static void print_grid(FILE *f, const struct bottom_line *b, bool colour)
{
    const struct bottom_row *cols[BOTTOM_GRID_COLS];
    size_t ncols = bottom_grid_cols(b, cols, BOTTOM_GRID_COLS);
    char words[512], name[TEXT_SAFE_CAP + 8], v[32], cell[TEXT_SAFE_CAP];
    int cw = cell_width(b), w[BOTTOM_GRID_COLS];
    bool absent = false;

    bottom_few_words(words, sizeof(words), b);
    fprintf(f, "\n%sbottom line%s: %s\n", colour ? "\033[1m" : "", colour ? "\033[0m" : "", words);
    fputs("  ", f);
    put_left(f, "", cw);
    for (size_t k = 0; k < ncols; k++) {
        bottom_grid_col_name(name, sizeof(name), cols[k]);
        w[k] = text_columns(name) > 6 ? text_columns(name) : 6;
        fputs("  ", f);
        put_right(f, name, w[k]);
    }
    fputc('\n', f);
    for (size_t i = 0; i < b->nrows; i++) {
        if (!bottom_grid_cell_at(b, i)) continue;
        text_safe(cell, sizeof(cell), b->rows[i].cell);
        if (text_columns(cell) > cw) {
            fprintf(f, "  %s\n", cell);
            cell[0] = '\0';
        }
        fputs("  ", f);
        put_left(f, cell, cw);
        for (size_t k = 0; k < ncols; k++) {
            bottom_grid_value(v, sizeof(v), b, i, cols[k]);
            absent = absent || strcmp(v, BOTTOM_GRID_ABSENT) == 0;
            fputs("  ", f);
            put_right(f, v, w[k]);
        }
        fputc('\n', f);
    }
    if (absent) fprintf(f, "  %s\n", BOTTOM_GRID_ABSENT_WORDS);
}

void bottom_print(FILE *f, const struct bottom_line *b, bool colour, const char *hint)
{
    char against[2 * TEXT_SAFE_CAP + 32], words[512], cell[TEXT_SAFE_CAP];
    size_t priced = 0;
    int cw, fw;

    if (b->nrows == 0) return;
    if (bottom_no_verdict(b)) {
        print_grid(f, b, colour);
        goto noisy;
    }
    cw = cell_width(b);
    fw = fig_width(b);
    against_text(against, sizeof(against), b);
    fprintf(f,
            "\n%sbottom line%s: %s (medians of the runs that count; ratio %s/%s with its 95 %% "
            "interval)\n",
            colour ? "\033[1m" : "", colour ? "\033[0m" : "", against, b->rows[0].arm,
            b->rows[0].base);
    fputs("  ", f);
    put_left(f, "", cw);
    fputs("  ", f);
    put_left(f, "", fw);
    put_right(f, text_safe(cell, sizeof(cell), b->rows[0].base), 10);
    put_right(f, text_safe(cell, sizeof(cell), b->rows[0].arm), 10);
    fputc('\n', f);
    for (size_t i = 0; i < b->nrows; i++)
        print_row(f, &b->rows[i], i > 0 ? &b->rows[i - 1] : NULL, cw, fw, colour);
    for (size_t i = 0; i < b->ncosts; i++) {
        if (!b->costs[i].priced) continue;
        bottom_cost_words(words, sizeof(words), &b->costs[i]);
        text_safe(cell, sizeof(cell), b->costs[i].cell);
        fprintf(f, "  cost%s%s: %s\n", cell[0] ? " " : "", cell, words);
        priced++;
    }
    if (priced < b->ncosts && b->ncosts == 1) {
        bottom_cost_words(words, sizeof(words), &b->costs[0]);
        fprintf(f, "  cost: %s\n", words);
    } else if (priced < b->ncosts) {
        fprintf(f, "  cost%s: no significant difference in CPU per request: not priced\n",
                priced > 0 ? " in the other cells" : "");
    }
noisy:
    bottom_noisy_words(words, sizeof(words), b);
    if (words[0] != '\0')
        fprintf(f, "  %s%s%s\n", words, b->noisy > 0 && hint != NULL ? "; " : "",
                b->noisy > 0 && hint != NULL ? hint : "");
}

/* ---- evidence
 * ------------------------------------------------------------------------------------ */

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *row_json(const struct bottom_row *r)
{
    char words[320];

    bottom_words(words, sizeof(words), r);
    return json_pack("{s:s, s:s, s:s?, s:s, s:s, s:o, s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:s, s:s, "
                     "s:o, s:o}",
                     "cell", r->cell, "figure", fig_keys[r->fig], "who", r->who[0] ? r->who : NULL,
                     "base", r->base, "arm", r->arm, "base_median", num(r->base_median),
                     "arm_median", num(r->arm_median), "n_base", (json_int_t)r->n_base, "n_arm",
                     (json_int_t)r->n_arm, "ratio", num(r->ratio), "ci_lo", num(r->lo), "ci_hi",
                     num(r->hi), "p", num(r->p), "verdict", bottom_verdict_name(r->verdict), "text",
                     words, "colocated_base", num(r->coloc_base), "colocated_arm",
                     num(r->coloc_arm));
}

static json_t *cost_json(const struct bottom_cost *c)
{
    char words[512];

    bottom_cost_words(words, sizeof(words), c);
    return json_pack("{s:s, s:s, s:s, s:s, s:b, s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:s}",
                     "cell", c->cell, "who", c->who, "base", c->base, "arm", c->arm, "priced",
                     c->priced, "p", num(c->p), "n_base", (json_int_t)c->n_base, "n_arm",
                     (json_int_t)c->n_arm, "saved_ns", num(c->saved_ns), "saved_lo_ns",
                     num(c->saved_lo_ns), "saved_hi_ns", num(c->saved_hi_ns), "vcpu_rate",
                     num(c->rate), "vcpu_rate_lo", num(c->rate_lo), "vcpu_rate_hi", num(c->rate_hi),
                     "text", words);
}

json_t *bottom_json(const struct bottom_line *b)
{
    json_t *rows = json_array(), *costs = json_array();
    bool ok = rows != NULL && costs != NULL;

    for (size_t i = 0; i < b->nrows && ok; i++)
        ok = json_array_append_new(rows, row_json(&b->rows[i])) == 0;
    for (size_t i = 0; i < b->ncosts && ok; i++)
        ok = json_array_append_new(costs, cost_json(&b->costs[i])) == 0;
    if (!ok) {
        json_decref(rows);
        json_decref(costs);
        return NULL;
    }
    return json_pack("{s:f, s:f, s:I, s:I, s:I, s:f, s:b, s:o, s:o}", "alpha", STATS_ALPHA, "level",
                     STATS_LEVEL, "runs", (json_int_t)b->runs, "noisy", (json_int_t)b->noisy,
                     "noisy_unknown", (json_int_t)b->noisy_unknown, "noisy_threshold_cpus",
                     b->noisy_cpus, "verdict_possible", !bottom_no_verdict(b), "rows", rows, "cost",
                     costs);
}

/* j[key] as a number; NAN when null or missing; *bad when it is there and not a number. */
static double num_at(const json_t *j, const char *key, bool *bad)
{
    const json_t *v = json_object_get(j, key);

    if (json_is_number(v)) return json_number_value(v);
    if (v != NULL && !json_is_null(v)) *bad = true;
    return NAN;
}

static size_t count_at(const json_t *j, const char *key, bool *bad)
{
    const json_t *v = json_object_get(j, key);

    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        *bad = true;
        return 0;
    }
    return (size_t)json_integer_value(v);
}

static void str_at(char *buf, size_t cap, const json_t *j, const char *key, bool *bad)
{
    const json_t *v = json_object_get(j, key);

    buf[0] = '\0';
    if (json_is_string(v))
        snprintf(buf, cap, "%s", json_string_value(v));
    else if (v != NULL && !json_is_null(v))
        *bad = true;
}

static bool row_from(const json_t *j, struct bottom_row *r)
{
    bool bad = !json_is_object(j);
    char fig[32], verdict[32];

    memset(r, 0, sizeof(*r));
    str_at(r->cell, sizeof(r->cell), j, "cell", &bad);
    str_at(fig, sizeof(fig), j, "figure", &bad);
    str_at(r->who, sizeof(r->who), j, "who", &bad);
    str_at(r->base, sizeof(r->base), j, "base", &bad);
    str_at(r->arm, sizeof(r->arm), j, "arm", &bad);
    str_at(verdict, sizeof(verdict), j, "verdict", &bad);
    r->base_median = num_at(j, "base_median", &bad);
    r->arm_median = num_at(j, "arm_median", &bad);
    r->n_base = count_at(j, "n_base", &bad);
    r->n_arm = count_at(j, "n_arm", &bad);
    r->ratio = num_at(j, "ratio", &bad);
    r->lo = num_at(j, "ci_lo", &bad);
    r->hi = num_at(j, "ci_hi", &bad);
    r->p = num_at(j, "p", &bad);
    r->coloc_base = num_at(j, "colocated_base", &bad);
    r->coloc_arm = num_at(j, "colocated_arm", &bad);
    r->fig = BOTTOM_FIGS;
    for (int i = 0; i < BOTTOM_FIGS; i++)
        if (strcmp(fig, fig_keys[i]) == 0) r->fig = (enum bottom_fig)i;
    r->verdict = BOTTOM_VERDICTS;
    for (int v = 0; v < BOTTOM_VERDICTS; v++)
        if (strcmp(verdict, bottom_verdict_name((enum bottom_verdict)v)) == 0)
            r->verdict = (enum bottom_verdict)v;
    return !bad && r->fig < BOTTOM_FIGS && r->verdict < BOTTOM_VERDICTS;
}

static bool cost_from(const json_t *j, struct bottom_cost *c)
{
    bool bad = !json_is_object(j);

    memset(c, 0, sizeof(*c));
    str_at(c->cell, sizeof(c->cell), j, "cell", &bad);
    str_at(c->who, sizeof(c->who), j, "who", &bad);
    str_at(c->base, sizeof(c->base), j, "base", &bad);
    str_at(c->arm, sizeof(c->arm), j, "arm", &bad);
    c->priced = json_is_true(json_object_get(j, "priced"));
    bad |= !json_is_boolean(json_object_get(j, "priced"));
    c->p = num_at(j, "p", &bad);
    c->n_base = count_at(j, "n_base", &bad);
    c->n_arm = count_at(j, "n_arm", &bad);
    c->saved_ns = num_at(j, "saved_ns", &bad);
    c->saved_lo_ns = num_at(j, "saved_lo_ns", &bad);
    c->saved_hi_ns = num_at(j, "saved_hi_ns", &bad);
    c->rate = num_at(j, "vcpu_rate", &bad);
    c->rate_lo = num_at(j, "vcpu_rate_lo", &bad);
    c->rate_hi = num_at(j, "vcpu_rate_hi", &bad);
    if (!c->priced) return !bad;
    /* JSON has no infinity: an unbounded rate was written as null */
    if (isnan(c->rate)) c->rate = INFINITY;
    if (isnan(c->rate_hi) && !isnan(c->rate_lo)) c->rate_hi = INFINITY;
    return !bad && isfinite(c->saved_ns);
}

int bottom_from_json(const json_t *j, struct bottom_line *out)
{
    const json_t *rows = json_object_get(j, "rows"), *costs = json_object_get(j, "cost");
    bool bad = !json_is_object(j) || !json_is_array(rows) || !json_is_array(costs);
    size_t n = json_array_size(rows), m = json_array_size(costs);

    memset(out, 0, sizeof(*out));
    if (bad) return -EINVAL;
    out->rows = calloc(n ? n : 1, sizeof(*out->rows));
    out->costs = calloc(m ? m : 1, sizeof(*out->costs));
    if (out->rows == NULL || out->costs == NULL) {
        bottom_release(out);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n && !bad; i++)
        bad = !row_from(json_array_get(rows, i), &out->rows[out->nrows++]);
    for (size_t i = 0; i < m && !bad; i++)
        bad = !cost_from(json_array_get(costs, i), &out->costs[out->ncosts++]);
    out->runs = count_at(j, "runs", &bad);
    out->noisy = count_at(j, "noisy", &bad);
    out->noisy_unknown = count_at(j, "noisy_unknown", &bad);
    out->noisy_cpus = num_at(j, "noisy_threshold_cpus", &bad);
    if (bad) {
        bottom_release(out);
        return -EINVAL;
    }
    return 0;
}

/* "title" for a cell "", else "title: cell". */
static void retitle(char *cell, size_t cap, const char *title)
{
    char both[2 * BOTTOM_NAME_CAP + 8];

    if (title == NULL || title[0] == '\0') return;
    if (cell[0] == '\0')
        snprintf(both, sizeof(both), "%.*s", BOTTOM_NAME_CAP, title);
    else
        snprintf(both, sizeof(both), "%.*s: %.*s", BOTTOM_NAME_CAP / 2, title, BOTTOM_NAME_CAP,
                 cell);
    snprintf(cell, cap, "%.*s", (int)cap - 1, both);
}

/* Whether every row and cost of b is of one cell. */
static bool one_cell(const struct bottom_line *b)
{
    for (size_t i = 1; i < b->nrows; i++)
        if (strcmp(b->rows[i].cell, b->rows[0].cell) != 0) return false;
    for (size_t i = 0; i < b->ncosts; i++)
        if (b->nrows > 0 && strcmp(b->costs[i].cell, b->rows[0].cell) != 0) return false;
    return true;
}

int bottom_append(struct bottom_line *dst, const struct bottom_line *src, const char *title)
{
    bool one = one_cell(src);

    for (size_t i = 0; i < src->nrows; i++) {
        if (grow((void **)&dst->rows, dst->nrows, sizeof(*dst->rows)) < 0) return -ENOMEM;
        dst->rows[dst->nrows] = src->rows[i];
        if (one) dst->rows[dst->nrows].cell[0] = '\0';
        retitle(dst->rows[dst->nrows].cell, sizeof(dst->rows[0].cell), title);
        dst->nrows++;
    }
    for (size_t i = 0; i < src->ncosts; i++) {
        if (grow((void **)&dst->costs, dst->ncosts, sizeof(*dst->costs)) < 0) return -ENOMEM;
        dst->costs[dst->ncosts] = src->costs[i];
        if (one) dst->costs[dst->ncosts].cell[0] = '\0';
        retitle(dst->costs[dst->ncosts].cell, sizeof(dst->costs[0].cell), title);
        dst->ncosts++;
    }
    if (dst->runs == 0) dst->noisy_cpus = src->noisy_cpus;
    dst->runs += src->runs;
    dst->noisy += src->noisy;
    dst->noisy_unknown += src->noisy_unknown;
    return 0;
}

void bottom_of_heads(const json_t *const *heads, const char *const *titles, size_t n,
                     struct bottom_line *all)
{
    memset(all, 0, sizeof(*all));
    for (size_t i = 0; i < n; i++) {
        const json_t *j = json_object_get(heads[i], EV_BOTTOM_LINE);
        struct bottom_line b;

        if (j == NULL || bottom_from_json(j, &b) < 0) continue;
        bottom_append(all, &b, titles[i]);
        bottom_release(&b);
    }
}

void bottom_placement_print(FILE *f, const struct run_record *recs, size_t n)
{
    bool any = false;
    char name[TEXT_SAFE_CAP];

    for (size_t i = 0; i < n; i++) {
        const struct coloc_result *c = &recs[i].obs.coloc;
        double share;

        if (!recs[i].observed || !c->observed) continue;
        fprintf(f, "%s run %zu %s ",
                any ? ","
                    : "\nplacement observed (load and server threads on one "
                      "CPU, share of samples):",
                i + 1, text_safe(name, sizeof(name), report_transport(&recs[i])));
        if (coloc_share(c, &share))
            fprintf(f, "%.0f %% (n=%u)", 100 * share, c->both);
        else
            fprintf(f, "n/a (n=0)");
        any = true;
    }
    if (any) fputc('\n', f);
}

json_t *bottom_report(FILE *f, const struct run_record *recs, size_t n, enum bottom_by by,
                      uint64_t seed, bool verbose)
{
    struct bottom_line b;
    json_t *j;

    if (bottom_compute(recs, n, by, seed, &b) < 0) return NULL;
    bottom_placement_print(f, recs, n);
    bottom_print(f, &b, bottom_colour(f), verbose ? NULL : "-v lists them");
    j = bottom_json(&b);
    bottom_release(&b);
    return j;
}
