/*
 * procs: one run's load in several child processes (see procs.h).
 */
#include "procs.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "evidence/hist_json.h"
#include "evidence/schema.h"
#include "host/counters.h"

/* What a child and the parent say to each other, a byte each; then the child's result. */
enum { MSG_READY = 'R', MSG_GO = 'G', MSG_CLOSED = 'C', MSG_END = 'E' };

/* The most a child's result may take: its histograms are a few KiB each. */
#define PROCS_RESULT_MAX ((size_t)64 << 20)
/* How often the parent, waiting, looks at the stop flag and passes the live counters on. */
#define PROCS_POLL_MS 50

/* floor(total * k / n) for k <= n < 2^31, without overflow for any total. */
static uint64_t part_at(uint64_t total, unsigned k, unsigned n)
{
    return total / n * k + total % n * k / n;
}

void procs_share(const struct load_cfg *cfg, unsigned k, unsigned n, struct load_cfg *out,
                 unsigned *first_thread)
{
    unsigned base = (unsigned)part_at(cfg->conns, k, n);

    *out = *cfg;
    out->conn_base = cfg->conn_base + base;
    out->conns = (unsigned)part_at(cfg->conns, k + 1, n) - base;
    *first_thread = (unsigned)part_at(cfg->threads, k, n);
    out->threads = (unsigned)part_at(cfg->threads, k + 1, n) - *first_thread;
    if (cfg->count) out->count = part_at(cfg->count, k + 1, n) - part_at(cfg->count, k, n);
    if (cfg->rate > 0) out->rate = cfg->rate * out->conns / cfg->conns;
}

/* ---- a child's result, both ways -------------------------------------------------------- */

/* The counters of a load_result that add up, by the name a child's result gives each. */
static const struct {
    const char *key;
    size_t off;
} sums[] = {
    { EV_OPS, offsetof(struct load_result, ops) },
    { EV_CONNECTS, offsetof(struct load_result, connects) },
    { EV_REQUESTS, offsetof(struct load_result, requests) },
    { EV_REPLIES, offsetof(struct load_result, replies) },
    { EV_RECONNECTS, offsetof(struct load_result, reconnects) },
    { EV_RETRIED, offsetof(struct load_result, retried) },
    { EV_CONNECT_RETRIES, offsetof(struct load_result, connect_retries) },
    { EV_STDERR_REPLIES, offsetof(struct load_result, stderr_replies) },
    { EV_CLIENT_CPU_NS, offsetof(struct load_result, client_cpu_ns) },
    { "open_start", offsetof(struct load_result, open_start) },
    { "open_end", offsetof(struct load_result, open_end) },
};

static uint64_t *field(struct load_result *r, size_t off)
{
    return (uint64_t *)(void *)((char *)r + off);
}

static uint64_t field_of(const struct load_result *r, size_t off)
{
    return *(const uint64_t *)(const void *)((const char *)r + off);
}

static json_t *u64_json(uint64_t v)
{
    return json_integer((json_int_t)v);
}

static json_t *u64_list(const uint64_t *v, size_t n)
{
    json_t *a = json_array();

    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, u64_json(v[i]));
    return a;
}

static json_t *pss_json(const struct ctr_val *v)
{
    return v->ok ? u64_json(v->v) : json_null();
}

