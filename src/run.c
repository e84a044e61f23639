/*
 * run: the plan of the `run` command, run by run (see run.h).
 */
#include "run.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "engine/load.h"
#include "registry.h"
#include "report/services.h"
#include "report/summary.h"
#include "spawn.h"
#include "stats.h"

int run_init(struct run *run, const struct run_opts *opts, struct hb_err *err)
{
    memset(run, 0, sizeof(*run));
    run->opts = opts;
    for (size_t i = 0; i < ARRAY_LEN(run->netns.fd); i++)
        run->netns.fd[i] = -1; /* nothing made yet: netns_release closes nothing */
    return place_init(&run->place, opts->shared.pin, err);
}

/* With --netns other: each TCP endpoint at A's veth address, its port and label kept. */
static int run_serve_endpoints(struct run *run, struct run_opts *o, struct hb_err *err)
{
    char text[sizeof(o->eps[0].text)], label[ENDPOINT_LABEL_MAX];

    for (unsigned i = 0; i < o->neps && run->netns.mode == NETNS_OTHER; i++) {
        struct endpoint *ep = &o->eps[i];
        snprintf(label, sizeof(label), "%s", ep->label);
        snprintf(text, sizeof(text), "tcp://%s:%u", run->netns.addr_a, endpoint_port(ep));
        if (endpoint_parse(ep, text, err) < 0) return -EINVAL;
        snprintf(ep->label, sizeof(ep->label), "%s", label);
    }
    return 0;
}

int run_serve(struct run *run, struct run_opts *o, _Atomic pid_t *mirror, struct hb_err *err)
{
    struct server_cfg cfg = {
        .proto = o->proto->server,
        .eps = o->eps,
        .neps = o->neps,
        .allow_remote = o->netns == NETNS_OTHER, /* A's veth address, private to A and B */
        .threads = run->place.nserver ? run->place.nserver : o->load.threads,
        .block_wait = o->load.block_wait,
        .mode = 0600,
        .cpus = run->place.nserver ? run->place.server : NULL,
        .ncpus = run->place.nserver,
        /* --close server: the server closes first after one message of the run's size */
        .close_after = o->proto->close_after_size && o->load.close == CLOSE_SERVER &&
                               o->load.mode == LOAD_CONNECT
                           ? o->load.size
                           : 0,
    };
    int rc;

    run->pid_mirror = mirror;
    if (o->in_netns != NETNS_NONE) {
        run->client_side = o->in_netns == NETNS_OTHER ? NETNS_B : NETNS_A;
        return netns_adopt(&run->netns, o->in_netns, err);
    }
    if (o->netns == NETNS_NONE) return 0;
    rc = netns_init(&run->netns, o->netns, err);
    if (rc == 0) rc = run_serve_endpoints(run, o, err);
    if (rc == 0)
        rc =
            spawn_server(&cfg, &run->netns, NETNS_A, "run's server", mirror, &run->server_pid, err);
    if (rc < 0) return rc;
    run->place.server_source = PLACE_SRC_SET; /* its own server, pinned as --pin places it */
    run->client_side = o->netns == NETNS_OTHER ? NETNS_B : NETNS_A;
    rc = netns_enter(&run->netns, run->client_side);
    if (rc < 0) return hb_fail(err, rc, "cannot enter the client's namespace: %s", strerror(-rc));
    return 0;
}

int run_serve_check(struct run *run, struct hb_err *err)
{
    pid_t pid = run->server_pid;
    char how[64];

    if (spawn_check(&run->server_pid, run->pid_mirror, how, sizeof(how)) == 0) return 0;
    return hb_fail(err, -ECHILD, "the built-in %s server (pid %ld) %s", run->opts->proto->name,
                   (long)pid, how);
}

void run_serve_stop(struct run *run)
{
    spawn_stop(&run->server_pid, run->pid_mirror);
    netns_release(&run->netns); /* the server that was in A has exited */
}

/* The load of every run: the endpoints' runs differ only in their endpoint. */
static struct load_cfg run_need_cfg(const struct run_opts *o)
{
    struct load_cfg c = o->load;

    c.codec = o->proto->codec;
    if (o->rate_share > 0) c.rate = 1;
    return c;
}

uint64_t run_fd_need(const struct run_opts *o)
{
    struct load_cfg c = run_need_cfg(o);

    return load_fd_need(&c);
}

