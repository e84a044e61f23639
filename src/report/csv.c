/*
 * CSV from evidence runs (csv.h). A column is a path into a run's JSON; a
 * figure the run does not have, or has as {"unavailable": why}, is an empty
 * field, so a spreadsheet sees a gap, not a zero. The columns only some runs
 * have (error kinds, phases, services) are gathered over every run first, so
 * every row has the same fields.
 */
#include "report/csv.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evidence/schema.h"
#include "outfile.h"
#include "report/report.h"

/*
 * A fixed column: its header and the dotted path of its figure in a run, or a
 * column made from the run and its document (path NULL, the code says which).
 */
struct csv_col {
    const char *name;
    const char *path;
};

#define COL_START     "start"     /* window_start_unix_s as ISO 8601, UTC */
#define COL_TRANSPORT "transport" /* the hop under test (evidence_hop_transport) */
#define COL_PIN       "pin"       /* the document's placement.pin */

static const struct csv_col fixed_cols[] = {
    { "cell", EV_CELL },
    { "rep", EV_REP },
    { COL_START, NULL },
    { "proto", EV_PROTO },
    { "label", EV_LABEL },
    { "endpoint", EV_ENDPOINT },
    { COL_TRANSPORT, NULL },
    { "client_transport", EV_TRANSPORT },
    { "mode", EV_MODE },
    { "close", "close" },
    { "wait", EV_WAIT },
    { COL_PIN, NULL },
    { "size", EV_SIZE },
    { "connections", EV_CONNECTIONS },
    { "threads", EV_THREADS },
    { "pipeline", EV_PIPELINE },
    { "duration_s", "duration_s" },
    { "window_s", EV_WINDOW_S },
    { "valid", EV_VALID },
    { "interrupted", EV_INTERRUPTED },
    { "noisy", "observed.other_cpu.noisy" },
    { "ops", EV_OPS },
    { "ops_per_s", EV_OPS_PER_S },
    { "errors_total", EV_ERRORS_TOTAL },
    { "connects", EV_CONNECTS },
    { "reconnects", EV_RECONNECTS },
    { "rate", "open_loop.rate" },
    { "rate_share", "open_loop.rate_share" },
    { "achieved_ops_per_s", "open_loop.achieved_ops_per_s" },
    { "saturated", "open_loop.saturated" },
    { "latency_min_ns", "latency_ns.min" },
    { "latency_p50_ns", "latency_ns.p50" },
    { "latency_p90_ns", "latency_ns.p90" },
    { "latency_p99_ns", "latency_ns.p99" },
    { "latency_p999_ns", "latency_ns.p999" },
    { "latency_p9999_ns", "latency_ns.p9999" },
    { "latency_max_ns", "latency_ns.max" },
    { "latency_mean_ns", "latency_ns.mean" },
    { "service_latency_p50_ns", "open_loop.service_latency_ns.p50" },
    { "service_latency_p99_ns", "open_loop.service_latency_ns.p99" },
    { "client_cpu_ns_per_op", EV_CLIENT_CPU_NS_PER_OP },
    { "server_cpu_ns_per_op", "observed.cpu.server_ns_per_op" },
    { "system_cpu_ns_per_op", "observed.cpu.system_ns_per_op" },
    { "other_cpu_share", "observed.other_cpu.other_share" },
    { "server_pss_end_bytes", "observed.memory.server_pss_end" },
    { "cgroup_working_set_end_bytes", "observed.memory.cgroup_working_set_end" },
    { "time_wait_client_peak", "observed.sockets.time_wait_client.peak" },
    { "time_wait_server_peak", "observed.sockets.time_wait_server.peak" },
    { "established_peak", "observed.sockets.established.peak" },
    { "listen_queue_peak", "observed.sockets.listen_queue.peak" },
    { "listen_overflows", "observed.net_delta.TcpExt.ListenOverflows" },
    { "syn_retrans", "observed.net_delta.TcpExt.TCPSynRetrans" },
};

