/*
 * endpoint: strict parsing of tcp:// and unix: addresses into sockaddrs, and
 * the sockets behind them: non-blocking connect, and listen with hopbench's
 * safety rules (loopback only unless allowed, socket files get opts->mode, a
 * file that is not a stale socket is never removed). See endpoint.h.
 */
#include "endpoint.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXPECTED_FORMS                                                                             \
    "expected tcp://HOST:PORT, unix:/PATH, unix:@NAME, http://HOST:PORT/PATH or "                  \
    "http+unix://%%2FPATH/PATH"

/* Longest path or abstract name: sun_path minus the terminating (or leading) NUL. */
#define SUN_PATH_MAX 107
_Static_assert(sizeof(((struct sockaddr_un *)NULL)->sun_path) == SUN_PATH_MAX + 1,
               "unexpected sun_path size");

/* Hostile input is quoted in messages with at most QUOTE_MAX bytes, then "...". */
#define QUOTE_MAX 60
#define QUOTE_BUF (QUOTE_MAX + 4)

/* Longest host text worth handing to inet_pton (numeric IPv6 needs at most 45). */
#define HOST_BUF 64

/*
 * Copies s[0..len) into dst[QUOTE_BUF] for an error message: control bytes
 * become '?', and input longer than QUOTE_MAX is cut (not inside a UTF-8
 * sequence) and marked with "...".
 */
static const char *quote_n(char *dst, const char *s, size_t len)
{
    size_t n = len;

    if (len > QUOTE_MAX) {
        n = QUOTE_MAX;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];

        dst[i] = s[i];
        if (c < 0x20 || c == 0x7f) dst[i] = '?';
    }
    if (n < len)
        memcpy(dst + n, "...", 4);
    else
        dst[n] = '\0';
    return dst;
}

static const char *quote(char *dst, const char *s)
{
    return quote_n(dst, s, strlen(s));
}

/* Sets err from errno after a failed system call on ep; returns -errno. */
static int sys_fail(struct hb_err *err, const char *what, const struct endpoint *ep)
{
    int e = errno;

    return hb_fail(err, -e, "%s %s: %s", what, ep->text, strerror(e));
}

static const struct sockaddr_un *unix_addr(const struct endpoint *ep)
{
    return (const struct sockaddr_un *)&ep->addr;
}

static int tcp_family(const struct endpoint *ep)
{
    return ep->addr.ss_family;
}

/* Writes the canonical "tcp://HOST:PORT" or "tcp://[HOST]:PORT" into ep->text. */
static void tcp_text(struct endpoint *ep)
{
    const struct sockaddr_in *in4 = (const struct sockaddr_in *)&ep->addr;
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ep->addr;
    char host[INET6_ADDRSTRLEN] = "";

    if (tcp_family(ep) == AF_INET6) {
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
        snprintf(ep->text, sizeof(ep->text), "tcp://[%s]:%u", host, endpoint_port(ep));
    } else {
        inet_ntop(AF_INET, &in4->sin_addr, host, sizeof(host));
        snprintf(ep->text, sizeof(ep->text), "tcp://%s:%u", host, endpoint_port(ep));
    }
}

/* Parses the port text (the rest of s after ':'). */
static int parse_port(const char *s, const char *port, unsigned *out, struct hb_err *err)
{
    char qp[QUOTE_BUF], qs[QUOTE_BUF];
    uint64_t v = 0;
    int rc;

    if (*port == '\0') return hb_fail(err, -EINVAL, "missing port in '%s'", quote(qs, s));
    rc = parse_u64(port, 0, 65535, &v);
    if (rc == -ERANGE)
        return hb_fail(err, -EINVAL, "port '%s' is out of range 0..65535 in '%s'", quote(qp, port),
                       quote(qs, s));
    if (rc < 0)
        return hb_fail(err, -EINVAL, "port '%s' is not a plain decimal number in '%s'",
                       quote(qp, port), quote(qs, s));
    *out = (unsigned)v;
    return 0;
}

