/*
 * cost: the arithmetic of what a Unix socket saves (pure), and the cells of
 * an evidence file's runs by transport (cost.h).
 */
#include "cost.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/runview.h"
#include "evidence/schema.h"
#include "stats.h"

/* ---- parsing ------------------------------------------------------------------------- */

/*
 * A plain decimal number at the start of s: digits with at most one dot ("12",
 * "0.5", ".5"); no sign, exponent, hex, inf or nan. *end points after it.
 */
static int plain_number(const char *s, double *v, const char **end)
{
    const char *p = s;
    size_t digits = 0, dots = 0;

    for (; isdigit((unsigned char)*p) || *p == '.'; p++) {
        if (*p == '.')
            dots++;
        else
            digits++;
    }
    if (digits == 0 || dots > 1) return -EINVAL;
    *v = strtod(s, NULL); /* reads exactly s .. p: digits and one dot */
    if (!isfinite(*v)) return -EINVAL;
    *end = p;
    return 0;
}

int cost_traffic_parse(const char *s, struct cost_traffic *t, struct hb_err *err)
{
    static const struct {
        const char *name;
        double seconds;
    } units[] = {
        { "s", 1 }, { "min", 60 }, { "h", 3600 }, { "day", 86400 }, { "month", COST_MONTH_S }
    };
    const char *p;
    double n, mult = 1;

    if (plain_number(s, &n, &p) < 0)
        return hb_fail(err, -EINVAL,
                       "'%s' is not a traffic volume (N[k|M|G]/UNIT, e.g. 100k/month, 1M/day, "
                       "40k/s)",
                       s);
    switch (*p) {
    case 'k':
        mult = 1e3;
        break;
    case 'M':
        mult = 1e6;
        break;
    case 'G':
        mult = 1e9;
        break;
    }
    if (mult > 1) p++;
    if (*p != '/')
        return hb_fail(err, -EINVAL, "'%s': after the number comes k, M or G, then /UNIT", s);
    for (size_t i = 0; i < ARRAY_LEN(units); i++) {
        if (strcmp(p + 1, units[i].name) != 0) continue;
        if (!(n > 0)) return hb_fail(err, -EINVAL, "'%s': the volume must be above 0", s);
        if (str_copy(t->text, sizeof(t->text), s) < 0)
            return hb_fail(err, -EINVAL, "'%s' is too long", s);
        t->per_month = n * mult * (COST_MONTH_S / units[i].seconds);
        return 0;
    }
    return hb_fail(err, -EINVAL, "'%s': unknown unit '%s' (s, min, h, day or month)", s, p + 1);
}

double cost_traffic_per_s(const struct cost_traffic *t)
{
    return t->per_month / COST_MONTH_S;
}

int cost_app_work_parse(const char *s, double *ns, struct hb_err *err)
{
    static const struct {
        const char *name;
        double ns;
    } units[] = { { "ns", 1 }, { "us", 1e3 }, { "µs", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
    const char *p;
    double n;

    if (plain_number(s, &n, &p) < 0)
        return hb_fail(err, -EINVAL, "'%s' is not a time per request (e.g. 500us, 1ms, 0.05s)", s);
    for (size_t i = 0; i < ARRAY_LEN(units); i++) {
        if (strcmp(p, units[i].name) != 0) continue;
        *ns = n * units[i].ns;
        return 0;
    }
    if (*p == '\0') return hb_fail(err, -EINVAL, "'%s' needs a unit (ns, us, ms or s)", s);
    return hb_fail(err, -EINVAL, "'%s': unknown unit '%s' (ns, us, ms or s)", s, p);
}

/* ---- the saving and what follows from it -------------------------------------------- */

bool cost_range_has_interval(struct cost_range r)
{
    return !isnan(r.lo) && !isnan(r.hi);
}

struct cost_range cost_range_scale(struct cost_range r, double k)
{
    struct cost_range o = { r.v * k, r.lo * k, r.hi * k };

    if (k < 0) {
        double t = o.lo;
        o.lo = o.hi;
        o.hi = t;
    }
    return o;
}

static bool all_positive(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(x[i] > 0)) return false;
    return true;
}

static bool all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return false;
    return true;
}

int cost_saving_of(const double *tcp, size_t n_tcp, const double *uds, size_t n_uds, uint64_t seed,
                   struct cost_saving *out)
{
    struct stats_summary a, b;
    double r, lo, hi, u;
    int rc;