/*
 * With --rate N% the closed-loop maximum is measured first with the same
 * connections and buffers, and each run then keeps a service histogram too.
 */
size_t run_mem_need(const struct run_opts *o)
{
    struct load_cfg c = run_need_cfg(o);
    size_t records = (size_t)o->neps * o->shared.reps;

    return load_mem_need(&c, records - 1);
}

int run_preflight(const struct run_opts *o, const atomic_int *stop, struct hb_err *err)
{
    uint64_t until = now_ns() + o->wait_ready_ns;

    for (unsigned i = 0; i < o->neps; i++) {
        int rc;

        /* --wait-ready: a server still starting (refused, or its socket file not there yet)
         * is asked again every 50 ms until the time is up */
        while ((rc = endpoint_probe(&o->eps[i], (int)(o->load.timeout_ns / NS_PER_MS))) < 0 &&
               (rc == -ECONNREFUSED || rc == -ENOENT) && now_ns() < until &&
               (stop == NULL || !atomic_load(stop)))
            sleep_until_ns(now_ns() + 50 * NS_PER_MS, stop);
        if (rc < 0)
            return hb_fail(err, rc, "cannot connect to %s: %s%s", o->eps[i].text,
                           rc == -ETIMEDOUT ? "no answer within --timeout" : strerror(-rc),
                           o->wait_ready_ns > 0 && rc != -ETIMEDOUT ? " (after --wait-ready)" : "");
    }
    return 0;
}

int run_place_server(struct run *run, struct hb_err *err)
{
    const struct run_opts *o = run->opts;

    if (o->nserver_pids == 0) return 0;
    return place_observe_server(&run->place, o->server_pids, o->nserver_pids, o->server_tree, err);
}

/* The outside counters of one run: the servers the user named, the hop's sockets. */
static void run_observe(struct run *run, struct run_record *r)
{
    const struct run_opts *o = run->opts;
    struct observe_hook *h = &run->hook;

    memset(&h->cfg, 0, sizeof(h->cfg));
    h->cfg.ep = r->cfg.ep;
    memcpy(h->cfg.pids, o->server_pids, o->nserver_pids * sizeof(pid_t));
    h->cfg.npids = o->nserver_pids;
    if (run->server_pid > 0 && h->cfg.npids < OBS_MAX_PIDS)
        h->cfg.pids[h->cfg.npids++] = run->server_pid; /* --netns: its own server */
    h->cfg.tree = o->server_tree;
    h->cfg.cgroup = o->server_cgroup;
    h->cfg.noisy_cpus = o->shared.noisy_cpus;
    h->cfg.set = o->services.n + o->services.nwatch > 0 ? &o->services : NULL;
    observe_set_sampler(&h->cfg, o->shared.sample_given, o->shared.sample_ns, r->cfg.mode,
                        &run->place);
    observe_baseline(&h->cfg);
    h->out = &r->obs;
    h->done = &r->observed;
    r->cfg.on_window = observe_window_hook;
    r->cfg.on_window_arg = h;
}

/*
 * The requests the protocol makes before a run (redis: a mix's GETs read
 * keys SET first), over one connection, not measured: 0, or a negative errno
 * with err set when the load could not run or one of them failed. A stop
 * ends it early; the run then stops too.
 */
static int run_prepare(const struct run_opts *o, struct run_record *r, struct hb_err *err)
{
    struct codec_opts pre;
    uint64_t n = o->proto->prepare != NULL ? o->proto->prepare(&o->codec, &pre) : 0;
    struct load_cfg c = r->cfg;
    struct load_result res = { 0 };
    uint64_t failed;
    int rc;

    if (n == 0) return 0;
    c.opts = &pre;
    c.mode = LOAD_REUSE;
    c.conns = 1;
    c.threads = 1;
    c.pipeline = n < 64 ? (unsigned)n : 64; /* one key each, in turn from the first */
    c.count = n;
    c.duration_ns = 0;
    c.warmup_ns = 0;
    c.rate = 0;
    c.poisson = false;
    c.block_wait = false;
    c.on_window = NULL;
    rc = load_run(&c, &res, err);
    if (rc < 0) return rc;
    failed = load_errors_total(&res);
    if (failed > 0 && !res.interrupted)
        rc = hb_fail(err, -EIO, "run %s: %s: %llu of the %llu requests before the run failed",
                     o->proto->name, endpoint_name(&c.ep), (unsigned long long)failed,
                     (unsigned long long)n);
    r->prepared = res.requests;
    load_result_release(&res);
    return rc;
}

