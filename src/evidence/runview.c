/*
 * runview: a run record into typed figures (see runview.h), every key
 * spelled as schema.h spells it.
 */
#include "evidence/runview.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "evidence/check.h"
#include "evidence/schema.h"

/* o[key] as a number, or NAN (absent, null, or {"unavailable": why}). */
static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);

    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* o[a][b] as num gives it. */
static double num2(const json_t *o, const char *a, const char *b)
{
    return num(json_object_get(o, a), b);
}

static struct run_latency latency_of(const json_t *lat)
{
    return (struct run_latency){ .min = num(lat, EV_MIN),
                                 .p50 = num(lat, EV_P50),
                                 .p90 = num(lat, EV_P90),
                                 .p99 = num(lat, EV_P99),
                                 .p999 = num(lat, EV_P999),
                                 .p9999 = num(lat, EV_P9999),
                                 .max = num(lat, EV_MAX),
                                 .mean = num(lat, EV_MEAN) };
}

/* o[key] as a string, or NULL. */
static const char *str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/*
 * o[key] as a non-negative integer into *out, with bit in *have; *out 0 and
 * the bit clear when o lacks one.
 */
static void count_of(const json_t *o, const char *key, uint64_t *out, unsigned *have, unsigned bit)
{
    *out = 0;
    if (evidence_get_u64(o, key, out) == 0) *have |= bit;
}

/* o[key] as a flag into *out, with bit in *have when o holds one. */
static void flag_of(const json_t *o, const char *key, bool *out, unsigned *have, unsigned bit)
{
    const json_t *b = json_object_get(o, key);

    *out = json_is_true(b);
    if (json_is_boolean(b)) *have |= bit;
}

/* Every phase of run's phases, in its order, into v. */
static void phases_of(struct run_view *v, const json_t *run)
{
    json_t *phases = json_object_get(run, EV_PHASES), *p;
    const char *key;

    json_object_foreach(phases, key, p)
    {
        if (v->nphase == RUN_VIEW_MAX_PHASES) break;
        v->phase[v->nphase++] =
            (struct run_phase){ key, latency_of(json_object_get(p, EV_LATENCY_NS)) };
    }
}

static struct run_gauge gauge_of(const json_t *hop, const char *what)
{
    return (struct run_gauge){ num2(hop, what, EV_GAUGE_START), num2(hop, what, EV_GAUGE_PEAK) };
}

static void hop_of(struct run_hop *h, const json_t *hop)
{
    h->transport = json_string_value(json_object_get(hop, EV_TRANSPORT));
    h->tw_client = gauge_of(hop, EV_HOP_TW_CLIENT);
    h->tw_server = gauge_of(hop, EV_HOP_TW_SERVER);
    h->established = gauge_of(hop, EV_HOP_ESTABLISHED);
    h->listen_queue = gauge_of(hop, EV_HOP_LISTEN_QUEUE);
}

/*
 * The non-negative integers of the object run[what], in its order, into out
 * (at most RUN_VIEW_MAX_KINDS).
 */
static unsigned counts_of(const json_t *run, const char *what, struct run_count *out)
{
    json_t *o = json_object_get(run, what), *v;
    const char *key;
    unsigned n = 0;

    json_object_foreach(o, key, v)
    {
        if (n == RUN_VIEW_MAX_KINDS) break;
        if (!json_is_integer(v) || json_integer_value(v) < 0) continue;
        out[n++] = (struct run_count){ key, (uint64_t)json_integer_value(v) };
    }
    return n;
}

/* The services of array a into out: each one's name and figures. */
static unsigned services_of(const json_t *a, struct run_service *out)
{
    unsigned n = 0;

    for (size_t i = 0; i < json_array_size(a) && n < RUN_VIEW_MAX_SVC; i++) {
        const json_t *s = json_array_get(a, i);
        out[n++] = (struct run_service){ json_string_value(json_object_get(s, EV_SVC_NAME)),
                                         num(s, EV_SVC_CPU_NS_PER_OP), num(s, EV_SVC_PSS_END),
                                         num(s, EV_SVC_WS_END) };
    }
    return n;
}

