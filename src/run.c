/*
 * run: the plan of the `run` command, run by run (see run.h).
 */
#include "run.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/client.h"
#include "endpoint.h"
#include "engine/load.h"
#include "host/budget.h"
#include "procs.h"
#include "registry.h"
#include "report/bottom.h"
#include "report/services.h"
#include "report/summary.h"
#include "sockio.h"
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

/* With --procs: the fds of the load process with the most. */
uint64_t run_fd_need(const struct run_opts *o)
{
    struct load_cfg c = run_need_cfg(o), part;
    uint64_t most = 0;
    unsigned first;

    if (o->procs == 0) return load_fd_need(&c);
    for (unsigned k = 0; k < o->procs; k++) {
        procs_share(&c, k, o->procs, &part, &first);
        if (load_fd_need(&part) > most) most = load_fd_need(&part);
    }
    return most;
}

/*
 * With --rate N% the closed-loop maximum is measured first with the same
 * connections and buffers, and each run then keeps a service histogram too.
 * With --procs: each process's load, and the result they are added into.
 */
size_t run_mem_need(const struct run_opts *o)
{
    struct load_cfg c = run_need_cfg(o), part;
    size_t records = (size_t)o->neps * o->shared.reps, sum;
    unsigned first;

    if (o->procs == 0) return load_mem_need(&c, records - 1);
    sum = load_result_mem(&c) * records;
    for (unsigned k = 0; k < o->procs; k++) {
        size_t one;
        procs_share(&c, k, o->procs, &part, &first);
        one = load_mem_need(&part, 0);
        sum = one > SIZE_MAX - sum ? SIZE_MAX : sum + one;
    }
    return sum;
}

unsigned run_procs_for(const struct run_opts *o, uint64_t hard, uint64_t open)
{
    struct run_opts each = *o;

    if (o->procs_given || o->procs > 0) return o->procs;
    /* the plans --procs refuses (run_check_procs) stay in one process, which the budget refuses */
    if (o->netns != NETNS_NONE || (o->rate_share > 0 && o->nrate_bases == 0)) return 0;
    each.procs = 0;
    if (budget_fds(open, run_fd_need(&each)) <= hard) return 0;
    for (unsigned n = 2; n <= PROCS_MAX && n <= o->load.conns; n++) {
        each.procs = n;
        each.load.threads = o->load.threads < n ? n : o->load.threads;
        if (budget_fds(open, run_fd_need(&each)) <= hard) return n;
    }
    return 0; /* not even PROCS_MAX: the budget check says so */
}

unsigned run_sources_for(const struct run_opts *o, unsigned ports)
{
    const struct endpoint *ep = NULL;
    /* connect() takes a source address's even ports first (the odd ones are bind()'s):
     * past them each connect scans them all, milliseconds each. 7/8 of them: room for
     * ports others hold. */
    uint64_t per = (uint64_t)(ports / 2) * 7 / 8;

    for (unsigned i = 0; i < o->neps && ep == NULL; i++)
        if (o->eps[i].kind == ENDPOINT_TCP && o->eps[i].addr.ss_family == AF_INET &&
            endpoint_is_local(&o->eps[i]))
            ep = &o->eps[i];
    if (o->sources.n > 0 || ep == NULL || per == 0 || o->load.conns <= per) return 0;
    return (unsigned)((o->load.conns + per - 1) / per);
}

int run_plan_auto(struct run_opts *o, const struct budget_limits *l, uint64_t open,
                  struct hb_err *err)
{
    unsigned ports = l->port_hi ? l->port_hi - l->port_lo + 1 : 0;
    unsigned n = run_sources_for(o, ports);

    if (n > 0) {
        if (n > ENDPOINT_MAX_SOURCES) n = ENDPOINT_MAX_SOURCES;
        for (unsigned i = 0; i < n; i++) {
            struct sockaddr_in *in4 = (struct sockaddr_in *)&o->sources.addr[i];
            memset(in4, 0, sizeof(o->sources.addr[i]));
            in4->sin_family = AF_INET;
            in4->sin_addr.s_addr = htonl(0x7f000001u + i);
        }
        o->sources.n = n;
        o->sources_auto = true;
    }
    if (o->procs_given) return 0;
    n = run_procs_for(o, l->nofile_hard, open);
    if (n == 0) return 0; /* one process may, or not even PROCS_MAX: the budget check says */
    return hb_fail(err, -EMFILE,
                   "needs %llu file descriptors, the hard limit is %llu: raise it (ulimit -n %llu, "
                   "as root or in /etc/security/limits.conf) or split the load (--procs %u), and "
                   "run again",
                   (unsigned long long)budget_fds(open, run_fd_need(o)),
                   (unsigned long long)l->nofile_hard,
                   (unsigned long long)budget_fds(open, run_fd_need(o)), n);
}

