/*
 * json: the evidence document, built with jansson (see docs/evidence.md).
 * Every run keeps its whole latency histogram, its non-zero counters encoded
 * as one string (evidence/counts_code.h), so runs from threads, processes or
 * hosts can be merged exactly later; each histogram's counts are one line.
 */
#include "report/report.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evidence/hist_json.h"
#include "evidence/schema.h"
#include "host/place.h"
#include "outfile.h"
#include "report/profile.h"
#include "report/services.h"

/* A string fact, or null when it could not be read. */
static json_t *fact(const char *s)
{
    return s[0] != '\0' ? json_string(s) : json_null();
}

/*
 * Ops and p99 per interval: {interval_ms, end_ms, ops[], p99_ns[], beyond}, or
 * null when the run has none (it never reached its window).
 */
static json_t *series_json(const struct series_result *s)
{
    json_t *ops, *p99;

    if (s->interval_ns == 0 || s->n == 0) return json_null();
    ops = json_array();
    p99 = json_array();
    for (size_t i = 0; i < s->n; i++) {
        json_array_append_new(ops, json_integer((json_int_t)s->ops[i]));
        json_array_append_new(p99, json_integer((json_int_t)s->p99_ns[i]));
    }
    return json_pack("{s:I, s:f, s:o, s:o, s:I}", EV_SERIES_INTERVAL_MS,
                     (json_int_t)(s->interval_ns / NS_PER_MS), EV_SERIES_END_MS,
                     (double)s->end_ns / 1e6, EV_SERIES_OPS, ops, EV_SERIES_P99_NS, p99,
                     EV_SERIES_BEYOND, (json_int_t)s->beyond);
}

/* Each phase that was measured: its percentiles and whole histogram. */
static json_t *phases_json(const struct load_result *res)
{
    json_t *o = json_object();

    for (int p = 0; p < PHASES; p++) {
        const struct hist *h = res->phase[p];
        if (h == NULL || h->total == 0) continue;
        json_object_set_new(o, load_phase_name((enum load_phase)p),
                            json_pack("{s:o, s:o}", EV_LATENCY_NS, report_latency_json(h),
                                      EV_HISTOGRAM, report_hist_json(h)));
    }
    return o;
}

/* Replies by status class; {} for protocols without a status. */
static json_t *status_json(const struct load_result *res)
{
    static const char *const names[6] = { "other", "1xx", "2xx", "3xx", "4xx", "5xx" };
    json_t *o = json_object();
    uint64_t any = 0;

    for (size_t k = 0; k < ARRAY_LEN(names); k++)
        any += res->status[k];
    if (any == 0) return o;
    for (size_t k = 0; k < ARRAY_LEN(names); k++)
        json_object_set_new(o, names[k], json_integer((json_int_t)res->status[k]));
    return o;
}

/* Replies by the kind of request they answered, by the codec's names: {"PING": 0, "SET": n...}. */
static json_t *kinds_json(const struct codec_ops *codec, const struct load_result *res)
{
    json_t *o = json_object();

    for (size_t k = 0; k < CODEC_KINDS && codec->kind_names[k] != NULL; k++)
        json_object_set_new(o, codec->kind_names[k],
                            json_integer((json_int_t)res->replies_kind[k]));
    return o;
}

/*
 * The run's first bad reply (struct op_bad): the kind it failed as, how many
 * bytes were kept, whether they begin the reply, and them as text (escaped,
 * text_safe_n) and in hex (exact); null when there was none.
 */
static json_t *bad_reply_json(const struct op_bad *b)
{
    char text[4 * OP_BAD_BYTES + 4], hex[2 * OP_BAD_BYTES + 1];

    if (b->t_ns == 0) return json_null();
    for (size_t i = 0; i < b->len; i++)
        snprintf(hex + 2 * i, 3, "%02x", b->bytes[i]);
    hex[2 * (size_t)b->len] = '\0';
    text_safe_n(text, sizeof(text), (const char *)b->bytes, b->len);
    return json_pack("{s:s, s:i, s:b, s:s, s:s}", "kind", op_err_name(b->kind), "bytes",
                     (int)b->len, "from_start", b->from_start, "text", text, "hex", hex);
}

static json_t *errors_json(const struct load_result *res)
{
    json_t *o = json_object();

    for (int k = 0; k < OP_ERR_KINDS; k++)
        json_object_set_new(o, op_err_name((enum op_err)k),
                            json_integer((json_int_t)res->errors[k]));
    return o;
}

