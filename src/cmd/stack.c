/*
 * stack: `hopbench stack list | NAME`, a real stack built from Debian's
 * servers, measured tcp against unix and removed (src/stack/).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd/options.h"
#include "cmd/session.h"
#include "host/profile.h"
#include "outfile.h"
#include "stack/measure.h"
#include "stack/stack.h"
#include "suggest.h"
#include "util.h"

static const char stack_usage[] =
    "usage: hopbench stack list\n"
    "       hopbench stack NAME [--profile [P]] [--short] [--reps N] [-d S] [--warmup S] [-c N]\n"
    "                           [--jsonl FILE] [--csv FILE] [-q] [--hold] [--netns M]\n"
    "                           [--ablation | --pool N,N,.. | --overload | --starve]\n"
    "       hopbench stack NAME --help   what NAME builds, what it measures, how long it takes\n"
    "\n"
    "Builds a stack from Debian's own servers under configurations hopbench writes into a\n"
    "private temporary directory (its own ports on 127.0.0.1, its own sockets, pid files and\n"
    "logs), each service in its own cgroup made for the run under hopbench's own; waits until\n"
    "every service answers a real request; measures tcp against unix with 'hopbench run'\n"
    "(reps in ABBA order, every reply checked); prints its tables, then what the Unix\n"
    "socket saves per request ('hopbench cost' on each measurement of both transports: the\n"
    "CPU saved per figure with its interval, the rate that saves one vCPU); stops every\n"
    "process and removes every cgroup and file, on every exit path, Ctrl-C included (each\n"
    "stop signal ends the stack early; the tear-down is bounded and is not cut short). A\n"
    "missing server is one line naming the apt-get install command, exit 1. Exit codes as\n"
    "for run.\n"
    "\n";

/* NAME: every stack's name, then "list"; built before main from the stacks' table. */
#define STACK_WORDS_MAX 64
static const char *stack_words[STACK_WORDS_MAX + 2];
static const char stack_list_word[] = "list";

__attribute__((constructor)) static void stack_words_build(void)
{
    size_t n = 0;

    for (; n < STACK_WORDS_MAX && stack_defs[n] != NULL; n++)
        stack_words[n] = stack_defs[n]->name;
    stack_words[n] = stack_list_word;
}

/* The words its options take, which their parsers check against. */
static const struct cmd_value stack_values[] = { { OPT_NETNS, cmd_netns_values }, { 0, NULL } };

