/*
 * test_fcgi: the FastCGI client codec (proto/fcgi.h) and the reference
 * responder (server_fcgi) against their contracts.
 *
 * Requests are decoded here, record by record, by an independent reader that
 * checks the framing (version, requestId, padding to 8, stream order, empty
 * terminators) and then every name-value pair, including which length form
 * each uses. Replies are built by hand and fed whole, split at every offset
 * and byte by byte, each piece ending at a PROT_NONE page (guard.h). The
 * server is driven the way the frame drives it (a bounded receive buffer,
 * consumed bytes dropped, called again while it makes progress) and its
 * output goes back through the codec.
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "proto/codec.h"
#include "proto/fcgi.h"
#include "server/server.h" /* ARRAY_LEN too, via util.h */

#define STATE_MAX 512
#define MAX_PAIRS 64
#define MAX_RECS  4096

/* ---- a growable byte buffer for building replies and streams -------------- */

struct bytes {
    uint8_t *p;
    size_t len, cap;
};

static void bytes_put(struct bytes *b, const void *src, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;

        while (cap < b->len + n)
            cap *= 2;
        b->p = realloc(b->p, cap);
        assert_non_null(b->p);
        b->cap = cap;
    }
    if (n > 0) memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void bytes_free(struct bytes *b)
{
    free(b->p);
    *b = (struct bytes){ 0 };
}

/* One record: header, content, then `pad` padding bytes (0xee: never looked at). */
static void put_rec(struct bytes *b, uint8_t type, uint16_t id, const void *content, size_t clen,
                    uint8_t pad)
{
    uint8_t h[FCGI_HEADER_LEN];
    uint8_t fill[255];

    assert_true(clen <= FCGI_MAX_CONTENT);
    fcgi_put_header(h, type, id, (uint16_t)clen, pad);
    h[7] = 0x5a; /* reserved: ignored by readers */
    memset(fill, 0xee, sizeof(fill));
    bytes_put(b, h, sizeof(h));
    bytes_put(b, content, clen);
    bytes_put(b, fill, pad);
}

static void put_str(struct bytes *b, uint8_t type, const char *s, uint8_t pad)
{
    put_rec(b, type, FCGI_REQUEST_ID, s, strlen(s), pad);
}

static void put_end(struct bytes *b, uint16_t id, uint32_t app, uint8_t ps, uint8_t pad)
{
    uint8_t body[8] = {
        (uint8_t)(app >> 24), (uint8_t)(app >> 16), (uint8_t)(app >> 8), (uint8_t)app, ps, 1, 2, 3
    };

    put_rec(b, FCGI_END_REQUEST, id, body, 8, pad);
}

/* The usual good reply: one STDOUT record with headers and body, empty STDOUT, END_REQUEST. */
static void put_simple(struct bytes *b, const char *stdout_text)
{
    put_str(b, FCGI_STDOUT, stdout_text, fcgi_padding(strlen(stdout_text)));
    put_rec(b, FCGI_STDOUT, FCGI_REQUEST_ID, NULL, 0, 0);
    put_end(b, FCGI_REQUEST_ID, 0, FCGI_REQUEST_COMPLETE, 0);
}

/* ---- an independent record reader ---------------------------------------- */

struct rec {
    const uint8_t *content;
    size_t clen;
    uint16_t id;
    uint8_t type;
    uint8_t pad;
};

/*
 * Splits p[0..len) into records, checking what every record we write must
 * satisfy: version 1, padding to a multiple of 8 with zero bytes, reserved 0,
 * and no bytes left over. Returns the number of records.
 */
static size_t read_records(const uint8_t *p, size_t len, struct rec *r, size_t max)
{
    size_t off = 0, n = 0;

    while (off < len) {
        struct rec x;

        assert_true(n < max);
        assert_true(len - off >= FCGI_HEADER_LEN);
        assert_int_equal(p[off], FCGI_VERSION);
        assert_int_equal(p[off + 7], 0);
        x.type = p[off + 1];
        x.id = (uint16_t)(p[off + 2] << 8 | p[off + 3]);
        x.clen = (size_t)p[off + 4] << 8 | p[off + 5];
        x.pad = p[off + 6];
        x.content = p + off + FCGI_HEADER_LEN;
        if ((x.clen + x.pad) % 8 != 0)
            fail_msg("record %zu: content %zu + padding %u not a multiple of 8", n, x.clen, x.pad);
        off += FCGI_HEADER_LEN;
        assert_true(len - off >= x.clen + x.pad);
        for (size_t i = 0; i < x.pad; i++)
            assert_int_equal(p[off + x.clen + i], 0);
        off += x.clen + x.pad;
        r[n++] = x;
    }
    return n;
}

struct pair {
    const uint8_t *name, *value;
    size_t nlen, vlen;
    bool long_name, long_value; /* the 4-byte length form was used */
};

struct decoded {
    uint8_t role_hi, role_lo, flags;
    struct bytes params, in; /* the PARAMS and STDIN streams' content */
    size_t params_recs, in_recs;
    struct pair pairs[MAX_PAIRS];
    size_t npairs;
};

static size_t nv_len(const uint8_t *p, size_t avail, size_t *n, bool *is_long)
{
    assert_true(avail >= 1);
    if (p[0] < 128) {
        *n = p[0];
        *is_long = false;
        return 1;
    }
    assert_true(avail >= 4);
    *n = (size_t)(p[0] & 0x7f) << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
    *is_long = true;
    return 4;
}

static void decode_pairs(struct decoded *d)
{
    const uint8_t *p = d->params.p;
    size_t off = 0, len = d->params.len;

    while (off < len) {
        struct pair *x = &d->pairs[d->npairs++];

        assert_true(d->npairs <= MAX_PAIRS);
        off += nv_len(p + off, len - off, &x->nlen, &x->long_name);
        off += nv_len(p + off, len - off, &x->vlen, &x->long_value);
        /* the short form whenever it fits, the long one only when needed */
        assert_int_equal(x->long_name, x->nlen >= 128);
        assert_int_equal(x->long_value, x->vlen >= 128);
        assert_true(len - off >= x->nlen + x->vlen);
        x->name = p + off;
        x->value = p + off + x->nlen;
        off += x->nlen + x->vlen;
    }
}

/* Checks a whole request's structure and collects its streams and pairs. */
static void decode_request(const uint8_t *p, size_t len, struct decoded *d)
{
    static struct rec r[MAX_RECS];
    size_t n = read_records(p, len, r, MAX_RECS), i = 1;

    memset(d, 0, sizeof(*d));
    assert_true(n >= 3);
    for (size_t k = 0; k < n; k++)
        assert_int_equal(r[k].id, FCGI_REQUEST_ID);
    assert_int_equal(r[0].type, FCGI_BEGIN_REQUEST);
    assert_int_equal(r[0].clen, 8);
    d->role_hi = r[0].content[0];
    d->role_lo = r[0].content[1];
    d->flags = r[0].content[2];
    for (size_t k = 3; k < 8; k++)
        assert_int_equal(r[0].content[k], 0);
    /* PARAMS records, full ones (65535) before the last, then an empty one */
    for (; i < n && r[i].type == FCGI_PARAMS && r[i].clen > 0; i++, d->params_recs++) {
        if (i > 1) assert_int_equal(r[i - 1].clen, FCGI_MAX_CONTENT);
        bytes_put(&d->params, r[i].content, r[i].clen);
    }
    assert_true(i < n);
    assert_int_equal(r[i].type, FCGI_PARAMS);
    assert_int_equal(r[i].clen, 0);
    i++;
    for (; i < n && r[i].type == FCGI_STDIN && r[i].clen > 0; i++, d->in_recs++) {
        if (d->in_recs > 0) assert_int_equal(r[i - 1].clen, FCGI_MAX_CONTENT);
        bytes_put(&d->in, r[i].content, r[i].clen);
    }
    assert_int_equal(i, n - 1);
    assert_int_equal(r[i].type, FCGI_STDIN);
    assert_int_equal(r[i].clen, 0);
    decode_pairs(d);
}

static void decoded_free(struct decoded *d)
{
    bytes_free(&d->params);
    bytes_free(&d->in);
}

