/*
 * resp: the Redis RESP2 client codec (name "redis").
 *
 * Requests are arrays of bulk strings, by opts->command.cmd (struct resp_opts):
 *   PING  *1\r\n$4\r\nPING\r\n
 *   SET   *3\r\n$3\r\nSET\r\n$<k>\r\nkey:<n>\r\n$<size>\r\n<size x RESP_VALUE_BYTE>\r\n
 *   GET   *2\r\n$3\r\nGET\r\n$<k>\r\nkey:<n>\r\n
 * With a mix (opts->command.len > 0), request number i (per codec state)
 * sends command.mix[i % command.len] instead: SET, GET and PING in turn.
 * <n> cycles through 0 .. keys-1 (opts->keys; 0 means 1), one step per
 * SET or GET, per codec state. Connection i (cfg->conn_index) starts at key
 * (i * stride) mod keys, where stride is the first integer from
 * floor(0.618 * keys) up that is coprime to keys (1 when keys <= 2; keys 10
 * gives 0 7 4 1 8 5 2 9 6 3): up to `keys` connections start at distinct
 * keys, spread over the key space rather than packed at its start.
 * encode() is memcpy/memset work only: the key's digits live in the state and
 * are incremented in place. The bytes differ per request, so `fixed` is false
 * (even for PING: the flag is per codec, not per configuration).
 *
 * Replies: feed() parses one whole RESP2 value (simple +, error -, integer :,
 * bulk $ with $-1 null, array * with *-1 null, nested up to RESP_MAX_DEPTH),
 * then judges it against the command sent:
 *   - an error reply (-...) is CODEC_DONE with msg->error_reply set;
 *   - PING wants +PONG, SET wants +OK, GET wants a bulk string or null;
 *     anything else, once the reply is complete, is CODEC_ERROR / MISMATCH;
 *   - GET with opts->expect_body: the bulk must equal it, else CODEC_ERR_BODY
 *     (a null or a bulk of another length: err_off 1, at the length);
 *   - a mix's GET: the bulk must be cfg->size bytes long, likewise.
 * Replies answer the requests in the order they were encoded; msg->kind
 * says which command a DONE reply answered (enum codec_redis_cmd).
 * A judged reply's err_off is where it first departs from the wanted one, and
 * *used covers the whole reply (it was well-formed). Framing errors are
 * reported at the bad byte with *used up to it: a type byte that is none of
 * the five, a non-digit or missing length, a negative length other than -1,
 * an integer outside int64, a bare LF or a CR not followed by LF
 * (MISMATCH); a line longer than RESP_MAX_LINE, a bulk longer than
 * RESP_MAX_BULK, an array longer than RESP_MAX_ARRAY or nested deeper than
 * RESP_MAX_DEPTH (TOO_BIG). msg->status stays 0. On DONE the whole msg is
 * rewritten. After a judged ERROR the state is ready for the next reply;
 * after a framing ERROR call reset() (or init) before feeding more.
 * Bulk payloads are skipped by length (one memcmp when compared), so a
 * large GET reply costs O(1) per feed call beyond its header.
 *
 * With opts->password, each connection first sends AUTH <password> (setup;
 * a connection without one has no set-up, codec_ops.session): +OK is DONE,
 * an error reply (-WRONGPASS, or -ERR from a server without a password) is
 * CODEC_ERROR with msg->error_reply, anything else MISMATCH (a line longer
 * than RESP_MAX_LINE: TOO_BIG); *used ends at the reply's LF.
 *
 * eof() is always CODEC_ERROR / MISMATCH, err_off = bytes of the cut reply
 * (0 between replies). reset() forgets a partial reply and the requests
 * encoded but not answered (the next reply answers the next request
 * encoded); the key cycle goes on.
 */
#ifndef HOPBENCH_PROTO_RESP_H
#define HOPBENCH_PROTO_RESP_H

#include "proto/codec.h"

#define RESP_MAX_LINE     ((size_t)64 * 1024)           /* bytes before CR in any line */
#define RESP_MAX_BULK     ((uint64_t)512 * 1024 * 1024) /* Redis' proto-max-bulk-len */
#define RESP_MAX_ARRAY    ((uint64_t)UINT32_MAX)        /* elements (hiredis' default) */
#define RESP_MAX_DEPTH    8                             /* arrays open at once */
#define RESP_VALUE_BYTE   'x'                           /* every byte of a SET value */
#define RESP_MAX_PASSWORD 256u                     /* AUTH's password, bytes (--password's limit) */
#define RESP_SETUP_CAP    (RESP_MAX_PASSWORD + 32) /* AUTH's request */

/* The commands the resp codec sends (resp_opts.command's numbers). */
enum codec_redis_cmd { REDIS_PING = 0, REDIS_SET, REDIS_GET };

/*
 * What the command line says about redis's requests (run's options); all
 * zero: PING. Strings are NUL-terminated and outlive every codec state.
 */
struct resp_opts {
    /*
     * PING, SET or GET (enum codec_redis_cmd), or several in turn. A mix's
     * GET wants a value of the size given (its keys were SET before the run).
     */
    struct codec_mix command;
    uint64_t keys;           /* keys cycle through key:0 .. key:(keys-1); 0 = 1 */
    const char *password;    /* AUTH on each connection first; NULL: none */
    const char *expect_body; /* a lone GET: the value must equal this; NULL = not checked */
};

extern const struct codec_ops resp_codec;

#endif
