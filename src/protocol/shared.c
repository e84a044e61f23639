/*
 * shared: the options several protocols take under one name, and what their
 * entries share (see shared.h).
 */
#include "protocol/shared.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "suggest.h"

/* A user or database name: 1 to POPT_MAX_NAME bytes (PostgreSQL's limit, below MySQL's). */
#define POPT_MAX_NAME 63u

/* The field at `at`: a string. */
static const char **str_at(void *at)
{
    return at;
}

const char *popt_near_word(const char *val, size_t len, const char *const *words, size_t n,
                           char *buf, size_t cap)
{
    char word[SUGGEST_WORD_MAX + 1];
    struct suggest s;

    if (len >= sizeof(word)) len = sizeof(word) - 1; /* too long to suggest anything */
    memcpy(word, val, len);
    word[len] = '\0';
    suggest_init(&s, word);
    for (size_t i = 0; i < n; i++)
        suggest_add(&s, words[i]);
    return suggest_text(&s, false, buf, cap);
}

static const char *const method_words[] = { "GET", "POST", NULL };

static int parse_method(const char *val, void *at, const struct proto_args *a, struct hb_err *err)
{
    char near[96];

    (void)a;
    for (size_t i = 0; method_words[i] != NULL; i++)
        if (strcmp(val, method_words[i]) == 0) {
            *str_at(at) = method_words[i];
            return 0;
        }
    return hb_fail(err, -EINVAL, "--method: '%s' is not GET or POST%s", val,
                   popt_near_word(val, strlen(val), method_words, ARRAY_LEN(method_words) - 1, near,
                                  sizeof(near)));
}

static int parse_path(const char *val, void *at, const struct proto_args *a, struct hb_err *err)
{
    (void)a;
    if (val[0] != '/') return hb_fail(err, -EINVAL, "--path: '%s' does not start with /", val);
    if (strpbrk(val, " \r\n") != NULL)
        return hb_fail(err, -EINVAL, "--path: '%s' holds a space or line break", val);
    *str_at(at) = val;
    return 0;
}

static int parse_host(const char *val, void *at, const struct proto_args *a, struct hb_err *err)
{
    (void)a;
    if (val[0] == '\0' || strpbrk(val, " \r\n") != NULL)
        return hb_fail(err, -EINVAL, "--host: '%s' is not a host name", val);
    *str_at(at) = val;
    return 0;
}

/* --expect-body: the text with \n, \r, \t and \\ decoded, so a shell user can write "hello\n". */
static int parse_expect_body(const char *val, void *at, const struct proto_args *a,
                             struct hb_err *err)
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
    *str_at(at) = a->body;
    return 0;
}

void popt_mix_build(uint8_t *mix, unsigned *mix_len, const uint8_t *ids, const unsigned *weights,
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

/* The word of words[0..n-1] that the first len bytes of s are: its index, or -1. */
static int mix_word(const char *s, size_t len, const char *const *words, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(words[i]) == len && strncmp(s, words[i], len) == 0) return (int)i;
    return -1;
}

/* "a, b or c" (last "or") or "a, b and c" (last "and") of words into buf. */
static const char *words_list(char *buf, size_t cap, const char *const *words, size_t n,
                              const char *last)
{
    size_t len = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        bool end = i > 0 && i + 1 == n;
        int k = snprintf(buf + len, cap - len, "%s%s%s%s",
                         i == 0 ? ""
                         : end  ? " "
                                : ", ",
                         end ? last : "", end ? " " : "", words[i]);
        if (k < 0 || (size_t)k >= cap - len) break;
        len += (size_t)k;
    }
    return buf;
}

int popt_parse_mix(const char *val, const char *const *words, size_t n, struct codec_mix *m,
                   struct hb_err *err)
{
    int cmds[CODEC_KINDS];
    uint8_t ids[CODEC_KINDS];
    unsigned weights[CODEC_KINDS], total = 0;
    size_t k = 0;
    const char *p = val;
    char list[128], near[96];

