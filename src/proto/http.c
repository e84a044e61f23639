/*
 * http: see http.h. The reply parser is one explicit state machine (enum
 * http_st) that every feed resumes. Bytes nobody interprets (reason phrases,
 * values of other fields, chunk extensions, bodies) are skipped in tight
 * loops over a class table; a body without --expect-body is skipped by length.
 * All positions are offsets within the reply, so caps, err_off and verdicts
 * do not depend on how the input was split.
 */
#include "proto/http.h"

#include <string.h>

const uint8_t http_cc[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    2, 3, 2, 3, 3, 3, 3, 3, 2, 2, 3, 3, 2, 3, 3, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2,
    2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 3, 2, 3, 0,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
};

enum http_st {
    ST_VERSION = 0,   /* "HTTP/1.x NNN" and the byte after it; r.pos counts them */
    ST_REASON,        /* the reason phrase, up to the line end */
    ST_STATUS_LF,     /* CR ended the status line */
    ST_LINE,          /* first byte of a field line, or of the blank line */
    ST_NAME,          /* a field name */
    ST_VALUE,         /* a field value */
    ST_LINE_LF,       /* CR ended a field line */
    ST_END_LF,        /* CR ended the blank line */
    ST_CHUNK_SIZE,    /* hex digits of a chunk-size line; r.pos counts them */
    ST_CHUNK_WS,      /* whitespace after the size */
    ST_CHUNK_EXT,     /* chunk extensions, up to the line end */
    ST_CHUNK_LF,      /* CR ended the chunk-size line */
    ST_CHUNK_DATA,    /* chunk data: r.left bytes to go */
    ST_CHUNK_CR,      /* the CRLF after chunk data */
    ST_CHUNK_DATA_LF, /* ... its LF */
    ST_LENGTH,        /* Content-Length body: r.left bytes to go */
    ST_CLOSE,         /* body read until the server closes */
};

/* The fields the parser interprets; every other one is skipped. */
enum http_field { F_OTHER = 0, F_LENGTH, F_TE, F_CONN };

enum http_flags {
    HF_CLOSE = 1u << 0,   /* Connection: close */
    HF_KEEP = 1u << 1,    /* Connection: keep-alive */
    HF_TE = 1u << 2,      /* Transfer-Encoding present */
    HF_CHUNKED = 1u << 3, /* ... and its last coding so far is chunked */
    HF_LENGTH = 1u << 4,  /* Content-Length present (r.length) */
    HF_BIG = 1u << 5,     /* ... above HTTP_BODY_MAX (first at r.big_off) */
    HF_FIELD = 1u << 6,   /* a field line was seen: a line starting with SP/HTAB is obs-fold */
    HF_TRAILER = 1u << 7, /* the fields are trailers: ignored, the blank line ends the reply */
    HF_CLOSES = 1u << 8,  /* the server closes after this reply */
    HF_CHECK = 1u << 9,   /* the body is compared with expect_body (a 2xx reply) */
};

/* What a step of the parser says; STEP_GO: a new state to dispatch on. */
enum step { STEP_MORE = 0, STEP_GO, STEP_DONE, STEP_ERR };

#define FIELD_NAME_MAX 17   /* "transfer-encoding", the longest name we look for */
#define TOK_MAX        11   /* "keep-alive" and a spare byte */
#define TOK_OTHER      0xff /* tok_len of a list element that is none of ours */

/* One reply being parsed; all zero (ST_VERSION) before its first byte. */
struct http_reply {
    uint64_t off;      /* reply bytes consumed by earlier feeds */
    uint64_t sect_off; /* start of the head, trailer section or chunk-size line (caps) */
    uint64_t left;     /* body bytes to go: Content-Length, or the current chunk */
    uint64_t body_len; /* body bytes so far, all chunks */
    uint64_t body_end; /* reply offset just past the last body byte */
    uint64_t length;   /* Content-Length */
    uint64_t num;      /* the Content-Length value being read */
    uint64_t big_off;  /* where a Content-Length first went above HTTP_BODY_MAX */
    uint16_t flags;    /* enum http_flags */
    uint16_t status;
    uint16_t nfields; /* field lines in this head or trailer section */
    uint8_t st;       /* enum http_st */
    uint8_t pos;      /* status line bytes; chunk-size digits */
    uint8_t minor;    /* HTTP/1.minor */
    uint8_t field;    /* enum http_field of the current field line */
    uint8_t vst;      /* in a value: 0 before a number or token, 1 in it, 2 after it */
    uint8_t name_len; /* saturates at FIELD_NAME_MAX + 1 */
    uint8_t tok_len;  /* or TOK_OTHER */
    char name[FIELD_NAME_MAX];
    char tok[TOK_MAX];
};

