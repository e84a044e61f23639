/*
 * frame: accept and worker threads for the built-in servers (see server.h).
 *
 * Invariant per connection: while `out_len` > 0 the reply view may point into
 * `buf` (or `obuf`), so nothing is read into `buf` and nothing more is
 * processed until the reply is sent. That gives back-pressure for free: a
 * client that stops reading stops being read. Each slot's buffers and
 * protocol state come from its chunk's one mapping, made once, each slot on
 * its own pages. A slot freed after its connection wrote past its first page
 * keeps those pages only while the worker's free slots keep at most
 * SERVER_WARM_BYTES so; otherwise they go back to the kernel (MADV_DONTNEED).
 * The mapping is kept out of transparent huge pages, so that a slot's pages
 * are its own and given back with it. So connect-per-request load with large messages reuses warm
 * slots, and the memory a burst of large or abusive requests touched does not stay with the server.
 * The free list is LIFO: a warm slot is the next one used.
 *
 * Limits: at most max_conns connections are open at once (one more is
 * accepted and closed at once); a request larger than the protocol's buffer
 * closes its connection. Out of fds, accept() fails with EMFILE while the
 * connection waits in the queue: each worker keeps one spare fd, closes it to
 * accept that connection, closes the connection at once and reopens the spare
 * (the client sees its connection closed, not a hang).
 *
 * With --wait block, a worker that serves a single kept connection waits for
 * its next request in a blocking recv() (srv_wait_next), as a blocking server
 * would, instead of in epoll_wait() and then recv(): one syscall less per
 * request. It goes back to epoll_wait() (new connections, the stop event)
 * after 1 ms of requests, or after 20 ms without one (SRV_WAIT_NS,
 * SRV_RECV_NS), and is out of the worker's epoll set while it blocks. Such a
 * socket is made blocking once; every other send() and recv() passes
 * MSG_DONTWAIT. It applies to every transport alike: which wait is
 * faster depends on the transport (bench/RESULTS.md, pingpong), so it is the
 * user's choice, never the server's per transport.
 */
#include "server/server.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "engine/loop.h"

#define SLOTS_PER_CHUNK 64
/*
 * fds the server needs besides its connections, per worker (the epoll fd and
 * the spare) and in all (stdio, the stop eventfd, what libc and a lab keep
 * open): the default max_conns leaves them free.
 */
#define SRV_FDS_PER_WORKER 2
#define SRV_FDS_OTHER      32

/*
 * srv_wait_next: how long a worker stays with its one connection while it is
 * busy before it polls again (for new connections and the stop event), and a
 * blocking wait's receive timeout, the longest it stays while the connection
 * is idle. The kernel keeps SO_RCVTIMEO in scheduler ticks (jiffies) and a
 * timeout of one tick ends at the next tick, which may be microseconds away:
 * a 1-ms timeout (one tick at HZ 250 or 1000) timed out in the middle of a
 * busy ping-pong. SRV_RECV_NS is several ticks at any HZ >= 100 (at least
 * 10 ms before it can time out), so a wait times out only when its
 * connection has been idle. After a wait times out, or a stretch's only
 * request took SRV_WAIT_NS or more to come (a paced client), the connection's next
 * `backoff` requests are served from the loop only, doubling up to
 * SRV_WAIT_BACKOFF_MAX, so a slow client costs at most one idle wake-up per
 * that many requests.
 */
#define SRV_WAIT_NS          (1 * NS_PER_MS)
#define SRV_RECV_NS          (20 * NS_PER_MS)
#define SRV_WAIT_BACKOFF_MAX 1024u
#define SRV_IDLE             2 /* srv_serve: a blocking wait timed out */

