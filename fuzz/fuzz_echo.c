/*
 * fuzz_echo: the echo codec against arbitrary replies. The first byte picks
 * the message size (1..256), the second a split point; the rest is the reply
 * stream. Checks what codec.h promises: *used never exceeds the input, and the
 * verdicts are the same fed whole or split in two.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/echo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct run {
    int dones;
    int error;
    size_t err_at; /* stream offset of the first bad byte */
};

static void feed_all(void *st, const uint8_t *p, size_t len, size_t base, struct run *r)
{
    size_t off = 0;

    while (off < len && !r->error) {
        struct codec_msg msg = { 0 };
        size_t used = 0;
        enum codec_rc rc = echo_codec.feed(st, p + off, len - off, &used, &msg);

        assert(used <= len - off);
        off += used;
        if (rc == CODEC_DONE)
            r->dones++;
        else if (rc == CODEC_ERROR) {
            r->error = 1;
            r->err_at = base + off;
        } else
            assert(off == len);
    }
}

static void setup(uint8_t *st, uint8_t *req, size_t msg_size)
{
    struct codec_cfg cfg = { .size = msg_size };

    echo_codec.init(st, &cfg);
    assert(echo_codec.encode(st, req, msg_size) == msg_size);
    cfg.request = req;
    cfg.request_len = msg_size;
    echo_codec.init(st, &cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    _Alignas(max_align_t) uint8_t st1[256], st2[256];
    uint8_t req[256];
    struct run whole = { 0 }, split = { 0 };
    size_t msg_size, cut;

    if (size < 2 || echo_codec.state_size > sizeof(st1)) return 0;
    msg_size = (size_t)data[0] + 1;
    cut = data[1];
    data += 2;
    size -= 2;
    cut = size ? cut % (size + 1) : 0;
    setup(st1, req, msg_size);
    setup(st2, req, msg_size);
    feed_all(st1, data, size, 0, &whole);
    feed_all(st2, data, cut, 0, &split);
    if (!split.error) feed_all(st2, data + cut, size - cut, cut, &split);
    assert(whole.dones == split.dones);
    assert(whole.error == split.error);
    assert(!whole.error || whole.err_at == split.err_at);
    return 0;
}
