/*
 * test_cli: every option a command line takes is in the --help text that the
 * command prints, and in the list `hopbench help --options` prints. For the top
 * level and each command (run, serve, lab, compare, merge, report, cost,
 * stack, agent) it walks the option table the parser reads (struct
 * cmd_option) and looks in the printed help for a line of each option's own
 * that starts with "--name ARG", or with "-x, --name ARG" when the option has
 * a short letter; the list gives the same. The checker itself is tested on a
 * help text that lacks an option, so that this test can fail.
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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/options.h"

/* The commands, in the order main.c's table has them. */
static const struct command *const commands[] = { &cmd_lab,     &cmd_run,   &cmd_serve,
                                                  &cmd_compare, &cmd_merge, &cmd_report,
                                                  &cmd_cost,    &cmd_stack, &cmd_agent };

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

/* "-c, --connections N" or "--mode M": how an option's entry begins. */
static void entry_head(const struct cmd_option *t, char *want, size_t cap)
{
    if (t->letter != 0)
        snprintf(want, cap, "-%c, --%s%s%s", t->letter, t->name, t->arg ? " " : "",
                 t->arg ? t->arg : "");
    else
        snprintf(want, cap, "--%s%s%s", t->name, t->arg ? " " : "", t->arg ? t->arg : "");
}

/* The options of table that text does not describe, each printed; returns their number. */
static unsigned missing_entries(const char *name, const struct cmd_option *t, const char *text)
{
    unsigned missing = 0;

    for (; t->name != NULL || t->help != NULL; t++) {
        char want[128];

        if (t->name == NULL) continue;
        entry_head(t, want, sizeof(want));
        if (!has_entry(text, want)) {
            print_message("%s --help does not describe '%s'\n", name, want);
            missing++;
        }
    }
    return missing;
}

/* What fn(c, out) prints (c NULL: the top-level help), allocated. */
static char *drawn(const struct command *c, void (*fn)(const struct command *, FILE *))
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);

    assert_non_null(out);
    if (c == NULL)
        cmd_usage(out, commands, sizeof(commands) / sizeof(commands[0]));
    else
        fn(c, out);
    fclose(out);
    return text;
}

/* What c's parser prints for "NAME --help". */
static char *printed_help(const struct command *c)
{
    char cmd[16], help[] = "--help";
    char *argv[] = { cmd, help, NULL };
    char *text = NULL;
    size_t len = 0;
    struct hb_err err = { 0 };
    FILE *out = open_memstream(&text, &len);

    snprintf(cmd, sizeof(cmd), "%s", c->name);
    assert_non_null(out);
    assert_int_equal(c->parse(2, argv, out, &err), CLI_HELP);
    fclose(out);
    return text;
}

/* c's parser prints cmd_help's text (stack: then the stacks), which describes every option. */
static void check_command(const struct command *c)
{
    char *printed = printed_help(c), *help = drawn(c, cmd_help);

    if (c == &cmd_stack) {
        assert_int_equal(strncmp(printed, help, strlen(help)), 0);
        assert_non_null(strstr(printed + strlen(help), "\nStacks:\n"));
    } else {
        assert_string_equal(printed, help);
    }
    assert_int_equal(missing_entries(c->name, c->options, printed), 0);
    free(printed);
    free(help);
}

static void test_commands(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        check_command(commands[i]);
}

/*
 * The list `hopbench help --options NAME` prints (the man page's test reads
 * it) is the table's options, each with its letter and value as --help shows
 * them, and nothing else.
 */
static void test_dump(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        const struct command *c = commands[i];
        char *list = drawn(c, cmd_options_dump), *help = drawn(c, cmd_help), *save = NULL;
        unsigned lines = 0, options = 0;

        for (const struct cmd_option *t = c->options; t->name != NULL || t->help != NULL; t++)
            options += t->name != NULL;
        for (char *l = strtok_r(list, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
            char letter[2] = "", name[64] = "", arg[64] = "", want[160];

            lines++;
            if (l[0] != ' ') letter[0] = l[0];
            assert_true(sscanf(l + (l[0] != ' '), " %63s %63s", name, arg) >= 1);
            if (letter[0] != '\0')
                snprintf(want, sizeof(want), "-%s, %s%s%s", letter, name, arg[0] ? " " : "", arg);
            else
                snprintf(want, sizeof(want), "%s%s%s", name, arg[0] ? " " : "", arg);
            if (!has_entry(help, want)) print_message("%s: '%s' not in --help\n", c->name, want);
            assert_true(has_entry(help, want));
        }
        assert_int_equal(lines, options);
        free(list);
        free(help);
    }
}

/* The top-level help: a line of its own for each command, and its own options described. */
static void test_top(void **state)
{
    char *text = drawn(NULL, NULL);
    unsigned missing = 0;

    (void)state;
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        char want[32];
        snprintf(want, sizeof(want), "\n  %s ", commands[i]->name);
        if (strstr(text, want) == NULL) {
            print_message("hopbench --help does not list the command '%s'\n", commands[i]->name);
            missing++;
        }
    }
    assert_int_equal(missing, 0);
    assert_int_equal(missing_entries("hopbench", cmd_top_options, text), 0);
    free(text);
}

/* The checker finds an option that is missing, one that is only a prefix of another's name,
 * one only named in the synopsis or another's description, a short letter not given with its
 * long name, and a value's name that differs. */
