/*
 * registry: the table of protocols and the checks of `run`'s request options
 * against it (see registry.h).
 */
#include "registry.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/echo.h"
#include "proto/fcgi.h"
#include "proto/http.h"
#include "proto/mysql.h"
#include "proto/pg.h"
#include "proto/resp.h"

static const char *const method_words[] = { "GET", "POST", NULL };

static int parse_method(const char *val, const struct proto_args *a, struct hb_err *err)
{
    for (size_t i = 0; method_words[i] != NULL; i++)
        if (strcmp(val, method_words[i]) == 0) {
            a->co->method = method_words[i];
            return 0;
        }
    return hb_fail(err, -EINVAL, "--method: '%s' is not GET or POST", val);
}

static int parse_path(const char *val, const struct proto_args *a, struct hb_err *err)
{
    if (val[0] != '/') return hb_fail(err, -EINVAL, "--path: '%s' does not start with /", val);
    if (strpbrk(val, " \r\n") != NULL)
        return hb_fail(err, -EINVAL, "--path: '%s' holds a space or line break", val);
    a->co->path = val;
    return 0;
}

static int parse_host(const char *val, const struct proto_args *a, struct hb_err *err)
{
    if (val[0] == '\0' || strpbrk(val, " \r\n") != NULL)
        return hb_fail(err, -EINVAL, "--host: '%s' is not a host name", val);
    a->co->host = val;
    return 0;
}

/* --expect-body: the text with \n, \r, \t and \\ decoded, so a shell user can write "hello\n". */
static int parse_expect_body(const char *val, const struct proto_args *a, struct hb_err *err)
{
    size_t n = 0;

    for (const char *p = val; *p != '\0'; p++) {
        char ch = *p;
        if (ch == '\\' && p[1] != '\0') {
            p++;
            ch = *p;
            if (ch == 'n') ch = '\n';
            if (ch == 'r') ch = '\r';
            if (ch == 't') ch = '\t';
        }
        if (n + 1 >= a->body_cap)
            return hb_fail(err, -EINVAL, "--expect-body: longer than %zu bytes", a->body_cap - 1);
        a->body[n++] = ch;
    }
    a->body[n] = '\0';
    a->co->expect_body = a->body;
    return 0;
}

/* An absolute path, for the option called `name`. */
static int absolute(const char *name, const char *val, const char **dst, struct hb_err *err)
{
    if (val[0] != '/') return hb_fail(err, -EINVAL, "%s: '%s' is not an absolute path", name, val);
    *dst = val;
    return 0;
}

static int parse_script(const char *val, const struct proto_args *a, struct hb_err *err)
{
    return absolute("--script", val, &a->co->script, err);
}

static int parse_docroot(const char *val, const struct proto_args *a, struct hb_err *err)
{
    return absolute("--docroot", val, &a->co->docroot, err);
}

static int parse_query(const char *val, const struct proto_args *a, struct hb_err *err)
{
    (void)err;
    a->co->query = val;
    return 0;
}

static int parse_param(const char *val, const struct proto_args *a, struct hb_err *err)
{
    const char *eq = strchr(val, '=');

    if (eq == NULL || eq == val)
        return hb_fail(err, -EINVAL, "--param: '%s' is not NAME=VALUE", val);
    if (a->co->nparams == a->params_cap)
        return hb_fail(err, -EINVAL, "--param: at most %u", a->params_cap);
    a->params[a->co->nparams++] = val;
    a->co->params = a->params;
    return 0;
}

/* "ping", "set" or "get" (the first len bytes of s) as its command: 0, or -1. */
static const char *const redis_words[] = {
    [REDIS_PING] = "ping", [REDIS_SET] = "set", [REDIS_GET] = "get", NULL
};

static int redis_cmd_word(const char *s, size_t len, enum codec_redis_cmd *cmd)
{
    for (size_t i = 0; redis_words[i] != NULL; i++)
        if (strlen(redis_words[i]) == len && strncmp(s, redis_words[i], len) == 0) {
            *cmd = (enum codec_redis_cmd)i;
            return 0;
        }
    return -1;
}

/*
 * A mix's period: `weights[i]` of ids[i] in each, each next one the id
 * furthest behind its share (a smooth weighted round robin), the first given
 * on a tie, so two of weight 1 alternate from the first and 1:9 spreads the
 * one among the nine. n is at most CODEC_KINDS.
 */
