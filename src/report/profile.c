/*
 * report/profile: --profile's figures per request, per cell and tcp - unix
 * (report/profile.h).
 */
#include "report/profile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/schema.h"
#include "hist.h"
#include "stats.h"
#include "util.h"

#define HOP_SIDE "hop" /* the hop's sides together: all but hopbench and other */
#define SHOW_US  0.05  /* a subsystem under this many µs per request is left out of the text */

/* ---- a run's object ------------------------------------------------------------------------ */

/*
 * Side s's CPU over the window as its clocks measured it (the load threads', the server's,
 * each service's), or NAN: hopbench's other threads and other processes have none.
 */
static double side_clock_ns(const struct run_record *r, unsigned s)
{
    const struct profile_result *p = &r->obs.prof;
    const char *name = p->side[s].name;
    const struct service_set *set = r->obs.set;

    if (strcmp(name, "client") == 0) return (double)r->res.client_cpu_ns;
    if (strcmp(name, "server") == 0)
        return r->obs.server_cpu_ns.ok ? (double)r->obs.server_cpu_ns.v : NAN;
    for (unsigned i = 0; set != NULL && i < set->n && i < SERVICE_MAX; i++)
        if (strcmp(name, set->svc[i].name) == 0)
            return r->obs.svc[i].cpu_ns.ok ? (double)r->obs.svc[i].cpu_ns.v : NAN;
    return NAN;
}

json_t *profile_run_json(const struct run_record *r)
{
    const struct profile_result *p = &r->obs.prof;
    json_t *o, *sides = json_array(), *folded = json_array();
    uint64_t ops = r->res.ops;

    if (!r->observed || !r->obs.profiled) return NULL;
    for (unsigned s = 0; s < p->nsides; s++) {
        json_t *ns = json_object(), *per = json_object();
        uint64_t total = 0;
        for (int k = 0; k < SUBSYS_COUNT; k++) {
            json_object_set_new(ns, subsys_name((enum prof_subsys)k),
                                json_integer((json_int_t)p->side[s].ns[k]));
            json_object_set_new(per, subsys_name((enum prof_subsys)k),
                                ops ? json_real((double)p->side[s].ns[k] / (double)ops)
                                    : json_null());
            total += p->side[s].ns[k];
        }
        double clock = side_clock_ns(r, s);
        json_array_append_new(
            sides,
            json_pack("{s:s, s:I, s:o, s:o, s:o, s:o, s:o}", EV_NAME, p->side[s].name, "samples",
                      (json_int_t)p->side[s].samples, "ns", ns, "ns_per_op", per, "total_ns_per_op",
                      ops ? json_real((double)total / (double)ops) : json_null(), "clock_ns",
                      isnan(clock) ? json_null() : json_integer((json_int_t)clock), "sampled_share",
                      isnan(clock) || clock <= 0 ? json_null() : json_real((double)total / clock)));
    }
    for (const char *l = p->folded; l != NULL && *l != '\0';) {
        const char *end = strchr(l, '\n');
        size_t len = end != NULL ? (size_t)(end - l) : strlen(l);
        json_array_append_new(folded, json_stringn(l, len));
        l = end != NULL ? end + 1 : l + len;
    }
    o = json_pack("{s:I, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o}", "period_ns",
                  (json_int_t)p->period_ns, "cpus", (int)p->cpus, "samples", (json_int_t)p->samples,
                  "idle", (json_int_t)p->idle, "idle_ns", (json_int_t)p->idle_ns, "lost",
                  (json_int_t)p->lost, "missed", (json_int_t)p->missed, "throttled",
                  (json_int_t)p->throttled, "profiler_cpu_ns", (json_int_t)p->self_ns, "sides",
                  sides, "folded", folded);
    return o;
}

/* ---- a run, read ----------------------------------------------------------------------------- */

