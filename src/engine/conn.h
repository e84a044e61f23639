/*
 * conn: the client connection state machine of the load engine.
 *
 *   IDLE ─begin─► CONNECTING ─► BUSY (batch written, replies parsed) ─► begin next
 *                  │   ▲  │             │    (reuse: SEND until the batch of events ends)
 *           EAGAIN ▼   │  └─── error ───┴──► RETRY (1 ms) ─► begin
 *              BACKLOG (1 ms, until --timeout)
 *
 * In reuse mode a connection stays open across batches; in connect mode it
 * is opened before and closed (client first) after every batch. An AF_UNIX
 * connect that finds the listener's backlog full (EAGAIN) waits in BACKLOG
 * and tries again every millisecond, as a blocking connect() waits for room
 * and TCP retransmits its SYN: the op stays in its connect phase, the retries
 * are counted apart (connect_retries), and only --timeout after the first
 * attempt is it an error (a timeout). A kept connection the server closes (a
 * reply saying so, or EOF before any byte of the next reply) is reopened and,
 * with --retry once, the unanswered requests sent again: that is counted as a
 * reconnect (and the requests as retried), not an error; with --retry none the
 * op fails. A kept connection whose reply completes its batch in an event
 * handler takes the next batch up at once (its latency runs from there) but
 * sends it after the loop has handled every other ready socket (SEND), so the
 * replies of one wake-up are all read before any request goes out, as wrk
 * does. The connection reads into its thread's receive buffer (its own with
 * --wait uring) and hands every byte of each read to the codec before any
 * other read; the loop never parses. An op's latency runs from the
 * first connect (connect mode) or from the batch's first write (reuse mode)
 * to the reply's last byte.
 */
#ifndef HOPBENCH_CONN_H
#define HOPBENCH_CONN_H

#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/loadcfg.h"
#include "engine/loop.h"
#include "engine/operr.h"
#include "engine/sendq.h"
#include "engine/series.h"
#include "hist.h"

#define CONN_RETRY_NS                                                                              \
    (1 * NS_PER_MS) /* back-off before reconnecting after an error, and between                    \
                     * connects to a full AF_UNIX backlog */

/* What the connections of one thread share. Owned by that thread alone. */
struct conn_ctx {
    const struct load_cfg *cfg;
    struct loop loop;
    struct tq timeouts;         /* delay = cfg->timeout_ns */
    struct tq retries;          /* delay = CONN_RETRY_NS */
    struct sendq sendq;         /* open loop: connections waiting for their intended send time */
    double gap_ns;              /* open loop: mean gap between one connection's sends; 0 = closed */
    struct codec_cfg codec_cfg; /* what every connection's codec state is made from */
    const uint8_t *req;        /* fixed codecs (codec_fixed): pipeline copies of the request; codecs
                                * whose requests come round: their table (cycle_off); else NULL */
    size_t req_len;            /* fixed codecs: bytes of one request */
    const uint32_t *cycle_off; /* codecs whose requests come round (codec_ops.cycle): entry i
                                * of the table at req is req[cycle_off[i] .. cycle_off[i + 1]);
                                * else NULL */
    size_t wbuf_cap;           /* bytes of each connection's own buffer: requests of a codec that is
                                * neither fixed nor in a table, a session's set-up; else 0 */
    size_t rbuf_cap;
    uint64_t window_start_ns; /* ops that begin before this are warm-up */
    uint64_t block_ns;        /* > 0: the thread's one connection may wait for its reply in a
                               * blocking recv() of at most this long (conn_wait); 0: never */
    uint64_t quota;           /* count mode: ops still to begin in the window; else UINT64_MAX */
    uint64_t end_ns;          /* open loop: the window's end; an op intended at or after it is
                               * not sent. UINT64_MAX until the window has begun, and in count mode */
    struct io_uring ring;     /* --wait uring: the thread's ring (valid while ring_on) */
    bool ring_on;             /* kept connections send and receive through `ring` */
    bool ring_ms;             /* and each receives with one multishot recv armed per socket,
                               * into the thread's provided buffers (br); false: one recv per
                               * reply into the connection's rbuf (no buffer ring here) */
    struct io_uring_buf_ring *br; /* ring_ms: br_n buffers of rbuf_cap bytes at br_mem, group
                                   * CONN_RING_BGID; each is handed back once its bytes are fed to
                                   * the codec (which parses them in place: no copy) */
    uint8_t *br_mem;
    unsigned br_n;
    uint64_t ring_arms; /* receives armed in the ring (multishot: about one per socket) */
    bool stopping;      /* no new op may begin */
    unsigned active;    /* connections not IDLE */
    struct hist *lat;
    struct hist *phase[PHASES];
    struct hist *service;      /* open loop only */
    struct series_mine series; /* the interval the thread is in, of lat (series.h) */
    uint64_t ops;
    uint64_t connects;
    uint64_t requests;
    uint64_t replies;
    uint64_t replies_kind[CODEC_KINDS]; /* replies by the kind of request they answered */
    uint64_t reconnects;
    uint64_t retried;         /* requests sent again on a reopened connection (--retry once) */
    uint64_t connect_retries; /* AF_UNIX connects tried again after EAGAIN (a full backlog) */
    uint64_t status[6];
    uint64_t stderr_replies;
    uint64_t errors[OP_ERR_KINDS];
    struct op_bad bad; /* the thread's first bad reply (conn.c's conn_note_bad) */
};