static void mix_build(uint8_t *mix, unsigned *mix_len, const uint8_t *ids, const unsigned *weights,
                      size_t n, unsigned total)
{
    int cur[CODEC_KINDS] = { 0 };

    for (unsigned k = 0; k < total; k++) {
        size_t best = 0;
        for (size_t i = 0; i < n; i++) {
            cur[i] += (int)weights[i];
            if (cur[i] > cur[best]) best = i;
        }
        cur[best] -= (int)total;
        mix[k] = ids[best];
    }
    *mix_len = total;
}

/*
 * --command C: ping, set or get; or several in turn, "set,get", each perhaps
 * with its share, "set:1,get:9" (the shares' sum at most CODEC_REDIS_MIX_MAX).
 */
static int parse_command(const char *val, const struct proto_args *a, struct hb_err *err)
{
    enum codec_redis_cmd cmds[3];
    uint8_t ids[3];
    unsigned weights[3], total = 0;
    size_t n = 0;
    const char *p = val;

    if (strpbrk(val, ",:") == NULL) {
        if (redis_cmd_word(val, strlen(val), &cmds[0]) < 0)
            return hb_fail(err, -EINVAL, "--command: '%s' is not ping, set or get", val);
        a->co->redis_cmd = cmds[0];
        a->co->redis_mix_len = 0;
        return 0;
    }
    for (;;) {
        size_t len = strcspn(p, ",:");
        uint64_t w = 1;
        char num[8];

        if (n == ARRAY_LEN(cmds) || redis_cmd_word(p, len, &cmds[n]) < 0) goto bad;
        for (size_t i = 0; i < n; i++)
            if (cmds[i] == cmds[n]) goto bad;
        p += len;
        if (*p == ':') {
            len = strcspn(++p, ",");
            if (len == 0 || len >= sizeof(num)) goto bad;
            memcpy(num, p, len);
            num[len] = '\0';
            if (parse_u64(num, 1, CODEC_REDIS_MIX_MAX, &w) < 0) goto bad;
            p += len;
        }
        weights[n++] = (unsigned)w;
        total += (unsigned)w;
        if (*p == '\0') break;
        p++; /* the ',' */
    }
    if (total > CODEC_REDIS_MIX_MAX)
        return hb_fail(err, -EINVAL, "--command: the shares of '%s' add up to more than %d", val,
                       CODEC_REDIS_MIX_MAX);
    a->co->redis_cmd = cmds[0];
    a->co->redis_mix_len = 0;
    for (size_t i = 0; i < n; i++)
        ids[i] = (uint8_t)cmds[i];
    if (n > 1) mix_build(a->co->redis_mix, &a->co->redis_mix_len, ids, weights, n, total);
    return 0;
bad:
    return hb_fail(err, -EINVAL,
                   "--command: '%s' is not ping, set and get in turn, each once and perhaps with "
                   "its share (e.g. set,get or set:1,get:9)",
                   val);
}

static int parse_keys(const char *val, const struct proto_args *a, struct hb_err *err)
{
    return opt_uint("--keys", val, 1, 1000000000, &a->co->keys, err);
}

/* Continuation lines of an option's help begin at column 24. */
#define HELP_INDENT "\n                        "

static const struct proto_option opt_method = {
    PROTO_OPT_METHOD, "--method", "M", "http, fcgi: GET (default) or POST (a --size byte body)",
    parse_method,     false,
};
static const struct proto_option opt_path = {
    PROTO_OPT_PATH,
    "--path",
    "P",
    "http: the request target (default /); fcgi: SCRIPT_NAME and" HELP_INDENT
    "REQUEST_URI (default /bench; php-fpm's ping.path, e.g. /ping," HELP_INDENT "runs no PHP)",
    parse_path,
    false,
};
static const struct proto_option opt_host = {
    PROTO_OPT_HOST, "--host", "H", "http: the Host header (default localhost)", parse_host, false,
};
static const struct proto_option opt_expect_body = {
    PROTO_OPT_EXPECT_BODY,
    "--expect-body",
    "T",
    "http, fcgi, redis --command get: the body must be T; pg, mysql:" HELP_INDENT
    "the first row's first column (\\n, \\r, \\t and \\\\ are decoded); else" HELP_INDENT
    "an error of kind 'body'",
    parse_expect_body,
    false,
};
static const struct proto_option opt_script = {
    PROTO_OPT_SCRIPT, "--script", "FILE", "fcgi: SCRIPT_FILENAME (default DOCROOT + PATH)",
    parse_script,     false,
};
static const struct proto_option opt_docroot = {
    PROTO_OPT_DOCROOT, "--docroot", "DIR", "fcgi: DOCUMENT_ROOT (default /var/www/html)",
    parse_docroot,     false,
};
static const struct proto_option opt_query = {
    PROTO_OPT_QUERY, "--query", "QS", "fcgi: QUERY_STRING (default empty)", parse_query, false,
};
static const struct proto_option opt_param = {
    PROTO_OPT_PARAM, "--param", "NAME=VAL", "fcgi: one more parameter; repeat for several",
    parse_param,     false,
};
static const struct proto_option opt_command = {
    PROTO_OPT_COMMAND,
    "--command",
    "C",
    "redis: ping (default), set or get; or several in turn, each" HELP_INDENT
    "once: set,get alternates, set:1,get:9 sends 1 SET in 10. Before" HELP_INDENT
    "each run of a mix with GETs, every key is SET once (--size bytes)," HELP_INDENT
    "so each GET must return a value of --size bytes (else an error of" HELP_INDENT
    "kind 'body'); the size column is that value's size",
    parse_command,
    false,
};
static const struct proto_option opt_keys = {
    PROTO_OPT_KEYS,
    "--keys",
    "N",
    "redis: keys key:0 .. key:N-1, each connection from its own" HELP_INDENT "offset (default 1)",
    parse_keys,
    false,
};

