/*
 * protofloor: the least a client can do for one request of a real protocol.
 *
 * bench/floor.c is the floor of an echo round trip; this is the same for
 * HTTP/1.1, RESP (redis), FastCGI and PostgreSQL's simple query: C kept
 * connections, P requests in flight on each (one batch, written whole), and
 * per batch nothing but the system calls it needs and the least parsing that
 * tells a reply is whole. No clock, histogram, timer or allocation per
 * request: a signal ends the run, the time is read twice. Whatever a load
 * generator does beyond this is its own cost (bench/floors.sh sets hopbench
 * and each protocol's peer beside it).
 *
 *   protofloor PROTO WAIT ENDPOINT [-c C] [-P P] [-d SECONDS] [protocol options]
 *   protofloor cpu FILE CMD [ARG...]
 *
 *   PROTO     http | redis | fcgi | pg
 *   WAIT      block: one connection, send() then a blocking recv() per batch
 *                    (2 system calls a request at -P 1);
 *             epoll: every socket in one epoll set, edge-triggered, added once;
 *                    per wake-up epoll_wait, then per ready socket one recv
 *                    (a short read has drained it) and the next batch's send;
 *             uring: one io_uring; per connection ONE multishot receive into a
 *                    ring of provided buffers, armed once for the whole run (no
 *                    poll armed per request); each batch a send SQE whose
 *                    success posts no completion (IOSQE_CQE_SKIP_SUCCESS,
 *                    MSG_WAITALL: the kernel finishes a short send); one
 *                    io_uring_enter per turn submits the sends and waits.
 *   ENDPOINT  tcp://127.0.0.1:PORT (TCP_NODELAY) or unix:PATH
 *   -c C      connections (default 1; block: 1 only)
 *   -P P      requests per batch on each connection (default 1)
 *   -d S      seconds (default 5, fractions allowed): at the end no new batch is
 *             sent, the batches in flight are read (at most 5 s more), so the
 *             requests counted are the requests the server saw
 *   http:   --path P (default /), --host H (default localhost): GET P HTTP/1.1 and
 *           Host, as hopbench run http sends; whole: the status is 2xx, the head
 *           ends, Content-Length bytes follow (chunked is refused)
 *   redis:  --command ping|set|get (default ping), --keys N (default 1),
 *           --size B (SET value, default 64): as hopbench run redis (key:0 ..
 *           key:N-1; every request prepared before the run); whole: a simple
 *           string or integer line, or a bulk string of its length; an error
 *           reply fails the run
 *   fcgi:   --path P (SCRIPT_NAME, default /bench), --docroot D (default
 *           /var/www/html): the records and parameters of hopbench run fcgi (GET,
 *           FCGI_KEEP_CONN); whole: the END_REQUEST record, REQUEST_COMPLETE, and
 *           no "Status: " other than 2xx at the start of the output
 *   pg:     --sql Q (default SELECT 1), --user U (default postgres), --database
 *           D (default U): a trust login, then one Query message per request;
 *           whole: the messages up to ReadyForQuery, none an ErrorResponse
 *
 * Prints one JSON line: proto, wait, conns, pipeline, requests (all sent, all
 * answered), seconds (the first batch written to the last reply read), ops_per_s,
 * cpu_ns_per_request (this process's user + system time over its whole life,
 * divided by the requests), rearms (uring: multishot receives the kernel ended
 * and that were armed again). An error (a malformed or failed reply, a closed
 * connection): one line on stderr, exit 1; bad usage: exit 64.
 *
 * `cpu FILE CMD...` runs CMD as its child and writes "USER_NS SYS_NS" to FILE:
 * the rusage wait4() returns for it (the kernel's own run-time count, scaled),
 * with nothing attached to the child, so every client is measured alike. Its
 * exit status is CMD's (128 + N when CMD was killed by signal N).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BENCH_PROG "protofloor"
#include "bench.h"

#define EXIT_USAGE 64
#define MAX_CONNS  4096U
#define MAX_PIPE   1024U
#define RBUF_SIZE  65536U /* a connection's bytes of replies not yet whole */
#define DRAIN_S    5      /* the batches in flight at the end must be answered within this */
#define RING_BUF   4096U  /* bytes of one provided buffer */
#define RING_BGID  1
#define TAG_RECV   0U
#define TAG_SEND   1U
#define MAX_SIZE   (1U << 20)

enum proto { P_HTTP, P_REDIS, P_FCGI, P_PG };
enum wait_kind { W_BLOCK, W_EPOLL, W_URING };

static const char *const proto_names[] = { "http", "redis", "fcgi", "pg" };
static const char *const wait_names[] = { "block", "epoll", "uring" };

union sock_addr {
    struct sockaddr sa;
    struct sockaddr_in in;
    struct sockaddr_un un;
};

struct options {
    enum proto proto;
    enum wait_kind wait;
    const char *ep;
    union sock_addr addr;
    socklen_t addr_len;
    unsigned conns;
    unsigned pipeline;
    double seconds;
    const char *path;
    const char *host;
    const char *docroot;
    const char *command;
    uint64_t keys;
    size_t size;
    const char *sql;
    const char *user;
    const char *database;
};

/* Request i is bytes[off[i] .. off[i + 1]); a batch from i is P of them back to back. */
struct requests {
    uint8_t *bytes;
    size_t *off;
    size_t distinct; /* requests that differ (redis: one per key); a batch starts below it */
};

