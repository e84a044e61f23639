/*
 * evidence: compare and merge evidence files (see evidence.h, docs/evidence.md).
 *
 * Both commands read files with jansson, run by run (evidence_read), and keep
 * only what they need of each run: compare its cell, validity and figures
 * (ops_per_s, latency_ns, client_cpu_ns_per_op); merge the record with its
 * histograms taken out as [index, count] pairs. merge adds the raw counters
 * and histograms and derives every figure again from the sums, so a merged
 * run is what one process would have written for all the load.
 *
 * Every sum is checked for overflow, and figures no run can have (negative or
 * non-finite rates, percentiles out of order) make the file invalid. Runs are
 * grouped into cells by sorting on their key, so both commands take
 * O(runs log runs) time and memory in proportion to the files' runs.
 */
#include "evidence.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

/*
 * The file at path into *buf (NUL-terminated, the caller frees it) and *len.
 * A regular file larger than EVIDENCE_MAX_BYTES is refused before anything is
 * read; anything else (a pipe, a device such as /dev/zero that never ends) is
 * read until it ends or passes the cap, whichever comes first.
 */
static int read_capped(const char *path, char **buf, size_t *len, struct hb_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t cap = 1 << 16;
    struct stat st;
    int e = 0;

    *buf = NULL;
    *len = 0;
    if (fd == -1 || fstat(fd, &st) == -1)
        e = errno;
    else if (S_ISDIR(st.st_mode))
        e = EISDIR;
    else if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > EVIDENCE_MAX_BYTES)
        e = EFBIG;
    else if (S_ISREG(st.st_mode))
        cap = (size_t)st.st_size + 1; /* one more byte sees the end, or a file that grew */
    while (e == 0) {
        char *more = realloc(*buf, cap + 1);
        ssize_t got;
        if (more == NULL) {
            e = ENOMEM;
            break;
        }
        *buf = more;
        got = read(fd, *buf + *len, cap - *len);
        if (got == -1 && errno == EINTR) continue;
        if (got == -1) e = errno;
        if (got <= 0) break;
        *len += (size_t)got;
        if (*len > EVIDENCE_MAX_BYTES) e = EFBIG;
        if (*len == cap) cap = cap > EVIDENCE_MAX_BYTES / 2 ? EVIDENCE_MAX_BYTES + 1 : cap * 2;
    }
    if (fd != -1) close(fd);
    if (e != 0) {
        free(*buf);
        *buf = NULL;
        if (e == EFBIG)
            return hb_fail(err, -EFBIG,
                           "%s: cannot read: larger than %zu MiB, the cap on an "
                           "evidence file",
                           path, (size_t)(EVIDENCE_MAX_BYTES >> 20));
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

/* Where the runs of a file go, one at a time, as they are read. */
struct run_sink {
    const char *path;
    json_t *head; /* the document's fields but its runs (the first header's, for JSONL) */
    size_t nruns;
    const struct evidence_reader *reader;
};

/* Hands run (the record, owned by the reader for the call only) to the reader. */
static int sink_run(struct run_sink *sink, json_t *run, struct hb_err *err)
{
    return sink->reader->run(sink->reader->ctx, sink->nruns++, run, err);
}

/*
 * One line of a JSONL file: a header (the first one gives the document its
 * fields; every one must have our schema) or a run, handed over without its
 * "record" key.
 */
static int jsonl_line(struct run_sink *sink, size_t line, json_t *rec, struct hb_err *err)
{
    const json_t *schema = json_object_get(rec, "schema");

    if (is_record(rec, "run") && sink->head != NULL) {
        json_object_del(rec, "record");
        return sink_run(sink, rec, err);
    }
    if (!is_record(rec, "header"))
        return hb_fail(err, -EINVAL,
                       "%s: line %zu: not hopbench JSONL: not a \"header\" or \"run\" record",
                       sink->path, line);
    if (!json_is_string(schema) || strcmp(json_string_value(schema), REPORT_SCHEMA) != 0)
        return hb_fail(err, -EINVAL,
                       "%s: line %zu: not hopbench evidence: schema \"%.64s\", want \"%s\"",
                       sink->path, line, json_is_string(schema) ? json_string_value(schema) : "",
                       REPORT_SCHEMA);
    if (sink->head != NULL) return 0;
    sink->head = json_incref(rec);
    json_object_del(sink->head, "record");
    return 0;
}

/* A --jsonl file, line by line: only one line's JSON is held at a time. */
static int read_jsonl(struct run_sink *sink, const char *buf, size_t len, struct hb_err *err)
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
            return hb_fail(err, -EINVAL, "%s: line %zu: not JSON: %s (column %d)", sink->path, line,
                           jerr.text, jerr.column);
        rc = jsonl_line(sink, line, rec, err);
        json_decref(rec);
        if (rc < 0) return rc;
    }
    return 0;
}

