/*
 * test_conn: the client connection state machine of conn.c, driven through
 * load_run (the per-thread context, loop and timers it needs are set up only
 * there) with the echo codec, against an in-test responder thread on a Unix
 * socket in a private temp dir. The responder misbehaves on purpose, one way
 * per test, and each failure must be counted under its kind and nothing
 * else; or it answers several connections together, round by round, and no
 * request may be lost or doubled; and the errno -> kind table. Every
 * assertion is on counts.
 */
/* cmocka.h needs these four first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "engine/conn.h"
#include "engine/load.h"
#include "proto/codec.h"
#include "registry.h"

#define REQ_SIZE 64

/* How the responder answers each request of REQ_SIZE bytes. */
enum behaviour {
    ECHO,   /* the same bytes back: a correct reply */
    SHORT,  /* half the reply, then close */
    WRONG,  /* REQ_SIZE bytes that are not the request */
    EXTRA,  /* the reply and one byte more, in one send */
    ONCE,   /* one correct reply on each connection, then close it */
    ROUNDS, /* echo on `conns` connections at once, a round at a time (barrier_serve) */
    LARGE, /* one request of LARGE_SIZE: part echoed while the rest is still unsent (large_serve) */
};

#define LARGE_SIZE  (1024 * 1024)
#define LARGE_FIRST (64 * 1024) /* what large_serve reads and echoes before it waits */

#define ROUNDS_MAX_CONNS    8
#define ROUNDS_MAX_PIPELINE 4

struct responder {
    enum behaviour how;
    unsigned delay_ms;      /* the thread waits this long before it accepts anything */
    unsigned conns;         /* ROUNDS: the connections it serves together */
    unsigned pipeline;      /* ROUNDS: the requests each connection sends per round */
    unsigned long requests; /* ROUNDS: the requests it echoed; read after responder_stop */
    size_t queued;          /* LARGE: request bytes in its receive queue once the client stopped */
    size_t queued_after;    /* LARGE: the most there within 1 s of the first echo */
    int lfd;                /* the listener */
    int stop[2];            /* a byte on stop[1] ends the thread */
    char dir[64];
    char path[96];
    pthread_t tid;
};

