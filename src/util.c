/*
 * util: shared helpers (see util.h).
 */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

int hb_fail(struct hb_err *err, int code, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL) return code;
    err->code = code;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return code;
}

void stop_signal_set(sigset_t *set)
{
    static const int sigs[] = { STOP_SIGNALS };

    sigemptyset(set);
    for (size_t i = 0; i < ARRAY_LEN(sigs); i++)
        sigaddset(set, sigs[i]);
}

bool fd_reader_gone(int fd)
{
    struct pollfd p = { .fd = fd, .events = POLLOUT };

    return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);

    if (p == NULL) {
        fprintf(stderr, "hopbench: out of memory (%zu x %zu bytes)\n", n, size);
        exit(1);
    }
    return p;
}

void *xmalloc(size_t size)
{
    return xcalloc(1, size);
}

int str_copy(char *dst, size_t cap, const char *src)
{
    size_t len = strlen(src);

    if (len >= cap) {
        if (cap > 0) dst[0] = '\0';
        return -ENAMETOOLONG;
    }
    memcpy(dst, src, len + 1);
    return 0;
}

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;

    if (s == NULL || *s == '\0') return -EINVAL;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') return -EINVAL;
        if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10) return -ERANGE;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (v < min || v > max) return -ERANGE;
    *out = v;
    return 0;
}

int parse_seconds(const char *s, double max_s, uint64_t *out_ns)
{
    char *end = NULL;
    double v;

    if (s == NULL || *s == '\0' || *s == '-' || *s == '+' || *s == ' ') return -EINVAL;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite(v)) return -EINVAL;
    if (v <= 0 || v > max_s) return -ERANGE;
    if (v * 1e9 < 0.5) return -ERANGE; /* below a nanosecond: would read as "unset" */
    *out_ns = (uint64_t)(v * 1e9 + 0.5);
    return 0;
}

bool sleep_until_ns(uint64_t deadline_ns, const atomic_bool *stop)
{
    for (uint64_t now = now_ns(); now < deadline_ns; now = now_ns()) {
        uint64_t next = now + 50 * NS_PER_MS < deadline_ns ? now + 50 * NS_PER_MS : deadline_ns;
        struct timespec slice = { .tv_sec = (time_t)(next / NS_PER_S),
                                  .tv_nsec = (long)(next % NS_PER_S) };
        if (stop != NULL && atomic_load(stop)) return false;
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &slice, NULL);
    }
    return stop == NULL || !atomic_load(stop);
}

int sock_block_with_timeout(int fd, uint64_t timeout_ns)
{
    struct timeval tv = { .tv_sec = (time_t)(timeout_ns / NS_PER_S),
                          .tv_usec = (suseconds_t)(timeout_ns % NS_PER_S / NS_PER_US) };
    int fl;

    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1) return -1;
    fl = fcntl(fd, F_GETFL);
    if (fl == -1 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1) return -1;
    return 0;
}
