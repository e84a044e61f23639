/*
 * fuzz_agent: the agent's frame decoder and message parsers (agent/wire.h)
 * against arbitrary bytes. Byte 0 sets where the input is cut into two
 * pieces; the rest is fed as a stream of frames to a decoder capped at
 * AGENT_REQ_MAX. Reading stays inside the input and the cap, every body is
 * 1 .. the cap bytes, and each is parsed as a request and as a reply. A
 * request that is accepted, written again (agent_req_json, agent_frame) and
 * decoded, reads back the same; signed (agent_req_frame), its MAC is good,
 * and any one byte of it changed, it is not. Every body's MAC is checked as
 * the agent checks it.
 */
/* fuzz: also src/agent/wire.c src/util.c */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agent/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t token[] = "a-token-for-the-fuzzer";
static const char nonce[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/* r signed: its MAC is good, and bad once any byte of the body changed. */
static void check_signed(const struct agent_req *r)
{
    static uint8_t frame[AGENT_HDR + AGENT_REQ_MAX];
    static struct agent_req s;
    uint8_t *body = frame + AGENT_HDR;
    long n;
    size_t len, i;

    s = *r;
    n = agent_req_frame(&s, token, sizeof(token) - 1, nonce, frame, sizeof(frame));
    if (n == -EMSGSIZE) return;
    assert(n > AGENT_HDR);
    len = (size_t)n - AGENT_HDR;
    assert(agent_req_mac_ok(token, sizeof(token) - 1, nonce, body, len));
    i = (len * 7 + 3) % len; /* one byte, wherever it falls */
    body[i] ^= 1;
    assert(!agent_req_mac_ok(token, sizeof(token) - 1, nonce, body, len));
}

static void check_again(const struct agent_req *r)
{
    static uint8_t frame[AGENT_HDR + AGENT_REQ_MAX], body[AGENT_REQ_MAX];
    static struct agent_req back;
    struct agent_dec d;
    struct hb_err err;
    json_t *j = agent_req_json(r);
    long n;
    size_t used = 0;

    assert(j != NULL);
    n = agent_frame(j, AGENT_REQ_MAX, frame, sizeof(frame));
    json_decref(j);
    if (n == -EMSGSIZE) return; /* escapes can make it longer than what was read */
    assert(n > AGENT_HDR);
    agent_dec_init(&d, body, sizeof(body));
    assert(agent_dec_feed(&d, frame, (size_t)n, &used) == AGENT_DEC_MSG && used == (size_t)n);
    assert(agent_req_parse(d.buf, d.len, &back, &err) == 0);
    assert(back.type == r->type && strcmp(back.mac, r->mac) == 0);
    assert(back.nservices == r->nservices && back.nwatch == r->nwatch);
    assert(back.session == r->session);
    for (unsigned i = 0; i < r->nservices; i++)
        assert(strcmp(back.services[i], r->services[i]) == 0);
    for (unsigned i = 0; i < r->nwatch; i++)
        assert(strcmp(back.watch[i], r->watch[i]) == 0);
}

static void parse(const uint8_t *body, size_t len)
{
    static struct agent_req r;
    struct agent_reply rep;
    struct hb_err err;

    (void)agent_req_mac_ok(token, sizeof(token) - 1, nonce, body, len);
    if (agent_req_parse(body, len, &r, &err) == 0) {
        check_again(&r);
        check_signed(&r);
    }
    if (agent_reply_parse(body, len, &rep, &err) == 0) agent_reply_release(&rep);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t buf[AGENT_REQ_MAX];
    struct agent_dec d;
    size_t cut, at = 0;

    if (size < 1) return 0;
    cut = 1 + (size - 1) * data[0] / 256;
    data++;
    size--;
    agent_dec_init(&d, buf, sizeof(buf));
    while (at < size) {
        size_t end = at < cut ? cut : size, used = 0;
        enum agent_dec_rc rc;

        if (end > size) end = size;
        rc = agent_dec_feed(&d, data + at, end - at, &used);
        assert(used <= end - at);
        at += used;
        if (rc == AGENT_DEC_ERROR) break;
        if (rc == AGENT_DEC_MSG) {
            assert(d.len >= 1 && d.len <= sizeof(buf));
            parse(d.buf, d.len);
        } else {
            assert(at == end);
        }
    }
    return 0;
}
