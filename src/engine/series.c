/*
 * series: ops and p99 per interval (see series.h). The hot path is
 * series_note's compare, inline; a thread turns its interval here once per
 * interval at most, and load_run reads the slots once the threads have ended.
 */
#include "engine/series.h"

#include <stdlib.h>
#include <string.h>

/* The smallest page: a larger one is touched more than once. */
#define SERIES_TOUCH_STRIDE 4096

static uint64_t div_up(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

void series_plan(struct series_run *r, uint64_t duration_ns, uint64_t drain_ns)
{
    uint64_t span = duration_ns + drain_ns;

    *r = (struct series_run){ .interval_ns = SERIES_STEP_NS };
    if (duration_ns == 0) {
        r->nslots = SERIES_COUNT_SLOTS;
        return;
    }
    r->interval_ns = SERIES_STEP_NS * div_up(span, SERIES_STEP_NS * SERIES_POINTS);
    r->nslots = (size_t)div_up(span, r->interval_ns) + SERIES_SLACK;
}

size_t series_mem(const struct series_run *r)
{
    return r->nslots * SERIES_BUCKETS * sizeof(*r->counts);
}

void series_alloc(struct series_run *r)
{
    size_t bytes = series_mem(r);

    r->counts = xcalloc(1, bytes);
    /* every page in memory now, so that a thread turning its interval takes no page fault */
    for (size_t i = 0; i < bytes / sizeof(*r->counts);
         i += SERIES_TOUCH_STRIDE / sizeof(*r->counts))
        atomic_store_explicit(&r->counts[i], 0, memory_order_relaxed);
    atomic_init(&r->beyond, 0);
}

void series_free(struct series_run *r)
{
    free(r->counts);
    r->counts = NULL;
}

void series_mine_init(struct series_mine *m, struct series_run *r, const struct hist *h)
{
    memset(m->seen, 0, sizeof(m->seen));
    m->run = r;
    m->h = h;
    m->slot = SIZE_MAX;
    /* the first op turns the interval, and finds its slot: the origin is known by then */
    m->next_ns = r != NULL && r->counts != NULL ? 0 : UINT64_MAX;
}

void series_flush(struct series_mine *m)
{
    struct series_run *r = m->run;
    uint64_t beyond = 0;

    if (m->slot == SIZE_MAX || r == NULL || r->counts == NULL || m->h == NULL) return;
    for (size_t b = 0; b < SERIES_BUCKETS; b++) {
        const uint64_t *c = &m->h->counts[b << SERIES_SHIFT];
        uint64_t now = 0, gained;
        for (size_t i = 0; i < ((size_t)1 << SERIES_SHIFT); i++)
            now += c[i];
        gained = now - m->seen[b];
        m->seen[b] = now;
        if (gained == 0) continue;
        if (m->slot < r->nslots)
            atomic_fetch_add_explicit(&r->counts[m->slot * SERIES_BUCKETS + b],
                                      gained > UINT32_MAX ? UINT32_MAX : (uint32_t)gained,
                                      memory_order_relaxed);
        else
            beyond += gained;
    }
    if (beyond > 0) atomic_fetch_add_explicit(&r->beyond, beyond, memory_order_relaxed);
}

void series_turn(struct series_mine *m, uint64_t at_ns)
{
    const struct series_run *r = m->run;
    uint64_t k;

    series_flush(m);
    if (r == NULL || r->counts == NULL) {
        m->next_ns = UINT64_MAX;
        return;
    }
    k = at_ns > r->origin_ns ? (at_ns - r->origin_ns) / r->interval_ns : 0;
    /* past the last slot the thread still turns every interval: its ops go to beyond */
    m->slot = k < r->nslots ? (size_t)k : r->nslots;
    m->next_ns = r->origin_ns + (k + 1) * r->interval_ns;
}

uint64_t series_bucket_high(size_t b)
{
    uint64_t v = hist_highest_equivalent(hist_value_at_index(((b + 1) << SERIES_SHIFT) - 1));

    return v < HIST_MAX_NS ? v : HIST_MAX_NS;
}

uint64_t series_p99(const uint64_t *c, uint64_t total)
{
    uint64_t rank, seen = 0;

    if (total == 0) return 0;
    rank = hist_percentile_rank(99.0, total);
    for (size_t b = 0; b < SERIES_BUCKETS; b++) {
        seen += c[b];
        if (seen >= rank) return series_bucket_high(b);
    }
    return series_bucket_high(SERIES_BUCKETS - 1);
}

void series_result_release(struct series_result *s)
{
    free(s->ops);
    free(s->p99_ns);
    *s = (struct series_result){ 0 };
}

void series_result_of(const struct series_run *r, uint64_t end_ns, struct series_result *out)
{
    uint64_t c[SERIES_BUCKETS];
    size_t slots, group;

    *out = (struct series_result){ 0 };
    if (r->counts == NULL || r->interval_ns == 0) return;
    out->beyond = atomic_load_explicit(&r->beyond, memory_order_relaxed);
    slots = (size_t)div_up(end_ns, r->interval_ns);
    if (slots > r->nslots) slots = r->nslots;
    /* what no interval of the window holds (none, but for a thread's clock): beyond */
    for (size_t s = slots; s < r->nslots; s++)
        for (size_t b = 0; b < SERIES_BUCKETS; b++)
            out->beyond +=
                atomic_load_explicit(&r->counts[s * SERIES_BUCKETS + b], memory_order_relaxed);
    group = slots > SERIES_POINTS + SERIES_SLACK ? (slots + SERIES_POINTS - 1) / SERIES_POINTS : 1;
    out->interval_ns = r->interval_ns * group;
    out->end_ns = end_ns;
    out->n = (slots + group - 1) / group;
    if (out->n == 0) return;
    out->ops = xcalloc(out->n, sizeof(*out->ops));
    out->p99_ns = xcalloc(out->n, sizeof(*out->p99_ns));
    for (size_t i = 0; i < out->n; i++) {
        uint64_t total = 0;
        memset(c, 0, sizeof(c));
        for (size_t s = i * group; s < slots && s < (i + 1) * group; s++)
            for (size_t b = 0; b < SERIES_BUCKETS; b++) {
                uint32_t v =
                    atomic_load_explicit(&r->counts[s * SERIES_BUCKETS + b], memory_order_relaxed);
                c[b] += v;
                total += v;
            }
        out->ops[i] = total;
        out->p99_ns[i] = series_p99(c, total);
    }
}