/* Fills the address of ep from host[0..len): an IPv6 literal if bracketed, else IPv4/localhost. */
static int set_host(struct endpoint *ep, const char *s, const char *host, size_t len,
                    bool bracketed, struct hb_err *err)
{
    struct sockaddr_in *in4 = (struct sockaddr_in *)&ep->addr;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ep->addr;
    char buf[HOST_BUF], q[QUOTE_BUF], qs[QUOTE_BUF];

    if (len == 0) return hb_fail(err, -EINVAL, "missing host in '%s'", quote(qs, s));
    if (len < sizeof(buf)) {
        memcpy(buf, host, len);
        buf[len] = '\0';
        if (bracketed && inet_pton(AF_INET6, buf, &in6->sin6_addr) == 1) {
            in6->sin6_family = AF_INET6;
            ep->addr_len = sizeof(*in6);
            return 0;
        }
        if (!bracketed && strcasecmp(buf, "localhost") == 0)
            snprintf(buf, sizeof(buf), "127.0.0.1");
        if (!bracketed && inet_pton(AF_INET, buf, &in4->sin_addr) == 1) {
            in4->sin_family = AF_INET;
            ep->addr_len = sizeof(*in4);
            return 0;
        }
    }
    quote_n(q, host, len);
    if (bracketed)
        return hb_fail(err, -EINVAL, "'%s' is not a numeric IPv6 address in '%s' (e.g. [::1])", q,
                       quote(qs, s));
    return hb_fail(err, -EINVAL,
                   "'%s' is not a numeric IP address (use 127.0.0.1, [::1] or localhost) in '%s'",
                   q, quote(qs, s));
}

/*
 * "tcp://::1:80" or "tcp://::1": if rest up to its last ':' (the likely
 * host:port reading, tried first), or else all of rest, is an IPv6 address,
 * says how to write it and returns -EINVAL; else returns 0.
 */
static int bare_ipv6(const char *rest, struct hb_err *err)
{
    const char *last = strrchr(rest, ':');
    size_t lens[2] = { last != NULL ? (size_t)(last - rest) : 0, strlen(rest) };
    char buf[HOST_BUF];
    struct in6_addr a;

    for (size_t i = 0; i < 2; i++) {
        if (lens[i] >= sizeof(buf)) continue;
        memcpy(buf, rest, lens[i]);
        buf[lens[i]] = '\0';
        if (inet_pton(AF_INET6, buf, &a) == 1)
            return hb_fail(err, -EINVAL, "'%s' is an IPv6 address: write it as tcp://[%s]:PORT",
                           buf, buf);
    }
    return 0;
}

/* rest is s after "tcp://". */
static int parse_tcp(struct endpoint *ep, const char *s, const char *rest, struct hb_err *err)
{
    const char *host = rest;
    const char *host_end;
    const char *port;
    char qs[QUOTE_BUF];
    unsigned port_num = 0;
    int rc;

    if (*rest == '[') {
        host = rest + 1;
        host_end = strchr(host, ']');
        if (host_end == NULL)
            return hb_fail(err, -EINVAL, "missing ']' after the IPv6 address in '%s'",
                           quote(qs, s));
        if (host_end[1] != ':' && host_end[1] != '\0')
            return hb_fail(err, -EINVAL, "expected ':PORT' after ']' in '%s'", quote(qs, s));
        port = host_end[1] == ':' ? host_end + 2 : host_end + 1;
    } else {
        host_end = strchr(rest, ':');
        if (host_end != NULL && strchr(host_end + 1, ':') != NULL && bare_ipv6(rest, err) < 0)
            return -EINVAL;
        if (host_end == NULL) host_end = rest + strlen(rest);
        port = *host_end == ':' ? host_end + 1 : host_end;
    }
    rc = set_host(ep, s, host, (size_t)(host_end - host), host != rest, err);
    if (rc < 0) return rc;
    rc = parse_port(s, port, &port_num, err);
    if (rc < 0) return rc;
    ep->kind = ENDPOINT_TCP;
    endpoint_set_port(ep, port_num);
    return 0;
}

