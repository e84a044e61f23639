/*
 * merge: runs of the same cell and rep from several evidence files added into
 * one run (see evidence.h). Each file is read a run at a time; a run is kept
 * as its record with its histograms taken out, checked and encoded again
 * (struct hist_coded): as much room as their text takes for the strings
 * hopbench writes, less for lists, at most three times it for any string
 * (a short escape read, the longer Rice code written). The raw counters and
 * histograms are added and every figure derived again from the sums, so a
 * merged run is what one process would have written for all the load. Every
 * sum is checked for overflow. Runs are grouped into output runs by sorting on their key.
 */
#include "evidence.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evidence/check.h"
#include "evidence/hist_json.h"
#include "evidence/schema.h"
#include "outfile.h"

/* A phase's histogram, by the phase's name (a key of the run's "phases"). */
struct phase_hist {
    const char *name;
    struct hist_coded h;
};

/*
 * One run of one input file, as merge keeps it: the record with its
 * histograms taken out and held encoded, where jansson's tree of a list of
 * them took some twenty times their text.
 */
struct part {
    json_t *run;
    bool hists; /* false for the writer's placeholder: nothing was taken out */
    struct hist_coded hist, service;
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
    const char *const *paths;
    size_t nfiles;
    const char *out; /* -o, or NULL for stdout */
    FILE *notes;     /* where an output run whose parts waited differently is named */
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
    hist_coded_release(&p->hist);
    hist_coded_release(&p->service);
    for (size_t i = 0; i < p->nphases; i++)
        hist_coded_release(&p->phases[i].h);
    free(p->phases);
    json_decref(p->run);
}

/*
 * The histogram holder[key] decoded into h and taken out of holder; with
 * `total` not UINT64_MAX, it must hold exactly that many values (a run's
 * ops). `what` names it in err: the run's own "histogram" goes unnamed (its
 * messages say "histogram" already).
 */