json_t *procs_result_json(const struct load_result *res, const struct record_proc *me,
                          const char *error)
{
    json_t *j = json_object(), *errors = json_object(), *phases = json_object();

    for (size_t i = 0; i < ARRAY_LEN(sums); i++)
        json_object_set_new(j, sums[i].key, u64_json(field_of(res, sums[i].off)));
    for (int k = 0; k < OP_ERR_KINDS; k++)
        json_object_set_new(errors, op_err_name((enum op_err)k), u64_json(res->errors[k]));
    json_object_set_new(j, EV_ERRORS, errors);
    json_object_set_new(j, "status_classes", u64_list(res->status, ARRAY_LEN(res->status)));
    json_object_set_new(j, "replies_by_kind_index", u64_list(res->replies_kind, CODEC_KINDS));
    json_object_set_new(j, "window_ns", u64_json(res->window_ns));
    json_object_set_new(j, "drain_ns", u64_json(res->drain_ns));
    json_object_set_new(j, "window_start_unix_ns", u64_json(res->window_start_unix_ns));
    json_object_set_new(j, "series_end_ns", u64_json(res->series.end_ns));
    json_object_set_new(j, EV_INTERRUPTED, json_boolean(res->interrupted));
    json_object_set_new(j, "uring_threads", u64_json(res->ring_threads));
    json_object_set_new(j, "uring_errno", u64_json((uint64_t)res->ring_err));
    json_object_set_new(j, "uring_multishot_threads", u64_json(res->ring_ms_threads));
    json_object_set_new(j, "uring_receives_armed", u64_json(res->ring_arms));
    json_object_set_new(j, "wait_errno", u64_json((uint64_t)res->wait_err));
    if (res->lat != NULL) json_object_set_new(j, EV_HISTOGRAM, report_hist_json(res->lat));
    for (int p = 0; p < PHASES && res->phase[0] != NULL; p++)
        json_object_set_new(phases, load_phase_name((enum load_phase)p),
                            report_hist_json(res->phase[p]));
    json_object_set_new(j, EV_PHASES, phases);
    json_object_set_new(j, EV_SERVICE_HISTOGRAM,
                        res->service != NULL ? report_hist_json(res->service) : json_null());
    json_object_set_new(j, "pss_start", pss_json(&me->pss_start));
    json_object_set_new(j, "pss_end", pss_json(&me->pss_end));
    json_object_set_new(j, "error", error != NULL ? json_string(error) : json_null());
    return j;
}

/* j[key], a whole number of at most max: into *v. 0 or -EINVAL with err set. */
static int get_u64(const json_t *j, const char *key, uint64_t max, uint64_t *v, struct hb_err *err)
{
    const json_t *x = json_object_get(j, key);

    if (!json_is_integer(x) || json_integer_value(x) < 0 || (uint64_t)json_integer_value(x) > max)
        return hb_fail(err, -EINVAL, "a load process's result: \"%s\" is missing or out of range",
                       key);
    *v = (uint64_t)json_integer_value(x);
    return 0;
}

/* *dst += the whole number j[key]. */
static int add_u64(const json_t *j, const char *key, uint64_t *dst, struct hb_err *err)
{
    uint64_t v = 0;

    if (get_u64(j, key, UINT64_MAX, &v, err) < 0) return -EINVAL;
    if (__builtin_add_overflow(*dst, v, dst))
        return hb_fail(err, -EINVAL, "a load process's result: \"%s\" overflows when added", key);
    return 0;
}

/* dst[i] += the list j[key]'s ith number, for each of n. */
static int add_list(const json_t *j, const char *key, uint64_t *dst, size_t n, struct hb_err *err)
{
    const json_t *a = json_object_get(j, key);

    if (!json_is_array(a) || json_array_size(a) != n)
        return hb_fail(err, -EINVAL, "a load process's result: \"%s\" is not a list of %zu", key,
                       n);
    for (size_t i = 0; i < n; i++) {
        const json_t *x = json_array_get(a, i);
        if (!json_is_integer(x) || json_integer_value(x) < 0 ||
            __builtin_add_overflow(dst[i], (uint64_t)json_integer_value(x), &dst[i]))
            return hb_fail(err, -EINVAL, "a load process's result: \"%s\" holds a bad count", key);
    }
    return 0;
}

/* The histogram j[key] added into dst (NULL: j must hold none there). */
static int add_hist(struct hist *dst, const json_t *j, const char *key, struct hb_err *err)
{
    const json_t *h = json_object_get(j, key);

    if (dst == NULL && (h == NULL || json_is_null(h))) return 0;
    if (dst == NULL || h == NULL)
        return hb_fail(err, -EINVAL, "a load process's result: \"%s\" is %s", key,
                       h == NULL ? "missing" : "not expected");
    return evidence_hist_add(dst, h, err);
}

/* A PSS reading of a child's result: known, or not (with why). */
static void get_pss(const json_t *j, const char *key, struct ctr_val *v)
{
    const json_t *x = json_object_get(j, key);

    *v = (struct ctr_val){ .ok = json_is_integer(x) && json_integer_value(x) >= 0 };
    if (v->ok)
        v->v = (uint64_t)json_integer_value(x);
    else
        snprintf(v->why, sizeof(v->why), "its /proc/PID/smaps_rollup could not be read");
}