/* The value of pair `name`, checking it appears exactly once; NULL if absent. */
static const struct pair *find_pair(const struct decoded *d, const char *name)
{
    const struct pair *found = NULL;

    for (size_t i = 0; i < d->npairs; i++) {
        const struct pair *x = &d->pairs[i];

        if (x->nlen == strlen(name) && memcmp(x->name, name, x->nlen) == 0) {
            if (found != NULL) fail_msg("param %s appears twice", name);
            found = x;
        }
    }
    return found;
}

static void expect_pair_at(const struct decoded *d, size_t i, const char *name, const char *value)
{
    const struct pair *x;

    assert_true(i < d->npairs);
    x = &d->pairs[i];
    if (x->nlen != strlen(name) || memcmp(x->name, name, x->nlen) != 0)
        fail_msg("pair %zu is %.*s, want %s", i, (int)x->nlen, (const char *)x->name, name);
    if (x->vlen != strlen(value) || memcmp(x->value, value, x->vlen) != 0)
        fail_msg("%s = %.*s, want %s", name, (int)x->vlen, (const char *)x->value, value);
}

/* ---- the codec ------------------------------------------------------------ */

struct ctx {
    _Alignas(max_align_t) unsigned char st[STATE_MAX];
    struct fcgi_opts opts;
    struct codec_cfg cfg;
};

static void ctx_init(struct ctx *c, const struct fcgi_opts *o, size_t size, bool keep)
{
    assert_true(fcgi_codec.state_size <= STATE_MAX);
    c->opts = *o;
    c->cfg = (struct codec_cfg){ .size = size, .keep_alive = keep, .opts = &c->opts };
    fcgi_codec.init(c->st, &c->cfg);
}

/* Encodes into a guarded buffer of exactly max_request bytes; checks cap - 1 is refused. */
static uint8_t *encode(struct ctx *c, struct guard *g, size_t *len)
{
    size_t need = fcgi_codec.max_request(&c->cfg);
    uint8_t *buf = guard_alloc(g, need);

    assert_true(need > 0);
    assert_int_equal(fcgi_codec.encode(c->st, buf, need - 1), 0);
    assert_int_equal(fcgi_codec.encode(c->st, buf, need), need);
    *len = need;
    return buf;
}

static void test_find(void **state)
{
    (void)state;
    assert_string_equal(fcgi_codec.name, "fcgi");
    assert_true(fcgi_codec.fixed);
    assert_non_null(fcgi_codec.max_request);
    assert_non_null(fcgi_codec.eof);
    assert_non_null(fcgi_codec.reset);
}

static void test_encode_defaults(void **state)
{
    static const char *const want[][2] = {
        { "SCRIPT_FILENAME", "/var/www/html/bench" },
        { "SCRIPT_NAME", "/bench" },
        { "REQUEST_URI", "/bench" },
        { "REQUEST_METHOD", "GET" },
        { "QUERY_STRING", "" },
        { "DOCUMENT_ROOT", "/var/www/html" },
        { "SERVER_PROTOCOL", "HTTP/1.1" },
        { "GATEWAY_INTERFACE", "CGI/1.1" },
        { "REMOTE_ADDR", "127.0.0.1" },
        { "SERVER_SOFTWARE", "hopbench" },
    };
    struct fcgi_opts o = { 0 };

    (void)state;
    for (int keep = 0; keep < 2; keep++) {
        struct ctx c;
        struct guard g;
        struct decoded d;
        size_t len;
        uint8_t *req;

        ctx_init(&c, &o, 1000, keep); /* size is the POST body: ignored for GET */
        req = encode(&c, &g, &len);
        decode_request(req, len, &d);
        assert_int_equal(d.role_hi, 0);
        assert_int_equal(d.role_lo, FCGI_RESPONDER);
        assert_int_equal(d.flags, keep ? FCGI_KEEP_CONN : 0);
        assert_int_equal(d.npairs, ARRAY_LEN(want));
        for (size_t i = 0; i < ARRAY_LEN(want); i++)
            expect_pair_at(&d, i, want[i][0], want[i][1]);
        assert_null(find_pair(&d, "CONTENT_LENGTH"));
        assert_null(find_pair(&d, "CONTENT_TYPE"));
        assert_int_equal(d.in.len, 0);
        assert_int_equal(d.params_recs, 1);
        decoded_free(&d);
        guard_free(&g);
    }
}

static void test_encode_options(void **state)
{
    static const char *const extra[] = { "HTTP_HOST=example", "EMPTY=", "A=b=c", "NOEQ" };
    struct fcgi_opts o = {
        .method = "POST",
        .path = "/x/y.php",
        .query = "a=1&b=2",
        .docroot = "/srv/",
        .params = extra,
        .nparams = ARRAY_LEN(extra),
    };
    const size_t size = 3 * FCGI_MAX_CONTENT + 17; /* four STDIN records */
    struct ctx c;
    struct guard g;
    struct decoded d;
    size_t len, base;
    uint8_t *req;

    (void)state;
    ctx_init(&c, &o, size, true);
    req = encode(&c, &g, &len);
    decode_request(req, len, &d);
    expect_pair_at(&d, 0, "SCRIPT_FILENAME", "/srv/x/y.php"); /* no "//" */
    expect_pair_at(&d, 1, "SCRIPT_NAME", "/x/y.php");
    expect_pair_at(&d, 2, "REQUEST_URI", "/x/y.php?a=1&b=2");
    expect_pair_at(&d, 3, "REQUEST_METHOD", "POST");
    expect_pair_at(&d, 4, "QUERY_STRING", "a=1&b=2");
    expect_pair_at(&d, 5, "DOCUMENT_ROOT", "/srv/");
    base = 10;
    expect_pair_at(&d, base, "CONTENT_LENGTH", "196622");
    expect_pair_at(&d, base + 1, "CONTENT_TYPE", "application/octet-stream");
    expect_pair_at(&d, base + 2, "HTTP_HOST", "example");
    expect_pair_at(&d, base + 3, "EMPTY", "");
    expect_pair_at(&d, base + 4, "A", "b=c");
    expect_pair_at(&d, base + 5, "NOEQ", "");
    assert_int_equal(d.npairs, base + 6);
    assert_int_equal(d.in_recs, 4);
    assert_int_equal(d.in.len, size);
    for (size_t i = 0; i < size; i++)
        if (d.in.p[i] != fcgi_pattern_byte(i)) fail_msg("STDIN byte %zu differs", i);
    decoded_free(&d);
    guard_free(&g);

    /* An explicit script wins; a docroot without '/' joins with the path as is. */
    o = (struct fcgi_opts){ .script = "/opt/s.php", .docroot = "/d", .method = "HEAD" };
    ctx_init(&c, &o, 5, false);
    req = encode(&c, &g, &len);
    decode_request(req, len, &d);
    expect_pair_at(&d, 0, "SCRIPT_FILENAME", "/opt/s.php");
    expect_pair_at(&d, 3, "REQUEST_METHOD", "HEAD");
    assert_null(find_pair(&d, "CONTENT_LENGTH"));
    assert_int_equal(d.in.len, 0);
    decoded_free(&d);
    guard_free(&g);
    o = (struct fcgi_opts){ .docroot = "/d" };
    ctx_init(&c, &o, 0, false);
    req = encode(&c, &g, &len);
    decode_request(req, len, &d);
    expect_pair_at(&d, 0, "SCRIPT_FILENAME", "/d/bench");
    decoded_free(&d);
    guard_free(&g);

    /* POST with an empty body: the lengths say 0, STDIN is only its terminator */
    o = (struct fcgi_opts){ .method = "POST" };
    ctx_init(&c, &o, 0, false);
    req = encode(&c, &g, &len);
    decode_request(req, len, &d);
    expect_pair_at(&d, 10, "CONTENT_LENGTH", "0");
    assert_int_equal(d.in_recs, 0);
    decoded_free(&d);
    guard_free(&g);
}

