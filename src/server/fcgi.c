/*
 * fcgi: the reference FastCGI responder's protocol part. Every request gets
 * the same reply: STDOUT "Content-Type: text/plain\r\n\r\n" + body ("bench",
 * or cfg->body_size bytes of fcgi_pattern_byte), an empty STDOUT and
 * END_REQUEST (appStatus 0, REQUEST_COMPLETE), built once in create() for
 * requestId 1.
 *
 * Records are parsed as a stream: a header (and BEGIN_REQUEST's 8-byte body)
 * is read only once it is whole in the input, everything else (PARAMS,
 * STDIN, padding) is consumed as it arrives, so requests of any size pass
 * through a small receive buffer. PARAMS are parsed for structure only.
 * The reply goes out when the empty STDIN arrives. Pipelined requests are
 * answered in order while io->obuf has room; a lone reply is sent from the
 * shared copy without a memcpy. A request whose reply no longer fits is left
 * unconsumed (from its empty STDIN record on) for the next call.
 *
 * One request at a time per connection, like php-fpm: a BEGIN_REQUEST for
 * another id meanwhile gets END_REQUEST(CANT_MPX_CONN), a role other than
 * RESPONDER gets END_REQUEST(UNKNOWN_ROLE); records of inactive ids are
 * ignored (the spec's rule). Management records (requestId 0): GET_VALUES
 * gets GET_VALUES_RESULT naming FCGI_MPXS_CONNS=0 when asked, any other type
 * UNKNOWN_TYPE. Anything else malformed is SERVER_PROTO_ERROR.
 * Limitation: a reply larger than obuf can only be sent for requestId 1 (the
 * shared copy); other ids then get SERVER_PROTO_ERROR.
 */
#include "server/server.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/fcgi.h"

#define FCGI_SRV_OUT_CAP SERVER_BUF /* obuf: about 200 pipelined "bench" replies */
#define FCGI_VALUES_MAX  32         /* the largest GET_VALUES_RESULT record we send */
#define FCGI_NAME_KEEP   16         /* GET_VALUES name bytes kept for matching */

static const char fcgi_srv_headers[] = "Content-Type: text/plain\r\n\r\n";
static const char fcgi_srv_greeting[] = "bench";
static const char fcgi_mpxs_conns[] = "FCGI_MPXS_CONNS";

struct fcgi_srv {
    uint8_t *reply; /* STDOUT records, empty STDOUT, END_REQUEST; requestId 1 */
    size_t reply_len;
};

enum fcgi_nv_st { FCGI_NV_NAME_LEN = 0, FCGI_NV_VALUE_LEN, FCGI_NV_NAME, FCGI_NV_VALUE };

/* A name-value pair stream, parsed as it arrives; names kept only for GET_VALUES. */
struct fcgi_nv {
    enum fcgi_nv_st st;
    uint8_t lb[4];
    unsigned lhave;
    size_t name_len, name_left, value_left;
    char name[FCGI_NAME_KEEP];
    bool keep_names;
    bool asked_mpxs; /* GET_VALUES named FCGI_MPXS_CONNS */
};

/* What the content of the current record is for. */
enum fcgi_kind { FCGI_K_SKIP = 0, FCGI_K_PARAMS, FCGI_K_VALUES };

/* Per connection; all zero at accept is "between records, no request". */
struct fcgi_conn {
    size_t content_left;
    unsigned pad_left;
    enum fcgi_kind kind;
    bool active; /* a request is between BEGIN_REQUEST and its empty STDIN */
    uint16_t req_id;
    bool keep_conn;
    bool params_done;
    struct fcgi_nv nv;
};

enum fcgi_out_mode { FCGI_OUT_NONE = 0, FCGI_OUT_SHARED, FCGI_OUT_BUF };

/* The reply of one process() call. */
struct fcgi_out {
    struct server_io *io;
    const struct fcgi_srv *srv;
    enum fcgi_out_mode mode;
    size_t len; /* bytes in obuf (FCGI_OUT_BUF) */
};

/* Results of the record-level steps besides "consumed n bytes". */
#define FCGI_STOP 0 /* need more input, or obuf is full: stop here */
#define FCGI_BAD  SERVER_PROTO_ERROR

/* ---- the shared reply ---------------------------------------------------- */

