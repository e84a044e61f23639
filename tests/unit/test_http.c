/*
 * test_http: the HTTP/1.1 client codec against its contract (proto/codec.h,
 * proto/http.h) and the reference server's protocol part (server/http.c).
 *
 * Codec: encode writes exact bytes; every reply case in a table is fed whole,
 * split at every offset and byte by byte, each piece ending at a PROT_NONE
 * page (guard.h), and must give the same verdict each time: replies done,
 * their status and closes flag, the error and its offset, and what eof()
 * says afterwards. In the table a '@' in a reply marks the error's byte and
 * is removed before feeding. Caps are checked at their exact edges.
 *
 * Server: process() on single, pipelined, partial and malformed requests,
 * bodies larger than the receive buffer, Connection handling, and a round
 * trip through the codec.
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "proto/codec.h"
#include "proto/http.h"
#include "server/server.h"

#define STATE_MAX 512
#define MAX_DONES 8
#define MIB       ((size_t)1 << 20)

#ifndef ARRAY_LEN /* util.h, through server.h, has it too */
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* ---- codec harness ------------------------------------------------------ */

struct hctx {
    _Alignas(max_align_t) unsigned char st[STATE_MAX];
    struct http_opts opts;
    struct codec_cfg cfg;
};

static void hctx_init(struct hctx *c, const char *method, const char *expect)
{
    assert_true(http_codec.state_size <= STATE_MAX);
    memset(&c->opts, 0, sizeof(c->opts));
    c->opts.method = method;
    c->opts.expect_body = expect;
    c->cfg = (struct codec_cfg){ .size = 0, .keep_alive = true, .opts = &c->opts };
    http_codec.init(c->st, &c->cfg);
}

/* What feeding a stream came to. Offsets are within the stream. */
struct outcome {
    int dones;
    unsigned status[MAX_DONES];
    bool closes[MAX_DONES];
    size_t ends[MAX_DONES]; /* where each reply ended */
    size_t reply_start;     /* where the reply in progress began */
    enum codec_rc last;     /* NEED_MORE, or ERROR */
    enum codec_err err;
    size_t err_at;
};

/* Feeds piece[0..n) (stream offset base) until it is used up or an error. */
static void feed_piece(struct hctx *c, const uint8_t *piece, size_t n, size_t base,
                       struct outcome *o)
{
    size_t off = 0;

    while (off < n && o->last != CODEC_ERROR) {
        struct codec_msg msg = { .err = CODEC_ERR_NONE, .err_off = SIZE_MAX };
        size_t used = SIZE_MAX;
        enum codec_rc rc = http_codec.feed(c->st, piece + off, n - off, &used, &msg);

        if (used > n - off) fail_msg("used %zu of %zu", used, n - off);
        off += used;
        if (rc == CODEC_DONE) {
            assert_int_equal(msg.err, CODEC_ERR_NONE);
            if (o->dones < MAX_DONES) {
                o->status[o->dones] = msg.status;
                o->closes[o->dones] = msg.closes;
                o->ends[o->dones] = base + off;
            }
            o->dones++;
            o->reply_start = base + off;
        } else if (rc == CODEC_ERROR) {
            o->last = CODEC_ERROR;
            o->err = msg.err;
            o->err_at = o->reply_start + msg.err_off;
        } else {
            assert_int_equal(rc, CODEC_NEED_MORE);
            if (off != n) fail_msg("NEED_MORE with %zu of %zu used", off, n);
        }
    }
}

/* Feeds stream[0..len) in pieces cut at cuts[0..ncuts) (ascending), each ending at a guard. */
static void feed_cut(struct hctx *c, const uint8_t *stream, size_t len, const size_t *cuts,
                     size_t ncuts, struct outcome *o)
{
    struct guard g;
    size_t from = 0;

    memset(o, 0, sizeof(*o));
    o->last = CODEC_NEED_MORE;
    guard_alloc(&g, len);
    for (size_t i = 0; i <= ncuts && o->last != CODEC_ERROR; i++) {
        size_t to = i < ncuts ? cuts[i] : len;
        uint8_t *piece = guard_tail(&g, to - from);

        memcpy(piece, stream + from, to - from);
        feed_piece(c, piece, to - from, from, o);
        from = to;
    }
    guard_free(&g);
}

static void feed_bytes(struct hctx *c, const uint8_t *stream, size_t len, struct outcome *o)
{
    struct guard g;
    uint8_t *one = guard_alloc(&g, 1);

    memset(o, 0, sizeof(*o));
    o->last = CODEC_NEED_MORE;
    for (size_t i = 0; i < len && o->last != CODEC_ERROR; i++) {
        *one = stream[i];
        feed_piece(c, one, 1, i, o);
    }
    guard_free(&g);
}

static void same_outcome(const struct outcome *a, const struct outcome *b, const char *what,
                         size_t k)
{
    int n = a->dones < MAX_DONES ? a->dones : MAX_DONES;

    if (a->dones != b->dones || a->last != b->last || a->err != b->err ||
        (a->last == CODEC_ERROR && a->err_at != b->err_at) || a->reply_start != b->reply_start)
        fail_msg("%s %zu: dones %d/%d, last %d/%d, err %s/%s at %zu/%zu", what, k, a->dones,
                 b->dones, (int)a->last, (int)b->last, codec_err_str(a->err), codec_err_str(b->err),
                 a->err_at, b->err_at);
    for (int i = 0; i < n; i++)
        if (a->status[i] != b->status[i] || a->closes[i] != b->closes[i] ||
            a->ends[i] != b->ends[i])
            fail_msg("%s %zu: reply %d differs", what, k, i);
}

/* What eof() says after the stream (when it did not end in an error). */
enum eof_want { EOF_NONE = 0, EOF_DONE, EOF_CUT, EOF_BODY };

static void check_eof(struct hctx *c, const struct outcome *o, size_t len, enum eof_want want,
                      unsigned status, const char *name)
{
    struct codec_msg msg = { .err = CODEC_ERR_NONE, .err_off = SIZE_MAX };
    enum codec_rc rc = http_codec.eof(c->st, &msg);
    size_t cut = len - o->reply_start;

    switch (want) {
    case EOF_DONE:
        if (rc != CODEC_DONE || !msg.closes || msg.status != status)
            fail_msg("%s: eof rc %d closes %d status %u", name, (int)rc, msg.closes, msg.status);
        break;
    case EOF_NONE:
        if (rc != CODEC_ERROR || msg.err != CODEC_ERR_NONE)
            fail_msg("%s: eof rc %d err %s, want error none", name, (int)rc,
                     codec_err_str(msg.err));
        break;
    case EOF_CUT:
    case EOF_BODY:
        if (rc != CODEC_ERROR ||
            msg.err != (want == EOF_CUT ? CODEC_ERR_MISMATCH : CODEC_ERR_BODY) ||
            msg.err_off != cut)
            fail_msg("%s: eof rc %d err %s at %zu, want %d at %zu", name, (int)rc,
                     codec_err_str(msg.err), msg.err_off, (int)want, cut);
        break;
    }
}

/* ---- 1. encode ---------------------------------------------------------- */

