/*
 * CSV from evidence runs (csv.h). A column is a figure of the run's typed
 * view (evidence/runview.h), which spells the keys; a
 * figure the run does not have, or has as {"unavailable": why}, is an empty
 * field, so a spreadsheet sees a gap, not a zero. The columns only some runs
 * have (error kinds, phases, services) are gathered over every run first, so
 * every row has the same fields.
 */
#include "report/csv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evidence/runview.h"
#include "evidence/schema.h"
#include "outfile.h"
#include "report/report.h"

/*
 * A fixed column: its header, the kind of figure it prints and where that
 * figure lies in a struct run_view; with the bit of run_view.have the run
 * must hold for it (0: the figure is there when not NAN or NULL). Three are
 * made from the run and its document (COL_START, COL_HOP, COL_PIN).
 */
enum col_kind {
    COL_NUM,
    COL_STR,
    COL_CELL,
    COL_UINT,
    COL_U64,
    COL_FLAG,
    COL_START,
    COL_HOP,
    COL_PIN
};

struct csv_col {
    const char *name;
    size_t off;
    enum col_kind kind;
    unsigned have;
};

#define COL(name, off, kind, have)                                                                 \
    {                                                                                              \
        name, off, kind, have                                                                      \
    }
#define AT(f)                offsetof(struct run_view, f)
#define NUM(name, f)         COL(name, AT(f), COL_NUM, 0)
#define STR(name, f)         COL(name, AT(f), COL_STR, 0)
#define MADE(name, k)        COL(name, 0, k, 0)
#define HAS(name, k, f, bit) COL(name, AT(f), k, bit)

static const struct csv_col fixed_cols[] = {
    HAS("cell", COL_CELL, cell, RUN_HAVE_CELL),
    NUM("rep", rep),
    MADE("start", COL_START), /* window_start_unix_s as ISO 8601, UTC */
    STR("proto", proto),
    STR("label", label),
    STR("endpoint", endpoint),
    MADE("transport", COL_HOP), /* the hop under test (run_view_hop_transport) */
    STR("client_transport", transport),
    STR("mode", mode),
    STR("close", close_by),
    STR("wait", wait),
    MADE("pin", COL_PIN), /* the document's placement.pin */
    NUM("size", size),
    HAS("connections", COL_UINT, connections, RUN_HAVE_CONNECTIONS),
    HAS("threads", COL_UINT, threads, RUN_HAVE_THREADS),
    NUM("pipeline", pipeline),
    NUM("duration_s", duration_s),
    NUM("window_s", window_s),
    HAS("valid", COL_FLAG, valid, RUN_HAVE_VALID),
    HAS("interrupted", COL_FLAG, interrupted, RUN_HAVE_INTERRUPTED),
    HAS("noisy", COL_FLAG, noisy, RUN_HAVE_NOISY),
    HAS("ops", COL_U64, ops, RUN_HAVE_OPS),
    NUM("ops_per_s", ops_per_s),
    HAS("errors_total", COL_U64, errors_total, RUN_HAVE_ERRORS_TOTAL),
    NUM("connects", connects),
    NUM("reconnects", reconnects),
    HAS("rate", COL_NUM, rate, RUN_HAVE_RATE),
    NUM("rate_share", rate_share),
    NUM("achieved_ops_per_s", achieved_ops_per_s),
    HAS("saturated", COL_FLAG, saturated, RUN_HAVE_SATURATED),
    NUM("latency_min_ns", latency.min),
    NUM("latency_p50_ns", latency.p50),
    NUM("latency_p90_ns", latency.p90),
    NUM("latency_p99_ns", latency.p99),
    NUM("latency_p999_ns", latency.p999),
    NUM("latency_p9999_ns", latency.p9999),
    NUM("latency_max_ns", latency.max),
    NUM("latency_mean_ns", latency.mean),
    NUM("service_latency_p50_ns", service_latency.p50),
    NUM("service_latency_p99_ns", service_latency.p99),
    NUM("client_cpu_ns_per_op", client_cpu_ns_per_op),
    NUM("server_cpu_ns_per_op", server_ns_per_op),
    NUM("system_cpu_ns_per_op", system_ns_per_op),
    NUM("other_cpu_share", other_share),
    NUM("server_pss_end_bytes", server_pss_end),
    NUM("cgroup_working_set_end_bytes", cgroup_ws_end),
    NUM("time_wait_client_peak", front.tw_client.peak),
    NUM("time_wait_server_peak", front.tw_server.peak),
    NUM("established_peak", front.established.peak),
    NUM("listen_queue_peak", front.listen_queue.peak),
    NUM("listen_overflows", listen_overflows),
    NUM("syn_retrans", syn_retrans),
};

