/*
 * conn: the client connection state machine (see conn.h).
 *
 * Sockets are registered once, edge-triggered for IN|OUT, so no epoll_ctl
 * happens per request in reuse mode. A read that returns less than the buffer
 * has drained the socket, so the loop stops there instead of paying another
 * recv() just to see EAGAIN. Nothing here allocates.
 */
#include "conn.h"

#include <errno.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static void conn_on_event(struct loop *l, int fd, void *data, unsigned events);

void conn_init(struct conn *c, struct conn_ctx *ctx, uint8_t *rbuf, void *codec_state)
{
    struct codec_cfg cc = {
        .size = ctx->cfg->size,
        .request = ctx->req,
        .request_len = ctx->req_len,
    };

    *c = (struct conn){ .ctx = ctx, .rbuf = rbuf, .codec_state = codec_state };
    c->lfd = (struct loop_fd){ .fn = conn_on_event, .data = c, .fd = -1 };
    ctx->cfg->codec->init(codec_state, &cc);
    c->live = true;
    ctx->active++;
}

static void conn_record_phase(struct conn *c, enum load_phase p, uint64_t from, uint64_t to)
{
    if (c->in_window) hist_record(c->ctx->phase[p], to > from ? to - from : 0);
}

static void conn_close_fd(struct conn *c)
{
    if (c->lfd.fd >= 0) close(c->lfd.fd);
    c->lfd.fd = -1;
}

void conn_close(struct conn *c)
{
    conn_close_fd(c);
    tq_disarm(&c->timer);
    if (c->live) c->ctx->active--;
    c->live = false;
    c->state = CONN_IDLE;
}

static void conn_fail(struct conn *c, enum op_err kind, uint64_t now)
{
    struct conn_ctx *ctx = c->ctx;
    struct codec_cfg cc = { .size = ctx->cfg->size,
                            .request = ctx->req,
                            .request_len = ctx->req_len };

    ctx->errors[kind]++;
    conn_close_fd(c);
    /* The codec may be mid-reply: start the next reply from a clean state. */
    ctx->cfg->codec->init(c->codec_state, &cc);
    if (ctx->stopping) {
        conn_close(c);
        return;
    }
    c->state = CONN_RETRY;
    tq_arm(&ctx->retries, &c->timer, now);
}

/* Decides how many requests the next batch holds and whether it is measured; 0 = none left. */
static unsigned conn_plan_batch(struct conn *c, uint64_t now)
{
    struct conn_ctx *ctx = c->ctx;
    unsigned batch = ctx->cfg->pipeline;

    c->in_window = now >= ctx->window_start_ns;
    if (!c->in_window) return batch;
    if (ctx->quota < batch) batch = (unsigned)ctx->quota;
    ctx->quota -= batch;
    return batch;
}

/* The socket buffer is full: ask for EPOLLOUT (kept from then on for this socket). */
static int conn_want_out(struct conn *c, uint64_t now)
{
    int rc;

    if (c->want_out) return 0;
    rc = loop_mod(&c->ctx->loop, &c->lfd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET);
    if (rc < 0) {
        conn_fail(c, op_err_from_errno(-rc), now);
        return -1;
    }
    c->want_out = true;
    return 0;
}

static int conn_write(struct conn *c, uint64_t now)
{
    while (c->wr_off < c->wr_len) {
        ssize_t n = send(c->lfd.fd, c->ctx->req + c->wr_off, c->wr_len - c->wr_off, MSG_NOSIGNAL);
        if (n == -1) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) return conn_want_out(c, now);
            conn_fail(c, op_err_from_errno(errno), now);
            return -1;
        }
        c->wr_off += (size_t)n;
    }
    if (c->t_written == 0) c->t_written = now_ns();
    return 0;
}

