/*
 * lab: the default experiment (see lab.h).
 */
#include "lab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/budget.h"
#include "host/leftover.h"
#include "registry.h"
#include "server/server.h"
#include "spawn.h"
#include "stats.h"

/* Where the private directory goes: $TMPDIR, else /tmp. */
static const char *lab_tmp(void)
{
    const char *tmp = getenv("TMPDIR");

    return tmp && *tmp ? tmp : "/tmp";
}

void lab_clean_leftovers(FILE *out)
{
    leftover_clean(
        &(struct leftover_scan){ .who = "lab", .tmp = lab_tmp(), .prefix = "hopbench-lab." }, out);
}

static int lab_endpoints(struct lab *lab, struct hb_err *err)
{
    char text[300], mark[LEFTOVER_MARK_CAP];
    int rc;

    if (snprintf(lab->dir, sizeof(lab->dir), "%s/hopbench-lab.XXXXXX", lab_tmp()) >=
        (int)sizeof(lab->dir))
        return hb_fail(err, -ENAMETOOLONG, "TMPDIR is too long for a socket path");
    if (mkdtemp(lab->dir) == NULL) {
        int e = errno;
        lab->dir[0] = '\0';
        return hb_fail(err, -e, "cannot make a temporary directory: %s", strerror(e));
    }
    rc = leftover_mark(mark, sizeof(mark));
    if (rc == 0) rc = leftover_mark_dir(lab->dir, mark);
    if (rc < 0) return hb_fail(err, rc, "cannot mark %s as ours: %s", lab->dir, strerror(-rc));
    if (endpoint_parse(&lab->eps[0], "tcp://127.0.0.1:0", err) < 0) return -EINVAL;
    snprintf(text, sizeof(text), "unix:%s/%s.sock", lab->dir, lab->opts->proto->name);
    if (endpoint_parse(&lab->eps[1], text, err) < 0) return -EINVAL;
    lab->neps = 2;
    if (lab->netns.mode != NETNS_OTHER) return 0;
    snprintf(text, sizeof(text), "tcp://%s:0", lab->netns.addr_a);
    if (endpoint_parse(&lab->eps[2], text, err) < 0) return -EINVAL;
    lab->neps = 3;
    return 0;
}

/* The transports of the lab's cells: tcp and unix, and tcp-veth with --netns other. */
static unsigned lab_transports(const struct lab_opts *o)
{
    return o->netns == NETNS_OTHER ? 3 : 2;
}

/* The name of transport t in tables, progress lines and the evidence. */
static const char *lab_transport_name(unsigned t)
{
    static const char *const names[] = { "tcp", "unix", "tcp-veth" };

    return names[t];
}

/* Where the client of transport t runs: with --netns other, B for tcp-veth, else A. */
static enum netns_side lab_client_side(const struct lab *lab, unsigned t)
{
    if (lab->netns.mode == NETNS_NONE) return NETNS_HOST;
    return t == 2 ? NETNS_B : NETNS_A;
}

static int lab_start_server(struct lab *lab, uint64_t close_after, size_t body_size,
                            struct hb_err *err)
{
    struct server_cfg cfg = {
        .proto = lab->opts->proto->server,
        .eps = lab->eps,
        .neps = lab->neps,
        .allow_remote = lab->netns.mode == NETNS_OTHER, /* A's veth address, private to A and B */
        .threads = lab->opts->server_threads ? lab->opts->server_threads
                   : lab->place.nserver      ? lab->place.nserver
                                             : 1,
        .backlog = lab->opts->server_backlog, /* 0: net.core.somaxconn */
        .delay_ns = lab->opts->server_delay_ns,
        .block_wait = lab->opts->shared.block_wait,
        .mode = 0600,
        .cpus = lab->place.nserver ? lab->place.server : NULL,
        .ncpus = lab->place.nserver,
        .stop_on_sigint = false,
        .close_after = close_after,
        .body_size = body_size,
    };
    int rc = spawn_server(&cfg, &lab->netns, NETNS_A, "lab server", lab->pid_mirror,
                          &lab->server_pid, err);

    if (rc < 0) return rc;
    lab->server_close_after = close_after;
    lab->server_body_size = body_size;
    return 0;
}

/* The requests of every cell: the protocol's entry says (redis SETs values of each size). */
static void lab_codec_opts(struct lab *lab)
{
    lab->codec = lab->opts->proto->lab_opts;
}

