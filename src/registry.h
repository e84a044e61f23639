/*
 * registry: the one table of protocols. An entry joins a protocol's client
 * codec to its built-in server and says what the command line may ask of it:
 * which request options of `run` it takes, what a size means for it, what the
 * lab's requests are. The command line, `serve`, the lab and the evidence
 * find a protocol here by its name; nothing else branches on a name.
 *
 * Adding a protocol: its codec (proto/) with its fields in struct codec_opts,
 * its server part (server/), an entry in registry.c's table with its options
 * (struct proto_option: name, help and the hook that parses it; a new option
 * also gets a proto_opt bit and a line in registry.c's opts_given), and its
 * name and help in the PROTO_* texts below. The command line builds `run`'s
 * options and their --help lines from the entries; test_registry checks the
 * table and the texts against each other.
 */
#ifndef HOPBENCH_REGISTRY_H
#define HOPBENCH_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/codec.h"
#include "server/server.h"
#include "util.h"

/* The request options of `run` that only some protocols take (one bit each). */
enum proto_opt {
    PROTO_OPT_METHOD = 1u << 0,
    PROTO_OPT_PATH = 1u << 1,
    PROTO_OPT_HOST = 1u << 2,
    PROTO_OPT_SCRIPT = 1u << 3,
    PROTO_OPT_DOCROOT = 1u << 4,
    PROTO_OPT_QUERY = 1u << 5,
    PROTO_OPT_PARAM = 1u << 6,
    PROTO_OPT_COMMAND = 1u << 7,
    PROTO_OPT_KEYS = 1u << 8,
    PROTO_OPT_EXPECT_BODY = 1u << 9,
    PROTO_OPT_SQL = 1u << 10,
    PROTO_OPT_USER = 1u << 11,
    PROTO_OPT_PASSWORD = 1u << 12,
    PROTO_OPT_PASSWORD_FILE = 1u << 13,
    PROTO_OPT_DATABASE = 1u << 14,
    PROTO_OPT_EXTENDED = 1u << 15,
    PROTO_OPT_PING = 1u << 16,
    PROTO_OPT_AUTH_METHOD = 1u << 17,
    PROTO_OPT_SERVER_KEY = 1u << 18,
    PROTO_OPT_GET_SERVER_KEY = 1u << 19,
};

/*
 * Where an option's hook writes: the request options and the room behind the
 * strings they point to (the command line's own).
 */
struct proto_args {
    struct codec_opts *co;
    const char **params; /* --param: room for params_cap */
    unsigned params_cap;
    char *body; /* --expect-body, decoded: room for body_cap bytes */
    size_t body_cap;
    char *secret; /* --password-file: room for the password read, secret_cap bytes */
    size_t secret_cap;
    char *key; /* --server-public-key: room for the PEM read, key_cap bytes */
    size_t key_cap;
};

/*
 * A request option of `run` that some protocols take. An entry lists the
 * options it takes; protocols that take the same option share it (its name
 * means one thing), so its hook parses the value whichever protocol is
 * chosen, and proto_check_run refuses it for the others.
 */
struct proto_option {
    unsigned bit;     /* its enum proto_opt bit */
    const char *name; /* "--method" */
    const char *arg;  /* "M": the value's name in --help; NULL: a flag, with no value */
    /* The --help text beside it; lines after the first indented to column 24. */
    const char *help;
    /* Checks val and fills its part of a->co: 0, or -EINVAL with err set. */
    int (*parse)(const char *val, const struct proto_args *a, struct hb_err *err);
    /*
     * Its value is a secret (a password): main.c overwrites it in the process's
     * own argument memory (/proc/PID/cmdline) and the evidence's command line
     * shows "(hidden)" in its place.
     */
    bool secret;
};

/* What `run`'s command line asks of a protocol, for its entry's check. */
struct proto_req {
    struct codec_opts *co; /* the request options as given */
    size_t *size;          /* --size (or --value-size); set to 0 when the request has no payload */
    bool size_given;
    bool connect;      /* --mode connect */
    unsigned pipeline; /* --pipeline */
};

