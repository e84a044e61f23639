/*
 * merge: `hopbench merge A.json B.json... [-o OUT.json]`, evidence files from
 * processes or hosts that loaded at the same time added up (evidence/merge.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/options.h"
#include "cmd/session.h"
#include "evidence.h"
#include "util.h"

static const char merge_usage[] =
    "usage: hopbench merge A.json B.json... [-o OUT.json]\n"
    "\n"
    "Adds up evidence files (or --jsonl files) from processes or hosts that loaded at the same\n"
    "time. Runs with the same proto, endpoint, mode, size, pipeline, rep and open-loop share\n"
    "(or rate) in different files become one run: ops, connects, errors, client CPU,\n"
    "connections, threads and open-loop rates are summed, the window is the longest of them,\n"
    "ops/s is ops / window, and the latency histograms (the open loop's service time too) are\n"
    "added counter by counter (exactly), with every percentile recomputed from the sum. A run\n"
    "without a counterpart is copied as it is. docs/evidence.md describes every field.\n"
    "\n";

static const struct cmd_option merge_options[] = {
    { "output", 'o', "FILE", "write the merged evidence to FILE (atomically) instead of stdout",
      'o' },
    { "help", 'h', NULL, "this text", 'h' },
    CMD_END,
};

static const char merge_tail[] =
    "\n"
    "Exit codes: 0 merged, 1 a file cannot be read, is not hopbench evidence or holds runs\n"
    "that cannot be added (another histogram layout, a missing field), 64 bad usage.\n";

/* What merge is asked. */
static struct merge_opts {
    const char **paths; /* the input files, in the order given (allocated) */
    size_t npaths;
    const char *out; /* -o, --output; NULL: stdout */
    int argc;        /* its words, for the evidence's command line */
    char **argv;
} merge_opts;

static void merge_release(void)
{
    free(merge_opts.paths);
    merge_opts = (struct merge_opts){ 0 };
}

/* The words, read one by one: no abbreviations, --help anywhere. */
static int merge_parse(int argc, char **argv, FILE *out, struct hb_err *err)
{
    struct merge_opts *o = &merge_opts;

    merge_release();
    if (cmd_asks_help(merge_options, argc, argv)) {
        cmd_help(&cmd_merge, out);
        return CLI_HELP;
    }
    o->argc = argc;
    o->argv = argv;
    if (opt_files_out(merge_options, argc, argv, &o->paths, &o->npaths, &o->out, NULL, 0, err) <
        0) {
        merge_release();
        return -EINVAL;
    }
    if (o->npaths < 2) {
        hb_fail(err, -EINVAL, "want two or more evidence files, got %zu", o->npaths);
        merge_release();
        return -EINVAL;
    }
    return 0;
}

static int merge_exec(const struct cmd_env *env)
{
    const struct merge_opts *o = &merge_opts;
    struct hb_err err = { 0 };
    char shown[TEXT_SAFE_CAP]; /* o->out, text_safe */
    int rc = HB_EXIT_OK;

    UNUSED(env);
    if (evidence_merge(o->paths, o->npaths, o->out, stderr, o->argc, o->argv, &err) < 0)
        rc = cmd_fail("merge", &err, HB_EXIT_RUNTIME);
    else if (o->out != NULL)
        printf("evidence: %s\n", text_safe(shown, sizeof(shown), o->out));
    merge_release();
    return rc;
}

const struct command cmd_merge = {
    .name = "merge",
    .synopsis = "merge A.json B.json... [-o OUT.json]",
    .summary = "adds up evidence files from processes or hosts that loaded at the same time",
    .usage = merge_usage,
    .options = merge_options,
    .tail = merge_tail,
    .column = 22,
    .hint = true,
    .parse = merge_parse,
    .exec = merge_exec,
};
