/*
 * test_cli: every option a command line takes is in the --help text that the
 * command prints. For the top level and each subcommand (run, serve, lab,
 * compare, merge, report, cost, stack, agent) it walks the option table the parser uses (struct
 * cli_spec) and looks in the printed help for a line of each option's own that starts with
 * "--name", or with "-x, --name" when the option has a short letter. The checker itself is tested
 * on a help text that lacks an option, so that this test can fail.
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <ctype.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "lab.h"
#include "stack/opts.h"

static bool name_char(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '_';
}

/*
 * Does a line of text start (after spaces) with word, not as a part of a longer
 * option name ("--json" in "--jsonl")? That is an option's own entry in a help
 * text; an option only named in another's description is not described.
 */
static bool has_entry(const char *text, const char *word)
{
    size_t len = strlen(word);

    for (const char *p = strstr(text, word); p != NULL; p = strstr(p + 1, word)) {
        const char *b = p;

        while (b > text && b[-1] == ' ')
            b--;
        if ((b == text || b[-1] == '\n') && !name_char(p[len])) return true;
    }
    return false;
}

static bool is_short(const struct cli_spec *s, int c)
{
    return c > 0 && c < 256 && c != ':' && strchr(s->shortopts, c) != NULL;
}

/* The options of s that text does not describe, each printed; returns their number. */
static unsigned missing_options(const struct cli_spec *s, const char *text)
{
    unsigned missing = 0;

    for (const struct option *o = s->longopts; o->name != NULL; o++) {
        char want[128];

        if (is_short(s, o->val))
            snprintf(want, sizeof(want), "-%c, --%s", o->val, o->name);
        else
            snprintf(want, sizeof(want), "--%s", o->name);
        if (!has_entry(text, want)) {
            print_message("%s --help does not describe '%s'\n", s->name, want);
            missing++;
        }
    }
    return missing;
}

/* The options of table that text does not describe, each printed; returns their number. */
static unsigned missing_entries(const char *name, const struct cmd_option *t, const char *text)
{
    unsigned missing = 0;

    for (; t->name != NULL || t->help != NULL; t++) {
        char want[128];

        if (t->name == NULL) continue;
        if (t->letter != 0)
            snprintf(want, sizeof(want), "-%c, --%s", t->letter, t->name);
        else
            snprintf(want, sizeof(want), "--%s", t->name);
        if (!has_entry(text, want)) {
            print_message("%s --help does not describe '%s'\n", name, want);
            missing++;
        }
    }
    return missing;
}

/* What c's parser prints for "NAME --help": cmd_help's text, which describes every option. */
static void check_command(const struct command *c)
{
    char cmd[16], help[] = "--help";
    char *argv[] = { cmd, help, NULL };
    char *printed = NULL, *drawn = NULL;
    size_t len = 0;
    struct hb_err err = { 0 };
    FILE *out = open_memstream(&printed, &len);

    snprintf(cmd, sizeof(cmd), "%s", c->name);
    assert_non_null(out);
    assert_int_equal(c->parse(2, argv, out, &err), CLI_HELP);
    fclose(out);
    out = open_memstream(&drawn, &len);
    assert_non_null(out);
    cmd_help(c, out);
    fclose(out);
    assert_string_equal(printed, drawn);
    assert_int_equal(missing_entries(c->name, c->options, printed), 0);
    free(printed);
    free(drawn);
}

/* A short letter of the optstring that no long option has could not be described. */
static unsigned unnamed_letters(const struct cli_spec *s)
{
    unsigned n = 0;

    for (const char *c = s->shortopts; *c != '\0'; c++) {
        const struct option *o = s->longopts;

        if (*c == ':') continue;
        while (o->name != NULL && o->val != *c)
            o++;
        if (o->name == NULL) {
            print_message("%s: -%c has no long option in the table\n", s->name, *c);
            n++;
        }
    }
    return n;
}

/* What "hopbench NAME --help" prints (NAME NULL: "hopbench --help"). */
static char *printed_help(const char *name)
{
    char cmd[16], help[] = "--help";
    char *argv[] = { cmd, help, NULL };
    char *buf = NULL;
    size_t len = 0;
    FILE *out;
    struct hb_err err = { 0 };
    int rc = CLI_HELP;

    snprintf(cmd, sizeof(cmd), "%s", name != NULL ? name : "hopbench");
    out = open_memstream(&buf, &len);
    assert_non_null(out);
    if (name == NULL) {
        cli_usage(out);
    } else if (strcmp(name, "run") == 0) {
        struct run_opts o;
        rc = cli_parse_run(2, argv, &o, out, &err);
    }
    fclose(out);
    assert_int_equal(rc, CLI_HELP);
    return buf;
}

/* The help as printed is the spec's, and it describes every option of the spec's table. */
static void check_spec(const struct cli_spec *s, const char *name)
{
    char *text = printed_help(name);

    assert_non_null(text);
    assert_string_equal(text, s->help);
    assert_int_equal(missing_options(s, text) + unnamed_letters(s), 0);
    free(text);
}

