/*
 * registry: the list of protocols. Each protocol is its own files: its codec
 * (proto/NAME.c, with its struct NAME_opts in proto/NAME.h), its built-in
 * server if it has one (server/NAME.c), and its entry (protocol/NAME.c),
 * which ends in one `const struct proto_entry`: the codec and the server,
 * the options `run` takes for it (each parsed into its own struct NAME_opts),
 * what else it checks, the requests before a run, the lab's requests, and
 * the words the --help texts say of it. registry.c lists the entries; the
 * command line, `serve`, the lab and the evidence find a protocol here by
 * its name, and nothing else branches on a name.
 *
 * Adding a protocol: its files, and one line in registry.c's list (and its
 * server in server.h's). run's option table and --help, the refusal of an
 * option another protocol takes, and the --help texts' lists of protocols
 * are made from the entries; test_registry checks them against the list.
 */
#ifndef HOPBENCH_REGISTRY_H
#define HOPBENCH_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/codec.h"
#include "server/server.h"
#include "util.h"

/* The most protocol options one command line may give (--param and --sql repeat). */
#define PROTO_GIVEN_MAX 64

/*
 * Where an option's hook may write besides the protocol's options: the room
 * behind the strings they point to (the command line's own).
 */
struct proto_args {
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
 * A request option of `run` that a protocol takes. Protocols that take an
 * option of the same name may share one (its help names them all) or each
 * have their own (run --help prints each one's help in turn); either way the
 * name means one thing, and `run` refuses it for the protocols that take
 * none of that name.
 */
struct proto_option {
    const char *name; /* "--method" */
    const char *arg;  /* "M": the value's name in --help; NULL: a flag, with no value */
    /* The --help text beside it; lines after the first indented to column 24. */
    const char *help;
    /*
     * Checks val and writes it at `at`, the field of the protocol's options
     * that its proto_take says: 0, or -EINVAL (or -errno) with err set.
     */
    int (*parse)(const char *val, void *at, const struct proto_args *a, struct hb_err *err);
    /*
     * Its value is a secret (a password): main.c overwrites it in the process's
     * own argument memory (/proc/PID/cmdline) and the evidence's command line
     * shows "(hidden)" in its place.
     */
    bool secret;
    /*
     * The words its value is one of (or a list or mix of: --auth-method,
     * --command), NULL-terminated, which `parse` takes and the completion
     * offers; NULL when its value is not one of a few words.
     */
    const char *const *values;
};

/* An option an entry takes, and where in its struct NAME_opts it goes. */
struct proto_take {
    const struct proto_option *opt; /* NULL ends an entry's list */
    size_t at;                      /* offsetof the field its hook writes */
    /*
     * NULL; or the entry takes it only so (redis: --expect-body with
     * "--command get"): its check refuses the rest with proto_refuse, and
     * the list of who takes the option says so.
     */
    const char *when;
};

/* What `run`'s command line asks of a protocol, for its entry's check. */
struct proto_req {
    void *opts;   /* the entry's struct NAME_opts as given */
    size_t *size; /* --size (or --value-size); set to 0 when the request has no payload */
    bool size_given;
    bool connect;      /* --mode connect */
    unsigned pipeline; /* --pipeline */
};

struct proto_entry {
    const char *name;                  /* on the command line and in the evidence ("proto") */
    const struct codec_ops *codec;     /* the client */
    const struct server_proto *server; /* the built-in server (serve, the lab's child), or NULL */
    const struct proto_take *takes;    /* the options it takes, in --help order; NULL: none */
    size_t opts_size;                  /* sizeof its struct NAME_opts (<= CODEC_OPTS_MAX) */
    /* What else `run` requires of the options together; NULL: nothing. 0 or -EINVAL. */
    int (*check)(const struct proto_entry *pe, struct proto_req *req, struct hb_err *err);
    /*
     * Requests `run` makes before each run, not measured (redis: a mix that
     * GETs SETs its keys first): fills *pre (its struct NAME_opts, in room of
     * CODEC_OPTS_MAX bytes) and returns how many, sent in turn over one
     * connection from its first key; 0 (or NULL): none.
     */
    uint64_t (*prepare)(const void *opts, void *pre);
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
    const void *lab_opts; /* the lab's request options (its struct NAME_opts); NULL: all zero */
    /* The words of the --help texts: */
    const char *serve_words; /* serve's PROTO: what its server answers ("every byte back") */
    const char *size_words;  /* run --size: what a size is ("the message", "the POST body") */
    const char *lab_words;   /* lab --proto: what the lab's sizes are ("message", "reply body") */
    bool value_size;         /* run --value-size is its --size (a stored value's size) */
};

/* The entry called `name`, or NULL. */
const struct proto_entry *proto_find(const char *name);

/* The i-th entry in the list's order, or NULL past the last. */
const struct proto_entry *proto_at(size_t i);

/* How many entries there are. */
size_t proto_count(void);

/* The lab's protocol unless --proto says otherwise: the list's first. */
const struct proto_entry *proto_lab_default(void);

/* Every name in the list's order, "echo, http, fcgi, ...", for messages. */
const char *proto_names(void);

/*
 * Writes into buf the names of the entries for which `pick` is true, joined
 * as a list ("http", "http and fcgi", "echo, http and fcgi"), each followed by
 * " " and the `when` of its take of option `opt` (a name) when it has one.
 * Returns buf.
 */
char *proto_list(char *buf, size_t cap, bool (*pick)(const struct proto_entry *pe, const char *arg),
                 const char *arg, const char *opt);

/*
 * The i-th of the names of the options the entries take, each once, in the
 * order the entries list them (run --help's order); NULL past the last. Its
 * first proto_option is proto_option_at(i).
 */
const char *proto_option_name(size_t i);

/*
 * The words the options called proto_option_name(i) take (their `values`),
 * each once, in the entries' order, into out (room for cap); returns how
 * many, 0 when none of them takes one of a few words.
 */
size_t proto_option_values(size_t i, const char **out, size_t cap);

/* The first option called proto_option_name(i), or NULL past the last. */
const struct proto_option *proto_option_at(size_t i);

/*
 * The --help text of the option proto_option_name(i): its help, then the help
 * of each other option of that name an entry takes, on lines of their own.
 */
const char *proto_option_help(size_t i);

/* The take of option `name` in pe's list, or NULL when pe takes none of that name. */
const struct proto_take *proto_takes(const struct proto_entry *pe, const char *name);

/*
 * Whether the len bytes at name ("--password", without a value) name an
 * option of the entries whose value is a secret (struct proto_option.secret).
 */
bool proto_option_secret(const char *name, size_t len);

/* Refuses option `name` for pe, naming the protocols that take it: -EINVAL with err set. */
int proto_refuse(const struct proto_entry *pe, const char *name, struct hb_err *err);

/* A protocol option as the command line gave it: proto_option_name(opt), and its value. */
struct proto_given {
    unsigned opt;
    const char *val;
};

/*
 * Parses the protocol options given, in their order, into opts (pe's struct
 * NAME_opts, zeroed first: room of CODEC_OPTS_MAX bytes). An option that pe
 * takes none of (or pe NULL: its protocol is not known yet) is parsed by the
 * first entry that takes it into scratch, so a bad value is said either way.
 * Returns 0 or a negative errno with err set.
 */
int proto_parse(const struct proto_entry *pe, const struct proto_given *given, size_t n,
                const struct proto_args *a, void *opts, struct hb_err *err);

/*
 * `run PROTO`'s request options against the entry: the first option given
 * (in proto_option_name's order) that pe takes none of is refused, naming
 * the protocols that take it; then the entry's check runs. Returns 0 or
 * -EINVAL with err set.
 */
int proto_check_run(const struct proto_entry *pe, const struct proto_given *given, size_t n,
                    struct proto_req *req, struct hb_err *err);

/*
 * The --help texts' words about the protocols, made from the entries and
 * wrapped to 90 columns: `col` is the column the text begins at, `indent`
 * that of its further lines. A name list ("pg, mysql:") is never broken.
 */
enum proto_help {
    PROTO_HELP_NAMES,      /* "echo | http | ..." */
    PROTO_HELP_LAB_OTHERS, /* "http|fcgi|redis": lab --proto's, but the default */
    PROTO_HELP_SERVE,      /* serve's PROTO: each with a server and what it answers */
    PROTO_HELP_REPLY_BODY, /* serve --body-size: the entries with reply_body, "http, fcgi" */
    PROTO_HELP_RUN_SIZE,   /* run --size: what each size is the payload of */
    PROTO_HELP_LAB,        /* lab --proto: the protocols and what the lab's sizes are */
    PROTO_HELP_VALUE_SIZE, /* run --value-size: the entries with value_size, "redis" */
};

/* Writes text `what` into buf (cap bytes) as the entries make it; returns buf. */
char *proto_help(enum proto_help what, char *buf, size_t cap, unsigned col, unsigned indent);

/* The codec of the protocol called `name`, or NULL. */
const struct codec_ops *codec_find(const char *name);

/* The protocol names (proto_names). */
const char *codec_names(void);

#endif