/* The load of cell `cell`, as every run and probe of it starts from. */
static void run_cfg(const struct run *run, unsigned cell, const atomic_int *stop,
                    struct load_cfg *c)
{
    const struct run_opts *o = run->opts;
    const struct place *pl = &run->place;

    *c = o->load;
    c->ep = o->eps[cell];
    c->codec = o->proto->codec;
    c->cpus = pl->nclient ? pl->client : NULL;
    c->ncpus = pl->nclient;
    c->stop = stop;
}

/* One run of cell `cell` into r (at its share of the cell's base with --rate N%). */
static int run_one(struct run *run, unsigned cell, unsigned rep, struct run_record *r,
                   const atomic_int *stop, struct hb_err *err)
{
    const struct run_opts *o = run->opts;
    int rc;

    r->proto = o->proto->name;
    r->cell = cell;
    r->rep = rep;
    run_cfg(run, cell, stop, &r->cfg);
    rc = run_prepare(o, r, err);
    if (rc < 0 || atomic_load(stop)) return rc;
    if (o->rate_share > 0) {
        r->base = &run->bases[cell];
        r->rate_share = o->rate_share;
        r->rate_basis = r->base->ops_per_s;
        r->cfg.rate = r->rate_basis * o->rate_share;
    }
    run_observe(run, r);
    if (run->progress != NULL) {
        char what[PROGRESS_WHAT_CAP];

        snprintf(what, sizeof(what), "%s %s", o->proto->name,
                 o->labels[cell] != NULL ? o->labels[cell] : r->cfg.ep.text);
        progress_run_begin(run->progress, what, rep + 1, o->shared.reps, &r->cfg);
    }
    if (run->netns.mode != NETNS_NONE) record_netns_begin(&r->netns, &run->netns, run->client_side);
    rc = load_run(&r->cfg, &r->res, err);
    if (run->netns.mode != NETNS_NONE) record_netns_end(&r->netns, &run->netns);
    if (run->progress != NULL) progress_run_end(run->progress, &r->cfg);
    return rc;
}

unsigned run_planned_runs(const struct run_opts *o)
{
    return o->neps * o->shared.reps;
}

uint64_t run_planned_ns(const struct run_opts *o)
{
    if (o->load.duration_ns == 0) return 0;
    return o->load.warmup_ns + o->load.duration_ns + o->shared.cooldown_ns +
           (o->rate_share > 0 ? o->calibrate_ns : 0);
}

/*
 * Whether to stop before the next run: *stop is set, or the reader of out is
 * gone (`hopbench run | head`; SIGPIPE is ignored). The latter counts as an
 * interrupt from then on, since runs are left undone: nobody reads the
 * tables, the evidence still holds what was measured. Any other write error
 * (a full disk) does not stop the work.
 */
static bool run_stopping(atomic_int *stop, FILE *out)
{
    if (atomic_load(stop) == 0 && fd_reader_gone(fileno(out))) atomic_store(stop, STOP_INTERRUPT);
    return atomic_load(stop) != 0;
}

/* The --rate-base given as each endpoint's base. */
static void run_bases_given(struct run *run)
{
    const struct run_opts *o = run->opts;

    for (unsigned e = 0; e < o->neps; e++) {
        run->bases[e].ops_per_s = o->rate_bases[o->nrate_bases == 1 ? 0 : e];
        run->bases[e].given = true;
    }
    run->nbases = o->neps;
}

/*
 * --rate N%: each endpoint's closed-loop maximum, measured once before any
 * open-loop run, so that every run of an endpoint takes its share of the
 * same base: --reps probes per endpoint in the plan's order (order), each a
 * closed loop of calibrate_ns with the run's settings; the base is their
 * median. 0 (run->nbases stays 0 when a stop cut the probes short), or a
 * negative errno with err set (a probe saw errors or completed no op).
 */
static int run_bases(struct run *run, const unsigned *order, FILE *out, atomic_int *stop,
                     struct hb_err *err)
{
    const struct run_opts *o = run->opts;
    unsigned reps = o->shared.reps, done[CLI_MAX_ENDPOINTS] = { 0 };
    struct load_cfg c;