/* Reads exactly n bytes; 0 on EOF or error before that. */
static int read_full(int fd, uint8_t *p, size_t n)
{
    size_t off = 0;

    while (off < n) {
        ssize_t r = recv(fd, p + off, n - off, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return 0;
        off += (size_t)r;
    }
    return 1;
}

static int write_full(int fd, const uint8_t *p, size_t n)
{
    size_t off = 0;

    while (off < n) {
        ssize_t w = send(fd, p + off, n - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return 0;
        off += (size_t)w;
    }
    return 1;
}

/* Waits for the client's close, draining what it sends, so our close never discards its bytes. */
static void drain_to_eof(int fd)
{
    uint8_t buf[256];

    while (recv(fd, buf, sizeof(buf), 0) > 0)
        ;
}

/* One connection, answered the responder's way until the client closes it. */
static void serve(const struct responder *rs, int fd)
{
    uint8_t req[REQ_SIZE + 1];

    while (read_full(fd, req, REQ_SIZE)) {
        switch (rs->how) {
        case ECHO:
            if (!write_full(fd, req, REQ_SIZE)) return;
            continue;
        case SHORT:
            (void)write_full(fd, req, REQ_SIZE / 2);
            return;
        case ONCE:
        case ROUNDS: /* served by rounds_serve */
        case LARGE:  /* served by large_serve */
            (void)write_full(fd, req, REQ_SIZE);
            return;
        case WRONG:
            for (size_t i = 0; i < REQ_SIZE; i++)
                req[i] = (uint8_t)~req[i];
            (void)write_full(fd, req, REQ_SIZE);
            break;
        case EXTRA:
            req[REQ_SIZE] = 'x';
            (void)write_full(fd, req, REQ_SIZE + 1);
            break;
        }
        drain_to_eof(fd);
        return;
    }
}

/*
 * ROUNDS: accepts rs->conns connections, then reads a whole batch (pipeline
 * requests) from every one of them before it echoes any: each round's replies
 * reach the client together, so its loop handles them in one batch of events.
 * Ends when a connection closes, or after 5 s without a byte (a stalled client).
 */
static void rounds_serve(struct responder *rs)
{
    static const struct timeval idle = { .tv_sec = 5 };
    uint8_t buf[ROUNDS_MAX_CONNS][REQ_SIZE * ROUNDS_MAX_PIPELINE];
    size_t batch = (size_t)REQ_SIZE * rs->pipeline;
    int fds[ROUNDS_MAX_CONNS];
    unsigned n = 0;

    assert_true(rs->conns <= ROUNDS_MAX_CONNS && rs->pipeline <= ROUNDS_MAX_PIPELINE);
    while (n < rs->conns) {
        struct pollfd p[2] = { { .fd = rs->lfd, .events = POLLIN },
                               { .fd = rs->stop[0], .events = POLLIN } };
        if (poll(p, 2, 5000) <= 0 || p[1].revents) goto out;
        fds[n] = accept(rs->lfd, NULL, NULL);
        if (fds[n] < 0) continue;
        setsockopt(fds[n++], SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof(idle));
    }
    for (;;) {
        for (unsigned i = 0; i < n; i++)
            if (!read_full(fds[i], buf[i], batch)) goto out;
        rs->requests += (unsigned long)n * rs->pipeline;
        for (unsigned i = 0; i < n; i++)
            if (!write_full(fds[i], buf[i], batch)) goto out;
    }
out:
    for (unsigned i = 0; i < n; i++)
        close(fds[i]);
}

/* Request bytes waiting in fd's receive queue. */
static size_t queued_bytes(int fd)
{
    int n = 0;

    return ioctl(fd, FIONREAD, &n) == 0 && n > 0 ? (size_t)n : 0;
}

/*
 * LARGE: waits until the client's first send of LARGE_SIZE bytes stopped at a
 * full send buffer (the queue has not grown for 50 ms), reads LARGE_FIRST of
 * it and echoes them: the client is woken to read, while the bytes it still has
 * in flight stay above a quarter of its buffer, so AF_UNIX does not signal
 * EPOLLOUT. Records the most bytes queued within 1 s of that echo, then echoes
 * the rest and drains to the client's close.
 */
static void large_serve(struct responder *rs, int fd)
{
    static uint8_t buf[LARGE_FIRST];
    size_t left = LARGE_SIZE, q = 0, floor;
    uint64_t until;

    for (;;) {
        usleep(50000);
        if (q > 0 && queued_bytes(fd) == q) break;
        q = queued_bytes(fd);
    }
    rs->queued = q;
    if (q <= LARGE_FIRST || !read_full(fd, buf, LARGE_FIRST) || !write_full(fd, buf, LARGE_FIRST))
        return;
    left -= LARGE_FIRST;
    floor = q - LARGE_FIRST; /* in the queue now, unless the client sends more */
    rs->queued_after = queued_bytes(fd);
    for (until = now_ns() + NS_PER_S; now_ns() < until && rs->queued_after <= floor;) {
        usleep(1000);
        q = queued_bytes(fd);
        if (q > rs->queued_after) rs->queued_after = q;
    }
    while (left > 0) {
        size_t n = left < sizeof(buf) ? left : sizeof(buf);
        ssize_t r = recv(fd, buf, n, 0);
        if (r <= 0 || !write_full(fd, buf, (size_t)r)) return;
        left -= (size_t)r;
    }
    drain_to_eof(fd);
}

static void *responder_main(void *arg)
{
    struct responder *rs = arg;

    if (rs->how == ROUNDS) {
        rounds_serve(rs);
        return NULL;
    }
    if (rs->delay_ms > 0) {
        struct pollfd stop = { .fd = rs->stop[0], .events = POLLIN };
        if (poll(&stop, 1, (int)rs->delay_ms) != 0) return NULL; /* stopped, or poll failed */
    }
    for (;;) {
        struct pollfd p[2] = { { .fd = rs->lfd, .events = POLLIN },
                               { .fd = rs->stop[0], .events = POLLIN } };
        int fd;

        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (p[1].revents) break;
        fd = accept(rs->lfd, NULL, NULL);
        if (fd < 0) continue;
        if (rs->how == LARGE)
            large_serve(rs, fd);
        else
            serve(rs, fd);
        close(fd);
    }
    return NULL;
}

/* The responder running, so teardown can stop it and remove its files after a failed assertion. */
static struct responder *live;

/* Starts the responder's thread on rs, set up and listening. */
static void responder_spawn(struct responder *rs)
{
    assert_int_equal(pipe(rs->stop), 0);
    assert_int_equal(pthread_create(&rs->tid, NULL, responder_main, rs), 0);
    live = rs;
}

/*
 * Listens with `backlog` at a path in a new temp dir (no thread yet); `fill` connections are
 * made and closed at once, so they wait in the accept queue; the thread
 * begins accepting after delay_ms.
 */
static void responder_listen(struct responder *rs, enum behaviour how, int backlog, unsigned fill,
                             unsigned delay_ms)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };

    memset(rs, 0, sizeof(*rs));
    rs->how = how;
    rs->delay_ms = delay_ms;
    snprintf(rs->dir, sizeof(rs->dir), "%s", "/tmp/hb-test-conn-XXXXXX");
    assert_non_null(mkdtemp(rs->dir));
    snprintf(rs->path, sizeof(rs->path), "%s/s.sock", rs->dir);
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", rs->path);
    rs->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(rs->lfd >= 0);
    assert_int_equal(bind(rs->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(rs->lfd, backlog), 0);
    for (unsigned i = 0; i < fill; i++) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(fd >= 0);
        assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        close(fd);
    }
}