/* Every run the lab may make: sizes × modes × transports × reps × (closed + each rate). */
static size_t lab_records(const struct lab_opts *o)
{
    return (size_t)o->nsizes * 2 * lab_transports(o) * o->shared.reps * (1 + o->nrates);
}

size_t lab_plan_len(const struct lab_opts *o)
{
    return (size_t)o->nsizes * (o->overload ? 1 : 2) * lab_transports(o) * o->shared.reps;
}

void lab_plan(const struct lab_opts *o, struct lab_step *steps)
{
    static const enum load_mode modes[] = { LOAD_CONNECT, LOAD_REUSE };
    unsigned nt = lab_transports(o), reps = o->shared.reps, done[3];
    unsigned *order = xcalloc(nt * (size_t)reps, sizeof(*order));
    size_t n = 0;

    /* Within each (size, mode), the transports alternate A B B A ... so drift cancels. */
    stats_order_abba(nt, reps, order);
    for (unsigned s = 0; s < o->nsizes; s++) {
        for (size_t m = 0; m < ARRAY_LEN(modes); m++) {
            if (o->overload && modes[m] == LOAD_REUSE) continue; /* overload: new connections */
            done[0] = done[1] = done[2] = 0;
            for (unsigned i = 0; i < nt * reps; i++)
                steps[n++] = (struct lab_step){
                    .size = s, .mode = modes[m], .transport = order[i], .rep = done[order[i]]++
                };
        }
    }
    free(order);
}

unsigned lab_planned_runs(const struct lab_opts *o)
{
    return (unsigned)lab_plan_len(o) * (1 + o->nrates);
}

uint64_t lab_planned_ns(const struct lab_opts *o)
{
    return o->shared.warmup_ns + o->shared.duration_ns + o->shared.cooldown_ns;
}

int lab_init(struct lab *lab, const struct lab_opts *opts, _Atomic pid_t *pid_mirror,
             struct hb_err *err)
{
    int rc;

    memset(lab, 0, sizeof(*lab));
    lab->opts = opts;
    lab->pid_mirror = pid_mirror;
    rc = netns_init(&lab->netns, opts->netns, err);
    if (rc == 0) rc = place_init(&lab->place, opts->shared.pin, err);
    lab->place.server_source = PLACE_SRC_SET; /* the lab pins its own server (lab_start_server) */
    if (rc == 0) rc = lab_endpoints(lab, err);
    if (rc == 0) rc = lab_start_server(lab, 0, 0, err);
    /* after the server's fork: hopbench killed outright, the watcher removes the directory */
    if (rc == 0) rc = leftover_watch_start(&lab->watch, lab->dir, NULL, 0, err);
    lab_codec_opts(lab);
    lab->cap = lab_records(opts);
    lab->recs = xcalloc(lab->cap, sizeof(*lab->recs));
    return rc;
}

/* Whether a size is the server's reply body (http, fcgi: the request is a bodiless GET). */
static bool lab_size_is_reply(const struct lab_opts *o)
{
    return o->proto->reply_body;
}

static void lab_cell_cfg(const struct lab *lab, struct load_cfg *c, const struct endpoint *ep,
                         size_t size, enum load_mode mode, const atomic_int *stop)
{
    const struct lab_opts *o = lab->opts;

    *c = (struct load_cfg){
        .ep = *ep,
        .codec = o->proto->codec,
        .opts = lab->codec,
        .size = size, /* http, fcgi: a GET, so the size only shapes the server's reply */
        .mode = mode,
        .close = o->shared.close,
        .close_auto = !o->shared.close_given,
        .conns = o->shared.conns,
        .threads = o->shared.threads,
        .pipeline = mode == LOAD_REUSE ? o->pipeline : 1,
        .count = o->count,
        /* Where the load engine can wait so (worker_block_ns), so the record says how it did. */
        .block_wait = o->shared.block_wait && mode == LOAD_REUSE &&
                      o->shared.conns == o->shared.threads && o->pipeline == 1,
        .duration_ns = o->shared.duration_ns,
        .warmup_ns = o->shared.warmup_ns,
        .timeout_ns = o->shared.timeout_ns,
        .cpus = lab->place.nclient ? lab->place.client : NULL,
        .ncpus = lab->place.nclient,
        .stop = stop,
    };
}