/* The request, from the configuration. */
struct http_req {
    const char *method, *path, *host;
    size_t method_len, path_len, host_len;
    size_t body;     /* body bytes */
    bool has_body;   /* a Content-Length and body are sent: every method but GET and HEAD */
    bool head;       /* HEAD: replies carry no body */
    bool keep_alive; /* no Connection field (HTTP/1.1 keeps the connection), else close */
};

struct http_state {
    struct http_req req;
    const uint8_t *expect; /* expect_body, or NULL */
    size_t expect_len;
    struct http_reply r;
};

/*
 * What a request carries besides its line: Host, Connection: close only when
 * the connection is not kept (HTTP/1.1 keeps it by default), Content-Length
 * with a body. Nothing else, so a server parses no field that changes nothing.
 */
static const char conn_close[] = "Connection: close\r\n";
static const char content_length[] = "Content-Length: ";

#define LIT_LEN(s) (sizeof(s) - 1)

/* ---- the request -------------------------------------------------------- */

static void req_of(const struct codec_cfg *cfg, struct http_req *q)
{
    const struct http_opts *o = cfg->opts;

    q->method = o != NULL && o->method != NULL ? o->method : "GET";
    q->path = o != NULL && o->path != NULL ? o->path : "/";
    q->host = o != NULL && o->host != NULL ? o->host : "localhost";
    q->method_len = strlen(q->method);
    q->path_len = strlen(q->path);
    q->host_len = strlen(q->host);
    q->head = strcmp(q->method, "HEAD") == 0;
    q->has_body = !q->head && strcmp(q->method, "GET") != 0;
    q->body = q->has_body ? cfg->size : 0;
    q->keep_alive = cfg->keep_alive;
}

