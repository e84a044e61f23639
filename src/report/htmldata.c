/*
 * htmldata: the figures the HTML report reads from its cells (see htmldata.h),
 * shared by html.c, which builds the cells, and charts.c and flame.c, which
 * draw them: a record's figures and a cell's medians, the cells' names,
 * colours and groups, and the sparse histograms a cell adds up.
 */
#include "report/htmldata.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evidence.h"
#include "evidence/schema.h"
#include "report/svg.h"
#include "stats.h"

/* ---- the figures of a record ---------------------------------------------------------- */

bool hd_number(const json_t *j, double *out, const char *a, const char *b, const char *c)
{
    if (a != NULL) j = json_object_get(j, a);
    if (b != NULL) j = json_object_get(j, b);
    if (c != NULL) j = json_object_get(j, c);
    if (!json_is_number(j)) return false;
    *out = json_number_value(j);
    return true;
}

bool hd_figure(const json_t *run, double *out, char *why, size_t cap, const char *a, const char *b,
               const char *c)
{
    const json_t *j = run;
    const json_t *reason;

    if (a != NULL) j = json_object_get(j, a);
    if (b != NULL) j = json_object_get(j, b);
    if (c != NULL) j = json_object_get(j, c);
    if (json_is_number(j)) {
        *out = json_number_value(j);
        return true;
    }
    reason = json_object_get(j, "unavailable");
    snprintf(why, cap, "%s",
             json_is_string(reason) ? json_string_value(reason) : "not in the evidence");
    return false;
}

bool hd_median_by(const struct hcell *cell, hd_figure_fn *fig, const void *arg, double *out,
                  char *why, size_t cap)
{
    size_t n = 0, nruns = json_array_size(cell->runs);
    double *x = xcalloc(nruns ? nruns : 1, sizeof(*x));
    struct stats_summary s;
    bool ok = true;

    snprintf(why, cap, "no run counts");
    for (size_t i = 0; i < nruns && ok; i++) {
        const json_t *run = json_array_get(cell->runs, i);
        if (!evidence_run_counts(run)) continue;
        ok = fig(run, arg, &x[n], why, cap);
        n += ok;
    }
    ok = ok && n > 0 && stats_summarize(x, n, &s) == 0;
    if (ok) *out = s.median;
    free(x);
    return ok;
}

size_t hd_median_known(const struct hcell *cell, hd_figure_fn *fig, const void *arg, double *out,
                       char *why, size_t cap)
{
    size_t n = 0, known, nruns = json_array_size(cell->runs);
    double *x = xcalloc(nruns ? nruns : 1, sizeof(*x));
    char lacks[256];
    bool lacked = false;

    snprintf(why, cap, "no run counts");
    for (size_t i = 0; i < nruns; i++) {
        const json_t *run = json_array_get(cell->runs, i);
        if (!evidence_run_counts(run)) continue;
        if (!fig(run, arg, &x[n], lacks, sizeof(lacks))) {
            x[n] = NAN;
            if (!lacked) snprintf(why, cap, "%s", lacks); /* the first run that lacks it */
            lacked = true;
        }
        n++;
    }
    known = stats_median_known(x, n, out);
    free(x);
    return known;
}

/* hd_median's figure: the run's member at the path arg (a NULL-ended list of keys). */
static bool figure_at(const json_t *run, const void *arg, double *out, char *why, size_t cap)
{
    const char *const *path = arg;

    return hd_figure(run, out, why, cap, path[0], path[1], path[2]);
}

bool hd_median(const struct hcell *cell, double *out, char *why, size_t cap, const char *a,
               const char *b, const char *c)
{
    const char *path[3] = { a, b, c };

    return hd_median_by(cell, figure_at, path, out, why, cap);
}

const char *hd_place(const struct hcell *cell)
{
    return cell->key.label[0] != '\0' ? cell->key.label : cell->key.endpoint;
}

