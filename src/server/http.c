/*
 * http: the reference HTTP/1.1 server's protocol part. Every request, whatever
 * its method and target, gets "HTTP/1.1 200 OK" with a text/plain body:
 * "hello\n", or cfg->body_size bytes of http_pattern_byte (proto/http.h).
 * HEAD gets the same head without the body.
 *
 * The replies are built once, in create(). One reply per call is sent from
 * there with no copy; replies to pipelined requests are concatenated into the
 * connection's obuf while they fit, and the rest wait for the next call. A
 * request head must arrive whole within HTTP_SRV_HEAD_MAX bytes (else 431); a
 * Content-Length body is consumed as it arrives, counted in the connection
 * state, so it may be larger than the receive buffer. A request with
 * Transfer-Encoding gets 411 (only Content-Length bodies are taken), a
 * malformed one 400; both close the connection. "Connection: close", or
 * HTTP/1.0 without "Connection: keep-alive", closes it after the reply.
 */
#include "server/server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/http.h"

#define HTTP_SRV_IN_CAP     ((size_t)80 * 1024)
#define HTTP_SRV_OUT_CAP    ((size_t)64 * 1024)
#define HTTP_SRV_HEAD_MAX   ((size_t)64 * 1024) /* below in_cap: 431 before the frame gives up */
#define HTTP_SRV_FIELDS_MAX 100
#define HTTP_SRV_LENGTH_MAX ((uint64_t)1 << 50) /* request bodies: any sane size */

/* Which of the prebuilt replies: how the connection goes on after it. */
enum http_reply_kind {
    HR_KEEP = 0, /* HTTP/1.1, persistent by default: no Connection field */
    HR_KEEP10,   /* HTTP/1.0 that asked for keep-alive: "Connection: keep-alive" */
    HR_CLOSE,    /* "Connection: close", and the server closes */
    HR_KINDS,
};

/* The replies, shared by every worker and read-only once built. */
struct http_shared {
    const uint8_t *reply[HR_KINDS];
    size_t len[HR_KINDS]; /* the whole reply, body included */
    size_t body;          /* body bytes at the end of each reply (left out for HEAD) */
    uint8_t *mem;         /* what create() allocated for them, or NULL */
};

/* Per connection; zeroed by the frame at accept. */
struct http_conn {
    uint64_t body_left; /* request body bytes still to consume before replying */
    size_t scanned;     /* bytes of a partial head at in[0] known to hold no blank line */
    uint8_t pending;    /* enum http_reply_kind due once the body is in */
    bool pending_head;  /* ... for a HEAD request */
};

/* What a request head says. */
struct http_req_info {
    uint64_t length; /* Content-Length; 0 when absent */
    bool has_length;
    bool te;     /* Transfer-Encoding present */
    bool close;  /* Connection: close */
    bool keep;   /* Connection: keep-alive */
    bool http10; /* HTTP/1.0 */
    bool head;   /* method HEAD */
};

#define HELLO_HEAD "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n"

static const char hello_keep[] = HELLO_HEAD "\r\nhello\n";
static const char hello_keep10[] = HELLO_HEAD "Connection: keep-alive\r\n\r\nhello\n";
static const char hello_close[] = HELLO_HEAD "Connection: close\r\n\r\nhello\n";

/* The default replies, also used when process() gets no shared state. */
static const struct http_shared hello = {
    .reply = { (const uint8_t *)hello_keep, (const uint8_t *)hello_keep10,
               (const uint8_t *)hello_close },
    .len = { sizeof(hello_keep) - 1, sizeof(hello_keep10) - 1, sizeof(hello_close) - 1 },
    .body = 6,
};

static const char *const extra_field[HR_KINDS] = { "", "Connection: keep-alive\r\n",
                                                   "Connection: close\r\n" };

static const char bad_request[] =
    "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
static const char length_required[] =
    "HTTP/1.1 411 Length Required\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