/* The error kinds by name, the window's figures and the flags. */
static int add_window(struct load_result *dst, const json_t *j, struct hb_err *err)
{
    const json_t *errors = json_object_get(j, EV_ERRORS);
    uint64_t v, ring, why;

    if (!json_is_object(errors))
        return hb_fail(err, -EINVAL, "a load process's result: \"" EV_ERRORS "\" is missing");
    for (int k = 0; k < OP_ERR_KINDS; k++)
        if (add_u64(errors, op_err_name((enum op_err)k), &dst->errors[k], err) < 0) return -EINVAL;
    if (get_u64(j, "window_ns", UINT64_MAX, &v, err) < 0) return -EINVAL;
    if (v > dst->window_ns) dst->window_ns = v;
    if (get_u64(j, "drain_ns", UINT64_MAX, &v, err) < 0) return -EINVAL;
    if (v > dst->drain_ns) dst->drain_ns = v;
    if (get_u64(j, "window_start_unix_ns", UINT64_MAX, &v, err) < 0) return -EINVAL;
    if (dst->window_start_unix_ns == 0 || (v != 0 && v < dst->window_start_unix_ns))
        dst->window_start_unix_ns = v;
    if (get_u64(j, "series_end_ns", UINT64_MAX, &v, err) < 0) return -EINVAL;
    if (v > dst->series.end_ns) dst->series.end_ns = v;
    if (get_u64(j, "uring_threads", UINT32_MAX, &ring, err) < 0) return -EINVAL;
    dst->ring_threads += (unsigned)ring;
    if (get_u64(j, "uring_multishot_threads", UINT32_MAX, &ring, err) < 0) return -EINVAL;
    dst->ring_ms_threads += (unsigned)ring;
    if (get_u64(j, "uring_receives_armed", UINT64_MAX, &v, err) < 0) return -EINVAL;
    dst->ring_arms += v;
    if (get_u64(j, "uring_errno", 4095, &why, err) < 0) return -EINVAL;
    if (why != 0) dst->ring_err = (int)why;
    if (get_u64(j, "wait_errno", 4095, &why, err) < 0) return -EINVAL;
    if (why != 0) dst->wait_err = (int)why;
    if (!json_is_boolean(json_object_get(j, EV_INTERRUPTED)))
        return hb_fail(err, -EINVAL, "a load process's result: \"" EV_INTERRUPTED "\" is missing");
    dst->interrupted |= json_is_true(json_object_get(j, EV_INTERRUPTED));
    return 0;
}

int procs_result_add(struct load_result *dst, const json_t *j, struct record_proc *me,
                     struct hb_err *err)
{
    const json_t *phases = json_object_get(j, EV_PHASES), *error = json_object_get(j, "error");
    struct load_result mine = { 0 };

    if (!json_is_object(j))
        return hb_fail(err, -EINVAL, "a load process's result is not a JSON object");
    if (json_is_string(error))
        return hb_fail(err, -EIO, "a load process could not run: %s", json_string_value(error));
    /* its own counters first, for *me; then into dst */
    for (size_t i = 0; i < ARRAY_LEN(sums); i++)
        if (add_u64(j, sums[i].key, field(&mine, sums[i].off), err) < 0 ||
            add_u64(j, sums[i].key, field(dst, sums[i].off), err) < 0)
            return -EINVAL;
    if (add_window(&mine, j, err) < 0 || add_window(dst, j, err) < 0) return -EINVAL;
    if (add_list(j, "status_classes", dst->status, ARRAY_LEN(dst->status), err) < 0 ||
        add_list(j, "replies_by_kind_index", dst->replies_kind, CODEC_KINDS, err) < 0)
        return -EINVAL;
    if (add_hist(dst->lat, j, EV_HISTOGRAM, err) < 0 ||
        add_hist(dst->service, j, EV_SERVICE_HISTOGRAM, err) < 0)
        return -EINVAL;
    if (!json_is_object(phases))
        return hb_fail(err, -EINVAL, "a load process's result: \"" EV_PHASES "\" is missing");
    for (int p = 0; p < PHASES; p++)
        if (add_hist(dst->phase[p], phases, load_phase_name((enum load_phase)p), err) < 0)
            return -EINVAL;
    me->ops = mine.ops;
    me->requests = mine.requests;
    me->replies = mine.replies;
    me->connects = mine.connects;
    me->reconnects = mine.reconnects;
    me->errors = load_errors_total(&mine);
    me->open_start = mine.open_start;
    me->open_end = mine.open_end;
    me->client_cpu_ns = mine.client_cpu_ns;
    get_pss(j, "pss_start", &me->pss_start);
    get_pss(j, "pss_end", &me->pss_end);
    return 0;
}