/* The key: the cell's figures but the transport, and its label less its last ".transport". */
static void key_make(char *key, size_t cap, const char *proto, const char *mode, long long size,
                     long long conns, long long pipeline, const char *label)
{
    char stem[ENDPOINT_LABEL_MAX] = "";

    if (label != NULL && label[0] != '\0') {
        const char *dot = strrchr(label, '.');
        size_t n = dot != NULL ? (size_t)(dot - label) : strlen(label);
        if (n >= sizeof(stem)) n = sizeof(stem) - 1;
        memcpy(stem, label, n);
        stem[n] = '\0';
    }
    snprintf(key, cap, "%s %s %lld c%lld p%lld%s%s", proto, mode, size, conns, pipeline,
             stem[0] ? " " : "", stem);
}

/*
 * The run's transport as the pairs take it: a label's last part when it names one (a stack's
 * "apache-fpm.unix" loads the web server over TCP; its backend hop is the socket), else the
 * endpoint's.
 */
static void arm_set(char *buf, size_t cap, const char *label, const char *transport)
{
    const char *dot = label != NULL ? strrchr(label, '.') : NULL;

    if (dot != NULL && (strcmp(dot + 1, "tcp") == 0 || strcmp(dot + 1, "unix") == 0 ||
                        strcmp(dot + 1, "tcp-veth") == 0))
        transport = dot + 1;
    snprintf(buf, cap, "%s", transport);
}

bool prof_run_from_record(const struct run_record *r, struct prof_run *out)
{
    const struct profile_result *p = &r->obs.prof;

    if (!r->observed || !r->obs.profiled) return false;
    memset(out, 0, sizeof(*out));
    key_make(out->key, sizeof(out->key), r->proto, report_mode_name(r->cfg.mode),
             (long long)r->cfg.size, (long long)r->cfg.conns, (long long)r->cfg.pipeline,
             r->cfg.ep.label);
    snprintf(out->cell, sizeof(out->cell), "%s", endpoint_name(&r->cfg.ep));
    arm_set(out->transport, sizeof(out->transport), r->cfg.ep.label, report_transport(r));
    snprintf(out->client, sizeof(out->client), "%s", report_transport(r));
    out->per_request = r->cfg.mode == LOAD_CONNECT;
    out->counts = report_run_counts(r);
    out->ops = r->res.ops;
    for (int ph = 0; ph < PHASES; ph++) {
        const struct hist *h = r->res.phase[ph];
        out->phase_ns[ph] = h != NULL && h->total > 0 ? hist_mean(h) : NAN;
    }
    out->period_ns = p->period_ns;
    out->cpus = p->cpus;
    out->nsides = p->nsides;
    for (unsigned s = 0; s < p->nsides; s++) {
        snprintf(out->side[s], sizeof(out->side[s]), "%s", p->side[s].name);
        for (int k = 0; k < SUBSYS_COUNT; k++)
            out->ns[s][k] = (double)p->side[s].ns[k];
        out->clock_ns[s] = side_clock_ns(r, s);
    }
    out->folded = p->folded;
    return true;
}

static const char *jstr(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s != NULL ? s : "";
}

static long long jint(const json_t *o, const char *k)
{
    return (long long)json_integer_value(json_object_get(o, k));
}

bool prof_run_from_json(const json_t *run, struct prof_run *out)
{
    const json_t *p = json_object_get(run, EV_PROFILE), *sides = json_object_get(p, "sides");
    const json_t *phases = json_object_get(run, EV_PHASES), *s;
    const char *label = jstr(run, EV_LABEL);
    size_t i;

    if (!json_is_object(p) || !json_is_array(sides)) return false;
    memset(out, 0, sizeof(*out));
    key_make(out->key, sizeof(out->key), jstr(run, EV_PROTO), jstr(run, EV_MODE),
             jint(run, EV_SIZE), jint(run, EV_CONNECTIONS), jint(run, EV_PIPELINE), label);
    snprintf(out->cell, sizeof(out->cell), "%s", label[0] ? label : jstr(run, EV_ENDPOINT));
    arm_set(out->transport, sizeof(out->transport), label, jstr(run, "transport"));
    snprintf(out->client, sizeof(out->client), "%s", jstr(run, "transport"));
    out->per_request = strcmp(jstr(run, EV_MODE), report_mode_name(LOAD_CONNECT)) == 0;
    out->counts = json_is_true(json_object_get(run, EV_VALID)) &&
                  !json_is_true(json_object_get(run, EV_INTERRUPTED));
    out->ops = (uint64_t)jint(run, EV_OPS);
    for (int ph = 0; ph < PHASES; ph++) {
        const json_t *lat = json_object_get(
            json_object_get(phases, load_phase_name((enum load_phase)ph)), EV_LATENCY_NS);
        const json_t *mean = json_object_get(lat, EV_MEAN);
        out->phase_ns[ph] = json_is_number(mean) ? json_number_value(mean) : NAN;
    }
    out->period_ns = (uint64_t)jint(p, "period_ns");
    out->cpus = (unsigned)jint(p, "cpus");
    json_array_foreach(sides, i, s)
    {
        const json_t *ns = json_object_get(s, "ns"), *clock = json_object_get(s, "clock_ns");
        if (out->nsides == PROFILE_SIDES) break;
        snprintf(out->side[out->nsides], sizeof(out->side[0]), "%s", jstr(s, EV_NAME));
        for (int k = 0; k < SUBSYS_COUNT; k++)
            out->ns[out->nsides][k] = (double)jint(ns, subsys_name((enum prof_subsys)k));
        out->clock_ns[out->nsides] = json_is_number(clock) ? json_number_value(clock) : NAN;
        out->nsides++;
    }
    return true;
}

