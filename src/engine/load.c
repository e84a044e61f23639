/*
 * load: threads, the measured window and the merge of per-thread results
 * (see load.h). Each thread allocates its connections, buffers, codec states
 * and histogram once, before its loop starts, and touches no shared state
 * until it ends but two flags it reads: the stop flag and the one that opens
 * the window (load_run's thread sets it once the window's counters are read).
 */
#include "engine/load.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <time.h>

#include "engine/conn.h"

struct worker {
    const struct load_cfg *cfg;
    unsigned nconns;
    unsigned first_conn;       /* the number of this thread's first connection in the run */
    uint64_t quota;            /* count mode: this thread's share; else UINT64_MAX */
    uint64_t t0;               /* the run began; the window begins at t0 + warmup */
    const atomic_bool *opened; /* the window's counters were read (LOAD_WINDOW_OPEN); NULL: no
                                * wait, the window begins at t0 + warmup */
    atomic_bool *failed;       /* a thread's wait failed: the run fails, every thread stops */
    struct series_run *series; /* the run's intervals, which the thread adds its own to */
    struct conn_ctx ctx;
    struct conn *conns;
    uint8_t *mem;   /* request copies, receive buffers, codec states */
    unsigned ninit; /* connections set up (the only ones worker_release touches) */
    struct load_thread_window win;
    uint64_t end_ns;        /* the thread's loop ended: after every op it recorded */
    struct load_live *live; /* this thread's entry of cfg->live, or NULL */
    int rc;                 /* 0, or the negative errno that stopped the thread from running */
    pthread_t tid;
};

const char *load_close_name(enum load_close c)
{
    switch (c) {
    case CLOSE_CLIENT:
        return "client";
    case CLOSE_SERVER:
        return "server";
    case CLOSE_RST:
        return "rst";
    }
    return "?";
}

const char *load_retry_name(enum load_retry r)
{
    switch (r) {
    case RETRY_ONCE:
        return "once";
    case RETRY_NONE:
        return "none";
    }
    return "?";
}

const char *load_phase_name(enum load_phase p)
{
    static const char *const names[PHASES] = { "connect", "ttfb", "response", "close" };

    return (unsigned)p < PHASES ? names[p] : "?";
}

uint64_t load_errors_total(const struct load_result *r)
{
    return op_err_total(r->errors);
}

bool load_result_valid(const struct load_result *r)
{
    return load_errors_total(r) == 0 && r->ops > 0;
}