static size_t reply_len_for(size_t content)
{
    size_t full = content / FCGI_MAX_CONTENT, rem = content % FCGI_MAX_CONTENT;
    size_t len = full * (FCGI_HEADER_LEN + FCGI_MAX_CONTENT + fcgi_padding(FCGI_MAX_CONTENT));

    if (rem > 0) len += FCGI_HEADER_LEN + rem + fcgi_padding(rem);
    return len + FCGI_HEADER_LEN + 16; /* empty STDOUT, END_REQUEST */
}

/* Content byte j of the STDOUT stream: the CGI headers, then the body. */
static void fill_content(uint8_t *dst, size_t j, size_t n, size_t body_size)
{
    size_t hl = sizeof(fcgi_srv_headers) - 1;

    for (size_t i = 0; i < n; i++, j++) {
        if (j < hl)
            dst[i] = (uint8_t)fcgi_srv_headers[j];
        else if (body_size == 0)
            dst[i] = (uint8_t)fcgi_srv_greeting[j - hl];
        else
            dst[i] = fcgi_pattern_byte(j - hl);
    }
}

static int fcgi_srv_create(const struct server_cfg *cfg, void **shared)
{
    size_t body = cfg->body_size > 0 ? cfg->body_size : sizeof(fcgi_srv_greeting) - 1;
    size_t content, off = 0, j = 0;
    struct fcgi_srv *s;

    if (cfg->body_size > FCGI_MAX_BODY) return -EINVAL;
    content = sizeof(fcgi_srv_headers) - 1 + body;
    s = malloc(sizeof(*s));
    if (s == NULL) return -ENOMEM;
    s->reply_len = reply_len_for(content);
    s->reply = malloc(s->reply_len);
    if (s->reply == NULL) {
        free(s);
        return -ENOMEM;
    }
    while (j < content) {
        size_t n = content - j < FCGI_MAX_CONTENT ? content - j : FCGI_MAX_CONTENT;
        uint8_t pad = fcgi_padding(n);

        fcgi_put_header(s->reply + off, FCGI_STDOUT, FCGI_REQUEST_ID, (uint16_t)n, pad);
        fill_content(s->reply + off + FCGI_HEADER_LEN, j, n, cfg->body_size);
        memset(s->reply + off + FCGI_HEADER_LEN + n, 0, pad);
        off += FCGI_HEADER_LEN + n + pad;
        j += n;
    }
    fcgi_put_header(s->reply + off, FCGI_STDOUT, FCGI_REQUEST_ID, 0, 0);
    fcgi_put_end_request(s->reply + off + FCGI_HEADER_LEN, FCGI_REQUEST_ID, 0,
                         FCGI_REQUEST_COMPLETE);
    *shared = s;
    return 0;
}

static void fcgi_srv_destroy(void *shared)
{
    struct fcgi_srv *s = shared;

    if (s == NULL) return;
    free(s->reply);
    free(s);
}

/* ---- output -------------------------------------------------------------- */

static size_t out_have(const struct fcgi_out *o)
{
    return o->mode == FCGI_OUT_SHARED ? o->srv->reply_len : o->len;
}

static bool out_fits(const struct fcgi_out *o, size_t n)
{
    size_t have = out_have(o);

    return have <= o->io->ocap && n <= o->io->ocap - have;
}

/* n bytes appended to obuf (a shared reply is copied in first), or NULL when they do not fit. */
static uint8_t *out_take(struct fcgi_out *o, size_t n)
{
    uint8_t *p;

    if (!out_fits(o, n)) return NULL;
    if (o->mode == FCGI_OUT_SHARED) {
        memcpy(o->io->obuf, o->srv->reply, o->srv->reply_len);
        o->len = o->srv->reply_len;
    }
    o->mode = FCGI_OUT_BUF;
    p = o->io->obuf + o->len;
    o->len += n;
    return p;
}

/*
 * What a record whose output does not fit returns: FCGI_STOP to wait for the
 * frame to send this call's output, FCGI_BAD when obuf is already empty (it
 * can never fit).
 */
static size_t out_full(const struct fcgi_out *o)
{
    return o->mode == FCGI_OUT_NONE ? FCGI_BAD : FCGI_STOP;
}

