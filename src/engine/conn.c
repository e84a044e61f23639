/*
 * conn: the client connection state machine (see conn.h).
 *
 * Sockets are registered once, edge-triggered for IN|RDHUP, so no epoll_ctl
 * happens per request in reuse mode; OUT is added only while a connect is
 * pending or after a send filled the socket buffer, and kept from then on.
 * A read that returns less than the buffer has drained the socket, so the
 * loop stops there instead of paying another recv() just to see EAGAIN.
 * Nothing here allocates.
 *
 * A thread's only connection in closed-loop reuse mode may instead wait for
 * its reply in a blocking recv() (conn_wait): its socket is then made blocking
 * once, and every other send() and recv() passes MSG_DONTWAIT, so the event
 * path behaves the same on either kind of socket.
 */
#include "engine/conn.h"

#include <errno.h>
#include <math.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static void conn_on_event(struct loop *l, int fd, void *data, unsigned events);
static enum op_err conn_codec_err(enum codec_err e);
static void conn_bye(struct conn *c);
static void conn_setup_event(struct conn *c, unsigned events, uint64_t now);
static void conn_send_deferred(void *data);

void conn_init(struct conn *c, struct conn_ctx *ctx, uint8_t *rbuf, uint8_t *wbuf,
               void *codec_state, unsigned index)
{
    struct codec_cfg cc = ctx->codec_cfg;

    *c = (struct conn){ .ctx = ctx, .rbuf = rbuf, .codec_state = codec_state };
    c->wbuf = wbuf != NULL ? wbuf : (uint8_t *)(uintptr_t)ctx->req;
    c->wr_buf = c->wbuf;
    c->lfd = (struct loop_fd){ .fn = conn_on_event, .data = c, .fd = -1 };
    c->sn.idx = SENDQ_NONE;
    c->send = (struct loop_task){ .fn = conn_send_deferred, .data = c };
    if (ctx->cfg->nsrc > 0) c->src = &ctx->cfg->src[index % ctx->cfg->nsrc];
    cc.conn_index = index;
    ctx->cfg->codec->init(codec_state, &cc);
    c->live = true;
    ctx->active++;
}

static void conn_record_phase(struct conn *c, enum load_phase p, uint64_t from, uint64_t to)
{
    /* from == 0: the phase never began (a reply that came before the request was written) */
    if (c->in_window && from != 0) hist_record(c->ctx->phase[p], to > from ? to - from : 0);
}

struct io_uring_sqe *conn_ring_sqe(struct conn_ctx *ctx)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ctx->ring);

    if (sqe == NULL && io_uring_submit(&ctx->ring) >= 0) sqe = io_uring_get_sqe(&ctx->ring);
    return sqe;
}

/*
 * c's socket is about to close: its ring ops still in flight are cancelled
 * (submitted now, before the close and before its buffers can be used again)
 * and their CQEs will be dropped. A cancel's own CQE carries CONN_RING_TAGS
 * without a connection, which the load thread drops too.
 */
static void conn_ring_cancel(struct conn *c)
{
    struct conn_ctx *ctx = c->ctx;
    bool queued = false;

    for (unsigned tag = CONN_RING_RECV; tag <= CONN_RING_SEND; tag <<= 1) {
        struct io_uring_sqe *sqe;

        if (!(c->ring_busy & tag) || (c->ring_stale & tag)) continue;
        c->ring_stale |= (uint8_t)tag;
        sqe = conn_ring_sqe(ctx);
        if (sqe == NULL) continue; /* the ring is broken: its CQE, if any, is dropped anyway */
        io_uring_prep_cancel64(sqe, (uint64_t)(uintptr_t)c | tag, 0);
        io_uring_sqe_set_data64(sqe, CONN_RING_TAGS);
        queued = true;
    }
    if (queued) (void)io_uring_submit(&ctx->ring);
}

static void conn_close_fd(struct conn *c)
{
    if (c->ring_busy) conn_ring_cancel(c);
    c->on_ring = false;
    if (c->lfd.fd >= 0) close(c->lfd.fd);
    c->lfd.fd = -1;
    c->blocking = false;
    c->used = false;
    c->server_closes = false;
}

/* c ends: IDLE, off every timer and queue, not active; its socket stays open. */
static void conn_retire(struct conn *c)
{
    tq_disarm(&c->timer);
    sendq_remove(&c->ctx->sendq, &c->sn);
    if (c->live) c->ctx->active--;
    c->live = false;
    c->state = CONN_IDLE;
}

void conn_close(struct conn *c)
{
    if (c->state != CONN_CONNECTING && c->state != CONN_SETUP) conn_bye(c);
    conn_close_fd(c);
    conn_retire(c);
}

/*
 * The thread's first bad reply: kind and the first bytes of what came (n of
 * them at p; from_start when p is the reply's first byte). Only on the error
 * path, and only once per thread: a copy of at most OP_BAD_BYTES.
 */
