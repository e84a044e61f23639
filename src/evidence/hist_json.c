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

json_t *hist_pairs_json(const struct hist_pairs *p)
{
    json_t *doc = json_pack("{s:s}", EV_UNIT, EV_NS);
    char *counts;

    for (size_t i = 0; doc != NULL && i < ARRAY_LEN(layout); i++)
        json_object_set_new(doc, layout[i].key, json_integer((json_int_t)layout[i].want));
    if (doc == NULL) return NULL;
    json_object_set_new(doc, EV_TOTAL, json_integer((json_int_t)p->total));
    json_object_set_new(doc, EV_MIN, json_integer((json_int_t)p->min));
    json_object_set_new(doc, EV_MAX, json_integer((json_int_t)p->max));
    json_object_set_new(doc, EV_OVERFLOW, json_integer((json_int_t)p->overflow));
    json_object_set_new(doc, EV_COUNTS_ENCODING, json_string(COUNTS_ENCODING));
    counts = counts_encode(p->pairs, p->n);
    json_object_set_new(doc, EV_COUNTS, json_string(counts));
    free(counts);
    return doc;
}

json_t *report_hist_json(const struct hist *h)
{
    struct hist_pairs p = {
        .total = h->total, .min = h->total ? h->min : 0, .max = h->max, .overflow = h->overflow
    };
    size_t n = 0;
    json_t *doc;

    for (size_t i = 0; i < HIST_COUNTS; i++)
        n += h->counts[i] != 0;
    p.pairs = xcalloc(n ? n : 1, sizeof(*p.pairs));
    for (size_t i = 0; i < HIST_COUNTS; i++)
        if (h->counts[i] != 0)
            p.pairs[p.n++] = (struct hist_pair){ .idx = (uint32_t)i, .count = h->counts[i] };
    doc = hist_pairs_json(&p);
    hist_pairs_release(&p);
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

void hist_pairs_release(struct hist_pairs *p)
{
    free(p->pairs);
    *p = (struct hist_pairs){ 0 };
}

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
 * the counters from index on, to p->pairs (zeros left out) and to *sum.
 */
static int counts_item(struct hist_pairs *p, const json_t *item, size_t i, json_int_t *sum,
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
        if (v > 0)
            p->pairs[p->n++] = (struct hist_pair){ .idx = (uint32_t)at, .count = (uint64_t)v };
    }
    return 0;
}

static int pair_order(const void *a, const void *b)
{
    uint32_t x = ((const struct hist_pair *)a)->idx, y = ((const struct hist_pair *)b)->idx;

    return (x > y) - (x < y);
}

/*
 * p's pairs in ascending order of index, one per counter: a list in any order,
 * or naming a counter twice (which then holds the sum), comes out as the
 * encoded string does. The sum fits: all counts add up within the total.
 */
static void pairs_normalise(struct hist_pairs *p)
{
    size_t out = 0;

    for (size_t i = 1; i < p->n; i++)
        if (p->pairs[i].idx <= p->pairs[i - 1].idx) {
            qsort(p->pairs, p->n, sizeof(*p->pairs), pair_order);
            break;
        }
    for (size_t i = 0; i < p->n; i++) {
        if (out > 0 && p->pairs[out - 1].idx == p->pairs[i].idx)
            p->pairs[out - 1].count += p->pairs[i].count;
        else
            p->pairs[out++] = p->pairs[i];
    }
    p->n = out;
}

/*
 * counts in one of the JSON forms (runs or pairs) into p->pairs. Each index
 * must be in range and the counts must add up to total without wrapping past
 * INT64_MAX.
 */
static int pairs_from_list(struct hist_pairs *p, const json_t *counts, struct hb_err *err)
{
    const json_t *item;
    size_t i, cap;
    json_int_t sum = 0;

    if (!json_is_array(counts)) return hb_fail(err, -EINVAL, "histogram has no \"counts\" array");
    cap = counts_listed(counts);
    p->pairs = xcalloc(cap ? cap : 1, sizeof(*p->pairs));
    json_array_foreach(counts, i, item)
    {
        if (counts_item(p, item, i, &sum, err) < 0) return -EINVAL;
    }
    if ((uint64_t)sum != p->total)
        return hb_fail(err, -EINVAL, "histogram counts add up to %lld, its total is %llu",
                       (long long)sum, (unsigned long long)p->total);
    pairs_normalise(p);
    return 0;
}

