/*
 * mysql: the protocol's entry: the statements (shared with pg) or COM_PING,
 * the log-in and the server's RSA key for caching_sha2_password, into
 * struct mysql_opts. No built-in server: it is measured against MariaDB
 * (hopbench stack redis-mariadb).
 */
#include <errno.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "proto/mysql.h"
#include "protocol/shared.h"
#include "registry.h"

/*
 * --server-public-key FILE: an RSA public key in PEM (as mysql's
 * --server-public-key-path), read whole into the command line's room and
 * checked with libcrypto; `at` is the whole struct mysql_opts.
 */
static int parse_server_key(const char *val, void *at, const struct proto_args *a,
                            struct hb_err *err)
{
    struct mysql_opts *o = at;
    FILE *f = fopen(val, "r");
    EVP_PKEY *key = NULL;
    BIO *bio = NULL;
    size_t n;
    int rc = 0;

    if (f == NULL)
        return hb_fail(err, -errno, "--server-public-key: cannot read %s: %s", val,
                       strerror(errno));
    if (a->key == NULL || a->key_cap < MYSQL_MAX_KEY + 1) {
        fclose(f);
        return hb_fail(err, -EINVAL, "--server-public-key: no room for the key");
    }
    n = fread(a->key, 1, MYSQL_MAX_KEY + 1, f);
    fclose(f);
    if (n > MYSQL_MAX_KEY)
        return hb_fail(err, -EINVAL, "--server-public-key: %s is longer than %u bytes", val,
                       MYSQL_MAX_KEY);
    bio = BIO_new_mem_buf(a->key, (int)n);
    key = bio != NULL ? PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL) : NULL;
    if (key == NULL || EVP_PKEY_base_id(key) != EVP_PKEY_RSA)
        rc = hb_fail(err, -EINVAL, "--server-public-key: %s is not an RSA public key in PEM", val);
    EVP_PKEY_free(key);
    BIO_free(bio);
    ERR_clear_error();
    if (rc < 0) return rc;
    o->server_key = a->key;
    o->server_key_len = n;
    return 0;
}

static const struct proto_option opt_server_key = {
    "--server-public-key",
    "FILE",
    "mysql: the server's RSA public key (PEM): a" HELP_INDENT
    "caching_sha2_password full authentication over TCP sends the" HELP_INDENT
    "password encrypted with it",
    parse_server_key,
    false,
    NULL,
};
static const struct proto_option opt_get_server_key = {
    "--get-server-public-key",
    NULL,
    "mysql: for that, the key the server sends (one" HELP_INDENT
    "in its place can then read the password); with neither, a full" HELP_INDENT
    "authentication over TCP is refused",
    popt_flag,
    false,
    NULL,
};
static const struct proto_option opt_ping = {
    "--ping", NULL, "mysql: COM_PING instead of a query", popt_flag, false, NULL,
};

static const struct proto_take mysql_takes[] = {
    { &popt_sql, offsetof(struct mysql_opts, sql), NULL },
    { &popt_user, offsetof(struct mysql_opts, user), NULL },
    { &popt_password, offsetof(struct mysql_opts, password), NULL },
    { &popt_password_file, offsetof(struct mysql_opts, password), NULL },
    { &opt_server_key, 0, NULL },
    { &opt_get_server_key, offsetof(struct mysql_opts, get_server_key), NULL },
    { &popt_database, offsetof(struct mysql_opts, database), NULL },
    { &opt_ping, offsetof(struct mysql_opts, ping), NULL },
    { &popt_expect_body, offsetof(struct mysql_opts, expect_body), NULL },
    { NULL, 0, NULL },
};

/*
 * A query has no payload of a chosen size; the password comes from
 * --password, --password-file or HOPBENCH_PASSWORD; MySQL answers one
 * command at a time (its replies are numbered from the request's).
 */
static int check_mysql(const struct proto_entry *pe, struct proto_req *req, struct hb_err *err)
{
    struct mysql_opts *o = req->opts;

    if (popt_check_db(pe, req, &o->password, err) < 0) return -EINVAL;
    if (req->pipeline > 1)
        return hb_fail(err, -EINVAL, "run %s: --pipeline needs a protocol that pipelines (pg)",
                       pe->name);
    if (o->ping && o->sql.text != NULL)
        return hb_fail(err, -EINVAL, "run %s: --ping sends no query; drop --sql", pe->name);
    if (o->ping && o->expect_body != NULL)
        return hb_fail(err, -EINVAL, "run %s: --ping has no row to expect", pe->name);
    if (o->sql.nsql > 1 && o->expect_body != NULL)
        return hb_fail(err, -EINVAL,
                       "run %s: --expect-body checks one statement's row; give --sql once",
                       pe->name);
    return 0;
}

_Static_assert(sizeof(struct mysql_opts) <= CODEC_OPTS_MAX, "mysql_opts fits a codec_room");

const struct proto_entry proto_mysql = {
    .name = "mysql",
    .codec = &mysql_codec,
    .takes = mysql_takes,
    .opts_size = sizeof(struct mysql_opts),
    .check = check_mysql,
    .size_words = "none (a query has no payload)",
};