/* Names and values of 127, 128 and more bytes; a PARAMS stream over several records. */
static void test_encode_long(void **state)
{
    static const size_t lens[] = { 127, 128, 129, 300, 65535, 70000 };

    (void)state;
    for (size_t li = 0; li < ARRAY_LEN(lens); li++) {
        size_t n = lens[li];
        char *path = malloc(n + 1), *name = malloc(n + 3), *param = malloc(n + 3);
        const char *params[1];
        struct fcgi_opts o = { 0 };
        struct ctx c;
        struct guard g;
        struct decoded d;
        const struct pair *x;
        size_t len;
        uint8_t *req;

        assert_non_null(path);
        assert_non_null(name);
        assert_non_null(param);
        path[0] = '/';
        for (size_t i = 1; i < n; i++)
            path[i] = (char)('a' + i % 26);
        path[n] = '\0';
        for (size_t i = 0; i < n; i++)
            name[i] = (char)('A' + i % 26);
        name[n] = '\0';
        snprintf(param, n + 3, "%s=v", name);
        params[0] = param;
        o.path = path;
        o.params = params;
        o.nparams = 1;
        ctx_init(&c, &o, 0, true);
        req = encode(&c, &g, &len);
        decode_request(req, len, &d); /* checks the length forms */
        expect_pair_at(&d, 1, "SCRIPT_NAME", path);
        x = find_pair(&d, name);
        assert_non_null(x);
        assert_true(x->long_name == (n >= 128));
        assert_int_equal(x->vlen, 1);
        /* SCRIPT_FILENAME + SCRIPT_NAME + REQUEST_URI + the extra name: > 65535 for 65535 */
        assert_int_equal(d.params_recs,
                         d.params.len / FCGI_MAX_CONTENT + (d.params.len % FCGI_MAX_CONTENT != 0));
        if (n >= 65535) assert_true(d.params_recs >= 4);
        decoded_free(&d);
        guard_free(&g);
        free(path);
        free(name);
        free(param);
    }
}

static void test_encode_fixed(void **state)
{
    struct fcgi_opts o = { .method = "POST" };
    struct ctx c;
    struct guard g1, g2;
    size_t l1, l2;
    uint8_t *a, *b;

    (void)state;
    ctx_init(&c, &o, 1000, true);
    a = encode(&c, &g1, &l1);
    b = encode(&c, &g2, &l2);
    assert_int_equal(l1, l2);
    assert_memory_equal(a, b, l1);
    /* the state from feeding does not change the request */
    {
        size_t used;
        struct codec_msg msg = { 0 };
        const uint8_t half[] = { 1, 6, 0, 1, 0, 9 };

        assert_int_equal(fcgi_codec.feed(c.st, half, sizeof(half), &used, &msg), CODEC_NEED_MORE);
        assert_int_equal(fcgi_codec.encode(c.st, b, l2), l2);
        assert_memory_equal(a, b, l1);
    }
    guard_free(&g1);
    guard_free(&g2);
}

/* ---- replies: one verdict however split ----------------------------------- */

struct want {
    enum codec_rc rc;
    size_t used;           /* DONE: reply length; ERROR: where *used stopped */
    enum codec_err err;    /* ERROR */
    size_t err_off;        /* ERROR */
    unsigned status;       /* DONE */
    bool error_reply;      /* DONE */
    uint32_t stderr_bytes; /* DONE */
};

/* Feeds the pieces of rep cut at cuts[0..ncuts), each from its own guarded buffer. */
static void feed_pieces(struct ctx *c, const uint8_t *rep, size_t len, const size_t *cuts,
                        size_t ncuts, const struct want *w, const char *what)
{
    size_t start = 0;
    struct codec_msg msg = { .err_off = SIZE_MAX };

    fcgi_codec.reset(c->st);
    for (size_t k = 0; k <= ncuts; k++) {
        size_t end = k < ncuts ? cuts[k] : len, used = SIZE_MAX;
        struct guard g;
        uint8_t *piece = guard_alloc(&g, end - start);
        enum codec_rc rc;

        memcpy(piece, rep + start, end - start);
        rc = fcgi_codec.feed(c->st, piece, end - start, &used, &msg);
        guard_free(&g);
        assert_true(used <= end - start);
        if (rc == CODEC_NEED_MORE) {
            if (used != end - start)
                fail_msg("%s: NEED_MORE used %zu of %zu", what, used, end - start);
            start = end;
            continue;
        }
        if (rc != w->rc || start + used != w->used)
            fail_msg("%s: piece %zu at %zu: rc %d at %zu (err %s at %zu), want %d at %zu", what, k,
                     start, (int)rc, start + used, codec_err_str(msg.err), msg.err_off, (int)w->rc,
                     w->used);
        if (rc == CODEC_ERROR) {
            if (msg.err != w->err || msg.err_off != w->err_off)
                fail_msg("%s: err %s at %zu, want %s at %zu", what, codec_err_str(msg.err),
                         msg.err_off, codec_err_str(w->err), w->err_off);
        } else if (msg.status != w->status || msg.error_reply != w->error_reply ||
                   msg.stderr_bytes != w->stderr_bytes || msg.err != CODEC_ERR_NONE ||
                   msg.closes != !c->cfg.keep_alive) {
            fail_msg("%s: status %u error_reply %d stderr %u closes %d", what, msg.status,
                     msg.error_reply, msg.stderr_bytes, msg.closes);
        }
        return;
    }
    if (w->rc != CODEC_NEED_MORE) fail_msg("%s: NEED_MORE, want %d", what, (int)w->rc);
}

/* Whole, at every two-way split, and byte by byte. */
static void check_reply(struct ctx *c, const struct bytes *rep, const struct want *w,
                        const char *what)
{
    size_t *cuts = malloc((rep->len + 1) * sizeof(*cuts));

    assert_non_null(cuts);
    feed_pieces(c, rep->p, rep->len, NULL, 0, w, what);
    for (size_t k = 0; k <= rep->len; k++)
        feed_pieces(c, rep->p, rep->len, &k, 1, w, what);
    for (size_t k = 0; k < rep->len; k++)
        cuts[k] = k + 1;
    if (rep->len > 0) feed_pieces(c, rep->p, rep->len, cuts, rep->len - 1, w, what);
    free(cuts);
}

static const struct want *done(unsigned status, size_t len, uint32_t err_bytes)
{
    static struct want w;

    w = (struct want){ .rc = CODEC_DONE, .used = len, .status = status, .stderr_bytes = err_bytes };
    return &w;
}

static const struct want *error(enum codec_err e, size_t used, size_t err_off)
{
    static struct want w;

    w = (struct want){ .rc = CODEC_ERROR, .used = used, .err = e, .err_off = err_off };
    return &w;
}

static void test_reply_good(void **state)
{
    struct fcgi_opts o = { .expect_body = "bench" }, plain = { 0 };
    struct ctx c;
    struct bytes b = { 0 };

    (void)state;
    for (int keep = 0; keep < 2; keep++) {
        ctx_init(&c, &o, 0, keep);
        put_simple(&b, "Content-Type: text/plain\r\n\r\nbench");
        check_reply(&c, &b, done(200, b.len, 0), "simple");
        bytes_free(&b);
    }

    /* Status, bare "\n" lines, a body the codec does not check */
    ctx_init(&c, &plain, 0, true);
    put_simple(&b, "Status: 404 Not Found\nContent-type: text/html\n\nFile not found.\n");
    check_reply(&c, &b, done(404, b.len, 0), "404, LF only");
    bytes_free(&b);
    put_simple(&b, "X-A: 1\r\nSTATUS:500\r\n\r\n");
    check_reply(&c, &b, done(500, b.len, 0), "STATUS:500, empty body");
    bytes_free(&b);
    put_simple(&b, "Status:\t302\r\nStatusx: 1\r\nX-Status: 404\r\n\r\n");
    check_reply(&c, &b, done(302, b.len, 0), "last Status-like lines are not Status");
    bytes_free(&b);
    put_simple(&b, "Status: 201\r\n\r\n"); /* the code ends the line */
    check_reply(&c, &b, done(201, b.len, 0), "Status: 201 CRLF");
    bytes_free(&b);
    put_simple(&b, "\r\nStatus: 404\r\n\r\n"); /* a blank first line: the rest is body */
    check_reply(&c, &b, done(200, b.len, 0), "blank first line");
    bytes_free(&b);

    /* php-fpm's "Primary script unknown": STDERR, then a 404 */
    ctx_init(&c, &plain, 0, true);
    put_str(&b, FCGI_STDERR, "Primary script unknown", 2);
    put_simple(&b, "Status: 404 Not Found\r\nContent-type: text/html; charset=UTF-8\r\n\r\n"
                   "File not found.\n");
    check_reply(&c, &b, done(404, b.len, 22), "primary script unknown");
    bytes_free(&b);
}

