/*
 * options: the option tables read, drawn and listed, and the values every
 * command's parser checks alike (see options.h).
 */
#include "cmd/options.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "proto/echo.h"
#include "registry.h"
#include "suggest.h"
#include "util.h"

const struct cmd_option cmd_top_options[] = {
    { "help", 'h', NULL, "this text (also 'hopbench help')", 'h' },
    { "version", 0, NULL, "the version (also 'hopbench version')", 'V' },
    CMD_END,
};

const char *const cmd_pin_values[] = { "none", "same", "split", NULL };
const char *const cmd_close_values[] = { "client", "server", "rst", NULL };
const char *const cmd_wait_values[] = { "epoll", "block", NULL };
const char *const cmd_wait_run_values[] = { "epoll", "block", "uring", NULL };
const char *const cmd_netns_values[] = { "same", "other", NULL };
const char *cmd_proto_words[CMD_MAX_PROTOS + 1];
const char *cmd_served_words[CMD_MAX_PROTOS + 1];

/* The protocols' names, from the registry, before main. */
__attribute__((constructor)) static void proto_words_build(void)
{
    const struct proto_entry *pe;
    size_t served = 0;

    for (size_t i = 0; (pe = proto_at(i)) != NULL && i < CMD_MAX_PROTOS; i++) {
        cmd_proto_words[i] = pe->name;
        if (pe->server != NULL) cmd_served_words[served++] = pe->name;
    }
}

int opt_choice(const char *opt, const char *val, const char *const *values, unsigned *index,
               struct hb_err *err)
{
    char list[256] = "", near[160];
    struct suggest s;
    size_t len;

    suggest_init(&s, val);
    for (size_t i = 0; values[i] != NULL; i++) {
        if (strcmp(val, values[i]) == 0) {
            *index = (unsigned)i;
            return 0;
        }
        suggest_add(&s, values[i]);
        len = strlen(list);
        snprintf(list + len, sizeof(list) - len, "%s%s", i > 0 ? ", " : "", values[i]);
    }
    return hb_fail(err, -EINVAL, "%s: '%s' is not one of %s%s", opt, val, list,
                   suggest_text(&s, false, near, sizeof(near)));
}

/* What the top-level help says after the commands' summaries, before its options. */
static const char top_head[] =
    "\n"
    "ENDPOINT: tcp://127.0.0.1:PORT  tcp://[::1]:PORT  tcp://localhost:PORT\n"
    "          unix:/path/to.sock    unix:@name (Linux abstract namespace)\n"
    "          http://HOST:PORT/PATH http+unix://%2Fpath%2Fto.sock/PATH (http's, with its path)\n"
    "PROTO:    ";
static const char top_tail[] =
    "\n"
    "S:        a time: seconds (2, 0.5) or with its unit (500ms, 10s, 2m, 1h)\n"
    "\n"
    "Exit codes: 0 valid results, 1 runtime failure (also: stdout could not be written, as\n"
    "to a full disk; the work goes on), 2 invalid results (a run saw errors or an open loop\n"
    "was saturated; compare: nothing comparable), 64 bad usage, 71 the plan needs more file\n"
    "descriptors or memory than the limits give (refused before anything runs; ulimit -n\n"
    "raises the first), 77 --netns without the right to make a network namespace, 130\n"
    "interrupted (what was measured is still printed and written); run --agent: 3 the agent\n"
    "refused the token, 76 it refused a request as bad or too large.\n"
    "lab and run: Ctrl-C (SIGINT; SIGTERM, SIGHUP and SIGQUIT alike) ends the current run\n"
    "early and writes what was measured; a second one within 250 ms is the same interrupt\n"
    "(timeout(1) signals the process and then its group), one after that aborts at once (what\n"
    "is not yet printed or written is lost; --jsonl lines already written stay whole). A\n"
    "stdout whose reader is gone (hopbench lab | head) ends the work after the current run or\n"
    "cell, as an interrupt if runs were left: SIGPIPE is ignored. The lab stops its server and\n"
    "removes its directory on every one of these paths. serve stops on SIGINT or SIGTERM.\n"
    "'hopbench help SUBCOMMAND' (or 'hopbench SUBCOMMAND --help') describes every option.\n"
    "\n";

static bool table_end(const struct cmd_option *e)
{
    return e->name == NULL && e->help == NULL;
}

