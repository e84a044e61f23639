/*
 * fuzz_http_server: the reference server's http process() against arbitrary
 * request streams, driven the way the frame drives it (server_drive.h). Byte
 * 0 picks the read size (1..255, 0 = in_cap), byte 1 the reply body size
 * (below 128: "hello\n"). Checks the process() contract (consumed <= len,
 * replies only with answered > 0, an error always has a reply and closes)
 * and that the transcript (every reply byte, the requests answered, how the
 * connection ended) is the same as when the stream arrives in in_cap reads.
 */
/* fuzz: also src/server/http.c */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "server_drive.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct server_io *io, size_t r, size_t len)
{
    if (r == SERVER_PROTO_ERROR) {
        assert(io->out_len > 0 && io->answered == 0);
        return;
    }
    assert(r <= len);
    assert((io->out_len > 0) == (io->answered > 0));
    assert(io->out_len == 0 || memcmp(io->out, "HTTP/1.1 200 OK\r\n", 17) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    drive_with_body(&server_http, data, size, check);
    return 0;
}