/* Writes the next batch. Its latency clock starts here, right before the first send(). */
static void conn_send_batch(struct conn *c)
{
    uint64_t now;

    c->state = CONN_BUSY;
    c->wr_off = 0;
    c->wr_len = c->ctx->req_len * c->batch;
    c->replies = 0;
    c->t_written = c->t_first = 0;
    now = now_ns();
    c->t_sent = now;
    tq_arm(&c->ctx->timeouts, &c->timer, now);
    conn_write(c, now);
}

static void conn_open(struct conn *c, uint64_t now)
{
    struct conn_ctx *ctx = c->ctx;
    bool in_progress = false;
    int fd = endpoint_connect(&ctx->cfg->ep, &in_progress);
    int rc;

    if (fd < 0) {
        conn_fail(c, op_err_from_errno(-fd), now);
        return;
    }
    c->lfd.fd = fd;
    c->want_out = in_progress; /* a pending connect completes with EPOLLOUT */
    rc = loop_add(&ctx->loop, &c->lfd,
                  EPOLLIN | EPOLLRDHUP | EPOLLET | (in_progress ? EPOLLOUT : 0u));
    if (rc < 0) {
        conn_fail(c, op_err_from_errno(-rc), now);
        return;
    }
    if (in_progress) {
        c->state = CONN_CONNECTING;
        tq_arm(&ctx->timeouts, &c->timer, now);
        return;
    }
    if (c->in_window) ctx->connects++;
    conn_record_phase(c, PHASE_CONNECT, c->t_begin, now_ns());
    conn_send_batch(c);
}

void conn_begin(struct conn *c, uint64_t now)
{
    struct conn_ctx *ctx = c->ctx;

    if (ctx->stopping) {
        conn_close(c);
        return;
    }
    c->batch = conn_plan_batch(c, now);
    if (c->batch == 0) {
        conn_close(c);
        return;
    }
    c->t_begin = now_ns(); /* not the caller's: it may be stale by other connections' work */
    if (c->lfd.fd < 0 || ctx->cfg->mode == LOAD_CONNECT)
        conn_open(c, now);
    else
        conn_send_batch(c);
}

void conn_on_timer(struct conn *c, uint64_t now)
{
    if (c->state == CONN_RETRY)
        conn_begin(c, now);
    else if (c->state != CONN_IDLE)
        conn_fail(c, OP_ERR_TIMEOUT, now);
}

/* A reply is complete: record it, and the batch's phases after its last reply. */
static void conn_reply_done(struct conn *c, uint64_t t_done)
{
    struct conn_ctx *ctx = c->ctx;
    uint64_t from = ctx->cfg->mode == LOAD_CONNECT ? c->t_begin : c->t_sent;

    c->replies++;
    if (c->in_window) {
        hist_record(ctx->lat, t_done - from);
        ctx->ops++;
    }
    if (c->replies == c->batch) {
        c->t_done = t_done;
        conn_record_phase(c, PHASE_TTFB, c->t_written, c->t_first);
        conn_record_phase(c, PHASE_RESPONSE, c->t_written, t_done);
    }
}

/*
 * Feeds n received bytes to the codec. Returns 1 when the batch is complete,
 * 0 when more is due, -1 after conn_fail.
 */
static int conn_consume(struct conn *c, const uint8_t *p, size_t n, uint64_t t)
{
    const struct codec_ops *codec = c->ctx->cfg->codec;
    struct codec_msg msg = { 0 };
    size_t off = 0;

    while (off < n) {
        size_t used = 0;
        enum codec_rc rc;

        if (c->replies == c->batch) {
            conn_fail(c, OP_ERR_UNEXPECTED, t);
            return -1;
        }
        rc = codec->feed(c->codec_state, p + off, n - off, &used, &msg);
        off += used;
        if (rc == CODEC_ERROR) {
            conn_fail(c, OP_ERR_WRONG, t);
            return -1;
        }
        if (rc == CODEC_DONE) conn_reply_done(c, t);
    }
    return c->replies == c->batch;
}