/* A counter divided by ops (ns per op), or unavailable. */
static json_t *per_op_json(const struct ctr_val *v, uint64_t ops)
{
    if (!v->ok) return evidence_unavailable_json(v->why);
    if (ops == 0) return evidence_unavailable_json("no op completed");
    return json_real((double)v->v / (double)ops);
}

static json_t *cpu_json(const struct run_record *r)
{
    const struct observe_result *o = &r->obs;
    uint64_t ops = r->res.ops;
    struct ctr_val sum = o->server_cpu_ns;

    if (sum.ok) sum.v += r->res.client_cpu_ns;
    return json_pack(
        "{s:I, s:f, s:o, s:s, s:o, s:o, s:o, s:o, s:s, s:o, s:o, s:o}", "client_ns",
        (json_int_t)r->res.client_cpu_ns, "client_ns_per_op", report_cpu_ns_per_op(r), "server_ns",
        report_ctr_json(&o->server_cpu_ns), EV_OBS_SERVER_SOURCE,
        observe_server_source_name(o->server_source), EV_OBS_SERVER_NS_PER_OP,
        per_op_json(&o->server_cpu_ns, ops), EV_OBS_CLIENT_PLUS_SERVER_NS_PER_OP,
        per_op_json(&sum, ops), EV_OBS_SYSTEM_BUSY_NS, report_ctr_json(&o->system_busy_ns),
        EV_OBS_SYSTEM_NS_PER_OP, per_op_json(&o->system_busy_ns, ops), EV_OBS_SYSTEM_SOURCE,
        machine_cpu_source_name(o->system_source), "cgroup_ns", report_ctr_json(&o->cgroup_cpu_ns),
        EV_OBS_CGROUP_NS_PER_OP, per_op_json(&o->cgroup_cpu_ns, ops), "cgroup_throttled_us",
        report_ctr_json(&o->cgroup_throttled_us));
}

static json_t *sockets_json(const struct observe_result *o)
{
    json_t *share;

    if (o->client_ports.peak.ok && o->port_hi > o->port_lo)
        share = json_real((double)o->client_ports.peak.v / (double)(o->port_hi - o->port_lo + 1));
    else
        share = evidence_unavailable_json(o->client_ports.peak.ok ? "ip_local_port_range unreadable"
                                                                  : o->client_ports.peak.why);
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:[ii], s:o, s:i, s:I}", EV_HOP_TW_CLIENT,
                     report_gauge_json(&o->tw_client), EV_HOP_TW_SERVER,
                     report_gauge_json(&o->tw_server), EV_HOP_ESTABLISHED,
                     report_gauge_json(&o->established), EV_HOP_CLIENT_PORTS,
                     report_gauge_json(&o->client_ports), EV_HOP_LISTEN_QUEUE,
                     report_gauge_json(&o->listen_queue), EV_HOP_LISTEN_BACKLOG,
                     report_ctr_json(&o->listen_backlog), "port_range", (int)o->port_lo,
                     (int)o->port_hi, "port_share_peak", share, EV_OBS_SAMPLES, (int)o->samples,
                     EV_OBS_SAMPLE_MS, (json_int_t)(o->sample_ns / NS_PER_MS));
}

/* A share of the window's CPU time (window × CPUs allowed), or unavailable. */
static json_t *share_json(const struct ctr_val *v, const struct obs_other *x)
{
    if (!v->ok) return evidence_unavailable_json(v->why);
    if (x->window_ns == 0 || x->cpus == 0)
        return evidence_unavailable_json("no window or CPU count");
    return json_real((double)v->v / ((double)x->window_ns * x->cpus));
}

/* Other processes' CPU and steal over the window, and whether that made the run noisy. */
static json_t *other_json(const struct obs_other *x)
{
    return json_pack("{s:o, s:o, s:o, s:o, s:I, s:i, s:o, s:o, s:f, s:o}", "client_process_ns",
                     report_ctr_json(&x->self_ns), "named_ns", report_ctr_json(&x->named_ns),
                     "other_ns", report_ctr_json(&x->other_ns), EV_OBS_STEAL_NS,
                     report_ctr_json(&x->steal_ns), EV_OBS_WINDOW_NS, (json_int_t)x->window_ns,
                     EV_OBS_CPUS_ALLOWED, (int)x->cpus, EV_OBS_OTHER_SHARE,
                     share_json(&x->other_ns, x), EV_OBS_STEAL_SHARE, share_json(&x->steal_ns, x),
                     "threshold_cpus", x->threshold_cpus, EV_OBS_NOISY,
                     x->decided ? json_boolean(x->noisy) : json_null());
}