/* Whether the option's value may be left out: its name is all in brackets, "[P]". */
static bool optional_arg(const struct cmd_option *t)
{
    size_t n = t->arg != NULL ? strlen(t->arg) : 0;

    return n > 2 && t->arg[0] == '[' && t->arg[n - 1] == ']' && strchr(t->arg + 1, '[') == NULL;
}

/* getopt_long's view of a table. */
struct getopt_table {
    struct option longopts[CMD_MAX_OPTIONS + 1];
    char shortopts[2 * CMD_MAX_OPTIONS + 1];
};

static void getopt_table(const struct cmd_option *t, struct getopt_table *g)
{
    size_t n = 0, s = 0;

    for (; !table_end(t) && n < CMD_MAX_OPTIONS; t++) {
        if (t->name == NULL) continue;
        /* a value named "[P]", all in brackets, may be left out: getopt gives it only as
         * --name=P ("[LABEL=]ENDPOINT" is a value that must be there) */
        g->longopts[n++] = (struct option){ t->name,
                                            t->arg == NULL    ? no_argument
                                            : optional_arg(t) ? optional_argument
                                                              : required_argument,
                                            NULL, t->id };
        if (t->letter == 0) continue;
        g->shortopts[s++] = (char)t->letter;
        if (t->arg != NULL) g->shortopts[s++] = ':';
    }
    g->longopts[n] = (struct option){ NULL, 0, NULL, 0 };
    g->shortopts[s] = '\0';
}

/* The option of table whose short letter is c, or NULL. */
static const struct cmd_option *short_entry(const struct cmd_option *t, int c)
{
    for (; !table_end(t); t++)
        if (t->name != NULL && t->letter != 0 && t->letter == c) return t;
    return NULL;
}

/*
 * The option of the table that the long option name[len] names, as
 * getopt_long picks it: the one of that name, else the only one it begins;
 * NULL when none is, *matches then saying how many it begins (2 or more:
 * ambiguous).
 */
static const struct cmd_option *long_entry(const struct cmd_option *t, const char *name, size_t len,
                                           int *matches)
{
    const struct cmd_option *found = NULL;

    *matches = 0;
    for (; !table_end(t); t++) {
        if (t->name == NULL || strncmp(t->name, name, len) != 0) continue;
        if (t->name[len] == '\0') {
            *matches = 1;
            return t;
        }
        found = t;
        (*matches)++;
    }
    return *matches == 1 ? found : NULL;
}

const char *cmd_suggest_option(const struct cmd_option *t, const char *arg, char *buf, size_t cap)
{
    char word[SUGGEST_WORD_MAX + 1];
    struct suggest s;

    /* "--duraton=5", "-duration": the name alone */
    arg += strspn(arg, "-");
    snprintf(word, sizeof(word), "%.*s", (int)strcspn(arg, "="), arg);
    suggest_init(&s, word);
    for (; !table_end(t); t++)
        if (t->name != NULL) suggest_add(&s, t->name);
    return suggest_text(&s, true, buf, cap);
}

const char *cmd_suggest_proto(const char *word, bool served, char *buf, size_t cap)
{
    const struct proto_entry *pe;
    struct suggest s;

    suggest_init(&s, word);
    for (size_t i = 0; (pe = proto_at(i)) != NULL; i++)
        if (!served || pe->server != NULL) suggest_add(&s, pe->name);
    return suggest_text(&s, false, buf, cap);
}

/*
 * An unknown option, a missing value: getopt's own message is replaced by
 * ours, with the options nearest to an unknown or ambiguous one. A long option is named as written:
 * getopt's optopt is then its table's id (an enum past the letters, not a letter to print), or 0
 * for one that is unknown or ambiguous. A short option is named by its letter.
 */
static int bad_option(const struct command *c, char **argv, struct hb_err *err)
{
    const char *arg = argv[optind - 1], *cmd = c->name;
    size_t n = strcspn(arg, "=");
    const struct cmd_option *lo = NULL;
    char near[160];
    int matches = 0;

    if (strncmp(arg, "--", 2) == 0 && n > 2) lo = long_entry(c->options, arg + 2, n - 2, &matches);
    if (strncmp(arg, "--", 2) == 0 && n > 2 && optopt == 0)
        return hb_fail(err, -EINVAL, "%s: %s option '%.*s'%s", cmd,
                       matches > 1 ? "ambiguous" : "unknown", (int)n, arg,
                       cmd_suggest_option(c->options, arg, near, sizeof(near)));
    if (lo != NULL && optopt == lo->id)
        return hb_fail(err, -EINVAL, "%s: option --%s %s", cmd, lo->name,
                       arg[n] == '=' ? "takes no value" : "needs a value");
    if (short_entry(c->options, optopt) != NULL)
        return hb_fail(err, -EINVAL, "%s: option -%c needs a value", cmd, optopt);
    if (optopt > ' ' && optopt < 127)
        return hb_fail(err, -EINVAL, "%s: unknown option -%c", cmd, optopt);
    return hb_fail(err, -EINVAL, "%s: unknown option or missing value: '%s'", cmd, arg);
}