    if (n_tcp == 0 || n_uds == 0 || !all_finite(tcp, n_tcp) || !all_finite(uds, n_uds))
        return -EINVAL;
    if (stats_summarize(tcp, n_tcp, &a) < 0 || stats_summarize(uds, n_uds, &b) < 0) return -EINVAL;
    *out = (struct cost_saving){ .tcp = a.median, .uds = b.median, .n_tcp = n_tcp, .n_uds = n_uds };
    out->saved = (struct cost_range){ a.median - b.median, NAN, NAN };
    out->p = NAN;
    if (n_tcp < 2 || n_uds < 2 || !all_positive(tcp, n_tcp) || !all_positive(uds, n_uds)) return 0;
    rc = stats_bootstrap_ratio(tcp, n_tcp, uds, n_uds, COST_BOOTSTRAP, COST_LEVEL, seed, &r, &lo,
                               &hi);
    if (rc < 0) return rc;
    out->saved = cost_saving_range(a.median, b.median, lo, hi);
    /* so few runs are never significant, whatever ties make of the normal approximation */
    if (stats_mann_whitney(tcp, n_tcp, uds, n_uds, &u, &out->p) == 0)
        out->significant = stats_significant(r, lo, hi, out->p, STATS_ALPHA) &&
                           stats_mw_min_p(n_tcp, n_uds) < STATS_ALPHA;
    return 0;
}

struct cost_range cost_saving_range(double tcp, double uds, double lo, double hi)
{
    struct cost_range s = { tcp - uds, NAN, NAN };

    if (isnan(lo) || isnan(hi)) return s;
    /* saved = tcp (1 - r): decreasing in r, so the ratio's high end is the saving's low one */
    s.lo = tcp * (1 - hi);
    s.hi = tcp * (1 - lo);
    /* The bootstrap's ends hold the point ratio, but tcp (1 - r) and tcp - uds round apart: with
     * ties (10 ms ticks, histogram buckets) an end can miss the point by an ulp. Hold it. */
    s.lo = fmin(s.lo, s.v);
    s.hi = fmax(s.hi, s.v);
    return s;
}

struct cost_range cost_month_cpu_s(struct cost_range saved_ns, double per_month)
{
    return cost_range_scale(saved_ns, per_month / 1e9);
}

struct cost_range cost_vcpu_share(struct cost_range month_s)
{
    return cost_range_scale(month_s, 1 / COST_MONTH_S);
}

struct cost_range cost_price(struct cost_range share, double usd)
{
    return cost_range_scale(share, usd);
}

/* 1e9 / |ns|: requests per second at which ns per request is one CPU-second per second. */
static double rate_of(double ns)
{
    return ns == 0 ? INFINITY : 1e9 / fabs(ns);
}

struct cost_range cost_breakeven_rate(struct cost_range saved_ns)
{
    struct cost_range o = { rate_of(saved_ns.v), NAN, NAN };
    double a, b;

    if (!cost_range_has_interval(saved_ns)) return o;
    a = fabs(saved_ns.lo);
    b = fabs(saved_ns.hi);
    o.lo = rate_of(a > b ? a : b);
    /* an interval that holds 0 (or touches it) does not rule out saving nothing */
    o.hi = saved_ns.lo <= 0 && saved_ns.hi >= 0 ? INFINITY : rate_of(a < b ? a : b);
    return o;
}

struct cost_range cost_diluted(struct cost_range saved_ns, double hop_ns, double app_ns)
{
    double total = hop_ns + app_ns;

    if (!(total > 0)) return (struct cost_range){ NAN, NAN, NAN };
    return cost_range_scale(saved_ns, 1 / total);
}

/* ---- cells ---------------------------------------------------------------------------- */

/* One figure of one run. */
struct cost_point {
    char name[COST_NAME_CAP];
    enum cost_kind kind;
    double v;
};

/* Appends a figure to out (of cap) unless full; n is how many it holds. */
static void point_add(struct cost_point *out, size_t cap, size_t *n, const char *name,
                      enum cost_kind kind, double v)
{
    if (*n == cap) return;
    out[*n].kind = kind;
    out[*n].v = v;
    snprintf(out[*n].name, sizeof(out[*n].name), "%s", name);
    (*n)++;
}

/* Whether name is one of the figures cost names itself (a service of that name is prefixed). */
static bool own_figure(const char *name)
{
    static const char *const own[] = { "client",        "server", "client+server",
                                       "system",        "p50",    "mean",
                                       "server cgroup", "sum",    "client+services" };

    for (size_t i = 0; i < ARRAY_LEN(own); i++)
        if (strcmp(name, own[i]) == 0) return true;
    return false;
}

/* Appends figure v to out unless it is not one (NAN: the run does not hold it). */
static void figure_add(struct cost_point *out, size_t cap, size_t *n, const char *name,
                       enum cost_kind kind, double v)
{
    if (!isnan(v)) point_add(out, cap, n, name, kind, v);
}

/*
 * Each named service's CPU per request (observed.services, `run --service`),
 * a series named after it ("php-fpm"; "service NAME" when the name is one of
 * cost's own), and their sum with the client's ("client+services").
 */
