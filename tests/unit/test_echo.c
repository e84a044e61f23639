/*
 * test_echo: the echo codec against its contract (proto/codec.h). encode
 * writes exactly the pattern; feed gives the same verdict however the reply
 * is split, byte by byte included; after DONE it parses the next pipelined
 * reply; a mismatch is reported at its offset within the whole reply. Every
 * request and reply lives in a buffer that ends at a PROT_NONE page (guard.h),
 * so an over-read or over-write crashes the test instead of passing by luck.
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guard.h"
#include "proto/codec.h"
#include "proto/echo.h"
#include "registry.h"

#define STATE_MAX 256
#define SENTINEL                                                                                   \
    0xea          /* never a pattern byte: (i % 251) * 7 + 13 misses 0x06, 0xea, 0xf1, 0xf8, 0xff */
#define SAMPLE 97 /* step for the sampled bad bytes of the big mismatch tests */

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const size_t exact_sizes[] = { 1, 2, 63, 64, 65, 4096, 65536 };

/* One codec instance: state, and the request it checks replies against. */
struct echo_ctx {
    _Alignas(max_align_t) unsigned char st[STATE_MAX];
    struct codec_cfg cfg;
    struct guard req_g;
    size_t size;
};

/* Encodes the request with a scratch state (request = NULL), then inits the real one. */
static void ctx_init(struct echo_ctx *c, size_t size)
{
    struct codec_cfg scratch = { .size = size, .request = NULL, .request_len = 0 };
    uint8_t *req;

    assert_true(echo_codec.state_size <= STATE_MAX);
    c->size = size;
    echo_codec.init(c->st, &scratch);
    req = guard_alloc(&c->req_g, size);
    assert_int_equal(echo_codec.encode(c->st, req, size), size);
    c->cfg = (struct codec_cfg){ .size = size, .request = req, .request_len = size };
    echo_codec.init(c->st, &c->cfg);
}

static void ctx_reset(struct echo_ctx *c)
{
    echo_codec.init(c->st, &c->cfg);
}

static void ctx_free(struct echo_ctx *c)
{
    guard_free(&c->req_g);
}

/* A correct reply of `size` bytes in a guarded buffer, built from the pattern, not by encode. */
static uint8_t *new_reply(struct guard *g, size_t size)
{
    uint8_t *r = guard_alloc(g, size);

    for (size_t i = 0; i < size; i++)
        r[i] = echo_pattern_byte(i);
    return r;
}

/*
 * One feed() and its verdict. For NEED_MORE and DONE, `n` is the expected
 * *used; for ERROR it is the expected msg.err_off (a mismatch), and *used
 * must not exceed len (the contract leaves its exact value open).
 * `what`, `a` and `b` only label a failure.
 */
static void feed_check(struct echo_ctx *c, const uint8_t *src, size_t len, enum codec_rc want,
                       size_t n, const char *what, size_t a, size_t b)
{
    size_t used = SIZE_MAX;
    struct codec_msg msg = { .err = CODEC_ERR_NONE, .err_off = SIZE_MAX };
    enum codec_rc rc = echo_codec.feed(c->st, src, len, &used, &msg);

    if (rc != want)
        fail_msg("%s: size %zu, %zu/%zu: rc %d, want %d (used %zu, err %s at %zu)", what, c->size,
                 a, b, (int)rc, (int)want, used, codec_err_str(msg.err), msg.err_off);
    if (want == CODEC_ERROR) {
        if (msg.err != CODEC_ERR_MISMATCH || msg.err_off != n || used > len)
            fail_msg("%s: size %zu, %zu/%zu: err %s at %zu, used %zu of %zu; want mismatch at %zu",
                     what, c->size, a, b, codec_err_str(msg.err), msg.err_off, used, len, n);
    } else if (used != n) {
        fail_msg("%s: size %zu, %zu/%zu: used %zu, want %zu", what, c->size, a, b, used, n);
    }
}

