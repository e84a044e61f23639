/*
 * compare: two evidence files cell by cell (see evidence.h). Each file is
 * read a run at a time, keeping of each run only its cell, whether it counts
 * and its figures; the runs are sorted into cells, and per metric each cell
 * found in both files gets the median of each side and the change of NEW
 * against OLD (stats_delta: ratio of medians, bootstrap interval,
 * Mann-Whitney p).
 */
#include "evidence.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/check.h"
#include "evidence/metric.h"
#include "evidence/runview.h"
#include "evidence/schema.h"
#include "stats.h"
#include "util.h"

#define CMP_SEED 1  /* the bootstrap's: the same files give the same intervals */
#define CMP_COL  24 /* width of the old and new columns */

static const struct metric_def *mdef(size_t m)
{
    return metric_def((enum summary_metric)m);
}

/* What compare keeps of a run: its cell, whether it counts, its figures. */
struct cmp_run {
    struct run_key key; /* its strings owned */
    size_t seq;         /* the order read, over both files */
    int side;           /* 0: OLD, 1: NEW */
    bool counts;        /* valid and not cut short */
    double v[METRICS];
    double coloc; /* placement.colocated.share (docs/placement.md); NAN when not observed */
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
    char **place; /* the placements the runs point to: one copy per stretch of equal ones */
    size_t nplace, place_cap;
    bool unpinned[2]; /* each file's runs ran with --pin none: their placement was not asked */
};

/* Whether the document head's placement says --pin none. */
static bool head_unpinned(const json_t *head)
{
    const char *pin = evidence_doc_pin(head);

    return pin != NULL && strcmp(pin, EV_PLACE_PIN_NONE) == 0;
}

/* A valid run must carry every figure compare reads. */
static int cmp_check_run(const struct run_view *v, struct hb_err *err)
{
    for (size_t m = 0; m < METRICS; m++)
        if (isnan(run_view_metric(v, (enum summary_metric)m)))
            return hb_fail(err, -EINVAL, "has no number %s%s%s", mdef(m)->obj ? mdef(m)->obj : "",
                           mdef(m)->obj ? "." : "", mdef(m)->key);
    return 0;
}

/*
 * A copy of placement p that c owns: the last one kept when it is equal (the runs of a file
 * mostly share one), else a new one. NULL when out of memory.
 */
static const char *cmp_place_own(struct cmp *c, const char *p)
{
    if (c->nplace > 0 && strcmp(c->place[c->nplace - 1], p) == 0) return c->place[c->nplace - 1];
    if (c->nplace == c->place_cap) {
        size_t cap = c->place_cap ? 2 * c->place_cap : 8;
        char **more = realloc(c->place, cap * sizeof(*more));
        if (more == NULL) return NULL;
        c->place = more;
        c->place_cap = cap;
    }
    char *own = strdup(p);
    if (own != NULL) c->place[c->nplace++] = own;
    return own;
}

/* k with its strings copied into memory of its own (its placement c's); -ENOMEM. */
static int key_own(struct cmp *c, struct run_key *k)
{
    k->endpoint = strdup(k->endpoint);
    k->mode = strdup(k->mode);
    k->proto = strdup(k->proto);
    k->label = strdup(k->label);
    k->placement = cmp_place_own(c, k->placement);
    return k->endpoint && k->mode && k->proto && k->label && k->placement ? 0 : -ENOMEM;
}

/* Frees k's strings but its placement, which c owns. */
static void key_release(struct run_key *k)
{
    free((void *)(uintptr_t)k->endpoint);
    free((void *)(uintptr_t)k->mode);
    free((void *)(uintptr_t)k->proto);
    free((void *)(uintptr_t)k->label);
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
    struct run_view v;
    struct cmp_run r = { .seq = c->nruns, .side = c->side, .counts = evidence_run_counts(run) },
                   *slot;

    run_view_fill(run, &v);
    r.coloc = v.coloc_share;

    if (evidence_check_record(run, err) < 0) return cmp_fail(c, idx, " is ", err);
    if (evidence_run_placeholder(run)) return 0;
    if (!evidence_run_key(run, &r.key)) {
        hb_fail(err, -EINVAL, "lacks endpoint, mode, size, connections or pipeline");
        return cmp_fail(c, idx, " ", err);
    }
    if (r.counts && cmp_check_run(&v, err) < 0) return cmp_fail(c, idx, " ", err);
    if (evidence_check_figures(run, err) < 0) return cmp_fail(c, idx, ": ", err);
    for (size_t m = 0; r.counts && m < METRICS; m++)
        r.v[m] = run_view_metric(&v, (enum summary_metric)m);
    slot = cmp_next(c);
    if (slot == NULL || key_own(c, &r.key) < 0) {
        if (slot != NULL) key_release(&r.key);
        return hb_fail(err, -ENOMEM, "%s: out of memory", c->path[c->side]);
    }
    *slot = r;
    c->nruns++;
    return 0;
}