/* responder_listen, then the thread. */
static void responder_start_with(struct responder *rs, enum behaviour how, int backlog,
                                 unsigned fill, unsigned delay_ms)
{
    responder_listen(rs, how, backlog, fill, delay_ms);
    responder_spawn(rs);
}

static void responder_start(struct responder *rs, enum behaviour how)
{
    responder_start_with(rs, how, 16, 0, 0);
}

/* ROUNDS over `conns` connections, `pipeline` requests each per round. */
static void responder_start_rounds(struct responder *rs, unsigned conns, unsigned pipeline)
{
    responder_listen(rs, ROUNDS, 16, 0, 0);
    rs->conns = conns;
    rs->pipeline = pipeline;
    responder_spawn(rs);
}

static void responder_stop(struct responder *rs)
{
    live = NULL;
    assert_int_equal(write(rs->stop[1], "x", 1), 1);
    assert_int_equal(pthread_join(rs->tid, NULL), 0);
    close(rs->stop[0]);
    close(rs->stop[1]);
    close(rs->lfd);
    assert_int_equal(unlink(rs->path), 0);
    assert_int_equal(rmdir(rs->dir), 0);
}

/* One connection, one thread, pipeline 1, echo of REQ_SIZE bytes to rs; count or duration. */
static void cfg_for(struct load_cfg *cfg, const struct responder *rs, enum load_mode mode)
{
    char ep[160];
    struct hb_err err = { 0 };

    memset(cfg, 0, sizeof(*cfg));
    snprintf(ep, sizeof(ep), "unix:%s", rs->path);
    assert_int_equal(endpoint_parse(&cfg->ep, ep, &err), 0);
    cfg->codec = codec_find("echo");
    assert_non_null(cfg->codec);
    cfg->size = REQ_SIZE;
    cfg->mode = mode;
    cfg->conns = 1;
    cfg->threads = 1;
    cfg->pipeline = 1;
    cfg->timeout_ns = 10 * NS_PER_S; /* far above anything here: no timeout kind */
}

/* Runs cfg; returns the result (the caller releases it). */
static void run(const struct load_cfg *cfg, struct load_result *res)
{
    struct hb_err err = { 0 };

    memset(res, 0, sizeof(*res));
    if (load_run(cfg, res, &err) != 0) fail_msg("load_run: %s", err.msg);
}

/* Asserts every failed op of res was of `kind`, and that there was at least one. */
static void assert_only_errors_of(const struct load_result *res, enum op_err kind)
{
    for (int k = 0; k < OP_ERR_KINDS; k++) {
        if (k == (int)kind) continue;
        if (res->errors[k] != 0)
            fail_msg("%llu errors of kind %s, expected only %s", (unsigned long long)res->errors[k],
                     op_err_name((enum op_err)k), op_err_name(kind));
    }
    assert_true(res->errors[kind] >= 1);
    assert_int_equal(load_errors_total(res), res->errors[kind]);
}

/* A count-mode run of 10 completes exactly 10 ops, records each, and sees no error. */
static void test_count_ops_recorded(void **state)
{
    struct responder rs;
    struct load_cfg cfg;
    struct load_result res;

    (void)state;
    responder_start(&rs, ECHO);
    for (int mode = LOAD_REUSE; mode <= LOAD_CONNECT; mode++) {
        cfg_for(&cfg, &rs, (enum load_mode)mode);
        cfg.count = 10;
        run(&cfg, &res);
        assert_int_equal(res.ops, 10);
        assert_int_equal(load_errors_total(&res), 0);
        assert_non_null(res.lat);
        assert_int_equal(res.lat->total, 10);
        assert_int_equal(res.replies, res.requests);
        assert_true(res.requests >= 10);
        assert_true(load_result_valid(&res));
        assert_false(res.interrupted);
        if (mode == LOAD_CONNECT)
            assert_int_equal(res.connects, 10); /* a connection per op */
        else
            assert_int_equal(res.connects, 1); /* one kept connection */
        assert_int_equal(res.reconnects, 0);
        load_result_release(&res);
    }
    responder_stop(&rs);
}