static void test_checker_fails(void **state)
{
    static const struct cmd_option opts[] = {
        { "alpha", 'a', "X", "the alpha", 'a' }, { "beta", 0, NULL, "the beta", 256 },
        { "json", 0, "F", "a file", 257 },       { "gamma", 'g', NULL, "the gamma", 'g' },
        { "delta", 0, NULL, "the delta", 258 },  { "epsilon", 0, NULL, "the epsilon", 259 },
        { "zeta", 0, "N", "the zeta", 260 },     CMD_END,
    };
    static const char text[] = "usage: fake [--delta]\n"
                               "  -a, --alpha X   the alpha\n"
                               "      --jsonl F   a line per run\n"
                               "      --gamma     -g is not next to it\n"
                               "      --epsilon   beta is not here, --delta is only named\n"
                               "      --zeta M    another value's name\n";

    (void)state;
    /* --beta (absent), --json (only --jsonl), -g, --gamma (not together), --delta (named),
     * --zeta N (M) */
    assert_int_equal(missing_entries("fake", opts, text), 5);
}

/*
 * What c's parser says to the words before, then "--opt val" (opt NULL: val
 * as the first word), then the words after: its message, "" when taken.
 */
static const char *said(const struct command *c, const char *const *before, const char *opt,
                        const char *val, const char *const *after)
{
    static char words[16][64];
    static struct hb_err err;
    char *argv[17];
    int n = 0;

    memset(&err, 0, sizeof(err));
    snprintf(words[n], sizeof(words[n]), "%s", c->name);
    argv[n] = words[n];
    n++;
    for (; before != NULL && *before != NULL; before++, n++)
        argv[n] = strcpy(words[n], *before);
    if (opt != NULL) {
        argv[n] = strcpy(words[n], opt);
        n++;
    }
    argv[n] = strcpy(words[n], val);
    n++;
    for (; after != NULL && *after != NULL; after++, n++)
        argv[n] = strcpy(words[n], *after);
    argv[n] = NULL;
    return c->parse(n, argv, NULL, &err) < 0 ? err.msg : "";
}

/* What a command's parser needs before and after an option's value. */
static const char *const *words_before(const struct command *c)
{
    static const char *const run[] = { NULL },
                             *const serve[] = { "echo", "--listen", "unix:/x", NULL },
                             *const stack[] = { "redis", NULL };

    return c == &cmd_serve ? serve : c == &cmd_stack ? stack : run;
}

/* Whether the parser refused val as a word it does not take: its message quotes it. */
static bool refused(const char *msg, const char *val)
{
    char quoted[80];

    snprintf(quoted, sizeof(quoted), "'%s'", val);
    return strstr(msg, quoted) != NULL;
}

/*
 * The lists `hopbench help --values` prints, which the bash completion
 * offers, are the parsers' own: every word of an option's list, and of a
 * command's first word's, is taken by that command's parser, and a word not
 * in them is refused (so the check can fail). Each list's option is in the
 * command's table.
 */
static void test_values(void **state)
{
    static const char *const run_after[] = { "echo", "tcp://127.0.0.1:9", NULL };
    static const char *const ep[] = { "unix:/x", NULL }, *const listen[] = { "--listen", "unix:/x",
                                                                             NULL };
    unsigned lists = 0;

    (void)state;
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        const struct command *c = commands[i];
        const char *const *after = c == &cmd_run ? run_after : NULL;

        for (const struct cmd_value *v = c->values; v != NULL && v->words != NULL; v++) {
            const struct cmd_option *e = c->options;
            char opt[64];

            while ((e->name != NULL || e->help != NULL) && (e->name == NULL || e->id != v->id))
                e++;
            assert_non_null(e->name);
            snprintf(opt, sizeof(opt), "--%s", e->name);
            for (const char *const *w = v->words; *w != NULL; w++) {
                const char *msg = said(c, words_before(c), opt, *w, after);
                if (refused(msg, *w)) print_message("%s %s %s: %s\n", c->name, opt, *w, msg);
                assert_false(refused(msg, *w));
            }
            assert_true(refused(said(c, words_before(c), opt, "bogus", after), "bogus"));
            lists++;
        }
        for (const char *const *w = c->words; w != NULL && *w != NULL; w++) {
            const char *msg = said(c, NULL, NULL, *w,
                                   c == &cmd_run     ? ep
                                   : c == &cmd_serve ? listen
                                                     : NULL);
            if (msg[0] != '\0') print_message("%s %s: %s\n", c->name, *w, msg);
            assert_string_equal(msg, "");
        }
        if (c->words != NULL)
            assert_true(refused(said(c, NULL, NULL, "bogus",
                                     c == &cmd_run     ? ep
                                     : c == &cmd_serve ? listen
                                                       : NULL),
                                "bogus"));
    }
    assert_true(lists >= 15); /* run's, lab's, serve's and stack's */
}

static void test_cmd_option(void **state)
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
    assert_int_equal(cmd_option(cmd_top_options, "--version"), 'V');
    assert_int_equal(cmd_option(cmd_top_options, "-V"), '?'); /* not a short letter of it */
    assert_int_equal(cmd_option(cmd_top_options, "--quick"), '?');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commands),   cmocka_unit_test(test_dump),
        cmocka_unit_test(test_top),        cmocka_unit_test(test_checker_fails),
        cmocka_unit_test(test_cmd_option), cmocka_unit_test(test_values),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
