/*
 * cli: subcommands and their options. It turns argv into option structs,
 * with a one-line error naming what is wrong; it prints --help texts. It
 * runs nothing.
 */
#ifndef HOPBENCH_CLI_H
#define HOPBENCH_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "endpoint.h"
#include "load.h"
#include "place.h"
#include "service.h"

/* Exit codes (README.md, "Exit codes", lists them for users). */
enum hb_exit {
    HB_EXIT_OK = 0,      /* every run valid */
    HB_EXIT_RUNTIME = 1, /* could not run: nothing listening, no threads, cannot write evidence */
    HB_EXIT_INVALID = 2, /* ran, but a run saw errors: its results are not valid */
    HB_EXIT_USAGE = 64,  /* bad command line (EX_USAGE) */
    HB_EXIT_LIMITS = 71, /* the plan needs more fds or memory than the limits give (EX_OSERR) */
    HB_EXIT_INTERRUPTED = 130, /* Ctrl-C: what was measured was still written */
};

#define CLI_MAX_ENDPOINTS 16
#define CLI_MAX_SIZES     8
#define CLI_MAX_PARAMS    32                 /* --param */
#define CLI_MAX_BODY      4096               /* --expect-body, after escapes */
#define CLI_SEED_MAX      ((1ULL << 53) - 1) /* --seed: a JSON number every reader keeps exact */

/* cli_parse_* return this when --help was printed. */
#define CLI_HELP 1

/*
 * A command line as its parser takes it, and the --help text that describes
 * it (tests/unit/test_cli.c checks that the text names every option of the
 * table, with its short letter).
 */
struct cli_spec {
    const char *name;              /* "run", "serve", "lab", "compare", "merge"; "hopbench" */
    const char *help;              /* what --help prints */
    const char *shortopts;         /* getopt's optstring: the short letters */
    const struct option *longopts; /* every option by its long name; a NULL name ends it */
};

/* The top level (main() before a subcommand: --help, -h, --version) and each subcommand. */
extern const struct cli_spec cli_spec_top, cli_spec_run, cli_spec_serve, cli_spec_lab,
    cli_spec_compare, cli_spec_merge;

/*
 * For a command line read word by word (main, compare, merge): the val of the
 * option that arg spells in full ("-o" or "--output"), 0 when arg is not an
 * option (a word or "-"), '?' when it is an unknown one.
 */
int cli_option(const struct cli_spec *s, const char *arg);

struct run_opts {
    const char *proto;
    struct endpoint eps[CLI_MAX_ENDPOINTS];
    unsigned neps;
    struct load_cfg load; /* every field but ep, cpus and stop */
    enum place_mode pin;
    const char *json_path; /* NULL: no evidence file */
    bool allow_remote;
    pid_t server_pids[64]; /* --server-pid */
    unsigned nserver_pids;
    bool server_tree;          /* --server-tree */
    const char *server_cgroup; /* --server-cgroup */
    uint64_t sample_ns;        /* --sample-ms */
    unsigned reps;             /* --reps: runs per endpoint */
    bool order_random;         /* --order random (default abba) */
    uint64_t seed;             /* --seed: the random order and the bootstrap */
    uint64_t cooldown_ns;      /* --cooldown: pause between runs */
    const char *jsonl_path;    /* --jsonl: one record per finished run */
    struct codec_opts codec;   /* the protocol's request options (load.opts points here) */
    const char *params[CLI_MAX_PARAMS];
    char expect_body[CLI_MAX_BODY]; /* --expect-body with \n, \r, \t, \\ decoded */
    bool size_given;
    bool close_given;
    bool arrivals_given;   /* --arrivals was given (it needs --rate) */
    double rate_share;     /* --rate N%: N / 100 (load.rate is set per run); 0 = absolute */
    uint64_t calibrate_ns; /* how long the closed-loop maximum is measured for --rate N% */
    /* --service, --watch */
    struct service_set services;
    /* --label, in the order of the endpoints */
    const char *labels[CLI_MAX_ENDPOINTS];
    unsigned nlabels;
};

struct serve_opts {
    const char *proto;
    struct endpoint eps[CLI_MAX_ENDPOINTS];
    unsigned neps;
    int backlog;        /* 0: net.core.somaxconn */
    unsigned max_conns; /* 0: from the fd limit (server_open) */
    unsigned threads;   /* 0: one per CPU the server may use */
    unsigned socket_mode;
    bool socket_mode_given; /* --socket-mode was on the command line */
    bool allow_remote;
    enum place_mode pin;
    uint64_t close_after; /* 0: never close first */
    size_t body_size;     /* http, fcgi: reply body bytes (0 = the short greeting) */
    uint64_t delay_ns;    /* --delay-us */
    uint64_t stall_every; /* --stall-every */
    uint64_t stall_ns;    /* --stall-ms */
    bool block_wait;      /* --wait block */
};

struct lab_opts {
    const char *proto;           /* echo (default), http, fcgi, redis */
    double rates[CLI_MAX_SIZES]; /* --rates: open-loop shares of each cell's closed-loop ops/s */
    unsigned nrates;
    bool overload;            /* "lab overload": connect cells only, against a small server */
    int server_backlog;       /* --backlog of the lab's server */
    unsigned server_threads;  /* --server-threads; 0 = as --pin places it */
    uint64_t server_delay_ns; /* --delay-us of the lab's server */
    bool quick;
    uint64_t duration_ns; /* per cell */
    uint64_t warmup_ns;
    uint64_t timeout_ns;
    unsigned conns;
    unsigned threads;
    size_t sizes[CLI_MAX_SIZES];
    unsigned nsizes;
    bool sizes_given; /* --sizes was on the command line */
    enum place_mode pin;
    bool pin_given; /* --pin was on the command line (else split falls back to same on 1 CPU) */
    enum load_close close;
    bool close_given;       /* --close was given (else the protocol's closer closes) */
    bool block_wait;        /* --wait block: the client and the lab's server */
    uint64_t sample_ns;     /* sock_diag sampling period during a cell */
    const char *json_path;  /* NULL: hopbench-lab-<time>.json in the current directory */
    const char *jsonl_path; /* --jsonl: one record per finished cell */
    unsigned reps;          /* --reps: runs of each cell, tcp and unix in ABBA order */
    uint64_t cooldown_ns;   /* --cooldown: pause between runs */
    uint64_t seed;          /* --seed: the bootstrap of the summaries */
};

/* Each returns 0, CLI_HELP after printing help to out, or -EINVAL with err set. */
int cli_parse_run(int argc, char **argv, struct run_opts *o, FILE *out, struct hb_err *err);
int cli_parse_serve(int argc, char **argv, struct serve_opts *o, FILE *out, struct hb_err *err);
int cli_parse_lab(int argc, char **argv, struct lab_opts *o, FILE *out, struct hb_err *err);

/* The top-level help. */
void cli_usage(FILE *f);

/* Parses "64", "4k", "4KiB", "1M"... into bytes in [1, max]. Returns 0 or -EINVAL/-ERANGE. */
int cli_parse_size(const char *s, size_t max, size_t *out);

#endif