/* Rejects control characters in a path or name; they would garble tables and logs. */
static int check_printable(const char *s, const char *name, const char *what, struct hb_err *err)
{
    char qs[QUOTE_BUF];

    for (const char *p = name; *p; p++) {
        unsigned char c = (unsigned char)*p;

        if (c < 0x20 || c == 0x7f)
            return hb_fail(err, -EINVAL, "control character 0x%02x in %s in '%s'", c, what,
                           quote(qs, s));
    }
    return 0;
}

/* rest is s after "unix:": "/path", "relative/path" or "@name". */
static int parse_unix(struct endpoint *ep, const char *s, const char *rest, struct hb_err *err)
{
    struct sockaddr_un *sun = (struct sockaddr_un *)&ep->addr;
    bool abstract = rest[0] == '@';
    const char *name = abstract ? rest + 1 : rest;
    const char *what = abstract ? "abstract socket name" : "unix socket path";
    size_t len = strlen(name);
    char qs[QUOTE_BUF];

    if (len == 0) return hb_fail(err, -EINVAL, "%s is empty in '%s'", what, quote(qs, s));
    if (len > SUN_PATH_MAX)
        return hb_fail(err, -EINVAL, "%s is %zu bytes, longer than the %d allowed in '%s'", what,
                       len, SUN_PATH_MAX, quote(qs, s));
    if (check_printable(s, name, what, err) < 0) return -EINVAL;
    sun->sun_family = AF_UNIX;
    if (abstract) {
        memcpy(sun->sun_path + 1, name, len); /* sun_path[0] stays '\0' */
        ep->kind = ENDPOINT_ABSTRACT;
        ep->addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len);
        snprintf(ep->text, sizeof(ep->text), "unix:@%s", name);
    } else {
        memcpy(sun->sun_path, name, len + 1);
        ep->kind = ENDPOINT_UNIX;
        ep->addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
        snprintf(ep->text, sizeof(ep->text), "unix:%s", name);
    }
    return 0;
}

/* One source address, src's next: 0 or -EINVAL with err set. */
static int source_add(struct endpoint_sources *src, const char *text, const void *addr, int family,
                      struct hb_err *err)
{
    struct sockaddr_storage *ss;

    if (src->n == ENDPOINT_MAX_SOURCES)
        return hb_fail(err, -EINVAL, "more than %d source addresses in '%s'", ENDPOINT_MAX_SOURCES,
                       text);
    ss = &src->addr[src->n++];
    memset(ss, 0, sizeof(*ss));
    ss->ss_family = (sa_family_t)family;
    if (family == AF_INET6)
        memcpy(&((struct sockaddr_in6 *)ss)->sin6_addr, addr, sizeof(struct in6_addr));
    else
        memcpy(&((struct sockaddr_in *)ss)->sin_addr, addr, sizeof(struct in_addr));
    return 0;
}

/* An IPv4 range A-B of the list text: each of its addresses into src. */
static int source_range(struct endpoint_sources *src, const char *text, const char *a,
                        const char *b, struct hb_err *err)
{
    struct in_addr lo, hi;
    char qs[QUOTE_BUF];

    if (inet_pton(AF_INET, a, &lo) != 1 || inet_pton(AF_INET, b, &hi) != 1 ||
        ntohl(lo.s_addr) > ntohl(hi.s_addr))
        return hb_fail(err, -EINVAL,
                       "'%s-%s' is not a range of IPv4 addresses, low to high (e.g. "
                       "127.0.0.2-127.0.0.9)",
                       quote(qs, a), b);
    for (uint32_t v = ntohl(lo.s_addr);; v++) {
        struct in_addr one = { .s_addr = htonl(v) };
        if (source_add(src, text, &one, AF_INET, err) < 0) return -EINVAL;
        if (v == ntohl(hi.s_addr)) return 0;
    }
}