/* The cell's label; a placement other than two processes of one host is named after it. */
static void cell_name_placed(char *buf, size_t cap, const struct run_key *k)
{
    const char *p = k->placement;
    char shown[64];
    size_t len;

    evidence_cell_label(buf, cap, k);
    len = strlen(buf);
    if (p == NULL || p[0] == '\0' || strcmp(p, EV_PLACE_KIND_PROC) == 0 || len >= cap) return;
    snprintf(buf + len, cap - len, " (%s)", text_safe(shown, sizeof(shown), p));
}

void hd_short(char *buf, size_t cap, const char *s)
{
    size_t k = 0;

    for (; *s != '\0' && k + 1 < cap; s++) {
        const char *end, *last, *tmp;
        if (strncmp(s, "unix:/", 6) != 0) {
            buf[k++] = *s;
            continue;
        }
        end = s + strcspn(s, " ,;()[]");
        tmp = strstr(s, "/hopbench-");
        for (last = end; last > s && last[-1] != '/'; last--)
            ;
        if (tmp == NULL || tmp >= last || last - s <= 6) {
            buf[k++] = *s;
            continue;
        }
        /* a temporary directory of hopbench's (lab, stack): gone once the report is read */
        k += (size_t)snprintf(buf + k, cap - k, "unix:\xe2\x80\xa6/%.*s", (int)(end - last), last);
        if (k >= cap) k = cap - 1;
        s = end - 1;
    }
    if (cap > 0) buf[k < cap ? k : cap - 1] = '\0';
}

void hd_cell_name(char *buf, size_t cap, const struct hcell *cell)
{
    char *full = xcalloc(cap ? cap : 1, 1);

    cell_name_placed(full, cap, &cell->key);
    evidence_label_change(full, cap, "wait ", cell->key.wait, cell->wait_other);
    hd_short(buf, cap, full);
    free(full);
}

const char *hd_colour(const struct hcell *cell, size_t k)
{
    const char *label = cell->key.label, *dot = strrchr(label, '.');
    const char *tr =
        json_string_value(json_object_get(json_array_get(cell->runs, 0), EV_TRANSPORT));

    if (dot != NULL && (strcmp(dot, ".tcp") == 0 || strcmp(dot, ".unix") == 0)) tr = dot + 1;
    if (tr == NULL) return svg_colour(k);
    if (strcmp(tr, "tcp") == 0) return "#1f77b4";      /* blue, everywhere */
    if (strcmp(tr, "unix") == 0) return "#ff7f0e";     /* orange */
    if (strcmp(tr, "tcp-veth") == 0) return "#2ca02c"; /* green */
    return svg_colour(k);
}

bool hd_open_loop(const struct hcell *cell)
{
    return cell->key.rate != 0;
}

/* The part of a label before its last '.' ("set-pipeline-1" of "set-pipeline-1.tcp"). */
static size_t label_stem(const char *label)
{
    const char *dot = strrchr(label, '.');

    return dot != NULL ? (size_t)(dot - label) : 0;
}

bool hd_same_group(const struct hcell *a, const struct hcell *b, bool any_rate)
{
    struct run_key ka = a->key, kb = b->key;
    size_t sa = label_stem(ka.label), sb = label_stem(kb.label);

    if ((ka.label[0] != '\0') != (kb.label[0] != '\0')) return false;
    if (sa != sb || strncmp(ka.label, kb.label, sa) != 0) return false;
    ka.label = kb.label = "";
    ka.endpoint = kb.endpoint = "";
    if (any_rate) ka.rate = kb.rate = 0;
    return evidence_same_cell(&ka, &kb);
}

void hd_group_name(char *buf, size_t cap, const struct hcell *cell, bool any_rate)
{
    struct run_key k = cell->key;
    char stem[256];
    size_t n = label_stem(k.label);

    snprintf(stem, sizeof(stem), "%.*s", (int)(n < sizeof(stem) ? n : sizeof(stem) - 1), k.label);
    k.label = stem;
    k.endpoint = "";
    if (any_rate) k.rate = 0;
    evidence_cell_label(buf, cap, &k);
}

