/*
 * evidence: compare and merge evidence files (see evidence.h, docs/evidence.md).
 *
 * Both commands read whole documents with jansson and borrow the runs from
 * them; nothing is parsed by hand. compare works on the figures a run record
 * already holds (ops_per_s, latency_ns, client_cpu_ns_per_op); merge adds the
 * raw counters and histograms and derives every figure again from the sums,
 * so a merged run is what one process would have written for all the load.
 *
 * Limits: runs are matched by linear search (O(runs²)), which suits evidence
 * files (tens to a few thousand runs), not millions.
 */
#include "evidence.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "report/report.h"
#include "stats.h"

#define CMP_ALPHA     0.05
#define CMP_BOOTSTRAP 10000
#define CMP_LEVEL     0.95
#define CMP_SEED      1
#define CMP_COL       24 /* width of the old and new columns */

/* ---- reading ------------------------------------------------------------------------ */

static int check_schema(const char *path, const json_t *doc, struct hb_err *err)
{
    const json_t *schema = json_object_get(doc, "schema");

    if (!json_is_object(doc))
        return hb_fail(err, -EINVAL, "%s: not hopbench evidence: the top level is not an object",
                       path);
    if (schema == NULL)
        return hb_fail(err, -EINVAL, "%s: not hopbench evidence: no \"schema\" key", path);
    if (!json_is_string(schema))
        return hb_fail(err, -EINVAL, "%s: not hopbench evidence: \"schema\" is not a string", path);
    if (strcmp(json_string_value(schema), REPORT_SCHEMA) != 0)
        return hb_fail(err, -EINVAL, "%s: not hopbench evidence: schema \"%.64s\", want \"%s\"",
                       path, json_string_value(schema), REPORT_SCHEMA);
    if (!json_is_array(json_object_get(doc, "runs")))
        return hb_fail(err, -EINVAL, "%s: not valid evidence: no \"runs\" array", path);
    return 0;
}

/* The whole file at path into *buf (NUL-terminated, the caller frees it) and *len. */
static int read_all(const char *path, char **buf, size_t *len, struct hb_err *err)
{
    FILE *f = fopen(path, "re");
    size_t cap = 1 << 16;
    struct stat st;
    int e = 0;

    *buf = NULL;
    *len = 0;
    if (f == NULL || fstat(fileno(f), &st) == -1)
        e = errno;
    else if (S_ISDIR(st.st_mode))
        e = EISDIR;
    while (e == 0) {
        char *more = realloc(*buf, cap + 1);
        if (more == NULL) {
            e = ENOMEM;
            break;
        }
        *buf = more;
        *len += fread(*buf + *len, 1, cap - *len, f);
        if (ferror(f)) e = errno ? errno : EIO;
        if (*len < cap || e != 0) break;
        cap *= 2;
    }
    if (f != NULL) fclose(f);
    if (e != 0) {
        free(*buf);
        *buf = NULL;
        return hb_fail(err, -e, "%s: cannot read: %s", path, strerror(e));
    }
    (*buf)[*len] = '\0';
    return 0;
}

/* o["record"] is the string want. */
static bool is_record(const json_t *o, const char *want)
{
    const json_t *r = json_object_get(o, "record");

    return json_is_string(r) && strcmp(json_string_value(r), want) == 0;
}

/* A --jsonl file: its first line is a header record. */
static bool is_jsonl(const char *buf, size_t len)
{
    const char *nl = memchr(buf, '\n', len);
    json_t *first = json_loadb(buf, nl != NULL ? (size_t)(nl - buf) : len, 0, NULL);
    bool yes = is_record(first, "header");

    json_decref(first);
    return yes;
}

/*
 * One line of a JSONL file into the document being built: a header (the
 * first one gives the document its fields; every one must have our schema) or
 * a run, appended to "runs" without its "record" key.
 */
static int jsonl_line(const char *path, size_t line, json_t *rec, json_t **doc, struct hb_err *err)
{
    const json_t *schema = json_object_get(rec, "schema");

    if (is_record(rec, "run") && *doc != NULL) {
        json_t *run = json_deep_copy(rec);
        json_object_del(run, "record");
        json_array_append_new(json_object_get(*doc, "runs"), run);
        return 0;
    }
    if (!is_record(rec, "header"))
        return hb_fail(err, -EINVAL,
                       "%s: line %zu: not hopbench JSONL: not a \"header\" or \"run\" record", path,
                       line);
    if (!json_is_string(schema) || strcmp(json_string_value(schema), REPORT_SCHEMA) != 0)
        return hb_fail(
            err, -EINVAL, "%s: line %zu: not hopbench evidence: schema \"%.64s\", want \"%s\"",
            path, line, json_is_string(schema) ? json_string_value(schema) : "", REPORT_SCHEMA);
    if (*doc != NULL) return 0;
    *doc = json_deep_copy(rec);
    json_object_del(*doc, "record");
    json_object_set_new(*doc, "runs", json_array());
    return 0;
}

/* A --jsonl file as one document: the first header's fields and the runs of every invocation. */
static int load_jsonl(const char *path, const char *buf, size_t len, json_t **doc,
                      struct hb_err *err)
{
    const char *p = buf, *end = buf + len;

    for (size_t line = 1; p < end; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
        json_error_t jerr;
        json_t *rec = n > 0 ? json_loadb(p, n, 0, &jerr) : NULL;
        int rc;

        p += n + (nl != NULL);
        if (n == 0) continue;
        if (rec == NULL)
            return hb_fail(err, -EINVAL, "%s: line %zu: not JSON: %s (column %d)", path, line,
                           jerr.text, jerr.column);
        rc = jsonl_line(path, line, rec, doc, err);
        json_decref(rec);
        if (rc < 0) return rc;
    }
    return 0;
}

int evidence_load(const char *path, json_t **doc, struct hb_err *err)
{
    json_error_t jerr;
    size_t len;
    char *buf;
    int rc;

    *doc = NULL;
    rc = read_all(path, &buf, &len, err);
    if (rc < 0 || buf == NULL) return rc < 0 ? rc : -EIO;
    if (is_jsonl(buf, len)) {
        rc = load_jsonl(path, buf, len, doc, err);
        free(buf);
        if (rc < 0) {
            json_decref(*doc);
            *doc = NULL;
        }
        return rc;
    }
    *doc = json_loadb(buf, len, 0, &jerr);
    free(buf);
    if (*doc == NULL)
        return hb_fail(err, -EINVAL, "%s: not JSON: %s (line %d, column %d)", path, jerr.text,
                       jerr.line, jerr.column);
    rc = check_schema(path, *doc, err);
    if (rc < 0) {
        json_decref(*doc);
        *doc = NULL;
    }
    return rc;
}

