/*
 * echo: see echo.h. State is one offset into the expected message.
 */
#include "proto/echo.h"

#include <string.h>

struct echo_state {
    const uint8_t *expect; /* the request bytes: the reply must equal them */
    size_t size;
    size_t off; /* bytes of the current reply already matched */
};

static void echo_init(void *st, const struct codec_cfg *cfg)
{
    struct echo_state *e = st;

    e->expect = cfg->request;
    e->size = cfg->size;
    e->off = 0;
}

static size_t echo_encode(void *st, uint8_t *dst, size_t cap)
{
    const struct echo_state *e = st;

    if (cap < e->size) return 0;
    for (size_t i = 0; i < e->size; i++)
        dst[i] = echo_pattern_byte(i);
    return e->size;
}

static size_t first_difference(const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t i = 0;

    while (i < n && a[i] == b[i])
        i++;
    return i;
}

static enum codec_rc echo_feed(void *st, const uint8_t *src, size_t len, size_t *used,
                               struct codec_msg *msg)
{
    struct echo_state *e = st;
    size_t want = e->size - e->off;
    size_t n = len < want ? len : want;

    if (e->expect != NULL && memcmp(src, e->expect + e->off, n) != 0) {
        size_t at = first_difference(src, e->expect + e->off, n);
        *used = at;
        msg->err = CODEC_ERR_MISMATCH;
        msg->err_off = e->off + at;
        return CODEC_ERROR;
    }
    *used = n;
    e->off += n;
    if (e->off < e->size) return CODEC_NEED_MORE;
    e->off = 0;
    return CODEC_DONE;
}

static size_t echo_max_request(const struct codec_cfg *cfg)
{
    return cfg->size;
}

static void echo_reset(void *st)
{
    struct echo_state *e = st;

    e->off = 0;
}

const struct codec_ops echo_codec = {
    .name = "echo",
    .state_size = sizeof(struct echo_state),
    .fixed = true,
    .max_request = echo_max_request,
    .init = echo_init,
    .encode = echo_encode,
    .feed = echo_feed,
    .eof = NULL, /* a reply cut short by a close is short */
    .reset = echo_reset,
};