size_t *hd_groups(const struct hfile *hf, bool any_rate)
{
    size_t *group = xcalloc(hf->ncells ? hf->ncells : 1, sizeof(*group));

    for (size_t c = 0; c < hf->ncells; c++) {
        group[c] = c;
        for (size_t g = 0; g < c; g++)
            if (group[g] == g && hd_same_group(&hf->cells[g], &hf->cells[c], any_rate)) {
                group[c] = g;
                break;
            }
    }
    return group;
}

/* ---- the sparse histograms ----------------------------------------------------------- */

/* dst = a + b, both ascending; counters of one index summed. Returns how many. */
static size_t pairs_merge(struct hist_pair *dst, const struct hist_pair *a, size_t na,
                          const struct hist_pair *b, size_t nb)
{
    size_t i = 0, j = 0, n = 0;

    while (i < na || j < nb) {
        struct hist_pair p;
        if (j == nb || (i < na && a[i].idx < b[j].idx)) {
            p = a[i++];
        } else if (i == na || b[j].idx < a[i].idx) {
            p = b[j++];
        } else {
            p = (struct hist_pair){ a[i].idx, a[i].count + b[j].count };
            i++;
            j++;
        }
        if (n > 0 && dst[n - 1].idx == p.idx)
            dst[n - 1].count += p.count;
        else
            dst[n++] = p;
    }
    return n;
}

/* The counters of an encoded histogram as pairs in index order (*out, *n; the caller frees). */
static int coded_pairs(const struct hist_coded *c, struct hist_pair **out, size_t *n,
                       struct hb_err *err)
{
    struct counts_reader r;
    size_t len = strlen(c->counts), cap = len * 8 / 2 + 1;
    struct hist_pair *pairs;
    int rc;

    *out = NULL;
    *n = 0;
    if (c->total == 0) return 0;
    rc = counts_reader_init(&r, c->counts, len, c->total, err);
    if (rc < 0) return rc;
    pairs = calloc(cap, sizeof(*pairs));
    if (pairs == NULL) return hb_fail(err, -ENOMEM, "out of memory");
    while ((rc = counts_reader_next(&r, &pairs[*n], err)) == 1 && *n + 1 < cap)
        (*n)++;
    if (rc < 0) {
        free(pairs);
        *n = 0;
        return rc;
    }
    *out = pairs;
    return 0;
}

int hd_sparse_add(struct hsparse *h, const json_t *j, struct hb_err *err)
{
    struct hist_coded in = { 0 };
    struct hist_pair *pairs = NULL, *merged;
    size_t npairs = 0;
    int rc = hist_coded_decode(&in, j, err);

    /* each file's total is at most INT64_MAX: the sum of two stays within uint64 */
    if (rc == 0 && h->total > (uint64_t)INT64_MAX)
        rc = hb_fail(err, -EINVAL, "the histograms' totals add up beyond 2^63");
    if (rc == 0) rc = coded_pairs(&in, &pairs, &npairs, err);
    if (rc < 0) {
        hist_coded_release(&in);
        return rc;
    }
    merged = calloc(h->n + npairs + 1, sizeof(*merged));
    if (merged == NULL) {
        free(pairs);
        hist_coded_release(&in);
        return hb_fail(err, -ENOMEM, "out of memory");
    }
    h->n = pairs_merge(merged, h->pairs, h->n, pairs, npairs);
    free(h->pairs);
    free(pairs);
    h->pairs = merged;
    if (in.total > 0) {
        h->min = h->total == 0 || in.min < h->min ? in.min : h->min;
        h->max = in.max > h->max ? in.max : h->max;
    }
    h->total += in.total;
    hist_coded_release(&in);
    return 0;
}

uint64_t hd_percentile(const struct hsparse *h, double p)
{
    uint64_t rank, seen = 0;

    if (h->total == 0) return 0;
    rank = hist_percentile_rank(p, h->total);
    for (size_t i = 0; i < h->n; i++) {
        seen += h->pairs[i].count;
        if (seen >= rank) {
            uint64_t v = hist_highest_equivalent(hist_value_at_index(h->pairs[i].idx));
            return v < h->max ? v : h->max;
        }
    }
    return h->max;
}
