/*
 * options: what every command's parser shares. The option table (struct
 * cmd_option) read by getopt_long (cmd_getopt) or word by word (cmd_option),
 * drawn as --help (cmd_help) and listed for the man page's test and the bash
 * completion (cmd_options_dump); the values checked strictly, each refusal one
 * line naming the option and the value; and the options run and lab share
 * (struct shared_opts, plan.h), parsed by one function for both.
 */
#ifndef HOPBENCH_CMD_OPTIONS_H
#define HOPBENCH_CMD_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "agent/client.h"
#include "cmd/cmd.h"
#include "endpoint.h"
#include "engine/loadcfg.h"
#include "host/netns.h"
#include "host/place.h"
#include "plan.h"

/* The ids of the long options without a short letter (struct cmd_option.id). */
enum {
    OPT_MODE = 256,
    OPT_PIPELINE,
    OPT_SIZE,
    OPT_WARMUP,
    OPT_TIMEOUT,
    OPT_PIN,
    OPT_JSON,
    OPT_HTML,
    OPT_ALLOW_REMOTE,
    OPT_WAIT_READY,
    OPT_BACKLOG,
    OPT_SOCKET_MODE,
    OPT_QUICK,
    OPT_SIZES,
    OPT_CLOSE,
    OPT_CLOSE_AFTER,
    OPT_SERVER_PID,
    OPT_SERVER_TREE,
    OPT_SERVER_CGROUP,
    OPT_SAMPLE_MS,
    OPT_NOISY_THRESHOLD,
    OPT_REPS,
    OPT_ORDER,
    OPT_SEED,
    OPT_COOLDOWN,
    OPT_JSONL,
    OPT_CSV,
    OPT_VALUE_SIZE,
    OPT_BODY_SIZE,
    OPT_PROTO,
    OPT_RATE,
    OPT_ARRIVALS,
    OPT_RATE_BASE,
    OPT_WAIT,
    OPT_MAX_CONNS,
    OPT_RATES,
    OPT_DELAY_US,
    OPT_STALL_EVERY,
    OPT_STALL_MS,
    OPT_SERVER_THREADS,
    OPT_SERVICE,
    OPT_WATCH,
    OPT_LABEL,
    OPT_RETRY,
    OPT_NETNS,
    OPT_AGENT,
    OPT_AGENT_TOKEN_FILE,
    OPT_AGENT_SERVICE,
    OPT_AGENT_STATE,
    OPT_AGENT_WAIT,
    OPT_LISTEN,
    OPT_TOKEN_FILE,
    OPT_SCHEDULE,
    OPT_IN_NETNS,
    OPT_TRAFFIC,
    OPT_PRICE,
    OPT_APP_WORK,
    OPT_SHORT,
    OPT_HOLD,
    OPT_PROFILE,
    OPT_ABLATION,
    OPT_POOL,
    OPT_OVERLOAD,
    OPT_STARVE,
    OPT_HGRM,
    OPT_HGRM_RATIO,
    OPT_HDR_LOG,
    OPT_PROFILE_HZ,
    OPT_NO_SERVER_LOOKUP,
    OPT_PROCS,
    OPT_REUSEPORT,
    OPT_SOURCE,
};

/* The most options one table has (run's, the registry's protocol options included). */
#define CMD_MAX_OPTIONS 128

/* The most protocols the registry holds. */
#define CMD_MAX_PROTOS 16

/*
 * The words of the options that take one of a few (struct cmd_value),
 * which their parsers check against: --pin, --close, --wait (serve and lab;
 * run also uring), --netns and --in-netns. The protocols' names and those
 * with a built-in server (serve, lab --proto), from the registry.
 */
extern const char *const cmd_pin_values[],
    *const cmd_close_values[], *const cmd_wait_values[], *const cmd_wait_run_values[],
                                                             *const cmd_netns_values[];
extern const char *cmd_proto_words[], *cmd_served_words[];

/*
 * val's place in values (NULL-terminated) into *index: 0, or -EINVAL with err
 * saying "OPT: 'VAL' is not one of A, B, C" and the nearest ("; did you mean 'B'?").
 */
int opt_choice(const char *opt, const char *val, const char *const *values, unsigned *index,
               struct hb_err *err);

/* The top level's own options (main() before a command: --help, --version). */
extern const struct cmd_option cmd_top_options[];

/*
 * Reads argv's options by c's table with getopt_long, from the start (its
 * state is global: one parser at a time), and hands each to option(id, value,
 * opts, err). Returns 0 with optind at the first word that is not an option;
 * CLI_HELP for -h or --help, after printing c's help to out (out NULL: the
 * caller prints its own); -EINVAL with err set for an unknown option, a
 * missing value, or a value that option refused.
 */
int cmd_getopt(const struct command *c, int argc, char **argv,
               int (*option)(int id, const char *val, void *opts, struct hb_err *err), void *opts,
               FILE *out, struct hb_err *err);