enum conn_state {
    CONN_IDLE = 0,
    CONN_CONNECTING,
    CONN_SETUP, /* connected; the codec's session set-up (a database's login) runs */
    CONN_SEND,  /* a kept connection took its next batch up in a handler: its send waits for the
                 * end of the loop's batch of events (loop_defer) */
    CONN_BUSY,
    CONN_CLOSING, /* reply complete; waiting for the server's FIN (--close server) */
    CONN_RETRY,
    CONN_WAIT,    /* open loop: in ctx->sendq until the next intended send time */
    CONN_BACKLOG, /* an AF_UNIX connect found the backlog full: in ctx->retries until the next
                   * attempt; the op is in its connect phase, no socket is open */
};

struct conn {
    struct loop_fd lfd; /* lfd.fd is -1 while closed */
    struct conn_ctx *ctx;
    enum conn_state state;
    struct tq_node timer;  /* in ctx->timeouts while CONNECTING/BUSY/CLOSING, ctx->retries while
                            * RETRY or BACKLOG */
    struct sendq_node sn;  /* open loop: sn.at = the next op's intended send time */
    struct loop_task send; /* CONN_SEND: sends the batch at the end of the batch of events */
    uint64_t t_intended;   /* open loop: this op's intended send time */
    uint64_t rng;          /* open loop, poisson: xorshift state */
    uint64_t t_begin;      /* the op began (before the first connect in connect mode) */
    uint64_t t_sent;       /* the batch was taken up (t_begin); a resend keeps it */
    uint64_t t_written;    /* the batch's last byte was written (0 until then) */
    uint64_t t_first;      /* the batch's first reply byte arrived (0 until then) */
    uint64_t t_done;       /* the batch's last reply byte arrived */
    size_t wr_len;         /* bytes of this batch */
    size_t wr_off;         /* bytes written so far */
    unsigned batch;        /* requests in this batch */
    unsigned replies;      /* replies complete so far */
    unsigned resend;       /* requests of the batch to send again after a reconnect */
    bool in_window;        /* this batch is measured */
    bool used;             /* a batch completed on this socket: it is a kept connection */
    bool reconnected;      /* this batch already reconnected once; a second loss is an error */
    bool server_closes;    /* a reply said the server closes after it */
    bool mid_reply;        /* bytes of a reply not yet complete have been parsed */
    bool reopen;           /* the server closed this kept connection after the last batch */
    bool live;             /* counted in ctx->active */
    bool setup_done;       /* CONN_SETUP: the session is ready once its last bytes are written */
    bool want_out;         /* EPOLLOUT is registered: only while a connect or a write is pending,
                            * since AF_UNIX wakes a writer with EPOLLOUT each time the peer reads */
    bool on_ring;          /* --wait uring: the kept socket left the epoll set; its sends and
                            * receives are SQEs of ctx->ring */
    uint8_t ring_busy;     /* CONN_RING_* ops of this connection in flight in ctx->ring */
    uint8_t ring_stale;    /* those of them issued on a socket since closed: their CQEs are
                            * dropped */
    bool blocking;         /* the socket is blocking with SO_RCVTIMEO = ctx->block_ns (conn_wait);
                            * every other send and recv passes MSG_DONTWAIT */
    uint8_t *rbuf;         /* ctx->rbuf_cap bytes: the thread's, shared (but with --wait uring) */
    uint8_t *wbuf;         /* wbuf_cap bytes of its own, or ctx->req when wbuf_cap is 0 */
    void *codec_state;     /* ctx->cfg->codec->state_size bytes */
    const struct sockaddr_storage *src; /* the source address it binds (load_cfg.src), or NULL */
    /* The bytes being written: ctx->req (a fixed codec's batch) or wbuf. */
    const uint8_t *wr_buf;
};

