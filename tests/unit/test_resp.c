/*
 * test_resp: the RESP2 client codec (proto/resp.h) and the reference Redis
 * server's protocol part (server_redis) against their contracts.
 *
 * Codec: exact request bytes for PING/SET/GET, the key cycle and each
 * connection's starting key, max_request; every reply case fed whole, split
 * at every offset and byte by byte, each piece ending at a PROT_NONE page
 * (guard.h), with the same verdict, offset and bytes used every way.
 * Server: codec requests through server_redis.process and the replies back
 * through the codec, pipelining, partial and oversized requests, protocol
 * errors, a small obuf, and four threads on the shared store at once.
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "proto/codec.h"
#include "proto/resp.h"
#include "registry.h"
#include "server/server.h"

#define STATE_MAX 1024
#define SENTINEL  0xa5
#define LONG_CASE 2000 /* replies longer than this are split at sampled offsets */
#define SAMPLE    997

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* One codec instance with its options. */
struct rctx {
    _Alignas(max_align_t) unsigned char st[STATE_MAX];
    struct resp_opts opts;
    struct codec_cfg cfg;
};

static void ctx_init(struct rctx *c, enum codec_redis_cmd cmd, size_t size, uint64_t keys,
                     unsigned conn, const char *expect)
{
    assert_true(resp_codec.state_size <= STATE_MAX);
    c->opts = (struct resp_opts){ .command = { .cmd = cmd }, .keys = keys, .expect_body = expect };
    c->cfg = (struct codec_cfg){ .size = size, .conn_index = conn, .opts = &c->opts };
    resp_codec.init(c->st, &c->cfg);
}

/* The request the codec must write for key n, built independently with snprintf. */
static size_t expected_req(enum codec_redis_cmd cmd, unsigned long long n, size_t size,
                           uint8_t *dst)
{
    char key[32];
    int klen = snprintf(key, sizeof(key), "key:%llu", n);
    int len;

    if (cmd == REDIS_PING) return (size_t)sprintf((char *)dst, "*1\r\n$4\r\nPING\r\n");
    if (cmd == REDIS_GET)
        return (size_t)sprintf((char *)dst, "*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", klen, key);
    len = sprintf((char *)dst, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%zu\r\n", klen, key, size);
    memset(dst + len, 'x', size);
    memcpy(dst + (size_t)len + size, "\r\n", 2);
    return (size_t)len + size + 2;
}

/* The key number in an encoded GET or SET request. */
static unsigned long long req_key(const uint8_t *req, size_t len)
{
    const uint8_t *k = memmem(req, len, "key:", 4);

    assert_non_null(k);
    return strtoull((const char *)k + 4, NULL, 10);
}

/* Encodes one request into a buffer that ends at a guard page (cap = max_request). */
static size_t encode_one(struct rctx *c, uint8_t *out)
{
    size_t cap = resp_codec.max_request(&c->cfg);
    struct guard g;
    uint8_t *p = guard_alloc(&g, cap);
    size_t n = resp_codec.encode(c->st, p, cap);

    assert_true(n > 0 && n <= cap);
    memcpy(out, p, n);
    guard_free(&g);
    return n;
}

/* ---- 1. requests -------------------------------------------------------- */

static void test_ops(void **state)
{
    (void)state;
    assert_string_equal(resp_codec.name, "redis");
    assert_ptr_equal(codec_find("redis"), &resp_codec);
    assert_non_null(strstr(codec_names(), "redis"));
    assert_false(resp_codec.fixed);
    assert_non_null(resp_codec.max_request);
    assert_non_null(resp_codec.eof);
    assert_non_null(resp_codec.reset);
    assert_true(resp_codec.state_size <= STATE_MAX);
}

static void check_encode_exact(enum codec_redis_cmd cmd, size_t size, const char *want)
{
    struct rctx c;
    uint8_t buf[256];
    size_t n;

    ctx_init(&c, cmd, size, 1, 0, NULL);
    assert_int_equal(resp_codec.max_request(&c.cfg), strlen(want));
    for (int i = 0; i < 3; i++) { /* keys = 1: every request the same */
        n = encode_one(&c, buf);
        assert_int_equal(n, strlen(want));
        assert_memory_equal(buf, want, n);
    }
}

static void test_encode_exact(void **state)
{
    (void)state;
    check_encode_exact(REDIS_PING, 0, "*1\r\n$4\r\nPING\r\n");
    check_encode_exact(REDIS_PING, 100, "*1\r\n$4\r\nPING\r\n");
    check_encode_exact(REDIS_GET, 5, "*2\r\n$3\r\nGET\r\n$5\r\nkey:0\r\n");
    check_encode_exact(REDIS_SET, 5, "*3\r\n$3\r\nSET\r\n$5\r\nkey:0\r\n$5\r\nxxxxx\r\n");
    check_encode_exact(REDIS_SET, 0, "*3\r\n$3\r\nSET\r\n$5\r\nkey:0\r\n$0\r\n\r\n");
    check_encode_exact(REDIS_SET, 12, "*3\r\n$3\r\nSET\r\n$5\r\nkey:0\r\n$12\r\nxxxxxxxxxxxx\r\n");
}

/* Too little room: 0, nothing written, and the key does not advance. */
static void test_encode_no_room(void **state)
{
    static const enum codec_redis_cmd cmds[] = { REDIS_PING, REDIS_SET, REDIS_GET };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cmds); i++) {
        struct rctx c;
        uint8_t want[128], buf[256];
        size_t need, wn;

        ctx_init(&c, cmds[i], 10, 5, 0, NULL);
        need = resp_codec.max_request(&c.cfg);
        wn = expected_req(cmds[i], 0, 10, want);
        assert_int_equal(wn, need);
        for (size_t cap = 0; cap < need; cap++) {
            memset(buf, SENTINEL, sizeof(buf));
            assert_int_equal(resp_codec.encode(c.st, buf, cap), 0);
            for (size_t b = 0; b < sizeof(buf); b++)
                if (buf[b] != SENTINEL)
                    fail_msg("cmd %d cap %zu: byte %zu written", cmds[i], cap, b);
        }
        assert_int_equal(encode_one(&c, buf), wn);
        assert_memory_equal(buf, want, wn); /* still key:0 */
    }
}

static void test_encode_large_value(void **state)
{
    size_t size = 65536;
    struct rctx c;
    uint8_t *want = malloc(size + 64), *got = malloc(size + 64);
    size_t n;

    (void)state;
    assert_non_null(want);
    assert_non_null(got);
    ctx_init(&c, REDIS_SET, size, 3, 0, NULL);
    for (unsigned long long k = 0; k < 7; k++) {
        size_t wn = expected_req(REDIS_SET, k % 3, size, want);

        n = encode_one(&c, got);
        assert_int_equal(n, wn);
        assert_memory_equal(got, want, n);
    }
    assert_int_equal(resp_codec.max_request(&c.cfg), n);
    free(want);
    free(got);
}

/* `count` requests from connection `conn`: keys start..., one step each, wrapping at keys. */
static void check_cycle(enum codec_redis_cmd cmd, uint64_t keys, unsigned conn, size_t count,
                        unsigned long long start)
{
    struct rctx c;
    uint8_t want[256], got[256];

    ctx_init(&c, cmd, 3, keys, conn, NULL);
    for (size_t i = 0; i < count; i++) {
        unsigned long long k = (start + i) % (keys == 0 ? 1 : keys);
        size_t wn = expected_req(cmd, k, 3, want);
        size_t n = encode_one(&c, got);

        if (n != wn || memcmp(got, want, n) != 0)
            fail_msg("keys %llu conn %u request %zu: got '%.*s', want key:%llu",
                     (unsigned long long)keys, conn, i, (int)n, (const char *)got, k);
    }
}

static void test_key_cycle(void **state)
{
    (void)state;
    check_cycle(REDIS_GET, 0, 0, 5, 0); /* 0 means 1: always key:0 */
    check_cycle(REDIS_GET, 1, 0, 5, 0);
    check_cycle(REDIS_GET, 1, 7, 5, 0);
    check_cycle(REDIS_GET, 3, 0, 10, 0);
    check_cycle(REDIS_SET, 3, 0, 10, 0);
    check_cycle(REDIS_GET, 12, 0, 30, 0);      /* key:9 -> key:10 ($5 -> $6) -> key:0 */
    check_cycle(REDIS_GET, 101, 0, 250, 0);    /* 99 -> 100 -> wrap */
    check_cycle(REDIS_SET, 1001, 0, 2100, 0);  /* 999 -> 1000 -> wrap */
    check_cycle(REDIS_GET, 100000, 0, 100, 0); /* no wrap */
    check_cycle(REDIS_GET, 10, 1, 25, 7);      /* conn 1 of 10 starts at 7, wraps at 10 */
}

/* The key a connection's first request uses. */
static unsigned long long first_key(uint64_t keys, unsigned conn)
{
    struct rctx c;
    uint8_t buf[256];
    size_t n;

    ctx_init(&c, REDIS_GET, 0, keys, conn, NULL);
    n = encode_one(&c, buf);
    return req_key(buf, n);
}

