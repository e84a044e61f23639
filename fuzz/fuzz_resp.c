/*
 * fuzz_resp: the RESP2 codec against arbitrary replies. Byte 0 picks the
 * command (bits 0-1; 3 is a mix of SET, GET and PING in turn, whose GETs want
 * a value of the size), the expected GET body (bits 2-3: none, "", "hello",
 * "PONG") and the key count (bits 4-7); byte 1 picks a split
 * point; the rest is the reply stream. Checks what codec.h promises: *used
 * never exceeds the input, and the verdicts (DONEs, error replies, the error,
 * its offset and where it stopped the stream, then eof) are the same fed
 * whole or split in two (feed_drive.h). It also encodes a few requests and checks that each
 * fits max_request and parses as one whole RESP array. The same stream is
 * also AUTH's reply (setup with a password): the same verdict, bytes used and
 * error fed whole or split, *used within each piece.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "feed_drive.h"
#include "proto/resp.h"

#define STATE_MAX 1024

/* Requests: each at most max_request, and one whole array to a parser (a GET wants a bulk). */
static void check_encode(const struct codec_cfg *cfg)
{
    _Alignas(max_align_t) uint8_t st[STATE_MAX], rd[STATE_MAX];
    static const struct resp_opts get = { .command = { .cmd = REDIS_GET } };
    struct codec_cfg rcfg = { .opts = &get };
    size_t max = resp_codec.max_request(cfg);
    uint8_t buf[512];

    assert(max <= sizeof(buf));
    resp_codec.init(st, cfg);
    resp_codec.init(rd, &rcfg);
    for (int i = 0; i < 3; i++) {
        struct codec_msg msg = { 0 };
        size_t used = 0, n = resp_codec.encode(st, buf, max);

        assert(n > 0 && n <= max);
        assert(resp_codec.encode(st, buf, 0) == 0);
        assert(resp_codec.feed(rd, buf, n, &used, &msg) == CODEC_ERROR);
        assert(msg.err == CODEC_ERR_MISMATCH && msg.err_off == 0 && used == n);
    }
}

/* AUTH's reply (setup, with a password) fed in pieces ending at cut and len: the verdict. */
struct auth_run {
    enum codec_rc rc;
    struct codec_msg msg;
    size_t used;
};

static struct auth_run auth_feed(const uint8_t *p, size_t len, size_t cut)
{
    static const struct resp_opts pw = { .password = "pw" };
    static const struct codec_cfg cfg = { .opts = &pw };
    _Alignas(max_align_t) uint8_t st[STATE_MAX];
    struct auth_run r = { .rc = CODEC_NEED_MORE };
    uint8_t out[RESP_SETUP_CAP];
    size_t olen = 0, used = 0;

    resp_codec.init(st, &cfg);
    assert(resp_codec.setup(st, NULL, 0, &used, out, &olen, &r.msg) == CODEC_NEED_MORE);
    assert(olen > 0 && olen <= resp_codec.setup_cap && used == 0);
    for (size_t from = 0, to = cut; from < len && r.rc == CODEC_NEED_MORE; to = len) {
        if (to <= from) continue;
        memset(&r.msg, 0, sizeof(r.msg));
        r.rc = resp_codec.setup(st, p + from, to - from, &used, out, &olen, &r.msg);
        assert(used <= to - from && olen == 0);
        assert(r.rc != CODEC_NEED_MORE || used == to - from);
        assert(r.rc != CODEC_ERROR || r.msg.err != CODEC_ERR_NONE || r.msg.error_reply);
        from += used;
        r.used = from;
    }
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const bodies[] = { NULL, "", "hello", "PONG" };
    _Alignas(max_align_t) uint8_t st1[STATE_MAX], st2[STATE_MAX];
    struct resp_opts opts = { 0 };
    struct codec_cfg cfg = { .opts = &opts };
    struct feed_run whole = { 0 }, split = { 0 };
    struct codec_msg m1 = { 0 }, m2 = { 0 };
    size_t cut;

    if (size < 2 || resp_codec.state_size > sizeof(st1)) return 0;
    opts.command.cmd = (data[0] & 3) == 1 ? REDIS_SET : (data[0] & 3) == 2 ? REDIS_GET : REDIS_PING;
    if ((data[0] & 3) == 3) {
        static const uint8_t mix[] = { REDIS_SET, REDIS_GET, REDIS_GET, REDIS_PING };
        memcpy(opts.command.mix, mix, sizeof(mix));
        opts.command.len = sizeof(mix);
    }
    opts.expect_body = bodies[(data[0] >> 2) & 3];
    opts.keys = (uint64_t)(data[0] >> 4) * 997;
    cfg.size = (size_t)(data[0] >> 4) * 17;
    cfg.conn_index = data[1];
    check_encode(&cfg);

    cut = data[1];
    data += 2;
    size -= 2;
    cut = size ? cut % (size + 1) : 0;
    {
        struct auth_run a1 = auth_feed(data, size, size), a2 = auth_feed(data, size, cut);
        assert(a1.rc == a2.rc && a1.used == a2.used && a1.msg.err == a2.msg.err);
        assert(a1.msg.err_off == a2.msg.err_off && a1.msg.error_reply == a2.msg.error_reply);
    }
    resp_codec.init(st1, &cfg);
    resp_codec.init(st2, &cfg);
    feed_all(&resp_codec, st1, data, size, 0, SIZE_MAX, &whole);
    feed_all(&resp_codec, st2, data, cut, 0, SIZE_MAX, &split);
    if (!split.error) feed_all(&resp_codec, st2, data + cut, size - cut, cut, SIZE_MAX, &split);
    feed_same(&whole, &split);
    if (whole.error) return 0;
    /* the same partial reply (or none) is left: eof says the same */
    assert(resp_codec.eof(st1, &m1) == CODEC_ERROR && resp_codec.eof(st2, &m2) == CODEC_ERROR);
    assert(m1.err == CODEC_ERR_MISMATCH && m1.err_off == m2.err_off);
    return 0;
}