static void test_reply_records(void **state)
{
    struct fcgi_opts o = { .expect_body = "hello world" };
    struct ctx c;
    struct bytes b = { 0 };
    static const char *const parts[] = { "Sta",   "tus: 3", "02 Found\r", "\n",    "\r",
                                         "\nhel", "",       "lo",         " world" };

    (void)state;
    ctx_init(&c, &o, 0, true);
    /*
     * Headers and body cut at odd places, STDERR between, padding 0..255. The
     * empty STDOUT record in the middle is tolerated, not taken as the end.
     */
    for (size_t i = 0; i < ARRAY_LEN(parts); i++) {
        put_str(&b, FCGI_STDOUT, parts[i], (uint8_t)(i * 37));
        put_str(&b, FCGI_STDERR, "e!", (uint8_t)(i == 4 ? 255 : 6));
    }
    put_rec(&b, FCGI_STDOUT, FCGI_REQUEST_ID, NULL, 0, 0);
    put_str(&b, FCGI_STDERR, "late", 4);
    put_end(&b, FCGI_REQUEST_ID, 7, FCGI_REQUEST_COMPLETE, 8); /* appStatus is not an error */
    check_reply(&c, &b, done(302, b.len, 2 * ARRAY_LEN(parts) + 4), "records");
    bytes_free(&b);
}

static void test_reply_protocol_status(void **state)
{
    struct fcgi_opts o = { .expect_body = "bench" }, plain = { 0 };
    struct ctx c;
    struct bytes b = { 0 };
    struct want w;

    (void)state;
    for (uint8_t ps = 1; ps <= 3; ps++) {
        ctx_init(&c, &o, 0, ps != 2);
        put_end(&b, FCGI_REQUEST_ID, 0, ps, 0);
        w = *done(0, b.len, 0);
        w.error_reply = true;
        check_reply(&c, &b, &w, "protocolStatus, no STDOUT"); /* no body check either */
        bytes_free(&b);
    }
    ctx_init(&c, &plain, 0, true); /* a body, so not checked against "bench" */
    put_str(&b, FCGI_STDOUT, "Status: 503\r\n\r\nbusy", 0);
    put_end(&b, FCGI_REQUEST_ID, 0, FCGI_OVERLOADED, 0);
    w = *done(503, b.len, 0);
    w.error_reply = true;
    check_reply(&c, &b, &w, "protocolStatus 2 with STDOUT");
    bytes_free(&b);
}

static void test_reply_errors(void **state)
{
    struct fcgi_opts plain = { 0 }, body = { .expect_body = "bench" };
    struct ctx c;
    struct bytes b = { 0 };
    uint8_t h[FCGI_HEADER_LEN];
    size_t at;

    (void)state;
    ctx_init(&c, &plain, 0, true);
    /* header fields: the first wrong byte */
    put_simple(&b, "\r\n");
    b.p[0] = 2;
    check_reply(&c, &b, error(CODEC_ERR_MISMATCH, 0, 0), "version");
    b.p[0] = 1;
    b.p[3] = 2;
    check_reply(&c, &b, error(CODEC_ERR_MISMATCH, 3, 3), "requestId 2");
    b.p[3] = 0;
    check_reply(&c, &b, error(CODEC_ERR_MISMATCH, 3, 3), "requestId 0");
    b.p[2] = 1;
    b.p[3] = 1;
    check_reply(&c, &b, error(CODEC_ERR_MISMATCH, 2, 2), "requestId 257");
    b.p[2] = 0;
    for (unsigned t = 0; t < 256; t++) {
        if (t == FCGI_STDOUT || t == FCGI_STDERR || t == FCGI_END_REQUEST) continue;
        b.p[1] = (uint8_t)t;
        check_reply(&c, &b, error(CODEC_ERR_MISMATCH, 1, 1), "record type");
    }
    bytes_free(&b);

    /* a management reply (GET_VALUES_RESULT, id 0) is not ours */
    put_rec(&b, FCGI_GET_VALUES_RESULT, 0, NULL, 0, 0);
    check_reply(&c, &b, error(CODEC_ERR_MISMATCH, 1, 1), "management record");
    bytes_free(&b);

    /* END_REQUEST with a body other than 8 bytes */
    fcgi_put_header(h, FCGI_END_REQUEST, 1, 9, 0);
    bytes_put(&b, h, sizeof(h));
    check_reply(&c, &b, error(CODEC_ERR_MISMATCH, 5, 5), "END_REQUEST length 9");
    bytes_free(&b);
    fcgi_put_header(h, FCGI_END_REQUEST, 1, 0x108, 0);
    bytes_put(&b, h, sizeof(h));
    check_reply(&c, &b, error(CODEC_ERR_MISMATCH, 4, 4), "END_REQUEST length 264");
    bytes_free(&b);

    /* malformed Status headers: at the offending byte (STDOUT content starts at 8) */
    put_simple(&b, "Status: abc\r\n\r\n");
    check_reply(&c, &b, error(CODEC_ERR_MISMATCH, 16, 16), "Status: abc");
    bytes_free(&b);
    put_simple(&b, "Status: 20\r\n\r\n");
    check_reply(&c, &b, error(CODEC_ERR_MISMATCH, 18, 18), "Status: 20");
    bytes_free(&b);
    put_simple(&b, "Status: 2000\r\n\r\n");
    check_reply(&c, &b, error(CODEC_ERR_MISMATCH, 19, 19), "Status: 2000");
    bytes_free(&b);
    put_simple(&b, "Status: 200x\r\n\r\n");
    check_reply(&c, &b, error(CODEC_ERR_MISMATCH, 19, 19), "Status: 200x");
    bytes_free(&b);
    put_simple(&b, "Status: 099\r\n\r\n");
    check_reply(&c, &b, error(CODEC_ERR_MISMATCH, 16, 16), "Status: 099");
    bytes_free(&b);
    put_simple(&b, "Status:\r\n\r\n");
    check_reply(&c, &b, error(CODEC_ERR_MISMATCH, 15, 15), "Status: nothing");
    bytes_free(&b);

    /* headers that never end, and no STDOUT at all, with REQUEST_COMPLETE */
    put_simple(&b, "Content-Type: x\r\n");
    at = b.len - 16;
    check_reply(&c, &b, error(CODEC_ERR_MISMATCH, b.len - 1, at), "headers unterminated");
    bytes_free(&b);
    put_end(&b, FCGI_REQUEST_ID, 0, FCGI_REQUEST_COMPLETE, 0);
    check_reply(&c, &b, error(CODEC_ERR_MISMATCH, 15, 0), "no STDOUT");
    bytes_free(&b);

    /* --expect-body: differing, longer, shorter */
    ctx_init(&c, &body, 0, true);
    put_simple(&b, "\r\nbeNch");
    check_reply(&c, &b, error(CODEC_ERR_BODY, 12, 12), "body differs");
    bytes_free(&b);
    put_simple(&b, "\r\nbenchX");
    check_reply(&c, &b, error(CODEC_ERR_BODY, 15, 15), "body longer");
    bytes_free(&b);
    put_str(&b, FCGI_STDOUT, "\r\nben", 0);
    put_str(&b, FCGI_STDOUT, "ch", 0);
    put_str(&b, FCGI_STDOUT, "!", 0);
    check_reply(&c, &b, error(CODEC_ERR_BODY, 31, 31), "body longer, next record");
    bytes_free(&b);
    put_simple(&b, "\r\nben");
    at = b.len - 16;
    check_reply(&c, &b, error(CODEC_ERR_BODY, b.len - 1, at), "body shorter");
    bytes_free(&b);
    put_simple(&b, "Status: 404\r\n\r\nFile not found.\n");
    check_reply(&c, &b, error(CODEC_ERR_BODY, 23, 23), "404 body");
    bytes_free(&b);
}

