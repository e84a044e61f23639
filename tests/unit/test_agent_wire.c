/*
 * test_agent_wire: the agent's protocol codec (agent/wire.h). Frames fed
 * whole, split at every offset and byte by byte, each piece ending at a
 * PROT_NONE page (guard.h), give the same bodies; a length over the cap is
 * refused once its 4 bytes are in, however they arrive; the MAC against RFC
 * 4231's HMAC-SHA256 vector, and a signed request refused once any byte or
 * field of it changed; requests and replies accepted and refused field
 * by field.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/wire.h"
#include "guard.h"

#define CAP 512

/* What feeding gave: the bodies of the messages, joined by '|', or "ERR<errno>" at the end. */
struct got {
    char text[4 * CAP];
    size_t len;
};

static void got_add(struct got *g, const char *s, size_t n)
{
    assert_true(g->len + n + 1 < sizeof(g->text));
    memcpy(g->text + g->len, s, n);
    g->len += n;
    g->text[g->len] = '\0';
}

/* Feeds in[0 .. len) in pieces cut at cuts[0 .. ncuts), each piece at a guard page's edge. */
static void feed_cuts(const uint8_t *in, size_t len, const size_t *cuts, size_t ncuts, size_t cap,
                      struct got *g)
{
    uint8_t buf[CAP];
    struct agent_dec d;
    size_t from = 0;

    memset(g, 0, sizeof(*g));
    agent_dec_init(&d, buf, cap);
    for (size_t k = 0; k <= ncuts; k++) {
        size_t to = k < ncuts ? cuts[k] : len, at = 0;
        struct guard gd;
        uint8_t *p = guard_alloc(&gd, to - from);

        memcpy(p, in + from, to - from);
        while (at < to - from) {
            size_t used = 0;
            enum agent_dec_rc rc = agent_dec_feed(&d, p + at, to - from - at, &used);
            char e[32];

            at += used;
            if (rc == AGENT_DEC_MSG) {
                got_add(g, (const char *)d.buf, d.len);
                got_add(g, "|", 1);
            } else if (rc == AGENT_DEC_ERROR) {
                snprintf(e, sizeof(e), "ERR%d@%zu", -d.err, from + at);
                got_add(g, e, strlen(e));
                guard_free(&gd);
                return;
            } else {
                assert_int_equal(at, to - from); /* MORE takes every byte */
            }
        }
        guard_free(&gd);
        from = to;
    }
}

/* Every way of cutting in: the same result as whole. */
static void check_every_split(const uint8_t *in, size_t len, size_t cap, const char *want)
{
    struct got g;
    size_t *cuts = malloc((len + 1) * sizeof(*cuts));

    assert_non_null(cuts);
    feed_cuts(in, len, NULL, 0, cap, &g);
    assert_string_equal(g.text, want);
    for (size_t k = 1; k < len; k++) {
        feed_cuts(in, len, &k, 1, cap, &g);
        if (strcmp(g.text, want) != 0) fail_msg("split at %zu: '%s', want '%s'", k, g.text, want);
    }
    for (size_t k = 1; k < len; k++)
        cuts[k - 1] = k;
    feed_cuts(in, len, cuts, len > 0 ? len - 1 : 0, cap, &g);
    assert_string_equal(g.text, want);
    free(cuts);
}

static size_t frame_raw(uint8_t *out, const char *body, size_t n)
{
    out[0] = (uint8_t)(n >> 24);
    out[1] = (uint8_t)(n >> 16);
    out[2] = (uint8_t)(n >> 8);
    out[3] = (uint8_t)n;
    memcpy(out + 4, body, n);
    return n + 4;
}