int endpoint_sources_parse(struct endpoint_sources *src, const char *s, struct hb_err *err)
{
    char buf[1024], qs[QUOTE_BUF];
    char *save = NULL, *item;

    src->n = 0;
    if (s == NULL || *s == '\0' || strlen(s) >= sizeof(buf))
        return hb_fail(err, -EINVAL, "'%s' is not a list of source addresses",
                       quote(qs, s ? s : ""));
    snprintf(buf, sizeof(buf), "%s", s);
    for (item = strtok_r(buf, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
        char *dash = strchr(item, '-');
        struct in6_addr a6;
        struct in_addr a4;

        if (dash != NULL) {
            *dash = '\0';
            if (source_range(src, s, item, dash + 1, err) < 0) return -EINVAL;
        } else if (inet_pton(AF_INET, item, &a4) == 1) {
            if (source_add(src, s, &a4, AF_INET, err) < 0) return -EINVAL;
        } else if (inet_pton(AF_INET6, item, &a6) == 1) {
            if (source_add(src, s, &a6, AF_INET6, err) < 0) return -EINVAL;
        } else {
            return hb_fail(err, -EINVAL,
                           "'%s' is not a numeric IPv4 or IPv6 address or an IPv4 range A-B",
                           quote(qs, item));
        }
    }
    if (src->n == 0) return hb_fail(err, -EINVAL, "'%s' names no source address", quote(qs, s));
    return 0;
}

bool endpoint_sources_local(const struct endpoint_sources *src)
{
    for (unsigned i = 0; i < src->n; i++) {
        const struct sockaddr_storage *ss = &src->addr[i];
        const struct sockaddr_in *in4 = (const struct sockaddr_in *)ss;
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

        if (ss->ss_family == AF_INET ? (ntohl(in4->sin_addr.s_addr) >> 24) != 127
                                     : !IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
            return false;
    }
    return true;
}

/* The IPv4 address of ss in host order, or 0 for another family. */
static uint32_t source_v4(const struct sockaddr_storage *ss)
{
    return ss->ss_family == AF_INET ? ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) : 0;
}

const char *endpoint_sources_text(const struct sockaddr_storage *src, unsigned n, char *buf,
                                  size_t cap)
{
    char a[INET6_ADDRSTRLEN];
    bool range = n > 2;
    size_t off = 0;

    for (unsigned i = 1; i < n && range; i++)
        range = source_v4(&src[i - 1]) != 0 && source_v4(&src[i]) == source_v4(&src[i - 1]) + 1;
    buf[0] = '\0';
    for (unsigned i = 0; i < n && off < cap; i++) {
        const struct sockaddr_storage *ss = &src[i];
        const void *addr = ss->ss_family == AF_INET6
                               ? (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr
                               : (const void *)&((const struct sockaddr_in *)ss)->sin_addr;

        if (range && i > 0 && i + 1 < n) continue; /* A-B: the ends only */
        inet_ntop(ss->ss_family, addr, a, sizeof(a));
        off += (size_t)snprintf(buf + off, cap - off, "%s%s", i == 0 ? "" : range ? "-" : ",", a);
    }
    return buf;
}

/* Longest HOST:PORT of an http:// URL (a bracketed IPv6 address and a port fit). */
#define URL_HOST_MAX 80

/*
 * rest is s after "http://": HOST[:PORT][/PATH] is tcp://HOST:PORT (port 80
 * when none), *path where /PATH begins ("" when there is none).
 */
static int parse_http(struct endpoint *ep, const char *s, const char *rest, const char **path,
                      struct hb_err *err)
{
    size_t n = strcspn(rest, "/?#");
    char hostport[URL_HOST_MAX + 4], qs[QUOTE_BUF];
    bool has_port;

    if (rest[n] == '?' || rest[n] == '#')
        return hb_fail(err, -EINVAL, "expected /PATH after the address in '%s'", quote(qs, s));
    if (n > URL_HOST_MAX)
        return hb_fail(err, -EINVAL, "the address is too long in '%s'", quote(qs, s));
    memcpy(hostport, rest, n);
    hostport[n] = '\0';
    has_port = rest[0] == '[' ? strstr(hostport, "]:") != NULL : strchr(hostport, ':') != NULL;
    if (!has_port) memcpy(hostport + n, ":80", 4);
    *path = rest + n;
    return parse_tcp(ep, s, hostport, err);
}

/* A hex digit's value, or -1. */
static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/*
 * rest is s after "http+unix://": the socket's path percent-encoded
 * ("%2Frun%2Fphp.sock", "%40name" for an abstract name), then [/PATH].
 */
static int parse_http_unix(struct endpoint *ep, const char *s, const char *rest, const char **path,
                           struct hb_err *err)
{
    size_t n = strcspn(rest, "/?#"), len = 0;
    char name[SUN_PATH_MAX + 2], qs[QUOTE_BUF];

    if (rest[n] == '?' || rest[n] == '#')
        return hb_fail(err, -EINVAL, "expected /PATH after the socket in '%s'", quote(qs, s));
    for (size_t i = 0; i < n; i++) {
        int hi = rest[i] == '%' && i + 2 < n ? hex_value(rest[i + 1]) : -1;
        int lo = rest[i] == '%' && i + 2 < n ? hex_value(rest[i + 2]) : -1;

        if (len > SUN_PATH_MAX)
            return hb_fail(err, -EINVAL, "the socket's path is longer than the %d allowed in '%s'",
                           SUN_PATH_MAX, quote(qs, s));
        if (rest[i] != '%') {
            name[len++] = rest[i];
            continue;
        }
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) /* not two hex digits, or a NUL */
            return hb_fail(err, -EINVAL, "a bad %%XX escape in the socket's path in '%s'",
                           quote(qs, s));
        name[len++] = (char)(hi * 16 + lo);
        i += 2;
    }
    name[len] = '\0';
    if (len == 0) return hb_fail(err, -EINVAL, "no socket path in '%s'", quote(qs, s));
    *path = rest + n;
    return parse_unix(ep, s, name, err);
}

int endpoint_parse_url(struct endpoint *ep, const char *s, const char **path, struct hb_err *err)
{
    char qs[QUOTE_BUF];
    int rc;

    memset(ep, 0, sizeof(*ep));
    *path = NULL;
    if (s == NULL || *s == '\0')
        return hb_fail(err, -EINVAL, "empty endpoint (" EXPECTED_FORMS ")");
    if (strncmp(s, "tcp://", 6) == 0)
        rc = parse_tcp(ep, s, s + 6, err);
    else if (strncmp(s, "unix:///", 8) == 0) /* unix:///run/x.sock: the path /run/x.sock */
        rc = parse_unix(ep, s, s + 7, err);
    else if (strncmp(s, "unix:", 5) == 0)
        rc = parse_unix(ep, s, s + 5, err);
    else if (strncmp(s, "http://", 7) == 0)
        rc = parse_http(ep, s, s + 7, path, err);
    else if (strncmp(s, "http+unix://", 12) == 0)
        rc = parse_http_unix(ep, s, s + 12, path, err);
    else if (strncmp(s, "https://", 8) == 0)
        rc = hb_fail(err, -EINVAL, "'%s': hopbench speaks no TLS (http:// or a socket)",
                     quote(qs, s));
    else
        rc = hb_fail(err, -EINVAL, "unknown scheme in '%s' (" EXPECTED_FORMS ")", quote(qs, s));
    if (rc < 0) {
        memset(ep, 0, sizeof(*ep));
        *path = NULL;
    }
    return rc;
}

int endpoint_parse(struct endpoint *ep, const char *s, struct hb_err *err)
{
    const char *path = NULL;
    char qs[QUOTE_BUF];
    int rc = endpoint_parse_url(ep, s, &path, err);

    if (rc == 0 && path != NULL && path[0] != '\0' && strcmp(path, "/") != 0) {
        memset(ep, 0, sizeof(*ep));
        return hb_fail(err, -EINVAL,
                       "'%s': a path is for run's requests; give the address alone here",
                       quote(qs, s));
    }
    return rc;
}

const char *endpoint_name(const struct endpoint *ep)
{
    return ep->label[0] != '\0' ? ep->label : ep->text;
}

const char *endpoint_transport(const struct endpoint *ep)
{
    return ep->kind == ENDPOINT_TCP ? "tcp" : "unix";
}

bool endpoint_is_local(const struct endpoint *ep)
{
    const struct sockaddr_in *in4 = (const struct sockaddr_in *)&ep->addr;
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ep->addr;

    if (ep->kind != ENDPOINT_TCP) return true;
    if (tcp_family(ep) == AF_INET) return (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
    if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) return true;
    return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127;
}

unsigned endpoint_port(const struct endpoint *ep)
{
    const struct sockaddr_in *in4 = (const struct sockaddr_in *)&ep->addr;
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ep->addr;

    if (ep->kind != ENDPOINT_TCP) return 0;
    if (tcp_family(ep) == AF_INET6) return ntohs(in6->sin6_port);
    return ntohs(in4->sin_port);
}

void endpoint_set_port(struct endpoint *ep, unsigned port)
{
    struct sockaddr_in *in4 = (struct sockaddr_in *)&ep->addr;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ep->addr;

    if (ep->kind != ENDPOINT_TCP) return;
    if (tcp_family(ep) == AF_INET6)
        in6->sin6_port = htons((uint16_t)port);
    else
        in4->sin_port = htons((uint16_t)port);
    tcp_text(ep);
}

/* A non-blocking, close-on-exec stream socket for ep; TCP_NODELAY on TCP. Returns fd or -errno. */
static int open_socket(const struct endpoint *ep)
{
    int one = 1;
    int fd = socket(ep->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int e;

    if (fd == -1) return -errno;
    if (ep->kind == ENDPOINT_TCP &&
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == -1) {
        e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

/*
 * Binds fd to src, port 0, the port left to connect (IP_BIND_ADDRESS_NO_PORT):
 * 0 or a negative errno.
 */
static int bind_source(int fd, const struct endpoint *ep, const struct sockaddr_storage *src)
{
    int one = 1;
    socklen_t len =
        src->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);

    if (src->ss_family != tcp_family(ep)) return -EAFNOSUPPORT;
    if (setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one)) == -1 ||
        bind(fd, (const struct sockaddr *)src, len) == -1)
        return -errno;
    return 0;
}

int endpoint_connect(const struct endpoint *ep, bool *in_progress)
{
    return endpoint_connect_from(ep, NULL, in_progress);
}

int endpoint_connect_from(const struct endpoint *ep, const struct sockaddr_storage *src,
                          bool *in_progress)
{
    bool retried = false;
    int fd = open_socket(ep);
    int e;

    if (fd < 0) return fd;
    *in_progress = false;
    if (src != NULL && ep->kind == ENDPOINT_TCP && (e = bind_source(fd, ep, src)) < 0) {
        close(fd);
        return e;
    }
    while (connect(fd, (const struct sockaddr *)&ep->addr, ep->addr_len) == -1) {
        e = errno;
        if (e == EINTR) {
            retried = true;
            continue;
        }
        if (e == EINPROGRESS || (retried && e == EALREADY)) {
            *in_progress = true;
            return fd;
        }
        if (retried && e == EISCONN) return fd;
        close(fd);
        return -e;
    }
    return fd;
}

/*
 * TCP options of a listener: SO_REUSEADDR (and SO_REUSEPORT when asked); TCP_NODELAY, which
 * accepted sockets inherit (so a server needs no setsockopt per connection); and IPV6_V6ONLY so
 * [::] does not take IPv4 too.
 */
static int tcp_listen_options(int fd, const struct endpoint *ep, bool reuseport, struct hb_err *err)
{
    int one = 1;

    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1)
        return sys_fail(err, "cannot set SO_REUSEADDR on", ep);
    if (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) == -1)
        return sys_fail(err, "cannot set SO_REUSEPORT on", ep);
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == -1)
        return sys_fail(err, "cannot set TCP_NODELAY on", ep);
    if (tcp_family(ep) == AF_INET6 &&
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) == -1)
        return sys_fail(err, "cannot set IPV6_V6ONLY on", ep);
    return 0;
}