/* ---- cells --------------------------------------------------------------------------------- */

struct pcell {
    const struct prof_run *first;
    size_t *idx; /* the runs that count */
    size_t n, all;
};

/* The cells of runs, in the order they first appear; *ncells. NULL when out of memory. */
static struct pcell *cells_of(const struct prof_run *runs, size_t n, size_t *ncells)
{
    struct pcell *c = calloc(n + 1, sizeof(*c));
    size_t nc = 0;

    if (c == NULL) return NULL;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < nc && !(strcmp(c[j].first->key, runs[i].key) == 0 &&
                           strcmp(c[j].first->cell, runs[i].cell) == 0 &&
                           strcmp(c[j].first->transport, runs[i].transport) == 0))
            j++;
        if (j == nc) {
            c[nc].first = &runs[i];
            c[nc].idx = malloc(n * sizeof(size_t));
            if (c[nc].idx == NULL) break;
            nc++;
        }
        c[j].all++;
        if (runs[i].counts && runs[i].ops > 0) c[j].idx[c[j].n++] = i;
    }
    *ncells = nc;
    return c;
}

static void cells_free(struct pcell *c, size_t n)
{
    for (size_t i = 0; i < n && c != NULL; i++)
        free(c[i].idx);
    free(c);
}

/* Whether side name is one of the hop's (not hopbench's own threads, not other processes). */
static bool hop_side(const char *name)
{
    return strcmp(name, "hopbench") != 0 && strcmp(name, "other") != 0;
}

/*
 * µs per request of run r's side (HOP_SIDE: the hop's sides summed) in
 * subsystem k (SUBSYS_COUNT: all of them).
 */
static double run_us(const struct prof_run *r, const char *side, int k)
{
    double ns = 0;

    for (unsigned s = 0; s < r->nsides; s++) {
        bool in =
            strcmp(side, HOP_SIDE) == 0 ? hop_side(r->side[s]) : strcmp(side, r->side[s]) == 0;
        if (!in) continue;
        for (int j = 0; j < SUBSYS_COUNT; j++)
            if (k == SUBSYS_COUNT || k == j) ns += r->ns[s][j];
    }
    return r->ops > 0 ? ns / (double)r->ops / 1000.0 : 0;
}

/* The values of a cell's counting runs into x (c->n of them). */
static void cell_values(const struct prof_run *runs, const struct pcell *c, const char *side, int k,
                        double *x)
{
    for (size_t i = 0; i < c->n; i++)
        x[i] = run_us(&runs[c->idx[i]], side, k);
}

static json_t *stat_json(const struct stats_summary *s)
{
    return json_pack("{s:f, s:f, s:f}", EV_MEDIAN, s->median, EV_MIN, s->min, EV_MAX, s->max);
}

/* The sides a cell's runs name, the hop first; *n. */
static unsigned sides_of(const struct prof_run *r, const char **out)
{
    unsigned n = 0;

    out[n++] = HOP_SIDE;
    for (unsigned s = 0; s < r->nsides && n < PROFILE_SIDES + 1; s++)
        out[n++] = r->side[s];
    return n;
}