static void conn_note_bad(struct conn_ctx *ctx, enum op_err kind, const uint8_t *p, size_t n,
                          bool from_start)
{
    struct op_bad *b = &ctx->bad;

    if (b->t_ns != 0 || n == 0 || p == NULL) return;
    b->t_ns = now_ns();
    b->kind = kind;
    b->from_start = from_start;
    b->len = (uint8_t)(n < OP_BAD_BYTES ? n : OP_BAD_BYTES);
    memcpy(b->bytes, p, b->len);
}

static void conn_fail(struct conn *c, enum op_err kind, uint64_t now)
{
    struct conn_ctx *ctx = c->ctx;

    ctx->errors[kind]++;
    conn_close_fd(c);
    sendq_remove(&ctx->sendq, &c->sn);
    /* The retry begins a new batch: nothing of this one is resent, it is not a reconnect. */
    c->reopen = false;
    c->resend = 0;
    c->replies = 0;
    c->reconnected = false;
    c->mid_reply = false;
    /* The codec may be mid-reply: start the next reply from a clean state. */
    if (ctx->cfg->codec->reset != NULL) ctx->cfg->codec->reset(c->codec_state);
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

    /* Open loop: an op belongs to the window its intended time falls in, however late. */
    c->in_window = (ctx->gap_ns > 0 ? c->t_intended : now) >= ctx->window_start_ns;
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

static void conn_open(struct conn *c, uint64_t now);

/*
 * A kept connection ended (EOF, reset, EPIPE) before any byte of this batch's
 * next reply: the server closed it while idle (keepalive_timeout) or after
 * its last allowed request. Reopens and sends the unanswered requests once;
 * returns false (the caller counts an error) when that does not apply, or
 * with --retry none, which counts such a close as wrk does: an error.
 */
static bool conn_lost(struct conn *c, int err, uint64_t now)
{
    struct conn_ctx *ctx = c->ctx;
    bool gone = err == 0 || err == ECONNRESET || err == EPIPE;

    if (!gone || ctx->cfg->mode != LOAD_REUSE || ctx->stopping) return false;
    if (ctx->cfg->retry == RETRY_NONE) return false;
    if (!(c->used || c->server_closes) || c->reconnected || c->mid_reply) return false;
    ctx->reconnects++;
    c->t_begin = now;
    conn_close_fd(c);
    if (ctx->cfg->codec->reset != NULL) ctx->cfg->codec->reset(c->codec_state);
    c->reconnected = true;
    c->resend = c->batch - c->replies;
    ctx->retried += c->resend;
    tq_disarm(&c->timer);
    conn_open(c, now);
    return true;
}

/* Queues c's receive into its buffer, or the rest of its batch's send, as an SQE of the ring. */
static int conn_ring_queue(struct conn *c, unsigned tag)
{
    struct io_uring_sqe *sqe = conn_ring_sqe(c->ctx);

    if (sqe == NULL) return -EBUSY;
    if (tag == CONN_RING_RECV && c->ctx->ring_ms) {
        /* One receive for the socket's life: each arrival picks a buffer of the group. */
        io_uring_prep_recv_multishot(sqe, c->lfd.fd, NULL, 0, 0);
        sqe->flags |= IOSQE_BUFFER_SELECT;
        sqe->buf_group = CONN_RING_BGID;
        sqe->ioprio |= IORING_RECVSEND_POLL_FIRST;
    } else if (tag == CONN_RING_RECV) {
        io_uring_prep_recv(sqe, c->lfd.fd, c->rbuf, c->ctx->rbuf_cap, 0);
        /* The reply is not there yet (its request goes out in the same submit, or the bytes
         * so far were just read): arm the wait at once rather than try a recv first. */
        sqe->ioprio |= IORING_RECVSEND_POLL_FIRST;
    } else
        io_uring_prep_send(sqe, c->lfd.fd, c->wr_buf + c->wr_off, c->wr_len - c->wr_off,
                           MSG_NOSIGNAL);
    io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)c | tag);
    c->ring_busy |= (uint8_t)tag;
    if (tag == CONN_RING_RECV) c->ctx->ring_arms++;
    return 0;
}

/*
 * --wait uring: whether c's batch goes through the ring. A kept connection
 * with no op of a closed socket still in flight leaves the epoll set the first
 * time (one epoll_ctl per socket), and stays off it until its socket closes.
 */
static bool conn_ring_owns(struct conn *c)
{
    if (c->on_ring) return true;
    if (!c->ctx->ring_on || !c->used || c->ring_busy != 0) return false;
    if (loop_del(&c->ctx->loop, &c->lfd) < 0) return false;
    c->on_ring = true;
    return true;
}

/*
 * The ring's write: the send, and the receive of the reply, queued together
 * for the thread's next wait to submit. The request counts as written when
 * queued: the io_uring_enter that sends it follows at once.
 */