/*
 * A bounded run (duration) against a responder that misbehaves `how`: only
 * `kind` is counted. replied: each reply is complete and right before the
 * fault, so ops are recorded; else no op completes. A bad reply (wrong) or
 * bytes none was due for (unexpected) is kept as the run's first bad reply,
 * its first bytes as they came; a fault without bytes (short) keeps none.
 */
static void check_failure(enum behaviour how, enum load_mode mode, enum load_close close,
                          enum op_err kind, bool replied)
{
    struct responder rs;
    struct load_cfg cfg;
    struct load_result res;

    responder_start(&rs, how);
    cfg_for(&cfg, &rs, mode);
    cfg.close = close;
    cfg.duration_ns = 50 * NS_PER_MS;
    run(&cfg, &res);
    assert_only_errors_of(&res, kind);
    if (replied)
        assert_true(res.ops >= 1);
    else
        assert_int_equal(res.ops, 0);
    assert_false(load_result_valid(&res));
    if (kind == OP_ERR_WRONG || kind == OP_ERR_UNEXPECTED) {
        assert_true(res.bad.t_ns != 0);
        assert_int_equal(res.bad.kind, kind);
    } else {
        assert_int_equal(res.bad.t_ns, 0);
    }
    if (how == WRONG) { /* the reply from its first byte, cut at OP_BAD_BYTES */
        assert_true(res.bad.from_start);
        assert_int_equal(res.bad.len, REQ_SIZE < OP_BAD_BYTES ? REQ_SIZE : OP_BAD_BYTES);
    }
    if (how == EXTRA) { /* the one byte after the reply */
        assert_int_equal(res.bad.len, 1);
        assert_int_equal(res.bad.bytes[0], 'x');
    }
    load_result_release(&res);
    responder_stop(&rs);
}

/* The server closes mid-reply: short, in both modes. */
static void test_short(void **state)
{
    (void)state;
    check_failure(SHORT, LOAD_REUSE, CLOSE_CLIENT, OP_ERR_SHORT, false);
    check_failure(SHORT, LOAD_CONNECT, CLOSE_CLIENT, OP_ERR_SHORT, false);
}

/* A reply of the right length but not the request: wrong. */
static void test_wrong(void **state)
{
    (void)state;
    check_failure(WRONG, LOAD_REUSE, CLOSE_CLIENT, OP_ERR_WRONG, false);
    check_failure(WRONG, LOAD_CONNECT, CLOSE_CLIENT, OP_ERR_WRONG, false);
}

/*
 * A byte after the complete reply, when none is due: unexpected. With --close
 * server the client waits for the FIN after the reply, so whether the extra
 * byte comes in the reply's read or after it, it is not the next reply. The
 * reply before it was complete and right, so its op is recorded.
 */
static void test_unexpected(void **state)
{
    (void)state;
    check_failure(EXTRA, LOAD_CONNECT, CLOSE_SERVER, OP_ERR_UNEXPECTED, true);
}

/* Nobody listening at the path: refused, counted per attempt, never a crash. */
static void test_refused(void **state)
{
    struct responder rs;
    struct load_cfg cfg;
    struct load_result res;

    (void)state;
    responder_start(&rs, ECHO);
    cfg_for(&cfg, &rs, LOAD_REUSE);
    responder_stop(&rs); /* the path is gone: ENOENT */
    cfg.duration_ns = 20 * NS_PER_MS;
    run(&cfg, &res);
    assert_only_errors_of(&res, OP_ERR_REFUSED);
    assert_int_equal(res.ops, 0);
    assert_int_equal(res.connects, 0);
    load_result_release(&res);
}

/*
 * A listener whose backlog is full (listen(0) holds one connection, made
 * before the run) and that accepts only after 300 ms: the AF_UNIX connect
 * fails with EAGAIN until then. (30 ms was not enough under ThreadSanitizer:
 * the run's set-up took longer and its first connect found the slot free.) The op waits in its
 * connect phase, tried again every millisecond: one op, no error, the retries counted, and the wait
 * in the connect phase and in the op's latency.
 */