static void check_encode(const char *method, const char *path, const char *host, size_t size,
                         bool keep, const char *want_head)
{
    _Alignas(max_align_t) unsigned char st[STATE_MAX];
    struct http_opts opts = { .method = method, .path = path, .host = host };
    struct codec_cfg cfg = { .size = size, .keep_alive = keep, .opts = &opts };
    bool body = method != NULL && strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0;
    size_t hlen = strlen(want_head), want = hlen + (body ? size : 0), n;
    struct guard g;
    uint8_t *buf;

    http_codec.init(st, &cfg);
    n = http_codec.max_request(&cfg);
    if (n != want) fail_msg("%s: max_request %zu, want %zu", want_head, n, want);
    buf = guard_alloc(&g, want);
    assert_int_equal(http_codec.encode(st, buf, want), want);
    if (memcmp(buf, want_head, hlen) != 0)
        fail_msg("encoded:\n%.*s\nwant:\n%s", (int)hlen, (const char *)buf, want_head);
    for (size_t i = 0; i < want - hlen; i++)
        if (buf[hlen + i] != http_pattern_byte(i)) fail_msg("body byte %zu", i);
    guard_free(&g);
    /* one byte short: nothing written (the guard page catches any write) */
    buf = guard_alloc(&g, want - 1);
    assert_int_equal(http_codec.encode(st, buf, want - 1), 0);
    guard_free(&g);
}

