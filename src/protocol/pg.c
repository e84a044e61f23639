/*
 * pg: the protocol's entry: the statements (shared with mysql), the log-in
 * and the ways the server may ask for the password, the query protocol,
 * into struct pg_opts. No built-in server: it is measured against
 * PostgreSQL (hopbench stack postgres).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "proto/pg.h"
#include "protocol/shared.h"
#include "registry.h"

/* libpq's require_auth names, and the codec's bit of each. */
static const char *const auth_words[] = { "scram-sha-256", "md5", "password", "none", NULL };
static const unsigned auth_bits[] = { CODEC_AUTH_SCRAM, CODEC_AUTH_MD5, CODEC_AUTH_PASSWORD,
                                      CODEC_AUTH_NONE };

/* --auth-method M[,M...]: libpq's require_auth names, each at most once, into their bits. */
static int parse_auth_method(const char *val, void *at, const struct proto_args *a,
                             struct hb_err *err)
{
    unsigned *dst = at;
    const char *p = val;
    unsigned bits = 0;

    (void)a;
    for (;;) {
        size_t n = strcspn(p, ",");
        unsigned bit = 0;
        char near[96] = "";
        for (size_t i = 0; auth_words[i] != NULL; i++)
            if (n == strlen(auth_words[i]) && strncmp(p, auth_words[i], n) == 0) bit = auth_bits[i];
        if (bit == 0 && n > 0) /* a word of none: the nearest; a word again: none to suggest */
            popt_near_word(p, n, auth_words, ARRAY_LEN(auth_words) - 1, near, sizeof(near));
        if (bit == 0 || (bits & bit) != 0)
            return hb_fail(err, -EINVAL,
                           "--auth-method: '%s' is not a list of scram-sha-256, md5, password "
                           "and none, each once%s",
                           val, near);
        bits |= bit;
        if (p[n] == '\0') break;
        p += n + 1;
    }
    *dst = bits;
    return 0;
}

static const struct proto_option opt_auth_method = {
    "--auth-method",
    "LIST",
    "pg: how the server may ask for the password, a comma list of" HELP_INDENT
    "libpq's require_auth names: scram-sha-256, md5, password (in" HELP_INDENT
    "clear), none (it asks for nothing); on every transport; default" HELP_INDENT
    "scram-sha-256,none: another is refused before the password goes",
    parse_auth_method,
    false,
    auth_words,
};
static const struct proto_option opt_extended = {
    "--extended",
    NULL,
    "pg: the extended query protocol (Parse, Bind, Execute, Sync per" HELP_INDENT
    "request), as pgbench -M extended",
    popt_flag,
    false,
    NULL,
};

static const struct proto_take pg_takes[] = {
    { &popt_sql, offsetof(struct pg_opts, sql), NULL },
    { &popt_user, offsetof(struct pg_opts, user), NULL },
    { &popt_password, offsetof(struct pg_opts, password), NULL },
    { &popt_password_file, offsetof(struct pg_opts, password), NULL },
    { &opt_auth_method, offsetof(struct pg_opts, auth_methods), NULL },
    { &popt_database, offsetof(struct pg_opts, database), NULL },
    { &opt_extended, offsetof(struct pg_opts, extended), NULL },
    { &popt_expect_body, offsetof(struct pg_opts, expect_body), NULL },
    { NULL, 0, NULL },
};

/*
 * A query has no payload of a chosen size; the password comes from
 * --password, --password-file or HOPBENCH_PASSWORD; a new connection per
 * query cannot pipeline.
 */
static int check_pg(const struct proto_entry *pe, struct proto_req *req, struct hb_err *err)
{
    struct pg_opts *o = req->opts;

    if (popt_check_db(pe, req, &o->password, err) < 0) return -EINVAL;
    if (req->pipeline > 1 && req->connect)
        return hb_fail(err, -EINVAL, "run %s: --pipeline needs --mode reuse", pe->name);
    if (o->sql.nsql > 1 && o->expect_body != NULL)
        return hb_fail(err, -EINVAL,
                       "run %s: --expect-body checks one statement's row; give --sql once",
                       pe->name);
    return 0;
}

_Static_assert(sizeof(struct pg_opts) <= CODEC_OPTS_MAX, "pg_opts fits a codec_room");
_Static_assert(PG_MAX_PASSWORD == POPT_MAX_PASSWORD, "--password's limit is PostgreSQL's");

const struct proto_entry proto_pg = {
    .name = "pg",
    .codec = &pg_codec,
    .takes = pg_takes,
    .opts_size = sizeof(struct pg_opts),
    .check = check_pg,
    .size_words = "none (a query has no payload)",
};
