/*
 * codec: the one interface every client protocol speaks (echo, http, fcgi,
 * resp). A codec is a pure function over buffers: it writes a
 * request into caller memory and parses reply bytes incrementally. It never
 * touches a socket, a clock, the heap or a global, so it can be unit-tested
 * and fuzzed in isolation.
 *
 * feed() gives the same verdict however the input is split, one byte at a
 * time included. After CODEC_DONE the state is ready for the next reply, so a
 * pipelined stream is parsed by calling feed() again on the rest.
 */
#ifndef HOPBENCH_PROTO_CODEC_H
#define HOPBENCH_PROTO_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum codec_rc {
    CODEC_NEED_MORE = 0, /* all input used, the reply is not complete */
    CODEC_DONE = 1,      /* one reply complete; *used says where it ended */
    CODEC_ERROR = -1,    /* the reply is wrong; msg->err says how */
};

enum codec_err {
    CODEC_ERR_NONE = 0,
    CODEC_ERR_MISMATCH, /* bytes differ from what the protocol requires (garbage) */
    CODEC_ERR_TOO_BIG,  /* a length, header or body above the codec's cap */
    CODEC_ERR_BODY,     /* a well-formed reply whose body is not --expect-body */
};

/* The kinds of request a codec tells its replies apart by (codec_msg.kind). */
#define CODEC_KINDS 4

/* pg, mysql: the most statements sent in turn (--sql given again), one kind each. */
#define CODEC_SQL_MAX CODEC_KINDS

/* The longest period of an SQL mix (--sql 9:Q1 --sql 1:Q2). */
#define CODEC_SQL_MIX_MAX 100

/* The longest period of a mix of commands (redis --command set:1,get:99). */
#define CODEC_MIX_MAX 100

/*
 * A command sent alone, or several in turn (redis, memcached --command): the
 * protocol's own numbers for them; request n sends mix[n % len]; len 0: cmd
 * alone.
 */
struct codec_mix {
    uint8_t cmd;
    uint8_t mix[CODEC_MIX_MAX];
    unsigned len;
};

/* The command request n sends. */
static inline unsigned codec_mix_pick(const struct codec_mix *m, uint64_t n)
{
    unsigned len = m->len < CODEC_MIX_MAX ? m->len : CODEC_MIX_MAX;

    return len > 0 ? m->mix[n % len] : m->cmd;
}

/* Whether the mix sends cmd (alone, or among others). */
static inline bool codec_mix_has(const struct codec_mix *m, unsigned cmd)
{
    return m->len > 0
               ? memchr(m->mix, (int)cmd, m->len < CODEC_MIX_MAX ? m->len : CODEC_MIX_MAX) != NULL
               : m->cmd == cmd;
}

/*
 * Keys key:0 .. key:(keys-1) cycled through by each connection from its own
 * offset: connection `conn`'s first key, spread by the golden ratio so that
 * connections start far apart whatever their number.
 */
uint64_t codec_key_start(uint64_t keys, unsigned conn);

/*
 * pg, mysql: the statements a request sends (--sql). Strings are
 * NUL-terminated and outlive every codec state.
 */
struct codec_sql {
    const char *text; /* the SQL each request sends; NULL: the codec's default ("SELECT 1") */
    /*
     * The statements given (text is sqls[0]) and the order they go in:
     * request n sends sqls[mix[n % mix_len]], and its reply counts under that
     * index's kind; mix_len 0: text alone.
     */
    const char *sqls[CODEC_SQL_MAX];
    unsigned nsql;
    uint8_t mix[CODEC_SQL_MIX_MAX];
    unsigned mix_len;
};

/*
 * A protocol's request options (proto/NAME.h: struct NAME_opts, what the
 * command line says about its requests) fit in CODEC_OPTS_MAX bytes, so a
 * caller keeps any protocol's in a union codec_room.
 */
#define CODEC_OPTS_MAX 512