/* Garbage: an error at the first byte that cannot be FastCGI, however split. */
static void test_reply_garbage(void **state)
{
    static const char *const junk[] = { "HTTP/1.1 200 OK\r\n\r\n", "+PONG\r\n", "\0\0\0\0" };
    struct fcgi_opts o = { 0 };
    struct ctx c;
    uint64_t x = 0x9e3779b97f4a7c15u;

    (void)state;
    ctx_init(&c, &o, 0, true);
    for (size_t i = 0; i < ARRAY_LEN(junk); i++) {
        struct bytes b = { 0 };

        bytes_put(&b, junk[i], strlen(junk[i]) + 1);
        check_reply(&c, &b, error(CODEC_ERR_MISMATCH, 0, 0), junk[i]);
        bytes_free(&b);
    }
    /* random bytes after a valid header start: never a crash, never more than given */
    for (int round = 0; round < 2000; round++) {
        uint8_t buf[64];
        size_t used = SIZE_MAX, off = 0;
        struct codec_msg msg = { 0 };
        enum codec_rc rc = CODEC_NEED_MORE;

        for (size_t i = 0; i < sizeof(buf); i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            buf[i] = (uint8_t)x;
        }
        buf[0] = 1;
        buf[1] = (uint8_t)(6 + round % 2);
        buf[2] = 0;
        buf[3] = 1;
        fcgi_codec.reset(c.st);
        while (off < sizeof(buf) && rc != CODEC_ERROR) {
            rc = fcgi_codec.feed(c.st, buf + off, sizeof(buf) - off, &used, &msg);
            assert_true(used <= sizeof(buf) - off);
            off += used;
        }
    }
}

/* CGI headers: exactly 64 KiB is fine, one byte more is too big. */
static void test_reply_header_cap(void **state)
{
    struct fcgi_opts o = { 0 };
    struct ctx c;
    struct bytes b = { 0 }, hdr = { 0 };
    size_t used;
    struct codec_msg msg = { 0 };

    (void)state;
    ctx_init(&c, &o, 0, true);
    for (int extra = 0; extra < 2; extra++) {
        size_t total = FCGI_MAX_HEADER + (size_t)extra;

        /* lines of "X: aaa...\r\n" filling total - 2, then "\r\n" */
        while (hdr.len < total - 2) {
            size_t n = total - 2 - hdr.len < 1000 ? total - 2 - hdr.len : 1000;
            char l[1000];

            assert_true(n >= 5);
            memset(l, 'a', n);
            l[0] = 'X';
            l[1] = ':';
            l[2] = ' ';
            l[n - 2] = '\r';
            l[n - 1] = '\n';
            bytes_put(&hdr, l, n);
        }
        bytes_put(&hdr, "\r\n", 2);
        assert_int_equal(hdr.len, total);
        for (size_t k = 0; k < hdr.len; k += FCGI_MAX_CONTENT)
            put_rec(&b, FCGI_STDOUT, 1, hdr.p + k,
                    hdr.len - k < FCGI_MAX_CONTENT ? hdr.len - k : FCGI_MAX_CONTENT, 0);
        put_end(&b, 1, 0, 0, 0);
        fcgi_codec.reset(c.st);
        if (extra == 0) {
            assert_int_equal(fcgi_codec.feed(c.st, b.p, b.len, &used, &msg), CODEC_DONE);
            assert_int_equal(used, b.len);
        } else {
            /* the last byte of the headers, in the second record */
            assert_int_equal(fcgi_codec.feed(c.st, b.p, b.len, &used, &msg), CODEC_ERROR);
            assert_int_equal(msg.err, CODEC_ERR_TOO_BIG);
            assert_int_equal(msg.err_off, 2 * FCGI_HEADER_LEN + FCGI_MAX_HEADER);
        }
        bytes_free(&b);
        bytes_free(&hdr);
    }
}

/* Body: exactly 1 GiB is fine, one byte more is too big (no copy: fed record by record). */
static void test_reply_body_cap(void **state)
{
    struct fcgi_opts o = { 0 };
    struct ctx c;
    struct bytes b = { 0 };
    static uint8_t chunk[FCGI_MAX_CONTENT];
    size_t used;
    struct codec_msg msg = { 0 };
    uint64_t body = 0, off, last = 0;

    (void)state;
    ctx_init(&c, &o, 0, true);
    memset(chunk, 'z', sizeof(chunk));
    for (int extra = 0; extra < 2; extra++) {
        uint8_t h[FCGI_HEADER_LEN];
        enum codec_rc rc = CODEC_NEED_MORE;

        fcgi_codec.reset(c.st);
        put_str(&b, FCGI_STDOUT, "\r\n", 0);
        assert_int_equal(fcgi_codec.feed(c.st, b.p, b.len, &used, &msg), CODEC_NEED_MORE);
        off = b.len;
        bytes_free(&b);
        for (body = 0; body < FCGI_MAX_BODY + (uint64_t)extra && rc == CODEC_NEED_MORE;) {
            uint64_t n = FCGI_MAX_BODY + (uint64_t)extra - body;

            if (n > FCGI_MAX_CONTENT) n = FCGI_MAX_CONTENT;
            last = n;
            fcgi_put_header(h, FCGI_STDOUT, 1, (uint16_t)n, 0);
            rc = fcgi_codec.feed(c.st, h, sizeof(h), &used, &msg);
            assert_int_equal(rc, CODEC_NEED_MORE);
            off += sizeof(h);
            rc = fcgi_codec.feed(c.st, chunk, (size_t)n, &used, &msg);
            if (rc == CODEC_NEED_MORE) off += n;
            body += n;
        }
        if (extra == 0) {
            assert_int_equal(rc, CODEC_NEED_MORE);
            put_end(&b, 1, 0, 0, 0);
            assert_int_equal(fcgi_codec.feed(c.st, b.p, b.len, &used, &msg), CODEC_DONE);
            assert_int_equal(msg.status, 200);
            bytes_free(&b);
        } else {
            assert_int_equal(rc, CODEC_ERROR);
            assert_int_equal(msg.err, CODEC_ERR_TOO_BIG);
            /* the byte after 1 GiB of body: the last one of the last record */
            assert_int_equal(msg.err_off, off + used);
            assert_int_equal(used, last - 1);
        }
    }
}

/* STDERR beyond 4 GiB: the count saturates instead of wrapping. */
static void test_reply_stderr_saturates(void **state)
{
    static uint8_t chunk[FCGI_MAX_CONTENT];
    struct fcgi_opts o = { 0 };
    struct ctx c;
    struct bytes b = { 0 };
    uint8_t h[FCGI_HEADER_LEN];
    size_t used;
    struct codec_msg msg = { 0 };
    const uint64_t records = ((uint64_t)UINT32_MAX + FCGI_MAX_CONTENT) / FCGI_MAX_CONTENT + 1;

    (void)state;
    ctx_init(&c, &o, 0, true);
    fcgi_put_header(h, FCGI_STDERR, 1, FCGI_MAX_CONTENT, 0);
    for (uint64_t i = 0; i < records; i++) {
        assert_int_equal(fcgi_codec.feed(c.st, h, sizeof(h), &used, &msg), CODEC_NEED_MORE);
        assert_int_equal(fcgi_codec.feed(c.st, chunk, sizeof(chunk), &used, &msg), CODEC_NEED_MORE);
    }
    put_simple(&b, "\r\n");
    assert_int_equal(fcgi_codec.feed(c.st, b.p, b.len, &used, &msg), CODEC_DONE);
    assert_int_equal(msg.stderr_bytes, UINT32_MAX);
    bytes_free(&b);
}