static size_t dec_digits(size_t v)
{
    size_t n = 1;

    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

/* Bytes of the request; SIZE_MAX if that does not fit a size_t. */
static size_t req_len(const struct http_req *q)
{
    size_t head = q->method_len + 1 + q->path_len + LIT_LEN(" HTTP/1.1\r\nHost: ") + q->host_len +
                  2 + (q->keep_alive ? 0 : LIT_LEN(conn_close)) + 2;

    if (q->has_body) head += LIT_LEN(content_length) + dec_digits(q->body) + 2;
    return q->body > SIZE_MAX - head ? SIZE_MAX : head + q->body;
}

static size_t http_max_request(const struct codec_cfg *cfg)
{
    struct http_req q;

    req_of(cfg, &q);
    return req_len(&q);
}

static uint8_t *put(uint8_t *d, const char *s, size_t n)
{
    memcpy(d, s, n);
    return d + n;
}

static uint8_t *put_dec(uint8_t *d, size_t v)
{
    size_t n = dec_digits(v);

    for (size_t i = n; i > 0; i--) {
        d[i - 1] = (uint8_t)('0' + v % 10);
        v /= 10;
    }
    return d + n;
}

static size_t http_encode(void *st, uint8_t *dst, size_t cap)
{
    const struct http_req *q = &((const struct http_state *)st)->req;
    size_t len = req_len(q);
    uint8_t *d = dst;

    if (len == SIZE_MAX || cap < len) return 0;
    d = put(d, q->method, q->method_len);
    d = put(d, " ", 1);
    d = put(d, q->path, q->path_len);
    d = put(d, " HTTP/1.1\r\nHost: ", LIT_LEN(" HTTP/1.1\r\nHost: "));
    d = put(d, q->host, q->host_len);
    d = put(d, "\r\n", 2);
    if (!q->keep_alive) d = put(d, conn_close, LIT_LEN(conn_close));
    if (q->has_body) {
        d = put(d, content_length, LIT_LEN(content_length));
        d = put_dec(d, q->body);
        d = put(d, "\r\n", 2);
    }
    d = put(d, "\r\n", 2);
    for (size_t i = 0; i < q->body; i++)
        d[i] = http_pattern_byte(i);
    return len;
}

/* ---- reply: helpers ----------------------------------------------------- */

static void reset_reply(struct http_state *h)
{
    memset(&h->r, 0, sizeof(h->r));
}

/* Reply offset of p, a pointer into the current feed's src. */
static inline uint64_t at(const struct http_state *h, const uint8_t *src, const uint8_t *p)
{
    return h->r.off + (uint64_t)(p - src);
}

/* Where a section of at most `max` bytes from r.sect_off must stop, within [p, end]. */
static const uint8_t *limit(const struct http_state *h, const uint8_t *src, const uint8_t *p,
                            const uint8_t *end, uint64_t max)
{
    uint64_t used = at(h, src, p) - h->r.sect_off;
    uint64_t room = used < max ? max - used : 0;

    return (uint64_t)(end - p) > room ? p + room : end;
}

static enum step fail(struct codec_msg *msg, enum codec_err e, uint64_t off)
{
    msg->err = e;
    msg->err_off = (size_t)off;
    return STEP_ERR;
}

static inline uint8_t lower(uint8_t c)
{
    return c >= 'A' && c <= 'Z' ? (uint8_t)(c | 0x20) : c;
}

static inline int hex_value(uint8_t c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = lower(c);
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/*
 * The first byte in [p, lim) that is not HTTP_CC_VCHAR. Eight bytes at a time
 * while none is below 0x20 or 0x7f (bit tricks from "Bit Twiddling Hacks":
 * hasless, haszero); HTAB and the end of the run are then found bytewise.
 */
static inline const uint8_t *skip_vchars(const uint8_t *p, const uint8_t *lim)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;

    while (lim - p >= 8) {
        uint64_t w, del;

        memcpy(&w, p, 8);
        del = w ^ (0x7f * ones);
        if ((((w - 0x20 * ones) & ~w) | ((del - ones) & ~del)) & highs) break;
        p += 8;
    }
    while (p < lim && (http_cc[*p] & HTTP_CC_VCHAR))
        p++;
    return p;
}

/* A CR or LF ending a line moves to cr_state or lf_state; false for any other byte. */
static inline bool line_end(struct http_reply *r, uint8_t c, enum http_st cr_state,
                            enum http_st lf_state)
{
    if (c == '\r')
        r->st = cr_state;
    else if (c == '\n')
        r->st = lf_state;
    else
        return false;
    return true;
}

/* The reply is complete: a short body is an error, else msg says what the reply said. */
static enum step finish(const struct http_state *h, struct codec_msg *msg)
{
    const struct http_reply *r = &h->r;

    msg->status = r->status;
    if ((r->flags & HF_CHECK) && r->body_len < h->expect_len)
        return fail(msg, CODEC_ERR_BODY, r->body_end);
    msg->err = CODEC_ERR_NONE;
    msg->closes = (r->flags & HF_CLOSES) != 0;
    return STEP_DONE;
}

/*
 * Compares n body bytes at reply offset `off` with expect_body. false (msg
 * set) at the first differing byte, or the first byte past expect_body.
 */
static bool body_matches(const struct http_state *h, const uint8_t *p, size_t n, uint64_t off,
                         struct codec_msg *msg)
{
    uint64_t pos = h->r.body_len;
    size_t m = 0;

    if (pos < h->expect_len) m = n < h->expect_len - pos ? n : (size_t)(h->expect_len - pos);
    if (m > 0 && memcmp(p, h->expect + pos, m) != 0) {
        size_t i = 0;

        while (p[i] == h->expect[pos + i])
            i++;
        fail(msg, CODEC_ERR_BODY, off + i);
        return false;
    }
    if (n > m) {
        fail(msg, CODEC_ERR_BODY, off + m);
        return false;
    }
    return true;
}

/* ---- reply: head -------------------------------------------------------- */

/* One byte of "HTTP/1.x NNN" and the SP or line end after it. false: malformed. */
static bool status_byte(struct http_reply *r, uint8_t c)
{
    static const char version[] = "HTTP/1.";
    unsigned pos = r->pos++;

    if (pos < 7) return c == (uint8_t)version[pos];
    if (pos == 7) {
        r->minor = (uint8_t)(c - '0');
        return c >= '0' && c <= '9';
    }
    if (pos == 8) return c == ' ';
    if (pos < 12) {
        if (c < '0' || c > '9' || (pos == 9 && (c < '1' || c > '5'))) return false;
        r->status = (uint16_t)(r->status * 10 + (c - '0'));
        /* 101 would switch to a protocol we never asked for */
        return pos != 11 || r->status != 101;
    }
    /* RFC 9112 wants SP before an empty reason; servers omit it, so a line end is fine */
    if (c == ' ') {
        r->st = ST_REASON;
        return true;
    }
    return line_end(r, c, ST_STATUS_LF, ST_LINE);
}

/*
 * The common status line start, "HTTP/1.x NNN ", when all 13 bytes are at
 * hand: the same as 13 status_byte() calls. false (nothing changed) for
 * anything else, which status_byte() then sorts out.
 */
static bool status_fast(struct http_reply *r, const uint8_t *p)
{
    unsigned status;

    if (memcmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ' || p[12] != ' ') return false;
    if (p[7] < '0' || p[7] > '9' || p[9] < '1' || p[9] > '5') return false;
    if (p[10] < '0' || p[10] > '9' || p[11] < '0' || p[11] > '9') return false;
    status = (unsigned)(p[9] - '0') * 100 + (unsigned)(p[10] - '0') * 10 + (unsigned)(p[11] - '0');
    if (status == 101) return false;
    r->minor = (uint8_t)(p[7] - '0');
    r->status = (uint16_t)status;
    r->pos = 13;
    r->st = ST_REASON;
    return true;
}

static uint8_t field_of(const struct http_reply *r)
{
    static const struct {
        const char *name;
        uint8_t len, field;
    } known[] = {
        { "content-length", 14, F_LENGTH },
        { "transfer-encoding", 17, F_TE },
        { "connection", 10, F_CONN },
    };

    if (r->flags & HF_TRAILER) return F_OTHER;
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (r->name_len == known[i].len && memcmp(r->name, known[i].name, known[i].len) == 0)
            return known[i].field;
    return F_OTHER;
}

static bool tok_is(const struct http_reply *r, const char *s, size_t n)
{
    return r->tok_len == n && memcmp(r->tok, s, n) == 0;
}

/* A list element of Transfer-Encoding or Connection has ended. */
static void token_end(struct http_reply *r)
{
    if (r->tok_len == 0) return; /* empty elements do not count (RFC 9110 §5.6.1) */
    if (r->field == F_TE) {
        if (tok_is(r, "chunked", 7))
            r->flags |= HF_CHUNKED;
        else
            r->flags &= (uint16_t)~HF_CHUNKED;
    } else if (tok_is(r, "close", 5)) {
        r->flags |= HF_CLOSE;
    } else if (tok_is(r, "keep-alive", 10)) {
        r->flags |= HF_KEEP;
    }
    r->tok_len = 0;
    r->vst = 0;
}

/* One value byte of Content-Length (digits between optional whitespace). */
static bool length_byte(struct http_reply *r, uint8_t c, uint64_t off)
{
    if (c == ' ' || c == '\t') {
        if (r->vst == 1) r->vst = 2;
        return true;
    }
    if (c < '0' || c > '9' || r->vst == 2) return false;
    r->vst = 1;
    /* saturates just above the cap: no overflow, and the verdict waits for the framing */
    if (r->num <= HTTP_BODY_MAX) {
        r->num = r->num * 10 + (uint64_t)(c - '0');
        if (r->num > HTTP_BODY_MAX && !(r->flags & HF_BIG)) {
            r->flags |= HF_BIG;
            r->big_off = off;
        }
    }
    return true;
}

/* One value byte (HTTP_CC_VCHAR) of a field we interpret. false: malformed. */
static bool value_byte(struct http_reply *r, uint8_t c, uint64_t off)
{
    if (r->field == F_LENGTH) return length_byte(r, c, off);
    if (c == ',') {
        token_end(r);
    } else if (c == ' ' || c == '\t') {
        if (r->tok_len > 0) r->vst = 1;
    } else if ((http_cc[c] & HTTP_CC_TCHAR) && r->vst == 0 && r->tok_len < TOK_MAX) {
        r->tok[r->tok_len++] = (char)lower(c);
    } else {
        r->tok_len = TOK_OTHER; /* parameters, a second word, a long token: not ours */
    }
    return true;
}

/* The field line before this one has ended (no obs-fold follows). false: malformed. */
static bool field_end(struct http_reply *r)
{
    switch (r->field) {
    case F_LENGTH:
        if (r->vst == 0) return false;
        if ((r->flags & HF_LENGTH) && r->length != r->num) return false;
        r->flags |= HF_LENGTH;
        r->length = r->num;
        break;
    case F_TE:
    case F_CONN:
        token_end(r);
        break;
    default:
        break;
    }
    r->field = F_OTHER;
    return true;
}

/* A name and its colon have been read. */
static void value_begin(struct http_reply *r)
{
    r->field = field_of(r);
    r->flags |= HF_FIELD;
    r->vst = 0;
    r->num = 0;
    r->tok_len = 0;
    if (r->field == F_TE) r->flags |= HF_TE;
    r->st = ST_VALUE;
}

static void chunk_line_begin(struct http_reply *r, uint64_t off)
{
    r->st = ST_CHUNK_SIZE;
    r->sect_off = off;
    r->pos = 0;
    r->left = 0;
}

/* The final head has ended at reply offset `off`: choose the body framing (RFC 9112 §6.3). */
static enum step body_begin(struct http_state *h, uint64_t off, struct codec_msg *msg)
{
    struct http_reply *r = &h->r;

    if ((r->flags & HF_CLOSE) || (r->minor == 0 && !(r->flags & HF_KEEP))) r->flags |= HF_CLOSES;
    if (h->expect != NULL && r->status / 100 == 2) r->flags |= HF_CHECK;
    r->body_end = off;
    if (h->req.head || r->status == 204 || r->status == 304) return finish(h, msg);
    if ((r->flags & HF_TE) && (r->flags & HF_CHUNKED)) {
        chunk_line_begin(r, off);
        return STEP_GO;
    }
    if (!(r->flags & HF_TE) && (r->flags & HF_LENGTH)) {
        if (r->flags & HF_BIG) return fail(msg, CODEC_ERR_TOO_BIG, r->big_off);
        if (r->length == 0) return finish(h, msg);
        r->left = r->length;
        r->st = ST_LENGTH;
        return STEP_GO;
    }
    /* no length, or a transfer coding that is not chunked: the close ends the body */
    r->flags |= HF_CLOSES;
    r->st = ST_CLOSE;
    return STEP_GO;
}

/* The blank line ending a head or the trailers has been read; `off` is past it. */
static enum step head_end(struct http_state *h, uint64_t off, struct codec_msg *msg)
{
    struct http_reply *r = &h->r;

    if (r->flags & HF_TRAILER) return finish(h, msg);
    if (r->status >= 200) return body_begin(h, off, msg);
    /* a 1xx interim reply: the real one follows, within the same head cap */
    r->flags = 0;
    r->status = 0;
    r->nfields = 0;
    r->pos = 0;
    r->minor = 0;
    r->st = ST_VERSION;
    return STEP_GO;
}

/* First byte of a line after the status line. STEP_GO, or a verdict. */
static enum step line_start(struct http_state *h, uint8_t c, uint64_t off, struct codec_msg *msg)
{
    struct http_reply *r = &h->r;

    if ((c == ' ' || c == '\t') && (r->flags & HF_FIELD)) {
        /* obs-fold: the value goes on, the fold reading as a space (RFC 9112 §5.2) */
        if (r->field != F_OTHER) value_byte(r, ' ', off);
        r->st = ST_VALUE;
        return STEP_GO;
    }
    if (!field_end(r)) return fail(msg, CODEC_ERR_MISMATCH, off);
    if (c == '\r') {
        r->st = ST_END_LF;
        return STEP_GO;
    }
    if (c == '\n') return head_end(h, off + 1, msg);
    if (!(http_cc[c] & HTTP_CC_TCHAR)) return fail(msg, CODEC_ERR_MISMATCH, off);
    if (++r->nfields > HTTP_FIELDS_MAX) return fail(msg, CODEC_ERR_TOO_BIG, off);
    r->name_len = 0;
    r->st = ST_NAME;
    return STEP_GO;
}

/* Field names: the first FIELD_NAME_MAX bytes, lower-cased, are kept to match ours. */
static const uint8_t *name_bytes(struct http_reply *r, const uint8_t *p, const uint8_t *lim)
{
    const uint8_t *q = p;
    size_t n = r->name_len; /* a local: stores to name[] may alias any field */

    while (q < lim && (http_cc[*q] & HTTP_CC_TCHAR))
        q++;
    for (; p < q && n < FIELD_NAME_MAX; p++)
        r->name[n++] = (char)lower(*p);
    if (p < q) n = FIELD_NAME_MAX + 1; /* longer than any of ours */
    r->name_len = (uint8_t)n;
    return q;
}

/*
 * The status line and fields of a head (interim ones too) or the trailers,
 * at most HTTP_HEAD_MAX bytes from r.sect_off. STEP_GO when a body state
 * follows, else a verdict; *pp advances past what was parsed.
 */
static enum step parse_head(struct http_state *h, const uint8_t *src, const uint8_t **pp,
                            const uint8_t *end, struct codec_msg *msg)
{
    struct http_reply *r = &h->r;
    const uint8_t *p = *pp;
    const uint8_t *lim = limit(h, src, p, end, HTTP_HEAD_MAX);
    enum step s = STEP_GO;

    while (p < lim && r->st <= ST_END_LF && s == STEP_GO) {
        uint8_t c = *p;

        switch (r->st) {
        case ST_VERSION:
            if (r->pos == 0 && lim - p >= 13 && status_fast(r, p)) {
                p += 13;
                continue;
            }
            if (!status_byte(r, c)) s = fail(msg, CODEC_ERR_MISMATCH, at(h, src, p));
            break;
        case ST_REASON:
            p = skip_vchars(p, lim);
            if (p == lim) continue;
            if (!line_end(r, *p, ST_STATUS_LF, ST_LINE))
                s = fail(msg, CODEC_ERR_MISMATCH, at(h, src, p));
            break;
        case ST_STATUS_LF:
        case ST_LINE_LF:
            if (c == '\n')
                r->st = ST_LINE;
            else
                s = fail(msg, CODEC_ERR_MISMATCH, at(h, src, p));
            break;
        case ST_LINE:
            s = line_start(h, c, at(h, src, p), msg);
            if (r->st == ST_NAME) continue; /* the name's first byte is read there */
            break;
        case ST_NAME:
            p = name_bytes(r, p, lim);
            if (p == lim) continue;
            if (*p == ':')
                value_begin(r);
            else
                s = fail(msg, CODEC_ERR_MISMATCH, at(h, src, p));
            break;
        case ST_VALUE:
            if (r->field == F_OTHER) {
                p = skip_vchars(p, lim);
            } else {
                for (; p < lim && (http_cc[*p] & HTTP_CC_VCHAR); p++)
                    if (!value_byte(r, *p, at(h, src, p))) break;
            }
            if (p == lim) continue;
            if (!line_end(r, *p, ST_LINE_LF, ST_LINE))
                s = fail(msg, CODEC_ERR_MISMATCH, at(h, src, p));
            break;
        case ST_END_LF:
            if (c == '\n')
                s = head_end(h, at(h, src, p) + 1, msg);
            else
                s = fail(msg, CODEC_ERR_MISMATCH, at(h, src, p));
            break;
        default:
            break;
        }
        if (s != STEP_ERR) p++;
    }
    *pp = p;
    if (s != STEP_GO || r->st > ST_END_LF) return s;
    if (p < end) return fail(msg, CODEC_ERR_TOO_BIG, at(h, src, p));
    return STEP_MORE;
}

/* ---- reply: body -------------------------------------------------------- */

/* The chunk-size line has ended; `off` is past its LF. */
static enum step chunk_line_end(struct http_reply *r, uint64_t off)
{
    if (r->left > 0) {
        r->st = ST_CHUNK_DATA;
        return STEP_GO;
    }
    /* the last chunk: trailers follow, ignored, capped like a head */
    r->flags = (uint16_t)((r->flags | HF_TRAILER) & ~HF_FIELD);
    r->field = F_OTHER;
    r->nfields = 0;
    r->sect_off = off;
    r->st = ST_LINE;
    return STEP_GO;
}

/*
 * One byte of a chunk-size line outside its extensions: STEP_GO, STEP_DONE
 * (its LF), or STEP_ERR with *err set (a size above the caps is TOO_BIG).
 */
static enum step chunk_byte(struct http_reply *r, uint8_t c, enum codec_err *err)
{
    int v = hex_value(c);

    *err = CODEC_ERR_MISMATCH;
    if (r->st == ST_CHUNK_LF) return c == '\n' ? STEP_DONE : STEP_ERR;
    if (r->st == ST_CHUNK_SIZE && v >= 0) {
        *err = CODEC_ERR_TOO_BIG;
        if (++r->pos > HTTP_CHUNK_DIGITS_MAX) return STEP_ERR;
        r->left = r->left * 16 + (uint64_t)v; /* no overflow: left <= HTTP_BODY_MAX before */
        return r->left > HTTP_BODY_MAX - r->body_len ? STEP_ERR : STEP_GO;
    }
    if (r->pos == 0) return STEP_ERR; /* no digits at all */
    /* after the digits: whitespace, extensions, or the line end */
    if (c == ';')
        r->st = ST_CHUNK_EXT;
    else if (c == ' ' || c == '\t')
        r->st = ST_CHUNK_WS;
    else if (!line_end(r, c, ST_CHUNK_LF, ST_CHUNK_LF))
        return STEP_ERR;
    return c == '\n' ? STEP_DONE : STEP_GO;
}

/*
 * A chunk-size line: hex digits, optional whitespace and extensions, CRLF;
 * at most HTTP_CHUNK_LINE_MAX bytes. Returns like parse_head.
 */
static enum step chunk_line(struct http_state *h, const uint8_t *src, const uint8_t **pp,
                            const uint8_t *end, struct codec_msg *msg)
{
    struct http_reply *r = &h->r;
    const uint8_t *p = *pp;
    const uint8_t *lim = limit(h, src, p, end, HTTP_CHUNK_LINE_MAX);
    enum step s = STEP_GO; /* STEP_DONE here: the line has ended */
    enum codec_err err = CODEC_ERR_MISMATCH;

    for (; p < lim && s == STEP_GO; p++) {
        if (r->st == ST_CHUNK_EXT) {
            p = skip_vchars(p, lim);
            if (p == lim) break;
            if (!line_end(r, *p, ST_CHUNK_LF, ST_CHUNK_LF))
                s = STEP_ERR;
            else if (*p == '\n')
                s = STEP_DONE;
        } else {
            s = chunk_byte(r, *p, &err);
        }
        if (s == STEP_ERR) {
            *pp = p;
            return fail(msg, err, at(h, src, p));
        }
    }
    *pp = p;
    if (s == STEP_DONE) return chunk_line_end(r, at(h, src, p));
    if (p < end) return fail(msg, CODEC_ERR_TOO_BIG, at(h, src, p));
    return STEP_MORE;
}

/* The CRLF after chunk data (a bare LF is accepted as everywhere else). */
static enum step chunk_crlf(struct http_state *h, const uint8_t *src, const uint8_t **pp,
                            const uint8_t *end, struct codec_msg *msg)
{
    struct http_reply *r = &h->r;
    const uint8_t *p = *pp;

    if (p == end) return STEP_MORE;
    *pp = p + 1;
    if (r->st == ST_CHUNK_CR && *p == '\r') {
        r->st = ST_CHUNK_DATA_LF;
        return STEP_GO;
    }
    if (*p != '\n') {
        *pp = p;
        return fail(msg, CODEC_ERR_MISMATCH, at(h, src, p));
    }
    chunk_line_begin(r, at(h, src, p + 1));
    return STEP_GO;
}

/* Up to r.left bytes of a Content-Length body or of chunk data. */
static enum step body_bytes(struct http_state *h, const uint8_t *src, const uint8_t **pp,
                            const uint8_t *end, struct codec_msg *msg)
{
    struct http_reply *r = &h->r;
    const uint8_t *p = *pp;
    size_t avail = (size_t)(end - p);
    size_t n = r->left < avail ? (size_t)r->left : avail;

    if ((r->flags & HF_CHECK) && !body_matches(h, p, n, at(h, src, p), msg)) return STEP_ERR;
    p += n;
    *pp = p;
    r->left -= n;
    r->body_len += n;
    if (r->left > 0) return STEP_MORE;
    r->body_end = at(h, src, p);
    if (r->st == ST_LENGTH) return finish(h, msg);
    r->st = ST_CHUNK_CR;
    return STEP_GO;
}

/* A body read until the server closes: everything, up to the cap. */
static enum step body_until_close(struct http_state *h, const uint8_t *src, const uint8_t **pp,
                                  const uint8_t *end, struct codec_msg *msg)
{
    struct http_reply *r = &h->r;
    const uint8_t *p = *pp;
    size_t n = (size_t)(end - p);
    uint64_t room = HTTP_BODY_MAX - r->body_len;
    size_t ok = n < room ? n : (size_t)room;

    /* a wrong byte before the cap is reported first, however the input was split */
    if ((r->flags & HF_CHECK) && !body_matches(h, p, ok, at(h, src, p), msg)) return STEP_ERR;
    if (n > ok) return fail(msg, CODEC_ERR_TOO_BIG, at(h, src, p + ok));
    r->body_len += n;
    *pp = end;
    r->body_end = at(h, src, end);
    return STEP_MORE;
}

/* ---- the codec ops ------------------------------------------------------ */

static void http_init(void *st, const struct codec_cfg *cfg)
{
    struct http_state *h = st;
    const struct http_opts *o = cfg->opts;
    const char *expect = o != NULL ? o->expect_body : NULL;

    req_of(cfg, &h->req);
    h->expect = (const uint8_t *)expect;
    h->expect_len = expect != NULL ? strlen(expect) : 0;
    reset_reply(h);
}

static enum codec_rc http_feed(void *st, const uint8_t *src, size_t len, size_t *used,
                               struct codec_msg *msg)
{
    struct http_state *h = st;
    const uint8_t *p = src, *end = src + len;
    enum step s;

    do {
        switch (h->r.st) {
        case ST_LENGTH:
        case ST_CHUNK_DATA:
            s = body_bytes(h, src, &p, end, msg);
            break;
        case ST_CLOSE:
            s = body_until_close(h, src, &p, end, msg);
            break;
        case ST_CHUNK_SIZE:
        case ST_CHUNK_WS:
        case ST_CHUNK_EXT:
        case ST_CHUNK_LF:
            s = chunk_line(h, src, &p, end, msg);
            break;
        case ST_CHUNK_CR:
        case ST_CHUNK_DATA_LF:
            s = chunk_crlf(h, src, &p, end, msg);
            break;
        default:
            s = parse_head(h, src, &p, end, msg);
            break;
        }
    } while (s == STEP_GO);
    *used = (size_t)(p - src);
    if (s == STEP_MORE) {
        h->r.off += len;
        return CODEC_NEED_MORE;
    }
    if (s == STEP_DONE) {
        reset_reply(h);
        return CODEC_DONE;
    }
    return CODEC_ERROR;
}

static enum codec_rc http_eof(void *st, struct codec_msg *msg)
{
    struct http_state *h = st;
    enum step s;

    if (h->r.st == ST_CLOSE)
        s = finish(h, msg);
    else
        s = fail(msg, h->r.off > 0 ? CODEC_ERR_MISMATCH : CODEC_ERR_NONE, h->r.off);
    reset_reply(h);
    return s == STEP_DONE ? CODEC_DONE : CODEC_ERROR;
}

static void http_reset(void *st)
{
    reset_reply(st);
}

const struct codec_ops http_codec = {
    .name = "http",
    .state_size = sizeof(struct http_state),
    .fixed = true,
    .max_request = http_max_request,
    .init = http_init,
    .encode = http_encode,
    .feed = http_feed,
    .eof = http_eof,
    .reset = http_reset,
};