struct fconn {
    int fd;
    unsigned due; /* replies still due for the batch in flight */
    size_t next;  /* the first request of the next batch */
    size_t have;  /* bytes of a reply not yet whole, at buf */
    bool done;    /* no batch in flight, none to come */
    uint8_t *buf; /* RBUF_SIZE */
    unsigned idx; /* in the floor's array */
};

/* How many bytes make the first whole reply at p: > 0, 0 when more must come, -1 when bad. */
typedef long frame_fn(const uint8_t *p, size_t n);

struct floor_run {
    const struct options *opt;
    frame_fn *frame;
    struct requests req;
    struct fconn *conns;
    unsigned live; /* connections not done */
    uint64_t requests;
    uint64_t replies;
    uint64_t rearms;
    struct io_uring ring;
    bool ring_on;
};

static volatile sig_atomic_t stop_flag;  /* the run's time is up: no new batch */
static volatile sig_atomic_t abort_flag; /* the drain's time is up too */

static void usage(void)
{
    fputs("usage: protofloor http|redis|fcgi|pg block|epoll|uring ENDPOINT [-c C] [-P P] [-d S]\n"
          "         [--path P] [--host H] [--docroot D] [--command ping|set|get] [--keys N]\n"
          "         [--size B] [--sql Q] [--user U] [--database D]\n"
          "       protofloor cpu FILE CMD [ARG...]\n"
          "ENDPOINT: tcp://127.0.0.1:PORT or unix:PATH\n",
          stderr);
}

/* ---- arguments ----------------------------------------------------------- */

static int parse_endpoint(const char *s, struct options *o)
{
    union sock_addr *a = &o->addr;
    uint64_t port;

    memset(a, 0, sizeof(*a));
    o->ep = s;
    if (strncmp(s, "tcp://127.0.0.1:", 16) == 0) {
        if (parse_count(s + 16, 1, 65535, &port) != 0) return fail("bad port in '%s'", s);
        a->in.sin_family = AF_INET;
        a->in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a->in.sin_port = htons((uint16_t)port);
        o->addr_len = sizeof(a->in);
        return 0;
    }
    if (strncmp(s, "unix:", 5) == 0 && s[5] != '\0' && strlen(s + 5) < sizeof(a->un.sun_path)) {
        a->un.sun_family = AF_UNIX;
        memcpy(a->un.sun_path, s + 5, strlen(s + 5) + 1);
        o->addr_len = sizeof(a->un);
        return 0;
    }
    return fail("bad endpoint '%s' (tcp://127.0.0.1:PORT or unix:PATH)", s);
}

static int parse_seconds(const char *s, double *out)
{
    char *end = NULL;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v > 0) || v > 86400)
        return fail("bad -d '%s' (seconds, 0 < S <= 86400)", s);
    *out = v;
    return 0;
}

/* One option and its value. */
static int parse_option(const char *name, const char *v, struct options *o)
{
    uint64_t n;

    if (strcmp(name, "-c") == 0) {
        if (parse_count(v, 1, MAX_CONNS, &n) != 0) return fail("bad -c '%s' (1..%u)", v, MAX_CONNS);
        o->conns = (unsigned)n;
    } else if (strcmp(name, "-P") == 0) {
        if (parse_count(v, 1, MAX_PIPE, &n) != 0) return fail("bad -P '%s' (1..%u)", v, MAX_PIPE);
        o->pipeline = (unsigned)n;
    } else if (strcmp(name, "-d") == 0) {
        return parse_seconds(v, &o->seconds);
    } else if (strcmp(name, "--keys") == 0) {
        if (parse_count(v, 1, 1000000, &n) != 0) return fail("bad --keys '%s' (1..1000000)", v);
        o->keys = n;
    } else if (strcmp(name, "--size") == 0) {
        if (parse_count(v, 0, MAX_SIZE, &n) != 0)
            return fail("bad --size '%s' (0..%u)", v, MAX_SIZE);
        o->size = (size_t)n;
    } else if (strcmp(name, "--path") == 0) {
        o->path = v;
    } else if (strcmp(name, "--host") == 0) {
        o->host = v;
    } else if (strcmp(name, "--docroot") == 0) {
        o->docroot = v;
    } else if (strcmp(name, "--command") == 0) {
        if (strcmp(v, "ping") != 0 && strcmp(v, "set") != 0 && strcmp(v, "get") != 0)
            return fail("bad --command '%s' (ping, set or get)", v);
        o->command = v;
    } else if (strcmp(name, "--sql") == 0) {
        o->sql = v;
    } else if (strcmp(name, "--user") == 0) {
        o->user = v;
    } else if (strcmp(name, "--database") == 0) {
        o->database = v;
    } else {
        return fail("unknown option '%s'", name);
    }
    return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
    int p, w;

    *o = (struct options){ .conns = 1,
                           .pipeline = 1,
                           .seconds = 5,
                           .host = "localhost",
                           .docroot = "/var/www/html",
                           .command = "ping",
                           .keys = 1,
                           .size = 64,
                           .sql = "SELECT 1",
                           .user = "postgres" };
    if (argc < 4) return fail("expected PROTO WAIT ENDPOINT");
    p = parse_name(argv[1], proto_names, 4);
    if (p < 0) return fail("bad protocol '%s' (http, redis, fcgi or pg)", argv[1]);
    w = parse_name(argv[2], wait_names, 3);
    if (w < 0) return fail("bad wait '%s' (block, epoll or uring)", argv[2]);
    o->proto = (enum proto)p;
    o->wait = (enum wait_kind)w;
    if (parse_endpoint(argv[3], o) != 0) return -1;
    for (int i = 4; i < argc; i += 2) {
        if (i + 1 >= argc) return fail("%s needs a value", argv[i]);
        if (parse_option(argv[i], argv[i + 1], o) != 0) return -1;
    }
    if (o->path == NULL) o->path = o->proto == P_FCGI ? "/bench" : "/";
    if (o->database == NULL) o->database = o->user;
    if (o->wait == W_BLOCK && o->conns != 1) return fail("block waits on one connection: -c 1");
    return 0;
}

