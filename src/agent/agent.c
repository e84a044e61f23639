/*
 * agent: the server side of `run --agent`: the listener, the sessions, the
 * schedule (see agent.h).
 */
#include "agent/agent.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "evidence/schema.h"
#include "host/observe.h"
#include "host/probe.h"
#include "host/service.h"
#include "report/report.h"
#include "report/services.h"

/* A schedule command the agent is stopped during: SIGTERM to its group, SIGKILL after this. */
#define AGENT_CMD_STOP_NS (2 * NS_PER_S)
#define AGENT_CMD_POLL_NS (20 * NS_PER_MS) /* how often a running command is looked at */

_Static_assert(AGENT_ARGS_MAX <= SERVICE_MAX && AGENT_ARGS_MAX <= SERVICE_MAX_WATCH + 1,
               "a begin's lists fit a service set and its loaded hop");

/* ---- the schedule's text ---- */

/* A time ("30", "2.5", "30s", "2m": parse_duration), at most a year, or "next" into *ns (0). */
static int step_duration(const char *w, uint64_t *ns)
{
    if (strcmp(w, "next") == 0) {
        *ns = 0;
        return 0;
    }
    return parse_duration(w, 31536000, ns);
}

/* One line (NUL-terminated, no newline) into a step; 1 for a step, 0 for nothing. */
static int parse_line(char *line, unsigned lineno, struct agent_step *st, struct hb_err *err)
{
    char *name, *dur, *rest, *save = NULL;

    name = strtok_r(line, " \t", &save);
    if (name == NULL || name[0] == '#') return 0;
    dur = strtok_r(NULL, " \t", &save);
    rest = strtok_r(NULL, "", &save);
    while (rest != NULL && (*rest == ' ' || *rest == '\t'))
        rest++;
    if (!agent_name_valid(name))
        return hb_fail(err, -EINVAL, "line %u: '%.*s' is not a state name ([A-Za-z0-9_.-], 1..%d)",
                       lineno, 64, name, AGENT_NAME_MAX - 1);
    if (dur == NULL || step_duration(dur, &st->duration_ns) < 0)
        return hb_fail(err, -EINVAL,
                       "line %u: %s: the duration must be a time (30, 30s, 2m) or 'next'", lineno,
                       name);
    if (rest != NULL && strlen(rest) >= AGENT_CMD_MAX)
        return hb_fail(err, -EINVAL, "line %u: %s: the command is longer than %d bytes", lineno,
                       name, AGENT_CMD_MAX - 1);
    snprintf(st->name, sizeof(st->name), "%s", name);
    snprintf(st->cmd, sizeof(st->cmd), "%s", rest != NULL && strcmp(rest, "-") != 0 ? rest : "");
    return 1;
}

int agent_schedule_parse(const char *text, struct agent_schedule *s, struct hb_err *err)
{
    char line[AGENT_CMD_MAX + 2 * AGENT_NAME_MAX];
    unsigned lineno = 0;

    memset(s, 0, sizeof(*s));
    while (*text != '\0') {
        size_t n = strcspn(text, "\n");
        int rc;

        lineno++;
        if (n >= sizeof(line))
            return hb_fail(err, -EINVAL, "line %u: longer than %zu bytes", lineno,
                           sizeof(line) - 1);
        memcpy(line, text, n);
        line[n] = '\0';
        text += n + (text[n] == '\n');
        if (s->n == AGENT_SCHED_MAX && strspn(line, " \t") != n && line[strspn(line, " \t")] != '#')
            return hb_fail(err, -EINVAL, "line %u: more than %d configurations", lineno,
                           AGENT_SCHED_MAX);
        rc = s->n < AGENT_SCHED_MAX ? parse_line(line, lineno, &s->step[s->n], err) : 0;
        if (rc < 0) return rc;
        for (unsigned i = 0; rc == 1 && i < s->n; i++)
            if (strcmp(s->step[i].name, s->step[s->n].name) == 0)
                return hb_fail(err, -EINVAL, "line %u: %s is named twice", lineno, s->step[i].name);
        s->n += (unsigned)rc;
    }
    if (s->n == 0) return hb_fail(err, -EINVAL, "no configuration in it");
    return 0;
}

/* ---- the agent's state ---- */

