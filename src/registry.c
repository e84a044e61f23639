/*
 * registry: the table of protocols and the checks of `run`'s request options
 * against it (see registry.h).
 */
#include "registry.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proto/echo.h"
#include "proto/fcgi.h"
#include "proto/http.h"
#include "proto/resp.h"

/* The options of enum proto_opt, in the order they are checked and named. */
static const struct {
    unsigned bit;
    const char *name;
} opt_names[] = {
    { PROTO_OPT_METHOD, "--method" },   { PROTO_OPT_PATH, "--path" },
    { PROTO_OPT_HOST, "--host" },       { PROTO_OPT_SCRIPT, "--script" },
    { PROTO_OPT_DOCROOT, "--docroot" }, { PROTO_OPT_QUERY, "--query" },
    { PROTO_OPT_PARAM, "--param" },     { PROTO_OPT_COMMAND, "--command" },
    { PROTO_OPT_KEYS, "--keys" },       { PROTO_OPT_EXPECT_BODY, "--expect-body" },
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

/* redis: a PING has no key and no value, a GET no value; only a GET has a body to expect. */
static int check_redis(const struct proto_entry *pe, struct proto_req *req, struct hb_err *err)
{
    const struct codec_opts *co = req->co;

    if (co->redis_cmd == REDIS_PING && (co->keys || req->size_given))
        return hb_fail(err, -EINVAL,
                       "run %s: --keys and --size/--value-size need --command set or get",
                       pe->name);
    if (co->redis_cmd == REDIS_GET && req->size_given)
        return hb_fail(err, -EINVAL,
                       "run %s: a GET sends no value; --size/--value-size is for --command set",
                       pe->name);
    if (co->expect_body && co->redis_cmd != REDIS_GET)
        return proto_refuse(pe, PROTO_OPT_EXPECT_BODY, err);
    return 0;
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
        .check = check_get_post,
        .reply_body = true,
    },
    {
        .name = "fcgi",
        .codec = &fcgi_codec,
        .server = &server_fcgi,
        .opts = PROTO_OPT_METHOD | PROTO_OPT_PATH | PROTO_OPT_HOST | PROTO_OPT_SCRIPT |
                PROTO_OPT_DOCROOT | PROTO_OPT_QUERY | PROTO_OPT_PARAM | PROTO_OPT_EXPECT_BODY,
        .check = check_get_post,
        .reply_body = true,
    },
    {
        .name = "redis",
        .codec = &resp_codec,
        .server = &server_redis,
        .opts = PROTO_OPT_COMMAND | PROTO_OPT_KEYS,
        .opts_when = PROTO_OPT_EXPECT_BODY,
        .when = "--command get",
        .check = check_redis,
        /* the lab SETs values of each size over a thousand keys */
        .lab_codec = { .redis_cmd = REDIS_SET, .keys = 1000 },
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

/* The options that the same protocols take as `bit`: they are named together. */
static unsigned opt_class(unsigned bit)
{
    unsigned class = 0;

    for (size_t i = 0; i < ARRAY_LEN(opt_names); i++) {
        bool same = true;
        for (size_t e = 0; e < ARRAY_LEN(entries) && same; e++)
            same = takes(&entries[e], bit) == takes(&entries[e], opt_names[i].bit);
        if (same) class |= opt_names[i].bit;
    }
    return class;
}

static const char *opt_item(size_t i, const void *arg)
{
    const unsigned *bits = arg;
    size_t k = 0;

    for (size_t j = 0; j < ARRAY_LEN(opt_names); j++)
        if (*bits & opt_names[j].bit && k++ == i) return opt_names[j].name;
    return "";
}

const char *proto_opt_name(unsigned bit)
{
    for (size_t i = 0; i < ARRAY_LEN(opt_names); i++)
        if (opt_names[i].bit == bit) return opt_names[i].name;
    return NULL;
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
    bits |= co->redis_cmd != REDIS_PING ? PROTO_OPT_COMMAND : 0;
    bits |= co->keys ? PROTO_OPT_KEYS : 0;
    bits |= co->expect_body ? PROTO_OPT_EXPECT_BODY : 0;
    return bits;
}

int proto_check_run(const struct proto_entry *pe, struct proto_req *req, struct hb_err *err)
{
    unsigned given = opts_given(req->co);

    for (size_t i = 0; i < ARRAY_LEN(opt_names); i++)
        if (given & opt_names[i].bit && !takes(pe, opt_names[i].bit))
            return proto_refuse(pe, opt_names[i].bit, err);
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