/* ---- the databases: pg, mysql ---- */

/*
 * --sql [N:]Q: the statement; given again, the statements go in turn, each N
 * times in each period (default 1): the shares of those given so far are
 * read back from the mix, which is built again with the new one.
 */
static int parse_sql(const char *val, const struct proto_args *a, struct hb_err *err)
{
    static const uint8_t ids[CODEC_SQL_MAX] = { 0, 1, 2, 3 };
    struct codec_opts *co = a->co;
    unsigned weights[CODEC_SQL_MAX] = { 0 }, total = 0;
    size_t digits = strspn(val, "0123456789");
    const char *q = val;
    uint64_t w = 1;
    struct codec_sql_id id;

    if (digits > 0 && val[digits] == ':') {
        char num[8];
        if (digits >= sizeof(num)) digits = sizeof(num) - 1; /* then out of range below */
        memcpy(num, val, digits);
        num[digits] = '\0';
        if (parse_u64(num, 1, CODEC_SQL_MIX_MAX, &w) < 0)
            return hb_fail(err, -EINVAL, "--sql: the share in '%.20s...' is not 1 to %d", val,
                           CODEC_SQL_MIX_MAX);
        q = strchr(val, ':') + 1;
    }
    if (q[0] == '\0') return hb_fail(err, -EINVAL, "--sql: empty");
    if (codec_sql_id_parse(q, &id) < 0)
        return hb_fail(err, -EINVAL,
                       "--sql: a random id is {id:LO-HI}, LO <= HI, at most %d digits, once in a "
                       "statement: '%.40s'",
                       CODEC_SQL_ID_DIGITS, q);
    if (co->nsql == CODEC_SQL_MAX)
        return hb_fail(err, -EINVAL, "--sql: at most %d statements", CODEC_SQL_MAX);
    for (unsigned k = 0; k < co->sql_mix_len; k++)
        weights[co->sql_mix[k]]++;
    weights[co->nsql] = (unsigned)w;
    co->sqls[co->nsql++] = q;
    for (unsigned i = 0; i < co->nsql; i++)
        total += weights[i];
    if (total > CODEC_SQL_MIX_MAX)
        return hb_fail(err, -EINVAL, "--sql: the shares add up to more than %d", CODEC_SQL_MIX_MAX);
    mix_build(co->sql_mix, &co->sql_mix_len, ids, weights, co->nsql, total);
    co->sql = co->sqls[0];
    return 0;
}

/* A user or database name: 1 to 63 bytes (PostgreSQL's limit, below MySQL's), no NUL. */
static int db_name(const char *opt, const char *val, const char **out, struct hb_err *err)
{
    if (val[0] == '\0' || strlen(val) > PG_MAX_NAME)
        return hb_fail(err, -EINVAL, "%s: '%s' is not 1 to %u bytes", opt, val, PG_MAX_NAME);
    *out = val;
    return 0;
}

static int parse_user(const char *val, const struct proto_args *a, struct hb_err *err)
{
    return db_name("--user", val, &a->co->user, err);
}

static int parse_database(const char *val, const struct proto_args *a, struct hb_err *err)
{
    return db_name("--database", val, &a->co->database, err);
}

static int password_ok(const char *opt, const char *pw, struct hb_err *err)
{
    if (strlen(pw) > PG_MAX_PASSWORD)
        return hb_fail(err, -EINVAL, "%s: longer than %u bytes", opt, PG_MAX_PASSWORD);
    return 0;
}

static int parse_password(const char *val, const struct proto_args *a, struct hb_err *err)
{
    a->co->password = val;
    return password_ok("--password", val, err);
}