static void test_conn_offset(void **state)
{
    static const unsigned long long ten[] = { 0, 7, 4, 1, 8, 5, 2, 9, 6, 3 };
    static const uint64_t spread[] = { 100, 1000, 12345, 1000000, 1ull << 40 };

    (void)state;
    for (unsigned i = 0; i < 10; i++)
        assert_int_equal(first_key(10, i), ten[i]);

    /* up to `keys` connections start at distinct keys; conn_index wraps at keys */
    for (uint64_t keys = 1; keys <= 300; keys++) {
        uint8_t *seen = calloc(keys, 1);

        assert_non_null(seen);
        for (unsigned i = 0; i < keys; i++) {
            unsigned long long k = first_key(keys, i);

            if (k >= keys || seen[k])
                fail_msg("keys %llu: conn %u starts at %llu again", (unsigned long long)keys, i, k);
            seen[k] = 1;
        }
        assert_int_equal(first_key(keys, (unsigned)keys + 3), first_key(keys, 3));
        free(seen);
    }

    /* connection 1 starts about 0.618 of the way round, not next door */
    for (size_t i = 0; i < ARRAY_LEN(spread); i++) {
        uint64_t keys = spread[i];
        unsigned long long k = first_key(keys, 1);

        assert_int_equal(first_key(keys, 0), 0);
        if (k < keys * 618 / 1000 || k > keys * 619 / 1000 + 10)
            fail_msg("keys %llu: conn 1 starts at %llu", (unsigned long long)keys, k);
    }

    /* the largest key space: digits up to 20, still below keys */
    for (unsigned i = 0; i < 50; i++) {
        struct rctx c;
        uint8_t buf[256];
        size_t n;

        ctx_init(&c, REDIS_SET, 4, UINT64_MAX, i, NULL);
        for (int r = 0; r < 3; r++) {
            uint8_t want[256];
            unsigned long long k;

            n = encode_one(&c, buf);
            k = req_key(buf, n);
            assert_true(k < UINT64_MAX);
            assert_int_equal(expected_req(REDIS_SET, k, 4, want), n);
            assert_memory_equal(buf, want, n);
        }
    }
}

/*
 * The engine's table of requests that come round (codec_ops.cycle): a round and P - 1
 * more, encoded by connection 0's state; a connection's batches of n taken from it at
 * cycle_pos, with advance(n), are the bytes its own encode() calls write, and the state
 * after advance() encodes what it would have.
 */
static void ctx_init_mix(struct rctx *c, const char *mix, size_t size, uint64_t keys);

static void check_round(enum codec_redis_cmd cmd, uint64_t keys, unsigned conn, unsigned pipeline)
{
    struct rctx table, own, advanced;
    uint64_t round;
    size_t entries, at = 0, *off;
    uint8_t *bytes, got[256];

    ctx_init(&table, cmd, 9, keys, 0, NULL);
    round = resp_codec.cycle(&table.cfg);
    assert_int_equal(round, cmd == REDIS_PING ? 1 : keys == 0 ? 1 : keys);
    entries = (size_t)round + pipeline - 1;
    bytes = malloc(entries * resp_codec.max_request(&table.cfg));
    off = calloc(entries + 1, sizeof(*off));
    assert_true(bytes != NULL && off != NULL);
    for (size_t i = 0; i < entries; i++) {
        off[i] = at;
        at += encode_one(&table, bytes + at);
    }
    off[entries] = at;
    ctx_init(&own, cmd, 9, keys, conn, NULL);
    ctx_init(&advanced, cmd, 9, keys, conn, NULL);
    for (unsigned b = 0; b < 3 * keys + 5; b++) {
        unsigned n = 1 + (b * 7 + conn) % pipeline;
        uint64_t pos = resp_codec.cycle_pos(advanced.st);
        size_t len = 0;

        assert_true(pos < round);
        for (unsigned i = 0; i < n; i++) {
            size_t m = encode_one(&own, got);

            assert_true(off[pos] + len + m <= off[pos + n]);
            assert_memory_equal(got, bytes + off[pos] + len, m);
            len += m;
        }
        assert_int_equal(len, off[pos + n] - off[pos]);
        resp_codec.advance(advanced.st, n);
    }
    /* after the advances, the state's own next request is the encoding one's */
    {
        uint8_t a[256];
        size_t m = encode_one(&own, got);

        assert_int_equal(encode_one(&advanced, a), m);
        assert_memory_equal(a, got, m);
    }
    free(bytes);
    free(off);
}

static void test_cycle_table(void **state)
{
    struct rctx mix;

    (void)state;
    check_round(REDIS_PING, 1, 0, 1);
    check_round(REDIS_PING, 10, 3, 16);
    for (unsigned conn = 0; conn < 12; conn++) {
        check_round(REDIS_SET, 1, conn, 1);
        check_round(REDIS_SET, 7, conn, 4);
        check_round(REDIS_GET, 12, conn, 16); /* key:9 -> key:10 inside a batch */
        check_round(REDIS_SET, 101, conn, 16);
    }
    check_round(REDIS_SET, 1001, 5, 16); /* key:999 -> key:1000 -> key:0 */
    /* a mix's requests are not said to come round: each is encoded */
    ctx_init_mix(&mix, "SGGP", 7, 3);
    assert_int_equal(resp_codec.cycle(&mix.cfg), 0);
}

/* max_request is the longest request of a whole cycle, for every connection start. */
static void test_max_request(void **state)
{
    static const enum codec_redis_cmd cmds[] = { REDIS_PING, REDIS_SET, REDIS_GET };
    static const size_t sizes[] = { 0, 1, 9, 10, 100, 65536 };
    static const uint64_t keys[] = { 0, 1, 2, 9, 10, 11, 100, 1001 };
    uint8_t *buf = malloc(70000);

    (void)state;
    assert_non_null(buf);
    for (size_t a = 0; a < ARRAY_LEN(cmds); a++)
        for (size_t b = 0; b < ARRAY_LEN(sizes); b++)
            for (size_t k = 0; k < ARRAY_LEN(keys); k++) {
                struct rctx c;
                size_t longest = 0, max;
                uint64_t nk = keys[k] == 0 ? 1 : keys[k];

                ctx_init(&c, cmds[a], sizes[b], keys[k], 3, NULL);
                max = resp_codec.max_request(&c.cfg);
                for (uint64_t i = 0; i < nk; i++) {
                    size_t n = resp_codec.encode(c.st, buf, max);

                    assert_true(n > 0 && n <= max);
                    if (n > longest) longest = n;
                }
                assert_int_equal(longest, max);
            }
    free(buf);
}

/* ---- 2. replies --------------------------------------------------------- */

struct outcome {
    enum codec_rc rc;
    enum codec_err err;
    size_t err_off;
    size_t used; /* bytes used in all, across the pieces */
    bool error_reply;
};

/*
 * Feeds rep in pieces that end at cuts[0..ncut) (increasing, inside rep) and
 * at len, each copied to a buffer that ends at a guard page. Stops at the
 * first DONE or ERROR.
 */
static struct outcome feed_cuts(struct rctx *c, const uint8_t *rep, size_t len, const size_t *cuts,
                                size_t ncut)
{
    struct outcome o = { .rc = CODEC_NEED_MORE };
    size_t start = 0;
    struct guard g;

    guard_alloc(&g, len); /* one mapping: each piece is copied to its end */
    for (size_t i = 0; i <= ncut; i++) {
        size_t end = i < ncut ? cuts[i] : len, n = end - start, used = SIZE_MAX;
        struct codec_msg msg = { .err = CODEC_ERR_NONE, .err_off = SIZE_MAX };
        uint8_t *p = guard_tail(&g, n);
        enum codec_rc rc;

        memcpy(p, rep + start, n);
        rc = resp_codec.feed(c->st, p, n, &used, &msg);
        if (used > n) fail_msg("used %zu of %zu", used, n);
        if (rc != CODEC_NEED_MORE) {
            o = (struct outcome){ .rc = rc,
                                  .err = msg.err,
                                  .err_off = msg.err_off,
                                  .used = start + used,
                                  .error_reply = msg.error_reply };
            if (rc == CODEC_DONE && msg.err != CODEC_ERR_NONE) fail_msg("DONE with err set");
            if (msg.status != 0) fail_msg("status %u", msg.status);
            guard_free(&g);
            return o;
        }
        if (used != n) fail_msg("NEED_MORE but used %zu of %zu", used, n);
        start = end;
    }
    guard_free(&g);
    o.used = len;
    return o;
}

struct reply_case {
    enum codec_redis_cmd cmd;
    const char *expect;
    const char *reply;
    size_t len; /* 0: strlen(reply) */
    enum codec_rc rc;
    enum codec_err err;
    size_t err_off;
    size_t used; /* DONE and ERROR: bytes used; NEED_MORE: all */
    bool error_reply;
};

#define DONE(cmd, exp, rep, used, er)                                                              \
    {                                                                                              \
        cmd, exp, rep, 0, CODEC_DONE, CODEC_ERR_NONE, 0, used, er                                  \
    }
#define FAIL(cmd, exp, rep, err, at, used)                                                         \
    {                                                                                              \
        cmd, exp, rep, 0, CODEC_ERROR, err, at, used, false                                        \
    }
#define MORE(cmd, exp, rep)                                                                        \
    {                                                                                              \
        cmd, exp, rep, 0, CODEC_NEED_MORE, CODEC_ERR_NONE, 0, SIZE_MAX, false                      \
    }
#define MIS  CODEC_ERR_MISMATCH
#define BIG  CODEC_ERR_TOO_BIG
#define BODY CODEC_ERR_BODY
#define P    REDIS_PING
#define S    REDIS_SET
#define G    REDIS_GET

