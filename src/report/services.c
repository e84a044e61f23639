/*
 * report/services: per-service CPU and memory, watched hops (see services.h).
 */
#include "report/services.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/schema.h"
#include "host/service.h"
#include "report/summary.h"

/* The services and watched hops of the runs (every run of an invocation has the same). */
static const struct service_set *set_of(const struct run_record *recs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (recs[i].observed && recs[i].obs.set != NULL) return recs[i].obs.set;
    return NULL;
}

/* ---- the figures, by index ------------------------------------------------------------------ */

/*
 * Figure m of a run with k services: 0 client CPU per op, 1 .. k each
 * service's, k + 1 their sum, k + 2 the system's (all ns per op); then
 * k + 3 .. 2k + 2 each service's PSS at the end, 2k + 3 .. 3k + 2 its working
 * set at the end (bytes).
 */
static unsigned figures(unsigned k)
{
    return 3 * k + 3;
}

/* A counter per op, or not ok (the reason in why) when it or the op count is missing. */
static bool per_op(const struct ctr_val *v, uint64_t ops, double *out, const char **why)
{
    if (!v->ok || ops == 0) {
        *why = !v->ok ? v->why : "no op completed";
        return false;
    }
    *out = (double)v->v / (double)ops;
    return true;
}

/* Σ service CPU of r plus its client's, ns per op; not ok when one service's is missing. */
static bool sum_per_op(const struct run_record *r, unsigned k, double *out, const char **why)
{
    struct ctr_val sum = { .ok = true, .v = r->res.client_cpu_ns };

    for (unsigned i = 0; i < k; i++) {
        if (!r->obs.svc[i].cpu_ns.ok) {
            *why = r->obs.svc[i].cpu_ns.why;
            return false;
        }
        sum.v += r->obs.svc[i].cpu_ns.v;
    }
    return per_op(&sum, r->res.ops, out, why);
}

static bool figure(const struct run_record *r, unsigned k, unsigned m, double *out,
                   const char **why)
{
    struct ctr_val client = { .ok = true, .v = r->res.client_cpu_ns };
    const struct ctr_val *v;

    *why = "not observed";
    if (!r->observed) return false;
    if (m == 0) return per_op(&client, r->res.ops, out, why);
    if (m <= k) return per_op(&r->obs.svc[m - 1].cpu_ns, r->res.ops, out, why);
    if (m == k + 1) return sum_per_op(r, k, out, why);
    if (m == k + 2) return per_op(&r->obs.system_busy_ns, r->res.ops, out, why);
    v = m < 2 * k + 3 ? &r->obs.svc[m - k - 3].pss_end : &r->obs.svc[m - 2 * k - 3].ws_end;
    *why = v->why;
    *out = (double)v->v;
    return v->ok;
}

/* "client cpu", "httpd cpu", "sum cpu", "system cpu", "httpd PSS", "httpd working set". */
static void figure_name(char *buf, size_t cap, const struct service_set *set, unsigned m)
{
    unsigned k = set->n;

    if (m == 0)
        snprintf(buf, cap, "client cpu µs/op");
    else if (m <= k)
        snprintf(buf, cap, "%s cpu µs/op", set->svc[m - 1].name);
    else if (m == k + 1)
        snprintf(buf, cap, "sum cpu µs/op");
    else if (m == k + 2)
        snprintf(buf, cap, "system cpu µs/op");
    else if (m < 2 * k + 3)
        snprintf(buf, cap, "%s PSS MiB", set->svc[m - k - 3].name);
    else
        snprintf(buf, cap, "%s working set MiB", set->svc[m - 2 * k - 3].name);
}

/* What a figure is printed as: µs for CPU per op, MiB for memory. */
static double shown(unsigned k, unsigned m, double v)
{
    return m <= k + 2 ? v / 1000.0 : v / (1024.0 * 1024.0);
}

/* ---- tables --------------------------------------------------------------------------------- */

/* "front", or "front #2" for the second run of a cell that runs more than once. */
static void row_name(char *buf, size_t cap, const struct run_record *r, bool reps)
{
    char ep[TEXT_SAFE_CAP];

    text_safe(ep, sizeof(ep), endpoint_name(&r->cfg.ep));
    if (reps)
        snprintf(buf, cap, "%s #%u", ep, r->rep + 1);
    else
        snprintf(buf, cap, "%s", ep);
}

static int col_width(const char *name)
{
    int w = (int)strlen(name);

    return w > 9 ? w : 9;
}