/* The figures of each phase and of each named service that get a column. */
static const struct csv_col phase_figs[] = {
    COL("p50", offsetof(struct run_latency, p50), COL_NUM, 0),
    COL("p99", offsetof(struct run_latency, p99), COL_NUM, 0),
};
static const struct csv_col service_figs[] = {
    COL("cpu_ns_per_op", offsetof(struct run_service, cpu_ns_per_op), COL_NUM, 0),
    COL("pss_end_bytes", offsetof(struct run_service, pss_end), COL_NUM, 0),
    COL("working_set_end_bytes", offsetof(struct run_service, ws_end), COL_NUM, 0),
};

/* The names seen for one kind of extra column, in the order first seen. */
struct name_list {
    const char **v;
    size_t n, cap;
};

static int names_add(struct name_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], name) == 0) return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap != 0 ? l->cap * 2 : 16;
        const char **v = realloc(l->v, cap * sizeof(*v));

        if (v == NULL) return -ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = name;
    return 0;
}

/*
 * A text field: quoted when it holds a comma, quote or line break (quotes
 * doubled), and led by a quote mark when it starts as a spreadsheet formula
 * would (= + - @), so a label cannot run as one.
 */
static void put_text(FILE *f, const char *s)
{
    bool quote = strpbrk(s, ",\"\r\n") != NULL;

    if (quote) fputc('"', f);
    if (s[0] != '\0' && strchr("=+-@", s[0]) != NULL) fputc('\'', f);
    for (; *s != '\0'; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    if (quote) fputc('"', f);
}

/* The shortest of %.15g, %.16g and %.17g that reads back as the same double. */
static void put_real(FILE *f, double d)
{
    char buf[32];

    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*g", prec, d);
        if (strtod(buf, NULL) == d) break;
    }
    fputs(buf, f);
}

/*
 * A number as the evidence holds it: an integer's digits (up to 2^53, which
 * a double holds exactly), else the shortest form; nothing for NAN.
 */
static void put_num(FILE *f, double d)
{
    if (isnan(d)) return;
    if (d == trunc(d) && fabs(d) < 9007199254740992.0)
        fprintf(f, "%.0f", d);
    else
        put_real(f, d);
}

struct csv_extra {
    struct name_list errors, phases, services;
};

/* The names of the error kinds, phases and services of every run, each in the order first seen. */
static int gather(struct csv_extra *x, const struct csv_source *src, size_t n)
{
    struct run_view v;

    for (size_t k = 0; k < n; k++) {
        const json_t *run;
        size_t i;

        json_array_foreach(src[k].runs, i, run)
        {
            run_view_fill(run, &v);
            for (unsigned j = 0; j < v.nerrors; j++)
                if (names_add(&x->errors, v.errors[j].kind) < 0) return -ENOMEM;
            for (unsigned j = 0; j < v.nphase; j++)
                if (names_add(&x->phases, v.phase[j].name) < 0) return -ENOMEM;
            for (unsigned j = 0; j < v.nsvc; j++)
                if (v.svc[j].name != NULL && names_add(&x->services, v.svc[j].name) < 0)
                    return -ENOMEM;
        }
    }
    return 0;
}

static void put_header(FILE *f, const struct csv_extra *x)
{
    char name[256];

    fputs("source", f);
    for (size_t i = 0; i < ARRAY_LEN(fixed_cols); i++)
        fprintf(f, ",%s", fixed_cols[i].name);
    for (size_t i = 0; i < x->errors.n; i++) {
        snprintf(name, sizeof(name), "errors_%s", x->errors.v[i]);
        fputc(',', f);
        put_text(f, name);
    }
    for (size_t i = 0; i < x->phases.n; i++)
        for (size_t j = 0; j < ARRAY_LEN(phase_figs); j++) {
            snprintf(name, sizeof(name), "phase_%s_%s_ns", x->phases.v[i], phase_figs[j].name);
            fputc(',', f);
            put_text(f, name);
        }
    for (size_t i = 0; i < x->services.n; i++)
        for (size_t j = 0; j < ARRAY_LEN(service_figs); j++) {
            snprintf(name, sizeof(name), "service_%s_%s", x->services.v[i], service_figs[j].name);
            fputc(',', f);
            put_text(f, name);
        }
    fputs("\r\n", f);
}