    if (strpbrk(val, ",:") == NULL) {
        cmds[0] = mix_word(val, strlen(val), words, n);
        if (cmds[0] < 0)
            return hb_fail(err, -EINVAL, "--command: '%s' is not %s%s", val,
                           words_list(list, sizeof(list), words, n, "or"),
                           popt_near_word(val, strlen(val), words, n, near, sizeof(near)));
        m->cmd = (uint8_t)cmds[0];
        m->len = 0;
        return 0;
    }
    for (;;) {
        size_t len = strcspn(p, ",:");
        uint64_t w = 1;
        char num[8];

        if (k == n || k == CODEC_KINDS || (cmds[k] = mix_word(p, len, words, n)) < 0) goto bad;
        for (size_t i = 0; i < k; i++)
            if (cmds[i] == cmds[k]) goto bad;
        p += len;
        if (*p == ':') {
            len = strcspn(++p, ",");
            if (len == 0 || len >= sizeof(num)) goto bad;
            memcpy(num, p, len);
            num[len] = '\0';
            if (parse_u64(num, 1, CODEC_MIX_MAX, &w) < 0) goto bad;
            p += len;
        }
        weights[k++] = (unsigned)w;
        total += (unsigned)w;
        if (*p == '\0') break;
        p++; /* the ',' */
    }
    if (total > CODEC_MIX_MAX)
        return hb_fail(err, -EINVAL, "--command: the shares of '%s' add up to more than %d", val,
                       CODEC_MIX_MAX);
    m->cmd = (uint8_t)cmds[0];
    m->len = 0;
    for (size_t i = 0; i < k; i++)
        ids[i] = (uint8_t)cmds[i];
    if (k > 1) popt_mix_build(m->mix, &m->len, ids, weights, k, total);
    return 0;
bad:
    return hb_fail(err, -EINVAL,
                   "--command: '%s' is not %s in turn, each once and perhaps with its share (e.g. "
                   "set,get or set:1,get:9)",
                   val, words_list(list, sizeof(list), words, n, "and"));
}

/*
 * --sql [N:]Q: the statement; given again, the statements go in turn, each N
 * times in each period (default 1): the shares of those given so far are
 * read back from the mix, which is built again with the new one.
 */
static int parse_sql(const char *val, void *at, const struct proto_args *a, struct hb_err *err)
{
    static const uint8_t ids[CODEC_SQL_MAX] = { 0, 1, 2, 3 };
    struct codec_sql *s = at;
    unsigned weights[CODEC_SQL_MAX] = { 0 }, total = 0;
    size_t digits = strspn(val, "0123456789");
    const char *q = val;
    uint64_t w = 1;
    struct codec_sql_id id;

    (void)a;
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
    if (s->nsql == CODEC_SQL_MAX)
        return hb_fail(err, -EINVAL, "--sql: at most %d statements", CODEC_SQL_MAX);
    for (unsigned k = 0; k < s->mix_len; k++)
        weights[s->mix[k]]++;
    weights[s->nsql] = (unsigned)w;
    s->sqls[s->nsql++] = q;
    for (unsigned i = 0; i < s->nsql; i++)
        total += weights[i];
    if (total > CODEC_SQL_MIX_MAX)
        return hb_fail(err, -EINVAL, "--sql: the shares add up to more than %d", CODEC_SQL_MIX_MAX);
    popt_mix_build(s->mix, &s->mix_len, ids, weights, s->nsql, total);
    s->text = s->sqls[0];
    return 0;
}

/* A user or database name: 1 to 63 bytes, no NUL. */
static int db_name(const char *opt, const char *val, void *at, struct hb_err *err)
{
    if (val[0] == '\0' || strlen(val) > POPT_MAX_NAME)
        return hb_fail(err, -EINVAL, "%s: '%s' is not 1 to %u bytes", opt, val, POPT_MAX_NAME);
    *str_at(at) = val;
    return 0;
}

static int parse_user(const char *val, void *at, const struct proto_args *a, struct hb_err *err)
{
    (void)a;
    return db_name("--user", val, at, err);
}

static int parse_database(const char *val, void *at, const struct proto_args *a, struct hb_err *err)
{
    (void)a;
    return db_name("--database", val, at, err);
}

int popt_password_ok(const char *opt, const char *pw, struct hb_err *err)
{
    if (strlen(pw) > POPT_MAX_PASSWORD)
        return hb_fail(err, -EINVAL, "%s: longer than %u bytes", opt, POPT_MAX_PASSWORD);
    return 0;
}

static int parse_password(const char *val, void *at, const struct proto_args *a, struct hb_err *err)
{
    (void)a;
    *str_at(at) = val;
    return popt_password_ok("--password", val, err);
}

/*
 * --password-file: its first line (without the line end) is the password,
 * kept for the whole process (it is the run's); the file's name is what the
 * evidence's command line shows. A file its group or others may read or
 * write is refused, as the agent refuses such a token file: the password in
 * it is not a secret (a pipe, <(...), is its owner's only).
 */