/*
 * counts, an encoded string, into p->pairs: read once to check it and count
 * its counters, then again into pairs of exactly that number.
 */
static int pairs_from_string(struct hist_pairs *p, const json_t *counts, struct hb_err *err)
{
    struct counts_reader r;
    struct hist_pair pair;
    size_t n = 0;
    int rc;

    if (!json_is_string(counts))
        return hb_fail(err, -EINVAL, "histogram \"counts\" is not a string (%s)", COUNTS_ENCODING);
    if (counts_reader_init(&r, json_string_value(counts), json_string_length(counts), p->total,
                           err) < 0)
        return -EINVAL;
    while ((rc = counts_reader_next(&r, &pair, err)) == 1)
        n++;
    if (rc < 0) return -EINVAL;
    p->pairs = xcalloc(n ? n : 1, sizeof(*p->pairs));
    counts_reader_init(&r, json_string_value(counts), json_string_length(counts), p->total, err);
    while (p->n < n && counts_reader_next(&r, &p->pairs[p->n], err) == 1)
        p->n++;
    return 0;
}

/*
 * The counters of j into p->pairs, as the JSON lists of counts_encoding-less
 * evidence or as the string its counts_encoding names; min and max must fall
 * in the first and last counters that hold a value, as they do when one
 * histogram recorded them all.
 */
static int hist_pairs_counts(struct hist_pairs *p, const json_t *j, struct hb_err *err)
{
    const json_t *enc = json_object_get(j, EV_COUNTS_ENCODING),
                 *counts = json_object_get(j, EV_COUNTS);
    int rc;

    if (enc == NULL)
        rc = pairs_from_list(p, counts, err);
    else if (!json_is_string(enc) || strcmp(json_string_value(enc), COUNTS_ENCODING) != 0)
        rc = hb_fail(err, -EINVAL,
                     "histogram " EV_COUNTS_ENCODING " is not \"%s\", the one this build reads",
                     COUNTS_ENCODING);
    else
        rc = pairs_from_string(p, counts, err);
    if (rc < 0) return rc;
    if (p->n > 0 &&
        (hist_index(p->min) != p->pairs[0].idx || hist_index(p->max) != p->pairs[p->n - 1].idx))
        return hb_fail(err, -EINVAL,
                       "histogram min %llu or max %llu is not in its first or last counter",
                       (unsigned long long)p->min, (unsigned long long)p->max);
    return 0;
}

/* Decodes the histogram JSON j into p (released by the caller, also on failure). */
int hist_pairs_decode(struct hist_pairs *p, const json_t *j, struct hb_err *err)
{
    *p = (struct hist_pairs){ 0 };
    if (hist_layout_ok(j, err) < 0) return -EINVAL;
    if (evidence_get_u64(j, EV_TOTAL, &p->total) < 0 || evidence_get_u64(j, EV_MIN, &p->min) < 0 ||
        evidence_get_u64(j, EV_MAX, &p->max) < 0 ||
        evidence_get_u64(j, EV_OVERFLOW, &p->overflow) < 0)
        return hb_fail(err, -EINVAL, "histogram lacks total, min, max or overflow");
    if (p->max > HIST_MAX_NS || p->overflow > p->total || (p->total > 0 && p->min > p->max))
        return hb_fail(err, -EINVAL, "histogram min, max or overflow out of range");
    return hist_pairs_counts(p, j, err);
}

/* Adds p into dst; the total must stay within INT64_MAX, as a file can hold it. */
int hist_pairs_add(struct hist *dst, const struct hist_pairs *p, struct hb_err *err)
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

int evidence_hist_add(struct hist *dst, const json_t *j, struct hb_err *err)
{
    struct hist_pairs p;
    int rc = hist_pairs_decode(&p, j, err);

    if (rc == 0) rc = hist_pairs_add(dst, &p, err);
    hist_pairs_release(&p);
    return rc;
}
