/*
 * observe: snapshots and the sock_diag sampler around a run (see observe.h).
 */
#include "observe.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "probe.h"
#include "sockdiag.h"

static const char *const net_names[] = {
#define X(n) n,
    OBS_NET_NAMES
#undef X
};

const char *observe_net_name(unsigned i)
{
    return i < OBS_NET_COUNT ? net_names[i] : "?";
}

static struct ctr_val val_ok(uint64_t v)
{
    struct ctr_val c = { .ok = true, .v = v };

    return c;
}

static struct ctr_val val_na(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static struct ctr_val val_na(const char *fmt, ...)
{
    struct ctr_val c = { .ok = false };
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c.why, sizeof(c.why), fmt, ap);
    va_end(ap);
    return c;
}

/* The delta end - start, unavailable when either is, or when it went backwards. */
static struct ctr_val val_delta(const struct ctr_val *a, const struct ctr_val *b)
{
    if (!a->ok) return *a;
    if (!b->ok) return *b;
    if (b->v < a->v) return val_na("%s", "counter went backwards");
    return val_ok(b->v - a->v);
}

/* Σ read(pid) over the server pids; the first pid that cannot be read makes it unavailable. */
static struct ctr_val server_sum(const struct observe *o, struct ctr_val (*read)(pid_t))
{
    uint64_t sum = 0;

    if (o->nall == 0) return val_na("%s", "no server process given (--server-pid)");
    for (unsigned i = 0; i < o->nall; i++) {
        struct ctr_val v = read(o->all[i]);
        if (!v.ok) return v;
        sum += v.v;
    }
    return val_ok(sum);
}

static struct ctr_val server_cpu(const struct observe *o)
{
    return server_sum(o, proc_cpu_ns);
}

static struct ctr_val server_pss(const struct observe *o)
{
    return server_sum(o, proc_pss_bytes);
}

/* The pids to watch: the given ones, plus their descendants with --server-tree. */
static void collect_pids(struct observe *o)
{
    o->nall = 0;
    for (unsigned i = 0; i < o->cfg.npids && o->nall < OBS_MAX_PIDS; i++) {
        if (!o->cfg.tree) {
            o->all[o->nall++] = o->cfg.pids[i];
            continue;
        }
        ssize_t n = proc_tree(o->cfg.pids[i], o->all + o->nall, OBS_MAX_PIDS - o->nall);
        if (n <= 0) {
            o->all[o->nall++] = o->cfg.pids[i]; /* reported as unreadable later */
            continue;
        }
        o->nall += (size_t)n < OBS_MAX_PIDS - o->nall ? (unsigned)n : OBS_MAX_PIDS - o->nall;
    }
    o->res.server_pids = o->nall;
}

/* After the first sample: what it saw is the start, and the peak so far. */
static void gauge_open(struct obs_gauge *g)
{
    g->start = g->end;
    g->peak = g->end;
}

static void gauge_set(struct obs_gauge *g, struct ctr_val v)
{
    /* A readable value beats an unreadable peak; among readable ones the larger wins. */
    if (v.ok ? !g->peak.ok || v.v > g->peak.v : !g->peak.ok) g->peak = v;
    g->end = v;
}

static void sample_tcp(struct observe *o)
{
    struct observe_result *r = &o->res;
    struct sockdiag_tcp t;
    uint64_t held = 0;
    int rc = sockdiag_tcp_count(endpoint_port(&o->cfg.ep), o->cfg.ep.addr.ss_family, &t);

    if (rc < 0) {
        struct ctr_val na = val_na("sock_diag: %s", strerror(-rc));
        gauge_set(&r->tw_client, na);
        gauge_set(&r->tw_server, na);
        gauge_set(&r->established, na);
        gauge_set(&r->client_ports, na);
        gauge_set(&r->listen_queue, na);
        return;
    }
    for (int s = 1; s < SOCKDIAG_TCP_NSTATES; s++)
        held += t.client_state[s];
    gauge_set(&r->tw_client, val_ok(t.client_state[6])); /* TCP_TIME_WAIT */
    gauge_set(&r->tw_server, val_ok(t.server_state[6]));
    gauge_set(&r->established, val_ok(t.server_state[1])); /* TCP_ESTABLISHED */
    gauge_set(&r->client_ports, val_ok(held));
    gauge_set(&r->listen_queue,
              t.have_listener ? val_ok(t.listen_rqueue) : val_na("%s", "no listener on this host"));
    r->listen_backlog =
        t.have_listener ? val_ok(t.listen_backlog) : val_na("%s", "no listener on this host");
}

