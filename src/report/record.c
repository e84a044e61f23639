/*
 * record: the figures every report derives from a run record (see record.h).
 */
#include "report/record.h"

#include <stdio.h>
#include <string.h>

double report_ops_per_s(const struct run_record *r)
{
    if (r->res.window_ns == 0) return 0;
    return (double)r->res.ops * 1e9 / (double)r->res.window_ns;
}

double report_cpu_ns_per_op(const struct run_record *r)
{
    if (r->res.ops == 0) return 0;
    return (double)r->res.client_cpu_ns / (double)r->res.ops;
}

bool record_procs_growth(const struct record_procs *p, uint64_t *bytes, double *per_conn)
{
    uint64_t sum = 0, conns = 0;

    for (unsigned k = 0; k < p->n; k++) {
        const struct record_proc *c = &p->proc[k];
        if (!c->pss_start.ok || !c->pss_end.ok || c->pss_end.v < c->pss_start.v) return false;
        sum += c->pss_end.v - c->pss_start.v;
        conns += c->conns;
    }
    *bytes = sum;
    *per_conn = conns > 0 ? (double)sum / (double)conns : 0;
    return p->n > 0;
}

const char *report_transport(const struct run_record *r)
{
    return r->transport != NULL ? r->transport : endpoint_transport(&r->cfg.ep);
}

const char *report_run_name(const struct run_record *r)
{
    return r->by_transport ? report_transport(r) : endpoint_name(&r->cfg.ep);
}

void record_netns_begin(struct record_netns *p, const struct netns *ns, enum netns_side side)
{
    memset(p, 0, sizeof(*p));
    p->mode = ns->mode;
    p->client = netns_side_name(ns, side);
    p->server = netns_side_name(ns, NETNS_A);
    p->client_ino = (uint64_t)ns->ino[side];
    p->server_ino = (uint64_t)ns->ino[NETNS_A];
    if (side != NETNS_B) return;
    snprintf(p->client_addr, sizeof(p->client_addr), "%s", ns->addr_b);
    snprintf(p->server_addr, sizeof(p->server_addr), "%s", ns->addr_a);
    p->veth_ok = netns_veth_bytes(ns, &p->veth) == 0;
}

void record_netns_end(struct record_netns *p, const struct netns *ns)
{
    struct netns_veth_bytes after;

    if (p->veth_ok) p->veth_ok = netns_veth_bytes(ns, &after) == 0;
    if (!p->veth_ok) return;
    p->veth.rx = after.rx - p->veth.rx;
    p->veth.tx = after.tx - p->veth.tx;
}

double report_rate_intended(const struct run_record *r)
{
    if (r->cfg.rate <= 0 || r->cfg.duration_ns == 0 || r->cfg.count != 0) return r->cfg.rate;
    return (double)(r->res.ops + load_errors_total(&r->res)) * 1e9 / (double)r->cfg.duration_ns;
}

/*
 * The last ops intended inside the schedule's span (the duration, or count
 * ops at the rate) end their own service time after it even when the server
 * keeps up: that much of the window past the span (up to the slowest op's
 * service time) is not held against the rate, the rest is backlog the server
 * had not kept up with.
 */
double report_rate_kept(const struct run_record *r)
{
    const struct load_result *res = &r->res;
    uint64_t own = res->service != NULL ? res->service->max : 0;
    uint64_t span = r->cfg.duration_ns, over, window;

    if (r->cfg.count != 0 && r->cfg.rate > 0)
        span = (uint64_t)((double)r->cfg.count * 1e9 / r->cfg.rate);
    over = res->window_ns > span ? res->window_ns - span : 0;
    window = res->window_ns - (over < own ? over : own);
    return window > 0 ? (double)res->ops * 1e9 / (double)window : 0;
}

bool report_saturated(const struct run_record *r)
{
    return r->cfg.rate > 0 && report_rate_kept(r) < 0.99 * report_rate_intended(r);
}

bool report_saturated_invalid(const struct run_record *r)
{
    return report_saturated(r) && !r->res.interrupted;
}

bool report_run_valid(const struct run_record *r)
{
    return load_result_valid(&r->res) && !report_saturated_invalid(r);
}

bool report_run_counts(const struct run_record *r)
{
    return report_run_valid(r) && !r->res.interrupted;
}

static double per_op_us(const struct ctr_val *v, uint64_t ops, bool observed)
{
    if (!observed || !v->ok || ops == 0) return -1;
    return (double)v->v / (double)ops / 1000.0;
}

struct report_cost report_cost_of(const struct run_record *r)
{
    struct report_cost c;

    c.cli = r->res.ops ? report_cpu_ns_per_op(r) / 1000.0 : -1;
    c.srv = per_op_us(&r->obs.server_cpu_ns, r->res.ops, r->observed);
    c.sys = per_op_us(&r->obs.system_busy_ns, r->res.ops, r->observed);
    c.sum = c.cli >= 0 && c.srv >= 0 ? c.cli + c.srv : -1;
    return c;
}

const char *report_mode_name(enum load_mode mode)
{
    return mode == LOAD_CONNECT ? "connect" : "reuse";
}