static int bind_endpoint(int fd, const struct endpoint *ep, struct hb_err *err)
{
    if (bind(fd, (const struct sockaddr *)&ep->addr, ep->addr_len) == 0) return 0;
    if (errno == EADDRINUSE)
        return hb_fail(err, -EADDRINUSE,
                       "%s is already in use (is another server listening on it?)", ep->text);
    return sys_fail(err, "cannot bind", ep);
}

int endpoint_default_backlog(void)
{
    FILE *f = fopen("/proc/sys/net/core/somaxconn", "re");
    int n = 0;

    if (f != NULL) {
        if (fscanf(f, "%d", &n) != 1) n = 0;
        fclose(f);
    }
    return n > 0 ? n : SOMAXCONN;
}

static int backlog_of(const struct listen_opts *opts)
{
    return opts->backlog > 0 ? opts->backlog : endpoint_default_backlog();
}

/* After binding port 0: reads back the port the kernel chose into ep. */
static int fetch_port(int fd, struct endpoint *ep, struct hb_err *err)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);

    memset(&ss, 0, sizeof(ss));
    if (getsockname(fd, (struct sockaddr *)&ss, &len) == -1)
        return sys_fail(err, "cannot read the port bound for", ep);
    if (ss.ss_family == AF_INET6)
        endpoint_set_port(ep, ntohs(((const struct sockaddr_in6 *)&ss)->sin6_port));
    else
        endpoint_set_port(ep, ntohs(((const struct sockaddr_in *)&ss)->sin_port));
    return 0;
}