/* a + b, a × b and n rounded up to a multiple of `to`, each SIZE_MAX when it would not fit. */
static size_t sat_add(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static size_t sat_mul(size_t a, size_t b)
{
    return b != 0 && a > SIZE_MAX / b ? SIZE_MAX : a * b;
}

static size_t round_up(size_t n, size_t to)
{
    return n > SIZE_MAX - (to - 1) ? SIZE_MAX : (n + to - 1) / to * to;
}

/*
 * Per-thread memory: the shared request copies, the scratch codec state, the
 * receive buffer when the thread's connections share it, then per connection
 * its receive buffer (when not shared), wbuf and codec state.
 */
struct worker_layout {
    size_t reqs;      /* fixed codecs: pipeline copies of the request; codecs whose requests
                       * come round: the table of them (worker_cycle), then its offsets */
    uint64_t cycle;   /* the latter: the requests in one round; 0: none */
    size_t rbuf;      /* the receive buffer's size */
    bool rbuf_shared; /* one receive buffer per thread (epoll, block): a connection's bytes
                       * are all handed to its codec before the next recv() of any other;
                       * --wait uring has a receive in flight per connection: one each */
    size_t wbuf;      /* other codecs: request buffer per connection; a session's set-up buffer */
    size_t state;     /* codec state, rounded up */
};

/* What the codec is told about the requests (worker_setup adds a fixed codec's request bytes). */
static struct codec_cfg worker_codec_cfg(const struct load_cfg *cfg)
{
    static const union codec_room defaults; /* every protocol's defaults: all zero */

    return (struct codec_cfg){ .size = cfg->size,
                               .keep_alive = cfg->mode == LOAD_REUSE,
                               .local = cfg->ep.kind != ENDPOINT_TCP,
                               .opts = cfg->opts != NULL ? cfg->opts : &defaults };
}

/*
 * The most bytes a thread's table of requests that come round (codec_ops.cycle) may
 * take: a round of 1,000 keys' SETs of 64 B is 93 KB. Beyond it each is encoded.
 */
#define CYCLE_TABLE_MAX ((size_t)1 << 20)

/*
 * A codec whose requests come round within CYCLE_TABLE_MAX: the requests of a round
 * (its table holds a round and pipeline - 1 more, so that a batch from any of them
 * is contiguous, as in bench/protofloor); else 0. *bytes: the table's and offsets'.
 */
static uint64_t worker_cycle(const struct load_cfg *cfg, const struct codec_cfg *cc, size_t *bytes)
{
    const struct codec_ops *codec = cfg->codec;
    uint64_t n = codec->cycle != NULL && !codec_fixed(codec, cc) ? codec->cycle(cc) : 0;
    size_t entries, b;

    if (n == 0 || n > CYCLE_TABLE_MAX) return 0;
    entries = (size_t)n + cfg->pipeline - 1;
    b = sat_add(round_up(sat_mul(codec->max_request(cc), entries), 64),
                round_up((entries + 1) * sizeof(uint32_t), 64));
    if (b > CYCLE_TABLE_MAX) return 0;
    *bytes = b;
    return n;
}

static struct worker_layout worker_layout_of(const struct load_cfg *cfg)
{
    const struct codec_ops *codec = cfg->codec;
    struct codec_cfg cc = worker_codec_cfg(cfg);
    struct worker_layout lo = { .state = round_up(codec->state_size, 16) };
    size_t batch = sat_mul(codec->max_request(&cc), cfg->pipeline);

    lo.rbuf = batch < 16384 ? 16384 : batch > 65536 ? 65536 : round_up(batch, 64);
    lo.rbuf_shared = !(cfg->uring_wait && cfg->mode == LOAD_REUSE && cfg->rate <= 0);
    if (codec_fixed(codec, &cc))
        lo.reqs = round_up(batch, 64);
    else if ((lo.cycle = worker_cycle(cfg, &cc, &lo.reqs)) == 0)
        lo.wbuf = round_up(batch, 64);
    /* A session's set-up writes its messages into the connection's own buffer. */
    if (codec->setup != NULL && lo.wbuf < codec->setup_cap)
        lo.wbuf = round_up(codec->setup_cap, 64);
    return lo;
}

/* The histograms of one thread, or of one result: latency, phases, open loop's service. */
static size_t load_hists_bytes(const struct load_cfg *cfg)
{
    return (1 + PHASES + (cfg->rate > 0)) * sizeof(struct hist);
}

/* The run's interval slots (series_alloc) and, kept with its result, the series' points. */
static size_t load_series_bytes(const struct load_cfg *cfg)
{
    struct series_run r;

    series_plan(&r, cfg->duration_ns, cfg->rate > 0 ? cfg->timeout_ns : 0);
    return sat_add(series_mem(&r), sat_mul(r.nslots, 2 * sizeof(uint64_t)));
}

/*
 * --wait uring: the provided buffers of a thread with nconns connections (a power
 * of two, as the kernel wants): two per connection, so that a reply's bytes
 * rarely find none (-ENOBUFS ends the multishot receive, which is then armed
 * again), between 8 and 256.
 */
#define WORKER_RING_BUFS_MAX 256u
static unsigned worker_ring_nbufs(unsigned nconns)
{
    unsigned n = 8;

    while (n < 2ull * nconns && n < WORKER_RING_BUFS_MAX)
        n <<= 1;
    return n;
}

size_t load_mem_need(const struct load_cfg *cfg, size_t kept)
{
    struct worker_layout lo = worker_layout_of(cfg);
    size_t per_conn = sat_add(sat_add(lo.rbuf_shared ? 0 : lo.rbuf, lo.wbuf), lo.state);
    size_t conn_bytes = sat_add(per_conn, sizeof(struct conn));
    size_t per_thread = sat_add(sat_add(sat_add(lo.reqs, lo.state), lo.rbuf_shared ? lo.rbuf : 0),
                                load_hists_bytes(cfg));
    size_t total = sat_add(sat_mul(cfg->threads, sizeof(struct worker)), load_hists_bytes(cfg));

    if (cfg->rate > 0) conn_bytes = sat_add(conn_bytes, sizeof(struct sendq_node *));
    if (!lo.rbuf_shared) /* --wait uring's provided buffers, per thread */
        per_thread = sat_add(
            per_thread, sat_mul(worker_ring_nbufs((cfg->conns + cfg->threads - 1) / cfg->threads),
                                lo.rbuf + sizeof(struct io_uring_buf)));
    total = sat_add(total, sat_mul(cfg->threads, per_thread));
    total = sat_add(total, sat_mul(kept, load_hists_bytes(cfg)));
    total = sat_add(total, load_series_bytes(cfg));
    return sat_add(total, sat_mul(cfg->conns, conn_bytes));
}

size_t load_result_mem(const struct load_cfg *cfg)
{
    return load_hists_bytes(cfg);
}

unsigned long long load_fd_need(const struct load_cfg *cfg)
{
    return (unsigned long long)cfg->conns + cfg->threads * (cfg->uring_wait ? 2ull : 1ull);
}

/* The longest a blocking wait may last; also how long a Ctrl-C may wait to be seen. */
#define WORKER_BLOCK_MAX_NS (50 * NS_PER_MS)

/*
 * The blocking path (conn_wait), with --wait block: for a thread with one
 * closed-loop reuse connection and one request in flight, as sockperf and the
 * floor measure, a recv() that sleeps replaces epoll_wait() and recv(), on
 * either transport alike. Each wait lasts at most min(--timeout, 50 ms), so
 * timeouts, the deadline and the stop flag are still checked in time. 0: the
 * thread always polls.
 */
static uint64_t worker_block_ns(const struct worker *w)
{
    const struct load_cfg *cfg = w->cfg;
    uint64_t ns = cfg->timeout_ns < WORKER_BLOCK_MAX_NS ? cfg->timeout_ns : WORKER_BLOCK_MAX_NS;

    if (!cfg->block_wait || w->nconns != 1 || cfg->rate > 0 || cfg->mode != LOAD_REUSE ||
        cfg->pipeline != 1)
        return 0;
    return ns >= NS_PER_MS ? ns : 0; /* shorter timeouts are left to the loop's precise ones */
}

/*
 * --wait uring: the thread's provided buffers, registered with its ring as
 * group CONN_RING_BGID, so that each kept connection receives through one
 * multishot recv. A kernel without buffer rings (before 5.19: EINVAL) or
 * without multishot receive (before 6.0: its first CQE's EINVAL, conn.c)
 * leaves ctx->ring_ms false: one recv per reply, into the connection's rbuf.
 */
static void worker_ring_bufs(struct worker *w)
{
    struct conn_ctx *ctx = &w->ctx;
    unsigned n = worker_ring_nbufs(w->nconns);
    size_t ring_bytes = round_up(n * sizeof(struct io_uring_buf), 4096);
    struct io_uring_buf_reg reg = { .ring_entries = n, .bgid = CONN_RING_BGID };
    void *br = mmap(NULL, ring_bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);

    if (br == MAP_FAILED) return;
    ctx->br_mem = malloc(n * ctx->rbuf_cap);
    reg.ring_addr = (uint64_t)(uintptr_t)br;
    if (ctx->br_mem == NULL || io_uring_register_buf_ring(&ctx->ring, &reg, 0) < 0) {
        free(ctx->br_mem);
        ctx->br_mem = NULL;
        munmap(br, ring_bytes);
        return;
    }
    ctx->br = br;
    ctx->br_n = n;
    io_uring_buf_ring_init(ctx->br);
    for (unsigned i = 0; i < n; i++)
        io_uring_buf_ring_add(ctx->br, ctx->br_mem + (size_t)i * ctx->rbuf_cap,
                              (unsigned)ctx->rbuf_cap, (unsigned short)i, io_uring_buf_ring_mask(n),
                              (int)i);
    io_uring_buf_ring_advance(ctx->br, (int)n);
    ctx->ring_ms = true;
}

/*
 * --wait uring: the thread's ring, room for a send and a receive per
 * connection (conn_ring_sqe submits early if ever it fills). Single issuer with
 * deferred task work where the kernel has them (6.1), so completions are
 * run in the thread's own io_uring_enter, not by interrupting it; plain
 * otherwise. Returns 0 or the negative errno of the plain set-up's failure
 * (ENOSYS, EPERM under a seccomp profile or kernel.io_uring_disabled): the
 * thread then waits with epoll, and the run says so.
 */
static int worker_ring_init(struct worker *w)
{
    unsigned entries = w->nconns > 2048 ? 4096 : 2 * w->nconns + 4;
    int rc = io_uring_queue_init(entries, &w->ctx.ring,
                                 IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);

    if (rc == -EINVAL) rc = io_uring_queue_init(entries, &w->ctx.ring, 0);
    if (rc == 0 && !(w->ctx.ring.features & IORING_FEAT_EXT_ARG)) {
        io_uring_queue_exit(&w->ctx.ring);
        rc = -EOPNOTSUPP;
    }
    w->ctx.ring_on = rc == 0;
    if (rc == 0) worker_ring_bufs(w);
    return rc;
}

/*
 * Whether a ring can be set up here, as worker_ring_init would. A kernel before
 * 5.11 has no timeout argument to the wait (IORING_FEAT_EXT_ARG): liburing would
 * queue a timeout op of its own per wait, whose completions come among the
 * connections'; such a kernel waits with epoll (-EOPNOTSUPP).
 */
int load_ring_probe(void)
{
    struct io_uring ring;
    int rc = io_uring_queue_init(2, &ring, 0);

    if (rc == 0 && !(ring.features & IORING_FEAT_EXT_ARG)) rc = -EOPNOTSUPP;
    if (rc == 0 || rc == -EOPNOTSUPP) io_uring_queue_exit(&ring);
    return rc;
}

/*
 * Encodes the table of a codec's requests that come round (worker_cycle) at w->mem with a
 * scratch state of connection 0's: entry i at w->mem + off[i], off after the bytes.
 */
static int worker_cycle_table(struct worker *w, const struct worker_layout *lo,
                              const struct codec_cfg *cc, uint8_t *scratch)
{
    const struct codec_ops *codec = w->cfg->codec;
    size_t entries = (size_t)lo->cycle + w->cfg->pipeline - 1;
    size_t cap = round_up(sat_mul(codec->max_request(cc), entries), 64), at = 0;
    uint32_t *off = (uint32_t *)(void *)(w->mem + cap);
    struct codec_cfg first = *cc;

    first.conn_index = 0;
    codec->init(scratch, &first);
    for (size_t i = 0; i < entries; i++) {
        size_t n = codec->encode(scratch, w->mem + at, cap - at);
        if (n == 0) return -EINVAL;
        off[i] = (uint32_t)at;
        at += n;
    }
    off[entries] = (uint32_t)at;
    w->ctx.req = w->mem;
    w->ctx.cycle_off = off;
    return 0;
}

/* Allocates everything the thread's loop will use; nothing is allocated after this. */
static int worker_setup(struct worker *w)
{
    const struct load_cfg *cfg = w->cfg;
    const struct codec_ops *codec = cfg->codec;
    struct conn_ctx *ctx = &w->ctx;
    struct codec_cfg cc = worker_codec_cfg(cfg);
    struct worker_layout lo = worker_layout_of(cfg);
    size_t shared = lo.rbuf_shared ? lo.rbuf : 0;
    size_t per_conn = lo.rbuf - shared + lo.wbuf + lo.state;
    uint8_t *scratch, *rbuf;
    int rc;

    ctx->loop.epfd = -1; /* so worker_release never closes fd 0 after an early failure */
    /* Per-thread randomness for session nonces (a database's SCRAM); none is no error. */
    if (getrandom(&cc.seed, sizeof(cc.seed), GRND_NONBLOCK) != (ssize_t)sizeof(cc.seed))
        cc.seed = now_ns() ^ (uintptr_t)w;
    w->mem = calloc(1, lo.reqs + lo.state + shared + (size_t)w->nconns * per_conn);
    w->conns = calloc(w->nconns, sizeof(*w->conns));
    ctx->lat = hist_new();
    for (int p = 0; p < PHASES; p++)
        if ((ctx->phase[p] = hist_new()) == NULL) return -ENOMEM;
    if (w->mem == NULL || w->conns == NULL || ctx->lat == NULL) return -ENOMEM;
    rc = loop_init(&ctx->loop);
    if (rc < 0) return rc;
    ctx->cfg = cfg;
    scratch = w->mem + lo.reqs;
    rbuf = lo.rbuf_shared ? scratch + lo.state : NULL;
    if (codec_fixed(codec, &cc)) {
        /* Encode one request with a scratch state, then copy it `pipeline` times. */
        size_t req_len;
        codec->init(scratch, &cc);
        req_len = codec->encode(scratch, w->mem, lo.reqs);
        if (req_len == 0) return -EINVAL;
        for (unsigned i = 1; i < cfg->pipeline; i++)
            memcpy(w->mem + i * req_len, w->mem, req_len);
        ctx->req = w->mem;
        ctx->req_len = req_len;
        cc.request = ctx->req;
        cc.request_len = req_len;
    } else if (lo.cycle > 0 && (rc = worker_cycle_table(w, &lo, &cc, scratch)) < 0) {
        return rc;
    }
    ctx->codec_cfg = cc;
    ctx->wbuf_cap = lo.wbuf;
    ctx->rbuf_cap = lo.rbuf;
    /* Until the thread has waited for w->opened, every op it begins is warm-up. */
    ctx->window_start_ns = w->opened != NULL ? UINT64_MAX : w->t0 + cfg->warmup_ns;
    ctx->quota = w->quota;
    ctx->end_ns = UINT64_MAX;
    series_mine_init(&ctx->series, w->series, ctx->lat);
    ctx->block_ns = worker_block_ns(w);
    if (cfg->uring_wait && cfg->rate <= 0 && cfg->mode == LOAD_REUSE)
        w->win.ring_err = -worker_ring_init(w);
    tq_init(&ctx->timeouts, cfg->timeout_ns);
    tq_init(&ctx->retries, CONN_RETRY_NS);
    if (cfg->rate > 0) {
        /* Timers as precise as the kernel allows: the default slack is 50 us. */
        prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
        ctx->gap_ns = (double)cfg->conns * 1e9 / cfg->rate;
        ctx->service = hist_new();
        if (ctx->service == NULL || sendq_init(&ctx->sendq, w->nconns) < 0) return -ENOMEM;
    }
    for (unsigned i = 0; i < w->nconns; i++) {
        uint8_t *base = scratch + lo.state + shared + (size_t)i * per_conn;
        size_t own = lo.rbuf - shared; /* the connection's own receive buffer, if any */
        unsigned index = w->first_conn + i;
        conn_init(&w->conns[i], ctx, rbuf != NULL ? rbuf : base, lo.wbuf ? base + own : NULL,
                  base + own + lo.wbuf, index);
        /* Connections start staggered, so arrivals are spread from the first instant. */
        w->conns[i].sn.at =
            w->t0 +
            (cfg->rate > 0 ? (uint64_t)((double)(index - cfg->conn_base) * 1e9 / cfg->rate) : 0);
        w->conns[i].rng =
            (cfg->seed + 1) * 0x9E3779B97F4A7C15ULL ^ (index + 1) * 0xD1B54A32D192ED03ULL;
        if (w->conns[i].rng == 0) w->conns[i].rng = 1;
        w->ninit++;
    }
    return 0;
}

static void worker_release(struct worker *w)
{
    for (unsigned i = 0; i < w->ninit; i++)
        conn_close(&w->conns[i]);
    /*
     * The ring's ops were cancelled, and waited for, when the thread that owns it
     * exited (pthread_join has returned): the kernel no longer writes the buffers.
     * The cancels conn_close submits from this thread are refused (single issuer)
     * and change nothing; the exit frees the ring.
     */
    if (w->ctx.ring_on) io_uring_queue_exit(&w->ctx.ring);
    w->ctx.ring_on = false;
    if (w->ctx.br != NULL)
        munmap(w->ctx.br, round_up(w->ctx.br_n * sizeof(struct io_uring_buf), 4096));
    free(w->ctx.br_mem);
    w->ctx.br = NULL;
    w->ctx.br_mem = NULL;
    loop_release(&w->ctx.loop);
    sendq_release(&w->ctx.sendq);
    free(w->conns);
    free(w->mem);
    w->conns = NULL;
    w->mem = NULL;
}

static void worker_fire_timers(struct worker *w, uint64_t now)
{
    struct tq_node *n;

    while ((n = tq_pop_expired(&w->ctx.timeouts, now)) != NULL)
        conn_on_timer(conn_of_timer(n), now);
    while ((n = tq_pop_expired(&w->ctx.retries, now)) != NULL)
        conn_on_timer(conn_of_timer(n), now);
    for (struct sendq_node *sn; (sn = sendq_pop_due(&w->ctx.sendq, now)) != NULL;)
        conn_begin(conn_of_sendq(sn), now);
}

/*
 * How long the loop may sleep: until the next timer, the window, the deadline
 * (then the drain's limit); at most 50 ms.
 */
static uint64_t worker_sleep_ns(const struct worker *w, uint64_t now, uint64_t win,
                                uint64_t deadline, uint64_t limit, bool in_window)
{
    uint64_t until = now + WORKER_BLOCK_MAX_NS;
    uint64_t t[5] = { tq_next(&w->ctx.timeouts), tq_next(&w->ctx.retries),
                      now < deadline ? deadline : limit, in_window ? UINT64_MAX : win,
                      sendq_next(&w->ctx.sendq) };

    for (size_t i = 0; i < ARRAY_LEN(t); i++)
        if (t[i] < until) until = t[i];
    return until > now ? until - now : 0;
}

/*
 * Open loop, past the deadline: the connections still waiting in the sendq
 * are all due after it (the due ones were just begun), so they end now
 * rather than when their next intended time comes.
 */
static void worker_retire_late(struct worker *w, uint64_t now)
{
    for (struct sendq_node *sn; (sn = sendq_pop_due(&w->ctx.sendq, UINT64_MAX)) != NULL;)
        conn_begin(conn_of_sendq(sn), now);
}

/* Open loop, the drain's limit reached: what is still unanswered or unsent is a timeout. */
static void worker_abandon(struct worker *w)
{
    for (unsigned i = 0; i < w->nconns; i++)
        conn_abandon(&w->conns[i]);
}

/*
 * Sleeps until something happens or sleep_ns passes. A blocking wait may
 * overshoot sleep_ns by a sixteenth of its length at most (when nothing
 * arrives), so it is used only when the next timer, the window and the
 * deadline are about as far away as the wait is long; otherwise the loop polls
 * with the exact timeout. Returns loop_poll's result, or 0.
 */
/* The ring's CQE of the thread's poll of its epoll fd (conn.h's tags use the other values). */
#define WORKER_RING_EPOLL 0u

/*
 * --wait uring: one io_uring_enter submits what the last turn queued (the
 * kept connections' sends and receives) and sleeps until a completion or
 * sleep_ns. The epoll set (connects, set-ups, connections not yet kept) is
 * watched by a poll of its fd in the same ring, and read without waiting
 * when that poll completes. Completions are handled as one batch of events:
 * the next batches' sends wait for its end (loop_defer). Returns the number
 * of completions, 0 on timeout or signal, or a negative errno.
 */
static int worker_ring_wait(struct worker *w, uint64_t sleep_ns, bool *epoll_armed)
{
    struct conn_ctx *ctx = &w->ctx;
    struct __kernel_timespec ts = { .tv_sec = (long long)(sleep_ns / NS_PER_S),
                                    .tv_nsec = (long long)(sleep_ns % NS_PER_S) };
    struct io_uring_cqe *cqe;
    unsigned head, seen = 0;
    bool epoll_ready = false;
    int rc;

    if (!*epoll_armed) {
        struct io_uring_sqe *sqe = conn_ring_sqe(ctx);
        if (sqe == NULL) return -EBUSY;
        io_uring_prep_poll_add(sqe, ctx->loop.epfd, POLLIN);
        io_uring_sqe_set_data64(sqe, WORKER_RING_EPOLL);
        *epoll_armed = true;
    }
    rc = io_uring_submit_and_wait_timeout(&ctx->ring, &cqe, 1, &ts, NULL);
    if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) return rc;
    loop_begin_batch(&ctx->loop);
    io_uring_for_each_cqe(&ctx->ring, head, cqe)
    {
        uint64_t data = io_uring_cqe_get_data64(cqe);
        unsigned tag = (unsigned)(data & CONN_RING_TAGS);
        struct conn *c = (struct conn *)(uintptr_t)(data & ~(uint64_t)CONN_RING_TAGS);

        seen++;
        if (data == LIBURING_UDATA_TIMEOUT) continue; /* liburing's own: none with EXT_ARG */
        if (data == WORKER_RING_EPOLL) {
            *epoll_armed = false;
            epoll_ready = true;
        } else if (c != NULL) {
            conn_ring_done(c, tag, cqe->res, cqe->flags);
        }
    }
    io_uring_cq_advance(&ctx->ring, seen);
    loop_end_batch(&ctx->loop);
    if (epoll_ready) {
        rc = loop_poll(&ctx->loop, 0);
        if (rc < 0) return rc;
    }
    return (int)seen;
}