static void observed_of(struct run_view *v, const json_t *obs)
{
    const json_t *cpu = json_object_get(obs, EV_OBS_CPU);
    const json_t *other = json_object_get(obs, EV_OBS_OTHER_CPU);
    const json_t *watch = json_object_get(obs, EV_OBS_WATCH);
    const json_t *net = json_object_get(obs, EV_OBS_NET_DELTA);

    v->system_busy_ns = num(cpu, EV_OBS_SYSTEM_BUSY_NS);
    v->system_ns_per_op = num(cpu, EV_OBS_SYSTEM_NS_PER_OP);
    v->system_source = json_string_value(json_object_get(cpu, EV_OBS_SYSTEM_SOURCE));
    v->server_ns_per_op = num(cpu, EV_OBS_SERVER_NS_PER_OP);
    v->client_plus_server_ns_per_op = num(cpu, EV_OBS_CLIENT_PLUS_SERVER_NS_PER_OP);
    v->cgroup_ns_per_op = num(cpu, EV_OBS_CGROUP_NS_PER_OP);
    v->server_source = json_string_value(json_object_get(cpu, EV_OBS_SERVER_SOURCE));
    v->cpus_allowed = num(other, EV_OBS_CPUS_ALLOWED);
    v->other_share = num(other, EV_OBS_OTHER_SHARE);
    v->steal_share = num(other, EV_OBS_STEAL_SHARE);
    v->window_ns = num(other, EV_OBS_WINDOW_NS);
    flag_of(other, EV_OBS_NOISY, &v->noisy, &v->have, RUN_HAVE_NOISY);
    v->server_pss_end = num2(obs, EV_OBS_MEMORY, EV_OBS_SERVER_PSS_END);
    v->cgroup_ws_end = num2(obs, EV_OBS_MEMORY, EV_OBS_CGROUP_WS_END);
    v->nsvc = services_of(json_object_get(obs, EV_OBS_SERVICES), v->svc);
    v->sum_ns_per_op = num2(obs, EV_OBS_SERVICES_TOTAL, EV_OBS_SUM_NS_PER_OP);
    hop_of(&v->front, json_object_get(obs, EV_OBS_SOCKETS));
    v->front.transport = NULL;
    for (size_t i = 0; i < json_array_size(watch) && v->nwatch < RUN_VIEW_MAX_WATCH; i++)
        hop_of(&v->watch[v->nwatch++], json_array_get(watch, i));
    v->listen_overflows = num(net, EV_NET_LISTEN_OVERFLOWS);
    v->listen_drops = num(net, EV_NET_LISTEN_DROPS);
    v->syn_retrans = num(net, EV_NET_SYN_RETRANS);
}

void run_view_fill(const json_t *run, struct run_view *v)
{
    const json_t *phases = json_object_get(run, EV_PHASES);
    const json_t *open = json_object_get(run, EV_OPEN_LOOP);
    const json_t *agent = json_object_get(run, EV_AGENT);
    const json_t *cell = json_object_get(run, EV_CELL);
    uint64_t n;

    memset(v, 0, sizeof(*v));
    v->cell = -1;
    if (json_is_integer(cell) && json_integer_value(cell) >= 0 &&
        json_integer_value(cell) <= 65535) {
        v->cell = (int)json_integer_value(cell);
        v->have |= RUN_HAVE_CELL;
    }
    v->endpoint = str(run, EV_ENDPOINT);
    v->label = str(run, EV_LABEL);
    v->transport = str(run, EV_TRANSPORT);
    v->proto = str(run, EV_PROTO);
    v->mode = str(run, EV_MODE);
    v->close_by = str(run, EV_CLOSE);
    v->wait = str(run, EV_WAIT);
    count_of(run, EV_CONNECTIONS, &n, &v->have, RUN_HAVE_CONNECTIONS);
    v->connections = (unsigned)n;
    count_of(run, EV_THREADS, &n, &v->have, RUN_HAVE_THREADS);
    v->threads = (unsigned)n;
    flag_of(run, EV_VALID, &v->valid, &v->have, RUN_HAVE_VALID);
    flag_of(run, EV_INTERRUPTED, &v->interrupted, &v->have, RUN_HAVE_INTERRUPTED);
    flag_of(open, EV_SATURATED, &v->saturated, &v->have, RUN_HAVE_SATURATED);
    count_of(run, EV_OPS, &v->ops, &v->have, RUN_HAVE_OPS);
    v->requests = (uint64_t)json_integer_value(json_object_get(run, EV_REQUESTS));
    count_of(run, EV_ERRORS_TOTAL, &v->errors_total, &v->have, RUN_HAVE_ERRORS_TOTAL);
    v->ops_per_s = num(run, EV_OPS_PER_S);
    v->client_cpu_ns_per_op = num(run, EV_CLIENT_CPU_NS_PER_OP);
    v->rep = num(run, EV_REP);
    v->size = num(run, EV_SIZE);
    v->pipeline = num(run, EV_PIPELINE);
    v->connects = num(run, EV_CONNECTS);
    v->reconnects = num(run, EV_RECONNECTS);
    v->duration_s = num(run, EV_DURATION_S);
    v->window_s = num(run, EV_WINDOW_S);
    v->window_start = num(run, EV_WINDOW_START);
    v->rate = num(open, EV_RATE);
    if (isnan(v->rate))
        v->rate = 0;
    else
        v->have |= RUN_HAVE_RATE;
    v->rate_share = num(open, EV_RATE_SHARE);
    v->achieved_ops_per_s = num(open, EV_ACHIEVED_OPS_PER_S);
    v->service_latency = latency_of(json_object_get(open, EV_SERVICE_LATENCY_NS));
    v->latency = latency_of(json_object_get(run, EV_LATENCY_NS));
    v->connect =
        latency_of(json_object_get(json_object_get(phases, EV_PHASE_CONNECT), EV_LATENCY_NS));
    v->response =
        latency_of(json_object_get(json_object_get(phases, EV_PHASE_RESPONSE), EV_LATENCY_NS));
    v->close = latency_of(json_object_get(json_object_get(phases, EV_PHASE_CLOSE), EV_LATENCY_NS));
    phases_of(v, run);
    v->nerrors = counts_of(run, EV_ERRORS, v->errors);
    v->nstatus = counts_of(run, EV_STATUS, v->status);
    observed_of(v, json_object_get(run, EV_OBSERVED));
    v->coloc_share =
        num2(json_object_get(run, EV_PLACEMENT), EV_PLACE_COLOCATED, EV_PLACE_COLOC_SHARE);
    v->agent = json_is_object(agent);
    v->nagent = services_of(json_object_get(agent, EV_OBS_SERVICES), v->agent_svc);
}

