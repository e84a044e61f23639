/*
 * fuzz_mysql: the MySQL/MariaDB codec against arbitrary server bytes. Byte 0
 * picks whether the stream starts with the session's set-up (bit 0), a
 * password (bit 1: none or "pencil"), a Unix socket (bit 2), the expected
 * body (bits 3-4: none, "1", "", "abc"), COM_PING (bit 5) and neither
 * server-key option (bit 6; else --get-server-public-key, so that the key a
 * server sends is parsed); byte 1 picks a split point; the rest is what the
 * server sends. session_drive.h reads the two option bytes (bits 2, 5 and 6
 * are read here) and checks that a request
 * fits max_request, the codec.h contract and that the stream fed whole or
 * split gives the same verdicts; here, also that the client writes nothing
 * before the server's greeting.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/mysql.h"
#include "session_drive.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mysql_opts opts;
    struct codec_cfg cfg;
    size_t first;
    bool setup;

    if (size < 2) return 0;
    setup = session_opts(data, &opts, sizeof(opts), &opts.password, &opts.expect_body, &cfg);
    cfg.local = data[0] & 4;
    opts.ping = data[0] & 32;
    opts.get_server_key = !(data[0] & 64);
    first = session_input(&mysql_codec, &cfg, setup, data, size);
    assert(first == 0); /* the server speaks first */
    return 0;
}
