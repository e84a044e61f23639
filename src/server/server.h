/*
 * server: the accept/worker frame shared by every built-in reference server.
 *
 * `threads` worker threads each run one epoll loop. Every listener is in every
 * worker's loop with EPOLLEXCLUSIVE, so one worker wakes per burst of
 * connections and accepts them all; a connection then stays on that worker.
 * Connection slots come from a per-worker free list, so a server under
 * connect-per-request load stops allocating once warm. The protocol part is a
 * `struct server_proto`: bytes in, a view of the bytes to send back out.
 *
 * SIGTERM (and SIGINT when asked) stop the server cleanly: workers finish,
 * listeners close and the socket files the server made are removed (each
 * only while its path still holds that socket: endpoint_unlink).
 */
#ifndef HOPBENCH_SERVER_SERVER_H
#define HOPBENCH_SERVER_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "endpoint.h"
#include "util.h"

#define SERVER_BUF ((size_t)16 * 1024) /* receive buffer per connection */
/*
 * Per worker: the pages that closed connections wrote past their slots' first
 * page are kept for the next connections up to this many bytes, and given back
 * to the kernel beyond it.
 */
#define SERVER_WARM_BYTES ((size_t)1024 * 1024)

struct server_cfg;

/*
 * One call's worth of a connection, as a protocol part sees it. The frame
 * zeroes `state` at accept; `obuf` (proto->out_cap bytes) belongs to this
 * connection and is not touched by the frame until the reply is sent.
 */
struct server_io {
    void *state;   /* proto->conn_size bytes, zeroed when the connection is accepted */
    uint8_t *obuf; /* where replies may be built; NULL when out_cap is 0 */
    size_t ocap;
    const uint8_t *out; /* set by process: the reply bytes to send (into obuf, in, or static) */
    size_t out_len;
    bool close;        /* set by process: close the connection once the reply is sent */
    unsigned answered; /* set by process: requests this call's reply answers */
};

struct server_proto {
    const char *name;
    size_t conn_size; /* per-connection state bytes */
    size_t in_cap;    /* receive buffer per connection; 0 = SERVER_BUF */
    size_t out_cap;   /* reply buffer per connection (io->obuf); 0 = none */
    /* Optional: state shared by all workers (a key-value store). 0 or a negative errno. */
    int (*create)(const struct server_cfg *cfg, void **shared);
    void (*destroy)(void *shared);
    /*
     * Takes the unconsumed request bytes in[0..len) and returns how many it
     * consumed; sets io->out and io->out_len to the reply for them (out_len 0:
     * nothing to send yet). io->out may point into `in` (echo): the frame
     * sends it before touching `in` again. A partial request may be left
     * unconsumed for the next call, or consumed into io->state (a long body).
     * Returns SERVER_PROTO_ERROR for a request it cannot parse: the frame
     * sends io->out, if any, and closes. len == in_cap with nothing consumed
     * is a request too large for the buffer: the frame closes.
     */
    size_t (*process)(void *shared, struct server_io *io, const uint8_t *in, size_t len);
};

#define SERVER_PROTO_ERROR SIZE_MAX

/* Each protocol's part; proto/registry.c joins each to its client codec. */
extern const struct server_proto server_echo, server_http, server_fcgi, server_redis;
extern const struct server_proto server_memcached;

struct server_cfg {
    const struct server_proto *proto;
    struct endpoint *eps; /* where to listen; TCP port 0 is replaced by the real port */
    unsigned neps;
    unsigned threads;
    int backlog;        /* listen(2) backlog; 0 = net.core.somaxconn (endpoint_default_backlog) */
    unsigned max_conns; /* connections open at once; 0 = as many as the fd limit leaves room
                         * for (server_open). One more is accepted and closed at once */
    unsigned mode;      /* permission bits of socket files */
    bool allow_remote;  /* bind non-loopback TCP addresses */
    bool reuseport;     /* TCP: SO_REUSEPORT (serve --reuseport: several servers, one port) */
    const int *cpus;    /* run the server on these CPUs; NULL = anywhere */
    unsigned ncpus;
    bool stop_on_sigint;  /* SIGINT stops it too (false: ignored, for a lab's child) */
    uint64_t close_after; /* > 0: the server closes a connection first once it has sent this
                           * many bytes on it (echo of one message: the server holds TIME_WAIT) */
    size_t body_size;     /* http, fcgi: reply body bytes; 0 = the protocol's short greeting */
    uint64_t delay_ns;    /* service time: each request's reply waits this long (the worker
                           * thread sleeps, as a busy application worker would be held) */
    uint64_t stall_every; /* > 0: after every stall_every requests (server-wide), the worker that
                           * answered the last one stalls stall_ns before replying */
    uint64_t stall_ns;
    bool block_wait; /* --wait block: a worker alone with one kept connection waits for its next
                      * request in a blocking recv() (srv_wait_next); false: always epoll */
};

struct server_stats {
    uint64_t accepted;  /* connections accepted */
    uint64_t bytes_in;  /* request bytes read */
    uint64_t bytes_out; /* reply bytes written */
    uint64_t resets;    /* connections the peer reset (ECONNRESET, EPIPE): normal when a
                         * load generator closes with a reply unread at the end of a run */
    uint64_t errors;    /* connections ended by any other error */
    uint64_t requests;  /* requests answered (echo: reads answered) */
    uint64_t bad;       /* requests the protocol part could not parse, or larger than its
                         * buffer (connection closed) */
    uint64_t over_max;  /* connections closed at accept: max_conns were open */
    uint64_t no_fds;    /* connections closed at accept: the server was out of fds */
};

struct server {
    const struct server_cfg *cfg;
    int backlog;         /* the listen(2) backlog in force */
    unsigned max_conns;  /* cfg->max_conns, or the default from the fd limit */
    uint64_t nofile;     /* the soft RLIMIT_NOFILE in force (raised to the hard limit) */
    size_t conn_bytes;   /* buffer and state bytes a connection can hold at most */
    unsigned open_conns; /* connections open, server-wide (atomic), for max_conns */
    uint64_t answered;   /* requests answered, server-wide (atomic), for stall_every */
    void *shared;        /* the protocol's shared state (proto->create), or NULL */
    int *lfds;           /* one listening fd per endpoint, -1 when closed */
    struct server_stats stats;
};

/*
 * Raises the soft RLIMIT_NOFILE to the hard limit, works out the backlog,
 * max_conns and conn_bytes (s->...), then opens every listener
 * (endpoint_listen rules: loopback only unless allowed, 0600 socket files,
 * stale sockets replaced, other files never removed). Returns 0 or a negative
 * errno with err set; nothing stays open on error.
 */
int server_open(struct server *s, const struct server_cfg *cfg, struct hb_err *err);

/*
 * Runs the workers until SIGTERM (or SIGINT if cfg->stop_on_sigint) arrives,
 * then joins them and sums their statistics into s->stats. Blocks those
 * signals in the calling thread. Returns 0 or a negative errno with err set.
 */
int server_run(struct server *s, struct hb_err *err);

/*
 * Closes the listeners; when `unlink_files`, removes the socket files too, each
 * only if its path still holds the socket bound there (endpoint_unlink).
 */
void server_close(struct server *s, bool unlink_files);

#endif
