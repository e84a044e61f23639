/*
 * observe: snapshots and the sock_diag sampler around a run (see observe.h).
 */
#include "host/observe.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "host/probe.h"
#include "host/sockdiag.h"
#include "util.h"

static const char *const net_names[] = {
#define X(n) n,
    OBS_NET_NAMES
#undef X
};

const char *observe_net_name(unsigned i)
{
    return i < OBS_NET_COUNT ? net_names[i] : "?";
}

const char *observe_server_source_name(enum obs_server_source s)
{
    return s == OBS_SERVER_PIDS ? "pids" : s == OBS_SERVER_CGROUP ? "cgroup" : "none";
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

/* ---- the server's processes ---------------------------------------------------------------- */

static struct ctr_val exited_during(pid_t pid)
{
    return val_na("pid %d exited during the run", (int)pid);
}

/* Records pid's start time in *ticks; not ok if it is not running now. */
static struct ctr_val pid_identify(pid_t pid, uint64_t *ticks)
{
    struct proc_stat st;
    int rc = proc_stat_read(pid, &st);

    if (rc == -ESRCH) return val_na("pid %d: no such process", (int)pid);
    if (rc < 0) return val_na("/proc/%d/stat: %s", (int)pid, strerror(-rc));
    if (proc_state_exited(st.state)) return val_na("pid %d had exited", (int)pid);
    *ticks = st.start_ticks;
    return val_ok(0);
}

/* Records each server pid's start time; not ok if one is not running now. */
static struct ctr_val server_identify(struct observe *o)
{
    for (unsigned i = 0; i < o->cfg.npids; i++) {
        struct ctr_val v = pid_identify(o->cfg.pids[i], &o->start_ticks[i]);
        if (!v.ok) return v;
    }
    return val_ok(0);
}

/* Whether pid is still the running process that started at ticks. */
static bool pid_same(pid_t pid, uint64_t ticks)
{
    struct proc_stat st;

    return proc_stat_read(pid, &st) == 0 && !proc_state_exited(st.state) && st.start_ticks == ticks;
}

/*
 * Whether every server pid is still the process it was at the start: not
 * gone, not a zombie (an unreaped exit), not replaced by a new process with
 * the pid. Not ok, naming the first that is not.
 */
static struct ctr_val server_still_running(const struct observe *o)
{
    if (!o->ident.ok) return o->ident;
    for (unsigned i = 0; i < o->cfg.npids; i++)
        if (!pid_same(o->cfg.pids[i], o->start_ticks[i])) return exited_during(o->cfg.pids[i]);
    return val_ok(0);
}

/* The pids to sum for pid: itself, or with tree its tree (into o->tree). */
static struct ctr_val pid_members(struct observe *o, pid_t pid, bool tree, unsigned *n)
{
    unsigned max =
        o->cfg.tree_max > 0 && o->cfg.tree_max < OBS_MAX_TREE ? o->cfg.tree_max : OBS_MAX_TREE;
    ssize_t got;

    if (!tree) {
        o->tree[0] = pid;
        *n = 1;
        return val_ok(0);
    }
    got = proc_tree(pid, o->tree, max);
    if (got == -ESRCH) return exited_during(pid);
    if (got < 0) return val_na("process tree of pid %d: %s", (int)pid, strerror((int)-got));
    if (got > (ssize_t)max)
        return val_na("the tree of pid %d has %zd processes, more than the %u counted; use "
                      "--server-cgroup",
                      (int)pid, got, max);
    *n = (unsigned)got;
    return val_ok(0);
}

/*
 * CPU of member j of the tree in o->tree (j == 0: the server pid itself):
 * its CPU clock and, with --server-tree, its reaped children's (cutime +
 * cstime), so a child that exits and is reaped by its parent stays counted.
 * A descendant that is gone adds nothing (its parent's reaped total has it).
 */
static struct ctr_val member_cpu(const struct observe *o, unsigned j, bool tree)
{
    struct ctr_val c = proc_cpu_ns(o->tree[j]);
    struct proc_stat st;

    if (!c.ok) return j == 0 ? exited_during(o->tree[0]) : val_ok(0);
    if (tree && proc_stat_read(o->tree[j], &st) == 0) c.v += clock_ticks_ns(st.children_ticks);
    return c;
}

/*
 * Σ over pids of what `members` sums of each pid's processes (itself, or with
 * tree its tree, listed in o->tree); *counted: the processes it counted.
 */
static struct ctr_val pids_sum(struct observe *o, const pid_t *pids, unsigned npids, bool tree,
                               struct ctr_val (*members)(const struct observe *o, unsigned n,
                                                         bool tree, unsigned *counted),
                               unsigned *counted)
{
    uint64_t sum = 0;

    *counted = 0;
    for (unsigned i = 0; i < npids; i++) {
        unsigned n = 0;
        struct ctr_val v = pid_members(o, pids[i], tree, &n);

        if (v.ok) v = members(o, n, tree, counted);
        if (!v.ok) return v;
        sum += v.v;
    }
    return val_ok(sum);
}

/* Σ CPU of the n processes in o->tree (see member_cpu); each counts, gone or not. */
static struct ctr_val tree_cpu(const struct observe *o, unsigned n, bool tree, unsigned *counted)
{
    uint64_t sum = 0;

    for (unsigned j = 0; j < n; j++) {
        struct ctr_val c = member_cpu(o, j, tree);
        if (!c.ok) return c;
        sum += c.v;
    }
    *counted += n;
    return val_ok(sum);
}

/* Σ CPU of pids (and with tree their trees) now; *members: how many processes. */
static struct ctr_val pids_cpu(struct observe *o, const pid_t *pids, unsigned npids, bool tree,
                               unsigned *members)
{
    return pids_sum(o, pids, npids, tree, tree_cpu, members);
}

/* Σ CPU of the server's processes now; *members: how many there were. */
static struct ctr_val server_cpu(struct observe *o, unsigned *members)
{
    *members = 0;
    if (o->cfg.npids == 0 && o->cfg.no_server != NULL) return val_na("%s", o->cfg.no_server);
    if (o->cfg.npids == 0) return val_na("%s", "no --server-pid or --server-cgroup given");
    return pids_cpu(o, o->cfg.pids, o->cfg.npids, o->cfg.tree, members);
}

/* Whether descendant pid has exited (gone or a zombie): it has no memory left to count. */
static bool member_gone(pid_t pid)
{
    struct proc_stat st;

    return proc_stat_read(pid, &st) < 0 || proc_state_exited(st.state);
}

/* Σ PSS of the n processes in o->tree; *summed counts them (one that is gone adds nothing). */
static struct ctr_val tree_pss(const struct observe *o, unsigned n, bool first_must,
                               unsigned *summed)
{
    uint64_t sum = 0;

    for (unsigned j = 0; j < n; j++) {
        struct ctr_val m = proc_pss_bytes(o->tree[j]);
        if (!m.ok && (j > 0 || !first_must) && member_gone(o->tree[j])) continue;
        if (!m.ok) return m;
        sum += m.v;
        (*summed)++;
    }
    return val_ok(sum);
}

/* Σ PSS of a pid's n processes in o->tree: the pid must be readable, a descendant may be gone. */
static struct ctr_val pid_tree_pss(const struct observe *o, unsigned n, bool tree, unsigned *summed)
{
    (void)tree;
    return tree_pss(o, n, true, summed);
}

/* Σ PSS of pids (and with tree their trees) now; *summed: how many processes. */
static struct ctr_val pids_pss(struct observe *o, const pid_t *pids, unsigned npids, bool tree,
                               unsigned *summed)
{
    return pids_sum(o, pids, npids, tree, pid_tree_pss, summed);
}

/* Σ PSS of the server's processes now; sets res.server_pids to how many were summed. */
static struct ctr_val server_pss(struct observe *o)
{
    if (o->cfg.npids == 0 && o->cfg.no_server != NULL) return val_na("%s", o->cfg.no_server);
    if (o->cfg.npids == 0) return val_na("%s", "no --server-pid given");
    return pids_pss(o, o->cfg.pids, o->cfg.npids, o->cfg.tree, &o->res.server_pids);
}

/*
 * The server's CPU over the window, from the two snapshots: not ok if a
 * server pid exited or was replaced. A tree's sum may fall by up to two clock
 * ticks a process read at the end (cutime and cstime are each read floored to
 * a tick: a worker reaped idle): that is 0 at tick precision. Beyond, a
 * process left the tree unreaped (an orphan adopted by init or a subreaper).
 */
static struct ctr_val tree_cpu_delta(bool tree, const struct ctr_val *a, const struct ctr_val *b,
                                     unsigned members, const struct ctr_val *running)
{
    if (!running->ok) return *running;
    if (!tree || !a->ok || !b->ok || b->v >= a->v) return val_delta(a, b);
    if (a->v - b->v <= clock_ticks_ns(2 * (uint64_t)members)) return val_ok(0);
    return val_na("%s", "a process left the server's tree with its CPU time (an orphan "
                        "reparented out of it); use --server-cgroup");
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

/* A hop's gauges: the loaded hop's (w < 0) or watched hop w's. */
struct hop_view {
    const struct endpoint *ep;
    struct obs_gauge *g[OBS_GAUGES];
    struct ctr_val *backlog;
};

static struct hop_view hop_at(struct observe *o, int w)
{
    struct observe_result *r = &o->res;
    struct hop_view h;

    if (w < 0) {
        struct hop_view m = { &o->cfg.ep,
                              { &r->tw_client, &r->tw_server, &r->established, &r->client_ports,
                                &r->listen_queue },
                              &r->listen_backlog };
        return m;
    }
    h.ep = &o->cfg.set->watch[w];
    for (int i = 0; i < OBS_GAUGES; i++)
        h.g[i] = &r->watch[w].g[i];
    h.backlog = &r->watch[w].listen_backlog;
    return h;
}

/* The hops sampled: the loaded one and the watched ones. */
static int hops(const struct observe *o)
{
    return 1 + (o->cfg.set != NULL ? (int)o->cfg.set->nwatch : 0);
}

static void sample_tcp(const struct hop_view *h)
{
    struct sockdiag_tcp t;
    uint64_t held = 0;
    int rc = sockdiag_tcp_count(endpoint_port(h->ep), h->ep->addr.ss_family, &t);

    if (rc < 0) {
        struct ctr_val na = val_na("sock_diag: %s", strerror(-rc));
        for (int i = 0; i < OBS_GAUGES; i++)
            gauge_set(h->g[i], na);
        return;
    }
    for (int s = 1; s < SOCKDIAG_TCP_NSTATES; s++)
        held += t.client_state[s];
    gauge_set(h->g[OBS_TW_CLIENT], val_ok(t.client_state[6])); /* TCP_TIME_WAIT */
    gauge_set(h->g[OBS_TW_SERVER], val_ok(t.server_state[6]));
    gauge_set(h->g[OBS_ESTABLISHED], val_ok(t.server_state[1])); /* TCP_ESTABLISHED */
    gauge_set(h->g[OBS_CLIENT_PORTS], val_ok(held));
    gauge_set(h->g[OBS_LISTEN_QUEUE],
              t.have_listener ? val_ok(t.listen_rqueue) : val_na("%s", "no listener on this host"));
    *h->backlog =
        t.have_listener ? val_ok(t.listen_backlog) : val_na("%s", "no listener on this host");
}

static void sample_unix(const struct hop_view *h)
{
    struct sockdiag_unix u;
    const char *name = h->ep->text + strlen("unix:");
    int rc = sockdiag_unix_count(name, &u);

    if (rc < 0) {
        struct ctr_val na = val_na("sock_diag: %s", strerror(-rc));
        gauge_set(h->g[OBS_ESTABLISHED], na);
        gauge_set(h->g[OBS_LISTEN_QUEUE], na);
        return;
    }
    gauge_set(h->g[OBS_ESTABLISHED], val_ok(u.established));
    gauge_set(h->g[OBS_LISTEN_QUEUE],
              u.have_listener ? val_ok(u.listen_rqueue) : val_na("%s", "no listener on this host"));
    *h->backlog =
        u.have_listener ? val_ok(u.listen_backlog) : val_na("%s", "no listener on this host");
}

static void sample(struct observe *o)
{
    for (int w = -1; w + 1 < hops(o); w++) {
        struct hop_view h = hop_at(o, w);
        if (h.ep->kind == ENDPOINT_TCP)
            sample_tcp(&h);
        else
            sample_unix(&h);
    }
    o->res.samples++;
}

/*
 * Out of the way of what is measured: on a CPU that neither the load threads
 * nor the server are pinned to, if there is one, and at idle priority, so it
 * runs only when a CPU has nothing else to run and never preempts them. Where
 * SCHED_IDLE is refused, nice 19.
 */
static void sampler_step_aside(const struct observe_cfg *cfg)
{
    struct sched_param idle = { .sched_priority = 0 };

    if (cfg->nsampler_cpus > 0)
        pthread_setaffinity_np(pthread_self(), sizeof(cfg->sampler_cpus), &cfg->sampler_cpus);
    if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle) != 0)
        setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
}