static const char too_large[] = "HTTP/1.1 431 Request Header Fields Too Large\r\n"
                                "Content-Length: 0\r\nConnection: close\r\n\r\n";

/* ---- setup -------------------------------------------------------------- */

/* Writes reply `kind` with a body_size-byte pattern body at dst (NULL: only measures). */
static size_t build_reply(uint8_t *dst, enum http_reply_kind kind, size_t body_size)
{
    char head[256];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n%s\r\n",
                     body_size, extra_field[kind]);

    if (dst != NULL) {
        memcpy(dst, head, (size_t)n);
        for (size_t i = 0; i < body_size; i++)
            dst[(size_t)n + i] = http_pattern_byte(i);
    }
    return (size_t)n + body_size;
}

static int http_create(const struct server_cfg *cfg, void **shared)
{
    struct http_shared *s = calloc(1, sizeof(*s));
    size_t total = 0;

    if (s == NULL) return -ENOMEM;
    if (cfg->body_size == 0) {
        *s = hello;
        *shared = s;
        return 0;
    }
    /* three copies of the body, so that each reply is one contiguous send */
    if (cfg->body_size > HTTP_BODY_MAX) {
        free(s);
        return -EINVAL;
    }
    for (int k = 0; k < HR_KINDS; k++)
        total += build_reply(NULL, (enum http_reply_kind)k, cfg->body_size);
    s->mem = malloc(total);
    if (s->mem == NULL) {
        free(s);
        return -ENOMEM;
    }
    total = 0;
    for (int k = 0; k < HR_KINDS; k++) {
        s->reply[k] = s->mem + total;
        s->len[k] = build_reply(s->mem + total, (enum http_reply_kind)k, cfg->body_size);
        total += s->len[k];
    }
    s->body = cfg->body_size;
    *shared = s;
    return 0;
}

static void http_destroy(void *shared)
{
    struct http_shared *s = shared;

    if (s == NULL) return;
    free(s->mem);
    free(s);
}

/* ---- request heads ------------------------------------------------------ */

/*
 * Length of the head at in[0] (through its blank line: LF LF or LF CR LF),
 * searching in[from..len); 0 if it is not all there.
 */
static size_t find_head_end(const uint8_t *in, size_t len, size_t from)
{
    const uint8_t *p = in + from, *end = in + len, *nl;

    while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        const uint8_t *q = nl + 1;

        if (q < end && *q == '\n') return (size_t)(q + 1 - in);
        if (end - q >= 2 && q[0] == '\r' && q[1] == '\n') return (size_t)(q + 2 - in);
        p = q;
    }
    return 0;
}

static bool has_class(uint8_t c, unsigned cls)
{
    return (http_cc[c] & cls) != 0;
}

/* End of the line at p (its LF is before end); *eol is where its content ends. */
static const uint8_t *line_of(const uint8_t *p, const uint8_t *end, const uint8_t **eol)
{
    const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));

    *eol = nl > p && nl[-1] == '\r' ? nl - 1 : nl;
    return nl + 1;
}

/* "METHOD SP target SP HTTP/1.x": the line after it, or NULL if malformed. */
static const uint8_t *request_line(const uint8_t *p, const uint8_t *end, struct http_req_info *q)
{
    const uint8_t *eol, *next = line_of(p, end, &eol), *m = p;

    while (p < eol && has_class(*p, HTTP_CC_TCHAR))
        p++;
    if (p == m || p == eol || *p != ' ') return NULL;
    q->head = p - m == 4 && memcmp(m, "HEAD", 4) == 0;
    m = ++p;
    while (p<eol && * p> ' ' && *p < 0x7f)
        p++;
    if (p == m || p == eol || *p++ != ' ') return NULL;
    if (eol - p != 8 || memcmp(p, "HTTP/1.", 7) != 0 || p[7] < '0' || p[7] > '9') return NULL;
    q->http10 = p[7] == '0';
    return next;
}

