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

#include "agent/agent.h"
#include "cost.h"
#include "endpoint.h"
#include "engine/load.h"
#include "host/netns.h"
#include "host/place.h"
#include "proto/mysql.h"
#include "service.h"

struct proto_entry;

/* Exit codes (README.md, "Exit codes", lists them for users). */
enum hb_exit {
    HB_EXIT_OK = 0,      /* every run valid */
    HB_EXIT_RUNTIME = 1, /* could not run: nothing listening, no threads, cannot write evidence */
    HB_EXIT_INVALID = 2, /* ran, but a run saw errors or was saturated: not valid */
    HB_EXIT_USAGE = 64,  /* bad command line (EX_USAGE) */
    HB_EXIT_LIMITS = 71, /* the plan needs more fds or memory than the limits give (EX_OSERR) */
    HB_EXIT_NOPERM = 77, /* --netns without the right to make a namespace (EX_NOPERM) */
    HB_EXIT_INTERRUPTED = 130, /* Ctrl-C: what was measured was still written */

    /* run --agent: the agent refused the token; run pg, mysql: the client refused the
     * server's way of authenticating (--auth-method, --server-public-key) */
    HB_EXIT_AGENT_AUTH = 3,
    /* run --agent: the agent refused a request as bad or too large, or broke the protocol */
    HB_EXIT_PROTOCOL = 76,
};

#define CLI_MAX_ENDPOINTS 16
#define CLI_MAX_SIZES     8
#define CLI_MAX_PARAMS    32                 /* --param */
#define CLI_MAX_SECRET    258                /* a password read from a file, its NUL and one more */
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
    cli_spec_compare, cli_spec_merge, cli_spec_report;

/*
 * For a command line read word by word (main, compare, merge): the val of the
 * option that arg spells in full ("-o" or "--output"), 0 when arg is not an
 * option (a word or "-"), '?' when it is an unknown one.
 */
int cli_option(const struct cli_spec *s, const char *arg);

/*
 * The options run and lab share: one parser (shared_option in cli.c) reads
 * them for both, with the same values and the same messages. Each command
 * sets its own defaults; run copies the load's into run_opts.load.
 */
struct shared_opts {
    unsigned conns;         /* -c, --connections */
    unsigned threads;       /* -t, --threads */
    uint64_t duration_ns;   /* -d, --duration: measured time (run: 0 when not given) */
    uint64_t warmup_ns;     /* --warmup */
    uint64_t timeout_ns;    /* --timeout */
    enum place_mode pin;    /* --pin */
    enum load_close close;  /* --close */
    bool block_wait;        /* --wait block (lab: its server too) */
    bool uring_wait;        /* --wait uring (run only) */
    uint64_t sample_ns;     /* --sample-ms: sock_diag sampling period during a run, if given */
    double noisy_cpus;      /* --noisy-threshold, in CPUs; 0: the default (OBS_NOISY_CPUS) */
    const char *json_path;  /* --json; NULL: hopbench-CMD-DATE-TIME.json in the current directory */
    const char *jsonl_path; /* --jsonl: one record per finished run */
    const char *csv_path;   /* --csv: one row per run, written with the evidence; NULL: none */
    bool quiet;             /* -q, --quiet: no live progress line on a terminal */
    bool verbose;           /* -v, --verbose: each run's line, summaries, noisy lines */
    const char *html_path;  /* --html: the evidence drawn as an HTML report; NULL: none */
    unsigned reps;          /* --reps */
    uint64_t cooldown_ns;   /* --cooldown: pause between runs */
    uint64_t seed;          /* --seed */
    bool conns_given;       /* -c was on the command line ("lab overload" keeps it) */
    bool duration_given;    /* -d likewise (lab --quick, "lab overload") */
    bool warmup_given;      /* --warmup likewise */
    bool reps_given;        /* --reps likewise (the default lab's reps) */
    bool pin_given;         /* --pin likewise (the lab's split falls back to same on 1 CPU) */
    bool close_given;       /* --close likewise (else the protocol's closer closes) */
    bool sample_given;      /* --sample-ms likewise (else observe_default_period) */
    bool wait_given;        /* --wait likewise (else the lab picks the wait: lab_opts.wait_auto) */
};