int cmd_getopt(const struct command *c, int argc, char **argv,
               int (*option)(int id, const char *val, void *opts, struct hb_err *err), void *opts,
               FILE *out, struct hb_err *err)
{
    static struct getopt_table g;
    int id;

    getopt_table(c->options, &g);
    optind = 0;
    opterr = 0;
    while ((id = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
        if (id == 'h') {
            if (out != NULL) cmd_help(c, out);
            return CLI_HELP;
        }
        if (id == '?') return bad_option(c, argv, err);
        if (option(id, optarg, opts, err) < 0) return -EINVAL;
    }
    return 0;
}

int cmd_option(const struct cmd_option *t, const char *arg)
{
    if (arg[0] != '-' || arg[1] == '\0') return 0;
    for (; !table_end(t); t++) {
        if (t->name == NULL) continue;
        if (arg[1] == '-' && strcmp(arg + 2, t->name) == 0) return t->id;
        if (arg[2] == '\0' && t->letter != 0 && arg[1] == t->letter) return t->id;
    }
    return '?';
}

bool cmd_asks_help(const struct cmd_option *table, int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (cmd_option(table, argv[i]) == 'h') return true;
    return false;
}

/*
 * text, its lines after the first from column on (the spaces a line of text
 * begins with are replaced by the column's), then a line end.
 */
static void put_lines(FILE *out, const char *text, unsigned column)
{
    for (const char *p = text;;) {
        size_t len = strcspn(p, "\n");

        fwrite(p, 1, len, out);
        fputc('\n', out);
        if (p[len] == '\0') return;
        p += len + 1;
        p += strspn(p, " ");
        fprintf(out, "%*s", (int)column, "");
    }
}

/*
 * "  -c, --connections N" or "      --mode M", then its help from column on
 * (two spaces after a head that reaches it).
 */
static void put_option(FILE *out, const struct cmd_option *e, unsigned column)
{
    char head[128];
    int n;

    if (e->letter != 0)
        n = snprintf(head, sizeof(head), "  -%c, --%s", e->letter, e->name);
    else
        n = snprintf(head, sizeof(head), "      --%s", e->name);
    if (e->arg != NULL && n > 0 && (size_t)n < sizeof(head))
        n += snprintf(head + n, sizeof(head) - (size_t)n, " %s", e->arg);
    fprintf(out, "%s%*s", head, n < (int)column ? (int)column - n : 2, "");
    put_lines(out, e->help, column);
}

void cmd_help(const struct command *c, FILE *out)
{
    fputs(c->usage, out);
    for (const struct cmd_option *e = c->options; !table_end(e); e++) {
        if (e->name == NULL) {
            fputs(e->help, out);
            continue;
        }
        put_option(out, e, c->column);
    }
    if (c->tail != NULL) fputs(c->tail, out);
}

void cmd_usage(FILE *out, const struct command *const *cmds, size_t n)
{
    char names[256];

    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s hopbench %s\n", i == 0 ? "usage:" : "      ", cmds[i]->synopsis);
    fputs("       hopbench help [SUBCOMMAND] | --help | --version\n"
          "\n"
          "What does the hop between two services on one host cost: TCP loopback or a Unix "
          "socket?\n"
          "\n",
          out);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "  %-7s ", cmds[i]->name);
        put_lines(out, cmds[i]->summary, 10);
    }
    fputs(top_head, out);
    fputs(proto_help(PROTO_HELP_NAMES, names, sizeof(names), 0, 0), out);
    fputs(top_tail, out);
    for (const struct cmd_option *e = cmd_top_options; !table_end(e); e++)
        put_option(out, e, 24);
}