/* Split points in [0, size): all of them for step 1, else every step-th plus the edges. */
static size_t *split_points(size_t size, size_t step, size_t *count)
{
    const size_t edges[] = { 1, 2, size / 2, size - 2, size - 1, 4095, 4096, 4097 };
    size_t *k = malloc((size / step + 1 + ARRAY_LEN(edges)) * sizeof(*k));
    size_t n = 0;

    assert_non_null(k);
    for (size_t i = 0; i < size; i += step)
        k[n++] = i;
    if (step > 1)
        for (size_t i = 0; i < ARRAY_LEN(edges); i++)
            if (edges[i] < size) k[n++] = edges[i];
    *count = n;
    return k;
}

/* ---- 1. encode ---------------------------------------------------------- */

static void test_find(void **state)
{
    (void)state;
    assert_ptr_equal(codec_find("echo"), &echo_codec);
    assert_string_equal(echo_codec.name, "echo");
    assert_null(codec_find("ech"));
    assert_null(codec_find("echo2"));
    assert_non_null(strstr(codec_names(), "echo"));
}

static void test_encode(void **state)
{
    static const size_t sizes[] = { 1, 2, 63, 64, 65, 250, 251, 252, 4096, 65536 };
    _Alignas(max_align_t) unsigned char st[STATE_MAX];

    (void)state;
    assert_true(echo_codec.state_size <= STATE_MAX);
    for (size_t s = 0; s < ARRAY_LEN(sizes); s++) {
        size_t size = sizes[s];
        struct codec_cfg cfg = { .size = size, .request = NULL, .request_len = 0 };
        uint8_t *buf = malloc(size + 64);
        struct guard g;
        uint8_t *exact;

        assert_non_null(buf);
        echo_codec.init(st, &cfg);

        /* cap == size, ending at a guard page: exactly size bytes of the pattern */
        exact = guard_alloc(&g, size);
        assert_int_equal(echo_codec.encode(st, exact, size), size);
        for (size_t i = 0; i < size; i++)
            if (exact[i] != echo_pattern_byte(i))
                fail_msg("size %zu: byte %zu is %#x, want %#x", size, i, exact[i],
                         echo_pattern_byte(i));
        guard_free(&g);

        for (size_t i = 0; i < 251; i++)
            assert_int_not_equal(echo_pattern_byte(i), SENTINEL);
        /* more room than needed: nothing written past size */
        memset(buf, SENTINEL, size + 64);
        assert_int_equal(echo_codec.encode(st, buf, size + 64), size);
        for (size_t i = 0; i < size; i++)
            assert_int_equal(buf[i], echo_pattern_byte(i));
        for (size_t i = size; i < size + 64; i++)
            if (buf[i] != SENTINEL) fail_msg("size %zu: wrote byte %zu past the request", size, i);

        /* too small: returns 0 and writes nothing (a guard page catches any write) */
        memset(buf, SENTINEL, size + 64);
        assert_int_equal(echo_codec.encode(st, buf, size - 1), 0);
        assert_int_equal(echo_codec.encode(st, buf, 0), 0);
        for (size_t i = 0; i < size + 64; i++)
            if (buf[i] != SENTINEL)
                fail_msg("size %zu: cap too small but byte %zu written", size, i);
        exact = guard_alloc(&g, size - 1);
        assert_int_equal(echo_codec.encode(st, exact, size - 1), 0);
        guard_free(&g);
        free(buf);
    }
}

/* ---- 2. a whole reply --------------------------------------------------- */

static void test_exact(void **state)
{
    (void)state;
    for (size_t s = 0; s < ARRAY_LEN(exact_sizes); s++) {
        struct echo_ctx c;
        struct guard g;
        const uint8_t *rep;

        ctx_init(&c, exact_sizes[s]);
        rep = new_reply(&g, c.size);
        feed_check(&c, rep, c.size, CODEC_DONE, c.size, "exact", 0, 0);
        feed_check(&c, rep, c.size, CODEC_DONE, c.size, "exact, again", 0, 0);
        guard_free(&g);
        ctx_free(&c);
    }
}

/* ---- 3. split replies --------------------------------------------------- */

/*
 * The reply in two pieces at each split point k, piece 1 copied so that it
 * too ends at a guard page (piece 2 is the tail of rep, which does); then
 * byte by byte, in place and each byte alone before a guard page. No init
 * between rounds: DONE must leave the state ready for the next reply.
 */
