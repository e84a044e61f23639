/*
 * fuzz_pg: the PostgreSQL codec against arbitrary server bytes. Byte 0 picks
 * whether the stream starts with the session's set-up (bit 0), a password
 * (bit 1: none or "pencil"), the extended protocol (bit 2) and the expected
 * body (bits 3-4: none, "1", "", "abc"); byte 1 picks a split point; the rest
 * is what the server sends. session_drive.h checks the codec.h contract and
 * that the stream fed whole or split gives the same verdicts; here, also that
 * a request fits max_request and the StartupMessage is written at once.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/pg.h"
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

    if (size < 2 || pg_codec.state_size > sizeof(st)) return 0;
    setup = data[0] & 1;
    opts.password = data[0] & 2 ? "pencil" : NULL;
    opts.extended = data[0] & 4;
    opts.expect_body = bodies[(data[0] >> 3) & 3];
    cfg.conn_index = data[1];
    pg_codec.init(st, &cfg);
    n = pg_codec.encode(st, req, sizeof(req));
    assert(n > 0 && n == pg_codec.max_request(&cfg));

    cut = data[1];
    data += 2;
    size -= 2;
    cut = size ? cut % (size + 1) : 0;
    session_check(&pg_codec, &cfg, setup, data, size, cut, &first);
    assert(!setup || first > 0); /* the client speaks first */
    return 0;
}
