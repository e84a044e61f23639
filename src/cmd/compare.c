/*
 * compare: `hopbench compare OLD.json NEW.json`, two evidence files cell by
 * cell, as benchstat does (evidence/compare.c). Exit 2 when no cell could be
 * compared.
 */
#include <errno.h>
#include <stdio.h>

#include "cmd/options.h"
#include "cmd/session.h"
#include "evidence.h"
#include "util.h"

static const char compare_usage[] =
    "usage: hopbench compare OLD.json NEW.json\n"
    "\n"
    "Compares two evidence files (from run, lab or merge, or --jsonl files) cell by cell, as\n"
    "benchstat does. A cell is (proto, endpoint, mode, size, connections, pipeline, and for\n"
    "an open-loop run its share of the maximum, or else its rate); its runs are its\n"
    "repetitions, and only valid runs that Ctrl-C did not cut short count. For ops/s, p50,\n"
    "mean latency, p99, p99.9 and client CPU per op it prints, for each cell found in both\n"
    "files, the median of each side with its spread (the larger distance from the median to\n"
    "the min or the max, in % of the median) and n, then the change of NEW relative to OLD:\n"
    "the ratio of medians with a bootstrap 95 % interval and a two-sided Mann-Whitney U\n"
    "p-value, \"+28 % [+24 %, +31 %] (p=0.002 n=10+10)\", with \"~ \" before it,\n"
    "\"~ +9 % [-4 %, +20 %] (p=0.31 n=10+10)\", when the difference is not significant at\n"
    "alpha 0.05 (with fewer than 4 runs per side none can be). Cells found in one file only\n"
    "are listed as \"only in OLD\" or \"only in NEW\", with their whole key.\n"
    "\n";

static const struct cmd_option compare_options[] = {
    { "help", 'h', NULL, "this text", 'h' },
    CMD_END,
};

static const char compare_tail[] =
    "\n"
    "Exit codes: 0 compared, 1 a file cannot be read or is not hopbench evidence, 2 nothing\n"
    "comparable (no cell has a valid run in both files), 64 bad usage.\n";

/* OLD, NEW */
static const char *compare_paths[2];

/* The words, read one by one: no abbreviations, --help anywhere. */
static int compare_parse(int argc, char **argv, FILE *out, struct hb_err *err)
{
    char near[160];
    int n = 0;

    compare_paths[0] = compare_paths[1] = NULL;
    if (cmd_asks_help(compare_options, argc, argv)) {
        cmd_help(&cmd_compare, out);
        return CLI_HELP;
    }
    for (int i = 1; i < argc; i++) {
        if (cmd_option(compare_options, argv[i]) != 0)
            return hb_fail(err, -EINVAL, "unknown option '%s'%s", argv[i],
                           cmd_suggest_option(compare_options, argv[i], near, sizeof(near)));
        if (n < 2) compare_paths[n] = argv[i];
        n++;
    }
    if (n != 2) return hb_fail(err, -EINVAL, "want OLD.json NEW.json, got %d file(s)", n);
    return 0;
}

static int compare_exec(const struct cmd_env *env)
{
    struct evidence_compare_result res;
    struct hb_err err = { 0 };

    UNUSED(env);
    if (evidence_compare(compare_paths[0], compare_paths[1], stdout, &res, &err) < 0)
        return cmd_fail("compare", &err, HB_EXIT_RUNTIME);
    fflush(stdout);
    if (res.comparable > 0) return HB_EXIT_OK;
    fprintf(stderr, "hopbench compare: nothing comparable: %s\n",
            res.matched == 0 ? "no cell is in both files"
                             : "no cell has a valid run in both files");
    return HB_EXIT_INVALID;
}

const struct command cmd_compare = {
    .name = "compare",
    .synopsis = "compare OLD.json NEW.json",
    .summary = "compares two evidence files cell by cell, as benchstat does",
    .usage = compare_usage,
    .options = compare_options,
    .tail = compare_tail,
    .column = 22,
    .hint = true,
    .parse = compare_parse,
    .exec = compare_exec,
};
