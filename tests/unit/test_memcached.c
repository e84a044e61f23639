/*
 * test_memcached: the memcached text protocol's codec and built-in server.
 * The requests are the protocol's bytes (a get, a set with its data, a mix
 * in its order, each connection's keys from its own offset); every reply,
 * good or bad, gives the same verdict whole, split at every byte, and one
 * byte at a time; a filled key's miss or value of another size is 'body',
 * a framing error MISMATCH at its line, a huge value TOO_BIG. The server
 * answers set, get, delete, stats, version and quit as memcached does, the
 * same however the requests are split, and closes on a malformed one.
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/memcached.h"
#include "registry.h"
#include "server/server.h"

#define STATE_MAX 2048

struct mctx {
    _Alignas(max_align_t) uint8_t st[STATE_MAX];
    struct memcached_opts opts;
    struct codec_cfg cfg;
};

static void ctx_init(struct mctx *c, const char *mix, uint64_t keys, size_t size, bool filled)
{
    memset(c, 0, sizeof(*c));
    c->opts.keys = keys;
    c->opts.filled = filled;
    c->opts.command.len = (unsigned)strlen(mix);
    for (size_t i = 0; mix[i] != '\0'; i++)
        c->opts.command.mix[i] = mix[i] == 'S' ? MEMCACHED_SET : MEMCACHED_GET;
    if (strlen(mix) == 1) {
        c->opts.command.cmd = c->opts.command.mix[0];
        c->opts.command.len = 0;
    }
    c->cfg = (struct codec_cfg){ .size = size, .opts = &c->opts };
    assert_true(memcached_codec.state_size <= STATE_MAX);
    memcached_codec.init(c->st, &c->cfg);
}

/* The next request as a string. */
static const char *encode(struct mctx *c)
{
    static char buf[4096];
    size_t n = memcached_codec.encode(c->st, (uint8_t *)buf, sizeof(buf) - 1);

    assert_true(n > 0 && n <= memcached_codec.max_request(&c->cfg));
    buf[n] = '\0';
    return buf;
}

static void test_requests(void **state)
{
    struct mctx c;

    (void)state;
    ctx_init(&c, "G", 1, 64, false);
    assert_string_equal(encode(&c), "get key:0\r\n");
    ctx_init(&c, "S", 1, 5, false);
    assert_string_equal(encode(&c), "set key:0 0 0 5\r\nxxxxx\r\n");
    assert_int_equal(memcached_codec.max_request(&c.cfg), strlen("set key:0 0 0 5\r\nxxxxx\r\n"));
    /* a mix in its order, the keys cycling from the connection's first */
    ctx_init(&c, "SGG", 3, 1, false);
    assert_string_equal(encode(&c), "set key:0 0 0 1\r\nx\r\n");
    assert_string_equal(encode(&c), "get key:1\r\n");
    assert_string_equal(encode(&c), "get key:2\r\n");
    assert_string_equal(encode(&c), "set key:0 0 0 1\r\nx\r\n");
    /* another connection starts elsewhere among the keys */
    c.cfg.conn_index = 1;
    memcached_codec.init(c.st, &c.cfg);
    assert_string_not_equal(encode(&c), "set key:0 0 0 1\r\nx\r\n");
    /* too little room: nothing */
    ctx_init(&c, "S", 1, 100, false);
    assert_int_equal(memcached_codec.encode(c.st, (uint8_t[8]){ 0 }, 8), 0);
}

struct verdict {
    enum codec_rc rc;
    enum codec_err err;
    size_t err_off, used;
    bool error_reply;
    unsigned kind;
};

/* The reply fed in pieces of `step` bytes (0: whole) to a fresh state that sent one request. */
static struct verdict feed(const char *mix, bool filled, size_t size, const char *reply,
                           size_t step)
{
    struct mctx c;
    struct verdict v = { .rc = CODEC_NEED_MORE };
    size_t len = strlen(reply), off = 0;

    ctx_init(&c, mix, 1, size, filled);
    (void)encode(&c);
    while (off < len && v.rc == CODEC_NEED_MORE) {
        struct codec_msg msg = { 0 };
        size_t n = step == 0 || len - off < step ? len - off : step, used = 0;
        v.rc = memcached_codec.feed(c.st, (const uint8_t *)reply + off, n, &used, &msg);
        assert_true(used <= n);
        assert_true(v.rc != CODEC_NEED_MORE || used == n);
        off += used;
        v.err = msg.err;
        v.err_off = msg.err_off;
        v.error_reply = msg.error_reply;
        v.kind = msg.kind;
    }
    v.used = off;
    return v;
}

/* Whole, at every split into two, and byte by byte: the same verdict as want. */
static void same_split(const char *mix, bool filled, size_t size, const char *reply,
                       enum codec_rc rc, enum codec_err err, bool error_reply)
{
    struct verdict whole = feed(mix, filled, size, reply, 0);