struct run_opts {
    const struct proto_entry *proto;
    struct endpoint eps[CLI_MAX_ENDPOINTS];
    unsigned neps;
    struct shared_opts
        shared;           /* reps: runs per endpoint; seed: the random order and the bootstrap */
    struct load_cfg load; /* every field but ep, cpus and stop */
    bool allow_remote;
    pid_t server_pids[64]; /* --server-pid */
    unsigned nserver_pids;
    bool server_tree;          /* --server-tree */
    const char *server_cgroup; /* --server-cgroup */
    bool order_random;         /* --order random (default abba) */
    struct codec_opts codec;   /* the protocol's request options (load.opts points here) */
    const char *params[CLI_MAX_PARAMS];
    char expect_body[CLI_MAX_BODY];     /* --expect-body with \n, \r, \t, \\ decoded */
    char password[CLI_MAX_SECRET];      /* --password-file: the file's first line */
    char server_key[MYSQL_MAX_KEY + 1]; /* --server-public-key: the file's PEM */
    bool size_given;
    bool close_given;       /* shared.close_given, where the protocol's checks read it */
    bool arrivals_given;    /* --arrivals was given (it needs --rate) */
    double rate_share;      /* --rate N%: N / 100 (load.rate is set per run); 0 = absolute */
    bool wait_auto;         /* no --wait: one kept connection per thread, closed loop, so
                             * load.block_wait was set as --wait block would (run_wait_default) */
    uint64_t wait_ready_ns; /* --wait-ready: how long a refused endpoint is asked again */
    uint64_t calibrate_ns;  /* how long the closed-loop maximum is measured for --rate N% */
    /* --rate-base: ops/s the share is of, one for every endpoint or one per endpoint */
    double rate_bases[CLI_MAX_ENDPOINTS];
    unsigned nrate_bases;
    /* --service, --watch */
    struct service_set services;
    /* --label, in the order of the endpoints */
    const char *labels[CLI_MAX_ENDPOINTS];
    unsigned nlabels;
    /* --agent ENDPOINT, its token, services and state */
    bool agent_given;
    const char *agent_token_file;
    struct agent_client agent;
    enum netns_mode netns;    /* --netns: run starts the built-in server there (NETNS_NONE: none) */
    enum netns_mode in_netns; /* --in-netns: started inside a stack's --netns namespaces */
};

/* `hopbench agent`: where it listens, its token, its schedule. */
struct agent_cli {
    struct agent_opts agent;
    const char *token_file; /* --token-file, or NULL: HOPBENCH_AGENT_TOKEN */
};

extern const struct cli_spec cli_spec_agent;

/* Returns 0, CLI_HELP after printing help to out, or -EINVAL with err set. */
int cli_parse_agent(int argc, char **argv, struct agent_cli *o, FILE *out, struct hb_err *err);

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
    enum place_mode pin;
    uint64_t close_after; /* 0: never close first */
    size_t body_size;     /* http, fcgi: reply body bytes (0 = the short greeting) */
    uint64_t delay_ns;    /* --delay-us */
    uint64_t stall_every; /* --stall-every */
    uint64_t stall_ns;    /* --stall-ms */
    bool block_wait;      /* --wait block */
};

struct lab_opts {
    const struct proto_entry *proto; /* the registry's first (echo) by default */
    struct shared_opts shared;   /* per cell; reps: runs of each cell, tcp and unix in ABBA order;
                                  * seed: the bootstrap of the summaries */
    double rates[CLI_MAX_SIZES]; /* --rates: open-loop shares of each cell's closed-loop ops/s */
    unsigned nrates;
    bool overload;            /* "lab overload": connect cells only, against a small server */
    bool wait_auto;           /* no --wait: the reuse cells wait as --wait block, the lab found
                               * them one kept connection per thread, closed loop */
    int server_backlog;       /* --backlog of the lab's server */
    unsigned server_threads;  /* --server-threads; 0 = as --pin places it */
    uint64_t server_delay_ns; /* --delay-us of the lab's server */
    bool quick;
    size_t sizes[CLI_MAX_SIZES];
    unsigned nsizes;
    bool sizes_given;      /* --sizes was on the command line */
    unsigned pipeline;     /* --pipeline: requests in flight per connection in the reuse cells */
    uint64_t count;        /* -n: ops per run instead of a duration; 0 = the duration */
    enum netns_mode netns; /* --netns: where server and client run (NETNS_NONE: here) */
};

