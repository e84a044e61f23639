/*
 * serve: what `hopbench serve` is asked (cmd/serve.c).
 */
#ifndef HOPBENCH_CMD_SERVE_H
#define HOPBENCH_CMD_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "endpoint.h"
#include "host/place.h"
#include "plan.h"

struct hb_err;
struct proto_entry;

struct serve_opts {
    const struct proto_entry *proto;
    struct endpoint eps[CLI_MAX_ENDPOINTS];
    unsigned neps;
    int backlog;        /* 0: net.core.somaxconn */
    unsigned max_conns; /* 0: from the fd limit (server_open) */
    unsigned threads;   /* 0: one per CPU the server may use */
    unsigned socket_mode;
    bool socket_mode_given; /* --socket-mode was on the command line */
    bool allow_remote;
    bool reuseport; /* --reuseport */
    enum place_mode pin;
    uint64_t close_after; /* 0: never close first */
    size_t body_size;     /* http, fcgi: reply body bytes (0 = the short greeting) */
    uint64_t delay_ns;    /* --delay-us */
    uint64_t stall_every; /* --stall-every */
    uint64_t stall_ns;    /* --stall-ms */
    bool block_wait;      /* --wait block */
};

/* Returns 0, CLI_HELP after printing help to out, or -EINVAL with err set. */
int cli_parse_serve(int argc, char **argv, struct serve_opts *o, FILE *out, struct hb_err *err);

#endif
