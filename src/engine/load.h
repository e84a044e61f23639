/*
 * load: the load engine. `threads` threads each run one epoll loop over their
 * share of `conns` connections, closed loop: each connection sends its next
 * request (or pipelined batch) as soon as the previous reply is complete.
 *
 * Open loop (cfg->rate > 0): each connection sends on its own schedule of
 * intended times (constant gaps, or Poisson), rate / conns ops/s each; a
 * request that cannot go yet (the previous reply is not in) waits, never
 * dropped, and its latency counts from its intended time.
 *
 * Measurement: an op's latency goes into its thread's histogram; histograms,
 * counters and per-thread CPU time are merged when the threads end. Ops that
 * start during the warm-up are done but not recorded. Nothing allocates once
 * the threads run. A run ends at its deadline, after `count` ops, or when
 * *stop is set (Ctrl-C); what was measured until then is kept. A closed
 * loop's ops still in flight at the deadline are dropped. An open loop drains
 * instead: every op intended before the deadline is sent and its reply
 * awaited, none intended after it; what is unanswered `timeout` after the
 * deadline is counted as a timeout (its latency from its intended time is
 * then above the timeout), so a stall at the window's end is measured, not
 * cut off.
 */
#ifndef HOPBENCH_LOAD_H
#define HOPBENCH_LOAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "endpoint.h"
#include "engine/loadcfg.h"
#include "engine/operr.h"
#include "engine/series.h"
#include "hist.h"
#include "proto/codec.h"
#include "util.h"

struct load_result {
    uint64_t ops;                  /* ops completed and checked inside the measured window */
    uint64_t errors[OP_ERR_KINDS]; /* failed ops, warm-up included */
    uint64_t connects;             /* successful connects inside the window */
    uint64_t requests;             /* requests written, warm-up included (servers count these) */
    uint64_t replies;              /* complete replies parsed, warm-up included */
    uint64_t replies_kind[CODEC_KINDS]; /* the replies by the kind of request they answered
                                         * (codec_ops.kind_names; [0] for a codec without) */
    uint64_t reconnects;                /* a kept connection the server closed, reopened (warm-up
                                         * included); not an error */
    uint64_t retried;              /* requests sent again on a reopened connection (--retry once;
                                    * warm-up included); not errors */
    uint64_t connect_retries;      /* AF_UNIX connects tried again after EAGAIN, a full backlog
                                    * (warm-up included); not errors */
    uint64_t status[6];            /* replies by status class: [1]..[5] = 1xx..5xx, [0] other;
                                    * only for protocols with a status (http, fcgi) */
    uint64_t stderr_replies;       /* fcgi replies that carried FCGI_STDERR output */
    uint64_t window_ns;            /* length of the measured window; open loop: the time the ops
                                    * intended inside it took, the drain included */
    uint64_t drain_ns;             /* open loop: the part of window_ns after the intended window
                                    * (the deadline), spent on ops intended before it; else 0 */
    uint64_t client_cpu_ns;        /* CPU time of the load threads inside the window */
    uint64_t window_start_unix_ns; /* when the window began (the first thread's), wall clock */
    bool interrupted;              /* *stop, or a thread's failed wait (wait_err), ended the run
                                    * early */
    unsigned ring_threads;         /* --wait uring: the threads that waited on their ring */
    unsigned ring_ms_threads;      /* --wait uring: those of them whose kept connections each
                                    * received through one multishot recv (the others armed a
                                    * recv per reply: no multishot receive in this kernel) */
    uint64_t ring_arms;            /* --wait uring: receives armed in the rings, warm-up too */
    int ring_err;                  /* --wait uring: why a thread could not set its ring up (an
                                    * errno; it used epoll), or 0 */
    int wait_err;                  /* a thread's wait failed with this errno, ending it (the run
                                    * is interrupted and fails), or 0 */
    struct op_bad bad;             /* the first bad reply of the threads', t_ns 0: none */
    uint64_t open_start;           /* connections open (connected) when the window began */
    uint64_t open_end;             /* and when it ended, before any was closed */
    struct hist *lat;              /* merged op latency (ns); owned, freed by load_result_release */
    struct hist *phase[PHASES];    /* merged phase latencies (ns); owned likewise */
    /*
     * Open loop: `lat` runs from each op's intended send time (corrected for
     * coordinated omission); `service` from its actual send. NULL when closed.
     */
    struct hist *service;
    /* Ops and p99 per interval of the window, from every thread (series.h); owned likewise.
     * With load_cfg.series given, only its interval_ns and end_ns: the slots are the caller's. */
    struct series_result series;
};