/* Rewrites the requestId of every record in reply bytes built for id 1. */
static void patch_ids(uint8_t *p, size_t len, uint16_t id)
{
    size_t off = 0;

    while (off + FCGI_HEADER_LEN <= len) {
        p[off + 2] = (uint8_t)(id >> 8);
        p[off + 3] = (uint8_t)id;
        off += FCGI_HEADER_LEN + ((size_t)p[off + 4] << 8 | p[off + 5]) + p[off + 6];
    }
}

/* The full reply to request `id`: true, or false when it does not fit. */
static bool out_reply(struct fcgi_out *o, uint16_t id)
{
    uint8_t *p;

    if (o->mode == FCGI_OUT_NONE && id == FCGI_REQUEST_ID) {
        o->mode = FCGI_OUT_SHARED;
        return true;
    }
    p = out_take(o, o->srv->reply_len);
    if (p == NULL) return false;
    memcpy(p, o->srv->reply, o->srv->reply_len);
    if (id != FCGI_REQUEST_ID) patch_ids(p, o->srv->reply_len, id);
    return true;
}

static bool out_end_request(struct fcgi_out *o, uint16_t id, enum fcgi_protocol_status ps)
{
    uint8_t *p = out_take(o, 16);

    if (p == NULL) return false;
    fcgi_put_end_request(p, id, 0, ps);
    return true;
}

static void out_finish(const struct fcgi_out *o)
{
    struct server_io *io = o->io;

    if (o->mode == FCGI_OUT_SHARED) {
        io->out = o->srv->reply;
        io->out_len = o->srv->reply_len;
    } else if (o->mode == FCGI_OUT_BUF) {
        io->out = io->obuf;
        io->out_len = o->len;
    }
}

/* ---- name-value pairs ---------------------------------------------------- */

static void nv_start(struct fcgi_nv *nv, bool keep_names)
{
    memset(nv, 0, sizeof(*nv));
    nv->keep_names = keep_names;
}

static bool nv_at_boundary(const struct fcgi_nv *nv)
{
    return nv->st == FCGI_NV_NAME_LEN && nv->lhave == 0;
}

/* Moves past empty names and values; a finished pair is matched against what we know. */
static void nv_settle(struct fcgi_nv *nv)
{
    if (nv->st == FCGI_NV_NAME && nv->name_left == 0) nv->st = FCGI_NV_VALUE;
    if (nv->st != FCGI_NV_VALUE || nv->value_left > 0) return;
    if (nv->keep_names && nv->name_len == sizeof(fcgi_mpxs_conns) - 1 &&
        memcmp(nv->name, fcgi_mpxs_conns, nv->name_len) == 0)
        nv->asked_mpxs = true;
    nv->st = FCGI_NV_NAME_LEN;
}

/* One length byte: 1 byte below 128, else 4 bytes BE with the top bit set. */
static void nv_len_byte(struct fcgi_nv *nv, uint8_t b)
{
    size_t n;

    if (nv->lhave == 0 && b < 128) {
        n = b;
    } else {
        nv->lb[nv->lhave++] = b;
        if (nv->lhave < 4) return;
        n = (size_t)(nv->lb[0] & 0x7f) << 24 | (size_t)nv->lb[1] << 16 | (size_t)nv->lb[2] << 8 |
            nv->lb[3];
        nv->lhave = 0;
    }
    if (nv->st == FCGI_NV_NAME_LEN) {
        nv->name_len = nv->name_left = n;
        nv->st = FCGI_NV_VALUE_LEN;
        return;
    }
    nv->value_left = n;
    nv->st = FCGI_NV_NAME;
    nv_settle(nv);
}

static void nv_bytes(struct fcgi_nv *nv, const uint8_t *p, size_t n)
{
    while (n > 0) {
        size_t k = 1;

        if (nv->st == FCGI_NV_NAME_LEN || nv->st == FCGI_NV_VALUE_LEN) {
            nv_len_byte(nv, *p);
        } else if (nv->st == FCGI_NV_NAME) {
            size_t at = nv->name_len - nv->name_left;

            k = n < nv->name_left ? n : nv->name_left;
            if (nv->keep_names && at < FCGI_NAME_KEEP)
                memcpy(nv->name + at, p, k < FCGI_NAME_KEEP - at ? k : FCGI_NAME_KEEP - at);
            nv->name_left -= k;
            nv_settle(nv);
        } else {
            k = n < nv->value_left ? n : nv->value_left;
            nv->value_left -= k;
            nv_settle(nv);
        }
        p += k;
        n -= k;
    }
}