/* ---- requests: all of them made before the run ---------------------------- */

struct wbuf {
    uint8_t *p;
    size_t len, cap;
};

static int wb_put(struct wbuf *b, const void *src, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        uint8_t *p;
        while (cap < b->len + n)
            cap *= 2;
        p = realloc(b->p, cap);
        if (p == NULL) return fail("out of memory");
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
    return 0;
}

static int wb_str(struct wbuf *b, const char *s)
{
    return wb_put(b, s, strlen(s));
}

static int wb_fmt(struct wbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int wb_fmt(struct wbuf *b, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(tmp)) return fail("internal: formatted field too long");
    return wb_put(b, tmp, (size_t)n);
}

static int http_request(const struct options *o, struct wbuf *b)
{
    return wb_str(b, "GET ") || wb_str(b, o->path) || wb_str(b, " HTTP/1.1\r\nHost: ") ||
                   wb_str(b, o->host) || wb_str(b, "\r\n\r\n")
               ? -1
               : 0;
}

/* RESP request for key k (set, get) or PING. */
static int redis_request(const struct options *o, uint64_t k, struct wbuf *b)
{
    char key[32];
    int klen = snprintf(key, sizeof(key), "key:%llu", (unsigned long long)k);

    if (strcmp(o->command, "ping") == 0) return wb_str(b, "*1\r\n$4\r\nPING\r\n");
    if (strcmp(o->command, "get") == 0)
        return wb_fmt(b, "*2\r\n$3\r\nGET\r\n$%d\r\n", klen) || wb_str(b, key) || wb_str(b, "\r\n")
                   ? -1
                   : 0;
    if (wb_fmt(b, "*3\r\n$3\r\nSET\r\n$%d\r\n", klen) || wb_str(b, key) ||
        wb_fmt(b, "\r\n$%zu\r\n", o->size))
        return -1;
    for (size_t i = 0; i < o->size; i++)
        if (wb_put(b, "x", 1)) return -1;
    return wb_str(b, "\r\n");
}

/* One FastCGI name-value pair (lengths below 128: one byte each). */
static int fcgi_pair(struct wbuf *b, const char *name, const char *value)
{
    uint8_t len[8];
    size_t nl = strlen(name), vl = strlen(value), k = 0;

    for (size_t l = nl, i = 0; i < 2; l = vl, i++) {
        if (l < 128) {
            len[k++] = (uint8_t)l;
        } else {
            len[k++] = (uint8_t)((l >> 24) | 0x80);
            len[k++] = (uint8_t)(l >> 16);
            len[k++] = (uint8_t)(l >> 8);
            len[k++] = (uint8_t)l;
        }
    }
    return wb_put(b, len, k) || wb_str(b, name) || wb_str(b, value) ? -1 : 0;
}

static int fcgi_record(struct wbuf *b, uint8_t type, const uint8_t *content, size_t n)
{
    uint8_t pad = (uint8_t)((8 - n % 8) % 8);
    uint8_t h[8] = { 1, type, 0, 1, (uint8_t)(n >> 8), (uint8_t)n, pad, 0 };
    static const uint8_t zeros[8];

    return wb_put(b, h, 8) || (n > 0 && wb_put(b, content, n)) || wb_put(b, zeros, pad) ? -1 : 0;
}