static void check_splits(struct echo_ctx *c, const uint8_t *rep, size_t step)
{
    size_t size = c->size, nk;
    size_t *ks = split_points(size, step, &nk);
    struct guard g;
    uint8_t *one;

    guard_alloc(&g, size);
    for (size_t i = 0; i < nk; i++) {
        size_t k = ks[i];
        uint8_t *p1 = guard_tail(&g, k);

        memcpy(p1, rep, k);
        feed_check(c, p1, k, CODEC_NEED_MORE, k, "split, piece 1", k, size);
        feed_check(c, rep + k, size - k, CODEC_DONE, size - k, "split, piece 2", k, size);
    }
    free(ks);
    guard_free(&g);

    for (size_t i = 0; i < size; i++)
        feed_check(c, rep + i, 1, i + 1 < size ? CODEC_NEED_MORE : CODEC_DONE, 1, "byte in place",
                   i, size);
    one = guard_alloc(&g, 1);
    for (size_t i = 0; i < size; i++) {
        *one = rep[i];
        feed_check(c, one, 1, i + 1 < size ? CODEC_NEED_MORE : CODEC_DONE, 1, "byte at guard", i,
                   size);
    }
    guard_free(&g);
}

static void split_size(size_t size, size_t step)
{
    struct echo_ctx c;
    struct guard g;
    const uint8_t *rep;

    ctx_init(&c, size);
    rep = new_reply(&g, size);
    check_splits(&c, rep, step);
    guard_free(&g);
    ctx_free(&c);
}

static void test_split_small(void **state)
{
    (void)state;
    for (size_t size = 1; size <= 300; size++)
        split_size(size, 1);
}

/* The largest lab size too, at every offset: 2^32 bytes compared (1 s; ASan 2 s, TSan 13 s). */
static void test_split_large(void **state)
{
    (void)state;
    split_size(4096, 1);
    split_size(65536, 1);
}

/* ---- 4. pipelined replies ----------------------------------------------- */

/*
 * Feeds stream[0 .. total) in chunks of `chunk` bytes (each copied to end at
 * a guard page); within a chunk, after DONE, the rest is fed again. Every
 * call must consume up to the end of the current reply or of the chunk.
 */
static void check_stream(struct echo_ctx *c, const uint8_t *stream, size_t total, size_t chunk)
{
    size_t size = c->size, in_reply = 0, replies = 0;
    struct guard g;

    guard_alloc(&g, chunk);
    for (size_t pos = 0; pos < total;) {
        size_t len = total - pos < chunk ? total - pos : chunk;
        uint8_t *piece = guard_tail(&g, len);

        memcpy(piece, stream + pos, len);
        for (size_t p = 0; p < len;) {
            size_t want = size - in_reply;
            size_t n = len - p < want ? len - p : want;

            if (n == want) {
                feed_check(c, piece + p, len - p, CODEC_DONE, n, "stream", pos + p, chunk);
                in_reply = 0;
                replies++;
            } else {
                feed_check(c, piece + p, len - p, CODEC_NEED_MORE, n, "stream", pos + p, chunk);
                in_reply += n;
            }
            p += n;
        }
        pos += len;
    }
    guard_free(&g);
    assert_int_equal(replies, total / size);
    assert_int_equal(in_reply, total % size);
}

/* Two good replies, then one with byte `bad` flipped, fed as one stream. */
static void check_pipeline_bad(struct echo_ctx *c, uint8_t *stream, size_t total, size_t bad)
{
    size_t size = c->size;

    ctx_reset(c);
    stream[2 * size + bad] ^= 0x01;
    feed_check(c, stream, total, CODEC_DONE, size, "pipelined, bad", bad, 0);
    feed_check(c, stream + size, total - size, CODEC_DONE, size, "pipelined, bad", bad, 1);
    feed_check(c, stream + 2 * size, total - 2 * size, CODEC_ERROR, bad, "pipelined, bad", bad, 2);
    stream[2 * size + bad] ^= 0x01;
}