struct session {
    uint64_t id;
    uint64_t begun_ns;
    char state[AGENT_NAME_MAX]; /* announced when it began */
    struct service_set set;
    struct observe_cfg cfg;
    struct observe o;
};

/* A connection's turn: the hello going out, the request coming in, the reply going out. */
enum conn_phase { CONN_HELLO = 0, CONN_REQUEST, CONN_REPLY };

struct conn {
    int fd; /* -1: a free slot */
    enum conn_phase phase;
    bool authed;          /* its request carried the token's MAC */
    uint64_t accepted_ns; /* the deadlines count from here (conn_deadline) */
    char peer[AGENT_PEER_MAX];
    char nonce[AGENT_HEX_MAX + 1];
    struct agent_dec d;
    uint8_t body[AGENT_REQ_MAX];
    uint8_t *out; /* the frame going out */
    size_t out_len, out_at;
};

struct agent {
    const struct agent_opts *opts;
    struct agent_schedule *sched; /* NULL without one */
    unsigned cur;                 /* the active step; sched->n: the schedule is done */
    uint64_t since_ns;
    struct session *sess[AGENT_SESSIONS];
    uint64_t next_id;
    struct observe_result res; /* scratch for an end */
    struct conn conn[AGENT_CONNS];
    FILE *log;
    const atomic_int *stop; /* set by a stop signal */
};

static const char *state_now(const struct agent *a)
{
    return a->sched != NULL && a->cur < a->sched->n ? a->sched->step[a->cur].name : "";
}

/*
 * The command of a step, through /bin/sh -c in a process group of its own:
 * 0 when it exited 0, else -ECHILD with err set. A stop signal while it runs
 * ends the group (SIGTERM, SIGKILL after AGENT_CMD_STOP_NS) and returns 0:
 * the caller sees *stop and announces nothing.
 */