static const struct reply_case cases[] = {
    /* PING */
    DONE(P, NULL, "+PONG\r\n", 7, false),
    DONE(P, NULL, "+PONG\r\n+PONG\r\n", 7, false),
    DONE(P, NULL, "+PONG\r\n!garbage", 7, false),
    DONE(P, NULL, "-ERR unknown command\r\n", 22, true),
    DONE(P, NULL, "-\r\n", 3, true),
    FAIL(P, NULL, "+PONGX\r\n", MIS, 5, 8),
    FAIL(P, NULL, "+PON\r\n", MIS, 4, 6),
    FAIL(P, NULL, "+pong\r\n", MIS, 1, 7),
    FAIL(P, NULL, "+\r\n", MIS, 1, 3),
    FAIL(P, NULL, "+OK\r\n", MIS, 1, 5),
    FAIL(P, NULL, ":1\r\n", MIS, 0, 4),
    FAIL(P, NULL, "$4\r\nPONG\r\n", MIS, 0, 10),
    FAIL(P, NULL, "*1\r\n+PONG\r\n", MIS, 0, 11),
    FAIL(P, NULL, "*2\r\n+PONG\r\n+PONG\r\n", MIS, 0, 18),
    FAIL(P, NULL, "*1\r\n-ERR\r\n", MIS, 0, 10), /* a nested error is not an error reply */
    FAIL(P, NULL, "+PONG\n", MIS, 5, 5),
    FAIL(P, NULL, "+PONG\rX", MIS, 6, 6),
    FAIL(P, NULL, "+PO\nNG\r\n", MIS, 3, 3),
    FAIL(P, NULL, "!PONG\r\n", MIS, 0, 0),
    FAIL(P, NULL, "\r\n", MIS, 0, 0),
    FAIL(P, NULL, "PONG\r\n", MIS, 0, 0),
    MORE(P, NULL, "+PONG\r"),
    MORE(P, NULL, "+PO"),
    MORE(P, NULL, "-ERR"),
    MORE(P, NULL, ""),
    /* SET */
    DONE(S, NULL, "+OK\r\n", 5, false),
    DONE(S, NULL, "-OOM command not allowed\r\n", 26, true),
    FAIL(S, NULL, "+PONG\r\n", MIS, 1, 7),
    FAIL(S, NULL, "+OKAY\r\n", MIS, 3, 7),
    FAIL(S, NULL, "$-1\r\n", MIS, 0, 5),
    FAIL(S, NULL, ":0\r\n", MIS, 0, 4),
    /* GET, value not checked */
    DONE(G, NULL, "$5\r\nhello\r\n", 11, false),
    DONE(G, NULL, "$5\r\nhello\r\n$5\r\nhello\r\n", 11, false),
    DONE(G, NULL, "$-1\r\n", 5, false),
    DONE(G, NULL, "$0\r\n\r\n", 6, false),
    DONE(G, NULL, "$2\r\n\r\n\r\n", 8, false), /* a payload may hold CRLF */
    DONE(G, NULL, "$3\r\n+-*\r\n", 9, false),
    DONE(G, NULL, "$05\r\nhello\r\n", 12, false),
    DONE(G, NULL, "-ERR wrong\r\n", 12, true),
    FAIL(G, NULL, "+OK\r\n", MIS, 0, 5),
    FAIL(G, NULL, "$5\r\nhelloX\r\n", MIS, 9, 9),
    FAIL(G, NULL, "$5\r\nhello\rX", MIS, 10, 10),
    FAIL(G, NULL, "$5\r\nhello\n", MIS, 9, 9),
    FAIL(G, NULL, "$abc\r\n", MIS, 1, 1),
    FAIL(G, NULL, "$\r\n", MIS, 1, 1),
    FAIL(G, NULL, "$-\r\n", MIS, 2, 2),
    FAIL(G, NULL, "$-2\r\n", MIS, 2, 2),
    FAIL(G, NULL, "$-10\r\n", MIS, 3, 3),
    FAIL(G, NULL, "$-0\r\n", MIS, 2, 2),
    FAIL(G, NULL, "$+5\r\n", MIS, 1, 1),
    FAIL(G, NULL, "$5 \r\n", MIS, 2, 2),
    FAIL(G, NULL, "$5\r\r", MIS, 3, 3),
    FAIL(G, NULL, "$5\n", MIS, 2, 2),
    FAIL(G, NULL, "$536870913\r\n", BIG, 9, 9),
    FAIL(G, NULL, "$99999999999999999999999\r\n", BIG, 9, 9),
    MORE(G, NULL, "$536870912\r\n"), /* exactly the cap */
    MORE(G, NULL, "$5\r\nhel"),
    MORE(G, NULL, "$5\r\nhello\r"),
    /* GET with expect_body */
    DONE(G, "hello", "$5\r\nhello\r\n", 11, false),
    DONE(G, "hello", "-ERR x\r\n", 8, true),
    FAIL(G, "hello", "$5\r\nhellx\r\n", BODY, 8, 11),
    FAIL(G, "hello", "$5\r\nxellx\r\n", BODY, 4, 11),
    FAIL(G, "hello", "$4\r\nhell\r\n", BODY, 1, 10),
    FAIL(G, "hello", "$6\r\nhello!\r\n", BODY, 1, 12),
    FAIL(G, "hello", "$-1\r\n", BODY, 1, 5),
    FAIL(G, "hello", "+OK\r\n", MIS, 0, 5),
    FAIL(G, "hello", "$5\r\nhellx\rX", MIS, 10, 10), /* framing beats a wrong body */
    FAIL(G, "hello", "$5\r\nhellx\r\r", MIS, 10, 10),
    DONE(G, "", "$0\r\n\r\n", 6, false),
    FAIL(G, "", "$-1\r\n", BODY, 1, 5),
    FAIL(G, "", "$1\r\na\r\n", BODY, 1, 7),
    /* integers: well-formed, so judged (a GET wants a bulk) after the whole reply */
    FAIL(G, NULL, ":0\r\n", MIS, 0, 4),
    FAIL(G, NULL, ":-5\r\n", MIS, 0, 5),
    FAIL(G, NULL, ":+5\r\n", MIS, 0, 5),
    FAIL(G, NULL, ":-0\r\n", MIS, 0, 5),
    FAIL(G, NULL, ":9223372036854775807\r\n", MIS, 0, 22),
    FAIL(G, NULL, ":-9223372036854775808\r\n", MIS, 0, 23),
    FAIL(G, NULL, ":9223372036854775808\r\n", MIS, 19, 19),
    FAIL(G, NULL, ":-9223372036854775809\r\n", MIS, 20, 20),
    FAIL(G, NULL, ":\r\n", MIS, 1, 1),
    FAIL(G, NULL, ":-\r\n", MIS, 2, 2),
    FAIL(G, NULL, ":1a\r\n", MIS, 2, 2),
    FAIL(G, NULL, ":--1\r\n", MIS, 2, 2),
    FAIL(G, NULL, ":+-1\r\n", MIS, 2, 2),
    FAIL(G, NULL, ":1-\r\n", MIS, 2, 2),
    FAIL(G, NULL, ": 1\r\n", MIS, 1, 1),
    /* arrays: parsed to the end, then judged */
    FAIL(G, NULL, "*0\r\n", MIS, 0, 4),
    FAIL(G, NULL, "*-1\r\n", MIS, 0, 5),
    FAIL(G, NULL, "*2\r\n$1\r\na\r\n$-1\r\n", MIS, 0, 16),
    FAIL(G, NULL, "*3\r\n:1\r\n*2\r\n+a\r\n-e\r\n$0\r\n\r\n", MIS, 0, 26),
    FAIL(G, NULL, "*2\r\n*0\r\n*-1\r\n", MIS, 0, 13),
    FAIL(G, NULL, "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", MIS, 0, 36),
    FAIL(G, NULL, "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", BIG, 32, 35),
    FAIL(G, NULL, "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*0\r\n", MIS, 0, 36),
    FAIL(G, NULL, "*-2\r\n", MIS, 2, 2),
    FAIL(G, NULL, "*x\r\n", MIS, 1, 1),
    FAIL(G, NULL, "*2\r\n:1\r\n!", MIS, 8, 8),
    FAIL(G, NULL, "*4294967296\r\n", BIG, 10, 10),
    MORE(G, NULL, "*4294967295\r\n"),
    MORE(G, NULL, "*2\r\n:1\r\n"),
    MORE(G, NULL, "*2\r\n*1\r\n:1\r\n"),
    MORE(G, NULL, "*1\r\n$3\r\nab"),
};

/* Split points for a reply: all of 1..len-1, or a sample for long ones. */
static size_t *split_points(size_t len, size_t *count)
{
    size_t step = len > LONG_CASE ? SAMPLE : 1, n = 0;
    size_t *k = malloc((len / step + 8) * sizeof(*k));
    const size_t edges[] = { 1, 2, len / 2, len - 2, len - 1 };

    assert_non_null(k);
    for (size_t i = 1; i < len; i += step)
        k[n++] = i;
    if (step > 1)
        for (size_t i = 0; i < ARRAY_LEN(edges); i++)
            if (edges[i] > 0 && edges[i] < len) k[n++] = edges[i];
    *count = n;
    return k;
}

static void check_outcome(const struct reply_case *rc, size_t len, struct outcome o,
                          const char *how, size_t at)
{
    bool ok = o.rc == rc->rc;

    if (ok && rc->rc == CODEC_DONE) ok = o.used == rc->used && o.error_reply == rc->error_reply;
    if (ok && rc->rc == CODEC_ERROR)
        ok = o.err == rc->err && o.err_off == rc->err_off && o.used == rc->used;
    if (ok && rc->rc == CODEC_NEED_MORE) ok = o.used == len;
    if (!ok)
        fail_msg("cmd %d reply '%.40s' (%zu bytes) %s %zu: rc %d err %s at %zu used %zu er %d; "
                 "want rc %d err %s at %zu used %zu er %d",
                 rc->cmd, rc->reply, len, how, at, o.rc, codec_err_str(o.err), o.err_off, o.used,
                 o.error_reply, rc->rc, codec_err_str(rc->err), rc->err_off, rc->used,
                 rc->error_reply);
}

/* A good reply for the command, to feed before a case: DONE must leave a fresh parser. Freed
 * by the caller. */
static char *good_reply(enum codec_redis_cmd cmd, const char *expect)
{
    size_t n = expect != NULL ? strlen(expect) : 0;
    char *buf = malloc(n + 32);

    assert_non_null(buf);
    if (cmd == REDIS_PING)
        strcpy(buf, "+PONG\r\n");
    else if (cmd == REDIS_SET)
        strcpy(buf, "+OK\r\n");
    else if (expect == NULL)
        strcpy(buf, "$-1\r\n");
    else
        sprintf(buf, "$%zu\r\n%s\r\n", n, expect);
    return buf;
}