static const struct cmd_option stack_options[] = {
    { "profile", 0, "[P]",
      "P: the stack's configuration profile (its --help names them);\n"
      "alone (before another option, NAME or nothing): each run child\n"
      "samples the kernel's stacks (run --profile; root, else exit 77) and\n"
      "the stack prints where each request's CPU goes, tcp - unix by\n"
      "kernel subsystem, after each measurement (docs/profile.md)",
      OPT_PROFILE },
    { "short", 0, NULL, "a quick pass (fewer, shorter runs): a check, not a result", OPT_SHORT },
    { "reps", 0, "N", "runs per transport and cell, ABBA order (default: the stack's)", OPT_REPS },
    { "duration", 'd', "S",
      "each run's measured time (default: the stack's): seconds, or\n"
      "with a unit (500ms, 10s, 2m); so is --warmup's S",
      'd' },
    { "warmup", 0, "S", "each run's discarded start (default: the stack's)", OPT_WARMUP },
    { "connections", 'c', "N",
      "connections of each run (default: the study's load, each stack's\n"
      "--help says; -c 1 is a ping-pong); any N: a pool smaller than\n"
      "the load is a queue, measured",
      'c' },
    { "jsonl", 0, "FILE", "append every run's evidence (run --jsonl lines) to FILE", OPT_JSONL },
    { "csv", 0, "FILE",
      "one CSV row per run of every measurement, in one file (source: the\n"
      "measurement; docs/csv.md lists the columns)",
      OPT_CSV },
    { "html", 0, "FILE",
      "every measurement's evidence drawn as one HTML report (as\n"
      "'hopbench report' draws files; the first 16 measurements), with\n"
      "what the stack printed (its tables and what it reads beside them)",
      OPT_HTML },
    { "quiet", 'q', NULL,
      "no live progress line from the runs (drawn on stderr only when it\n"
      "is a terminal)",
      'q' },
    { "hold", 0, NULL, "after measuring keep the services up until Ctrl-C", OPT_HOLD },
    { "agent", 0, "ENDPOINT",
      "each run child asks the hopbench agent there (beside the\n"
      "services, on this host; not with --netns) for the server side,\n"
      "naming each service by its cgroup as the stack made it; every run\n"
      "record has \"agent\" (docs/agent.md), and the table each service's\n"
      "'agent CPU µs/req' and 'agent/local CPU' rows; a refused token is\n"
      "exit 3, a request the agent refuses as bad or too large or a\n"
      "reply that breaks the protocol 76",
      OPT_AGENT },
    { "agent-token-file", 0, "FILE",
      "the agent's token (its first line; only its owner may\n"
      "read it; default: HOPBENCH_AGENT_TOKEN)",
      OPT_AGENT_TOKEN_FILE },
    { "netns", 0, "M",
      "the services in a network namespace made for the stack, removed\n"
      "after it (needs root); same: the run children there too (its own\n"
      "loopback, the sockets in the private directory); other: the run\n"
      "children in a second namespace joined by a veth pair, so the front\n"
      "hop (client to web server) crosses it while the backend hop stays\n"
      "in the first (the fpm stacks: redis's unix arm is its front hop)",
      OPT_NETNS },
    { "ablation", 0, NULL, "the study's steps from baseline to optimized, one change at a time",
      OPT_ABLATION },
    { "pool", 0, "N,N,..", "the pool-size sweep: pm static with N children, each N", OPT_POOL },
    { "overload", 0, NULL,
      "a pool of 4 with listen.backlog 4 under many connections: how each\n"
      "transport fails",
      OPT_OVERLOAD },
    { "starve", 0, NULL,
      "more kept FastCGI connections than pm.max_children\n"
      "(these four: the fpm stacks; each one's --help says which it runs)",
      OPT_STARVE },
    { "help", 'h', NULL, "this text, or with NAME the stack's own", 'h' },
    CMD_END,
};

/* What `hopbench stack` was asked (stack/opts.h). */
static struct stack_opts stack_opts;