union codec_room {
    max_align_t align;
    unsigned char bytes[CODEC_OPTS_MAX];
};

struct codec_cfg {
    size_t size;            /* payload bytes: echo message; http/fcgi POST body; resp value */
    const uint8_t *request; /* echo: the request as encoded, checked against the echo */
    size_t request_len;
    bool keep_alive;     /* reuse mode: ask the server to keep the connection open */
    unsigned conn_index; /* this connection's number, to spread keys across connections */
    uint64_t seed;       /* random per connection: authentication nonces (0 in tests) */
    bool local;          /* the transport is a Unix socket: a password may go in clear */
    /* The protocol's struct NAME_opts (proto/NAME.h); all zero: its defaults. Never NULL. */
    const void *opts;
};

/* What a completed reply said, beyond "it was well-formed". feed() fills it on DONE. */
struct codec_msg {
    enum codec_err err;
    size_t err_off;        /* offset of the first bad byte within the reply */
    unsigned status;       /* http status, fcgi CGI "Status:" (200 when absent); 0 = none */
    bool closes;           /* the server closes the connection after this reply
                            * (http "Connection: close", fcgi without FCGI_KEEP_CONN) */
    bool error_reply;      /* a protocol-level error: a RESP "-ERR", a FastCGI END_REQUEST
                            * whose protocolStatus is not REQUEST_COMPLETE */
    uint32_t stderr_bytes; /* fcgi: FCGI_STDERR bytes in this reply */
    unsigned kind; /* the kind of request it answered (codec_ops.kind_names), < CODEC_KINDS */
    /*
     * setup: the client refused the server's way of authenticating (a
     * password in clear, an MD5 hash, an RSA key of the server's, too many
     * SCRAM iterations): one line saying which and what allows it (a static
     * string), with err MISMATCH. NULL otherwise.
     */
    const char *why;
};

struct codec_ops {
    const char *name;
    size_t state_size; /* bytes of per-connection state the caller provides */
    bool fixed;        /* every request is the same bytes: encode once, send many times */
    /* A fixed codec whose options make its requests differ (NULL: never); see codec_fixed. */
    bool (*varies)(const struct codec_cfg *cfg);
    /*
     * The kinds of request, by codec_msg.kind, for counting replies by kind
     * (resp: "PING", "SET", "GET"); at most CODEC_KINDS, NULL-terminated.
     * NULL: one kind, not told apart.
     */
    const char *const *kind_names;
    size_t (*max_request)(const struct codec_cfg *cfg); /* bytes one request needs */
    void (*init)(void *st, const struct codec_cfg *cfg);
    /* Writes the next request into dst; returns its length, or 0 if cap is too small. */
    size_t (*encode)(void *st, uint8_t *dst, size_t cap);
    /* Parses reply bytes; *used = bytes consumed (all of them unless DONE or ERROR). */
    enum codec_rc (*feed)(void *st, const uint8_t *src, size_t len, size_t *used,
                          struct codec_msg *msg);
    /*
     * The server closed the connection. DONE when that completes a reply read
     * until close (an http body with neither length nor chunks), ERROR otherwise
     * (msg->err = MISMATCH when a reply was cut short). May be NULL: ERROR.
     */
    enum codec_rc (*eof)(void *st, struct codec_msg *msg);
    /* Forgets a partial reply: the next byte fed begins a new one. */
    void (*reset)(void *st);
    /*
     * A session's set-up after each connect (a database's start-up and
     * authentication); NULL when a connection is ready at once. Called first
     * with len 0 (src may be NULL) right after the connect, then with each run
     * of bytes the server sends. Each call may write up to setup_cap bytes to
     * out (*out_len, 0 when none) for the caller to send. NEED_MORE: send
     * them and feed more (when *used < len, call again with the rest once
     * they are sent: each answer comes from one call, however the bytes
     * arrive); DONE: the session is ready (send them first); ERROR: msg says
     * why (error_reply for a refusal such as a wrong password). Bytes after
     * DONE are a protocol error.
     */
    enum codec_rc (*setup)(void *st, const uint8_t *src, size_t len, size_t *used, uint8_t *out,
                           size_t *out_len, struct codec_msg *msg);
    size_t setup_cap;
    /*
     * Whether a connection under cfg has the set-up at all (resp: only with a
     * password, AUTH); NULL: always, when setup is given. Without it the
     * connection is ready at once, as for a codec with no setup.
     */
    bool (*session)(const struct codec_cfg *cfg);
    /* The bytes that end a session politely before the client closes (may be NULL). */
    size_t (*bye)(void *st, uint8_t *dst, size_t cap);
    /*
     * Requests that come round again (NULL: never). cycle(cfg): after how many
     * requests a connection's requests repeat under cfg, 0 when they do not.
     * Then a state init'd for connection 0 encodes, in order, the cycle's
     * entries 0, 1, ... (and on, round again), and a connection whose next
     * request is entry cycle_pos(st) sends the same bytes as those entries from
     * there: the engine sends a table of them and calls advance(st, n) in place
     * of n encode() calls (the state then stands as after them).
     */
    uint64_t (*cycle)(const struct codec_cfg *cfg);
    uint64_t (*cycle_pos)(const void *st);
    void (*advance)(void *st, unsigned n);
};