static json_t *observed_json(const struct run_record *r)
{
    const struct observe_result *o = &r->obs;
    json_t *net;

    if (!r->observed) return json_null();
    net = json_object();
    for (unsigned i = 0; i < OBS_NET_COUNT; i++)
        json_object_set_new(net, observe_net_name(i), report_ctr_json(&o->net[i]));
    return json_pack("{s:o, s:o, s:{s:i, s:o, s:o, s:o, s:o}, s:o, s:o}", EV_OBS_CPU, cpu_json(r),
                     EV_OBS_OTHER_CPU, other_json(&o->other), EV_OBS_MEMORY, "server_pids",
                     (int)o->server_pids, "server_pss_start", report_ctr_json(&o->pss_start),
                     EV_OBS_SERVER_PSS_END, report_ctr_json(&o->pss_end),
                     "cgroup_working_set_start", report_ctr_json(&o->ws_start),
                     EV_OBS_CGROUP_WS_END, report_ctr_json(&o->ws_end), EV_OBS_NET_DELTA, net,
                     EV_OBS_SOCKETS, sockets_json(o));
}

/* Where rate_basis_ops_per_s comes from: null for an absolute rate. */
static json_t *basis_from_json(const struct run_record *r)
{
    if (r->rate_share <= 0) return json_null();
    if (r->base == NULL) return json_string("cell");
    return json_string(r->base->given ? "given" : "probes");
}

/* The closed-loop probes a run's base is the median of: {runs, duration_s, ops_per_s[], ...}. */
static json_t *basis_probes_json(const struct run_record *r)
{
    const struct rate_base *b = r->base;
    json_t *each;

    if (r->rate_share <= 0 || b == NULL || b->given) return json_null();
    each = json_array();
    for (size_t i = 0; i < b->stat.n; i++)
        json_array_append_new(each, json_real(b->probes[i]));
    return json_pack("{s:I, s:f, s:o, s:f, s:f, s:f, s:f, s:f}", EV_RUNS, (json_int_t)b->stat.n,
                     EV_DURATION_S, (double)b->probe_ns / 1e9, EV_OPS_PER_S, each, EV_MEDIAN,
                     b->stat.median, EV_MIN, b->stat.min, EV_MAX, b->stat.max, EV_MEAN,
                     b->stat.mean, "sd", b->stat.sd);
}

/* The open-loop figures: asked and achieved rates; latency_ns is from the intended time. */
static json_t *open_loop_json(const struct run_record *r)
{
    const struct load_result *res = &r->res;
    json_t *o;

    if (r->cfg.rate <= 0 || res->service == NULL) return json_null();
    o = json_pack("{s:f, s:s, s:o, s:o, s:f, s:b, s:o, s:o}", EV_RATE, r->cfg.rate, EV_ARRIVALS,
                  r->cfg.poisson ? "poisson" : "constant", EV_RATE_SHARE,
                  r->rate_share > 0 ? json_real(r->rate_share) : json_null(), EV_RATE_BASIS,
                  r->rate_share > 0 ? json_real(r->rate_basis) : json_null(), EV_ACHIEVED_OPS_PER_S,
                  report_ops_per_s(r), EV_SATURATED, report_saturated(r), EV_SERVICE_LATENCY_NS,
                  report_latency_json(res->service), EV_SERVICE_HISTOGRAM,
                  report_hist_json(res->service));
    if (o == NULL) return NULL;
    /* The part of window_s after the intended window, finishing the ops intended inside it. */
    json_object_set_new(o, "drain_s", json_real((double)res->drain_ns / 1e9));
    json_object_set_new(o, EV_INTENDED_OPS_PER_S, json_real(report_rate_intended(r)));
    json_object_set_new(o, EV_KEPT_OPS_PER_S, json_real(report_rate_kept(r)));
    json_object_set_new(o, EV_RATE_BASIS_FROM, basis_from_json(r));
    json_object_set_new(o, EV_RATE_BASIS_PROBES, basis_probes_json(r));
    return o;
}

/* A figure that may be unreadable: the number, or null. */
static json_t *u64_or_null(bool ok, uint64_t v)
{
    return ok ? json_integer((json_int_t)v) : json_null();
}