static int listen_tcp(struct endpoint *ep, const struct listen_opts *opts, struct hb_err *err)
{
    int fd;
    int rc;

    if (!opts->allow_remote && !endpoint_is_local(ep))
        return hb_fail(err, -EPERM,
                       "refusing to listen on non-loopback %s: pass --allow-remote to expose it",
                       ep->text);
    fd = open_socket(ep);
    if (fd < 0)
        return hb_fail(err, fd, "cannot create a socket for %s: %s", ep->text, strerror(-fd));
    rc = tcp_listen_options(fd, ep, opts->reuseport, err);
    if (rc < 0) goto fail;
    rc = bind_endpoint(fd, ep, err);
    if (rc < 0) goto fail;
    if (listen(fd, backlog_of(opts)) == -1) {
        rc = sys_fail(err, "cannot listen on", ep);
        goto fail;
    }
    if (endpoint_port(ep) == 0) {
        rc = fetch_port(fd, ep, err);
        if (rc < 0) goto fail;
    }
    return fd;
fail:
    close(fd);
    return rc;
}

/* Is anyone listening on the socket file? 0 yes (or backlog full), else -errno of the probe. */
static int probe_listener(const struct endpoint *ep)
{
    int fd = open_socket(ep);
    int rc = 0;

    if (fd < 0) return fd;
    while (connect(fd, (const struct sockaddr *)&ep->addr, ep->addr_len) == -1) {
        if (errno == EINTR) continue;
        rc = errno == EAGAIN ? 0 : -errno; /* EAGAIN: a live listener with a full backlog */
        break;
    }
    close(fd);
    return rc;
}

