/*
 * operr: why an op failed. The kinds every failed op is counted under, their
 * names in tables and JSON, and the errno each comes from. Shared by the
 * connection state machine (conn.c), which classifies, and the load engine
 * and reports, which count and name.
 */
#ifndef HOPBENCH_OPERR_H
#define HOPBENCH_OPERR_H

#include <stdbool.h>
#include <stdint.h>

/* Why an op failed. Every failed op is counted under exactly one kind. */
enum op_err {
    OP_ERR_REFUSED = 0,  /* ECONNREFUSED, ENOENT: nobody listening */
    OP_ERR_RESET,        /* ECONNRESET, EPIPE */
    OP_ERR_TIMEOUT,      /* connect or reply slower than --timeout */
    OP_ERR_ADDRNOTAVAIL, /* EADDRNOTAVAIL: out of ephemeral ports */
    OP_ERR_AGAIN,        /* EAGAIN on AF_UNIX connect: the listener's backlog is full */
    OP_ERR_SHORT,        /* the server closed before the reply was complete */
    OP_ERR_WRONG,        /* the reply differs from what the protocol requires */
    OP_ERR_UNEXPECTED,   /* bytes arrived when no reply was due */
    OP_ERR_TOOBIG,       /* a reply's header, length or body above the codec's cap */
    OP_ERR_STATUS,       /* a well-formed reply with a status outside 2xx (http, fcgi) */
    OP_ERR_ERRREPLY,     /* a protocol error reply: RESP "-ERR", FastCGI protocolStatus != 0 */
    OP_ERR_BODY,         /* a well-formed reply whose body is not --expect-body */
    OP_ERR_FDS,          /* EMFILE, ENFILE: out of file descriptors (process or system limit) */
    OP_ERR_OTHER,        /* any other errno */
    OP_ERR_KINDS
};

/* The bytes of a bad reply kept (struct op_bad): enough to tell what spoke. */
#define OP_BAD_BYTES 32

/*
 * The first reply of a run that the codec refused (wrong, too_big, body,
 * error_reply, a session's set-up refused) or bytes that came when no reply
 * was due (unexpected): its first OP_BAD_BYTES bytes as they came, so that the
 * report can say what answered. Kept once per load thread on the error path
 * only, the earliest of the threads' for the run.
 */
struct op_bad {
    uint64_t t_ns; /* when it came (CLOCK_MONOTONIC); 0: no bad reply */
    enum op_err kind;
    bool from_start; /* bytes[0] is the reply's first byte (else the first of a later read) */
    uint8_t len;     /* bytes kept, at most OP_BAD_BYTES */
    uint8_t bytes[OP_BAD_BYTES];
};

/* "refused", "reset", ... : the names used in tables and JSON; "?" for a value out of range. */
const char *op_err_name(enum op_err e);

/*
 * The failed ops of a count per kind, all kinds together: a connection
 * context's (conn_ctx.errors) or a run's (load_result.errors).
 */
uint64_t op_err_total(const uint64_t counts[OP_ERR_KINDS]);

/* Maps a connect/read/write errno to its kind; OP_ERR_OTHER for any errno not listed above. */
enum op_err op_err_from_errno(int err);

#endif