/* Where each end of a lab --netns run ran, and for tcp-veth the pair and its bytes. */
static json_t *netns_json(const struct record_netns *p)
{
    json_t *veth = json_null();

    if (p->client_addr[0] != '\0')
        veth = json_pack("{s:s, s:s, s:s, s:s, s:i, s:o, s:o}", EV_VETH_CLIENT_IF, NETNS_IF_B,
                         EV_VETH_CLIENT_ADDR, p->client_addr, EV_VETH_SERVER_IF, NETNS_IF_A,
                         EV_VETH_SERVER_ADDR, p->server_addr, EV_VETH_PREFIX, NETNS_PREFIX,
                         EV_VETH_RX_BYTES, u64_or_null(p->veth_ok, p->veth.rx), EV_VETH_TX_BYTES,
                         u64_or_null(p->veth_ok, p->veth.tx));
    return json_pack("{s:s, s:s, s:s, s:I, s:o, s:o}", EV_MODE, netns_mode_name(p->mode),
                     EV_NETNS_CLIENT, p->client, EV_NETNS_SERVER, p->server, EV_NETNS_CLIENT_INO,
                     (json_int_t)p->client_ino, EV_NETNS_SERVER_INO,
                     u64_or_null(p->server_ino != 0, p->server_ino), EV_NETNS_VETH, veth);
}

/* One end of a placement: where it ran, its namespace's inode and its address when known. */
static json_t *place_end_json(const char *where, uint64_t ino, const char *addr)
{
    json_t *end = json_pack("{s:s}", EV_PLACE_WHERE, where);

    if (ino != 0) json_object_set_new(end, EV_PLACE_NS_INODE, json_integer((json_int_t)ino));
    if (addr[0] != '\0') json_object_set_new(end, EV_PLACE_ADDR, json_string(addr));
    return end;
}

/*
 * Where each end ran: a process of this host's namespace against a server
 * on its loopback or a socket file ("host"; "remote" past --allow-remote),
 * or the --netns namespaces of the record. The key says what the run crossed:
 * "netns same" when both ends were in one namespace (lab --netns other's tcp
 * and unix runs, in A, too), "netns other" when the veth pair was between them.
 */
/*
 * Whether the load threads and the server's shared a CPU (host/coloc.h):
 * {share, samples, same}, share null when no sample counted; or
 * {unavailable: why} when not observed.
 */
static json_t *colocated_json(const struct run_record *r)
{
    const struct coloc_result *c = &r->obs.coloc;
    double share;

    if (!r->observed) return evidence_unavailable_json("not observed");
    if (!c->observed) return evidence_unavailable_json(c->why);
    return json_pack("{s:o, s:I, s:I}", EV_PLACE_COLOC_SHARE,
                     coloc_share(c, &share) ? json_real(share) : json_null(),
                     EV_PLACE_COLOC_SAMPLES, (json_int_t)c->both, EV_PLACE_COLOC_SAME,
                     (json_int_t)c->same);
}

static json_t *placement_json(const struct run_record *r)
{
    const struct record_netns *p = &r->netns;
    char key[32];
    json_t *o;

    if (p->mode == NETNS_NONE) {
        o = json_pack("{s:s, s:s, s:o, s:o}", EV_PLACE_KIND, EV_PLACE_KIND_PROC, EV_PLACE_KEY,
                      EV_PLACE_KIND_PROC, EV_PLACE_CLIENT, place_end_json("host", 0, ""),
                      EV_PLACE_SERVER,
                      place_end_json(endpoint_is_local(&r->cfg.ep) ? "host" : "remote", 0, ""));
    } else {
        snprintf(key, sizeof(key), "netns %s",
                 strcmp(p->client, p->server) == 0 ? "same" : "other");
        o = json_pack("{s:s, s:s, s:o, s:o}", EV_PLACE_KIND, EV_PLACE_KIND_NETNS, EV_PLACE_KEY, key,
                      EV_PLACE_CLIENT, place_end_json(p->client, p->client_ino, p->client_addr),
                      EV_PLACE_SERVER, place_end_json(p->server, p->server_ino, p->server_addr));
    }
    if (o != NULL) json_object_set_new(o, EV_PLACE_COLOCATED, colocated_json(r));
    return o;
}

/*
 * How the run's threads waited: "uring" only when every one of them used its
 * ring (--wait uring where io_uring cannot be set up polls: "epoll").
 */
static const char *report_wait_name(const struct load_cfg *c, const struct load_result *res)
{
    if (c->uring_wait)
        return res->ring_threads > 0 && res->ring_threads == c->threads ? "uring" : "epoll";
    return c->block_wait ? "block" : "epoll";
}