/* j[key] as a non-negative integer; -EINVAL when absent or not one. */
static int get_u64(const json_t *j, const char *key, uint64_t *out)
{
    const json_t *v = json_object_get(j, key);

    if (!json_is_integer(v) || json_integer_value(v) < 0) return -EINVAL;
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

/* ---- histograms ----------------------------------------------------------------------- */

/* j has the layout of struct hist, so its counters mean the same values as ours. */
static int hist_layout_ok(const json_t *j, struct hb_err *err)
{
    static const struct {
        const char *key;
        uint64_t want;
    } layout[] = { { "lowest", 1 }, { "highest", HIST_MAX_NS }, { "significant_digits", 3 } };
    const json_t *unit = json_object_get(j, "unit");

    if (!json_is_object(j)) return hb_fail(err, -EINVAL, "no histogram object");
    if (!json_is_string(unit) || strcmp(json_string_value(unit), "ns") != 0)
        return hb_fail(err, -EINVAL, "histogram layout differs: unit is not \"ns\"");
    for (size_t i = 0; i < ARRAY_LEN(layout); i++) {
        uint64_t v;
        if (get_u64(j, layout[i].key, &v) < 0 || v != layout[i].want)
            return hb_fail(err, -EINVAL, "histogram layout differs: %s is not %llu", layout[i].key,
                           (unsigned long long)layout[i].want);
    }
    return 0;
}

/* Adds the [index, count] pairs into dst; they must add up to total. */
static int hist_add_counts(struct hist *dst, const json_t *counts, uint64_t total,
                           struct hb_err *err)
{
    const json_t *pair;
    uint64_t sum = 0;
    size_t i;

    if (!json_is_array(counts)) return hb_fail(err, -EINVAL, "histogram has no \"counts\" array");
    json_array_foreach(counts, i, pair)
    {
        const json_t *ix = json_array_get(pair, 0), *n = json_array_get(pair, 1);
        if (json_array_size(pair) != 2 || !json_is_integer(ix) || !json_is_integer(n) ||
            json_integer_value(n) < 0)
            return hb_fail(err, -EINVAL, "histogram counts[%zu] is not an [index, count] pair", i);
        if (json_integer_value(ix) < 0 || (uint64_t)json_integer_value(ix) >= HIST_COUNTS)
            return hb_fail(err, -EINVAL, "histogram counts[%zu]: index %lld is outside 0..%zu", i,
                           (long long)json_integer_value(ix), (size_t)HIST_COUNTS - 1);
        dst->counts[json_integer_value(ix)] += (uint64_t)json_integer_value(n);
        sum += (uint64_t)json_integer_value(n);
    }
    if (sum != total)
        return hb_fail(err, -EINVAL, "histogram counts add up to %llu, its total is %llu",
                       (unsigned long long)sum, (unsigned long long)total);
    return 0;
}

int evidence_hist_add(struct hist *dst, const json_t *j, struct hb_err *err)
{
    uint64_t total, min, max, overflow;

    if (hist_layout_ok(j, err) < 0) return -EINVAL;
    if (get_u64(j, "total", &total) < 0 || get_u64(j, "min", &min) < 0 ||
        get_u64(j, "max", &max) < 0 || get_u64(j, "overflow", &overflow) < 0)
        return hb_fail(err, -EINVAL, "histogram lacks total, min, max or overflow");
    if (max > HIST_MAX_NS || overflow > total || (total > 0 && min > max))
        return hb_fail(err, -EINVAL, "histogram min, max or overflow out of range");
    if (hist_add_counts(dst, json_object_get(j, "counts"), total, err) < 0) return -EINVAL;
    dst->total += total;
    dst->overflow += overflow;
    /* an empty histogram is written with min 0: it must not lower dst's min */
    if (total > 0 && min < dst->min) dst->min = min;
    if (total > 0 && max > dst->max) dst->max = max;
    return 0;
}

/* ---- run keys ------------------------------------------------------------------------- */

/* What identifies a run: compare matches cells, merge matches cells and reps. */
struct run_key {
    const char *endpoint, *mode;
    const char *proto; /* "" in evidence from before the protocols */
    json_int_t size, connections, pipeline;
    json_int_t rep; /* -1 when the record has none */
    double rate;    /* open loop: the rate asked for; 0 = closed loop */
};

/* Fills k from run; false when endpoint, mode, size, connections or pipeline is missing. */
static bool run_key_of(const json_t *run, struct run_key *k)
{
    static const char *const ints[] = { "size", "connections", "pipeline" };
    json_int_t *dst[] = { &k->size, &k->connections, &k->pipeline };
    const json_t *ep = json_object_get(run, "endpoint"), *mode = json_object_get(run, "mode");
    const json_t *rep = json_object_get(run, "rep");

    if (!json_is_string(ep) || !json_is_string(mode)) return false;
    k->endpoint = json_string_value(ep);
    k->mode = json_string_value(mode);
    for (size_t i = 0; i < ARRAY_LEN(ints); i++) {
        const json_t *v = json_object_get(run, ints[i]);
        if (!json_is_integer(v)) return false;
        *dst[i] = json_integer_value(v);
    }
    k->rep = json_is_integer(rep) ? json_integer_value(rep) : -1;
    /* Runs of different protocols, or closed against open loop, are different cells. An
     * open-loop run is keyed by its share of the maximum when it has one, else by its rate. */
    const json_t *proto = json_object_get(run, "proto"), *open = json_object_get(run, "open_loop");
    k->proto = json_is_string(proto) ? json_string_value(proto) : "";
    k->rate = 0;
    if (json_is_object(open)) {
        const json_t *share = json_object_get(open, "rate_share");
        k->rate = json_is_number(share) ? -json_number_value(share)
                                        : json_number_value(json_object_get(open, "rate"));
    }
    return true;
}

static bool same_cell(const struct run_key *a, const struct run_key *b)
{
    return strcmp(a->endpoint, b->endpoint) == 0 && strcmp(a->mode, b->mode) == 0 &&
           strcmp(a->proto, b->proto) == 0 && a->rate == b->rate && a->size == b->size &&
           a->connections == b->connections && a->pipeline == b->pipeline;
}

/* Merge ignores connections: they are what gets added up. */
static bool same_slot(const struct run_key *a, const struct run_key *b)
{
    return strcmp(a->endpoint, b->endpoint) == 0 && strcmp(a->mode, b->mode) == 0 &&
           strcmp(a->proto, b->proto) == 0 && a->rate == b->rate && a->size == b->size &&
           a->pipeline == b->pipeline && a->rep == b->rep;
}

static bool run_valid(const json_t *run)
{
    return json_is_true(json_object_get(run, "valid"));
}

/* compare counts a run that is valid and was not cut short by Ctrl-C. */
static bool run_counts(const json_t *run)
{
    return run_valid(run) && !json_is_true(json_object_get(run, "interrupted"));
}

/* What the writer puts in place of a run it could not encode: {"error": "..."}. */
static bool run_placeholder(const json_t *run)
{
    return json_is_string(json_object_get(run, "error")) && json_object_get(run, "ops") == NULL;
}

static const char *json_kind(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        break;
    }
    return "null";
}

