/*
 * fuzz_fcgi: the FastCGI codec against arbitrary replies. The first byte
 * picks the options (bit 0: keep_alive, bit 1: --expect-body "bench"), the
 * second a split point; the rest is the reply stream. Checks what codec.h
 * promises: *used never exceeds the input, NEED_MORE uses all of it, and
 * the verdicts (replies completed, what each said, the error, its kind and
 * offsets) are the same fed whole, split in two, and (for short inputs) byte
 * by byte. eof() after whole replies is always an error.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/fcgi.h"

#define MAX_BYTEWISE 4096 /* byte-by-byte runs only below this, to keep the fuzzer fast */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct run {
    int dones;
    uint64_t summary; /* a digest of every DONE's status, flags and stderr count */
    int error;
    enum codec_err err;
    size_t err_at;  /* stream offset where *used stopped */
    size_t err_off; /* msg.err_off: within the reply */
};

static void note_done(struct run *r, const struct codec_msg *msg)
{
    uint64_t v = (uint64_t)msg->status << 40 ^ (uint64_t)msg->stderr_bytes << 8 ^
                 (uint64_t)msg->closes << 1 ^ (uint64_t)msg->error_reply;

    assert(msg->err == CODEC_ERR_NONE);
    r->dones++;
    r->summary = r->summary * 1000003u ^ v;
}

static void feed_all(void *st, const uint8_t *p, size_t len, size_t base, struct run *r)
{
    size_t off = 0;

    while (off < len && !r->error) {
        struct codec_msg msg = { 0 };
        size_t used = SIZE_MAX;
        enum codec_rc rc = fcgi_codec.feed(st, p + off, len - off, &used, &msg);

        assert(used <= len - off);
        off += used;
        if (rc == CODEC_DONE) {
            note_done(r, &msg);
        } else if (rc == CODEC_ERROR) {
            assert(msg.err != CODEC_ERR_NONE);
            r->error = 1;
            r->err = msg.err;
            r->err_at = base + off;
            r->err_off = msg.err_off;
        } else {
            assert(off == len);
        }
    }
}

static void setup(void *st, struct fcgi_opts *o, uint8_t mode)
{
    struct codec_cfg cfg = { .keep_alive = (mode & 1) != 0, .opts = o };

    memset(o, 0, sizeof(*o));
    if (mode & 2) o->expect_body = "bench";
    fcgi_codec.init(st, &cfg);
}

static void same(const struct run *a, const struct run *b)
{
    assert(a->dones == b->dones);
    assert(a->summary == b->summary);
    assert(a->error == b->error);
    if (!a->error) return;
    assert(a->err == b->err);
    assert(a->err_at == b->err_at);
    assert(a->err_off == b->err_off);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    _Alignas(max_align_t) uint8_t st1[512], st2[512], st3[512];
    struct fcgi_opts o1, o2, o3;
    struct run whole = { 0 }, split = { 0 }, bytes = { 0 };
    uint8_t mode;
    size_t cut;

    if (size < 2 || fcgi_codec.state_size > sizeof(st1)) return 0;
    mode = data[0];
    cut = data[1];
    data += 2;
    size -= 2;
    cut = size ? cut % (size + 1) : 0;
    setup(st1, &o1, mode);
    setup(st2, &o2, mode);
    feed_all(st1, data, size, 0, &whole);
    feed_all(st2, data, cut, 0, &split);
    if (!split.error) feed_all(st2, data + cut, size - cut, cut, &split);
    same(&whole, &split);
    if (size <= MAX_BYTEWISE) {
        setup(st3, &o3, mode);
        for (size_t i = 0; i < size && !bytes.error; i++)
            feed_all(st3, data + i, 1, i, &bytes);
        same(&whole, &bytes);
    }
    if (!whole.error) {
        struct codec_msg msg = { 0 };

        /* a FastCGI reply never ends with the connection */
        assert(fcgi_codec.eof(st1, &msg) == CODEC_ERROR);
        assert(msg.err == CODEC_ERR_MISMATCH);
    }
    return 0;
}
