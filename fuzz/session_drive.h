/*
 * session_drive: what the fuzz targets of the codecs with a session (pg,
 * mysql) share. It feeds a server's byte stream to a codec: to setup() until
 * the session is ready (each call's answer hashed into the transcript, an
 * answer's call allowed to stop short of the input), then the first request
 * is encoded as the engine does it (a fixed codec's once, on a scratch
 * state; another's on the connection's own) and the rest goes to feed().
 * Every call is checked against the codec.h contract (*used within the
 * input, an answer within setup_cap, an error with its kind), and the
 * exchange is summed up in a struct
 * session_run that a target compares between the stream fed whole and
 * split in two. The input's first two bytes are options, read alike by
 * every target (session_opts; each adds its own bits), then the stream
 * (session_input).
 */
#ifndef HOPBENCH_FUZZ_SESSION_DRIVE_H
#define HOPBENCH_FUZZ_SESSION_DRIVE_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feed_drive.h"
#include "proto/codec.h"

#define SESSION_STATE_MAX 8192
#define SESSION_OUT_MAX   2048

struct session_run {
    int setup;            /* 0 running, 1 done, -1 failed */
    uint32_t wrote;       /* a hash of every set-up byte written, in order */
    struct feed_run feed; /* the replies after it; feed.stop also where a set-up failed */
    bool fixed;           /* codec_fixed under the run's cfg: the engine encodes once per thread */
};

/* A request goes out: encoded on the connection's state unless the codec is fixed. */
static void session_request(const struct codec_ops *c, void *st, const struct session_run *r)
{
    uint8_t req[256];

    if (!r->fixed) (void)c->encode(st, req, sizeof(req));
}

static void session_feed_all(const struct codec_ops *c, void *st, const uint8_t *p, size_t len,
                             size_t base, struct session_run *r)
{
    size_t off = 0;

    while (off < len && !r->feed.error && r->setup >= 0) {
        struct codec_msg msg = { 0 };
        size_t used = SIZE_MAX;
        enum codec_rc rc;

        if (r->setup == 0) {
            uint8_t out[SESSION_OUT_MAX];
            size_t out_len = SIZE_MAX;

            assert(c->setup_cap <= sizeof(out));
            rc = c->setup(st, p + off, len - off, &used, out, &out_len, &msg);
            assert(used <= len - off && out_len <= c->setup_cap);
            for (size_t i = 0; i < out_len; i++)
                r->wrote = r->wrote * 31 + out[i];
            off += used;
            if (rc == CODEC_ERROR) {
                r->setup = -1;
                r->feed.stop = base + off;
            } else if (rc == CODEC_DONE) {
                r->setup = 1;
                session_request(c, st, r); /* the first request goes out */
            } else {
                assert(off == len || out_len > 0); /* an answer first, then the rest */
            }
            continue;
        }
        rc = c->feed(st, p + off, len - off, &used, &msg);
        assert(used <= len - off);
        off += used;
        if (feed_note(c, rc, &msg, base + off, &r->feed)) assert(off == len);
    }
}

/*
 * A fresh state: with setup, its first call made (*first_out: the bytes it
 * wrote); without, ready for replies to one encoded request.
 */
static void session_start(const struct codec_ops *c, void *st, const struct codec_cfg *cfg,
                          struct session_run *r, bool setup, size_t *first_out)
{
    c->init(st, cfg);
    r->fixed = codec_fixed(c, cfg);
    r->setup = 1;
    *first_out = 0;
    if (setup) {
        uint8_t out[SESSION_OUT_MAX];
        struct codec_msg msg = { 0 };
        size_t used = 0;

        assert(c->setup(st, NULL, 0, &used, out, first_out, &msg) == CODEC_NEED_MORE);
        assert(*first_out <= c->setup_cap);
        r->setup = 0;
    } else {
        session_request(c, st, r);
    }
}

/*
 * The one check both targets make: data fed whole and split at cut give the
 * same set-up verdict and bytes, the same DONEs and error replies, and the
 * same error at the same place.
 */
static void session_check(const struct codec_ops *c, const struct codec_cfg *cfg, bool setup,
                          const uint8_t *data, size_t size, size_t cut, size_t *first_out)
{
    _Alignas(max_align_t) static uint8_t st1[SESSION_STATE_MAX], st2[SESSION_STATE_MAX];
    struct session_run whole = { 0 }, split = { 0 };
    size_t out2;

    assert(c->state_size <= sizeof(st1));
    if (codec_fixed(c, cfg)) { /* its one request, as the engine encodes it */
        uint8_t req[256];

        c->init(st1, cfg);
        (void)c->encode(st1, req, sizeof(req));
    }
    session_start(c, st1, cfg, &whole, setup, first_out);
    session_start(c, st2, cfg, &split, setup, &out2);
    session_feed_all(c, st1, data, size, 0, &whole);
    session_feed_all(c, st2, data, cut, 0, &split);
    if (!split.feed.error && split.setup >= 0)
        session_feed_all(c, st2, data + cut, size - cut, cut, &split);
    assert(whole.setup == split.setup && whole.wrote == split.wrote);
    assert(whole.feed.dones == split.feed.dones);
    assert(whole.feed.error_replies == split.feed.error_replies);
    assert(whole.feed.error == split.feed.error);
    if (whole.feed.error || whole.setup < 0)
        assert(whole.feed.err == split.feed.err && whole.feed.stop == split.feed.stop);
}

/*
 * What byte 0 picks for every target, into the target's options (opts, all
 * zero first, its password and expected body fields) and cfg (cfg->opts =
 * opts): the set-up (bit 0: the return value), a password (bit 1: none or
 * "pencil") and the expected body (bits 3-4: none, "1", "", "abc"); bit 2
 * and bits 5-7 are the target's own. Byte 1 is the connection's index (and
 * the split point, session_input). data holds at least two bytes.
 */
static bool session_opts(const uint8_t *data, void *opts, size_t opts_size, const char **password,
                         const char **expect_body, struct codec_cfg *cfg)
{
    static const char *const bodies[] = { NULL, "1", "", "abc" };

    memset(opts, 0, opts_size);
    *cfg = (struct codec_cfg){ .opts = opts };
    *password = data[0] & 2 ? "pencil" : NULL;
    *expect_body = bodies[(data[0] >> 3) & 3];
    cfg->conn_index = data[1];
    return data[0] & 1;
}

/*
 * The rest of a target, its own options set: a request of cfg is written at
 * once and fits max_request; then session_check on the bytes after the two
 * option bytes, split where byte 1 says. Returns what the set-up's first
 * call wrote (0 without setup).
 */
static size_t session_input(const struct codec_ops *c, const struct codec_cfg *cfg, bool setup,
                            const uint8_t *data, size_t size)
{
    _Alignas(max_align_t) uint8_t st[SESSION_STATE_MAX];
    uint8_t req[256];
    size_t cut = data[1], n, first;

    assert(c->state_size <= sizeof(st));
    c->init(st, cfg);
    n = c->encode(st, req, sizeof(req));
    assert(n > 0 && n == c->max_request(cfg));
    data += 2;
    size -= 2;
    cut = size ? cut % (size + 1) : 0;
    session_check(c, cfg, setup, data, size, cut, &first);
    return first;
}

#endif
