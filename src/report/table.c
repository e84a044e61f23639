/*
 * table: the terminal tables of `run` and `lab`. Latencies are printed in
 * µs from the merged histogram (conservative bucket upper edges, < 0.1 %
 * above the true value); throughput is ops per second of the measured window.
 */
#include "report/report.h"

#include <string.h>

static void fmt_thousands(char *buf, size_t cap, double v)
{
    char digits[32];
    size_t len, out = 0;
    int n = snprintf(digits, sizeof(digits), "%.0f", v);

    if (n < 0 || (size_t)n >= sizeof(digits)) {
        snprintf(buf, cap, "%.0f", v);
        return;
    }
    len = (size_t)n;
    for (size_t i = 0; i < len && out + 2 < cap; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            buf[out++] = ',';
        buf[out++] = digits[i];
    }
    buf[out] = '\0';
}

static double us(uint64_t ns)
{
    return (double)ns / 1000.0;
}

static const char *mode_name(const struct load_cfg *c)
{
    return c->mode == LOAD_CONNECT ? "connect" : "reuse";
}

static void fmt_size(char *buf, size_t cap, size_t size)
{
    if (size >= 1024 * 1024 && size % (1024 * 1024) == 0)
        snprintf(buf, cap, "%zu MiB", size / (1024 * 1024));
    else if (size >= 1024 && size % 1024 == 0)
        snprintf(buf, cap, "%zu KiB", size / 1024);
    else
        snprintf(buf, cap, "%zu B", size);
}

void report_run_table(FILE *f, const struct run_record *recs, size_t n)
{
    double base = n > 0 ? report_ops_per_s(&recs[0]) : 0;

    /* Widths of labels holding "µ" (2 bytes, 1 column) are one larger. */
    fprintf(f, "%-32s %-7s %9s %12s %10s %10s %10s %10s %10s %10s %7s %8s\n", "endpoint", "mode", "size",
            "ops/s", "p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "max µs", "cpu µs/op", "errors",
            "vs first");
    for (size_t i = 0; i < n; i++) {
        const struct run_record *r = &recs[i];
        const struct hist *h = r->res.lat;
        char ops[32], size[32];
        double rate = report_ops_per_s(r);

        fmt_thousands(ops, sizeof(ops), rate);
        fmt_size(size, sizeof(size), r->cfg.size);
        fprintf(f, "%-32s %-7s %9s %12s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %7llu", r->cfg.ep.text,
                mode_name(&r->cfg), size, ops, us(hist_percentile(h, 50)),
                us(hist_percentile(h, 90)), us(hist_percentile(h, 99)),
                us(hist_percentile(h, 99.9)), us(h->max), report_cpu_ns_per_op(r) / 1000.0,
                (unsigned long long)load_errors_total(&r->res));
        if (base > 0)
            fprintf(f, " %7.2fx\n", rate / base);
        else
            fprintf(f, " %8s\n", "n/a");
    }
}

static void lab_row(FILE *f, const char *mode, const struct run_record *r)
{
    const struct hist *h = r->res.lat;
    char ops[32];

    fmt_thousands(ops, sizeof(ops), report_ops_per_s(r));
    fprintf(f, "  %-8s %-10s %12s %9.2f %9.2f %9.2f %9.2f %7llu\n", mode,
            endpoint_transport(&r->cfg.ep), ops, us(hist_percentile(h, 50)),
            us(hist_percentile(h, 95)), us(hist_percentile(h, 99)), report_cpu_ns_per_op(r) / 1000.0,
            (unsigned long long)load_errors_total(&r->res));
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 0;
}

static void lab_ratio_row(FILE *f, const struct run_record *tcp, const struct run_record *unx)
{
    const struct hist *ht = tcp->res.lat, *hu = unx->res.lat;

    fprintf(f, "  %-8s %-11s %11.2fx %8.2fx %8.2fx %8.2fx %8.2fx\n", "", "unix÷tcp",
            ratio(report_ops_per_s(unx), report_ops_per_s(tcp)),
            ratio((double)hist_percentile(hu, 50), (double)hist_percentile(ht, 50)),
            ratio((double)hist_percentile(hu, 95), (double)hist_percentile(ht, 95)),
            ratio((double)hist_percentile(hu, 99), (double)hist_percentile(ht, 99)),
            ratio(report_cpu_ns_per_op(unx), report_cpu_ns_per_op(tcp)));
}

static const struct run_record *find(const struct run_record *recs, size_t n, size_t size,
                                     enum load_mode mode, const char *transport)
{
    for (size_t i = 0; i < n; i++)
        if (recs[i].cfg.size == size && recs[i].cfg.mode == mode &&
            strcmp(endpoint_transport(&recs[i].cfg.ep), transport) == 0)
            return &recs[i];
    return NULL;
}

static void lab_size_table(FILE *f, const struct run_record *recs, size_t n, size_t size)
{
    static const enum load_mode modes[] = { LOAD_CONNECT, LOAD_REUSE };
    char sz[32];

    fmt_size(sz, sizeof(sz), size);
    fprintf(f, "\n%s echo round trips\n", sz);
    fprintf(f, "  %-8s %-10s %12s %10s %10s %10s %10s %7s\n", "mode", "transport", "ops/s", "p50 µs",
            "p95 µs", "p99 µs", "cpu µs/op", "errors");
    for (size_t m = 0; m < ARRAY_LEN(modes); m++) {
        const struct run_record *t = find(recs, n, size, modes[m], "tcp");
        const struct run_record *u = find(recs, n, size, modes[m], "unix");
        const char *name = modes[m] == LOAD_CONNECT ? "connect" : "reuse";
        if (t != NULL)
            lab_row(f, name, t);
        if (u != NULL)
            lab_row(f, name, u);
        if (t != NULL && u != NULL)
            lab_ratio_row(f, t, u);
    }
}

void report_lab_tables(FILE *f, const struct run_record *recs, size_t n)
{
    size_t done[64];
    size_t ndone = 0;

    for (size_t i = 0; i < n && ndone < ARRAY_LEN(done); i++) {
        bool seen = false;
        for (size_t j = 0; j < ndone; j++)
            seen |= done[j] == recs[i].cfg.size;
        if (seen)
            continue;
        done[ndone++] = recs[i].cfg.size;
        lab_size_table(f, recs, n, recs[i].cfg.size);
    }
}

void report_errors(FILE *f, const struct run_record *recs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct load_result *res = &recs[i].res;
        if (res->ops == 0 && load_errors_total(res) == 0)
            fprintf(f, "invalid: %s %s %zu B: no op completed in the measured window\n",
                    recs[i].cfg.ep.text, mode_name(&recs[i].cfg), recs[i].cfg.size);
        if (load_errors_total(res) == 0)
            continue;
        fprintf(f, "errors: %s %s %zu B:", recs[i].cfg.ep.text, mode_name(&recs[i].cfg),
                recs[i].cfg.size);
        for (int k = 0; k < OP_ERR_KINDS; k++)
            if (res->errors[k] > 0)
                fprintf(f, " %s=%llu", op_err_name((enum op_err)k),
                        (unsigned long long)res->errors[k]);
        fputc('\n', f);
    }
}