size_t lab_mem_need(const struct lab_opts *o)
{
    struct lab lab = { .opts = o }; /* only the options and the requests are used */
    struct load_cfg c;
    size_t most = 0;

    lab_codec_opts(&lab);
    for (unsigned s = 0; s < o->nsizes; s++) {
        for (int m = LOAD_REUSE; m <= LOAD_CONNECT; m++) {
            size_t need;
            lab_cell_cfg(&lab, &c, &lab.eps[0], o->sizes[s], (enum load_mode)m, NULL);
            c.rate = o->nrates > 0 ? 1 : 0; /* open-loop cells keep a service histogram too */
            /* the records of the other runs stay until the end */
            need = load_mem_need(&c, lab_records(o) - 1);
            if (need > most) most = need;
        }
    }
    return most;
}

uint64_t lab_fd_need(const struct lab_opts *o)
{
    unsigned threads = o->server_threads ? o->server_threads : place_allowed_cpus();
    uint64_t client = (uint64_t)o->shared.conns + o->shared.threads;
    uint64_t server = budget_server_fds(o->shared.conns, threads ? threads : 1, lab_transports(o));

    return client > server ? client : server;
}

/* The cell's outside counters: the child server's CPU and memory, the hop's sockets. */
static void lab_cell_observe(struct lab *lab, struct run_record *r)
{
    struct observe_hook *h = &lab->hook;

    memset(&h->cfg, 0, sizeof(h->cfg));
    h->cfg.ep = r->cfg.ep;
    h->cfg.pids[0] = lab->server_pid;
    h->cfg.npids = 1;
    h->cfg.noisy_cpus = lab->opts->shared.noisy_cpus;
    h->cfg.prof = lab->prof;
    observe_set_sampler(&h->cfg, lab->opts->shared.sample_given, lab->opts->shared.sample_ns,
                        r->cfg.mode, &lab->place);
    observe_baseline(&h->cfg);
    h->out = &r->obs;
    h->done = &r->observed;
    r->cfg.on_window = observe_window_hook;
    r->cfg.on_window_arg = h;
}

static void lab_progress(FILE *f, const struct run_record *r)
{
    char rate[48] = "", ops[32], p50[32] = "n/a", p99[32] = "n/a", errors[32];

    if (r->rate_share > 0)
        snprintf(rate, sizeof(rate), " open loop at %.0f %%:", r->rate_share * 100);
    text_number(ops, sizeof(ops), report_ops_per_s(r), 0);
    if (r->res.ops > 0) {
        text_number(p50, sizeof(p50), (double)hist_percentile(r->res.lat, 50) / 1000.0, 2);
        text_number(p99, sizeof(p99), (double)hist_percentile(r->res.lat, 99) / 1000.0, 2);
    }
    text_number(errors, sizeof(errors), (double)load_errors_total(&r->res), 0);
    fprintf(f, "  %-7s %-4s %6zu B:%s %10s ops/s, p50 %s µs, p99 %s µs, %s errors\n",
            report_mode_name(r->cfg.mode), report_transport(r), r->cfg.size, rate, ops, p50, p99,
            errors);
    fflush(f);
}

static void lab_stop_server(struct lab *lab)
{
    spawn_stop(&lab->server_pid, lab->pid_mirror);
}

/* "tcp/reuse/64 B", with " open loop at 50 %" for an open-loop run. */
static void lab_cell_name(char *buf, size_t len, const struct run_record *r)
{
    int n = snprintf(buf, len, "%s/%s/%zu B", report_transport(r), report_mode_name(r->cfg.mode),
                     r->cfg.size);

    if (r->rate_share > 0 && n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " open loop at %.0f %%", r->rate_share * 100);
}

/*
 * Whether the server still runs: 0 if it does (or none is up). Once it has
 * exited, it is reaped here and the lab must stop: -ECHILD with err naming
 * its exit and when (during run r, which it cut short, or after the last run
 * measured), and lab->server_gone set. An exit while a stop signal is being
 * handled went with that signal (timeout(1) signals the whole process group,
 * the server included): it is part of the interrupt, 0.
 */
static int lab_server_check(struct lab *lab, struct run_record *r, const atomic_int *stop,
                            struct hb_err *err)
{
    pid_t pid = lab->server_pid;
    const struct run_record *last = lab->nrecs > 0 ? &lab->recs[lab->nrecs - 1] : NULL;
    char how[64], cell[96];