static void *sampler_main(void *arg)
{
    struct observe *o = arg;
    struct pollfd pfd = { .fd = o->stop_fd, .events = POLLIN };
    int ms = (int)(o->cfg.sample_ns / 1000000);

    prctl(PR_SET_NAME, "hb-sampler");
    sampler_step_aside(&o->cfg);
    while (poll(&pfd, 1, ms > 0 ? ms : 1) == 0)
        sample(o);
    return NULL;
}

uint64_t observe_default_period(enum load_mode mode, bool watching)
{
    return mode == LOAD_CONNECT || watching ? OBS_SAMPLE_CHURN_NS : OBS_SAMPLE_KEPT_NS;
}

void observe_set_sampler(struct observe_cfg *cfg, bool given, uint64_t given_ns,
                         enum load_mode mode, const struct place *pl)
{
    bool watching = cfg->set != NULL && cfg->set->nwatch > 0;

    cfg->sample_ns = given ? given_ns : observe_default_period(mode, watching);
    cfg->nsampler_cpus = place_spare_now(pl, &cfg->sampler_cpus);
}

static void read_port_range(struct observe_result *r)
{
    char line[64];

    if (probe_read_line("/proc/sys/net/ipv4/ip_local_port_range", line, sizeof(line)) == 0 &&
        sscanf(line, "%u %u", &r->port_lo, &r->port_hi) == 2)
        return;
    r->port_lo = r->port_hi = 0;
}