/* Makes the path of ep free to bind: absent, or a stale socket that is removed. */
static int clear_stale_socket(const struct endpoint *ep, struct hb_err *err)
{
    const char *path = unix_addr(ep)->sun_path;
    struct stat st;
    int rc;

    if (lstat(path, &st) == -1) return errno == ENOENT ? 0 : sys_fail(err, "cannot stat", ep);
    if (!S_ISSOCK(st.st_mode))
        return hb_fail(err, -EEXIST, "%s exists and is not a socket; not removing it", path);
    rc = probe_listener(ep);
    if (rc == 0) return hb_fail(err, -EADDRINUSE, "another server is listening on %s", ep->text);
    if (rc != -ECONNREFUSED)
        return hb_fail(err, rc, "cannot tell whether %s is stale (%s); not removing it", path,
                       strerror(-rc));
    if (unlink(path) == -1 && errno != ENOENT)
        return sys_fail(err, "cannot remove stale socket", ep);
    return 0;
}

/*
 * Binds a socket file created with opts->mode: the umask is narrowed around
 * bind (process-wide: listeners are set up before worker threads start).
 * Records the file's device and inode in ep, so that endpoint_unlink removes
 * this file and no other.
 */
static int bind_socket_file(int fd, struct endpoint *ep, unsigned mode, struct hb_err *err)
{
    const char *path = unix_addr(ep)->sun_path;
    mode_t old = umask((mode_t)(~mode & 0777));
    int rc = bind_endpoint(fd, ep, err);
    struct stat st;

    umask(old);
    ep->file_dev = 0;
    ep->file_ino = 0;
    if (rc < 0) return rc;
    if (lstat(path, &st) == -1 || !S_ISSOCK(st.st_mode)) {
        /* removed or replaced between bind and lstat: nothing of ours to record or remove */
        return hb_fail(err, -EEXIST, "%s was removed or replaced right after bind", path);
    }
    ep->file_dev = st.st_dev;
    ep->file_ino = st.st_ino;
    if (chmod(path, (mode_t)(mode & 0777)) == -1) {
        rc = sys_fail(err, "cannot set the mode of", ep);
        endpoint_unlink(ep);
    }
    return rc;
}