/* run --procs: the load processes, each one's share and figures, and their memory. */
static json_t *procs_json(const struct record_procs *p)
{
    json_t *list = json_array(), *o;
    uint64_t bytes = 0;
    double per = 0;
    bool grew = record_procs_growth(p, &bytes, &per);

    for (unsigned k = 0; k < p->n; k++) {
        const struct record_proc *c = &p->proc[k];
        json_array_append_new(
            list,
            json_pack(
                "{s:i, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o}", "pid",
                (int)p->pid[k], EV_CONNECTIONS, (int)c->conns, EV_THREADS, (int)c->threads, EV_OPS,
                (json_int_t)c->ops, EV_REQUESTS, (json_int_t)c->requests, EV_REPLIES,
                (json_int_t)c->replies, EV_ERRORS_TOTAL, (json_int_t)c->errors, EV_CONNECTS,
                (json_int_t)c->connects, EV_RECONNECTS, (json_int_t)c->reconnects, "open_start",
                (json_int_t)c->open_start, "open_end", (json_int_t)c->open_end, EV_CLIENT_CPU_NS,
                (json_int_t)c->client_cpu_ns, EV_SVC_PSS_START, report_ctr_json(&c->pss_start),
                EV_SVC_PSS_END, report_ctr_json(&c->pss_end)));
    }
    o = json_pack("{s:i, s:o, s:o, s:o}", "n", (int)p->n, "memory_bytes",
                  grew ? json_integer((json_int_t)bytes) : json_null(),
                  "memory_bytes_per_connection", grew ? json_real(per) : json_null(), "children",
                  list);
    return o;
}

json_t *report_run_json(const struct run_record *r)
{
    const struct load_cfg *c = &r->cfg;
    const struct load_result *res = &r->res;
    uint64_t errors = load_errors_total(res);
    bool valid = report_run_valid(r);

    json_t *run = json_pack(
        "{s:i, s:i, s:s, s:s, s:s, s:s, s:s, s:I, s:i, s:i, s:i, s:f, s:I, s:f, s:f, s:I, s:f, s:I, s:I, s:I, "
        "s:o, s:b, s:b, s:f, s:f, s:o, s:o, s:o, s:o}",
        EV_CELL, (int)r->cell, EV_REP, (int)r->rep, EV_PROTO, r->proto, EV_ENDPOINT, c->ep.text,
        EV_TRANSPORT, report_transport(r), EV_MODE, report_mode_name(c->mode), EV_CLOSE,
        load_close_name(c->close), EV_SIZE, (json_int_t)c->size, EV_CONNECTIONS, (int)c->conns,
        EV_THREADS, (int)c->threads, EV_PIPELINE, (int)c->pipeline, "warmup_s",
        (double)c->warmup_ns / 1e9, "count", (json_int_t)c->count, EV_DURATION_S,
        (double)c->duration_ns / 1e9, "timeout_s", (double)c->timeout_ns / 1e9, EV_OPS,
        (json_int_t)res->ops, EV_WINDOW_S, (double)res->window_ns / 1e9, EV_CONNECTS,
        (json_int_t)res->connects, EV_ERRORS_TOTAL, (json_int_t)errors, EV_CLIENT_CPU_NS,
        (json_int_t)res->client_cpu_ns, EV_ERRORS, errors_json(res), EV_VALID, valid,
        EV_INTERRUPTED, res->interrupted, EV_OPS_PER_S, report_ops_per_s(r),
        EV_CLIENT_CPU_NS_PER_OP, report_cpu_ns_per_op(r), EV_LATENCY_NS,
        report_latency_json(res->lat), EV_HISTOGRAM, report_hist_json(res->lat), EV_PHASES,
        phases_json(res), EV_OBSERVED, observed_json(r));

    if (run == NULL) return NULL;
    json_object_set_new(run, EV_WAIT, json_string(report_wait_name(c, res)));
    /* the window's start on the wall clock (UTC): when to look in other monitoring for it */
    json_object_set_new(run, EV_WINDOW_START,
                        res->window_start_unix_ns > 0
                            ? json_real((double)res->window_start_unix_ns / 1e9)
                            : json_null());
    if (c->uring_wait) {
        /* The threads that waited on an io_uring; the others could not set one up and polled. */
        json_object_set_new(run, "uring_threads", json_integer((json_int_t)res->ring_threads));
        /* How those threads' kept connections received: one multishot recv per socket, or a
         * recv armed per reply (a kernel without multishot receive); and the receives armed. */
        json_object_set_new(run, "uring_receive",
                            json_string(res->ring_ms_threads == 0                   ? "per reply"
                                        : res->ring_ms_threads == res->ring_threads ? "multishot"
                                                                                    : "mixed"));
        json_object_set_new(run, "uring_receives_armed", json_integer((json_int_t)res->ring_arms));
        if (res->ring_err != 0)
            json_object_set_new(run, "uring_error", json_string(strerror(res->ring_err)));
    }
    json_object_set_new(run, "size_of", json_string(r->size_is_reply ? "reply" : "request"));
    json_object_set_new(run, "first_bad_reply", bad_reply_json(&res->bad));
    json_object_set_new(run, EV_REQUESTS, json_integer((json_int_t)res->requests));
    json_object_set_new(run, EV_REPLIES, json_integer((json_int_t)res->replies));
    if (c->codec != NULL && c->codec->kind_names != NULL)
        json_object_set_new(run, EV_REPLIES_BY_KIND, kinds_json(c->codec, res));
    if (r->prepared > 0)
        json_object_set_new(run, EV_PREPARED, json_integer((json_int_t)r->prepared));
    json_object_set_new(run, EV_RECONNECTS, json_integer((json_int_t)res->reconnects));
    json_object_set_new(run, EV_RETRIED, json_integer((json_int_t)res->retried));
    json_object_set_new(run, EV_RETRY, json_string(load_retry_name(c->retry)));
    json_object_set_new(run, EV_CONNECT_RETRIES, json_integer((json_int_t)res->connect_retries));
    json_object_set_new(run, EV_STDERR_REPLIES, json_integer((json_int_t)res->stderr_replies));
    json_object_set_new(run, EV_STATUS, status_json(res));
    json_object_set_new(run, EV_OPEN_LOOP, open_loop_json(r));
    json_object_set_new(run, EV_SERIES, series_json(&res->series));
    json_object_set_new(run, EV_PLACEMENT, placement_json(r));
    if (r->netns.mode != NETNS_NONE) json_object_set_new(run, EV_NETNS, netns_json(&r->netns));
    if (r->agent != NULL) json_object_set(run, EV_AGENT, r->agent);
    if (r->obs.profiled) json_object_set_new(run, EV_PROFILE, profile_run_json(r));
    json_object_set_new(run, EV_CONNECTIONS_OPEN,
                        json_pack("{s:I, s:I}", "start", (json_int_t)res->open_start, "end",
                                  (json_int_t)res->open_end));
    if (c->nsrc > 0) {
        char text[ENDPOINT_MAX_SOURCES * 48];
        json_object_set_new(
            run, EV_SOURCE_ADDRESSES,
            json_string(endpoint_sources_text(c->src, c->nsrc, text, sizeof(text))));
    }
    if (r->procs != NULL) json_object_set_new(run, EV_PROCS, procs_json(r->procs));
    if (report_services_json(run, r) < 0) {
        json_decref(run);
        return NULL;
    }
    return run;
}