static void sample_unix(struct observe *o)
{
    struct observe_result *r = &o->res;
    struct sockdiag_unix u;
    const char *name = o->cfg.ep.text + strlen("unix:");
    int rc = sockdiag_unix_count(name, &u);

    if (rc < 0) {
        struct ctr_val na = val_na("sock_diag: %s", strerror(-rc));
        gauge_set(&r->established, na);
        gauge_set(&r->listen_queue, na);
        return;
    }
    gauge_set(&r->established, val_ok(u.established));
    gauge_set(&r->listen_queue,
              u.have_listener ? val_ok(u.listen_rqueue) : val_na("%s", "no listener on this host"));
    r->listen_backlog =
        u.have_listener ? val_ok(u.listen_backlog) : val_na("%s", "no listener on this host");
}

static void sample(struct observe *o)
{
    if (o->cfg.ep.kind == ENDPOINT_TCP)
        sample_tcp(o);
    else
        sample_unix(o);
    o->res.samples++;
}

static void *sampler_main(void *arg)
{
    struct observe *o = arg;
    struct pollfd pfd = { .fd = o->stop_fd, .events = POLLIN };
    int ms = (int)(o->cfg.sample_ns / 1000000);

    /* Out of the way of what is measured: the lowest priority. */
    setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
    while (poll(&pfd, 1, ms > 0 ? ms : 1) == 0)
        sample(o);
    return NULL;
}

static void read_port_range(struct observe_result *r)
{
    char line[64];

    if (probe_read_line("/proc/sys/net/ipv4/ip_local_port_range", line, sizeof(line)) == 0 &&
        sscanf(line, "%u %u", &r->port_lo, &r->port_hi) == 2)
        return;
    r->port_lo = r->port_hi = 0;
}

static void init_result(struct observe *o)
{
    struct observe_result *r = &o->res;
    struct ctr_val never = val_na("%s", "not sampled");

    memset(r, 0, sizeof(*r));
    r->tw_client.start = r->tw_client.peak = r->tw_client.end = never;
    r->tw_server = r->established = r->client_ports = r->listen_queue = r->tw_client;
    r->listen_backlog = never;
    if (o->cfg.ep.kind != ENDPOINT_TCP) {
        struct ctr_val tw = val_na("%s", "AF_UNIX has no TIME_WAIT state");
        struct ctr_val ports = val_na("%s", "AF_UNIX uses no ports");
        r->tw_client.start = r->tw_client.peak = r->tw_client.end = tw;
        r->tw_server = r->tw_client;
        r->client_ports.start = r->client_ports.peak = r->client_ports.end = ports;
    }
    read_port_range(r);
}

static void snapshot_cgroup(struct observe *o, struct ctr_val *cpu, struct ctr_val *thr)
{
    struct cgroup_cpu cc;

    if (o->cfg.cgroup == NULL) {
        *cpu = *thr = val_na("%s", "no cgroup given (--server-cgroup)");
        return;
    }
    if (cgroup_cpu_read(o->cfg.cgroup, &cc) < 0) {
        *cpu = *thr = val_na("cannot read cgroup %s", o->cfg.cgroup);
        return;
    }
    *cpu = cc.usage_ns;
    *thr = cc.throttled_us;
}

static struct ctr_val cgroup_ws(const struct observe *o)
{
    if (o->cfg.cgroup == NULL) return val_na("%s", "no cgroup given (--server-cgroup)");
    return cgroup_working_set(o->cfg.cgroup);
}

static struct obs_gauge *gauge_at(struct observe_result *r, int i)
{
    struct obs_gauge *g[5] = { &r->tw_client, &r->tw_server, &r->established, &r->client_ports,
                               &r->listen_queue };

    return g[i];
}