static void test_frames_split(void **state)
{
    uint8_t in[3 * CAP];
    size_t n = 0;
    json_t *j = json_pack("{s:s, s:i}", "type", "state", "x", 7);
    long f;

    (void)state;
    f = agent_frame(j, CAP, in, sizeof(in));
    json_decref(j);
    assert_true(f > 4);
    n = (size_t)f;
    n += frame_raw(in + n, "{}", 2);
    n += frame_raw(in + n, "abc", 3);
    check_every_split(in, n, CAP, "{\"type\":\"state\",\"x\":7}|{}|abc|");
}

static void test_frames_refused(void **state)
{
    uint8_t in[64];
    size_t n;

    (void)state;
    /* A length over the cap is refused at its 4th byte: no body byte is taken. */
    n = frame_raw(in, "ok", 2);
    in[n++] = 0;
    in[n++] = 0;
    in[n++] = 0x01;
    in[n++] = 0x01; /* 257 > 256 */
    memset(in + n, 'x', 20);
    n += 20;
    check_every_split(in, n, 256, "ok|ERR90@10");
    /* exactly the cap is taken */
    {
        uint8_t big[4 + 256];
        char want[300];
        memset(big + 4, 'y', 256);
        frame_raw(big, (const char *)big + 4, 256);
        memset(want, 'y', 256);
        strcpy(want + 256, "|");
        check_every_split(big, sizeof(big), 256, want);
    }
    /* a zero length */
    memset(in, 0, 8);
    check_every_split(in, 8, 256, "ERR74@4");
}

static void test_frame_encode_cap(void **state)
{
    uint8_t out[64];
    json_t *j = json_pack("{s:s}", "type", "0123456789012345678901234567890123456789");

    (void)state;
    assert_int_equal(agent_frame(j, 16, out, sizeof(out)), -EMSGSIZE);
    assert_int_equal(agent_frame(j, 1000, out, 20), -EMSGSIZE);
    assert_int_equal(agent_frame(j, 1000, out, 3), -EMSGSIZE);
    json_decref(j);
}