static int run_command(const struct agent_step *st, const atomic_int *stop, struct hb_err *err)
{
    char how[64];
    uint64_t stopped_at = 0;
    pid_t pid, got;
    int status = 0;

    if (st->cmd[0] == '\0') return 0;
    pid = fork();
    if (pid == -1) return hb_fail(err, -errno, "%s: cannot fork: %s", st->name, strerror(errno));
    if (pid == 0) {
        setpgid(0, 0);
        signal(SIGPIPE, SIG_DFL); /* ignored here, and an ignored signal stays so across exec */
        execl("/bin/sh", "sh", "-c", st->cmd, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid); /* as the child does: whichever runs first, the group exists */
    for (;;) {
        got = waitpid(pid, &status, WNOHANG);
        if (got == pid) break;
        if (got == -1 && errno != EINTR)
            return hb_fail(err, -errno, "%s: waitpid: %s", st->name, strerror(errno));
        if (stopped_at == 0 && atomic_load(stop) != 0) {
            stopped_at = now_ns();
            kill(-pid, SIGTERM);
        }
        if (stopped_at != 0 && now_ns() - stopped_at > AGENT_CMD_STOP_NS) kill(-pid, SIGKILL);
        sleep_until_ns(now_ns() + AGENT_CMD_POLL_NS, NULL);
    }
    if (stopped_at != 0 || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) return 0;
    wait_status_text(how, sizeof(how), status);
    return hb_fail(err, -ECHILD, "schedule: %s: its command %s", st->name, how);
}

/* Makes step i active (its command first), or ends the schedule when i is past the last. */
static int enter_step(struct agent *a, unsigned i, struct hb_err *err)
{
    int rc;

    a->cur = i;
    if (i >= a->sched->n) {
        fprintf(a->log, "hopbench agent: schedule done: no state announced\n");
        fflush(a->log);
        return 0;
    }
    a->cur = a->sched->n; /* nothing is announced while the command applies it */
    rc = run_command(&a->sched->step[i], a->stop, err);
    if (rc < 0 || atomic_load(a->stop) != 0) return rc; /* stopped: nothing announced */
    a->cur = i;
    a->since_ns = now_ns();
    fprintf(a->log, "hopbench agent: state %s (%u of %u)\n", a->sched->step[i].name, i + 1,
            a->sched->n);
    fflush(a->log);
    return 0;
}

/* Moves the schedule on when its step's time is up or *next was set. */
static int follow_schedule(struct agent *a, atomic_int *next, struct hb_err *err)
{
    const struct agent_step *st;
    bool told = atomic_exchange(next, 0) != 0;

    if (a->sched == NULL || a->cur >= a->sched->n) return 0;
    st = &a->sched->step[a->cur];
    if (told || (st->duration_ns > 0 && now_ns() - a->since_ns >= st->duration_ns))
        return enter_step(a, a->cur + 1, err);
    return 0;
}

static int read_schedule(struct agent *a, const char *path, struct hb_err *err)
{
    /* every line at its longest, comments aside */
    const size_t cap = (size_t)AGENT_SCHED_MAX * (AGENT_CMD_MAX + 2 * AGENT_NAME_MAX);
    char *text = NULL;
    size_t len = 0;
    FILE *f = fopen(path, "re");
    int rc = 0;

    if (f == NULL) return hb_fail(err, -errno, "--schedule %s: %s", path, strerror(errno));
    text = xmalloc(cap + 1);
    len = fread(text, 1, cap + 1, f);
    if (ferror(f) || len > cap)
        rc = hb_fail(err, -EINVAL, "--schedule %s: unreadable or too long", path);
    fclose(f);
    if (rc == 0) {
        text[len] = '\0';
        a->sched = xcalloc(1, sizeof(*a->sched));
        rc = agent_schedule_parse(text, a->sched, err);
        if (rc < 0) {
            char why[sizeof(err->msg)];
            snprintf(why, sizeof(why), "%s", err->msg);
            hb_fail(err, rc, "--schedule %s: %s", path, why);
        }
    }
    free(text);
    return rc;
}

/* ---- answers ---- */

static json_t *error_reply(const char *code, const char *msg)
{
    return json_pack("{s:s, s:s, s:s}", "type", "error", "code", code, "error", msg);
}

static json_t *state_or_null(const char *s)
{
    return s[0] != '\0' ? json_string(s) : json_null();
}

static json_t *hops_json(const struct session *s, struct observe_result *r)
{
    const struct obs_gauge *g0[OBS_GAUGES] = { &r->tw_client, &r->tw_server, &r->established,
                                               &r->client_ports, &r->listen_queue };
    json_t *hops = json_array();

    json_array_append_new(hops, report_hop_json(&s->cfg.ep, false, g0, &r->listen_backlog));
    for (unsigned w = 0; w < s->set.nwatch; w++) {
        const struct obs_gauge *g[OBS_GAUGES];
        for (int i = 0; i < OBS_GAUGES; i++)
            g[i] = &r->watch[w].g[i];
        json_array_append_new(
            hops, report_hop_json(&s->set.watch[w], false, g, &r->watch[w].listen_backlog));
    }
    return hops;
}

static json_t *services_json(const struct session *s, const struct observe_result *r)
{
    json_t *a = json_array();

    for (unsigned i = 0; i < s->set.n; i++)
        json_array_append_new(a, report_service_json(&s->set.svc[i], &r->svc[i], NULL));
    return a;
}

/* What an end sends: the server side of the window between begin and end. */
static json_t *evidence_json(const struct agent *a, const struct session *s,
                             struct observe_result *r)
{
    struct machine m;
    json_t *net = json_object();

    probe_machine(&m);
    for (unsigned i = 0; i < OBS_NET_COUNT; i++)
        json_object_set_new(net, observe_net_name(i), report_ctr_json(&r->net[i]));
    return json_pack(
        "{s:s, s:s, s:I, s:o, s:o, s:o, s:f, s:o, s:{s:o, s:o, s:o, s:i}, s:o, s:o, s:i, s:I, "
        "s:o}",
        "host", m.hostname, EV_VERSION, HOPBENCH_VERSION, "pid", (json_int_t)getpid(),
        "state_at_begin", state_or_null(s->state), "state_at_end", state_or_null(state_now(a)),
        "state_index",
        a->sched != NULL && a->cur < a->sched->n ? json_integer(a->cur) : json_integer(-1),
        EV_WINDOW_S, (double)(now_ns() - s->begun_ns) / 1e9, EV_MACHINE, report_machine_json(&m),
        EV_OBS_CPU, EV_OBS_SYSTEM_BUSY_NS, report_ctr_json(&r->system_busy_ns), EV_OBS_STEAL_NS,
        report_ctr_json(&r->other.steal_ns), "agent_process_ns", report_ctr_json(&r->other.self_ns),
        EV_OBS_CPUS_ALLOWED, (int)r->other.cpus, EV_OBS_SERVICES, services_json(s, r), "hops",
        hops_json(s, r), EV_OBS_SAMPLES, (int)r->samples, EV_OBS_SAMPLE_MS,
        (json_int_t)(r->sample_ns / NS_PER_MS), EV_OBS_NET_DELTA, net);
}

/* A free slot for a session: an empty one, or the oldest past AGENT_SESSION_TTL_S. */
static int free_slot(struct agent *a)
{
    int oldest = -1;

    for (int i = 0; i < AGENT_SESSIONS; i++) {
        if (a->sess[i] == NULL) return i;
        if (oldest < 0 || a->sess[i]->begun_ns < a->sess[oldest]->begun_ns) oldest = i;
    }
    if (now_ns() - a->sess[oldest]->begun_ns < AGENT_SESSION_TTL_S * NS_PER_S) return -1;
    observe_end(&a->sess[oldest]->o, &a->res);
    free(a->sess[oldest]);
    a->sess[oldest] = NULL;
    return oldest;
}

/* The session's services and hops from a begin: 0, or -EINVAL with err set. */
static int session_set(struct session *s, const struct agent_req *req, struct hb_err *err)
{
    if (req->nwatch == 0)
        return hb_fail(err, -EINVAL, "begin: name the endpoint loaded in \"watch\"");
    if (endpoint_parse(&s->cfg.ep, req->watch[0], err) < 0) return -EINVAL;
    for (unsigned i = 1; i < req->nwatch; i++)
        if (service_watch_add(&s->set, req->watch[i], err) < 0) return -EINVAL;
    for (unsigned i = 0; i < req->nservices; i++)
        if (service_add(&s->set, req->services[i], err) < 0) return -EINVAL;
    /* a comm service is found now: the agent starts beside services already up */
    return service_resolve(&s->set, 0, NULL, err) < 0 ? -EINVAL : 0;
}

static json_t *answer_begin(struct agent *a, const struct agent_req *req)
{
    struct hb_err err = { 0 };
    struct session *s;
    int slot = free_slot(a), rc;

    if (slot < 0) return error_reply("busy", "every session is in use");
    s = xcalloc(1, sizeof(*s));
    if (session_set(s, req, &err) < 0) {
        free(s);
        return error_reply("bad_service", err.msg);
    }
    s->cfg.set = s->set.n + s->set.nwatch > 0 ? &s->set : NULL;
    s->cfg.sample_ns = OBS_SAMPLE_CHURN_NS;
    snprintf(s->state, sizeof(s->state), "%s", state_now(a));
    s->id = ++a->next_id;
    s->begun_ns = now_ns();
    rc = observe_begin(&s->o, &s->cfg);
    if (rc < 0) {
        observe_end(&s->o, &a->res); /* releases what begin took: snapshots, the eventfd */
        free(s);
        return error_reply("failed", strerror(-rc));
    }
    a->sess[slot] = s;
    return json_pack("{s:s, s:I, s:o}", "type", "begun", "session", (json_int_t)s->id, "state",
                     state_or_null(s->state));
}

static json_t *answer_end(struct agent *a, const struct agent_req *req)
{
    json_t *ev;

    for (int i = 0; i < AGENT_SESSIONS; i++) {
        struct session *s = a->sess[i];
        if (s == NULL || s->id != req->session) continue;
        observe_end(&s->o, &a->res);
        ev = evidence_json(a, s, &a->res);
        free(s);
        a->sess[i] = NULL;
        if (ev == NULL) return error_reply("failed", "the evidence could not be encoded");
        return json_pack("{s:s, s:o}", "type", "evidence", "evidence", ev);
    }
    return error_reply("unknown_session", "no such session: ended, dropped or never begun");
}

static json_t *answer_state(const struct agent *a)
{
    bool on = a->sched != NULL && a->cur < a->sched->n;

    return json_pack("{s:s, s:o, s:I, s:f}", "type", "state", "state", state_or_null(state_now(a)),
                     "index", (json_int_t)(on ? (int)a->cur : -1), "since_s",
                     on ? (double)(now_ns() - a->since_ns) / 1e9 : 0.0);
}

/*
 * The reply to a request body (NULL: out of memory); *refusal names what was
 * refused, *authed says whether the request carried the token's MAC.
 */
static json_t *answer(struct agent *a, const char *nonce_hex, const struct agent_dec *d,
                      const char **refusal, bool *authed)
{
    static struct agent_req req;
    struct hb_err err = { 0 };
    const struct agent_token *t = &a->opts->token;

    if (agent_req_parse(d->buf, d->len, &req, &err) < 0) {
        *refusal = "a bad request";
        return error_reply("bad_request", err.msg);
    }
    if (!agent_req_mac_ok(t->b, t->len, nonce_hex, d->buf, d->len)) {
        *refusal = "a wrong token";
        return error_reply("auth", "token refused");
    }
    *authed = true;
    if (req.type == AGENT_BEGIN) return answer_begin(a, &req);
    if (req.type == AGENT_END) return answer_end(a, &req);
    return answer_state(a);
}

/* ---- connections ---- */

static void conn_close(struct conn *c)
{
    if (c->fd >= 0) close(c->fd);
    free(c->out);
    c->out = NULL;
    c->fd = -1;
}

/* msg (dropped here) framed as what c sends next: 0, or a negative errno. */
static int conn_queue(struct conn *c, json_t *msg)
{
    static uint8_t frame[AGENT_HDR + AGENT_REPLY_MAX];
    long n = msg != NULL ? agent_frame(msg, AGENT_REPLY_MAX, frame, sizeof(frame)) : -ENOMEM;

    json_decref(msg);
    if (n < 0) return (int)n;
    free(c->out);
    c->out = xmalloc((size_t)n);
    memcpy(c->out, frame, (size_t)n);
    c->out_len = (size_t)n;
    c->out_at = 0;
    return 0;
}

/* Sends what c has to send: 1 when all of it is out, 0 when the socket is full, or -errno. */
static int conn_send(struct conn *c)
{
    while (c->out_at < c->out_len) {
        ssize_t k = send(c->fd, c->out + c->out_at, c->out_len - c->out_at, MSG_NOSIGNAL);

        if (k >= 0) {
            c->out_at += (size_t)k;
            continue;
        }
        if (errno == EINTR) continue;
        return errno == EAGAIN ? 0 : -errno;
    }
    return 1;
}

static void log_refusal(struct agent *a, const struct conn *c, const char *what)
{
    fprintf(a->log, "hopbench agent: refused %s from %s\n", what, c->peer);
    fflush(a->log);
}

/* Closes c, saying on the log whose it was and why: what it did not do within ms. */
static void conn_drop(struct agent *a, struct conn *c, const char *why, int ms)
{
    fprintf(a->log, "hopbench agent: closed the connection from %s: %s within %d ms\n", c->peer,
            why, ms);
    fflush(a->log);
    conn_close(c);
}

/* The answer to what came on c: an error for a bad frame, else the request's reply. */
static json_t *conn_answer(struct agent *a, struct conn *c, int rc)
{
    const char *refusal = NULL;
    json_t *msg;

    if (rc == -EMSGSIZE) {
        refusal = "an oversized message";
        msg = error_reply("too_large", "the message is longer than the agent takes");
    } else if (rc == -EBADMSG || rc == -EPROTO) {
        refusal = "a bad frame";
        msg = error_reply("bad_request", "a frame of length 0, or bytes after the request");
    } else {
        msg = answer(a, c->nonce, &c->d, &refusal, &c->authed);
    }
    if (refusal != NULL) log_refusal(a, c, refusal);
    return msg;
}

/* Reads what came on c: 0 while the request is not whole, 1 once its reply is queued, or -errno. */
static int conn_read(struct agent *a, struct conn *c)
{
    uint8_t chunk[4096];
    ssize_t k = recv(c->fd, chunk, sizeof(chunk), 0);
    size_t used = 0;
    enum agent_dec_rc rc;

    if (k == 0) return -ECONNRESET;
    if (k == -1) return errno == EAGAIN || errno == EINTR ? 0 : -errno;
    rc = agent_dec_feed(&c->d, chunk, (size_t)k, &used);
    if (rc == AGENT_DEC_MORE) return 0;
    c->phase = CONN_REPLY;
    if (rc == AGENT_DEC_ERROR) return conn_queue(c, conn_answer(a, c, c->d.err)) < 0 ? -EIO : 1;
    return conn_queue(c, conn_answer(a, c, used == (size_t)k ? 0 : -EPROTO)) < 0 ? -EIO : 1;
}

/* Moves c on by what poll said of it; closes it when it is done or broken. */
static void conn_step(struct agent *a, struct conn *c, short revents)
{
    int rc = 0;

    if (c->phase == CONN_REQUEST && (revents & (POLLIN | POLLHUP | POLLERR)) != 0)
        rc = conn_read(a, c);
    else if (c->phase != CONN_REQUEST && (revents & (POLLOUT | POLLHUP | POLLERR)) != 0)
        rc = conn_send(c);
    if (rc == 1 && c->phase == CONN_HELLO) {
        c->phase = CONN_REQUEST;
        agent_dec_init(&c->d, c->body, sizeof(c->body));
        return;
    }
    if (rc == 1 && c->phase == CONN_REPLY) rc = conn_send(c); /* the reply just queued */
    if (rc < 0 || (rc == 1 && c->phase == CONN_REPLY)) conn_close(c);
}

/*
 * When c is closed, whatever it is doing, and why: its request's length must
 * be in AGENT_HEAD_MS after its accept, the whole request AGENT_BODY_MS
 * after, its reply taken AGENT_CONN_MS after.
 */
static uint64_t conn_deadline(const struct conn *c, const char **why, int *ms)
{
    if (c->phase == CONN_REPLY) {
        *why = "its reply not taken";
        *ms = AGENT_CONN_MS;
    } else if (c->phase == CONN_HELLO || c->d.hdr_have < AGENT_HDR) {
        *why = "no request length";
        *ms = AGENT_HEAD_MS;
    } else {
        *why = "no whole request";
        *ms = AGENT_BODY_MS;
    }
    return c->accepted_ns + (uint64_t)*ms * NS_PER_MS;
}

/*
 * A slot for a new connection: a free one, else the oldest whose request has
 * not been taken as the token's (so peers that cannot authenticate, silent or
 * part-way through a request, cannot keep out one that can), else none (-1:
 * every place answers a signed request; the newcomer is refused).
 */
static int conn_slot(struct agent *a)
{
    int oldest = -1;

    for (int i = 0; i < AGENT_CONNS; i++) {
        const struct conn *c = &a->conn[i];
        if (c->fd < 0) return i;
        if (!c->authed && (oldest < 0 || c->accepted_ns < a->conn[oldest].accepted_ns)) oldest = i;
    }
    if (oldest >= 0) {
        struct conn *c = &a->conn[oldest];
        fprintf(a->log,
                "hopbench agent: closed the connection from %s for a newcomer: the oldest of "
                "the %d open without a signed request\n",
                c->peer, AGENT_CONNS);
        fflush(a->log);
        conn_close(c);
    }
    return oldest;
}

/* The peer of fd as the log names it: ADDR:PORT, [ADDR]:PORT, or a Unix socket's pid and uid. */
static void peer_text(int fd, const struct sockaddr_storage *sa, char *out, size_t cap)
{
    char addr[INET6_ADDRSTRLEN] = "?";
    struct ucred cred;
    socklen_t len = sizeof(cred);

    if (sa->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &in->sin_addr, addr, sizeof(addr));
        snprintf(out, cap, "%s:%u", addr, ntohs(in->sin_port));
    } else if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, addr, sizeof(addr));
        snprintf(out, cap, "[%s]:%u", addr, ntohs(in6->sin6_port));
    } else if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
        snprintf(out, cap, "unix pid %ld uid %lu", (long)cred.pid, (unsigned long)cred.uid);
    } else {
        snprintf(out, cap, "unix");
    }
}