/* ---- the child ------------------------------------------------------------------------- */

static atomic_int child_stop;

static void child_on_term(int sig)
{
    UNUSED(sig);
    atomic_store(&child_stop, STOP_INTERRUPT);
}

/* What the child's window hook needs: its socket to the parent, its own figures. */
struct child_side {
    int fd;
    struct record_proc *me;
};

/* Says `what` to the parent and waits for its answer (or its end: the socket closed). */
static void child_meet(int fd, char what)
{
    char got;

    (void)send(fd, &what, 1, MSG_NOSIGNAL);
    while (recv(fd, &got, 1, 0) == -1 && errno == EINTR)
        ;
}

static void child_hook(void *arg, enum load_window at)
{
    struct child_side *c = arg;

    if (at == LOAD_WINDOW_OPEN) child_meet(c->fd, MSG_READY);
    if (at != LOAD_WINDOW_CLOSED) return;
    child_meet(c->fd, MSG_CLOSED);
    c->me->pss_end = proc_pss_bytes(getpid()); /* every connection and buffer still in place */
}

static void send_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        p += n;
        len -= (size_t)n;
    }
}

/*
 * The child: its signals (SIGTERM ends its run early; the terminal's are the
 * parent's), its load, its result to the parent; never returns. It started
 * with SIGTERM blocked, so one sent right after the fork waits for the handler.
 */
static _Noreturn void child_main(const struct load_cfg *share, int fd, pid_t parent,
                                 struct load_live *live, struct series_run *series)
{
    struct sigaction sa;
    sigset_t term;
    struct record_proc me = { 0 };
    struct child_side side = { .fd = fd, .me = &me };
    struct load_cfg cfg = *share;
    struct load_result res;
    struct hb_err err = { 0 };
    json_t *j;
    char *text;
    int rc;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = child_on_term; /* no SA_RESTART: a wait for the parent sees it */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    sigprocmask(SIG_UNBLOCK, &term, NULL);
    if (getppid() != parent) _exit(1);
    prctl(PR_SET_NAME, "hb-procs");
    me.pss_start = proc_pss_bytes(getpid());
    cfg.stop = &child_stop;
    cfg.on_window = child_hook;
    cfg.on_window_arg = &side;
    cfg.live = live;
    cfg.series = series;
    rc = load_run(&cfg, &res, &err);
    j = procs_result_json(&res, &me, rc < 0 ? err.msg : NULL);
    text = json_dumps(j, JSON_COMPACT);
    if (text != NULL) send_all(fd, text, strlen(text));
    _exit(text != NULL ? 0 : 1);
}

/* ---- the parent ------------------------------------------------------------------------ */

/* What every child maps: the run's intervals; then the live counters and the slots. */
struct procs_shared {
    struct series_run series;
};

struct child {
    struct load_cfg cfg; /* its share */
    char *buf;           /* its result so far */
    size_t len, cap;
    pid_t pid;
    int fd; /* the parent's end of its socketpair; -1 once it ended */
    unsigned first_thread;
    bool ready, closed, in_result; /* it said R, it said C, its result has begun */
};

static size_t round64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* The shared mapping: its layout for cfg's plan (in *plan), or MAP_FAILED. */
static struct procs_shared *shared_map(const struct load_cfg *cfg, size_t *bytes,
                                       struct load_live **live)
{
    struct series_run plan;
    size_t live_off = round64(sizeof(struct procs_shared));
    size_t slots_off = round64(live_off + (size_t)cfg->threads * sizeof(struct load_live));
    struct procs_shared *sh;

    series_plan(&plan, cfg->duration_ns, cfg->rate > 0 ? cfg->timeout_ns : 0);
    *bytes = slots_off + series_mem(&plan);
    sh = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) return sh;
    sh->series = plan;
    sh->series.counts = (_Atomic uint32_t *)(void *)((char *)sh + slots_off);
    atomic_init(&sh->series.beyond, 0);
    *live = (struct load_live *)(void *)((char *)sh + live_off);
    return sh;
}