static int worker_wait(struct worker *w, uint64_t sleep_ns, bool *epoll_armed)
{
    uint64_t block_ns = w->ctx.block_ns;

    if (w->ctx.ring_on) return worker_ring_wait(w, sleep_ns, epoll_armed);
    if (block_ns > 0 && sleep_ns >= block_ns - block_ns / 16 && conn_may_block(&w->conns[0]) &&
        conn_wait(&w->conns[0]) == 0)
        return 0;
    return loop_poll(&w->ctx.loop, sleep_ns);
}

/*
 * A thread that reached t0 + warmup with w->opened waits there, in 20 us
 * sleeps, until load_run's thread has read the counters that bracket the
 * window (it always sets the flag, also when the run is stopped first). It
 * begins no op meanwhile, so the counters see no connect of the warm-up made
 * after them nor miss one of the window. The wait is as long as those reads
 * (well under a millisecond) unless that thread is woken late; replies
 * arriving meanwhile wait in the socket. Returns when the window begins: now.
 */
static uint64_t worker_await_window(const struct worker *w)
{
    static const struct timespec nap = { .tv_sec = 0, .tv_nsec = 20000 };

    while (!atomic_load(w->opened))
        clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, NULL);
    return now_ns();
}

/* a + b, UINT64_MAX when it would not fit. */
static uint64_t add_ns(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/*
 * The thread's window: from its start to the loop's end, `now`. A closed loop
 * ends at the deadline at the latest; an open loop (unless stopped) at the
 * deadline at the earliest: its window is the intended one, plus the drain.
 */
static void worker_end_window(struct worker *w, uint64_t win, uint64_t deadline, uint64_t now)
{
    const struct load_cfg *cfg = w->cfg;
    uint64_t end = now < deadline ? now : deadline;

    if (cfg->rate > 0 && cfg->duration_ns)
        end = now > deadline || w->win.interrupted ? now : deadline;
    w->win.window_ns = end - win;
    w->win.drain_ns = end > deadline ? end - deadline : 0;
}

/* How often a thread tells its progress (a line is redrawn at most 10 times a second). */
#define PUBLISH_NS (50 * NS_PER_MS)

/* What the thread has done so far, for whoever draws a progress line. */
static void worker_publish(const struct worker *w)
{
    atomic_store_explicit(&w->live->ops, w->ctx.ops, memory_order_relaxed);
    atomic_store_explicit(&w->live->errors, op_err_total(w->ctx.errors), memory_order_relaxed);
}

/* The thread's connections open now: connected sockets (not a connect still pending). */
static unsigned worker_open_conns(const struct worker *w)
{
    unsigned n = 0;

    for (unsigned i = 0; i < w->nconns; i++)
        n += w->conns[i].lfd.fd >= 0 && w->conns[i].state != CONN_CONNECTING;
    return n;
}

static void worker_loop(struct worker *w)
{
    const struct load_cfg *cfg = w->cfg;
    uint64_t now = now_ns(), cpu0 = 0, published = 0;
    uint64_t win = w->t0 + cfg->warmup_ns;
    uint64_t deadline;
    uint64_t limit; /* the loop ends here: the deadline, or an open loop's drain's end */
    bool open = cfg->rate > 0, in_window = false;
    bool epoll_armed = false; /* --wait uring: the ring polls the epoll fd */
    int rc;

    /* A closed loop without a warm-up: the window begins when this thread can load, not
     * before its start and setup, which no op waited for (open loop: on its schedule). */
    if (w->opened == NULL && cfg->rate <= 0 && win < now) win = w->ctx.window_start_ns = now;
    deadline = cfg->duration_ns ? win + cfg->duration_ns : UINT64_MAX;

    for (unsigned i = 0; i < w->nconns; i++)
        conn_begin(&w->conns[i], now);
    for (;;) {
        now = now_ns();
        if (!in_window && now >= win) {
            if (w->opened != NULL) {
                now = win = w->ctx.window_start_ns = worker_await_window(w);
                if (cfg->duration_ns) deadline = win + cfg->duration_ns;
            }
            in_window = true;
            w->ctx.end_ns = deadline;
            w->win.open_start = worker_open_conns(w);
            cpu0 = thread_cpu_ns();
        }
        limit = open ? add_ns(deadline, cfg->timeout_ns) : deadline;
        if (now >= limit && open) worker_abandon(w);
        if (now >= limit || w->ctx.active == 0) break;
        if ((cfg->stop != NULL && atomic_load(cfg->stop)) ||
            atomic_load_explicit(w->failed, memory_order_relaxed)) {
            w->win.interrupted = true;
            break;
        }
        worker_fire_timers(w, now);
        if (open && now >= deadline) worker_retire_late(w, now);
        if (w->ctx.active == 0) break; /* the last ones may have ended just now */
        rc = worker_wait(w, worker_sleep_ns(w, now, win, deadline, limit, in_window), &epoll_armed);
        if (rc < 0) {
            /* The run fails, and its window is not what was asked: cut short. */
            w->win.wait_err = -rc;
            w->win.interrupted = true;
            atomic_store_explicit(w->failed, true, memory_order_relaxed); /* the others stop */
            break;
        }
        if (w->live != NULL && now >= published + PUBLISH_NS) {
            worker_publish(w);
            published = now;
        }
    }
    /* --wait uring: the batches taken up in the last turn are counted as sent (requests) but
     * still queued in the ring, which the next wait would have submitted; they go out now, as
     * the epoll path's went out when taken up. */
    if (w->ctx.ring_on) io_uring_submit(&w->ctx.ring);
    if (w->live != NULL) worker_publish(w);
    w->end_ns = now_ns();
    if (in_window) {
        w->win.cpu_ns = thread_cpu_ns() - cpu0;
        worker_end_window(w, win, deadline, now);
        w->win.open_end = worker_open_conns(w);
    }
    w->ctx.stopping = true;
}

/* Runs the loop; the sockets stay open for the end-of-window counters (load_run releases). */
static void *worker_main(void *arg)
{
    struct worker *w = arg;

    prctl(PR_SET_NAME, "hb-load"); /* --profile tells the client's threads by this name */
    w->rc = worker_setup(w);
    if (w->rc == 0) worker_loop(w);
    return NULL;
}

static int worker_start(struct worker *w, unsigned idx)
{
    const struct load_cfg *cfg = w->cfg;
    pthread_attr_t attr;
    int rc;

    pthread_attr_init(&attr);
    if (cfg->cpus != NULL && cfg->ncpus > 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cfg->cpus[idx % cfg->ncpus], &set);
        pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
    }
    rc = pthread_create(&w->tid, &attr, worker_main, w);
    pthread_attr_destroy(&attr);
    return -rc;
}