    if (whole.rc != rc || whole.err != err || whole.error_reply != error_reply)
        fail_msg("'%s': rc %d err %d error_reply %d", reply, whole.rc, whole.err,
                 whole.error_reply);
    for (size_t step = 1; step <= strlen(reply); step++) {
        struct verdict v = feed(mix, filled, size, reply, step);
        if (v.rc != whole.rc || v.err != whole.err || v.err_off != whole.err_off ||
            v.used != whole.used || v.error_reply != whole.error_reply || v.kind != whole.kind)
            fail_msg("'%s' in pieces of %zu: another verdict", reply, step);
    }
}

static void test_replies_split(void **state)
{
    (void)state;
    same_split("S", false, 5, "STORED\r\n", CODEC_DONE, CODEC_ERR_NONE, false);
    same_split("S", false, 5, "NOT_STORED\r\n", CODEC_DONE, CODEC_ERR_NONE, true);
    same_split("S", false, 5, "SERVER_ERROR out of memory storing object\r\n", CODEC_DONE,
               CODEC_ERR_NONE, true);
    same_split("G", false, 5, "END\r\n", CODEC_DONE, CODEC_ERR_NONE, false);
    same_split("G", false, 5, "VALUE key:0 0 3\r\nabc\r\nEND\r\n", CODEC_DONE, CODEC_ERR_NONE,
               false);
    same_split("G", false, 5, "VALUE key:0 7 0 99\r\n\r\nEND\r\n", CODEC_DONE, CODEC_ERR_NONE,
               false);
    same_split("G", false, 5, "ERROR\r\n", CODEC_DONE, CODEC_ERR_NONE, true);
    /* filled keys: a value of --size bytes, else 'body' once the reply ended */
    same_split("G", true, 5, "VALUE key:0 0 5\r\nxxxxx\r\nEND\r\n", CODEC_DONE, CODEC_ERR_NONE,
               false);
    same_split("G", true, 5, "VALUE key:0 0 4\r\nxxxx\r\nEND\r\n", CODEC_ERROR, CODEC_ERR_BODY,
               false);
    same_split("G", true, 5, "END\r\n", CODEC_ERROR, CODEC_ERR_BODY, false);
    /* framing */
    same_split("G", false, 5, "VALUE key:1 0 3\r\nabc\r\nEND\r\n", CODEC_ERROR, CODEC_ERR_MISMATCH,
               false);
    same_split("G", false, 5, "VALUE key:0 0 3\r\nabcd\r\nEND\r\n", CODEC_ERROR, CODEC_ERR_MISMATCH,
               false);
    same_split("G", false, 5, "VALUE key:0 0 3\r\nabc\r\nVALUE key:0 0 3\r\n", CODEC_ERROR,
               CODEC_ERR_MISMATCH, false);
    same_split("G", false, 5, "STORED\r\n", CODEC_ERROR, CODEC_ERR_MISMATCH, false);
    same_split("S", false, 5, "END\r\n", CODEC_ERROR, CODEC_ERR_MISMATCH, false);
    same_split("S", false, 5, "STORED\n", CODEC_ERROR, CODEC_ERR_MISMATCH, false);
    same_split("G", false, 5, "VALUE key:0 4294967296 3\r\nabc\r\nEND\r\n", CODEC_ERROR,
               CODEC_ERR_MISMATCH, false);
    same_split("G", false, 5, "VALUE key:0 0 9999999999\r\n", CODEC_ERROR, CODEC_ERR_TOO_BIG,
               false);
}

static void test_reply_details(void **state)
{
    char longline[MEMCACHED_MAX_LINE + 8];
    struct verdict v;

    (void)state;
    v = feed("S", false, 5, "STORED\r\nSTORED\r\n", 0);
    assert_int_equal(v.rc, CODEC_DONE);
    assert_int_equal(v.used, 8); /* one reply; the next is the next one's */
    assert_int_equal(v.kind, MEMCACHED_SET);
    v = feed("G", false, 5, "END\r\n", 0);
    assert_int_equal(v.kind, MEMCACHED_GET);
    v = feed("G", false, 5, "VALUE key:9 0 3\r\n", 0);
    assert_int_equal(v.err_off, 0); /* the line's first byte */
    v = feed("G", true, 5, "VALUE key:0 0 4\r\nxxxx\r\nEND\r\n", 0);
    assert_int_equal(v.err_off, 6); /* where its length begins */
    memset(longline, 'A', sizeof(longline) - 3);
    memcpy(longline + sizeof(longline) - 3, "\r\n", 3);
    v = feed("G", false, 5, longline, 0);
    assert_int_equal(v.rc, CODEC_ERROR);
    assert_int_equal(v.err, CODEC_ERR_TOO_BIG);
}

/* ---- the built-in server ----------------------------------------------------------- */

struct srv {
    void *shared;
    uint8_t obuf[96 * 1024];
    char out[8192];
    size_t out_len;
    bool closed;
};