/* Appends "name v [lo, hi]" to a wrapped line of f. */
struct wrap {
    FILE *f;
    size_t col;
    bool first;
};

static void wrap_add(struct wrap *w, const char *text)
{
    size_t len = strlen(text);

    if (!w->first && w->col + len + 2 > 100) {
        fputs(",\n          ", w->f);
        w->col = 10;
    } else if (!w->first) {
        fputs(", ", w->f);
        w->col += 2;
    }
    fputs(text, w->f);
    w->col += len;
    w->first = false;
}

/*
 * Into x, for each of c's runs that has side's clock: the share of the CPU its clocks measured
 * that the side's samples stand for. Returns how many.
 */
static size_t share_values(const struct prof_run *runs, const struct pcell *c, const char *side,
                           double *x)
{
    size_t n = 0;

    for (size_t i = 0; i < c->n; i++) {
        const struct prof_run *r = &runs[c->idx[i]];
        for (unsigned s = 0; s < r->nsides; s++) {
            double t = 0;
            if (strcmp(r->side[s], side) != 0 || !(r->clock_ns[s] > 0)) continue;
            for (int k = 0; k < SUBSYS_COUNT; k++)
                t += r->ns[s][k];
            x[n++] = t / r->clock_ns[s];
        }
    }
    return n;
}

/*
 * The line of c's sampled shares, "    sampled / measured CPU: client 0.82 [0.80, 0.85], ...",
 * for the sides with clocks in every run (none: no line); each side's summary into its
 * object of js (the cell's "sides", in sides' order) as "sampled_share".
 */
static void shares_print(FILE *f, const struct prof_run *runs, const struct pcell *c,
                         const char **sides, unsigned ns, json_t *js, double *x)
{
    struct wrap w = { f, 0, true };
    char buf[96];

    for (unsigned s = 1; s < ns; s++) { /* not the hop: its sides' clocks are apart */
        struct stats_summary st;
        if (share_values(runs, c, sides[s], x) != c->n || c->n == 0) continue;
        stats_summarize(x, c->n, &st);
        json_object_set_new(json_array_get(js, s), "sampled_share", stat_json(&st));
        if (w.first) w.col = (size_t)fprintf(f, "    sampled / measured CPU: ");
        if (c->n > 1)
            snprintf(buf, sizeof(buf), "%s %.2f [%.2f, %.2f]", sides[s], st.median, st.min, st.max);
        else
            snprintf(buf, sizeof(buf), "%s %.2f", sides[s], st.median);
        wrap_add(&w, buf);
    }
    if (!w.first) fputc('\n', f);
}

/* One cell's table: per side, the total and each subsystem. */
static json_t *cell_print(FILE *f, const struct prof_run *runs, const struct pcell *c, double *x)
{
    const char *sides[PROFILE_SIDES + 1];
    unsigned ns = sides_of(c->first, sides);
    json_t *js = json_array();

    fprintf(f, "  %s (%s), %zu of %zu runs\n", c->first->cell, c->first->transport, c->n, c->all);
    for (unsigned s = 0; s < ns && c->n > 0; s++) {
        struct stats_summary tot, st;
        json_t *subs = json_object();
        struct wrap w = { f, 0, true };
        char buf[96];

        cell_values(runs, c, sides[s], SUBSYS_COUNT, x);
        stats_summarize(x, c->n, &tot);
        for (int k = 0; k < SUBSYS_COUNT; k++) {
            cell_values(runs, c, sides[s], k, x);
            stats_summarize(x, c->n, &st);
            json_object_set_new(subs, subsys_name((enum prof_subsys)k), stat_json(&st));
        }
        json_array_append_new(js, json_pack("{s:s, s:o, s:o}", EV_NAME, sides[s], "total",
                                            stat_json(&tot), "subsystems", subs));
        if (tot.median < SHOW_US / 2) continue;
        w.col = (size_t)fprintf(f, "    %-9s %7.2f [%.2f, %.2f]: ", sides[s], tot.median, tot.min,
                                tot.max);
        /* the subsystems, largest first */
        bool done[SUBSYS_COUNT] = { false };
        for (;;) {
            int best = -1;
            double bv = SHOW_US;
            for (int k = 0; k < SUBSYS_COUNT; k++) {
                if (done[k]) continue;
                cell_values(runs, c, sides[s], k, x);
                stats_summarize(x, c->n, &st);
                if (st.median >= bv) {
                    bv = st.median;
                    best = k;
                }
            }
            if (best < 0) break;
            done[best] = true;
            cell_values(runs, c, sides[s], best, x);
            stats_summarize(x, c->n, &st);
            if (c->n > 1)
                snprintf(buf, sizeof(buf), "%s %.2f [%.2f, %.2f]",
                         subsys_name((enum prof_subsys)best), st.median, st.min, st.max);
            else
                snprintf(buf, sizeof(buf), "%s %.2f", subsys_name((enum prof_subsys)best),
                         st.median);
            wrap_add(&w, buf);
        }
        fputc('\n', f);
    }
    shares_print(f, runs, c, sides, ns, js, x);
    return json_pack("{s:s, s:s, s:s, s:i, s:o}", "cell", c->first->cell, "transport",
                     c->first->transport, "key", c->first->key, "runs", (int)c->n, "sides", js);
}