/*
 * Names each run by the placement it is shown under (evidence_place_label):
 * the container or pod of its file's placement (head[side]'s), when it names
 * one, in place of the run's own key. One pass once both files are read, and
 * runs of one key in a row share one label: under ThreadSanitizer a pass per
 * file read the first file's runs in an array about to be grown (their shadow
 * memory held beside the grown copy) and a copy per run added to it, each
 * raising compare's peak RSS by MiBs. Returns 0 or -ENOMEM.
 */
static int cmp_place(struct cmp *c, json_t *const head[2])
{
    const json_t *doc_place[2];
    const char *from[2] = { NULL, NULL }, *to[2] = { NULL, NULL };
    bool named[2];
    char label[TEXT_SAFE_CAP];

    for (int s = 0; s < 2; s++) {
        doc_place[s] = json_object_get(head[s], EV_PLACEMENT);
        /* A file placed as a process names no container or pod: every run keeps its key. */
        evidence_place_label(label, sizeof(label), doc_place[s], "");
        named[s] = label[0] != '\0';
    }
    if (!named[0] && !named[1]) return 0;
    for (size_t i = 0; i < c->nruns; i++) {
        struct run_key *k = &c->runs[i].key;
        int s = c->runs[i].side;

        if (!named[s]) continue;
        if (k->placement != from[s]) {
            from[s] = k->placement;
            evidence_place_label(label, sizeof(label), doc_place[s], k->placement);
            to[s] = strcmp(label, k->placement) == 0 ? k->placement : cmp_place_own(c, label);
            if (to[s] == NULL) return -ENOMEM;
        }
        k->placement = to[s];
    }
    return 0;
}

