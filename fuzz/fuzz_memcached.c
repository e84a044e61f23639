/*
 * fuzz_memcached: the memcached text codec against arbitrary replies. Byte 0
 * picks the commands (bits 0-1: get, set, a mix of set, get, get; 3 the same
 * mix with filled keys, whose gets want a value of the size), the key count
 * and the size (bits 2-7); byte 1 picks a split point; the rest is the reply
 * stream. Checks what codec.h promises: *used never exceeds the input, and
 * the verdicts (DONEs, error replies, the error, its offset and where it
 * stopped the stream) are the same fed whole, split in two, or byte by byte
 * (feed_drive.h); and that a few requests each fit max_request.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "feed_drive.h"
#include "proto/memcached.h"

#define STATE_MAX 2048

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    _Alignas(max_align_t) uint8_t st1[STATE_MAX], st2[STATE_MAX], st3[STATE_MAX];
    static const uint8_t mix[] = { MEMCACHED_SET, MEMCACHED_GET, MEMCACHED_GET };
    struct memcached_opts opts = { 0 };
    struct codec_cfg cfg = { .opts = &opts };
    struct feed_run whole = { 0 }, split = { 0 }, bytes = { 0 };
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
    feed_all(&memcached_codec, st1, data, size, 0, SIZE_MAX, &whole);
    feed_all(&memcached_codec, st2, data, cut, 0, SIZE_MAX, &split);
    if (!split.error)
        feed_all(&memcached_codec, st2, data + cut, size - cut, cut, SIZE_MAX, &split);
    feed_all(&memcached_codec, st3, data, size, 0, 1, &bytes);
    feed_same(&whole, &split);
    feed_same(&whole, &bytes);
    return 0;
}