/* A record of "runs" is an object (one that names no cell is a placeholder, or junk). */
static int check_record(const json_t *run, struct hb_err *err)
{
    if (run == NULL || !json_is_object(run))
        return hb_fail(err, -EINVAL, "not a run record but %s", run ? json_kind(run) : "nothing");
    return 0;
}

/* ---- compare ------------------------------------------------------------------------ */

struct metric {
    const char *label; /* the table's title, with its unit */
    const char *obj;   /* the object holding key, NULL for the run itself */
    const char *key;
    double scale; /* shown = value * scale */
    int digits;
};

static const struct metric metrics[] = {
    { "ops/s", NULL, "ops_per_s", 1, 0 },
    { "p50 µs", "latency_ns", "p50", 1e-3, 2 },
    { "p99 µs", "latency_ns", "p99", 1e-3, 2 },
    { "p99.9 µs", "latency_ns", "p999", 1e-3, 2 },
    { "client cpu µs/op", NULL, "client_cpu_ns_per_op", 1e-3, 2 },
};

static bool metric_value(const json_t *run, const struct metric *m, double *out)
{
    const json_t *o = m->obj != NULL ? json_object_get(run, m->obj) : run;
    const json_t *v = json_object_get(o, m->key);

    if (!json_is_number(v)) return false;
    *out = json_number_value(v);
    return true;
}

struct cmp_cell {
    struct run_key key;
    const json_t **runs[2]; /* the valid runs in OLD [0] and NEW [1] */
    size_t n[2];            /* how many */
    size_t all[2];          /* runs of the cell, valid or not */
};

struct cmp {
    const char *path[2];
    json_t *doc[2];
    struct cmp_cell *cells; /* room for every run of both files */
    size_t ncells;
};

/* The cell of k, added (with room for every run of both files) when it is new. */
static struct cmp_cell *cmp_cell_of(struct cmp *c, const struct run_key *k)
{
    struct cmp_cell *cell;

    for (size_t i = 0; i < c->ncells; i++)
        if (same_cell(&c->cells[i].key, k)) return &c->cells[i];
    cell = &c->cells[c->ncells++];
    cell->key = *k;
    for (int s = 0; s < 2; s++) {
        size_t n = json_array_size(json_object_get(c->doc[s], "runs"));
        cell->runs[s] = xcalloc(n ? n : 1, sizeof(const json_t *));
    }
    return cell;
}

/* A valid run must carry every figure compare reads. */
static int cmp_check_run(const json_t *run, const char *path, size_t idx, struct hb_err *err)
{
    double v;

    for (size_t m = 0; m < ARRAY_LEN(metrics); m++)
        if (!metric_value(run, &metrics[m], &v))
            return hb_fail(err, -EINVAL, "%s: not valid evidence: run %zu has no number %s%s%s",
                           path, idx, metrics[m].obj ? metrics[m].obj : "",
                           metrics[m].obj ? "." : "", metrics[m].key);
    return 0;
}

/* Sorts the runs of side s into cells. A record that names no cell can only be skipped. */
static int cmp_add_side(struct cmp *c, int s, struct hb_err *err)
{
    json_t *runs = json_object_get(c->doc[s], "runs"), *run;
    size_t i;

    json_array_foreach(runs, i, run)
    {
        struct run_key k = { 0 };
        bool valid = run_counts(run);
        struct cmp_cell *cell;

        if (check_record(run, err) < 0) {
            char msg[sizeof(err->msg)];
            memcpy(msg, err->msg, sizeof(msg));
            return hb_fail(err, -EINVAL, "%s: not valid evidence: run %zu is %s", c->path[s], i,
                           msg);
        }
        if (run_placeholder(run)) continue;
        if (!run_key_of(run, &k))
            return hb_fail(err, -EINVAL,
                           "%s: not valid evidence: run %zu lacks endpoint, mode, size, "
                           "connections or pipeline",
                           c->path[s], i);
        if (valid && cmp_check_run(run, c->path[s], i, err) < 0) return -EINVAL;
        cell = cmp_cell_of(c, &k);
        cell->all[s]++;
        if (valid) cell->runs[s][cell->n[s]++] = run;
    }
    return 0;
}

static void cmp_release(struct cmp *c)
{
    for (size_t i = 0; i < c->ncells; i++) {
        free(c->cells[i].runs[0]);
        free(c->cells[i].runs[1]);
    }
    free(c->cells);
    json_decref(c->doc[0]);
    json_decref(c->doc[1]);
}

/* "64 B", "4 KiB", "1 MiB". */
static void size_text(char *buf, size_t cap, json_int_t size)
{
    const json_int_t mib = (json_int_t)1 << 20;

    if (size > 0 && size % mib == 0)
        snprintf(buf, cap, "%lld MiB", (long long)(size / mib));
    else if (size > 0 && size % 1024 == 0)
        snprintf(buf, cap, "%lld KiB", (long long)(size / 1024));
    else
        snprintf(buf, cap, "%lld B", (long long)size);
}

/* The whole key: "echo tcp://127.0.0.1:9000 reuse 64 B c=1 p=1", then " rate=60%" or "
 * rate=2000/s". */