/*
 * --password-file: its first line (without the line end) is the password,
 * kept for the whole process (it is the run's); the file's name is what the
 * evidence's command line shows. A file its group or others may read or
 * write is refused, as the agent refuses such a token file: the password in
 * it is not a secret (a pipe, <(...), is its owner's only).
 */
static int parse_password_file(const char *val, const struct proto_args *a, struct hb_err *err)
{
    int fd = open(val, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    FILE *f;
    size_t n;

    if (fd == -1)
        return hb_fail(err, -errno, "--password-file: cannot read %s: %s", val, strerror(errno));
    if (fstat(fd, &st) == 0 && (st.st_mode & 077) != 0) {
        close(fd);
        return hb_fail(err, -EPERM,
                       "--password-file: %s may be read or written by its group or others "
                       "(mode %04o): chmod 600 it",
                       val, (unsigned)(st.st_mode & 07777));
    }
    f = fdopen(fd, "r");
    if (f == NULL) {
        close(fd);
        return hb_fail(err, -ENOMEM, "--password-file: out of memory");
    }
    if (a->secret == NULL || a->secret_cap < PG_MAX_PASSWORD + 2) {
        fclose(f);
        return hb_fail(err, -EINVAL, "--password-file: no room for the password");
    }
    memset(a->secret, 0, a->secret_cap);
    n = fread(a->secret, 1, a->secret_cap - 1, f);
    fclose(f);
    a->secret[strcspn(a->secret, "\r\n")] = '\0';
    if (n > PG_MAX_PASSWORD && strlen(a->secret) > PG_MAX_PASSWORD)
        return hb_fail(err, -EINVAL, "--password-file: longer than %u bytes", PG_MAX_PASSWORD);
    a->co->password = a->secret;
    return 0;
}

static int parse_extended(const char *val, const struct proto_args *a, struct hb_err *err)
{
    (void)val;
    (void)err;
    a->co->extended = true;
    return 0;
}

static int parse_ping(const char *val, const struct proto_args *a, struct hb_err *err)
{
    (void)val;
    (void)err;
    a->co->ping = true;
    return 0;
}

/* libpq's require_auth names, and the codec's bit of each. */
static const char *const auth_words[] = { "scram-sha-256", "md5", "password", "none", NULL };
static const unsigned auth_bits[] = { CODEC_AUTH_SCRAM, CODEC_AUTH_MD5, CODEC_AUTH_PASSWORD,
                                      CODEC_AUTH_NONE };

/* --auth-method M[,M...]: libpq's require_auth names, each at most once, into auth_methods. */
static int parse_auth_method(const char *val, const struct proto_args *a, struct hb_err *err)
{
    const char *p = val;
    unsigned bits = 0;

    for (;;) {
        size_t n = strcspn(p, ",");
        unsigned bit = 0;
        for (size_t i = 0; auth_words[i] != NULL; i++)
            if (n == strlen(auth_words[i]) && strncmp(p, auth_words[i], n) == 0) bit = auth_bits[i];
        if (bit == 0 || (bits & bit) != 0)
            return hb_fail(err, -EINVAL,
                           "--auth-method: '%s' is not a list of scram-sha-256, md5, password "
                           "and none, each once",
                           val);
        bits |= bit;
        if (p[n] == '\0') break;
        p += n + 1;
    }
    a->co->auth_methods = bits;
    return 0;
}

/*
 * --server-public-key FILE: an RSA public key in PEM (as mysql's
 * --server-public-key-path), read whole into the command line's room and
 * checked with libcrypto.
 */
static int parse_server_key(const char *val, const struct proto_args *a, struct hb_err *err)
{
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
    a->co->server_key = a->key;
    a->co->server_key_len = n;
    return 0;
}

static int parse_get_server_key(const char *val, const struct proto_args *a, struct hb_err *err)
{
    (void)val;
    (void)err;
    a->co->get_server_key = true;
    return 0;
}

static const struct proto_option opt_sql = {
    PROTO_OPT_SQL,
    "--sql",
    "Q",
    "pg, mysql: the SQL of every request (default SELECT 1); given" HELP_INDENT
    "again (at most 4), the statements go in turn, each N times in" HELP_INDENT
    "each period when written N:Q (--sql 4:Q1 --sql 1:Q2: 1 Q2 in 5)," HELP_INDENT
    "their replies counted apart (sql1, sql2 ...); {id:LO-HI} in Q" HELP_INDENT
    "is a random id from LO to HI (uniform), drawn for each request",
    parse_sql,
    false,
};
static const struct proto_option opt_user = {
    PROTO_OPT_USER, "--user", "U", "pg, mysql: who logs in (default postgres; root)",
    parse_user,     false,
};
static const struct proto_option opt_password = {
    PROTO_OPT_PASSWORD,
    "--password",
    "P",
    "pg, mysql, redis: the password, shown as (hidden) in the evidence;" HELP_INDENT
    "ps and /proc/PID/cmdline show it for the first moments, until it" HELP_INDENT
    "is overwritten: --password-file or HOPBENCH_PASSWORD in the" HELP_INDENT
    "environment (pg, mysql) is the safe way; redis sends it with AUTH" HELP_INDENT
    "on each connection first",
    parse_password,
    true,
};
static const struct proto_option opt_password_file = {
    PROTO_OPT_PASSWORD_FILE,
    "--password-file",
    "FILE",
    "pg, mysql, redis: the password is FILE's first line (a FILE its" HELP_INDENT
    "group or others may read or write is refused)",
    parse_password_file,
    false,
};
static const struct proto_option opt_database = {
    PROTO_OPT_DATABASE,
    "--database",
    "D",
    "pg, mysql: the database (default: pg the user's name; mysql none)",
    parse_database,
    false,
};
static const struct proto_option opt_extended = {
    PROTO_OPT_EXTENDED,
    "--extended",
    NULL,
    "pg: the extended query protocol (Parse, Bind, Execute, Sync per" HELP_INDENT
    "request), as pgbench -M extended",
    parse_extended,
    false,
};
static const struct proto_option opt_ping = {
    PROTO_OPT_PING, "--ping", NULL, "mysql: COM_PING instead of a query", parse_ping, false,
};
static const struct proto_option opt_auth_method = {
    PROTO_OPT_AUTH_METHOD,
    "--auth-method",
    "LIST",
    "pg: how the server may ask for the password, a comma list of" HELP_INDENT
    "libpq's require_auth names: scram-sha-256, md5, password (in" HELP_INDENT
    "clear), none (it asks for nothing); on every transport; default" HELP_INDENT
    "scram-sha-256,none: another is refused before the password goes",
    parse_auth_method,
    false,
};
static const struct proto_option opt_server_key = {
    PROTO_OPT_SERVER_KEY,
    "--server-public-key",
    "FILE",
    "mysql: the server's RSA public key (PEM): a" HELP_INDENT
    "caching_sha2_password full authentication over TCP sends the" HELP_INDENT
    "password encrypted with it",
    parse_server_key,
    false,
};
static const struct proto_option opt_get_server_key = {
    PROTO_OPT_GET_SERVER_KEY,
    "--get-server-public-key",
    NULL,
    "mysql: for that, the key the server sends (one" HELP_INDENT
    "in its place can then read the password); with neither, a full" HELP_INDENT
    "authentication over TCP is refused",
    parse_get_server_key,
    false,
};

static const struct proto_option *const http_options[] = {
    &opt_method, &opt_path, &opt_host, &opt_expect_body, NULL,
};
static const struct proto_option *const fcgi_options[] = {
    &opt_method, &opt_path,  &opt_host, &opt_expect_body, &opt_script, &opt_docroot,
    &opt_query,  &opt_param, NULL,
};
static const struct proto_option *const redis_options[] = {
    &opt_command, &opt_keys, &opt_expect_body, &opt_password, &opt_password_file, NULL,
};
static const struct proto_option *const pg_options[] = {
    &opt_sql,           &opt_user,        &opt_password,
    &opt_password_file, &opt_auth_method, &opt_database,
    &opt_extended,      &opt_expect_body, NULL,
};
static const struct proto_option *const mysql_options[] = {
    &opt_sql,         &opt_user,
    &opt_password,    &opt_password_file,
    &opt_server_key,  &opt_get_server_key,
    &opt_database,    &opt_ping,
    &opt_expect_body, NULL,
};

/* http and fcgi: a GET carries no payload, and a connect-mode request asks for a close. */
static int check_get_post(const struct proto_entry *pe, struct proto_req *req, struct hb_err *err)
{
    bool post = req->co->method != NULL && strcmp(req->co->method, "POST") == 0;

    if (!post) {
        if (req->size_given)
            return hb_fail(err, -EINVAL, "run %s: --size is the body of a POST; add --method POST",
                           pe->name);
        *req->size = 0;
    }
    if (req->connect && req->pipeline > 1)
        return hb_fail(
            err, -EINVAL,
            "run %s: --pipeline needs --mode reuse (connect mode closes after one reply)",
            pe->name);
    return 0;
}

/* Does the request options' redis mix send cmd? */
static bool redis_mix_has(const struct codec_opts *co, enum codec_redis_cmd cmd)
{
    return co->redis_mix_len > 0 && memchr(co->redis_mix, (int)cmd, co->redis_mix_len) != NULL;
}

/*
 * redis: a PING has no key and no value, a GET no value; only a GET has a
 * body to expect. In a mix the size is the value its SETs write and its GETs
 * read back. A lone GET's size is what --expect-body says its value is.
 */
static int check_redis(const struct proto_entry *pe, struct proto_req *req, struct hb_err *err)
{
    const struct codec_opts *co = req->co;
    bool mix = co->redis_mix_len > 0;

    if (!mix && co->redis_cmd == REDIS_PING && (co->keys || req->size_given))
        return hb_fail(err, -EINVAL,
                       "run %s: --keys and --size/--value-size need --command set or get",
                       pe->name);
    if (!mix && co->redis_cmd == REDIS_GET && req->size_given)
        return hb_fail(err, -EINVAL,
                       "run %s: a GET sends no value; --size/--value-size is for --command set",
                       pe->name);
    if (co->expect_body && (mix || co->redis_cmd != REDIS_GET))
        return proto_refuse(pe, PROTO_OPT_EXPECT_BODY, err);
    if (!mix && co->redis_cmd == REDIS_GET)
        *req->size = co->expect_body != NULL ? strlen(co->expect_body) : 0;
    return 0;
}

/*
 * pg, mysql: a query has no payload of a chosen size; the password comes from
 * --password, --password-file or HOPBENCH_PASSWORD; MySQL answers one
 * command at a time (its replies are numbered from the request's), and a
 * new connection per query cannot pipeline.
 */
static int check_db(const struct proto_entry *pe, struct proto_req *req, struct hb_err *err)
{
    struct codec_opts *co = req->co;
    const char *env = getenv("HOPBENCH_PASSWORD");

    if (req->size_given)
        return hb_fail(err, -EINVAL, "run %s: a query has no payload; --size does not apply",
                       pe->name);
    *req->size = 0;
    if (co->password == NULL && env != NULL && env[0] != '\0') {
        if (password_ok("HOPBENCH_PASSWORD", env, err) < 0) return -EINVAL;
        co->password = env;
    }
    if (req->pipeline > 1 && (req->connect || pe->codec == &mysql_codec))
        return hb_fail(err, -EINVAL, "run %s: --pipeline needs %s", pe->name,
                       pe->codec == &mysql_codec ? "a protocol that pipelines (pg)"
                                                 : "--mode reuse");
    if (co->ping && co->sql != NULL)
        return hb_fail(err, -EINVAL, "run %s: --ping sends no query; drop --sql", pe->name);
    if (co->ping && co->expect_body != NULL)
        return hb_fail(err, -EINVAL, "run %s: --ping has no row to expect", pe->name);
    if (co->nsql > 1 && co->expect_body != NULL)
        return hb_fail(err, -EINVAL,
                       "run %s: --expect-body checks one statement's row; give --sql once",
                       pe->name);
    return 0;
}

/* redis: a mix that GETs first SETs each of its keys once, so every GET finds a value. */
static uint64_t prepare_redis(const struct codec_opts *co, struct codec_opts *pre)
{
    if (!redis_mix_has(co, REDIS_GET)) return 0;
    *pre = *co;
    pre->redis_cmd = REDIS_SET;
    pre->redis_mix_len = 0;
    pre->expect_body = NULL;
    return co->keys > 0 ? co->keys : 1;
}

static const struct proto_entry entries[] = {
    {
        .name = "echo",
        .codec = &echo_codec,
        .server = &server_echo,
        .close_after_size = true,
    },
    {
        .name = "http",
        .codec = &http_codec,
        .server = &server_http,
        .opts = PROTO_OPT_METHOD | PROTO_OPT_PATH | PROTO_OPT_HOST | PROTO_OPT_EXPECT_BODY,
        .options = http_options,
        .check = check_get_post,
        .reply_body = true,
    },
    {
        .name = "fcgi",
        .codec = &fcgi_codec,
        .server = &server_fcgi,
        .opts = PROTO_OPT_METHOD | PROTO_OPT_PATH | PROTO_OPT_HOST | PROTO_OPT_SCRIPT |
                PROTO_OPT_DOCROOT | PROTO_OPT_QUERY | PROTO_OPT_PARAM | PROTO_OPT_EXPECT_BODY,
        .options = fcgi_options,
        .check = check_get_post,
        .reply_body = true,
    },
    {
        .name = "redis",
        .codec = &resp_codec,
        .server = &server_redis,
        .opts = PROTO_OPT_COMMAND | PROTO_OPT_KEYS | PROTO_OPT_PASSWORD | PROTO_OPT_PASSWORD_FILE,
        .options = redis_options,
        .opts_when = PROTO_OPT_EXPECT_BODY,
        .when = "--command get",
        .check = check_redis,
        .prepare = prepare_redis,
        /* the lab SETs values of each size over a thousand keys */
        .lab_codec = { .redis_cmd = REDIS_SET, .keys = 1000 },
    },
    {
        .name = "pg",
        .codec = &pg_codec,
        .opts = PROTO_OPT_SQL | PROTO_OPT_USER | PROTO_OPT_PASSWORD | PROTO_OPT_PASSWORD_FILE |
                PROTO_OPT_AUTH_METHOD | PROTO_OPT_DATABASE | PROTO_OPT_EXTENDED |
                PROTO_OPT_EXPECT_BODY,
        .options = pg_options,
        .check = check_db,
    },
    {
        .name = "mysql",
        .codec = &mysql_codec,
        .opts = PROTO_OPT_SQL | PROTO_OPT_USER | PROTO_OPT_PASSWORD | PROTO_OPT_PASSWORD_FILE |
                PROTO_OPT_SERVER_KEY | PROTO_OPT_GET_SERVER_KEY | PROTO_OPT_DATABASE |
                PROTO_OPT_PING | PROTO_OPT_EXPECT_BODY,
        .options = mysql_options,
        .check = check_db,
    },
};

const struct proto_entry *proto_find(const char *name)
{
    for (size_t i = 0; i < ARRAY_LEN(entries); i++)
        if (strcmp(entries[i].name, name) == 0) return &entries[i];
    return NULL;
}

const struct proto_entry *proto_entries(size_t *n)
{
    *n = ARRAY_LEN(entries);
    return entries;
}

const struct proto_entry *proto_lab_default(void)
{
    return &entries[0];
}

const char *proto_names(void)
{
    return PROTO_NAMES;
}

/* Appends s to buf (of cap bytes, holding len), cut short rather than overrun. */
static size_t put(char *buf, size_t cap, size_t len, const char *s)
{
    int n = snprintf(buf + len, cap - len, "%s", s);

    return n < 0 || (size_t)n >= cap - len ? cap - 1 : len + (size_t)n;
}

/*
 * Joins items 0..n-1 (item(i, arg) each) into buf as "a", "a and b" or
 * "a, b and c".
 */
static char *join(char *buf, size_t cap, size_t n, const char *(*item)(size_t i, const void *arg),
                  const void *arg)
{
    size_t len = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (i > 0) len = put(buf, cap, len, i + 1 == n ? " and " : ", ");
        len = put(buf, cap, len, item(i, arg));
    }
    return buf;
}