static bool is_ows(uint8_t c)
{
    return c == ' ' || c == '\t';
}

/* Content-Length: 1*DIGIT, equal to any earlier one. */
static bool length_value(const uint8_t *v, const uint8_t *end, struct http_req_info *q)
{
    uint64_t n = 0;

    if (v == end) return false;
    for (; v < end; v++) {
        if (*v < '0' || *v > '9') return false;
        n = n * 10 + (uint64_t)(*v - '0');
        if (n > HTTP_SRV_LENGTH_MAX) return false;
    }
    if (q->has_length && q->length != n) return false;
    q->has_length = true;
    q->length = n;
    return true;
}

/* Connection: a comma list; only close and keep-alive mean anything here. */
static void connection_value(const uint8_t *v, const uint8_t *end, struct http_req_info *q)
{
    while (v < end) {
        const uint8_t *t, *e;

        while (v < end && (is_ows(*v) || *v == ','))
            v++;
        t = v;
        while (v < end && *v != ',')
            v++;
        for (e = v; e > t && is_ows(e[-1]); e--)
            continue;
        if (e - t == 5 && strncasecmp((const char *)t, "close", 5) == 0) q->close = true;
        if (e - t == 10 && strncasecmp((const char *)t, "keep-alive", 10) == 0) q->keep = true;
    }
}

/* One field line (obs-fold is rejected, RFC 9112 §5.2): the line after it, or NULL. */
static const uint8_t *field_line(const uint8_t *p, const uint8_t *end, struct http_req_info *q)
{
    const uint8_t *eol, *next = line_of(p, end, &eol), *name = p, *v, *ve;
    size_t name_len;

    while (p < eol && has_class(*p, HTTP_CC_TCHAR))
        p++;
    if (p == name || p == eol || *p != ':') return NULL;
    name_len = (size_t)(p - name);
    for (v = ++p; p < eol; p++)
        if (!has_class(*p, HTTP_CC_VCHAR)) return NULL;
    while (v < eol && is_ows(*v))
        v++;
    for (ve = eol; ve > v && is_ows(ve[-1]); ve--)
        continue;
    if (name_len == 14 && strncasecmp((const char *)name, "content-length", 14) == 0) {
        if (!length_value(v, ve, q)) return NULL;
    } else if (name_len == 17 && strncasecmp((const char *)name, "transfer-encoding", 17) == 0) {
        q->te = true;
    } else if (name_len == 10 && strncasecmp((const char *)name, "connection", 10) == 0) {
        connection_value(v, ve, q);
    }
    return next;
}

/* Parses a whole head in[0..n) (it ends with a blank line). 0, or the status to refuse with. */
static int parse_request(const uint8_t *p, size_t n, struct http_req_info *q)
{
    const uint8_t *end = p + n;
    unsigned fields = 0;

    memset(q, 0, sizeof(*q));
    p = request_line(p, end, q);
    if (p == NULL) return 400;
    while (*p != '\n' && !(p[0] == '\r' && p[1] == '\n')) {
        if (++fields > HTTP_SRV_FIELDS_MAX) return 431;
        p = field_line(p, end, q);
        if (p == NULL) return 400;
    }
    /* both framings at once is how requests are smuggled (RFC 9112 §6.1) */
    if (q->te) return q->has_length ? 400 : 411;
    return 0;
}

/* ---- replies ------------------------------------------------------------ */

/* Whether n more reply bytes can go out with this call's replies. */
static bool fits(const struct server_io *io, size_t n)
{
    if (io->out_len == 0) return true;
    return io->obuf != NULL && io->out_len <= io->ocap && n <= io->ocap - io->out_len;
}