static int take_hist(struct hist_coded *h, json_t *holder, const char *key, const char *what,
                     uint64_t total, struct hb_err *err)
{
    if (hist_coded_decode(h, json_object_get(holder, key), err) < 0) {
        char msg[sizeof(err->msg)];
        memcpy(msg, err->msg, sizeof(msg));
        return strcmp(what, EV_HISTOGRAM) != 0 ? hb_fail(err, -EINVAL, "%s: %s", what, msg)
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
    if (!json_is_object(phases)) return hb_fail(err, -EINVAL, "\"" EV_PHASES "\" is not an object");
    p->phases =
        xcalloc(json_object_size(phases) ? json_object_size(phases) : 1, sizeof(*p->phases));
    json_object_foreach(phases, name, ph)
    {
        struct phase_hist *dst = &p->phases[p->nphases++];
        dst->name = name;
        snprintf(what, sizeof(what), EV_PHASES ".%.64s." EV_HISTOGRAM, name);
        if (take_hist(&dst->h, ph, EV_HISTOGRAM, what, UINT64_MAX, err) < 0) return -EINVAL;
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
    json_t *open = json_object_get(run, EV_OPEN_LOOP);
    struct run_key k;
    uint64_t ops;

    if (evidence_check_record(run, err) < 0) return -EINVAL;
    if (evidence_run_placeholder(run)) return 0;
    p->hists = true;
    if (!evidence_run_key(run, &k) || k.rep < 0)
        return hb_fail(
            err, -EINVAL,
            "lacks endpoint, mode, size, connections, pipeline or rep: not a run record");
    if (evidence_get_u64(run, EV_OPS, &ops) < 0 || ops > (uint64_t)INT64_MAX)
        return hb_fail(err, -EINVAL, "\"" EV_OPS "\" is missing or not a count");
    if (evidence_check_figures(run, err) < 0) return -EINVAL;
    if (take_hist(&p->hist, run, EV_HISTOGRAM, EV_HISTOGRAM, ops, err) < 0) return -EINVAL;
    if (open != NULL && !json_is_null(open)) {
        if (!json_is_object(open))
            return hb_fail(err, -EINVAL, "\"" EV_OPEN_LOOP "\" is neither an object nor null");
        p->has_service = true;
        if (take_hist(&p->service, open, EV_SERVICE_HISTOGRAM,
                      EV_OPEN_LOOP "." EV_SERVICE_HISTOGRAM, ops, err) < 0)
            return -EINVAL;
    }
    return take_phases(p, json_object_get(run, EV_PHASES), err);
}

/* The reader of merge: every record checked and kept, its histograms encoded. */
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
    return p->hists && evidence_run_key(p->run, k) && k->rep >= 0;
}

static int slot_key_order(const struct run_key *a, const struct run_key *b)
{
    struct run_key ca = *a, cb = *b;

    /* merge adds connections: they are no part of the key, but the rep is */
    ca.connections = cb.connections = 0;
    int d = evidence_key_order(&ca, &cb);
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
    static const char *const sums[] = { EV_OPS,           EV_CONNECTS,    EV_ERRORS_TOTAL,
                                        EV_CLIENT_CPU_NS, EV_CONNECTIONS, EV_THREADS };
    const json_t *wa = json_object_get(dst, EV_WINDOW_S), *wb = json_object_get(src, EV_WINDOW_S);
    bool interrupted = json_is_true(json_object_get(dst, EV_INTERRUPTED)) ||
                       json_is_true(json_object_get(src, EV_INTERRUPTED));

    /* Counters that evidence from older versions may lack. */
    static const char *const optional[] = { EV_REQUESTS,       EV_REPLIES,  EV_RECONNECTS,
                                            EV_STDERR_REPLIES, EV_PREPARED, EV_RETRIED,
                                            EV_CONNECT_RETRIES };

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
    if (add_counts(dst, src, EV_ERRORS, true, err) < 0) return -EINVAL;
    if (add_counts(dst, src, EV_STATUS, false, err) < 0) return -EINVAL;
    if (add_counts(dst, src, EV_REPLIES_BY_KIND, false, err) < 0) return -EINVAL;
    if (add_counts(dst, src, EV_CONNECTIONS_OPEN, false, err) < 0) return -EINVAL;
    if (!json_is_number(wa) || !json_is_number(wb))
        return hb_fail(err, -EINVAL, "\"" EV_WINDOW_S "\" is missing or not a number");
    if (json_number_value(wb) > json_number_value(wa))
        json_object_set_new(dst, EV_WINDOW_S, json_real(json_number_value(wb)));
    json_object_set_new(dst, EV_VALID,
                        json_boolean(evidence_run_valid(dst) && evidence_run_valid(src)));
    json_object_set_new(dst, EV_INTERRUPTED, json_boolean(interrupted));
    return 0;
}

/* ops_per_s and client_cpu_ns_per_op from the summed counters and the longest window. */
static void derive_rates(json_t *run)
{
    double ops = (double)json_integer_value(json_object_get(run, EV_OPS));
    double cpu = (double)json_integer_value(json_object_get(run, EV_CLIENT_CPU_NS));
    double window = json_number_value(json_object_get(run, EV_WINDOW_S));

    json_object_set_new(run, EV_OPS_PER_S, json_real(window > 0 ? ops / window : 0));
    json_object_set_new(run, EV_CLIENT_CPU_NS_PER_OP, json_real(ops > 0 ? cpu / ops : 0));
}

/* Where a run keeps a histogram: its own, a phase's, or the open loop's service time. */
enum hist_at { HIST_RUN, HIST_PHASE, HIST_SERVICE };

/* The histogram at `at` of part p, or NULL when it has none there. */
static const struct hist_coded *part_hist(const struct part *p, enum hist_at at, const char *phase)
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
        const struct hist_coded *h = part_hist(s->parts[i], at, phase);
        if (h == NULL && optional) continue;
        if (h == NULL) hb_fail(err, -EINVAL, "no histogram object");
        if (h == NULL || hist_coded_add(m->h, h, err) < 0) {
            part_fail(err, m, s->parts[i]);
            return NULL;
        }
    }
    return json_pack("{s:o, s:o}", EV_LATENCY_NS, report_latency_json(m->h), EV_HISTOGRAM,
                     report_hist_json(m->h));
}