static int conn_ring_write(struct conn *c, uint64_t now)
{
    int rc = 0;

    if (c->wr_off < c->wr_len && !(c->ring_busy & CONN_RING_SEND))
        rc = conn_ring_queue(c, CONN_RING_SEND);
    if (rc == 0 && !(c->ring_busy & CONN_RING_RECV)) rc = conn_ring_queue(c, CONN_RING_RECV);
    if (rc < 0) {
        conn_fail(c, op_err_from_errno(-rc), now);
        return -1;
    }
    if (c->t_written == 0) c->t_written = now_ns();
    return 0;
}

static int conn_write(struct conn *c, uint64_t now)
{
    if (conn_ring_owns(c)) return conn_ring_write(c, now);
    while (c->wr_off < c->wr_len) {
        ssize_t n = send(c->lfd.fd, c->wr_buf + c->wr_off, c->wr_len - c->wr_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n == -1) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) return conn_want_out(c, now);
            if (conn_lost(c, errno, now)) return -1;
            conn_fail(c, op_err_from_errno(errno), now);
            return -1;
        }
        c->wr_off += (size_t)n;
    }
    if (c->t_written == 0) c->t_written = now_ns();
    return 0;
}

/*
 * Lays out the requests still unanswered (all of a new batch, or the ones to
 * send again after a reconnect): a fixed codec's copies in ctx->req, the
 * next entries of the table of a codec whose requests come round, or freshly
 * encoded ones in the connection's own buffer.
 */
static void conn_layout(struct conn *c, unsigned n)
{
    const struct conn_ctx *ctx = c->ctx;
    const struct codec_ops *codec = ctx->cfg->codec;

    c->wr_len = 0;
    if (ctx->cycle_off != NULL) { /* the table's entries from the codec's place in the round */
        uint64_t at = codec->cycle_pos(c->codec_state);
        c->wr_buf = ctx->req + ctx->cycle_off[at];
        c->wr_len = ctx->cycle_off[at + n] - ctx->cycle_off[at];
        codec->advance(c->codec_state, n);
        return;
    }
    if (ctx->req != NULL) {
        c->wr_buf = ctx->req;
        c->wr_len = ctx->req_len * n;
        return;
    }
    c->wr_buf = c->wbuf;
    for (unsigned i = 0; i < n; i++)
        c->wr_len += codec->encode(c->codec_state, c->wbuf + c->wr_len, ctx->wbuf_cap - c->wr_len);
}

/*
 * Writes the next batch; `now` is a time the caller read just before (its
 * timeout is armed from it). The latency clock started at t_begin.
 */
static void conn_send_batch(struct conn *c, uint64_t now)
{
    unsigned n = c->resend ? c->resend : c->batch;
    bool fresh = c->resend == 0;

    c->state = CONN_BUSY;
    c->wr_off = 0;
    conn_layout(c, n);
    /* A resend is the same requests again: `requests` counts each request once. */
    if (fresh) c->ctx->requests += n;
    if (fresh) {
        c->replies = 0;
        c->reconnected = false;
    }
    c->resend = 0;
    c->t_written = c->t_first = 0;
    /* From when the connection took the batch up (encoding it, reopening a kept connection the
     * server closed), so that the latency is all the time the op holds its connection. A resent
     * batch keeps it: the lost connection is part of its latency. */
    if (fresh) c->t_sent = c->t_begin;
    tq_arm(&c->ctx->timeouts, &c->timer, now);
    conn_write(c, now);
}

/* The session is ready: the connect phase ends here, and the batch goes out. */
static void conn_session_ready(struct conn *c, uint64_t now)
{
    conn_record_phase(c, PHASE_CONNECT, c->t_begin, now);
    conn_send_batch(c, now);
}

/*
 * One step of the codec's session set-up: src (NULL first, right after the
 * connect) in, and what the codec answers written out. Returns 0 while the
 * set-up goes on or once the batch was sent, -1 after conn_fail.
 */
static int conn_setup_step(struct conn *c, const uint8_t *src, size_t len, uint64_t now)
{
    const struct codec_ops *codec = c->ctx->cfg->codec;

    do {
        struct codec_msg msg = { 0 };
        size_t used = 0, out_len = 0;
        enum codec_rc rc = codec->setup(c->codec_state, src, len, &used, c->wbuf, &out_len, &msg);

        if (rc == CODEC_ERROR) {
            enum op_err kind = msg.error_reply ? OP_ERR_ERRREPLY : conn_codec_err(msg.err);
            conn_note_bad(c->ctx, kind, src, len, false);
            conn_fail(c, kind, now);
            return -1;
        }
        if (rc == CODEC_DONE && used < len) { /* the server spoke before it was asked */
            conn_note_bad(c->ctx, OP_ERR_UNEXPECTED, src + used, len - used, false);
            conn_fail(c, OP_ERR_UNEXPECTED, now);
            return -1;
        }
        c->setup_done = rc == CODEC_DONE;
        if (out_len > 0) {
            c->wr_buf = c->wbuf;
            c->wr_off = 0;
            c->wr_len = out_len;
            if (conn_write(c, now) != 0) return -1;
        }
        if (src != NULL) src += used;
        len -= used;
    } while (len > 0 && c->wr_off == c->wr_len); /* more to read once the answer is out */
    if (len > 0) { /* the server went on before our answer could be written */
        conn_note_bad(c->ctx, OP_ERR_UNEXPECTED, src, len, false);
        conn_fail(c, OP_ERR_UNEXPECTED, now);
        return -1;
    }
    if (c->setup_done && c->wr_off == c->wr_len) conn_session_ready(c, now_ns());
    return 0;
}

