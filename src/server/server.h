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
 * listeners close and the socket files the server made are removed.
 */
#ifndef HOPBENCH_SERVER_SERVER_H
#define HOPBENCH_SERVER_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "endpoint.h"
#include "util.h"

#define SERVER_BUF ((size_t)16 * 1024) /* receive buffer per connection */

struct server_proto {
    const char *name;
    /*
     * Takes the unconsumed request bytes in[0..len) and returns how many it
     * consumed; sets *out and *out_len to the reply bytes to send for them. *out
     * may point into `in` (echo): the frame sends it before touching `in`
     * again. A partial request is left unconsumed for the next call.
     */
    size_t (*process)(const uint8_t *in, size_t len, const uint8_t **out, size_t *out_len);
};

extern const struct server_proto server_echo;

/* The built-in server called `name` ("echo"), or NULL. */
const struct server_proto *server_proto_find(const char *name);

struct server_cfg {
    const struct server_proto *proto;
    struct endpoint *eps; /* where to listen; TCP port 0 is replaced by the real port */
    unsigned neps;
    unsigned threads;
    int backlog;
    unsigned mode;     /* permission bits of socket files */
    bool allow_remote; /* bind non-loopback TCP addresses */
    const int *cpus;   /* run the server on these CPUs; NULL = anywhere */
    unsigned ncpus;
    bool stop_on_sigint;  /* SIGINT stops it too (false: ignored, for a lab's child) */
    uint64_t close_after; /* > 0: the server closes a connection first once it has sent this
                           * many bytes on it (echo of one message: the server holds TIME_WAIT) */
};

struct server_stats {
    uint64_t accepted;  /* connections accepted */
    uint64_t bytes_in;  /* request bytes read */
    uint64_t bytes_out; /* reply bytes written */
    uint64_t resets;    /* connections the peer reset (ECONNRESET, EPIPE): normal when a
                         * load generator closes with a reply unread at the end of a run */
    uint64_t errors;    /* connections ended by any other error */
};

struct server {
    const struct server_cfg *cfg;
    int *lfds; /* one listening fd per endpoint, -1 when closed */
    struct server_stats stats;
};

/*
 * Opens every listener (endpoint_listen rules: loopback only unless allowed,
 * 0600 socket files, stale sockets replaced, other files never removed).
 * Returns 0 or a negative errno with err set; nothing stays open on error.
 */
int server_open(struct server *s, const struct server_cfg *cfg, struct hb_err *err);

/*
 * Runs the workers until SIGTERM (or SIGINT if cfg->stop_on_sigint) arrives,
 * then joins them and sums their statistics into s->stats. Blocks those
 * signals in the calling thread. Returns 0 or a negative errno with err set.
 */
int server_run(struct server *s, struct hb_err *err);

/* Closes the listeners; when `unlink_files`, removes the socket files too. */
void server_close(struct server *s, bool unlink_files);

#endif
