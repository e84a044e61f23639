/*
 * fuzz_pg: the PostgreSQL codec against arbitrary server bytes. Byte 0 picks
 * whether the stream starts with the session's set-up (bit 0), a password
 * (bit 1: none or "pencil"), the extended protocol (bit 2), the expected
 * body (bits 3-4: none, "1", "", "abc") and the ways of authenticating
 * allowed (bit 5: the default, else every one, so that MD5 and the password
 * in clear are reached); byte 1 picks a split point; the rest is what the
 * server sends. session_drive.h reads the two option bytes (bits 2 and 5
 * are read here) and checks that a request fits max_request, the codec.h
 * contract and that the stream fed whole or split gives the same verdicts;
 * here, also that the StartupMessage is written at once.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/pg.h"
#include "session_drive.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pg_opts opts;
    struct codec_cfg cfg;
    size_t first;
    bool setup;

    if (size < 2) return 0;
    setup = session_opts(data, &opts, sizeof(opts), &opts.password, &opts.expect_body, &cfg);
    opts.extended = data[0] & 4;
    opts.auth_methods =
        data[0] & 32 ? 0
                     : CODEC_AUTH_NONE | CODEC_AUTH_PASSWORD | CODEC_AUTH_MD5 | CODEC_AUTH_SCRAM;
    first = session_input(&pg_codec, &cfg, setup, data, size);
    assert(!setup || first > 0); /* the client speaks first */
    return 0;
}