/* Adds a reply (fits() said yes): the first as a view, more appended in obuf. */
static void emit(struct server_io *io, const uint8_t *r, size_t n)
{
    io->answered++;
    if (io->out_len == 0) {
        io->out = r;
        io->out_len = n;
        return;
    }
    if (io->out != io->obuf) {
        memcpy(io->obuf, io->out, io->out_len);
        io->out = io->obuf;
    }
    memcpy(io->obuf + io->out_len, r, n);
    io->out_len += n;
}

static void emit_kind(const struct http_shared *s, struct server_io *io, uint8_t kind, bool head)
{
    emit(io, s->reply[kind], s->len[kind] - (head ? s->body : 0));
    if (kind == HR_CLOSE) io->close = true;
}

/*
 * A request that gets `status` and a closed connection. With replies already
 * due in this call, 0: they go first, and the next call refuses.
 */
static size_t refuse(struct server_io *io, int status)
{
    const char *r = status == 431 ? too_large : status == 411 ? length_required : bad_request;

    if (io->answered > 0) return 0;
    io->out = (const uint8_t *)r;
    io->out_len = strlen(r);
    io->close = true;
    return SERVER_PROTO_ERROR;
}

/*
 * One request at in[0]: returns the bytes it took (head, and as much of its
 * body as is here), 0 to stop for now (partial head, obuf full), or
 * SERVER_PROTO_ERROR.
 */
static size_t one_request(const struct http_shared *s, struct server_io *io, struct http_conn *c,
                          const uint8_t *in, size_t len)
{
    size_t cap = len < HTTP_SRV_HEAD_MAX ? len : HTTP_SRV_HEAD_MAX;
    size_t from = c->scanned > 2 ? c->scanned - 2 : 0; /* a blank line may straddle */
    size_t head = find_head_end(in, cap, from < cap ? from : 0);
    struct http_req_info q;
    uint8_t kind;
    int status;

    if (head == 0) {
        if (len >= HTTP_SRV_HEAD_MAX) return refuse(io, 431);
        c->scanned = len;
        return 0;
    }
    c->scanned = 0;
    status = parse_request(in, head, &q);
    if (status != 0) return refuse(io, status);
    kind = q.close || (q.http10 && !q.keep) ? HR_CLOSE : q.http10 ? HR_KEEP10 : HR_KEEP;
    if (q.length > len - head) {
        /* the reply waits for the body, which streams through c->body_left */
        c->body_left = q.length - (len - head);
        c->pending = kind;
        c->pending_head = q.head;
        return len;
    }
    if (!fits(io, s->len[kind] - (q.head ? s->body : 0))) return 0;
    emit_kind(s, io, kind, q.head);
    return head + (size_t)q.length;
}

static size_t http_process(void *shared, struct server_io *io, const uint8_t *in, size_t len)
{
    const struct http_shared *s = shared != NULL ? shared : &hello;
    struct http_conn *c = io->state;
    size_t used = 0;

    io->out = NULL;
    io->out_len = 0;
    io->close = false;
    io->answered = 0;
    if (c->body_left > 0) {
        size_t n = c->body_left < len ? (size_t)c->body_left : len;

        used = n;
        c->body_left -= n;
        if (c->body_left > 0) return used;
        emit_kind(s, io, c->pending, c->pending_head);
    }
    while (used < len && !io->close && c->body_left == 0) {
        size_t n;

        /* empty lines before a request are ignored (RFC 9112 §2.2) */
        if (in[used] == '\r' || in[used] == '\n') {
            used++;
            continue;
        }
        n = one_request(s, io, c, in + used, len - used);
        if (n == SERVER_PROTO_ERROR) return n;
        if (n == 0) break;
        used += n;
    }
    return used;
}

const struct server_proto server_http = {
    .name = "http",
    .conn_size = sizeof(struct http_conn),
    .in_cap = HTTP_SRV_IN_CAP,
    .out_cap = HTTP_SRV_OUT_CAP,
    .create = http_create,
    .destroy = http_destroy,
    .process = http_process,
};