void load_result_add(struct load_result *res, const struct conn_ctx *ctx,
                     const struct load_thread_window *win)
{
    res->ops += ctx->ops;
    res->connects += ctx->connects;
    res->requests += ctx->requests;
    res->replies += ctx->replies;
    for (size_t k = 0; k < CODEC_KINDS; k++)
        res->replies_kind[k] += ctx->replies_kind[k];
    res->reconnects += ctx->reconnects;
    res->retried += ctx->retried;
    res->connect_retries += ctx->connect_retries;
    res->stderr_replies += ctx->stderr_replies;
    for (size_t k = 0; k < ARRAY_LEN(res->status); k++)
        res->status[k] += ctx->status[k];
    for (int k = 0; k < OP_ERR_KINDS; k++)
        res->errors[k] += ctx->errors[k];
    if (ctx->bad.t_ns != 0 && (res->bad.t_ns == 0 || ctx->bad.t_ns < res->bad.t_ns))
        res->bad = ctx->bad;
    res->client_cpu_ns += win->cpu_ns;
    if (win->window_ns > res->window_ns) res->window_ns = win->window_ns;
    if (win->drain_ns > res->drain_ns) res->drain_ns = win->drain_ns;
    res->interrupted |= win->interrupted;
    res->open_start += win->open_start;
    res->open_end += win->open_end;
    res->ring_threads += ctx->ring_on;
    res->ring_ms_threads += ctx->ring_on && ctx->ring_ms;
    res->ring_arms += ctx->ring_arms;
    if (win->ring_err != 0) res->ring_err = win->ring_err;
    if (win->wait_err != 0) res->wait_err = win->wait_err;
    if (ctx->lat != NULL) hist_merge(res->lat, ctx->lat);
    if (ctx->service != NULL && res->service != NULL) hist_merge(res->service, ctx->service);
    for (int p = 0; p < PHASES; p++)
        if (ctx->phase[p] != NULL) hist_merge(res->phase[p], ctx->phase[p]);
}

