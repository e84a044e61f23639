/*
 * feed_drive: what the fuzz targets of the key-value codecs (resp,
 * memcached) share, and session_drive.h's after the set-up. It feeds a reply
 * stream to a codec's feed() in pieces of at most a given size, checks each call against the
 * codec.h contract
 * (*used within the piece and all of it unless the reply ended or failed; a
 * DONE without an error, its kind one of the codec's kind_names; an ERROR
 * with one), and sums up the exchange in a struct feed_run, which a target
 * compares (feed_same) between the stream fed whole, split in two, or byte
 * by byte.
 */
#ifndef HOPBENCH_FUZZ_FEED_DRIVE_H
#define HOPBENCH_FUZZ_FEED_DRIVE_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct feed_run {
    int dones, error_replies, error;
    enum codec_err err;
    size_t err_off; /* within the reply */
    size_t stop;    /* stream offset where feeding stopped */
};

/* The kinds c tells its replies apart by: its kind_names, or one. */
static inline unsigned feed_kinds(const struct codec_ops *c)
{
    unsigned n = 0;

    if (c->kind_names == NULL) return 1;
    while (n < CODEC_KINDS && c->kind_names[n] != NULL)
        n++;
    return n;
}

/*
 * One feed() call's verdict into r: a DONE counted (without an error, its
 * kind one of c's), an ERROR kept (with one) and `stop`, the stream offset
 * where it left off. Returns whether it was NEED_MORE.
 */
static inline bool feed_note(const struct codec_ops *c, enum codec_rc rc,
                             const struct codec_msg *msg, size_t stop, struct feed_run *r)
{
    if (rc == CODEC_DONE) {
        assert(msg->err == CODEC_ERR_NONE && msg->status == 0 && msg->kind < feed_kinds(c));
        r->dones++;
        r->error_replies += msg->error_reply;
        return false;
    }
    if (rc == CODEC_ERROR) {
        assert(msg->err != CODEC_ERR_NONE);
        r->error = 1;
        r->err = msg->err;
        r->err_off = msg->err_off;
        r->stop = stop;
        return false;
    }
    assert(rc == CODEC_NEED_MORE);
    return true;
}

/* Feeds p[0..len), at stream offset base, to c in pieces of at most `piece` bytes. */
static inline void feed_all(const struct codec_ops *c, void *st, const uint8_t *p, size_t len,
                            size_t base, size_t piece, struct feed_run *r)
{
    size_t off = 0;

    while (off < len && !r->error) {
        struct codec_msg msg = { 0 };
        size_t n = len - off < piece ? len - off : piece, used = SIZE_MAX;
        enum codec_rc rc = c->feed(st, p + off, n, &used, &msg);

        assert(used <= n);
        off += used;
        if (feed_note(c, rc, &msg, base + off, r)) assert(used == n);
    }
}

/* The same verdicts: DONEs, error replies, and the same error at the same place. */
static inline void feed_same(const struct feed_run *a, const struct feed_run *b)
{
    assert(a->dones == b->dones && a->error_replies == b->error_replies);
    assert(a->error == b->error);
    if (a->error) assert(a->err == b->err && a->err_off == b->err_off && a->stop == b->stop);
}

#endif