/* Takes fd, accepted from sa, as a new connection: its hello is queued. */
static void conn_open(struct agent *a, int fd, const struct sockaddr_storage *sa)
{
    uint8_t nonce[AGENT_NONCE_BYTES];
    char peer[AGENT_PEER_MAX];
    int i;
    struct conn *c;

    peer_text(fd, sa, peer, sizeof(peer));
    i = conn_slot(a);
    if (i < 0) {
        fprintf(a->log,
                "hopbench agent: refused a connection from %s: all %d places answer signed "
                "requests\n",
                peer, AGENT_CONNS);
        fflush(a->log);
    }
    if (i < 0 || getrandom(nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce)) {
        close(fd);
        return;
    }
    c = &a->conn[i];
    memset(c, 0, sizeof(*c));
    c->fd = fd;
    c->phase = CONN_HELLO;
    c->accepted_ns = now_ns();
    memcpy(c->peer, peer, sizeof(c->peer));
    agent_hex(nonce, sizeof(nonce), c->nonce);
    if (conn_queue(c, json_pack("{s:s, s:i, s:s}", "type", "hello", "proto", AGENT_PROTO, "nonce",
                                c->nonce)) < 0)
        conn_close(c);
}

/*
 * One turn of the loop: waits (at most 100 ms, or until the nearest
 * connection's deadline) for the listener and the connections, accepts, moves
 * each connection on, closes those past their deadline (conn_deadline).
 */
