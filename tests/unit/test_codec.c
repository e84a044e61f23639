/*
 * test_codec: codec_feed_bytewise (proto/codec.h), the feed() loop resp and
 * memcached share, on a toy reply: 'L', a length digit N, N bytes of data
 * (taken whole by take()), '.'. A reply ends where its '.' is (*used), each
 * piece of it is all used, the data is counted past in one take, an error
 * is at its reply offset however the reply was split, and a pipelined reply
 * starts afresh.
 */
/* cmocka.h needs these four first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <string.h>

#include "proto/codec.h"

enum toy_part { TOY_L, TOY_LEN, TOY_DATA, TOY_END };

struct toy {
    enum toy_part part;
    size_t left; /* data bytes to go */
    size_t off;  /* reply bytes before this feed call */
    unsigned takes, steps;
};

static size_t toy_take(void *st, const uint8_t *src, size_t len, size_t at)
{
    struct toy *t = st;
    size_t n = len < t->left ? len : t->left;

    (void)src;
    (void)at;
    if (t->part != TOY_DATA) return 0;
    t->left -= n;
    if (t->left == 0) t->part = TOY_END;
    t->takes++;
    return n;
}

static enum codec_err toy_step(void *st, uint8_t c, size_t at, bool *done, size_t *err_at)
{
    struct toy *t = st;

    *err_at = at;
    t->steps++;
    switch (t->part) {
    case TOY_L:
        if (c != 'L') return CODEC_ERR_MISMATCH;
        t->part = TOY_LEN;
        return CODEC_ERR_NONE;
    case TOY_LEN:
        if (c < '0' || c > '9') return CODEC_ERR_MISMATCH;
        t->left = (size_t)(c - '0');
        t->part = t->left > 0 ? TOY_DATA : TOY_END;
        return CODEC_ERR_NONE;
    case TOY_END:
        if (c != '.') return CODEC_ERR_MISMATCH;
        *done = true;
        return CODEC_ERR_NONE;
    case TOY_DATA:
        break;
    }
    return CODEC_ERR_TOO_BIG; /* never: take() has the data */
}

static enum codec_rc toy_finish(void *st, size_t n, size_t *used, struct codec_msg *msg)
{
    struct toy *t = st;

    *used = n;
    t->part = TOY_L;
    t->off = 0;
    *msg = (struct codec_msg){ .kind = 1 };
    return CODEC_DONE;
}

static const struct codec_bytewise toy_ops = { toy_take, toy_step, toy_finish };

static enum codec_rc feed(struct toy *t, const char *s, size_t *used, struct codec_msg *msg)
{
    *used = SIZE_MAX;
    return codec_feed_bytewise(&toy_ops, t, &t->off, (const uint8_t *)s, strlen(s), used, msg);
}

static void test_whole(void **state)
{
    struct toy t = { 0 };
    struct codec_msg msg;
    size_t used;

    (void)state;
    /* two replies in one buffer: the first ends at its '.', the second starts afresh */
    assert_int_equal(feed(&t, "L3abc.L0.", &used, &msg), CODEC_DONE);
    assert_int_equal(used, 6);
    assert_int_equal(msg.kind, 1);
    assert_int_equal(t.takes, 1); /* the data in one take, never stepped */
    assert_int_equal(t.steps, 3);
    assert_int_equal(feed(&t, "L0.", &used, &msg), CODEC_DONE);
    assert_int_equal(used, 3);
    assert_int_equal(t.takes, 1);
}

static void test_split(void **state)
{
    struct toy t = { 0 };
    struct codec_msg msg;
    size_t used;

    (void)state;
    assert_int_equal(feed(&t, "L5ab", &used, &msg), CODEC_NEED_MORE);
    assert_int_equal(used, 4);
    assert_int_equal(t.off, 4);
    assert_int_equal(feed(&t, "cd", &used, &msg), CODEC_NEED_MORE);
    assert_int_equal(used, 2);
    assert_int_equal(t.off, 6);
    assert_int_equal(feed(&t, "e.L", &used, &msg), CODEC_DONE);
    assert_int_equal(used, 2);
    assert_int_equal(t.takes, 3);
}

static void test_error(void **state)
{
    struct toy t = { 0 };
    struct codec_msg msg;
    size_t used;

    (void)state;
    /* the bad byte at reply offset 4, fed whole ... */
    assert_int_equal(feed(&t, "L2ab!", &used, &msg), CODEC_ERROR);
    assert_int_equal(msg.err, CODEC_ERR_MISMATCH);
    assert_int_equal(msg.err_off, 4);
    assert_int_equal(used, 4);
    /* ... or after three bytes: the same offset, 1 byte of this call used */
    memset(&t, 0, sizeof(t));
    assert_int_equal(feed(&t, "L2a", &used, &msg), CODEC_NEED_MORE);
    assert_int_equal(feed(&t, "b!", &used, &msg), CODEC_ERROR);
    assert_int_equal(msg.err, CODEC_ERR_MISMATCH);
    assert_int_equal(msg.err_off, 4);
    assert_int_equal(used, 1);
    /* the first byte wrong */
    memset(&t, 0, sizeof(t));
    assert_int_equal(feed(&t, "x", &used, &msg), CODEC_ERROR);
    assert_int_equal(msg.err_off, 0);
    assert_int_equal(used, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_error),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