/*
 * The sysctls: each value, or null when unreadable (as before), and under
 * the same names in sysctl_unavailable why it was unreadable, or null.
 */
static void sysctl_json(const struct machine *m, json_t **values, json_t **unavailable)
{
    *values = json_object();
    *unavailable = json_object();
    for (int i = 0; i < PROBE_SYSCTLS; i++) {
        const struct probe_sysctl *s = &m->sysctl[i];
        json_object_set_new(*values, s->name, fact(s->value));
        json_object_set_new(*unavailable, s->name, fact(s->why));
    }
}

json_t *report_machine_json(const struct machine *m)
{
    json_t *sysctl, *unavailable;

    sysctl_json(m, &sysctl, &unavailable);
    return json_pack("{s:o, s:o, s:o, s:i, s:i, s:o, s:o, s:o}", "hostname", fact(m->hostname),
                     "kernel", fact(m->kernel), "cpu_model", fact(m->cpu_model), "cpus_online",
                     (int)m->ncpus_online, "cpus_allowed", (int)m->ncpus_allowed, "clocksource",
                     fact(m->clocksource), "sysctl", sysctl, "sysctl_unavailable", unavailable);
}

/*
 * Where this process runs when its container says so through the environment:
 * a pod's manifest sets HOPBENCH_POD_NAME, _POD_NAMESPACE and _NODE_NAME from
 * the downward API and HOPBENCH_CONTAINER_NAME by hand (deploy/k8s/). kind is
 * "pod" with a pod name, else "container"; a variable that is unset, empty or
 * not UTF-8 is null. Nothing is added outside a container that says so.
 */
/*
 * A container's QoS class and the CPUs its cpuset gives it: the class from
 * the kubelet's cgroup path when this process can see it, else from the
 * requests and limits the manifest hands down (HOPBENCH_CPU_REQUEST, _LIMIT,
 * HOPBENCH_MEMORY_REQUEST, _LIMIT from resourceFieldRef); null when neither.
 */