/* ---- a document, a run at a time ----------------------------------------------------- */

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* Past the JSON string that starts at p (its opening quote); NULL if it does not end. */
static const char *skip_string(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

/*
 * Past the JSON value that starts at p: a string, an object or an array (to
 * its matching bracket) or a scalar (to the next separator); NULL if it does
 * not end. Only its extent is found: jansson checks what is inside.
 */
static const char *skip_value(const char *p, const char *end)
{
    size_t depth = 0;

    if (p >= end) return NULL;
    if (*p == '"') return skip_string(p, end);
    if (*p != '{' && *p != '[') {
        const char *start = p;
        while (p < end && *p != '\0' && strchr(",]} \t\r\n", *p) == NULL)
            p++;
        return p > start ? p : NULL;
    }
    for (; p < end; p++) {
        if (*p == '"') {
            p = skip_string(p, end);
            if (p == NULL) return NULL;
            p--;
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if ((*p == '}' || *p == ']') && --depth == 0) {
            return p + 1;
        }
    }
    return NULL;
}

/* A member of an object's text: its key (quotes included) and its value. */
struct member {
    const char *key, *key_end, *val, *val_end;
};

/* The member "key": value that starts at p into m; false when the text is not one. */
static bool scan_member(const char *p, const char *end, struct member *m)
{
    m->key = p;
    m->key_end = skip_string(p, end);
    if (m->key_end == NULL) return false;
    p = skip_ws(m->key_end, end);
    if (p == end || *p != ':') return false;
    m->val = skip_ws(p + 1, end);
    m->val_end = skip_value(m->val, end);
    return m->val_end != NULL;
}

/*
 * Splits the text of a document {"key": value, ...} into its members but
 * "runs", as the text of an object (*head, the caller frees it), and the
 * extent of its "runs" array. False when the text is not plainly that (a key
 * with an escape, two "runs", "runs" not an array, text after the end):
 * jansson then reads it whole and says what is wrong.
 */
static bool split_document(const char *buf, size_t len, char **head, const char **runs,
                           const char **runs_end)
{
    const char *end = buf + len, *p = skip_ws(buf, end);
    char *h = xmalloc(len + 3);
    size_t hlen = 0;

    *runs = NULL;
    if (p == end || *p != '{') goto no;
    h[hlen++] = '{';
    for (p = skip_ws(p + 1, end); p < end && *p == '"';) {
        struct member m;
        if (!scan_member(p, end, &m) || memchr(m.key, '\\', (size_t)(m.key_end - m.key)) != NULL)
            goto no;
        if (m.key_end - m.key == 6 && memcmp(m.key, "\"runs\"", 6) == 0) {
            if (*runs != NULL || *m.val != '[') goto no;
            *runs = m.val;
            *runs_end = m.val_end;
        } else {
            if (hlen > 1) h[hlen++] = ',';
            memcpy(h + hlen, m.key, (size_t)(m.val_end - m.key));
            hlen += (size_t)(m.val_end - m.key);
        }
        p = skip_ws(m.val_end, end);
        if (p < end && *p == ',')
            p = skip_ws(p + 1, end);
        else
            break;
    }
    if (p == end || *p != '}' || skip_ws(p + 1, end) != end || *runs == NULL) goto no;
    h[hlen++] = '}';
    h[hlen] = '\0';
    *head = h;
    return true;
no:
    free(h);
    return false;
}

/*
 * A --jsonl file: its first line is an object whose "record" is "header".
 * Only that member is parsed: the first line of a compact document is the
 * whole document.
 */
static bool is_jsonl(const char *buf, size_t len)
{
    const char *nl = memchr(buf, '\n', len);
    const char *end = nl != NULL ? nl : buf + len, *p = skip_ws(buf, end);

    if (p == end || *p != '{') return false;
    for (p = skip_ws(p + 1, end); p < end && *p == '"';) {
        struct member m;
        if (!scan_member(p, end, &m)) return false;
        if (m.key_end - m.key == 8 && memcmp(m.key, "\"record\"", 8) == 0) {
            json_t *v = json_loadb(m.val, (size_t)(m.val_end - m.val), JSON_DECODE_ANY, NULL);
            bool yes = json_is_string(v) && strcmp(json_string_value(v), "header") == 0;
            json_decref(v);
            return yes;
        }
        p = skip_ws(m.val_end, end);
        if (p == end || *p != ',') return false;
        p = skip_ws(p + 1, end);
    }
    return false;
}

/* A run jansson refused: err names the file, and the line and column in it. */
static int run_not_json(const struct run_sink *sink, const char *buf, const char *at,
                        const char *why, struct hb_err *err)
{
    size_t line = 1;
    const char *bol = buf;

    for (const char *q = buf; q < at; q++)
        if (*q == '\n') {
            line++;
            bol = q + 1;
        }
    return hb_fail(err, -EINVAL, "%s: not JSON: %s (line %zu, column %zu)", sink->path, why, line,
                   (size_t)(at - bol) + 1);
}

/* The elements of the runs array [p, end), each parsed by itself and handed over. */
static int read_runs_array(struct run_sink *sink, const char *buf, const char *p, const char *end,
                           struct hb_err *err)
{
    p = skip_ws(p + 1, end);
    if (p < end && *p == ']') return 0;
    for (;;) {
        const char *v_end = skip_value(p, end);
        json_error_t jerr;
        json_t *run =
            v_end != NULL ? json_loadb(p, (size_t)(v_end - p), JSON_DECODE_ANY, &jerr) : NULL;
        int rc;
        if (run == NULL)
            return run_not_json(sink, buf, v_end != NULL ? p + jerr.position : p,
                                v_end != NULL ? jerr.text : "a run does not end", err);
        rc = sink_run(sink, run, err);
        json_decref(run);
        if (rc < 0) return rc;
        p = skip_ws(v_end, end);
        if (p < end && *p == ',') {
            p = skip_ws(p + 1, end);
            continue;
        }
        if (p < end && *p == ']') return 0;
        return run_not_json(sink, buf, p, "',' or ']' expected after a run", err);
    }
}

/* The fields of the document but its runs, from their text, checked for our schema. */
static int read_head(struct run_sink *sink, const char *text, struct hb_err *err)
{
    json_t *head = json_loads(text, 0, NULL);
    int rc;

    if (head == NULL) return -EAGAIN;
    json_object_set_new(head, "runs", json_array());
    rc = check_schema(sink->path, head, err);
    json_object_del(head, "runs");
    if (rc < 0) {
        json_decref(head);
        return rc;
    }
    sink->head = head;
    return 0;
}

/*
 * A JSON document. Plainly laid out (as the writer lays it out), its runs
 * are parsed one at a time from its text; else jansson reads it whole, which
 * says what is wrong when it is not JSON, and each run is freed once handed
 * over.
 */
static int read_document(struct run_sink *sink, char *buf, size_t len, struct hb_err *err)
{
    const char *runs_at = NULL, *runs_end = NULL;
    json_error_t jerr;
    json_t *doc, *runs;
    char *head;
    int rc;

    if (split_document(buf, len, &head, &runs_at, &runs_end)) {
        rc = read_head(sink, head, err);
        free(head);
        if (rc == 0) return read_runs_array(sink, buf, runs_at, runs_end, err);
        if (rc != -EAGAIN) return rc;
    }
    doc = json_loadb(buf, len, 0, &jerr);
    if (doc == NULL)
        return hb_fail(err, -EINVAL, "%s: not JSON: %s (line %d, column %d)", sink->path, jerr.text,
                       jerr.line, jerr.column);
    rc = check_schema(sink->path, doc, err);
    if (rc < 0) {
        json_decref(doc);
        return rc;
    }
    runs = json_incref(json_object_get(doc, "runs"));
    json_object_del(doc, "runs");
    sink->head = doc;
    for (size_t i = 0; i < json_array_size(runs) && rc == 0; i++) {
        rc = sink_run(sink, json_array_get(runs, i), err);
        json_array_set_new(runs, i, json_null());
    }
    json_decref(runs);
    return rc;
}

int evidence_read(const char *path, const struct evidence_reader *reader, json_t **head,
                  struct hb_err *err)
{
    struct run_sink sink = { .path = path, .reader = reader };
    size_t len;
    char *buf;
    int rc;

    *head = NULL;
    rc = read_capped(path, &buf, &len, err);
    if (rc < 0 || buf == NULL) return rc < 0 ? rc : -EIO;
    if (is_jsonl(buf, len))
        rc = read_jsonl(&sink, buf, len, err);
    else
        rc = read_document(&sink, buf, len, err);
    free(buf);
    if (rc < 0) {
        json_decref(sink.head);
        return rc;
    }
    *head = sink.head;
    return 0;
}

/* evidence_load's reader: every run appended to the array ctx. */
static int load_append(void *ctx, size_t idx, json_t *run, struct hb_err *err)
{
    UNUSED(idx);
    UNUSED(err);
    return json_array_append(ctx, run) == 0 ? 0 : -ENOMEM;
}

int evidence_load(const char *path, json_t **doc, struct hb_err *err)
{
    json_t *runs = json_array();
    struct evidence_reader reader = { .run = load_append, .ctx = runs };
    int rc = evidence_read(path, &reader, doc, err);

    if (rc == 0) json_object_set(*doc, "runs", runs);
    json_decref(runs);
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

/*
 * A histogram as a file holds it, in about the room its text took: the
 * [index, count] pairs in the file's order and the figures beside them.
 */
struct hist_pair {
    uint32_t idx;
    uint64_t count;
};

struct hist_pairs {
    uint64_t total, min, max, overflow; /* min as written: 0 when empty */
    struct hist_pair *pairs;
    size_t n;
};

static void hist_pairs_release(struct hist_pairs *p)
{
    free(p->pairs);
    *p = (struct hist_pairs){ 0 };
}

/*
 * The [index, count] pairs of counts into p->pairs. Each index must be in
 * range, the counts must add up to total without wrapping past INT64_MAX, and
 * min and max must fall in the first and last counters that hold a value, as
 * they do when one histogram recorded them all.
 */
static int hist_pairs_counts(struct hist_pairs *p, const json_t *counts, struct hb_err *err)
{
    const json_t *pair;
    size_t i, lo = HIST_COUNTS, hi = 0;
    json_int_t sum = 0;

    if (!json_is_array(counts)) return hb_fail(err, -EINVAL, "histogram has no \"counts\" array");
    p->pairs = xcalloc(json_array_size(counts) ? json_array_size(counts) : 1, sizeof(*p->pairs));
    json_array_foreach(counts, i, pair)
    {
        const json_t *ix = json_array_get(pair, 0), *n = json_array_get(pair, 1);
        if (json_array_size(pair) != 2 || !json_is_integer(ix) || !json_is_integer(n) ||
            json_integer_value(n) < 0)
            return hb_fail(err, -EINVAL, "histogram counts[%zu] is not an [index, count] pair", i);
        if (json_integer_value(ix) < 0 || (uint64_t)json_integer_value(ix) >= HIST_COUNTS)
            return hb_fail(err, -EINVAL, "histogram counts[%zu]: index %lld is outside 0..%zu", i,
                           (long long)json_integer_value(ix), (size_t)HIST_COUNTS - 1);
        if (__builtin_add_overflow(sum, json_integer_value(n), &sum))
            return hb_fail(err, -EINVAL, "histogram counts overflow when added up (counts[%zu])",
                           i);
        p->pairs[p->n++] = (struct hist_pair){ .idx = (uint32_t)json_integer_value(ix),
                                               .count = (uint64_t)json_integer_value(n) };
        if (json_integer_value(n) > 0 && (size_t)json_integer_value(ix) < lo)
            lo = (size_t)json_integer_value(ix);
        if (json_integer_value(n) > 0 && (size_t)json_integer_value(ix) > hi)
            hi = (size_t)json_integer_value(ix);
    }
    if ((uint64_t)sum != p->total)
        return hb_fail(err, -EINVAL, "histogram counts add up to %lld, its total is %llu",
                       (long long)sum, (unsigned long long)p->total);
    if (sum > 0 && (hist_index(p->min) != lo || hist_index(p->max) != hi))
        return hb_fail(err, -EINVAL,
                       "histogram min %llu or max %llu is not in its first or last counter",
                       (unsigned long long)p->min, (unsigned long long)p->max);
    return 0;
}

/* Decodes the histogram JSON j into p (released by the caller, also on failure). */
static int hist_pairs_decode(struct hist_pairs *p, const json_t *j, struct hb_err *err)
{
    *p = (struct hist_pairs){ 0 };
    if (hist_layout_ok(j, err) < 0) return -EINVAL;
    if (get_u64(j, "total", &p->total) < 0 || get_u64(j, "min", &p->min) < 0 ||
        get_u64(j, "max", &p->max) < 0 || get_u64(j, "overflow", &p->overflow) < 0)
        return hb_fail(err, -EINVAL, "histogram lacks total, min, max or overflow");
    if (p->max > HIST_MAX_NS || p->overflow > p->total || (p->total > 0 && p->min > p->max))
        return hb_fail(err, -EINVAL, "histogram min, max or overflow out of range");
    return hist_pairs_counts(p, json_object_get(j, "counts"), err);
}

/* Adds p into dst; the total must stay within INT64_MAX, as a file can hold it. */
static int hist_pairs_add(struct hist *dst, const struct hist_pairs *p, struct hb_err *err)
{
    uint64_t total;

    if (__builtin_add_overflow(dst->total, p->total, &total) || total > (uint64_t)INT64_MAX)
        return hb_fail(err, -EINVAL, "histogram totals overflow when added (%llu + %llu)",
                       (unsigned long long)dst->total, (unsigned long long)p->total);
    /* every counter is at most the total, which fits: no counter can wrap */
    for (size_t i = 0; i < p->n; i++)
        dst->counts[p->pairs[i].idx] += p->pairs[i].count;
    dst->total = total;
    dst->overflow += p->overflow;
    /* an empty histogram is written with min 0: it must not lower dst's min */
    if (p->total > 0 && p->min < dst->min) dst->min = p->min;
    if (p->total > 0 && p->max > dst->max) dst->max = p->max;
    return 0;
}

/* p as the writer puts a histogram (report_hist_json), its pairs in their order. */
static json_t *hist_pairs_json(const struct hist_pairs *p)
{
    json_t *counts = json_array();

    for (size_t i = 0; i < p->n; i++)
        json_array_append_new(
            counts, json_pack("[II]", (json_int_t)p->pairs[i].idx, (json_int_t)p->pairs[i].count));
    return json_pack("{s:s, s:I, s:I, s:i, s:I, s:I, s:I, s:I, s:o}", "unit", "ns", "lowest",
                     (json_int_t)1, "highest", (json_int_t)HIST_MAX_NS, "significant_digits", 3,
                     "total", (json_int_t)p->total, "min", (json_int_t)p->min, "max",
                     (json_int_t)p->max, "overflow", (json_int_t)p->overflow, "counts", counts);
}

int evidence_hist_add(struct hist *dst, const json_t *j, struct hb_err *err)
{
    struct hist_pairs p;
    int rc = hist_pairs_decode(&p, j, err);

    if (rc == 0) rc = hist_pairs_add(dst, &p, err);
    hist_pairs_release(&p);
    return rc;
}

/* ---- run keys ------------------------------------------------------------------------- */

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

/* "1e+30", or what j is when it is not a number. */
static void figure_text(char *buf, size_t cap, const json_t *j)
{
    if (json_is_number(j))
        snprintf(buf, cap, "%.10g", json_number_value(j));
    else
        snprintf(buf, cap, "%s", json_kind(j));
}

/* o[key], when present, is a rate or a cost: a finite number, not negative. */
static int check_rate(const json_t *o, const char *what, const char *key, struct hb_err *err)
{
    const json_t *v = json_object_get(o, key);
    char text[64];

    if (v == NULL) return 0;
    if (json_is_number(v) && isfinite(json_number_value(v)) && json_number_value(v) >= 0) return 0;
    figure_text(text, sizeof(text), v);
    return hb_fail(err, -EINVAL, "%s%s is %s, not a number >= 0", what, key, text);
}

/*
 * The figures of a latency object (what is its path and a dot), when present,
 * are numbers >= 0 that run from min up through the percentiles to max.
 */
static int check_latency(const json_t *lat, const char *what, struct hb_err *err)
{
    static const char *const order[] = {
        "min", "p50", "p90", "p95", "p99", "p999", "p9999", "max"
    };
    const char *prev = NULL;
    double prev_v = 0;

    if (lat == NULL || json_is_null(lat)) return 0;
    if (!json_is_object(lat)) return hb_fail(err, -EINVAL, "%s is not an object", what);
    if (check_rate(lat, what, "mean", err) < 0) return -EINVAL;
    for (size_t i = 0; i < ARRAY_LEN(order); i++) {
        const json_t *v = json_object_get(lat, order[i]);
        if (v == NULL) continue;
        if (check_rate(lat, what, order[i], err) < 0) return -EINVAL;
        if (prev != NULL && json_number_value(v) < prev_v)
            return hb_fail(err, -EINVAL, "%s%s is %.10g, below %s%s %.10g: out of order", what,
                           order[i], json_number_value(v), what, prev, prev_v);
        prev = order[i];
        prev_v = json_number_value(v);
    }
    return 0;
}

/*
 * A run's figures are possible ones: ops/s and CPU per op finite and not
 * negative, each latency object (the run's, the open loop's service time, each
 * phase's) in order from min to max.
 */
static int check_figures(const json_t *run, struct hb_err *err)
{
    const json_t *open = json_object_get(run, "open_loop");
    json_t *phases = json_object_get(run, "phases"), *p;
    const char *name;
    char what[96];

    if (check_rate(run, "", "ops_per_s", err) < 0 ||
        check_rate(run, "", "client_cpu_ns_per_op", err) < 0 ||
        check_latency(json_object_get(run, "latency_ns"), "latency_ns.", err) < 0)
        return -EINVAL;
    if (json_is_object(open) && (check_rate(open, "open_loop.", "achieved_ops_per_s", err) < 0 ||
                                 check_latency(json_object_get(open, "service_latency_ns"),
                                               "open_loop.service_latency_ns.", err) < 0))
        return -EINVAL;
    json_object_foreach(phases, name, p)
    {
        snprintf(what, sizeof(what), "phases.%.32s.latency_ns.", name);
        if (check_latency(json_object_get(p, "latency_ns"), what, err) < 0) return -EINVAL;
    }
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

/* What compare keeps of a run: its cell, whether it counts, its figures. */
struct cmp_run {
    struct run_key key; /* its strings owned */
    size_t seq;         /* the order read, over both files */
    int side;           /* 0: OLD, 1: NEW */
    bool counts;        /* valid and not cut short */
    double v[ARRAY_LEN(metrics)];
};

/* A cell: a run of equal keys in the sorted runs, OLD's first, each side in the order read. */
struct cmp_cell {
    const struct run_key *key;
    const struct cmp_run *runs;
    size_t n[2];   /* the runs that count, in OLD [0] and NEW [1] */
    size_t all[2]; /* runs of the cell, valid or not */
    size_t first;  /* seq of its first run: cells are listed in the order first seen */
};

struct cmp {
    const char *path[2];
    int side; /* the file being read */
    struct cmp_run *runs;
    size_t nruns, cap;
    struct cmp_cell *cells;
    size_t ncells;
};

/* A valid run must carry every figure compare reads. */
static int cmp_check_run(const json_t *run, struct hb_err *err)
{
    double v;

    for (size_t m = 0; m < ARRAY_LEN(metrics); m++)
        if (!metric_value(run, &metrics[m], &v))
            return hb_fail(err, -EINVAL, "has no number %s%s%s",
                           metrics[m].obj ? metrics[m].obj : "", metrics[m].obj ? "." : "",
                           metrics[m].key);
    return 0;
}

/* k with its strings copied into memory of its own; -ENOMEM. */
static int key_own(struct run_key *k)
{
    k->endpoint = strdup(k->endpoint);
    k->mode = strdup(k->mode);
    k->proto = strdup(k->proto);
    return k->endpoint && k->mode && k->proto ? 0 : -ENOMEM;
}

static void key_release(struct run_key *k)
{
    free((void *)(uintptr_t)k->endpoint);
    free((void *)(uintptr_t)k->mode);
    free((void *)(uintptr_t)k->proto);
}

/* The next free cmp_run, the array grown when full. */
static struct cmp_run *cmp_next(struct cmp *c)
{
    if (c->nruns == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        struct cmp_run *more = realloc(c->runs, cap * sizeof(*more));
        if (more == NULL) return NULL;
        c->runs = more;
        c->cap = cap;
    }
    return &c->runs[c->nruns];
}

/* Prefixes err's message with the file and the run; returns -EINVAL. */
static int cmp_fail(const struct cmp *c, size_t idx, const char *sep, struct hb_err *err)
{
    char msg[sizeof(err->msg)];

    memcpy(msg, err->msg, sizeof(msg));
    return hb_fail(err, -EINVAL, "%s: not valid evidence: run %zu%s%s", c->path[c->side], idx, sep,
                   msg);
}

/* The reader of compare: keeps the key, validity and figures of each run of side c->side. */
static int cmp_take(void *ctx, size_t idx, json_t *run, struct hb_err *err)
{
    struct cmp *c = ctx;
    struct cmp_run r = { .seq = c->nruns, .side = c->side, .counts = run_counts(run) }, *slot;

    if (check_record(run, err) < 0) return cmp_fail(c, idx, " is ", err);
    if (run_placeholder(run)) return 0;
    if (!run_key_of(run, &r.key)) {
        hb_fail(err, -EINVAL, "lacks endpoint, mode, size, connections or pipeline");
        return cmp_fail(c, idx, " ", err);
    }
    if (r.counts && cmp_check_run(run, err) < 0) return cmp_fail(c, idx, " ", err);
    if (check_figures(run, err) < 0) return cmp_fail(c, idx, ": ", err);
    for (size_t m = 0; r.counts && m < ARRAY_LEN(metrics); m++)
        metric_value(run, &metrics[m], &r.v[m]);
    slot = cmp_next(c);
    if (slot == NULL || key_own(&r.key) < 0) {
        if (slot != NULL) key_release(&r.key);
        return hb_fail(err, -ENOMEM, "%s: out of memory", c->path[c->side]);
    }
    *slot = r;
    c->nruns++;
    return 0;
}

static int key_order(const struct run_key *a, const struct run_key *b)
{
    int d = strcmp(a->endpoint, b->endpoint);

    if (d == 0) d = strcmp(a->mode, b->mode);
    if (d == 0) d = strcmp(a->proto, b->proto);
    if (d == 0) d = (a->rate > b->rate) - (a->rate < b->rate);
    if (d == 0) d = (a->size > b->size) - (a->size < b->size);
    if (d == 0) d = (a->connections > b->connections) - (a->connections < b->connections);
    if (d == 0) d = (a->pipeline > b->pipeline) - (a->pipeline < b->pipeline);
    return d;
}

/* By cell, then OLD before NEW, then in the order read. */
static int run_order(const void *pa, const void *pb)
{
    const struct cmp_run *a = pa, *b = pb;
    int d = key_order(&a->key, &b->key);

    if (d == 0) d = a->side - b->side;
    if (d == 0) d = (a->seq > b->seq) - (a->seq < b->seq);
    return d;
}

static int cell_order(const void *pa, const void *pb)
{
    const struct cmp_cell *a = pa, *b = pb;

    return (a->first > b->first) - (a->first < b->first);
}

/* Sorts the runs into cells, one pass after a sort, and lists the cells in the order first seen. */
static void cmp_group(struct cmp *c)
{
    qsort(c->runs, c->nruns, sizeof(*c->runs), run_order);
    c->cells = xcalloc(c->nruns ? c->nruns : 1, sizeof(*c->cells));
    for (size_t i = 0; i < c->nruns; i++) {
        const struct cmp_run *r = &c->runs[i];
        struct cmp_cell *cell = &c->cells[c->ncells - (c->ncells > 0)];
        if (c->ncells == 0 || !same_cell(cell->key, &r->key)) {
            cell = &c->cells[c->ncells++];
            *cell = (struct cmp_cell){ .key = &r->key, .runs = r, .first = r->seq };
        }
        if (r->seq < cell->first) cell->first = r->seq;
        cell->all[r->side]++;
        cell->n[r->side] += r->counts;
    }
    qsort(c->cells, c->ncells, sizeof(*c->cells), cell_order);
}

static void cmp_release(struct cmp *c)
{
    for (size_t i = 0; i < c->nruns; i++)
        key_release(&c->runs[i].key);
    free(c->runs);
    free(c->cells);
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
 * rate=2000/s"; no endpoint when it is "". */
static void cell_label(char *buf, size_t cap, const struct run_key *k)
{
    char size[32], rate[48] = "", raw[512];

    size_text(size, sizeof(size), k->size);
    if (k->rate < 0)
        snprintf(rate, sizeof(rate), " rate=%.4g%%", -k->rate * 100);
    else if (k->rate > 0)
        snprintf(rate, sizeof(rate), " rate=%.6g/s", k->rate);
    snprintf(raw, sizeof(raw), "%s%s%s%s%s %s c=%lld p=%lld%s", k->proto, k->proto[0] ? " " : "",
             k->endpoint, k->endpoint[0] ? " " : "", k->mode, size, (long long)k->connections,
             (long long)k->pipeline, rate);
    /* the strings come from a file: escaped, they cannot act on the terminal */
    text_safe(buf, cap, raw);
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

/* The values of metric m over the runs that count of side s of cell; returns how many. */
static size_t cell_values(const struct cmp_cell *cell, int s, size_t m, double *out)
{
    size_t n = 0;

    for (size_t i = 0; i < cell->all[0] + cell->all[1]; i++)
        if (cell->runs[i].side == s && cell->runs[i].counts) out[n++] = cell->runs[i].v[m];
    return n;
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
static void cmp_row(FILE *f, const struct cmp_cell *cell, size_t m, int width, double *a, double *b)
{
    char label[TEXT_SAFE_CAP], old[64], new[64], delta[96];
    size_t na = cell_values(cell, 0, m, a), nb = cell_values(cell, 1, m, b);

    cell_label(label, sizeof(label), cell->key);
    side_text(old, sizeof(old), &metrics[m], a, na);
    side_text(new, sizeof(new), &metrics[m], b, nb);
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
    char label[TEXT_SAFE_CAP];

    for (size_t m = 0; m < ARRAY_LEN(metrics); m++)
        if (display_width(metrics[m].label) > width) width = display_width(metrics[m].label);
    for (size_t i = 0; i < c->ncells; i++) {
        cell_label(label, sizeof(label), c->cells[i].key);
        if (display_width(label) > width) width = display_width(label);
    }
    return width;
}

static void cmp_metric(FILE *f, const struct cmp *c, size_t m, int width, double *a, double *b)
{
    fputc('\n', f);
    put_padded(f, metrics[m].label, width);
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
    char path[TEXT_SAFE_CAP];

    fprintf(f, "%s: %s (%zu runs, %zu valid)\n", s == 0 ? "old" : "new",
            text_safe(path, sizeof(path), c->path[s]), runs, valid);
}

static void cmp_unmatched(FILE *f, const struct cmp *c)
{
    char label[TEXT_SAFE_CAP];
    bool any = false;

    for (size_t i = 0; i < c->ncells; i++) {
        const struct cmp_cell *cell = &c->cells[i];
        if (cell->all[0] > 0 && cell->all[1] > 0) continue;
        if (!any) fputc('\n', f);
        any = true;
        cell_label(label, sizeof(label), cell->key);
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
    /* room for the runs of the largest cell */
    double *a = xcalloc(c->nruns ? c->nruns : 1, sizeof(*a));
    double *b = xcalloc(c->nruns ? c->nruns : 1, sizeof(*b));
    int width = cmp_label_width(c);

    cmp_side_header(f, c, 0);
    cmp_side_header(f, c, 1);
    fprintf(f, "cell: proto endpoint mode size c=connections p=pipeline [open-loop rate=share of "
               "the maximum or ops/s]; median ±spread (n valid runs); delta: ratio of medians "
               "new/old, 95 %% interval, Mann-Whitney p\n");
    for (size_t m = 0; m < ARRAY_LEN(metrics) && cmp_matched(c) > 0; m++)
        cmp_metric(f, c, m, width, a, b);
    cmp_unmatched(f, c);
    free(a);
    free(b);
}

/* One line on stderr about a bad command line; returns -EINVAL. */
__attribute__((format(printf, 2, 3))) static int usage_fail(const char *cmd, const char *fmt, ...)
{
    char msg[256], shown[TEXT_SAFE_CAP];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "hopbench %s: %s (see hopbench %s --help)\n", cmd,
            text_safe(shown, sizeof(shown), msg), cmd);
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
        if (cli_option(&cli_spec_compare, argv[i]) != 0) {
            usage_fail("compare", "unknown option '%s'", argv[i]);
            return -EINVAL;
        }
        if (n < 2) path[n] = argv[i];
        n++;
    }
    if (n == 2) return 0;
    usage_fail("compare", "want OLD.json NEW.json, got %d file(s)", n);
    return -EINVAL;
}

int evidence_compare_main(int argc, char **argv)
{
    struct cmp c = { 0 };
    struct hb_err err = { 0 };
    int rc = compare_args(argc, argv, c.path);

    if (rc == CLI_HELP) return HB_EXIT_OK;
    if (rc != 0) return HB_EXIT_USAGE;
    rc = HB_EXIT_OK;
    for (c.side = 0; c.side < 2 && rc == HB_EXIT_OK; c.side++) {
        struct evidence_reader reader = { .run = cmp_take, .ctx = &c };
        json_t *head;
        if (evidence_read(c.path[c.side], &reader, &head, &err) < 0) rc = HB_EXIT_RUNTIME;
        json_decref(head);
    }
    if (rc == HB_EXIT_OK) {
        cmp_group(&c);
        cmp_print(stdout, &c);
        fflush(stdout);
        if (cmp_comparable(&c) == 0) {
            fprintf(stderr, "hopbench compare: nothing comparable: %s\n",
                    cmp_matched(&c) == 0 ? "no cell is in both files"
                                         : "no cell has a valid run in both files");
            rc = HB_EXIT_INVALID;
        }
    } else {
        char msg[TEXT_SAFE_CAP];
        fprintf(stderr, "hopbench compare: %s\n", text_safe(msg, sizeof(msg), err.msg));
    }
    cmp_release(&c);
    return rc;
}

/* ---- merge ---------------------------------------------------------------------------- */

/* A phase's histogram, by the phase's name (a key of the run's "phases"). */
struct phase_hist {
    const char *name;
    struct hist_pairs h;
};

/*
 * One run of one input file, as merge keeps it: the record with its
 * histograms taken out and held as pairs, which take about the room of their
 * text where jansson's tree of them took some twenty times more.
 */
struct part {
    json_t *run;
    bool hists; /* false for the writer's placeholder: nothing was taken out */
    struct hist_pairs hist, service;
    bool has_service;
    struct phase_hist *phases;
    size_t nphases;
    size_t file, idx;
    size_t seq; /* the order read, over every file */
};

/* The runs that become one output run: at most one per file. */
struct slot {
    struct run_key key;
    bool keyed;          /* false: a record that names no cell and rep, copied as it is */
    struct part **parts; /* room for one per file */
    size_t nparts;
};

struct merge {
    const char **paths;
    size_t nfiles;
    const char *out; /* -o, or NULL for stdout */
    json_t **heads;  /* each file's fields but its runs */
    struct part *parts;
    size_t nparts, cap;
    size_t file; /* the file being read */
    struct slot *slots;
    size_t nslots;
    struct hist *h; /* scratch for adding histograms */
    json_t *doc;    /* the output document but its runs */
};

/* Prefixes err's message with the file and run it is about; returns -EINVAL. */
static int part_fail(struct hb_err *err, const struct merge *m, const struct part *p)
{
    char msg[sizeof(err->msg)];

    memcpy(msg, err->msg, sizeof(msg));
    return hb_fail(err, -EINVAL, "%s: run %zu: %s", m->paths[p->file], p->idx, msg);
}

static void part_release(struct part *p)
{
    hist_pairs_release(&p->hist);
    hist_pairs_release(&p->service);
    for (size_t i = 0; i < p->nphases; i++)
        hist_pairs_release(&p->phases[i].h);
    free(p->phases);
    json_decref(p->run);
}

/*
 * The histogram holder[key] decoded into h and taken out of holder; with
 * `total` not UINT64_MAX, it must hold exactly that many values (a run's
 * ops). `what` names it in err: the run's own "histogram" goes unnamed (its
 * messages say "histogram" already).
 */
static int take_hist(struct hist_pairs *h, json_t *holder, const char *key, const char *what,
                     uint64_t total, struct hb_err *err)
{
    if (hist_pairs_decode(h, json_object_get(holder, key), err) < 0) {
        char msg[sizeof(err->msg)];
        memcpy(msg, err->msg, sizeof(msg));
        return strcmp(what, "histogram") != 0 ? hb_fail(err, -EINVAL, "%s: %s", what, msg)
                                              : -EINVAL;
    }
    if (total != UINT64_MAX && h->total != total)
        return hb_fail(err, -EINVAL, "%s.total is %llu, but ops is %llu", what,
                       (unsigned long long)h->total, (unsigned long long)total);
    json_object_del(holder, key);
    return 0;
}

/* Each measured phase's histogram, taken out (a phase holds any number of values). */
static int take_phases(struct part *p, json_t *phases, struct hb_err *err)
{
    const char *name;
    json_t *ph;
    char what[96];

    if (phases == NULL) return 0;
    if (!json_is_object(phases)) return hb_fail(err, -EINVAL, "\"phases\" is not an object");
    p->phases =
        xcalloc(json_object_size(phases) ? json_object_size(phases) : 1, sizeof(*p->phases));
    json_object_foreach(phases, name, ph)
    {
        struct phase_hist *dst = &p->phases[p->nphases++];
        dst->name = name;
        snprintf(what, sizeof(what), "phases.%.64s.histogram", name);
        if (take_hist(&dst->h, ph, "histogram", what, UINT64_MAX, err) < 0) return -EINVAL;
    }
    return 0;
}

/*
 * A run record merge can copy or add, its histograms taken out into p: an
 * object naming its cell and rep, with possible figures, ops and a histogram
 * of exactly ops values (the writer records each op in both, so errors and
 * the warm-up leave them equal), the same for an open loop's service
 * histogram, and phase histograms that decode. The writer's placeholder for
 * a run it could not encode passes, and is copied.
 */
static int take_run(struct part *p, json_t *run, struct hb_err *err)
{
    json_t *open = json_object_get(run, "open_loop");
    struct run_key k;
    uint64_t ops;

    if (check_record(run, err) < 0) return -EINVAL;
    if (run_placeholder(run)) return 0;
    p->hists = true;
    if (!run_key_of(run, &k) || k.rep < 0)
        return hb_fail(
            err, -EINVAL,
            "lacks endpoint, mode, size, connections, pipeline or rep: not a run record");
    if (get_u64(run, "ops", &ops) < 0 || ops > (uint64_t)INT64_MAX)
        return hb_fail(err, -EINVAL, "\"ops\" is missing or not a count");
    if (check_figures(run, err) < 0) return -EINVAL;
    if (take_hist(&p->hist, run, "histogram", "histogram", ops, err) < 0) return -EINVAL;
    if (open != NULL && !json_is_null(open)) {
        if (!json_is_object(open))
            return hb_fail(err, -EINVAL, "\"open_loop\" is neither an object nor null");
        p->has_service = true;
        if (take_hist(&p->service, open, "service_histogram", "open_loop.service_histogram", ops,
                      err) < 0)
            return -EINVAL;
    }
    return take_phases(p, json_object_get(run, "phases"), err);
}

/* The reader of merge: every record checked and kept, its histograms as pairs. */
static int merge_take(void *ctx, size_t idx, json_t *run, struct hb_err *err)
{
    struct merge *m = ctx;
    struct part p = { .run = json_incref(run), .file = m->file, .idx = idx, .seq = m->nparts };

    if (take_run(&p, run, err) < 0) {
        part_fail(err, m, &p);
        part_release(&p);
        return -EINVAL;
    }
    if (m->nparts == m->cap) {
        struct part *more = realloc(m->parts, (m->cap ? 2 * m->cap : 64) * sizeof(*more));
        if (more == NULL) {
            part_release(&p);
            return hb_fail(err, -ENOMEM, "%s: out of memory", m->paths[m->file]);
        }
        m->parts = more;
        m->cap = m->cap ? 2 * m->cap : 64;
    }
    m->parts[m->nparts++] = p;
    return 0;
}

/* The key merge matches runs by; false for a record that names no cell and rep. */
static bool part_key(const struct part *p, struct run_key *k)
{
    return p->hists && run_key_of(p->run, k) && k->rep >= 0;
}

static int slot_key_order(const struct run_key *a, const struct run_key *b)
{
    struct run_key ca = *a, cb = *b;

    /* merge adds connections: they are no part of the key, but the rep is */
    ca.connections = cb.connections = 0;
    int d = key_order(&ca, &cb);
    if (d == 0) d = (a->rep > b->rep) - (a->rep < b->rep);
    return d;
}

/* Keyed runs by key, then in the order read; records without a key after them, as read. */
static int part_order(const void *pa, const void *pb)
{
    const struct part *a = *(const struct part *const *)pa, *b = *(const struct part *const *)pb;
    struct run_key ka, kb;
    bool keyed_a = part_key(a, &ka), keyed_b = part_key(b, &kb);
    int d = keyed_b - keyed_a;

    if (d == 0 && keyed_a) d = slot_key_order(&ka, &kb);
    if (d == 0) d = (a->seq > b->seq) - (a->seq < b->seq);
    return d;
}

static int slot_order(const void *pa, const void *pb)
{
    const struct slot *a = pa, *b = pb;

    return (a->parts[0]->seq > b->parts[0]->seq) - (a->parts[0]->seq < b->parts[0]->seq);
}

/*
 * Groups the parts into slots, in one pass over them sorted by key: within
 * a key, the n-th run of each file goes to the key's n-th slot (so two runs
 * with one key in one file stay apart, each paired with the next one of the
 * other files). Slots are listed in the order their first run was read.
 */
static void merge_group(struct merge *m)
{
    struct part **by_key = xcalloc(m->nparts ? m->nparts : 1, sizeof(struct part *));
    size_t group = 0; /* the first slot of the current key */

    for (size_t i = 0; i < m->nparts; i++)
        by_key[i] = &m->parts[i];
    qsort(by_key, m->nparts, sizeof(struct part *), part_order);
    m->slots = xcalloc(m->nparts ? m->nparts : 1, sizeof(*m->slots));
    for (size_t i = 0, nth = 0; i < m->nparts; i++) {
        struct part *p = by_key[i];
        struct run_key k = { 0 };
        bool keyed = part_key(p, &k);
        struct slot *s;
        if (!keyed || m->nslots == 0 || !m->slots[group].keyed ||
            slot_key_order(&m->slots[group].key, &k) != 0) {
            group = m->nslots;
            nth = 0;
        } else if (p->file != by_key[i - 1]->file) {
            nth = 0;
        }
        if (group + nth == m->nslots) {
            s = &m->slots[m->nslots++];
            *s = (struct slot){ .key = k, .keyed = keyed };
            s->parts = xcalloc(m->nfiles, sizeof(struct part *));
        }
        s = &m->slots[group + nth++];
        s->parts[s->nparts++] = p;
    }
    free(by_key);
    qsort(m->slots, m->nslots, sizeof(*m->slots), slot_order);
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

    /* Counters that evidence written before the protocol codecs existed does not have. */
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

/* The histogram at `at` of part p, or NULL when it has none there. */
static const struct hist_pairs *part_hist(const struct part *p, enum hist_at at, const char *phase)
{
    switch (at) {
    case HIST_PHASE:
        for (size_t i = 0; i < p->nphases; i++)
            if (strcmp(p->phases[i].name, phase) == 0) return &p->phases[i].h;
        return NULL;
    case HIST_SERVICE:
        return p->has_service ? &p->service : NULL;
    case HIST_RUN:
        break;
    }
    return &p->hist;
}

/*
 * {latency_ns, histogram} from the sum of the histograms at `at` of every
 * part; parts without one (a phase they did not measure) are skipped when
 * `optional`. NULL with err set when one cannot be added.
 */
static json_t *merged_hist(struct merge *m, const struct slot *s, enum hist_at at,
                           const char *phase, bool optional, struct hb_err *err)
{
    hist_init(m->h);
    for (size_t i = 0; i < s->nparts; i++) {
        const struct hist_pairs *h = part_hist(s->parts[i], at, phase);
        if (h == NULL && optional) continue;
        if (h == NULL) hb_fail(err, -EINVAL, "no histogram object");
        if (h == NULL || hist_pairs_add(m->h, h, err) < 0) {
            part_fail(err, m, s->parts[i]);
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
        json_t *phases = json_object_get(s->parts[i]->run, "phases");
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
        const json_t *o = json_object_get(s->parts[i]->run, "open_loop");
        const json_t *r = json_object_get(o, "rate"),
                     *b = json_object_get(o, "rate_basis_ops_per_s");
        if (!json_is_number(r)) {
            hb_fail(err, -EINVAL, "\"open_loop\" is missing or has no number \"rate\"");
            return part_fail(err, m, s->parts[i]);
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

/* A run without a counterpart, as it was read: its histograms put back. */
static json_t *part_restore(const struct part *p)
{
    json_t *run, *phases;

    if (!p->hists) return json_incref(p->run);
    run = json_deep_copy(p->run);
    phases = json_object_get(run, "phases");
    json_object_set_new(run, "histogram", hist_pairs_json(&p->hist));
    if (p->has_service)
        json_object_set_new(json_object_get(run, "open_loop"), "service_histogram",
                            hist_pairs_json(&p->service));
    for (size_t i = 0; i < p->nphases; i++)
        json_object_set_new(json_object_get(phases, p->phases[i].name), "histogram",
                            hist_pairs_json(&p->phases[i].h));
    return run;
}

/* The output run of slot s, owned by the caller; NULL with err set. */
static json_t *merge_slot(struct merge *m, const struct slot *s, struct hb_err *err)
{
    json_t *run;

    if (s->nparts == 1) return part_restore(s->parts[0]);
    run = json_deep_copy(s->parts[0]->run);
    for (size_t i = 1; i < s->nparts; i++)
        if (add_run(run, s->parts[i]->run, err) < 0) {
            part_fail(err, m, s->parts[i]);
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

/*
 * Every slot merges: each output run is built and dropped, so that a failure
 * is found before anything is written (stdout cannot be taken back).
 */
static int merge_dry_run(struct merge *m, struct hb_err *err)
{
    for (size_t i = 0; i < m->nslots; i++) {
        json_t *run = merge_slot(m, &m->slots[i], err);
        if (run == NULL) return -EINVAL;
        json_decref(run);
    }
    return 0;
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

/* The merged document but its runs: every output run is valid when every part is. */
static json_t *merge_doc(const struct merge *m, int argc, char **argv)
{
    json_t *first = m->heads[0], *args, *from;
    bool valid = true, interrupted = false;

    for (size_t i = 0; i < m->nparts; i++)
        valid &= run_valid(m->parts[i].run);
    for (size_t f = 0; f < m->nfiles; f++)
        interrupted |= json_is_true(json_object_get(m->heads[f], "interrupted"));
    merge_provenance(m, argc, argv, &args, &from);
    return json_pack(
        "{s:s, s:{s:s, s:s}, s:s, s:o, s:I, s:o, s:O?, s:O?, s:O?, s:b, s:b}", "schema",
        REPORT_SCHEMA, "tool", "name", "hopbench", "version", HOPBENCH_VERSION, "command", "merge",
        "argv", args, "started_unix_s", (json_int_t)time(NULL), "merged_from", from, "machine",
        json_object_get(first, "machine"), "placement", json_object_get(first, "placement"),
        "server", json_object_get(first, "server"), "interrupted", interrupted, "valid", valid);
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
    for (size_t i = 0; i < m->nparts; i++)
        part_release(&m->parts[i]);
    free(m->parts);
    for (size_t f = 0; m->heads != NULL && f < m->nfiles; f++)
        json_decref(m->heads[f]);
    free(m->heads);
    free(m->paths);
    hist_free(m->h);
    json_decref(m->doc);
}

/*
 * Writes the merged document to f, one output run at a time: the document's
 * other fields as the writer lays them out, then "runs" last, a line per run,
 * so that no more than one output run is held as JSON.
 */
static int merge_emit(FILE *f, void *ctx, struct hb_err *err)
{
    struct merge *m = ctx;
    char *head = json_dumps(m->doc, JSON_INDENT(1) | JSON_COMPACT);
    size_t len = head != NULL ? strlen(head) : 0;
    int rc = 0;

    /* the head ends "\n}": the runs go before that brace */
    if (len < 2 || strcmp(head + len - 2, "\n}") != 0) {
        free(head);
        return hb_fail(err, -ENOMEM, "cannot build the merged document");
    }
    if (fwrite(head, 1, len - 2, f) != len - 2 || fputs(",\n \"runs\":[", f) == EOF) rc = -EIO;
    free(head);
    for (size_t i = 0; i < m->nslots && rc == 0; i++) {
        json_t *run = merge_slot(m, &m->slots[i], err);
        if (run == NULL) return -EINVAL;
        if (fputs(i > 0 ? ",\n  " : "\n  ", f) == EOF || json_dumpf(run, f, JSON_COMPACT) != 0)
            rc = -EIO;
        json_decref(run);
    }
    if (rc == 0 && fputs("\n ]\n}\n", f) == EOF) rc = -EIO;
    return rc;
}

/* Writes the merged document to m->out, or to stdout. */
static int merge_write(struct merge *m, struct hb_err *err)
{
    if (m->out != NULL) {
        if (report_file_write(m->out, merge_emit, m, err) < 0) return -EIO;
        char shown[TEXT_SAFE_CAP];
        printf("evidence: %s\n", text_safe(shown, sizeof(shown), m->out));
        return 0;
    }
    if (merge_emit(stdout, m, err) < 0 || fflush(stdout) != 0)
        return hb_fail(err, -EIO, "cannot write the merged evidence to stdout");
    return 0;
}

/* Loads, groups, merges and writes; 0 or a negative errno with err set. */
static int merge_run(struct merge *m, int argc, char **argv, struct hb_err *err)
{
    int rc;

    m->heads = xcalloc(m->nfiles, sizeof(json_t *));
    for (m->file = 0; m->file < m->nfiles; m->file++) {
        struct evidence_reader reader = { .run = merge_take, .ctx = m };
        rc = evidence_read(m->paths[m->file], &reader, &m->heads[m->file], err);
        if (rc < 0) return rc;
    }
    m->h = hist_new();
    if (m->h == NULL) return hb_fail(err, -ENOMEM, "out of memory");
    merge_group(m);
    if (merge_dry_run(m, err) < 0) return -EINVAL;
    m->doc = merge_doc(m, argc, argv);
    if (m->doc == NULL) return hb_fail(err, -ENOMEM, "cannot build the merged document");
    return merge_write(m, err);
}

int evidence_merge_main(int argc, char **argv)
{
    struct merge m = { 0 };
    struct hb_err err = { 0 };
    int rc;

    m.paths = xcalloc(argc > 0 ? (size_t)argc : 1, sizeof(*m.paths));
    rc = merge_args(argc, argv, &m);
    if (rc == 0 && merge_run(&m, argc, argv, &err) < 0) {
        char msg[TEXT_SAFE_CAP];
        fprintf(stderr, "hopbench merge: %s\n", text_safe(msg, sizeof(msg), err.msg));
        rc = -EIO;
    }
    merge_release(&m);
    if (rc == CLI_HELP || rc == 0) return HB_EXIT_OK;
    return rc == -EIO ? HB_EXIT_RUNTIME : HB_EXIT_USAGE;
}

/* ---- what other readers of evidence share ---------------------------------------------- */

int evidence_run_cell(const json_t *run, struct run_key *k, bool *counts, struct hb_err *err)
{
    if (check_record(run, err) < 0) return -EINVAL;
    if (run_placeholder(run)) return 1;
    if (!run_key_of(run, k))
        return hb_fail(err, -EINVAL, "lacks endpoint, mode, size, connections or pipeline");
    if (check_figures(run, err) < 0) return -EINVAL;
    *counts = run_counts(run);
    return 0;
}

int evidence_key_order(const struct run_key *a, const struct run_key *b)
{
    return key_order(a, b);
}

void evidence_cell_label(char *buf, size_t cap, const struct run_key *k)
{
    cell_label(buf, cap, k);
}