/* Connected: the codec's session set-up first, when it has one, else the batch at once. */
static void conn_connected(struct conn *c, uint64_t now)
{
    if (!codec_session(c->ctx->cfg->codec, &c->ctx->codec_cfg)) {
        conn_session_ready(c, now);
        return;
    }
    c->state = CONN_SETUP;
    c->setup_done = false;
    c->wr_off = c->wr_len = 0;
    tq_arm(&c->ctx->timeouts, &c->timer, now); /* the set-up is bounded by --timeout too */
    if (conn_setup_step(c, NULL, 0, now) < 0 || c->state != CONN_SETUP) return;
    /* A server that speaks first (MySQL's greeting) may have done so already: the edge that
     * said so came with the connect's and is spent, so read now (EAGAIN when nothing came). */
    conn_setup_event(c, EPOLLIN, now);
}

/* An event while the session is set up: write what is pending, read what the server says. */
static void conn_setup_event(struct conn *c, unsigned events, uint64_t now)
{
    if ((events & EPOLLOUT) && c->wr_off < c->wr_len) {
        if (conn_write(c, now) != 0) return;
        if (c->setup_done && c->wr_off == c->wr_len) {
            conn_session_ready(c, now_ns());
            return;
        }
    }
    if (!(events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP))) return;
    while (c->state == CONN_SETUP) {
        ssize_t n = recv(c->lfd.fd, c->rbuf, c->ctx->rbuf_cap, MSG_DONTWAIT);

        if (n > 0) {
            if (conn_setup_step(c, c->rbuf, (size_t)n, now_ns()) < 0) return;
            continue;
        }
        if (n == 0) {
            conn_fail(c, OP_ERR_SHORT, now_ns()); /* closed before the session was ready */
            return;
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN) conn_fail(c, op_err_from_errno(errno), now_ns());
        return;
    }
}