static void place_qos(json_t *place)
{
    const char *class = NULL, *from = NULL;
    char cpus[256], *cg;
    FILE *f = fopen("/proc/self/cgroup", "re");

    cg = f != NULL ? calloc(1, 65536) : NULL;
    if (cg != NULL) {
        size_t n = fread(cg, 1, 65535, f);

        cg[n] = '\0';
        class = place_qos_cgroup(cg);
        from = class != NULL ? "cgroup" : NULL;
        free(cg);
    }
    if (f != NULL) fclose(f);
    if (class == NULL) {
        class =
            place_qos_resources(getenv("HOPBENCH_CPU_REQUEST"), getenv("HOPBENCH_CPU_LIMIT"),
                                getenv("HOPBENCH_MEMORY_REQUEST"), getenv("HOPBENCH_MEMORY_LIMIT"));
        from = class != NULL ? "resources" : NULL;
    }
    json_object_set_new(place, "qos_class", class != NULL ? json_string(class) : json_null());
    json_object_set_new(place, "qos_from", from != NULL ? json_string(from) : json_null());
    json_object_set_new(place, "cpuset",
                        place_cpuset_self(cpus, sizeof(cpus)) == 0 ? json_string(cpus)
                                                                   : json_null());
}

static void place_where(json_t *place)
{
    static const char *const where[][2] = { { EV_PLACE_POD, "HOPBENCH_POD_NAME" },
                                            { "namespace", "HOPBENCH_POD_NAMESPACE" },
                                            { EV_PLACE_NODE, "HOPBENCH_NODE_NAME" },
                                            { EV_PLACE_CONTAINER, "HOPBENCH_CONTAINER_NAME" } };
    const char *pod = getenv(where[0][1]);

    if (pod == NULL && getenv(where[3][1]) == NULL) return;
    json_object_set_new(place, EV_PLACE_KIND,
                        json_string(pod != NULL ? EV_PLACE_KIND_POD : EV_PLACE_KIND_CONTAINER));
    for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
        const char *v = getenv(where[i][1]);
        json_t *s = v != NULL && v[0] != '\0' ? json_string(v) : NULL;

        json_object_set_new(place, where[i][0], s != NULL ? s : json_null());
    }
    place_qos(place);
}

static json_t *place_json(const struct place *p)
{
    char client[128], server[128];
    json_t *place;

    place_format(p, PLACE_CLIENT, client, sizeof(client));
    place_format(p, PLACE_SERVER, server, sizeof(server));
    place =
        json_pack("{s:s, s:s, s:s, s:s}", EV_PLACE_PIN, place_name(p->mode), "client_cpus", client,
                  "server_cpus", server, "server_cpus_source", place_source_name(p->server_source));
    if (place != NULL) place_where(place);
    return place;
}

/* What a document and a JSONL header share: schema, tool, command line, machine, placement. */
static json_t *meta_json(const struct report_meta *meta)
{
    struct evidence_head head = { .command = meta->command,
                                  .argv = json_array(),
                                  .started_unix_s = meta->started_unix_s,
                                  .machine = report_machine_json(meta->machine),
                                  .placement = place_json(meta->place),
                                  .server = json_string(meta->server ? meta->server : "external") };

    for (int i = 0; i < meta->argc; i++)
        json_array_append_new(head.argv, json_string(meta->argv[i]));
    return evidence_head_json(&head);
}

json_t *report_json(const struct report_meta *meta, const struct run_record *recs, size_t n)
{
    json_t *runs = json_array(), *doc = meta_json(meta);
    bool valid = true;

    for (size_t i = 0; i < n; i++) {
        json_t *run = report_run_json(&recs[i]);
        /* json_pack fails on a string that is not UTF-8 (a unix path may hold any byte). */
        valid &= run != NULL && report_run_valid(&recs[i]);
        if (run == NULL)
            run = json_pack("{s:s}", EV_ERROR, "this run could not be encoded as JSON");
        json_array_append_new(runs, run);
    }
    if (doc == NULL) {
        json_decref(runs);
        return NULL;
    }
    json_object_set_new(doc, EV_ELAPSED_S, json_real((double)meta->elapsed_ns / 1e9));
    evidence_head_verdict(doc, meta->interrupted, valid);
    json_object_set_new(doc, EV_RUNS, runs);
    if (meta->plan != NULL) json_object_set(doc, EV_PLAN, meta->plan);
    if (meta->summary != NULL) json_object_set(doc, EV_SUMMARY, meta->summary);
    if (meta->bottom != NULL) json_object_set(doc, EV_BOTTOM_LINE, meta->bottom);
    if (meta->profile != NULL) json_object_set(doc, EV_PROFILE, meta->profile);
    return doc;
}

/*
 * rec as one line through outfile_append: whole or not at all, with the stop
 * signals held, so that the second Ctrl-C (whose handler exits) never lands
 * between a part written and its removal. Returns 0 or a negative errno.
 */