static void test_pipeline_reset_eof(void **state)
{
    struct fcgi_opts o = { .expect_body = "bench" };
    struct ctx c;
    struct bytes b = { 0 };
    size_t one, used, off = 0;
    struct codec_msg msg = { 0 };

    (void)state;
    ctx_init(&c, &o, 0, true);
    put_simple(&b, "Content-Type: text/plain\r\n\r\nbench");
    one = b.len;
    put_str(&b, FCGI_STDERR, "warn", 4);
    put_simple(&b, "Status: 200 OK\r\n\r\nbench");
    for (int r = 0; r < 2; r++) {
        assert_int_equal(fcgi_codec.feed(c.st, b.p + off, b.len - off, &used, &msg), CODEC_DONE);
        assert_int_equal(msg.stderr_bytes, r == 0 ? 0 : 4);
        assert_int_equal(used, r == 0 ? one : b.len - one);
        off += used;
    }

    /* eof: an error, between replies or within one */
    msg = (struct codec_msg){ 0 };
    assert_int_equal(fcgi_codec.eof(c.st, &msg), CODEC_ERROR);
    assert_int_equal(msg.err, CODEC_ERR_MISMATCH);
    assert_int_equal(fcgi_codec.feed(c.st, b.p, 20, &used, &msg), CODEC_NEED_MORE);
    assert_int_equal(fcgi_codec.eof(c.st, &msg), CODEC_ERROR);
    assert_int_equal(msg.err, CODEC_ERR_MISMATCH);
    assert_int_equal(msg.err_off, 20);

    /* reset forgets the partial reply: a whole one parses next */
    fcgi_codec.reset(c.st);
    assert_int_equal(fcgi_codec.feed(c.st, b.p, one, &used, &msg), CODEC_DONE);
    assert_int_equal(used, one);

    /* and after an error */
    b.p[8 + 28] = 'X'; /* the body's first byte */
    assert_int_equal(fcgi_codec.feed(c.st, b.p, one, &used, &msg), CODEC_ERROR);
    assert_int_equal(msg.err, CODEC_ERR_BODY);
    assert_int_equal(msg.err_off, 8 + 28);
    b.p[8 + 28] = 'b';
    fcgi_codec.reset(c.st);
    assert_int_equal(fcgi_codec.feed(c.st, b.p, one, &used, &msg), CODEC_DONE);
    bytes_free(&b);
}

/* ---- the server ------------------------------------------------------------ */

#define SIM_IN_CAP 16384

/* The frame, as far as a protocol part can tell: a bounded buffer and the call rules. */
struct sim {
    void *shared;
    struct server_cfg cfg;
    _Alignas(max_align_t) uint8_t state[512];
    uint8_t in[SIM_IN_CAP];
    size_t in_len, in_cap;
    uint8_t *obuf;
    size_t ocap;
    struct bytes out; /* everything sent */
    unsigned answered;
    unsigned calls_answering; /* process calls with answered > 0 */
    bool closed, bad;
};

static void sim_init(struct sim *s, size_t body_size, size_t ocap)
{
    memset(s, 0, sizeof(*s));
    assert_true(server_fcgi.conn_size <= sizeof(s->state));
    s->cfg.body_size = body_size;
    assert_int_equal(server_fcgi.create(&s->cfg, &s->shared), 0);
    s->in_cap = server_fcgi.in_cap ? server_fcgi.in_cap : SERVER_BUF;
    assert_true(s->in_cap <= SIM_IN_CAP);
    s->ocap = ocap ? ocap : server_fcgi.out_cap;
    s->obuf = malloc(s->ocap);
    assert_non_null(s->obuf);
}

static void sim_free(struct sim *s)
{
    server_fcgi.destroy(s->shared);
    free(s->obuf);
    bytes_free(&s->out);
}

/* One call on what the buffer holds. Returns true if it made progress. */
static bool sim_call(struct sim *s)
{
    struct server_io io = { .state = s->state, .obuf = s->obuf, .ocap = s->ocap };
    struct guard g;
    uint8_t *in = guard_alloc(&g, s->in_len); /* an over-read hits the guard page */
    size_t n;

    io.out = (const uint8_t *)"stale";
    io.out_len = 5;
    io.close = true;
    io.answered = 99;
    memcpy(in, s->in, s->in_len);
    n = server_fcgi.process(s->shared, &io, in, s->in_len);
    guard_free(&g); /* io.out never points into the input */
    /* the reply is sent even with an error (it answers what came before) */
    bytes_put(&s->out, io.out, io.out_len);
    if (io.out_len > 0) assert_non_null(io.out);
    if (io.out_len == 0) assert_int_equal(io.answered, 0);
    s->answered += io.answered;
    s->calls_answering += io.answered > 0;
    if (n == SERVER_PROTO_ERROR) {
        s->bad = true;
        return false;
    }
    assert_true(n <= s->in_len);
    memmove(s->in, s->in + n, s->in_len - n);
    s->in_len -= n;
    if (io.close) s->closed = true;
    if (n == 0 && s->in_len == s->in_cap) fail_msg("a request larger than the buffer");
    return n > 0 || io.out_len > 0;
}

/* Delivers p[0..len) in reads of at most `chunk` bytes, calling process as the frame would. */
static void sim_send(struct sim *s, const uint8_t *p, size_t len, size_t chunk)
{
    size_t off = 0;

    while (off < len && !s->closed && !s->bad) {
        size_t n = len - off;

        if (n > chunk) n = chunk;
        if (n > s->in_cap - s->in_len) n = s->in_cap - s->in_len;
        memcpy(s->in + s->in_len, p + off, n);
        s->in_len += n;
        off += n;
        while (!s->closed && !s->bad && s->in_len > 0 && sim_call(s))
            ;
    }
}

/* The replies in s->out through the codec: how many DONE, all 200 with body `expect`. */
static unsigned sim_replies(const struct sim *s, const char *expect, bool keep)
{
    struct fcgi_opts o = { .expect_body = expect };
    struct ctx c;
    size_t off = 0;
    unsigned n = 0;

    ctx_init(&c, &o, 0, keep);
    while (off < s->out.len) {
        size_t used;
        struct codec_msg msg = { 0 };
        enum codec_rc rc = fcgi_codec.feed(c.st, s->out.p + off, s->out.len - off, &used, &msg);

        if (rc != CODEC_DONE)
            fail_msg("reply %u: rc %d, err %s at %zu", n, (int)rc, codec_err_str(msg.err),
                     msg.err_off);
        assert_int_equal(msg.status, 200);
        assert_false(msg.error_reply);
        assert_int_equal(msg.closes, !keep);
        off += used;
        n++;
    }
    return n;
}

/* A request from the codec itself. */
static uint8_t *codec_request(struct guard *g, size_t *len, const char *method, size_t size,
                              bool keep)
{
    struct fcgi_opts o = { .method = method };
    struct ctx c;

    ctx_init(&c, &o, size, keep);
    return encode(&c, g, len);
}

static void test_server_round_trip(void **state)
{
    (void)state;
    for (int keep = 0; keep < 2; keep++) {
        struct guard g;
        size_t len;
        uint8_t *req = codec_request(&g, &len, NULL, 0, keep);
        struct sim s;

        sim_init(&s, 0, 0);
        sim_send(&s, req, len, len);
        assert_false(s.bad);
        assert_int_equal(s.answered, 1);
        assert_int_equal(s.closed, !keep);
        assert_int_equal(s.in_len, 0);
        assert_int_equal(sim_replies(&s, "bench", keep), 1);
        sim_free(&s);

        /* every split into two reads, and byte by byte: one answer, at the end */
        for (size_t chunk = 1; chunk <= len; chunk += chunk < 20 ? 1 : 23) {
            sim_init(&s, 0, 0);
            sim_send(&s, req, len, chunk);
            assert_false(s.bad);
            assert_int_equal(s.answered, 1);
            assert_int_equal(sim_replies(&s, "bench", keep), 1);
            sim_free(&s);
        }
        for (size_t k = 1; k < len; k++) {
            sim_init(&s, 0, 0);
            sim_send(&s, req, k, k);
            assert_int_equal(s.answered, 0);
            assert_int_equal(s.out.len, 0);
            sim_send(&s, req + k, len - k, len);
            assert_int_equal(s.answered, 1);
            assert_int_equal(sim_replies(&s, "bench", keep), 1);
            sim_free(&s);
        }
        guard_free(&g);
    }
}