/* Before any sample: every gauge "not sampled", and what a unix hop has not at all. */
static void init_hop(const struct hop_view *h)
{
    struct ctr_val never = val_na("%s", "not sampled");

    for (int i = 0; i < OBS_GAUGES; i++)
        h->g[i]->start = h->g[i]->peak = h->g[i]->end = never;
    *h->backlog = never;
    if (h->ep->kind != ENDPOINT_TCP) {
        struct ctr_val tw = val_na("%s", "AF_UNIX has no TIME_WAIT state");
        struct ctr_val ports = val_na("%s", "AF_UNIX uses no ports");
        h->g[OBS_TW_CLIENT]->start = h->g[OBS_TW_CLIENT]->peak = h->g[OBS_TW_CLIENT]->end = tw;
        *h->g[OBS_TW_SERVER] = *h->g[OBS_TW_CLIENT];
        h->g[OBS_CLIENT_PORTS]->start = h->g[OBS_CLIENT_PORTS]->peak = h->g[OBS_CLIENT_PORTS]->end =
            ports;
    }
}

static void init_result(struct observe *o)
{
    struct observe_result *r = &o->res;

    memset(r, 0, sizeof(*r));
    r->set = o->cfg.set;
    r->sample_ns = o->cfg.sample_ns;
    for (int w = -1; w + 1 < hops(o); w++) {
        struct hop_view h = hop_at(o, w);
        init_hop(&h);
    }
    read_port_range(r);
}