struct proto_entry {
    const char *name;                  /* on the command line and in the evidence ("proto") */
    const struct codec_ops *codec;     /* the client */
    const struct server_proto *server; /* the built-in server (serve, the lab's child) */
    unsigned opts;                     /* the proto_opt bits `run` accepts */
    /* The options it takes (bits of opts or opts_when), in --help order; NULL ends it. */
    const struct proto_option *const *options;
    /*
     * Bits `run` accepts only as `when` says (redis: --expect-body with
     * --command get); `check` refuses the rest with proto_refuse.
     */
    unsigned opts_when;
    const char *when;
    /* What else `run` requires of the options together; NULL: nothing. 0 or -EINVAL. */
    int (*check)(const struct proto_entry *pe, struct proto_req *req, struct hb_err *err);
    /*
     * Requests `run` makes before each run, not measured (redis: a mix that
     * GETs SETs its keys first): fills *pre with their options and returns
     * how many, sent in turn over one connection from its first key; 0 (or
     * NULL): none.
     */
    uint64_t (*prepare)(const struct codec_opts *co, struct codec_opts *pre);
    /*
     * The server answers with a body of a chosen size (serve --body-size), and
     * the lab's sizes are that reply body: its requests are bodiless GETs.
     * Otherwise a size is the request's payload (echo message, SET value).
     */
    bool reply_body;
    /*
     * The protocol cannot say "close after this reply" (echo has no messages):
     * for lab --close server, its server is told to close once one message of
     * the cell's size was sent (--close-after).
     */
    bool close_after_size;
    struct codec_opts lab_codec; /* the lab's request options */
};

/*
 * The --help texts' lists of protocols, in the table's order (test_registry
 * checks each against the table). They are wrapped and indented to the
 * columns of the text they stand in.
 */
#define PROTO_NAMES           "echo, http, fcgi, redis, pg, mysql" /* proto_names() */
#define PROTO_HELP_NAMES      "echo | http | fcgi | redis | pg | mysql"
#define PROTO_HELP_LAB_OTHERS "http|fcgi|redis" /* lab --proto, but the default */
/* serve: what each built-in server answers */
#define PROTO_HELP_SERVE                                                                           \
    "echo (every byte back), http (200 with a short\n"                                             \
    "body), fcgi (a FastCGI responder answering 'bench'), redis (PING, ECHO, GET, SET, DEL,\n"     \
    "DBSIZE, FLUSHALL, INFO, QUIT, in memory)"
#define PROTO_HELP_REPLY_BODY "http, fcgi" /* serve --body-size: the entries with reply_body */
/* run --size: what the size is the payload of, after "(default 64);" */
#define PROTO_HELP_RUN_SIZE                                                                        \
    " echo:\n"                                                                                     \
    "                        the message; http, fcgi: the POST body; redis: the SET value;\n"      \
    "                        pg, mysql: none (a query has no payload)"
/* lab --proto: the protocols and what the lab's sizes are for each */
#define PROTO_HELP_LAB                                                                             \
    "echo (default), http, fcgi or redis: the built-in server and the\n"                           \
    "                        client speak it; sizes are the echo message, the http and fcgi\n"     \
    "                        reply body, the redis SET value"

/* The entry called `name`, or NULL. */
const struct proto_entry *proto_find(const char *name);

/* The entries in order, `*n` of them. */
const struct proto_entry *proto_entries(size_t *n);

/* The lab's protocol unless --proto says otherwise: the table's first. */
const struct proto_entry *proto_lab_default(void);

/* PROTO_NAMES: every name in the table's order, for messages. */
const char *proto_names(void);

/*
 * Writes into buf the names of the entries for which `pick` is true, joined
 * as a list ("http", "http and fcgi", "echo, http and fcgi"), each followed by
 * " " and its `when` text when `when_bits` holds a bit of its opts_when.
 * Returns buf.
 */
char *proto_list(char *buf, size_t cap, bool (*pick)(const struct proto_entry *pe, unsigned arg),
                 unsigned arg, unsigned when_bits);

/*
 * `run PROTO`'s request options against the entry: an option of another
 * protocol is refused, naming the protocols that take it, then the entry's
 * check runs. Returns 0 or -EINVAL with err set.
 */
int proto_check_run(const struct proto_entry *pe, struct proto_req *req, struct hb_err *err);

/*
 * The i-th of the options the entries take, each once, in the order the
 * entries list them (run --help's order); NULL past the last.
 */
const struct proto_option *proto_option_at(size_t i);

/*
 * Whether the len bytes at name ("--password", without a value) name an
 * option of the entries whose value is a secret (struct proto_option.secret).
 */
bool proto_option_secret(const char *name, size_t len);

/*
 * The words po's hook takes (a list of them, for --auth-method; a mix, for
 * --command), NULL-terminated; NULL when its value is not one of a few.
 */
const char *const *proto_option_values(const struct proto_option *po);

/* "--method" for PROTO_OPT_METHOD...; NULL for a bit that is no option. */
const char *proto_opt_name(unsigned bit);

/* Refuses option `bit` for pe, naming the protocols that take it: -EINVAL with err set. */
int proto_refuse(const struct proto_entry *pe, unsigned bit, struct hb_err *err);

/* The codec of the protocol called `name`, or NULL. */
const struct codec_ops *codec_find(const char *name);

/* The protocol names, "echo, http, fcgi, redis" (proto_names). */
const char *codec_names(void);

#endif