struct picked {
    char text[ARRAY_LEN(entries)][64];
};

static const char *picked_item(size_t i, const void *arg)
{
    return ((const struct picked *)arg)->text[i];
}

char *proto_list(char *buf, size_t cap, bool (*pick)(const struct proto_entry *pe, unsigned arg),
                 unsigned arg, unsigned when_bits)
{
    struct picked p;
    size_t n = 0;

    for (size_t i = 0; i < ARRAY_LEN(entries); i++) {
        const struct proto_entry *pe = &entries[i];
        if (!pick(pe, arg)) continue;
        snprintf(p.text[n], sizeof(p.text[n]), "%s%s%s", pe->name,
                 pe->opts_when & when_bits ? " " : "", pe->opts_when & when_bits ? pe->when : "");
        n++;
    }
    return join(buf, cap, n, picked_item, &p);
}

/* Does pe take every option of `bits` (perhaps only as its `when` says)? */
static bool takes(const struct proto_entry *pe, unsigned bits)
{
    return ((pe->opts | pe->opts_when) & bits) == bits;
}

/* Does an entry before entries[e] list option o? */
static bool proto_option_seen(const struct proto_option *o, size_t e)
{
    for (size_t j = 0; j < e; j++)
        for (const struct proto_option *const *p = entries[j].options; p != NULL && *p != NULL; p++)
            if (*p == o) return true;
    return false;
}