/* ---- tcp - unix ---------------------------------------------------------------------------- */

struct diff {
    int ok;
    double d, lo, hi;
};

static struct diff diff_of(const struct prof_run *runs, const struct pcell *a,
                           const struct pcell *b, const char *side, int k, uint64_t seed,
                           double *xa, double *xb)
{
    struct diff r = { 0 };

    cell_values(runs, a, side, k, xa);
    cell_values(runs, b, side, k, xb);
    r.ok = stats_bootstrap_diff(xa, a->n, xb, b->n, STATS_BOOTSTRAP, STATS_LEVEL, seed, &r.d, &r.lo,
                                &r.hi) == 0;
    return r;
}

/*
 * The median of a cell's phase p (+ phase q unless q < 0) latency means, in µs; NAN when
 * none was seen.
 */
static double phases_us(const struct prof_run *runs, const struct pcell *c, int p, int q, double *x)
{
    size_t n = 0;
    double m;

    for (size_t i = 0; i < c->n; i++) {
        const struct prof_run *r = &runs[c->idx[i]];
        double vq = q < 0 ? NAN : r->phase_ns[q];
        if (isnan(r->phase_ns[p]) && isnan(vq)) continue;
        x[n++] = ((isnan(r->phase_ns[p]) ? 0 : r->phase_ns[p]) + (isnan(vq) ? 0 : vq)) / 1000.0;
    }
    return stats_median_known(x, n, &m) > 0 ? m : NAN;
}

/*
 * The phases' decomposition: the connection's lifecycle against the transfer. Only the
 * client's own hop has phases: when both arms load it over the same transport (a stack's
 * web measurement: the arms differ behind the web server), they cannot split the
 * difference, and with kept connections (a reconnect now and then has phases) there is
 * no lifecycle per request.
 */
