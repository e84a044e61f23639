/*
 * fuzz_mysql: the MySQL/MariaDB codec against arbitrary server bytes. Byte 0
 * picks whether the stream starts with the session's set-up (bit 0), a
 * password (bit 1: none or "pencil"), a Unix socket (bit 2), the expected
 * body (bits 3-4: none, "1", "", "abc") and COM_PING (bit 5); byte 1 picks a
 * split point; the rest is what the server sends. session_drive.h checks the
 * codec.h contract and that the stream fed whole or split gives the same
 * verdicts; here, also that a request fits max_request and that the client
 * writes nothing before the server's greeting.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/mysql.h"
#include "session_drive.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const bodies[] = { NULL, "1", "", "abc" };
    _Alignas(max_align_t) uint8_t st[SESSION_STATE_MAX];
    struct codec_opts opts = { 0 };
    struct codec_cfg cfg = { .opts = &opts };
    uint8_t req[256];
    size_t cut, n, first;
    bool setup;

    if (size < 2 || mysql_codec.state_size > sizeof(st)) return 0;
    setup = data[0] & 1;
    opts.password = data[0] & 2 ? "pencil" : NULL;
    cfg.local = data[0] & 4;
    opts.expect_body = bodies[(data[0] >> 3) & 3];
    opts.ping = data[0] & 32;
    cfg.conn_index = data[1];
    mysql_codec.init(st, &cfg);
    n = mysql_codec.encode(st, req, sizeof(req));
    assert(n > 0 && n == mysql_codec.max_request(&cfg));

    cut = data[1];
    data += 2;
    size -= 2;
    cut = size ? cut % (size + 1) : 0;
    session_check(&mysql_codec, &cfg, setup, data, size, cut, &first);
    assert(first == 0); /* the server speaks first */
    return 0;
}
