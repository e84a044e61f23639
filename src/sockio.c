/*
 * sockio: bounded waits and writes on a non-blocking socket (see sockio.h).
 */
#include "sockio.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include "util.h"

int sock_wait(int fd, short events, uint64_t deadline_ns)
{
    for (;;) {
        struct pollfd p = { .fd = fd, .events = events };
        uint64_t now = now_ns();
        int n;

        if (now >= deadline_ns) return -ETIMEDOUT;
        n = poll(&p, 1, (int)((deadline_ns - now) / NS_PER_MS) + 1);
        if (n == -1 && errno == EINTR) continue;
        if (n == -1) return -errno;
        if (n == 1) return 0;
    }
}

int sock_send_all(int fd, const uint8_t *b, size_t n, uint64_t deadline_ns)
{
    size_t at = 0;

    while (at < n) {
        ssize_t k = send(fd, b + at, n - at, MSG_NOSIGNAL);
        int rc;

        if (k >= 0) {
            at += (size_t)k;
            continue;
        }
        if (errno != EAGAIN && errno != EINTR) return -errno;
        rc = sock_wait(fd, POLLOUT, deadline_ns);
        if (rc < 0) return rc;
    }
    return 0;
}