/* BEGIN_REQUEST (responder, keep the connection), PARAMS as hopbench's, empty PARAMS and STDIN. */
static int fcgi_request(const struct options *o, struct wbuf *b)
{
    static const uint8_t begin[8] = { 0, 1, 1, 0, 0, 0, 0, 0 };
    struct wbuf params = { 0 };
    char script[1024];
    const char *slash =
        o->docroot[0] != '\0' && o->docroot[strlen(o->docroot) - 1] == '/' && o->path[0] == '/'
            ? o->path + 1
            : o->path;
    int rc;

    if ((size_t)snprintf(script, sizeof(script), "%s%s", o->docroot, slash) >= sizeof(script))
        return fail("--docroot and --path too long");
    rc = fcgi_pair(&params, "SCRIPT_FILENAME", script) ||
         fcgi_pair(&params, "SCRIPT_NAME", o->path) || fcgi_pair(&params, "REQUEST_URI", o->path) ||
         fcgi_pair(&params, "REQUEST_METHOD", "GET") || fcgi_pair(&params, "QUERY_STRING", "") ||
         fcgi_pair(&params, "DOCUMENT_ROOT", o->docroot) ||
         fcgi_pair(&params, "SERVER_PROTOCOL", "HTTP/1.1") ||
         fcgi_pair(&params, "GATEWAY_INTERFACE", "CGI/1.1") ||
         fcgi_pair(&params, "REMOTE_ADDR", "127.0.0.1") ||
         fcgi_pair(&params, "SERVER_SOFTWARE", "hopbench");
    if (rc == 0 && params.len > 65535) rc = fail("FastCGI parameters too long");
    if (rc == 0)
        rc = fcgi_record(b, 1, begin, 8) || fcgi_record(b, 4, params.p, params.len) ||
                     fcgi_record(b, 4, NULL, 0) || fcgi_record(b, 5, NULL, 0)
                 ? -1
                 : 0;
    free(params.p);
    return rc;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int pg_request(const struct options *o, struct wbuf *b)
{
    uint8_t h[5] = { 'Q' };

    put_be32(h + 1, (uint32_t)(4 + strlen(o->sql) + 1));
    return wb_put(b, h, 5) || wb_put(b, o->sql, strlen(o->sql) + 1) ? -1 : 0;
}

/* Request i of the table: redis's key i % keys, the one request of the others. */
static int make_request(const struct options *o, uint64_t i, struct wbuf *b)
{
    switch (o->proto) {
    case P_HTTP:
        return http_request(o, b);
    case P_REDIS:
        return redis_request(o, i % o->keys, b);
    case P_FCGI:
        return fcgi_request(o, b);
    case P_PG:
        return pg_request(o, b);
    }
    return -1;
}

/* distinct requests, then P - 1 more so that a batch from any of them is contiguous. */
static int make_requests(const struct options *o, struct requests *r)
{
    bool keyed = o->proto == P_REDIS && strcmp(o->command, "ping") != 0;
    size_t distinct = keyed ? (size_t)o->keys : 1;
    size_t n = distinct + o->pipeline - 1;
    struct wbuf b = { 0 };

    r->off = calloc(n + 1, sizeof(*r->off));
    if (r->off == NULL) return fail("out of memory");
    for (size_t i = 0; i < n; i++) {
        r->off[i] = b.len;
        if (make_request(o, i, &b) != 0) {
            free(b.p);
            return -1;
        }
    }
    r->off[n] = b.len;
    r->bytes = b.p;
    r->distinct = distinct;
    return 0;
}

/* ---- replies: where the first whole one ends ----------------------------- */

#define HTTP_MAX_HEAD 16384

static long http_frame(const uint8_t *p, size_t n)
{
    const uint8_t *end = memmem(p, n, "\r\n\r\n", 4);
    const uint8_t *line;
    size_t head;
    long body = -1;

    if (end == NULL) return n > HTTP_MAX_HEAD ? -1 : 0;
    if (end - p < 12 || memcmp(p, "HTTP/1.", 7) != 0 || p[9] != '2') return -1;
    head = (size_t)(end - p) + 4;
    line = memchr(p, '\n', head);
    while (line != NULL && line < end) {
        line++;
        if (end - line >= 15 && strncasecmp((const char *)line, "content-length:", 15) == 0) {
            const uint8_t *d = line + 15;
            while (*d == ' ')
                d++;
            for (body = 0; *d >= '0' && *d <= '9' && body < (1L << 40); d++)
                body = body * 10 + (*d - '0');
        } else if (end - line >= 18 &&
                   strncasecmp((const char *)line, "transfer-encoding:", 18) == 0) {
            return -1;
        }
        line = memchr(line, '\n', (size_t)(end + 2 - line));
    }
    if (body < 0) return -1;
    return n >= head + (size_t)body ? (long)(head + (size_t)body) : 0;
}

static long resp_frame(const uint8_t *p, size_t n)
{
    const uint8_t *nl = memchr(p, '\n', n);
    size_t line;
    long len = 0;

    if (nl == NULL) return n > 64 ? -1 : 0;
    line = (size_t)(nl - p) + 1;
    switch (p[0]) {
    case '+':
    case ':':
        return (long)line;
    case '$':
        if (p[1] == '-') return (long)line; /* a null bulk string: $-1 */
        for (const uint8_t *d = p + 1; *d >= '0' && *d <= '9' && len < (1L << 32); d++)
            len = len * 10 + (*d - '0');
        return n >= line + (size_t)len + 2 ? (long)(line + (size_t)len + 2) : 0;
    default:
        return -1; /* an error reply, or what a SET, GET or PING never gets */
    }
}

static long fcgi_frame(const uint8_t *p, size_t n)
{
    size_t off = 0;
    bool first_out = true;

    for (;;) {
        const uint8_t *h = p + off;
        size_t clen, rec;

        if (n - off < 8) return 0;
        if (h[0] != 1) return -1;
        clen = (size_t)h[4] << 8 | h[5];
        rec = 8 + clen + h[6];
        if (n - off < rec) return 0;
        if (h[1] == 6 && clen > 0 && first_out) { /* STDOUT: a CGI status line, if any, first */
            if (clen >= 9 && memcmp(h + 8, "Status: ", 8) == 0 && h[16] != '2') return -1;
            first_out = false;
        }
        if (h[1] == 3) return clen >= 8 && h[8 + 4] == 0 ? (long)(off + rec) : -1;
        off += rec;
    }
}

static long pg_frame(const uint8_t *p, size_t n)
{
    size_t off = 0;

    for (;;) {
        uint32_t len;
        uint8_t type;

        if (n - off < 5) return 0;
        type = p[off];
        len = get_be32(p + off + 1);
        if (len < 4) return -1;
        if (n - off - 1 < len) return 0;
        if (type == 'E') return -1;
        off += 1 + len;
        if (type == 'Z') return (long)off;
    }
}

static frame_fn *const frames[] = { http_frame, resp_frame, fcgi_frame, pg_frame };

/* ---- connections ----------------------------------------------------------- */

static int send_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            return fail("send: %s", strerror(errno));
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* A blocking read of whole PostgreSQL messages, for the login. */
static int recv_some(int fd, uint8_t *buf, size_t cap, size_t *have)
{
    ssize_t r;

    do
        r = recv(fd, buf + *have, cap - *have, 0);
    while (r < 0 && errno == EINTR);
    if (r < 0) return fail("recv: %s", strerror(errno));
    if (r == 0) return fail("the server closed the connection");
    *have += (size_t)r;
    return 0;
}

/* StartupMessage; the server must answer AuthenticationOk (trust), then ReadyForQuery. */
static int pg_login(const struct options *o, struct fconn *c)
{
    struct wbuf b = { 0 };
    uint8_t head[8];
    size_t have = 0, off = 0;
    int rc;

    put_be32(head + 4, 196608); /* protocol 3.0 */
    rc = wb_put(&b, head, 8) || wb_str(&b, "user") || wb_put(&b, "", 1) || wb_str(&b, o->user) ||
                 wb_put(&b, "", 1) || wb_str(&b, "database") || wb_put(&b, "", 1) ||
                 wb_str(&b, o->database) || wb_put(&b, "", 2)
             ? -1
             : 0;
    if (rc == 0) {
        put_be32(b.p, (uint32_t)b.len);
        rc = send_all(c->fd, b.p, b.len);
    }
    free(b.p);
    while (rc == 0) {
        uint32_t len;
        if (have - off < 5 || have - off - 1 < get_be32(c->buf + off + 1)) {
            if (have == RBUF_SIZE) return fail("pg: login messages too long");
            rc = recv_some(c->fd, c->buf, RBUF_SIZE, &have);
            continue;
        }
        len = get_be32(c->buf + off + 1);
        if (c->buf[off] == 'E') return fail("pg: the server refused the login (ErrorResponse)");
        if (c->buf[off] == 'R' && (len < 8 || get_be32(c->buf + off + 5) != 0))
            return fail("pg: the server asks for a password: the floor logs in by trust only");
        off += 1 + len;
        if (c->buf[off - 1 - len] == 'Z') return off == have ? 0 : fail("pg: bytes after login");
    }
    return rc;
}

static int open_conn(const struct options *o, struct fconn *c)
{
    int one = 1;

    c->fd = socket(o->addr.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0) return fail("socket: %s", strerror(errno));
    if (connect(c->fd, &o->addr.sa, o->addr_len) != 0)
        return fail("connect %s: %s", o->ep, strerror(errno));
    if (o->addr.sa.sa_family == AF_INET &&
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
        return fail("setsockopt(TCP_NODELAY): %s", strerror(errno));
    if (o->proto == P_PG) return pg_login(o, c);
    return 0;
}

static void close_conns(struct floor_run *f)
{
    static const uint8_t terminate[5] = { 'X', 0, 0, 0, 4 };

    for (unsigned i = 0; i < f->opt->conns; i++) {
        struct fconn *c = &f->conns[i];
        if (c->fd < 0) continue;
        if (f->opt->proto == P_PG) (void)send(c->fd, terminate, 5, MSG_NOSIGNAL | MSG_DONTWAIT);
        close(c->fd);
        c->fd = -1;
    }
}

/* The batch from c->next; its bytes and the cursor after it. */
static const uint8_t *batch_of(struct floor_run *f, struct fconn *c, size_t *len)
{
    const struct requests *r = &f->req;
    size_t from = c->next;

    *len = r->off[from + f->opt->pipeline] - r->off[from];
    c->next = (from + f->opt->pipeline) % r->distinct;
    c->due = f->opt->pipeline;
    f->requests += f->opt->pipeline;
    return r->bytes + r->off[from];
}

static int ring_send(struct floor_run *f, struct fconn *c, const uint8_t *p, size_t n);

/* The batch is answered: the next goes out, or the connection is done. */
static int next_batch(struct floor_run *f, struct fconn *c)
{
    const uint8_t *p;
    size_t n;

    if (stop_flag) {
        c->done = true;
        f->live--;
        return 0;
    }
    p = batch_of(f, c, &n);
    if (f->ring_on) return ring_send(f, c, p, n);
    return send_all(c->fd, p, n);
}

/*
 * The whole replies at p (n bytes); *used: their bytes. Each completes one of
 * the batch's; the last sends the next batch. Bytes past the batch's last reply
 * are an error (nothing was asked for them).
 */
static int parse_replies(struct floor_run *f, struct fconn *c, const uint8_t *p, size_t n,
                         size_t *used)
{
    size_t off = 0;

    while (off < n) {
        long k;
        if (c->due == 0) return fail("%zu bytes the server sent unasked", n - off);
        k = f->frame(p + off, n - off);
        if (k < 0) return fail("a bad or failed %s reply", proto_names[f->opt->proto]);
        if (k == 0) break;
        off += (size_t)k;
        f->replies++;
        if (--c->due == 0 && next_batch(f, c) != 0) return -1;
    }
    *used = off;
    return 0;
}

/* n new bytes are at c->buf + c->have: parse what is whole, keep the rest at buf. */
static int consume_buf(struct floor_run *f, struct fconn *c, size_t n)
{
    size_t used = 0;

    c->have += n;
    if (parse_replies(f, c, c->buf, c->have, &used) != 0) return -1;
    c->have -= used;
    if (c->have > 0 && used > 0) memmove(c->buf, c->buf + used, c->have);
    if (c->have == RBUF_SIZE) return fail("a reply longer than %u bytes", RBUF_SIZE);
    return 0;
}

/* n bytes elsewhere (a provided buffer): parsed in place when nothing waits at buf. */
static int consume_ext(struct floor_run *f, struct fconn *c, const uint8_t *p, size_t n)
{
    size_t used = 0;

    if (c->have == 0) {
        if (parse_replies(f, c, p, n, &used) != 0) return -1;
        p += used;
        n -= used;
        if (n == 0) return 0;
    }
    if (n > RBUF_SIZE - c->have) return fail("a reply longer than %u bytes", RBUF_SIZE);
    memcpy(c->buf + c->have, p, n);
    return consume_buf(f, c, n);
}

/* ---- the waits ------------------------------------------------------------- */

/* Returns 0 to go on waiting after EINTR, -1 once the batches in flight are overdue. */
static int interrupted(void)
{
    if (abort_flag)
        return fail("the replies in flight did not come within %d s of the end", DRAIN_S);
    return 0;
}

/* One connection: send, then block in recv until the batch is answered. */
static int run_block(struct floor_run *f)
{
    struct fconn *c = &f->conns[0];

    if (next_batch(f, c) != 0) return -1;
    while (!c->done) {
        ssize_t r = recv(c->fd, c->buf + c->have, RBUF_SIZE - c->have, 0);
        if (r > 0) {
            if (consume_buf(f, c, (size_t)r) != 0) return -1;
        } else if (r == 0) {
            return fail("the server closed the connection");
        } else if (errno != EINTR) {
            return fail("recv: %s", strerror(errno));
        } else if (interrupted() != 0) {
            return -1;
        }
    }
    return 0;
}

/* A ready socket: recv until a short read (it is drained) or EAGAIN. */
static int on_readable(struct floor_run *f, struct fconn *c)
{
    for (;;) {
        size_t room = RBUF_SIZE - c->have;
        ssize_t r = recv(c->fd, c->buf + c->have, room, MSG_DONTWAIT);
        if (r > 0) {
            if (consume_buf(f, c, (size_t)r) != 0) return -1;
            if ((size_t)r < room) return 0;
        } else if (r == 0) {
            return fail("the server closed the connection");
        } else if (errno == EAGAIN) {
            return 0;
        } else if (errno != EINTR) {
            return fail("recv: %s", strerror(errno));
        }
    }
}

static int run_epoll(struct floor_run *f)
{
    unsigned n = f->opt->conns;
    struct epoll_event *evs = calloc(n, sizeof(*evs));
    int ep = epoll_create1(EPOLL_CLOEXEC);
    int rc = 0;

    if (evs == NULL || ep < 0) rc = fail("epoll set-up: %s", evs ? strerror(errno) : "no memory");
    for (unsigned i = 0; rc == 0 && i < n; i++) {
        struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.ptr = &f->conns[i] };
        if (epoll_ctl(ep, EPOLL_CTL_ADD, f->conns[i].fd, &ev) != 0)
            rc = fail("epoll_ctl: %s", strerror(errno));
    }
    for (unsigned i = 0; rc == 0 && i < n; i++)
        rc = next_batch(f, &f->conns[i]);
    while (rc == 0 && f->live > 0) {
        int k = epoll_wait(ep, evs, (int)n, -1);
        if (k < 0) {
            rc = errno == EINTR ? interrupted() : fail("epoll_wait: %s", strerror(errno));
            continue;
        }
        for (int i = 0; rc == 0 && i < k; i++)
            rc = on_readable(f, evs[i].data.ptr);
    }
    if (ep >= 0) close(ep);
    free(evs);
    return rc;
}

struct ring_bufs {
    struct io_uring_buf_ring *br;
    size_t br_bytes;
    uint8_t *mem;
    unsigned count;
    unsigned added; /* buffers given back since the last advance */
};

static struct io_uring_sqe *ring_sqe(struct floor_run *f)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&f->ring);

    if (sqe == NULL && io_uring_submit(&f->ring) >= 0) sqe = io_uring_get_sqe(&f->ring);
    if (sqe == NULL) report_error("io_uring: no submission entry free");
    return sqe;
}