static void test_mac(void **state)
{
    char mac[AGENT_HEX_MAX + 1];
    const uint8_t key[] = "Jefe";
    const char *msg = "what do ya want for nothing?";

    (void)state;
    /* RFC 4231, test case 2 */
    assert_int_equal(agent_mac(key, 4, (const uint8_t *)msg, strlen(msg), mac), 0);
    assert_string_equal(mac, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

#define NONCE "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"
#define TOKEN "a-token-of-this-test"

/* A begin signed for TOKEN and NONCE: its body into body (returns its length). */
static size_t signed_begin(uint8_t *frame, size_t cap)
{
    static struct agent_req r = { .type = AGENT_BEGIN, .nservices = 1, .nwatch = 2 };
    long n;

    strcpy(r.services[0], "php=pid:100");
    strcpy(r.watch[0], "tcp://127.0.0.1:8080");
    strcpy(r.watch[1], "unix:/run/php.sock");
    n = agent_req_frame(&r, (const uint8_t *)TOKEN, strlen(TOKEN), NONCE, frame, cap);
    assert_true(n > AGENT_HDR);
    assert_int_equal(strspn(r.mac, "0123456789abcdef"), AGENT_HEX_MAX);
    assert_non_null(memmem(frame, (size_t)n, r.mac, AGENT_HEX_MAX));
    return (size_t)n - AGENT_HDR;
}

static bool mac_ok(const uint8_t *body, size_t len)
{
    return agent_req_mac_ok((const uint8_t *)TOKEN, strlen(TOKEN), NONCE, body, len);
}

/* s with its first from replaced by to, into out; its length. */
static size_t edit(const uint8_t *s, size_t len, const char *from, const char *to, uint8_t *out)
{
    const uint8_t *at = memmem(s, len, from, strlen(from));
    size_t k;

    assert_non_null(at);
    k = (size_t)(at - s);
    memcpy(out, s, k);
    memcpy(out + k, to, strlen(to));
    memcpy(out + k + strlen(to), at + strlen(from), len - k - strlen(from));
    return len - strlen(from) + strlen(to);
}

static void test_mac_covers_request(void **state)
{
    static uint8_t frame[AGENT_HDR + AGENT_REQ_MAX], out[AGENT_REQ_MAX + 64];
    static struct agent_req r;
    static const char *const edits[][2] = {
        { "php=pid:100", "php=pid:101" }, /* a service */
        { "\"php=pid:100\"", "\"php=pid:100\",\"x=pid:1\"" },
        { "127.0.0.1:8080", "127.0.0.1:8081" }, /* the watched hop */
        { ",\"unix:/run/php.sock\"", "" },      /* a watched endpoint left out */
        { "{", "{ " },                          /* a byte that changes nothing parsed */
    };
    struct hb_err err = { 0 };
    uint8_t *body = frame + AGENT_HDR;
    size_t len = signed_begin(frame, sizeof(frame)), n;
    long at = agent_req_mac_at(body, len);

    (void)state;
    assert_true(mac_ok(body, len));
    assert_int_equal(agent_req_parse(body, len, &r, &err), 0);
    assert_int_equal(r.nservices, 1);
    /* another nonce or token: refused */
    assert_false(agent_req_mac_ok((const uint8_t *)TOKEN, strlen(TOKEN), NONCE "0", body, len));
    assert_false(agent_req_mac_ok(
        (const uint8_t *)TOKEN, strlen(TOKEN),
        "0feeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100", body, len));
    assert_false(agent_req_mac_ok((const uint8_t *)TOKEN "x", strlen(TOKEN) + 1, NONCE, body, len));
    /* any field changed after signing: still a request, but not the signed one */
    for (size_t i = 0; i < ARRAY_LEN(edits); i++) {
        n = edit(body, len, edits[i][0], edits[i][1], out);
        assert_int_equal(agent_req_parse(out, n, &r, &err), 0);
        if (mac_ok(out, n)) fail_msg("accepted after %s -> %s", edits[i][0], edits[i][1]);
    }
    /* a signed state asked as a begin: refused */
    r = (struct agent_req){ .type = AGENT_STATE };
    n = (size_t)agent_req_frame(&r, (const uint8_t *)TOKEN, strlen(TOKEN), NONCE, frame,
                                sizeof(frame)) -
        AGENT_HDR;
    assert_true(mac_ok(body, n));
    n = edit(body, n, "\"state\"", "\"begin\"", out);
    assert_int_equal(agent_req_parse(out, n, &r, &err), 0);
    assert_int_equal(r.type, AGENT_BEGIN);
    assert_false(mac_ok(out, n));
    len = signed_begin(frame, sizeof(frame));
    /* every byte changed, one at a time: refused */
    assert_true(at > 0);
    for (size_t i = 0; i < len; i++) {
        memcpy(out, body, len);
        out[i] = out[i] == '0' ? '1' : '0';
        if (mac_ok(out, len)) fail_msg("accepted with byte %zu changed", i);
    }
    /* the mac's place: one, exactly; a second, or a key written with an escape, has none */
    n = edit(body, len, "\"services\"", "\"m\":\"" NONCE "\",\"services\"", out);
    assert_true(agent_req_mac_at(out, n) == at);
    n = edit(body, len, "{", "{\"mac\":\"" NONCE "\",", out);
    assert_int_equal(agent_req_mac_at(out, n), -EBADMSG);
    assert_false(mac_ok(out, n));
    n = edit(body, len, "\"mac\"", "\"m\\u0061c\"", out);
    assert_int_equal(agent_req_parse(out, n, &r, &err), 0);
    assert_int_equal(agent_req_mac_at(out, n), -EBADMSG);
    assert_false(mac_ok(out, n));
    assert_int_equal(agent_req_mac_at((const uint8_t *)"{}", 2), -EBADMSG);
}

#define MAC   "\"mac\":\"" HEX64 "\""
#define HEX64 "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

static int req(const char *s, struct agent_req *r, struct hb_err *err)
{
    return agent_req_parse((const uint8_t *)s, strlen(s), r, err);
}

static void test_requests(void **state)
{
    static struct agent_req r;
    struct hb_err err = { 0 };
    json_t *j;
    char *text;

    (void)state;
    assert_int_equal(req("{\"type\":\"begin\"," MAC ",\"services\":[\"php=pid:1\"],"
                         "\"watch\":[\"tcp://127.0.0.1:80\",\"unix:/s\"]}",
                         &r, &err),
                     0);
    assert_int_equal(r.type, AGENT_BEGIN);
    assert_string_equal(r.mac, HEX64);
    assert_int_equal(r.nservices, 1);
    assert_string_equal(r.services[0], "php=pid:1");
    assert_int_equal(r.nwatch, 2);
    assert_string_equal(r.watch[1], "unix:/s");
    /* written again, it reads the same */
    j = agent_req_json(&r);
    text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    assert_int_equal(req(text, &r, &err), 0);
    assert_int_equal(r.nwatch, 2);
    assert_string_equal(r.watch[0], "tcp://127.0.0.1:80");
    free(text);

    assert_int_equal(req("{\"type\":\"end\"," MAC ",\"session\":9007199254740992}", &r, &err), 0);
    assert_int_equal(r.type, AGENT_END);
    assert_true(r.session == (uint64_t)1 << 53);
    assert_int_equal(req("{\"type\":\"state\"," MAC "}", &r, &err), 0);
    assert_int_equal(r.type, AGENT_STATE);
}

static void test_requests_refused(void **state)
{
    static const char *const bad[] = {
        "",
        "[]",
        "{\"type\":\"state\"," MAC "} x",
        "{\"type\":\"state\"}",
        "{\"type\":\"nope\"," MAC "}",
        "{\"type\":1," MAC "}",
        "{\"type\":\"state\"," MAC ",\"more\":1}",
        "{\"type\":\"state\"," MAC "," MAC "}",
        "{\"type\":\"state\",\"mac\":\"00112233\"}",
        "{\"type\":\"state\",\"mac\":\"" HEX64 "00\"}",
        "{\"type\":\"state\",\"mac\":\"00112233445566778899AABBCCDDEEFF00112233445566778899aabbc"
        "cddeeff\"}",
        "{\"type\":\"end\"," MAC "}",
        "{\"type\":\"end\"," MAC ",\"session\":-1}",
        "{\"type\":\"end\"," MAC ",\"session\":9007199254740993}",
        "{\"type\":\"end\"," MAC ",\"session\":1.5}",
        "{\"type\":\"end\"," MAC ",\"session\":1,\"ops\":0}",
        "{\"type\":\"begin\"," MAC ",\"services\":\"a=pid:1\"}",
        "{\"type\":\"begin\"," MAC ",\"services\":[1]}",
        "{\"type\":\"begin\"," MAC ",\"services\":[\"\"]}",
        "{\"type\":\"begin\"," MAC ",\"watch\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\","
        "\"i\"]}",
    };
    static struct agent_req r;
    struct hb_err err = { 0 };
    char big[AGENT_ARG_MAX + 160];

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        err.msg[0] = '\0';
        if (req(bad[i], &r, &err) != -EBADMSG) fail_msg("accepted: %s", bad[i]);
        assert_true(err.msg[0] != '\0');
        assert_null(strchr(err.msg, '\n'));
    }
    /* a word one byte too long, and one that fits */
    snprintf(big, sizeof(big), "{\"type\":\"begin\"," MAC ",\"watch\":[\"%0*d\"]}", AGENT_ARG_MAX,
             0);
    assert_int_equal(req(big, &r, &err), -EBADMSG);
    snprintf(big, sizeof(big), "{\"type\":\"begin\"," MAC ",\"watch\":[\"%0*d\"]}",
             AGENT_ARG_MAX - 1, 0);
    assert_int_equal(req(big, &r, &err), 0);
    assert_int_equal(strlen(r.watch[0]), AGENT_ARG_MAX - 1);
    /* a NUL inside a string */
    assert_int_equal(req("{\"type\":\"begin\"," MAC ",\"watch\":[\"a\\u0000b\"]}", &r, &err),
                     -EBADMSG);
}

static int reply(const char *s, struct agent_reply *r, struct hb_err *err)
{
    return agent_reply_parse((const uint8_t *)s, strlen(s), r, err);
}

static void test_replies(void **state)
{
    struct agent_reply r;
    struct hb_err err = { 0 };

    (void)state;
    assert_int_equal(reply("{\"type\":\"hello\",\"proto\":2,\"nonce\":\"" HEX64 "\"}", &r, &err),
                     0);
    assert_int_equal(r.type, AGENT_HELLO);
    assert_string_equal(r.nonce, HEX64);
    assert_int_equal(reply("{\"type\":\"begun\",\"session\":3,\"state\":\"tcp-1\"}", &r, &err), 0);
    assert_int_equal(r.session, 3);
    assert_string_equal(r.state, "tcp-1");
    assert_int_equal(reply("{\"type\":\"begun\",\"session\":3,\"state\":null}", &r, &err), 0);
    assert_string_equal(r.state, "");
    assert_int_equal(reply("{\"type\":\"evidence\",\"evidence\":{\"a\":[1]}}", &r, &err), 0);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(r.evidence, "a"), 0)), 1);
    agent_reply_release(&r);
    assert_null(r.evidence);
    assert_int_equal(
        reply("{\"type\":\"state\",\"state\":\"unix\",\"index\":1,\"since_s\":2.5}", &r, &err), 0);
    assert_int_equal(r.index, 1);
    assert_true(r.since_s == 2.5);
    assert_int_equal(reply("{\"type\":\"error\",\"code\":\"auth\",\"error\":\"no\"}", &r, &err), 0);
    assert_string_equal(r.code, "auth");
    assert_string_equal(r.error, "no");

    assert_int_equal(reply("{\"type\":\"hello\",\"proto\":1,\"nonce\":\"" HEX64 "\"}", &r, &err),
                     -EBADMSG);
    assert_int_equal(reply("{\"type\":\"begun\",\"session\":3,\"state\":\"a b\"}", &r, &err),
                     -EBADMSG);
    assert_int_equal(reply("{\"type\":\"evidence\",\"evidence\":[]}", &r, &err), -EBADMSG);
    assert_int_equal(
        reply("{\"type\":\"state\",\"state\":\"x\",\"index\":-2,\"since_s\":0}", &r, &err),
        -EBADMSG);
    assert_int_equal(reply("{\"type\":\"error\",\"code\":\"auth\"}", &r, &err), -EBADMSG);
    assert_int_equal(reply("{\"type\":\"begin\"," MAC "}", &r, &err), -EBADMSG);
}

static void test_names(void **state)
{
    char long_name[AGENT_NAME_MAX + 1];

    (void)state;
    assert_true(agent_name_valid("tcp-1.keep_alive"));
    assert_false(agent_name_valid(""));
    assert_false(agent_name_valid("a b"));
    assert_false(agent_name_valid("a/b"));
    memset(long_name, 'a', AGENT_NAME_MAX);
    long_name[AGENT_NAME_MAX] = '\0';
    assert_false(agent_name_valid(long_name));
    long_name[AGENT_NAME_MAX - 1] = '\0';
    assert_true(agent_name_valid(long_name));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frames_split),
        cmocka_unit_test(test_frames_refused),
        cmocka_unit_test(test_frame_encode_cap),
        cmocka_unit_test(test_mac),
        cmocka_unit_test(test_mac_covers_request),
        cmocka_unit_test(test_requests),
        cmocka_unit_test(test_requests_refused),
        cmocka_unit_test(test_replies),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