static void test_backlog_full_waits(void **state)
{
    struct responder rs;
    struct load_cfg cfg;
    struct load_result res;

    (void)state;
    responder_start_with(&rs, ECHO, 0, 1, 300);
    cfg_for(&cfg, &rs, LOAD_CONNECT);
    cfg.count = 1;
    run(&cfg, &res);
    assert_int_equal(load_errors_total(&res), 0);
    assert_int_equal(res.ops, 1);
    assert_int_equal(res.connects, 1);
    assert_true(res.connect_retries >= 1);
    /* Each retry comes CONN_RETRY_NS after the last attempt, so the connect took that at least. */
    assert_true(res.phase[PHASE_CONNECT]->max >= res.connect_retries * CONN_RETRY_NS);
    assert_true(res.lat->max >= res.phase[PHASE_CONNECT]->max);
    load_result_release(&res);
    responder_stop(&rs);
}

/*
 * The same full backlog never drained: the op is a timeout, only once
 * --timeout (40 ms) has passed since its first attempt, and the attempts in
 * between are retries, not errors.
 */
static void test_backlog_full_times_out(void **state)
{
    struct responder rs;
    struct load_cfg cfg;
    struct load_result res;

    (void)state;
    responder_start_with(&rs, ECHO, 0, 1, 60000);
    cfg_for(&cfg, &rs, LOAD_CONNECT);
    cfg.count = 1;
    cfg.timeout_ns = 40 * NS_PER_MS;
    run(&cfg, &res);
    assert_only_errors_of(&res, OP_ERR_TIMEOUT);
    assert_int_equal(res.errors[OP_ERR_TIMEOUT], 1);
    assert_int_equal(res.ops, 0);
    assert_true(res.window_ns >= cfg.timeout_ns);
    assert_true(res.connect_retries >= 1);
    assert_true(res.connect_retries <= cfg.timeout_ns / CONN_RETRY_NS);
    load_result_release(&res);
    responder_stop(&rs);
}

/*
 * A server that closes each kept connection after one reply. --retry once:
 * every request after the first on a connection is sent again on a new one,
 * so 4 ops complete with 3 reconnects and 3 retried requests, no error.
 * --retry none: each of those closes fails its op instead (ops 1 and 3
 * complete on fresh connections, 2 and 4 fail), as wrk counts them.
 */
static void test_retry_once_or_none(void **state)
{
    struct responder rs;
    struct load_cfg cfg;
    struct load_result res;

    (void)state;
    responder_start(&rs, ONCE);
    cfg_for(&cfg, &rs, LOAD_REUSE);
    cfg.count = 4;
    run(&cfg, &res);
    assert_int_equal(load_errors_total(&res), 0);
    assert_int_equal(res.ops, 4);
    assert_int_equal(res.reconnects, 3);
    assert_int_equal(res.retried, 3);
    load_result_release(&res);

    cfg.retry = RETRY_NONE;
    run(&cfg, &res);
    assert_int_equal(res.ops, 2);
    assert_int_equal(load_errors_total(&res), 2);
    assert_int_equal(res.errors[OP_ERR_SHORT] + res.errors[OP_ERR_RESET], 2);
    assert_int_equal(res.reconnects, 0);
    assert_int_equal(res.retried, 0);
    load_result_release(&res);
    responder_stop(&rs);
}

/*
 * Eight kept connections whose replies come back together, round after round
 * (ROUNDS): every reply of a round is read before the next requests go out
 * (a kept connection's send waits for the end of its batch of events). No send
 * is lost or doubled: with pipeline 1 and 3, exactly `count` requests reach
 * the server, each reply is checked (the echo codec compares it with its
 * request) and recorded, on the eight first connections, without an error.
 */
static void test_kept_sends_after_batch(void **state)
{
    static const unsigned pipelines[] = { 1, 3 };
    const unsigned conns = 8, rounds = 50;

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(pipelines); i++) {
        struct responder rs;
        struct load_cfg cfg;
        struct load_result res;
        uint64_t count = (uint64_t)conns * pipelines[i] * rounds;

        responder_start_rounds(&rs, conns, pipelines[i]);
        cfg_for(&cfg, &rs, LOAD_REUSE);
        cfg.conns = conns;
        cfg.pipeline = pipelines[i];
        cfg.count = count;
        cfg.timeout_ns = 2 * NS_PER_S;   /* a lost send stalls its connection: a timeout */
        cfg.duration_ns = 10 * NS_PER_S; /* and the run ends short of `count` */
        run(&cfg, &res);
        responder_stop(&rs);
        assert_int_equal(load_errors_total(&res), 0);
        assert_int_equal(res.ops, count);
        assert_int_equal(res.lat->total, count);
        assert_int_equal(res.requests, count);
        assert_int_equal(res.replies, count);
        assert_int_equal(rs.requests, count);
        assert_int_equal(res.connects, conns);
        assert_int_equal(res.reconnects, 0);
        load_result_release(&res);
    }
}

