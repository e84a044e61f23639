/*
 * fcgi: see fcgi.h. encode() writes records straight into the caller's
 * buffer; the length is computed first (fcgi_request_len), so a request never
 * comes out half-written. feed() is a byte-exact state machine over record
 * headers, content and padding; STDOUT content goes through a CGI header-line
 * matcher and then a body comparison, neither of which keeps the bytes.
 */
#include "proto/fcgi.h"

#include <assert.h>
#include <string.h>

/* What the request is made of, taken from the codec_cfg at init. */
struct fcgi_req {
    const struct fcgi_opts *opts;
    size_t size; /* POST body bytes */
    bool keep_alive;
};

enum fcgi_phase { FCGI_PH_HEADER = 0, FCGI_PH_CONTENT, FCGI_PH_PADDING };

/* Where a CGI header line stands in matching "Status: NNN". */
enum fcgi_status_st {
    FCGI_ST_NAME = 0, /* the line may still be "Status:" */
    FCGI_ST_SPACE,    /* after "Status:", before the code */
    FCGI_ST_DIGITS,   /* inside the code */
    FCGI_ST_REST,     /* any other header, or past the code: skipped to '\n' */
};

/* One reply in progress; zero is the state before its first byte. */
struct fcgi_reply {
    size_t off;       /* reply bytes consumed so far */
    size_t rec_start; /* offset of the current record's first byte */
    enum fcgi_phase phase;
    uint8_t hdr[FCGI_HEADER_LEN];
    unsigned hdr_have;
    size_t content_left;
    unsigned pad_left;
    uint8_t end[8]; /* END_REQUEST body */
    unsigned end_have;
    bool finished; /* END_REQUEST read; its padding may remain */
    /* STDOUT as a CGI response */
    bool in_body;
    size_t cgi_header_bytes;
    size_t line_len;
    bool line_cr; /* the line began with '\r' */
    enum fcgi_status_st st;
    unsigned code, ndigits;
    unsigned status; /* 0 until a Status header */
    uint64_t body_len;
    uint32_t stderr_bytes;
    bool error_reply;
};

struct fcgi_state {
    struct fcgi_req req;
    const char *expect; /* NULL: body not checked */
    size_t expect_len;
    struct fcgi_reply r;
};

/* ---- request ------------------------------------------------------------- */

struct fcgi_part {
    const char *p;
    size_t n;
};

/* The request body exists only for POST (fcgi_opts: "POST" (body = size bytes)). */
static bool fcgi_has_body(const struct fcgi_req *q)
{
    return q->opts->method != NULL && strcmp(q->opts->method, "POST") == 0;
}

static const char *opt_or(const char *v, const char *def)
{
    return v != NULL ? v : def;
}