/* ERROR, msg saying e at reply offset `at` (the first wrong byte). */
static inline enum codec_rc codec_fail(struct codec_msg *msg, enum codec_err e, size_t at)
{
    *msg = (struct codec_msg){ .err = e, .err_off = at };
    return CODEC_ERROR;
}

/*
 * A reply's first departure from the one wanted (a GET's value of another
 * length), kept while the rest of it streams past and said once it ended.
 */
struct codec_verdict {
    enum codec_err err; /* CODEC_ERR_NONE: none yet */
    size_t off;
};

/* Records a departure; only the first one counts. */
static inline void codec_depart(struct codec_verdict *v, enum codec_err e, size_t at)
{
    if (v->err != CODEC_ERR_NONE) return;
    v->err = e;
    v->off = at;
}

/*
 * A reply read a byte at a time (resp, memcached): their feed()'s loop. At
 * each byte, take() counts past what it takes whole (a value's data) and
 * says how many bytes (0 when the parser is not in such a part); else step()
 * judges the byte (a framing error, *err_at where; *done when it ends the
 * reply) and finish() ends the reply after n bytes of this call. *off is the
 * reply's bytes before this call, what each `at` counts from. Inline, with
 * the ops a static const of the codec's: its functions are called directly.
 */
struct codec_bytewise {
    size_t (*take)(void *st, const uint8_t *src, size_t len, size_t at);
    enum codec_err (*step)(void *st, uint8_t c, size_t at, bool *done, size_t *err_at);
    enum codec_rc (*finish)(void *st, size_t n, size_t *used, struct codec_msg *msg);
};

static inline enum codec_rc codec_feed_bytewise(const struct codec_bytewise *b, void *st,
                                                size_t *off, const uint8_t *src, size_t len,
                                                size_t *used, struct codec_msg *msg)
{
    size_t i = 0;

    while (i < len) {
        bool done = false;
        size_t err_at, n = b->take(st, src + i, len - i, *off + i);
        enum codec_err e;

        if (n > 0) {
            i += n;
            continue;
        }
        e = b->step(st, src[i], *off + i, &done, &err_at);
        if (e != CODEC_ERR_NONE) {
            *used = i;
            return codec_fail(msg, e, err_at);
        }
        i++;
        if (done) return b->finish(st, i, used, msg);
    }
    *off += len;
    *used = len;
    return CODEC_NEED_MORE;
}

/* The decimal digits of v. */
size_t codec_dec_len(uint64_t v);