/* By cell, then OLD before NEW, then in the order read. */
static int run_order(const void *pa, const void *pb)
{
    const struct cmp_run *a = pa, *b = pb;
    int d = evidence_key_order(&a->key, &b->key);

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
        if (c->ncells == 0 || !evidence_same_cell(cell->key, &r->key)) {
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
    for (size_t i = 0; i < c->nplace; i++)
        free(c->place[i]);
    free(c->place);
    free(c->runs);
    free(c->cells);
}

/* The whole key: "echo tcp://127.0.0.1:9000 reuse 64 B c=1 p=1", then " rate=60%" or "
 * rate=2000/s"; the label in place of the endpoint when there is one, nothing when both are "". */
void evidence_cell_label(char *buf, size_t cap, const struct run_key *k)
{
    const char *place = k->label[0] != '\0' ? k->label : k->endpoint;
    char size[32], rate[48] = "", raw[512];

    size_text(size, sizeof(size), (long long)k->size);
    if (k->rate < 0)
        snprintf(rate, sizeof(rate), " rate=%.4g%%", -k->rate * 100);
    else if (k->rate > 0)
        snprintf(rate, sizeof(rate), " rate=%.6g/s", k->rate);
    snprintf(raw, sizeof(raw), "%s%s%s%s%s %s c=%lld p=%lld%s", k->proto, k->proto[0] ? " " : "",
             place, place[0] ? " " : "", k->mode, size, (long long)k->connections,
             (long long)k->pipeline, rate);
    /* the strings come from a file: escaped, they cannot act on the terminal */
    text_safe(buf, cap, raw);
}

/* The key of the first run of side s of cell, NULL when it has none there. */
static const struct run_key *cell_first(const struct cmp_cell *cell, int s)
{
    for (size_t i = 0; i < cell->all[0] + cell->all[1]; i++)
        if (cell->runs[i].side == s) return &cell->runs[i].key;
    return NULL;
}

/*
 * The cell's label, and when OLD and NEW ran it in different placements
 * (loopback against a veth across namespaces) both, as "[process -> netns
 * other]", or with different waits, "[wait epoll -> block]": the figures
 * beside it compare those, not only a change of the system.
 */
static void cmp_cell_label(char *buf, size_t cap, const struct cmp_cell *cell)
{
    const struct run_key *a = cell_first(cell, 0), *b = cell_first(cell, 1);

    evidence_cell_label(buf, cap, cell->key);
    if (a == NULL || b == NULL) return;
    evidence_label_change(buf, cap, "", a->placement, b->placement);
    evidence_label_change(buf, cap, "wait ", a->wait, b->wait);
}

static void put_padded(FILE *f, const char *s, int width)
{
    fputs(s, f);
    for (int w = text_columns(s); w < width; w++)
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

/* "33,860 ±4.2 % (n=4)": median, spread (the larger distance to min or max, % of median), n. */
static void side_text(char *buf, size_t cap, const struct metric_def *m, const double *x, size_t n)
{
    struct stats_summary s;
    double spread;
    char median[32];

    if (n == 0 || stats_summarize(x, n, &s) < 0) {
        snprintf(buf, cap, "no valid run (n=%zu)", n);
        return;
    }
    spread = s.max - s.median > s.median - s.min ? s.max - s.median : s.median - s.min;
    spread = s.median != 0 ? 100.0 * spread / s.median : 0;
    text_number(median, sizeof(median), s.median * m->scale, m->digits);
    snprintf(buf, cap, "%s ±%.*f %% (n=%zu)", median, spread < 10 ? 1 : 0, spread, n);
}

bool evidence_coloc_differs(double a, double b)
{
    return !isnan(a) && !isnan(b) && fabs(a - b) > EVIDENCE_COLOC_DIFFERS;
}

/* The median co-location share of side s of cell's runs that count; NAN when none has one. */
static double cell_coloc(const struct cmp_cell *cell, int s, double *x)
{
    struct stats_summary sum;
    size_t n = 0;

    for (size_t i = 0; i < cell->all[0] + cell->all[1]; i++)
        if (cell->runs[i].side == s && cell->runs[i].counts && !isnan(cell->runs[i].coloc))
            x[n++] = cell->runs[i].coloc;
    return n > 0 && stats_summarize(x, n, &sum) == 0 ? sum.median : NAN;
}

/*
 * Whether both files ran unpinned and cell's runs shared a CPU with their
 * server in shares more than EVIDENCE_COLOC_DIFFERS apart: then its words in place of a delta.
 */
static bool cmp_placement(const struct cmp *c, const struct cmp_cell *cell, double *x, char *buf,
                          size_t cap)
{
    double old, new;

    if (!c->unpinned[0] || !c->unpinned[1]) return false;
    old = cell_coloc(cell, 0, x);
    new = cell_coloc(cell, 1, x);
    if (!evidence_coloc_differs(old, new)) return false;
    snprintf(buf, cap,
             "placement differed: new shared a CPU with its server in %.0f %% of samples, old in "
             "%.0f %%: not a change of the hop; pin with --pin same or split",
             100 * new, 100 * old);
    return true;
}

/* One row: the cell, OLD, NEW and the delta. a and b have room for every run of a side. */
static void cmp_row(FILE *f, const struct cmp *c, const struct cmp_cell *cell, size_t m, int width,
                    double *a, double *b)
{
    char label[TEXT_SAFE_CAP], old[96], new[96], moved[192];
    size_t na = cell_values(cell, 0, m, a), nb = cell_values(cell, 1, m, b);
    struct stats_delta delta;

    cmp_cell_label(label, sizeof(label), cell);
    side_text(old, sizeof(old), mdef(m), a, na);
    side_text(new, sizeof(new), mdef(m), b, nb);
    stats_delta(a, na, b, nb, CMP_SEED, &delta);
    put_padded(f, label, width);
    fputs("  ", f);
    put_padded(f, old, CMP_COL);
    fputs("  ", f);
    put_padded(f, new, CMP_COL);
    fprintf(f, "  %s\n", cmp_placement(c, cell, a, moved, sizeof(moved)) ? moved : delta.text);
}

/* Width of the first column: the longest label of a matched cell, or metric title. */
static int cmp_label_width(const struct cmp *c)
{
    int width = 0;
    char label[TEXT_SAFE_CAP];

    for (size_t m = 0; m < METRICS; m++)
        if (text_columns(mdef(m)->cmp_label) > width) width = text_columns(mdef(m)->cmp_label);
    for (size_t i = 0; i < c->ncells; i++) {
        cmp_cell_label(label, sizeof(label), &c->cells[i]);
        if (text_columns(label) > width) width = text_columns(label);
    }
    return width;
}

static void cmp_metric(FILE *f, const struct cmp *c, size_t m, int width, double *a, double *b)
{
    fputc('\n', f);
    put_padded(f, mdef(m)->cmp_label, width);
    fputs("  ", f);
    put_padded(f, "old", CMP_COL);
    fputs("  ", f);
    put_padded(f, "new", CMP_COL);
    fputs("  delta (new vs old)\n", f);
    for (size_t i = 0; i < c->ncells; i++)
        if (c->cells[i].all[0] > 0 && c->cells[i].all[1] > 0)
            cmp_row(f, c, &c->cells[i], m, width, a, b);
}

/* "; placement netns other": each placement side s's runs ran in, the first few. */
static void cmp_side_placements(FILE *f, const struct cmp *c, int s)
{
    const char *seen[4];
    size_t n = 0;
    char shown[TEXT_SAFE_CAP];

    for (size_t i = 0; i < c->nruns && n < ARRAY_LEN(seen); i++) {
        const char *p = c->runs[i].key.placement;
        bool known = c->runs[i].side != s || p[0] == '\0';
        for (size_t j = 0; j < n && !known; j++)
            known = strcmp(seen[j], p) == 0;
        if (known) continue;
        fprintf(f, "%s%s", n == 0 ? "; placement " : ", ", text_safe(shown, sizeof(shown), p));
        seen[n++] = p;
    }
}

static void cmp_side_header(FILE *f, const struct cmp *c, int s)
{
    size_t runs = 0, valid = 0;

    for (size_t i = 0; i < c->ncells; i++) {
        runs += c->cells[i].all[s];
        valid += c->cells[i].n[s];
    }
    char path[TEXT_SAFE_CAP];

    fprintf(f, "%s: %s (%zu runs, %zu valid)", s == 0 ? "old" : "new",
            text_safe(path, sizeof(path), c->path[s]), runs, valid);
    cmp_side_placements(f, c, s);
    fputc('\n', f);
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
        evidence_cell_label(label, sizeof(label), cell->key);
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
    fprintf(f, "cell: proto endpoint (or its label) mode size c=connections p=pipeline "
               "[open-loop rate=share of the maximum or ops/s]; median ±spread (n valid runs); "
               "delta: ratio of medians new/old, 95 %% interval, Mann-Whitney p\n");
    for (size_t m = 0; m < METRICS && cmp_matched(c) > 0; m++)
        cmp_metric(f, c, m, width, a, b);
    cmp_unmatched(f, c);
    free(a);
    free(b);
}

int evidence_compare(const char *old_path, const char *new_path, FILE *out,
                     struct evidence_compare_result *res, struct hb_err *err)
{
    struct cmp c = { .path = { old_path, new_path } };
    json_t *head[2] = { NULL, NULL };
    int rc = 0;

    *res = (struct evidence_compare_result){ 0 };
    for (c.side = 0; c.side < 2 && rc == 0; c.side++) {
        struct evidence_reader reader = { .take = cmp_take, .ctx = &c };
        rc = evidence_read(c.path[c.side], &reader, &head[c.side], err);
    }
    if (rc == 0 && cmp_place(&c, head) < 0) rc = hb_fail(err, -ENOMEM, "out of memory");
    for (int s = 0; s < 2 && rc == 0; s++)
        c.unpinned[s] = head_unpinned(head[s]);
    for (int s = 0; s < 2; s++)
        json_decref(head[s]);
    if (rc == 0) {
        cmp_group(&c);
        cmp_print(out, &c);
        res->matched = cmp_matched(&c);
        res->comparable = cmp_comparable(&c);
    }
    cmp_release(&c);
    return rc;
}