/* ---- records ------------------------------------------------------------- */

/* Management records (requestId 0): consumes the header or says why not. */
static size_t management(struct fcgi_conn *c, struct fcgi_out *o, const uint8_t *h)
{
    uint8_t *p;

    if (h[1] == FCGI_GET_VALUES) {
        /* The result is sent after the content; reserve its room now. */
        if (!out_fits(o, FCGI_VALUES_MAX)) return out_full(o);
        nv_start(&c->nv, true);
        c->kind = FCGI_K_VALUES;
        return FCGI_HEADER_LEN;
    }
    p = out_take(o, 16);
    if (p == NULL) return out_full(o);
    fcgi_put_header(p, FCGI_UNKNOWN_TYPE, 0, 8, 0);
    memset(p + FCGI_HEADER_LEN, 0, 8);
    p[FCGI_HEADER_LEN] = h[1];
    return FCGI_HEADER_LEN;
}

/* GET_VALUES content is over: GET_VALUES_RESULT. */
static size_t values_result(struct fcgi_conn *c, struct fcgi_out *o)
{
    size_t nlen = sizeof(fcgi_mpxs_conns) - 1;
    size_t clen = c->nv.asked_mpxs ? 2 + nlen + 1 : 0;
    uint8_t pad = fcgi_padding(clen);
    uint8_t *p;

    if (!nv_at_boundary(&c->nv)) return FCGI_BAD;
    p = out_take(o, FCGI_HEADER_LEN + clen + pad); /* reserved by management() */
    if (p == NULL) return FCGI_BAD;
    fcgi_put_header(p, FCGI_GET_VALUES_RESULT, 0, (uint16_t)clen, pad);
    p += FCGI_HEADER_LEN;
    if (clen > 0) {
        p[0] = (uint8_t)nlen;
        p[1] = 1;
        memcpy(p + 2, fcgi_mpxs_conns, nlen);
        p[2 + nlen] = '0'; /* one request per connection */
    }
    memset(p + clen, 0, pad);
    c->kind = FCGI_K_SKIP;
    return 0;
}

/* The active request is over (answered or aborted): the connection closes unless KEEP_CONN. */
static void request_over(struct fcgi_conn *c, struct server_io *io)
{
    c->active = false;
    io->answered++;
    if (!c->keep_conn) io->close = true;
}

/* BEGIN_REQUEST, whole in h[0..16). */
static size_t begin_request(struct fcgi_conn *c, struct fcgi_out *o, const uint8_t *h, uint16_t id)
{
    unsigned role = (unsigned)h[8] << 8 | h[9];
    bool keep = (h[10] & FCGI_KEEP_CONN) != 0;

    if (c->active && id == c->req_id) return FCGI_BAD;
    if (c->active || role != FCGI_RESPONDER) {
        /* refused; a refused BEGIN without KEEP_CONN ends an otherwise idle connection */
        enum fcgi_protocol_status ps = c->active ? FCGI_CANT_MPX_CONN : FCGI_UNKNOWN_ROLE;

        if (!out_end_request(o, id, ps)) return out_full(o);
        o->io->answered++;
        if (!c->active && !keep) o->io->close = true;
        return 2 * FCGI_HEADER_LEN;
    }
    c->active = true;
    c->req_id = id;
    c->keep_conn = keep;
    c->params_done = false;
    nv_start(&c->nv, false);
    return 2 * FCGI_HEADER_LEN;
}

/* A PARAMS or STDIN record of the active request. */
static size_t request_stream(struct fcgi_conn *c, struct fcgi_out *o, uint8_t type, size_t clen)
{
    if (type == FCGI_PARAMS) {
        if (c->params_done) return FCGI_BAD;
        if (clen > 0) {
            c->kind = FCGI_K_PARAMS;
        } else {
            if (!nv_at_boundary(&c->nv)) return FCGI_BAD;
            c->params_done = true;
        }
        return FCGI_HEADER_LEN;
    }
    if (!c->params_done) return FCGI_BAD;
    if (clen == 0) {
        /* the empty STDIN: the request is complete */
        if (!out_reply(o, c->req_id)) return out_full(o);
        request_over(c, o->io);
    }
    return FCGI_HEADER_LEN;
}