static void test_server_pipelined(void **state)
{
    struct guard g;
    size_t len, one_reply;
    uint8_t *req = codec_request(&g, &len, NULL, 0, true);
    struct bytes many = { 0 };
    struct sim s;

    (void)state;
    for (int i = 0; i < 10; i++)
        bytes_put(&many, req, len);

    /* one read, one call: ten answers in one reply */
    sim_init(&s, 0, 0);
    sim_send(&s, many.p, many.len, many.len);
    assert_int_equal(s.answered, 10);
    assert_int_equal(s.calls_answering, 1);
    assert_int_equal(sim_replies(&s, "bench", true), 10);
    one_reply = s.out.len / 10;
    sim_free(&s);

    /* an obuf for two and a half replies: answered in order, over several calls */
    sim_init(&s, 0, one_reply * 5 / 2);
    sim_send(&s, many.p, many.len, many.len);
    assert_false(s.bad);
    assert_int_equal(s.answered, 10);
    assert_int_equal(s.calls_answering, 5);
    assert_int_equal(sim_replies(&s, "bench", true), 10);
    sim_free(&s);

    /* obuf too small for even one reply: requestId 1 goes out from the shared copy */
    sim_init(&s, 0, 16);
    sim_send(&s, many.p, many.len, many.len);
    assert_false(s.bad);
    assert_int_equal(s.answered, 10);
    assert_int_equal(s.calls_answering, 10);
    assert_int_equal(sim_replies(&s, "bench", true), 10);
    sim_free(&s);

    /* without KEEP_CONN the connection ends after the first answer */
    bytes_free(&many);
    guard_free(&g);
    req = codec_request(&g, &len, NULL, 0, false);
    for (int i = 0; i < 3; i++)
        bytes_put(&many, req, len);
    sim_init(&s, 0, 0);
    sim_send(&s, many.p, many.len, many.len);
    assert_true(s.closed);
    assert_int_equal(s.answered, 1);
    assert_int_equal(sim_replies(&s, "bench", false), 1);
    sim_free(&s);
    bytes_free(&many);
    guard_free(&g);
}

/* A large POST body streams through the 16 KiB buffer; a large reply comes out whole. */
static void test_server_large(void **state)
{
    static const size_t sizes[] = { 1, 65535, 65536, 1000000 };
    static const size_t chunks[] = { 1000, 4096, 16384, 100000 };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(sizes); i++) {
        struct guard g;
        size_t len;
        uint8_t *req = codec_request(&g, &len, "POST", sizes[i], true);

        for (size_t k = 0; k < ARRAY_LEN(chunks); k++) {
            struct sim s;

            sim_init(&s, 0, 0);
            sim_send(&s, req, len, chunks[k]);
            sim_send(&s, req, len, chunks[k]);
            assert_false(s.bad);
            assert_int_equal(s.answered, 2);
            assert_int_equal(sim_replies(&s, "bench", true), 2);
            sim_free(&s);
        }
        guard_free(&g);
    }

    /* body_size: headers + the pattern, over several STDOUT records */
    for (size_t b = 1; b <= 300000; b = b * 7 + 3) {
        struct guard g;
        size_t len, n;
        uint8_t *req = codec_request(&g, &len, NULL, 0, true);
        struct sim s;
        static struct rec r[64];
        struct bytes stdout_text = { 0 };
        const char *hdr = "Content-Type: text/plain\r\n\r\n";

        sim_init(&s, b, 0);
        sim_send(&s, req, len, len);
        assert_int_equal(s.answered, 1);
        assert_int_equal(sim_replies(&s, NULL, true), 1);
        n = read_records(s.out.p, s.out.len, r, ARRAY_LEN(r));
        for (size_t j = 0; j + 1 < n; j++) {
            assert_int_equal(r[j].type, FCGI_STDOUT);
            assert_int_equal(r[j].id, 1);
            bytes_put(&stdout_text, r[j].content, r[j].clen);
        }
        assert_int_equal(r[n - 2].clen, 0);
        assert_int_equal(r[n - 1].type, FCGI_END_REQUEST);
        assert_int_equal(stdout_text.len, strlen(hdr) + b);
        assert_memory_equal(stdout_text.p, hdr, strlen(hdr));
        for (size_t j = 0; j < b; j++)
            if (stdout_text.p[strlen(hdr) + j] != fcgi_pattern_byte(j))
                fail_msg("body_size %zu: byte %zu", b, j);
        bytes_free(&stdout_text);
        sim_free(&s);
        guard_free(&g);
    }
}

/* A request written by hand: id, role, flags, params bytes, stdin bytes. */
static void hand_request(struct bytes *b, uint16_t id, uint16_t role, uint8_t flags,
                         const void *params, size_t plen, size_t stdin_len)
{
    uint8_t begin[8] = { (uint8_t)(role >> 8), (uint8_t)role, flags, 0, 0, 0, 0, 0 };
    uint8_t zeros[100] = { 0 };

    put_rec(b, FCGI_BEGIN_REQUEST, id, begin, 8, 0);
    if (plen > 0) put_rec(b, FCGI_PARAMS, id, params, plen, 3);
    put_rec(b, FCGI_PARAMS, id, NULL, 0, 0);
    if (stdin_len > 0) put_rec(b, FCGI_STDIN, id, zeros, stdin_len, 0);
    put_rec(b, FCGI_STDIN, id, NULL, 0, 0);
}

static size_t server_records(struct sim *s, struct rec *r, size_t max)
{
    return read_records(s->out.p, s->out.len, r, max);
}

static void test_server_ids_and_roles(void **state)
{
    static const uint8_t pairs[] = { 4, 1, 'N', 'A', 'M', 'E', 'v', 0, 0 };
    struct bytes b = { 0 };
    struct sim s;
    struct rec r[16];
    size_t n;

    (void)state;
    /* another requestId: the reply carries it in every record */
    hand_request(&b, 0x1234, FCGI_RESPONDER, FCGI_KEEP_CONN, pairs, sizeof(pairs), 5);
    sim_init(&s, 0, 0);
    sim_send(&s, b.p, b.len, 3);
    assert_false(s.bad);
    assert_int_equal(s.answered, 1);
    n = server_records(&s, r, ARRAY_LEN(r));
    assert_int_equal(n, 3);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(r[i].id, 0x1234);
    assert_int_equal(r[2].type, FCGI_END_REQUEST);
    assert_memory_equal(r[2].content, "\0\0\0\0\0\0\0\0", 8);
    sim_free(&s);
    bytes_free(&b);

    /* a role other than RESPONDER: END_REQUEST(UNKNOWN_ROLE), its records ignored */
    hand_request(&b, 1, FCGI_FILTER, FCGI_KEEP_CONN, pairs, sizeof(pairs), 5);
    hand_request(&b, 1, FCGI_RESPONDER, FCGI_KEEP_CONN, NULL, 0, 0);
    sim_init(&s, 0, 0);
    sim_send(&s, b.p, b.len, b.len);
    assert_false(s.bad);
    assert_int_equal(s.answered, 2);
    n = server_records(&s, r, ARRAY_LEN(r));
    assert_int_equal(n, 4);
    assert_int_equal(r[0].type, FCGI_END_REQUEST);
    assert_int_equal(r[0].content[4], FCGI_UNKNOWN_ROLE);
    assert_int_equal(r[3].type, FCGI_END_REQUEST);
    assert_int_equal(r[3].content[4], FCGI_REQUEST_COMPLETE);
    sim_free(&s);
    bytes_free(&b);

    /* a second BEGIN while one is active: CANT_MPX_CONN, the first goes on */
    {
        uint8_t begin[8] = { 0, FCGI_RESPONDER, FCGI_KEEP_CONN };

        put_rec(&b, FCGI_BEGIN_REQUEST, 1, begin, 8, 0);
        put_rec(&b, FCGI_BEGIN_REQUEST, 2, begin, 8, 0);
        put_rec(&b, FCGI_PARAMS, 2, pairs, sizeof(pairs), 0); /* inactive id: ignored */
        put_rec(&b, FCGI_PARAMS, 1, NULL, 0, 0);
        put_rec(&b, FCGI_STDIN, 1, NULL, 0, 0);
    }
    sim_init(&s, 0, 0);
    sim_send(&s, b.p, b.len, b.len);
    assert_false(s.bad);
    assert_int_equal(s.answered, 2);
    n = server_records(&s, r, ARRAY_LEN(r));
    assert_int_equal(n, 4);
    assert_int_equal(r[0].id, 2);
    assert_int_equal(r[0].content[4], FCGI_CANT_MPX_CONN);
    assert_int_equal(r[1].type, FCGI_STDOUT);
    assert_int_equal(r[3].id, 1);
    sim_free(&s);
    bytes_free(&b);

    /* ABORT_REQUEST: END_REQUEST at once; without KEEP_CONN, then closed */
    {
        uint8_t begin[8] = { 0, FCGI_RESPONDER, 0 };

        put_rec(&b, FCGI_BEGIN_REQUEST, 1, begin, 8, 0);
        put_rec(&b, FCGI_PARAMS, 1, pairs, 3, 0); /* half a pair: fine before an abort */
        put_rec(&b, FCGI_ABORT_REQUEST, 1, NULL, 0, 0);
        put_rec(&b, FCGI_STDIN, 1, NULL, 0, 0);
    }
    sim_init(&s, 0, 0);
    sim_send(&s, b.p, b.len, b.len);
    assert_false(s.bad);
    assert_true(s.closed);
    assert_int_equal(s.answered, 1);
    n = server_records(&s, r, ARRAY_LEN(r));
    assert_int_equal(n, 1);
    assert_int_equal(r[0].type, FCGI_END_REQUEST);
    sim_free(&s);
    bytes_free(&b);
}