/* Client, each service, their sum and the system, in CPU µs per op; reasons for n/a below. */
static void cpu_table(FILE *f, const struct run_record *recs, size_t n,
                      const struct service_set *set, bool reps)
{
    unsigned k = set->n;
    char name[TEXT_SAFE_CAP + 16];
    const char *why = NULL, *first_why = NULL;

    fprintf(f, "\n%-32s %9s", "cpu per request by service (µs)", "client");
    for (unsigned i = 0; i < k; i++)
        fprintf(f, " %*s", col_width(set->svc[i].name), set->svc[i].name);
    fprintf(f, " %9s %9s\n", "sum", "system");
    for (size_t i = 0; i < n; i++) {
        row_name(name, sizeof(name), &recs[i], reps);
        fprintf(f, "%-32s", name);
        for (unsigned m = 0; m <= k + 2; m++) {
            double v = 0;
            int w = m >= 1 && m <= k ? col_width(set->svc[m - 1].name) : 9;
            char num[32] = "n/a";
            if (figure(&recs[i], k, m, &v, &why))
                text_number(num, sizeof(num), v / 1000.0, 2);
            else if (first_why == NULL)
                first_why = why;
            fprintf(f, " %*s", w, num);
        }
        fputc('\n', f);
    }
    if (first_why != NULL) fprintf(f, "  n/a: %s (the evidence has each reason)\n", first_why);
    fprintf(f, "  sum = client + services; system = every CPU's busy time (softirq included, "
               "/proc/stat) per op\n");
}

static void put_bytes(FILE *f, const struct ctr_val *a, const struct ctr_val *b)
{
    char x[64], y[64];

    if (!a->ok && !b->ok) {
        fprintf(f, "n/a (%s)", b->why);
        return;
    }
    if (a->ok) bytes_format(x, sizeof(x), a->v);
    if (b->ok) bytes_format(y, sizeof(y), b->v);
    fprintf(f, "%s -> %s", a->ok ? x : "n/a", b->ok ? y : "n/a");
}

/* Under title, fn for each observed run: its lines, after its row name. */
static void each_run(FILE *f, const char *title, const struct run_record *recs, size_t n,
                     const struct service_set *set, bool reps,
                     void (*fn)(FILE *f, const struct run_record *r, const char *name,
                                const struct service_set *set))
{
    char name[TEXT_SAFE_CAP + 16];

    fprintf(f, "%s\n", title);
    for (size_t i = 0; i < n; i++) {
        if (!recs[i].observed) continue;
        row_name(name, sizeof(name), &recs[i], reps);
        fn(f, &recs[i], name, set);
    }
}

/* Each service's PSS and working set, start -> end of the run. */
static void memory_row(FILE *f, const struct run_record *r, const char *name,
                       const struct service_set *set)
{
    char where[TEXT_SAFE_CAP];

    for (unsigned s = 0; s < set->n; s++) {
        const struct service_spec *sp = &set->svc[s];
        const struct obs_service *o = &r->obs.svc[s];
        if (sp->kind == SERVICE_CGROUP)
            text_safe(where, sizeof(where), sp->dir);
        else
            snprintf(where, sizeof(where), "%d", (int)sp->pid);
        fprintf(f, "  %s %s (%s %s): PSS ", name, sp->name, service_kind_name(sp->kind), where);
        put_bytes(f, &o->pss_start, &o->pss_end);
        if (o->members > 1) fprintf(f, " (%u processes)", o->members);
        fprintf(f, ", working set ");
        put_bytes(f, &o->ws_start, &o->ws_end);
        fputc('\n', f);
    }
}

/* " what PEAK (end END)", after sep. */
static void put_gauge(FILE *f, const char *sep, const char *what, const struct obs_gauge *g)
{
    if (!g->peak.ok)
        fprintf(f, "%s %s n/a (%s)", sep, what, g->peak.why);
    else if (g->end.ok)
        fprintf(f, "%s %s %llu (end %llu)", sep, what, (unsigned long long)g->peak.v,
                (unsigned long long)g->end.v);
    else
        fprintf(f, "%s %s %llu (end n/a)", sep, what, (unsigned long long)g->peak.v);
}

/* Each watched hop's sockets at their peaks during the run. */
static void watch_row(FILE *f, const struct run_record *r, const char *name,
                      const struct service_set *set)
{
    char hop[TEXT_SAFE_CAP];

    for (unsigned w = 0; w < set->nwatch; w++) {
        const struct obs_hop *h = &r->obs.watch[w];
        const struct endpoint *ep = &set->watch[w];
        fprintf(f, "  %s, hop %s:", name, text_safe(hop, sizeof(hop), endpoint_name(ep)));
        put_gauge(f, "", "established", &h->g[OBS_ESTABLISHED]);
        put_gauge(f, ",", "accept queue", &h->g[OBS_LISTEN_QUEUE]);
        if (ep->kind == ENDPOINT_TCP) {
            put_gauge(f, ",", "TIME_WAIT client", &h->g[OBS_TW_CLIENT]);
            put_gauge(f, ",", "TIME_WAIT server", &h->g[OBS_TW_SERVER]);
            put_gauge(f, ",", "ports held", &h->g[OBS_CLIENT_PORTS]);
        }
        fputc('\n', f);
    }
}

