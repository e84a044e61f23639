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
#include "lab.h"
#include "proto/mysql.h"
#include "run.h"
#include "service.h"

struct proto_entry;

#include "cmd/cmd.h"

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
extern const struct cli_spec cli_spec_top, cli_spec_run, cli_spec_merge, cli_spec_report;

/*
 * For a command line read word by word (main, compare, merge): the val of the
 * option that arg spells in full ("-o" or "--output"), 0 when arg is not an
 * option (a word or "-"), '?' when it is an unknown one.
 */
int cli_option(const struct cli_spec *s, const char *arg);

/* Each returns 0, CLI_HELP after printing help to out, or -EINVAL with err set. */

/* The top-level help. */
void cli_usage(FILE *f);

#endif