    if (spawn_check(&lab->server_pid, lab->pid_mirror, how, sizeof(how)) == 0) return 0;
    if (stop != NULL && atomic_load(stop) == STOP_INTERRUPT) return 0;
    lab->server_gone = true;
    if (r != NULL && r->res.interrupted) {
        r->cut_by = "the server's exit";
        lab_cell_name(cell, sizeof(cell), r);
        return hb_fail(err, -ECHILD, "the %s server (pid %ld) %s during cell %s",
                       lab->opts->proto->name, (long)pid, how, cell);
    }
    if (last == NULL)
        return hb_fail(err, -ECHILD, "the %s server (pid %ld) %s before the first cell",
                       lab->opts->proto->name, (long)pid, how);
    lab_cell_name(cell, sizeof(cell), last);
    return hb_fail(err, -ECHILD, "the %s server (pid %ld) %s after cell %s", lab->opts->proto->name,
                   (long)pid, how, cell);
}

/*
 * --close server needs a server that closes first after one message of this
 * size, and reuse cells need one that never does: restart when that changes.
 */
static int lab_server_for(struct lab *lab, size_t size, enum load_mode mode, struct hb_err *err)
{
    const struct lab_opts *o = lab->opts;
    uint64_t want =
        o->proto->close_after_size && mode == LOAD_CONNECT && o->shared.close == CLOSE_SERVER ? size
                                                                                              : 0;
    size_t body = lab_size_is_reply(o) ? size : 0;

    if (want == lab->server_close_after && body == lab->server_body_size && lab->server_pid > 0)
        return 0;
    lab_stop_server(lab);
    endpoint_unlink(&lab->eps[1]);
    return lab_start_server(lab, want, body, err);
}

/*
 * The run's load from the client's namespace: its threads start there, so
 * their sockets are made there, and the outside counters (sock_diag, the
 * kernel's) are read there, the baseline included. The veth end in B counts
 * the bytes of a tcp-veth run (the warm-up's included), as seen inside B.
 */
static int lab_load(struct lab *lab, struct run_record *r, unsigned t, struct hb_err *err)
{
    enum netns_side side = lab_client_side(lab, t);
    int back, rc = netns_enter(&lab->netns, side);

    if (rc < 0) return hb_fail(err, rc, "cannot enter the client's namespace: %s", strerror(-rc));
    lab_cell_observe(lab, r);
    record_netns_begin(&r->netns, &lab->netns, side);
    rc = load_run(&r->cfg, &r->res, err);
    if (r->res.wait_err != 0) r->cut_by = "a failed wait";
    record_netns_end(&r->netns, &lab->netns);
    back = netns_enter(&lab->netns, NETNS_HOST);
    if (back < 0 && rc == 0)
        rc = hb_fail(err, back, "cannot leave the client's namespace: %s", strerror(-back));
    return rc;
}

/* One run, closed loop (share 0) or open loop at share x basis ops/s; kept even if it failed. */
static int lab_one(struct lab *lab, unsigned s, enum load_mode mode, unsigned t, unsigned rep,
                   double share, double basis, FILE *progress, const atomic_int *stop,
                   struct hb_err *err)
{
    const struct lab_opts *o = lab->opts;
    struct run_record *r = &lab->recs[lab->nrecs];
    struct hb_err e = { 0 };
    int rc;

    r->proto = o->proto->name;
    r->size_is_reply = lab_size_is_reply(o);
    r->cell = (s * 2 + (mode == LOAD_REUSE)) * lab->neps + t;
    r->transport = t == 2 ? lab_transport_name(t) : NULL; /* the endpoint's name says "tcp" */
    r->by_transport = true;
    r->rep = rep;
    lab_cell_cfg(lab, &r->cfg, &lab->eps[t], o->sizes[s], mode, stop);
    r->rate_share = share;
    r->rate_basis = basis;
    r->cfg.rate = share * basis;
    if (r->cfg.rate > 0) r->cfg.block_wait = false; /* an open loop always polls */
    r->cfg.seed = o->shared.seed;
    if (lab->progress != NULL) {
        char what[PROGRESS_WHAT_CAP], size[32];

        size_text(size, sizeof(size), (long long)o->sizes[s]);
        snprintf(what, sizeof(what), "%s %s %s %s", o->proto->name, size, report_mode_name(mode),
                 lab_transport_name(t));
        progress_run_begin(lab->progress, what, rep + 1, o->shared.reps, &r->cfg);
    }
    rc = lab_load(lab, r, t, err);
    if (lab->progress != NULL) progress_run_end(lab->progress, &r->cfg);
    if (r->res.lat == NULL) return rc;
    lab->nrecs++;
    /* After the run, so that a cell the server's exit cut short is still printed and kept; so is
     * one whose load failed (a failed wait cut it short), in the JSONL as in the evidence. */
    if (rc == 0) rc = lab_server_check(lab, r, stop, err);
    if (o->shared.verbose) lab_progress(progress, r);
    if (lab->jsonl != NULL && report_jsonl_append(lab->jsonl, r, &e) < 0 && rc == 0)
        return hb_fail(err, e.code, "--jsonl: %s", e.msg);
    return rc;
}

