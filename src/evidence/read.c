/*
 * read: evidence files read back a run at a time (see evidence.h). A --jsonl
 * file is parsed line by line; a document laid out as the writer lays it out
 * has its runs found in its text and parsed one by one, so that no more than
 * one run's JSON is held; any other document is parsed whole.
 */
#include "evidence.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evidence/schema.h"

static int check_schema(const char *path, const json_t *doc, struct hb_err *err)
{
    const json_t *schema = json_object_get(doc, EV_SCHEMA);

    if (!json_is_object(doc))
        return hb_fail(err, -EINVAL, "%s: not hopbench evidence: the top level is not an object",
                       path);
    if (schema == NULL)
        return hb_fail(err, -EINVAL, "%s: not hopbench evidence: no \"schema\" key", path);
    if (!json_is_string(schema))
        return hb_fail(err, -EINVAL, "%s: not hopbench evidence: \"schema\" is not a string", path);
    if (strcmp(json_string_value(schema), EVIDENCE_SCHEMA) != 0)
        return hb_fail(err, -EINVAL, "%s: not hopbench evidence: schema \"%.64s\", want \"%s\"",
                       path, json_string_value(schema), EVIDENCE_SCHEMA);
    if (!json_is_array(json_object_get(doc, EV_RUNS)))
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
    const json_t *r = json_object_get(o, EV_RECORD);

    return json_is_string(r) && strcmp(json_string_value(r), want) == 0;
}

/* Where the runs of a file go, one at a time, as they are read. */
struct run_sink {
    const char *path;
    json_t *head; /* the document's fields but its runs (the first header's, for JSONL) */
    size_t nruns;
    const struct evidence_reader *reader;
    bool jsonl; /* a --jsonl file: read_jsonl sets the reader's line */
};

/* Hands run (the record, owned by the reader for the call only) to the reader. */
static int sink_run(struct run_sink *sink, json_t *run, struct hb_err *err)
{
    if (sink->reader->line != NULL && !sink->jsonl) *sink->reader->line = 0;
    return sink->reader->take(sink->reader->ctx, sink->nruns++, run, err);
}

/*
 * One line of a JSONL file: a header (the first one gives the document its
 * fields; every one must have our schema) or a run, handed over without its
 * "record" key.
 */
static int jsonl_line(struct run_sink *sink, size_t line, json_t *rec, struct hb_err *err)
{
    const json_t *schema = json_object_get(rec, EV_SCHEMA);

    if (is_record(rec, EV_RECORD_RUN) && sink->head != NULL) {
        json_object_del(rec, EV_RECORD);
        return sink_run(sink, rec, err);
    }
    if (!is_record(rec, EV_RECORD_HEADER))
        return hb_fail(err, -EINVAL,
                       "%s: line %zu: not hopbench JSONL: not a \"header\" or \"run\" record",
                       sink->path, line);
    if (!json_is_string(schema) || strcmp(json_string_value(schema), EVIDENCE_SCHEMA) != 0)
        return hb_fail(err, -EINVAL,
                       "%s: line %zu: not hopbench evidence: schema \"%.64s\", want \"%s\"",
                       sink->path, line, json_is_string(schema) ? json_string_value(schema) : "",
                       EVIDENCE_SCHEMA);
    if (sink->head != NULL) return 0;
    sink->head = json_incref(rec);
    json_object_del(sink->head, EV_RECORD);
    return 0;
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/*
 * A --jsonl file, line by line: only one line's JSON is held at a time. A
 * blank line (white space only) is skipped. A last line without its end that
 * is not JSON is said to be cut short, with where it starts.
 */
static int read_jsonl(struct run_sink *sink, const char *buf, size_t len, struct hb_err *err)
{
    const char *p = buf, *end = buf + len;

    for (size_t line = 1; p < end; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *at = p;
        size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
        json_error_t jerr;
        json_t *rec = NULL;
        int rc;

        p += n + (nl != NULL);
        if (skip_ws(at, at + n) == at + n) continue;
        rec = json_loadb(at, n, 0, &jerr);
        if (rec == NULL && nl == NULL)
            return hb_fail(err, -EINVAL,
                           "%s: line %zu: cut short (no line end, from byte %zu): not JSON: %s "
                           "(column %d)",
                           sink->path, line, (size_t)(at - buf), jerr.text, jerr.column);
        if (rec == NULL)
            return hb_fail(err, -EINVAL, "%s: line %zu: not JSON: %s (column %d)", sink->path, line,
                           jerr.text, jerr.column);
        if (sink->reader->line != NULL) *sink->reader->line = line;
        rc = jsonl_line(sink, line, rec, err);
        json_decref(rec);
        if (rc < 0) return rc;
    }
    return 0;
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

/* The member's key, without escapes, is key. */
static bool member_is(const struct member *m, const char *key)
{
    size_t len = strlen(key);

    return (size_t)(m->key_end - m->key) == len + 2 && memcmp(m->key + 1, key, len) == 0;
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
        if (member_is(&m, EV_RUNS)) {
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
 * A --jsonl file: its first line that is not blank is an object whose
 * "record" is "header". Only that member is parsed: the first line of a
 * compact document is the whole document.
 */
static bool is_jsonl(const char *buf, size_t len)
{
    const char *start = skip_ws(buf, buf + len),
               *nl = memchr(start, '\n', len - (size_t)(start - buf));
    const char *end = nl != NULL ? nl : buf + len, *p = start;

    if (p == end || *p != '{') return false;
    for (p = skip_ws(p + 1, end); p < end && *p == '"';) {
        struct member m;
        if (!scan_member(p, end, &m)) return false;
        if (member_is(&m, EV_RECORD)) {
            json_t *v = json_loadb(m.val, (size_t)(m.val_end - m.val), JSON_DECODE_ANY, NULL);
            bool yes = json_is_string(v) && strcmp(json_string_value(v), EV_RECORD_HEADER) == 0;
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
    json_object_set_new(head, EV_RUNS, json_array());
    rc = check_schema(sink->path, head, err);
    json_object_del(head, EV_RUNS);
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
    runs = json_incref(json_object_get(doc, EV_RUNS));
    json_object_del(doc, EV_RUNS);
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
    sink.jsonl = is_jsonl(buf, len);
    if (sink.jsonl)
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
    struct evidence_reader reader = { .take = load_append, .ctx = runs };
    int rc = evidence_read(path, &reader, doc, err);

    if (rc == 0) json_object_set(*doc, EV_RUNS, runs);
    json_decref(runs);
    return rc;
}
