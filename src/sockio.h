/*
 * sockio: bounded waits and writes on a non-blocking socket, for the short
 * request/reply exchanges outside the load engine (the agent's client, the
 * stack supervisor's readiness checks).
 */
#ifndef HOPBENCH_SOCKIO_H
#define HOPBENCH_SOCKIO_H

#include <stddef.h>
#include <stdint.h>

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

#endif
