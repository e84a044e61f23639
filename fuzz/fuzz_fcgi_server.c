/*
 * fuzz_fcgi_server: the reference FastCGI responder's process() against
 * arbitrary record streams, driven the way the frame drives it
 * (server_drive.h). Byte 0 picks the read size (1..255, 0 = in_cap), byte 1
 * the reply body size (below 128: "bench"; above, up to ~127 KiB, past obuf
 * too). Checks the process() contract (consumed <= len), that every reply is
 * whole FastCGI records with one END_REQUEST per request answered, and that
 * the transcript (every reply byte, the requests answered, how the
 * connection ended) is the same as when the stream arrives in in_cap reads.
 */
/* fuzz: also src/server/fcgi.c */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/fcgi.h"
#include "server_drive.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct server_io *io, size_t r, size_t len)
{
    const uint8_t *p = io->out;
    size_t off = 0;
    unsigned ends = 0;

    assert(r == SERVER_PROTO_ERROR || r <= len);
    assert(io->out_len == 0 || p != NULL);
    while (off < io->out_len) {
        size_t clen;

        assert(io->out_len - off >= FCGI_HEADER_LEN);
        assert(p[off] == FCGI_VERSION);
        clen = (size_t)p[off + 4] << 8 | p[off + 5];
        if (p[off + 1] == FCGI_END_REQUEST) {
            assert(clen == 8);
            ends++;
        }
        off += FCGI_HEADER_LEN + clen + p[off + 6];
        assert(off <= io->out_len);
    }
    assert(ends == io->answered);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    drive_with_body(&server_fcgi, data, size, check);
    return 0;
}