static json_t *phases_print(FILE *f, const struct prof_run *runs, const struct pcell *a,
                            const struct pcell *b, double *x)
{
    bool behind = strcmp(a->first->client, b->first->client) == 0;
    bool per_request = a->first->per_request && b->first->per_request;
    double la = per_request ? phases_us(runs, a, PHASE_CONNECT, PHASE_CLOSE, x) : NAN;
    double lb = per_request ? phases_us(runs, b, PHASE_CONNECT, PHASE_CLOSE, x) : NAN;
    /* the response phase runs from the request written to the reply's last byte: ttfb is in it */
    double ta = phases_us(runs, a, PHASE_RESPONSE, -1, x);
    double tb = phases_us(runs, b, PHASE_RESPONSE, -1, x);
    double dl = la - lb, dt = ta - tb, share = NAN;

    if (behind) {
        fprintf(f,
                "    phases: none for this hop: the client's own hop is %s in both arms (the hop "
                "under test is behind the server)\n",
                a->first->client);
        la = lb = ta = tb = NAN;
    } else if (isnan(la) || isnan(lb)) {
        fprintf(f,
                "    phases (latency means): kept connections, no lifecycle per request; "
                "transfer (response) %.2f -> %.2f µs (%.2f %s)\n",
                ta, tb, fabs(dt), dt >= 0 ? "less" : "more");
    } else {
        if (dl + dt != 0 && isfinite(dl + dt)) share = dl / (dl + dt);
        fprintf(
            f,
            "    phases (latency means): lifecycle (connect + close) %.2f -> %.2f µs (%.2f %s), "
            "transfer (response) %.2f -> %.2f µs (%.2f %s)",
            la, lb, fabs(dl), dl >= 0 ? "less" : "more", ta, tb, fabs(dt),
            dt >= 0 ? "less" : "more");
        if (isfinite(share))
            fprintf(f, ": the lifecycle is %.0f %% of the difference", share * 100);
        fputc('\n', f);
    }
    return json_pack("{s:b, s:o, s:o, s:o, s:o, s:o}", "behind_server", behind, "lifecycle_tcp_us",
                     isfinite(la) ? json_real(la) : json_null(), "lifecycle_unix_us",
                     isfinite(lb) ? json_real(lb) : json_null(), "transfer_tcp_us",
                     isfinite(ta) ? json_real(ta) : json_null(), "transfer_unix_us",
                     isfinite(tb) ? json_real(tb) : json_null(), "lifecycle_share",
                     isfinite(share) ? json_real(share) : json_null());
}

/* One side's tcp - unix line: the total and each subsystem, the more first, then the less. */
static json_t *side_diff_print(FILE *f, const struct prof_run *runs, const struct pcell *a,
                               const struct pcell *b, const char *side, uint64_t seed, double *xa,
                               double *xb)
{
    struct diff tot = diff_of(runs, a, b, side, SUBSYS_COUNT, seed, xa, xb), d[SUBSYS_COUNT];
    json_t *subs = json_object();
    struct wrap w = { f, 0, true };
    char buf[96];

    if (!tot.ok) return NULL;
    for (int k = 0; k < SUBSYS_COUNT; k++) {
        d[k] = diff_of(runs, a, b, side, k, seed, xa, xb);
        json_object_set_new(
            subs, subsys_name((enum prof_subsys)k),
            json_pack("{s:f, s:f, s:f}", "diff", d[k].d, "lo", d[k].lo, "hi", d[k].hi));
    }
    w.col = (size_t)fprintf(f, "    %s: over tcp each request costs %.2f µs %s [%.2f, %.2f]", side,
                            fabs(tot.d), tot.d >= 0 ? "more" : "less", tot.lo, tot.hi);
    fputs(": ", f);
    /* more over tcp, largest first; then less */
    for (int sign = 1; sign >= -1; sign -= 2) {
        bool done[SUBSYS_COUNT] = { false };
        for (;;) {
            int best = -1;
            double bv = SHOW_US;
            for (int k = 0; k < SUBSYS_COUNT; k++)
                if (!done[k] && d[k].ok && sign * d[k].d >= bv) {
                    bv = sign * d[k].d;
                    best = k;
                }
            if (best < 0) break;
            done[best] = true;
            snprintf(buf, sizeof(buf), "%s %.2f%s", subsys_name((enum prof_subsys)best),
                     fabs(d[best].d), sign < 0 ? " less" : "");
            wrap_add(&w, buf);
        }
    }
    if (w.first) fputs("no subsystem differs by 0.05 µs", f);
    fputc('\n', f);
    return json_pack("{s:s, s:o, s:o}", EV_NAME, side, "total",
                     json_pack("{s:f, s:f, s:f}", "diff", tot.d, "lo", tot.lo, "hi", tot.hi),
                     "subsystems", subs);
}

static json_t *pair_print(FILE *f, const struct prof_run *runs, const struct pcell *a,
                          const struct pcell *b, uint64_t seed, double *xa, double *xb)
{
    const char *sides[PROFILE_SIDES + 1];
    unsigned ns = sides_of(a->first, sides);
    json_t *js = json_array();

    fprintf(f, "  %s (%s) - %s (%s), per request:\n", a->first->cell, a->first->transport,
            b->first->cell, b->first->transport);
    for (unsigned s = 0; s < ns; s++) {
        json_t *o = side_diff_print(f, runs, a, b, sides[s], seed, xa, xb);
        if (o != NULL) json_array_append_new(js, o);
    }
    return json_pack("{s:s, s:s, s:s, s:o, s:o}", "key", a->first->key, "tcp", a->first->cell,
                     "unix", b->first->cell, "sides", js, "phases",
                     phases_print(f, runs, a, b, xa));
}