/*
 * A record header at h (avail bytes): its bytes consumed, FCGI_STOP or
 * FCGI_BAD. Sets up c->content_left/pad_left/kind for what follows it.
 */
static size_t record(struct fcgi_conn *c, struct fcgi_out *o, const uint8_t *h, size_t avail)
{
    uint8_t type = h[1];
    uint16_t id = (uint16_t)(h[2] << 8 | h[3]);
    size_t clen = (size_t)h[4] << 8 | h[5], n;
    bool ours = c->active && id == c->req_id;

    if (h[0] != FCGI_VERSION) return FCGI_BAD;
    c->kind = FCGI_K_SKIP;
    if (id == 0) {
        n = management(c, o, h);
    } else if (type == FCGI_BEGIN_REQUEST) {
        if (clen != 8) return FCGI_BAD;
        if (avail < 2 * FCGI_HEADER_LEN) return FCGI_STOP;
        n = begin_request(c, o, h, id);
        clen = 0; /* read with the header */
    } else if (!ours && (type == FCGI_ABORT_REQUEST || type == FCGI_PARAMS || type == FCGI_STDIN ||
                         type == FCGI_DATA)) {
        n = FCGI_HEADER_LEN; /* an inactive request: ignored */
    } else if (type == FCGI_ABORT_REQUEST) {
        n = out_end_request(o, id, FCGI_REQUEST_COMPLETE) ? FCGI_HEADER_LEN : out_full(o);
        if (n == FCGI_HEADER_LEN) request_over(c, o->io);
    } else if (type == FCGI_PARAMS || type == FCGI_STDIN) {
        n = request_stream(c, o, type, clen);
    } else {
        return FCGI_BAD; /* DATA for a responder, or a type only applications send */
    }
    if (n == FCGI_STOP || n == FCGI_BAD) return n;
    c->content_left = clen;
    c->pad_left = h[6];
    if (clen == 0 && c->kind == FCGI_K_VALUES && values_result(c, o) == FCGI_BAD) return FCGI_BAD;
    return n;
}

/* n content bytes of the current record; FCGI_BAD or 0. */
static size_t content(struct fcgi_conn *c, struct fcgi_out *o, const uint8_t *p, size_t n)
{
    if (c->kind != FCGI_K_SKIP) nv_bytes(&c->nv, p, n);
    c->content_left -= n;
    if (c->content_left == 0 && c->kind == FCGI_K_VALUES) return values_result(c, o);
    return 0;
}

static size_t fcgi_srv_process(void *shared, struct server_io *io, const uint8_t *in, size_t len)
{
    struct fcgi_conn *c = io->state;
    struct fcgi_out o = { .io = io, .srv = shared, .mode = FCGI_OUT_NONE, .len = 0 };
    size_t pos = 0;
    bool bad = false;

    io->out = NULL;
    io->out_len = 0;
    io->close = false;
    io->answered = 0;
    while (pos < len && !io->close) {
        size_t avail = len - pos, n;

        if (c->content_left > 0) {
            n = avail < c->content_left ? avail : c->content_left;
            if (content(c, &o, in + pos, n) == FCGI_BAD) bad = true;
        } else if (c->pad_left > 0) {
            n = avail < c->pad_left ? avail : c->pad_left;
            c->pad_left -= (unsigned)n;
        } else {
            n = avail < FCGI_HEADER_LEN ? FCGI_STOP : record(c, &o, in + pos, avail);
            if (n == FCGI_STOP) break;
            bad = n == FCGI_BAD;
        }
        if (bad) break;
        pos += n;
    }
    out_finish(&o);
    return bad ? SERVER_PROTO_ERROR : pos;
}

const struct server_proto server_fcgi = {
    .name = "fcgi",
    .conn_size = sizeof(struct fcgi_conn),
    .out_cap = FCGI_SRV_OUT_CAP,
    .create = fcgi_srv_create,
    .destroy = fcgi_srv_destroy,
    .process = fcgi_srv_process,
};
