/*
 * memcached: the protocol's entry: GET, SET or a mix of them, and the keys,
 * into struct memcached_opts. Whenever GETs are sent, every key is SET once
 * before each run (prepare), so each GET must read a value of --size bytes.
 * The built-in server (server/memcached.c) keeps its items in memory.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "proto/memcached.h"
#include "protocol/shared.h"
#include "registry.h"
#include "server/server.h"

/* The commands' words, each at its number; NULL ends them. */
static const char *const command_words[] = {
    [MEMCACHED_GET] = "get", [MEMCACHED_SET] = "set", NULL
};

static int parse_command(const char *val, void *at, const struct proto_args *a, struct hb_err *err)
{
    (void)a;
    return popt_parse_mix(val, command_words, ARRAY_LEN(command_words) - 1, at, err);
}

static const struct proto_option opt_command = {
    "--command",
    "C",
    "memcached: get (default) or set; or both in turn, each once:" HELP_INDENT
    "set:1,get:9 sends 1 set in 10. Before each run with gets, every" HELP_INDENT
    "key is set once (--size bytes), so each get must find a value of" HELP_INDENT
    "--size bytes (else an error of kind 'body')",
    parse_command,
    false,
    command_words,
};
static const struct proto_option opt_keys = {
    "--keys",
    "N",
    "memcached: keys key:0 .. key:N-1, each connection from its own" HELP_INDENT
    "offset (default 1)",
    popt_parse_keys,
    false,
    NULL,
};

static const struct proto_take memcached_takes[] = {
    { &opt_command, offsetof(struct memcached_opts, command), NULL },
    { &opt_keys, offsetof(struct memcached_opts, keys), NULL },
    { NULL, 0, NULL },
};

/* The requests send GETs: their keys are filled first, and each GET reads --size bytes back. */
static int check_memcached(const struct proto_entry *pe, struct proto_req *req, struct hb_err *err)
{
    struct memcached_opts *o = req->opts;

    (void)pe;
    (void)err;
    o->filled = codec_mix_has(&o->command, MEMCACHED_GET);
    return 0;
}

/* Before each run with GETs: each key SET once, of the run's size. */
static uint64_t prepare_memcached(const void *opts, void *pre)
{
    const struct memcached_opts *o = opts;
    struct memcached_opts *p = pre;

    *p = *o;
    p->filled = false;
    return popt_fill_first(&o->command, MEMCACHED_GET, MEMCACHED_SET, o->keys, &p->command);
}

/* The lab sets values of each size over a thousand keys. */
static const struct memcached_opts lab_opts = { .command = { .cmd = MEMCACHED_SET }, .keys = 1000 };

_Static_assert(sizeof(struct memcached_opts) <= CODEC_OPTS_MAX, "memcached_opts fits a codec_room");

const struct proto_entry proto_memcached = {
    .name = "memcached",
    .codec = &memcached_codec,
    .server = &server_memcached,
    .takes = memcached_takes,
    .opts_size = sizeof(struct memcached_opts),
    .check = check_memcached,
    .prepare = prepare_memcached,
    .lab_opts = &lab_opts,
    .serve_words = "get, set, delete, stats, version, quit, in memory; no authentication",
    .size_words = "the set value",
    .lab_words = "set value",
    .value_size = true,
};
