/*
 * pg: the PostgreSQL frontend/backend protocol 3.0, client side (name "pg").
 *
 * Session set-up (codec_ops.setup, after every connect): a StartupMessage
 * (user, database, application_name "hopbench"), then the authentication
 * the server asks for, if opts->auth_methods allows it (by default
 * SCRAM-SHA-256 and none, on every transport, as libpq's require_auth): none
 * (trust), a cleartext password, MD5 ("md5" + hex(md5(hex(md5(password +
 * user)) + salt))) or SCRAM-SHA-256 (RFC 5802/7677, without channel binding:
 * client-first "n,,n=,r=NONCE", the proof from PBKDF2-HMAC-SHA256 over the
 * server's salt and iteration count, at most PG_SCRAM_ITER_MAX, and the
 * server's signature checked in its final message). A way not allowed, or
 * more iterations, is ERROR / MISMATCH with msg->why saying which, before
 * the password is used. Hashing is libcrypto's. ParameterStatus, BackendKeyData and notices are
 * skipped; ReadyForQuery ends the set-up. An ErrorResponse (a wrong password, an unknown database)
 * is ERROR with msg->error_reply set; a method this codec does not speak (GSS, SSPI, Kerberos), a
 * server nonce that does not extend ours or a server signature that does not match is ERROR /
 * MISMATCH.
 *
 * Requests: the simple query protocol, Query ('Q') with opts->sql (default
 * "SELECT 1"); or with opts->extended the extended protocol, Parse (the
 * unnamed statement), Bind, Execute and Sync in one request, so that many
 * can be in flight on one connection (pipelining) and each reply ends at
 * its own ReadyForQuery. The bytes are the same for every request, so the
 * codec is `fixed`: encoded once per thread and sent as they are (encode()
 * reads only the options, never the session).
 *
 * Replies run to ReadyForQuery ('Z'): RowDescription, DataRow, the
 * Parse/Bind completions, CommandComplete, EmptyQueryResponse, NoData,
 * notices, notifications and ParameterStatus are skipped by length (a DataRow
 * is never copied); an ErrorResponse makes the reply DONE with
 * msg->error_reply. With opts->expect_body the first column of the reply's
 * first DataRow must equal it (a NULL, another length or a reply without a
 * row is CODEC_ERR_BODY). A message type the protocol does not define after
 * start-up, a length below 4, or a ReadyForQuery whose length is not 5 is
 * MISMATCH; a message longer than PG_MAX_MESSAGE, or a set-up message longer
 * than PG_MAX_AUTH, is TOO_BIG. feed() gives the same verdict however the
 * bytes are split. eof() is ERROR / MISMATCH. bye() writes Terminate ('X').
 */
#ifndef HOPBENCH_PROTO_PG_H
#define HOPBENCH_PROTO_PG_H

#include "proto/codec.h"

/*
 * pg: the ways a server may have the client prove who it is (--auth-method,
 * libpq's require_auth names), bits of pg_opts.auth_methods; a server
 * that asks for another is refused before any password byte goes out.
 */
enum codec_auth {
    CODEC_AUTH_NONE = 1u << 0,     /* "none": the server asks for nothing (trust) */
    CODEC_AUTH_PASSWORD = 1u << 1, /* "password": the password in clear */
    CODEC_AUTH_MD5 = 1u << 2,      /* "md5": a salted MD5 of it, crackable offline */
    CODEC_AUTH_SCRAM = 1u << 3,    /* "scram-sha-256" */
};

/* What auth_methods 0 means: no password goes out in clear or as a crackable hash. */
#define CODEC_AUTH_DEFAULT (CODEC_AUTH_SCRAM | CODEC_AUTH_NONE)

#define PG_MAX_MESSAGE  ((uint32_t)1 << 30) /* the server's own limit on a message */
#define PG_MAX_AUTH     1024u               /* an authentication request's body */
#define PG_MAX_NAME     63u                 /* user and database (NAMEDATALEN - 1) */
#define PG_MAX_PASSWORD 256u
#define PG_SETUP_CAP    1024u /* the most bytes one set-up step writes */
/*
 * The most SCRAM iterations a server may ask for: 24 times PostgreSQL's
 * default (4096), about 30 ms of PBKDF2 on a 2020s core, which runs on a
 * load thread at each log-in. A plain number: pg.c spells it in a message.
 */
#define PG_SCRAM_ITER_MAX 100000
#define PG_DEFAULT_SQL    "SELECT 1"
#define PG_DEFAULT_USER   "postgres"

/*
 * What the command line says about pg's requests and log-in (run's options);
 * all zero: the defaults. Strings are NUL-terminated and outlive every codec
 * state.
 */
struct pg_opts {
    struct codec_sql sql;    /* default "SELECT 1" */
    const char *user;        /* who logs in, default PG_DEFAULT_USER */
    const char *password;    /* NULL: none (the server must not ask for one) */
    const char *database;    /* NULL: the user's name */
    const char *expect_body; /* the first row's first column must equal this; NULL: not checked */
    bool extended;           /* the extended query protocol (Parse/Bind/Execute/Sync) */
    unsigned auth_methods;   /* enum codec_auth bits allowed; 0: CODEC_AUTH_DEFAULT */
};

extern const struct codec_ops pg_codec;

#endif