/* A count of connections as the limits lines print it: "unlimited" for none. */
static const char *room_text(char *buf, size_t cap, uint64_t room)
{
    if (room == UINT64_MAX)
        snprintf(buf, cap, "no limit known");
    else
        snprintf(buf, cap, "room for %llu", (unsigned long long)room);
    return buf;
}

/* What o's plan spends of l (into *plan, room[]: budget_limits_room); the limit that binds. */
static enum budget_limit limits_plan(const struct run_opts *o, const struct budget_limits *l,
                                     uint64_t open, struct budget_plan *plan,
                                     uint64_t room[BUDGET_LIMITS])
{
    struct load_cfg c = run_need_cfg(o), more = c;
    unsigned procs = o->procs ? o->procs : 1, tcp = 0;
    uint64_t fds_each = budget_fds(open, run_fd_need(o));
    size_t mem = run_mem_need(o);

    *plan = (struct budget_plan){ .procs = procs, .local = true };
    for (unsigned i = 0; i < o->neps; i++) {
        tcp += o->eps[i].kind == ENDPOINT_TCP;
        plan->local &= endpoint_is_local(&o->eps[i]);
    }
    more.conns += 1024; /* what 1024 connections more of the same threads would take */
    plan->mem_per_conn = (load_mem_need(&more, 0) - load_mem_need(&c, 0)) / 1024;
    plan->fds_per_proc = fds_each - (c.conns + procs - 1) / procs;
    plan->sources = tcp ? (o->sources.n ? o->sources.n : 1) : 0;
    plan->mem_fixed = mem > plan->mem_per_conn * c.conns ? mem - plan->mem_per_conn * c.conns : 0;
    return budget_limits_room(l, plan, room);
}

int run_limits_check(const struct run_opts *o, const struct budget_limits *l, uint64_t open,
                     struct hb_err *err)
{
    struct budget_plan plan;
    uint64_t room[BUDGET_LIMITS];
    unsigned conns = o->load.conns;

    limits_plan(o, l, open, &plan, room);
    /* fds a process and memory: the budget check's (it raises the soft limit first) */
    if (room[BUDGET_PORTS] < conns)
        return hb_fail(err, -EADDRNOTAVAIL,
                       "%u connections to one TCP endpoint need more ephemeral ports than %u "
                       "source address%s ha%s (%llu): give more with --source",
                       conns, plan.sources, plan.sources == 1 ? "" : "es",
                       plan.sources == 1 ? "s" : "ve", (unsigned long long)room[BUDGET_PORTS]);
    if (room[BUDGET_SYSTEM_FDS] < conns)
        return hb_fail(err, -ENFILE,
                       "%u connections need more fds than the system has left (fs.file-max %llu, "
                       "%llu allocated)",
                       conns, (unsigned long long)l->file_max, (unsigned long long)l->file_nr);
    return 0;
}