static void run_case(const struct reply_case *rc)
{
    const uint8_t *rep = (const uint8_t *)rc->reply;
    size_t len = rc->len ? rc->len : strlen(rc->reply), nk;
    size_t *ks = split_points(len, &nk), *bytes = malloc((len + 1) * sizeof(size_t));
    char *good = good_reply(rc->cmd, rc->expect);
    struct rctx c;

    assert_non_null(bytes);
    ctx_init(&c, rc->cmd, 0, 1, 0, rc->expect);
    check_outcome(rc, len, feed_cuts(&c, rep, len, NULL, 0), "whole", 0);

    /* after a good reply in the same state */
    ctx_init(&c, rc->cmd, 0, 1, 0, rc->expect);
    if (feed_cuts(&c, (const uint8_t *)good, strlen(good), NULL, 0).rc != CODEC_DONE)
        fail_msg("good reply '%s' not DONE", good);
    check_outcome(rc, len, feed_cuts(&c, rep, len, NULL, 0), "after a good reply", 0);

    for (size_t i = 0; i < nk; i++) {
        ctx_init(&c, rc->cmd, 0, 1, 0, rc->expect);
        check_outcome(rc, len, feed_cuts(&c, rep, len, &ks[i], 1), "split at", ks[i]);
    }
    for (size_t i = 1; i < len; i++)
        bytes[i - 1] = i;
    ctx_init(&c, rc->cmd, 0, 1, 0, rc->expect);
    check_outcome(rc, len, feed_cuts(&c, rep, len, bytes, len > 0 ? len - 1 : 0), "bytewise", 0);
    free(good);
    free(bytes);
    free(ks);
}

static void test_replies(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        run_case(&cases[i]);
}

/* A reply built at run time (long lines), run like the table's cases. */
static void run_built(enum codec_redis_cmd cmd, const char *expect, const char *head, char fill,
                      size_t nfill, const char *tail, struct reply_case rc)
{
    size_t hl = strlen(head), tl = strlen(tail), len = hl + nfill + tl;
    char *buf = malloc(len + 1);

    assert_non_null(buf);
    memcpy(buf, head, hl);
    memset(buf + hl, fill, nfill);
    memcpy(buf + hl + nfill, tail, tl + 1);
    rc.cmd = cmd;
    rc.expect = expect;
    rc.reply = buf;
    rc.len = len;
    run_case(&rc);
    free(buf);
}

static void test_caps(void **state)
{
    size_t L = RESP_MAX_LINE;

    (void)state;
    /* a line of exactly the cap is fine; one byte more is TOO_BIG at that byte */
    run_built(P, NULL, "+", 'a', L, "\r\n", (struct reply_case)FAIL(P, NULL, "", MIS, 1, L + 3));
    run_built(P, NULL, "+", 'a', L + 1, "\r\n",
              (struct reply_case)FAIL(P, NULL, "", BIG, L + 1, L + 1));
    run_built(P, NULL, "-", 'e', L, "\r\n", (struct reply_case)DONE(P, NULL, "", L + 3, true));
    run_built(P, NULL, "-", 'e', L + 1, "\r\n",
              (struct reply_case)FAIL(P, NULL, "", BIG, L + 1, L + 1));
    run_built(G, NULL, ":", '0', L, "\r\n", (struct reply_case)FAIL(G, NULL, "", MIS, 0, L + 3));
    run_built(G, NULL, ":", '0', L + 1, "\r\n",
              (struct reply_case)FAIL(G, NULL, "", BIG, L + 1, L + 1));
    run_built(G, NULL, "$", '0', L + 1, "\r\n",
              (struct reply_case)FAIL(G, NULL, "", BIG, L + 1, L + 1));
    /* a 64 KiB value, compared and not */
    run_built(G, NULL, "$65536\r\n", 'x', 65536, "\r\n",
              (struct reply_case)DONE(G, NULL, "", 65546, false));
    {
        char *exp = malloc(65537);

        assert_non_null(exp);
        memset(exp, 'x', 65536);
        exp[65536] = '\0';
        run_built(G, exp, "$65536\r\n", 'x', 65536, "\r\n",
                  (struct reply_case)DONE(G, NULL, "", 65546, false));
        run_built(G, exp, "$65536\r\n", 'x', 65536, "x\r\n",
                  (struct reply_case)FAIL(G, NULL, "", MIS, 65544, 65544));
        exp[40000] = 'y';
        run_built(G, exp, "$65536\r\n", 'x', 65536, "\r\n",
                  (struct reply_case)FAIL(G, NULL, "", BODY, 8 + 40000, 65546));
        free(exp);
    }
}

/* Large bulks are taken in one step: a 512 MiB header then small pieces never loop per byte. */
static void test_bulk_skip(void **state)
{
    struct rctx c;
    struct codec_msg msg;
    size_t used;
    static uint8_t chunk[1 << 20];
    const char *hdr = "$536870912\r\n";
    uint64_t left = RESP_MAX_BULK;

    (void)state;
    memset(chunk, 'z', sizeof(chunk));
    ctx_init(&c, G, 0, 1, 0, NULL);
    assert_int_equal(resp_codec.feed(c.st, (const uint8_t *)hdr, strlen(hdr), &used, &msg),
                     CODEC_NEED_MORE);
    while (left > 0) {
        size_t n = left < sizeof(chunk) ? (size_t)left : sizeof(chunk);

        assert_int_equal(resp_codec.feed(c.st, chunk, n, &used, &msg), CODEC_NEED_MORE);
        assert_int_equal(used, n);
        left -= n;
    }
    assert_int_equal(resp_codec.feed(c.st, (const uint8_t *)"\r\n+", 3, &used, &msg), CODEC_DONE);
    assert_int_equal(used, 2);
}

/* ---- 3. pipelines, eof, reset ------------------------------------------- */

/* Feeds a stream in chunks of `chunk` bytes, counting DONEs; every verdict must be DONE. */
static unsigned feed_stream(struct rctx *c, const uint8_t *s, size_t len, size_t chunk)
{
    unsigned dones = 0;
    struct guard g;

    guard_alloc(&g, chunk);
    for (size_t pos = 0; pos < len;) {
        size_t n = len - pos < chunk ? len - pos : chunk;
        uint8_t *p = guard_tail(&g, n);

        memcpy(p, s + pos, n);
        for (size_t off = 0; off < n;) {
            struct codec_msg msg;
            size_t used = SIZE_MAX;
            enum codec_rc rc = resp_codec.feed(c->st, p + off, n - off, &used, &msg);

            assert_true(used <= n - off);
            if (rc == CODEC_ERROR)
                fail_msg("chunk %zu at %zu: %s at %zu", chunk, pos + off, codec_err_str(msg.err),
                         msg.err_off);
            if (rc == CODEC_DONE) dones++;
            if (rc == CODEC_NEED_MORE) assert_int_equal(used, n - off);
            off += used;
        }
        pos += n;
    }
    guard_free(&g);
    return dones;
}

static void test_pipeline(void **state)
{
    static const char *const gets[] = { "$5\r\nhello\r\n", "$-1\r\n", "$0\r\n\r\n", "-ERR busy\r\n",
                                        "$2\r\n\r\n\r\n" };
    uint8_t s[1024];
    size_t len = 0;
    struct rctx c;

    (void)state;
    for (int i = 0; i < 16; i++) {
        memcpy(s + len, "+PONG\r\n", 7);
        len += 7;
    }
    for (size_t chunk = 1; chunk <= len; chunk++) {
        ctx_init(&c, P, 0, 1, 0, NULL);
        assert_int_equal(feed_stream(&c, s, len, chunk), 16);
    }
    len = 0;
    for (int i = 0; i < 20; i++) {
        const char *r = gets[i % ARRAY_LEN(gets)];

        memcpy(s + len, r, strlen(r));
        len += strlen(r);
    }
    for (size_t chunk = 1; chunk <= len; chunk++) {
        ctx_init(&c, G, 0, 1, 0, NULL);
        assert_int_equal(feed_stream(&c, s, len, chunk), 20);
    }
}

static void test_eof_reset(void **state)
{
    struct rctx c;
    struct codec_msg msg;
    size_t used;

    (void)state;
    /* between replies and mid-reply: ERROR / MISMATCH at the cut */
    ctx_init(&c, G, 0, 1, 0, NULL);
    assert_int_equal(resp_codec.eof(c.st, &msg), CODEC_ERROR);
    assert_int_equal(msg.err, CODEC_ERR_MISMATCH);
    assert_int_equal(msg.err_off, 0);
    assert_int_equal(resp_codec.feed(c.st, (const uint8_t *)"$5\r\nhe", 6, &used, &msg),
                     CODEC_NEED_MORE);
    assert_int_equal(resp_codec.feed(c.st, (const uint8_t *)"l", 1, &used, &msg), CODEC_NEED_MORE);
    assert_int_equal(resp_codec.eof(c.st, &msg), CODEC_ERROR);
    assert_int_equal(msg.err, CODEC_ERR_MISMATCH);
    assert_int_equal(msg.err_off, 7);

    /* reset forgets the partial reply: the next byte starts a new one */
    resp_codec.reset(c.st);
    assert_int_equal(resp_codec.feed(c.st, (const uint8_t *)"$1\r\na\r\n", 7, &used, &msg),
                     CODEC_DONE);
    assert_int_equal(used, 7);
    assert_int_equal(resp_codec.feed(c.st, (const uint8_t *)"*2\r\n:1\r\n", 8, &used, &msg),
                     CODEC_NEED_MORE);
    resp_codec.reset(c.st);
    assert_int_equal(resp_codec.feed(c.st, (const uint8_t *)"$-1\r\n", 5, &used, &msg), CODEC_DONE);

    /* after a framing error, reset makes the state usable again */
    assert_int_equal(resp_codec.feed(c.st, (const uint8_t *)"$5x", 3, &used, &msg), CODEC_ERROR);
    assert_int_equal(msg.err_off, 2);
    resp_codec.reset(c.st);
    assert_int_equal(resp_codec.feed(c.st, (const uint8_t *)"$1\r\na\r\n", 7, &used, &msg),
                     CODEC_DONE);

    /* after a judged error the next reply parses without reset */
    ctx_init(&c, P, 0, 1, 0, NULL);
    assert_int_equal(resp_codec.feed(c.st, (const uint8_t *)"+OK\r\n+PONG\r\n", 12, &used, &msg),
                     CODEC_ERROR);
    assert_int_equal(used, 5);
    assert_int_equal(resp_codec.feed(c.st, (const uint8_t *)"+PONG\r\n", 7, &used, &msg),
                     CODEC_DONE);
    assert_false(msg.error_reply);

    /* DONE rewrites the whole msg: no stale error from a previous verdict */
    msg = (struct codec_msg){ .err = CODEC_ERR_BODY,
                              .err_off = 9,
                              .status = 7,
                              .closes = true,
                              .error_reply = true,
                              .stderr_bytes = 3 };
    assert_int_equal(resp_codec.feed(c.st, (const uint8_t *)"+PONG\r\n", 7, &used, &msg),
                     CODEC_DONE);
    assert_int_equal(msg.err, CODEC_ERR_NONE);
    assert_int_equal(msg.status, 0);
    assert_false(msg.closes);
    assert_false(msg.error_reply);
    assert_int_equal(msg.stderr_bytes, 0);
}