    if (o->nrate_bases > 0) {
        run_bases_given(run);
        return 0;
    }
    run->probes = xcalloc((size_t)o->neps * reps, sizeof(*run->probes));
    for (unsigned i = 0; i < o->neps * reps; i++) {
        unsigned e = order[i];
        if (i > 0 && o->shared.cooldown_ns) sleep_until_ns(now_ns() + o->shared.cooldown_ns, stop);
        if (run_stopping(stop, out)) return 0;
        run_cfg(run, e, stop, &c);
        int rc = load_max_rate(&c, o->calibrate_ns, &run->probes[(size_t)e * reps + done[e]], err);
        if (atomic_load(stop)) return 0;
        if (rc < 0) return rc;
        done[e]++;
    }
    for (unsigned e = 0; e < o->neps; e++) {
        struct rate_base *b = &run->bases[e];
        b->probes = &run->probes[(size_t)e * reps];
        b->probe_ns = o->calibrate_ns;
        stats_summarize(b->probes, reps, &b->stat);
        b->ops_per_s = b->stat.median;
    }
    run->nbases = o->neps;
    return 0;
}

int run_all(struct run *run, FILE *jsonl, FILE *out, atomic_int *stop, struct hb_err *err)
{
    const struct run_opts *o = run->opts;
    unsigned slots = o->neps * o->shared.reps, done[CLI_MAX_ENDPOINTS] = { 0 };
    unsigned *order = xcalloc(slots, sizeof(*order));
    int rc = 0;

    run->recs = xcalloc(slots, sizeof(*run->recs));
    if (o->order_random)
        stats_order_shuffle(o->neps, o->shared.reps, o->shared.seed, order);
    else
        stats_order_abba(o->neps, o->shared.reps, order);
    if (o->rate_share > 0) rc = run_bases(run, order, out, stop, err);
    for (unsigned i = 0; i < slots && !run_stopping(stop, out) && rc == 0; i++) {
        struct run_record *r = &run->recs[run->nrecs];
        if (i > 0 && o->shared.cooldown_ns) sleep_until_ns(now_ns() + o->shared.cooldown_ns, stop);
        if (atomic_load(stop)) break;
        rc = run_one(run, order[i], done[order[i]]++, r, stop, err);
        if (r->res.lat == NULL) break;
        run->nrecs++;
        if (jsonl != NULL && report_jsonl_append(jsonl, r) < 0) {
            run->jsonl_failed = true;
            if (rc == 0) rc = -EIO;
        }
    }
    free(order);
    return rc;
}

/* The summary over repetitions into cells[neps]: 0, or a negative errno (OOM). */
static int run_summary(const struct run *run, struct cell_summary *cells)
{
    const struct run_opts *o = run->opts;

    return summary_compute(run->recs, run->nrecs, o->neps, o->shared.seed, cells);
}

json_t *run_summary_json(const struct run *run)
{
    unsigned ncells = run->opts->neps;
    struct cell_summary *cells = xcalloc(ncells, sizeof(*cells));
    json_t *summary = run_summary(run, cells) == 0 ? summary_json(cells, ncells) : NULL;

    free(cells);
    return summary;
}

static void run_summary_print(const struct run *run, FILE *out)
{
    unsigned ncells = run->opts->neps;
    struct cell_summary *cells = xcalloc(ncells, sizeof(*cells));

    if (run_summary(run, cells) == 0) summary_print(out, "summary over repetitions", cells, ncells);
    report_noisy_count(out, run->recs, run->nrecs);
    free(cells);
}

void run_report(const struct run *run, FILE *out)
{
    const struct run_record *recs = run->recs;
    size_t n = run->nrecs;

    report_run_table(out, recs, n);
    report_kinds(out, recs, n);
    for (unsigned e = 0; e < run->nbases; e++)
        report_rate_base(out, &run->opts->eps[e], &run->bases[e], run->opts->rate_share);
    report_open_loop(out, recs, n);
    report_cost_table(out, recs, n);
    report_kernel_evidence(out, recs, n);
    report_services(out, recs, n, run->opts->neps, run->opts->shared.seed);
    if (run->opts->shared.reps > 1) run_summary_print(run, out);
    report_errors(out, recs, n);
    report_cut_short(out, recs, n);
}

void run_release(struct run *run)
{
    for (size_t i = 0; i < run->nrecs; i++)
        load_result_release(&run->recs[i].res);
    free(run->recs);
    free(run->probes);
    run->recs = NULL;
    run->probes = NULL;
    run->nrecs = 0;
    run->nbases = 0;
}