/* The values of figure m in the runs of cell c that count; how many. */
static size_t collect(const struct run_record *recs, size_t n, unsigned k, unsigned c, unsigned m,
                      double *out)
{
    const char *why;
    size_t got = 0;

    for (size_t i = 0; i < n; i++)
        if (recs[i].cell == c && report_run_counts(&recs[i]) &&
            figure(&recs[i], k, m, &out[got], &why))
            got++;
    return got;
}

/* The first run of cell c, or NULL. */
static const struct run_record *cell_run(const struct run_record *recs, size_t n, unsigned c)
{
    for (size_t i = 0; i < n; i++)
        if (recs[i].cell == c) return &recs[i];
    return NULL;
}

/* One figure's line: each cell's median, and each cell against the first (a, b: scratch). */
static void compare_figure(FILE *f, const struct run_record *recs, size_t n, unsigned ncells,
                           const struct service_set *set, unsigned m, uint64_t seed, double *a,
                           double *b)
{
    size_t na = collect(recs, n, set->n, 0, m, a), any = na;
    char name[64], ep[TEXT_SAFE_CAP];

    for (unsigned c = 1; c < ncells; c++)
        any += collect(recs, n, set->n, c, m, b);
    if (any == 0) return; /* n/a everywhere: the lines above say why */
    figure_name(name, sizeof(name), set, m);
    fprintf(f, "  %-24s", name);
    for (unsigned c = 0; c < ncells; c++) {
        const struct run_record *first = cell_run(recs, n, c);
        size_t nb = collect(recs, n, set->n, c, m, b);
        struct stats_summary st;
        struct stats_delta d;

        if (first == NULL) continue;
        text_safe(ep, sizeof(ep), endpoint_name(&first->cfg.ep));
        if (nb == 0 || stats_summarize(b, nb, &st) < 0)
            fprintf(f, "  %s n/a", ep);
        else
            fprintf(f, "  %s %.2f", ep, shown(set->n, m, st.median));
        if (c == 0) continue;
        stats_delta(a, na, b, nb, seed + m, &d);
        fprintf(f, " vs first: %s", d.text);
    }
    fputc('\n', f);
}

/* Per figure: each cell's median, and each cell against the first. */
static int compare_cells(FILE *f, const struct run_record *recs, size_t n, unsigned ncells,
                         const struct service_set *set, uint64_t seed)
{
    double *a = calloc(n, sizeof(*a)), *b = calloc(n, sizeof(*b));
    bool ok = a != NULL && b != NULL;

    if (ok) {
        fprintf(f, "by service over repetitions: median of the valid runs per endpoint, each "
                   "against the first\n");
        for (unsigned m = 0; m < figures(set->n); m++)
            compare_figure(f, recs, n, ncells, set, m, seed, a, b);
    }
    free(a);
    free(b);
    return ok ? 0 : -ENOMEM;
}

void report_services(FILE *f, const struct run_record *recs, size_t n, unsigned ncells,
                     uint64_t seed)
{
    const struct service_set *set = set_of(recs, n);
    bool reps = false;

    if (set == NULL) return;
    for (size_t i = 0; i < n; i++)
        reps |= recs[i].rep > 0;
    if (set->n > 0) {
        cpu_table(f, recs, n, set, reps);
        each_run(f, "memory by service, start -> end of the window:", recs, n, set, reps,
                 memory_row);
    }
    if (set->nwatch > 0)
        each_run(f, "watched hops, peak during the window (end):", recs, n, set, reps, watch_row);
    if (reps && set->n > 0 && compare_cells(f, recs, n, ncells, set, seed) < 0)
        fprintf(f, "by service over repetitions: out of memory\n");
}

/* ---- evidence ------------------------------------------------------------------------------- */

json_t *report_ctr_json(const struct ctr_val *v)
{
    return evidence_count_json(v->ok, v->v, v->why);
}

json_t *report_gauge_json(const struct obs_gauge *g)
{
    return evidence_gauge_json(report_ctr_json(&g->start), report_ctr_json(&g->peak),
                               report_ctr_json(&g->end));
}

/* A figure per op, or {"unavailable": why}. */
static json_t *fig_json(const struct run_record *r, unsigned m)
{
    const char *why = "";
    double v = 0;

    return figure(r, r->obs.set->n, m, &v, &why) ? json_real(v) : evidence_unavailable_json(why);
}

