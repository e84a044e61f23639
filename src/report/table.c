/*
 * table: the terminal tables of `run` and `lab`. Latencies are printed in
 * µs from the merged histogram (conservative bucket upper edges, < 0.1 %
 * above the true value); throughput is ops per second of the measured window.
 */
#include "report/report.h"

#include <string.h>

/* v with thousands separators, no decimals (text_number). */
static void fmt_thousands(char *buf, size_t cap, double v)
{
    text_number(buf, cap, v, 0);
}

static double us(uint64_t ns)
{
    return (double)ns / 1000.0;
}

/* The first endpoint's run of r's repetition, which r's "vs first" is against; NULL if none. */
static const struct run_record *first_of_rep(const struct run_record *recs, size_t n,
                                             const struct run_record *r)
{
    for (size_t i = 0; i < n; i++)
        if (recs[i].cell == 0 && recs[i].rep == r->rep) return &recs[i];
    return NULL;
}

/* ops/s against the first endpoint's run of the same rep; "-" unless both count. */
static void put_vs_first(FILE *f, const struct run_record *recs, size_t n,
                         const struct run_record *r)
{
    const struct run_record *base = first_of_rep(recs, n, r);
    char ratio[32] = "-";

    if (base != NULL && report_run_counts(r) && report_run_counts(base))
        text_ratio(ratio, sizeof(ratio), report_ops_per_s(r) / report_ops_per_s(base), 2);
    fputc(' ', f);
    put_columns(f, 8, ratio);
    fputc('\n', f);
}

/* A latency in µs, two decimals, in a column of width, or "n/a" when no op completed. */
static void put_lat(FILE *f, int width, const struct run_record *r, double us_value)
{
    char v[48] = "n/a";

    if (r->res.ops > 0) text_number(v, sizeof(v), us_value, 2);
    fprintf(f, " %*s", width, v);
}

/* Milliseconds, one decimal, in a column of width (the overload table), or "n/a" without any. */
static void put_ms(FILE *f, int width, bool have, double ms)
{
    char v[48] = "n/a";

    if (have) text_number(v, sizeof(v), ms, 1);
    fprintf(f, " %*s", width, v);
}

/* A count with thousands separators in a column of width. */
static void put_count(FILE *f, int width, uint64_t v)
{
    char s[32];

    text_number(s, sizeof(s), (double)v, 0);
    fprintf(f, " %*s", width, s);
}

/*
 * Why figures of a table are n/a: under the table, one line per reason,
 * "  n/a (pid 4242 exited during the run): server cpu/op", naming the columns
 * it applies to, and the rows when only some of them have it. Callers count
 * the rows (nrows) as they add their notes.
 */
#define NA_MAX 16

struct na_note {
    char why[CTR_WHY_MAX];
    char columns[96];
    char row[96]; /* the first row it was seen in */
    unsigned rows, last_row;
};

struct na_notes {
    unsigned n, nrows;
    struct na_note e[NA_MAX];
};

static void na_add(struct na_notes *ns, const char *column, const char *why, const char *row)
{
    struct na_note *e = NULL;
    size_t len;

    for (unsigned i = 0; i < ns->n && e == NULL; i++)
        if (strcmp(ns->e[i].why, why) == 0) e = &ns->e[i];
    if (e == NULL) {
        if (ns->n == NA_MAX) return; /* the JSON has every reason */
        e = &ns->e[ns->n++];
        snprintf(e->why, sizeof(e->why), "%s", why);
        snprintf(e->row, sizeof(e->row), "%s", row);
        e->last_row = ns->nrows + 1; /* not this row yet */
    }
    len = strlen(e->columns);
    if (strstr(e->columns, column) == NULL)
        snprintf(e->columns + len, sizeof(e->columns) - len, "%s%s", len ? ", " : "", column);
    if (e->last_row != ns->nrows) e->rows++;
    e->last_row = ns->nrows;
}

static void na_print(FILE *f, const struct na_notes *ns)
{
    for (unsigned i = 0; i < ns->n; i++) {
        const struct na_note *e = &ns->e[i];
        fprintf(f, "  n/a (%s): %s", e->why, e->columns);
        if (ns->nrows > 1 && e->rows < ns->nrows) fprintf(f, " of %s", e->row);
        if (ns->nrows > 1 && e->rows > 1 && e->rows < ns->nrows)
            fprintf(f, " and %u more", e->rows - 1);
        fputc('\n', f);
    }
}

/*
 * Why a run has no latency to show: "no op completed: 423 failed (wrong)",
 * each kind its ops failed as; or that none completed in its window.
 */
static void no_op_why(char *buf, size_t cap, const struct load_result *res)
{
    uint64_t failed = load_errors_total(res);
    char count[32];
    size_t len;

    if (failed == 0) {
        snprintf(buf, cap, "no op completed in the window");
        return;
    }
    text_number(count, sizeof(count), (double)failed, 0);
    snprintf(buf, cap, "no op completed: %s failed (", count);
    for (int k = 0, first = 1; k < OP_ERR_KINDS; k++) {
        if (res->errors[k] == 0) continue;
        len = strlen(buf);
        snprintf(buf + len, cap - len, "%s%s", first ? "" : ", ", op_err_name((enum op_err)k));
        first = 0;
    }
    len = strlen(buf);
    snprintf(buf + len, cap - len, ")");
}

/* Whether any run sent requests again on a reopened connection (the run table's column). */
static bool any_retried(const struct run_record *recs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (recs[i].res.retried > 0) return true;
    return false;
}

