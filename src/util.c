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
#include <sys/wait.h>

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

void wait_status_text(char *buf, size_t cap, int status)
{
    if (WIFEXITED(status)) {
        snprintf(buf, cap, "exited with status %d", WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
        const char *name = sigabbrev_np(WTERMSIG(status));
        if (name != NULL)
            snprintf(buf, cap, "was killed by SIG%s%s", name,
                     WCOREDUMP(status) ? " (core dumped)" : "");
        else
            snprintf(buf, cap, "was killed by signal %d", WTERMSIG(status));
    } else {
        snprintf(buf, cap, "ended (wait status %d)", status);
    }
}

void bytes_format(char *buf, size_t cap, uint64_t bytes)
{
    double b = (double)bytes;

    if (b >= 1024.0 * 1024 * 1024)
        snprintf(buf, cap, "%.1f GiB", b / (1024.0 * 1024 * 1024));
    else if (b >= 1024.0 * 1024)
        snprintf(buf, cap, "%.1f MiB", b / (1024.0 * 1024));
    else
        snprintf(buf, cap, "%.0f KiB", b / 1024.0);
}

void size_text(char *buf, size_t cap, long long size)
{
    const long long mib = 1LL << 20;

    if (size > 0 && size % mib == 0)
        snprintf(buf, cap, "%lld MiB", size / mib);
    else if (size > 0 && size % 1024 == 0)
        snprintf(buf, cap, "%lld KiB", size / 1024);
    else
        snprintf(buf, cap, "%lld B", size);
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

int opt_uint(const char *opt, const char *val, uint64_t min, uint64_t max, uint64_t *out,
             struct hb_err *err)
{
    int rc = parse_u64(val, min, max, out);

    if (rc < 0)
        return hb_fail(err, -EINVAL, "%s: '%s' is not a whole number in %llu..%llu", opt, val,
                       (unsigned long long)min, (unsigned long long)max);
    return 0;
}

int parse_duration(const char *s, double max_s, uint64_t *out_ns)
{
    static const struct {
        const char *unit;
        double s;
    } units[] = { { "", 1 },      { "s", 1 },  { "ms", 1e-3 }, { "us", 1e-6 }, { "µs", 1e-6 },
                  { "ns", 1e-9 }, { "m", 60 }, { "min", 60 },  { "h", 3600 } };
    char *end = NULL;
    double v;

    if (s == NULL || *s == '\0' || *s == '-' || *s == '+' || *s == ' ') return -EINVAL;
    errno = 0;
    v = strtod(s, &end);
    /* a plain decimal (an exponent allowed): no hex, inf or nan */
    if (errno != 0 || end == s || strspn(s, "0123456789.eE+-") < (size_t)(end - s) || !isfinite(v))
        return -EINVAL;
    for (size_t i = 0; i < ARRAY_LEN(units); i++) {
        if (strcmp(end, units[i].unit) != 0) continue;
        v *= units[i].s;
        if (v <= 0 || v > max_s) return -ERANGE;
        if (v * 1e9 < 0.5) return -ERANGE; /* below a nanosecond: would read as "unset" */
        *out_ns = (uint64_t)(v * 1e9 + 0.5);
        return 0;
    }
    return -EINVAL;
}

bool sleep_until_ns(uint64_t deadline_ns, const atomic_int *stop)
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

/*
 * How many bytes of valid UTF-8 start at s (avail bytes there) that is not a
 * C1 control; 0 if none does.
 */
static size_t utf8_len(const unsigned char *s, size_t avail)
{
    size_t n = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : 2;
    unsigned char lo = 0x80, hi = 0xBF; /* the second byte's range: no overlong, no surrogate */

    if (s[0] < 0xC2 || s[0] > 0xF4 || n > avail) return 0;
    if (s[0] == 0xC2) lo = 0xA0; /* U+0080..U+009F are the C1 controls */
    if (s[0] == 0xE0) lo = 0xA0;
    if (s[0] == 0xED) hi = 0x9F;
    if (s[0] == 0xF0) lo = 0x90;
    if (s[0] == 0xF4) hi = 0x8F;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return n;
}

/* The escape of byte c, or NULL when it prints as itself. */
static const char *byte_escape(unsigned char c, char tmp[5])
{
    switch (c) {
    case '\n':
        return "\\n";
    case '\r':
        return "\\r";
    case '\t':
        return "\\t";
    case '\\':
        return "\\\\";
    default:
        break;
    }
    if (c >= 0x20 && c < 0x7F) return NULL;
    snprintf(tmp, 5, "\\x%02x", c);
    return tmp;
}

/*
 * What *p (avail bytes there) prints as: *piece (tmp when escaped) of *plen
 * bytes; returns the bytes of p it takes.
 */
static size_t safe_piece(const unsigned char *p, size_t avail, char tmp[5], const char **piece,
                         size_t *plen)
{
    size_t n = *p >= 0x80 ? utf8_len(p, avail) : 0;
    const char *esc = n == 0 ? byte_escape(*p, tmp) : NULL;

    *piece = esc != NULL ? esc : (const char *)p;
    *plen = esc != NULL ? strlen(esc) : n > 0 ? n : 1;
    return n > 0 ? n : 1;
}

const char *text_safe(char *buf, size_t cap, const char *s)
{
    return text_safe_n(buf, cap, s, strlen(s));
}

const char *text_safe_n(char *buf, size_t cap, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    size_t need = 0, len = 0, plen;
    const char *piece;
    char tmp[5];

    while (p < end) {
        p += safe_piece(p, (size_t)(end - p), tmp, &piece, &plen);
        need += plen;
    }
    for (p = (const unsigned char *)s; p < end;) {
        size_t step = safe_piece(p, (size_t)(end - p), tmp, &piece, &plen);
        /* when the whole does not fit, room is kept for "..." and the NUL */
        if (need >= cap && len + plen + 3 >= cap) {
            memcpy(buf + len, "...", 4);
            return buf;
        }
        memcpy(buf + len, piece, plen);
        len += plen;
        p += step;
    }
    buf[len] = '\0';
    return buf;
}

int text_columns(const char *s)
{
    int w = 0;

    for (; *s != '\0'; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

void text_number(char *buf, size_t cap, double v, int decimals)
{
    char raw[64];
    const char *digits = raw;
    size_t whole, out = 0;
    int n;

    if (cap == 0) return;
    n = isfinite(v) ? snprintf(raw, sizeof(raw), "%.*f", decimals, v) : -1;
    if (n < 0 || (size_t)n >= sizeof(raw)) {
        snprintf(buf, cap, "n/a");
        return;
    }
    if (raw[0] == '-') {
        if (strspn(raw + 1, "0.") < strlen(raw + 1) && out + 1 < cap) buf[out++] = '-'; /* no -0 */
        digits++;
    }
    whole = strcspn(digits, ".");
    for (size_t i = 0; digits[i] != '\0' && out + 1 < cap; i++) {
        if (i > 0 && i < whole && (whole - i) % 3 == 0) {
            buf[out++] = ',';
            if (out + 1 >= cap) break;
        }
        buf[out++] = digits[i];
    }
    buf[out] = '\0';
}

void text_ratio(char *buf, size_t cap, double r, int decimals)
{
    if (!isfinite(r))
        snprintf(buf, cap, "n/a");
    else
        snprintf(buf, cap, "%.*f×", decimals, r);
}

void put_columns(FILE *f, int width, const char *s)
{
    int pad = (width < 0 ? -width : width) - text_columns(s);

    if (width > 0)
        for (; pad > 0; pad--)
            fputc(' ', f);
    fputs(s, f);
    if (width < 0)
        for (; pad > 0; pad--)
            fputc(' ', f);
}