/* --pool N,N,..: pm.max_children values, each 1..1024, at most STACK_MAX_POOL. */
static int stack_pool_list(const char *val, struct stack_opts *o, struct hb_err *err)
{
    char buf[128], *save = NULL;
    uint64_t v;

    if (strlen(val) >= sizeof(buf)) return hb_fail(err, -EINVAL, "stack: --pool: too long");
    snprintf(buf, sizeof(buf), "%s", val);
    o->npool = 0;
    for (char *t = strtok_r(buf, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
        if (o->npool == STACK_MAX_POOL)
            return hb_fail(err, -EINVAL, "stack: --pool: at most %d sizes", STACK_MAX_POOL);
        if (opt_uint("--pool", t, 1, 1024, &v, err) < 0) return -EINVAL;
        o->pool[o->npool++] = (unsigned)v;
    }
    if (o->npool == 0) return hb_fail(err, -EINVAL, "stack: --pool: no size given");
    return 0;
}

/* The stack's command line, for --profile's look at the word after it. */
static int stack_argc;
static char **stack_argv;

static int stack_option(int c, const char *val, void *opts, struct hb_err *err)
{
    struct stack_opts *o = opts;
    uint64_t v;

    switch (c) {
    case OPT_SHORT:
        o->short_mode = true;
        return 0;
    case OPT_REPS:
        if (opt_uint("--reps", val, 1, STACK_MAX_REPS, &v, err) < 0) return -EINVAL;
        o->reps = (unsigned)v;
        return 0;
    case 'd':
        return opt_seconds("--duration", val, false, &o->duration_ns, err);
    case OPT_WARMUP:
        return opt_seconds("--warmup", val, true, &o->warmup_ns, err);
    case 'c':
        if (opt_uint("--connections", val, 1, 10000, &v, err) < 0) return -EINVAL;
        o->conns = (unsigned)v;
        return 0;
    case OPT_JSONL:
        o->jsonl_path = val;
        return 0;
    case OPT_HOLD:
        o->hold = true;
        return 0;
    case OPT_CSV:
        o->csv_path = val;
        return 0;
    case OPT_HTML:
        o->html_path = val;
        return 0;
    case 'q':
        o->quiet = true;
        return 0;
    case OPT_PROFILE:
        /* --profile=P or --profile P: a configuration profile; alone, the kernel's samples */
        if (val == NULL && optind < stack_argc && stack_argv[optind][0] != '-' &&
            stack_find(stack_argv[optind]) == NULL)
            val = stack_argv[optind++];
        if (val == NULL)
            o->kernel_profile = true;
        else
            o->profile = val;
        return 0;
    case OPT_ABLATION:
        o->cases |= STACK_CASE_ABLATION;
        return 0;
    case OPT_POOL:
        o->cases |= STACK_CASE_POOL;
        return stack_pool_list(val, o, err);
    case OPT_OVERLOAD:
        o->cases |= STACK_CASE_OVERLOAD;
        return 0;
    case OPT_STARVE:
        o->cases |= STACK_CASE_STARVE;
        return 0;
    case OPT_NETNS:
        return opt_netns("--netns", val, &o->netns, err);
    case OPT_AGENT:
        o->agent = val;
        return 0;
    case OPT_AGENT_TOKEN_FILE:
        o->agent_token_file = val;
        return 0;
    }
    return hb_fail(err, -EINVAL, "stack: unknown option");
}

/* At most one of the study's cases, one the stack runs, without --profile (each sets its own). */
static int stack_cases_check(const struct stack_def *d, const struct stack_opts *o,
                             struct hb_err *err)
{
    if (o->cases == 0) return 0;
    if ((o->cases & (o->cases - 1)) != 0)
        return hb_fail(err, -EINVAL,
                       "stack: --ablation, --pool, --overload and --starve: one at a time");
    if ((o->cases & d->cases) == 0)
        return hb_fail(err, -EINVAL, "stack %s: --%s: not a case of this stack", d->name,
                       o->cases == STACK_CASE_ABLATION   ? "ablation"
                       : o->cases == STACK_CASE_POOL     ? "pool"
                       : o->cases == STACK_CASE_OVERLOAD ? "overload"
                                                         : "starve");
    if (o->profile != NULL)
        return hb_fail(err, -EINVAL, "stack %s: --profile: the case sets its own", d->name);
    return 0;
}

/* --agent's endpoint and token, read now so that a bad one is a usage error before any service. */
static int stack_agent_check(const struct stack_opts *o, struct hb_err *err)
{
    static struct agent_token token;
    struct endpoint ep;

    if (o->agent == NULL) {
        if (o->agent_token_file != NULL)
            return hb_fail(err, -EINVAL, "stack: --agent-token-file needs --agent ENDPOINT");
        return 0;
    }
    if (endpoint_parse(&ep, o->agent, err) < 0) return -EINVAL;
    return opt_agent_target("stack", &ep, o->agent_token_file, &token, err);
}

/* The stack named first among the words, for its own --help: "stack redis --help". */
static const struct stack_def *stack_named(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (argv[i][0] != '-') return stack_find(argv[i]);
    return NULL;
}

static int stack_parse(int argc, char **argv, FILE *out, struct hb_err *err)
{
    struct stack_opts *o = &stack_opts;
    int rc;

    memset(o, 0, sizeof(*o));
    o->warmup_ns = UINT64_MAX;
    stack_argc = argc;
    stack_argv = argv;
    rc = cmd_getopt(&cmd_stack, argc, argv, stack_option, o, NULL, err);
    if (rc == CLI_HELP) {
        const struct stack_def *d = stack_named(argc, argv);
        if (d != NULL)
            stack_help(d, out);
        else
            cmd_help(&cmd_stack, out);
        if (d == NULL) fputs("\nStacks:\n", out);
        if (d == NULL) stack_list(out);
    }
    if (rc != 0) return rc;
    if (optind >= argc)
        return hb_fail(err, -EINVAL, "stack: missing NAME ('hopbench stack list' names them)");
    o->name = argv[optind++];
    if (optind < argc)
        return hb_fail(err, -EINVAL, "stack: unexpected argument '%s'", argv[optind]);
    if (strcmp(o->name, stack_list_word) == 0) {
        o->list = true;
        o->name = NULL;
        return 0;
    }
    if (stack_find(o->name) == NULL) {
        struct suggest s;
        char near[160];
        suggest_init(&s, o->name);
        for (unsigned i = 0; stack_words[i] != NULL; i++)
            suggest_add(&s, stack_words[i]);
        return hb_fail(err, -EINVAL, "stack: no stack '%s' ('hopbench stack list' names them)%s",
                       o->name, suggest_text(&s, false, near, sizeof(near)));
    }
    if (stack_cases_check(stack_find(o->name), o, err) < 0) return -EINVAL;
    if (stack_agent_check(o, err) < 0) return -EINVAL;
    if (o->agent != NULL && o->netns != NETNS_NONE)
        return hb_fail(err, -EINVAL,
                       "stack %s: --agent and --netns: the stack's namespaces are made after "
                       "the agent would have to be started in them; use one or the other",
                       o->name);
    if (o->netns == NETNS_OTHER && stack_find(o->name)->front_unix)
        return hb_fail(err, -EINVAL,
                       "stack %s: --netns other: its unix arm is the front hop, which cannot "
                       "cross the veth pair (TCP only); use --netns same",
                       o->name);
    if (o->profile != NULL) return stack_profile_check(stack_find(o->name), o->profile, err);
    return 0;
}

static int stack_exec(const struct cmd_env *env)
{
    const struct stack_opts *o = &stack_opts;
    struct hb_err err = { 0 };
    enum stack_verdict verdict;
    int rc;

    if (o->list) {
        stack_list(stdout);
        return HB_EXIT_OK;
    }
    if (o->jsonl_path != NULL && outfile_check(o->jsonl_path, OUTFILE_APPEND, &err) < 0)
        return cmd_fail("stack", &err, HB_EXIT_RUNTIME);
    if (o->html_path != NULL && cmd_check_output("stack", o->html_path) != HB_EXIT_OK)
        return HB_EXIT_RUNTIME;
    if (o->csv_path != NULL && cmd_check_output("stack", o->csv_path) != HB_EXIT_OK)
        return HB_EXIT_RUNTIME;
    if (o->kernel_profile && profile_check(&err) < 0)
        return cmd_fail("stack", &err, err.code == -EACCES ? HB_EXIT_NOPERM : HB_EXIT_RUNTIME);
    env->signals(CMD_SIG_NO_ABORT | CMD_SIG_STOP);
    rc = stack_run(o, stdout, env->stop, &verdict, &err);
    if (rc < 0)
        return cmd_fail("stack", &err,
                        rc == -EPERM && o->netns != NETNS_NONE ? HB_EXIT_NOPERM
                        : rc == STACK_AGENT_AUTH               ? HB_EXIT_AGENT_AUTH
                        : rc == STACK_AGENT_PROTOCOL           ? HB_EXIT_PROTOCOL
                                                               : HB_EXIT_RUNTIME);
    if (verdict == STACK_INVALID) {
        fprintf(stderr, "hopbench stack: results are invalid: some runs saw errors or were "
                        "saturated (see above)\n");
        return HB_EXIT_INVALID;
    }
    if (verdict == STACK_INTERRUPTED) return HB_EXIT_INTERRUPTED;
    return cmd_stdout_failed() ? HB_EXIT_RUNTIME : HB_EXIT_OK;
}

const struct command cmd_stack = {
    .name = "stack",
    .synopsis = "stack list | NAME [OPTIONS]",
    .summary = "builds a real stack ('hopbench stack list' names them) from Debian's servers\n"
               "in a private directory and cgroups, measures it tcp against unix, prices the\n"
               "saving, removes it",
    .usage = stack_usage,
    .options = stack_options,
    .words = stack_words,
    .values = stack_values,
    .tail = NULL,
    .column = 19,
    .parse = stack_parse,
    .exec = stack_exec,
};