static void test_encode(void **state)
{
    (void)state;
    assert_string_equal(http_codec.name, "http");
    assert_true(http_codec.fixed);
    assert_non_null(http_codec.eof);
    assert_non_null(http_codec.reset);
    /* A kept connection: the request line and Host, nothing more (HTTP/1.1 keeps it). */
    check_encode(NULL, NULL, NULL, 100, true, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
    check_encode("GET", "/x?y=1", "example:8080", 0, false,
                 "GET /x?y=1 HTTP/1.1\r\nHost: example:8080\r\nConnection: close\r\n\r\n");
    check_encode("POST", NULL, NULL, 5, true,
                 "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\n");
    check_encode("POST", "/upload", "h", 1000, false,
                 "POST /upload HTTP/1.1\r\nHost: h\r\nConnection: close\r\n"
                 "Content-Length: 1000\r\n\r\n");
    check_encode("POST", NULL, NULL, 0, true,
                 "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n");
    check_encode("HEAD", NULL, NULL, 10, true, "HEAD / HTTP/1.1\r\nHost: localhost\r\n\r\n");
}

/* The pattern is printable and shifts are visible at once. */
static void test_pattern(void **state)
{
    (void)state;
    for (size_t i = 0; i < 1000; i++) {
        uint8_t b = http_pattern_byte(i);

        assert_true(b > ' ' && b < 0x7f);
        assert_int_equal(b, http_pattern_byte(i + 89));
    }
    for (size_t s = 1; s < 89; s++)
        assert_int_not_equal(http_pattern_byte(0), http_pattern_byte(s));
}

/* ---- 2. the reply table ------------------------------------------------- */

struct rcase {
    const char *name;
    const char *reply; /* '@' marks the error's byte and is removed */
    const char *method;
    const char *expect;
    int dones;
    unsigned status; /* of the last completed reply; of the eof reply for EOF_DONE */
    bool closes;     /* of the last completed reply */
    enum codec_err err;
    enum eof_want eof; /* when err is NONE */
};

#define OK200 "HTTP/1.1 200 OK\r\n"
#define TE_CH "Transfer-Encoding: chunked\r\n"

static const struct rcase cases[] = {
    /* framings */
    { "length", OK200 "Content-Length: 5\r\n\r\nhello", NULL, NULL, 1, 200, false, 0, EOF_NONE },
    { "length 0", OK200 "Content-Length: 0\r\n\r\n", NULL, NULL, 1, 200, false, 0, EOF_NONE },
    { "length ows case", OK200 "content-LENGTH:\t 3 \t\r\nX-A: b\r\n\r\nabc", NULL, NULL, 1, 200,
      false, 0, EOF_NONE },
    { "length twice", OK200 "Content-Length: 3\r\nContent-Length: 3\r\n\r\nabc", NULL, NULL, 1, 200,
      false, 0, EOF_NONE },
    { "no reason", "HTTP/1.1 200\r\nContent-Length: 1\r\n\r\nx", NULL, NULL, 1, 200, false, 0,
      EOF_NONE },
    { "empty reason", "HTTP/1.1 404 \r\nContent-Length: 1\r\n\r\nx", NULL, NULL, 1, 404, false, 0,
      EOF_NONE },
    { "bare LF", "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", NULL, NULL, 1, 200, false, 0,
      EOF_NONE },
    { "chunked", OK200 TE_CH "\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", NULL, NULL, 1, 200,
      false, 0, EOF_NONE },
    { "chunked ext trailers",
      OK200 TE_CH "\r\n5;a=b\r\nhello\r\n6 ; x=\"y z\";q\r\n world\r\n0;last\r\nX-T: 1\r\n"
                  "Content-Length: 9\r\n\r\n",
      NULL, NULL, 1, 200, false, 0, EOF_NONE },
    { "chunked hex bare LF",
      OK200 TE_CH "\r\nA\nabcdefghij\n1f\r\n0123456789012345678901234567890\r\n0\n\n", NULL, NULL,
      1, 200, false, 0, EOF_NONE },
    { "chunked 16 digits", OK200 TE_CH "\r\n0000000000000005\r\nhello\r\n0\r\n\r\n", NULL, NULL, 1,
      200, false, 0, EOF_NONE },
    { "te list", OK200 "Transfer-Encoding: gzip, chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n", NULL, NULL, 1,
      200, false, 0, EOF_NONE },
    { "te two fields",
      OK200 "Transfer-Encoding: gzip\r\nTransfer-Encoding: Chunked\r\n\r\n0\r\n\r\n", NULL, NULL, 1,
      200, false, 0, EOF_NONE },
    { "te over length", OK200 "Content-Length: 100\r\n" TE_CH "\r\n3\r\nabc\r\n0\r\n\r\n", NULL,
      NULL, 1, 200, false, 0, EOF_NONE },
    { "te not last", OK200 "Transfer-Encoding: chunked, gzip\r\n\r\n3\r\nabc", NULL, NULL, 0, 200,
      false, 0, EOF_DONE },
    { "until close", OK200 "\r\nabc", NULL, NULL, 0, 200, false, 0, EOF_DONE },
    { "until close empty", "HTTP/1.1 500 Oops\r\nX: y\r\n\r\n", NULL, NULL, 0, 500, false, 0,
      EOF_DONE },
    { "204", "HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n", NULL, NULL, 1, 204, false, 0,
      EOF_NONE },
    { "304", "HTTP/1.1 304 Not Modified\r\n" TE_CH "Content-Length: 99999999999999999999\r\n\r\n",
      NULL, NULL, 1, 304, false, 0, EOF_NONE },
    { "100 then 200", "HTTP/1.1 100 Continue\r\n\r\n" OK200 "Content-Length: 2\r\n\r\nok", NULL,
      NULL, 1, 200, false, 0, EOF_NONE },
    { "103 100 200",
      "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\nContent-Length: 7\r\nConnection: close\r\n\r\n"
      "HTTP/1.1 100 Continue\r\n\r\n" OK200 "Content-Length: 2\r\n\r\nok",
      NULL, NULL, 1, 200, false, 0, EOF_NONE },
    { "http/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", NULL, NULL, 1, 200, true, 0,
      EOF_NONE },
    { "http/1.0 keep-alive",
      "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 1\r\n\r\nx", NULL, NULL, 1, 200,
      false, 0, EOF_NONE },
    { "close", OK200 "Connection: close\r\nContent-Length: 1\r\n\r\nx", NULL, NULL, 1, 200, true, 0,
      EOF_NONE },
    { "close in list", OK200 "Connection: foo, , CLOSE \r\nContent-Length: 1\r\n\r\nx", NULL, NULL,
      1, 200, true, 0, EOF_NONE },
    { "close-ish", OK200 "Connection: closed, keep-alive;x, clo se\r\nContent-Length: 1\r\n\r\nx",
      NULL, NULL, 1, 200, false, 0, EOF_NONE },
    { "obs-fold", OK200 "X-Long: a\r\n  b\r\nContent-Length:\r\n 2\r\n\r\nok", NULL, NULL, 1, 200,
      false, 0, EOF_NONE },
    { "head", OK200 "Content-Length: 100\r\n\r\n" OK200 "Content-Length: 100\r\n\r\n", "HEAD", NULL,
      2, 200, false, 0, EOF_NONE },
    { "pipelined",
      OK200 "Content-Length: 2\r\n\r\nok" OK200 TE_CH "\r\n2\r\nok\r\n0\r\n\r\n"
            "HTTP/1.1 204 No Content\r\n\r\n"
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n",
      NULL, NULL, 4, 201, false, 0, EOF_NONE },
    { "pipelined cut",
      OK200 "Content-Length: 2\r\n\r\nok" OK200 "Content-Length: 2\r\n\r\nok" OK200 "Content-Le",
      NULL, NULL, 2, 200, false, 0, EOF_CUT },
    { "cut in body", OK200 "Content-Length: 9\r\n\r\nhello", NULL, NULL, 0, 0, false, 0, EOF_CUT },
    { "cut in chunk", OK200 TE_CH "\r\n5\r\nhello\r\n", NULL, NULL, 0, 0, false, 0, EOF_CUT },
    { "1 GiB chunk, cut", OK200 TE_CH "\r\n40000000\r\n", NULL, NULL, 0, 0, false, 0, EOF_CUT },
    { "empty", "", NULL, NULL, 0, 0, false, 0, EOF_NONE },
    /* malformed */
    { "garbage", "@XYZ 200 OK\r\n\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH, 0 },
    { "lowercase", "@http/1.1 200 OK\r\n\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH, 0 },
    { "http/2", "HTTP/@2 200 OK\r\n\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH, 0 },
    { "minor", "HTTP/1.@x 200 OK\r\n\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH, 0 },
    { "status 600", "HTTP/1.1 @600 OK\r\n\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH, 0 },
    { "status 101", "HTTP/1.1 10@1 Switching\r\n\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH,
      0 },
    { "status 2 digits", "HTTP/1.1 20@ OK\r\n\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH,
      0 },
    { "two spaces", "HTTP/1.1 @ 200 OK\r\n\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH, 0 },
    { "no space", "HTTP/1.1 200@X\r\n\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH, 0 },
    { "CR alone", "HTTP/1.1 200 OK\r@X: y\r\n\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH,
      0 },
    { "ctl in reason", "HTTP/1.1 200 O@\x01K\r\n\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH,
      0 },
    { "space before colon", OK200 "Content-Length@ : 5\r\n\r\nhello", NULL, NULL, 0, 0, false,
      CODEC_ERR_MISMATCH, 0 },
    { "empty name", OK200 "@: x\r\n\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH, 0 },
    { "ctl in value", OK200 "X: a@\x01z\r\n\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH, 0 },
    { "DEL in value", OK200 "X: a@\x7fz\r\n\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH, 0 },
    { "CR in value", OK200 "X: a\r@z\r\n\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH, 0 },
    { "fold first", OK200 "@ x: y\r\n\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH, 0 },
    { "end CR alone", OK200 "X: y\r\n\r@X", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH, 0 },
    { "length folded", OK200 "Content-Length: 1\r\n @2\r\n\r\n", NULL, NULL, 0, 0, false,
      CODEC_ERR_MISMATCH, 0 },
    { "length letters", OK200 "Content-Length: 5@x\r\n\r\n", NULL, NULL, 0, 0, false,
      CODEC_ERR_MISMATCH, 0 },
    { "length two numbers", OK200 "Content-Length: 5 @5\r\n\r\n", NULL, NULL, 0, 0, false,
      CODEC_ERR_MISMATCH, 0 },
    { "length list", OK200 "Content-Length: 5@,5\r\n\r\n", NULL, NULL, 0, 0, false,
      CODEC_ERR_MISMATCH, 0 },
    { "length negative", OK200 "Content-Length: @-1\r\n\r\n", NULL, NULL, 0, 0, false,
      CODEC_ERR_MISMATCH, 0 },
    { "length empty", OK200 "Content-Length: \r\n@\r\n", NULL, NULL, 0, 0, false,
      CODEC_ERR_MISMATCH, 0 },
    { "lengths differ", OK200 "Content-Length: 5\r\nContent-Length: 6\r\n@\r\nhello", NULL, NULL, 0,
      0, false, CODEC_ERR_MISMATCH, 0 },
    { "chunk not hex", OK200 TE_CH "\r\n@zz\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH, 0 },
    { "chunk no digits", OK200 TE_CH "\r\n@;x\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH,
      0 },
    { "chunk ws digit", OK200 TE_CH "\r\n5 @5\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH,
      0 },
    { "chunk size CR", OK200 TE_CH "\r\n5\r@x", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH, 0 },
    { "chunk ext ctl", OK200 TE_CH "\r\n5;a@\x01\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_MISMATCH,
      0 },
    { "chunk data long", OK200 TE_CH "\r\n5\r\nhello@X\r\n", NULL, NULL, 0, 0, false,
      CODEC_ERR_MISMATCH, 0 },
    { "chunk data CR", OK200 TE_CH "\r\n5\r\nhello\r@X", NULL, NULL, 0, 0, false,
      CODEC_ERR_MISMATCH, 0 },
    { "trailer garbage", OK200 TE_CH "\r\n0\r\n@:x\r\n\r\n", NULL, NULL, 0, 0, false,
      CODEC_ERR_MISMATCH, 0 },
    { "second reply bad", OK200 "Content-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\n@\x01", NULL, NULL, 1,
      200, false, CODEC_ERR_MISMATCH, 0 },
    /* caps that fit in a line */
    { "chunk 17 digits", OK200 TE_CH "\r\n0000000000000000@5\r\nhello", NULL, NULL, 0, 0, false,
      CODEC_ERR_TOO_BIG, 0 },
    { "chunk > 1 GiB", OK200 TE_CH "\r\n4000000@1\r\n", NULL, NULL, 0, 0, false, CODEC_ERR_TOO_BIG,
      0 },
    { "length > 1 GiB", OK200 "Content-Length: 107374182@5\r\n\r\n", NULL, NULL, 0, 0, false,
      CODEC_ERR_TOO_BIG, 0 },
    { "length huge", OK200 "Content-Length: 00000999999999@99999999999999999999\r\n\r\n", NULL,
      NULL, 0, 0, false, CODEC_ERR_TOO_BIG, 0 },
    { "length > 1 GiB, chunked", OK200 "Content-Length: 99999999999\r\n" TE_CH "\r\n0\r\n\r\n",
      NULL, NULL, 1, 200, false, 0, EOF_NONE },
    /* expect_body */
    { "expect length", OK200 "Content-Length: 5\r\n\r\nhello", NULL, "hello", 1, 200, false, 0,
      EOF_NONE },
    { "expect chunks", OK200 TE_CH "\r\n2\r\nhe\r\n1\r\nl\r\n2\r\nlo\r\n0\r\n\r\n", NULL, "hello",
      1, 200, false, 0, EOF_NONE },
    { "expect differs", OK200 "Content-Length: 5\r\n\r\nhe@Llo", NULL, "hello", 0, 0, false,
      CODEC_ERR_BODY, 0 },
    { "expect differs chunk 2", OK200 TE_CH "\r\n2\r\nhe\r\n3\r\nl@Xo\r\n0\r\n\r\n", NULL, "hello",
      0, 0, false, CODEC_ERR_BODY, 0 },
    { "expect short", OK200 "Content-Length: 3\r\n\r\nhel@", NULL, "hello", 0, 0, false,
      CODEC_ERR_BODY, 0 },
    { "expect short chunked", OK200 TE_CH "\r\n3\r\nhel@\r\n0\r\n\r\n", NULL, "hello", 0, 0, false,
      CODEC_ERR_BODY, 0 },
    { "expect long", OK200 "Content-Length: 6\r\n\r\nhello@!", NULL, "hello", 0, 0, false,
      CODEC_ERR_BODY, 0 },
    { "expect long chunked", OK200 TE_CH "\r\n5\r\nhello\r\n1\r\n@!\r\n0\r\n\r\n", NULL, "hello", 0,
      0, false, CODEC_ERR_BODY, 0 },
    { "expect 204", "HTTP/1.1 204 No Content\r\n\r\n@", NULL, "hello", 0, 0, false, CODEC_ERR_BODY,
      0 },
    { "expect 404 unchecked", "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nnah", NULL,
      "hello", 1, 404, false, 0, EOF_NONE },
    { "expect close", OK200 "\r\nhello", NULL, "hello", 0, 200, false, 0, EOF_DONE },
    { "expect close short", OK200 "\r\nhel", NULL, "hello", 0, 0, false, 0, EOF_BODY },
    { "expect close long", OK200 "\r\nhello@!", NULL, "hello", 0, 0, false, CODEC_ERR_BODY, 0 },
    { "expect empty", OK200 "Content-Length: 0\r\n\r\n", NULL, "", 1, 200, false, 0, EOF_NONE },
    { "expect empty long", OK200 "Content-Length: 1\r\n\r\n@x", NULL, "", 0, 0, false,
      CODEC_ERR_BODY, 0 },
};

/* The case's bytes without its '@', and where the '@' was (len if none). */
static uint8_t *case_bytes(const char *reply, size_t *len, size_t *mark)
{
    size_t n = strlen(reply), j = 0;
    uint8_t *b = malloc(n + 1);

    assert_non_null(b);
    *mark = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (reply[i] == '@')
            *mark = j;
        else
            b[j++] = (uint8_t)reply[i];
    }
    *len = j;
    if (*mark == SIZE_MAX) *mark = j;
    return b;
}

static void check_case_outcome(const struct rcase *t, const struct outcome *o, size_t mark)
{
    int last = t->dones - 1;

    if (o->dones != t->dones) fail_msg("%s: %d replies, want %d", t->name, o->dones, t->dones);
    if (t->err != CODEC_ERR_NONE) {
        if (o->last != CODEC_ERROR || o->err != t->err || o->err_at != mark)
            fail_msg("%s: rc %d err %s at %zu, want %s at %zu", t->name, (int)o->last,
                     codec_err_str(o->err), o->err_at, codec_err_str(t->err), mark);
    } else if (o->last != CODEC_NEED_MORE) {
        fail_msg("%s: err %s at %zu", t->name, codec_err_str(o->err), o->err_at);
    }
    if (last >= 0 && (o->status[last] != t->status || o->closes[last] != t->closes))
        fail_msg("%s: status %u closes %d, want %u %d", t->name, o->status[last], o->closes[last],
                 t->status, t->closes);
}

/* Whole, split at every offset, byte by byte: each the same, each what the case says. */
static void run_case(const struct rcase *t)
{
    size_t len, mark;
    uint8_t *b = case_bytes(t->reply, &len, &mark);
    struct hctx c;
    struct outcome whole, o;

    hctx_init(&c, t->method, t->expect);
    feed_cut(&c, b, len, NULL, 0, &whole);
    check_case_outcome(t, &whole, mark);
    if (t->err == CODEC_ERR_NONE) check_eof(&c, &whole, len, t->eof, t->status, t->name);
    for (size_t k = 1; k < len; k++) {
        http_codec.reset(c.st);
        feed_cut(&c, b, len, &k, 1, &o);
        same_outcome(&whole, &o, t->name, k);
        if (t->err == CODEC_ERR_NONE) check_eof(&c, &o, len, t->eof, t->status, t->name);
    }
    http_codec.reset(c.st);
    feed_bytes(&c, b, len, &o);
    same_outcome(&whole, &o, t->name, SIZE_MAX);
    if (t->err == CODEC_ERR_NONE) check_eof(&c, &o, len, t->eof, t->status, t->name);
    free(b);
}

static void test_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        run_case(&cases[i]);
}

/* After DONE, eof and reset, the state parses a fresh reply; reset forgets a partial one. */
static void test_reset_eof(void **state)
{
    static const char good[] = OK200 "Content-Length: 2\r\n\r\nok";
    struct hctx c;
    struct codec_msg msg = { 0 };
    size_t used = 0;

    (void)state;
    hctx_init(&c, NULL, NULL);
    assert_int_equal(http_codec.eof(c.st, &msg), CODEC_ERROR);
    assert_int_equal(msg.err, CODEC_ERR_NONE);
    /* half a head, reset, a whole reply */
    assert_int_equal(http_codec.feed(c.st, (const uint8_t *)good, 20, &used, &msg),
                     CODEC_NEED_MORE);
    http_codec.reset(c.st);
    assert_int_equal(http_codec.feed(c.st, (const uint8_t *)good, strlen(good), &used, &msg),
                     CODEC_DONE);
    assert_int_equal(used, strlen(good));
    /* an error, reset, a whole reply */
    assert_int_equal(http_codec.feed(c.st, (const uint8_t *)"HTTP/9", 6, &used, &msg), CODEC_ERROR);
    http_codec.reset(c.st);
    assert_int_equal(http_codec.feed(c.st, (const uint8_t *)good, strlen(good), &used, &msg),
                     CODEC_DONE);
    /* a body until close: eof completes it, then the state is fresh */
    assert_int_equal(http_codec.feed(c.st, (const uint8_t *)OK200 "\r\nxy", 21, &used, &msg),
                     CODEC_NEED_MORE);
    memset(&msg, 0, sizeof(msg));
    assert_int_equal(http_codec.eof(c.st, &msg), CODEC_DONE);
    assert_int_equal(msg.status, 200);
    assert_true(msg.closes);
    assert_int_equal(http_codec.eof(c.st, &msg), CODEC_ERROR);
    assert_int_equal(msg.err, CODEC_ERR_NONE);
    assert_int_equal(http_codec.feed(c.st, (const uint8_t *)good, strlen(good), &used, &msg),
                     CODEC_DONE);
    /* eof in a head: cut short at the bytes fed */
    assert_int_equal(http_codec.feed(c.st, (const uint8_t *)good, 7, &used, &msg), CODEC_NEED_MORE);
    assert_int_equal(http_codec.eof(c.st, &msg), CODEC_ERROR);
    assert_int_equal(msg.err, CODEC_ERR_MISMATCH);
    assert_int_equal(msg.err_off, 7);
}

/* ---- 3. caps at their edges --------------------------------------------- */

/*
 * A stream fed whole, at sampled split points (every `step`, and around
 * `edge`) and byte by byte: all must agree; returns the whole outcome.
 */
static void run_sampled(struct hctx *c, const uint8_t *b, size_t len, size_t step, size_t edge,
                        struct outcome *whole)
{
    struct outcome o;
    const size_t near[] = { edge - 2, edge - 1, edge, edge + 1, edge + 2, 1, len - 1 };

    http_codec.reset(c->st);
    feed_cut(c, b, len, NULL, 0, whole);
    for (size_t k = step; k < len; k += step) {
        http_codec.reset(c->st);
        feed_cut(c, b, len, &k, 1, &o);
        same_outcome(whole, &o, "sampled", k);
    }
    for (size_t i = 0; i < ARRAY_LEN(near); i++) {
        if (near[i] == 0 || near[i] >= len) continue;
        http_codec.reset(c->st);
        feed_cut(c, b, len, &near[i], 1, &o);
        same_outcome(whole, &o, "near edge", near[i]);
    }
    http_codec.reset(c->st);
    feed_bytes(c, b, len, &o);
    same_outcome(whole, &o, "bytes", 0);
}

/* A reply with `pre` first, then a head of exactly head_len bytes padded by one long field. */
static uint8_t *padded_head(const char *pre, size_t head_len, const char *post, size_t *len)
{
    static const char start[] = OK200 "X-Pad: ";
    static const char fin[] = "\r\nContent-Length: 2\r\n\r\n";
    size_t pl = strlen(pre), fixed = strlen(start) + strlen(fin);
    size_t pad = head_len - fixed, n = pl + head_len + strlen(post);
    uint8_t *b = malloc(n);

    assert_true(head_len > fixed);
    assert_non_null(b);
    memcpy(b, pre, pl);
    memcpy(b + pl, start, strlen(start));
    memset(b + pl + strlen(start), 'a', pad);
    memcpy(b + pl + strlen(start) + pad, fin, strlen(fin));
    memcpy(b + pl + head_len, post, strlen(post));
    *len = n;
    return b;
}

static void test_head_cap(void **state)
{
    static const char interim[] = "HTTP/1.1 100 Continue\r\n\r\n";
    size_t il = strlen(interim);
    struct hctx c;
    struct outcome o;
    size_t len;
    uint8_t *b;

    (void)state;
    hctx_init(&c, NULL, NULL);
    b = padded_head("", HTTP_HEAD_MAX, "ok", &len);
    run_sampled(&c, b, len, 997, HTTP_HEAD_MAX, &o);
    assert_int_equal(o.dones, 1);
    assert_int_equal(o.last, CODEC_NEED_MORE);
    free(b);
    b = padded_head("", HTTP_HEAD_MAX + 1, "ok", &len);
    run_sampled(&c, b, len, 997, HTTP_HEAD_MAX, &o);
    assert_int_equal(o.last, CODEC_ERROR);
    assert_int_equal(o.err, CODEC_ERR_TOO_BIG);
    assert_int_equal(o.err_at, HTTP_HEAD_MAX);
    free(b);
    /* interim replies count towards the same cap */
    b = padded_head(interim, HTTP_HEAD_MAX - il, "ok", &len);
    run_sampled(&c, b, len, 991, HTTP_HEAD_MAX, &o);
    assert_int_equal(o.dones, 1);
    free(b);
    b = padded_head(interim, HTTP_HEAD_MAX - il + 1, "ok", &len);
    run_sampled(&c, b, len, 991, HTTP_HEAD_MAX, &o);
    assert_int_equal(o.err, CODEC_ERR_TOO_BIG);
    assert_int_equal(o.err_at, HTTP_HEAD_MAX);
    free(b);
    /* the cap is per reply: a second big head in the stream is fine */
    b = padded_head("", HTTP_HEAD_MAX, "ok", &len);
    {
        uint8_t *two = malloc(2 * len);

        assert_non_null(two);
        memcpy(two, b, len);
        memcpy(two + len, b, len);
        run_sampled(&c, two, 2 * len, 4999, len + HTTP_HEAD_MAX, &o);
        assert_int_equal(o.dones, 2);
        assert_int_equal(o.ends[1], 2 * len);
        free(two);
    }
    free(b);
}

/* Builds OK200 + n fields "X: y" + Content-Length + blank line + "ok". */
static uint8_t *many_fields(unsigned n, size_t *len, size_t *last_line)
{
    size_t cap = 64 + (size_t)n * 6 + 64, off = 0;
    uint8_t *b = malloc(cap);

    assert_non_null(b);
    off += (size_t)sprintf((char *)b, OK200);
    for (unsigned i = 0; i < n; i++) {
        *last_line = off;
        off += (size_t)sprintf((char *)b + off, "X: y\r\n");
    }
    *last_line = off;
    off += (size_t)sprintf((char *)b + off, "Content-Length: 2\r\n\r\nok");
    *len = off;
    return b;
}

static void test_fields_cap(void **state)
{
    struct hctx c;
    struct outcome o;
    size_t len, last;
    uint8_t *b;

    (void)state;
    hctx_init(&c, NULL, NULL);
    b = many_fields(HTTP_FIELDS_MAX - 1, &len, &last);
    run_sampled(&c, b, len, 7, last, &o);
    assert_int_equal(o.dones, 1);
    free(b);
    b = many_fields(HTTP_FIELDS_MAX, &len, &last);
    run_sampled(&c, b, len, 7, last, &o);
    assert_int_equal(o.err, CODEC_ERR_TOO_BIG);
    assert_int_equal(o.err_at, last); /* the Content-Length line is one too many */
    free(b);
}

/* A chunked reply whose first chunk-size line is `line_len` bytes, CRLF included. */
static uint8_t *long_chunk_line(size_t line_len, bool trailers, size_t *len, size_t *line_at)
{
    static const char head[] = OK200 TE_CH "\r\n";
    size_t hl = strlen(head), n = hl + line_len + 64 + (trailers ? HTTP_HEAD_MAX : 0);
    uint8_t *b = malloc(n);
    size_t off = hl;

    assert_non_null(b);
    memcpy(b, head, hl);
    *line_at = hl;
    if (!trailers) {
        memcpy(b + off, "2;e=", 4);
        memset(b + off + 4, 'v', line_len - 6);
        memcpy(b + off + line_len - 2, "\r\nok\r\n0\r\n\r\n", 11);
        *len = off + line_len + 11 - 2;
        return b;
    }
    /* trailers of exactly line_len bytes, blank line included */
    memcpy(b + off, "0\r\nT: ", 6);
    *line_at = off + 3;
    memset(b + off + 6, 't', line_len - 7);
    memcpy(b + off + 3 + line_len - 4, "\r\n\r\n", 4);
    *len = off + 3 + line_len;
    return b;
}

static void test_chunk_caps(void **state)
{
    struct hctx c;
    struct outcome o;
    size_t len, at;
    uint8_t *b;

    (void)state;
    hctx_init(&c, NULL, NULL);
    b = long_chunk_line(HTTP_CHUNK_LINE_MAX, false, &len, &at);
    run_sampled(&c, b, len, 13, at + HTTP_CHUNK_LINE_MAX, &o);
    assert_int_equal(o.dones, 1);
    free(b);
    b = long_chunk_line(HTTP_CHUNK_LINE_MAX + 1, false, &len, &at);
    run_sampled(&c, b, len, 13, at + HTTP_CHUNK_LINE_MAX, &o);
    assert_int_equal(o.err, CODEC_ERR_TOO_BIG);
    assert_int_equal(o.err_at, at + HTTP_CHUNK_LINE_MAX);
    free(b);
    b = long_chunk_line(HTTP_HEAD_MAX, true, &len, &at);
    run_sampled(&c, b, len, 1009, at + HTTP_HEAD_MAX, &o);
    assert_int_equal(o.dones, 1);
    assert_int_equal(o.ends[0], len);
    free(b);
    b = long_chunk_line(HTTP_HEAD_MAX + 1, true, &len, &at);
    run_sampled(&c, b, len, 1009, at + HTTP_HEAD_MAX, &o);
    assert_int_equal(o.err, CODEC_ERR_TOO_BIG);
    assert_int_equal(o.err_at, at + HTTP_HEAD_MAX);
    free(b);
}

/*
 * Feeds `total` body bytes 1 MiB at a time from one guarded buffer (its
 * content is never read without expect_body); returns the last verdict.
 */
static enum codec_rc feed_body(struct hctx *c, uint64_t total, struct codec_msg *msg,
                               size_t *last_used)
{
    struct guard g;
    uint8_t *big = guard_alloc(&g, MIB);
    enum codec_rc rc = CODEC_NEED_MORE;

    memset(big, 'b', MIB);
    while (total > 0 && rc == CODEC_NEED_MORE) {
        size_t n = total < MIB ? (size_t)total : MIB;

        rc = http_codec.feed(c->st, guard_tail(&g, n), n, last_used, msg);
        if (rc == CODEC_NEED_MORE) assert_int_equal(*last_used, n);
        total -= n;
    }
    guard_free(&g);
    return rc;
}

static enum codec_rc feed_str(struct hctx *c, const char *s, struct codec_msg *msg, size_t *used)
{
    return http_codec.feed(c->st, (const uint8_t *)s, strlen(s), used, msg);
}

static void test_body_cap(void **state)
{
    static const char cl_head[] = OK200 "Content-Length: 1073741824\r\n\r\n";
    static const char close_head[] = OK200 "\r\n";
    struct hctx c;
    struct codec_msg msg = { 0 };
    size_t used = 0;

    (void)state;
    hctx_init(&c, NULL, NULL);
    /* Content-Length of exactly the cap, then a second reply */
    assert_int_equal(feed_str(&c, cl_head, &msg, &used), CODEC_NEED_MORE);
    assert_int_equal(feed_body(&c, HTTP_BODY_MAX, &msg, &used), CODEC_DONE);
    assert_int_equal(used, MIB);
    assert_int_equal(feed_str(&c, OK200 "Content-Length: 0\r\n\r\n", &msg, &used), CODEC_DONE);

    /* until close: the cap is fine, one byte more is not, at its offset */
    assert_int_equal(feed_str(&c, close_head, &msg, &used), CODEC_NEED_MORE);
    assert_int_equal(feed_body(&c, HTTP_BODY_MAX, &msg, &used), CODEC_NEED_MORE);
    assert_int_equal(feed_str(&c, "x", &msg, &used), CODEC_ERROR);
    assert_int_equal(msg.err, CODEC_ERR_TOO_BIG);
    assert_int_equal(msg.err_off, strlen(close_head) + HTTP_BODY_MAX);
    http_codec.reset(c.st);
    assert_int_equal(feed_str(&c, close_head, &msg, &used), CODEC_NEED_MORE);
    assert_int_equal(feed_body(&c, HTTP_BODY_MAX - 1, &msg, &used), CODEC_NEED_MORE);
    assert_int_equal(feed_str(&c, "xyz", &msg, &used), CODEC_ERROR);
    assert_int_equal(msg.err_off, strlen(close_head) + HTTP_BODY_MAX);
    http_codec.reset(c.st);
    assert_int_equal(feed_str(&c, close_head, &msg, &used), CODEC_NEED_MORE);
    assert_int_equal(feed_body(&c, HTTP_BODY_MAX, &msg, &used), CODEC_NEED_MORE);
    assert_int_equal(http_codec.eof(c.st, &msg), CODEC_DONE);

    /* chunks adding up past the cap: the size digit that crosses it */
    assert_int_equal(feed_str(&c, OK200 TE_CH "\r\n20000000\r\n", &msg, &used), CODEC_NEED_MORE);
    assert_int_equal(feed_body(&c, HTTP_BODY_MAX / 2, &msg, &used), CODEC_NEED_MORE);
    assert_int_equal(feed_str(&c, "\r\n20000000\r\n", &msg, &used), CODEC_NEED_MORE);
    assert_int_equal(feed_body(&c, HTTP_BODY_MAX / 2, &msg, &used), CODEC_NEED_MORE);
    assert_int_equal(feed_str(&c, "\r\n1\r\n", &msg, &used), CODEC_ERROR);
    assert_int_equal(msg.err, CODEC_ERR_TOO_BIG);
    assert_int_equal(msg.err_off, strlen(OK200 TE_CH "\r\n20000000\r\n") +
                                      strlen("\r\n20000000\r\n") + 2 + HTTP_BODY_MAX);
    http_codec.reset(c.st);
    assert_int_equal(feed_str(&c, OK200 TE_CH "\r\n40000000\r\n", &msg, &used), CODEC_NEED_MORE);
    assert_int_equal(feed_body(&c, HTTP_BODY_MAX, &msg, &used), CODEC_NEED_MORE);
    assert_int_equal(feed_str(&c, "\r\n0\r\n\r\n", &msg, &used), CODEC_DONE);
}

/* expect_body with a long body, compared across every chunking. */
static void test_expect_long(void **state)
{
    enum { N = 3000 };
    char *expect = malloc(N + 1);
    uint8_t *b = malloc(N * 8 + 256);
    struct hctx c;
    struct outcome o;
    size_t len;

    (void)state;
    assert_non_null(expect);
    assert_non_null(b);
    for (size_t i = 0; i < N; i++)
        expect[i] = (char)http_pattern_byte(i);
    expect[N] = '\0';
    hctx_init(&c, NULL, expect);
    /* chunks of 1, 2, 3, ... bytes */
    len = (size_t)sprintf((char *)b, OK200 TE_CH "\r\n");
    for (size_t pos = 0, k = 1; pos < N; pos += k, k++) {
        size_t n = k < N - pos ? k : N - pos;

        len += (size_t)sprintf((char *)b + len, "%zx\r\n", n);
        memcpy(b + len, expect + pos, n);
        len += n;
        len += (size_t)sprintf((char *)b + len, "\r\n");
    }
    len += (size_t)sprintf((char *)b + len, "0\r\n\r\n");
    run_sampled(&c, b, len, 1, 0, &o);
    assert_int_equal(o.dones, 1);
    /* the last body byte wrong */
    b[len - 8] ^= 1;
    run_sampled(&c, b, len, 1, 0, &o);
    assert_int_equal(o.err, CODEC_ERR_BODY);
    assert_int_equal(o.err_at, len - 8);
    free(b);
    free(expect);
}

/* ---- 4. server ---------------------------------------------------------- */

struct srv {
    void *shared;
    _Alignas(max_align_t) unsigned char state[256];
    struct guard og, ig;
    struct server_io io;
};

static void srv_init(struct srv *s, size_t body_size)
{
    struct server_cfg cfg;

    memset(s, 0, sizeof(*s));
    memset(&cfg, 0, sizeof(cfg));
    cfg.body_size = body_size;
    assert_true(server_http.conn_size <= sizeof(s->state));
    assert_int_equal(server_http.create(&cfg, &s->shared), 0);
    s->io.state = s->state;
    s->io.obuf = guard_alloc(&s->og, server_http.out_cap);
    s->io.ocap = server_http.out_cap;
}

static void srv_free(struct srv *s)
{
    server_http.destroy(s->shared);
    guard_free(&s->og);
}

/* One process() call on a copy of in[0..len) that ends at a guard page. */
static size_t srv_call(struct srv *s, const void *in, size_t len)
{
    uint8_t *p = guard_alloc(&s->ig, len);
    size_t r;

    memcpy(p, in, len);
    s->io.out = NULL;
    s->io.out_len = 0;
    s->io.close = false;
    s->io.answered = 0;
    r = server_http.process(s->shared, &s->io, p, len);
    assert_true(r == SERVER_PROTO_ERROR || r <= len);
    assert_true(s->io.out_len == 0 || s->io.out != p); /* a view of in would be freed below */
    guard_free(&s->ig);
    return r;
}

static size_t srv_str(struct srv *s, const char *in)
{
    return srv_call(s, in, strlen(in));
}

static void out_is(const struct srv *s, const char *want)
{
    size_t n = strlen(want);

    if (s->io.out_len != n || memcmp(s->io.out, want, n) != 0)
        fail_msg("reply:\n%.*s\nwant:\n%s", (int)s->io.out_len, (const char *)s->io.out, want);
}

#define HELLO "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\nhello\n"
#define HELLO_10K                                                                                  \
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\nConnection: keep-alive\r\n\r\nhello\n"
#define HELLO_CL                                                                                   \
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n"
#define GET "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"

static void test_server_basic(void **state)
{
    struct srv s;

    (void)state;
    assert_string_equal(server_http.name, "http");
    assert_true(server_http.in_cap >= 64 * 1024);
    srv_init(&s, 0);
    assert_int_equal(srv_str(&s, GET), strlen(GET));
    out_is(&s, HELLO);
    assert_int_equal(s.io.answered, 1);
    assert_false(s.io.close);
    /* HEAD: the head alone */
    assert_int_equal(srv_str(&s, "HEAD /x HTTP/1.1\r\n\r\n"), 20);
    out_is(&s, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\n");
    /* bare LF, leading empty lines, any method and fields */
    assert_int_equal(srv_str(&s, "\r\n\nPUT /a HTTP/1.1\nX-A:  b \nHost: h\n\n"), 37);
    out_is(&s, HELLO);
    /* Connection: close; HTTP/1.0; HTTP/1.0 keep-alive */
    assert_int_equal(srv_str(&s, "GET / HTTP/1.1\r\nConnection: foo, Close\r\n\r\n"), 42);
    out_is(&s, HELLO_CL);
    assert_true(s.io.close);
    assert_int_equal(srv_str(&s, "GET / HTTP/1.0\r\n\r\n"), 18);
    out_is(&s, HELLO_CL);
    assert_true(s.io.close);
    assert_int_equal(srv_str(&s, "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"), 42);
    out_is(&s, HELLO_10K);
    assert_false(s.io.close);
    srv_free(&s);
    /* with no shared state the default replies are used */
    {
        _Alignas(max_align_t) unsigned char st[256] = { 0 };
        struct server_io io = { .state = st };

        assert_int_equal(server_http.process(NULL, &io, (const uint8_t *)GET, strlen(GET)),
                         strlen(GET));
        assert_int_equal(io.out_len, strlen(HELLO));
        assert_memory_equal(io.out, HELLO, strlen(HELLO));
    }
}

static void test_server_pipelined(void **state)
{
    static const char three[] = GET "GET /b HTTP/1.1\r\n\r\nPOST /c HTTP/1.1\r\nContent-Length: "
                                    "3\r\n\r\nabc" GET;
    struct srv s;

    (void)state;
    srv_init(&s, 0);
    assert_int_equal(srv_str(&s, three), strlen(three));
    out_is(&s, HELLO HELLO HELLO HELLO);
    assert_int_equal(s.io.answered, 4);
    assert_ptr_equal(s.io.out, s.io.obuf);
    /* a close in the middle: the rest waits (and is never answered) */
    assert_int_equal(srv_str(&s, GET "GET / HTTP/1.1\r\nConnection: close\r\n\r\n" GET),
                     strlen(GET "GET / HTTP/1.1\r\nConnection: close\r\n\r\n"));
    out_is(&s, HELLO HELLO_CL);
    assert_int_equal(s.io.answered, 2);
    assert_true(s.io.close);
    /* a whole request, then part of one */
    assert_int_equal(srv_str(&s, GET "GET / HT"), strlen(GET));
    out_is(&s, HELLO);
    srv_free(&s);
}

/* Every prefix of a request is "not yet"; the whole of it is answered. */
static void test_server_partial(void **state)
{
    static const char req[] = "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody";
    size_t n = strlen(req), head = n - 4;
    struct srv s;

    (void)state;
    srv_init(&s, 0);
    for (size_t k = 1; k < head; k++) {
        assert_int_equal(srv_call(&s, req, k), 0);
        assert_int_equal(s.io.out_len, 0);
        assert_int_equal(s.io.answered, 0);
    }
    /* the head is in: it and the body so far are consumed, the reply waits */
    assert_int_equal(srv_call(&s, req, head + 1), head + 1);
    assert_int_equal(s.io.out_len, 0);
    assert_int_equal(srv_call(&s, req + head + 1, 2), 2);
    assert_int_equal(s.io.out_len, 0);
    assert_int_equal(srv_call(&s, req + head + 3, 1), 1);
    out_is(&s, HELLO);
    assert_int_equal(s.io.answered, 1);
    /* a blank line straddling calls: "\r\n" then "\r\n" */
    assert_int_equal(srv_str(&s, "GET / HTTP/1.1\r\n"), 0);
    assert_int_equal(srv_str(&s, "GET / HTTP/1.1\r\n\r"), 0);
    assert_int_equal(srv_str(&s, "GET / HTTP/1.1\r\n\r\n"), 18);
    out_is(&s, HELLO);
    srv_free(&s);
}

/* A body far larger than in_cap streams through in pieces; the reply follows it. */
static void test_server_big_body(void **state)
{
    const size_t body = 3 * server_http.in_cap + 123;
    char head[128];
    size_t hl = (size_t)sprintf(head, "POST / HTTP/1.1\r\nContent-Length: %zu\r\n\r\n", body);
    size_t piece = server_http.in_cap, sent;
    uint8_t *buf = malloc(piece + 64);
    struct srv s;

    (void)state;
    assert_non_null(buf);
    srv_init(&s, 0);
    memcpy(buf, head, hl);
    memset(buf + hl, 'z', piece - hl);
    assert_int_equal(srv_call(&s, buf, piece), piece);
    assert_int_equal(s.io.out_len, 0);
    sent = piece - hl;
    memset(buf, 'z', piece);
    while (body - sent > piece) {
        assert_int_equal(srv_call(&s, buf, piece), piece);
        assert_int_equal(s.io.out_len, 0);
        sent += piece;
    }
    /* the end of the body and a pipelined GET in one read */
    memcpy(buf + (body - sent), GET, strlen(GET));
    assert_int_equal(srv_call(&s, buf, body - sent + strlen(GET)), body - sent + strlen(GET));
    out_is(&s, HELLO HELLO);
    assert_int_equal(s.io.answered, 2);
    /* a body that ends a closing request */
    assert_int_equal(srv_str(&s, "POST / HTTP/1.0\r\nContent-Length: 3\r\n\r\na"), 39);
    assert_int_equal(s.io.out_len, 0);
    assert_int_equal(srv_str(&s, "bc" GET), 2);
    out_is(&s, HELLO_CL);
    assert_true(s.io.close);
    free(buf);
    srv_free(&s);
}

static void refused(struct srv *s, const char *in, const char *status_line)
{
    assert_int_equal(srv_str(s, in), SERVER_PROTO_ERROR);
    assert_true(s->io.close);
    assert_int_equal(s->io.answered, 0);
    if (s->io.out_len < strlen(status_line) ||
        memcmp(s->io.out, status_line, strlen(status_line)) != 0)
        fail_msg("%s: reply %.*s", in, (int)s->io.out_len, (const char *)s->io.out);
    assert_non_null(memmem(s->io.out, s->io.out_len, "Connection: close\r\n", 19));
    memset(s->state, 0, sizeof(s->state)); /* a new connection */
}

static void test_server_bad(void **state)
{
    static const char *const bad[] = {
        "garbage\r\n\r\n",
        "GET / HTTP/2.0\r\n\r\n",
        "GET  / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1 \r\n\r\n",
        "GET /\x01 HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nNo colon\r\n\r\n",
        "GET / HTTP/1.1\r\nX : y\r\n\r\n",
        "GET / HTTP/1.1\r\n: y\r\n\r\n",
        "GET / HTTP/1.1\r\nX: a\r\n folded\r\n\r\n",
        "GET / HTTP/1.1\r\nX: a\x01\r\n\r\n",
        "GET / HTTP/1.1\r\n\rX: y\r\n\r\n",
        "GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
        "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        "GET / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
    };
    struct srv s;
    char *big;

    (void)state;
    srv_init(&s, 0);
    for (size_t i = 0; i < ARRAY_LEN(bad); i++)
        refused(&s, bad[i], "HTTP/1.1 400 ");
    refused(&s, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "HTTP/1.1 411 ");
    /* a good request first: answered, and the bad one refused on the next call */
    assert_int_equal(srv_str(&s, GET "garbage\r\n\r\n"), strlen(GET));
    out_is(&s, HELLO);
    refused(&s, "garbage\r\n\r\n", "HTTP/1.1 400 ");
    /* too many fields; a head that never ends within the cap */
    big = malloc(128 * 1024);
    assert_non_null(big);
    strcpy(big, "GET / HTTP/1.1\r\n");
    for (int i = 0; i < 101; i++)
        strcat(big, "X: y\r\n");
    strcat(big, "\r\n");
    refused(&s, big, "HTTP/1.1 431 ");
    memset(big, 'a', 100 * 1024);
    memcpy(big, "GET /", 5);
    big[100 * 1024] = '\0';
    assert_int_equal(srv_call(&s, big, 64 * 1024 - 1), 0);
    refused(&s, big, "HTTP/1.1 431 ");
    free(big);
    srv_free(&s);
}

/* Replies of body_size pattern bytes; obuf full means the rest wait for the next call. */
static void test_server_body_size(void **state)
{
    const size_t size = 20000;
    char pipe[5 * sizeof(GET)];
    size_t one = strlen(GET), used, reply_len, total = 0;
    struct srv s;
    const uint8_t *body;

    (void)state;
    srv_init(&s, size);
    assert_int_equal(srv_str(&s, GET), one);
    body = memmem(s.io.out, s.io.out_len, "\r\n\r\n", 4);
    assert_non_null(body);
    body += 4;
    reply_len = s.io.out_len;
    assert_int_equal(reply_len - (size_t)(body - s.io.out), size);
    assert_non_null(memmem(s.io.out, s.io.out_len, "Content-Length: 20000\r\n", 23));
    for (size_t i = 0; i < size; i++)
        if (body[i] != http_pattern_byte(i)) fail_msg("body byte %zu", i);
    assert_int_equal(srv_str(&s, "HEAD / HTTP/1.1\r\n\r\n"), 19);
    assert_int_equal(s.io.out_len, reply_len - size);

    /* five pipelined: as many as obuf holds, then the rest */
    pipe[0] = '\0';
    for (int i = 0; i < 5; i++)
        strcat(pipe, GET);
    used = srv_str(&s, pipe);
    assert_int_equal(used, s.io.answered * one);
    assert_int_equal(s.io.answered, server_http.out_cap / reply_len);
    assert_int_equal(s.io.out_len, s.io.answered * reply_len);
    total += s.io.answered;
    while (total < 5) {
        used = srv_call(&s, pipe + total * one, (5 - total) * one);
        assert_true(s.io.answered > 0);
        total += s.io.answered;
    }
    assert_int_equal(total, 5);
    srv_free(&s);

    /* a reply bigger than obuf still goes out, one per call */
    srv_init(&s, 200000);
    assert_int_equal(srv_str(&s, GET GET), one);
    assert_int_equal(s.io.answered, 1);
    assert_true(s.io.out_len > 200000);
    srv_free(&s);
}

/* The codec's request, the server's reply, the codec's verdict. */
static void test_round_trip(void **state)
{
    static const struct {
        const char *method;
        size_t size, body_size;
        bool keep;
    } rt[] = {
        { NULL, 0, 0, true },     { "POST", 1000, 0, true },
        { NULL, 0, 5000, false }, { "POST", 100000, 70000, true },
        { "HEAD", 0, 10, true },
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(rt); i++) {
        struct srv s;
        struct hctx c;
        char *expect = malloc(rt[i].body_size + 7);
        size_t n, used = 0, done = 0;
        uint8_t *req;
        struct codec_msg msg = { 0 };

        assert_non_null(expect);
        if (rt[i].body_size == 0)
            strcpy(expect, "hello\n");
        else {
            for (size_t j = 0; j < rt[i].body_size; j++)
                expect[j] = (char)http_pattern_byte(j);
            expect[rt[i].body_size] = '\0';
        }
        hctx_init(&c, rt[i].method,
                  strcmp(rt[i].method ? rt[i].method : "", "HEAD") ? expect : NULL);
        c.cfg.size = rt[i].size;
        c.cfg.keep_alive = rt[i].keep;
        http_codec.init(c.st, &c.cfg);
        n = http_codec.max_request(&c.cfg);
        req = malloc(n);
        assert_non_null(req);
        assert_int_equal(http_codec.encode(c.st, req, n), n);
        srv_init(&s, rt[i].body_size);
        /* the request in in_cap-sized reads, as the frame would hand it over */
        while (done < n) {
            size_t len = n - done < server_http.in_cap ? n - done : server_http.in_cap;
            size_t r = srv_call(&s, req + done, len);

            assert_true(r != SERVER_PROTO_ERROR && r > 0);
            done += r;
        }
        assert_int_equal(s.io.answered, 1);
        assert_int_equal(s.io.close, !rt[i].keep);
        assert_int_equal(http_codec.feed(c.st, s.io.out, s.io.out_len, &used, &msg), CODEC_DONE);
        assert_int_equal(used, s.io.out_len);
        assert_int_equal(msg.status, 200);
        assert_int_equal(msg.closes, !rt[i].keep);
        srv_free(&s);
        free(req);
        free(expect);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode),
        cmocka_unit_test(test_pattern),
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_reset_eof),
        cmocka_unit_test(test_head_cap),
        cmocka_unit_test(test_fields_cap),
        cmocka_unit_test(test_chunk_caps),
        cmocka_unit_test(test_body_cap),
        cmocka_unit_test(test_expect_long),
        cmocka_unit_test(test_server_basic),
        cmocka_unit_test(test_server_pipelined),
        cmocka_unit_test(test_server_partial),
        cmocka_unit_test(test_server_big_body),
        cmocka_unit_test(test_server_bad),
        cmocka_unit_test(test_server_body_size),
        cmocka_unit_test(test_round_trip),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