static void cell_label(char *buf, size_t cap, const struct run_key *k)
{
    char size[32], rate[48] = "";

    size_text(size, sizeof(size), k->size);
    if (k->rate < 0)
        snprintf(rate, sizeof(rate), " rate=%.4g%%", -k->rate * 100);
    else if (k->rate > 0)
        snprintf(rate, sizeof(rate), " rate=%.6g/s", k->rate);
    snprintf(buf, cap, "%s%s%s %s %s c=%lld p=%lld%s", k->proto, k->proto[0] ? " " : "",
             k->endpoint, k->mode, size, (long long)k->connections, (long long)k->pipeline, rate);
}

/* Columns s takes on a terminal: UTF-8 continuation bytes take none. */
static int display_width(const char *s)
{
    int w = 0;

    for (; *s != '\0'; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

static void put_padded(FILE *f, const char *s, int width)
{
    fputs(s, f);
    for (int w = display_width(s); w < width; w++)
        fputc(' ', f);
}

/* The values of metric m over the valid runs of side s of cell; returns how many. */
static size_t cell_values(const struct cmp_cell *cell, int s, const struct metric *m, double *out)
{
    for (size_t i = 0; i < cell->n[s]; i++)
        metric_value(cell->runs[s][i], m, &out[i]);
    return cell->n[s];
}

/* "33860 ±4.2 % (n=4)": median, spread (the larger distance to min or max, % of median), n. */
static void side_text(char *buf, size_t cap, const struct metric *m, const double *x, size_t n)
{
    struct stats_summary s;
    double spread;

    if (n == 0 || stats_summarize(x, n, &s) < 0) {
        snprintf(buf, cap, "no valid run (n=%zu)", n);
        return;
    }
    spread = s.max - s.median > s.median - s.min ? s.max - s.median : s.median - s.min;
    spread = s.median != 0 ? 100.0 * spread / s.median : 0;
    snprintf(buf, cap, "%.*f ±%.*f %% (n=%zu)", m->digits, s.median * m->scale, spread < 10 ? 1 : 0,
             spread, n);
}

/* The benchstat verdict of b (NEW) against a (OLD). */
static void delta_text(char *buf, size_t cap, const double *a, size_t na, const double *b,
                       size_t nb)
{
    double ratio, lo, hi, u, p;

    if (na == 0 || nb == 0 ||
        stats_bootstrap_ratio(a, na, b, nb, CMP_BOOTSTRAP, CMP_LEVEL, CMP_SEED, &ratio, &lo, &hi) <
            0 ||
        stats_mann_whitney(a, na, b, nb, &u, &p) < 0) {
        snprintf(buf, cap, "n/a (n=%zu+%zu)", na, nb);
        return;
    }
    stats_format_delta(buf, cap, ratio, lo, hi, p, CMP_ALPHA, na, nb);
}

/* One row: the cell, OLD, NEW and the delta. a and b have room for every run of a side. */
static void cmp_row(FILE *f, const struct cmp_cell *cell, const struct metric *m, int width,
                    double *a, double *b)
{
    char label[512], old[64], new[64], delta[96];
    size_t na = cell_values(cell, 0, m, a), nb = cell_values(cell, 1, m, b);

    cell_label(label, sizeof(label), &cell->key);
    side_text(old, sizeof(old), m, a, na);
    side_text(new, sizeof(new), m, b, nb);
    delta_text(delta, sizeof(delta), a, na, b, nb);
    put_padded(f, label, width);
    fputs("  ", f);
    put_padded(f, old, CMP_COL);
    fputs("  ", f);
    put_padded(f, new, CMP_COL);
    fprintf(f, "  %s\n", delta);
}

/* Width of the first column: the longest label of a matched cell, or metric title. */
static int cmp_label_width(const struct cmp *c)
{
    int width = 0;
    char label[512];

    for (size_t m = 0; m < ARRAY_LEN(metrics); m++)
        if (display_width(metrics[m].label) > width) width = display_width(metrics[m].label);
    for (size_t i = 0; i < c->ncells; i++) {
        cell_label(label, sizeof(label), &c->cells[i].key);
        if (display_width(label) > width) width = display_width(label);
    }
    return width;
}

static void cmp_metric(FILE *f, const struct cmp *c, const struct metric *m, int width, double *a,
                       double *b)
{
    fputc('\n', f);
    put_padded(f, m->label, width);
    fputs("  ", f);
    put_padded(f, "old", CMP_COL);
    fputs("  ", f);
    put_padded(f, "new", CMP_COL);
    fputs("  delta (new vs old)\n", f);
    for (size_t i = 0; i < c->ncells; i++)
        if (c->cells[i].all[0] > 0 && c->cells[i].all[1] > 0)
            cmp_row(f, &c->cells[i], m, width, a, b);
}

static void cmp_side_header(FILE *f, const struct cmp *c, int s)
{
    size_t runs = 0, valid = 0;

    for (size_t i = 0; i < c->ncells; i++) {
        runs += c->cells[i].all[s];
        valid += c->cells[i].n[s];
    }
    fprintf(f, "%s: %s (%zu runs, %zu valid)\n", s == 0 ? "old" : "new", c->path[s], runs, valid);
}

static void cmp_unmatched(FILE *f, const struct cmp *c)
{
    char label[512];
    bool any = false;

    for (size_t i = 0; i < c->ncells; i++) {
        const struct cmp_cell *cell = &c->cells[i];
        if (cell->all[0] > 0 && cell->all[1] > 0) continue;
        if (!any) fputc('\n', f);
        any = true;
        cell_label(label, sizeof(label), &cell->key);
        fprintf(f, "only in %s: %s (%zu valid of %zu runs)\n", cell->all[0] ? "OLD" : "NEW", label,
                cell->n[cell->all[0] ? 0 : 1], cell->all[cell->all[0] ? 0 : 1]);
    }
}

/* How many cells both files have. */
static size_t cmp_matched(const struct cmp *c)
{
    size_t n = 0;

    for (size_t i = 0; i < c->ncells; i++)
        n += c->cells[i].all[0] > 0 && c->cells[i].all[1] > 0;
    return n;
}

/* How many cells have a valid run in both files: 0 = nothing was compared. */
static size_t cmp_comparable(const struct cmp *c)
{
    size_t n = 0;

    for (size_t i = 0; i < c->ncells; i++)
        n += c->cells[i].n[0] > 0 && c->cells[i].n[1] > 0;
    return n;
}

static void cmp_print(FILE *f, const struct cmp *c)
{
    size_t na = json_array_size(json_object_get(c->doc[0], "runs"));
    size_t nb = json_array_size(json_object_get(c->doc[1], "runs"));
    double *a = xcalloc(na ? na : 1, sizeof(*a)), *b = xcalloc(nb ? nb : 1, sizeof(*b));
    int width = cmp_label_width(c);

    cmp_side_header(f, c, 0);
    cmp_side_header(f, c, 1);
    fprintf(f, "cell: proto endpoint mode size c=connections p=pipeline [open-loop rate=share of "
               "the maximum or ops/s]; median ±spread (n valid runs); delta: ratio of medians "
               "new/old, 95 %% interval, Mann-Whitney p\n");
    for (size_t m = 0; m < ARRAY_LEN(metrics) && cmp_matched(c) > 0; m++)
        cmp_metric(f, c, &metrics[m], width, a, b);
    cmp_unmatched(f, c);
    free(a);
    free(b);
}

/* One line on stderr about a bad command line; returns -EINVAL. */
__attribute__((format(printf, 2, 3))) static int usage_fail(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "hopbench %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see hopbench %s --help)\n", cmd);
    return -EINVAL;
}

/* Returns 0 with path[] set, CLI_HELP after printing the help, or -EINVAL. */
static int compare_args(int argc, char **argv, const char *path[2])
{
    int n = 0;

    for (int i = 1; i < argc; i++) {
        if (cli_option(&cli_spec_compare, argv[i]) == 'h') {
            fputs(cli_spec_compare.help, stdout);
            return CLI_HELP;
        }
    }
    for (int i = 1; i < argc; i++) {
        if (cli_option(&cli_spec_compare, argv[i]) != 0)
            return usage_fail("compare", "unknown option '%s'", argv[i]);
        if (n < 2) path[n] = argv[i];
        n++;
    }
    if (n != 2) return usage_fail("compare", "want OLD.json NEW.json, got %d file(s)", n);
    return 0;
}

int evidence_compare_main(int argc, char **argv)
{
    struct cmp c = { 0 };
    struct hb_err err = { 0 };
    int rc = compare_args(argc, argv, c.path);

    if (rc == CLI_HELP) return HB_EXIT_OK;
    if (rc < 0) return HB_EXIT_USAGE;
    rc = HB_EXIT_OK;
    for (int s = 0; s < 2 && rc == HB_EXIT_OK; s++)
        if (evidence_load(c.path[s], &c.doc[s], &err) < 0) rc = HB_EXIT_RUNTIME;
    if (rc == HB_EXIT_OK) {
        size_t n = json_array_size(json_object_get(c.doc[0], "runs")) +
                   json_array_size(json_object_get(c.doc[1], "runs"));
        c.cells = xcalloc(n ? n : 1, sizeof(*c.cells));
        if (cmp_add_side(&c, 0, &err) < 0 || cmp_add_side(&c, 1, &err) < 0) rc = HB_EXIT_RUNTIME;
    }
    if (rc == HB_EXIT_OK) {
        cmp_print(stdout, &c);
        fflush(stdout);
        if (cmp_comparable(&c) == 0) {
            fprintf(stderr, "hopbench compare: nothing comparable: %s\n",
                    cmp_matched(&c) == 0 ? "no cell is in both files"
                                         : "no cell has a valid run in both files");
            rc = HB_EXIT_INVALID;
        }
    } else {
        fprintf(stderr, "hopbench compare: %s\n", err.msg);
    }
    cmp_release(&c);
    return rc;
}

/* ---- merge ---------------------------------------------------------------------------- */

/* One run of one input file. */
struct part {
    json_t *run;
    size_t file, idx;
};

/* The runs that become one output run: at most one per file. */
struct slot {
    struct run_key key;
    bool keyed; /* false: a record that names no cell and rep, copied as it is */
    struct part *parts;
    size_t nparts;
};

struct merge {
    const char **paths;
    size_t nfiles;
    const char *out; /* -o, or NULL for stdout */
    json_t **docs;
    struct slot *slots; /* room for every run of every file */
    size_t nslots;
    struct hist *h; /* scratch for adding histograms */
};

/* Prefixes err's message with the file and run it is about; returns -EINVAL. */
static int part_fail(struct hb_err *err, const struct merge *m, const struct part *p)
{
    char msg[sizeof(err->msg)];

    memcpy(msg, err->msg, sizeof(msg));
    return hb_fail(err, -EINVAL, "%s: run %zu: %s", m->paths[p->file], p->idx, msg);
}

/* The slot for run of file `file`: one with the same key and no run of that file yet, or new. */
static struct slot *merge_slot_of(struct merge *m, json_t *run, size_t file)
{
    struct run_key k = { 0 };
    bool keyed = run_key_of(run, &k) && k.rep >= 0;
    struct slot *s;

    for (size_t i = 0; keyed && i < m->nslots; i++) {
        s = &m->slots[i];
        /* files are added in order, so the last part tells whether this file is in already */
        if (s->keyed && same_slot(&s->key, &k) && s->parts[s->nparts - 1].file != file) return s;
    }
    s = &m->slots[m->nslots++];
    s->key = k;
    s->keyed = keyed;
    s->parts = xcalloc(m->nfiles, sizeof(*s->parts));
    return s;
}

/*
 * The histogram j decodes into h; with `total` not UINT64_MAX, it must hold
 * exactly that many values (a run's ops). `what` names it in err: the run's
 * own "histogram" goes unnamed (its messages say "histogram" already).
 */
static int check_hist(struct hist *h, const json_t *j, const char *what, uint64_t total,
                      struct hb_err *err)
{
    hist_init(h);
    if (evidence_hist_add(h, j, err) < 0) {
        char msg[sizeof(err->msg)];
        memcpy(msg, err->msg, sizeof(msg));
        return strcmp(what, "histogram") != 0 ? hb_fail(err, -EINVAL, "%s: %s", what, msg)
                                              : -EINVAL;
    }
    if (total != UINT64_MAX && h->total != total)
        return hb_fail(err, -EINVAL, "%s.total is %llu, but ops is %llu", what,
                       (unsigned long long)h->total, (unsigned long long)total);
    return 0;
}

/* Each measured phase's histogram decodes (a phase holds any number of values). */
static int check_phases(struct hist *h, json_t *phases, struct hb_err *err)
{
    const char *name;
    json_t *p;
    char what[96];

    if (phases == NULL) return 0;
    if (!json_is_object(phases)) return hb_fail(err, -EINVAL, "\"phases\" is not an object");
    json_object_foreach(phases, name, p)
    {
        snprintf(what, sizeof(what), "phases.%.64s.histogram", name);
        if (check_hist(h, json_object_get(p, "histogram"), what, UINT64_MAX, err) < 0)
            return -EINVAL;
    }
    return 0;
}

/*
 * A run record merge can copy or add: an object naming its cell and rep, with
 * ops and a histogram of exactly ops values (the writer records each op in
 * both, so errors and the warm-up leave them equal), the same for an open
 * loop's service histogram, and phase histograms that decode. The writer's
 * placeholder for a run it could not encode passes, and is copied.
 */
static int check_run(struct hist *h, const json_t *run, struct hb_err *err)
{
    const json_t *open = json_object_get(run, "open_loop");
    struct run_key k;
    uint64_t ops;

    if (check_record(run, err) < 0) return -EINVAL;
    if (run_placeholder(run)) return 0;
    if (!run_key_of(run, &k) || k.rep < 0)
        return hb_fail(
            err, -EINVAL,
            "lacks endpoint, mode, size, connections, pipeline or rep: not a run record");
    if (get_u64(run, "ops", &ops) < 0)
        return hb_fail(err, -EINVAL, "\"ops\" is missing or not a count");
    if (check_hist(h, json_object_get(run, "histogram"), "histogram", ops, err) < 0) return -EINVAL;
    if (open != NULL && !json_is_null(open)) {
        if (!json_is_object(open))
            return hb_fail(err, -EINVAL, "\"open_loop\" is neither an object nor null");
        if (check_hist(h, json_object_get(open, "service_histogram"), "open_loop.service_histogram",
                       ops, err) < 0)
            return -EINVAL;
    }
    return check_phases(h, json_object_get(run, "phases"), err);
}

/* Every record of every file is a run merge can use; else err names the file and run. */
static int merge_check(struct merge *m, struct hb_err *err)
{
    for (size_t f = 0; f < m->nfiles; f++) {
        json_t *runs = json_object_get(m->docs[f], "runs"), *run;
        size_t i;
        json_array_foreach(runs, i, run)
        {
            if (check_run(m->h, run, err) < 0)
                return part_fail(err, m, &(struct part){ .run = run, .file = f, .idx = i });
        }
    }
    return 0;
}

static void merge_group(struct merge *m)
{
    size_t total = 0;

    for (size_t f = 0; f < m->nfiles; f++)
        total += json_array_size(json_object_get(m->docs[f], "runs"));
    m->slots = xcalloc(total ? total : 1, sizeof(*m->slots));
    for (size_t f = 0; f < m->nfiles; f++) {
        json_t *runs = json_object_get(m->docs[f], "runs"), *run;
        size_t i;
        json_array_foreach(runs, i, run)
        {
            struct slot *s = merge_slot_of(m, run, f);
            s->parts[s->nparts++] = (struct part){ .run = run, .file = f, .idx = i };
        }
    }
}

/* dst[key] += src[key], both integers. */
static int add_int(json_t *dst, const json_t *src, const char *key, struct hb_err *err)
{
    const json_t *a = json_object_get(dst, key), *b = json_object_get(src, key);
    json_int_t sum;

    if (!json_is_integer(a) || !json_is_integer(b))
        return hb_fail(err, -EINVAL, "\"%s\" is missing or not an integer", key);
    if (__builtin_add_overflow(json_integer_value(a), json_integer_value(b), &sum))
        return hb_fail(err, -EINVAL, "\"%s\" overflows when added", key);
    json_object_set_new(dst, key, json_integer(sum));
    return 0;
}

/*
 * Counts by name (error kinds, status classes), name by name; a name only
 * src knows is added to dst. `required`: the object must be in both.
 */
static int add_counts(json_t *dst, const json_t *src, const char *key, bool required,
                      struct hb_err *err)
{
    json_t *d = json_object_get(dst, key), *s = json_object_get(src, key), *v;
    const char *kind;

    if (!required && d == NULL && s == NULL) return 0;
    if (!required && d == NULL) {
        d = json_object();
        json_object_set_new(dst, key, d);
    }
    if (!required && s == NULL) return 0;
    if (!json_is_object(d) || !json_is_object(s))
        return hb_fail(err, -EINVAL, "\"%s\" is missing or not an object", key);
    json_object_foreach(s, kind, v)
    {
        if (json_object_get(d, kind) == NULL) json_object_set_new(d, kind, json_integer(0));
        if (add_int(d, s, kind, err) < 0) return -EINVAL;
    }
    return 0;
}

/* Adds src's counters into dst, a run of the same cell and rep from another file. */
static int add_run(json_t *dst, const json_t *src, struct hb_err *err)
{
    static const char *const sums[] = { "ops",           "connects",    "errors_total",
                                        "client_cpu_ns", "connections", "threads" };
    const json_t *wa = json_object_get(dst, "window_s"), *wb = json_object_get(src, "window_s");
    bool interrupted = json_is_true(json_object_get(dst, "interrupted")) ||
                       json_is_true(json_object_get(src, "interrupted"));

    /* Counters that evidence from before the protocols (issue 4) does not have. */
    static const char *const optional[] = { "requests", "replies", "reconnects", "stderr_replies" };

    for (size_t i = 0; i < ARRAY_LEN(sums); i++)
        if (add_int(dst, src, sums[i], err) < 0) return -EINVAL;
    for (size_t i = 0; i < ARRAY_LEN(optional); i++) {
        if (json_object_get(dst, optional[i]) == NULL && json_object_get(src, optional[i]) == NULL)
            continue;
        if (json_object_get(dst, optional[i]) == NULL)
            json_object_set_new(dst, optional[i], json_integer(0));
        if (json_object_get(src, optional[i]) == NULL) continue;
        if (add_int(dst, src, optional[i], err) < 0) return -EINVAL;
    }
    if (add_counts(dst, src, "errors", true, err) < 0) return -EINVAL;
    if (add_counts(dst, src, "status", false, err) < 0) return -EINVAL;
    if (!json_is_number(wa) || !json_is_number(wb))
        return hb_fail(err, -EINVAL, "\"window_s\" is missing or not a number");
    if (json_number_value(wb) > json_number_value(wa))
        json_object_set_new(dst, "window_s", json_real(json_number_value(wb)));
    json_object_set_new(dst, "valid", json_boolean(run_valid(dst) && run_valid(src)));
    json_object_set_new(dst, "interrupted", json_boolean(interrupted));
    return 0;
}

/* ops_per_s and client_cpu_ns_per_op from the summed counters and the longest window. */
static void derive_rates(json_t *run)
{
    double ops = (double)json_integer_value(json_object_get(run, "ops"));
    double cpu = (double)json_integer_value(json_object_get(run, "client_cpu_ns"));
    double window = json_number_value(json_object_get(run, "window_s"));

    json_object_set_new(run, "ops_per_s", json_real(window > 0 ? ops / window : 0));
    json_object_set_new(run, "client_cpu_ns_per_op", json_real(ops > 0 ? cpu / ops : 0));
}

/* Where a run keeps a histogram: its own, a phase's, or the open loop's service time. */
enum hist_at { HIST_RUN, HIST_PHASE, HIST_SERVICE };

/* The object holding the histogram at `at` ("histogram" or "service_histogram"), or NULL. */
static const json_t *hist_holder(const json_t *run, enum hist_at at, const char *phase)
{
    switch (at) {
    case HIST_PHASE:
        return json_object_get(json_object_get(run, "phases"), phase);
    case HIST_SERVICE:
        return json_object_get(run, "open_loop");
    case HIST_RUN:
        break;
    }
    return run;
}

/*
 * {latency_ns, histogram} from the sum of the histograms at `at` of every
 * part; parts without one (a phase they did not measure) are skipped when
 * `optional`. NULL with err set when one cannot be added.
 */
static json_t *merged_hist(struct merge *m, const struct slot *s, enum hist_at at,
                           const char *phase, bool optional, struct hb_err *err)
{
    const char *key = at == HIST_SERVICE ? "service_histogram" : "histogram";

    hist_init(m->h);
    for (size_t i = 0; i < s->nparts; i++) {
        const json_t *o = hist_holder(s->parts[i].run, at, phase);
        if (o == NULL && optional) continue;
        if (evidence_hist_add(m->h, json_object_get(o, key), err) < 0) {
            part_fail(err, m, &s->parts[i]);
            return NULL;
        }
    }
    return json_pack("{s:o, s:o}", "latency_ns", report_latency_json(m->h), "histogram",
                     report_hist_json(m->h));
}

/* Every phase any part measured, its histograms added. */
static int merge_phases(struct merge *m, const struct slot *s, json_t *run, struct hb_err *err)
{
    json_t *out = json_object(), *v;
    const char *name;

    for (size_t i = 0; i < s->nparts; i++) {
        json_t *phases = json_object_get(s->parts[i].run, "phases");
        json_object_foreach(phases, name, v)
        {
            json_t *merged;
            if (json_object_get(out, name) != NULL) continue;
            merged = merged_hist(m, s, HIST_PHASE, name, true, err);
            if (merged == NULL) {
                json_decref(out);
                return -EINVAL;
            }
            json_object_set_new(out, name, merged);
        }
    }
    json_object_set_new(run, "phases", out);
    return 0;
}

/* The run's latency figures and histograms from the sums of its parts'. */
static int merge_hists(struct merge *m, const struct slot *s, json_t *run, struct hb_err *err)
{
    json_t *lat = merged_hist(m, s, HIST_RUN, NULL, false, err);

    if (lat == NULL) return -EINVAL;
    json_object_set(run, "latency_ns", json_object_get(lat, "latency_ns"));
    json_object_set(run, "histogram", json_object_get(lat, "histogram"));
    json_decref(lat);
    return merge_phases(m, s, run, err);
}

/* The open-loop figures of every part, summed or combined into out (a copy of part 0's). */
static int merge_rates(struct merge *m, const struct slot *s, json_t *out, struct hb_err *err)
{
    bool same_share = true, same_arrivals = true, saturated = false;
    double rate = 0, basis = 0;

    for (size_t i = 0; i < s->nparts; i++) {
        const json_t *o = json_object_get(s->parts[i].run, "open_loop");
        const json_t *r = json_object_get(o, "rate"),
                     *b = json_object_get(o, "rate_basis_ops_per_s");
        if (!json_is_number(r)) {
            hb_fail(err, -EINVAL, "\"open_loop\" is missing or has no number \"rate\"");
            return part_fail(err, m, &s->parts[i]);
        }
        rate += json_number_value(r);
        basis += json_is_number(b) ? json_number_value(b) : 0;
        same_share &=
            json_equal(json_object_get(o, "rate_share"), json_object_get(out, "rate_share"));
        same_arrivals &=
            json_equal(json_object_get(o, "arrivals"), json_object_get(out, "arrivals"));
        saturated |= json_is_true(json_object_get(o, "saturated"));
    }
    same_share &= json_is_number(json_object_get(out, "rate_share"));
    json_object_set_new(out, "rate", json_real(rate));
    json_object_set_new(out, "rate_basis_ops_per_s", same_share ? json_real(basis) : json_null());
    if (!same_share) json_object_set_new(out, "rate_share", json_null());
    if (!same_arrivals) json_object_set_new(out, "arrivals", json_null());
    json_object_set_new(out, "saturated", json_boolean(saturated));
    return 0;
}

/*
 * An open-loop run's open_loop: the rates asked for (and their basis) summed,
 * as the ops are; rate_share and arrivals kept when every part agrees, else
 * null; achieved = the merged ops_per_s; saturated if any part was; the
 * service histograms added like the run's. Closed-loop runs keep null.
 */
static int merge_open_loop(struct merge *m, const struct slot *s, json_t *run, struct hb_err *err)
{
    json_t *out = json_object_get(run, "open_loop"), *service;

    if (!json_is_object(out)) return 0;
    if (merge_rates(m, s, out, err) < 0) return -EINVAL;
    json_object_set(out, "achieved_ops_per_s", json_object_get(run, "ops_per_s"));
    service = merged_hist(m, s, HIST_SERVICE, NULL, false, err);
    if (service == NULL) return -EINVAL;
    json_object_set(out, "service_latency_ns", json_object_get(service, "latency_ns"));
    json_object_set(out, "service_histogram", json_object_get(service, "histogram"));
    json_decref(service);
    return 0;
}

/* The output run of slot s, owned by the caller; NULL with err set. */
static json_t *merge_slot(struct merge *m, const struct slot *s, struct hb_err *err)
{
    json_t *run;

    if (s->nparts == 1) return json_incref(s->parts[0].run);
    run = json_deep_copy(s->parts[0].run);
    for (size_t i = 1; i < s->nparts; i++)
        if (add_run(run, s->parts[i].run, err) < 0) {
            part_fail(err, m, &s->parts[i]);
            goto fail;
        }
    derive_rates(run);
    if (merge_hists(m, s, run, err) < 0 || merge_open_loop(m, s, run, err) < 0) goto fail;
    /* server, system and socket figures cannot be added: each file saw the same host */
    json_object_set_new(run, "observed", json_null());
    json_object_set_new(run, "merged_runs", json_integer((json_int_t)s->nparts));
    return run;
fail:
    json_decref(run);
    return NULL;
}

/* The merged runs in slot order; NULL with err set. */
static json_t *merge_runs(struct merge *m, struct hb_err *err)
{
    json_t *runs = json_array();

    for (size_t i = 0; i < m->nslots; i++) {
        json_t *run = merge_slot(m, &m->slots[i], err);
        if (run == NULL) {
            json_decref(runs);
            return NULL;
        }
        json_array_append_new(runs, run);
    }
    return runs;
}

/* argv as typed (argv[0] is the subcommand) and the input files, for the document. */
static void merge_provenance(const struct merge *m, int argc, char **argv, json_t **args,
                             json_t **from)
{
    *args = json_array();
    *from = json_array();
    json_array_append_new(*args, json_string("hopbench"));
    /* json_string is NULL for bytes that are not UTF-8: such an argument is left out */
    for (int i = 0; i < argc; i++)
        json_array_append_new(*args, json_string(argv[i]));
    for (size_t f = 0; f < m->nfiles; f++)
        json_array_append_new(*from, json_string(m->paths[f]));
}

/* The merged document; runs is stolen. */
static json_t *merge_doc(const struct merge *m, int argc, char **argv, json_t *runs)
{
    json_t *first = m->docs[0], *args, *from, *run;
    bool valid = true, interrupted = false;
    size_t i;

    json_array_foreach(runs, i, run) valid &= run_valid(run);
    for (size_t f = 0; f < m->nfiles; f++)
        interrupted |= json_is_true(json_object_get(m->docs[f], "interrupted"));
    merge_provenance(m, argc, argv, &args, &from);
    return json_pack(
        "{s:s, s:{s:s, s:s}, s:s, s:o, s:I, s:o, s:O?, s:O?, s:O?, s:b, s:b, s:o}", "schema",
        REPORT_SCHEMA, "tool", "name", "hopbench", "version", HOPBENCH_VERSION, "command", "merge",
        "argv", args, "started_unix_s", (json_int_t)time(NULL), "merged_from", from, "machine",
        json_object_get(first, "machine"), "placement", json_object_get(first, "placement"),
        "server", json_object_get(first, "server"), "interrupted", interrupted, "valid", valid,
        "runs", runs);
}

/* Returns 0 with m's paths and out set, CLI_HELP after printing the help, or -EINVAL. */
static int merge_args(int argc, char **argv, struct merge *m)
{
    for (int i = 1; i < argc; i++) {
        if (cli_option(&cli_spec_merge, argv[i]) == 'h') {
            fputs(cli_spec_merge.help, stdout);
            return CLI_HELP;
        }
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int c = cli_option(&cli_spec_merge, a);
        if (c == 'o') {
            if (i + 1 >= argc) return usage_fail("merge", "%s needs a file name", a);
            if (m->out != NULL) return usage_fail("merge", "-o given twice");
            m->out = argv[++i];
        } else if (c != 0) {
            return usage_fail("merge", "unknown option '%s'", a);
        } else {
            m->paths[m->nfiles++] = a;
        }
    }
    if (m->nfiles < 2)
        return usage_fail("merge", "want two or more evidence files, got %zu", m->nfiles);
    return 0;
}

static void merge_release(struct merge *m)
{
    for (size_t i = 0; i < m->nslots; i++)
        free(m->slots[i].parts);
    free(m->slots);
    for (size_t f = 0; m->docs != NULL && f < m->nfiles; f++)
        json_decref(m->docs[f]);
    free(m->docs);
    free(m->paths);
    hist_free(m->h);
}

/* Writes doc to m->out, or to stdout. */
static int merge_write(const struct merge *m, json_t *doc, struct hb_err *err)
{
    if (m->out != NULL) {
        if (report_json_write(m->out, doc, err) < 0) return -EIO;
        printf("evidence: %s\n", m->out);
        return 0;
    }
    if (json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_COMPACT) != 0 || fputc('\n', stdout) == EOF ||
        fflush(stdout) != 0)
        return hb_fail(err, -EIO, "cannot write the merged evidence to stdout");
    return 0;
}