static void test_pipeline(void **state)
{
    static const size_t sizes[] = { 1, 2, 3, 63, 64, 65, 300, 4096 };

    (void)state;
    for (size_t s = 0; s < ARRAY_LEN(sizes); s++) {
        size_t size = sizes[s], total = 3 * size + size / 2;
        size_t chunks[] = { 1, 2, 7, size - 1, size, size + 1, 2 * size + 3, total };
        size_t bad_step = size > 64 ? 61 : 1;
        struct echo_ctx c;
        struct guard g;
        uint8_t *stream;

        ctx_init(&c, size);
        stream = guard_alloc(&g, total);
        for (size_t i = 0; i < total; i++)
            stream[i] = echo_pattern_byte(i % size);

        /* three whole replies in one buffer, the state resetting after each DONE */
        for (size_t r = 0; r < 3; r++)
            feed_check(&c, stream + r * size, 3 * size - r * size, CODEC_DONE, size, "pipelined", r,
                       3);
        for (size_t i = 0; i < ARRAY_LEN(chunks); i++) {
            ctx_reset(&c);
            if (chunks[i] > 0) check_stream(&c, stream, total, chunks[i]);
        }

        /* a bad byte in the third reply: an error at its offset within that reply */
        for (size_t bad = 0; bad < size; bad += bad_step)
            check_pipeline_bad(&c, stream, total, bad);
        check_pipeline_bad(&c, stream, total, size - 1);
        guard_free(&g);
        ctx_free(&c);
    }
}

/* ---- 5. mismatches ------------------------------------------------------ */

/*
 * rep with byte `bad` flipped: whole, split at each point (all when step is
 * 1, else a sample around the bad byte), and byte by byte if `bytes`. The
 * error comes from the piece holding the bad byte, err_off counted from the
 * start of the reply. scratch must hold c->size bytes before its guard page.
 */
static void check_mismatch(struct echo_ctx *c, uint8_t *rep, size_t bad, size_t step, bool bytes,
                           const struct guard *scratch)
{
    size_t size = c->size;
    size_t sample[] = { 0, 1, bad > 0 ? bad - 1 : 0, bad, bad + 1, size / 2, size - 1 };
    size_t nk = step == 1 ? size : ARRAY_LEN(sample);

    rep[bad] ^= 0x01;
    ctx_reset(c);
    feed_check(c, rep, size, CODEC_ERROR, bad, "mismatch, whole", bad, size);
    for (size_t i = 0; i < nk; i++) {
        size_t k = step == 1 ? i : sample[i];
        uint8_t *p1;

        if (k >= size) continue;
        p1 = guard_tail(scratch, k);
        memcpy(p1, rep, k);
        ctx_reset(c);
        if (bad < k) {
            feed_check(c, p1, k, CODEC_ERROR, bad, "mismatch, in piece 1", bad, k);
        } else {
            feed_check(c, p1, k, CODEC_NEED_MORE, k, "mismatch, before", bad, k);
            feed_check(c, rep + k, size - k, CODEC_ERROR, bad, "mismatch, in piece 2", bad, k);
        }
    }
    if (bytes) {
        ctx_reset(c);
        for (size_t i = 0; i < bad; i++)
            feed_check(c, rep + i, 1, CODEC_NEED_MORE, 1, "mismatch, byte", bad, i);
        feed_check(c, rep + bad, 1, CODEC_ERROR, bad, "mismatch, byte", bad, bad);
    }
    rep[bad] ^= 0x01;
}

static void mismatch_size(size_t size, size_t step)
{
    struct echo_ctx c;
    struct guard g, scratch;
    uint8_t *rep;
    size_t nb;
    size_t *bads = split_points(size, step, &nb); /* every position, or a sample */

    ctx_init(&c, size);
    rep = new_reply(&g, size);
    guard_alloc(&scratch, size);
    for (size_t i = 0; i < nb; i++) {
        size_t bad = bads[i];

        check_mismatch(&c, rep, bad, step, step == 1 || bad < 4 || bad >= size - 4, &scratch);
    }
    free(bads);
    guard_free(&scratch);
    guard_free(&g);
    ctx_free(&c);
}