/*
 * For a command line read word by word (main, compare, merge, report): the id
 * of the option of table that arg spells in full ("-o" or "--output"), 0 when
 * arg is not an option (a word or "-"), '?' when it is an unknown one.
 */
int cmd_option(const struct cmd_option *table, const char *arg);

/*
 * "; did you mean --duration?" for the unknown option arg ("--duraton",
 * "--duraton=5") among table's, into buf; "" when none is near (suggest.h).
 */
const char *cmd_suggest_option(const struct cmd_option *table, const char *arg, char *buf,
                               size_t cap);

/* The same for a protocol's name: among those with a built-in server when served. */
const char *cmd_suggest_proto(const char *word, bool served, char *buf, size_t cap);

/* Whether -h or --help (as table spells them) is one of argv's words after argv[0]. */
bool cmd_asks_help(const struct cmd_option *table, int argc, char **argv);

/* c's --help: its usage, each entry of its table, its tail. */
void cmd_help(const struct command *c, FILE *out);

/* The top-level help: the usage line and summary of each of the n commands, in order. */
void cmd_usage(FILE *out, const struct command *const *cmds, size_t n);

/*
 * c's options, one a line: its short letter (or nothing), a space, --NAME, a
 * space, its value's name (or nothing): "c --connections N", " --quiet ".
 * `hopbench help --options NAME` prints it (test_man.sh, the bash completion).
 */
void cmd_options_dump(const struct command *c, FILE *out);

/*
 * The words c's options take (c->values), one line an option: "--pin none same split";
 * first, when c has them, its first word's: "- echo http fcgi...". `hopbench
 * help --values NAME` prints it for the bash completion.
 */
void cmd_values_dump(const struct command *c, FILE *out);

/* Parses "64", "4k", "4KiB", "1M"... into bytes in [1, max]. Returns 0 or -EINVAL/-ERANGE. */
int cli_parse_size(const char *s, size_t max, size_t *out);

/* The values of options, each 0 or -EINVAL with err naming opt and val. */
int opt_seconds(const char *opt, const char *val, bool zero_ok, uint64_t *out, struct hb_err *err);
int opt_pin(const char *val, enum place_mode *mode, struct hb_err *err);
int opt_netns(const char *opt, const char *val, enum netns_mode *mode, struct hb_err *err);
int opt_size(const char *opt, const char *val, size_t *out, struct hb_err *err);
/* --wait: epoll, block, or (where uring is not NULL: run) uring. */
int opt_wait(const char *val, bool *block, bool *uring, struct hb_err *err);
/* --rate R (ops/s in all: *rate, *share 0) or --rate N% (of the closed-loop maximum: *share). */
int opt_rate(const char *val, double *rate, double *share, struct hb_err *err);

/*
 * Splits the comma-separated list val (a copy in buf) into at most
 * CLI_MAX_SIZES tokens. An empty list or an empty item ("64,,4KiB") is an
 * error, not skipped.
 */
int opt_list(const char *opt, const char *val, char *buf, size_t cap, char *toks[CLI_MAX_SIZES],
             unsigned *n, struct hb_err *err);

/* Appends the endpoint s to eps (*n of CLI_MAX_ENDPOINTS): 0 or -EINVAL. */
int opt_endpoint(struct endpoint *eps, unsigned *n, const char *s, struct hb_err *err);

/* Refuses a non-loopback TCP endpoint unless allowed (--allow-remote). */
int opt_check_remote(const struct endpoint *eps, unsigned n, bool allow, struct hb_err *err);

/* An option that takes a value, and where it goes (opt_files_out). */
struct opt_value {
    int id;
    const char **val;
};

/*
 * The words of a command that takes files and -o FILE (merge, report), read by
 * table: the files into *paths (allocated here: the caller frees it, also on
 * failure), -o into *out, and each of the nmore other options that take a
 * value (report's --csv FILE, --hgrm DIR...) into its place.
 */
int opt_files_out(const struct cmd_option *table, int argc, char **argv, const char ***paths,
                  size_t *npaths, const char **out, const struct opt_value *more, size_t nmore,
                  struct hb_err *err);

/*
 * What run --agent and stack --agent check alike: an endpoint that can be
 * connected to, and the token (from token_file, or the environment).
 */
int opt_agent_target(const char *cmd, const struct endpoint *ep, const char *token_file,
                     struct agent_token *token, struct hb_err *err);

/* What shared_option returns for an option that is not one of the shared ones. */
#define SHARED_NOT_MINE 1

/*
 * The options run and lab share (struct shared_opts), by id: 0, -EINVAL with
 * err set, or SHARED_NOT_MINE when id is not one of them.
 */
int shared_option(int id, const char *val, struct shared_opts *o, struct hb_err *err);

#endif