static void service_points(const struct run_view *r, struct cost_point *out, size_t cap, size_t *n)
{
    char name[COST_NAME_CAP];

    for (unsigned i = 0; i < r->nsvc; i++) {
        const char *svc = r->svc[i].name;
        if (svc == NULL || isnan(r->svc[i].cpu_ns_per_op)) continue;
        snprintf(name, sizeof(name), "%s%s", own_figure(svc) ? "service " : "", svc);
        point_add(out, cap, n, name, COST_CPU, r->svc[i].cpu_ns_per_op);
    }
    figure_add(out, cap, n, "client+services", COST_CPU, r->sum_ns_per_op);
}

/*
 * The figures of one run (its run view): CPU per request of the client, the
 * server, their sum, the whole system (/proc/stat busy time, softirq included)
 * and the server's cgroup when it is measured besides the server's pids (a
 * server measured by its cgroup alone: the cgroup figure is the server's);
 * each named service's and their sum with the client's; then latency p50 and
 * mean. A figure the run does not hold (unavailable, or from an older writer)
 * is left out. Returns how many.
 */
static size_t run_points(const json_t *run, struct cost_point *out, size_t cap)
{
    struct run_view view, *r = &view;
    size_t n = 0;
    bool cgroup_alone;

    run_view_fill(run, r);
    cgroup_alone = r->server_source != NULL && strcmp(r->server_source, "cgroup") == 0;
    figure_add(out, cap, &n, "client", COST_CPU, r->client_cpu_ns_per_op);
    figure_add(out, cap, &n, "server", COST_CPU, r->server_ns_per_op);
    figure_add(out, cap, &n, "client+server", COST_CPU, r->client_plus_server_ns_per_op);
    figure_add(out, cap, &n, "system", COST_CPU, r->system_ns_per_op);
    if (!cgroup_alone) figure_add(out, cap, &n, "server cgroup", COST_CPU, r->cgroup_ns_per_op);
    service_points(r, out, cap, &n);
    figure_add(out, cap, &n, "p50", COST_LATENCY, r->latency.p50);
    figure_add(out, cap, &n, "mean", COST_LATENCY, r->latency.mean);
    return n;
}

/* Grows *p (of *cap elements of size sz) to hold one more than n; -ENOMEM. */
static int grow(void **p, size_t *cap, size_t n, size_t sz)
{
    size_t ncap;
    void *more;

    if (n < *cap) return 0;
    ncap = *cap ? 2 * *cap : 8;
    more = realloc(*p, ncap * sz);
    if (more == NULL) return -ENOMEM;
    *p = more;
    *cap = ncap;
    return 0;
}

static struct cost_series *series_get(struct cost_cell *c, const char *name, enum cost_kind kind)
{
    struct cost_series *s;

    for (size_t i = 0; i < c->nseries; i++)
        if (strcmp(c->series[i].name, name) == 0) return &c->series[i];
    if (grow((void **)&c->series, &c->cap, c->nseries, sizeof(*c->series)) < 0) return NULL;
    s = &c->series[c->nseries++];
    *s = (struct cost_series){ .kind = kind };
    str_copy(s->name, sizeof(s->name), name);
    return s;
}

static int series_push(struct cost_series *s, int side, double v)
{
    if (grow((void **)&s->v[side], &s->cap[side], s->n[side], sizeof(double)) < 0) return -ENOMEM;
    s->v[side][s->n[side]++] = v;
    return 0;
}

const struct cost_series *cost_cell_series(const struct cost_cell *c, const char *name)
{
    for (size_t i = 0; i < c->nseries; i++)
        if (strcmp(c->series[i].name, name) == 0) return &c->series[i];
    return NULL;
}

/*
 * The cell of key k (endpoint "", label its group), added with its strings
 * copied when new; NULL: no memory.
 */
static struct cost_cell *cell_get(struct cost_set *s, const struct run_key *k)
{
    struct cost_cell *c;

    for (size_t i = 0; i < s->ncells; i++)
        if (evidence_key_order(&s->cells[i].key, k) == 0) return &s->cells[i];
    if (grow((void **)&s->cells, &s->cap, s->ncells, sizeof(*s->cells)) < 0) return NULL;
    c = &s->cells[s->ncells];
    *c = (struct cost_cell){ .key = *k };
    c->key.endpoint = strdup("");
    c->key.label = strdup(k->label);
    c->key.mode = strdup(k->mode);
    c->key.proto = strdup(k->proto);
    s->ncells++;
    if (c->key.endpoint && c->key.label && c->key.mode && c->key.proto) return c;
    return NULL; /* cost_set_release frees what was copied */
}

