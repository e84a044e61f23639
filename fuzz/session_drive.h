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
 * split in two.
 */
#ifndef HOPBENCH_FUZZ_SESSION_DRIVE_H
#define HOPBENCH_FUZZ_SESSION_DRIVE_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SESSION_STATE_MAX 8192
#define SESSION_OUT_MAX   2048

struct session_run {
    int setup;      /* 0 running, 1 done, -1 failed */
    uint32_t wrote; /* a hash of every set-up byte written, in order */
    int dones;
    int error_replies;
    int error;
    enum codec_err err;
    size_t stop; /* stream offset where feeding stopped */
};

/* A request goes out: encoded on the connection's state unless the codec is fixed. */
static void session_request(const struct codec_ops *c, void *st)
{
    uint8_t req[256];

    if (!c->fixed) (void)c->encode(st, req, sizeof(req));
}

static void session_feed_all(const struct codec_ops *c, void *st, const uint8_t *p, size_t len,
                             size_t base, struct session_run *r)
{
    size_t off = 0;

    while (off < len && !r->error && r->setup >= 0) {
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
                r->stop = base + off;
            } else if (rc == CODEC_DONE) {
                r->setup = 1;
                session_request(c, st); /* the first request goes out */
            } else {
                assert(off == len || out_len > 0); /* an answer first, then the rest */
            }
            continue;
        }
        rc = c->feed(st, p + off, len - off, &used, &msg);
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

/*
 * A fresh state: with setup, its first call made (*first_out: the bytes it
 * wrote); without, ready for replies to one encoded request.
 */
static void session_start(const struct codec_ops *c, void *st, const struct codec_cfg *cfg,
                          struct session_run *r, bool setup, size_t *first_out)
{
    c->init(st, cfg);
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
        session_request(c, st);
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
    if (c->fixed) { /* its one request, as the engine encodes it */
        uint8_t req[256];

        c->init(st1, cfg);
        (void)c->encode(st1, req, sizeof(req));
    }
    session_start(c, st1, cfg, &whole, setup, first_out);
    session_start(c, st2, cfg, &split, setup, &out2);
    session_feed_all(c, st1, data, size, 0, &whole);
    session_feed_all(c, st2, data, cut, 0, &split);
    if (!split.error && split.setup >= 0)
        session_feed_all(c, st2, data + cut, size - cut, cut, &split);
    assert(whole.setup == split.setup && whole.wrote == split.wrote);
    assert(whole.dones == split.dones && whole.error_replies == split.error_replies);
    assert(whole.error == split.error);
    if (whole.error || whole.setup < 0) assert(whole.err == split.err && whole.stop == split.stop);
}

#endif