/*
 * Whether to stop before the next cell: *stop was set (Ctrl-C or another stop
 * signal), or the progress lines' reader is gone (`hopbench lab | head`:
 * SIGPIPE is ignored, so that cannot kill the lab with its server and
 * directory), which lab->reader_gone then records. Any other write error
 * (a full disk) does not stop the work.
 */
static bool lab_stopping(struct lab *lab, FILE *progress, const atomic_int *stop)
{
    if (stop != NULL && atomic_load(stop)) return true;
    if (fd_reader_gone(fileno(progress))) lab->reader_gone = true;
    return lab->reader_gone;
}

/*
 * One cell of transport t in the (size, mode) pair: closed loop, then open
 * loop at each --rates share of the ops/s it just measured.
 */
static int lab_cell(struct lab *lab, unsigned s, enum load_mode mode, unsigned t, unsigned rep,
                    FILE *progress, const atomic_int *stop, struct hb_err *err)
{
    const struct lab_opts *o = lab->opts;
    int rc = lab_server_check(lab, NULL, stop, err);
    double basis;

    if (rc == 0) rc = lab_server_for(lab, o->sizes[s], mode, err);
    if (rc < 0) return rc;
    rc = lab_one(lab, s, mode, t, rep, 0, 0, progress, stop, err);
    if (rc < 0 || o->nrates == 0) return rc;
    basis = report_ops_per_s(&lab->recs[lab->nrecs - 1]);
    if (basis <= 0 || load_errors_total(&lab->recs[lab->nrecs - 1].res) != 0) return 0;
    for (unsigned i = 0; i < o->nrates && rc == 0; i++) {
        if (lab_stopping(lab, progress, stop)) break;
        rc = lab_one(lab, s, mode, t, rep, o->rates[i], basis, progress, stop, err);
    }
    return rc;
}

int lab_run(struct lab *lab, FILE *progress, const atomic_int *stop, struct hb_err *err)
{
    const struct lab_opts *o = lab->opts;
    size_t n = lab_plan_len(o);
    struct lab_step *steps = xcalloc(n, sizeof(*steps));
    int rc = 0;

    lab_plan(o, steps);
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (lab_stopping(lab, progress, stop)) break;
        if (lab->nrecs > 0 && o->shared.cooldown_ns)
            sleep_until_ns(now_ns() + o->shared.cooldown_ns, stop);
        rc = lab_cell(lab, steps[i].size, steps[i].mode, steps[i].transport, steps[i].rep, progress,
                      stop, err);
    }
    /* The server's exit between cells (SIGCHLD set *stop) ends the loops without a cell. */
    if (rc == 0) rc = lab_server_check(lab, NULL, stop, err);
    free(steps);
    return rc;
}

void lab_release(struct lab *lab)
{
    lab_stop_server(lab);
    if (lab->dir[0] != '\0') {
        char owner[sizeof(lab->dir) + sizeof(LEFTOVER_OWNER_FILE) + 1];
        /* The server removes its socket; a crashed one may not have. */
        endpoint_unlink(&lab->eps[1]);
        snprintf(owner, sizeof(owner), "%s/%s", lab->dir, LEFTOVER_OWNER_FILE);
        unlink(owner);
        rmdir(lab->dir);
        lab->dir[0] = '\0';
    }
    leftover_watch_stop(&lab->watch); /* after the server's: its SIGCHLD is not the server's */
    netns_release(&lab->netns);       /* the server that was in A has exited */
    for (size_t i = 0; i < lab->nrecs; i++) {
        load_result_release(&lab->recs[i].res);
        profile_result_release(&lab->recs[i].obs.prof);
    }
    profile_free(lab->prof);
    lab->prof = NULL;
    free(lab->recs);
    lab->recs = NULL;
    lab->nrecs = 0;
}