/*
 * The run's side: the hop under test (evidence_hop_transport: the arm its
 * label names, NAME.tcp or NAME.unix, which a stack puts behind a web server
 * while the client's endpoints are both TCP; else its endpoint's transport);
 * -1 for neither tcp nor unix.
 */
static int side_of(const json_t *run)
{
    const char *t = evidence_hop_transport(run);

    if (t == NULL) return -1;
    if (strcmp(t, "tcp") == 0) return COST_TCP;
    if (strcmp(t, "unix") == 0) return COST_UDS;
    return -1;
}

/*
 * Notes where a run of c's side went: its endpoint and label ("" for none).
 * The first run names the side; a later one of another place mixes it (see
 * struct cost_cell). -ENOMEM.
 */
static int side_note(struct cost_cell *c, int side, const char *ep, const char *label)
{
    if (c->endpoint[side] == NULL) {
        c->endpoint[side] = strdup(ep);
        c->label[side] = label[0] != '\0' ? strdup(label) : NULL;
        return c->endpoint[side] && (label[0] == '\0' || c->label[side]) ? 0 : -ENOMEM;
    }
    if (strcmp(c->label[side] ? c->label[side] : "", label) != 0 ||
        (label[0] == '\0' && strcmp(c->endpoint[side], ep) != 0))
        c->mixed[side] = true;
    if (strcmp(c->endpoint[side], ep) != 0) c->several_endpoints[side] = true;
    return 0;
}

/*
 * The group of a run's label, its cell's name (owned; NULL: no memory): NAME
 * for a label NAME.tcp or NAME.unix, as the stacks label a cell's two arms;
 * "" for any other label and for none, so that such runs are grouped as
 * unlabelled ones are.
 */
static char *label_group(const char *label)
{
    size_t n = 0;

    if (evidence_label_arm(label, &n) == NULL) return strdup("");
    return strndup(label, n);
}

int cost_set_add(struct cost_set *s, const json_t *run, struct hb_err *err)
{
    struct cost_point pts[COST_MAX_FIGURES];
    struct run_key k;
    struct cost_cell *c;
    const char *ep, *label;
    char *group;
    bool counts;
    size_t n;
    int rc = evidence_run_cell(run, &k, &counts, err), side;

    if (rc != 0) return rc < 0 ? rc : 0;
    ep = k.endpoint;
    label = k.label;
    side = side_of(run);
    if (side < 0) return 0;
    group = label_group(label);
    if (group == NULL) return hb_fail(err, -ENOMEM, "out of memory");
    k.endpoint = "";
    k.label = group;
    c = cell_get(s, &k);
    free(group);
    if (c == NULL || side_note(c, side, ep, label) < 0)
        return hb_fail(err, -ENOMEM, "out of memory");
    c->runs[side]++;
    if (!counts) return 0;
    c->counted[side]++;
    n = run_points(run, pts, ARRAY_LEN(pts));
    for (size_t i = 0; i < n; i++) {
        struct cost_series *ser = series_get(c, pts[i].name, pts[i].kind);
        if (ser == NULL || series_push(ser, side, pts[i].v) < 0)
            return hb_fail(err, -ENOMEM, "out of memory");
    }
    return 0;
}

struct cost_reading {
    struct cost_set *set;
    const char *path;
};

static int cost_take(void *ctx, size_t idx, json_t *run, struct hb_err *err)
{
    struct cost_reading *r = ctx;
    char msg[sizeof(err->msg)];
    int rc = cost_set_add(r->set, run, err);

    if (rc != -EINVAL) return rc;
    memcpy(msg, err->msg, sizeof(msg));
    return hb_fail(err, -EINVAL, "%s: not valid evidence: run %zu: %s", r->path, idx, msg);
}

int cost_read(const char *path, struct cost_set *s, struct hb_err *err)
{
    struct cost_reading r = { s, path };
    struct evidence_reader reader = { .take = cost_take, .ctx = &r };
    json_t *head = NULL;
    int rc = evidence_read(path, &reader, &head, err);

    json_decref(head);
    return rc;
}

void cost_set_release(struct cost_set *s)
{
    for (size_t i = 0; i < s->ncells; i++) {
        struct cost_cell *c = &s->cells[i];
        for (size_t j = 0; j < c->nseries; j++) {
            free(c->series[j].v[0]);
            free(c->series[j].v[1]);
        }
        free(c->series);
        for (int side = 0; side < 2; side++) {
            free(c->endpoint[side]);
            free(c->label[side]);
        }
        free((void *)(uintptr_t)c->key.endpoint);
        free((void *)(uintptr_t)c->key.label);
        free((void *)(uintptr_t)c->key.mode);
        free((void *)(uintptr_t)c->key.proto);
    }
    free(s->cells);
    *s = (struct cost_set){ 0 };
}
