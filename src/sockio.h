/*
 * sockio: bounded connects, waits, reads and writes on a non-blocking socket,
 * for the short request/reply exchanges outside the load engine (the agent's
 * client, the stack supervisor's readiness checks, run's log-in before its
 * first run), and a codec's session set-up (a database's log-in) driven over
 * one.
 */
#ifndef HOPBENCH_SOCKIO_H
#define HOPBENCH_SOCKIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "endpoint.h"
#include "proto/codec.h"

/*
 * Waits until fd is ready for events (POLLIN, POLLOUT) or deadline_ns (on
 * now_ns's clock) passes; an interrupted poll waits on. Returns 0 when ready,
 * -ETIMEDOUT, or poll's negative errno.
 */
int sock_wait(int fd, short events, uint64_t deadline_ns);

/*
 * Sends b[0 .. n) on the non-blocking socket fd by deadline_ns, with
 * MSG_NOSIGNAL (a closed peer is -EPIPE, never SIGPIPE). Returns 0,
 * -ETIMEDOUT, or send's negative errno.
 */
int sock_send_all(int fd, const uint8_t *b, size_t n, uint64_t deadline_ns);

/*
 * Connects a non-blocking socket to ep by deadline_ns. Returns the fd, or a
 * negative errno (-ECONNREFUSED, -ENOENT, -ETIMEDOUT...).
 */
int sock_connect(const struct endpoint *ep, uint64_t deadline_ns);

/* Receives up to cap bytes on fd, waiting until deadline_ns: the count (0 at EOF), or -errno. */
ssize_t sock_recv(int fd, uint8_t *buf, size_t cap, uint64_t deadline_ns);

/*
 * A codec's session set-up (a database's log-in) on a connected fd, its
 * state st initialised: the codec's messages sent, the server's fed back,
 * until the session is ready (0) or deadline_ns. Returns 0, -EPROTO when the
 * codec refused (msg says why: error_reply, err, and `why` when the client
 * refused the server's way of authenticating), or a socket's negative errno.
 */
int sock_log_in(int fd, const struct codec_ops *ops, void *st, uint64_t deadline_ns,
                struct codec_msg *msg);

#endif
