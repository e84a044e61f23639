/*
 * hist_json: histograms in the evidence, encoded and decoded (see hist_json.h).
 */
#include "evidence/hist_json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/counts_code.h"
#include "evidence/schema.h"

#define EV_NS "ns" /* the unit of every value */

/* The layout every histogram of the evidence has: struct hist's. */
static const struct {
    const char *key;
    uint64_t want;
} layout[] = { { EV_LOWEST, 1 }, { EV_HIGHEST, HIST_MAX_NS }, { EV_SIGNIFICANT_DIGITS, 3 } };

json_t *hist_coded_json(const struct hist_coded *c)
{
    json_t *doc = json_pack("{s:s}", EV_UNIT, EV_NS);

    for (size_t i = 0; doc != NULL && i < ARRAY_LEN(layout); i++)
        json_object_set_new(doc, layout[i].key, json_integer((json_int_t)layout[i].want));
    if (doc == NULL) return NULL;
    json_object_set_new(doc, EV_TOTAL, json_integer((json_int_t)c->total));
    json_object_set_new(doc, EV_MIN, json_integer((json_int_t)c->min));
    json_object_set_new(doc, EV_MAX, json_integer((json_int_t)c->max));
    json_object_set_new(doc, EV_OVERFLOW, json_integer((json_int_t)c->overflow));
    json_object_set_new(doc, EV_COUNTS_ENCODING, json_string(COUNTS_ENCODING));
    json_object_set_new(doc, EV_COUNTS, json_string(c->counts));
    return doc;
}

json_t *report_hist_json(const struct hist *h)
{
    struct hist_coded c = {
        .total = h->total, .min = h->total ? h->min : 0, .max = h->max, .overflow = h->overflow
    };
    struct hist_pair *pairs;
    size_t n = 0;
    json_t *doc;

    for (size_t i = 0; i < HIST_COUNTS; i++)
        n += h->counts[i] != 0;
    pairs = xcalloc(n ? n : 1, sizeof(*pairs));
    n = 0;
    for (size_t i = 0; i < HIST_COUNTS; i++)
        if (h->counts[i] != 0)
            pairs[n++] = (struct hist_pair){ .idx = (uint32_t)i, .count = h->counts[i] };
    c.counts = counts_encode(pairs, n);
    free(pairs);
    doc = hist_coded_json(&c);
    hist_coded_release(&c);
    return doc;
}

json_t *report_latency_json(const struct hist *h)
{
    json_t *o = json_object();

    for (size_t i = 0; o != NULL && i < EV_LATENCY_FIGURES; i++) {
        const struct ev_latency_figure *f = &ev_latency_order[i];
        uint64_t v;
        /* min and max, first and last, are kept exactly; the rest come from the counters */
        if (f->percentile > 0)
            v = hist_percentile(h, f->percentile);
        else
            v = i == 0 ? (h->total ? h->min : 0) : h->max;
        json_object_set_new(o, f->key, json_integer((json_int_t)v));
    }
    if (o != NULL) json_object_set_new(o, EV_MEAN, json_real(hist_mean(h)));
    return o;
}

/* j has the layout of struct hist, so its counters mean the same values as ours. */
static int hist_layout_ok(const json_t *j, struct hb_err *err)
{
    const json_t *unit = json_object_get(j, EV_UNIT);

    if (!json_is_object(j)) return hb_fail(err, -EINVAL, "no histogram object");
    if (!json_is_string(unit) || strcmp(json_string_value(unit), EV_NS) != 0)
        return hb_fail(err, -EINVAL, "histogram layout differs: unit is not \"ns\"");
    for (size_t i = 0; i < ARRAY_LEN(layout); i++) {
        uint64_t v;
        if (evidence_get_u64(j, layout[i].key, &v) < 0 || v != layout[i].want)
            return hb_fail(err, -EINVAL, "histogram layout differs: %s is not %llu", layout[i].key,
                           (unsigned long long)layout[i].want);
    }
    return 0;
}

void hist_coded_release(struct hist_coded *c)
{
    free(c->counts);
    *c = (struct hist_coded){ 0 };
}

/* A histogram's non-zero counters while it is decoded. */
struct pair_list {
    struct hist_pair *v;
    size_t n;
};

/* How many counters counts lists: a pair lists one, a run as many as it holds. */
static size_t counts_listed(const json_t *counts)
{
    const json_t *item;
    size_t i, n = 0;

    json_array_foreach(counts, i, item)
    {
        const json_t *c = json_array_get(item, 1);
        n += json_is_array(c) ? json_array_size(c) : 1;
    }
    return n;
}

