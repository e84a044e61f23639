/*
 * fuzz_http: the http codec against arbitrary reply streams. Byte 0 picks
 * the mode (bit 0: the request was HEAD; bit 1: --expect-body "hello"),
 * bytes 1-2 a split point; the rest is the stream. Checks what codec.h
 * promises: *used never exceeds the input and NEED_MORE uses it all; the
 * stream gives the same replies (status, closes, end), the same error at the
 * same offset, and the same eof() verdict fed whole, split in two, and (for
 * short inputs) byte by byte.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define STATE_MAX 512
#define BYTES_MAX 2048 /* byte-by-byte feeding only below this many bytes */

struct run {
    _Alignas(max_align_t) unsigned char st[STATE_MAX];
    unsigned dones;
    uint64_t digest;    /* status, closes and end of every reply */
    size_t reply_start; /* stream offset of the reply in progress */
    int error;
    enum codec_err err;
    size_t err_at; /* stream offset of the error */
    enum codec_rc eof_rc;
    struct codec_msg eof_msg;
};

static void mix(uint64_t *d, uint64_t v)
{
    *d = (*d ^ v) * 0x100000001b3ULL;
}

static void feed_piece(struct run *r, const uint8_t *p, size_t len, size_t base)
{
    size_t off = 0;

    while (off < len && !r->error) {
        struct codec_msg msg = { 0 };
        size_t used = SIZE_MAX;
        enum codec_rc rc = http_codec.feed(r->st, p + off, len - off, &used, &msg);

        assert(used <= len - off);
        off += used;
        if (rc == CODEC_DONE) {
            assert(msg.err == CODEC_ERR_NONE);
            assert(msg.status >= 200 && msg.status <= 599);
            r->dones++;
            mix(&r->digest, msg.status);
            mix(&r->digest, msg.closes);
            mix(&r->digest, base + off);
            r->reply_start = base + off;
        } else if (rc == CODEC_ERROR) {
            assert(msg.err != CODEC_ERR_NONE);
            r->error = 1;
            r->err = msg.err;
            r->err_at = r->reply_start + msg.err_off;
            assert(r->err_at <= base + len);
        } else {
            assert(rc == CODEC_NEED_MORE);
            assert(off == len);
        }
    }
}

static void run_init(struct run *r, const struct codec_cfg *cfg)
{
    memset(r, 0, sizeof(*r));
    http_codec.init(r->st, cfg);
}

static void run_eof(struct run *r)
{
    if (r->error) return;
    r->eof_rc = http_codec.eof(r->st, &r->eof_msg);
    assert(r->eof_rc == CODEC_DONE || r->eof_rc == CODEC_ERROR);
    if (r->eof_rc == CODEC_DONE) assert(r->eof_msg.closes && r->eof_msg.err == CODEC_ERR_NONE);
}

static void same(const struct run *a, const struct run *b)
{
    assert(a->dones == b->dones);
    assert(a->digest == b->digest);
    assert(a->error == b->error);
    if (a->error) {
        assert(a->err == b->err);
        assert(a->err_at == b->err_at);
        return;
    }
    assert(a->reply_start == b->reply_start);
    assert(a->eof_rc == b->eof_rc);
    assert(a->eof_msg.err == b->eof_msg.err);
    assert(a->eof_msg.err_off == b->eof_msg.err_off);
    assert(a->eof_msg.status == b->eof_msg.status);
    assert(a->eof_msg.closes == b->eof_msg.closes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct run whole, split, bytes;
    struct http_opts opts = { 0 };
    struct codec_cfg cfg = { .keep_alive = true, .opts = &opts };
    size_t cut;

    if (size < 3 || http_codec.state_size > STATE_MAX) return 0;
    opts.method = (data[0] & 1) ? "HEAD" : "GET";
    opts.expect_body = (data[0] & 2) ? "hello" : NULL;
    cut = (size_t)data[1] | (size_t)data[2] << 8;
    data += 3;
    size -= 3;
    cut = cut % (size + 1);

    run_init(&whole, &cfg);
    feed_piece(&whole, data, size, 0);
    run_eof(&whole);

    run_init(&split, &cfg);
    feed_piece(&split, data, cut, 0);
    feed_piece(&split, data + cut, size - cut, cut);
    run_eof(&split);
    same(&whole, &split);

    if (size <= BYTES_MAX) {
        run_init(&bytes, &cfg);
        for (size_t i = 0; i < size; i++)
            feed_piece(&bytes, data + i, 1, i);
        run_eof(&bytes);
        same(&whole, &bytes);
    }
    return 0;
}