/* v in decimal at dst (room for 20 digits, no NUL); returns the digits written. */
size_t codec_put_dec(char *dst, uint64_t v);

/* Whether a connection under cfg sets up a session before its first request (codec_ops.setup). */
static inline bool codec_session(const struct codec_ops *c, const struct codec_cfg *cfg)
{
    return c->setup != NULL && (c->session == NULL || c->session(cfg));
}

/* Whether every request under cfg is the same bytes: the engine then encodes one per thread. */
static inline bool codec_fixed(const struct codec_ops *c, const struct codec_cfg *cfg)
{
    return c->fixed && (c->varies == NULL || !c->varies(cfg));
}

/*
 * pg, mysql: a random id in a statement. "{id:LO-HI}" in --sql is replaced, in
 * each request, by an integer drawn uniformly from LO..HI (decimal, LO <= HI
 * <= CODEC_SQL_ID_MAX) from the connection's own generator; at most one per
 * statement. A statement without one is sent as written.
 */
#define CODEC_SQL_ID_OPEN   "{id:"
#define CODEC_SQL_ID_MAX    999999999999999999ULL /* 18 digits: fits a bigint */
#define CODEC_SQL_ID_DIGITS 18

struct codec_sql_id {
    size_t at;         /* where the placeholder begins in the statement */
    size_t len;        /* its length; 0: the statement has none */
    uint64_t lo, span; /* the ids drawn: lo .. lo + span - 1 */
};

/* Finds the placeholder of sql in *id (len 0 when none); -EINVAL when one is malformed or doubled.
 */
int codec_sql_id_parse(const char *sql, struct codec_sql_id *id);

/* Writes sql (len bytes) to dst with its placeholder replaced by an id from *rng; returns bytes. */
size_t codec_sql_id_write(const char *sql, size_t len, const struct codec_sql_id *id, uint64_t *rng,
                          uint8_t *dst);

/* A generator's state for a connection: nonzero, distinct per conn_index. */
static inline uint64_t codec_sql_id_seed(const struct codec_cfg *cfg)
{
    return (cfg->seed ^ 0xD1B54A32D192ED03ULL * (cfg->conn_index + 1)) | 1;
}

/*
 * pg, mysql: a mix of statements sends different ones in turn, a statement
 * with a random id different bytes each time (codec_ops.varies); else one.
 */
bool codec_sql_varies(const struct codec_sql *q);

/* pg, mysql: the kinds of an SQL mix, by the order the statements were given. */
extern const char *const codec_sql_kinds[CODEC_SQL_MAX + 1];

/* pg, mysql: the index among o->sqls of the statement request n sends (its kind). */
static inline unsigned codec_sql_pick(const struct codec_sql *o, uint64_t n)
{
    unsigned len = o->mix_len < CODEC_SQL_MIX_MAX ? o->mix_len : CODEC_SQL_MIX_MAX;
    unsigned i = len > 0 ? o->mix[n % len] : 0;

    return i < CODEC_SQL_MAX ? i : 0;
}

/* pg, mysql: statement i, or the only one, or dflt when none was given. */
static inline const char *codec_sql_text(const struct codec_sql *o, unsigned i, const char *dflt)
{
    if (o->mix_len > 0 && i < o->nsql && o->sqls[i] != NULL) return o->sqls[i];
    return o->text != NULL ? o->text : dflt;
}

/* pg, mysql: the longest statement's length, its placeholder's id at its longest. */
size_t codec_sql_max_len(const struct codec_sql *o, const char *dflt);

static inline const char *codec_err_str(enum codec_err e)
{
    switch (e) {
    case CODEC_ERR_BODY:
        return "body";
    case CODEC_ERR_NONE:
        return "none";
    case CODEC_ERR_MISMATCH:
        return "mismatch";
    case CODEC_ERR_TOO_BIG:
        return "too big";
    }
    return "?";
}

#endif