static int parse_password_file(const char *val, void *at, const struct proto_args *a,
                               struct hb_err *err)
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
    if (a->secret == NULL || a->secret_cap < POPT_MAX_PASSWORD + 2) {
        fclose(f);
        return hb_fail(err, -EINVAL, "--password-file: no room for the password");
    }
    memset(a->secret, 0, a->secret_cap);
    n = fread(a->secret, 1, a->secret_cap - 1, f);
    fclose(f);
    a->secret[strcspn(a->secret, "\r\n")] = '\0';
    if (n > POPT_MAX_PASSWORD && strlen(a->secret) > POPT_MAX_PASSWORD)
        return hb_fail(err, -EINVAL, "--password-file: longer than %u bytes", POPT_MAX_PASSWORD);
    *str_at(at) = a->secret;
    return 0;
}

int popt_flag(const char *val, void *at, const struct proto_args *a, struct hb_err *err)
{
    bool *flag = at;

    (void)val;
    (void)a;
    (void)err;
    *flag = true;
    return 0;
}

int popt_check_db(const struct proto_entry *pe, struct proto_req *req, const char **password,
                  struct hb_err *err)
{
    const char *env = getenv("HOPBENCH_PASSWORD");

    if (req->size_given)
        return hb_fail(err, -EINVAL, "run %s: a query has no payload; --size does not apply",
                       pe->name);
    *req->size = 0;
    if (*password == NULL && env != NULL && env[0] != '\0') {
        if (popt_password_ok("HOPBENCH_PASSWORD", env, err) < 0) return -EINVAL;
        *password = env;
    }
    return 0;
}

const struct proto_option popt_method = {
    "--method",   "M",   "http, fcgi: GET (default) or POST (a --size byte body)",
    parse_method, false, method_words,
};
const struct proto_option popt_path = {
    "--path",
    "P",
    "http: the request target (default /); fcgi: SCRIPT_NAME and" HELP_INDENT
    "REQUEST_URI (default /bench; php-fpm's ping.path, e.g. /ping," HELP_INDENT "runs no PHP)",
    parse_path,
    false,
    NULL,
};
const struct proto_option popt_host = {
    "--host", "H", "http: the Host header (default localhost)", parse_host, false, NULL,
};
const struct proto_option popt_expect_body = {
    "--expect-body",
    "T",
    "http, fcgi, redis --command get: the body must be T; pg, mysql:" HELP_INDENT
    "the first row's first column (\\n, \\r, \\t and \\\\ are decoded); else" HELP_INDENT
    "an error of kind 'body'",
    parse_expect_body,
    false,
    NULL,
};
const struct proto_option popt_sql = {
    "--sql",
    "Q",
    "pg, mysql: the SQL of every request (default SELECT 1); given" HELP_INDENT
    "again (at most 4), the statements go in turn, each N times in" HELP_INDENT
    "each period when written N:Q (--sql 4:Q1 --sql 1:Q2: 1 Q2 in 5)," HELP_INDENT
    "their replies counted apart (sql1, sql2 ...); {id:LO-HI} in Q" HELP_INDENT
    "is a random id from LO to HI (uniform), drawn for each request",
    parse_sql,
    false,
    NULL,
};
const struct proto_option popt_user = {
    "--user", "U", "pg, mysql: who logs in (default postgres; root)", parse_user, false, NULL,
};
const struct proto_option popt_password = {
    "--password",
    "P",
    "pg, mysql, redis: the password, shown as (hidden) in the evidence;" HELP_INDENT
    "ps and /proc/PID/cmdline show it for the first moments, until it" HELP_INDENT
    "is overwritten: --password-file or HOPBENCH_PASSWORD in the" HELP_INDENT
    "environment (pg, mysql) is the safe way; redis sends it with AUTH" HELP_INDENT
    "on each connection first",
    parse_password,
    true,
    NULL,
};
const struct proto_option popt_password_file = {
    "--password-file",
    "FILE",
    "pg, mysql, redis: the password is FILE's first line (a FILE its" HELP_INDENT
    "group or others may read or write is refused)",
    parse_password_file,
    false,
    NULL,
};
const struct proto_option popt_database = {
    "--database",   "D",   "pg, mysql: the database (default: pg the user's name; mysql none)",
    parse_database, false, NULL,
};

int popt_check_get_post(const struct proto_entry *pe, struct proto_req *req, const char *method,
                        struct hb_err *err)
{
    bool post = method != NULL && strcmp(method, "POST") == 0;

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

int popt_parse_keys(const char *val, void *at, const struct proto_args *a, struct hb_err *err)
{
    (void)a;
    return opt_uint("--keys", val, 1, 1000000000, at, err);
}

uint64_t popt_fill_first(const struct codec_mix *m, unsigned get, unsigned set, uint64_t keys,
                         struct codec_mix *pre)
{
    if (!codec_mix_has(m, get)) return 0;
    pre->cmd = (uint8_t)set;
    pre->len = 0;
    return keys > 0 ? keys : 1;
}