static void snapshot_cgroup(const struct observe *o, struct ctr_val *cpu, struct ctr_val *thr)
{
    struct cgroup_cpu cc;

    if (o->cfg.cgroup == NULL) {
        *cpu = *thr = val_na("%s", "no --server-cgroup given");
        return;
    }
    if (cgroup_cpu_read_any(o->cfg.cgroup, NULL, &cc) < 0) {
        *cpu = *thr = val_na("cannot read cgroup %s", o->cfg.cgroup);
        return;
    }
    *cpu = cc.usage_ns;
    *thr = cc.throttled_us;
}

/* ---- named services (--service) ------------------------------------------------------------ */

static unsigned nservices(const struct observe *o)
{
    return o->cfg.set != NULL ? o->cfg.set->n : 0;
}

/* Service i's CPU now: its pid's clock, its tree's (reaped children included), its cgroup's. */
static struct ctr_val service_cpu(struct observe *o, unsigned i, unsigned *members)
{
    const struct service_spec *sp = &o->cfg.set->svc[i];
    struct cgroup_cpu cc;

    *members = 0;
    if (sp->kind != SERVICE_CGROUP)
        return pids_cpu(o, &sp->pid, 1, sp->kind == SERVICE_TREE, members);
    if (cgroup_cpu_read_any(sp->dir, NULL, &cc) < 0)
        return val_na("cannot read cgroup %s", sp->dir);
    return cc.usage_ns;
}

