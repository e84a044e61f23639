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
    return (struct run_latency){ num(lat, EV_P50), num(lat, EV_P99), num(lat, EV_P999),
                                 num(lat, EV_MEAN) };
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
    v->noisy = json_is_true(json_object_get(other, EV_OBS_NOISY));
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

    memset(v, 0, sizeof(*v));
    v->cell =
        json_is_integer(cell) && json_integer_value(cell) >= 0 && json_integer_value(cell) <= 65535
            ? (int)json_integer_value(cell)
            : -1;
    v->endpoint = json_string_value(json_object_get(run, EV_ENDPOINT));
    v->label = json_string_value(json_object_get(run, EV_LABEL));
    v->transport = json_string_value(json_object_get(run, EV_TRANSPORT));
    v->connections = (unsigned)json_integer_value(json_object_get(run, EV_CONNECTIONS));
    v->threads = (unsigned)json_integer_value(json_object_get(run, EV_THREADS));
    v->valid = json_is_true(json_object_get(run, EV_VALID));
    v->interrupted = json_is_true(json_object_get(run, EV_INTERRUPTED));
    v->saturated = json_is_true(json_object_get(open, EV_SATURATED));
    v->ops = (uint64_t)json_integer_value(json_object_get(run, EV_OPS));
    v->requests = (uint64_t)json_integer_value(json_object_get(run, EV_REQUESTS));
    v->errors_total = (uint64_t)json_integer_value(json_object_get(run, EV_ERRORS_TOTAL));
    v->ops_per_s = num(run, EV_OPS_PER_S);
    v->rate = isnan(num(open, EV_RATE)) ? 0 : num(open, EV_RATE);
    v->latency = latency_of(json_object_get(run, EV_LATENCY_NS));
    v->connect =
        latency_of(json_object_get(json_object_get(phases, EV_PHASE_CONNECT), EV_LATENCY_NS));
    v->response =
        latency_of(json_object_get(json_object_get(phases, EV_PHASE_RESPONSE), EV_LATENCY_NS));
    v->close = latency_of(json_object_get(json_object_get(phases, EV_PHASE_CLOSE), EV_LATENCY_NS));
    v->client_cpu_ns_per_op = num(run, EV_CLIENT_CPU_NS_PER_OP);
    v->nerrors = counts_of(run, EV_ERRORS, v->errors);
    v->nstatus = counts_of(run, EV_STATUS, v->status);
    observed_of(v, json_object_get(run, EV_OBSERVED));
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