/*
 * The i-th option of the entries, each once, in their order; NULL past the
 * last. An option is counted where it first appears.
 */
const struct proto_option *proto_option_at(size_t i)
{
    size_t k = 0;

    for (size_t e = 0; e < ARRAY_LEN(entries); e++) {
        for (const struct proto_option *const *o = entries[e].options; o != NULL && *o != NULL;
             o++) {
            if (proto_option_seen(*o, e)) continue;
            if (k++ == i) return *o;
        }
    }
    return NULL;
}

const char *const *proto_option_values(const struct proto_option *po)
{
    static const struct {
        const struct proto_option *po;
        const char *const *words;
    } lists[] = { { &opt_method, method_words },
                  { &opt_command, redis_words },
                  { &opt_auth_method, auth_words } };

    for (size_t i = 0; i < ARRAY_LEN(lists); i++)
        if (lists[i].po == po) return lists[i].words;
    return NULL;
}

bool proto_option_secret(const char *name, size_t len)
{
    const struct proto_option *o;

    for (size_t i = 0; (o = proto_option_at(i)) != NULL; i++)
        if (o->secret && strlen(o->name) == len && memcmp(o->name, name, len) == 0) return true;
    return false;
}

const char *proto_opt_name(unsigned bit)
{
    const struct proto_option *o;

    for (size_t i = 0; (o = proto_option_at(i)) != NULL; i++)
        if (bit != 0 && o->bit == bit) return o->name;
    return NULL;
}