struct srv_conn {
    struct loop_fd lfd;
    struct srv_worker *w;
    struct srv_conn *next_free;
    struct server_io io; /* io.out, io.out_len: reply bytes still to send */
    size_t in_len;       /* bytes in buf */
    size_t consumed;     /* bytes of buf the pending reply answers */
    uint64_t sent;       /* reply bytes sent on this connection */
    bool want_out;       /* EPOLLOUT registered (only after a send filled the buffer: AF_UNIX
                          * would otherwise wake us with EPOLLOUT every time the client reads) */
    bool pending;        /* bytes left in buf may hold whole requests: process before reading */
    bool closing;        /* close once the reply is sent (the protocol said so, or an error) */
    bool hup;            /* the peer shut down its side: read on to the EOF */
    bool blocking;       /* the socket is blocking, SO_RCVTIMEO = SRV_RECV_NS (srv_wait_next) */
    bool detached;       /* out of the epoll set for a blocking stretch (srv_wait_next) */
    unsigned answered;   /* requests answered on this connection, up to 2: 2 = a kept one */
    unsigned skip;       /* requests to serve from the loop before waiting again */
    unsigned backoff;    /* the last skip after a timed-out wait; 0 after a wait that was not */
    size_t touched;      /* bytes of the slot (from buf) that may be resident: written by this
                          * connection or, on a reused warm slot, by an earlier one */
    uint8_t *buf;        /* in_cap bytes, then obuf and state: the slot, `stride` bytes */
};

struct srv_chunk {
    struct srv_chunk *next;
    uint8_t *mem; /* every slot's buf, obuf and state: a mapping of stride * SLOTS_PER_CHUNK */
    struct srv_conn slots[SLOTS_PER_CHUNK];
};

struct srv_listener {
    struct loop_fd lfd;
};

struct srv_worker {
    struct server *s;
    struct loop loop;
    struct loop_fd stop_lfd;
    struct srv_listener *listeners;
    struct srv_conn *free_list;
    struct srv_chunk *chunks;
    unsigned nconns; /* connections open */
    size_t in_cap;   /* the protocol's buffer sizes */
    size_t out_cap;
    size_t state_size;
    size_t page;       /* the page size */
    size_t stride;     /* bytes per slot, whole pages */
    size_t warm_bytes; /* sum of `touched` over free slots kept warm (<= SERVER_WARM_BYTES) */
    int spare_fd;      /* kept open to be closed when accept() runs out of fds; -1 if lost */
    struct server_stats stats;
    bool stop;
    pthread_t tid;
};

static size_t srv_round16(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

static size_t srv_in_cap(const struct server_proto *p)
{
    return p->in_cap ? p->in_cap : SERVER_BUF;
}

static size_t srv_page(void)
{
    long n = sysconf(_SC_PAGESIZE);

    return n > 0 ? (size_t)n : 4096;
}

/* A slot's bytes: buf, obuf and state, in whole pages so that each can be given back alone. */
static size_t srv_stride(const struct server_proto *p)
{
    size_t n = srv_round16(srv_in_cap(p)) + srv_round16(p->out_cap) + srv_round16(p->conn_size);
    size_t page = srv_page();

    return (n + page - 1) / page * page;
}

/*
 * Raises the soft RLIMIT_NOFILE to the hard limit (a server of many
 * connections needs an fd each); returns the soft limit in force.
 */
static uint64_t srv_raise_nofile(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == -1) return 0;
    if (rl.rlim_cur < rl.rlim_max) {
        struct rlimit want = { .rlim_cur = rl.rlim_max, .rlim_max = rl.rlim_max };
        if (setrlimit(RLIMIT_NOFILE, &want) == 0) rl.rlim_cur = rl.rlim_max;
    }
    return rl.rlim_cur;
}

/* --max-conns by default: every fd the server does not need for itself. */
static unsigned srv_default_max_conns(const struct server_cfg *cfg, uint64_t nofile)
{
    uint64_t own = SRV_FDS_OTHER + cfg->neps + (uint64_t)cfg->threads * SRV_FDS_PER_WORKER;

    if (nofile <= own) return 1;
    return nofile - own > UINT_MAX / 2 ? UINT_MAX / 2 : (unsigned)(nofile - own);
}