static void test_top(void **state)
{
    static const char *const subs[] = { "lab",    "run",  "serve", "compare", "merge",
                                        "report", "cost", "stack", "agent" };
    unsigned missing = 0;

    (void)state;
    check_spec(&cli_spec_top, NULL);
    /* each subcommand main() dispatches has a line of its own: "  NAME    what it does" */
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
        char want[32];
        snprintf(want, sizeof(want), "\n  %s ", subs[i]);
        if (strstr(cli_spec_top.help, want) == NULL) {
            print_message("hopbench --help does not list the subcommand '%s'\n", subs[i]);
            missing++;
        }
    }
    assert_int_equal(missing, 0);
}

static void test_run(void **state)
{
    (void)state;
    check_spec(&cli_spec_run, "run");
}

static void test_agent(void **state)
{
    (void)state;
    check_command(&cmd_agent);
}

static void test_serve(void **state)
{
    (void)state;
    check_command(&cmd_serve);
}

static void test_lab(void **state)
{
    (void)state;
    check_command(&cmd_lab);
}

static void test_compare(void **state)
{
    (void)state;
    check_command(&cmd_compare);
}

static void test_merge(void **state)
{
    (void)state;
    check_command(&cmd_merge);
}

static void test_report(void **state)
{
    (void)state;
    check_command(&cmd_report);
}

static void test_cost(void **state)
{
    (void)state;
    check_command(&cmd_cost);
}

/* stack --help is cmd_help's text, then the list of the stacks. */
static void test_stack(void **state)
{
    char cmd[] = "stack", help[] = "--help";
    char *argv[] = { cmd, help, NULL };
    char *text = NULL, *drawn = NULL;
    size_t len = 0;
    struct hb_err err = { 0 };
    FILE *out = open_memstream(&text, &len);

    (void)state;
    assert_non_null(out);
    assert_int_equal(cmd_stack.parse(2, argv, out, &err), CLI_HELP);
    fclose(out);
    out = open_memstream(&drawn, &len);
    assert_non_null(out);
    cmd_help(&cmd_stack, out);
    fclose(out);
    assert_int_equal(strncmp(text, drawn, strlen(drawn)), 0);
    assert_non_null(strstr(text + strlen(drawn), "\nStacks:\n"));
    assert_int_equal(missing_entries("stack", cmd_stack.options, text), 0);
    free(text);
    free(drawn);
}

/* The checker finds an option that is missing, one that is only a prefix of another's name,
 * one only named in the synopsis or another's description, a short letter not given with its
 * long name, and a short letter without a long option. */
static void test_checker_fails(void **state)
{
    static const struct option opts[] = {
        { "alpha", required_argument, NULL, 'a' },
        { "beta", no_argument, NULL, 256 },
        { "json", required_argument, NULL, 257 },
        { "gamma", no_argument, NULL, 'g' },
        { "delta", no_argument, NULL, 258 },
        { "epsilon", no_argument, NULL, 259 },
        { NULL, 0, NULL, 0 },
    };
    static const struct cli_spec s = {
        "fake",
        "usage: fake [--delta]\n"
        "  -a, --alpha X   the alpha\n"
        "      --jsonl F   a line per run\n"
        "      --gamma     -g is not next to it\n"
        "      --epsilon   beta is not here, --delta is only named\n",
        "a:gz",
        opts,
    };

    (void)state;
    /* --beta (absent), --json (only --jsonl), -g, --gamma (not together), --delta (named) */
    assert_int_equal(missing_options(&s, s.help), 4);
    /* -z has no long option */
    assert_int_equal(unnamed_letters(&s), 1);
}

static void test_cli_option(void **state)
{
    (void)state;
    assert_int_equal(cmd_option(cmd_merge.options, "-o"), 'o');
    assert_int_equal(cmd_option(cmd_merge.options, "--output"), 'o');
    assert_int_equal(cmd_option(cmd_merge.options, "--help"), 'h');
    assert_int_equal(cmd_option(cmd_merge.options, "-h"), 'h');
    assert_int_equal(cmd_option(cmd_merge.options, "--out"), '?'); /* no abbreviations */
    assert_int_equal(cmd_option(cmd_merge.options, "--output=x"), '?');
    assert_int_equal(cmd_option(cmd_merge.options, "-oh"), '?');
    assert_int_equal(cmd_option(cmd_merge.options, "--"), '?');
    assert_int_equal(cmd_option(cmd_merge.options, "-x"), '?');
    assert_int_equal(cmd_option(cmd_merge.options, "-"), 0);
    assert_int_equal(cmd_option(cmd_merge.options, "a.json"), 0);
    assert_int_equal(cmd_option(cmd_compare.options, "-o"), '?');
    assert_int_equal(cli_option(&cli_spec_top, "--version"), 'V');
    assert_int_equal(cli_option(&cli_spec_top, "-V"), '?'); /* not a short letter of it */
    assert_int_equal(cli_option(&cli_spec_top, "--quick"), '?');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_top),           cmocka_unit_test(test_run),
        cmocka_unit_test(test_serve),         cmocka_unit_test(test_agent),
        cmocka_unit_test(test_lab),           cmocka_unit_test(test_compare),
        cmocka_unit_test(test_merge),         cmocka_unit_test(test_report),
        cmocka_unit_test(test_cost),          cmocka_unit_test(test_stack),
        cmocka_unit_test(test_checker_fails), cmocka_unit_test(test_cli_option),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