/* ---- 4. the server ------------------------------------------------------ */

struct srv {
    void *shared;
    struct server_io io;
    uint8_t *obuf;
    uint8_t *state;
    /* everything sent back, in order */
    uint8_t *sent;
    size_t sent_len, sent_cap;
    unsigned answered;
    bool closed;
};

static void srv_open(struct srv *s, void *shared, size_t ocap)
{
    memset(s, 0, sizeof(*s));
    s->shared = shared;
    s->obuf = malloc(server_redis.out_cap);
    s->state = calloc(1, server_redis.conn_size + 1);
    s->sent_cap = 4 << 20;
    s->sent = malloc(s->sent_cap);
    assert_non_null(s->obuf);
    assert_non_null(s->state);
    assert_non_null(s->sent);
    assert_true(ocap <= server_redis.out_cap);
    s->io = (struct server_io){ .state = s->state, .obuf = s->obuf, .ocap = ocap };
}

static void srv_close(struct srv *s)
{
    free(s->obuf);
    free(s->state);
    free(s->sent);
}

static void *store_new(void)
{
    void *shared = NULL;

    assert_int_equal(server_redis.create(NULL, &shared), 0);
    assert_non_null(shared);
    return shared;
}

/*
 * One process() call on in[0..len) (copied to end at a guard page), as the
 * frame makes it. Returns what it returned; the reply is appended to s->sent.
 */
static size_t srv_call(struct srv *s, const uint8_t *in, size_t len)
{
    struct guard g;
    uint8_t *p = guard_alloc(&g, len);
    size_t used;

    memcpy(p, in, len);
    s->io.out = NULL;
    s->io.out_len = 0;
    s->io.close = false;
    s->io.answered = 0;
    used = server_redis.process(s->shared, &s->io, p, len);
    guard_free(&g);
    assert_true(used == SERVER_PROTO_ERROR || used <= len);
    assert_true(s->io.out_len <= s->io.ocap || s->io.out_len < 64);
    if (s->io.out_len > 0) {
        assert_true(s->sent_len + s->io.out_len <= s->sent_cap);
        if (s->io.out >= s->obuf && s->io.out < s->obuf + s->io.ocap)
            assert_true(s->io.out + s->io.out_len <= s->obuf + s->io.ocap);
        memcpy(s->sent + s->sent_len, s->io.out, s->io.out_len);
        s->sent_len += s->io.out_len;
    }
    s->answered += s->io.answered;
    s->closed |= s->io.close;
    return used;
}

/*
 * Serves in[0..len) as the frame would: call, drop what was consumed, call
 * again while there is progress. Returns the bytes consumed, or
 * SERVER_PROTO_ERROR.
 */
static size_t srv_serve(struct srv *s, const uint8_t *in, size_t len)
{
    size_t pos = 0;

    while (pos < len && !s->closed) {
        size_t used = srv_call(s, in + pos, len - pos);

        if (used == SERVER_PROTO_ERROR) return used;
        if (used == 0) break;
        pos += used;
    }
    return pos;
}

static void srv_expect(struct srv *s, const char *want)
{
    size_t n = strlen(want);

    if (s->sent_len != n || memcmp(s->sent, want, n) != 0)
        fail_msg("sent '%.*s' (%zu), want '%s'", (int)(s->sent_len < 300 ? s->sent_len : 300),
                 (const char *)s->sent, s->sent_len, want);
    s->sent_len = 0;
}

static size_t serve_str(struct srv *s, const char *in)
{
    return srv_serve(s, (const uint8_t *)in, strlen(in));
}

/* n codec requests into one buffer, served, and the replies fed back: all DONE, no error reply. */
static void roundtrip(struct srv *s, struct rctx *c, unsigned n)
{
    size_t max = resp_codec.max_request(&c->cfg), len = 0;
    uint8_t *req = malloc(max * n);
    struct rctx rd = *c; /* a reader state: same options */
    unsigned dones = 0;
    size_t off = 0;

    assert_non_null(req);
    resp_codec.init(rd.st, &c->cfg);
    for (unsigned i = 0; i < n; i++)
        len += resp_codec.encode(c->st, req + len, max);
    s->sent_len = 0;
    s->answered = 0;
    assert_int_equal(srv_serve(s, req, len), len);
    assert_int_equal(s->answered, n);
    while (off < s->sent_len) {
        struct codec_msg msg;
        size_t used;
        enum codec_rc rc = resp_codec.feed(rd.st, s->sent + off, s->sent_len - off, &used, &msg);

        if (rc == CODEC_ERROR)
            fail_msg("reply %u: %s at %zu: '%.*s'", dones, codec_err_str(msg.err), msg.err_off,
                     (int)(s->sent_len - off < 80 ? s->sent_len - off : 80),
                     (const char *)s->sent + off);
        assert_int_equal(rc, CODEC_DONE);
        assert_false(msg.error_reply);
        off += used;
        dones++;
    }
    assert_int_equal(dones, n);
    s->sent_len = 0;
    free(req);
}

static char *value_of(size_t size)
{
    char *v = malloc(size + 1);

    assert_non_null(v);
    memset(v, RESP_VALUE_BYTE, size);
    v[size] = '\0';
    return v;
}

static void test_server_roundtrip(void **state)
{
    static const size_t sizes[] = { 0, 1, 100, 4096, 65536 };
    void *shared = store_new();
    struct srv s;
    struct rctx c;

    (void)state;
    srv_open(&s, shared, server_redis.out_cap);
    ctx_init(&c, P, 0, 1, 0, NULL);
    roundtrip(&s, &c, 1);
    roundtrip(&s, &c, 16);
    for (size_t i = 0; i < ARRAY_LEN(sizes); i++) {
        char *v = value_of(sizes[i]);

        /* GET before SET: a null, which a check of the body refuses */
        ctx_init(&c, G, 0, 1, 0, NULL);
        serve_str(&s, "FLUSHALL\r\n");
        s.sent_len = 0;
        roundtrip(&s, &c, 1);
        ctx_init(&c, S, sizes[i], 10, 0, NULL);
        roundtrip(&s, &c, 10); /* key:0 .. key:9 */
        ctx_init(&c, G, sizes[i], 10, 3, v);
        roundtrip(&s, &c, 16); /* pipelined, checked against the value */
        free(v);
    }
    srv_close(&s);
    server_redis.destroy(shared);
}

/* Every prefix of a request is left unconsumed, with nothing sent; then it is served. */
static void test_server_partial(void **state)
{
    void *shared = store_new();
    struct srv s;
    struct rctx c;
    uint8_t req[512];
    size_t n, ping = 14;

    (void)state;
    srv_open(&s, shared, server_redis.out_cap);
    ctx_init(&c, S, 100, 1, 0, NULL);
    memcpy(req, "*1\r\n$4\r\nPING\r\n", ping);
    n = ping + resp_codec.encode(c.st, req + ping, sizeof(req) - ping);
    for (size_t k = 0; k < n - ping; k++) {
        assert_int_equal(srv_call(&s, req + ping, k), 0);
        assert_int_equal(s.sent_len, 0);
        assert_int_equal(s.io.answered, 0);
        /* with a whole PING before it: only the PING */
        assert_int_equal(srv_call(&s, req, ping + k), ping);
        assert_int_equal(s.io.answered, 1);
        srv_expect(&s, "+PONG\r\n");
    }
    assert_int_equal(srv_call(&s, req, n), n);
    srv_expect(&s, "+PONG\r\n+OK\r\n");

    /* inline, partial then whole */
    assert_int_equal(srv_call(&s, (const uint8_t *)"PIN", 3), 0);
    assert_int_equal(srv_call(&s, (const uint8_t *)"PING\r", 5), 0);
    assert_int_equal(srv_call(&s, (const uint8_t *)"PING\r\n", 6), 6);
    srv_expect(&s, "+PONG\r\n");
    srv_close(&s);
    server_redis.destroy(shared);
}