int server_open(struct server *s, const struct server_cfg *cfg, struct hb_err *err)
{
    struct listen_opts lo = { .backlog = cfg->backlog,
                              .mode = cfg->mode,
                              .allow_remote = cfg->allow_remote,
                              .reuseport = cfg->reuseport };

    *s = (struct server){ .cfg = cfg };
    s->nofile = srv_raise_nofile();
    s->max_conns = cfg->max_conns ? cfg->max_conns : srv_default_max_conns(cfg, s->nofile);
    s->backlog = cfg->backlog > 0 ? cfg->backlog : endpoint_default_backlog();
    lo.backlog = s->backlog;
    s->conn_bytes = srv_stride(cfg->proto);
    s->lfds = xcalloc(cfg->neps, sizeof(*s->lfds));
    for (unsigned i = 0; i < cfg->neps; i++)
        s->lfds[i] = -1;
    for (unsigned i = 0; i < cfg->neps; i++) {
        int fd = endpoint_listen(&cfg->eps[i], &lo, err);
        if (fd < 0) {
            server_close(s, true);
            return fd;
        }
        s->lfds[i] = fd;
    }
    return 0;
}

void server_close(struct server *s, bool unlink_files)
{
    if (s->lfds == NULL) return;
    for (unsigned i = 0; i < s->cfg->neps; i++) {
        if (s->lfds[i] < 0) continue;
        /*
         * Unlink while the listener is open: it pins its inode, so no socket
         * bound at the path since can have the device and inode it checks.
         */
        if (unlink_files) endpoint_unlink(&s->cfg->eps[i]);
        close(s->lfds[i]);
    }
    free(s->lfds);
    s->lfds = NULL;
}

static void srv_conn_on_event(struct loop *l, int fd, void *data, unsigned events);

/* A free connection slot; a new chunk of slots when none is left. NULL on OOM. */
static struct srv_conn *srv_conn_get(struct srv_worker *w)
{
    struct srv_conn *c = w->free_list;