static size_t sat_add(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/*
 * Where PARAMS bytes go: counted (s == NULL) or written into records of a
 * stream. Keeping both behind one emitter means the length and the bytes can
 * never disagree.
 */
struct fcgi_stream {
    uint8_t *buf; /* the request buffer */
    size_t len;   /* bytes written to buf */
    enum fcgi_type type;
    size_t hdr_at; /* offset of the open record's header */
    size_t clen;   /* content in the open record */
    bool open;
};

struct fcgi_sink {
    struct fcgi_stream *s; /* NULL: count only */
    size_t count;
};

static void stream_close_record(struct fcgi_stream *s)
{
    uint8_t pad = fcgi_padding(s->clen);

    fcgi_put_header(s->buf + s->hdr_at, s->type, FCGI_REQUEST_ID, (uint16_t)s->clen, pad);
    memset(s->buf + s->len, 0, pad);
    s->len += pad;
    s->open = false;
}

/* Room for up to n content bytes in the open record, opening one as needed; returns it. */
static size_t stream_chunk(struct fcgi_stream *s, size_t n, uint8_t **dst)
{
    size_t k;

    if (s->open && s->clen == FCGI_MAX_CONTENT) stream_close_record(s);
    if (!s->open) {
        s->hdr_at = s->len;
        s->len += FCGI_HEADER_LEN;
        s->clen = 0;
        s->open = true;
    }
    k = FCGI_MAX_CONTENT - s->clen;
    if (k > n) k = n;
    *dst = s->buf + s->len;
    s->len += k;
    s->clen += k;
    return k;
}

static void stream_put(struct fcgi_stream *s, const void *src, size_t n)
{
    const uint8_t *p = src;

    while (n > 0) {
        uint8_t *dst;
        size_t k = stream_chunk(s, n, &dst);

        memcpy(dst, p, k);
        p += k;
        n -= k;
    }
}

static void stream_put_pattern(struct fcgi_stream *s, size_t size)
{
    size_t off = 0;

    while (off < size) {
        uint8_t *dst;
        size_t k = stream_chunk(s, size - off, &dst);

        for (size_t i = 0; i < k; i++)
            dst[i] = fcgi_pattern_byte(off + i);
        off += k;
    }
}

/* Closes the open record, if any, and writes the empty record that ends the stream. */
static void stream_end(struct fcgi_stream *s)
{
    if (s->open) stream_close_record(s);
    fcgi_put_header(s->buf + s->len, s->type, FCGI_REQUEST_ID, 0, 0);
    s->len += FCGI_HEADER_LEN;
}

/* Bytes of a stream carrying n content bytes: full records, a last one, the empty one. */
static size_t stream_len(size_t n)
{
    size_t full = n / FCGI_MAX_CONTENT, rem = n % FCGI_MAX_CONTENT;
    size_t per = FCGI_HEADER_LEN + FCGI_MAX_CONTENT + fcgi_padding(FCGI_MAX_CONTENT);
    size_t len = FCGI_HEADER_LEN;

    if (full > (SIZE_MAX - 2 * per) / per) return SIZE_MAX;
    len += full * per;
    if (rem > 0) len += FCGI_HEADER_LEN + rem + fcgi_padding(rem);
    return len;
}

static void sink_put(struct fcgi_sink *k, const void *p, size_t n)
{
    if (k->s != NULL)
        stream_put(k->s, p, n);
    else
        k->count = sat_add(k->count, n);
}

/* A name-value length: one byte below 128, else four bytes BE with the top bit set. */
static void sink_len(struct fcgi_sink *k, size_t n)
{
    uint8_t b[4];

    if (n < 128) {
        b[0] = (uint8_t)n;
        sink_put(k, b, 1);
        return;
    }
    b[0] = (uint8_t)(0x80 | ((n >> 24) & 0x7f));
    b[1] = (uint8_t)(n >> 16);
    b[2] = (uint8_t)(n >> 8);
    b[3] = (uint8_t)n;
    sink_put(k, b, 4);
}

/* One pair whose value is the concatenation of up to three parts (n == 0 parts are skipped). */
static void sink_pair(struct fcgi_sink *k, const char *name, size_t name_len,
                      const struct fcgi_part *v, size_t nv)
{
    size_t vlen = 0;

    for (size_t i = 0; i < nv; i++)
        vlen = sat_add(vlen, v[i].n);
    sink_len(k, name_len);
    sink_len(k, vlen);
    sink_put(k, name, name_len);
    for (size_t i = 0; i < nv; i++)
        sink_put(k, v[i].p, v[i].n);
}

static void sink_str(struct fcgi_sink *k, const char *name, const char *value)
{
    struct fcgi_part v = { value, strlen(value) };

    sink_pair(k, name, strlen(name), &v, 1);
}

/* SCRIPT_FILENAME default: DOCUMENT_ROOT + path, without a doubled '/' between them. */
static void sink_script_filename(struct fcgi_sink *k, const char *docroot, const char *path)
{
    struct fcgi_part v[2] = { { docroot, strlen(docroot) }, { path, strlen(path) } };

    if (v[0].n > 0 && docroot[v[0].n - 1] == '/' && path[0] == '/') v[0].n--;
    sink_pair(k, "SCRIPT_FILENAME", strlen("SCRIPT_FILENAME"), v, 2);
}

/* Decimal digits of v into buf (at least 21 bytes); returns the length. */
static size_t fmt_size(char *buf, size_t v)
{
    char tmp[24];
    size_t n = 0;

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

/*
 * Every PARAMS pair, in order. The CGI variables are the ones php-fpm needs
 * (SCRIPT_FILENAME, REQUEST_METHOD, SCRIPT_NAME) and the rest of nginx's
 * fastcgi_params; CONTENT_LENGTH/CONTENT_TYPE only with a body, as RFC 3875
 * leaves them unset when no data is attached.
 */
static void fcgi_params(const struct fcgi_req *q, struct fcgi_sink *k)
{
    const struct fcgi_opts *o = q->opts;
    const char *path = opt_or(o->path, "/bench");
    const char *query = opt_or(o->query, "");
    const char *docroot = opt_or(o->docroot, "/var/www/html");
    struct fcgi_part uri[3] = { { path, strlen(path) }, { "?", 1 }, { query, strlen(query) } };

    if (o->script != NULL)
        sink_str(k, "SCRIPT_FILENAME", o->script);
    else
        sink_script_filename(k, docroot, path);
    sink_str(k, "SCRIPT_NAME", path);
    sink_pair(k, "REQUEST_URI", strlen("REQUEST_URI"), uri, uri[2].n > 0 ? 3 : 1);
    sink_str(k, "REQUEST_METHOD", opt_or(o->method, "GET"));
    sink_str(k, "QUERY_STRING", query);
    sink_str(k, "DOCUMENT_ROOT", docroot);
    sink_str(k, "SERVER_PROTOCOL", "HTTP/1.1");
    sink_str(k, "GATEWAY_INTERFACE", "CGI/1.1");
    sink_str(k, "REMOTE_ADDR", "127.0.0.1");
    sink_str(k, "SERVER_SOFTWARE", "hopbench");
    if (fcgi_has_body(q)) {
        char num[24];
        struct fcgi_part v = { num, fmt_size(num, q->size) };

        sink_pair(k, "CONTENT_LENGTH", strlen("CONTENT_LENGTH"), &v, 1);
        sink_str(k, "CONTENT_TYPE", "application/octet-stream");
    }
    for (unsigned i = 0; i < o->nparams; i++) {
        const char *p = o->params[i];
        const char *eq = strchr(p, '=');
        size_t nlen = eq != NULL ? (size_t)(eq - p) : strlen(p);
        struct fcgi_part v = { eq != NULL ? eq + 1 : "", eq != NULL ? strlen(eq + 1) : 0 };

        sink_pair(k, p, nlen, &v, 1);
    }
}

static size_t fcgi_request_len(const struct fcgi_req *q)
{
    struct fcgi_sink count = { NULL, 0 };
    size_t len = 2 * FCGI_HEADER_LEN; /* BEGIN_REQUEST */

    fcgi_params(q, &count);
    len = sat_add(len, stream_len(count.count));
    return sat_add(len, stream_len(fcgi_has_body(q) ? q->size : 0));
}

static struct fcgi_req fcgi_req_of(const struct codec_cfg *cfg)
{
    struct fcgi_req q = { cfg->opts, cfg->size, cfg->keep_alive };

    return q;
}

static size_t fcgi_max_request(const struct codec_cfg *cfg)
{
    struct fcgi_req q = fcgi_req_of(cfg);

    return fcgi_request_len(&q);
}

static size_t fcgi_encode(void *st, uint8_t *dst, size_t cap)
{
    const struct fcgi_state *s = st;
    const struct fcgi_req *q = &s->req;
    size_t need = fcgi_request_len(q);
    struct fcgi_stream params = { .buf = dst, .len = 2 * FCGI_HEADER_LEN, .type = FCGI_PARAMS };
    struct fcgi_sink sink = { &params, 0 };
    struct fcgi_stream in = { .buf = dst, .type = FCGI_STDIN };

    if (need == SIZE_MAX || cap < need) return 0;
    fcgi_put_header(dst, FCGI_BEGIN_REQUEST, FCGI_REQUEST_ID, 8, 0);
    memset(dst + FCGI_HEADER_LEN, 0, 8);
    dst[FCGI_HEADER_LEN + 1] = FCGI_RESPONDER;
    dst[FCGI_HEADER_LEN + 2] = q->keep_alive ? FCGI_KEEP_CONN : 0;
    fcgi_params(q, &sink);
    stream_end(&params);
    in.len = params.len;
    if (fcgi_has_body(q)) stream_put_pattern(&in, q->size);
    stream_end(&in);
    assert(in.len == need); /* one emitter for both: they cannot disagree */
    return in.len;
}

/* ---- reply --------------------------------------------------------------- */

static void fcgi_reset(void *st)
{
    struct fcgi_state *s = st;

    memset(&s->r, 0, sizeof(s->r));
}

static void fcgi_init(void *st, const struct codec_cfg *cfg)
{
    struct fcgi_state *s = st;

    s->req = fcgi_req_of(cfg);
    s->expect = ((const struct fcgi_opts *)cfg->opts)->expect_body;
    s->expect_len = s->expect != NULL ? strlen(s->expect) : 0;
    fcgi_reset(s);
}

/* One header byte; the first wrong byte of a field is the error. */
static enum codec_err header_byte(struct fcgi_reply *r, uint8_t b)
{
    unsigned i = r->hdr_have;
    bool end = i > 1 && r->hdr[1] == FCGI_END_REQUEST;

    if (i == 0) r->rec_start = r->off;
    r->hdr[i] = b;
    r->hdr_have++;
    switch (i) {
    case 0:
        return b == FCGI_VERSION ? CODEC_ERR_NONE : CODEC_ERR_MISMATCH;
    case 1:
        return b == FCGI_STDOUT || b == FCGI_STDERR || b == FCGI_END_REQUEST ? CODEC_ERR_NONE
                                                                             : CODEC_ERR_MISMATCH;
    case 2: /* requestId 1: management records (0) and other ids are not ours */
        return b == 0 ? CODEC_ERR_NONE : CODEC_ERR_MISMATCH;
    case 3:
        return b == FCGI_REQUEST_ID ? CODEC_ERR_NONE : CODEC_ERR_MISMATCH;
    case 4: /* the END_REQUEST body is 8 bytes */
        return end && b != 0 ? CODEC_ERR_MISMATCH : CODEC_ERR_NONE;
    case 5:
        return end && b != 8 ? CODEC_ERR_MISMATCH : CODEC_ERR_NONE;
    default:
        return CODEC_ERR_NONE;
    }
}

static bool is_digit(uint8_t b)
{
    return b >= '0' && b <= '9';
}

/* One byte of a header line other than '\n', for the Status matcher. */
static enum codec_err status_byte(struct fcgi_reply *r, uint8_t b)
{
    static const char name[] = "status:";

    switch (r->st) {
    case FCGI_ST_NAME:
        /* ASCII letters compare case-insensitively with | 0x20; ':' is exact */
        if (r->line_len < 6 ? (b | 0x20) != (uint8_t)name[r->line_len] : b != ':')
            r->st = FCGI_ST_REST;
        else if (r->line_len == 6)
            r->st = FCGI_ST_SPACE;
        return CODEC_ERR_NONE;
    case FCGI_ST_SPACE:
        if (b == ' ' || b == '\t') return CODEC_ERR_NONE;
        if (!is_digit(b) || b == '0') return CODEC_ERR_MISMATCH;
        r->code = (unsigned)(b - '0');
        r->ndigits = 1;
        r->st = FCGI_ST_DIGITS;
        return CODEC_ERR_NONE;
    case FCGI_ST_DIGITS:
        if (is_digit(b) && r->ndigits < 3) {
            r->code = r->code * 10 + (unsigned)(b - '0');
            r->ndigits++;
            return CODEC_ERR_NONE;
        }
        if (r->ndigits != 3 || (b != ' ' && b != '\t' && b != '\r')) return CODEC_ERR_MISMATCH;
        r->status = r->code;
        r->st = FCGI_ST_REST;
        return CODEC_ERR_NONE;
    case FCGI_ST_REST:
        return CODEC_ERR_NONE;
    }
    return CODEC_ERR_NONE;
}

/* The '\n' that ends a header line: a blank line ends the headers. */
static enum codec_err line_end(struct fcgi_reply *r)
{
    bool blank = r->line_len == 0 || (r->line_len == 1 && r->line_cr);

    if (r->st == FCGI_ST_SPACE || (r->st == FCGI_ST_DIGITS && r->ndigits != 3))
        return CODEC_ERR_MISMATCH;
    if (r->st == FCGI_ST_DIGITS) r->status = r->code;
    if (blank) r->in_body = true;
    r->line_len = 0;
    r->line_cr = false;
    r->st = FCGI_ST_NAME;
    return CODEC_ERR_NONE;
}

static enum codec_err cgi_header_byte(struct fcgi_reply *r, uint8_t b)
{
    enum codec_err e;

    if (++r->cgi_header_bytes > FCGI_MAX_HEADER) return CODEC_ERR_TOO_BIG;
    if (b == '\n') return line_end(r);
    if (r->line_len == 0 && b == '\r') r->line_cr = true;
    e = status_byte(r, b);
    r->line_len++;
    return e;
}

static size_t first_difference(const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t i = 0;

    while (i < n && a[i] == b[i])
        i++;
    return i;
}

/* n body bytes: compared with expect_body, counted against the cap. *bad = index of an error. */
static enum codec_err body_bytes(struct fcgi_state *s, const uint8_t *p, size_t n, size_t *bad)
{
    struct fcgi_reply *r = &s->r;

    if (s->expect != NULL) {
        size_t left = r->body_len < s->expect_len ? s->expect_len - (size_t)r->body_len : 0;
        size_t k = n < left ? n : left;

        if (memcmp(p, s->expect + r->body_len, k) != 0) {
            *bad = first_difference(p, (const uint8_t *)s->expect + r->body_len, k);
            return CODEC_ERR_BODY;
        }
        if (n > left) {
            *bad = left; /* the body goes on past expect_body */
            return CODEC_ERR_BODY;
        }
    }
    if (n > FCGI_MAX_BODY - r->body_len) {
        *bad = (size_t)(FCGI_MAX_BODY - r->body_len);
        return CODEC_ERR_TOO_BIG;
    }
    r->body_len += n;
    return CODEC_ERR_NONE;
}

static enum codec_err stdout_bytes(struct fcgi_state *s, const uint8_t *p, size_t n, size_t *bad)
{
    struct fcgi_reply *r = &s->r;
    size_t i = 0;
    enum codec_err e;

    while (i < n && !r->in_body) {
        if (r->st == FCGI_ST_REST) { /* the rest of a line not Status's: at once to its '\n' */
            const uint8_t *nl = memchr(p + i, '\n', n - i);
            size_t k = nl != NULL ? (size_t)(nl - p) - i : n - i;

            if (r->cgi_header_bytes <= FCGI_MAX_HEADER &&
                k <= FCGI_MAX_HEADER - r->cgi_header_bytes) { /* else byte by byte to the cap */
                r->cgi_header_bytes += k;
                r->line_len += k;
                i += k;
                if (i == n) break;
            }
        }
        e = cgi_header_byte(r, p[i]);
        if (e != CODEC_ERR_NONE) {
            *bad = i;
            return e;
        }
        i++;
    }
    if (i == n) return CODEC_ERR_NONE;
    e = body_bytes(s, p + i, n - i, bad);
    if (e != CODEC_ERR_NONE) *bad += i;
    return e;
}

/*
 * The END_REQUEST body is complete. A failed request (protocolStatus) is a
 * DONE reply with error_reply set; a completed one must have ended its CGI
 * headers and sent all of expect_body. Errors point at the END_REQUEST record.
 */
static enum codec_err end_request(struct fcgi_state *s)
{
    struct fcgi_reply *r = &s->r;

    r->finished = true;
    if (r->end[4] != FCGI_REQUEST_COMPLETE) {
        r->error_reply = true;
        return CODEC_ERR_NONE;
    }
    if (!r->in_body) return CODEC_ERR_MISMATCH;
    if (s->expect != NULL && r->body_len < s->expect_len) return CODEC_ERR_BODY;
    return CODEC_ERR_NONE;
}

/* n bytes of the current record's content. On error *bad indexes the byte that showed it. */
static enum codec_err content_bytes(struct fcgi_state *s, const uint8_t *p, size_t n, size_t *bad)
{
    struct fcgi_reply *r = &s->r;
    enum codec_err e = CODEC_ERR_NONE;

    switch (r->hdr[1]) {
    case FCGI_STDOUT:
        e = stdout_bytes(s, p, n, bad);
        break;
    case FCGI_STDERR:
        r->stderr_bytes =
            n > UINT32_MAX - r->stderr_bytes ? UINT32_MAX : r->stderr_bytes + (uint32_t)n;
        break;
    default: /* FCGI_END_REQUEST: header_byte let nothing else through */
        memcpy(r->end + r->end_have, p, n);
        r->end_have += (unsigned)n;
        if (r->end_have == sizeof(r->end)) {
            e = end_request(s);
            *bad = n - 1;
        }
        break;
    }
    if (e == CODEC_ERR_NONE) r->content_left -= n;
    return e;
}

/* Moves past finished phases (a complete header, content or padding); true when the reply ends. */
static bool advance(struct fcgi_reply *r)
{
    if (r->phase == FCGI_PH_HEADER && r->hdr_have == FCGI_HEADER_LEN) {
        r->content_left = (size_t)r->hdr[4] << 8 | r->hdr[5];
        r->pad_left = r->hdr[6];
        r->hdr_have = 0;
        r->phase = FCGI_PH_CONTENT;
    }
    if (r->phase == FCGI_PH_CONTENT && r->content_left == 0) r->phase = FCGI_PH_PADDING;
    if (r->phase == FCGI_PH_PADDING && r->pad_left == 0) {
        r->phase = FCGI_PH_HEADER;
        return r->finished;
    }
    return false;
}

static void fill_done(const struct fcgi_state *s, struct codec_msg *msg)
{
    const struct fcgi_reply *r = &s->r;

    msg->err = CODEC_ERR_NONE;
    msg->err_off = 0;
    msg->status = !r->in_body ? 0 : r->status != 0 ? r->status : 200;
    msg->closes = !s->req.keep_alive;
    msg->error_reply = r->error_reply;
    msg->stderr_bytes = r->stderr_bytes;
}

static enum codec_rc fcgi_feed(void *st, const uint8_t *src, size_t len, size_t *used,
                               struct codec_msg *msg)
{
    struct fcgi_state *s = st;
    struct fcgi_reply *r = &s->r;
    size_t i = 0;

    while (i < len) {
        enum codec_err e = CODEC_ERR_NONE;
        size_t n = 1, bad = 0;

        if (r->phase == FCGI_PH_HEADER) {
            e = header_byte(r, src[i]);
        } else if (r->phase == FCGI_PH_CONTENT) {
            n = len - i < r->content_left ? len - i : r->content_left;
            e = content_bytes(s, src + i, n, &bad);
        } else {
            n = len - i < r->pad_left ? len - i : r->pad_left;
            r->pad_left -= (unsigned)n;
        }
        if (e != CODEC_ERR_NONE) {
            bool at_record = r->finished; /* END_REQUEST verdicts blame the whole record */

            *used = i + bad;
            msg->err = e;
            msg->err_off = at_record ? r->rec_start : r->off + bad;
            return CODEC_ERROR;
        }
        i += n;
        r->off += n;
        if (advance(r)) {
            fill_done(s, msg);
            fcgi_reset(s);
            *used = i;
            return CODEC_DONE;
        }
    }
    *used = len;
    return CODEC_NEED_MORE;
}

/* FastCGI replies end with END_REQUEST, never with the connection. */
static enum codec_rc fcgi_eof(void *st, struct codec_msg *msg)
{
    const struct fcgi_state *s = st;

    msg->err = CODEC_ERR_MISMATCH;
    msg->err_off = s->r.off;
    return CODEC_ERROR;
}

const struct codec_ops fcgi_codec = {
    .name = "fcgi",
    .state_size = sizeof(struct fcgi_state),
    .fixed = true,
    .max_request = fcgi_max_request,
    .init = fcgi_init,
    .encode = fcgi_encode,
    .feed = fcgi_feed,
    .eof = fcgi_eof,
    .reset = fcgi_reset,
};