/* Loads, groups, merges and writes; 0 or a negative errno with err set. */
static int merge_run(struct merge *m, int argc, char **argv, struct hb_err *err)
{
    json_t *runs, *doc;
    int rc;

    m->docs = xcalloc(m->nfiles, sizeof(json_t *));
    for (size_t f = 0; f < m->nfiles; f++)
        if ((rc = evidence_load(m->paths[f], &m->docs[f], err)) < 0) return rc;
    m->h = hist_new();
    if (m->h == NULL) return hb_fail(err, -ENOMEM, "out of memory");
    if (merge_check(m, err) < 0) return -EINVAL;
    merge_group(m);
    runs = merge_runs(m, err);
    if (runs == NULL) return -EINVAL;
    doc = merge_doc(m, argc, argv, runs);
    if (doc == NULL) return hb_fail(err, -ENOMEM, "cannot build the merged document");
    rc = merge_write(m, doc, err);
    json_decref(doc);
    return rc;
}

int evidence_merge_main(int argc, char **argv)
{
    struct merge m = { 0 };
    struct hb_err err = { 0 };
    int rc;

    m.paths = xcalloc(argc > 0 ? (size_t)argc : 1, sizeof(*m.paths));
    rc = merge_args(argc, argv, &m);
    if (rc == 0 && merge_run(&m, argc, argv, &err) < 0) {
        fprintf(stderr, "hopbench merge: %s\n", err.msg);
        rc = -EIO;
    }
    merge_release(&m);
    if (rc == CLI_HELP || rc == 0) return HB_EXIT_OK;
    return rc == -EIO ? HB_EXIT_RUNTIME : HB_EXIT_USAGE;
}
