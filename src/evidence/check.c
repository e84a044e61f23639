/*
 * check: what identifies a run record of the evidence and whether its
 * figures are possible ones (see check.h).
 */
#include "evidence/check.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "evidence/schema.h"

/* Fills k from run; false when endpoint, mode, size, connections or pipeline is missing. */
bool evidence_run_key(const json_t *run, struct run_key *k)
{
    static const char *const ints[] = { EV_SIZE, EV_CONNECTIONS, EV_PIPELINE };
    json_int_t *dst[] = { &k->size, &k->connections, &k->pipeline };
    const json_t *ep = json_object_get(run, EV_ENDPOINT), *mode = json_object_get(run, EV_MODE);
    const json_t *rep = json_object_get(run, EV_REP), *label = json_object_get(run, EV_LABEL);

    if (!json_is_string(ep) || !json_is_string(mode)) return false;
    k->endpoint = json_string_value(ep);
    k->mode = json_string_value(mode);
    k->label = json_is_string(label) ? json_string_value(label) : "";
    k->placement =
        json_string_value(json_object_get(json_object_get(run, EV_PLACEMENT), EV_PLACE_KEY));
    if (k->placement == NULL) k->placement = "";
    const char *wait = json_string_value(json_object_get(run, EV_WAIT));
    k->wait = wait == NULL                 ? ""
              : strcmp(wait, "epoll") == 0 ? "epoll"
              : strcmp(wait, "block") == 0 ? "block"
              : strcmp(wait, "uring") == 0 ? "uring"
                                           : "";
    for (size_t i = 0; i < ARRAY_LEN(ints); i++) {
        const json_t *v = json_object_get(run, ints[i]);
        if (!json_is_integer(v)) return false;
        *dst[i] = json_integer_value(v);
    }
    k->rep = json_is_integer(rep) ? json_integer_value(rep) : -1;
    /* Runs of different protocols, or closed against open loop, are different cells. An
     * open-loop run is keyed by its share of the maximum when it has one, else by its rate. */
    const json_t *proto = json_object_get(run, EV_PROTO),
                 *open = json_object_get(run, EV_OPEN_LOOP);
    k->proto = json_is_string(proto) ? json_string_value(proto) : "";
    k->rate = 0;
    if (json_is_object(open)) {
        const json_t *share = json_object_get(open, EV_RATE_SHARE);
        k->rate = json_is_number(share) ? -json_number_value(share)
                                        : json_number_value(json_object_get(open, EV_RATE));
    }
    return true;
}

void evidence_label_change(char *buf, size_t cap, const char *what, const char *a, const char *b)
{
    size_t len = strlen(buf);
    char raw[TEXT_SAFE_CAP];

    if (a[0] == '\0' || b[0] == '\0' || strcmp(a, b) == 0 || len >= cap) return;
    snprintf(raw, sizeof(raw), " [%s%s -> %s]", what, a, b);
    text_safe(buf + len, cap - len, raw); /* the strings come from a file */
}

/*
 * Appends the strings of parts (NULL-terminated) to buf[*len ..] (cap bytes in
 * all); false, *len at the end of what fits, once they do not fit.
 */
static bool place_append(char *buf, size_t cap, size_t *len, const char *const *parts)
{
    for (; *parts != NULL; parts++) {
        int w = snprintf(buf + *len, cap - *len, "%s", *parts);

        if (w < 0 || (size_t)w >= cap - *len) {
            *len = cap - 1;
            return false;
        }
        *len += (size_t)w;
    }
    return true;
}

