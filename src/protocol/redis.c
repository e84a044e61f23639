/*
 * redis: the protocol's entry: the commands (PING, SET, GET or a mix), the
 * keys, the password AUTH sends and the value a lone GET must read, into
 * struct resp_opts; a mix that GETs SETs its keys before each run.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "proto/resp.h"
#include "protocol/shared.h"
#include "registry.h"
#include "server/server.h"

/* The commands' words, each at its number; NULL ends them. */
static const char *const command_words[] = {
    [REDIS_PING] = "ping", [REDIS_SET] = "set", [REDIS_GET] = "get", NULL
};

static int parse_command(const char *val, void *at, const struct proto_args *a, struct hb_err *err)
{
    (void)a;
    return popt_parse_mix(val, command_words, ARRAY_LEN(command_words) - 1, at, err);
}

static const struct proto_option opt_command = {
    "--command",
    "C",
    "redis: ping (default), set or get; or several in turn, each" HELP_INDENT
    "once: set,get alternates, set:1,get:9 sends 1 SET in 10. Before" HELP_INDENT
    "each run of a mix with GETs, every key is SET once (--size bytes)," HELP_INDENT
    "so each GET must return a value of --size bytes (else an error of" HELP_INDENT
    "kind 'body'); the size column is that value's size",
    parse_command,
    false,
    command_words,
};
static const struct proto_option opt_keys = {
    "--keys",
    "N",
    "redis: keys key:0 .. key:N-1, each connection from its own" HELP_INDENT "offset (default 1)",
    popt_parse_keys,
    false,
    NULL,
};

static const struct proto_take redis_takes[] = {
    { &opt_command, offsetof(struct resp_opts, command), NULL },
    { &opt_keys, offsetof(struct resp_opts, keys), NULL },
    { &popt_expect_body, offsetof(struct resp_opts, expect_body), "--command get" },
    { &popt_password, offsetof(struct resp_opts, password), NULL },
    { &popt_password_file, offsetof(struct resp_opts, password), NULL },
    { NULL, 0, NULL },
};

/*
 * A PING has no key and no value, a GET no value; only a GET has a body to
 * expect. In a mix the size is the value its SETs write and its GETs read
 * back. A lone GET's size is what --expect-body says its value is.
 */
static int check_redis(const struct proto_entry *pe, struct proto_req *req, struct hb_err *err)
{
    const struct resp_opts *o = req->opts;
    bool mix = o->command.len > 0;

    if (!mix && o->command.cmd == REDIS_PING && (o->keys || req->size_given))
        return hb_fail(err, -EINVAL,
                       "run %s: --keys and --size/--value-size need --command set or get",
                       pe->name);
    if (!mix && o->command.cmd == REDIS_GET && req->size_given)
        return hb_fail(err, -EINVAL,
                       "run %s: a GET sends no value; --size/--value-size is for --command set",
                       pe->name);
    if (o->expect_body && (mix || o->command.cmd != REDIS_GET))
        return proto_refuse(pe, "--expect-body", err);
    if (!mix && o->command.cmd == REDIS_GET)
        *req->size = o->expect_body != NULL ? strlen(o->expect_body) : 0;
    return 0;
}

/* A mix that GETs first SETs each of its keys once, so every GET finds a value. */
static uint64_t prepare_redis(const void *opts, void *pre)
{
    const struct resp_opts *o = opts;
    struct resp_opts *p = pre;

    if (o->command.len == 0) return 0; /* a lone GET reads what the server holds */
    *p = *o;
    p->expect_body = NULL;
    return popt_fill_first(&o->command, REDIS_GET, REDIS_SET, o->keys, &p->command);
}

/* The lab SETs values of each size over a thousand keys. */
static const struct resp_opts lab_opts = { .command = { .cmd = REDIS_SET }, .keys = 1000 };

_Static_assert(sizeof(struct resp_opts) <= CODEC_OPTS_MAX, "resp_opts fits a codec_room");

const struct proto_entry proto_redis = {
    .name = "redis",
    .codec = &resp_codec,
    .server = &server_redis,
    .takes = redis_takes,
    .opts_size = sizeof(struct resp_opts),
    .check = check_redis,
    .prepare = prepare_redis,
    .lab_opts = &lab_opts,
    .serve_words = "PING, ECHO, GET, SET, DEL, DBSIZE, FLUSHALL, INFO, QUIT, in memory",
    .size_words = "the SET value",
    .lab_words = "SET value",
    .value_size = true,
};