static void test_mismatch(void **state)
{
    (void)state;
    mismatch_size(1, 1);
    mismatch_size(2, 1);
    mismatch_size(64, 1);
    mismatch_size(257, 1);
    mismatch_size(4096, SAMPLE);
    mismatch_size(65536, SAMPLE);
}

/* First i < size where the pattern shifted by s differs from the pattern; size if none. */
static size_t shift_diff(size_t s, size_t size)
{
    size_t i = 0;

    while (i < size && echo_pattern_byte(i + s) == echo_pattern_byte(i))
        i++;
    return i;
}

static void check_shifted(size_t size, size_t shift)
{
    struct echo_ctx c;
    struct guard g;
    uint8_t *rep;
    size_t at = shift_diff(shift, size);

    if (at == size) fail_msg("size %zu: the pattern shifted by %zu is the pattern", size, shift);
    ctx_init(&c, size);
    rep = guard_alloc(&g, size);
    for (size_t i = 0; i < size; i++)
        rep[i] = echo_pattern_byte(i + shift);
    feed_check(&c, rep, size, CODEC_ERROR, at, "shifted", shift, at);
    guard_free(&g);
    ctx_free(&c);
}

static void test_shifted(void **state)
{
    static const size_t sizes[] = { 1, 2, 63, 64, 65, 257, 4096, 65536 };

    (void)state;
    for (size_t s = 0; s < ARRAY_LEN(sizes); s++) {
        size_t size = sizes[s];
        struct echo_ctx c;
        struct guard g;
        uint8_t *stream;

        /* the reply starts at pattern byte 1, or 256 (period 251: not a match) */
        assert_int_equal(shift_diff(1, size), 0);
        check_shifted(size, 1);
        check_shifted(size, 256);

        /* a stream of replies that lost its first byte */
        if (size < 2) continue;
        ctx_init(&c, size);
        stream = guard_alloc(&g, 3 * size - 1);
        for (size_t i = 0; i < 3 * size - 1; i++)
            stream[i] = echo_pattern_byte((i + 1) % size);
        feed_check(&c, stream, 3 * size - 1, CODEC_ERROR, 0, "stream shifted", 1, 0);
        guard_free(&g);
        ctx_free(&c);
    }

    /* Every shift within the period is caught, at offset 0, for short replies too. */
    for (size_t shift = 1; shift < 251; shift++) {
        assert_int_equal(shift_diff(shift, 4096), 0);
        check_shifted(1, shift);
        check_shifted(64, shift);
        check_shifted(158, shift);
        check_shifted(257, shift);
        check_shifted(4096, shift);
    }
}

/* ---- 6. guard pages ----------------------------------------------------- */

/* The guard page is real: reading the byte after a guarded buffer kills a child. */
static void test_guard_traps(void **state)
{
    struct guard g;
    uint8_t *p = guard_alloc(&g, 10);
    pid_t pid;
    int ws = 0;

    (void)state;
    memset(p, 'x', 10);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);

        if (devnull >= 0)
            dup2(devnull, STDERR_FILENO); /* a sanitizer's SEGV report is expected noise */
        signal(SIGSEGV, SIG_DFL);         /* not cmocka's handler: die */
        signal(SIGBUS, SIG_DFL);
        if (((const volatile uint8_t *)p)[9] != 'x') _exit(2);
        (void)((const volatile uint8_t *)p)[10];
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    if (WIFEXITED(ws))
        fail_msg("reading past the guarded buffer did not crash (exit %d)", WEXITSTATUS(ws));
    assert_true(WIFSIGNALED(ws));
    guard_free(&g);
}

/*
 * Replies that end exactly at a guard page, around the page size: whole,
 * split at every offset and byte by byte (check_splits), then a mismatching
 * reply the same ways. Any read past the input is a SIGSEGV.
 */
