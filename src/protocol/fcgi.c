/*
 * fcgi: the protocol's entry: http's request options (the path is
 * SCRIPT_NAME and REQUEST_URI), the CGI variables php-fpm reads and extra
 * parameters, into struct fcgi_opts.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "proto/fcgi.h"
#include "protocol/shared.h"
#include "registry.h"
#include "server/server.h"

/* An absolute path, for the option called `name`, into the string at `at`. */
static int absolute(const char *name, const char *val, void *at, struct hb_err *err)
{
    const char **dst = at;

    if (val[0] != '/') return hb_fail(err, -EINVAL, "%s: '%s' is not an absolute path", name, val);
    *dst = val;
    return 0;
}

static int parse_script(const char *val, void *at, const struct proto_args *a, struct hb_err *err)
{
    (void)a;
    return absolute("--script", val, at, err);
}

static int parse_docroot(const char *val, void *at, const struct proto_args *a, struct hb_err *err)
{
    (void)a;
    return absolute("--docroot", val, at, err);
}

static int parse_query(const char *val, void *at, const struct proto_args *a, struct hb_err *err)
{
    const char **dst = at;

    (void)a;
    (void)err;
    *dst = val;
    return 0;
}

/* --param NAME=VAL: appended to the command line's room; `at` is the whole struct fcgi_opts. */
static int parse_param(const char *val, void *at, const struct proto_args *a, struct hb_err *err)
{
    struct fcgi_opts *o = at;
    const char *eq = strchr(val, '=');

    if (eq == NULL || eq == val)
        return hb_fail(err, -EINVAL, "--param: '%s' is not NAME=VALUE", val);
    if (o->nparams == a->params_cap)
        return hb_fail(err, -EINVAL, "--param: at most %u", a->params_cap);
    a->params[o->nparams++] = val;
    o->params = a->params;
    return 0;
}

static const struct proto_option opt_script = {
    "--script", "FILE", "fcgi: SCRIPT_FILENAME (default DOCROOT + PATH)", parse_script, false, NULL,
};
static const struct proto_option opt_docroot = {
    "--docroot", "DIR", "fcgi: DOCUMENT_ROOT (default /var/www/html)", parse_docroot, false, NULL,
};
static const struct proto_option opt_query = {
    "--query", "QS", "fcgi: QUERY_STRING (default empty)", parse_query, false, NULL,
};
static const struct proto_option opt_param = {
    "--param", "NAME=VAL", "fcgi: one more parameter; repeat for several", parse_param, false, NULL,
};

static const struct proto_take fcgi_takes[] = {
    { &popt_method, offsetof(struct fcgi_opts, method), NULL },
    { &popt_path, offsetof(struct fcgi_opts, path), NULL },
    { &popt_host, offsetof(struct fcgi_opts, host), NULL },
    { &popt_expect_body, offsetof(struct fcgi_opts, expect_body), NULL },
    { &opt_script, offsetof(struct fcgi_opts, script), NULL },
    { &opt_docroot, offsetof(struct fcgi_opts, docroot), NULL },
    { &opt_query, offsetof(struct fcgi_opts, query), NULL },
    { &opt_param, 0, NULL },
    { NULL, 0, NULL },
};

static int check_fcgi(const struct proto_entry *pe, struct proto_req *req, struct hb_err *err)
{
    const struct fcgi_opts *o = req->opts;

    return popt_check_get_post(pe, req, o->method, err);
}

_Static_assert(sizeof(struct fcgi_opts) <= CODEC_OPTS_MAX, "fcgi_opts fits a codec_room");

const struct proto_entry proto_fcgi = {
    .name = "fcgi",
    .codec = &fcgi_codec,
    .server = &server_fcgi,
    .takes = fcgi_takes,
    .opts_size = sizeof(struct fcgi_opts),
    .check = check_fcgi,
    .reply_body = true,
    .serve_words = "a FastCGI responder answering 'bench'",
    .size_words = "the POST body",
    .lab_words = "reply body",
};