/*
 * Sets up c (closed, IDLE) with its buffers; counts it in ctx->active. wbuf is
 * NULL for a fixed codec without a session set-up (the connection only ever
 * sends ctx->req); `index` numbers the connection across the whole run.
 */
void conn_init(struct conn *c, struct conn_ctx *ctx, uint8_t *rbuf, uint8_t *wbuf,
               void *codec_state, unsigned index);

/* Begins the next op: connects if needed and writes the batch; may go IDLE. */
void conn_begin(struct conn *c, uint64_t now);

/*
 * Handles an expired timer: a timeout while CONNECTING/BUSY/CLOSING, the end of
 * a back-off while RETRY, the next connect attempt while BACKLOG.
 */
void conn_on_timer(struct conn *c, uint64_t now);

/*
 * Whether c may wait for its replies in conn_wait: ctx->block_ns > 0, a batch
 * has completed on c's socket before (it is kept), and this batch is fully
 * written (so only a reply, an EOF or an error can come next).
 */
bool conn_may_block(const struct conn *c);

/*
 * The blocking path, for a thread that owns c alone (a closed-loop reuse
 * connection, as sockperf and the floor measure): one recv() that sleeps until
 * a reply arrives or ctx->block_ns passes, instead of epoll_wait() and then
 * recv(). What arrives is handled as conn_on_event would, so the next batch may
 * begin. Timers are the caller's: after a timeout or a signal this returns with
 * c still waiting. Returns 0, or -1 when c's socket cannot be made blocking
 * (the caller polls instead; ctx->block_ns is then 0).
 */
int conn_wait(struct conn *c);

/*
 * --wait uring. A kept connection (a batch completed on its socket) leaves
 * the epoll set once and from then on writes its batch and reads its replies
 * through SQEs of ctx->ring, submitted with the thread's next wait; its reply
 * bytes go through the same codec path as the epoll path's. Connects and
 * session set-ups stay on epoll. The low bits of a CQE's user_data say which
 * op completed (conn.c's tags); 0 is the load thread's own (epoll) poll.
 */
#define CONN_RING_RECV 1u
#define CONN_RING_SEND 2u
#define CONN_RING_TAGS 3u
#define CONN_RING_BGID 0 /* the buffer group of a thread's provided buffers (one per ring) */

/*
 * Handles one CQE whose user_data named c and op `tag` (CONN_RING_RECV or _SEND),
 * with its result and flags. A multishot receive stays armed while its CQEs say
 * IORING_CQE_F_MORE; it is armed again only after one that does not (-ENOBUFS
 * when every buffer was in use). A kernel that refuses it (-EINVAL: before 6.0)
 * makes the thread receive per reply from then on (ctx->ring_ms false).
 */
void conn_ring_done(struct conn *c, unsigned tag, int res, unsigned flags);

/* An SQE of ctx->ring, submitting what is queued to make room when it is full; NULL if none. */
struct io_uring_sqe *conn_ring_sqe(struct conn_ctx *ctx);

/* Closes c's socket, if open, and makes it IDLE. */
void conn_close(struct conn *c);

/*
 * Open loop: the ops c was to send at intended times in [from, end), with
 * c's arrivals (constant gaps, or drawn from c's generator, which this
 * advances). Pure but for that generator.
 */
uint64_t conn_intended_in(struct conn *c, uint64_t from, uint64_t end);

/*
 * Open loop, the drain's time is up: c's op in flight (connecting, waiting
 * for backlog room or for its reply) and each op intended before ctx->end_ns that c has not sent
 * yet are counted as timeouts, and c ends (IDLE, no longer active). Its socket
 * stays open until conn_close, so the end-of-window counters still see it.
 */
void conn_abandon(struct conn *c);

/* The conn that embeds schedule node n. */
static inline struct conn *conn_of_sendq(struct sendq_node *n)
{
    return (struct conn *)(void *)((char *)n - offsetof(struct conn, sn));
}

/* The conn that embeds timer node n. */
static inline struct conn *conn_of_timer(struct tq_node *n)
{
    return (struct conn *)(void *)((char *)n - offsetof(struct conn, timer));
}

#endif