/* The options that the same protocols take as `bit`: they are named together. */
static unsigned opt_class(unsigned bit)
{
    unsigned class = 0;

    for (unsigned b = 1; b != 0; b <<= 1) {
        bool same = proto_opt_name(b) != NULL;
        for (size_t e = 0; e < ARRAY_LEN(entries) && same; e++)
            same = takes(&entries[e], bit) == takes(&entries[e], b);
        if (same) class |= b;
    }
    return class;
}

/* The name of the i-th option of the bits *arg, in the order of the bits. */
static const char *opt_item(size_t i, const void *arg)
{
    const unsigned *bits = arg;
    size_t k = 0;

    for (unsigned b = 1; b != 0; b <<= 1)
        if (*bits & b && k++ == i) return proto_opt_name(b);
    return "";
}

int proto_refuse(const struct proto_entry *pe, unsigned bit, struct hb_err *err)
{
    unsigned class = opt_class(bit);
    unsigned n = (unsigned)__builtin_popcount(class);
    char opts[128], names[128];

    join(opts, sizeof(opts), n, opt_item, &class);
    proto_list(names, sizeof(names), takes, bit, bit);
    return hb_fail(err, -EINVAL, "run %s: %s %s for %s", pe->name, opts, n > 1 ? "are" : "is",
                   names);
}