/*
 * Reads until the socket is drained or the batch is complete; returns
 * conn_consume's verdict. A short read means drained, unless the peer has
 * closed (`drain`): then the FIN may sit behind the data, and no new edge
 * would announce it, so read on until EOF or EAGAIN.
 */
static int conn_read(struct conn *c, bool drain)
{
    for (;;) {
        ssize_t n = recv(c->lfd.fd, c->rbuf, c->ctx->rbuf_cap, 0);

        if (n > 0) {
            uint64_t t = now_ns();
            int rc;
            if (c->t_first == 0) c->t_first = t;
            rc = conn_consume(c, c->rbuf, (size_t)n, t);
            if (rc != 0) return rc;
            if ((size_t)n < c->ctx->rbuf_cap && !drain) return 0;
            continue;
        }
        if (n == 0) {
            conn_fail(c, OP_ERR_SHORT, now_ns());
            return -1;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN) return 0;
        conn_fail(c, op_err_from_errno(errno), now_ns());
        return -1;
    }
}

static int socket_error(int fd)
{
    int soerr = 0;
    socklen_t len = sizeof(soerr);

    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == -1) return errno;
    return soerr;
}

static void conn_on_connected(struct conn *c, unsigned events, uint64_t now)
{
    int soerr;

    if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return;
    /* Writable without an error or hang-up: connected, no getsockopt needed. */
    soerr = events & (EPOLLERR | EPOLLHUP) ? socket_error(c->lfd.fd) : 0;
    if (soerr != 0) {
        conn_fail(c, op_err_from_errno(soerr), now);
        return;
    }
    if (c->in_window) c->ctx->connects++;
    conn_record_phase(c, PHASE_CONNECT, c->t_begin, now);
    conn_send_batch(c);
}

/* Closes a connect-mode connection and begins the next op. */
static void conn_close_and_next(struct conn *c)
{
    uint64_t t;

    conn_close_fd(c);
    t = now_ns();
    conn_record_phase(c, PHASE_CLOSE, c->t_done, t);
    conn_begin(c, t);
}

/* --close server: the server must close first; anything but EOF is an error. */
static void conn_await_fin(struct conn *c)
{
    for (;;) {
        ssize_t n = recv(c->lfd.fd, c->rbuf, c->ctx->rbuf_cap, 0);

        if (n == 0) {
            conn_close_and_next(c);
            return;
        }
        if (n > 0) {
            conn_fail(c, OP_ERR_UNEXPECTED, now_ns());
            return;
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN) conn_fail(c, op_err_from_errno(errno), now_ns());
        return;
    }
}

/* The batch is complete: reuse goes on; connect mode closes as --close says. */
static void conn_finish_batch(struct conn *c)
{
    const struct load_cfg *cfg = c->ctx->cfg;
    static const struct linger rst = { .l_onoff = 1, .l_linger = 0 };

    if (cfg->mode == LOAD_REUSE) {
        conn_begin(c, c->t_done);
        return;
    }
    if (cfg->close == CLOSE_SERVER) {
        c->state = CONN_CLOSING;
        conn_await_fin(c);
        return;
    }
    if (cfg->close == CLOSE_RST) setsockopt(c->lfd.fd, SOL_SOCKET, SO_LINGER, &rst, sizeof(rst));
    conn_close_and_next(c);
}

static void conn_on_event(struct loop *l, int fd, void *data, unsigned events)
{
    struct conn *c = data;
    uint64_t now = now_ns();

    UNUSED(l);
    UNUSED(fd);
    if (c->state == CONN_CONNECTING) {
        conn_on_connected(c, events, now);
        return;
    }
    if (c->state == CONN_CLOSING) {
        conn_await_fin(c);
        return;
    }
    if (c->state != CONN_BUSY) return;
    if ((events & EPOLLOUT) && conn_write(c, now) != 0) return;
    if (!(events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP))) return;
    if (conn_read(c, (events & (EPOLLRDHUP | EPOLLHUP)) != 0) != 1) return;
    conn_finish_batch(c);
}