/*
 * Adds counts[i], an [index, count] pair or an [index, [count, ...]] run of
 * the counters from index on, to l (zeros left out) and to *sum.
 */
static int counts_item(struct pair_list *l, const json_t *item, size_t i, json_int_t *sum,
                       struct hb_err *err)
{
    const json_t *ix = json_array_get(item, 0), *c = json_array_get(item, 1);
    size_t len = json_is_array(c) ? json_array_size(c) : 1, at;

    if (json_array_size(item) != 2 || !json_is_integer(ix) ||
        !(json_is_integer(c) || json_is_array(c)))
        return hb_fail(err, -EINVAL,
                       "histogram counts[%zu] is neither an [index, count] pair nor an "
                       "[index, [count, ...]] run",
                       i);
    if (json_integer_value(ix) < 0 || (uint64_t)json_integer_value(ix) >= HIST_COUNTS)
        return hb_fail(err, -EINVAL, "histogram counts[%zu]: index %lld is outside 0..%zu", i,
                       (long long)json_integer_value(ix), (size_t)HIST_COUNTS - 1);
    at = (size_t)json_integer_value(ix);
    if (len > HIST_COUNTS - at)
        return hb_fail(err, -EINVAL,
                       "histogram counts[%zu]: a run of %zu counters from index %zu passes %zu", i,
                       len, at, (size_t)HIST_COUNTS - 1);
    for (size_t k = 0; k < len; k++, at++) {
        const json_t *n = json_is_array(c) ? json_array_get(c, k) : c;
        json_int_t v = json_integer_value(n);
        if (!json_is_integer(n) || v < 0)
            return hb_fail(err, -EINVAL, "histogram counts[%zu]: count %zu is not 0 or more", i, k);
        if (__builtin_add_overflow(*sum, v, sum))
            return hb_fail(err, -EINVAL, "histogram counts overflow when added up (counts[%zu])",
                           i);
        if (v > 0) l->v[l->n++] = (struct hist_pair){ .idx = (uint32_t)at, .count = (uint64_t)v };
    }
    return 0;
}

static int pair_order(const void *a, const void *b)
{
    uint32_t x = ((const struct hist_pair *)a)->idx, y = ((const struct hist_pair *)b)->idx;

    return (x > y) - (x < y);
}

/*
 * l in ascending order of index, one pair per counter: a list in any order,
 * or naming a counter twice (which then holds the sum), comes out as the
 * encoded string has it. The sum fits: all counts add up within the total.
 */
static void pairs_normalise(struct pair_list *l)
{
    size_t out = 0;

    for (size_t i = 1; i < l->n; i++)
        if (l->v[i].idx <= l->v[i - 1].idx) {
            qsort(l->v, l->n, sizeof(*l->v), pair_order);
            break;
        }
    for (size_t i = 0; i < l->n; i++) {
        if (out > 0 && l->v[out - 1].idx == l->v[i].idx)
            l->v[out - 1].count += l->v[i].count;
        else
            l->v[out++] = l->v[i];
    }
    l->n = out;
}

/*
 * counts in one of the JSON forms (runs or pairs) into l. Each index must be
 * in range and the counts must add up to total without wrapping past
 * INT64_MAX.
 */
static int pairs_from_list(struct pair_list *l, const json_t *counts, uint64_t total,
                           struct hb_err *err)
{
    const json_t *item;
    size_t i, cap;
    json_int_t sum = 0;

    if (!json_is_array(counts)) return hb_fail(err, -EINVAL, "histogram has no \"counts\" array");
    cap = counts_listed(counts);
    l->v = xcalloc(cap ? cap : 1, sizeof(*l->v));
    json_array_foreach(counts, i, item)
    {
        if (counts_item(l, item, i, &sum, err) < 0) return -EINVAL;
    }
    if ((uint64_t)sum != total)
        return hb_fail(err, -EINVAL, "histogram counts add up to %lld, its total is %llu",
                       (long long)sum, (unsigned long long)total);
    pairs_normalise(l);
    return 0;
}

/*
 * counts, an encoded string whose counts add up to total, into l: read once
 * to check it and count its counters, then again into pairs of that number.
 */
static int pairs_from_string(struct pair_list *l, const json_t *counts, uint64_t total,
                             struct hb_err *err)
{
    struct counts_reader r;
    struct hist_pair pair;
    size_t n = 0;
    int rc;