static void test_server_commands(void **state)
{
    void *shared = store_new();
    struct srv s;

    (void)state;
    srv_open(&s, shared, server_redis.out_cap);
    serve_str(&s, "PING\r\nping\nPiNg hello\r\n*2\r\n$4\r\nPING\r\n$2\r\nhi\r\n");
    srv_expect(&s, "+PONG\r\n+PONG\r\n$5\r\nhello\r\n$2\r\nhi\r\n");
    serve_str(&s, "*2\r\n$4\r\nECHO\r\n$0\r\n\r\nECHO a\r\n");
    srv_expect(&s, "$0\r\n\r\n$1\r\na\r\n");
    serve_str(&s, "*3\r\n$3\r\nSET\r\n$1\r\na\r\n$3\r\n\r\n1\r\nGET a\r\nGET b\r\n");
    srv_expect(&s, "+OK\r\n$3\r\n\r\n1\r\n$-1\r\n");
    serve_str(&s, "SET b 22\r\nSET c 333\r\nDBSIZE\r\nDEL a b zz\r\nDBSIZE\r\nDEL zz\r\n");
    srv_expect(&s, "+OK\r\n+OK\r\n:3\r\n:2\r\n:1\r\n:0\r\n");
    serve_str(&s, "SET c 4\r\nGET c\r\nSET c 55555\r\nGET c\r\nSET c 6\r\nGET c\r\n");
    srv_expect(&s, "+OK\r\n$1\r\n4\r\n+OK\r\n$5\r\n55555\r\n+OK\r\n$1\r\n6\r\n");
    serve_str(&s, "FLUSHALL\r\nDBSIZE\r\nGET c\r\nFLUSHALL ASYNC\r\nFLUSHALL now\r\n");
    srv_expect(&s, "+OK\r\n:0\r\n$-1\r\n+OK\r\n-ERR syntax error\r\n");

    /* errors: arity, options, unknown names (cut short, made printable) */
    serve_str(&s, "GET\r\nGET a b\r\nSET a\r\nSET a b EX 10\r\nECHO\r\nDBSIZE x\r\nDEL\r\n");
    srv_expect(&s, "-ERR wrong number of arguments for 'get' command\r\n"
                   "-ERR wrong number of arguments for 'get' command\r\n"
                   "-ERR wrong number of arguments for 'set' command\r\n"
                   "-ERR syntax error\r\n"
                   "-ERR wrong number of arguments for 'echo' command\r\n"
                   "-ERR wrong number of arguments for 'dbsize' command\r\n"
                   "-ERR wrong number of arguments for 'del' command\r\n");
    serve_str(&s, "PING a b\r\nFOO\r\n*2\r\n$5\r\nx\r\ny\x01\r\n$1\r\nz\r\n");
    srv_expect(&s, "-ERR wrong number of arguments for 'ping' command\r\n"
                   "-ERR unknown command 'FOO'\r\n-ERR unknown command 'x??y?'\r\n");
    {
        char line[200], want[200];

        memset(line, 'A', 100);
        strcpy(line + 100, "\r\n");
        memset(want, 0, sizeof(want));
        strcpy(want, "-ERR unknown command '");
        memset(want + strlen(want), 'A', 64);
        strcat(want, "'\r\n");
        serve_str(&s, line);
        srv_expect(&s, want);
    }
    /* empty requests ask nothing */
    s.answered = 0;
    serve_str(&s, "\r\n   \r\n*0\r\n*-1\r\nPING\r\n");
    srv_expect(&s, "+PONG\r\n");
    assert_int_equal(s.answered, 1);
    srv_close(&s);
    server_redis.destroy(shared);
}

static void test_server_info_quit(void **state)
{
    void *shared = store_new();
    struct srv s;
    const char *in = "PING\r\nQUIT\r\nPING\r\n";
    char want[128];

    (void)state;
    srv_open(&s, shared, server_redis.out_cap);
    serve_str(&s, "PING\r\nPING\r\nINFO\r\n");
    sprintf(want, "+PONG\r\n+PONG\r\n$%zu\r\n# Stats\r\ntotal_commands_processed:2\r\n\r\n",
            strlen("# Stats\r\ntotal_commands_processed:2\r\n"));
    srv_expect(&s, want);
    serve_str(&s, "INFO stats\r\n");
    sprintf(want, "$%zu\r\n# Stats\r\ntotal_commands_processed:3\r\n\r\n",
            strlen("# Stats\r\ntotal_commands_processed:3\r\n"));
    srv_expect(&s, want);

    /* QUIT: +OK, close, and the request after it is not consumed */
    assert_int_equal(srv_call(&s, (const uint8_t *)in, strlen(in)), 12);
    assert_true(s.io.close);
    assert_int_equal(s.io.answered, 2);
    srv_expect(&s, "+PONG\r\n+OK\r\n");
    srv_close(&s);
    server_redis.destroy(shared);
}

/* A SET request with a value of `size` bytes, for key k. */
static size_t set_req(uint8_t *dst, const char *k, size_t size, char fill)
{
    int n = sprintf((char *)dst, "*3\r\n$3\r\nSET\r\n$%zu\r\n%s\r\n$%zu\r\n", strlen(k), k, size);

    memset(dst + n, fill, size);
    memcpy(dst + (size_t)n + size, "\r\n", 2);
    return (size_t)n + size + 2;
}

static void test_server_oversized(void **state)
{
    void *shared = store_new();
    struct srv s;
    uint8_t *req = malloc(200000);
    size_t n, in_cap = server_redis.in_cap;

    (void)state;
    assert_non_null(req);
    srv_open(&s, shared, server_redis.out_cap);

    /* a value over the limit: an error, its bytes dropped, the connection goes on */
    n = set_req(req, "big", 70000, 'v');
    memcpy(req + n, "PING\r\n", 6);
    assert_int_equal(srv_serve(&s, req, n + 6), n + 6);
    srv_expect(&s, "-ERR value too large\r\n+PONG\r\n");
    assert_false(s.closed);
    /* the same in pieces: header and a little, then the middle, then the rest and a PING */
    assert_int_equal(srv_call(&s, req, 1000), 1000);
    srv_expect(&s, "-ERR value too large\r\n");
    assert_int_equal(srv_call(&s, req + 1000, 30000), 30000);
    assert_int_equal(s.sent_len, 0);
    assert_int_equal(srv_serve(&s, req + 31000, n + 6 - 31000), n + 6 - 31000);
    srv_expect(&s, "+PONG\r\n");
    serve_str(&s, "GET big\r\nDBSIZE\r\n");
    srv_expect(&s, "$-1\r\n:0\r\n");

    /* exactly 64 KiB is stored and read back whole */
    n = set_req(req, "k64", 65536, 'w');
    assert_int_equal(srv_serve(&s, req, n), n);
    srv_expect(&s, "+OK\r\n");
    serve_str(&s, "GET k64\r\n");
    assert_int_equal(s.sent_len, 8 + 65536 + 2);
    assert_memory_equal(s.sent, "$65536\r\n", 8);
    for (size_t i = 0; i < 65536; i++)
        if (s.sent[8 + i] != 'w') fail_msg("byte %zu of the value is %#x", i, s.sent[8 + i]);
    s.sent_len = 0;

    /* a key that cannot fit the receive buffer: known from its length, before it arrives */
    n = (size_t)sprintf((char *)req, "*3\r\n$3\r\nSET\r\n$%zu\r\n", in_cap);
    assert_int_equal(srv_call(&s, req, n), SERVER_PROTO_ERROR);
    srv_expect(&s, "-ERR Protocol error: request too large\r\n");

    /* an inline line that fills the whole buffer without an end */
    memset(req, 'a', in_cap);
    assert_int_equal(srv_call(&s, req, in_cap - 1), 0);
    assert_int_equal(srv_call(&s, req, in_cap), SERVER_PROTO_ERROR);
    srv_expect(&s, "-ERR Protocol error: request too large\r\n");
    free(req);
    srv_close(&s);
    server_redis.destroy(shared);
}

static void check_proto_error(const char *in, const char *want)
{
    void *shared = store_new();
    struct srv s;

    srv_open(&s, shared, server_redis.out_cap);
    assert_int_equal(srv_call(&s, (const uint8_t *)in, strlen(in)), SERVER_PROTO_ERROR);
    srv_expect(&s, want);
    srv_close(&s);
    server_redis.destroy(shared);
}

static void test_server_proto_errors(void **state)
{
    (void)state;
    check_proto_error("*x\r\n", "-ERR Protocol error: invalid multibulk length\r\n");
    check_proto_error("*\r\n", "-ERR Protocol error: invalid multibulk length\r\n");
    check_proto_error("*1x\r\n", "-ERR Protocol error: invalid multibulk length\r\n");
    check_proto_error("*1\rx", "-ERR Protocol error: invalid multibulk length\r\n");
    check_proto_error("*257\r\n", "-ERR Protocol error: invalid multibulk length\r\n");
    check_proto_error("*1\r\n:3\r\n", "-ERR Protocol error: expected '$'\r\n");
    check_proto_error("*1\r\n$-1\r\n", "-ERR Protocol error: invalid bulk length\r\n");
    check_proto_error("*1\r\n$x\r\n", "-ERR Protocol error: invalid bulk length\r\n");
    check_proto_error("*1\r\n$536870913\r\n", "-ERR Protocol error: invalid bulk length\r\n");
    check_proto_error("*1\r\n$4\r\nPINGXX", "-ERR Protocol error: expected CRLF\r\n");
    /* replies before the bad request still go out, in order */
    check_proto_error("PING\r\n*1\r\n$4\r\nPINGXX",
                      "+PONG\r\n-ERR Protocol error: expected CRLF\r\n");
}

