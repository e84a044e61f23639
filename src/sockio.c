/*
 * sockio: bounded waits and writes on a non-blocking socket (see sockio.h).
 */
#include "sockio.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

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

int sock_connect(const struct endpoint *ep, uint64_t deadline_ns)
{
    bool pending = false;
    int fd = endpoint_connect(ep, &pending), rc, soerr = 0;
    socklen_t len = sizeof(soerr);

    if (fd < 0 || !pending) return fd;
    rc = sock_wait(fd, POLLOUT, deadline_ns);
    if (rc == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == -1) rc = -errno;
    if (rc == 0 && soerr != 0) rc = -soerr;
    if (rc < 0) {
        close(fd);
        return rc;
    }
    return fd;
}

ssize_t sock_recv(int fd, uint8_t *buf, size_t cap, uint64_t deadline_ns)
{
    for (;;) {
        ssize_t got = recv(fd, buf, cap, 0);
        int rc;

        if (got >= 0) return got;
        if (errno != EAGAIN && errno != EINTR) return -errno;
        rc = sock_wait(fd, POLLIN, deadline_ns);
        if (rc < 0) return rc;
    }
}

int sock_log_in(int fd, const struct codec_ops *ops, void *st, uint64_t deadline_ns,
                struct codec_msg *msg)
{
    uint8_t in[4096], *out = xcalloc(1, ops->setup_cap);
    size_t have = 0, off = 0, used = 0, olen = 0;
    enum codec_rc r = ops->setup(st, NULL, 0, &used, out, &olen, msg);
    int rc = 0;

    for (;;) {
        if (olen > 0) rc = sock_send_all(fd, out, olen, deadline_ns);
        olen = 0;
        if (rc < 0 || r == CODEC_DONE) break;
        if (r == CODEC_ERROR) {
            rc = -EPROTO;
            break;
        }
        if (off == have) {
            ssize_t got = sock_recv(fd, in, sizeof(in), deadline_ns);
            if (got <= 0) {
                rc = got == 0 ? -ECONNRESET : (int)got;
                break;
            }
            have = (size_t)got;
            off = 0;
        }
        r = ops->setup(st, in + off, have - off, &used, out, &olen, msg);
        off += used;
    }
    free(out);
    if (rc == 0 && off < have) rc = -EPROTO; /* bytes before the first request */
    return rc;
}