/* The proto_opt bits that the request options as given use. */
static unsigned opts_given(const struct codec_opts *co)
{
    unsigned bits = 0;

    bits |= co->method ? PROTO_OPT_METHOD : 0;
    bits |= co->path ? PROTO_OPT_PATH : 0;
    bits |= co->host ? PROTO_OPT_HOST : 0;
    bits |= co->script ? PROTO_OPT_SCRIPT : 0;
    bits |= co->docroot ? PROTO_OPT_DOCROOT : 0;
    bits |= co->query ? PROTO_OPT_QUERY : 0;
    bits |= co->nparams ? PROTO_OPT_PARAM : 0;
    bits |= co->redis_cmd != REDIS_PING || co->redis_mix_len > 0 ? PROTO_OPT_COMMAND : 0;
    bits |= co->keys ? PROTO_OPT_KEYS : 0;
    bits |= co->expect_body ? PROTO_OPT_EXPECT_BODY : 0;
    bits |= co->sql ? PROTO_OPT_SQL : 0;
    bits |= co->user ? PROTO_OPT_USER : 0;
    bits |= co->password ? PROTO_OPT_PASSWORD : 0; /* --password-file fills it too */
    bits |= co->database ? PROTO_OPT_DATABASE : 0;
    bits |= co->extended ? PROTO_OPT_EXTENDED : 0;
    bits |= co->ping ? PROTO_OPT_PING : 0;
    bits |= co->auth_methods ? PROTO_OPT_AUTH_METHOD : 0;
    bits |= co->server_key_len ? PROTO_OPT_SERVER_KEY : 0;
    bits |= co->get_server_key ? PROTO_OPT_GET_SERVER_KEY : 0;
    return bits;
}

int proto_check_run(const struct proto_entry *pe, struct proto_req *req, struct hb_err *err)
{
    unsigned given = opts_given(req->co);

    for (unsigned b = 1; b != 0; b <<= 1)
        if (given & b && !takes(pe, b)) return proto_refuse(pe, b, err);
    return pe->check != NULL ? pe->check(pe, req, err) : 0;
}

const struct codec_ops *codec_find(const char *name)
{
    const struct proto_entry *pe = proto_find(name);

    return pe != NULL ? pe->codec : NULL;
}

const char *codec_names(void)
{
    return proto_names();
}