/* Feeds the requests in pieces of step bytes (0: whole), as the frame would; the replies. */
static const char *serve(struct srv *s, const char *in, size_t step)
{
    size_t len = strlen(in), have = 0, got = 0;
    uint8_t buf[8192];

    s->out_len = 0;
    s->closed = false;
    while (got < len || have > 0) {
        struct server_io io = { .obuf = s->obuf, .ocap = sizeof(s->obuf) };
        size_t n = step == 0 || len - got < step ? len - got : step, used;
        memcpy(buf + have, in + got, n);
        have += n;
        got += n;
        used = server_memcached.process(s->shared, &io, buf, have);
        if (io.out_len > 0) {
            assert_true(s->out_len + io.out_len < sizeof(s->out));
            memcpy(s->out + s->out_len, io.out, io.out_len);
            s->out_len += io.out_len;
        }
        if (used == SERVER_PROTO_ERROR || io.close) {
            s->closed = true;
            break;
        }
        memmove(buf, buf + used, have - used);
        have -= used;
        if (n == 0 && used == 0) break; /* a partial request at the end */
    }
    s->out[s->out_len] = '\0';
    return s->out;
}

static void test_server(void **state)
{
    static const char script[] = "set key:1 5 0 3\r\nabc\r\nget key:1 key:2\r\nset k 0 0 0 "
                                 "noreply\r\n\r\nget k\r\ndelete key:1\r\ndelete key:1\r\n"
                                 "version\r\nflush\r\n";
    static const char want[] = "STORED\r\nVALUE key:1 5 3\r\nabc\r\nEND\r\nVALUE k 0 0\r\n\r\n"
                               "END\r\nDELETED\r\nNOT_FOUND\r\nVERSION hopbench\r\nERROR\r\n";
    struct srv *s = calloc(1, sizeof(*s));
    char stats[512];

    (void)state;
    assert_non_null(s);
    for (size_t step = 0; step <= sizeof(script); step += step < 24 ? 1 : 37) {
        assert_int_equal(server_memcached.create(NULL, &s->shared), 0);
        assert_string_equal(serve(s, script, step), want);
        assert_false(s->closed);
        snprintf(stats, sizeof(stats), "%s", serve(s, "stats\r\n", 0));
        assert_non_null(strstr(stats, "STAT cmd_get 3\r\n"));
        assert_non_null(strstr(stats, "STAT cmd_set 2\r\n"));
        assert_non_null(strstr(stats, "STAT get_hits 2\r\n"));
        assert_non_null(strstr(stats, "STAT get_misses 1\r\n"));
        assert_non_null(strstr(stats, "STAT curr_items 1\r\n"));
        server_memcached.destroy(s->shared);
    }
    assert_int_equal(server_memcached.create(NULL, &s->shared), 0);
    /* quit closes; a bad data chunk or line is an error and a close */
    assert_string_equal(serve(s, "quit\r\nget k\r\n", 0), "");
    assert_true(s->closed);
    assert_string_equal(serve(s, "set k 0 0 2\r\nabc\r\n", 0), "CLIENT_ERROR bad data chunk\r\n");
    assert_true(s->closed);
    assert_string_equal(serve(s, "set k x 0 2\r\nab\r\n", 0),
                        "CLIENT_ERROR bad command line format\r\n");
    assert_true(s->closed);
    assert_string_equal(serve(s, "get k\n", 0), "CLIENT_ERROR line not ended by CR LF\r\n");
    assert_true(s->closed);
    assert_string_equal(serve(s, "set k 0 0 99999999\r\n", 0),
                        "SERVER_ERROR object too large for cache\r\n");
    server_memcached.destroy(s->shared);
    free(s);
}

/* The codec reads what the server writes: a mix against it is clean. */
static void test_codec_server(void **state)
{
    struct srv *s = calloc(1, sizeof(*s));
    struct mctx c;
    char req[8192] = "";

    (void)state;
    assert_non_null(s);
    assert_int_equal(server_memcached.create(NULL, &s->shared), 0);
    ctx_init(&c, "SSSG", 3, 10, true);
    for (int i = 0; i < 8; i++)
        strcat(req, encode(&c));
    serve(s, req, 0);
    for (size_t off = 0, i = 0; i < 8; i++) {
        struct codec_msg msg = { 0 };
        size_t used = 0;
        assert_int_equal(memcached_codec.feed(c.st, (const uint8_t *)s->out + off, s->out_len - off,
                                              &used, &msg),
                         CODEC_DONE);
        assert_false(msg.error_reply);
        assert_int_equal(msg.kind, i % 4 == 3 ? MEMCACHED_GET : MEMCACHED_SET);
        off += used;
    }
    server_memcached.destroy(s->shared);
    free(s);
}

/* The entry: found by name, its codec and server, its options refused for others. */
static void test_entry(void **state)
{
    const struct proto_entry *pe = proto_find("memcached");

    (void)state;
    assert_non_null(pe);
    assert_ptr_equal(pe->codec, &memcached_codec);
    assert_ptr_equal(pe->server, &server_memcached);
    assert_non_null(proto_takes(pe, "--command"));
    assert_non_null(proto_takes(pe, "--keys"));
    assert_null(proto_takes(pe, "--expect-body"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requests),      cmocka_unit_test(test_replies_split),
        cmocka_unit_test(test_reply_details), cmocka_unit_test(test_server),
        cmocka_unit_test(test_codec_server),  cmocka_unit_test(test_entry),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
