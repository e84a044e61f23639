/*
 * cost: `hopbench cost EVIDENCE`, what the Unix socket saves in each cell of
 * run or lab evidence and what that is worth (cost.c does the arithmetic);
 * with --json the same figures written.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/options.h"
#include "cmd/session.h"
#include "cost.h"
#include "report/report.h"
#include "report/saving.h"
#include "util.h"

static const char cost_usage[] =
    "usage: hopbench cost EVIDENCE [--traffic LIST] [--price USD] [--app-work LIST]\n"
    "                     [--seed N] [--json FILE]\n"
    "\n"
    "What a Unix socket saves over TCP loopback, and what that is worth, from the evidence of\n"
    "a run or lab (a document or --jsonl file, merged or not) that measured both transports.\n"
    "Runs are grouped into cells as compare does (proto, mode, size, connections, pipeline,\n"
    "open-loop share or rate), tcp on one side and unix on the other; only valid runs that\n"
    "Ctrl-C did not cut short count. For each CPU figure the evidence holds (client, server,\n"
    "their sum, the whole system with softirq) and latency (p50, mean) it prints the median\n"
    "of each transport, the saving per request, tcp - unix (negative: the Unix socket costs\n"
    "more), and whether it is significant (Mann-Whitney p < 0.05, the interval excluding 0;\n"
    "5 runs a side at least). Only a significant difference is priced, any other is said to\n"
    "be one: the CPU saved per month (30 days) at each traffic volume, its share of one vCPU\n"
    "and its price, the sustained request rate that saves one whole vCPU, and the saving as\n"
    "a share of all CPU per request once the application adds its own work. The second line\n"
    "is the bottom line: the largest significant saving of CPU per request of client and\n"
    "server together and the rate at which it is one vCPU. With two runs or more per\n"
    "transport every figure carries a 95 % bootstrap interval of the ratio of medians\n"
    "(seeded, so the same evidence prints the same).\n"
    "\n";

static const struct cmd_option cost_options[] = {
    { "traffic", 0, "LIST",
      "volumes, N[k|M|G]/UNIT with UNIT s, min, h, day or month\n"
      "(default 100k/month,1M/month,10M/month,100M/month,1M/day,1k/s)",
      OPT_TRAFFIC },
    { "price", 0, "USD", "USD per vCPU-month (default 25, an assumption; say yours)", OPT_PRICE },
    { "app-work", 0, "LIST",
      "CPU time the application adds per request, ns, us, ms or s\n"
      "(default 1ms,10ms,50ms)",
      OPT_APP_WORK },
    { "seed", 0, "N", "seed of the bootstrap (default 1; at most 2^53-1)", OPT_SEED },
    { "json", 0, "FILE", "also write the figures as JSON (atomically)", OPT_JSON },
    { "help", 'h', NULL, "this text", 'h' },
    CMD_END,
};

static const char cost_tail[] =
    "\n"
    "Exit codes: 0 computed, 1 the evidence cannot be read or is not hopbench evidence (or\n"
    "--json cannot be written), 2 no cell has a counted run over both tcp and unix, 64 bad\n"
    "usage.\n";

/* The plan (--traffic, --price, --app-work, --seed) and the files. */
static struct cost_opts {
    struct cost_plan plan;
    const char *evidence_path;
    const char *json_path; /* --json; NULL: none */
} cost_opts;

_Static_assert(CLI_MAX_SIZES <= COST_MAX_LIST, "a --traffic list fits the plan");

/* --traffic or --app-work: each item of the list through parse, into the plan. */
static int cost_list(const char *opt, const char *val, struct cost_plan *p, struct hb_err *err)
{
    char buf[256], *toks[CLI_MAX_SIZES];
    struct hb_err e = { 0 };
    unsigned n = 0;
    bool traffic = strcmp(opt, "--traffic") == 0;

    if (opt_list(opt, val, buf, sizeof(buf), toks, &n, err) < 0) return -EINVAL;
    for (unsigned i = 0; i < n; i++) {
        int rc = traffic ? cost_traffic_parse(toks[i], &p->traffic[i], &e)
                         : cost_app_work_parse(toks[i], &p->app_ns[i], &e);
        if (rc < 0) return hb_fail(err, -EINVAL, "cost: %s: %s", opt, e.msg);
    }
    if (traffic)
        p->ntraffic = n;
    else
        p->napp = n;
    return 0;
}

