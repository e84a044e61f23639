/*
 * server_drive: what the server fuzz targets share. It feeds a request
 * stream to a reference server's process() the way the frame does: bytes
 * arrive in reads of a chosen size into an in_cap buffer; process() runs
 * until it makes no progress or nothing is left; consumed bytes are dropped;
 * a full buffer with nothing consumed closes. Every call is checked against
 * the process() contract (consumed <= len; an error or a close ends the
 * connection) and a target's own check, and the whole exchange is summed up
 * in a transcript (every reply byte, requests answered, how it ended) that a
 * target compares between two read sizes.
 */
#ifndef HOPBENCH_FUZZ_SERVER_DRIVE_H
#define HOPBENCH_FUZZ_SERVER_DRIVE_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

enum end { END_DATA = 0, END_CLOSE, END_ERROR, END_FULL };

struct transcript {
    uint64_t digest; /* every reply byte, in order, 8 at a time */
    uint64_t tail;   /* the bytes after the last whole 8 (bytes % 8 of them) */
    uint64_t bytes;
    unsigned answered;
    enum end end;
};

static inline void drive_word(struct transcript *t, uint64_t w)
{
    t->digest = (t->digest ^ w) * 0x100000001b3ULL;
}

/*
 * Adds reply bytes to the digest a word at a time (a byte at a time cost
 * more than the parsing for ~127 KiB bodies), the words counted from the
 * start of the stream so that the digest does not depend on how the reply
 * bytes were split between calls.
 */
static inline void drive_mix(struct transcript *t, const uint8_t *p, size_t n)
{
    for (; n > 0 && t->bytes % 8 != 0; p++, n--) {
        t->tail = t->tail << 8 | *p;
        if (++t->bytes % 8 == 0) {
            drive_word(t, t->tail);
            t->tail = 0;
        }
    }
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w = 0;

        for (int i = 0; i < 8; i++)
            w = w << 8 | p[i];
        drive_word(t, w);
        t->bytes += 8;
    }
    for (; n > 0; p++, n--) {
        t->tail = t->tail << 8 | *p;
        t->bytes++;
    }
}

/* Calls process() until it stops making progress; returns how the connection goes on. */
static inline enum end drive_drain(const struct server_proto *proto, void *shared,
                                   struct server_io *io, uint8_t *buf, size_t in_cap,
                                   size_t *in_len, struct transcript *t,
                                   void (*check)(const struct server_io *io, size_t r, size_t len))
{
    for (;;) {
        size_t r;

        io->out = NULL;
        io->out_len = 0;
        io->close = false;
        io->answered = 0;
        r = proto->process(shared, io, buf, *in_len);
        check(io, r, *in_len);
        drive_mix(t, io->out, io->out_len);
        t->answered += io->answered;
        if (r == SERVER_PROTO_ERROR) return END_ERROR;
        assert(r <= *in_len);
        memmove(buf, buf + r, *in_len - r);
        *in_len -= r;
        if (io->close) return END_CLOSE;
        if (r == 0 || *in_len == 0) return *in_len == in_cap ? END_FULL : END_DATA;
    }
}

/*
 * The stream data[0..size) served in reads of at most read_size bytes, on a
 * fresh connection (state zeroed, as at accept); check() is the target's own
 * checks of each process() call (its io, what it returned, the len it was
 * given). The buffers are allocated once: a fuzzer runs this millions of times.
 */
static inline void drive_serve(const struct server_proto *proto, void *shared, const uint8_t *data,
                               size_t size, size_t read_size, struct transcript *t,
                               void (*check)(const struct server_io *io, size_t r, size_t len))
{
    static _Alignas(max_align_t) unsigned char state[256];
    static uint8_t *buf, *obuf;
    size_t in_cap = proto->in_cap ? proto->in_cap : SERVER_BUF;
    struct server_io io = { .state = state, .ocap = proto->out_cap };
    size_t in_len = 0, off = 0;

    /* one target, one proto: the sizes never change between calls */
    if (buf == NULL) buf = malloc(in_cap);
    if (obuf == NULL && proto->out_cap > 0) obuf = malloc(proto->out_cap);
    io.obuf = obuf;
    assert(buf != NULL && (obuf != NULL || proto->out_cap == 0));
    assert(proto->conn_size <= sizeof(state));
    memset(state, 0, proto->conn_size);
    memset(t, 0, sizeof(*t));
    while (off < size && t->end == END_DATA) {
        size_t n = size - off;

        if (n > read_size) n = read_size;
        if (n > in_cap - in_len) n = in_cap - in_len;
        memcpy(buf + in_len, data + off, n);
        in_len += n;
        off += n;
        t->end = drive_drain(proto, shared, &io, buf, in_cap, &in_len, t, check);
    }
}

static inline void drive_same(const struct transcript *a, const struct transcript *b)
{
    assert(a->digest == b->digest && a->tail == b->tail && a->bytes == b->bytes);
    assert(a->answered == b->answered);
    assert(a->end == b->end);
}

/*
 * The shared state for body size index k (0..128) of a server whose shared
 * state is read-only after create(): made once per k and kept, since building
 * a reply body of up to ~127 KiB for every input cost more than the parsing.
 */
static inline void *drive_shared_for(const struct server_proto *proto, unsigned k, size_t body_size)
{
    static void *made[129];

    assert(k < 129);
    if (made[k] == NULL) {
        struct server_cfg cfg;

        memset(&cfg, 0, sizeof(cfg));
        cfg.body_size = body_size;
        assert(proto->create(&cfg, &made[k]) == 0 && made[k] != NULL);
    }
    return made[k];
}

/*
 * The fuzz input of a server whose reply has a body (http, fcgi): byte 0
 * picks the read size (1..255, 0 = in_cap), byte 1 the body size (below
 * 128: the short greeting; above, up to ~127 KiB, past obuf too); the rest
 * is the request stream. It is served in in_cap reads and in reads of that
 * size, and the transcripts must be the same.
 */
static inline void drive_with_body(const struct server_proto *proto, const uint8_t *data,
                                   size_t size,
                                   void (*check)(const struct server_io *io, size_t r, size_t len))
{
    size_t in_cap = proto->in_cap ? proto->in_cap : SERVER_BUF, read_size;
    struct transcript a, b;
    void *shared;

    if (size < 2) return;
    read_size = data[0] == 0 ? in_cap : data[0];
    shared = drive_shared_for(proto, data[1] < 128 ? 0 : data[1] - 127u,
                              data[1] < 128 ? 0 : (size_t)(data[1] - 127) * 1021);
    drive_serve(proto, shared, data + 2, size - 2, in_cap, &a, check);
    drive_serve(proto, shared, data + 2, size - 2, read_size, &b, check);
    drive_same(&a, &b);
}

#endif