/* A small obuf: replies stop when it is full and go on in the next call. */
static void test_server_small_obuf(void **state)
{
    void *shared = store_new();
    struct srv s;
    uint8_t *req = malloc(8000);
    size_t n = 0, used;

    (void)state;
    assert_non_null(req);
    srv_open(&s, shared, 1024);
    for (int i = 0; i < 1000; i++) {
        memcpy(req + n, "PING\r\n", 6);
        n += 6;
    }
    used = srv_call(&s, req, n); /* not inside assert: s.answered is set by the call */
    assert_int_equal(used, 6 * s.answered);
    assert_true(s.answered > 100 && s.answered < 1000);
    s.answered = 0;
    s.sent_len = 0;
    assert_int_equal(srv_serve(&s, req, n), n);
    assert_int_equal(s.answered, 1000);
    assert_int_equal(s.sent_len, 7000);
    for (int i = 0; i < 1000; i++)
        assert_memory_equal(s.sent + 7 * i, "+PONG\r\n", 7);
    s.sent_len = 0;

    /* two GETs of a 600-byte value: the second waits for the next call */
    n = set_req(req, "v", 600, 'q');
    assert_int_equal(srv_serve(&s, req, n), n);
    srv_expect(&s, "+OK\r\n");
    s.answered = 0;
    assert_int_equal(srv_call(&s, (const uint8_t *)"GET v\r\nGET v\r\n", 14), 7);
    assert_int_equal(s.io.answered, 1);
    assert_int_equal(srv_call(&s, (const uint8_t *)"GET v\r\n", 7), 7);
    assert_int_equal(s.sent_len, 2 * (6 + 600 + 2));
    s.sent_len = 0;

    /* a value no obuf of this size can hold: an error, not a stall */
    n = set_req(req, "w", 2000, 'q');
    assert_int_equal(srv_serve(&s, req, n), n);
    serve_str(&s, "GET w\r\nECHO 0123456789\r\n");
    srv_expect(&s, "+OK\r\n-ERR reply too large\r\n$10\r\n0123456789\r\n");
    srv_close(&s);

    /* an obuf too small for any reply: refused */
    srv_open(&s, shared, 100);
    assert_int_equal(srv_call(&s, (const uint8_t *)"PING\r\n", 6), SERVER_PROTO_ERROR);
    srv_close(&s);
    free(req);
    server_redis.destroy(shared);
}

/* Enough keys to grow every stripe's table several times. */
static void test_server_many_keys(void **state)
{
    void *shared = store_new();
    struct srv s;
    char line[64], want[64];

    (void)state;
    srv_open(&s, shared, server_redis.out_cap);
    for (int i = 0; i < 20000; i++) {
        sprintf(line, "SET key:%d v%d\r\n", i, i * 7);
        serve_str(&s, line);
        srv_expect(&s, "+OK\r\n");
    }
    serve_str(&s, "DBSIZE\r\n");
    srv_expect(&s, ":20000\r\n");
    for (int i = 0; i < 20000; i += 7) {
        int vl = sprintf(want, "v%d", i * 7);
        char full[80];

        sprintf(line, "GET key:%d\r\n", i);
        serve_str(&s, line);
        sprintf(full, "$%d\r\n%s\r\n", vl, want);
        srv_expect(&s, full);
    }
    for (int i = 0; i < 20000; i += 2) {
        sprintf(line, "DEL key:%d\r\n", i);
        serve_str(&s, line);
        srv_expect(&s, ":1\r\n");
    }
    serve_str(&s, "DBSIZE\r\nGET key:0\r\nGET key:1\r\nFLUSHALL\r\nDBSIZE\r\n");
    srv_expect(&s, ":10000\r\n$-1\r\n$2\r\nv7\r\n+OK\r\n:0\r\n");
    srv_close(&s);
    server_redis.destroy(shared);
}

/* ---- 5. threads on the shared store ------------------------------------- */

#define THREADS 4
#define ROUNDS  3000
#define TKEYS   16

struct worker {
    pthread_t tid;
    void *shared;
    int id;
    unsigned long bad;
};

/* Thread t writes values of (t + 1) * 100 bytes of 'a' + t: any GET must see one whole. */
static bool value_ok(const uint8_t *r, size_t len)
{
    int t;
    size_t vl, hl;
    char hdr[32];

    if (len == 5 && memcmp(r, "$-1\r\n", 5) == 0) return true;
    if (len < 8 || r[len - 2] != '\r' || r[len - 1] != '\n') return false;
    for (t = 0; t < THREADS; t++) {
        vl = (size_t)(t + 1) * 100;
        hl = (size_t)sprintf(hdr, "$%zu\r\n", vl);
        if (len != hl + vl + 2 || memcmp(r, hdr, hl) != 0) continue;
        for (size_t i = 0; i < vl; i++)
            if (r[hl + i] != 'a' + t) return false;
        return true;
    }
    return false;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct server_io io;
    uint8_t *obuf = malloc(server_redis.out_cap), *st = calloc(1, server_redis.conn_size + 1);
    uint8_t req[1024];
    unsigned rnd = (unsigned)w->id * 2654435761u + 1;

    if (obuf == NULL || st == NULL) abort();
    for (int i = 0; i < ROUNDS; i++) {
        char key[16];
        size_t n, used;
        int op;

        rnd = rnd * 1103515245u + 12345u;
        op = (int)((rnd >> 16) % 10);
        sprintf(key, "t%u", (rnd >> 8) % TKEYS);
        if (op < 4)
            n = set_req(req, key, (size_t)(w->id + 1) * 100, (char)('a' + w->id));
        else if (op < 9)
            n = (size_t)sprintf((char *)req, "GET %s\r\n", key);
        else
            n = (size_t)sprintf((char *)req, "%s\r\n", i % 2 ? "DEL t3" : "DBSIZE");
        io = (struct server_io){ .state = st, .obuf = obuf, .ocap = server_redis.out_cap };
        used = server_redis.process(w->shared, &io, req, n);
        if (used != n || io.answered != 1) {
            w->bad++;
            continue;
        }
        if (op >= 4 && op < 9 && !value_ok(io.out, io.out_len)) w->bad++;
        if (op < 4 && (io.out_len != 5 || memcmp(io.out, "+OK\r\n", 5) != 0)) w->bad++;
        if (op == 9 && io.out[0] != ':') w->bad++;
    }
    free(obuf);
    free(st);
    return NULL;
}

static void test_server_threads(void **state)
{
    void *shared = store_new();
    struct worker w[THREADS];
    struct srv s;
    char want[64];

    (void)state;
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){ .shared = shared, .id = i };
        assert_int_equal(pthread_create(&w[i].tid, NULL, worker_main, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_join(w[i].tid, NULL), 0);
        assert_int_equal(w[i].bad, 0);
    }
    srv_open(&s, shared, server_redis.out_cap);
    serve_str(&s, "INFO\r\n");
    sprintf(want, "total_commands_processed:%d\r\n", THREADS * ROUNDS);
    assert_non_null(memmem(s.sent, s.sent_len, want, strlen(want)));
    srv_close(&s);
    server_redis.destroy(shared);
}

/* ---- 5. a mix of commands ------------------------------------------------ */

/* A codec sending the commands of `mix` in turn, values of `size` bytes over `keys` keys. */
static void ctx_init_mix(struct rctx *c, const char *mix, size_t size, uint64_t keys)
{
    c->opts = (struct resp_opts){ .command = { .len = (unsigned)strlen(mix) }, .keys = keys };
    for (size_t i = 0; mix[i] != '\0'; i++)
        c->opts.command.mix[i] = (uint8_t)(mix[i] == 'S'   ? REDIS_SET
                                           : mix[i] == 'G' ? REDIS_GET
                                                           : REDIS_PING);
    c->cfg = (struct codec_cfg){ .size = size, .opts = &c->opts };
    resp_codec.init(c->st, &c->cfg);
}

/* One whole reply fed at once: its verdict, kind and error. */
static enum codec_rc feed_str(struct rctx *c, const char *rep, struct codec_msg *msg)
{
    size_t used = 0;
    enum codec_rc rc = resp_codec.feed(c->st, (const uint8_t *)rep, strlen(rep), &used, msg);

    if (rc == CODEC_DONE) assert_int_equal(used, strlen(rep));
    return rc;
}

static void test_mix_encode(void **state)
{
    static const enum codec_redis_cmd want[] = { S, G, G, P };
    uint8_t got[256], exp[256];
    struct rctx c;

    (void)state;
    ctx_init_mix(&c, "SGGP", 7, 3);
    /* the SET's value is the longest request */
    assert_int_equal(resp_codec.max_request(&c.cfg), expected_req(S, 2, 7, exp));
    /* a PING has no key: the keys go on with the next SET or GET */
    for (unsigned i = 0, k = 0; i < 12; i++) {
        size_t n = encode_one(&c, got);
        size_t m = expected_req(want[i % 4], k % 3, 7, exp);

        assert_int_equal(n, m);
        assert_memory_equal(got, exp, n);
        k += want[i % 4] != P;
    }
}

static void test_mix_replies(void **state)
{
    struct rctx c;
    struct codec_msg msg;
    uint8_t req[256];

    (void)state;
    /* replies are judged by the command each answers, in order, and say which it was */
    ctx_init_mix(&c, "SGP", 5, 2);
    assert_int_equal(feed_str(&c, "+OK\r\n", &msg), CODEC_DONE);
    assert_int_equal(msg.kind, REDIS_SET);
    assert_int_equal(feed_str(&c, "$5\r\nxxxxx\r\n", &msg), CODEC_DONE);
    assert_int_equal(msg.kind, REDIS_GET);
    assert_int_equal(feed_str(&c, "+PONG\r\n", &msg), CODEC_DONE);
    assert_int_equal(msg.kind, REDIS_PING);
    /* the next is a SET again: a PONG, or a value, is not its reply */
    assert_int_equal(feed_str(&c, "$5\r\nxxxxx\r\n", &msg), CODEC_ERROR);
    assert_int_equal(msg.err, CODEC_ERR_MISMATCH);
    /* a GET of a mix wants a value of the size: a null or another length is a body error */
    ctx_init_mix(&c, "G", 5, 2);
    assert_int_equal(feed_str(&c, "$-1\r\n", &msg), CODEC_ERROR);
    assert_int_equal(msg.err, CODEC_ERR_BODY);
    assert_int_equal(msg.err_off, 1);
    assert_int_equal(feed_str(&c, "$4\r\nxxxx\r\n", &msg), CODEC_ERROR);
    assert_int_equal(msg.err, CODEC_ERR_BODY);
    assert_int_equal(feed_str(&c, "$5\r\nabcde\r\n", &msg), CODEC_DONE);
    /* reset gives up the requests sent and not answered: the next reply answers the next one */
    ctx_init_mix(&c, "SG", 5, 2);
    encode_one(&c, req); /* SET */
    encode_one(&c, req); /* GET */
    assert_int_equal(feed_str(&c, "+OK\r\n", &msg), CODEC_DONE);
    resp_codec.reset(c.st);
    encode_one(&c, req); /* SET */
    assert_memory_equal(req, "*3\r\n$3\r\nSET\r\n", 13);
    assert_int_equal(feed_str(&c, "+OK\r\n", &msg), CODEC_DONE);
    assert_int_equal(msg.kind, REDIS_SET);
}

