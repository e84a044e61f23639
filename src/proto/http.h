/*
 * http: HTTP/1.1 client codec. The request is fixed (encode once, send many):
 * "METHOD path HTTP/1.1" with Host, "Connection: close" when the connection
 * is not kept (a kept one relies on HTTP/1.1's default), plus a Content-Length
 * body of cfg->size pattern bytes for any method but GET and HEAD. No other
 * field: a GET is "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n", as lean as
 * wrk's, so the server parses nothing a benchmark does not need. The reply parser follows RFC 9112:
 * status line, fields, then the body framed as §6.3 says (none for HEAD/1xx/204/304, chunked,
 * Content-Length, or until the server closes, which the eof op completes). 1xx interim replies are
 * skipped (but 101, a protocol switch never asked for, is a mismatch). A bare LF is accepted as a
 * line end (RFC 9112 §2.2); obs-fold continues the field value. The parser never copies or
 * allocates: a body without --expect-body is skipped by length, O(1) per feed.
 *
 * Caps, beyond which feed() fails with CODEC_ERR_TOO_BIG: HTTP_HEAD_MAX bytes
 * of heads (status lines and fields of the reply, 1xx interim ones included),
 * HTTP_FIELDS_MAX field lines per head, HTTP_BODY_MAX body bytes, and
 * HTTP_CHUNK_LINE_MAX bytes for a chunk-size line (HTTP_CHUNK_DIGITS_MAX hex
 * digits). Trailers have their own HTTP_HEAD_MAX. Anything malformed is
 * CODEC_ERR_MISMATCH; msg->err_off counts from the reply's first byte (its
 * first interim reply, if any). With opts->expect_body the body of a 2xx reply
 * (all chunks together) must equal it: the first differing or extra byte is
 * CODEC_ERR_BODY at that byte, a short body is CODEC_ERR_BODY at the offset
 * where the body ended, reported when the reply completes (by feed, or by eof
 * for a body read until close). Other statuses are not compared: msg->status
 * reports them.
 *
 * On DONE msg->status is the final status (200..599) and msg->closes is set
 * for "Connection: close", HTTP/1.0 without keep-alive, and a body read until
 * close. eof(): DONE (closes) if the reply is read until close; ERROR with
 * CODEC_ERR_MISMATCH at the cut if a reply was in progress; ERROR with
 * CODEC_ERR_NONE if no byte of a reply had arrived (an idle connection
 * closed). eof() and reset() leave the state ready for a new reply.
 */
#ifndef HOPBENCH_PROTO_HTTP_H
#define HOPBENCH_PROTO_HTTP_H

#include "proto/codec.h"

#define HTTP_HEAD_MAX         ((size_t)64 * 1024)
#define HTTP_FIELDS_MAX       256
#define HTTP_BODY_MAX         ((uint64_t)1 << 30)
#define HTTP_CHUNK_LINE_MAX   4096
#define HTTP_CHUNK_DIGITS_MAX 16

/*
 * What the command line says about http's requests (run's options); all zero:
 * the defaults. Strings are NUL-terminated and outlive every codec state.
 */
struct http_opts {
    const char *method;      /* "GET" (default) or "POST" (body = size bytes) */
    const char *path;        /* request target, default "/" */
    const char *host;        /* Host header, default "localhost" */
    const char *expect_body; /* the body must equal this; NULL = not checked */
};

extern const struct codec_ops http_codec;

/* Character classes, shared with the reference server's request parser. */
enum http_char_class {
    HTTP_CC_TCHAR = 1u << 0, /* a token character (RFC 9110 §5.6.2): names, methods */
    HTTP_CC_VCHAR = 1u << 1, /* field-value, reason-phrase: VCHAR, obs-text, SP, HTAB */
};

/* http_cc[c]: the classes of byte c (enum http_char_class bits). */
extern const uint8_t http_cc[256];

/*
 * Byte i of the body pattern, for POST bodies and the reference server's
 * --body-size replies: printable ASCII '!' .. 'y' with period 89 (a prime), so
 * a body shifted by fewer than 89 bytes differs at its first byte.
 */
static inline uint8_t http_pattern_byte(size_t i)
{
    return (uint8_t)('!' + i % 89);
}

#endif