/* Takes in what child c sent: its messages, then its result. */
static void child_read(struct child *c)
{
    char tmp[16384];
    ssize_t n = recv(c->fd, tmp, sizeof(tmp), MSG_DONTWAIT);
    size_t i = 0;

    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {
        close(c->fd);
        c->fd = -1;
        return;
    }
    while (!c->in_result && i < (size_t)n) {
        char m = tmp[i];
        if (m == '{') {
            c->in_result = c->ready = c->closed = true; /* a child that skipped its window */
            break;
        }
        c->ready |= m == MSG_READY;
        c->closed |= m == MSG_CLOSED;
        i++;
    }
    if (!c->in_result || (size_t)n == i) return;
    if (c->len + ((size_t)n - i) > PROCS_RESULT_MAX) { /* not a result: drop it */
        c->in_result = false;
        c->len = 0;
        return;
    }
    if (c->len + ((size_t)n - i) + 1 > c->cap) {
        char *grown;
        c->cap = (c->len + ((size_t)n - i) + 1) * 2;
        grown = xmalloc(c->cap);
        if (c->len > 0) memcpy(grown, c->buf, c->len);
        free(c->buf);
        c->buf = grown;
    }
    memcpy(c->buf + c->len, tmp + i, (size_t)n - i);
    c->len += (size_t)n - i;
    c->buf[c->len] = '\0';
}

/* What the parent waits for from each child, in turn. */
enum wait_for { WAIT_READY, WAIT_CLOSED, WAIT_END };

static bool child_waited(const struct child *c, enum wait_for what)
{
    if (c->fd < 0) return true;
    return what == WAIT_READY ? c->ready : what == WAIT_CLOSED && c->closed;
}

/* The children's live counters into cfg->live (the parent's progress line reads those). */
static void live_copy(const struct load_cfg *cfg, const struct load_live *live)
{
    for (unsigned i = 0; cfg->live != NULL && i < cfg->threads; i++) {
        atomic_store_explicit(&cfg->live[i].ops,
                              atomic_load_explicit(&live[i].ops, memory_order_relaxed),
                              memory_order_relaxed);
        atomic_store_explicit(&cfg->live[i].errors,
                              atomic_load_explicit(&live[i].errors, memory_order_relaxed),
                              memory_order_relaxed);
    }
}

/*
 * Waits until every child has said what `what` asks, or ended; meanwhile a
 * stop is passed on to the children once (SIGTERM), and their live counters.
 */
static void procs_wait(struct child *cs, unsigned n, enum wait_for what, const struct load_cfg *cfg,
                       const struct load_live *live, bool *stopped)
{
    struct pollfd pfd[PROCS_MAX];
    unsigned who[PROCS_MAX];

    for (;;) {
        unsigned np = 0;

        for (unsigned k = 0; k < n; k++)
            if (!child_waited(&cs[k], what)) {
                pfd[np] = (struct pollfd){ .fd = cs[k].fd, .events = POLLIN };
                who[np++] = k;
            }
        if (np == 0) return;
        if (!*stopped && cfg->stop != NULL && atomic_load(cfg->stop)) {
            for (unsigned k = 0; k < n; k++)
                kill(cs[k].pid, SIGTERM);
            *stopped = true;
        }
        live_copy(cfg, live);
        if (poll(pfd, np, PROCS_POLL_MS) <= 0) continue;
        for (unsigned i = 0; i < np; i++)
            if (pfd[i].revents != 0) child_read(&cs[who[i]]);
    }
}

/* One byte to each child still there. */
static void procs_say(struct child *cs, unsigned n, char what)
{
    for (unsigned k = 0; k < n; k++)
        if (cs[k].fd >= 0) (void)send(cs[k].fd, &what, 1, MSG_NOSIGNAL);
}

/*
 * Forks child k into cs[k] with its share of cfg. SIGTERM is held across
 * the fork, so the child's handler is in place before one can reach it.
 * Returns 0 or a negative errno with err set.
 */
static int procs_fork(struct child *cs, unsigned k, unsigned n, const struct load_cfg *cfg,
                      struct procs_shared *sh, struct load_live *live, struct hb_err *err)
{
    struct child *c = &cs[k];
    sigset_t term, old;
    pid_t parent = getpid();
    int sv[2], e;