void run_limits_print(const struct run_opts *o, const struct budget_limits *l, uint64_t open,
                      FILE *out)
{
    struct load_cfg c = run_need_cfg(o), part;
    unsigned first, ports = l->port_hi ? l->port_hi - l->port_lo + 1 : 0;
    uint64_t room[BUDGET_LIMITS], fds_each = budget_fds(open, run_fd_need(o));
    size_t mem = run_mem_need(o);
    struct budget_plan plan;
    char a[48], b[48], text[160];
    enum budget_limit bind = limits_plan(o, l, open, &plan, room);
    bool local = plan.local;

    if (o->sources_auto)
        fprintf(out,
                "run: %u connections to one TCP endpoint are more than 7/8 of the %u even "
                "ephemeral ports of one source address (connect() takes those first): from %u "
                "(--source %s)\n",
                o->load.conns, ports / 2, o->sources.n,
                endpoint_sources_text(o->sources.addr, o->sources.n, text, sizeof(text)));
    fprintf(out, "limits: %u connections, %u threads", c.conns, c.threads);
    if (o->procs > 0) {
        fprintf(out, " in %u load processes (", o->procs);
        for (unsigned k = 0; k < o->procs; k++) {
            procs_share(&c, k, o->procs, &part, &first);
            fprintf(out, "%s%u", k ? ", " : "", part.conns);
        }
        fprintf(out, ")");
    }
    fprintf(out, "\n");
    fprintf(out,
            "limits: fds: %llu a process (hard RLIMIT_NOFILE; %llu needed each), %s "
            "connections; system: fs.file-max %llu, %llu allocated: %s%s\n",
            (unsigned long long)l->nofile_hard, (unsigned long long)fds_each,
            room_text(a, sizeof(a), room[BUDGET_FDS]), (unsigned long long)l->file_max,
            (unsigned long long)l->file_nr, room_text(b, sizeof(b), room[BUDGET_SYSTEM_FDS]),
            local ? " (a local server's ends take as many)" : "");
    if (plan.sources > 0)
        fprintf(out,
                "limits: ports: %u a source address to one endpoint (net.ipv4."
                "ip_local_port_range %u-%u; connect() takes the even %u first, past them each "
                "connect scans them all), %s: %s\n",
                l->port_hi ? l->port_hi - l->port_lo + 1 : 0, l->port_lo, l->port_hi,
                l->port_hi ? (l->port_hi - l->port_lo + 1) / 2 : 0,
                o->sources.n
                    ? endpoint_sources_text(o->sources.addr, o->sources.n, text, sizeof(text))
                    : "the kernel's one source address",
                room_text(a, sizeof(a), room[BUDGET_PORTS]));
    fprintf(out,
            "limits: accept queue: net.core.somaxconn %d, the most a listener's backlog holds: "
            "connects beyond it wait (TCP sends its SYN again after 1 s, AF_UNIX tries again "
            "every 1 ms)\n",
            l->somaxconn);
    bytes_format(a, sizeof(a), mem);
    bytes_format(b, sizeof(b),
                 l->mem.cgroup_ok && (!l->mem.meminfo_ok || l->mem.cgroup < l->mem.meminfo)
                     ? l->mem.cgroup
                     : l->mem.meminfo);
    fprintf(
        out,
        "limits: memory: %s for the load's buffers and histograms (%llu B a connection), %s available: %s\n",
        a, (unsigned long long)plan.mem_per_conn, b,
        room_text(text, sizeof(text), room[BUDGET_MEMORY]));
    fprintf(out, "limits: binds first: %s (%s connections, the plan has %u)\n",
            budget_limit_name(bind), room_text(a, sizeof(a), room[bind]), c.conns);
}

/*
 * Before the runs: the agent answers and takes the token, and, with
 * --agent-state, announces that state.
 */
static int run_agent_ready(const struct run_opts *o, const atomic_int *stop, struct hb_err *err)
{
    const struct agent_client *a = &o->agent;
    struct agent_req req = { .type = AGENT_STATE };
    struct agent_reply rep;
    int rc;

    if (a->state[0] != '\0') return agent_wait_state(a, stop, err);
    rc = agent_ask(a, &req, &rep, err);
    agent_reply_release(&rep);
    return rc;
}

/*
 * The pre-flight's probe of ep: a connection, and for a protocol with a
 * session (pg, mysql; redis with a password) a log-in on it, so that a server whose way of
 * authenticating the client refuses (a password in clear, an MD5 hash, its
 * own RSA key: codec_msg.why) stops the command before any run, with
 * -EKEYREJECTED and err naming it. Any other end of the log-in (a wrong
 * password, no answer in --timeout) is left to the runs, which count it. A
 * TCP connection is reset at the end: no TIME_WAIT in the run's counts.
 */