int run_view_of(const json_t *run, struct run_view *v, struct hb_err *err)
{
    static const char *const need[] = { EV_CELL,         EV_ENDPOINT,  EV_TRANSPORT,
                                        EV_CONNECTIONS,  EV_THREADS,   EV_OPS,
                                        EV_ERRORS_TOTAL, EV_VALID,     EV_INTERRUPTED,
                                        EV_OPS_PER_S,    EV_LATENCY_NS };
    int rc = evidence_check_record(run, err);

    if (rc < 0) return rc;
    if (evidence_run_placeholder(run)) return 1;
    for (size_t i = 0; i < ARRAY_LEN(need); i++)
        if (json_object_get(run, need[i]) == NULL)
            return hb_fail(err, -EINVAL, "a run without \"%s\"", need[i]);
    if (!json_is_integer(json_object_get(run, EV_CELL)) || num(run, EV_CELL) < 0 ||
        num(run, EV_CELL) > 65535 || !json_is_string(json_object_get(run, EV_ENDPOINT)) ||
        !json_is_string(json_object_get(run, EV_TRANSPORT)) ||
        !json_is_boolean(json_object_get(run, EV_VALID)) ||
        !json_is_boolean(json_object_get(run, EV_INTERRUPTED)) ||
        !json_is_object(json_object_get(run, EV_LATENCY_NS)))
        return hb_fail(err, -EINVAL,
                       "a run whose cell, endpoint, transport, valid, interrupted or latency_ns "
                       "is not of its type");
    run_view_fill(run, v);
    return 0;
}

const struct run_hop *run_view_watch(const struct run_view *v, const char *t)
{
    for (unsigned i = 0; i < v->nwatch; i++)
        if (v->watch[i].transport != NULL && strcmp(v->watch[i].transport, t) == 0)
            return &v->watch[i];
    return NULL;
}

const struct run_service *run_view_service(const struct run_view *v, const char *name)
{
    for (unsigned i = 0; i < v->nsvc; i++)
        if (v->svc[i].name != NULL && strcmp(v->svc[i].name, name) == 0) return &v->svc[i];
    return NULL;
}

const char *run_view_hop_transport(const struct run_view *v)
{
    const char *arm = evidence_label_arm(v->label, NULL);

    return arm != NULL ? arm : v->transport;
}

double run_view_metric(const struct run_view *v, enum summary_metric m)
{
    switch (m) {
    case METRIC_OPS_PER_S:
        return v->ops_per_s;
    case METRIC_P50:
        return v->latency.p50;
    case METRIC_MEAN:
        return v->latency.mean;
    case METRIC_P99:
        return v->latency.p99;
    case METRIC_P999:
        return v->latency.p999;
    case METRIC_CPU_PER_OP:
        return v->client_cpu_ns_per_op;
    case METRICS:
        break;
    }
    return NAN;
}