void cmd_values_dump(const struct command *c, FILE *out)
{
    if (c->words != NULL) {
        fputc('-', out);
        for (const char *const *w = c->words; *w != NULL; w++)
            fprintf(out, " %s", *w);
        fputc('\n', out);
    }
    for (const struct cmd_value *v = c->values; v != NULL && v->words != NULL; v++) {
        for (const struct cmd_option *e = c->options; !table_end(e); e++) {
            if (e->name == NULL || e->id != v->id) continue;
            fprintf(out, "--%s", e->name);
            for (const char *const *w = v->words; *w != NULL; w++)
                fprintf(out, " %s", *w);
            fputc('\n', out);
        }
    }
}

void cmd_options_dump(const struct command *c, FILE *out)
{
    for (const struct cmd_option *e = c->options; !table_end(e); e++) {
        if (e->name == NULL) continue;
        if (e->letter != 0) fputc(e->letter, out);
        fprintf(out, " --%s %s\n", e->name, e->arg != NULL ? e->arg : "");
    }
}

int cli_parse_size(const char *s, size_t max, size_t *out)
{
    static const struct {
        const char *suffix;
        uint64_t mult;
    } units[] = { { "", 1 },
                  { "B", 1 },
                  { "k", 1024 },
                  { "K", 1024 },
                  { "KiB", 1024 },
                  { "m", 1024ULL * 1024 },
                  { "M", 1024ULL * 1024 },
                  { "MiB", 1024ULL * 1024 } };
    char digits[32];
    size_t nd = strspn(s, "0123456789");
    uint64_t v;

    if (nd == 0 || nd >= sizeof(digits)) return -EINVAL;
    memcpy(digits, s, nd);
    digits[nd] = '\0';
    if (parse_u64(digits, 1, UINT32_MAX, &v) < 0) return -ERANGE;
    for (size_t i = 0; i < ARRAY_LEN(units); i++) {
        if (strcmp(s + nd, units[i].suffix) != 0) continue;
        if (v * units[i].mult > max) return -ERANGE;
        *out = (size_t)(v * units[i].mult);
        return 0;
    }
    return -EINVAL;
}

/* A duration > 0 (or == 0 when zero_ok), at most a day: seconds, or with a unit (parse_duration).
 */
int opt_seconds(const char *opt, const char *val, bool zero_ok, uint64_t *out, struct hb_err *err)
{
    int rc = parse_duration(val, 86400, out);

    /* parse_duration refuses 0 ("0", "0.0", "0s") as out of range; only a zero, not "-0", is one
     * here */
    if (zero_ok && rc == -ERANGE && strtod(val, NULL) == 0) {
        *out = 0;
        return 0;
    }
    if (rc < 0)
        return hb_fail(err, -EINVAL,
                       "%s: '%s' is not a duration in %s0, 1 day] (seconds, or with a unit: "
                       "500ms, 10s, 2m, 1h)",
                       opt, val, zero_ok ? "[" : "(");
    return 0;
}

int opt_pin(const char *val, enum place_mode *mode, struct hb_err *err)
{
    static const enum place_mode modes[] = { PLACE_NONE, PLACE_SAME, PLACE_SPLIT };
    unsigned i = 0;

    if (opt_choice("--pin", val, cmd_pin_values, &i, err) < 0) return -EINVAL;
    *mode = modes[i];
    return 0;
}

int opt_netns(const char *opt, const char *val, enum netns_mode *mode, struct hb_err *err)
{
    static const enum netns_mode modes[] = { NETNS_SAME, NETNS_OTHER };
    unsigned i = 0;

    if (opt_choice(opt, val, cmd_netns_values, &i, err) < 0) return -EINVAL;
    *mode = modes[i];
    return 0;
}

int opt_size(const char *opt, const char *val, size_t *out, struct hb_err *err)
{
    if (cli_parse_size(val, ECHO_MAX_SIZE, out) < 0)
        return hb_fail(err, -EINVAL, "%s: '%s' is not a size from 1 B to 64 MiB (e.g. 64, 4KiB)",
                       opt, val);
    return 0;
}

int opt_endpoint(struct endpoint *eps, unsigned *n, const char *s, struct hb_err *err)
{
    if (*n == CLI_MAX_ENDPOINTS)
        return hb_fail(err, -EINVAL, "too many endpoints (at most %d)", CLI_MAX_ENDPOINTS);
    if (endpoint_parse(&eps[*n], s, err) < 0) return -EINVAL;
    (*n)++;
    return 0;
}