/* "pod NAME on node NODE" or "container NAME" after sep, for a placement that names one. */
static bool place_where_text(char *buf, size_t cap, size_t *len, const char *sep,
                             const json_t *place)
{
    const char *kind = json_string_value(json_object_get(place, EV_PLACE_KIND));
    const char *pod = json_string_value(json_object_get(place, EV_PLACE_POD));
    const char *node = json_string_value(json_object_get(place, EV_PLACE_NODE));
    const char *name = json_string_value(json_object_get(place, EV_PLACE_CONTAINER));

    if (kind != NULL && strcmp(kind, EV_PLACE_KIND_POD) == 0) {
        const char *text[] = { sep,
                               "pod ",
                               pod != NULL ? pod : "?",
                               node != NULL ? " on node " : "",
                               node != NULL ? node : "",
                               NULL };
        return place_append(buf, cap, len, text);
    }
    if (kind != NULL && strcmp(kind, EV_PLACE_KIND_CONTAINER) == 0) {
        const char *text[] = { sep, "container", name != NULL ? " " : "", name != NULL ? name : "",
                               NULL };
        return place_append(buf, cap, len, text);
    }
    return true;
}

void evidence_place_label(char *buf, size_t cap, const json_t *doc_place, const char *run_key)
{
    const json_t *list = json_object_get(doc_place, EV_PLACEMENTS), *one;
    size_t len = 0, i;
    bool room = true;

    buf[0] = '\0';
    if (json_is_array(list)) {
        json_array_foreach(list, i, one)
        {
            if (room) room = place_where_text(buf, cap, &len, len > 0 ? " + " : "", one);
        }
    } else if (doc_place != NULL) {
        room = place_where_text(buf, cap, &len, "", doc_place);
    }
    if (len == 0) {
        snprintf(buf, cap, "%s", run_key);
        return;
    }
    if (room && run_key[0] != '\0' && strcmp(run_key, EV_PLACE_KIND_PROC) != 0) {
        const char *text[] = { ", ", run_key, NULL };
        place_append(buf, cap, &len, text);
    }
}

bool evidence_same_cell(const struct run_key *a, const struct run_key *b)
{
    return evidence_key_order(a, b) == 0;
}

bool evidence_run_valid(const json_t *run)
{
    return json_is_true(json_object_get(run, EV_VALID));
}

/* compare counts a run that is valid and was not cut short by Ctrl-C. */
bool evidence_run_counts(const json_t *run)
{
    return evidence_run_valid(run) && !json_is_true(json_object_get(run, EV_INTERRUPTED));
}

/* What the writer puts in place of a run it could not encode: {"error": "..."}. */
bool evidence_run_placeholder(const json_t *run)
{
    return json_is_string(json_object_get(run, EV_ERROR)) && json_object_get(run, EV_OPS) == NULL;
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
int evidence_check_record(const json_t *run, struct hb_err *err)
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
    const char *prev = NULL;
    double prev_v = 0;

    if (lat == NULL || json_is_null(lat)) return 0;
    if (!json_is_object(lat)) return hb_fail(err, -EINVAL, "%s is not an object", what);
    if (check_rate(lat, what, EV_MEAN, err) < 0) return -EINVAL;
    for (size_t i = 0; i < EV_LATENCY_FIGURES; i++) {
        const json_t *v = json_object_get(lat, ev_latency_order[i].key);
        if (v == NULL) continue;
        if (check_rate(lat, what, ev_latency_order[i].key, err) < 0) return -EINVAL;
        if (prev != NULL && json_number_value(v) < prev_v)
            return hb_fail(err, -EINVAL, "%s%s is %.10g, below %s%s %.10g: out of order", what,
                           ev_latency_order[i].key, json_number_value(v), what, prev, prev_v);
        prev = ev_latency_order[i].key;
        prev_v = json_number_value(v);
    }
    return 0;
}

/* How far ops_per_s may be from ops / window_s: the writers' rounding is 1e-15 of it. */
#define RATE_TOLERANCE 1e-6

/*
 * A run that has its ops (a count) and window_s (seconds, finite, not
 * negative) has the ops_per_s they give, as run and merge write it: ops /
 * window_s, 0 for an empty window (within RATE_TOLERANCE of it, or of 1 op/s).
 * A finite but impossible rate (1e308 for 176 k ops in a second) is refused
 * here, before a median of 63 digits is printed from it.
 */