/*
 * Against the built-in server: the keys SET first, then a pipelined mix whose
 * GETs all return the value, counted by kind as the mix says.
 */
static void test_mix_server(void **state)
{
    void *shared = store_new();
    struct srv s;
    struct rctx c, rd;
    size_t max, len = 0, off = 0;
    unsigned kinds[CODEC_KINDS] = { 0 };
    uint8_t *req;

    (void)state;
    srv_open(&s, shared, server_redis.out_cap);
    ctx_init(&c, S, 100, 10, 0, NULL);
    roundtrip(&s, &c, 10);
    ctx_init_mix(&c, "SGGGG", 100, 10);
    rd = c;
    resp_codec.init(rd.st, &rd.cfg);
    max = resp_codec.max_request(&c.cfg);
    req = malloc(max * 50);
    assert_non_null(req);
    for (unsigned i = 0; i < 50; i++)
        len += resp_codec.encode(c.st, req + len, max);
    assert_int_equal(srv_serve(&s, req, len), len);
    while (off < s.sent_len) {
        struct codec_msg msg;
        size_t used;

        assert_int_equal(resp_codec.feed(rd.st, s.sent + off, s.sent_len - off, &used, &msg),
                         CODEC_DONE);
        kinds[msg.kind]++;
        off += used;
    }
    assert_int_equal(kinds[REDIS_SET], 10);
    assert_int_equal(kinds[REDIS_GET], 40);
    free(req);
    srv_close(&s);
    server_redis.destroy(shared);
}

/* ---- 4. AUTH (the session set-up with a password) ------------------------ */

struct auth_case {
    const char *reply;
    enum codec_rc rc;
    enum codec_err err;
    size_t err_off;
    size_t used; /* DONE and ERROR: the bytes of the reply used */
    bool error_reply;
};

static const struct auth_case auth_cases[] = {
    { "+OK\r\n", CODEC_DONE, CODEC_ERR_NONE, 0, 5, false },
    { "+OK\r\n+PONG\r\n", CODEC_DONE, CODEC_ERR_NONE, 0, 5, false }, /* the rest not taken */
    { "-WRONGPASS invalid username-password pair\r\n", CODEC_ERROR, CODEC_ERR_NONE, 0, 43, true },
    { "-ERR AUTH <password> called without any password configured\r\n", CODEC_ERROR,
      CODEC_ERR_NONE, 0, 61, true },
    { "+OKAY\r\n", CODEC_ERROR, CODEC_ERR_MISMATCH, 1, 7, false },
    { "+O\r\n", CODEC_ERROR, CODEC_ERR_MISMATCH, 1, 4, false },
    { "+PONG\r\n", CODEC_ERROR, CODEC_ERR_MISMATCH, 1, 7, false },
    { "$2\r\nOK\r\n", CODEC_ERROR, CODEC_ERR_MISMATCH, 0, 1, false },
    { "+OK\n", CODEC_ERROR, CODEC_ERR_MISMATCH, 3, 4, false },
    { "+OK\rX", CODEC_ERROR, CODEC_ERR_MISMATCH, 4, 5, false },
    { "+OK\r", CODEC_NEED_MORE, CODEC_ERR_NONE, 0, 4, false },
};

/* A codec with a password, after the connect: what it wrote into out (*n bytes). */
static void auth_start(struct rctx *c, const char *pw, uint8_t *out, size_t *n)
{
    struct codec_msg msg = { 0 };
    size_t used = SIZE_MAX;

    ctx_init(c, REDIS_SET, 8, 1, 0, NULL);
    c->opts.password = pw;
    resp_codec.init(c->st, &c->cfg);
    *n = SIZE_MAX;
    assert_int_equal(resp_codec.setup(c->st, NULL, 0, &used, out, n, &msg), CODEC_NEED_MORE);
    assert_int_equal(used, 0);
}

/* Feeds the reply to setup byte by byte (split == 1) or whole: its outcome. */
static struct outcome auth_feed(struct rctx *c, const char *reply, size_t split)
{
    size_t len = strlen(reply), off = 0;

    while (off < len) {
        size_t n = split != 0 && split < len - off ? split : len - off, used = SIZE_MAX,
               out_len = SIZE_MAX;
        struct codec_msg msg = { .err = CODEC_ERR_NONE };
        uint8_t out[RESP_SETUP_CAP];
        enum codec_rc rc =
            resp_codec.setup(c->st, (const uint8_t *)reply + off, n, &used, out, &out_len, &msg);

        assert_true(used <= n);
        assert_int_equal(out_len, 0); /* nothing more to say after AUTH */
        off += used;
        if (rc != CODEC_NEED_MORE)
            return (struct outcome){ .rc = rc,
                                     .err = msg.err,
                                     .err_off = msg.err_off,
                                     .used = off,
                                     .error_reply = msg.error_reply };
        assert_int_equal(used, n);
    }
    return (struct outcome){ .rc = CODEC_NEED_MORE, .used = off };
}

static void test_auth(void **state)
{
    static const char want[] = "*2\r\n$4\r\nAUTH\r\n$6\r\nsekret\r\n";
    uint8_t out[RESP_SETUP_CAP];
    struct rctx c;
    size_t n;

    (void)state;
    /* no password: no session, and a set-up that is done at once writing nothing */
    ctx_init(&c, REDIS_SET, 8, 1, 0, NULL);
    assert_false(codec_session(&resp_codec, &c.cfg));
    {
        struct codec_msg msg = { 0 };
        size_t used = SIZE_MAX, olen = SIZE_MAX;
        assert_int_equal(resp_codec.setup(c.st, NULL, 0, &used, out, &olen, &msg), CODEC_DONE);
        assert_int_equal(olen, 0);
    }
    auth_start(&c, "sekret", out, &n);
    assert_true(codec_session(&resp_codec, &c.cfg));
    assert_int_equal(n, strlen(want));
    assert_memory_equal(out, want, n);
    for (size_t i = 0; i < ARRAY_LEN(auth_cases); i++) {
        const struct auth_case *k = &auth_cases[i];
        for (size_t split = 0; split <= 1; split++) {
            struct outcome o;
            auth_start(&c, "sekret", out, &n);
            o = auth_feed(&c, k->reply, split);
            if (o.rc != k->rc || o.err != k->err || o.err_off != k->err_off || o.used != k->used ||
                o.error_reply != k->error_reply)
                fail_msg("auth case %zu (split %zu): rc %d err %d at %zu used %zu er %d", i, split,
                         o.rc, o.err, o.err_off, o.used, o.error_reply);
        }
    }
    /* a new connection starts over: AUTH again, its reply read from its first byte */
    auth_start(&c, "sekret", out, &n);
    assert_int_equal(auth_feed(&c, "+O", 0).rc, CODEC_NEED_MORE);
    {
        struct codec_msg msg = { 0 };
        size_t used = 0, olen = 0;
        assert_int_equal(resp_codec.setup(c.st, NULL, 0, &used, out, &olen, &msg), CODEC_NEED_MORE);
        assert_memory_equal(out, want, olen);
    }
    assert_int_equal(auth_feed(&c, "+OK\r\n", 1).rc, CODEC_DONE);
    /* the requests after it are the codec's usual ones, from the first key */
    {
        uint8_t req[64], exp[64];
        size_t len = resp_codec.encode(c.st, req, sizeof(req));
        assert_int_equal(len, expected_req(REDIS_SET, 0, 8, exp));
        assert_memory_equal(req, exp, len);
    }
    /* a password longer than AUTH's room: the set-up fails, nothing written */
    {
        char pw[RESP_MAX_PASSWORD + 2];
        struct codec_msg msg = { 0 };
        size_t used = 0, olen = SIZE_MAX;
        memset(pw, 'p', sizeof(pw) - 1);
        pw[sizeof(pw) - 1] = '\0';
        ctx_init(&c, REDIS_PING, 0, 1, 0, NULL);
        c.opts.password = pw;
        resp_codec.init(c.st, &c.cfg);
        assert_int_equal(resp_codec.setup(c.st, NULL, 0, &used, out, &olen, &msg), CODEC_ERROR);
        assert_int_equal(olen, 0);
        assert_int_equal(msg.err, CODEC_ERR_TOO_BIG);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ops),
        cmocka_unit_test(test_encode_exact),
        cmocka_unit_test(test_encode_no_room),
        cmocka_unit_test(test_encode_large_value),
        cmocka_unit_test(test_key_cycle),
        cmocka_unit_test(test_conn_offset),
        cmocka_unit_test(test_cycle_table),
        cmocka_unit_test(test_max_request),
        cmocka_unit_test(test_replies),
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_bulk_skip),
        cmocka_unit_test(test_pipeline),
        cmocka_unit_test(test_eof_reset),
        cmocka_unit_test(test_server_roundtrip),
        cmocka_unit_test(test_server_partial),
        cmocka_unit_test(test_server_commands),
        cmocka_unit_test(test_server_info_quit),
        cmocka_unit_test(test_server_oversized),
        cmocka_unit_test(test_server_proto_errors),
        cmocka_unit_test(test_server_small_obuf),
        cmocka_unit_test(test_server_many_keys),
        cmocka_unit_test(test_server_threads),
        cmocka_unit_test(test_mix_encode),
        cmocka_unit_test(test_mix_replies),
        cmocka_unit_test(test_mix_server),
        cmocka_unit_test(test_auth),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
