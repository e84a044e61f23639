/*
 * fuzz_mysql: the MySQL/MariaDB codec against arbitrary server bytes. Byte 0
 * picks whether the stream starts with the session's set-up (bit 0), a
 * password (bit 1: none or "pencil"), a Unix socket (bit 2), the expected
 * body (bits 3-4: none, "1", "", "abc") and COM_PING (bit 5); byte 1 picks a
 * split point; the rest is what the server sends. Checks what codec.h promises: *used never exceeds
 * the input, a set-up answer fits setup_cap, and the verdicts (the set-up's
 * end and every byte it wrote, then DONEs, error replies, the error and where
 * it stopped the stream) are the same fed whole or split in two.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/mysql.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define STATE_MAX 8192

struct run {
    int setup;      /* 0 running, 1 done, -1 failed */
    uint32_t wrote; /* a hash of every set-up byte written, in order */
    int dones;
    int error_replies;
    int error;
    enum codec_err err;
    size_t stop; /* stream offset where feeding stopped */
};

static void feed_all(void *st, const uint8_t *p, size_t len, size_t base, struct run *r)
{
    size_t off = 0;

    while (off < len && !r->error && r->setup >= 0) {
        struct codec_msg msg = { 0 };
        size_t used = SIZE_MAX;
        enum codec_rc rc;

        if (r->setup == 0) {
            uint8_t out[MYSQL_SETUP_CAP];
            size_t out_len = SIZE_MAX;

            rc = mysql_codec.setup(st, p + off, len - off, &used, out, &out_len, &msg);
            assert(used <= len - off && out_len <= mysql_codec.setup_cap);
            for (size_t i = 0; i < out_len; i++)
                r->wrote = r->wrote * 31 + out[i];
            off += used;
            if (rc == CODEC_ERROR) {
                r->setup = -1;
                r->stop = base + off;
            } else if (rc == CODEC_DONE) {
                uint8_t req[256];

                r->setup = 1;
                (void)mysql_codec.encode(st, req, sizeof(req)); /* the first request goes out */
            } else {
                assert(off == len || out_len > 0); /* an answer first, then the rest */
            }
            continue;
        }
        rc = mysql_codec.feed(st, p + off, len - off, &used, &msg);
        assert(used <= len - off);
        off += used;
        if (rc == CODEC_DONE) {
            assert(msg.err == CODEC_ERR_NONE);
            r->dones++;
            r->error_replies += msg.error_reply;
        } else if (rc == CODEC_ERROR) {
            assert(msg.err != CODEC_ERR_NONE);
            r->error = 1;
            r->err = msg.err;
            r->stop = base + off;
        } else {
            assert(off == len);
        }
    }
}

static void start(void *st, const struct codec_cfg *cfg, struct run *r, bool setup)
{
    mysql_codec.init(st, cfg);
    r->setup = 1;
    if (setup) {
        uint8_t out[MYSQL_SETUP_CAP];
        struct codec_msg msg = { 0 };
        size_t used = 0, out_len = 0;

        assert(mysql_codec.setup(st, NULL, 0, &used, out, &out_len, &msg) == CODEC_NEED_MORE);
        assert(out_len == 0); /* the server speaks first */
        r->setup = 0;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const bodies[] = { NULL, "1", "", "abc" };
    _Alignas(max_align_t) uint8_t st1[STATE_MAX], st2[STATE_MAX];
    struct codec_opts opts = { 0 };
    struct codec_cfg cfg = { .opts = &opts };
    struct run whole = { 0 }, split = { 0 };
    uint8_t req[256];
    size_t cut, n;
    bool setup;

    if (size < 2 || mysql_codec.state_size > sizeof(st1)) return 0;
    setup = data[0] & 1;
    opts.password = data[0] & 2 ? "pencil" : NULL;
    cfg.local = data[0] & 4;
    opts.ping = data[0] & 32;
    opts.expect_body = bodies[(data[0] >> 3) & 3];
    cfg.conn_index = data[1];
    start(st1, &cfg, &whole, setup);
    n = mysql_codec.encode(st1, req, sizeof(req));
    assert(n > 0 && n == mysql_codec.max_request(&cfg));
    if (!setup) { /* replies answer a request: its sequence comes first */
        start(st1, &cfg, &whole, false);
        start(st2, &cfg, &split, false);
        (void)mysql_codec.encode(st1, req, sizeof(req));
        (void)mysql_codec.encode(st2, req, sizeof(req));
    }

    cut = data[1];
    data += 2;
    size -= 2;
    cut = size ? cut % (size + 1) : 0;
    if (setup) {
        start(st1, &cfg, &whole, setup);
        start(st2, &cfg, &split, setup);
    }
    feed_all(st1, data, size, 0, &whole);
    feed_all(st2, data, cut, 0, &split);
    if (!split.error && split.setup >= 0) feed_all(st2, data + cut, size - cut, cut, &split);
    assert(whole.setup == split.setup && whole.wrote == split.wrote);
    assert(whole.dones == split.dones && whole.error_replies == split.error_replies);
    assert(whole.error == split.error);
    if (whole.error || whole.setup < 0) {
        assert(whole.err == split.err && whole.stop == split.stop);
        return 0;
    }
    return 0;
}