/* floor(count * k / n) without overflow (count < 2^63, k <= n <= 2^17). */
static uint64_t load_share(uint64_t count, unsigned k, unsigned n)
{
    return count / n * k + count % n * k / n;
}

static void split_work(struct worker *ws, const struct load_cfg *cfg, uint64_t t0,
                       const atomic_bool *opened, atomic_bool *failed, struct series_run *series)
{
    unsigned first = 0; /* of this load's connections; the run's numbers begin at conn_base */

    for (unsigned i = 0; i < cfg->threads; i++) {
        struct worker *w = &ws[i];
        w->cfg = cfg;
        w->t0 = t0;
        w->opened = opened;
        w->failed = failed;
        w->series = series;
        w->nconns = cfg->conns / cfg->threads + (i < cfg->conns % cfg->threads);
        w->first_conn = cfg->conn_base + first;
        w->live = cfg->live != NULL ? &cfg->live[i] : NULL;
        w->quota = UINT64_MAX;
        /* The count in proportion to the thread's connections (so an open-loop rate, which is
         * per connection, meets its share): ops [count*first/conns, count*end/conns). */
        if (cfg->count)
            w->quota = load_share(cfg->count, first + w->nconns, cfg->conns) -
                       load_share(cfg->count, first, cfg->conns);
        first += w->nconns;
    }
}