/* Unix path or abstract name. */
static int listen_unix(struct endpoint *ep, const struct listen_opts *opts, struct hb_err *err)
{
    int fd;
    int rc;

    if (ep->kind == ENDPOINT_UNIX) {
        rc = clear_stale_socket(ep, err);
        if (rc < 0) return rc;
    }
    fd = open_socket(ep);
    if (fd < 0)
        return hb_fail(err, fd, "cannot create a socket for %s: %s", ep->text, strerror(-fd));
    if (ep->kind == ENDPOINT_UNIX)
        rc = bind_socket_file(fd, ep, opts->mode, err);
    else
        rc = bind_endpoint(fd, ep, err);
    if (rc < 0) goto fail;
    if (listen(fd, backlog_of(opts)) == -1) {
        rc = sys_fail(err, "cannot listen on", ep);
        endpoint_unlink(ep);
        goto fail;
    }
    return fd;
fail:
    close(fd);
    return rc;
}

int endpoint_listen(struct endpoint *ep, const struct listen_opts *opts, struct hb_err *err)
{
    switch (ep->kind) {
    case ENDPOINT_TCP:
        return listen_tcp(ep, opts, err);
    case ENDPOINT_UNIX:
    case ENDPOINT_ABSTRACT:
        return listen_unix(ep, opts, err);
    }
    return hb_fail(err, -EINVAL, "endpoint_listen: endpoint was not parsed");
}

bool endpoint_unlink(const struct endpoint *ep)
{
    const char *path = unix_addr(ep)->sun_path;
    struct stat st;

    if (ep->kind != ENDPOINT_UNIX) return true;
    if (lstat(path, &st) == -1) return errno == ENOENT;
    /* (the file could still be swapped between lstat and unlink: no syscall closes that gap) */
    if (ep->file_ino == 0 || !S_ISSOCK(st.st_mode) || st.st_dev != ep->file_dev ||
        st.st_ino != ep->file_ino)
        return false;
    return unlink(path) == 0 || errno == ENOENT;
}

int endpoint_probe(const struct endpoint *ep, int timeout_ms)
{
    bool in_progress = false;
    int fd = endpoint_connect(ep, &in_progress);
    int rc = 0;

    if (fd < 0) return fd;
    if (in_progress) {
        struct pollfd pfd = { .fd = fd, .events = POLLOUT };
        int soerr = 0;
        socklen_t len = sizeof(soerr);
        int n = poll(&pfd, 1, timeout_ms);

        if (n == 0)
            rc = -ETIMEDOUT;
        else if (n == -1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == -1)
            rc = -errno;
        else
            rc = -soerr;
    }
    /* Leave no TIME_WAIT behind: it would show up in the run's socket counts. */
    if (rc == 0 && ep->kind == ENDPOINT_TCP) {
        struct linger rst = { .l_onoff = 1, .l_linger = 0 };
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &rst, sizeof(rst));
    }
    close(fd);
    return rc;
}