static int check_ops_rate(const json_t *run, struct hb_err *err)
{
    const json_t *ops = json_object_get(run, EV_OPS), *win = json_object_get(run, EV_WINDOW_S);
    const json_t *rate = json_object_get(run, EV_OPS_PER_S);
    double want, got, w;

    if (ops == NULL || win == NULL || rate == NULL) return 0;
    if (!json_is_integer(ops) || json_integer_value(ops) < 0)
        return hb_fail(err, -EINVAL, EV_OPS " is not a count >= 0");
    if (check_rate(run, "", EV_WINDOW_S, err) < 0) return -EINVAL;
    w = json_number_value(win);
    want = w > 0 ? (double)json_integer_value(ops) / w : 0;
    got = json_number_value(rate);
    if (fabs(got - want) <= RATE_TOLERANCE * fmax(want, 1)) return 0;
    return hb_fail(err, -EINVAL,
                   EV_OPS_PER_S " is %.10g, not " EV_OPS " / " EV_WINDOW_S
                                " (%lld / %.10g = %.10g)",
                   got, (long long)json_integer_value(ops), w, want);
}

/*
 * A run's figures are possible ones: ops/s and CPU per op finite and not
 * negative, ops/s what its ops and window give (when it has them), each
 * latency object (the run's, the open loop's service time, each phase's) in
 * order from min to max.
 */
int evidence_check_figures(const json_t *run, struct hb_err *err)
{
    const json_t *open = json_object_get(run, EV_OPEN_LOOP);
    json_t *phases = json_object_get(run, EV_PHASES), *p;
    const char *name;
    char what[96];

    if (check_rate(run, "", EV_OPS_PER_S, err) < 0 || check_ops_rate(run, err) < 0 ||
        check_rate(run, "", EV_CLIENT_CPU_NS_PER_OP, err) < 0 ||
        check_latency(json_object_get(run, EV_LATENCY_NS), EV_LATENCY_NS ".", err) < 0)
        return -EINVAL;
    if (json_is_object(open) &&
        (check_rate(open, EV_OPEN_LOOP ".", EV_ACHIEVED_OPS_PER_S, err) < 0 ||
         check_latency(json_object_get(open, EV_SERVICE_LATENCY_NS),
                       EV_OPEN_LOOP "." EV_SERVICE_LATENCY_NS ".", err) < 0))
        return -EINVAL;
    json_object_foreach(phases, name, p)
    {
        snprintf(what, sizeof(what), EV_PHASES ".%.32s." EV_LATENCY_NS ".", name);
        if (check_latency(json_object_get(p, EV_LATENCY_NS), what, err) < 0) return -EINVAL;
    }
    return 0;
}

/* Where a run went: its label when it has one, else its endpoint's address. */
static const char *key_place(const struct run_key *k)
{
    return k->label[0] != '\0' ? k->label : k->endpoint;
}

int evidence_key_order(const struct run_key *a, const struct run_key *b)
{
    int d = (a->label[0] != '\0') - (b->label[0] != '\0');

    if (d == 0) d = strcmp(key_place(a), key_place(b));
    if (d == 0) d = strcmp(a->mode, b->mode);
    if (d == 0) d = strcmp(a->proto, b->proto);
    if (d == 0) d = (a->rate > b->rate) - (a->rate < b->rate);
    if (d == 0) d = (a->size > b->size) - (a->size < b->size);
    if (d == 0) d = (a->connections > b->connections) - (a->connections < b->connections);
    if (d == 0) d = (a->pipeline > b->pipeline) - (a->pipeline < b->pipeline);
    return d;
}

int evidence_run_cell(const json_t *run, struct run_key *k, bool *counts, struct hb_err *err)
{
    if (evidence_check_record(run, err) < 0) return -EINVAL;
    if (evidence_run_placeholder(run)) return 1;
    if (!evidence_run_key(run, k))
        return hb_fail(err, -EINVAL, "lacks endpoint, mode, size, connections or pipeline");
    if (evidence_check_figures(run, err) < 0) return -EINVAL;
    *counts = evidence_run_counts(run);
    return 0;
}