/*
 * A request larger than the socket's send buffer: its first send stops short
 * (EAGAIN). When the server echoes part of it, the client is woken to read,
 * and it sends more of the request then, with the bytes the server read: it
 * does not wait for EPOLLOUT, which AF_UNIX signals only once the bytes in
 * flight fell to a quarter of the send buffer, while the server waits for the
 * rest of the request. The op completes, without an error.
 */
static void test_large_send_goes_on_when_woken(void **state)
{
    struct responder rs;
    struct load_cfg cfg;
    struct load_result res;

    (void)state;
    responder_start(&rs, LARGE);
    cfg_for(&cfg, &rs, LOAD_REUSE);
    cfg.size = LARGE_SIZE;
    cfg.count = 1;
    run(&cfg, &res);
    responder_stop(&rs);
    assert_int_equal(load_errors_total(&res), 0);
    assert_int_equal(res.ops, 1);
    assert_true(rs.queued > LARGE_FIRST && rs.queued < LARGE_SIZE); /* the first send stopped */
    if (rs.queued_after <= rs.queued - LARGE_FIRST)
        fail_msg("the client sent nothing more within 1 s of the first echo: %zu bytes queued "
                 "before it, %zu after the server read %d",
                 rs.queued, rs.queued_after, LARGE_FIRST);
    load_result_release(&res);
}

static void test_errno_kinds(void **state)
{
    static const struct {
        int err;
        enum op_err kind;
        const char *name;
    } table[] = {
        { ECONNREFUSED, OP_ERR_REFUSED, "refused" },
        { ENOENT, OP_ERR_REFUSED, "refused" },
        { ECONNRESET, OP_ERR_RESET, "reset" },
        { EPIPE, OP_ERR_RESET, "reset" },
        { ECONNABORTED, OP_ERR_RESET, "reset" },
        { ETIMEDOUT, OP_ERR_TIMEOUT, "timeout" },
        { EADDRNOTAVAIL, OP_ERR_ADDRNOTAVAIL, "addrnotavail" },
        { EAGAIN, OP_ERR_AGAIN, "eagain" },
        { EMFILE, OP_ERR_FDS, "fds" },
        { ENFILE, OP_ERR_FDS, "fds" },
        { EACCES, OP_ERR_OTHER, "other" },
        { EHOSTUNREACH, OP_ERR_OTHER, "other" },
        { 0, OP_ERR_OTHER, "other" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        enum op_err k = op_err_from_errno(table[i].err);
        if (k != table[i].kind)
            fail_msg("errno %d (%s) -> %s, expected %s", table[i].err, strerror(table[i].err),
                     op_err_name(k), table[i].name);
        assert_string_equal(op_err_name(k), table[i].name);
    }
    /* Every kind has its own name. */
    for (int a = 0; a < OP_ERR_KINDS; a++)
        for (int b = a + 1; b < OP_ERR_KINDS; b++)
            assert_string_not_equal(op_err_name((enum op_err)a), op_err_name((enum op_err)b));
}

static int teardown(void **state)
{
    (void)state;
    if (live != NULL) responder_stop(live);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_errno_kinds, teardown),
        cmocka_unit_test_teardown(test_count_ops_recorded, teardown),
        cmocka_unit_test_teardown(test_short, teardown),
        cmocka_unit_test_teardown(test_wrong, teardown),
        cmocka_unit_test_teardown(test_unexpected, teardown),
        cmocka_unit_test_teardown(test_refused, teardown),
        cmocka_unit_test_teardown(test_backlog_full_waits, teardown),
        cmocka_unit_test_teardown(test_backlog_full_times_out, teardown),
        cmocka_unit_test_teardown(test_retry_once_or_none, teardown),
        cmocka_unit_test_teardown(test_kept_sends_after_batch, teardown),
        cmocka_unit_test_teardown(test_large_send_goes_on_when_woken, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
