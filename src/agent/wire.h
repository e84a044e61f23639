/*
 * wire: the agent's control protocol, as bytes (docs/agent.md). Pure: no IO,
 * no clock, no randomness; the agent (agent.c) and the client (client.c) do
 * those.
 *
 * A message is a frame: a 4-byte big-endian length, 1 .. the reader's cap,
 * then that many bytes of one JSON object with a "type". A connection carries
 * the agent's "hello" (a fresh nonce), one request of the client and one
 * reply, then closes: so every connection is bounded in messages as well as
 * in bytes. The request's "mac" is HMAC-SHA256, keyed with the shared token,
 * of the nonce's hex followed by the request's exact body with the mac's 64
 * digits written as '0': it covers every byte the agent parses, with no JSON
 * written again to check it.
 *
 * The frame decoder is incremental (bytes in any split give the same
 * verdict) and refuses a length over its cap as soon as the 4 length bytes
 * are in, before any body is read. The request and reply parsers check every
 * field's type, size and count; what they accept is what the agent and the
 * client act on.
 */
#ifndef HOPBENCH_AGENT_WIRE_H
#define HOPBENCH_AGENT_WIRE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define AGENT_PROTO       2      /* the "proto" of hello; a request names none */
#define AGENT_HDR         4      /* the length prefix */
#define AGENT_REQ_MAX     8192   /* a request's body, bytes: what the agent reads */
#define AGENT_REPLY_MAX   262144 /* a reply's body, bytes: what the client reads */
#define AGENT_NONCE_BYTES 32     /* the hello's nonce, before hex */
#define AGENT_HEX_MAX     64     /* a nonce or a mac in hex */
#define AGENT_ARGS_MAX    8      /* services, and watched endpoints, per begin */
#define AGENT_ARG_MAX     1024   /* one service or endpoint word, with its NUL */
#define AGENT_NAME_MAX    64     /* a schedule state's name, with its NUL */
#define AGENT_ERROR_MAX   240    /* an error reply's line, with its NUL */
#define AGENT_TOKEN_MIN   16     /* bytes of a shared token */
#define AGENT_TOKEN_MAX   1024

/* The frame decoder: feed bytes, get whole message bodies. */
enum agent_dec_rc {
    AGENT_DEC_ERROR = -1, /* d->err: -EMSGSIZE over the cap, -EBADMSG a zero length */
    AGENT_DEC_MORE = 0,   /* every byte used, no whole message yet */
    AGENT_DEC_MSG = 1,    /* d->buf[0 .. d->len) is a body; bytes after it are not used */
};

struct agent_dec {
    uint8_t *buf; /* the caller's, cap bytes */
    size_t cap;
    uint8_t hdr[AGENT_HDR];
    size_t hdr_have;
    size_t len;  /* the body's length, once the header is in */
    size_t have; /* body bytes in buf */
    int err;
};

/* Starts a decoder over buf (cap bytes: the largest body it takes). */
void agent_dec_init(struct agent_dec *d, uint8_t *buf, size_t cap);

/*
 * Feeds len bytes; *used says how many it took. After AGENT_DEC_MSG the body
 * is d->buf[0 .. d->len), and the next feed starts the next message. After
 * AGENT_DEC_ERROR the decoder takes nothing more until agent_dec_init.
 */
enum agent_dec_rc agent_dec_feed(struct agent_dec *d, const uint8_t *data, size_t len,
                                 size_t *used);

/*
 * msg as a frame into out (cap bytes): compact JSON after its length. Returns
 * the frame's length, or -EMSGSIZE when the body would pass body_max or cap,
 * -ENOMEM when msg cannot be dumped.
 */
long agent_frame(const json_t *msg, size_t body_max, uint8_t *out, size_t cap);

/* Bytes to lowercase hex (2 n + 1 bytes into out). */
void agent_hex(const uint8_t *b, size_t n, char *out);

/*
 * HMAC-SHA256 of msg[0 .. n) keyed with token, as 64 hex digits into out
 * (AGENT_HEX_MAX + 1 bytes). Returns 0 or -EIO when libcrypto fails.
 */