/* A codec with a session says goodbye before a client-side close (best effort). */
static void conn_bye(struct conn *c)
{
    const struct codec_ops *codec = c->ctx->cfg->codec;
    size_t n;

    if (codec->bye == NULL || c->lfd.fd < 0 || c->ctx->wbuf_cap == 0) return;
    n = codec->bye(c->codec_state, c->wbuf, c->ctx->wbuf_cap);
    if (n > 0) (void)send(c->lfd.fd, c->wbuf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/*
 * An AF_UNIX connect found the listener's backlog full (EAGAIN). A blocking
 * connect() would sleep until there is room, and TCP retransmits its SYN
 * instead of failing: so the op waits too, in its connect phase, and tries
 * again after CONN_RETRY_NS; only --timeout after its first attempt
 * (t_begin) is it an error, a timeout.
 */
static void conn_backlog_wait(struct conn *c, uint64_t now)
{
    struct conn_ctx *ctx = c->ctx;

    if (now > c->t_begin && now - c->t_begin >= ctx->cfg->timeout_ns) {
        conn_fail(c, OP_ERR_TIMEOUT, now);
        return;
    }
    c->state = CONN_BACKLOG;
    tq_arm(&ctx->retries, &c->timer, now);
}

static void conn_open(struct conn *c, uint64_t now)
{
    struct conn_ctx *ctx = c->ctx;
    bool in_progress = false;
    int fd = endpoint_connect_from(&ctx->cfg->ep, c->src, &in_progress);
    int rc;

    if (fd == -EAGAIN && ctx->cfg->ep.kind != ENDPOINT_TCP) {
        conn_backlog_wait(c, now);
        return;
    }
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
    conn_connected(c, now_ns());
}

/* Open loop, poisson: an exponential gap with mean ctx->gap_ns (xorshift64*, seeded per conn). */
static uint64_t conn_gap_ns(struct conn *c)
{
    double u;

    if (!c->ctx->cfg->poisson) return (uint64_t)c->ctx->gap_ns;
    c->rng ^= c->rng >> 12;
    c->rng ^= c->rng << 25;
    c->rng ^= c->rng >> 27;
    u = (double)((c->rng * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0; /* [0, 1) */
    return (uint64_t)(-log(1.0 - u) * c->ctx->gap_ns);
}

uint64_t conn_intended_in(struct conn *c, uint64_t from, uint64_t end)
{
    uint64_t n = 0;

    if (from >= end) return 0;
    if (!c->ctx->cfg->poisson) {
        uint64_t gap = c->ctx->gap_ns >= 1 ? (uint64_t)c->ctx->gap_ns : 1;
        return (end - from + gap - 1) / gap;
    }
    for (uint64_t at = from; at < end; at += conn_gap_ns(c))
        n++;
    return n;
}

void conn_abandon(struct conn *c)
{
    struct conn_ctx *ctx = c->ctx;
    bool in_flight = c->state == CONN_CONNECTING || c->state == CONN_BACKLOG ||
                     c->state == CONN_SEND || c->state == CONN_BUSY;

    if (!c->live) return;
    /* sn.at is the intended time of the next op not yet taken, whatever c's state. */
    ctx->errors[OP_ERR_TIMEOUT] += in_flight + conn_intended_in(c, c->sn.at, ctx->end_ns);
    conn_retire(c);
}

/*
 * Open loop: waits in ctx->sendq until this op's intended time, then takes
 * it and schedules the next one. Returns true when the op must wait.
 */
static bool conn_wait_turn(struct conn *c)
{
    struct conn_ctx *ctx = c->ctx;

    /* Count mode with the quota used up: end now, not after waiting a gap. */
    if (ctx->gap_ns <= 0 || ctx->quota == 0) return false;
    if (c->sn.at > now_ns()) {
        c->state = CONN_WAIT;
        sendq_push(&ctx->sendq, &c->sn);
        return true;
    }
    c->t_intended = c->sn.at;
    c->sn.at += conn_gap_ns(c);
    return false;
}

/*
 * conn_begin; `fresh`: now was read just before, in this call chain (the previous
 * batch's end), and is the op's start; else the op reads its own, since the
 * caller's may be stale by other connections' work.
 */
static void conn_begin_at(struct conn *c, uint64_t now, bool fresh)
{
    struct conn_ctx *ctx = c->ctx;

    tq_disarm(&c->timer); /* the last batch's timeout, if it is still armed */
    if (ctx->stopping) {
        conn_close(c);
        return;
    }
    /* Open loop: the ops intended inside the window are all sent, none after it. */
    if (ctx->gap_ns > 0 && c->sn.at >= ctx->end_ns) {
        conn_retire(c);
        return;
    }
    if (conn_wait_turn(c)) return;
    c->batch = conn_plan_batch(c, now);
    if (c->batch == 0) {
        conn_close(c);
        return;
    }
    c->t_begin = fresh ? now : now_ns();
    if (c->reopen && ctx->cfg->mode == LOAD_REUSE) ctx->reconnects++;
    c->reopen = false;
    if (c->lfd.fd < 0 || ctx->cfg->mode == LOAD_CONNECT) {
        conn_open(c, c->t_begin); /* its connect's timeout from its own start */
        return;
    }
    /* In a handler, the send waits for the other ready sockets: their replies are read first,
     * and the requests then go out back to back, which costs client and server fewer wake-ups.
     * Elsewhere (the first batch, a timer, the blocking wait) loop_defer sends at once. */
    c->state = CONN_SEND;
    loop_defer(&ctx->loop, &c->send);
}

void conn_begin(struct conn *c, uint64_t now)
{
    conn_begin_at(c, now, false);
}

/* The end of the batch of events: a kept connection's next batch goes out. */
static void conn_send_deferred(void *data)
{
    struct conn *c = data;

    if (c->state == CONN_SEND) conn_send_batch(c, c->t_begin);
}

void conn_on_timer(struct conn *c, uint64_t now)
{
    if (c->state == CONN_RETRY) {
        conn_begin(c, now);
    } else if (c->state == CONN_BACKLOG) {
        c->ctx->connect_retries++;
        conn_open(c, now);
    } else if (c->state != CONN_IDLE) {
        conn_fail(c, OP_ERR_TIMEOUT, now);
    }
}

/* The kind of error a codec verdict counts as. */
static enum op_err conn_codec_err(enum codec_err e)
{
    switch (e) {
    case CODEC_ERR_TOO_BIG:
        return OP_ERR_TOOBIG;
    case CODEC_ERR_BODY:
        return OP_ERR_BODY;
    case CODEC_ERR_NONE:
    case CODEC_ERR_MISMATCH:
        break;
    }
    return OP_ERR_WRONG;
}

/*
 * A reply is complete: count what it said, and the batch's phases after its
 * last reply. A well-formed reply that reports a failure (non-2xx, an error
 * reply) is an error, but the connection goes on. Returns whether it is one
 * of the window's ops, whose latency *lat the caller records in ctx->lat.
 */
static bool conn_reply_done(struct conn *c, const struct codec_msg *msg, uint64_t t_done,
                            uint64_t *lat)
{
    struct conn_ctx *ctx = c->ctx;
    uint64_t from = ctx->cfg->mode == LOAD_CONNECT ? c->t_begin : c->t_sent;
    uint64_t intended = ctx->gap_ns > 0 ? c->t_intended : from;
    bool ok = true, op = false;

    c->replies++;
    ctx->replies++;
    ctx->replies_kind[msg->kind < CODEC_KINDS ? msg->kind : 0]++;
    c->reconnected = false; /* progress since: a later loss may reconnect again */
    c->server_closes |= msg->closes;
    if (msg->stderr_bytes > 0) ctx->stderr_replies++;
    if (msg->status != 0) {
        unsigned cls = msg->status / 100;
        ctx->status[cls >= 1 && cls <= 5 ? cls : 0]++;
        if (cls != 2) {
            ctx->errors[OP_ERR_STATUS]++;
            ok = false;
        }
    }
    if (msg->error_reply && ok) {
        ctx->errors[OP_ERR_ERRREPLY]++;
        ok = false;
    }
    if (c->in_window && ok) {
        /* Open loop: from the intended time (a reply late because the one before it was late
         * counts its wait); the service time, from the actual send, goes beside it. */
        series_note(&ctx->series, t_done); /* before the histogram has it: a compare */
        *lat = t_done - (intended < from ? intended : from);
        if (ctx->service != NULL) hist_record(ctx->service, t_done - from);
        ctx->ops++;
        op = true;
    }
    if (c->replies == c->batch) {
        c->t_done = t_done;
        conn_record_phase(c, PHASE_TTFB, c->t_written, c->t_first);
        conn_record_phase(c, PHASE_RESPONSE, c->t_written, t_done);
    }
    return op;
}

/*
 * The replies one read brought end together: once the last of them is read and checked, at
 * one clock reading (a pipelined batch of 16 replies in one read took 16 readings before;
 * with one, hopbench's client CPU per request at --pipeline 16 fell from 0.37 to 0.35 µs,
 * bench/JOURNAL.md). An earlier reply's end is late by the checking of those after it in the
 * same read, tens of ns each. At most REPLY_RUN wait for their reading.
 */
#define REPLY_RUN 32

/*
 * The replies done[0 .. *n - 1] end now (conn_reply_done); *n = 0. Those of one batch
 * began together, so their latencies are one value: it goes into the histogram once,
 * with their count (a reply's series_note comes first all the same: only the first
 * can turn the interval, at one clock reading).
 */
static void replies_end(struct conn *c, const struct codec_msg *done, unsigned *n)
{
    uint64_t t, lat = 0, run_lat = 0;
    unsigned run = 0;

    if (*n == 0) return;
    t = now_ns();
    if (c->t_first == 0) c->t_first = t; /* the batch's first bytes came in this read */
    for (unsigned i = 0; i < *n; i++) {
        if (!conn_reply_done(c, &done[i], t, &lat)) continue;
        if (run > 0 && lat != run_lat) {
            hist_record_n(c->ctx->lat, run_lat, run);
            run = 0;
        }
        run_lat = lat;
        run++;
    }
    if (run > 0) hist_record_n(c->ctx->lat, run_lat, run);
    *n = 0;
}

/*
 * Feeds n received bytes to the codec. Returns 1 when the batch is complete,
 * 0 when more is due, -1 after conn_fail.
 */
static int conn_consume(struct conn *c, const uint8_t *p, size_t n)
{
    const struct codec_ops *codec = c->ctx->cfg->codec;
    struct codec_msg done[REPLY_RUN];
    unsigned ndone = 0;
    size_t off = 0;

    while (off < n) {
        /* the codec writes its verdict in place: a copy read back at once stalls the load on
         * the codec's narrower stores */
        struct codec_msg *msg = &done[ndone];
        size_t used = 0;
        enum codec_rc rc;

        *msg = (struct codec_msg){ 0 };

        if (c->replies + ndone == c->batch) {
            replies_end(c, done, &ndone);
            conn_note_bad(c->ctx, OP_ERR_UNEXPECTED, p + off, n - off, !c->mid_reply);
            conn_fail(c, OP_ERR_UNEXPECTED, now_ns());
            return -1;
        }
        rc = codec->feed(c->codec_state, p + off, n - off, &used, msg);
        if (rc == CODEC_ERROR) { /* the reply began at p + off unless one was under way */
            enum op_err kind = conn_codec_err(msg->err);
            replies_end(c, done, &ndone);
            conn_note_bad(c->ctx, kind, p + off, n - off, !c->mid_reply);
            conn_fail(c, kind, now_ns());
            return -1;
        }
        off += used;
        c->mid_reply = rc == CODEC_NEED_MORE || used > 0;
        if (rc == CODEC_DONE) {
            c->mid_reply = false;
            /* The op ends once its reply is read and checked, not when the recv returned. */
            if (++ndone == REPLY_RUN) replies_end(c, done, &ndone);
        }
    }
    replies_end(c, done, &ndone);
    if (c->t_first == 0) c->t_first = now_ns(); /* bytes of a reply not yet whole */
    return c->replies == c->batch;
}

/*
 * The server closed the connection. That may end a reply read until close,
 * or a kept connection between replies (conn_lost); otherwise the reply was
 * cut short. Returns like conn_consume.
 */
static int conn_on_eof(struct conn *c, uint64_t t)
{
    const struct codec_ops *codec = c->ctx->cfg->codec;
    struct codec_msg msg = { 0 };

    if (c->mid_reply && codec->eof != NULL) {
        if (codec->eof(c->codec_state, &msg) == CODEC_DONE) {
            uint64_t lat;

            c->mid_reply = false;
            msg.closes = true;
            if (conn_reply_done(c, &msg, t, &lat)) hist_record(c->ctx->lat, lat);
            if (c->replies == c->batch) return 1;
        } else if (msg.err == CODEC_ERR_BODY || msg.err == CODEC_ERR_TOO_BIG) {
            conn_fail(c, conn_codec_err(msg.err), t);
            return -1;
        }
    }
    if (conn_lost(c, 0, t)) return -1;
    conn_fail(c, OP_ERR_SHORT, t);
    return -1;
}

/*
 * Reads until the socket is drained or the batch is complete; returns
 * conn_consume's verdict. A short read means drained, unless the peer has
 * closed (`drain`): then the FIN may sit behind the data, and no new edge
 * would announce it, so read on until EOF or EAGAIN. `block`: the first
 * recv() may sleep (conn_wait); its timeout, EAGAIN, or a signal returns 0.
 */
static int conn_read(struct conn *c, bool drain, bool block)
{
    for (;;) {
        ssize_t n = recv(c->lfd.fd, c->rbuf, c->ctx->rbuf_cap, block ? 0 : MSG_DONTWAIT);

        if (n > 0) {
            int rc = conn_consume(c, c->rbuf, (size_t)n);
            if (rc != 0) return rc;
            if ((size_t)n < c->ctx->rbuf_cap && !drain) return 0;
            block = false;
            continue;
        }
        if (n == 0) return conn_on_eof(c, now_ns());
        /* A signal in a blocking wait: back to the loop, which checks the stop flag. */
        if (errno == EINTR && !block) continue;
        if (errno == EINTR || errno == EAGAIN) return 0;
        if (conn_lost(c, errno, now_ns())) return -1;
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
    conn_connected(c, now);
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
        ssize_t n = recv(c->lfd.fd, c->rbuf, c->ctx->rbuf_cap, MSG_DONTWAIT);

        if (n == 0) {
            conn_close_and_next(c);
            return;
        }
        if (n > 0) {
            conn_note_bad(c->ctx, OP_ERR_UNEXPECTED, c->rbuf, (size_t)n, true);
            conn_fail(c, OP_ERR_UNEXPECTED, now_ns());
            return;
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN) conn_fail(c, op_err_from_errno(errno), now_ns());
        return;
    }
}

/*
 * The batch is complete: reuse goes on (on a new connection when the server
 * said it closes this one); connect mode closes as --close says.
 */
static void conn_finish_batch(struct conn *c)
{
    struct conn_ctx *ctx = c->ctx;
    const struct load_cfg *cfg = ctx->cfg;
    static const struct linger rst = { .l_onoff = 1, .l_linger = 0 };

    if (cfg->mode == LOAD_REUSE) {
        if (c->server_closes) {
            conn_close_fd(c);
            c->reopen = true; /* counted when the next batch really reopens */
        } else {
            c->used = true;
        }
        conn_begin_at(c, c->t_done, true); /* read as its last reply was checked */
        return;
    }
    conn_bye(c);
    if (cfg->close == CLOSE_SERVER || (cfg->close_auto && c->server_closes)) {
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

    UNUSED(l);
    UNUSED(fd);
    if (c->state == CONN_CONNECTING) {
        conn_on_connected(c, events, now_ns());
        return;
    }
    if (c->state == CONN_CLOSING) {
        conn_await_fin(c);
        return;
    }
    if (c->state == CONN_SETUP) {
        conn_setup_event(c, events, now_ns());
        return;
    }
    if (c->state != CONN_BUSY) return;
    /* A reply needs no clock here: conn_read reads it when the bytes come. A batch still part
     * unwritten is sent on any event, not only on EPOLLOUT: AF_UNIX signals EPOLLOUT only once
     * the bytes in flight fell to a quarter of the send buffer (unix_writable), so a large
     * request would wait for the server to drain it while its echo was being read. */
    if ((events & EPOLLOUT || c->wr_off < c->wr_len) && conn_write(c, now_ns()) != 0) return;
    if (!(events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP))) return;
    if (conn_read(c, (events & (EPOLLRDHUP | EPOLLHUP)) != 0, false) != 1) return;
    conn_finish_batch(c);
}

/* A ring op of c failed with err: as the epoll path's send or recv failing with it. */
static void conn_ring_err(struct conn *c, int err)
{
    uint64_t now = now_ns();

    if (conn_lost(c, err, now)) return;
    conn_fail(c, op_err_from_errno(err), now);
}

/* A provided buffer's bytes were all fed to the codec: it goes back to the kernel. */
static void conn_ring_give(struct conn_ctx *ctx, unsigned bid)
{
    io_uring_buf_ring_add(ctx->br, ctx->br_mem + (size_t)bid * ctx->rbuf_cap,
                          (unsigned)ctx->rbuf_cap, (unsigned short)bid,
                          io_uring_buf_ring_mask(ctx->br_n), 0);
    io_uring_buf_ring_advance(ctx->br, 1);
}

/* The bytes of a receive's CQE: the buffer the kernel picked (multishot), or c's rbuf. */
static int conn_ring_bytes(struct conn *c, int res, unsigned flags)
{
    struct conn_ctx *ctx = c->ctx;
    bool picked = (flags & IORING_CQE_F_BUFFER) != 0;
    unsigned bid = flags >> IORING_CQE_BUFFER_SHIFT;
    const uint8_t *p =
        picked && bid < ctx->br_n ? ctx->br_mem + (size_t)bid * ctx->rbuf_cap : c->rbuf;
    int rc;

    if (c->state != CONN_BUSY) { /* a multishot receive is armed between batches too */
        conn_note_bad(ctx, OP_ERR_UNEXPECTED, p, (size_t)res, !c->mid_reply);
        conn_fail(c, OP_ERR_UNEXPECTED, now_ns());
        rc = -1;
    } else {
        rc = conn_consume(c, p, (size_t)res);
    }
    if (picked && bid < ctx->br_n) conn_ring_give(ctx, bid);
    return rc;
}

void conn_ring_done(struct conn *c, unsigned tag, int res, unsigned flags)
{
    struct conn_ctx *ctx = c->ctx;
    bool more = (flags & IORING_CQE_F_MORE) != 0;
    int rc;

    if (!more) c->ring_busy &= (uint8_t)~tag;
    if (c->ring_stale & tag) {
        if (!more) c->ring_stale &= (uint8_t)~tag;
        if (flags & IORING_CQE_F_BUFFER && (flags >> IORING_CQE_BUFFER_SHIFT) < ctx->br_n)
            conn_ring_give(ctx, flags >> IORING_CQE_BUFFER_SHIFT);
        return;
    }
    if (tag == CONN_RING_RECV && res == -EINVAL && ctx->ring_ms) {
        ctx->ring_ms = false; /* no multishot receive here: one recv per reply from now on */
        res = -EAGAIN;
    }
    if (res == -EINTR || res == -EAGAIN || res == -ENOBUFS) {
        if (!more && conn_ring_queue(c, tag) < 0) conn_fail(c, OP_ERR_OTHER, now_ns());
        return;
    }
    /* A multishot receive is armed between batches too: an EOF or an error then waits for the
     * next batch, whose receive meets it as the per-reply path's would. */
    if (tag == CONN_RING_RECV && res <= 0 && c->state != CONN_BUSY) return;
    if (res < 0) {
        conn_ring_err(c, -res);
        return;
    }
    if (tag == CONN_RING_SEND) {
        c->wr_off += (size_t)res;
        if (c->wr_off < c->wr_len) conn_ring_write(c, now_ns());
        return;
    }
    if (res == 0) {
        rc = conn_on_eof(c, now_ns());
    } else {
        rc = conn_ring_bytes(c, res, flags);
        if (rc == 0 && !(c->ring_busy & CONN_RING_RECV) && conn_ring_queue(c, CONN_RING_RECV) < 0) {
            conn_fail(c, OP_ERR_OTHER, now_ns());
            return;
        }
    }
    if (rc == 1) conn_finish_batch(c);
}

bool conn_may_block(const struct conn *c)
{
    /* Not before a batch completed on this socket: setting it up would cost more than the wait
     * saves on a connection the server closes after each reply. */
    return c->ctx->block_ns > 0 && c->state == CONN_BUSY && c->lfd.fd >= 0 &&
           (c->used || c->blocking) && c->wr_off == c->wr_len;
}

/* Once per socket: blocking, with the receive timeout conn_wait sleeps at most. */
static int conn_make_blocking(struct conn *c)
{
    if (sock_block_with_timeout(c->lfd.fd, c->ctx->block_ns) < 0) return -1;
    c->blocking = true;
    return 0;
}

int conn_wait(struct conn *c)
{
    if (!c->blocking && conn_make_blocking(c) < 0) {
        c->ctx->block_ns = 0;
        return -1;
    }
    if (conn_read(c, false, true) == 1) conn_finish_batch(c);
    return 0;
}