    if (!json_is_string(counts))
        return hb_fail(err, -EINVAL, "histogram \"counts\" is not a string (%s)", COUNTS_ENCODING);
    if (counts_reader_init(&r, json_string_value(counts), json_string_length(counts), total, err) <
        0)
        return -EINVAL;
    while ((rc = counts_reader_next(&r, &pair, err)) == 1)
        n++;
    if (rc < 0) return -EINVAL;
    l->v = xcalloc(n ? n : 1, sizeof(*l->v));
    counts_reader_init(&r, json_string_value(counts), json_string_length(counts), total, err);
    while (l->n < n && counts_reader_next(&r, &l->v[l->n], err) == 1)
        l->n++;
    return 0;
}

/*
 * The counters of j into l, as the JSON lists of counts_encoding-less
 * evidence or as the string its counts_encoding names; min and max must fall
 * in the first and last counters that hold a value, as they do when one
 * histogram recorded them all.
 */
static int hist_counters(struct pair_list *l, const struct hist_coded *c, const json_t *j,
                         struct hb_err *err)
{
    const json_t *enc = json_object_get(j, EV_COUNTS_ENCODING);
    const json_t *counts = json_object_get(j, EV_COUNTS);
    int rc;

    if (enc == NULL)
        rc = pairs_from_list(l, counts, c->total, err);
    else if (!json_is_string(enc) || strcmp(json_string_value(enc), COUNTS_ENCODING) != 0)
        rc = hb_fail(err, -EINVAL,
                     "histogram " EV_COUNTS_ENCODING " is not \"%s\", the one this build reads",
                     COUNTS_ENCODING);
    else
        rc = pairs_from_string(l, counts, c->total, err);
    if (rc < 0) return rc;
    if (l->n > 0 && (hist_index(c->min) != l->v[0].idx || hist_index(c->max) != l->v[l->n - 1].idx))
        return hb_fail(err, -EINVAL,
                       "histogram min %llu or max %llu is not in its first or last counter",
                       (unsigned long long)c->min, (unsigned long long)c->max);
    return 0;
}

/* Decodes the histogram JSON j into c (released by the caller, also on failure). */
int hist_coded_decode(struct hist_coded *c, const json_t *j, struct hb_err *err)
{
    struct pair_list l = { 0 };
    int rc;

    *c = (struct hist_coded){ 0 };
    if (hist_layout_ok(j, err) < 0) return -EINVAL;
    if (evidence_get_u64(j, EV_TOTAL, &c->total) < 0 || evidence_get_u64(j, EV_MIN, &c->min) < 0 ||
        evidence_get_u64(j, EV_MAX, &c->max) < 0 ||
        evidence_get_u64(j, EV_OVERFLOW, &c->overflow) < 0)
        return hb_fail(err, -EINVAL, "histogram lacks total, min, max or overflow");
    if (c->max > HIST_MAX_NS || c->overflow > c->total || (c->total > 0 && c->min > c->max))
        return hb_fail(err, -EINVAL, "histogram min, max or overflow out of range");
    rc = hist_counters(&l, c, j, err);
    if (rc == 0) c->counts = counts_encode(l.v, l.n);
    free(l.v);
    return rc;
}

/* Adds c into dst; the total must stay within INT64_MAX, as a file can hold it. */
int hist_coded_add(struct hist *dst, const struct hist_coded *c, struct hb_err *err)
{
    struct counts_reader r;
    struct hist_pair pair;
    uint64_t total;

    if (__builtin_add_overflow(dst->total, c->total, &total) || total > (uint64_t)INT64_MAX)
        return hb_fail(err, -EINVAL, "histogram totals overflow when added (%llu + %llu)",
                       (unsigned long long)dst->total, (unsigned long long)c->total);
    /* c->counts was written by counts_encode from counters checked when decoded */
    if (counts_reader_init(&r, c->counts, strlen(c->counts), c->total, err) < 0) return -EINVAL;
    /* every counter is at most the total, which fits: no counter can wrap */
    while (counts_reader_next(&r, &pair, err) == 1)
        dst->counts[pair.idx] += pair.count;
    dst->total = total;
    dst->overflow += c->overflow;
    /* an empty histogram is written with min 0: it must not lower dst's min */
    if (c->total > 0 && c->min < dst->min) dst->min = c->min;
    if (c->total > 0 && c->max > dst->max) dst->max = c->max;
    return 0;
}

int evidence_hist_add(struct hist *dst, const json_t *j, struct hb_err *err)
{
    struct hist_coded c;
    int rc = hist_coded_decode(&c, j, err);

    if (rc == 0) rc = hist_coded_add(dst, &c, err);
    hist_coded_release(&c);
    return rc;
}