int agent_mac(const uint8_t *token, size_t token_len, const uint8_t *msg, size_t n, char *out);

/*
 * Where a request body's mac digits begin: just after its only `"mac":"`,
 * which AGENT_HEX_MAX lowercase hex digits and a '"' follow. Returns the
 * offset, or -EBADMSG when there is no such place or more than one.
 */
long agent_req_mac_at(const uint8_t *body, size_t len);

/*
 * The request's MAC into out (AGENT_HEX_MAX + 1 bytes): agent_mac of nonce's
 * text followed by body[0 .. len) with the digits at agent_req_mac_at written
 * as '0'. Returns 0, -EBADMSG (no mac's place, or len over AGENT_REQ_MAX) or
 * -EIO.
 */
int agent_req_mac(const uint8_t *token, size_t token_len, const char *nonce, const uint8_t *body,
                  size_t len, char *out);

/*
 * Whether the mac a request body holds is agent_req_mac's for token and
 * nonce, compared in constant time (CRYPTO_memcmp over the whole digest).
 */
bool agent_req_mac_ok(const uint8_t *token, size_t token_len, const char *nonce,
                      const uint8_t *body, size_t len);

/* ---- requests (client to agent) ---- */

enum agent_req_type { AGENT_BEGIN = 0, AGENT_END, AGENT_STATE };

struct agent_req {
    enum agent_req_type type;
    char mac[AGENT_HEX_MAX + 1];
    /* begin: --service words (NAME=pid:PID|tree:PID|cgroup:DIR) and --watch endpoints */
    char services[AGENT_ARGS_MAX][AGENT_ARG_MAX];
    unsigned nservices;
    char watch[AGENT_ARGS_MAX][AGENT_ARG_MAX];
    unsigned nwatch;
    /* end: the session begin gave */
    uint64_t session;
};

/*
 * Parses a request body. Returns 0, or -EBADMSG with err saying what is wrong
 * (not JSON, not an object, an unknown type or key, a field of the wrong type
 * or size, too many of a list).
 */
int agent_req_parse(const uint8_t *body, size_t len, struct agent_req *req, struct hb_err *err);

/* The request as JSON, its mac as req->mac says. NULL when out of memory. */
json_t *agent_req_json(const struct agent_req *req);

/*
 * The request as a signed frame into out (cap bytes): its body is
 * agent_req_json's with the mac agent_req_mac gives for token and nonce,
 * which is also written to req->mac. Returns the frame's length, or
 * agent_frame's error, or -EIO.
 */
long agent_req_frame(struct agent_req *req, const uint8_t *token, size_t token_len,
                     const char *nonce, uint8_t *out, size_t cap);

/* ---- replies (agent to client) ---- */

enum agent_reply_type {
    AGENT_HELLO = 0, /* nonce */
    AGENT_BEGUN,     /* session, state */
    AGENT_EVIDENCE,  /* evidence */
    AGENT_STATE_IS,  /* state, index, since_s */
    AGENT_ERROR,     /* code, error */
};

struct agent_reply {
    enum agent_reply_type type;
    char nonce[AGENT_HEX_MAX + 1];
    uint64_t session;
    char state[AGENT_NAME_MAX]; /* "" without a schedule */
    int64_t index;              /* the state's line in the schedule from 0; -1: none */
    double since_s;             /* how long the state has been active */
    char code[32];              /* an error's kind: auth, too_large, bad_request, ... */
    char error[AGENT_ERROR_MAX];
    json_t *evidence; /* AGENT_EVIDENCE: owned; agent_reply_release drops it */
};

/*
 * Parses a reply body. Returns 0, or -EBADMSG with err set. The state name
 * must be a schedule name (agent_name_valid).
 */
int agent_reply_parse(const uint8_t *body, size_t len, struct agent_reply *rep, struct hb_err *err);

void agent_reply_release(struct agent_reply *rep);

/* Whether s is a usable state name: 1 .. AGENT_NAME_MAX - 1 of [A-Za-z0-9_.-]. */
bool agent_name_valid(const char *s);

#endif
