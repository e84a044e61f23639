/*
 * loadcfg: what a load is, the vocabulary the engine's files share: the
 * modes, who closes, the phases of an op, the window's calls and struct
 * load_cfg. conn.c reads it; load.c (load.h) runs it.
 */
#ifndef HOPBENCH_ENGINE_LOADCFG_H
#define HOPBENCH_ENGINE_LOADCFG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "endpoint.h"
#include "proto/codec.h"

enum load_mode {
    LOAD_REUSE = 1, /* one connection, many requests */
    LOAD_CONNECT,   /* a new connection for every request (or batch) */
};

/* Who closes a connect-mode connection first, and so who holds TIME_WAIT */
enum load_close {
    CLOSE_CLIENT = 0, /* the client closes after the reply: the client holds TIME_WAIT */
    CLOSE_SERVER,     /* the client waits for the server's FIN (read returns 0), then closes */
    CLOSE_RST,        /* SO_LINGER {1, 0}: close() sends RST, nobody holds TIME_WAIT */
};

/* "client", "server", "rst": the names used in JSON. */
const char *load_close_name(enum load_close c);

/*
 * What a kept connection the server closed before any byte of the next reply
 * (EOF, reset, EPIPE) does to the requests it left unanswered.
 */
enum load_retry {
    RETRY_ONCE = 0, /* reopen and send them again, once per batch: a reconnect, not an error */
    RETRY_NONE,     /* the op fails (short or reset), as wrk counts such a close */
};

/* "once", "none": the names used on the command line and in JSON. */
const char *load_retry_name(enum load_retry r);

/*
 * The phases of an op, each with its own histogram:
 *   connect   before the first connect() -> connected (connect mode only); an
 *             AF_UNIX connect that found the backlog full waits in it
 *   ttfb      request fully written -> first reply byte (0 when the reply
 *             began before the request was fully written, as with 64 KiB echoes)
 *   response  request fully written -> last reply byte
 *   close     last reply byte -> close() returned (connect mode only)
 */
enum load_phase { PHASE_CONNECT = 0, PHASE_TTFB, PHASE_RESPONSE, PHASE_CLOSE, PHASES };

/* "connect", "ttfb", "response", "close": the names used in JSON. */
const char *load_phase_name(enum load_phase p);

/*
 * The calls of load_cfg.on_window, in this order. With a warm-up, a load
 * thread that reaches the window's start waits until LOAD_WINDOW_OPEN has
 * returned, and its window begins then: no op of the window can begin before
 * the counters read there, however late load_run's thread is woken, nor one
 * of the warm-up after them. Without one, OPEN and OPENED come before the
 * load threads start.
 */
enum load_window {
    LOAD_WINDOW_OPEN,   /* the window begins: read what must bracket it, quickly */
    LOAD_WINDOW_OPENED, /* the load threads were let into the window: the slower readings */
    LOAD_WINDOW_CLOSED, /* the load threads have ended; no socket is closed yet */
};

/*
 * What one load thread has done so far, for a live progress line: its
 * measured ops and its errors, stored by the thread (relaxed) once per turn
 * of its loop, read by anyone. One cache line each, so the threads never
 * share one.
 */
struct load_live {
    _Alignas(64) _Atomic uint64_t ops;
    _Atomic uint64_t errors;
};

struct load_cfg {
    struct endpoint ep;
    /* TCP: the source addresses connections bind before they connect (endpoint.h's struct
     * endpoint_sources), connection i the (i mod nsrc)th; NULL: the kernel picks one */
    const struct sockaddr_storage *src;
    unsigned nsrc;
    const struct codec_ops *codec;
    size_t size; /* payload bytes per request */
    enum load_mode mode;
    enum load_close close; /* connect mode only */
    enum load_retry retry; /* reuse mode: a kept connection the server closed */
    bool close_auto;       /* --close not given: when the reply says the server closes (http
                            * "Connection: close", fcgi without KEEP_CONN), wait for its FIN */
    const void *opts;      /* the protocol's struct NAME_opts; NULL = its defaults (all zero) */
    double rate;           /* > 0: open loop, this many ops/s in all; 0: closed */
    bool poisson;          /* open loop: exponential gaps (Poisson arrivals), else constant */
    uint64_t seed;         /* open loop with poisson: the arrivals' seed */
    unsigned conns;
    unsigned threads;
    unsigned pipeline;    /* requests in flight per connection, >= 1 */
    bool block_wait;      /* --wait block: a thread's one kept connection waits for its reply in a
                           * blocking recv() instead of epoll_wait() + recv() (closed loop, reuse,
                           * pipeline 1; any transport); false: always epoll */
    bool uring_wait;      /* --wait uring: kept connections send and receive through one
                           * io_uring per thread, one io_uring_enter per turn of its loop (closed
                           * loop, reuse); a thread whose ring cannot be set up uses epoll */
    uint64_t duration_ns; /* measured time after warm-up; 0 when count is set */
    uint64_t count;       /* ops to measure after warm-up; 0 when duration is set */
    uint64_t warmup_ns;
    uint64_t timeout_ns; /* connect or reply slower than this is a timeout */
    const int *cpus;     /* client threads go round-robin on these CPUs; NULL = unpinned */
    unsigned ncpus;
    const atomic_int *stop; /* set asynchronously to end the run early; may be NULL */
    /*
     * Called from load_run's own thread (not a load thread) at each point of
     * enum load_window, so outside counters cover the same window. May be NULL.
     */
    void (*on_window)(void *arg, enum load_window at);
    void *on_window_arg;
    struct load_live *live; /* threads entries, kept up to date during the run; NULL: none */
    /*
     * A load that is one part of a larger one (run --procs: each child
     * process's): the number of its first connection in the whole (0 alone;
     * connections are numbered from there, which spreads keys, seeds and
     * source addresses over the whole), and the intervals every part adds its
     * ops to (series.h), in memory they all map, whose origin the caller sets
     * by LOAD_WINDOW_OPEN's return; NULL: the load's own.
     */
    unsigned conn_base;
    struct series_run *series;
};

#endif