static int jsonl_write(struct outfile *o, const json_t *rec, struct hb_err *err)
{
    char *line = rec != NULL ? json_dumps(rec, JSON_COMPACT) : NULL;
    sigset_t held, old;
    size_t len;
    int rc;

    if (line == NULL) return hb_fail(err, -ENOMEM, "cannot write %s: out of memory", o->path);
    len = strlen(line);
    line[len++] = '\n'; /* over the terminating NUL: the line is written by length */
    stop_signal_set(&held);
    pthread_sigmask(SIG_BLOCK, &held, &old);
    rc = outfile_append(o, line, len, err);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    free(line);
    return rc;
}

int report_jsonl_header(struct outfile *o, const struct report_meta *meta, struct hb_err *err)
{
    json_t *rec = json_pack("{s:s}", EV_RECORD, EV_RECORD_HEADER), *m = meta_json(meta);
    int rc;

    if (rec != NULL && m != NULL && json_object_update(rec, m) == 0) {
        if (meta->plan != NULL) json_object_set(rec, EV_PLAN, meta->plan);
        rc = jsonl_write(o, rec, err);
    } else {
        rc = hb_fail(err, -ENOMEM, "cannot write %s: the header could not be encoded", o->path);
    }
    json_decref(m);
    json_decref(rec);
    return rc;
}

int report_jsonl_append(struct outfile *o, const struct run_record *r, struct hb_err *err)
{
    json_t *rec = json_pack("{s:s}", EV_RECORD, EV_RECORD_RUN), *run = report_run_json(r);
    int rc;

    if (rec != NULL && run != NULL && json_object_update(rec, run) == 0)
        rc = jsonl_write(o, rec, err);
    else
        rc = hb_fail(err, -ENOMEM, "cannot write %s: the run could not be encoded", o->path);
    json_decref(run);
    json_decref(rec);
    return rc;
}

/* A newline and depth spaces. */
static int dump_break(FILE *f, int depth)
{
    return fprintf(f, "\n%*s", depth, "") < 0 ? -EIO : 0;
}

/*
 * v as json_dumpf with JSON_INDENT(1) | JSON_COMPACT writes it, a member per
 * line, but each histogram's counts on one line, should they be a list, and
 * each run's series on one: one number per line would make them four fifths
 * of the document.
 */
static int dump_indented(FILE *f, json_t *v, int depth)
{
    const char *key;
    json_t *item;
    size_t i, n = json_is_object(v) ? json_object_size(v) : json_array_size(v);
    int rc = 0;

    if (n == 0) return json_dumpf(v, f, JSON_ENCODE_ANY | JSON_COMPACT) != 0 ? -EIO : 0;
    if (fputc(json_is_object(v) ? '{' : '[', f) == EOF) return -EIO;
    if (json_is_object(v)) {
        i = 0;
        json_object_foreach(v, key, item)
        {
            json_t *k = json_string(key);
            if (rc == 0 && i++ > 0 && fputc(',', f) == EOF) rc = -EIO;
            if (rc == 0) rc = dump_break(f, depth + 1);
            if (rc == 0 &&
                (k == NULL || json_dumpf(k, f, JSON_ENCODE_ANY) != 0 || fputc(':', f) == EOF))
                rc = -EIO;
            json_decref(k);
            if (rc == 0 && ((strcmp(key, EV_COUNTS) == 0 && json_is_array(item)) ||
                            (strcmp(key, EV_SERIES) == 0 && json_is_object(item))))
                rc = json_dumpf(item, f, JSON_COMPACT) != 0 ? -EIO : 0;
            else if (rc == 0)
                rc = dump_indented(f, item, depth + 1);
        }
    } else {
        json_array_foreach(v, i, item)
        {
            if (rc == 0 && i > 0 && fputc(',', f) == EOF) rc = -EIO;
            if (rc == 0) rc = dump_break(f, depth + 1);
            if (rc == 0) rc = dump_indented(f, item, depth + 1);
        }
    }
    if (rc == 0) rc = dump_break(f, depth);
    if (rc == 0 && fputc(json_is_object(v) ? '}' : ']', f) == EOF) rc = -EIO;
    return rc;
}

/* outfile_replace's writer of a whole document, ending in a newline. */
static int dump_doc(FILE *f, void *doc, struct hb_err *err)
{
    UNUSED(err);
    if (dump_indented(f, doc, 0) < 0) return -EIO;
    return fputc('\n', f) == EOF ? -EIO : 0;
}

int report_json_write(const char *path, json_t *doc, struct hb_err *err)
{
    return outfile_replace(path, dump_doc, doc, err);
}