void report_run_table(FILE *f, const struct run_record *recs, size_t n)
{
    char ep[TEXT_SAFE_CAP], why[CTR_WHY_MAX]; /* the endpoint, text_safe */
    bool retried = any_retried(recs, n);
    struct na_notes ns = { 0 };

    /* Widths of labels holding "µ" (2 bytes, 1 column) are one larger. */
    fprintf(f, "%-32s %-7s %9s %12s %10s %10s %10s %10s %10s %7s", "endpoint", "mode", "size",
            "ops/s", "p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "max µs", "errors");
    if (retried) fprintf(f, " %8s", "retried");
    fprintf(f, " %8s\n", "vs first");
    for (size_t i = 0; i < n; i++) {
        const struct run_record *r = &recs[i];
        const struct hist *h = r->res.lat;
        char ops[32], size[32];
        double rate = report_ops_per_s(r);

        fmt_thousands(ops, sizeof(ops), rate);
        size_text(size, sizeof(size), (long long)r->cfg.size);
        fprintf(f, "%-32s %-7s %9s %12s", text_safe(ep, sizeof(ep), report_run_name(r)),
                report_mode_name(r->cfg.mode), size, ops);
        put_lat(f, 9, r, us(hist_percentile(h, 50)));
        put_lat(f, 9, r, us(hist_percentile(h, 90)));
        put_lat(f, 9, r, us(hist_percentile(h, 99)));
        put_lat(f, 9, r, us(hist_percentile(h, 99.9)));
        put_lat(f, 9, r, us(h->max));
        put_count(f, 7, load_errors_total(&r->res));
        if (retried) put_count(f, 8, r->res.retried);
        put_vs_first(f, recs, n, r);
        if (r->res.ops == 0) {
            no_op_why(why, sizeof(why), &r->res);
            na_add(&ns, "the latencies", why, ep);
        }
        ns.nrows++;
    }
    na_print(f, &ns);
}

/* Why an observed counter of r is n/a per op, or NULL when it is not. */
static const char *per_op_why(const struct run_record *r, const struct ctr_val *v)
{
    if (!r->observed) return "not observed: interrupted before the window opened";
    if (!v->ok) return v->why;
    return r->res.ops == 0 ? "no op completed" : NULL;
}

/* Notes for the CPU columns of row r that are n/a. */
static void cost_notes(struct na_notes *ns, const struct run_record *r, const char *row)
{
    const char *why;

    if (r->res.ops == 0) na_add(ns, "client cpu/op", "no op completed", row);
    if ((why = per_op_why(r, &r->obs.server_cpu_ns)) != NULL) na_add(ns, "server cpu/op", why, row);
    if ((why = per_op_why(r, &r->obs.system_busy_ns)) != NULL)
        na_add(ns, "system cpu/op", why, row);
}

/* Notes for the phase columns of row r that are n/a. */
static void phase_notes(struct na_notes *ns, const struct run_record *r, const char *row)
{
    static const char *const names[PHASES] = { "connect p50", "ttfb p50", "response p50",
                                               "close p50" };

    for (int p = 0; p < PHASES; p++) {
        const struct hist *h = r->res.phase[p];
        if (h != NULL && h->total) continue;
        na_add(ns, names[p],
               r->cfg.mode == LOAD_REUSE ? "reuse mode keeps its connections"
                                         : "no op went through this phase",
               row);
    }
}

/* A figure in a column of `width` (two decimals, thousands separated), or "n/a". */
static void put_num(FILE *f, int width, double v)
{
    char s[48] = "n/a";

    if (v >= 0) text_number(s, sizeof(s), v, 2);
    fprintf(f, " %*s", width, s);
}

/* a / b in a column of `width` ("1.35×"), or "n/a". */
static void put_ratio(FILE *f, int width, double a, double b)
{
    char s[32] = "n/a";

    if (a >= 0 && b > 0) text_ratio(s, sizeof(s), a / b, 2);
    fputc(' ', f);
    put_columns(f, width, s);
}

static void lab_row(FILE *f, const char *mode, const struct run_record *r)
{
    const struct hist *h = r->res.lat;
    struct report_cost c = report_cost_of(r);
    char ops[32];

    fmt_thousands(ops, sizeof(ops), report_ops_per_s(r));
    fprintf(f, "  %-8s %-10s %12s", mode, report_transport(r), ops);
    put_num(f, 9, us(hist_percentile(h, 50)));
    put_num(f, 9, us(hist_percentile(h, 95)));
    put_num(f, 9, us(hist_percentile(h, 99)));
    put_num(f, 8, c.cli);
    put_num(f, 8, c.srv);
    put_num(f, 8, c.sum);
    put_num(f, 8, c.sys);
    put_count(f, 7, load_errors_total(&r->res));
    fputc('\n', f);
}

/* The row of unx (unix, or tcp-veth) against tcp loopback: "unix÷tcp", "veth÷tcp". */
static void lab_ratio_row(FILE *f, const struct run_record *tcp, const struct run_record *unx)
{
    const struct hist *ht = tcp->res.lat, *hu = unx->res.lat;
    struct report_cost ct = report_cost_of(tcp), cu = report_cost_of(unx);

    fprintf(f, "  %-8s %-11s", "", unx->transport != NULL ? "veth÷tcp" : "unix÷tcp");
    if (!report_run_counts(tcp) || !report_run_counts(unx)) {
        fprintf(f, " %12s   (no ratio: a run is invalid or was cut short)\n", "-");
        return;
    }
    put_ratio(f, 12, report_ops_per_s(unx), report_ops_per_s(tcp));
    put_ratio(f, 9, (double)hist_percentile(hu, 50), (double)hist_percentile(ht, 50));
    put_ratio(f, 9, (double)hist_percentile(hu, 95), (double)hist_percentile(ht, 95));
    put_ratio(f, 9, (double)hist_percentile(hu, 99), (double)hist_percentile(ht, 99));
    put_ratio(f, 8, cu.cli, ct.cli);
    put_ratio(f, 8, cu.srv, ct.srv);
    put_ratio(f, 8, cu.sum, ct.sum);
    put_ratio(f, 8, cu.sys, ct.sys);
    fputc('\n', f);
}

/* What the run added: the peak above the count before it began (0 when it fell). */
static uint64_t added(const struct obs_gauge *g)
{
    uint64_t base = g->start.ok ? g->start.v : 0;

    return g->peak.v > base ? g->peak.v - base : 0;
}

/* "13,761 (+1,365)": the peak count (what ss would show) and what the run added to it. */
static void fmt_peak_added(char *buf, size_t cap, const struct obs_gauge *g)
{
    char peak[32], add[32];

    fmt_thousands(peak, sizeof(peak), (double)g->peak.v);
    fmt_thousands(add, sizeof(add), (double)added(g));
    snprintf(buf, cap, "%s (+%s)", peak, add);
}

/* "13,761 (+1,365) / 0 (+0)": TIME_WAIT on the client and the server side, or why not. */
static void fmt_tw(char *buf, size_t cap, const struct run_record *r)
{
    const struct observe_result *o = &r->obs;
    char a[80], b[80];

    if (!r->observed) {
        snprintf(buf, cap, "n/a (not observed)");
        return;
    }
    if (!o->tw_client.peak.ok || !o->tw_server.peak.ok) {
        snprintf(buf, cap, "n/a (%s)",
                 !o->tw_client.peak.ok ? o->tw_client.peak.why : o->tw_server.peak.why);
        return;
    }
    fmt_peak_added(a, sizeof(a), &o->tw_client);
    fmt_peak_added(b, sizeof(b), &o->tw_server);
    snprintf(buf, cap, "%s / %s", a, b);
}

/* What the TIME_WAIT column means; `earlier` names what came before ("cells", "runs"). */
static void tw_note(FILE *f, const char *earlier)
{
    fprintf(f,
            "TIME_WAIT peak: the hop's sockets in that state at the fullest sample, as ss counts "
            "them, earlier %s' included (they last 60 s); (+N): what this one added above the "
            "count before it began\n",
            earlier);
}

/* Where a connect-mode op's time goes: the median of each phase, and who holds TIME_WAIT. */
static void phase_row(FILE *f, const struct run_record *r)
{
    char tw[200];

    fprintf(f, "  %-8s %-10s %12s", "", report_transport(r), "");
    for (int p = 0; p < PHASES; p++) {
        const struct hist *h = r->res.phase[p];
        put_num(f, 9, h != NULL && h->total ? us(hist_percentile(h, 50)) : -1);
    }
    fmt_tw(tw, sizeof(tw), r);
    fprintf(f, "   %s\n", tw);
}

/* Whether r is a closed-loop run of (size, mode, transport); counted: one that counts. */
static bool closed_run_of(const struct run_record *r, size_t size, enum load_mode mode,
                          const char *transport, bool counted)
{
    return r->cfg.size == size && r->cfg.mode == mode && r->cfg.rate == 0 &&
           strcmp(report_transport(r), transport) == 0 && (!counted || report_run_counts(r));
}

/*
 * The closed-loop run of (size, mode, transport) the tables show: of the runs
 * that count, the one of median ops/s (the lower middle one of an even
 * number, ties in run order), so that each row is one real run, typical of
 * its cell; with one run, that run. The first run when none counts.
 */
static const struct run_record *find(const struct run_record *recs, size_t n, size_t size,
                                     enum load_mode mode, const char *transport)
{
    const struct run_record *first = NULL;
    size_t k = 0;

    for (size_t i = 0; i < n; i++) {
        if (!closed_run_of(&recs[i], size, mode, transport, false)) continue;
        if (first == NULL) first = &recs[i];
        k += report_run_counts(&recs[i]);
    }
    for (size_t i = 0; i < n && k > 0; i++) {
        size_t below = 0;
        double v = report_ops_per_s(&recs[i]);
        if (!closed_run_of(&recs[i], size, mode, transport, true)) continue;
        for (size_t j = 0; j < n; j++) {
            double w = report_ops_per_s(&recs[j]);
            below += closed_run_of(&recs[j], size, mode, transport, true) &&
                     (w < v || (w == v && j < i));
        }
        if (below == (k - 1) / 2) return &recs[i];
    }
    return first;
}

/* The transports of the lab's rows: tcp-veth only with lab --netns other. */
static const char *const lab_transports[] = { "tcp", "unix", "tcp-veth" };

/* The connect cells' phases of one size, a row per transport measured. */
static void lab_phase_table(FILE *f, const struct run_record *recs, size_t n, size_t size)
{
    const struct run_record *rs[ARRAY_LEN(lab_transports)];
    struct na_notes ns = { 0 };
    bool any = false;

    for (size_t t = 0; t < ARRAY_LEN(lab_transports); t++) {
        rs[t] = find(recs, n, size, LOAD_CONNECT, lab_transports[t]);
        any = any || rs[t] != NULL;
    }
    if (!any) return;
    fprintf(f, "  %-8s %-10s %12s %9s %9s %9s %9s   %s\n", "connect", "phase p50", "µs →",
            "connect", "ttfb", "response", "close", "TIME_WAIT peak (+added) client / server");
    for (size_t t = 0; t < ARRAY_LEN(lab_transports); t++)
        if (rs[t] != NULL) phase_row(f, rs[t]);
    for (size_t t = 0; t < ARRAY_LEN(lab_transports); t++) {
        if (rs[t] == NULL) continue;
        phase_notes(&ns, rs[t], report_transport(rs[t]));
        ns.nrows++;
    }
    na_print(f, &ns);
}

/*
 * The lab's rows of one size: (connect, reuse) x (tcp, unix), each with a
 * unix÷tcp row; with lab --netns other a tcp-veth row too, and its veth÷tcp.
 */
static void lab_rows(FILE *f, const struct run_record *recs, size_t n, size_t size)
{
    static const enum load_mode modes[] = { LOAD_CONNECT, LOAD_REUSE };
    struct na_notes ns = { 0 };

    for (size_t m = 0; m < ARRAY_LEN(modes); m++) {
        const struct run_record *rs[ARRAY_LEN(lab_transports)];
        const char *name = report_mode_name(modes[m]);
        char row[32];
        for (size_t t = 0; t < ARRAY_LEN(lab_transports); t++) {
            const struct run_record *r = find(recs, n, size, modes[m], lab_transports[t]);
            rs[t] = r;
            if (r == NULL) continue;
            lab_row(f, name, r);
            snprintf(row, sizeof(row), "%s %s", name, report_transport(r));
            cost_notes(&ns, r, row);
            ns.nrows++;
        }
        for (size_t t = 1; t < ARRAY_LEN(lab_transports); t++)
            if (rs[0] != NULL && rs[t] != NULL) lab_ratio_row(f, rs[0], rs[t]);
    }
    na_print(f, &ns);
}

/* ---- kernel evidence ------------------------------------------------------------------------ */

/* v with thousands separators, or "n/a (why)". */
static void fmt_ctr(char *buf, size_t cap, const struct ctr_val *v)
{
    if (v->ok)
        fmt_thousands(buf, cap, (double)v->v);
    else
        snprintf(buf, cap, "n/a (%s)", v->why);
}

/* "812 KiB", "1.2 MiB", or "n/a (why)". */
static void fmt_bytes(char *buf, size_t cap, const struct ctr_val *v)
{
    if (!v->ok)
        snprintf(buf, cap, "n/a (%s)", v->why);
    else
        bytes_format(buf, cap, v->v);
}

/* "start -> end", or one "n/a (why)" when both are n/a for the same reason. */
static void fmt_bytes_span(char *buf, size_t cap, const struct ctr_val *a, const struct ctr_val *b)
{
    char x[200], y[200];

    fmt_bytes(x, sizeof(x), a);
    fmt_bytes(y, sizeof(y), b);
    if (!a->ok && !b->ok && strcmp(a->why, b->why) == 0)
        snprintf(buf, cap, "%s", x);
    else
        snprintf(buf, cap, "%s -> %s", x, y);
}

static void evidence_ports(FILE *f, const struct observe_result *o)
{
    char held[200];

    fmt_ctr(held, sizeof(held), &o->client_ports.peak);
    fprintf(f, ", ports held %s", held);
    if (o->client_ports.peak.ok && o->port_hi > o->port_lo)
        fprintf(f, " (%.1f %% of %u-%u)",
                100.0 * (double)o->client_ports.peak.v / (double)(o->port_hi - o->port_lo + 1),
                o->port_lo, o->port_hi);
}

/* The hop's sockets at their peaks: established, accept queue, TIME_WAIT, ports. */
static void evidence_sockets(FILE *f, const struct run_record *r)
{
    const struct observe_result *o = &r->obs;
    char est[200], q[200], backlog[200], tw[420];

    fmt_ctr(est, sizeof(est), &o->established.peak);
    fmt_ctr(q, sizeof(q), &o->listen_queue.peak);
    fmt_ctr(backlog, sizeof(backlog), &o->listen_backlog);
    fprintf(f, "sockets: established %s, accept queue %s of %s", est, q, backlog);
    if (r->cfg.ep.kind == ENDPOINT_TCP) {
        fmt_tw(tw, sizeof(tw), r);
        fprintf(f, ", TIME_WAIT client / server %s", tw);
        evidence_ports(f, o);
    }
    fputc('\n', f);
}

static void evidence_memory(FILE *f, const struct run_record *r)
{
    const struct observe_result *o = &r->obs;
    char pss[420], ws[420];

    fmt_bytes_span(pss, sizeof(pss), &o->pss_start, &o->pss_end);
    fmt_bytes_span(ws, sizeof(ws), &o->ws_start, &o->ws_end);
    fprintf(f, "memory: server PSS %s", pss);
    if (o->server_pids > 1) fprintf(f, " (%u processes)", o->server_pids);
    fprintf(f, ", working set %s\n", ws);
}

/* A counter's name without its "TcpExt." or "Tcp." prefix. */
static const char *short_net_name(const char *name)
{
    if (strncmp(name, "TcpExt.", 7) == 0) return name + 7;
    if (strncmp(name, "Tcp.", 4) == 0) return name + 4;
    return name;
}

/* The counters that moved, then those that could not be read (once when none could). */
static void evidence_counters(FILE *f, const struct run_record *r)
{
    const struct ctr_val *net = r->obs.net;
    unsigned moved = 0, na = 0;
    char v[64];

    fprintf(f, "counters:");
    for (unsigned i = 0; i < OBS_NET_COUNT; i++) {
        na += !net[i].ok;
        if (!net[i].ok || net[i].v == 0) continue;
        fmt_thousands(v, sizeof(v), (double)net[i].v);
        fprintf(f, "%s %s +%s", moved++ ? "," : "", short_net_name(observe_net_name(i)), v);
    }
    if (na == OBS_NET_COUNT) {
        fprintf(f, " n/a (%s)\n", net[0].why);
        return;
    }
    if (moved == 0) fprintf(f, " none moved");
    for (unsigned i = 0; i < OBS_NET_COUNT; i++)
        if (!net[i].ok)
            fprintf(f, ", %s n/a (%s)", short_net_name(observe_net_name(i)), net[i].why);
    fputc('\n', f);
}

static void evidence_rows(FILE *f, const struct run_record *r, const char *label, int width)
{
    fprintf(f, "  %-*s ", width, label);
    if (!r->observed) {
        fprintf(f, "n/a (not observed: interrupted before the window opened)\n");
        return;
    }
    evidence_sockets(f, r);
    fprintf(f, "  %-*s ", width, "");
    evidence_memory(f, r);
    fprintf(f, "  %-*s ", width, "");
    evidence_counters(f, r);
}

static void evidence_header(FILE *f)
{
    fprintf(f, "kernel evidence (sockets: the largest sock_diag sample; counters: what moved over "
               "the window, network-namespace wide)\n");
}

void report_kernel_evidence(FILE *f, const struct run_record *recs, size_t n)
{
    char ep[TEXT_SAFE_CAP]; /* the endpoint, text_safe */
    char label[200];
    int width = 0;

    for (size_t i = 0; i < n; i++) {
        int w = snprintf(label, sizeof(label), "%s %s %zu B",
                         text_safe(ep, sizeof(ep), report_run_name(&recs[i])),
                         report_mode_name(recs[i].cfg.mode), recs[i].cfg.size);
        if (w > width) width = w;
    }
    fputc('\n', f);
    evidence_header(f);
    for (size_t i = 0; i < n; i++) {
        snprintf(label, sizeof(label), "%s %s %zu B",
                 text_safe(ep, sizeof(ep), report_run_name(&recs[i])),
                 report_mode_name(recs[i].cfg.mode), recs[i].cfg.size);
        evidence_rows(f, &recs[i], label, width);
    }
}

/*
 * The lab's evidence for one size: its closed-loop runs, connect then reuse,
 * tcp then unix (then tcp-veth).
 */
static void lab_evidence(FILE *f, const struct run_record *recs, size_t n, size_t size)
{
    static const enum load_mode modes[] = { LOAD_CONNECT, LOAD_REUSE };
    char label[32];

    evidence_header(f);
    for (size_t m = 0; m < ARRAY_LEN(modes); m++)
        for (size_t t = 0; t < ARRAY_LEN(lab_transports); t++) {
            const struct run_record *r = find(recs, n, size, modes[m], lab_transports[t]);
            if (r == NULL) continue;
            snprintf(label, sizeof(label), "%s %s", report_mode_name(modes[m]), lab_transports[t]);
            evidence_rows(f, r, label, 12);
        }
}

void report_sysctls(FILE *f, const struct machine *m)
{
    fprintf(f, "sysctl:");
    for (int i = 0; i < PROBE_SYSCTLS; i++) {
        const struct probe_sysctl *s = &m->sysctl[i];
        const char *name = strrchr(s->name, '.') + 1;
        if (s->why[0] != '\0')
            fprintf(f, "%s %s n/a (%s)", i ? "," : "", name, s->why);
        else
            fprintf(f, "%s %s %s", i ? "," : "", name, s->value);
    }
    fputc('\n', f);
}

static void lab_size_table(FILE *f, const struct run_record *recs, size_t n, size_t size)
{
    char sz[32];

    const struct run_record *any = find(recs, n, size, LOAD_REUSE, "tcp");

    if (any == NULL) any = &recs[0];
    size_text(sz, sizeof(sz), (long long)size);
    fprintf(f,
            "\n%s%s %s round trips (latency µs; CPU µs per op: client, server, both, whole "
            "system)\n",
            sz, any->size_is_reply ? " reply" : "", any->proto);
    fprintf(f, "  %-8s %-10s %12s %9s %9s %9s %8s %8s %8s %8s %7s\n", "mode", "transport", "ops/s",
            "p50", "p95", "p99", "client", "server", "both", "system", "errors");
    lab_rows(f, recs, n, size);
    lab_phase_table(f, recs, n, size);
    lab_evidence(f, recs, n, size);
}

/* The open-loop run of (size, mode, transport) at 60 % of its maximum, or NULL. */
static const struct run_record *find_open(const struct run_record *recs, size_t n, size_t size,
                                          enum load_mode mode, const char *transport)
{
    for (size_t i = 0; i < n; i++)
        if (recs[i].cfg.size == size && recs[i].cfg.mode == mode && recs[i].rep == 0 &&
            recs[i].rate_share > 0.595 && recs[i].rate_share < 0.605 &&
            recs[i].res.service != NULL && strcmp(report_transport(&recs[i]), transport) == 0)
            return &recs[i];
    return NULL;
}

/* The headline of the open-loop runs: at 60 % of each transport's own maximum, unix÷tcp. */
static void lab_open_headline(FILE *f, const struct run_record *recs, size_t n, size_t size)
{
    static const enum load_mode modes[] = { LOAD_CONNECT, LOAD_REUSE };
    char p99[32], p999[32];

    for (size_t m = 0; m < ARRAY_LEN(modes); m++) {
        const struct run_record *t = find_open(recs, n, size, modes[m], "tcp");
        const struct run_record *u = find_open(recs, n, size, modes[m], "unix");
        if (t == NULL || u == NULL) continue;
        if (!report_run_counts(t) || !report_run_counts(u)) {
            fprintf(f,
                    "  headline, %s at 60 %% of each one's maximum: unix÷tcp p99 - (no ratio: a "
                    "run is invalid, saturated or was cut short)\n",
                    report_mode_name(t->cfg.mode));
            continue;
        }
        text_ratio(
            p99, sizeof(p99),
            (double)hist_percentile(u->res.lat, 99) / (double)hist_percentile(t->res.lat, 99), 2);
        text_ratio(p999, sizeof(p999),
                   (double)hist_percentile(u->res.lat, 99.9) /
                       (double)hist_percentile(t->res.lat, 99.9),
                   2);
        fprintf(f,
                "  headline, %s at 60 %% of each one's maximum: unix÷tcp p99 %s, p99.9 %s "
                "(latency from the intended send time)\n",
                report_mode_name(t->cfg.mode), p99, p999);
    }
}

/* The lab's open-loop runs of one size (--rates): one row per mode, transport and share. */
static void lab_open_table(FILE *f, const struct run_record *recs, size_t n, size_t size)
{
    bool header = false;

    for (size_t i = 0; i < n; i++) {
        const struct run_record *r = &recs[i];
        char sz[32], asked[32], got[32];
        if (r->cfg.size != size || r->cfg.rate <= 0 || r->res.service == NULL || r->rep != 0)
            continue;
        if (!header) {
            size_text(sz, sizeof(sz), (long long)size);
            fprintf(f,
                    "\n%s open loop (latency µs from the intended send time; service p99 from "
                    "the actual send)\n",
                    sz);
            fprintf(f, "  %-8s %-5s %5s %12s %12s %9s %9s %9s %10s %10s %9s\n", "mode", "trans",
                    "rate", "asked/s", "achieved/s", "p50", "p99", "p99.9", "p99.99", "max",
                    "svc p99");
            header = true;
        }
        fmt_thousands(asked, sizeof(asked), r->cfg.rate);
        fmt_thousands(got, sizeof(got), report_ops_per_s(r));
        fprintf(f, "  %-8s %-5s %4.0f%% %12s %12s", report_mode_name(r->cfg.mode),
                report_transport(r), r->rate_share * 100, asked, got);
        put_lat(f, 9, r, us(hist_percentile(r->res.lat, 50)));
        put_lat(f, 9, r, us(hist_percentile(r->res.lat, 99)));
        put_lat(f, 9, r, us(hist_percentile(r->res.lat, 99.9)));
        put_lat(f, 10, r, us(hist_percentile(r->res.lat, 99.99)));
        put_lat(f, 10, r, us(r->res.lat->max));
        put_lat(f, 9, r, us(hist_percentile(r->res.service, 99)));
        fprintf(f, "%s\n", report_saturated(r) ? " saturated" : "");
    }
    lab_open_headline(f, recs, n, size);
}

void report_lab_tables(FILE *f, const struct run_record *recs, size_t n)
{
    size_t done[64];
    size_t ndone = 0;
    bool connect = false;

    for (size_t i = 0; i < n && ndone < ARRAY_LEN(done); i++) {
        bool seen = false;
        connect |= recs[i].cfg.mode == LOAD_CONNECT;
        for (size_t j = 0; j < ndone; j++)
            seen |= done[j] == recs[i].cfg.size;
        if (seen) continue;
        done[ndone++] = recs[i].cfg.size;
        lab_size_table(f, recs, n, recs[i].cfg.size);
        lab_open_table(f, recs, n, recs[i].cfg.size);
    }
    if (connect) {
        fputc('\n', f);
        tw_note(f, "cells");
    }
}

/* Net counter `name` of r's window, if read. */
static bool run_net(const struct run_record *r, const char *name, uint64_t *v)
{
    for (unsigned i = 0; i < OBS_NET_COUNT; i++)
        if (strcmp(observe_net_name(i), name) == 0 && r->observed && r->obs.net[i].ok) {
            *v = r->obs.net[i].v;
            return true;
        }
    return false;
}

/* CPU-seconds with three decimals, or "n/a". */
static void fmt_cpu_s(char *buf, size_t cap, const struct ctr_val *v)
{
    if (v->ok)
        snprintf(buf, cap, "%.3f", (double)v->v / 1e9);
    else
        snprintf(buf, cap, "n/a");
}

/* Whether any of the runs is a repetition past the first: then a run's line says which one. */
static bool any_rep(const struct run_record *recs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (recs[i].rep > 0) return true;
    return false;
}

/* A "noisy:" line for each run that other processes' CPU or steal disturbed. */
static void noisy_lines(FILE *f, const struct run_record *recs, size_t n)
{
    char ep[TEXT_SAFE_CAP], rep[16] = "", other[48]; /* the endpoint, text_safe */
    bool reps = any_rep(recs, n);

    for (size_t i = 0; i < n; i++) {
        const struct obs_other *x = &recs[i].obs.other;
        double s = (double)x->window_ns / 1e9;
        double steal = x->steal_ns.ok ? (double)x->steal_ns.v / 1e9 : 0;
        double taken = (x->other_ns.ok ? (double)x->other_ns.v / 1e9 : 0) + steal;

        if (!recs[i].observed || !x->noisy) continue;
        if (reps) snprintf(rep, sizeof(rep), " #%u", recs[i].rep + 1);
        fmt_cpu_s(other, sizeof(other), &x->other_ns);
        fprintf(f,
                "noisy: %s %s %zu B%s: other processes %s CPU-s + steal %.3f s in a %.2f s "
                "window: %.2f CPU (%.1f %% of %u CPUs), above %.2f CPU; the run still counts\n",
                text_safe(ep, sizeof(ep), report_run_name(&recs[i])),
                report_mode_name(recs[i].cfg.mode), recs[i].cfg.size, rep, other, steal, s,
                taken / s, x->cpus ? 100.0 * taken / (s * x->cpus) : 0.0, x->cpus,
                x->threshold_cpus);
    }
}

void report_noisy_count(FILE *f, const struct run_record *recs, size_t n)
{
    size_t noisy = 0, unknown = 0;
    double threshold = OBS_NOISY_CPUS;

    for (size_t i = 0; i < n; i++) {
        const struct obs_other *x = &recs[i].obs.other;
        if (recs[i].observed) threshold = x->threshold_cpus;
        noisy += recs[i].observed && x->noisy;
        unknown += !recs[i].observed || !x->decided;
    }
    fprintf(f, "  %zu of %zu runs noisy (other processes' CPU + steal above %.2f CPU)", noisy, n,
            threshold);
    if (unknown > 0) fprintf(f, ", %zu not known", unknown);
    fprintf(f, "%s\n", noisy > 0 ? "; noisy runs still count" : "");
}

/*
 * What was tried again rather than failed: AF_UNIX connects that found the
 * backlog full (their ops waited in the connect phase), and requests sent
 * again after the server closed a kept connection. Neither is an error.
 */
static void retry_lines(FILE *f, const struct run_record *recs, size_t n)
{
    char ep[TEXT_SAFE_CAP], a[32], b[32]; /* the endpoint, text_safe */
    for (size_t i = 0; i < n; i++) {
        const struct run_record *r = &recs[i];
        const struct hist *h = r->res.phase[PHASE_CONNECT];
        text_safe(ep, sizeof(ep), report_run_name(r));
        if (r->res.connect_retries > 0 && h != NULL) {
            text_number(a, sizeof(a), (double)r->res.connect_retries, 0);
            fprintf(f,
                    "connect retries: %s %s %zu B: %s connects found the backlog full (EAGAIN) "
                    "and were tried again 1 ms later; their ops waited in the connect phase "
                    "(p99 %.2f ms, max %.2f ms), not errors\n",
                    ep, report_mode_name(r->cfg.mode), r->cfg.size, a,
                    us(hist_percentile(h, 99)) / 1000, us(h->max) / 1000);
        }
        if (r->res.retried > 0) {
            text_number(a, sizeof(a), (double)r->res.retried, 0);
            text_number(b, sizeof(b), (double)r->res.reconnects, 0);
            fprintf(f,
                    "retried: %s %s %zu B: %s requests sent again after the server closed a "
                    "kept connection (%s reconnects), not errors; --retry none counts each "
                    "such close as an error, as wrk does\n",
                    ep, report_mode_name(r->cfg.mode), r->cfg.size, a, b);
        }
    }
}

/* "saturated: ENDPOINT MODE SIZE [#REP]: achieved ... of ... ops/s asked ...: invalid ..." */
static void saturated_line(FILE *f, const struct run_record *r, bool reps)
{
    char ep[TEXT_SAFE_CAP], rep[16] = "", kept[32], asked[32]; /* the endpoint, text_safe */
    double got = report_rate_kept(r);

    if (reps) snprintf(rep, sizeof(rep), " #%u", r->rep + 1);
    text_number(kept, sizeof(kept), got, 0);
    text_number(asked, sizeof(asked), report_rate_intended(r), 0);
    fprintf(f,
            "saturated: %s %s %zu B%s: kept up with %s of %s ops/s (%.1f %%, below 99 %%): "
            "invalid, left out of summaries, comparisons and ratios\n",
            text_safe(ep, sizeof(ep), report_run_name(r)), report_mode_name(r->cfg.mode),
            r->cfg.size, rep, kept, asked, 100.0 * got / report_rate_intended(r));
}

/*
 * Under a run's errors line, what the first bad reply was: its first bytes,
 * escaped, and what that says when they are not the protocol's at all.
 */
static void bad_reply_line(FILE *f, const struct run_record *r)
{
    const struct op_bad *b = &r->res.bad;
    char text[4 * OP_BAD_BYTES + 4];

    if (b->t_ns == 0) return;
    text_safe_n(text, sizeof(text), (const char *)b->bytes, b->len);
    fprintf(f, "  the first %s reply: \"%s\" (%s%u bytes%s, escaped)%s\n",
            b->kind == OP_ERR_UNEXPECTED ? "unasked-for" : op_err_name(b->kind), text,
            b->len == OP_BAD_BYTES ? "its first " : "", (unsigned)b->len,
            b->from_start ? "" : " as a read brought them, not from its start",
            b->kind == OP_ERR_WRONG || b->kind == OP_ERR_UNEXPECTED
                ? "; does the endpoint speak another protocol?"
                : "");
}

void report_errors(FILE *f, const struct run_record *recs, size_t n)
{
    noisy_lines(f, recs, n);
    report_errors_only(f, recs, n);
}

void report_errors_only(FILE *f, const struct run_record *recs, size_t n)
{
    char ep[TEXT_SAFE_CAP], num[32]; /* the endpoint, text_safe */
    retry_lines(f, recs, n);
    for (size_t i = 0; i < n; i++) {
        uint64_t drops = 0;
        if (!run_net(&recs[i], "Softnet.Dropped", &drops) || drops == 0) continue;
        text_number(num, sizeof(num), (double)drops, 0);
        fprintf(f,
                "kernel: %s %s %zu B: %s packets dropped at a full per-CPU backlog "
                "(softnet_stat, host-wide); a dropped TCP segment waits >= 200 ms for its "
                "retransmission\n",
                text_safe(ep, sizeof(ep), report_run_name(&recs[i])),
                report_mode_name(recs[i].cfg.mode), recs[i].cfg.size, num);
    }
    for (size_t i = 0; i < n; i++) {
        const struct load_result *res = &recs[i].res;
        if (res->ops == 0 && load_errors_total(res) == 0)
            fprintf(f, "invalid: %s %s %zu B: no op completed in the measured window\n",
                    text_safe(ep, sizeof(ep), report_run_name(&recs[i])),
                    report_mode_name(recs[i].cfg.mode), recs[i].cfg.size);
        if (report_saturated_invalid(&recs[i])) saturated_line(f, &recs[i], any_rep(recs, n));
        if (load_errors_total(res) == 0) continue;
        fprintf(f, "errors: %s %s %zu B:", text_safe(ep, sizeof(ep), report_run_name(&recs[i])),
                report_mode_name(recs[i].cfg.mode), recs[i].cfg.size);
        for (int k = 0; k < OP_ERR_KINDS; k++) {
            if (res->errors[k] == 0) continue;
            text_number(num, sizeof(num), (double)res->errors[k], 0);
            fprintf(f, " %s=%s", op_err_name((enum op_err)k), num);
        }
        fputc('\n', f);
        bad_reply_line(f, &recs[i]);
    }
}

void report_cut_short(FILE *f, const struct run_record *recs, size_t n)
{
    char ep[TEXT_SAFE_CAP]; /* the endpoint, text_safe */
    for (size_t i = 0; i < n; i++)
        if (recs[i].res.interrupted)
            fprintf(f,
                    "cut short: %s %s %zu B: %s ended it after %.2f s of its window; left out "
                    "of summaries, comparisons and ratios\n",
                    text_safe(ep, sizeof(ep), report_run_name(&recs[i])),
                    report_mode_name(recs[i].cfg.mode), recs[i].cfg.size,
                    recs[i].cut_by != NULL ? recs[i].cut_by : "Ctrl-C",
                    (double)recs[i].res.window_ns / 1e9);
}

/*
 * The second table of `run`: CPU per op (client, server, both, whole system),
 * the median of each phase, and TIME_WAIT peaks by side.
 */
void report_cost_table(FILE *f, const struct run_record *recs, size_t n)
{
    char ep[TEXT_SAFE_CAP]; /* the endpoint, text_safe */
    fprintf(f, "\n%-32s %8s %8s %8s %8s %9s %9s %9s %9s   %s\n", "where the time goes (µs)",
            "client", "server", "both", "system", "connect", "ttfb", "response", "close",
            "TIME_WAIT peak (+added) client / server");
    fprintf(f, "%-32s %8s %8s %8s %8s %9s %9s %9s %9s\n", "", "cpu/op", "cpu/op", "cpu/op",
            "cpu/op", "p50", "p50", "p50", "p50");
    struct na_notes ns = { 0 };

    for (size_t i = 0; i < n; i++) {
        const struct run_record *r = &recs[i];
        struct report_cost c = report_cost_of(r);
        char tw[200];

        cost_notes(&ns, r, text_safe(ep, sizeof(ep), report_run_name(r)));
        phase_notes(&ns, r, text_safe(ep, sizeof(ep), report_run_name(r)));
        ns.nrows++;
        fprintf(f, "%-32s", text_safe(ep, sizeof(ep), report_run_name(r)));
        put_num(f, 8, c.cli);
        put_num(f, 8, c.srv);
        put_num(f, 8, c.sum);
        put_num(f, 8, c.sys);
        for (int p = 0; p < PHASES; p++) {
            const struct hist *h = r->res.phase[p];
            put_num(f, 9, h != NULL && h->total ? us(hist_percentile(h, 50)) : -1);
        }
        fmt_tw(tw, sizeof(tw), r);
        fprintf(f, "   %s\n", tw);
    }
    na_print(f, &ns);
    tw_note(f, "runs");
    for (size_t i = 0; i < n; i++)
        if (recs[i].observed && recs[i].obs.server_source == OBS_SERVER_CGROUP) {
            fprintf(f, "server cpu/op: the --server-cgroup's usage (no --server-pid given)\n");
            break;
        }
}

static void open_loop_lat(FILE *f, const char *what, const struct run_record *r,
                          const struct hist *h)
{
    fprintf(f, "    %-30s", what);
    put_lat(f, 9, r, us(hist_percentile(h, 50)));
    put_lat(f, 9, r, us(hist_percentile(h, 99)));
    put_lat(f, 9, r, us(hist_percentile(h, 99.9)));
    put_lat(f, 10, r, us(hist_percentile(h, 99.99)));
    put_lat(f, 10, r, us(h->max));
    fputc('\n', f);
}

void report_rate_base(FILE *f, const struct endpoint *ep, const struct rate_base *b, double share)
{
    char name[TEXT_SAFE_CAP], base[32], rate[32], lo[32], hi[32]; /* name: text_safe */
    const struct stats_summary *s = &b->stat;

    fmt_thousands(base, sizeof(base), b->ops_per_s);
    fmt_thousands(rate, sizeof(rate), b->ops_per_s * share);
    fprintf(f, "rate base: %s %s ops/s", text_safe(name, sizeof(name), endpoint_name(ep)), base);
    if (b->given) {
        fprintf(f, " (--rate-base)");
    } else {
        fmt_thousands(lo, sizeof(lo), s->min);
        fmt_thousands(hi, sizeof(hi), s->max);
        fprintf(f, ", median of %zu closed-loop probe%s of %.2f s [%s – %s] ±%.1f %%", s->n,
                s->n == 1 ? "" : "s", (double)b->probe_ns / 1e9, lo, hi,
                s->mean > 0 ? 100.0 * s->sd / s->mean : 0.0);
    }
    fprintf(f, "; open loop at %.0f %%: %s ops/s\n", share * 100, rate);
}

void report_open_loop(FILE *f, const struct run_record *recs, size_t n)
{
    char ep[TEXT_SAFE_CAP]; /* the endpoint, text_safe */
    for (size_t i = 0; i < n; i++) {
        const struct run_record *r = &recs[i];
        char asked[32], got[32], kept[32], base[32], basis[96] = "";
        if (r->cfg.rate <= 0 || r->res.service == NULL) continue;
        fmt_thousands(asked, sizeof(asked), r->cfg.rate);
        fmt_thousands(got, sizeof(got), report_ops_per_s(r));
        fmt_thousands(kept, sizeof(kept), report_rate_kept(r));
        fmt_thousands(base, sizeof(base), r->rate_basis);
        if (r->rate_share > 0)
            snprintf(basis, sizeof(basis), " (%.0f %% of %s ops/s, %s)", r->rate_share * 100, base,
                     r->base == NULL  ? "the cell's closed-loop run"
                     : r->base->given ? "--rate-base"
                                      : "the probes' median");
        fprintf(f,
                "\nopen loop, %s arrivals: %s asked %s ops/s%s, achieved %s, kept up with %s "
                "(%.1f %%)%s\n",
                r->cfg.poisson ? "poisson" : "constant",
                text_safe(ep, sizeof(ep), report_run_name(r)), asked, basis, got, kept,
                100.0 * report_rate_kept(r) / report_rate_intended(r),
                report_saturated(r) ? ": SATURATED (below 99 %: invalid)" : "");
        fprintf(f, "    %-30s %9s %9s %9s %10s %10s\n", "latency (µs)", "p50", "p99", "p99.9",
                "p99.99", "max");
        open_loop_lat(f, "from the intended send time", r, r->res.lat);
        open_loop_lat(f, "service (from the actual send)", r, r->res.service);
    }
}

void report_kinds(FILE *f, const struct run_record *recs, size_t n)
{
    char ep[TEXT_SAFE_CAP]; /* the endpoint, text_safe */
    bool first = true;

    for (size_t i = 0; i < n; i++) {
        const struct run_record *r = &recs[i];
        const char *const *names = r->cfg.codec != NULL ? r->cfg.codec->kind_names : NULL;
        const char *sep = " ";
        unsigned kinds = 0;

        for (size_t k = 0; names != NULL && k < CODEC_KINDS && names[k] != NULL; k++)
            kinds += r->res.replies_kind[k] > 0;
        if (kinds < 2 && r->prepared == 0) continue;
        fprintf(f, "%s%s: replies", first ? "\n" : "",
                text_safe(ep, sizeof(ep), report_run_name(r)));
        first = false;
        for (size_t k = 0; names != NULL && k < CODEC_KINDS && names[k] != NULL; k++) {
            char num[32];
            if (r->res.replies_kind[k] == 0) continue;
            fmt_thousands(num, sizeof(num), (double)r->res.replies_kind[k]);
            fprintf(f, "%s%s %s", sep, names[k], num);
            sep = ", ";
        }
        fprintf(f, " (warm-up included)");
        if (r->prepared > 0) {
            char num[32];
            fmt_thousands(num, sizeof(num), (double)r->prepared);
            fprintf(f, "; %s requests before the run (not measured)", num);
        }
        fputc('\n', f);
    }
}

static void overload_ctr(FILE *f, const struct run_record *r, const char *name, struct na_notes *ns)
{
    uint64_t v = 0;

    if (run_net(r, name, &v)) {
        put_count(f, 10, v);
        return;
    }
    fprintf(f, " %10s", "n/a");
    for (unsigned i = 0; i < OBS_NET_COUNT; i++)
        if (strcmp(observe_net_name(i), name) == 0)
            na_add(ns, name,
                   r->observed ? r->obs.net[i].why
                               : "not observed: interrupted before the window opened",
                   report_transport(r));
}

void report_overload(FILE *f, const struct run_record *recs, size_t n)
{
    fprintf(f, "\noverload: how each transport fails or waits (a connect to a full backlog waits: "
               "TCP retransmits its SYN after 1 s, 3 s ..., an AF_UNIX connect that gets EAGAIN "
               "is tried again every 1 ms; the wait is in the connect phase and the latency, an "
               "error only at --timeout; errors are counted per op)\n");
    fprintf(f, "  %-5s %10s %9s %9s %9s %10s %8s %8s %8s %10s %10s %9s\n", "trans", "ops/s",
            "p50 ms", "p99 ms", "max ms", "conn p99", "refused", "timeout", "reset", "ListenOvf",
            "retries", ">= 1 s");
    struct na_notes ns = { 0 };

    for (size_t i = 0; i < n; i++) {
        const struct run_record *r = &recs[i];
        const struct hist *h = r->res.lat, *conn = r->res.phase[PHASE_CONNECT];
        char ops[32];
        fmt_thousands(ops, sizeof(ops), report_ops_per_s(r));
        fprintf(f, "  %-5s %10s", report_transport(r), ops);
        put_ms(f, 9, r->res.ops > 0, us(hist_percentile(h, 50)) / 1000);
        put_ms(f, 9, r->res.ops > 0, us(hist_percentile(h, 99)) / 1000);
        put_ms(f, 9, r->res.ops > 0, us(h->max) / 1000);
        put_ms(f, 10, conn != NULL && conn->total > 0, us(hist_percentile(conn, 99)) / 1000);
        put_count(f, 8, r->res.errors[OP_ERR_REFUSED]);
        put_count(f, 8, r->res.errors[OP_ERR_TIMEOUT]);
        put_count(f, 8, r->res.errors[OP_ERR_RESET]);
        /* The retries: TCP's are the kernel's SYN retransmits, AF_UNIX's hopbench's own. */
        if (r->cfg.ep.kind == ENDPOINT_TCP) {
            overload_ctr(f, r, "TcpExt.ListenOverflows", &ns);
            overload_ctr(f, r, "TcpExt.TCPSynRetrans", &ns);
        } else {
            fprintf(f, " %10s", "-");
            put_count(f, 10, r->res.connect_retries);
        }
        put_count(f, 9, hist_count_at_least(h, NS_PER_S));
        fputc('\n', f);
        ns.nrows++;
    }
    na_print(f, &ns);
}