/* Every phase any part measured, its histograms added. */
static int merge_phases(struct merge *m, const struct slot *s, json_t *run, struct hb_err *err)
{
    json_t *out = json_object(), *v;
    const char *name;

    for (size_t i = 0; i < s->nparts; i++) {
        json_t *phases = json_object_get(s->parts[i]->run, EV_PHASES);
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
    json_object_set_new(run, EV_PHASES, out);
    return 0;
}

/* The run's latency figures and histograms from the sums of its parts'. */
static int merge_hists(struct merge *m, const struct slot *s, json_t *run, struct hb_err *err)
{
    json_t *lat = merged_hist(m, s, HIST_RUN, NULL, false, err);

    if (lat == NULL) return -EINVAL;
    json_object_set(run, EV_LATENCY_NS, json_object_get(lat, EV_LATENCY_NS));
    json_object_set(run, EV_HISTOGRAM, json_object_get(lat, EV_HISTOGRAM));
    json_decref(lat);
    return merge_phases(m, s, run, err);
}

/* The open-loop figures of every part, summed or combined into out (a copy of part 0's). */
static int merge_rates(struct merge *m, const struct slot *s, json_t *out, struct hb_err *err)
{
    bool same_share = true, same_arrivals = true, same_from = true, saturated = false;
    double rate = 0, basis = 0, drain = 0, intended = 0, kept = 0;

    for (size_t i = 0; i < s->nparts; i++) {
        const json_t *o = json_object_get(s->parts[i]->run, EV_OPEN_LOOP);
        const json_t *r = json_object_get(o, EV_RATE), *b = json_object_get(o, EV_RATE_BASIS);
        if (!json_is_number(r)) {
            hb_fail(err, -EINVAL,
                    "\"" EV_OPEN_LOOP "\" is missing or has no number \"" EV_RATE "\"");
            return part_fail(err, m, s->parts[i]);
        }
        rate += json_number_value(r);
        basis += json_is_number(b) ? json_number_value(b) : 0;
        intended += json_number_value(json_object_get(o, EV_INTENDED_OPS_PER_S));
        kept += json_number_value(json_object_get(o, EV_KEPT_OPS_PER_S));
        same_share &=
            json_equal(json_object_get(o, EV_RATE_SHARE), json_object_get(out, EV_RATE_SHARE));
        same_arrivals &=
            json_equal(json_object_get(o, EV_ARRIVALS), json_object_get(out, EV_ARRIVALS));
        same_from &= json_equal(json_object_get(o, EV_RATE_BASIS_FROM),
                                json_object_get(out, EV_RATE_BASIS_FROM));
        saturated |= json_is_true(json_object_get(o, EV_SATURATED));
        if (json_number_value(json_object_get(o, "drain_s")) > drain)
            drain = json_number_value(json_object_get(o, "drain_s"));
    }
    same_share &= json_is_number(json_object_get(out, EV_RATE_SHARE));
    json_object_set_new(out, EV_RATE, json_real(rate));
    if (json_object_get(out, EV_INTENDED_OPS_PER_S) != NULL)
        json_object_set_new(out, EV_INTENDED_OPS_PER_S, json_real(intended));
    if (json_object_get(out, EV_KEPT_OPS_PER_S) != NULL)
        json_object_set_new(out, EV_KEPT_OPS_PER_S, json_real(kept));
    json_object_set_new(out, EV_RATE_BASIS, same_share ? json_real(basis) : json_null());
    if (!same_share) json_object_set_new(out, EV_RATE_SHARE, json_null());
    if (!same_arrivals) json_object_set_new(out, EV_ARRIVALS, json_null());
    /* A summed basis is no one endpoint's probes; evidence older than these keys has neither. */
    if (json_object_get(out, EV_RATE_BASIS_FROM) != NULL && (!same_from || !same_share))
        json_object_set_new(out, EV_RATE_BASIS_FROM, json_null());
    if (json_object_get(out, EV_RATE_BASIS_PROBES) != NULL && s->nparts > 1)
        json_object_set_new(out, EV_RATE_BASIS_PROBES, json_null());
    json_object_set_new(out, EV_SATURATED, json_boolean(saturated));
    /* The longest drain, as the merged window is the longest. */
    if (json_object_get(out, "drain_s") != NULL)
        json_object_set_new(out, "drain_s", json_real(drain));
    return 0;
}

/*
 * An open-loop run's open_loop: the rates asked for, intended and kept up
 * with (and their basis) summed, as the ops are; rate_share, arrivals and rate_basis_from kept when
 * every part agrees, else null; rate_basis_probes null for more than one part; achieved = the
 * merged ops_per_s; saturated if any part was; the longest drain; the service histograms added like
 * the run's. Closed-loop runs keep null.
 */
static int merge_open_loop(struct merge *m, const struct slot *s, json_t *run, struct hb_err *err)
{
    json_t *out = json_object_get(run, EV_OPEN_LOOP), *service;

    if (!json_is_object(out)) return 0;
    if (merge_rates(m, s, out, err) < 0) return -EINVAL;
    json_object_set(out, EV_ACHIEVED_OPS_PER_S, json_object_get(run, EV_OPS_PER_S));
    service = merged_hist(m, s, HIST_SERVICE, NULL, false, err);
    if (service == NULL) return -EINVAL;
    json_object_set(out, EV_SERVICE_LATENCY_NS, json_object_get(service, EV_LATENCY_NS));
    json_object_set(out, EV_SERVICE_HISTOGRAM, json_object_get(service, EV_HISTOGRAM));
    json_decref(service);
    return 0;
}

/* A run without a counterpart, as it was read: its histograms put back. */
static json_t *part_restore(const struct part *p)
{
    json_t *run, *phases;

    if (!p->hists) return json_incref(p->run);
    run = json_deep_copy(p->run);
    phases = json_object_get(run, EV_PHASES);
    json_object_set_new(run, EV_HISTOGRAM, hist_coded_json(&p->hist));
    if (p->has_service)
        json_object_set_new(json_object_get(run, EV_OPEN_LOOP), EV_SERVICE_HISTOGRAM,
                            hist_coded_json(&p->service));
    for (size_t i = 0; i < p->nphases; i++)
        json_object_set_new(json_object_get(phases, p->phases[i].name), EV_HISTOGRAM,
                            hist_coded_json(&p->phases[i].h));
    return run;
}

/*
 * Whether the parts of slot s waited differently: the first part's wait into
 * *a and the first other one into *b. Parts without a wait (evidence from
 * before it) differ from none.
 */
static bool slot_waits(const struct slot *s, const char **a, const char **b)
{
    *a = *b = "";
    for (size_t i = 0; i < s->nparts; i++) {
        struct run_key k;
        if (!part_key(s->parts[i], &k) || k.wait[0] == '\0') continue;
        if ((*a)[0] == '\0') *a = k.wait;
        if (strcmp(*a, k.wait) != 0) {
            *b = k.wait;
            return true;
        }
    }
    return false;
}

/* Whether a part of slot s has a null wait: it merged runs that waited differently. */
static bool slot_wait_null(const struct slot *s)
{
    for (size_t i = 0; i < s->nparts; i++)
        if (json_is_null(json_object_get(s->parts[i]->run, EV_WAIT))) return true;
    return false;
}

/* One line on m->notes naming run, merged from parts that waited a and b, as compare names it. */
static void note_waits(const struct merge *m, const json_t *run, const char *a, const char *b)
{
    struct run_key k;
    char label[TEXT_SAFE_CAP];

    if (m->notes == NULL || !evidence_run_key(run, &k)) return;
    evidence_cell_label(label, sizeof(label), &k);
    evidence_label_change(label, sizeof(label), "wait ", a, b);
    fprintf(m->notes,
            "hopbench merge: %s rep %lld: runs that waited differently added as one (its "
            "\"" EV_WAIT "\" null)\n",
            label, (long long)k.rep);
}

/* The output run of slot s, owned by the caller; NULL with err set. */
static json_t *merge_slot(struct merge *m, const struct slot *s, struct hb_err *err)
{
    json_t *run;
    const char *wa, *wb;

    if (s->nparts == 1) return part_restore(s->parts[0]);
    run = json_deep_copy(s->parts[0]->run);
    for (size_t i = 1; i < s->nparts; i++)
        if (add_run(run, s->parts[i]->run, err) < 0) {
            part_fail(err, m, s->parts[i]);
            goto fail;
        }
    derive_rates(run);
    if (merge_hists(m, s, run, err) < 0 || merge_open_loop(m, s, run, err) < 0) goto fail;
    /* server, system and socket figures cannot be added: each file saw the same host; nor can
     * the samples of --profile, each of every CPU of it */
    json_object_set_new(run, EV_OBSERVED, json_null());
    json_object_del(run, EV_PROFILE);
    /* each part's intervals began at its own time: ops and p99 per interval cannot be added */
    json_object_set_new(run, EV_SERIES, json_null());
    /* each file's load processes are its own; their memory was read on its host */
    json_object_del(run, EV_PROCS);
    json_object_set_new(run, EV_MERGED_RUNS, json_integer((json_int_t)s->nparts));
    /*
     * As for a rate_share the parts do not share: no one wait was the merged run's when
     * they differ or a part is itself a merge of runs that did (null). A part from before
     * the wait was recorded takes the others'.
     */
    if (slot_waits(s, &wa, &wb) || slot_wait_null(s))
        json_object_set_new(run, EV_WAIT, json_null());
    else if (wa[0] != '\0')
        json_object_set_new(run, EV_WAIT, json_string(wa));
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

/* A field of the first file's head for the merged one: a new reference, null when absent. */
static json_t *first_head(const struct merge *m, const char *key)
{
    json_t *v = json_object_get(m->heads[0], key);

    return v != NULL ? json_incref(v) : json_null();
}

/* Appends p to list unless an equal placement is there already. */
static void placement_add(json_t *list, json_t *p)
{
    size_t i;
    json_t *seen;

    json_array_foreach(list, i, seen)
    {
        if (json_equal(seen, p)) return;
    }
    json_array_append(list, p);
}

/*
 * The merged document's placement: the first file's when every file has the
 * same one; else {"kind": "merged", "placements": [...]}, each input's
 * placement once, in the order first read (an input merged before adds its
 * own list), so that the load of an Indexed Job names every pod and node.
 */
static json_t *merge_placement(const struct merge *m)
{
    json_t *first = json_object_get(m->heads[0], EV_PLACEMENT), *list;
    bool same = true;

    for (size_t f = 1; f < m->nfiles && same; f++) {
        json_t *p = json_object_get(m->heads[f], EV_PLACEMENT);
        same = (p == NULL && first == NULL) || json_equal(first, p);
    }
    if (same) return first_head(m, EV_PLACEMENT);
    list = json_array();
    for (size_t f = 0; f < m->nfiles; f++) {
        json_t *p = json_object_get(m->heads[f], EV_PLACEMENT);
        json_t *inner = json_object_get(p, EV_PLACEMENTS), *one;
        size_t i;

        if (!json_is_array(inner)) {
            if (p != NULL) placement_add(list, p);
            continue;
        }
        json_array_foreach(inner, i, one)
        {
            placement_add(list, one);
        }
    }
    return json_pack("{s:s, s:o}", EV_PLACE_KIND, EV_PLACE_KIND_MERGED, EV_PLACEMENTS, list);
}

/* The merged document but its runs: every output run is valid when every part is. */
static json_t *merge_doc(const struct merge *m, int argc, char **argv)
{
    struct evidence_head head = { .command = "merge",
                                  .argv = json_array(),
                                  .started_unix_s = (uint64_t)time(NULL),
                                  .merged_from = json_array(),
                                  .machine = first_head(m, EV_MACHINE),
                                  .placement = merge_placement(m),
                                  .server = first_head(m, EV_SERVER) };
    bool valid = true, interrupted = false;
    json_t *doc;

    for (size_t i = 0; i < m->nparts; i++)
        valid &= evidence_run_valid(m->parts[i].run);
    for (size_t f = 0; f < m->nfiles; f++)
        interrupted |= json_is_true(json_object_get(m->heads[f], EV_INTERRUPTED));
    json_array_append_new(head.argv, json_string("hopbench"));
    /* json_string is NULL for bytes that are not UTF-8: such an argument is left out */
    for (int i = 0; i < argc; i++)
        json_array_append_new(head.argv, json_string(argv[i]));
    for (size_t f = 0; f < m->nfiles; f++)
        json_array_append_new(head.merged_from, json_string(m->paths[f]));
    doc = evidence_head_json(&head);
    if (doc != NULL && evidence_head_verdict(doc, interrupted, valid) < 0) {
        json_decref(doc);
        doc = NULL;
    }
    return doc;
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
        const char *wa, *wb;
        if (run == NULL) return -EINVAL;
        if (slot_waits(&m->slots[i], &wa, &wb)) note_waits(m, run, wa, wb);
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
    if (m->out != NULL) return outfile_replace(m->out, merge_emit, m, err) < 0 ? -EIO : 0;
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
        struct evidence_reader reader = { .take = merge_take, .ctx = m };
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

int evidence_merge(const char *const *paths, size_t npaths, const char *out, FILE *notes, int argc,
                   char **argv, struct hb_err *err)
{
    struct merge m = { .paths = paths, .nfiles = npaths, .out = out, .notes = notes };
    int rc = merge_run(&m, argc, argv, err);

    merge_release(&m);
    return rc;
}