    if (c == NULL) {
        size_t per = w->stride;
        struct srv_chunk *ch = calloc(1, sizeof(*ch));
        void *mem;
        if (ch == NULL) return NULL;
        /* Its own mapping, not the heap: pages given back in srv_conn_put stay given back. */
        mem = mmap(NULL, per * SLOTS_PER_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
        if (mem == MAP_FAILED) {
            free(ch);
            return NULL;
        }
        /* Small pages: a slot's pages are given back one slot at a time, which a huge
         * page (transparent_hugepage=always) would defeat, each connection then
         * holding up to 2 MiB. */
        madvise(mem, per * SLOTS_PER_CHUNK, MADV_NOHUGEPAGE);
        ch->mem = mem;
        ch->next = w->chunks;
        w->chunks = ch;
        for (int i = SLOTS_PER_CHUNK - 1; i >= 0; i--) {
            struct srv_conn *slot = &ch->slots[i];
            uint8_t *base = ch->mem + (size_t)i * per;
            slot->lfd.fd = -1;
            slot->buf = base;
            slot->io.obuf = w->out_cap ? base + srv_round16(w->in_cap) : NULL;
            slot->io.ocap = w->out_cap;
            slot->io.state =
                w->state_size ? base + srv_round16(w->in_cap) + srv_round16(w->out_cap) : NULL;
            slot->next_free = w->free_list;
            w->free_list = slot;
        }
        c = w->free_list;
    }
    w->free_list = c->next_free;
    return c;
}

static void srv_conn_put(struct srv_conn *c)
{
    struct srv_worker *w = c->w;

    close(c->lfd.fd);
    c->lfd.fd = -1;
    w->nconns--;
    __atomic_sub_fetch(&w->s->open_conns, 1, __ATOMIC_RELAXED);
    /*
     * A connection that wrote past its first page (a large request or reply)
     * stays warm for the next one within SERVER_WARM_BYTES, else gives the
     * slot's pages back: a burst of them must not leave the server that much
     * bigger. Small ones skip the syscall; their few pages are reused.
     */
    if (c->touched > w->page) {
        if (w->warm_bytes + c->touched <= SERVER_WARM_BYTES) {
            w->warm_bytes += c->touched;
        } else {
            madvise(c->buf, w->stride, MADV_DONTNEED);
            c->touched = 0;
        }
    }
    c->next_free = w->free_list;
    w->free_list = c;
}

static void srv_accept_one(struct srv_worker *w, int cfd)
{
    struct srv_conn *c;

    if (__atomic_add_fetch(&w->s->open_conns, 1, __ATOMIC_RELAXED) > w->s->max_conns) {
        /* over --max-conns: the client sees its connection closed at once, not a wait */
        __atomic_sub_fetch(&w->s->open_conns, 1, __ATOMIC_RELAXED);
        close(cfd);
        w->stats.over_max++;
        return;
    }
    c = srv_conn_get(w);
    if (c == NULL) {
        __atomic_sub_fetch(&w->s->open_conns, 1, __ATOMIC_RELAXED);
        close(cfd);
        w->stats.errors++;
        return;
    }
    if (c->touched > w->page) w->warm_bytes -= c->touched; /* a warm slot, in use again */
    c->w = w;
    c->lfd = (struct loop_fd){ .fn = srv_conn_on_event, .data = c, .fd = cfd };
    c->io.out = NULL;
    c->io.out_len = c->in_len = c->consumed = 0;
    c->sent = 0;
    c->want_out = c->pending = c->closing = c->hup = c->blocking = c->detached = false;
    c->answered = c->skip = c->backoff = 0;
    if (c->io.state != NULL) memset(c->io.state, 0, w->state_size);
    /* TCP_NODELAY is inherited from the listener (endpoint_listen sets it). */
    w->nconns++;
    if (loop_add(&w->loop, &c->lfd, EPOLLIN | EPOLLRDHUP | EPOLLET) < 0) {
        w->stats.errors++;
        srv_conn_put(c);
        return;
    }
    w->stats.accepted++;
}

static int srv_open_spare(void)
{
    return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/*
 * accept() ran out of fds: closes the spare fd to take the connection at the
 * head of the queue and close it at once, then reopens the spare. Returns
 * true when a connection was taken that way. Without a spare (another thread
 * took the fd it freed) it pauses 1 ms instead: the listener stays readable,
 * and polling it again at once would spin.
 */
static bool srv_refuse_no_fd(struct srv_worker *w, int lfd)
{
    int cfd;

    if (w->spare_fd < 0) w->spare_fd = srv_open_spare();
    if (w->spare_fd < 0) {
        struct timespec pause = { .tv_sec = 0, .tv_nsec = 1000000 };
        nanosleep(&pause, NULL);
        return false;
    }
    close(w->spare_fd);
    cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (cfd != -1) {
        close(cfd);
        w->stats.no_fds++;
    }
    w->spare_fd = srv_open_spare();
    return cfd != -1;
}

static void srv_on_listener(struct loop *l, int fd, void *data, unsigned events)
{
    struct srv_listener *ls = data;
    struct srv_worker *w =
        (struct srv_worker *)(void *)((char *)l - offsetof(struct srv_worker, loop));

    UNUSED(events);
    UNUSED(ls);
    /*
     * Drain the accept queue, not just a few from it: an AF_UNIX connect()
     * finding the queue full fails at once with EAGAIN (TCP only retries its
     * SYN later), so a burst of connects must not wait for the next wake-up.
     * Bounded, so one wake-up cannot starve the connections already open.
     */
    int most = w->s->backlog < 64 ? 64 : w->s->backlog;
    for (int i = 0; i < most; i++) {
        int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd == -1) {
            int e = errno;
            if (e == EINTR || e == ECONNABORTED) continue;
            if (e == EAGAIN) return;
            if (e == EMFILE || e == ENFILE) {
                if (srv_refuse_no_fd(w, fd)) continue;
                return;
            }
            w->stats.errors++;
            return;
        }
        srv_accept_one(w, cfd);
    }
}

/* The socket buffer is full: ask for EPOLLOUT, once per connection. 0 or a negative errno. */
static int srv_want_out(struct srv_conn *c)
{
    int rc;

    if (c->want_out) return 0;
    if (c->detached) { /* srv_wait_next adds it back with EPOLLOUT */
        c->want_out = true;
        return 0;
    }
    rc = loop_mod(&c->w->loop, &c->lfd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET);
    c->want_out = rc == 0;
    return rc;
}

/*
 * Sends the pending reply. Returns 1 when all sent, or when --close-after's bytes are (the
 * server closes first: a reply longer than what is left is cut there, whatever the size of
 * the receive buffer it came from), 0 to wait for EPOLLOUT, a negative errno.
 */
static int srv_flush(struct srv_conn *c)
{
    uint64_t close_after = c->w->s->cfg->close_after;

    while (c->io.out_len > 0) {
        size_t len = c->io.out_len;
        ssize_t n;

        if (close_after > 0) {
            if (c->sent >= close_after) return 1;
            if (len > close_after - c->sent) len = (size_t)(close_after - c->sent);
        }
        n = send(c->lfd.fd, c->io.out, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n == -1) {
            if (errno == EINTR) continue;
            return errno == EAGAIN ? srv_want_out(c) : -errno;
        }
        c->io.out += n;
        c->io.out_len -= (size_t)n;
        c->sent += (uint64_t)n;
        c->w->stats.bytes_out += (uint64_t)n;
    }
    /* The reply is out: drop the request bytes it answered. */
    if (c->consumed > 0) {
        memmove(c->buf, c->buf + c->consumed, c->in_len - c->consumed);
        c->in_len -= c->consumed;
        c->consumed = 0;
    }
    return 1;
}

/*
 * Reads once; `block`: may sleep up to SRV_RECV_NS. Returns bytes read, 0 on
 * EOF, -EAGAIN when drained (or the wait timed out), another negative errno.
 */
static ssize_t srv_read(struct srv_conn *c, bool block)
{
    for (;;) {
        ssize_t n =
            recv(c->lfd.fd, c->buf + c->in_len, c->w->in_cap - c->in_len, block ? 0 : MSG_DONTWAIT);
        if (n >= 0) return n;
        if (errno != EINTR) return -errno;
    }
}

/* --delay-us and --stall-every: the reply waits, and so does everything this worker serves. */
static void srv_hold(struct srv_worker *w, unsigned answered)
{
    const struct server_cfg *cfg = w->s->cfg;
    uint64_t ns = cfg->delay_ns * answered;

    if (cfg->stall_every > 0) {
        uint64_t after = __atomic_add_fetch(&w->s->answered, answered, __ATOMIC_RELAXED);
        if (after / cfg->stall_every != (after - answered) / cfg->stall_every) ns += cfg->stall_ns;
    }
    if (ns > 0) {
        struct timespec ts = { .tv_sec = (time_t)(ns / NS_PER_S),
                               .tv_nsec = (long)(ns % NS_PER_S) };
        while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
            ;
    }
}

/* Hands buf to the protocol part; its reply goes out before buf is touched again. */
static void srv_process(struct srv_conn *c)
{
    struct srv_worker *w = c->w;
    size_t used;

    c->io.out = NULL;
    c->io.out_len = 0;
    c->io.close = false;
    c->io.answered = 0;
    used = w->s->cfg->proto->process(w->s->shared, &c->io, c->buf, c->in_len);
    if (used == SERVER_PROTO_ERROR) {
        w->stats.bad++;
        c->closing = true;
        used = c->in_len;
    }
    w->stats.requests += c->io.answered;
    if (c->io.answered > 0) c->answered = c->answered + c->io.answered < 2 ? 1 : 2;
    if (c->io.answered > 0) srv_hold(w, c->io.answered);
    c->closing |= c->io.close;
    c->consumed = used;
    if (c->io.out_len > 0 && c->io.obuf != NULL && c->io.out >= c->io.obuf &&
        c->io.out < c->io.obuf + c->io.ocap) {
        size_t end = (size_t)(c->io.out - c->buf) + c->io.out_len;
        if (end > c->touched) c->touched = end;
    }
    /* Progress with bytes left over: they may hold more whole requests. */
    c->pending = used > 0 && used < c->in_len && !c->closing;
}

/*
 * Serves what the socket holds. Returns 0 to wait for the next edge, 1 to
 * close cleanly (the peer closed, or the server closes first), a negative
 * errno to close on an error. `block`: the first read may wait (a blocking
 * socket); SRV_IDLE when that wait timed out.
 */
static int srv_serve(struct srv_conn *c, bool block)
{
    const struct server_cfg *cfg = c->w->s->cfg;
    bool drained = false;

    for (;;) {
        int fl = srv_flush(c);
        size_t want;
        ssize_t n;

        if (fl <= 0) return fl;
        if (c->closing || (cfg->close_after > 0 && c->sent >= cfg->close_after))
            return 1; /* the server closes first */
        if (c->pending) {
            srv_process(c);
            continue;
        }
        /* A short read drained the socket: the next edge brings more. Unless the peer has
         * shut down: its FIN may sit behind the data and no new edge announces it. */
        if (drained && !c->hup) return 0;
        want = c->w->in_cap - c->in_len;
        if (want == 0) return -EMSGSIZE; /* a request larger than the buffer */
        n = srv_read(c, block);
        if (n == -EAGAIN) return block ? SRV_IDLE : 0;
        block = false;
        if (n <= 0) return n == 0 ? 1 : (int)n;
        c->w->stats.bytes_in += (uint64_t)n;
        c->in_len += (size_t)n;
        if (c->in_len > c->touched) c->touched = c->in_len;
        drained = (size_t)n < want;
        srv_process(c);
    }
}

/* --wait block: a kept connection, alone on its worker, waiting for its next request. */
static bool srv_may_wait(const struct srv_conn *c)
{
    return c->w->s->cfg->block_wait && c->w->nconns == 1 && c->answered >= 2 &&
           c->io.out_len == 0 && !c->closing && !c->pending;
}

/* Once per socket: blocking, with a receive timeout of SRV_RECV_NS. */
static int srv_make_blocking(struct srv_conn *c)
{
    if (sock_block_with_timeout(c->lfd.fd, SRV_RECV_NS) < 0) return -1;
    c->blocking = true;
    return 0;
}

/*
 * After srv_serve returned 0: while c is its worker's only connection, waits
 * for c's next requests in a blocking recv() and serves them, then goes back
 * to the loop, which sees new connections and the stop event: after the
 * first request answered SRV_WAIT_NS or more after the stretch began, or
 * when a wait times out (SRV_RECV_NS without a request). So a new connection
 * or the stop waits at most about SRV_RECV_NS (idle connection) or
 * SRV_WAIT_NS and one request (busy one). Returns like srv_serve (never
 * SRV_IDLE).
 */
static int srv_wait_next(struct srv_conn *c)
{
    uint64_t until;
    unsigned served = 0;
    int rc = 0;

    if (!srv_may_wait(c)) return 0;
    if (c->skip > 0) {
        c->skip--;
        return 0;
    }
    if (!c->blocking && srv_make_blocking(c) < 0) {
        c->skip = UINT_MAX; /* this socket is served from the loop only */
        return 0;
    }
    /*
     * Out of the epoll set while it blocks: every wake-up of the socket's wait
     * queue (a request, and over AF_UNIX the peer reading a reply) would also
     * run epoll's callback. Two syscalls a stretch; stays in if that fails.
     */
    c->detached = loop_del(&c->w->loop, &c->lfd) == 0;
    until = now_ns() + SRV_WAIT_NS;
    while (rc == 0 && srv_may_wait(c) && now_ns() < until) {
        rc = srv_serve(c, true);
        served++;
    }
    if (c->detached) {
        c->detached = false;
        if (rc == 0 || rc == SRV_IDLE) {
            /*
             * Added back edge-triggered: what arrived meanwhile is reported at
             * once, and so would EPOLLOUT on a writable socket: asked for only
             * while a reply waits to be sent (srv_want_out asks again).
             */
            int arc;
            if (c->io.out_len == 0) c->want_out = false;
            arc = loop_add(&c->w->loop, &c->lfd,
                           EPOLLIN | EPOLLRDHUP | EPOLLET | (c->want_out ? EPOLLOUT : 0));
            if (arc < 0) return arc;
        }
    }
    /*
     * A stretch whose one request took SRV_WAIT_NS or more to come is a paced
     * client (a request every few ms, under SRV_RECV_NS): backed off as an idle
     * one, else it would pay the stretch's epoll_ctl pair for each request.
     */
    if (rc == 0 && served == 1 && now_ns() >= until) rc = SRV_IDLE;
    if (rc != SRV_IDLE) {
        c->backoff = 0;
        return rc;
    }
    c->backoff = c->backoff == 0 ? 1 : c->backoff * 2;
    if (c->backoff > SRV_WAIT_BACKOFF_MAX) c->backoff = SRV_WAIT_BACKOFF_MAX;
    c->skip = c->backoff;
    return 0;
}

static void srv_conn_on_event(struct loop *l, int fd, void *data, unsigned events)
{
    struct srv_conn *c = data;
    int rc;

    UNUSED(l);
    UNUSED(fd);
    c->hup |= (events & (EPOLLRDHUP | EPOLLHUP)) != 0;
    rc = srv_serve(c, false);
    if (rc == 0) rc = srv_wait_next(c);
    if (rc == 0) return;
    if (rc == -ECONNRESET || rc == -EPIPE)
        c->w->stats.resets++;
    else if (rc == -EMSGSIZE)
        c->w->stats.bad++;
    else if (rc < 0)
        c->w->stats.errors++;
    srv_conn_put(c);
}

static void srv_on_stop(struct loop *l, int fd, void *data, unsigned events)
{
    struct srv_worker *w = data;

    UNUSED(l);
    UNUSED(fd);
    UNUSED(events);
    w->stop = true; /* not read: level-triggered, so every worker sees it */
}

static void srv_worker_release(struct srv_worker *w)
{
    for (struct srv_chunk *ch = w->chunks, *next; ch != NULL; ch = next) {
        next = ch->next;
        for (int i = 0; i < SLOTS_PER_CHUNK; i++)
            if (ch->slots[i].w != NULL && ch->slots[i].lfd.fd >= 0) close(ch->slots[i].lfd.fd);
        munmap(ch->mem, w->stride * SLOTS_PER_CHUNK);
        free(ch);
    }
    w->chunks = NULL;
    if (w->spare_fd >= 0) close(w->spare_fd);
    w->spare_fd = -1;
    free(w->listeners);
    loop_release(&w->loop);
}

static int srv_worker_setup(struct srv_worker *w, int stop_fd)
{
    const struct server *s = w->s;
    int rc = loop_init(&w->loop);

    w->spare_fd = -1;
    if (rc < 0) return rc;
    w->in_cap = srv_in_cap(s->cfg->proto);
    w->out_cap = s->cfg->proto->out_cap;
    w->state_size = srv_round16(s->cfg->proto->conn_size);
    w->page = srv_page();
    w->stride = srv_stride(s->cfg->proto);
    w->spare_fd = srv_open_spare();
    w->listeners = xcalloc(s->cfg->neps, sizeof(*w->listeners));
    w->stop_lfd = (struct loop_fd){ .fn = srv_on_stop, .data = w, .fd = stop_fd };
    rc = loop_add(&w->loop, &w->stop_lfd, EPOLLIN);
    for (unsigned i = 0; i < s->cfg->neps && rc == 0; i++) {
        struct srv_listener *ls = &w->listeners[i];
        ls->lfd = (struct loop_fd){ .fn = srv_on_listener, .data = ls, .fd = s->lfds[i] };
        rc = loop_add(&w->loop, &ls->lfd, EPOLLIN | EPOLLEXCLUSIVE);
    }
    return rc;
}

static void *srv_worker_main(void *arg)
{
    struct srv_worker *w = arg;

    while (!w->stop)
        if (loop_poll(&w->loop, UINT64_MAX) < 0) break;
    return NULL;
}

static int srv_pin(const struct server_cfg *cfg, struct hb_err *err)
{
    cpu_set_t set;

    if (cfg->cpus == NULL || cfg->ncpus == 0) return 0;
    CPU_ZERO(&set);
    for (unsigned i = 0; i < cfg->ncpus; i++)
        CPU_SET(cfg->cpus[i], &set);
    /* Threads created after this inherit the mask. */
    if (sched_setaffinity(0, sizeof(set), &set) == -1)
        return hb_fail(err, -errno, "cannot pin the server: %s", strerror(errno));
    return 0;
}

static int srv_wait_for_signal(const struct server_cfg *cfg)
{
    sigset_t set;
    int sig = 0;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    if (cfg->stop_on_sigint)
        sigaddset(&set, SIGINT);
    else
        signal(SIGINT, SIG_IGN);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    return sigwait(&set, &sig);
}

static int srv_start_workers(struct server *s, struct srv_worker *ws, int stop_fd,
                             unsigned *started, struct hb_err *err)
{
    for (unsigned i = 0; i < s->cfg->threads; i++) {
        int rc;
        ws[i].s = s;
        rc = srv_worker_setup(&ws[i], stop_fd);
        if (rc == 0) rc = -pthread_create(&ws[i].tid, NULL, srv_worker_main, &ws[i]);
        if (rc < 0) {
            srv_worker_release(&ws[i]);
            return hb_fail(err, rc, "cannot start server thread %u: %s", i, strerror(-rc));
        }
        (*started)++;
    }
    return 0;
}

int server_run(struct server *s, struct hb_err *err)
{
    struct srv_worker *ws = xcalloc(s->cfg->threads, sizeof(*ws));
    int stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    unsigned started = 0;
    sigset_t set;
    int rc;

    if (stop_fd == -1) {
        free(ws);
        return hb_fail(err, -errno, "eventfd: %s", strerror(errno));
    }
    /* Block the stop signals before any worker exists, so only sigwait sees them. */
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    rc = srv_pin(s->cfg, err);
    if (rc == 0 && s->cfg->proto->create != NULL) {
        rc = s->cfg->proto->create(s->cfg, &s->shared);
        if (rc < 0)
            hb_fail(err, rc, "cannot set up the %s server: %s", s->cfg->proto->name, strerror(-rc));
    }
    if (rc == 0) rc = srv_start_workers(s, ws, stop_fd, &started, err);
    if (rc == 0) srv_wait_for_signal(s->cfg);
    eventfd_write(stop_fd, 1);
    for (unsigned i = 0; i < started; i++) {
        pthread_join(ws[i].tid, NULL);
        s->stats.accepted += ws[i].stats.accepted;
        s->stats.bytes_in += ws[i].stats.bytes_in;
        s->stats.bytes_out += ws[i].stats.bytes_out;
        s->stats.resets += ws[i].stats.resets;
        s->stats.errors += ws[i].stats.errors;
        s->stats.requests += ws[i].stats.requests;
        s->stats.bad += ws[i].stats.bad;
        s->stats.over_max += ws[i].stats.over_max;
        s->stats.no_fds += ws[i].stats.no_fds;
        srv_worker_release(&ws[i]);
    }
    if (s->shared != NULL && s->cfg->proto->destroy != NULL) s->cfg->proto->destroy(s->shared);
    s->shared = NULL;
    close(stop_fd);
    free(ws);
    return rc;
}