static void serve_turn(struct agent *a, int lfd)
{
    struct pollfd p[AGENT_CONNS + 1];
    int at[AGENT_CONNS + 1];
    uint64_t now = now_ns(), wait_ns = 100 * NS_PER_MS;
    nfds_t n = 1;

    p[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
    for (int i = 0; i < AGENT_CONNS; i++) {
        struct conn *c = &a->conn[i];
        const char *why = NULL;
        int ms = 0;
        uint64_t deadline;
        if (c->fd < 0) continue;
        deadline = conn_deadline(c, &why, &ms);
        if (deadline <= now) {
            conn_drop(a, c, why, ms); /* gone or too slow: nobody to answer */
            continue;
        }
        if (deadline - now < wait_ns) wait_ns = deadline - now;
        p[n] =
            (struct pollfd){ .fd = c->fd, .events = c->phase == CONN_REQUEST ? POLLIN : POLLOUT };
        at[n++] = i;
    }
    if (poll(p, n, (int)(wait_ns / NS_PER_MS) + 1) <= 0) return;
    for (nfds_t k = 1; k < n; k++)
        if (p[k].revents != 0) conn_step(a, &a->conn[at[k]], p[k].revents);
    for (int i = 0; i < AGENT_CONNS && (p[0].revents & POLLIN) != 0; i++) {
        struct sockaddr_storage sa = { 0 };
        socklen_t len = sizeof(sa);
        int fd = accept4(lfd, (struct sockaddr *)&sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd == -1) break; /* EAGAIN, a connection reset before accept, out of fds */
        conn_open(a, fd, &sa);
    }
}

static void agent_release(struct agent *a)
{
    for (int i = 0; i < AGENT_CONNS; i++)
        conn_close(&a->conn[i]);
    for (int i = 0; i < AGENT_SESSIONS; i++) {
        if (a->sess[i] == NULL) continue;
        observe_end(&a->sess[i]->o, &a->res);
        free(a->sess[i]);
        a->sess[i] = NULL;
    }
    free(a->sched);
    a->sched = NULL;
}

int agent_run(const struct agent_opts *o, atomic_int *stop, atomic_int *next, FILE *out, FILE *log,
              struct hb_err *err)
{
    static struct agent a;
    struct endpoint ep = o->listen;
    struct listen_opts lo = { .backlog = 16, .mode = 0600, .allow_remote = o->listen_given };
    int lfd = -1, rc = 0;
    char shown[TEXT_SAFE_CAP];

    memset(&a, 0, sizeof(a));
    for (int i = 0; i < AGENT_CONNS; i++)
        a.conn[i].fd = -1;
    a.opts = o;
    a.log = log;
    a.stop = stop;
    if (o->schedule_path != NULL) rc = read_schedule(&a, o->schedule_path, err);
    if (rc == 0) lfd = endpoint_listen(&ep, &lo, err);
    if (rc < 0 || lfd < 0) {
        rc = rc < 0 ? rc : lfd;
        goto out;
    }
    fprintf(out, "hopbench agent: listening on %s\n", text_safe(shown, sizeof(shown), ep.text));
    fflush(out);
    if (a.sched != NULL) rc = enter_step(&a, 0, err);
    while (rc == 0 && atomic_load(stop) == 0) {
        rc = follow_schedule(&a, next, err);
        if (rc == 0) serve_turn(&a, lfd);
    }
out:
    if (lfd >= 0) {
        close(lfd);
        endpoint_unlink(&ep);
    }
    agent_release(&a);
    return rc;
}