static int run_probe(const struct run_opts *o, const struct endpoint *ep, struct hb_err *err)
{
    const struct codec_ops *ops = o->proto->codec;
    struct codec_cfg cfg = { .opts = o->load.opts, .local = ep->kind != ENDPOINT_TCP };
    struct codec_msg msg = { 0 };
    struct linger rst = { .l_onoff = 1, .l_linger = 0 };
    uint8_t bye[16];
    void *st;
    int fd, rc;

    if (cfg.opts == NULL || !codec_session(ops, &cfg))
        return endpoint_probe(ep, (int)(o->load.timeout_ns / NS_PER_MS));
    fd = sock_connect(ep, now_ns() + o->load.timeout_ns);
    if (fd < 0) return fd;
    if (getrandom(&cfg.seed, sizeof(cfg.seed), GRND_NONBLOCK) != (ssize_t)sizeof(cfg.seed))
        cfg.seed = now_ns();
    st = xcalloc(1, ops->state_size);
    ops->init(st, &cfg);
    rc = sock_log_in(fd, ops, st, now_ns() + o->load.timeout_ns, &msg);
    if (rc == 0 && ops->bye != NULL) {
        size_t n = ops->bye(st, bye, sizeof(bye));
        if (n > 0) (void)send(fd, bye, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    free(st);
    if (ep->kind == ENDPOINT_TCP) setsockopt(fd, SOL_SOCKET, SO_LINGER, &rst, sizeof(rst));
    close(fd);
    if (rc == -EPROTO && msg.why != NULL)
        return hb_fail(err, -EKEYREJECTED, "%s: refused to log in: %s", ep->text, msg.why);
    return 0;
}

int run_preflight(const struct run_opts *o, const atomic_int *stop, struct hb_err *err)
{
    uint64_t until = now_ns() + o->wait_ready_ns;

    for (unsigned i = 0; i < o->neps; i++) {
        int rc;

        /* --wait-ready: a server still starting (refused, or its socket file not there yet)
         * is asked again every 50 ms until the time is up */
        while ((rc = run_probe(o, &o->eps[i], err)) < 0 && (rc == -ECONNREFUSED || rc == -ENOENT) &&
               now_ns() < until && (stop == NULL || !atomic_load(stop)))
            sleep_until_ns(now_ns() + 50 * NS_PER_MS, stop);
        if (rc == -EKEYREJECTED) return rc;
        if (rc < 0)
            return hb_fail(err, rc, "cannot connect to %s: %s%s", o->eps[i].text,
                           rc == -ETIMEDOUT ? "no answer within --timeout" : strerror(-rc),
                           o->wait_ready_ns > 0 && rc != -ETIMEDOUT ? " (after --wait-ready)" : "");
    }
    return o->agent_given ? run_agent_ready(o, stop, err) : 0;
}

int run_place_server(struct run *run, struct hb_err *err)
{
    const struct run_opts *o = run->opts;
    pid_t found[CLI_MAX_ENDPOINTS * LISTENER_MAX];
    unsigned n = 0;

    if (o->nserver_pids > 0)
        return place_observe_server(&run->place, o->server_pids, o->nserver_pids, o->server_tree,
                                    err);
    for (unsigned i = 0; i < o->neps; i++)
        for (unsigned k = 0; k < o->nfound[i]; k++)
            found[n++] = o->found[i][k];
    return n == 0 ? 0 : place_observe_server(&run->place, found, n, true, err);
}

/* A server run_find_servers found, once however many endpoints it listens at. */
struct found_server {
    pid_t pid;
    char comm[PROC_COMM_MAX];
    char by[256]; /* the endpoints it was found by */
};

/* Adds the servers an endpoint's lookup found (l, at ep) to s[*n], each once. */
static void found_add(struct found_server *s, unsigned *n, const struct listener *l, const char *ep)
{
    for (unsigned r = 0; r < l->nroots; r++) {
        unsigned k = 0;
        size_t len;

        while (k < *n && s[k].pid != l->roots[r])
            k++;
        if (k == CLI_MAX_ENDPOINTS * LISTENER_MAX) return;
        if (k == *n) {
            s[k] = (struct found_server){ .pid = l->roots[r] };
            snprintf(s[k].comm, sizeof(s[k].comm), "%s", l->comm[r]);
            (*n)++;
        }
        len = strlen(s[k].by);
        snprintf(s[k].by + len, sizeof(s[k].by) - len, "%s%s", len ? " and " : "", ep);
    }
}

void run_find_servers(struct run_opts *o, FILE *out, char *server, size_t cap)
{
    static struct found_server s[CLI_MAX_ENDPOINTS * LISTENER_MAX];
    char ep[TEXT_SAFE_CAP], comm[4 * PROC_COMM_MAX], why[CTR_WHY_MAX];
    unsigned n = 0;
    size_t len;

    server[0] = '\0';
    if (o->no_server_lookup || o->nserver_pids > 0 || o->server_cgroup != NULL ||
        o->services.n > 0 || o->netns != NETNS_NONE)
        return;
    for (unsigned i = 0; i < o->neps; i++) {
        struct listener l;
        int rc;

        if (!endpoint_is_local(&o->eps[i])) continue;
        text_safe(ep, sizeof(ep), o->eps[i].text);
        rc = listener_find(&o->eps[i], &l);
        if (rc == 0 && l.nroots != 1)
            snprintf(o->not_found[i], sizeof(o->not_found[i]),
                     "not found by its listening socket: %s", listener_why(&l, why, sizeof(why)));
        else if (rc < 0)
            snprintf(o->not_found[i], sizeof(o->not_found[i]),
                     "not found by its listening socket: %s", strerror(-rc));
        if (o->not_found[i][0] != '\0') {
            fprintf(out, "server of %s %s (--server-pid names it)\n", ep, o->not_found[i]);
            continue;
        }
        memcpy(o->found[i], l.roots, l.nroots * sizeof(pid_t));
        o->nfound[i] = l.nroots;
        found_add(s, &n, &l, ep);
    }
    for (unsigned k = 0; k < n; k++) {
        text_safe(comm, sizeof(comm), s[k].comm);
        fprintf(out,
                "server: %s (pid %ld, found by its listening socket %s): its tree's CPU and "
                "memory are the server's\n",
                comm, (long)s[k].pid, s[k].by);
        len = strlen(server);
        snprintf(server + len, cap - len, "%s%s (pid %ld, found by its listening socket %s)",
                 len ? "; " : "", comm, (long)s[k].pid, s[k].by);
    }
}

/* Asks the agent; a failure is kept (the first) for run_one to return after the load. */
static int run_agent_ask(struct run *run, struct agent_req *req, struct agent_reply *rep)
{
    struct hb_err err = { 0 };
    int rc = agent_ask(&run->opts->agent, req, rep, &err);

    if (rc < 0 && run->agent_rc == 0) {
        run->agent_rc = rc;
        run->agent_err = err;
    }
    return rc;
}

/* At the window's start: the agent begins its observation of the loaded hop and services. */
static void run_agent_begin(struct run *run)
{
    const struct agent_client *a = &run->opts->agent;
    static struct agent_req req;
    struct agent_reply rep;

    memset(&req, 0, sizeof(req));
    req.type = AGENT_BEGIN;
    snprintf(req.watch[0], sizeof(req.watch[0]), "%s", run->cur->cfg.ep.text);
    req.nwatch = 1;
    memcpy(req.services, a->services, sizeof(req.services));
    req.nservices = a->nservices;
    run->agent_session = 0;
    if (run_agent_ask(run, &req, &rep) < 0) return;
    if (rep.type == AGENT_BEGUN) run->agent_session = rep.session;
    agent_reply_release(&rep);
}

/* At the window's end: the agent's evidence into the record, with where it came from. */
static void run_agent_end(struct run *run)
{
    struct agent_req req = { .type = AGENT_END, .session = run->agent_session };
    struct agent_reply rep;

    if (run->agent_session == 0 || run_agent_ask(run, &req, &rep) < 0) return;
    if (rep.type == AGENT_EVIDENCE) {
        json_object_set_new(rep.evidence, "endpoint", json_string(run->opts->agent.ep.text));
        run->cur->agent = json_incref(rep.evidence);
    }
    agent_reply_release(&rep);
}

/* The local observation's hook, with the agent's begin and end around the same window. */
static void run_window_hook(void *arg, enum load_window at)
{
    struct run *run = arg;

    observe_window_hook(&run->hook, at);
    if (at == LOAD_WINDOW_OPEN) run_agent_begin(run);
    if (at == LOAD_WINDOW_CLOSED) run_agent_end(run);
}

/*
 * Each agent service's CPU per op of the run, and their sum, added to the
 * agent's evidence once the ops are counted.
 */
static void run_agent_per_op(struct run_record *r)
{
    json_t *svcs = json_object_get(r->agent, "services"), *s;
    uint64_t sum = 0, ops = r->res.ops;
    bool all = true;
    size_t i;

    json_array_foreach(svcs, i, s)
    {
        json_t *cpu = json_object_get(s, "cpu_ns");
        bool known = json_is_integer(cpu) && ops > 0;

        all &= known;
        if (known) sum += (uint64_t)json_integer_value(cpu);
        json_object_set_new(s, "cpu_ns_per_op",
                            known ? json_real((double)json_integer_value(cpu) / (double)ops)
                                  : json_null());
    }
    json_object_set_new(r->agent, "services_ns_per_op",
                        all && json_array_size(svcs) > 0 ? json_real((double)sum / (double)ops)
                                                         : json_null());
    json_object_set_new(r->agent, "ops", json_integer((json_int_t)ops));
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
    if (o->nserver_pids == 0 && r->cell < o->neps) { /* the server found for its endpoint */
        memcpy(h->cfg.pids, o->found[r->cell], o->nfound[r->cell] * sizeof(pid_t));
        h->cfg.npids = o->nfound[r->cell];
        if (o->not_found[r->cell][0] != '\0') h->cfg.no_server = o->not_found[r->cell];
    }
    if (run->server_pid > 0 && h->cfg.npids < OBS_MAX_PIDS)
        h->cfg.pids[h->cfg.npids++] = run->server_pid; /* --netns: its own server */
    h->cfg.tree = o->server_tree || (o->nserver_pids == 0 && h->cfg.npids > 0);
    h->cfg.cgroup = o->server_cgroup;
    h->cfg.noisy_cpus = o->shared.noisy_cpus;
    h->cfg.set = o->services.n + o->services.nwatch > 0 ? &o->services : NULL;
    h->cfg.prof = run->prof;
    if (o->procs > 0) { /* the load processes, forked before the window opens */
        r->procs = xcalloc(1, sizeof(*r->procs));
        h->cfg.own_pids = r->procs->pid;
        h->cfg.nown_pids = o->procs;
    }
    observe_set_sampler(&h->cfg, o->shared.sample_given, o->shared.sample_ns, r->cfg.mode,
                        &run->place);
    observe_baseline(&h->cfg);
    h->out = &r->obs;
    h->done = &r->observed;
    r->cfg.on_window = observe_window_hook;
    r->cfg.on_window_arg = h;
    if (o->agent_given) {
        run->cur = r;
        r->cfg.on_window = run_window_hook;
        r->cfg.on_window_arg = run;
    }
}

/*
 * The requests the protocol makes before a run (redis: a mix's GETs read
 * keys SET first), over one connection, not measured: 0, or a negative errno
 * with err set when the load could not run or one of them failed. A stop
 * ends it early; the run then stops too.
 */
static int run_prepare(const struct run_opts *o, struct run_record *r, struct hb_err *err)
{
    union codec_room pre;
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
    /* --source, or the ones chosen (run_plan_auto) for loopback IPv4 endpoints */
    if (c->ep.kind == ENDPOINT_TCP && o->sources.n > 0 &&
        o->sources.addr[0].ss_family == c->ep.addr.ss_family &&
        (!o->sources_auto || endpoint_is_local(&c->ep))) {
        c->src = o->sources.addr;
        c->nsrc = o->sources.n;
    }
    c->cpus = pl->nclient ? pl->client : NULL;
    c->ncpus = pl->nclient;
    c->stop = stop;
}

/* One run of cell `cell` into r (at its share of the cell's base with --rate N%). */
/* What the accept queues refused since `before` (this network namespace's counters). */
static void run_accept_delta(const struct netstat *before, struct record_accept *a)
{
    struct netstat *after = xmalloc(sizeof(*after));
    struct ctr_val ov, dr, sr;

    a->ok = false;
    if (netstat_read(after) == 0) {
        ov = netstat_delta(before, after, "TcpExt.ListenOverflows");
        dr = netstat_delta(before, after, "TcpExt.ListenDrops");
        sr = netstat_delta(before, after, "TcpExt.TCPSynRetrans");
        a->ok = ov.ok && dr.ok && sr.ok;
        a->overflows = ov.v;
        a->drops = dr.v;
        a->syn_retrans = sr.v;
    }
    free(after);
}

static int run_one(struct run *run, unsigned cell, unsigned rep, struct run_record *r,
                   const atomic_int *stop, struct hb_err *err)
{
    const struct run_opts *o = run->opts;
    struct netstat *before = NULL;
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
    run->agent_rc = 0;
    if (run->netns.mode != NETNS_NONE) record_netns_begin(&r->netns, &run->netns, run->client_side);
    if (o->procs > 0 || r->cfg.conns >= RUN_MANY_CONNS) {
        before = xmalloc(sizeof(*before));
        if (netstat_read(before) < 0) {
            free(before);
            before = NULL;
        }
    }
    if (o->procs > 0)
        rc = procs_run(&r->cfg, o->procs, &r->res, r->procs, err);
    else
        rc = load_run(&r->cfg, &r->res, err);
    if (before != NULL) {
        run_accept_delta(before, &r->accept);
        free(before);
    }
    if (r->res.wait_err != 0) r->cut_by = "a failed wait";
    if (run->netns.mode != NETNS_NONE) record_netns_end(&r->netns, &run->netns);
    if (run->progress != NULL) progress_run_end(run->progress, &r->cfg);
    if (r->agent != NULL) run_agent_per_op(r);
    if (rc == 0 && run->agent_rc < 0) rc = hb_fail(err, run->agent_rc, "%s", run->agent_err.msg);
    return rc;
}

void run_order(const struct run_opts *o, unsigned *order)
{
    if (o->order_random)
        stats_order_shuffle(o->neps, o->shared.reps, o->shared.seed, order);
    else
        stats_order_abba(o->neps, o->shared.reps, order);
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

int run_all(struct run *run, struct outfile *jsonl, FILE *out, atomic_int *stop, struct hb_err *err)
{
    const struct run_opts *o = run->opts;
    unsigned slots = o->neps * o->shared.reps, done[CLI_MAX_ENDPOINTS] = { 0 };
    unsigned *order = xcalloc(slots, sizeof(*order));
    int rc = 0;

    run->recs = xcalloc(slots, sizeof(*run->recs));
    run_order(o, order);
    if (o->rate_share > 0) rc = run_bases(run, order, out, stop, err);
    for (unsigned i = 0; i < slots && !run_stopping(stop, out) && rc == 0; i++) {
        struct run_record *r = &run->recs[run->nrecs];
        if (i > 0 && o->shared.cooldown_ns) sleep_until_ns(now_ns() + o->shared.cooldown_ns, stop);
        if (atomic_load(stop)) break;
        rc = run_one(run, order[i], done[order[i]]++, r, stop, err);
        if (r->res.lat == NULL) break;
        run->nrecs++;
        if (jsonl != NULL && report_jsonl_append(jsonl, r, &run->jsonl_err) < 0 && rc == 0)
            rc = run->jsonl_err.code;
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

/* A string of the agent's evidence, escaped for the terminal; "?" when it is not one. */
static const char *agent_text(char *buf, size_t cap, const json_t *v)
{
    return text_safe(buf, cap, json_is_string(v) ? json_string_value(v) : "?");
}

/*
 * One line per run with --agent: the agent's host and state, each service's
 * CPU per op, the loaded hop's established peak on the agent's side.
 */
static void run_agent_lines(FILE *out, const struct run_record *recs, size_t n)
{
    char host[TEXT_SAFE_CAP], name[TEXT_SAFE_CAP], state[TEXT_SAFE_CAP];

    for (size_t i = 0; i < n; i++) {
        const json_t *a = recs[i].agent, *s;
        const json_t *peak = json_object_get(
            json_object_get(json_array_get(json_object_get(a, "hops"), 0), "established"), "peak");
        size_t k;

        if (a == NULL) continue;
        fprintf(out, "agent %s, state %s: %s rep %u:",
                agent_text(host, sizeof(host), json_object_get(a, "host")),
                json_is_string(json_object_get(a, "state_at_begin"))
                    ? agent_text(state, sizeof(state), json_object_get(a, "state_at_begin"))
                    : "none",
                endpoint_name(&recs[i].cfg.ep), recs[i].rep + 1);
        json_array_foreach(json_object_get(a, "services"), k, s)
        {
            const json_t *per_op = json_object_get(s, "cpu_ns_per_op");
            fprintf(out, " %s ", agent_text(name, sizeof(name), json_object_get(s, "name")));
            if (json_is_number(per_op))
                fprintf(out, "%.0f ns/op,", json_number_value(per_op));
            else
                fprintf(out, "n/a,");
        }
        if (json_is_integer(peak))
            fprintf(out, " established peak %lld\n", (long long)json_integer_value(peak));
        else
            fprintf(out, " established n/a\n");
    }
}

/* The kernel counter `name` of r's window (observe.h's OBS_NET_NAMES); false when not read. */
static bool run_net(const struct run_record *r, const char *name, uint64_t *v)
{
    for (unsigned i = 0; i < OBS_NET_COUNT && r->observed; i++)
        if (strcmp(observe_net_name(i), name) == 0 && r->obs.net[i].ok) {
            *v = r->obs.net[i].v;
            return true;
        }
    return false;
}

/*
 * What kept r's connections from all being open, from what the run counted:
 * each cause seen, in the order a plan meets them, into buf.
 */
static const char *run_short_causes(const struct run_record *r, char *buf, size_t cap)
{
    const uint64_t *e = r->res.errors;
    uint64_t overflows = 0;
    size_t off = 0;

    buf[0] = '\0';
#define CAUSE(cond, ...)                                                                           \
    do {                                                                                           \
        if ((cond) && off < cap)                                                                   \
            off += (size_t)snprintf(buf + off, cap - off, "%s", off ? ", " : "");                  \
        if ((cond) && off < cap) off += (size_t)snprintf(buf + off, cap - off, __VA_ARGS__);       \
    } while (0)
    CAUSE(e[OP_ERR_ADDRNOTAVAIL] > 0, "ports (%llu connects out of ephemeral ports)",
          (unsigned long long)e[OP_ERR_ADDRNOTAVAIL]);
    CAUSE(e[OP_ERR_FDS] > 0, "fds (%llu out of file descriptors)",
          (unsigned long long)e[OP_ERR_FDS]);
    if (r->accept.ok)
        CAUSE(r->accept.overflows + r->accept.drops + r->accept.syn_retrans > 0,
              "the accept queue (over the run, its connects included: TcpExt.ListenOverflows "
              "+%llu, ListenDrops +%llu, TCPSynRetrans +%llu: SYNs dropped wait 1 s, 3 s, ... "
              "to be sent again)",
              (unsigned long long)r->accept.overflows, (unsigned long long)r->accept.drops,
              (unsigned long long)r->accept.syn_retrans);
    else
        CAUSE(run_net(r, "TcpExt.ListenOverflows", &overflows) && overflows > 0,
              "the accept queue (TcpExt.ListenOverflows +%llu)", (unsigned long long)overflows);
    CAUSE(r->res.connect_retries > 0 || e[OP_ERR_AGAIN] > 0,
          "the accept queue (%llu AF_UNIX connects tried again, %llu given up)",
          (unsigned long long)r->res.connect_retries, (unsigned long long)e[OP_ERR_AGAIN]);
    CAUSE(e[OP_ERR_REFUSED] > 0, "refusals (%llu: nobody listening)",
          (unsigned long long)e[OP_ERR_REFUSED]);
    CAUSE(e[OP_ERR_TIMEOUT] > 0, "timeouts (%llu)", (unsigned long long)e[OP_ERR_TIMEOUT]);
    CAUSE(e[OP_ERR_RESET] + e[OP_ERR_SHORT] > 0 || r->res.reconnects > 0,
          "the server's closes (%llu resets or short replies, %llu reopened: its --max-conns?)",
          (unsigned long long)(e[OP_ERR_RESET] + e[OP_ERR_SHORT]),
          (unsigned long long)r->res.reconnects);
#undef CAUSE
    if (off == 0) snprintf(buf, cap, "no cause counted");
    return buf;
}

/*
 * With many connections or --procs, per run: how many were open at each end
 * of the window and what kept the rest shut; the load processes' memory.
 */
static void run_conns_lines(FILE *out, const struct run_record *recs, size_t n, unsigned many)
{
    char why[512], a[32];

    for (size_t i = 0; i < n; i++) {
        const struct run_record *r = &recs[i];
        const struct record_procs *p = r->procs;
        uint64_t bytes;
        double per;

        if (r->cfg.conns < many && p == NULL) continue;
        fprintf(out,
                "connections: %s rep %u: %llu of %u open when the window began, %llu when "
                "it ended",
                endpoint_name(&r->cfg.ep), r->rep + 1, (unsigned long long)r->res.open_start,
                r->cfg.conns, (unsigned long long)r->res.open_end);
        if (r->res.open_start < r->cfg.conns || r->res.open_end < r->cfg.conns)
            fprintf(out, "; short by %llu: %s",
                    (unsigned long long)(r->cfg.conns - (r->res.open_end < r->res.open_start
                                                             ? r->res.open_end
                                                             : r->res.open_start)),
                    run_short_causes(r, why, sizeof(why)));
        fprintf(out, "\n");
        if (p == NULL) continue;
        if (!record_procs_growth(p, &bytes, &per)) {
            fprintf(out, "client memory: %u load processes, PSS not read\n", p->n);
            continue;
        }
        bytes_format(a, sizeof(a), bytes);
        fprintf(out,
                "client memory: %u load processes grew by %s (PSS, after the fork to the "
                "window's end) for %u connections: %.0f B a connection\n",
                p->n, a, r->cfg.conns, per);
    }
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
    run_agent_lines(out, recs, n);
    if (run->opts->shared.reps > 1) run_summary_print(run, out);
    /* with repetitions of two endpoints or more the bottom line counts the noisy runs */
    (run->opts->shared.reps > 1 && run->opts->neps > 1 && !run->opts->shared.verbose
         ? report_errors_only
         : report_errors)(out, recs, n);
    report_cut_short(out, recs, n);
    run_conns_lines(out, recs, n, RUN_MANY_CONNS);
}

json_t *run_bottom(const struct run *run, FILE *out)
{
    const struct run_opts *o = run->opts;

    if (o->shared.reps < 2 || run->nrecs == 0) return NULL;
    return bottom_report(out, run->recs, run->nrecs, BOTTOM_BY_RUN, o->shared.seed,
                         o->shared.verbose);
}

void run_release(struct run *run)
{
    for (size_t i = 0; i < run->nrecs; i++) {
        load_result_release(&run->recs[i].res);
        json_decref(run->recs[i].agent);
        free(run->recs[i].procs);
        run->recs[i].procs = NULL;
        profile_result_release(&run->recs[i].obs.prof);
    }
    profile_free(run->prof);
    run->prof = NULL;
    free(run->recs);
    free(run->probes);
    run->recs = NULL;
    run->probes = NULL;
    run->nrecs = 0;
    run->nbases = 0;
}