/* The run's window start, Unix seconds, as 2025-01-31T12:00:00.123Z; nothing without. */
static void put_start(FILE *f, double s)
{
    double whole;
    time_t t;
    long ms;
    struct tm tm;
    char buf[40];

    if (!(s > 0) || s > 1e11) return; /* NAN too */
    whole = floor(s);
    t = (time_t)whole;
    ms = lround((s - whole) * 1000.0);
    if (ms == 1000) {
        t++;
        ms = 0;
    }
    if (gmtime_r(&t, &tm) == NULL || strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
        return;
    fprintf(f, "%s.%03ldZ", buf, ms);
}

/* The field of column c from base (a run_view, run_latency or run_service) and the document. */
static void put_col(FILE *f, const struct csv_col *c, const void *base, const json_t *doc)
{
    const char *at = (const char *)base + c->off;
    const struct run_view *v = base;
    const char *text;

    if (c->have != 0 && (v->have & c->have) == 0) return;
    switch (c->kind) {
    case COL_NUM:
        put_num(f, *(const double *)(const void *)at);
        break;
    case COL_STR:
        text = *(const char *const *)(const void *)at;
        if (text != NULL) put_text(f, text);
        break;
    case COL_CELL:
        fprintf(f, "%d", *(const int *)(const void *)at);
        break;
    case COL_UINT:
        fprintf(f, "%u", *(const unsigned *)(const void *)at);
        break;
    case COL_U64:
        fprintf(f, "%" PRIu64, *(const uint64_t *)(const void *)at);
        break;
    case COL_FLAG:
        fputs(*(const bool *)(const void *)at ? "true" : "false", f);
        break;
    case COL_START:
        put_start(f, v->window_start);
        break;
    case COL_HOP:
        if (run_view_hop_transport(v) != NULL) put_text(f, run_view_hop_transport(v));
        break;
    case COL_PIN:
        if (evidence_doc_pin(doc) != NULL) put_text(f, evidence_doc_pin(doc));
        break;
    }
}

static void put_row(FILE *f, const char *source, const json_t *doc, const json_t *run,
                    const struct csv_extra *x)
{
    struct run_view v;

    run_view_fill(run, &v);
    put_text(f, source);
    for (size_t i = 0; i < ARRAY_LEN(fixed_cols); i++) {
        fputc(',', f);
        put_col(f, &fixed_cols[i], &v, doc);
    }
    for (size_t i = 0; i < x->errors.n; i++) {
        fputc(',', f);
        for (unsigned j = 0; j < v.nerrors; j++)
            if (strcmp(v.errors[j].kind, x->errors.v[i]) == 0)
                fprintf(f, "%" PRIu64, v.errors[j].n);
    }
    for (size_t i = 0; i < x->phases.n; i++) {
        const struct run_phase *p = NULL;

        for (unsigned j = 0; j < v.nphase && p == NULL; j++)
            if (strcmp(v.phase[j].name, x->phases.v[i]) == 0) p = &v.phase[j];
        for (size_t j = 0; j < ARRAY_LEN(phase_figs); j++) {
            fputc(',', f);
            if (p != NULL) put_col(f, &phase_figs[j], &p->latency, doc);
        }
    }
    for (size_t i = 0; i < x->services.n; i++) {
        const struct run_service *s = run_view_service(&v, x->services.v[i]);

        for (size_t j = 0; j < ARRAY_LEN(service_figs); j++) {
            fputc(',', f);
            if (s != NULL) put_col(f, &service_figs[j], s, doc);
        }
    }
    fputs("\r\n", f);
}

int report_csv(FILE *f, const struct csv_source *src, size_t n)
{
    struct csv_extra x = { 0 };
    int rc = gather(&x, src, n);

    if (rc == 0) {
        put_header(f, &x);
        for (size_t k = 0; k < n; k++) {
            const json_t *run;
            size_t i;

            json_array_foreach(src[k].runs, i, run) if (json_is_object(run))
                put_row(f, src[k].name, src[k].doc, run, &x);
        }
        if (fflush(f) != 0 || ferror(f)) rc = -EIO;
    }
    free(x.errors.v);
    free(x.phases.v);
    free(x.services.v);
    return rc;
}

struct csv_job {
    const struct csv_source *src;
    size_t n;
};

static int csv_fill(FILE *f, void *ctx, struct hb_err *err)
{
    const struct csv_job *job = ctx;
    int rc = report_csv(f, job->src, job->n);

    if (rc == -ENOMEM) return hb_fail(err, rc, "out of memory for the CSV columns");
    return rc;
}

int report_csv_write(const char *path, const struct csv_source *src, size_t n, struct hb_err *err)
{
    struct csv_job job = { src, n };

    return outfile_replace(path, csv_fill, &job, err);
}