/* The processes of cgroup dir (its cgroup.procs) into o->tree; how many, or a negative errno. */
static ssize_t cgroup_procs(struct observe *o, const char *dir)
{
    char path[PATH_MAX + 16];
    ssize_t n = 0;
    long pid;
    FILE *f;

    if (snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    f = fopen(path, "re");
    if (f == NULL) return -errno;
    while (fscanf(f, "%ld", &pid) == 1) {
        if (n == OBS_MAX_TREE) {
            n = -E2BIG;
            break;
        }
        o->tree[n++] = (pid_t)pid;
    }
    fclose(f);
    return n;
}

/* Service i's PSS now, summed over its processes; *members: how many were summed. */
static struct ctr_val service_pss(struct observe *o, unsigned i, unsigned *members)
{
    const struct service_spec *sp = &o->cfg.set->svc[i];
    ssize_t n;

    *members = 0;
    if (!o->svc_ident[i].ok) return o->svc_ident[i];
    if (sp->kind != SERVICE_CGROUP)
        return pids_pss(o, &sp->pid, 1, sp->kind == SERVICE_TREE, members);
    n = cgroup_procs(o, sp->dir);
    if (n == -E2BIG) return val_na("cgroup %s has more than %d processes", sp->dir, OBS_MAX_TREE);
    if (n < 0) return val_na("%s/cgroup.procs: %s", sp->dir, strerror((int)-n));
    return tree_pss(o, (unsigned)n, false, members);
}

static struct ctr_val service_ws(const struct observe *o, unsigned i)
{
    const struct service_spec *sp = &o->cfg.set->svc[i];

    if (sp->kind != SERVICE_CGROUP)
        return val_na("%s", "a working set is a cgroup's figure: name the service cgroup:DIR");
    return cgroup_working_set_any(sp->dir, NULL);
}

/* Each pid or tree service's start time: its identity, checked again at the end. */
static void services_identify(struct observe *o)
{
    for (unsigned i = 0; i < nservices(o); i++) {
        const struct service_spec *sp = &o->cfg.set->svc[i];
        o->svc_ident[i] =
            sp->kind == SERVICE_CGROUP ? val_ok(0) : pid_identify(sp->pid, &o->svc_ticks[i]);
    }
}

/* Whether service i's pid is still the process it was; a cgroup always is. */
static struct ctr_val service_running(const struct observe *o, unsigned i)
{
    const struct service_spec *sp = &o->cfg.set->svc[i];

    if (!o->svc_ident[i].ok || sp->kind == SERVICE_CGROUP) return o->svc_ident[i];
    return pid_same(sp->pid, o->svc_ticks[i]) ? val_ok(0) : exited_during(sp->pid);
}

static void services_memory(struct observe *o, bool end)
{
    for (unsigned i = 0; i < nservices(o); i++) {
        struct obs_service *r = &o->res.svc[i];
        struct ctr_val running = end ? service_running(o, i) : o->svc_ident[i];
        struct ctr_val pss = running.ok ? service_pss(o, i, &r->members) : running;

        *(end ? &r->pss_end : &r->pss_start) = pss;
        *(end ? &r->ws_end : &r->ws_start) = service_ws(o, i);
    }
}

/*
 * The counters that must bracket the window tightly, read in the same order
 * at both ends so that each covers an interval as long as the window: the
 * kernel's TCP counters, the server's CPU, the cgroup's, /proc/stat. Each
 * read is a small /proc or cgroupfs file (the tree walk of --server-tree
 * aside), so they all fit in well under a millisecond.
 */
static void snapshot_fast(struct observe *o, struct obs_snap *s)
{
    s->net = calloc(1, sizeof(*s->net));
    if (s->net != NULL && netstat_read(s->net) < 0) {
        free(s->net);
        s->net = NULL;
    }
    s->srv_cpu = server_cpu(o, &s->srv_members);
    snapshot_cgroup(o, &s->cg_cpu, &s->cg_thr);
    s->self_cpu = proc_cpu_ns(0);
    for (unsigned i = 0; i < o->cfg.nown_pids && s->self_cpu.ok; i++) {
        struct ctr_val child;
        if (o->cfg.own_pids[i] <= 0) continue;
        child = proc_cpu_ns(o->cfg.own_pids[i]);
        if (child.ok)
            s->self_cpu.v += child.v;
        else
            s->self_cpu = child;
    }
    s->cpu_ok = procstat_read(&s->cpu) == 0;
    s->mach_ok = machine_cpu_read(&s->mach) == 0;
    s->cpu_at_ns = now_ns();
    for (unsigned i = 0; i < nservices(o); i++)
        s->svc_cpu[i] = service_cpu(o, i, &s->svc_members[i]);
}

static struct ctr_val cgroup_ws(const struct observe *o)
{
    if (o->cfg.cgroup == NULL) return val_na("%s", "no --server-cgroup given");
    return cgroup_working_set_any(o->cfg.cgroup, NULL);
}

/* The first sample opens the gauges; a baseline from before the run, if any, is the start. */
static void open_gauges(struct observe *o)
{
    const struct observe_cfg *cfg = &o->cfg;

    for (int w = -1; w + 1 < hops(o); w++) {
        struct hop_view h = hop_at(o, w);
        const struct ctr_val *base = w < 0 ? cfg->base : cfg->watch_base[w];
        for (int i = 0; i < OBS_GAUGES; i++) {
            struct obs_gauge *g = h.g[i];
            gauge_open(g);
            if (cfg->have_base && base[i].ok && g->start.ok) g->start = base[i];
        }
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
    for (int w = -1; w + 1 < hops(o); w++) {
        struct hop_view h = hop_at(o, w);
        for (int i = 0; i < OBS_GAUGES; i++)
            (w < 0 ? cfg->base : cfg->watch_base[w])[i] = h.g[i]->end;
    }
    cfg->have_base = true;
    free(o);
}

/*
 * The fast counters only, right at the window's boundary: the load threads
 * wait for them there (LOAD_WINDOW_OPEN). The slow readings (PSS walks page
 * tables, a sock_diag dump walks every socket of the family: milliseconds
 * with many TIME_WAIT sockets) come after, in observe_opened, while the load
 * runs: read here, the threads would idle through them.
 */
void observe_open(struct observe *o, const struct observe_cfg *cfg)
{
    memset(o, 0, sizeof(*o));
    o->cfg = *cfg;
    o->stop_fd = -1;
    snapshot_fast(o, &o->snap0);
    if (cfg->prof != NULL) {
        struct profile_cfg pc = {
            .self = getpid(),
            .server_pids = cfg->pids,
            .nserver_pids = cfg->npids,
            .server_tree = cfg->tree,
            .server_cgroup = cfg->cgroup,
            .set = cfg->set,
        };
        o->profiling = profile_begin(cfg->prof, &pc) == 0;
    }
}

/* The server's pids (else the pid and tree services') whose threads coloc watches. */
static void coloc_start(struct observe *o)
{
    pid_t pids[OBS_MAX_PIDS];
    unsigned n = 0;

    for (unsigned i = 0; i < o->cfg.npids && o->ident.ok; i++)
        pids[n++] = o->cfg.pids[i];
    for (unsigned i = 0; n == 0 && i < nservices(o); i++)
        if (o->cfg.set->svc[i].kind != SERVICE_CGROUP && o->svc_ident[i].ok && n < OBS_MAX_PIDS)
            pids[n++] = o->cfg.set->svc[i].pid;
    o->coloc = calloc(1, sizeof(*o->coloc));
    if (o->coloc == NULL) {
        snprintf(o->res.coloc.why, sizeof(o->res.coloc.why), "%s", "out of memory");
        return;
    }
    coloc_begin(o->coloc, pids, n, &o->cfg.sampler_cpus, o->cfg.nsampler_cpus);
}

static void coloc_stop(struct observe *o)
{
    if (o->coloc == NULL) return;
    coloc_end(o->coloc, &o->res.coloc);
    free(o->coloc);
    o->coloc = NULL;
}

int observe_opened(struct observe *o)
{
    const struct observe_cfg *cfg = &o->cfg;

    o->ident = server_identify(o);
    init_result(o);
    o->res.pss_start = o->ident.ok ? server_pss(o) : o->ident;
    o->res.ws_start = cgroup_ws(o);
    services_identify(o);
    services_memory(o, false);
    coloc_start(o);
    sample(o);
    open_gauges(o);
    if (cfg->sample_ns == 0) return 0;
    o->stop_fd = eventfd(0, EFD_CLOEXEC);
    if (o->stop_fd == -1) return -errno;
    o->sampling = pthread_create(&o->sampler, NULL, sampler_main, o) == 0;
    return o->sampling ? 0 : -EAGAIN;
}

int observe_begin(struct observe *o, const struct observe_cfg *cfg)
{
    observe_open(o, cfg);
    return observe_opened(o);
}

static void stop_sampler(struct observe *o)
{
    if (o->sampling) {
        eventfd_write(o->stop_fd, 1);
        pthread_join(o->sampler, NULL);
        o->sampling = false;
    }
    if (o->stop_fd >= 0) close(o->stop_fd);
    o->stop_fd = -1;
}

static void net_deltas(struct observe_result *r, const struct netstat *a, const struct netstat *b)
{
    for (unsigned i = 0; i < OBS_NET_COUNT; i++)
        r->net[i] = a != NULL && b != NULL
                        ? netstat_delta(a, b, net_names[i])
                        : val_na("%s", "cannot read /proc/net/netstat or /proc/net/snmp");
}

/*
 * Every CPU's busy time over the window, to the ns where the kernel counts it
 * so (host/counters.h: the machine's run time, with /proc/stat's irq and
 * softirq when it keeps them apart), else from /proc/stat's per-CPU idle:
 * never its sampled busy ticks, which miss what runs between them.
 */
static void system_busy(struct observe_result *r, const struct obs_snap *s0,
                        const struct obs_snap *s1)
{
    bool cpu = s0->cpu_ok && s1->cpu_ok;

    r->system_source = MACHINE_CPU_NONE;
    if (s0->mach_ok && s1->mach_ok && s0->mach.source == s1->mach.source &&
        s1->mach.run_ns >= s0->mach.run_ns && (cpu || !s1->mach.irq_added)) {
        uint64_t v = s1->mach.run_ns - s0->mach.run_ns;
        if (s1->mach.irq_added) {
            struct cpu_jiffies a = s0->cpu, b = s1->cpu;
            a.user = a.nice = a.system = b.user = b.nice = b.system = 0;
            v += procstat_busy_ns(&a, &b); /* irq and softirq alone */
        }
        r->system_source = s1->mach.source;
        r->system_busy_ns = val_ok(v);
    } else if (cpu && s1->cpu.cpus > 0 && s1->cpu_at_ns > s0->cpu_at_ns) {
        r->system_source = MACHINE_CPU_IDLE;
        r->system_busy_ns =
            val_ok(procstat_idle_busy_ns(&s0->cpu, &s1->cpu, s1->cpu_at_ns - s0->cpu_at_ns));
    } else {
        r->system_busy_ns = val_na("%s", "cannot read /proc/stat");
    }
}

/* The window's figures from the snapshots at its two ends. */
static void fast_deltas(struct observe *o, const struct obs_snap *s1, const struct ctr_val *running)
{
    const struct obs_snap *s0 = &o->snap0;
    struct observe_result *r = &o->res;

    net_deltas(r, s0->net, s1->net);
    r->server_cpu_ns =
        tree_cpu_delta(o->cfg.tree, &s0->srv_cpu, &s1->srv_cpu, s1->srv_members, running);
    r->cgroup_cpu_ns = val_delta(&s0->cg_cpu, &s1->cg_cpu);
    r->cgroup_throttled_us = val_delta(&s0->cg_thr, &s1->cg_thr);
    r->server_source = o->cfg.npids > 0 ? OBS_SERVER_PIDS : OBS_SERVER_NONE;
    if (o->cfg.npids == 0 && o->cfg.cgroup != NULL) {
        /* --server-cgroup alone: the cgroup is the server */
        r->server_cpu_ns = r->cgroup_cpu_ns;
        r->server_source = OBS_SERVER_CGROUP;
    }
    for (unsigned i = 0; i < nservices(o); i++) {
        struct ctr_val run = service_running(o, i);
        const struct service_spec *sp = &o->cfg.set->svc[i];
        r->svc[i].cpu_ns = tree_cpu_delta(sp->kind == SERVICE_TREE, &s0->svc_cpu[i],
                                          &s1->svc_cpu[i], s1->svc_members[i], &run);
    }
    system_busy(r, s0, s1);
}

/* ---- other processes' CPU ------------------------------------------------------------------ */

/* busy − self − named, or unavailable with the reason of the first that is. */
static struct ctr_val other_of(const struct obs_other *o)
{
    uint64_t mine;

    if (!o->busy_ns.ok) return o->busy_ns;
    if (!o->self_ns.ok) return val_na("hopbench's own CPU: %s", o->self_ns.why);
    if (!o->named_ns.ok) return o->named_ns;
    /* busy is counted in whole ticks, the clocks exactly: the difference may dip below 0 */
    mine = o->self_ns.v + o->named_ns.v;
    return val_ok(o->busy_ns.v > mine ? o->busy_ns.v - mine : 0);
}

void observe_other_compute(struct obs_other *o)
{
    uint64_t known;

    o->other_ns = other_of(o);
    known = (o->other_ns.ok ? o->other_ns.v : 0) + (o->steal_ns.ok ? o->steal_ns.v : 0);
    o->noisy = o->window_ns > 0 && (double)known > o->threshold_cpus * (double)o->window_ns;
    o->decided = o->noisy || (o->other_ns.ok && o->steal_ns.ok && o->window_ns > 0);
}

/* Σ CPU of the named processes over the window: the server's when named, each service's. */
static struct ctr_val named_cpu(const struct observe *o)
{
    const struct observe_result *r = &o->res;
    uint64_t sum = 0;

    if (r->server_source != OBS_SERVER_NONE) {
        if (!r->server_cpu_ns.ok) return val_na("the server's CPU: %s", r->server_cpu_ns.why);
        sum += r->server_cpu_ns.v;
    }
    for (unsigned i = 0; i < nservices(o); i++) {
        if (!r->svc[i].cpu_ns.ok)
            return val_na("%s's CPU: %s", o->cfg.set->svc[i].name, r->svc[i].cpu_ns.why);
        sum += r->svc[i].cpu_ns.v;
    }
    return val_ok(sum);
}

/* How many CPUs this process may run on; 0 when unknown. */
static unsigned cpus_allowed(void)
{
    cpu_set_t set;

    return sched_getaffinity(0, sizeof(set), &set) == 0 ? (unsigned)CPU_COUNT(&set) : 0;
}

/* The other processes' CPU and the steal of the window, once the named ones' are known. */
static void other_deltas(struct observe *o, const struct obs_snap *s1)
{
    const struct obs_snap *s0 = &o->snap0;
    struct obs_other *x = &o->res.other;
    bool cpu_ok = s0->cpu_ok && s1->cpu_ok;

    x->busy_ns = o->res.system_busy_ns;
    x->self_ns = val_delta(&s0->self_cpu, &s1->self_cpu);
    x->named_ns = named_cpu(o);
    x->steal_ns = cpu_ok ? val_ok(procstat_steal_ns(&s0->cpu, &s1->cpu))
                         : val_na("%s", "cannot read /proc/stat");
    x->window_ns = s1->cpu_at_ns > s0->cpu_at_ns ? s1->cpu_at_ns - s0->cpu_at_ns : 0;
    x->cpus = cpus_allowed();
    x->threshold_cpus = o->cfg.noisy_cpus > 0 ? o->cfg.noisy_cpus : OBS_NOISY_CPUS;
    observe_other_compute(x);
}

/*
 * The fast counters first, as the load threads have just stopped (the sampler
 * may be in the middle of a dump: it is stopped after them); then whether the
 * server pids still run, and the slow readings.
 */
void observe_end(struct observe *o, struct observe_result *res)
{
    struct obs_snap s1;
    struct ctr_val running;

    snapshot_fast(o, &s1);
    if (o->profiling) {
        profile_end(o->cfg.prof, &o->res.prof);
        o->res.profiled = true;
    }
    running = server_still_running(o);
    coloc_stop(o);
    stop_sampler(o);
    fast_deltas(o, &s1, &running);
    other_deltas(o, &s1);
    free(s1.net);
    free(o->snap0.net);
    o->snap0.net = NULL;
    sample(o);
    o->res.pss_end = running.ok ? server_pss(o) : running;
    o->res.ws_end = cgroup_ws(o);
    services_memory(o, true);
    *res = o->res;
}

void observe_window_hook(void *arg, enum load_window at)
{
    struct observe_hook *h = arg;

    switch (at) {
    case LOAD_WINDOW_OPEN:
        observe_open(&h->o, &h->cfg);
        return;
    case LOAD_WINDOW_OPENED:
        observe_opened(&h->o);
        return;
    case LOAD_WINDOW_CLOSED:
        observe_end(&h->o, h->out);
        *h->done = true;
        return;
    }
}