/* The figures of each phase and of each named service that get a column. */
static const char *const phase_figs[] = { "p50", "p99" };
static const struct csv_col service_figs[] = {
    { "cpu_ns_per_op", "cpu_ns_per_op" },
    { "pss_end_bytes", "pss_end" },
    { "working_set_end_bytes", "working_set_end" },
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

/* The value at a dotted path ("a.b.c") under j, or NULL. */
static const json_t *json_at(const json_t *j, const char *path)
{
    char key[64];

    while (j != NULL && *path != '\0') {
        size_t len = strcspn(path, ".");

        if (len >= sizeof(key)) return NULL;
        memcpy(key, path, len);
        key[len] = '\0';
        j = json_object_get(j, key);
        path += len + (path[len] == '.');
    }
    return j;
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

/* One field from a JSON value: numbers as JSON has them, objects (unavailable) empty. */
static void put_value(FILE *f, const json_t *v)
{
    if (v == NULL) return;
    switch (json_typeof(v)) {
    case JSON_INTEGER:
        fprintf(f, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        put_real(f, json_real_value(v));
        break;
    case JSON_STRING:
        put_text(f, json_string_value(v));
        break;
    case JSON_TRUE:
        fputs("true", f);
        break;
    case JSON_FALSE:
        fputs("false", f);
        break;
    default: /* an object ({"unavailable": ...}), an array or null: no figure */
        break;
    }
}

/* The service named name in a run's observed.services, or NULL. */
static const json_t *run_service(const json_t *run, const char *name)
{
    const json_t *svcs = json_at(run, "observed.services");
    const json_t *s;
    size_t i;

    json_array_foreach(svcs, i, s)
    {
        const char *n = json_string_value(json_object_get(s, EV_NAME));

        if (n != NULL && strcmp(n, name) == 0) return s;
    }
    return NULL;
}

struct csv_extra {
    struct name_list errors, phases, services;
};

static int gather(struct csv_extra *x, const struct csv_source *src, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        const json_t *run, *v, *s;
        const char *key;
        size_t i, j;

        json_array_foreach(src[k].runs, i, run)
        {
            json_object_foreach((json_t *)json_object_get(run, EV_ERRORS), key,
                                v) if (names_add(&x->errors, key) < 0) return -ENOMEM;
            json_object_foreach((json_t *)json_object_get(run, EV_PHASES), key,
                                v) if (names_add(&x->phases, key) < 0) return -ENOMEM;
            json_array_foreach(json_at(run, "observed.services"), j, s)
            {
                const char *name = json_string_value(json_object_get(s, EV_NAME));

                if (name != NULL && names_add(&x->services, name) < 0) return -ENOMEM;
            }
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
            snprintf(name, sizeof(name), "phase_%s_%s_ns", x->phases.v[i], phase_figs[j]);
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

/* The run's window start, a number of Unix seconds, as 2025-01-31T12:00:00.123Z; nothing without.
 */
static void put_start(FILE *f, const json_t *v)
{
    double s = json_number_value(v), whole = floor(s);
    time_t t = (time_t)whole;
    long ms = lround((s - whole) * 1000.0);
    struct tm tm;
    char buf[40];

    if (!json_is_number(v) || !(s > 0) || s > 1e11) return;
    if (ms == 1000) {
        t++;
        ms = 0;
    }
    if (gmtime_r(&t, &tm) == NULL || strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
        return;
    fprintf(f, "%s.%03ldZ", buf, ms);
}

/* A column with no path of its own: from the run and its document. */
static void put_made(FILE *f, const char *name, const json_t *run, const json_t *doc)
{
    if (strcmp(name, COL_START) == 0)
        put_start(f, json_object_get(run, EV_WINDOW_START));
    else if (strcmp(name, COL_TRANSPORT) == 0 && evidence_hop_transport(run) != NULL)
        put_text(f, evidence_hop_transport(run));
    else if (strcmp(name, COL_PIN) == 0)
        put_value(f, json_at(doc, "placement.pin"));
}

static void put_row(FILE *f, const char *source, const json_t *doc, const json_t *run,
                    const struct csv_extra *x)
{
    const json_t *errors = json_object_get(run, EV_ERRORS);
    const json_t *phases = json_object_get(run, EV_PHASES);

    put_text(f, source);
    for (size_t i = 0; i < ARRAY_LEN(fixed_cols); i++) {
        fputc(',', f);
        if (fixed_cols[i].path == NULL)
            put_made(f, fixed_cols[i].name, run, doc);
        else
            put_value(f, json_at(run, fixed_cols[i].path));
    }
    for (size_t i = 0; i < x->errors.n; i++) {
        fputc(',', f);
        put_value(f, json_object_get(errors, x->errors.v[i]));
    }
    for (size_t i = 0; i < x->phases.n; i++) {
        const json_t *lat = json_object_get(json_object_get(phases, x->phases.v[i]), EV_LATENCY_NS);

        for (size_t j = 0; j < ARRAY_LEN(phase_figs); j++) {
            fputc(',', f);
            put_value(f, json_object_get(lat, phase_figs[j]));
        }
    }
    for (size_t i = 0; i < x->services.n; i++) {
        const json_t *s = run_service(run, x->services.v[i]);

        for (size_t j = 0; j < ARRAY_LEN(service_figs); j++) {
            fputc(',', f);
            put_value(f, json_object_get(s, service_figs[j].path));
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