static void test_guard(void **state)
{
    size_t page = guard_page_size();
    const size_t sizes[] = { 1, 2, 64, page - 1, page, page + 1 };

    (void)state;
    for (size_t s = 0; s < ARRAY_LEN(sizes); s++) {
        size_t size = sizes[s];
        const size_t bads[] = { 0, 1, size / 2, size - 2, size - 1 };
        struct echo_ctx c;
        struct guard g, scratch;
        uint8_t *rep;

        ctx_init(&c, size);
        rep = new_reply(&g, size);
        feed_check(&c, rep, size, CODEC_DONE, size, "guard, whole", 0, 0);
        check_splits(&c, rep, 1);
        guard_alloc(&scratch, size);
        for (size_t i = 0; i < ARRAY_LEN(bads); i++)
            if (bads[i] < size) check_mismatch(&c, rep, bads[i], 1, true, &scratch);
        guard_free(&scratch);
        guard_free(&g);
        ctx_free(&c);
    }
}

/* ---- 7. init after an error ----------------------------------------------- */

static void test_reset_after_error(void **state)
{
    static const size_t sizes[] = { 1, 2, 3, 64, 257, 4096 };

    (void)state;
    for (size_t s = 0; s < ARRAY_LEN(sizes); s++) {
        size_t size = sizes[s], half = size / 2;
        struct echo_ctx c;
        struct guard g;
        uint8_t *rep;

        ctx_init(&c, size);
        rep = new_reply(&g, size);

        /* a bad first byte, then a good reply */
        rep[0] ^= 0x01;
        feed_check(&c, rep, size, CODEC_ERROR, 0, "bad first", 0, 0);
        rep[0] ^= 0x01;
        ctx_reset(&c);
        feed_check(&c, rep, size, CODEC_DONE, size, "after bad first", 0, 0);

        /* half a good reply, an error in the rest, then a good reply, whole and split */
        rep[size - 1] ^= 0x01;
        if (half > 0) feed_check(&c, rep, half, CODEC_NEED_MORE, half, "good half", half, 0);
        feed_check(&c, rep + half, size - half, CODEC_ERROR, size - 1, "bad rest", half, 0);
        rep[size - 1] ^= 0x01;
        ctx_reset(&c);
        feed_check(&c, rep, size, CODEC_DONE, size, "after bad rest", 0, 0);
        ctx_reset(&c);
        if (half > 0)
            feed_check(&c, rep, half, CODEC_NEED_MORE, half, "after bad rest, split", half, 0);
        feed_check(&c, rep + half, size - half, CODEC_DONE, size - half, "after bad rest, split",
                   half, 1);
        guard_free(&g);
        ctx_free(&c);
    }
}

/* The reply is checked against the caller's request, not a built-in pattern. */
static void test_request_is_reference(void **state)
{
    static const size_t sizes[] = { 1, 64, 300 };

    (void)state;
    for (size_t s = 0; s < ARRAY_LEN(sizes); s++) {
        size_t size = sizes[s];
        _Alignas(max_align_t) unsigned char st[STATE_MAX];
        struct guard gq, gr;
        uint8_t *req = guard_alloc(&gq, size);
        uint8_t *rep = guard_alloc(&gr, size);
        struct codec_cfg cfg = { .size = size, .request = req, .request_len = size };
        size_t used = 0;
        struct codec_msg msg = { .err = CODEC_ERR_NONE, .err_off = SIZE_MAX };

        for (size_t i = 0; i < size; i++)
            req[i] = rep[i] = (uint8_t)('a' + i % 26);
        echo_codec.init(st, &cfg);
        assert_int_equal(echo_codec.feed(st, rep, size, &used, &msg), CODEC_DONE);
        assert_int_equal(used, size);
        for (size_t i = 0; i < size; i++)
            rep[i] = echo_pattern_byte(i);
        assert_int_equal(echo_codec.feed(st, rep, size, &used, &msg), CODEC_ERROR);
        assert_int_equal(msg.err, CODEC_ERR_MISMATCH);
        assert_int_equal(msg.err_off, 0);
        guard_free(&gr);
        guard_free(&gq);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_encode),
        cmocka_unit_test(test_exact),
        cmocka_unit_test(test_split_small),
        cmocka_unit_test(test_split_large),
        cmocka_unit_test(test_pipeline),
        cmocka_unit_test(test_mismatch),
        cmocka_unit_test(test_shifted),
        cmocka_unit_test(test_guard_traps),
        cmocka_unit_test(test_guard),
        cmocka_unit_test(test_reset_after_error),
        cmocka_unit_test(test_request_is_reference),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