/*
 * Sleeps until the window begins (or Ctrl-C), calls the OPEN hook, lets the
 * load threads into the window (*opened, set whatever happened; the series'
 * first interval begins then, before any thread's window, unless the series
 * is the caller's: NULL), then calls the OPENED hook. Returns whether it
 * called them.
 */
static bool window_begin(const struct load_cfg *cfg, uint64_t t0, atomic_bool *opened,
                         struct series_run *series)
{
    bool hooked = sleep_until_ns(t0 + cfg->warmup_ns, cfg->stop);

    if (hooked) cfg->on_window(cfg->on_window_arg, LOAD_WINDOW_OPEN);
    if (series != NULL) series->origin_ns = now_ns();
    atomic_store(opened, true);
    if (hooked) cfg->on_window(cfg->on_window_arg, LOAD_WINDOW_OPENED);
    return hooked;
}

void load_result_init(struct load_result *res, const struct load_cfg *cfg)
{
    *res = (struct load_result){ 0 };
    res->lat = xmalloc(sizeof(*res->lat));
    hist_init(res->lat);
    for (int p = 0; p < PHASES; p++) {
        res->phase[p] = xmalloc(sizeof(*res->phase[p]));
        hist_init(res->phase[p]);
    }
    if (cfg->rate > 0) {
        res->service = xmalloc(sizeof(*res->service));
        hist_init(res->service);
    }
}