    procs_share(cfg, k, n, &c->cfg, &c->first_thread);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
        return hb_fail(err, -errno, "cannot make a socket pair for load process %u: %s", k,
                       strerror(errno));
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    fflush(NULL);
    sigprocmask(SIG_BLOCK, &term, &old);
    c->pid = fork();
    e = errno;
    if (c->pid == 0) {
        for (unsigned i = 0; i < k; i++)
            if (cs[i].fd >= 0) close(cs[i].fd);
        close(sv[0]);
        child_main(&c->cfg, sv[1], parent, live + c->first_thread, &sh->series);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(sv[1]);
    if (c->pid == -1) {
        close(sv[0]);
        return hb_fail(err, -e, "cannot start load process %u: %s", k, strerror(e));
    }
    c->fd = sv[0];
    return 0;
}

/*
 * Reaps child k and adds its result into res and *me. Returns 0, or a
 * negative errno with err set: it sent no result (how it ended), or one that
 * says its load could not run.
 */
static int procs_collect(struct child *c, unsigned k, struct load_result *res,
                         struct record_proc *me, struct hb_err *err)
{
    json_error_t jerr;
    json_t *j = NULL;
    char how[64], msg[sizeof(err->msg)];
    int status = 0, rc;

    while (waitpid(c->pid, &status, 0) == -1 && errno == EINTR)
        ;
    me->conns = c->cfg.conns;
    me->threads = c->cfg.threads;
    if (c->in_result) j = json_loadb(c->buf, c->len, 0, &jerr);
    if (j == NULL) {
        wait_status_text(how, sizeof(how), status);
        return hb_fail(err, -EIO, "load process %u (pid %ld) %s without its result", k,
                       (long)c->pid, how);
    }
    rc = procs_result_add(res, j, me, err);
    json_decref(j);
    if (rc == 0) return 0;
    memcpy(msg, err->msg, sizeof(msg));
    return hb_fail(err, rc, "load process %u (pid %ld): %s", k, (long)c->pid, msg);
}

/* Whether a child waits at the window's start (not one whose run ended before it). */
static bool procs_any_ready(const struct child *cs, unsigned n)
{
    for (unsigned k = 0; k < n; k++)
        if (cs[k].fd >= 0 && cs[k].ready && !cs[k].in_result) return true;
    return false;
}

/* The window's hook of the parent, as load_run calls it. */
static void procs_hook(const struct load_cfg *cfg, bool hooked, enum load_window at)
{
    if (hooked && cfg->on_window != NULL) cfg->on_window(cfg->on_window_arg, at);
}

int procs_run(const struct load_cfg *cfg, unsigned n, struct load_result *res,
              struct record_procs *procs, struct hb_err *err)
{
    struct child cs[PROCS_MAX];
    struct load_live *live = NULL;
    size_t bytes = 0;
    struct procs_shared *sh = shared_map(cfg, &bytes, &live);
    struct hb_err later = { 0 };
    unsigned started = 0;
    bool stopped = false, hooked;
    int rc = 0;

    load_result_init(res, cfg);
    memset(procs, 0, sizeof(*procs));
    if (sh == MAP_FAILED)
        return hb_fail(err, -errno, "cannot map the load processes' shared memory: %s",
                       strerror(errno));
    memset(sh->series.counts, 0, series_mem(&sh->series)); /* in memory before the hot path */
    memset(cs, 0, sizeof(cs));
    for (; started < n && rc == 0; started++) {
        rc = procs_fork(cs, started, n, cfg, sh, live, err);
        if (rc < 0) break;
        procs->pid[started] = cs[started].pid;
        procs->n = started + 1;
    }
    if (rc < 0) { /* the ones started end at once, unmeasured */
        for (unsigned k = 0; k < started; k++)
            kill(cs[k].pid, SIGTERM);
        stopped = true;
    }
    procs_wait(cs, started, WAIT_READY, cfg, live, &stopped);
    hooked = rc == 0 && procs_any_ready(cs, started);
    procs_hook(cfg, hooked, LOAD_WINDOW_OPEN);
    sh->series.origin_ns = now_ns();
    procs_say(cs, started, MSG_GO);
    procs_hook(cfg, hooked, LOAD_WINDOW_OPENED);
    procs_wait(cs, started, WAIT_CLOSED, cfg, live, &stopped);
    procs_hook(cfg, hooked, LOAD_WINDOW_CLOSED);
    procs_say(cs, started, MSG_END);
    procs_wait(cs, started, WAIT_END, cfg, live, &stopped);
    live_copy(cfg, live);
    for (unsigned k = 0; k < started; k++) {
        int crc = procs_collect(&cs[k], k, res, &procs->proc[k], &later);
        if (crc < 0 && rc == 0) {
            rc = crc;
            *err = later;
        }
        free(cs[k].buf);
    }
    series_result_of(&sh->series, res->series.end_ns, &res->series);
    munmap(sh, bytes);
    return rc;
}