/* The first sample opens the gauges; a baseline from before the run, if any, is the start. */
static void open_gauges(struct observe_result *r, const struct observe_cfg *cfg)
{
    for (int i = 0; i < 5; i++) {
        struct obs_gauge *g = gauge_at(r, i);
        gauge_open(g);
        if (cfg->have_base && cfg->base[i].ok && g->start.ok) g->start = cfg->base[i];
    }
}

void observe_baseline(struct observe_cfg *cfg)
{
    struct observe *o = calloc(1, sizeof(*o));

    cfg->have_base = false;
    if (o == NULL) return;
    o->cfg = *cfg;
    init_result(o);
    sample(o);
    for (int i = 0; i < 5; i++)
        cfg->base[i] = gauge_at(&o->res, i)->end;
    cfg->have_base = true;
    free(o);
}

/*
 * The slow readings first (PSS walks page tables, sock_diag dumps every
 * socket), then the counters that must bracket the window tightly, in the
 * reverse order of observe_end.
 */
int observe_begin(struct observe *o, const struct observe_cfg *cfg)
{
    memset(o, 0, sizeof(*o));
    o->cfg = *cfg;
    o->stop_fd = -1;
    init_result(o);
    collect_pids(o);
    o->res.pss_start = server_pss(o);
    o->res.ws_start = cgroup_ws(o);
    sample(o);
    open_gauges(&o->res, cfg);
    o->net0 = calloc(1, sizeof(*o->net0));
    if (o->net0 != NULL && netstat_read(o->net0) < 0) {
        free(o->net0);
        o->net0 = NULL;
    }
    snapshot_cgroup(o, &o->cg_cpu0, &o->cg_thr0);
    o->srv_cpu0 = server_cpu(o);
    o->cpu0_ok = procstat_read(&o->cpu0) == 0;
    if (cfg->sample_ns == 0) return 0;
    o->stop_fd = eventfd(0, EFD_CLOEXEC);
    if (o->stop_fd == -1) return -errno;
    o->sampling = pthread_create(&o->sampler, NULL, sampler_main, o) == 0;
    return o->sampling ? 0 : -EAGAIN;
}

static void end_net(struct observe *o)
{
    struct observe_result *r = &o->res;
    struct netstat *net1 = calloc(1, sizeof(*net1));
    bool ok = o->net0 != NULL && net1 != NULL && netstat_read(net1) == 0;

    for (unsigned i = 0; i < OBS_NET_COUNT; i++)
        r->net[i] = ok ? netstat_delta(o->net0, net1, net_names[i])
                       : val_na("%s", "cannot read /proc/net/netstat or /proc/net/snmp");
    free(net1);
    free(o->net0);
    o->net0 = NULL;
}

void observe_end(struct observe *o, struct observe_result *res)
{
    struct observe_result *r = &o->res;
    struct cpu_jiffies cpu1;
    struct ctr_val v, thr;

    if (o->sampling) {
        eventfd_write(o->stop_fd, 1);
        pthread_join(o->sampler, NULL);
        o->sampling = false;
    }
    if (o->stop_fd >= 0) close(o->stop_fd);
    o->stop_fd = -1;
    if (o->cpu0_ok && procstat_read(&cpu1) == 0)
        r->system_busy_ns = val_ok(procstat_busy_ns(&o->cpu0, &cpu1));
    else
        r->system_busy_ns = val_na("%s", "cannot read /proc/stat");
    v = server_cpu(o);
    r->server_cpu_ns = val_delta(&o->srv_cpu0, &v);
    snapshot_cgroup(o, &v, &thr);
    r->cgroup_cpu_ns = val_delta(&o->cg_cpu0, &v);
    r->cgroup_throttled_us = val_delta(&o->cg_thr0, &thr);
    end_net(o);
    sample(o);
    r->pss_end = server_pss(o);
    r->ws_end = cgroup_ws(o);
    *res = *r;
}

void observe_window_hook(void *arg, bool begin)
{
    struct observe_hook *h = arg;

    if (begin) {
        observe_begin(&h->o, &h->cfg);
        return;
    }
    observe_end(&h->o, h->out);
    *h->done = true;
}
