/*
 * memcached: the memcached text protocol, client side (name "memcached"),
 * as memcached's doc/protocol.txt gives it.
 *
 * Requests: "get key:N\r\n", or "set key:N 0 0 SIZE\r\n" then SIZE bytes of
 * MEMCACHED_VALUE_BYTE and "\r\n" (flags 0, no expiry); one command, or
 * several in turn (memcached_opts.command, request n sending mix[n % len]).
 * Each connection cycles through key:0 .. key:(keys-1) from its own offset
 * (codec_key_start), one key per request.
 *
 * Replies, each judged by the command it answers and counted by it
 * (codec_msg.kind: "get", "set"):
 *   set  STORED is DONE; NOT_STORED, EXISTS, NOT_FOUND are DONE with
 *        error_reply;
 *   get  END (a miss) or "VALUE key:N FLAGS BYTES [CAS]\r\n", BYTES of
 *        data, "\r\n", then END: DONE. The key must be the one asked for
 *        (the replies come in the requests' order). With opts->filled (the
 *        keys were SET before the run) a miss, or a value of another length
 *        than cfg->size, is an error of kind BODY, reported once the reply
 *        ended;
 *   any  ERROR, "CLIENT_ERROR ..." and "SERVER_ERROR ..." are DONE with
 *        error_reply.
 * A line longer than MEMCACHED_MAX_LINE, or a value longer than
 * MEMCACHED_MAX_VALUE, is TOO_BIG; any other line, a byte that breaks the
 * framing (a line without CR before LF, data not followed by CR LF) and
 * eof() are MISMATCH, err_off the reply offset of the line's first byte or
 * of the byte that broke it. The verdict is the same however the reply is
 * split, one byte at a time included.
 */
#ifndef HOPBENCH_PROTO_MEMCACHED_H
#define HOPBENCH_PROTO_MEMCACHED_H

#include "proto/codec.h"

#define MEMCACHED_MAX_LINE   512u                           /* a reply line's bytes before CR */
#define MEMCACHED_MAX_VALUE  ((uint64_t)1024 * 1024 * 1024) /* a value's bytes */
#define MEMCACHED_VALUE_BYTE 'x'                            /* every byte of a SET value */

/* The commands the codec sends (memcached_opts.command's numbers, its kinds). */
enum memcached_cmd { MEMCACHED_GET = 0, MEMCACHED_SET };

/* What the command line says about memcached's requests (run's options); all zero: GET. */
struct memcached_opts {
    struct codec_mix command; /* GET or SET, or both in turn (enum memcached_cmd) */
    uint64_t keys;            /* keys cycle through key:0 .. key:(keys-1); 0 = 1 */
    /*
     * Every key was SET (cfg->size bytes) before the run: a GET must find a
     * value of that size. false: a GET may miss, and any value is good.
     */
    bool filled;
};

extern const struct codec_ops memcached_codec;

#endif
