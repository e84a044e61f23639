/*
 * fuzz_memcached: the memcached text codec against arbitrary replies. Byte 0
 * picks the commands (bits 0-1: get, set, a mix of set, get, get; 3 the same
 * mix with filled keys, whose gets want a value of the size), the key count
 * and the size (bits 2-7); byte 1 picks a split point; the rest is the reply
 * stream. Checks what codec.h promises: *used never exceeds the input, and
 * the verdicts (DONEs, error replies, the error, its offset and where it
 * stopped the stream) are the same fed whole, split in two, or byte by byte;
 * and that a few requests each fit max_request.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/memcached.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define STATE_MAX 2048

struct run {
    int dones, error_replies, error;
    enum codec_err err;
    size_t err_off, stop;
};

/* Feeds p[0..len) from stream offset base in pieces of at most `piece` bytes. */
static void feed_all(void *st, const uint8_t *p, size_t len, size_t base, size_t piece,
                     struct run *r)
{
    size_t off = 0;

    while (off < len && !r->error) {
        struct codec_msg msg = { 0 };
        size_t n = len - off < piece ? len - off : piece, used = SIZE_MAX;
        enum codec_rc rc = memcached_codec.feed(st, p + off, n, &used, &msg);

        assert(used <= n);
        off += used;
        if (rc == CODEC_DONE) {
            assert(msg.err == CODEC_ERR_NONE && msg.kind <= MEMCACHED_SET);
            r->dones++;
            r->error_replies += msg.error_reply;
        } else if (rc == CODEC_ERROR) {
            assert(msg.err != CODEC_ERR_NONE);
            r->error = 1;
            r->err = msg.err;
            r->err_off = msg.err_off;
            r->stop = base + off;
        } else {
            assert(rc == CODEC_NEED_MORE && used == n);
        }
    }
}

static void same(const struct run *a, const struct run *b)
{
    assert(a->dones == b->dones && a->error_replies == b->error_replies);
    assert(a->error == b->error);
    if (a->error) assert(a->err == b->err && a->err_off == b->err_off && a->stop == b->stop);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    _Alignas(max_align_t) uint8_t st1[STATE_MAX], st2[STATE_MAX], st3[STATE_MAX];
    static const uint8_t mix[] = { MEMCACHED_SET, MEMCACHED_GET, MEMCACHED_GET };
    struct memcached_opts opts = { 0 };
    struct codec_cfg cfg = { .opts = &opts };
    struct run whole = { 0 }, split = { 0 }, bytes = { 0 };
    uint8_t req[1024];
    size_t cut;

    if (size < 2 || memcached_codec.state_size > sizeof(st1)) return 0;
    opts.command.cmd = (data[0] & 3) == 1 ? MEMCACHED_SET : MEMCACHED_GET;
    if ((data[0] & 3) >= 2) {
        memcpy(opts.command.mix, mix, sizeof(mix));
        opts.command.len = sizeof(mix);
    }
    opts.filled = (data[0] & 3) == 3;
    opts.keys = (uint64_t)(data[0] >> 2) * 37;
    cfg.size = (size_t)(data[0] >> 4) * 3;
    cfg.conn_index = data[1];
    memcached_codec.init(st1, &cfg);
    for (int i = 0; i < 3; i++) {
        size_t n = memcached_codec.encode(st1, req, sizeof(req));
        assert(n > 0 && n <= memcached_codec.max_request(&cfg));
    }
    memcached_codec.init(st1, &cfg);
    memcached_codec.init(st2, &cfg);
    memcached_codec.init(st3, &cfg);
    cut = data[1];
    data += 2;
    size -= 2;
    cut = size ? cut % (size + 1) : 0;
    feed_all(st1, data, size, 0, SIZE_MAX, &whole);
    feed_all(st2, data, cut, 0, SIZE_MAX, &split);
    if (!split.error) feed_all(st2, data + cut, size - cut, cut, SIZE_MAX, &split);
    feed_all(st3, data, size, 0, 1, &bytes);
    same(&whole, &split);
    same(&whole, &bytes);
    return 0;
}