/* The batch as a send that posts a completion only if it fails. */
static int ring_send(struct floor_run *f, struct fconn *c, const uint8_t *p, size_t n)
{
    struct io_uring_sqe *sqe = ring_sqe(f);

    if (sqe == NULL) return -1;
    io_uring_prep_send(sqe, c->fd, p, n, MSG_NOSIGNAL | MSG_WAITALL);
    sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
    io_uring_sqe_set_data64(sqe, (uint64_t)c->idx << 1 | TAG_SEND);
    return 0;
}

/* c's one receive for the whole run: multishot, into the provided buffers. */
static int ring_arm(struct floor_run *f, struct fconn *c)
{
    struct io_uring_sqe *sqe = ring_sqe(f);

    if (sqe == NULL) return -1;
    io_uring_prep_recv_multishot(sqe, c->fd, NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = RING_BGID;
    io_uring_sqe_set_data64(sqe, (uint64_t)c->idx << 1 | TAG_RECV);
    return 0;
}

static int ring_bufs_init(struct floor_run *f, struct ring_bufs *b)
{
    struct io_uring_buf_reg reg = { 0 };
    unsigned want = 4 * f->opt->conns + 16;
    int rc;

    b->count = 16;
    while (b->count < want && b->count < 32768)
        b->count *= 2;
    b->br_bytes = b->count * sizeof(struct io_uring_buf);
    b->br = mmap(NULL, b->br_bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    if (b->br == MAP_FAILED) {
        b->br = NULL;
        return fail("mmap: %s", strerror(errno));
    }
    b->mem = malloc((size_t)b->count * RING_BUF);
    if (b->mem == NULL) return fail("out of memory");
    reg.ring_addr = (uint64_t)(uintptr_t)b->br;
    reg.ring_entries = b->count;
    reg.bgid = RING_BGID;
    rc = io_uring_register_buf_ring(&f->ring, &reg, 0);
    if (rc < 0) return fail("io_uring_register_buf_ring: %s", strerror(-rc));
    io_uring_buf_ring_init(b->br);
    for (unsigned i = 0; i < b->count; i++)
        io_uring_buf_ring_add(b->br, b->mem + (size_t)i * RING_BUF, RING_BUF, (unsigned short)i,
                              io_uring_buf_ring_mask(b->count), (int)i);
    io_uring_buf_ring_advance(b->br, (int)b->count);
    return 0;
}

static void ring_bufs_free(struct ring_bufs *b)
{
    if (b->br != NULL) munmap(b->br, b->br_bytes);
    free(b->mem);
}

/* A receive completion: its bytes parsed, its buffer handed back, the receive re-armed if ended. */
static int ring_recv_done(struct floor_run *f, struct ring_bufs *b, struct fconn *c,
                          const struct io_uring_cqe *cqe)
{
    unsigned bid;
    int rc;

    if (cqe->res == -ENOBUFS) { /* every buffer was in use: the receive ended, arm it again */
        f->rearms++;
        return ring_arm(f, c);
    }
    if (cqe->res < 0) return fail("receive: %s", strerror(-cqe->res));
    if (cqe->res == 0) return c->done ? 0 : fail("the server closed the connection");
    if (!(cqe->flags & IORING_CQE_F_BUFFER)) return fail("a receive completion without a buffer");
    bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
    rc = consume_ext(f, c, b->mem + (size_t)bid * RING_BUF, (size_t)cqe->res);
    io_uring_buf_ring_add(b->br, b->mem + (size_t)bid * RING_BUF, RING_BUF, (unsigned short)bid,
                          io_uring_buf_ring_mask(b->count), (int)b->added++);
    if (rc == 0 && !(cqe->flags & IORING_CQE_F_MORE)) {
        f->rearms++;
        rc = ring_arm(f, c);
    }
    return rc;
}

static int ring_turn(struct floor_run *f, struct ring_bufs *b)
{
    struct io_uring_cqe *cqe;
    unsigned head, seen = 0;
    int rc = io_uring_submit_and_wait(&f->ring, 1);

    if (rc == -EINTR) return interrupted();
    if (rc < 0) return fail("io_uring_submit_and_wait: %s", strerror(-rc));
    rc = 0;
    io_uring_for_each_cqe(&f->ring, head, cqe)
    {
        uint64_t data = io_uring_cqe_get_data64(cqe);
        struct fconn *c = &f->conns[data >> 1];

        seen++;
        if (rc != 0) continue;
        if ((data & 1) == TAG_SEND)
            rc = fail("send: %s", strerror(cqe->res < 0 ? -cqe->res : EIO));
        else
            rc = ring_recv_done(f, b, c, cqe);
    }
    io_uring_cq_advance(&f->ring, seen);
    if (b->added > 0) io_uring_buf_ring_advance(b->br, (int)b->added);
    b->added = 0;
    return rc;
}

static int run_uring(struct floor_run *f)
{
    struct ring_bufs b = { 0 };
    unsigned entries = 2 * f->opt->conns + 8;
    int rc = io_uring_queue_init(entries, &f->ring,
                                 IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);

    if (rc == -EINVAL) rc = io_uring_queue_init(entries, &f->ring, 0);
    if (rc < 0) return fail("io_uring_queue_init: %s", strerror(-rc));
    f->ring_on = true;
    rc = ring_bufs_init(f, &b);
    for (unsigned i = 0; rc == 0 && i < f->opt->conns; i++)
        rc = ring_arm(f, &f->conns[i]);
    for (unsigned i = 0; rc == 0 && i < f->opt->conns; i++)
        rc = next_batch(f, &f->conns[i]);
    while (rc == 0 && f->live > 0)
        rc = ring_turn(f, &b);
    /* The multishot receives stay armed: closing the sockets and the ring ends them. */
    close_conns(f);
    io_uring_queue_exit(&f->ring);
    f->ring_on = false;
    ring_bufs_free(&b);
    return rc;
}

/* ---- the run ------------------------------------------------------------------- */

static void on_alarm(int sig)
{
    (void)sig;
    if (stop_flag) abort_flag = 1;
    stop_flag = 1;
}

/* SIGALRM after `seconds` (no SA_RESTART: a blocking wait returns EINTR). */
static int arm_alarm(double seconds)
{
    struct itimerval it = { 0 };

    it.it_value.tv_sec = (time_t)seconds;
    it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
    if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0) it.it_value.tv_usec = 1;
    /* The drain's limit follows the run's end (on_alarm then sets abort_flag). */
    it.it_interval.tv_sec = DRAIN_S;
    if (setitimer(ITIMER_REAL, &it, NULL) != 0) return fail("setitimer: %s", strerror(errno));
    return 0;
}

static int catch_alarm(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) != 0) return fail("sigaction: %s", strerror(errno));
    return 0;
}