/* Each returns 0, CLI_HELP after printing help to out, or -EINVAL with err set. */
int cli_parse_run(int argc, char **argv, struct run_opts *o, FILE *out, struct hb_err *err);
int cli_parse_serve(int argc, char **argv, struct serve_opts *o, FILE *out, struct hb_err *err);
int cli_parse_lab(int argc, char **argv, struct lab_opts *o, FILE *out, struct hb_err *err);

/* `hopbench compare OLD.json NEW.json` */
struct compare_opts {
    const char *paths[2]; /* OLD, NEW */
};

/* `hopbench merge A.json B.json... [-o OUT.json]` */
struct merge_opts {
    const char *
        *paths; /* the input files, in the order given (allocated: cli_merge_opts_release) */
    size_t npaths;
    const char *out; /* -o, --output; NULL: stdout */
};

/*
 * Each returns 0, CLI_HELP after printing help to out (--help anywhere on
 * the line), or -EINVAL with err set (the message names the word at fault,
 * without the command's name). cli_parse_merge's options own memory, also
 * on failure: cli_merge_opts_release.
 */
int cli_parse_compare(int argc, char **argv, struct compare_opts *o, FILE *out, struct hb_err *err);
int cli_parse_merge(int argc, char **argv, struct merge_opts *o, FILE *out, struct hb_err *err);
void cli_merge_opts_release(struct merge_opts *o);

/* `hopbench report EVIDENCE... -o REPORT.html` */
struct report_opts {
    const char **paths; /* the evidence files, in the order given (cli_report_opts_release) */
    size_t npaths;
    const char *out;             /* -o, --output: the HTML page, or NULL */
    const char *csv;             /* --csv: one row per run of every file, or NULL */
    const char *hgrm;            /* --hgrm: a .hgrm per histogram into this directory, or NULL */
    const char *hdr_log;         /* --hdr-log: every histogram as one HdrHistogram log, or NULL */
    const char *hgrm_ratio_text; /* --hgrm-ratio as given, or NULL */
    double hgrm_ratio;           /* the .hgrm values are ns / this (HDR_RATIO_US) */
};

/* As cli_parse_merge: 0, CLI_HELP or -EINVAL; the options own memory, also on failure. */
int cli_parse_report(int argc, char **argv, struct report_opts *o, FILE *out, struct hb_err *err);
void cli_report_opts_release(struct report_opts *o);
/* `hopbench cost EVIDENCE`: the plan (--traffic, --price, --app-work, --seed) and the files. */
struct cost_opts {
    struct cost_plan plan;
    const char *evidence_path;
    const char *json_path; /* --json; NULL: none */
};

extern const struct cli_spec cli_spec_cost;
/* Returns 0, CLI_HELP after printing help to out, or -EINVAL with err set. */
int cli_parse_cost(int argc, char **argv, struct cost_opts *o, FILE *out, struct hb_err *err);

struct stack_opts;
extern const struct cli_spec cli_spec_stack;

/* stack: `list`, or a stack's NAME and options; 0, CLI_HELP (a stack's own help) or -EINVAL. */
int cli_parse_stack(int argc, char **argv, struct stack_opts *o, FILE *out, struct hb_err *err);

/* The top-level help. */
void cli_usage(FILE *f);

/* Parses "64", "4k", "4KiB", "1M"... into bytes in [1, max]. Returns 0 or -EINVAL/-ERANGE. */
int cli_parse_size(const char *s, size_t max, size_t *out);

#endif