static void test_server_management(void **state)
{
    /* GET_VALUES names FCGI_MAX_CONNS (unknown to us) and FCGI_MPXS_CONNS */
    static const char q[] = "\x0e\x00"
                            "FCGI_MAX_CONNS"
                            "\x0f\x00"
                            "FCGI_MPXS_CONNS";
    struct bytes b = { 0 };
    struct sim s;
    struct rec r[8];
    size_t n;

    (void)state;
    put_rec(&b, FCGI_GET_VALUES, 0, q, sizeof(q) - 1, 0);
    put_rec(&b, FCGI_GET_VALUES, 0, NULL, 0, 0);
    put_rec(&b, 200, 0, "xyz", 3, 5);
    hand_request(&b, 1, FCGI_RESPONDER, FCGI_KEEP_CONN, NULL, 0, 0);
    for (size_t chunk = 1; chunk <= b.len; chunk = chunk * 2 + 1) {
        sim_init(&s, 0, 0);
        sim_send(&s, b.p, b.len, chunk);
        assert_false(s.bad);
        assert_int_equal(s.answered, 1);
        n = server_records(&s, r, ARRAY_LEN(r));
        assert_int_equal(n, 6);
        assert_int_equal(r[0].type, FCGI_GET_VALUES_RESULT);
        assert_int_equal(r[0].id, 0);
        assert_int_equal(r[0].clen, 18);
        assert_memory_equal(r[0].content,
                            "\x0f\x01"
                            "FCGI_MPXS_CONNS0",
                            18);
        assert_int_equal(r[1].type, FCGI_GET_VALUES_RESULT);
        assert_int_equal(r[1].clen, 0);
        assert_int_equal(r[2].type, FCGI_UNKNOWN_TYPE);
        assert_int_equal(r[2].clen, 8);
        assert_int_equal(r[2].content[0], 200);
        assert_int_equal(r[5].type, FCGI_END_REQUEST);
        sim_free(&s);
    }
    bytes_free(&b);
}

/* Malformed streams: SERVER_PROTO_ERROR, after the replies to what came before. */
static void test_server_malformed(void **state)
{
    static const uint8_t half_pair[] = { 4, 1, 'N', 'A' };
    uint8_t begin[8] = { 0, FCGI_RESPONDER, FCGI_KEEP_CONN };
    struct bytes good = { 0 };
    struct sim s;

    (void)state;
    hand_request(&good, 1, FCGI_RESPONDER, FCGI_KEEP_CONN, NULL, 0, 0);
    for (int kase = 0; kase < 9; kase++) {
        struct bytes b = { 0 };

        bytes_put(&b, good.p, good.len);
        switch (kase) {
        case 0: /* version 2 */
            put_rec(&b, FCGI_BEGIN_REQUEST, 1, begin, 8, 0);
            b.p[good.len] = 2;
            break;
        case 1: /* BEGIN_REQUEST body of 7 bytes */
            put_rec(&b, FCGI_BEGIN_REQUEST, 1, begin, 7, 1);
            break;
        case 2: /* BEGIN twice for the same id */
            put_rec(&b, FCGI_BEGIN_REQUEST, 1, begin, 8, 0);
            put_rec(&b, FCGI_BEGIN_REQUEST, 1, begin, 8, 0);
            break;
        case 3: /* STDIN before the PARAMS stream ended */
            put_rec(&b, FCGI_BEGIN_REQUEST, 1, begin, 8, 0);
            put_rec(&b, FCGI_STDIN, 1, NULL, 0, 0);
            break;
        case 4: /* the PARAMS stream ends inside a pair */
            put_rec(&b, FCGI_BEGIN_REQUEST, 1, begin, 8, 0);
            put_rec(&b, FCGI_PARAMS, 1, half_pair, sizeof(half_pair), 4);
            put_rec(&b, FCGI_PARAMS, 1, NULL, 0, 0);
            break;
        case 5: /* PARAMS after its end */
            put_rec(&b, FCGI_BEGIN_REQUEST, 1, begin, 8, 0);
            put_rec(&b, FCGI_PARAMS, 1, NULL, 0, 0);
            put_rec(&b, FCGI_PARAMS, 1, NULL, 0, 0);
            break;
        case 6: /* STDOUT from a client */
            put_rec(&b, FCGI_STDOUT, 1, "x", 1, 7);
            break;
        case 7: /* DATA for a responder */
            put_rec(&b, FCGI_BEGIN_REQUEST, 1, begin, 8, 0);
            put_rec(&b, FCGI_DATA, 1, "x", 1, 7);
            break;
        default: /* GET_VALUES ending inside a pair */
            put_rec(&b, FCGI_GET_VALUES, 0, half_pair, sizeof(half_pair), 0);
            break;
        }
        for (size_t chunk = 1; chunk <= b.len; chunk = chunk < 8 ? chunk + 1 : chunk * 2) {
            sim_init(&s, 0, 0);
            sim_send(&s, b.p, b.len, chunk);
            if (!s.bad) fail_msg("case %d, reads of %zu: accepted", kase, chunk);
            assert_int_equal(s.answered, 1);
            assert_int_equal(sim_replies(&s, "bench", true), 1);
            sim_free(&s);
        }
        bytes_free(&b);
    }
    bytes_free(&good);
}

static void test_server_create(void **state)
{
    struct server_cfg cfg = { .body_size = FCGI_MAX_BODY + 1 };
    void *shared = NULL;

    (void)state;
    assert_int_equal(server_fcgi.create(&cfg, &shared), -EINVAL);
    assert_string_equal(server_fcgi.name, "fcgi");
    assert_true(server_fcgi.out_cap >= 1024);
    server_fcgi.destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_encode_defaults),
        cmocka_unit_test(test_encode_options),
        cmocka_unit_test(test_encode_long),
        cmocka_unit_test(test_encode_fixed),
        cmocka_unit_test(test_reply_good),
        cmocka_unit_test(test_reply_records),
        cmocka_unit_test(test_reply_protocol_status),
        cmocka_unit_test(test_reply_errors),
        cmocka_unit_test(test_reply_garbage),
        cmocka_unit_test(test_reply_header_cap),
        cmocka_unit_test(test_reply_body_cap),
        cmocka_unit_test(test_reply_stderr_saturates),
        cmocka_unit_test(test_pipeline_reset_eof),
        cmocka_unit_test(test_server_round_trip),
        cmocka_unit_test(test_server_pipelined),
        cmocka_unit_test(test_server_large),
        cmocka_unit_test(test_server_ids_and_roles),
        cmocka_unit_test(test_server_management),
        cmocka_unit_test(test_server_malformed),
        cmocka_unit_test(test_server_create),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