static int cost_option(int c, const char *val, void *opts, struct hb_err *err)
{
    struct cost_opts *o = opts;
    char *end;

    switch (c) {
    case OPT_TRAFFIC:
        return cost_list("--traffic", val, &o->plan, err);
    case OPT_APP_WORK:
        return cost_list("--app-work", val, &o->plan, err);
    case OPT_PRICE:
        errno = 0;
        o->plan.price_usd = strtod(val, &end);
        if (errno != 0 || end == val || *end != '\0' || !isfinite(o->plan.price_usd) ||
            !(o->plan.price_usd > 0) || !isdigit((unsigned char)val[0]))
            return hb_fail(err, -EINVAL, "cost: --price: '%s' is not USD per vCPU-month above 0",
                           val);
        o->plan.price_given = true;
        return 0;
    case OPT_SEED:
        return opt_uint("cost: --seed", val, 0, CLI_SEED_MAX, &o->plan.seed, err);
    case OPT_JSON:
        o->json_path = val;
        return 0;
    }
    return hb_fail(err, -EINVAL, "cost: unhandled option");
}

static int cost_parse(int argc, char **argv, FILE *out, struct hb_err *err)
{
    struct cost_opts *o = &cost_opts;
    struct hb_err e = { 0 };
    int rc;

    memset(o, 0, sizeof(*o));
    o->plan.price_usd = COST_PRICE_USD;
    o->plan.seed = 1;
    if (cost_list("--traffic", "100k/month,1M/month,10M/month,100M/month,1M/day,1k/s", &o->plan,
                  &e) < 0 ||
        cost_list("--app-work", "1ms,10ms,50ms", &o->plan, &e) < 0)
        return hb_fail(err, -EINVAL, "cost: bad defaults: %s", e.msg);
    rc = cmd_getopt(&cmd_cost, argc, argv, cost_option, o, out, err);
    if (rc != 0) return rc;
    if (optind >= argc)
        return hb_fail(err, -EINVAL, "cost: missing EVIDENCE (a .json or .jsonl file)");
    o->evidence_path = argv[optind++];
    if (optind < argc)
        return hb_fail(err, -EINVAL, "cost: unexpected argument '%s' (one EVIDENCE file)",
                       argv[optind]);
    return 0;
}

static int cost_exec(const struct cmd_env *env)
{
    const struct cost_opts *o = &cost_opts;
    struct cost_set set = { 0 };
    struct hb_err err = { 0 };
    size_t ok = 0;
    int rc;

    UNUSED(env);
    if (o->json_path != NULL && cmd_check_output("cost", o->json_path) != HB_EXIT_OK)
        return HB_EXIT_RUNTIME;
    if (cost_read(o->evidence_path, &set, &err) < 0) {
        rc = cmd_fail("cost", &err, HB_EXIT_RUNTIME);
        goto out;
    }
    for (size_t i = 0; i < set.ncells; i++)
        ok += report_saving_cell_ok(&set.cells[i]);
    if (ok == 0) {
        hb_fail(&err, -EINVAL, "%s: no cell has a counted run over both tcp and unix",
                o->evidence_path);
        rc = cmd_fail("cost", &err, HB_EXIT_INVALID);
        goto out;
    }
    report_saving_table(stdout, o->evidence_path, &set, &o->plan);
    rc = HB_EXIT_OK;
    if (o->json_path != NULL) {
        json_t *doc = report_saving_json(o->evidence_path, &set, &o->plan);
        if (doc == NULL)
            hb_fail(&err, -EINVAL, "the figures cannot be encoded as JSON (a path not UTF-8?)");
        if (doc == NULL || report_json_write(o->json_path, doc, &err) < 0)
            rc = cmd_fail("cost", &err, HB_EXIT_RUNTIME);
        json_decref(doc);
    }
    if (rc == HB_EXIT_OK && cmd_stdout_failed()) rc = HB_EXIT_RUNTIME;
out:
    cost_set_release(&set);
    return rc;
}

const struct command cmd_cost = {
    .name = "cost",
    .synopsis = "cost EVIDENCE [--traffic LIST] [--price USD] [--app-work LIST]",
    .summary = "what the Unix socket saves per request and per month, from run or lab evidence",
    .usage = cost_usage,
    .options = cost_options,
    .tail = cost_tail,
    .column = 24,
    .parse = cost_parse,
    .exec = cost_exec,
};
