/*
 * fcgi: FastCGI 1.0 client codec (RESPONDER role, requestId 1).
 *
 * A request is BEGIN_REQUEST, the PARAMS stream (CGI variables in the order
 * nginx's fastcgi_params sends the ones php-fpm needs, then opts->params),
 * and the STDIN stream (cfg->size bytes of fcgi_pattern_byte for POST, none
 * otherwise). Streams are cut into records of at most FCGI_MAX_CONTENT bytes
 * and end with an empty record; every record is padded to a multiple of 8.
 * The request depends only on the configuration, so it is `fixed`.
 *
 * A reply is STDOUT and STDERR records ending with END_REQUEST, all with
 * requestId 1. STDOUT carries CGI headers, a blank line and the body.
 * feed() streams through it without copying: "Status: NNN" gives msg->status
 * (200 when absent), the body is compared with opts->expect_body as it
 * arrives, STDERR is only counted (saturating). Padding and the reserved
 * bytes are skipped; an empty STDOUT record is not required. Caps:
 * FCGI_MAX_HEADER bytes of CGI headers, FCGI_MAX_BODY bytes of body.
 * On ERROR, *used stops before the byte that showed the error and err_off is
 * the reply offset of the first wrong byte, except for the verdicts taken at
 * END_REQUEST, whose err_off is that record's first byte. Errors:
 *   MISMATCH  version != 1, requestId != 1 (management records included),
 *             a record type other than STDOUT/STDERR/END_REQUEST, an
 *             END_REQUEST whose contentLength is not 8, a malformed Status
 *             header ("Status:" then 3 digits, 100..999, then SP/HT/CR/LF),
 *             STDOUT that has not ended its headers (or no STDOUT) at an
 *             END_REQUEST with REQUEST_COMPLETE, and always eof();
 *   BODY      a body byte differs from expect_body, the body is longer, or
 *             shorter at END_REQUEST;
 *   TOO_BIG   the caps above.
 * A protocolStatus other than REQUEST_COMPLETE is DONE with error_reply set
 * (body bytes that came are still checked, a short body is not an error).
 * msg->status is 0 when no header block ended. appStatus is parsed but not
 * reported: codec_msg has no field for it. msg->closes = !cfg->keep_alive
 * (FCGI_KEEP_CONN unset: the application closes).
 *
 * Request details: a body (and CONTENT_LENGTH, CONTENT_TYPE
 * application/octet-stream) only when opts->method is exactly "POST";
 * opts->params "NAME=VALUE" split at the first '=' (no '=': empty value),
 * appended as given. max_request() is SIZE_MAX for sizes that cannot be
 * encoded, and encode() then returns 0.
 */
#ifndef HOPBENCH_PROTO_FCGI_H
#define HOPBENCH_PROTO_FCGI_H

#include "proto/codec.h"

#define FCGI_VERSION     1
#define FCGI_HEADER_LEN  ((size_t)8)
#define FCGI_MAX_CONTENT 65535u /* contentLength is 16 bits */
#define FCGI_REQUEST_ID  1      /* the client's one request id; 0 is management */
#define FCGI_MAX_HEADER  ((size_t)64 * 1024)
#define FCGI_MAX_BODY    ((uint64_t)1 << 30)

enum fcgi_type {
    FCGI_BEGIN_REQUEST = 1,
    FCGI_ABORT_REQUEST = 2,
    FCGI_END_REQUEST = 3,
    FCGI_PARAMS = 4,
    FCGI_STDIN = 5,
    FCGI_STDOUT = 6,
    FCGI_STDERR = 7,
    FCGI_DATA = 8,
    FCGI_GET_VALUES = 9,
    FCGI_GET_VALUES_RESULT = 10,
    FCGI_UNKNOWN_TYPE = 11,
};

enum fcgi_role { FCGI_RESPONDER = 1, FCGI_AUTHORIZER = 2, FCGI_FILTER = 3 };

enum fcgi_begin_flags { FCGI_KEEP_CONN = 1u << 0 };

enum fcgi_protocol_status {
    FCGI_REQUEST_COMPLETE = 0,
    FCGI_CANT_MPX_CONN = 1,
    FCGI_OVERLOADED = 2,
    FCGI_UNKNOWN_ROLE = 3,
};

/*
 * What the command line says about fcgi's requests (run's options); all zero:
 * the defaults. Strings are NUL-terminated and outlive every codec state.
 */
struct fcgi_opts {
    const char *method;        /* "GET" (default) or "POST" (body = size bytes) */
    const char *path;          /* SCRIPT_NAME and REQUEST_URI, default "/bench" */
    const char *host;          /* taken as http's --host is; FastCGI sends no Host header */
    const char *expect_body;   /* the body must equal this; NULL = not checked */
    const char *script;        /* SCRIPT_FILENAME; default DOCUMENT_ROOT + path */
    const char *docroot;       /* DOCUMENT_ROOT, default "/var/www/html" */
    const char *query;         /* QUERY_STRING, default "" */
    const char *const *params; /* extra "NAME=VALUE" params, in order */
    unsigned nparams;
};

extern const struct codec_ops fcgi_codec;

/*
 * Byte i of the POST body (and of the reference server's body_size reply):
 * the echo codec's pattern, printable and with period 251.
 */
static inline uint8_t fcgi_pattern_byte(size_t i)
{
    return (uint8_t)((i % 251) * 7 + 13);
}

/* Padding that brings contentLength to a multiple of 8. */
static inline uint8_t fcgi_padding(size_t content_len)
{
    return (uint8_t)((8 - content_len % 8) % 8);
}

/* Writes an 8-byte record header at dst. */
static inline void fcgi_put_header(uint8_t *dst, enum fcgi_type type, uint16_t id,
                                   uint16_t content_len, uint8_t padding)
{
    dst[0] = FCGI_VERSION;
    dst[1] = (uint8_t)type;
    dst[2] = (uint8_t)(id >> 8);
    dst[3] = (uint8_t)id;
    dst[4] = (uint8_t)(content_len >> 8);
    dst[5] = (uint8_t)content_len;
    dst[6] = padding;
    dst[7] = 0;
}

/* Writes an END_REQUEST record (16 bytes) at dst. */
static inline void fcgi_put_end_request(uint8_t *dst, uint16_t id, uint32_t app_status,
                                        enum fcgi_protocol_status ps)
{
    fcgi_put_header(dst, FCGI_END_REQUEST, id, 8, 0);
    dst[8] = (uint8_t)(app_status >> 24);
    dst[9] = (uint8_t)(app_status >> 16);
    dst[10] = (uint8_t)(app_status >> 8);
    dst[11] = (uint8_t)app_status;
    dst[12] = (uint8_t)ps;
    dst[13] = dst[14] = dst[15] = 0;
}

#endif