json_t *profile_summary(FILE *f, const struct prof_run *runs, size_t n, uint64_t seed)
{
    size_t nc = 0;
    struct pcell *c;
    double *xa, *xb;
    json_t *cells, *diffs, *out = NULL;

    if (n == 0) return NULL;
    c = cells_of(runs, n, &nc);
    xa = malloc((n + 1) * sizeof(double));
    xb = malloc((n + 1) * sizeof(double));
    if (c == NULL || xa == NULL || xb == NULL) goto done;
    cells = json_array();
    diffs = json_array();
    fprintf(f,
            "\nWhere each request's CPU goes (--profile: every CPU sampled each %.3f ms; µs per "
            "request,\nmedian [min, max] of the runs that count; hop = the client, server and "
            "services; docs/profile.md):\n",
            (double)runs[0].period_ns / 1e6);
    for (size_t i = 0; i < nc; i++)
        json_array_append_new(cells, cell_print(f, runs, &c[i], xa));
    bool header = false;
    for (size_t i = 0; i < nc; i++) {
        if (strcmp(c[i].first->transport, "unix") != 0 || c[i].n == 0) continue;
        for (size_t j = 0; j < nc; j++) {
            if (strcmp(c[j].first->transport, "unix") == 0 || c[j].n == 0 ||
                strcmp(c[j].first->key, c[i].first->key) != 0)
                continue;
            if (!header)
                fprintf(f,
                        "\ntcp - unix (medians subtracted; [95 %% bootstrap interval], seed "
                        "%llu):\n",
                        (unsigned long long)seed);
            header = true;
            json_array_append_new(diffs, pair_print(f, runs, &c[j], &c[i], seed, xa, xb));
            break;
        }
    }
    out = json_pack("{s:s, s:I, s:o, s:o}", "unit", "us_per_op", "period_ns",
                    (json_int_t)runs[0].period_ns, "cells", cells, "differences", diffs);
done:
    cells_free(c, nc);
    free(xa);
    free(xb);
    return out;
}

json_t *profile_summary_records(FILE *f, const struct run_record *recs, size_t n, uint64_t seed)
{
    struct prof_run *v = malloc((n + 1) * sizeof(*v));
    size_t k = 0;
    json_t *out;

    if (v == NULL) return NULL;
    for (size_t i = 0; i < n; i++)
        k += prof_run_from_record(&recs[i], &v[k]);
    out = profile_summary(f, v, k, seed);
    free(v);
    return out;
}

int profile_summary_jsonl(FILE *f, const char *path, uint64_t seed)
{
    FILE *in = fopen(path, "re");
    struct prof_run *v = NULL;
    json_t **lines = NULL;
    size_t n = 0, cap = 0, len = 0;
    char *line = NULL;

    if (in == NULL) return -errno;
    while (getline(&line, &len, in) > 0) {
        json_t *rec = json_loads(line, 0, NULL);
        struct prof_run r;
        if (rec == NULL || !json_is_object(rec) ||
            strcmp(jstr(rec, EV_RECORD), EV_RECORD_RUN) != 0 || !prof_run_from_json(rec, &r)) {
            json_decref(rec);
            continue;
        }
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            struct prof_run *nv = realloc(v, nc * sizeof(*v));
            json_t **nl = realloc(lines, nc * sizeof(json_t *));
            if (nv != NULL) v = nv;
            if (nl != NULL) lines = nl;
            if (nv == NULL || nl == NULL) {
                json_decref(rec);
                break;
            }
            cap = nc;
        }
        lines[n] = rec; /* r.folded and the names point into it: kept until the summary */
        v[n++] = r;
    }
    free(line);
    fclose(in);
    json_decref(profile_summary(f, v, n, seed));
    for (size_t i = 0; i < n; i++)
        json_decref(lines[i]);
    free(lines);
    free(v);
    return 0;
}