/* What one load thread measured of the window. */
struct load_thread_window {
    uint64_t window_ns;  /* the window's start to the thread's end: the deadline at the latest
                          * in a closed loop; at the earliest in an open loop (unless stopped),
                          * which drains after it; 0 when the thread never reached the window */
    uint64_t drain_ns;   /* open loop: how long after the deadline the thread ended; else 0 */
    uint64_t cpu_ns;     /* the thread's CPU time inside the window */
    bool interrupted;    /* *stop, or its failed wait, ended the thread's loop */
    int ring_err;        /* --wait uring: the errno io_uring_queue_init failed with, or 0 */
    int wait_err;        /* the errno the loop's wait failed with (it ended: interrupted), or 0 */
    unsigned open_start; /* its connections open when its window began */
    unsigned open_end;   /* and when its loop ended */
};

struct conn_ctx; /* conn.h: one thread's connections and what they counted */

/*
 * Adds one load thread's tally to res, as load_run does for each thread once
 * they have all ended: every counter and error kind is summed, so is the CPU
 * time; the window is the longest of the threads' (they share its start), so
 * is the drain, and
 * res is interrupted if any thread was. ctx's histograms are added to res's
 * (which must be allocated: lat and phase[], service when ctx has one and res
 * too). Pure: no clock, no thread, nothing allocated.
 */
void load_result_add(struct load_result *res, const struct conn_ctx *ctx,
                     const struct load_thread_window *win);

/* Total of result->errors. */
uint64_t load_errors_total(const struct load_result *r);

/* A run counts only if it saw no error and completed at least one op. */
bool load_result_valid(const struct load_result *r);

/*
 * The memory a load_run of cfg allocates, in bytes, as worker_setup lays it
 * out: per thread its request copies (fixed codecs: size × pipeline), codec
 * state, histograms and receive buffer (16 to 64 KiB, which its connections
 * share; with --wait uring each connection has its own: a receive in flight
 * each); per connection its request buffer (codecs that are not fixed: size
 * × pipeline; codecs with a session set-up: at least the set-up's own), codec
 * state and struct conn; the run's interval slots (series.h); the
 * result's histograms, and those of `kept` more
 * results held meanwhile (the records of earlier runs). SIZE_MAX when it
 * does not fit a size_t. Pure: cfg's codec is asked only for max_request.
 */
size_t load_mem_need(const struct load_cfg *cfg, size_t kept);

/* The memory the histograms of one load_result of cfg take (kept until it is released). */
size_t load_result_mem(const struct load_cfg *cfg);

/*
 * --wait uring: whether this process can set up an io_uring (a ring of two
 * entries, made and closed). Returns 0 or the negative errno (ENOSYS, EPERM
 * under a seccomp profile or kernel.io_uring_disabled) that makes the load
 * threads wait with epoll instead.
 */
int load_ring_probe(void);

/* The fds a load_run of cfg holds at once: one socket per connection, one epoll per thread. */
unsigned long long load_fd_need(const struct load_cfg *cfg);

/*
 * An empty result of cfg's load: zero counters, empty histograms (a service
 * one for an open loop), no series. Exits on OOM, as xmalloc.
 */
void load_result_init(struct load_result *res, const struct load_cfg *cfg);

/*
 * Runs one load. Fills res (caller-owned; release with load_result_release).
 * Returns 0, or a negative errno with err set when the run could not start
 * (threads, memory). Failed ops are counted in res, never returned here.
 */
int load_run(const struct load_cfg *cfg, struct load_result *res, struct hb_err *err);

/*
 * The closed-loop maximum of cfg's load (--rate N%): a closed-loop run of
 * duration_ns after cfg's warm-up, with no outside counters. 0, or a negative
 * errno with err set (also when that run saw errors or completed no op).
 */
int load_max_rate(const struct load_cfg *cfg, uint64_t duration_ns, double *ops_per_s,
                  struct hb_err *err);

/* Frees the histograms res owns; res can then be reused by load_run. */
void load_result_release(struct load_result *res);

#endif