int opt_check_remote(const struct endpoint *eps, unsigned n, bool allow, struct hb_err *err)
{
    for (unsigned i = 0; i < n; i++)
        if (!allow && !endpoint_is_local(&eps[i]))
            return hb_fail(err, -EINVAL,
                           "%s is not a loopback address; pass --allow-remote to use it",
                           eps[i].text);
    return 0;
}

int opt_rate(const char *val, double *rate, double *share, struct hb_err *err)
{
    char *end = NULL;
    double v;

    errno = 0;
    v = strtod(val, &end);
    if (end == val || errno != 0 || !(v >= 0.001) || v > 1e9) goto bad;
    if (*end == '%' && end[1] == '\0') {
        if (v > 1000) goto bad;
        *share = v / 100;
        *rate = 0;
        return 0;
    }
    if (*end != '\0') goto bad;
    *rate = v;
    *share = 0;
    return 0;
bad:
    return hb_fail(err, -EINVAL,
                   "--rate: '%s' is not a rate in ops/s (e.g. 20000) or a share of the "
                   "closed-loop maximum (e.g. 60%%)",
                   val);
}

int opt_wait(const char *val, bool *block, bool *uring, struct hb_err *err)
{
    bool is_uring = strcmp(val, "uring") == 0;

    if (is_uring && uring == NULL)
        return hb_fail(err, -EINVAL, "--wait: 'uring' is for 'hopbench run' only");
    unsigned i = 0;

    if (opt_choice("--wait", val, uring != NULL ? cmd_wait_run_values : cmd_wait_values, &i, err) <
        0)
        return -EINVAL;
    *block = strcmp(val, "block") == 0;
    if (uring != NULL) *uring = is_uring;
    return 0;
}

int opt_list(const char *opt, const char *val, char *buf, size_t cap, char *toks[CLI_MAX_SIZES],
             unsigned *n, struct hb_err *err)
{
    char *rest = buf, *tok;

    if (str_copy(buf, cap, val) < 0) return hb_fail(err, -EINVAL, "%s: list too long", opt);
    *n = 0;
    while ((tok = strsep(&rest, ",")) != NULL) {
        if (*tok == '\0') return hb_fail(err, -EINVAL, "%s: '%s' has an empty item", opt, val);
        if (*n == CLI_MAX_SIZES)
            return hb_fail(err, -EINVAL, "%s: at most %d items", opt, CLI_MAX_SIZES);
        toks[(*n)++] = tok;
    }
    return 0;
}

/* The place of option id among more, or NULL. */
static const char **value_of(int id, const struct opt_value *more, size_t nmore)
{
    for (size_t i = 0; i < nmore; i++)
        if (more[i].id == id) return more[i].val;
    return NULL;
}

int opt_files_out(const struct cmd_option *table, int argc, char **argv, const char ***paths,
                  size_t *npaths, const char **out, const struct opt_value *more, size_t nmore,
                  struct hb_err *err)
{
    *paths = xcalloc(argc > 0 ? (size_t)argc : 1, sizeof(**paths));
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int c = cmd_option(table, a);
        const char **v = c > 0 ? value_of(c, more, nmore) : NULL;

        if (c == 'o') {
            if (i + 1 >= argc) return hb_fail(err, -EINVAL, "%s needs a file name", a);
            if (*out != NULL) return hb_fail(err, -EINVAL, "-o given twice");
            *out = argv[++i];
        } else if (v != NULL) {
            if (i + 1 >= argc) return hb_fail(err, -EINVAL, "%s needs a value", a);
            if (*v != NULL) return hb_fail(err, -EINVAL, "%s given twice", a);
            *v = argv[++i];
        } else if (c != 0) {
            char near[160];
            return hb_fail(err, -EINVAL, "unknown option '%s'%s", a,
                           cmd_suggest_option(table, a, near, sizeof(near)));
        } else {
            (*paths)[(*npaths)++] = a;
        }
    }
    return 0;
}

int opt_agent_target(const char *cmd, const struct endpoint *ep, const char *token_file,
                     struct agent_token *token, struct hb_err *err)
{
    char what[32];

    if (ep->kind == ENDPOINT_TCP && endpoint_port(ep) == 0)
        return hb_fail(err, -EINVAL, "%s: --agent %s: port 0 cannot be connected to", cmd,
                       ep->text);
    snprintf(what, sizeof(what), "%s: %s", cmd,
             token_file != NULL ? "--agent-token-file" : "--agent");
    return agent_token_read(token, token_file, what, err);
}