static uint64_t cpu_ns_self(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * NS_PER_S +
           (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u;
}

static int run_floor(const struct options *o)
{
    struct floor_run f = { .opt = o, .frame = frames[o->proto] };
    uint8_t *bufs = NULL;
    uint64_t t0, t1;
    int rc = make_requests(o, &f.req);

    f.conns = calloc(o->conns, sizeof(*f.conns));
    bufs = malloc((size_t)o->conns * RBUF_SIZE);
    if (rc == 0 && (f.conns == NULL || bufs == NULL)) rc = fail("out of memory");
    for (unsigned i = 0; f.conns != NULL && i < o->conns; i++)
        f.conns[i] =
            (struct fconn){ .fd = -1,
                            .buf = bufs + (size_t)i * RBUF_SIZE,
                            .idx = i,
                            .next = (size_t)i * 7919 % (f.req.distinct ? f.req.distinct : 1) };
    for (unsigned i = 0; rc == 0 && i < o->conns; i++)
        rc = open_conn(o, &f.conns[i]);
    f.live = o->conns;
    if (rc == 0) rc = catch_alarm();
    if (rc == 0) rc = arm_alarm(o->seconds);
    t0 = clock_ns(CLOCK_MONOTONIC);
    if (rc == 0) {
        if (o->wait == W_BLOCK)
            rc = run_block(&f);
        else if (o->wait == W_EPOLL)
            rc = run_epoll(&f);
        else
            rc = run_uring(&f);
    }
    t1 = clock_ns(CLOCK_MONOTONIC);
    setitimer(ITIMER_REAL, &(struct itimerval){ 0 }, NULL);
    if (f.conns != NULL) close_conns(&f);
    if (rc == 0 && f.replies != f.requests)
        rc = fail("%llu requests, %llu replies", (unsigned long long)f.requests,
                  (unsigned long long)f.replies);
    if (rc == 0 && f.requests == 0) rc = fail("no request was answered");
    if (rc == 0) {
        double secs = (double)(t1 - t0) / 1e9;
        printf("{\"proto\":\"%s\",\"wait\":\"%s\",\"conns\":%u,\"pipeline\":%u,\"requests\":%llu,"
               "\"seconds\":%.6f,\"ops_per_s\":%.1f,\"cpu_ns_per_request\":%.1f,\"rearms\":%llu}\n",
               proto_names[o->proto], wait_names[o->wait], o->conns, o->pipeline,
               (unsigned long long)f.requests, secs, (double)f.requests / secs,
               (double)cpu_ns_self() / (double)f.requests, (unsigned long long)f.rearms);
        if (fflush(stdout) != 0) rc = fail("writing stdout: %s", strerror(errno));
    }
    free(f.conns);
    free(bufs);
    free(f.req.bytes);
    free(f.req.off);
    return rc;
}

/* ---- cpu: a child's rusage, nothing attached to it -------------------------- */

static int run_cpu(int argc, char **argv)
{
    struct rusage ru;
    int status = 0;
    pid_t pid;
    FILE *out;

    if (argc < 4) {
        usage();
        return EXIT_USAGE;
    }
    pid = fork();
    if (pid < 0) {
        report_error("fork: %s", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        execvp(argv[3], argv + 3);
        report_error("cannot run %s: %s", argv[3], strerror(errno));
        _exit(127);
    }
    signal(SIGINT, SIG_IGN); /* the child gets the terminal's signals; its status tells */
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            report_error("wait4: %s", strerror(errno));
            return 1;
        }
    }
    out = fopen(argv[2], "w");
    if (out == NULL) {
        report_error("%s: %s", argv[2], strerror(errno));
        return 1;
    }
    fprintf(out, "%llu %llu\n",
            (unsigned long long)ru.ru_utime.tv_sec * NS_PER_S +
                (unsigned long long)ru.ru_utime.tv_usec * 1000u,
            (unsigned long long)ru.ru_stime.tv_sec * NS_PER_S +
                (unsigned long long)ru.ru_stime.tv_usec * 1000u);
    if (fclose(out) != 0) {
        report_error("%s: %s", argv[2], strerror(errno));
        return 1;
    }
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
    struct options o;

    if (argc >= 2 && strcmp(argv[1], "cpu") == 0) return run_cpu(argc, argv);
    if (parse_args(argc, argv, &o) != 0) {
        usage();
        return EXIT_USAGE;
    }
    signal(SIGPIPE, SIG_IGN);
    return run_floor(&o) == 0 ? 0 : 1;
}