json_t *report_service_json(const struct service_spec *sp, const struct obs_service *o,
                            json_t *per_op)
{
    char source[PATH_MAX + 32];
    json_t *s, *rest;

    service_source(sp, source, sizeof(source));
    s = json_pack("{s:s, s:s, s:s, s:o}", EV_SVC_NAME, sp->name, EV_SVC_KIND,
                  service_kind_name(sp->kind), EV_SVC_SOURCE, source, EV_SVC_CPU_NS,
                  report_ctr_json(&o->cpu_ns));
    if (per_op != NULL) {
        if (s == NULL) {
            json_decref(per_op);
            return NULL;
        }
        if (json_object_set_new(s, EV_SVC_CPU_NS_PER_OP, per_op) != 0) {
            json_decref(s);
            return NULL;
        }
    }
    rest = json_pack("{s:o, s:o, s:o, s:o, s:i}", EV_SVC_PSS_START, report_ctr_json(&o->pss_start),
                     EV_SVC_PSS_END, report_ctr_json(&o->pss_end), EV_SVC_WS_START,
                     report_ctr_json(&o->ws_start), EV_SVC_WS_END, report_ctr_json(&o->ws_end),
                     EV_SVC_PROCESSES, (int)o->members);
    if (s != NULL && (rest == NULL || json_object_update(s, rest) != 0)) {
        json_decref(s);
        s = NULL;
    }
    json_decref(rest);
    return s;
}

json_t *report_hop_json(const struct endpoint *ep, bool label,
                        const struct obs_gauge *const g[OBS_GAUGES], const struct ctr_val *backlog)
{
    json_t *h = json_pack("{s:s}", EV_ENDPOINT, ep->text), *rest;

    if (h != NULL && label &&
        json_object_set_new(h, EV_LABEL, ep->label[0] ? json_string(ep->label) : json_null()) !=
            0) {
        json_decref(h);
        h = NULL;
    }
    rest = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o}", EV_TRANSPORT, endpoint_transport(ep),
                     EV_HOP_TW_CLIENT, report_gauge_json(g[OBS_TW_CLIENT]), EV_HOP_TW_SERVER,
                     report_gauge_json(g[OBS_TW_SERVER]), EV_HOP_ESTABLISHED,
                     report_gauge_json(g[OBS_ESTABLISHED]), EV_HOP_CLIENT_PORTS,
                     report_gauge_json(g[OBS_CLIENT_PORTS]), EV_HOP_LISTEN_QUEUE,
                     report_gauge_json(g[OBS_LISTEN_QUEUE]), EV_HOP_LISTEN_BACKLOG,
                     report_ctr_json(backlog));
    if (h != NULL && (rest == NULL || json_object_update(h, rest) != 0)) {
        json_decref(h);
        h = NULL;
    }
    json_decref(rest);
    return h;
}

static json_t *watch_json(const struct run_record *r, unsigned w)
{
    const struct obs_hop *h = &r->obs.watch[w];
    const struct obs_gauge *g[OBS_GAUGES];

    for (int i = 0; i < OBS_GAUGES; i++)
        g[i] = &h->g[i];
    return report_hop_json(&r->obs.set->watch[w], true, g, &h->listen_backlog);
}

static int set_new(json_t *obj, const char *key, json_t *v)
{
    return v != NULL && json_object_set_new(obj, key, v) == 0 ? 0 : -ENOMEM;
}

int report_services_json(json_t *run, const struct run_record *r)
{
    const struct service_set *set = r->observed ? r->obs.set : NULL;
    unsigned k = set != NULL ? set->n : 0;
    json_t *svcs, *watch, *observed = json_object_get(run, EV_OBSERVED);
    int rc = 0;

    if (r->cfg.ep.label[0] != '\0') rc |= set_new(run, EV_LABEL, json_string(r->cfg.ep.label));
    if (!json_is_object(observed)) return rc != 0 ? -ENOMEM : 0;
    run = observed;
    if (k > 0) {
        svcs = json_array();
        for (unsigned i = 0; i < k; i++)
            rc |= json_array_append_new(
                svcs, report_service_json(&set->svc[i], &r->obs.svc[i], fig_json(r, i + 1)));
        rc |= set_new(run, EV_OBS_SERVICES, svcs);
        rc |= set_new(run, EV_OBS_SERVICES_TOTAL,
                      json_pack("{s:o, s:o, s:o}", "client_ns_per_op", fig_json(r, 0),
                                EV_OBS_SUM_NS_PER_OP, fig_json(r, k + 1), EV_OBS_SYSTEM_NS_PER_OP,
                                fig_json(r, k + 2)));
    }
    if (set != NULL && set->nwatch > 0) {
        watch = json_array();
        for (unsigned w = 0; w < set->nwatch; w++)
            rc |= json_array_append_new(watch, watch_json(r, w));
        rc |= set_new(run, EV_OBS_WATCH, watch);
    }
    return rc != 0 ? -ENOMEM : 0;
}