static int opt_sample(const char *val, uint64_t *ns, struct hb_err *err)
{
    uint64_t ms = 0;
    int rc = opt_uint("--sample-ms", val, 0, 60000, &ms, err);

    *ns = ms * NS_PER_MS;
    return rc;
}

/* --noisy-threshold: CPUs, more than 0 and at most 4096 (0.1: a tenth of one CPU). */
static int opt_noisy(const char *val, double *cpus, struct hb_err *err)
{
    char *end = NULL;
    double v;

    errno = 0;
    v = strtod(val, &end);
    if (end == val || *end != '\0' || errno != 0 || !(v > 0) || v > 4096)
        return hb_fail(err, -EINVAL,
                       "--noisy-threshold: '%s' is not a number of CPUs in (0, 4096] (e.g. 0.1)",
                       val);
    *cpus = v;
    return 0;
}

static int opt_close(const char *val, enum load_close *c, struct hb_err *err)
{
    static const enum load_close whos[] = { CLOSE_CLIENT, CLOSE_SERVER, CLOSE_RST };
    unsigned i = 0;

    if (opt_choice("--close", val, cmd_close_values, &i, err) < 0) return -EINVAL;
    *c = whos[i];
    return 0;
}

/* Repetitions, for run and lab alike; SHARED_NOT_MINE for another option. */
static int shared_plan_option(int c, const char *val, struct shared_opts *o, struct hb_err *err)
{
    uint64_t v = 0;
    int rc = 0;

    switch (c) {
    case OPT_REPS:
        rc = opt_uint("--reps", val, 1, 1000, &v, err);
        o->reps = (unsigned)v;
        o->reps_given = true;
        break;
    case OPT_SEED:
        rc = opt_uint("--seed", val, 0, CLI_SEED_MAX, &o->seed, err);
        break;
    case OPT_COOLDOWN:
        rc = opt_seconds("--cooldown", val, true, &o->cooldown_ns, err);
        break;
    default:
        rc = SHARED_NOT_MINE;
    }
    return rc;
}

int shared_option(int c, const char *val, struct shared_opts *o, struct hb_err *err)
{
    uint64_t v = 0;
    int rc = 0;

    switch (c) {
    case 'q':
        o->quiet = true;
        break;
    case 'v':
        o->verbose = true;
        break;
    case 'c':
        o->conns_given = true;
        rc = opt_uint("--connections", val, 1, 100000, &v, err);
        o->conns = (unsigned)v;
        break;
    case 't':
        rc = opt_uint("--threads", val, 1, 1024, &v, err);
        o->threads = (unsigned)v;
        break;
    case 'd':
        o->duration_given = true;
        rc = opt_seconds("--duration", val, false, &o->duration_ns, err);
        break;
    case OPT_WARMUP:
        o->warmup_given = true;
        rc = opt_seconds("--warmup", val, true, &o->warmup_ns, err);
        break;
    case OPT_TIMEOUT:
        rc = opt_seconds("--timeout", val, false, &o->timeout_ns, err);
        break;
    case OPT_PIN:
        o->pin_given = true;
        rc = opt_pin(val, &o->pin, err);
        break;
    case OPT_CLOSE:
        o->close_given = true;
        rc = opt_close(val, &o->close, err);
        break;
    case OPT_WAIT:
        o->wait_given = true;
        rc = opt_wait(val, &o->block_wait, &o->uring_wait, err);
        break;
    case OPT_SAMPLE_MS:
        o->sample_given = true;
        rc = opt_sample(val, &o->sample_ns, err);
        break;
    case OPT_NOISY_THRESHOLD:
        rc = opt_noisy(val, &o->noisy_cpus, err);
        break;
    case OPT_PROFILE: /* run's and lab's: the kernel's samples (stack's is its configuration) */
        o->profile = true;
        break;
    case OPT_PROFILE_HZ:
        o->profile = true;
        rc = opt_uint("--profile-hz", val, 10, 20000, &v, err);
        o->profile_hz = (unsigned)v;
        break;
    case OPT_JSON:
        o->json_path = val;
        break;
    case OPT_HTML:
        o->html_path = val;
        break;
    case OPT_JSONL:
        o->jsonl_path = val;
        break;
    case OPT_CSV:
        o->csv_path = val;
        break;
    default:
        rc = shared_plan_option(c, val, o, err);
    }
    return rc;
}
