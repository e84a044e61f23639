/*
 * fuzz_http_server: the reference server's http process() against arbitrary
 * request streams, driven the way the frame drives it: bytes arrive in reads
 * of a fuzz-chosen size into an in_cap buffer; process() runs until it makes
 * no progress; consumed bytes are dropped. Byte 0 picks the read size
 * (1..255, 0 = in_cap), byte 1 the reply body size (below 128: "hello\n"). Checks the
 * process() contract (consumed <= len, replies only with answered > 0, an
 * error always has a reply and closes) and that the transcript (every reply
 * byte, the requests answered, how the connection ended) is the same as when
 * the stream arrives in in_cap reads.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum end { END_DATA = 0, END_CLOSE, END_ERROR, END_FULL };

struct transcript {
    uint64_t digest; /* every reply byte, in order */
    uint64_t bytes;
    unsigned answered;
    enum end end;
};

static void mix(struct transcript *t, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        t->digest = (t->digest ^ p[i]) * 0x100000001b3ULL;
    t->bytes += n;
}

/* Calls process() until it stops making progress; returns how the connection goes on. */
static enum end drain(void *shared, struct server_io *io, uint8_t *buf, size_t *in_len,
                      struct transcript *t)
{
    for (;;) {
        size_t r;

        io->out = NULL;
        io->out_len = 0;
        io->close = false;
        io->answered = 0;
        r = server_http.process(shared, io, buf, *in_len);
        mix(t, io->out, io->out_len);
        if (r == SERVER_PROTO_ERROR) {
            assert(io->out_len > 0 && io->answered == 0);
            return END_ERROR;
        }
        assert(r <= *in_len);
        assert((io->out_len > 0) == (io->answered > 0));
        assert(io->out_len == 0 || memcmp(io->out, "HTTP/1.1 200 OK\r\n", 17) == 0);
        t->answered += io->answered;
        memmove(buf, buf + r, *in_len - r);
        *in_len -= r;
        if (io->close) return END_CLOSE;
        if (r == 0) return *in_len == server_http.in_cap ? END_FULL : END_DATA;
    }
}

static void serve(void *shared, const uint8_t *data, size_t size, size_t read_size,
                  struct transcript *t)
{
    static _Alignas(max_align_t) unsigned char state[256];
    static uint8_t *buf, *obuf;
    struct server_io io = { .state = state, .ocap = server_http.out_cap };
    size_t in_len = 0, off = 0;

    /* allocated once: a fuzzer runs this millions of times */
    if (buf == NULL) buf = malloc(server_http.in_cap);
    if (obuf == NULL) obuf = malloc(server_http.out_cap);
    io.obuf = obuf;
    assert(buf != NULL && obuf != NULL && server_http.conn_size <= sizeof(state));
    memset(state, 0, sizeof(state));
    memset(t, 0, sizeof(*t));
    while (off < size && t->end == END_DATA) {
        size_t n = size - off;

        if (n > read_size) n = read_size;
        if (n > server_http.in_cap - in_len) n = server_http.in_cap - in_len;
        memcpy(buf + in_len, data + off, n);
        in_len += n;
        off += n;
        t->end = drain(shared, &io, buf, &in_len, t);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct server_cfg cfg;
    struct transcript a, b;
    void *shared = NULL;
    size_t read_size;

    if (size < 2) return 0;
    memset(&cfg, 0, sizeof(cfg));
    read_size = data[0] == 0 ? server_http.in_cap : data[0];
    /* half the inputs get "hello\n"; the rest up to ~127 KiB, past obuf too */
    cfg.body_size = data[1] < 128 ? 0 : (size_t)(data[1] - 127) * 1021;
    data += 2;
    size -= 2;
    assert(server_http.create(&cfg, &shared) == 0);
    serve(shared, data, size, server_http.in_cap, &a);
    serve(shared, data, size, read_size, &b);
    assert(a.digest == b.digest && a.bytes == b.bytes);
    assert(a.answered == b.answered);
    assert(a.end == b.end);
    server_http.destroy(shared);
    return 0;
}
