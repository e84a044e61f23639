/*
 * client: asking a `hopbench agent` (docs/agent.md). One connection per
 * question: the agent's hello, the request with its MAC, the reply; each
 * bounded by the client's timeout and by AGENT_REPLY_MAX. Also the shared
 * token both sides read (a file's first line, or HOPBENCH_AGENT_TOKEN).
 */
#ifndef HOPBENCH_AGENT_CLIENT_H
#define HOPBENCH_AGENT_CLIENT_H

#include <stdatomic.h>
#include <stdint.h>

#include "agent/wire.h"
#include "endpoint.h"
#include "util.h"

#define AGENT_TOKEN_ENV "HOPBENCH_AGENT_TOKEN"

/* The token: AGENT_TOKEN_MIN .. AGENT_TOKEN_MAX bytes, no NUL. */
struct agent_token {
    uint8_t b[AGENT_TOKEN_MAX];
    size_t len;
};

/*
 * The token from path's first line (its newline, and a CR before it, left
 * out), or with path NULL from HOPBENCH_AGENT_TOKEN. A file others may read
 * or write is refused, as a token that is too short or too long. Returns 0
 * or a negative errno with err set (what names it: "--token-file F", ...).
 */
int agent_token_read(struct agent_token *t, const char *path, const char *what, struct hb_err *err);

/*
 * Reads one message from fd (non-blocking) into d by deadline_ns. Returns 0
 * (d->buf[0 .. d->len) is its body), the decoder's -EMSGSIZE or -EBADMSG,
 * -EPROTO for bytes after the message, -ECONNRESET when the peer closed
 * first, -ETIMEDOUT, or read's negative errno.
 */
int agent_recv_msg(int fd, struct agent_dec *d, uint64_t deadline_ns);

/* What run --agent asks with. */
struct agent_client {
    struct endpoint ep;
    struct agent_token token;
    char services[AGENT_ARGS_MAX][AGENT_ARG_MAX]; /* --agent-service words */
    unsigned nservices;
    char state[AGENT_NAME_MAX]; /* --agent-state: the state to wait for, or "" */
    uint64_t wait_ns;           /* --agent-wait: how long to wait for it */
    uint64_t timeout_ns;        /* one question, connect to reply */
};

/*
 * Asks req (its mac is filled here) and reads the reply into rep (release it
 * with agent_reply_release). An error reply is a failure: -EKEYREJECTED when
 * the agent refused the token, -EPROTO when it refused the request as bad or
 * too large, or when its reply broke the protocol, -EIO otherwise (err says
 * the agent's line); -ETIMEDOUT past the timeout; a connect's errno.
 */
int agent_ask(const struct agent_client *c, struct agent_req *req, struct agent_reply *rep,
              struct hb_err *err);

/*
 * Asks for the state every 200 ms until the agent announces c->state:
 * 0, -ETIMEDOUT after c->wait_ns, -EINTR when *stop is set, or agent_ask's
 * error.
 */
int agent_wait_state(const struct agent_client *c, const atomic_int *stop, struct hb_err *err);

#endif