int load_run(const struct load_cfg *cfg, struct load_result *res, struct hb_err *err)
{
    struct worker *ws = xcalloc(cfg->threads, sizeof(*ws));
    unsigned started = 0;
    bool hooked = false;
    atomic_bool opened = false, failed = false;
    bool await = cfg->on_window != NULL && cfg->warmup_ns > 0; /* load threads wait for opened */
    struct series_run own = { 0 }, *series = cfg->series != NULL ? cfg->series : &own;
    uint64_t t0, win0 = UINT64_MAX, end = 0;
    struct timespec real0;
    int rc = 0;

    load_result_init(res, cfg);
    if (cfg->series == NULL) {
        series_plan(&own, cfg->duration_ns, cfg->rate > 0 ? cfg->timeout_ns : 0);
        series_alloc(&own);
    }
    /* Without a warm-up the window opens with the threads: snapshot before they start. */
    if (cfg->on_window != NULL && cfg->warmup_ns == 0) {
        cfg->on_window(cfg->on_window_arg, LOAD_WINDOW_OPEN);
        cfg->on_window(cfg->on_window_arg, LOAD_WINDOW_OPENED);
        hooked = true;
    }
    t0 = now_ns();
    clock_gettime(CLOCK_REALTIME, &real0); /* the wall clock at t0, to date the window by */
    /* no op of the window ends before it: each thread's window begins there or later */
    if (cfg->series == NULL) own.origin_ns = t0 + cfg->warmup_ns;
    split_work(ws, cfg, t0, await ? &opened : NULL, &failed, series);
    for (; started < cfg->threads; started++) {
        rc = worker_start(&ws[started], started);
        if (rc < 0) {
            hb_fail(err, rc, "cannot start load thread %u: %s", started, strerror(-rc));
            break;
        }
    }
    if (await && rc == 0)
        hooked = window_begin(cfg, t0, &opened, cfg->series == NULL ? &own : NULL);
    atomic_store(&opened, true); /* also when a thread could not start: none waits on */
    for (unsigned i = 0; i < started; i++)
        pthread_join(ws[i].tid, NULL);
    /* Before any socket closes, so the end-of-window counters see the run as it ended. */
    if (hooked) cfg->on_window(cfg->on_window_arg, LOAD_WINDOW_CLOSED);
    for (unsigned i = 0; i < started; i++) {
        if (ws[i].rc < 0 && rc == 0)
            rc = hb_fail(err, ws[i].rc, "load thread %u could not run: %s", i, strerror(-ws[i].rc));
        if (ws[i].win.wait_err != 0 && rc == 0)
            rc = hb_fail(err, -ws[i].win.wait_err, "load thread %u stopped: its %s wait failed: %s",
                         i, ws[i].ctx.ring_on ? "io_uring" : "epoll", strerror(ws[i].win.wait_err));
        load_result_add(res, &ws[i].ctx, &ws[i].win);
        if (ws[i].win.window_ns > 0 && ws[i].ctx.window_start_ns < win0)
            win0 = ws[i].ctx.window_start_ns;
        series_flush(&ws[i].ctx.series);
        if (ws[i].end_ns > series->origin_ns && ws[i].end_ns - series->origin_ns > end)
            end = ws[i].end_ns - series->origin_ns;
        worker_release(&ws[i]);
        hist_free(ws[i].ctx.lat);
        hist_free(ws[i].ctx.service);
        for (int p = 0; p < PHASES; p++)
            hist_free(ws[i].ctx.phase[p]);
    }
    free(ws);
    /* no thread reached the window: when it was due */
    if (win0 == UINT64_MAX || win0 < t0) win0 = t0 + cfg->warmup_ns;
    res->window_start_unix_ns =
        (uint64_t)real0.tv_sec * 1000000000u + (uint64_t)real0.tv_nsec + (win0 - t0);
    if (cfg->series == NULL) {
        series_result_of(&own, end, &res->series);
        series_free(&own);
    } else { /* the caller's slots, which the other parts may still be adding to */
        res->series.interval_ns = series->interval_ns;
        res->series.end_ns = end;
    }
    return rc;
}

void load_result_release(struct load_result *res)
{
    series_result_release(&res->series);
    free(res->lat);
    res->lat = NULL;
    for (int p = 0; p < PHASES; p++) {
        free(res->phase[p]);
        res->phase[p] = NULL;
    }
    free(res->service);
    res->service = NULL;
}

int load_max_rate(const struct load_cfg *cfg, uint64_t duration_ns, double *ops_per_s,
                  struct hb_err *err)
{
    struct load_cfg c = *cfg;
    struct load_result res;
    int rc;

    c.rate = 0;
    c.count = 0;
    c.duration_ns = duration_ns;
    c.on_window = NULL;
    rc = load_run(&c, &res, err);
    *ops_per_s = res.window_ns ? (double)res.ops * 1e9 / (double)res.window_ns : 0;
    if (rc == 0 && (res.ops == 0 || load_errors_total(&res) != 0))
        rc = hb_fail(err, -EIO,
                     "measuring the closed-loop maximum for --rate N%%: %llu ops, %llu errors",
                     (unsigned long long)res.ops, (unsigned long long)load_errors_total(&res));
    load_result_release(&res);
    return rc;
}
