/*
 * http: the protocol's entry: the request's method, target, Host header and
 * the body it must answer with (shared with fcgi), into struct http_opts.
 */
#include <stddef.h>

#include "proto/http.h"
#include "protocol/shared.h"
#include "registry.h"
#include "server/server.h"

static const struct proto_take http_takes[] = {
    { &popt_method, offsetof(struct http_opts, method), NULL },
    { &popt_path, offsetof(struct http_opts, path), NULL },
    { &popt_host, offsetof(struct http_opts, host), NULL },
    { &popt_expect_body, offsetof(struct http_opts, expect_body), NULL },
    { NULL, 0, NULL },
};

static int check_http(const struct proto_entry *pe, struct proto_req *req, struct hb_err *err)
{
    const struct http_opts *o = req->opts;

    return popt_check_get_post(pe, req, o->method, err);
}

_Static_assert(sizeof(struct http_opts) <= CODEC_OPTS_MAX, "http_opts fits a codec_room");

const struct proto_entry proto_http = {
    .name = "http",
    .codec = &http_codec,
    .server = &server_http,
    .takes = http_takes,
    .opts_size = sizeof(struct http_opts),
    .check = check_http,
    .reply_body = true,
    .serve_words = "200 with a short body",
    .size_words = "the POST body",
    .lab_words = "reply body",
};
